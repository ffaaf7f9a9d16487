"""The early first divergence (``core.early``): the first rows of a big pair, read before the rest.

Every test compares against ``diff_traces`` of the pair read whole: the early rows must be its first
rows, the early first divergence its first divergence, and anything the early path cannot prove must
give None (the caller then waits for the whole diff).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.builders import TraceBuilder, generated_pair, write_pair
from tracetui.core.load import early, structure
from tracetui.core.diff import TraceDiff, diff_traces
from tracetui.core.load.early import EarlyTraceDiff, agrees, early_diff
from tracetui.core.readers.lazyspan import LazySpan, PayloadFile
from tracetui.core.load import native_index, read_pair
from tracetui.core.readers import read_replay, read_trace

ROOT = Path(__file__).resolve().parents[2]


_generated = generated_pair


def _early(original: Path | str, replay: Path | str, *, stream: bool, cut: int = 0, **kw: Any) -> EarlyTraceDiff | None:
    osrc, rsrc = PayloadFile(str(original)), PayloadFile(str(replay))
    child = early.start_stream(osrc, rsrc, cut=cut) if stream else None
    try:
        return early_diff(osrc, rsrc, stream=child, **kw)
    finally:
        if child is not None:
            child.cancel()


def _whole(original: Path | str, replay: Path | str) -> TraceDiff:
    return diff_traces(read_trace(str(original)), read_replay(str(replay)))


def _assert_same_start(got: EarlyTraceDiff, whole: TraceDiff) -> None:
    """The early rows are the whole diff's first rows, with the same per-row divergences and first divergence."""
    assert got.partial and not whole.partial
    assert agrees(got, whole)
    n = len(got.rows)
    assert n <= len(whole.rows)
    for k in range(n):
        a, b = got.row_divergence[k], whole.row_divergence[k]
        assert (a.type, a.fields) == (b.type, b.fields) if a is not None and b is not None else a is b, k
    assert got.divergent_rows == [k for k in whole.divergent_rows if k < n]
    assert got.first is not None and whole.first is not None
    assert got.first.row == whole.first.row and got.first.order == whole.first.order
    assert all(type(s) is LazySpan for s in [*got.original.spans, *got.replay.spans])
    for side in ("original", "replay"):  # the spans themselves (their data read from their byte range), line numbers too
        early_spans, whole_spans = getattr(got, side).spans, getattr(whole, side).spans
        for row, wrow in zip(got.rows, whole.rows):
            i, j = getattr(row, side), getattr(wrow, side)
            if i is not None:
                a, b = early_spans[i], whole_spans[j]
                assert a == b and a.line == b.line, (side, a.line, b.line)


def _early_starts_the_whole(original: Path | str, replay: Path | str, **kw: Any) -> TraceDiff:
    """Run the early look (here, no share limit unless given) and check it against the whole diff, returned."""
    kw.setdefault("stream", False)
    kw.setdefault("max_share", 1.0)
    got = _early(original, replay, **kw)
    whole = _whole(original, replay)
    assert got is not None
    _assert_same_start(got, whole)
    return whole


@pytest.mark.parametrize("stream", [False, True], ids=["here", "child"])
@pytest.mark.parametrize(("n", "edits", "seed"), [(3000, 10, 3), (3000, 300, 3), (3000, 1, 5), (2000, 3, 7), (1500, 30, 11)])
def test_early_rows_are_the_first_rows_of_the_whole_diff(tmp_path: Path, n: int, edits: int, seed: int, stream: bool) -> None:
    orig, rep = _generated(tmp_path, n, edits, seed)
    got = _early(orig, rep, stream=stream, max_share=1.0)
    assert got is not None
    whole = _whole(orig, rep)
    _assert_same_start(got, whole)
    # The walk stopped soon after the first divergence event: context rows, not the whole pair.
    assert len(got.rows) <= whole.first.row + early.EARLY_CONTEXT + 1  # type: ignore[union-attr]
    assert got.spans_total == (len(whole.original.spans), len(whole.replay.spans))


