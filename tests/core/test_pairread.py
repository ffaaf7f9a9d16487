"""``core.pairread.PairRead``: read_pair + diff_traces in a background thread, its events in order."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.builders import generated_pair
from tracetui.core.diff import diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.load.pairread import PairRead
from tracetui.core.load import native_index
from tracetui.core.readers import read_replay, read_trace

ROOT = Path(__file__).resolve().parents[2]


def _events(read: PairRead, seconds: float = 60) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        ev = read.next_event(timeout=0.5)
        if ev is None:
            continue
        out.append(ev)
        if ev[0] in ("done", "failed", "cancelled"):
            return out
    raise AssertionError(f"no end within {seconds} s: {out}")


def test_a_big_pair_gives_its_early_rows_then_the_whole_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    orig, rep = generated_pair(tmp_path, 3000, 10, 3)
    events = _events(PairRead(orig, rep))
    kinds = [e[0] for e in events]
    assert kinds[-1] == "done" and kinds.count("early") == 1
    assert set(kinds) == {"early", "progress", "done"}
    fractions = [e[1] for e in events if e[0] == "progress"]  # 0 while the early look runs, then the share read
    assert fractions == sorted(fractions) and all(0 <= f <= 1 for f in fractions)
    early, whole = events[kinds.index("early")][1], events[-1][1]
    expected = diff_traces(read_trace(str(orig)), read_replay(str(rep)))
    assert early.partial and early.first.row == expected.first.row
    assert not whole.partial and len(whole.rows) == len(expected.rows)
    assert [d.row for d in whole.divergences] == [d.row for d in expected.divergences]


def test_early_false_gives_no_early_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    orig, rep = generated_pair(tmp_path, 1000, 10, 3)
    kinds = [e[0] for e in _events(PairRead(orig, rep, early=False))]
    assert "early" not in kinds and kinds[-1] == "done"


def test_a_missing_replay_fails_naming_the_replay(tmp_path: Path) -> None:
    sample = ROOT / "sample_runs" / "scheduling" / "original.jsonl"
    events = _events(PairRead(sample, tmp_path / "nope.jsonl"))
    kind, stage, exc = events[-1]
    assert (kind, stage) == ("failed", "read")
    assert isinstance(exc, ReadError) and exc.side == "replay" and "nope.jsonl" in exc.path  # type: ignore[attr-defined]
    again = PairRead(sample, tmp_path / "nope.jsonl")
    _events(again)
    assert again.next_event(0)[0] == "failed"  # the last event is returned again


def test_cancel_stops_the_read_at_its_next_progress_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    orig, rep = generated_pair(tmp_path, 3000, 10, 3)
    reports: list[float] = []
    real = native_index.parse_indexed

    def slow(src: Any, known: Any = None, progress: Any = None) -> Any:
        def crawl(fraction: float) -> None:
            reports.append(fraction)
            time.sleep(0.05)
            progress(fraction)

        return real(src, known, crawl)

    monkeypatch.setattr(native_index, "parse_indexed", slow)
    read = PairRead(orig, rep, early=False)
    pid = read._started.child.pid
    read.start()
    while not reports:
        time.sleep(0.01)
    read.cancel()
    with pytest.raises(ProcessLookupError):  # the child is stopped and reaped at once, not at the next report
        os.kill(pid, 0)
    assert _events(read, 10)[-1] == ("cancelled",)
    assert read.finished or (time.sleep(0.5) or read.finished)
    assert len(reports) < 20  # far from the whole file


def test_the_child_starts_at_once_and_the_reading_thread_only_when_asked(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``PairRead`` forks the replay's child at once (``start_pair``: the CLI does it before importing the TUI)
    but reads nothing in this process until ``start`` or ``next_event``; cancelled before that, it stops the child."""
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    orig, rep = generated_pair(tmp_path, 1000, 10, 3)
    calls: list[str] = []
    real = native_index.parse_indexed
    monkeypatch.setattr(native_index, "parse_indexed", lambda *a, **k: calls.append("parse") or real(*a, **k))
    read = PairRead(orig, rep)
    child = read._started.child
    assert child is not None and read._started.opened  # forked already
    time.sleep(0.3)
    assert calls == [] and not read.finished
    assert [e[0] for e in _events(read)][-1] == "done"  # the read used that child
    assert read._started.child is child and calls == ["parse"]
    idle = PairRead(orig, rep)
    idle.cancel()
    assert idle.finished and idle.next_event(0) == ("cancelled",)
    assert idle._started.child is None  # stopped


def test_matches_compares_the_pair_and_the_options_given() -> None:
    sample = ROOT / "sample_runs" / "scheduling" / "original.jsonl"
    read = PairRead(sample, sample, early=False, trace_id=None, original_format="tracetui")
    _events(read)
    assert read.matches(str(sample), sample, original_format="tracetui", replay_format=None)
    assert not read.matches(sample, sample, original_format=None)
    assert not read.matches(sample, ROOT / "x.jsonl", original_format="tracetui")
    assert not read.matches(sample, sample, original_format="tracetui", trace_id="run-2")


def test_the_early_look_and_the_whole_diff_obey_the_noise_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the first divergence the early look shows is one the project's noise rules leave."""
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    orig, rep = generated_pair(tmp_path, 3000, 10, 3)
    whole = diff_traces(read_trace(orig), read_replay(rep))
    hidden = whole.first.original or whole.first.replay
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui.toml").write_text(f'[[noise]]\nname = "{hidden.name}"\n')
    events = _events(PairRead(orig, rep))
    # the early rows end at the first divergence: with it hidden, the early look has none to show
    # and the whole pair is waited for (without the rules it is shown early: the test above)
    early = [e[1] for e in events if e[0] == "early"]
    for diff in (*early, events[-1][1]):
        first = diff.first.original or diff.first.replay
        assert first.name != hidden.name and diff.ignored_by_config > 0 and diff.noise_error is None


def test_a_malformed_noise_config_is_said_on_the_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    orig, rep = generated_pair(tmp_path, 50, 3, 3)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui.toml").write_text('[[noise]]\nkind = 3\n')
    kind, diff = _events(PairRead(orig, rep))[-1]
    assert kind == "done" and diff.divergences
    assert ".tracetui.toml" in diff.noise_error and "kind" in diff.noise_error
