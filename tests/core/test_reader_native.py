"""The tracetui/1 reader: streamed and in-memory reads agree, the fast path reads as the careful one, and
``finish_spans`` repairs order, duplicates, orphans and cycles."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson
import pytest

from tests.builders import TraceBuilder
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers import finish_spans, native, read_trace
from tracetui.core.readers.tree import content_issues
from tracetui.core.readers.native import NativeReader, span_fast as _span_fast, _span_from_obj, dumps_trace, span_to_obj

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
HEADER = b'{"schema":"tracetui/1","run_id":"r1"}\n'


def _line(sid: str, seq: int, parent: str | None = None, kind: str = "tool", **extra: object) -> bytes:
    obj: dict[str, object] = {"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": f"n{sid}",
                              "start_ns": 1000 + seq, "end_ns": 2000 + seq, "status": "ok", "error_type": None,
                              kind: {"tool_name": "t", "arguments": {"q": seq}, "output": "x" * 10}}
    obj.update(extra)
    return orjson.dumps(obj) + b"\n"


def _read_both(tmp_path: Path, data: bytes) -> tuple[list[Span], list[ReadIssue], list[Span], list[ReadIssue]]:
    """(spans, issues) of the streamed read_trace and of NativeReader.read on the same bytes."""
    p = tmp_path / "t.jsonl"
    p.write_bytes(data)
    streamed = read_trace(p, format="tracetui")
    out = NativeReader().read(str(p), data)
    issues = list(out.issues)
    spans = finish_spans(out.runs[0].spans, str(p), issues)
    issues.extend(content_issues(spans, str(p)))  # what read_trace adds after finishing
    return streamed.spans, streamed.issues, spans, issues


ODD_FILE = b"".join([
    HEADER,
    b"\n",                                    # blank line
    _line("a", 0),
    b"   \t \n",                              # whitespace only
    _line("b", 1, "a", kind="llm"),
    b"[1, 2]\n",                              # not an object
    b'{"span_id": "c", "seq": 2, \n',         # not valid JSON
    _line("d", 3, "a", tool={"output": "y" * 600_000}),   # longer than the read buffer, twice
    _line("e", 4, "zz"),                      # unknown parent
    _line("f", 5, "a", extra_field=1),        # unknown key: careful path, goes to attributes
    b'{"span_id": "g", "seq": 6, "kind": "tool", "name": "g", "status": []}\n',  # odd status type
    b'{"span_id": "h", "seq": 7, "kind": "tool", "na',   # torn last line, no newline
])


@pytest.mark.parametrize("chunk", [7, 64, 256 * 1024])
def test_streamed_read_equals_in_memory_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Chunk boundaries anywhere (inside lines, at newlines, lines longer than the buffer) change nothing."""
    monkeypatch.setattr(native, "_CHUNK", chunk)
    s_spans, s_issues, w_spans, w_issues = _read_both(tmp_path, ODD_FILE)
    assert s_spans == w_spans
    assert s_issues == w_issues
    assert [s.span_id for s in s_spans] == ["a", "b", "d", "e", "f", "g"]
    assert len(s_spans[2].data["output"]) == 600_000
    by_line = {(i.line, i.where): i for i in s_issues}
    assert by_line[(6, "")].message.startswith("expected a JSON object")
    assert by_line[(7, "")].message.startswith("not valid JSON")
    assert by_line[(12, "")].severity == "warning" and "held back" in by_line[(12, "")].message
    assert s_spans[4].attributes == {"extra_field": 1}
    assert s_spans[5].status is Status.UNSET and by_line[(11, "status")].severity == "warning"
    assert s_spans[3].parent_id is None and by_line[(9, "parent_id")].severity == "warning"


def test_last_line_without_newline_is_read_when_complete(tmp_path: Path) -> None:
    """A complete last line without a trailing newline is a span, not a torn line."""
    data = HEADER + _line("a", 0) + _line("b", 1, "a").rstrip(b"\n")
    s_spans, s_issues, w_spans, _ = _read_both(tmp_path, data)
    assert [s.span_id for s in s_spans] == ["a", "b"] == [s.span_id for s in w_spans]
    assert s_issues == []


