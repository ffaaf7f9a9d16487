"""Plain-text rendering of a diff report, compact enough for a CI log.

No colour, no markup: CI logs and pipes get exactly these bytes. Values are
shown as JSON; a long value is cut around its first difference from the other
side, and ``--format json`` has it whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from tracetui.core.readers.base import MAX_ISSUES

MAX_VALUE_CHARS = 160
"""Longest value shown per field in text, in characters; JSON output is never cut."""

CONTEXT_CHARS = 40
"""Characters kept before the first difference when a long value is cut."""

ONE_SIDED = frozenset({"unrecorded_call", "missing_call", "extra_span", "missing_span"})

PATH_KEEP = 6
"""Span names a text span path keeps at its end (after the root), as the TUI breadcrumb keeps the nearest
ancestors; the ones between are counted ("… 1,492 more …"). JSON output has the whole path."""

_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def short_path(path: str, sep: str = " > ") -> str:
    """A span path (names joined by ``sep``, root first) with its middle elided when it holds more than
    ``PATH_KEEP + 2`` names: ``root > … 1,492 more > a > … > span``; shorter paths unchanged."""
    names = path.split(sep)
    if len(names) <= PATH_KEEP + 2:
        return path
    return sep.join([names[0], f"… {len(names) - 1 - PATH_KEEP:,} more", *names[-PATH_KEEP:]])


def _u_escape(m: re.Match[str]) -> str:
    c = m.group()
    if c.isprintable():
        return c
    n = ord(c)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def json_safe(text: str) -> str:
    """JSON text with every non-printable character outside ASCII (C1 controls, bidi overrides and
    isolates, line separators) written as its ``\\u`` escape: the same JSON value, safe to ``cat``
    (orjson already escapes the C0 controls)."""
    return text if text.isascii() else _NON_ASCII.sub(_u_escape, text)


def dumps_json(value: Any, option: int = orjson.OPT_INDENT_2) -> str:
    """``value`` as indented JSON text, terminal-safe (``json_safe``), with a final newline.

    What orjson cannot write and the readers keep (each with an issue naming file and JSON path): an
    integer beyond 64 bits is written exact by the standard library, a lone surrogate as its ``\\udXXX``
    escape, a value nested deeper than 255 levels as it is."""
    try:
        text = orjson.dumps(value, option=option, default=str).decode()
    except TypeError:
        try:
            text = json.dumps(value, indent=2 if option & orjson.OPT_INDENT_2 else None, ensure_ascii=False,
                              sort_keys=bool(option & orjson.OPT_SORT_KEYS), default=str)
        except RecursionError:  # deeper than this interpreter's stack (the readers refuse such lines first)
            from tracetui.core.errors import TracetuiError

            raise TracetuiError("the report holds a value nested too deeply to write as JSON; use the text "
                                "format") from None
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return json_safe(text) + "\n"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def safe(text: str) -> str:
    """``text`` with control, format and bidi characters escaped (``\\x1b``, ``\\u202e``).

    Trace text (names, paths, values) must never drive the terminal or CI log
    that shows the report: no escape sequences, no bell, no line breaks, no
    right-to-left overrides.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _json(v: Any) -> str:
    try:
        # orjson already writes control characters as \u escapes; safe() catches the rest (bidi, ...).
        text = orjson.dumps(v, default=str).decode()
    except TypeError:
        text = repr(v)
    return safe(text)


def _window(text: str, start: int) -> str:
    """``text`` cut to ``MAX_VALUE_CHARS`` around ``start``, with the cuts marked."""
    if len(text) <= MAX_VALUE_CHARS:
        return text
    lo = max(0, min(start - CONTEXT_CHARS, len(text) - MAX_VALUE_CHARS))
    hi = lo + MAX_VALUE_CHARS
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "") + f" ({len(text)} chars)"


ABSENT_TEXT = "(absent)"


def pair_values(field: dict[str, Any]) -> tuple[str, str]:
    """Both values of a report field as JSON text, each cut to show where they start to differ.

    A side the field is ``absent`` from shows ``(absent)``; a recorded null shows ``null``.
    """
    absent = field.get("absent")
    ta = ABSENT_TEXT if absent == "original" else _json(field["original"])
    tb = ABSENT_TEXT if absent == "replay" else _json(field["replay"])
    first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
    return _window(ta, first), _window(tb, first)


def _spans(n: int) -> str:
    return f"{n} span" if n == 1 else f"{n} spans"


def _side(s: dict[str, Any] | None) -> str:
    return "—" if s is None else f"seq {s['seq']} span {safe(s['span_id'])}"


