"""A harness ``Session`` built in the test (the context rules' tests, issue 25): an agent of the test's own tools,
a recording of spans written in the test, and the spans the session writes kept in memory, in order.

The whole record/replay (``core.harness.run``) is tested through ``record``/``replay`` in ``test_harness.py``;
these reach ``Session`` directly, so one test pins one rule of a call and reads the span it wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from builders import Ticker

from tracetui.core.harness.agent import AgentSpec
from tracetui.core.harness.cassette import Cassette
from tracetui.core.harness.context import Session
from tracetui.core.harness.redact import Redactor
from tracetui.core.model import Span, SpanKind, Status, Trace

KEY = b"test-project-key"
CLOCK = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)


class Spans:
    """The session's writer kept in memory (``TraceWriter.span`` is the one method a session calls). It checks
    what every span a session writes holds (docs/format.md), so each test checks it: an id and a seq of its own,
    start and end times in order, the name its kind gives (``execute_tool NAME``, ``retrieve INDEX``,
    ``decision NAME``, ``chat MODEL``), the run's trace id, a parent, and an error type exactly when it failed."""

    def __init__(self) -> None:
        self.spans: list[Span] = []

    def span(self, span: Span) -> None:
        assert isinstance(span.span_id, str) and span.span_id not in {s.span_id for s in self.spans}, span
        assert isinstance(span.seq, int) and span.seq not in {s.seq for s in self.spans}, span
        assert isinstance(span.start_ns, int) and isinstance(span.end_ns, int) and span.start_ns < span.end_ns, span
        names = {SpanKind.TOOL: ("execute_tool", "tool_name"), SpanKind.RETRIEVAL: ("retrieve", "index"),
                 SpanKind.DECISION: ("decision", "decision"), SpanKind.LLM: ("chat", "model")}
        prefix, named = names[span.kind]
        assert span.name == f"{prefix} {span.data[named]}", span
        assert span.parent_id is not None and span.trace_id, span
        assert (span.status is Status.ERROR) == isinstance(span.error_type, str), span
        self.spans.append(span)

    @property
    def last(self) -> Span:
        return self.spans[-1]


def recorded(seq: int, tool: str, arguments: Any, output: Any = "ok", *, effect: str = "read",
             status: Status = Status.OK, error_type: str | None = None, end: int | None = 2,
             attributes: Mapping[str, Any] | None = None, **data: Any) -> Span:
    """A recorded tool span ``rec<seq>`` (``output=None`` with ``end=None``: a call never finished)."""
    body = {"tool_name": tool, "arguments": arguments, "effect": effect, **data}
    if output is not None:
        body["output"] = output
    return Span(f"rec{seq}", "root", seq, SpanKind.TOOL, f"execute_tool {tool}", 1, end, status, error_type,
                body, dict(attributes or {}))


def recorded_retrieval(seq: int, index: str, query: Any, documents: Any, **data: Any) -> Span:
    return Span(f"rec{seq}", "root", seq, SpanKind.RETRIEVAL, f"retrieve {index}", 1, 2, Status.OK, None,
                {"index": index, "query": query, "documents": documents, **data}, {})


def session(mode: str = "strict", recording: Iterable[Span] | None = (), *,
            tools: Mapping[str, Callable[..., Any]] | None = None, reads: Iterable[str] = (),
            retrievers: Mapping[str, Callable[..., Any]] | None = None,
            sensitive: Mapping[str, Iterable[str]] | None = None, volatile: Mapping[str, list[str]] | None = None,
            seed: int = 42, trace_id: str = "t" * 32, **kw: Any) -> tuple[Session, Spans]:
    """A session of ``mode`` over ``recording`` (None: no cassette, as in record mode), its writer in memory.
    ``kw`` goes to ``Session`` (``fixture``, ``allow_live``, ``live_allowed``, ``accept_truncated``...)."""
    spec = AgentSpec("test_agent.py:run", lambda ctx, input: None, "test_agent", tools=dict(tools or {}),
                     read_tools=frozenset(reads), retrievers=dict(retrievers or {}),
                     sensitive_fields={k: frozenset(v) for k, v in (sensitive or {}).items()})
    red = Redactor(KEY, sensitive_fields={k: list(v) for k, v in (sensitive or {}).items()})
    cassette = None
    if recording is not None:
        trace = Trace(list(recording), header={"schema": "tracetui/1"}, format="tracetui")
        cassette = Cassette.from_trace(trace, volatile or {})
    out = Spans()
    writer: Any = out  # the one method a session calls: span()
    return Session(spec, mode, writer, red, CLOCK, seed, trace_id, cassette=cassette, timer=Ticker(), **kw), out
