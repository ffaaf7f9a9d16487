"""SVG snapshots of the states issue 7 adds (pytest-textual-snapshot; plain def tests).

The main view on the first divergence, the pair screen as opened, the 80x24 main view and the load error at
100x24 are in test_snapshots.py; these are the other states. Update only after looking at the report:
``pytest tests/tui/test_snapshots_states.py --snapshot-update``. Paths are relative to the repo root.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from tests.tui.helpers import ROOT, wait_loaded
from tracetui.tui import TraceTuiApp

SCHEDULING = ("sample_runs/scheduling/original.jsonl", "sample_runs/scheduling/replay.jsonl")


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "0123456789abcdef0123456789abcdef")
    if not (ROOT / SCHEDULING[0]).exists():
        pytest.skip("sample_runs/scheduling not present")


def test_pair_screen_second_difference(snap_compare: Any) -> None:
    """enter, ] ]: the pair screen scrolled to difference 2 of 2 (messages[0].content inside llm.messages),
    ▶ on its first line, ▌ on the others, both sides tinted; the status line names the path."""

    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("right_square_bracket", "right_square_bracket")
        await pilot.pause()

    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=run_before, terminal_size=(120, 36))


def test_pair_screen_80x24(snap_compare: Any) -> None:
    """The pair screen on the first divergence in an 80x24 terminal: narrower columns, values wrapped."""

    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=run_before, terminal_size=(80, 24))


def test_promote_dialog(snap_compare: Any) -> None:
    """g on the first divergence: the promote dialog prefilled (name, failure, contract); nothing written.
    The destination field is set to the relative ``golden`` so no absolute path is drawn."""

    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot)
        await pilot.press("g")
        await pilot.pause()
        pilot.app.screen.query_one("#promote-to", Input).value = "golden"
        await pilot.pause()

    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=run_before, terminal_size=(120, 40))


def test_load_error_80x24(snap_compare: Any) -> None:
    """A damaged original (garbage.jsonl) in an 80x24 terminal: the error panel names the side, file and reason."""
    app = TraceTuiApp("tests/tui/data/garbage.jsonl", "tests/tui/data/replay.jsonl")
    assert snap_compare(app, run_before=wait_loaded, terminal_size=(80, 24))


def test_early_first_divergence(snap_compare: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big pair (here a generated one, the index loader forced on) before it is read whole: the first
    divergence shown from the rows read so far, "reading…" over the columns, the status line saying how much
    is read. The whole read of the original is held until the picture is taken."""
    import threading

    from tests.builders import generated_pair
    from tracetui.core.load import native_index

    orig, rep = generated_pair(tmp_path, 3000, 10, 3)
    monkeypatch.setattr(native_index, "INDEX_MIN_BYTES", 0)
    go = threading.Event()
    real = native_index.parse_indexed

    def held(src: Any, known: Any = None, progress: Any = None) -> Any:
        while not go.wait(0.05) and app.is_running:  # until the picture is taken and the app closes
            pass
        return real(src, known, progress)

    monkeypatch.setattr(native_index, "parse_indexed", held)
    app = TraceTuiApp(str(orig), str(rep))

    async def run_before(pilot: Any) -> None:
        for _ in range(1000):
            if app.diff is not None:
                break
            await pilot.pause(0.02)
        assert app.diff is not None and app.diff.partial

    try:
        assert snap_compare(app, run_before=run_before, terminal_size=(120, 30))
    finally:
        go.set()
