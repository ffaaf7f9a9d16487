"""Pilot tests of what a new user trips on: absent vs null, cut values, exit code, row counter, keys, help legend."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import TraceBuilder
from tests.tui.helpers import DATA, sample_pair, wait_loaded, widget_text, write_pair
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.screens.pair_screen import PairBody, PairScreen
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.status_bar import StatusBar


def _field_line(text: str, path: str) -> str:
    """The first line of a pane or pair-screen text naming field ``path`` (then a space)."""
    return next(line for line in text.splitlines() if f" {path} " in line)


async def test_absent_field_shows_a_dash_and_recorded_null_shows_null() -> None:
    """subscription_pause row 3: the replay output has no `error` key, shown `—` (not `null`) in the pane and
    the pair screen; the replay's unset error_type is a recorded null, shown `null`."""
    app = TraceTuiApp(*sample_pair("subscription_pause"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_loaded(pilot)
        assert app.query_one(AlignedView).cursor_row == 3
        pane = app.query_one(SpanDetail).text
        line = _field_line(pane, "tool.output.error")
        assert '"not_found"' in line and line.rstrip().endswith("│ —") and "null" not in line
        line = _field_line(pane, "tool.output.account_id")
        assert line.split("│")[0].rstrip().endswith("—") and '"AC-10442"' in line  # absent on the original side
        assert _field_line(pane, "error_type").rstrip().endswith("│ null")
        await pilot.press("enter")
        await pilot.pause()
        body = app.screen.query_one(PairBody).text
        line = _field_line(body, "tool.output.error")
        assert '"not_found"' in line and line.rstrip().endswith("│ —") and "null" not in line
        # a differing field: the pair screen marks its value with the ▌ gutter (what `]` steps to)
        assert _field_line(body, "error_type").rstrip().endswith("│▌null")


async def test_changed_value_cut_in_the_pane_ends_with_an_ellipsis(tmp_path: Path) -> None:
    """A long changed value that does not fit the pane's two lines ends with `…` on both sides."""

    def build(t: TraceBuilder, side: str) -> None:
        root = t.add("agent", "agent")
        t.add("tool", "lookup", parent=root, arguments={"q": side[0] + "x" * 600})

    app = TraceTuiApp(*write_pair(tmp_path, build))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.query_one(AlignedView).cursor_row == 1
        lines = app.query_one(SpanDetail).text.splitlines()
        at = next(i for i, line in enumerate(lines) if "tool.arguments" in line)
        second = lines[at + 1]  # the value takes two lines; the second ends the cut value
        left, right = second.split("│")
        assert left.rstrip().endswith("…") and right.rstrip().endswith("…")


async def test_q_after_a_load_error_exits_with_code_2() -> None:
    """A trace that cannot be read: q quits with return code 2 (what the CLI exits with)."""
    app = TraceTuiApp(DATA / "original.jsonl", DATA / "garbage.jsonl")
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_loaded(pilot)
        assert app.load_error is not None
        await pilot.press("q")
    assert app.return_code == 2


async def test_status_line_has_no_row_counter_for_empty_traces(tmp_path: Path) -> None:
    """Two empty traces: the status line says there is no divergence and shows no row counter."""
    app = TraceTuiApp(*write_pair(tmp_path, lambda t, side: None))
    async with app.run_test(size=(120, 24)) as pilot:
        await wait_loaded(pilot)
        text = widget_text(app.query_one(StatusBar))
        assert "no divergence" in text and "row" not in text


async def test_f_jumps_to_the_first_divergence_and_is_in_footer_and_help(scheduling: tuple[str, str]) -> None:
    """f moves the cursor back to the first divergence from anywhere, on the main and the pair screen;
    the footer offers it, the help lists it."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        first = app.diff.first.row  # type: ignore[union-attr]
        assert any(b.binding.id == "first-divergence" and b.binding.show for b in app.screen.active_bindings.values())
        await pilot.press("end")
        assert view.cursor_row != first
        await pilot.press("f")
        assert view.cursor_row == first
        await pilot.press("enter", "n", "n")
        await pilot.pause()
        assert isinstance(app.screen, PairScreen) and app.screen.row != first
        await pilot.press("f")
        assert app.screen.row == first
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert any(e.binding_id == "first-divergence" and e.keys == ("f",) for e in app.screen.entries)


async def test_w_without_warnings_is_in_help_and_says_so(tiny: tuple[str, str]) -> None:
    """With no load warnings, w is still listed in the help, and pressing it shows a notification saying so."""
    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert any(e.binding_id == "show-issues" for e in app.screen.entries)  # type: ignore[attr-defined]
        await pilot.press("escape", "w")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["Both files loaded without warnings."]


async def test_help_explains_marks_and_divergence_types(scheduling: tuple[str, str]) -> None:
    """The help's legend explains the gutter marks, the detail marks and every divergence type in a line."""
    from tracetui.tui.pair_fields import DIVERGENCE_HELP

    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = widget_text(app.screen.query_one("#help-legend"))
        lines = [line.strip() for line in text.splitlines()]
        for mark, words in (("~", "changed"), ("+", "only in the replay"), ("-", "only in the original"),
                            ("▶", "first divergence"), ("Δ", "changed inside a field"), ("—", "no such field")):
            assert any(line.startswith(mark) and words in line for line in lines), mark
        for name, meaning in DIVERGENCE_HELP.items():
            assert any(line.startswith(name) and meaning in line for line in lines), name


@pytest.mark.parametrize(("down", "up"), [("J", "K"), ("ctrl+down", "ctrl+up")])
async def test_detail_pane_scrolls_from_the_keyboard_while_the_list_keeps_focus(down: str, up: str) -> None:
    """J/K (and ctrl+down/up) scroll the detail pane a line; the aligned view keeps focus and its cursor."""
    app = TraceTuiApp(*sample_pair("subscription_pause"))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        view, detail = app.query_one(AlignedView), app.query_one(SpanDetail)
        assert detail.max_scroll_y > 2  # row 3 has more fields than the pane shows
        row = view.cursor_row
        await pilot.press(down, down)
        await pilot.pause()
        assert detail.scroll_offset.y == 2
        await pilot.press(up)
        await pilot.pause()
        assert detail.scroll_offset.y == 1
        assert app.focused is view and view.cursor_row == row
        await pilot.press("question_mark")
        await pilot.pause()
        ids = {e.binding_id for e in app.screen.entries}  # type: ignore[attr-defined]
        assert {"detail-scroll-down", "detail-scroll-up"} <= ids


async def test_first_divergence_row_is_marked_in_the_gutter(scheduling: tuple[str, str]) -> None:
    """Only the first divergence's row carries ▶ between its number and its mark; other divergent rows do not."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        first = app.diff.first.row  # type: ignore[union-attr]
        top = int(view.scroll_offset.y)
        for row in sorted(app.diff.divergent_rows):  # type: ignore[union-attr]
            line = "".join(s.text for s in view.render_line(row - top))
            assert (f"{row}▶" in line) == (row == first), row


async def test_detail_pane_shows_the_breadcrumb_of_the_highlighted_span(scheduling: tuple[str, str]) -> None:
    """The line under the detail title names the span's ancestors, root first (issue 7: breadcrumb)."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        lines = app.query_one(SpanDetail).text.splitlines()
        assert lines[1].strip() == "invoke_agent scheduling-agent › chat scripted-scheduler"
        app.query_one(AlignedView).cursor_row = 0  # the root: no breadcrumb line
        await pilot.pause()
        assert "›" not in app.query_one(SpanDetail).text.splitlines()[1]
