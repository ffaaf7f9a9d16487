"""vcrpy reader: the corpus cassettes and hand-written ones (gzip !!binary, interleaved parallel
tool-call stream, 429, Anthropic, Responses API, malformed YAML)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml
from corpus import CORPUS, corpus

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status, Trace
from tracetui.core.readers import read_trace
from tracetui.core.readers.vcrpy import VcrpyReader, assemble_chat_stream, sse_data

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "vcrpy"
TOOLS = "vcrpy/test_chat_completion_tool_calls_with_content.yaml"
STREAM = "vcrpy/test_chat_completion_multiple_tools_streaming_with_content.yaml"
SECRETS = (b"test_openai_api_key", b"test_set_cookie", b"test_openai_org_id", b"test_cookie", b"should-never-be-copied",
           b"sk-should-never", b"proj_should_never")


def dump(t: Trace) -> bytes:
    return orjson.dumps([[dict(s.data), dict(s.attributes), s.name] for s in t.spans] + [t.header])


def shape(t: Trace) -> list[tuple[str, str]]:
    return [(s.kind.value, s.name) for s in t.spans]


# -- corpus ----------------------------------------------------------------------------------


def test_tool_round_trip_cassette_two_llm_calls_and_the_tool_results_between() -> None:
    t = read_trace(corpus(TOOLS))
    assert t.format == "vcrpy" and t.trace_ids == ["cassette"] and not t.issues
    assert shape(t) == [("agent", "cassette"), ("llm", "chat gpt-4o-mini"), ("tool", "get_current_weather"),
                        ("tool", "get_current_weather"), ("llm", "chat gpt-4o-mini")]
    assert all(s.parent_id == "root" for s in t.spans[1:])
    llm1, seattle, sf, llm2 = t.spans[1:]
    assert [(s.data["call_id"], s.data["arguments"], s.data["output"]) for s in (seattle, sf)] == [
        ("call_JpNb8OiAkbIbHzDggfpdDHpi", {"location": "Seattle, WA"}, "50 degrees and raining"),
        ("call_vaFQc3zK6hHTRZKXRI5Eo2cJ", {"location": "San Francisco, CA"}, "70 degrees and sunny")]
    assert seattle.data["args_hash"] == args_hash({"location": "Seattle, WA"})
    assert seattle.attributes["tracetui.reconstructed_from"] == "next_request"
    assert llm1.data["finish_reason"] == "tool_call" and llm1.data["usage"] == {"input_tokens": 75, "output_tokens": 51}
    assert llm1.data["response_id"] == "chatcmpl-ASYMU9Ntix7ePttk0MSuerJstef6U"
    assert llm1.data["params"] == {"tool_choice": "auto"} and llm1.data["provider"] == "openai"
    assert [m["role"] for m in llm1.data["messages"]] == ["system", "user"]
    tools = yaml.safe_load(corpus(TOOLS).read_text())["interactions"][0]["request"]["body"]
    assert llm1.data["tool_schemas_hash"] == args_hash(orjson.loads(tools)["tools"])
    assert [m["role"] for m in llm2.data["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert llm2.data["output"]["content"].startswith("Today, the weather in Seattle is 50 degrees and raining")
    assert llm2.data["finish_reason"] == "stop" and llm2.data["usage"] == {"input_tokens": 99, "output_tokens": 25}
    assert "params" not in llm2.data
    assert [s.line for s in t.spans[1:]] == [2, 178, 178, 178]
    assert t.header["model"] == {"id": "gpt-4o-mini", "version": "gpt-4o-mini-2024-07-18", "provider": "openai"}
    assert t.header["input"] == "What's the weather in Seattle and San Francisco today?"
    assert t.header["started_at"] == "2024-11-11T23:43:55Z"
    assert t.spans[0].data["output"] == llm2.data["output"]["content"]


def test_streamed_cassette_reassembles_the_parallel_tool_calls() -> None:
    t = read_trace(corpus(STREAM))
    assert shape(t) == [("agent", "cassette"), ("llm", "chat gpt-4o-mini")]
    llm = t.spans[1]
    assert llm.data["output"] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_fHCjJqt9Pysde6vcJcvbXGBx", "name": "get_current_weather", "arguments": {"location": "Seattle, WA"}},
        {"id": "call_3J9foSw3CUb48lrqIXoTky6U", "name": "get_current_weather",
         "arguments": {"location": "San Francisco, CA"}}]}
    assert llm.data["finish_reason"] == "tool_call"
    assert llm.data["usage"] == {"input_tokens": 75, "output_tokens": 51}
    assert llm.data["response_id"] == "chatcmpl-ASYMbACebDoWcuraMEWQhU48q4dAp"
    assert llm.data["params"] == {"stream": True, "stream_options": {"include_usage": True}, "tool_choice": "auto"}
    # the cassette ends before the tool results are sent back: said once, no tool span invented
    assert [(i.severity, "2 tool call(s)" in i.message) for i in t.issues] == [("warning", True)]


@pytest.mark.parametrize("rel", [TOOLS, STREAM])
def test_credentials_in_corpus_cassettes_are_never_copied(rel: str) -> None:
    blob = dump(read_trace(corpus(rel)))
    assert not [s for s in SECRETS if s in blob]


# -- hand-written ----------------------------------------------------------------------------


def test_gzip_binary_bodies_are_decompressed() -> None:
    t = read_trace(DATA / "gzip_binary.yaml")
    llm = t.spans[1]
    assert llm.data["messages"] == [{"role": "user", "content": "Where is order 17?"}]
    assert llm.data["params"] == {"temperature": 0}
    assert llm.data["output"] == {"role": "assistant", "content": "Order 17 shipped on Monday."}
    assert llm.data["response_id"] == "chatcmpl-gz1" and llm.data["usage"] == {"input_tokens": 12, "output_tokens": 7}
    assert not t.issues and not [s for s in SECRETS if s in dump(t)]


def test_interleaved_parallel_tool_call_deltas_merge_by_index() -> None:
    t = read_trace(DATA / "sse_parallel.yaml")
    assert shape(t) == [("agent", "cassette"), ("llm", "chat gpt-4o"), ("tool", "check_stock"),
                        ("tool", "lookup_order"), ("llm", "chat gpt-4o")]
    out = t.spans[1].data["output"]
    assert out["content"] == "Checking both."
    assert out["tool_calls"] == [{"id": "call_A", "name": "lookup_order", "arguments": {"order_id": 17}},
                                 {"id": "call_B", "name": "check_stock", "arguments": {"sku": "A-9"}}]
    assert t.spans[1].data["usage"] == {"input_tokens": 40, "output_tokens": 22}
    # tool spans in the order the agent sent the results back
    assert [(s.data["call_id"], s.data["output"]) for s in t.spans[2:4]] == [
        ("call_B", '{"in_stock": 3}'), ("call_A", '{"sku": "A-9", "status": "paid"}')]
    assert not t.issues and not [s for s in SECRETS if s in dump(t)]


def test_assemble_chat_stream_unit() -> None:
    chunks = [{"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 1, "id": "b", "function": {"name": "g", "arguments": "{\"y\""}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": ": 2}"}}]}}]},
        {"choices": [{"index": 1, "delta": {"content": "other choice"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    done = assemble_chat_stream(chunks)
    assert done["message"]["content"] is None
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in done["message"]["tool_calls"]] == [
        ("a", "f", "{}"), ("b", "g", "{\"y\": 2}")]
    assert done["finish_reason"] == "tool_calls" and done["id"] == "c"


def test_sse_data_joins_multiline_events() -> None:
    assert sse_data("event: a\ndata: {\"x\":\ndata: 1}\n\n: comment\ndata: [DONE]\n") == [("a", "{\"x\":\n1}"), (None, "[DONE]")]


def test_429_is_an_error_span_and_other_http_is_an_other_span() -> None:
    t = read_trace(DATA / "rate_limited.yaml")
    assert shape(t) == [("agent", "cassette"), ("llm", "chat gpt-4o-mini"), ("llm", "chat gpt-4o-mini"),
                        ("other", "GET api.weather.example/v1/forecast")]
    failed, ok, get = t.spans[1:]
    assert (failed.status, failed.error_type) == (Status.ERROR, "429")
    assert "output" not in failed.data
    assert failed.attributes["error.code"] == "rate_limit_exceeded"
    assert failed.attributes["http.response.header.retry-after"] == "2"
    assert (ok.status, ok.data["output"]["content"]) == (Status.UNSET, "Cold.")
    assert get.data == {"input": None, "output": {"temp_c": -3}}
    assert get.attributes["url.full"] == "https://api.weather.example/v1/forecast?city=Oslo&api_key=REDACTED"
    assert not [s for s in SECRETS if s in dump(t)]


def test_anthropic_tool_use_round_trip_and_stream() -> None:
    t = read_trace(DATA / "anthropic_tools.yaml")
    assert shape(t) == [("agent", "cassette"), ("llm", "chat claude-sonnet-4-5"), ("tool", "get_weather"),
                        ("llm", "chat claude-sonnet-4-5")]
    first, tool, second = t.spans[1:]
    assert first.data["messages"][0] == {"role": "system", "content": "You are terse."}
    assert first.data["output"]["tool_calls"] == [{"id": "toolu_01", "name": "get_weather", "arguments": {"city": "Lyon"}}]
    assert first.data["finish_reason"] == "tool_call" and first.data["provider"] == "anthropic"
    assert (tool.data["call_id"], tool.data["output"]) == ("toolu_01", "18C, clear")
    assert second.data["output"] == {"role": "assistant", "content": "18C and clear."}
    assert second.data["finish_reason"] == "stop"
    assert second.data["usage"] == {"input_tokens": 80, "output_tokens": 6}
    assert second.data["response_id"] == "msg_02"
    assert not [s for s in SECRETS if s in dump(t)]


def test_openai_responses_function_call_round_trip() -> None:
    t = read_trace(DATA / "responses_api.yaml")
    assert shape(t) == [("agent", "cassette"), ("llm", "chat gpt-4.1"), ("tool", "convert"), ("llm", "chat gpt-4.1")]
    first, tool, second = t.spans[1:]
    assert first.data["messages"] == [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": "Convert 3 miles to km"}]
    assert first.data["finish_reason"] == "tool_call"
    assert (tool.data["arguments"], tool.data["output"]) == ({"miles": 3}, "4.83")
    assert second.data["output"]["content"] == "About 4.83 km." and second.data["finish_reason"] == "stop"


def test_malformed_yaml_is_a_read_error_with_its_line() -> None:
    with pytest.raises(ReadError) as info:
        read_trace(DATA / "malformed.yaml", format="vcrpy")
    assert info.value.line == 8 and "not valid YAML" in info.value.reason


def test_yaml_python_tags_are_refused(tmp_path: Path) -> None:
    """Safe loading only: a python/object tag is an error, never executed."""
    p = tmp_path / "evil.yaml"
    p.write_text("interactions:\n- request: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(ReadError, match="not valid YAML"):
        read_trace(p, format="vcrpy")


def test_json_serializer_cassette_and_shape_errors(tmp_path: Path) -> None:
    doc = {"interactions": [{"request": {"method": "POST", "uri": "http://localhost:8000/v1/chat/completions",
                                         "body": orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "q"}]}).decode(),
                                         "headers": {}},
                             "response": {"status": {"code": 500, "message": "oops"}, "headers": {},
                                          "body": {"string": "upstream down"}}}], "version": 1}
    p = tmp_path / "c.json"
    p.write_bytes(orjson.dumps(doc))
    t = read_trace(p)
    assert t.format == "vcrpy"
    llm = t.spans[1]
    assert (llm.kind, llm.status, llm.error_type) == (SpanKind.LLM, Status.ERROR, "500")
    assert "provider" not in llm.data and llm.attributes["error.message"] == "upstream down"
    with pytest.raises(ReadError, match="no interactions"):
        VcrpyReader().read("e.yaml", b"interactions: []\nversion: 1\n")
    with pytest.raises(ReadError, match="not a vcrpy cassette"):
        VcrpyReader().read("e.yaml", b"foo: 1\n")


def test_sniff_accepts_only_cassettes() -> None:
    r = VcrpyReader()
    roots = [CORPUS, ROOT / "sample_runs", ROOT / "tests" / "data" / "otlp"]
    files = [p for root in roots if root.exists() for p in sorted(root.rglob("*")) if p.is_file()]
    if not any(str(p).startswith(str(CORPUS)) for p in files):
        pytest.skip("corpus not available")
    hits = {p.name for p in files if r.sniff(p.read_bytes()[:65536])}
    assert hits == {Path(TOOLS).name, Path(STREAM).name}
    assert all(r.sniff(p.read_bytes()) for p in DATA.glob("*.yaml"))


def test_two_calls_of_one_answer_sharing_an_id_stay_two_spans_and_are_reported(tmp_path: Path) -> None:
    """Issue 18: the second parallel call reuses the first one's id. Each call keeps its own span,
    arguments and result (paired in order), and the reader says so with both calls."""
    text = (DATA / "sse_parallel.yaml").read_text().replace("call_B", "call_A")
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    t = read_trace(path)
    tools = [s for s in t.spans if s.kind is SpanKind.TOOL]
    assert [(s.data["tool_name"], s.data["arguments"], s.data["output"]) for s in tools] == [
        ("lookup_order", {"order_id": 17}, '{"in_stock": 3}'),
        ("check_stock", {"sku": "A-9"}, '{"sku": "A-9", "status": "paid"}')]
    assert len({s.span_id for s in tools}) == 2
    (issue,) = [i for i in t.issues if "share the id" in i.message]
    assert "lookup_order" in issue.message and "check_stock" in issue.message


def test_a_streamed_call_without_argument_deltas_has_empty_object_arguments() -> None:
    chunks = [{"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "a", "function": {"name": "now", "arguments": ""}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    done = assemble_chat_stream(chunks)
    assert done["message"]["tool_calls"][0]["function"]["arguments"] == "{}"
