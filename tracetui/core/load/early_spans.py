"""Where ``core.early``'s walk gets its spans: parsed here on first use, or sent by the replay's child.

The walk asks for a span by index and parses it on first use, exactly as the index loader parses a
line (``exact_record``: orjson, the one-``dumps`` check, ``span_fast``, the loader's record). Two
sources take work off this process, which also draws the TUI:

- **The replay** (``Streamed``): the child process parsing the replay for the whole read
  (``native_index.ForkedParse``) sends its spans as it goes; a span the child has not sent yet is
  waited for when the child is about to send it, else parsed here.
- **The original** (``Fed``, ``Feed``): during the early look the same child also parses the
  original's span lines in blocks of ``FEED_BLOCK``, keeping pace with its parse of the replay.
  Each block is parsed by one side: the first to claim it (``FeedState.claim``). The walk claims
  a block it needs that the child has not (and, while it waits for a replay span, the next ones
  ahead: ``Fed.work_ahead``); the child skips what the walk claimed. So the split follows the
  two processes' speeds: when the walk is ahead, it parses the original itself; when the child
  is, the walk only walks. Measured on the 100k pair (``benchmarks/bench_tui.py``), parsing the
  original's first 27.6k lines was 0.88 s of the walk's 1.29 s of CPU in this process, which
  is the one the first divergence waits for.

A span from the child is used only where the structure scan says it is (same byte offset and line
number): a file the child reads otherwise (a blank line, say) stops the feed and this process
parses what is left. A line the child finds off the writer's bytes stops the feed too; this process
then reaches that line itself and gives up as it would alone.
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import Any, Callable, Sized

import orjson

from tracetui.core.diff.align import span_key
from tracetui.core.readers.lazyspan import LazySpan, PayloadFile, make_lazy
from tracetui.core.model import Span
from tracetui.core.readers.native import span_fast
from tracetui.core.load.native_index import recorder
from tracetui.core.load.structure import Structure, GiveUp, whole_lines

__all__ = ["FEED_BLOCK", "Feed", "FeedState", "exact_record"]

FEED_BLOCK = 64
"""Span lines per block of the original (the unit one side claims and parses). Small enough that waiting
for a block the child has started costs ~2 ms."""

FEED_LEAD = 2 * FEED_BLOCK
"""How far (span lines) the child's parse of the original may run ahead of its parse of the replay."""

_AHEAD_BLOCKS = 16  # work_ahead parses no further than this many blocks past the walk's front

NEAR = 256
"""A replay span the child will reach within this many lines is waited for, not parsed here as well."""


def exact_record(raw: bytes, lineno: int, off: int, record: Callable[..., tuple[Any, ...]]) -> tuple[Any, ...]:
    """The index loader's record of one span line (``native_index.recorder``; layout: ``lazyspan.make_lazy``),
    parsed as the loader's fast path parses it.

    Raises:
        GiveUp: the line is not the writer's own bytes (``orjson.dumps`` of what it parses to differs:
            a key written twice, other spacing), or the loader's careful path would read it.
        orjson.JSONDecodeError: not JSON.
    """
    obj = orjson.loads(raw)
    if orjson.dumps(obj) != raw:
        raise GiveUp(f"line {lineno}: not the writer's own bytes")
    s = span_fast(obj, lineno)
    if s is None:
        raise GiveUp(f"line {lineno}: the careful path would read it")
    return record(s, off, len(raw))


# -- shared between this process and the child -----------------------------------------------

_CELLS = struct.Struct("qq")
_ON, _REPLAY = 0, 8
_CHILD, _APP = 1, 2  # a block's owner in the map


