"""Benchmark: ``tracetui diff --format json`` of a big pair, tracetui/1 and OTLP/JSON side by side.

Builds (once, cached under ``benchmarks/_data/``) the 100k-span run of
``bench_diff.py`` and its replay with D edits, as tracetui/1 JSON Lines (the
files of ``bench_diff``) and as OTLP/JSON documents with OTel GenAI attributes
(``bench_readers.otlp_span``; the replay under another trace id and other span
ids). Then, per format, medians over ``--repeat`` rounds (the measurements of a
round alternate, so the machine's load weighs on all) of:

- diff: ``python -m tracetui diff A B --format json`` as a whole process (wall,
  from spawn to exit, imports included), and its peak RSS (``wait4``);
- keep: ``orjson.loads`` of both files keeping the objects (tracetui/1: every
  line; OTLP: the document), GC off, in this process: what a user's script does;
- stream: the same parse keeping nothing (each value dropped at once);
- ratios diff / keep and diff / stream, and peak RSS / the larger file (the diff process plus its largest
  child: a big tracetui/1 replay is parsed in a forked child, ``load.read_pair``);
- with ``--tui``: the TUI on the same pair (``bench_tui.measure``, one process a round): launch -> first
  frame, launch -> first divergence on screen (and whether the early rows showed it), app + loader child
  peak RSS / the two files.

Usage::

    python benchmarks/bench_otlp.py                  # N=100k, D=10, 5 rounds
    python benchmarks/bench_otlp.py -n 20000 --repeat 3
    python benchmarks/bench_otlp.py --only otlp      # one format
    python benchmarks/bench_otlp.py --before /tmp/old # also an older tree's diff, same rounds
    python benchmarks/bench_otlp.py --tui --repeat 3  # every figure of issue 22, both formats, one run
    python benchmarks/bench_otlp.py --reopen --tui    # also each pair opened again from the index cache
    python benchmarks/bench_otlp.py --floor           # also what diff costs besides reading the files
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_diff import _Gen, ensure_data, make_replay  # noqa: E402
from bench_readers import _envelope, otlp_span  # noqa: E402


def _otlp_spans(spans: list[dict[str, Any]], trace_id: str, base: int) -> list[dict[str, Any]]:
    """tracetui/1 span objects as OTLP spans; span ids numbered from ``base`` in file order."""
    ids = {s["span_id"]: i for i, s in enumerate(spans)}
    out = []
    for s in spans:
        plain = {**s, "span_id": f"s{base + ids[s['span_id']]:x}",
                 "parent_id": None if s["parent_id"] is None else f"s{base + ids[s['parent_id']]:x}"}
        out.append(otlp_span(plain, trace_id))
    return out


def ensure_otlp_pair(folder: Path, n: int, edits: int, seed: int) -> tuple[Path, Path]:
    """The original and its replay with ``edits`` edits as OTLP/JSON documents (one ``resourceSpans``)."""
    orig = folder / f"otlp_original_n{n}_s{seed}.json"
    rep = folder / f"otlp_replay_n{n}_s{seed}_d{edits}.json"
    if orig.exists() and rep.exists():
        return orig, rep
    folder.mkdir(parents=True, exist_ok=True)
    print(f"building an OTLP/JSON pair of {n} spans in {folder} ...", flush=True)
    spans = _Gen(n, seed).build()
    for path, sp, tid, base in ((orig, spans, "4bf92f3577b34da6a3ce929d0e0e4736", 0),
                                (rep, make_replay(spans, edits, seed + edits), "5cf92f3577b34da6a3ce929d0e0e4737",
                                 1 << 40)):
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps(_envelope(_otlp_spans(sp, tid, base))))
        tmp.replace(path)
    return orig, rep


def parse(path: Path, keep: bool) -> Any:
    """orjson of a whole document, or of every line of JSON Lines; kept or dropped at once."""
    with open(path, "rb") as fh:
        data = fh.read()
    if path.suffix != ".jsonl":
        return orjson.loads(data) if keep else (orjson.loads(data) and None)
    mv, find, loads, out = memoryview(data), data.find, orjson.loads, []
    pos, n = 0, len(data)
    while pos < n:
        end = find(b"\n", pos)
        end = n if end < 0 else end
        if end > pos:
            v = loads(mv[pos:end])
            if keep:
                out.append(v)
        pos = end + 1
    return out


def bare(a: Path, b: Path, keep: bool) -> float:
    gc.disable()
    try:
        t = time.perf_counter()
        kept = [parse(a, keep), parse(b, keep)]
        dt = time.perf_counter() - t
    finally:
        gc.enable()
    del kept
    gc.collect()
    return dt


def diff_process(a: Path, b: Path, python: str, tree: Path = ROOT, cache: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of ``tracetui diff A B --format json``, run from ``tree``.

    The peak is ``/usr/bin/time``'s (``%M``): the ``ru_maxrss`` that ``wait4`` gives for a child of this
    process counts this process's own size at the fork (large after the bare parses), so it is used only
    when ``/usr/bin/time`` is missing. The child runs in ``tree`` (``python -m`` puts the working
    directory first on its path). ``cache``: the index cache's folder (``core.load.index_cache``), on; None: off.
    """
    env = {**os.environ, "PYTHONPATH": str(tree), "TRACETUI_INDEX_CACHE": "0"}
    if cache is not None:
        env.update(TRACETUI_INDEX_CACHE="1", TRACETUI_CACHE_DIR=str(cache))
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_otlp_rss_{os.getpid()}.txt"
    t = time.perf_counter()
    # Started through /usr/bin/time (a small process) when there is one: a process forked from this benchmark
    # inherits its high-water RSS (Linux keeps ``ru_maxrss`` across exec), so the diff would report ours
    launcher = ["/usr/bin/time", "-o", os.devnull] if Path("/usr/bin/time").exists() else []
    p = subprocess.Popen([*launcher, python, "-c", _DIFF_WITH_PEAK, str(out), str(a.resolve()), str(b.resolve())],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tree)
    _, status, _usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read() if p.stderr else b""
    if p.returncode not in (0, 1):
        sys.exit(f"tracetui diff failed ({p.returncode}): {err.decode(errors='replace')[-2000:]}")
    peak = int(out.read_text())
    out.unlink()
    return dt, peak


