"""Reader and writer for tracetui's own format, ``tracetui/1`` (docs/format.md).

JSONL: one header object (``"schema": "tracetui/1"``), then one span per line.
A torn last line (no trailing newline, not parseable: the file is still being
written) is held back with a warning, never an error; reading the file again
once the line is complete loads it, without a warning.

Damage read anyway (each reported with its line, see ``jsondoc``): a UTF-8
byte-order mark at the start of the file or of a line, CRLF line ends (read as
LF, silently), bare ``NaN``/``Infinity`` (kept as strings), integers beyond 64
bits (kept exact), duplicate keys (last value kept), timestamps written as
strings, floats or exponent form (read as the exact integer written).

Several runs in one file: a header line after spans or after another header
(``cat a.jsonl b.jsonl``) starts a new run, reported with a warning; the run
is selected by its ``run_id`` / ``trace_id`` (``FILE#RUN``), made unique with a
``-2``, ``-3``... suffix when two runs share one, or ``run-N`` when its header
has neither.
"""

from __future__ import annotations

import json
import operator
import os
import stat
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.model import SPAN_KINDS, ReadIssue, Span, SpanKind, Status, Trace
from tracetui.core.readers.ambiguous import flag_line, note_argument_strings
from tracetui.core.readers.base import ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM, bom_issue, exact_int, load_json, recheck
from tracetui.core.readers.limits import BadLines, over_budget, read_budget
from tracetui.core.tempfiles import make_temp_file

SCHEMA = "tracetui/1"
"""The schema id this module reads and writes."""

_STATUSES = {s.value: s for s in Status}
_KINDS = {k.value: k for k in SpanKind}
_COMMON = frozenset(
    {"type", "span_id", "parent_id", "seq", "kind", "name", "start_ns", "end_ns",
     "status", "error_type", "attributes", "trace_id"}
)


class NativeReader:
    """Reads tracetui/1 JSONL."""

    name = "tracetui"

    def sniff(self, head: bytes) -> bool:
        # Any tracetui/N header: a later schema is read as tracetui/1 with a warning (docs/format.md).
        first = head.removeprefix(BOM).lstrip()[:4096].split(b"\n", 1)[0]
        return first.startswith(b"{") and b'"schema"' in first and b'"tracetui/' in first

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file held in memory (the ``Reader`` protocol)."""
        parser = LineParser(path)
        if data.startswith(BOM):  # a UTF-8 byte-order mark some editors write
            parser.out.issues.append(bom_issue(path, 1))
            data = data[len(BOM):]
        # orjson parses memoryview slices: no copy of the file into lines (0.7 s per 400 MB).
        with memoryview(data) as view:
            parser.lines(data, view, len(data), final=True)
        return parser.finish()

    @gc_paused
    def read_file(self, path: str, fh: BinaryIO, head: bytes,
                  index: Callable[..., Any] | None = None,
                  progress: Callable[[ReaderOutput, int], None] | None = None,
                  known: dict[int, Span] | None = None) -> ReaderOutput:
        """Parse a file as it is read, chunk by chunk; same result as ``read``.

        Args:
            path: Used only in issues and errors.
            fh: The file, open in binary mode, positioned right after ``head``.
            head: The bytes already read from the start of the file.
            index: Index mode (``native_index``): ``index(span, offset, length)`` of each clean line's
                span is kept in its place.
            progress: Called with the output so far and the bytes of the file parsed, after each
                buffer of lines (``native_index`` streams the spans read to the process waiting for
                them; the TUI shows how far the read is). An exception it raises ends the read.
            known: Index mode: spans of clean lines parsed already, by the line's file offset
                (``core.early`` read them first); such a line is not parsed again.

        Raises:
            ReadError: nothing could be loaded.
            OSError: reading failed.

        Why: reading a 400 MB file whole costs 0.35 s of fresh pages and a
        copy, and the parse then fetches every line from memory again; a
        256 KiB buffer is reused while hot in cache (0.2-0.3 s less a file).
        """
        parser = LineParser(path, index, known)
        if head.startswith(BOM):
            parser.out.issues.append(bom_issue(path, 1))
            head = head[len(BOM):]
            parser.base = len(BOM)
        buf = bytearray(max(_CHUNK, 2 * len(head)))
        buf[:len(head)] = head
        have = len(head)  # bytes at the start of buf not parsed yet (a partial line)
        budget, regular = read_budget(fh)  # a pipe or /dev/zero never ends: stop past its allowance
        total = len(head)
        view = memoryview(buf)
        try:
            while True:
                if have == len(buf):  # one line fills the buffer: grow it
                    view.release()
                    buf = buf + bytes(len(buf))
                    view = memoryview(buf)
                n = fh.readinto(view[have:])
                if not n:
                    break
                total += n
                if total > budget:
                    raise over_budget(path, budget, regular)
                stop = have + n
                pos = parser.lines(buf, view, stop, final=False)
                if progress is not None:
                    progress(parser.out, parser.base + pos)
                have = stop - pos
                parser.base += pos
                if have:
                    buf[:have] = buf[pos:stop]  # a copy first: the two ranges may overlap
            if have:
                parser.lines(buf, view, have, final=True)
        finally:
            view.release()
        return parser.finish()



_CHUNK = 256 * 1024
"""Read buffer of ``read_file``: fits in a core's L2 cache; grows for longer lines."""


