"""The harness engine: the one door through which an agent reaches tools, models, retrieval, the
clock and randomness, with a backend per record mode (``Session``; the agent's ``ctx`` is a
``RunContext`` over it, ``tracetui.core.harness.runcontext``).

An agent is ``run(ctx, input)``. It calls ``ctx.tool``, ``ctx.llm``, ``ctx.retrieve``,
``ctx.decide``, ``ctx.now`` and ``ctx.new_id`` instead of its clients. In ``record`` mode they
reach the module's live ``TOOLS``, ``MODEL`` and ``RETRIEVERS`` and every call is written to the
trace, redacted first. In ``strict``, ``loose`` and ``fixture`` modes they are answered from the
recording or a fixture store and nothing live is called (docs/harness.md; the rules come from
practice.md "Rules that hold whatever the mode").

The LLM path (``ctx.llm``: frozen replay, model in the loop) lives in
``tracetui.core.harness.llm`` (``LlmCalls``, a base class of ``Session``); the cassette,
fixture and step drivers live apart too.
"""

from __future__ import annotations

import builtins
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracetui.core.canonical import args_hash
from tracetui.core.errors import (
    HarnessError,
    RecordedToolError,
    RecordingExhausted,
    RecordingIncomplete,
    RecordingUnservable,
    ReplayDivergence,
    UnrecordedCall,
    WriteMismatch,
)
from tracetui.core.harness.agent import AgentSpec
from tracetui.core.harness.cassette import (
    Cassette,
    Recording,
    describe_calls,
    retrieval_arguments,
    retrieval_tool,
)
from tracetui.core.harness.fixture import snapshot, state_changes
from tracetui.core.harness.llm import LlmCalls
from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.steps import Live, Steps, arun_steps, copy_value, jsonable, run_steps, short_json
from tracetui.core.harness.writer import TraceWriter
from tracetui.core.model import Span, SpanKind, Status

MODES = ("record", "strict", "loose", "fixture")
"""Record modes (vcrpy's word): ``record`` calls live and writes; the others replay."""

LLM_MODES = ("frozen", "live")
"""``frozen``: LLM outputs served from the recording; ``live``: ``MODEL`` called again (model in the loop)."""


