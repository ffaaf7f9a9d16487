"""Single-value mutations of a JSON document, for the "never a traceback" fuzz tests of readers."""

from __future__ import annotations

from typing import Any


def json_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (keys and list indexes), the root ``()`` first."""
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += json_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += json_paths(v, (*path, i))
    return out


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``doc`` with the value at ``path`` replaced (the original is not changed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: replaced(doc[head], rest, value)}
    return [replaced(v, rest, value) if i == head else v for i, v in enumerate(doc)]
