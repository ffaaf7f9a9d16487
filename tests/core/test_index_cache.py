"""The index cache (``core.load.index_cache``): a big file's read kept for its next opening.

The rules: a second ``read_pair`` of the same files with the same arguments gives the same ``Trace``s (every
field, payloads decoded from the file on first use) without reading the files again; any change to a file (a
write, a ``touch``, a file renamed over it) or a damaged entry makes it read the file again; nothing is kept
when the cache is off, for a folder another user could write, or for small files; the folder stays under its
limit; payload signatures are the same in every process (what makes an entry usable by the next one).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tracetui.core import readers
from tracetui.core.diff import diff_traces
from tracetui.core.diff.compare import payload_sig
from tracetui.core.diff.report import diff_report
from tracetui.core.errors import ReadError
from tracetui.core.load import index_cache, keep_pair, read_pair, start_pair
from tracetui.core.load import native_index as ni
from tracetui.core.model import SpanKind, Trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otlp import OtlpJsonReader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cache on, in a folder of this test; files of any size cached and read as big ones are."""
    monkeypatch.setenv("TRACETUI_INDEX_CACHE", "1")
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(index_cache, "MIN_BYTES", 0)
    monkeypatch.setattr(index_cache, "RACY_NS", 0)  # files made by the test a moment ago are kept too
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    return tmp_path / "cache" / "index"


def _bench(name: str) -> Any:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def otlp_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The benchmarks' OTLP/JSON pair, 1,200 spans a run, 10 edits."""
    return _bench("bench_otlp").ensure_otlp_pair(tmp_path_factory.mktemp("otlp"), 1200, 10, 3)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def native_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The benchmarks' tracetui/1 pair, 1,200 spans a run, 10 edits."""
    orig, reps = _bench("bench_diff").ensure_data(tmp_path_factory.mktemp("native"), 1200, [10], 3)
    return orig, reps[10]


def _copy(pair: tuple[Path, Path], folder: Path) -> tuple[Path, Path]:
    """The pair copied (a test changes its files)."""
    folder.mkdir()
    out = []
    for p in pair:
        q = folder / p.name
        q.write_bytes(p.read_bytes())
        out.append(q)
    return out[0], out[1]


def _same(got: Trace, want: Trace) -> None:
    assert (got.path, got.format, got.trace_id, got.trace_ids, got.header) == \
        (want.path, want.format, want.trace_id, want.trace_ids, want.header)
    assert [str(i) for i in got.issues] == [str(i) for i in want.issues]
    assert [(a.seq, a.line) for a in got.spans] == [(b.seq, b.line) for b in want.spans]
    assert got.spans == want.spans  # every field, the payloads decoded


class _Reads:
    """Counts the files read (each reader entry ``read_pair`` can take), so a test can say none was."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for mod, name in ((readers, "read_trace"), (readers, "read_replay"), (ni, "parse_indexed")):
            real = getattr(mod, name)
            monkeypatch.setattr(mod, name, self._counted(name, real))

    def _counted(self, name: str, real: Any) -> Any:
        def counted(*a: Any, **k: Any) -> Any:
            self.calls.append(name)
            return real(*a, **k)
        return counted


@pytest.mark.parametrize("which", ["otlp", "native"])
def test_a_second_opening_gives_the_same_pair_without_reading_the_files(
        which: str, otlp_pair: tuple[Path, Path], native_pair: tuple[Path, Path], cache: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = otlp_pair if which == "otlp" else native_pair
    first = read_pair(a, b, index_min_bytes=0)
    assert len(list(cache.glob("*.idx"))) == 2  # one entry a side
    reads = _Reads(monkeypatch)
    again = read_pair(a, b, index_min_bytes=0)
    assert reads.calls == []  # neither file read again
    for t in again:  # payloads still in the file (a few OTLP spans were decoded by the read: the ties' order)
        assert all(type(s) is LazySpan for s in t.spans)
        assert sum(not s.loaded for s in t.spans) >= len(t.spans) - 5
    # the same diff, computed from the kept keys and signatures ...
    assert diff_report(diff_traces(*again)) == diff_report(diff_traces(*first))
    # ... and the same traces, payloads read from the file
    _same(again[0], first[0])
    _same(again[1], first[1])


def test_the_pair_read_without_the_cache_is_the_pair_read_with_it(otlp_pair: tuple[Path, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What a kept read gives is what read_trace / read_replay give (read_pair's own rule)."""
    read_pair(*otlp_pair)
    got = read_pair(*otlp_pair)
    _same(got[0], readers.read_trace(otlp_pair[0]))
    _same(got[1], readers.read_replay(otlp_pair[1]))


