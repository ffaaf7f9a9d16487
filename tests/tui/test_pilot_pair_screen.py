"""Pilot tests of reading a span on the full-pair screen (issue 7, item 4): differing paths highlighted,
`]`/`[` stepping through them, volatile fields apart, copying and writing the span's JSON, a 1 MB payload
capped instead of drawn whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import TraceBuilder
from tests.tui.helpers import wait_loaded, widget_text, write_pair
from tracetui.core.diff.jsonpaths import pretty_value, relative_path
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.pair_screen import CURRENT, GUTTER, HEAD_LINES, PairBody, PairScreen


async def _open_first(pilot: Any) -> tuple[PairScreen, PairBody]:
    await wait_loaded(pilot)
    await pilot.press("enter")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, PairScreen)
    body = screen.query_one(PairBody)
    body.text  # lay out  # noqa: B018
    return screen, body


def _marked(text: str) -> list[str]:
    return [line for line in text.splitlines() if GUTTER in line or CURRENT in line]


async def test_highlighted_paths_are_the_divergence_fields(scheduling: tuple[str, str]) -> None:
    """Scheduling row 2 (input_mismatch): the prompt version and messages[0].content are highlighted on both
    sides, inside the pretty-printed llm.messages too; the status line counts the differences."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, body = await _open_first(pilot)
        divergence = app.diff.row_divergence[screen.row]  # type: ignore[union-attr]
        assert body.differences == tuple(f.path for f in divergence.fields)
        assert body.highlighted_paths == {"llm.prompt_version", "llm.messages[0].content"}
        marked = _marked(body.text)
        assert any('"v7"' in line and '"v8"' in line for line in marked)
        assert any(line.count('"content": "You are the scheduling') == 2 for line in marked)  # both sides
        assert not any('"role": "user"' in line for line in marked)  # the unchanged message is not marked
        await pilot.pause()
        assert "2 differences highlighted" in widget_text(screen.query_one("#pair-status"))


async def test_brackets_step_through_differences_and_scroll(scheduling: tuple[str, str]) -> None:
    """] goes to difference 1 of 2, then 2 of 2 (scrolled further down, ▶ on its line), then wraps; [ goes back."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, body = await _open_first(pilot)
        assert body.scroll_offset.y == 0 and body.current is None
        await pilot.press("right_square_bracket")
        await pilot.pause()
        first_y = body.scroll_offset.y
        assert body.current == 0 and first_y > 0
        line = body.text.splitlines()[body.difference_lines[0]]  # type: ignore[index]
        assert CURRENT in line and '"v7"' in line
        assert "difference 1 of 2: llm.prompt_version" in widget_text(screen.query_one("#pair-status"))
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert body.current == 1 and body.scroll_offset.y > first_y
        assert '"content": "You are' in body.text.splitlines()[body.difference_lines[1]]  # type: ignore[index]
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert body.current == 0 and body.scroll_offset.y == first_y  # wrapped around
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert body.current == 1


async def test_volatile_fields_are_listed_apart(scheduling: tuple[str, str]) -> None:
    """Ids, times and the duration sit under "not compared", after every compared field; none is highlighted."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        _, body = await _open_first(pilot)
        lines = body.text.splitlines()
        section = next(i for i, line in enumerate(lines) if line.strip() == "not compared")
        below = "\n".join(lines[section:])
        above = "\n".join(lines[:section])
        for name in ("span_id", "parent_id", "start_ns", "end_ns", "duration_ns"):
            assert f" {name} " in below and f" {name} " not in above
        assert "llm.messages" in above and "llm.messages" not in below
        assert not _marked(below)


async def test_nested_volatile_ids_are_listed_apart(tmp_path: Path) -> None:
    """A tool_call_id inside llm.messages (ignored by the comparison) is listed under "not compared"."""

    def build(t: TraceBuilder, side: str) -> None:
        root = t.add("agent", "agent")
        messages = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": f"call_{side}", "content": "x"}]
        t.add("llm", "chat", parent=root, model="m", messages=messages, output={"role": "assistant", "content": side})

    app = TraceTuiApp(*write_pair(tmp_path, build))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()
        body = app.screen.query_one(PairBody)
        lines = body.text.splitlines()
        section = next(i for i, line in enumerate(lines) if line.strip() == "not compared")
        row = next(line for line in lines[section:] if "llm.messages[1].tool_call_id" in line)
        assert '"call_original"' in row and '"call_replay"' in row


