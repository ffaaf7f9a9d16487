"""A big OTLP/JSON replay read whole in a forked child (``core.load.read_child``), its spans adopted here.

The rule: the ``Trace`` handed over is the one ``read_replay`` / ``read_trace`` gives in this process (every
span field, payloads, ``seq``, line, header, issues), its payloads still in the file (decoded here on first
use, checked against the file); anything the child cannot vouch for (another file behind the path, an error in
the file, a killed child) gives None and the caller reads the file itself, reporting as the reader does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.otlp_helpers import corpus_otlp_documents
from tracetui.core.errors import ReadError, SourceChanged
from tracetui.core.load import read_pair, start_pair
from tracetui.core.load import read_child as read_child_mod
from tracetui.core.load.read_child import ReadChild
from tracetui.core.model import Trace
from tracetui.core.readers import read_replay, read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otlp import OtlpJsonReader

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                                reason="needs fork and two cores")


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of any size are read in two passes with spans kept as byte ranges, as big ones are."""
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The benchmarks' OTLP pair (``bench_otlp.ensure_otlp_pair``), 1,500 spans a run, 10 edits."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_otlp import ensure_otlp_pair
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return ensure_otlp_pair(tmp_path_factory.mktemp("otlp_pair"), 1500, 10, 7)


def _assert_same(got: Trace, want: Trace) -> None:
    assert (got.path, got.format, got.trace_id, got.trace_ids, got.header) == \
        (want.path, want.format, want.trace_id, want.trace_ids, want.header)
    assert [str(i) for i in got.issues] == [str(i) for i in want.issues]
    assert len(got.spans) == len(want.spans)
    for a, b in zip(got.spans, want.spans):
        assert (a.seq, a.line) == (b.seq, b.line), a.span_id
        assert a == b, a.span_id  # every field, the payload decoded


def _jsonl(path: Path, out: Path) -> Path:
    """The document as Collector JSON Lines, 40 spans a line, last batch first."""
    doc = json.loads(path.read_bytes())
    rs = doc["resourceSpans"][0]
    spans = rs["scopeSpans"][0]["spans"]
    batches = [spans[k:k + 40] for k in range(0, len(spans), 40)][::-1]
    out.write_text("".join(json.dumps({"resourceSpans": [{**rs, "scopeSpans": [{**rs["scopeSpans"][0], "spans": b}]}]})
                           + "\n" for b in batches))
    return out


def test_the_replay_read_in_a_child_is_the_replay_read_here(generated: tuple[Path, Path], tmp_path: Path) -> None:
    """Generated pair (one document and JSON Lines), the sample OTLP runs and the corpus's OTLP documents: the
    child's trace equals this process's read; the spans arrive with their payloads still in the file."""
    files = [*generated, _jsonl(generated[1], tmp_path / "replay.jsonl"),
             ROOT / "sample_runs/order_lookup/original.otlp.json", ROOT / "sample_runs/order_lookup/replay.otlp.json",
             *corpus_otlp_documents(tmp_path)]
    kept = 0
    for f in files:
        child = ReadChild(str(f), replay=True)
        got = child.result()
        assert got is not None, f
        assert child.pid is None  # reaped
        kept += sum(type(s) is LazySpan and not s.loaded for s in got.spans)
        _assert_same(got, read_replay(str(f)))
    assert kept > 3000  # the generated runs' spans came as byte ranges, not decoded payloads


def test_the_original_side_and_a_run_picked_by_id(generated: tuple[Path, Path], tmp_path: Path) -> None:
    """``replay=False`` is ``read_trace``; a run asked for by id in a file of two runs is the one picked here."""
    orig, rep = generated
    got = ReadChild(str(orig), replay=False).result()
    assert got is not None
    _assert_same(got, read_trace(str(orig)))
    both = tmp_path / "both.jsonl"
    both.write_bytes(orig.read_bytes().strip() + b"\n" + rep.read_bytes().strip() + b"\n")
    want = read_replay(str(both), replay_trace_id=read_trace(str(rep)).trace_id)
    got = ReadChild(str(both), replay=True, replay_trace_id=want.trace_id).result()
    assert got is not None and got.trace_id == want.trace_id != read_trace(str(both)).trace_id
    _assert_same(got, want)


