"""``PairHost``: what the screens and the command palette use of the app, as a type.

The screens (``tui/screens/``) and the palette's provider (``tui/commands.py``) run inside
``TraceTuiApp`` and call into it; they type ``self.app`` as this protocol rather than importing the
app class, which imports them (no import cycle, not even for type checking). ``TraceTuiApp``
(``tui/app.py``, with its ``LoadingMixin`` and ``WatchMixin``) provides every member.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.screen import Screen

    from tracetui.core.diff import TraceDiff

__all__ = ["PairHost"]


class PairHost(Protocol):
    """The app as its screens and commands see it."""

    diff: TraceDiff | None
    original_path: str
    replay_path: str
    replay_trace_id: str | None
    triage_replays: str | None
    reloading: bool
    _keymap: dict[str, str]  # Textual's App: what set_keymap stored

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    def still_reading(self, what: str) -> bool: ...

    def row_of_span(self, span_id: str, side: str = "original") -> int | None: ...

    def load_replay(self, replay_path: str, *, jump_to: tuple[str, str] | None = None) -> None: ...

    def bell(self) -> None: ...

    def get_key_display(self, binding: Any) -> str: ...

    async def run_action(self, action: Any, default_namespace: Any = None) -> bool: ...
