"""Finding things (issue 7, item 3): `/` search with `]`/`[` match stepping, the divergent-only filter (`v`),
jump to a span id (`:`), and the pure helpers behind them (tracetui.tui.search).

The scheduling sample (tests/tui/conftest.py) has 9 rows; rows 0, 2, 4, 6, 7, 8 are divergent and the cursor
opens on row 2. Row 5 is the original's `list_open_slots` call (date 2026-11-05), row 7 the replay's extra one
(date 2026-11-06); the LLM rows 4, 6, 8 quote earlier tool calls in their messages.
"""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.helpers import wait_loaded
from tracetui.core.diff import diff_traces
from tracetui.core.readers import read_trace
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.screens.search_bar import SearchBar
from tracetui.tui.search import (
    SearchIndex,
    SpanLookupError,
    breadcrumb,
    find_span,
    step_match,
)
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail

NEW_KEYS = ("search", "next-match", "previous-match", "filter-divergent", "jump-to-span")


async def _submit(pilot: Pilot[object], opener: str, text: str) -> None:
    """Open the bar with ``opener`` (`/` or `:`), type ``text``, press enter, wait for the search worker."""
    await pilot.press(opener)
    await pilot.pause()
    assert isinstance(pilot.app.screen, SearchBar)
    await pilot.press(*text)
    assert pilot.app.screen.query_one(Input).value == text
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
    assert not isinstance(pilot.app.screen, SearchBar)


async def test_search_a_tool_name_steps_and_wraps(scheduling: tuple[str, str]) -> None:
    """`/` + a span/tool name finds both list_open_slots calls; `]` and `[` step between them and wrap around."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.cursor_row == 2
        await _submit(pilot, "/", "execute_tool LIST_open_slots")  # any case
        assert view.search_matches == [5, 7]
        assert view.cursor_row == 5  # the first match below the cursor
        assert view.message == "match 1 of 2 for 'execute_tool LIST_open_slots'"
        assert app.query_one(SpanDetail).text.startswith("row 5")  # the detail pane shows the match's pair
        await pilot.press("right_square_bracket")
        assert view.cursor_row == 7
        await pilot.press("right_square_bracket")
        assert view.cursor_row == 5 and "wrapped" in view.message
        await pilot.press("left_square_bracket")
        assert view.cursor_row == 7 and "wrapped" in view.message
        await pilot.press("left_square_bracket")
        assert view.cursor_row == 5 and "wrapped" not in view.message
        assert app.focused is view
        await pilot.pause()
        said = [n.message for n in app._notifications if n.title == "search"]
        assert said == ["match 1 of 2 for 'execute_tool LIST_open_slots'"]  # the last one, not a pile of five


async def test_search_an_argument_value(scheduling: tuple[str, str]) -> None:
    """An argument value (the replay's extra call asks for 2026-11-06) is found, on the replay side too."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.press("end")  # from the last row, the next match wraps to the first
        await _submit(pilot, "/", "2026-11-06")
        assert 7 in view.search_matches and 5 not in view.search_matches
        assert view.cursor_row == view.search_matches[0]
        assert "wrapped" in view.message
        # the bar opens on the last search, selected
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchBar) and app.screen.query_one(Input).value == "2026-11-06"
        await pilot.press("escape")


async def test_no_match_says_so(scheduling: tuple[str, str]) -> None:
    """A term found nowhere: no matches, the cursor stays, a notification says so; `]` says it again."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.press("right_square_bracket")  # before any search
        assert "press /" in view.message
        await _submit(pilot, "/", "no-such-thing")
        assert view.search_matches == [] and view.cursor_row == 2
        assert view.message == "no match for 'no-such-thing'"
        assert any("no match" in n.message for n in app._notifications)
        await pilot.press("left_square_bracket")
        assert view.cursor_row == 2 and "no match" in view.message


async def test_escape_closes_the_bar(scheduling: tuple[str, str]) -> None:
    """escape closes the bar without searching or moving; focus goes back to the rows."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.press("slash", *"slots")
        assert isinstance(app.screen, SearchBar)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert view.search_term == "" and view.search_matches == [] and view.cursor_row == 2
        assert app.focused is view
        await pilot.press("colon")
        await pilot.pause()
        assert isinstance(app.screen, SearchBar) and app.screen.mode == "span"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0] and view.cursor_row == 2


