"""The five hand-written cassette readers (shapes a-e of issue 3), on the small files of
tests/data/cassettes/ (blob folders included) and inline edge cases."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_files

from tracetui.core.canonical import args_hash
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status, Trace
from tracetui.core.readers import read_trace, sniff_format
from tracetui.core.readers.cassettes import (
    CASSETTE_READERS,
    CassetteBlobsReader,
    CassetteEventsReader,
    CassetteKeyedReader,
    CassetteToolsReader,
    decode_args,
    key_rule,
)
from tracetui.core.readers.cassettes.values import hash_args as _hash_args
from tracetui.core.readers.json_values import HELD_BACK

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "cassettes"
READERS = [r() for r in CASSETTE_READERS]



def own(t):  # type: ignore[no-untyped-def]
    """The reader's own issues: the generic content warnings (``tree.content_issues``) set apart."""
    return [i for i in t.issues if i.where not in ("llm.messages", "tool.arguments")]

def by_id(trace: Trace) -> dict[str, Any]:
    return {s.span_id: s for s in trace.spans}


def messages(trace: Trace, severity: str | None = None) -> list[str]:
    return [str(i) for i in trace.issues if severity is None or i.severity == severity]


def write(tmp_path: Path, name: str, rows: list[Any] | str) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(rows if isinstance(rows, str) else "\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def py_key(tool: str, args: Any, **opts: Any) -> str:
    return hashlib.sha256(json.dumps({"t": tool, "a": args}, sort_keys=True, **opts).encode()).hexdigest()[:16]


# --- sniffing -------------------------------------------------------------------------------

SAMPLES = {
    "tools.json": "cassette-tools", "tools_args.jsonl": "cassette-tools", "tools_wrapper.json": "cassette-tools",
    "tools_damaged.jsonl": "cassette-tools", "keyed.jsonl": "cassette-keyed", "keyed_compact.jsonl": "cassette-keyed",
    "events/run.jsonl": "cassette-events", "events_stripped/run.jsonl": "cassette-events",
    "hashed.json": "cassette-hashed", "hashed_runs.jsonl": "cassette-hashed", "blobs_run/run.json": "cassette-blobs",
}


@pytest.mark.parametrize("rel", sorted(SAMPLES))
def test_each_sample_is_claimed_by_its_own_reader_only(rel: str) -> None:
    head = (DATA / rel).read_bytes()[:65536]
    assert [r.name for r in READERS if r.sniff(head)] == [SAMPLES[rel]]
    assert sniff_format(head) == SAMPLES[rel]


def _foreign_files() -> list[Path]:
    out = [p for p in (ROOT / "sample_runs").rglob("*") if p.is_file()]
    out += [p for p in (ROOT / "tests" / "data").rglob("*") if p.is_file() and "cassettes" not in p.parts]
    return sorted(out)


def test_no_cassette_reader_claims_a_corpus_otlp_or_sample_file() -> None:
    """Generic shapes sniff last and strictly: every corpus file (tau-bench list, OpenHands list,
    inspect logs...), every tests/data file of other readers and every sample run is left alone."""
    files = _foreign_files()
    assert any(p.parent.name == "otlp" for p in files) and any("sample_runs" in p.parts for p in files)
    claimed = {str(p): [r.name for r in READERS if r.sniff(p.read_bytes()[:65536])] for p in files}
    assert {p: c for p, c in claimed.items() if c} == {}


@pytest.mark.parametrize("head", [
    b'[{"task_id": 3, "trial": 0, "reward": 1.0, "traj": [{"role": "user", "content": "hi"}]}]',  # tau-bench
    b'[{"id": 0, "timestamp": "t", "source": "agent", "action": "run", "args": {"command": "ls"}}]',  # OpenHands
    b'[{"tool": "lookup", "args": {"q": 1}}]',  # no output: not shape a
    b'{"key": "not-hex", "tool": "t", "args": {}, "result": 1}\n{"key": "x", "tool": "t", "args": {}, "result": 2}\n',
    b'{"tool": "t", "args": {}, "output": 1, "key": "0123456789abcdef"}\n',  # a+b mix: neither
    b'{"runId": "r", "sequence": 1, "kind": "llm_call"}\n{"runId": "r", "sequence": 2, "kind": "llm_call"}\n',
    b'{"runId": "r", "events": [{"seq": 0, "kind": "llm", "name": "m", "requestHash": "ab"}]}',
    b'{"runId": "r", "events": [{"seq": 0, "kind": "tool", "name": "m", "response": 1}]}',  # no hash
    b'{"runId": "r", "spans": [{"spanId": "s", "kind": "tool", "name": "x"}]}',  # no refs, no versions
    b'{"spans": [{"spanId": "s", "kind": "tool", "inputRef": "a"}]}',  # no runId
    b'PK\x03\x04 zip bytes', b'', b'   \n', b'"just a string"', b'[1, 2, 3]',
])
def test_near_misses_are_not_claimed(head: bytes) -> None:
    assert [r.name for r in READERS if r.sniff(head)] == []


def test_a_head_cut_mid_document_is_still_recognised() -> None:
    """The sniff decodes what the 64 KiB head holds: complete members and items of a cut document."""
    blob_doc = (DATA / "blobs_run" / "run.json").read_bytes()
    assert CassetteBlobsReader().sniff(blob_doc[:700])
    big = json.dumps([{"tool": "t", "args": {"i": i}, "output": "x" * 50} for i in range(3000)]).encode()
    assert len(big) > 65536 and CassetteToolsReader().sniff(big[:65536])
    events = (DATA / "events" / "run.jsonl").read_bytes()
    assert CassetteEventsReader().sniff(events[:400])  # first line whole, second cut


# --- (a) tool spans -------------------------------------------------------------------------


def test_tools_array_becomes_tool_spans_under_a_synthesized_root() -> None:
    t = read_trace(DATA / "tools.json")
    assert t.format == "cassette-tools" and t.trace_ids == []
    root, *calls = t.spans
    assert (root.span_id, root.kind, root.name, root.parent_id) == ("root", SpanKind.AGENT, "cassette", None)
    assert [(s.seq, s.parent_id, s.name) for s in calls] == [
        (1, "root", "search_orders"), (2, "root", "get_tracking"), (3, "root", "refund")]
    first, second, refund = calls
    assert first.data["arguments"] == {"customer_id": "C-2207", "query": "5531"}
    assert first.data["args_hash"] == "53172ec8c8af74fd"  # same as the tracetui/1 sample run's search_orders call
    assert first.data["output"] == {"orders": [{"order_id": "5529", "status": "delivered"}]}
    assert (first.start_ns, first.end_ns) == (1793840734922656664, 1793840734922656664 + 164_000_000)
    assert (root.start_ns, root.end_ns) == (first.start_ns, first.end_ns)
    assert second.data["arguments"] == {"order_id": "5529"} and second.data["call_id"] == "call_2"
    assert second.status is Status.OK and second.line == 2
    assert refund.data["arguments"] == {"order_id": "5529", "amount": 10}
    assert (refund.status, refund.error_type, refund.data["output"]) == (Status.ERROR, "PermissionError", None)
    assert refund.attributes == {"effect": "write"}
    assert [i.message for i in t.issues] == [
        "run (unnamed): 1 call(s) record args as a double-encoded JSON string (a JSON string of a JSON string); decoded"]


def test_args_as_object_json_string_or_double_encoded_give_one_arguments_and_hash() -> None:
    t = read_trace(DATA / "tools_args.jsonl")
    calls = t.spans[1:]
    raw = [json.loads(line)["args"] for line in (DATA / "tools_args.jsonl").read_text().splitlines()]
    assert [type(a).__name__ for a in raw] == ["dict", "str", "str"] and json.loads(raw[2]).startswith("{")
    assert [s.data["arguments"] for s in calls] == [{"a": "x", "b": 1}] * 3
    assert {s.data["args_hash"] for s in calls} == {args_hash({"b": 1, "a": "x"})}


def test_decode_args_undoes_string_encodings_only_for_json_containers() -> None:
    assert decode_args({"a": 1}) == ({"a": 1}, 0)
    assert decode_args('{"a": 1}') == ({"a": 1}, 1)
    assert decode_args(json.dumps(json.dumps({"a": 1}))) == ({"a": 1}, 2)
    assert decode_args('"hello"') == ('"hello"', 0)  # a quoted word stays as recorded
    assert decode_args("[1, 2") == ("[1, 2", 0)
    assert decode_args(None) == (None, 0)


def test_tools_wrapper_gives_the_run_id_and_header() -> None:
    t = read_trace(DATA / "tools_wrapper.json")
    assert t.trace_id == "run-7" and t.trace_ids == ["run-7"]
    assert t.header == {"run_id": "run-7", "model": {"id": "gpt-4o"}}
    assert [s.data["arguments"]["city"] for s in t.spans[1:]] == ["Paris", "Lyon"]
    assert all(s.trace_id == "run-7" for s in t.spans)


def test_damaged_tools_jsonl_loads_what_it_can() -> None:
    t = read_trace(DATA / "tools_damaged.jsonl")
    assert [(s.span_id, s.line) for s in t.spans[1:]] == [("call-0", 1), ("call-3", 4)]
    assert "output" not in t.spans[2].data and t.spans[2].status is Status.UNSET
    got = [(i.line, i.severity, i.message.split(";")[0]) for i in t.issues]
    assert got == [
        (3, "skipped", "not valid JSON: Expecting value (column 48)"),
        (5, "warning", HELD_BACK.split(";")[0]),  # the shared JSON Lines rule (json_values.load_json_or_jsonl)
        (2, "skipped", 'not a tool span {"tool", "args", "output"} (no tool name)'),
        (None, "warning", "run (unnamed): 1 of 2 tool call(s) have no output recorded (not captured)"),
    ]


@pytest.mark.parametrize(("content", "reason"), [
    ("", "file is empty"), ("{not json", "not valid JSON"), ('{"foo": 1}', "no tool span could be loaded"),
    ("[]", "no tool span could be loaded"),
])
def test_tools_reader_refuses_what_holds_no_tool_span(tmp_path: Path, content: str, reason: str) -> None:
    p = write(tmp_path, "x.json", content)
    with pytest.raises(ReadError, match=reason):
        read_trace(p, format="cassette-tools")


# --- (b) keyed rows -------------------------------------------------------------------------


def test_key_rule_tells_the_serialisation_apart() -> None:
    args = {"b": [1, 2], "a": "x"}
    assert key_rule(py_key("t", args), "t", args) == "python-default"
    assert key_rule(py_key("t", args, separators=(",", ":")), "t", args) == "compact"
    assert key_rule(py_key("t", args).upper(), "t", args) == "python-default"
    full = hashlib.sha256(json.dumps({"t": "t", "a": args}, sort_keys=True).encode()).hexdigest()
    assert key_rule(full, "t", args) == "python-default"
    cafe = {"q": "café"}
    assert key_rule(py_key("t", cafe), "t", cafe) == "python-default"  # ASCII escapes, Python's default
    assert key_rule(py_key("t", cafe, ensure_ascii=False), "t", cafe) == "python-default-utf8"
    assert key_rule(py_key("t", cafe, separators=(",", ":"), ensure_ascii=False), "t", cafe) == "compact-utf8"
    assert key_rule(py_key("t", args), "t", {"a": "y"}) is None
    assert key_rule("not hex at all!", "t", args) is None and key_rule(None, "t", args) is None


def test_keyed_header_keys_retry_and_repeated_read() -> None:
    t = read_trace(DATA / "keyed.jsonl")
    assert t.format == "cassette-keyed"
    h = t.header
    assert h["prompt_hash"] == "9f2c4e1ab03d77e1" and h["tool_schema_hash"] == "75573f1efc4ab3f2"
    assert h["model"] == {"id": "gpt-4o", "version": "gpt-4o-2024-08-06"}
    assert (h["started_at"], h["start_ns"]) == ("2026-11-05T01:05:33.870Z", 1793840733870000000)
    assert h["agent"] == "support-agent" and h["recorder"] == "cassette.py 0.3"
    assert h["normalization"] == [("cassette keys: 16-hex sha256 prefix of {\"t\": tool, \"a\": args} serialised by "
                                  "json.dumps(..., sort_keys=True): separators (', ', ': '), ASCII escapes (5 row(s))")]
    root, *calls = t.spans
    assert root.name == "support-agent" and root.start_ns == 1793840733870000000
    so, gt = py_key("search_orders", {"customer_id": "C-2207", "query": "5531"}), py_key("get_tracking", {"order_id": "5529"})
    assert [(s.span_id, s.seq, s.line) for s in calls] == [
        (so, 1, 2), (gt, 2, 4), (py_key("get_order", {"order_id": "5529"}), 3, 5), (f"{so}-2", 4, 6),
        ("0123456789abcdef", 5, 7)]
    # the retry: line 3 (failed) dropped, line 4 kept in its place
    retry = calls[1]
    assert retry.data["output"] == {"events": ["delivered 2026-10-30"]} and retry.status is Status.OK
    assert retry.attributes == {"key": gt, "key_rule": "python-default"}
    dropped = [i for i in t.issues if i.severity == "skipped"]
    assert [(i.line, i.message) for i in dropped] == [
        (3, f"key {gt} written again on the next row (line 4): a retry; the last row wins and this row is dropped")]
    # the repeated read (rows 2 and 6, not adjacent) is two calls
    assert calls[0].data == calls[3].data
    # a key made some other way is kept, with a warning
    assert calls[4].attributes["key_rule"] == "unknown" and calls[4].data["output"] == {"cancelled": True}
    assert [(i.line, i.where) for i in t.issues if "matches no" in i.message or "is not sha256" in i.message] == [
        (7, "key")]
    assert len(t.issues) == 2


def test_keyed_compact_utf8_writer_is_one_normalisation() -> None:
    """ASCII-only rows match the ASCII-escaping rule whatever the writer; the non-ASCII row says UTF-8,
    so all three rows are credited to the compact UTF-8 writer, with no 'several writers' warning."""
    t = read_trace(DATA / "keyed_compact.jsonl")
    assert t.header["normalization"] == [("cassette keys: 16-hex sha256 prefix of {\"t\": tool, \"a\": args} serialised "
                                         "by compact, raw UTF-8 (orjson OPT_SORT_KEYS, JS stable stringify) (3 row(s))")]
    assert {s.attributes["key_rule"] for s in t.spans[1:]} == {"compact-utf8"}
    assert t.issues == []
    # same key twice, not adjacent: a repeated read whose second answer differs
    assert [s.data["output"] for s in t.spans[1:]] == [["green", "black"], [], ["green", "black", "oolong"]]


def test_keyed_mixed_separators_warn_of_two_writers(tmp_path: Path) -> None:
    rows = [{"key": py_key("a", {}), "tool": "a", "args": {}, "result": 1},
            {"key": py_key("b", {"x": 1}, separators=(",", ":")), "tool": "b", "args": {"x": 1}, "result": 2}]
    t = read_trace(write(tmp_path, "k.jsonl", rows))
    assert messages(t) == [(f"{tmp_path / 'k.jsonl'} (key): keys written under several normalisations "
                           "(1 python-default, 1 compact): more than one writer?")]


def test_keyed_retry_rules(tmp_path: Path) -> None:
    """Adjacent same key (same tool and arguments): retry, last wins, even after a success (said so);
    a row in between: two calls; same key but other arguments: a collision, two calls."""
    k = py_key("read", {"p": 1})
    rows = [{"key": k, "tool": "read", "args": {"p": 1}, "result": "v1"},
            {"key": k, "tool": "read", "args": {"p": 1}, "result": "v2"},
            {"key": py_key("other", {}), "tool": "other", "args": {}, "result": None},
            {"key": k, "tool": "read", "args": {"p": 1}, "result": "v3"},
            {"key": k, "tool": "read", "args": {"p": 2}, "result": "v4"}]
    t = read_trace(write(tmp_path, "k.jsonl", rows))
    assert [(s.span_id, s.data["output"], s.line) for s in t.spans[1:]] == [
        (k, "v2", 2), (py_key("other", {}), None, 3), (f"{k}-2", "v3", 4), (f"{k}-3", "v4", 5)]
    assert [(i.line, i.severity) for i in t.issues] == [(1, "skipped"), (5, "warning")]
    assert "it had not failed: if the call was deliberately repeated, the recording cannot tell" in t.issues[0].message


def test_keyed_without_header_and_with_header_only_fields(tmp_path: Path) -> None:
    rows = [{"runId": "k-9", "model": {"id": "gpt-4o", "version": "2024-08-06"}, "ts": 1762161242.118},
            {"key": py_key("t", None), "tool": "t", "args": None, "result": "ok", "ts": "2026-11-05T01:05:34Z"}]
    t = read_trace(write(tmp_path, "k.jsonl", rows))
    assert t.trace_id == "k-9"
    assert t.header["model"] == {"id": "gpt-4o", "version": "2024-08-06"}
    assert (t.header["started_at"], t.header["start_ns"]) == ("2025-11-03T09:14:02.118Z", 1762161242118000000)
    assert t.spans[1].start_ns == 1793840734000000000 and t.spans[1].data["arguments"] is None


# --- (c) event stream -----------------------------------------------------------------------


def test_events_run_with_blobs() -> None:
    t = read_trace(DATA / "events" / "run.jsonl")
    assert t.format == "cassette-events" and t.trace_ids == ["r-1", "r-2"] and t.trace_id == "r-1"
    assert t.header == {
        "run_id": "r-1", "prompt_versions": {"prompt": "support.system@v7"}, "model": {"version": "gpt-4o-2024-08-06"},
        "tool_schema_hash": "75573f1efc4ab3f2", "policy_version": "refunds-v3",
        "input": {"message": "Where is my order #5531?"}, "outcome": {"status": "resolved", "reward": 1},
        "start_ns": 1793840730500000000, "started_at": "2026-11-05T01:05:30.5Z"}
    s = by_id(t)
    assert [(x.span_id, x.kind.value, x.name) for x in t.spans] == [
        ("root", "agent", "cassette"), ("ev-1", "llm", "chat gpt-4o-2024-08-06"), ("ev-2", "tool", "search_orders"),
        ("ev-4", "decision", "policy"), ("ev-5", "tool", "refund"), ("ev-7", "llm", "chat gpt-4o-2024-11-20"),
        ("ev-8", "other", "outcome")]
    assert s["root"].data == {"agent_name": "cassette", "input": {"message": "Where is my order #5531?"},
                              "output": "Your order 5529 was delivered on 30 October; I refunded 10 EUR."}
    llm = s["ev-1"].data
    assert llm["messages"] == [{"role": "user", "content": "Where is my order #5531?"}]
    assert llm["params"] == {"temperature": 0.2} and llm["prompt_version"] == "support.system@v7"
    assert llm["output"]["tool_calls"] == [{"id": "call_1", "name": "search_orders", "arguments": {"query": "5531"}}]
    # tool_call + tool_result -> one span: by operationId (result ref is a relative path), by idempotencyKey
    search, refund = s["ev-2"], s["ev-5"]
    assert search.data == {"tool_name": "search_orders", "call_id": "op-1", "arguments": {"query": "5531"},
                           "args_hash": args_hash({"query": "5531"}), "output": {"orders": [{"order_id": "5529"}]}}
    assert (search.start_ns, search.end_ns, search.status) == (1793840732500000000, 1793840733500000000, Status.OK)
    assert refund.data["output"] == {"refunded": 10} and refund.attributes["idempotencyKey"] == "idem-9"
    assert s["ev-4"].data == {"decision": "allow", "value": {"rule": "refund_limit", "decision": "allow", "limit": 50}}
    assert s["ev-7"].data["output"] == {"role": "assistant", "content": "Your order 5529 was delivered on 30 October; "
                                        "I refunded 10 EUR."}  # a .txt blob is text
    assert s["ev-8"].data == {"output": {"status": "resolved", "reward": 1}}
    r1 = [i for i in t.issues if i.line is not None and i.line <= 9]
    assert [(i.line, i.where, i.severity) for i in r1] == [(7, "payloadRef", "warning"), (8, "version.model", "warning")]
    assert "the recorded digest is sha256:0000" in r1[0].message and "sequence 7" in r1[1].message


def test_events_second_run_reports_gap_duplicate_missing_and_refused_refs() -> None:
    t = read_trace(DATA / "events" / "run.jsonl", trace_id="r-2")
    assert [(x.span_id, x.kind.value) for x in t.spans] == [("root", "agent"), ("ev-2", "tool"), ("ev-4", "tool")]
    first = t.spans[1]
    assert first.data["arguments"] == {"path": "/tmp/x"} and "output" not in first.data  # paired by adjacency
    assert first.attributes["result_payloadRef"] == "../../tools_args.jsonl"
    got = [(i.line, i.severity, i.message) for i in t.issues if i.line is not None and i.line >= 10]
    assert got == [
        (11, "warning", "run r-2: sequence jumps from 0 to 2: 1 event(s) missing"),
        (12, "skipped", "run r-2: sequence 2 already on line 11; this event skipped"),
        (10, "warning", "run r-2: event 0 (input): payload ref 'nope' missing: no such blob; the field stays absent"),
        (13, "warning", ("run r-2: event 3 (tool_result): payload ref '../../tools_args.jsonl' refused: absolute or "
                        "leaving the file's folder (..); the field stays absent")),
        (14, "warning", "run r-2: tool_call ev-4 (read_file) has no tool_result; its output stays absent"),
    ]


def test_events_without_blob_folder_report_stripped_payloads_once() -> None:
    t = read_trace(DATA / "events_stripped" / "run.jsonl")
    stripped = [i for i in t.issues if "payloads are not in the file" in i.message]
    assert len(stripped) == 1 and "9 payload ref(s) (first 'in-1')" in stripped[0].message
    assert not any("missing: no such blob" in i.message for i in t.issues)
    search = by_id(t)["ev-2"]
    assert search.data == {"tool_name": "search_orders", "call_id": "op-1"} and search.status is Status.UNSET
    assert search.attributes["payloadRef"] == "tc-1"
    assert "input" not in t.spans[0].data and "outcome" not in t.header


def test_events_ordering_pairing_and_runs(tmp_path: Path) -> None:
    """Several runs on one counter (gaps checked over the stream); events sorted by sequence; an
    event without runId joins the only run... here there are two, so it is skipped; a retried write
    keeps its idempotencyKey and its results answer the calls in order; a keyless result far from
    its call pairs by position, with a warning."""
    ev = [
        {"runId": "a", "sequence": 3, "kind": "tool_result", "tool": {"name": "pay", "idempotencyKey": "k"},
         "payload": {"error": "timeout"}},
        {"runId": "a", "sequence": 1, "kind": "input", "payload": "go"},
        {"runId": "b", "sequence": 2, "kind": "input", "payload": "other run"},
        {"runId": "a", "sequence": 0, "kind": "tool_call", "tool": {"name": "pay", "idempotencyKey": "k"},
         "payload": {"amount": 5}},
        {"runId": "a", "sequence": 4, "kind": "tool_call", "tool": {"name": "pay", "idempotencyKey": "k"},
         "payload": "{\"amount\": 5}"},
        {"runId": "a", "sequence": 5, "kind": "tool_result", "tool": {"name": "pay", "idempotencyKey": "k"},
         "payload": {"paid": 5}},
        {"runId": "a", "sequence": 6, "kind": "tool_call", "tool": {"name": "look"}, "payload": {}},
        {"runId": "a", "sequence": 7, "kind": "model", "payload": "thinking"},
        {"runId": "a", "sequence": 9, "kind": "tool_result", "tool": {"name": "look"}, "payload": [1]},
        {"sequence": 10, "kind": "outcome", "payload": 1},
        {"runId": "a", "sequence": 11, "kind": "debug", "payload": {"x": 1}},
    ]
    t = read_trace(write(tmp_path, "e.jsonl", ev))
    assert t.trace_ids == ["a", "b"]
    assert [(s.span_id, s.kind.value, s.status.value) for s in t.spans] == [
        ("root", "agent", "unset"), ("ev-0", "tool", "error"), ("ev-4", "tool", "ok"), ("ev-6", "tool", "ok"),
        ("ev-7", "llm", "ok"), ("ev-11", "other", "unset")]
    s = by_id(t)
    assert s["ev-0"].data["output"] == {"error": "timeout"} and s["ev-0"].error_type == "error"
    assert s["ev-4"].data["arguments"] == {"amount": 5} and s["ev-4"].data["output"] == {"paid": 5}
    assert s["ev-6"].data["output"] == [1] and t.spans[0].data["input"] == "go"
    assert s["ev-11"].name == "debug" and s["ev-11"].data == {"output": {"x": 1}}
    got = [(i.line, i.severity, i.message) for i in t.issues]
    assert (10, "skipped", "event has no runId and the file holds 2 runs; skipped") in got
    assert (9, "warning", ("run a: tool_result at sequence 9 paired with the open tool_call ev-6 by position only "
                          "(no matching idempotencyKey or operationId)")) in got
    assert (11, "warning", "run a: unknown event kind 'debug'; read as an other span") in got
    assert (None, "warning", ("sequence jumps from 7 to 9 (one counter shared by the file's runs): 1 event(s) "
                             "missing")) in got
    assert not any("jumps from 3" in m for _, _, m in got)  # run a's own gaps are the other run's events


# --- (d) hashed cassette --------------------------------------------------------------------


def test_hashed_cassette_keeps_hashes_not_arguments() -> None:
    t = read_trace(DATA / "hashed.json")
    assert t.format == "cassette-hashed" and t.trace_id == "h-1"
    assert t.header == {"run_id": "h-1", "code_version": "git:51d0e7f"}
    root, plan, search, answer = t.spans
    assert root.data == {"agent_name": "cassette", "output": "Delivered on 30 October."}
    assert (plan.kind, plan.name, plan.data["model"], plan.data["request_hash"]) == (
        SpanKind.LLM, "planner", "gpt-4o", "a1b2c3d4e5f60718")
    assert "messages" not in plan.data and plan.data["output"]["tool_calls"][0]["name"] == "search_orders"
    assert search.data == {"tool_name": "search_orders", "args_hash": "53172ec8c8af74fd",
                           "output": {"orders": [{"order_id": "5529"}]}}
    assert (answer.span_id, answer.data["finish_reason"], answer.data["usage"], answer.data["response_id"]) == (
        "event-3", "stop", {"input_tokens": 120, "output_tokens": 9}, "chatcmpl-1")
    assert "model" not in answer.data  # never guessed from the name
    assert [(i.line, i.where) for i in t.issues] == [(3, "$.events[2].seq"), (None, "")]
    assert "arguments were recorded only as hashes (1 tool call(s)" in t.issues[1].message


def test_hashed_runs_in_jsonl() -> None:
    t = read_trace(DATA / "hashed_runs.jsonl")
    assert t.trace_ids == ["h-2", "h-3"]
    assert [(s.span_id, s.data["output"]) for s in t.spans[1:]] == [("event-0", "pong"), ("event-1", "pong")]
    assert any(i.severity == "skipped" and i.where == "events[2].seq" and "seq 1 already on line 1" in i.message
               for i in t.issues)
    h3 = read_trace(DATA / "hashed_runs.jsonl", trace_id="h-3")
    assert h3.spans[1].status is Status.UNSET and "output" not in h3.spans[1].data
    assert any("run h-3: 1 event(s) have no response recorded" in m for m in messages(h3))


# --- (e) recorded run with blobs ------------------------------------------------------------


def test_blobs_run_tree_kinds_and_payloads() -> None:
    t = read_trace(DATA / "blobs_run" / "run.json")
    assert t.format == "cassette-blobs" and t.trace_id == "run-e1"
    assert t.header == {"run_id": "run-e1", "code_version": "git:8c1f2ad", "prompt_versions": {"support.system": "v7"},
                        "tool_schema_hash": "75573f1efc4ab3f2", "started_at": "2026-11-05T01:05:33.870Z",
                        "start_ns": 1793840733870000000}
    # no times: a pre-order walk, parents first, siblings in file order
    assert [(s.span_id, s.parent_id, s.kind.value) for s in t.spans] == [
        ("s1", None, "agent"), ("s2", "s1", "llm"), ("s3", "s1", "tool"), ("s8", "s3", "other"),
        ("s4", "s1", "retrieval"), ("s5", "s1", "decision"), ("s6", "s1", "tool"), ("s7", "s1", "tool")]
    s = by_id(t)
    assert s["s1"].data == {"agent_name": "support-agent", "input": {"message": "Where is my order #5531?"},
                            "output": "Delivered on 30 October."}
    llm = s["s2"].data
    assert llm["model"] == "gpt-4o" and llm["usage"] == {"input_tokens": 349}  # from OTel attrs
    assert [m["role"] for m in llm["messages"]] == ["system", "user"] and llm["params"] == {"temperature": 0.2}
    assert llm["output"]["tool_calls"][0]["arguments"] == {"query": "5531"}  # from run.blobs/
    assert s["s2"].attributes == {"server.address": "api.openai.com"}
    assert s["s3"].data == {"tool_name": "search_orders", "arguments": {"query": "5531"},
                            "args_hash": args_hash({"query": "5531"}),
                            "output": "{not json: plain text listing}\norder 5529 delivered\n"}
    assert s["s4"].data == {"query": "late delivery policy", "documents": [
        {"id": "kb-12", "score": 0.83, "text": "Late deliveries are refunded."},
        {"id": None, "score": None, "text": "a bare passage"}]}
    assert s["s5"].data == {"decision": "refund_guard", "value": {"allowed": True}}
    assert s["s6"].data == {"tool_name": "read_secret"}
    assert (s["s7"].status, s["s7"].error_type, "output" in s["s7"].data) == (Status.ERROR, "TimeoutError", False)
    assert [(i.line, i.where, i.message.split(":")[0]) for i in own(t)] == [
        (6, "$.spans[5].inputRef", "span s6 (read_secret)"), (6, "$.spans[5].outputRef", "span s6 (read_secret)"),
        (7, "$.spans[6].outputRef", "span s7 (get_tracking)"), (8, "$.spans[7].kind", "run run-e1")]
    assert "'../secret.json' refused" in own(t)[0].message and "'/etc/hostname' refused" in own(t)[1].message
    assert "'missing-blob' missing: no such blob; the field stays absent" in t.issues[2].message
    assert all(i.severity == "warning" for i in t.issues)


def _run(tmp_path: Path, spans: list[dict[str, Any]], **top: Any) -> Path:
    p = tmp_path / "run" / "rec.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"runId": "x", "codeVersion": "1", "spans": spans, **top}), encoding="utf-8")
    return p


def test_blob_symlink_leading_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": 1}', encoding="utf-8")
    p = _run(tmp_path, [{"spanId": "a", "kind": "tool", "name": "t", "inputRef": "evil"}])
    (p.parent / "blobs").mkdir()
    try:
        os.symlink(outside, p.parent / "blobs" / "evil.json")
    except OSError:
        pytest.skip("no symlinks here")
    t = read_trace(p)
    assert "arguments" not in t.spans[0].data
    assert [i.message for i in own(t)] == [("span a (t): payload ref 'evil' refused: its real path leaves the trace "
                                             "file's folder; the field stays absent")]


def test_blob_folder_absent_is_reported_once_per_run(tmp_path: Path) -> None:
    p = _run(tmp_path, [{"spanId": "a", "kind": "tool", "name": "t", "inputRef": "in-a", "outputRef": "out-a"},
                        {"spanId": "b", "kind": "llm", "name": "m", "inputRef": "in-b"}])
    t = read_trace(p)
    assert [i.message.split(":")[0:2] for i in own(t)] == [["run x", " payloads are not in the file"]]
    assert "3 payload ref(s) (first 'in-a')" in own(t)[0].message
    # and the spans left without content are counted by kind (tree.content_issues)
    assert sorted(i.where for i in t.issues if i not in own(t)) == ["llm.messages", "tool.arguments"]


def test_blob_lookup_order_stem_folder_and_extensions(tmp_path: Path) -> None:
    p = _run(tmp_path, [
        {"spanId": "a", "kind": "TOOL", "name": "t", "inputRef": "sha256:abc", "outputRef": "blob://o"},
        {"spanId": "b", "parentSpanId": "a", "kind": "chain", "name": "c", "inputRef": "rec.blobs/i2.json",
         "outputRef": "s3://bucket/o2"}])
    (p.parent / "rec.blobs").mkdir()
    (p.parent / "rec.blobs" / "abc.json").write_text('{"q": 1}', encoding="utf-8")
    (p.parent / "rec.blobs" / "o.txt").write_text("[1, 2]", encoding="utf-8")
    (p.parent / "rec.blobs" / "i2.json").write_bytes(b"caf\xe9")  # not UTF-8
    t = read_trace(p)
    a, b = t.spans
    assert a.data["arguments"] == {"q": 1} and a.data["output"] == "[1, 2]"  # .txt stays text
    assert b.data == {"input": "caf\ufffd"}
    assert [i.message for i in t.issues] == [
        "blob i2.json is not UTF-8 text (byte 3); undecodable bytes replaced",
        "span b (c): payload ref 's3://bucket/o2' not read: a s3 URL, not a local file; the field stays absent"]


def test_blobs_run_with_times_is_ordered_by_start(tmp_path: Path) -> None:
    p = _run(tmp_path, [
        {"spanId": "late", "parentSpanId": "root", "kind": "tool", "name": "b", "startTime": "2026-01-01T00:00:02Z",
         "inputRef": "x"},
        {"spanId": "root", "kind": "agent", "name": "r", "startTime": "2026-01-01T00:00:00Z",
         "endTime": "2026-01-01T00:00:03.25Z"},
        {"spanId": "early", "parentSpanId": "root", "kind": "model", "name": "a", "startTime": 1767225601000,
         "status": {"code": "STATUS_CODE_ERROR"}},
    ])
    t = read_trace(p)
    assert [(s.span_id, s.seq) for s in t.spans] == [("root", 0), ("early", 1), ("late", 2)]
    assert t.spans[0].end_ns == 1767225603250000000 and t.spans[1].start_ns == 1767225601000000000
    assert t.spans[1].kind is SpanKind.LLM and t.spans[1].status is Status.ERROR


# --- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    {"a": 1, "b": [1, 2.5, None]}, {"a": '{"b": 1}'}, {"a": " [1]"}, {"a": "\n{}"}, {"a": "\u00a0{\"x\": 1}"},
    '{"x": 1}', ["x", {"y": "[2]"}], "plain", None, {"k": 'quote"{'}, {"é": "ü"},
])
def test_fast_args_hash_equals_canonical_args_hash(value: Any) -> None:
    assert _hash_args(value) == args_hash(value)


