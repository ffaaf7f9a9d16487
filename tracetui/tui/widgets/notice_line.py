"""NoticeLine: what the app says on launch, on one or two lines above the detail pane, never over it.

Toasts shown on launch ("run inputs changed", "several runs", a config file's problems, a damaged labels
file) used to cover the replay column of the detail pane and the status line for 5–12 s, exactly while the
user read the first divergence. They are notices here instead: a line between the aligned view and the
detail pane that takes its own room (the detail pane keeps its height; the list gives up the rows),
stays until ``X`` (or a click) hides it, and is never drawn over anything.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.widgets import Static

from tracetui.tui.formatting import visible

DISMISS_HINT = "X hides"


class NoticeLine(Static):
    """Launch notices, each ``title: message`` (plain text, never markup); hidden when there are none.

    ``add`` replaces a notice of the same title; ``dismiss`` (the app's ``X``) hides them all until a new one
    comes.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"notice-line--title", "notice-line--muted", "notice-line--warning"}

    DEFAULT_CSS = """
    NoticeLine { height: auto; max-height: 2; padding: 0 1; background: $boost; display: none; }
    NoticeLine.-shown { display: block; }
    NoticeLine > .notice-line--title { text-style: bold; }
    NoticeLine > .notice-line--muted { color: $text-muted; }
    NoticeLine > .notice-line--warning { color: $text-warning; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.notices: dict[str, tuple[str, str]] = {}
        """Shown notices by title: ``(message, severity)`` (``information`` or ``warning``), in arrival order."""

    @property
    def plain(self) -> str:
        """The notices as plain text (empty when hidden)."""
        return self._text().plain if self.has_class("-shown") else ""

    def add(self, title: str, message: str, *, severity: str = "information") -> None:
        """Show ``title: message`` (a notice with the same title is replaced); the message's lines are drawn
        joined by `` · ``."""
        self.notices.pop(title, None)
        self.notices[title] = (message, severity)
        self.add_class("-shown")
        self.update(self._text())

    def remove(self, title: str) -> None:
        """Drop the notice ``title`` (the line hides when it was the last)."""
        if self.notices.pop(title, None) is not None:
            self._refresh_shown()

    def clear(self) -> None:
        """Drop every notice (a new pair is loaded)."""
        self.notices.clear()
        self._refresh_shown()

    def dismiss(self) -> bool:
        """Hide the line; True when something was shown."""
        shown = self.has_class("-shown")
        self.notices.clear()
        self._refresh_shown()
        return shown

    def _refresh_shown(self) -> None:
        self.set_class(bool(self.notices), "-shown")
        self.update(self._text())

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"notice-line--{name}")
        return Style(color=full.color, bold=full.bold, italic=full.italic)

    def _text(self) -> Text:
        text = Text(overflow="ellipsis")
        muted = self._style("muted")
        if self.notices:  # first: a long notice is cut at the end of the second line
            text.append(f"{DISMISS_HINT} │ ", muted)
        for n, (title, (message, severity)) in enumerate(self.notices.items()):
            if n:
                text.append("  │  ", muted)
            text.append("⚠ " if severity == "warning" else "ⓘ ", self._style("warning" if severity == "warning" else "muted"))
            text.append(f"{visible(title)}: ", self._style("warning" if severity == "warning" else "title"))
            text.append(visible(" · ".join(part for part in message.splitlines() if part.strip())))
        return text

    def _on_click(self, event: events.Click) -> None:
        self.dismiss()
