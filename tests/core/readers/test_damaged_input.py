"""Real-world damage in tracetui/1 JSONL, OTLP/JSON (documents and Collector JSON Lines) and the shared
helpers (jsondoc, canonical, tree): each case loads what can be loaded and reports file, line or JSON path,
and what was done."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from otlp_helpers import to_attributes

from tracetui.core import canonical
from tracetui.core.canonical import (
    args_hash,
    canonical_json,
    canonicalize,
    parse_json_string,
)
from tracetui.core.diff import diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status, Trace
from tracetui.core.readers import json_values, jsondoc, native, read_trace
from tracetui.core.readers.jsondoc import exact_int, load_json
from tracetui.core.readers.json_values import iter_json_values
from tracetui.core.readers.native import dumps_trace
from tracetui.core.readers.otlp import OtlpJsonReader
from tracetui.core.readers.tree import MISSING_PARENT, OTEL_CONTENT_WHY, content_issues, finish_spans

DATA = Path(__file__).resolve().parents[2] / "data" / "damaged"
BOM = b"\xef\xbb\xbf"
T0 = 1_762_161_242_118_000_000


# -- builders -------------------------------------------------------------------------------


def header(run_id: str = "r1") -> bytes:
    return orjson.dumps({"schema": "tracetui/1", "run_id": run_id}) + b"\n"


def line(sid: str, seq: int, parent: str | None = None, kind: str = "tool", **section: Any) -> bytes:
    """A span line as tracetui's writer writes it (orjson, compact, the writer's key order)."""
    body: dict[str, Any] = {"tool_name": "lookup", "arguments": {"q": seq}, "output": {"ok": seq}} \
        if kind == "tool" else {}
    body.update(section)
    return orjson.dumps({"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": f"n-{sid}",
                         "start_ns": T0 + seq, "end_ns": T0 + seq + 10, "status": "ok", "error_type": None,
                         kind: body}) + b"\n"


def otlp_span(sid: str, *, parent: str = "", start: Any = None, name: str = "execute_tool lookup",
              trace: str = "ab" * 16, attrs: dict[str, Any] | None = None) -> dict[str, Any]:
    if attrs is None:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                 "gen_ai.tool.call.arguments": json.dumps({"q": sid}), "gen_ai.tool.call.result": "ok"}
    start = str(T0 + int(sid, 16)) if start is None else start
    return {"traceId": trace, "spanId": sid, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": start, "endTimeUnixNano": str(T0 + 10_000_000_000),
            "attributes": to_attributes(attrs)}


def envelope(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": to_attributes({"service.name": "svc"})},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}


def otlp_line(*spans: dict[str, Any]) -> bytes:
    return orjson.dumps(envelope(*spans)) + b"\n"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


CONTENT = ("llm.messages", "tool.arguments")
"""``where`` of the content-capture warnings (``tree.content_issues``), tested apart below."""


def where(trace: Trace) -> list[tuple[int | None, str, str]]:
    """(line, where, severity) of every issue but the content-capture warnings."""
    return [(i.line, i.where, i.severity) for i in trace.issues if i.where not in CONTENT]


def sid(i: int) -> str:
    return f"{i:016x}"


# -- 1. torn final line ---------------------------------------------------------------------


def test_native_torn_last_line_is_held_back_then_picked_up_when_complete(tmp_path: Path) -> None:
    """A file still being written: the torn line is held back with a warning; once the writer finished it
    (and wrote more), the next read loads it, without any warning."""
    done = header() + line("a", 0) + line("b", 1, "a")
    third = line("c", 2, "a")
    p = write(tmp_path, "live.jsonl", done + third[:25])
    first = read_trace(p)
    assert [s.span_id for s in first.spans] == ["a", "b"]
    (issue,) = first.issues
    assert (issue.path, issue.line, issue.severity) == (str(p), 4, "warning")
    assert "held back" in issue.message and str(issue).startswith(f"{p}:4")
    with open(p, "ab") as fh:
        fh.write(third[25:] + line("d", 3, "c"))
    again = read_trace(p)
    assert [s.span_id for s in again.spans] == ["a", "b", "c", "d"]
    assert again.spans[2].data["arguments"] == {"q": 2}
    assert again.issues == []


def test_collector_torn_last_line_is_held_back_then_picked_up_when_complete(tmp_path: Path) -> None:
    done = otlp_line(otlp_span(sid(1))) + otlp_line(otlp_span(sid(2), parent=sid(1)))
    third = otlp_line(otlp_span(sid(3), parent=sid(1)))
    p = write(tmp_path, "live.otlp.jsonl", done + third[:70])
    first = read_trace(p)
    assert [s.span_id for s in first.spans] == [sid(1), sid(2)]
    (issue,) = first.issues
    assert (issue.path, issue.line, issue.severity) == (str(p), 3, "warning") and "held back" in issue.message
    with open(p, "ab") as fh:
        fh.write(third[70:] + otlp_line(otlp_span(sid(4), parent=sid(3))))
    again = read_trace(p)
    assert [s.span_id for s in again.spans] == [sid(1), sid(2), sid(3), sid(4)]
    assert again.spans[2].data["arguments"] == {"q": sid(3)}
    assert again.issues == []


# -- 2. BOM at the start and after cat; a second header ------------------------------------


def test_cat_of_two_native_files_with_boms_gives_two_runs_and_says_where(tmp_path: Path) -> None:
    """`cat a.jsonl b.jsonl` of files starting with a BOM: both BOMs dropped (warned, with their line); the
    second header starts a second run, selectable by its run id."""
    p = DATA / "cat_two_runs.jsonl"
    t = read_trace(p)
    assert t.trace_ids == ["run-a", "run-b"]
    assert [s.span_id for s in t.spans] == ["s1", "s2", "s3"]
    assert [(i.line, i.where, i.severity) for i in t.issues] == [
        (1, "", "warning"), (5, "", "warning"), (5, "schema", "warning")]
    assert "byte-order mark at the start of the file" in t.issues[0].message
    assert "byte-order mark at the start of the line" in t.issues[1].message
    assert "several runs" in t.issues[2].message and "FILE#run-b" in t.issues[2].message
    b = read_trace(p, trace_id="run-b")
    assert [(s.span_id, s.parent_id) for s in b.spans] == [("s1", None), ("s2", "s1")]
    assert b.header["agent"] == "billing" and b.spans[1].data["arguments"] == {"invoice": 17}


def test_two_runs_with_the_same_run_id_are_told_apart(tmp_path: Path) -> None:
    p = write(tmp_path, "twice.jsonl", header("r") + line("a", 0) + header("r") + line("a", 0) + line("b", 1, "a"))
    t = read_trace(p)
    assert t.trace_ids == ["r", "r-2"]
    assert "id 'r' is taken; read as 'r-2'" in t.issues[0].message and t.issues[0].line == 3
    assert [s.span_id for s in read_trace(p, trace_id="r-2").spans] == ["a", "b"]


def test_a_header_after_headerless_spans_starts_a_run(tmp_path: Path) -> None:
    p = write(tmp_path, "late.jsonl", line("a", 0) + header("r2") + line("x", 0))
    t = read_trace(p, format="tracetui")  # no header on line 1: not sniffed
    assert t.trace_ids == ["r2"] and [s.span_id for s in t.spans] == ["a"]
    assert [(i.line, i.where) for i in t.issues] == [(2, "schema"), (1, "schema")]
    assert "no header line" in t.issues[1].message
    assert [s.span_id for s in read_trace(p, format="tracetui", trace_id="r2").spans] == ["x"]


def test_collector_files_joined_with_cat_keep_every_span_and_name_the_bom_lines(tmp_path: Path) -> None:
    a = BOM + otlp_line(otlp_span(sid(1))) + otlp_line(otlp_span(sid(2), parent=sid(1)))
    b = BOM + otlp_line(otlp_span(sid(3), parent=sid(1)))
    p = write(tmp_path, "cat.otlp.jsonl", a + b)
    t = read_trace(p)
    assert [s.span_id for s in t.spans] == [sid(1), sid(2), sid(3)]
    assert where(t) == [(1, "", "warning"), (3, "", "warning")]
    assert "start of the file" in t.issues[0].message and "files joined with cat" in t.issues[1].message


def test_bom_before_an_otlp_document_and_a_json_document(tmp_path: Path) -> None:
    p = write(tmp_path, "bom.json", BOM + orjson.dumps(envelope(otlp_span(sid(1))), option=orjson.OPT_INDENT_2))
    t = read_trace(p)
    assert [s.span_id for s in t.spans] == [sid(1)] and where(t) == [(1, "", "warning")]
    issues: list[ReadIssue] = []
    assert load_json("doc.json", BOM + b'{"a": 1}', issues) == {"a": 1}
    assert [(i.path, i.line, i.severity) for i in issues] == [("doc.json", 1, "warning")]


# -- 3. CRLF ----------------------------------------------------------------------------------


def test_crlf_line_ends_read_as_lf_without_warnings(tmp_path: Path) -> None:
    native = header() + line("a", 0) + b"\n" + line("b", 1, "a") + line("c", 2, "b")
    lf = read_trace(write(tmp_path, "lf.jsonl", native))
    crlf = read_trace(write(tmp_path, "crlf.jsonl", native.replace(b"\n", b"\r\n")))
    assert crlf.spans == [*lf.spans] and crlf.header == lf.header and crlf.issues == lf.issues == []
    collector = otlp_line(otlp_span(sid(1))) + otlp_line(otlp_span(sid(2), parent=sid(1)))
    lf2 = read_trace(write(tmp_path, "lf.otlp.jsonl", collector))
    crlf2 = read_trace(write(tmp_path, "crlf.otlp.jsonl", collector.replace(b"\n", b"\r\n")))
    assert crlf2.spans == lf2.spans and crlf2.issues == lf2.issues == []
    pretty = orjson.dumps(envelope(otlp_span(sid(1))), option=orjson.OPT_INDENT_2).replace(b"\n", b"\r\n")
    doc = read_trace(write(tmp_path, "crlf.json", pretty))
    assert [s.span_id for s in doc.spans] == [sid(1)] and doc.issues == []


def test_crlf_torn_last_line_is_still_held_back(tmp_path: Path) -> None:
    p = write(tmp_path, "t.jsonl", (header() + line("a", 0)).replace(b"\n", b"\r\n") + line("b", 1)[:30])
    t = read_trace(p)
    assert [s.span_id for s in t.spans] == ["a"] and where(t) == [(3, "", "warning")]


# -- 4. bare NaN / Infinity --------------------------------------------------------------------


def test_native_bare_nan_and_infinity_are_kept_as_strings_with_the_line_and_path(tmp_path: Path) -> None:
    bad = line("b", 1, "a").replace(b'"output":{"ok":1}', b'"output":{"score":NaN,"hi":Infinity,"lo":-Infinity}')
    p = write(tmp_path, "nan.jsonl", header() + line("a", 0) + bad)
    t = read_trace(p)
    assert t.spans[1].data["output"] == {"score": "NaN", "hi": "Infinity", "lo": "-Infinity"}
    (issue,) = t.issues
    assert (issue.line, issue.where, issue.severity) == (3, "$.tool.output.score", "warning")
    assert "3 bare" in issue.message and "kept as strings" in issue.message
    assert t.spans[1] == t.spans[1]  # no float NaN: equal to itself


def test_collector_line_with_bare_nan_and_otlp_nan_double_values(tmp_path: Path) -> None:
    """A bare NaN (not JSON) is kept as a string with a warning; proto3 JSON's "NaN" doubleValue too (no float NaN)."""
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "x.score": 1.5, "x.ratio": 2.5}
    raw = otlp_line(otlp_span(sid(1), attrs=attrs)).replace(b'{"doubleValue":1.5}', b'{"doubleValue":NaN}')
    raw = raw.replace(b'{"doubleValue":2.5}', b'{"doubleValue":"Infinity"}')
    p = write(tmp_path, "nan.otlp.jsonl", otlp_line(otlp_span(sid(2))) + raw)
    t = read_trace(p)
    s = {x.span_id: x for x in t.spans}[sid(1)]
    assert s.attributes["x.score"] == "NaN" and s.attributes["x.ratio"] == "Infinity"
    (issue,) = [i for i in t.issues if i.where not in CONTENT]
    assert issue.line == 2 and issue.where.endswith(".value.doubleValue") and "NaN" in issue.message


