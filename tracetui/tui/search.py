"""Finding things in a ``TraceDiff``: a text index of the aligned rows, match stepping, span-id lookup, breadcrumbs.

No Textual here: the aligned view builds a ``SearchIndex`` in a thread worker
(``SearchIndex.build`` is resumable and cancellable), then asks it for the rows
holding a term.

What a row's text holds, for both sides: the span name, the tool name, and the
canonical JSON (keys sorted) of the span's semantic section (``Span.data``: a
tool's arguments and output, an LLM call's messages and answer, a decision's
value...), all lowercased. A search is a case-insensitive substring match.
"""

from __future__ import annotations

import threading
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.model import Span

_DUMP = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS

BATCH = 2048
"""Rows indexed (or scanned) between two cancellation checks."""

INDEX_BUDGET = 128_000_000
"""Characters of row text kept in memory at most. Past it (a 100k-span pair with long LLM transcripts holds
several hundred million) the index keeps nothing and each search scans the spans again in its worker:
slower searches, but the memory stays the traces' own."""


def fold_text(text: str) -> str:
    """``text`` as search compares it: NFC-normalised and case-folded (``café`` typed as one character finds
    ``cafe`` + a combining accent; ``STRASSE`` finds ``straße``)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def span_text(span: Span) -> str:
    """The searchable text of one span: name, tool name and the canonical JSON of its data, NFC-normalised and
    case-folded (``fold_text``)."""
    try:
        data = orjson.dumps(span.data, option=_DUMP, default=str).decode("utf-8", "replace")
    except (TypeError, orjson.JSONEncodeError):
        data = repr(span.data)
    tool = span.tool_name
    return fold_text(f"{span.name}\n{tool}\n{data}" if tool else f"{span.name}\n{data}")


def row_text(diff: TraceDiff, row: int) -> str:
    """The searchable text of aligned row ``row``: both sides' ``span_text``, original first (once when equal)."""
    aligned = diff.rows[row]
    left = span_text(diff.original.spans[aligned.original]) if aligned.original is not None else ""
    right = span_text(diff.replay.spans[aligned.replay]) if aligned.replay is not None else ""
    if not left or left == right:
        return right
    return f"{left}\n{right}" if right else left


class SearchIndex:
    """Lowercase text of every aligned row of ``diff``, built on demand.

    ``build`` may run in a thread and be cancelled; the next call resumes where
    the last one stopped. Thread-safe (one builder or scanner at a time).
    Past ``budget`` characters the texts are dropped (``streaming``) and
    ``find`` computes each row's text again as it scans.
    """

    def __init__(self, diff: TraceDiff, budget: int = INDEX_BUDGET) -> None:
        self.diff = diff
        self.budget = budget
        self.streaming = False
        """True when the texts did not fit in ``budget``: every search scans the spans."""
        self._texts: list[str] = []
        self._chars = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Rows indexed so far."""
        return len(self._texts)

    @property
    def complete(self) -> bool:
        """Ready to search: every row indexed, or too big to keep (``streaming``)."""
        return self.streaming or len(self._texts) >= len(self.diff.rows)

    def build(self, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Index the rows not indexed yet; stop early when ``cancelled()`` turns true.

        Returns:
            True when the index is ready (``complete``).
        """
        with self._lock:
            total = len(self.diff.rows)
            texts = self._texts
            while not self.streaming and len(texts) < total:
                if cancelled():
                    return False
                start = len(texts)
                batch = [row_text(self.diff, n) for n in range(start, min(total, start + BATCH))]
                self._chars += sum(map(len, batch))
                if self._chars > self.budget:
                    self.streaming = True
                    texts.clear()
                    break
                texts.extend(batch)
            return True

    def find(self, term: str, cancelled: Callable[[], bool] = lambda: False) -> list[int] | None:
        """Rows whose text holds ``term`` (case-insensitive), ascending; builds what is missing first.

        Returns:
            The rows, or None when ``cancelled()`` turned true first.
        """
        if not self.build(cancelled):
            return None
        needle = fold_text(term)
        if not needle:
            return []
        if not self.streaming:
            return [n for n, text in enumerate(self._texts) if needle in text]
        found: list[int] = []
        total = len(self.diff.rows)
        for start in range(0, total, BATCH):
            if cancelled():
                return None
            found.extend(n for n in range(start, min(total, start + BATCH)) if needle in row_text(self.diff, n))
        return found


