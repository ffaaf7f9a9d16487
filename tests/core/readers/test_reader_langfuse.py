"""Langfuse reader: the five corpus exports (UI download) and a hand-written public-API trace."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus, corpus_files

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers import read_trace, sniff_format
from tracetui.core.readers.langfuse import LangfuseReader
from mutate import odd_value_outcomes

DATA = Path(__file__).resolve().parents[2] / "data" / "langfuse"
REPO = Path(__file__).resolve().parents[3]
READER = LangfuseReader()
LLM, TOOL, AGENT, OTHER = SpanKind.LLM, SpanKind.TOOL, SpanKind.AGENT, SpanKind.OTHER


def read(name: str) -> Any:
    return read_trace(corpus(f"langfuse/{name}.trace.json"))


def by_id(trace: Any) -> dict[str, Any]:
    return {s.span_id: s for s in trace.spans}


# --- counts and kinds per corpus file (SOURCES.md) ---------------------------------------------


@pytest.mark.parametrize(("name", "count", "kinds"), [
    # AGENT x2 (OpenInference AGENT), GENERATION x2, TOOL x1
    ("openai-agents-2025-09-30", 5, {AGENT: 2, LLM: 2, TOOL: 1}),
    # langfuse-sdk root (no OTel attributes: SPAN -> other), 3 agent runs (gen_ai.agent.name),
    # "running 3 tools" (other), 4 chats, 3 tools
    ("pydantic-ai-tools-2025-12-04", 12, {OTHER: 2, AGENT: 3, LLM: 4, TOOL: 3}),
    ("microsoft-agent-2025-12-17", 4, {AGENT: 1, LLM: 2, TOOL: 1}),
    # create_agent + invoke_agent, 5 koog nodes (no kind attribute: other), 2 chats, 2 tools
    ("koog-2025-08-26", 11, {AGENT: 2, OTHER: 5, LLM: 2, TOOL: 2}),
    # 24 SPANs by OpenInference kind: 17 AGENT (react events), 3 CHAIN (iterations), 3 TOOL, 1 root AGENT;
    # 5 GENERATIONs (LLM)
    ("beeai-2025-08-01", 29, {AGENT: 18, OTHER: 3, TOOL: 3, LLM: 5}),
])
def test_observation_count_and_kinds_per_file(name: str, count: int, kinds: dict[SpanKind, int]) -> None:
    trace = read(name)
    assert trace.format == "langfuse"
    assert len(trace.spans) == count
    assert Counter(s.kind for s in trace.spans) == kinds
    assert [s.seq for s in trace.spans] == list(range(count))
    roots = [s for s in trace.spans if s.parent_id is None]
    assert len(roots) == 1 and roots[0] is trace.spans[0]
    assert not [i for i in trace.issues if i.severity == "skipped" or i.where == "parent_id"]
    doc = json.loads(corpus(f"langfuse/{name}.trace.json").read_text())
    assert trace.trace_id == doc["trace"]["id"] == trace.header["run_id"]
    assert all(s.trace_id == trace.trace_id for s in trace.spans)
    assert trace.header["start_ns"] is not None and trace.header["agent"] == doc["trace"]["name"]


def test_openai_agents_order_by_start_time_tool_and_generations() -> None:
    trace = read("openai-agents-2025-09-30")
    # File order is root, agent, 2nd response, 1st response, tool: ordered by startTime instead.
    assert [s.span_id for s in trace.spans] == [
        "e5a76f27f51ad40e", "d950b668796240b5", "98870087af69bf06", "5b99c3e3411ed17b", "90d94774e8e3724d"]
    spans = by_id(trace)
    tool = spans["5b99c3e3411ed17b"]
    assert tool.kind is TOOL and tool.parent_id == "d950b668796240b5"
    assert (tool.tool_name, tool.data["arguments"], tool.data["output"]) == (
        "get_weather", {"city": "Tokyo"}, "The weather in Tokyo is sunny.")
    assert tool.start_ns == tool.end_ns == 1759223041000000000
    second = spans["90d94774e8e3724d"]
    assert second.data["model"] == "gpt-4.1-2025-04-14"
    assert [m["role"] for m in second.data["messages"]] == ["system", "user", "assistant", "tool"]
    assert second.data["output"]["content"].startswith("The weather in Tokyo is currently sunny")
    assert second.start_ns == 1759223041001000000 and second.end_ns == 1759223042151000000
    assert spans["d950b668796240b5"].data["agent_name"] == "Hello world"  # AGENT observation: its name
    assert tool.attributes["langfuse.type"] == "TOOL"
    assert tool.attributes["otel.scope.name"] == "openinference.instrumentation.openai_agents"
    assert trace.header["outcome"] == {"scores": [{"name": "toxicity", "value": 0.8, "source": "EVAL"},
                                                  {"name": "hallucination", "value": 0, "source": "EVAL"}]}
    assert trace.issues == []


def test_microsoft_agent_lifted_input_output_are_put_back() -> None:
    """Langfuse moved gen_ai.input/output.messages and the tool arguments/result out of the
    attributes into the observation's input/output; the reader reads them from there."""
    spans = by_id(read("microsoft-agent-2025-12-17"))
    tool = spans["a2de97aac476c036"]
    assert tool.data == {
        "tool_name": "get_weather", "call_id": "call_CwaJHuXTm9dmHFQPlVbqyzJ0",
        "arguments": {"location": "Tokyo, Japan"}, "args_hash": args_hash({"location": "Tokyo, Japan"}),
        "output": "The weather in Tokyo, Japan is stormy with a high of 23\u00b0C."}
    assert "gen_ai.tool.call.arguments" not in tool.attributes
    first = spans["2406e8343fd49c0e"]
    assert first.kind is LLM and (first.data["model"], first.data["provider"]) == ("gpt-5-mini", "openai")
    assert first.data["messages"] == [{"role": "user", "content": "What's the weather in Tokyo?"}]
    assert first.data["output"]["tool_calls"] == [
        {"id": "call_CwaJHuXTm9dmHFQPlVbqyzJ0", "name": "get_weather", "arguments": {"location": "Tokyo, Japan"}}]
    assert first.data["usage"] == {"input_tokens": 77, "output_tokens": 86}
    agent = spans["4cd6caa32861956a"]
    assert agent.data["agent_name"] == "171105b7-59dd-49c0-9677-0b95395aa46a"
    assert [m["role"] for m in agent.data["input"]] == ["system", "user"]
    assert [m["role"] for m in agent.data["output"]] == ["assistant", "tool", "assistant"]


