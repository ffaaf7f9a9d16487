"""timefmt: ISO 8601 / RFC 3339 text and epoch numbers as exact integer ns, and back."""

from __future__ import annotations

import calendar
import random
from datetime import datetime, timezone
from typing import Any

import pytest

from tracetui.core.readers import timefmt
from tracetui.core.readers.timefmt import epoch_ns, iso_ns, ns_to_iso, time_ns

S = 1_000_000_000


def at(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0, ns: int = 0, offset_min: int = 0) -> int:
    """The expected value, computed independently (calendar.timegm, integer arithmetic)."""
    return (calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - offset_min * 60) * S + ns


# -- the shapes producers write ------------------------------------------------------------------

SHAPES = [
    # JavaScript toISOString (Langfuse, OTel JS): ms and Z
    ("2025-09-30T09:03:59.962Z", at(2025, 9, 30, 9, 3, 59, 962_000_000)),
    # Python naive isoformat (OpenHands, LangSmith): µs, no offset = UTC
    ("2025-01-27T22:44:56.900854", at(2025, 1, 27, 22, 44, 56, 900_854_000)),
    # Python aware isoformat (LangSmith, OpenAI Agents SDK, inspect-ai)
    ("2025-08-15T17:55:57.114984+00:00", at(2025, 8, 15, 17, 55, 57, 114_984_000)),
    ("2025-05-12T20:27:36.997226-04:00", at(2025, 5, 12, 20, 27, 36, 997_226_000, offset_min=-240)),
    ("2025-02-11T15:17:00-05:00", at(2025, 2, 11, 15, 17, 0, 0, offset_min=-300)),
    # ATIF: whole seconds, Z
    ("2025-01-15T14:00:00Z", at(2025, 1, 15, 14)),
    # Go / OTel collectors: 7-9 fraction digits
    ("2025-01-01T00:00:00.1234567Z", at(2025, 1, 1, ns=123_456_700)),
    ("2025-01-01T00:00:00.12345678Z", at(2025, 1, 1, ns=123_456_780)),
    ("2025-01-01T00:00:00.123456789Z", at(2025, 1, 1, ns=123_456_789)),
    ("2025-01-01T00:00:00.999999999+02:00", at(2025, 1, 1, ns=999_999_999, offset_min=120)),
    ("2025-01-01T00:00:00.123456789", at(2025, 1, 1, ns=123_456_789)),
    # beyond ns: truncated, never rounded
    ("2025-01-01T00:00:00.9999999999Z", at(2025, 1, 1, ns=999_999_999)),
    ("2025-01-01T00:00:00.12345678912345Z", at(2025, 1, 1, ns=123_456_789)),
    # short fractions, comma (ISO 8601), with offsets that put digits where fraction digits 7-9 would be
    ("2025-01-01T00:00:00.5Z", at(2025, 1, 1, ns=500_000_000)),
    ("2025-01-01T00:00:00,25", at(2025, 1, 1, ns=250_000_000)),
    ("2025-01-01T00:00:00.5+01:00", at(2025, 1, 1, ns=500_000_000, offset_min=60)),
    ("2025-01-01T00:00:00.12+10:00", at(2025, 1, 1, ns=120_000_000, offset_min=600)),
    ("2025-01-01T00:00:00.123456+1000", at(2025, 1, 1, ns=123_456_000, offset_min=600)),
    # separators, case, blanks
    ("2025-01-01 10:00:00", at(2025, 1, 1, 10)),
    ("2025-01-01t10:00:00z", at(2025, 1, 1, 10)),
    ("  2025-01-01T10:00:00Z\n", at(2025, 1, 1, 10)),
    ("2025-01-01T10:00:00 +01:00", at(2025, 1, 1, 10, offset_min=60)),
    ("2025-01-01 10:00:00.5 Z", at(2025, 1, 1, 10, ns=500_000_000)),
    # offsets: ±HH:MM, ±HHMM, ±HH, Python's ±HH:MM:SS[.ffffff], -00:00 (RFC 3339 unknown offset)
    ("2025-01-01T10:00:00+0530", at(2025, 1, 1, 10, offset_min=330)),
    ("2025-01-01T10:00:00-03", at(2025, 1, 1, 10, offset_min=-180)),
    ("2025-01-01T10:00:00-00:00", at(2025, 1, 1, 10)),
    ("2025-01-01T10:00:00+23:59", at(2025, 1, 1, 10, offset_min=23 * 60 + 59)),
    ("2025-01-01T10:00:00+01:00:30", at(2025, 1, 1, 10) - 3630 * S),
    ("2025-01-01T10:00:00+01:00:30.25", at(2025, 1, 1, 10) - 3630 * S - 250_000_000),
    # reduced precision and the basic format
    ("2025-01-01T10:30", at(2025, 1, 1, 10, 30)),
    ("2025-01-01T10:30Z", at(2025, 1, 1, 10, 30)),
    ("2025-01-01T10", at(2025, 1, 1, 10)),
    ("2025-01-01", at(2025, 1, 1)),
    ("20250101T103000Z", at(2025, 1, 1, 10, 30)),
    ("20250101T103000.25+0100", at(2025, 1, 1, 10, 30, ns=250_000_000, offset_min=60)),
    # calendar edges
    ("2024-02-29T12:00:00Z", at(2024, 2, 29, 12)),
    ("2000-02-29T00:00:00Z", at(2000, 2, 29)),
    ("1969-12-31T23:59:59.999999999Z", -1),
    ("1970-01-01T00:00:00Z", 0),
    ("0001-01-01T00:00:00Z", at(1, 1, 1)),
    ("9999-12-31T23:59:59.999999999Z", at(9999, 12, 31, 23, 59, 59, 999_999_999)),
    # a leap second is the next minute's 00; 24:00 the next day's midnight (ISO 8601 end of day)
    ("2016-12-31T23:59:60Z", at(2017, 1, 1)),
    ("2016-12-31T23:59:60.5Z", at(2017, 1, 1, ns=500_000_000)),
    ("2025-01-01T24:00:00Z", at(2025, 1, 2)),
    ("2025-01-01T24:00", at(2025, 1, 2)),
]


