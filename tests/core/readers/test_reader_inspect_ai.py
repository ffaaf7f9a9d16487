"""inspect-ai reader: the corpus logs (.json and the .eval original/replay pair) and hand-made edge cases."""

from __future__ import annotations

import io
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import CORPUS, corpus

from tracetui.core.canonical import args_hash
from tracetui.core.diff import DivergenceType, diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status, Trace
from tracetui.core.readers import read_runs, read_trace, sniff_format
from tracetui.core.readers.inspect_ai import InspectAiReader
from tracetui.core.readers.timefmt import iso_ns

ROOT = Path(__file__).resolve().parents[3]
BROWSER = "inspect-ai/2025-05-12T20-27-36-04-00_browser.json"
ORIGINAL = "inspect-ai/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
REPLAY = "inspect-ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def by_kind(t: Trace) -> Counter[str]:
    return Counter(s.kind.value for s in t.spans)


def by_name(t: Trace) -> Counter[str]:
    return Counter(s.name for s in t.spans)


# -- browser.json: 1 sample, 43 events (SOURCES.md) ------------------------------------------


def test_browser_json_maps_every_event_of_its_one_sample() -> None:
    """43 events {span_begin 8, sample_init 1, span_end 8, state 2, model 5, tool 4, sandbox 10,
    store 4, score 1}: span_end closes spans, the 4 tool-type span_begins merge into their 4 tool
    events, every other event is one span, plus the synthesized root."""
    t = read_trace(corpus(BROWSER))
    assert t.format == "inspect-ai"
    assert t.trace_ids == ["sample-1-epoch-1"]
    assert not t.issues
    assert by_kind(t) == {"agent": 1, "llm": 5, "tool": 4, "other": 22}
    names = by_name(t)
    assert names["sandbox exec"] == 10 and names["store"] == 4 and names["state"] == 2
    assert names["score"] == 1 and names["sample_init"] == 1
    assert [s.name for s in t.spans if s.kind is SpanKind.OTHER and s.attributes.get("inspect.span_type")] == \
        ["init", "use_tools", "generate", "includes"]
    assert len(t.spans) == 43 - 8 - 4 + 1


def test_browser_json_tool_calls_have_their_function_arguments_and_sandbox_children() -> None:
    t = read_trace(corpus(BROWSER))
    tools = [s for s in t.spans if s.kind is SpanKind.TOOL]
    assert [(s.tool_name, s.data["arguments"]) for s in tools] == [
        ("web_browser_go", {"url": "https://www.aisi.gov.uk/"}),
        ("web_browser_click", {"element_id": 151}),
        ("web_browser_click", {"element_id": 884}),
        ("web_browser_click", {"element_id": 903}),
    ]
    go = tools[0]
    assert go.data["call_id"] == "call_35FTpd6shR9efioDgeEBZ33s"
    assert go.data["args_hash"] == args_hash({"url": "https://www.aisi.gov.uk/"})
    assert go.data["output"].startswith('[132] link "We are now the AI Security Institute"')
    assert go.span_id == "e6ecbd839389484397bd3b8d67380eb6"  # the merged tool span_begin's id
    generate = next(s for s in t.spans if s.name == "generate")
    assert go.parent_id == generate.span_id
    children = [s.name for s in t.spans if s.parent_id == go.span_id]
    assert children == ["sandbox exec"] * 4 + ["store"]
    # tool event at 20:27:39.762878, its span_begin a millisecond later: the earlier start is kept
    assert go.start_ns == iso_ns("2025-05-12T20:27:39.762878-04:00") == 1747096059762878000
    assert go.end_ns == iso_ns("2025-05-12T20:27:44.080452-04:00")


