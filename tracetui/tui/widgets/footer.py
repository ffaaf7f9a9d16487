"""TraceFooter: Textual's ``Footer``, made to fit 80 columns.

Below ``NARROW_WIDTH`` cells it turns compact (less padding), shortens the
descriptions (``SHORT_DESCRIPTIONS``, by binding id) and drops the command
palette's key from its right end (ctrl+p still works, and the help lists it),
so that the main screen's keys (t, l, g included) fit an 80×24 terminal.
Keys stay clickable (a click sends the key, as in ``Footer``).

It composes its keys again only when what it shows changed (``bindings_changed``): ``Footer``
does it on every change of the screen's bindings, and the app refreshes them more often than
they change (three times while a big pair loads: ~0.09 s of CPU each, taken from the read).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

NARROW_WIDTH = 100
"""Below this width the footer is compact (the app's ``-narrow`` breakpoint)."""


class TraceFooter(Footer):
    """A footer that is compact, with short descriptions, below ``NARROW_WIDTH`` columns."""

    SHORT_DESCRIPTIONS: ClassVar[dict[str, str]] = {
        "first-divergence": "First",
        "next-divergence": "Next",
        "previous-divergence": "Prev",
        "open-pair": "Pair",
    }
    """Binding id -> the description shown when narrow (others keep theirs)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._narrow: bool | None = None
        self._shown: Any = None  # _signature() of the keys composed last

    def _signature(self) -> Any:
        """What ``compose`` would show now: the shown bindings (key, action, description, enabled,
        tooltip, group), the narrow state and the palette's key."""
        if not self._bindings_ready:
            return None
        return (self._narrow, self.compact, self.show_command_palette,
                tuple((b.key, b.action, b.description, enabled, tooltip, b.group)
                      for _node, b, enabled, tooltip in self.screen.active_bindings.values() if b.show))

    def bindings_changed(self, screen: Any) -> None:
        """As ``Footer.bindings_changed``, but the keys are composed again only if they changed."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self._signature() != self._shown:
            await self.recompose()

    def _short_for(self) -> dict[tuple[str, str], str]:
        """(key, action) -> short description, for the bindings active now."""
        shorts: dict[tuple[str, str], str] = {}
        for active in self.screen.active_bindings.values():
            binding = active.binding
            short = self.SHORT_DESCRIPTIONS.get(binding.id or "")
            if short:
                shorts[(binding.key, binding.action)] = short
        return shorts

    def compose(self) -> ComposeResult:
        self._shown = self._signature()
        shorts = self._short_for() if self._narrow else {}
        for widget in super().compose():
            if shorts and isinstance(widget, FooterKey):
                widget.description = shorts.get((widget.key, widget.action), widget.description)
            if isinstance(widget, FooterKey) and widget.has_class("-command-palette"):
                widget.data_bind(compact=Footer.compact)  # Textual leaves it compact: "^pCommands"
            yield widget

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_WIDTH
        if narrow == self._narrow:
            return
        self._narrow = narrow
        self.compact = narrow
        self.show_command_palette = not narrow
        if self._bindings_ready:
            self.call_after_refresh(self._recompose_if_changed)