# ``tracetui diff A B --format json`` in this process, then its own peak RSS plus its largest child's (the
# replay's parser) written to argv[1]: ``wait4``'s figure for the whole process would count only the larger of
# the two.
_DIFF_WITH_PEAK = (
    "import resource, sys\n"
    "from tracetui.cli.main import main\n"
    "out = sys.argv[1]\n"
    "try:\n"
    "    code = main(['diff', sys.argv[2], sys.argv[3], '--format', 'json'])\n"
    "finally:\n"
    "    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "    open(out, 'w').write(str(kb * 1024))\n"
    "sys.exit(code)\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--spans", type=int, default=100_000, help="spans per run (default 100000)")
    ap.add_argument("--edits", type=int, default=10, help="edits in the replay (default 10)")
    ap.add_argument("--repeat", type=int, default=5, help="rounds; medians are printed (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data", help="where generated files go")
    ap.add_argument("--only", choices=["tracetui", "otlp"], help="one format only")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs tracetui")
    ap.add_argument("--before", type=Path, help="another source tree (holding tracetui/) whose diff is timed in the "
                    "same rounds, on the same pairs: before/after ratios from one run")
    ap.add_argument("--tui", action="store_true", help="also the TUI on each pair (bench_tui.measure): launch -> "
                    "first frame and first divergence, peak RSS")
    ap.add_argument("--floor", action="store_true", help="also what `diff` costs besides reading the files: "
                    "interpreter start + imports (a process), diff_traces + the JSON report (in this process, the "
                    "pair read once), as a share of keep")
    ap.add_argument("--reopen", action="store_true", help="also each pair opened again (`diff` and, with --tui, the "
                    "TUI) with the index cache holding both files (core.load.index_cache; filled first)")
    args = ap.parse_args(argv)

    pairs: dict[str, tuple[Path, Path]] = {}
    if args.only != "otlp":
        orig, reps = ensure_data(args.data, args.spans, [args.edits], args.seed)
        pairs["tracetui/1"] = (orig, reps[args.edits])
    if args.only != "tracetui":
        pairs["OTLP/JSON"] = ensure_otlp_pair(args.data, args.spans, args.edits, args.seed)
    trees = {"": ROOT, **({" before": args.before} if args.before else {})}
    rows = {name + tag: (pair, tree) for name, pair in pairs.items() for tag, tree in trees.items()}
    figs: dict[str, dict[str, list[float]]] = {k: {"diff": [], "rss": [], "keep": [], "stream": [], "reopen": []}
                                               for k in rows}
    cache = Path(tempfile.mkdtemp(prefix="bench_otlp_cache_")) if args.reopen else None
    if cache is not None:
        for (a, b), tree in rows.values():
            diff_process(a, b, args.python, tree, cache)  # fills the cache (entries written after the report)
    for r in range(args.repeat):
        for name, ((a, b), tree) in rows.items():
            f = figs[name]
            dt, rss = diff_process(a, b, args.python, tree)
            f["diff"].append(dt)
            f["rss"].append(rss)
            if cache is not None:
                f["reopen"].append(diff_process(a, b, args.python, tree, cache)[0])
            f["keep"].append(bare(a, b, True))
            f["stream"].append(bare(a, b, False))
        print(f"round {r + 1}/{args.repeat} done, load average {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    print(f"{args.spans} spans a run, D={args.edits}, medians of {args.repeat}, "
          f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'format':<18} {'MB/file':>8} {'diff s':>7} {'keep s':>7} {'stream s':>8} {'/keep':>6} {'/stream':>7} "
          f"{'peak MiB':>8} {'/file':>6}")
    for name, ((a, b), _tree) in rows.items():
        f = {k: statistics.median(v) for k, v in figs[name].items() if v}
        big = max(a.stat().st_size, b.stat().st_size)
        print(f"{name:<18} {big / 1e6:8.0f} {f['diff']:7.2f} {f['keep']:7.2f} {f['stream']:8.2f} "
              f"{f['diff'] / f['keep']:6.2f} {f['diff'] / f['stream']:7.2f} {f['rss'] / 2**20:8.0f} "
              f"{f['rss'] / big:6.2f}")
    if args.floor:
        print("the floor besides reading (best of 3): start+imports, diff_traces, report; their sum / keep")
        for name, ((a, b), tree) in rows.items():
            fl = floor(a, b, args.python, tree)
            keep = statistics.median(figs[name]["keep"])
            print(f"{name:<18} {fl[0]:6.2f} {fl[1]:6.2f} {fl[2]:6.2f}   {sum(fl):6.2f} s = {sum(fl) / keep:5.2f}x keep")
    if cache is not None:
        print(f"opened again, the index cache holding both files: {'format':<18} {'diff s':>7} {'/keep':>6}")
        for name in rows:
            f = {k: statistics.median(v) for k, v in figs[name].items() if v}
            print(f"{'':<49} {name:<18} {f['reopen']:7.2f} {f['reopen'] / f['keep']:6.2f}")
    if args.tui:
        tui(pairs, args.repeat)
        if cache is not None:
            print("TUI, opened again (the index cache holding both files):")
            tui(pairs, args.repeat, cache)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
    return 0