async def test_c_copies_the_span_json(scheduling: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """c copies both spans as {"original", "replay"} via copy_to_clipboard (valid JSON); s picks one side."""
    app = TraceTuiApp(*scheduling)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, _ = await _open_first(pilot)
        await pilot.press("c")
        await pilot.pause()
        both = json.loads(copied[-1])
        assert set(both) == {"original", "replay"}
        assert both["original"]["llm"]["prompt_version"] == "v7" and both["replay"]["llm"]["prompt_version"] == "v8"
        assert both["original"]["span_id"] == app.diff.row_divergence[2].original.span_id  # type: ignore[union-attr]
        await pilot.press("s", "c")  # the original only
        await pilot.pause()
        assert screen.side == "original"
        assert json.loads(copied[-1])["llm"]["prompt_version"] == "v7"
        await pilot.press("s", "c")
        await pilot.pause()
        assert json.loads(copied[-1])["llm"]["prompt_version"] == "v8"
        assert len(copied) == 3


async def test_w_writes_a_new_file_and_never_overwrites(
    scheduling: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """w writes the JSON to a new file in the cwd; a second w (and a name already taken) gets a fresh name."""
    monkeypatch.chdir(tmp_path)
    taken = tmp_path / "tracetui-row2-both.json"
    taken.write_text("mine\n")
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, _ = await _open_first(pilot)
        await pilot.press("w")
        await pilot.pause()
        first = screen.last_written
        await pilot.press("w")
        await pilot.pause()
        second = screen.last_written
    assert taken.read_text() == "mine\n"
    assert first == tmp_path / "tracetui-row2-both-2.json" and second == tmp_path / "tracetui-row2-both-3.json"
    for path in (first, second):
        assert set(json.loads(path.read_text())) == {"original", "replay"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


async def test_one_megabyte_payload_is_capped_and_a_shows_all(tmp_path: Path) -> None:
    """A ~1 MB tool output differing near its end: the screen draws its head and the lines around the
    difference (not the ~100k lines), says how many are left out; ] reaches the difference; a shows all."""

    def build(t: TraceBuilder, side: str) -> None:
        root = t.add("agent", "agent")
        items = [{"id": i, "name": f"item {i}", "sku": f"SKU-{i:08d}-LYON-NORTH", "tags": ["a", "b"], "price": i * 1.5}
                 for i in range(11_000)]
        if side == "replay":
            items[10_500]["price"] = -1
        t.add("tool", "lookup", parent=root, arguments={"q": 1}, output={"items": items})

    original, replay = write_pair(tmp_path, build)
    assert Path(original).stat().st_size > 900_000
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()
        screen = app.screen
        body = screen.query_one(PairBody)
        body.text  # noqa: B018
        assert body.differences == ("tool.output.items[10500].price",)
        assert len(body._lines) < 3 * HEAD_LINES  # drawn: the head and a window, not ~100k lines
        assert body.hidden_lines > 90_000
        assert "more lines (press a to show all)" in body.text
        await pilot.pause()
        assert "lines left out (a shows all)" in widget_text(screen.query_one("#pair-status"))
        await pilot.press("right_square_bracket")
        await pilot.pause()
        line = body.text.splitlines()[body.difference_lines[0]]  # type: ignore[index]
        assert '"price": 15750.0' in line and '"price": -1' in line
        await pilot.press("a")
        await pilot.pause()
        assert body.show_all and body.hidden_lines == 0 and len(body._lines) > 90_000
        assert body.difference_lines[0] is not None and body.scroll_offset.y > 90_000


def test_line_range_follows_the_compare_path_spelling() -> None:
    """Paths as FieldChange writes them (odd keys JSON-quoted, list indexes, JSON strings inside parsed)."""
    pretty = pretty_value({"a b": [1, {"x": '{"deep": [true]}'}], "c": {}})
    assert pretty.is_json
    rng = pretty.line_range(relative_path('tool.output["a b"][1].x.deep[0]', "tool.output") or [])
    assert rng is not None and pretty.lines[rng[0]].strip() == "true"
    assert pretty.line_range(relative_path("tool.output.c", "tool.output") or []) == (len(pretty.lines) - 2,
                                                                                       len(pretty.lines) - 1)
    assert pretty.line_range(["missing"]) is None


async def test_stepping_past_the_ends_says_so(scheduling: tuple[str, str]) -> None:
    """p on the first divergent row and n on the last: a bell and a notice saying there is none that way
    (a held-out tester pressed p and saw nothing happen)."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PairScreen) and app.diff is not None
        first = min(app.diff.divergent_rows)
        screen._show_row(first)
        await pilot.press("p")
        await pilot.pause()
        assert screen.row == first
        assert [n.message for n in app._notifications if n.title == "divergences"] == ["no divergence above this row"]
        screen._show_row(max(app.diff.divergent_rows))
        await pilot.press("n")
        await pilot.pause()
        assert [n.message for n in app._notifications if n.title == "divergences"] == ["no divergence below this row"]