async def test_filter_shows_only_divergent_rows_and_restores(scheduling: tuple[str, str]) -> None:
    """v: only divergent rows are drawn (their own row numbers), movement skips the others, n/p still work;
    v again shows every row; the cursor stays on its row when shown, else goes to the nearest one shown."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        divergent = sorted(app.diff.divergent_rows)  # type: ignore[union-attr]
        assert divergent == [0, 2, 4, 6, 7, 8]
        await pilot.press("v")
        await pilot.pause()
        assert view.filtered and view.line_count == len(divergent)
        assert [view.row_at_line(i) for i in range(view.line_count)] == divergent
        drawn = [view.render_line(y).text for y in range(view.line_count + 1)]
        assert [int(line[:3]) for line in drawn[:-1]] == divergent  # each line shows its own row
        assert drawn[-1].strip() == ""
        assert view.cursor_row == 2 and "divergent" in view.message
        await pilot.press("j")
        assert view.cursor_row == 4
        await pilot.press("j")
        assert view.cursor_row == 6
        assert app.query_one(SpanDetail).text.startswith("row 6")
        await pilot.press("p")
        assert view.cursor_row == 4
        await pilot.press("n", "n")
        assert view.cursor_row == 7
        await pilot.press("end")
        assert view.cursor_row == 8
        await pilot.press("home")
        assert view.cursor_row == 0
        await pilot.press("v")
        await pilot.pause()
        assert not view.filtered and view.line_count == view.row_count == 9
        assert view.cursor_row == 0 and "all 9 rows" in view.message
        await pilot.press("j", "j", "j")
        assert view.cursor_row == 3
        await pilot.press("v")  # row 3 is not divergent: nearest shown (2 and 4 are as near: the one below)
        await pilot.pause()
        assert view.filtered and view.cursor_row == 4
        # a jump to a hidden row shows every row again
        await _submit(pilot, ":", "21586f207f8e5332")
        assert view.cursor_row == 3 and not view.filtered and view.line_count == 9


async def test_search_under_the_filter_steps_through_shown_matches(scheduling: tuple[str, str]) -> None:
    """Under the filter, ]/[ visit only the matches shown."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.press("v")
        await _submit(pilot, "/", "execute_tool list_open_slots")
        assert view.search_matches == [5, 7]
        assert view.cursor_row == 7 and view.filtered  # row 5 is not divergent
        await pilot.press("right_square_bracket")
        assert view.cursor_row == 7 and "1 of 1" in view.message


async def test_jump_to_span_id_full_and_prefix(scheduling: tuple[str, str]) -> None:
    """`:` + a full id (original side) or a unique prefix (replay side) moves the cursor; unknown or ambiguous
    ids leave it where it is and say why."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await _submit(pilot, ":", "21586f207f8e5332")
        assert view.cursor_row == 3 and "original span 21586f207f8e5332" in view.message
        await _submit(pilot, ":", "80a4f0")
        assert view.cursor_row == 7 and "replay span 80a4f09e7684834c" in view.message
        assert app.query_one(SpanDetail).text.startswith("row 7")
        await _submit(pilot, ":", "deadbeef")
        assert view.cursor_row == 7 and "no span id" in view.message
        await _submit(pilot, ":", "c")  # cf3109f61b5def42 and c5117ccee34215c5, both on the replay side
        assert view.cursor_row == 7 and "2 span ids start with 'c'" in view.message


async def test_help_lists_the_new_keys_and_the_footer_does_not(scheduling: tuple[str, str]) -> None:
    """Every new key has an id and a tooltip, is listed in the help, and stays out of the footer."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        active = {b.binding.id: b.binding for b in app.screen.active_bindings.values() if b.binding.id}
        for key_id in NEW_KEYS:
            assert key_id in active and active[key_id].tooltip and not active[key_id].show
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = {e.binding_id: e.keys for e in app.screen.entries}
        assert set(NEW_KEYS) <= set(listed)
        assert listed["search"] == ("/",) and listed["jump-to-span"] == (":",)


# -- the pure helpers -----------------------------------------------------------


def test_step_match_wraps() -> None:
    assert step_match([], 3, 1) is None
    assert step_match([2, 5, 9], 2, 1) == (5, False)
    assert step_match([2, 5, 9], 9, 1) == (2, True)
    assert step_match([2, 5, 9], 2, -1) == (9, True)
    assert step_match([2, 5, 9], 6, -1) == (5, False)
    assert step_match([4], 4, 1) == (4, True)


def test_index_find_span_and_breadcrumb(scheduling: tuple[str, str]) -> None:
    diff = diff_traces(read_trace(scheduling[0]), read_trace(scheduling[1]))
    index = SearchIndex(diff)
    assert not index.build(lambda: True) and index.size == 0  # cancelled before the first batch
    assert index.find("EXECUTE_TOOL list_open_slots") == [5, 7] and index.complete
    assert index.find("") == []
    assert find_span(diff, "0c89da709eb193dc").row == 1
    assert find_span(diff, " 894dce ").row == 6
    for bad in ("", "zz", "c"):
        try:
            find_span(diff, bad)
        except SpanLookupError:
            pass
        else:
            raise AssertionError(bad)
    assert breadcrumb(diff, 5) == ["invoke_agent scheduling-agent", "execute_tool list_open_slots"]
    assert breadcrumb(diff, 99) == []


def test_index_past_its_budget_scans_instead(scheduling: tuple[str, str]) -> None:
    """An index over its character budget keeps nothing and finds the same rows by scanning."""
    diff = diff_traces(read_trace(scheduling[0]), read_trace(scheduling[1]))
    small = SearchIndex(diff, budget=1000)
    assert small.build() and small.streaming and small.size == 0
    assert small.find("execute_tool list_open_slots") == SearchIndex(diff).find("execute_tool list_open_slots")
    assert small.find("x", lambda: True) is None
