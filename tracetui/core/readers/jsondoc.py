"""Read one JSON text the way real trace files need (a document, a line, an argument string).

Shared by every reader; where a file's values are (one document, JSON Lines, values back to
back) is ``json_values``'s concern, which reads each value by these rules. orjson parses the clean case; what orjson refuses or
may have changed silently is parsed again by the standard library, which keeps
what can be kept, reports it, and names the line and column of a broken file.

Rules (``../shared/design/formats.md`` §10; issue 3, "robustness on real-world damage"):

- a UTF-8 byte-order mark at the start of the document, or of a JSON Lines
  line (``cat a.jsonl b.jsonl`` of files that start with one), is dropped with
  a warning;
- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON; Python's ``json.dumps``
  writes them by default) and numbers too large for a double (``1e400``) are
  kept as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, with a
  warning: a float NaN is unequal to itself and would make a span differ from
  its own copy;
- integers of any size are kept exact (Python ints). orjson reads integers
  up to 64 bits exactly but turns larger ones into floats without a word:
  a text that may hold one is read again by the standard library, with a
  warning;
- a key repeated in one object keeps its **last** value, as orjson and
  Python's ``json`` both do, and is reported with its JSON path.

Cost (``recheck``): a line that is byte for byte orjson's own serialisation of
what it parsed to (every line tracetui's writer produces) is proven clean by
one ``orjson.dumps`` and a compare. Anything else is checked with C-level
passes over the bytes: the count of ``:`` (a dropped duplicate key takes at
least one with it) and a look for numbers orjson writes with an exponent of
18 or more (a rounded integer) that the text does not hold as written. Only a
text that fails a check is parsed again by the standard library (5-10x
slower). The rule holds for whole documents too, at any size: on tau-bench
(4 MB) the checks cost about 10 ms against orjson's 20 ms parse
(benchmarks/bench_readers.py). Known blind spot: a duplicate key in a text
that also writes other colons as ``\\u003a`` escapes, in equal number, is
not noticed.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue
from tracetui.core.readers.limits import lone_surrogates

__all__ = ["BOM", "careful_load", "duplicate_keys", "exact_int", "json_path", "load_json", "may_hide_duplicates",
           "recheck"]

BOM = b"\xef\xbb\xbf"
_CONSTANTS = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity"}
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
"""What orjson reads exactly: int64 and uint64."""
_PLUS = b"e+" in orjson.dumps(1e20)
"""orjson (3.13) writes big floats as ``1.8446744073709552e+19``: the ``+`` is rare in text, so the
exponents are found at ``memchr`` speed."""
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_NUMBER_BYTES = frozenset(b"0123456789.-")
_loads, _dumps = orjson.loads, orjson.dumps


def bom_issue(path: str, line: int | None) -> ReadIssue:
    """The warning for a UTF-8 byte-order mark dropped at the start of the file or of line ``line``."""
    if line is None or line == 1:
        return ReadIssue(path, 1, "", "UTF-8 byte-order mark at the start of the file; dropped", "warning")
    return ReadIssue(path, line, "", "UTF-8 byte-order mark at the start of the line (files joined with cat?); "
                     "dropped", "warning")


def load_json(path: str, data: bytes | bytearray | memoryview, issues: list[ReadIssue], *,
              line: int | None = None) -> Any:
    """Parse one JSON document, or one JSON Lines line.

    Args:
        path: Used in issues and errors only.
        data: The document's bytes (UTF-8, optionally with a BOM).
        issues: Warnings are appended here: BOM dropped, non-JSON constants
            kept as strings, integers beyond 64 bits, duplicate keys (with
            their JSON path, ``$`` being the document or line).
        line: The line the document starts on (JSON Lines callers), for issues.

    Returns:
        The parsed value.

    Raises:
        ReadError: the bytes are not JSON (with line and column) or not UTF-8.
    """
    if data[:3] == BOM:
        issues.append(bom_issue(path, line))
        data = data[3:]
    try:
        value = _loads(data)
    except orjson.JSONDecodeError:
        return careful_load(path, data, issues, line=line)
    return recheck(path, data, value, issues, line=line)


def recheck(path: str, data: bytes | bytearray | memoryview, value: Any, issues: list[ReadIssue], *,
            line: int | None = None, dumped: bytes | None = None) -> Any:
    """``value`` (orjson's parse of ``data``), or ``data`` parsed again when orjson may have lost something.

    orjson drops all but the last value of a repeated key and turns integers
    beyond 64 bits into floats, without a word. This proves neither happened
    (see the module docstring) and otherwise reads ``data`` with
    ``careful_load``, which reports what it finds.

    Args:
        dumped: ``orjson.dumps(value)`` when the caller has it already.

    Never raises: when the standard library cannot read ``data`` (nested
    deeper than Python's recursion limit), orjson's ``value`` is returned.
    """
    raw = data if type(data) is bytes else bytes(data)
    try:
        d = _dumps(value) if dumped is None else dumped
    except orjson.JSONEncodeError:  # nested deeper than orjson writes (255)
        pass
    else:
        if len(d) == len(raw) and d == raw:
            return value  # orjson's own serialisation: nothing was dropped or rounded
        if raw.count(b":") == d.count(b":") and not _rounded(raw, d):
            return value
    try:
        return careful_load(path, raw, issues, line=line)
    except ReadError:
        return value


def _rounded(raw: bytes, d: bytes) -> bool:
    """Whether orjson may have turned an integer beyond 64 bits of ``raw`` into a float.

    Such a float is at least 9.2e18 in magnitude, so ``d`` (orjson's
    serialisation of the parse) writes it with an exponent of 18 or more
    (``1.8446744073709552e+19``), where ``raw`` has plain digits. Every number
    token of ``d`` with such an exponent is looked up in ``raw``, in order
    (each search starts where the last one ended: linear); one missing is a
    rounded integer (or a float ``raw`` writes otherwise, ``1.5E19``: read
    again, harmlessly). The tokens are found from the ``+`` signs of ``d``
    (``memchr``; 0.3 ms on tau-bench's 4 MB against 9 ms for a ``translate``
    scan of ``raw`` for 20-digit runs, the fallback for an orjson that writes
    no ``+``).
    """
    if not _PLUS:
        t = raw.translate(_DIGITS)
        return b"0" * 20 in t or b"-" + b"0" * 19 in t
    n = len(d)
    find = d.find
    seen = 0  # where the next token is looked for in raw
    i = find(b"+")
    while i >= 0:
        if i > 1 and d[i - 1] == 101 and 48 <= d[i - 2] <= 57:  # "<digit>e+"
            j = i + 1
            while j < n and 48 <= d[j] <= 57:
                j += 1
            if j > i + 1 and (j == n or d[j] in b",]}") and int(d[i + 1:j]) >= 18:
                k = i - 1
                while k and d[k - 1] in _NUMBER_BYTES:
                    k -= 1
                at = raw.find(d[k:j], seen)
                if at < 0:
                    return True
                seen = at + j - k
        i = find(b"+", i + 1)
    return False


_INT_DIGITS_MAX = 4300
"""Python's default limit for converting a decimal literal to ``int`` (``sys.get_int_max_str_digits``)."""


class _Careful:
    """Hooks of a standard-library parse that note what orjson would have lost or refused."""

    __slots__ = ("big", "constants", "dups", "huge", "overflow")

    def __init__(self) -> None:
        self.constants: list[str] = []
        self.big: list[int] = []
        self.huge: list[str] = []
        self.overflow: list[str] = []
        self.dups: list[tuple[dict[str, Any], dict[str, list[Any]]]] = []

    def constant(self, name: str) -> str:
        s = "".join(_CONSTANTS[name])  # a fresh object, found again by identity in ``_locate``
        self.constants.append(s)
        return s

    def int(self, s: str) -> Any:
        if len(s) > _INT_DIGITS_MAX:  # Python refuses to convert it (and converting is quadratic): kept as text
            text = "".join(s)  # a fresh object, found again by identity in ``_locate``
            self.huge.append(text)
            return text
        n = int(s)
        if len(s) > 18 and not _INT_MIN <= n <= _INT_MAX:
            self.big.append(n)
        return n

    def float(self, s: str) -> Any:
        f = float(s)
        if f - f != 0:  # inf: the literal is beyond a double (1e400)
            v = "".join("-Infinity" if f < 0 else "Infinity")
            self.overflow.append(v)
            return v
        return f

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: dict[str, list[Any]] = {}
            for k, v in pairs:
                seen.setdefault(k, []).append(v)
            self.dups.append((d, {k: vs for k, vs in seen.items() if len(vs) > 1}))
        return d

    def dup_notes(self, where: dict[int, str]) -> list[tuple[str, str, bool]]:
        """``(JSON path of the object, message, ambiguous)`` per repeated key: the message names every
        value in order; ambiguous when the values differ."""
        out = []
        for d, keys in self.dups:
            for k, vs in keys.items():
                ambiguous = any(v != vs[0] for v in vs[1:])
                shown = " then ".join(_show(v) for v in vs) if ambiguous else f"{_show(vs[0])} {len(vs)} times"
                out.append((where.get(id(d), ""), f"duplicate key {k!r} in one object: {shown}; the last value is "
                            "kept (as orjson and Python's json do)", ambiguous))
        return out

    def report(self, path: str, value: Any, issues: list[ReadIssue], line: int | None) -> None:
        if not (self.constants or self.big or self.huge or self.overflow or self.dups):
            return
        wanted: dict[int, Any] = {id(x): x for x in (*self.constants, *self.big, *self.huge, *self.overflow)}
        wanted.update((id(d), d) for d, _ in self.dups)
        where = _locate(value, wanted)
        if self.constants:
            names = ", ".join(sorted(set(self.constants)))
            issues.append(ReadIssue(path, line, where.get(id(self.constants[0]), ""),
                                    f"{len(self.constants)} bare {names} value(s) (not JSON) kept as strings",
                                    "warning"))
        if self.overflow:
            issues.append(ReadIssue(path, line, where.get(id(self.overflow[0]), ""),
                                    f"{len(self.overflow)} number(s) beyond a double's range kept as the strings "
                                    "'Infinity' / '-Infinity'", "warning"))
        if self.big:
            first = str(self.big[0])
            issues.append(ReadIssue(path, line, where.get(id(self.big[0]), ""),
                                    f"{len(self.big)} integer(s) beyond 64 bits (first: {first[:40]}) kept exact; "
                                    "read with Python's json (slower)", "info"))
        if self.huge:
            issues.append(ReadIssue(path, line, where.get(id(self.huge[0]), ""),
                                    f"{len(self.huge)} integer literal(s) of more than {_INT_DIGITS_MAX} digits "
                                    f"(first: {len(self.huge[0])} digits, {self.huge[0][:20]}…) kept as text",
                                    "warning"))
        for at, message, _ in self.dup_notes(where):
            issues.append(ReadIssue(path, line, at, message, "warning"))


def _show(value: Any, limit: int = 40) -> str:
    """A value as JSON text, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def duplicate_keys(text: str) -> list[tuple[str, str, bool]]:
    """The keys repeated in one object of the JSON text ``text`` (an argument string).

    Returns:
        ``(JSON path of the object, message naming each value in order, ambiguous)`` per repeated
        key, ``ambiguous`` when its values differ; empty when there is none or ``text`` is not
        JSON. A text without a dropped key costs one orjson parse and dump (the ``:`` count).
    """
    try:
        value = _loads(text)
    except orjson.JSONDecodeError:
        return []
    if type(value) is not dict and type(value) is not list:
        return []
    if not may_hide_duplicates(text, 0, len(text), value):
        return []
    hooks = _Careful()
    try:
        value = json.loads(text, parse_constant=hooks.constant, parse_int=hooks.int, parse_float=hooks.float,
                           object_pairs_hook=hooks.pairs)
    except (ValueError, RecursionError):
        return []
    return hooks.dup_notes(_locate(value, {id(d): d for d, _ in hooks.dups}))


def may_hide_duplicates(text: str, pos: int, end: int, value: Any) -> bool:
    """Whether ``text[pos:end]`` has more ``:`` than ``value`` re-serialised: a repeated key was dropped."""
    try:
        d = _dumps(value)
    except TypeError:  # integers beyond 64 bits, nesting > 255: let the careful parse decide
        return True
    return text.count(":", pos, end) != d.count(b":")


def careful_load(path: str, data: bytes | bytearray | memoryview, issues: list[ReadIssue], *,
                 line: int | None = None) -> Any:
    """Parse with the standard library, keeping and reporting what orjson refuses or loses.

    See the module docstring for the rules. Issues are appended only when the
    parse succeeds.

    Raises:
        ReadError: not UTF-8, not JSON (line and column), or nested too deeply.
    """
    raw = bytes(data).removeprefix(BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(path, f"not UTF-8 text (byte {exc.start})", line=line) from None
    hooks = _Careful()
    try:
        value = json.loads(text, parse_constant=hooks.constant, parse_int=hooks.int, parse_float=hooks.float,
                           object_pairs_hook=hooks.pairs)
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line + exc.lineno - 1
        raise ReadError(path, f"not valid JSON: {exc.msg} (column {exc.colno})", line=at) from None
    except RecursionError:
        raise ReadError(path, "JSON nested too deeply to read", line=line) from None
    hooks.report(path, value, issues, line)
    if "\\u" in text:  # a lone surrogate escape (\\ud800) parses to a str that is not text
        lone_surrogates(path, value, issues, line)
    return value


def json_path(base: str, key: Any) -> str:
    """``base`` extended by an object key (``$.a``, ``$["a b"]``) or a list index (``$[3]``)."""
    if type(key) is int:
        return f"{base}[{key}]"
    k = str(key)
    return f"{base}.{k}" if k.isidentifier() else f"{base}[{json.dumps(k, ensure_ascii=False)}]"


def _locate(value: Any, wanted: dict[int, Any]) -> dict[int, str]:
    """JSON paths of the objects in ``wanted`` (by identity), walking ``value`` without recursion."""
    found: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack and len(found) < len(wanted):
        v, p = stack.pop()
        if id(v) in wanted and wanted[id(v)] is v:
            found.setdefault(id(v), p)
        if type(v) is dict:
            stack.extend((x, json_path(p, k)) for k, x in reversed(v.items()))
        elif type(v) is list:
            stack.extend((x, f"{p}[{i}]") for i, x in reversed(list(enumerate(v))))
    return found


def exact_int(v: Any) -> int | None:
    """An integer written as an int, a decimal string, or a float / exponent form, exactly as written.

    ``"1762161242118000000"``, ``1762161242118000000``, ``"1.762161242118e18"``
    and ``1.762161242118e18`` all give 1762161242118000000: strings are read
    as decimals, floats through their shortest decimal form (``repr``), which
    is the decimal the producer wrote when it had at most 15 significant
    digits (17 when the float was written by a shortest-repr printer). No
    float arithmetic, so no rounding to the nearest double.

    Returns:
        The integer, or None for a value that is not an integral number
        (``"12.5"``, ``"abc"``, ``NaN``, a bool, None).
    """
    t = type(v)
    if t is int:
        return v  # type: ignore[no-any-return]
    if t is str:
        s = v.strip()
        if "_" in s:
            return None
        try:
            return int(s)
        except ValueError:
            pass
        try:
            dec = Decimal(s)
        except InvalidOperation:
            return None
    elif t is float:
        if not math.isfinite(v):
            return None
        dec = Decimal(repr(v))
    else:
        return None
    if not dec.is_finite() or dec.adjusted() > _INT_DIGITS_MAX or dec != dec.to_integral_value():
        return None  # "1e100000000": no integer of 100M digits built
    return int(dec)
