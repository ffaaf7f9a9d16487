"""A big OTLP/JSON pair shows its first divergence before it is read whole (``core.load.otlp_early``), then the
rows grow in place, as a tracetui/1 pair does (``test_pilot_early``).

The whole read is held back (``OtlpPair.read_whole`` waits on an event) so the early state can be looked at.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.tui.helpers import wait_loaded, widget_text
from tracetui.core.diff import diff_traces
from tracetui.core.load import otlp_early
from tracetui.core.readers import read_replay, read_trace
from tracetui.core.readers.otlp import OtlpJsonReader
from tracetui.tui import TraceTuiApp
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.status_bar import StatusBar

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Small OTLP files take the early look; the whole read waits for the returned event."""
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    go = threading.Event()
    real = otlp_early.OtlpPair.read_whole

    def waiting(self: Any, which: int) -> Any:
        go.wait(30)
        return real(self, which)

    monkeypatch.setattr(otlp_early.OtlpPair, "read_whole", waiting)
    return go


def _pair(folder: Path) -> tuple[str, str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_otlp import ensure_otlp_pair
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    o, r = ensure_otlp_pair(folder, 1200, 10, 3)
    return str(o), str(r)


async def _until(pilot: Any, test: Any, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.02)):
        if test():
            return
        await asyncio.sleep(0.02)
        await pilot.pause()
    raise AssertionError("timed out")


async def test_an_otlp_pair_shows_its_first_divergence_early_then_grows_in_place(tmp_path: Path,
                                                                                 held: threading.Event) -> None:
    original, replay = _pair(tmp_path)
    whole = diff_traces(read_trace(original), read_replay(replay))
    assert whole.first is not None
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(AlignedView)
        await _until(pilot, lambda: app.diff is not None)
        early = app.diff
        assert early is not None and early.partial
        assert early.first is not None and early.first.row == whole.first.row
        assert view.cursor_row == whole.first.row  # on screen, where the whole pair puts it
        assert len(early.rows) < len(whole.rows)
        status = widget_text(app.query_one(StatusBar))
        assert "first divergence" in status and "reading the rest" in status
        await pilot.press("up", "up")
        moved = view.cursor_row
        held.set()
        await wait_loaded(pilot)
        await _until(pilot, lambda: app.diff is not None and not app.diff.partial)
        assert len(app.diff.rows) == len(whole.rows)
        assert view.cursor_row == moved  # the early rows stayed: nothing laid out again
        assert not [n for n in app._notifications if n.title == "first divergence"]
        assert "reading the rest" not in widget_text(app.query_one(StatusBar))