@pytest.mark.parametrize("sample", ["scheduling", "order_lookup", "subscription_pause"])
def test_sample_runs_read_the_same_streamed_and_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample: str) -> None:
    """The sample runs, read through a tiny buffer, equal the in-memory read."""
    monkeypatch.setattr(native, "_CHUNK", 97)
    for name in ("original.jsonl", "replay.jsonl"):
        data = (SAMPLES / sample / name).read_bytes()
        s_spans, s_issues, w_spans, w_issues = _read_both(tmp_path, data)
        assert s_spans == w_spans and s_issues == w_issues
        assert len(s_spans) > 3


def test_fast_path_reads_written_spans_as_the_careful_path() -> None:
    """Every line the writer produces takes the fast path, which builds the span the careful path builds."""
    spans = read_trace(SAMPLES / "scheduling" / "original.jsonl").spans
    spans = spans + [Span("x", "y", 9, SpanKind.MEMORY, "m", None, None, Status.ERROR, "E", {}, {"k": 1}, "t", 3)]
    for s in spans:
        obj = orjson.loads(orjson.dumps(span_to_obj(s)))
        issues: list[ReadIssue] = []
        fast = _span_fast(obj, 5)
        assert fast is not None
        assert fast == _span_from_obj(obj, "p", 5, issues)
        assert issues == []


@pytest.mark.parametrize("line", [
    {"span_id": "a", "kind": "tool", "seq": 0, "name": "x", "status": []},
    {"span_id": "a", "kind": {}, "seq": 0, "name": "x"},
    {"span_id": "a", "kind": "tool", "seq": True, "name": "x"},
    {"span_id": "a", "parent_id": "", "seq": 0, "kind": "tool", "name": "x", "start_ns": "12", "end_ns": None,
     "status": "ok", "error_type": None},
    {"span_id": "a", "parent_id": None, "seq": 0, "kind": "tool", "name": "x", "start_ns": 1, "end_ns": 2,
     "status": "ok", "error_type": None, "tool": [1]},
])
def test_odd_lines_leave_the_fast_path_without_a_traceback(line: dict[str, object]) -> None:
    """Lines the fast path does not take read through the careful path, with issues and no exception."""
    assert _span_fast(line, 1) is None
    out = NativeReader().read("p", orjson.dumps(line) + b"\n")
    assert [s.span_id for s in out.runs[0].spans] == ["a"]


def test_in_order_file_is_kept_and_out_of_order_file_is_sorted(tmp_path: Path) -> None:
    """Spans in seq order with parents first skip finish_spans; others are sorted and repaired the same way."""
    ordered = HEADER + _line("a", 0) + _line("b", 1, "a") + _line("c", 2, "b")
    shuffled = HEADER + _line("c", 2, "b") + _line("a", 0) + _line("b", 1, "a")
    assert NativeReader().read("p", ordered).runs[0].in_order is True  # type: ignore[attr-defined]
    assert NativeReader().read("p", shuffled).runs[0].in_order is False  # type: ignore[attr-defined]
    p1, p2 = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    p1.write_bytes(ordered)
    p2.write_bytes(shuffled)
    t1, t2 = read_trace(p1), read_trace(p2)
    assert [(s.span_id, s.seq, s.parent_id) for s in t1.spans] == [(s.span_id, s.seq, s.parent_id) for s in t2.spans]
    assert t1.issues == [] and t2.issues == []


def test_finish_spans_drops_duplicates_derives_seq_and_breaks_cycles() -> None:
    """Duplicate ids keep the first span; missing seq comes from start_ns, parents before children
    (b starts before its parent a: clock skew, reported); orphans and cycles become roots."""
    def span(sid: str, parent: str | None, seq: int, start: int | None = None, line: int = 0) -> Span:
        return Span(sid, parent, seq, SpanKind.OTHER, sid, start, None, Status.OK, None, {}, {}, None, line)

    issues: list[ReadIssue] = []
    out = finish_spans([
        span("a", None, -1, 30, 1), span("b", "a", -1, 10, 2), span("a", None, -1, 5, 3),
        span("c", "d", -1, 20, 4), span("d", "c", -1, 40, 5), span("e", "nope", -1, None, 6),
    ], "p", issues)
    assert [(s.span_id, s.seq) for s in out] == [("c", 0), ("a", 1), ("b", 2), ("d", 3), ("e", 4)]
    parents = {s.span_id: s.parent_id for s in out}
    assert parents == {"b": "a", "c": None, "a": None, "d": "c", "e": None}
    assert [(i.line, i.where) for i in issues] == [(3, "span_id"), (6, "parent_id"), (4, "parent_id"), (2, "start_ns")]


