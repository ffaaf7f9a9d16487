"""Following a replay while it is written: an incremental tail reader and a diff whose rows never move.

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

``LiveDiff`` turns successive snapshots into ``LiveTraceDiff`` objects whose
row indices are stable. Rows are *slots*: first one per original span, in the
original's depth-first order (a skeleton: the replay fills it in), then one per
replay-only span, appended as they arrive. Each update aligns the original with
everything read so far (``diff_traces``: the alignment and comparison are the
library's own, so the divergences are the batch diff's) and puts each aligned
row in the slot of its original span, or of its replay span (by ``span_id``),
or a new slot at the end. The update is incremental (``core.watch_incremental``:
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

import copy
import dataclasses
import gc
import operator
import os
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from tracetui.core.align import prepare
from tracetui.core.diff import Divergence, TraceDiff, diff_traces
from tracetui.core.errors import TracetuiError
from tracetui.core.model import PLACEHOLDER, ReadIssue, Span, SpanKind, Status, Trace
from tracetui.core.readers import SNIFF_BYTES, finish_spans, promote_young_objects, read_replay, sniff_format
from tracetui.core.readers.native import _BOM, _header, _LineParser
from tracetui.core.readers.jsondoc import bom_issue

__all__ = ["PLACEHOLDER", "LiveDiff", "LiveTraceDiff", "ReplaySnapshot", "TailReader", "placeholder_plan"]


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
        self._parser: _LineParser | None = None
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
            self._parser = _LineParser(self.path)
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
                if self._offset == len(data) and data.startswith(_BOM):
                    parser.out.issues.append(bom_issue(self.path, 1))
                    self._partial += data[len(_BOM):]
                    self._header_at = len(_BOM)
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
            _header(obj, runs[0], runs[:1], self.path, 1, [])

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


# -- the diff whose rows stay put ------------------------------------------------------------


@dataclass(slots=True)
class LiveTraceDiff(TraceDiff):
    """A ``TraceDiff`` of a replay still being written, rows in stable slots.

    Attributes:
        pending: Rows of original spans the replay has not reached yet (no divergence shown for them).
        placeholder_rows: Rows whose replay side is a parent not written yet.
        relaid: True when this update could not keep every row in place (a row shown as replay-only
            paired with an original span later, or a replaced file lost spans): rows were laid out again.
        final: True when computed as the complete replay (no row pending).
    """

    pending: frozenset[int] = frozenset()
    placeholder_rows: frozenset[int] = frozenset()
    relaid: bool = False
    final: bool = False


_SPAN_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(Span)))


def _clone(span: Span) -> Span:
    """A shallow copy of a span (``copy.copy``: 8 µs a span through ``__reduce_ex__``; this: ~1.5 µs)."""
    if type(span) is Span:
        return Span(*_SPAN_FIELDS(span))
    return copy.copy(span)


_Type = tuple[SpanKind, str]  # (kind, name): what placeholder_plan knows of a span


def _child_types(spans: list[Span]) -> dict[_Type, dict[_Type, int]]:
    """For each (kind, name) of the original's spans, how often each (kind, name) occurs among their
    children: ``placeholder_plan`` guesses what a parent not written yet is from it."""
    by_id = {s.span_id: s for s in spans}
    table: dict[_Type, dict[_Type, int]] = {}
    for s in spans:
        parent = by_id.get(s.parent_id) if s.parent_id is not None else None
        if parent is not None:
            kids = table.setdefault((parent.kind, parent.name), {})
            t = (s.kind, s.name)
            kids[t] = kids.get(t, 0) + 1
    return table


_GUESSABLE = (SpanKind.AGENT, SpanKind.OTHER)  # kinds whose span key is kind and name (align.span_key)

ROOT_PLACEHOLDER = "tracetui.placeholder:root"
"""``span_id`` of the run root's placeholder while the root has no written child (so no id for it)."""


