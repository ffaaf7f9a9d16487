"""The span-kind filter (issue 7, item 3): `s` opens a checkbox per kind with its row count; the view then shows
only rows holding a checked kind (either side), combined with `v` and the folds through one mapping.

The scheduling sample: row 0 agent, 1 decision, 2/4/6/8 llm, 3/5/7 tool; rows 0, 2, 4, 6, 7, 8 divergent.
"""

from __future__ import annotations

from textual.widgets import Checkbox

from tests.tui.helpers import wait_loaded, widget_text
from tests.tui.test_pilot_search import _submit
from tracetui.core.diff import diff_traces
from tracetui.core.model import SpanKind
from tracetui.core.readers import read_trace
from tracetui.tui import TraceTuiApp, rowfilter
from tracetui.tui.screens.kind_filter import KindFilter
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.status_bar import StatusBar


def _shown(view: AlignedView) -> list[int]:
    return [view.row_at_line(i) for i in range(view.line_count)]  # type: ignore[misc]


async def test_kind_filter_dialog_shows_counts_and_applies(scheduling: tuple[str, str]) -> None:
    """s: every kind listed with its rows, all checked; `o` keeps only the focused kind, enter applies; the view
    shows only those rows and says what is hidden; `v` narrows it further; s + `a` + enter shows every kind."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.press("s")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, KindFilter)
        assert dialog.counts[SpanKind.TOOL] == 3 and dialog.counts[SpanKind.LLM] == 4
        assert dialog.checked == frozenset(SpanKind)
        labels = {str(box.label).split()[0]: str(box.label) for box in dialog.query(Checkbox)}
        assert "3 rows" in labels["tool"] and "0 rows" in labels["memory"]
        await pilot.press("down")  # llm -> tool
        await pilot.press("o")
        assert dialog.checked == {SpanKind.TOOL}
        await pilot.press("down", "space")  # tool + retrieval (no rows)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert view.kinds_shown == {SpanKind.TOOL, SpanKind.RETRIEVAL}
        assert _shown(view) == [3, 5, 7] and view.cursor_row == 3  # from row 2: the nearest tool row
        assert view.message == "showing 3 of 9 rows: tool, retrieval"
        await pilot.press("n")  # the next divergent row the filter keeps: 7 (not 4, 6)
        assert view.cursor_row == 7
        await pilot.press("v")
        await pilot.pause()
        assert _shown(view) == [7] and view.filter_summary == "showing 1 of 9 rows: tool, retrieval; divergent only"
        status = app.query_one(StatusBar)
        assert status.filter_text == view.filter_summary  # the status line says what is hidden
        assert "showing 1 of 9 rows" in widget_text(status)
        await pilot.press("s")
        await pilot.pause()
        assert app.screen.checked == {SpanKind.TOOL, SpanKind.RETRIEVAL}  # type: ignore[attr-defined]
        await pilot.press("a", "enter")
        await pilot.pause()
        assert view.kinds_shown is None and _shown(view) == [0, 2, 4, 6, 7, 8]
        await pilot.press("v")
        await pilot.pause()
        assert view.line_count == 9 and view.filter_summary == "showing all 9 rows"
        assert status.filter_text == "" and "showing" not in widget_text(status)


async def test_escape_cancels_and_none_checked_stays_open(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await pilot.press("s")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, KindFilter)
        dialog.set_checked(set())
        await pilot.press("enter")  # nothing checked: stays open, says so
        await pilot.pause()
        assert app.screen is dialog
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0] and view.kinds_shown is None and view.line_count == 9


async def test_jump_and_search_to_a_filtered_row_turn_the_filter_off(scheduling: tuple[str, str]) -> None:
    """A span-id jump to a row of a hidden kind shows every row again; ]/[ only visit matches the filter keeps."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        view.set_kinds({SpanKind.LLM})
        await pilot.pause()
        assert _shown(view) == [2, 4, 6, 8]
        await _submit(pilot, "/", "list_open_slots")
        assert set(view.search_matches) >= {4, 5, 7}
        assert view.cursor_row == 4 and "among the rows shown" in view.message
        await _submit(pilot, ":", "21586f207f8e5332")  # row 3, a tool
        assert view.cursor_row == 3 and view.kinds_shown is None and view.line_count == 9
        assert any("filtered out" in n.message for n in app._notifications)


def test_kind_codes_and_counts(scheduling: tuple[str, str]) -> None:
    diff = diff_traces(read_trace(scheduling[0]), read_trace(scheduling[1]))
    codes = rowfilter.row_kind_codes(diff)
    assert len(codes) == 9
    counts = rowfilter.kind_counts(codes)
    assert counts == {SpanKind.LLM: 4, SpanKind.TOOL: 3, SpanKind.RETRIEVAL: 0, SpanKind.DECISION: 1,
                      SpanKind.AGENT: 1, SpanKind.MEMORY: 0, SpanKind.OTHER: 0}
    flags = rowfilter.selected_flags(9, codes=codes, kinds={SpanKind.TOOL}, divergent=[0, 2, 4, 6, 7, 8])
    assert flags is not None and [r for r in range(9) if flags[r]] == [7]
    assert rowfilter.selected_flags(9) is None
