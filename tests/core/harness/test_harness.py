"""Record and replay with the toy bank agent (tests/data/harness/bank_agent.py).

Every replay test counts the agent's live calls and asserts zero where the mode forbids them.
"""

from __future__ import annotations

import socket
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from builders import Ticker
from tracetui.core.diff import diff_traces
from tracetui.core.errors import InputMismatch, RecordingExhausted, SchemaChanged, UnrecordedCall
from tracetui.core.harness import load_agent, record, replay
from tracetui.core.harness.redact import Redactor
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers import read_runs, read_trace

AGENT = Path(__file__).resolve().parents[2] / "data" / "harness" / "bank_agent.py"
KEY = b"test-project-key"
INPUT = {"email": "ada.lovelace@example.com", "amount": 120}



@pytest.fixture()
def bank() -> Any:
    spec = load_agent(f"{AGENT}:run")
    module = spec.run.__globals__
    module["reset"]()
    return spec


def live(spec: Any) -> Any:
    return spec.run.__globals__["LIVE_CALLS"]


def rec(spec: Any, tmp_path: Path, value: Any = None, name: str = "orig.jsonl") -> tuple[Path, Any]:
    out = tmp_path / name
    result = record(spec, INPUT if value is None else value, str(out), redactor=Redactor(KEY, sensitive_fields=spec.sensitive_fields),
                    clock="2026-03-02T09:30:00", timezone="America/New_York", seed=42, timer=Ticker())
    return out, result


def rep(spec: Any, recording: Path, tmp_path: Path, name: str = "replay.jsonl", **kw: Any) -> Any:
    return replay(read_trace(recording), spec, str(tmp_path / name),
                  redactor=Redactor(KEY, sensitive_fields=spec.sensitive_fields), timer=Ticker(), **kw)


def test_record_writes_header_first_and_every_call_whole(bank: Any, tmp_path: Path) -> None:
    out, result = rec(bank, tmp_path)
    assert result.error is None
    assert live(bank)["transfer"] == 1 and live(bank)["model"] == 1
    lines = out.read_bytes().splitlines()
    header = orjson.loads(lines[0])
    assert header["schema"] == "tracetui/1"
    assert header["clock"] == {"now": "2026-03-02T09:30:00-05:00", "timezone": "America/New_York"}
    assert header["model"] == {"id": "toy-1", "version": "toy-1-2026", "provider": "toy"}
    assert header["prompt_versions"] == {"bank.system": "v1"} and len(header["prompt_hash"]) == 16
    assert header["tool_schema_hash"] == bank.tool_schema_hash()
    assert header["read_tools"] == ["get_balance", "lookup_customer", "slow_report"]
    assert header["normalization"] and header["seed"] == 42
    trace = read_trace(out)
    assert not trace.issues
    tools = [s for s in trace.spans if s.kind is SpanKind.TOOL]
    assert [s.data["tool_name"] for s in tools] == ["lookup_customer", "get_balance", "transfer", "get_balance"]
    assert [s.data["effect"] for s in tools] == ["read", "read", "write", "read"]
    assert tools[1].data["output"] == {"account": "A1", "balance": 500}
    assert tools[3].data["output"] == {"account": "A1", "balance": 380}
    llm = next(s for s in trace.spans if s.kind is SpanKind.LLM)
    assert llm.data["prompt_version"] == "v1" and llm.data["params"] == {"temperature": 0}
    assert llm.data["messages"][0]["content"] == "You are a bank assistant. Today is 2026-03-02T09:30:00-05:00."
    retrieval = next(s for s in trace.spans if s.kind is SpanKind.RETRIEVAL)
    assert retrieval.data["index"] == "faq" and retrieval.data["top_k"] == 2 and len(retrieval.data["documents"]) == 2
    root = next(s for s in trace.spans if s.parent_id is None)
    assert root.kind is SpanKind.AGENT and root.data["output"]["after"] == 380


