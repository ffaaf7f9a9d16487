"""The structure scan of a tracetui/1 file: each span line's byte range, ``span_id``, ``parent_id`` and
``seq``, without parsing the lines (``core.early`` walks the alignment over it).

One regex match per line on the fixed head the writer puts first (``native.span_to_obj``'s key
order: ``{"span_id":…,"parent_id":…,"seq":N,``), the ``\\n`` search in C, one reused buffer read
into with ``preadv``; ~0.35 s of CPU per 100k lines (416 MB). Anything off that layout gives up
(``GiveUp``; ``scan_structure`` returns None). With a child process (``early.start_stream``), the
child scans the replay and the end of the original, the caller the start of the original, and
``join_scans`` checks the two parts as one scan checks the whole (docs/performance.md).
"""

from __future__ import annotations

import os
import re
import struct
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import orjson

from tracetui.core.readers.lazyspan import PayloadFile
from tracetui.core.readers.base import RunSpans
from tracetui.core.readers.native import read_header

__all__ = ["APP_SHARE", "GiveUp", "Meet", "Structure", "Tail", "join_scans", "scan_head", "scan_or_give_up", "scan_pair_tail",
           "scan_structure", "whole_lines"]

_HEAD = re.compile(rb'\{"span_id":"([^"\\]+)","parent_id":(?:null|"([^"\\]+)"),"seq":(0|[1-9][0-9]{0,17}),', re.M)
"""The head every span line of the writer starts with (``native.span_to_obj``'s key order).
Escaped ids do not match (rare; the early path then gives up)."""


class GiveUp(Exception):
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
        return scan_or_give_up(src, tick)
    except (GiveUp, Exception):  # noqa: BLE001 - optional: the caller reads the whole file
        return None


_SCAN_CHUNK = 1 << 20


def scan_or_give_up(src: PayloadFile, tick: Callable[[], object] | None = None) -> Structure:
    return scan_head(src, tick)[0]


def scan_head(src: PayloadFile, tick: Callable[[], object] | None = None,
               meet: Meet | None = None) -> tuple[Structure, dict[bytes, int], int, int, int]:
    """The scan from the start: of the whole file, or with ``meet`` up to where the child's scan starts
    (``Meet``). The structure, the span ids by index, the last seq, the number of lines read (for
    ``join_scans``) and the byte where it stopped (the file's size: it read to the end)."""
    size = os.fstat(src.fd).st_size
    if size == 0 or src.read(size - 1, 1) != b"\n":
        raise GiveUp("no newline at the end")
    f: Structure | None = None
    index: dict[bytes, int] = {}  # span id as written -> index
    setdefault, get = index.setdefault, index.get
    match = _HEAD.match
    lineno, last_seq, n = 0, 0, 0
    reached = [size]
    for buf, base, stop in whole_lines(src, 0, size, meet, reached):
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
                    raise GiveUp("no header")
                run = RunSpans(trace_id=None)
                read_header(obj, run, [run], src.path, 1, [])
                f = Structure(obj, run.trace_id)
                append_off, append_len, append_line, append_parent = (
                    f.offsets.append, f.lengths.append, f.linenos.append, f.parents.append)
                pos = end + 1
                continue
            m = match(buf, pos, end)
            if m is None:
                raise GiveUp(f"line {lineno}: not the writer's span head")
            sid, parent, seq_b = m.group(1, 2, 3)
            seq = int(seq_b)
            if seq < last_seq or setdefault(sid, n) != n:
                raise GiveUp(f"line {lineno}: seq going down or a duplicate id")
            if parent is None:
                append_parent(-1)
            else:
                p = get(parent, n)
                if p == n:
                    raise GiveUp(f"line {lineno}: parent not earlier")
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
        raise GiveUp("no header")
    return f, index, last_seq, lineno, reached[0]


_preadv = getattr(os, "preadv", None)


def whole_lines(src: PayloadFile, start: int, end: int, meet: Meet | None = None,
                 reached: list[int] | None = None) -> Iterator[tuple[bytearray, int, int]]:
    """The bytes ``start..end`` of a file (``start`` and ``end`` line starts, or ``end`` its size) as
    successive ``(buf, base, n)``: ``buf[:n]`` is whole lines, each ending with ``\\n``, at file offset
    ``base``. One reused buffer (a bytearray read into with ``preadv``: no 1 MiB object made and
    freed a read, measured ~15% of a cold scan); grown for a line longer than it. The buffer changes
    at the next step: keep copies, not views. With ``meet``: says how far it got before each read,
    and ends early at the cut the child chose if that is still ahead (``reached[0]``: where it ended)."""
    buf = bytearray(_SCAN_CHUNK)
    have, base = 0, start
    while base < end:
        if meet is not None:
            meet.reached(base)
            cut = meet.cut()
            if cut and base <= cut < end:  # a line start not read yet (none lies inside buf[:have])
                end = cut
                if reached is not None:
                    reached[0] = cut
                if base >= end:
                    break
        if have == len(buf):
            buf.extend(bytes(len(buf)))
        want = min(len(buf), end - base) - have
        if want <= 0:
            break  # the bytes up to end hold no newline: said below
        if _preadv is not None:
            with memoryview(buf) as mv:
                got = _preadv(src.fd, [mv[have:have + want]], base + have)
        else:  # no preadv (some platforms): read, then copy in
            more = src.read(base + have, want)
            got = len(more)
            buf[have:have + got] = more
        if got <= 0:
            raise GiveUp("the file shrank while read")
        have += got
        cut = buf.rfind(b"\n", 0, have) + 1
        if cut == 0:
            continue  # a line longer than the buffer so far
        yield buf, base, cut
        rest = have - cut
        buf[:rest] = buf[cut:have]  # the start of a line, continued by the next read
        base, have = base + cut, rest
    if base < end:
        raise GiveUp("no newline at the end")


