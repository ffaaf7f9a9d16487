"""Benchmark: watch mode's cost per update (``tracetui ORIGINAL REPLAY --watch``, docs/watch.md).

A replay file is written in ``--chunks`` appends while a ``TailReader`` polls it and a ``LiveDiff``
updates the diff after each append, as the watch worker does after each batch of file changes.
``--order file`` (default) appends the lines in file order (parents first, as ``--plain`` in
scripts/watch_demo.py); ``--order end`` in the writer's order (a span when it ends: children before
their parent, the root last; placeholders stand for the parents not written yet). Printed, medians
over ``--repeat`` runs, in ms: the poll (incremental read of the new bytes) and the update (the
incremental ``LiveDiff.update``: its cost follows the new spans; ``--full`` measures the
non-incremental path, ``LiveDiff(incremental=False)``, instead) at each fill level; then the update
when ``--tail`` spans are appended to the nearly complete replay (``--tail-appends`` times: a few
spans onto a big replay); and the whole file read once by ``read_trace`` for comparison.

Usage::

    python benchmarks/bench_watch.py                 # the 10k pair of benchmarks/_data (bench_diff's generator)
    python benchmarks/bench_watch.py -n 100000 --chunks 5 --repeat 1
    python benchmarks/bench_watch.py -n 100000 --chunks 50 --repeat 1 --order end
    python benchmarks/bench_watch.py --full          # the update redone whole each time (the old path)
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
    p.add_argument("--order", choices=("file", "end"), default="file", help="file order, or the writer's (children first)")
    p.add_argument("--full", action="store_true", help="LiveDiff(incremental=False): redo the whole update each time")
    p.add_argument("--tail", type=int, default=10, help="spans per append at the end (default 10)")
    p.add_argument("--tail-appends", type=int, default=10, help="appends of --tail spans at the end (default 10)")
    args = p.parse_args()

    from bench_diff import ensure_data  # the cached synthetic pair (benchmarks/_data)

    from tracetui.core.readers import read_trace
    from tracetui.core.watch import LiveDiff, TailReader

    original_path, replays = ensure_data(ROOT / "benchmarks" / "_data", args.spans, [10], 1)
    replay_path = replays[10]
    original = read_trace(str(original_path))
    lines = Path(replay_path).read_bytes().splitlines(keepends=True)
    header, spans = lines[0], lines[1:]
    if args.order == "end":
        spans = _post_order(spans)
    tail = min(len(spans) // 2, args.tail * args.tail_appends)
    body = len(spans) - tail
    step = max(1, body // args.chunks)
    polls: dict[int, list[float]] = {}
    updates: dict[int, list[float]] = {}
    tails: list[float] = []
    whole: list[float] = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "live.jsonl")
            reader, live = TailReader(target), LiveDiff(original, incremental=not args.full)
            with open(target, "wb") as out:
                out.write(header)
                cuts = [*range(0, body, step), body]
                for n, (start, end) in enumerate(zip(cuts, cuts[1:])):
                    out.write(b"".join(spans[start:end]))
                    out.flush()
                    t0 = time.perf_counter()
                    snapshot = reader.poll()
                    t1 = time.perf_counter()
                    live.update(snapshot, path=target)
                    t2 = time.perf_counter()
                    polls.setdefault(n, []).append(t1 - t0)
                    updates.setdefault(n, []).append(t2 - t1)
                for start in range(body, len(spans), max(1, args.tail)):
                    out.write(b"".join(spans[start:start + args.tail]))
                    out.flush()
                    snapshot = reader.poll()
                    t1 = time.perf_counter()
                    live.update(snapshot, path=target)
                    tails.append(time.perf_counter() - t1)
            t0 = time.perf_counter()
            read_trace(target)
            whole.append(time.perf_counter() - t0)
    mode = "full (incremental=False)" if args.full else "incremental"
    print(f"watch ({mode}, {args.order} order): original {len(original.spans):,} spans; replay {len(spans):,} spans, "
          f"{body:,} in {len(polls)} appends then {tail:,} in appends of {args.tail}; medians of {args.repeat} (ms)")
    print(f"{'append':>6} {'replay spans':>12} {'poll':>9} {'update':>9}")
    for n in sorted(polls):
        print(f"{n + 1:>6} {min(body, (n + 1) * step):>12,} {1000 * statistics.median(polls[n]):>9.1f} "
              f"{1000 * statistics.median(updates[n]):>9.1f}")
    if tails:
        print(f"update after appending {args.tail} spans to the nearly complete replay: median {1000 * statistics.median(tails):.1f}, "
              f"max {1000 * max(tails):.1f} ({len(tails)} appends)")
    print(f"read_trace of the whole replay once: {1000 * statistics.median(whole):.1f} ms")
    return 0


def _post_order(lines: list[bytes]) -> list[bytes]:
    """The span lines in the writer's order: a span when it ends, children before their parent (by the tree:
    the generated runs' times do not nest)."""
    import orjson

    objs = [orjson.loads(line) for line in lines]
    ids = {o["span_id"] for o in objs}
    kids: dict[object, list[int]] = {}
    for i, o in enumerate(objs):
        kids.setdefault(o["parent_id"] if o["parent_id"] in ids else None, []).append(i)
    out: list[bytes] = []
    stack = [(i, False) for i in reversed(kids.get(None, []))]
    while stack:
        i, done = stack.pop()
        if done:
            out.append(lines[i])
            continue
        stack.append((i, True))
        stack.extend((c, False) for c in reversed(kids.get(objs[i]["span_id"], [])))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
