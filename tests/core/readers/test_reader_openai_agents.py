"""OpenAI Agents SDK reader: the corpus ingest batches (split traces, counts per
SOURCES.md), a trace record arriving after its spans, every span_data type, bad lines."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from corpus import CORPUS, corpus

from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers import read_trace
from tracetui.core.readers.langsmith import LangSmithReader
from tracetui.core.readers.openai_agents import OpenAIAgentsReader

DATA = Path(__file__).resolve().parents[2] / "data" / "openai_agents"
ROOT = Path(__file__).resolve().parents[3]
RECIPE = "openai-agents/recipe_agents_hierarchy.ingest.jsonl"
ROUTER = "openai-agents/router_analytics_complete_workflow.ingest.jsonl"


def _ns(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int) -> int:
    return int(datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp()) * 1_000_000_000 + us * 1000


def _read(p: Path):
    return OpenAIAgentsReader().read(str(p), p.read_bytes())


def _by_id(spans):
    return {s.span_id: s for s in spans}


# -- corpus ---------------------------------------------------------------------------

def test_recipe_file_counts_and_split_traces() -> None:
    out = _read(corpus(RECIPE))
    # first-seen order: trace_db01... only has spans (its trace record was in an earlier, uncaptured batch)
    assert [r.trace_id for r in out.runs] == ["trace_db0186bb863d426e9e4486699cb8418a",
                                              "trace_5255973c326149e282cf9f7ced1589f2",
                                              "trace_2a289c77f5cf42529b9dfc688175147f"]
    assert [len(r.spans) for r in out.runs] == [2, 9, 2]
    spans = [s for r in out.runs for s in r.spans]
    assert Counter(s.attributes["span_type"] for s in spans) == {"response": 6, "agent": 3, "handoff": 1, "function": 3}
    # the trace record of trace_5255... is on line 1, its spans on lines 1-4: joined
    main = out.runs[1]
    assert main.header["agent"] == "Agent workflow" and main.header["run_id"] == main.trace_id
    assert {s.line for s in main.spans} == {1, 2, 3, 4}
    missing = [i for i in out.issues if "never came" in i.message]
    assert [i.where for i in missing] == ["trace trace_db0186bb863d426e9e4486699cb8418a"]
    assert out.runs[0].header["agent"] == "Symphony Composer"  # no record: the root agent's name
    s = _by_id(main.spans)
    handoff = s["span_8715d3699f6542259a6dd8f1"]
    assert handoff.kind is SpanKind.DECISION
    assert handoff.data == {"decision": "handoff", "value": "Recipe Editor Agent", "from_agent": "Main Chat Agent"}
    fn = s["span_68dc61b2b03347109899c420"]
    assert fn.kind is SpanKind.TOOL and fn.data["tool_name"] == "search_recipes"
    assert fn.data["arguments"] == {"query": "carbonara"}
    assert fn.data["output"].startswith("status='success' message=\"Found 1 recipe matching 'carbonara'\"")
    assert fn.parent_id == "span_8a6aa83c06f74fe9911ef268"
    assert fn.start_ns == _ns(2025, 8, 15, 17, 56, 59, 101547)
    resp = s["span_f667c85ac5574aecbe96a339"]
    assert resp.kind is SpanKind.LLM
    assert resp.data == {"response_id": "resp_689f74e931508196960eed596d72eb6505e045a92c8fd6eb"}
    agent = s["span_8a6aa83c06f74fe9911ef268"]
    assert agent.kind is SpanKind.AGENT and agent.data == {"agent_name": "Recipe Editor Agent"}
    assert agent.attributes["tools"] == ["search_recipes", "plan_and_apply_recipe_modifications"]
    # response content is not exported: said once per run
    resp_warnings = [i for i in out.issues if "response span(s)" in i.message]
    assert [i.message.split(" ", 1)[0] for i in resp_warnings] == ["1", "4", "1"]


def test_router_file_counts_and_function_spans() -> None:
    t = read_trace(corpus(ROUTER))
    assert t.format == "openai-agents"
    assert t.trace_ids == ["trace_2dc4a148df4c45ed8b309c32cc5c11a9"]
    assert len(t.spans) == 7
    assert Counter(s.attributes["span_type"] for s in t.spans) == {"response": 3, "handoff": 1, "agent": 1,
                                                                   "function": 2}
    assert t.header["agent"] == "Agent workflow"
    assert t.header["started_at"] == "2025-08-15T17:55:57.114984Z"
    # execution order from started_at, not file (end) order
    assert [s.attributes["span_type"] for s in t.spans] == [
        "agent", "response", "handoff", "response", "function", "response", "function"]
    fn = next(s for s in t.spans if s.name == "analyze_data")
    assert fn.data["arguments"] == {"data_request": "Sales data from last quarter"}
    assert fn.data["output"] == "Analyzed data patterns for: Sales data from last quarter"
    handoff = next(s for s in t.spans if s.kind is SpanKind.DECISION)
    assert handoff.data["value"] == "Analytics Agent"
    # the Analytics Agent's own agent span was never exported: its 4 children are shown as roots
    orphans = [i for i in t.issues if "span_c0ea12fef2fa41949a7e3aa4" in i.message]
    assert len(orphans) == 4


# -- hand-written ---------------------------------------------------------------------

def test_trace_record_last_and_span_types() -> None:
    out = _read(DATA / "trace_record_last.ingest.jsonl")
    [run] = out.runs
    assert run.trace_id == "trace_0123456789abcdef0123456789abcdef"
    assert run.header["agent"] == "Support workflow"
    assert run.header["group_id"] == "conv-7" and run.header["metadata"] == {"customer": "C-1"}
    assert not [i for i in out.issues if "never came" in i.message]
    s = {sp.span_id[-1]: sp for sp in run.spans}
    root = s["2"]
    assert root.parent_id is None and root.kind is SpanKind.AGENT
    assert root.start_ns == _ns(2025, 8, 15, 17, 56, 51, 0)  # +02:00 applied
    turn = s["3"]
    assert turn.kind is SpanKind.OTHER and turn.attributes["sdk_span_type"] == "turn"
    guard = s["4"]
    assert guard.kind is SpanKind.DECISION and guard.data == {"decision": "guardrail:no_pii", "value": False}
    gen = s["5"]
    assert gen.kind is SpanKind.LLM and gen.name == "gpt-4o-mini"
    assert gen.data["messages"] == [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "Where is order 17?"}]
    assert gen.data["output"]["tool_calls"] == [{"id": "call_7", "name": "get_order", "arguments": {"id": 17}}]
    assert gen.data["params"] == {"temperature": 0.1}
    assert gen.data["usage"] == {"input_tokens": 21, "output_tokens": 9}
    assert gen.attributes["base_url"] == "https://api.openai.com/v1/"
    fn = s["6"]
    assert fn.kind is SpanKind.TOOL and fn.status is Status.ERROR and fn.error_type == "Error running tool"
    assert fn.attributes["error.data"]["error"] == "TimeoutError()"
    assert "output" not in fn.data
    handoff = s["7"]
    assert handoff.data["value"] == "Billing Agent" and handoff.status is Status.OK
    # an errored tool has no output; nothing else is missing, and no response spans: no warning
    assert not out.issues
    t = read_trace(DATA / "trace_record_last.ingest.jsonl")
    assert t.format == "openai-agents" and not t.issues
    assert [sp.span_id[-1] for sp in t.spans] == ["2", "3", "4", "5", "6", "7"]  # started_at order


def test_bad_line_in_the_middle_is_skipped(tmp_path: Path) -> None:
    lines = corpus(RECIPE).read_text().splitlines()
    p = tmp_path / "broken.jsonl"
    p.write_text("\n".join([lines[0], lines[1][:50], *lines[2:]]) + "\n")
    out = _read(p)
    [bad] = [i for i in out.issues if i.severity == "skipped"]
    assert bad.line == 2
    assert sum(len(r.spans) for r in out.runs) == 12  # line 2 held one span


def test_single_document_and_bare_item_list(tmp_path: Path) -> None:
    items = [orjson.loads(ln)["data"] for ln in corpus(ROUTER).read_bytes().splitlines()]
    flat = [it for batch in items for it in batch]
    for name, doc in (("one.json", {"data": flat}), ("list.json", flat),
                      ("batches.json", [{"data": b} for b in items])):
        p = tmp_path / name
        p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
        out = _read(p)
        assert [len(r.spans) for r in out.runs] == [7], name
        assert sorted(s.line for s in out.runs[0].spans) == list(range(2, 9)), name  # record index


def test_nothing_loadable_raises(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_bytes(b'{"data": [{"object": "response"}]}')
    with pytest.raises(ReadError, match="no OpenAI Agents"):
        _read(p)


# -- sniffing -------------------------------------------------------------------------

def test_sniff_only_agents_files() -> None:
    if not CORPUS.exists():
        pytest.skip("corpus not available")
    r = OpenAIAgentsReader()
    roots = [CORPUS, ROOT / "tests" / "data" / "otlp", ROOT / "sample_runs"]
    for p in sorted(p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()):
        assert r.sniff(p.read_bytes()[:65536]) == (p.parent.name == "openai-agents" and p.suffix == ".jsonl"), p
    head = (DATA / "trace_record_last.ingest.jsonl").read_bytes()
    assert r.sniff(head) and not LangSmithReader().sniff(head)


def test_uncaptured_content_and_unknown_type_are_reported(tmp_path: Path) -> None:
    tid = "trace_" + "a" * 32
    items = [{"object": "trace", "id": tid, "workflow_name": "w"},
             {"object": "trace.span", "id": "span_1", "trace_id": tid, "parent_id": None,
              "started_at": "2025-01-01T00:00:00Z", "ended_at": "2025-01-01T00:00:01Z",
              "span_data": {"type": "function", "name": "f", "input": None, "output": None}},
             {"object": "trace.span", "id": "span_2", "trace_id": tid, "parent_id": "span_1",
              "started_at": "2025-01-01T00:00:00.5Z", "ended_at": None,
              "span_data": {"type": "realtime_session", "name": "rt", "foo": 1}}]
    p = tmp_path / "b.jsonl"
    p.write_bytes(orjson.dumps({"data": items}) + b"\n")
    out = _read(p)
    f, rt = out.runs[0].spans
    assert f.data == {"tool_name": "f"} and f.status is Status.OK
    assert rt.kind is SpanKind.OTHER and rt.status is Status.UNSET and rt.attributes["span_data"] == {"foo": 1}
    msgs = sorted(i.message for i in out.issues)
    assert msgs[0].startswith("content not recorded") and "1 function span(s) without input" in msgs[0]
    assert "1 function span(s) without output" in msgs[0]
    assert msgs[1] == "unknown span_data type 'realtime_session'; read as other"
