"""The first divergence of a big pair, found before either file is read whole.

A 100k-span pair takes seconds to parse (``docs/performance.md``: ~2.5 s of CPU
a file, the floor of an exact parse in Python), but the first divergence of a
failed run usually sits in its first few thousand spans. ``early_diff`` finds it
by reading only what precedes it:

1. **Structure scan** of each file (``core.structure``, ~0.35 s per 100k spans):
   every span line's byte range, ``span_id``, ``parent_id`` and ``seq``, taken from
   the fixed head that the tracetui/1 writer puts first
   (``{"span_id":…,"parent_id":…,"seq":N,``); the children lists follow.
2. **The alignment walk**, ``align.walk_rows``, the generator that ``align``
   itself consumes, over sides whose spans and keys are parsed on first use (the
   same exact per-line parse as the index loader: orjson, the one-``dumps`` check,
   ``span_fast``, span key and payload signature; ``core.early_spans``: with a
   child process, the replay's spans and half of the original's come from it). Each row is compared as
   ``diff_traces`` compares it, and the divergence events are taken in the order
   that defines the first divergence (docs/format.md: input-side divergences where
   a span starts, output-side ones where its subtree ends, a one-sided root that
   wraps paired rows at its end). The walk stops ``context`` rows after the first
   divergence event.

Why the rows found equal those of the whole pair: ``walk_rows`` decides each row
from the sibling lists of the rows before it (keys of whole sibling lists,
children lists complete from the scan), so the same code over the same spans
gives the same first rows. The divergence events before the stop are all known
because every earlier event belongs to a row already walked (a row's end event
comes after its subtree).

It gives up (None: the caller waits for the whole diff) whenever that argument
could fail or the shortcut does not pay (every line it parses, here or in the child, must be
the writer's exact bytes: a line with a key written twice is not): a file that is not one run in the
writer's exact layout (another header, a line of another shape, a line the index
loader would read by its careful path, a duplicate id, a parent not earlier, a
seq going down, no newline at the end, a parent cycle), more than ``max_share``
of either file parsed, or any error. Lines never parsed are not checked here:
a damaged one that changes the tree (say a late line whose ``parent_id``, written
a second time after the head, names an early span) is found by the whole read,
which the caller shows in place of this one (``agrees``; ``TraceTuiApp``: rows
laid out again, said). Scanning every line for such a second key tripled the
scan's cost (0.32 -> 0.95 s per 100k lines) and was dropped.

Two big OTLP/JSON files have no such scan; ``core.load.otlp_early`` builds their structure from the
msgspec-decoded file and runs the same walk (``walk``) over spans the OTLP reader makes.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

from tracetui.core.diff import Divergence, TraceDiff, row_divergence
from tracetui.core.diff.align import AlignedRow, prepared_side, walk_rows
from tracetui.core.diff.compare import OUTPUT, field_side
from tracetui.core.load import native_index as ni
from tracetui.core.load.early_spans import Feed, FeedState, Fed, Keys, Spans, Streamed
from tracetui.core.load.structure import (  # re-exported: the scan was part of this module
    GiveUp,
    Meet,
    Structure,
    Tail,
    join_scans,
    scan_head,
    scan_or_give_up,
    scan_pair_tail,
    scan_structure,
)
from tracetui.core.model import Span, Trace
from tracetui.core.readers.lazyspan import PayloadFile

__all__ = ["EARLY_CONTEXT", "EARLY_MAX_SHARE", "EarlyTraceDiff", "Structure", "agrees", "early_diff", "walk",
           "scan_pair_tail", "scan_structure", "start_stream"]

EARLY_MAX_SHARE = 0.5
"""Give up once this share of either file's spans has been parsed: the whole diff is then near."""

EARLY_CONTEXT = 120
"""Rows walked after the first divergence event, so the screen shows what follows it."""