@pytest.mark.parametrize("change", ["appended", "touched", "replaced"])
def test_a_changed_file_is_read_again(change: str, native_pair: tuple[Path, Path], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _copy(native_pair, tmp_path / "pair")
    read_pair(a, b, index_min_bytes=0)
    if change == "appended":  # a span more at the end: the size changes
        last = b.read_bytes().splitlines()[-1]
        b.write_bytes(b.read_bytes() + last.replace(b'"span_id":"', b'"span_id":"x') + b"\n")
    elif change == "touched":  # same bytes, a new modification time
        st = b.stat()
        os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    else:  # another file renamed over it: another inode
        tmp = b.with_suffix(".new")
        tmp.write_bytes(b.read_bytes())
        os.replace(tmp, b)
    reads = _Reads(monkeypatch)
    got = read_pair(a, b, index_min_bytes=0)
    assert reads.calls == ["parse_indexed"]  # the replay read again; the original was kept
    want = readers.read_replay(b)
    assert len(got[1].spans) == len(want.spans) == len(readers.read_replay(native_pair[1]).spans) + \
        (change == "appended")
    _same(got[1], want)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_entry_is_a_miss_and_is_replaced(damage: str, otlp_pair: tuple[Path, Path], cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = read_pair(*otlp_pair)
    for e in cache.glob("*.idx"):
        blob = e.read_bytes()
        e.write_bytes({"truncated": blob[: len(blob) // 2], "garbage": b"\x80\x04garbage" * 10, "empty": b""}[damage])
    reads = _Reads(monkeypatch)
    got = read_pair(*otlp_pair)
    assert "read_trace" in reads.calls  # read again (the replay in a child: not counted here), no error
    _same(got[0], first[0])
    assert all(e.stat().st_size > 1000 for e in cache.glob("*.idx"))  # made again
    reads.calls.clear()
    read_pair(*otlp_pair)
    assert reads.calls == []


def test_nothing_is_kept_when_the_cache_is_off(otlp_pair: tuple[Path, Path], cache: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_INDEX_CACHE", "0")
    read_pair(*otlp_pair)
    assert not cache.exists()


def test_small_files_are_not_kept(otlp_pair: tuple[Path, Path], cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_cache, "MIN_BYTES", max(p.stat().st_size for p in otlp_pair) + 1)
    read_pair(*otlp_pair)
    assert list(cache.glob("*.idx")) == []


def test_a_folder_others_may_write_is_never_read_or_written(otlp_pair: tuple[Path, Path], cache: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    read_pair(*otlp_pair)
    os.chmod(cache, 0o777)  # entries are pickles: a folder someone else may write could hold anything
    try:
        reads = _Reads(monkeypatch)
        read_pair(*otlp_pair)
        assert "read_trace" in reads.calls
        assert index_cache.load(index_cache.Side(str(otlp_pair[0]), False, None, None, None)) is None
    finally:
        os.chmod(cache, 0o700)


def test_each_run_choice_has_an_entry_of_its_own(native_pair: tuple[Path, Path], cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = native_pair
    tid = readers.read_trace(a).trace_id
    read_pair(a, b, index_min_bytes=0)
    reads = _Reads(monkeypatch)
    got = read_pair(a, b, index_min_bytes=0, trace_id=tid)
    assert "parse_indexed" in reads.calls  # not the entries of the other arguments (the replay: in a child)
    assert got[0].trace_id == tid
    assert len(list(cache.glob("*.idx"))) == 4


def test_one_side_kept_the_other_read_alone_with_its_errors_named(native_pair: tuple[Path, Path], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = native_pair
    read_pair(a, b, index_min_bytes=0)
    reads = _Reads(monkeypatch)
    other = _copy(native_pair, tmp_path / "other")[1]
    got = read_pair(a, other, index_min_bytes=0)
    assert reads.calls == ["parse_indexed"]
    _same(got[1], readers.read_replay(other))
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"")
    with pytest.raises(ReadError) as err:
        read_pair(a, cut, index_min_bytes=0)
    assert err.value.side == "replay"  # type: ignore[attr-defined]


def test_start_pair_forks_nothing_when_both_sides_are_kept(otlp_pair: tuple[Path, Path]) -> None:
    read_pair(*otlp_pair)
    started = start_pair(*otlp_pair)
    try:
        assert started.child is None and started.early_mod is None
        assert started.cached is not None and None not in started.cached
    finally:
        started.cancel()
    got = read_pair(*otlp_pair, started=started, early=lambda _found: None)
    _same(got[0], readers.read_trace(otlp_pair[0]))


def test_the_folder_is_kept_under_its_limit_the_entries_used_longest_ago_going_first(
        otlp_pair: tuple[Path, Path], native_pair: tuple[Path, Path], cache: Path) -> None:
    read_pair(*native_pair, index_min_bytes=0)
    old = sorted(cache.glob("*.idx"))
    then = time.time_ns() - 3600 * 10**9
    for i, e in enumerate(old):
        os.utime(e, ns=(then + i, then + i))  # used an hour ago: old[0] first
    read_pair(*otlp_pair)
    sizes = {e: e.stat().st_size for e in cache.glob("*.idx")}
    new = set(sizes) - set(old)
    assert len(old) == len(new) == 2
    index_cache._prune(cache, limit=sum(sizes[e] for e in new) + sizes[old[1]])
    assert set(cache.glob("*.idx")) == new | {old[1]}
    index_cache._prune(cache, limit=sum(sizes[e] for e in new))
    assert set(cache.glob("*.idx")) == new


def test_payload_signatures_are_the_same_in_every_process() -> None:
    """An entry made by one process is read by the next: signatures cannot be Python's per-process ``hash``."""
    data = {"tool_name": "lookup", "arguments": {"id": 7}, "output": {"rows": [1, 2, 3]}, "status": "ok"}
    code = ("from tracetui.core.diff.compare import payload_sig; from tracetui.core.model import SpanKind; "
            f"print(payload_sig(SpanKind.TOOL, {data!r}))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip() for seed in ("1", "2")}
    assert outs == {str(payload_sig(SpanKind.TOOL, data))}


def test_tracetui_diff_run_twice_gives_the_same_report_the_second_time_from_the_cache(
        otlp_pair: tuple[Path, Path], cache: Path, tmp_path: Path) -> None:
    """Two real ``tracetui diff`` processes: the same JSON report; the first one left the entries."""
    env = {**os.environ, "TRACETUI_INDEX_CACHE": "1", "TRACETUI_CACHE_DIR": str(cache.parent),
           "PYTHONPATH": str(ROOT)}
    a, b = _copy(otlp_pair, tmp_path / "big")
    old = time.time_ns() - 10 * 10**9
    for p in (a, b):  # big enough for the real threshold (the process does not see this test's patches) ...
        with open(p, "ab") as fh:
            fh.write(b" " * (4 * 2**20))
        os.utime(p, ns=(old, old))  # ... and written long enough ago (RACY_NS)
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-m", "tracetui", "diff", str(a), str(b), "--format", "json"],
                           capture_output=True, env=env, cwd=tmp_path)
        assert p.returncode == 1, p.stderr.decode()
        outs.append(p.stdout)
        if not list(cache.glob("*.idx")):
            pytest.fail("the first process kept nothing")
    assert outs[0] == outs[1]
    assert len(list(cache.glob("*.idx"))) == 2


def test_keep_false_writes_nothing_and_keep_pair_keeps_it_later(native_pair: tuple[Path, Path], cache: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``tracetui diff`` and the TUI do: read, show, then keep (the user does not wait for the entry)."""
    pair = read_pair(*native_pair, index_min_bytes=0, keep=False)
    assert not cache.exists() or list(cache.glob("*.idx")) == []
    keep_pair(*native_pair, pair)
    entries = {e: e.stat().st_ino for e in cache.glob("*.idx")}  # a new entry is a new file (renamed in)
    assert len(entries) == 2
    again = read_pair(*native_pair, index_min_bytes=0, keep=False)
    keep_pair(*native_pair, again)  # kept already: not written again
    assert {e: e.stat().st_ino for e in cache.glob("*.idx")} == entries
    reads = _Reads(monkeypatch)
    read_pair(*native_pair, index_min_bytes=0)
    assert reads.calls == []


def test_the_tui_read_keeps_the_pair_once_it_is_handed_over(otlp_pair: tuple[Path, Path], cache: Path) -> None:
    from tracetui.core.load.pairread import PairRead

    read = PairRead(*otlp_pair)
    end = None
    while end is None or end[0] not in ("done", "failed", "cancelled"):
        end = read.next_event(timeout=60)
    assert end[0] == "done"
    read._thread.join(60)
    assert len(list(cache.glob("*.idx"))) == 2
    again = PairRead(*otlp_pair)
    assert again._started.cached is not None and None not in again._started.cached  # no child forked
    again.cancel()


def test_a_killed_writers_temporary_file_after_an_hour_and_an_entry_unused_for_a_month_are_removed(native_pair: tuple[Path, Path],
                                                                           cache: Path) -> None:
    read_pair(*native_pair, index_min_bytes=0)
    old, fresh = cache / ".tmp-old.idx", cache / ".tmp-fresh.idx"
    for f in (old, fresh):
        f.write_bytes(b"x")
    os.utime(old, ns=(0, 0))
    unused = sorted(cache.glob("[!.]*.idx"))[0]
    month = time.time_ns() - 31 * 86400 * 10**9
    os.utime(unused, ns=(month, month))  # not used for 31 days
    index_cache._prune(cache)
    assert not old.exists() and fresh.exists()  # the fresh one may be another process's entry being written
    assert not unused.exists() and len(list(cache.glob("[!.]*.idx"))) == 1


def test_an_entry_made_by_other_reader_code_is_not_used(native_pair: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install whose readers changed (another digest of core's sources) reads the files again."""
    read_pair(*native_pair, index_min_bytes=0)
    monkeypatch.setattr(index_cache, "_code_stamp", lambda: "another-code")
    reads = _Reads(monkeypatch)
    read_pair(*native_pair, index_min_bytes=0)
    assert "parse_indexed" in reads.calls


def test_the_code_digest_follows_the_core_sources(tmp_path: Path) -> None:
    """Same sources, same digest (an entry is found again); one file's time changed, another digest."""
    first = index_cache._code_stamp.__wrapped__()
    assert first == index_cache._code_stamp.__wrapped__() and len(first) == 16
    f = Path(index_cache.__file__).resolve().parent / "channel.py"
    st = f.stat()
    try:
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
        assert index_cache._code_stamp.__wrapped__() != first
    finally:
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert index_cache._code_stamp.__wrapped__() == first


def test_with_an_early_look_asked_one_kept_side_alone_is_not_taken(native_pair: tuple[Path, Path], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI with a new replay of a kept original: the early look (both files read at once, the first divergence
    before either is whole) is sooner than the kept original plus the replay read alone."""
    a, b = native_pair
    read_pair(a, b, index_min_bytes=0)
    other = _copy(native_pair, tmp_path / "other")[1]
    seen: list[Any] = []
    reads = _Reads(monkeypatch)
    loads: list[Any] = []
    real_load = index_cache.load
    monkeypatch.setattr(index_cache, "load", lambda side: loads.append(side) or real_load(side))
    assert index_cache.holds(index_cache.Side(str(a), False, None, None, None))
    assert not index_cache.holds(index_cache.Side(str(other), True, None, None, None))
    got = read_pair(a, other, index_min_bytes=0, early=seen.append)
    assert loads == []  # the kept side not even loaded: it would not be taken
    assert reads.calls.count("parse_indexed") >= 1 and seen  # read as without the cache: early rows shown
    _same(got[0], readers.read_trace(a))
    reads.calls.clear()
    read_pair(a, other, index_min_bytes=0, early=seen.append)  # both kept now: neither read
    assert reads.calls == []


def test_a_file_written_between_its_read_and_the_keep_is_not_kept(native_pair: tuple[Path, Path], tmp_path: Path,
                                                                  cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent still appending to its trace while it is diffed: what was read is not the file any more, so it
    is not kept (an entry holding the old spans under the new identity would be used from then on)."""
    a, b = _copy(native_pair, tmp_path / "pair")
    pair = read_pair(a, b, index_min_bytes=0, keep=False)
    last = a.read_bytes().splitlines()[-1]
    with open(a, "ab") as fh:  # the file grows after the read, before the keep
        fh.write(last.replace(b'"span_id":"', b'"span_id":"late') + b"\n")
    keep_pair(a, b, pair)
    assert len(list(cache.glob("*.idx"))) == 1  # the replay only
    reads = _Reads(monkeypatch)
    got = read_pair(a, b, index_min_bytes=0)
    assert "parse_indexed" in reads.calls  # the original read again
    _same(got[0], readers.read_trace(a))
    assert len(got[0].spans) == len(pair[0].spans) + 1


def test_a_file_modified_just_before_its_read_is_kept_only_by_a_later_opening(
        native_pair: tuple[Path, Path], tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git's racy case: on a filesystem whose times tick once a second, a same-size write later in the second of
    the read would not change the identity; a file written less than RACY_NS before its read is not kept."""
    monkeypatch.setattr(index_cache, "RACY_NS", 2 * 10**9)
    a, b = _copy(native_pair, tmp_path / "pair")  # written now
    read_pair(a, b, index_min_bytes=0)
    assert list(cache.glob("*.idx")) == []
    old = time.time_ns() - 10 * 10**9
    for f in (a, b):
        os.utime(f, ns=(old, old))
    read_pair(a, b, index_min_bytes=0)
    assert len(list(cache.glob("*.idx"))) == 2


def test_an_entry_that_is_not_a_regular_file_is_a_miss_never_a_wait(otlp_pair: tuple[Path, Path], cache: Path) -> None:
    read_pair(*otlp_pair)
    entries = sorted(cache.glob("*.idx"))
    entries[0].unlink()
    os.mkfifo(entries[0])  # nobody writes it: an open or read that blocked would never return
    entries[1].unlink()
    entries[1].mkdir()
    got = read_pair(*otlp_pair)  # read as without the cache
    _same(got[0], readers.read_trace(otlp_pair[0]))


def test_an_entry_another_user_owns_is_not_used_and_is_replaced(native_pair: tuple[Path, Path], cache: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if os.getuid() != 0:
        pytest.skip("needs to give a file to another user (root)")
    read_pair(*native_pair, index_min_bytes=0)
    for e in cache.glob("*.idx"):
        os.chown(e, 12345, 12345)  # after `sudo -E tracetui diff`, say
    reads = _Reads(monkeypatch)
    read_pair(*native_pair, index_min_bytes=0)
    assert "parse_indexed" in reads.calls
    assert {e.stat().st_uid for e in cache.glob("*.idx")} == {0}  # made again, this user's
    reads.calls.clear()
    read_pair(*native_pair, index_min_bytes=0)
    assert reads.calls == []


def test_no_home_folder_means_no_cache_not_an_error(native_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """A container's uid with no passwd entry and no HOME: `Path.home()` raises; the pair is read all the same."""
    for name in ("TRACETUI_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert index_cache.cache_dir() is None
    got = read_pair(*native_pair, index_min_bytes=0)
    _same(got[0], readers.read_trace(native_pair[0]))
    monkeypatch.setenv("HOME", "")  # empty: not "/" (Python would make /.cache)
    assert index_cache.cache_dir() is None

