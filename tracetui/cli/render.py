"""Plain-text rendering of a diff report, compact enough for a CI log.

No colour, no markup: CI logs and pipes get exactly these bytes. Values are
shown as JSON; a long value is cut around its first difference from the other
side, and ``--format json`` has it whole.
"""

from __future__ import annotations

from typing import Any

import orjson

MAX_VALUE_CHARS = 160
"""Longest value shown per field in text, in characters; JSON output is never cut."""

CONTEXT_CHARS = 40
"""Characters kept before the first difference when a long value is cut."""

ONE_SIDED = frozenset({"unrecorded_call", "missing_call", "extra_span", "missing_span"})


def _json(v: Any) -> str:
    if v is None:
        return "(absent)"
    try:
        text = orjson.dumps(v, default=str).decode()
    except TypeError:
        text = repr(v)
    # Escape control characters (ESC, CR...) so a payload cannot drive the terminal reading the log.
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _window(text: str, start: int) -> str:
    """``text`` cut to ``MAX_VALUE_CHARS`` around ``start``, with the cuts marked."""
    if len(text) <= MAX_VALUE_CHARS:
        return text
    lo = max(0, min(start - CONTEXT_CHARS, len(text) - MAX_VALUE_CHARS))
    hi = lo + MAX_VALUE_CHARS
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "") + f" ({len(text)} chars)"


def pair_values(a: Any, b: Any) -> tuple[str, str]:
    """Both values as JSON text, each cut to show where they start to differ."""
    ta, tb = _json(a), _json(b)
    first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
    return _window(ta, first), _window(tb, first)


def _side(s: dict[str, Any] | None) -> str:
    return "—" if s is None else f"seq {s['seq']} span {s['span_id']}"


def _summary(d: dict[str, Any]) -> str:
    if d["type"] in ONE_SIDED:
        args = next((f for f in d["fields"] if f["path"] in ("tool.arguments", "retrieval.query")), None)
        if args is None:
            return ""
        value = args["original"] if args["original"] is not None else args["replay"]
        return "  " + _window(_json(value), 0)
    fields = ", ".join(f["path"] for f in d["fields"][:4])
    more = f" (+{len(d['fields']) - 4})" if len(d["fields"]) > 4 else ""
    return f"  [{fields}{more}]" if fields else ""


def render_text(report: dict[str, Any]) -> str:
    """The text report: both files, what changed in the run's inputs, the first divergence field by field, the rest one per line, counts."""
    o, r = report["original"], report["replay"]
    lines = [
        f"original: {o['path']} ({o['format']}, {o['span_count']} spans)",
        f"replay:   {r['path']} ({r['format']}, {r['span_count']} spans)",
    ]
    changes = report.get("run_changes") or []
    if changes:
        shown = "; ".join(
            f"{c['path']} {_window(_json(c['original']), 0)} -> {_window(_json(c['replay']), 0)}" for c in changes if c["path"] != "input"
        )
        if any(c["path"] == "input" for c in changes):
            shown = (shown + "; " if shown else "") + "input differs"
        lines.append(f"run inputs changed: {shown}")
    first = report["first_divergence"]
    if first is None:
        lines.append("no divergence: the runs match on every semantic field")
        return "\n".join(lines) + "\n"
    lines.append("")
    lines.append(f"first divergence: {first['type']} at row {first['row']}, {first['kind']} span: {first['path']}")
    lines.append(f"  original: {_side(first['original'])}    replay: {_side(first['replay'])}")
    for f in first["fields"]:
        va, vb = pair_values(f["original"], f["replay"])
        lines.append(f"  {f['path']}")
        lines.append(f"    original: {va}")
        lines.append(f"    replay:   {vb}")
    rest = report["divergences"][1:]
    if rest:
        lines.append("")
        lines.append("then:")
        for d in rest:
            lines.append(f"  row {d['row']:>4}  {d['type']:<18} {d['path']}{_summary(d)}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report["counts"].items()))
    n = len(report["divergences"])
    lines.append("")
    lines.append(f"{n} divergence{'s' if n != 1 else ''}: {counts}")
    return "\n".join(lines) + "\n"
