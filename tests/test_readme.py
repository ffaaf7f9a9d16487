"""The README's commands stay true: the quick start is two commands, and every later `sh` command runs as
pasted, in order, in a fresh clone, and leaves the clone clean."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _sh_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, re.S)


def _words(line: str) -> list[str]:
    """A shell line's words, a comment being a `#` that starts a word (as in sh: `FILE#RUN` is one word)."""
    return shlex.split(re.sub(r"(^|\s)#.*$", "", line))


def test_python_dash_m_runs_the_cli() -> None:
    """`python -m tracetui` is the CLI."""
    out = subprocess.run([sys.executable, "-m", "tracetui", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.startswith("tracetui ")


def test_sample_runs_match_their_generator() -> None:
    """The committed sample_runs/ are exactly what scripts/build_sample_runs.py builds, and load without issues."""
    out = subprocess.run([sys.executable, "scripts/build_sample_runs.py", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


# What a README command run in order must exit with when not 0: a distinctive part of the command, the
# exit code, and why the README expects it. Each entry must match exactly one command (the test checks).
EXPECTED_EXIT = {
    "tracetui diff ../sample_runs/order_lookup/": (1, "the order-lookup pair diverges (diff exits 1 when runs diverge)"),
    "agent.py:run_fixed --llm live --out replay.jsonl": (1, "the strict replay stops at the Friday lookup the recording never saw"),
    "triage --batch ../sample_runs/": (1, "cases of the bundled incidents diverge (--batch exits 1 when one does)"),
    "tau-bench-airline.json#task-1-trial-0 ": (1, "two trials of one tau-bench task diverge (diff exits 1)"),
    "golden run my-golden/ --agent": (1, "the incident agent fails the golden contract (FAIL, every clause listed)"),
    "nightly/agent_v2.py:run": (1, "tonight's agent makes a new read: the --fail-on rule fires (exit 1, the alert)"),
}
# The two quick-start commands install into a new venv and open the TUI (or run the whole suite): the test
# runs in its own venv instead, with the extras of `.[test]` (which include `.[integrations]` and `.[dask]`).
SUBCOMMANDS = {"diff", "show", "convert", "record", "replay", "triage", "promote", "golden", "nightly", "help"}


def _readme_commands() -> list[str]:
    """The README's `sh` commands after the quick start, in order: one per line, continuations joined,
    lines that are only a comment dropped (a trailing comment stays: sh ignores it)."""
    commands = []
    for block in _sh_blocks()[2:]:
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    return commands


def _skip_reason(command: str) -> str | None:
    """Why the test does not run a README command, or None when it runs it."""
    words = _words(command)
    if words[:2] == ["pip", "install"]:
        return "installs into the active venv (the test's, which has the extras of .[test])"
    if "pytest" in words:
        return "runs the test suite"
    if words[0] == "tracetui" and (words[1] == "view" or words[1] not in SUBCOMMANDS and not words[1].startswith("-")):
        return "opens the interactive TUI"
    return None


def _clone_of_this_checkout(dest: Path) -> None:
    """A fresh clone of this checkout's HEAD, with the working tree's uncommitted changes (tracked and
    untracked, not ignored) committed on top, so the test checks the README about to be committed."""
    def git(*args: str, cwd: Path = ROOT) -> str:
        return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout

    head = git("rev-parse", "HEAD").strip()
    git("clone", "-q", "--no-checkout", git("rev-parse", "--path-format=absolute", "--git-common-dir").strip(), str(dest))
    git("checkout", "-q", "--detach", head, cwd=dest)
    changed = git("ls-files", "-z", "--modified", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, changed):
        src, dst = ROOT / rel, dest / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        elif dst.exists():
            dst.unlink()
    if git("status", "--porcelain", cwd=dest):
        git("add", "-A", cwd=dest)
        git("-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "working tree",
            cwd=dest)


@pytest.mark.slow
def test_readme_commands_run_as_pasted_in_a_fresh_clone_and_leave_it_clean(tmp_path: Path) -> None:
    """Every `sh` command of the README after the quick start, run in order by one shell (so `cd` and
    variables carry over) in a fresh clone with the test's venv active, exits 0, or the code
    EXPECTED_EXIT gives with its reason; frozen replays of the examples serve the model from the
    recording and make no live call; and `git status --porcelain` in the clone is empty afterwards."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    commands = _readme_commands()
    run = [c for c in commands if _skip_reason(c) is None]
    assert commands[0] == "mkdir -p scratch && cd scratch", "the README's first command after the quick start"
    for part, (code, why) in EXPECTED_EXIT.items():
        assert sum(part in c for c in run) == 1, f"EXPECTED_EXIT entry matches no or several commands: {part!r} ({why})"
    ran = {_words(c)[1] for c in run if _words(c)[0] == "tracetui"}
    assert SUBCOMMANDS - {"help"} <= ran, SUBCOMMANDS - ran
    assert any(_skip_reason(c) == "opens the interactive TUI" for c in commands)

    clone, logs = tmp_path / "clone", tmp_path / "logs"
    _clone_of_this_checkout(clone)
    logs.mkdir()
    script = "".join(f"{{ {c}\n}} >{logs}/{i}.out 2>&1 </dev/null; echo $? >{logs}/{i}.rc\n" for i, c in enumerate(run))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "TRACETUI_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(clone), env.get("PYTHONPATH", "")]))
    subprocess.run(["bash", "-c", script], cwd=clone, env=env, timeout=1200, check=False)

    wrong = []
    for i, command in enumerate(run):
        out = (logs / f"{i}.out").read_text(errors="replace") if (logs / f"{i}.out").exists() else ""
        rc = int((logs / f"{i}.rc").read_text()) if (logs / f"{i}.rc").exists() else None
        expected = next((code for part, (code, _) in EXPECTED_EXIT.items() if part in command), 0)
        words = _words(command)
        if rc != expected:
            wrong.append(f"$ {command}\nexit {rc}, expected {expected}:\n{out[-2000:]}")
        elif words[1:2] == ["replay"] and any(w.startswith("../examples/") for w in words) and "--llm" not in words \
                and not ("live calls (tools/network): 0" in out and "LLM outputs served 3" in out):
            wrong.append(f"$ {command}\na frozen replay should serve the 3 model calls, no live call:\n{out[-1500:]}")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout
    if status:
        wrong.append(f"the README's commands left files in the checkout:\n{status}")
    assert not wrong, "\n\n".join(wrong)
