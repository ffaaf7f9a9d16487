"""AlignedView: the original and replay spans side by side, one terminal line per aligned row.

A Line-API ``ScrollView`` (``../shared/design/style.md`` §3, Appendix A): it
renders only the visible rows, caches rendered strips in an LRU keyed by
``(row, width, cursor)``, and repaints only the two lines a cursor move
touches, so it opens 100k rows as fast as 10.

Row layout (cells)::

    NNN▶ML original-side-label........... │ replay-side-label............. divergence_type
    row mark M (~ changed, + replay only, - original only, blank equal);
    ▶ only on the first divergence's row; L a reviewer label's mark (``LABEL_MARKS``), else blank
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.worker import get_current_worker

from tracetui.core.model import Span, SpanKind
from tracetui.tui.formatting import BADGE_WIDTH, KIND_BADGES, fit, span_label, visible
from tracetui.tui.search import SearchIndex, SpanLookupError, find_span, step_match

if TYPE_CHECKING:
    from tracetui.core.diff import Divergence, TraceDiff

TYPE_WIDTH = 17
"""Cells of the divergence-type column: ``len("decision_mismatch")``."""

TYPE_COLUMN_MIN_WIDTH = 64
"""Below this many cells the type column is dropped (the detail pane still names it)."""

SEPARATOR = " │ "

EQUAL, CHANGED, EXTRA, MISSING = "equal", "changed", "extra", "missing"
"""Row categories: both sides equal; paired but different; replay only; original only."""

MARKS = {EQUAL: " ", CHANGED: "~", EXTRA: "+", MISSING: "-"}
"""Gutter mark of each row category."""

FIRST_MARK = "▶"
"""Drawn between the row number and the mark of the first divergence's row, so it stands out from the others."""

LABEL_MARKS = {
    "acceptable_alternative": ("✓", "label-acceptable"),
    "new_regression": ("✗", "label-regression"),
    "fixture_mismatch": ("◆", "label-fixture"),
    "insufficient_spec": ("?", "label-spec"),
}
"""Reviewer label (``tracetui.core.labels.LABELS``) -> (mark drawn after the row mark, component class suffix).

One glyph per label, so the label reads without colour; the detail pane names it and shows the note."""

UNKNOWN_LABEL_MARK = ("●", "label-spec")
"""Mark of a label name this version does not know (a newer sidecar)."""


class ColumnLayout(NamedTuple):
    """Cell widths of one aligned line (shared by the view and its header)."""

    number: int
    """Row-number column (right-aligned digits)."""
    side: int
    """Each side's label column."""
    kind: int
    """Divergence-type column, 0 when too narrow to show it."""
    trailing: int
    """Spare cells at the end of the line."""


