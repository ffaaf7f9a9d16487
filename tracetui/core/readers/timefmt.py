"""Timestamps as integer nanoseconds since the Unix epoch, exactly: ISO 8601 text and epoch numbers.

Every reader converts its times here (``docs/format.md``: ``start_ns`` / ``end_ns``
are integer ns; ISO strings converted exactly, no float rounding).

ISO 8601 / RFC 3339 date-times (``iso_ns``), the union of what the producers write:

- date ``YYYY-MM-DD``, then optionally ``T`` (or ``t``, or a space, RFC 3339
  §5.6) and ``HH``, ``HH:MM``, ``HH:MM:SS`` or ``HH:MM:SS`` plus a fraction
  (``.`` or ``,``, ISO 8601 §4.2.2.4; any number of digits, read as an integer:
  digits below 1 ns are dropped, never rounded); the basic format
  ``YYYYMMDDTHH[MM[SS[.f]]]`` with ``Z`` / ``±HHMM`` / ``±HH`` (ISO 8601
  §4.3.2) is read too;
- offset ``Z``/``z``, ``±HH:MM``, ``±HHMM``, ``±HH`` or Python's
  ``±HH:MM:SS[.ffffff]``; a blank may stand before it; **no offset means UTC**
  (ISO 8601 calls such a time local, but the producers that omit it write UTC:
  LangSmith stores naive UTC, OpenHands writes ``datetime.now().isoformat()``
  on servers that run in UTC; a reader that knows better applies it itself);
- blanks around the value are ignored; second ``60`` (a leap second, RFC 3339
  §5.7) counts as the next minute's ``00``; ``24:00:00`` (ISO 8601 end of day)
  as the next day's midnight; anything else out of range (month 13, February
  30, hour 25, offset hour 24, year 0) is not a time: None.

Shapes the corpus holds (``../shared/corpus/``): ``...T09:03:59.962Z`` (JavaScript
``toISOString``: Langfuse, OpenTelemetry JS), ``...T22:44:56.900854`` (Python naive
``isoformat``: OpenHands), ``...T17:55:57.114984+00:00`` (Python aware
``isoformat``: LangSmith, OpenAI Agents SDK, inspect-ai's ``-04:00``),
``...T14:00:00Z`` (ATIF); Go and OTel collectors write up to 9 fraction digits.

Speed: pure Python, no ``datetime`` (whose ``fromisoformat`` reads other shapes on
each Python version: 3.10 neither ``Z`` nor 7+ digits, 3.11+ also week dates, an
empty fraction, offset minutes up to 99). The usual layout
``YYYY-MM-DDTHH:MM:SS[.f][offset]`` is read by slicing: the epoch seconds of each
``YYYY-MM-DDTHH:MM:`` prefix are cached (a run's times share a few minutes), as are
the offsets already seen; every other text goes through one regular expression
(``_iso_ns_slow``, the reference: both give the same result for every string,
tests check it). About as fast as ``fromisoformat`` plus the arithmetic, faster
for 7-9 fraction digits.

Epoch numbers (``epoch_ns``): an int, a float, or a decimal string (exponent form
allowed: ``"1.762161242118e18"``); the unit is told by magnitude: below 1e11
seconds (year 5138), below 1e14 milliseconds, below 1e17 microseconds, else
nanoseconds. Floats are read through their shortest decimal form (``repr``), the
digits the producer wrote, never by float multiplication (as
``jsondoc.exact_int`` does).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["epoch_ns", "iso_ns", "ns_to_iso", "time_ns"]

_NS = 1_000_000_000
_PREFIX = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):", re.ASCII)
_SECONDS = {f"{i:02d}": i for i in range(61)}
_SCALE = tuple(10 ** (9 - n) for n in range(10))
"""ns of one unit of an ``n``-digit fraction."""

_EXTENDED = re.compile(
    r"\s*(\d{4}-\d\d-\d\d)(?:[Tt ](\d\d)(?::(\d\d)(?::(\d\d)(?:[.,](\d+))?)?)?)?"
    r"[ \t]*(Z|z|[+-]\d\d(?::\d\d(?::\d\d(?:\.\d{1,6})?)?|\d\d)?)?\s*", re.ASCII)
_BASIC = re.compile(
    r"\s*(\d{4})(\d\d)(\d\d)[Tt](\d\d)(?:(\d\d)(?:(\d\d)(?:[.,](\d+))?)?)?[ \t]*(Z|z|[+-]\d\d(?:\d\d)?)?\s*", re.ASCII)
_MONTH_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MINUTES: dict[str, int] = {}
"""Epoch seconds of the ``YYYY-MM-DDTHH:MM:`` prefixes already seen (a run's times share a few
minutes; bounded: cleared past 4096)."""
_OFFSETS: dict[str, int] = {"Z": 0, "z": 0}
"""ns to add to a local time for each offset text already seen and valid (``"+02:00"`` -> -7200 s in ns)."""


def _days_from_civil(y: int, m: int, d: int) -> int:
    """(year, month, day) -> days since 1970-01-01, proleptic Gregorian (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """Days since 1970-01-01 -> (year, month, day), proleptic Gregorian (H. Hinnant's algorithm)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    mo = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (mo <= 2), mo, d


def _date_secs(y: int, mo: int, d: int) -> int | None:
    """Epoch seconds of a date's midnight UTC, or None when the date does not exist."""
    if y < 1 or not 1 <= mo <= 12 or not 1 <= d <= _MONTH_DAYS[mo]:
        return None
    if mo == 2 and d == 29 and not (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)):
        return None
    return _days_from_civil(y, mo, d) * 86400


