"""The watcher's core: the tail reader of a growing tracetui/1 file, and the diff whose rows stay put."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from tracetui.core.diff import diff_traces
from tracetui.core.harness.writer import TraceWriter
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers import read_trace
from tracetui.core.readers.native import dumps_trace
from tracetui.core.watch import PLACEHOLDER, LiveDiff, TailReader

ROOT = Path(__file__).resolve().parents[2]
SCHED = ROOT / "sample_runs" / "scheduling"


def _span(sid: str, parent: str | None, seq: int, name: str, args: dict | None = None) -> Span:
    if parent is None:
        return Span(sid, None, seq, SpanKind.AGENT, "invoke_agent bot", 1, 2, Status.OK, None, {"input": "x"})
    return Span(sid, parent, seq, SpanKind.TOOL, name, 1, 2, Status.OK, None,
                {"tool_name": name, "arguments": args or {}, "output": "ok"})


def _key(d: object) -> tuple:
    return (d.original.span_id if d.original else None, d.replay.span_id if d.replay else None, d.type, d.fields)


def test_missing_then_empty_file_is_waiting(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    reader = TailReader(p)
    assert reader.poll().state == "waiting"
    p.write_bytes(b"")
    assert reader.poll().state == "waiting"


def test_torn_line_waits_for_its_end(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    lines = dumps_trace({"run_id": "r"}, [_span("a", None, 0, ""), _span("b", "a", 1, "t")]).splitlines(keepends=True)
    reader = TailReader(p)
    with p.open("wb") as fh:
        fh.write(lines[0] + lines[1])
        fh.write(lines[2][:20])
        fh.flush()
        snap = reader.poll()
        assert [s.span_id for s in snap.spans] == ["a"]
        assert snap.torn and snap.issues == []  # held back silently: not an issue, not a span
        fh.write(lines[2][20:])
        fh.flush()
        snap = reader.poll()
    assert [s.span_id for s in snap.spans] == ["a", "b"] and not snap.torn and snap.issues == []
    assert snap.spans[1].line == 3
    assert not reader.poll().changed


def test_crlf_and_bad_line_become_issues_not_exceptions(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    body = dumps_trace({"run_id": "r"}, [_span("a", None, 0, ""), _span("b", "a", 1, "t")]).replace(b"\n", b"\r\n")
    head, first, second = body.splitlines(keepends=True)
    p.write_bytes(head + first + b"{not json\r\n")
    reader = TailReader(p)
    snap = reader.poll()
    assert [s.span_id for s in snap.spans] == ["a"]
    assert [(i.line, i.severity) for i in snap.issues] == [(3, "skipped")]
    with p.open("ab") as fh:
        fh.write(second)
    snap = reader.poll()
    assert [s.span_id for s in snap.spans] == ["a", "b"] and snap.spans[1].line == 4


def test_header_rewritten_in_place_then_compacted(tmp_path: Path) -> None:
    """Our writer: padded header, spans children first, header completed in place, atomic compaction."""
    p = tmp_path / "r.jsonl"
    reader = TailReader(p)
    w = TraceWriter(str(p))
    w.header({"run_id": "r1"})
    snap = reader.poll()
    assert snap.state == "following" and snap.header["run_id"] == "r1" and snap.spans == []
    w.span(_span("b", "a", 1, "t"))
    ino = os.stat(p).st_ino
    snap = reader.poll()
    assert [s.span_id for s in snap.spans] == ["b"]
    w.span(_span("a", None, 0, ""))
    assert w.complete_header({"run_id": "r1", "redaction": {"fired": {}}})
    snap = reader.poll()
    assert snap.header["redaction"] == {"fired": {}} and len(snap.spans) == 2 and not snap.replaced
    w.close()
    assert os.stat(p).st_ino != ino
    snap = reader.poll()
    assert snap.replaced and snap.state == "complete"
    assert [s.span_id for s in snap.spans] == ["b", "a"] and snap.header["redaction"] == {"fired": {}}


def test_truncated_file_is_read_again(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(dumps_trace({"run_id": "r"}, [_span("a", None, 0, ""), _span("b", "a", 1, "t")]))
    reader = TailReader(p)
    assert len(reader.poll().spans) == 2
    p.write_bytes(dumps_trace({"run_id": "r"}, [_span("a", None, 0, "")]))  # same inode, shorter
    snap = reader.poll()
    assert snap.replaced and [s.span_id for s in snap.spans] == ["a"]


def test_other_format_is_read_whole_again(tmp_path: Path) -> None:
    src = ROOT / "tests" / "tui" / "data" / "original.jsonl"
    trace = read_trace(src)
    p = tmp_path / "r.otlp.json"
    from tracetui.core.readers import sniff_format

    # Any non-native file: fall back to a full read; a half-written document keeps the last read.
    other = next((f for f in (ROOT / "tests" / "data").rglob("*.json") if sniff_format(f.read_bytes()[:65536]) == "otlp-json"), None) \
        if (ROOT / "tests" / "data").exists() else None
    if other is None:
        pytest.skip("no OTLP/JSON sample")
    data = other.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    reader = TailReader(p)
    assert reader.poll().state == "waiting"
    p.write_bytes(data)
    snap = reader.poll()
    assert snap.state == "following" and snap.spans and snap.format == "otlp-json"
    assert trace.spans  # the import above is real data


def _stream(tmp_path: Path, original_spans: list[Span], replay_spans: list[Span], *, order: list[int]):
    """Write the replay span by span (file order ``order``); yield each LiveTraceDiff."""
    op = tmp_path / "o.jsonl"
    op.write_bytes(dumps_trace({"run_id": "o"}, original_spans))
    original = read_trace(op)
    rp = tmp_path / "r.jsonl"
    reader, live = TailReader(rp), LiveDiff(original)
    w = TraceWriter(str(rp))
    w.header({"run_id": "r"})
    out = [live.update(reader.poll(), path=str(rp))]
    for i in order:
        w.span(replay_spans[i])
        out.append(live.update(reader.poll(), path=str(rp)))
    w.close()
    out.append(live.update(reader.poll(), path=str(rp), final=True))
    return original, rp, out


def _identity(d, row: int) -> tuple:
    r = d.rows[row]
    return (d.original.spans[r.original].span_id if r.original is not None else None,
            d.replay.spans[r.replay].span_id if r.replay is not None else None)


def test_children_before_parent_rows_never_move_and_final_agrees(tmp_path: Path) -> None:
    """The writer's order (a span when it ends: root last). Each row keeps its index; the original's
    skeleton is filled in; the end agrees with diff_traces of the final files."""
    orig = [_span("o0", None, 0, ""), _span("o1", "o0", 1, "search", {"q": 1}), _span("o2", "o0", 2, "book", {"d": 1}),
            _span("o3", "o0", 3, "email")]
    rep = [_span("r0", None, 0, ""), _span("r1", "r0", 1, "search", {"q": 1}), _span("r2", "r0", 2, "book", {"d": 2}),
           _span("r3", "r0", 3, "refund"), _span("r4", "r0", 4, "email")]
    original, rp, diffs = _stream(tmp_path, orig, rep, order=[1, 2, 3, 4, 0])
    first_rows = len(diffs[0].rows)
    assert first_rows == 4 and diffs[0].divergences == [] and diffs[0].pending == frozenset({0, 1, 2, 3})
    for prev, cur in zip(diffs[:-1], diffs[1:], strict=True):
        assert len(cur.rows) >= len(prev.rows) and not cur.relaid
        for row in range(len(prev.rows)):
            # a row's original side never changes; a replay span, once shown paired, stays in its row
            assert cur.rows[row].original == prev.rows[row].original
    # Before the root is written, the children already pair with the original's children (placeholder root).
    after_one = diffs[1]
    assert _identity(after_one, 1) == ("o1", "r1") and after_one.divergences == []
    assert 0 in after_one.placeholder_rows
    assert after_one.replay.spans[after_one.rows[0].replay].attributes[PLACEHOLDER] is True
    assert 2 in after_one.pending and after_one.row_divergence[2] is None
    # The extra call is appended at the end, never inserted.
    assert _identity(diffs[3], 4) == (None, "r3")
    final = diffs[-1]
    ref = diff_traces(original, read_trace(rp))
    assert sorted(map(_key, final.divergences), key=str) == sorted(map(_key, ref.divergences), key=str)
    assert _key(final.first) == _key(ref.first)
    assert {_identity(final, n) for n in range(len(final.rows))} == {_identity(ref, n) for n in range(len(ref.rows))}


def test_sample_pair_streamed_in_file_order_agrees(tmp_path: Path) -> None:
    original = read_trace(SCHED / "original.jsonl")
    lines = (SCHED / "replay.jsonl").read_bytes().splitlines(keepends=True)
    rp = tmp_path / "r.jsonl"
    reader, live = TailReader(rp), LiveDiff(original)
    shown: list[tuple] = []
    with rp.open("wb") as fh:
        for line in lines:
            fh.write(line[:7])  # a torn write, then its end
            fh.flush()
            d = live.update(reader.poll(), path=str(rp))
            fh.write(line[7:])
            fh.flush()
            d = live.update(reader.poll(), path=str(rp))
            now = [_identity(d, n) for n in range(len(d.rows))]
            assert not d.relaid and len(now) >= len(shown)
            assert [o for o, _ in now[: len(shown)]] == [o for o, _ in shown]  # no row moved
            shown = now
    final = live.update(reader.poll(), path=str(rp), final=True)
    ref = diff_traces(original, read_trace(SCHED / "replay.jsonl"))
    assert sorted(map(_key, final.divergences), key=str) == sorted(map(_key, ref.divergences), key=str)
    assert _key(final.first) == _key(ref.first)


def test_replay_only_row_that_pairs_later_relays_out(tmp_path: Path) -> None:
    """The one case rows must move: a span shown as replay-only pairs with an original span later."""
    orig = [_span("o0", None, 0, ""), _span("oa", "o0", 1, "a"), _span("ob", "o0", 2, "b", {"x": 1})]
    rep = [_span("r0", None, 0, ""), _span("rb", "r0", 1, "b", {"x": 1})]
    op, rp = tmp_path / "o.jsonl", tmp_path / "r.jsonl"
    op.write_bytes(dumps_trace({}, orig))
    original = read_trace(op)
    live = LiveDiff(original)
    # A replay file that first holds an unrelated span, then is replaced by the real run.
    rp.write_bytes(dumps_trace({}, [_span("rz", None, 0, ""), _span("zz", "rz", 1, "zzz")]))
    reader = TailReader(rp)
    d = live.update(reader.poll(), path=str(rp))
    assert any(_identity(d, n) == (None, "zz") for n in range(len(d.rows)))
    tmp = tmp_path / "new"
    tmp.write_bytes(dumps_trace({}, rep))
    os.replace(tmp, rp)
    snap = reader.poll()
    assert snap.replaced
    d = live.update(snap, path=str(rp))
    assert d.relaid and all(_identity(d, n)[1] != "zz" for n in range(len(d.rows)))


def test_rows_not_compared_are_exactly_the_pending_and_placeholder_rows(tmp_path: Path) -> None:
    """Each update compares only the rows it shows a verdict for (pending rows and placeholders are not
    compared: ~3x faster early in a run); every other row has diff_traces' divergence for the same spans."""
    original = read_trace(SCHED / "original.jsonl")
    lines = (SCHED / "replay.jsonl").read_bytes().splitlines(keepends=True)
    rp = tmp_path / "r.jsonl"
    reader, live = TailReader(rp), LiveDiff(original)
    checked = 0
    with rp.open("wb") as fh:
        for line in [*lines[:1], *reversed(lines[1:])]:  # children before parents: placeholders appear
            fh.write(line)
            fh.flush()
            d = live.update(reader.poll(), path=str(rp))
            ref = diff_traces(original, d.replay)
            want = {_identity(ref, n): (v.type, v.fields) for n, v in enumerate(ref.row_divergence) if v is not None}
            for n in range(len(d.rows)):
                got = d.row_divergence[n]
                if n in d.pending or n in d.placeholder_rows:
                    assert got is None
                    continue
                assert ((got.type, got.fields) if got is not None else None) == want.get(_identity(d, n)), n
                checked += 1
    assert checked > 20


