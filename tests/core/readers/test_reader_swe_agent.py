"""SWE-agent reader: the three corpus trajectories (v1 function calling x2, legacy v0.x), the
marshmallow pair's first divergence, a hand-written file with query/exit steps, bad input, sniffing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import CORPUS, corpus, corpus_files

from tracetui.core.canonical import args_hash
from tracetui.core.diff import diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind
from tracetui.core.readers import read_trace, sniff_format
from tracetui.core.readers.swe_agent import SweAgentReader

TESTS = Path(__file__).resolve().parents[2]
DATA = TESTS / "data" / "swe_agent"
ROOT = TESTS.parent
FC = "swe-agent/marshmallow-1867__function_calling.traj"
FC_REPLACE = "swe-agent/marshmallow-1867__function_calling_replace.traj"
LEGACY = "swe-agent/pydicom-1458__legacy.traj"


def of_kind(trace: Any, kind: SpanKind) -> list[Any]:
    return [s for s in trace.spans if s.kind is kind]


def write(tmp_path: Path, value: Any) -> Path:
    p = tmp_path / "run.traj"
    p.write_bytes(value if isinstance(value, bytes) else orjson.dumps(value))
    return p


# --- corpus ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rel", "steps", "call_ids", "names"), [
    (FC, 11, 11, ["create", "edit", "bash", "bash", "find_file", "open", "edit", "edit", "bash", "bash", "submit"]),
    (FC_REPLACE, 11, 11, ["create", "insert", "bash", "bash", "find_file", "open", "edit", "edit", "bash", "bash", "submit"]),
    (LEGACY, 12, 0, ["create", "edit", "python", "find_file", "open", "edit", "edit", "edit", "edit", "python", "rm", "submit"]),
])
def test_corpus_counts_match_sources(rel: str, steps: int, call_ids: int, names: list[str]) -> None:
    """SOURCES.md: 11 / 11 / 12 steps, 11 / 11 / 0 tool_calls; one llm + one tool span a step."""
    t = read_trace(corpus(rel))
    assert t.format == "swe-agent" and t.issues == []
    assert [s.kind for s in t.spans] == [SpanKind.AGENT] + [SpanKind.LLM, SpanKind.TOOL] * steps
    assert [s.seq for s in t.spans] == list(range(1 + 2 * steps))
    tools = of_kind(t, SpanKind.TOOL)
    assert sum(1 for s in tools if s.data.get("call_id")) == call_ids
    assert [s.data["tool_name"] for s in tools] == names
    assert all(s.data["args_hash"] == args_hash(s.data["arguments"]) for s in tools)
    doc = orjson.loads(corpus(rel).read_bytes())
    assert [s.data["output"] for s in tools] == [step["observation"] for step in doc["trajectory"]]
    assert t.spans[0].data["output"] == doc["info"]["submission"]
    assert t.spans[0].data["input"].startswith("We're currently solving the following issue within our repository.")


def test_legacy_first_token_actions_match_sources() -> None:
    """SOURCES.md first-token actions of the legacy file; arguments are the whole command."""
    t = read_trace(corpus(LEGACY))
    tools = of_kind(t, SpanKind.TOOL)
    assert Counter(s.data["tool_name"] for s in tools) == {
        "create": 1, "edit": 5, "python": 2, "find_file": 1, "open": 1, "rm": 1, "submit": 1}
    first = tools[0]
    assert first.data == {"tool_name": "create", "arguments": {"command": "create reproduce_bug.py\n"},
                          "args_hash": args_hash({"command": "create reproduce_bug.py\n"}),
                          "output": "[File: /pydicom__pydicom/reproduce_bug.py (1 lines total)]\n1:\n"}
    assert first.attributes == {"state": {"open_file": "n/a", "working_dir": "/pydicom__pydicom"}}  # JSON string parsed
    assert t.trace_id is None and "run_id" not in t.header and t.header["agent"] == "swe_main"
    assert t.header["outcome"] == {"exit_status": "submitted", "total_cost": 1.26719, "instance_cost": 1.26719,
                                   "tokens_sent": 122612, "tokens_received": 1369, "api_calls": 12}
    llm0 = of_kind(t, SpanKind.LLM)[0]
    assert [m["role"] for m in llm0.data["messages"]] == ["system", "user", "user"]  # the demonstration is sent too
    assert llm0.data["messages"][1]["content"].startswith("Here is a demonstration")
    assert llm0.data["output"]["content"].endswith("```\ncreate reproduce_bug.py\n```")
    assert "model" not in llm0.data and llm0.name == "chat"


def test_function_calling_layout_spans_and_header() -> None:
    t = read_trace(corpus(FC))
    assert t.trace_id == "marshmallow-code__marshmallow-1867"
    root, llm0, tool0, llm1 = t.spans[:4]
    assert (root.name, root.data["agent_name"]) == ("swe-agent marshmallow-code__marshmallow-1867",
                                                    "marshmallow-code__marshmallow-1867")
    assert root.attributes["base_commit"] == "bfd2593d4b416122e30cdefe0c72d322ef471611"
    assert (llm0.span_id, llm0.name) == ("step-0-llm", "chat gpt-4o")
    assert llm0.data["model"] == "gpt-4o" and llm0.data["params"] == {"temperature": 1.0, "top_p": 1.0}
    assert [m["role"] for m in llm0.data["messages"]] == ["system", "user"]
    assert llm0.data["output"]["tool_calls"] == [{"id": "call_cyI71DYnRdoLHWwtZgIaW2wr", "name": "create",
                                                  "arguments": {"filename": "reproduce.py"}}]
    assert tool0.span_id == "step-0-tool" and tool0.name == "execute_tool create"
    assert tool0.data["call_id"] == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    assert tool0.attributes == {"action": "create reproduce.py", "duration_ns": 239636836,
                                "state": {"open_file": "/testbed/reproduce.py", "working_dir": "/testbed"}}
    # the next turn sees the tool message, linked by tool_call_ids
    assert llm1.data["messages"][3]["role"] == "tool"
    assert llm1.data["messages"][3]["tool_call_id"] == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    h = t.header
    assert h["run_id"] == "marshmallow-code__marshmallow-1867" and h["model"] == {"id": "gpt-4o"}
    assert h["outcome"] == {"exit_status": "submitted", "instance_cost": 0, "tokens_sent": 0,
                            "tokens_received": 0, "api_calls": 11}
    assert h["input"] == root.data["input"]
    assert h["tool_schema_hash"] != read_trace(corpus(FC_REPLACE)).header["tool_schema_hash"]


def test_marshmallow_pair_first_diverges_on_step_1_llm_output() -> None:
    """Both runs agree on step 0 (create reproduce.py); at step 1 the model chose `edit` in one tool
    config and `insert` in the other: the turn's output (its tool call) differs with equal inputs
    (decision_mismatch), placed at the turn's end, before the tool call it started."""
    a, b = read_trace(corpus(FC)), read_trace(corpus(FC_REPLACE))
    d = diff_traces(a, b)
    first = d.first
    assert first is not None and first.type.value == "decision_mismatch"
    assert first.original.span_id == "step-1-llm" and first.replay.span_id == "step-1-llm"
    assert first.fields[0].path == "llm.output.tool_calls[0].name"
    assert (first.fields[0].original, first.fields[0].replay) == ("edit", "insert")
    step0 = {"step-0-llm", "step-0-tool"}
    assert not [x for x in d.divergences if (x.original or x.replay).span_id in step0]
    step1_tool = [x.type.value for x in d.divergences if (x.original or x.replay).span_id == "step-1-tool"]
    assert sorted(step1_tool) == ["missing_call", "unrecorded_call"]