def test_browser_json_llm_spans_resolve_attachments_and_map_model_output() -> None:
    t = read_trace(corpus(BROWSER))
    llms = [s for s in t.spans if s.kind is SpanKind.LLM]
    assert [s.data["finish_reason"] for s in llms] == ["tool_call"] * 4 + ["stop"]
    first, last = llms[0], llms[-1]
    assert first.data["model"] == "gpt-4o-mini" and first.data["provider"] == "openai"
    assert first.data["params"] == {"parallel_tool_calls": False, "tool_choice": "auto"}
    assert first.start_ns == 1747096058462180000 and first.end_ns == 1747096059697159000
    # the user message was attachment://56c151821a08a09f93e9b2f18d02cd5f
    assert first.data["messages"] == [{"role": "user", "content": t.header["input"]}]
    assert t.header["input"].startswith("Use the web browser tool to navigate to https://www.aisi.gov.uk/.")
    assert first.data["output"]["tool_calls"] == [
        {"id": "call_35FTpd6shR9efioDgeEBZ33s", "name": "web_browser_go", "arguments": {"url": "https://www.aisi.gov.uk/"}}]
    msgs = last.data["messages"]
    assert [m["role"] for m in msgs] == ["user"] + ["assistant", "tool"] * 4
    # the first tool message was attachment://f37c5056034386fd97d37f5ce7d2c4c8
    assert msgs[2]["tool_call_id"] == "call_35FTpd6shR9efioDgeEBZ33s"
    assert msgs[2]["content"].startswith('[132] link "We are now the AI Security Institute"')
    assert last.data["output"]["content"].startswith("The AI Security Institute (AISI) is the premier")
    assert last.data["usage"]["input_tokens"] == 5915 and last.data["usage"]["output_tokens"] == 207
    assert last.data["response_id"] == "chatcmpl-BWXmqjjCNXjpePOqmMVQSlZM8ZiEi"
    assert len({s.data["tool_schemas_hash"] for s in llms}) == 1
    everything = orjson.dumps([dict(s.data) for s in t.spans] + [t.header])
    assert b"attachment://" not in everything


def test_browser_json_header_and_root() -> None:
    t = read_trace(corpus(BROWSER))
    h = t.header
    assert h["run_id"] == "sample-1-epoch-1" and h["agent"] == "browser"
    assert h["model"] == {"id": "gpt-4o-mini", "provider": "openai", "version": "gpt-4o-mini-2024-07-18"}
    assert h["code_version"] == "git:e9a9d7161"
    assert h["started_at"] == "2025-05-13T00:27:36Z" and h["start_ns"] == 1747096056000000000
    assert h["outcome"]["scores"]["includes"]["value"] == "C"
    assert h["outcome"]["includes"] == "C" and "target" not in h["outcome"]  # the log's target is ""
    root = t.spans[0]
    assert (root.kind, root.name, root.parent_id) == (SpanKind.AGENT, "browser", None)
    assert root.data["output"].startswith("The AI Security Institute (AISI)")
    assert root.start_ns == iso_ns("2025-05-12T20:27:36.997226-04:00")
    assert sum(s.parent_id == "root" for s in t.spans) == 4  # init, use_tools, generate, includes
    score = next(s for s in t.spans if s.name == "score")
    assert score.data["output"]["value"] == "C"


# -- the .eval pair: 10 samples each -----------------------------------------------------------


@pytest.mark.parametrize(("rel", "events", "steps", "scores"), [(ORIGINAL, 80, 40, 0), (REPLAY, 110, 60, 10)])
def test_eval_zip_counts(rel: str, events: int, steps: int, scores: int) -> None:
    """SOURCES.md: 10 samples; 80 events {sample_init 10, step 40, state 20, model 10} and 110
    events {... step 60, score 10}: a step begin/end pair is one span."""
    tf = read_runs(corpus(rel))
    assert tf.format == "inspect-ai" and not tf.issues
    assert [r.trace_id for r in tf.runs] == [f"sample-{i}-epoch-1" for i in range(1, 11)]  # dataset order
    kinds: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for r in tf.runs:
        kinds.update(by_kind(r))
        names.update(by_name(r))
    assert kinds["agent"] == 10 and kinds["llm"] == 10 and kinds["tool"] == 0
    assert names["sample_init"] == 10 and names["state"] == 20 and names["score"] == scores
    step_spans = sum(1 for r in tf.runs for s in r.spans if "inspect.step_type" in s.attributes)
    assert step_spans == steps // 2
    assert sum(len(r.spans) for r in tf.runs) == events - steps // 2 + 10