def _post_order(lines: list[bytes]) -> list[bytes]:
    """Span lines in the writer's order: a span when it ends, children before their parent."""
    objs = [orjson.loads(line) for line in lines]
    kids: dict[str | None, list[int]] = {}
    for i, o in enumerate(objs):
        kids.setdefault(o["parent_id"], []).append(i)
    out: list[int] = []

    def visit(i: int) -> None:
        for k in kids.get(objs[i]["span_id"], []):
            visit(k)
        out.append(i)

    for r in kids.get(None, []):
        visit(r)
    return [lines[i] for i in out]


@pytest.mark.parametrize("incremental", [True, False], ids=["incremental", "full"])
def test_the_writers_order_pairs_mid_run_as_the_file_order_does(tmp_path: Path, incremental: bool) -> None:
    """Written children first (a span when it ends), a run's spans must pair with the original's where they
    are, not with its last spans of the same name. Before the fix every written session paired with the
    original's last one while the root was open: thousands of missing and extra rows mid-run (the
    open sessions' placeholders sorted before the written sessions, and the common-suffix rule of the
    alignment paired those). Now the open spans nest as one chain named as the original names them:
    mid-run, the writer's order shows what the file order shows at the same point."""
    from tests.builders import generated_pair

    orig, rep = generated_pair(tmp_path, 2000, 10, 3)
    original = read_trace(orig)
    lines = rep.read_bytes().splitlines(keepends=True)
    header, spans = lines[0], _post_order(lines[1:])
    final_ref = diff_traces(original, read_trace(rep))
    rp = tmp_path / "live.jsonl"
    reader, live = TailReader(rp), LiveDiff(original, incremental=incremental)
    checked = 0
    with rp.open("wb") as fh:
        fh.write(header)
        done = 0
        for upto in (150, 600, 1200, 1900, len(spans) - 1):
            fh.write(b"".join(spans[done:upto]))
            fh.flush()
            done = upto
            d = live.update(reader.poll(), path=str(rp))
            assert len(d.rows) <= len(final_ref.rows) + 1, upto  # no run of extra rows
            assert len(d.divergences) <= len(final_ref.divergences), upto
            if upto < len(spans) - 1:
                assert d.pending, upto  # what the replay has not reached is pending, not missing
            root_kids = [n for n, r in enumerate(d.rows) if r.depth == 1]
            first = d.rows[root_kids[0]]
            assert first.original is not None and first.replay is not None  # the first session pairs with the first
            assert d.replay.spans[first.replay].span_id == final_ref.replay.spans[final_ref.rows[root_kids[0]].replay].span_id
            for n in d.placeholder_rows:  # placeholders stand where the original's open spans are
                r = d.rows[n]
                assert r.original is not None and d.row_divergence[n] is None
                assert d.replay.spans[r.replay].name in (original.spans[r.original].name,
                                                         f"{original.spans[r.original].name} (not written yet)")
            checked += 1
        fh.write(spans[-1])
    final = live.update(reader.poll(), path=str(rp), final=True)
    assert sorted(map(_key, final.divergences), key=str) == sorted(map(_key, final_ref.divergences), key=str)
    assert checked == 5


