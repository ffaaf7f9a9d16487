"""The README scenes (scripts/make_screenshots.py) render on every run, so they cannot rot.

They are written to ``screenshots/`` only when ``TRACETUI_WRITE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.tui.helpers import ROOT


def _script() -> ModuleType:
    path = ROOT / "scripts" / "make_screenshots.py"
    spec = importlib.util.spec_from_file_location("make_screenshots", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


@pytest.mark.parametrize("scene", SCRIPT.SCENES, ids=lambda s: s.name)
async def test_scene_renders(scene, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Each scene loads its pair, lands on the first divergence, shows the screen its keys open, exports an SVG."""
    monkeypatch.chdir(ROOT)
    if SCRIPT.needs_sample(scene) and not Path(SCRIPT.pair_paths(scene)[0]).exists():
        pytest.skip(f"sample_runs/{scene.sample} not present")
    shot = await SCRIPT.render_scene(scene)
    assert shot.svg.lstrip().startswith("<svg") and "</svg>" in shot.svg
    if scene.runs:  # `tracetui FILE` on a file of several runs: the run list
        assert shot.screen == "RunListScreen" and "task-1-trial-1" in shot.svg.replace("&#160;", " ")
        return
    assert shot.first_row is not None
    if "slash" not in scene.keys:  # a search moves the cursor to its first match
        assert shot.cursor_row == shot.first_row
    expected = {"enter": "PairScreen", "question_mark": "HelpScreen", "t": "TriageScreen", "l": "LabelDialog"}.get(scene.keys[0] if scene.keys else "", "Screen")
    assert shot.screen == expected
    if os.environ.get("TRACETUI_WRITE_SCREENSHOTS") == "1":
        SCRIPT.OUT.mkdir(exist_ok=True)
        (SCRIPT.OUT / f"{scene.name}.svg").write_text(shot.svg, encoding="utf-8")