def test_no_secret_reaches_the_file_and_the_header_lists_rules_fired(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    raw = out.read_bytes()
    for secret in (b"ada.lovelace@example.com", b"4111 1111 1111 1111", b"+44 7911 123456",
                   b"sk-proj-Abc123Def456Ghi789Jkl012Mno345", b"8841"):
        assert secret not in raw
    fired = orjson.loads(raw.splitlines()[0])["redaction"]["fired"]
    assert {"email", "card", "phone", "api_key"} <= set(fired)
    # The pin lookup_customer declares sensitive: "pin" is also a secret field name everywhere now
    # (docs/redaction.md), and the secret-field rule takes it first.
    assert fired.get("secret_field", 0) >= 1 and "sensitive_field" not in fired
    # The same value is the same token everywhere: the input's email and the tool output's email.
    trace = read_trace(out)
    token = trace.header["input"]["email"]
    assert token.startswith("<EMAIL_")
    lookup = next(s for s in trace.spans if s.data.get("tool_name") == "lookup_customer")
    assert lookup.data["arguments"]["email"] == token and lookup.data["output"]["email"] == token


def test_strict_replay_serves_reads_in_call_order_and_intercepts_writes(bank: Any, tmp_path: Path) -> None:
    out, recorded = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    report = rep(bank, out, tmp_path)
    (run,) = report.runs
    assert sum(live(bank).values()) == 0  # no tool, retriever or model reached
    assert run.error is None and not run.diverged
    # A read after a write gets its second recording: 500 then 380, as the live system answered.
    assert run.output["before"] == 500 and run.output["after"] == 380
    assert run.output["key"] == recorded.output["key"]  # seeded ids
    assert run.output["now"] == "2026-03-02T09:30:00-05:00"  # frozen clock, recorded zone
    assert [w["tool"] for w in run.outcome.writes] == ["transfer"]
    assert run.outcome.writes[0]["position"] == 1 and run.outcome.writes[0]["idempotency_key"].startswith("tx-")
    assert run.unconsumed == [] and run.reproduces
    replayed = read_trace(tmp_path / "replay.jsonl")
    transfer = next(s for s in replayed.spans if s.data.get("tool_name") == "transfer")
    assert transfer.attributes["replay.intercepted"] is True and transfer.attributes["replay.simulated"] is True
    assert transfer.data["mode"] == "replay"
    assert diff_traces(read_trace(out), replayed).first is None


def test_unrecorded_call_names_the_nearest_recording_and_the_differing_argument(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    report = rep(bank, out, tmp_path, input={**INPUT, "account": "A9"})
    (run,) = report.runs
    assert sum(live(bank).values()) == 0
    assert isinstance(run.error, UnrecordedCall)
    assert run.error.tool == "get_balance"
    best = run.error.nearest[0]
    assert best["tool"] == "get_balance" and best["arguments"] == {"account": "A1"}
    assert best["differs"] == ['arguments.account: "A9" (recorded "A1")']
    assert "Nothing was sent to a live system" in str(run.error)
    replayed = read_trace(tmp_path / "replay.jsonl")
    miss = next(s for s in replayed.spans if s.error_type == "UnrecordedCall" and s.kind is SpanKind.TOOL)
    assert miss.status is Status.ERROR and miss.data["output"]["error"] == "unrecorded_call"
    assert miss.attributes["replay.divergence"] == "unrecorded_call"
    # The diff pairs it with the recorded get_balance(A1): a divergence on the miss span.
    hit = [d for d in diff_traces(read_trace(out), replayed).divergences
           if d.replay is not None and d.replay.span_id == miss.span_id]
    assert hit and hit[0].type.value in ("unrecorded_call", "args_mismatch")
    assert run.diverged and [d["type"] for d in run.outcome.divergences] == ["unrecorded_call"]


def test_one_read_more_than_recorded_is_recording_exhausted(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, input={**INPUT, "extra_read": True}).runs
    assert sum(live(bank).values()) == 0
    assert isinstance(run.error, RecordingExhausted) and not isinstance(run.error, UnrecordedCall)
    assert run.error.recorded == 2
    assert "called 3 times" in str(run.error)
    spans = read_trace(tmp_path / "replay.jsonl").spans
    assert any(s.error_type == "RecordingExhausted" for s in spans)


def test_unconsumed_recordings_are_reported(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path, {**INPUT, "extra_read": True})
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, input=INPUT).runs
    assert [(u["tool"], u["arguments"]) for u in run.unconsumed] == [("get_balance", {"account": "A1"})]
    root = next(s for s in read_trace(tmp_path / "replay.jsonl").spans if s.parent_id is None)
    assert root.attributes["replay.summary"]["unconsumed"][0]["tool"] == "get_balance"


def test_a_repeated_write_with_the_same_idempotency_key_is_reported(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, input={**INPUT, "double_transfer": True}).runs
    assert live(bank)["transfer"] == 0
    assert [w["position"] for w in run.outcome.writes] == [1, 2]
    (dup,) = run.outcome.duplicate_writes
    assert dup["tool"] == "transfer" and dup["position"] == 2 and dup["first_position"] == 1
    second = [s for s in read_trace(tmp_path / "replay.jsonl").spans if s.data.get("tool_name") == "transfer"][1]
    assert second.attributes["replay.duplicate_write_of"] == 1
    # The second transfer has no recording of its own: matched as reads are, it exhausts the recording
    # (recorded 1, requested 2) instead of getting a simulated success.
    assert second.data["output"]["error"] == "recording_exhausted" and second.data["output"]["recorded"] == 1
    assert isinstance(run.error, RecordingExhausted) and run.status == "diverged"


def test_a_recorded_failure_is_raised_again_as_its_builtin_class(bank: Any, tmp_path: Path) -> None:
    out, recorded = rec(bank, tmp_path, {**INPUT, "report": True})
    assert "timed out" in recorded.output["report"]
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path).runs
    assert live(bank)["slow_report"] == 0
    assert run.error is None and run.output["report"] == recorded.output["report"]


