"""The project's configuration files: the nearest ``pyproject.toml`` / ``.tracetui.toml``, read as TOML.

Shared by the harness settings (``core.harness.project``), the redaction rules
(``core.harness.redact_config``) and the noise rules (``core.diff.noise``); each keeps
its own table and its own error class.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

__all__ = ["CONFIG_FILES", "ConfigFileError", "config_documents", "nearest_file"]

CONFIG_FILES = ("pyproject.toml", ".tracetui.toml")
"""The files a project configures tracetui in, read in this order (the second wins on conflicts)."""


class ConfigFileError(ValueError):
    """A configuration file that cannot be read or is not TOML: ``path`` and ``why``."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


def nearest_file(filename: str, start: str | None = None) -> str | None:
    """The path of ``filename`` in ``start`` (default: the current folder) or the nearest folder
    above it; None when no folder up to the root has one."""
    folder = os.path.abspath(start or os.getcwd())
    while True:
        path = os.path.join(folder, filename)
        if os.path.isfile(path):
            return path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def config_documents(start: str | None = None,
                     names: tuple[str, ...] = CONFIG_FILES) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(path, filename, document)`` of the nearest file of each name in ``names``, in order,
    skipping names no folder has.

    Raises:
        ConfigFileError: a file that cannot be read or is not TOML (``why`` is the parser's message).
    """
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    for filename in names:
        path = nearest_file(filename, start)
        if path is None:
            continue
        try:
            with open(path, "rb") as fh:
                doc = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigFileError(path, str(exc)) from None
        yield path, filename, doc
