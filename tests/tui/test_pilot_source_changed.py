"""A trace file truncated or rewritten while the TUI shows it (payloads are read on demand for big files):
a clear error notice and a marked row, never a traceback; the app keeps running."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import TraceBuilder
from tests.tui.helpers import wait_loaded, write_pair
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.load import native_index
from tracetui.tui import TraceTuiApp
from tracetui.tui.notices import STALE_LABEL
from tracetui.tui.screens.pair_screen import PairScreen
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail


def _pair(tmp_path: Path, n: int = 120) -> tuple[str, str]:
    def build(t: TraceBuilder, side: str) -> None:
        root = t.add("agent", "run")
        for i in range(n):
            t.add("tool", "lookup", parent=root, arguments={"i": i}, output={"v": "x" * 200 + side[0] * (i == 7)})

    return write_pair(tmp_path, build)


async def test_a_file_truncated_while_shown_is_said_not_a_traceback(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)  # the index loader (lazy payloads) for small files too
    original, replay = _pair(tmp_path)
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(100, 16)) as pilot:
        await wait_loaded(pilot)
        assert app.diff is not None and isinstance(app.diff.original.spans[-1], LazySpan)
        assert not app.diff.original.spans[-1].loaded  # far below the screen: not read yet
        with open(original, "r+b") as fh:
            fh.truncate(500)  # rewritten in place: the lines of the spans not read yet are gone
        view = app.query_one(AlignedView)
        await pilot.press("end")
        await pilot.pause()
        assert app.is_running
        assert view.cursor_row == view.row_count - 1
        shown = "".join(seg.text for y in range(view.size.height) for seg in view.render_line(y))
        assert "⚠ file changed" in shown  # the rows whose payload is gone say so (cut to the column)
        assert STALE_LABEL in app.query_one(SpanDetail).text
        errors = [n for n in app._notifications if n.title == "trace file changed"]
        assert len(errors) == 1 and "original.jsonl changed on disk" in errors[0].message
        await pilot.press("enter")  # the pair screen cannot show it: a bell and the notice, no screen
        await pilot.pause()
        assert not isinstance(app.screen, PairScreen) and app.is_running
        await pilot.press("slash", *"lookup", "enter")  # the search reads every payload: it stops, said once
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and len([n for n in app._notifications if n.title == "trace file changed"]) == 1
        await pilot.press("home")
        await pilot.pause()
        assert app.is_running


async def test_r_reads_the_pair_again_after_a_change_and_after_a_load_error(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    original, replay = _pair(tmp_path)
    good = Path(original).read_bytes()
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(100, 16)) as pilot:
        await wait_loaded(pilot)
        first = app.diff
        with open(original, "r+b") as fh:
            fh.truncate(500)
        await pilot.press("end")
        await pilot.pause()
        assert [n for n in app._notifications if n.title == "trace file changed"]
        Path(original).write_bytes(b"not a trace\n")  # then damaged: R shows the error panel, not a traceback
        await pilot.press("R")
        await wait_loaded(pilot)
        assert app.load_error is not None and app.is_running
        Path(original).write_bytes(good)  # fixed on disk
        await pilot.press("R")
        await wait_loaded(pilot)
        await pilot.pause()
        view = app.query_one(AlignedView)
        assert app.load_error is None and app.diff is not None and app.diff is not first
        assert not view.disabled and app.focused is view and view.display
        assert app.diff.first is not None and view.cursor_row == app.diff.first.row
        await pilot.press("end")
        await pilot.pause()
        assert STALE_LABEL not in app.query_one(SpanDetail).text  # every payload reads again
