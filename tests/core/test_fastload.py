"""The index loader (``read_pair``): the same diff as ``read_trace`` + ``read_replay``, payloads read on demand."""

from __future__ import annotations

import dataclasses
import os
import pickle
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.builders import generated_pair
from tracetui.core.diff import TraceDiff, diff_traces
from tracetui.core.errors import ReadError, SourceChanged, TraceNotFound
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.model import Span
from tracetui.core.load import native_index, read_pair
from tracetui.core.readers import read_replay, read_trace
from tracetui.core.readers.native import dumps_trace

ROOT = Path(__file__).resolve().parents[2]


def _tracetui_files() -> list[Path]:
    """Every tracetui/1 file of the repository's test data and samples, and of the shared corpus."""
    found: list[Path] = []
    roots = [ROOT / "sample_runs", ROOT / "tests", Path("/work/shared/corpus")]
    for root in roots:
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*.jsonl")):
            try:
                head = p.read_bytes()[:4096]
            except OSError:
                continue
            if b'"tracetui/' in head.split(b"\n", 1)[0] or b'"tracetui/' in head[:200]:
                found.append(p)
    return found


def _pairs() -> list[tuple[Path, Path]]:
    """Original/replay pairs of the samples and test data, plus each file against the others of its folder."""
    files = _tracetui_files()
    pairs: list[tuple[Path, Path]] = []
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        by_dir.setdefault(f.parent, []).append(f)
    for group in by_dir.values():
        for a in group:
            for b in group:
                pairs.append((a, b))
    return pairs


def _shape(d: TraceDiff) -> Any:
    """Everything a diff shows, spans compared by value (after the diff: reading them loads their payloads)."""
    return (
        [(r.original, r.replay, r.depth) for r in d.rows],
        [(v.type, v.row, v.fields, v.order) for v in d.divergences],
        [(v.row if v is not None else None) for v in d.row_divergence],
        d.divergent_rows,
        d.first.row if d.first is not None else None,
        [str(i) for i in d.original.issues],
        [str(i) for i in d.replay.issues],
        (d.original.trace_id, d.original.trace_ids, d.original.header, d.original.format, d.original.path),
        (d.replay.trace_id, d.replay.trace_ids, d.replay.header, d.replay.format, d.replay.path),
        d.original.spans,
        d.replay.spans,
    )


