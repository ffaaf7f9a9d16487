"""`tracetui record` / `tracetui replay` on the bundled scheduling agent, as a user runs them."""

from __future__ import annotations

import os
from pathlib import Path
import orjson
import pytest

from tracetui.core.readers import read_trace
from tests.builders import run_cli as cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_runs" / "scheduling"
AGENT = f"{SAMPLE / 'agent.py'}:run"
FIXED = f"{SAMPLE / 'agent.py'}:run_fixed"


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("TRACETUI_REDACTION_KEY", "TRACETUI_REDACTION_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def record_sample(project: Path) -> Path:
    out = project / "original.jsonl"
    code, stdout, err = cli("record", AGENT, "--input", f"@{SAMPLE / 'input.json'}", "--clock",
                            "2026-11-03T10:14:02+01:00", "--timezone", "Europe/Paris", "--out", str(out))
    assert code == 0, err
    return out


def test_record_creates_a_key_redacts_and_says_what_it_did(project: Path) -> None:
    out = record_sample(project)
    key = project / ".tracetui" / "redaction.key"
    assert key.exists() and (key.stat().st_mode & 0o777) == 0o600
    raw = out.read_bytes()
    assert b"jeanne.martin@example.com" not in raw and b"+33 6 12 34 56 78" not in raw
    assert b"14 rue des Tanneurs" not in raw  # declared sensitive by get_appointment, also where the agent quoted it
    trace = read_trace(str(out))
    assert trace.header["clock"] == {"now": "2026-11-03T10:14:02+01:00", "timezone": "Europe/Paris"}
    assert [s.data["tool_name"] for s in trace.spans if s.kind.value == "tool"] == ["get_appointment", "list_open_slots"]
    # A second record in the same project gives the same tokens (same key).
    code, stdout, _ = cli("record", AGENT, "--input", f"@{SAMPLE / 'input.json'}", "--out", str(project / "again.jsonl"),
                          "--format", "json")
    assert code == 0
    again = read_trace(str(project / "again.jsonl"))
    assert again.header["input"]["customer"] == trace.header["input"]["customer"]
    assert orjson.loads(stdout)["redaction"]["fired"]["email"] >= 1


def test_strict_replay_of_the_fixed_agent_misses_the_friday_lookup(project: Path) -> None:
    original = record_sample(project)
    code, stdout, err = cli("replay", str(original), FIXED, "--llm", "live", "--out", "replay.jsonl")
    assert code == 1, err
    assert "unrecorded_call" in stdout and '"date":"2026-11-06"' in stdout
    assert 'arguments.date: "2026-11-06" (recorded "2026-11-05")' in stdout
    assert "live calls (tools/network): 0" in stdout
    code, report, _ = cli("diff", str(original), "replay.jsonl", "--format", "json")
    assert code == 1
    first = orjson.loads(report)["first_divergence"]
    assert first["type"] == "input_mismatch" and first["row"] == 2
    types = [d["type"] for d in orjson.loads(report)["divergences"]]
    assert "unrecorded_call" in types


def test_fixture_replay_books_friday_and_reports_the_final_state(project: Path) -> None:
    original = record_sample(project)
    code, stdout, err = cli("replay", str(original), FIXED, "--llm", "live", "--mode", "fixture", "--seed-file",
                            str(SAMPLE / "fixture_seed.json"), "--out", "fixture.jsonl", "--format", "json")
    assert code == 0, err
    (run,) = orjson.loads(stdout)["runs"]
    appt = run["final_state"]["appointments"]["APT-77120"]
    assert (appt["date"], appt["start"], appt["end"]) == ("2026-11-06", "10:00", "12:00")
    assert [w["tool"] for w in run["writes"]] == ["reschedule_appointment", "send_confirmation"]
    paths = [c["path"] for c in run["changes"]]
    assert "state.appointments.APT-77120.date" in paths
    assert run["live_calls"] == 0


def test_frozen_replay_of_the_same_agent_reproduces_the_incident(project: Path) -> None:
    original = record_sample(project)
    code, stdout, _ = cli("replay", str(original), AGENT, "--out", "same.jsonl", "--trials", "2")
    assert code == 0
    assert "reproduction: 2 of 2 trials took the original's call path" in stdout
    code, _, _ = cli("diff", str(original), "same.jsonl#replay-1-of-" + read_trace(str(original)).header["run_id"])
    assert code == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["record", "nowhere.py:run", "--input", "{}", "--out", "x.jsonl"], "agent file nowhere.py not found"),
    (["record", "agent", "--input", "{}", "--out", "x.jsonl"], "expected module:function"),
    (["record", f"{SAMPLE / 'agent.py'}:nope", "--input", "{}", "--out", "x.jsonl"], "has no 'nope'"),
    (["record", AGENT, "--input", "{not json", "--out", "x.jsonl"], "--input is not JSON"),
    (["record", AGENT, "--input", "@missing.json", "--out", "x.jsonl"], "cannot read missing.json"),
    (["replay", "missing.jsonl", AGENT, "--out", "r.jsonl"], "missing.jsonl"),
    (["replay", "x.jsonl", AGENT, "--out", "r.jsonl", "--allow-live"], "--allow-live only applies to --mode loose"),
])
def test_bad_commands_say_what_is_wrong_without_a_traceback(project: Path, argv: list[str], message: str) -> None:
    code, stdout, err = cli(*argv)
    assert code == 2
    assert message in err and "Traceback" not in err and stdout == ""


