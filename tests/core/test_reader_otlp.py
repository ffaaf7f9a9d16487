"""OTLP/JSON reader and the OTel attribute mapper, on real corpus files and hand-made edge cases."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError, TraceNotFound
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers import read_trace, sniff_format
from tracetui.core.readers.otel_attrs import indexed_families, span_fields_from_attributes
from tracetui.core.readers.otlp import OtlpJsonReader, anyvalue, normalize_id
from mutate import odd_value_outcomes

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "data" / "otlp"
CORPUS = TESTS.parent / ".." / "shared" / "corpus"

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
from otlp_helpers import any_agent_to_otlp, to_attributes  # noqa: E402


def corpus(rel: str) -> Path:
    p = CORPUS / rel
    if not p.exists():
        pytest.skip(f"corpus file {rel} not available")
    return p


def langfuse_observations(name: str) -> list[dict[str, Any]]:
    """The observations of a Langfuse export, each with its embedded OTel ``attributes`` decoded."""
    doc = json.loads(corpus(f"langfuse/{name}.trace.json").read_text(encoding="utf-8"))
    out = []
    for o in doc["observations"]:
        meta = o["metadata"]
        meta = json.loads(meta) if isinstance(meta, str) else meta
        out.append({**o, "attributes": meta.get("attributes", {})})
    return out


def write(tmp_path: Path, name: str, content: bytes | str | dict[str, Any]) -> Path:
    p = tmp_path / name
    if isinstance(content, dict):
        content = orjson.dumps(content)
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


def envelope(*spans: dict[str, Any], scope_groups: list[list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    groups = scope_groups if scope_groups is not None else [list(spans)]
    return {"resourceSpans": [{"resource": {"attributes": to_attributes({"service.name": "svc"})},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": g} for g in groups]}]}


def span(sid: str, *, trace: str = "ab" * 16, parent: str = "", name: str = "op", start: Any = "1000",
         end: Any = "2000", attrs: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"traceId": trace, "spanId": sid, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": start, "endTimeUnixNano": end, "attributes": to_attributes(attrs or {}), **extra}


def by_name(trace: Any) -> dict[str, Any]:
    return {s.name: s for s in trace.spans}


# --- the protocol repo's canonical example -------------------------------------------------


def test_proto_example_is_sniffed_and_read_with_lowercase_ids_and_orphan_parent_as_root() -> None:
    """Upper-case hex ids become lowercase; the parent that is not in the file is reported and dropped."""
    path = corpus("otlp-json/opentelemetry-proto_examples_trace.json")
    assert sniff_format(path.read_bytes()) == "otlp-json"
    trace = read_trace(path)
    assert trace.format == "otlp-json"
    assert trace.trace_id == "5b8efff798038103d269b633813fc60c"
    assert trace.trace_ids == ["5b8efff798038103d269b633813fc60c"]
    (s,) = trace.spans
    assert (s.span_id, s.parent_id, s.seq) == ("eee19b7ec3c1b174", None, 0)
    assert s.name == "I'm a server span" and s.kind is SpanKind.OTHER
    assert (s.start_ns, s.end_ns) == (1544712660000000000, 1544712661000000000)
    assert s.attributes["my.span.attr"] == "some value"
    assert s.attributes["service.name"] == "my.service"
    assert s.attributes["otel.span_kind"] == "server"
    orphan = [i for i in trace.issues if i.where == "parent_id"]
    assert len(orphan) == 1 and "eee19b7ec3c1b173" in orphan[0].message


def test_native_files_are_not_sniffed_as_otlp() -> None:
    assert not OtlpJsonReader().sniff(b'{"schema": "tracetui/1", "run_id": "r"}\n')
    assert not OtlpJsonReader().sniff(b'just text mentioning resourceSpans')


# --- Collector JSON Lines ------------------------------------------------------------------


def test_collector_jsonl_groups_spans_of_a_trace_spread_over_lines() -> None:
    """Four lines, two traces interleaved: one run per trace id, in file order, with a sound tree."""
    trace = read_trace(DATA / "collector_two_traces.jsonl")
    assert trace.trace_ids == ["4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"]
    assert trace.issues == []
    assert [s.name for s in trace.spans] == [
        "invoke_agent scheduler", "chat gpt-4o", "execute_tool check_availability", "chat gpt-4o",
        "execute_tool book_slot"]
    assert [s.seq for s in trace.spans] == [0, 1, 2, 3, 4]
    root = trace.spans[0]
    assert root.kind is SpanKind.AGENT and root.data == {"agent_name": "scheduler"} and root.line == 3
    assert all(s.parent_id == root.span_id for s in trace.spans[1:])
    assert {s.line for s in trace.spans[1:]} == {1, 2, 4}


def test_genai_chat_span_maps_params_messages_output_and_usage() -> None:
    chat = read_trace(DATA / "collector_two_traces.jsonl").spans[1]
    assert chat.kind is SpanKind.LLM
    d = chat.data
    assert d["model"] == "gpt-4o" and d["provider"] == "openai"
    assert d["params"] == {"temperature": 0.2, "max_tokens": 512, "seed": 7, "stop_sequences": ["\n\n"]}
    assert d["messages"] == [
        {"role": "system", "content": "You schedule installs."},
        {"role": "user", "content": "Can you move my install to Thursday?"},
    ]
    assert d["output"] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_8f2", "name": "check_availability", "arguments": {"date": "2026-11-06", "region": "north"}}]}
    assert d["finish_reason"] == "tool_call"
    assert d["usage"] == {"input_tokens": 412, "output_tokens": 31}
    assert d["response_id"] == "chatcmpl-7Qx"
    assert chat.attributes["gen_ai.response.model"] == "gpt-4o-2024-08-06"  # unmapped, kept for display
    assert "gen_ai.input.messages" not in chat.attributes  # mapped, not duplicated


def test_genai_tool_span_parses_string_arguments_and_hashes_them() -> None:
    tool = by_name(read_trace(DATA / "collector_two_traces.jsonl"))["execute_tool check_availability"]
    assert tool.kind is SpanKind.TOOL and tool.tool_name == "check_availability"
    assert tool.data["call_id"] == "call_8f2"
    assert tool.data["arguments"] == {"date": "2026-11-06", "region": "north"}
    assert tool.data["args_hash"] == args_hash({"region": "north", "date": "2026-11-06"})
    assert tool.data["output"] == {"slots": ["09:00", "14:00"]}


def test_per_message_events_fill_messages_and_output_when_attributes_have_none() -> None:
    """GenAI v1.28-v1.36 events; deprecated gen_ai.system and prompt_tokens still map."""
    chat = read_trace(DATA / "collector_two_traces.jsonl").spans[3]
    assert chat.data["messages"] == [
        {"role": "user", "content": "Can you move my install to Thursday?"},
        {"role": "tool", "content": '{"slots": ["09:00", "14:00"]}', "tool_call_id": "call_8f2"},
    ]
    assert chat.data["output"] == {"role": "assistant", "content": "Thursday 09:00 or 14:00?"}
    assert chat.data["finish_reason"] == "stop"
    assert chat.data["provider"] == "openai"
    assert chat.data["usage"] == {"input_tokens": 500, "output_tokens": 12}
    assert "otel.events" not in chat.attributes  # message events are mapped, not kept twice


def test_exception_event_gives_error_type_of_an_error_span() -> None:
    failed = read_trace(DATA / "collector_two_traces.jsonl").spans[4]
    assert failed.status is Status.ERROR and failed.error_type == "SlotTaken"
    assert failed.attributes["otel.status_message"] == "09:00 was booked meanwhile"
    assert failed.attributes["otel.events"][0]["name"] == "exception"


def test_exception_event_on_a_span_that_did_not_fail_sets_no_error_type() -> None:
    events = [{"name": "exception", "attributes": {"exception.type": "Retry"}}]
    assert span_fields_from_attributes("x", {}, events, status_error=False)[3] is None
    assert span_fields_from_attributes("x", {}, events, status_error=True)[3] == "Retry"


def test_trace_id_picks_another_trace_in_the_file_in_any_case() -> None:
    path = DATA / "collector_two_traces.jsonl"
    other = read_trace(path, trace_id="0AF7651916CD43DD8448EB211C80319C")
    assert other.trace_id == "0af7651916cd43dd8448eb211c80319c"
    (s,) = other.spans
    assert s.data["provider"] == "anthropic" and s.data["output"]["content"] == "Hello!"
    with pytest.raises(TraceNotFound, match="4bf92f3577b34da6a3ce929d0e0e4736"):
        read_trace(path, trace_id="ffffffffffffffffffffffffffffffff")


def test_torn_last_line_is_held_back_with_a_warning(tmp_path: Path) -> None:
    lines = (DATA / "collector_two_traces.jsonl").read_bytes().splitlines()
    p = write(tmp_path, "live.jsonl", b"\n".join(lines[:3]) + b"\n" + lines[3][:57])
    trace = read_trace(p)
    assert len(trace.spans) == 3
    (issue,) = trace.issues
    assert (issue.line, issue.severity) == (4, "warning") and "incomplete" in issue.message


def test_bad_middle_line_is_reported_by_line_and_the_rest_loads(tmp_path: Path) -> None:
    lines = (DATA / "collector_two_traces.jsonl").read_bytes().splitlines()
    p = write(tmp_path, "bad.jsonl", b"\n".join([lines[0], b'{"resourceSpans": [', *lines[2:]]) + b"\n")
    trace = read_trace(p)
    assert len(trace.spans) == 4
    (issue,) = [i for i in trace.issues if i.line == 2]
    assert issue.severity == "skipped" and "not valid JSON" in issue.message
    assert str(issue).startswith(f"{p}:2")


def test_jsonl_line_without_resource_spans_is_skipped_with_an_issue(tmp_path: Path) -> None:
    good = orjson.dumps(envelope(span("00000000000000a1")))
    p = write(tmp_path, "mixed.jsonl", good + b'\n{"resourceMetrics": []}\n')
    trace = read_trace(p)
    assert len(trace.spans) == 1
    assert any(i.line == 2 and "resourceMetrics" in i.message for i in trace.issues)


# --- envelopes, ids, values ----------------------------------------------------------------


def test_messagetojson_base64_ids_enum_names_and_snake_case_are_read() -> None:
    """protobuf MessageToJson output: base64 ids, SPAN_KIND_/STATUS_CODE_ names, snake_case, int timestamps."""
    trace = read_trace(DATA / "messagetojson_base64.json")
    assert trace.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    root, refund = trace.spans
    assert root.span_id == "00f067aa0ba902b7" and root.parent_id is None and root.status is Status.OK
    assert refund.span_id == "53995c3f42cd8ad8" and refund.parent_id == "00f067aa0ba902b7"
    assert refund.attributes["otel.span_kind"] == "client"
    assert refund.status is Status.ERROR and refund.error_type == "CardDeclined"
    assert refund.data["arguments"] == {"amount": 1200}
    assert refund.start_ns == root.start_ns + 10_000_000  # string and number timestamps agree
    assert trace.issues == []


@pytest.mark.parametrize(("raw", "nbytes", "want"), [
    ("5B8EFFF798038103D269B633813FC60C", 16, "5b8efff798038103d269b633813fc60c"),
    ("0xEEE19B7EC3C1B174", 8, "eee19b7ec3c1b174"),
    (base64.b64encode(bytes.fromhex("eee19b7ec3c1b174")).decode(), 8, "eee19b7ec3c1b174"),
    (base64.b64encode(bytes.fromhex("5b8efff798038103d269b633813fc60c")).decode(), 16,
     "5b8efff798038103d269b633813fc60c"),
    (12324293800750531911, 8, "ab08afea3548c547"),
    ("", 8, None),
    (None, 16, None),
])
def test_ids_are_normalised_to_lowercase_hex(raw: Any, nbytes: int, want: str | None) -> None:
    assert normalize_id(raw, nbytes) == (want, None)


def test_an_id_that_is_neither_hex_nor_base64_is_kept_with_a_problem() -> None:
    sid, problem = normalize_id("step-1", 8)
    assert sid == "step-1" and "neither" in (problem or "")


def test_string_and_number_timestamps_and_int_values_read_the_same(tmp_path: Path) -> None:
    a = span("00000000000000a1", start="1762161242118000001", end="1762161242118000002", attrs={"n": 5})
    b = span("00000000000000b1", start=1762161242118000001, end=1762161242118000002)
    b["attributes"] = [{"key": "n", "value": {"intValue": 5}}]
    trace = read_trace(write(tmp_path, "t.json", envelope(a, b)))
    s1, s2 = trace.spans
    assert (s1.start_ns, s1.end_ns) == (s2.start_ns, s2.end_ns) == (1762161242118000001, 1762161242118000002)
    assert s1.attributes["n"] == s2.attributes["n"] == 5


def test_anyvalue_variants_decode_to_plain_json() -> None:
    v = {"kvlistValue": {"values": [
        {"key": "s", "value": {"stringValue": "x"}}, {"key": "b", "value": {"boolValue": True}},
        {"key": "i", "value": {"intValue": "-3"}}, {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "a", "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "y"}]}}},
        {"key": "bytes", "value": {"bytesValue": "AAEC"}}, {"key": "empty", "value": {}},
        {"key": "snake", "value": {"int_value": "7"}}]}}
    assert anyvalue(v) == {"s": "x", "b": True, "i": -3, "d": 0.5, "a": [1, "y"], "bytes": "AAEC",
                           "empty": None, "snake": 7}


def test_bad_attribute_value_is_skipped_with_a_warning_naming_it(tmp_path: Path) -> None:
    s = span("00000000000000a1", attrs={"ok": "yes"})
    s["attributes"] += [{"key": "count", "value": {"intValue": "many"}},
                        {"key": "weird", "value": {"mapValue": 1}}, {"value": {"stringValue": "no key"}}]
    trace = read_trace(write(tmp_path, "t.json", envelope(s)))
    (got,) = trace.spans
    assert got.attributes["ok"] == "yes" and "count" not in got.attributes and "weird" not in got.attributes
    warnings = [i for i in trace.issues if i.severity == "warning"]
    assert len(warnings) == 3
    assert warnings[0].where == "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[1]"
    assert "'count'" in warnings[0].message and "many" in warnings[0].message


def test_span_without_span_id_is_skipped_with_its_json_path_and_line(tmp_path: Path) -> None:
    first = [span("00000000000000a1")]
    second = [span(f"00000000000000b{i}", parent="00000000000000a1") for i in range(4)]
    del second[3]["spanId"]
    p = write(tmp_path, "t.jsonl", orjson.dumps(envelope(scope_groups=[first, second])) + b"\n")
    trace = read_trace(p)
    assert len(trace.spans) == 4
    (issue,) = [i for i in trace.issues if i.where != "start_ns"]  # (the b spans also tie: a warning of its own)
    assert issue.where == "$.resourceSpans[0].scopeSpans[1].spans[3].spanId"
    assert issue.line == 1 and issue.severity == "skipped" and "missing spanId" in issue.message


def test_wrongly_shaped_envelope_parts_are_reported_not_raised(tmp_path: Path) -> None:
    doc = {"resourceSpans": [
        "nonsense",
        {"scopeSpans": {"spans": []}},
        {"scopeSpans": [{"spans": [7, span("00000000000000a1", attrs={"k": "v"}) | {"status": "bad", "kind": []}]}]},
    ]}
    trace = read_trace(write(tmp_path, "t.json", doc))
    assert [s.span_id for s in trace.spans] == ["00000000000000a1"]
    wheres = {i.where for i in trace.issues}
    assert "$.resourceSpans[0]" in wheres and "$.resourceSpans[1].scopeSpans" in wheres
    assert "$.resourceSpans[2].scopeSpans[0].spans[0]" in wheres
    assert "$.resourceSpans[2].scopeSpans[0].spans[1].status" in wheres


def test_not_json_raises_read_error_naming_the_file(tmp_path: Path) -> None:
    p = write(tmp_path, "t.json", "resourceSpans? no: this is prose\n")
    with pytest.raises(ReadError) as err:
        read_trace(p, format="otlp-json")
    assert str(p) in str(err.value) and "not valid JSON" in err.value.reason


def test_json_without_resource_spans_raises_read_error_saying_what_was_found() -> None:
    path = corpus("langfuse/koog-2025-08-26.trace.json")
    with pytest.raises(ReadError) as err:
        read_trace(path, format="otlp-json")
    assert "no resourceSpans" in err.value.reason and "'trace'" in err.value.reason


def test_format_override_reads_a_file_the_sniffer_cannot_see(tmp_path: Path) -> None:
    """The key sits past the 64 KiB the sniffer looks at; --format otlp-json still reads it."""
    doc = {"padding": "x" * 70_000, **envelope(span("00000000000000a1", name="late"))}
    p = write(tmp_path, "t.json", doc)
    assert sniff_format(p.read_bytes()[:65536]) is None
    assert [s.name for s in read_trace(p, format="otlp-json").spans] == ["late"]


def test_empty_resource_spans_load_nothing_and_say_so(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="no spans"):
        read_trace(write(tmp_path, "t.json", {"resourceSpans": []}))


# --- a real agent run (any-agent, OpenAI Agents SDK) rebuilt as OTLP/JSON -----------------


def test_any_agent_run_as_otlp_reads_tools_arguments_and_llm_messages(tmp_path: Path) -> None:
    doc = any_agent_to_otlp(corpus("any-agent-trace/OPENAI_trace.json"))
    trace = read_trace(write(tmp_path, "run.json", doc))
    assert trace.issues == []
    kinds = [s.kind.value for s in trace.spans]
    assert kinds == ["agent", "llm", "tool", "llm", "tool", "llm"]
    root = trace.spans[0]
    assert root.data["agent_name"] == "any_agent" and root.parent_id is None
    assert all(s.parent_id == root.span_id for s in trace.spans[1:])
    tools = [s for s in trace.spans if s.kind is SpanKind.TOOL]
    assert [t.tool_name for t in tools] == ["get_current_time", "write_file"]
    assert tools[0].data["arguments"] == {"timezone": "America/New_York"}
    assert tools[0].data["args_hash"] == args_hash({"timezone": "America/New_York"})
    assert tools[0].data["output"]["is_dst"] is True
    first_llm = trace.spans[1]
    assert first_llm.data["model"] == "mistral/mistral-small-latest"
    assert [m["role"] for m in first_llm.data["messages"]] == ["system", "user"]
    assert first_llm.data["messages"][0]["content"] == "Use the available tools to answer."
    assert first_llm.data["output"]["tool_calls"] == [
        {"id": None, "name": "get_current_time", "arguments": {"timezone": "America/New_York"}}]
    assert first_llm.data["usage"] == {"input_tokens": 269, "output_tokens": 16}
    assert trace.spans[-1].data["output"]["content"].startswith('{"steps"')


def test_any_agent_run_split_over_jsonl_lines_reads_the_same(tmp_path: Path) -> None:
    doc = any_agent_to_otlp(corpus("any-agent-trace/OPENAI_trace.json"))
    whole = read_trace(write(tmp_path, "run.json", doc))
    rs = doc["resourceSpans"][0]
    scope = rs["scopeSpans"][0]["scope"]
    lines = [orjson.dumps({"resourceSpans": [{**rs, "scopeSpans": [{"scope": scope, "spans": [s]}]}]})
             for s in rs["scopeSpans"][0]["spans"]]
    split = read_trace(write(tmp_path, "run.jsonl", b"\n".join(lines) + b"\n"))
    strip = lambda t: [(s.span_id, s.parent_id, s.seq, s.kind, s.data) for s in t.spans]  # noqa: E731
    assert strip(split) == strip(whole)
    assert [s.line for s in split.spans] == [6, 1, 2, 3, 4, 5]


# --- OpenInference in OTLP ------------------------------------------------------------------


def test_openinference_spans_map_to_retrieval_llm_tool_and_other() -> None:
    spans = by_name(read_trace(DATA / "openinference_rag.json"))
    chain = spans["RAG pipeline"]
    assert chain.kind is SpanKind.OTHER
    assert chain.data == {"input": "refund policy?", "output": "Refunds within 30 days."}
    ret = spans["search_docs"]
    assert ret.kind is SpanKind.RETRIEVAL and ret.data["query"] == "refund policy"
    assert ret.data["documents"] == [{"id": "kb-12", "score": 0.83, "text": "Refunds within 30 days..."},
                                     {"id": "kb-7", "score": 0.41, "text": "Shipping takes 3 days."}]
    llm = spans["ChatCompletion"]
    assert llm.kind is SpanKind.LLM
    assert llm.data["params"] == {"temperature": 0.2, "max_tokens": 256}
    assert llm.data["prompt_version"] == "v7" and llm.data["provider"] == "openai"
    assert [m["role"] for m in llm.data["messages"]] == ["system", "user"]
    assert llm.data["output"]["tool_calls"] == [{"id": "call_a1", "name": "get_order", "arguments": {"id": 17}}]
    assert llm.data["usage"] == {"input_tokens": 412, "output_tokens": 31}
    tool = spans["get_order"]
    assert tool.kind is SpanKind.TOOL
    assert tool.data["call_id"] == "call_a1" and tool.data["arguments"] == {"id": 17}
    assert tool.data["output"] == {"status": "shipped"}
    assert tool.attributes["input.mime_type"] == "application/json"


# --- the attribute mapper on real attribute sets (Langfuse exports) -------------------------


def test_openinference_attributes_of_openai_agents_run() -> None:
    obs = langfuse_observations("openai-agents-2025-09-30")
    mapped = [span_fields_from_attributes(o["name"], o["attributes"], []) for o in obs]
    assert [m[0].value for m in mapped] == ["agent", "agent", "llm", "llm", "tool"]
    _, final, _, _ = mapped[2]
    assert final["model"] == "gpt-4.1-2025-04-14" and final["provider"] == "openai"
    assert [m["role"] for m in final["messages"]] == ["system", "user", "assistant", "tool"]
    assert final["messages"][2]["tool_calls"] == [
        {"id": "call_Kud0j0DxWSmLzv9W5m6qVqXn", "name": "get_weather", "arguments": {"city": "Tokyo"}}]
    assert final["messages"][3] == {"role": "tool", "content": "The weather in Tokyo is sunny.",
                                    "tool_call_id": "call_Kud0j0DxWSmLzv9W5m6qVqXn"}
    assert final["output"]["content"].startswith("The weather in Tokyo is currently sunny")
    assert final["usage"] == {"input_tokens": 85, "output_tokens": 29, "cache_read_input_tokens": 0,
                              "reasoning_output_tokens": 0}
    assert final["params"]["temperature"] == 1.0
    assert "id" not in final["params"] and "created_at" not in final["params"]  # per-response, not request
    first_call = mapped[3][1]
    assert first_call["output"]["tool_calls"][0]["name"] == "get_weather"
    assert first_call["tool_schemas_hash"] == final["tool_schemas_hash"]
    kind, tool, left, _ = mapped[4]
    assert tool["tool_name"] == "get_weather" and tool["arguments"] == {"city": "Tokyo"}
    assert left["openinference.span.kind"] == "TOOL"


def test_current_genai_attributes_of_microsoft_agent_framework_run() -> None:
    """Langfuse lifts gen_ai.input/output.messages into observation input/output; put them back."""
    obs = langfuse_observations("microsoft-agent-2025-12-17")
    mapped = []
    for o in obs:
        attrs = dict(o["attributes"])
        if o["type"] in ("GENERATION", "AGENT"):
            attrs["gen_ai.input.messages"], attrs["gen_ai.output.messages"] = o["input"], o["output"]
        mapped.append(span_fields_from_attributes(o["name"], attrs, []))
    assert [m[0].value for m in mapped] == ["agent", "llm", "llm", "tool"]
    agent = mapped[0][1]
    assert agent["agent_name"] == "171105b7-59dd-49c0-9677-0b95395aa46a"
    assert [m["role"] for m in agent["input"]] == ["system", "user"]
    assert [m["role"] for m in agent["output"]] == ["assistant", "tool", "assistant"]
    first, second = mapped[1][1], mapped[2][1]
    assert (first["model"], first["provider"]) == ("gpt-5-mini", "openai")
    assert first["usage"] == {"input_tokens": 77, "output_tokens": 86}  # stored as strings by Langfuse
    assert first["params"] == {"choice_count": 1}
    assert first["output"]["tool_calls"] == [
        {"id": "call_CwaJHuXTm9dmHFQPlVbqyzJ0", "name": "get_weather", "arguments": {"location": "Tokyo, Japan"}}]
    (tool_msg,) = second["messages"]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_CwaJHuXTm9dmHFQPlVbqyzJ0"
    assert "stormy" in tool_msg["content"]
    assert second["output"] == {"role": "assistant",
                                "content": "Current conditions in Tokyo, Japan: stormy, high around 23\u00b0C."}
    tool = mapped[3][1]
    assert tool == {"tool_name": "get_weather", "call_id": "call_CwaJHuXTm9dmHFQPlVbqyzJ0"}


def test_genai_attributes_of_pydantic_ai_run() -> None:
    obs = langfuse_observations("pydantic-ai-tools-2025-12-04")
    mapped = {o["id"]: (o, span_fields_from_attributes(o["name"], o["attributes"], [])) for o in obs}
    tools = sorted(d["tool_name"] for o, (k, d, _, _) in mapped.values() if k is SpanKind.TOOL)
    assert tools == ["get_dad_joke_suggestion", "get_one_liner_suggestion", "get_pun_suggestion"]
    pun = next(d for o, (k, d, _, _) in mapped.values() if d.get("tool_name") == "get_pun_suggestion")
    assert pun["arguments"] == {"topic": "programming"} and pun["call_id"] == "call_X0OSgjUukT5inyEQvuZQnHrk"
    assert pun["output"].startswith("Pun idea")
    agents = sorted(d["agent_name"] for o, (k, d, _, _) in mapped.values() if k is SpanKind.AGENT)
    assert agents == ["evaluator_agent", "joke_agent", "joke_agent"]
    llms = [(o, d) for o, (k, d, _, _) in mapped.values() if k is SpanKind.LLM]
    assert len(llms) == 4 and all(d["model"] == "gpt-4o-mini" for _, d in llms)
    o, d = next((o, d) for o, d in llms if o["id"] == "00d2804abb764b1b")
    assert d["params"] == {"temperature": 0.7} and d["finish_reason"] == "stop"
    # The tool results come back in one user message with three tool_call_response parts.
    attrs = {**o["attributes"], "gen_ai.input.messages": o["input"]}
    msgs = span_fields_from_attributes(o["name"], attrs, [])[1]["messages"]
    assert [m["role"] for m in msgs[:3]] == ["system", "user", "assistant"]
    assert len(msgs[2]["tool_calls"]) == 3
    assert [m.get("tool_call_id") for m in msgs[3:6]] == [c["id"] for c in msgs[2]["tool_calls"]]


def test_openllmetry_indexed_attributes_of_koog_run() -> None:
    obs = {o["id"]: o for o in langfuse_observations("koog-2025-08-26")}
    kinds = {o["name"]: span_fields_from_attributes(o["name"], o["attributes"], [])[0].value for o in obs.values()}
    assert kinds["tool.HelloTool"] == kinds["tool.ByeTool"] == "tool"
    assert kinds["agent.f9f77d1a-437f-4ba6-890e-b592a50cbd21"] == "agent"
    assert kinds["node.nodeCallLLM"] == "other"
    first = span_fields_from_attributes("llm.chat", obs["042f9350c3729147"]["attributes"], [])[1]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    # Two indexed completions of one answer, each a JSON list of tool calls: merged into one message.
    assert [c["name"] for c in first["output"]["tool_calls"]] == ["HelloTool", "ByeTool"]
    assert first["output"]["tool_calls"][0]["arguments"] == {"name": "Bob"}
    assert first["finish_reason"] == "tool_call"
    second = span_fields_from_attributes("llm.chat", obs["e44e72cf2d221781"]["attributes"], [])[1]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["id"] == "call_n2HaWg9KFP0BZDqXv6G4b3nJ"
    assert second["output"] == {"role": "assistant", "content": "Hello my darling Bob! And, bye my dear Bob!"}
    tool = span_fields_from_attributes("tool.HelloTool", obs["66f269083a2fff81"]["attributes"], [])[1]
    assert tool["arguments"] == {"name": "Bob"} and tool["output"] == "Hello my darling Bob!"


# --- the mapper's rules in isolation --------------------------------------------------------


def test_indexed_families_unflatten_into_nested_lists() -> None:
    fams = indexed_families({
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.1.tool_calls.0.name": "f", "llm.x": 1, "tag.tags.0": "a", "tag.tags.1": "b"})
    assert fams["gen_ai.prompt"][0] == [{"role": "system"}, {"role": "user", "tool_calls": [{"name": "f"}]}]
    assert fams["tag.tags"][0] == ["a", "b"]
    assert "llm" not in fams and "llm.x" not in fams


@pytest.mark.parametrize(("name", "attrs", "kind"), [
    ("execute_tool lookup", {}, SpanKind.TOOL),
    ("chat gpt-4o", {}, SpanKind.LLM),
    ("x", {"gen_ai.operation.name": "embeddings"}, SpanKind.OTHER),
    ("x", {"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "kb"}, SpanKind.RETRIEVAL),
    ("x", {"gen_ai.operation.name": "search_memory"}, SpanKind.MEMORY),
    ("x", {"gen_ai.operation.name": "plan"}, SpanKind.DECISION),
    ("x", {"gen_ai.operation.name": "invoke_workflow"}, SpanKind.AGENT),
    ("x", {"openinference.span.kind": "retriever"}, SpanKind.RETRIEVAL),
    ("x", {"openinference.span.kind": "GUARDRAIL"}, SpanKind.OTHER),
    ("openai.chat", {"llm.request.type": "chat"}, SpanKind.LLM),
    ("lookup.tool", {"traceloop.span.kind": "tool", "traceloop.entity.name": "lookup"}, SpanKind.TOOL),
    ("x", {}, SpanKind.OTHER),
])
def test_kind_comes_from_operation_dialect_markers_or_span_name(
        name: str, attrs: dict[str, Any], kind: SpanKind) -> None:
    assert span_fields_from_attributes(name, attrs, [])[0] is kind


def test_tool_name_falls_back_to_the_span_name_suffix() -> None:
    kind, data, _, _ = span_fields_from_attributes("execute_tool lookup", {"gen_ai.tool.call.arguments": "[1, 2]"}, [])
    assert kind is SpanKind.TOOL and data["tool_name"] == "lookup" and data["arguments"] == [1, 2]


def test_memory_span_maps_operation_and_query() -> None:
    _, data, _, _ = span_fields_from_attributes(
        "search_memory prefs", {"gen_ai.operation.name": "search_memory", "gen_ai.memory.query.text": "tz"}, [])
    assert data == {"operation": "search", "query": "tz"}


def test_error_type_attribute_is_mapped_and_unknown_attributes_are_kept() -> None:
    _, _, left, err = span_fields_from_attributes("x", {"error.type": "TimeoutError", "http.method": "POST"}, [])
    assert err == "TimeoutError" and left == {"http.method": "POST"}


def test_old_prompt_events_and_anthropic_blocks_become_messages() -> None:
    events = [
        {"name": "gen_ai.content.prompt", "attributes": {"gen_ai.prompt": json.dumps([
            {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": "w", "input": {"c": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "rain"}]}])}},
        {"name": "gen_ai.content.completion", "attributes": {"gen_ai.completion": json.dumps(
            [{"role": "assistant", "content": "It rains.", "finish_reason": "end_turn"}])}},
    ]
    _, data, _, _ = span_fields_from_attributes("chat claude", {"gen_ai.operation.name": "chat"}, events)
    assert data["messages"] == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "tu1", "name": "w", "arguments": {"c": "Oslo"}}]},
        {"role": "tool", "content": "rain", "tool_call_id": "tu1"},
    ]
    assert data["output"] == {"role": "assistant", "content": "It rains."} and data["finish_reason"] == "stop"


def test_odd_attribute_values_never_raise() -> None:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "{not json", "gen_ai.output.messages": 5,
             "gen_ai.usage.input_tokens": "lots", "gen_ai.request.temperature": [1], "gen_ai.tool.definitions": "[",
             "llm.input_messages.0.message": "flat", "gen_ai.system_instructions": 3}
    kind, data, _, _ = span_fields_from_attributes("chat", attrs, [{"name": "gen_ai.choice", "attributes": "x"}])
    assert kind is SpanKind.LLM and "usage" not in data
    for k in ("execute_tool", "retrieval", "invoke_agent", "create_memory"):
        span_fields_from_attributes("x", {"gen_ai.operation.name": k, "gen_ai.tool.call.arguments": {1, 2},
                                          "gen_ai.retrieval.documents": [None, 3]}, [])


# --- size ------------------------------------------------------------------------------------


def test_a_large_collector_file_reads_every_span(tmp_path: Path) -> None:
    """20k GenAI spans over 200 JSONL lines are all read, without issues. How the time grows with the span
    count is measured in benchmarks/bench_otlp_scaling.py (no timing assert here: issue 25)."""
    spans = [span(f"{i + 1:016x}", parent="" if i == 0 else f"{1:016x}", start=str(1000 + i), end=str(2000 + i),
                  name="execute_tool t", attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t",
                                                "gen_ai.tool.call.arguments": json.dumps({"i": i})})
             for i in range(20_000)]
    data = b"".join(orjson.dumps(envelope(*spans[k:k + 100])) + b"\n" for k in range(0, 20_000, 100))
    out = OtlpJsonReader().read("trace", data)
    assert len(out.runs) == 1 and len(out.runs[0].spans) == 20_000 and out.issues == []
    assert out.runs[0].spans[-1].data["arguments"] == {"i": 19_999}


# --- robustness ------------------------------------------------------------------------------



@pytest.mark.parametrize("fixture", ["messagetojson_base64.json", "collector_two_traces.jsonl"])
def test_any_single_odd_value_anywhere_gives_issues_or_read_error_never_a_traceback(fixture: str) -> None:
    """Every node of the fixture (first record) replaced in turn by null, a number, a string, [] and {}."""
    doc = orjson.loads((DATA / fixture).read_bytes().splitlines()[0] if fixture.endswith(".jsonl")
                       else (DATA / fixture).read_bytes())
    counts = odd_value_outcomes(OtlpJsonReader().read, doc, (None, -1, "zz", [], {}, True), orjson.dumps)
    assert counts["error"] > 0 and counts["issue"] > 0, counts  # odd values are noticed, not all swallowed


def test_utf8_bom_is_ignored(tmp_path: Path) -> None:
    p = write(tmp_path, "bom.json", b"\xef\xbb\xbf" + orjson.dumps(envelope(span("00000000000000a1"))))
    assert [s.span_id for s in read_trace(p).spans] == ["00000000000000a1"]