@dataclass(slots=True)
class Outcome:
    """What one run did at the boundary, filled in as it goes.

    Attributes:
        live_calls: Live tool and retriever calls made (0 in strict and fixture modes, always).
        model_calls: Live ``MODEL`` calls made.
        served: Reads answered from the recording or the fixture.
        llm_served: LLM calls answered from the recording (frozen replay).
        divergences: ``[{"type", "span_id", "seq", "tool", "message"}]`` in call order: ``unrecorded_call``,
            ``recording_exhausted``, ``write_mismatch``, ``input_mismatch`` (the agent diverged);
            ``recording_incomplete``, ``recording_unservable`` (the recording cannot vouch for the call).
        misses: Reads the recording could not answer (loose mode counts those sent live too).
        writes: Write intents in call order: ``{"tool", "arguments", "idempotency_key", "position",
            "span_id", "source"}``.
        duplicate_writes: ``{"tool", "idempotency_key", "position", "first_position"}``.
        changes: Fixture state changes, each with the write that made it (``by``: position).
        notes: Other things the run report should say (a write the fixture cannot apply...).
        path: The run's call path: ``[tool name, args_hash]`` per tool and retrieval call, in order.
    """

    live_calls: int = 0
    model_calls: int = 0
    served: int = 0
    llm_served: int = 0
    divergences: list[dict[str, Any]] = field(default_factory=list)
    misses: int = 0
    writes: list[dict[str, Any]] = field(default_factory=list)
    duplicate_writes: list[dict[str, Any]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    path: list[tuple[str, str]] = field(default_factory=list)


class Session(LlmCalls):
    """The engine behind one run's ``RunContext``: ids, clock, spans, backends.

    Args:
        spec: The loaded agent.
        mode: One of ``MODES``.
        writer: Where spans go.
        redactor: Applied to every value before it is written or matched.
        clock: The run's frozen time (timezone-aware).
        seed: Seeds ``ctx.new_id``/``ctx.random`` (and the span ids).
        trace_id, root_id: Ids of the run.
        cassette: The recording (replay modes).
        llm_mode: One of ``LLM_MODES`` (replay modes).
        fixture: The fixture store (fixture mode).
        allow_live: Loose mode: misses may reach the live tool.
        timer: Wall clock for span times, integer ns since the epoch.
        is_read: Whether a tool is a read (default ``spec.is_read``; an ambient session's list grows).
        live_allowed: Loose mode with ``allow_live``: whether a miss of this tool may go live
            (default: every tool with a live call). Never a write: a tool the agent or the
            recording calls a write is matched against the recorded writes and never executed.
        accept_truncated: Serve recorded responses that are truncated or ambiguous (marked
            ``output_truncated: true`` on the replay span) instead of refusing them.
    """

    def __init__(self, spec: AgentSpec, mode: str, writer: TraceWriter, redactor: Redactor, clock: datetime,
                 seed: int, trace_id: str, *, cassette: Cassette | None = None, llm_mode: str = "frozen",
                 fixture: Any = None, allow_live: bool = False, timer: Callable[[], int] = time.time_ns,
                 is_read: Callable[[str], bool] | None = None,
                 live_allowed: Callable[[str], bool] | None = None, accept_truncated: bool = False) -> None:
        self.spec = spec
        self.mode = mode
        self.writer = writer
        self.redactor = redactor
        self.clock = clock
        self.trace_id = trace_id
        self.cassette = cassette
        self.llm_mode = llm_mode
        self.fixture = fixture
        self.allow_live = allow_live
        self.timer = timer
        self.is_read = spec.is_read if is_read is None else is_read
        self.live_allowed = live_allowed
        self.accept_truncated = accept_truncated
        self.volatile_applied: dict[str, int] = {}
        self.llm_unchecked: dict[str, int] = {}  # request field -> frozen LLM calls it could not be checked on
        self.outcome = Outcome()
        self.tool_schema_hash = spec.tool_schema_hash()  # once: it inspects every tool's signature
        self.rng = random.Random(f"{seed}:agent")
        self._span_rng = random.Random(f"{seed}:spans:{trace_id}")
        self._lock = threading.RLock()
        self._seq = 0
        self._llm_position = 0
        self._keys: dict[str, int] = {}
        self.root_id = self._new_span_id()
        self._seq = 1  # the root is seq 0

    # ---- ids and spans ----------------------------------------------------------------------
    def _new_span_id(self) -> str:
        return f"{self._span_rng.getrandbits(64):016x}"

    def _open(self) -> tuple[str, int, int]:
        with self._lock:
            seq = self._seq
            self._seq += 1
            return self._new_span_id(), seq, self.timer()

    def _emit(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any], *,
              status: Status = Status.OK, error_type: str | None = None,
              attributes: Mapping[str, Any] | None = None, parent: str | None = None) -> Span:
        span = Span(span_id, self.root_id if parent is None else parent, seq, kind, name, start, self.timer(),
                    status, error_type, data, dict(attributes or {}), self.trace_id)
        with self._lock:
            self.writer.span(span)
        return span

    # ---- tools ------------------------------------------------------------------------------
    def tool(self, name: str, args: Mapping[str, Any] | None, idempotency_key: str | None,
             live: Callable[[], Any] | None = None) -> Any:
        """``tool_steps`` driven from sync code (``run_steps``)."""
        return run_steps(self.tool_steps(name, args, idempotency_key, live))

    async def atool(self, name: str, args: Mapping[str, Any] | None, idempotency_key: str | None,
                    live: Callable[[], Any] | None = None) -> Any:
        """``tool_steps`` driven from a coroutine (``arun_steps``): ``live`` may be async."""
        return await arun_steps(self.tool_steps(name, args, idempotency_key, live))

    def tool_steps(self, name: str, args: Mapping[str, Any] | None, idempotency_key: str | None,
                   live: Callable[[], Any] | None = None) -> Steps[Any]:
        """One tool call: recorded live, served from the recording, intercepted (a write) or a
        divergence. ``live`` is the live call (default ``TOOLS[name](**args)``)."""
        if not isinstance(name, str) or not name:
            raise HarnessError(f"ctx.tool: the tool name must be a non-empty string, not {name!r}")
        args = {} if args is None else args
        if not isinstance(args, (Mapping, str)):
            raise HarnessError(f"ctx.tool({name!r}, ...): arguments must be a mapping of argument name to value "
                               f"(or one plain string), not {type(args).__name__}")
        span_id, seq, start = self._open()
        red_args = self.redactor.value(dict(args) if isinstance(args, Mapping) else args, tool=name)
        # The name is written (span name, tool_name, the header's read_tools) under the same rules as
        # every other value, as promote writes it: the agent's own registry keeps the raw name.
        raw_name, name = name, self.redactor.text(name)
        key = self._match_key(name, red_args)
        # Fail closed: a tool is a write unless the agent declares it a read AND the recording does
        # not hold it as a write (a write is never sent live, whatever the mode).
        write = not (self.is_read(raw_name) or self.is_read(name)) or (
            self.cassette is not None and name in self.cassette.writes)
        if write and idempotency_key is None and isinstance(args, Mapping):
            idem = args.get("idempotency_key")
            idempotency_key = idem if isinstance(idem, str) else None
        data: dict[str, Any] = {"tool_name": name, "arguments": red_args, "args_hash": args_hash(red_args),
                                "effect": "write" if write else "read",
                                "mode": "live" if self.mode == "record" else "replay"}
        self.outcome.path.append((name, key))
        fn = self.spec.tools.get(raw_name)
        if live is None and fn is not None:
            live = (lambda: fn(args)) if isinstance(args, str) else (lambda: fn(**args))  # noqa: E731
        if self.mode == "record":
            if live is None:
                return self._fail(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, HarnessError(
                    f"the agent called tool {name!r}, which TOOLS does not have "
                    f"(it has: {', '.join(sorted(self.spec.tools)) or 'none'})"))
            return (yield from self._live(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, "output",
                                          name, live))
        attrs: dict[str, Any] = {}
        if write:
            return self._write(span_id, seq, start, name, data, red_args, key, idempotency_key, attrs, args)
        return (yield from self._read(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, "output",
                                      name, red_args, key, live))

    def retrieve(self, index: str, query: Any, kw: dict[str, Any]) -> Any:
        """``retrieve_steps`` driven from sync code."""
        return run_steps(self.retrieve_steps(index, query, kw))

    async def aretrieve(self, index: str, query: Any, kw: dict[str, Any]) -> Any:
        """``retrieve_steps`` driven from a coroutine."""
        return await arun_steps(self.retrieve_steps(index, query, kw))

    def retrieve_steps(self, index: str, query: Any, kw: dict[str, Any],
                       live: Callable[[], Any] | None = None) -> Steps[Any]:
        """One retrieval (a read, keyed by index, query and ``kw``); ``live`` defaults to
        ``RETRIEVERS[index](query, **kw)``."""
        tool = retrieval_tool(str(index))
        span_id, seq, start = self._open()
        red_query = self.redactor.value(query)
        red_kw = self.redactor.value(kw)
        args = retrieval_arguments(red_query, red_kw)
        key = self._match_key(tool, args)
        data: dict[str, Any] = {"index": index, "query": red_query}
        params = {}
        for k, v in red_kw.items():
            if k in ("top_k", "filters"):
                data[k] = v
            else:
                params[k] = v
        if params:
            data["params"] = params
        self.outcome.path.append((tool, key))
        name = f"retrieve {index}"
        fn = self.spec.retrievers.get(index)
        if live is None and fn is not None:
            live = lambda: fn(query, **kw)  # noqa: E731
        if self.mode == "record":
            if live is None:
                return self._fail(span_id, seq, start, SpanKind.RETRIEVAL, name, data, HarnessError(
                    f"the agent retrieved from index {index!r}, which RETRIEVERS does not have "
                    f"(it has: {', '.join(sorted(self.spec.retrievers)) or 'none'})"))
            return (yield from self._live(span_id, seq, start, SpanKind.RETRIEVAL, name, data, "documents", None,
                                          live))
        return (yield from self._read(span_id, seq, start, SpanKind.RETRIEVAL, name, data, "documents", tool, args,
                                      key, live))

    def _match_key(self, tool: str, red_args: Any) -> str:
        """The key a call is matched by: ``args_hash`` of the redacted arguments, the tool's volatile
        argument paths masked (replay; counted in ``volatile_applied``)."""
        if self.cassette is None or self.mode == "record":
            return args_hash(red_args)
        key, hit = self.cassette.key(tool, red_args)
        for path in hit:
            self.volatile_applied[f"{tool}.{path}"] = self.volatile_applied.get(f"{tool}.{path}", 0) + 1
        return key

    def _refused(self, rec: Recording, tool: str, span_id: str) -> ReplayDivergence | None:
        """The reason a taken recording cannot be served: unfinished (``RecordingIncomplete``) or
        truncated/ambiguous without ``accept_truncated`` (``RecordingUnservable``); else None."""
        if rec.unfinished:
            return RecordingIncomplete(tool, f"incomplete recording: {tool} was started but never finished in the "
                                       f"recording (no output, no end time; recorded span {rec.span.span_id}). The "
                                       "replay stops here; nothing was served.", span_id=span_id)
        why = rec.unservable()
        if why is not None and not self.accept_truncated:
            return RecordingUnservable(tool, why, f"unservable recording: {tool}: {why}; a strict replay never serves "
                                       "it (--accept-truncated serves it, marked). Nothing was sent to a live system.",
                                       span_id=span_id)
        return None

    def _past_end(self, tool: str, span_id: str) -> RecordingIncomplete | None:
        """A miss on an incomplete recording the replay has consumed whole: the recording ends
        before the point the replay reached."""
        if self.cassette is None or self.cassette.incomplete is None or not self.cassette.exhausted():
            return None
        return RecordingIncomplete(tool, f"incomplete recording: the replay reached {tool} after the end of the "
                                   f"recording ({self.cassette.incomplete}). The replay stops here.", span_id=span_id)

    def _live(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any],
              out_field: str, tool: str | None, call: Callable[[], Any]) -> Steps[Any]:
        self.outcome.live_calls += 1
        try:
            output = yield Live(call)
        except Exception as exc:
            data[out_field] = self.redactor.value({"error_type": type(exc).__name__, "message": str(exc)}, tool=tool)
            if kind is SpanKind.TOOL:
                data["output_truncated"] = False
            self._emit(span_id, seq, start, kind, name, data, status=Status.ERROR, error_type=type(exc).__name__)
            raise
        data[out_field] = self.redactor.value(jsonable(output), tool=tool)
        if kind is SpanKind.TOOL:
            data["output_truncated"] = False
        self._emit(span_id, seq, start, kind, name, data)
        return output

    def _fail(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any],
              exc: Exception) -> Any:
        data["output" if kind is SpanKind.TOOL else "documents"] = {"error_type": type(exc).__name__, "message": str(exc)}
        self._emit(span_id, seq, start, kind, name, data, status=Status.ERROR, error_type=type(exc).__name__)
        raise exc

    def _read(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any],
              out_field: str, tool: str, red_args: Any, key: str, live: Callable[[], Any] | None) -> Steps[Any]:
        if self.mode == "fixture":
            try:
                output = self.fixture.call(tool, red_args, write=False)
            except LookupError as err:
                detail = self.redactor.text(str(err)) if str(err) else type(err).__name__
                exc = self._miss(tool, red_args, key, 0, span_id, seq,
                                 why=f"the fixture has no answer for it ({detail})")
                return self._diverge(span_id, seq, start, kind, name, data, out_field, exc, "miss")
            except Exception as err:  # the fixture answered with a failure, as the live tool would
                self.outcome.served += 1
                self._fixture_failure(span_id, seq, start, kind, name, data, out_field, tool, err, {})
                raise
            self.outcome.served += 1
            data[out_field] = self.redactor.value(jsonable(output), tool=tool)
            if kind is SpanKind.TOOL:
                data["output_truncated"] = False
            self._emit(span_id, seq, start, kind, name, data, attributes={"replay.source": "fixture"})
            return copy_value(data[out_field])
        assert self.cassette is not None
        rec = self.cassette.take(tool, key)
        if isinstance(rec, Recording):
            refused = self._refused(rec, tool, span_id)
            if refused is not None:
                return self._diverge(span_id, seq, start, kind, name, data, out_field, refused, "refused")
            self.outcome.served += 1
            return self._serve(span_id, seq, start, kind, name, data, out_field, rec, "recording")
        self.outcome.misses += 1
        past = self._past_end(tool, span_id)
        if past is not None:
            return self._diverge(span_id, seq, start, kind, name, data, out_field, past, "miss")
        if self.mode == "loose" and self.allow_live and live is not None and (
                self.live_allowed is None or self.live_allowed(tool)):
            self.outcome.live_calls += 1
            if kind is SpanKind.TOOL:
                data["mode"] = "live"
            try:
                output = yield Live(live, network=True)
            except Exception as exc:
                data[out_field] = self.redactor.value({"error_type": type(exc).__name__, "message": str(exc)},
                                                      tool=tool)
                self._emit(span_id, seq, start, kind, name, data, status=Status.ERROR,
                           error_type=type(exc).__name__, attributes={"replay.source": "live"})
                raise
            data[out_field] = self.redactor.value(jsonable(output), tool=tool)
            self._emit(span_id, seq, start, kind, name, data, attributes={"replay.source": "live"})
            return output
        why = None
        if self.mode == "loose" and not self.allow_live:
            why = "loose mode sends misses live only with --allow-live"
        exc = self._miss(tool, red_args, key, rec, span_id, seq, why=why)
        return self._diverge(span_id, seq, start, kind, name, data, out_field, exc, "miss")

    def _serve(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any],
               out_field: str, rec: Recording, source: str, extra: Mapping[str, Any] | None = None) -> Any:
        rd = rec.span.data
        output = rd.get(out_field)
        data[out_field] = output
        accepted = rec.unservable()
        if kind is SpanKind.TOOL:
            data["output_truncated"] = bool(rd.get("output_truncated", False)) or accepted is not None
        attrs = {"replay.source": source, "replay.recorded_span_id": rec.span.span_id}
        if accepted is not None:
            attrs["replay.accepted_truncated"] = accepted
            self.outcome.notes.append(f"--accept-truncated: {rec.tool} served although {accepted}")
        attrs.update(extra or {})
        if rec.span.status is Status.ERROR:
            self._emit(span_id, seq, start, kind, name, data, status=Status.ERROR, error_type=rec.span.error_type,
                       attributes=attrs)
            raise _recorded_error(rec.tool, rec.span.error_type, output)
        self._emit(span_id, seq, start, kind, name, data, attributes=attrs)
        return copy_value(output)

    def _miss(self, tool: str, red_args: Any, key: str, recorded: int, span_id: str, seq: int,
              why: str | None = None, write: bool = False) -> UnrecordedCall | RecordingExhausted | WriteMismatch:
        if recorded > 0:
            msg = (f"{tool} called {recorded + 1} times with these arguments; the recording has {recorded} "
                   f"response{'s' if recorded > 1 else ''}, all served (recorded {recorded}, requested {recorded + 1}). "
                   "Nothing was sent to a live system.")
            return RecordingExhausted(tool, red_args, recorded, msg, span_id=span_id)
        nearest = self.cassette.nearest(tool, red_args, writes=write) if self.cassette is not None else []
        if write:
            msg = (f"write mismatch: {tool} {short_json(red_args)} matches no recorded write (tool + canonical "
                   "arguments + order). It was not executed and not simulated.")
            if nearest:
                msg += "\nNearest recorded writes:\n" + describe_calls(nearest)
            return WriteMismatch(tool, red_args, nearest, msg, span_id=span_id)
        head = f"unrecorded call {tool} {short_json(red_args)}: " + (why or "the recording has no response for "
                                                                       "this tool and these arguments")
        msg = head + ". Nothing was sent to a live system."
        if nearest:
            msg += "\nNearest recorded calls:\n" + describe_calls(nearest)
        return UnrecordedCall(tool, red_args, nearest, msg, span_id=span_id)

    def _diverge(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any],
                 out_field: str, exc: ReplayDivergence, source: str, attrs: Mapping[str, Any] | None = None) -> Any:
        body: dict[str, Any] = {"error": exc.divergence, "message": str(exc)}
        if isinstance(exc, (UnrecordedCall, WriteMismatch)):
            body["nearest"] = exc.nearest
        elif isinstance(exc, RecordingExhausted):
            body["recorded"] = exc.recorded
        data[out_field] = body
        if kind is SpanKind.TOOL:
            data["output_truncated"] = False
        self._emit(span_id, seq, start, kind, name, data, status=Status.ERROR, error_type=type(exc).__name__,
                   attributes={**(attrs or {}), "replay.source": source, "replay.divergence": exc.divergence})
        self.outcome.divergences.append({"type": exc.divergence, "span_id": span_id, "seq": seq,
                                         "tool": getattr(exc, "tool", None), "message": str(exc)})
        raise exc

    def _write(self, span_id: str, seq: int, start: int, name: str, data: dict[str, Any], red_args: Any, key: str,
               idempotency_key: str | None, attrs: dict[str, Any], raw_args: Mapping[str, Any]) -> Any:
        position = len(self.outcome.writes) + 1
        red_key = self.redactor.text(idempotency_key) if idempotency_key is not None else None
        intent = {"tool": name, "arguments": red_args, "idempotency_key": red_key, "position": position,
                  "span_id": span_id}
        attrs["replay.intercepted"] = True
        attrs["replay.write_intent"] = {k: intent[k] for k in ("tool", "idempotency_key", "position")}
        if red_key is not None:
            first = self._keys.get(f"{name}\0{red_key}")
            if first is not None:
                dup = {"tool": name, "idempotency_key": red_key, "position": position, "first_position": first}
                self.outcome.duplicate_writes.append(dup)
                attrs["replay.duplicate_write_of"] = first
            else:
                self._keys[f"{name}\0{red_key}"] = position
        if self.mode == "fixture":
            before = snapshot(self.fixture)
            try:
                output = self.fixture.call(name, red_args, write=True)
                source = "fixture"
            except LookupError:
                output = {"status": "ok", "simulated": True, "intercepted": True}
                source = "simulated"
                self.outcome.notes.append(f"write #{position} {name}: the fixture cannot apply it; "
                                          "a simulated success was returned and the state is unchanged")
            except Exception as err:  # the fixture refused the write, as the live tool would: a failed span
                intent["source"] = "fixture"
                self.outcome.writes.append(intent)
                for change in state_changes(before, snapshot(self.fixture)):
                    change["by"] = {"position": position, "tool": name, "span_id": span_id}
                    self.outcome.changes.append(change)
                self._fixture_failure(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, "output",
                                      name, err, attrs)
                raise
            for change in state_changes(before, snapshot(self.fixture)):
                change["by"] = {"position": position, "tool": name, "span_id": span_id}
                self.outcome.changes.append(change)
            output = self.redactor.value(jsonable(output), tool=name)
        else:
            # Strict and loose (with or without allow_live): matched against the recorded writes by
            # tool + canonical arguments + order, as reads are; never executed.
            assert self.cassette is not None
            rec = self.cassette.take(name, key)
            exc: ReplayDivergence | None
            if isinstance(rec, Recording):
                exc = self._refused(rec, name, span_id)
                if exc is None:
                    intent["source"] = "recording"
                    self.outcome.writes.append(intent)
                    attrs["replay.simulated"] = True
                    return self._serve(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, "output",
                                       rec, "recording", attrs)
            else:
                self.outcome.misses += 1
                exc = self._past_end(name, span_id) or self._miss(name, red_args, key, rec, span_id, seq, write=True)
            intent["source"] = "diverged"
            self.outcome.writes.append(intent)
            return self._diverge(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, "output", exc,
                                 "refused" if isinstance(rec, Recording) else "miss", attrs)
        intent["source"] = source
        self.outcome.writes.append(intent)
        attrs["replay.source"] = source
        attrs["replay.simulated"] = True
        data["output"] = output
        data["output_truncated"] = False
        self._emit(span_id, seq, start, SpanKind.TOOL, f"execute_tool {name}", data, attributes=attrs)
        return copy_value(output)

    def _fixture_failure(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any],
                         out_field: str, tool: str, err: Exception, attrs: dict[str, Any]) -> None:
        """Write the span of a call the fixture answered by raising (not ``LookupError``): a failed
        tool or retrieval span, as the live tool's failure is recorded; the exception goes on to the agent."""
        data[out_field] = self.redactor.value({"error_type": type(err).__name__, "message": str(err)}, tool=tool)
        if kind is SpanKind.TOOL:
            data["output_truncated"] = False
        attrs = {**attrs, "replay.source": "fixture"}
        self._emit(span_id, seq, start, kind, name, data, status=Status.ERROR, error_type=type(err).__name__,
                   attributes=attrs)

    # ---- decisions --------------------------------------------------------------------------
    def decide(self, name: str, value: Any, options: Any) -> Any:
        span_id, seq, start = self._open()
        data: dict[str, Any] = {"decision": name, "value": self.redactor.value(jsonable(value))}
        if options is not None:
            data["options"] = self.redactor.value(jsonable(options))
        self._emit(span_id, seq, start, SpanKind.DECISION, f"decision {name}", data)
        return value


def _recorded_error(tool: str, error_type: str | None, output: Any) -> RecordedToolError:
    base = getattr(builtins, error_type or "", None)
    if isinstance(base, type) and issubclass(base, Exception) and base is not Exception:
        try:
            cls = type(error_type, (RecordedToolError, base), {})
            return cls(tool, error_type, output)
        except TypeError:  # layout conflict with some built-ins
            pass
    return RecordedToolError(tool, error_type, output)
