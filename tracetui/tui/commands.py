"""The command palette (ctrl+p): tracetui's actions by name, each running the same action as its key.

A command names a binding id; its action, its help text (the binding's tooltip)
and the key shown next to it come from that binding and the current keymap, so
nothing here repeats what a key does. A command is offered only when its key
would work now: the pair's commands once the pair is loaded and the main screen
is under the palette, "Next match" once there was a search, "Label" on a
divergent row. Typing ``:ID`` offers a jump straight to span ``ID``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from tracetui.tui.host import PairHost
    from tracetui.tui.widgets.aligned_view import AlignedView


@dataclass(frozen=True)
class Command:
    """One palette entry.

    Attributes:
        title: What the palette lists (and matches against).
        binding_id: The binding whose action it runs (``TraceTuiApp`` or ``AlignedView`` bindings),
            or empty for ``action``.
        owner: ``"app"`` or ``"view"`` (the aligned view): where the binding is declared.
        action: The action to run when there is no binding (``binding_id`` empty).
        help: Help text when there is no binding.
        when: Extra condition (``"search"``: after a search; ``"divergence"``: on a divergent row;
            ``"watch"``: while a replay is watched, ``--watch``).
    """

    title: str
    binding_id: str
    owner: str = "view"
    action: str = ""
    help: str = ""
    when: str = ""


COMMANDS: tuple[Command, ...] = (
    Command("First divergence", "first-divergence"),
    Command("Next divergence", "next-divergence"),
    Command("Previous divergence", "previous-divergence"),
    Command("Jump to span id…", "jump-to-span"),
    Command("Open the full pair", "open-pair"),
    Command("Search…", "search"),
    Command("Next search match", "next-match", when="search"),
    Command("Previous search match", "previous-match", when="search"),
    Command("Divergent rows only / all rows", "filter-divergent"),
    Command("Span kinds shown…", "filter-kinds"),
    Command("Collapse / expand this subtree", "toggle-fold"),
    Command("Collapse every subtree at this depth", "collapse-to-depth"),
    Command("Expand all subtrees", "expand-all"),
    Command("Clear the search", "clear-search", when="search"),
    Command("Follow the replay as it is written / stop following", "toggle-follow", owner="app", when="watch"),
    Command("Toggle the detail pane", "toggle-detail", owner="app"),
    Command("Triage", "triage", owner="app"),
    Command("Label this divergence", "label", owner="app", when="divergence"),
    Command("Promote to a golden case", "promote", owner="app"),
    Command("Load warnings", "show-issues", owner="app"),
    Command("Read both files again", "reload", owner="app"),
    Command("Help: keys and marks", "help", owner="app"),
    Command("Change theme", "", owner="app", action="change_theme",
            help="Pick one of Textual's themes (set it for good with theme = \"NAME\" in the config file)"),
    Command("Quit", "quit", owner="app"),
)
"""Every palette command, in the order listed when nothing is typed."""

PAIR_FREE = frozenset({"help", "quit", "reload", ""})
"""Commands offered before the pair has loaded (and on other screens): help, theme, reload, quit."""


def _binding(owner: type, binding_id: str) -> Binding | None:
    for cls in owner.__mro__:
        for binding in cls.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id == binding_id:
                return binding
    return None


class TraceCommands(Provider):
    """tracetui's commands for the palette (``COMMANDS``), filtered to those that apply now."""

    def _entries(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        """(title, help, callback) of every command that applies on the screen under the palette."""
        from tracetui.tui.widgets.aligned_view import AlignedView

        app: PairHost = self.app  # type: ignore[assignment]
        main = app.screen_stack[0]
        on_main = self.screen is main
        view: AlignedView | None = None
        if on_main:
            found = main.query(AlignedView)
            view = found.first() if found else None
        loaded = app.diff is not None and view is not None and not view.disabled and not app.reloading
        keys: dict[str, list[str]] = {}  # binding id -> keys shown, as remapped by the keymap (App.set_keymap)
        for active in self.screen.active_bindings.values():
            if active.binding.id:
                keys.setdefault(active.binding.id, []).append(app.get_key_display(active.binding))
        for command in COMMANDS:
            if command.binding_id not in PAIR_FREE and not loaded:
                continue
            if command.when == "search" and (view is None or not view.search_term):
                continue
            if command.when == "watch" and not getattr(app, "watching", False):
                continue
            if command.when == "divergence":
                if app.diff is None or view is None or not app.diff.rows:
                    continue
                if app.diff.row_divergence[view.cursor_row] is None:
                    continue
            if not command.binding_id:
                yield command.title, command.help, partial(app.run_action, command.action)
                continue
            owner = type(app) if command.owner == "app" else AlignedView
            binding = _binding(owner, command.binding_id)
            if binding is None:
                continue
            shown_keys = keys.get(command.binding_id)
            if shown_keys is None:  # not active while the palette is on top (app keys of the main screen)
                remapped = app._keymap.get(command.binding_id, binding.key)  # what set_keymap stored, else default
                shown_keys = [app.get_key_display(binding.with_key(key)) for key in remapped.split(",") if key]
            shown = " ".join(dict.fromkeys(shown_keys))
            help_text = f"{shown} · {binding.tooltip or binding.description}" if shown else binding.tooltip
            namespace = app if command.owner == "app" else view
            yield command.title, help_text, partial(app.run_action, binding.action, namespace)

    def _span_jump(self, query: str) -> tuple[str, str, Callable[[], object]] | None:
        """``:ID`` typed: a command that puts the cursor on span ``ID`` (the ``:`` key's lookup)."""
        from tracetui.tui.widgets.aligned_view import AlignedView

        app: PairHost = self.app  # type: ignore[assignment]
        span_id = query[1:].strip()
        if not span_id or app.diff is None or self.screen is not app.screen_stack[0]:
            return None
        view = self.screen.query_one(AlignedView)

        def jump() -> None:
            if not app.still_reading("Jumping to a span id works"):  # the first rows only: the id may lie beyond
                view.jump_to_span(span_id)

        return f"Jump to span {span_id}", "cursor to the span with this id (or id prefix), either side", jump

    async def discover(self) -> Hits:
        """Every command that applies now, in ``COMMANDS`` order."""
        for title, help_text, callback in self._entries():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        """Commands whose title fuzzily matches ``query``; ``:ID`` jumps to span ``ID``."""
        if query.startswith(":"):
            jump = self._span_jump(query)
            if jump is not None:
                title, help_text, callback = jump
                yield Hit(1.0, title, callback, text=title, help=help_text)
            return
        matcher = self.matcher(query)
        for title, help_text, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)
