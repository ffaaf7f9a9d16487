"""`benchmarks/bench_tui.py` stays runnable (its figures are printed, never asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_tui_runs_on_a_small_pair(tmp_path: Path) -> None:
    """`benchmarks/bench_tui.py` builds a small pair, opens it in the headless app and prints every figure with its
    budget: first frame, first divergence on screen, n/p and pagedown key -> frame, peak RSS against the files."""
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_tui.py", "-n", "300", "--repeat", "1", "--data", str(tmp_path)],
        check=False, capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for label in ("first frame (from app start)", "first frame (from process launch)",
                  "first divergence on screen (app)", "n/p key -> frame", "pagedown key -> frame",
                  "peak RSS (+ child) / files' size"):
        assert label in out.stdout, out.stdout
    assert "budget" in out.stdout
