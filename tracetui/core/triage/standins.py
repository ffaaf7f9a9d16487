"""What stands for a header field a trace did not record: the workarounds of step 1's caveats
(docs/triage.md, "Blockers and caveats").

- no prompt version: the **rendered system prompt's hash** (``prompt_hash`` on an llm span, written
  by tracetui's recorder, or computed here from the span's first system message);
- no recorded clock: the **root span's start time**, marked inferred;
- no tool-schema hash: the **tools the model was offered**, when an llm span recorded them.

``run_prompt`` gives a run's prompt identity (recorded versions, else the stand-in) so that step 3
can count a changed system prompt as a config change on traces that record no prompt version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from tracetui.core.canonical import canonical_json
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.readers.timefmt import ns_to_iso

__all__ = ["inferred_clock", "offered_tools", "run_prompt", "system_prompt_hash"]

_TOOL_KEYS = ("tools", "tool_definitions", "functions")
_TOOL_ATTRS = ("gen_ai.tool.definitions", "llm.tools", "llm.request.functions")


def system_prompt_hash(span: Span) -> str | None:
    """The hash of ``span``'s rendered system prompt: its ``prompt_hash`` when recorded, else
    ``sha256:`` + the first 16 hex digits of SHA-256 of the canonical JSON of the content of its
    first ``system``/``developer`` message; None when it has neither."""
    d = span.data if isinstance(span.data, Mapping) else {}
    ph = d.get("prompt_hash")
    if isinstance(ph, str) and ph:
        return ph
    msgs = d.get("messages")
    if type(msgs) is not list:
        return None
    for m in msgs:
        if isinstance(m, Mapping) and m.get("role") in ("system", "developer"):
            try:
                blob = canonical_json(m.get("content"))
            except (TypeError, ValueError):
                blob = repr(m.get("content")).encode()
            return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]
    return None


def run_prompt(trace: Trace) -> tuple[str, Any]:
    """A run's prompt identity: ``("prompt_versions", {...})`` when the header records versions,
    else ``("system_prompt_hash", [hashes])``: the header's ``prompt_hash`` alone when present (the recorder's
    hash over every system prompt the run used), else the hashes of the llm spans' distinct system prompts in
    order; else ``("", None)``."""
    h = trace.header if isinstance(trace.header, Mapping) else {}
    pv = h.get("prompt_versions")
    if isinstance(pv, Mapping) and pv:
        return "prompt_versions", dict(pv)
    seen: list[str] = []
    hp = h.get("prompt_hash")
    if isinstance(hp, str) and hp:
        seen.append(hp)
    else:
        for s in trace.spans:
            if s.kind is SpanKind.LLM:
                x = system_prompt_hash(s)
                if x is not None and x not in seen:
                    seen.append(x)
    return ("system_prompt_hash", seen) if seen else ("", None)


def inferred_clock(trace: Trace) -> str | None:
    """The root span's start time (ISO 8601, UTC) standing for an unrecorded clock, or None
    when no span has a start time."""
    starts = [s.start_ns for s in trace.spans if s.parent_id is None and s.start_ns is not None]
    if not starts:
        starts = [s.start_ns for s in trace.spans if s.start_ns is not None]
    return ns_to_iso(min(starts)) if starts else None


def offered_tools(trace: Trace) -> tuple[Span, int] | None:
    """The first llm span that recorded the tools offered to the model, and how many; None when none did."""
    for s in trace.spans:
        if s.kind is not SpanKind.LLM:
            continue
        d = s.data if isinstance(s.data, Mapping) else {}
        for k in _TOOL_KEYS:
            v = d.get(k)
            if isinstance(v, list) and v:
                return s, len(v)
        a = s.attributes or {}
        for k in _TOOL_ATTRS:
            if a.get(k):
                v = a[k]
                return s, len(v) if isinstance(v, list) else 1
    return None