def column_layout(width: int, row_count: int) -> ColumnLayout:
    """Split ``width`` cells into the aligned columns.

    Args:
        width: Content width in cells.
        row_count: Number of rows (sizes the row-number column).
    """
    number = max(3, len(str(max(0, row_count - 1))))
    kind = TYPE_WIDTH if width >= TYPE_COLUMN_MIN_WIDTH else 0
    fixed = number + 3 + len(SEPARATOR) + (kind + 1 if kind else 0)
    side = max(4, (width - fixed) // 2)
    trailing = max(0, width - fixed - 2 * side)
    return ColumnLayout(number, side, kind, trailing)


def row_category(original: int | None, replay: int | None, divergence: Divergence | None) -> str:
    """``extra`` (replay only), ``missing`` (original only), ``changed`` or ``equal``."""
    if original is None:
        return EXTRA
    if replay is None:
        return MISSING
    return CHANGED if divergence is not None else EQUAL


class AlignedHeader(Widget):
    """The column titles above an ``AlignedView``, laid out with the same ``column_layout``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._left = Text("original")
        self._right = Text("replay")
        self._rows = 0

    def set_titles(self, left: Text, right: Text, row_count: int) -> None:
        """Set both column titles (``Text``, never markup) and the row count."""
        self._left, self._right, self._rows = left, right, row_count
        self.refresh()

    def render(self) -> Text:
        layout = column_layout(self.content_region.width, self._rows)
        line = Text(no_wrap=True, overflow="crop", end="")
        line.append(" " * (layout.number + 3))
        line.append_text(_fit_text(self._left, layout.side))
        line.append(SEPARATOR)
        line.append_text(_fit_text(self._right, layout.side))
        if layout.kind:
            line.append(" ")
            line.append(fit("divergence", layout.kind))
        return line


def _fit_text(text: Text, width: int) -> Text:
    out = text.copy()
    out.truncate(width, overflow="ellipsis", pad=True)
    return out


class AlignedView(ScrollView, can_focus=True, inherit_bindings=False):
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
    class _SearchDone(Message):
        """The search worker found ``rows`` holding ``term`` in ``index``."""

        index: SearchIndex
        term: str
        rows: list[int]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._diff: TraceDiff | None = None
        self._divergent: list[int] = []
        self._first_row: int | None = None
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(1024)
        self._palette: dict[str, Style] | None = None
        self._labels: dict[int, str] = {}
        self._shown: list[int] | None = None  # the divergent-only filter: rows shown, ascending (None: all rows)
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
        """Mark labelled rows: ``{row: label name}`` (``tracetui.core.labels.LABELS``); replaces the previous marks."""
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
        self._index = None
        self._visible_matches = None
        self.search_matches = []
        self._divergent = sorted(diff.divergent_rows)
        first = diff.first
        self._first_row = first.row if first is not None else None
        self._strips.clear()
        self.virtual_size = Size(0, len(diff.rows))
        target = self._first_row if self._first_row is not None else 0
        # set_reactive: no watcher; the data changed under every line anyway.
        self.set_reactive(AlignedView.cursor_row, target)
        self.refresh()
        self._scroll_to_row(target, center=True)
        self.call_after_refresh(self._scroll_to_row, target, center=True)
        self.post_message(self.RowHighlighted(target))

    # -- lines: the rows shown (all, or the divergent ones under the filter) ----

    @property
    def filtered(self) -> bool:
        """True while only the divergent rows are shown (``v``)."""
        return self._shown is not None

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
        """The content line drawing ``row``, or None when the filter hides it."""
        if self._shown is None:
            return row if 0 <= row < self.row_count else None
        i = bisect_left(self._shown, row)
        return i if i < len(self._shown) and self._shown[i] == row else None

    def _nearest_line(self, row: int) -> int:
        """The line of ``row``, or of the shown row nearest to it (the one below on a tie)."""
        line = self.line_of_row(row)
        if line is not None or self._shown is None:
            return line if line is not None else max(0, min(row, self.row_count - 1))
        i = bisect_left(self._shown, row)
        if i >= len(self._shown):
            return len(self._shown) - 1
        if i > 0 and row - self._shown[i - 1] < self._shown[i] - row:
            return i - 1
        return i

    # -- cursor -------------------------------------------------------------

    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, self.row_count - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        if self._shown is not None and self.line_of_row(new) is None:
            # Put there from elsewhere (a jump, the triage panel, the pair screen): show every row again.
            self._set_filter(None, f"showing all {self.row_count:,} rows: row {new} is not divergent")
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
        """Cursor to the next divergent row below the cursor; bell at the last one."""
        i = bisect_right(self._divergent, self.cursor_row)
        if i < len(self._divergent):
            self.cursor_row = self._divergent[i]
        else:
            self.app.bell()

    def action_previous_divergence(self) -> None:
        """Cursor to the previous divergent row above the cursor; bell at the first one."""
        i = bisect_left(self._divergent, self.cursor_row)
        if i > 0:
            self.cursor_row = self._divergent[i - 1]
        else:
            self.app.bell()

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

    # -- finding things: the divergent-only filter, search, jump to a span id --

    def _say(self, message: str, title: str, *, severity: str = "information") -> None:
        self.message = message
        self.app.notify(visible(message), title=title, severity=severity, markup=False)  # type: ignore[arg-type]

    def _set_filter(self, shown: list[int] | None, message: str) -> None:
        """Show only ``shown`` rows (ascending), or every row (None); keep the cursor's row in view."""
        self._shown = shown
        self._visible_matches = None
        self.virtual_size = Size(0, self.line_count)
        self.refresh()
        self._say(message, "filter")

    def action_filter_divergent(self) -> None:
        """Show only the divergent rows (the cursor goes to the nearest one), or every row again."""
        if self._diff is None:
            return
        if self._shown is None:
            if not self._divergent:
                self.app.bell()
                self._say("no divergent rows: nothing to filter", "filter")
                return
            self._set_filter(list(self._divergent),
                             f"showing only the {len(self._divergent):,} divergent rows (not their parents); "
                             "v shows all rows")
        else:
            self._set_filter(None, f"showing all {self.row_count:,} rows")
        target = self.row_at_line(self._nearest_line(self.cursor_row))
        if target is None:
            return
        if target != self.cursor_row:
            self.cursor_row = target
        self.call_after_refresh(self._scroll_to_row, target, center=True)

    def action_search(self) -> None:
        """Open the search bar; the text index starts building meanwhile (once per pair)."""
        if self._diff is None:
            return
        from tracetui.tui.screens.search_bar import SEARCH, SearchBar

        if self._index is None or self._index.diff is not self._diff:
            self._index = SearchIndex(self._diff)
        if not self._index.complete:
            self._search(self._index, None)
        self.app.push_screen(SearchBar(SEARCH, self.search_term), self._search_submitted)

    def _search_submitted(self, term: str | None) -> None:
        if term is None or self._diff is None:
            return
        if not term.strip():
            return
        if self._index is None or self._index.diff is not self._diff:
            self._index = SearchIndex(self._diff)
        self.search_term = term
        if self._index.streaming:  # too big to keep: this search scans every span again
            self._say(f"searching {self.row_count:,} rows for {term!r}…", "search")
        self._search(self._index, term)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, index: SearchIndex, term: str | None) -> None:
        """Build ``index`` (resuming a cancelled build), then find ``term`` and post ``_SearchDone``."""
        worker = get_current_worker()
        if term is None:
            index.build(lambda: worker.is_cancelled)
            return
        rows = index.find(term, lambda: worker.is_cancelled)
        if rows is not None:
            self.post_message(self._SearchDone(index, term, rows))

    @on(_SearchDone)
    def _search_done(self, message: _SearchDone) -> None:
        message.stop()
        if message.index is not self._index or message.term != self.search_term:
            return  # another pair or another search since
        self.search_matches = message.rows
        self._visible_matches = None
        if not message.rows:
            self.app.bell()
            self._say(f"no match for {message.term!r}", "search", severity="warning")
            return
        self._step_match(1)

    def _matches_shown(self) -> list[int]:
        if self._shown is None:
            return self.search_matches
        if self._visible_matches is None:
            self._visible_matches = [r for r in self.search_matches if self.line_of_row(r) is not None]
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
            self._say(f"{len(self.search_matches):,} matches for {self.search_term!r}, none among the divergent "
                      "rows shown; v shows all rows", "search")
            return
        row, wrapped = step
        self.cursor_row = row
        where = bisect_left(matches, row) + 1
        note = (" (wrapped)" if wrapped else "") + (" among the rows shown" if self._shown is not None else "")
        self._say(f"match {where:,} of {len(matches):,} for {self.search_term!r}{note}", "search")

    def action_jump_to_span(self) -> None:
        """Open the bar in span-id mode: enter puts the cursor on that span's row."""
        if self._diff is None:
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

    # -- rendering ----------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette = None
        self._strips.clear()  # theme or CSS changed: cached strips carry stale styles

    def _styles(self) -> dict[str, Style]:
        """Rich styles of the component classes, split into background and foreground parts.

        Full styles are read (so alpha backgrounds blend over the widget's own),
        then split: ``bg:<name>`` carries only the background, ``fg:<name>``
        only colour and text style, so layering never wipes an earlier colour.
        """
        if self._palette is None:
            palette: dict[str, Style] = {"base": self.rich_style}
            for name in self.COMPONENT_CLASSES:
                full = self.get_component_rich_style(name)
                part = name.removeprefix("aligned-view--")
                palette[f"bg:{part}"] = Style(bgcolor=full.bgcolor)
                palette[f"fg:{part}"] = Style(
                    color=None if part == "first" else full.color,  # --first only restyles the row's own colour
                    bold=full.bold, italic=full.italic, underline=full.underline, dim=full.dim, reverse=full.reverse,
                )
            self._palette = palette
        return self._palette

    def render_line(self, y: int) -> Strip:
        line = int(self.scroll_offset.y) + y
        row = self.row_at_line(line)
        width = self.scrollable_content_region.width
        if self._diff is None:
            if line == 0 and self.placeholder:
                style = self.rich_style + self._styles()["fg:number"]
                return Strip([Segment(fit(" " + visible(self.placeholder), width), style)], width)
            return Strip.blank(width, self.rich_style)
        if row is None:
            return Strip.blank(width, self.rich_style)
        cursor = row == self.cursor_row
        key = (row, width, cursor)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._render_row(row, width, cursor)
            self._strips[key] = strip
        return strip

    def _render_row(self, row: int, width: int, cursor: bool) -> Strip:
        assert self._diff is not None
        st = self._styles()
        aligned = self._diff.rows[row]
        divergence = self._diff.row_divergence[row]
        category = row_category(aligned.original, aligned.replay, divergence)
        layout = column_layout(width, len(self._diff.rows))

        line = st["base"]
        if category != EQUAL:
            line = line + st[f"bg:{category}"]
        if cursor:
            line = line + st["bg:cursor"] + st["fg:cursor"]
        accent = line + st[f"fg:{category}"] if category != EQUAL else line

        is_first = row == self._first_row
        segments = [
            Segment(f"{row:>{layout.number}}", line + st["fg:number"]),
            Segment(FIRST_MARK, accent + Style(bold=True)) if is_first else Segment(" ", line),
            Segment(MARKS[category], accent + Style(bold=True)),
            self._label_mark(row, line),
        ]
        original = self._diff.original.spans[aligned.original] if aligned.original is not None else None
        replay = self._diff.replay.spans[aligned.replay] if aligned.replay is not None else None
        label_tint = st[f"fg:{category}"] if category in (EXTRA, MISSING) else None
        segments += self._side(original, aligned.depth, layout.side, line, label_tint)
        segments.append(Segment(SEPARATOR, line + st["fg:separator"]))
        segments += self._side(replay, aligned.depth, layout.side, line, label_tint)
        if layout.kind:
            name = divergence.type.value if divergence is not None else ""
            style = accent + st["fg:first"] if is_first else accent
            segments.append(Segment(" ", line))
            segments.append(Segment(fit(name, layout.kind), style))
        if layout.trailing:
            segments.append(Segment(" " * layout.trailing, line))
        return Strip(segments, width)

    def _label_mark(self, row: int, line: Style) -> Segment:
        label = self._labels.get(row)
        if label is None:
            return Segment(" ", line)
        mark, cls = LABEL_MARKS.get(label, UNKNOWN_LABEL_MARK)
        return Segment(mark, line + self._styles()[f"fg:{cls}"] + Style(bold=True))

    def _side(self, span: Span | None, depth: int, width: int, line: Style, tint: Style | None) -> list[Segment]:
        st = self._styles()
        if span is None:
            return [Segment(fit("", width), line + st["bg:absent"] + st["fg:absent"])]
        indent = min(depth * 2, width // 3)
        badge_width = min(BADGE_WIDTH + 1, max(0, width - indent))
        label_width = max(0, width - indent - badge_width)
        kind_style = line + st[f"fg:kind-{span.kind.value}"]
        label_style = line + (tint if tint is not None else Style())
        if span.status.value == "error":
            label_style = label_style + st["fg:error"]
        return [
            Segment(" " * indent, line),
            Segment(fit(KIND_BADGES[span.kind], badge_width), kind_style),
            Segment(fit(span_label(span), label_width), label_style),
        ]
