"""A write killed midway (kill -9) leaves a temporary that the next write into the folder removes; nothing
that is not a dead tracetui process's temporary is ever removed (issue 21, ``core.tempfiles``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tracetui.core.tempfiles as tempfiles
from tracetui.cli.main import main
from tracetui.core.tempfiles import make_temp_dir, make_temp_file, sweep

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = ROOT / "sample_runs" / "scheduling" / "original.jsonl"

_CHILD = r"""
import sys, time
from tracetui.core.harness.writer import TraceWriter
from tracetui.core.tempfiles import make_temp_dir
w = TraceWriter(sys.argv[1], overwrite=True)  # the temporary exists from here until close()
w.header({"run_id": "killed"})
make_temp_dir(sys.argv[2], "case")  # promote's folder, as a crash leaves it
print("ready", flush=True)
time.sleep(60)
"""


def _killed_mid_write(tmp_path: Path) -> tuple[list[str], int]:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    golden = tmp_path / "golden"
    golden.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(out), str(golden)], stdout=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
    child.send_signal(signal.SIGKILL)
    child.wait()
    litter = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".tracetui-"))
    litter += sorted(p.name for p in golden.iterdir())
    return litter, child.pid


@pytest.fixture
def no_grace(monkeypatch):
    monkeypatch.setattr(tempfiles, "GRACE_S", 0.0)


@pytest.mark.slow
def test_the_next_write_removes_what_a_killed_write_left(tmp_path, no_grace, capsys):
    litter, pid = _killed_mid_write(tmp_path)
    assert len(litter) == 2 and f"-{pid}-" in litter[0] and litter[1].endswith(".promote-tmp"), litter
    assert (tmp_path / "out.jsonl").read_text() == "old\n"  # the target was never touched
    # the next command writing there (convert) sweeps the folder first
    assert main(["convert", str(ORIGINAL), str(tmp_path / "new.jsonl")]) == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tracetui-")]
    make_temp_dir(str(tmp_path / "golden"), "other")  # promote's next case folder sweeps its own kind
    left = [p.name for p in (tmp_path / "golden").iterdir()]
    assert len(left) == 1 and left[0].startswith(".other.")


def test_only_dead_processes_temporaries_of_this_host_go(tmp_path, no_grace):
    host = tempfiles._HOST
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        names = {
            f".tracetui-{host}-{dead.pid}-abc123.tmp": False,  # ours, its process gone: removed
            f".tracetui-{host}-{live.pid}-abc123.tmp": True,  # its process runs: kept
            f".tracetui-{host}-{os.getpid()}-abc123.tmp": True,  # this process's own
            f".tracetui-0123abcd-{dead.pid}-abc123.tmp": True,  # another host's
            ".tracetui-x1y2z3.tmp": True,  # before the naming: no owner to check
            ".tracetui-notes.tmp": True,
            f"tracetui-{host}-{dead.pid}-abc123.tmp": True,  # not hidden: not ours
            f".tracetui-{host}-{dead.pid}-abc123.tmp.bak": True,
            "trace.jsonl": True,
        }
        for name in names:
            (tmp_path / name).write_text("x")
        (tmp_path / f".case.{host}-{dead.pid}-q1.promote-tmp").mkdir()
        (tmp_path / f".case.{host}-{dead.pid}-q2.promote-tmp").write_text("a file, not our folder")
        os.symlink(tmp_path / "trace.jsonl", tmp_path / f".tracetui-{host}-{dead.pid}-link.tmp")
        removed = sweep(str(tmp_path))
        assert sorted(Path(p).name for p in removed) == sorted(
            [f".tracetui-{host}-{dead.pid}-abc123.tmp", f".case.{host}-{dead.pid}-q1.promote-tmp"])
        for name, kept in names.items():
            assert (tmp_path / name).exists() == kept, name
        assert (tmp_path / f".case.{host}-{dead.pid}-q2.promote-tmp").is_file()
        assert (tmp_path / "trace.jsonl").read_text() == "x"
    finally:
        live.kill()
        live.wait()


def test_a_fresh_temporary_is_kept_for_the_grace_period(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    name = tmp_path / f".tracetui-{tempfiles._HOST}-{dead.pid}-fresh.tmp"
    name.write_text("x")
    assert sweep(str(tmp_path)) == [] and name.exists()
    old = time.time() - tempfiles.GRACE_S - 5
    os.utime(name, (old, old))
    assert sweep(str(tmp_path)) == [str(name)] and not name.exists()


def test_make_temp_file_names_the_process(tmp_path):
    fd, path = make_temp_file(str(tmp_path))
    os.close(fd)
    assert Path(path).name.startswith(f".tracetui-{tempfiles._HOST}-{os.getpid()}-")
    assert sweep(str(tmp_path)) == [] and os.path.exists(path)  # alive: kept
