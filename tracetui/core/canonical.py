"""Canonical arguments: one byte string per meaning, and its hash.

Rule (glossary, "canonical arguments"): object keys sorted, no whitespace, and a
string that holds a JSON object or array is parsed first, so arguments recorded
as ``'{"b": 1, "a": 2}'`` equal ``{"a": 2, "b": 1}``. Arguments encoded twice
(a JSON string whose content is a JSON string of the object, as a recorder
that ``json.dumps`` an already-serialised argument string writes) are unwrapped
too. Numbers and list order are kept as recorded: floats are rounded at the
tool's signature, not here (``../shared/design/practice.md``, "key normalisation
without lying").
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

_SORT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_OPENERS = ("{", "[")
_CONSTANTS = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity"}
_loads = orjson.loads
# How a string that parse_json_string may parse begins once dumped: `"{`, `"[`, an escaped quote or
# control character (`"\`), a space, or the first byte of a non-ASCII whitespace character
# (U+0085, U+00A0: C2; U+1680: E1; U+2000-U+205F: E2; U+3000: E3).
PARSE_MARKS = (b'"{', b'"[', b'"\\', b'" ', b'"\xc2', b'"\xe1', b'"\xe2', b'"\xe3')


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_BIG_POS = b"0" * 20
_BIG_NEG = b"-" + b"0" * 19


def _parse(s: str) -> Any:
    """The JSON value of ``s``, or ``s`` itself when it is not JSON.

    orjson first; the standard library for what orjson refuses (bare
    ``NaN``/``Infinity``, kept as strings as ``jsondoc`` keeps them; numbers
    beyond a double) or would round (an integer beyond 64 bits, which orjson
    turns into a float: a run of 20 digits, or ``-`` and 19, sends the string
    there; a C-level scan of its bytes).
    """
    try:
        value = _loads(s)
    except orjson.JSONDecodeError:
        pass
    else:
        if len(s) < 19:
            return value
        t = s.encode("utf-8", "surrogatepass").translate(_DIGITS)
        if _BIG_POS not in t and _BIG_NEG not in t:
            return value
    try:
        return json.loads(s, parse_constant=_CONSTANTS.__getitem__)
    except (ValueError, RecursionError):
        return s


def parse_json_string(value: Any) -> Any:
    """Return the JSON value a string holds when it holds an object or array.

    Args:
        value: Anything. Only a ``str`` that parses as a JSON object or array
            (first non-blank character ``{`` or ``[``), or as a JSON string
            literal whose content does (``'"{\\"a\\": 1}"'``: encoded twice, any
            number of times), is replaced.

    Returns:
        The parsed value, or ``value`` unchanged: a plain string, a string that
        only looks like JSON, and a quoted string whose content is not an object
        or array (``'"hello"'``) stay as they are.

    Integers beyond 64 bits inside a JSON string become floats (orjson's
    parse); a document read by ``jsondoc`` keeps them exact.
    """
    if type(value) is not str and not isinstance(value, str):
        return value
    first = value[:1]
    if first not in _OPENERS and first != '"':
        if not first.isspace():
            return value
        first = value.lstrip()[:1]
    if first in _OPENERS:
        parsed = _parse(value)
        return value if parsed is value else parsed
    if first == '"':
        inner = _parse(value)
        if type(inner) is str and inner is not value:
            parsed = parse_json_string(inner)
            if parsed is not inner:
                return parsed
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

    orjson writes it; a value orjson cannot write (an integer beyond 64 bits,
    a lone surrogate, nesting deeper than 255) is written by the standard
    library instead (sorted keys, ASCII escapes): the same value always gives
    the same bytes.

    Raises:
        TypeError: if the value holds something that is not JSON at all.
        RecursionError: nesting deeper than Python's recursion limit.
    """
    # Fast path: without JSON strings inside, the value is already canonical. A string the slow
    # path would parse starts with `{`, `[`, `"` or whitespace, so its dump starts with one of
    # PARSE_MARKS (false alarms only cost the slow path). Non-string keys go the slow way too.
    try:
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        fast = None
    if fast is not None and not any(m in fast for m in PARSE_MARKS):
        return fast
    c = canonicalize(value)
    try:
        return orjson.dumps(c, option=_SORT)
    except TypeError:
        return json.dumps(c, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def args_hash(value: Any) -> str:
    """The canonical argument hash: first 16 hex digits of SHA-256 of ``canonical_json``.

    16 hex digits (64 bits) follow the common hand-written cassette convention
    (a 16-hex prefix of a SHA-256); collisions are irrelevant at trace sizes.
    """
    return hashlib.sha256(canonical_json(value)).hexdigest()[:16]
