"""ATIF reader: the two corpus trajectories (v1.5, v1.4), a hand-made v1.7 file with embedded
subagents, envelopes and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import CORPUS, corpus, corpus_files

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers import read_runs, read_trace, sniff_format
from tracetui.core.readers.atif import AtifReader
from tracetui.core.readers.timefmt import iso_ns

TESTS = Path(__file__).resolve().parents[2]
DATA = TESTS / "data" / "atif"
ROOT = TESTS.parent


def write(tmp_path: Path, content: Any, name: str = "t.json") -> Path:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else orjson.dumps(content))
    return p


def kinds(trace: Any) -> list[tuple[str, str]]:
    return [(s.kind.value, s.name) for s in trace.spans]


def traj(*steps: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": i + 1, **s} for i, s in enumerate(steps)], **top}


# --- corpus ---------------------------------------------------------------------------------------


def test_harbor_openhands_six_steps_give_two_llm_calls_and_two_tool_calls() -> None:
    """SOURCES.md: ATIF-v1.5; 6 steps {system 3, user 1, agent 2}, 2 tool calls."""
    path = corpus("atif/harbor_openhands.json")
    assert sniff_format(path.read_bytes()[:65536]) == "atif"
    t = read_trace(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert t.format == "atif" and t.trace_id == "harbor-openhands-hello-world"
    assert kinds(t) == [("agent", "openhands"), ("llm", "chat"), ("tool", "execute_tool str_replace_editor"),
                        ("llm", "chat"), ("tool", "execute_tool finish")]
    root, llm1, edit, llm2, fin = t.spans
    # system and user steps are messages, not spans: 3 system + 1 user before the first agent step
    assert [m["role"] for m in llm1.data["messages"]] == ["system", "user", "system", "system"]
    assert llm1.data["messages"][1]["content"] == 'Create a file called hello.txt with "Hello, world!" as the content.\n'
    assert llm1.data["output"]["tool_calls"] == [{"id": "call_fake_1", "name": "str_replace_editor", "arguments": {
        "command": "create", "path": "/app/hello.txt", "file_text": "Hello, world!", "security_risk": "LOW"}}]
    assert llm1.data["usage"] == {"input_tokens": 100, "output_tokens": 50}
    assert llm1.attributes["atif.metrics.cost_usd"] == 0.00075
    assert "model" not in llm1.data  # neither the step nor the agent names one
    assert [(m["role"], m.get("tool_call_id")) for m in llm2.data["messages"][4:]] == [("assistant", None),
                                                                                     ("tool", "call_fake_1")]
    assert (edit.span_id, edit.data["call_id"], edit.status) == ("call_fake_1", "call_fake_1", Status.OK)
    assert edit.data["output"] == "File created successfully at: /app/hello.txt"
    assert fin.data["arguments"] == {"message": "Task complete. Created /app/hello.txt with 'Hello, world!'"}
    assert "output" not in fin.data
    assert root.data == {"agent_name": "openhands", "input": llm1.data["messages"][1]["content"],
                         "output": "All done! What's next on the agenda?"}
    h = t.header
    assert (h["run_id"], h["agent"], h["code_version"]) == ("harbor-openhands-hello-world", "openhands", "1.1.0")
    assert h["tool_schema_hash"] == args_hash(doc["agent"]["tool_definitions"])
    assert h["outcome"] == {"total_prompt_tokens": 220, "total_completion_tokens": 80, "total_cost_usd": 0.00135}
    assert "model" not in h and "start_ns" not in h  # no model name, no timestamps in this file
    assert root.attributes["atif.agent.extra.agent_class"] == "CodeActAgent"
    assert t.issues == []  # the finish call is terminal: no result expected


def test_multi_tool_trajectory_keeps_parallel_calls_in_order_each_with_its_result() -> None:
    """SOURCES.md: ATIF-v1.4; 5 steps {user 1, agent 3, system 1}, 4 tool calls."""
    t = read_trace(corpus("atif/multi_tool_trajectory.json"))
    assert kinds(t) == [("agent", "research-analyst"), ("llm", "chat gpt-4-turbo"),
                        ("tool", "execute_tool financial_search"), ("tool", "execute_tool financial_search"),
                        ("tool", "execute_tool news_search"), ("llm", "chat gpt-4-turbo"),
                        ("tool", "execute_tool analyst_estimates"), ("llm", "chat gpt-4-turbo")]
    tools = [s for s in t.spans if s.kind is SpanKind.TOOL]
    assert [s.data["call_id"] for s in tools] == ["call_fin_aapl", "call_fin_msft", "call_news", "call_analyst"]
    assert [s.seq for s in tools[:3]] == [2, 3, 4]
    aapl, msft, news, _ = tools
    assert aapl.data["arguments"] == {"ticker": "AAPL", "metric": "quarterly_revenue", "period": "latest"}
    assert aapl.data["output"].startswith("Apple Inc. (AAPL) Q4 2024 revenue: $94.9 billion")
    assert msft.data["output"].startswith("Microsoft Corp. (MSFT) Q2 FY2025 revenue: $69.6 billion")
    assert news.data["output"].startswith("1. 'Apple announces new AI partnership")
    assert all(s.status is Status.OK for s in tools)
    llm1, llm2, llm3 = (s for s in t.spans if s.kind is SpanKind.LLM)
    assert llm1.data["output"]["reasoning_content"].startswith("The user wants two things")
    assert [c["id"] for c in llm1.data["output"]["tool_calls"]] == ["call_fin_aapl", "call_fin_msft", "call_news"]
    # the second call saw: user, assistant (3 calls), 3 tool results in order, the system reminder
    assert [(m["role"], m.get("tool_call_id")) for m in llm2.data["messages"]] == [
        ("user", None), ("assistant", None), ("tool", "call_fin_aapl"), ("tool", "call_fin_msft"),
        ("tool", "call_news"), ("system", None)]
    assert "reasoning_content" not in llm2.data["messages"][1]
    assert llm3.data["usage"] == {"input_tokens": 4100, "output_tokens": 380}
    assert "tool_calls" not in llm3.data["output"]
    assert llm1.start_ns == iso_ns("2025-01-15T14:00:03Z") == 1736949603000000000
    root = t.spans[0]
    assert (root.start_ns, root.end_ns) == (1736949600000000000, 1736949614000000000)
    assert root.data["output"].startswith("Here is a comparison of the latest quarterly revenue")
    assert t.header["model"] == {"id": "gpt-4-turbo"}
    assert t.header["started_at"] == "2025-01-15T14:00:00Z"
    assert t.header["outcome"]["total_steps"] == 5
    assert t.issues == []


# --- v1.7 hand-made: subagents, copied context, deterministic dispatch ----------------------------


def test_v17_embedded_subagent_nests_under_the_tool_call_that_spawned_it() -> None:
    t = read_trace(DATA / "v17_subagents.json")
    by_id = {s.span_id: s for s in t.spans}
    sub = by_id["researcher-1/root"]
    assert (sub.kind, sub.name, sub.parent_id) == (SpanKind.AGENT, "researcher", "c-research")
    assert sub.data == {"agent_name": "researcher", "input": "research", "output": "Root cause: off-by-one."}
    # the subagent's own spans follow it, under it; a call id reused inside it stays unique
    order = [s.span_id for s in t.spans]
    assert order.index("c-research") < order.index("researcher-1/root") < order.index("researcher-1/step-2") \
        < order.index("researcher-1/c-research") < order.index("researcher-1/step-3") < order.index("c-fix")
    assert by_id["researcher-1/c-research"].parent_id == "researcher-1/root"
    assert by_id["researcher-1/step-2"].data["model"] == "claude-haiku-4-5"
    # the unreferenced subagent: shown under the root at the end, reported
    assert by_id["unused-1/root"].parent_id == "root" and order[-2:] == ["unused-1/root", "unused-1/step-1"]
    msgs = [i.message for i in t.issues]
    assert any("referenced by no step" in m for m in msgs)
    # a file reference cannot be followed: kept on the span, reported
    note = by_id["step-4-result-2"]
    assert note.attributes["atif.subagent_trajectory_ref"] == [{"trajectory_path": "s3://bucket/other.json"}]
    assert any("s3://bucket/other.json" in m for m in msgs)


def test_v17_results_calls_copied_context_and_dispatch_steps() -> None:
    t = read_trace(DATA / "v17_subagents.json")
    top = [s for s in t.spans if "/" not in s.span_id]
    assert [(s.kind.value, s.name) for s in top] == [
        ("agent", "planner"), ("llm", "chat claude-sonnet-4-5"), ("tool", "execute_tool spawn_agent"),
        ("tool", "execute_tool lint"), ("other", "observation"), ("other", "observation"),
        ("tool", "execute_tool apply_patch"), ("llm", "chat claude-sonnet-4-5")]
    root, llm4 = top[0], top[1]
    # copied context: messages only, and neither the input nor the times of the run
    assert [m["content"] for m in llm4.data["messages"]] == ["Old question", "Old answer",
                                                              "Research the bug.\nThen fix it."]
    assert root.data["input"] == "Research the bug.\nThen fix it."  # ContentPart texts joined
    assert root.start_ns == iso_ns("2026-01-10T09:00:00Z")
    assert llm4.data["params"] == {"reasoning_effort": "high"}
    # llm_call_count 0: a tool span, no llm span; its list-of-parts result becomes text
    patch = next(s for s in top if s.span_id == "c-fix")
    assert patch.data["output"] == "patched"
    assert not any(s.span_id == "step-5" for s in t.spans)
    # a result naming no call of its step, and a call without result: both reported
    ghost = next(s for s in top if s.span_id == "step-4-result-1")
    assert ghost.data == {"output": "who called me?"}
    issues = {i.message.split(",")[0]: i for i in t.issues}
    assert issues["result names tool call 'c-ghost'"].where == "$.steps[3].observation.results[1].source_call_id"
    assert any("1 tool call(s) have no observation result: c-lint (lint)" in i.message for i in t.issues)
    lint = next(s for s in top if s.span_id == "c-lint")
    assert lint.status is Status.UNSET and "output" not in lint.data
    assert t.header["model"] == {"id": "claude-sonnet-4-5"}
    assert t.header["run_id"] == "run-77"


# --- envelopes ------------------------------------------------------------------------------------


def test_a_list_and_jsonl_of_trajectories_give_one_run_each_with_unique_ids(tmp_path: Path) -> None:
    a = traj({"source": "user", "message": "one"}, {"source": "agent", "message": "1"})
    b = traj({"source": "user", "message": "two"}, {"source": "agent", "message": "2"})
    tf = read_runs(write(tmp_path, [a, b]))
    assert [t.trace_id for t in tf.runs] == ["s", "s-2"]
    body = orjson.dumps(a) + b"\n" + orjson.dumps(b) + b"\n"
    tf = read_runs(write(tmp_path, body, "t.jsonl"))
    assert [t.spans[0].data["output"] for t in tf.runs] == ["1", "2"]
    assert [t.spans[0].line for t in tf.runs] == [1, 2]


def test_duplicate_result_and_unknown_source_are_reported(tmp_path: Path) -> None:
    doc = traj({"source": "user", "message": "go"},
               {"source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "f", "arguments": "{\"x\": 1}"}],
                "observation": {"results": [{"source_call_id": "c1", "content": "a"},
                                            {"source_call_id": "c1", "content": "b"}]}},
               {"source": "robot", "message": "?"})
    t = read_trace(write(tmp_path, doc))
    tool = t.spans[2]
    assert (tool.data["arguments"], tool.data["output"]) == ({"x": 1}, "a")  # JSON-string arguments parsed
    assert t.spans[1].data["output"] == {"role": "assistant", "content": None,
                                         "tool_calls": [{"id": "c1", "name": "f", "arguments": {"x": 1}}]}
    assert kinds(t)[-1] == ("other", "observation") and t.spans[-1].data["output"] == "b"
    wheres = {i.where: i.severity for i in t.issues}
    assert wheres == {"$.steps[1].observation.results[1].source_call_id": "warning", "$.steps[2].source": "skipped"}


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content, reason", [
    (b"", "empty"),
    (b"{nope", "not valid JSON"),
    (b'{"schema_version": "ATIF-v1.5", "steps": 3}', "no ATIF trajectory"),
    (b'"text"', "not an ATIF trajectory"),
])
def test_files_with_nothing_to_load_raise_read_error(tmp_path: Path, content: bytes, reason: str) -> None:
    with pytest.raises(ReadError, match=reason):
        AtifReader().read(str(write(tmp_path, content)), content)


def test_wrong_schema_version_is_read_with_a_warning(tmp_path: Path) -> None:
    doc = traj({"source": "user", "message": "hi"}, {"source": "agent", "message": "yo", "timestamp": "bad"})
    doc["schema_version"] = "v2"
    t = read_trace(write(tmp_path, doc), format="atif")
    assert t.spans[0].data["output"] == "yo"
    assert [(i.where, i.severity) for i in t.issues] == [("$.schema_version", "warning"),
                                                         ("$.steps[1].timestamp", "warning")]


# --- sniffing -------------------------------------------------------------------------------------


def test_sniff_accepts_atif_files_and_nothing_else() -> None:
    r = AtifReader()
    others = []  # the corpus: test_sniff_rejects_every_other_corpus_file
    others += [p for p in (TESTS / "data").rglob("*") if p.is_file() and p.parent.name != "atif"]
    others += [p for p in (ROOT / "sample_runs").rglob("*") if p.is_file()]
    assert any("otlp" in p.parts for p in others) and any("sample_runs" in p.parts for p in others)
    assert [str(p) for p in others if r.sniff(p.read_bytes()[:65536])] == []
    for p in [*DATA.iterdir(), *(CORPUS / "atif").glob("*.json")]:
        assert r.sniff(p.read_bytes()[:65536]), p
        assert sniff_format(p.read_bytes()[:65536]) == "atif", p
    assert not r.sniff(b'schema_version "ATIF-v1.5"')


def test_sniff_rejects_every_other_corpus_file() -> None:
    r = AtifReader()
    assert [str(p) for p in corpus_files(outside="atif") if r.sniff(p.read_bytes()[:65536])] == []