def _offset_ns(tz: str) -> int | None:
    """ns to add to a local time written with offset ``tz`` to get UTC, or None when out of range."""
    off = _OFFSETS.get(tz)
    if off is not None:
        return off
    if ":" in tz:
        hh, _, rest = tz[1:].partition(":")
        mm, _, ss = rest.partition(":")
    else:
        hh, mm, ss = tz[1:3], tz[3:5], ""
    sec, _, frac = ss.partition(".")
    h, m, s = int(hh), int(mm or 0), int(sec or 0)
    if h > 23 or m > 59 or s > 59:
        return None
    off = (h * 3600 + m * 60 + s) * _NS + _fraction_ns(frac)  # seconds and µs: Python, for historical zones
    off = -off if tz[0] == "+" else off
    if len(_OFFSETS) < 256:
        _OFFSETS[tz] = off
    return off


def _fraction_ns(frac: str | None) -> int:
    return int(frac[:9].ljust(9, "0")) if frac else 0


def _compose(day_secs: int | None, h: str | None, mi: str | None, s: str | None, frac: str | None,
             tz: str | None) -> int | None:
    """ns from a date's epoch seconds and the time's fields, range-checked; None when not a time."""
    if day_secs is None:
        return None
    hh, mm, ss = int(h or 0), int(mi or 0), int(s or 0)
    if mm > 59 or ss > 60 or (hh > 23 and not (hh == 24 and mm == 0 and ss == 0 and not _fraction_ns(frac))):
        return None
    ns = (day_secs + hh * 3600 + mm * 60 + ss) * _NS + _fraction_ns(frac)
    if tz is not None:
        off = _offset_ns(tz)
        if off is None:
            return None
        ns += off
    return ns


def _iso_ns_slow(value: str) -> int | None:
    """``iso_ns`` by regular expression: every accepted shape."""
    m = _EXTENDED.fullmatch(value)
    if m is not None:
        date, h, mi, s, frac, tz = m.groups()
        return _compose(_date_secs(int(date[:4]), int(date[5:7]), int(date[8:10])), h, mi, s, frac, tz)
    m = _BASIC.fullmatch(value)
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, tz = m.groups()
    return _compose(_date_secs(int(y), int(mo), int(d)), h, mi, s, frac, tz)


def _minute_secs(prefix: str) -> int | None:
    """Epoch seconds of a ``YYYY-MM-DDTHH:MM:`` prefix (cached), or None when it is not a valid one."""
    m = _PREFIX.fullmatch(prefix)
    if m is None:
        return None
    y, mo, d, h, mi = m.groups()
    day = _date_secs(int(y), int(mo), int(d))
    hh, mm = int(h), int(mi)
    if day is None or hh > 23 or mm > 59:
        return None  # hour 24 is left to the rules
    if len(_MINUTES) > 4096:
        _MINUTES.clear()
    secs = _MINUTES[prefix] = day + hh * 3600 + mm * 60
    return secs


