"""Tool-call arguments that hold the same key twice with different values (issue 20, item 5).

A JSON parser keeps the last value of a repeated key without a word, so a recorded call whose
arguments say ``"amount": 120, "amount": 121`` could be served for either meaning. The tracetui/1
reader reports such a call with both values (file, line, JSON path) and marks its span with the
attribute ``DUPLICATE_KEYS`` (the messages); a strict replay refuses to serve a marked tool call
(``unservable_recording``, ``core.harness.cassette.unservable``). Checked: a tool span's
``arguments`` (an object in the line, or a JSON string) and the argument strings of an LLM span's
``output.tool_calls``.
"""

from __future__ import annotations

from typing import Any

from tracetui.core.model import ReadIssue, Span, SpanKind
from tracetui.core.readers.jsondoc import duplicate_keys

__all__ = ["DUPLICATE_KEYS", "flag_line", "note_argument_strings"]

DUPLICATE_KEYS = "tracetui.duplicate_keys"
"""Span attribute: why the span's arguments are ambiguous (``; ``-joined messages with JSON paths)."""

_ARGS = "$.tool.arguments"


def flag_line(obj: dict[str, Any], text: str) -> None:
    """Mark the span line ``obj`` (parsed from ``text``, whose careful parse reported a duplicate
    key) when a key of its tool arguments is repeated with different values. The report itself
    was made by the parse (``jsondoc``)."""
    notes = [f"{where}: {msg}" for where, msg, ambiguous in duplicate_keys(text)
             if ambiguous and (where == _ARGS or where.startswith((_ARGS + ".", _ARGS + "[")))]
    if not notes:
        return
    attrs = obj.get("attributes")
    obj["attributes"] = {**(attrs if type(attrs) is dict else {}), DUPLICATE_KEYS: "; ".join(notes)}


def note_argument_strings(span: Span, path: str, issues: list[ReadIssue]) -> bool:
    """Report (and mark the span for) a repeated key inside argument strings: a tool span's
    ``arguments`` given as JSON text, an LLM span's ``output.tool_calls[].arguments``.
    Returns whether anything was reported."""
    data = span.data
    found: list[tuple[str, str, bool]] = []
    if span.kind is SpanKind.TOOL:
        args = data.get("arguments")
        if type(args) is str:
            found = [(f"tool.arguments{w[1:]}", m, a) for w, m, a in duplicate_keys(args)]
    elif span.kind is SpanKind.LLM:
        out = data.get("output")
        calls = out.get("tool_calls") if type(out) is dict else None
        if type(calls) is list:
            for i, call in enumerate(calls):
                args = call.get("arguments") if type(call) is dict else None
                if type(args) is str:
                    found += [(f"llm.output.tool_calls[{i}].arguments{w[1:]}", m, a) for w, m, a in duplicate_keys(args)]
    if not found:
        return False
    for where, message, _ in found:
        issues.append(ReadIssue(path, span.line, where, f"in an argument string: {message}", "warning"))
    notes = [f"{where}: {message}" for where, message, ambiguous in found if ambiguous]
    if notes:
        span.attributes = {**span.attributes, DUPLICATE_KEYS: "; ".join(notes)}
    return True