def _tracetui_pairs() -> list[tuple[Path, Path]]:
    roots = [ROOT / "sample_runs", ROOT / "tests", Path("/work/shared/corpus")]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            for p in sorted(root.rglob("*.jsonl")):
                try:
                    head = p.read_bytes()[:200]
                except OSError:
                    continue
                if b'"schema":"tracetui/' in head:
                    files.append(p)
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        by_dir.setdefault(f.parent, []).append(f)
    return [(a, b) for group in by_dir.values() for a in group for b in group if a != b]


def test_early_agrees_with_the_whole_diff_on_every_recorded_pair() -> None:
    """Real files of the samples, tests and corpus, each against the others of its folder: whenever the early
    path answers, it is the whole diff's start; it answers on most of them (the test is not vacuous)."""
    pairs = _tracetui_pairs()
    if not pairs:
        pytest.skip("no tracetui/1 pairs")
    answered = 0
    for a, b in pairs:
        got = _early(a, b, stream=False, max_share=1.0)
        if got is None:
            continue
        answered += 1
        _assert_same_start(got, _whole(a, b))
    assert answered >= min(3, len(pairs)), (answered, len(pairs))


def _tool(t: TraceBuilder, parent: str, name: str, args: dict[str, Any], output: Any = "ok") -> str:
    return t.add("tool", f"execute_tool {name}", parent=parent, tool_name=name, arguments=args, output=output)


@pytest.mark.parametrize("inner", [True, False], ids=["divergence-inside", "only-the-wrapper"])
def test_a_root_that_wraps_the_run_is_placed_at_its_end(tmp_path: Path, inner: bool) -> None:
    """An HTTP server span around the original's agent (the replay harness has none): one-sided, but its
    divergence goes after its subtree (diff._is_wrapper); the first divergence is inside it when there is one."""
    def build(t: TraceBuilder, side: str) -> None:
        top = t.add("other", "POST /chat") if side == "original" else None
        agent = t.add("agent", "invoke_agent support", parent=top)
        for k in range(4):
            arg = k if not (inner and side == "replay" and k == 2) else 99
            _tool(t, agent, "lookup", {"k": arg})

    o, r = write_pair(tmp_path, build)
    whole = _early_starts_the_whole(o, r)
    assert whole.first is not None and (whole.first.row != 0) is inner


def test_a_one_sided_root_without_paired_rows_below_is_first_at_its_start(tmp_path: Path) -> None:
    def build(t: TraceBuilder, side: str) -> None:
        agent = t.add("agent", "invoke_agent support")
        _tool(t, agent, "lookup", {"k": 1})
        if side == "original":
            lone = t.add("other", "background job")
            _tool(t, lone, "cleanup", {"all": True})

    o, r = write_pair(tmp_path, build)
    whole = _early_starts_the_whole(o, r)
    assert whole.first is not None and whole.first.original is not None
    assert whole.first.original.name == "background job"


@pytest.mark.parametrize("later_input", [True, False], ids=["child-input-first", "parent-output-first"])
def test_output_divergences_wait_for_the_end_of_their_subtree(tmp_path: Path, later_input: bool) -> None:
    """A parent's output differs (an end event) and, maybe, a later child's arguments (a start event, earlier
    in execution order than the parent's end): the first divergence is the child's when there is one."""
    def build(t: TraceBuilder, side: str) -> None:
        agent = t.add("agent", "invoke_agent support", input={"q": 1}, output={"a": side})
        sub = t.add("agent", "planner", parent=agent, input={"q": 1}, output={"plan": 1})
        _tool(t, sub, "lookup", {"k": 1})
        _tool(t, agent, "lookup", {"k": 2 if later_input and side == "replay" else 1})
        _tool(t, agent, "lookup", {"k": 3})

    o, r = write_pair(tmp_path, build)
    whole = _early_starts_the_whole(o, r)
    assert whole.first is not None
    assert whole.first.type.value == ("args_mismatch" if later_input else "output_mismatch")


