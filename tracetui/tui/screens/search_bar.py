"""SearchBar: a one-line prompt at the bottom of the screen, over the main view, for a search or a span id.

A transparent modal screen, so the rows stay visible while typing and the
main screen's layout never changes. ``enter`` dismisses it with the text
typed, ``escape`` with None.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Input, Static

SEARCH, SPAN = "search", "span"
"""Modes: a text search (``/``) or a jump to a span id (``:``)."""

PROMPTS = {SEARCH: "/", SPAN: "span id:"}
PLACEHOLDERS = {
    SEARCH: "span name, tool name, argument or output text (enter searches, escape closes)",
    SPAN: "a span id or its first characters, either side (enter jumps, escape closes)",
}


class SearchBar(ModalScreen[str | None]):
    """The prompt; dismissed with the text typed (enter) or None (escape).

    Args:
        mode: ``search`` or ``span``.
        value: Text to start with (the last search, selected so typing replaces it).
    """

    DEFAULT_CSS = """
    SearchBar {
        background: $background 0%;
        align: left bottom;
    }
    SearchBar #search-row {
        dock: bottom;
        height: 1;
        width: 100%;
        background: $panel;
    }
    SearchBar #search-prompt {
        width: auto;
        padding: 0 1;
        color: $text-accent;
        text-style: bold;
        background: $panel;
    }
    SearchBar Input {
        border: none;
        height: 1;
        width: 1fr;
        padding: 0;
        background: $panel;
    }
    SearchBar Input:focus {
        border: none;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="close-search", tooltip="Close the search bar"),
    ]

    def __init__(self, mode: str = SEARCH, value: str = "") -> None:
        super().__init__()
        self.mode = mode if mode in PROMPTS else SEARCH
        self._value = value

    def compose(self) -> ComposeResult:
        with Horizontal(id="search-row"):
            yield Static(Text(PROMPTS[self.mode]), id="search-prompt")
            yield Input(value=self._value, placeholder=PLACEHOLDERS[self.mode], id="search-input",
                        select_on_focus=True)

    def on_mount(self) -> None:
        # Inline, so app.tcss's opaque `Screen { background }` rule cannot hide the rows behind the bar.
        self.styles.background = Color(0, 0, 0, 0)
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_close(self) -> None:
        """Close without searching."""
        self.dismiss(None)
