"""A big pair shows its first divergence before it is read whole (``core.early``), then grows in place.

The whole read of the original is held back (``native_index.parse_indexed`` waits on an event) so the
early state can be looked at; the tests then let it finish.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.builders import generated_pair
from tests.tui.helpers import wait_loaded, widget_text
from tracetui.core.diff import diff_traces
from tracetui.core.load import native_index
from tracetui.core.readers import read_replay, read_trace
from tracetui.tui import TraceTuiApp
from tracetui.tui.messages import LoadFailed, PairLoaded
from tracetui.tui.screens.pair_screen import PairScreen
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.status_bar import StatusBar

def _generated(tmp_path: Path, n: int = 3000, edits: int = 10, seed: int = 3) -> tuple[str, str]:
    orig, rep = generated_pair(tmp_path, n, edits, seed)
    return str(orig), str(rep)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Small files take the index loader (and so the early path); the whole read of the original waits
    for the returned event."""
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    go = threading.Event()
    real = native_index.parse_indexed

    def waiting(src: Any, known: Any = None, progress: Any = None) -> Any:
        go.wait(30)
        return real(src, known, progress)

    monkeypatch.setattr(native_index, "parse_indexed", waiting)
    return go


async def _until(pilot: Any, test: Any, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.02)):
        if test():
            return
        await asyncio.sleep(0.02)
        await pilot.pause()
    raise AssertionError("timed out")


def _notices(app: TraceTuiApp, title: str) -> list[str]:
    return [n.message for n in app._notifications if n.title == title]


async def test_first_divergence_shows_early_then_the_rows_grow_in_place(tmp_path: Path, held: threading.Event) -> None:
    original, replay = _generated(tmp_path)
    whole = diff_traces(read_trace(original), read_replay(replay))
    assert whole.first is not None
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(AlignedView)
        await _until(pilot, lambda: app.diff is not None)
        early = app.diff
        assert early is not None and early.partial
        assert early.first is not None and early.first.row == whole.first.row
        assert view.cursor_row == whole.first.row  # on screen, as the whole pair would put it
        assert len(early.rows) < len(whole.rows)
        status = widget_text(app.query_one(StatusBar))
        assert "first divergence" in status and "reading the rest" in status
        # Keys that need the whole pair say so instead of answering from the first rows.
        for keys, what in ((["slash"], "Search"), (["v"], "Filters"), (["t"], "Triage"), (["z"], "Collapsing")):
            await pilot.press(*keys)
            await pilot.pause()
            assert app.screen is app.screen_stack[0], keys
            assert any(m.startswith(what) for m in _notices(app, "still reading the pair")), keys
        # n past the last divergence known: not "no divergence below", which may be false.
        await pilot.press("end")
        await pilot.press("n")
        await pilot.pause()
        assert any(m.startswith("Later divergences") for m in _notices(app, "still reading the pair"))
        assert not any("no divergence below" in str(n.message) for n in app._notifications)
        # The user moves; the whole pair arrives; the cursor and the early rows stay.
        await pilot.press("f", "up", "up")
        moved = view.cursor_row
        assert moved == whole.first.row - 2
        held.set()
        await wait_loaded(pilot)
        await _until(pilot, lambda: app.diff is not None and not app.diff.partial)
        assert app.diff is not None and len(app.diff.rows) == len(whole.rows)
        assert view.cursor_row == moved
        assert view.row_count == len(whole.rows)
        assert "reading the rest" not in widget_text(app.query_one(StatusBar))
        assert not _notices(app, "first divergence")  # nothing moved: no "laid out again" notice
        await pilot.press("end", "n")
        await pilot.pause()
        assert any("no divergence below" in str(n.message) for n in app._notifications)
        await pilot.press("slash")  # now search opens
        await pilot.pause()
        assert app.screen is not app.screen_stack[0]


async def test_pair_screen_opened_early_steps_through_the_whole_pair_later(tmp_path: Path,
                                                                           held: threading.Event) -> None:
    original, replay = _generated(tmp_path)
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        await _until(pilot, lambda: app.diff is not None)
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, PairScreen))
        screen = app.screen
        assert isinstance(screen, PairScreen) and screen.diff.partial
        held.set()
        await wait_loaded(pilot)
        await _until(pilot, lambda: app.diff is not None and not app.diff.partial)
        assert app.screen is screen and screen.diff is app.diff  # same rows: it keeps its place, on the whole diff
        start = screen.row
        await pilot.press("n")
        await pilot.pause()
        assert screen.row > start  # the next divergence, beyond the first rows read early


async def test_a_whole_pair_that_begins_otherwise_is_laid_out_again_and_said(tmp_path: Path,
                                                                             held: threading.Event) -> None:
    """If the whole read disagrees with the early rows (a line the early walk never read changed the tree),
    the view is laid out again on the whole diff's first divergence, and a notice says why."""
    original, replay = _generated(tmp_path)
    other_o, other_r = _generated(tmp_path / "other", seed=5)
    other = diff_traces(read_trace(other_o), read_replay(other_r))
    assert other.first is not None
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(AlignedView)
        await _until(pilot, lambda: app.diff is not None)
        await pilot.press("home")
        app.post_message(PairLoaded(other, generation=app._load_generation))  # as if the whole read had found this
        await _until(pilot, lambda: app.diff is other)
        assert view.cursor_row == other.first.row
        assert any("laid out again" in m for m in _notices(app, "first divergence"))
        held.set()
        await wait_loaded(pilot)


