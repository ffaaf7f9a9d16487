"""Which aligned rows the view shows: span-kind and divergent-only filters, folded subtrees, and match spans.

No Textual here. Everything is sized for 1M rows: per-row data lives in ``bytes``/``bytearray``
(one byte a row) and the visible-rows mapping in an ``array('q')`` (8 bytes a row), built with
C-speed primitives (``bytes.translate``, ``bytearray.find``, slice assignment, ``itertools.compress``),
never one Python object per row.

Rows are the merged tree depth first (``AlignedRow.depth``): the subtree of row ``h`` is the run of
rows after it that are deeper than it, up to ``subtree_end(depths, h)`` (exclusive).

Combining the filters and the folds (``selected_flags`` -> ``selected_rows`` -> ``visible_rows``): a row is *selected* when it passes the kind
filter (either side's span kind is selected) and, under divergent-only, holds a divergence. A folded
row hides its subtree; its own line stands for that subtree, so it is shown when it or any row of its
subtree is selected. The visible rows are the selected rows not inside a folded subtree, plus those
fold lines, ascending.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from functools import lru_cache
from collections.abc import Iterable, Sequence
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING

from tracetui.core.model import SpanKind

if TYPE_CHECKING:
    from tracetui.core.diff.align import AlignedRow
    from tracetui.core.diff import TraceDiff

KIND_ORDER: tuple[SpanKind, ...] = (
    SpanKind.LLM, SpanKind.TOOL, SpanKind.RETRIEVAL, SpanKind.DECISION, SpanKind.AGENT, SpanKind.MEMORY,
    SpanKind.OTHER,
)
"""The span kinds in the order the filter lists them."""

KIND_BITS: dict[SpanKind, int] = {kind: 1 << i for i, kind in enumerate(KIND_ORDER)}
"""Bit of each kind in a row code (bits 0-6)."""

_ORIGINAL, _REPLAY = attrgetter("original"), attrgetter("replay")

DEPTH_CAP = 255
"""Depths are kept as bytes; a tree deeper than this keeps a list instead (``row_depths``)."""

Depths = Sequence[int]
"""Per-row depths: ``bytes`` (every depth under 256) or a list."""


def row_depths(rows: Sequence[AlignedRow]) -> Depths:
    """``AlignedRow.depth`` of every row: one byte a row (a list past depth 255)."""
    depths = [r.depth for r in rows]
    try:
        return bytes(depths)
    except ValueError:
        return depths


def row_kind_codes(diff: TraceDiff) -> bytes:
    """Per row, the ``KIND_BITS`` of its original and replay spans' kinds OR-ed (one byte a row)."""
    bit = KIND_BITS.__getitem__
    kind = attrgetter("kind")
    original = bytes(map(bit, map(kind, diff.original.spans)))
    replay = bytes(map(bit, map(kind, diff.replay.spans)))
    return bytes([
        (0 if o is None else original[o]) | (0 if r is None else replay[r])
        for o, r in zip(map(_ORIGINAL, diff.rows), map(_REPLAY, diff.rows), strict=True)
    ])


def kind_counts(codes: bytes) -> dict[SpanKind, int]:
    """Rows holding each kind on either side (a row whose sides differ in kind counts under both)."""
    counts = [0] * 256
    for code in set(codes):
        counts[code] = codes.count(code)
    return {kind: sum(counts[c] for c in range(256) if c & bit) for kind, bit in KIND_BITS.items()}


def kinds_mask(kinds: Iterable[SpanKind]) -> int:
    """The OR of ``KIND_BITS`` of ``kinds``."""
    mask = 0
    for kind in kinds:
        mask |= KIND_BITS[kind]
    return mask


def selected_flags(
    n: int, *, codes: bytes | None = None, kinds: Iterable[SpanKind] | None = None,
    divergent: Sequence[int] | None = None,
) -> bytearray | None:
    """One byte a row, 1 where the row is selected: a kind in ``kinds`` on either side, and (when ``divergent``
    is given) a divergent row. None when every row is selected (no filter).

    Args:
        n: Row count.
        codes: ``row_kind_codes`` (needed when ``kinds`` is given).
        kinds: Kinds to show, or None for every kind.
        divergent: Divergent rows (ascending) when only they are shown, else None.
    """
    flags: bytearray | None = None
    if kinds is not None:
        if codes is None:
            raise ValueError("a kind filter needs the rows' kind codes")
        mask = kinds_mask(kinds)
        table = bytes(1 if c & mask else 0 for c in range(256))
        flags = bytearray(codes.translate(table))
    if divergent is not None:
        if flags is None:
            flags = bytearray(n)
            for r in divergent:
                flags[r] = 1
        else:
            keep = bytearray(n)
            for r in divergent:
                keep[r] = flags[r]
            flags = keep
    return flags


@lru_cache(maxsize=512)
def _at_most(depth: int) -> bytes:
    """Translate table: byte ``c`` -> 1 when ``c <= depth``, else 0."""
    return bytes(1 if c <= depth else 0 for c in range(256))


def subtree_end(depths: Depths, row: int) -> int:
    """The row just past ``row``'s subtree: the first later row at most as deep as ``row`` (``len(depths)`` when
    none). ``subtree_end(d, r) - r - 1`` rows are its descendants."""
    n = len(depths)
    d = depths[row]
    if isinstance(depths, bytes):
        table = _at_most(d)
        # Growing windows: most subtrees are small, so translating the whole trace per fold is waste.
        start, step = row + 1, 256
        while start < n:
            stop = min(n, start + step)
            hit = depths[start:stop].translate(table).find(1)
            if hit >= 0:
                return start + hit
            start, step = stop, step * 8
        return n
    for j in range(row + 1, n):
        if depths[j] <= d:
            return j
    return n


