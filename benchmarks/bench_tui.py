"""Benchmark: the TUI (``TraceTuiApp``) on a big pair, headless, against the budgets of issue 7.

Builds (once, cached under ``benchmarks/_data/``, with ``bench_diff``'s
generator) a synthetic original run of N spans and a replay of it with D edits,
then opens the pair in ``TraceTuiApp(original, replay).run_test(size=(120, 36))``
``--repeat`` times, each in a fresh Python process (so that every run pays the
imports and its peak RSS is its own), and prints medians of the figures below.
As ``tracetui ORIGINAL REPLAY`` does, the read's first step (``PairRead``: the
files opened, the replay's child process forked) is taken before Textual is
imported, and the app takes it over; ``--no-prefetch`` starts it at mount
instead. Imports compile from source when ``PYTHONDONTWRITEBYTECODE`` is set
(it is in the development sandbox): ~0.15 s more on every "from launch" figure.

- import: process launch -> ``tracetui.tui`` imported (interpreter start included);
- first frame: app start (just before ``run_test``) -> the first frame of the
  main screen with the aligned view laid out (the loading state while the load
  worker reads); also from process launch (what a user waits for);
- first divergence on screen: app start -> the first frame in which the load
  worker's diff is shown, the view's ``cursor_row`` is ``diff.first.row`` and
  that row lies inside the view's visible rows; also from process launch;
- ``n``/``p``, pagedown: key -> frame, the median of 20 presses each;
- peak RSS of the process (``ru_maxrss``) plus the largest peak of its child processes (the
  loader parses one file in a child: ``load.read_pair``), against the two files' total size.

How a "frame" is detected: headless Textual still lays out and renders every
screen update (the compositor calls each widget's ``render_line``) and hands the
result to ``App._display``, which only skips turning it into terminal bytes.
The measured app is a subclass whose ``_display`` does that last step too
(``CompositorUpdate.render_segments``, the cost a terminal adds) and then
timestamps the frame with the state it shows (main screen on top, the view's
height, diff or not, cursor row, scroll offset). So a figure ends when the
frame a terminal would receive is ready, including Textual's 60 fps update
timer, not when a handler returned.

Keys are sent the way the terminal driver sends them (``driver.send_message``
of a ``Key`` event), not through ``Pilot.press``, whose idle waits would be
timed too; each press waits for the frame that shows the moved cursor, then for
the app to settle before the next. ``n`` runs down the divergences and ``p``
back up (turning at the ends so every press moves the cursor); pagedown turns
into pageup near the last row the same way.

Usage::

    python benchmarks/bench_tui.py                    # N=100k, D=10, 3 repeats
    python benchmarks/bench_tui.py --spans 1000000    # the 1M pair (~4 GB per file)
    python benchmarks/bench_tui.py -n 300 --repeat 1  # quick check
    python benchmarks/bench_tui.py --otlp             # the same pair as OTLP/JSON
    python benchmarks/bench_tui.py --otlp --tree DIR  # ... read by tracetui of another tree
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if os.environ.get("BENCH_TUI_TREE"):  # --tree: the measured process imports tracetui from another tree
    sys.path.insert(0, os.environ["BENCH_TUI_TREE"])

SIZE = (120, 36)
PRESSES = 20
FIRST_FRAME_BUDGET = 0.3
FIRST_DIVERGENCE_BUDGET = 2.0
KEY_BUDGET = 0.050
MEMORY_BUDGET = 3.0  # peak RSS / files' size, for the 1M pair
WAIT = 600.0  # seconds before a run is given up (the 1M load is long)


# -- the measured process ----------------------------------------------------------


def child(original: str, replay: str, launched: float, prefetch: bool = True) -> dict[str, Any]:
    """Open the pair in the headless app once; return the figures (seconds, bytes). With ``prefetch``
    the read starts before Textual is imported, as ``tracetui ORIGINAL REPLAY`` starts it
    (``core.pairread.PairRead``), and the app takes it over."""
    prefetched = None
    if prefetch:
        from tracetui.core.load.pairread import PairRead

        prefetched = PairRead(original, replay)
    import asyncio

    from textual import events
    from textual._compositor import CompositorUpdate

    import tracetui.tui.app as app_module
    from tracetui.tui import TraceTuiApp
    from tracetui.tui.widgets.aligned_view import AlignedView

    imported = time.perf_counter()

    class Frame(NamedTuple):
        """A frame handed to the terminal, and what it showed."""

        t: float
        cpu: float  # CPU seconds of this process (all its threads) when the frame was handed over
        loaded: bool
        whole: bool  # the whole pair's diff (not the early first rows: core.early)
        cursor: int
        top: int
        height: int

    class BenchApp(TraceTuiApp):
        """``TraceTuiApp`` that renders each frame to terminal bytes and timestamps it."""

        CSS_PATH = str(Path(app_module.__file__).with_name("app.tcss"))  # relative paths resolve from here
        frames: list[Frame]

        def _display(self, screen: Any, renderable: Any) -> None:
            if renderable is not None and not self._batch_count and self._running and not self._closed:
                if isinstance(renderable, CompositorUpdate):
                    renderable.render_segments(self.console)
                if screen is self.screen_stack[0]:
                    view = screen.query_one(AlignedView)
                    self.frames.append(Frame(time.perf_counter(), time.process_time(), self.diff is not None,
                                             self.diff is not None and not self.diff.partial, view.cursor_row,
                                             int(view.scroll_offset.y), view.scrollable_content_region.height))
            super()._display(screen, renderable)

    def rss() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux

    out: dict[str, Any] = {"import": imported - launched}
    devnull = open(os.devnull, "w")  # noqa: SIM115 - where render_segments' console writes, for the whole run
    import gc

    gc_pauses: list[tuple[int, float]] = []  # (generation, seconds) of each collection, to explain key outliers
    gc_started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            gc_pauses.append((info["generation"], time.perf_counter() - gc_started[0]))

    async def run() -> None:
        app = BenchApp(original, replay, prefetched=prefetched)
        app.frames = []
        app.console.file = devnull
        start = time.perf_counter()
        cpu_start = time.process_time()
        async with app.run_test(size=SIZE) as pilot:
            view = app.query_one(AlignedView)
            deadline = start + WAIT
            # Frames carry their own timestamps: the waits below only decide when to look, and
            # mostly block (no polling while the load worker holds the GIL, so as not to slow it).
            first_frame = first_div = None
            while first_frame is None and time.perf_counter() < deadline:
                first_frame = next((f for f in app.frames if f.height > 0), None)
                await asyncio.sleep(0.001)
            if first_frame is not None:
                out["first_frame_loading"] = not first_frame.loaded
                out["rss_first_frame"] = rss()
            await app.workers.wait_for_complete()
            while first_div is None and time.perf_counter() < deadline:
                if app.load_error is not None:
                    raise SystemExit(f"load failed: {app.load_error.side}: {app.load_error.reason}")
                if app.diff is not None:
                    first = app.diff.first
                    row = first.row if first is not None else 0
                    first_div = next((f for f in app.frames if f.loaded and f.cursor == row
                                      and f.top <= row < f.top + f.height), None)
                await asyncio.sleep(0.005)
            if first_frame is None or first_div is None:
                raise SystemExit(f"no frame with the first divergence after {WAIT:.0f} s")
            assert app.diff is not None
            out["first_frame"] = first_frame.t - start
            out["first_frame_cold"] = first_frame.t - launched
            out["first_divergence"] = first_div.t - start
            out["first_divergence_cold"] = first_div.t - launched
            out["first_divergence_cpu"] = first_div.cpu - cpu_start
            out["first_divergence_early"] = first_div.loaded and not first_div.whole
            whole = next((f for f in app.frames if f.whole), None)
            out["whole"] = (whole.t if whole is not None else time.perf_counter()) - start
            out["rows"] = len(app.diff.rows)
            out["divergences"] = len(view.divergent_rows)
            await pilot.pause()

            async def press(key: str) -> float:
                """Send ``key`` as the driver does; seconds until a frame shows the cursor moved."""
                before, seen = view.cursor_row, len(app.frames)
                t = time.perf_counter()
                app._driver.send_message(events.Key(key, key if len(key) == 1 else None))  # type: ignore[union-attr]
                stop = t + 10
                while time.perf_counter() < stop:
                    moved = next((f for f in app.frames[seen:] if f.cursor != before), None)
                    if moved is not None:
                        await pilot.pause()  # settle before the next press
                        return moved.t - t
                    await asyncio.sleep(0.0005)
                raise SystemExit(f"{key}: no frame with the cursor moved after 10 s")

            gc.callbacks.append(on_gc)
            rows = view.divergent_rows
            div_times: list[float] = []
            if len(rows) >= 2:
                forward = True
                for _ in range(PRESSES):
                    at = view.cursor_row
                    if forward and at >= rows[-1]:
                        forward = False
                    elif not forward and at <= rows[0]:
                        forward = True
                    div_times.append(await press("n" if forward else "p"))
            out["np"] = div_times
            page = max(1, view.scrollable_content_region.height - 1)
            page_times: list[float] = []
            if view.row_count > page + 1:
                down = True
                for _ in range(PRESSES):
                    at = view.cursor_row
                    if down and at + page >= view.row_count - 1:
                        down = False
                    elif not down and at - page <= 0:
                        down = True
                    page_times.append(await press("pagedown" if down else "pageup"))
            out["page"] = page_times
            gc.callbacks.remove(on_gc)
            out["gc_full"] = [t for g, t in gc_pauses if g == 2]
            app.exit()
        out["rss_peak"] = rss()
        # The loader's child processes (load.read_pair): the largest one's peak, counted on top of ours.
        out["rss_children"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024

    asyncio.run(run())
    return out


# -- the driver ---------------------------------------------------------------------


def build(folder: Path, n: int, edits: int, seed: int) -> tuple[Path, Path]:
    """The pair of ``bench_diff.ensure_data``, generated in a child process (its memory is not ours)."""
    from benchmarks.bench_diff import ensure_data

    orig = folder / f"original_n{n}_s{seed}.jsonl"
    rep = folder / f"replay_n{n}_s{seed}_d{edits}.jsonl"
    if not (orig.exists() and rep.exists()):
        code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
                "from benchmarks.bench_diff import ensure_data; "
                "ensure_data(Path(sys.argv[2]), int(sys.argv[3]), [int(sys.argv[4])], int(sys.argv[5]))")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, str(ROOT), str(folder), str(n), str(edits), str(seed)], check=True)
        print(f"  built in {time.perf_counter() - t:.0f} s", flush=True)
    got_orig, replays = ensure_data(folder, n, [edits], seed)  # already there: just the paths
    assert got_orig == orig and replays[edits] == rep
    return orig, rep


def measure(orig: Path, rep: Path, repeat: int, *, mem_limit_gb: float | None = None, prefetch: bool = True,
            tree: Path | None = None) -> list[dict[str, Any]] | None:
    """``repeat`` measured runs of the app on the pair, each in a fresh process (``child``'s figures, one dict
    a run: seconds from app start and from launch, CPU, RSS); None (the failure printed) if a run fails.
    Also used by ``bench_otlp.py --tui``."""
    runs: list[dict[str, Any]] = []
    for _ in range(repeat):
        cmd = [sys.executable, str(Path(__file__).resolve())]
        if mem_limit_gb:
            cmd += ["--mem-limit-gb", str(mem_limit_gb)]
        if not prefetch:
            cmd.append("--no-prefetch")
        launched = time.perf_counter()  # CLOCK_MONOTONIC: the child's perf_counter is on the same clock
        env = {**os.environ, **({"BENCH_TUI_TREE": str(tree)} if tree else {})}
        # through /usr/bin/time (a small process) when there is one: a process forked from a big caller
        # (bench_otlp.py after its parses) inherits the caller's high-water RSS (kept across exec)
        launcher = ["/usr/bin/time", "-o", os.devnull] if Path("/usr/bin/time").exists() else []
        proc = subprocess.run([*launcher, *cmd, "--child", str(orig), str(rep), repr(launched)],
                              check=False, capture_output=True, text=True, timeout=WAIT + 120, env=env)
        if proc.returncode != 0:
            print(f"measured run failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}", file=sys.stderr)
            return None
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return runs


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--spans", type=int, default=100_000, help="spans per run (default 100000)")
    ap.add_argument("--edits", type=int, default=10, help="edits in the replay (default 10)")
    ap.add_argument("--repeat", type=int, default=3, help="runs (processes); medians are printed (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data", help="where synthetic files go")
    ap.add_argument("--mem-limit-gb", type=float, default=None,
                    help="address-space limit of each measured process (guards a shared machine at 1M)")
    ap.add_argument("--no-prefetch", action="store_true",
                    help="start the read when the app mounts, not before Textual is imported as the CLI does")
    ap.add_argument("--otlp", action="store_true",
                    help="the same runs as OTLP/JSON documents (bench_otlp.ensure_otlp_pair) instead of tracetui/1")
    ap.add_argument("--tree", type=Path, help="measure tracetui as found in this source tree (an older commit)")
    ap.add_argument("--child", nargs=3, metavar=("ORIGINAL", "REPLAY", "LAUNCHED"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        if args.mem_limit_gb:
            limit = int(args.mem_limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        original, replay, launched = args.child
        print(json.dumps(child(original, replay, float(launched), prefetch=not args.no_prefetch)))
        return 0

    if args.otlp:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_otlp import ensure_otlp_pair

        orig, rep = ensure_otlp_pair(args.data, args.spans, args.edits, args.seed)
    else:
        orig, rep = build(args.data, args.spans, args.edits, args.seed)
    if args.tree:
        print(f"tracetui from {args.tree}")
    size = orig.stat().st_size + rep.stat().st_size
    print(f"files: {orig.name} + {rep.name}: {size / 1e6:.0f} MB, {args.spans} spans each; D={args.edits}")
    try:
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    except OSError:
        pass

    runs = measure(orig, rep, args.repeat, mem_limit_gb=args.mem_limit_gb, prefetch=not args.no_prefetch,
                   tree=args.tree)
    if runs is None:
        return 1

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    def key_med(key: str) -> tuple[float, float] | None:
        samples = [t for r in runs for t in r[key]]
        if not samples:
            return None
        return statistics.median(samples), max(samples)

    last = runs[-1]
    print(f"rows {last['rows']}, divergent rows {last['divergences']}; terminal {SIZE[0]}x{SIZE[1]}; "
          f"medians of {args.repeat} runs (one process each); the read started "
          f"{'at app start (--no-prefetch)' if args.no_prefetch else 'before Textual is imported, as the CLI does'}:")
    print(f"  import tracetui.tui (from launch)     {med('import'):7.3f} s")
    ff, ffc = med("first_frame"), med("first_frame_cold")
    loading = all(r["first_frame_loading"] for r in runs)
    print(f"  first frame (from app start)          {ff:7.3f} s   budget < {FIRST_FRAME_BUDGET} s: {verdict(ff < FIRST_FRAME_BUDGET)}"
          f"{'  (loading state)' if loading else '  (data already shown)'}")
    print(f"  first frame (from process launch)     {ffc:7.3f} s   budget < {FIRST_FRAME_BUDGET} s: "
          f"{verdict(ffc < FIRST_FRAME_BUDGET)}")
    fd, fdc = med("first_divergence"), med("first_divergence_cold")
    print(f"  first divergence on screen (app)      {fd:7.3f} s   budget < {FIRST_DIVERGENCE_BUDGET} s: "
          f"{verdict(fd < FIRST_DIVERGENCE_BUDGET)}")
    print(f"  first divergence on screen (launch)   {fdc:7.3f} s   budget < {FIRST_DIVERGENCE_BUDGET} s: "
          f"{verdict(fdc < FIRST_DIVERGENCE_BUDGET)}")
    print(f"  ... CPU of the app process till then  {med('first_divergence_cpu'):7.3f} s   (all its threads; "
          f"wall minus CPU: waiting for the loader child, or for a core)")
    early = sum(1 for r in runs if r["first_divergence_early"])
    print(f"  ... shown from the early rows         {early:7d} of {len(runs)} runs (core.early; else from the whole pair)")
    print(f"  whole pair on screen (app)            {med('whole'):7.3f} s   (every row, n/p to the end, search, filters)")
    for key, label in (("np", "n/p key -> frame"), ("page", "pagedown key -> frame")):
        got = key_med(key)
        if got is None:
            print(f"  {label:<37} {'n/a':>7}     (too few divergent rows or rows to move)")
        else:
            over = sum(1 for r in runs for t in r[key] if t >= KEY_BUDGET)
            print(f"  {label:<37} {got[0] * 1000:7.1f} ms  budget < {KEY_BUDGET * 1000:.0f} ms: "
                  f"{verdict(got[0] < KEY_BUDGET)}  (max {got[1] * 1000:.1f} ms; {over} of "
                  f"{sum(len(r[key]) for r in runs)} presses over)")
    full = [t for r in runs for t in r["gc_full"]]
    if full:
        print(f"  full GC collections during the keys   {len(full):7d}     longest {max(full) * 1000:.0f} ms "
              f"(a key press that waits for one shows it)")
    own = max(r["rss_peak"] for r in runs)
    kids = max(r.get("rss_children", 0) for r in runs)
    peak = own + kids  # an upper bound: the child's peak and ours need not coincide
    base = statistics.median(r["rss_first_frame"] for r in runs)
    ratio = peak / size
    print(f"  RSS at first frame                    {base / 2**20:7.0f} MiB")
    print(f"  peak RSS (max of the runs)            {own / 2**20:7.0f} MiB   + largest loader child {kids / 2**20:.0f} MiB")
    print(f"  peak RSS (+ child) / files' size      {ratio:7.2f}     budget <= {MEMORY_BUDGET:.0f}x (1M pair): "
          f"{verdict(ratio <= MEMORY_BUDGET)}  (files {size / 2**20:.0f} MiB)")
    try:
        load = os.getloadavg()
        print(f"machine: load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at end")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    sys.exit(main())
