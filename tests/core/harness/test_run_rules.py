"""The rules of core/harness/run.py (record, replay, RunResult), each on an agent and a recording built in the test.

The agent is an ``AgentSpec`` of the test's own tools (no file to load); recordings are made with ``record`` into
``tmp_path`` or built from spans; ``RunResult`` and ``ReplayReport`` are built from an ``Outcome`` directly.
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from builders import Ticker
from tracetui.core.errors import HarnessError, ReplayDivergence, SchemaChanged
from tracetui.core.harness.agent import AgentSpec
from tracetui.core.harness.cassette import Cassette
from tracetui.core.harness.context import Outcome
from tracetui.core.harness.fixture import RecordedReadsFixture
from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.run import (
    RECORDING_OUTCOMES,
    ReplayReport,
    RunResult,
    base_header,
    error_text,
    new_run_id,
    normalization_notes,
    parse_clock,
    record,
    record_clock,
    recorded_input,
    replay,
    replay_clock,
    resolve_zone,
)
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers import read_runs, read_trace

KEY = b"run-rules-project-key"
T0 = 1_790_000_000_000_000_000  # 2026-09-21T14:13:20Z


# --- RunResult and ReplayReport ----------------------------------------------------------------------------------


def result(*types: str, error: BaseException | None = None, original_failed: bool | None = None,
           duplicates: int = 0, reproduces: bool | None = None, final_state: Any = None) -> RunResult:
    outcome = Outcome(divergences=[{"type": t} for t in types],
                      duplicate_writes=[{"tool": "refund"} for _ in range(duplicates)])
    return RunResult("out.jsonl", "run-1", {"record_mode": "strict"}, None, error, outcome,
                     reproduces=reproduces, original_failed=original_failed, final_state=final_state)


def test_the_recording_outcomes_are_named_for_what_stopped_the_run() -> None:
    assert RECORDING_OUTCOMES == {"recording_incomplete": "incomplete_recording",
                                  "recording_unservable": "unservable_recording"}


def test_a_runs_status_is_the_recordings_fault_only_when_that_stopped_it_first() -> None:
    assert result("recording_unservable").status == "unservable_recording"
    assert result("recording_incomplete", "unrecorded_call").status == "incomplete_recording"
    assert result("unrecorded_call", "recording_incomplete").status == "diverged"
    assert result("write_mismatch").status == "diverged"
    assert result(duplicates=1).status == "failed"
    assert result(error=ValueError("x"), original_failed=False).status == "failed"
    assert result().status == "passed"
    assert result(error=ValueError("x"), original_failed=True).status == "passed"


def test_a_new_failure_is_the_agent_raising_where_the_original_did_not_fail() -> None:
    assert result(error=ValueError("x"), original_failed=False).new_failure is True
    assert result(error=ValueError("x"), original_failed=True).new_failure is False
    assert result(error=ValueError("x"), original_failed=None).new_failure is False  # a recording: no original
    assert result(error=ReplayDivergence("left"), original_failed=False).new_failure is False  # a divergence
    assert result(original_failed=False).new_failure is False


def test_a_run_fails_on_a_divergence_a_new_failure_or_a_repeated_write() -> None:
    assert result("unrecorded_call").failed is True and result("unrecorded_call").diverged is True
    assert result(error=KeyError("k"), original_failed=False).failed is True
    assert result(duplicates=2).failed is True
    clean = result()
    assert clean.failed is False and clean.diverged is False


def test_a_runs_summary_says_what_it_did_and_only_the_replay_and_fixture_fields_that_apply() -> None:
    r = result("unrecorded_call", error=ReplayDivergence("no such call\nmore"), original_failed=False)
    r.outcome.live_calls, r.outcome.model_calls, r.outcome.served, r.outcome.llm_served, r.outcome.misses = 1, 2, 3, 4, 5
    r.outcome.writes.append({"tool": "refund"})
    r.outcome.notes.append("a note")
    r.unconsumed.append({"tool": "get"})
    r.blocked.append("example.com:443")
    assert r.summary() == {
        "run_id": "run-1", "mode": "strict", "trial": 1, "status": "diverged", "diverged": True, "failed": True,
        "new_failure": False, "error": "ReplayDivergence: no such call", "live_calls": 1, "model_calls": 2,
        "served": 3, "llm_served": 4, "misses": 5, "divergences": [{"type": "unrecorded_call"}],
        "writes": [{"tool": "refund"}], "duplicate_writes": [], "unconsumed": [{"tool": "get"}],
        "blocked_network": ["example.com:443"], "notes": ["a note"],
    }
    replayed = result(reproduces=False, final_state={"a": 1})
    replayed.outcome.changes.append({"by": 0})
    summary = replayed.summary()
    assert summary["reproduces_original_path"] is False
    assert summary["final_state"] == {"a": 1} and summary["changes"] == [{"by": 0}]
    assert summary["error"] is None and summary["status"] == "passed"


def test_a_replay_reports_the_worst_trial_and_counts_the_reproducing_ones() -> None:
    runs = [result(reproduces=True), result("recording_incomplete", reproduces=False), result(duplicates=1),
            result(reproduces=True)]
    report = ReplayReport(runs, [("get", "h")])
    assert report.reproduced == 2
    assert report.status == "incomplete_recording" and report.diverged is True and report.failed is True
    assert ReplayReport([result("recording_unservable"), result("recording_incomplete")], []).status == \
        "unservable_recording"
    assert ReplayReport([result(), result(duplicates=1)], []).status == "failed"
    assert ReplayReport([result(), result("write_mismatch")], []).status == "diverged"
    clean = ReplayReport([result(), result()], [])
    assert (clean.status, clean.diverged, clean.failed, clean.reproduced) == ("passed", False, False, 0)
    assert ReplayReport([], []).status == "passed"


# --- texts, zones and clocks -------------------------------------------------------------------------------------


def test_error_text_is_the_class_and_the_first_line_or_the_class_alone() -> None:
    assert error_text(None) is None
    assert error_text(ValueError("bad amount\nsecond line")) == "ValueError: bad amount"
    assert error_text(StopIteration()) == "StopIteration"
    assert error_text(KeyError("k")) == "KeyError: 'k'"


def test_a_zone_is_the_one_named_else_tz_else_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    tz, name = resolve_zone("Europe/Paris")
    assert name == "Europe/Paris" and datetime(2026, 7, 1, tzinfo=tz).utcoffset() == timedelta(hours=2)
    tz, name = resolve_zone(None)
    assert name == "Asia/Tokyo" and datetime(2026, 7, 1, tzinfo=tz).utcoffset() == timedelta(hours=9)
    assert resolve_zone("")[1] == "Asia/Tokyo"
    assert resolve_zone("utc") == (timezone.utc, "UTC")
    monkeypatch.setenv("TZ", "Not/AZone")  # a $TZ that names no zone: UTC, no error
    assert resolve_zone(None) == (timezone.utc, "UTC")
    monkeypatch.setenv("TZ", "utc")
    assert resolve_zone(None) == (timezone.utc, "UTC")
    monkeypatch.delenv("TZ")
    assert resolve_zone(None) == (timezone.utc, "UTC")


@pytest.mark.parametrize("bad", ["Not/AZone", "../etc/passwd", "Europe/"])
def test_a_zone_named_that_is_not_iana_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    with pytest.raises(HarnessError) as info:
        resolve_zone(bad)
    assert str(info.value) == f"time zone {bad!r} is not an IANA name (for example Europe/Paris)"


def test_a_clock_without_an_offset_is_taken_in_the_zone_and_one_with_an_offset_is_moved_to_it() -> None:
    moment, name = parse_clock("2026-03-02T09:30:00", "America/New_York")
    assert name == "America/New_York" and moment.isoformat() == "2026-03-02T09:30:00-05:00"
    moment, _ = parse_clock("2026-03-02T09:30:00Z", "Europe/Paris")
    assert moment.isoformat() == "2026-03-02T10:30:00+01:00"
    moment, name = parse_clock("2026-03-02T09:30:00+01:00", "UTC")
    assert (moment.isoformat(), name) == ("2026-03-02T08:30:00+00:00", "UTC")


def test_a_clock_that_is_not_iso_8601_is_refused() -> None:
    for bad in ("tomorrow", "2026-13-01T00:00:00", "2026-03-02T09:30:00z"):  # ISO 8601's designator is "Z"
        with pytest.raises(HarnessError) as info:
            parse_clock(bad, "UTC")
        assert str(info.value) == f"clock {bad!r} is not an ISO 8601 time (2026-11-03T10:14:02+01:00)"
    with pytest.raises(HarnessError):
        parse_clock(None, "UTC")  # type: ignore[arg-type]


def test_a_recorded_runs_clock_is_the_one_given_else_its_start_to_the_second(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TZ", raising=False)
    moment, zone = record_clock(T0 + 987_654_321, None, "Asia/Kolkata")
    assert (moment.isoformat(), zone) == ("2026-09-21T19:43:20+05:30", "Asia/Kolkata")
    moment, zone = record_clock(T0 + 987_654_321, None, None)
    assert (moment.isoformat(), zone) == ("2026-09-21T14:13:20+00:00", "UTC")
    moment, zone = record_clock(T0, "2026-01-01T08:00:00", "Europe/Paris")
    assert (moment.isoformat(), zone) == ("2026-01-01T08:00:00+01:00", "Europe/Paris")


def test_a_run_id_is_the_utc_start_to_the_second_and_four_hex_digits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # the machine's own zone is not the run id's
    time.tzset()
    try:
        ids = random.Random(5)
        expected = f"{random.Random(5).getrandbits(16):04x}"
        assert new_run_id(ids, T0 + 600_000_000) == f"run-20260921T141320Z-{expected}"
    finally:
        monkeypatch.undo()
        time.tzset()
    ids = random.Random(5)
    expected = f"{random.Random(5).getrandbits(16):04x}"
    assert new_run_id(ids, T0 + 600_000_000) == f"run-20260921T141320Z-{expected}"

    class Zero(random.Random):
        def getrandbits(self, k: int) -> int:
            return 10

    assert new_run_id(Zero(), T0) == "run-20260921T141320Z-000a"


def test_the_normalization_notes_name_the_rules_the_key_and_the_seed() -> None:
    redactor = Redactor(KEY, rules=["email", "phone"])
    notes = normalization_notes(redactor, 42)
    assert len(notes) == 5
    assert notes[2] == f"redaction before write: email, phone replaced by stable typed tokens (HMAC-SHA256, key {redactor.key_id})"
    assert notes[4] == "randomness: ctx.new_id() and ctx.random seeded with 42 (header seed)"
    # the header's statements of how values were kept, keyed and frozen (docs/format.md, "normalization")
    assert notes[0] == ("arguments and outputs: recorded whole, as the agent passed them and the tool returned them, "
                        "before any parsing; non-JSON values written as text")
    assert notes[1] == ("calls keyed by tool name + args_hash (SHA-256 of canonical JSON: keys sorted, JSON strings "
                        "parsed); numbers and list order as recorded")
    assert notes[3] == "clock: ctx.now() is the run's clock, fixed for the whole run (header clock)"


# --- the header --------------------------------------------------------------------------------------------------


def spec_of(run: Any, **kw: Any) -> AgentSpec:
    return AgentSpec(ref="tests/desk.py:run", run=run, name="desk", **kw)


def test_the_header_holds_the_run_and_only_the_declarations_the_agent_makes() -> None:
    redactor = Redactor(KEY)
    clock = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
    bare = base_header(spec_of(len), redactor, "run-1", "t" * 32, T0, clock, "UTC", 7, {"q": 1})
    assert bare == {
        "run_id": "run-1", "trace_id": "t" * 32, "started_at": "2026-09-21T14:13:20Z", "start_ns": T0,
        "clock": {"now": "2026-03-02T09:30:00+00:00", "timezone": "UTC"}, "seed": 7,
        "tool_schema_hash": spec_of(len).tool_schema_hash(), "read_tools": [], "agent": "desk",
        "agent_ref": "tests/desk.py:run", "input": {"q": 1},
    }
    full = spec_of(len, code_version="abc", prompts={"sys": {"version": "v2", "text": "x"}},
                   model_info={"id": "m"}, read_tools=frozenset({"zeta", "ada@example.com"}))
    header = base_header(full, redactor, "run-1", "t" * 32, T0, clock, "UTC", 7, None)
    assert header["code_version"] == "abc"
    assert header["prompt_versions"] == {"sys": "v2"} and header["prompt_hash"] == full.prompt_hash()
    assert header["model"] == {"id": "m"}
    # the read list is redacted like every other value (a tool name can hold an address), and sorted
    assert header["read_tools"] == sorted([redactor.text("ada@example.com"), "zeta"])
    assert "ada@example.com" not in str(header["read_tools"])


# --- recorded input and the replay's clock ------------------------------------------------------------------------


def root_span(**data: Any) -> Span:
    return Span("root", None, 0, SpanKind.AGENT, "invoke_agent desk", T0, T0 + 10, Status.OK, None, data, {})


def test_the_recorded_input_is_the_headers_else_the_root_agent_spans() -> None:
    assert recorded_input(Trace([root_span(input=2)], header={"input": None})) is None
    assert recorded_input(Trace([root_span(input=2)], header={})) == 2
    child = Span("c", "root", 1, SpanKind.AGENT, "invoke_agent sub", T0, T0 + 1, Status.OK, None, {"input": 3}, {})
    tool = Span("t", None, 2, SpanKind.TOOL, "execute_tool x", T0, T0 + 1, Status.OK, None, {"input": 4}, {})
    with pytest.raises(HarnessError) as info:
        recorded_input(Trace([child, tool, root_span()], path="rec.jsonl"))
    assert str(info.value) == ("rec.jsonl: the recording holds no run input (header input or a root agent span's "
                               "input); pass --input")


def test_the_replay_clock_is_the_recorded_clock_in_its_zone() -> None:
    moment, zone, notes = replay_clock(Trace([], header={"clock": {"now": "2026-03-02T09:30:00-05:00",
                                                                   "timezone": "America/New_York"}}))
    assert (moment.isoformat(), zone, notes) == ("2026-03-02T09:30:00-05:00", "America/New_York", [])
    moment, zone, notes = replay_clock(Trace([], header={"clock": {"now": "2026-03-02T09:30:00"}}))
    assert (moment.isoformat(), zone, notes) == ("2026-03-02T09:30:00+00:00", "UTC", [])


def test_a_replay_without_a_usable_clock_is_frozen_at_the_runs_start_in_utc_with_a_note() -> None:
    moment, zone, notes = replay_clock(Trace([root_span()], header={"start_ns": T0 + 5_000_000_000}))
    assert (moment, zone) == (datetime.fromtimestamp((T0 + 5_000_000_000) / 1e9, timezone.utc), "UTC")
    assert notes == ["the recording has no clock (header clock.now); frozen at the run's start in UTC"]
    moment, zone, notes = replay_clock(Trace([root_span()], header={"clock": {"now": "soon"}}))
    assert moment == datetime.fromtimestamp(T0 / 1e9, timezone.utc)  # the earliest span start
    assert notes == ["recorded clock unusable (clock 'soon' is not an ISO 8601 time (2026-11-03T10:14:02+01:00)); "
                     "frozen at the run's start in UTC"]
    late = Span("l", "root", 1, SpanKind.TOOL, "execute_tool x", T0 + 50, None, Status.OK, None, {}, {})
    unstarted = Span("u", "root", 2, SpanKind.TOOL, "execute_tool y", None, None, Status.OK, None, {}, {})
    moment, _, _ = replay_clock(Trace([late, unstarted, root_span()], header={"start_ns": "x", "clock": {"now": 5}}))
    assert moment == datetime.fromtimestamp(T0 / 1e9, timezone.utc)
    moment, _, notes = replay_clock(Trace([unstarted], header={"clock": "2026"}))
    assert moment == datetime.fromtimestamp(0, timezone.utc) and len(notes) == 1


# --- record ------------------------------------------------------------------------------------------------------


def desk(ctx: Any, input: Any) -> Any:
    order = ctx.tool("get_order", {"id": input["id"]})
    if input.get("refund"):
        ctx.tool("refund", {"id": input["id"], "amount": order["total"]})
    return {"total": order["total"], "note": input.get("note")}


class Desk:
    """The desk agent's spec and how often its live tools ran."""

    def __init__(self, **kw: Any) -> None:
        self.calls = {"get_order": 0, "refund": 0}

        def get_order(id: str) -> dict:
            self.calls["get_order"] += 1
            return {"id": id, "total": 30}

        def refund(id: str, amount: int) -> dict:
            self.calls["refund"] += 1
            return {"ok": True}

        self.spec = AgentSpec(ref="desk.py:run", run=kw.pop("run", desk), name="desk",
                              tools={"get_order": get_order, "refund": refund},
                              read_tools=frozenset({"get_order"}), **kw)


