"""Step 1 of triage: the replayability verdict from a trace alone (tracetui.core.triage.replayability)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from builders import TraceBuilder
from corpus import corpus

from tracetui.core.readers import read_trace
from tracetui.core.readers.tree import NOT_CAPTURED
from tracetui.core.triage.replayability import SEVERITIES, TRUNCATION_CAPS, VERDICTS, Finding, assess, truncation

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_runs"
T0 = 1_762_161_242_118_000_000  # TraceBuilder's first span
GOOD = {"schema": "tracetui/1", "run_id": "r1", "start_ns": T0, "clock": {"now": "2025-11-03T09:14:02+00:00"},
        "prompt_versions": {"support.system": "v5"}, "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc"}
FULL = orjson.dumps({"orders": [{"id": f"o{i}", "status": "delivered", "note": "left at the door"}
                                for i in range(150)]}).decode()  # 8 KB


def run(*steps: tuple, header: dict | None = None) -> object:
    """A trace: an agent root, then (kind, name, fields) spans under it, with a good header by default."""
    b = TraceBuilder()
    root = b.add("agent", "support", input={"q": "where is my order"})
    for kind, name, fields in steps:
        b.add(kind, name, parent=root, **fields)
    t = b.trace()
    t.header = dict(GOOD if header is None else header)
    return t


def llm(**kw) -> tuple:
    fields = {"model": "gpt-4o", "prompt_version": "v5", "messages": [{"role": "user", "content": "hi"}],
              "output": {"role": "assistant", "content": "ok"}, "tool_schemas_hash": "abc"}
    return ("llm", "chat gpt-4o", {**fields, **kw})


def tool(**kw) -> tuple:
    return ("tool", "search_orders", {"arguments": {"q": "5531"}, "output": {"orders": []}, **kw})


def codes(rep) -> set[tuple[str, str | None]]:
    return {(f.code, f.field) for f in rep.findings}


def write_native(tmp_path: Path, header: dict, spans: list[dict]) -> Path:
    p = tmp_path / "run.jsonl"
    p.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header, *spans]))
    return p


def native_span(sid: str, seq: int, parent: str | None, kind: str = "agent", end: bool = True, **section) -> dict:
    start = T0 + seq * 1_000_000
    return {"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": sid, "start_ns": start,
            "end_ns": start + 500_000 if end else None, "status": "ok", "error_type": None, kind: section}


# -- the bundled samples and the corpus ---------------------------------------------------


@pytest.mark.parametrize("name", ["scheduling", "order_lookup", "subscription_pause"])
def test_bundled_samples_are_replayable(name):
    for f in ("original.jsonl", "replay.jsonl"):
        rep = assess(read_trace(SAMPLES / name / f))
        assert rep.verdict == "replayable", rep.findings
        assert rep.findings == [] and rep.per_span == {}


def test_otlp_twin_lacks_prompt_versions_and_clock():
    rep = assess(read_trace(SAMPLES / "order_lookup" / "original.otlp.json"))
    assert rep.verdict == "partial"  # both are caveats, each with its stand-in
    assert codes(rep) == {("no_clock", "header.clock"), ("missing_field", "llm.prompt_version")}
    prompt = next(f for f in rep.findings if f.code == "missing_field")
    assert prompt.reason.startswith("2 llm spans (") and prompt.grade == "caveat"
    assert "rendered system prompt's hash (sha256:" in prompt.workaround
    clock = rep.findings[0]
    assert clock.code == "no_clock" and "root span's start time, 20" in clock.workaround and "(inferred)" in clock.workaround
    assert rep.findings[0].span_id is None  # run-level first


def test_otlp_export_cut_by_an_attribute_length_limit(tmp_path):
    """OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=256 on the sample: the tool result JSON is cut mid-value."""
    doc = json.loads((SAMPLES / "order_lookup" / "original.otlp.json").read_text())
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for a in sp["attributes"]:
                    v = a["value"].get("stringValue")
                    if a["key"] == "gen_ai.tool.call.result":
                        a["value"]["stringValue"] = v[:256]
    p = tmp_path / "cut.otlp.json"
    p.write_text(json.dumps(doc))
    rep = assess(read_trace(p))
    cut = [f for f in rep.findings if f.code == "truncated_output"]
    assert [f.field for f in cut] == ["tool.output"]
    assert "256 characters" in cut[0].reason and "JSON cut mid-value" in cut[0].reason
    assert rep.per_span[cut[0].span_id] == "not_replayable"


def test_corpus_exports():
    lf = assess(read_trace(corpus("langfuse/beeai-2025-08-01.trace.json")))
    assert lf.verdict == "not_replayable"
    assert {("content_not_captured", "tool.output"), ("missing_field", "llm.prompt_version")} <= codes(lf)
    ls = assess(read_trace(corpus("langsmith/langsmith_py_wrap_openai_reasoning.json")))
    assert codes(ls) == {("no_clock", "header.clock"), ("missing_field", "llm.prompt_version")}
    tau = assess(read_trace(corpus("tau-bench/gpt-4o-airline.json")))
    assert {("missing_field", "llm.model"), ("missing_field", "llm.prompt_version")} <= codes(tau)
    assert not any(f.code == "truncated_output" for f in tau.findings)
    assert sum(1 for f in tau.findings if f.field == "llm.prompt_version") == 1  # grouped: 15 spans, one finding


def test_corpus_orphans_and_final_action():
    oa = assess(read_trace(corpus("openai-agents/router_analytics_complete_workflow.ingest.jsonl")))
    orphan = next(f for f in oa.findings if f.code == "orphan_span")
    assert orphan.reason.startswith("4 llm/tool spans (") and "span_c0ea12fef2fa41949a7e3aa4" in orphan.reason
    otlp = assess(read_trace(corpus("otlp-json/opentelemetry-proto_examples_trace.json")))
    assert ("orphan_span", None) in codes(otlp)
    # OpenHands' closing `finish` action has no observation: nothing read it, so only partial
    oh = assess(read_trace(corpus("openhands/basic.json")))
    finish = next(f for f in oh.findings if f.field == "tool.output")
    assert finish.severity == "partial" and "(finish)" in finish.reason


# -- spans missing ------------------------------------------------------------------------


def test_orphan_gap_and_unclosed_from_a_native_file(tmp_path):
    p = write_native(tmp_path, GOOD, [
        native_span("root", 0, None),
        native_span("a", 1, "root"),
        native_span("b", 4, "gone"),  # seq 2, 3 missing; parent never recorded
        native_span("c", 5, "root", end=False),  # leaf without end in a native file
    ])
    rep = assess(read_trace(p))
    by = {f.code: f for f in rep.findings}
    assert set(by) == {"orphan_span", "seq_gap", "unclosed_span"}
    assert "'gone'" in by["orphan_span"].reason
    assert by["seq_gap"].span_id == "b" and "2 spans missing" in by["seq_gap"].reason
    assert by["unclosed_span"].span_id == "c"
    assert rep.per_span == {"b": "not_replayable", "c": "not_replayable"}


def test_unclosed_needs_end_times_in_the_source():
    # point-event sources (ATIF steps) have no end on any step: not "never closed"
    t = run(tool(), llm())
    for s in t.spans:
        s.end_ns = None
    assert not any(f.code == "unclosed_span" for f in assess(t).findings)
    t = run(tool(), llm())
    t.spans[0].end_ns = None  # the root never closed while its children did
    assert [f.span_id for f in assess(t).findings if f.code == "unclosed_span"] == ["s0"]


# -- required fields ------------------------------------------------------------------------


def test_complete_run_is_replayable():
    rep = assess(run(llm(), tool(), ("decision", "route", {}), ("memory", "recall", {}),
                     ("retrieval", "kb", {"query": "x", "documents": []})))
    assert rep.verdict == "replayable" and rep.findings == []


def test_missing_fields_per_kind():
    rep = assess(run(tool(arguments=None), tool(output=None), tool(output=None, status="error"),
                     llm(model=None, prompt_version=None), ("retrieval", "kb", {"query": None}), llm(),
                     header={**GOOD, "model": None, "prompt_versions": {}}))
    assert codes(rep) == {("missing_field", "tool.arguments"), ("missing_field", "tool.output"),
                          ("missing_field", "llm.model"), ("missing_field", "llm.prompt_version"),
                          ("missing_field", "retrieval.query"), ("missing_field", "retrieval.documents")}
    assert "s3" not in rep.per_span  # a failed call may have no output
    assert rep.verdict == "not_replayable"


def test_prompt_version_and_model_from_the_header():
    assert assess(run(llm(prompt_version=None, model=None))).verdict == "replayable"  # one template in the header
    two = {**GOOD, "prompt_versions": {"a": "v1", "b": "v2"}}
    assert ("missing_field", "llm.prompt_version") in codes(assess(run(llm(prompt_version=None), header=two)))
    assert assess(run(llm(prompt_version=None, prompt_id="b"), header=two)).verdict == "replayable"


def test_prompt_version_finding_is_grouped_on_a_long_run():
    rep = assess(run(*[llm(prompt_version=None)] * 100, header={**GOOD, "prompt_versions": {}}))
    (f,) = rep.findings
    assert f.span_id == "s1" and f.reason.startswith("100 llm spans ('s1', 's2', 's3', 's4', 's5' and 95 more)")
    assert len(rep.per_span) == 100 and len(f.reason) < 400


def test_content_not_captured():
    rep = assess(run(tool(arguments=None, output=None), llm(messages=[], output=None),
                     llm(messages=None, attributes={NOT_CAPTURED: "the Agents SDK exports only the response id"})))
    reasons = {f.field: f.reason for f in rep.findings if f.code == "content_not_captured"}
    assert set(reasons) == {"tool.output", "llm.messages"}
    assert not any(f.code == "missing_field" and f.field in ("tool.arguments", "llm.messages") for f in rep.findings)
    agents = [f for f in rep.findings if "Agents SDK" in f.reason]
    assert len(agents) == 1 and agents[0].span_id == "s3"  # grouped by reason, not with s2


# -- truncation -------------------------------------------------------------------------------


def test_truncation_rules():
    assert "JSON cut mid-value" in truncation(FULL[:700])  # whatever its length
    assert "1,024 characters" in truncation(FULL[:1024])
    words = "lorem ipsum dolor sit amet " * 200
    assert "ending mid-word" in truncation(words[:2048])
    assert "ending with an ellipsis" in truncation(words[:1021] + "...")  # Sentry's strip_string
    assert "plus an appended '...'" in truncation(words[:1000] + "...")
    for marker in ("...[truncated]", "… (truncated string)", "[TRUNCATED]", "<truncated 512 chars>",
                   "[... 300 chars truncated ...]"):
        assert "marker" in truncation(f"the first part {marker} rest"), marker
    assert "at .result.body:" in truncation({"result": {"body": FULL[:500], "ok": True}})
    assert "output_truncated" in truncation([{"output_truncated": True}])
    assert "OpenAI Agents SDK" in truncation({"truncated": True, "original_type": "dict", "preview": "{"})
    assert "bytes were cut" in truncation({"value": "abc", "truncatedByteCount": 12})


def test_truncation_false_positive_guards():
    complete = '{"k": "' + "v" * (1024 - 9) + '"}'
    assert len(complete) == 1024 and truncation(complete) is None  # complete JSON of a cap's length
    words = "lorem ipsum dolor sit amet " * 200
    assert truncation(words[:1023]) is None  # not a cap
    assert truncation(words[:1023] + ".") is None  # a cap's length, ending as a sentence ends
    assert truncation({"body": words[:1024]}) is None  # nested: exporters cut whole attributes
    for s in ("{'a': 1, 'b': 'x", "{name} is here", "[link](http://x) and more", "[", "{\"a\": 1} trailing"):
        assert truncation(s) is None, s  # fails to parse, but not at the end of input
    for s in ("the file was truncated yesterday", "(not truncated)"):
        assert truncation(s) is None, s
    assert truncation({"sha": "x", "tree": [], "truncated": True}) is None  # GitHub's git trees API, real data
    assert set(TRUNCATION_CAPS) >= {256, 1000, 1024, 2048, 4096}


def test_truncated_tool_output_in_a_run():
    rep = assess(run(tool(output=FULL[:1024]), tool(output_truncated=True), llm(output={"content": FULL[:900]},
                                                                              finish_reason="length")))
    cut = {f.span_id: f for f in rep.findings if f.code == "truncated_output"}
    assert set(cut) == {"s1", "s2"} and set(rep.per_span) == {"s1", "s2"}  # s3 hit max_tokens: a real answer
    assert "a strict replay never serves" in cut["s1"].reason and "output_truncated is true" in cut["s2"].reason


def test_a_tool_that_cuts_its_own_output_is_not_a_recording_fault():
    cut = FULL[:2048]
    seen = [{"role": "user", "content": "where?"}, {"role": "tool", "tool_call_id": "c1", "content": cut}]
    longer = [{"role": "user", "content": "where?"}, {"role": "tool", "tool_call_id": "c1", "content": FULL}]
    same = assess(run(tool(output=cut, call_id="c1"), llm(messages=seen)))
    assert same.verdict == "replayable"  # the model read the same cut text
    went_on = assess(run(tool(output=cut, call_id="c1"), llm(messages=longer)))
    (f,) = [f for f in went_on.findings if f.code == "truncated_output"]
    assert "the model's next prompt (span 's2') shows the value went on" in f.reason


def test_truncated_messages():
    rep = assess(run(llm(messages=FULL[:4096])))  # an unparsed, cut messages attribute
    assert ("truncated_output", "llm.messages") in codes(rep)
    kept = assess(run(llm(messages=None, attributes={"gen_ai.input.messages": FULL[:1024]})))
    assert codes(kept) == {("truncated_output", "llm.messages")}  # the reader kept what it could not parse
    trimmed = [{"role": "tool", "tool_call_id": "c", "content": FULL[:300]}]  # the agent trimmed its context
    assert assess(run(llm(messages=trimmed))).verdict == "replayable"


# -- nondeterminism and tool schemas -------------------------------------------------------------


def test_nondeterministic_arguments():
    uuid = "3f0b9a4e-2c1d-4e8f-9a7b-1c2d3e4f5a6b"
    near = "2025-11-03T10:00:00Z"  # an hour after the run's start
    rep = assess(run(tool(arguments={"idempotency_key": uuid}), tool(arguments={"at": near}),
                     tool(arguments={"ts": T0 // 10**6 + 5_000}), tool(arguments={"date": "2025-11-04"})))
    nd = [f for f in rep.findings if f.code == "nondeterministic_argument"]
    assert nd and nd[0].severity == "partial" and rep.verdict == "partial"
    assert nd[0].reason.startswith("3 tool spans ('s1', 's2', 's3')") and "seeded" in nd[0].reason
    assert "s4" not in rep.per_span  # a date without a time of day is data


def test_nondeterminism_guards():
    uuid = "3f0b9a4e-2c1d-4e8f-9a7b-1c2d3e4f5a6b"
    seeded = assess(run(tool(arguments={"k": uuid}), header={**GOOD, "seed": 7}))
    assert seeded.verdict == "replayable"  # the harness draws ids from the seeded generator
    read = assess(run(tool(output={"order_id": uuid}), tool(arguments={"order_id": uuid})))
    assert read.verdict == "replayable"  # the agent read the id: data
    given = assess(run(tool(arguments={"order_id": uuid}), header={**GOOD, "input": {"ref": uuid}}))
    assert given.verdict == "replayable"  # in the run's input
    told = assess(run(llm(output={"role": "assistant", "tool_calls": [{"name": "get", "arguments": {"id": uuid}}]}),
                      tool(arguments={"id": uuid})))
    assert told.verdict == "replayable"  # the model asked for it: a recorded answer repeats it
    frozen = assess(run(tool(arguments={"at": GOOD["clock"]["now"]})))
    assert frozen.verdict == "replayable"  # the header clock: a replay freezes now() to it


def test_clock_and_tool_schema_hash():
    bare = {"schema": "tracetui/1", "prompt_versions": {"p": "v1"}}
    rep = assess(run(tool(), header=bare))
    assert codes(rep) == {("no_clock", "header.clock"), ("no_tool_schema_hash", "header.tool_schema_hash")}
    assert all(f.span_id is None and f.severity == "partial" for f in rep.findings)
    assert ("no_tool_schema_hash", "header.tool_schema_hash") not in codes(assess(run(llm(tool_schemas_hash=None),
                                                                                 header=bare)))  # no tools
    changed = assess(run(tool()), tool_schema_hash="def")
    (f,) = changed.findings
    assert (f.code, f.span_id, f.severity) == ("tool_schema_changed", None, "partial") and "'def'" in f.reason
    assert assess(run(tool()), tool_schema_hash="abc").verdict == "replayable"
    drift = assess(run(llm(tool_schemas_hash="h1"), llm(tool_schemas_hash="h2")))
    assert [(f.code, f.span_id) for f in drift.findings] == [("tool_schema_changed", "s2")]


# -- shape ------------------------------------------------------------------------------------


def test_verdict_order_and_json():
    rep = assess(run(tool(output=None), llm(prompt_version=None), header={**GOOD, "clock": {},
                                                                       "prompt_versions": {}}))
    assert [f.span_id for f in rep.findings] == [None, "s1", "s2"]
    assert rep.verdict == "not_replayable" and rep.per_span == {"s1": "not_replayable", "s2": "partial"}
    assert [f.grade for f in rep.findings] == ["caveat", "blocker", "caveat"]
    assert rep.blockers == [rep.findings[1]] and rep.caveats == [rep.findings[0], rep.findings[2]]
    j = rep.to_json()
    assert set(j) == {"verdict", "findings", "spans"} and j["spans"] == rep.per_span
    assert j["findings"][0] == {"span_id": None, "code": "no_clock", "severity": "partial", "grade": "caveat",
                                "reason": rep.findings[0].reason, "field": "header.clock",
                                "workaround": rep.findings[0].workaround}
    assert j["findings"][1]["workaround"] is None
    json.dumps(j)
    assert all(f.severity in SEVERITIES for f in rep.findings) and rep.verdict in VERDICTS
    with pytest.raises(AttributeError):
        rep.findings[0].code = "x"  # type: ignore[misc]
    assert isinstance(rep.findings[0], Finding)
