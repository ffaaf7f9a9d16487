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

A recording made by another tool (any format but tracetui/1: an OTel export, a Langfuse trace...)
is **foreign**: its values may be unredacted, so its tool, retrieval and LLM spans are redacted
with the replay's redactor when indexed (the live side is redacted by the same key before
matching), and its LLM calls are matched on the semantic fields it recorded only (a model,
messages, params or prompt id it does not hold is not compared: ``Cassette.llm_unchecked``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import Levenshtein

from tracetui.core.canonical import args_hash, canonical_json, canonicalize
from tracetui.core.changes import ABSENT, FieldChange
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.triage.truncation import scan as truncation_scan
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

    @property
    def unfinished(self) -> bool:
        """The call was started but never finished in the recording: no end time and no output
        (the recorder was stopped while it ran)."""
        return unfinished(self.span)

    def unservable(self) -> str | None:
        """Why the recorded response cannot be served as it is, or None: a truncated output (the
        recorder's ``output_truncated`` flag, or the evidence ``triage`` uses: a cut at an exporter
        cap, a truncation marker, JSON cut mid-value) or ambiguous arguments (the same key twice)."""
        return unservable(self.span)


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
        volatile: Tool name -> argument paths ignored when matching (``mask_volatile``).
        incomplete: Why the recording ends before its run did (a call started and never finished,
            or a tracetui recording without its root span), or None.
        writes: Tool names the recording holds as writes (``effect: write``).
        foreign: The recording is not a tracetui/1 file (another tool's trace): redacted when
            indexed, its LLM calls matched on the fields it recorded (module docstring).
    """

    trace: Trace
    volatile: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    calls: dict[tuple[str, str], list[Recording]] = field(default_factory=dict)
    llm_calls: dict[str, list[Span]] = field(default_factory=dict)
    llm_order: list[Span] = field(default_factory=list)
    path: list[Recording] = field(default_factory=list)
    incomplete: str | None = None
    writes: set[str] = field(default_factory=set)
    foreign: bool = False
    _next: dict[tuple[str, str], int] = field(default_factory=dict)
    _llm_next: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_trace(cls, trace: Trace, volatile: Mapping[str, Iterable[str]] | None = None,
                   redact: Callable[..., Any] | None = None) -> Cassette:
        """Index a recorded run's tool, retrieval and LLM spans.

        The args hash is recomputed from the recorded arguments (never trusted from the file), so
        recordings from any reader match alike; the ``volatile`` argument paths of a tool (tool
        name -> paths such as ``idempotency_key``, ``meta.request_id``, ``items[*].id``) are
        masked first, in the recording as in the replay. ``redact`` (``Redactor.value``: a value
        and ``tool=`` name -> the redacted value) is applied to the data of a foreign recording's
        tool, retrieval and LLM spans (copies; ``trace`` is left as read).
        """
        cassette = cls(trace, {str(k): tuple(v) for k, v in (volatile or {}).items()})
        cassette.foreign = trace.header.get("schema") != "tracetui/1"
        cassette.incomplete = incomplete_reason(trace)
        for span in sorted(trace.spans, key=lambda s: s.seq):
            if cassette.foreign and redact is not None and span.kind in (SpanKind.LLM, SpanKind.TOOL,
                                                                         SpanKind.RETRIEVAL):
                span = _redacted(span, redact)
            if span.kind is SpanKind.LLM:
                key = llm_key(span.data.get("model"), span.data.get("messages"))
                cassette.llm_calls.setdefault(key, []).append(span)
                cassette.llm_order.append(span)
                continue
            call = recorded_call(span)
            if call is None:
                continue
            tool, arguments = call
            key = args_hash(mask_volatile(arguments, cassette.volatile.get(tool, ()))[0])
            if span.data.get("effect") == "write":
                cassette.writes.add(tool)
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
        """The next recorded LLM call with this model and these messages, or None. In a foreign
        recording, a call recorded without its model, or without its messages (content capture
        off), matches on what it holds."""
        keys = [llm_key(model, messages)]
        if self.foreign:
            keys += [llm_key(None, messages), llm_key(model, None), llm_key(None, None)]
        for key in keys:
            spans = self.llm_calls.get(key)
            i = self._llm_next.get(key, 0)
            if spans and i < len(spans):
                self._llm_next[key] = i + 1
                return spans[i]
        return None

    def llm_unchecked(self, rec: Span, model: Any, messages: Any, params: Mapping[str, Any],
                      extra: Mapping[str, Any]) -> list[str]:
        """The request fields of a replayed LLM call that ``rec``, a foreign recording's call,
        does not hold, so frozen matching could not check them: ``model``, ``messages``,
        ``params.NAME`` (a param the replay sends and the recording does not name) and the
        ``extra`` fields (``prompt_id``...) given a value. Empty for a tracetui recording."""
        if not self.foreign:
            return []
        d = rec.data
        out = [name for name, value in (("model", model), ("messages", messages)) if d.get(name) is None and value]
        recorded = d.get("params") if isinstance(d.get("params"), Mapping) else {}
        out += [f"params.{k}" for k in sorted(params) if k not in recorded]
        out += [k for k, v in extra.items() if v is not None and k not in d]
        return out

    def llm_request_differs(self, rec: Span, params: Mapping[str, Any], extra: Mapping[str, Any]) -> bool:
        """Whether the replayed call's params or ``extra`` fields differ from ``rec``'s (its model
        and messages matched already). A foreign recording's call is compared on what it holds."""
        d = rec.data
        recorded = d.get("params") if isinstance(d.get("params"), Mapping) else {}
        if self.foreign:
            return any(k in params and params[k] != v for k, v in recorded.items()) or any(
                v is not None and k in d and d.get(k) != v for k, v in extra.items())
        return dict(recorded) != dict(params) or any(v is not None and d.get(k) != v for k, v in extra.items())

    def llm_at(self, position: int) -> Span | None:
        """The ``position``-th recorded LLM call (0-based, seq order), or None."""
        return self.llm_order[position] if 0 <= position < len(self.llm_order) else None

    def key(self, tool: str, arguments: Any) -> tuple[str, list[str]]:
        """The matching key of a call (``args_hash`` with the tool's volatile paths masked) and the
        volatile paths that were present (masked)."""
        masked, hit = mask_volatile(arguments, self.volatile.get(tool, ()))
        return args_hash(masked), hit

    def exhausted(self) -> bool:
        """Every complete recorded call has been served: the replay has reached the recording's end."""
        return all(rec.served or rec.unfinished for rec in self.path)

    def nearest(self, tool: str, arguments: Any, limit: int = 3, *, writes: bool = False) -> list[dict[str, Any]]:
        """The recorded calls closest to ``tool(arguments)``, best first.

        Ranking: same tool name before any other; then fewest differing argument fields; other
        tool names by edit distance. Each entry: ``{"tool", "arguments", "recorded", "served",
        "differs"}`` where ``differs`` lists ``"tool name"`` and/or argument paths
        (``arguments.date``) with both values.
        """
        scored: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
        if writes:  # a write is compared with the recorded writes only
            candidates = [(t, recs) for (t, _k), recs in self.calls.items() if t == tool or _is_write(recs[0])]
        else:
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
        if not self.foreign or d.get("model") is not None:
            diff_field("model", d.get("model", ABSENT), model, BYTES, changes)
        if not self.foreign or d.get("messages") is not None:
            diff_field("messages", d.get("messages", ABSENT), messages, IDS, changes)
        recorded = d.get("params", ABSENT) if "params" in d else {}
        live = dict(params)
        if self.foreign:  # the params the recording names, only
            recorded = dict(recorded) if isinstance(recorded, Mapping) else {}
            live = {k: v for k, v in live.items() if k in recorded}
            recorded = {k: v for k, v in recorded.items() if k in params}
        diff_field("params", recorded, live, BYTES, changes)
        for name, value in extra.items():
            if (value is not None or name in d) and (not self.foreign or name in d):
                diff_field(name, d.get(name, ABSENT), value, BYTES, changes)
        return rec, [_describe(c) for c in changes]


VOLATILE = "<volatile>"
"""What a volatile argument's value is replaced with before matching."""


def mask_volatile(arguments: Any, paths: Iterable[str]) -> tuple[Any, list[str]]:
    """``arguments`` (canonicalised: JSON strings parsed) with the value at each path replaced by
    ``"<volatile>"``, and the paths that were present.

    A path is dot-separated keys with ``[N]`` or ``[*]`` for list items (``meta.request_id``,
    ``items[*].id``); ``*`` as a key matches every key. Paths that are absent are skipped.
    """
    paths = tuple(paths)
    if not paths:
        return arguments, []
    value = canonicalize(arguments)
    hit: list[str] = []
    for path in paths:
        steps = _path_steps(path)
        if steps and _mask(value, steps):
            hit.append(path)
    return value, hit


def _path_steps(path: str) -> list[str]:
    steps: list[str] = []
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        steps.append(part[1:-1] if part.startswith("[") and part.endswith("]") else part)
    return steps


def _mask(value: Any, steps: list[str]) -> bool:
    head, rest = steps[0], steps[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head] if head in value else []
    elif isinstance(value, list):
        if head == "*":
            keys = list(range(len(value)))
        elif head.lstrip("-").isdigit() and -len(value) <= int(head) < len(value):
            keys = [int(head)]
        else:
            keys = []
    else:
        return False
    done = False
    for k in keys:
        if rest:
            done = _mask(value[k], rest) or done
        else:
            value[k] = VOLATILE
            done = True
    return done


def unchecked_notes(unchecked: Mapping[str, int], recording: Trace | None) -> list[str]:
    """The run report's line on the LLM request fields a foreign recording did not hold
    (``field -> frozen calls``, ``Session.llm_unchecked``), or ``[]``: ``"LLM request fields the
    recording (otel-sdk-json) does not hold, not compared: params.stream (3 calls), ..."``."""
    if not unchecked:
        return []
    fmt = recording.format if recording is not None else "foreign"
    what = ", ".join(f"{name} ({n} call{'s' * (n != 1)})" for name, n in sorted(unchecked.items()))
    return [f"LLM request fields the recording ({fmt}) does not hold, not compared: {what}"]


def _redacted(span: Span, redact: Callable[..., Any]) -> Span:
    """A copy of ``span`` with its data redacted (a tool's arguments and output by the tool's
    name, as the live side redacts them)."""
    tool = span.data.get("tool_name") or span.name if span.kind is SpanKind.TOOL else None
    return dataclasses.replace(span, data={k: redact(v, tool=tool) for k, v in span.data.items()})


def unfinished(span: Span) -> bool:
    """A span the recorder started and never finished: no end time and no output."""
    out = span.data.get("documents" if span.kind is SpanKind.RETRIEVAL else "output")
    return span.end_ns is None and out is None and span.status is not Status.ERROR


def incomplete_reason(trace: Trace) -> str | None:
    """Why a recording ends before its run did, or None: a tool, retrieval or LLM call started and
    never finished, or a tracetui recording (``record_mode: record``) without its root span (the
    writer was stopped mid-run)."""
    for span in sorted(trace.spans, key=lambda s: s.seq):
        if span.kind in (SpanKind.TOOL, SpanKind.RETRIEVAL, SpanKind.LLM) and unfinished(span):
            return f"span {span.span_id} ({span.name}) was started but never finished (no output, no end time)"
    if trace.header.get("record_mode") == "record" and trace.header.get("schema") == "tracetui/1" and not any(
            s.parent_id is None and s.kind is SpanKind.AGENT for s in trace.spans):
        return "the recording has no root span: its run did not end (the recorder was stopped mid-run)"
    return None


def unservable(span: Span) -> str | None:
    """Why a recorded tool or retrieval response cannot be served as it is (``Recording.unservable``)."""
    d = span.data
    if d.get("output_truncated") is True:
        return "its recorded output is truncated (output_truncated: true)"
    out = d.get("documents" if span.kind is SpanKind.RETRIEVAL else "output")
    hit = truncation_scan(out, markers=True, caps=True, json_any=True) if out is not None else None
    if hit is not None:
        return f"its recorded output looks truncated ({hit[1]})"
    dup = span.attributes.get("tracetui.duplicate_keys")
    if dup:
        return f"its recorded arguments are ambiguous (the same key twice with different values: {dup})"
    return None


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