class LineParser:
    """The line loop of both ``NativeReader`` entry points, and what it has found so far."""

    __slots__ = ("bad", "base", "ids", "in_order", "index", "known", "last_seq", "lineno", "odd_times", "out", "path",
                 "run")

    def __init__(self, path: str, index: Callable[..., Any] | None = None, known: dict[int, Span] | None = None) -> None:
        self.path = path
        self.known = known if index is not None and known else None
        # Index mode (readers.native_index): each span of a clean line (the writer's own bytes, read
        # by span_fast) goes through ``index(span, offset, length)`` (the line's bytes in the file),
        # whose result is kept instead; ``base`` is the file offset of the buffer's first byte.
        self.index = index
        self.base = 0
        self.out = ReaderOutput()
        self.run = RunSpans(trace_id=None)
        self.out.runs.append(self.run)
        # What finish_spans checks, done here while each span is in cache (a later
        # pass over 100k cold spans costs ~0.2 s): ids unique, seq not decreasing,
        # every parent earlier. Any doubt (or a careful-path line) leaves it to finish_spans.
        self.ids: dict[str, str] = {}  # span id -> the id object itself, to share it
        self.in_order = True
        self.last_seq = 0
        self.lineno = 0
        self.odd_times: list[tuple[int, str, Any]] = []  # (line, field, value) of timestamps not written as ints
        self.bad = BadLines(path, "tracetui/1")  # 2 million unreadable lines end the read, not 2 million issues

    def lines(self, data: bytes | bytearray, view: memoryview, size: int, *, final: bool) -> int:
        """Parse the lines of ``data[:size]``; return where the unparsed rest starts.

        With ``final`` the rest is the file's last line, without a newline, and
        is parsed too (or held back with a warning when it does not parse).
        """
        path, issues, run = self.path, self.out.issues, self.run
        spans, ids = run.spans, self.ids
        in_order, last_seq, lineno = self.in_order, self.last_seq, self.lineno
        loads, dumps, find, startswith = orjson.loads, orjson.dumps, data.find, data.startswith
        index, base, known = self.index, self.base, self.known
        pos = 0
        try:
            while pos < size:
                end = find(b"\n", pos, size)
                last = end < 0
                if last:
                    if not final:
                        break
                    end = size
                lineno += 1
                start, pos = pos, end + 1
                if end == start:
                    continue
                span = known.get(base + start) if known is not None else None
                fresh = span is None or span._len != end - start  # type: ignore[attr-defined]
                if fresh:  # else parsed already (a clean line read by the index path, core.early)
                    clean = False
                    before = len(issues)
                    try:
                        obj = loads(view[start:end])
                    except orjson.JSONDecodeError as exc:
                        raw = bytes(view[start:end])
                        if raw.isspace():
                            continue
                        found: list[ReadIssue] = []
                        try:  # BOM (files joined with cat), NaN, numbers beyond a double: kept and reported
                            obj = load_json(path, raw, found, line=lineno)
                        except ReadError:
                            if last:
                                issues.append(ReadIssue(path, lineno, "", "last line is incomplete (file still being written?); held back", "warning"))
                            else:
                                issues.append(ReadIssue(path, lineno, "", f"not valid JSON ({exc}); line skipped"))
                                self.bad.add("not valid JSON", lineno - self.bad.bad, lineno)
                            continue
                        issues.extend(found)
                    else:
                        # The writer's lines are orjson's own serialisation of what they parse to:
                        # proven free of dropped duplicate keys and rounded big integers by one
                        # dumps and a compare (+25% of the parse). Other lines: jsondoc.recheck.
                        try:
                            d = dumps(obj)
                        except TypeError:  # nested deeper than orjson writes (255): recheck decides
                            obj = recheck(path, data[start:end], obj, issues, line=lineno)
                        else:
                            if len(d) != end - start or not startswith(d, start):
                                obj = _recheck(path, data, start, end, obj, d, lineno, issues)
                            else:
                                clean = True
                    if type(obj) is not dict:
                        issues.append(ReadIssue(path, lineno, "", f"expected a JSON object, found {type(obj).__name__}; line skipped"))
                        self.bad.add("not a JSON object", lineno - self.bad.bad, lineno)
                        continue
                    if "schema" in obj and "span_id" not in obj:
                        if run.header or spans:  # files joined with cat: a second run starts here
                            run.in_order = in_order
                            run = RunSpans(trace_id=None)
                            self.out.runs.append(run)
                            spans, ids, in_order, last_seq = run.spans, {}, True, 0
                        read_header(obj, run, self.out.runs, path, lineno, issues)
                        continue
                    if len(issues) > before and any(i.where.startswith("$.tool.arguments") for i in issues[before:]):
                        flag_line(obj, bytes(view[start:end]).removeprefix(BOM).decode("utf-8", "replace"))
                    span = span_fast(obj, lineno)
                    if span is None:
                        in_order = False
                        clean = False  # the careful path's span is kept whole
                        span = _span_from_obj(obj, path, lineno, issues, self.odd_times)
                        if span is None:
                            self.bad.add("not a span", lineno - self.bad.bad, lineno)
                            continue
                    if span.kind is _TOOL or span.kind is _LLM:
                        if note_argument_strings(span, path, issues):
                            clean = False
                if in_order:  # (the careful path above has set it False)
                    sid, parent, seq = span.span_id, span.parent_id, span.seq
                    same = ids.get(parent) if parent is not None else None  # before sid: not its own parent
                    if seq < last_seq or sid in ids or (parent is not None and same is None):
                        in_order = False
                    else:
                        ids[sid] = sid
                        last_seq = seq
                        if same is not None:
                            # The parent's own id object: later lookups by parent id (align's
                            # tree) match by identity, without reading a second, cold string.
                            span.parent_id = same
                if not fresh:
                    spans.append(span)
                    continue
                if index is not None and clean:
                    spans.append(index(span, base + start, end - start))  # type: ignore[arg-type]
                    continue
                spans.append(span)
        finally:
            self.run, self.ids = run, ids
            self.in_order, self.last_seq, self.lineno = in_order, last_seq, lineno
        return min(pos, size)

    def finish(self) -> ReaderOutput:
        """The output, once every line is parsed.

        Raises:
            ReadError: no header and no span at all.
        """
        run, out, path = self.run, self.out, self.path
        run.in_order = self.in_order
        self.ids = {}
        first = out.runs[0]
        if not any(r.header or r.spans for r in out.runs):
            raise ReadError(path, "no tracetui/1 header and no span lines")
        if not first.header and first.spans:
            out.issues.append(ReadIssue(path, 1, "schema", "no header line; spans read without run metadata", "warning"))
        if self.odd_times:
            line, field, value = self.odd_times[0]
            out.issues.append(ReadIssue(
                path, line, field,
                f"{len(self.odd_times)} timestamp(s) written as strings or floats, not integers (first: {value!r}); "
                "strings are read exactly; a bare number in float or exponent form keeps at most 17 significant "
                "digits (the digits a JSON parser's double holds): write nanoseconds as integers or strings", "warning"))
        return out