def _lines(tmp_path: Path) -> tuple[list[bytes], Path]:
    orig, rep = _generated(tmp_path, 600, 10, 3)
    return orig.read_bytes().splitlines(), rep


def _write(path: Path, lines: list[bytes], end: bytes = b"\n") -> Path:
    path.write_bytes(b"\n".join(lines) + end)
    return path


def _edit_span(line: bytes, **over: Any) -> bytes:
    obj = orjson.loads(line)
    obj.update(over)
    return orjson.dumps(obj)


@pytest.mark.parametrize("damage", ["no-final-newline", "unknown-key", "duplicate-id", "seq-down", "escaped-id",
                                    "second-run", "parent-later", "no-header", "not-exact"])
def test_what_it_cannot_prove_gives_none(tmp_path: Path, damage: str) -> None:
    """Each file shape off the writer's layout, near the start (where the walk reads): no early answer,
    and the whole read still loads the pair (the caller waits for it)."""
    lines, rep = _lines(tmp_path)
    end = b"\n"
    if damage == "no-final-newline":
        end = b""
    elif damage == "unknown-key":
        lines[3] = _edit_span(lines[3], extra_field=1)  # the careful path reads it (into attributes)
    elif damage == "duplicate-id":
        lines[5] = _edit_span(lines[5], span_id=orjson.loads(lines[4])["span_id"])
    elif damage == "seq-down":
        lines[5] = _edit_span(lines[5], seq=0)
    elif damage == "escaped-id":
        lines[3] = lines[3].replace(b'"span_id":"', b'"span_id":"\\u0041', 1)
    elif damage == "second-run":
        lines.insert(len(lines) // 2, lines[0])
    elif damage == "parent-later":
        lines[3] = _edit_span(lines[3], parent_id=orjson.loads(lines[9])["span_id"])
    elif damage == "no-header":
        lines = lines[1:]
    elif damage == "not-exact":
        lines[3] = lines[3].replace(b'"status":', b'"status" :', 1)
    orig = _write(tmp_path / "damaged.jsonl", lines, end)
    assert _early(orig, rep, stream=False, max_share=1.0) is None
    if native_index.can_fork():
        assert _early(orig, rep, stream=True, max_share=1.0) is None
    if damage != "no-header":  # (a file without it is not recognised as tracetui/1 at all)
        read_pair(str(orig), str(rep), index_min_bytes=0)  # loads (with its issues), no exception


def _line_start(data: bytes, k: int) -> int:
    """The byte where line ``k`` (0-based) starts."""
    return sum(len(line) + 1 for line in data.split(b"\n")[:k])


@pytest.mark.skipif(not native_index.can_fork(), reason="needs fork")
@pytest.mark.parametrize("where", ["after-the-header", "middle", "last-line", "end"])
def test_the_original_scan_split_with_the_child_gives_the_same_rows(tmp_path: Path, where: str) -> None:
    """With a child, the original's scan is shared (``structure.Meet``: from the start here, from the cut in
    the child, joined); wherever the cut falls, the early rows are the whole diff's first rows."""
    orig, rep = _generated(tmp_path, 2000, 10, 3)
    data = orig.read_bytes()
    n = data.count(b"\n")
    k = {"after-the-header": 1, "middle": n // 2, "last-line": n - 1, "end": n}[where]
    _early_starts_the_whole(orig, rep, stream=True, cut=_line_start(data, k))


def test_the_cut_is_chosen_ahead_of_the_scan_from_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Meet.choose`` (in the child, once the replay is scanned): a line start ``APP_SHARE`` into what the scan
    from the start has not reached; the file's end when little is left; a cut fixed beforehand is kept."""
    orig, _ = _generated(tmp_path, 2000, 10, 3)
    data = orig.read_bytes()
    src = PayloadFile(str(orig))
    meet = structure.Meet()
    meet.reached(len(data) - 1000)
    assert meet.choose(src) == len(data)  # less than _MEET_MIN left: all of it here
    monkeypatch.setattr(structure, "_MEET_MIN", 0)
    meet = structure.Meet()
    meet.reached(1000)
    cut = meet.choose(src)
    assert cut == meet.cut() and data[cut - 1:cut] == b"\n"
    assert 1000 + (len(data) - 1000) * structure.APP_SHARE <= cut < 1000 + (len(data) - 1000) * structure.APP_SHARE + 50_000
    fixed = structure.Meet(_line_start(data, 7))
    assert fixed.choose(src) == _line_start(data, 7)


def test_a_cut_the_scan_from_the_start_has_passed_is_ignored(tmp_path: Path) -> None:
    """If the child's cut comes after this side's scan went past it, this side scans to the end alone: its
    structure is the one scan's, and it says it stopped at the file's end (the child's part is then unused)."""
    orig, _ = _generated(tmp_path, 3000, 10, 3)
    data = orig.read_bytes()
    assert len(data) > 2 * structure._SCAN_CHUNK  # several reads

    class Late(structure.Meet):
        calls = 0

        def cut(self) -> int:
            self.calls += 1
            return 0 if self.calls == 1 else _line_start(data, 2)  # set after the first read

    src = PayloadFile(str(orig))
    head = structure.scan_head(src, None, Late())
    assert head[4] == len(data)
    whole = structure.scan_or_give_up(src)
    assert head[0].parents == whole.parents and list(head[0].offsets) == list(whole.offsets)
    on_time = structure.scan_head(src, None, structure.Meet(_line_start(data, 1500)))
    assert on_time[4] == _line_start(data, 1500) and len(on_time[0].parents) == 1500 - 1


@pytest.mark.skipif(not native_index.can_fork(), reason="needs fork")
@pytest.mark.parametrize("damage", ["duplicate-of-first-part", "seq-down", "parent-later", "not-a-span-head", "none"])
def test_the_part_scanned_in_the_child_is_checked_as_one_scan(tmp_path: Path, damage: str) -> None:
    """A line just after the cut that one scan would refuse (a duplicate id of a line before the cut, seq
    going down across it, a parent later in the file, a line off the writer's head): no early answer.
    Undamaged, the same cut gives the whole diff's first rows."""
    lines, rep = _lines(tmp_path)
    k = len(lines) // 2
    if damage == "duplicate-of-first-part":
        lines[k] = _edit_span(lines[k], span_id=orjson.loads(lines[3])["span_id"])
    elif damage == "seq-down":
        lines[k] = _edit_span(lines[k], seq=1)
    elif damage == "parent-later":
        lines[k] = _edit_span(lines[k], parent_id=orjson.loads(lines[k + 5])["span_id"])
    elif damage == "not-a-span-head":
        lines[k] = b'{"parent_id":null,' + lines[k][1:].replace(b'"parent_id":null,', b"", 1)
    orig = _write(tmp_path / "damaged.jsonl", lines)
    got = _early(orig, rep, stream=True, cut=_line_start(orig.read_bytes(), k), max_share=1.0)
    if damage == "none":
        assert got is not None
        _assert_same_start(got, _whole(orig, rep))
    else:
        assert got is None
        assert _early(orig, rep, stream=False, max_share=1.0) is None  # one scan here refuses it too


def test_a_damaged_line_the_walk_never_reads_leaves_the_answer_right(tmp_path: Path) -> None:
    """Lines after the stop are not parsed early: one damaged there (skipped by the whole read) does not
    change the first rows, and ``agrees`` confirms it once the pair is read whole."""
    orig, rep = _generated(tmp_path, 3000, 10, 3)
    lines = orig.read_bytes().splitlines()
    lines[-5] = lines[-5][:-20] + b"###"  # a torn leaf near the end
    damaged = _write(tmp_path / "damaged.jsonl", lines)
    _early_starts_the_whole(damaged, rep)


def test_no_divergence_within_the_share_gives_none(tmp_path: Path) -> None:
    orig, _ = _generated(tmp_path, 1000, 10, 3)
    assert _early(orig, orig, stream=False, max_share=0.2) is None  # the same file twice: no divergence at all
    got = _early(orig, orig, stream=False, max_share=1.0)
    assert got is None  # read to the end, still none: the whole diff says "no divergence"


def test_agrees_refuses_another_pair(tmp_path: Path) -> None:
    orig, rep = _generated(tmp_path / "a", 1500, 10, 3)
    other_o, other_r = _generated(tmp_path / "b", 1500, 10, 5)
    got = _early(orig, rep, stream=False, max_share=1.0)
    assert got is not None
    assert agrees(got, _whole(orig, rep))
    assert not agrees(got, _whole(other_o, other_r))


def test_read_pair_calls_early_before_the_whole_pair_and_reads_the_same_pair(tmp_path: Path) -> None:
    orig, rep = _generated(tmp_path, 3000, 10, 3)
    seen: list[EarlyTraceDiff] = []
    pair = read_pair(str(orig), str(rep), index_min_bytes=0, early=seen.append)
    whole = diff_traces(*pair)
    assert len(seen) == 1
    _assert_same_start(seen[0], whole)
    plain = _whole(orig, rep)
    assert [(r.original, r.replay, r.depth) for r in whole.rows] == [(r.original, r.replay, r.depth) for r in plain.rows]
    assert [(d.row, d.type, d.fields) for d in whole.divergences] == [(d.row, d.type, d.fields) for d in plain.divergences]
    assert pair[0].spans == plain.original.spans and pair[1].spans == plain.replay.spans
    # The original's spans parsed early are the very objects of the whole read (not parsed twice).
    first_rows = {id(s) for s in seen[0].original.spans}
    assert first_rows <= {id(s) for s in pair[0].spans}


def test_read_pair_gives_no_early_answer_when_a_run_is_picked(tmp_path: Path) -> None:
    orig, rep = _generated(tmp_path, 1500, 10, 3)
    run = orjson.loads(orig.read_bytes().split(b"\n", 1)[0])["run_id"]
    seen: list[Any] = []
    read_pair(f"{orig}#{run}", str(rep), index_min_bytes=0, early=seen.append)
    read_pair(str(orig), str(rep), index_min_bytes=0, early=seen.append, trace_id=run)
    assert seen == []
    read_pair(str(orig), str(rep), index_min_bytes=10**12, early=seen.append)  # small files: read whole
    assert seen == []


@pytest.mark.parametrize("key", ["parent_id", "seq", "span_id"])
def test_a_replay_line_with_a_structural_key_written_twice_gives_none(tmp_path: Path, key: str) -> None:
    """The scan takes the head's value, the reader the last one (careful path): the child's span for that
    line is not the scan's, so no early answer — here or from the child (a held-out tester's case)."""
    orig, rep = _generated(tmp_path, 3000, 10, 3)
    lines = rep.read_bytes().splitlines()
    value = {"parent_id": orjson.loads(lines[2])["span_id"], "seq": 3, "span_id": "zzz"}[key]
    lines[40] = lines[40][:-1] + b"," + orjson.dumps({key: value})[1:]
    damaged = _write(tmp_path / "damaged.jsonl", lines)
    for stream in (False, True):
        assert _early(orig, damaged, stream=stream, max_share=1.0) is None


def test_a_late_line_moved_under_an_early_parent_is_caught_by_agrees(tmp_path: Path) -> None:
    """The one case the early path cannot see (a line it never parses whose parent_id, written twice, names
    an early span): its answer differs from the whole read, and ``agrees`` says so (the TUI lays the rows out
    again and says why)."""
    orig, rep = _generated(tmp_path, 3000, 10, 3)
    lines = orig.read_bytes().splitlines()
    early_parent = orjson.loads(lines[3])["span_id"]
    lines[-3] = lines[-3][:-1] + b"," + orjson.dumps({"parent_id": early_parent})[1:]
    damaged = _write(tmp_path / "damaged.jsonl", lines)
    got = _early(damaged, rep, stream=False, max_share=1.0)
    whole = _whole(damaged, rep)
    assert got is not None and not agrees(got, whole)