def test_json_document_with_nan_names_the_first_path_and_a_number_beyond_a_double() -> None:
    issues: list[ReadIssue] = []
    doc = load_json("d.json", b'{"a": [1, {"b": NaN}], "c": 1e400}', issues)
    assert doc == {"a": [1, {"b": "NaN"}], "c": "Infinity"}
    assert [(i.line, i.where) for i in issues] == [(None, "$.a[1].b"), (None, "$.c")]
    assert "beyond a double" in issues[1].message


def test_concatenated_values_report_nan_with_the_value_line() -> None:
    issues: list[ReadIssue] = []
    values = iter_json_values("c.json", '{"a": 1}\n{\n  "b": NaN\n}\n', issues)
    assert values == [(1, {"a": 1}), (2, {"b": "NaN"})]
    assert [(i.line, i.where, i.severity) for i in issues] == [(2, "$.b", "warning")]


# -- 5. big integers and timestamps --------------------------------------------------------------


def test_integers_beyond_2_53_and_64_bits_are_kept_exact(tmp_path: Path) -> None:
    big = 123456789012345678901234567890
    body = line("b", 1, "a").replace(b'"arguments":{"q":1}',
                                      b'"arguments":{"id":%d,"neg":-%d,"u64":18446744073709551615,"js":9007199254740993}'
                                      % (big, big))
    p = write(tmp_path, "big.jsonl", header() + line("a", 0) + body)
    t = read_trace(p)
    assert t.spans[1].data["arguments"] == {"id": big, "neg": -big, "u64": 2**64 - 1, "js": 2**53 + 1}
    (issue,) = t.issues
    assert (issue.line, issue.where, issue.severity) == (3, "$.tool.arguments.id", "info")
    assert "2 integer(s) beyond 64 bits" in issue.message and "kept exact" in issue.message
    # hashing, canonical bytes and writing back never fail on them
    assert args_hash(t.spans[1].data["arguments"]) == args_hash({"js": 2**53 + 1, "u64": 2**64 - 1, "neg": -big, "id": big})
    assert b"123456789012345678901234567890" in canonical_json(t.spans[1].data)
    out = write(tmp_path, "back.jsonl", dumps_trace(t.header, t.spans))
    assert read_trace(out).spans[1].data["arguments"]["id"] == big


