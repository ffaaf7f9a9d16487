"""The first divergence of a pair of big OTLP/JSON files, found before either file is read whole (issue 22).

``core.load.early`` walks the alignment of two tracetui/1 files over a structure scan and spans parsed on
first use. An OTLP/JSON file has no fixed line head to scan, but msgspec decodes a whole file into typed
Structs in a fraction of the read (``readers.otlp_fast``: ~0.5 s for 450 MB): the cost of the read is the
per-span Python work that follows (ids, times, the cheap pass of the attribute mapping, the payload
signature, ~30 µs a span). So, for each file of ``otlp_lazy.LAZY_MIN_BYTES`` or more (one document, one
line or pretty-printed, or Collector JSON Lines):

1. **Decode** the heads of its spans (ids, start) with msgspec, each span's bytes kept for its whole Struct on
   first use, without the exactness checks (``otlp_fast.quick_documents(heads=True)``: the whole read that
   follows makes them and decides);
2. **the structure**, from the Structs' span ids, parent ids, trace ids and start times alone, in the
   order the read ends with (``readers.tree.finish_spans``: ``seq`` from ``(start_ns, file order)``,
   spans starting at the same instant ordered by ``ties.order_ties`` on their spans, parents first);
3. **spans on first use**: span ``i``'s Struct made into the ``LazySpan`` the read makes of it, by the
   reader's own per-span code (``otlp.SpanByStruct.span``), its ``seq`` set as ``finish_spans`` sets it;
4. **the walk** (``early.walk``, the one ``core.early`` runs): each row compared as ``diff_traces``
   compares it, the first divergence event found in execution order, ``context`` rows past it.

It gives up (None: the caller waits for the whole diff) whenever the order or the spans could depend on
more than it computed: a file the decoder refuses, more than one trace id (run), a span whose ids or start
the read would report (or none), a duplicate span id, a parent not in the file, a child starting before
its parent (the read reorders by its skew fix), spans tied at one start beyond ``max_share`` of the file,
a walked span the read reports, a tool span with string arguments (the read may name them from other
spans: ``bare_args``), more than ``max_share`` of either file's spans walked, or any error. A span the
walk never made is checked by the whole read only; if the whole diff then does not begin with the early
rows (``early.agrees``) the TUI lays the rows out again and says so.

With two cores (``OtlpPair.start``, from ``load.start_pair``: before the TUI is imported), each file's
side is made in a forked child (``SideChild``) that sends its structure, then its spans in the order the
walk asks for them as ``OtlpPayloads.export`` records (fields, key fields, signature, the span's byte range in
the file, which this process opened before the fork); this process adopts them over that file
(``OtlpPayloads.adopt``: the payload pass reads the span's bytes here on first read) and walks.
So the TUI's process never holds its GIL for the decode (~0.5 s in one call) nor makes a span. Without
children both sides are made here (``read_whole`` then reads each file through the reader's file entry).

The OTLP reader's code this calls: ``otlp_fast.quick_documents`` (the decode), ``otlp.SpanByStruct``
(``scopes``, ``head``, ``span``: ``_Reading._span`` on ``_Flat.span``'s dict), ``otlp_lazy.OtlpPayloads``
(``export``, ``adopt``), ``ties.order_ties``; the whole read is ``OtlpJsonReader.read`` and
``readers.pick_run``.
"""

from __future__ import annotations

import gc
import mmap
import os
import re
import signal
import stat
import struct
import time
from array import array
from collections import Counter
from typing import Any, Callable

from msgspec import UNSET

from tracetui.core import readers
from tracetui.core.errors import ReadError
from tracetui.core.load.channel import Frames, die_with
from tracetui.core.load.channel import send as send_frame
from tracetui.core.load.early import EARLY_CONTEXT, EARLY_MAX_SHARE, EarlyTraceDiff, walk
from tracetui.core.load.native_index import widen_pipe
from tracetui.core.load.structure import GiveUp, Structure
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.readers.gc_paused import promote_young_objects
from tracetui.core.readers.limits import read_rest
from tracetui.core.readers.lazyspan import PayloadFile
from tracetui.core.readers.otlp import OtlpJsonReader, SpanByStruct, anyvalue, payload_source
from tracetui.core.readers.otlp_fast import quick_documents
from tracetui.core.readers.otlp_lazy import export_span
from tracetui.core.readers.ties import order_ties