def test_finish_spans_is_linear_on_a_deep_chain_with_an_orphan() -> None:
    """A 20k-deep chain under a missing parent is repaired by walking each span once, not once per ancestor."""
    n = 20_000
    spans = [Span(f"s{i}", f"s{i - 1}" if i else "missing", i, SpanKind.OTHER, "x") for i in range(n)]
    issues: list[ReadIssue] = []
    out = finish_spans(spans, "p", issues)
    assert out[0].parent_id is None and out[-1].parent_id == f"s{n - 2}"
    assert [i.where for i in issues] == ["parent_id"]


def test_read_from_a_pipe(tmp_path: Path) -> None:
    """A file that cannot seek (a named pipe, ``<(zcat ...)``) reads like a regular one, in both formats."""
    sample = SAMPLES / "order_lookup"
    for name in ("original.jsonl", "original.otlp.json"):
        data = (sample / name).read_bytes()
        fifo = tmp_path / f"{name}.fifo"
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(data,))
        writer.start()
        try:
            piped = read_trace(fifo)
        finally:
            writer.join()
        assert piped.spans == read_trace(sample / name).spans


def test_empty_and_blank_files_are_read_errors(tmp_path: Path) -> None:
    """An empty file, or one of only whitespace (even past the sniffed head), is 'file is empty'."""
    for data in (b"", b" \n\t\n", b" " * (70 * 1024)):
        p = tmp_path / "e.jsonl"
        p.write_bytes(data)
        with pytest.raises(ReadError, match="file is empty"):
            read_trace(p)


def test_written_trace_reads_back(tmp_path: Path) -> None:
    """dumps_trace then read_trace gives the spans back (lines are the fast path's shape)."""
    t = TraceBuilder("o")
    root = t.add("agent", "support", input={"q": 1}, output={"a": 2})
    t.add("tool", "lookup", parent=root, arguments={"id": 1}, output={"ok": True})
    p = tmp_path / "w.jsonl"
    p.write_bytes(dumps_trace({"run_id": "x"}, t.trace().spans))
    back = read_trace(p)
    assert [(s.span_id, s.parent_id, s.kind, dict(s.data)) for s in back.spans] == \
        [(s.span_id, s.parent_id, s.kind, dict(s.data)) for s in t.trace().spans]
    assert back.header["run_id"] == "x"


def test_span_that_is_its_own_parent_is_repaired(tmp_path: Path) -> None:
    """A span naming itself as parent is not taken as in order: finish_spans makes it a root."""
    p = tmp_path / "self.jsonl"
    p.write_bytes(HEADER + _line("a", 0) + _line("b", 1, "b"))
    assert NativeReader().read("p", p.read_bytes()).runs[0].in_order is False  # type: ignore[attr-defined]
    t = read_trace(p)
    assert [(s.span_id, s.parent_id) for s in t.spans] == [("a", None), ("b", None)]
    assert [(i.line, i.where) for i in t.issues] == [(3, "parent_id")]


def test_parent_ids_share_the_parent_span_id_object(tmp_path: Path) -> None:
    """In an in-order file each parent_id is the parent's span_id object itself (equal, and identical)."""
    p = tmp_path / "t.jsonl"
    p.write_bytes(HEADER + _line("a", 0) + _line("b", 1, "a") + _line("c", 2, "b"))
    a, b, c = read_trace(p).spans
    assert b.parent_id is a.span_id and c.parent_id is b.span_id


def test_read_replay_falls_back_to_the_first_trace_unless_asked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The replay takes the original's trace id when it holds it, else its first trace; an explicit replay id must exist."""
    import pytest

    from tracetui.core.errors import TraceNotFound
    from tracetui.core.readers import read_replay

    f = tmp_path / "r.jsonl"
    f.write_text('{"schema":"tracetui/1","run_id":"run-b"}\n{"span_id":"a","seq":0,"kind":"agent","name":"a"}\n')
    assert read_replay(f, trace_id="run-a").trace_id == "run-b"
    assert read_replay(f, trace_id="run-b").trace_id == "run-b"
    with pytest.raises(TraceNotFound):
        read_replay(f, trace_id="run-b", replay_trace_id="run-x")


def test_reader_names_known_without_imports_match_the_registry() -> None:
    """READER_NAMES (the CLI's --input-format choices, known without importing any reader module)
    lists the registry's readers, in sniffing order."""
    from tracetui.core.readers import READER_NAMES, all_readers, reader_names

    assert tuple(r.name for r in all_readers()) == READER_NAMES
    assert reader_names() == list(READER_NAMES)
