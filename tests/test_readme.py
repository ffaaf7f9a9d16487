"""The README's commands stay true: the quick start's files exist and its `tracetui` commands run."""

from __future__ import annotations

import os
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


def _words(line: str) -> list[str]:
    """A shell line's words, a comment being a `#` that starts a word (as in sh: `FILE#RUN` is one word)."""
    return shlex.split(re.sub(r"(^|\s)#.*$", "", line))


def _tracetui_invocations() -> list[list[str]]:
    """Every `tracetui ...` invocation in the README's sh blocks that names bundled files."""
    calls = []
    for block in _sh_blocks():
        block = block.replace("\\\n", " ")  # shell line continuations
        for line in block.splitlines():
            for part in line.split("&&"):
                words = _words(part)
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
            path = w.lstrip("@").split(":", 1)[0].split("#", 1)[0]
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


def _example_invocations() -> list[list[str]]:
    """The README's zero-code commands over examples/, in order (`tracetui record|replay ... -- python
    examples/X.py`), and the `tracetui diff` of their outputs."""
    calls = []
    for block in _sh_blocks():
        for line in block.replace("\\\n", " ").splitlines():
            words = _words(line)
            if not words or words[0] != "tracetui":
                continue
            if any(w.startswith("examples/") for w in words):
                calls.append(words[1:])
            elif words[1:2] == ["diff"] and calls and all(w.endswith(".jsonl") for w in words[2:]):
                calls.append(words[1:])
    return calls


@pytest.mark.slow
def test_readme_record_your_agent_commands_run_as_pasted(tmp_path: Path) -> None:
    """Every framework's README commands run as pasted, in order: each record exits 0, each replay
    and diff of an unchanged agent exits 0 (no divergence), and a frozen replay serves the three
    model calls from the recording and makes no live call."""
    calls = _example_invocations()
    frameworks = {w for argv in calls for w in argv if w.startswith("examples/")}
    assert frameworks == {f"examples/weather_{n}.py" for n in
                          ("agents_sdk", "pydantic_ai", "langgraph", "openai", "anthropic", "mcp")}
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env["TRACETUI_REDACTION_KEY"] = "readme-test-key-0123456789abcdef"
    tracetui = str(Path(sys.executable).with_name("tracetui"))
    for argv in calls:
        out = subprocess.run([tracetui, *argv], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
        assert out.returncode == 0, (argv, out.stdout[-2000:], out.stderr[-2000:])
        if argv[0] == "replay" and "--llm" not in argv:
            assert "live calls (tools/network): 0" in out.stdout and "LLM outputs served 3" in out.stdout, out.stdout[-1500:]
