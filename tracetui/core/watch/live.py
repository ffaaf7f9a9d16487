"""Following a replay while it is written: a diff whose rows never move.

The file is read by ``watch.tail.TailReader`` (its ``ReplaySnapshot``s).

``LiveDiff`` turns successive snapshots into ``LiveTraceDiff`` objects whose
row indices are stable. Rows are *slots*: first one per original span, in the
original's depth-first order (a skeleton: the replay fills it in), then one per
replay-only span, appended as they arrive. Each update aligns the original with
everything read so far (``diff_traces``: the alignment and comparison are the
library's own, so the divergences are the batch diff's) and puts each aligned
row in the slot of its original span, or of its replay span (by ``span_id``),
or a new slot at the end. The update is incremental (``core.watch.incremental``:
only what the new spans touch is aligned, compared and laid out again) and gives
exactly what redoing it all gives (``_update_full``). See docs/watch.md for the
guarantees and where they end.

The writer writes a span when it *ends*, so children come before their parent
(the root last). A span whose parent is not written yet hangs under a
*placeholder* of that parent (``PLACEHOLDER`` attribute, no data;
``placeholder_plan``): the first one stands for the run's root (the original
root's kind), so the children pair with the original's children at once instead
of floating as extra roots; the others, the spans still open below it, nest in
one chain and take the kind and name the original gives such a span.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from typing import Any

from tracetui.core.diff import Divergence, TraceDiff, diff_traces
from tracetui.core.diff.align import AlignedRow, prepare
from tracetui.core.model import PLACEHOLDER, Span, Status, Trace
from tracetui.core.readers import finish_spans, read_trace
from tracetui.core.readers.gc_paused import promote_young_objects
from tracetui.core.watch.common import LiveTraceDiff, child_types, clone_span, placeholder_plan
from tracetui.core.watch.incremental import Engine
from tracetui.core.watch.tail import ReplaySnapshot, trace_id_of

__all__ = ["LiveDiff", "read_original"]


class LiveDiff:
    """Successive diffs of a fixed original against a growing replay, rows never moving.

    Args:
        original: The original run (read once, complete).
        incremental: Update incrementally (``core.watch.incremental``: the cost follows the new spans,
            not the replay's size); False: redo everything at each update (``_update_full``, the
            definition of the result; the two give equal ``LiveTraceDiff`` objects).
    """

    def __init__(self, original: Trace, *, incremental: bool = True) -> None:
        self.original = original
        self._slots_o: list[int | None] = []
        self._slots_r: list[str | None] = []
        self._depth: list[int] = []
        self._by_o: dict[int, int] = {}
        self._by_r: dict[str, int] = {}
        self._side: Any = None  # align.prepare of the original, kept across updates
        self._child_types = child_types(original.spans)  # placeholder_plan's table of the original
        base = diff_traces(original, Trace(spans=[], path=""))  # the original's own rows: the same every time
        self._base = ([r.original for r in base.rows], [r.depth for r in base.rows])
        self._skeleton()
        self.diff: LiveTraceDiff | None = None
        self._engine: Any = None
        if incremental:
            self._engine = Engine(self)

    def _skeleton(self) -> None:
        self._slots_o = list(self._base[0])
        self._slots_r = [None] * len(self._base[0])
        self._depth = list(self._base[1])
        self._by_o = {o: n for n, o in enumerate(self._slots_o) if o is not None}
        self._by_r = {}

    def slot_identity(self, row: int) -> tuple[str | None, str | None]:
        """``(original span id, replay span id)`` of a row (None: that side is empty)."""
        o, r = self._slots_o[row], self._slots_r[row]
        return (self.original.spans[o].span_id if o is not None else None, r)

    def update(self, snapshot: ReplaySnapshot, *, path: str = "", final: bool = False) -> LiveTraceDiff:
        """Diff the original against ``snapshot``'s spans; rows shown before keep their index.

        Args:
            snapshot: What the replay holds now.
            path: The replay's path (for the replay ``Trace``).
            final: The replay is complete: rows not reached are ``missing``, not pending, and there is
                no placeholder (a parent still absent is an orphan, as ``read_trace`` reads it).

        Returns:
            The ``LiveTraceDiff``; its divergences are ``diff_traces``' for the same spans (placeholders
            and pending rows aside, see docs/watch.md), each with ``row`` moved to its slot.

        Incremental (see ``core.watch.incremental``) unless made with ``incremental=False``, when
        ``final``, or when the replay is out of the ordinary (duplicate span ids...): then
        ``_update_full``. Both give the same result.
        """
        engine = self._engine
        if engine is not None and not final:
            gc_was = gc.isenabled()
            gc.disable()  # the rows and caches hold no cycles (as diff_traces)
            try:
                out = engine.update(snapshot, path)
            finally:
                promote_young_objects()
                if gc_was:
                    gc.enable()
            if out is not None:
                self.diff = out
                return out
        if engine is not None:
            engine.cold()  # the slots move on without it: its next update aligns whole
        return self._update_full(snapshot, path=path, final=final)

    def _update_full(self, snapshot: ReplaySnapshot, *, path: str = "", final: bool = False) -> LiveTraceDiff:
        """``update`` redoing everything: clones, placeholders, ``finish_spans``, ``diff_traces``, slots."""
        issues = list(snapshot.issues)
        spans = list(map(clone_span, snapshot.spans))  # finish_spans fixes spans in place
        placeholders: set[str] = set()
        if not final:
            spans, placeholders = self._with_placeholders(spans)
        spans = finish_spans(spans, path, issues)
        replay = Trace(spans=spans, header=dict(snapshot.header), path=path, format=snapshot.format,
                       trace_id=trace_id_of(snapshot.header), issues=issues)
        if self._side is None:
            self._side = prepare(self.original.spans)
        ospans = self.original.spans
        unshown: tuple[set[int], set[int]] = (set(), set())  # rows of the diff: pending, placeholders

        def not_compared(rows: list[Any]) -> set[int]:
            """The rows shown without a divergence: not compared. Pending: an original span the replay
            has not reached (its seq above the last one paired); placeholder: a parent not written yet."""
            pending, ph = unshown
            ph.update(k for k, row in enumerate(rows) if row.replay is not None and spans[row.replay].span_id in placeholders)
            if not final:
                reached = [ospans[row.original].seq for row in rows if row.original is not None and row.replay is not None
                           and not spans[row.replay].attributes.get(PLACEHOLDER)]
                frontier = max(reached) if reached else -1
                pending.update(k for k, row in enumerate(rows) if row.replay is None and row.original is not None
                               and ospans[row.original].seq > frontier)
            return pending | ph

        d = diff_traces(self.original, replay, original_side=self._side, not_compared=not_compared)
        relaid = self._place(d)
        if relaid:
            self._skeleton()
            self._place(d)
        return self._build(d, unshown, final, relaid)

    def _with_placeholders(self, spans: list[Span]) -> tuple[list[Span], set[str]]:
        ids = {s.span_id for s in spans}
        first: dict[str, Span] = {}  # each missing parent's first written child (lowest seq, then file order)
        for s in spans:
            p = s.parent_id
            if p is not None and p not in ids and (p not in first or s.seq < first[p].seq):
                first[p] = s
        if not first:
            return spans, set()
        missing = {p: c.seq for p, c in first.items()}  # in the order first met, as placeholder_plan wants
        roots = [s for s in self.original.spans if s.parent_id is None]
        plan = placeholder_plan(missing, {p: (c.kind, c.name) for p, c in first.items()},
                                roots[0] if len(roots) == 1 else None, self._child_types)
        made = [Span(p, parent, seq, kind, name, None, None, Status.UNSET, None, {}, {PLACEHOLDER: True})
                for p, parent, seq, kind, name in plan]
        return made + spans, {p for p, *_ in plan}  # placeholders first: ties on seq keep them before their children

    def _place(self, d: TraceDiff) -> bool:
        """Assign each row of ``d`` to a slot; True when a slot shown before would be left empty."""
        rspans = d.replay.spans
        taken: set[int] = set()
        assign: list[int] = []
        new_o: list[int | None] = []
        new_r: list[str | None] = []
        new_depth: list[int] = []
        n_slots = len(self._slots_o)
        pending_r: list[tuple[int, str | None]] = []
        for k, row in enumerate(d.rows):
            o = row.original
            rid = rspans[row.replay].span_id if row.replay is not None else None
            slot = self._by_o.get(o) if o is not None else None
            if slot is None:
                slot = -1
                pending_r.append((k, rid))
            else:
                taken.add(slot)
            assign.append(slot)
        for k, rid in pending_r:  # replay-only rows: their slot if it is free and not an original's
            slot = self._by_r.get(rid) if rid is not None else None
            if slot is not None and slot not in taken and self._slots_o[slot] is None:
                taken.add(slot)
                assign[k] = slot
        # A slot shown before, now without a row: its span paired elsewhere, or vanished.
        for s in range(n_slots):
            if s not in taken and self._slots_o[s] is None:
                return True
        for k, row in enumerate(d.rows):
            if assign[k] == -1:
                assign[k] = n_slots + len(new_o)
                new_o.append(row.original)
                new_r.append(None)
                new_depth.append(row.depth)
        self._slots_o.extend(new_o)
        self._slots_r.extend(new_r)
        self._depth.extend(new_depth)
        for k, row in enumerate(d.rows):
            s = assign[k]
            rid = rspans[row.replay].span_id if row.replay is not None else None
            old = self._slots_r[s]
            if old is not None and self._by_r.get(old) == s:
                del self._by_r[old]
            self._slots_r[s] = rid
            self._depth[s] = row.depth
            if row.original is None:
                self._by_r[rid] = s  # type: ignore[index]
        for s in range(n_slots):  # original slots the diff left unpaired
            if s not in taken:
                self._slots_r[s] = None
        self._assign = assign
        return False

    def _build(self, d: TraceDiff, unshown: tuple[set[int], set[int]], final: bool, relaid: bool) -> LiveTraceDiff:
        assign = self._assign
        n = len(self._slots_o)
        rows: list[AlignedRow] = [AlignedRow(o, None, dep) for o, dep in zip(self._slots_o, self._depth, strict=True)]
        for k, row in enumerate(d.rows):
            rows[assign[k]] = AlignedRow(row.original, row.replay, row.depth)
        pending = {assign[k] for k in unshown[0]}  # (every row of d has a slot: _place)
        ph_rows = frozenset(assign[k] for k in unshown[1])
        row_divergence: list[Divergence | None] = [None] * n
        divergences: list[Divergence] = []
        for div in d.divergences:  # none for the pending and placeholder rows: not compared
            s = assign[div.row]
            moved = replace(div, row=s) if s != div.row else div
            row_divergence[s] = moved
            divergences.append(moved)
        out = LiveTraceDiff(
            original=self.original, replay=d.replay, rows=rows, row_divergence=row_divergence,
            divergences=divergences, divergent_rows=sorted(x.row for x in divergences),
            pending=frozenset(pending), placeholder_rows=ph_rows, relaid=relaid, final=final,
        )
        self.diff = out
        return out


def read_original(path: str, *, format: str | None = None, trace_id: str | None = None) -> Trace:
    """The original side, read once (``read_trace``); here so the TUI's watch worker imports one module.

    Raises:
        ReadError, FormatNotRecognised, TraceNotFound, ValueError: as ``read_trace``.
    """
    return read_trace(path, format=format, trace_id=trace_id)