# --- hand-written ---------------------------------------------------------------------------------


def test_query_messages_string_config_and_an_exit_step() -> None:
    t = read_trace(DATA / "query_and_exit.traj")
    assert t.trace_id == "demo__repo-1" and t.header["agent"] == "main"
    assert t.header["model"] == {"id": "claude-3-5-sonnet"}
    assert t.header["tool_schema_hash"] == args_hash("bash: runs a command")
    assert [s.span_id for s in t.spans] == ["root", "step-0-llm", "step-0-tool", "step-1-llm", "step-1-tool", "step-2-llm"]
    llm0, tool0, llm1, tool1, llm2 = t.spans[1:]
    assert llm0.data["messages"] == [{"role": "system", "content": "You are a programmer."},
                                     {"role": "user", "content": "Fix bug 1."}]  # from the step's query
    assert llm0.data["params"] == {"temperature": 0.0}
    assert tool0.data["call_id"] == "call_1" and tool0.data["arguments"] == {"command": "ls -a"}
    assert tool0.data["output"] == "a.py\nb.py"  # the step's observation, not the history's prompt-wrapped copy
    # no query: the history before the linked turn
    assert llm1.data["messages"][3] == {"role": "tool", "content": "a.py\nb.py\n(Open file: n/a)", "tool_call_id": "call_1"}
    assert len(llm1.data["messages"]) == 4
    assert tool1.attributes["state"] == {"open_file": "/repo/a.py", "working_dir": "/repo"}
    assert tool1.attributes["duration_ns"] == 250_000_000 and tool1.data["output"] == "print(1)"
    # step 2 ran no action: no tool span; it has no history turn: warned, response as output
    assert llm2.data["output"] == {"role": "assistant", "content": "I give up."}
    assert len(llm2.data["messages"]) == 6 and llm2.attributes == {"observation": "Exited (autosubmitted)"}
    assert [(i.where, i.severity) for i in t.issues] == [("$.trajectory[2]", "warning")]
    assert t.header["outcome"]["exit_status"] == "exit_forfeit" and t.spans[0].data["output"] is None


