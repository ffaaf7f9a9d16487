"""How an aligned line is laid out: its columns, the marks in its gutter, and the header above it.

Row layout (cells)::

    NNN▶ML original-side-label........... │ replay-side-label............. divergence_type
    row mark M (~ changed, + replay only, - original only, blank equal);
    ▶ only on the first divergence's row; L a reviewer label's mark (``LABEL_MARKS``), else blank

Shared by ``AlignedView`` (``aligned_view.py``, which draws rows in ``aligned_rows.py``), its
``AlignedHeader``, the pair screen and the label marks of the detail pane and label dialog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from rich.text import Text
from textual.widget import Widget

from tracetui.tui.formatting import ELLIPSIS, fit

if TYPE_CHECKING:
    from tracetui.core.diff import Divergence

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

MATCH_MARK = "•"
"""Drawn in the same cell (when not the first divergence's) on a row matching the search whose labels, as drawn,
do not show the term (it is in an argument or an output the label leaves out), or on a folded row whose hidden
subtree holds a match."""

FOLD_MARK = "▸"
"""Starts the summary a folded row shows at the end of its label: ``▸ … N rows, M divergent``."""

LABEL_MARKS = {
    "acceptable_alternative": ("✓", "label-acceptable"),
    "new_regression": ("✗", "label-regression"),
    "fixture_mismatch": ("◆", "label-fixture"),
    "insufficient_spec": ("?", "label-spec"),
}
"""Reviewer label (``tracetui.core.diff.labels.LABELS``) -> (mark drawn after the row mark, component class suffix).

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


def column_layout(width: int, row_count: int, *, single: bool = False) -> ColumnLayout:
    """Split ``width`` cells into the aligned columns.

    Args:
        width: Content width in cells.
        row_count: Number of rows (sizes the row-number column).
        single: One trace alone (``tracetui FILE``): one side takes the whole line, no separator, no type
            column.
    """
    number = max(3, len(str(max(0, row_count - 1))))
    if single:
        return ColumnLayout(number, max(4, width - number - 3), 0, 0)
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


class ColumnTitle(NamedTuple):
    """A column's title in parts, fitted to the column's width by ``fit``: ``side  FILE#RUN  N spans``."""

    side: str
    """``original`` or ``replay`` (bold)."""
    name: str
    """The file's base name (already ``visible``)."""
    run: str = ""
    """The run id in a file of several runs (already ``visible``), else empty."""
    count: str = ""
    """``7 spans`` or ``reading…`` (dim), or empty."""

    @property
    def plain(self) -> str:
        return self.fit(10_000).plain.rstrip()

    def fit(self, width: int) -> Text:
        """The title in ``width`` cells, padded. What goes first when it is too long: the span count, then the
        start of the file name (``tau-bench-a…#task-1-trial-1``), then the side word; the run id stays whole
        while it fits, since two trials of one file differ only there."""
        tail = f"#{self.run}" if self.run else ""
        name = self.name + tail
        side = f"{self.side}  "
        candidates = [(side, name, self.count), (side, name, "")]
        room = width - len(side) - len(tail)
        if room >= 5:
            candidates.append((side, _shorten(self.name, room) + tail, ""))
        if width - len(tail) >= 5:
            candidates.append(("", _shorten(self.name, width - len(tail)) + tail, ""))
        for side_part, name_part, count in candidates:
            size = len(side_part) + len(name_part) + (len(count) + 2 if count else 0)
            if size <= width:
                return self._text(side_part, name_part, count, width)
        return self._text("", (ELLIPSIS + name[-(width - 1):]) if width > 1 else "", "", width)

    def _text(self, side: str, name: str, count: str, width: int) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if side:
            text.append(side.rstrip(), "bold")
            text.append("  ")
        text.append(name)
        if count:
            text.append(f"  {count}", "dim")
        text.truncate(width, overflow="ellipsis", pad=True)
        return text


def _shorten(name: str, room: int) -> str:
    """``name`` in ``room`` characters: its start and ``…``."""
    return name if len(name) <= room else name[: room - 1] + ELLIPSIS


class AlignedHeader(Widget):
    """The column titles above an ``AlignedView``, laid out with the same ``column_layout``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._left = Text("original")
        self._right = Text("replay")
        self._rows = 0
        self.single = False
        """One trace alone: only the left title, over the whole line."""

    def set_titles(self, left: Text | ColumnTitle, right: Text | ColumnTitle, row_count: int) -> None:
        """Set both column titles (``Text``, never markup, or a ``ColumnTitle`` fitted to the column) and the
        row count."""
        self._left, self._right, self._rows = left, right, row_count
        self.refresh()

    def render(self) -> Text:
        layout = column_layout(self.content_region.width, self._rows, single=self.single)
        line = Text(no_wrap=True, overflow="crop", end="")
        line.append(" " * (layout.number + 3))
        if self.single:
            left = self._left._replace(side="trace") if isinstance(self._left, ColumnTitle) else self._left
            line.append_text(_fit_text(left, layout.side))
            return line
        line.append_text(_fit_text(self._left, layout.side))
        line.append(SEPARATOR)
        line.append_text(_fit_text(self._right, layout.side))
        if layout.kind:
            line.append(" ")
            line.append(fit("divergence", layout.kind))
        return line


def _fit_text(text: Text | ColumnTitle, width: int) -> Text:
    if isinstance(text, ColumnTitle):
        return text.fit(width)
    out = text.copy()
    out.truncate(width, overflow="ellipsis", pad=True)
    return out

