"""Turning trace values into safe, literal display text (no markup, no live control codes).

Trace text is data, never markup and never terminal commands: every string the
TUI draws goes through ``visible()`` first, which swaps control characters,
C1 codes, bidi overrides and lone surrogates for visible stand-ins, so an
``\\x1b[31m`` in a tool output shows as ``␛[31m`` and cannot recolour the
screen, and ``[bold]`` stays the six characters it is (the caller builds
``Segment``/``Text`` objects, never markup strings).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import orjson
from rich.cells import cell_len, set_cell_size

from tracetui.core.canonical import parse_json_string
from tracetui.core.diff.compare import ABSENT
from tracetui.core.model import PLACEHOLDER, Span, SpanKind

NOT_WRITTEN = " (not written yet)"

ELLIPSIS = "…"

ABSENT_TEXT = "—"
"""How a field one side does not have (``tracetui.core.diff.compare.ABSENT``) is drawn; a recorded null is ``null``."""


def _control_table(newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {}
    for c in range(0x20):
        table[c] = chr(0x2400 + c)  # Unicode "Control Pictures": \x1b -> ␛, \x00 -> ␀
    table[0x7F] = "␡"
    for c in range(0x80, 0xA0):  # C1 controls: \x9b is a one-byte CSI on some terminals
        table[c] = f"\\x{c:02x}"
    for c in (*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0xFEFF):
        table[c] = f"\\u{c:04x}"  # zero-width and bidi controls silently reorder or hide text
    for c in range(0xD800, 0xE000):  # lone surrogates cannot be encoded for the terminal
        table[c] = f"\\u{c:04x}"
    if newlines:
        table[0x0A] = "\n"
        table[0x09] = "    "
    else:
        table[0x0A] = "↵"
    return table


_ONE_LINE = _control_table(newlines=False)
_MULTI_LINE = _control_table(newlines=True)


def visible(text: str, *, newlines: bool = False) -> str:
    """Make every control character in ``text`` visible and inert.

    Args:
        text: Any string from a trace.
        newlines: Keep ``\\n`` as a line break (and tabs as 4 spaces) for
            multi-line views; otherwise ``\\n`` becomes ``↵`` and tab ``␉``.

    Returns:
        A string safe to draw: C0 controls become Control Pictures (``␛``),
        DEL ``␡``, C1 controls ``\\x9b``-style escapes, zero-width/bidi
        controls and lone surrogates ``\\u202e``-style escapes.
    """
    return text.translate(_MULTI_LINE if newlines else _ONE_LINE)


def _default(obj: Any) -> Any:
    if obj is ABSENT:
        return "(absent)"
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def to_json(value: Any, *, pretty: bool = False) -> str:
    """JSON text of a value (orjson; non-JSON objects via ``str``), not yet made visible.

    ``ABSENT`` (a field one side does not have) is not JSON: alone it gives
    ``ABSENT_TEXT``, nested in a container the string ``"(absent)"``. Never raises.
    """
    if value is ABSENT:
        return ABSENT_TEXT
    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if pretty else 0)
    try:
        return orjson.dumps(value, option=option, default=_default).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis when longer."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS


def one_line(value: Any, limit: int = 240) -> str:
    """A value as one line of compact JSON, made visible and clipped to ``limit`` characters.

    Strings keep their JSON quotes so ``"1"`` and ``1`` stay distinguishable;
    ``None`` (a recorded null) shows as ``null``, ``ABSENT`` (no such field) as ``—``.
    """
    if isinstance(value, str) and len(value) > limit * 4:
        value = value[: limit * 4]  # don't encode megabytes to show a line
    return visible(clip(to_json(value), limit))


def full_text(value: Any, limit: int = 50_000) -> tuple[str, int]:
    """A value for the full pair view: pretty JSON, or a plain string with its line breaks.

    A string holding a JSON object or array is parsed and pretty-printed (the
    canonical-arguments rule, ``tracetui.core.canonical``); a multi-line string
    is shown raw, with its line breaks, control characters made visible; any
    other value is JSON (so ``"404"`` and ``404``, ``"null"`` and ``null`` differ).

    Args:
        value: Any JSON value.
        limit: Display cap in characters, so a 2 MB payload cannot stall the UI.

    Returns:
        ``(text, total)``: the display text (at most ``limit`` characters) and the
        full length in characters, so the caller can say what was left out.
    """
    if value is ABSENT:
        return ABSENT_TEXT, len(ABSENT_TEXT)
    parsed = parse_json_string(value)
    if isinstance(parsed, str) and "\n" in parsed:
        text = parsed  # prose (prompts, answers): its own line breaks read better than \n escapes
    else:
        text = to_json(parsed, pretty=True)
    total = len(text)
    return visible(text[:limit], newlines=True), total


def fit(text: str, width: int) -> str:
    """``text`` padded or cut (with ``…``) to exactly ``width`` terminal cells."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + ELLIPSIS


