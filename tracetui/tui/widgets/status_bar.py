"""StatusBar: one line of facts about the pair: files, span counts, divergences, load warnings."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from tracetui.tui.formatting import visible

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff

SEP = "  │  "


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def issues_summary(diff: TraceDiff) -> str:
    """``3 lines skipped, 1 warning`` for both traces' read issues, or empty when there are none."""
    issues = [*diff.original.issues, *diff.replay.issues]
    skipped = sum(1 for i in issues if i.severity == "skipped")
    warned = len(issues) - skipped
    parts = []
    if skipped:
        parts.append(f"{skipped:,} line{'' if skipped == 1 else 's'} skipped")
    if warned:
        parts.append(_plural(warned, "warning"))
    return ", ".join(parts)


class StatusBar(Static):
    """The status line under the aligned view (``Text`` only, never markup)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "status-bar--file",
        "status-bar--divergent",
        "status-bar--clean",
        "status-bar--warning",
        "status-bar--muted",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._diff: TraceDiff | None = None
        self._row = 0
        self._base: Text = Text()

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"status-bar--{name}")
        return Style(color=full.color, bold=full.bold, italic=full.italic)

    def show_loading(self, original: str, replay: str) -> None:
        """Loading state: names both files."""
        self._diff = None
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("loading ", self._style("muted"))
        text.append(visible(os.path.basename(original)), self._style("file"))
        text.append(" and ", self._style("muted"))
        text.append(visible(os.path.basename(replay)), self._style("file"))
        text.append("…", self._style("muted"))
        self.update(text, layout=False)  # one line, always: no layout pass per cursor move

    def show_error(self, message: str) -> None:
        """Error state (the error panel carries the details)."""
        self._diff = None
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("load failed", self._style("divergent"))
        text.append(SEP + visible(message), self._style("muted"))
        self.update(text, layout=False)  # one line, always: no layout pass per cursor move

    def show_diff(self, diff: TraceDiff) -> None:
        """Summary of a loaded pair; the cursor position is added by ``show_row``."""
        self._diff = diff
        muted = self._style("muted")
        text = Text(no_wrap=True, overflow="ellipsis")
        # Most important first: a narrow terminal cuts the end of the line.
        count = len(diff.divergences)
        if count:
            text.append(_plural(count, "divergence"), self._style("divergent"))
            first = diff.first
            if first is not None:
                text.append(f" · first: row {first.row} {first.type.value}", self._style("divergent"))
        else:
            text.append("no divergence", self._style("clean"))
        notice = issues_summary(diff)
        if notice:
            text.append(SEP, muted)
            text.append(f"⚠ {notice} — press w", self._style("warning"))
        text.append(SEP, muted)
        for n, trace in enumerate((diff.original, diff.replay)):
            if n:
                text.append(" ⟷ ", muted)
            text.append(visible(os.path.basename(trace.path)), self._style("file"))
            text.append(f" {_plural(len(trace.spans), 'span')}", muted)
        self._base = text
        self.show_row(self._row)

    def show_row(self, row: int) -> None:
        """Add the cursor position to the summary: ``row 12 of 340``.

        ``row`` is 0-based, like the numbers in the aligned view and in
        ``tracetui diff``; the count after ``of`` is the number of rows. Nothing
        is added when there are no rows.
        """
        self._row = row
        if self._diff is None:
            return
        text = self._base.copy()
        count = len(self._diff.rows)
        if count:
            text.append(SEP, self._style("muted"))
            text.append(f"row {row:,} of {count:,}", self._style("muted"))
        self.update(text, layout=False)  # one line, always: no layout pass per cursor move