async def test_reload_and_the_palette_jump_wait_for_the_whole_pair(tmp_path: Path, held: threading.Event) -> None:
    """R while a read runs starts no second one (a held-out tester saw two reads, then the cursor jump when the
    second finished); ``ctrl+p :ID`` says "still reading" (the id may lie beyond the rows read); the status line
    shows how far the whole read is once it runs."""
    original, replay = _generated(tmp_path)
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        await _until(pilot, lambda: app.diff is not None)
        await pilot.press("R")
        await pilot.pause()
        assert any("already being read" in str(n.message) for n in app._notifications)
        last_id = read_trace(original).spans[-1].span_id
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*f":{last_id}")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert any(m.startswith("Jumping to a span id") for m in _notices(app, "still reading the pair"))
        assert app.query_one(AlignedView).cursor_row != len(diff_traces(read_trace(original), read_replay(replay)).rows) - 1
        held.set()
        await wait_loaded(pilot)
        await _until(pilot, lambda: app.diff is not None and not app.diff.partial)
        assert app.workers._workers == set() or all(w.is_finished for w in app.workers._workers)


async def test_a_superseded_read_is_dropped(tmp_path: Path, held: threading.Event) -> None:
    """Messages of a read that another replaced (its generation is old) change nothing."""
    original, replay = _generated(tmp_path)
    other_o, other_r = _generated(tmp_path / "other", seed=5)
    stale = diff_traces(read_trace(other_o), read_replay(other_r))
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        await _until(pilot, lambda: app.diff is not None)
        early = app.diff
        app.post_message(PairLoaded(stale, generation=app._load_generation - 1))
        await pilot.pause()
        assert app.diff is early
        held.set()
        await wait_loaded(pilot)
        await _until(pilot, lambda: app.diff is not None and not app.diff.partial)
        assert app.diff is not stale


async def test_a_failed_whole_read_closes_a_pair_screen_opened_early(tmp_path: Path, held: threading.Event) -> None:
    original, replay = _generated(tmp_path)
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        await _until(pilot, lambda: app.diff is not None)
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, PairScreen))
        app.post_message(LoadFailed("replay", replay, "cannot be read: gone", generation=app._load_generation))
        await _until(pilot, lambda: app.load_error is not None)
        await pilot.pause()
        assert not isinstance(app.screen, PairScreen)  # the error panel shows, not the early pair
        held.set()


async def test_quitting_while_the_pair_is_read_stops_the_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """q during the read: the worker stops at its next progress report instead of reading to the end."""
    original, replay = _generated(tmp_path)
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    reads: list[str] = []
    real = native_index.parse_indexed

    def slow(src: Any, known: Any = None, progress: Any = None) -> Any:
        def crawl(fraction: float) -> None:
            reads.append("tick")
            time.sleep(0.05)  # a huge file
            progress(fraction)

        return real(src, known, crawl)

    monkeypatch.setattr(native_index, "parse_indexed", slow)
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        await _until(pilot, lambda: len(reads) > 2)
        await pilot.press("q")
    assert app.diff is None or app.diff.partial
    stopped = len(reads)
    await asyncio.sleep(0.5)
    assert len(reads) <= stopped + 1  # the read itself stopped (at most the report under way ends)


async def test_a_read_started_before_the_app_is_taken_over(tmp_path: Path, held: threading.Event) -> None:
    """The CLI starts the read before importing the TUI (``PairRead``); the app shows that read's early rows and
    whole diff instead of reading the pair again. A prefetched read of another pair is cancelled, not shown."""
    from tracetui.core.load.pairread import PairRead

    original, replay = _generated(tmp_path)
    whole = diff_traces(read_trace(original), read_replay(replay))
    started: list[str] = []
    real_init = PairRead.__init__

    def counting(self: Any, *a: Any, **kw: Any) -> None:
        started.append(str(a[1]))
        real_init(self, *a, **kw)

    prefetched = PairRead(original, replay)
    other = PairRead(original, original)  # another pair: not the app's
    PairRead.__init__ = counting  # type: ignore[method-assign]
    try:
        app = TraceTuiApp(original, replay, prefetched=prefetched)
        async with app.run_test(size=(120, 30)) as pilot:
            await _until(pilot, lambda: app.diff is not None)
            assert app.diff is not None and app.diff.partial and app.diff.first is not None
            assert app.diff.first.row == whole.first.row  # type: ignore[union-attr]
            held.set()
            await wait_loaded(pilot)
            await _until(pilot, lambda: app.diff is not None and not app.diff.partial)
            assert len(app.diff.rows) == len(whole.rows)
        assert started == []  # no second read
        app2 = TraceTuiApp(original, replay, prefetched=other)
        async with app2.run_test(size=(120, 30)) as pilot:
            await _until(pilot, lambda: app2.diff is not None and not app2.diff.partial)
            assert len(app2.diff.rows) == len(whole.rows)  # the app's pair, not the prefetched one
        assert started == [replay]
        for _ in range(200):
            if other.finished:
                break
            await asyncio.sleep(0.05)
        assert other.finished
        kinds = [other.next_event(0)[0] for _ in range(4)]  # what is left: a progress, an early, then the end
        assert kinds[-1] in ("cancelled", "done")
    finally:
        PairRead.__init__ = real_init  # type: ignore[method-assign]
