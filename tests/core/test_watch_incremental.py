"""The incremental ``LiveDiff.update`` gives, at every step, what the full path gives.

Two ``LiveDiff`` objects are fed the same snapshots, one incremental (the default), one with
``incremental=False`` (``_update_full``: clone everything, ``finish_spans``, ``diff_traces``, lay
every row out again). Every field of the two ``LiveTraceDiff`` objects must be equal at every step,
and so must the slots (``slot_identity``). Replays: the recorded pairs and generated ones (edits:
changed, inserted, deleted calls), written in the writer's order (a span when it ends: parents
after their children, placeholders), in file (seq) order, and shuffled; cut into batches at random
points, one span at a time, through a real ``TailReader`` with torn lines, a replaced file, and
``final=True`` at the end.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any, Iterable, Iterator

import pytest

from tests.builders import generated_pair
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers import read_trace
from tracetui.core.readers.native import dumps_trace
from tracetui.core.watch import LiveDiff, ReplaySnapshot, TailReader

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [ROOT / "sample_runs" / n for n in ("scheduling", "order_lookup", "subscription_pause")]


def _compare(inc: LiveDiff, full: LiveDiff, a: Any, b: Any, where: str) -> None:
    assert len(a.rows) == len(b.rows), where
    for n, (x, y) in enumerate(zip(a.rows, b.rows, strict=True)):
        assert (x.original, x.replay, x.depth) == (y.original, y.replay, y.depth), f"{where}: row {n}"
    assert a.replay.spans == b.replay.spans, where
    assert (a.replay.header, a.replay.path, a.replay.format, a.replay.trace_id, a.replay.issues) == \
        (b.replay.header, b.replay.path, b.replay.format, b.replay.trace_id, b.replay.issues), where
    assert a.divergences == b.divergences, where  # type, row (slot), both spans, fields, order; in order
    assert a.row_divergence == b.row_divergence, where
    assert a.divergent_rows == b.divergent_rows, where
    assert a.pending == b.pending, where
    assert a.placeholder_rows == b.placeholder_rows, where
    assert (a.relaid, a.final) == (b.relaid, b.final), where
    assert a.original is b.original
    assert [inc.slot_identity(n) for n in range(len(a.rows))] == [full.slot_identity(n) for n in range(len(b.rows))], where


def _feed(original: Any, snapshots: Iterable[tuple[ReplaySnapshot, bool]], path: str = "r.jsonl") -> int:
    """Feed both; compare at each step; the number of steps."""
    inc, full = LiveDiff(original), LiveDiff(original, incremental=False)
    steps = 0
    for snap, final in snapshots:
        a = inc.update(snap, path=path, final=final)
        b = full.update(snap, path=path, final=final)
        _compare(inc, full, a, b, f"step {steps} ({len(snap.spans)} spans, final={final})")
        steps += 1
    return steps


def _end_order(spans: list[Span]) -> list[Span]:
    """The writer's order: a span when it ends, a parent after its children (as scripts/watch_demo.py)."""
    return sorted(spans, key=lambda s: (s.end_ns or 0, -s.seq))


def _post_order(spans: list[Span]) -> list[Span]:
    """Children before parents by the tree itself (the generated runs' times do not nest)."""
    kids: dict[str | None, list[Span]] = {}
    ids = {s.span_id for s in spans}
    for s in spans:
        kids.setdefault(s.parent_id if s.parent_id in ids else None, []).append(s)
    out: list[Span] = []
    stack: list[tuple[Span, bool]] = [(s, False) for s in reversed(kids.get(None, []))]
    while stack:
        s, done = stack.pop()
        if done:
            out.append(s)
            continue
        stack.append((s, True))
        stack.extend((c, False) for c in reversed(kids.get(s.span_id, [])))
    return out