@dataclass(slots=True)
class EarlyTraceDiff(TraceDiff):
    """The first rows of a pair's diff, read before the rest (``early_diff``).

    ``rows`` are the merged tree's first rows, exactly as ``diff_traces`` of the whole pair
    lays them out; ``row_divergence`` and ``divergent_rows`` cover them (a divergence other
    than the first has ``order`` -1: where it sits in execution order is not known yet);
    ``divergences`` holds only the first divergence (later ones are not known yet). ``original.spans`` and
    ``replay.spans`` hold only the spans these rows show (``LazySpan``s), in row order.

    Attributes:
        spans_read: Span lines parsed, (original, replay).
        spans_total: Span lines in each file, (original, replay).
    """

    spans_read: tuple[int, int] = (0, 0)
    spans_total: tuple[int, int] = (0, 0)

    @property
    def partial(self) -> bool:
        return True

    @property
    def rows_expected(self) -> int:
        return max(len(self.rows), sum(self.spans_total))


def agrees(early: TraceDiff, whole: TraceDiff) -> bool:
    """Whether ``whole`` (the pair read whole) begins with ``early``'s rows (same spans by id, same
    depths) and has the same first divergence (row, type and fields): the early rows can then stay
    on screen, the rest added below them.
    """
    if len(whole.rows) < len(early.rows):
        return False
    eo, er, wo, wr = early.original.spans, early.replay.spans, whole.original.spans, whole.replay.spans

    def ident(spans: Sequence[Span], i: int | None) -> str | None:
        return None if i is None else spans[i].span_id

    for a, b in zip(early.rows, whole.rows):
        if a.depth != b.depth or ident(eo, a.original) != ident(wo, b.original) or ident(er, a.replay) != ident(wr, b.replay):
            return False
    f, g = early.first, whole.first
    if f is None or g is None:
        return f is g
    return (f.row, f.type, f.order) == (g.row, g.type, g.order) and f.fields == g.fields


def early_diff(original: PayloadFile, replay: PayloadFile, *, stream: Any = None, context: int = EARLY_CONTEXT,
               max_share: float = EARLY_MAX_SHARE, known: dict[int, Span] | None = None,
               tick: Callable[[], object] | None = None) -> EarlyTraceDiff | None:
    """The first rows of the pair's diff, up to ``context`` rows past the first divergence.

    Args:
        original, replay: The two files (tracetui/1, opened by ``native_index.indexable``).
        stream: The ``native_index.ForkedParse`` parsing ``replay`` in a child process, started
            by ``start_stream`` (its prelude: the replay's structure scan and the end of the
            original's, ``scan_pair_tail``): the replay's structure and spans are taken from it as
            it sends them (the child scans and parses on the other core). None: both files are
            scanned and parsed here.
        context: Rows to walk after the row of the first divergence event.
        max_share: Give up after reading this share of either file's spans.
        known: Filled with the original's spans parsed here (``LazySpan``s, by line offset), found
            or not: ``native_index.parse_indexed(original, known)`` then does not parse them again.
        tick: Called every few thousand lines or rows; an exception it raises ends the early look
            (None): the caller's way to stop it (the TUI quitting).

    Returns:
        An ``EarlyTraceDiff`` whose rows and first divergence are those of ``diff_traces``
        of the whole pair (module docstring: why), or None when this cannot be shown
        cheaply: no divergence in the share read, a file off the writer's layout, any error.
        Never raises.
    """
    was = gc.isenabled()
    gc.disable()  # as the loader: no cycles here, and collections over the spans read would dominate
    try:
        return _early(original, replay, stream, context, max_share, known, tick)
    except (GiveUp, Exception):  # noqa: BLE001 - an early answer is optional; the whole read reports
        return None
    finally:
        feed = getattr(stream, "early_feed", None)
        if feed is not None:
            feed.state.stop()  # the child goes back to the replay alone
        if was:
            gc.enable()