KIND_BADGES: Mapping[SpanKind, str] = {
    SpanKind.LLM: "llm",
    SpanKind.TOOL: "tool",
    SpanKind.RETRIEVAL: "retr",
    SpanKind.DECISION: "dec",
    SpanKind.MEMORY: "mem",
    SpanKind.AGENT: "agent",
    SpanKind.OTHER: "other",
}
"""Short kind names for the aligned view, at most ``BADGE_WIDTH`` cells."""

BADGE_WIDTH = 5


def args_preview(arguments: Any, limit: int = 160) -> str:
    """Tool arguments as ``key=value, ...`` (values compact JSON), or compact JSON when not an object."""
    arguments = parse_json_string(arguments)
    if isinstance(arguments, dict):
        parts: list[str] = []
        size = 0
        for key, val in arguments.items():
            part = f"{key}={to_json(val) if not isinstance(val, str) or len(val) < limit else to_json(val[:limit])}"
            parts.append(part)
            size += len(part) + 2
            if size > limit:
                break
        return clip(", ".join(parts), limit)
    if arguments is None:
        return ""
    return clip(to_json(arguments), limit)


def llm_output_preview(output: Any, limit: int = 120) -> str:
    """What an LLM answered, in a few words: its tool calls as ``name(args)``, else its text."""
    if isinstance(output, dict):
        calls = output.get("tool_calls")
        if isinstance(calls, list) and calls:
            names = [
                f"{c.get('name')}({args_preview(c.get('arguments'), 60)})" if isinstance(c, dict) else to_json(c)
                for c in calls
            ]
            return clip(", ".join(names), limit)
        content = output.get("content")
        if isinstance(content, str):
            return clip(to_json(content), limit)
    if isinstance(output, str):
        return clip(to_json(output), limit)
    return clip(to_json(output), limit)


def span_label(span: Span) -> str:
    """Short one-line label of a span for the aligned view, made visible.

    Tools show ``tool_name(args preview)``; decisions ``decision → value``;
    LLM calls ``name → answer`` (tool calls or text); retrievals ``name(query)``;
    other kinds their name. Error spans start with ``✗ error_type``.
    """
    data = span.data
    if span.kind is SpanKind.TOOL:
        label = f"{span.tool_name}({args_preview(data.get('arguments'))})"
    elif span.kind is SpanKind.DECISION and data.get("decision") is not None:
        value = data.get("value")
        label = str(data.get("decision"))
        if value is not None:
            label += f" → {clip(value if isinstance(value, str) else to_json(value), 80)}"
    elif span.kind is SpanKind.LLM and data.get("output") is not None:
        label = f"{span.name} → {llm_output_preview(data.get('output'))}"
    elif span.kind is SpanKind.RETRIEVAL and data.get("query") is not None:
        query = data.get("query")
        label = f"{span.name}({clip(query if isinstance(query, str) else to_json(query), 80)})"
    else:
        label = span.name
        if span.attributes.get(PLACEHOLDER) and not label.endswith(NOT_WRITTEN.strip()):
            label += NOT_WRITTEN  # watch mode: a parent not written yet, named as the original's span it stands for
    if span.status.value == "error":
        label = f"✗ {span.error_type or 'error'} {label}"
    return visible(clip(label, 400))


def format_duration(ns: int | None) -> str:
    """Nanoseconds as a short human duration (``850 µs``, ``12.3 ms``, ``4.10 s``), or ``—``."""
    if ns is None:
        return "—"
    if ns < 1_000_000:
        return f"{ns / 1000:.0f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1_000_000:.1f} ms"
    return f"{ns / 1_000_000_000:.2f} s"


_PATH_BREAK = re.compile(r"(?=[.\[/])")


def path_lines(path: str, width: int, max_lines: int) -> list[str]:
    """A field path (``llm.messages[0].content``) on at most ``max_lines`` lines of ``width`` cells, broken
    only before a path separator (``.``, ``[``, ``/``), never inside a name.

    When the parts do not fit, the path is shortened from the left (``…[0].content``): the end names the
    field, and the pair screen (``enter``) shows the whole path. A single name longer than ``width`` is
    shortened from the left too.

    Returns:
        1 to ``max_lines`` lines, each at most ``width`` cells (``width`` >= 2).
    """
    if width <= 1 or max_lines < 1:
        return [path[:max(0, width)]]
    if cell_len(path) <= width:
        return [path]
    parts = [p for p in _PATH_BREAK.split(path) if p]

    def pack(items: list[str], first: str = "") -> list[str] | None:
        lines = [first]
        for part in items:
            if cell_len(part) > width:
                return None
            if cell_len(lines[-1] + part) <= width:
                lines[-1] += part
            elif first and lines[-1] == first:  # "…" alone on a line says nothing
                return None
            else:
                lines.append(part)
        return lines if len(lines) <= max_lines else None

    packed = pack(parts)
    if packed is not None:
        return packed
    for start in range(1, len(parts)):  # drop names from the left until the rest fits after "…"
        packed = pack(parts[start:], ELLIPSIS)
        if packed is not None:
            return packed
    last = parts[-1]
    return [ELLIPSIS + last[-(width - 1):]]
