"""Evidence step 1 reads beside a span's own fields (docs/triage.md): how a later prompt quoted a
tool result (did the tool cut it, or the recorder?), the raw message attributes a reader kept
when it could not parse them (an exporter cut them), and OTLP's remote-parent flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracetui.core.canonical import parse_json_string
from tracetui.core.model import Span, SpanKind
from tracetui.core.triage.truncation import uncut_prefix

__all__ = ["REMOTE_PARENT_FLAGS", "raw_messages", "raw_output", "remote_parent", "seen_by_model"]


_RAW_MESSAGE_KEYS = ("gen_ai.input.messages", "gen_ai.prompt", "llm.input_messages", "input.value")
"""Source attributes that hold an llm span's input, where a reader may have kept one it could not parse."""


def _first_text(s: Span, keys: tuple[str, ...]) -> str | None:
    """The first of ``keys`` in the span's attributes that holds a non-empty string, else None."""
    a = s.attributes
    if a:
        for k in keys:
            v = a.get(k)
            if isinstance(v, str) and v:
                return v
    return None


def raw_messages(s: Span) -> str | None:
    """An llm span's raw input text as the source kept it (``_RAW_MESSAGE_KEYS``), else None."""
    return _first_text(s, _RAW_MESSAGE_KEYS)


REMOTE_PARENT_FLAGS = 0x300
"""OTLP ``Span.flags``: bit 8 (the parent's remoteness is known) and bit 9 (the parent is remote)."""


def remote_parent(s: Span) -> bool:
    """Whether the source flags the span's parent as remote (OTLP span flags, kept as ``otel.flags``):
    the parent lives in another service's trace, so the span is a root here, not an orphan."""
    f = s.attributes.get("otel.flags") if s.attributes else None
    return type(f) is int and f & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS


_RAW_OUTPUT_KEYS = ("gen_ai.output.messages", "gen_ai.completion", "llm.output_messages", "output.value")


def raw_output(s: Span) -> str | None:
    """An llm span's raw output text as the source kept it (``_RAW_OUTPUT_KEYS``), else None."""
    return _first_text(s, _RAW_OUTPUT_KEYS)


def seen_by_model(spans: list[Span], s: Span, i: int, leaf: Any) -> tuple[str, bool] | None:
    """How the next llm prompt quoted a tool result: (llm span id, same cut) or None when it did not.

    The tool message answering the call (``tool_call_id`` = the span's ``call_id``) in a later
    llm span's messages shows what the model read. When it holds the suspicious string as it
    is, the tool itself cut it (the model saw the same; a replay serves what was seen); when
    it holds a longer string starting the same way, the recorder cut it. Looks at most 200
    spans ahead.
    """
    call_id = s.data.get("call_id")
    if not isinstance(call_id, str) or not call_id or not isinstance(leaf, str):
        return None
    for later in spans[i + 1:i + 201]:
        if later.kind is not SpanKind.LLM:
            continue
        msgs = later.data.get("messages")
        if type(msgs) is not list:
            continue
        for m in reversed(msgs):
            if isinstance(m, Mapping) and m.get("tool_call_id") == call_id:
                quoted = _strings(m.get("content"))
                if leaf in quoted:
                    return later.span_id, True
                prefix = uncut_prefix(leaf)
                if len(prefix) >= 16 and any(len(q) > len(prefix) and q.startswith(prefix) for q in quoted):
                    return later.span_id, False
                return None
    return None


def _strings(value: Any) -> set[str]:
    """Every string in ``value``, and in the JSON a string of it holds."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
            p = parse_json_string(v)
            if p is not v:
                stack.append(p)
        elif isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return out
