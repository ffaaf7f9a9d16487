"""otel-sdk-json reader: any-agent dumps (corpus), Python ConsoleSpanExporter output and OTel JS
ReadableSpan JSON (hand-written under tests/data/otel_sdk/), and the helpers it shares."""

from __future__ import annotations

import calendar
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import corpus, corpus_files
from otlp_helpers import any_agent_to_otlp

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers import read_trace, sniff_format
from tracetui.core.readers.otel_sdk import OtelSdkJsonReader
from tracetui.core.readers.timefmt import iso_ns
from mutate import odd_value_outcomes

DATA = Path(__file__).resolve().parents[2] / "data" / "otel_sdk"
REPO = Path(__file__).resolve().parents[3]
READER = OtelSdkJsonReader()


def by_name(trace: Any) -> dict[str, Any]:
    return {s.name: s for s in trace.spans}


def comparable(trace: Any) -> list[tuple[Any, ...]]:
    return [(s.span_id, s.parent_id, s.seq, s.kind, s.name, s.status, s.error_type, s.start_ns, s.end_ns,
             s.trace_id, s.data) for s in trace.spans]


# --- any-agent AgentTrace dumps (corpus) ---------------------------------------------------


@pytest.mark.parametrize(("name", "n_llm"), [("OPENAI", 3), ("LANGCHAIN", 4)])
def test_any_agent_dump_counts_kinds_and_tools_match_sources(name: str, n_llm: int) -> None:
    trace = read_trace(corpus(f"any-agent-trace/{name}_trace.json"))
    assert trace.format == "otel-sdk-json"
    assert len(trace.spans) == 1 + n_llm + 2  # SOURCES.md: 6 and 7 spans
    kinds = [s.kind for s in trace.spans]
    assert kinds.count(SpanKind.AGENT) == 1 and kinds.count(SpanKind.LLM) == n_llm and kinds.count(SpanKind.TOOL) == 2
    assert kinds[0] is SpanKind.AGENT  # the root is printed last but started first
    assert [s.tool_name for s in trace.spans if s.kind is SpanKind.TOOL] == ["get_current_time", "write_file"]
    assert all(s.status is Status.OK for s in trace.spans[1:]) and trace.spans[0].status is Status.UNSET
    assert all(s.attributes["otel.span_kind"] == "internal" for s in trace.spans)


def test_any_agent_decimal_ids_become_hex_exactly() -> None:
    """The 128-bit trace id is beyond 64 bits: a float parse would change its digits."""
    trace = read_trace(corpus("any-agent-trace/OPENAI_trace.json"))
    tid = format(100927429609276267646756448943279827607, "032x")
    assert trace.trace_ids == [tid] and trace.trace_id == tid
    root = trace.spans[0]
    assert root.span_id == format(12324293800750531911, "016x") == "ab08afea3548c547"
    assert root.parent_id is None
    assert all(s.parent_id == root.span_id and s.trace_id == tid for s in trace.spans[1:])
    first_tool = next(s for s in trace.spans if s.kind is SpanKind.TOOL)
    assert first_tool.span_id == format(13687147528289423029, "016x")
    assert first_tool.start_ns == 1758026593450406000 and first_tool.end_ns == 1758026593452926000


def test_any_agent_tool_and_llm_data_and_header() -> None:
    trace = read_trace(corpus("any-agent-trace/OPENAI_trace.json"))
    tool = next(s for s in trace.spans if s.tool_name == "get_current_time")
    assert tool.data["arguments"] == {"timezone": "America/New_York"}
    assert tool.data["args_hash"] == args_hash({"timezone": "America/New_York"})
    assert tool.data["output"] == {"timezone": "America/New_York", "datetime": "2025-09-16T08:43:13-04:00",
                                   "is_dst": True}
    llm = trace.spans[1]
    assert llm.kind is SpanKind.LLM and llm.data["model"] == "mistral/mistral-small-latest"
    assert [m["role"] for m in llm.data["messages"]] == ["system", "user"]
    assert llm.data["output"]["tool_calls"][0]["name"] == "get_current_time"
    h = trace.header
    assert h["run_id"] == trace.trace_id and h["agent"] == "any_agent"
    assert h["start_ns"] == 1758026593209236000 and h["started_at"] == "2025-09-16T12:43:13.209236Z"
    assert h["output"]["steps"][1] == {"number": 2, "description": "Write the year to a file."}  # final_output
    assert h["model"] == {"id": "mistral/mistral-small-latest"}
    assert h["input"].startswith("Find what year it is in the America/New_York timezone")
    # jsondoc notes the 128-bit decimal ids (6 spans + 5 parents); any-agent records input messages
    # on the first LLM call only: said once.
    assert [(i.severity, i.message[:30]) for i in trace.issues] == [
        ("info", "11 integer(s) beyond 64 bits ("),
        ("warning", "2 of 3 llm spans have no input"),
    ]
    assert trace.issues[1].message == "2 of 3 llm spans have no input messages (not captured by the producer)"