def _early(osrc: PayloadFile, rsrc: PayloadFile, stream: Any, context: int, max_share: float,
           known: dict[int, Span] | None, tick: Callable[[], object] | None = None) -> EarlyTraceDiff | None:
    if stream is None:
        fo, fr = scan_or_give_up(osrc, tick), scan_structure(rsrc)
    else:
        # The original's scan is shared with the child (core.structure.Meet): this thread scans from
        # the start, the child, once the replay is scanned, from a cut ahead of it to the end.
        head = scan_head(osrc, tick, getattr(stream, "early_meet", None))
        got = stream.prelude()
        if type(got) is not tuple or len(got) != 3:
            return None
        fr, cut, tail = got
        stopped, size = head[4], os.fstat(osrc.fd).st_size
        if stopped == size:
            fo = head[0]  # read to the end here (the cut came too late): the child's part unused
        elif stopped == cut and type(tail) is Tail:
            fo = join_scans(head, tail)
        else:
            return None
    if type(fr) is not Structure:
        return None
    lo, lr = (max(64, int(len(f.parents) * max_share)) for f in (fo, fr))
    feed = getattr(stream, "early_feed", None)
    state = feed.state if feed is not None else None
    so = Fed(fo, osrc, lo, stream, state) if state is not None else Spans(fo, osrc, lo)
    sr = Streamed(fr, rsrc, lr, stream, state) if stream is not None else Spans(fr, rsrc, lr)
    if type(so) is Fed and type(sr) is Streamed:
        sr.ahead = so.work_ahead
    try:
        return walk(fo, fr, so, sr, context, tick)
    finally:
        if known is not None:
            known.update((s._off, s) for s in so.values())  # type: ignore[attr-defined]


def walk(fo: Structure, fr: Structure, so: Spans, sr: Spans, context: int,
          tick: Callable[[], object] | None = None, fmt: str = "tracetui") -> EarlyTraceDiff | None:
    """The walk over two sides (a ``Structure`` and its spans by index, each a mapping that makes a span on
    first use and gives ``GiveUp`` past its limit; ``asked``, ``src.path``); ``fmt`` the traces' format.
    ``core.load.otlp_early`` walks OTLP sides with it."""
    ka, kb = Keys(so), Keys(sr)
    so.asked, sr.asked = ka, kb  # the limit counts what the walk asked for (a key per span), not what is held
    a = prepared_side(so, ka, fo.parents)
    b = prepared_side(sr, kb, fr.parents)
    intern: dict[Hashable, int] = {}
    same: list[bool] = []
    rows: list[AlignedRow] = []
    found: list[tuple[int, Any, Any]] = []  # (row, dtype, fields) of every divergent row walked
    first: tuple[int, int, Any, Any] | None = None  # (row, order, dtype, fields)
    # Rows whose end event is still to come: [row, depth, output-side divergence or None].
    open_rows: list[list[Any]] = []
    wrapper: list[Any] | None = None  # a one-sided root not yet known to wrap paired rows
    held: tuple[int, int, Any, Any] | None = None  # the first event inside ``wrapper``'s subtree
    stop = -1

    def close(entry: list[Any], e: int) -> None:
        """The end event of a row whose subtree ends before row ``e``."""
        nonlocal first, wrapper, held
        n, depth, got = entry
        if entry is wrapper:  # no paired row below it: a one-sided root like another, at its start
            wrapper = None
            first = (n, 2 * n - depth, *got)
        elif got is not None:
            event(n, 2 * e - 1 - depth, got)

    def event(n: int, order: int, got: tuple[Any, Any]) -> None:
        nonlocal first, held
        if first is not None:
            return
        if wrapper is None:
            first = (n, order, *got)
        elif held is None:  # inside an undecided root: first only if the root wraps paired rows
            held = (n, order, *got)

    fork: tuple[int, int] | None = None  # (row, depth) of a first divergence a fork block may still take over
    checked = -1  # the first divergence was checked for a fork block (trace_diff.replay_first)
    for n, row in enumerate(walk_rows(a, b, intern, same)):
        if tick is not None and not n & 1023:
            tick()
        depth = row.depth
        while open_rows and open_rows[-1][1] >= depth:
            close(open_rows.pop(), n)
        o, r = row.original, row.replay
        if first is not None and checked < 0:
            checked = 1
            f_row = rows[first[0]]
            divergent = {k for k, _t, _f in found}
            if f_row.replay is None and first[1] == 2 * first[0] - f_row.depth and all(
                    x.replay is None and x.depth >= f_row.depth and k in divergent
                    for k, x in enumerate(rows[first[0]:n], first[0])):
                fork = (n - 1, f_row.depth)
        if fork is not None and not (n == fork[0] + 1 and depth >= fork[1]):
            fork = None  # the block ended with original-only rows alone: the first divergence stands
        if first is not None and fork is None:
            if stop < 0:
                stop = n + context
            if n >= stop:
                break
        rows.append(row)
        got = None if row.retry else row_divergence(so, sr, o, r, same[n])
        if got is not None:
            found.append((n, *got))
        if fork is not None:
            if got is None or field_side(got[0]) == OUTPUT:
                fork = None  # not a start event: the block ends here
            elif r is not None:
                first = (n, first[1], *got)  # the replay's own step takes the block's first place
                fork = None
            else:
                fork = (n, fork[1])
        entry: list[Any] = [n, depth, None]
        if wrapper is not None and o is not None and r is not None:
            # The undecided root wraps the shared run (diff._is_wrapper): its divergence is an end
            # event (kept in its entry), and the first event held inside it comes first.
            wrapper = None
            if held is not None and first is None:
                first = held
            held = None
        if got is not None and first is None:
            if depth == 0 and (o is None or r is None):
                wrapper = entry  # decided when a paired row appears below it, or when it ends
                entry[2] = got
            elif field_side(got[0]) == OUTPUT:
                entry[2] = got  # at the end of its subtree
            else:
                event(n, 2 * n - depth, got)
        open_rows.append(entry)
    else:
        while open_rows and first is None:
            close(open_rows.pop(), len(rows))
    if first is None:
        return None
    return _result(fo, fr, so, sr, rows, found, first, fmt)


