"""Search highlighting (issue 7, item 3): after a search the term is highlighted in the labels of the matching
rows (both sides) and in the detail pane; a matching row whose labels do not show the term gets a gutter mark;
escape or an empty search clears it all.

The scheduling sample: rows 5 and 7 are list_open_slots calls (7 only on the replay side); the LLM rows 4 and 6
show `list_open_slots(...)` in their labels too.
"""

from __future__ import annotations

from rich.text import Text
from textual.strip import Strip

from tests.tui.helpers import wait_loaded
from tests.tui.test_pilot_search import _submit
from tracetui.tui import TraceTuiApp
from tracetui.tui.widgets.aligned_view import MATCH_MARK, AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.text_lines import Row


def _highlighted(view: AlignedView, row: int) -> list[str]:
    """Texts of the segments drawn with the match background on ``row``'s line."""
    match = view._styles()["bg:match"].bgcolor
    strip: Strip = view._render_row(row, view.scrollable_content_region.width, row == view.cursor_row)
    return [seg.text for seg in strip if seg.style is not None and seg.style.bgcolor == match]


def _detail_highlights(detail: SpanDetail) -> list[str]:
    match = detail.get_component_rich_style("span-detail--match").bgcolor
    detail.relayout()
    found = []
    for line in detail._lines:
        text: Text = line.to_text() if isinstance(line, Row) else line
        for span in text.spans:
            style = span.style
            if not isinstance(style, str) and style.bgcolor == match:
                found.append(text.plain[span.start:span.end])
    return found


async def test_term_highlighted_in_labels_and_detail(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        detail = app.query_one(SpanDetail)
        assert _highlighted(view, 5) == []
        await _submit(pilot, "/", "LIST_open")
        assert view.highlight == "LIST_open" and detail.highlight == "LIST_open"
        assert _highlighted(view, 5) == ["list_open", "list_open"]  # both sides, as drawn (its own case)
        assert _highlighted(view, 7) == ["list_open"]  # replay side only
        assert _highlighted(view, 3) == []  # not a match
        line = view._render_row(5, view.scrollable_content_region.width, False).text
        assert line[3] != MATCH_MARK  # the label shows the term: no gutter mark
        assert view.cursor_row == 4
        await pilot.press("right_square_bracket")
        assert view.cursor_row == 5
        await pilot.pause()
        assert "list_open" in [t.lower() for t in _detail_highlights(detail)]
        await pilot.press("escape")
        await pilot.pause()
        assert view.highlight == "" and detail.highlight == "" and view.search_matches == []
        assert _highlighted(view, 5) == [] and _detail_highlights(detail) == []
        assert view.message == "search cleared"


async def test_match_hidden_from_the_label_gets_a_gutter_mark(scheduling: tuple[str, str]) -> None:
    """`execute_tool list_open_slots` is the span name, which a tool's label leaves out: the rows still match,
    marked in the gutter; an empty search clears the marks."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        await _submit(pilot, "/", "execute_tool list_open_slots")
        assert view.search_matches == [5, 7]
        width = view.scrollable_content_region.width
        for row in (5, 7):
            assert _highlighted(view, row) == [MATCH_MARK]
            assert view._render_row(row, width, False).text[3] == MATCH_MARK
        assert view._render_row(3, width, False).text[3] == " "
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press("backspace", "enter")  # the last search is selected: an empty search
        await pilot.pause()
        assert view.search_term == "" and view.highlight == ""
        assert view._render_row(5, width, False).text[3] == " "
