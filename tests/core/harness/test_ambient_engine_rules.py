"""The rules of core/harness/ambient.py that show in the run itself: what a session hands the engine its tools and
model calls go through (the run's clock, seed, trace id, timer, LLM mode, the live rule, truncated responses), what
the trace file holds while the block runs and when it ends (the start header, the root span, the run report), and
what a replay takes from the project and the recording (volatile arguments, a foreign recording's redaction, an
incomplete recording, changed tool schemas). Sessions are built and opened in the test (a temporary folder, no
agent, no network); a recording read back is changed in memory where a case needs one."""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

import tracetui
from tracetui.core.errors import LiveCallBlocked, RecordingUnservable, ReplayDivergence
from tracetui.core.harness import ambient
from tracetui.core.harness.ambient import HarnessSession, record_session
from tracetui.core.harness.steps import run_steps
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers import read_trace

KEY_TEXT = "ambient-engine-rules-key-0123456789"
CALLS: list[str] = []
"""What the live tools below were called with, in order (cleared for each test)."""


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY_TEXT)
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    monkeypatch.setattr(ambient, "_DECLARED_READS", set())
    monkeypatch.setattr(sys, "argv", ["/somewhere/app.py"])
    CALLS.clear()


@tracetui.tool
def look_up_order(order_id: str, request_id: str | None = None, meta: Any = None) -> dict[str, str]:
    """A read when a session names it one (read_tools)."""
    CALLS.append(f"look_up_order {order_id}")
    return {"order_id": order_id, "status": "live"}


@tracetui.tool
def search_docs(query: str) -> list[str]:
    """A write unless a server hints it is a read."""
    CALLS.append(f"search_docs {query}")
    return ["live doc"]