def test_big_integer_inside_a_json_string_argument_is_exact() -> None:
    assert parse_json_string('{"order": 123456789012345678901234}') == {"order": 123456789012345678901234}
    assert args_hash('{"order": 123456789012345678901234}') == args_hash({"order": 123456789012345678901234})
    assert args_hash({"order": 123456789012345678901234}) != args_hash({"order": 123456789012345678901235})


@pytest.mark.parametrize("raw, want", [
    ("1762161242118000001", 1762161242118000001), (1762161242118000001, 1762161242118000001),
    ("1.762161242118e18", 1762161242118000000), (1.762161242118e18, 1762161242118000000),
    ("1.762161242118E+18", 1762161242118000000), (1.5, None), ("12.5", None), ("abc", None), (True, None),
    (float("nan"), None), ("1_000", None),
])
def test_exact_int_reads_the_digits_as_written(raw: Any, want: int | None) -> None:
    assert exact_int(raw) == want
    assert int(1.762161242118e18) != 1762161242118000000  # what float rounding would have given


def test_native_timestamps_as_strings_floats_and_exponent_form_are_exact(tmp_path: Path) -> None:
    a = line("a", 0).replace(b'"start_ns":%d' % T0, b'"start_ns":1.762161242118e18')
    a = a.replace(b'"end_ns":%d' % (T0 + 10), b'"end_ns":"1762161242118000010"')
    b = line("b", 1, "a").replace(b'"start_ns":%d' % (T0 + 1), b'"start_ns":"1.762161242118000001e18"')
    t = read_trace(write(tmp_path, "ts.jsonl", header() + a + b))
    assert [(s.start_ns, s.end_ns) for s in t.spans] == [(T0, T0 + 10), (T0 + 1, T0 + 11)]
    (issue,) = t.issues
    assert (issue.line, issue.where, issue.severity) == (2, "start_ns", "warning")
    assert issue.message.startswith("3 timestamp(s) written as strings or floats") and "exact" in issue.message


