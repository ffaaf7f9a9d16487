"""SVG snapshots of the triage panel and the label dialog (pytest-textual-snapshot; plain def tests).

Update only after looking at the report: ``pytest tests/tui/test_snapshots_triage.py --snapshot-update``.
Paths are relative (the test chdirs) so no absolute path is drawn.
"""

from __future__ import annotations

import shutil
from pathlib import Path
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


async def _open_triage(pilot: Any) -> None:
    await wait_loaded(pilot)
    await pilot.press("t")
    for _ in range(50):  # the triage worker, then the message it posts
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if getattr(pilot.app.screen, "result", None) is not None:
            break
    await pilot.pause()


def test_triage_panel(snap_compare: Any) -> None:
    """t on scheduling, 120x36: step 1 replayable, step 2 0 of 1 reproduced (the v8 replay asks for Friday),
    step 3 code_or_config_change with the prompt change on both sides as evidence; the run form below."""
    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=_open_triage, terminal_size=(120, 36))


def test_triage_panel_80x24(snap_compare: Any) -> None:
    """80x24: the panel takes the screen, the form wraps to two rows, the checklist scrolls."""
    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=_open_triage, terminal_size=(80, 24))


def test_label_dialog(snap_compare: Any) -> None:
    """l on the first divergence: the four labels with their meaning, the note field, save and cancel."""

    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot)
        await pilot.press("l")
        await pilot.pause()

    assert snap_compare(TraceTuiApp(*SCHEDULING), run_before=run_before, terminal_size=(120, 36))


def test_labelled_rows(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two labelled divergences: ✗ and ✓ after the row marks; the detail pane shows the label and its note."""
    from tracetui.core.diff import diff_traces
    from tracetui.core.diff.labels import Label, divergence_key, save_label
    from tracetui.core.readers import read_trace

    for name in ("original.jsonl", "replay.jsonl"):
        shutil.copy(ROOT / "sample_runs" / "scheduling" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    diff = diff_traces(read_trace("original.jsonl"), read_trace("replay.jsonl"))
    for d, name, note in ((diff.divergences[0], "new_regression", "v8 looks at Friday, which the recording never saw"),
                          (diff.divergences[2], "acceptable_alternative", "")):
        save_label("replay.jsonl", Label(divergence_key(d), name, note, "2026-11-12T17:03:11Z", d.type.value,
                                         d.original.span_id if d.original else None,
                                         d.replay.span_id if d.replay else None))
    assert snap_compare(TraceTuiApp("original.jsonl", "replay.jsonl"), run_before=wait_loaded,
                        terminal_size=(120, 36))
