"""Write the README screenshots (``screenshots/*.svg``) from code, by driving the TUI headless.

Each scene opens a pair from ``sample_runs/`` (the big-pair scene: a generated
one, by ``benchmarks/bench_diff.py``'s generator) at a fixed terminal size, waits
for the load worker, presses keys, and exports the screen as SVG
(``App.export_screenshot``). Nothing is captured by hand, so the pictures
follow the code; ``tests/tui/test_screenshots.py`` renders the same scenes on
every test run (writing them only when ``TRACETUI_WRITE_SCREENSHOTS=1``).

Usage::

    python scripts/make_screenshots.py            # write screenshots/*.svg
    python scripts/make_screenshots.py --png      # also PNGs (needs cairosvg and a monospace font)
    python scripts/make_screenshots.py --check    # render every scene, write nothing

Exit status: 0 on success, 1 when a scene's sample pair is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"


@dataclass(frozen=True)
class Scene:
    """One screenshot.

    Attributes:
        name: File stem in ``screenshots/``.
        sample: Folder in ``sample_runs/`` holding ``original.jsonl`` and ``replay.jsonl``.
        keys: Keys pressed after loading (Textual key names).
        size: Terminal ``(columns, rows)``.
        title: Window title drawn in the SVG.
        watch: When > 0, ``--watch`` on a replay file being written: its header and this many span lines
            (in the order the writer writes them: when each span ends), then half of the next line.
        early: When > 0, ``sample`` is ignored: a generated pair of this many spans a run
            (``benchmarks/bench_diff.py``'s generator, 10 edits, seed 3), big enough for the index loader,
            shown on its first divergence before the whole pair is read (the whole read is held back
            until the picture is taken).
    """

    name: str
    sample: str
    keys: tuple[str, ...] = ()
    size: tuple[int, int] = (120, 36)
    title: str = "tracetui"
    watch: int = 0
    early: int = 0
    runs: str = ""
    """When set, ``sample`` is ignored: ``tracetui FILE`` on this file of several runs (the run list)."""


SCENES: tuple[Scene, ...] = (
    Scene("diff-scheduling", "scheduling", title="tracetui — scheduling: first divergence"),
    Scene("diff-subscription-pause", "subscription_pause", title="tracetui — subscription_pause: first divergence"),
    Scene("diff-order-lookup", "order_lookup", title="tracetui — order_lookup: first divergence"),
    Scene("pair-scheduling", "scheduling", ("enter",), title="tracetui — the full pair (enter)"),
    Scene("help", "scheduling", ("question_mark",), title="tracetui — keys (?)"),
    Scene("triage-scheduling", "scheduling", ("t",), title="tracetui — triage (t)"),
    Scene("label-scheduling", "scheduling", ("l",), title="tracetui — label a divergence (l)"),
    Scene("find-scheduling", "scheduling", ("slash", *"slots", "enter", "v"),
          title="tracetui — search (/) and divergent rows only (v)"),
    Scene("watch-scheduling", "scheduling", watch=5, title="tracetui — following a replay being written (--watch)"),
    Scene("early-big-pair", "", early=3000,
          title="tracetui — a big pair: the first divergence before the rest is read"),
    Scene("run-list-tau-bench", "", ("space", "down"), size=(100, 16),
          runs="sample_runs/foreign/tau-bench-airline.json",
          title="tracetui FILE — the runs of a results file: open one, or mark two and diff them"),
)
"""Every scene, in README order."""


def needs_sample(scene: Scene) -> bool:
    """Whether the scene draws a pair of ``sample_runs/`` (else it generates its own)."""
    return not scene.early


def pair_paths(scene: Scene) -> tuple[str, str]:
    """The scene's trace files, relative to the repo root (only base names are drawn)."""
    if scene.runs:
        return scene.runs, scene.runs
    folder = Path("sample_runs") / scene.sample
    return str(folder / "original.jsonl"), str(folder / "replay.jsonl")


@dataclass(frozen=True)
class Rendered:
    """A rendered scene: the SVG, and the app's state when it was taken (for tests).

    Attributes:
        svg: The screenshot.
        screen: Class name of the screen on top (``Screen``, ``PairScreen``, ``HelpScreen``).
        cursor_row: The aligned view's cursor row.
        first_row: Row of the first divergence, or None.
    """

    svg: str
    screen: str
    cursor_row: int
    first_row: int | None


async def render_scene(scene: Scene) -> Rendered:
    """Run the app headless for one scene and take its screenshot.

    Must run with the repo root as the working directory (paths are relative).
    """
    from tracetui.tui import TraceTuiApp
    from tracetui.tui.widgets.aligned_view import AlignedView

    if scene.watch:
        with tempfile.TemporaryDirectory() as folder:
            return await _render_watch(scene, folder)
    if scene.early:
        with tempfile.TemporaryDirectory() as folder:
            return await _render_early(scene, folder)
    if scene.runs:
        return await _render_runs(scene)
    app = TraceTuiApp(*pair_paths(scene))
    async with app.run_test(size=scene.size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        for key in scene.keys:
            await pilot.press(key)
        await pilot.pause()
        await app.workers.wait_for_complete()  # a screen the keys opened may load in a worker (triage)
        await pilot.pause()
        first = app.diff.first if app.diff is not None else None
        return Rendered(
            svg=app.export_screenshot(title=scene.title),
            screen=type(app.screen).__name__,
            cursor_row=app.screen_stack[0].query_one(AlignedView).cursor_row,
            first_row=first.row if first is not None else None,
        )


async def _render_runs(scene: Scene) -> Rendered:
    """``tracetui FILE`` on a file of several runs: the run list, after ``scene.keys``."""
    from tracetui.core.readers import read_runs
    from tracetui.core.readers.summary import summarize_run
    from tracetui.tui import TraceTuiApp

    runs = [summarize_run(t) for t in read_runs(scene.runs).runs]
    app = TraceTuiApp(scene.runs, None, runs=runs)
    async with app.run_test(size=scene.size) as pilot:
        await pilot.pause()
        for key in scene.keys:
            await pilot.press(key)
        await pilot.pause()
        return Rendered(svg=app.export_screenshot(title=scene.title), screen=type(app.screen).__name__,
                        cursor_row=0, first_row=None)


async def _render_watch(scene: Scene, folder: str) -> Rendered:
    """A watch-mode scene: the replay written up to ``scene.watch`` spans and half a line, as a run in progress."""
    import orjson

    from tracetui.tui import TraceTuiApp
    from tracetui.tui.widgets.aligned_view import AlignedView

    original, replay = pair_paths(scene)
    lines = [line for line in Path(replay).read_bytes().splitlines(keepends=True) if line.strip()]
    header, spans = lines[0], lines[1:]
    spans.sort(key=lambda line: orjson.loads(line).get("end_ns") or 0)  # the writer's order: when each span ended
    live = Path(folder) / "replay.jsonl"
    torn = spans[scene.watch]
    live.write_bytes(header.rstrip(b"\n") + b" " * 64 + b"\n" + b"".join(spans[: scene.watch]) + torn[: len(torn) // 2])
    app = TraceTuiApp(original, str(live), watch=True)
    async with app.run_test(size=scene.size) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if app.diff is not None and "being written" in app.screen_stack[0].query_one("StatusBar").watch_text:
                break
        for key in scene.keys:
            await pilot.press(key)
        await pilot.pause()
        first = app.diff.first if app.diff is not None else None
        svg = app.export_screenshot(title=scene.title)
        app.stop_watch()
        return Rendered(svg=svg, screen=type(app.screen).__name__,
                        cursor_row=app.screen_stack[0].query_one(AlignedView).cursor_row,
                        first_row=first.row if first is not None else None)


async def _render_early(scene: Scene, folder: str) -> Rendered:
    """A big pair on its first divergence, read early (``core.early``), the whole read held back."""
    import threading

    from tracetui.core.load import native_index
    from tracetui.tui import TraceTuiApp
    from tracetui.tui.widgets.aligned_view import AlignedView

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks.bench_diff import ensure_data

    original, replays = ensure_data(Path(folder), scene.early, [10], 3)
    go = threading.Event()
    real = native_index.parse_indexed

    def held(src: object, known: object = None, progress: object = None) -> object:
        go.wait()
        return real(src, known, progress)  # type: ignore[arg-type]

    native_index.parse_indexed = held  # type: ignore[assignment]
    try:
        app = TraceTuiApp(str(original), str(replays[10]))
        async with app.run_test(size=scene.size) as pilot:
            for _ in range(1000):
                if app.diff is not None:
                    break
                await pilot.pause(0.02)
            if app.diff is None or not app.diff.partial:
                raise SystemExit(f"{scene.name}: the early first divergence did not come")
            for key in scene.keys:
                await pilot.press(key)
            await pilot.pause()
            first = app.diff.first
            shot = Rendered(svg=app.export_screenshot(title=scene.title), screen=type(app.screen).__name__,
                            cursor_row=app.screen_stack[0].query_one(AlignedView).cursor_row,
                            first_row=first.row if first is not None else None)
        return shot  # the read is released once the app has closed (below), not while it shuts down
    finally:
        go.set()
        native_index.parse_indexed = real  # type: ignore[assignment]


def write_png(svg: str, path: Path) -> None:
    """PNG of an SVG with cairosvg (``output_width`` 1400 px)."""
    import cairosvg  # type: ignore[import-untyped]

    # The SVG's @font-face points Fira Code at a CDN, which an offline renderer cannot load; it then
    # falls back to a proportional font and the columns drift. Name a common local monospace first.
    svg = svg.replace("font-family: Fira Code, monospace", 'font-family: "DejaVu Sans Mono", "Fira Code", monospace')
    cairosvg.svg2png(bytestring=svg.encode(), write_to=str(path), output_width=1400)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--png", action="store_true", help="also write PNGs (cairosvg)")
    parser.add_argument("--check", action="store_true", help="render every scene, write nothing")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    missing = [s.sample for s in SCENES if needs_sample(s) and not Path(pair_paths(s)[0]).exists()]
    if missing:
        print(f"make_screenshots: sample runs missing: {', '.join(sorted(set(missing)))}", file=sys.stderr)
        return 1
    OUT.mkdir(exist_ok=True)
    for scene in SCENES:
        svg = asyncio.run(render_scene(scene)).svg
        if args.check:
            print(f"rendered {scene.name}")
            continue
        target = OUT / f"{scene.name}.svg"
        target.write_text(svg, encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}")
        if args.png:
            write_png(svg, target.with_suffix(".png"))
            print(f"wrote {target.with_suffix('.png').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
