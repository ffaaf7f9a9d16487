"""Spans starting at the same instant, ordered by their data (readers/ties.py, issue 18 item 2)."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.builders import make_span
from tests.corpus import corpus
from tracetui.core.readers import read_trace
from tracetui.core.readers.otel_sdk import assign_seq

T = 1_762_161_242_118_000_000


def _turn(order: list[str]) -> list:
    """An agent, its model call asking for a tool, the tool, and the next model call quoting the
    tool's result, all four children of the agent starting in the same millisecond; file order
    ``order``."""
    spans = {
        "agent": make_span("agent", "agent", span_id="agent", seq=-1, start_ns=T - 1_000_000),
        "ask": make_span("llm", "chat", span_id="ask", parent_id="agent", seq=-1, start_ns=T,
                         messages=[{"role": "user", "content": "weather?"}],
                         output={"role": "assistant", "content": None,
                                 "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]}),
        "tool": make_span("tool", "get_weather", span_id="tool", parent_id="agent", seq=-1, start_ns=T, call_id="c9",
                          arguments={"city": "Paris"}, output={"temp_c": 18}),
        "answer": make_span("llm", "chat", span_id="answer", parent_id="agent", seq=-1, start_ns=T,
                            messages=[{"role": "user", "content": "weather?"},
                                      {"role": "tool", "content": '{"temp_c": 18}', "tool_call_id": "x"}],
                            output={"role": "assistant", "content": "18 C"}),
    }
    return [spans[k] for k in order]


def test_a_tie_is_ordered_by_the_data_whatever_the_file_order():
    for order in (["answer", "tool", "ask", "agent"], ["agent", "tool", "answer", "ask"]):
        spans = _turn(order)
        issues: list = []
        assign_seq(spans, "f.json", issues)
        # the tool after nothing it names (its call id is not the asking call's), but before the
        # call quoting its output; the asking call and the tool have nothing between them
        by_seq = [s.span_id for s in sorted(spans, key=lambda s: s.seq)]
        assert by_seq.index("tool") < by_seq.index("answer"), order
        assert by_seq[0] == "agent"


def test_a_tool_named_by_the_call_that_asked_for_it_follows_it_and_no_tie_is_ambiguous():
    spans = _turn(["answer", "tool", "ask", "agent"])
    spans[1].data["call_id"] = "c1"  # the tool is the call the first model answer asked for
    issues: list = []
    assign_seq(spans, "f.json", issues)
    assert [s.span_id for s in sorted(spans, key=lambda s: s.seq)] == ["agent", "ask", "tool", "answer"]
    assert issues == []


def test_siblings_with_nothing_to_order_them_are_reported(tmp_path: Path):
    spans = _turn(["agent", "answer", "ask", "tool"])
    issues: list = []
    assign_seq(spans, "f.json", issues)
    assert len(issues) == 1 and issues[0].where == "start_ns" and "nothing in their data orders them" in issues[0].message
    # A real Langfuse export: two tools of one turn started in the same millisecond.
    src = corpus("langfuse/pydantic-ai-tools-2025-12-04.trace.json")
    doc = orjson.loads(src.read_bytes())
    doc["observations"] = doc["observations"][::-1]
    out = tmp_path / src.name
    out.write_bytes(orjson.dumps(doc))
    for path in (src, out):
        found = [i for i in read_trace(path).issues if i.where == "start_ns"]
        assert len(found) == 1 and "get_dad_joke_suggestion" in found[0].message and "get_one_liner" in found[0].message