class FeedState:
    """Memory shared with the child (an anonymous shared mapping made before the fork): whether the early
    look still wants the original's spans (1; this process sets 0 when its walk ends), how many replay
    spans the child has parsed, and a byte per block of the original: who parses it (0: not decided,
    ``_CHILD``, ``_APP``).

    ``claim`` decides a block's owner: read its byte, write yours if it is 0, read it again. Two sides
    claiming at once may both own it (each reads back its own write before the other's lands): the
    block is then parsed twice, never lost, and this process keeps the spans it parsed. This process
    waits for a block only after reading the child's mark, which the child never overwrites.

    Args:
        size: The original's size (bytes): the map covers a block per ``FEED_BLOCK * 40`` bytes
            (a span line is at least ~40 bytes); blocks past it are parsed by this process.
    """

    def __init__(self, size: int) -> None:
        self._blocks = size // (FEED_BLOCK * 40) + 1
        self._mem = mmap.mmap(-1, _CELLS.size + self._blocks)  # MAP_SHARED | MAP_ANONYMOUS: pages on first use
        _CELLS.pack_into(self._mem, 0, 1, 0)

    def on(self) -> bool:
        return int(struct.unpack_from("q", self._mem, _ON)[0]) == 1

    def stop(self) -> None:
        """The early look has ended: the child stops parsing the original."""
        struct.pack_into("q", self._mem, _ON, 0)

    def replay_parsed(self) -> int:
        return int(struct.unpack_from("q", self._mem, _REPLAY)[0])

    def set_replay_parsed(self, n: int) -> None:
        struct.pack_into("q", self._mem, _REPLAY, n)

    def claim(self, block: int, who: int) -> bool:
        """Whether ``who`` (``_CHILD`` or ``_APP``) parses ``block`` (class docstring: the race)."""
        if block >= self._blocks:
            return who == _APP
        mem, at = self._mem, _CELLS.size + block
        v = mem[at]
        if v == 0:
            mem[at] = who
            v = mem[at]
        return v == who


# -- the child's side -------------------------------------------------------------------------


class Feed:
    """In the child (``native_index.ForkedParse(feed=)``): called after each step of the replay's parse
    with the number of replay spans parsed so far, it parses the original's blocks up to that many
    span lines (plus ``FEED_LEAD``) and sends each as ``("orig", block, records)``; ``("orig_end",)``
    when it stops for good (the early look ended, half the original's bytes fed, a line off the
    writer's layout, the end of the file, any error)."""

    def __init__(self, original: PayloadFile, state: FeedState) -> None:
        self.src, self.state = original, state
        self.done = False
        self._lines: Any = None  # the generator of the original's span lines
        self._next = 0  # index of the next span line the generator gives
        self._record: Any = None
        self._stop_at = 0

    def __call__(self, send: Callable[[Any], None], replay_parsed: int) -> None:
        if self.done:
            return
        state = self.state
        state.set_replay_parsed(replay_parsed)
        try:
            if self._lines is None:
                self._lines = _span_lines(self.src)
                self._record = recorder()
                self._stop_at = os.fstat(self.src.fd).st_size // 2
            target = replay_parsed + FEED_LEAD
            while state.on() and self._next < target:
                if not self._block(send):
                    break
            else:
                if state.on():
                    return
        except Exception:  # noqa: BLE001 - optional: this process parses what it needs itself
            pass
        self.done = True
        send(("orig_end",))

    def _block(self, send: Callable[[Any], None]) -> bool:
        """The next block: skipped (claimed by this process) or parsed and sent. False: stop here."""
        b = self._next // FEED_BLOCK
        if not self.state.claim(b, _CHILD):
            return self._skip(FEED_BLOCK)
        lines, record, recs = self._lines, self._record, []
        for _ in range(FEED_BLOCK):
            got = next(lines, None)
            if got is None:
                break
            lineno, off, raw = got
            if off >= self._stop_at:
                return False
            recs.append(exact_record(raw, lineno, off, record))
        self._next += FEED_BLOCK
        if recs:
            send(("orig", b, recs))
        return len(recs) == FEED_BLOCK

    def _skip(self, n: int) -> bool:
        lines = self._lines
        for _ in range(n):
            if next(lines, None) is None:
                return False
        self._next += n
        return True


