"""The span model every reader produces and every comparison consumes.

A *trace* is the recorded spans of one *run*; a *span* is one boundary crossing
or step, of one *span kind*. The model mirrors tracetui's own file format
(``docs/format.md``, schema ``tracetui/1``): common fields on the span, and the
semantic fields of the span's kind in one section named after the kind
(``span.data`` holds what the file has under ``"tool"``, ``"llm"``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

PLACEHOLDER = "tracetui.placeholder"
"""Attribute set (True) on a span watch mode made up for a parent not written yet (``core.watch``; the TUI
labels it "(not written yet)")."""


class SpanKind(str, Enum):
    """The span kinds of tracetui/1 (see the glossary in docs/format.md).

    Mapped from OpenTelemetry GenAI ``gen_ai.operation.name`` and OpenInference
    ``openinference.span.kind`` by the readers.
    """

    LLM = "llm"
    TOOL = "tool"
    RETRIEVAL = "retrieval"
    DECISION = "decision"
    MEMORY = "memory"
    AGENT = "agent"
    OTHER = "other"


class Status(str, Enum):
    """Span outcome, after OpenTelemetry's status codes (UNSET, OK, ERROR)."""

    UNSET = "unset"
    OK = "ok"
    ERROR = "error"


SPAN_KINDS: frozenset[str] = frozenset(k.value for k in SpanKind)


@dataclass(slots=True)
class Span:
    """One span of a run. Treat as immutable once read (``dataclasses.replace`` to change).

    Not ``frozen``: a frozen dataclass's ``__init__`` costs ~4.5 µs a span against
    ~1 µs, a third of reading a 100k-span trace (benchmarks/bench_diff.py).

    Attributes:
        span_id: Id unique within the trace (any string; readers normalise OTel
            ids to lowercase hex).
        parent_id: ``span_id`` of the parent, or ``None`` for a root.
        seq: Emission order within the run, 0-based: the order spans *started*.
            Readers that only have timestamps derive it from ``start_ns``.
        kind: The span kind.
        name: Display name (``execute_tool search_orders``, ``chat gpt-4o``...).
        start_ns: Start time, integer nanoseconds since the Unix epoch, or None.
        end_ns: End time, integer nanoseconds since the Unix epoch, or None.
        status: ``ok``, ``error`` or ``unset``.
        error_type: Error class (OTel ``error.type``), or None.
        data: The kind's semantic section, shaped as in docs/format.md
            (for a tool span: ``tool_name``, ``arguments``, ``output``, ...).
        attributes: Other attributes kept for display (raw source attributes
            readers could not map); never compared.
        trace_id: The source trace id when the source has one.
        line: 1-based line (or record index) in the source file, for messages.
    """

    span_id: str
    parent_id: str | None
    seq: int
    kind: SpanKind
    name: str
    start_ns: int | None = None
    end_ns: int | None = None
    status: Status = Status.UNSET
    error_type: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    attributes: Mapping[str, Any] = field(default_factory=dict)
    trace_id: str | None = None
    line: int | None = None

    @property
    def tool_name(self) -> str | None:
        """The tool name of a tool span (``gen_ai.tool.name``), else None."""
        if self.kind is SpanKind.TOOL:
            value = self.data.get("tool_name")
            return str(value) if value is not None else self.name
        return None

    @property
    def duration_ns(self) -> int | None:
        """``end_ns - start_ns`` in nanoseconds, or None when either is unknown."""
        if self.start_ns is None or self.end_ns is None:
            return None
        return self.end_ns - self.start_ns


@dataclass(frozen=True, slots=True)
class ReadIssue:
    """Something a reader skipped or doubted, located precisely.

    Attributes:
        path: The file.
        line: 1-based line number (JSONL) or None.
        where: JSON path inside the record or document (``$.resourceSpans[0]...``),
            or the field name; empty when the whole line is concerned.
        message: What was wrong and what was done about it.
        severity: ``warning`` (loaded, maybe partially), ``skipped`` (dropped) or ``info`` (how it was
            read, nothing lost or doubted: the CLI shows it with ``--verbose``).
    """

    path: str
    line: int | None
    where: str
    message: str
    severity: str = "skipped"

    def __str__(self) -> str:
        loc = self.path
        if self.line is not None:
            loc += f":{self.line}"
        if self.where:
            loc += f" ({self.where})"
        return f"{loc}: {self.message}"


@dataclass(slots=True)
class Trace:
    """The spans of one run, in ``seq`` order, plus where they came from.

    Attributes:
        spans: Spans sorted by ``seq`` (ties keep file order).
        header: The run header (tracetui/1 header fields; empty for formats
            without one): ``run_id``, ``clock``, ``code_version``, ...
        path: Source file path as given.
        format: Name of the reader that produced it (``tracetui``, ``otlp-json``).
        trace_id: The trace picked from the file, when the file has ids.
        trace_ids: Every trace id the file holds, in file order.
        issues: What the reader skipped or warned about.
    """

    spans: list[Span]
    header: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    format: str = ""
    trace_id: str | None = None
    trace_ids: list[str] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.spans)
