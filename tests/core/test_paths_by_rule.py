"""The fast paths against expectations written from the rule, not from the slow path (issue 25, statement 9).

tests/core/test_early.py and test_fastload.py compare the early look and the index loader with ``diff_traces``
of the pair read whole, test_watch_incremental.py the watch mode's incremental engine with its full path: a bug
in code both share passes there. Here one built pair has its divergences
known in advance (docs/format.md's comparison policy), and each path must find exactly those.

The pair: an agent root over 400 ``lookup`` tool calls. The replay changes call 150's output (the first
divergence: ``output_mismatch`` on ``tool.output.v``), writes call 200 with status ``unset`` for ``ok``
(equal by the rule: no divergence), gives call 250 an integer ``1.0``-for-``1`` argument (a JSON type change:
``args_mismatch``), and leaves the rest byte-equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder, write_pair

from tracetui.core.diff import diff_traces
from tracetui.core.diff.compare import DivergenceType
from tracetui.core.load import read_pair
from tracetui.core.load.early import early_diff
from tracetui.core.readers import read_trace
from tracetui.core.readers.lazyspan import LazySpan, PayloadFile
from tracetui.core.watch import LiveDiff, TailReader
from tracetui.core.watch.incremental import Engine

T = DivergenceType
N = 400


def _build(t: TraceBuilder, side: str) -> None:
    root = t.add("agent", "support", input={"q": "orders"}, output={"n": N})
    for i in range(N):
        args: dict[str, Any] = {"id": i, "n": 1}
        out: dict[str, Any] = {"v": i, "text": "x" * 40}
        status = "ok"
        if side == "replay":
            if i == 150:
                out = {**out, "v": -1}
            if i == 200:
                status = "unset"
            if i == 250:
                args = {"id": i, "n": 1.0}
        t.add("tool", "lookup", parent=root, arguments=args, output=out, status=status, effect="read")


def _expected(d: Any) -> None:
    """The divergences the rule gives for this pair, whatever path computed ``d``."""
    got = [(v.type, v.original.seq if v.original else None, [(f.path, f.original, f.replay) for f in v.fields])
           for v in d.divergences]
    assert got == [(T.OUTPUT_MISMATCH, 151, [("tool.output.v", 150, -1)]),
                   (T.ARGS_MISMATCH, 251, [("tool.arguments.n", 1, 1.0)])]
    assert d.first is d.divergences[0] and d.first.original.span_id == "o151"


def test_the_whole_diff_finds_the_divergences_the_rule_gives(tmp_path: Path) -> None:
    from tracetui.core.readers import read_replay, read_trace

    o, r = write_pair(tmp_path, _build)
    _expected(diff_traces(read_trace(o), read_replay(r)))


def test_the_index_loader_finds_them_and_reads_only_the_payloads_it_must(tmp_path: Path) -> None:
    o, r = write_pair(tmp_path, _build)
    pair = read_pair(o, r, index_min_bytes=0)
    spans = [*pair[0].spans, *pair[1].spans]
    assert all(type(s) is LazySpan for s in spans)
    d = diff_traces(*pair)
    _expected(d)
    loaded = {s.span_id for s in spans if s.loaded}  # type: ignore[attr-defined]
    # Equal keys and equal payload signatures settle the other 398 pairs unread; call 200 (ok vs unset) among them.
    assert "o201" not in loaded and "r201" not in loaded
    assert len(loaded) <= 12, sorted(loaded)


def test_the_early_look_finds_the_first_divergence_the_rule_gives(tmp_path: Path) -> None:
    o, r = write_pair(tmp_path, _build)
    osrc, rsrc = PayloadFile(o), PayloadFile(r)
    got = early_diff(osrc, rsrc, stream=None, max_share=1.0)
    assert got is not None and got.partial
    first = got.first
    assert first is not None and first.type is T.OUTPUT_MISMATCH and first.original.span_id == "o151"
    assert [(f.path, f.original, f.replay) for f in first.fields] == [("tool.output.v", 150, -1)]
    # The rows before it are equivalent pairs, the ok/unset call too when the early rows reach it.
    assert got.divergent_rows[0] == first.row
    rows_200 = [k for k, row in enumerate(got.rows) if row.original is not None
                and got.original.spans[row.original].span_id == "o201"]
    assert all(got.row_divergence[k] is None for k in rows_200)


@pytest.mark.parametrize("order", ["file", "writer"])
def test_the_incremental_watch_finds_them_as_the_replay_is_written(tmp_path: Path, order: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``LiveDiff``'s incremental engine (the watch mode's default) against the rule at each step, not against
    its full path: with calls 0..k-1 written, the divergences are those of the written calls only (call 150's
    output once k > 150, call 250's argument type once k > 250; call 200's ok/unset never), the rows of calls
    k.. are pending, and in the writer's order (a span when it ends: the calls, then the root) the root's row
    is a placeholder until the root is written."""
    o, r = write_pair(tmp_path, _build)
    original = read_trace(o)
    header, root, *calls = Path(r).read_bytes().splitlines(keepends=True)
    rp = tmp_path / "live.jsonl"
    answered: list[bool] = []  # each step answered by the incremental engine, not handed to the full path
    real = Engine.update
    monkeypatch.setattr(Engine, "update", lambda self, *a: answered.append((out := real(self, *a)) is not None) or out)
    reader, live = TailReader(rp), LiveDiff(original, incremental=True)
    steps = 0
    with rp.open("wb") as fh:
        fh.write(header if order == "writer" else header + root)
        done = 0
        for k in (1, 100, 151, 200, 201, 250, 251, 399, N):
            fh.write(b"".join(calls[done:k]))
            fh.flush()
            done = k
            d = live.update(reader.poll(), path=str(rp))
            want = [(T.OUTPUT_MISMATCH, "o151", [("tool.output.v", 150, -1)])] if k > 150 else []
            want += [(T.ARGS_MISMATCH, "o251", [("tool.arguments.n", 1, 1.0)])] if k > 250 else []
            got = [(v.type, v.original.span_id, [(f.path, f.original, f.replay) for f in v.fields])
                   for v in d.divergences]
            assert got == want, k
            assert (d.first is not None and d.first.original.span_id == "o151") is (k > 150), k
            pending = {original.spans[d.rows[n].original].span_id for n in d.pending}
            assert pending == {f"o{i + 1}" for i in range(k, N)}, k
            placeholders = {original.spans[d.rows[n].original].span_id for n in d.placeholder_rows}
            assert placeholders == ({"o0"} if order == "writer" else set()), k
            assert len(d.rows) == N + 1 and not d.final, k
            steps += 1
        if order == "writer":
            fh.write(root)
    d = live.update(reader.poll(), path=str(rp), final=True)
    _expected(d)
    assert d.final and not d.pending and not d.placeholder_rows and steps == 9 and answered == [True] * 9