def _span_lines(src: PayloadFile) -> Any:
    """The original's span lines in file order: ``(lineno, offset, bytes)``, blank lines and the first
    line (the header) left out, as the structure scan counts them."""
    lineno, header = 0, True
    for buf, base, stop in whole_lines(src, 0, os.fstat(src.fd).st_size):
        find, pos = buf.find, 0
        while pos < stop:
            end = find(b"\n", pos, stop)
            lineno += 1
            if end > pos:
                if header:
                    header = False
                else:
                    yield lineno, base + pos, bytes(buf[pos:end])
            pos = end + 1


# -- this process's side ----------------------------------------------------------------------


class Spans(dict):  # type: ignore[type-arg]
    """A file's spans by index (``int -> Span``), each parsed on first use (``__missing__``) exactly as
    the index loader parses it. A dict, so that a span asked for again costs a C-level lookup (the
    walk asks ~3 times a row); ``len`` is the number of spans parsed."""

    def __init__(self, st: Structure, src: PayloadFile, limit: int) -> None:
        super().__init__()
        self.st, self.src, self.limit = st, src, limit
        self.asked: Sized = self  # what counts against ``limit``: the spans the walk asked for (Fed: its keys)
        self._record = recorder()
        self._block, self._block_at = b"", 0

    def __missing__(self, i: int) -> Span:
        return self._parse(i)

    _BLOCK = 256 * 1024

    def _line(self, off: int, ln: int) -> bytes:
        """The line's bytes, from a 256 KiB block read at once: the walk asks for lines mostly in file
        order, and a read per line (~28k at 100k spans, each letting go of the GIL) cost 0.1-0.3 s."""
        rel = off - self._block_at
        if rel < 0 or rel + ln > len(self._block):
            self._block, self._block_at, rel = self.src.read(off, max(self._BLOCK, ln)), off, 0
        return self._block[rel:rel + ln]

    def _parse(self, i: int) -> Span:
        if type(i) is not int or not 0 <= i < len(self.st.parents):
            raise IndexError(i)
        if len(self.asked) >= self.limit:
            raise GiveUp("too many spans read")
        st = self.st
        off, ln = st.offsets[i], st.lengths[i]
        rec = exact_record(self._line(off, ln), st.linenos[i], off, self._record)
        span = self[i] = make_lazy(self.src, [rec])[0]
        return span


class Fed(Spans):
    """The original's spans by index: the blocks (``FEED_BLOCK``) the child claimed as it sends them (``Feed``),
    the rest parsed here. A block the child has started is waited for; one it has not is taken over.

    It holds more spans than the walk asked for (the rest of each block taken whole, what ``work_ahead``
    parsed): the share limit counts the walk's keys (``asked``, set by ``core.early``), so the feed never
    makes the look give up sooner than it would alone (a held-out tester found 2,000-span pairs whose
    divergence at 20-45% was lost when the held spans counted)."""

    def __init__(self, st: Structure, src: PayloadFile, limit: int, stream: Any, state: FeedState) -> None:
        super().__init__(st, src, limit)
        self.stream, self.state = stream, state
        self.feeding = True
        self._mine: set[int] = set()  # blocks this process claimed
        self._front = 0  # every span before it is parsed: where the walk is (it asks for far ones too)

    def __missing__(self, i: int) -> Span:
        if self.feeding and type(i) is int and i >= 0:
            b = i // FEED_BLOCK
            if b not in self._mine:
                stream = self.stream
                recs = stream.original_block(b, wait=False)
                if recs is None:
                    if self.state.claim(b, _APP):
                        self._mine.add(b)
                    else:
                        recs = stream.original_block(b, wait=True)  # the child has it in hand
                        if recs is None:  # it never came (the feed ended): the rest of it is parsed here
                            self._mine.add(b)
                if recs is not None and self._adopt(b, recs):
                    return dict.__getitem__(self, i)  # type: ignore[no-any-return]
        return self._parse(i)

    def work_ahead(self) -> bool:
        """Parse the next block past the walk that the child has not claimed (claimed here, so the
        child skips it): what this process does while it waits for the replay's child, which then has
        less of the original to parse. False when there is none near (or a line there would end the
        early look: the walk reaches it itself, if it needs it)."""
        if not self.feeding:
            return False
        front = self._front
        while front in self:
            front += 1
        self._front = front
        start = front // FEED_BLOCK
        state, mine = self.state, self._mine
        for b in range(start, start + _AHEAD_BLOCKS):
            if b in mine or b * FEED_BLOCK >= len(self.st.parents):
                continue
            if state.claim(b, _APP):
                mine.add(b)
                try:
                    for i in range(b * FEED_BLOCK, min((b + 1) * FEED_BLOCK, len(self.st.parents))):
                        if i not in self:
                            self._parse(i)
                except Exception:  # noqa: BLE001 - GiveUp, a bad line: left to the walk
                    self.feeding = False
                    return False
                return True
        return False

    def _adopt(self, b: int, recs: list[Any]) -> bool:
        """Keep the child's block if its spans sit where the scan put them (else stop the feed: False)."""
        st, first = self.st, b * FEED_BLOCK
        spans = make_lazy(self.src, list(recs))
        offsets, linenos = st.offsets, st.linenos
        if first + len(spans) > len(offsets) or any(
                s._off != offsets[first + k] or s.line != linenos[first + k] for k, s in enumerate(spans)):
            self.feeding = False
            return False
        if len(self.asked) >= self.limit:
            raise GiveUp("too many spans read")
        for k, s in enumerate(spans):
            self.setdefault(first + k, s)  # a span parsed here in a race stays
        return True


