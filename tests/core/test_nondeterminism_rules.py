"""docs/triage.md, ``nondeterministic_argument``: values minted at run time in tool arguments
(``triage.nondeterminism.ArgumentCheck``), one test per rule (issue 25: the survivors of ``scripts/mutation.py
nondeterminism run``, tests/mutation_equivalents.md)."""

from __future__ import annotations

from typing import Any

from builders import TraceBuilder, make_span

from tracetui.core.model import Span
from tracetui.core.triage.nondeterminism import ArgumentCheck

START = 1_762_161_242_000_000_000  # 2025-11-03T09:14:02Z, a whole second: the day's bounds are whole seconds too
SEC = START // 10**9
DAY = 86_400
UUID = "8f14e45f-ceea-467f-a0e6-1b2c3d4e5f60"
OTHER_UUID = "0c9a1e52-7d3b-4c8e-9f21-6a5b4c3d2e1f"


def check(args: Any, header: dict[str, Any] | None = None, before: list[Span] | None = None,
          spans: list[Span] | None = None, call_start: int = START) -> tuple[str, str] | None:
    """``ArgumentCheck`` on a tool call passing ``args`` (starting at ``call_start``), after the spans ``before``
    (the run's start: the header's ``start_ns`` unless ``header`` is given)."""
    call = make_span("tool", "book", arguments=args, start_ns=call_start)
    run = [*(before or []), call] if spans is None else [*spans, call]
    return ArgumentCheck(run, {"start_ns": START} if header is None else header, {}).check(call, len(run) - 1, args)


def read(output: Any, kind: str = "tool") -> Span:
    """A span before the call whose result the agent read."""
    if kind == "retrieval":
        return make_span("retrieval", "kb", query="slots", documents=output, start_ns=START)
    return make_span("tool", "lookup", arguments={}, output=output, start_ns=START)


def test_a_random_uuid4_is_minted_unless_the_header_records_a_seed() -> None:
    """Wherever it sits in the arguments (a list included); a UUID of another version is not one."""
    assert check({"booking": {"ids": ["x", UUID]}}) == (UUID, "a random UUID-4")
    assert check({"ref": f"booking {UUID} of today"}) == (UUID, "a random UUID-4")
    assert check({"id": UUID}, header={"start_ns": START, "seed": 7}) is None
    assert check({"id": "8f14e45f-ceea-167f-a0e6-1b2c3d4e5f60"}) is None  # version 1


def test_a_date_time_within_a_day_either_side_of_the_start_is_minted() -> None:
    """A day either side counts, its bounds included; a written space for the ``T`` too; a date-time further off, a
    date without a time, or no real date is not minted."""
    why = "a date-time within a day of the run's start"
    assert check({"at": "2025-11-03T10:00:00Z"}) == ("2025-11-03T10:00:00Z", why)
    assert check({"at": "2025-11-03 10:00"}) == ("2025-11-03 10:00", why)
    assert check({"at": "2025-11-04T09:14:02Z"}) == ("2025-11-04T09:14:02Z", why)  # a day after, to the second
    assert check({"at": "2025-11-02T09:14:02Z"}) == ("2025-11-02T09:14:02Z", why)
    assert check({"at": "2025-11-04T09:14:03Z"}) is None  # a second more
    assert check({"at": "2025-10-01T10:00:00Z"}) is None
    assert check({"day": "2025-11-03 and more text"}) is None
    assert check({"at": "2025-13-45T10:00:00Z"}) is None  # no such date


def test_the_header_clock_is_not_minted_a_replay_freezes_now_to_it() -> None:
    """The clock's instant as a date-time, and any epoch value within the clock's second, in seconds or ms."""
    header = {"start_ns": START, "clock": {"now": "2025-11-03T09:14:02.250+00:00"}}
    assert check({"at": "2025-11-03T09:14:02.250+00:00"}, header=header) is None
    assert check({"at": "2025-11-03T09:14:05+00:00"}, header=header) is not None
    for same_second in (SEC, SEC + 0.5, SEC * 1000 + 900, str(SEC), str(SEC * 1000 + 250)):
        assert check({"t": same_second}, header=header) is None, same_second
    assert check({"t": SEC + 1}, header=header) == (str(SEC + 1), "epoch seconds within a day of the run's start")


def test_strings_of_16_to_200_characters_are_looked_into() -> None:
    """A minute-precision date-time alone (16 characters) is looked at; one at the end of a text of 200 characters
    too, not of 201."""
    at = "2025-11-03T10:00"
    assert len(at) == 16 and check({"at": at}) is not None
    assert check({"note": "x" * 184 + at}) == (at, "a date-time within a day of the run's start")
    assert check({"note": "x" * 185 + at}) is None


