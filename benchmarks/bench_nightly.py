"""Throughput of ``tracetui nightly``: replays per second on a Dask cluster of 1 and 2 worker processes.

    python benchmarks/bench_nightly.py                 # 300 runs, frozen, workers 1 and 2, plus serial
    python benchmarks/bench_nightly.py --runs 100 --workers 1 2 4

A store of ``--runs`` recordings of the sample scheduling agent is built once under
``benchmarks/_data/nightly-store-N`` (``sample_runs/nightly/make_store.py``), then for each worker
count an embedded ``LocalCluster`` of that many worker processes (one thread each) is started,
warmed (each worker imports tracetui and loads the agent once), and the whole store is replayed
(``run_nightly``, frozen, strict). Printed per setting: wall seconds, replays/s, the mean task time
on its worker, and the client's share (listing, journal, aggregation). ``serial`` is the same job
in this process with no Dask: the floor per replay.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
AGENT = os.path.join(ROOT, "sample_runs", "scheduling", "agent.py") + ":run"
KEY = os.path.join(ROOT, "sample_runs", "nightly", "redaction.key")


def _store(n: int) -> str:
    path = os.path.join(ROOT, "benchmarks", "_data", f"nightly-store-{n}")
    if not os.path.isdir(path):
        spec = importlib.util.spec_from_file_location("_ms", os.path.join(ROOT, "sample_runs", "nightly", "make_store.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.build_store(path, n)
    return path


def _job(store: str, executor, tag: str) -> dict:
    from tracetui.core.nightly import NightlyConfig, run_nightly

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = run_nightly(NightlyConfig(store, AGENT, sample=0, seed="bench", key_file=KEY), executor,
                             journal=os.path.join(tmp, f"{tag}.partial.jsonl"))
        wall = time.perf_counter() - t0
    task = statistics.mean(r["seconds"] for r in report["runs"])
    return {"wall": wall, "replays": report["replays"], "rate": report["replays"] / wall, "task": task,
            "counts": report["counts"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    from dask.distributed import Client, LocalCluster

    from tracetui.core.execute import SerialExecutor
    from tracetui.core.nightly.task import Task, replay_run
    from tracetui.integrations.dask_cluster import DaskExecutor

    store = _store(args.runs)
    print(f"store: {store} ({args.runs} runs), {os.cpu_count()} cores")
    r = _job(store, SerialExecutor(), "serial")
    print(f"serial (no Dask): {r['replays']} replays in {r['wall']:.2f} s = {r['rate']:.1f} replays/s, "
          f"task {r['task'] * 1000:.1f} ms {r['counts']}")
    for n in args.workers:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            first = os.path.join(store, sorted(os.listdir(store))[0])
            warm = [client.submit(replay_run, Task(first, "warm", AGENT, key_file=KEY).to_json(), pure=False,
                                  workers=[w]) for w in client.scheduler_info()["workers"]]
            client.gather(warm)  # every worker has imported tracetui and the agent
            r = _job(store, DaskExecutor(client=client), f"w{n}")
            busy = r["task"] * r["replays"] / n
            print(f"dask {n} worker process{'es' if n > 1 else ''}: {r['replays']} replays in {r['wall']:.2f} s = "
                  f"{r['rate']:.1f} replays/s, task {r['task'] * 1000:.1f} ms on its worker, workers busy "
                  f"{100 * busy / r['wall']:.0f}% of the wall time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
