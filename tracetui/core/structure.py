"""The structure scan of a tracetui/1 file: each span line's byte range, ``span_id``, ``parent_id`` and
``seq``, without parsing the lines (``core.early`` walks the alignment over it).

One regex match per line on the fixed head the writer puts first (``native.span_to_obj``'s key
order: ``{"span_id":…,"parent_id":…,"seq":N,``), the ``\\n`` search in C, one reused buffer read
into with ``preadv``; ~0.35 s of CPU per 100k lines (416 MB). Anything off that layout gives up
(``_GiveUp``; ``scan_structure`` returns None). With a child process (``start_stream``), the
child scans the replay and the end of the original, the caller the start of the original, and
``_join`` checks the two parts as one scan checks the whole (docs/performance.md).
"""

from __future__ import annotations

import os
import re
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import orjson

from tracetui.core.lazyspan import PayloadFile
from tracetui.core.readers.base import RunSpans
from tracetui.core.readers.native import _header

__all__ = ["PREFETCH_SPLIT", "SPLIT", "Structure", "scan_pair_tail", "scan_structure", "start_stream"]

_HEAD = re.compile(rb'\{"span_id":"([^"\\]+)","parent_id":(?:null|"([^"\\]+)"),"seq":(0|[1-9][0-9]{0,17}),', re.M)
"""The head every span line of the writer starts with (``native.span_to_obj``'s key order).
Escaped ids do not match (rare; the early path then gives up)."""


class _GiveUp(Exception):
    """The early path cannot prove its answer for this pair; the caller waits for the whole diff."""


@dataclass(slots=True)
class Structure:
    """One file's structure scan (``scan_structure``): picklable, so a child process can send it.

    Attributes:
        header: The run header (the first line).
        trace_id: The run's id (``trace_id`` or ``run_id`` of the header).
        offsets, lengths: Each span line's byte range (bytes; ``\\n`` excluded).
        linenos: Each span line's 1-based line number.
        parents: Each span's parent index, -1 for a root (always an earlier index).
    """

    header: dict[str, Any]
    trace_id: str | None
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    linenos: array = field(default_factory=lambda: array("q"))
    parents: list[int] = field(default_factory=list)


def scan_structure(src: PayloadFile, tick: Callable[[], object] | None = None) -> Structure | None:
    """The structure of a tracetui/1 file of one run in the writer's layout; None when it is not
    (module docstring: what makes it give up) or cannot be read. Never raises.

    ~0.45 s per 100k span lines (2 cores shared): the ``\\n`` search and the head's regex match
    are C; the rest is ~3 µs of bookkeeping a line. Reads through one reused 1 MiB buffer (not
    ``mmap``: a mapping's pages would count in the process's resident memory). ``tick`` is called
    every 8,192 lines (an exception it raises ends the scan: None)."""
    try:
        return _scan(src, tick)
    except (_GiveUp, Exception):  # noqa: BLE001 - optional: the caller reads the whole file
        return None


_SCAN_CHUNK = 1 << 20


def _scan(src: PayloadFile, tick: Callable[[], object] | None = None) -> Structure:
    return _scan_head(src, tick)[0]


