"""IssuesScreen: every line a reader skipped or doubted, for both traces, with file, line and field."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tracetui.tui.formatting import visible

if TYPE_CHECKING:
    from tracetui.core.model import ReadIssue

SHOWN = 2000
"""Issues listed at most; the rest are counted."""


class IssuesScreen(ModalScreen[None]):
    """Modal list of read issues, each with the side it came from (``original``, ``replay``, or
    ``both`` when the two sides are the same file) and ``str(ReadIssue)``: ``path:line (field): message``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,w", "close", "Close", id="close-issues"),
    ]

    def __init__(self, issues: Sequence[tuple[str, ReadIssue]]) -> None:
        super().__init__()
        merged: dict[ReadIssue, str] = {}
        for side, issue in issues:  # the same file on both sides: each issue once, as "both"
            merged[issue] = "both" if merged.get(issue, side) != side else side
        self.issues: list[tuple[str, ReadIssue]] = [(side, issue) for issue, side in merged.items()]
        """The issues listed, with their side."""

    def compose(self) -> ComposeResult:
        text = Text()
        for n, (side, issue) in enumerate(self.issues[:SHOWN]):
            if n:
                text.append("\n")
            text.append(f"{issue.severity if issue.severity in ('skipped', 'info') else 'warning'}  ", "bold")
            text.append(f"{side:<9}", "dim")
            text.append(visible(str(issue)))
        if len(self.issues) > SHOWN:
            text.append(f"\n… and {len(self.issues) - SHOWN:,} more", "dim")
        count = len(self.issues)
        with Vertical(id="issues-box"):
            yield Static(Text(f"load warnings ({count})"), id="issues-title")
            with VerticalScroll(id="issues-body"):
                yield Static(text, id="issues-text")
            yield Static(Text("escape closes"), id="issues-hint")

    def action_close(self) -> None:
        """Close the list."""
        self.dismiss(None)