def test_placeholder_plan_nests_the_open_spans_and_names_them_from_the_original() -> None:
    from tracetui.core.watch.common import ROOT_PLACEHOLDER, child_types as _child_types, placeholder_plan

    def agent(sid: str, parent: str | None, seq: int, name: str) -> Span:
        return Span(sid, parent, seq, SpanKind.AGENT, name, None, None, Status.OK, None, {}, {})

    # run -> session -> step -> tool calls (the shape of an agent with sub-steps)
    original = [agent("o0", None, 0, "run"), agent("o1", "o0", 1, "session"), agent("o2", "o1", 2, "step"),
                _span("o3", "o2", 3, "search"), agent("o4", "o0", 4, "session"), agent("o5", "o4", 5, "step"),
                _span("o6", "o5", 6, "search")]
    root, types = original[0], _child_types(original)
    tool = (SpanKind.TOOL, "search")
    # Open: the root (a session written below it), a session (a step written), a step (a call written).
    plan = placeholder_plan({"r": 1, "s": 4, "t": 6}, {"r": (SpanKind.AGENT, "session"),
                                                       "s": (SpanKind.AGENT, "step"), "t": tool}, root, types)
    assert plan == [("r", None, 1, SpanKind.AGENT, "run (not written yet)"), ("s", "r", 4, SpanKind.AGENT, "session"),
                    ("t", "s", 6, SpanKind.AGENT, "step")]
    # Nothing written below the root yet: the open session is not the root; the root gets its own placeholder.
    plan = placeholder_plan({"s": 2, "t": 3}, {"s": (SpanKind.AGENT, "step"), "t": tool}, root, types)
    assert [p[:3] for p in plan] == [(ROOT_PLACEHOLDER, None, 2), ("s", ROOT_PLACEHOLDER, 2), ("t", "s", 3)]
    assert [p[4] for p in plan] == ["run (not written yet)", "session", "step"]
    # A first child the original never has below such a span: no guess.
    plan = placeholder_plan({"r": 1, "x": 2}, {"r": (SpanKind.AGENT, "session"), "x": (SpanKind.TOOL, "zzz")},
                            root, types)
    assert plan[1] == ("x", "r", 2, SpanKind.AGENT, "(not written yet)")
    assert placeholder_plan({"x": 3}, {"x": tool}, None, types) == [("x", None, 3, SpanKind.AGENT, "(not written yet)")]
