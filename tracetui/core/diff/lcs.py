"""Longest common subsequence of two key sequences, in time that grows with their differences.

Myers, "An O(ND) Difference Algorithm and Its Variations" (Algorithmica, 1986):
O((N+M)·D) for D edits, with equal runs found by galloping slice compares
(C-level list equality). Beyond a cap on D, rapidfuzz's banded Levenshtein
(``score_hint``) takes over: pure-Python Myers costs ~D² steps.
``../shared/design/performance.md`` gives the measured budgets.
"""

from __future__ import annotations

from typing import Hashable, Sequence

from rapidfuzz.distance import Levenshtein

__all__ = ["equal_run", "equal_run_back", "matching_blocks", "myers"]


def equal_run(x: Sequence[Hashable], y: Sequence[Hashable], i: int, j: int, limit: int) -> int:
    """Length of the equal run ``x[i:] == y[j:]``, at most ``limit``; galloping slices."""
    if limit <= 0 or x[i] != y[j]:
        return 0
    k, step = 0, 1
    while k + step <= limit and x[i + k:i + k + step] == y[j + k:j + k + step]:
        k += step
        step <<= 1
    while step > 1:
        step >>= 1
        if k + step <= limit and x[i + k:i + k + step] == y[j + k:j + k + step]:
            k += step
    return k


def equal_run_back(x: Sequence[Hashable], y: Sequence[Hashable], n: int, m: int, limit: int) -> int:
    """Length of the equal run ending at ``x[n-1]``, ``y[m-1]``, at most ``limit``."""
    if limit <= 0 or x[n - 1] != y[m - 1]:
        return 0
    k, step = 0, 1
    while k + step <= limit and x[n - k - step:n - k] == y[m - k - step:m - k]:
        k += step
        step <<= 1
    while step > 1:
        step >>= 1
        if k + step <= limit and x[n - k - step:n - k] == y[m - k - step:m - k]:
            k += step
    return k


def matching_blocks(x: Sequence[Hashable], y: Sequence[Hashable], max_d: int) -> list[tuple[int, int, int]]:
    """Equal runs ``(i, j, size)`` of a longest common subsequence, in order."""
    if not x or not y or set(x).isdisjoint(y):
        return []
    blocks = myers(x, y, max_d)
    if blocks is not None:
        return blocks
    # rapidfuzz compares elements by hash: give it small ints, exact by construction.
    ids: dict[Hashable, int] = {}
    xi = [ids.setdefault(k, len(ids)) for k in x]
    yi = [ids.setdefault(k, len(ids)) for k in y]
    return [
        (op.src_start, op.dest_start, op.src_end - op.src_start)
        for op in Levenshtein.opcodes(xi, yi, score_hint=max_d)
        if op.tag == "equal"
    ]


def myers(x: Sequence[Hashable], y: Sequence[Hashable], max_d: int) -> list[tuple[int, int, int]] | None:
    """Myers' greedy LCS (1986), O((N+M)·D); None when more than ``max_d`` edits.

    ``v[k]`` is the furthest x reached on diagonal ``k = x - y`` (-1: none).
    Points never leave the grid: a move that would is not taken. One snapshot
    of ``v`` per edit count is kept for the backtrack (O(D²) memory).
    """
    n, m = len(x), len(y)
    max_d = min(max_d, n + m)
    off = max_d + 3
    v = [-1] * (2 * max_d + 7)
    trace: list[list[int]] = []
    for d in range(max_d + 1):
        for k in range(-d, d + 1, 2):
            if d == 0:
                px = 0
            else:
                down = v[off + k + 1]  # from diagonal k+1, one step in y
                right = v[off + k - 1]  # from diagonal k-1, one step in x
                if down >= 0 and down - k > m:
                    down = -1
                if right >= 0:
                    right += 1
                    if right > n:
                        right = -1
                px = down if down >= right else right
                if px < 0:
                    continue
            py = px - k
            if px < n and py < m and x[px] == y[py]:
                px += equal_run(x, y, px, py, min(n - px, m - py))
            v[off + k] = px
            if px >= n and px - k >= m:
                return _backtrack(trace, x, y, d)
        trace.append(v[off - d - 2:off + d + 3])  # k in [-d-2, d+2], index k + d + 2
    return None


def _backtrack(trace: list[list[int]], x: Sequence[Hashable], y: Sequence[Hashable], dend: int) -> list[tuple[int, int, int]]:
    n, m = len(x), len(y)
    px, py = n, m
    blocks: list[tuple[int, int, int]] = []
    for d in range(dend, 0, -1):
        prev = trace[d - 1]  # k in [-d-1, d+1], index k + d + 1
        k = px - py
        down = prev[k + d + 2]
        right = prev[k + d]
        if down >= 0 and down - k > m:
            down = -1
        if right >= 0:
            right += 1
            if right > n:
                right = -1
        if down >= right:
            sx, sy = down, down - k  # snake start after the down move
            nx, ny = down, down - k - 1
        else:
            sx, sy = right, right - k
            nx, ny = right - 1, right - k
        if px > sx:
            blocks.append((sx, sy, px - sx))
        px, py = nx, ny
    if px > 0:
        blocks.append((0, 0, px))
    blocks.reverse()
    return blocks
