"""How the aligned view draws one row: styles from its component classes, the gutter, both sides, the type column.

A mixin of ``AlignedView`` (``aligned_view.py``), which owns the rows, the cursor, the filters and
the strip cache; ``render_line`` draws the visible line ``y`` from them (layout: ``aligned_layout``).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip

from tracetui.core.errors import SourceChanged
from tracetui.core.model import Span
from tracetui.tui.formatting import BADGE_WIDTH, KIND_BADGES, fit, span_label, visible
from tracetui.tui.rowfilter import count_in, match_spans
from tracetui.tui.widgets.aligned_layout import (
    EQUAL,
    EXTRA,
    FIRST_MARK,
    FOLD_MARK,
    LABEL_MARKS,
    MARKS,
    MATCH_MARK,
    MISSING,
    SEPARATOR,
    UNKNOWN_LABEL_MARK,
    column_layout,
    row_category,
)

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff


class RowsMixin:
    """The rendering of ``AlignedView``; see the module docstring."""

    # Provided by AlignedView (declared for readers and type checkers).
    _diff: TraceDiff | None
    _strips: LRUCache[tuple[int, int, bool], Strip]
    _palette: dict[str, Style] | None
    _labels: dict[int, str]
    _folds: dict[int, int]
    _divergent: list[int]
    _first_row: int | None
    _highlight: str
    search_matches: list[int]
    placeholder: str
    cursor_row: int
    app: Any

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
        if category == MISSING and row in getattr(self._diff, "pending", ()):
            category = EQUAL  # watch mode: the replay has not got there yet, nothing is missing
        single = getattr(self, "single", False)
        layout = column_layout(width, self._diff.rows_expected, single=single)

        line = st["base"]
        if category != EQUAL:
            line = line + st[f"bg:{category}"]
        if cursor:
            line = line + st["bg:cursor"] + st["fg:cursor"]
        accent = line + st[f"fg:{category}"] if category != EQUAL else line

        is_first = row == self._first_row
        original = self._diff.original.spans[aligned.original] if aligned.original is not None else None
        replay = self._diff.replay.spans[aligned.replay] if aligned.replay is not None else None
        label_tint = st[f"fg:{category}"] if category in (EXTRA, MISSING) else None
        end = self._folds.get(row)
        fold = self._fold_summary(row, end) if end is not None else None
        term = self._highlight if self._highlight and self._is_match(row) else ""
        left, left_shows = self._side(original, aligned.depth, layout.side, line, label_tint, term, fold)
        right, right_shows = self._side(replay, aligned.depth, layout.side, line, label_tint, term,
                                        fold if original is None else None)
        # A match whose labels, as drawn, do not show the term (or a collapsed subtree holding matches).
        marked = bool(term) and not (left_shows or right_shows)
        if end is not None and self._highlight and count_in(self.search_matches, row + 1, end):
            marked = True
        match = line + st["bg:match"] + st["fg:match"]
        if is_first:
            first = Segment(FIRST_MARK, (match if marked else accent) + Style(bold=True))
        else:
            first = Segment(MATCH_MARK, match) if marked else Segment(" ", line)
        segments = [
            Segment(f"{row:>{layout.number}}", line + st["fg:number"]),
            first,
            Segment(MARKS[category], accent + Style(bold=True)),
            self._label_mark(row, line),
            *left,
        ]
        if not single:
            segments += [Segment(SEPARATOR, line + st["fg:separator"]), *right]
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

    def _is_match(self, row: int) -> bool:
        matches = self.search_matches
        i = bisect_left(matches, row)
        return i < len(matches) and matches[i] == row

    def _fold_summary(self, row: int, end: int) -> list[str]:
        """What a collapsed row says about its subtree, longest first (the widest that fits is drawn)."""
        rows = end - row - 1
        divergent = count_in(self._divergent, row + 1, end)
        return [f"{FOLD_MARK} … {rows:,} rows, {divergent:,} divergent", f"{FOLD_MARK} {rows:,} rows, {divergent:,} div",
                f"{FOLD_MARK} {rows:,}", FOLD_MARK]

    def _side(
        self, span: Span | None, depth: int, width: int, line: Style, tint: Style | None, term: str = "",
        fold: list[str] | None = None,
    ) -> tuple[list[Segment], bool]:
        """One side's cells: indent, kind badge, label (``term`` highlighted, ``fold`` summary at the end).

        Returns:
            The segments, and whether the label as drawn shows ``term``.
        """
        st = self._styles()
        if span is None:
            return [Segment(fit("", width), line + st["bg:absent"] + st["fg:absent"])], False
        indent = min(depth * 2, width // 3)
        badge_width = min(BADGE_WIDTH + 1, max(0, width - indent))
        label_width = max(0, width - indent - badge_width)
        kind_style = line + st[f"fg:kind-{span.kind.value}"]
        label_style = line + (tint if tint is not None else Style())
        if span.status.value == "error":
            label_style = label_style + st["fg:error"]
        segments = [
            Segment(" " * indent, line),
            Segment(fit(KIND_BADGES[span.kind], badge_width), kind_style),
        ]
        summary = ""
        if fold is not None:
            summary = next((f" {s}" for s in fold if len(s) + 1 <= label_width - 4), fold[-1][:label_width])
        try:
            label = span_label(span)
        except SourceChanged as exc:  # a lazily read payload whose file was truncated or rewritten since
            from tracetui.tui.notices import STALE_LABEL, say_source_changed

            self.call_later(say_source_changed, self.app, exc)
            label = f"{span.name}  {STALE_LABEL}"
        text = fit(label, label_width - len(summary))
        spans = match_spans(text, term) if term else []
        if spans:
            match = label_style + st["bg:match"] + st["fg:match"]
            at = 0
            for start, stop in spans:
                if start > at:
                    segments.append(Segment(text[at:start], label_style))
                segments.append(Segment(text[start:stop], match))
                at = stop
            if at < len(text):
                segments.append(Segment(text[at:], label_style))
        else:
            segments.append(Segment(text, label_style))
        if summary:
            segments.append(Segment(summary, line + st["fg:fold"]))
        return segments, bool(spans)
