"""Canonical arguments: one byte string per meaning, and its hash.

Rule (glossary, "canonical arguments"): object keys sorted, no whitespace, and a
string that holds a JSON object or array is parsed first, so arguments recorded
as ``'{"b": 1, "a": 2}'`` equal ``{"a": 2, "b": 1}``. Numbers and list order are
kept as recorded: floats are rounded at the tool's signature, not here
(``../shared/design/practice.md``, "key normalisation without lying").
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

_SORT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def parse_json_string(value: Any) -> Any:
    """Return the JSON value a string holds when it holds an object or array.

    Args:
        value: Anything. Only a ``str`` whose first non-blank character is
            ``{`` or ``[`` and that parses as JSON is replaced.

    Returns:
        The parsed value, or ``value`` unchanged.
    """
    if isinstance(value, str):
        s = value.lstrip()
        if s[:1] in ("{", "["):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                return value
    return value


def canonicalize(value: Any) -> Any:
    """Deep-normalise a JSON value: JSON strings inside are parsed, recursively.

    Args:
        value: A JSON-compatible value (dict, list, str, int, float, bool, None).

    Returns:
        A value equal (``==``) to any other recording of the same meaning;
        key order is irrelevant to ``==`` on dicts already.
    """
    value = parse_json_string(value)
    if isinstance(value, dict):
        return {str(k): canonicalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonicalize(v) for v in value]
    return value


def canonical_json(value: Any) -> bytes:
    """Canonical bytes of a JSON value: parsed JSON strings, sorted keys, no spaces.

    Raises:
        TypeError: if the value holds something orjson cannot serialise.
    """
    return orjson.dumps(canonicalize(value), option=_SORT)


def args_hash(value: Any) -> str:
    """The canonical argument hash: first 16 hex digits of SHA-256 of ``canonical_json``.

    16 hex digits (64 bits) follow the common hand-written cassette convention
    (a 16-hex prefix of a SHA-256); collisions are irrelevant at trace sizes.
    """
    return hashlib.sha256(canonical_json(value)).hexdigest()[:16]
