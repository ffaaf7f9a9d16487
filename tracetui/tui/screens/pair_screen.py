"""PairScreen: one aligned pair in full, every field side by side, payloads wrapped and scrollable.

Pushed on ``enter``. JSON values (and strings holding JSON) are pretty-printed;
in a changed field the lines only the original has and the lines only the
replay has are tinted, so a one-line change in a long output stands out.
``n``/``p`` step through divergences; the screen returns the row it ends on.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any, ClassVar, List, Sequence, Tuple

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from tracetui.tui.formatting import ABSENT_TEXT, format_duration, full_text, span_label, visible
from tracetui.tui.pair_fields import ABSENT, DIVERGENCE_HELP, FieldRow, PairFields, pair_fields
from tracetui.tui.widgets.text_lines import Line, TextLines, fold, side_by_side

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.model import Span

FULL_LIMIT = 200_000
"""Characters of one value drawn at most; longer values say how much is not shown."""


SEPARATOR = " │ "

Cells = Tuple[Text, List[Text], List[Text], List[Text]]
"""One field, width-independent: the mark, then the name, original and replay values as lines."""


class PairBody(TextLines, can_focus=True, inherit_bindings=False):
    """Every field of one pair as side-by-side columns, long values wrapped in full; arrow keys scroll."""

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
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pair: PairFields | None = None
        """The pair shown."""
        self._widths = (12, 8)
        self._prepared: list[Cells | None] | None = None

    def show(self, pair: PairFields) -> None:
        """Show ``pair`` from its first line."""
        self.pair = pair
        self._prepared = None
        self.invalidate()
        self.scroll_to(y=0, animate=False, immediate=True)

    def styles_changed(self) -> None:
        self._prepared = None  # the prepared cells carry the old theme's colours
        super().styles_changed()

    def _style(self, name: str) -> Style:
        if name in ("removed", "added"):
            full = self.get_component_rich_style(f"pair-body--{name}")
            return Style(color=full.color, bgcolor=full.bgcolor)
        return self.foreground(f"pair-body--{name}")

    def _prepare(self, pf: PairFields) -> list[Cells | None]:
        """Every field's ``(mark, name, original, replay)`` cells, independent of width.

        ``None`` marks where the volatile section starts.

        The expensive part (pretty-printing, the line diff of long values) runs once per pair, not per resize.
        """
        cells: list[Cells | None] = [self._cells(fr) for fr in (*pf.changes, *pf.semantic)]
        if pf.volatile:
            cells.append(None)
            cells += [self._cells(fr, volatile=True) for fr in pf.volatile]
        return cells

    def layout(self, width: int) -> list[Line]:
        pf = self.pair
        if pf is None:
            return []
        if self._prepared is None:
            self._prepared = self._prepare(pf)
        muted = self._style("muted")
        paths = [fr.path for fr in (*pf.changes, *pf.semantic, *pf.volatile)]
        longest = max((len(p) for p in paths), default=10) + 1
        field_w = max(12, min(34, longest, width // 4))
        value_w = max(8, (width - 2 - field_w - 1 - len(SEPARATOR)) // 2)
        self._widths = (field_w, value_w)
        lines = self._columns(Text(""), [Text("field", muted)], [Text("original", muted)], [Text("replay", muted)])
        lines.append(Text("─" * width, muted))
        for cells in self._prepared:
            if cells is None:
                lines.append(Text("  not compared", self._style("section")))
                lines.append(Text())
                continue
            lines += self._columns(*cells)
            lines.append(Text())
        return lines

    def _columns(self, mark: Text, name: Sequence[Text], left: Sequence[Text], right: Sequence[Text]) -> list[Line]:
        field_w, value_w = self._widths
        return side_by_side(
            [
                ([mark], 2),
                (fold(name, field_w), field_w),
                (fold(left, value_w), value_w),
                (fold(right, value_w), value_w),
            ],
            [Text(), Text(" "), Text(SEPARATOR, self._style("muted")), Text()],
        )

    def _cells(self, fr: FieldRow, *, volatile: bool = False) -> Cells:
        muted = self._style("muted")
        style = self._style("changed") if fr.changed else (muted if volatile else Style())
        left, left_total = _cell(fr.original, fr.path)
        right, right_total = _cell(fr.replay, fr.path)
        value_style = muted if volatile else Style()
        if fr.changed and fr.original is not ABSENT and fr.replay is not ABSENT:
            lt, rt = _line_diff(left, right, self._style("removed"), self._style("added"))
        else:
            lt = [Text(line, value_style) for line in left.split("\n")]
            rt = [Text(line, value_style) for line in right.split("\n")]
        # No such field on that side (a recorded null shows as ``null``).
        if fr.original is ABSENT:
            lt = [Text(ABSENT_TEXT, muted)]
        if fr.replay is ABSENT:
            rt = [Text(ABSENT_TEXT, muted)]
        for lines, total in ((lt, left_total), (rt, right_total)):
            if total > FULL_LIMIT:
                lines.append(Text(f"… {total - FULL_LIMIT:,} more characters not shown ({total:,} in all)", muted))
        mark = Text("~ " if fr.changed else "", style + Style(bold=True))
        return mark, [Text(visible(fr.path), style)], lt, rt


class PairScreen(Screen[int]):
    """Every field of aligned row ``row`` of a diff; dismisses with the row it was showing."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"pair-screen--changed", "pair-screen--muted"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="close-pair", tooltip="Back to the aligned view, cursor on this row"),
        Binding("f", "first", "First div", id="pair-first-divergence", tooltip="Show the first divergent pair"),
        Binding("n", "step(1)", "Next div", id="pair-next-divergence", tooltip="Show the next divergent pair"),
        Binding("p", "step(-1)", "Prev div", id="pair-previous-divergence", tooltip="Show the previous divergent pair"),
    ]

    def __init__(self, diff: TraceDiff, row: int) -> None:
        super().__init__()
        self._diff = diff
        self.row = row
        """The aligned row shown."""
        self._divergent = sorted(diff.divergent_rows)

    def compose(self) -> ComposeResult:
        yield Static(id="pair-title", markup=False)
        yield PairBody(id="pair-body")
        yield Footer()

    def on_mount(self) -> None:
        self._show()
        self.query_one(PairBody).focus()

    def _show(self) -> None:
        pf = pair_fields(self._diff, self.row)
        self.query_one("#pair-title", Static).update(self._title(pf))
        self.query_one(PairBody).show(pf)

    def action_close(self) -> None:
        """Back to the aligned view, its cursor on the row shown here."""
        self.dismiss(self.row)

    def action_first(self) -> None:
        """Show the first divergence (``TraceDiff.first``); bell when the traces agree."""
        first = self._diff.first
        if first is None:
            self.app.bell()
            return
        self.row = first.row
        self._show()

    def action_step(self, direction: int) -> None:
        """Show the next (1) or previous (-1) divergent row."""
        if direction > 0:
            i = bisect_right(self._divergent, self.row)
            target = self._divergent[i] if i < len(self._divergent) else None
        else:
            i = bisect_left(self._divergent, self.row)
            target = self._divergent[i - 1] if i > 0 else None
        if target is None:
            self.app.bell()
            return
        self.row = target
        self._show()

    # -- rendering ----------------------------------------------------------

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"pair-screen--{name}")
        return Style(color=full.color, bold=full.bold)

    def _title(self, pf: PairFields) -> RenderableType:
        line = Text(no_wrap=True, overflow="ellipsis")
        muted = self._style("muted")
        line.append(f"row {pf.row}", Style(bold=True))
        if pf.divergence is not None:
            line.append(" · ", muted)
            line.append(pf.type_name, self._style("changed") + Style(bold=True))
            if pf.is_first:
                line.append(" · first divergence", Style(bold=True))
            line.append(f" — {DIVERGENCE_HELP.get(pf.type_name, '')}", muted)
        else:
            line.append(" · no divergence", muted)
        sides = []
        for side, span in (("original", pf.original), ("replay", pf.replay)):
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append(f"{side:<9} ", self._style("muted"))
            text.append_text(_span_line(span))
            sides.append(text)
        return Group(line, *sides)