@pytest.mark.parametrize(("text", "expected"), SHAPES, ids=[t for t, _ in SHAPES])
def test_iso_ns_reads_each_shape_exactly(text: str, expected: int) -> None:
    assert iso_ns(text) == expected
    assert timefmt._iso_ns_slow(text) == expected  # the regular expression alone agrees


def test_microsecond_values_match_datetime() -> None:
    """Up to 6 digits, the value is what datetime says (a second, independent computation)."""
    text = "2025-05-12T20:27:36.997226-04:00"
    dt = datetime.fromisoformat(text)
    assert iso_ns(text) == int((dt - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()) * S + 997_226_000


GARBAGE: list[Any] = [
    "", "   ", "nope", "2025", "2025-01", "2025-1-01T00:00:00Z", "25-01-01T00:00:00Z",
    "2025-13-01T00:00:00Z", "2025-00-10T00:00:00Z", "2025-01-00T00:00:00Z", "2025-01-32T00:00:00Z",
    "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "0000-01-01T00:00:00Z",
    "2025-01-01T25:00:00Z", "2025-01-01T24:00:01Z", "2025-01-01T24:30:00Z", "2025-01-01T24:00:00.1Z",
    "2025-01-01T10:60:00Z", "2025-01-01T10:00:61Z", "2025-01-01T10:00:00+24:00", "2025-01-01T10:00:00+01:60",
    "2025-01-01T10:00:00.Z", "2025-01-01T10:00:00Zjunk", "2025-01-01T10:00:00+1", "2025-01-01X10:00:00",
    "2025-W01-1T10:00:00", "2025-01-01T10:00:00[Europe/Paris]", "tomorrow", "1762161242118",
    None, 1762161242, 1.5, b"2025-01-01T00:00:00Z", ["2025-01-01T00:00:00Z"],
    datetime(2025, 1, 1, tzinfo=timezone.utc),
]


@pytest.mark.parametrize("value", GARBAGE, ids=[repr(v) for v in GARBAGE])
def test_iso_ns_gives_none_for_what_is_not_a_time(value: Any) -> None:
    assert iso_ns(value) is None
    if isinstance(value, str):
        assert timefmt._iso_ns_slow(value) is None


def test_cached_prefixes_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first read of a minute fills the cache, the next ones use it: same results, even when the
    cache was cleared in between (it is bounded)."""
    cases = [t for t, _ in SHAPES] + [g for g in GARBAGE if isinstance(g, str)]
    monkeypatch.setattr(timefmt, "_MINUTES", {})
    cold = [iso_ns(t) for t in cases]
    assert timefmt._MINUTES  # filled
    assert [iso_ns(t) for t in cases] == cold
    assert [timefmt._iso_ns_slow(t) for t in cases] == cold


def test_both_paths_agree_on_random_strings() -> None:
    rnd = random.Random(3)
    for _ in range(3000):
        y, mo, d = rnd.choice([1, 1900, 2000, 2024, 2025, 9999]), rnd.randint(0, 13), rnd.randint(0, 32)
        h, mi, s = rnd.choice([0, 23, 24, 25]), rnd.choice([0, 59, 60]), rnd.choice([0, 59, 60, 61])
        frac = rnd.choice(["", "." + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 11)))])
        tz = rnd.choice(["", "Z", "+05:30", "-0400", "+02", "+24:00", " Z"])
        text = f"{y:04d}-{mo:02d}-{d:02d}{rnd.choice('T t')}{h:02d}:{mi:02d}:{s:02d}{frac}{tz}"
        assert iso_ns(text) == timefmt._iso_ns_slow(text), text


# -- back to text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("ns", "text"), [
    (0, "1970-01-01T00:00:00Z"),
    (at(2025, 9, 30, 9, 3, 59, 962_000_000), "2025-09-30T09:03:59.962Z"),
    (at(2025, 1, 27, 22, 44, 56, 900_854_000), "2025-01-27T22:44:56.900854Z"),
    (at(2025, 1, 1, ns=123_456_789), "2025-01-01T00:00:00.123456789Z"),
    (at(2026, 11, 5, 1, 5, 30, 500_000_000), "2026-11-05T01:05:30.5Z"),
    (-1, "1969-12-31T23:59:59.999999999Z"),
    (at(2024, 2, 29, 23, 59, 59), "2024-02-29T23:59:59Z"),
    (at(9999, 12, 31, 23, 59, 59, 999_999_999), "9999-12-31T23:59:59.999999999Z"),
])
def test_ns_to_iso_writes_utc_with_the_digits_needed(ns: int, text: str) -> None:
    assert ns_to_iso(ns) == text
    assert iso_ns(text) == ns


def test_round_trip_over_the_whole_range() -> None:
    rnd = random.Random(5)
    lo, hi = at(1, 1, 1), at(9999, 12, 31, 23, 59, 59, 999_999_999)
    for _ in range(5000):
        ns = rnd.randint(lo, hi)
        assert iso_ns(ns_to_iso(ns)) == ns


# -- epoch numbers ---------------------------------------------------------------------------------

T = 1_762_161_242_118_000_000  # 2025-11-03T09:14:02.118Z


@pytest.mark.parametrize(("value", "expected"), [
    (1_762_161_242, T - 118_000_000),                  # seconds
    (1_762_161_242_118, T),                            # milliseconds
    (1_762_161_242_118_000, T),                        # microseconds
    (T, T),                                            # nanoseconds
    (1762161242.118, T),                               # float seconds: the digits written, not the double
    (1758026593.209236, 1_758_026_593_209_236_000),    # time.time(): round(v * 1e9) would be off by 256 ns
    (1.762161242118e18, T),                            # float ns in exponent form
    ("1762161242118", T),
    (" 1762161242.118 ", T),
    ("1.762161242118e18", T),
    ("1.762161242118E+12", T),
    (99_999_999_999, 99_999_999_999 * S),              # the largest seconds value (year 5138)
    (100_000_000_000, 100_000_000_000 * 1_000_000),    # from here on: milliseconds
])
def test_epoch_ns_tells_the_unit_by_magnitude_and_reads_exactly(value: Any, expected: int) -> None:
    assert epoch_ns(value) == expected
    assert time_ns(value) == expected


@pytest.mark.parametrize("value", [0, -5, 0.0, -1.5, float("nan"), float("inf"), True, False, None, "", "abc",
                                   "1_000", "0x10", "Infinity", "NaN", "-1762161242", [1], {"s": 1}])
def test_epoch_ns_gives_none_for_unset_or_not_a_number(value: Any) -> None:
    assert epoch_ns(value) is None


def test_time_ns_reads_iso_text_and_epoch_numbers() -> None:
    assert time_ns("2025-11-03T09:14:02.118Z") == T
    assert time_ns("1762161242118") == T
    assert time_ns("20251103T091402.118Z") == T  # basic format: ISO, not a number
    assert time_ns("2025-11-03") == at(2025, 11, 3)
    assert time_ns("soon") is None and time_ns(None) is None


# -- the cases the readers' own tests had before the move (cassettes, OTel SDK, LangSmith, OpenHands, inspect-ai) --

READER_CASES: list[tuple[Any, int | None]] = [
    # cassettes (time_ns: ISO text and epoch numbers)
    ("2025-11-03T09:14:02.118Z", 1762161242118000000),
    ("2025-11-03T09:14:02.123456789123Z", 1762161242123456789),
    ("2025-11-03T10:14:02.118+01:00", 1762161242118000000),
    ("2025-11-03 04:14:02.118-0500", 1762161242118000000),
    ("2025-11-03T09:14:02.118", 1762161242118000000),
    (1762161242, 1762161242000000000), (1762161242.118, 1762161242118000000),
    (1762161242118, 1762161242118000000), (1762161242118000, 1762161242118000000),
    (1762161242118000001, 1762161242118000001), ("1762161242118", 1762161242118000000),
    ("2026-02-30T00:00:00Z", None), ("yesterday", None), (True, None), (None, None), (-5, None),
    (float("nan"), None),
    # OTel SDK dumps
    ("2026-11-29T17:01:31.110677Z", 1795971691110677000),
    ("2026-11-29T17:01:31.110677123456Z", 1795971691110677123),
    ("2026-11-29T18:01:31.5+01:00", 1795971691500000000),
    ("2026-11-29 17:01:31", 1795971691000000000),
    ("2026-11-29", 1795910400000000000),
    ("0000-01-01T00:00:00Z", None), ("", None),
    # LangSmith
    ("1970-01-01T00:00:00Z", 0),
    ("1970-01-01T00:00:00.123456789123Z", 123456789),
    ("1970-01-01T01:00:00.5+01:00", 500_000_000),
    ("1970-01-01T00:00:00-0130", 5400 * S),
    ("2024-10-11T20:58:24.544431", at(2024, 10, 11, 20, 58, 24, 544_431_000)),
    ("2024-02-30T00:00:00Z", None),
    # OpenHands
    ("1970-01-01T00:00:00", 0),
    ("2025-01-27T22:44:56.900854", 1738017896900854000),
    ("2025-01-27T22:44:56.900854123999Z", 1738017896900854123),
    ("2025-01-27T23:44:56.9+01:00", 1738017896900000000),
    ("2025-01-27T17:44:56.9-0500", 1738017896900000000),
    ("2025-01-27 22:44:56", 1738017896000000000),
    # inspect-ai
    ("2025-05-12T20:27:36.997226-04:00", 1747096056997226000),
    ("2025-05-13T00:27:36.997226Z", 1747096056997226000),
    ("2026-01-02T03:04:05.123456789+00:00", 1767323045123456789),
    ("2026-01-02T03:04:05.1234567891234+0000", 1767323045123456789),
    ("1969-12-31T23:59:59.5Z", -500_000_000),
    ("2024-02-29T12:00:00+05:30", 1709188200000000000),
    ("2025-13-01T00:00:00Z", None),
]


@pytest.mark.parametrize(("value", "ns"), READER_CASES, ids=[repr(v) for v, _ in READER_CASES])
def test_cases_written_for_the_readers(value: Any, ns: int | None) -> None:
    assert time_ns(value) == ns
    if isinstance(value, str) and not value.strip().isdigit():
        assert iso_ns(value) == ns
    elif isinstance(value, (int, float)):
        assert iso_ns(value) is None  # a number is never ISO text


@pytest.mark.parametrize("ns", [0, 1747096056997226000, 1767323045123456789, 951782400000000001, 1758026593209236000,
                                1759223039962000000, 1768046410000000500, 1738017896900854123])
def test_reader_round_trips(ns: int) -> None:
    assert iso_ns(ns_to_iso(ns)) == ns
