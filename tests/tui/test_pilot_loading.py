"""Pilot tests of loading: the loading frame, load errors, read warnings, and literal display of trace text."""

from __future__ import annotations

import threading

import pytest

from tests.tui.helpers import DATA, wait_loaded, widget_text
from tracetui.core.errors import ReadError
from tracetui.tui import TraceTuiApp
from tracetui.tui.messages import LoadFailed, PairLoaded
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.screens.issues_screen import IssuesScreen
from tracetui.tui.screens.pair_screen import PairBody
from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
from tracetui.tui.widgets.load_error import LoadErrorPanel
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.status_bar import StatusBar


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Holds the load worker's read of the original until set (5 s at most)."""
    import tracetui.core.readers as readers_module  # the app's load worker calls read_pair, which calls these

    held = threading.Event()
    real_read = readers_module.read_trace

    def slow_read(*args, **kwargs):  # type: ignore[no-untyped-def]
        held.wait(5)
        return real_read(*args, **kwargs)

    monkeypatch.setattr(readers_module, "read_trace", slow_read)
    return held


async def test_first_frame_shows_loading_before_data(gate: threading.Event, tiny: tuple[str, str]) -> None:
    """The screen is drawn in a loading state while the worker reads; the data lands afterwards via PairLoaded,
    even with the help screen open meanwhile."""
    messages: list[object] = []
    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await pilot.pause()
        view = app.query_one(AlignedView)
        assert view.row_count == 0
        assert "loading…" in "".join(seg.text for seg in view.render_line(0))
        assert "loading original.jsonl and replay.jsonl" in widget_text(app.query_one(StatusBar))
        await pilot.press("question_mark")  # a screen on top when the data lands must not matter
        assert isinstance(app.screen, HelpScreen)
        gate.set()
        await wait_loaded(pilot)
        assert view.row_count == 7 and view.cursor_row == 2
        assert any(isinstance(m, PairLoaded) for m in messages)
        await pilot.press("escape")
        assert app.query_one(SpanDetail).text.startswith("row 2 · args_mismatch")


