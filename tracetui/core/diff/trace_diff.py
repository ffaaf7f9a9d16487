"""The diff of two runs: aligned rows, one divergence per row, the first divergence.

``diff_traces(original, replay)`` aligns the two span trees
(``tracetui.core.diff.align``), compares every pair semantically
(``tracetui.core.diff.compare``), and orders the divergences by the original run's
execution order (docs/format.md, "Divergence order and the first divergence").
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace
from itertools import repeat
from operator import attrgetter
from typing import Callable, Container, Sequence

from tracetui.core.diff.align import AlignedRow, align_with_same_keys
from tracetui.core.diff.comparable import Comparability, Unchecked, flat_views
from tracetui.core.diff.compare import (
    ABSENT,
    OUTPUT,
    DivergenceType,
    FieldChange,
    compare_pair,
    field_side,
    one_sided_fields,
    screen_pairs,
)
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.readers.gc_paused import promote_young_objects

__all__ = [
    "ABSENT",
    "AlignedRow",
    "Divergence",
    "DivergenceType",
    "FieldChange",
    "TraceDiff",
    "diff_traces",
    "replay_first",
]

_CALL_KINDS = (SpanKind.TOOL, SpanKind.RETRIEVAL)
_ORIGINAL = attrgetter("original")
_REPLAY = attrgetter("replay")


@dataclass(frozen=True, slots=True)
class Divergence:
    """One divergent row.

    Attributes:
        type: The primary divergence type of the row.
        row: Index into ``TraceDiff.rows``.
        original: The original span, or None (replay only).
        replay: The replay span, or None (original only).
        fields: Every differing semantic field, in priority order (input side,
            status, output side); for a one-sided row, the existing span's
            semantic fields against None.
        order: Position in the original run's execution order: the index of
            the row's start event (input-side, missing, extra and unrecorded
            divergences) or end event (output and status divergences, placed
            after the span's subtree) in the enter/exit walk of the merged
            tree. Lower is earlier.
    """

    type: DivergenceType
    row: int
    original: Span | None
    replay: Span | None
    fields: tuple[FieldChange, ...]
    order: int

    @property
    def kind(self) -> SpanKind:
        """The span kind of whichever side exists (the original's when both do)."""
        span = self.original if self.original is not None else self.replay
        assert span is not None
        return span.kind


@dataclass(slots=True)
class TraceDiff:
    """Everything the CLI and the TUI show about two runs.

    Attributes:
        original: The original run.
        replay: The replay.
        rows: The merged span tree, depth first: children right after their
            parent, in execution order.
        row_divergence: One entry per row: its divergence or None.
        divergences: The divergences sorted by ``order`` (the original run's
            execution order); ``divergences[0]`` is the first divergence.
        divergent_rows: Row indices having a divergence, ascending (for
            next/previous navigation).
        ignored_by_config: Field changes the user's noise rules hid (``diff.noise.apply_rules``).
        noise_error: Why the user's noise config was not applied (it is malformed: the message
            names the file and the key), or None.
        not_comparable: The fields the two formats record differently, left out of the comparison
            (``diff.comparable``): each with its path, why, and on how many pairs.
        redacted_with: The redaction key id the unredacted side was redacted with before comparing
            (the redacted side's key, given to ``diff_traces``), or None.
    """

    original: Trace
    replay: Trace
    rows: list[AlignedRow]
    row_divergence: list[Divergence | None]
    divergences: list[Divergence]
    divergent_rows: list[int] = field(default_factory=list)
    ignored_by_config: int = 0
    noise_error: str | None = None
    not_comparable: tuple[Unchecked, ...] = ()
    redacted_with: str | None = None

    @property
    def first(self) -> Divergence | None:
        """The first divergence in the original run's execution order, or None."""
        return self.divergences[0] if self.divergences else None

    @property
    def rows_expected(self) -> int:
        """How many rows the pair has (``len(rows)``; for the first rows of a pair still being read, an
        upper bound: the spans of both files), to size the row-number column once."""
        return len(self.rows)

    @property
    def retries(self) -> list[int]:
        """Rows of failed attempts that a successful retry followed (``AlignedRow.retry``), ascending:
        one-sided, and not divergences."""
        return [n for n, row in enumerate(self.rows) if row.retry]

    @property
    def partial(self) -> bool:
        """True for the first rows of a pair still being read (``core.early.EarlyTraceDiff``): later
        rows and divergences are not known yet."""
        return False


def diff_traces(original: Trace, replay: Trace, *, original_side: object = None,
                not_compared: Callable[[list[AlignedRow]], Container[int]] | None = None,
                redactor: object = None) -> TraceDiff:
    """Align two runs and find every divergence.

    Args:
        original: The recorded run.
        replay: The run to compare against it.
        original_side: ``align.prepare(original.spans)`` kept from an earlier call, to diff the same
            original again without preparing it again (watch mode).
        not_compared: Given the aligned rows, the row indices whose divergence is not wanted: they get
            none (watch mode: rows the replay has not reached yet, shown as pending).
        redactor: The redacting side's redactor (``core.harness.redact.Redactor``: ``key_id`` and
            ``value(v, tool=)``), to compare one side's redaction tokens with the other side's raw
            values; used only when its key is the one that side's header names (``diff.comparable``).

    Returns:
        The ``TraceDiff``. Unpaired tool/retrieval spans are ``unrecorded_call``
        (replay only) / ``missing_call`` (original only); other kinds
        ``extra_span`` / ``missing_span``. Paired spans diverge by the policy
        of ``tracetui.core.diff.compare``, less what the two formats record differently
        (``tracetui.core.diff.comparable``: ``TraceDiff.not_comparable`` says what). When the two
        formats record the run's structure differently (``comparable.flat_views``: framework steps on
        one side only), ``TraceDiff.original`` / ``.replay`` are the two runs as their root and calls.

    The cyclic garbage collector is paused while the rows are built: they hold
    no cycles, and full collections over two loaded traces would dominate.
    """
    gc_was = gc.isenabled()
    gc.disable()
    try:
        flat = flat_views(original, replay) if original_side is None and not_compared is None else None
        if flat is not None:  # two formats, one recording framework steps: the run and its calls compared
            original, replay = flat[0], flat[1]
            rows, same = _flat_rows(original, replay)
        else:
            rows, same = align_with_same_keys(original.spans, replay.spans, original_side=original_side)
        fit = Comparability(original, replay, redactor)
        diff = _diff_rows(original, replay, rows, same, not_compared(rows) if not_compared is not None else (),
                          fit if fit.active else None)
        diff.not_comparable, diff.redacted_with = fit.unchecked(), fit.redacted_with
        if flat is not None:
            diff.not_comparable = (flat[2], *diff.not_comparable)
        return diff
    finally:
        promote_young_objects()  # the rows: long-lived, acyclic (see there)
        if gc_was:
            gc.enable()


def _flat_rows(original: Trace, replay: Trace) -> tuple[list[AlignedRow], list[bool]]:
    """Rows of two ``comparable.flat_views``: the two roots paired (each view's run), then their calls
    aligned as one sibling list below them."""
    calls = [[replace(s, parent_id=None) for s in t.spans[1:]] for t in (original, replay)]
    rows, same = align_with_same_keys(calls[0], calls[1])
    out = [AlignedRow(0, 0, 0)]
    out.extend(AlignedRow(None if r.original is None else r.original + 1, None if r.replay is None else r.replay + 1,
                          r.depth + 1, r.retry) for r in rows)
    return out, [False, *same]


def _diff_rows(original: Trace, replay: Trace, rows: list[AlignedRow], same: Sequence[bool] | None = None,
               skip: Container[int] = (), fit: Comparability | None = None) -> TraceDiff:
    """Compare the aligned rows of two traces (``diff_traces`` minus ``align``).

    ``same`` (from ``align_with_same_keys``) tells which pairs have equal span
    keys, so the comparison skips the fields they prove equal; None: no pair
    is known to. ``fit``: what the two formats can compare (each pair adjusted by it first).
    """
    ospans, rspans = original.spans, replay.spans
    oi = list(map(_ORIGINAL, rows))
    ri = list(map(_REPLAY, rows))
    found: list[tuple[int, DivergenceType, tuple[FieldChange, ...]]] = []
    for n in screen_pairs(ospans, rspans, oi, ri, repeat(False) if same is None else same):
        if skip and n in skip:
            continue
        o, r = oi[n], ri[n]
        if (o is None or r is None) and rows[n].retry:
            continue  # a failed attempt retried successfully: a retry, not a divergence
        if o is not None and r is not None:
            a, b = (ospans[o], rspans[r]) if fit is None else fit.adjust(ospans[o], rspans[r])
            dtype, fields = compare_pair(a, b, False if same is None else same[n])
            if dtype is not None:
                found.append((n, dtype, fields))
        elif o is not None:
            found.append((n, *one_sided(ospans[o], original=True)))
        elif r is not None:
            found.append((n, *one_sided(rspans[r], original=False)))
    row_divergence: list[Divergence | None] = [None] * len(rows)
    divergences: list[Divergence] = []
    n_out = sum(1 for _, dtype, _ in found if field_side(dtype) == OUTPUT)
    ends = _subtree_ends(rows) if n_out > _SCAN_LIMIT else None
    fork: list[tuple[int, int, bool, Divergence]] = []
    for n, dtype, fields in found:
        row = rows[n]
        if field_side(dtype) == OUTPUT or _is_wrapper(rows, n):
            e = ends[n] if ends is not None else _subtree_end(rows, n)
            order = 2 * e - 1 - row.depth
        else:
            order = 2 * n - row.depth
        d = Divergence(
            type=dtype,
            row=n,
            original=ospans[row.original] if row.original is not None else None,
            replay=rspans[row.replay] if row.replay is not None else None,
            fields=fields,
            order=order,
        )
        row_divergence[n] = d
        divergences.append(d)
        if order == 2 * n - row.depth:
            fork.append((n, row.depth, row.replay is not None, d))
    for n, d in replay_first(sorted(fork, key=lambda e: e[0])).items():
        divergences[divergences.index(row_divergence[n])] = row_divergence[n] = d
    divergences.sort(key=lambda d: d.order)
    return TraceDiff(
        original=original,
        replay=replay,
        rows=rows,
        row_divergence=row_divergence,
        divergences=divergences,
        divergent_rows=[n for n, _, _ in found],
    )


def replay_first(entries: Sequence[tuple[int, int, bool, Divergence]]) -> dict[int, Divergence]:
    """Where the runs fork, the replay's own steps come first.

    ``entries``: ``(position, depth, replay_side, divergence)`` of every divergent row ordered at its
    start (one-sided or input-side, not a wrapper), by position; ``replay_side``: the row has a
    replay span (the replay did something there: an unrecorded call, other arguments). In each
    block of consecutive such rows (positions in a row, none shallower than the first: a fork,
    what the original did there against what the replay did instead) that holds both kinds, the
    replay-side rows take the block's first places in the order and the original-only rows
    follow, each kind's relative order kept. The first divergence is
    thus the first thing the replay did that the original did not; the spans the original had after
    that point are its consequences, reported after it (docs/format.md, "Divergence order and the
    first divergence").

    Returns:
        Position -> the divergence with its new ``order``, for the rows whose order changed.
    """
    moved: dict[int, Divergence] = {}
    k, total = 0, len(entries)
    while k < total:
        pos, depth = entries[k][0], entries[k][1]
        end = k + 1
        while end < total and entries[end][0] == entries[end - 1][0] + 1 and entries[end][1] >= depth:
            end += 1
        block = entries[k:end]
        replay_side = [e for e in block if e[2]]
        if replay_side and len(replay_side) < len(block):
            slots = sorted(e[3].order for e in block)
            for e, order in zip(replay_side + [e for e in block if not e[2]], slots):
                d = e[3]
                if d.order != order:
                    moved[e[0]] = Divergence(d.type, d.row, d.original, d.replay, d.fields, order)
        k = end
    return moved


def one_sided(span: Span, *, original: bool) -> tuple[DivergenceType, tuple[FieldChange, ...]]:
    """The divergence of a span without counterpart: a call (tool, retrieval) or another span."""
    if original:
        dtype = DivergenceType.MISSING_CALL if span.kind in _CALL_KINDS else DivergenceType.MISSING_SPAN
    else:
        dtype = DivergenceType.UNRECORDED_CALL if span.kind in _CALL_KINDS else DivergenceType.EXTRA_SPAN
    return dtype, one_sided_fields(span, original=original)


def row_divergence(originals: Sequence[Span], replays: Sequence[Span], o: int | None, r: int | None,
                   same_key: bool) -> tuple[DivergenceType, tuple[FieldChange, ...]] | None:
    """The divergence type and fields of one aligned row (``diff_traces``' verdict for it), or None.

    Args:
        originals, replays: The spans by index (``__getitem__`` only).
        o, r: The row's original and replay span indices (None: that side has none).
        same_key: Whether alignment found the two span keys equal.
    """
    if o is not None and r is not None:
        a, b = originals[o], replays[r]
        if same_key and type(a) is LazySpan and type(b) is LazySpan and a._sig is not None and a._sig == b._sig \
                and a.kind is b.kind and a.status is b.status and a.error_type == b.error_type:
            return None  # screen_pairs' first test, without its call (the walk of core.early: a call a row)
        if not screen_pairs(originals, replays, (o,), (r,), (same_key,)):
            return None
        dtype, fields = compare_pair(a, b, same_key)
        return None if dtype is None else (dtype, fields)
    if o is not None:
        return one_sided(originals[o], original=True)
    if r is not None:
        return one_sided(replays[r], original=False)
    return None


def _is_wrapper(rows: list[AlignedRow], n: int) -> bool:
    """A one-sided root whose subtree holds paired rows: instrumentation around the shared run.

    Such a span (an HTTP server span in production that a replay harness does
    not have) is reported, but at its end: it is not a step the run took
    differently, and must not hide the first divergence inside it.
    """
    row = rows[n]
    if row.depth != 0 or (row.original is not None and row.replay is not None):
        return False
    end = _subtree_end(rows, n)
    return any(r.original is not None and r.replay is not None for r in rows[n + 1:end])


_SCAN_LIMIT = 64
"""Output-side divergences above which subtree ends come from one pass over all rows
(scanning each subtree would be quadratic on a deep chain that diverges everywhere)."""


def _subtree_end(rows: list[AlignedRow], n: int) -> int:
    """Index of the first row after row ``n``'s subtree (the next row no deeper).

    Divergence order: every row has a start event and an end event, numbered in
    walk order (start, the subtree's events, end). Rows are depth first and a
    row's depth is its number of ancestors, so before the start of row ``n``
    come ``n`` starts and the ends of the ``n - depth`` earlier rows that are
    not its ancestors: start = ``2n - depth``; if its subtree ends before row
    ``e``, end = ``2e - 1 - depth``. A replay-only row thus sits where the
    original would have run it: after its preceding sibling's subtree, or at
    its parent's start.
    """
    depth = rows[n].depth
    e = n + 1
    total = len(rows)
    while e < total and rows[e].depth > depth:
        e += 1
    return e


def _subtree_ends(rows: list[AlignedRow]) -> list[int]:
    """``_subtree_end`` of every row, in one pass with a stack of open rows."""
    ends = [len(rows)] * len(rows)
    open_rows: list[int] = []
    for n, row in enumerate(rows):
        depth = row.depth
        while open_rows and rows[open_rows[-1]].depth >= depth:
            ends[open_rows.pop()] = n
        open_rows.append(n)
    return ends
