"""Record and replay outside ``run(ctx, input)``: an ambient session for the agents people have.

``tracetui.record(out=...)`` and ``tracetui.replay(recording, out=...)`` open a session that is
held in a context variable for the ``with`` (or ``async with``) block, so tools decorated with
``@tracetui.tool``, the model-client transports and the framework integrations
(``tracetui.integrations``) find it wherever they were defined::

    with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
        session.output = my_agent("What's the weather in Paris?")

    with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:   # strict, frozen model
        my_agent("What's the weather in Paris?")
    print(session.result.summary())

Everything ``ctx`` guarantees holds (docs/harness.md): values redacted before they are written,
the clock (``session.now()``) frozen to the recording's, ids and randomness seeded, reads answered
from the recording in call order, every tool not on the read list a write and intercepted, a call
the recording does not cover raised as ``UnrecordedCall`` / ``RecordingExhausted`` /
``InputMismatch``, and in replay the socket guard blocks every outbound connection for the whole
block (model-in-the-loop calls excepted, one by one).

A tool is a read when it is on ``read_tools``, declared ``@tracetui.tool(read=True)``, named in
``[tool.tracetui] read_tools`` of the nearest ``pyproject.toml``, or (replay) was recorded as a
read. An MCP ``readOnlyHint`` is a hint from the server, not trusted: see ``hinted_read``.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import random
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from tracetui.core.canonical import canonical_json
from tracetui.core.errors import HarnessError, ReplayDivergence
from tracetui.core.harness.agent import AgentSpec
from tracetui.core.harness.cassette import Cassette, unchecked_notes
from tracetui.core.harness.context import LLM_MODES, Session
from tracetui.core.harness.guard import NetworkGuard, block_network
from tracetui.core.harness.project import project_read_tools, project_volatile
from tracetui.core.harness.redact import Redactor, project_redactor
from tracetui.core.harness.run import (
    REPLAY_MODES,
    RunResult,
    base_header,
    normalization_notes,
    end_run,
    new_run_id,
    record_clock,
    recorded_input,
    replay_clock,
)
from tracetui.core.harness.steps import jsonable
from tracetui.core.harness.writer import TraceWriter
from tracetui.core.model import Status, Trace

_CURRENT: contextvars.ContextVar[HarnessSession | None] = contextvars.ContextVar("tracetui_session", default=None)

_DECLARED_READS: set[str] = set()
"""Tool names declared reads where they were defined (``@tracetui.tool(read=True)``)."""

def declare_tool(name: str, *, read: bool) -> None:
    """Declare tool ``name`` where it is defined (``@tracetui.tool``); ``read``: it is a read
    (``@tracetui.tool(read=True)``), for every session of this process. A session's header lists and hashes
    only the tools its run called (``saw_tool``): what else the process happened to import before or after
    (another agent's tools, a test's) must not change a run's header (an ``llm`` span's ``tool_schemas_hash``
    covers the tools the model was shown)."""
    if read:
        _DECLARED_READS.add(name)


_OPEN: list[HarnessSession] = []
"""Sessions open in this process: a thread that did not inherit the context (a pool started
before the session) still finds the one session open."""


def current_session() -> HarnessSession | None:
    """The session of the current context (thread or task); else the one session open in this
    process, if exactly one is; else None."""
    session = _CURRENT.get()
    if session is None and len(_OPEN) == 1:
        return _OPEN[0]
    return session


class HarnessSession:
    """One recorded or replayed run of an unchanged agent. Build with ``tracetui.record`` or
    ``tracetui.replay``; enter with ``with`` or ``async with`` (once).

    Attributes:
        mode: ``record``, ``strict``, ``loose`` or ``fixture``.
        llm_mode: ``frozen`` or ``live`` (replay).
        out: The trace file being written (tracetui/1).
        output: What the root span records as the run's output; set it before the block ends.
        engine: The harness engine (``Session``): integrations call its step methods.
        result: The ``RunResult`` once the block has ended (replay: with the summary).
        notes: What the run report should say (clock, schemas, hints taken).
        isolation: How a replay is cut off from the network (``sandbox.ISOLATION_NAMESPACE`` or
            ``ISOLATION_GUARD``), written to the header's ``network_isolation``. A replay session
            opened in the user's own process cannot move that process into a network namespace
            after the fact: it says ``ISOLATION_GUARD`` (the in-process guard only) unless the
            zero-code entry (``tracetui replay REC -- python app.py``, which starts the program
            inside the namespace) set it. None for a recording.
    """

    def __init__(self, mode: str, out: str, *, recording: Trace | None = None, llm: str = "frozen",
                 read_tools: Iterable[str] = (), agent: str | None = None, input: Any = None,
                 clock: str | None = None, timezone: str | None = None, seed: int | None = None,
                 redactor: Redactor | None = None, key_file: str | None = None, overwrite: bool = False,
                 allow_live: bool = False, run_id: str | None = None, code_version: str | None = None,
                 agent_ref: str | None = None, timer: Callable[[], int] = time.time_ns,
                 accept_truncated: bool = False) -> None:
        if mode != "record" and mode not in REPLAY_MODES:
            raise HarnessError(f"mode {mode!r}: use record or one of {', '.join(REPLAY_MODES)}")
        if mode == "fixture":
            raise HarnessError("fixture mode needs a fixture store: use tracetui replay AGENT --mode fixture "
                               "(run(ctx, input) agents) for now; ambient sessions replay strict or loose")
        if llm not in LLM_MODES:
            raise HarnessError(f"LLM mode {llm!r}: use one of {', '.join(LLM_MODES)}")
        if allow_live and mode != "loose":
            raise HarnessError("allow_live only applies to mode='loose'")
        self.mode = mode
        self.llm_mode = llm if mode != "record" else "live"
        self.out = out
        self.output: Any = None
        self.result: RunResult | None = None
        self.notes: list[str] = []
        self.isolation: str | None = None
        if recording is not None:
            from tracetui.core.harness.sandbox import ISOLATION_GUARD

            self.isolation = ISOLATION_GUARD
        self.recording = recording
        self._timer = timer
        self._overwrite = overwrite
        self._allow_live = allow_live
        self._accept_truncated = accept_truncated
        reads = {str(t) for t in read_tools} | project_read_tools()
        header = recording.header if recording is not None else {}
        if recording is not None and isinstance(header.get("read_tools"), list):
            reads |= {str(t) for t in header["read_tools"]}
        self._explicit_reads = frozenset(reads)
        self._hinted: set[str] = set()
        self._tools_seen: dict[str, Any] = {}
        self._system_prompts: dict[str, None] = {}
        if redactor is None:
            recorded_key = (header.get("redaction") or {}).get("key_id") if isinstance(header.get("redaction"), Mapping) else None
            redactor, note = project_redactor(key_file, create=mode == "record", recorded_key=recorded_key)
            if note:
                self.notes.append(note)
        self.redactor = redactor
        name = agent or (header.get("agent") if isinstance(header.get("agent"), str) else None) or _program_name()
        self.spec = AgentSpec(ref=str(agent_ref or header.get("agent_ref") or name), run=_no_run, name=name,
                              read_tools=self._explicit_reads, code_version=code_version)
        start_ns = timer()
        if recording is None:
            moment, zone = record_clock(start_ns, clock, timezone)
            seed = int.from_bytes(os.urandom(4), "big") if seed is None else seed
            self.input = input
        else:
            moment, zone, clock_notes = replay_clock(recording)
            self.notes.extend(clock_notes)
            seed = header.get("seed") if isinstance(header.get("seed"), int) else 0
            try:
                self.input = recorded_input(recording) if input is None else input
            except HarnessError:
                self.input = None
        self.clock = moment
        self.seed = seed
        ids = random.Random(f"{seed}:{mode}:ids:{start_ns}")
        self.trace_id = f"{ids.getrandbits(128):032x}"
        if run_id is None:
            if recording is None:
                run_id = new_run_id(ids, start_ns)
            else:
                run_id = f"replay-of-{header.get('run_id') or recording.trace_id or 'run'}"
        self.run_id = run_id
        self._start_ns = start_ns
        self._zone = zone
        self._cassette = Cassette.from_trace(recording, project_volatile(), redactor.value) \
            if recording is not None else None
        if self._cassette is not None and self._cassette.incomplete is not None:
            self.notes.append(f"the recording is incomplete: {self._cassette.incomplete}")
        self._writer: TraceWriter | None = None
        self._token: contextvars.Token[HarnessSession | None] | None = None
        self._guard_cm: Any = None
        self._guard: NetworkGuard | None = None
        self.engine: Session | None = None
        self._red_input: Any = None
        self._header: dict[str, Any] = {}
        self._root_start = 0

    # ---- reads and writes ---------------------------------------------------------------------
    def is_read(self, tool: str) -> bool:
        """Whether ``tool`` is a read: on the read list (given, declared, pyproject, recorded) or
        taken as one from an untrusted hint (``hinted_read``)."""
        return tool in self._explicit_reads or tool in _DECLARED_READS or tool in self._hinted

    def hinted_read(self, tool: str, source: str) -> None:
        """Take ``tool`` as a read on a server's hint (an MCP ``readOnlyHint``). A hinted read is
        served from the recording like any read, but never sent live: in loose mode with
        ``allow_live`` only tools on the read list reach a live system. Noted in the run report."""
        if not self.is_read(tool):
            self._hinted.add(tool)
            self.notes.append(f"{tool}: taken as a read on {source}'s readOnlyHint (a hint, not trusted: never "
                              "sent live in replay)")

    def live_allowed(self, tool: str) -> bool:
        """Whether a loose-mode miss of ``tool`` may reach the live tool: ``allow_live`` and a
        read on the explicit read list."""
        return self._allow_live and (tool in self._explicit_reads or tool in _DECLARED_READS)

    def saw_tool(self, name: str, schema: Any) -> None:
        """Note a tool's schema (its signature, or the JSON schema a framework built): hashed into
        the header's ``tool_schema_hash`` when the run ends."""
        self._tools_seen.setdefault(name, schema)

    def saw_system_prompt(self, text: str) -> str:
        """Note a rendered system prompt; returns its hash (16 hex digits of SHA-256), recorded on the
        LLM span as ``prompt_hash`` and, over every distinct prompt, in the header."""
        self._system_prompts.setdefault(text, None)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # ---- what ctx gives -----------------------------------------------------------------------
    def now(self) -> datetime:
        """The run's clock: record mode, the time the session started (or ``clock``); replay, the
        recording's, in its timezone."""
        return self.clock

    def new_id(self, prefix: str = "") -> str:
        """A UUID-4-shaped id from the run's seed (the same sequence in the recording and its replays)."""
        return prefix + str(uuid.UUID(int=self._engine().rng.getrandbits(128), version=4))

    @property
    def random(self) -> random.Random:
        """The run's seeded ``random.Random``."""
        return self._engine().rng

    def _engine(self) -> Session:
        if self.engine is None:
            raise HarnessError("the tracetui session is not open: use it inside its with block")
        return self.engine

    # ---- opening and closing ------------------------------------------------------------------
    def __enter__(self) -> HarnessSession:
        if self.engine is not None or self.result is not None:
            raise HarnessError("a tracetui session is entered once")
        if _CURRENT.get() is not None:
            raise HarnessError("a tracetui session is already open in this context; sessions do not nest")
        if self.recording is not None and self.recording.path and os.path.exists(self.out) and \
                os.path.exists(self.recording.path) and os.path.samefile(self.out, self.recording.path):
            raise HarnessError(f"out={self.out} is the recording being replayed; write the replay to another file")
        try:
            self._writer = TraceWriter(self.out, overwrite=self._overwrite)
        except FileExistsError:
            raise HarnessError(f"{self.out} exists; choose another name or pass overwrite=True") from None
        spec = self.spec
        engine = Session(spec, self.mode, self._writer, self.redactor, self.clock, self.seed, self.trace_id,
                         cassette=self._cassette, llm_mode=self.llm_mode, allow_live=self._allow_live,
                         timer=self._timer, is_read=self.is_read, live_allowed=self.live_allowed,
                         accept_truncated=self._accept_truncated)
        self.engine = engine
        self._red_input = self.redactor.value(jsonable(self.input))
        header = base_header(spec, self.redactor, self.run_id, self.trace_id, self._start_ns, self.clock,
                              self._zone, self.seed, self._red_input)
        header.pop("tool_schema_hash", None)  # known when the run ends: the tools are met as they are called
        header["record_mode"] = self.mode
        header["recorder"] = "tracetui.session"
        if self.recording is not None:
            rh = self.recording.header
            header["llm_mode"] = self.llm_mode
            header["replay_of"] = {"run_id": rh.get("run_id"), "trace_id": self.recording.trace_id,
                                   "path": os.path.basename(self.recording.path or ""), "format": self.recording.format}
            if self.mode == "loose":
                header["allow_live"] = self._allow_live
            if self._accept_truncated:
                header["accept_truncated"] = True
            if self._cassette is not None and self._cassette.volatile:
                header["volatile_args"] = {k: list(v) for k, v in sorted(self._cassette.volatile.items())}
            if self.isolation is not None:
                header["network_isolation"] = self.isolation
        header["normalization"] = normalization_notes(self.redactor, self.seed)
        header["redaction"] = self.redactor.record()
        self._header = header
        self._writer.header(header)
        self._root_start = engine.timer()
        if self.mode != "record":
            self._guard_cm = block_network(self.mode)
            self._guard = self._guard_cm.__enter__()
        self._token = _CURRENT.set(self)
        _OPEN.append(self)
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        engine = self._engine()
        assert self._writer is not None
        blocked: list[str] = []
        if self in _OPEN:
            _OPEN.remove(self)
        try:
            if self._guard_cm is not None:
                blocked = list(self._guard.blocked) if self._guard is not None else []
                self._guard_cm.__exit__(None, None, None)
        finally:
            if self._token is not None:
                try:
                    _CURRENT.reset(self._token)
                except ValueError:  # exited in another context than entered: clear it there
                    _CURRENT.set(None)
        error = exc if isinstance(exc, BaseException) else None
        outcome = engine.outcome
        if isinstance(error, ReplayDivergence) and not outcome.divergences:
            outcome.divergences.append({"type": error.divergence, "span_id": error.span_id, "seq": None,
                                        "tool": None, "message": str(error)})
        more = self._end_header()
        outcome.notes.extend(self.notes)
        for path, n in sorted(engine.volatile_applied.items()):
            outcome.notes.append(f"volatile argument {path} ignored for matching ({n} call{'s' * (n != 1)})")
        outcome.notes.extend(unchecked_notes(engine.llm_unchecked, self.recording))
        summary: dict[str, Any] = {}
        result = RunResult(self.out, self.run_id, self._header, self.output, error, outcome, blocked=blocked)
        if self.recording is not None:
            assert self._cassette is not None
            original_path = [(r.tool, r.key) for r in self._cassette.path]
            result.unconsumed = self._cassette.unconsumed(self.is_read)
            result.reproduces = outcome.path == original_path
            result.original_failed = any(s.parent_id is None and s.status is Status.ERROR
                                         for s in self.recording.spans)
            summary = result.summary()
        try:
            result.header = end_run(engine, self._writer, self._header, self._root_start, self._red_input,
                                    self.output, error, summary, more)
        finally:
            self._writer.close()
        self.result = result
        self.engine = None

    async def __aenter__(self) -> HarnessSession:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)

    def _end_header(self) -> dict[str, Any]:
        tools = dict(self._tools_seen)
        reads = sorted(name for name in tools if self.is_read(name))
        per_tool = {self.redactor.text(name): hashlib.sha256(canonical_json(schema)).hexdigest()[:16]
                    for name, schema in tools.items()}
        more: dict[str, Any] = {"read_tools": sorted({self.redactor.text(t) for t in set(reads) | self._explicit_reads}),
                                "tool_schema_hash": hashlib.sha256(canonical_json(
                                    {"tools": tools, "read_tools": reads})).hexdigest()[:16],
                                "tool_schemas": per_tool}
        if self._hinted:
            more["hinted_read_tools"] = sorted(self.redactor.text(t) for t in self._hinted)
        if self._system_prompts:
            more["prompt_hash"] = hashlib.sha256(canonical_json(list(self._system_prompts))).hexdigest()[:16]
        if self.recording is not None:
            recorded = self.recording.header.get("tool_schemas")
            if isinstance(recorded, Mapping):  # only tools both runs met: a run that stopped early met fewer
                changed = sorted(n for n, h in per_tool.items() if n in recorded and recorded[n] != h)
                if changed:
                    self.notes.append(f"tool schemas differ from the recording's: {', '.join(changed)}")
        return more