def floor(a: Path, b: Path, python: str, tree: Path = ROOT) -> tuple[float, float, float]:
    """What ``tracetui diff A B --format json`` costs besides reading the pair: (interpreter start + the imports
    ``diff`` makes, as a whole process; ``diff_traces``; ``diff_report`` + its JSON), seconds, best of 3."""
    env = {**os.environ, "PYTHONPATH": str(tree), "TRACETUI_INDEX_CACHE": "0"}
    code = ("import tracetui.cli.main, tracetui.cli.commands, tracetui.core.diff, tracetui.core.diff.report, "
            "tracetui.core.diff.labels, tracetui.core.diff.noise, tracetui.cli.render")
    starts = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([python, "-c", code], env=env, cwd=tree, check=True)
        starts.append(time.perf_counter() - t)
    from tracetui.cli.render import dumps_json
    from tracetui.core.diff import diff_traces
    from tracetui.core.diff.report import diff_report
    from tracetui.core.load import read_pair

    pair = read_pair(a, b, keep=False)
    dts, rps = [], []
    for _ in range(3):
        t = time.perf_counter()
        d = diff_traces(*pair)
        t1 = time.perf_counter()
        dumps_json(diff_report(d))
        dts.append(t1 - t)
        rps.append(time.perf_counter() - t1)
    return min(starts), min(dts), min(rps)


def tui(pairs: dict[str, tuple[Path, Path]], repeat: int, cache: Path | None = None) -> None:
    """Print the TUI's figures on each pair (medians of ``repeat`` processes; ``bench_tui.measure``); ``cache``:
    the index cache's folder, on (filled by ``main``'s ``--reopen``), else off."""
    from bench_tui import measure

    if cache is not None:
        os.environ.update(TRACETUI_INDEX_CACHE="1", TRACETUI_CACHE_DIR=str(cache))
    else:
        os.environ["TRACETUI_INDEX_CACHE"] = "0"

    print(f"TUI on the same pairs (120x36, headless; medians of {repeat}; seconds from process launch, 'whole': every "
          "row on screen, from app start)")
    print(f"{'format':<18} {'1st frame':>9} {'1st div':>8} {'early':>6} {'whole':>7} {'peak MiB':>8} {'/files':>7}")
    for name, (a, b) in pairs.items():
        runs = measure(a, b, repeat)
        if runs is None:
            continue
        med = {k: statistics.median(r[k] for r in runs) for k in ("first_frame_cold", "first_divergence_cold", "whole")}
        peak = max(r["rss_peak"] for r in runs) + max(r.get("rss_children", 0) for r in runs)
        size = a.stat().st_size + b.stat().st_size
        early = sum(1 for r in runs if r["first_divergence_early"])
        print(f"{name:<18} {med['first_frame_cold']:9.2f} {med['first_divergence_cold']:8.2f} {early:>3}/{len(runs):<2} "
              f"{med['whole']:7.2f} {peak / 2**20:8.0f} {peak / size:7.2f}", flush=True)
    print(f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    raise SystemExit(main())
