"""Pilot tests of the main screen: where the cursor opens, how keys and clicks move it, what the panes show."""

from __future__ import annotations

from tests.tui.helpers import wait_loaded, widget_text
from tracetui.core.diff import diff_traces
from tracetui.core.readers import read_trace
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.screens.pair_screen import PairBody, PairScreen
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.status_bar import StatusBar


async def test_opens_on_first_divergence(scheduling: tuple[str, str]) -> None:
    """On open, once loaded, the cursor sits on the core's first divergence, that row is on screen, the view has focus.

    (tests/tui/test_screenshots.py checks the cursor row on the other samples.)
    """
    expected = diff_traces(read_trace(scheduling[0]), read_trace(scheduling[1])).first
    assert expected is not None
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.row_count == len(app.diff.rows) > expected.row  # type: ignore[union-attr]
        assert view.cursor_row == expected.row
        top = int(view.scroll_offset.y)
        assert top <= expected.row < top + view.scrollable_content_region.height
        assert app.focused is view


async def test_first_divergence_far_down_is_scrolled_into_view(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A first divergence 300 rows down is where the cursor opens, and the view is scrolled to it."""
    from tests.builders import TraceBuilder
    from tracetui.core.readers.native import write_trace

    for side in ("original", "replay"):
        t = TraceBuilder(prefix=side[0])
        root = t.add("agent", "agent")
        for i in range(400):
            value = "changed" if side == "replay" and i == 300 else "x"
            t.add("tool", "lookup", parent=root, arguments={"i": i, "v": value})
        write_trace(str(tmp_path / f"{side}.jsonl"), t.trace())
    app = TraceTuiApp(tmp_path / "original.jsonl", tmp_path / "replay.jsonl")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.cursor_row == 301
        top = int(view.scroll_offset.y)
        assert top <= 301 < top + view.scrollable_content_region.height


async def test_n_and_p_step_through_divergent_rows(scheduling: tuple[str, str]) -> None:
    """n moves to the next divergent row below the cursor, p to the previous one; both stop at the ends."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        rows = sorted(app.diff.divergent_rows)  # type: ignore[union-attr]
        start = rows.index(view.cursor_row)  # opened on the first divergence, a divergent row
        assert 0 < start < len(rows) - 2  # the sample has divergent rows on both sides of it
        await pilot.press("n")
        assert view.cursor_row == rows[start + 1]
        await pilot.press("n")
        assert view.cursor_row == rows[start + 2]
        await pilot.press("p")
        assert view.cursor_row == rows[start + 1]
        await pilot.press("home", "n")
        assert view.cursor_row == (rows[1] if rows[0] == 0 else rows[0])  # n from row 0 skips row 0 itself
        await pilot.press("home", "p")
        assert view.cursor_row == 0  # nothing above row 0: stays, and says so
        assert view.message == "no divergence above this row"
        await pilot.press("end", "n")
        assert view.cursor_row == view.row_count - 1  # nothing below the last row: stays
        assert view.message == "no divergence below this row"
        await pilot.press("p")
        assert view.cursor_row == max(r for r in rows if r < view.row_count - 1)


async def test_j_k_home_end_pages_move_the_cursor(scheduling: tuple[str, str]) -> None:
    """j/down and k/up move one row, home/end jump to the ends, pagedown/pageup move a screenful, never out of range."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        last = view.row_count - 1
        start = view.cursor_row
        await pilot.press("j", "down")
        assert view.cursor_row == start + 2
        await pilot.press("k")
        assert view.cursor_row == start + 1
        await pilot.press("up")
        assert view.cursor_row == start
        await pilot.press("end", "j")
        assert view.cursor_row == last
        await pilot.press("home", "k")
        assert view.cursor_row == 0
        page = view.scrollable_content_region.height - 1
        await pilot.press("pagedown")
        assert view.cursor_row == min(page, last)
        await pilot.press("pageup")
        assert view.cursor_row == 0


async def test_click_selects_a_row(scheduling: tuple[str, str]) -> None:
    """Clicking a line of the aligned view moves the cursor to that row and the detail pane follows."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.click(AlignedView, offset=(10, 7))
        await pilot.pause()
        assert view.cursor_row == 7
        divergence = app.diff.row_divergence[7]  # type: ignore[union-attr]
        expected = f"row 7 · {divergence.type.value}" if divergence is not None else "row 7 · no divergence"
        assert app.query_one(SpanDetail).text.startswith(expected)


async def test_detail_shows_changed_fields_and_follows_the_cursor(tiny: tuple[str, str]) -> None:
    """The detail pane names the divergence type, the differing field path and both values; it follows the cursor."""
    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_loaded(pilot)
        detail = app.query_one(SpanDetail)
        text = detail.text
        assert "row 2 · args_mismatch · first divergence" in text
        assert "tool.arguments.date" in text
        assert '"2026-11-06"' in text and '"2026-11-07"' in text
        assert "not compared" in text and "tool.call_id" in text  # volatile fields in their own section
        await pilot.press("n")
        text = detail.text
        assert "row 3 · decision_mismatch" in text
        assert "book_first_slot" in text and "offer_alternative_day" in text


async def test_status_line_names_files_counts_and_first_divergence(tiny: tuple[str, str]) -> None:
    """The status line gives the divergences (count, first), both files, span counts and the cursor as
    ``row N of M`` (N 0-based as in the list, M the row count); no "press w" without warnings."""
    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_loaded(pilot)
        text = widget_text(app.query_one(StatusBar))
        assert "6 divergences · first: row 2 args_mismatch" in text
        assert "original.jsonl 6 spans" in text and "replay.jsonl 6 spans" in text
        assert text.rstrip().endswith("row 2 of 7")
        assert "press w" not in text
        await pilot.press("end")
        assert widget_text(app.query_one(StatusBar)).rstrip().endswith("row 6 of 7")


async def test_enter_opens_the_full_pair_and_escape_closes_it(tiny: tuple[str, str]) -> None:
    """enter pushes the pair screen for the cursor row (JSON pretty-printed); escape returns, cursor unchanged."""
    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, PairScreen)
        assert app.screen.row == 2
        body = app.screen.query_one(PairBody).text
        assert "tool.arguments.date" in body
        assert '"date": "2026-11-06",' in body and '"date": "2026-11-07",' in body  # one key per line
        await pilot.press("escape")
        assert not isinstance(app.screen, PairScreen)
        assert app.query_one(AlignedView).cursor_row == 2