def _both(original: Path | str, replay: Path | str, **kw: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """The diff shape by the current path and by the index loader (every file indexed)."""
    args = {k: v for k, v in kw.items() if k in ("trace_id", "replay_trace_id")}
    slow = diff_traces(read_trace(original, trace_id=args.get("trace_id")),
                       read_replay(replay, trace_id=args.get("trace_id"), replay_trace_id=args.get("replay_trace_id")))
    pair = read_pair(original, replay, index_min_bytes=0, **kw)
    fast = diff_traces(*pair)
    return _shape(slow), _shape(fast), pair


@pytest.mark.parametrize("original,replay", _pairs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_diff_as_read_trace_on_every_test_file(original: Path, replay: Path) -> None:
    slow, fast, _ = _both(original, replay)
    assert fast == slow


def _bench_pair(tmp_path: Path, n: int, edits: int) -> tuple[Path, Path]:
    return generated_pair(tmp_path, n, edits, 3)


@pytest.mark.parametrize("edits", [10, 300])
def test_same_diff_on_generated_pair_and_payloads_stay_unread(tmp_path: Path, edits: int) -> None:
    orig, rep = _bench_pair(tmp_path, 3000, edits)
    pair = read_pair(orig, rep, index_min_bytes=0)
    fast = diff_traces(*pair)
    spans = [*pair[0].spans, *pair[1].spans]
    assert all(type(s) is LazySpan for s in spans)
    read = sum(1 for s in spans if s.loaded)  # type: ignore[attr-defined]
    assert read <= 6 * edits  # the divergent pairs' payloads (and their neighbours), not the rest
    slow = diff_traces(read_trace(orig), read_replay(rep))
    assert _shape(fast) == _shape(slow)


def test_lazy_payload_reads_the_line_on_first_access(tmp_path: Path) -> None:
    orig, _ = _bench_pair(tmp_path, 200, 10)
    eager = read_trace(orig)
    lazy, _ = read_pair(orig, orig, index_min_bytes=0)
    s = lazy.spans[5]
    assert isinstance(s, LazySpan) and not s.loaded
    assert s.data == eager.spans[5].data and s.loaded
    assert s == eager.spans[5] and eager.spans[5] == s
    assert s.tool_name == eager.spans[5].tool_name
    copy = dataclasses.replace(lazy.spans[6], name="renamed")
    assert copy.data == eager.spans[6].data and copy.name == "renamed"
    back = pickle.loads(pickle.dumps(lazy.spans[7]))
    assert type(back) is Span and back == eager.spans[7]
    assert dict(lazy.spans[8].data) == orjson.loads(orjson.dumps(eager.spans[8].data))


def test_payload_read_after_the_file_is_replaced_by_rename(tmp_path: Path) -> None:
    orig, _ = _bench_pair(tmp_path, 200, 10)
    want = read_trace(orig).spans[3].data
    lazy, _ = read_pair(orig, orig, index_min_bytes=0)
    tmp = tmp_path / "new.jsonl"
    tmp.write_bytes(b'{"schema":"tracetui/1"}\n')
    os.replace(tmp, orig)  # an atomic rewrite: the open descriptor keeps the old bytes
    assert lazy.spans[3].data == want


def test_payload_of_a_file_rewritten_in_place_is_a_clear_error(tmp_path: Path) -> None:
    orig, _ = _bench_pair(tmp_path, 200, 10)
    lazy, _ = read_pair(orig, orig, index_min_bytes=0)
    size = orig.stat().st_size
    with open(orig, "r+b") as fh:
        fh.write(b"x" * size)
    with pytest.raises(SourceChanged, match="changed since it was read") as err:  # a ReadError
        lazy.spans[3].data  # noqa: B018
    assert err.value.line == lazy.spans[3].line


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _spans_file(tmp_path: Path, name: str, n: int = 40) -> list[bytes]:
    orig, _ = _bench_pair(tmp_path / name, n, 10)
    return orig.read_bytes().splitlines()


def test_damaged_lines_in_the_middle_give_the_same_issues(tmp_path: Path) -> None:
    lines = _spans_file(tmp_path, "a")
    lines[10] = lines[10][: len(lines[10]) // 2]  # torn: not JSON
    lines[12] = lines[12][:-1] + b',"seq":99}'  # a duplicate key: the careful path keeps the last
    lines[14] = lines[14].replace(b'"status":"ok"', b'"status":"ok","extra":12345678901234567890123')  # big int
    lines.insert(16, b"[1,2]")  # not an object
    lines.insert(18, b"\xef\xbb\xbf" + lines[18])  # a byte-order mark in the middle
    damaged = _write(tmp_path / "damaged.jsonl", lines)
    slow, fast, (o, _) = _both(damaged, damaged)
    assert fast == slow
    issues = [(i.line, i.where, i.severity) for i in o.issues]
    assert (11, "", "skipped") in issues
    assert any(line == 13 for line, _, _ in issues)
    assert any(line == 17 for line, _, _ in issues)
    assert any(type(s) is Span for s in o.spans)  # the damaged lines' spans are read whole
    assert sum(type(s) is LazySpan for s in o.spans) >= 30


def test_torn_last_line_is_held_back_as_read_trace_does(tmp_path: Path) -> None:
    lines = _spans_file(tmp_path, "a")
    data = b"\n".join(lines) + b"\n" + lines[5][:30]
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data)
    slow, fast, _ = _both(path, path)
    assert fast == slow
    assert "held back" in fast[5][-1]


def test_several_runs_pick_as_read_trace_and_read_replay(tmp_path: Path) -> None:
    a = _spans_file(tmp_path, "a")
    b = _spans_file(tmp_path, "b")
    a[0] = b'{"schema":"tracetui/1","run_id":"one"}'
    b[0] = b'{"schema":"tracetui/1","run_id":"two"}'
    both = _write(tmp_path / "both.jsonl", a + b)
    only_two = _write(tmp_path / "two.jsonl", b)
    for kw, orig, rep in (({}, both, both), ({"trace_id": "two"}, both, both), ({"trace_id": "one"}, both, only_two),
                          ({"replay_trace_id": "two"}, both, both), ({}, f"{both}#two", f"{both}#one")):
        slow, fast, _ = _both(orig, rep, **kw)
        assert fast == slow, kw
    with pytest.raises(TraceNotFound) as err:
        read_pair(both, both, trace_id="three", index_min_bytes=0)
    assert err.value.side == "original"  # type: ignore[attr-defined]
    with pytest.raises(TraceNotFound) as err:
        read_pair(both, both, replay_trace_id="three", index_min_bytes=0)
    assert err.value.side == "replay"  # type: ignore[attr-defined]


def test_errors_name_the_side_that_failed(tmp_path: Path) -> None:
    lines = _spans_file(tmp_path, "a")
    good = _write(tmp_path / "good.jsonl", lines)
    missing = tmp_path / "missing.jsonl"
    for orig, rep, side in ((missing, good, "original"), (good, missing, "replay"), (missing, missing, "original")):
        with pytest.raises(ReadError) as err:
            read_pair(orig, rep, index_min_bytes=0)
        assert err.value.side == side  # type: ignore[attr-defined]
        assert err.value.path == str(missing)
    junk = _write(tmp_path / "junk.jsonl", [b"{not json"] * 3 + [b"[]"])  # read as tracetui/1: nothing loads
    with pytest.raises(ReadError) as want:
        read_replay(junk, format="tracetui")
    with pytest.raises(ReadError) as got:
        read_pair(good, junk, replay_format="tracetui", index_min_bytes=0)
    assert (got.value.side, str(got.value)) == ("replay", str(want.value))  # type: ignore[attr-defined]


def test_small_and_other_format_files_take_the_current_path(tmp_path: Path) -> None:
    lines = _spans_file(tmp_path, "a")
    good = _write(tmp_path / "good.jsonl", lines)
    o, r = read_pair(good, good)  # below INDEX_MIN_BYTES
    assert not any(type(s) is LazySpan for s in [*o.spans, *r.spans])
    otlp = sorted((Path("/work/shared/corpus") / "otlp-json").glob("*.json"))[:1] or sorted((ROOT / "tests").rglob("*otlp*.json"))[:1]
    if otlp:
        slow, fast, _ = _both(good, otlp[0])
        assert fast == slow


def test_process_fallbacks_give_the_same_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    orig, rep = _bench_pair(tmp_path, 1500, 20)
    want = _shape(diff_traces(read_trace(orig), read_replay(rep)))
    # No second process allowed, then fork failing, then the child failing: the caller parses the file itself.
    assert _shape(diff_traces(*read_pair(orig, rep, index_min_bytes=0, processes=False))) == want

    def no_fork() -> int:
        raise OSError("fork refused")

    with monkeypatch.context() as m:
        m.setattr(os, "fork", no_fork)
        assert _shape(diff_traces(*read_pair(orig, rep, index_min_bytes=0))) == want
    if native_index.can_fork():
        parent = os.getpid()
        real = native_index._parse_records

        def failing_in_child(src: Any, progress: Any = None, known: Any = None) -> Any:
            if os.getpid() != parent:
                raise MemoryError("child out of memory")
            return real(src, progress, known)

        with monkeypatch.context() as m:
            m.setattr(native_index, "_parse_records", failing_in_child)
            assert _shape(diff_traces(*read_pair(orig, rep, index_min_bytes=0))) == want
        started: list[int] = []
        real_fork = native_index.fork_parse

        def counting(src: Any, prelude: Any = None) -> Any:
            started.append(1)
            return real_fork(src, prelude)

        with monkeypatch.context() as m:
            m.setattr(native_index, "fork_parse", counting)
            assert _shape(diff_traces(*read_pair(orig, rep, index_min_bytes=0))) == want
        assert started == [1]


def test_dumps_trace_of_lazy_spans_writes_their_payloads(tmp_path: Path) -> None:
    orig, _ = _bench_pair(tmp_path, 300, 10)
    lazy, _ = read_pair(orig, orig, index_min_bytes=0)
    eager = read_trace(orig)
    assert dumps_trace(lazy.header, lazy.spans) == dumps_trace(eager.header, eager.spans)


def _line(seq: int, kind: str, section: dict[str, Any], **over: Any) -> bytes:
    obj = {"span_id": f"s{seq}", "parent_id": "s0" if seq else None, "seq": seq, "kind": kind, "name": f"{kind} {seq}",
           "start_ns": seq, "end_ns": seq + 1, "status": "ok", "error_type": None, kind: section, **over}
    return orjson.dumps(obj)


def test_payload_signatures_never_hide_a_difference(tmp_path: Path) -> None:
    """Signed bytes are taken from the line as written: nested keys named like the section's, key order,
    1 against 1.0, a section key after the outputs: each pair is diffed as the current path diffs it."""
    root = {"input": {"q": 1}, "output": None}
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"tool_name": "t", "arguments": {"output": 1}, "output": {"a": 1}, "output_truncated": False},
         {"tool_name": "t", "arguments": {"output": 1}, "output": {"a": 2}, "output_truncated": False}),
        ({"tool_name": "t", "arguments": {}, "output": {"output": 1, "x": 1}, "output_truncated": False},
         {"tool_name": "t", "arguments": {}, "output": {"output": 1, "x": 2}, "output_truncated": False}),
        ({"tool_name": "t", "arguments": {}, "output": {"a": 1, "b": 2}, "call_id": "c1"},
         {"tool_name": "t", "arguments": {}, "output": {"b": 2, "a": 1}, "call_id": "c2"}),
        ({"tool_name": "t", "arguments": {}, "output": 1, "mode": "live"},
         {"tool_name": "t", "arguments": {}, "output": 1.0, "mode": "replay"}),
        ({"tool_name": "t", "arguments": {}, "output": "x", "output_truncated": False, "mode": "live"},
         {"tool_name": "t", "arguments": {}, "output": "x", "output_truncated": True, "mode": "replay"}),
        ({"output": "same", "tool_name": "t", "arguments": {}}, {"tool_name": "t", "arguments": {}, "output": "same"}),
        ({"tool_name": "t", "arguments": {}, "output": {"k": ',"output_truncated":'}, "output_truncated": False},
         {"tool_name": "t", "arguments": {}, "output": {"k": ',"output_truncated":'}, "output_truncated": False}),
    ]
    llm = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "output": {"content": "a"},
           "finish_reason": "stop", "usage": {"in": 1}, "response_id": "r1"}
    llm2 = {**llm, "output": {"content": "b"}, "response_id": "r2"}
    llm3 = {**llm, "usage": {"in": 2}, "response_id": "r3"}
    orig = [b'{"schema":"tracetui/1","run_id":"o"}', _line(0, "agent", root)]
    rep = [b'{"schema":"tracetui/1","run_id":"r"}', _line(0, "agent", root)]
    seq = 1
    for a, b in [*cases, (llm, llm2), (llm, llm3)]:
        kind = "llm" if "model" in a else "tool"
        orig.append(_line(seq, kind, a))
        rep.append(_line(seq, kind, b))
        seq += 1
    o = _write(tmp_path / "o.jsonl", orig)
    r = _write(tmp_path / "r.jsonl", rep)
    slow, fast, _ = _both(o, r)
    assert fast == slow
    rows = {v[1] for v in fast[1]}
    assert rows == {1, 2, 5, 8}  # the outputs that differ (1 and 1.0 are equal outputs; key order is not a change)


