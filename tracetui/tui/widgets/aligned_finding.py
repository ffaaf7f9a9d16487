"""What the aligned view's finding keys do: the divergent-only and span-kind filters, folds, search, jumps.

A mixin of ``AlignedView`` (``aligned_view.py``), which owns the rows, the
visible-rows mapping (``_recompute_visible``), the cursor, the rendering and
the search worker; the actions here change the filters, folds and search term
through that mapping and say what they did.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from tracetui.core.model import SpanKind
from tracetui.tui import rowfilter
from tracetui.tui.formatting import visible
from tracetui.tui.rowfilter import count_in
from tracetui.tui.search import SearchIndex, SpanLookupError, find_span, step_match

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff


class FindingMixin:
    """The finding keys of ``AlignedView`` (filters, folds, search, jump to a span); see the module docstring."""

    # Provided by AlignedView (declared for readers and type checkers).
    _diff: TraceDiff | None
    _divergent: list[int]
    _folds: dict[int, int]
    _kinds: frozenset[SpanKind] | None
    _divergent_only: bool
    _index: SearchIndex | None
    _visible_matches: list[int] | None
    _selected: Any
    search_term: str
    search_matches: list[int]
    message: str
    cursor_row: int
    app: Any

    # -- finding things: the divergent-only filter, search, jump to a span id --

    def _say(self, message: str, title: str, *, severity: str = "information") -> None:
        self.message = message
        from tracetui.tui.notices import notify_replacing

        notify_replacing(self.app, visible(message), title=title, severity=severity)  # one "match 3 of 7", not 7

    def _still_reading(self, what: str) -> bool:
        """True (the app says so) while only the first rows of a big pair are shown (``TraceDiff.partial``)."""
        still = getattr(self.app, "still_reading", None)
        return bool(still is not None and still(what))

    def _reveal(self, row: int) -> None:
        """Make ``row`` shown: drop the filters when they hide it, expand the collapsed subtrees holding it."""
        said: list[str] = []
        refilter = not self.selected(row)
        if refilter:
            self._divergent_only, self._kinds = False, None
            said.append(f"row {row} is filtered out: filters off")
        opened = [head for head, end in self._folds.items() if head < row < end]
        for head in opened:
            del self._folds[head]
        if opened:
            said.append(f"expanded {len(opened)} collapsed subtree{'' if len(opened) == 1 else 's'} to show row {row}")
        self._recompute_visible(filters=refilter)
        if said:
            self._say(f"{'; '.join(said)} ({self.filter_summary})", "filter")

    def _refilter(self, prefix: str | None = None, *, filters: bool = True) -> None:
        """Recompute the rows shown, keep the cursor on its row (or the nearest one shown), say what is hidden
        (after ``prefix`` when given). ``filters=False``: only the folds changed."""
        self._recompute_visible(filters=filters)
        self._say(f"{prefix} ({self.filter_summary})" if prefix else self.filter_summary, "filter")
        self._settle_cursor()

    def _settle_cursor(self) -> None:
        target = self.row_at_line(self._nearest_line(self.cursor_row))
        if target is None:
            return
        if target != self.cursor_row:
            self.cursor_row = target
        self.call_after_refresh(self._scroll_to_row, target, center=True)

    def action_filter_divergent(self) -> None:
        """Show only the divergent rows (the cursor goes to the nearest one), or every row again."""
        if self._diff is None or self._still_reading("Filters work"):
            return
        if not self._divergent_only:
            if not self._divergent:
                self.app.bell()
                self._say("no divergent rows: nothing to filter", "filter")
                return
            self._divergent_only = True
            self._recompute_visible()
            message = f"{self.filter_summary} (not their parents); v shows all rows"
        else:
            self._divergent_only = False
            self._recompute_visible()
            message = self.filter_summary
        self._say(message, "filter")
        self._settle_cursor()

    def set_kinds(self, kinds: frozenset[SpanKind] | set[SpanKind] | None) -> None:
        """Show only rows holding one of ``kinds`` on either side (None or every kind: no kind filter); the
        cursor stays on its row, or goes to the nearest one shown."""
        if self._diff is None:
            return
        chosen = None if kinds is None or set(kinds) >= set(SpanKind) else frozenset(kinds)
        if chosen == self._kinds:
            return
        self._kinds = chosen
        self._refilter()

    def action_kind_filter(self) -> None:
        """Open the span-kind filter: a checkbox and a row count per kind; applying it calls ``set_kinds``."""
        if self._diff is None or self._still_reading("Filters work"):
            return
        from tracetui.tui.screens.kind_filter import KindFilter

        counts = rowfilter.kind_counts(self.kind_codes())
        shown = self._kinds if self._kinds is not None else frozenset(SpanKind)
        self.app.push_screen(KindFilter(counts, shown), self._kinds_chosen)

    def _kinds_chosen(self, kinds: frozenset[SpanKind] | None) -> None:
        if kinds is not None:
            self.set_kinds(kinds)

    # -- folds: collapse and expand subtrees ------------------------------------

    def fold(self, row: int) -> bool:
        """Collapse ``row``'s subtree into its line; False (nothing done) when it has no children."""
        depths = self._row_depths()
        if self._diff is None or not 0 <= row < len(depths) or not rowfilter.has_children(depths, row):
            return False
        self._folds[row] = rowfilter.subtree_end(depths, row)
        return True

    def _collapse(self, row: int) -> bool:
        """Collapse ``row``'s subtree, redraw and say so; False (nothing done) when it has no children."""
        if not self.fold(row):
            return False
        self._recompute_visible(filters=False)
        end = self._folds[row]
        self._say(f"row {row}: {end - row - 1:,} rows collapsed, {count_in(self._divergent, row + 1, end):,} "
                  f"divergent ({self.filter_summary})", "fold")
        self._settle_cursor()
        return True

    def _expand(self, row: int) -> None:
        """Expand collapsed ``row``, redraw and say so."""
        del self._folds[row]
        self._refilter(f"row {row} expanded", filters=False)

    def action_toggle_fold(self) -> None:
        """Collapse the subtree under the cursor into one line, or expand it again; bell on a row without one."""
        row = self.cursor_row
        if self._diff is None:
            return
        if row in self._folds:
            self._expand(row)
        elif self._still_reading("Collapsing works"):
            return
        elif not self._collapse(row):
            self.app.bell()
            self._say(f"row {row} has no children to collapse", "fold")

    def action_fold_left(self) -> None:
        """Collapse the cursor row's subtree; when collapsed already (or childless), go to its parent."""
        row = self.cursor_row
        if self._diff is None or self._still_reading("Collapsing works"):
            return
        if row not in self._folds and self._collapse(row):
            return
        depths = self._row_depths()
        parent = rowfilter.parent_row(depths, row) if 0 <= row < len(depths) else None
        while parent is not None and self.line_of_row(parent) is None:
            parent = rowfilter.parent_row(depths, parent)  # filtered out: the nearest ancestor shown
        if parent is None:
            self.app.bell()
            return
        self.cursor_row = parent

    def action_fold_right(self) -> None:
        """Expand the cursor row's collapsed subtree; when expanded, go to its first child shown."""
        row = self.cursor_row
        if self._diff is None:
            return
        if row in self._folds:
            self._expand(row)
            return
        depths = self._row_depths()
        line = self.line_of_row(row)
        below = self.row_at_line(line + 1) if line is not None else None
        if below is not None and rowfilter.has_children(depths, row) and below < rowfilter.subtree_end(depths, row):
            self.cursor_row = below
        else:
            self.app.bell()

    def action_expand_all(self) -> None:
        """Expand every collapsed subtree."""
        if self._diff is None or self._still_reading("Folds work"):
            return
        if not self._folds:
            self._say(f"nothing collapsed ({self.filter_summary})", "fold")
            return
        count = len(self._folds)
        self._folds = {}
        self._refilter(f"{count:,} collapsed subtree{'' if count == 1 else 's'} expanded", filters=False)

    def collapse_to_depth(self, depth: int) -> int:
        """Collapse every subtree so that no row deeper than ``depth`` shows (replaces the folds); returns how
        many subtrees were collapsed."""
        depths = self._row_depths()
        heads = rowfilter.heads_at_depth(depths, depth)
        self._folds = rowfilter.subtree_ends(depths, heads)
        self._recompute_visible(filters=False)
        self._settle_cursor()
        return len(heads)

    def action_collapse_to_depth(self) -> None:
        """Collapse every subtree at the cursor row's depth: only rows that deep or shallower stay."""
        if self._diff is None or not self.row_count or self._still_reading("Collapsing works"):
            return
        depth = self._row_depths()[self.cursor_row]
        count = self.collapse_to_depth(depth)
        self._say(f"depth {depth}: {count:,} subtrees collapsed ({self.filter_summary}); Z expands all", "fold")

    def action_search(self) -> None:
        """Open the search bar; the text index starts building meanwhile (once per pair)."""
        if self._diff is None or self._still_reading("Search works"):
            return
        from tracetui.tui.screens.search_bar import SEARCH, SearchBar

        if self._index is None or self._index.diff is not self._diff:
            self._index = SearchIndex(self._diff)
        if not self._index.complete:
            self._search(self._index, None)
        self.app.push_screen(SearchBar(SEARCH, self.search_term), self._search_submitted)

    def _set_highlight(self, term: str) -> None:
        """Highlight ``term`` in the rows' labels and the detail pane ("" clears)."""
        if term == self._highlight:
            return
        self._highlight = term
        self._strips.clear()
        self.refresh()
        if self.is_attached:
            for detail in self.screen.query("SpanDetail"):  # by name: span_detail imports this module
                detail.set_highlight(term)  # type: ignore[attr-defined]

    @property
    def highlight(self) -> str:
        """The search term highlighted in the rows and the detail pane ("" when none)."""
        return self._highlight

    def action_clear_search(self) -> None:
        """Forget the last search: no highlighted matches; ``]``/``[`` then ask for a search."""
        if not self.search_term and not self._highlight:
            return
        self.search_term = ""
        self.search_matches = []
        self._visible_matches = None
        self._set_highlight("")
        self._say("search cleared", "search")

    def _search_submitted(self, term: str | None) -> None:
        if term is None or self._diff is None:
            return
        if not term.strip():
            self.action_clear_search()
            return
        if self._index is None or self._index.diff is not self._diff:
            self._index = SearchIndex(self._diff)
        self.search_term = term
        if self._index.streaming:  # too big to keep: this search scans every span again
            self._say(f"searching {self.row_count:,} rows for {term!r}…", "search")
        self._search(self._index, term)

    def _matches_shown(self) -> list[int]:
        """The matches the filters keep (a match in a collapsed subtree counts: stepping to it expands it)."""
        if self._selected is None:
            return self.search_matches
        if self._visible_matches is None:
            selected = self._selected
            self._visible_matches = [r for r in self.search_matches if selected[r]]
        return self._visible_matches

    def action_step_match(self, direction: int) -> None:
        """Cursor to the next (1) or previous (-1) match of the last search, wrapping around."""
        if self._diff is None:
            return
        if not self.search_term:
            self.app.bell()
            self._say("no search yet: press / to search", "search")
            return
        if self._index is None or self._index.diff is not self._diff:  # a new pair since: search it again
            self._search_submitted(self.search_term)
            return
        if not self.search_matches:
            self.app.bell()
            self._say(f"no match for {self.search_term!r}", "search", severity="warning")
            return
        self._step_match(direction)

    def _step_match(self, direction: int) -> None:
        matches = self._matches_shown()
        step = step_match(matches, self.cursor_row, direction)
        if step is None:
            self.app.bell()
            self._say(f"{len(self.search_matches):,} matches for {self.search_term!r}, none among the rows the "
                      f"filters keep ({self.filter_summary})", "search")
            return
        row, wrapped = step
        self.cursor_row = row
        where = bisect_left(matches, row) + 1
        note = (" (wrapped)" if wrapped else "") + (" among the rows shown" if self._selected is not None else "")
        self._say(f"match {where:,} of {len(matches):,} for {self.search_term!r}{note}", "search")

    def action_jump_to_span(self) -> None:
        """Open the bar in span-id mode: enter puts the cursor on that span's row."""
        if self._diff is None or self._still_reading("Jumping to a span id works"):
            return
        from tracetui.tui.screens.search_bar import SPAN, SearchBar

        self.app.push_screen(SearchBar(SPAN), self.jump_to_span)

    def jump_to_span(self, query: str | None) -> None:
        """Cursor to the row of the span whose id is, or uniquely starts with, ``query`` (either side);
        a notification says why when there is none or several."""
        if query is None or self._diff is None or not query.strip():
            return
        try:
            hit = find_span(self._diff, query)
        except SpanLookupError as exc:
            self.app.bell()
            self._say(str(exc), "jump to span", severity="warning")
            return
        self.cursor_row = hit.row
        self._say(f"{hit.side} span {hit.span_id}: row {hit.row}", "jump to span")
