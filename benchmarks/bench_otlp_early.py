"""Benchmark: the early first divergence of a big OTLP/JSON pair (``core.load.otlp_early``) out of the TUI.

Builds (once, cached under ``benchmarks/_data/``) the OTLP pair of ``bench_otlp.py``, then, each in a fresh
process, runs the early look as ``tracetui ORIGINAL REPLAY`` does (``OtlpPair.start``: a child per file, then
``early_diff``) and with both sides made in the one process, and prints per mode: the first divergence's
row, wall time, this process's CPU, the children's CPU (``RUSAGE_CHILDREN``), and the peak RSS of each.

Usage::

    python benchmarks/bench_otlp_early.py                 # N=100k, D=10
    python benchmarks/bench_otlp_early.py -n 20000
"""

from __future__ import annotations

import os

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(original: str, replay: str, mode: str) -> str:
    sys.path.insert(0, str(ROOT))
    from tracetui.core.load import otlp_early

    t, c = time.perf_counter(), time.process_time()
    pair = otlp_early.otlp_pair(original, replay)
    if pair is None:
        return f"{mode}: not a pair of big OTLP/JSON files"
    if mode == "children":
        pair.start()
    got = pair.early_diff()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    row = got.first.row if got is not None and got.first is not None else None
    return (f"{mode:9} first divergence row {row}, wall {wall:.2f} s, this process CPU {cpu:.2f} s, "
            f"children CPU {ch.ru_utime + ch.ru_stime:.2f} s, peak RSS {me.ru_maxrss // 1024} MiB here, "
            f"{ch.ru_maxrss // 1024} MiB a child")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--spans", type=int, default=100_000)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(measure(*args.child), flush=True)
        return 0
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_otlp import ensure_otlp_pair

    orig, rep = ensure_otlp_pair(args.data, args.spans, args.edits, args.seed)
    print(f"files: {orig.name} + {rep.name}; load average {open('/proc/loadavg').read().split()[:3]}")
    for mode in ("children", "here"):
        subprocess.run([sys.executable, __file__, "--child", str(orig), str(rep), mode], check=True)
    print(f"load average at the end {open('/proc/loadavg').read().split()[:3]}")
    return 0


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    raise SystemExit(main())
