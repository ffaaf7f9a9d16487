"""What a reader is: a name, a content sniffer, and a pure bytes -> runs function."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from tracetui.core.model import ReadIssue, Span


MAX_ISSUES = 1000
"""Issues kept per file; the rest are counted in one final ``… N more`` issue (``IssueList``)."""
_RANK = {"info": 0, "warning": 1, "skipped": 2, "error": 3}


class IssueList(list[ReadIssue]):
    """A list of issues that keeps the first ``MAX_ISSUES`` and counts the rest (per severity), so
    a file of millions of bad lines holds a thousand issues, not millions. ``finished()`` is the
    list with one ``… N more`` issue at the end carrying the count, as severe as the worst issue
    not kept (so a dropped ``error`` still makes the list say ``error``). Extending one IssueList
    with another carries the other's count."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__()
        self.more: dict[str, int] = {}
        self.more_path = ""
        self.extend(items)

    def append(self, issue: ReadIssue) -> None:
        if len(self) < MAX_ISSUES:
            super().append(issue)
        else:
            self.more[issue.severity] = self.more.get(issue.severity, 0) + 1
            self.more_path = self.more_path or issue.path

    def extend(self, items: Any) -> None:
        for issue in items:
            self.append(issue)
        if isinstance(items, IssueList):
            for severity, n in items.more.items():
                self.more[severity] = self.more.get(severity, 0) + n
            self.more_path = self.more_path or items.more_path

    def __iadd__(self, items: Any) -> IssueList:  # type: ignore[override,misc]
        self.extend(items)
        return self

    def finished(self) -> list[ReadIssue]:
        """The kept issues, then ``… N more issues not listed (k skipped, m warning)`` when any were
        dropped (line None, the most severe dropped severity)."""
        out = list(self)
        n = sum(self.more.values())
        if n:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(self.more.items(), key=lambda kv: -_RANK.get(kv[0], 0)))
            worst = max(self.more, key=lambda k: _RANK.get(k, 0))
            out.append(ReadIssue(self.more_path or (out[0].path if out else ""), None, "",
                                 f"… {n} more issue{'s' * (n != 1)} not listed (the first {MAX_ISSUES} are): {counts}",
                                 worst))
        return out


class FileReading:
    """Where every reader's pass over one file starts: the file's path, its issues (an
    ``IssueList``: capped), and ``issue``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[ReadIssue] = IssueList()

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
    issues: list[ReadIssue] = field(default_factory=IssueList)


@dataclass(slots=True)
class ReaderOutput:
    """Everything a reader got out of one file: runs in file order, and issues."""

    runs: list[RunSpans] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=IssueList)


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