def test_otlp_timestamps_in_exponent_form_are_exact(tmp_path: Path) -> None:
    doc = envelope(otlp_span(sid(1), start="1762161242118000000"), otlp_span(sid(2), start="1.762161242119e18"),
                   otlp_span(sid(3), start=1.762161242120e18))
    t = read_trace(write(tmp_path, "ts.json", orjson.dumps(doc)))
    assert [s.start_ns for s in t.spans] == [T0, T0 + 1_000_000, T0 + 2_000_000]
    (issue,) = t.issues
    assert issue.where == "$.resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano"
    assert issue.line == 1 and issue.message.startswith("2 timestamp(s) in float or exponent form")


# -- 6. duplicate keys ---------------------------------------------------------------------------


def test_native_duplicate_keys_keep_the_last_value_and_are_reported(tmp_path: Path) -> None:
    """In a writer-shaped line and in a line written with spaces (another writer): path, line and key named."""
    compact = line("b", 1, "a").replace(b'"arguments":{"q":1}', b'"arguments":{"city":"Paris","city":"Lyon"}')
    spaced = json.dumps({"span_id": "c", "parent_id": "a", "seq": 2, "kind": "llm", "name": "chat",
                         "llm": {"model": "m"}}).replace('"model": "m"', '"model": "m", "model": "n"').encode() + b"\n"
    p = write(tmp_path, "dup.jsonl", header() + line("a", 0) + compact + spaced)
    t = read_trace(p)
    assert t.spans[1].data["arguments"] == {"city": "Lyon"} and t.spans[2].data["model"] == "n"
    assert where(t) == [(3, "$.tool.arguments", "warning"), (4, "$.llm", "warning")]
    assert "duplicate key 'city'" in t.issues[0].message and "last value is kept" in t.issues[0].message