def _no_run(ctx: Any, input: Any) -> None:  # an ambient session has no run(ctx, input)
    raise HarnessError("an ambient session runs no agent function")


def _program_name() -> str:
    """The running program's name (``app`` for ``python app.py``), or ``agent`` when there is none
    (``python -c``, an interactive interpreter)."""
    import sys

    argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.splitext(os.path.basename(argv0))[0]
    return name if name and not name.startswith("-") else "agent"


def record_session(out: str, *, read_tools: Iterable[str] = (), agent: str | None = None, input: Any = None,
                   clock: str | None = None, timezone: str | None = None, seed: int | None = None,
                   key_file: str | None = None, overwrite: bool = False, run_id: str | None = None,
                   code_version: str | None = None, agent_ref: str | None = None) -> HarnessSession:
    """A session that records the block live to ``out`` (``tracetui.record``).

    Args:
        out: The trace file to create (tracetui/1); never overwritten unless ``overwrite``
            (then replaced atomically when the block ends).
        read_tools: Tool names that are reads (with ``@tracetui.tool(read=True)`` and
            ``[tool.tracetui] read_tools``); every other tool is a write.
        agent: The agent's name in the header (default: the program's name).
        input: The run's input, recorded (redacted) in the header and the root span.
        clock, timezone: The clock ``session.now()`` gives (ISO 8601; default now) and its zone.
        seed: Seed of ``session.new_id()`` / ``session.random`` (default random, in the header).
        key_file: The redaction key file (default ``.tracetui/redaction.key``, created).
        agent_ref: How to run the agent again, in the header's ``agent_ref`` (the zero-code entry
            writes the program: ``examples/app.py``, ``-m pkg.app``); default the agent's name.

    Raises:
        HarnessError: ``out`` exists (on entering), a bad clock or zone, a bad pyproject table.
    """
    return HarnessSession("record", out, read_tools=read_tools, agent=agent, input=input, clock=clock,
                          timezone=timezone, seed=seed, key_file=key_file, overwrite=overwrite, run_id=run_id,
                          code_version=code_version, agent_ref=agent_ref)