def _cuts(n: int, rnd: random.Random, how: str) -> list[int]:
    if how == "one":
        return list(range(n + 1))
    if how == "few":
        return sorted({0, n, *(rnd.randrange(n + 1) for _ in range(3))})
    return sorted({0, n, *(rnd.randrange(n + 1) for _ in range(max(2, n // 7)))})


def _snapshots(spans: list[Span], cuts: list[int], header: dict[str, Any]) -> Iterator[tuple[ReplaySnapshot, bool]]:
    """Snapshots as the reader gives them: one growing list of the same span objects, final at the end."""
    for k in cuts:
        yield ReplaySnapshot("following", header, spans[:k]), False
    yield ReplaySnapshot("complete", header, list(spans)), True


def _pairs() -> list[tuple[str, Path, Path]]:
    out = [(p.name, p / "original.jsonl", p / "replay.jsonl") for p in PAIRS]
    tui = ROOT / "tests" / "tui" / "data"
    out.append(("tui", tui / "original.jsonl", tui / "replay.jsonl"))
    out.append(("literal", tui / "literal_original.jsonl", tui / "literal_replay.jsonl"))
    return out


@pytest.mark.parametrize("order", ["writer", "post", "file", "shuffled"])
@pytest.mark.parametrize("how", ["one", "random", "few"])
@pytest.mark.parametrize("pair", _pairs(), ids=lambda p: p[0])
def test_recorded_pairs_every_split(pair: tuple[str, Path, Path], how: str, order: str) -> None:
    _, op, rp = pair
    original, replay = read_trace(op), read_trace(rp)
    rnd = random.Random(f"{pair[0]}-{how}-{order}")
    spans = {"writer": _end_order, "post": _post_order, "file": list,
             "shuffled": lambda s: rnd.sample(s, len(s))}[order](list(replay.spans))
    assert _feed(original, _snapshots(spans, _cuts(len(spans), rnd, how), replay.header)) >= 2


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, Any]]:
    folder = tmp_path_factory.mktemp("gen")
    out = []
    for n, edits, seed in ((300, 10, 1), (300, 60, 2), (200, 200, 3)):
        op, rp = generated_pair(folder, n, edits, seed)
        out.append((read_trace(op), read_trace(rp)))
    return out


@pytest.mark.parametrize("order", ["post", "file", "shuffled"])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_generated_pairs_with_edits(generated: list[tuple[Any, Any]], which: int, order: str) -> None:
    original, replay = generated[which]
    rnd = random.Random(which * 7 + len(order))
    spans = {"post": _post_order, "file": list, "shuffled": lambda s: rnd.sample(s, len(s))}[order](list(replay.spans))
    for how in ("random", "few"):
        _feed(original, _snapshots(spans, _cuts(len(spans), rnd, how), replay.header))
    if order == "post":  # one span at a time, the writer's order: placeholders come and go
        _feed(original, _snapshots(spans, list(range(len(spans) + 1)), replay.header))


def _span(sid: str, parent: str | None, seq: int, name: str, kind: SpanKind = SpanKind.TOOL, **data: Any) -> Span:
    data = data or ({"tool_name": name, "arguments": {"a": name}, "output": "ok"} if kind is SpanKind.TOOL else {"input": "x"})
    return Span(sid, parent, seq, kind, name, seq, seq + 1, Status.OK, None, data)


def test_replay_only_spans_parents_later_and_oddities() -> None:
    """Replay-only spans and subtrees, parents written late, a parent never written, then spans the
    incremental path leaves to the full one (a duplicate id, a parent after its child)."""
    orig = [_span("o0", None, 0, "agent", SpanKind.AGENT), _span("o1", "o0", 1, "search"),
            _span("o2", "o0", 2, "step", SpanKind.AGENT), _span("o3", "o2", 3, "book"), _span("o4", "o0", 4, "email")]
    from tracetui.core.model import Trace

    original = Trace(spans=orig, path="o")
    rep = [_span("r3", "r2", 3, "book"), _span("rx", "r2", 4, "refund"), _span("r1", "r0", 1, "search"),
           _span("ry", "ghost", 6, "lost"), _span("r2", "r0", 2, "step", SpanKind.AGENT),
           _span("rz", "rw", 8, "deep"), _span("rw", "r0", 7, "extra", SpanKind.AGENT),
           _span("r4", "r0", 5, "email"), _span("r0", None, 0, "agent", SpanKind.AGENT)]
    for cuts in (list(range(len(rep) + 1)), [0, 3, 5, 9], [0, 9]):
        _feed(original, _snapshots(rep, cuts, {}))
    odd = [*rep[:4], _span("r1", "r0", 9, "search"), *rep[4:]]  # a duplicate id: full path from there
    _feed(original, _snapshots(odd, list(range(len(odd) + 1)), {}))
    late = [_span("c", "p", 1, "child"), _span("p", None, 5, "late parent", SpanKind.AGENT)]  # parent's seq after
    _feed(original, _snapshots(late, [0, 1, 2], {}))


def test_through_the_reader_torn_lines_and_a_replaced_file(tmp_path: Path) -> None:
    """The real reader: torn writes, a file replaced by another run (rows laid out again), compaction."""
    original = read_trace(PAIRS[0] / "original.jsonl")
    replay = read_trace(PAIRS[0] / "replay.jsonl")
    other = read_trace(PAIRS[2] / "replay.jsonl")
    rp = tmp_path / "r.jsonl"
    reader = TailReader(rp)
    rnd = random.Random(5)

    def steps() -> Iterator[tuple[ReplaySnapshot, bool]]:
        body = dumps_trace({"run_id": "x"}, other.spans[:5]).splitlines(keepends=True)
        rp.write_bytes(b"".join(body))
        yield reader.poll(), False
        lines = dumps_trace(replay.header, _end_order(list(replay.spans))).splitlines(keepends=True)
        tmp = tmp_path / "new"
        tmp.write_bytes(lines[0])
        os.replace(tmp, rp)  # replaced: read again from scratch
        yield reader.poll(), False
        with rp.open("ab") as fh:
            for line in lines[1:]:
                cut = rnd.randrange(1, len(line))
                fh.write(line[:cut])
                fh.flush()
                yield reader.poll(), False
                fh.write(line[cut:])
                fh.flush()
                if rnd.random() < 0.6:
                    yield reader.poll(), False
        yield reader.poll(), False
        tmp.write_bytes(b"".join(lines))
        os.replace(tmp, rp)  # compacted
        yield reader.poll(), True

    assert _feed(original, steps(), str(rp)) > len(replay.spans)


def test_the_comparison_sees_a_difference() -> None:
    """The check is not vacuous: a diff with one row's depth changed is told apart."""
    original, replay = read_trace(PAIRS[0] / "original.jsonl"), read_trace(PAIRS[0] / "replay.jsonl")
    inc, full = LiveDiff(original), LiveDiff(original, incremental=False)
    snap = ReplaySnapshot("following", replay.header, list(replay.spans))
    a, b = inc.update(snap), full.update(snap)
    _compare(inc, full, a, b, "same")
    a.rows[3].depth += 1
    with pytest.raises(AssertionError):
        _compare(inc, full, a, b, "changed")
