"""KindFilter: pick the span kinds the aligned view shows (``s`` on the rows).

A small modal: one checkbox per span kind with how many rows hold it (either side), then apply.
Dismissed with the kinds checked (a ``frozenset[SpanKind]``; every kind means no kind filter) or None
when cancelled. Keys: space toggles the focused kind, ``a`` checks every kind, ``o`` keeps only the
focused one, enter applies, escape cancels.
"""

from __future__ import annotations

from typing import ClassVar, Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Static

from tracetui.core.model import SpanKind
from tracetui.tui.rowfilter import KIND_ORDER


class KindBox(Checkbox, inherit_bindings=False):
    """A kind's checkbox: space toggles it; enter is left to the dialog (apply)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_button", "Toggle", show=False, id="kinds-toggle", tooltip="Check or uncheck this kind"),
    ]


class KindFilter(ModalScreen["frozenset[SpanKind] | None"]):
    """Modal: a checkbox per span kind with its row count.

    Args:
        counts: Rows holding each kind (``rowfilter.kind_counts``).
        shown: Kinds checked when it opens (the kinds shown now).
    """

    DEFAULT_CSS = """
    KindFilter {
        align: center middle;
        background: $background 60%;
    }
    KindFilter #kind-box {
        width: 52;
        height: auto;
        background: $panel;
        border: round $primary;
        padding: 0 1;
    }
    KindFilter #kind-title { text-style: bold; color: $text-primary; padding-bottom: 1; }
    KindFilter Checkbox { width: 100%; border: none; padding: 0; background: $panel; }
    KindFilter Checkbox:focus { background: $primary 30%; }
    KindFilter #kind-buttons { height: auto; padding-top: 1; }
    KindFilter Button { min-width: 10; margin-right: 1; }
    KindFilter #kind-hint { color: $text-muted; padding-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="kinds-cancel", tooltip="Close without changing the filter"),
        Binding("enter", "apply", "Apply", id="kinds-apply", tooltip="Show only the rows of the kinds checked"),
        Binding("a", "all", "All kinds", id="kinds-all", tooltip="Check every kind (no kind filter)"),
        Binding("o", "only", "Only this", id="kinds-only", tooltip="Check only the focused kind"),
        Binding("down,j", "app.focus_next", "Next", show=False, id="kinds-next", tooltip="Focus the next kind"),
        Binding("up,k", "app.focus_previous", "Previous", show=False, id="kinds-previous",
                tooltip="Focus the previous kind"),
    ]

    def __init__(self, counts: Mapping[SpanKind, int], shown: frozenset[SpanKind] | set[SpanKind]) -> None:
        super().__init__()
        self.counts = dict(counts)
        self.initial = frozenset(shown)

    def compose(self) -> ComposeResult:
        with Vertical(id="kind-box"):
            yield Static(Text("Show span kinds"), id="kind-title")
            for kind in KIND_ORDER:
                count = self.counts.get(kind, 0)
                label = Text(f"{kind.value:<10}")
                label.append(f"{count:>10,} row{'' if count == 1 else 's'}", "dim" if not count else "")
                yield KindBox(label, kind in self.initial, id=f"kind-{kind.value}")
            with Horizontal(id="kind-buttons"):
                yield Button("Apply", id="kind-apply", variant="primary")
                yield Button("All", id="kind-all")
                yield Button("Cancel", id="kind-cancel")
            yield Static(Text("space toggles · o only this kind · a all · enter applies · escape cancels"),
                         id="kind-hint")

    def on_mount(self) -> None:
        self.query(Checkbox).first().focus()

    @property
    def checked(self) -> frozenset[SpanKind]:
        """The kinds checked now."""
        return frozenset(k for k in KIND_ORDER if self.query_one(f"#kind-{k.value}", Checkbox).value)

    def set_checked(self, kinds: set[SpanKind] | frozenset[SpanKind]) -> None:
        """Check exactly ``kinds``."""
        for kind in KIND_ORDER:
            self.query_one(f"#kind-{kind.value}", Checkbox).value = kind in kinds

    def action_apply(self) -> None:
        """Close with the kinds checked; with none checked, say so and stay open."""
        kinds = self.checked
        if not kinds:
            self.app.bell()
            self.notify("Check at least one kind (a checks them all).", title="span kinds", markup=False)
            return
        self.dismiss(kinds)

    def action_all(self) -> None:
        """Check every kind."""
        self.set_checked(set(KIND_ORDER))

    def action_only(self) -> None:
        """Check only the focused kind."""
        focused = self.focused
        if isinstance(focused, Checkbox) and focused.id and focused.id.startswith("kind-"):
            self.set_checked({SpanKind(focused.id.removeprefix("kind-"))})

    def action_cancel(self) -> None:
        """Close without changing the filter."""
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "kind-apply":
            self.action_apply()
        elif event.button.id == "kind-all":
            self.action_all()
        else:
            self.action_cancel()