class Streamed(Spans):
    """The replay's spans by index: as the child process parsing it sends them (``ForkedParse``),
    or parsed here when the walk needs one the child is not about to send (a root's children are
    spread over the whole file; and the walk may start ahead of the child)."""

    def __init__(self, st: Structure, src: PayloadFile, limit: int, stream: Any, state: FeedState | None = None) -> None:
        super().__init__(st, src, limit)
        self.stream, self.state = stream, state
        self._got: list[Span] = []  # the stream's list of the run's spans (it grows in place)
        self.ahead: Callable[[], bool] | None = None  # work to do while waiting (Fed.work_ahead)

    def _wait(self, i: int) -> list[Span]:
        """The stream's spans once the ``i``-th has come (or the stream ended), working ahead meanwhile."""
        stream, ahead = self.stream, self.ahead
        while ahead is not None:
            got = self._got = stream.spans(0, i + 1, wait=False)
            if len(got) > i or not ahead():
                break
        got = self._got = stream.spans(0, i + 1, wait=True)
        return got

    def __missing__(self, i: int) -> Span:
        got = self._got
        if len(got) <= i:  # take what arrived (the pipe is read only then: ~4 us a call)
            if type(i) is not int or i < 0:
                return self._parse(i)
            got = self._got = self.stream.spans(0, i + 1, wait=False)
            if len(got) <= i:
                state = self.state
                if state is not None and state.on() and i < state.replay_parsed() + NEAR:
                    got = self._wait(i)  # about to be sent
                if len(got) <= i:
                    return self._parse(i)
        if len(self.asked) >= self.limit:
            raise GiveUp("too many spans read")
        span: Span = got[i]
        if type(span) is not LazySpan:  # the careful path read it (a duplicate key...): as _parse, give up
            raise GiveUp(f"line {span.line}: read by the careful path")
        if span.line != self.st.linenos[i]:  # a line skipped by the parse (damaged): indices moved
            raise GiveUp("span indices differ from the scan")
        self[i] = span
        return span


class Keys(dict):  # type: ignore[type-arg]
    """``span_key`` of a side's spans by index (``int -> key``), parsed on first use (``__missing__``)."""

    def __init__(self, spans: Spans) -> None:
        super().__init__()
        self.spans = spans

    def __missing__(self, i: int) -> Any:
        k = self[i] = span_key(self.spans[i])
        return k
