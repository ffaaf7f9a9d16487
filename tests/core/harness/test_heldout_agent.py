"""Held-out check of issue 4's "Done when" with an agent of another domain (a refund desk,
tests/data/harness/heldout_agent.py), written only against docs/harness.md, through the library
and the CLI; then a user's attempts to break the harness."""

from __future__ import annotations

import io
import json
import os
import socket
from pathlib import Path

import pytest

from tracetui.cli.main import main
from tracetui.core.errors import RecordingExhausted, UnrecordedCall
from tracetui.core.harness import Redactor, load_agent, replay
from tracetui.core.readers import read_trace

AGENT = str(Path(__file__).resolve().parents[2] / "data" / "harness" / "heldout_agent.py")
KEY = "heldout-test-key-0123456789abcde"  # 32 characters
CLOCK, ZONE = "2026-05-04T09:15:00+05:30", "Asia/Kolkata"


def ref(fn: str) -> str:
    return f"{AGENT}:{fn}"


H = load_agent(ref("run")).run.__globals__  # the agent module as tracetui loaded it (CALLS, reset, SECRETS)


def cli(cwd: Path, *argv: str) -> tuple[int, str, str]:
    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        code = main(list(argv), stdout=out, stderr=err)
    finally:
        os.chdir(here)
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def summary(path: Path, trial: int = 0) -> dict:
    trace = read_trace(str(path))
    roots = [s for s in trace.spans if s.parent_id is None]
    return roots[trial].attributes["replay.summary"]


@pytest.fixture(scope="module", autouse=True)
def _key():
    # The agent runs in this process (no network namespace child), so the module's CALLS counters
    # see every call it makes; the sandbox itself is tested in test_sandbox.py.
    from tracetui.core.harness import sandbox

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACETUI_REDACTION_KEY", KEY)
        mp.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
        mp.setenv(sandbox.ENV_DISABLE, "1")
        sandbox.namespace_prefix.cache_clear()
        yield
    sandbox.namespace_prefix.cache_clear()


