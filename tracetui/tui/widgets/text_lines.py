"""TextLines: a Line-API view of pre-laid-out ``Text`` lines, plus the column helpers that lay them out.

The detail pane and the full pair screen are side-by-side columns of wrapped
values. A Rich ``Table`` renders them, but measures and renders every cell
several times per update (tens of ms for a pane, about half a second for a
pair with long prompts). Here a subclass lays its lines out once per width
(``layout``), in plain Python over ``Text``, and only the visible lines become
``Strip``s, cached.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence, Union

from rich.cells import cell_len, get_character_cell_size
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tracetui.tui.formatting import ELLIPSIS


def fold(text: Text | Sequence[Text], width: int, max_lines: int | None = None) -> list[Text]:
    """``text`` split at its newlines and wrapped at ``width`` cells (after a space when one is near, else mid-word).

    Args:
        text: The text (styles are kept), or its lines already split (cheaper for long values).
        width: Cells per line.
        max_lines: Keep at most this many lines; the last kept line ends with
            ``…`` when something was cut.

    Returns:
        At least one line, each at most ``width`` cells.
    """
    if width <= 0:
        return [Text()]
    out: list[Text] = []
    parts = text.split("\n", allow_blank=True) if isinstance(text, Text) else text
    for part in parts:
        if part.cell_len <= width:  # most lines of pretty JSON: nothing to fold
            out.append(part)
            if max_lines is not None and len(out) > max_lines:
                break
            continue
        offsets: list[int] = []
        at_space: set[int] = set()  # breaks made at a space, which is then not drawn
        plain = part.plain
        start = column = 0
        space = -1  # index just after the last space on the current line
        for i, ch in enumerate(plain):
            w = get_character_cell_size(ch)
            if column + w > width:
                # Break at this space, or after the last space when that leaves the line at least half
                # full, else mid-word.
                if ch == " ":
                    cut = i
                    at_space.add(i)
                elif space > start and cell_len(plain[start:space]) * 2 >= width:
                    cut = space
                else:
                    cut = i
                offsets.append(cut)
                start = cut
                column = cell_len(plain[cut:i])
                space = -1
                if max_lines is not None and len(out) + len(offsets) > max_lines:
                    break  # enough lines: don't walk the rest of a long value
                if ch == " ":
                    continue
            column += w
            if ch == " ":
                space = i + 1
        pieces = list(part.divide(offsets)) if offsets else [part]
        for n, piece in enumerate(pieces):
            if n and offsets[n - 1] in at_space:
                piece = piece[1:]
            out.append(piece)
        if max_lines is not None and len(out) > max_lines:
            break
    if max_lines is not None and len(out) > max_lines:
        out = out[:max_lines]
        out[-1].truncate(width - 1)
        out[-1].append(ELLIPSIS)
    return out or [Text()]


_EMPTY = Text()


class Row(NamedTuple):
    """One terminal line made of cells, joined into a ``Text`` only when drawn (most lines never are)."""

    cells: tuple[tuple[Text, int], ...]
    """``(text, width)`` per column; each text is padded or cut to its width."""
    gaps: tuple[Text, ...]
    """The separator after each column."""

    def to_text(self) -> Text:
        """The joined line."""
        line = Text(end="")
        for (part, width), gap in zip(self.cells, self.gaps):
            part = part.copy()
            part.truncate(width, overflow="ellipsis", pad=True)
            line.append_text(part)
            line.append_text(gap)
        return line


Line = Union[Text, Row]
"""What ``TextLines.layout`` returns per terminal line."""


def side_by_side(cells: Sequence[tuple[list[Text], int]], gaps: Sequence[Text]) -> list[Row]:
    """Columns of lines as terminal lines: each cell padded to its width, ``gaps[i]`` after column ``i``.

    Args:
        cells: ``(lines, width)`` per column.
        gaps: One separator per column (use ``Text()`` for none).
    """
    height = max((len(lines) for lines, _ in cells), default=0)
    gap_tuple = tuple(gaps)
    return [
        Row(tuple((lines[i] if i < len(lines) else _EMPTY, width) for lines, width in cells), gap_tuple)
        for i in range(height)
    ]


class TextLines(ScrollView):
    """Scrollable lines laid out by ``layout(width)``; re-laid out on resize and theme change."""

    DEFAULT_CSS = """
    TextLines {
        overflow-x: hidden;
        overflow-y: scroll;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Line] = []
        self._laid_out_width = -1
        self._strips: LRUCache[tuple[int, int], Strip] = LRUCache(512)
        self._style_key: tuple[Style, ...] = ()

    def layout(self, width: int) -> list[Line]:
        """The lines to show at ``width`` cells (override)."""
        return []

    @property
    def text(self) -> str:
        """Everything shown, as plain text, one line per terminal line (tests, copying)."""
        self._ensure_layout()
        return "\n".join(_text(line).plain.rstrip() for line in self._lines)

    def invalidate(self) -> None:
        """The content changed: lay out again when next drawn (once, after styles and size settle)."""
        self._laid_out_width = -1
        self._strips.clear()
        self.refresh()

    def relayout(self) -> None:
        """Lay the lines out now, at the current width."""
        width = self.scrollable_content_region.width
        self._laid_out_width = width
        self._lines = self.layout(width) if width > 0 else []
        self._strips.clear()
        self.virtual_size = Size(width, len(self._lines))
        self.refresh()

    def _ensure_layout(self) -> None:
        if self.scrollable_content_region.width != self._laid_out_width:
            self.relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # Styles are baked into the laid-out Text, but a focus change also lands here: lay out again
        # only when a colour really changed (a theme switch, a CSS reload).
        try:
            key = (self.rich_style, *(self.get_component_rich_style(n) for n in sorted(self.COMPONENT_CLASSES)))
        except KeyError:  # component styles not applied yet (first styling pass)
            key = ()
        if not key or key != self._style_key:
            self._style_key = key
            self.styles_changed()

    def styles_changed(self) -> None:
        """The colours changed (override to drop style-carrying caches; call super)."""
        self.invalidate()

    def on_resize(self) -> None:
        self._ensure_layout()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        self._ensure_layout()
        index = int(self.scroll_offset.y) + y
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        key = (index, width)
        strip = self._strips.get(key)
        if strip is None:
            line = _text(self._lines[index]).copy()
            line.truncate(width, overflow="ellipsis", pad=True)
            strip = Strip(list(line.render(self.app.console)), width).apply_style(self.rich_style)
            self._strips[key] = strip
        return strip

    def foreground(self, component: str) -> Style:
        """Colour and text style of a component class (full style, so alpha colours blend; background dropped)."""
        full = self.get_component_rich_style(component)
        return Style(color=full.color, bold=full.bold, italic=full.italic, dim=full.dim, underline=full.underline)


def _text(line: Line) -> Text:
    return line.to_text() if isinstance(line, Row) else line
