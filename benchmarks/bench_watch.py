"""Benchmark: watch mode's cost per update (``tracetui ORIGINAL REPLAY --watch``, docs/watch.md).

A replay file is written in ``--chunks`` appends (file order, as ``--plain`` in
scripts/watch_demo.py) while a ``TailReader`` polls it and a ``LiveDiff``
re-diffs the original against everything read so far, as the watch worker
does after each batch of file changes. Printed: the poll (incremental read of
the new bytes) and the update (alignment over the whole replay so far) at
several fill levels, medians over ``--repeat`` runs, in ms; plus the whole
file read once by ``read_trace`` for comparison.

Usage::

    python benchmarks/bench_watch.py                 # the 10k pair of benchmarks/_data (bench_diff's generator)
    python benchmarks/bench_watch.py -n 100000 --chunks 5 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--spans", type=int, default=10_000)
    p.add_argument("--chunks", type=int, default=10, help="appends the replay is written in (default 10)")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    from bench_diff import ensure_data  # the cached synthetic pair (benchmarks/_data)

    from tracetui.core.readers import read_trace
    from tracetui.core.watch import LiveDiff, TailReader

    original_path, replays = ensure_data(ROOT / "benchmarks" / "_data", args.spans, [10], 1)
    replay_path = replays[10]
    original = read_trace(str(original_path))
    lines = Path(replay_path).read_bytes().splitlines(keepends=True)
    header, spans = lines[0], lines[1:]
    step = max(1, len(spans) // args.chunks)
    polls: dict[int, list[float]] = {}
    updates: dict[int, list[float]] = {}
    whole: list[float] = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "live.jsonl")
            reader, live = TailReader(target), LiveDiff(original)
            with open(target, "wb") as out:
                out.write(header)
                for n, start in enumerate(range(0, len(spans), step)):
                    out.write(b"".join(spans[start:start + step]))
                    out.flush()
                    t0 = time.perf_counter()
                    snapshot = reader.poll()
                    t1 = time.perf_counter()
                    live.update(snapshot, path=target)
                    t2 = time.perf_counter()
                    polls.setdefault(n, []).append(t1 - t0)
                    updates.setdefault(n, []).append(t2 - t1)
            t0 = time.perf_counter()
            read_trace(target)
            whole.append(time.perf_counter() - t0)
    print(f"watch: original {len(original.spans):,} spans; replay {len(spans):,} spans in {len(polls)} appends; "
          f"medians of {args.repeat} (ms)")
    print(f"{'append':>6} {'replay spans':>12} {'poll':>9} {'update':>9}")
    for n in sorted(polls):
        print(f"{n + 1:>6} {min(len(spans), (n + 1) * step):>12,} {1000 * statistics.median(polls[n]):>9.1f} "
              f"{1000 * statistics.median(updates[n]):>9.1f}")
    print(f"read_trace of the whole replay once: {1000 * statistics.median(whole):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