def test_pydantic_ai_tools_generation_and_sdk_span_without_attributes() -> None:
    trace = read("pydantic-ai-tools-2025-12-04")
    tools = [s for s in trace.spans if s.kind is TOOL]
    assert [t.tool_name for t in tools] == ["get_pun_suggestion", "get_dad_joke_suggestion", "get_one_liner_suggestion"]
    assert all(t.data["arguments"] == {"topic": "programming"} for t in tools)
    assert tools[0].data["output"].startswith("Pun idea: Play on words")
    assert tools[0].data["call_id"] == "call_X0OSgjUukT5inyEQvuZQnHrk"
    gen = by_id(trace)["be64c23f44dd98be"]  # metadata is an object here, input a native list
    assert gen.data["model"] == "gpt-4o-mini" and gen.data["params"] == {"temperature": 0.7}
    assert [m["role"] for m in gen.data["messages"]] == ["system", "user"]
    assert [c["name"] for c in gen.data["output"]["tool_calls"]] == [t.tool_name for t in tools]
    root = trace.spans[0]
    assert (root.name, root.kind) == ("run_joke_generator", OTHER)
    assert root.data["input"] == {"args": ["programming"], "kwargs": {}}
    assert root.data["output"]["joke"] == "Why do programmers hate nature?  \nIt has too many bugs!"
    assert trace.header["input"] == {"args": ["programming"], "kwargs": {}}
    assert trace.header["output"] == "Why do programmers hate nature?  \nIt has too many bugs!"
    assert trace.header["tags"] == ["example", "joke-generator"]
    assert trace.header["metadata"]["topic"] == "programming"


def test_koog_indexed_attributes_tools_and_code_version() -> None:
    trace = read("koog-2025-08-26")
    spans = by_id(trace)
    hello = spans["66f269083a2fff81"]
    assert (hello.tool_name, hello.data["arguments"], hello.data["output"]) == (
        "HelloTool", {"name": "Bob"}, "Hello my darling Bob!")
    first = spans["042f9350c3729147"]
    assert [m["role"] for m in first.data["messages"]] == ["system", "user"]
    assert [c["name"] for c in first.data["output"]["tool_calls"]] == ["HelloTool", "ByeTool"]
    assert first.data["usage"] == {"input_tokens": 47, "output_tokens": 106}  # Langfuse's usageDetails
    node = spans["6a0770019fe7c2b4"]
    assert node.kind is OTHER and node.attributes["metadata.langgraph_node"] == "nodeCallLLM"
    assert trace.header["code_version"] == "0.3.0"


