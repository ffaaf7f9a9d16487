"""The user config applied to the app: the theme and the keymap (binding id -> keys), checked against what exists.

``tracetui.tui.config`` reads the file (stdlib only); this module knows the
binding ids (every ``Binding(id=...)`` of the TUI's app, screens and widgets)
and Textual's themes, so it is where an unknown id or theme is caught.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import unicodedata
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.keys import Keys

try:  # the short names Textual gives some characters (slash, backslash, at, minus, plus, underscore)
    from textual.keys import REPLACED_KEYS as _REPLACED
except ImportError:  # pragma: no cover - an older or newer Textual without the table
    _REPLACED = {}

if TYPE_CHECKING:
    from textual.app import App

    from tracetui.tui.config import Config

_BINDING_MODULES = ("tracetui.tui.app", "tracetui.tui.screens", "tracetui.tui.widgets")
"""Where the TUI's bindings are declared (packages are walked module by module)."""


def _binding_classes() -> list[type]:
    """Every class of the TUI's app, screen and widget modules, each once, in module order.

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
    return [value for module in modules for value in vars(module).values()
            if isinstance(value, type) and value.__module__ == module.__name__]


def binding_ids() -> dict[str, Binding]:
    """Every binding id of the TUI -> its (default) binding, in declaration order (imports every screen)."""
    found: dict[str, Binding] = {}
    for cls in _binding_classes():
        for binding in cls.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id and binding.id not in found:
                found[binding.id] = binding
    return found


MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
"""Modifiers a key may carry (``ctrl+shift+up``), as Textual spells them."""

_NAMED_KEYS = frozenset(k.value.rpartition("+")[2] for k in Keys)
"""Key names without their modifiers (``escape``, ``enter``, ``pageup``, ``f5``...), from Textual's ``Keys``."""


def valid_key(key: str) -> bool:
    """True when ``key`` is a key Textual can bind: ``[modifier+...]name`` where name is one character, a named
    key (``Keys``: ``escape``, ``f5``, ``pageup``) or a character's name (``slash``, ``question_mark``).

    Args:
        key: One key as written in a binding (no comma).
    """
    if not key or key != key.strip():
        return False
    if key == "+" or key.endswith("++"):  # the plus key itself, with or without modifiers
        modifiers, name = key[:-2], "+"
    else:
        modifiers, _, name = key.rpartition("+")
    if modifiers and any(m not in MODIFIERS for m in modifiers.split("+")):
        return False
    if len(name) == 1:
        return name.isprintable()
    if name in _NAMED_KEYS:
        return True
    # Textual's names of characters: the Unicode name in lower case with underscores (``question_mark``),
    # a few of them shortened (``slash`` for solidus: textual.keys.KEY_NAME_REPLACEMENTS).
    name = _REPLACED.get(name, name)
    for candidate in (name.replace("_", " "), name.replace("_", "-"), name.replace("_", " ").replace(" ", "-", 1)):
        try:
            unicodedata.lookup(candidate)
        except KeyError:
            continue
        return True
    return False


def drop_bad_keys(config: Config) -> list[str]:
    """Remove from ``config.keys`` every key Textual cannot bind (``valid_key``); a binding id left with no
    key keeps its default. Returns one problem per key dropped. Needs no binding imported (cheap: run it
    before ``App.set_keymap``).

    Args:
        config: A config read by ``tracetui.tui.config.load_config``; its ``keys`` are changed in place.
    """
    name = str(config.path) if config.path is not None else "config"
    problems = []
    for binding_id, keys in list(config.keys.items()):
        wanted = [k.strip() for k in keys.split(",")]
        good = [k for k in wanted if valid_key(k)]
        for bad in (k for k in wanted if not valid_key(k)):
            problems.append(f"{name}: [keys] {binding_id}: {bad!r} is not a key (keys look like 'n', 'ctrl+n', "
                            f"'enter', 'slash', 'f5'){'' if good else '; the default key is kept'}")
        if good:
            config.keys[binding_id] = ",".join(good)
        else:
            del config.keys[binding_id]
    return problems


def key_conflicts(config: Config, app_class: type) -> list[str]:
    """Keys the config gives to two bindings that are active together, so one of them is lost.

    Bindings are active together when one class declares both, or when one is the app's (``app_class``,
    active on every screen) and the other a screen's or widget's. Only conflicts involving a binding the
    config remapped are reported (the defaults do not clash).

    Ids no binding has are ignored here (``check_keymap`` names them).

    Args:
        config: A config read by ``load_config``.
        app_class: The app class (its bindings and those of its mixins count as the app's).
    """
    if not config.keys:
        return []
    name = str(config.path) if config.path is not None else "config"
    known = binding_ids()

    def keys_of(binding_id: str) -> list[str]:
        binding = known[binding_id]
        return [k.strip() for k in config.keys.get(binding_id, binding.key).split(",") if k.strip()]

    def ids_of(cls: type) -> list[str]:
        return [b.id for c in cls.__mro__ for b in c.__dict__.get("BINDINGS", ())
                if isinstance(b, Binding) and b.id and b.id in known]

    app_ids = ids_of(app_class)
    groups = [app_ids]  # the app's keys, then each screen's or widget's own together with the app's
    for cls in _binding_classes():
        own = [i for i in ids_of(cls) if i not in app_ids]
        if own:
            groups.append(app_ids + own)
    problems: dict[tuple[str, tuple[str, ...]], str] = {}
    for group in groups:
        by_key: dict[str, list[str]] = {}
        for binding_id in dict.fromkeys(group):
            for key in keys_of(binding_id):
                by_key.setdefault(key, []).append(binding_id)
        for key, ids in by_key.items():
            if len(ids) > 1 and any(i in config.keys for i in ids):
                problems.setdefault((key, tuple(sorted(ids))), (
                    f"{name}: [keys] {key!r} is bound to {' and '.join(ids)}: only one of them can run; "
                    "give each its own key"))
    return list(problems.values())


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
    if unknown:  # the list, once, at the end of the last one (w shows it whole)
        problems[-1] += f"; valid binding ids: {', '.join(sorted(known))}"
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
