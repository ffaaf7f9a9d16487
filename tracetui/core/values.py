"""Equality and leaf-by-leaf differences of recorded JSON values.

Cheap first (``==``, exact bytes for small argument-like fields), canonical
(``tracetui.core.canonical``) only when that fails, and iterative all the way
down: JSON nesting can be deeper than Python's recursion limit.
"""

from __future__ import annotations

from typing import Any, Mapping

import orjson

from tracetui.core.canonical import canonicalize
from tracetui.core.changes import ABSENT, MAX_FIELDS, FieldChange

__all__ = ["BYTES", "IDS", "VALUE", "diff_field", "iter_equal", "json_same", "strict_same", "strip_ids"]

# Field flags (how "equal" is decided; docs/format.md "Canonical arguments"):
# BYTES: arguments-like values (small), equal when their canonical JSON bytes
#   are, so ``true``, ``1``, ``1.0`` and ``"1"`` all differ.
# VALUE: equal when ``==`` holds after canonicalisation and no JSON boolean
#   stands against a number (numbers by value: 1 == 1.0, but true != 1 — Python's
#   ``True == 1`` is not the JSON rule); used for outputs, messages and the other
#   fields, which can be 40 KB, so an equal pair costs one C-level ``==`` and two
#   orjson ``dumps`` (a walk only when those bytes differ).
# IDS: like VALUE, after dropping provider-minted ids inside messages.
VALUE, BYTES, IDS = 0, 1, 2

_CONTAINERS = (dict, list)
_dumps = orjson.dumps
_DUMP_OPT = orjson.OPT_NON_STR_KEYS
_SORT_OPT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def iter_equal(x: Any, y: Any) -> bool:
    """Structural ``==`` of two JSON values without recursion."""
    stack = [(x, y)]
    while stack:
        u, v = stack.pop()
        if isinstance(u, dict) and isinstance(v, dict):
            if u.keys() != v.keys():
                return False
            stack.extend((u[k], v[k]) for k in u)
        elif isinstance(u, list) and isinstance(v, list):
            if len(u) != len(v):
                return False
            stack.extend(zip(u, v))
        elif isinstance(u, (dict, list)) or isinstance(v, (dict, list)) or u != v \
                or (type(u) is bool) != (type(v) is bool):  # JSON: true is not 1
            return False
    return True


def _same_bytes(x: Any, y: Any) -> bool:
    """Exact equality of two ``==``-equal containers: same canonical JSON bytes."""
    try:
        if _dumps(x, option=_DUMP_OPT) == _dumps(y, option=_DUMP_OPT):
            return True
        return _dumps(canonicalize(x), option=_SORT_OPT) == _dumps(canonicalize(y), option=_SORT_OPT)
    except TypeError:  # not JSON (a caller built spans by hand): trust ==
        return True


def _equal(x: Any, y: Any, flags: int) -> bool:
    """Equality of two raw field values under the field's flag (see ``VALUE``...)."""
    if x is y:
        return True
    if x != y:
        return False
    return strict_same(x, y) if flags == BYTES else json_same(x, y)


def json_same(x: Any, y: Any) -> bool:
    """For ``==``-equal values: also no JSON boolean against a number anywhere inside.

    ``True == 1`` and ``{"n": True} == {"n": 1.0}`` hold in Python; in JSON a boolean and a
    number are different values. Numbers compare by value (``1`` and ``1.0`` stay equal: use
    ``strict_same`` for that). Cost: two orjson ``dumps`` of containers; a walk without
    recursion only when their bytes differ (key order, ``1`` against ``1.0``, or a boolean).
    """
    tx, ty = type(x), type(y)
    if tx is bool or ty is bool:
        return tx is ty
    if tx not in _CONTAINERS:
        return True
    try:
        if _dumps(x, option=_DUMP_OPT) == _dumps(y, option=_DUMP_OPT):
            return True
    except TypeError:  # not JSON (a caller built spans by hand): walk it
        pass
    stack = [(x, y)]
    while stack:
        u, v = stack.pop()
        tu, tv = type(u), type(v)
        if (tu is bool) != (tv is bool):
            return False
        if tu is dict and tv is dict:
            stack.extend((u[k], v[k]) for k in u if k in v)
        elif tu is list and tv is list:
            stack.extend(zip(u, v))
    return True


