"""The first minutes: on launch nothing covers the first divergence, run names stay legible, field names
break only at their separators (issue 23)."""

from __future__ import annotations

import pytest

from tests.tui.helpers import SAMPLE_RUNS, SAMPLES, sample_pair, wait_loaded
from tracetui.tui import TraceTuiApp
from tracetui.tui.formatting import path_lines
from tracetui.tui.widgets.aligned_layout import ColumnTitle
from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
from tracetui.tui.widgets.notice_line import NoticeLine
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.status_bar import StatusBar

TAU = SAMPLE_RUNS / "foreign" / "tau-bench-airline.json"
SIZES = ((80, 24), (160, 45))


def _screen_text(app: TraceTuiApp) -> list[str]:
    """What the terminal shows, line by line (overlays such as toasts included: they are drawn over)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]  # type: ignore[attr-defined]


def _pairs() -> list[tuple[str, str]]:
    pairs = [sample_pair(name) for name in SAMPLES]
    if TAU.exists():
        pairs.append((str(TAU), f"{TAU}#task-1-trial-1"))  # a multi-run results file, first run not picked
    return pairs


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_launch_leaves_the_first_divergence_uncovered(size: tuple[int, int]) -> None:
    """Every sample pair and a multi-run file, at 80x24 and 160x45: no toast on launch; the detail pane's lines
    (the first divergence's fields) are on screen as the pane draws them; what the app has to say is on the
    notice line, which X hides."""
    for original, replay in _pairs():
        app = TraceTuiApp(original, replay)
        async with app.run_test(size=size) as pilot:
            await wait_loaded(pilot)
            await pilot.pause(0.3)
            assert app.diff is not None and app.diff.first is not None
            assert not app._notifications, [n.title for n in app._notifications]
            detail = app.query_one(SpanDetail)
            assert "first divergence" in detail.text.splitlines()[0]
            screen = "\n".join(_screen_text(app))
            top = detail.region.y
            for n, line in enumerate(detail.text.splitlines()[: detail.scrollable_content_region.height]):
                assert line.strip()[:40] in screen, (original, n, line)
            notices = app.query_one(NoticeLine)
            if notices.notices:
                assert notices.region.bottom <= top  # above the pane, never over it
                await pilot.press("X")
                await pilot.pause()
                assert not notices.notices and notices.region.height == 0


async def test_run_names_stay_legible_at_80x24() -> None:
    """Two trials of one results file: the column titles and the status line name each run whole."""
    if not TAU.exists():
        pytest.skip("sample_runs/foreign/tau-bench-airline.json not present")
    app = TraceTuiApp(f"{TAU}#task-1-trial-0", f"{TAU}#task-1-trial-1")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        header = "\n".join(_screen_text(app)[:1])
        assert "#task-1-trial-0" in header and "#task-1-trial-1" in header
    app = TraceTuiApp(f"{TAU}#task-1-trial-0", f"{TAU}#task-1-trial-1")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot)
        status = app.query_one(StatusBar).content.plain  # type: ignore[union-attr]
        assert "tau-bench-airline.json#task-1-trial-0" in status and "#task-1-trial-1" in status
        assert "original  tau-bench-airline.json#task-1-trial-0" in _screen_text(app)[0]
        assert app.query_one(AlignedHeader) is not None


def test_column_title_drops_the_count_then_the_file_name_start_never_the_run() -> None:
    title = ColumnTitle("original", "tau-bench-airline.json", "task-1-trial-0", "6 spans")
    assert title.fit(60).plain.rstrip() == "original  tau-bench-airline.json#task-1-trial-0  6 spans"
    assert title.fit(48).plain.rstrip() == "original  tau-bench-airline.json#task-1-trial-0"
    assert title.fit(34).plain.rstrip() == "original  tau-benc…#task-1-trial-0"
    assert title.fit(26).plain.rstrip() == "tau-bench-…#task-1-trial-0"
    assert title.fit(10).plain == "…1-trial-0"
    assert all(len(title.fit(w).plain) == w for w in range(1, 70))
    plain = ColumnTitle("replay", "replay.jsonl", "", "9 spans")
    assert plain.fit(80).plain.rstrip() == "replay  replay.jsonl  9 spans"


def test_field_paths_break_at_separators_never_mid_name() -> None:
    assert path_lines("llm.messages[0].content", 19, 2) == ["llm.messages[0]", ".content"]
    assert path_lines("llm.messages[0].content", 30, 2) == ["llm.messages[0].content"]
    # too many parts for two lines: shortened from the left, the field's own name kept
    lines = path_lines("llm.output.tool_calls[0].function.arguments", 12, 2)
    assert lines == ["….function", ".arguments"]
    assert path_lines("a_very_long_single_field_name", 10, 2) == ["…ield_name"]
    for width in range(2, 40):
        for path in ("llm.messages[0].content", "tool_calls[0].name", "x", "a.b.c.d.e.f.g.h"):
            lines = path_lines(path, width, 2)
            assert 1 <= len(lines) <= 2 and all(len(line) <= width for line in lines)
            if "".join(lines) != path:  # shortened: only from the left, ending as the path ends
                assert lines[0].startswith("…") and path.endswith("".join(lines)[1:])


async def test_detail_pane_never_breaks_a_field_name_mid_word() -> None:
    """The scheduling pair at 80x24: `llm.messages[0].content` is on two lines broken before `.content`."""
    app = TraceTuiApp(*sample_pair("scheduling"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        lines = app.query_one(SpanDetail).text.splitlines()
        at = next(i for i, line in enumerate(lines) if "llm.messages[0]" in line)
        assert lines[at + 1].split()[0] == ".content"


# -- one trace alone, and the run list (tracetui FILE) --------------------------------------------------------


def _tau_runs() -> list[dict[str, object]]:
    if not TAU.exists():
        pytest.skip("sample_runs/foreign/tau-bench-airline.json not present")
    from tracetui.core.readers import read_runs
    from tracetui.core.readers.summary import summarize_run

    return [summarize_run(t) for t in read_runs(TAU).runs]


async def test_one_trace_alone_has_one_column_and_no_divergence_keys() -> None:
    original, _ = sample_pair("scheduling")
    app = TraceTuiApp(original, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        screen = _screen_text(app)
        assert screen[0].split()[:2] == ["trace", "original.jsonl"]
        assert not any(" │ " in line for line in screen[1:8])  # no replay column
        assert "divergence" not in screen[0] and "7 spans" in app.query_one(StatusBar).content.plain
        keys = {b.action for _n, b, enabled, _t in app.screen.active_bindings.values() if enabled}
        assert "next_divergence" not in keys and "triage" not in keys and "label" not in keys
        assert "toggle_detail" in keys and "search" in keys
        await pilot.press("down", "down")
        detail = app.query_one(SpanDetail).text
        assert detail.startswith("row 2 · llm chat scripted-scheduler") and "│" not in detail
        await pilot.press("slash", *"slots", "enter")  # search works on one trace
        await pilot.pause()
        assert app.query_one(AlignedView).search_matches


async def test_run_list_opens_one_run_or_diffs_two_marked() -> None:
    runs = _tau_runs()
    app = TraceTuiApp(str(TAU), None, runs=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        from tracetui.tui.screens.run_list import RunListScreen

        assert isinstance(app.screen, RunListScreen)
        text = "\n".join(_screen_text(app))
        for run_id, spans in (("task-1-trial-0", "6"), ("task-1-trial-1", "16"), ("task-1-trial-2", "11")):
            line = next(line for line in text.splitlines() if run_id in line)
            assert spans in line.split() and "reward=" in line
        await pilot.press("space", "space", "enter")  # trial-0 (original) against trial-1 (replay)
        await wait_loaded(pilot)
        assert not app.single and app.diff is not None
        assert app.diff.original.trace_id == "task-1-trial-0" and app.diff.replay.trace_id == "task-1-trial-1"
        await pilot.press("B")
        await pilot.pause()
        assert isinstance(app.screen, RunListScreen)
        await pilot.press("down", "down", "enter")  # trial-2 alone
        await wait_loaded(pilot)
        assert app.single and app.diff is not None and app.diff.original.trace_id == "task-1-trial-2"
        assert len(app.diff.original.spans) == 11


async def test_a_cross_format_pair_says_on_the_status_line_what_it_did_not_compare() -> None:
    """The order_lookup runs as an OTLP export and as tracetui/1 (issue 18): the fields only one
    format records are not compared, and the status line counts them; the first divergence is the
    same-format pair's (row 1)."""
    pair = SAMPLE_RUNS / "order_lookup"
    app = TraceTuiApp(str(pair / "original.otlp.json"), str(pair / "replay.jsonl"))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot)
        status = app.query_one(StatusBar).content.plain  # type: ignore[union-attr]
        assert "first: row 1 decision_mismatch" in status
        assert "fields not comparable" in status