def iso_ns(value: Any) -> int | None:
    """An ISO 8601 date-time string as integer ns since the Unix epoch, exactly.

    See the module docstring for the accepted shapes and the rules (no offset
    = UTC; fraction digits read as an integer, truncated below 1 ns).

    Returns:
        The instant in ns (negative before 1970), or None when ``value`` is not
        a string of an accepted shape naming a real date and time.
    """
    if type(value) is not str:
        return None
    prefix = value[:17]
    secs = _MINUTES.get(prefix)
    if secs is None:
        secs = _minute_secs(prefix)
        if secs is None:
            return _iso_ns_slow(value)
    sec = _SECONDS.get(value[17:19])
    if sec is None:
        return _iso_ns_slow(value)
    tail = value[19:]
    if not tail:
        return (secs + sec) * _NS
    if tail[0] in ".,":
        rest = tail[1:].lstrip("0123456789")
        n = len(tail) - 1 - len(rest)  # fraction digits
        if n == 0:
            return None
        frac = int(tail[1:n + 1]) * _SCALE[n] if n < 9 else int(tail[1:10])
    else:
        rest = tail
        frac = 0
    if not rest:
        return (secs + sec) * _NS + frac
    off = _OFFSETS.get(rest)
    if off is None:  # an offset not seen yet, blanks, or not a time: the rules decide
        return _iso_ns_slow(value)
    return (secs + sec) * _NS + frac + off


def ns_to_iso(ns: int) -> str:
    """Integer ns since the epoch as an RFC 3339 UTC string, exact: ``2025-09-30T09:03:59.962Z``.

    The fraction has as many digits as the value needs (none for a whole
    second, up to 9); the inverse of ``iso_ns`` for every year 1-9999.
    """
    secs, frac = divmod(ns, _NS)
    days, rem = divmod(secs, 86400)
    y, mo, d = _civil_from_days(days)
    text = f"{y:04d}-{mo:02d}-{d:02d}T{rem // 3600:02d}:{rem % 3600 // 60:02d}:{rem % 60:02d}"
    if frac:
        return f"{text}.{frac:09d}".rstrip("0") + "Z"
    return text + "Z"


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def _scale(v: int | Decimal) -> int:
    """Epoch seconds, ms, µs or ns (told apart by magnitude) as integer ns, truncated toward zero."""
    a = abs(v)
    scale = 1 if a >= 10**17 else 10**3 if a >= 10**14 else 10**6 if a >= 10**11 else 10**9
    return int(v * scale)


def epoch_ns(value: Any) -> int | None:
    """An epoch number as integer ns: s / ms / µs / ns told by magnitude, read exactly.

    Args:
        value: An int, a float (read through ``repr``), or a decimal string
            (blanks around it, a sign, a fraction and an exponent allowed).

    Returns:
        The ns, or None for zero, negative numbers (an unset time, as OTLP's
        0), NaN / infinities, bools and anything that is not such a number.
    """
    t = type(value)
    if t is int:
        return _scale(value) if value > 0 else None
    if t is float:
        if not math.isfinite(value) or value <= 0:
            return None
        return _scale(Decimal(repr(value)))
    if t is str:
        s = value.strip()
        if _NUMBER.fullmatch(s) is None:
            return None
        try:
            d = Decimal(s)
        except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
            return None
        return _scale(d) if d > 0 else None
    return None


def time_ns(value: Any) -> int | None:
    """A timestamp in any usual form: ISO 8601 text (``iso_ns``) or an epoch number (``epoch_ns``).

    A string that is a plain number (``"1762161242118"``, ``"1.7e9"``) is an
    epoch number, any other string ISO 8601. Returns None when it is neither.
    """
    if type(value) is str:
        s = value.strip()
        if s[:1].isdigit() and _NUMBER.fullmatch(s) is not None:
            return epoch_ns(s)
        return iso_ns(value)
    return epoch_ns(value)