@pytest.fixture(scope="module")
def rec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One live recording of the refund desk, made with the CLI; the folder collects every later file."""
    d = tmp_path_factory.mktemp("heldout")
    (d / "input.json").write_text(json.dumps(H["INPUT"], ensure_ascii=False), encoding="utf-8")
    H["reset"]()
    code, out, err = cli(d, "record", ref("run"), "--input", "@input.json", "--clock", CLOCK, "--timezone", ZONE,
                         "--seed", "11", "--out", "orig.jsonl")
    assert code == 0, err
    assert "live calls: 6 tool/retrieval, 2 model" in out
    assert H["CALLS"]["get_order"] == 2 and H["CALLS"]["issue_refund"] == 1 and H["CALLS"]["model"] == 2
    (d / "cli_output.txt").write_text(out + err, encoding="utf-8")
    return d


def replay_cli(d: Path, fn: str, out: str, *extra: str) -> tuple[int, str, str]:
    H["CALLS"].clear()
    code, stdout, stderr = cli(d, "replay", "orig.jsonl", ref(fn), "--out", out, *extra)
    with open(d / "cli_output.txt", "a", encoding="utf-8") as fh:
        fh.write(stdout + stderr)
    return code, stdout, stderr


# ------------------------------------------------------------------ Done when, through the CLI
def test_strict_replay_serves_reads_in_order_intercepts_writes_freezes_clock(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run", "strict.jsonl")
    assert code == 0
    assert sum(H["CALLS"].values()) == 0  # zero live calls, model included (frozen)
    assert "reads served 4, misses 0, writes intercepted 2" in out and "live calls (tools/network): 0" in out
    assert "write #1 intercepted: issue_refund" in out and "idempotency key refund-ORD-1001-case-" in out
    assert "write #2 intercepted: send_email" in out
    trace = read_trace(str(rec / "strict.jsonl"))
    root = next(s for s in trace.spans if s.parent_id is None)
    output = root.data["output"]
    # the read after the write got the second recording
    assert (output["status_before"], output["status_after"]) == ("charged_twice", "refunded")
    # frozen clock in the recorded zone; seeded ids as recorded
    original = read_trace(str(rec / "orig.jsonl"))
    assert output["now"] == CLOCK == original.header["clock"]["now"]
    assert (output["tz"], output["utcoffset"]) == (ZONE, 19800.0)
    assert trace.header["clock"] == {"now": CLOCK, "timezone": ZONE}
    orig_root = next(s for s in original.spans if s.parent_id is None)
    assert output["case_id"] == orig_root.data["output"]["case_id"]
    sources = [s.attributes.get("replay.source") for s in trace.spans if s.kind.value in ("tool", "retrieval")]
    assert sources == ["recording"] * 6
    assert cli(rec, "diff", "orig.jsonl", "strict.jsonl")[0] == 0


def test_unrecorded_call_names_nearest_call_and_argument_and_diff_points_at_it(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run_other_order", "other.jsonl")
    assert code == 1 and sum(H["CALLS"].values()) == 0
    assert "unrecorded_call at seq 1" in out and "Nothing was sent to a live system" in out
    assert 'get_order {"order_id":"ORD-1001"}: arguments.order_id: "ORD-1002" (recorded "ORD-1001")' in out
    span = next(s for s in read_trace(str(rec / "other.jsonl")).spans if s.kind.value == "tool" and s.error_type)
    assert span.attributes["replay.divergence"] == "unrecorded_call"
    code, diff_out, _ = cli(rec, "diff", "orig.jsonl", "other.jsonl", "--format", "json")
    first = json.loads(diff_out)["first_divergence"]
    # paired by alignment with the recorded get_order, it is still named what the replay called it
    assert code == 1 and first["type"] == "unrecorded_call" and first["replay"]["seq"] == 1
    assert first["fields"][0] == {"path": "tool.arguments.order_id", "original": "ORD-1001", "replay": "ORD-1002"}


def test_recording_exhausted_is_distinct(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run_extra_read", "extra.jsonl")
    assert code == 1 and sum(H["CALLS"].values()) == 0
    assert "recording_exhausted at seq 8" in out
    assert "get_order called 3 times with these arguments; the recording has 2 responses, all served" in out


def test_diff_first_divergence_of_an_exhausted_read(rec: Path) -> None:
    if not (rec / "extra.jsonl").exists():
        replay_cli(rec, "run_extra_read", "extra.jsonl")
    first = json.loads(cli(rec, "diff", "orig.jsonl", "extra.jsonl", "--format", "json")[1])["first_divergence"]
    # The replay's own step where the runs fork comes first (docs/format.md): the exhausted get_order
    # the replay made (seq 8), not the original's later send_email, its consequence.
    assert first["replay"] is not None and first["replay"]["seq"] == 8


def test_repeated_write_with_same_idempotency_key_is_reported(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run_double", "double.jsonl")
    assert code == 1  # a double refund fails the gate even though nothing diverged
    assert H["CALLS"]["issue_refund"] == 0
    assert "repeated write: #2 issue_refund has the idempotency key of write #1" in out
    dup = summary(rec / "double.jsonl")["duplicate_writes"]
    assert [(d["position"], d["first_position"]) for d in dup] == [(2, 1)]


def test_fixture_mode_applies_writes_and_reports_changes(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run", "fixture.jsonl", "--mode", "fixture")
    assert code == 0 and sum(H["CALLS"].values()) == 0
    assert 'state.orders.ORD-1001.status: "charged_twice" -> "refunded" (write #1 issue_refund)' in out
    s = summary(rec / "fixture.jsonl")
    assert s["final_state"]["orders"]["ORD-1001"]["status"] == "refunded"
    assert [c["by"]["tool"] for c in s["changes"]] == ["issue_refund", "issue_refund", "send_email"]
    # without a FIXTURE the default store says so (and logs writes without applying them)
    code, out, _ = replay_cli(rec, "run_plain", "fixture_plain.jsonl", "--mode", "fixture")
    assert "declares no FIXTURE" in out and sum(H["CALLS"].values()) == 0


def test_loose_mode_goes_live_only_with_allow_live(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run_other_order", "loose.jsonl", "--mode", "loose")
    assert code == 1 and sum(H["CALLS"].values()) == 0
    assert "loose mode: 1 miss, none sent live" in out and summary(rec / "loose.jsonl")["misses"] == 1
    H["reset"]()
    code, out, _ = replay_cli(rec, "run_other_order", "loose_live.jsonl", "--mode", "loose", "--allow-live")
    assert dict(H["CALLS"]) == {"get_order": 1}  # only the miss went live, never the write
    assert "loose mode: 1 miss, 1 sent live" in out
    assert summary(rec / "loose_live.jsonl")["live_calls"] == 1
    code, _, err = replay_cli(rec, "run", "x.jsonl", "--allow-live")
    assert code == 2 and "--allow-live only applies to --mode loose" in err


def test_live_model_trials(rec: Path) -> None:
    code, out, err = replay_cli(rec, "run", "trials.jsonl", "--llm", "live", "--trials", "3")
    assert code == 0 and "reproduction: 3 of 3 trials took the original's call path" in out
    assert dict(H["CALLS"]) == {"model": 6}  # the model was called; no tool was
    assert len({s.trace_id for s in read_trace(str(rec / "trials.jsonl")).spans}) >= 1
    assert replay_cli(rec, "run", "t0.jsonl", "--trials", "0")[0] == 2


# ------------------------------------------------------------------ library, socket guard
@pytest.fixture()
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


def accepted(srv: socket.socket) -> int:
    n = 0
    while True:
        try:
            srv.accept()[0].close()
            n += 1
        except BlockingIOError:
            return n


def _net_replay(rec: Path, tmp_path: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch, *, thread: bool):
    monkeypatch.setenv("HELDOUT_NET_PORT", str(listener.getsockname()[1]))
    if thread:
        monkeypatch.setenv("HELDOUT_NET_THREAD", "1")
    H["CALLS"].clear()
    report = replay(read_trace(str(rec / "orig.jsonl")), load_agent(ref("run_net")), str(tmp_path / "net.jsonl"),
                    redactor=Redactor(KEY.encode()), mode="strict")
    return report.runs[0]


def test_socket_guard_blocks_agent_connections_in_replay(rec, tmp_path, listener, monkeypatch) -> None:
    run = _net_replay(rec, tmp_path, listener, monkeypatch, thread=False)
    assert run.output["net"] == ["LiveCallBlocked", "LiveCallBlocked"]
    assert accepted(listener) == 0 and sum(H["CALLS"].values()) == 0
    assert run.summary()["blocked_network"][0] == f"connect 127.0.0.1:{listener.getsockname()[1]}"
    socket.create_connection(listener.getsockname(), timeout=2).close()  # the guard is lifted afterwards
    assert accepted(listener) == 1


def test_socket_guard_covers_threads_the_agent_starts(rec, tmp_path, listener, monkeypatch) -> None:
    run = _net_replay(rec, tmp_path, listener, monkeypatch, thread=True)
    assert accepted(listener) == 0
    assert run.output["net"][-1] == "LiveCallBlocked"


def test_library_divergences_are_typed(rec: Path, tmp_path: Path) -> None:
    red, recording = Redactor(KEY.encode()), read_trace(str(rec / "orig.jsonl"))
    H["CALLS"].clear()
    miss = replay(recording, load_agent(ref("run_other_order")), str(tmp_path / "a.jsonl"), redactor=red).runs[0]
    assert isinstance(miss.error, UnrecordedCall) and miss.error.arguments == {"order_id": "ORD-1002"}
    assert miss.error.nearest[0]["differs"] == ['arguments.order_id: "ORD-1002" (recorded "ORD-1001")']
    ex = replay(recording, load_agent(ref("run_extra_read")), str(tmp_path / "b.jsonl"), redactor=red).runs[0]
    assert isinstance(ex.error, RecordingExhausted) and ex.error.recorded == 2
    assert [d["type"] for d in ex.outcome.divergences] == ["recording_exhausted"]
    assert sum(H["CALLS"].values()) == 0


# ------------------------------------------------------------------ privacy
def _leaks(folder: Path) -> dict[str, list[str]]:
    forms = dict(H["SECRETS"])
    forms.update(card_digits="5555555555554444", input_card_digits="4242424242424242", phone_digits="447911123456",
                 name_escaped="Zo\\u00eb", surname_escaped="\\u00dcnal-Park", surname="nal-Park")
    found: dict[str, list[str]] = {}
    for path in folder.rglob("*"):
        if path.is_file() and path.name != "input.json":  # the user's own input file
            data = path.read_bytes()
            for name, raw in forms.items():
                if raw.encode() in data or raw.encode().replace(b"\\", b"\\\\") in data:
                    found.setdefault(path.name, []).append(name)
    return found


def test_no_secret_in_any_written_file(rec: Path) -> None:
    for fn, out in (("run", "s1.jsonl"), ("run_other_order", "s2.jsonl"), ("run_extra_read", "s3.jsonl")):
        replay_cli(rec, fn, out)
    replay_cli(rec, "run", "s4.jsonl", "--mode", "fixture")
    replay_cli(rec, "run", "s5.jsonl", "--format", "json")
    cli(rec, "convert", "orig.jsonl", "converted.jsonl")
    header = read_trace(str(rec / "orig.jsonl")).header
    assert {"email", "phone", "card", "api_key", "bearer", "sensitive_field"} <= set(header["redaction"]["fired"])
    assert _leaks(rec) == {}


def test_no_leak_when_the_agent_pastes_tool_output_with_default_json_dumps(tmp_path: Path) -> None:
    H["reset"]()
    assert cli(tmp_path, "record", ref("run_ascii"), "--input", json.dumps(H["INPUT"]), "--clock", CLOCK,
               "--out", "o.jsonl")[0] == 0
    code = cli(tmp_path, "replay", "o.jsonl", ref("run_ascii"), "--out", "r.jsonl")[0]
    assert _leaks(tmp_path) == {}
    assert code == 0


# ------------------------------------------------------------------ a user trying to break it
@pytest.mark.parametrize("agent, message", [
    ("missing.py:run", "agent file missing.py not found"),
    (AGENT + ":nope", "has no 'nope'; functions there:"),
    ("norefcolon", "expected module:function"),
    ("bad.py:run", "importing bad.py raised ValueError: boom at import at"),
    (AGENT + ":SECRETS", "'SECRETS' is a dict, not a function"),
    ("no_such_module_xyz:run", "agent module 'no_such_module_xyz' not found"),
])
def test_bad_agent_references_are_clear_errors(tmp_path: Path, agent: str, message: str) -> None:
    (tmp_path / "bad.py").write_text("raise ValueError('boom at import')\n")
    code, out, err = cli(tmp_path, "record", agent, "--input", "{}", "--out", "t.jsonl")
    assert (code, out) == (2, "") and message in err and not (tmp_path / "t.jsonl").exists()


def test_agent_raising_mid_run_keeps_everything(tmp_path: Path) -> None:
    code, out, _ = cli(tmp_path, "record", ref("run_crash"), "--input", '{"order_id": "ORD-1001"}', "--out", "c.jsonl")
    assert code == 1 and "the agent raised RuntimeError: agent bug: refund amount missing" in out
    spans = read_trace(str(tmp_path / "c.jsonl")).spans
    assert sorted(s.kind.value for s in spans) == ["agent", "tool"]
    assert next(s for s in spans if s.parent_id is None).error_type == "RuntimeError"
    code, out, _ = cli(tmp_path, "record", ref("run_interrupt"), "--input", '{"order_id": "ORD-1001"}',
                       "--out", "k.jsonl")
    spans = read_trace(str(tmp_path / "k.jsonl")).spans
    assert code == 130 and next(s for s in spans if s.parent_id is None).error_type == "KeyboardInterrupt"


def test_replay_where_the_agent_crashes_is_not_success(rec: Path) -> None:
    code, out, _ = replay_cli(rec, "run_crash", "crash.jsonl")
    assert "agent raised RuntimeError" in out and "0 of 1" in out
    assert code != 0


def test_non_json_huge_unicode_and_threaded_tool_outputs(tmp_path: Path) -> None:
    H["reset"]()
    for fn in ("run_weird", "run_huge", "run_threads"):
        code, _, err = cli(tmp_path, "record", ref(fn), "--input", json.dumps(H["INPUT"]), "--out", f"{fn}.jsonl")
        assert code == 0, err
        code, out, err = cli(tmp_path, "replay", f"{fn}.jsonl", ref(fn), "--out", f"{fn}.r.jsonl")
        assert code == 0 and "live calls (tools/network): 0" in out, out + err
    weird = next(s for s in read_trace(str(tmp_path / "run_weird.r.jsonl")).spans if s.parent_id is None)
    assert weird.data["output"]["when"] == "2026-05-04T09:15:00+00:00" and isinstance(weird.data["output"]["raw"], str)
    huge = next(s for s in read_trace(str(tmp_path / "run_huge.r.jsonl")).spans if s.parent_id is None)
    assert huge.data["output"] == 2_100_000
    threads = next(s for s in read_trace(str(tmp_path / "run_threads.r.jsonl")).spans if s.parent_id is None)
    assert threads.data["output"] == ["charged_twice"] * 4


def test_replaying_traces_of_other_formats(rec: Path, tmp_path: Path) -> None:
    sample = Path(AGENT).parents[3] / "sample_runs" / "order_lookup"
    code, _, err = cli(tmp_path, "replay", str(sample / "original.jsonl"), ref("run"), "--out", "a.jsonl")
    assert code == 2 and "--accept-schema-change" in err and not (tmp_path / "a.jsonl").exists()
    code, out, _ = cli(tmp_path, "replay", str(sample / "original.otlp.json"), ref("run"), "--out", "b.jsonl")
    assert "the recording has no clock" in out and "no tool-schema hash" in out
    (tmp_path / "keep.jsonl").write_text("precious\n")
    code, _, err = cli(tmp_path, "replay", str(sample / "original.jsonl"), ref("run"), "--out", "keep.jsonl", "--force")
    assert code == 2 and (tmp_path / "keep.jsonl").read_text() == "precious\n"


def test_replay_refuses_to_overwrite_its_own_recording(rec: Path, tmp_path: Path) -> None:
    (tmp_path / "orig.jsonl").write_bytes((rec / "orig.jsonl").read_bytes())
    code, _, _ = cli(tmp_path, "replay", "orig.jsonl", ref("run"), "--out", "orig.jsonl", "--force")
    assert code == 2
    assert (tmp_path / "orig.jsonl").read_bytes() == (rec / "orig.jsonl").read_bytes()
