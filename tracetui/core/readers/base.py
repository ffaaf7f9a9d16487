"""What a reader is: a name, a content sniffer, and a pure bytes -> runs function."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from tracetui.core.model import ReadIssue, Span


class FileReading:
    """Where every reader's pass over one file starts: the file's path, its issues, and ``issue``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[ReadIssue] = []

    def issue(self, line: int | None, where: str, message: str, severity: str = "skipped") -> None:
        """Report a problem at ``line`` (1-based, None: the whole file) and ``where`` (a JSON path)."""
        self.issues.append(ReadIssue(self.path, line, where, message, severity))


@dataclass(slots=True)
class RunSpans:
    """The spans of one run as a reader found them.

    Attributes:
        trace_id: The run's trace id (OTel trace id, run id), or None.
        spans: Spans in file order. ``seq`` may be -1 when the source has no
            emission order; ``read_trace`` then derives it from ``start_ns``.
        header: tracetui/1 header fields the source carries (may be empty).
        in_order: Set by a reader that checked, while reading, everything
            ``finish_spans`` would fix: spans in ``seq`` order (all set), ids
            unique, every parent id naming an earlier span. ``read_trace`` then
            keeps the list as it is instead of a second pass over cold spans.
        issues: Issues that concern this run only (a record of this run
            skipped, its content missing); ``read_trace`` reports them with
            the run, and not when another run of the file is picked. Issues of
            the whole file go in ``ReaderOutput.issues``.
    """

    trace_id: str | None
    spans: list[Span] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)
    in_order: bool = False
    issues: list[ReadIssue] = field(default_factory=list)


@dataclass(slots=True)
class ReaderOutput:
    """Everything a reader got out of one file: runs in file order, and issues."""

    runs: list[RunSpans] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)


class Reader(Protocol):
    """A trace reader. Pure: no I/O besides the bytes given, no printing.

    Attributes:
        name: The ``--format`` name (``tracetui``, ``otlp-json``).
    """

    name: str
    # Optional: ``content_hint: str``, why spans of this format may lack content (see
    # ``tree.content_issues``); ``read_file(path, fh, head)``, a streaming read.

    def sniff(self, head: bytes) -> bool:
        """True when the first bytes of a file (up to 64 KiB) look like this format."""
        ...

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file.

        Args:
            path: Used only in issues and errors.
            data: The file's bytes.

        Raises:
            ReadError: when nothing at all can be loaded (not JSON, wrong shape).
        """
        ...