def step_match(matches: Sequence[int], cursor: int, direction: int) -> tuple[int, bool] | None:
    """The match after (``direction`` 1) or before (-1) row ``cursor``, wrapping around.

    Args:
        matches: Matching rows, ascending.
        cursor: The row under the cursor (need not be a match).
        direction: 1 for the next match, -1 for the previous one.

    Returns:
        ``(row, wrapped)``, or None when there is no match. A single match that
        is the cursor's own row is returned with ``wrapped`` True.
    """
    if not matches:
        return None
    if direction >= 0:
        i = bisect_right(matches, cursor)
        return (matches[i], False) if i < len(matches) else (matches[0], True)
    i = bisect_left(matches, cursor)
    return (matches[i - 1], False) if i > 0 else (matches[-1], True)


@dataclass(frozen=True, slots=True)
class SpanHit:
    """Where a span id was found: the aligned ``row``, the ``side`` (``original``/``replay``) and the full id."""

    row: int
    side: str
    span_id: str


class SpanLookupError(ValueError):
    """No span, or several, answer a span-id query (the message says which)."""


def find_span(diff: TraceDiff, query: str) -> SpanHit:
    """The row of the span whose id is ``query``, or the only id starting with it (NFC-normalised, case-folded:
    ``fold_text``), on either side.

    An exact id wins over prefixes; the original side is tried before the replay.

    Raises:
        SpanLookupError: Empty query, no such id, or a prefix shared by several ids.
    """
    query = query.strip()
    if not query:
        raise SpanLookupError("type a span id, or the start of one")
    wanted = fold_text(query)  # NFC-normalised, case-folded: canonically equal ids match
    exact: SpanHit | None = None
    prefixed: dict[str, SpanHit] = {}
    for side, trace in (("original", diff.original), ("replay", diff.replay)):
        spans = trace.spans
        for n, row in enumerate(diff.rows):
            index = row.original if side == "original" else row.replay
            if index is None:
                continue
            span_id = spans[index].span_id
            if span_id == query:
                exact = SpanHit(n, side, span_id)
                break
            folded = fold_text(span_id)
            if folded == wanted and exact is None and span_id not in prefixed:  # canonically equal, any case
                prefixed[span_id] = SpanHit(n, side, span_id)
            elif folded.startswith(wanted) and span_id not in prefixed:
                prefixed[span_id] = SpanHit(n, side, span_id)
        if exact is not None:
            return exact
    if not prefixed:
        raise SpanLookupError(f"no span id is or starts with {query!r}")
    if len(prefixed) > 1:
        some = ", ".join(sorted(prefixed)[:4])
        more = ", …" if len(prefixed) > 4 else ""
        raise SpanLookupError(f"{len(prefixed)} span ids start with {query!r}: {some}{more}; type more of it")
    return next(iter(prefixed.values()))


def breadcrumb(diff: TraceDiff, row: int) -> list[str]:
    """Names of the spans from the root down to row ``row``'s span (its original side, else its replay side).

    Follows ``parent_id`` within that side's trace; stops at a missing parent or a cycle.
    """
    if not 0 <= row < len(diff.rows):
        return []
    aligned = diff.rows[row]
    trace, index = (diff.original, aligned.original) if aligned.original is not None else (diff.replay, aligned.replay)
    if index is None:
        return []
    by_id = {s.span_id: s for s in trace.spans}
    span: Span | None = trace.spans[index]
    path: list[str] = []
    seen: set[str] = set()
    while span is not None and span.span_id not in seen:
        seen.add(span.span_id)
        path.append(span.name)
        span = by_id.get(span.parent_id) if span.parent_id is not None else None
    return path[::-1]
