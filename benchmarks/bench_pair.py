"""Benchmark: loading and diffing a pair, ``read_pair`` (index loader) against ``read_trace`` + ``read_replay``.

Each measurement runs in a fresh Python process (imports excluded from the
timings, memory its own), the two ways alternating so that both see the same
load from whatever else runs on the machine. Prints, per way, the medians of:
wall seconds to the loaded pair and to the diff, CPU seconds of the process and
of its children (the loader's child process), the peak RSS of the process and
of its largest child, and how many span payloads the diff read.

Usage::

    python benchmarks/bench_pair.py                 # the cached 100k pair of bench_tui (D=10), 3 rounds
    python benchmarks/bench_pair.py -n 10000 --edits 1000 --repeat 5
"""

from __future__ import annotations

import os

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child(way: str, original: str, replay: str) -> dict[str, Any]:
    """Load and diff the pair one way; return the figures."""
    from tracetui.core.diff import diff_traces
    from tracetui.core.readers.lazyspan import LazySpan
    from tracetui.core.load import read_pair
    from tracetui.core.readers import read_replay, read_trace

    def cpu(who: int) -> float:
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    c0, k0, t0 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    if way == "pair":
        a, b = read_pair(original, replay)
    else:
        a, b = read_trace(original), read_replay(replay)
    t1 = time.perf_counter()
    d = diff_traces(a, b)
    t2 = time.perf_counter()
    spans = [*a.spans, *b.spans]
    return {
        "load": t1 - t0, "total": t2 - t0,
        "cpu": cpu(resource.RUSAGE_SELF) - c0, "cpu_children": cpu(resource.RUSAGE_CHILDREN) - k0,
        "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "rss_child": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
        "read": sum(1 for s in spans if type(s) is not LazySpan or s.loaded),
        "spans": len(spans), "divergences": len(d.divergences),
        "first": d.first.row if d.first is not None else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--spans", type=int, default=100_000)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data")
    ap.add_argument("--child", nargs=3, metavar=("WAY", "ORIGINAL", "REPLAY"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0

    from benchmarks.bench_tui import build

    orig, rep = build(args.data, args.spans, args.edits, args.seed)
    size = orig.stat().st_size + rep.stat().st_size
    print(f"files: {orig.name} + {rep.name}: {size / 1e6:.0f} MB; {args.repeat} rounds, the two ways alternating")
    runs: dict[str, list[dict[str, Any]]] = {"eager": [], "pair": []}
    for _ in range(args.repeat):
        for way in runs:
            out = subprocess.run([sys.executable, __file__, "--child", way, str(orig), str(rep)],
                                 check=True, capture_output=True, text=True)
            runs[way].append(json.loads(out.stdout.strip().splitlines()[-1]))
    first = {way: {(r["divergences"], r["first"]) for r in rs} for way, rs in runs.items()}
    if first["eager"] != first["pair"]:
        print(f"DIFFERENT RESULTS: {first}")
        return 1
    print(f"{'':28}{'read_trace+read_replay':>24}{'read_pair':>12}{'ratio':>8}")
    for key, label, unit in (("load", "pair loaded (wall)", "s"), ("total", "diff done (wall)", "s"),
                             ("cpu", "CPU, this process", "s"), ("cpu_children", "CPU, loader child", "s"),
                             ("rss", "peak RSS / files", "x"), ("rss_child", "child peak RSS / files", "x"),
                             ("read", "payloads read by the diff", "")):
        e = statistics.median(r[key] for r in runs["eager"])
        p = statistics.median(r[key] for r in runs["pair"])
        if unit == "x":
            e, p = e / size, p / size
        ratio = f"{p / e:8.2f}" if e else f"{'':8}"
        if unit:
            print(f"  {label:26}{e:22.2f} {unit:1}{p:10.2f} {unit:1}{ratio}")
        else:
            print(f"  {label:26}{e:22.0f}  {p:10.0f}  {ratio}")
    print(f"divergences {runs['pair'][0]['divergences']}, first divergence at row {runs['pair'][0]['first']} (same both ways)")
    return 0


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    sys.exit(main())