class Meet:
    """Where the original's structure scan is split between this process and the child (``start_stream``).

    Two 64-bit integers in memory shared with the child (an anonymous shared mapping made before the
    fork): how far this process's scan from the start has got (bytes), and the cut the child chose
    (0: none yet). The child, once it has scanned the replay, looks at how far this process got
    and cuts what is left (``APP_SHARE`` of it here, at a line start); this process stops there if
    it has not passed it, else scans to the end (the child's part is then not used). So the split
    follows the two processes' real speeds: the child started before the TUI was imported takes
    more, a huge file is shared out about evenly. ``cut=`` fixes the cut beforehand (tests).
    """

    def __init__(self, cut: int = 0) -> None:
        import mmap

        self._mem = mmap.mmap(-1, 16)  # MAP_SHARED | MAP_ANONYMOUS: the child sees the same page
        _CELL.pack_into(self._mem, 8, cut)

    def reached(self, pos: int) -> None:
        _CELL.pack_into(self._mem, 0, pos)

    def position(self) -> int:
        """How far the scan from the start has got (bytes)."""
        return int(_CELL.unpack_from(self._mem, 0)[0])

    def cut(self) -> int:
        """The cut chosen (a line start), 0 while none is."""
        return int(_CELL.unpack_from(self._mem, 8)[0])

    def choose(self, src: PayloadFile) -> int:
        """In the child, once the replay is scanned: fix the cut (kept if fixed beforehand), after
        ``APP_SHARE`` of what this process has not scanned yet, or the file's end when little is left."""
        cut = self.cut()
        if cut:
            return cut
        size = os.fstat(src.fd).st_size
        pos = self.position()
        cut = size if size - pos < _MEET_MIN else _line_start(src, pos + int((size - pos) * APP_SHARE))
        _CELL.pack_into(self._mem, 8, cut)
        return cut


_CELL = struct.Struct("q")
_MEET_MIN = 4 << 20  # bytes: below this left to scan, the child leaves it all to this process

APP_SHARE = 0.55
"""``Meet.choose``: the share of what is left of the original that this process scans. It also joins
the child's part (unpickling its heads and checking them: ~1.5 s per million lines), hence a
little more than half to this side of the cut as measured on 1M lines (head scan 1.37 s/GB here,
tail scan plus its transfer and join 1.78 s/GB)."""


def _line_start(src: PayloadFile, at: int) -> int:
    """The start of the first line at or after byte ``at`` (the file's size if none)."""
    size = os.fstat(src.fd).st_size
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
class Tail:
    """The child's scan of the original from ``start`` (a line start) to its end: each span line's
    byte range, line number counted from ``start`` (1: the line at ``start``), ``span_id``,
    ``parent_id`` (None: a root) and ``seq``, as written; ``join_scans`` checks them as ``scan_or_give_up`` would."""

    start: int
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    linenos: array = field(default_factory=lambda: array("q"))
    ids: list[bytes] = field(default_factory=list)
    parents: list[bytes | None] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)


def _scan_tail(src: PayloadFile, start: int) -> Tail | None:
    """The heads of the span lines from byte ``start`` to the end (``Tail``); None when a line is
    not the writer's span head (or on any error). Runs in the child (``start_stream``)."""
    try:
        t = Tail(start)
        match = _HEAD.match
        add_off, add_len, add_line = t.offsets.append, t.lengths.append, t.linenos.append
        add_id, add_parent, add_seq = t.ids.append, t.parents.append, t.seqs.append
        lineno = 0
        for buf, base, stop in whole_lines(src, start, os.fstat(src.fd).st_size):
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


def join_scans(head: tuple[Structure, dict[bytes, int], int, int, int], tail: Tail) -> Structure:
    """The whole file's structure: ``head`` (``scan_head`` up to ``tail.start``) then ``tail``, checked
    as one ``scan_or_give_up`` checks every line (seq not going down, no duplicate id, parents earlier)."""
    f, index, last_seq, lines = head[:4]
    n = len(f.parents)
    parents = f.parents
    setdefault, get, add_parent = index.setdefault, index.get, parents.append
    for sid, parent, seq in zip(tail.ids, tail.parents, tail.seqs):
        if seq < last_seq or setdefault(sid, n) != n:
            raise GiveUp("seq going down or a duplicate id")
        if parent is None:
            add_parent(-1)
        else:
            p = get(parent, n)
            if p == n:
                raise GiveUp("parent not earlier")
            add_parent(p)
        last_seq = seq
        n += 1
    f.offsets.extend(tail.offsets)
    f.lengths.extend(tail.lengths)
    f.linenos.extend(array("q", [x + lines for x in tail.linenos]))
    return f


def scan_pair_tail(original: PayloadFile, replay: PayloadFile, meet: Meet) -> tuple[Structure | None, int, Tail | None]:
    """The prelude of ``start_stream``'s child: the replay's structure scan, then the original's from
    the cut ``meet`` chooses (``_scan_tail``); that cut is returned with them."""
    fr = scan_structure(replay)
    cut = meet.choose(original)
    return fr, cut, (_scan_tail(original, cut) if fr is not None else None)
