"""PairBody: every field of one pair as side-by-side columns, differences highlighted, long values capped.

The scrollable body of ``PairScreen`` (``screens/pair_screen.py``). Values are pretty-printed
(``diff.jsonpaths``); the paths a divergence names are tinted and marked in the gutter (``GUTTER``,
``CURRENT`` on the difference stepped to); a long value shows its first ``HEAD_LINES`` and
``PER_RANGE`` lines around each difference until ``show_all``. Cells are prepared once per pair
and theme (``_prepare``), laid out per width (``layout``).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any, ClassVar, List, Sequence, Tuple

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType

from tracetui.core.diff.jsonpaths import Pretty, differing_lines, keep_lines, nested_volatile, pretty_value, relative_path
from tracetui.tui.formatting import ABSENT_TEXT, format_duration, path_lines, visible
from tracetui.tui.pair_fields import ABSENT, FieldRow, PairFields
from tracetui.tui.widgets.text_lines import Line, TextLines, fold, side_by_side


HEAD_LINES = 300
"""Lines of a long value always drawn from its top (until ``a``)."""
PER_RANGE = 200
"""Lines drawn of one highlighted range of a long value (until ``a``)."""
LINE_CHARS = 4_000
"""Characters of one value line drawn (until ``a``); a 1 MB string is one JSON line."""

SEPARATOR = " │"
GUTTER = "▌"
"""Gutter mark of a highlighted line (a differing path's value)."""
CURRENT = "▶"
"""Gutter mark of the first line of the difference ``]``/``[`` stepped to."""
SHOW_ALL_HINT = "press a to show all"

_NONE = -1
"""Tag of a line that is not highlighted."""
_UNNAMED = -2
"""Tag of a highlighted line that belongs to no one difference (a line diff of a field named otherwise)."""


@dataclass(slots=True)
class Side:
    """One side of one field, ready to fold: lines, their highlight tags, where each difference starts.

    Attributes:
        lines: Display lines (styled).
        tags: Per line: the index of the difference it shows, ``_NONE`` or ``_UNNAMED``.
        starts: Difference index -> index in ``lines`` of its first highlighted line.
        hidden: Lines of the value left out (``a`` shows them).
    """

    lines: List[Text]
    tags: List[int]
    starts: dict[int, int] = field(default_factory=dict)
    hidden: int = 0


@dataclass(slots=True)
class Cells:
    """One field, width-independent: mark, name, both sides, and which section it is in."""

    mark: Text
    name: List[Text]
    left: Side
    right: Side
    section: str
    """``changes`` (a path inside a field), ``semantic`` or ``volatile``."""


Tag = Tuple[int, int, int]
"""A highlighted range: ``(start, end, difference index)``."""


class PairBody(TextLines, can_focus=True, inherit_bindings=False):
    """Every field of one pair as side-by-side columns, long values wrapped; arrow keys scroll."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "scroll_lines(1)", "Down", show=False, id="pair-scroll-down", tooltip="Scroll down a line"),
        Binding("k,up", "scroll_lines(-1)", "Up", show=False, id="pair-scroll-up", tooltip="Scroll up a line"),
        Binding("pagedown,space", "scroll_pages(1)", "Page down", show=False, id="pair-page-down",
                tooltip="Scroll down a screenful"),
        Binding("pageup", "scroll_pages(-1)", "Page up", show=False, id="pair-page-up",
                tooltip="Scroll up a screenful"),
        Binding("home", "scroll_edge(0)", "Top", show=False, id="pair-top", tooltip="Scroll to the first field"),
        Binding("end", "scroll_edge(1)", "Bottom", show=False, id="pair-bottom", tooltip="Scroll to the end"),
    ]
    """Scrolling keys; no animation (a long payload would take a second to glide through)."""

    DEFAULT_CSS = """
    PairBody > .pair-body--gutter { color: $text-warning; text-style: bold; }
    """

    def action_scroll_lines(self, lines: int) -> None:
        """Scroll ``lines`` lines (negative: up)."""
        self.scroll_relative(y=lines, animate=False)

    def action_scroll_pages(self, pages: int) -> None:
        """Scroll ``pages`` screenfuls (negative: up)."""
        self.scroll_relative(y=pages * max(1, self.scrollable_content_region.height - 1), animate=False)

    def action_scroll_edge(self, end: int) -> None:
        """Scroll to the top (0) or the bottom (1)."""
        self.scroll_to(y=self.max_scroll_y if end else 0, animate=False)

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pair-body--changed",
        "pair-body--removed",
        "pair-body--added",
        "pair-body--muted",
        "pair-body--section",
        "pair-body--gutter",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pair: PairFields | None = None
        """The pair shown."""
        self.differences: tuple[str, ...] = ()
        """The paths that differ (the row's ``Divergence.fields``), in order; empty for a one-sided row."""
        self.current: int | None = None
        """Index into ``differences`` of the difference stepped to, or None."""
        self.show_all = False
        """Long values drawn whole (``a``) instead of their head and the lines around their differences."""
        self.difference_lines: list[int | None] = []
        """Per difference: the terminal line (index into the laid-out lines) it is shown at, or None."""
        self.highlighted_paths: set[str] = set()
        """The differences that have highlighted lines in a compared field (or their own row)."""
        self.hidden_lines = 0
        """Lines of long values left out (0 once ``show_all``)."""
        self._widths = (12, 8)
        self._prepared: list[Cells | None] | None = None

    def show(self, pair: PairFields) -> None:
        """Show ``pair`` from its first line, long values capped, no difference stepped to."""
        self.pair = pair
        paired = pair.divergence is not None and pair.category not in ("extra", "missing")
        self.differences = tuple(f.path for f in pair.divergence.fields) if paired else ()  # type: ignore[union-attr]
        self.current = None
        self.show_all = False
        self._prepared = None
        self.invalidate()
        self.scroll_to(y=0, animate=False, immediate=True)

    def set_show_all(self) -> None:
        """Draw every line of every value (a megabyte takes a moment)."""
        if self.show_all:
            return
        self.show_all = True
        self._prepared = None
        self.invalidate()

    def go_to(self, index: int) -> int | None:
        """Mark difference ``index`` current and scroll it near the top; returns its terminal line (None: not shown)."""
        self.current = index
        self.relayout()
        line = self.difference_lines[index] if index < len(self.difference_lines) else None
        if line is not None:
            self.scroll_to(y=max(0, line - 2), animate=False, immediate=True)
        return line

    def styles_changed(self) -> None:
        self._prepared = None  # the prepared cells carry the old theme's colours
        super().styles_changed()

    def _style(self, name: str) -> Style:
        if name in ("removed", "added"):
            full = self.get_component_rich_style(f"pair-body--{name}")
            return Style(color=full.color, bgcolor=full.bgcolor)
        return self.foreground(f"pair-body--{name}")

    # -- preparing (once per pair and theme) ----------------------------------

    def _prepare(self, pf: PairFields) -> list[Cells | None]:
        """Every field's cells, independent of width; ``None`` marks where the "not compared" section starts.

        The expensive part (pretty-printing, finding the paths, the line diffs) runs once per pair, not per resize.
        """
        diffs = self.differences
        cells: list[Cells | None] = []
        for fr in pf.changes:
            index = diffs.index(fr.path) if fr.path in diffs else _UNNAMED
            cells.append(self._field(fr, "changes", index))
        for fr in pf.semantic:
            cells.append(self._field(fr, "semantic", None))
        volatile = list(pf.volatile) + _ignored_inside(pf)
        if volatile:
            cells.append(None)
            cells += [self._field(fr, "volatile", None) for fr in volatile]
        self.hidden_lines = sum(c.left.hidden + c.right.hidden for c in cells if c is not None)
        return cells

    def _field(self, fr: FieldRow, section: str, index: int | None) -> Cells:
        """The cells of one field; ``index``: the difference a ``changes`` row stands for."""
        muted = self._style("muted")
        changed = self._style("changed")
        both = fr.original is not ABSENT and fr.replay is not ABSENT
        left_p = _pretty(fr.original, fr.path)
        right_p = _pretty(fr.replay, fr.path)
        left_tags: list[Tag] = []
        right_tags: list[Tag] = []
        if section == "changes" and index is not None:
            if both:
                ra, rb = differing_lines(left_p.lines, right_p.lines)
                left_tags = [(s, e, index) for s, e in ra] or [(0, len(left_p.lines), index)]
                right_tags = [(s, e, index) for s, e in rb] or [(0, len(right_p.lines), index)]
            elif fr.original is not ABSENT:
                left_tags = [(0, len(left_p.lines), index)]
            elif fr.replay is not ABSENT:
                right_tags = [(0, len(right_p.lines), index)]
        elif section == "semantic" and fr.changed:
            for i, path in enumerate(self.differences):
                steps = relative_path(path, fr.path)
                if steps is None:
                    continue
                if not steps and both:
                    ra, rb = differing_lines(left_p.lines, right_p.lines)
                    left_tags += [(s, e, i) for s, e in ra] or [(0, len(left_p.lines), i)]
                    right_tags += [(s, e, i) for s, e in rb] or [(0, len(right_p.lines), i)]
                    continue
                for pretty, value, tags in ((left_p, fr.original, left_tags), (right_p, fr.replay, right_tags)):
                    span = pretty.line_range(steps) if value is not ABSENT else None
                    if span is not None:
                        tags.append((span[0], span[1], i))
            if not left_tags and not right_tags and both:
                # The divergence names this field's changes in another vocabulary: tint the lines that differ.
                ra, rb = differing_lines(left_p.lines, right_p.lines)
                left_tags = [(s, e, _UNNAMED) for s, e in ra]
                right_tags = [(s, e, _UNNAMED) for s, e in rb]
        for tags in (left_tags, right_tags):
            self.highlighted_paths.update(self.differences[t[2]] for t in tags if t[2] >= 0)
        base = muted if section == "volatile" else Style()
        left = self._side(fr.original, left_p, left_tags, base, self._style("removed"))
        right = self._side(fr.replay, right_p, right_tags, base, self._style("added"))
        if section == "changes":
            mark, style = Text("Δ ", changed), changed
        elif fr.changed:
            mark, style = Text("~ ", changed), changed
        else:
            mark, style = Text(""), (muted if section == "volatile" else Style())
        return Cells(mark, [Text(visible(fr.path), style)], left, right, section)

    def _side(self, value: Any, pretty: Pretty, tags: Sequence[Tag], base: Style, tint: Style) -> Side:
        """The lines of one side: all of them with ``show_all``, else the head and the lines around ``tags``."""
        muted = self._style("muted")
        if value is ABSENT:
            return Side([Text(ABSENT_TEXT, muted)], [_NONE])
        lines = pretty.lines
        total = len(lines)
        segments = [(0, total)] if self.show_all else keep_lines(
            total, [(s, e) for s, e, _ in tags], head=HEAD_LINES, per_range=PER_RANGE
        )
        out: list[Text] = []
        out_tags: list[int] = []
        starts: dict[int, int] = {}
        hidden = 0
        done = 0

        def skipped(n: int) -> None:
            out.append(Text(f"… {n:,} more lines ({SHOW_ALL_HINT})", muted))
            out_tags.append(_NONE)

        tag_at: dict[int, int] | list[int] = {}
        if tags and self.show_all:
            tag_at = [_NONE] * total
            for s, e, t in reversed(tags):  # the first range naming a line wins
                tag_at[s:e] = [t] * (e - s)
        show_all = self.show_all
        for start, end in segments:
            if start > done:
                skipped(start - done)
                hidden += start - done
            for j in range(start, end):
                if show_all:
                    tag = tag_at[j] if tags else _NONE
                else:
                    tag = next((t for s, e, t in tags if s <= j < e), _NONE)
                raw = lines[j]
                cut = 0 if show_all else max(0, len(raw) - LINE_CHARS)
                text = Text(visible(raw[: len(raw) - cut], newlines=True), tint if tag != _NONE else base)
                if cut:
                    text.append(f" … {cut:,} more characters ({SHOW_ALL_HINT})", muted)
                    hidden += 1
                if tag >= 0 and tag not in starts:
                    starts[tag] = len(out)
                out.append(text)
                out_tags.append(tag)
            done = end
        if total > done:
            skipped(total - done)
            hidden += total - done
        return Side(out, out_tags, starts, hidden)

    # -- layout (per width) ---------------------------------------------------

    def layout(self, width: int) -> list[Line]:
        """The pair's lines at ``width``; the cyclic GC is paused meanwhile (the lines hold no cycles, and
        full collections over the loaded traces would take longer than laying out a megabyte)."""
        if self.pair is None:
            return []
        from tracetui.core.readers import promote_young_objects

        was = gc.isenabled()
        gc.disable()
        try:
            return self._layout(self.pair, width)
        finally:
            promote_young_objects()
            if was:
                gc.enable()

    def _layout(self, pf: PairFields, width: int) -> list[Line]:
        if self._prepared is None:
            self.highlighted_paths = set()
            self._prepared = self._prepare(pf)
        muted = self._style("muted")
        paths = [c.name[0].plain for c in self._prepared if c is not None]
        longest = max((len(p) for p in paths), default=10) + 1
        field_w = max(12, min(34, longest, width // 4))
        value_w = max(8, (width - 2 - field_w - 1 - len(SEPARATOR) - 1) // 2)
        self._widths = (field_w, value_w)
        blank = [Text()]
        lines: list[Line] = self._columns(
            Text(""), [Text("field", muted)], blank, [Text("original", muted)], blank, [Text("replay", muted)]
        )
        lines.append(Text("─" * width, muted))
        found: dict[int, tuple[int, int]] = {}  # difference -> (priority, terminal line); compared field first
        for cells in self._prepared:
            if cells is None:
                lines.append(Text("  not compared", self._style("section")))
                lines.append(Text())
                continue
            left, lgut, lstarts = self._fold_side(cells.left, value_w)
            right, rgut, rstarts = self._fold_side(cells.right, value_w)
            priority = 0 if cells.section == "semantic" else 1
            for i, at in (*lstarts.items(), *rstarts.items()):
                here = (priority, len(lines) + at)
                if i not in found or here < found[i]:
                    found[i] = here
            lines += self._columns(cells.mark, _name_lines(cells.name, field_w), lgut, left, rgut, right)
            lines.append(Text())
        self.difference_lines = [found[i][1] if i in found else None for i in range(len(self.differences))]
        return lines

    def _fold_side(self, side: Side, width: int) -> tuple[list[Text], list[Text], dict[int, int]]:
        """The side's lines wrapped at ``width``, a gutter line per wrapped line, and where each difference starts."""
        gutter_style = self._style("gutter")
        out: list[Text] = []
        gutter: list[Text] = []
        offsets: list[int] = []
        current_line = side.starts.get(self.current) if self.current is not None else None
        blank = Text()
        for k, (line, tag) in enumerate(zip(side.lines, side.tags, strict=True)):
            plain = line.plain
            if len(plain) <= width and plain.isascii():  # most lines of pretty JSON: one cell a character
                offsets.append(len(out))
                out.append(line)
                gutter.append(blank if tag == _NONE else Text(CURRENT if k == current_line else GUTTER, gutter_style))
                continue
            parts = fold([line], width)
            offsets.append(len(out))
            out += parts
            if tag == _NONE:
                gutter += [blank] * len(parts)
            else:
                gutter.append(Text(CURRENT if k == current_line else GUTTER, gutter_style))
                gutter += [Text(GUTTER, gutter_style) for _ in parts[1:]]
        first_of = {i: offsets[k] for i, k in side.starts.items()}
        return out, gutter, first_of

    def _columns(
        self,
        mark: Text,
        name: Sequence[Text],
        lgut: Sequence[Text],
        left: Sequence[Text],
        rgut: Sequence[Text],
        right: Sequence[Text],
    ) -> list[Line]:
        field_w, value_w = self._widths
        return side_by_side(
            [
                ([mark], 2),
                (list(name), field_w),
                (list(lgut), 1),
                (list(left), value_w),
                (list(rgut), 1),
                (list(right), value_w),
            ],
            [Text(), Text(), Text(), Text(SEPARATOR, self._style("muted")), Text(), Text()],
        )


def _pretty(value: Any, path: str) -> Pretty:
    if value is ABSENT:
        return Pretty([ABSENT_TEXT], False, value)
    if path == "duration_ns" and isinstance(value, int):
        return Pretty([format_duration(value)], False, value)
    return pretty_value(value)


def _ignored_inside(pf: PairFields) -> list[FieldRow]:
    """Never-compared values inside compared fields (``llm.messages[2].tool_call_id``...), both sides."""
    from tracetui.core.diff.compare import semantic_fields

    a = nested_volatile(semantic_fields(pf.original)) if pf.original is not None else {}
    b = nested_volatile(semantic_fields(pf.replay)) if pf.replay is not None else {}
    return [FieldRow(p, a.get(p, ABSENT), b.get(p, ABSENT), False) for p in dict.fromkeys([*a, *b])]


def _name_lines(name: list[Text], width: int) -> list[Text]:
    """A field's path, whole, broken only before its separators (``formatting.path_lines``), in its style."""
    if len(name) != 1:
        return fold(name, width)
    style = name[0].style
    return [Text(part, style) for part in path_lines(name[0].plain, width, max_lines=1_000)]
