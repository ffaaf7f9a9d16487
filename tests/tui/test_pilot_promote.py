"""Pilot tests of promotion in the TUI (issue 6): `g` opens the dialog prefilled from the pair shown; editing
the name and saving writes golden/NAME/ with the three files; an invalid contract is an error in the dialog
with nothing written; escape cancels."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.widgets import Input, Static, TextArea

from tests.tui.helpers import wait_loaded
from tracetui.core.readers import read_trace
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.promote_dialog import PromoteDialog


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "0123456789abcdef0123456789abcdef")
    monkeypatch.chdir(tmp_path)


async def _open(pilot) -> PromoteDialog:  # type: ignore[no-untyped-def]
    await wait_loaded(pilot)
    await pilot.press("g")
    await pilot.pause()
    dialog = pilot.app.screen
    assert isinstance(dialog, PromoteDialog)
    return dialog


async def test_g_edit_name_and_save(scheduling: tuple[str, str], tmp_path: Path) -> None:
    """g: prefilled name, failure, contract (must_call the Friday lookup) and folder golden/ under the cwd;
    the name edited by typing; ctrl+s writes the case and closes the dialog."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await _open(pilot)
        name = dialog.query_one("#promote-name", Input)
        assert name.value == "never-called-list-open-slots-2026-11-06"
        assert "list_open_slots" in dialog.query_one("#promote-failure", Input).value
        assert "must-call-list-open-slots-2026-11-06" in dialog.query_one("#promote-contract", TextArea).text
        assert dialog.query_one("#promote-to", Input).value == str(tmp_path / "golden")
        assert app.focused is name
        await pilot.press("end", "ctrl+u", *"friday-not-offered")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, PromoteDialog)
    case = tmp_path / "golden" / "friday-not-offered"
    assert sorted(p.name for p in case.iterdir()) == ["case.yaml", "contract.yaml", "trace.jsonl"]
    assert read_trace(case / "trace.jsonl").issues == []
    assert yaml.safe_load((case / "case.yaml").read_text())["name"] == "friday-not-offered"


async def test_invalid_contract_shows_error_and_writes_nothing(scheduling: tuple[str, str], tmp_path: Path) -> None:
    """Broken YAML, then a clause without its tool: each is an error in the dialog (with the field path), the
    dialog stays open, nothing is written; fixing it and saving writes the case."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await _open(pilot)
        area = dialog.query_one("#promote-contract", TextArea)
        good = area.text
        area.text = "schema: tracetui-contract/1\nmust_call: [\n"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog and dialog.error is not None and "not valid YAML" in dialog.error
        assert dialog.query_one("#promote-error", Static).display
        area.text = "schema: tracetui-contract/1\nmust_call:\n- {id: x}\n"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog and "must_call[0].tool" in (dialog.error or "")
        assert not (tmp_path / "golden").exists()
        area.text = good
        await pilot.pause()
        assert not dialog.query_one("#promote-error", Static).display  # an edit clears the error
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, PromoteDialog)
    assert len(list((tmp_path / "golden").iterdir())) == 1


async def test_escape_cancels(scheduling: tuple[str, str], tmp_path: Path) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await _open(pilot)
        dialog.query_one("#promote-contract", TextArea).focus()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PromoteDialog)
    assert not (tmp_path / "golden").exists()


async def test_g_key_is_in_help(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert any(e.binding_id == "promote" and e.keys == ("g",) for e in app.screen.entries)  # type: ignore[attr-defined]