def _recheck(path: str, data: bytes | bytearray, start: int, end: int, obj: Any, d: bytes, lineno: int,
             issues: list[ReadIssue]) -> Any:
    """``obj``, or the line parsed again when orjson may have dropped a duplicate key or rounded a big integer.

    A CRLF line end is the one difference allowed for free (orjson skips the CR).
    """
    if data[end - 1] == 13 and len(d) == end - 1 - start and data.startswith(d, start):
        return obj
    return recheck(path, data[start:end], obj, issues, line=lineno, dumped=d)


def read_header(obj: dict[str, Any], run: RunSpans, runs: list[RunSpans], path: str, lineno: int,
            issues: list[ReadIssue]) -> None:
    """Make ``obj`` the header of ``run``, the last of ``runs``; a run after the first is reported."""
    if obj.get("schema") != SCHEMA:
        issues.append(ReadIssue(path, lineno, "schema", f"schema {obj.get('schema')!r} is not {SCHEMA!r}; read as {SCHEMA}", "warning"))
    run.header = obj
    tid = _str_or_none(obj.get("trace_id")) or _str_or_none(obj.get("run_id"))
    if len(runs) == 1:
        run.trace_id = tid
        return
    taken = {r.trace_id for r in runs[:-1]}
    base = tid or f"run-{len(runs)}"
    k, new = 1, base
    while new in taken:
        k += 1
        new = f"{base}-{k}"
    run.trace_id = new
    if tid == new and isinstance(obj.get("trial"), int) and isinstance(obj.get("trials"), int) and obj["trials"] > 1:
        return  # one trial of `tracetui replay --trials K`: several runs on purpose (docs/harness.md)
    named = f"run {tid!r}" if tid == new else (f"a run whose id {tid!r} is taken; read as {new!r}" if tid else f"a run without run_id or trace_id; read as {new!r}")
    issues.append(ReadIssue(path, lineno, "schema", f"another header line: the file holds several runs (files joined with cat?); "
                            f"the lines from here on are {named} (select it with FILE#{new})", "warning"))


