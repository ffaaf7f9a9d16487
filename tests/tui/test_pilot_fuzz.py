"""The TUI on mutated real files and endless input (issue 21): the pair loads or the error panel names the
file; keys still work; nothing raises. A few seeded mutations (tests/fuzzing.py) of the sample runs and of
the corpus, and a replay that is /dev/zero."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fuzzing import KINDS, SAMPLES, mutate
from tests.tui.helpers import wait_loaded, widget_text
from tracetui.core.readers.limits import STREAM_ENV
from tracetui.tui import TraceTuiApp
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.load_error import LoadErrorPanel

ORIGINAL = SAMPLES / "scheduling" / "original.jsonl"
REPLAY = SAMPLES / "scheduling" / "replay.jsonl"


async def _open(original: Path | str, replay: Path | str) -> str:
    """Open the pair, walk it a little; what the screen shows: ``rows N`` or the error panel's text."""
    app = TraceTuiApp(str(original), str(replay))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        panel = app.query_one(LoadErrorPanel)
        if panel.display:
            text = widget_text(panel)
            assert "Traceback" not in text
            return text
        for key in ("n", "p", "enter", "right", "escape", "w", "escape", "j", "G"):
            await pilot.press(key)
        await pilot.press("q")
        return f"rows {app.query_one(AlignedView).row_count}"


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
async def test_the_view_on_a_mutated_replay(tmp_path, kind):
    import random

    path = tmp_path / "replay.jsonl"
    path.write_bytes(mutate(REPLAY.read_bytes(), REPLAY.name, kind, random.Random(KINDS.index(kind))))
    shown = await _open(ORIGINAL, path)
    assert shown.startswith("rows ") or "Cannot load the replay trace" in shown, shown


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
async def test_the_view_on_dev_zero_shows_the_error(monkeypatch):
    monkeypatch.setenv(STREAM_ENV, "2")
    shown = await _open(ORIGINAL, "/dev/zero")
    assert "Cannot load the replay trace" in shown and "/dev/zero" in shown and "not recognised" in shown