def test_epoch_seconds_and_milliseconds_near_the_start_are_minted_as_numbers_or_digit_strings() -> None:
    """Each reported with its value as written and its unit; a day either side, bounds included; a 10- or 13-digit
    string counts as the number it spells; another length, or a true/false, does not."""
    secs, ms = "epoch seconds within a day of the run's start", "epoch milliseconds within a day of the run's start"
    assert check({"t": SEC + 60}) == (str(SEC + 60), secs)
    assert check({"t": SEC + 60.5}) == (repr(SEC + 60.5), secs)
    assert check({"t": (SEC + 60) * 1000}) == (str((SEC + 60) * 1000), ms)
    assert check({"t": str(SEC + 60)}) == (str(SEC + 60), secs)
    assert check({"t": str((SEC + 60) * 1000)}) == (str((SEC + 60) * 1000), ms)
    for bound in (SEC - DAY, SEC + DAY):
        assert check({"t": bound}) == (str(bound), secs), bound
        assert check({"t": bound * 1000}) == (str(bound * 1000), ms), bound
    assert check({"t": SEC + DAY - 1}) == (str(SEC + DAY - 1), secs)
    assert check({"t": (SEC + DAY) * 1000 - 60_000}) == (str((SEC + DAY) * 1000 - 60_000), ms)
    assert check({"t": SEC + DAY + 1}) is None and check({"t": (SEC - DAY) * 1000 - 1}) is None
    assert check({"t": str(SEC + 60) + "0"}) is None  # 11 digits
    assert check({"t": "1000000000"}) is None and check({"t": "1000000000000"}) is None  # 2001: not near
    assert check({"t": True, "n": 12}) is None


def test_the_runs_start_is_the_headers_start_ns_else_its_started_at_else_the_first_span() -> None:
    """Three days apart, each source decides which date-times are near; with none, nothing is minted."""
    near, later = {"at": "2025-11-03T10:00:00Z"}, {"at": "2025-11-06T10:00:00Z"}
    later_ns = START + 3 * DAY * 10**9
    spans = [make_span("agent", "root", start_ns=later_ns)]
    assert check(near, header={"start_ns": START}, spans=spans, call_start=later_ns) is not None
    assert check(later, header={"start_ns": START}, spans=spans, call_start=later_ns) is None
    started_at = {"start_ns": "x", "started_at": "2025-11-03T09:14:02Z"}  # a start_ns that is not a number
    assert check(near, header=started_at, spans=spans, call_start=later_ns) is not None
    assert check(later, header=started_at, spans=spans, call_start=later_ns) is None
    assert check(later, header={}, spans=spans, call_start=later_ns + 10**9) is not None  # the earliest span's
    assert check(near, header={}, spans=spans, call_start=later_ns + 10**9) is None
    bare = make_span("tool", "book", arguments=near)
    alone = ArgumentCheck([bare], {}, {})
    assert alone.check(bare, 0, {**near, "t": SEC + 60, "s": str(SEC + 60), "id": UUID}) == (UUID, "a random UUID-4")
    assert alone.check(bare, 0, {**near, "t": SEC + 60, "s": str(SEC + 60)}) is None


def test_a_value_the_agent_read_before_the_call_is_data_not_minted() -> None:
    """In the run's input, in the messages or the answer of the model call before the call, or in the output (the
    documents of a retrieval) of one of the 20 spans before it: the first span too, and an output holding a number
    beyond 64 bits; 21 spans before is too far."""
    args = {"id": UUID}
    assert check(args, header={"start_ns": START, "input": {"booking": UUID}}) is None
    t = TraceBuilder("o", start_ns=START)
    t.add("llm", "chat", messages=[{"role": "user", "content": f"move booking {UUID}"}], output="ok")
    assert check(args, spans=t.spans) is None
    t = TraceBuilder("o", start_ns=START)
    t.add("llm", "chat", messages=[], output={"content": f"booking {UUID}"})
    assert check(args, spans=t.spans) is None
    assert check(args, before=[read([{"id": UUID}], kind="retrieval")]) is None
    assert check(args, before=[read({"id": UUID, "n": 2**70})]) is None
    assert check(args, before=[read({"id": UUID})] + [read({})] * 19) is None  # the first span, 20 before
    assert check(args, before=[read({"id": UUID})] + [read({})] * 20) == (UUID, "a random UUID-4")
    assert check(args, before=[read({"other": 1})]) == (UUID, "a random UUID-4")


def test_a_calls_first_three_candidates_decide_each_kind_looked_for() -> None:
    """Candidates are taken from the last value back; once three are found the rest of the arguments is not looked
    at: three read ids hide a fourth. A UUID found does not stop the search for other candidates."""
    ids = [f"{UUID[:-1]}{d}" for d in "0123"]
    header = {"start_ns": START, "input": {"known": ids[1:]}}
    assert check({"d": ids[0], "c": ids[1], "b": ids[2], "a": ids[3]}, header=header) is None
    assert check({"d": ids[0], "c": ids[1]}, header=header) == (ids[0], "a random UUID-4")
    header = {"start_ns": START, "input": {"known": OTHER_UUID}}
    assert check({"at": "2025-11-03T10:00:00Z", "id": OTHER_UUID}, header=header) == (
        "2025-11-03T10:00:00Z", "a date-time within a day of the run's start")
