"""Benchmark: the tau-bench reader on the corpus file, against a bare orjson parse.

``../shared/corpus/tau-bench/gpt-4o-airline.json`` (4.1 MB, 200 runs, 5,308
messages, 1,164 tool calls; or the file given). Each repeat times, alternating,
with the cyclic GC off as ``read_trace`` runs readers:

- parse: read the file + ``orjson.loads`` (the floor);
- load_json: read the file + ``jsondoc.load_json`` (orjson plus the shared
  duplicate-key / big-integer re-check every reader runs);
- reader: read the file + ``TauBenchReader().read`` (every run: 3,818 spans);
- read_trace: ``read_trace(path)`` (sniff, read every run, pick the first);

and prints the medians (ms, wall clock and process CPU), the ratio reader /
parse of the medians and the median of the per-repeat ratios (target <= 1.5),
and the reader's own share: (reader - load_json) / parse.
The machine is shared: compare figures taken in one run. Results are freed
outside the timed region.

Usage::

    python benchmarks/bench_tau_bench.py              # 5 repeats
    python benchmarks/bench_tau_bench.py --repeat 21
    python benchmarks/bench_tau_bench.py --profile    # cProfile of one read, top 20
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracetui.core.readers import read_trace
from tracetui.core.readers.jsondoc import load_json
from tracetui.core.readers.tau_bench import TauBenchReader

DEFAULT = ROOT / ".." / "shared" / "corpus" / "tau-bench" / "gpt-4o-airline.json"


def _time(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall, cpu) seconds of one call, GC off, the result freed after the clock stops."""
    gc.collect()
    gc.disable()
    try:
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        w, c = time.perf_counter() - w, time.process_time() - c
    finally:
        gc.enable()
    del result
    return w, c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    path = str(Path(args.path).resolve())
    reader = TauBenchReader()

    def parse() -> Any:
        with open(path, "rb") as fh:
            return orjson.loads(fh.read())

    def load() -> Any:
        with open(path, "rb") as fh:
            return load_json(path, fh.read(), [])

    def read() -> Any:
        with open(path, "rb") as fh:
            return reader.read(path, fh.read())

    def trace() -> Any:
        return read_trace(path)

    out = read()
    spans = sum(len(r.spans) for r in out.runs)
    print(f"{path}: {Path(path).stat().st_size:,} bytes, {len(out.runs)} runs, {spans:,} spans, {len(out.issues)} issues")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        read()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)
        return 0
    steps = {"parse": parse, "load_json": load, "reader": read, "read_trace": trace}
    for fn in steps.values():  # warm up: imports, page cache, allocator arenas
        _time(fn)
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in steps}
    for _ in range(args.repeat):
        for k, fn in steps.items():
            rows[k].append(_time(fn))
    med = {k: (statistics.median(w for w, _ in v) * 1e3, statistics.median(c for _, c in v) * 1e3) for k, v in rows.items()}
    for k, (w, c) in med.items():
        print(f"{k:>11}: {w:7.1f} ms wall  {c:7.1f} ms cpu   (median of {args.repeat})")
    per = [r[0] / p[0] for r, p in zip(rows["reader"], rows["parse"])]
    per_cpu = [r[1] / p[1] for r, p in zip(rows["reader"], rows["parse"]) if p[1] > 0]
    print(f"reader / parse: {med['reader'][0] / med['parse'][0]:.2f}x of medians (wall), "
          f"{statistics.median(per):.2f}x median per repeat (wall), "
          f"{statistics.median(per_cpu) if per_cpu else float('nan'):.2f}x median per repeat (cpu); target <= 1.5x")
    own = [(r[0] - j[0]) / p[0] for r, j, p in zip(rows["reader"], rows["load_json"], rows["parse"])]
    print(f"load_json / parse: {med['load_json'][0] / med['parse'][0]:.2f}x; "
          f"reader's own work (reader - load_json) / parse: {statistics.median(own):.2f}x median per repeat")
    print("per-repeat (parse ms, reader ms): " + ", ".join(f"({p[0] * 1e3:.1f}, {r[0] * 1e3:.1f})" for p, r in zip(rows["parse"], rows["reader"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
