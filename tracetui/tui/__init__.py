"""The Textual TUI of tracetui: ``TraceTuiApp(original, replay).run()``."""

from __future__ import annotations

from tracetui.tui.app import TraceTuiApp

__all__ = ["TraceTuiApp"]