@pytest.mark.parametrize("name", ["OPENAI", "LANGCHAIN"])
def test_any_agent_read_directly_equals_the_route_through_otlp(name: str, tmp_path: Path) -> None:
    path = corpus(f"any-agent-trace/{name}_trace.json")
    otlp_file = tmp_path / "run.otlp.json"
    otlp_file.write_bytes(orjson.dumps(any_agent_to_otlp(path)))
    via_otlp = read_trace(otlp_file)
    direct = read_trace(path)
    assert via_otlp.format == "otlp-json" and direct.format == "otel-sdk-json"
    assert comparable(direct) == comparable(via_otlp)
    assert direct.trace_ids == via_otlp.trace_ids


# --- Python SDK ConsoleSpanExporter output (hand-written, objects back to back) --------------


def test_console_output_children_first_two_traces_are_two_runs() -> None:
    path = DATA / "console_two_traces.txt"
    trace = read_trace(path)
    assert trace.format == "otel-sdk-json"
    assert trace.trace_ids == ["5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c"]
    # Printed chat, tool, chat, root; the root and the first chat start at the same µs: parent first.
    assert [(s.seq, s.name) for s in trace.spans] == [
        (0, "invoke_agent support"), (1, "chat gpt-4o"), (2, "execute_tool get_order"), (3, "chat gpt-4o")]
    root = trace.spans[0]
    assert root.span_id == "53995c3f42cd8ad8" and root.status is Status.OK
    lines = path.read_text().splitlines()
    assert lines[root.line - 1] == "{" and lines[root.line] == '    "name": "invoke_agent support",'
    assert trace.spans[1].line == 1
    other = read_trace(path, trace_id="0AF7651916CD43DD8448EB211C80319C")
    assert [s.name for s in other.spans] == ["invoke_agent support"]
    assert other.spans[0].end_ns == iso_ns("2026-01-10T11:00:01.5Z") == 1768042801500000000
    assert other.spans[0].attributes["tags"] == ["retry", "eu"]  # native JSON list kept


def test_console_span_fields_status_kind_times_and_error() -> None:
    spans = by_name(read_trace(DATA / "console_two_traces.txt"))
    tool = spans["execute_tool get_order"]
    assert tool.kind is SpanKind.TOOL and tool.status is Status.ERROR and tool.error_type == "TimeoutError"
    assert tool.start_ns == 1768039200901234000 and tool.end_ns == 1768039201401234000  # µs exact
    assert tool.data["arguments"] == {"id": 17} and tool.data["call_id"] == "call_1"
    assert tool.attributes["otel.status_message"] == "order service timed out"
    assert tool.attributes["otel.events"][0]["name"] == "exception"
    assert tool.attributes["otel.events"][0]["time_unix_nano"] == 1768039201400000000
    assert tool.attributes["service.name"] == "support-agent"
    chat = read_trace(DATA / "console_two_traces.txt").spans[1]
    assert chat.attributes["otel.span_kind"] == "client"  # "SpanKind.CLIENT"
    assert chat.data["params"] == {"temperature": 0.2}
    assert chat.data["messages"][1] == {"role": "user", "content": "Where is order 17?"}
    assert chat.data["output"]["tool_calls"] == [{"id": "call_1", "name": "get_order", "arguments": {"id": 17}}]


def test_console_object_garbled_mid_file_is_skipped_with_its_line_and_the_rest_loads() -> None:
    path = DATA / "console_garbled.txt"
    trace = read_trace(path)
    assert [s.name for s in trace.spans] == ["invoke_agent support", "chat gpt-4o", "chat gpt-4o"]
    skipped = [i for i in trace.issues if i.severity == "skipped"]
    assert len(skipped) == 1
    bad_line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.endswith('"get_or'))
    assert skipped[0].line == bad_line == 49 and "not valid JSON" in skipped[0].message
    assert all(s.parent_id == "53995c3f42cd8ad8" for s in trace.spans[1:])


def test_same_console_dicts_as_a_json_array_and_as_jsonl_read_the_same(tmp_path: Path) -> None:
    from tracetui.core.readers.json_values import iter_json_values

    values = [v for _, v in iter_json_values("x", (DATA / "console_two_traces.txt").read_text(), [])]
    as_array = tmp_path / "spans.json"
    as_array.write_text(json.dumps(values, indent=1))
    as_jsonl = tmp_path / "spans.jsonl"
    as_jsonl.write_text("".join(json.dumps(v) + "\n" for v in values))
    console = read_trace(DATA / "console_two_traces.txt")
    for p in (as_array, as_jsonl):
        assert comparable(read_trace(p)) == comparable(console)
    assert [s.line for s in read_trace(as_jsonl).spans] == [4, 1, 2, 3]