def subtree_ends(depths: Depths, rows: Iterable[int]) -> dict[int, int]:
    """``subtree_end`` of each of ``rows``, in one pass over the trace per distinct depth (collapse to depth)."""
    by_depth: dict[int, list[int]] = {}
    for r in rows:
        by_depth.setdefault(depths[r], []).append(r)
    n = len(depths)
    out: dict[int, int] = {}
    for d, heads in by_depth.items():
        if not isinstance(depths, bytes):
            out.update((h, subtree_end(depths, h)) for h in heads)
            continue
        le = depths.translate(_at_most(d))
        for h in heads:
            end = le.find(1, h + 1)
            out[h] = n if end < 0 else end
    return out


def has_children(depths: Depths, row: int) -> bool:
    """True when the row after ``row`` is deeper than it (its subtree is not empty)."""
    return row + 1 < len(depths) and depths[row + 1] > depths[row]


def parent_row(depths: Depths, row: int) -> int | None:
    """The nearest earlier row shallower than ``row`` (its parent in the merged tree), or None for a root."""
    d = depths[row]
    if d == 0:
        return None
    if isinstance(depths, bytes):
        table = _at_most(d - 1)
        stop, step = row, 256
        while stop > 0:
            start = max(0, stop - step)
            hit = depths[start:stop].translate(table).rfind(1)
            if hit >= 0:
                return start + hit
            stop, step = start, step * 8
        return None
    for j in range(row - 1, -1, -1):
        if depths[j] < d:
            return j
    return None


def heads_at_depth(depths: Depths, depth: int) -> list[int]:
    """Rows to fold so that no row deeper than ``depth`` shows: every row at most ``depth`` deep whose next row
    is deeper than ``depth`` (in a tree without depth gaps: the rows at ``depth`` that have children)."""
    n = len(depths)
    if isinstance(depths, bytes):
        if depth >= 255:
            return []
        deep = depths.translate(_at_most(depth))  # 1: at most ``depth`` deep
        # r is a head when r is shallow (1) and r+1 deep (0): find each "\x01\x00".
        heads: list[int] = []
        i = deep.find(b"\x01\x00")
        while i >= 0:
            heads.append(i)
            i = deep.find(b"\x01\x00", i + 1)
        return heads
    return [r for r in range(n - 1) if depths[r] <= depth < depths[r + 1]]


def fold_ranges(folds: Iterable[int], ends: dict[int, int]) -> list[tuple[int, int]]:
    """The outermost folded subtrees: ``(head, end)`` ascending, disjoint; a fold inside another is left out.

    Args:
        folds: Folded rows.
        ends: ``subtree_end`` of each folded row.
    """
    out: list[tuple[int, int]] = []
    reach = -1
    for head in sorted(folds):
        if head < reach:
            continue  # inside an outer fold
        end = ends[head]
        if end > head + 1:
            out.append((head, end))
            reach = end
    return out


def selected_rows(flags: bytearray | None) -> array | None:
    """The rows ``flags`` selects, ascending (``array('q')``), or None for every row. About 0.1 s per 1M rows:
    computed when a filter changes, not when a fold does."""
    if flags is None:
        return None
    return array("q", compress(range(len(flags)), flags))


_ARANGE = array("q")


def _arange(n: int) -> array:
    """``array('q', range(m))`` for some ``m >= n``, grown once and kept (slices of it copy at memcpy speed)."""
    global _ARANGE
    if len(_ARANGE) < n:
        _ARANGE = array("q", range(max(n, 2 * len(_ARANGE))))
    return _ARANGE


def visible_rows(n: int, base: Sequence[int] | None, ranges: Sequence[tuple[int, int]]) -> array | None:
    """The rows shown, ascending (``array('q')``), or None when every row is.

    Cost: O(folds · log n) in Python plus a memcpy of the result, so a fold at 1M rows stays a few ms.

    Args:
        n: Row count.
        base: ``selected_rows`` (None: every row selected).
        ranges: ``fold_ranges``: outermost folds, ``(head, end)``.
    """
    if not ranges:
        return None if base is None else (base if isinstance(base, array) else array("q", base))
    out = array("q")
    pos = 0
    if base is None:  # every row selected: row r is at r, so no search is needed
        src = _arange(n)
        for head, end in ranges:
            out.extend(src[pos:head + 1])
            pos = end
        out.extend(src[pos:n])
        return out
    src, stop = base, len(base)
    for head, end in ranges:
        i = bisect_left(src, head, pos, stop)
        j = bisect_left(src, end, i, stop)
        out.extend(src[pos:i])
        if j > i:  # the head, or a row of its subtree, is selected: the head's line stands for them
            out.append(head)
        pos = j
    out.extend(src[pos:stop])
    return out


def count_in(rows: Sequence[int], start: int, stop: int) -> int:
    """How many of ``rows`` (ascending) lie in ``[start, stop)``."""
    return bisect_left(rows, stop) - bisect_left(rows, start)


def match_spans(text: str, term: str) -> list[tuple[int, int]]:
    """Where ``term`` occurs in ``text``, any case, without overlaps: ``[(start, end), ...]`` character offsets."""
    if not term or not text:
        return []
    low, needle = text.lower(), term.lower()
    if len(low) != len(text):  # a character whose lowercase is longer (İ): keep offsets aligned with ``text``
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    spans: list[tuple[int, int]] = []
    i = low.find(needle)
    while i >= 0:
        spans.append((i, i + len(needle)))
        i = low.find(needle, i + len(needle))
    return spans
