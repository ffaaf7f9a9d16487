"""Plain-text rendering of a diff report, compact enough for a CI log.

No colour, no markup: CI logs and pipes get exactly these bytes.
"""

from __future__ import annotations

from typing import Any

import orjson

MAX_VALUE_CHARS = 300
"""Longest value shown per field in text (characters); JSON output is never cut."""


def _value(v: Any) -> str:
    if v is None:
        text = "(absent)"
    else:
        try:
            text = orjson.dumps(v, default=str).decode()
        except TypeError:
            text = repr(v)
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    if len(text) > MAX_VALUE_CHARS:
        text = f"{text[:MAX_VALUE_CHARS]}… ({len(text)} chars; --format json shows it whole)"
    return text


def _side(s: dict[str, Any] | None) -> str:
    return "—" if s is None else f"seq {s['seq']} span {s['span_id']}"


def render_text(report: dict[str, Any]) -> str:
    """The text report: header, first divergence with each differing field, the rest one per line, counts."""
    o, r = report["original"], report["replay"]
    lines = [
        f"original: {o['path']} ({o['format']}, {o['span_count']} spans)",
        f"replay:   {r['path']} ({r['format']}, {r['span_count']} spans)",
    ]
    first = report["first_divergence"]
    if first is None:
        lines.append("no divergence: the runs match on every semantic field")
        return "\n".join(lines) + "\n"
    lines.append("")
    lines.append(f"first divergence: {first['type']} at row {first['row']}, {first['kind']} span: {first['path']}")
    lines.append(f"  original: {_side(first['original'])}    replay: {_side(first['replay'])}")
    for f in first["fields"]:
        lines.append(f"  {f['path']}")
        lines.append(f"    original: {_value(f['original'])}")
        lines.append(f"    replay:   {_value(f['replay'])}")
    rest = report["divergences"][1:]
    if rest:
        lines.append("")
        lines.append("then:")
        for d in rest:
            fields = ", ".join(f["path"] for f in d["fields"][:4])
            more = f" (+{len(d['fields']) - 4})" if len(d["fields"]) > 4 else ""
            lines.append(f"  row {d['row']:>4}  {d['type']:<18} {d['path']}" + (f"  [{fields}{more}]" if fields else ""))
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report["counts"].items()))
    lines.append("")
    lines.append(f"{len(report['divergences'])} divergence{'s' if len(report['divergences']) != 1 else ''}: {counts}")
    return "\n".join(lines) + "\n"
