"""The TUI's user config file: theme and key remapping, read with the standard library only.

Where it lives (first that applies):

1. ``--config PATH`` on ``tracetui view`` (the CLI sets ``TRACETUI_CONFIG`` for the app);
2. ``$TRACETUI_CONFIG``;
3. ``$XDG_CONFIG_HOME/tracetui/config.toml``, ``XDG_CONFIG_HOME`` defaulting to ``~/.config``.

Format (TOML)::

    theme = "gruvbox"          # any Textual theme name
    [keys]                     # binding id = keys, comma-separated (or a TOML array)
    next-divergence = "n,ctrl+n"
    open-pair = ["enter", "o"]

A missing file is no config. A damaged file never stops the app: ``load_config``
returns what it could read plus a list of problems (file, line, key), and the
app opens with defaults for the bad parts and shows the problems as a warning.
Binding ids and theme names are checked by ``tracetui.tui.keymap``, which
knows them; this module only checks the file's shape.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli backport when installed, else no config file
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ModuleNotFoundError:
        tomllib = None  # type: ignore[assignment]

ENV_VAR = "TRACETUI_CONFIG"
"""Environment variable naming the config file (overrides the XDG location)."""

KNOWN_KEYS = ("theme", "keys")
"""Top-level keys of the config file."""

_KEY_NAME = re.compile(r"^[^\s,]+$")


@dataclass
class Config:
    """What the config file asked for.

    Attributes:
        path: The file read (or looked for: it may not exist).
        theme: A theme name, or None for the default theme. Not yet checked against the themes available.
        keys: Binding id -> keys as Textual expects them (``"n,ctrl+n"``). Ids not yet checked.
        problems: One line per thing ignored, naming the file and, when known, the line and key.
    """

    path: Path | None = None
    theme: str | None = None
    keys: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def config_path(environ: dict[str, str] | None = None) -> Path:
    """Where the config file is looked for (module docstring), whether or not it exists.

    Args:
        environ: The environment (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "tracetui" / "config.toml"


def _keys_value(value: object) -> str | None:
    """``"n,ctrl+n"`` or ``["n", "ctrl+n"]`` as Textual's comma-separated key string; None when malformed."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = [part.strip() for part in value]
    else:
        return None
    if not parts or not all(_KEY_NAME.match(part) for part in parts):
        return None
    return ",".join(parts)


def parse_config(text: str, path: Path | None = None) -> Config:
    """Parse the config file's text; every problem is reported in ``Config.problems``, never raised.

    Args:
        text: The TOML text.
        path: Where it came from (named in the problems).
    """
    name = str(path) if path is not None else "config"
    config = Config(path=path)
    if tomllib is None:
        config.problems.append(f"{name}: reading it needs Python 3.11 or the tomli package; the file is ignored")
        return config
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line L, column C)": put the place first, as compilers do.
        message = str(exc)
        where = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if where:
            name, message = f"{name}:{where[1]}:{where[2]}", message[: where.start()]
        config.problems.append(f"{name}: not valid TOML: {message}; the file is ignored, defaults used")
        return config
    for key in data:
        if key not in KNOWN_KEYS:
            config.problems.append(f"{name}: unknown setting {key!r} (valid: {', '.join(KNOWN_KEYS)})")
    theme = data.get("theme")
    if theme is not None:
        if isinstance(theme, str) and theme.strip():
            config.theme = theme.strip()
        else:
            config.problems.append(f"{name}: theme must be a theme name (a string), not {theme!r}")
    keys = data.get("keys")
    if keys is not None:
        if not isinstance(keys, dict):
            config.problems.append(f"{name}: [keys] must be a table of binding-id = \"key,key\"")
        else:
            for binding_id, value in keys.items():
                normalized = _keys_value(value)
                if normalized is None:
                    config.problems.append(
                        f"{name}: [keys] {binding_id}: {value!r} is not a key list "
                        '(write "n" or "n,ctrl+n" or ["n", "ctrl+n"]; no spaces)'
                    )
                else:
                    config.keys[str(binding_id)] = normalized
    return config


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read the config file (``config_path()`` when ``path`` is None).

    Returns an empty ``Config`` when the file does not exist; an unreadable or
    malformed file gives a ``Config`` with ``problems`` (never an exception).

    Args:
        path: The file to read.
    """
    where = Path(path).expanduser() if path is not None else config_path()
    try:
        raw = where.read_bytes()
    except FileNotFoundError:
        explicit = path is not None or bool(os.environ.get(ENV_VAR))
        config = Config(path=where)
        if explicit:  # asked for by name: say it is not there
            config.problems.append(f"{where}: no such config file; using the defaults")
        return config
    except OSError as exc:
        return Config(path=where, problems=[f"{where}: cannot read: {exc.strerror or exc}; using the defaults"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Config(path=where, problems=[f"{where}: not UTF-8 text (byte {exc.start}); the file is ignored"])
    return parse_config(text, where)
