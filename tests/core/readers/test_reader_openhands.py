"""OpenHands reader: the corpus V0 trajectory, hand-made V0/V1 event lists, envelopes, bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import CORPUS, corpus, corpus_files

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError
from tracetui.core.model import Status
from tracetui.core.readers import read_runs, read_trace, sniff_format
from tracetui.core.readers.openhands import OpenHandsReader
from tracetui.core.readers.timefmt import iso_ns

TESTS = Path(__file__).resolve().parents[2]
DATA = TESTS / "data" / "openhands"
ROOT = TESTS.parent


def write(tmp_path: Path, content: Any, name: str = "t.json") -> Path:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else orjson.dumps(content))
    return p


def kinds(trace: Any) -> list[tuple[str, str]]:
    return [(s.kind.value, s.name) for s in trace.spans]


# --- corpus: tests/runtime/trajs/basic.json ------------------------------------------------------


def test_basic_json_maps_its_four_events_to_root_two_llm_calls_and_two_tool_calls() -> None:
    """SOURCES.md: 4 events, actions {message 1, edit 1, finish 1}, observations {edit 1}."""
    path = corpus("openhands/basic.json")
    assert sniff_format(path.read_bytes()[:65536]) == "openhands"
    t = read_trace(path)
    assert t.format == "openhands"
    assert kinds(t) == [("agent", "openhands"), ("llm", "chat claude-3-5-sonnet-20241022"),
                        ("tool", "execute_tool str_replace_editor"), ("llm", "chat claude-3-5-sonnet-20241022"),
                        ("tool", "execute_tool finish")]
    root, llm1, edit, llm2, fin = t.spans
    assert [s.seq for s in t.spans] == [0, 1, 2, 3, 4]
    assert all(s.parent_id == "root" for s in t.spans[1:]) and root.parent_id is None
    # the user message action is the run's input; the finish action's text its output
    assert root.data["input"].startswith("Please create a simple 2048 game.")
    assert root.data["output"].startswith("I've created a simple implementation of the 2048 game")
    assert t.header["input"] == root.data["input"]
    assert t.header["model"] == {"id": "claude-3-5-sonnet-20241022"}
    assert t.header["started_at"] == "2025-01-27T22:44:56.900854Z"
    # llm spans: one per model_response.id, usage and output from the completion
    assert llm1.data["response_id"] == "chatcmpl-6814daca-5c62-431d-8c88-9dafead244f1"
    assert llm1.data["usage"] == {"input_tokens": 3486, "output_tokens": 1135}
    assert llm1.data["finish_reason"] == "tool_call"
    assert llm1.data["output"]["tool_calls"][0]["id"] == "toolu_017nBp7UfiGqyrA7j77HgtFP"
    assert llm1.data["messages"] == [{"role": "user", "content": root.data["input"]}]
    assert [m["role"] for m in llm2.data["messages"]] == ["user", "assistant", "tool"]
    assert llm2.data["messages"][2]["tool_call_id"] == "toolu_017nBp7UfiGqyrA7j77HgtFP"
    assert llm2.data["usage"] == {"input_tokens": 4646, "output_tokens": 177}
    # the edit action: tool call arguments from the model response, output from the observation (cause 3)
    assert edit.span_id == "3"
    assert edit.data["tool_name"] == "str_replace_editor"
    assert edit.data["call_id"] == "toolu_017nBp7UfiGqyrA7j77HgtFP"
    assert edit.data["arguments"]["command"] == "create"
    assert edit.data["arguments"]["path"] == "/workspace/game_2048.py"
    assert edit.data["args_hash"] == args_hash(edit.data["arguments"])
    assert edit.data["output"].startswith("--- /workspace/game_2048.py\n+++ /workspace/game_2048.py")
    assert edit.status is Status.OK
    assert edit.start_ns == iso_ns("2025-01-27T22:45:13.764487") == 1738017913764487000
    assert edit.end_ns == 1738017913801384000
    # llm span: from the previous event to the action it produced
    assert (llm1.start_ns, llm1.end_ns) == (1738017896900854000, 1738017913764487000)
    assert fin.data["tool_name"] == "finish" and fin.data["arguments"] == {} and "output" not in fin.data
    # the only issue: no system prompt in this file (finish needs no observation)
    assert [(i.severity, i.message.split(":")[0]) for i in t.issues] == [("warning", "no system prompt recorded")]


# --- V0 hand-made: parallel calls, errors, orphan observation, agent message ----------------------


def test_v0_parallel_tool_calls_share_one_llm_span_and_each_get_their_own_observation() -> None:
    t = read_trace(DATA / "v0_parallel.json")
    assert kinds(t) == [("agent", "CodeActAgent"), ("llm", "chat gpt-4o-2024-08-06"),
                        ("tool", "execute_tool execute_bash"), ("tool", "execute_tool execute_bash"),
                        ("other", "observation run"), ("llm", "chat")]
    root, llm, ls, date, orphan, answer = t.spans
    assert llm.data["messages"] == [{"role": "system", "content": "You are OpenHands agent."},
                                    {"role": "user", "content": "List files and show the date."}]
    assert [c["id"] for c in llm.data["output"]["tool_calls"]] == ["call_a", "call_b"]
    assert llm.attributes["openhands.total_calls_in_response"] == 2
    # llm_metrics.response_latencies: the call started 1.25 s before the first action
    assert llm.end_ns == iso_ns("2025-03-01T10:00:04.25")
    assert llm.end_ns - llm.start_ns == 1_250_000_000
    # observations arrive in the other order; cause still pairs them
    assert (ls.data["arguments"], ls.data["output"]) == ({"command": "ls"},
                                                         "ls: cannot open directory '.': Permission denied")
    assert (ls.status, ls.error_type) == (Status.ERROR, "ErrorObservation")
    assert (date.data["arguments"], date.data["output"]) == ({"command": "date"}, "Sat Mar  1 10:00:05 UTC 2025")
    assert date.status is Status.OK and date.attributes["openhands.extras.metadata"] == {"exit_code": 0}
    # the orphan observation is kept and reported
    assert orphan.data == {"output": "orphan output"}
    assert [i.line for i in t.issues] == [7] and "cause 99" in t.issues[0].message
    # an agent message without tool call: an llm output, and the run's output (no finish)
    assert answer.data["output"] == {"role": "assistant", "content": "The listing failed; the date is Saturday."}
    assert [m.get("tool_call_id") for m in answer.data["messages"] if m["role"] == "tool"] == ["call_b", "call_a"]
    assert root.data["output"] == "The listing failed; the date is Saturday."
    h = t.header
    assert (h["agent"], h["code_version"]) == ("CodeActAgent", "0.39.0")
    assert h["tool_schema_hash"] == args_hash([{"type": "function", "function": {"name": "execute_bash"}}])
    assert h["outcome"] == {"agent_state": "awaiting_user_input"}


def test_v0_tool_call_without_observation_is_reported_once(tmp_path: Path) -> None:
    events = [
        {"id": 1, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "hi"}},
        {"id": 2, "timestamp": "2025-01-01T00:00:01", "source": "agent", "action": "run",
         "args": {"command": "sleep 100", "thought": "wait"}},
        {"id": 3, "timestamp": "2025-01-01T00:00:02", "source": "agent", "action": "read",
         "args": {"path": "/a", "thought": ""}},
    ]
    t = read_trace(write(tmp_path, events))
    # no tool_call_metadata (pre-function-calling CodeAct): an llm span per agent action, the thought as its output
    assert kinds(t) == [("agent", "openhands"), ("llm", "chat"), ("tool", "execute_tool run"), ("llm", "chat"),
                        ("tool", "execute_tool read")]
    assert t.spans[1].data["output"] == {"role": "assistant", "content": "wait"}
    assert t.spans[2].data["arguments"] == {"command": "sleep 100"}  # thought is not an argument
    waiting = [i for i in t.issues if "no observation" in i.message]
    assert len(waiting) == 1 and "2 tool call(s)" in waiting[0].message and waiting[0].severity == "warning"


def test_user_run_command_and_recall_become_tool_and_memory_spans(tmp_path: Path) -> None:
    events = [
        {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "go"}},
        {"id": 1, "timestamp": "2025-01-01T00:00:00.1", "source": "user", "action": "recall",
         "args": {"recall_type": "workspace_context", "query": "go", "thought": ""}},
        {"id": 2, "timestamp": "2025-01-01T00:00:00.2", "source": "environment", "observation": "recall",
         "cause": 1, "content": "Added workspace context", "extras": {"repo_name": "acme/app"}},
        {"id": 3, "timestamp": "2025-01-01T00:00:01", "source": "user", "action": "run", "args": {"command": "ls"}},
        {"id": 4, "timestamp": "2025-01-01T00:00:02", "source": "environment", "observation": "run", "cause": 3,
         "content": "a.txt", "extras": {}},
    ]
    t = read_trace(write(tmp_path, events))
    assert kinds(t) == [("agent", "openhands"), ("memory", "recall"), ("tool", "execute_tool run")]
    mem, run = t.spans[1:]
    assert mem.data == {"operation": "recall", "query": "go",
                        "value": {"content": "Added workspace context", "repo_name": "acme/app"}}
    assert (run.data["output"], "call_id" in run.data) == ("a.txt", False)
    assert t.issues == []  # no llm span, so no system-prompt warning either


# --- V1 SDK events --------------------------------------------------------------------------------


def test_v1_events_group_actions_by_llm_response_and_pair_observations_by_action_id() -> None:
    path = DATA / "v1_events.json"
    assert sniff_format(path.read_bytes()) == "openhands"
    t = read_trace(path)
    assert kinds(t) == [("agent", "openhands"), ("llm", "chat"), ("tool", "execute_tool terminal"),
                        ("tool", "execute_tool terminal"), ("tool", "execute_tool browser"), ("llm", "chat"),
                        ("tool", "execute_tool finish")]
    root, llm_a, df, du, browser, llm_b, fin = t.spans
    assert llm_a.data["output"] == {
        "role": "assistant", "content": "Two checks at once.", "reasoning_content": "df and du are independent.",
        "tool_calls": [{"id": "tc-1", "name": "terminal", "arguments": {"command": "df -h"}},
                       {"id": "tc-2", "name": "terminal", "arguments": {"command": "du -sh /nope"}}]}
    assert llm_a.data["messages"] == [{"role": "system", "content": "You are a helpful agent."},
                                      {"role": "user", "content": "Check the disk, then finish."}]
    assert llm_a.data["response_id"] == "resp-A"
    assert (df.span_id, df.data["output"], df.status) == ("e-a1", "/dev/sda1 50G", Status.OK)
    assert (du.data["output"], du.status, du.error_type) == ("du: /nope: No such file", Status.ERROR, "tool_error")
    # AgentErrorEvent with no ActionEvent: the LLM called a tool that does not exist
    assert (browser.data["call_id"], browser.status, browser.error_type) == ("tc-3", Status.ERROR, "AgentErrorEvent")
    assert "arguments" not in browser.data and browser.data["output"] == "Tool 'browser' not found."
    # the conversation the second call saw: the reasoning is not replayed, tool results are
    roles = [(m["role"], m.get("tool_call_id")) for m in llm_b.data["messages"]]
    assert roles == [("system", None), ("user", None), ("assistant", None), ("tool", "tc-1"), ("tool", "tc-2"),
                     ("tool", "tc-3")]
    assert "reasoning_content" not in llm_b.data["messages"][2]
    assert root.data["output"] == "Disk is fine; /nope does not exist."
    assert fin.data["arguments"] == {"message": "Disk is fine; /nope does not exist."}
    assert t.header["outcome"] == {"execution_status": "finished"}
    assert t.header["tool_schema_hash"] == args_hash([{"name": "terminal", "description": "Run a command"},
                                                      {"name": "finish", "description": "Finish"}])
    assert t.header["start_ns"] == 1759309200000001000  # microseconds kept exactly
    assert t.issues == []  # TokenEvent is known bookkeeping; finish needs no observation


def test_v1_unknown_kinds_are_counted_and_orphan_observations_kept(tmp_path: Path) -> None:
    events = [
        {"kind": "MessageEvent", "id": "u", "timestamp": "2025-01-01T00:00:00Z", "source": "user",
         "llm_message": {"role": "user", "content": [{"type": "text", "text": "q"}]}},
        {"kind": "FutureEvent", "id": "f1", "timestamp": "2025-01-01T00:00:01Z", "source": "agent"},
        {"kind": "FutureEvent", "id": "f2", "timestamp": "2025-01-01T00:00:02Z", "source": "agent"},
        {"kind": "ObservationEvent", "id": "o", "timestamp": "2025-01-01T00:00:03Z", "source": "environment",
         "tool_name": "t", "tool_call_id": "nope", "action_id": "missing",
         "observation": {"kind": "X", "content": "out", "is_error": False}},
        {"kind": "MessageEvent", "id": "a", "timestamp": "2025-01-01T00:00:04Z", "source": "agent",
         "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
         "llm_response_id": "r1"},
    ]
    t = read_trace(write(tmp_path, events))
    assert kinds(t) == [("agent", "openhands"), ("other", "ObservationEvent"), ("llm", "chat")]
    assert t.spans[0].data == {"agent_name": "openhands", "input": "q", "output": "answer"}
    msgs = sorted(i.message for i in t.issues)
    assert any("2 event(s) of unknown kind 'FutureEvent'" in m for m in msgs)
    assert any("answers no pending action" in m for m in msgs)


# --- envelopes ------------------------------------------------------------------------------------


def test_eval_output_jsonl_gives_one_run_per_instance_with_test_result_outcome() -> None:
    tf = read_runs(DATA / "eval_output.jsonl")
    assert tf.format == "openhands"
    assert [t.trace_id for t in tf.runs] == ["django-1", "django-2"]
    one, two = tf.runs
    assert one.header["model"] == {"id": "claude-sonnet-4"}  # metadata.llm_config
    assert one.header["agent"] == "CodeActAgent"
    assert one.header["outcome"]["test_result"] == {"resolved": True}
    assert two.spans[0].data["output"] == "gave up"  # finish.final_thought
    assert read_trace(DATA / "eval_output.jsonl", trace_id="django-2").spans[0].data["input"] == "Task django-2"


def test_trajectory_wrapper_of_the_server_export_is_read(tmp_path: Path) -> None:
    events = orjson.loads(corpus("openhands/basic.json").read_bytes())
    p = write(tmp_path, {"trajectory": events})
    assert sniff_format(p.read_bytes()) == "openhands"
    t = read_trace(p)
    assert len(t.spans) == 5 and t.spans[2].data["output"].startswith("--- /workspace/game_2048.py")
    assert t.issues[0].where == "$.trajectory"


def test_jsonl_of_events_is_one_run_with_real_line_numbers(tmp_path: Path) -> None:
    lines = [
        {"id": 1, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "x"}},
        {"id": 2, "timestamp": "nonsense", "source": "agent", "action": "finish", "args": {"final_thought": "y"}},
    ]
    body = b"\n".join(orjson.dumps(x) for x in lines) + b"\n" + b"{broken\n"
    t = read_trace(write(tmp_path, body, "t.jsonl"), format="openhands")
    assert t.spans[0].data == {"agent_name": "openhands", "input": "x", "output": "y"}
    assert t.spans[1].line == 2
    by_line = {(i.line, i.severity): i.message for i in t.issues}
    assert "not ISO 8601" in by_line[(2, "warning")]
    assert "not valid JSON" in by_line[(3, "skipped")]


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content, reason", [
    (b"", "empty"),
    (b"[{]", "no line of it is JSON"),
    (b'{"foo": [1, 2]}', "no OpenHands event list"),
    (b"42", "not an OpenHands event list"),
])
def test_files_with_nothing_to_load_raise_read_error(tmp_path: Path, content: bytes, reason: str) -> None:
    with pytest.raises(ReadError, match=reason):
        OpenHandsReader().read(str(write(tmp_path, content)), content)


def test_bad_events_are_skipped_and_named(tmp_path: Path) -> None:
    events = [
        {"id": 1, "timestamp": "2025-01-01T00:00:00", "source": "user", "action": "message", "args": {"content": "x"}},
        "junk",
        {"id": 3, "foo": 1},
    ]
    out = OpenHandsReader().read("f", orjson.dumps(events))
    assert [(i.where, i.severity) for i in out.issues] == [("$[1]", "skipped"), ("$[2]", "skipped")]
    assert out.runs[0].spans[0].data["input"] == "x"


# --- sniffing -------------------------------------------------------------------------------------


def _other_files() -> list[Path]:
    files = []  # the corpus: test_sniff_rejects_every_other_corpus_file
    files += [p for p in (TESTS / "data").rglob("*") if p.is_file() and p.parent.name != "openhands"]
    files += [p for p in (ROOT / "sample_runs").rglob("*") if p.is_file()]
    return files


def test_sniff_accepts_openhands_files_and_nothing_else() -> None:
    r = OpenHandsReader()
    others = _other_files()
    assert any("sample_runs" in p.parts for p in others)
    wrongly = [str(p) for p in others if r.sniff(p.read_bytes()[:65536])]
    assert wrongly == []
    for p in DATA.iterdir():
        assert r.sniff(p.read_bytes()[:65536]), p
    if (CORPUS / "openhands" / "basic.json").exists():
        assert r.sniff((CORPUS / "openhands" / "basic.json").read_bytes()[:65536])
    assert not r.sniff(b'[{"role": "user", "content": "the action \\"run\\" with args"}]')


def test_sniff_rejects_every_other_corpus_file() -> None:
    r = OpenHandsReader()
    assert [str(p) for p in corpus_files(outside="openhands") if r.sniff(p.read_bytes()[:65536])] == []