def replay_session(recording: str | Trace, out: str, *, mode: str = "strict", llm: str = "frozen",
                   read_tools: Iterable[str] = (), allow_live: bool = False, key_file: str | None = None,
                   overwrite: bool = False, input: Any = None, run_id: str | None = None,
                   accept_truncated: bool = False) -> HarnessSession:
    """A session that replays the block against ``recording`` and writes the replay to ``out``
    (``tracetui.replay``).

    Args:
        recording: A trace file (``FILE`` or ``FILE#RUN``, any format tracetui reads) or a Trace.
        out: The replay trace to create.
        mode: ``strict`` (a miss is a divergence) or ``loose`` (misses of read-list tools go live
            only with ``allow_live``).
        llm: ``frozen`` (recorded model outputs for the same request) or ``live`` (the model is
            called again, through the guard).
        read_tools: More read tools (the recording's ``read_tools`` are always reads).
        accept_truncated: Serve truncated or ambiguous recorded responses (marked) instead of
            stopping with ``unservable_recording``.

    Network isolation: this session runs in the caller's process, which it cannot move into a
    network namespace, so only the in-process guard stands between the block and the network (the
    header's ``network_isolation`` says so; subprocesses and native code are not covered). For a
    namespace, run the unchanged program as ``tracetui replay REC -- python app.py`` (docs/harness.md).

    Raises:
        HarnessError: a bad mode, ``out`` is the recording or exists; ReadError: the recording
        cannot be read.
    """
    if isinstance(recording, str):
        from tracetui.core.readers import read_trace

        recording = read_trace(recording)
    return HarnessSession(mode, out, recording=recording, llm=llm, read_tools=read_tools, allow_live=allow_live,
                          key_file=key_file, overwrite=overwrite, input=input, run_id=run_id,
                          accept_truncated=accept_truncated)
