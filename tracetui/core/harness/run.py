"""Running an agent under the harness: ``record`` (live, written as it goes, redacted first) and
``replay`` (strict, loose or fixture; frozen or live model; K trials). Pure library: no printing;
the CLI (``tracetui record``/``tracetui replay``) and tests call these.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone as dt_timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tracetui.core.errors import HarnessError, ReplayDivergence, SchemaChanged
from tracetui.core.harness.agent import AgentSpec
from tracetui.core.harness.cassette import Cassette, unchecked_notes
from tracetui.core.harness.context import LLM_MODES, Outcome, Session
from tracetui.core.harness.runcontext import RunContext
from tracetui.core.harness.steps import jsonable
from tracetui.core.harness.fixture import RecordedReadsFixture, snapshot
from tracetui.core.harness.guard import block_network
from tracetui.core.harness.project import project_volatile
from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.writer import TraceWriter
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers.timefmt import ns_to_iso

REPLAY_MODES = ("strict", "loose", "fixture")

RECORDING_OUTCOMES = {"recording_incomplete": "incomplete_recording", "recording_unservable": "unservable_recording"}
"""Divergence type -> the run outcome it makes when it is what stopped the run: the recording, not
the agent, is at fault."""


@dataclass(slots=True)
class RunResult:
    """One recorded or replayed run.

    Attributes:
        path: The trace file written.
        run_id: The run's id (header ``run_id``).
        header: The header as completed at the end of the run.
        output: What ``run(ctx, input)`` returned (record: raw; replay: as the agent built it).
        error: The exception the agent raised, or None.
        outcome: Calls made, served, missed, written (``Outcome``).
        unconsumed: Recorded reads no replayed call took (strict and loose).
        final_state: The fixture's state at the end (fixture mode), else None.
        initial_state: The fixture's state after seeding (fixture mode), else None.
        blocked: Network connections the socket guard refused.
        trial: 1-based trial number; ``reproduces``: whether its call path equals the original's
            (replay only, else None).
        original_failed: Whether the recorded run's root span failed (replay only, else None).
    """

    path: str
    run_id: str
    header: dict[str, Any]
    output: Any
    error: BaseException | None
    outcome: Outcome
    unconsumed: list[dict[str, Any]] = field(default_factory=list)
    final_state: Any = None
    initial_state: Any = None
    blocked: list[str] = field(default_factory=list)
    trial: int = 1
    reproduces: bool | None = None
    original_failed: bool | None = None

    @property
    def status(self) -> str:
        """The run's named outcome: ``unservable_recording`` (the recording holds a truncated or
        ambiguous response the replay needed), ``incomplete_recording`` (the recording ends before
        the point the replay reached), ``diverged`` (unrecorded call, write mismatch, recording
        exhausted, input mismatch), ``failed`` (a new failure or a repeated write), else ``passed``."""
        types = [d["type"] for d in self.outcome.divergences]
        if types and types[0] in RECORDING_OUTCOMES:
            return RECORDING_OUTCOMES[types[0]]
        if self.diverged:
            return "diverged"
        return "failed" if self.failed else "passed"

    @property
    def new_failure(self) -> bool:
        """The agent raised (not a replay divergence) where the original run did not fail."""
        return (self.error is not None and not isinstance(self.error, ReplayDivergence)
                and self.original_failed is False)

    @property
    def failed(self) -> bool:
        """What a CI gate fails on: a divergence, a new failure, or a write repeated with the same
        idempotency key."""
        return self.diverged or self.new_failure or bool(self.outcome.duplicate_writes)

    @property
    def diverged(self) -> bool:
        """True when the run left the recording (an unrecorded call, an exhausted recording, a write
        mismatch, an input mismatch, or a call the recording cannot vouch for): the third outcome
        beside pass and fail (practice.md); ``status`` names which."""
        return bool(self.outcome.divergences)

    def summary(self) -> dict[str, Any]:
        """The run report as JSON: also written to the root span's ``replay.summary`` attribute."""
        o = self.outcome
        out: dict[str, Any] = {
            "run_id": self.run_id, "mode": self.header.get("record_mode"), "trial": self.trial,
            "status": self.status, "diverged": self.diverged, "failed": self.failed, "new_failure": self.new_failure,
            "error": error_text(self.error),
            "live_calls": o.live_calls, "model_calls": o.model_calls, "served": o.served, "llm_served": o.llm_served, "misses": o.misses,
            "divergences": o.divergences, "writes": o.writes, "duplicate_writes": o.duplicate_writes,
            "unconsumed": self.unconsumed, "blocked_network": self.blocked, "notes": o.notes,
        }
        if self.reproduces is not None:
            out["reproduces_original_path"] = self.reproduces
        if self.final_state is not None:
            out["final_state"] = self.final_state
            out["changes"] = o.changes
        return out