__all__ = ["CHILD_AHEAD", "CHILD_BLOCK", "EARLY_MAX_BYTES", "OTLP", "OtlpPair", "OtlpSpans", "SideChild", "StreamedSpans", "early_side",
           "otlp_pair"]

OTLP = OtlpJsonReader.name


class _Source:
    """What ``early.walk`` reads of a side's source: the path."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


class OtlpSpans(dict):  # type: ignore[type-arg]
    """A file's spans by index in ``seq`` order (``int -> LazySpan``), each made on first use from its Struct
    by the reader's own code (``SpanByStruct.span``), checked against the structure (same ids and start).
    ``len`` is the number made; ``asked`` (set by ``early.walk``) counts against ``limit``."""

    def __init__(self, path: str, maker: SpanByStruct, local: array, where: list[Any], order: list[int],
                 heads: list[tuple[str, str | None, int]], limit: int) -> None:
        super().__init__()
        self.src = _Source(path)
        self.maker, self.local, self.where, self.order, self.heads = maker, local, where, order, heads
        self.limit = limit
        self.asked: Any = self
        self.made: dict[int, Span] = {}  # by file index (the tie order needs spans before seq is known)

    def by_file_index(self, i: int) -> Span:
        span = self.made.get(i)
        if span is None:
            line, service, scope, spans = self.where[i]  # (spans: its scope's QuickSpans, at index local[i])
            span = self.maker.span(spans.dict(self.local[i]), line, service, scope)
            if span is None or (span.span_id, span.parent_id, span.start_ns) != self.heads[i]:
                raise GiveUp("a span the read reports, or read otherwise than its head")
            if span.kind is SpanKind.TOOL:
                part = span._part  # type: ignore[attr-defined]
                if type((span.data if part is None else part).get("arguments")) is str:
                    raise GiveUp("a tool's arguments as a string: the read may name them (bare_args)")
            self.made[i] = span
        return span

    def drop(self) -> None:
        """Let go of the Structs and the spans (the walk's result keeps the ones it shows)."""
        self.local, self.where, self.asked = array("q"), [], self
        self.made.clear()
        self.clear()

    def __missing__(self, k: int) -> Span:
        if type(k) is not int or not 0 <= k < len(self.order):
            raise IndexError(k)
        if len(self.asked) >= self.limit:
            raise GiveUp("too many spans read")
        span = self.by_file_index(self.order[k])
        span.seq = k  # as finish_spans numbers them (fresh from the reader, not shared)
        self[k] = span
        return span


def early_side(path: str, data: bytes, max_share: float = EARLY_MAX_SHARE,
               tick: Callable[[], object] | None = None, file: PayloadFile | None = None) -> tuple[Structure, OtlpSpans]:
    """One file's structure and its spans on first use (module docstring, steps 1-3). ``file``: the file ``data``
    was read from (``_read_side``): the spans are then kept as their byte ranges in it, their payloads read from
    it on first use (else each keeps its decoded attributes).

    Raises:
        GiveUp: the file is not one run whose order this can prove (module docstring); ``Doubt``, ``BadValue``
            and other errors of the decoder pass through.
    """
    values, _several = quick_documents(data, anyvalue, heads=True)
    maker = SpanByStruct(path, file)
    structs: list[Any] = []  # every span's head (SpanHead), in file order
    where: list[Any] = []  # (line, service, scope name, its scope's QuickSpans) of each
    local = array("q")  # its index in that QuickSpans
    for line, service, scope, spans in maker.scopes(values):
        got = spans.structs
        structs.extend(got)
        where.extend([(line, service, scope, spans)] * len(got))
        local.extend(range(len(got)))
    del values
    if tick is not None:
        tick()
    n = len(structs)
    if not n:
        raise GiveUp("no spans")
    heads = _heads(structs, maker)
    sids = [h[0] for h in heads]
    starts = [h[2] for h in heads]
    order = sorted(range(n), key=starts.__getitem__)  # stable: file order among equal starts
    limit = max(64, int(n * max_share))
    del structs
    spans_ = OtlpSpans(path, maker, local, where, order, [(h[0], h[1], h[2]) for h in heads], limit)
    if len(set(starts)) != n:
        order = _tied(order, starts, spans_, limit)
        spans_.order = order
    pos = {sids[i]: k for k, i in enumerate(order)}
    if len(pos) != n:
        raise GiveUp("a duplicate span id")
    parents: list[int] = []
    for k, i in enumerate(order):
        p = heads[i][1]
        if p is None:
            parents.append(-1)
            continue
        q = pos.get(p, n)
        if q >= k:
            raise GiveUp("a parent not in the file, or not earlier (the read fixes the order)")
        parents.append(q)
    return Structure(header={}, trace_id=heads[0][3], parents=parents), spans_


def _heads(structs: list[Any], maker: SpanByStruct) -> list[tuple[str, str | None, int, str]]:
    """``(span id, parent id, start ns, trace id)`` of each Struct as the read takes them; one trace id.

    The usual file (ids already 16/32 lowercase hex digits, starts integers or their decimal strings) in a
    few C-level passes, where ``otlp.normalize_id`` would give each id back unchanged and ``int`` is what
    the read's time parse does; any other file span by span through ``SpanByStruct.head``."""
    fast = _fast_heads(structs, maker)
    if fast is not None:
        return fast
    head = maker.head
    out = []
    tid = None
    for sp in structs:
        h = head(sp)
        if h is None:
            raise GiveUp("a span id, parent id, trace id or start the read would report")
        sid, parent, t, start = h
        if t != tid:
            if tid is not None:
                raise GiveUp("more than one trace id (run)")
            tid = t
        out.append((sid, parent, start, t))
    return out


_LOW_HEX = re.compile("[0-9a-f]*").fullmatch
_NO_PARENT = ("", "0" * 16, UNSET)
_U64 = (1 << 64) - 1


def _fast_heads(structs: list[Any], maker: SpanByStruct) -> list[tuple[str, str | None, int, str]] | None:
    n = len(structs)
    tids = {sp.traceId for sp in structs}
    if len(tids) != 1:
        return None
    h = maker.head(structs[0])
    if h is None or h[2] != next(iter(tids)):
        return None
    tid = h[2]
    sids = [sp.spanId for sp in structs]
    if set(map(type, sids)) != {str} or set(map(len, sids)) != {16} or not _LOW_HEX("".join(sids)):
        return None
    parents = [None if p in _NO_PARENT else p for p in (sp.parentSpanId for sp in structs)]
    named = [p for p in parents if p is not None]
    if named and (set(map(type, named)) != {str} or set(map(len, named)) != {16} or not _LOW_HEX("".join(named))):
        return None
    raw = [sp.startTimeUnixNano for sp in structs]
    if not set(map(type, raw)) <= {str, int}:
        return None
    try:
        starts = list(map(int, raw))
    except ValueError:
        return None
    if min(starts) <= 0 or max(starts) > _U64:
        return None
    return list(zip(sids, parents, starts, [tid] * n))


def _tied(order: list[int], starts: list[int], spans: OtlpSpans, limit: int) -> list[int]:
    """``order`` with each group of spans starting at one instant ordered as ``finish_spans`` orders it
    (``ties.order_ties`` on their spans, made by the reader's code)."""
    count = Counter(starts)
    tied = [i for i in order if count[starts[i]] > 1]
    if len(tied) > limit:
        raise GiveUp("too many spans start at the same instant as another")
    made = [spans.by_file_index(i) for i in tied]
    index = {id(s): i for s, i in zip(made, tied)}
    again = iter([index[id(s)] for s in order_ties(made, spans.src.path, [])])
    return [next(again) if count[starts[i]] > 1 else i for i in order]


EARLY_MAX_BYTES = 512 << 20
"""Largest OTLP/JSON file the early look takes (and ``load.pair`` reads in a child, ``read_child``). Each side's
child decodes only the heads of its file's spans (``quick_documents(heads=True)``) and holds the file's bytes:
1.3x a file of big payloads (560 MiB for the 428 MiB replay of the 100k-span pair; 703 MiB when it decoded every
span), 2.1x one of small spans (1.6 GiB for a 780 MiB, 1M-span file; 3.0 GiB when it decoded every span). Two
such children beside the TUI would still pass the 3 GB budget on the 1M pair (and a whole read in a child beside
this process's: 1.56 + 1.84 GiB), so past this size a pair is read whole, in this process only."""


def otlp_pair(original: str, replay: str, original_format: str | None = None,
              replay_format: str | None = None) -> OtlpPair | None:
    """An ``OtlpPair`` when both files are OTLP/JSON (as named, or as ``readers.sniff_format`` finds them)
    of ``OtlpJsonReader.lazy_min_bytes`` or more and ``EARLY_MAX_BYTES`` at most; else None. Never raises."""
    least = OtlpJsonReader.lazy_min_bytes
    for path, fmt in ((original, original_format), (replay, replay_format)):
        if fmt is not None and fmt != OTLP:
            return None
        try:  # a FIFO is never opened here: the open would wait for a writer, or take the one there is from the read
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as fh:
                st = os.fstat(fh.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_size < max(least, 1) or st.st_size > EARLY_MAX_BYTES:
                    return None
                if fmt is None and readers.sniff_format(fh.read(readers.SNIFF_BYTES)) != OTLP:
                    return None
        except OSError:
            return None
    return OtlpPair(original, replay)


class OtlpPair:
    """A pair of big OTLP/JSON files in ``load.read_pair``: the early look (``early_diff``), with each side made in
    a child process when ``start`` forked them, then the whole read of each file (``read_whole``, when the look
    read the file here)."""

    def __init__(self, original: str, replay: str) -> None:
        self.paths = (original, replay)
        self.data: list[bytes | None] = [None, None]
        self.children: list[SideChild] = []

    def start(self, max_share: float = EARLY_MAX_SHARE) -> None:
        """Fork the two children that make each file's early side (``SideChild``) now: ``load.start_pair`` calls
        it before the TUI is imported, so they work meanwhile, and this process (the TUI's) only walks. Without
        them both sides are made here."""
        try:
            for path in self.paths:
                self.children.append(SideChild(path, max_share))
        except OSError:
            self.cancel()

    def cancel(self) -> None:
        """Stop the children, if any (idempotent)."""
        children, self.children = self.children, []
        for child in children:
            child.stop()

    def early_diff(self, _osrc: Any = None, _rsrc: Any = None, *, stream: Any = None, known: Any = None,
                   tick: Callable[[], object] | None = None, context: int = EARLY_CONTEXT,
                   max_share: float = EARLY_MAX_SHARE) -> EarlyTraceDiff | None:
        """The first rows of the pair's diff, up to ``context`` rows past the first divergence (as
        ``early.early_diff``; the first four arguments are its, unused here).

        Returns:
            An ``EarlyTraceDiff`` whose rows and first divergence are those of ``diff_traces`` of the whole
            pair, or None (module docstring: when it gives up; ``tick`` raising ends it too). Never raises.
        """
        was = gc.isenabled()
        gc.disable()  # as the readers: no cycles, and collections over the Structs would dominate
        sides: list[Any] = []
        try:
            got: list[tuple[Structure, Any]] = []
            for which, path in enumerate(self.paths):
                if self.children:
                    child = self.children[which]
                    st = child.message(0, tick)
                    if type(st) is not Structure:
                        return None
                    spans: Any = StreamedSpans(child, st, max(64, int(len(st.parents) * max_share)), tick)
                else:
                    data, file = _read_side(path)
                    self.data[which] = data
                    st, spans = early_side(path, data, max_share, tick, file)
                sides.append(spans)
                got.append((st, spans))
            (fo, so), (fr, sr) = got
            return walk(fo, fr, so, sr, context, tick, fmt=OTLP)
        except (GiveUp, Exception):  # noqa: BLE001 - an early answer is optional; the whole read reports
            return None
        finally:
            self.cancel()
            for s in sides:  # the walk's key maps refer back to them: the Structs go now, not at a collection
                s.drop()
            if was:
                gc.enable()

    def read_whole(self, which: int) -> Trace | None:
        """``readers.read_trace`` of the original (``which`` 0) or ``read_replay`` of the replay (1), no run
        asked for, when the early look read the file here; None when it did not (the caller reads it).

        The bytes the look read are dropped and the file read again through the reader's file entry
        (``OtlpJsonReader.read_file``: spans kept as byte ranges, the bytes not kept): keeping them for the read
        saved ~0.3 s of a page-cache read but held the whole file for as long as any span lived.

        Raises:
            ReadError: as ``read_trace``.
        """
        data, self.data[which] = self.data[which], None
        if data is None:
            return None
        head = data[:readers.SNIFF_BYTES]
        del data
        reader = OtlpJsonReader()
        path = self.paths[which]
        gc_was = gc.isenabled()
        gc.disable()
        try:
            with open(path, "rb") as fh:
                fh.seek(len(head))
                out = reader.read_file(path, fh, head)
        except OSError as exc:
            raise ReadError(path, f"cannot be read: {exc.strerror or exc}") from None
        finally:
            promote_young_objects()
            if gc_was:
                gc.enable()
        return readers.pick_run(reader, out, path, None)  # type: ignore[arg-type]


def _read_side(path: str, file: PayloadFile | None = None) -> tuple[bytes, PayloadFile]:
    """The file's bytes as ``read_trace`` reads them (``limits.read_rest``: its budget), and the ``PayloadFile``
    they were read through (``file``, opened before a fork, or opened here): its spans' payloads are read again
    from that one file, whatever the path names by then.

    Raises:
        OSError: the file cannot be opened or read; ``ReadError``: past its budget."""
    if file is None:
        file = PayloadFile(path)
    with os.fdopen(os.dup(file.fd), "rb") as fh:
        fh.seek(0)
        return read_rest(fh, path, b""), file


# -- the replay's side in a child process ------------------------------------------------------------------

CHILD_BLOCK = 512
"""Spans a message of a child carries."""

CHILD_AHEAD = 8
"""Messages a child may send before this process has taken them: past that it waits, so it makes no more
spans than the walk takes (and leaves the core to it)."""

_TAKEN = struct.Struct("q")


class SideChild:
    """One file's early side made in a forked child process (``early_side``): its structure (the first message,
    or None when it gives up), then its spans as ``OtlpPayloads.export`` records in the order the walk asks for
    them (``_walk_order``), ``CHILD_BLOCK`` a message, up to ``max_share`` of them, or until ``stop``. A thread
    of this process drains the pipe as the child writes.

    Why (docs/performance.md): making a span by the reader's code is ~30 µs, and on the 100k-span pair the walk
    needs ~27k a side; the decode holds the GIL for ~0.5 s in one call (the TUI's first frame waited for it).
    In two children the sides are made on both cores while this process imports the TUI and draws; it only
    unpickles the records and walks.
    """

    def __init__(self, path: str, max_share: float) -> None:
        self.path = path
        self.file = PayloadFile(path)  # the child reads through it; this process reads the spans' payloads from it
        # Shared with the child: byte 0 is 1 once this process wants no more; at 8, the messages it took.
        self._stop = mmap.mmap(-1, 16)
        r, w = os.pipe()
        widen_pipe(w)  # as the index loader's child: a 64 KiB pipe stalls the child while this process is busy
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                die_with(parent)  # else, its walk's reader gone, it would wait for it forever
                os.close(r)
                _child(path, w, max_share, self._stop, self.file)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self.pid = pid
        self._frames = Frames(r, "tracetui-otlp-early")

    def message(self, i: int, tick: Callable[[], object] | None = None) -> Any:
        """The child's ``i``-th message, waited for; None when the child ended before sending it. ``tick`` is
        called while waiting (an exception it raises ends the wait)."""
        got = self._frames.message(i, tick)
        _TAKEN.pack_into(self._stop, 8, i + 1)
        return got

    def stop(self) -> None:
        """End the child (now: what it has not sent is not wanted) and reap it."""
        self._stop[0] = 1
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def _child(path: str, w: int, max_share: float, stop: mmap.mmap, file: PayloadFile) -> None:
    gc.disable()
    sent = 0

    def send(obj: Any) -> None:
        nonlocal sent
        while sent - _TAKEN.unpack_from(stop, 8)[0] >= CHILD_AHEAD and not stop[0]:
            time.sleep(0.002)
        sent += 1
        send_frame(w, obj)

    try:
        st, spans = early_side(path, _read_side(path, file)[0], max_share, file=file)
    except Exception:  # noqa: BLE001 - the parent gives up
        send(None)
        return
    send(st)
    block: list[Any] = []
    try:
        for k in _walk_order(st.parents):
            s = spans[k]
            block.append(export_span(s))
            if len(block) == CHILD_BLOCK:
                if stop[0]:
                    return
                send(("spans", block))
                block = []
    except Exception:  # noqa: BLE001 - GiveUp (the share limit; a span that cannot be made): the parent
        pass  # gives up if it needs what was not sent
    if block:
        send(("spans", block))
    send(("end",))


def _walk_order(parents: list[int]) -> Any:
    """Span indices in the order the alignment walk asks for them, about: the roots, then each span's children
    (the walk takes the keys of a whole children list when it reaches their parent), parents in ``seq``
    order. A root's children spread over the whole file come early so."""
    children: list[list[int]] = [[] for _ in parents]
    roots = []
    for k, p in enumerate(parents):
        (children[p] if p >= 0 else roots).append(k)
    yield from roots
    for kids in children:
        yield from kids


class StreamedSpans(dict):  # type: ignore[type-arg]
    """A side's spans by index (``seq`` order), as ``SideChild`` sends them (``OtlpPayloads.adopt``: the
    payload pass runs here on first read). A span not sent yet is waited for; one the child will not send
    (past its limit, or it gave up there) ends the early look (``GiveUp``)."""

    def __init__(self, child: SideChild, st: Structure, limit: int, tick: Callable[[], object] | None) -> None:
        super().__init__()
        self.src = _Source(child.path)
        self.child, self.n, self.limit, self.tick = child, len(st.parents), limit, tick
        self.asked: Any = self
        self.payloads = payload_source(child.file)  # spans kept as byte ranges: read from the file on first use
        self._got: dict[int, Span] = {}  # by seq
        self._next = 1  # the next message (0 was the structure)
        self._ended = False

    def __missing__(self, k: int) -> Span:
        if type(k) is not int or not 0 <= k < self.n:
            raise IndexError(k)
        if len(self.asked) >= self.limit:
            raise GiveUp("too many spans read")
        got = self._got
        while k not in got:
            if self._ended:
                raise GiveUp("the child did not make this span")
            m = self.child.message(self._next, self.tick)
            self._next += 1
            if type(m) is not tuple or m[0] != "spans":
                self._ended = True
                continue
            adopt = self.payloads.adopt
            for r in m[1]:
                s = adopt(r)
                got[s.seq] = s
        span = self[k] = got[k]
        return span

    def drop(self) -> None:
        self._got = {}
        self.asked = self
        self.clear()
