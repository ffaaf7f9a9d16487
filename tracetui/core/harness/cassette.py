"""The cassette: a recorded run indexed for replay.

Tool and retrieval calls are keyed by **tool name + canonical argument hash** (``args_hash``,
docs/format.md "Canonical arguments"). A key recorded several times keeps its recordings in
call order (seq), and each replayed call takes the next one: a read repeated after a write gets
the second recording, as the live system answered it (practice.md, "Key normalisation without
lying"). One call more than recorded is ``RecordingExhausted``; a key never recorded is
``UnrecordedCall`` with the nearest recorded calls and what differs (vcrpy's
``CannotOverwriteExistingCassetteException`` lists the closest requests and the matchers that
failed: ``vcr/cassette.py`` ``find_requests_with_most_matches``).

LLM calls are matched by model + rendered messages (provider-minted tool-call ids dropped), in
call order among equal keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import Levenshtein

from tracetui.core.canonical import args_hash, canonical_json
from tracetui.core.changes import ABSENT, FieldChange
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.values import BYTES, IDS, diff_field
from tracetui.core.values import strip_ids as _strip_ids

RETRIEVAL_PREFIX = "retrieval:"


def retrieval_tool(index: str) -> str:
    """The cassette key name of a retrieval from ``index``: ``retrieval:INDEX``."""
    return RETRIEVAL_PREFIX + index


def retrieval_arguments(query: Any, kw: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a retrieval is keyed by: ``{"query": query, **kw}`` (top_k, filters, ...)."""
    args = {"query": query}
    args.update(kw)
    return args


def recorded_call(span: Span) -> tuple[str, Any] | None:
    """The cassette key name and arguments of a recorded tool or retrieval span, else None.

    A tool span: ``(tool_name, arguments)``. A retrieval span: ``("retrieval:INDEX",
    {"query", "top_k", "filters", **params})``, as ``RunContext.retrieve`` keyed it.
    """
    if span.kind is SpanKind.TOOL:
        return str(span.data.get("tool_name") or span.name), span.data.get("arguments")
    if span.kind is SpanKind.RETRIEVAL:
        d = span.data
        kw = dict(d.get("params") or {})
        for name in ("top_k", "filters"):
            if name in d:
                kw[name] = d[name]
        return retrieval_tool(str(d.get("index"))), retrieval_arguments(d.get("query"), kw)
    return None


def llm_key(model: Any, messages: Any) -> str:
    """16 hex digits of SHA-256 over the model and the canonical messages without provider ids."""
    return hashlib.sha256(canonical_json({"model": model, "messages": _strip_ids(messages)})).hexdigest()[:16]


@dataclass(slots=True)
class Recording:
    """One recorded call.

    Attributes:
        tool: Tool name, or ``retrieval:INDEX``.
        arguments: The recorded arguments (as written, redacted).
        key: ``args_hash`` of the arguments.
        span: The recorded span.
        served: Whether a replayed call has taken it.
    """

    tool: str
    arguments: Any
    key: str
    span: Span
    served: bool = False