def test_lines_without_damage_are_not_parsed_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost rule: writer lines (and CRLF ones) and clean lines of other writers never reach the slow parse."""
    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("careful_load called on a clean line")

    monkeypatch.setattr(jsondoc, "careful_load", boom)
    monkeypatch.setattr(json_values, "careful_load", boom)  # its own name for it (a file's values)
    spaced = json.dumps({"span_id": "z", "parent_id": "a", "seq": 9, "kind": "tool", "name": "x: y",
                         "tool": {"arguments": {"t": "a:b", "n": 12345678901234567}}}).encode() + b"\n"
    data = header() + line("a", 0) + line("b", 1, "a", output="10:00, 11:00") + spaced
    for d in (data, data.replace(b"\n", b"\r\n")):
        t = read_trace(write(tmp_path, "clean.jsonl", d))
        assert len(t.spans) == 3 and t.issues == []
    doc = orjson.dumps(envelope(otlp_span(sid(1)), otlp_span(sid(2), parent=sid(1))), option=orjson.OPT_INDENT_2)
    assert read_trace(write(tmp_path, "clean.json", doc)).issues == []


def test_duplicate_keys_in_otlp_documents_and_collector_lines(tmp_path: Path) -> None:
    s = otlp_span(sid(1))
    raw = orjson.dumps(envelope(s), option=orjson.OPT_INDENT_2).replace(b'"name": "execute_tool lookup"',
                                                                         b'"name": "first",\n "name": "second"')
    t = read_trace(write(tmp_path, "dup.json", raw))
    assert t.spans[0].name == "second"
    (issue,) = t.issues
    assert (issue.line, issue.where) == (None, "$.resourceSpans[0].scopeSpans[0].spans[0]")
    assert "duplicate key 'name'" in issue.message
    jl = otlp_line(otlp_span(sid(2))) + otlp_line(s).replace(b'"kind":1', b'"kind":2,"kind":1')
    t2 = read_trace(write(tmp_path, "dup.otlp.jsonl", jl))
    assert where(t2) == [(2, "$.resourceSpans[0].scopeSpans[0].spans[0]", "warning")]


def test_json_document_duplicate_key_path_and_concatenated_values() -> None:
    issues: list[ReadIssue] = []
    assert load_json("d.json", b'{"a": {"x": 1, "x": 2}, "b": [{"y": 1, "y": 3}]}', issues) == \
        {"a": {"x": 2}, "b": [{"y": 3}]}
    assert [i.where for i in issues] == ["$.a", "$.b[0]"]
    issues = []
    assert iter_json_values("c.json", '{"a": 1}\n{"b": 1,\n "b": 2}\n', issues) == [(1, {"a": 1}), (2, {"b": 2})]
    assert [(i.line, i.where) for i in issues] == [(2, "$")]


# -- 7. orphans --------------------------------------------------------------------------------------


def test_orphans_are_kept_as_roots_marked_and_reported_once_with_their_line(tmp_path: Path) -> None:
    p = write(tmp_path, "orphan.jsonl", header() + line("a", 0) + line("b", 1, "ghost") + line("c", 2, "b"))
    t = read_trace(p)
    assert [(s.span_id, s.parent_id) for s in t.spans] == [("a", None), ("b", None), ("c", "b")]
    assert t.spans[1].attributes == {MISSING_PARENT: "ghost"} and MISSING_PARENT not in t.spans[2].attributes
    (issue,) = t.issues
    assert (issue.path, issue.line, issue.where, issue.severity) == (str(p), 3, "parent_id", "warning")
    assert "'ghost'" in issue.message and "shown as a root" in issue.message
    o = read_trace(write(tmp_path, "orphan.otlp.jsonl", otlp_line(otlp_span(sid(2), parent=sid(9)))))
    assert o.spans[0].parent_id is None and o.spans[0].attributes[MISSING_PARENT] == sid(9)
    assert where(o) == [(1, "parent_id", "warning")]


def test_orphan_marking_does_not_touch_a_shared_attributes_dict() -> None:
    shared: dict[str, Any] = {"k": 1}
    spans = [Span("a", "x", 0, SpanKind.OTHER, "a", attributes=shared), Span("b", None, 1, SpanKind.OTHER, "b",
                                                                           attributes=shared)]
    finish_spans(spans, "p", [])
    assert shared == {"k": 1} and spans[0].attributes == {"k": 1, MISSING_PARENT: "x"}


# -- 8. clock skew -----------------------------------------------------------------------------------


def _skewed(skew_ns: int) -> bytes:
    """A root agent and two tool calls; the first call was timed on a host whose clock is ``skew_ns`` behind,
    its child on one twice as far behind."""
    root = otlp_span(sid(1), start=str(T0), name="invoke_agent a",
                     attrs={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"})
    first = otlp_span(sid(2), parent=sid(1), start=str(T0 + 5_000_000 - skew_ns))
    second = otlp_span(sid(3), parent=sid(1), start=str(T0 + 9_000_000))
    child = otlp_span(sid(4), parent=sid(2), start=str(T0 + 6_000_000 - 2 * skew_ns))
    return otlp_line(second, child) + otlp_line(first) + otlp_line(root)


def test_child_starting_before_its_parent_is_ordered_after_it_with_one_warning(tmp_path: Path) -> None:
    skewed = read_trace(write(tmp_path, "skew.otlp.jsonl", _skewed(12_500_000)))
    assert [(s.span_id, s.seq) for s in skewed.spans] == [(sid(1), 0), (sid(2), 1), (sid(4), 2), (sid(3), 3)]
    (issue,) = skewed.issues
    assert (issue.line, issue.where, issue.severity) == (1, "start_ns", "warning")  # the earliest-starting one
    assert f"span {sid(4)!r} starts 11.500 ms before its parent {sid(2)!r}" in issue.message
    assert "ordered after its parent" in issue.message
    assert "1 more span(s) like it, skew up to 11.500 ms" in issue.message


def test_skewed_run_diffs_clean_against_the_same_run_without_skew(tmp_path: Path) -> None:
    skewed = read_trace(write(tmp_path, "skew.otlp.jsonl", _skewed(12_500_000)))
    clean = read_trace(write(tmp_path, "clean.otlp.jsonl", _skewed(0)))
    assert clean.issues == []
    assert [s.span_id for s in clean.spans] == [s.span_id for s in skewed.spans]
    d = diff_traces(clean, skewed)
    assert d.divergences == []


def test_child_starting_with_its_parent_but_listed_first_is_moved_silently(tmp_path: Path) -> None:
    data = otlp_line(otlp_span(sid(2), parent=sid(1), start=str(T0))) + otlp_line(otlp_span(sid(1), start=str(T0)))
    t = read_trace(write(tmp_path, "same.otlp.jsonl", data))
    assert [s.span_id for s in t.spans] == [sid(1), sid(2)] and t.issues == []


def test_explicit_seq_is_kept_even_when_a_child_starts_first(tmp_path: Path) -> None:
    """tracetui/1 seq is the recorded emission order: not re-derived from clocks."""
    t = read_trace(write(tmp_path, "seq.jsonl", header() + line("a", 0) + line("b", 1, "a").replace(
        b'"start_ns":%d' % (T0 + 1), b'"start_ns":%d' % (T0 - 5))))
    assert [s.span_id for s in t.spans] == ["a", "b"] and t.issues == []


# -- 9. tool arguments: object, JSON string, double-encoded ----------------------------------------------


ARGS = {"date": "2026-11-06", "slots": [1, 2], "opts": {"b": True, "a": None}}


def test_arguments_as_object_string_and_double_encoded_hash_equal() -> None:
    as_string = json.dumps(ARGS)
    twice = json.dumps(as_string)
    thrice = json.dumps(twice)
    assert twice.startswith('"{\\"')
    for v in (as_string, twice, thrice, " " + twice):
        assert parse_json_string(v) == ARGS
        assert canonicalize(v) == canonicalize(ARGS)
        assert canonical_json(v) == canonical_json(ARGS)
        assert args_hash(v) == args_hash(ARGS)


@pytest.mark.parametrize("plain", ['hello', '"hello"', '"12"', '"[not json"', '{not json', '', '"', '  ', '"null"',
                                   '"\\"{}\\""'[:-1]])
def test_ordinary_string_arguments_stay_strings(plain: str) -> None:
    assert parse_json_string(plain) is plain
    assert args_hash(plain) == canonical.args_hash(plain) and canonicalize(plain) == plain


def test_otlp_tool_arguments_in_three_encodings_read_to_one_hash(tmp_path: Path) -> None:
    def tool(i: int, args: Any) -> dict[str, Any]:
        return otlp_span(sid(i), attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "book",
                                        "gen_ai.tool.call.arguments": args})
    doc = envelope(tool(1, ARGS), tool(2, json.dumps(ARGS)), tool(3, json.dumps(json.dumps(ARGS))))
    t = read_trace(write(tmp_path, "args.json", orjson.dumps(doc)))
    assert [s.data["arguments"] for s in t.spans] == [ARGS] * 3
    assert len({s.data["args_hash"] for s in t.spans}) == 1 and t.spans[0].data["args_hash"] == args_hash(ARGS)


# -- 10. content not captured ----------------------------------------------------------------------------


def test_content_issues_counts_llm_and_tool_spans_without_content() -> None:
    def s(i: int, kind: SpanKind, data: dict[str, Any]) -> Span:
        return Span(f"s{i}", None, i, kind, "x", data=data, line=i + 2)

    spans = [
        s(0, SpanKind.LLM, {"model": "gpt-4o", "usage": {"input_tokens": 3}}),
        s(1, SpanKind.LLM, {"model": "gpt-4o", "messages": [{"role": "user", "content": None}],
                            "output": {"role": "assistant", "content": None}}),
        s(2, SpanKind.LLM, {"messages": [{"role": "user", "content": "hi"}]}),
        s(3, SpanKind.LLM, {"output": {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "name": "t"}]}}),
        s(4, SpanKind.TOOL, {"tool_name": "t", "call_id": "c"}),
        s(5, SpanKind.TOOL, {"tool_name": "t", "arguments": {}}),
        s(6, SpanKind.AGENT, {}),
    ]
    llm, tool = content_issues(spans, "f.jsonl", why=OTEL_CONTENT_WHY)
    assert (llm.path, llm.line, llm.where, llm.severity) == ("f.jsonl", 2, "llm.messages", "warning")
    assert llm.message.startswith("2 of 4 llm span(s) carry no messages or output: content capture was off "
                                  "(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) or stripped by the exporter")
    assert "first: span 's0'" in llm.message
    assert (tool.line, tool.where) == (6, "tool.arguments") and tool.message.startswith("1 of 2 tool span(s)")
    assert content_issues(spans[2:4] + spans[5:], "f.jsonl") == []
    (named,) = content_issues(spans[4:5], "f.jsonl", run="task-3")
    assert named.message.startswith("all 1 tool span(s) of run 'task-3' carry no arguments or output")


def test_otlp_run_recorded_without_content_capture(tmp_path: Path) -> None:
    """What an OpenAI instrumentation writes with capture off: model and usage, no messages."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 12}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "c1"}
    t = read_trace(write(tmp_path, "nocontent.json", orjson.dumps(envelope(
        otlp_span(sid(1), name="chat gpt-4o", attrs=chat), otlp_span(sid(2), attrs=tool)))))
    found = content_issues(t.spans, t.path, why=OTEL_CONTENT_WHY)  # an OTel reader's content_hint
    assert [(i.line, i.where) for i in found] == [(1, "llm.messages"), (1, "tool.arguments")]
    assert found[0].message.startswith("all 1 llm span(s) carry no messages or output")
    # read_trace itself reports them, with the OTel hint for an OTel format
    reported = [i for i in t.issues if i.where in CONTENT]
    assert reported == found and "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in reported[0].message


