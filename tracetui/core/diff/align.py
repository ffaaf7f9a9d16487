"""Tree-aware alignment: which original span pairs with which replay span.

The two runs are aligned level by level: the root lists first, then, for every
paired span, the children of both sides (``Span.parent_id``), in execution
order (``seq``). A span left unpaired takes its whole subtree with it, one-sided;
an extra child never unpairs its parent nor shifts its later siblings.

One sibling list is aligned on compact span keys (kind + name + identity, never
the output): the equal prefix and suffix are trimmed with
galloping slice compares, then Myers' O((N+M)·D) diff finds the longest common
subsequence, capped at ``MAX_D`` edits (beyond it, rapidfuzz's banded
Levenshtein). Spans left over between equal runs ("replace blocks") are
re-paired when they are the same kind of call (same tool, same LLM kind...),
preferring the most similar ones (rapidfuzz ``fuzz.ratio``). Source of the
method and the budgets: ``../shared/design/performance.md``.

Everything is iterative: a 10k-deep span tree aligns without recursion.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import Any, Hashable, Iterator, Sequence

from rapidfuzz import fuzz

from tracetui.core.diff.lcs import equal_run, equal_run_back, matching_blocks
from tracetui.core.diff.siblings import concurrent_order, settle_retries
from tracetui.core.diff.sides import Side, prepared_side, span_key
from tracetui.core.model import Span

__all__ = ["DP_CELLS", "MAX_D", "AlignedRow", "align", "align_with_keys", "align_with_same_keys", "prepare", "prepared_side", "span_key",
           "walk_rows"]

MAX_D = 200
"""Edits an exact Myers diff of one sibling list may find before handing over
to rapidfuzz's banded Levenshtein (pure-Python Myers costs ~D² steps)."""

DP_CELLS = 4096
"""Largest replace block (original spans × replay spans) re-paired by the
similarity-weighted dynamic programme; bigger blocks are paired by call kind
alone (an LCS on the pairing groups), in order."""

SIMILARITY_CUTOFF = 30.0
"""``fuzz.ratio`` below this counts as no similarity (the pair is still allowed)."""


@dataclass(slots=True)
class AlignedRow:
    """One row of the merged tree (not frozen: a frozen __init__ costs 2x on 100k rows).

    Attributes:
        original: Index into the original trace's ``spans``, or None (replay only).
        replay: Index into the replay trace's ``spans``, or None (original only).
        depth: Nesting depth in the merged tree (0 for roots), for indentation.
        retry: A one-sided row that is a failed attempt of a call retried successfully (or a span
            below one): reported as a retry, not a missing or extra span (``diff.siblings``).
    """

    original: int | None
    replay: int | None
    depth: int
    retry: bool = False


def align(original: Sequence[Span], replay: Sequence[Span]) -> list[AlignedRow]:
    """Align two runs' spans into one merged tree.

    Args:
        original: The original run's spans, in ``seq`` order (``Trace.spans``).
        replay: The replay's spans, in ``seq`` order.

    Returns:
        Rows in depth-first order: each row is followed by its children's rows,
        in execution order. Every span of each side appears in exactly one row;
        a paired row has both indices, a one-sided row one index and None. A
        span whose parent is not in its trace is a root; a parent cycle is
        broken at its earliest span.
    """
    return _align(original, replay)[0]