def _span_line(span: Span | None) -> Text:
    if span is None:
        return Text("—")
    where = f"  (span {span.span_id}" + (f", line {span.line}" if span.line is not None else "") + ")"
    return Text(f"{span.kind.value} {span_label(span)}" + visible(where))


def _cell(value: Any, path: str) -> tuple[str, int]:
    if value is ABSENT:
        return ABSENT_TEXT, len(ABSENT_TEXT)
    if path == "duration_ns" and isinstance(value, int):
        return format_duration(value), 1
    return full_text(value, FULL_LIMIT)


LINE_DIFF_MAX = 2_000
"""Differing middle (in lines, either side) above which the line diff tints it whole instead of matching."""


def _line_diff(left: str, right: str, removed: Style, added: Style) -> tuple[list[Text], list[Text]]:
    """Both values as lines, the lines that differ tinted (original: removed, replay: added).

    The common leading and trailing lines are trimmed first (the usual case: a
    long payload that differs in a few lines), so ``difflib`` only sees the
    middle; a middle longer than ``LINE_DIFF_MAX`` lines is tinted whole.
    """
    a, b = left.split("\n"), right.split("\n")
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(mid_a) > LINE_DIFF_MAX or len(mid_b) > LINE_DIFF_MAX:
        opcodes = [("replace", 0, len(mid_a), 0, len(mid_b))]
    else:
        opcodes = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes()
    lt = [Text(line) for line in a[:head]]
    rt = [Text(line) for line in b[:head]]
    for tag, i1, i2, j1, j2 in opcodes:
        lt += [Text(mid_a[i], removed if tag != "equal" else "") for i in range(i1, i2)]
        rt += [Text(mid_b[j], added if tag != "equal" else "") for j in range(j1, j2)]
    lt += [Text(line) for line in a[len(a) - tail :]]
    rt += [Text(line) for line in b[len(b) - tail :]]
    return lt, rt
