"""The run's call path, the words triage describes calls with, and its Evidence (docs/triage.md,
"Step 2"): what the reproduction check compares, and how the verdict names spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracetui.core.canonical import args_hash, canonical_json
from tracetui.core.model import Span, SpanKind, Status, Trace

__all__ = ["Evidence", "asked", "call_key", "call_path", "describe_call", "failed", "root", "short"]


@dataclass(slots=True)
class Evidence:
    """One piece of evidence: a span and why it matters.

    Attributes:
        span_id: The span (None for a run-level fact such as a header field).
        reason: One sentence.
        side: ``original`` or ``replay``: which trace ``span_id`` belongs to.
    """

    span_id: str | None
    reason: str
    side: str = "original"


# ---- the call path -----------------------------------------------------------------------------

def call_key(span: Span) -> tuple[str, str, str] | None:
    """A span's place in the call path: (kind, name, canonical key), or None when not a call."""
    d = span.data
    if span.kind is SpanKind.TOOL:
        return ("tool", str(d.get("tool_name") or span.name), args_hash(d.get("arguments")))
    if span.kind is SpanKind.RETRIEVAL:
        key = {"query": d.get("query"), "top_k": d.get("top_k"), "filters": d.get("filters")}
        return ("retrieval", str(d.get("index") or span.name), args_hash(key))
    if span.kind is SpanKind.DECISION:
        return ("decision", str(d.get("decision") or span.name), args_hash(d.get("value")))
    if span.kind is SpanKind.LLM:
        return ("llm", "", args_hash(asked(d.get("output"))))
    return None


def asked(output: Any) -> Any:
    """What an LLM answer decided: the tool calls it asked for (names and arguments), or ``"text"``
    for a final answer. The wording of a text answer is not compared (a model in the loop rephrases)."""
    calls = output.get("tool_calls") if isinstance(output, dict) else None
    if calls:
        return [[c.get("name"), c.get("arguments")] if isinstance(c, dict) else c for c in calls]
    return "text"


def call_path(trace: Trace, *, until_seq: int | None = None) -> list[tuple[tuple[str, str, str], Span]]:
    """The run's path in seq order (up to ``until_seq`` included): tool and retrieval calls with
    their canonical arguments, decisions with their values, and what each LLM answer asked for."""
    out = []
    for s in sorted(trace.spans, key=lambda s: s.seq):
        if until_seq is not None and s.seq > until_seq:
            break
        c = call_key(s)
        if c is not None:
            out.append((c, s))
    return out


def root(trace: Trace) -> Span | None:
    """The run's first root span (lowest seq), or None."""
    roots = [s for s in trace.spans if s.parent_id is None]
    return min(roots, key=lambda s: s.seq) if roots else None


def failed(span: Span | None) -> bool:
    """Whether ``span`` exists and ended in error."""
    return span is not None and span.status is Status.ERROR


def describe_call(span: Span) -> str:
    """A call in a few words: ``get_order {"id":"A1"}``, ``chat asking for lookup {...}``."""
    d = span.data
    if span.kind is SpanKind.LLM:
        want = asked(d.get("output"))
        if want == "text":
            return f"{span.name} answering in text"
        return f"{span.name} asking for " + ", ".join(f"{c[0]} {short(c[1], 50)}" if isinstance(c, list) else str(c)
                                                     for c in want)
    if span.kind is SpanKind.TOOL:
        return f"{d.get('tool_name') or span.name} {short(d.get('arguments'))}"
    if span.kind is SpanKind.DECISION:
        return f"decision {d.get('decision') or span.name} = {short(d.get('value'))}"
    return f"{span.name} {short(d.get('query'))}"


def short(value: Any, limit: int = 70) -> str:
    """``value`` as canonical JSON, cut to ``limit`` characters with an ellipsis."""
    try:
        text = canonical_json(value).decode()
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
