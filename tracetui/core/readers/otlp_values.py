"""OTLP/JSON values as the JSON Protobuf encoding writes them: AnyValue (``anyvalue``) and trace and span ids
(``normalize_id``), decoded to plain values; ``BadValue`` for an AnyValue that cannot be. Shared by the OTLP/JSON
reader (``readers.otlp``, and its fast path ``otlp_fast``) and the SDK exporters' reader (``otel_sdk``).
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

__all__ = ["BadValue", "anyvalue", "normalize_id"]

_HEX = frozenset("0123456789abcdef")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class BadValue(Exception):
    """An AnyValue that cannot be decoded; the message says why."""


def _decode_int(v: Any) -> int:
    n: int | None = None
    if isinstance(v, int) and not isinstance(v, bool):
        n = v
    elif isinstance(v, str):
        try:
            n = int(v)
        except ValueError:
            pass
    elif isinstance(v, float) and v.is_integer():
        n = int(v)
    if n is None:
        raise BadValue(f"intValue {v!r} is not an integer")
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise BadValue(f"intValue {v!r} is outside the int64 range")
    return n


def _decode_double(v: Any) -> float | str:
    """A ``doubleValue`` as a float; NaN and the infinities as the strings ``"NaN"``,
    ``"Infinity"``, ``"-Infinity"`` (proto3 JSON writes them so): a float NaN is unequal
    to itself and would make a span differ from its own copy."""
    f: float | None = None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        f = float(v)
    elif isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            pass
    if f is None:
        raise BadValue(f"doubleValue {v!r} is not a number")
    if not math.isfinite(f):
        return "NaN" if math.isnan(f) else "Infinity" if f > 0 else "-Infinity"
    return f


def _decode_bytes(v: Any) -> str:
    if isinstance(v, str):
        try:
            base64.b64decode(v, validate=True)
            return v
        except (binascii.Error, ValueError):
            pass
    raise BadValue(f"bytesValue {v!r} is not base64")


def _decode_list(v: Any, what: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, dict):
        raise BadValue(f"{what} is not an object")
    values = v.get("values")
    if values is None:
        return []
    if not isinstance(values, list):
        raise BadValue(f"{what}.values is not a list")
    return values


def anyvalue(v: Any) -> Any:
    """Decode an OTLP ``AnyValue`` to a plain JSON value.

    ``stringValue``, ``boolValue``, ``intValue`` (string or number -> int),
    ``doubleValue`` (-> float), ``arrayValue`` (-> list), ``kvlistValue`` (-> dict),
    ``bytesValue`` (kept as its base64 string, validated); camelCase or
    snake_case. ``{}`` (no value set) -> None. A bare JSON scalar is accepted
    as itself (some producers skip the wrapper).

    Raises:
        BadValue: a variant whose payload has the wrong type, or no known variant.
    """
    if type(v) is dict and len(v) == 1:
        for key, val in v.items():
            if key == "stringValue" and type(val) is str:
                return val
    if not isinstance(v, dict):
        if v is None or isinstance(v, (str, int, float, bool)):
            return v
        raise BadValue(f"expected an AnyValue object, found {type(v).__name__}")
    if not v:
        return None
    for key, val in v.items():
        if key in ("stringValue", "string_value"):
            if not isinstance(val, str):
                raise BadValue(f"stringValue {val!r} is not a string")
            return val
        if key in ("intValue", "int_value"):
            return _decode_int(val)
        if key in ("doubleValue", "double_value"):
            return _decode_double(val)
        if key in ("boolValue", "bool_value"):
            if not isinstance(val, bool):
                raise BadValue(f"boolValue {val!r} is not true/false")
            return val
        if key in ("arrayValue", "array_value"):
            return [anyvalue(x) for x in _decode_list(val, "arrayValue")]
        if key in ("kvlistValue", "kvlist_value"):
            out: dict[str, Any] = {}
            for kv in _decode_list(val, "kvlistValue"):
                if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
                    raise BadValue("kvlistValue entry without a string key")
                out[kv["key"]] = anyvalue(kv.get("value"))
            return out
        if key in ("bytesValue", "bytes_value"):
            return _decode_bytes(val)
    raise BadValue(f"no known AnyValue field (found: {', '.join(map(str, v))})")


def normalize_id(v: Any, nbytes: int) -> tuple[str | None, str | None]:
    """An OTel trace id (``nbytes`` 16) or span id (8) as lowercase hex.

    Accepts hex of any case, ``0x``-prefixed hex, base64 of exactly ``nbytes``
    bytes (protobuf ``MessageToJson``), and non-negative integers.

    Returns:
        ``(id, problem)``: id None when missing or empty; a value that is none of
        the above is kept as given (so parent references still match) with
        ``problem`` saying so.
    """
    if type(v) is str and len(v) == 2 * nbytes:
        low = v.lower()
        if _HEX.issuperset(low):
            return low, None
    if v is None or v == "":
        return None, None
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << (8 * nbytes):
        return format(v, f"0{2 * nbytes}x"), None
    if not isinstance(v, str):
        return None, f"expected a hex string, found {type(v).__name__} {v!r}"
    s = v.strip()
    if s[:2] in ("0x", "0X"):
        s = s[2:]
    low = s.lower()
    if len(low) == 2 * nbytes and _HEX.issuperset(low):
        return low, None
    if len(s) == 4 * ((nbytes + 2) // 3):
        try:
            raw = base64.b64decode(s.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == nbytes:
            return raw.hex(), None
    if low and _HEX.issuperset(low):
        return low, None
    return s, f"{v!r} is neither {2 * nbytes}-digit hex nor base64; kept as is"