def test_beeai_same_start_parent_first_and_input_decoded() -> None:
    trace = read("beeai-2025-08-01")
    names = [s.name for s in trace.spans]
    # iteration-1 and its child agent.react.start-4 both start at .166 and the child comes first in the file
    assert names.index("iteration-1") == 1 and names.index("agent.react.start-4") == 2
    assert trace.header["input"].startswith("I'm planning a trip to Barcelona")  # a JSON string, decoded
    gen = next(s for s in trace.spans if s.name == "backend.openai.chat.start-14")
    assert gen.data["model"] == "gpt-4o-mini" and gen.data["usage"] == {"input_tokens": 1195}
    assert gen.data["messages"][0]["role"] == "system"
    assert trace.header["outcome"]["scores"][0] == {"name": "hallucination", "value": 0.2, "source": "EVAL"}
    # beeai records start/update/finish as separate spans: the content gaps are said once.
    (gap,) = [i for i in trace.issues if i.severity == "warning" and i.where not in ("llm.messages", "tool.arguments",
                                                                                    "start_ns")]
    # two observations of one parent start in the same millisecond with nothing to order them: said once
    (tie,) = [i for i in trace.issues if i.where == "start_ns"]
    assert "nothing in their data orders them" in tie.message
    assert gap.message == ("2 of 5 llm spans have no input messages; 4 of 5 llm spans no output; "
                           "2 of 3 tool spans no output (not captured by the producer)")


# --- public API shape, Langfuse-native observations (hand-written) -----------------------------


def test_public_api_trace_with_native_observations() -> None:
    trace = read_trace(DATA / "public_api_trace.json")
    assert trace.format == "langfuse"
    assert [(s.span_id, s.kind.value) for s in trace.spans] == [
        ("obs-agent", "agent"), ("obs-gen-1", "llm"), ("obs-tool", "tool"), ("obs-event", "other"),
        ("obs-retr", "retrieval"), ("obs-guard", "decision"), ("obs-gen-2", "llm")]
    s = by_id(trace)
    gen = s["obs-gen-1"]
    assert gen.data["model"] == "gpt-4o-2024-08-06" and gen.data["params"] == {"temperature": 0.2, "max_tokens": 256}
    assert gen.data["messages"] == [{"role": "system", "content": "You answer order questions."},
                                    {"role": "user", "content": "Where is order 17?"}]
    assert gen.data["output"]["tool_calls"] == [
        {"id": "call_17", "name": "lookup_order", "arguments": {"order_id": 17}}]
    assert gen.data["usage"] == {"input_tokens": 64, "output_tokens": 18}  # older usage{input, output}
    assert (gen.data["prompt_id"], gen.data["prompt_version"]) == ("support-system", "3")
    assert gen.attributes["langfuse.total_cost"] == 0.00034
    tool = s["obs-tool"]
    assert tool.data["tool_name"] == "lookup_order" and tool.data["arguments"] == {"order_id": 17}
    assert tool.data["output"] == {"status": "shipped", "eta": "2026-01-14"}
    event = s["obs-event"]
    assert event.end_ns is None and event.start_ns == 1768206601260123456 and event.parent_id == "obs-tool"
    assert s["obs-retr"].data == {"query": "shipping delays",
                                  "documents": [{"id": "kb-3", "score": 0.71, "text": "Orders ship in 2 days."}]}
    assert s["obs-guard"].data == {"decision": "pii-check", "value": {"allowed": True}}
    failed = s["obs-gen-2"]
    assert failed.status is Status.ERROR and failed.error_type is None
    assert failed.attributes["langfuse.status_message"] == "content filter tripped on first attempt"
    assert failed.data["messages"] == [{"role": "user", "content": "Write the answer."}]
    assert failed.data["output"] == {"role": "assistant", "content": "Order 17 ships on 14 January."}
    assert "usage" not in failed.data  # usage all 0: the API's defaults, not a count
    assert failed.attributes["metadata.retry"] == 1  # metadata given as a JSON string
    assert s["obs-agent"].data == {"agent_name": "support-agent", "input": "Where is order 17?",
                                   "output": "Order 17 ships on 14 January."}
    h = trace.header
    assert (h["run_id"], h["agent"], h["code_version"], h["session_id"]) == (
        "c2a1e8f0-5d3b-4f7e-9a61-2b7d0c9e4f11", "support-agent", "v1.8.0", "sess-9")
    assert h["started_at"] == "2026-01-12T08:30:00.000Z" and h["start_ns"] == 1768206600000000000
    assert h["input"] == {"question": "Where is order 17?"} and h["metadata"] == {"channel": "email"}
    assert h["outcome"] == {"scores": [{"name": "helpfulness", "value": 0.9, "source": "API"}]}
    assert trace.issues == []