def test_content_issues_take_the_readers_reason_and_the_formats_hint() -> None:
    """A span's NOT_CAPTURED attribute names the reason (one warning per reason); a non-OTel
    format does not get the OTel environment-variable hint."""
    from tracetui.core.readers.tree import NOT_CAPTURED

    why = "the Agents SDK exports only the response id"
    spans = [Span("a", None, 0, SpanKind.LLM, "response", data={"response_id": "r1"}, attributes={NOT_CAPTURED: why}, line=1),
             Span("b", None, 1, SpanKind.LLM, "response", data={"response_id": "r2"}, attributes={NOT_CAPTURED: why}, line=2),
             Span("c", None, 2, SpanKind.LLM, "chat", data={"model": "m"}, line=3)]
    given, other = content_issues(spans, "f.jsonl")
    assert given.message.startswith(f"2 of 3 llm span(s) carry no messages or output: {why}; first: span 'a'")
    assert other.message.startswith("1 of 3 llm span(s) carry no messages or output: not in the file (not recorded, or stripped before it was written)")
    assert "OTEL_" not in other.message


# -- robustness of the helpers ----------------------------------------------------------------------------


def test_broken_json_still_names_line_and_column() -> None:
    with pytest.raises(ReadError) as err:
        load_json("b.json", b'{\n  "a": 1,\n  "b": }\n', [])
    assert err.value.line == 3 and "column" in err.value.reason
    with pytest.raises(ReadError, match="not UTF-8"):
        load_json("b.json", b'{"a": "\xff"}', [])


