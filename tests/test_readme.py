"""The README's commands stay true: the quick start's files exist and its `tracetui` commands run."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tracetui.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _sh_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, re.S)


def _tracetui_invocations() -> list[list[str]]:
    """Every `tracetui ...` invocation in the README's sh blocks that names bundled files."""
    calls = []
    for block in _sh_blocks():
        block = block.replace("\\\n", " ")  # shell line continuations
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words and words[0].endswith("tracetui") and any(w.startswith("sample_runs/") for w in words):
                    calls.append(words[1:])
    return calls


def test_quick_start_is_two_commands_installing_then_opening_and_testing() -> None:
    """The quick start is one command that installs and opens a bundled pair, and one that runs the tests; .ci/run runs the latter."""
    blocks = _sh_blocks()
    open_cmd, test_cmd = blocks[0].strip(), blocks[1].strip()
    assert "pip install" in open_cmd and "tracetui sample_runs/" in open_cmd
    assert "pip install" in test_cmd and "pytest" in test_cmd
    assert test_cmd in (ROOT / ".ci" / "run").read_text()


def test_readme_tracetui_commands_name_existing_files_and_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each README `tracetui` command on bundled files points at real files; each `diff` runs with exit 0 or 1."""
    calls = _tracetui_invocations()
    assert calls, "the README shows no tracetui command on sample_runs/"
    # Run them in order in a scratch folder that sees sample_runs/, as a user in a checkout would:
    # `record` and `replay` write their outputs there, later commands read them.
    (tmp_path / "sample_runs").symlink_to(ROOT / "sample_runs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "readme-test-key-0123456789abcdef")
    for argv in calls:
        for w in argv:
            path = w.lstrip("@").split(":", 1)[0]
            if path.startswith("sample_runs/"):
                assert (ROOT / path).exists(), w
        if argv[0] in ("diff", "record", "replay", "triage", "promote", "golden"):
            assert main(argv) in (0, 1), argv


def test_python_dash_m_runs_the_cli() -> None:
    """`python -m tracetui` is the CLI."""
    out = subprocess.run([sys.executable, "-m", "tracetui", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.startswith("tracetui ")


def test_sample_runs_match_their_generator() -> None:
    """The committed sample_runs/ are exactly what scripts/build_sample_runs.py builds, and load without issues."""
    out = subprocess.run([sys.executable, "scripts/build_sample_runs.py", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
