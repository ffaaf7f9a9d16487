"""Replay fails closed on what the recording cannot vouch for (issue 20, items 1-4, 6-8).

Each test records the toy bank agent (tests/data/harness/bank_agent.py) or a small agent written
here, edits the recording where the case needs a recording problem, replays, and checks the named
outcome, the replay span and that nothing reached a live tool.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from builders import BANK_NEW_READ_FIRST, Ticker
from tracetui.core.errors import RecordingExhausted, RecordingIncomplete, RecordingUnservable, WriteMismatch
from tracetui.core.harness import load_agent, record, replay
from tracetui.core.harness.redact import Redactor
from tracetui.core.readers import read_trace

AGENT = Path(__file__).resolve().parents[2] / "data" / "harness" / "bank_agent.py"
KEY = b"test-project-key"
INPUT = {"email": "ada.lovelace@example.com", "amount": 120}



def live(spec: Any) -> Any:
    return spec.run.__globals__["LIVE_CALLS"]


def rec(spec: Any, tmp_path: Path) -> tuple[Path, Any]:
    out = tmp_path / "orig.jsonl"
    result = record(spec, INPUT, str(out), redactor=Redactor(KEY, sensitive_fields=spec.sensitive_fields),
                    clock="2026-03-02T09:30:00", timezone="America/New_York", seed=42, timer=Ticker())
    return out, result


def rep(spec: Any, recording: Path, tmp_path: Path, name: str = "replay.jsonl", **kw: Any) -> Any:
    return replay(read_trace(recording), spec, str(tmp_path / name),
                  redactor=Redactor(KEY, sensitive_fields=spec.sensitive_fields), timer=Ticker(), **kw)


@pytest.fixture()
def bank() -> Any:
    spec = load_agent(f"{AGENT}:run")
    spec.run.__globals__["reset"]()
    return spec


def payload(obj: dict[str, Any]) -> dict[str, Any]:
    """A tracetui/1 span line's kind-specific fields (``"tool": {...}`` for a tool span)."""
    return obj.get(obj.get("kind", ""), {}) if isinstance(obj.get(obj.get("kind", "")), dict) else {}


def edit(path: Path, tool: str, change: Any) -> None:
    """Rewrite the first span of ``tool`` in a tracetui/1 file with ``change(span_dict)``."""
    lines = path.read_bytes().splitlines()
    for i, line in enumerate(lines[1:], 1):
        obj = orjson.loads(line)
        if payload(obj).get("tool_name") == tool:
            change(obj)
            lines[i] = orjson.dumps(obj)
            break
    else:
        raise AssertionError(f"no {tool} span")
    path.write_bytes(b"\n".join(lines) + b"\n")


def spans_of(path: Path, tool: str) -> list[Any]:
    return [s for s in read_trace(path).spans if s.data.get("tool_name") == tool]


# -- item 3: a write with other arguments is a divergence -------------------------------------------
@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_a_write_with_other_arguments_is_a_write_mismatch_with_the_path_and_nearest_write(
        bank: Any, tmp_path: Path, mode: str) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    report = rep(bank, out, tmp_path, mode=mode, input={**INPUT, "amount": 121})
    (run,) = report.runs
    assert live(bank)["transfer"] == 0
    assert isinstance(run.error, WriteMismatch) and run.status == "diverged" and report.status == "diverged"
    assert [d["type"] for d in run.outcome.divergences] == ["write_mismatch"]
    (near,) = run.error.nearest[:1]
    assert near["tool"] == "transfer" and near["arguments"]["amount"] == 120
    assert near["differs"] == ["arguments.amount: 121 (recorded 120)"]
    (span,) = spans_of(tmp_path / "replay.jsonl", "transfer")
    assert span.attributes["replay.divergence"] == "write_mismatch"
    assert span.data["output"]["error"] == "write_mismatch" and span.data["output"] != {
        "status": "ok", "simulated": True, "intercepted": True}