def test_no_history_and_odd_steps(tmp_path: Path) -> None:
    doc = {"environment": "swe_main", "info": {"exit_status": "early_exit"},
           "trajectory": [{"action": "ls\n", "response": "```\nls\n```", "execution_time": "slow"}, "junk",
                          {"action": "pwd", "observation": "/", "thought": "where am I"}]}
    t = read_trace(write(tmp_path, doc))
    assert [s.span_id for s in t.spans] == ["root", "step-0-llm", "step-0-tool", "step-2-llm", "step-2-tool"]
    assert t.spans[1].data == {"messages": [], "output": {"role": "assistant", "content": "```\nls\n```"}}
    assert "output" not in t.spans[2].data and t.spans[2].attributes == {}
    assert t.spans[3].data["output"]["content"] == "where am I"
    assert [(i.where, i.severity) for i in t.issues] == [
        ("$.history", "warning"), ("$.trajectory[0].observation", "warning"), ("$.trajectory[1]", "skipped")]
    assert t.header == {"agent": "swe_main", "outcome": {"exit_status": "early_exit"}}


@pytest.mark.parametrize("content", [b"not json", b"[1]", b'{"trajectory": {}}', b'{"history": []}'])
def test_nothing_loadable_raises_read_error(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(ReadError):
        SweAgentReader().read(str(tmp_path / "x"), content)


# --- sniffing -------------------------------------------------------------------------------------


def test_sniff_accepts_trajectories_and_nothing_else() -> None:
    r = SweAgentReader()
    others = []  # the corpus: test_sniff_rejects_every_other_corpus_file
    others += [p for p in (TESTS / "data").rglob("*") if p.is_file() and p.parent.name != "swe_agent"]
    others += [p for p in (ROOT / "sample_runs").rglob("*") if p.is_file()]
    assert any("otlp" in p.parts for p in others) and any("sample_runs" in p.parts for p in others)
    assert [str(p) for p in others if r.sniff(p.read_bytes()[:65536])] == []
    for p in [*DATA.iterdir(), *(CORPUS / "swe-agent").glob("*.traj")]:
        assert r.sniff(p.read_bytes()[:65536]), p
        assert sniff_format(p.read_bytes()[:65536]) == "swe-agent", p
    assert not r.sniff(b'["trajectory", "history"]')
    assert r.sniff(b'{"environment": "main", "trajectory": [], "history": []}')
    assert r.sniff(b'\xef\xbb\xbf{"trajectory": [ {"response": "cut mid-')
    # an OpenHands server export wraps its events the same way; events open with "id"
    assert not r.sniff(b'{"trajectory": [{"id": 0, "source": "agent", "action": "run", "args": {}, "observation": "run"}]}')


def test_sniff_rejects_every_other_corpus_file() -> None:
    r = SweAgentReader()
    assert [str(p) for p in corpus_files(outside="swe-agent") if r.sniff(p.read_bytes()[:65536])] == []