def placeholder_plan(missing: dict[str, int], first_child: dict[str, _Type], root: Span | None,
                     child_types: dict[_Type, dict[_Type, int]]) -> list[tuple[str, str | None, int, SpanKind, str]]:
    """The placeholders of a replay being written: ``(span_id, parent_id, seq, kind, name)`` of each.

    Args:
        missing: Each parent id no written span has -> the lowest ``seq`` of its written children
            (dict order: as first met in file order).
        first_child: Each missing parent -> (kind, name) of that lowest-``seq`` child.
        root: The original's root when it has one (else None).
        child_types: ``_child_types`` of the original.

    The writer writes a span when it ends, so the parents not written yet are the spans still open:
    in a run that does one thing at a time, one chain from the root down, and ordered by their first
    written child they come in that chain's order. So the first stands for the run's root (the
    original root's kind, its name marked "(not written yet)"; the diff pairs roots of one kind),
    and each next one is the child of the one before. Its kind and name are guessed from the
    original: among the children of the spans the parent placeholder stands for, the most frequent
    (kind, name) whose own children include the kind and name of its first written child (an agent
    or other span only: their key is kind and name, so it pairs with the original's span at its
    place). No guess: an agent span named "(not written yet)". Before the root has a written child,
    the first open span is not the root but one of its children (its first child is of a kind the
    root's children have below them, not the root itself): the root then gets a placeholder of its
    own, ``ROOT_PLACEHOLDER``, first in the plan. Its ``seq`` is its first child's
    (before its children on ties: the caller puts placeholders first), so it sits among its
    siblings where its children do, not before them all (which made the diff pair the written
    siblings with the original's last ones: docs/watch.md). A run with parallel branches has
    several chains; they are nested as one here (a guess can then fail, and the rows of the branch
    that is not the chain's stay unpaired until their parents are written).
    """
    order = sorted(missing, key=missing.__getitem__)
    if root is not None and order:
        below = child_types.get((root.kind, root.name), {})
        want = first_child.get(order[0])
        if want not in below and any(want in child_types.get(t, ()) for t in below):
            # The root has no written child yet: the first open span is one of its children, the root
            # (open too: it ends last) gets a placeholder of its own, under an id no span has.
            missing = {ROOT_PLACEHOLDER: missing[order[0]], **missing}
            order.insert(0, ROOT_PLACEHOLDER)
    plan: list[tuple[str, str | None, int, SpanKind, str]] = []
    above: _Type | None = None  # what the previous placeholder stands for
    for k, p in enumerate(order):
        if k == 0:
            if root is not None:
                plan.append((p, None, missing[p], root.kind, f"{root.name} (not written yet)"))
                above = (root.kind, root.name)
            else:
                plan.append((p, None, missing[p], SpanKind.AGENT, "(not written yet)"))
                above = None
            continue
        guess: _Type | None = None
        kids = child_types.get(above) if above is not None else None
        if kids:
            want = first_child.get(p)
            best = 0
            for t, count in kids.items():
                if count > best and t[0] in _GUESSABLE and want in child_types.get(t, ()):
                    guess, best = t, count
        if guess is not None:
            plan.append((p, order[k - 1], missing[p], guess[0], guess[1]))
        else:
            plan.append((p, order[k - 1], missing[p], SpanKind.AGENT, "(not written yet)"))
        above = guess
    return plan


class LiveDiff:
    """Successive diffs of a fixed original against a growing replay, rows never moving.

    Args:
        original: The original run (read once, complete).
        incremental: Update incrementally (``core.watch_incremental``: the cost follows the new spans,
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
        self._child_types = _child_types(original.spans)  # placeholder_plan's table of the original
        base = diff_traces(original, Trace(spans=[], path=""))  # the original's own rows: the same every time
        self._base = ([r.original for r in base.rows], [r.depth for r in base.rows])
        self._skeleton()
        self.diff: LiveTraceDiff | None = None
        self._engine: Any = None
        if incremental:
            from tracetui.core.watch_incremental import _Engine

            self._engine = _Engine(self)

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

        Incremental (see ``core.watch_incremental``) unless made with ``incremental=False``, when
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
        spans = list(map(_clone, snapshot.spans))  # finish_spans fixes spans in place
        placeholders: set[str] = set()
        if not final:
            spans, placeholders = self._with_placeholders(spans)
        spans = finish_spans(spans, path, issues)
        replay = Trace(spans=spans, header=dict(snapshot.header), path=path, format=snapshot.format,
                       trace_id=_trace_id(snapshot.header), issues=issues)
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
        from tracetui.core.align import AlignedRow

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


def _trace_id(header: dict[str, Any]) -> str | None:
    v = header.get("trace_id") or header.get("run_id")
    return None if v is None else str(v)


def read_original(path: str, *, format: str | None = None, trace_id: str | None = None) -> Trace:
    """The original side, read once (``read_trace``); here so the TUI's watch worker imports one module.

    Raises:
        ReadError, FormatNotRecognised, TraceNotFound, ValueError: as ``read_trace``.
    """
    from tracetui.core.readers import read_trace

    return read_trace(path, format=format, trace_id=trace_id)


__all__ += ["read_original"]
