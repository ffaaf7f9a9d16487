"""LoadErrorPanel: why a trace could not be loaded: side, file, line, field, reason. Never a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from tracetui.tui.formatting import visible

if TYPE_CHECKING:
    from tracetui.tui.messages import LoadFailed

HINTS = {
    "diff": "The traces were read but could not be compared; please report this with both files.",
}
DEFAULT_HINT = "Fix or replace the file, then press R to read the files again."


class LoadErrorPanel(Static):
    """Shown in place of the aligned view when loading fails (``Text`` only, never markup)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"load-error--title", "load-error--label", "load-error--hint"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.error: LoadFailed | None = None
        """The error shown."""

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"load-error--{name}")
        return Style(color=full.color, bold=full.bold, italic=full.italic)

    def show_error(self, error: LoadFailed) -> None:
        """Describe ``error``: which trace, then file / line / field / reason, then what to do."""
        self.error = error
        text = Text()
        what = "compare the traces" if error.side == "diff" else f"load the {error.side} trace"
        text.append(f"✗ Cannot {what}\n\n", self._style("title"))
        rows = []
        if error.path:
            rows.append(("file", error.path))
        if error.line is not None:
            rows.append(("line", str(error.line)))
        if error.where:
            rows.append(("field", error.where))
        rows.append(("reason", error.reason))
        for label, value in rows:
            text.append(f"  {label:<8}", self._style("label"))
            text.append(visible(value) + "\n")
        text.append("\n" + HINTS.get(error.side, DEFAULT_HINT) + "  Press q to quit.", self._style("hint"))
        self.update(text)