_TOOL, _LLM = SpanKind.TOOL, SpanKind.LLM
_REQUIRED = operator.itemgetter("span_id", "parent_id", "seq", "kind", "name", "start_ns", "end_ns", "status", "error_type")
"""The fields ``span_to_obj`` always writes: one C-level call instead of nine ``.get``."""
_ALLOWED = {k: _COMMON | {k} for k in _KINDS}
"""Per kind, the keys a fast-path line may have (others go to attributes: careful path)."""


def span_fast(obj: dict[str, Any], lineno: int) -> Span | None:
    """The span of a line as ``span_to_obj`` writes it, or None to take the careful path.

    Every line it accepts reads as ``_span_from_obj`` would read it, without
    issues; anything else (a field missing, of another type, an unknown key)
    goes to the careful path, which reports. Cheaper than a ``.get`` per field
    and a set difference for the keys (12k instructions a span against 18k).
    """
    try:
        span_id, parent, seq, kind_s, name, start, end, status_s, error_type = _REQUIRED(obj)
        kind = _KINDS[kind_s]  # subscripts, not .get: no method call (0.1 us each)
        status = _STATUSES[status_s]
    except (KeyError, TypeError):  # a field missing, an unknown or unhashable kind or status
        return None
    if len(obj) == 10 and kind_s in obj:  # the nine above and the kind's section
        data = obj[kind_s]
        attrs: Any = {}
        trace_id = None
    elif obj.keys() <= _ALLOWED[kind_s]:
        data = obj.get(kind_s)
        attrs = obj.get("attributes", {})
        trace_id = obj.get("trace_id")
    else:
        return None
    if (
        type(span_id) is not str or not span_id or type(seq) is not int or type(name) is not str
        or (start is not None and type(start) is not int) or (end is not None and type(end) is not int)
        or (data is not None and type(data) is not dict) or type(attrs) is not dict
        or (parent is not None and type(parent) is not str) or (error_type is not None and type(error_type) is not str)
        or (trace_id is not None and type(trace_id) is not str)
    ):
        return None
    return Span(span_id, parent or None, seq, kind, name, start, end, status, error_type,
                {} if data is None else data, attrs, trace_id, lineno)


def _str_or_none(v: Any) -> str | None:
    return None if v is None else str(v)


def _span_from_obj(obj: dict[str, Any], path: str, lineno: int, issues: list[ReadIssue],
                   odd_times: list[tuple[int, str, Any]] | None = None) -> Span | None:
    """The span of a line, reporting everything odd (the careful path).

    Args:
        odd_times: Where timestamps not written as integers are noted, to be
            reported once per file; None: report each one here.
    """
    span_id = obj.get("span_id")
    if span_id is None or span_id == "":
        issues.append(ReadIssue(path, lineno, "span_id", "missing span_id; line skipped"))
        return None
    kind_s = obj.get("kind")
    kind = _KINDS.get(kind_s) if isinstance(kind_s, str) else None
    if kind is None:
        issues.append(ReadIssue(path, lineno, "kind", f"unknown kind {kind_s!r} (expected one of {', '.join(sorted(SPAN_KINDS))}); read as 'other'", "warning"))
        kind = SpanKind.OTHER
    seq = obj.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        if seq is not None:
            issues.append(ReadIssue(path, lineno, "seq", f"seq {seq!r} is not an integer; order taken from start_ns", "warning"))
        seq = -1
    status_s = obj.get("status", "unset")
    status = _STATUSES.get(status_s) if isinstance(status_s, str) else None
    if status is None:
        issues.append(ReadIssue(path, lineno, "status", f"unknown status {status_s!r}; read as 'unset'", "warning"))
        status = Status.UNSET
    start = _ns(obj.get("start_ns"), "start_ns", path, lineno, issues, odd_times)
    end = _ns(obj.get("end_ns"), "end_ns", path, lineno, issues, odd_times)
    data = obj.get(kind.value)
    if data is None:
        data = {}
    elif not isinstance(data, dict):
        issues.append(ReadIssue(path, lineno, kind.value, f"the {kind.value!r} section is not an object; ignored", "warning"))
        data = {}
    attrs = obj.get("attributes")
    if not isinstance(attrs, dict):
        attrs = {}
    extra = {k: v for k, v in obj.items() if k not in _COMMON and k != kind.value}
    if extra:
        attrs = {**attrs, **extra}
    parent = obj.get("parent_id")
    name = obj.get("name")
    return Span(
        span_id=str(span_id),
        parent_id=None if parent in (None, "") else str(parent),
        seq=seq,
        kind=kind,
        name=str(name) if name is not None else kind.value,
        start_ns=start,
        end_ns=end,
        status=status,
        error_type=_str_or_none(obj.get("error_type")),
        data=data,
        attributes=attrs,
        trace_id=_str_or_none(obj.get("trace_id")),
        line=lineno,
    )


