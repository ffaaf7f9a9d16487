"""AlignedView: the original and replay spans side by side, one terminal line per aligned row.

A Line-API ``ScrollView`` (``../shared/design/style.md`` §3, Appendix A): it
renders only the visible rows, caches rendered strips in an LRU keyed by
``(row, width, cursor)``, and repaints only the two lines a cursor move
touches, so it opens 100k rows as fast as 10.

Split by concern: ``aligned_layout`` (columns, marks, the header; its names are importable from
here), ``aligned_rows`` (drawing a row, a mixin), ``aligned_finding`` (filters, folds, search,
jumps, a mixin); this module holds the widget: its rows, bindings, cursor and messages.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Sequence

from rich.style import Style
from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from tracetui.core.errors import SourceChanged
from tracetui.core.model import SpanKind
from tracetui.tui import rowfilter
from tracetui.tui.rowfilter import KIND_ORDER
from tracetui.tui.search import SearchIndex
from tracetui.tui.widgets.aligned_finding import FindingMixin
from tracetui.tui.widgets.aligned_layout import (
    CHANGED,
    EQUAL,
    EXTRA,
    FIRST_MARK,
    FOLD_MARK,
    LABEL_MARKS,
    MARKS,
    MATCH_MARK,
    MISSING,
    SEPARATOR,
    TYPE_COLUMN_MIN_WIDTH,
    TYPE_WIDTH,
    UNKNOWN_LABEL_MARK,
    AlignedHeader,
    ColumnLayout,
    column_layout,
    row_category,
)
from tracetui.tui.widgets.aligned_rows import RowsMixin

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff

__all__ = [
    "CHANGED", "EQUAL", "EXTRA", "FIRST_MARK", "FOLD_MARK", "LABEL_MARKS", "MARKS", "MATCH_MARK", "MISSING",
    "SEPARATOR", "TYPE_COLUMN_MIN_WIDTH", "TYPE_WIDTH", "UNKNOWN_LABEL_MARK", "AlignedHeader", "AlignedView",
    "ColumnLayout", "column_layout", "row_category",
]


class AlignedView(FindingMixin, RowsMixin, ScrollView, can_focus=True, inherit_bindings=False):
    """Side-by-side aligned spans of a ``TraceDiff``; one terminal line per ``AlignedRow``.

    Attributes down (``set_diff``), messages up (``RowHighlighted`` on every
    cursor move, ``RowSelected`` on enter or double click).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "aligned-view--cursor",
        "aligned-view--changed",
        "aligned-view--extra",
        "aligned-view--missing",
        "aligned-view--absent",
        "aligned-view--number",
        "aligned-view--separator",
        "aligned-view--error",
        "aligned-view--first",
        "aligned-view--match",
        "aligned-view--fold",
        *(f"aligned-view--{cls}" for _, cls in LABEL_MARKS.values()),
        *(f"aligned-view--kind-{k.value}" for k in SpanKind),
    }
    """Line styles, set in ``tui/app.tcss``: ``--changed``/``--extra``/``--missing``
    give a row tint (background) and the mark colour (color)."""

    DEFAULT_CSS = """
    AlignedView {
        overflow-x: hidden;
        overflow-y: scroll;
    }
    AlignedView > .aligned-view--match { background: $accent 55%; color: $text; text-style: bold; }
    AlignedView > .aligned-view--fold { color: $text-accent; text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "first_divergence", "First div", id="first-divergence",
                tooltip="Cursor to the first divergence (where the replay first went another way)"),
        Binding("n", "next_divergence", "Next div", id="next-divergence", tooltip="Cursor to the next divergent row"),
        Binding("p", "previous_divergence", "Prev div", id="previous-divergence",
                tooltip="Cursor to the previous divergent row"),
        Binding("enter", "select_row", "Full pair", id="open-pair", tooltip="Every field of the pair, in full"),
        Binding("j,down", "move(1)", "Down", show=False, id="cursor-down", tooltip="Cursor down one row"),
        Binding("k,up", "move(-1)", "Up", show=False, id="cursor-up", tooltip="Cursor up one row"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="page-down", tooltip="Cursor down one screenful"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="page-up", tooltip="Cursor up one screenful"),
        Binding("home", "first_row", "First row", show=False, id="first-row", tooltip="Cursor to the first row"),
        Binding("end", "last_row", "Last row", show=False, id="last-row", tooltip="Cursor to the last row"),
        Binding("slash", "search", "Search", show=False, id="search",
                tooltip="Search span names, tool names, arguments and outputs (both sides, any case)"),
        Binding("right_square_bracket", "step_match(1)", "Next match", show=False, id="next-match",
                tooltip="Cursor to the next search match (wraps around)"),
        Binding("left_square_bracket", "step_match(-1)", "Prev match", show=False, id="previous-match",
                tooltip="Cursor to the previous search match (wraps around)"),
        Binding("v", "filter_divergent", "Divergent only", show=False, id="filter-divergent",
                tooltip="Show only the divergent rows, or all rows again"),
        Binding("colon", "jump_to_span", "Jump to span", show=False, id="jump-to-span",
                tooltip="Cursor to a span by its id, or the first characters of it (either side)"),
        Binding("escape", "clear_search", "Clear search", show=False, id="clear-search",
                tooltip="Clear the search: no more highlighted matches (an empty search does the same)"),
        Binding("s", "kind_filter", "Span kinds", show=False, id="filter-kinds",
                tooltip="Show only some span kinds (llm, tool, retrieval...): a list with a row count per kind"),
        Binding("z", "toggle_fold", "Fold", show=False, id="toggle-fold",
                tooltip="Collapse the subtree under the cursor into one line, or expand it again"),
        Binding("left", "fold_left", "Collapse/parent", show=False, id="fold-or-parent",
                tooltip="Collapse the subtree under the cursor; on a collapsed or childless row, go to its parent"),
        Binding("right", "fold_right", "Expand/child", show=False, id="expand-or-child",
                tooltip="Expand the collapsed subtree under the cursor; on an expanded one, go to its first child"),
        Binding("C", "collapse_to_depth", "Collapse level", show=False, id="collapse-to-depth",
                tooltip="Collapse every subtree at the cursor row's depth: only rows that deep or shallower show"),
        Binding("Z", "expand_all", "Expand all", show=False, id="expand-all", tooltip="Expand every collapsed subtree"),
    ]
    """Navigation keys; ``inherit_bindings=False`` drops ScrollView's own scrolling keys."""

    cursor_row: reactive[int] = reactive(0, repaint=False, always_update=False)
    """Index of the aligned row under the cursor."""

    @dataclass
    class RowHighlighted(Message):
        """The cursor moved to ``row``."""

        row: int

        def can_replace(self, message: Message) -> bool:
            # Holding j down: only the latest position matters to the detail pane.
            return isinstance(message, AlignedView.RowHighlighted)

    @dataclass
    class RowSelected(Message):
        """The user asked for the full pair at ``row`` (enter, double click)."""

        row: int

    @dataclass
    class FiltersChanged(Message):
        """The rows shown changed (``v``, span kinds, folds): ``summary`` says what is hidden (empty: nothing)."""

        summary: str

    @dataclass
    class _SearchDone(Message):
        """The search worker found ``rows`` holding ``term`` in ``index``."""

        index: SearchIndex
        term: str
        rows: list[int]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._diff: TraceDiff | None = None
        self._summary_posted = ""
        self._divergent: list[int] = []
        self._first_row: int | None = None
        self.single = False
        """One trace alone (``tracetui FILE``): one column, no divergence keys."""
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(1024)
        self._palette: dict[str, Style] | None = None
        self._labels: dict[int, str] = {}
        # What is shown: one mapping from the filters and the folds (_recompute_visible).
        self._shown: Sequence[int] | None = None  # rows shown, ascending (an array('q'); None: every row)
        self._divergent_only = False  # v
        self._kinds: frozenset[SpanKind] | None = None  # span kinds shown (None: every kind)
        self._folds: dict[int, int] = {}  # folded row -> its subtree_end
        self._selected: bytearray | None = None  # per row 1 when the filters keep it (None: no filter)
        self._selected_rows: Sequence[int] | None = None  # the rows it keeps, ascending (an array('q'))
        self._fold_ranges: list[tuple[int, int]] = []  # outermost folds, (row, subtree end)
        self._depths: rowfilter.Depths | None = None  # per diff and row count, built on first use
        self._codes: bytes | None = None
        self._rows_seen: tuple[int, int] = (0, 0)  # (id(diff), row count) the caches above were built for
        self._highlight = ""  # the search term highlighted in the rows ("" none)
        self._index: SearchIndex | None = None
        self._visible_matches: list[int] | None = None
        self.search_term = ""
        """The last search submitted (as typed)."""
        self.search_matches: list[int] = []
        """Rows matching ``search_term``, ascending (every row, shown or filtered out)."""
        self.message = ""
        """The last thing a search, filter or jump said (also shown as a notification)."""
        self.placeholder = "loading…"
        """Shown on the first line while there is no diff (a plain string, drawn literally)."""

    # -- data ---------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """Number of aligned rows (0 until a diff is set)."""
        return 0 if self._diff is None else len(self._diff.rows)

    @property
    def cached_lines(self) -> int:
        """Rendered lines held in the strip cache (only what was drawn: a screenful or so, not every row)."""
        return len(self._strips)

    @property
    def divergent_rows(self) -> Sequence[int]:
        """Rows holding a divergence, ascending."""
        return self._divergent

    @property
    def row_labels(self) -> dict[int, str]:
        """Reviewer label name by row (rows with a label only)."""
        return self._labels

    def set_labels(self, labels: dict[int, str]) -> None:
        """Mark labelled rows: ``{row: label name}`` (``tracetui.core.diff.labels.LABELS``); replaces the previous marks."""
        if labels == self._labels:
            return
        self._labels = dict(labels)
        self._strips.clear()
        self.refresh()

    def set_diff(self, diff: TraceDiff) -> None:
        """Show ``diff``; the cursor goes to the first divergence (row 0 when there is none).

        Args:
            diff: The pair's ``TraceDiff``.
        """
        self._diff = diff
        self._labels = {}  # rows of another pair; the app sets this pair's labels
        self._shown = None
        self._selected = self._selected_rows = None
        self._divergent_only = False
        self._kinds = None
        self._folds = {}
        self._fold_ranges = []
        self._depths = self._codes = None
        self._rows_seen = (id(diff), len(diff.rows))
        self._index = None
        self._visible_matches = None
        self.search_matches = []
        self._set_highlight("")
        self._divergent = sorted(diff.divergent_rows)
        first = diff.first
        self._first_row = first.row if first is not None else None
        self._strips.clear()
        self.virtual_size = Size(0, len(diff.rows))
        if self._summary_posted:  # the filters are off again
            self._summary_posted = ""
            self.post_message(self.FiltersChanged(""))
        target = self._first_row if self._first_row is not None else 0
        # set_reactive: no watcher; the data changed under every line anyway.
        self.set_reactive(AlignedView.cursor_row, target)
        self.refresh()
        self._scroll_to_row(target, center=True)
        self.call_after_refresh(self._scroll_to_row, target, center=True)
        self.post_message(self.RowHighlighted(target))

    def update_diff(self, diff: TraceDiff) -> None:
        """Show ``diff``, a grown version of the diff shown (watch mode): rows keep their index, so the
        cursor row and the scroll offset stay where they are (unlike ``set_diff``); labels, search term
        and filters are kept (the rows they show are recomputed).

        Args:
            diff: The new ``TraceDiff``; its first ``row_count`` rows are the rows shown now.
        """
        self._diff = diff
        self._divergent = sorted(diff.divergent_rows)
        first = diff.first
        self._first_row = first.row if first is not None else None
        self._recompute_visible()  # filters and folds: the rows they show grew too (no notification)
        if self.cursor_row >= len(diff.rows):  # only after a re-layout (a replaced file): clamp
            self.set_reactive(AlignedView.cursor_row, max(0, len(diff.rows) - 1))
        self.refresh()
        self.post_message(self.RowHighlighted(self.cursor_row))  # the row's replay side may have arrived

    # -- lines: the rows shown (filters and folds, one mapping) -----------------

    @property
    def filtered(self) -> bool:
        """True while only the divergent rows are shown (``v``)."""
        return self._divergent_only

    @property
    def kinds_shown(self) -> frozenset[SpanKind] | None:
        """The span kinds shown (``s``), or None for every kind."""
        return self._kinds

    @property
    def folds(self) -> dict[int, int]:
        """Collapsed rows: ``{row: subtree end}`` (the rows after it up to the end, exclusive, are its subtree)."""
        return self._folds

    @property
    def line_count(self) -> int:
        """Lines of the view: the rows shown."""
        return len(self._shown) if self._shown is not None else self.row_count

    def row_at_line(self, line: int) -> int | None:
        """The row drawn on content line ``line`` (0 = the first row shown), or None past the end."""
        if not 0 <= line < self.line_count:
            return None
        return self._shown[line] if self._shown is not None else line

    def line_of_row(self, row: int) -> int | None:
        """The content line drawing ``row``, or None when a filter or a fold hides it."""
        if self._shown is None:
            return row if 0 <= row < self.row_count else None
        i = bisect_left(self._shown, row)
        return i if i < len(self._shown) and self._shown[i] == row else None

    def _refresh_caches(self) -> None:
        """Drop the per-row caches (depths, kind codes, subtree ends) when the diff or its row count changed."""
        diff = self._diff
        key = (id(diff), len(diff.rows)) if diff is not None else (0, 0)
        if key != self._rows_seen:
            self._rows_seen = key
            self._depths = self._codes = None
            if self._folds:  # a subtree at the end may have grown
                self._folds = rowfilter.subtree_ends(self._row_depths(), self._folds)

    def _row_depths(self) -> rowfilter.Depths:
        if self._depths is None:
            self._depths = rowfilter.row_depths(self._diff.rows if self._diff is not None else [])
        return self._depths

    def kind_codes(self) -> bytes:
        """``rowfilter.row_kind_codes`` of the diff shown (built once per diff and row count)."""
        self._refresh_caches()
        if self._codes is None:
            self._codes = rowfilter.row_kind_codes(self._diff) if self._diff is not None else b""
        return self._codes

    def _recompute_visible(self, *, filters: bool = True) -> None:
        """Rebuild the rows shown from the filters (``v``, span kinds) and the folds; redraw.

        The one place the mapping changes: call it after anything that changes those, or the rows
        (a diff that grew: ``update_diff``). ``filters=False`` when only the folds changed: the rows the
        filters keep are reused (a fold at 1M rows then costs a few ms; a filter change about 0.1 s).
        """
        self._refresh_caches()
        n = self.row_count
        if filters or (self._selected is not None and len(self._selected) != n):
            self._selected = rowfilter.selected_flags(
                n,
                codes=self.kind_codes() if self._kinds is not None else None,
                kinds=self._kinds,
                divergent=self._divergent if self._divergent_only else None,
            )
            self._selected_rows = rowfilter.selected_rows(self._selected)
        self._fold_ranges = rowfilter.fold_ranges(self._folds, self._folds)
        self._shown = rowfilter.visible_rows(n, self._selected_rows, self._fold_ranges)
        self._visible_matches = None
        self._strips.clear()
        self.virtual_size = Size(0, self.line_count)
        self.refresh()
        summary = self.filter_summary if self._shown is not None else ""
        if summary != self._summary_posted:  # the status line shows it (TraceTuiApp)
            self._summary_posted = summary
            self.post_message(self.FiltersChanged(summary))

    def selected(self, row: int) -> bool:
        """True when the filters (``v``, span kinds) keep ``row`` (folds aside)."""
        return self._selected is None or (0 <= row < len(self._selected) and bool(self._selected[row]))

    @property
    def filter_summary(self) -> str:
        """What is hidden, for a status line: ``showing 1,203 of 100,003 rows: tool, llm; divergent only``,
        or ``showing all 9 rows``."""
        n = self.row_count
        if self._shown is None:
            return f"showing all {n:,} rows"
        parts: list[str] = []
        if self._kinds is not None:
            parts.append(", ".join(k.value for k in KIND_ORDER if k in self._kinds) or "no span kind")
        if self._divergent_only:
            parts.append("divergent only")
        if self._fold_ranges:
            hidden = sum(end - head - 1 for head, end in self._fold_ranges)
            folds = len(self._fold_ranges)
            parts.append(f"{folds:,} collapsed subtree{'' if folds == 1 else 's'} ({hidden:,} rows)")
        return f"showing {self.line_count:,} of {n:,} rows: {'; '.join(parts)}"

    def _nearest_line(self, row: int) -> int:
        """The line of ``row``, or of the shown row nearest to it (the one below on a tie)."""
        line = self.line_of_row(row)
        if line is not None or self._shown is None:
            return line if line is not None else max(0, min(row, self.row_count - 1))
        i = bisect_left(self._shown, row)
        if not self._shown:
            return 0
        if i >= len(self._shown):
            return len(self._shown) - 1
        if i > 0 and row - self._shown[i - 1] < self._shown[i] - row:
            return i - 1
        return i

    # -- cursor -------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The divergence keys only when two runs are compared (not on one trace alone)."""
        if self.single and action in ("first_divergence", "next_divergence", "previous_divergence",
                                      "filter_divergent"):
            return False
        return True

    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, self.row_count - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        if self._shown is not None and self.line_of_row(new) is None:
            # Put there by a jump, a step to a match or a divergence, the triage panel, the pair screen.
            self._reveal(new)
            self.call_after_refresh(self._scroll_to_row, new, center=True)
        old_line, new_line = self.line_of_row(old), self.line_of_row(new)
        if old_line is not None:
            self.refresh_line(old_line)  # content rows: ScrollView subtracts the scroll offset
        if new_line is not None:
            self.refresh_line(new_line)
        jump = old_line is None or new_line is None or abs(new_line - old_line) > 1
        self._scroll_to_row(new, center=jump)
        self.post_message(self.RowHighlighted(new))

    def _scroll_to_row(self, row: int, *, center: bool = False) -> None:
        line = self._nearest_line(row)
        top = int(self.scroll_offset.y)
        on_screen = top <= line < top + self.scrollable_content_region.height
        # Jumps land mid-screen so the rows leading to a divergence are in view.
        self.scroll_to_region(Region(0, line, 1, 1), animate=False, center=center and not on_screen, immediate=True)

    def _move_lines(self, delta: int) -> None:
        count = self.line_count
        if not count:
            return
        line = max(0, min(self._nearest_line(self.cursor_row) + delta, count - 1))
        row = self.row_at_line(line)
        if row is not None:
            self.cursor_row = row

    def action_move(self, delta: int) -> None:
        """Move the cursor ``delta`` rows shown (negative: up)."""
        self._move_lines(delta)

    def action_page(self, direction: int) -> None:
        """Move the cursor one screenful down (1) or up (-1)."""
        self._move_lines(direction * max(1, self.scrollable_content_region.height - 1))

    def action_first_row(self) -> None:
        """Cursor to the first row shown."""
        row = self.row_at_line(0)
        self.cursor_row = row if row is not None else 0

    def action_last_row(self) -> None:
        """Cursor to the last row shown."""
        row = self.row_at_line(self.line_count - 1)
        self.cursor_row = row if row is not None else self.row_count - 1

    def action_first_divergence(self) -> None:
        """Cursor to the first divergence (``TraceDiff.first``); bell when the traces agree."""
        if self._first_row is None:
            self.app.bell()
            return
        self.cursor_row = self._first_row

    def action_next_divergence(self) -> None:
        """Cursor to the next divergent row below the cursor that the span-kind filter keeps (a collapsed
        subtree holding it is expanded); bell at the last one."""
        divergent = self._divergent
        i = bisect_right(divergent, self.cursor_row)
        while i < len(divergent) and not self.selected(divergent[i]):
            i += 1
        if i < len(divergent):
            self.cursor_row = divergent[i]
        elif self._diff is not None and self._diff.partial:
            self._still_reading("Later divergences are shown")
        elif self._diff is None:
            self._say("the pair is still loading", "divergences")  # not "the runs agree": nothing is known yet
        else:
            self.app.bell()
            self._say("no divergence below this row" if divergent else "no divergence: the runs agree", "divergences")

    def action_previous_divergence(self) -> None:
        """Cursor to the previous divergent row above the cursor (as ``n``, upwards); bell at the first one."""
        divergent = self._divergent
        i = bisect_left(divergent, self.cursor_row) - 1
        while i >= 0 and not self.selected(divergent[i]):
            i -= 1
        if i >= 0:
            self.cursor_row = divergent[i]
        elif self._diff is None:
            self._say("the pair is still loading", "divergences")
        else:
            self.app.bell()
            self._say("no divergence above this row" if divergent else "no divergence: the runs agree", "divergences")

    def action_select_row(self) -> None:
        """Ask for the full pair under the cursor."""
        if self.row_count:
            self.post_message(self.RowSelected(self.cursor_row))

    def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self._diff is None:
            return
        row = self.row_at_line(int(self.scroll_offset.y) + offset.y)
        if row is not None:
            self.cursor_row = row
            if event.chain >= 2:
                self.post_message(self.RowSelected(row))

    # -- search: the worker and its result (the keys are in FindingMixin) -------

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, index: SearchIndex, term: str | None) -> None:
        """Build ``index`` (resuming a cancelled build), then find ``term`` and post ``_SearchDone``."""
        worker = get_current_worker()
        try:
            if term is None:
                index.build(lambda: worker.is_cancelled)
                return
            rows = index.find(term, lambda: worker.is_cancelled)
        except SourceChanged as exc:  # a payload read on demand is gone: say so, search nothing
            from tracetui.tui.notices import say_source_changed

            self.app.call_from_thread(say_source_changed, self.app, exc)
            return
        if rows is not None:
            self.post_message(self._SearchDone(index, term, rows))

    @on(_SearchDone)
    def _search_done(self, message: _SearchDone) -> None:
        message.stop()
        if message.index is not self._index or message.term != self.search_term:
            return  # another pair or another search since
        self.search_matches = message.rows
        self._visible_matches = None
        self._set_highlight(message.term if message.rows else "")
        self._strips.clear()  # the rows marked as matches changed, maybe not the term
        self.refresh()
        if not message.rows:
            self.app.bell()
            self._say(f"no match for {message.term!r}", "search", severity="warning")
            return
        self._step_match(1)

    # -- rendering ----------------------------------------------------------
