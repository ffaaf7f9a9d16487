"""Fixtures of the TUI tests: the trace pairs most tests open."""

from __future__ import annotations

import pytest

from tests.tui.helpers import DATA, sample_pair


@pytest.fixture
def scheduling() -> tuple[str, str]:
    """The scheduling sample: 9 rows, first divergence input_mismatch at row 2."""
    return sample_pair("scheduling")


@pytest.fixture
def tiny() -> tuple[str, str]:
    """Our own 6-span pair (tests/tui/data): 7 rows, first divergence args_mismatch at row 2."""
    return str(DATA / "original.jsonl"), str(DATA / "replay.jsonl")


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every TUI test runs without the developer's own config file (keys, theme): ``docs/tui.md``."""
    monkeypatch.delenv("TRACETUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