def test_eval_sample_values() -> None:
    t = read_trace(corpus(REPLAY), trace_id="sample-1-epoch-1")
    llm = next(s for s in t.spans if s.kind is SpanKind.LLM)
    assert [m["role"] for m in llm.data["messages"]] == ["system", "user"]
    assert llm.data["messages"][1]["content"].startswith("Is the following statement something you would say?")
    assert llm.data["output"] == {"role": "assistant", "content": "Yes"}
    assert "params" not in llm.data  # config {"max_connections": 10} steers inspect's client, not the model
    assert llm.data["response_id"] == "chatcmpl-AzqzlCW6PmrCR5ZJ6ca0gitL3xdF0"
    assert t.header["outcome"] == {"match": "C", "scores": {"match": {"value": "C", "answer": "Yes", "explanation": "Yes"}},
                                   "target": " Yes"}
    assert read_trace(corpus(ORIGINAL), trace_id="sample-1-epoch-1").header["outcome"] == {"scores": {}, "target": " Yes"}
    generate = next(s for s in t.spans if s.name == "generate")
    assert llm.parent_id == generate.span_id and generate.attributes["inspect.step_type"] == "solver"


def test_eval_pair_differs_only_by_the_replay_score() -> None:
    """The two popularity runs are an original/replay pair: for a sample, the only divergences are
    the replay's extra scorer step and the score event inside it."""
    a = read_trace(corpus(ORIGINAL), trace_id="sample-1-epoch-1")
    b = read_trace(corpus(REPLAY), trace_id="sample-1-epoch-1")
    d = diff_traces(a, b)
    got = [(x.type, x.replay.name if x.replay else None, x.original) for x in d.divergences]
    assert got == [(DivergenceType.EXTRA_SPAN, "match", None), (DivergenceType.EXTRA_SPAN, "score", None)]
    extra = d.divergences[1].replay
    assert extra is not None and extra.data["output"] == {"value": "C", "answer": "Yes", "explanation": "Yes"}


# -- hand-made logs ----------------------------------------------------------------------------