def _lines(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _root(path: str) -> Span:
    return next(s for s in read_trace(path).spans if s.parent_id is None)


def _recording(path: str = "rec.jsonl", *orders: str) -> Trace:
    """A recorded run with ``look_up_order`` a read, called once per order (``A1`` when none given), read back."""
    with record_session(path, read_tools=["look_up_order"], seed=7, input={"q": 1}) as s:
        for order in orders or ("A1",):
            look_up_order(order)
        s.output = "ok"
    CALLS.clear()
    return read_trace(path)


def _llm(session: HarnessSession, answer: str, params: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """One model call through the session's engine, as the model-client transports make it."""
    assert session.engine is not None
    return run_steps(session.engine.llm_steps([{"role": "user", "content": "hi"}], "m1", None, None,
                                              params or {}, live=lambda: {"role": "assistant", "content": answer}))


# ----------------------------------------------------------------------------- what the engine is given


def test_the_engine_integrations_call_gives_the_runs_clock() -> None:
    with HarnessSession("record", "o.jsonl", clock="2026-01-02T03:04:05+00:00") as s:
        assert s.engine is not None and s.engine.clock == s.now()
        s.output = "ok"


def test_a_different_seed_gives_different_ids_and_randomness() -> None:
    runs = []
    for seed in (5, 6):
        with record_session(f"r{seed}.jsonl", seed=seed) as s:
            runs.append((s.new_id(), s.random.random()))
            s.output = "ok"
    assert runs[0][0] != runs[1][0] and runs[0][1] != runs[1][1]


def test_the_header_and_every_span_carry_the_sessions_trace_id() -> None:
    with record_session("o.jsonl", read_tools=["look_up_order"]) as s:
        look_up_order("A1")
        s.output = "ok"
    header, *spans = _lines("o.jsonl")
    assert header["trace_id"] == s.trace_id and len(spans) == 2
    assert all(span["trace_id"] == s.trace_id for span in spans)


def test_span_times_come_from_the_sessions_timer_and_the_root_spans_the_block() -> None:
    ticks = iter(range(1_000, 100_000, 1_000))
    with HarnessSession("record", "o.jsonl", read_tools=["look_up_order"], timer=lambda: next(ticks)) as s:
        inside = next(ticks)
        look_up_order("A1")
        s.output = "ok"
    spans = read_trace("o.jsonl").spans
    root = next(x for x in spans if x.parent_id is None)
    tool = next(x for x in spans if x.kind is SpanKind.TOOL)
    assert root.start_ns is not None and 1_000 <= root.start_ns < inside  # the block's start
    assert inside < tool.start_ns < tool.end_ns < root.end_ns < 100_000


def test_a_frozen_replay_serves_the_recorded_model_answer_and_a_live_one_calls_the_model() -> None:
    with record_session("rec.jsonl") as s:
        _llm(s, "recorded")
        s.output = "ok"
    with HarnessSession("strict", "frozen.jsonl", recording=read_trace("rec.jsonl")) as frozen:
        raw, data = _llm(frozen, "fresh")
        frozen.output = "ok"
    assert raw is None and data["output"] == {"role": "assistant", "content": "recorded"}
    assert frozen.result is not None and frozen.result.outcome.llm_served == 1
    assert frozen.result.outcome.model_calls == 0
    with HarnessSession("strict", "live.jsonl", recording=read_trace("rec.jsonl"), llm="live") as live:
        raw, data = _llm(live, "fresh")
        live.output = "ok"
    assert raw == {"role": "assistant", "content": "fresh"} and data["output"] == raw
    assert live.result is not None and live.result.outcome.model_calls == 1 and live.result.outcome.llm_served == 0


def test_a_loose_replay_allowed_live_sends_a_read_miss_live_and_a_hinted_read_never() -> None:
    rec = _recording()
    with HarnessSession("loose", "o.jsonl", recording=rec, allow_live=True) as s:
        assert look_up_order("B2") == {"order_id": "B2", "status": "live"}  # not recorded: the live tool
        s.hinted_read("search_docs", "the docs server")
        with pytest.raises(ReplayDivergence):
            search_docs("refunds")  # a hinted read, not recorded: never sent live
        s.output = "ok"
    assert CALLS == ["look_up_order B2"]
    assert s.result is not None and s.result.outcome.live_calls == 1


def test_a_truncated_recorded_answer_is_served_only_when_asked() -> None:
    rec = _recording()
    rec.spans = [dataclasses.replace(x, data={**x.data, "output_truncated": True}) if x.kind is SpanKind.TOOL else x
                 for x in rec.spans]
    with pytest.raises(RecordingUnservable):
        with HarnessSession("strict", "refused.jsonl", recording=rec):
            look_up_order("A1")
    with HarnessSession("strict", "served.jsonl", recording=rec, accept_truncated=True) as s:
        assert look_up_order("A1") == {"order_id": "A1", "status": "live"}  # the recorded answer
        s.output = "ok"
    assert CALLS == [] and s.result is not None and s.result.outcome.served == 1


def test_a_replays_guard_names_its_mode_in_what_it_refuses() -> None:
    rec = _recording()
    s = HarnessSession("loose", "o.jsonl", recording=rec)
    with pytest.raises(LiveCallBlocked) as e:
        with s, socket.socket() as sock:
            sock.connect(("127.0.0.1", 9))
    assert str(e.value).startswith("loose replay blocked an outbound network call (connect 127.0.0.1:9)")
    assert s.result is not None and s.result.blocked == ["connect 127.0.0.1:9"]


# ----------------------------------------------------------------------------- the file as it runs and as it ends


def test_while_the_block_runs_the_file_names_its_key_and_no_tool_schema_hash_yet() -> None:
    with record_session("o.jsonl", read_tools=["look_up_order"]) as s:
        look_up_order("A1")
        start = _lines("o.jsonl")[0]  # what a recorder stopped here leaves
        s.output = "ok"
    assert start["record_mode"] == "record" and start["redaction"]["key_id"] == s.redactor.key_id
    assert start["redaction"]["rules"] == list(s.redactor.rules)
    assert "tool_schema_hash" not in start  # known when the run ends: the tools are met as they are called
    assert "tool_schema_hash" in _lines("o.jsonl")[0]


def test_the_normalisation_notes_name_the_runs_seed() -> None:
    with record_session("o.jsonl", seed=4242) as s:
        s.output = "ok"
    notes = _lines("o.jsonl")[0]["normalization"]
    assert "randomness: ctx.new_id() and ctx.random seeded with 4242 (header seed)" in notes


def test_the_root_span_holds_the_runs_input_and_output_redacted() -> None:
    with record_session("o.jsonl", input={"from": "ada@example.com"}) as s:
        s.output = {"to": "ada@example.com"}
    root = _root("o.jsonl")
    token = s.redactor.text("ada@example.com")
    assert token != "ada@example.com"
    assert root.data["input"] == {"from": token} == read_trace("o.jsonl").header["input"]
    assert root.data["output"] == {"to": token}


def test_a_replays_root_span_holds_its_run_report_and_a_recordings_none() -> None:
    rec = _recording()
    assert "replay.summary" not in _root("rec.jsonl").attributes
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        s.output = look_up_order("A1")
    report = _root("o.jsonl").attributes["replay.summary"]
    assert s.result is not None
    assert report == json.loads(json.dumps(s.result.summary()))
    assert report["run_id"] == s.run_id and report["mode"] == "strict" and report["reproduces_original_path"] is True


# ----------------------------------------------------------------------------- what a replay takes in


def test_a_recording_held_in_memory_is_replayed_with_an_empty_path() -> None:
    rec = _recording()
    rec.path = ""
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        s.output = "ok"
    assert _lines("o.jsonl")[0]["replay_of"]["path"] == ""


def test_the_projects_volatile_arguments_are_ignored_for_matching_named_in_the_header_and_noted() -> None:
    with record_session("rec.jsonl", read_tools=["look_up_order"]) as s:
        look_up_order("A1", request_id="r-1", meta={"n": 1})
        look_up_order("A2", request_id="r-2")
        s.output = "ok"
    CALLS.clear()
    with HarnessSession("strict", "plain.jsonl", recording=read_trace("rec.jsonl")) as plain:
        plain.output = "ok"
    assert "volatile_args" not in _lines("plain.jsonl")[0]  # none configured: none named
    Path("pyproject.toml").write_text('[tool.tracetui.replay]\nvolatile = {look_up_order = ["request_id", "meta"]}\n')
    with HarnessSession("strict", "o.jsonl", recording=read_trace("rec.jsonl")) as s:
        look_up_order("A1", request_id="r-9", meta={"n": 2})
        look_up_order("A2", request_id="r-8")
        s.output = "ok"
    assert CALLS == [] and s.result is not None and s.result.outcome.served == 2
    assert _lines("o.jsonl")[0]["volatile_args"] == {"look_up_order": ["request_id", "meta"]}
    notes = s.result.outcome.notes
    assert "volatile argument look_up_order.meta ignored for matching (1 call)" in notes
    assert "volatile argument look_up_order.request_id ignored for matching (2 calls)" in notes


def _foreign() -> Trace:
    """Another tool's export (no header): a tool call and a model call with an e-mail address in the clear, the
    model call recorded without its params."""
    def span(span_id: str, seq: int, kind: SpanKind, name: str, data: dict[str, Any]) -> Span:
        return Span(span_id, "root", seq, kind, name, 1_000 + seq, 2_000 + seq, Status.OK, None, data)

    return Trace([
        Span("root", None, 0, SpanKind.AGENT, "invoke_agent app", 1_000, 9_000, Status.OK),
        span("t1", 1, SpanKind.TOOL, "execute_tool look_up_order",
             {"tool_name": "look_up_order", "arguments": {"order_id": "ada@example.com"},
              "output": {"owner": "ada@example.com"}}),
        span("t2", 2, SpanKind.TOOL, "execute_tool search_docs",
             {"tool_name": "search_docs", "arguments": {"query": "refunds"}, "output": ["a doc"]}),
        span("l1", 3, SpanKind.LLM, "chat m1",
             {"model": "m1", "messages": [{"role": "user", "content": "hi"}],
              "output": {"role": "assistant", "content": "recorded"}}),
    ], header={}, path="export.json", format="otlp-json", trace_id="abc")


def test_a_foreign_recording_is_redacted_before_it_is_matched_or_served() -> None:
    with HarnessSession("strict", "o.jsonl", recording=_foreign(), read_tools=["look_up_order"]) as s:
        served = look_up_order("ada@example.com")
        s.output = "ok"
    assert CALLS == [] and served == {"owner": s.redactor.text("ada@example.com")}


def test_a_foreign_recordings_unchecked_model_fields_are_noted_with_its_format() -> None:
    with HarnessSession("strict", "o.jsonl", recording=_foreign()) as s:
        _raw, data = _llm(s, "fresh", {"temperature": 0})
        s.output = "ok"
    assert data["output"] == {"role": "assistant", "content": "recorded"}
    assert s.result is not None and ("LLM request fields the recording (otlp-json) does not hold, not compared: "
                                     "params.temperature (1 call)") in s.result.outcome.notes


def test_the_unconsumed_reads_are_the_replays_reads_not_the_calls_a_recording_left_unmarked() -> None:
    with HarnessSession("strict", "o.jsonl", recording=_foreign(), read_tools=["look_up_order"]) as s:
        s.output = "ok"
    assert s.result is not None and [u["tool"] for u in s.result.unconsumed] == ["look_up_order"]


def test_a_recording_cut_off_mid_run_is_replayed_with_a_note_saying_so() -> None:
    rec = _recording()
    rec.spans = [x for x in rec.spans if x.parent_id is not None]  # the recorder stopped before the root span
    s = HarnessSession("strict", "o.jsonl", recording=rec)
    assert ("the recording is incomplete: the recording has no root span: its run did not end (the recorder was "
            "stopped mid-run)") in s.notes


def test_tool_schemas_that_changed_since_the_recording_are_noted_by_name() -> None:
    rec = _recording()
    rec.header["tool_schemas"] = {"alpha": "0" * 16, "beta": "1" * 16, "gamma": "2" * 16}
    with HarnessSession("strict", "o.jsonl", recording=rec) as s:
        for name in ("gamma", "alpha", "beta", "delta"):
            s.saw_tool(name, {"type": "object", "title": name})
        s.output = "ok"
    assert s.result is not None
    assert "tool schemas differ from the recording's: alpha, beta, gamma" in s.result.outcome.notes


def test_a_run_that_met_many_tools_keeps_their_schemas_in_the_header_written_when_it_ends() -> None:
    """Sixty tools' schemas outgrow the room the start header keeps for the end-of-run fields: the header the file
    ends with still holds every field the run's result claims, and a replay of it notes the one schema that
    changed (before, the file kept its start header: no ``tool_schema_hash``, changed schemas never noted)."""
    names = [f"tool_{i:02d}" for i in range(60)]
    with record_session("rec.jsonl", read_tools=["look_up_order"]) as s:
        for name in names:
            s.saw_tool(name, {"type": "object", "title": name})
        look_up_order("A1")
        s.output = "ok"
    assert s.result is not None
    header = read_trace("rec.jsonl").header
    for field in ("tool_schema_hash", "tool_schemas", "read_tools", "redaction"):
        assert header[field] == s.result.header[field], field
    assert sorted(header["tool_schemas"]) == ["look_up_order", *names]
    CALLS.clear()
    rec = read_trace("rec.jsonl")
    with HarnessSession("strict", "o.jsonl", recording=rec) as r:
        for name in names:
            schema = {"type": "object", "title": name}
            r.saw_tool(name, {**schema, "required": ["q"]} if name == "tool_17" else schema)
        look_up_order("A1")
        r.output = "ok"
    assert r.result is not None
    assert "tool schemas differ from the recording's: tool_17" in r.result.outcome.notes
    assert CALLS == []  # the read served from the recording