def strict_same(x: Any, y: Any) -> bool:
    """For ``==``-equal values: also the same JSON types all the way down."""
    if type(x) is not type(y):
        return False
    if type(x) in _CONTAINERS:
        return _same_bytes(x, y)
    return True


def diff_field(path: str, x: Any, y: Any, flags: int, out: list[FieldChange]) -> bool:
    """Append the leaf changes between two raw values of one field; True if they differ.

    Cheap equality first; then drops volatile message ids (``IDS``),
    canonicalises (JSON strings parsed, key order ignored) and walks both.
    """
    if x is ABSENT or y is ABSENT:
        # A field recorded as null equals one not recorded; anything else against a missing field differs whole.
        if (x if y is ABSENT else y) in (None, ABSENT):
            return False
        out.append(FieldChange(path, x, y))
        return True
    if _equal(x, y, flags):
        return False
    if flags == IDS:
        x = strip_ids(x)
        y = strip_ids(y)
        if _equal(x, y, flags):
            return False
    try:
        cx = canonicalize(x)
        cy = canonicalize(y)
    except RecursionError:  # JSON nested ~1000 deep: compare as recorded
        cx, cy = x, y
    if _equal(cx, cy, flags):
        return False
    before = len(out)
    _walk(path, cx, cy, out, flags == BYTES)
    if len(out) == before:  # equal leaf by leaf yet not byte-equal: report the field whole
        out.append(FieldChange(path, cx, cy))
    return True


def strip_ids(value: Any) -> Any:
    """A message or list of messages without ``tool_call_id`` and ``tool_calls[].id``."""
    if isinstance(value, list):
        return [_strip_message(m) for m in value]
    return _strip_message(value)


def _strip_message(m: Any) -> Any:
    if not isinstance(m, Mapping):
        return m
    if "tool_call_id" not in m and "tool_calls" not in m:
        return m
    out = {k: v for k, v in m.items() if k != "tool_call_id"}
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {k: v for k, v in c.items() if k != "id"} if isinstance(c, Mapping) else c for c in calls
        ]
    return out


def _key_path(path: str, key: Any) -> str:
    k = str(key)
    if k.isidentifier():
        return f"{path}.{k}"
    return f"{path}[{orjson.dumps(k).decode()}]"


def _walk(path: str, x: Any, y: Any, out: list[FieldChange], strict: bool) -> None:
    """Append ``FieldChange``s for the differing leaves of two canonical values.

    Iterative (JSON nesting can be deep); stops at ``MAX_FIELDS`` entries in
    ``out``. Dicts are walked by key (original's order, then keys only in the
    replay), lists by index; a missing side is None. Leaves differ when their
    values differ, and with ``strict`` also when their JSON types do.
    """
    stack: list[tuple[str, Any, Any]] = [(path, x, y)]
    while stack:
        if len(out) >= MAX_FIELDS:
            return
        p, u, v = stack.pop()
        if isinstance(u, dict) and isinstance(v, dict):
            keys = list(u)
            keys.extend(k for k in v if k not in u)
            # Push in reverse so the walk reports in document order.
            for k in reversed(keys):
                a = u.get(k, ABSENT)
                b = v.get(k, ABSENT)
                if k in u and k in v and a == b and (strict_same(a, b) if strict else json_same(a, b)):
                    continue
                stack.append((_key_path(p, k), a, b))
        elif isinstance(u, list) and isinstance(v, list):
            nu, nv = len(u), len(v)
            for i in reversed(range(max(nu, nv))):
                a = u[i] if i < nu else ABSENT
                b = v[i] if i < nv else ABSENT
                if i < nu and i < nv and a == b and (strict_same(a, b) if strict else json_same(a, b)):
                    continue
                stack.append((f"{p}[{i}]", a, b))
        elif u != v or (strict and type(u) is not type(v)) or (type(u) is bool) != (type(v) is bool):
            out.append(FieldChange(p, u, v))