@dataclass(slots=True)
class Cassette:
    """A recorded run, indexed for replay.

    Build with ``Cassette.from_trace``. Not thread-safe: one replay at a time.

    Attributes:
        trace: The recording.
        calls: Tool and retrieval recordings by ``(tool, args_hash)``, each list in seq order.
        llm_calls: LLM recordings by ``llm_key``, each list in seq order.
        llm_order: Every LLM recording in seq order (to explain an input mismatch by position).
        path: Every tool and retrieval recording in seq order (the recorded call path).
    """

    trace: Trace
    calls: dict[tuple[str, str], list[Recording]] = field(default_factory=dict)
    llm_calls: dict[str, list[Span]] = field(default_factory=dict)
    llm_order: list[Span] = field(default_factory=list)
    path: list[Recording] = field(default_factory=list)
    _next: dict[tuple[str, str], int] = field(default_factory=dict)
    _llm_next: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_trace(cls, trace: Trace) -> Cassette:
        """Index a recorded run's tool, retrieval and LLM spans.

        The args hash is recomputed from the recorded arguments (never trusted from the file), so
        recordings from any reader match alike.
        """
        cassette = cls(trace)
        for span in sorted(trace.spans, key=lambda s: s.seq):
            if span.kind is SpanKind.LLM:
                key = llm_key(span.data.get("model"), span.data.get("messages"))
                cassette.llm_calls.setdefault(key, []).append(span)
                cassette.llm_order.append(span)
                continue
            call = recorded_call(span)
            if call is None:
                continue
            tool, arguments = call
            key = args_hash(arguments)
            rec = Recording(tool, arguments, key, span)
            cassette.calls.setdefault((tool, key), []).append(rec)
            cassette.path.append(rec)
        return cassette

    def reset(self) -> None:
        """Forget what was served, for the next trial (the index, built once, is kept)."""
        self._next.clear()
        self._llm_next.clear()
        for rec in self.path:
            rec.served = False

    def take(self, tool: str, key: str) -> Recording | int:
        """The next unserved recording of ``(tool, key)``, marked served; or, when there is none,
        how many recordings that key has (0: never recorded; n > 0: all n already served)."""
        recs = self.calls.get((tool, key))
        if not recs:
            return 0
        i = self._next.get((tool, key), 0)
        if i >= len(recs):
            return len(recs)
        self._next[(tool, key)] = i + 1
        recs[i].served = True
        return recs[i]

    def take_llm(self, model: Any, messages: Any) -> Span | None:
        """The next recorded LLM call with this model and these messages, or None."""
        key = llm_key(model, messages)
        spans = self.llm_calls.get(key)
        if not spans:
            return None
        i = self._llm_next.get(key, 0)
        if i >= len(spans):
            return None
        self._llm_next[key] = i + 1
        return spans[i]

    def llm_at(self, position: int) -> Span | None:
        """The ``position``-th recorded LLM call (0-based, seq order), or None."""
        return self.llm_order[position] if 0 <= position < len(self.llm_order) else None

    def nearest(self, tool: str, arguments: Any, limit: int = 3) -> list[dict[str, Any]]:
        """The recorded calls closest to ``tool(arguments)``, best first.

        Ranking: same tool name before any other; then fewest differing argument fields; other
        tool names by edit distance. Each entry: ``{"tool", "arguments", "recorded", "served",
        "differs"}`` where ``differs`` lists ``"tool name"`` and/or argument paths
        (``arguments.date``) with both values.
        """
        scored: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
        candidates = [(t, recs) for (t, _k), recs in self.calls.items() if t == tool or not _is_write(recs[0])]
        for rtool, recs in candidates or [(t, recs) for (t, _k), recs in self.calls.items()]:
            rec = recs[0]
            differs: list[str] = []
            changes: list[FieldChange] = []
            if rtool != tool:
                differs.append(f"tool name: {tool} (recorded {rtool})")
                name_cost = 1 + Levenshtein.distance(tool, rtool)
            else:
                name_cost = 0
            diff_field("arguments", rec.arguments, arguments, BYTES, changes)
            differs.extend(_describe(c) for c in changes)
            scored.append(((name_cost, len(changes), len(scored)), {
                "tool": rtool, "arguments": rec.arguments, "recorded": len(recs),
                "served": sum(r.served for r in recs), "differs": differs}))
        scored.sort(key=lambda t: t[0])
        return [entry for _score, entry in scored[:limit]]

    def unconsumed(self, is_read: Any = None) -> list[dict[str, Any]]:
        """Recorded reads no replayed call took, in seq order: ``[{"tool", "arguments", "span_id",
        "seq"}]``. A read is a retrieval, or a tool for which ``is_read(name)`` holds (default: the
        recorded ``effect`` is not ``write``)."""
        def read(rec: Recording) -> bool:
            if rec.span.kind is SpanKind.RETRIEVAL:
                return True
            return is_read(rec.tool) if is_read is not None else not _is_write(rec)

        out = [rec for recs in self.calls.values() for rec in recs if not rec.served and read(rec)]
        out.sort(key=lambda r: r.span.seq)
        return [{"tool": r.tool, "arguments": r.arguments, "span_id": r.span.span_id, "seq": r.span.seq} for r in out]

    def llm_differences(self, position: int, model: Any, messages: Any, params: Mapping[str, Any],
                        extra: Mapping[str, Any]) -> tuple[Span | None, list[str]]:
        """The recorded LLM call at ``position`` and the fields where the replayed call differs
        from it (``model``, ``messages[0].content``, ``params.temperature``, ``prompt_version``)."""
        rec = self.llm_at(position)
        if rec is None:
            return None, ["no recorded LLM call at this position (the recording has "
                          f"{len(self.llm_order)})"]
        d = rec.data
        changes: list[FieldChange] = []
        diff_field("model", d.get("model", ABSENT), model, BYTES, changes)
        diff_field("messages", d.get("messages", ABSENT), messages, IDS, changes)
        diff_field("params", d.get("params", ABSENT) if "params" in d else {}, dict(params), BYTES, changes)
        for name, value in extra.items():
            if value is not None or name in d:
                diff_field(name, d.get(name, ABSENT), value, BYTES, changes)
        return rec, [_describe(c) for c in changes]


def _is_write(rec: Recording) -> bool:
    return rec.span.data.get("effect") == "write"


def _describe(change: FieldChange) -> str:
    return f"{change.path}: {_short(change.replay)} (recorded {_short(change.original)})"


def _short(value: Any, limit: int = 60) -> str:
    if value is ABSENT:
        return "absent"
    try:
        text = canonical_json(value).decode()
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_calls(entries: Iterable[Mapping[str, Any]]) -> str:
    """One line per nearest call: ``list_open_slots {"date":"2026-11-05"} — differs in arguments.date: ...``."""
    lines = []
    for e in entries:
        what = "; ".join(e["differs"]) or (f"the same tool and arguments (recorded {e['recorded']} time"
                                           f"{'s' if e['recorded'] != 1 else ''}, {e['served']} served)")
        lines.append(f"  {e['tool']} {_short(e['arguments'], 80)}: {what}")
    return "\n".join(lines)