def test_frozen_llm_input_change_is_an_input_mismatch(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, input={**INPUT, "reply": "something else"}).runs
    assert live(bank)["model"] == 0
    assert isinstance(run.error, InputMismatch)
    assert run.error.differs and run.error.differs[0].startswith("messages[1].content")
    llm = next(s for s in read_trace(tmp_path / "replay.jsonl").spans if s.kind is SpanKind.LLM)
    assert llm.error_type == "InputMismatch" and llm.attributes["replay.divergence"] == "input_mismatch"
    first = diff_traces(read_trace(out), read_trace(tmp_path / "replay.jsonl")).first
    assert first is not None and first.type.value == "input_mismatch"


def test_live_model_trials_report_how_many_take_the_original_path(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    report = rep(bank, out, tmp_path, llm="live", trials=3)
    assert live(bank)["model"] == 3 and live(bank)["get_balance"] == 0 and live(bank)["transfer"] == 0
    assert len(report.runs) == 3 and report.reproduced == 3
    file = read_runs(str(tmp_path / "replay.jsonl"))
    assert len(file.runs) == 3
    assert [r.header["trial"] for r in file.runs] == [1, 2, 3]


def test_loose_mode_sends_misses_live_only_when_allowed(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    (closed,) = rep(bank, out, tmp_path, "closed.jsonl", mode="loose", input={**INPUT, "account": "A9"}).runs
    assert isinstance(closed.error, UnrecordedCall) and live(bank)["get_balance"] == 0
    assert closed.outcome.misses == 1
    (opened,) = rep(bank, out, tmp_path, "open.jsonl", mode="loose", allow_live=True,
                    input={**INPUT, "account": "A9"}).runs
    assert opened.error is None and live(bank)["get_balance"] == 1 and live(bank)["transfer"] == 0
    assert opened.outcome.misses == 1 and opened.outcome.live_calls == 1
    spans = read_trace(tmp_path / "open.jsonl").spans
    root = next(s for s in spans if s.parent_id is None)
    assert root.attributes["replay.summary"]["misses"] == 1
    assert any(s.attributes.get("replay.source") == "live" for s in spans)


def test_fixture_mode_applies_writes_to_state_seeded_from_reads(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, mode="fixture").runs
    assert sum(live(bank).values()) == 0
    # No FIXTURE in the bank agent: the default store logs writes; reads answer from recorded state.
    assert run.final_state["writes"] == [{"tool": "transfer", "arguments": {"src": "A1", "dst": "B2", "amount": 120}}]
    assert [c["path"] for c in run.outcome.changes] == ["state.writes[0]"]
    assert any("writes are logged" in n for n in run.outcome.notes)


def test_schema_change_is_refused_in_strict_mode_unless_accepted(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    changed = load_agent(f"{AGENT}:run")
    changed.read_tools = frozenset({"lookup_customer", "get_balance"})  # slow_report became a write
    with pytest.raises(SchemaChanged) as info:
        rep(changed, out, tmp_path)
    assert "--accept-schema-change" in str(info.value)
    assert not (tmp_path / "replay.jsonl").exists()
    report = rep(changed, out, tmp_path, accept_schema_change=True)
    assert report.runs[0].header["schema_change"]["recorded"] == bank.tool_schema_hash()


def test_the_socket_guard_blocks_connections_made_inside_a_replay(bank: Any, tmp_path: Path) -> None:
    """Connections are counted from the listening socket's backlog once each run is over (a connection the
    kernel completed waits there until accepted): no thread, no timing (issue 25 item 10)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    accepted: list[Any] = []

    def pending() -> int:
        server.setblocking(False)
        n = 0
        while True:
            try:
                accepted.append(server.accept()[0])
            except BlockingIOError:
                return n
            n += 1

    try:
        out, recorded = rec(bank, tmp_path, {**INPUT, "dial": port})
        assert recorded.error is None
        assert pending() == 1  # live recording: the connection was made
        bank.run.__globals__["reset"]()
        (run,) = rep(bank, out, tmp_path).runs
        assert pending() == 0  # nothing reached the server
        assert run.error is not None and type(run.error).__name__ == "LiveCallBlocked"
        assert run.blocked == [f"connect 127.0.0.1:{port}"]
        root = next(s for s in read_trace(tmp_path / "replay.jsonl").spans if s.parent_id is None)
        assert root.attributes["replay.summary"]["blocked_network"] == [f"connect 127.0.0.1:{port}"]
        assert sum(live(bank).values()) == 0
    finally:
        server.close()
        for conn in accepted:
            conn.close()


def test_record_never_overwrites_and_force_replaces_atomically(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    before = out.read_bytes()
    with pytest.raises(FileExistsError):
        rec(bank, tmp_path)
    assert out.read_bytes() == before
    result = record(bank, INPUT, str(out), redactor=Redactor(KEY), seed=1, overwrite=True, timer=Ticker())
    assert out.read_bytes() != before and result.header["seed"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["orig.jsonl"]  # no temp file left


def test_the_trace_is_readable_while_the_run_goes(bank: Any, tmp_path: Path) -> None:
    out = tmp_path / "live.jsonl"
    seen: list[int] = []
    original = bank.tools["transfer"]

    def spying_transfer(**kw: Any) -> Any:
        seen.append(len(read_trace(out).spans))  # the file as another process would see it now
        return original(**kw)

    bank.tools = {**bank.tools, "transfer": spying_transfer}
    record(bank, INPUT, str(out), redactor=Redactor(KEY), seed=3, timer=Ticker())
    assert seen == [2]  # lookup_customer and the first get_balance were already on disk


def test_ctx_now_is_timezone_aware_and_ids_are_seeded(bank: Any, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def agent(ctx: Any, input: Any) -> Any:
        seen["now"] = ctx.now()
        seen["ids"] = [ctx.new_id(), ctx.new_id("x-")]
        return None

    bank.run = agent
    rec(bank, tmp_path)
    assert isinstance(seen["now"], datetime) and str(seen["now"].tzinfo) == "America/New_York"
    first = list(seen["ids"])
    assert first[1].startswith("x-") and len(first[0]) == 36
    rep(bank, tmp_path / "orig.jsonl", tmp_path)
    assert seen["ids"] == first


def test_a_recorded_keyerror_replays_with_the_same_message() -> None:
    from tracetui.core.harness.context import _recorded_error

    live = KeyError("2026-12-03")
    replayed = _recorded_error("list_open_slots", "KeyError", {"error_type": "KeyError", "message": str(live)})
    assert isinstance(replayed, KeyError) and str(replayed) == str(live) == "'2026-12-03'"
    timeout = _recorded_error("report", "TimeoutError", {"message": "timed out after 30 s"})
    assert isinstance(timeout, TimeoutError) and str(timeout) == "timed out after 30 s"


def test_a_fixture_that_raises_is_the_tool_failing_not_a_lost_call(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)

    class Refusing:
        def seed(self, tool: str, arguments: Any, output: Any) -> None:
            pass

        def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
            if tool == "lookup_customer":
                return {"customer_id": "CU-1", "email": "x"}
            if tool == "get_balance":
                return {"account": "A1", "balance": 1}
            raise ValueError("insufficient funds in A1")

        def state(self) -> Any:
            return {}

    bank.fixture_factory = Refusing
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, mode="fixture").runs
    assert sum(live(bank).values()) == 0
    assert isinstance(run.error, ValueError) and str(run.error) == "insufficient funds in A1"
    assert [w["tool"] for w in run.outcome.writes] == ["transfer"]
    transfer = next(s for s in read_trace(tmp_path / "replay.jsonl").spans if s.data.get("tool_name") == "transfer")
    assert transfer.status is Status.ERROR and transfer.error_type == "ValueError"
    assert transfer.data["output"]["message"] == "insufficient funds in A1"
