"""The zero-code entry: ``tracetui record -- python app.py`` and ``tracetui replay REC -- python app.py``
run unchanged programs (tests/integrations/apps/) as real subprocesses of the real CLI, against the
real local model server and the real stdio MCP server.

Each replay counts what reached a live system: the model server's hits (model calls and the
``/api`` endpoints the tools call) and the MCP server's log of ``tools/call`` requests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracetui.core.readers import read_trace

APPS = Path(__file__).resolve().parent / "apps"
RAW_APP = str(APPS / "raw_openai_app.py")
MCP_APP = str(APPS / "mcp_app.py")


@pytest.fixture
def cli(tmp_path, monkeypatch, model_server, mcp_log):
    """``cli(*args)``: run ``python -m tracetui ARGS`` in tmp_path with the servers' addresses in
    the environment; returns the CompletedProcess (text)."""
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ, OPENAI_BASE_URL=model_server.base_url_openai, OPENAI_API_KEY="test",
               TRACETUI_TEST_MCP_LOG=str(mcp_log))
    env.pop("TRACETUI_AUTOPATCH", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tracetui", *args], env=env, capture_output=True, text=True,
                              timeout=180)

    return run


def mcp_calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def check_round_trip(cli, server, mcp_log, app: str, record_opts: list[str], *, stream: bool) -> None:
    """record -> frozen replay (no live call, tracetui diff exit 0) -> live-model replay with
    another city (exit 1, unrecorded_call naming the recorded call)."""
    extra = ["--stream"] if stream else []
    rec = cli("record", *record_opts, "--out", "rec.jsonl", "--", "python", app, *extra)
    assert rec.returncode == 0, rec.stderr
    assert "Report sent for Paris." in rec.stdout              # the program's own stdout
    assert "tracetui: recorded rec.jsonl: 3 model calls, 2 tool calls" in rec.stderr
    spans = read_trace("rec.jsonl").spans
    assert [s.data["tool_name"] for s in spans if s.kind.value == "tool"] == ["get_weather", "send_report"]
    root = next(s for s in spans if s.parent_id is None)
    assert root.data["output"] == {"exit_code": 0} and root.data["input"] == {"argv": extra}

    server.clear_hits()
    log_before = len(mcp_calls(mcp_log))
    rep = cli("replay", "rec.jsonl", "--out", "replay.jsonl", "--", "python", app, *extra)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert "Report sent for Paris." in rep.stdout
    assert "completed; reads served 1, misses 0, writes intercepted 1, LLM outputs served 3, live calls (tools/network): 0" in rep.stdout
    assert "write #1 intercepted: send_report" in rep.stdout
    assert "blocked network call" not in rep.stdout
    assert server.hits == []                                   # no model call, no /api call
    assert len(mcp_calls(mcp_log)) == log_before               # no tools/call reached the MCP server
    diff = cli("diff", "rec.jsonl", "replay.jsonl")
    assert diff.returncode == 0, diff.stdout

    server.city = "Lyon"
    server.clear_hits()
    live = cli("replay", "rec.jsonl", "--llm", "live", "--out", "live.jsonl", "--", "python", app, *extra)
    assert live.returncode == 1, live.stdout + live.stderr
    assert "diverged;" in live.stdout and "unrecorded_call" in live.stdout
    assert 'unrecorded call get_weather {"city":"Lyon"}' in live.stdout
    assert 'get_weather {"city":"Paris"}' in live.stdout       # the nearest recorded call
    assert server.hit_count("/api/") == 0 and server.model_calls == 1
    assert len(mcp_calls(mcp_log)) == log_before


@pytest.mark.parametrize("stream", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_raw_openai_program_recorded_and_replayed_unchanged(cli, model_server, mcp_log, stream):
    check_round_trip(cli, model_server, mcp_log, RAW_APP, ["--read-tools", "get_weather"], stream=stream)


@pytest.mark.slow
@pytest.mark.parametrize("stream", [False, True])
def test_mcp_program_recorded_and_replayed_unchanged(cli, model_server, mcp_log, stream):
    # no --read-tools: get_weather is a read on the MCP server's readOnlyHint alone
    check_round_trip(cli, model_server, mcp_log, MCP_APP, [], stream=stream)
    header = read_trace("rec.jsonl").header
    assert header["hinted_read_tools"] == ["get_weather"]


def test_exit_code_and_uncaught_exception_are_the_programs(cli):
    rec = cli("record", "--out", "exit.jsonl", "--", "python", "-c", "import sys; print('hi'); sys.exit(3)")
    assert rec.returncode == 3 and rec.stdout == "hi\n"
    root = next(s for s in read_trace("exit.jsonl").spans if s.parent_id is None)
    assert root.status.value == "error" and root.error_type == "SystemExit"
    rep = cli("replay", "exit.jsonl", "--out", "exit-replay.jsonl", "--", "python", "-c",
              "import sys; print('hi'); sys.exit(3)")
    assert rep.returncode == 0, rep.stdout  # exited as recorded: no divergence
    other = cli("replay", "exit.jsonl", "--out", "exit-other.jsonl", "--", "python", "-c", "print('hi')")
    assert other.returncode == 1 and "exited with 0; the recorded run exited with 3" in other.stdout

    boom = cli("record", "--out", "boom.jsonl", "--", "python", "-c", "raise ValueError('boom')")
    assert boom.returncode == 1
    assert "ValueError: boom" in boom.stderr and "autopatch" not in boom.stderr  # the program's traceback only
    root = next(s for s in read_trace("boom.jsonl").spans if s.parent_id is None)
    assert root.error_type == "ValueError" and root.data["output"]["message"] == "boom"


def test_tracetui_errors_exit_2_before_the_program_runs(cli, tmp_path):
    marker = tmp_path / "ran"
    program = ["python", "-c", f"open({str(marker)!r}, 'w')"]
    missing = cli("replay", "nope.jsonl", "--", *program)
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr
    (tmp_path / "rec.jsonl").write_text("")
    exists = cli("record", "--", *program)  # --out defaults to rec.jsonl, which exists
    assert exists.returncode == 2 and "--force" in exists.stderr
    not_python = cli("record", "--out", "x.jsonl", "--", "ls", "-l")
    assert not_python.returncode == 2 and "Python program" in not_python.stderr
    bad_mode = cli("replay", "rec.jsonl", "--mode", "fixture", "--", *program)
    assert bad_mode.returncode == 2
    assert not marker.exists()


def test_the_agent_forms_are_unchanged(cli):
    """``tracetui record AGENT`` (no ``--``) still parses as before: its required options are asked for."""
    old = cli("record", "my_agent.py:run")
    assert old.returncode == 2 and "--input" in old.stderr
    helped = cli("record", "-h", "--", "python")
    assert helped.returncode == 0 and "-- python app.py ARGS" in helped.stdout


def test_a_program_using_both_sdks_has_both_patched(cli, model_server):
    """openai imported first, anthropic later: each is patched when it is imported (one integration,
    clients, serves both), so both model calls are recorded and served in replay."""
    code = (
        "import openai\n"
        "a = openai.OpenAI(max_retries=0).chat.completions.create(model='gpt-test', messages=[{'role': 'user', "
        "'content': 'hi'}]).choices[0].message.content\n"
        "import anthropic\n"
        f"b = anthropic.Anthropic(base_url={model_server.url!r}, api_key='test', max_retries=0).messages.create("
        "model='claude-test', max_tokens=64, messages=[{'role': 'user', 'content': 'hi'}]).content[0].text\n"
        "print(a, '|', b)\n")
    rec = cli("record", "--out", "both.jsonl", "--", "python", "-c", code)
    assert rec.returncode == 0, rec.stderr
    llm = [s for s in read_trace("both.jsonl").spans if s.kind.value == "llm"]
    assert [s.data["provider"] for s in llm] == ["openai", "anthropic"]
    model_server.clear_hits()
    rep = cli("replay", "both.jsonl", "--out", "both-replay.jsonl", "--", "python", "-c", code)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert rep.stdout.splitlines()[0] == rec.stdout.splitlines()[0]
    assert model_server.hits == []


def test_a_program_that_cannot_start_records_nothing(cli, tmp_path):
    for program in (["python", "nope.py"], ["python", "-m", "no_such_module_here"]):
        out = cli("record", "--out", "miss.jsonl", "--", *program)
        assert out.returncode == 2, out.stderr
        assert "nothing was recorded" in out.stderr and "Traceback" not in out.stderr
        assert not (tmp_path / "miss.jsonl").exists()
    out = cli("record", "--out", "x.jsonl", "--")
    assert out.returncode == 2 and "give the program after --" in out.stderr
    out = cli("replay", "x.jsonl", "--allow-live", "--out", "y.jsonl", "--", "python", "-c", "pass")
    assert out.returncode == 2 and "--allow-live only applies to --mode loose" in out.stderr


def test_triage_of_a_zero_code_recording_says_how_to_replay_it(cli, model_server):
    rec = cli("record", "--read-tools", "get_weather", "--out", "rec.jsonl", "--", "python", RAW_APP)
    assert rec.returncode == 0, rec.stderr
    assert read_trace("rec.jsonl").header["agent_ref"] == RAW_APP
    out = cli("triage", "rec.jsonl")
    assert f"tracetui replay rec.jsonl --llm live --out replay.jsonl -- python {RAW_APP}" in out.stdout, out.stdout