@pytest.mark.parametrize("chunk", [7, 64, 256 * 1024])
def test_native_streamed_and_in_memory_reads_agree_on_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             chunk: int) -> None:
    """Every kind of damage at once, read through buffers cut anywhere, equals the in-memory read."""
    monkeypatch.setattr(native, "_CHUNK", chunk)
    data = b"".join([
        (DATA / "cat_two_runs.jsonl").read_bytes(),
        line("n", 2, "s1").replace(b'"q":2', b'"q":NaN').replace(b"\n", b"\r\n"),
        line("d", 3, "s1").replace(b'"q":3', b'"q":1,"q":3'),
        line("g", 4, "ghost").replace(b'"q":4', b'"q":123456789012345678901234'),
        BOM + line("t", 5, "s1")[:20],
    ])
    p = write(tmp_path, "all.jsonl", data)
    streamed = read_trace(p, trace_id="run-b")
    out = native.NativeReader().read(str(p), data)
    issues = list(out.issues)
    spans = finish_spans(out.runs[1].spans, str(p), issues)
    assert streamed.spans == spans and streamed.issues == issues
    assert [r.trace_id for r in out.runs] == streamed.trace_ids == ["run-a", "run-b"]
    assert [s.span_id for s in spans] == ["s1", "s2", "n", "d", "g"]
    assert [(i.line, i.where) for i in issues] == [
        (1, ""), (5, ""), (5, "schema"), (8, "$.tool.arguments.q"), (9, "$.tool.arguments"), (10, "$.tool.arguments.q"),
        (11, ""), (10, "parent_id")]
    assert issues[-2].message.endswith("held back")


