"""Watch mode's incremental update: ``LiveDiff.update`` at a cost proportional to what changed.

``LiveDiff._update_full`` (the definition of the result) clones every replay span, adds
placeholders, runs ``finish_spans`` and ``diff_traces`` and lays all rows into slots again.
``Engine`` gives the same ``LiveTraceDiff`` (tests/core/test_watch_incremental.py compares the
two at every step) while keeping, between updates:

- the replay's spans: each cloned once, with its ``span_key``, in children lists per parent and in
  ``seq`` order (a span, once written, never changes), and the missing parents that get
  placeholders (recomputed from that table: one entry per parent not written yet);
- the merged tree of the previous update, as depth-first arrays (original index, replay id, depth,
  subtree size, slot, verdict). The alignment of a subtree depends only on the two subtrees
  (``align`` aligns sibling lists level by level), so a node whose replay span gained no
  descendant, and that sits at the same depth with the same partner, is copied as one slice of
  those arrays; only the nodes above new spans (and the placeholders) have their children aligned
  again (``align.align_lists``, the library's own);
- the comparison verdict of each pair and one-sided span (``compare_pair``, ``one_sided``);
- the slot of each row, and the rows in slot order: only the rows of re-aligned nodes are built
  again, unless the replay's span indices shifted (a span written with a ``seq`` below others,
  or the placeholders changed: the writer's order, children first), then all rows are rebuilt by
  one C-level ``map``.

Per update there remain a few O(rows) C-level passes (list copies for the returned diff, a dict
of positions, ``compress`` over per-row flags; ~10 ms at 100k rows) and O(divergences) Python
work (each divergence's ``order`` is its position in the merged tree, renumbered each time).

Anything out of the ordinary returns None and the caller takes the full path: a replay span with a
duplicate id, no ``seq``, its own parent or a parent written with a later ``seq``; an original not
in ``seq`` order or with parent cycles; and ``final=True`` (orphans become roots there). A replay
whose earlier spans are not the same objects as before (a replaced file, another format read whole
again) is taken in again from scratch, cloned and aligned whole (a "cold" update).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from itertools import compress
from operator import is_
from typing import Any, Hashable

from tracetui.core.diff import Divergence
from tracetui.core.diff.align import AlignedRow, align_lists, prepare, wraps
from tracetui.core.diff.sides import Side, span_key
from tracetui.core.diff.compare import OUTPUT, compare_pair, field_side, screen_pairs
from tracetui.core.diff.trace_diff import one_sided, replay_first
from tracetui.core.model import PLACEHOLDER, Span, Status, Trace
from tracetui.core.watch.common import LiveTraceDiff, clone_span, placeholder_plan
from tracetui.core.watch.tail import ReplaySnapshot, trace_id_of

_Id = Hashable  # a replay span's id in the engine: its file index (int), or ("ph", parent id, is top)


class Engine:
    """The incremental state of one ``LiveDiff`` (see the module docstring). Not thread-safe."""

    def __init__(self, live: Any) -> None:  # live: the watch.live.LiveDiff whose state this keeps
        self.live = live
        ospans = live.original.spans
        self.ospans = ospans
        self.oseqs = [s.seq for s in ospans]
        if live._side is None:  # prepared once, shared with the full path (LiveDiff._update_full)
            live._side = prepare(ospans)
        side = live._side
        # its own group cache: interned against this engine's table
        a = Side.of_parts(side.spans, side.keys, side.children, side.roots, side.acyclic)
        self.a = a
        self.usable = a.acyclic and self.oseqs == sorted(self.oseqs)
        self.oroots = [s for s in ospans if s.parent_id is None]
        self.slot_of_o = [live._by_o[o] for o in range(len(ospans))]
        self.intern: dict[Hashable, int] = {}
        self.oo_v: dict[int, Any] = {}
        self.reset_replay()

    # -- the replay's spans -------------------------------------------------------------------

    def reset_replay(self) -> None:
        """Forget the replay (a replaced file): everything is taken in again."""
        self.snap: list[Span] = []  # the snapshot's span objects seen, file order
        self.clones: list[Span] = []  # by file index
        self.by_id: dict[str, int] = {}
        self.kids: dict[int, list[int]] = {}  # real parent -> children (file indices, seq order)
        self.orph: dict[str, list[int]] = {}  # parent not written yet -> its children
        self.missing: dict[str, int] = {}  # parent not written yet -> lowest seq of a child (first-reference order)
        self.roots: list[tuple[int, int]] = []  # (seq, file index) of real roots, sorted
        self.order: list[tuple[int, int]] = []  # (seq, file index) of every real span, sorted
        self.real: list[Span] = []  # the clones in that order
        self.fids: list[int] = []  # their file indices
        self.tainted = False
        self.b = Side.of_parts({}, {}, None, None, True)
        self.pair_v: dict[tuple[int, int], Any] = {}
        self.ro_v: dict[int, Any] = {}
        self.ph_cache: dict[tuple[Any, ...], Span] = {}
        self.cold()

    def cold(self) -> None:
        """Forget the previous merged tree and rows (after a full update): the next one aligns whole."""
        self.prev: tuple[list[Any], ...] | None = None
        self.prev_pos: dict[int, int] = {}
        self.special: tuple[Any, Any] = (None, None)
        self.s_x: list[Any] | None = None
        self.s_row: list[AlignedRow] | None = None
        self.rids: list[_Id] | None = None
        self.ridx: dict[_Id, int] = {}

    def _take(self, batch: list[Span]) -> set[int] | None:
        """Add new spans; the file indices whose subtree changed, or None (the full path is needed)."""

        clones, by_id, b = self.clones, self.by_id, self.b
        fresh: list[int] = []
        for s in batch:
            c = clone_span(s)
            sid = c.span_id
            if type(c.seq) is not int or c.seq < 0 or sid is None or sid in by_id or sid == c.parent_id:
                return None
            fid = len(clones)
            clones.append(c)
            by_id[sid] = fid
            b.spans[fid] = c
            b.keys[fid] = span_key(c)
            fresh.append(fid)
        self.snap.extend(batch)
        missing, orph, kids = self.missing, self.orph, self.kids

        def key(f: int) -> tuple[int, int]:
            return (clones[f].seq, f)

        for fid in fresh:  # a parent written after its children: they leave its placeholder
            sid = clones[fid].span_id
            if sid in missing:
                del missing[sid]
                ch = orph.pop(sid)
                if key(ch[0]) <= key(fid):
                    return None
                kids[fid] = ch
        for fid in fresh:
            c = clones[fid]
            p = c.parent_id
            k = (c.seq, fid)
            if p is None:
                insort(self.roots, k)
                continue
            pf = by_id.get(p)
            lst = kids.get(pf) if pf is not None else orph.get(p)  # type: ignore[arg-type]
            if pf is not None and key(pf) >= k:
                return None  # a parent after its child: finish_spans' slow path
            if pf is None:
                missing[p] = min(missing.get(p, c.seq), c.seq)
            if lst is None:
                if pf is not None:
                    kids[pf] = [fid]
                else:
                    orph[p] = [fid]
            elif key(lst[-1]) < k:
                lst.append(fid)
            else:
                insort(lst, fid, key=key)
        dirty: set[int] = set()
        for fid in fresh:  # each new span and its written ancestors (parents sort earlier: no loop)
            f: int | None = fid
            while f is not None and f not in dirty:
                dirty.add(f)
                p = clones[f].parent_id
                f = by_id.get(p) if p is not None else None
        order = self.order
        new = sorted((clones[f].seq, f) for f in fresh)
        if not order or not new or order[-1] < new[0]:
            order.extend(new)
            self.fids.extend(f for _, f in new)
            self.real.extend(clones[f] for _, f in new)
        else:
            order.extend(new)
            order.sort()
            self.fids = [f for _, f in order]
            self.real = list(map(clones.__getitem__, self.fids))
        return dirty

    def _placeholders(self) -> tuple[list[Span], list[_Id], dict[_Id, list[_Id]]]:
        """``LiveDiff._with_placeholders``' spans from the table of missing parents
        (``watch.placeholder_plan``): (spans, ids, children of each), in the plan's order (``seq``
        not going down)."""

        missing, orph, clones = self.missing, self.orph, self.clones
        if not missing:
            return [], [], {}
        first = {p: (clones[orph[p][0]].kind, clones[orph[p][0]].name) for p in missing}
        plan = placeholder_plan(missing, first, self.oroots[0] if len(self.oroots) == 1 else None,
                                self.live._child_types)
        made: list[Span] = []
        ids: list[_Id] = []
        cache: dict[tuple[Any, ...], Span] = {}
        b = self.b
        top = plan[0][0]
        for ck in plan:
            p, parent, seq, kind, name = ck
            sp = self.ph_cache.get(ck)
            if sp is None:
                sp = Span(p, parent, seq, kind, name, None, None, Status.UNSET, None, {}, {PLACEHOLDER: True})
            cache[ck] = sp
            pid = ("ph", p, p == top)
            b.spans[pid] = sp
            b.keys[pid] = span_key(sp)
            made.append(sp)
            ids.append(pid)
        self.ph_cache = cache
        kids: dict[_Id, list[_Id]] = {}
        for k, pid in enumerate(ids):  # its written children, and the next placeholder of the chain
            real = orph.get(plan[k][0], ())
            if k + 1 == len(ids):
                kids[pid] = list(real)
                continue
            nseq = plan[k + 1][2]
            at = bisect_left(real, nseq, key=lambda f: clones[f].seq)  # before written ones of its seq
            kids[pid] = [*real[:at], ids[k + 1], *real[at:]]
        return made, ids, kids

    # -- one update ----------------------------------------------------------------------------

    def update(self, snapshot: ReplaySnapshot, path: str) -> LiveTraceDiff | None:
        """``LiveDiff._update_full(snapshot, path=path)``'s result, or None: take the full path."""
        if not self.usable:
            return None
        spans = snapshot.spans
        if len(spans) < len(self.snap) or not all(map(is_, self.snap, spans)):
            self.reset_replay()
        if self.tainted:
            return None
        dirty = self._take(spans[len(self.snap):])
        if dirty is None:
            self.tainted = True
            return None
        out = self._diff(snapshot, path, dirty)
        if self.a.retry or self.b.retry:
            # Failed attempts retried (diff.siblings): retry rows this walk does not mark; full path from here.
            self.tainted = True
            return None
        return out

    def _diff(self, snapshot: ReplaySnapshot, path: str, dirty: set[int]) -> LiveTraceDiff:

        live, a, b, clones = self.live, self.a, self.b, self.clones
        ospans = self.ospans
        made, phids, phkids = self._placeholders()
        kids = self.kids
        fids = self.fids
        if made:
            replay_spans = []
            rids: list[_Id] = []
            i = 0
            for sp, pid in zip(made, phids):  # each before the written spans of its seq and after
                at = bisect_left(self.order, (sp.seq, -1))
                replay_spans.extend(self.real[i:at])
                rids.extend(fids[i:at])
                replay_spans.append(sp)
                rids.append(pid)
                i = at
            replay_spans.extend(self.real[i:])
            rids.extend(fids[i:])
            ri = bisect_left(self.roots, (made[0].seq, -1))
            broots: list[_Id] = [f for _, f in self.roots]
            broots.insert(ri, phids[0])
        else:
            replay_spans = list(self.real)
            rids = list(fids)
            broots = [f for _, f in self.roots]

        def bkids(j: _Id) -> list[_Id] | None:
            return phkids.get(j) if type(j) is tuple else kids.get(j)  # type: ignore[arg-type]

        # -- the merged tree, depth first (walk_rows' order), reusing unchanged subtrees ---------
        prev = self.prev
        if prev is not None:
            p_o, p_x, p_d, p_size, p_slot, p_v = prev
        prev_pos = self.prev_pos
        by_r = live._by_r
        sp_o, sp_x = self.special
        f_o: list[int | None] = []
        f_x: list[_Id | None] = []
        f_d: list[int] = []
        f_size: list[int] = []
        f_slot: list[int] = []
        f_v: list[Any] = []
        visited: list[int] = []
        ph_pos: list[int] = []
        oo = self.oo if prev is not None else bytearray(len(ospans))  # original-only rows, by original index
        pr = self.pr if prev is not None else bytearray(len(ospans))  # paired with a written replay span
        slot_of_o = self.slot_of_o
        akeys, bkeys = a.keys, b.keys
        pair_v, ro_v = self.pair_v, self.ro_v
        reused_ro = 0
        to_screen: list[int] = []

        def reuse(o: int | None, x: _Id | None, depth: int) -> bool:
            nonlocal reused_ro
            if prev is None or (x is not None and (type(x) is tuple or x in dirty or x == sp_x)):
                return False
            if o is not None:
                if x is None and o == sp_o:
                    return False
                s = slot_of_o[o]
            else:
                s = by_r.get(clones[x].span_id)  # type: ignore[index]
                if s is None:
                    return False
            p = prev_pos.get(s)
            if p is None or p_o[p] != o or p_x[p] != x or p_d[p] != depth:
                return False
            end = p + p_size[p]
            f_o.extend(p_o[p:end])
            f_x.extend(p_x[p:end])
            f_d.extend(p_d[p:end])
            f_size.extend(p_size[p:end])
            f_slot.extend(p_slot[p:end])
            f_v.extend(p_v[p:end])
            if o is None:
                reused_ro += end - p  # a replay-only subtree: every row of it
            elif x is not None:
                reused_ro += p_o[p:end].count(None)
            return True

        def emit(o: int | None, x: _Id | None, depth: int) -> int:
            pos = len(f_o)
            f_o.append(o)
            f_x.append(x)
            f_d.append(depth)
            f_size.append(1)
            v = None
            if x is None:
                oo[o] = 1  # type: ignore[index]
                pr[o] = 0  # type: ignore[index]
            elif type(x) is tuple:
                ph_pos.append(pos)
                if o is not None:
                    oo[o] = pr[o] = 0
            elif o is not None:
                oo[o] = 0
                pr[o] = 0 if clones[x].attributes.get(PLACEHOLDER) else 1  # type: ignore[index]
                v = pair_v.get((o, x))  # type: ignore[arg-type]
                if v is None and (o, x) not in pair_v:
                    to_screen.append(pos)  # compared after the walk, all new pairs in one screen_pairs
            else:
                v = ro_v.get(x)  # type: ignore[arg-type]
                if v is None:
                    v = ro_v[x] = one_sided(clones[x], original=False)  # type: ignore[index]
            f_slot.append(slot_of_o[o] if o is not None else -1)
            f_v.append(v)
            visited.append(pos)
            return pos

        def children(o: int | None, x: _Id | None) -> list[Any] | None:
            oc = a.children[o] if o is not None else None
            rc = bkids(x) if x is not None else None
            if oc is None and rc is None:
                return None
            if oc is not None and rc is not None:
                return align_lists(oc, rc, a, b, self.intern)  # type: ignore[arg-type]
            if oc is not None:
                return [(c, None) for c in oc]
            return [(None, c) for c in rc]  # type: ignore[union-attr]

        stack: list[tuple[Any, int, int]] = []
        special: tuple[Any, Any] = (None, None)
        if len(a.roots) == 1 and len(broots) == 1:  # walk_rows' roots
            ra, rb = a.roots[0], broots[0]
            rbspan = b.spans[rb]
            if ospans[ra].kind is rbspan.kind:
                stack.append((iter([(ra, rb)]), 0, -1))
            elif wraps(a, ra, rbspan):
                pos = emit(ra, None, 0)
                special = (ra, None)
                stack.append((iter(align_lists(a.children[ra] or [], [rb], a, b, self.intern)), 1, pos))
            else:
                kb = bkids(rb)
                oroot = ospans[ra]
                if kb and any(b.spans[k].kind is oroot.kind and b.spans[k].name == oroot.name for k in kb):
                    pos = emit(None, rb, 0)
                    special = (None, rb)
                    stack.append((iter(align_lists([ra], kb, a, b, self.intern)), 1, pos))
        if not stack:
            stack.append((iter(align_lists(a.roots, broots, a, b, self.intern)), 0, -1))
        while stack:
            it, depth, parent = stack[-1]
            for o, x in it:
                if reuse(o, x, depth):
                    continue
                pos = emit(o, x, depth)
                pairs = children(o, x)
                if pairs:
                    stack.append((iter(pairs), depth + 1, pos))
                    break
            else:
                stack.pop()
                if parent >= 0:
                    f_size[parent] = len(f_o) - parent
        n_rows = len(f_o)
        if to_screen:  # diff._diff_rows' comparison, for the pairs not compared before
            so = [f_o[p] for p in to_screen]
            sx = [f_x[p] for p in to_screen]
            same = [akeys[o] == bkeys[x] for o, x in zip(so, sx)]  # type: ignore[index]
            flagged = set(screen_pairs(ospans, b.spans, so, sx, same))  # type: ignore[arg-type]
            for k, p in enumerate(to_screen):
                o, x = so[k], sx[k]
                v = None
                if k in flagged:
                    dtype, fields = compare_pair(ospans[o], clones[x], same[k])  # type: ignore[index]
                    v = None if dtype is None else (dtype, fields)
                pair_v[(o, x)] = f_v[p] = v  # type: ignore[index]

        # -- slots (LiveDiff._place) ---------------------------------------------------------------
        slots_o, slots_r, sdepth = live._slots_o, live._slots_r, live._depth
        n_ro = len(slots_o) - len(slot_of_o)
        claimed = reused_ro
        fresh_ro: list[int] = []
        for pos in visited:
            if f_o[pos] is None:
                s = by_r.get(b.spans[f_x[pos]].span_id)
                if s is not None:
                    f_slot[pos] = s
                    claimed += 1
                else:
                    fresh_ro.append(pos)
        relaid = claimed < n_ro
        rebuild = relaid or prev is None or self.s_row is None
        if relaid:
            live._skeleton()
            slots_o, slots_r, sdepth, by_r = live._slots_o, live._slots_r, live._depth, live._by_r
            fresh_ro = [pos for pos in range(n_rows) if f_o[pos] is None]
            touched: Any = range(n_rows)
            for pos in range(n_rows):
                o = f_o[pos]
                f_slot[pos] = slot_of_o[o] if o is not None else -1
        else:
            touched = visited
        if rebuild:
            self.s_x = [None] * len(slots_o)
        s_x = self.s_x
        assert s_x is not None
        for pos in fresh_ro:
            f_slot[pos] = len(slots_o)
            by_r[b.spans[f_x[pos]].span_id] = len(slots_o)
            slots_o.append(None)
            slots_r.append(None)
            sdepth.append(0)
            s_x.append(None)
        for pos in touched:
            s = f_slot[pos]
            x = f_x[pos]
            slots_r[s] = b.spans[x].span_id if x is not None else None
            sdepth[s] = f_d[pos]
            s_x[s] = x

        # -- rows in slot order, replay indices ----------------------------------------------------
        prids = self.rids
        shifted = prids is None or len(rids) < len(prids) or rids[:len(prids)] != prids
        ridx = self.ridx
        if shifted:
            ridx = self.ridx = dict(zip(rids, range(len(rids))))
        else:
            for k in range(len(prids), len(rids)):  # type: ignore[arg-type]
                ridx[rids[k]] = k
        self.rids = list(rids)
        rget = ridx.get
        if rebuild or shifted:
            self.s_row = list(map(AlignedRow, slots_o, map(rget, s_x), sdepth))
        else:
            s_row = self.s_row
            assert s_row is not None
            s_row.extend([None] * (len(slots_o) - len(s_row)))  # type: ignore[list-item]
            for pos in visited:
                x = f_x[pos]
                s_row[f_slot[pos]] = AlignedRow(f_o[pos], rget(x) if x is not None else None, f_d[pos])
        s_row = self.s_row
        assert s_row is not None

        # -- pending, placeholders, divergences (LiveDiff.update's not_compared, _diff_rows) ------
        oseqs = self.oseqs
        fr = pr.rfind(1)
        frontier = oseqs[fr] if fr >= 0 else -1
        t = bisect_right(oseqs, frontier)
        pending = frozenset(compress(slot_of_o[t:], oo[t:]))
        ph_rows = frozenset(f_slot[pos] for pos in ph_pos)
        pos_of = dict(zip(f_slot, range(n_rows)))
        found = list(compress(range(n_rows), f_v))
        found.extend(pos_of[slot_of_o[o]] for o in compress(range(t), oo[:t]))
        oo_v = self.oo_v
        divergences: list[Divergence] = []
        fork: list[tuple[int, int, bool, int]] = []
        for n in found:
            o, x, depth = f_o[n], f_x[n], f_d[n]
            if x is None:
                v = oo_v.get(o)  # type: ignore[arg-type]
                if v is None:
                    v = oo_v[o] = one_sided(ospans[o], original=True)  # type: ignore[index]
            else:
                v = f_v[n]
            dtype, fields = v
            end = n + f_size[n]
            if field_side(dtype) == OUTPUT or (
                    depth == 0 and (o is None or x is None)
                    and any(f_o[k] is not None and f_x[k] is not None for k in range(n + 1, end))):
                order = 2 * end - 1 - depth
            else:
                order = 2 * n - depth
            divergences.append(Divergence(dtype, f_slot[n], ospans[o] if o is not None else None,
                                          b.spans[x] if x is not None else None, fields, order))
            if order == 2 * n - depth:
                fork.append((n, depth, x is not None, len(divergences) - 1))
        fork.sort()
        for n, d in replay_first([(n, depth, side, divergences[i]) for n, depth, side, i in fork]).items():
            divergences[next(i for m, _d, _s, i in fork if m == n)] = d
        divergences.sort(key=lambda d: d.order)
        row_divergence: list[Divergence | None] = [None] * len(slots_o)
        for d in divergences:
            row_divergence[d.row] = d

        self.prev = (f_o, f_x, f_d, f_size, f_slot, f_v)
        self.prev_pos = pos_of
        self.special = special
        self.oo, self.pr = oo, pr
        replay = Trace(spans=replay_spans, header=dict(snapshot.header), path=path, format=snapshot.format,
                       trace_id=trace_id_of(snapshot.header), issues=list(snapshot.issues))
        return LiveTraceDiff(
            original=live.original, replay=replay, rows=list(s_row), row_divergence=row_divergence,
            divergences=divergences, divergent_rows=sorted(d.row for d in divergences),
            pending=pending, placeholder_rows=ph_rows, relaid=relaid, final=False,
        )
