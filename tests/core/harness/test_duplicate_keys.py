"""A recorded call whose arguments hold the same key twice (issue 20, item 5).

Reading the trace reports both values with file, line and JSON path; a strict replay refuses to
serve the ambiguous call as ``unservable_recording``. Also for a duplicate key inside an argument
string (a tool's arguments recorded as JSON text, an LLM's ``tool_calls[].arguments``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from builders import Ticker
from tracetui.core.errors import RecordingUnservable
from tracetui.core.harness import load_agent, record, replay
from tracetui.core.harness.redact import Redactor
from tracetui.core.readers import read_trace

AGENT = Path(__file__).resolve().parents[2] / "data" / "harness" / "bank_agent.py"
KEY = b"test-project-key"
INPUT = {"email": "ada.lovelace@example.com", "amount": 120}



@pytest.fixture()
def bank() -> Any:
    spec = load_agent(f"{AGENT}:run")
    spec.run.__globals__["reset"]()
    return spec


def recorded(spec: Any, tmp_path: Path) -> Path:
    out = tmp_path / "orig.jsonl"
    record(spec, INPUT, str(out), redactor=Redactor(KEY, sensitive_fields=spec.sensitive_fields),
           clock="2026-03-02T09:30:00", timezone="America/New_York", seed=42, timer=Ticker())
    spec.run.__globals__["reset"]()
    return out


def rewrite(path: Path, kind: str, change: Any) -> int:
    """Apply ``change(line_bytes) -> bytes`` to the first span line of ``kind`` that holds
    ``"transfer"``; return its line number (1-based)."""
    lines = path.read_bytes().splitlines()
    for i, line in enumerate(lines[1:], 1):
        if orjson.loads(line).get("kind") == kind and b"transfer" in line:
            lines[i] = change(line)
            path.write_bytes(b"\n".join(lines) + b"\n")
            return i + 1
    raise AssertionError(f"no {kind} span of transfer")


def dup_amount(line: bytes) -> bytes:
    """The transfer's arguments with ``amount`` twice: 121 first, then the recorded 120 (kept)."""
    assert line.count(b'"amount":120') == 1
    return line.replace(b'"amount":120', b'"amount":121,"amount":120')


def test_a_duplicate_key_in_recorded_arguments_is_reported_with_both_values(bank: Any, tmp_path: Path) -> None:
    out = recorded(bank, tmp_path)
    lineno = rewrite(out, "tool", dup_amount)
    trace = read_trace(out)
    (issue,) = [i for i in trace.issues if "duplicate key" in i.message]
    assert (issue.path, issue.line, issue.where) == (str(out), lineno, "$.tool.arguments")
    assert "duplicate key 'amount' in one object: 121 then 120; the last value is kept" in issue.message
    (span,) = [s for s in trace.spans if s.data.get("tool_name") == "transfer"]
    assert span.data["arguments"]["amount"] == 120
    assert "121 then 120" in span.attributes["tracetui.duplicate_keys"]


def test_a_strict_replay_refuses_the_ambiguous_call_as_unservable(bank: Any, tmp_path: Path) -> None:
    out = recorded(bank, tmp_path)
    rewrite(out, "tool", dup_amount)
    red = Redactor(KEY, sensitive_fields=bank.sensitive_fields)
    report = replay(read_trace(out), bank, str(tmp_path / "r.jsonl"), redactor=red, timer=Ticker())
    (run,) = report.runs
    assert isinstance(run.error, RecordingUnservable) and "ambiguous" in str(run.error)
    assert "121 then 120" in str(run.error)
    assert run.status == "unservable_recording" and report.status == "unservable_recording"
    assert sum(bank.run.__globals__["LIVE_CALLS"].values()) == 0


def test_the_same_key_twice_with_the_same_value_is_reported_but_served(bank: Any, tmp_path: Path) -> None:
    out = recorded(bank, tmp_path)
    rewrite(out, "tool", lambda line: line.replace(b'"amount":120', b'"amount":120,"amount":120'))
    trace = read_trace(out)
    assert any("duplicate key 'amount' in one object: 120 2 times" in i.message for i in trace.issues)
    red = Redactor(KEY, sensitive_fields=bank.sensitive_fields)
    (run,) = replay(trace, bank, str(tmp_path / "r.jsonl"), redactor=red, timer=Ticker()).runs
    assert not isinstance(run.error, RecordingUnservable)