def test_record_refuses_to_overwrite_and_leaves_the_file(project: Path) -> None:
    out = record_sample(project)
    before = out.read_bytes()
    code, _, err = cli("record", AGENT, "--input", f"@{SAMPLE / 'input.json'}", "--out", str(out))
    assert code == 2 and "exists" in err and "--force" in err
    assert out.read_bytes() == before


def test_an_agent_that_raises_on_import_is_named(project: Path) -> None:
    (project / "broken.py").write_text("import json\nraise RuntimeError('boom at import')\n")
    code, _, err = cli("record", "broken.py:run", "--input", "{}", "--out", "x.jsonl")
    assert code == 2
    assert "RuntimeError: boom at import" in err and "broken.py:2" in err
    assert not os.path.exists("x.jsonl")


def test_module_function_reference_is_found_from_the_current_folder(project: Path) -> None:
    (project / "tiny_agent.py").write_text(
        "READ_TOOLS = {'echo'}\nTOOLS = {'echo': lambda text: {'echo': text}}\n"
        "def run(ctx, input):\n    return ctx.tool('echo', {'text': input})\n")
    code, stdout, err = cli("record", "tiny_agent:run", "--input", '"hello"', "--out", "t.jsonl")
    assert code == 0, err
    code, stdout, _ = cli("replay", "t.jsonl", "tiny_agent:run", "--out", "t-replay.jsonl")
    assert code == 0 and "live calls (tools/network): 0" in stdout


def test_show_tells_a_replay_run_and_its_result() -> None:
    code, out, _ = cli("show", str(SAMPLE / "replay.jsonl"))
    assert code == 0
    assert "replay strict, LLM live, of run-2026-11-03-0042: diverged (unrecorded_call); misses 1" in out
    code, out, _ = cli("show", str(SAMPLE / "fixture.jsonl"), "--format", "json")
    info = orjson.loads(out)["runs"][0]["replay"]
    assert info["mode"] == "fixture" and info["diverged"] is False and info["writes"] == 2
    code, out, _ = cli("show", str(SAMPLE / "original.jsonl"), "--format", "json")
    assert orjson.loads(out)["runs"][0]["replay"] is None


def test_an_exception_without_a_message_is_named_and_exits_1(project: Path) -> None:
    """`StopIteration()` (str() is '') used to end record and replay with an internal error."""
    (project / "stops.py").write_text(
        "READ_TOOLS = {'get'}\nTOOLS = {'get': lambda: {'n': 1}}\n"
        "def run(ctx, input):\n    ctx.tool('get', {})\n    raise StopIteration()\n")
    code, out, err = cli("record", "stops.py:run", "--input", "{}", "--out", "stops.jsonl")
    assert code == 1, err
    assert "the agent raised StopIteration" in out and "Traceback" not in err
    code, out, err = cli("replay", "stops.jsonl", "stops.py:run", "--out", "stops-replay.jsonl")
    assert code == 0, err  # the replay reproduces the original's failure: no divergence
    assert "the agent raised StopIteration" in out and "internal error" not in err.lower()
    (project / "stops_in_replay.py").write_text(
        "READ_TOOLS = {'get'}\nTOOLS = {'get': lambda: {'n': 1}}\n"
        "def run(ctx, input):\n    ctx.tool('get', {})\n    if ctx.mode != 'record':\n        raise StopIteration()\n")
    code, out, err = cli("record", "stops_in_replay.py:run", "--input", "{}", "--out", "ok.jsonl")
    assert code == 0, err
    code, out, err = cli("replay", "ok.jsonl", "stops_in_replay.py:run", "--out", "new-failure.jsonl")
    assert code == 1, err  # a failure the original did not have
    assert "agent raised StopIteration (the original run did not fail)" in out


def test_replay_refuses_to_write_over_its_recording_in_a_folder_with_a_hash_in_its_name(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    """`runs#2/rec.jsonl` is a file (read_trace keeps the `#` of a path that exists): --out naming it too is the
    recording being replayed, refused before the program runs, the recording left as it was."""
    import io

    from tracetui.cli.main import main

    folder = tmp_path / "runs#2"
    folder.mkdir()
    rec = folder / "rec.jsonl"
    rec.write_text("not replayed\n")
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    code = main(["replay", "runs#2/rec.jsonl", "--out", "runs#2/rec.jsonl", "--force", "--", "python", "-c", "pass"],
                stdout=io.StringIO(), stderr=err)
    assert code == 2
    assert "is the recording being replayed" in err.getvalue()
    assert rec.read_text() == "not replayed\n"
