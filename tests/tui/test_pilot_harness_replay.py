"""The TUI on a replay written by `tracetui replay` (not a committed file): it opens on the first divergence."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.tui.helpers import SAMPLE_RUNS, wait_loaded, widget_text
from tracetui.cli.main import main
from tracetui.tui import TraceTuiApp
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.status_bar import StatusBar


async def test_recorded_then_replayed_sample_opens_on_the_prompt_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "tui-test-key-0123456789abcdef")
    agent = SAMPLE_RUNS / "scheduling" / "agent.py"
    out, err = io.StringIO(), io.StringIO()
    assert main(["record", f"{agent}:run", "--input", f"@{agent.parent / 'input.json'}", "--clock",
                 "2026-11-03T10:14:02+01:00", "--timezone", "Europe/Paris", "--out", "original.jsonl"],
                stdout=out, stderr=err) == 0, err.getvalue()
    assert main(["replay", "original.jsonl", f"{agent}:run_fixed", "--llm", "live", "--out", "replay.jsonl"],
                stdout=out, stderr=err) == 1, err.getvalue()
    app = TraceTuiApp(str(tmp_path / "original.jsonl"), str(tmp_path / "replay.jsonl"))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.cursor_row == 2
        first = app.diff.first  # type: ignore[union-attr]
        assert first is not None and first.type.value == "input_mismatch"
        assert [c.path for c in first.fields][:2] == ["llm.prompt_version", "llm.messages[0].content"]
        assert "input_mismatch" in widget_text(app.query_one(StatusBar))
        kinds = [d.type.value for d in app.diff.divergences]  # type: ignore[union-attr]
        assert "unrecorded_call" in kinds