def _scan_head(src: PayloadFile, tick: Callable[[], object] | None = None,
               upto: int | None = None) -> tuple[Structure, dict[bytes, int], int, int]:
    """The scan of the lines that start before byte ``upto`` (a line start; None: the whole file):
    the structure, the span ids by index, the last seq and the number of lines read (``_join``)."""
    size = os.fstat(src.fd).st_size
    if size == 0 or src.read(size - 1, 1) != b"\n":
        raise _GiveUp("no newline at the end")
    f: Structure | None = None
    index: dict[bytes, int] = {}  # span id as written -> index
    setdefault, get = index.setdefault, index.get
    match = _HEAD.match
    lineno, last_seq, n = 0, 0, 0
    for buf, base, stop in _whole_lines(src, 0, size if upto is None else min(upto, size)):
        find = buf.find
        pos = 0
        while pos < stop:
            end = find(b"\n", pos, stop)
            lineno += 1
            if end == pos:
                pos += 1
                continue
            if f is None:  # the header
                obj = orjson.loads(bytes(buf[pos:end]))
                if type(obj) is not dict or "schema" not in obj or "span_id" in obj:
                    raise _GiveUp("no header")
                run = RunSpans(trace_id=None)
                _header(obj, run, [run], src.path, 1, [])
                f = Structure(obj, run.trace_id)
                append_off, append_len, append_line, append_parent = (
                    f.offsets.append, f.lengths.append, f.linenos.append, f.parents.append)
                pos = end + 1
                continue
            m = match(buf, pos, end)
            if m is None:
                raise _GiveUp(f"line {lineno}: not the writer's span head")
            sid, parent, seq_b = m.group(1, 2, 3)
            seq = int(seq_b)
            if seq < last_seq or setdefault(sid, n) != n:
                raise _GiveUp(f"line {lineno}: seq going down or a duplicate id")
            if parent is None:
                append_parent(-1)
            else:
                p = get(parent, n)
                if p == n:
                    raise _GiveUp(f"line {lineno}: parent not earlier")
                append_parent(p)
            last_seq = seq
            append_off(base + pos)
            append_len(end - pos)
            append_line(lineno)
            n += 1
            pos = end + 1
            if tick is not None and not n & 8191:
                tick()
    if f is None:
        raise _GiveUp("no header")
    return f, index, last_seq, lineno


_preadv = getattr(os, "preadv", None)


def _whole_lines(src: PayloadFile, start: int, end: int) -> Iterator[tuple[bytearray, int, int]]:
    """The bytes ``start..end`` of a file (``start`` and ``end`` line starts, or ``end`` its size) as
    successive ``(buf, base, n)``: ``buf[:n]`` is whole lines, each ending with ``\n``, at file offset
    ``base``. One reused buffer (a bytearray read into with ``preadv``: no 1 MiB object made and
    freed a read, measured ~15% of a cold scan); grown for a line longer than it. The buffer changes
    at the next step: keep copies, not views."""
    buf = bytearray(_SCAN_CHUNK)
    have, base = 0, start
    while base + have < end:
        if have == len(buf):
            buf.extend(bytes(len(buf)))
        want = min(len(buf), end - base) - have
        if _preadv is not None:
            with memoryview(buf) as mv:
                got = _preadv(src.fd, [mv[have:have + want]], base + have)
        else:  # no preadv (some platforms): read, then copy in
            more = src.read(base + have, want)
            got = len(more)
            buf[have:have + got] = more
        if got <= 0:
            raise _GiveUp("the file shrank while read")
        have += got
        cut = buf.rfind(b"\n", 0, have) + 1
        if cut == 0:
            continue  # a line longer than the buffer so far
        yield buf, base, cut
        rest = have - cut
        buf[:rest] = buf[cut:have]  # the start of a line, continued by the next read
        base, have = base + cut, rest
    if have:
        raise _GiveUp("no newline at the end")


SPLIT = 0.8
"""``start_stream``: the share of the original's bytes scanned in this process; the child scans the
rest after the replay (``_scan_tail``), so both are done at about the same time (this process also
starts the TUI meanwhile)."""

PREFETCH_SPLIT = 0.3
"""``SPLIT`` when the child is started ahead (``readers.start_pair``, before the TUI is imported): it
has scanned the replay by the time the caller starts, so it takes most of the original too."""


def _cut(src: PayloadFile, share: float) -> int:
    """The start of the first line at or after ``share`` of the file's bytes (the file's size if none):
    where the original's scan is split between this process and the child. Both compute it alike."""
    size = os.fstat(src.fd).st_size
    at = int(size * share)
    while at < size:
        chunk = src.read(at, 1 << 16)
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return at + nl + 1
        at += len(chunk)
    return size


