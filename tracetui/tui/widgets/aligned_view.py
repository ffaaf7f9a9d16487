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
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from tracetui.core.model import Span, SpanKind
from tracetui.tui.formatting import BADGE_WIDTH, KIND_BADGES, fit, span_label, visible

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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._diff: TraceDiff | None = None
        self._divergent: list[int] = []
        self._first_row: int | None = None
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(1024)
        self._palette: dict[str, Style] | None = None
        self._labels: dict[int, str] = {}
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

    # -- cursor -------------------------------------------------------------

    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, self.row_count - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        self.refresh_line(old)  # content rows: ScrollView subtracts the scroll offset
        self.refresh_line(new)
        self._scroll_to_row(new, center=abs(new - old) > 1)
        self.post_message(self.RowHighlighted(new))

    def _scroll_to_row(self, row: int, *, center: bool = False) -> None:
        top = int(self.scroll_offset.y)
        on_screen = top <= row < top + self.scrollable_content_region.height
        # Jumps land mid-screen so the rows leading to a divergence are in view.
        self.scroll_to_region(Region(0, row, 1, 1), animate=False, center=center and not on_screen, immediate=True)

    def action_move(self, delta: int) -> None:
        """Move the cursor ``delta`` rows (negative: up)."""
        self.cursor_row += delta

    def action_page(self, direction: int) -> None:
        """Move the cursor one screenful down (1) or up (-1)."""
        self.cursor_row += direction * max(1, self.scrollable_content_region.height - 1)

    def action_first_row(self) -> None:
        """Cursor to the first row."""
        self.cursor_row = 0

    def action_last_row(self) -> None:
        """Cursor to the last row."""
        self.cursor_row = self.row_count - 1

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
        row = int(self.scroll_offset.y) + offset.y
        if 0 <= row < self.row_count:
            self.cursor_row = row
            if event.chain >= 2:
                self.post_message(self.RowSelected(row))

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
        row = int(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width
        if self._diff is None:
            if row == 0 and self.placeholder:
                style = self.rich_style + self._styles()["fg:number"]
                return Strip([Segment(fit(" " + visible(self.placeholder), width), style)], width)
            return Strip.blank(width, self.rich_style)
        if row >= len(self._diff.rows):
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