async def test_n_and_p_while_loading_say_so_not_that_the_runs_agree(monkeypatch: pytest.MonkeyPatch, gate: threading.Event,
                                                                   tiny: tuple[str, str]) -> None:
    """Before the pair is read nothing is known: n/p must not claim "no divergence: the runs agree" (a
    held-out tester's finding)."""
    app = TraceTuiApp(*tiny)
    said: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, *a, **k: said.append(str(message)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("n", "p")
        assert said and all("still loading" in m for m in said) and not any("agree" in m for m in said)
        gate.set()
        await wait_loaded(pilot)


async def test_load_messages_after_the_app_began_to_shut_down_are_dropped(tiny: tuple[str, str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A read released just as the app exits posts its messages while the widgets are being removed (a
    held-out tester's flake in the screenshot script: NoMatches on StatusBar); they are dropped."""
    from tracetui.tui.messages import EarlyLoaded, LoadProgress

    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        generation = app._load_generation
        app.reloading = True
        app._running = False  # as App._shutdown sets it before it removes the widgets
        diff, screens = app.diff, list(app.screen_stack)
        said: list[str] = []
        monkeypatch.setattr(app, "notify", lambda message, *a, **k: said.append(str(message)))
        try:
            for bar in app.screen_stack[0].query(StatusBar):
                bar.remove()
            await pilot.pause()
            app.on_load_progress(LoadProgress(0.5, generation))  # no NoMatches
            app.on_early_loaded(EarlyLoaded(app.diff, generation))
            app.on_pair_loaded(PairLoaded(app.diff, generation))
            app.on_load_failed(LoadFailed("replay", "x", "gone", generation=generation))
            # Dropped: the state they would change is as it was (the diff, the reload flag, the screens),
            # nothing is said and no exit code is set by the failure.
            assert app.diff is diff and app.reloading is True and list(app.screen_stack) == screens
            assert said == [] and app.return_code is None
        finally:
            app._running = True


@pytest.mark.parametrize(
    ("replay", "side_words", "facts"),
    [
        ("does-not-exist.jsonl", "load the replay trace", ["does-not-exist.jsonl", "no such file"]),
        ("garbage.jsonl", "load the replay trace", ["garbage.jsonl", "format not recognised"]),
    ],
)
async def test_unreadable_file_shows_error_panel_not_traceback(replay: str, side_words: str, facts: list[str]) -> None:
    """A missing or garbage replay file shows the error panel naming the side, the file and the reason."""
    messages: list[object] = []
    app = TraceTuiApp(DATA / "original.jsonl", DATA / replay)
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await wait_loaded(pilot)
        panel = app.query_one(LoadErrorPanel)
        assert panel.display and not app.query_one(AlignedView).display
        text = widget_text(panel)
        assert f"Cannot {side_words}" in text
        for fact in facts:
            assert fact in text
        assert "Traceback" not in text
        assert [m.side for m in messages if isinstance(m, LoadFailed)] == ["replay"]
        assert "load failed" in widget_text(app.query_one(StatusBar))
        await pilot.press("q")
    assert app.return_code == 2  # q after a load error: the CLI exits 2, like `tracetui diff` on a bad file


async def test_error_panel_names_line_and_field(monkeypatch: pytest.MonkeyPatch, tiny: tuple[str, str]) -> None:
    """A ReadError carrying a line and a field (a bad record) shows file, line, field and reason."""
    import tracetui.core.readers as readers_module

    def failing_read(path, **kwargs):  # type: ignore[no-untyped-def]
        raise ReadError(str(path), "span_id is a list; expected a string", line=7, where="$.span_id")

    monkeypatch.setattr(readers_module, "read_replay", failing_read)
    app = TraceTuiApp(*tiny)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        text = widget_text(app.query_one(LoadErrorPanel))
        assert "Cannot load the replay trace" in text
        assert "file    " + tiny[1] in text
        assert "line    7" in text
        assert "field   $.span_id" in text
        assert "reason  span_id is a list; expected a string" in text


async def test_read_issues_are_counted_and_listed_on_w() -> None:
    """Skipped lines show in the status line ("1 line skipped, 1 warning — press w"); w lists them, file and line."""
    app = TraceTuiApp(DATA / "original.jsonl", DATA / "replay_with_issues.jsonl")
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_loaded(pilot)
        status = widget_text(app.query_one(StatusBar))
        assert "1 line skipped, 1 warning — press w" in status
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, IssuesScreen)
        listed = widget_text(app.screen.query_one("#issues-text"))
        assert "replay_with_issues.jsonl:4: not valid JSON" in listed
        assert "skipped  replay   " in listed  # each issue says which side it came from
        assert "replay_with_issues.jsonl:6 (kind): unknown kind 'wizard'" in listed
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, IssuesScreen)


async def test_markup_and_escape_sequences_in_payloads_show_literally() -> None:
    """`[bold red]x[/]` stays as typed; `\\x1b[31m` and a C1 CSI show escaped, in the view, the pane and the pair screen."""
    app = TraceTuiApp(DATA / "literal_original.jsonl", DATA / "literal_replay.jsonl")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        line = "".join(seg.text for seg in view.render_line(0))
        assert 'render(text="[bold red]x[/]")' in line
        assert "\x1b" not in line
        detail = app.query_one(SpanDetail).text
        assert "\\u001b[31mred\\u001b[0m [bold]not bold[/bold]" in detail
        assert "\x1b" not in detail and "\x9b" not in detail
        assert "\\x9b2J" in detail  # C1 CSI made visible too
        await pilot.press("enter")
        await pilot.pause()
        body = app.screen.query_one(PairBody).text
        assert "[link=http://x]y[/link]" in body
        assert "\\u001b[32mgreen\\u001b[0m" in body
        assert "\x1b" not in body


async def test_file_hash_run_opens_the_named_runs_of_a_multi_run_file() -> None:
    """FILE#RUN on both sides: the named runs are shown (a unique prefix is enough), the column
    titles say which run, and no "several runs" note is raised since the user picked them."""
    from pathlib import Path

    two = Path(__file__).resolve().parents[1] / "data" / "otlp" / "collector_two_traces.jsonl"
    app = TraceTuiApp(f"{two}#4bf92f", f"{two}#0af7651916cd43dd8448eb211c80319c")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        diff = app.diff
        assert diff is not None
        assert diff.original.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
        assert diff.replay.trace_id == "0af7651916cd43dd8448eb211c80319c"
        from tracetui.tui.widgets.notice_line import NoticeLine

        assert not any("several runs" in title for title in app.query_one(NoticeLine).notices)
        header = app.query_one(AlignedHeader)
        assert "#4bf92f3577b34da6a3ce929d0e0e4736" in header._left.plain
        assert "#0af7651916cd43dd8448eb211c80319c" in header._right.plain


async def test_run_input_changes_are_announced_on_load() -> None:
    """The SWE-agent pair ran under two tool configurations: the changed tool-schema hash, which
    explains edit vs insert, is said on load, before any span."""
    from corpus import corpus

    a = corpus("swe-agent/marshmallow-1867__function_calling.traj")
    b = corpus("swe-agent/marshmallow-1867__function_calling_replace.traj")
    app = TraceTuiApp(a, b)
    async with app.run_test(size=(140, 35)) as pilot:
        await wait_loaded(pilot)
        from tracetui.tui.widgets.notice_line import NoticeLine

        notes = app.query_one(NoticeLine).notices
        assert 'tool_schema_hash: "4000f82b71dbc499" → "840a73adabeda93e"' in notes["run inputs changed"][0]
        assert not app._notifications  # on the notice line above the detail pane, not in a toast over it
