"""HelpScreen: the key reference, generated from the bindings active where it was opened."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Mapping

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.app import App
    from textual.binding import ActiveBinding


@dataclass(frozen=True, slots=True)
class KeyHelp:
    """One action and every key bound to it.

    Attributes:
        keys: Key names as the footer shows them (``j``, ``↓``).
        description: What the action does (the binding's tooltip, else its description).
        binding_id: The binding's id, for ``App.set_keymap`` (empty when it has none).
    """

    keys: tuple[str, ...]
    description: str
    binding_id: str


def collect_key_help(app: App[object], bindings: Mapping[str, ActiveBinding]) -> list[KeyHelp]:
    """Group active bindings by action: one ``KeyHelp`` per action, keys in binding order.

    Args:
        app: The app (formats keys with ``get_key_display``).
        bindings: ``Screen.active_bindings`` of the screen the help is about.
    """
    grouped: dict[tuple[str, str], list[str]] = {}
    ids: dict[tuple[str, str], str] = {}
    for active in bindings.values():
        binding = active.binding
        if not binding.description:
            continue
        group = (binding.action, binding.tooltip or binding.description)
        grouped.setdefault(group, []).append(app.get_key_display(binding))
        if not ids.get(group):
            ids[group] = binding.id or ""
    return [KeyHelp(tuple(dict.fromkeys(keys)), group[1], ids[group]) for group, keys in grouped.items()]


class HelpScreen(ModalScreen[None]):
    """Modal list of keys, descriptions and binding ids; any of escape, q or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="close-help"),
    ]

    def __init__(self, entries: Iterable[KeyHelp]) -> None:
        super().__init__()
        self.entries = list(entries)
        """What the screen lists."""

    def compose(self) -> ComposeResult:
        table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False, show_edge=False)
        table.add_column("keys", no_wrap=True)
        table.add_column("action")
        table.add_column("binding id", style="dim", no_wrap=True)
        for entry in self.entries:
            table.add_row(Text(" ".join(entry.keys), style="bold"), Text(entry.description), Text(entry.binding_id))
        with Vertical(id="help-box"):
            yield Static(Text("tracetui keys"), id="help-title")
            yield Static(table, id="help-table")
            yield Static(Text("ids remap keys with App.set_keymap · escape closes"), id="help-hint")

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