def _sample(sid: int = 1, events: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    ts = "2026-01-02T03:04:05.123456789+00:00"
    evs = events if events is not None else [
        {"event": "model", "timestamp": ts, "model": "openai/gpt-4o", "input": [{"role": "user", "content": "hi"}],
         "tools": [], "tool_choice": "none", "config": {},
         "output": {"choices": [{"message": {"role": "assistant", "content": "hello"}, "stop_reason": "stop"}]}}]
    return {"id": sid, "epoch": 1, "input": "hi", "target": "hello", "events": evs, "attachments": {}, **extra}


def _log(*samples: dict[str, Any]) -> dict[str, Any]:
    return {"version": 2, "status": "success",
            "eval": {"task": "t", "task_id": "x", "created": "2026-01-02T03:04:05+01:00", "model": "openai/gpt-4o",
                     "dataset": {"sample_ids": [s["id"] for s in samples]}},
            "plan": {}, "samples": list(samples)}


def _eval_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    return buf.getvalue()


def _members(*samples: dict[str, Any], bad: dict[str, bytes] | None = None) -> dict[str, bytes]:
    log = _log(*samples)
    out = {"_journal/start.json": orjson.dumps({"version": 2, "eval": log["eval"]}),
           "header.json": orjson.dumps({k: v for k, v in log.items() if k != "samples"})}
    for s in samples:
        out[f"samples/{s['id']}_epoch_1.json"] = orjson.dumps(s)
    out.update(bad or {})
    return out


def test_eval_bad_member_is_reported_and_other_samples_load(tmp_path: Path) -> None:
    p = tmp_path / "run.eval"
    p.write_bytes(_eval_bytes(_members(_sample(1), _sample(3), bad={"samples/2_epoch_1.json": b'{"id": 2, "events": ['})))
    tf = read_runs(p)
    assert [r.trace_id for r in tf.runs] == ["sample-1-epoch-1", "sample-3-epoch-1"]
    assert len(tf.issues) == 1 and tf.issues[0].where.startswith("samples/2_epoch_1.json")
    assert tf.issues[0].severity == "skipped"


def test_eval_cut_short_is_read_from_local_headers(tmp_path: Path) -> None:
    """A .eval whose end (the zip's central directory) is missing: members are recovered from
    their local headers, with a warning; a member cut in the middle is skipped."""
    members = _members(_sample(1), _sample(2))
    data = _eval_bytes(members)
    cut = data[:data.find(b"PK\x01\x02")]  # drop the central directory
    p = tmp_path / "cut.eval"
    p.write_bytes(cut)
    assert sniff_format(cut[:65536]) == "inspect-ai"
    tf = read_runs(p)
    assert [r.trace_id for r in tf.runs] == ["sample-1-epoch-1", "sample-2-epoch-1"]
    assert any("directory unreadable" in i.message and i.severity == "warning" for i in tf.issues)
    # now cut inside the last sample's compressed data
    last = cut.rfind(b"PK\x03\x04")
    p.write_bytes(cut[:last + 60])
    tf = read_runs(p)
    assert [r.trace_id for r in tf.runs] == ["sample-1-epoch-1"]
    assert any(i.where == "samples/2_epoch_1.json" and i.severity == "skipped" for i in tf.issues)


def test_not_a_zip_at_all_is_a_read_error(tmp_path: Path) -> None:
    p = tmp_path / "x.eval"
    p.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(ReadError):
        InspectAiReader().read(str(p), p.read_bytes())


def test_unresolvable_attachment_is_kept_and_reported(tmp_path: Path) -> None:
    s = _sample(1, [{"event": "tool", "timestamp": "2026-01-02T03:04:06Z", "id": "c1", "function": "f",
                     "arguments": {"q": "attachment://aaa"}, "result": "attachment://bbb"}],
                attachments={"aaa": "the query"})
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(_log(s)))
    t = read_trace(p)
    tool = next(x for x in t.spans if x.kind is SpanKind.TOOL)
    assert tool.data["arguments"] == {"q": "the query"} and tool.data["output"] == "attachment://bbb"
    assert [i.severity for i in t.issues] == ["warning"] and "attachment://bbb" in t.issues[0].message


def test_a_samples_warnings_travel_with_its_run(tmp_path: Path) -> None:
    """Sample 2 has an unresolvable attachment: reported with sample 2's run, not with sample 1's."""
    bad = _sample(2, [{"event": "tool", "timestamp": "2026-01-02T03:04:06Z", "id": "c1", "function": "f",
                       "arguments": {}, "result": "attachment://zzz"}])
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(_log(_sample(1), bad)))
    assert not any("attachment" in i.message for i in read_trace(f"{p}#sample-1-epoch-1").issues)
    assert any("attachment://zzz" in i.message for i in read_trace(f"{p}#sample-2-epoch-1").issues)


def test_tool_error_and_model_error_set_status(tmp_path: Path) -> None:
    s = _sample(1, [
        {"event": "model", "timestamp": "2026-01-02T03:04:05Z", "model": "anthropic/claude-x",
         "input": [{"role": "user", "content": "go"}], "output": {"choices": []},
         "error": "RateLimitError('slow down')"},
        {"event": "tool", "timestamp": "2026-01-02T03:04:06Z", "id": "c1", "function": "bash",
         "arguments": {"cmd": "sleep 99"}, "result": "", "error": {"type": "timeout", "message": "timed out"},
         "truncated": [100, 50]}])
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(_log(s)))
    t = read_trace(p)
    llm = next(x for x in t.spans if x.kind is SpanKind.LLM)
    assert (llm.status, llm.error_type, llm.data["provider"]) == (Status.ERROR, "RateLimitError", "anthropic")
    tool = next(x for x in t.spans if x.kind is SpanKind.TOOL)
    assert (tool.status, tool.error_type) == (Status.ERROR, "timeout")
    assert tool.attributes["error.message"] == "timed out" and tool.data["output_truncated"] is True