def _result(fo: Structure, fr: Structure, so: Spans, sr: Spans, rows: list[AlignedRow],
            found: list[tuple[int, Any, Any]], first: tuple[int, int, Any, Any], fmt: str) -> EarlyTraceDiff:
    """The walked rows as a ``TraceDiff`` over compact span lists (the rows' spans, in row order)."""
    # Each span sits in exactly one row (align's contract): the rows' spans in row order, no repeats.
    ospans: list[Span] = []
    rspans: list[Span] = []
    out_rows: list[AlignedRow] = []
    for row in rows:
        o, r = row.original, row.replay
        if o is not None:
            ospans.append(so[o])
            o = len(ospans) - 1
        if r is not None:
            rspans.append(sr[r])
            r = len(rspans) - 1
        out_rows.append(AlignedRow(o, r, row.depth, row.retry))
    row_div: list[Divergence | None] = [None] * len(out_rows)
    divs: list[Divergence] = []
    n0, order0, _t, _f = first
    for n, dtype, fields in found:
        row = out_rows[n]
        d = Divergence(type=dtype, row=n,
                       original=ospans[row.original] if row.original is not None else None,
                       replay=rspans[row.replay] if row.replay is not None else None,
                       fields=fields, order=order0 if n == n0 else -1)
        row_div[n] = d
        if n == n0:
            divs.append(d)
    o_trace = Trace(spans=ospans, header=fo.header, path=so.src.path, format=fmt, trace_id=fo.trace_id,
                    trace_ids=[fo.trace_id] if fo.trace_id else [])
    r_trace = Trace(spans=rspans, header=fr.header, path=sr.src.path, format=fmt, trace_id=fr.trace_id,
                    trace_ids=[fr.trace_id] if fr.trace_id else [])
    return EarlyTraceDiff(original=o_trace, replay=r_trace, rows=out_rows, row_divergence=row_div,
                          divergences=divs, divergent_rows=[n for n, _, _ in found],
                          spans_read=(len(so), len(sr)), spans_total=(len(fo.parents), len(fr.parents)))


def start_stream(original: PayloadFile, replay: PayloadFile, *, cut: int = 0, feed: bool = True) -> Any:
    """Start the child process that parses ``replay`` (``native_index.fork_parse``), its prelude the
    replay's structure scan and the end of the original's (``scan_pair_tail``), for
    ``early_diff(stream=)``; None when no process can be started. The caller scans the original
    from its start meanwhile; the two meet where ``Meet`` says (kept as the child's ``early_meet``;
    ``cut``: a line start fixed beforehand, for tests). With ``feed``, the child also parses the
    original's early spans, half of them, while the early look runs (``early_spans.Feed``)."""
    if not ni.can_fork():
        return None
    meet = Meet(cut)
    fed = Feed(original, FeedState(os.fstat(original.fd).st_size)) if feed else None
    child = ni.fork_parse(replay, prelude=lambda src: scan_pair_tail(original, src, meet), feed=fed)
    if child is not None:
        child.early_meet = meet
    return child