@dataclass(slots=True)
class _Tail:
    """The child's scan of the original from ``start`` (a line start) to its end: each span line's
    byte range, line number counted from ``start`` (1: the line at ``start``), ``span_id``,
    ``parent_id`` (None: a root) and ``seq``, as written; ``_join`` checks them as ``_scan`` would."""

    start: int
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    linenos: array = field(default_factory=lambda: array("q"))
    ids: list[bytes] = field(default_factory=list)
    parents: list[bytes | None] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)


def _scan_tail(src: PayloadFile, start: int) -> _Tail | None:
    """The heads of the span lines from byte ``start`` to the end (``_Tail``); None when a line is
    not the writer's span head (or on any error). Runs in the child (``start_stream``)."""
    try:
        t = _Tail(start)
        match = _HEAD.match
        add_off, add_len, add_line = t.offsets.append, t.lengths.append, t.linenos.append
        add_id, add_parent, add_seq = t.ids.append, t.parents.append, t.seqs.append
        lineno = 0
        for buf, base, stop in _whole_lines(src, start, os.fstat(src.fd).st_size):
            find = buf.find
            pos = 0
            while pos < stop:
                end = find(b"\n", pos, stop)
                lineno += 1
                if end > pos:
                    m = match(buf, pos, end)
                    if m is None:
                        return None
                    sid, parent, seq_b = m.group(1, 2, 3)
                    add_id(sid)
                    add_parent(parent)
                    add_seq(int(seq_b))
                    add_off(base + pos)
                    add_len(end - pos)
                    add_line(lineno)
                pos = end + 1
        return t
    except Exception:  # noqa: BLE001 - optional: the parent gives the early look up
        return None


def _join(head: tuple[Structure, dict[bytes, int], int, int], tail: _Tail) -> Structure:
    """The whole file's structure: ``head`` (``_scan_head`` up to ``tail.start``) then ``tail``, checked
    as one ``_scan`` checks every line (seq not going down, no duplicate id, parents earlier)."""
    f, index, last_seq, lines = head
    n = len(f.parents)
    parents = f.parents
    setdefault, get, add_parent = index.setdefault, index.get, parents.append
    for sid, parent, seq in zip(tail.ids, tail.parents, tail.seqs):
        if seq < last_seq or setdefault(sid, n) != n:
            raise _GiveUp("seq going down or a duplicate id")
        if parent is None:
            add_parent(-1)
        else:
            p = get(parent, n)
            if p == n:
                raise _GiveUp("parent not earlier")
            add_parent(p)
        last_seq = seq
        n += 1
    f.offsets.extend(tail.offsets)
    f.lengths.extend(tail.lengths)
    f.linenos.extend(array("q", [x + lines for x in tail.linenos]))
    return f


def scan_pair_tail(original: PayloadFile, replay: PayloadFile, cut: int) -> tuple[Structure | None, int, _Tail | None]:
    """The prelude of ``start_stream``'s child: the replay's structure scan, then the original's from
    byte ``cut`` (a line start) on (``_scan_tail``); ``cut`` is returned with them."""
    fr = scan_structure(replay)
    return fr, cut, (_scan_tail(original, cut) if fr is not None else None)


def start_stream(original: PayloadFile, replay: PayloadFile, *, ahead: bool = False) -> Any:
    """Start the child process that parses ``replay`` (``native_index.fork_parse``), its prelude the
    replay's structure scan and the end of the original's (``scan_pair_tail``), for
    ``early_diff(stream=)``; None when no process can be started. The original is cut at ``SPLIT``
    of its bytes, or at ``PREFETCH_SPLIT`` when the child starts ``ahead`` of the caller
    (``readers.start_pair``: before the TUI is imported); the cut is kept as ``early_cut``."""
    from tracetui.core.readers import native_index as ni

    if not ni.can_fork():
        return None
    cut = _cut(original, PREFETCH_SPLIT if ahead else SPLIT)
    child = ni.fork_parse(replay, prelude=lambda src: scan_pair_tail(original, src, cut))
    if child is not None:
        child.early_cut = cut
    return child