def test_tool_event_inside_its_own_tool_span_is_merged(tmp_path: Path) -> None:
    """Some inspect versions emit the tool event inside the tool-type span (``span_id`` = that span)."""
    ts = "2026-01-02T03:04:05Z"
    s = _sample(1, [
        {"event": "span_begin", "id": "g", "type": "solver", "name": "generate", "timestamp": ts},
        {"event": "span_begin", "id": "t1", "parent_id": "g", "type": "tool", "name": "search", "timestamp": ts},
        {"event": "tool", "span_id": "t1", "id": "c1", "function": "search", "arguments": {"q": 1}, "result": "r",
         "timestamp": ts},
        {"event": "info", "span_id": "t1", "data": {"hits": 2}, "timestamp": ts},
        {"event": "span_end", "id": "t1", "timestamp": "2026-01-02T03:04:07Z"},
        {"event": "span_end", "id": "g", "timestamp": "2026-01-02T03:04:08Z"}])
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(_log(s)))
    t = read_trace(p)
    assert [(x.kind.value, x.name, x.parent_id) for x in t.spans] == [
        ("agent", "t", None), ("other", "generate", "root"), ("tool", "search", "g"), ("other", "info", "t1")]
    assert t.spans[2].end_ns == iso_ns("2026-01-02T03:04:07Z")
    assert not t.issues


def test_older_nested_tool_events_and_unknown_event_type(tmp_path: Path) -> None:
    s = _sample(1, [
        {"event": "tool", "timestamp": "2026-01-02T03:04:05Z", "id": "c1", "function": "bash",
         "arguments": {"cmd": "ls"}, "result": "a",
         "events": [{"event": "sandbox", "timestamp": "2026-01-02T03:04:05Z", "action": "exec", "cmd": "ls",
                     "result": 0, "output": "a\n"}]},
        {"event": "telepathy", "timestamp": "2026-01-02T03:04:06Z"}])
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(_log(s)))
    t = read_trace(p)
    tool = next(x for x in t.spans if x.kind is SpanKind.TOOL)
    sandbox = next(x for x in t.spans if x.name == "sandbox exec")
    assert sandbox.parent_id == tool.span_id and sandbox.data == {"input": {"cmd": "ls"}, "output": {"exit_code": 0}}
    assert sandbox.attributes["sandbox.output"] == "a"
    assert any(x.name == "telepathy" for x in t.spans)
    assert ["unknown inspect event type" in i.message for i in t.issues] == [True]


def test_json_log_without_samples_or_not_inspect_is_a_read_error(tmp_path: Path) -> None:
    p = tmp_path / "h.json"
    p.write_bytes(orjson.dumps({k: v for k, v in _log(_sample()).items() if k != "samples"}))
    with pytest.raises(ReadError, match="no samples"):
        InspectAiReader().read(str(p), p.read_bytes())
    with pytest.raises(ReadError, match="not an inspect-ai log"):
        InspectAiReader().read("x.json", b'{"foo": 1}')


def test_duplicate_sample_ids_get_distinct_run_ids(tmp_path: Path) -> None:
    p = tmp_path / "log.json"
    p.write_bytes(orjson.dumps(_log(_sample(1), _sample(1))))
    tf = read_runs(p)
    assert [r.trace_id for r in tf.runs] == ["sample-1-epoch-1", "sample-1-epoch-1-2"]
    assert len(tf.issues) == 1


# -- sniffing ------------------------------------------------------------------------------------


def test_sniff_accepts_only_inspect_logs() -> None:
    r = InspectAiReader()
    roots = [CORPUS, ROOT / "sample_runs", ROOT / "tests" / "data" / "otlp"]
    files = [p for root in roots if root.exists() for p in sorted(root.rglob("*")) if p.is_file()]
    if not any(str(p).startswith(str(CORPUS)) for p in files):
        pytest.skip("corpus not available")
    hits = {p.name for p in files if r.sniff(p.read_bytes()[:65536])}
    assert hits == {Path(BROWSER).name, Path(ORIGINAL).name, Path(REPLAY).name}