# --- OTel JS ReadableSpan JSON ---------------------------------------------------------------


S = calendar.timegm((2026, 1, 10, 12, 0, 0, 0, 0, 0))


def test_js_readable_spans_hrtime_js_kind_numbers_status_codes_and_events() -> None:
    trace = read_trace(DATA / "js_readable_spans.json")
    assert trace.format == "otel-sdk-json" and trace.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    spans = by_name(trace)
    root, chat, tool = spans["invoke_agent weather"], spans["chat gpt-4o-mini"], spans["execute_tool get_weather"]
    # JS SpanKind: 0 INTERNAL, 1 SERVER, 2 CLIENT (OTLP's 2 would be SERVER).
    assert (root.attributes["otel.span_kind"], chat.attributes["otel.span_kind"],
            tool.attributes["otel.span_kind"]) == ("server", "client", "internal")
    assert chat.start_ns == S * 10**9 + 5_000_000 and chat.end_ns == (S + 1) * 10**9 + 250_000_000
    assert (root.status, chat.status, tool.status) == (Status.OK, Status.UNSET, Status.ERROR)
    assert tool.error_type == "HTTPError" and tool.attributes["otel.status_message"] == "upstream 503"
    assert chat.parent_id == tool.parent_id == root.span_id == "e457b5a2e4d86bd1"
    # Message events (time as [s, ns]) fill the LLM call's messages and output.
    assert chat.data["messages"] == [{"role": "user", "content": "Weather in Oslo?"}]
    assert chat.data["output"]["tool_calls"] == [{"id": "call_9", "name": "get_weather", "arguments": {"city": "Oslo"}}]
    assert chat.data["finish_reason"] == "tool_call"
    assert root.attributes["otel.scope.name"] == "weather-bot" and trace.header["agent"] == "weather"