@dataclass(slots=True)
class ReplayReport:
    """All trials of one replay.

    Attributes:
        runs: One RunResult per trial, in order.
        original_path: The recording's call path (``[tool, args_hash]`` per tool/retrieval call).
    """

    runs: list[RunResult]
    original_path: list[tuple[str, str]]

    @property
    def reproduced(self) -> int:
        """How many trials took the original's call path."""
        return sum(1 for r in self.runs if r.reproduces)

    @property
    def diverged(self) -> bool:
        return any(r.diverged for r in self.runs)

    @property
    def status(self) -> str:
        """The worst trial's ``RunResult.status``: unservable_recording, incomplete_recording,
        diverged, failed, passed (in that order)."""
        order = ("unservable_recording", "incomplete_recording", "diverged", "failed", "passed")
        return min((r.status for r in self.runs), key=order.index, default="passed")

    @property
    def failed(self) -> bool:
        """Any trial ``failed`` (diverged, raised where the original did not, or repeated a write)."""
        return any(r.failed for r in self.runs)


def error_text(exc: BaseException | None) -> str | None:
    """``"ValueError: the first line of its message"``, the class name alone for an exception
    without a message (``StopIteration()``), None for None."""
    if exc is None:
        return None
    text = str(exc)
    return f"{type(exc).__name__}: {text}".splitlines()[0] if text else type(exc).__name__


def resolve_zone(name: str | None) -> tuple[Any, str]:
    """A tzinfo and its IANA name: ``name``, else ``$TZ`` when it names a zone, else UTC.

    Raises:
        HarnessError: ``name`` is not an IANA time-zone name.
    """
    for candidate, explicit in ((name, True), (os.environ.get("TZ"), False)):
        if not candidate:
            continue
        if candidate.upper() == "UTC":
            return dt_timezone.utc, "UTC"
        try:
            return ZoneInfo(candidate), candidate
        except (ZoneInfoNotFoundError, ValueError):
            if explicit:
                raise HarnessError(f"time zone {candidate!r} is not an IANA name (for example Europe/Paris)") from None
    return dt_timezone.utc, "UTC"


def record_clock(start_ns: int, clock: str | None, timezone: str | None) -> tuple[datetime, str]:
    """The clock a recorded run is given and its zone name: ``clock`` (ISO 8601) in ``timezone``,
    else the run's start (``start_ns``, ns since the epoch) to the second, in ``timezone`` or
    ``$TZ`` or UTC. Raises ``HarnessError`` on a bad time or zone."""
    if clock is not None:
        return parse_clock(clock, timezone)
    tz, zone = resolve_zone(timezone)
    return datetime.fromtimestamp(start_ns / 1e9, tz).replace(microsecond=0), zone


def new_run_id(ids: random.Random, start_ns: int) -> str:
    """``run-<UTC start, to the second>-<4 hex from ids>``."""
    return "run-" + datetime.fromtimestamp(start_ns / 1e9, dt_timezone.utc).strftime("%Y%m%dT%H%M%SZ") + \
        f"-{ids.getrandbits(16):04x}"