def test_the_cli_exits_1_and_prints_the_write_mismatch(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    key = tmp_path / "key"
    key.write_bytes(KEY)
    proc = subprocess.run([sys.executable, "-m", "tracetui", "replay", str(out), f"{AGENT}:run", "--out",
                           str(tmp_path / "r.jsonl"), "--input", orjson.dumps({**INPUT, "amount": 121}).decode(),
                           "--redaction-key-file", str(key)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "write_mismatch at seq 3" in proc.stdout and "arguments.amount: 121 (recorded 120)" in proc.stdout
    assert "outcome: diverged (exit 1)" in proc.stdout


# -- item 7: --allow-live never lets a write through ------------------------------------------------
def test_loose_allow_live_never_sends_a_write_live_even_if_the_agent_now_calls_it_a_read(
        bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    # The fixed agent (wrongly) lists transfer as a read; the recording holds it as a write.
    fixed = dataclasses.replace(bank, read_tools=bank.read_tools | {"transfer"})
    (run,) = rep(fixed, out, tmp_path, mode="loose", allow_live=True, accept_schema_change=True,
                 input={**INPUT, "amount": 121}).runs
    assert live(bank)["transfer"] == 0
    assert run.outcome.live_calls == 0 and [d["type"] for d in run.outcome.divergences] == ["write_mismatch"]


# -- item 8: a read recorded once, called twice -----------------------------------------------------
def test_a_read_recorded_once_and_called_twice_is_recording_exhausted(tmp_path: Path) -> None:
    agent = tmp_path / "once.py"
    agent.write_text("def get(x):\n    return {'x': x}\nTOOLS = {'get': get}\nREAD_TOOLS = {'get'}\n"
                     "def run(ctx, input):\n    ctx.tool('get', {'x': 1})\n"
                     "    if input.get('twice'):\n        ctx.tool('get', {'x': 1})\n    return 'ok'\n")
    spec = load_agent(f"{agent}:run")
    red = Redactor(KEY)
    record(spec, {}, str(tmp_path / "o.jsonl"), redactor=red, seed=1, timer=Ticker())
    (run,) = replay(read_trace(tmp_path / "o.jsonl"), spec, str(tmp_path / "r.jsonl"), redactor=red,
                    timer=Ticker(), input={"twice": True}).runs
    assert type(run.error) is RecordingExhausted and run.error.recorded == 1
    assert "(recorded 1, requested 2)" in str(run.error)
    assert [d["type"] for d in run.outcome.divergences] == ["recording_exhausted"]


# -- item 1: a truncated output is refused, --accept-truncated serves it marked ----------------------
def cut(obj: dict[str, Any]) -> None:
    payload(obj)["output"]["note"] = "balance statement for A1 ... [truncated]"


def test_an_output_triage_calls_truncated_is_refused_as_unservable(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    edit(out, "get_balance", cut)
    bank.run.__globals__["reset"]()
    report = rep(bank, out, tmp_path)
    (run,) = report.runs
    assert isinstance(run.error, RecordingUnservable) and "truncated" in str(run.error)
    assert run.status == "unservable_recording" and report.status == "unservable_recording"
    (span,) = spans_of(tmp_path / "replay.jsonl", "get_balance")[:1]
    assert span.attributes["replay.divergence"] == "recording_unservable"
    assert sum(live(bank).values()) == 0


def test_accept_truncated_serves_it_marked_and_says_so_in_the_header(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    edit(out, "get_balance", cut)
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path, accept_truncated=True).runs
    assert run.error is None or not isinstance(run.error, RecordingUnservable)
    assert run.header["accept_truncated"] is True
    span = spans_of(tmp_path / "replay.jsonl", "get_balance")[0]
    assert span.data["output_truncated"] is True and "truncated" in span.attributes["replay.accepted_truncated"]


# -- item 2: an incomplete recording is its own outcome, never serves null --------------------------
def test_a_call_started_and_never_finished_stops_the_replay_as_incomplete(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    # The recorder was stopped while transfer ran: no output, no end time, nothing after it.
    lines = out.read_bytes().splitlines()
    kept = [lines[0]]
    for line in lines[1:]:
        obj = orjson.loads(line)
        if payload(obj).get("tool_name") == "transfer":
            payload(obj)["output"] = None
            obj["end_ns"] = None
            obj["status"] = "unset"
            kept.append(orjson.dumps(obj))
            break
        kept.append(line)
    out.write_bytes(b"\n".join(kept) + b"\n")
    bank.run.__globals__["reset"]()
    report = rep(bank, out, tmp_path)
    (run,) = report.runs
    assert isinstance(run.error, RecordingIncomplete), run.error
    assert run.status == "incomplete_recording" and [d["type"] for d in run.outcome.divergences] == [
        "recording_incomplete"]
    assert live(bank)["transfer"] == 0
    span = spans_of(tmp_path / "replay.jsonl", "transfer")[0]
    assert span.data["output"]["error"] == "recording_incomplete"  # not the recorded null


def test_a_recording_without_its_root_span_stops_where_it_ends(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    lines = out.read_bytes().splitlines()
    # the writer was killed after get_balance #1: keep the header and the first two tool spans
    kept = [lines[0]] + [ln for ln in lines[1:] if payload(orjson.loads(ln)).get("tool_name") in (
        "lookup_customer",)] + [next(ln for ln in lines[1:] if payload(orjson.loads(ln)).get(
            "tool_name") == "get_balance")]
    out.write_bytes(b"\n".join(kept) + b"\n")
    bank.run.__globals__["reset"]()
    (run,) = rep(bank, out, tmp_path).runs
    assert run.status == "incomplete_recording", run.outcome.divergences
    assert "no root span" in run.outcome.divergences[0]["message"]


def test_the_cli_exit_codes_name_the_recording_outcomes(bank: Any, tmp_path: Path) -> None:
    out, _ = rec(bank, tmp_path)
    edit(out, "get_balance", cut)
    key = tmp_path / "key"
    key.write_bytes(KEY)

    def cli(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tracetui", "replay", str(out), f"{AGENT}:run", "--out",
                               str(tmp_path / "r.jsonl"), "--force", "--redaction-key-file", str(key), *more],
                              capture_output=True, text=True, cwd=tmp_path)

    proc = cli()
    assert proc.returncode == 4 and "unservable recording" in proc.stdout, proc.stdout + proc.stderr
    proc = cli("--accept-truncated")
    assert proc.returncode == 0 and "--accept-truncated" in proc.stdout, proc.stdout + proc.stderr


# -- item 4: per-tool volatile argument paths ------------------------------------------------------
VOLATILE_AGENT = '''
import uuid
CALLS = {"n": 0}
def pay(amount, request_id):
    CALLS["n"] += 1
    return {"ok": True}
TOOLS = {"pay": pay}
READ_TOOLS = set()
def run(ctx, input):
    return ctx.tool("pay", {"amount": input["amount"], "request_id": str(uuid.uuid4())})
'''


def test_a_volatile_argument_path_from_pyproject_is_ignored_when_matching_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pay_agent.py").write_text(VOLATILE_AGENT)
    spec = load_agent(f"{tmp_path / 'pay_agent.py'}:run")
    red = Redactor(KEY)
    record(spec, {"amount": 5}, str(tmp_path / "o.jsonl"), redactor=red, seed=1, timer=Ticker())
    monkeypatch.chdir(tmp_path)
    (run,) = replay(read_trace(tmp_path / "o.jsonl"), spec, str(tmp_path / "a.jsonl"), redactor=red,
                    timer=Ticker()).runs
    assert [d["type"] for d in run.outcome.divergences] == ["write_mismatch"]  # a fresh UUID each run
    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.replay]\nvolatile = {pay = ["request_id"]}\n')
    (run,) = replay(read_trace(tmp_path / "o.jsonl"), spec, str(tmp_path / "b.jsonl"), redactor=red,
                    timer=Ticker()).runs
    assert run.outcome.divergences == [] and run.status == "passed" and spec.run.__globals__["CALLS"]["n"] == 1
    assert run.header["volatile_args"] == {"pay": ["request_id"]}
    assert "volatile argument pay.request_id ignored for matching (1 call)" in run.outcome.notes
    # a changed amount still diverges: only the declared path is ignored
    (run,) = replay(read_trace(tmp_path / "o.jsonl"), spec, str(tmp_path / "c.jsonl"), redactor=red,
                    timer=Ticker(), input={"amount": 6}).runs
    assert [d["type"] for d in run.outcome.divergences] == ["write_mismatch"]


# -- item 6: plain-string arguments -----------------------------------------------------------------
def test_a_tool_called_with_a_plain_string_records_and_replays(tmp_path: Path) -> None:
    agent = tmp_path / "plain.py"
    agent.write_text("def search(q):\n    return ['hit for ' + q]\nTOOLS = {'search': search}\n"
                     "READ_TOOLS = {'search'}\ndef run(ctx, input):\n    return ctx.tool('search', 'weather in Paris')\n")
    spec = load_agent(f"{agent}:run")
    red = Redactor(KEY)
    result = record(spec, {}, str(tmp_path / "o.jsonl"), redactor=red, seed=1, timer=Ticker())
    assert result.error is None and result.output == ["hit for weather in Paris"]
    (run,) = replay(read_trace(tmp_path / "o.jsonl"), spec, str(tmp_path / "r.jsonl"), redactor=red,
                    timer=Ticker()).runs
    assert run.error is None and run.output == ["hit for weather in Paris"] and run.outcome.served == 1


# -- item 9: diff and replay agree on the first divergence ------------------------------------------
NEW_READ_FIRST = BANK_NEW_READ_FIRST


def test_diff_and_replay_name_the_same_first_divergence_when_the_fix_reads_first(bank: Any, tmp_path: Path) -> None:
    """The held-out case of issue 20: the fixed agent makes one new read before anything else and
    stops there (strict). Both replay and diff put that call first; the original's later spans
    (lookup_customer, transfer, ...) are consequences, listed after it."""
    from tracetui.core.diff import diff_traces

    out, _ = rec(bank, tmp_path)
    bank.run.__globals__["reset"]()
    (tmp_path / "fixed.py").write_text(NEW_READ_FIRST.format(bank=str(AGENT)))
    fixed = load_agent(f"{tmp_path / 'fixed.py'}:run")
    (run,) = rep(fixed, out, tmp_path, accept_schema_change=True).runs
    first_replay = run.outcome.divergences[0]
    assert first_replay["type"] == "unrecorded_call" and first_replay["seq"] == 1
    d = diff_traces(read_trace(out), read_trace(tmp_path / "replay.jsonl"))
    assert d.first is not None and d.first.replay is not None
    assert d.first.replay.span_id == first_replay["span_id"]
    later = [x.type.value for x in d.divergences[1:]]
    assert "missing_call" in later  # the original's calls the replay never reached: after it
