"""The benchmark scripts stay runnable (figures are printed by them, never asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_bench_diff_runs_on_a_small_pair(tmp_path: Path) -> None:
    """`benchmarks/bench_diff.py` builds a small synthetic pair and prints its figures, including the ratio to a bare parse."""
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_diff.py", "-n", "400", "--edits", "3", "--edits-large", "20",
         "--repeat", "1", "--data", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ratio" in out.stdout and "align" in out.stdout


def test_bench_replay_runs_small() -> None:
    """`benchmarks/bench_replay.py` records and strictly replays a synthetic agent and prints per-call figures."""
    out = subprocess.run([sys.executable, "benchmarks/bench_replay.py", "-n", "200", "--repeat", "1"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "µs/call" in out.stdout and "strict replay" in out.stdout


def test_bench_otlp_runs_on_a_small_pair(tmp_path: Path) -> None:
    """`benchmarks/bench_otlp.py` times both formats' diff, and a second tree's in the same rounds (`--before`)."""
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_otlp.py", "-n", "300", "--repeat", "1", "--data", str(tmp_path),
         "--before", str(ROOT)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [line.split()[0:2] for line in out.stdout.splitlines()]
    assert ["OTLP/JSON", "before"] in rows and ["tracetui/1", "before"] in rows, out.stdout
    assert "peak MiB" in out.stdout


def test_bench_otlp_prints_the_floor_and_the_reopened_pair(tmp_path: Path) -> None:
    """`bench_otlp.py --floor --reopen`: what diff costs besides reading, and each pair opened again, both formats
    (files this small are not kept by the index cache: the rows are printed all the same)."""
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_otlp.py", "-n", "300", "--repeat", "1", "--data", str(tmp_path),
         "--floor", "--reopen"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    floor = out.stdout.split("the floor besides reading", 1)[1].split("opened again", 1)[0]
    assert [line.split()[0] for line in floor.splitlines()[1:] if line.strip()] == ["tracetui/1", "OTLP/JSON"]
    again = out.stdout.split("opened again", 1)[1].splitlines()[1:]
    assert sorted(line.split()[0] for line in again if line.strip()) == ["OTLP/JSON", "tracetui/1"], out.stdout


def test_bench_otlp_tui_prints_the_tuis_figures_for_both_formats(tmp_path: Path) -> None:
    """`bench_otlp.py --tui`: every figure of issue 22 in one run, the TUI's too, for both formats."""
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_otlp.py", "-n", "300", "--repeat", "1", "--data", str(tmp_path), "--tui"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    tui = out.stdout.split("TUI on the same pairs", 1)[1].splitlines()
    got = {line.split()[0]: line.split()[1:] for line in tui[2:] if line.split()[:1] in (["tracetui/1"], ["OTLP/JSON"])}
    assert sorted(got) == ["OTLP/JSON", "tracetui/1"], out.stdout
    assert all(float(v[0]) > 0 and float(v[1]) >= float(v[0]) for v in got.values()), out.stdout  # frame, then divergence


def test_bench_otlp_1m_runs_on_a_small_pair(tmp_path: Path) -> None:
    """`benchmarks/bench_otlp_1m.py` writes a pair with the edits asked and diffs it under /usr/bin/time."""
    if not Path("/usr/bin/time").exists():
        pytest.skip("no /usr/bin/time")
    out = subprocess.run([sys.executable, "benchmarks/bench_otlp_1m.py", "-n", "400", "--edits", "3", "--data",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "divergences 3" in out.stdout, out.stdout


def test_bench_readers_scales_the_corpus_exports_and_each_scaled_file_reads_whole(tmp_path: Path) -> None:
    """`bench_readers.py --scaled N`: the corpus's Langfuse and LangSmith files copied up to N observations / runs
    (under new ids, one copy after the other), each read by its own reader with every copy's spans."""
    from tests.corpus import corpus

    corpus("langfuse/koog-2025-08-26.trace.json")  # skips without the shared corpus
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_readers.py", "--scaled", "120", "--no-generated", "--only", "scaled_",
         "--repeat", "1", "--data", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("scaled_120_")]
    assert {r[1] for r in rows} == {"langfuse", "langsmith"}, out.stdout
    assert all(int(r[3]) >= 120 for r in rows), out.stdout  # spans: every copy read