async def test_pair_screen_n_steps_and_cursor_follows_on_close(scheduling: tuple[str, str]) -> None:
    """n on the pair screen shows the next divergent row; closing with q puts the main cursor there."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("enter", "n")
        await pilot.pause()
        assert isinstance(app.screen, PairScreen) and app.screen.row == 4
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, PairScreen)
        assert app.query_one(AlignedView).cursor_row == 4
        assert app.return_code is None  # q closed the pair screen, not the app


async def test_help_lists_the_active_bindings(scheduling: tuple[str, str]) -> None:
    """? opens the help screen, generated from the active bindings (ids kept on the entries, not shown); escape closes it."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        ids = {e.binding_id for e in app.screen.entries}
        expected = {"next-divergence", "previous-divergence", "open-pair", "cursor-down", "cursor-up", "help", "quit"}
        assert expected <= ids
        down = next(e for e in app.screen.entries if e.binding_id == "cursor-down")
        assert "j" in down.keys and len(down.keys) == 2  # j and the down arrow, merged
        text = widget_text(app.screen.query_one("#help-table"))
        assert "Cursor to the next divergent row" in text
        assert "next-divergence" not in text and "binding id" not in text  # developer detail, not for users
        assert "set_keymap" not in widget_text(app.screen.query_one("#help-hint"))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_every_visible_binding_has_an_id() -> None:
    """Each user-facing binding of the app, the view and the screens carries a kebab-case id (for set_keymap)."""
    from tracetui.tui.screens.issues_screen import IssuesScreen

    for owner in (TraceTuiApp, AlignedView, PairScreen, PairBody, HelpScreen, IssuesScreen):
        for binding in owner.BINDINGS:
            assert binding.id, f"{owner.__name__}: {binding.key} has no id"  # type: ignore[union-attr]
            assert binding.id == binding.id.lower() and "_" not in binding.id  # type: ignore[union-attr]


async def test_d_hides_and_shows_the_detail_pane(scheduling: tuple[str, str]) -> None:
    """d collapses the detail pane (the aligned view grows) and brings it back."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        before = view.size.height
        await pilot.press("d")
        await pilot.pause()
        assert not app.query_one(SpanDetail).display
        assert view.size.height > before
        await pilot.press("d")
        await pilot.pause()
        assert app.query_one(SpanDetail).display


async def test_fits_80_by_24(scheduling: tuple[str, str]) -> None:
    """In an 80x24 terminal every pane is visible, the view shows rows, the cursor row is on screen; q quits."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.size.height >= 8
        assert app.query_one(SpanDetail).size.height >= 5
        assert app.query_one(StatusBar).size.height == 1
        top = int(view.scroll_offset.y)
        assert top <= view.cursor_row < top + view.size.height
        await pilot.press("q")
    assert app.return_code == 0  # q on the main screen quits


async def test_a_loaded_pair_is_kept_out_of_the_cyclic_collector_until_exit(scheduling: tuple[str, str]) -> None:
    """After loading, gc.freeze() holds the pair (no full-collection pauses while navigating); a reload
    thaws the old pair first; exit thaws everything (benchmarks/bench_tui.py measured the pauses)."""
    import gc

    before = gc.get_freeze_count()
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert gc.get_freeze_count() > before
        app.load_replay(scheduling[1])
        await wait_loaded(pilot)
        assert gc.get_freeze_count() > before and app.diff is not None
    assert gc.get_freeze_count() == 0
