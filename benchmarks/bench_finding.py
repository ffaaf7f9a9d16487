"""Benchmark: finding things in the aligned view at scale: filters, folds, n/p under them, highlighted rows.

Opens the 100k-span pair of ``bench_tui`` (``benchmarks/_data/``, built by ``bench_tui.py`` first) headless,
then times, as medians of ``--repeat`` runs, the view operations a key triggers (the synchronous work of
the key's action: the visible-rows mapping and the cursor move; the frame is drawn after) and the drawing of
one screenful of rows with a search highlighted. Then times the pure ``tracetui.tui.rowfilter`` functions on
``--rows`` synthetic rows (default 1M).

Usage::

    python benchmarks/bench_finding.py                    # 100k pair (D=1000) + 1M synthetic rows
    python benchmarks/bench_finding.py --pair none        # the synthetic rows only
"""

from __future__ import annotations

import os

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracetui.core.model import SpanKind  # noqa: E402
from tracetui.tui import rowfilter  # noqa: E402

DATA = ROOT / "benchmarks" / "_data"


def _median(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, out


async def bench_view(original: Path, replay: Path, repeat: int) -> None:
    from tracetui.tui import TraceTuiApp
    from tracetui.tui.widgets.aligned_view import AlignedView

    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 36)) as pilot:
        t0 = time.perf_counter()
        while app.diff is None:
            await asyncio.sleep(0.05)
        await pilot.pause()
        print(f"pair loaded in {time.perf_counter() - t0:.1f} s: {len(app.diff.rows):,} rows, "
              f"{len(app.diff.divergent_rows):,} divergent")
        view = app.query_one(AlignedView)
        rows = view.row_count
        figures: list[tuple[str, float]] = []

        def timed(name: str, fn) -> None:
            ms, _ = _median(fn, repeat)
            figures.append((name, ms))

        def toggle_v() -> None:
            view.action_filter_divergent()
            view.action_filter_divergent()

        timed("v on + off (2 recomputes)", toggle_v)
        timed("kind codes (first s, once per pair)", lambda: (setattr(view, "_codes", None), view.kind_codes()))
        timed("set_kinds {tool, llm} + back to all", lambda: (view.set_kinds({SpanKind.TOOL, SpanKind.LLM}),
                                                           view.set_kinds(None)))
        view.cursor_row = 0
        timed("C collapse to depth 0 + Z expand all", lambda: (view.action_collapse_to_depth(),
                                                            view.action_expand_all()))
        from tracetui.tui import rowfilter as rf

        depths = view._row_depths()
        mid = next(r for r in range(rows // 2, rows) if rf.has_children(depths, r))
        view.cursor_row = mid
        timed("z fold + unfold at a mid row", lambda: (view.action_toggle_fold(), view.action_toggle_fold()))
        view.cursor_row = next(r for r in range(rows) if depths[r] == 1)
        view.action_collapse_to_depth()  # the second level collapsed, then the filters on top
        view.set_kinds({SpanKind.TOOL, SpanKind.LLM})
        view.action_filter_divergent()
        view.cursor_row = view.row_at_line(0)
        print(f"  under filters + folds: {view.filter_summary}")

        def n_p() -> None:
            view.action_next_divergence()
            view.action_previous_divergence()

        timed("n + p under kinds+v+folds (each may expand a fold)", n_p)
        view.action_expand_all()
        view.set_kinds(None)
        view.action_filter_divergent()
        view.search_term = "tool"
        view._set_highlight("tool")
        view.search_matches = list(range(0, rows, 3))
        height = view.scrollable_content_region.height

        def draw() -> None:
            view._strips.clear()
            for y in range(height):
                view.render_line(y)

        timed(f"draw {height} lines, search highlighted", draw)
        view._set_highlight("")

        def draw_plain() -> None:
            view._strips.clear()
            for y in range(height):
                view.render_line(y)

        timed(f"draw {height} lines, no search", draw_plain)
        for name, ms in figures:
            print(f"  {name:55s} {ms:8.1f} ms")


def bench_pure(n: int, repeat: int) -> None:
    rnd = random.Random(1)
    depths, d = [], 0
    for _ in range(n):
        depths.append(d)
        r = rnd.random()
        if r < 0.3 and d < 12:
            d += 1
        elif r < 0.6 and d:
            d -= rnd.randint(1, d)
    rows = [SimpleNamespace(original=i, replay=i if i % 50 else None, depth=depths[i]) for i in range(n)]
    kinds = list(SpanKind)
    spans = [SimpleNamespace(kind=kinds[i % 7]) for i in range(n)]
    diff = SimpleNamespace(rows=rows, original=SimpleNamespace(spans=spans), replay=SimpleNamespace(spans=spans))
    divergent = sorted(rnd.sample(range(n), n // 50))
    print(f"pure rowfilter on {n:,} synthetic rows ({len(divergent):,} divergent, depth <= 12):")
    out: dict[str, object] = {}

    def timed(name: str, fn) -> None:
        ms, out[name] = _median(fn, repeat)
        print(f"  {name:55s} {ms:8.1f} ms")

    timed("row_depths", lambda: rowfilter.row_depths(rows))
    dep = out["row_depths"]
    timed("row_kind_codes (once per pair)", lambda: rowfilter.row_kind_codes(diff))
    codes = out["row_kind_codes (once per pair)"]
    timed("kind_counts", lambda: rowfilter.kind_counts(codes))
    timed("selected_flags kinds + divergent", lambda: rowfilter.selected_flags(
        n, codes=codes, kinds={SpanKind.TOOL, SpanKind.LLM}, divergent=divergent))
    flags = out["selected_flags kinds + divergent"]
    timed("heads_at_depth 1", lambda: rowfilter.heads_at_depth(dep, 1))
    heads = out["heads_at_depth 1"]
    timed(f"subtree_ends of {len(heads):,} heads", lambda: rowfilter.subtree_ends(dep, heads))
    ends = out[f"subtree_ends of {len(heads):,} heads"]
    timed("fold_ranges", lambda: rowfilter.fold_ranges(ends, ends))
    ranges = out["fold_ranges"]
    timed("subtree_end of one mid row", lambda: rowfilter.subtree_end(dep, n // 2))
    timed("selected_rows (a filter change)", lambda: rowfilter.selected_rows(flags))
    base = out["selected_rows (a filter change)"]
    timed("visible_rows (filters only)", lambda: rowfilter.visible_rows(n, base, []))
    timed("visible_rows (folds only)", lambda: rowfilter.visible_rows(n, None, ranges))
    timed("visible_rows (filters + folds)", lambda: rowfilter.visible_rows(n, base, ranges))
    head = next(r for r in range(n // 2, n) if rowfilter.has_children(dep, r))
    one = {head: rowfilter.subtree_end(dep, head)}
    timed("one fold at 1M: subtree_end + fold_ranges + visible_rows", lambda: rowfilter.visible_rows(
        n, None, rowfilter.fold_ranges(one, {head: rowfilter.subtree_end(dep, head)})))
    shown = rowfilter.visible_rows(n, base, ranges)
    print(f"  mapping size: {len(shown or []):,} rows, {(shown.itemsize * len(shown)) / 1e6 if shown else 0:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pair", default="100000", help="spans of the bench_tui pair to open, or none")
    parser.add_argument("--edits", default="1000", help="D of the replay (10 or 1000)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.pair != "none":
        original = DATA / f"original_n{args.pair}_s1.jsonl"
        replay = DATA / f"replay_n{args.pair}_s1_d{args.edits}.jsonl"
        if not original.exists() or not replay.exists():
            sys.exit(f"missing {original.name} or {replay.name}: run benchmarks/bench_tui.py -n {args.pair} first")
        asyncio.run(bench_view(original, replay, args.repeat))
    bench_pure(args.rows, args.repeat)


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    main()