def test_otlp_reader_never_raises_on_damaged_lines() -> None:
    reader = OtlpJsonReader()
    good = otlp_line(otlp_span(sid(1)))
    for bad in (b'{"resourceSpans": NaN}', BOM + b"[1, 2]", b'{"a": 1, "a": 2}', b"\xff\xfe", b'"' * 3):
        out = reader.read("f", good + bad + b"\n" + good)
        assert len(out.runs[0].spans) == 2 and out.issues and all(i.line == 2 for i in out.issues)


def test_status_of_spans_read_from_damaged_lines_is_kept() -> None:
    raw = header() + line("a", 0).replace(b'"status":"ok"', b'"status":"error","status":"ok"')
    out = native.NativeReader().read("f", raw)
    assert out.runs[0].spans[0].status is Status.OK and [i.where for i in out.issues] == ["$"]


def test_deep_nesting_beyond_what_orjson_writes_is_read_without_a_traceback(tmp_path: Path) -> None:
    """orjson reads 1024 levels but writes 255: such lines are checked by the standard library, or kept."""
    for depth in (300, 1000):
        deep = b'{"a":' * depth + b"1" + b"}" * depth
        raw = line("b", 1, "a").replace(b'"output":{"ok":1}', b'"output":' + deep)
        t = read_trace(write(tmp_path, "deep.jsonl", header() + line("a", 0) + raw))
        assert [s.span_id for s in t.spans] == ["a", "b"] and t.issues == []


def test_bench_readers_runs_on_small_generated_files(tmp_path: Path) -> None:
    """`benchmarks/bench_readers.py` builds small tracetui/1 and OTLP files and prints its table (figures not asserted)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "benchmarks/bench_readers.py", "-n", "300", "--repeat", "1", "--no-corpus",
                          "--data", str(tmp_path)], check=False, capture_output=True, text=True, cwd=root,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [r for r in out.stdout.splitlines() if r.startswith(("original_n300", "otlp_n300"))]
    assert [r.split()[1] for r in rows] == ["tracetui", "otlp-json", "otlp-json"] and all(r.split()[3] == "300" for r in rows)
