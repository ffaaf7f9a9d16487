"""HelpScreen: the key reference, generated from the bindings active where it was opened."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Mapping

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tracetui.tui.pair_fields import DIVERGENCE_HELP

if TYPE_CHECKING:
    from textual.app import App
    from textual.binding import ActiveBinding


@dataclass(frozen=True, slots=True)
class KeyHelp:
    """One action and every key bound to it.

    Attributes:
        keys: Key names as the footer shows them (``j``, ``↓``).
        description: What the action does (the binding's tooltip, else its description).
        binding_id: The binding's id, for ``App.set_keymap`` (empty when it has none;
            not shown to the user).
    """

    keys: tuple[str, ...]
    description: str
    binding_id: str


def collect_key_help(app: App[object], bindings: Mapping[str, ActiveBinding]) -> list[KeyHelp]:
    """Group active bindings by action: one ``KeyHelp`` per action, keys in binding order.

    Only tracetui's own keys are listed (those with a binding id); Textual's
    built-in ones (tab, ctrl+c, ctrl+q) are left out.

    Args:
        app: The app (formats keys with ``get_key_display``).
        bindings: ``Screen.active_bindings`` of the screen the help is about.
    """
    grouped: dict[tuple[str, str], list[str]] = {}
    ids: dict[tuple[str, str], str] = {}
    rank: dict[tuple[str, str], tuple[int, int]] = {}
    nodes: dict[int, int] = {}  # id(node) -> rank of the node, in the order the bindings name them
    for active in bindings.values():
        binding = active.binding
        if not binding.description or not binding.id:
            continue  # Textual's own keys (tab, ctrl+q...) carry no id; every tracetui key has one
        group = (binding.action, binding.tooltip or binding.description)
        grouped.setdefault(group, []).append(app.get_key_display(binding))
        if not ids.get(group):
            ids[group] = binding.id or ""
        if group not in rank:
            node_rank = nodes.setdefault(id(active.node), len(nodes))
            rank[group] = (node_rank, _declared_index(active.node, binding.id))
    # A key remapped by the keymap (App.set_keymap) comes last in ``bindings``: list it where it is declared.
    ordered = sorted(grouped, key=lambda group: rank[group])
    return [KeyHelp(tuple(dict.fromkeys(grouped[group])), group[1], ids[group]) for group in ordered]


def _declared_index(node: object, binding_id: str) -> int:
    """Position of the binding ``binding_id`` in the ``BINDINGS`` of ``node``'s class (its bases' after)."""
    index = 0
    for cls in type(node).__mro__:
        for binding in cls.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id == binding_id:
                return index
            index += 1
    return index


MARKS_LEGEND: tuple[tuple[str, str], ...] = (
    ("~", "changed: both runs have this span, but its compared fields differ"),
    ("+", "only in the replay"),
    ("-", "only in the original"),
    ("▶", "the first divergence: where the replay first went another way (its type is highlighted)"),
    ("✓✗◆?", "after the mark: a reviewer label (acceptable_alternative, new_regression, fixture_mismatch, "
             "insufficient_spec); l sets it"),
)
"""Gutter marks of the aligned view (``aligned_view.MARKS``, ``FIRST_MARK``)."""

DETAIL_LEGEND: tuple[tuple[str, str], ...] = (
    ("Δ", "a value that changed inside a field (its path names where)"),
    ("~", "a compared field whose value differs"),
    ("—", "this side has no such field (null is a recorded null)"),
)
"""Marks of the detail pane and the full pair screen."""


def legend() -> Text:
    """What the marks and the divergence type names mean, as ``Text`` (no markup)."""
    text = Text()

    def section(title: str, rows: Iterable[tuple[str, str]], width: int) -> None:
        if text:
            text.append("\n\n")
        text.append(title, "bold")
        for mark, meaning in rows:
            text.append("\n  ")
            text.append(f"{mark:<{width}}", "bold")
            text.append(f"  {meaning}")

    section("row marks", MARKS_LEGEND, max(len(m) for m, _ in MARKS_LEGEND))
    section("detail pane", DETAIL_LEGEND, 1)
    width = max(len(name) for name in DIVERGENCE_HELP)
    section("divergence types", DIVERGENCE_HELP.items(), width)
    return text


class HelpScreen(ModalScreen[None]):
    """Modal list of keys with what they do, then a legend of marks and divergence types; escape, q or ? closes it.

    Binding ids stay on the bindings (for ``App.set_keymap``) but are not shown here.
    """

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
        for entry in self.entries:
            table.add_row(Text(" ".join(entry.keys), style="bold"), Text(entry.description))
        with Vertical(id="help-box"):
            yield Static(Text("tracetui keys"), id="help-title")
            with VerticalScroll(id="help-body"):
                yield Static(table, id="help-table")
                yield Static(legend(), id="help-legend")
            yield Static(Text(f"↑ ↓ scroll · escape closes · ctrl+p runs a command by name · {self._config_hint()}"),
                         id="help-hint")

    def _config_hint(self) -> str:
        """Where keys are remapped (the config file the app read, or would read)."""
        config = getattr(self.app, "config", None)
        path = getattr(config, "path", None)
        if path is None:
            from tracetui.tui.config import config_path

            path = config_path()
        home = os.path.expanduser("~")
        shown = str(path)
        if home != "/" and shown.startswith(home + os.sep):
            shown = "~" + shown[len(home):]
        return f"remap keys in {shown} (docs/tui.md)"

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