def rec(tmp_path: Path, agent: Desk | None = None, input: Any = None, **kw: Any) -> tuple[Path, Any]:
    agent = agent or Desk()
    out = tmp_path / kw.pop("name", "orig.jsonl")
    kw.setdefault("clock", "2026-03-02T09:30:00")
    kw.setdefault("timezone", "UTC")
    kw.setdefault("seed", 3)
    r = record(agent.spec, {"id": "A1", "refund": True} if input is None else input, str(out),
               redactor=Redactor(KEY), timer=Ticker(), **kw)
    return out, r


def rep(recording: Path, tmp_path: Path, agent: Desk | None = None, name: str = "replay.jsonl", **kw: Any) -> ReplayReport:
    agent = agent or Desk()
    kw.setdefault("redactor", Redactor(KEY))
    return replay(read_trace(str(recording)), agent.spec, str(tmp_path / name), timer=Ticker(), **kw)


def test_a_recorded_run_has_its_header_mode_ids_and_root_span(tmp_path: Path) -> None:
    agent = Desk()
    out, r = rec(tmp_path, agent, input={"id": "A1", "refund": True, "note": "ada@example.com"})
    assert agent.calls == {"get_order": 1, "refund": 1}
    assert r.error is None and r.output == {"total": 30, "note": "ada@example.com"}  # as the agent returned it
    trace = read_trace(str(out))
    h = trace.header
    assert h["record_mode"] == "record" and h["seed"] == 3 and h["clock"]["now"] == "2026-03-02T09:30:00+00:00"
    assert len(h["trace_id"]) == 32 and int(h["trace_id"], 16) >= 0
    assert h["run_id"].startswith("run-") and h["run_id"] == r.run_id == r.header["run_id"]
    assert h["normalization"] == normalization_notes(Redactor(KEY), 3)
    assert h["redaction"]["fired"] == {"email": 2}  # the input's and the output's address
    assert "ada@example.com" not in out.read_text(encoding="utf-8")
    root = next(s for s in trace.spans if s.parent_id is None)
    assert root.kind is SpanKind.AGENT and root.name == "invoke_agent desk" and root.status is Status.OK
    assert root.data["agent_name"] == "desk" and root.data["input"]["id"] == "A1"
    assert root.data["output"]["total"] == 30 and root.data["output"]["note"] != "ada@example.com"
    assert "replay.summary" not in root.attributes
    assert root.start_ns < root.end_ns
    assert r.path == str(out) and r.outcome.live_calls == 2 and r.trial == 1 and r.reproduces is None


