"""Reading a replay while it is written: ``TailReader`` and its ``ReplaySnapshot``s.

``TailReader`` re-reads a replay file as it grows. For tracetui/1 (what
``tracetui replay`` writes) it keeps a byte offset and parses only the new
lines with the native reader's own line loop (``readers.native``); a torn last
line (no newline yet) waits in a buffer until its end arrives, so it never
becomes a span, nor an issue. What our writer (``core/harness/writer.py``)
does to the file is handled:

- the header line is written first with spare room and completed *in place*
  when the run ends: its bytes are compared on every poll and re-parsed when
  they changed;
- at close the file is compacted and *replaced* (a rename: a new inode): a
  replaced or truncated file is read again from scratch (``replaced``), and a
  replacement whose header has no spare room left is reported ``complete``;
- a file that does not exist yet, or is empty, is ``waiting``, not an error.

Other formats are read whole again (``read_replay``) whenever the file changed;
a read that fails half-way through a write keeps the previous spans.

May import: the readers (and the vocabulary). ``watch.live`` turns the snapshots into diffs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracetui.core.errors import TracetuiError
from tracetui.core.model import ReadIssue, Span
from tracetui.core.readers import SNIFF_BYTES, read_replay, sniff_format
from tracetui.core.readers.jsondoc import bom_issue
from tracetui.core.readers.native import BOM, LineParser, read_header

__all__ = ["ReplaySnapshot", "TailReader", "trace_id_of"]


_CHUNK = 1 << 20


@dataclass(slots=True)
class ReplaySnapshot:
    """What a replay file holds at one poll.

    Attributes:
        state: ``waiting`` (no file, or empty), ``following`` (read, may grow), ``complete`` (replaced by
            a compacted file: the writer closed it).
        header: The run's header (may change in place while the run goes).
        spans: The run's spans in file order (shared with the reader: do not mutate them).
        issues: Lines skipped or doubted, with their line numbers.
        torn: True when a last line without its newline is held back.
        replaced: True when this poll found the file replaced or truncated and read it from the start.
        changed: False when nothing changed since the previous poll.
        format: The reader's name.
    """

    state: str
    header: dict[str, Any] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)
    torn: bool = False
    replaced: bool = False
    changed: bool = True
    format: str = "tracetui"


class TailReader:
    """Re-read a replay file as it grows (see the module docstring).

    Args:
        path: The replay file (need not exist yet).
        format: Reader name; default sniffed from the content once it has some.
        trace_id: Run to follow in a file holding several (default: the first run).

    ``poll()`` never raises for a file that is missing, empty, torn or damaged:
    damage becomes ``ReadIssue`` entries with line numbers. Not thread-safe:
    one thread polls.
    """

    def __init__(self, path: str | os.PathLike[str], *, format: str | None = None, trace_id: str | None = None) -> None:
        self.path = os.fspath(path)
        self.format = format
        self.trace_id = trace_id
        self._saw_padded = False
        self._reset()

    def _reset(self) -> None:
        self._ident: tuple[int, int] | None = None
        self._offset = 0
        self._partial = bytearray()
        self._parser: LineParser | None = None
        self._header_line: bytes | None = None  # the first header's bytes as last read (spare room included)
        self._stamp: tuple[int, int] | None = None  # (size, mtime_ns), other formats
        self._other: ReplaySnapshot | None = None
        self._format: str | None = self.format
        self._header_at = 0  # where the first header line starts (3 after a byte-order mark)
        self._complete = False

    @property
    def offset(self) -> int:
        """Bytes of the file consumed so far (complete lines; the torn last line is not counted)."""
        return self._offset - len(self._partial)

    def poll(self) -> ReplaySnapshot:
        """Read whatever is new; see ``ReplaySnapshot``.

        Raises:
            OSError: the file exists but cannot be read (permissions).
        """
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            had = self._ident is not None
            self._reset()
            return ReplaySnapshot("waiting", replaced=had, changed=had)
        with fh:
            st = os.fstat(fh.fileno())
            ident = (st.st_dev, st.st_ino)
            replaced = False
            if self._ident is not None and (ident != self._ident or st.st_size < self._offset):
                self._reset()
                replaced = True
            self._ident = ident
            if st.st_size == 0:
                return ReplaySnapshot("waiting", replaced=replaced, changed=replaced or self._parser is not None)
            if self._format is None:
                head = fh.read(SNIFF_BYTES)
                fh.seek(0)
                if head.isspace():
                    return ReplaySnapshot("waiting", replaced=replaced)
                self._format = sniff_format(head)
                if self._format is None and b"\n" not in head and len(head) < SNIFF_BYTES:
                    self._ident = None  # a first line still being written: sniff again later
                    return ReplaySnapshot("waiting", replaced=replaced, changed=False)
            if self._format != "tracetui":
                return self._poll_other(st, replaced)
            return self._poll_native(fh, st, replaced)

    # -- tracetui/1: incremental ------------------------------------------------------

    def _poll_native(self, fh: Any, st: os.stat_result, replaced: bool) -> ReplaySnapshot:
        changed = replaced
        if self._parser is None:
            self._parser = LineParser(self.path)
            changed = True
        parser = self._parser
        if self._header_line is not None:  # rewritten in place by the writer when the run ends?
            now = os.pread(fh.fileno(), len(self._header_line), self._header_at)
            if now != self._header_line:
                changed = True
                self._header_line = now
                self._reparse_header(now)
        if st.st_size > self._offset:
            fh.seek(self._offset)
            data = fh.read(st.st_size - self._offset)
            self._offset += len(data)
            if data:
                changed = True
                if self._offset == len(data) and data.startswith(BOM):
                    parser.out.issues.append(bom_issue(self.path, 1))
                    self._partial += data[len(BOM):]
                    self._header_at = len(BOM)
                else:
                    self._partial += data
                self._feed()
        run = self._run()
        if self._header_line is not None and self._header_line.endswith(b" "):
            self._saw_padded = True  # our writer, streaming: its close compacts the header
        elif replaced and self._saw_padded and self._header_line is not None and not self._partial:
            self._complete = True  # replaced by the compacted file: the run ended
        state = "complete" if self._complete else "following"
        return ReplaySnapshot(state, dict(run.header) if run is not None else {},
                              list(run.spans) if run is not None else [],
                              list(parser.out.issues) + (list(run.issues) if run is not None else []),
                              torn=bool(self._partial), replaced=replaced, changed=changed, format="tracetui")

    def _feed(self) -> None:
        """Parse the complete lines of the buffer; keep the torn rest."""
        assert self._parser is not None
        buf = self._partial
        first = self._parser.lineno == 0 and not self._parser.out.runs[0].header
        with memoryview(buf) as view:
            pos = self._parser.lines(buf, view, len(buf), final=False)
        if first and self._header_line is None and self._parser.out.runs[0].header:
            end = buf.find(b"\n")
            if 0 <= end < pos:
                self._header_line = bytes(buf[:end])
        del buf[:pos]

    def _reparse_header(self, line: bytes) -> None:
        assert self._parser is not None
        text = line.rstrip(b"\r\n ")
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            return  # caught mid-rewrite: the next poll sees the whole line
        if isinstance(obj, dict) and "schema" in obj:
            runs = self._parser.out.runs
            read_header(obj, runs[0], runs[:1], self.path, 1, [])

    def _run(self) -> Any:
        assert self._parser is not None
        runs = [r for r in self._parser.out.runs if r.spans or r.header]
        if not runs:
            return None
        if self.trace_id is not None:
            want = self.trace_id.lower()
            for r in runs:
                names = {r.trace_id, r.header.get("run_id") if r.header else None}
                if any(isinstance(n, str) and n.lower() == want for n in names):
                    return r
        return runs[0]

    # -- other formats: read whole again --------------------------------------------------

    def _poll_other(self, st: os.stat_result, replaced: bool) -> ReplaySnapshot:
        stamp = (st.st_size, st.st_mtime_ns)
        if stamp == self._stamp and self._other is not None and not replaced:
            snap = self._other
            return ReplaySnapshot(snap.state, snap.header, snap.spans, snap.issues, False, False, False, snap.format)
        self._stamp = stamp
        try:
            trace = read_replay(self.path, format=self._format, trace_id=self.trace_id)
        except (TracetuiError, ValueError, OSError) as exc:
            # Half-written JSON document: keep what was read last, say why.
            prev = self._other
            issue = ReadIssue(self.path, getattr(exc, "line", None), "", f"not readable yet ({exc}); keeping the last read", "warning")
            if prev is None:
                return ReplaySnapshot("waiting", issues=[issue], replaced=replaced, format=self._format or "")
            return ReplaySnapshot(prev.state, prev.header, prev.spans, [*prev.issues, issue], True, replaced, False, prev.format)
        self._other = ReplaySnapshot("following", trace.header, trace.spans, trace.issues, False, replaced, True, trace.format)
        return self._other


def trace_id_of(header: dict[str, Any]) -> str | None:
    """The run id a tracetui/1 header names (``trace_id``, else ``run_id``), or None."""
    v = header.get("trace_id") or header.get("run_id")
    return None if v is None else str(v)