def test_signature_layouts_off_the_writers_shape_are_still_exact(tmp_path: Path) -> None:
    """Sections first or not last, a container before the section, nested keys named like the section:
    the signature falls back to serialising the fields; the diff is the current path's."""
    base = {"tool_name": "t", "arguments": {"tool": {"output": 1}}, "output": {"a": 1}, "output_truncated": False}
    changed = {**base, "output": {"a": 2}}

    def line(seq: int, section: dict[str, Any], order: str) -> bytes:
        common = {"span_id": f"s{seq}", "parent_id": "s0", "seq": seq, "kind": "tool", "name": "tool t",
                  "start_ns": 1, "end_ns": 2, "status": "ok", "error_type": None}
        if order == "first":
            obj = {"tool": section, **common}
        elif order == "attrs-after":
            obj = {**common, "tool": section, "attributes": {"x": 1}}
        elif order == "type-before":
            obj = {"type": {"tool": {"output": {"a": 1}}}, **common, "tool": section}
        else:
            obj = {**common, "tool": section}
        return orjson.dumps(obj)

    root = _line(0, "agent", {"input": None, "output": None})
    orig = [b'{"schema":"tracetui/1"}', root]
    rep = [b'{"schema":"tracetui/1"}', root]
    seq = 1
    for order in ("first", "attrs-after", "type-before", "plain"):
        for a, b in ((base, base), (base, changed)):
            orig.append(line(seq, a, order))
            rep.append(line(seq, b, order))
            seq += 1
    slow, fast, _ = _both(_write(tmp_path / "o.jsonl", orig), _write(tmp_path / "r.jsonl", rep))
    assert fast == slow
    assert [v[1] for v in fast[1]] == [2, 4, 6, 8]


def test_content_not_captured_is_reported_as_read_trace_does(tmp_path: Path) -> None:
    """The loader's per-span content flag gives the same ``content_issues`` warnings, payloads unread."""
    root = _line(0, "agent", {"input": None, "output": None})
    lines = [b'{"schema":"tracetui/1"}', root,
             _line(1, "tool", {"tool_name": "t", "arguments": None, "output": None}),
             _line(2, "tool", {"tool_name": "t", "arguments": {"a": 1}, "output": None}),
             _line(3, "llm", {"model": "m", "messages": [], "output": None}),
             _line(4, "llm", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
             _line(5, "llm", {"model": "m", "messages": [{"role": "user", "content": ""}], "output": {"content": "x"}})]
    path = _write(tmp_path / "o.jsonl", lines)
    slow, fast, (o, _) = _both(path, path)
    assert fast == slow
    said = [i.message.split(":")[0] for i in o.issues]
    assert said == ["1 of 3 llm span(s) carry no messages or output", "1 of 2 tool span(s) carry no arguments or output"]