def test_an_array_of_exports_is_one_run_each(tmp_path: Path) -> None:
    one = json.loads(corpus("langfuse/microsoft-agent-2025-12-17.trace.json").read_text())
    two = json.loads((DATA / "public_api_trace.json").read_text())
    p = tmp_path / "both.json"
    p.write_text(json.dumps([one, two]))
    assert read_trace(p).trace_ids == ["8e419d3288419b5d944270505640e183", "c2a1e8f0-5d3b-4f7e-9a61-2b7d0c9e4f11"]
    assert len(read_trace(p, trace_id="C2A1E8F0-5D3B-4F7E-9A61-2B7D0C9E4F11").spans) == 7


def test_a_trace_list_page_loads_headers_and_says_observations_are_ids(tmp_path: Path) -> None:
    trace = json.loads((DATA / "public_api_trace.json").read_text())
    trace["observations"] = [o["id"] for o in trace["observations"]]
    p = tmp_path / "page.json"
    p.write_text(json.dumps({"data": [trace], "meta": {"page": 1, "totalItems": 1}}))
    got = read_trace(p)
    assert got.spans == [] and got.header["agent"] == "support-agent"
    (issue,) = got.issues
    assert issue.where == "$.data[0].observations" and issue.message.startswith("7 observation(s) are ids only")


# --- odd input -------------------------------------------------------------------------------


def test_bad_observations_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    doc = json.loads((DATA / "public_api_trace.json").read_text())
    obs = doc["observations"]
    obs[0] = {**obs[0], "startTime": "soon"}
    obs[1] = {**obs[1], "id": None}
    obs[3] = {**obs[3], "type": "MYSTERY"}
    obs.append("just-an-id")
    obs.append(7)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    trace = read_trace(p)
    assert len(trace.spans) == 6
    got = {(i.where, i.severity) for i in trace.issues if i.where != "parent_id"}
    assert got == {("$.observations[0].startTime", "warning"), ("$.observations[1].id", "skipped"),
                   ("$.observations[3].type", "warning"), ("$.observations", "skipped"),
                   ("$.observations[8]", "skipped")}
    assert next(s for s in trace.spans if s.span_id == "obs-event").kind is OTHER


def test_not_a_langfuse_document_raises_read_error(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="not valid JSON"):
        READER.read("x.json", b'{"trace": ')
    with pytest.raises(ReadError, match="no Langfuse trace found"):
        READER.read("x.json", b'{"spans": []}')
    with pytest.raises(ReadError, match="not a Langfuse trace export"):
        READER.read("x.json", b'"text"')
    with pytest.raises(ReadError, match="file is empty"):
        READER.read("x.json", b"\n")



def test_any_single_odd_value_anywhere_gives_issues_or_read_error_never_a_traceback() -> None:
    doc = json.loads((DATA / "public_api_trace.json").read_text())
    doc["observations"] = doc["observations"][:3]
    counts = odd_value_outcomes(READER.read, doc, (None, -1, "zz", [], {}, True, "{bad json"),
                                lambda d: json.dumps(d).encode())
    assert counts["error"] > 0 and counts["issue"] > 0, counts  # odd values are noticed, not all swallowed


# --- sniffing --------------------------------------------------------------------------------


def test_sniff_accepts_exports_and_rejects_every_other_known_file() -> None:
    bundled = REPO / "sample_runs" / "foreign" / "langfuse-pydantic-ai.trace.json"
    mine = [DATA / "public_api_trace.json", bundled]
    for p in mine:
        head = p.read_bytes()[:65536]
        assert READER.sniff(head) and sniff_format(head) == "langfuse", p
    others = [p for p in (REPO / "tests" / "data" / "otlp").glob("*") if p.suffix != ".md"]
    others += [p for p in (REPO / "tests" / "data" / "otel_sdk").glob("*")]
    others += [p for p in (REPO / "sample_runs").rglob("*") if p.is_file() and p != bundled]
    for p in others:
        assert not READER.sniff(p.read_bytes()[:65536]), p


def test_sniff_accepts_the_corpus_exports_and_rejects_every_other_corpus_file() -> None:
    mine = sorted((corpus("langfuse")).glob("*.json"))
    assert len(mine) == 5, mine
    for p in mine:
        head = p.read_bytes()[:65536]
        assert READER.sniff(head) and sniff_format(head) == "langfuse", p
    for p in corpus_files(outside="langfuse"):
        assert not READER.sniff(p.read_bytes()[:65536]), p