def parse_clock(value: str, zone_name: str | None) -> tuple[datetime, str]:
    """Parse an ISO 8601 time (``2026-11-03T10:14:02+01:00``) in the given zone.

    A time without an offset is taken in the zone. Raises ``HarnessError`` on a bad time or zone.
    """
    tz, name = resolve_zone(zone_name)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise HarnessError(f"clock {value!r} is not an ISO 8601 time (2026-11-03T10:14:02+01:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(tz), name


def normalization_notes(redactor: Redactor, seed: int) -> list[str]:
    return [
        "arguments and outputs: recorded whole, as the agent passed them and the tool returned them, "
        "before any parsing; non-JSON values written as text",
        "calls keyed by tool name + args_hash (SHA-256 of canonical JSON: keys sorted, JSON strings parsed); "
        "numbers and list order as recorded",
        f"redaction before write: {', '.join(redactor.rules)} replaced by stable typed tokens "
        f"(HMAC-SHA256, key {redactor.key_id})",
        "clock: ctx.now() is the run's clock, fixed for the whole run (header clock)",
        f"randomness: ctx.new_id() and ctx.random seeded with {seed} (header seed)",
    ]


def base_header(spec: AgentSpec, redactor: Redactor, run_id: str, trace_id: str, start_ns: int,
                 clock: datetime, zone: str, seed: int, red_input: Any) -> dict[str, Any]:
    header: dict[str, Any] = {
        "run_id": run_id, "trace_id": trace_id,
        "started_at": ns_to_iso(start_ns), "start_ns": start_ns,
        "clock": {"now": clock.isoformat(), "timezone": zone},
        "seed": seed,
    }
    if spec.code_version:
        header["code_version"] = spec.code_version
    if spec.prompts:
        header["prompt_versions"] = spec.prompt_versions()
        header["prompt_hash"] = spec.prompt_hash()
    if spec.model_info:
        header["model"] = dict(spec.model_info)
    header["tool_schema_hash"] = spec.tool_schema_hash()
    header["read_tools"] = sorted(redactor.text(t) for t in spec.read_tools)
    header["agent"] = spec.name
    header["agent_ref"] = spec.ref
    header["input"] = red_input
    return header


def _execute(session: Session, writer: TraceWriter, header: dict[str, Any], raw_input: Any, red_input: Any,
             run_id: str, guard_mode: str | None,
             finish: Callable[[Outcome, list[str], BaseException | None], dict[str, Any]] | None = None,
             ) -> tuple[Any, BaseException | None, list[str], dict[str, Any]]:
    """Run the agent once: header, agent, root span, completed header."""
    writer.header(header)
    spec = session.spec
    start = session.timer()
    ctx = RunContext(session, raw_input, run_id)
    output: Any = None
    error: BaseException | None = None
    blocked: list[str] = []
    interrupted: BaseException | None = None
    try:
        if guard_mode is None:
            output = spec.run(ctx, raw_input)
        else:
            with block_network(guard_mode) as guard:
                try:
                    output = spec.run(ctx, raw_input)
                finally:
                    blocked = guard.blocked
    except Exception as exc:  # the agent's failure is part of the run: recorded, not raised
        error = exc
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: write the root, then go on raising
        error = exc
        interrupted = exc
    summary = finish(session.outcome, blocked, error) if finish is not None else {}
    final = end_run(session, writer, header, start, red_input, output, error, summary)
    if interrupted is not None:
        writer.close()
        raise interrupted
    return output, error, blocked, final


def end_run(session: Session, writer: TraceWriter, header: Mapping[str, Any], start: int, red_input: Any,
            output: Any, error: BaseException | None, summary: Mapping[str, Any],
            more_header: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Close one run: write its root agent span (``invoke_agent NAME``: input, output or the error,
    the replay summary as ``replay.summary``) and complete its header in place (the redaction
    rules that fired, and ``more_header``).

    Returns:
        The completed header.
    """
    spec = session.spec
    data: dict[str, Any] = {"agent_name": spec.name, "input": red_input}
    attrs: dict[str, Any] = {}
    if error is None:
        data["output"] = session.redactor.value(jsonable(output))
        status, etype = Status.OK, None
    else:
        data["output"] = session.redactor.value({"error_type": type(error).__name__, "message": _error_message(error)})
        status, etype = Status.ERROR, type(error).__name__
    if summary:
        attrs["replay.summary"] = session.redactor.value(dict(summary))
    root = Span(session.root_id, None, 0, SpanKind.AGENT, f"invoke_agent {spec.name}", start, session.timer(),
                status, etype, data, attrs, session.trace_id)
    writer.span(root)
    final = dict(header)
    final.update(more_header or {})
    final["redaction"] = session.redactor.record()
    writer.complete_header(final)
    return final


def _error_message(exc: BaseException) -> str:
    """An exception's message, or its class name when it has none (``StopIteration()``)."""
    text = str(exc)
    return text if text else type(exc).__name__


def record(spec: AgentSpec, input: Any, out: str, *, redactor: Redactor, clock: str | None = None,
           timezone: str | None = None, seed: int | None = None, run_id: str | None = None,
           overwrite: bool = False, timer: Callable[[], int] = time.time_ns) -> RunResult:
    """Run ``spec`` live on ``input`` and write its trace to ``out`` as it goes (tracetui/1).

    Args:
        spec: The agent (``load_agent``).
        input: The run's input (any JSON value), passed to ``run(ctx, input)`` as given; written
            redacted.
        out: The trace file to create.
        redactor: Applied to every value before it is written.
        clock: The time the agent is given (ISO 8601); default: now.
        timezone: IANA zone of the clock; default ``$TZ`` or UTC.
        seed: Seed of ``ctx.new_id``/``ctx.random``; default random (written to the header).
        run_id: Default ``run-<UTC time>-<4 hex>``.
        overwrite: Replace an existing ``out`` (atomically, at the end).
        timer: Span clock, integer ns since the epoch (tests and sample builds inject one).

    Returns:
        The RunResult; the agent's own exception is in ``error`` (the trace is still complete).

    Raises:
        FileExistsError: ``out`` exists and ``overwrite`` is False.
        HarnessError: a bad clock or time zone.
    """
    start_ns = timer()
    moment, zone = record_clock(start_ns, clock, timezone)
    seed = int.from_bytes(os.urandom(4), "big") if seed is None else seed
    ids = random.Random(f"{seed}:ids:{start_ns}")
    trace_id = f"{ids.getrandbits(128):032x}"
    if run_id is None:
        run_id = new_run_id(ids, start_ns)
    red_input = redactor.value(jsonable(input))
    header = base_header(spec, redactor, run_id, trace_id, start_ns, moment, zone, seed, red_input)
    header["record_mode"] = "record"
    header["normalization"] = normalization_notes(redactor, seed)
    header["redaction"] = redactor.record()
    writer = TraceWriter(out, overwrite=overwrite)
    try:
        session = Session(spec, "record", writer, redactor, moment, seed, trace_id, timer=timer)
        output, error, _blocked, final = _execute(session, writer, header, input, red_input, run_id, None)
    finally:
        writer.close()
    return RunResult(out, run_id, final, output, error, session.outcome)


def recorded_input(recording: Trace) -> Any:
    """The run input of a recording: header ``input``, else the root agent span's ``input``.

    Raises:
        HarnessError: the recording holds neither.
    """
    if "input" in recording.header:
        return recording.header["input"]
    for s in recording.spans:
        if s.parent_id is None and s.kind is SpanKind.AGENT and "input" in s.data:
            return s.data["input"]
    raise HarnessError(f"{recording.path}: the recording holds no run input (header input or a root agent span's "
                       "input); pass --input")


def replay_clock(recording: Trace) -> tuple[datetime, str, list[str]]:
    """The frozen clock of a replay: the header's ``clock.now`` in ``clock.timezone``; else the run's
    start time in UTC, with a note."""
    clock = recording.header.get("clock")
    notes: list[str] = []
    if isinstance(clock, Mapping) and isinstance(clock.get("now"), str):
        try:
            moment, zone = parse_clock(clock["now"], clock.get("timezone") or "UTC")
            return moment, zone, notes
        except HarnessError as exc:
            notes.append(f"recorded clock unusable ({exc}); frozen at the run's start in UTC")
    else:
        notes.append("the recording has no clock (header clock.now); frozen at the run's start in UTC")
    start = recording.header.get("start_ns")
    if not isinstance(start, int):
        starts = [s.start_ns for s in recording.spans if s.start_ns is not None]
        start = min(starts) if starts else 0
    return datetime.fromtimestamp(start / 1e9, dt_timezone.utc), "UTC", notes


def replay(recording: Trace, spec: AgentSpec, out: str, *, redactor: Redactor, mode: str = "strict",
           llm: str = "frozen", trials: int = 1, allow_live: bool = False, seed_state: Mapping[str, Any] | None = None,
           accept_schema_change: bool = False, overwrite: bool = False, input: Any = ...,
           timer: Callable[[], int] = time.time_ns, on_trial: Callable[[RunResult], None] | None = None,
           accept_truncated: bool = False, volatile: Mapping[str, Any] | None = None,
           isolation: str | None = None) -> ReplayReport:
    """Replay a recorded run with ``spec`` and write the replay trace (one run per trial) to ``out``.

    Args:
        recording: The recorded run (``read_trace``).
        spec: The agent to run (the same one, or a fixed one).
        out: The replay trace to create.
        redactor: The project's redactor: values the agent passes are redacted with it before they
            are matched against the (redacted) recording, and before they are written.
        mode: ``strict`` (misses are divergences), ``loose`` (misses go live only with
            ``allow_live``), ``fixture`` (a state store seeded from the recorded reads).
        llm: ``frozen`` (recorded outputs for the same input) or ``live`` (``MODEL`` called again).
        trials: Runs to make (K); each is one run in ``out``.
        allow_live: Loose mode: let misses reach the live tools.
        seed_state: Fixture mode: a user seed, loaded after the recorded reads.
        accept_schema_change: Replay a recording made against other tool schemas (noted in the header).
        input: Override the recorded input.
        timer: Span clock (ns since the epoch).
        on_trial: Called after each trial (progress).
        accept_truncated: Serve truncated or ambiguous recorded responses (marked on the span and
            noted in the header) instead of stopping with ``unservable_recording``.
        volatile: Tool name -> argument paths ignored when matching (an idempotency key or request
            id the agent mints per call); default: ``[tool.tracetui.replay] volatile`` of the
            nearest pyproject.toml, then the agent module's ``VOLATILE_ARGS``. Listed in the header.
        isolation: How the replay is cut off from the network (``sandbox.ISOLATION_NAMESPACE`` when
            the caller runs in the replay sandbox, else ``ISOLATION_GUARD``), written to the
            header's ``network_isolation``; None: not said (the caller knows where it runs: the
            CLI commands, ``golden run``'s runner and ``tracetui nightly``'s workers say it).

    Returns:
        The ReplayReport.

    Raises:
        HarnessError: a bad mode, no input, a fixture seed the store cannot load.
        SchemaChanged: strict mode, other tool schemas, without ``accept_schema_change``.
        FileExistsError: ``out`` exists and ``overwrite`` is False.
    """
    if mode not in REPLAY_MODES:
        raise HarnessError(f"replay mode {mode!r}: use one of {', '.join(REPLAY_MODES)}")
    if llm not in LLM_MODES:
        raise HarnessError(f"LLM mode {llm!r}: use one of {', '.join(LLM_MODES)}")
    if trials < 1:
        raise HarnessError(f"--trials must be at least 1, not {trials}")
    if llm == "live" and spec.model is None:
        raise HarnessError(f"--llm live: agent {spec.ref} declares no MODEL to call")
    rec_header = recording.header
    notes: list[str] = []
    recorded_schema = rec_header.get("tool_schema_hash")
    current_schema = spec.tool_schema_hash()
    schema_change = None
    if isinstance(recorded_schema, str) and recorded_schema != current_schema:
        if mode == "strict" and not accept_schema_change:
            raise SchemaChanged(recorded_schema, current_schema)
        schema_change = {"recorded": recorded_schema, "current": current_schema, "accepted": True}
        notes.append(f"tool schemas changed since the recording ({recorded_schema} -> {current_schema})")
    elif recorded_schema is None:
        notes.append("the recording has no tool-schema hash: staleness cannot be checked")
    key_id = (rec_header.get("redaction") or {}).get("key_id") if isinstance(rec_header.get("redaction"), Mapping) else None
    if key_id and key_id != redactor.key_id:
        notes.append(f"the recording was redacted with key {key_id}, this replay uses {redactor.key_id}: values the "
                     "agent adds itself will not match their recorded tokens")
    if recording.path and os.path.exists(out) and os.path.exists(recording.path) and os.path.samefile(out, recording.path):
        raise HarnessError(f"--out {out} is the recording being replayed; write the replay to another file")
    original_failed = any(s.parent_id is None and s.status is Status.ERROR for s in recording.spans)
    raw_input = recorded_input(recording) if input is ... else input
    red_input = redactor.value(jsonable(raw_input))
    moment, zone, clock_notes = replay_clock(recording)
    notes.extend(clock_notes)
    seed = rec_header.get("seed") if isinstance(rec_header.get("seed"), int) else 0
    if volatile is None:
        volatile = {**project_volatile(), **spec.volatile_args}
    cassette = Cassette.from_trace(recording, volatile, redactor.value)  # indexed once; reset between trials
    if cassette.incomplete is not None:
        notes.append(f"the recording is incomplete: {cassette.incomplete}")
    original_path = [(r.tool, r.key) for r in cassette.path]
    writer = TraceWriter(out, overwrite=overwrite)
    runs: list[RunResult] = []
    try:
        for trial in range(1, trials + 1):
            start_ns = timer()
            ids = random.Random(f"{seed}:replay:{trial}:{start_ns}")
            trace_id = f"{ids.getrandbits(128):032x}"
            run_id = f"replay-{trial}-of-{rec_header.get('run_id') or recording.trace_id or 'run'}" if trials > 1 \
                else f"replay-of-{rec_header.get('run_id') or recording.trace_id or 'run'}"
            cassette.reset()
            store = None
            initial = None
            if mode == "fixture":
                store = _seed_fixture(spec, cassette, seed_state)
                initial = snapshot(store)
                if not getattr(store, "applies_writes", True):
                    notes_f = "fixture: the agent declares no FIXTURE; writes are logged, later reads do not see them"
                    if notes_f not in notes:
                        notes.append(notes_f)
            session = Session(spec, mode, writer, redactor, moment, seed, trace_id, cassette=cassette, llm_mode=llm,
                              fixture=store, allow_live=allow_live, timer=timer, accept_truncated=accept_truncated)
            session.outcome.notes.extend(notes)
            header = base_header(spec, redactor, run_id, trace_id, start_ns, moment, zone, seed, red_input)
            header["record_mode"] = mode
            header["llm_mode"] = llm
            header["replay_of"] = {"run_id": rec_header.get("run_id"), "trace_id": recording.trace_id,
                                   "path": os.path.basename(recording.path or ""), "format": recording.format}
            header["trial"] = trial
            header["trials"] = trials
            if mode == "loose":
                header["allow_live"] = allow_live
            if accept_truncated:
                header["accept_truncated"] = True
            if cassette.volatile:
                header["volatile_args"] = {k: list(v) for k, v in sorted(cassette.volatile.items())}
            if schema_change:
                header["schema_change"] = schema_change
            if isolation is not None:
                header["network_isolation"] = isolation
            header["normalization"] = normalization_notes(redactor, seed)
            header["redaction"] = redactor.record()
            holder: dict[str, Any] = {}

            def finish(outcome: Outcome, blocked: list[str], error: BaseException | None, cassette: Cassette = cassette, store: Any = store,
                       holder: dict[str, Any] = holder, run_id: str = run_id, header: dict[str, Any] = header,
                       initial: Any = initial, trial: int = trial, session: Session = session) -> dict[str, Any]:
                # Called once, when this trial's agent returns: the summary goes into its root span.
                for path, n in sorted(session.volatile_applied.items()):
                    outcome.notes.append(f"volatile argument {path} ignored for matching ({n} call{'s' * (n != 1)})")
                outcome.notes.extend(unchecked_notes(session.llm_unchecked, recording))
                holder["unconsumed"] = cassette.unconsumed(spec.is_read) if mode != "fixture" else []
                holder["final"] = snapshot(store) if store is not None else None
                result = RunResult(out, run_id, header, None, error, outcome, holder["unconsumed"], holder["final"],
                                   initial, blocked, trial, outcome.path == original_path, original_failed)
                return result.summary()

            output, error, blocked, final = _execute(session, writer, header, raw_input, red_input, run_id,
                                                     mode, finish)

            if isinstance(error, ReplayDivergence) and not session.outcome.divergences:
                session.outcome.divergences.append({"type": error.divergence, "span_id": error.span_id, "seq": None,
                                                    "tool": None, "message": str(error)})
            result = RunResult(out, run_id, final, output, error, session.outcome, holder.get("unconsumed", []),
                               holder.get("final"), initial, blocked, trial, session.outcome.path == original_path,
                               original_failed)
            runs.append(result)
            if on_trial is not None:
                on_trial(result)
    finally:
        writer.close()
    return ReplayReport(runs, original_path)


def _seed_fixture(spec: AgentSpec, cassette: Cassette, seed_state: Mapping[str, Any] | None) -> Any:
    store = spec.fixture_factory() if spec.fixture_factory is not None else RecordedReadsFixture()
    for rec in cassette.path:
        s = rec.span
        if s.status is Status.ERROR or s.data.get("output_truncated") is True:
            continue
        if s.kind is SpanKind.TOOL and spec.is_read(rec.tool):
            store.seed(rec.tool, rec.arguments, s.data.get("output"))
        elif s.kind is SpanKind.RETRIEVAL:
            store.seed(rec.tool, rec.arguments, s.data.get("documents"))
    if seed_state is not None:
        load = getattr(store, "load", None)
        if load is None:
            raise HarnessError(f"the fixture of {spec.ref} has no load(seed): it cannot take a seed file")
        load(seed_state)
    return store
