"""`tracetui show` on every file of the shared corpus: it loads, and its counts match the
counts each folder's SOURCES.md gives (runs, LLM calls, tool calls, observations)."""

from __future__ import annotations

import io

import orjson
import pytest

from corpus import CORPUS, corpus
from tracetui.cli.main import main

# file -> (format, runs, {kind: count} that SOURCES.md states, total spans when SOURCES.md states it)
EXPECTED: dict[str, tuple[str, int, dict[str, int], int | None]] = {
    # 1 span, kinds {2: 1}
    "otlp-json/opentelemetry-proto_examples_trace.json": ("otlp-json", 1, {}, 1),
    # call_llm 3, execute_tool 2, invoke_agent 1
    "any-agent-trace/OPENAI_trace.json": ("otel-sdk-json", 1, {"llm": 3, "tool": 2, "agent": 1}, 6),
    # call_llm 4, execute_tool 2, invoke_agent 1
    "any-agent-trace/LANGCHAIN_trace.json": ("otel-sdk-json", 1, {"llm": 4, "tool": 2, "agent": 1}, 7),
    # observations: 5 {AGENT 2, GENERATION 2, TOOL 1}, 12 {GENERATION 4, TOOL 3}, 4 {GENERATION 2, TOOL 1, AGENT 1}, 11, 29 {GENERATION 5}
    "langfuse/openai-agents-2025-09-30.trace.json": ("langfuse", 1, {"llm": 2, "tool": 1}, 5),
    "langfuse/pydantic-ai-tools-2025-12-04.trace.json": ("langfuse", 1, {"llm": 4, "tool": 3}, 12),
    "langfuse/microsoft-agent-2025-12-17.trace.json": ("langfuse", 1, {"llm": 2, "tool": 1}, 4),
    "langfuse/koog-2025-08-26.trace.json": ("langfuse", 1, {"llm": 2}, 11),
    "langfuse/beeai-2025-08-01.trace.json": ("langfuse", 1, {"llm": 5}, 29),
    # post: 1 run ['llm'], patched once
    "langsmith/langsmith_py_wrap_openai_reasoning.json": ("langsmith", 1, {"llm": 1}, 1),
    # 13 spans across 3 trace ids: response 6, agent 3, handoff 1, function 3
    "openai-agents/recipe_agents_hierarchy.ingest.jsonl": ("openai-agents", 3, {"llm": 6, "agent": 3, "decision": 1, "tool": 3}, 13),
    # 7 spans, 1 trace: response 3, handoff 1, agent 1, function 2
    "openai-agents/router_analytics_complete_workflow.ingest.jsonl": ("openai-agents", 1, {"llm": 3, "decision": 1, "agent": 1, "tool": 2}, 7),
    # 1 sample; model 5, tool 4 events
    "inspect-ai/2025-05-12T20-27-36-04-00_browser.json": ("inspect-ai", 1, {"llm": 5, "tool": 4}, None),
    # 10 samples, model 10 events (the second log adds 10 score events)
    "inspect-ai/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval": ("inspect-ai", 10, {"llm": 10}, None),
    "inspect-ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval": ("inspect-ai", 10, {"llm": 10}, None),
    # 11 trajectory steps (action/observation) each; legacy 12
    "swe-agent/marshmallow-1867__function_calling.traj": ("swe-agent", 1, {"llm": 11, "tool": 11}, None),
    "swe-agent/marshmallow-1867__function_calling_replace.traj": ("swe-agent", 1, {"llm": 11, "tool": 11}, None),
    "swe-agent/pydicom-1458__legacy.traj": ("swe-agent", 1, {"llm": 12, "tool": 12}, None),
    # 200 trajectories, 1164 tool calls
    "tau-bench/gpt-4o-airline.json": ("tau-bench", 200, {"tool": 1164}, None),
    # actions message (the input), edit, finish (both tool calls of the model); observation edit
    "openhands/basic.json": ("openhands", 1, {"llm": 2, "tool": 2}, None),  # edit and finish are tool calls
    # 2 agent steps, 2 tool calls; 3 agent steps, 4 tool calls
    "atif/harbor_openhands.json": ("atif", 1, {"llm": 2, "tool": 2}, None),
    "atif/multi_tool_trajectory.json": ("atif", 1, {"llm": 3, "tool": 4}, None),
    # 2 chat-completion interactions; 1 streamed
    "vcrpy/test_chat_completion_tool_calls_with_content.yaml": ("vcrpy", 1, {"llm": 2}, None),
    "vcrpy/test_chat_completion_multiple_tools_streaming_with_content.yaml": ("vcrpy", 1, {"llm": 1}, None),
}


def show_json(path: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    code = main(["show", path, "--format", "json"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return orjson.loads(out.getvalue())


def test_every_corpus_trace_file_is_listed() -> None:
    """A file added to the corpus gets an expectation here (or the test says which)."""
    if not CORPUS.exists():
        pytest.skip("corpus not available")
    files = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file() and p.suffix not in (".md",)}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_show_loads_and_counts_match_sources(rel: str) -> None:
    fmt, runs, kinds, spans = EXPECTED[rel]
    doc = show_json(str(corpus(rel)))
    assert doc["format"] == fmt
    assert doc["run_count"] == runs
    for kind, n in kinds.items():
        assert doc["kinds"].get(kind, 0) == n, (kind, doc["kinds"])
    if spans is not None:
        assert doc["span_count"] == spans
    assert all(r["span_count"] > 0 for r in doc["runs"])
    ids = [r["run_id"] for r in doc["runs"]]
    assert len(set(ids)) == len(ids), "run ids must be unique to be selectable with FILE#RUN"