def test_another_file_behind_the_path_gives_none(generated: tuple[Path, Path], tmp_path: Path) -> None:
    """The path replaced (rename) between this process's open and the child's read: the spans' byte ranges would
    be read from the old file, so nothing is adopted."""
    path = tmp_path / "replay.json"
    shutil.copy(generated[1], path)
    child = ReadChild(str(path), replay=True, gated=True)
    other = tmp_path / "other.json"
    shutil.copy(generated[0], other)
    os.replace(other, path)
    assert child.result() is None


def test_the_same_file_written_to_between_the_open_and_the_childs_read_gives_none(generated: tuple[Path, Path],
                                                                                tmp_path: Path) -> None:
    """Same inode, other bytes (a document rewritten in place with a span more at the end, as an exporter still
    writing would): the spans the child read are not those of the file this process opened, so nothing is
    adopted (the identity compared holds size and times, not only device and inode)."""
    path = tmp_path / "replay.json"
    shutil.copy(generated[1], path)
    child = ReadChild(str(path), replay=True, gated=True)
    with open(path, "ab") as fh:  # same inode, new size and times
        fh.write(b" \n")
    assert child.result() is None


def test_a_broken_file_gives_none_and_read_pair_reports_the_readers_error(generated: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_bytes(generated[1].read_bytes()[: generated[1].stat().st_size // 2])
    assert ReadChild(str(cut), replay=True).result() is None
    with pytest.raises(ReadError) as here:
        read_replay(str(cut))
    with pytest.raises(ReadError) as paired:
        read_pair(str(generated[0]), str(cut))
    assert str(paired.value) == str(here.value) and paired.value.side == "replay"  # type: ignore[attr-defined]


def test_a_killed_child_gives_none(generated: tuple[Path, Path]) -> None:
    child = ReadChild(str(generated[1]), replay=True, gated=True)
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    assert child.result() is None


def test_a_span_whose_bytes_changed_in_place_is_refused_on_first_read(generated: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    """Adopted spans read their payload from this process's descriptor and check it: the file rewritten in place
    after the read is a ``SourceChanged`` error, never another span's payload."""
    path = tmp_path / "replay.json"
    shutil.copy(generated[1], path)
    got = ReadChild(str(path), replay=True).result()
    assert got is not None
    data = bytearray(path.read_bytes())
    with open(path, "r+b") as fh:  # same inode: the bytes shifted by one
        fh.write(b" " + bytes(data[:-1]))
    with pytest.raises(SourceChanged):
        for s in got.spans:
            s.data  # noqa: B018


def test_read_pair_reads_the_replay_in_a_child(generated: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two big OTLP/JSON files: ``read_pair`` takes the replay from the child (and reads the original here); the
    runs are those ``read_trace``/``read_replay`` give; with an early look the child waits for it, then reads."""
    handed: list[Any] = []
    real = ReadChild.result

    def result(self: ReadChild) -> Trace | None:
        got = real(self)
        handed.append(got)
        return got

    monkeypatch.setattr(read_child_mod.ReadChild, "result", result)
    orig, rep = generated
    want_o, want_r = read_trace(str(orig)), read_replay(str(rep))
    for early in (None, []):
        handed.clear()
        got_o, got_r = read_pair(str(orig), str(rep), early=None if early is None else early.append)
        assert len(handed) == 1 and handed[0] is got_r
        _assert_same(got_o, want_o)
        _assert_same(got_r, want_r)


def test_a_started_pair_that_is_cancelled_leaves_no_child(generated: tuple[Path, Path]) -> None:
    """``start_pair`` (before the TUI import) forks the gated replay child with the early look's two; ``cancel``
    ends all three (killed and reaped)."""
    started = start_pair(str(generated[0]), str(generated[1]))
    child = started.child
    assert type(child) is ReadChild and child.pid is not None
    pids = [child.pid, *(c.pid for c in started.early_mod.children)]
    started.cancel()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_adopted_spans_keep_their_keys_and_signatures(generated: tuple[Path, Path]) -> None:
    """The diff of a pair whose replay came from the child decodes the payloads of the same few spans as the diff
    of the pair read here (only pairs whose payload signatures differ): the key fields and signatures computed in
    the child arrive with the spans."""
    from tracetui.core.diff import diff_traces

    orig, rep = generated
    here = diff_traces(read_trace(str(orig)), read_replay(str(rep)))
    child = ReadChild(str(rep), replay=True).result()
    assert child is not None
    there = diff_traces(read_trace(str(orig)), child)
    decoded = [sum(s.loaded for s in d.replay.spans) for d in (here, there)]
    assert decoded[0] == decoded[1] < len(child.spans) // 10, decoded
    assert [(r.original, r.replay) for r in there.rows] == [(r.original, r.replay) for r in here.rows]
    assert there.first is not None and here.first is not None
    assert (there.first.row, there.first.type) == (here.first.row, here.first.type)


def test_a_read_cancelled_while_the_child_reads_ends_without_reading_the_replay_here(
        generated: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI's read (``PairRead``) cancelled as the original's read starts here: the child, reading the replay
    meanwhile, is killed, and the read ends ``cancelled`` instead of reading the replay itself in this process."""
    from tracetui.core import readers
    from tracetui.core.load.pairread import PairRead

    read = PairRead(str(generated[0]), str(generated[1]))  # the children forked here (before the patches)
    here: list[str] = []
    real_trace, real_replay = readers.read_trace, readers.read_replay

    def read_trace_then_cancel(*a: Any, **kw: Any) -> Trace:
        read.cancel()  # the child, let go just before the original's read, is still reading the replay
        return real_trace(*a, **kw)

    def read_replay_here(*a: Any, **kw: Any) -> Trace:
        here.append(str(a[0]))
        return real_replay(*a, **kw)

    monkeypatch.setattr(readers, "read_trace", read_trace_then_cancel)
    monkeypatch.setattr(readers, "read_replay", read_replay_here)
    end = None
    for _ in range(240):
        ev = read.next_event(timeout=0.5)
        if ev is not None and ev[0] in ("done", "failed", "cancelled"):
            end = ev
            break
    assert here == []  # never read here
    # cancelled (the child killed mid-read); "done" only when the child had sent the whole replay in the moment
    # between being let go and being killed (a loaded machine)
    assert end is not None and end[0] in ("cancelled", "done")


def test_a_child_ends_with_the_process_that_forked_it(generated: tuple[Path, Path]) -> None:
    """A process that forks a gated read child and dies (``kill -9``: no cleanup runs) leaves no child behind,
    even while another process it forked after (as the early look's children are) still holds the gate open."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the process that dies
        try:
            os.close(r)
            child = ReadChild(str(generated[1]), replay=True, gated=True)
            holder = os.fork()
            if holder == 0:  # inherits the gate's open end
                time.sleep(30)
                os._exit(0)
            os.write(w, f"{child.pid} {holder}".encode())
            time.sleep(30)
        finally:
            os._exit(0)
    os.close(w)
    grandchild, holder = map(int, os.read(r, 64).split())
    os.close(r)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for _ in range(100):
            try:
                os.kill(grandchild, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"read child {grandchild} outlived its parent")
    finally:
        os.kill(holder, signal.SIGKILL)


def test_a_replay_from_a_fifo_is_read_as_before_not_waited_for(generated: tuple[Path, Path], tmp_path: Path) -> None:
    """A named pipe as the replay (``tracetui diff big.json <(...)``-style): never opened to size it up (that open
    took the writer, whose data the real read then waited for forever); the pair is read as one process reads it."""
    import subprocess
    import threading

    fifo = tmp_path / "replay.fifo"
    os.mkfifo(fifo)
    data = generated[1].read_bytes()

    def write() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    proc = subprocess.run([sys.executable, "-m", "tracetui", "diff", str(generated[0]), str(fifo), "--format",
                           "json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    writer.join(5)
    want = subprocess.run([sys.executable, "-m", "tracetui", "diff", str(generated[0]), str(generated[1]),
                           "--format", "json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == want.returncode == 1, proc.stderr
    got, expected = json.loads(proc.stdout), json.loads(want.stdout)
    assert got["divergences"] == expected["divergences"] and got["first_divergence"] == expected["first_divergence"]