def align_with_keys(
    original: Sequence[Span], replay: Sequence[Span]
) -> tuple[list[AlignedRow], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``align``, also returning each side's span keys (``span_key`` of each span)."""
    rows, _same, a, b = _align(original, replay)
    return rows, a.keys, b.keys


def prepare(spans: Sequence[Span]) -> Any:
    """One run's spans prepared for alignment (span keys, children lists): pass it to
    ``align_with_same_keys(spans, ..., original_side=)`` to align the same spans again without
    preparing them again (watch mode: one original against a growing replay; ~0.1 s per 10k spans)."""
    return Side(spans)


def align_with_same_keys(original: Sequence[Span], replay: Sequence[Span], *,
                         original_side: Any = None) -> tuple[list[AlignedRow], list[bool]]:
    """``align``, and per row whether it pairs two spans of equal ``span_key`` (False if one-sided).

    Equal keys prove ``compare.KEY_FIELDS`` equal; the alignment compared the
    keys already, and comparing them again costs ~0.7 µs a row. ``original_side``: ``prepare(original)``
    from an earlier call (ignored unless prepared from this very ``original`` sequence).
    """
    rows, same, _a, _b = _align(original, replay, original_side)
    return rows, same


def _align(original: Sequence[Span], replay: Sequence[Span],
           a: Side | None = None) -> tuple[list[AlignedRow], list[bool], Side, Side]:
    intern: dict[Hashable, int] = {}  # pairing groups -> small ints
    if a is None or a.spans is not original:
        a = Side(original)
    else:
        a.new_pairing()  # its groups were interned against another call's table
    b = Side(replay)
    rows, same = _walk(a, b, intern)
    if a.acyclic and b.acyclic:
        return rows, same, a, b
    na = sum(1 for r in rows if r.original is not None)
    nb = sum(1 for r in rows if r.replay is not None)
    if na == len(original) and nb == len(replay):
        return rows, same, a, b
    # Some spans sit in a parent cycle (no root reaches them): re-root and redo.
    for side, n, attr in ((a, len(original), "original"), (b, len(replay), "replay")):
        reached = [False] * n
        for r in rows:
            idx = getattr(r, attr)
            if idx is not None:
                reached[idx] = True
        side.repair(reached)
    rows, same = _walk(a, b, intern)
    return rows, same, a, b


def wraps(side: Side, root: int, other_root: Span) -> bool:
    """True when ``root`` has a child of the other run's root kind and name: it wraps that run."""
    kids = side.children[root]
    return bool(kids) and any(
        side.spans[k].kind is other_root.kind and side.spans[k].name == other_root.name for k in kids  # type: ignore[union-attr]
    )


def _walk(a: Side, b: Side, intern: dict[Hashable, int]) -> tuple[list[AlignedRow], list[bool]]:
    """All rows of ``walk_rows``, and per row whether its two span keys are equal."""
    same: list[bool] = []
    rows = list(walk_rows(a, b, intern, same))
    return rows, same


def walk_rows(a: Side, b: Side, intern: dict[Hashable, int], same: list[bool]) -> Iterator[AlignedRow]:
    """Yield the merged tree's rows depth-first, computing as little as the rows asked for need.

    Iterative (an explicit stack, no recursion). Before yielding each row it appends to ``same``
    whether the row pairs two spans of equal keys. Keys, children lists and spans are read only
    as each sibling list is aligned, so a caller that stops early (``core.early``: the first
    divergence of a pair read lazily) reads only the spans the rows so far needed; ``list()`` of
    it is ``align``'s rows (a generator costs ~4 ms per 100k rows over a list built in place).
    """
    append, extend = same.append, same.extend
    achildren, bchildren = a.children, b.children
    achild, bchild = achildren.__getitem__, bchildren.__getitem__
    akey, bkey = a.keys.__getitem__, b.keys.__getitem__
    row = AlignedRow
    aretry, bretry = a.retry, b.retry
    stack: list[tuple[Any, int]] = []
    if len(a.roots) == 1 and len(b.roots) == 1:
        ra, rb = a.roots[0], b.roots[0]
        if a.spans[ra].kind is b.spans[rb].kind:
            # One root each, of one kind: both are the run's entry point, whatever it is named
            # (a renamed agent must not make the whole run one-sided).
            stack.append((iter([(ra, rb)]), 0))
        elif wraps(a, ra, b.spans[rb]):
            # The original's root wraps the run (an HTTP server span above the agent, which a
            # replay harness does not have): it stands alone, its children align with the replay's root.
            append(False)
            yield row(ra, None, 0)
            stack.append((iter(align_lists(achildren[ra] or [], [rb], a, b, intern)), 1))
        elif wraps(b, rb, a.spans[ra]):
            append(False)
            yield row(None, rb, 0)
            stack.append((iter(align_lists([ra], bchildren[rb] or [], a, b, intern)), 1))
    if not stack:
        stack.append((iter(align_lists(a.roots, b.roots, a, b, intern)), 0))
    while stack:
        it, depth = stack[-1]
        for o, r in it:
            if o is not None and r is not None:
                append(akey(o) == bkey(r))
                yield row(o, r, depth)
            elif (o is not None and o in aretry) or (r is not None and r in bretry):
                append(False)
                yield row(o, r, depth, True)
                aretry.update(achildren[o] or () if o is not None else ())  # its subtree: the attempt's
                bretry.update(bchildren[r] or () if r is not None else ())
            else:
                append(False)
                yield row(o, r, depth)
            oc = achildren[o] if o is not None else None
            rc = bchildren[r] if r is not None else None
            if oc is None and rc is None:
                continue
            if oc is not None and rc is not None:
                if (
                    len(oc) == len(rc)
                    and not any(map(achild, oc))
                    and not any(map(bchild, rc))
                    and list(map(akey, oc)) == list(map(bkey, rc))
                ):
                    # The usual step: equal lists of leaves pair one to one, no descent.
                    extend(repeat(True, len(oc)))
                    yield from map(row, oc, rc, repeat(depth + 1))
                    continue
                pairs = align_lists(oc, rc, a, b, intern)
            elif oc is not None:
                pairs = [(c, None) for c in oc]
            else:
                pairs = [(None, c) for c in rc]  # type: ignore[union-attr]
            stack.append((iter(pairs), depth + 1))
            break
        else:
            stack.pop()


# -- one sibling list -------------------------------------------------------------

_Pair = tuple["int | None", "int | None"]


def align_lists(ai: list[int], bi: list[int], a: Side, b: Side, intern: dict[Hashable, int],
                retries: bool = True) -> list[_Pair]:
    """Merge two sibling lists (span indices) into ``(original, replay)`` pairs, in order.

    Lists that differ are first settled by ``diff.siblings``: failed attempts retried successfully
    aligned apart (``retries``), the replay's concurrent groups put in the original's order.
    """
    if not ai:
        return [(None, j) for j in bi]
    if not bi:
        return [(i, None) for i in ai]
    ak, bk = a.keys, b.keys
    x = [ak[i] for i in ai]
    y = [bk[j] for j in bi]
    if x == y:
        return list(zip(ai, bi))
    if retries:
        ra, rb = settle_retries(ai, bi, a, b)
        if ra is not None or rb is not None:
            return _with_retries(ai, bi, ra, rb, a, b, intern)
    reordered = concurrent_order(x, bi, y, b)
    if reordered is not None:
        bi = reordered
        y = [bk[j] for j in bi]
        if x == y:
            return list(zip(ai, bi))
    n, m = len(x), len(y)
    pre = equal_run(x, y, 0, 0, min(n, m))
    suf = equal_run_back(x, y, n, m, min(n, m) - pre)
    out: list[_Pair] = list(zip(ai[:pre], bi[:pre]))
    xm, ym = x[pre:n - suf], y[pre:m - suf]
    i0 = j0 = 0
    for i, j, size in matching_blocks(xm, ym, MAX_D):
        out.extend(_pair_block(ai[pre + i0:pre + i], bi[pre + j0:pre + j], a, b, intern))
        out.extend(zip(ai[pre + i:pre + i + size], bi[pre + j:pre + j + size]))
        i0, j0 = i + size, j + size
    out.extend(_pair_block(ai[pre + i0:n - suf], bi[pre + j0:m - suf], a, b, intern))
    out.extend(zip(ai[n - suf:], bi[m - suf:]))
    return out


def _with_retries(ai: list[int], bi: list[int], ra: tuple[list[int], dict[int, list[int]]] | None,
                  rb: tuple[list[int], dict[int, list[int]]] | None, a: Side, b: Side,
                  intern: dict[Hashable, int]) -> list[_Pair]:
    """Align the lists without their failed attempts, then put each attempt back before its success:
    paired with the other side's attempts where both have some, else one-sided and marked retry."""
    ka, atta = ra if ra is not None else (ai, {})
    kb, attb = rb if rb is not None else (bi, {})
    out: list[_Pair] = []
    none: list[int] = []
    for o, r in align_lists(ka, kb, a, b, intern, retries=False):
        xo = atta.get(o, none) if o is not None else none  # type: ignore[arg-type]
        xr = attb.get(r, none) if r is not None else none  # type: ignore[arg-type]
        if xo or xr:
            k = min(len(xo), len(xr))
            out.extend(zip(xo[:k], xr[:k]))
            out.extend((i, None) for i in xo[k:])
            out.extend((None, j) for j in xr[k:])
            a.retry.update(xo[k:])
            b.retry.update(xr[k:])
        out.append((o, r))
    return out


# -- replace blocks ----------------------------------------------------------------


def _pair_block(ai: list[int], bi: list[int], a: Side, b: Side, intern: dict[Hashable, int]) -> list[_Pair]:
    """Re-pair a replace block: same-group spans pair up, most similar first, in order.

    Returns the block's rows in order: between two pairs, the original-only
    spans first, then the replay-only ones.
    """
    if not ai or not bi:
        return [(i, None) for i in ai] + [(None, j) for j in bi]
    ga = [a.group(i, intern) for i in ai]
    gb = [b.group(j, intern) for j in bi]
    if set(ga).isdisjoint(gb):
        matches: list[tuple[int, int]] = []
    elif len(ai) * len(bi) <= DP_CELLS:
        matches = _best_pairs(ai, bi, ga, gb, a, b)
    else:
        matches = [(i + t, j + t) for i, j, size in matching_blocks(ga, gb, MAX_D) for t in range(size)]
    out: list[_Pair] = []
    i0 = j0 = 0
    for i, j in matches:
        out.extend((ai[t], None) for t in range(i0, i))
        out.extend((None, bi[t]) for t in range(j0, j))
        out.append((ai[i], bi[j]))
        i0, j0 = i + 1, j + 1
    out.extend((ai[t], None) for t in range(i0, len(ai)))
    out.extend((None, bi[t]) for t in range(j0, len(bi)))
    return out


def _best_pairs(ai: list[int], bi: list[int], ga: list[int], gb: list[int], a: Side, b: Side) -> list[tuple[int, int]]:
    """Order-preserving pairing of maximum weight (positions into ``ai``, ``bi``).

    A pair is allowed when both spans share a group; its weight is 100 plus the
    ``fuzz.ratio`` of their texts (0 below ``SIMILARITY_CUTOFF``), so one pair more
    wins unless the pairs it displaces are over 100 points more similar in total
    (two near-identical pairs outweigh three of which one is close), and similarity
    breaks ties. Classic O(n·m) dynamic programme.
    """
    n, m = len(ai), len(bi)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        gi = ga[i - 1]
        row, up = score[i], score[i - 1]
        for j in range(1, m + 1):
            best = up[j] if up[j] >= row[j - 1] else row[j - 1]
            if gb[j - 1] == gi:
                w = 100.0 + fuzz.ratio(a.text(ai[i - 1]), b.text(bi[j - 1]), score_cutoff=SIMILARITY_CUTOFF)
                if up[j - 1] + w > best:
                    best = up[j - 1] + w
            row[j] = best
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        s = score[i][j]
        if s == score[i - 1][j]:
            i -= 1
        elif s == score[i][j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
    pairs.reverse()
    return pairs