def _summary(d: dict[str, Any]) -> str:
    if d["type"] in ONE_SIDED:
        args = next((f for f in d["fields"] if f["path"] in ("tool.arguments", "retrieval.query")), None)
        if args is None:
            return ""
        value = args["replay"] if args.get("absent") == "original" else args["original"]
        return "  " + _window(_json(value), 0)
    fields = ", ".join(safe(f["path"]) for f in d["fields"][:4])
    more = f" (+{len(d['fields']) - 4})" if len(d["fields"]) > 4 else ""
    return f"  [{fields}{more}]" if fields else ""


def _where(side: dict[str, Any]) -> str:
    """A side's file, with ``#RUN`` when the file holds several runs."""
    text = safe(side["path"])
    if side.get("run_count", 1) > 1 and side.get("trace_id") is not None:
        text += "#" + safe(str(side["trace_id"]))
    return text


def label_text(label: dict[str, Any] | None) -> str:
    """A reviewer label as `` [label: "note"]`` (`` [label]`` without a note), or ``""``."""
    if not label:
        return ""
    note = label.get("note") or ""
    return f" [{safe(label['label'])}: {_window(_json(note), 0)}]" if note else f" [{safe(label['label'])}]"


def render_text(report: dict[str, Any]) -> str:
    """The text report: both files, what changed in the run's inputs, the first divergence field by field, the rest one per line, counts."""
    o, r = report["original"], report["replay"]
    lines = [
        f"original: {_where(o)} ({o['format']}, {_spans(o['span_count'])})",
        f"replay:   {_where(r)} ({r['format']}, {_spans(r['span_count'])})",
    ]
    ignored = (report.get("ignored_by_config") or {}).get("fields") or 0
    if ignored:
        lines.append(f"{ignored} field{'s' if ignored != 1 else ''} ignored by config")
    lines.extend(_not_comparable_lines(report))
    if report.get("not_a_replay"):
        lines.append(f"warning: not a replay of the original run: {safe(report['not_a_replay'])}; "
                     "the divergences below compare two different runs")
    changes = report.get("run_changes") or []
    if changes:
        shown = "; ".join(
            f"{safe(c['path'])} {_window(_json(c['original']), 0)} -> {_window(_json(c['replay']), 0)}" for c in changes if c["path"] != "input"
        )
        if any(c["path"] == "input" for c in changes):
            shown = (shown + "; " if shown else "") + "input differs"
        lines.append(f"run inputs changed: {shown}")
    first = report["first_divergence"]
    if first is None:
        lines.append("no divergence: the runs match on every semantic field")
        lines.extend(_unmatched_lines(report))
        return "\n".join(lines) + "\n"
    lines.append("")
    lines.append(f"first divergence: {first['type']} at row {first['row']}, {first['kind']} span: {safe(short_path(first['path']))}{label_text(first.get('label'))}")
    lines.append(f"  original: {_side(first['original'])}    replay: {_side(first['replay'])}")
    for f in first["fields"]:
        va, vb = pair_values(f)
        lines.append(f"  {safe(f['path'])}")
        lines.append(f"    original: {va}")
        lines.append(f"    replay:   {vb}")
    rest = report["divergences"][1:]
    if rest:
        lines.append("")
        lines.append("then:")
        for d in rest:
            lines.append(f"  row {d['row']:>4}  {d['type']:<18} {safe(short_path(d['path']))}{_summary(d)}{label_text(d.get('label'))}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report["counts"].items()))
    n = len(report["divergences"])
    lines.append("")
    lines.append(f"{n} divergence{'s' if n != 1 else ''}: {counts}")
    if report.get("labels_file"):
        labelled = sum(1 for d in report["divergences"] if d.get("label"))
        lines.append(f"{labelled} of {n} divergence{'s' if n != 1 else ''} labelled ({safe(report['labels_file'])})")
    lines.extend(_unmatched_lines(report))
    return "\n".join(lines) + "\n"


def _not_comparable_lines(report: dict[str, Any]) -> list[str]:
    """What the two formats record differently and the diff did not compare (none: no line)."""
    lines = []
    key = report.get("redacted_with_key")
    if key:
        lines.append(f"the unredacted side was redacted with key {safe(key)} before comparing, as the other side was")
    nc = report.get("not_comparable") or {}
    n = nc.get("fields") or 0
    if n:
        lines.append(f"{n} field{'s' if n != 1 else ''} not comparable (the two formats record them differently):")
        lines.extend(f"  {safe(i['path'])} ({i['pairs']}): {safe(i['reason'])}" for i in nc.get("items") or [])
    return lines


def _unmatched_lines(report: dict[str, Any]) -> list[str]:
    """The reviewer labels that match no divergence of this pair, on one line (none: no line)."""
    unmatched = report.get("unmatched_labels") or []
    if not unmatched:
        return []
    n = len(unmatched)
    keys = ", ".join(safe(u["key"]) for u in unmatched[:5]) + (f", +{n - 5} more" if n > 5 else "")
    line = (f"{n} label{'s' if n != 1 else ''} in {safe(report.get('labels_file') or '')} match{'es' if n == 1 else ''} "
            f"no divergence (made on another recording of this replay?): {keys}")
    return [line]


SHOW_MAX_ITEMS = 12
"""Tools/models listed by name in ``show``'s text before "+N more"."""

SHOW_MAX_WARNINGS = 40
"""Warnings printed by ``show``'s text; ``--format json`` has them all."""


def _counts(d: dict[str, int], limit: int = SHOW_MAX_ITEMS) -> str:
    items = list(d.items())
    text = ", ".join(f"{safe(str(k))} ×{v}" for k, v in items[:limit])
    if len(items) > limit:
        text += f", +{len(items) - limit} more"
    return text


def _kinds_text(kinds: dict[str, int]) -> str:
    return " · ".join(f"{k} {v:,}" for k, v in kinds.items()) or "no spans"


def _outcome_text(outcome: Any) -> str:
    if outcome is None:
        return ""
    if isinstance(outcome, dict):
        parts = []
        for k, v in outcome.items():
            if isinstance(v, (dict, list)):
                continue  # nested detail: --format json has it
            parts.append(f"{k}={v}")
        return safe(" ".join(parts))[:MAX_VALUE_CHARS]
    return _json(outcome)[:MAX_VALUE_CHARS]


def _replay_text(info: dict[str, Any]) -> str:
    text = f"replay {info['mode']}, LLM {info.get('llm')}"
    if info.get("replay_of"):
        text += f", of {safe(str(info['replay_of']))}"
    if info.get("trials"):
        text += f", trial {info['trial']}/{info['trials']}"
    if "diverged" in info:
        text += ": " + ("diverged (" + ", ".join(info["divergences"]) + ")" if info["diverged"] else "no divergence")
        text += f"; misses {info['misses']}, writes intercepted {info['writes']}, live calls (tools/network): {info['live_calls']}"
        if info.get("unconsumed"):
            text += f", unconsumed recordings {info['unconsumed']}"
    return text


def render_show(summary: dict[str, Any], *, verbose: bool = False) -> str:
    """Text for ``tracetui show``: the file, its runs one per line, totals, then warnings (the ``info``
    notes on how values were read only when ``verbose``; ``--format json`` lists them all)."""
    lines = [f"{safe(summary['path'])}: {summary['format']}"]
    n = summary["run_count"]
    lines.append(f"{n:,} run{'s' if n != 1 else ''} · {summary['span_count']:,} span{'s' if summary['span_count'] != 1 else ''} ({_kinds_text(summary['kinds'])})")
    if summary["models"]:
        lines.append(f"models: {_counts(summary['models'])}")
    if summary["tools"]:
        lines.append(f"tools: {_counts(summary['tools'])}")
    runs = summary["runs"]
    if runs:
        lines.append("")
        lines.append("runs (pick one with FILE#RUN):" if n > 1 else "run:")
        width = min(40, max(len(safe(str(r["run_id"]))) for r in runs))
        for r in runs:
            rid = safe(str(r["run_id"])) if r["run_id"] is not None else "(unnamed)"
            text = f"  {rid:<{width}}  {r['span_count']:>6,} span{'s' if r['span_count'] != 1 else ' '}  {_kinds_text(r['kinds'])}"
            if r["errors"]:
                text += f"  · {r['errors']} error{'s' if r['errors'] != 1 else ''}"
            if r["duration_ms"] is not None:
                text += f"  · {r['duration_ms'] / 1000:.1f} s"
            outcome = _outcome_text(r["outcome"])
            if outcome:
                text += f"  · {outcome}"
            lines.append(text)
            if r.get("replay"):
                lines.append("    " + _replay_text(r["replay"]))
    warnings = [w for w in summary["warnings"] if verbose or w["severity"] != "info"]
    if warnings:
        lines.append("")
        lines.append(f"warnings ({len(warnings)}):")
        for w in warnings[:SHOW_MAX_WARNINGS]:
            loc = safe(w["path"]) + (f":{w['line']}" if "line" in w else "") + (f" ({safe(w['where'])})" if "where" in w else "")
            lines.append(f"  {w['severity']}: {loc}: {safe(w['message'])}")
        if len(warnings) > SHOW_MAX_WARNINGS:
            lines.append(f"  ... {len(warnings) - SHOW_MAX_WARNINGS} more (--format json lists the first {MAX_ISSUES:,})")
    return "\n".join(lines) + "\n"