def test_big_integers_are_kept_exact_and_hashed(tmp_path: Path) -> None:
    big = 123456789012345678901234567890
    p = write(tmp_path, "big.jsonl", f'{{"tool": "t", "args": {{"n": {big}}}, "output": 1}}\n')
    t = read_trace(p)
    span = t.spans[1]
    assert span.data["arguments"] == {"n": big} and span.data["args_hash"] == args_hash({"n": big})
    assert [i.message.split(" (")[0] for i in t.issues] == ["1 integer(s) beyond 64 bits"]


def test_keyed_reader_read_directly_returns_one_run() -> None:
    out = CassetteKeyedReader().read("keyed.jsonl", (DATA / "keyed.jsonl").read_bytes())
    assert len(out.runs) == 1 and out.runs[0].in_order and len(out.runs[0].spans) == 6


def test_repeated_run_ids_are_made_unique(tmp_path: Path) -> None:
    doc = {"runId": "same", "events": [{"seq": 0, "kind": "tool", "name": "t", "argsHash": "ab", "response": 1}]}
    p = write(tmp_path, "h.jsonl", [doc, doc, {"events": doc["events"]}])
    t = read_trace(p, trace_id="same-2")
    assert t.trace_ids == ["same", "same-2", "run-3"] and t.trace_id == "same-2"
    assert [(i.line, i.message) for i in t.issues if "already used" in i.message] == [
        (2, "runId 'same' already used by an earlier run of the file; this one is 'same-2'")]


def test_no_cassette_reader_claims_a_corpus_file() -> None:
    claimed = {str(p): [r.name for r in READERS if r.sniff(p.read_bytes()[:65536])] for p in corpus_files()}
    assert {p: c for p, c in claimed.items() if c} == {}
