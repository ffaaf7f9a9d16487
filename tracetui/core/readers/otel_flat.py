"""Flat OpenTelemetry attribute values: indexed families and stringly numbers.

Two habits of real producers that every attribute mapper meets
(``../shared/design/formats.md`` §1.6, §3, §4):

- lists written as flat indexed keys (``gen_ai.prompt.0.role``,
  ``llm.input_messages.1.message.tool_calls.0.tool_call.id``): ``indexed_families``
  un-flattens every such family in one pass;
- numbers stored as strings (Langfuse keeps ``"412"`` for ``gen_ai.usage.input_tokens``):
  ``as_int`` / ``as_number`` read them as numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tracetui.core.canonical import parse_json_string

__all__ = ["as_int", "as_number", "indexed_families"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_INDEX = re.compile(r"\.(\d+)(?=\.|$)")
_HAS_INDEX = re.compile(r"\.\d+(?=[.\n]|$)")
_INDEXED_KEY = re.compile(r"^[^\n]*?\.\d+(?:\.[^\n]*)?$", re.MULTILINE)


def _listify(node: Any) -> Any:
    if isinstance(node, dict):
        if node and all(isinstance(k, int) for k in node):
            return [_listify(node[k]) for k in sorted(node)]
        return {str(k): _listify(v) for k, v in node.items()}  # mixed keys: digits stay strings
    return node


def indexed_families(attrs: Mapping[str, Any]) -> dict[str, tuple[list[Any], list[str]]]:
    """Un-flatten every ``prefix.{int}.rest`` attribute family into a list.

    ``gen_ai.prompt.0.role=user``, ``gen_ai.prompt.0.tool_calls.1.name=f`` give the
    family ``gen_ai.prompt``: ``[{"role": "user", "tool_calls": [{"name": "f"}]}]``
    (indices sorted, gaps closed). The prefix is the key up to its first
    all-digit segment; deeper digit segments become nested lists, other dotted
    segments nested objects (``tool_call.function.name`` -> ``{"tool_call":
    {"function": {"name": ...}}}``). Single pass over the keys.

    Returns:
        Family prefix -> ``(items, source keys)``.
    """
    raw: dict[str, tuple[dict[int, Any], list[str]]] = {}
    try:
        joined = "\n".join(attrs)
    except TypeError:  # a non-string key: keep only string keys
        joined = "\n".join(k for k in attrs if isinstance(k, str))
    if not _HAS_INDEX.search(joined):
        return {}
    for key in _INDEXED_KEY.findall(joined):
        if key not in attrs:  # a piece of a key that holds a newline
            continue
        value = attrs[key]
        m = _INDEX.search(key)
        if m is None or len(m.group(1)) > 9:  # no list of a billion items: a key, kept flat
            continue
        prefix, idx, rest = key[: m.start()], int(m.group(1)), key[m.end() + 1:]
        items, keys = raw.setdefault(prefix, ({}, []))
        keys.append(key)
        if not rest:
            items[idx] = value
            continue
        node = items.get(idx)
        if not isinstance(node, dict):
            node = items[idx] = {}
        segs = rest.split(".")
        for seg in segs[:-1]:
            k: Any = int(seg) if seg.isdigit() and len(seg) < 10 else seg
            nxt = node.get(k)
            if not isinstance(nxt, dict):
                nxt = node[k] = {}
            node = nxt
        last = segs[-1]
        node[int(last) if last.isdigit() and len(last) < 10 else last] = value
    return {p: ([_listify(items[i]) for i in sorted(items)], keys) for p, (items, keys) in raw.items()}



def as_int(v: Any) -> int | None:
    """An int64 from an int, a whole float or a numeric string; anything else (bools, out of range) -> None."""
    n: int | None = None
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        n = v
    elif isinstance(v, float) and v.is_integer():
        n = int(v)
    elif isinstance(v, str):
        try:
            n = int(v.strip())
        except ValueError:
            try:
                f = float(v)
            except ValueError:
                return None
            n = int(f) if f.is_integer() else None
    return n if n is not None and _INT64_MIN <= n <= _INT64_MAX else None


def as_number(v: Any) -> Any:
    """Numbers as numbers: ``"0.7"`` -> 0.7, ``"1"`` -> 1 (Langfuse stores attributes as strings)."""
    if isinstance(v, str):
        i = as_int(v)
        if i is not None and "." not in v:
            return i
        try:
            return float(v)
        except ValueError:
            return parse_json_string(v)
    return v
