"""The user config applied to the app: the theme and the keymap (binding id -> keys), checked against what exists.

``tracetui.tui.config`` reads the file (stdlib only); this module knows the
binding ids (every ``Binding(id=...)`` of the TUI's app, screens and widgets)
and Textual's themes, so it is where an unknown id or theme is caught.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from typing import TYPE_CHECKING

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.app import App

    from tracetui.tui.config import Config

_BINDING_MODULES = ("tracetui.tui.app", "tracetui.tui.screens", "tracetui.tui.widgets")
"""Where the TUI's bindings are declared (packages are walked module by module)."""


def binding_ids() -> dict[str, Binding]:
    """Every binding id of the TUI -> its (default) binding, in declaration order.

    Imports every screen and widget module (they are otherwise imported on
    first use), so call it only when a keymap has to be checked.
    """
    modules = []
    for name in _BINDING_MODULES:
        module = importlib.import_module(name)
        modules.append(module)
        if hasattr(module, "__path__"):
            for info in pkgutil.iter_modules(module.__path__, prefix=f"{name}."):
                modules.append(importlib.import_module(info.name))
    found: dict[str, Binding] = {}
    for module in modules:
        for value in vars(module).values():
            if not isinstance(value, type) or value.__module__ != module.__name__:
                continue
            for binding in value.__dict__.get("BINDINGS", ()):
                if isinstance(binding, Binding) and binding.id and binding.id not in found:
                    found[binding.id] = binding
    return found


def check_keymap(config: Config) -> list[str]:
    """Problems with ``config.keys``: ids no binding has, each with the closest ids, then every valid id.

    Args:
        config: A config read by ``tracetui.tui.config.load_config``.
    """
    if not config.keys:
        return []
    known = binding_ids()
    name = str(config.path) if config.path is not None else "config"
    problems = []
    unknown = [binding_id for binding_id in config.keys if binding_id not in known]
    for binding_id in unknown:
        close = difflib.get_close_matches(binding_id, known, n=2)
        guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        problems.append(f"{name}: [keys] {binding_id!r} is no binding id{guess}")
    if unknown:
        problems.append(f"valid binding ids: {', '.join(sorted(known))}")
    return problems


def apply_theme(app: App[object], config: Config) -> list[str]:
    """Set ``app.theme`` from ``config.theme`` when it names a theme; the problem otherwise (themes listed).

    Args:
        app: The app.
        config: The config read.
    """
    if config.theme is None:
        return []
    themes = app.available_themes
    if config.theme not in themes:
        name = str(config.path) if config.path is not None else "config"
        return [f"{name}: theme {config.theme!r} does not exist; themes: {', '.join(sorted(themes))}"]
    app.theme = config.theme
    return []


def main() -> None:
    """``python -m tracetui.tui.keymap``: every binding id with its default keys and what it does (tab-separated)."""
    for binding_id, binding in binding_ids().items():
        print(f"{binding_id}\t{binding.key}\t{binding.tooltip or binding.description}")


if __name__ == "__main__":
    main()
