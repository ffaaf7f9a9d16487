"""The project's harness settings: the ``[tool.tracetui]`` table of the nearest ``pyproject.toml``.

``[tool.tracetui] read_tools = ["get_weather"]`` names read tools (ambient sessions);
``[tool.tracetui.replay] volatile = {transfer = ["idempotency_key"], search = ["meta.request_id"]}``
names, per tool, the argument paths a replay ignores when it matches a call against the recording
(values the agent mints per call: an idempotency key, a request id). Paths are dot-separated keys,
``[N]`` or ``[*]`` for list items (``tracetui.core.harness.cassette.mask_volatile``).
"""

from __future__ import annotations

from typing import Any


def project_table(start: str | None = None) -> tuple[str | None, dict[str, Any]]:
    """The path of the nearest ``pyproject.toml`` from ``start`` (default: the current folder)
    upwards and its ``[tool.tracetui]`` table; ``(None, {})`` when there is none.

    Raises:
        HarnessError: the file is not TOML, or ``[tool.tracetui]`` is not a table.
    """
    from tracetui.core.errors import HarnessError

    from tracetui.core.projectfiles import ConfigFileError, config_documents

    try:
        for path, _name, doc in config_documents(start, ("pyproject.toml",)):
            tool = doc.get("tool", {})
            table = tool.get("tracetui", {}) if isinstance(tool, dict) else {}
            if not isinstance(table, dict):
                raise HarnessError(f"{path}: [tool.tracetui] must be a table")
            return path, table
    except ConfigFileError as exc:
        raise HarnessError(f"{exc.path}: cannot read [tool.tracetui]: {exc.why}") from None
    return None, {}


def project_read_tools(start: str | None = None) -> set[str]:
    """``read_tools`` of ``[tool.tracetui]`` (``project_table``); empty when there is none.

    Raises:
        HarnessError: ``read_tools`` is not a list of strings, or the file is not TOML.
    """
    from tracetui.core.errors import HarnessError

    path, table = project_table(start)
    reads = table.get("read_tools", [])
    if not isinstance(reads, list) or not all(isinstance(r, str) for r in reads):
        raise HarnessError(f"{path}: [tool.tracetui] read_tools must be a list of tool names")
    return set(reads)


def project_volatile(start: str | None = None) -> dict[str, list[str]]:
    """``volatile`` of ``[tool.tracetui.replay]``: tool name -> argument paths; empty when none.

    Raises:
        HarnessError: naming the file and the field, when it is not a table of lists of strings.
    """
    from tracetui.core.errors import HarnessError

    path, table = project_table(start)
    replay = table.get("replay", {})
    volatile = replay.get("volatile", {}) if isinstance(replay, dict) else None
    return check_volatile(volatile, f"{path}: [tool.tracetui.replay] volatile", HarnessError)


def check_volatile(volatile: Any, where: str, error: type[Exception]) -> dict[str, list[str]]:
    """``volatile`` checked to be a mapping of tool name to a list of argument paths (strings)."""
    if not isinstance(volatile, dict) or not all(
            isinstance(v, list) and all(isinstance(p, str) and p for p in v) for v in volatile.values()):
        raise error(f"{where} must map each tool name to a list of argument paths "
                    '(volatile = {transfer = ["idempotency_key"]})')
    return {str(k): list(v) for k, v in volatile.items()}