def test_record_takes_the_run_id_given_and_a_random_seed_when_none_is(tmp_path: Path) -> None:
    _, r = rec(tmp_path, run_id="run-mine", seed=None)
    assert r.run_id == "run-mine" and r.header["run_id"] == "run-mine"
    assert isinstance(r.header["seed"], int) and 0 <= r.header["seed"] < 2 ** 32
    # the same seed and start give the same ids
    _, a = rec(tmp_path, name="a.jsonl")
    _, b = rec(tmp_path, name="b.jsonl")
    assert (a.run_id, a.header["trace_id"]) == (b.run_id, b.header["trace_id"])
    _, c = rec(tmp_path, name="c.jsonl", seed=4)
    assert c.header["trace_id"] != a.header["trace_id"]


def test_record_never_overwrites_unless_told(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    with pytest.raises(FileExistsError):
        rec(tmp_path)
    rec(tmp_path, overwrite=True, run_id="run-again")
    assert read_trace(str(out)).header["run_id"] == "run-again"


def test_an_agent_that_raises_is_recorded_as_a_failed_root_with_its_message(tmp_path: Path) -> None:
    def broken(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": "A1"})
        raise StopIteration()

    out, r = rec(tmp_path, Desk(run=broken))
    assert isinstance(r.error, StopIteration) and r.output is None
    root = next(s for s in read_trace(str(out)).spans if s.parent_id is None)
    assert root.status is Status.ERROR and root.error_type == "StopIteration"
    assert root.data["output"] == {"error_type": "StopIteration", "message": "StopIteration"}

    def raising(ctx: Any, input: Any) -> Any:
        raise ValueError("bad id ada@example.com")

    out, r = rec(tmp_path, Desk(run=raising), name="b.jsonl")
    root = next(s for s in read_trace(str(out)).spans if s.parent_id is None)
    assert root.data["output"]["error_type"] == "ValueError"
    assert root.data["output"]["message"].startswith("bad id ") and "ada@" not in root.data["output"]["message"]


def test_an_interrupted_agent_still_writes_its_root_and_the_interrupt_goes_on(tmp_path: Path) -> None:
    def interrupted(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": "A1"})
        raise KeyboardInterrupt

    out = tmp_path / "orig.jsonl"
    with pytest.raises(KeyboardInterrupt):
        record(Desk(run=interrupted).spec, {"id": "A1"}, str(out), redactor=Redactor(KEY), timer=Ticker(), seed=1)
    trace = read_trace(str(out))
    root = next(s for s in trace.spans if s.parent_id is None)
    assert root.status is Status.ERROR and root.error_type == "KeyboardInterrupt"
    assert [s.data["tool_name"] for s in trace.spans if s.kind is SpanKind.TOOL] == ["get_order"]


# --- replay ------------------------------------------------------------------------------------------------------


def test_a_replay_refuses_an_unknown_mode_llm_mode_trial_count_or_a_live_model_it_lacks(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    for kw, message in [
        ({"mode": "lenient"}, "replay mode 'lenient': use one of strict, loose, fixture"),
        ({"llm": "cached"}, "LLM mode 'cached': use one of frozen, live"),
        ({"trials": 0}, "--trials must be at least 1, not 0"),
        ({"llm": "live"}, "--llm live: agent desk.py:run declares no MODEL to call"),
    ]:
        with pytest.raises(HarnessError) as info:
            rep(out, tmp_path, **kw)
        assert str(info.value) == message
        assert not (tmp_path / "replay.jsonl").exists()


def test_a_replay_is_never_written_over_its_recording(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    before = out.read_bytes()
    with pytest.raises(HarnessError) as info:
        replay(read_trace(str(out)), Desk().spec, str(out), redactor=Redactor(KEY), overwrite=True, timer=Ticker())
    assert str(info.value) == f"--out {out} is the recording being replayed; write the replay to another file"
    assert out.read_bytes() == before
    # another name for the same file is the same file
    os.link(out, tmp_path / "alias.jsonl")
    with pytest.raises(HarnessError):
        replay(read_trace(str(out)), Desk().spec, str(tmp_path / "alias.jsonl"), redactor=Redactor(KEY),
               overwrite=True, timer=Ticker())


def test_a_strict_replay_serves_reads_intercepts_writes_and_reproduces_the_path(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    agent = Desk()
    report = rep(out, tmp_path, agent)
    assert agent.calls == {"get_order": 0, "refund": 0}
    (run,) = report.runs
    assert run.status == "passed" and run.reproduces is True and run.original_failed is False
    assert report.reproduced == 1 and len(report.original_path) == 2
    assert [t for t, _ in report.original_path] == ["get_order", "refund"]
    assert run.output == {"total": 30, "note": None} and run.unconsumed == []
    trace = read_trace(str(tmp_path / "replay.jsonl"))
    h = trace.header
    orig = read_trace(str(out)).header
    assert h["record_mode"] == "strict" and h["llm_mode"] == "frozen" and h["trial"] == 1 and h["trials"] == 1
    assert h["run_id"] == f"replay-of-{orig['run_id']}" == run.run_id
    assert h["replay_of"] == {"run_id": orig["run_id"], "trace_id": read_trace(str(out)).trace_id,
                              "path": "orig.jsonl", "format": "tracetui"}
    assert h["seed"] == orig["seed"] == 3 and h["clock"] == orig["clock"] and h["input"] == orig["input"]
    for absent in ("allow_live", "accept_truncated", "volatile_args", "schema_change", "network_isolation"):
        assert absent not in h
    assert h["normalization"] == normalization_notes(Redactor(KEY), 3)
    root = next(s for s in trace.spans if s.parent_id is None)
    assert root.attributes["replay.summary"]["status"] == "passed"
    assert root.attributes["replay.summary"]["reproduces_original_path"] is True


def test_each_trial_is_a_run_of_its_own_named_for_its_number(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    seen: list[int] = []
    report = rep(out, tmp_path, trials=3, on_trial=lambda r: seen.append(r.trial))
    orig = read_trace(str(out)).header["run_id"]
    assert seen == [1, 2, 3]
    assert [r.run_id for r in report.runs] == [f"replay-{i}-of-{orig}" for i in (1, 2, 3)]
    runs = read_runs(str(tmp_path / "replay.jsonl")).runs
    assert [(t.header["trial"], t.header["trials"]) for t in runs] == [(1, 3), (2, 3), (3, 3)]
    assert len({t.header["trace_id"] for t in runs}) == 3
    assert report.reproduced == 3 and all(r.unconsumed == [] for r in report.runs)


def test_a_replay_of_a_recording_without_a_run_id_is_named_for_its_trace_id(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    trace = read_trace(str(out))
    del trace.header["run_id"]
    report = replay(trace, Desk().spec, str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker())
    assert report.runs[0].run_id == f"replay-of-{trace.trace_id}"
    trace.trace_id = None
    report = replay(trace, Desk().spec, str(tmp_path / "r2.jsonl"), redactor=Redactor(KEY), timer=Ticker(), trials=2)
    assert [r.run_id for r in report.runs] == ["replay-1-of-run", "replay-2-of-run"]


def test_a_replay_given_an_input_runs_on_it_and_a_recording_that_failed_is_the_original_failing(tmp_path: Path) -> None:
    def picky(ctx: Any, input: Any) -> Any:
        order = ctx.tool("get_order", {"id": input["id"]})
        if input.get("fail"):
            raise ValueError("no")
        return order["total"]

    out, _ = rec(tmp_path, Desk(run=picky), input={"id": "A1", "fail": True})
    report = rep(out, tmp_path, Desk(run=picky), input={"id": "A1"})
    (run,) = report.runs
    assert run.original_failed is True and run.output == 30 and run.error is None
    assert read_trace(str(tmp_path / "replay.jsonl")).header["input"] == {"id": "A1"}
    # raising where the original also failed is not a new failure
    again = rep(out, tmp_path, Desk(run=picky), name="again.jsonl").runs[0]
    assert isinstance(again.error, ValueError) and again.new_failure is False and again.status == "passed"


def test_an_unrecorded_call_that_the_agent_swallows_is_still_a_divergence(tmp_path: Path) -> None:
    def other(ctx: Any, input: Any) -> Any:
        try:
            ctx.tool("get_order", {"id": "B2"})
        except ReplayDivergence:
            return "swallowed"
        return "served"

    out, _ = rec(tmp_path)
    run = rep(out, tmp_path, Desk(run=other)).runs[0]
    assert run.output == "swallowed" and run.status == "diverged" and run.reproduces is False
    assert [d["type"] for d in run.outcome.divergences] == ["unrecorded_call"]
    assert [u["tool"] for u in run.unconsumed] == ["get_order"]  # the recorded read nobody took


def test_a_divergence_raised_by_the_agent_itself_is_reported(tmp_path: Path) -> None:
    class Mine(ReplayDivergence):
        divergence = "agent_says_so"

    def raising(ctx: Any, input: Any) -> Any:
        raise Mine("the agent gave up", span_id="s9")

    out, _ = rec(tmp_path)
    run = rep(out, tmp_path, Desk(run=raising)).runs[0]
    assert run.outcome.divergences == [{"type": "agent_says_so", "span_id": "s9", "seq": None, "tool": None,
                                        "message": "the agent gave up"}]
    assert run.status == "diverged" and run.new_failure is False


def test_a_strict_replay_refuses_other_tool_schemas_unless_accepted_and_says_so(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    changed = Desk(tool_schemas={"get_order": {"type": "object"}})
    recorded_hash = read_trace(str(out)).header["tool_schema_hash"]
    with pytest.raises(SchemaChanged):
        rep(out, tmp_path, changed)
    report = rep(out, tmp_path, changed, accept_schema_change=True)
    current = changed.spec.tool_schema_hash()
    h = read_trace(str(tmp_path / "replay.jsonl")).header
    assert h["schema_change"] == {"recorded": recorded_hash, "current": current, "accepted": True}
    note = f"tool schemas changed since the recording ({recorded_hash} -> {current})"
    assert note in report.runs[0].outcome.notes
    # loose and fixture modes replay it without being told, and say so
    loose = rep(out, tmp_path, changed, name="loose.jsonl", mode="loose")
    assert note in loose.runs[0].outcome.notes
    assert read_trace(str(tmp_path / "loose.jsonl")).header["allow_live"] is False


def test_a_recording_without_a_schema_hash_or_with_another_key_is_replayed_with_a_note(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    trace = read_trace(str(out))
    del trace.header["tool_schema_hash"]
    trace.header["redaction"] = {"key_id": "0123456789ab"}
    other = Redactor(b"another-key")
    report = replay(trace, Desk().spec, str(tmp_path / "r.jsonl"), redactor=other, timer=Ticker())
    notes = report.runs[0].outcome.notes
    assert "the recording has no tool-schema hash: staleness cannot be checked" in notes
    assert (f"the recording was redacted with key 0123456789ab, this replay uses {other.key_id}: values the agent "
            "adds itself will not match their recorded tokens") in notes
    # the same key, or a recording that does not say: no note
    trace.header["redaction"] = {"key_id": other.key_id}
    again = replay(trace, Desk().spec, str(tmp_path / "r2.jsonl"), redactor=other, timer=Ticker())
    assert not any("redacted with key" in n for n in again.runs[0].outcome.notes)
    trace.header["redaction"] = "unknown"
    again = replay(trace, Desk().spec, str(tmp_path / "r3.jsonl"), redactor=other, timer=Ticker())
    assert not any("redacted with key" in n for n in again.runs[0].outcome.notes)


def test_the_replay_header_says_what_the_caller_chose(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    rep(out, tmp_path, mode="loose", allow_live=True, accept_truncated=True, isolation="namespace",
        volatile={"refund": ["amount"], "get_order": ["id"]})
    h = read_trace(str(tmp_path / "replay.jsonl")).header
    assert h["allow_live"] is True and h["accept_truncated"] is True and h["network_isolation"] == "namespace"
    assert h["volatile_args"] == {"get_order": ["id"], "refund": ["amount"]}
    assert list(h["volatile_args"]) == ["get_order", "refund"]


def test_a_volatile_argument_is_reported_once_per_path_with_its_count(tmp_path: Path) -> None:
    def twice(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": "A1", "req": "r1"})
        ctx.tool("get_order", {"id": "A1", "req": "r2"})
        ctx.tool("refund", {"id": "A1", "amount": 30, "req": "r3"})

    def tools() -> dict[str, Any]:  # live tools that take the request id (recording: each call succeeds)
        return {"get_order": lambda id, req: {"id": id, "total": 30}, "refund": lambda id, amount, req: {"ok": True}}

    def spec() -> AgentSpec:
        return AgentSpec(ref="desk.py:run", run=twice, name="desk", tools=tools(), read_tools=frozenset({"get_order"}))

    out = tmp_path / "orig.jsonl"
    assert record(spec(), {}, str(out), redactor=Redactor(KEY), timer=Ticker(), seed=3).error is None
    run = replay(read_trace(str(out)), spec(), str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker(),
                 volatile={"get_order": ["req"], "refund": ["req"]}).runs[0]
    assert run.status == "passed" and run.error is None and run.outcome.served == 2
    assert [n for n in run.outcome.notes if n.startswith("volatile argument")] == [
        "volatile argument get_order.req ignored for matching (2 calls)",
        "volatile argument refund.req ignored for matching (1 call)",
    ]


def test_the_agents_own_volatile_args_are_used_when_the_caller_gives_none(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no pyproject.toml above tmp_path's own folder... but one may be: check the header
    out, _ = rec(tmp_path)
    rep(out, tmp_path, Desk(volatile_args={"refund": ["amount"]}))
    h = read_trace(str(tmp_path / "replay.jsonl")).header
    assert h["volatile_args"]["refund"] == ["amount"]


def test_fixture_mode_seeds_reads_and_applies_writes_and_reports_the_state(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    agent = Desk()
    report = rep(out, tmp_path, agent, mode="fixture")
    (run,) = report.runs
    assert agent.calls == {"get_order": 0, "refund": 0}
    assert run.initial_state is not None and run.final_state is not None
    assert run.unconsumed == []  # fixture mode: the store answers, nothing is left over
    summary = next(s for s in read_trace(str(tmp_path / "replay.jsonl")).spans
                   if s.parent_id is None).attributes["replay.summary"]
    assert "final_state" in summary and "changes" in summary
    assert "fixture: the agent declares no FIXTURE; writes are logged, later reads do not see them" in \
        run.outcome.notes
    # the note is given once, however many trials
    multi = rep(out, tmp_path, Desk(), name="multi.jsonl", mode="fixture", trials=2)
    assert multi.runs[1].outcome.notes.count(
        "fixture: the agent declares no FIXTURE; writes are logged, later reads do not see them") == 1


class Store:
    """A fixture store that applies writes and takes a seed file."""

    applies_writes = True

    def __init__(self) -> None:
        self.seeded: list[tuple[str, Any, Any]] = []
        self.loaded: Any = None

    def seed(self, tool: str, arguments: Any, output: Any) -> None:
        self.seeded.append((tool, arguments, output))

    def load(self, seed: Any) -> None:
        self.loaded = seed

    def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
        return {"id": arguments.get("id"), "total": 30} if not write else {"ok": True}

    def state(self) -> Any:
        return {"seeded": len(self.seeded), "loaded": self.loaded}


def test_fixture_mode_seeds_the_agents_store_with_recorded_reads_only_then_the_users_seed(tmp_path: Path) -> None:
    def reads(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": "A1"})
        ctx.retrieve("kb", "refunds", top_k=1)
        ctx.tool("refund", {"id": "A1", "amount": 1})
        try:
            ctx.tool("get_order", {"id": "gone"})
        except Exception:  # noqa: BLE001 - the live tool fails: a recorded error
            pass

    calls: list[Any] = []

    def get_order(id: str) -> Any:
        if id == "gone":
            raise KeyError(id)
        return {"id": id, "total": 30}

    def kb(query: str, **kw: Any) -> Any:
        return [{"id": "d1", "text": "refund policy"}]

    spec = AgentSpec(ref="desk.py:run", run=reads, name="desk",
                     tools={"get_order": get_order, "refund": lambda id, amount: calls.append(id)},
                     read_tools=frozenset({"get_order"}), retrievers={"kb": kb})
    out = tmp_path / "orig.jsonl"
    record(spec, {}, str(out), redactor=Redactor(KEY), timer=Ticker(), seed=1)
    stores: list[Store] = []

    def factory() -> Store:
        stores.append(Store())
        return stores[-1]

    fixed = AgentSpec(ref="desk.py:run", run=lambda ctx, input: None, name="desk", tools=spec.tools,
                      read_tools=spec.read_tools, retrievers=spec.retrievers, fixture_factory=factory)
    report = replay(read_trace(str(out)), fixed, str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker(),
                    mode="fixture", seed_state={"orders": []})
    (store,) = stores
    assert store.seeded == [("get_order", {"id": "A1"}, {"id": "A1", "total": 30}),
                            ("retrieval:kb", {"query": "refunds", "top_k": 1}, [{"id": "d1", "text": "refund policy"}])]
    assert store.loaded == {"orders": []}
    assert report.runs[0].initial_state == {"seeded": 2, "loaded": {"orders": []}}
    assert not any("declares no FIXTURE" in n for n in report.runs[0].outcome.notes)


def test_a_seed_file_for_a_fixture_that_cannot_load_one_is_refused(tmp_path: Path) -> None:
    class NoLoad:
        def seed(self, tool: str, arguments: Any, output: Any) -> None:
            pass

        def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
            return None

    out, _ = rec(tmp_path)
    with pytest.raises(HarnessError) as info:
        rep(out, tmp_path, Desk(fixture_factory=NoLoad), mode="fixture", seed_state={"a": 1})
    assert str(info.value) == "the fixture of desk.py:run has no load(seed): it cannot take a seed file"
    # the default store takes a seed
    report = rep(out, tmp_path, name="ok.jsonl", mode="fixture", seed_state={"get_order": []})
    assert report.runs[0].initial_state is not None


def test_a_truncated_recorded_read_is_not_seeded_into_the_fixture() -> None:
    from tracetui.core.harness.run import _seed_fixture  # no public path: replay's store is not returned

    def span(seq: int, tool: str, output: Any, status: Status = Status.OK, **data: Any) -> Span:
        body = {"tool_name": tool, "arguments": {"n": seq}, "output": output, "effect": "read", **data}
        return Span(f"s{seq}", "root", seq, SpanKind.TOOL, f"execute_tool {tool}", T0, T0 + 1, status,
                    "KeyError" if status is Status.ERROR else None, body, {})

    trace = Trace([root_span(input=1), span(1, "get", "whole"), span(2, "get", "cut", output_truncated=True),
                   span(3, "get", None, Status.ERROR), span(4, "put", "w"), span(5, "get", "cut?", output_truncated="yes")])
    spec = AgentSpec(ref="a.py:run", run=len, name="a", read_tools=frozenset({"get"}), fixture_factory=Store)
    store = _seed_fixture(spec, Cassette.from_trace(trace, {}, lambda v, **kw: v), None)
    assert store.seeded == [("get", {"n": 1}, "whole"), ("get", {"n": 5}, "cut?")]
    assert isinstance(_seed_fixture(AgentSpec(ref="a.py:run", run=len, name="a"),
                                    Cassette.from_trace(trace, {}, lambda v, **kw: v), None), RecordedReadsFixture)


def test_the_agent_is_given_its_input_and_run_id_on_ctx(tmp_path: Path) -> None:
    def echo(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": input["id"]})
        return {"input": ctx.input, "run_id": ctx.run_id}

    out, r = rec(tmp_path, Desk(run=echo), input={"id": "A1"})
    assert r.output == {"input": {"id": "A1"}, "run_id": r.run_id}
    run = rep(out, tmp_path, Desk(run=echo)).runs[0]
    assert run.output == {"input": {"id": "A1"}, "run_id": run.run_id}


def test_every_span_of_a_recorded_run_carries_its_trace_id_and_the_injected_clock(tmp_path: Path) -> None:
    out, r = rec(tmp_path)
    trace = read_trace(str(out))
    root = next(s for s in trace.spans if s.parent_id is None)
    assert root.seq == 0 and trace.spans[0] is root  # the root started first
    assert {s.trace_id for s in trace.spans} == {r.header["trace_id"]}
    ticker_start = Ticker().now
    assert all(ticker_start < s.start_ns < ticker_start + 10**9 for s in trace.spans)  # the timer given, not now
    rep(out, tmp_path)
    replayed = read_trace(str(tmp_path / "replay.jsonl"))
    assert {s.trace_id for s in replayed.spans} == {replayed.header["trace_id"]}
    assert next(s for s in replayed.spans if s.parent_id is None).seq == 0


def test_the_header_written_first_already_says_how_values_are_redacted(tmp_path: Path) -> None:
    out = tmp_path / "orig.jsonl"
    seen: list[Any] = []

    def peek(ctx: Any, input: Any) -> Any:
        import json

        seen.append(json.loads(out.read_text(encoding="utf-8").splitlines()[0]))
        return 1

    record(Desk(run=peek).spec, {}, str(out), redactor=Redactor(KEY), timer=Ticker(), seed=1)
    (header,) = seen
    assert header["redaction"]["key_id"] == Redactor(KEY).key_id and header["redaction"]["rules"]


def test_a_replays_network_guard_names_the_mode_it_protects(tmp_path: Path) -> None:
    import socket

    def calls_out(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": "A1"})
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=1).close()
        except Exception as exc:  # noqa: BLE001 - the guard's refusal is the value under test
            return str(exc)
        return "connected"

    out, _ = rec(tmp_path, Desk(run=lambda ctx, input: ctx.tool("get_order", {"id": "A1"})))
    run = rep(out, tmp_path, Desk(run=calls_out)).runs[0]
    assert run.output.startswith("strict replay blocked an outbound network call")
    assert run.blocked and run.summary()["blocked_network"] == run.blocked


def test_a_new_failure_in_a_replay_is_in_the_summary_written_to_its_root(tmp_path: Path) -> None:
    def fails(ctx: Any, input: Any) -> Any:
        ctx.tool("get_order", {"id": "A1"})
        ctx.tool("refund", {"id": "A1", "amount": 30})
        raise ValueError("refund not confirmed")

    out, _ = rec(tmp_path)
    run = rep(out, tmp_path, Desk(run=fails)).runs[0]
    assert run.new_failure is True and run.status == "failed"
    root = next(s for s in read_trace(str(tmp_path / "replay.jsonl")).spans if s.parent_id is None)
    summary = root.attributes["replay.summary"]
    assert summary["error"] == "ValueError: refund not confirmed"
    assert summary["status"] == "failed" and summary["new_failure"] is True and summary["failed"] is True


def test_a_replay_never_overwrites_its_output_unless_told(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    (tmp_path / "replay.jsonl").write_text("kept", encoding="utf-8")
    with pytest.raises(FileExistsError):
        rep(out, tmp_path)
    assert (tmp_path / "replay.jsonl").read_text(encoding="utf-8") == "kept"
    assert rep(out, tmp_path, overwrite=True).runs[0].status == "passed"
    assert read_trace(str(tmp_path / "replay.jsonl")).header["record_mode"] == "strict"


def test_a_schema_refusal_names_both_hashes(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    changed = Desk(tool_schemas={"get_order": {"type": "object"}})
    with pytest.raises(SchemaChanged) as info:
        rep(out, tmp_path, changed)
    assert info.value.recorded == read_trace(str(out)).header["tool_schema_hash"]
    assert info.value.current == changed.spec.tool_schema_hash()


def test_a_recording_whose_seed_is_not_a_number_is_replayed_with_seed_0(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    trace = read_trace(str(out))
    trace.header["seed"] = "seven"
    replay(trace, Desk().spec, str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker())
    assert read_trace(str(tmp_path / "r.jsonl")).header["seed"] == 0


def test_the_root_span_is_written_with_seq_0_in_the_file(tmp_path: Path) -> None:
    import json

    out, _ = rec(tmp_path)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    (root,) = [o for o in lines if o.get("parent_id") is None and o.get("span_id")]
    assert root["seq"] == 0  # the root started first (a null seq would leave the order to the reader)


# --- round 9a: what replay's last survivors showed unpinned -------------------------------------------------------


def test_a_foreign_recording_is_redacted_before_it_is_matched_and_its_unheld_llm_fields_are_noted(
        tmp_path: Path) -> None:
    """A foreign recording holds raw values: its spans are redacted as the live side's are before matching (a
    secret in a recorded argument still matches the agent's call), and the LLM request fields it does not hold
    are named in the run's notes with the recording's format."""
    messages = [{"role": "user", "content": "greet the customer"}]
    root = Span("r", None, 0, SpanKind.AGENT, "invoke_agent desk", T0, T0 + 10, Status.OK, None,
                {"input": {"email": "ada@example.com"}}, {})
    lookup = Span("t", "r", 1, SpanKind.TOOL, "execute_tool lookup", T0 + 1, T0 + 2, Status.OK, None,
                  {"tool_name": "lookup", "arguments": {"email": "ada@example.com"}, "output": {"name": "Ada"}}, {})
    chat = Span("l", "r", 2, SpanKind.LLM, "chat", T0 + 3, T0 + 4, Status.OK, None,
                {"messages": messages, "output": {"role": "assistant", "content": "hello Ada"}}, {})
    recording = Trace([root, lookup, chat], header={}, path="", format="otel-sdk-json")

    def greet(ctx: Any, input: Any) -> Any:
        customer = ctx.tool("lookup", {"email": input["email"]})
        return [customer, ctx.llm(messages, model="toy-1", temperature=0)["content"]]

    spec = AgentSpec(ref="desk.py:run", run=greet, name="desk", tools={"lookup": lambda email: {"name": "live"}},
                     read_tools=frozenset({"lookup"}))
    run = replay(recording, spec, str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker()).runs[0]
    assert run.outcome.divergences == [] and run.status == "passed"
    assert run.output == [{"name": "Ada"}, "hello Ada"] and run.unconsumed == []
    assert ("LLM request fields the recording (otel-sdk-json) does not hold, not compared: model (1 call), "
            "params.temperature (1 call)") in run.outcome.notes


def test_a_recording_that_ends_mid_call_is_replayed_with_a_note_naming_the_unfinished_span(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    whole = rep(out, tmp_path, name="whole.jsonl").runs[0]
    assert not any(n is None or n.startswith("the recording is incomplete") for n in whole.outcome.notes)
    trace = read_trace(str(out))
    cut = next(s for s in trace.spans if s.kind is SpanKind.TOOL and s.data["tool_name"] == "refund")
    cut.end_ns = None
    del cut.data["output"]
    run = replay(trace, Desk().spec, str(tmp_path / "cut.jsonl"), redactor=Redactor(KEY), timer=Ticker()).runs[0]
    (note,) = [n for n in run.outcome.notes if n.startswith("the recording is incomplete: ")]
    assert f"span {cut.span_id} (execute_tool refund)" in note


def test_a_replays_ids_come_from_the_recorded_seed_the_trial_and_its_start(tmp_path: Path) -> None:
    """Replaying the same recording with the same clock writes the same ids; every trace id is 32 hex digits."""
    out, _ = rec(tmp_path)
    first = rep(out, tmp_path, name="a.jsonl", trials=12)
    again = rep(out, tmp_path, name="b.jsonl", trials=12)
    ids = [r.header["trace_id"] for r in first.runs]
    assert ids == [r.header["trace_id"] for r in again.runs] and len(set(ids)) == 12
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids), ids


def test_a_single_replay_of_a_recording_without_run_or_trace_id_is_named_replay_of_run(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    trace = read_trace(str(out))
    del trace.header["run_id"]
    trace.trace_id = None
    report = replay(trace, Desk().spec, str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker())
    assert report.runs[0].run_id == "replay-of-run"


def test_a_replay_outside_fixture_mode_has_no_fixture_state_and_its_result_names_its_file(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    (run,) = rep(out, tmp_path).runs
    assert run.initial_state is None and run.final_state is None
    assert run.path == str(tmp_path / "replay.jsonl")


def test_an_agents_fixture_that_does_not_say_whether_it_applies_writes_is_taken_to_apply_them(tmp_path: Path) -> None:
    """``applies_writes`` is not part of the FIXTURE protocol: only the default store (no FIXTURE) is noted."""
    class Plain:
        def seed(self, tool: str, arguments: Any, output: Any) -> None:
            pass

        def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
            return {"ok": True} if write else {"id": arguments["id"], "total": 30}

        def state(self) -> Any:
            return {}

    out, _ = rec(tmp_path)
    run = rep(out, tmp_path, Desk(fixture_factory=Plain), mode="fixture").runs[0]
    assert run.status == "passed"
    assert not any("declares no FIXTURE" in n for n in run.outcome.notes)


def test_every_span_of_a_replay_has_the_injected_clock(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    rep(out, tmp_path)
    start = Ticker().now
    spans = read_trace(str(tmp_path / "replay.jsonl")).spans
    assert len(spans) == 3
    assert all(start < s.start_ns <= s.end_ns < start + 10**9 for s in spans)


def test_a_recording_held_in_memory_is_replayed_with_no_path_named(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    trace = read_trace(str(out))
    trace.path = ""
    replay(trace, Desk().spec, str(tmp_path / "r.jsonl"), redactor=Redactor(KEY), timer=Ticker())
    assert read_trace(str(tmp_path / "r.jsonl")).header["replay_of"]["path"] == ""


def test_the_replay_header_written_first_already_says_how_values_are_redacted(tmp_path: Path) -> None:
    import json

    target = tmp_path / "replay.jsonl"
    seen: list[Any] = []

    def peek(ctx: Any, input: Any) -> Any:
        seen.append(json.loads(target.read_text(encoding="utf-8").splitlines()[0]))
        return desk(ctx, input)

    out, _ = rec(tmp_path)
    rep(out, tmp_path, Desk(run=peek))
    (header,) = seen
    assert header["redaction"]["key_id"] == Redactor(KEY).key_id and header["redaction"]["rules"]


def test_the_unconsumed_reads_are_the_recorded_calls_the_replaying_agent_declares_reads(tmp_path: Path) -> None:
    """A read is a tool on the agent's read list (practice.md): not what the recording says its effect was."""
    out, _ = rec(tmp_path)
    swapped = Desk(run=lambda ctx, input: None)
    swapped.spec = dataclasses.replace(swapped.spec, read_tools=frozenset({"refund"}))
    run = rep(out, tmp_path, swapped, accept_schema_change=True).runs[0]
    assert [u["tool"] for u in run.unconsumed] == ["refund"]
    assert run.summary()["unconsumed"] == run.unconsumed


def test_each_trials_summary_on_its_root_names_its_run_and_trial(tmp_path: Path) -> None:
    out, _ = rec(tmp_path)
    report = rep(out, tmp_path, trials=2)
    runs = read_runs(str(tmp_path / "replay.jsonl")).runs
    summaries = [next(s for s in t.spans if s.parent_id is None).attributes["replay.summary"] for t in runs]
    assert [(s["run_id"], s["trial"]) for s in summaries] == [(r.run_id, r.trial) for r in report.runs]
    assert [r.trial for r in report.runs] == [1, 2]
