"""SVG snapshots of the states whose look matters (pytest-textual-snapshot; plain def tests).

Update only after looking at the report: ``pytest tests/tui/test_snapshots.py --snapshot-update``.
Paths are given relative to the repo root (the test chdirs there) so no absolute path is drawn.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.tui.helpers import ROOT, wait_loaded
from tracetui.tui import TraceTuiApp

SCHEDULING = ("sample_runs/scheduling/original.jsonl", "sample_runs/scheduling/replay.jsonl")


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    if not (ROOT / SCHEDULING[0]).exists():
        pytest.skip("sample_runs/scheduling not present")


def test_opens_on_first_divergence(snap_compare: Any) -> None:
    """Main view, 120x36: cursor on row 2 (input_mismatch, the first divergence); the pane shows the prompt change."""
    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=wait_loaded, terminal_size=(120, 36))


def test_pair_screen(snap_compare: Any) -> None:
    """enter on the first divergence: every field side by side, the changed prompt lines tinted."""

    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=run_before, terminal_size=(120, 36))


def test_narrow_80x24(snap_compare: Any) -> None:
    """80x24: divergence column kept, labels clipped with an ellipsis, short detail pane, footer visible."""
    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=wait_loaded, terminal_size=(80, 24))


def test_load_error(snap_compare: Any) -> None:
    """A replay that is not a trace: the error panel names the side, the file and the reason; no traceback."""
    app = TraceTuiApp("tests/tui/data/original.jsonl", "tests/tui/data/garbage.jsonl")
    assert snap_compare(app, run_before=wait_loaded, terminal_size=(100, 24))


TAU_TRIALS = ("sample_runs/foreign/tau-bench-airline.json#task-1-trial-0",
              "sample_runs/foreign/tau-bench-airline.json#task-1-trial-1")


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
def test_multi_run_launch(snap_compare: Any, size: tuple[int, int]) -> None:
    """Two trials of a tau-bench results file on launch: both run ids whole in the column titles, the first
    divergence's fields with nothing over them, field names broken before a separator."""
    assert snap_compare(TraceTuiApp(*TAU_TRIALS), run_before=wait_loaded, terminal_size=size)


def test_one_trace_alone(snap_compare: Any) -> None:
    """`tracetui FILE`: one column, the span's fields in one value column, no divergence keys."""

    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot)
        await pilot.press("down", "down")
        await pilot.pause()

    assert snap_compare(TraceTuiApp(SCHEDULING[0], None), run_before=run_before, terminal_size=(100, 30))


def test_run_list(snap_compare: Any) -> None:
    """`tracetui FILE` on a results file of several runs: id, spans, status, reward; one marked."""
    from tracetui.core.readers import read_runs
    from tracetui.core.readers.summary import summarize_run

    path = TAU_TRIALS[0].split("#")[0]
    runs = [summarize_run(t) for t in read_runs(path).runs]

    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        await pilot.press("space")
        await pilot.pause()

    assert snap_compare(TraceTuiApp(path, None, runs=runs), run_before=run_before, terminal_size=(100, 30))