def as_string(field: str) -> Any:
    """Turn ``{"amount":120...}`` arguments under ``field`` into a JSON string with ``amount`` twice."""
    def change(line: bytes) -> bytes:
        obj = orjson.loads(line)
        section = obj[obj["kind"]]
        holder = section if field == "tool" else section["output"]["tool_calls"][0]
        text = orjson.dumps(holder["arguments"]).decode()
        holder["arguments"] = text.replace('"amount":120', '"amount":121,"amount":120')
        return orjson.dumps(obj)
    return change


SAMPLE = Path(__file__).resolve().parents[3] / "sample_runs" / "order_lookup" / "original.jsonl"


def test_a_duplicate_key_in_an_llm_tool_call_arguments_string_is_reported(tmp_path: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines()
    lineno = next(i for i, line in enumerate(lines) if b'"kind":"llm"' in line and b'"tool_calls"' in line) + 1
    obj = orjson.loads(lines[lineno - 1])
    call = obj["llm"]["output"]["tool_calls"][0]
    call["arguments"] = '{"customer_id":"C-2270","customer_id":"C-2207","query":"5531"}'
    lines[lineno - 1] = orjson.dumps(obj)
    out = tmp_path / "t.jsonl"
    out.write_bytes(b"\n".join(lines) + b"\n")
    trace = read_trace(out)
    (issue,) = [i for i in trace.issues if "duplicate key" in i.message]
    assert (issue.path, issue.line, issue.where) == (str(out), lineno, "llm.output.tool_calls[0].arguments")
    assert "duplicate key 'customer_id' in one object: \"C-2270\" then \"C-2207\"" in issue.message
    (span,) = [s for s in trace.spans if s.line == lineno]
    assert "C-2270" in span.attributes["tracetui.duplicate_keys"]


def test_a_duplicate_key_in_tool_arguments_recorded_as_text_is_refused(bank: Any, tmp_path: Path) -> None:
    out = recorded(bank, tmp_path)
    lineno = rewrite(out, "tool", as_string("tool"))
    trace = read_trace(out)
    (issue,) = [i for i in trace.issues if "duplicate key" in i.message]
    assert (issue.line, issue.where) == (lineno, "tool.arguments")
    assert "121 then 120" in issue.message
    red = Redactor(KEY, sensitive_fields=bank.sensitive_fields)
    (run,) = replay(trace, bank, str(tmp_path / "r.jsonl"), redactor=red, timer=Ticker()).runs
    assert isinstance(run.error, RecordingUnservable) and run.status == "unservable_recording"


def test_a_frozen_replay_refuses_an_llm_answer_whose_tool_call_arguments_are_ambiguous(tmp_path: Path) -> None:
    coin = load_agent(f"{AGENT.parent / 'coin_agent.py'}:run")
    coin.run.__globals__["CALLS"]["model"] = 0  # the scripted model's refund call
    red = Redactor(KEY)
    out = tmp_path / "coin.jsonl"
    record(coin, {}, str(out), redactor=red, seed=1, timer=Ticker())
    lines = out.read_bytes().splitlines()
    i = next(i for i, line in enumerate(lines) if b'"kind":"llm"' in line)
    obj = orjson.loads(lines[i])
    obj["llm"]["output"]["tool_calls"][0]["arguments"] = '{"order_id":"A-2","order_id":"A-1"}'
    lines[i] = orjson.dumps(obj)
    out.write_bytes(b"\n".join(lines) + b"\n")
    (run,) = replay(read_trace(out), coin, str(tmp_path / "r.jsonl"), redactor=red, timer=Ticker()).runs
    assert isinstance(run.error, RecordingUnservable) and run.status == "unservable_recording"
    assert '"A-2" then "A-1"' in str(run.error)
    assert [d["type"] for d in run.outcome.divergences] == ["recording_unservable"]