def test_copilot_jsonl_reads_span_lines_and_counts_the_others_in_one_issue() -> None:
    trace = read_trace(DATA / "copilot_mixed.jsonl")
    assert [(s.name, s.line) for s in trace.spans] == [
        ("invoke_agent GitHub Copilot Chat", 5), ("chat gpt-4o", 3), ("execute_tool read_file", 1)]
    skipped = [i for i in trace.issues if i.severity == "skipped"]
    assert len(skipped) == 1 and skipped[0].line == 2
    assert skipped[0].message.startswith("2 record(s) are not spans (first: \"type\": 'metric')")
    chat = trace.spans[1]
    assert chat.parent_id == "3333333333333333"  # from parentSpanContext (JS SDK 2.x)
    assert chat.attributes["otel.span_kind"] == "client"
    tool = trace.spans[2]
    assert tool.data["output"] == "# tracetui" and tool.data["arguments"] == {"path": "README.md"}
    assert tool.start_ns == (S + 10) * 10**9 + 500 and tool.end_ns == (S + 10) * 10**9 + 900_500
    own = [i for i in trace.issues if i.where not in ("llm.messages", "tool.arguments")]  # the generic content warning apart
    assert "1 of 1 llm spans have no input messages" in own[-1].message  # Copilot's captureContent off
    assert any(i.where == "llm.messages" and "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in i.message for i in trace.issues)


def test_jsonl_torn_last_line_is_held_back_and_a_bad_middle_line_skipped(tmp_path: Path) -> None:
    lines = (DATA / "copilot_mixed.jsonl").read_text().splitlines()
    p = tmp_path / "live.jsonl"
    p.write_text("\n".join([lines[0], "{not json", lines[2], lines[4][:40]]))
    trace = read_trace(p)
    assert [s.name for s in trace.spans] == ["chat gpt-4o", "execute_tool read_file"]
    got = {(i.line, i.severity) for i in trace.issues
           if i.line is not None and i.where not in ("parent_id", "llm.messages", "tool.arguments")}
    assert got == {(2, "skipped"), (4, "warning")}


def test_duration_gives_the_end_when_end_time_is_missing(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps([{"name": "x", "traceId": "ab" * 16, "spanId": "cd" * 8, "startTime": [100, 5],
                              "duration": [1, 10], "kind": 3}]))
    (s,) = read_trace(p).spans
    assert (s.start_ns, s.end_ns, s.attributes["otel.span_kind"]) == (100 * 10**9 + 5, 101 * 10**9 + 15, "producer")


# --- odd input -------------------------------------------------------------------------------


def test_ids_in_every_written_form_normalise(tmp_path: Path) -> None:
    spans = [
        {"name": "a", "context": {"trace_id": "0xABCDEF0123456789ABCDEF0123456789", "span_id": "0x00000000000000A1"},
         "parent_id": None, "start_time": "2026-01-01T00:00:00Z"},
        {"name": "b", "context": {"trace_id": str(0xABCDEF0123456789ABCDEF0123456789), "span_id": 0xB2},
         "parent": {"span_id": 161}, "start_time": "2026-01-01T00:00:01Z"},
        {"name": "c", "spanContext": {"traceId": "abcdef0123456789abcdef0123456789", "spanId": "00000000000000c3"},
         "parentSpanId": "0000000000000000", "startTime": "2026-01-01T00:00:02Z"},
    ]
    p = tmp_path / "ids.json"
    p.write_text(json.dumps(spans))
    trace = read_trace(p)
    assert trace.trace_ids == ["abcdef0123456789abcdef0123456789"]
    assert [(s.span_id, s.parent_id) for s in trace.spans] == [
        ("00000000000000a1", None), ("00000000000000b2", "00000000000000a1"), ("00000000000000c3", None)]


def test_unknown_kind_status_and_bad_times_are_warnings_not_errors(tmp_path: Path) -> None:
    p = tmp_path / "odd.json"
    p.write_text(json.dumps([{"name": "x", "context": {"trace_id": 1, "span_id": 2}, "kind": "SpanKind.WEIRD",
                              "status": {"status_code": "MAYBE"}, "start_time": "yesterday", "end_time": [1, 2, 3],
                              "attributes": ["not", "pairs"], "events": "none"}]))
    trace = read_trace(p)
    (s,) = trace.spans
    assert s.span_id == "0000000000000002" and s.start_ns is None and s.end_ns is None
    assert s.status is Status.UNSET and "otel.span_kind" not in s.attributes
    wheres = sorted(i.where for i in trace.issues if i.severity == "warning" and i.where)
    assert wheres == ["$[0].attributes[0]", "$[0].attributes[1]", "$[0].end_time", "$[0].events", "$[0].kind",
                      "$[0].start_time", "$[0].status"]


def test_span_without_span_id_is_skipped_naming_where(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps([{"name": "ok", "context": {"trace_id": 1, "span_id": 2}},
                             {"name": "no id", "context": {"trace_id": 1}}]))
    trace = read_trace(p, format="otel-sdk-json")
    assert [s.name for s in trace.spans] == ["ok"]
    assert any(i.where == "$[1].context.span_id" and i.severity == "skipped" for i in trace.issues)


def test_nothing_loadable_raises_read_error(tmp_path: Path) -> None:
    p = tmp_path / "junk.txt"
    p.write_text("{definitely not json\n")
    with pytest.raises(ReadError, match="not valid JSON"):
        READER.read(str(p), p.read_bytes())
    with pytest.raises(ReadError, match="file is empty"):
        READER.read("e", b"  \n")
    with pytest.raises(ReadError, match="no OpenTelemetry span found"):
        read_trace(corpus("langfuse/koog-2025-08-26.trace.json"), format="otel-sdk-json")



def test_any_single_odd_value_anywhere_gives_issues_or_read_error_never_a_traceback() -> None:
    doc = json.loads((DATA / "js_readable_spans.json").read_text())[:2]
    doc.append(json.loads(corpus("any-agent-trace/OPENAI_trace.json").read_text())["spans"][1])
    counts = odd_value_outcomes(READER.read, doc, (None, -1, "zz", [], {}, True, 2.5, 10**40),
                                lambda d: json.dumps(d).encode())
    assert counts["error"] > 0 and counts["issue"] > 0, counts  # odd values are noticed, not all swallowed


# --- sniffing --------------------------------------------------------------------------------


def _other_files() -> list[Path]:
    files = [p for p in (REPO / "tests" / "data" / "otlp").glob("*") if p.suffix != ".md"]
    files += [p for p in (REPO / "sample_runs").rglob("*") if p.is_file()]
    return files


def test_sniff_accepts_each_shape_and_rejects_every_other_known_file() -> None:
    mine = [q for q in DATA.glob("*") if q.suffix != ".md"]
    mine += [corpus("any-agent-trace/OPENAI_trace.json"), corpus("any-agent-trace/LANGCHAIN_trace.json")]
    for p in mine:
        head = p.read_bytes()[:65536]
        assert READER.sniff(head), p
        assert sniff_format(head) == "otel-sdk-json", p
    others = _other_files()
    assert len(others) > 10
    for p in others:
        assert not READER.sniff(p.read_bytes()[:65536]), p


def test_sniff_rejects_every_other_corpus_file() -> None:
    for p in corpus_files(outside="any-agent-trace"):
        assert not READER.sniff(p.read_bytes()[:65536]), p