_TIME_END = 1 << 64
"""Times are unsigned 64-bit nanoseconds (as OTLP's); a larger integer is no time."""


def _ns(v: Any, field: str, path: str, lineno: int, issues: list[ReadIssue],
        odd_times: list[tuple[int, str, Any]] | None = None) -> int | None:
    """Integer ns from an int, or a string / float / exponent form read exactly (``jsondoc.exact_int``)."""
    if v is None or (type(v) is int and 0 <= v < _TIME_END):
        return v
    n = v if type(v) is int else exact_int(v) if type(v) in (str, float) else None
    if n is None or n < 0 or n >= _TIME_END:  # beyond 64 bits: no time, and no float holds the span's duration
        shown = repr(v) if len(repr(v)) <= 60 else repr(v)[:59] + "…"
        issues.append(ReadIssue(path, lineno, field, f"{field} {shown} is not integer nanoseconds; ignored", "warning"))
        return None
    if odd_times is None:
        issues.append(ReadIssue(path, lineno, field, f"{field} {v!r} is not an integer; read as {n}", "warning"))
    else:
        odd_times.append((lineno, field, v))
    return n


def span_to_obj(span: Span) -> dict[str, Any]:
    """The tracetui/1 line object of a span (inverse of the reader)."""
    obj: dict[str, Any] = {
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "seq": span.seq,
        "kind": span.kind.value,
        "name": span.name,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "status": span.status.value,
        "error_type": span.error_type,
    }
    if span.trace_id is not None:
        obj["trace_id"] = span.trace_id
    obj[span.kind.value] = dict(span.data)
    if span.attributes:
        obj["attributes"] = dict(span.attributes)
    return obj


def dumps_trace(header: dict[str, Any], spans: Iterable[Span]) -> bytes:
    """Serialise a header and spans as tracetui/1 JSONL bytes (trailing newline)."""
    head = {"schema": SCHEMA, **{k: v for k, v in header.items() if k != "schema"}}
    parts = [dumps_line(head)]
    parts.extend(dumps_line(span_to_obj(s)) for s in spans)
    return b"\n".join(parts) + b"\n"


def dumps_line(obj: dict[str, Any]) -> bytes:
    """One line: orjson, or the standard library for what orjson cannot write (integers beyond
    64 bits, lone surrogates, nesting deeper than 255), ASCII-escaped so the line is valid UTF-8."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def write_trace(path: str, trace: Trace | tuple[dict[str, Any], Iterable[Span]], *, overwrite: bool = False) -> None:
    """Write a trace as tracetui/1, atomically (temp file in the same folder, then rename).

    Args:
        path: Destination file.
        trace: A ``Trace`` or a ``(header, spans)`` pair.
        overwrite: Replace an existing file; otherwise an existing file is an error.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is False.
    """
    header, spans = (trace.header, trace.spans) if isinstance(trace, Trace) else trace
    payload = dumps_trace(header, spans)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = make_temp_file(folder)  # named by this process: a crash's leftover is swept next time
    try:
        # mkstemp creates 0600: give the file the mode a plain open() would (0666 minus the umask),
        # or keep the mode of the file it replaces.
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode) if overwrite else None
        except FileNotFoundError:
            mode = None
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if path appeared meanwhile: never clobber
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
