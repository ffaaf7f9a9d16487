"""locate_agent_ref: a recorded agent_ref (relative to where `tracetui record` ran) found from another folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracetui.core.harness.agent import load_agent, locate_agent_ref

ROOT = Path(__file__).resolve().parents[3]
ORIGINAL = ROOT / "sample_runs" / "scheduling" / "original.jsonl"


def test_a_relative_ref_is_found_from_the_traces_folder_upwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # elsewhere: "sample_runs/scheduling/agent.py" does not exist from here
    ref = "sample_runs/scheduling/agent.py:run"
    located = locate_agent_ref(ref, str(ORIGINAL))
    path, _, func = located.rpartition(":")
    assert func == "run" and os.path.samefile(path, ROOT / "sample_runs" / "scheduling" / "agent.py")
    assert load_agent(located).run.__name__ == "run"


def test_refs_that_work_or_are_modules_or_are_nowhere_are_unchanged(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert locate_agent_ref("sample_runs/scheduling/agent.py:run", str(ORIGINAL)) == "sample_runs/scheduling/agent.py:run"
    monkeypatch.chdir(tmp_path)
    assert locate_agent_ref("my_pkg.agent:run", str(ORIGINAL)) == "my_pkg.agent:run"
    assert locate_agent_ref("nowhere/agent.py:run", str(ORIGINAL)) == "nowhere/agent.py:run"
    assert locate_agent_ref("no-colon", str(ORIGINAL)) == "no-colon"
    assert locate_agent_ref(f"{ORIGINAL.parent / 'agent.py'}:run#x", str(ORIGINAL) + "#run-1").endswith(":run#x")
