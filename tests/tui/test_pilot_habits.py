"""Habits (issue 7, item 5): the command palette, keys remapped from a config file, themes, 80×24, the mouse."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.command import CommandList, CommandPalette
from textual.widgets._footer import FooterKey

from tests.tui.helpers import wait_loaded, widget_text
from tracetui.tui import TraceTuiApp
from tracetui.tui.commands import COMMANDS
from tracetui.tui.config import config_path, load_config, parse_config
from tracetui.tui.keymap import binding_ids
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.screens.pair_screen import PairScreen
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's own config file must not change what these tests see."""
    monkeypatch.delenv("TRACETUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _palette_titles(app: TraceTuiApp) -> list[str]:
    commands = app.screen.query_one(CommandList)
    return [str(commands.get_option_at_index(i).prompt).split("\n", 1)[0] for i in range(commands.option_count)]


async def _open_palette(pilot, query: str = "") -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+p")
    await pilot.pause()
    assert isinstance(pilot.app.screen, CommandPalette)
    if query:
        await pilot.press(*query)
    await pilot.pause(0.3)  # the palette gathers hits in a task


def _notice_titles(app: TraceTuiApp) -> list[str]:
    from tracetui.tui.widgets.notice_line import NoticeLine

    return list(app.query_one(NoticeLine).notices)


def _warnings(app: TraceTuiApp) -> list[str]:
    """The warnings said on the notice line above the detail pane (never a toast over it)."""
    from tracetui.tui.widgets.notice_line import NoticeLine

    return [message for message, severity in app.query_one(NoticeLine).notices.values() if severity == "warning"]


# -- the command palette ------------------------------------------------------------------------


async def test_palette_lists_the_pair_commands_once_loaded(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await _open_palette(pilot)
        titles = _palette_titles(app)
        for title in ("First divergence", "Next divergence", "Jump to span id…", "Toggle the detail pane", "Triage",
                      "Label this divergence", "Promote to a golden case", "Change theme", "Help: keys and marks"):
            assert title in titles
        assert "Next search match" not in titles  # no search yet
        for title in ("Span kinds shown…", "Collapse / expand this subtree", "Expand all subtrees"):
            assert title in titles
        assert not any(t.startswith("Follow the replay") for t in titles)  # not watching


async def test_palette_offers_follow_while_watching_and_runs_it(scheduling: tuple[str, str], tmp_path: Path) -> None:
    import shutil

    replay = tmp_path / "live.jsonl"
    shutil.copy(scheduling[1], replay)
    app = TraceTuiApp(scheduling[0], replay, watch=True)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(100):  # the watch worker reads the file
            await pilot.pause(0.05)
            if app.diff is not None and app.watch_arrived:
                break
        assert app.watching and not app.following
        await _open_palette(pilot, "follow")
        titles = _palette_titles(app)
        assert titles[0] == "Follow the replay as it is written / stop following"
        await pilot.press("enter")
        await pilot.pause()
        assert app.following  # the same action as F


async def test_palette_offers_only_help_theme_quit_without_a_pair(tmp_path: Path) -> None:
    app = TraceTuiApp(tmp_path / "missing.jsonl", tmp_path / "missing-too.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.load_error is not None
        await _open_palette(pilot)
        assert sorted(_palette_titles(app)) == ["Change theme", "Help: keys and marks", "Quit", "Read both files again"]


async def test_palette_runs_the_same_action_as_the_key(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        start = view.cursor_row
        await pilot.press("n")
        after_key = view.cursor_row
        assert after_key != start
        view.cursor_row = start
        await _open_palette(pilot, "next divergence")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, CommandPalette)
        assert view.cursor_row == after_key

        await _open_palette(pilot, "toggle the detail")
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(SpanDetail).has_class("-hidden")


async def test_palette_jumps_to_a_typed_span_id(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.diff is not None
        row = 5
        index = app.diff.rows[row].original
        assert index is not None
        span_id = app.diff.original.spans[index].span_id
        await _open_palette(pilot, ":" + span_id[:10])
        assert _palette_titles(app) == [f"Jump to span {span_id[:10]}"]
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(AlignedView).cursor_row == row


async def test_palette_changes_the_theme(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await _open_palette(pilot, "change theme")
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, CommandPalette)  # now the theme picker
        await pilot.press(*"textual-light")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.theme == "textual-light"


def test_every_palette_command_names_a_real_binding() -> None:
    ids = binding_ids()
    assert all(command.binding_id in ids for command in COMMANDS if command.binding_id)


# -- the config file: keys and theme -----------------------------------------------------------


async def test_config_remaps_a_key_and_the_help_shows_it(scheduling: tuple[str, str], tmp_path: Path) -> None:
    config = _write(tmp_path, 'theme = "gruvbox"\n[keys]\nnext-divergence = "x,ctrl+n"\nopen-pair = ["enter", "o"]\n')
    app = TraceTuiApp(*scheduling, config_path=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.theme == "gruvbox"
        view = app.query_one(AlignedView)
        start = view.cursor_row
        await pilot.press("n")  # taken away by the keymap
        assert view.cursor_row == start
        await pilot.press("x")
        assert view.cursor_row > start
        second = view.cursor_row
        await pilot.press("ctrl+n")
        assert view.cursor_row > second
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, PairScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        entries = {entry.binding_id: entry.keys for entry in app.screen.entries}
        assert entries["next-divergence"] == ("x", "^n")
        assert entries["open-pair"] == ("⏎", "o")
        assert "x ^n" in widget_text(app.screen.query_one("#help-table"))
        assert not _warnings(app)


async def test_theme_from_the_environment_variable(scheduling: tuple[str, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_CONFIG", str(_write(tmp_path, 'theme = "textual-light"\n')))
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.theme == "textual-light"


async def test_a_config_with_a_syntax_error_warns_and_opens_with_defaults(
    scheduling: tuple[str, str], tmp_path: Path
) -> None:
    config = _write(tmp_path, '[keys]\nnext-divergence = "x"\ntheme = \n')
    app = TraceTuiApp(*scheduling, config_path=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        (warning,) = _warnings(app)
        assert "not valid TOML" in warning
        (issue,) = app.config_issues()
        assert issue.path == str(config) and issue.line == 3 and "not valid TOML" in issue.message
        view = app.query_one(AlignedView)
        start = view.cursor_row
        await pilot.press("n")  # the default key
        assert view.cursor_row > start
        assert app.theme == "textual-dark"


async def test_unknown_binding_id_and_theme_are_named_and_the_rest_applies(
    scheduling: tuple[str, str], tmp_path: Path
) -> None:
    config = _write(tmp_path, 'theme = "no-such-theme"\n[keys]\nnext-divergnce = "x"\nprevious-divergence = "b"\n')
    app = TraceTuiApp(*scheduling, config_path=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        (warning,) = _warnings(app)
        assert "'no-such-theme' does not exist" in warning and "and 1 more" in warning
        assert "w lists them" in warning and len(warning.splitlines()) <= 3  # fits a small screen
        assert all(len(line) <= 90 for line in warning.splitlines())
        assert "valid binding ids" not in warning  # the long lists are in w
        assert "config file: 2 problems" in _notice_titles(app)
        assert app.theme == "textual-dark"
        view = app.query_one(AlignedView)
        await pilot.press("n")
        moved = view.cursor_row
        await pilot.press("b")  # the good entry applied
        assert view.cursor_row < moved
        await pilot.press("w")
        await pilot.pause()
        issues = app.screen.issues  # type: ignore[attr-defined]
        assert len(issues) == 2  # as many as the warning counted
        listed = "\n".join(f"{side} {issue}" for side, issue in issues)
        assert "'next-divergnce' is no binding id (did you mean 'next-divergence'" in listed
        assert "config" in listed and "valid binding ids: " in listed and "open-pair" in listed
        assert "textual-light" in listed  # every theme, in full


async def test_a_malformed_key_is_dropped_and_the_default_kept(scheduling: tuple[str, str], tmp_path: Path) -> None:
    config = _write(tmp_path, '[keys]\nopen-pair = "ctrl+shift+alt+"\nnext-divergence = "x,hyperspace+n,ctrl+"\n')
    app = TraceTuiApp(*scheduling, config_path=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        (warning,) = _warnings(app)
        assert "'ctrl+shift+alt+' is not a key" in warning
        listed = " ".join(issue.message for issue in app.config_issues())
        assert "default key is kept" in listed and "'hyperspace+n' is not a key" in listed
        assert app.config.keys == {"next-divergence": "x"}
        view = app.query_one(AlignedView)
        start = view.cursor_row
        await pilot.press("x")  # the good key of the same entry applied
        assert view.cursor_row > start
        await pilot.press("enter")  # open-pair kept its default
        await pilot.pause()
        assert isinstance(app.screen, PairScreen)


async def test_one_key_given_to_two_actions_is_named(scheduling: tuple[str, str], tmp_path: Path) -> None:
    config = _write(tmp_path, '[keys]\nnext-divergence = "x"\nprevious-divergence = "x"\nquit = "n"\n'
                              'jump-to-teh-span = "J"\n')  # an unknown id as well: the conflicts are still found
    app = TraceTuiApp(*scheduling, config_path=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        (warning,) = _warnings(app)
        listed = [issue.message for issue in app.config_issues()]
        assert "config file: 3 problems" in _notice_titles(app)
        assert any("'x' is bound to next-divergence and previous-divergence" in m for m in listed)
        assert any("'jump-to-teh-span' is no binding id" in m for m in listed)
        # n left next-divergence (remapped to x), but the pair screen's own n (next divergence there) would hide quit
        assert any("'n' is bound to quit and pair-next-divergence" in m for m in listed)
        assert not any("'n' is bound to quit and next-divergence" in m for m in listed)


def test_valid_key_names() -> None:
    from tracetui.tui.keymap import valid_key

    for key in ("n", "N", "ctrl+n", "ctrl+shift+up", "enter", "escape", "f5", "pageup", "slash", "question_mark",
                "left_square_bracket", "+", "ctrl++", "space"):
        assert valid_key(key), key
    for key in ("", "ctrl+", "ctrl+shift+alt+", "hyper-n", "nosuchkey", "boss+n", " n", "ctrl+ctrl"):
        assert not valid_key(key), key


def test_parse_config_shapes() -> None:
    config = parse_config('theme = 3\ncolour = "x"\n[keys]\nquit = "a b"\nhelp = "h,f1"\n', Path("c.toml"))
    assert config.theme is None and config.keys == {"help": "h,f1"}
    assert any("unknown setting 'colour'" in p for p in config.problems)
    assert any("theme must be a theme name" in p for p in config.problems)
    assert any("[keys] quit" in p for p in config.problems)


def test_config_location(tmp_path: Path) -> None:
    assert config_path({"XDG_CONFIG_HOME": "/x"}) == Path("/x/tracetui/config.toml")
    assert config_path({"XDG_CONFIG_HOME": "/x", "TRACETUI_CONFIG": "/y.toml"}) == Path("/y.toml")
    assert load_config(tmp_path / "absent.toml").problems  # named explicitly but missing: said
    assert load_config().problems == []  # the default location, absent: no config, nothing to say


# -- 80×24, the footer, the mouse ---------------------------------------------------------------


async def test_80x24_footer_shows_triage_label_promote(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        keys = {key.key: key for key in app.screen.query(FooterKey)}
        for key in ("t", "l", "g", "n", "question_mark"):
            region = keys[key].region
            assert region.width > 0 and region.right <= 80, key
        assert app.query_one(AlignedView).size.height >= 5


async def test_the_footer_composes_its_keys_again_only_when_they_change(scheduling: tuple[str, str]) -> None:
    """Textual's footer builds its keys again at every refresh of the bindings (the app refreshes them more
    often than they change, three times while a big pair loads); ours only when what it shows changed."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        before = list(app.screen.query(FooterKey))
        assert before
        for _ in range(3):
            app.refresh_bindings()
            await pilot.pause()
        assert list(app.screen.query(FooterKey)) == before  # the same widgets: not composed again
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        narrow = list(app.screen.query(FooterKey))
        assert narrow and narrow[0] not in before  # narrower: composed again, short descriptions
        assert any(key.description == "First" for key in narrow)
        assert not any(key.description == "First" for key in before)


async def test_clicking_a_footer_key_runs_it(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        (detail_key,) = [key for key in app.screen.query(FooterKey) if key.key == "d"]
        await pilot.click(detail_key)
        await pilot.pause()
        assert app.query_one(SpanDetail).has_class("-hidden")


async def test_click_selects_a_row_and_double_click_opens_it(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.cursor_row != 5
        await pilot.click(AlignedView, offset=(10, 5))
        await pilot.pause()
        assert view.cursor_row == 5
        assert app.screen is app.screen_stack[0]
        await pilot.click(AlignedView, offset=(10, 6), times=2)
        await pilot.pause()
        assert view.cursor_row == 6
        assert isinstance(app.screen, PairScreen)


async def test_the_detail_pane_scrolls_with_the_wheel(scheduling: tuple[str, str]) -> None:
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        detail = app.query_one(SpanDetail)
        assert detail.max_scroll_y > 0 and detail.scroll_y == 0
        for _ in range(2):
            detail.post_message(events.MouseScrollDown(detail, 2, 2, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert detail.scroll_y > 0


def test_view_takes_a_config_path() -> None:
    from tracetui.cli.main import build_parser

    args = build_parser().parse_args(["view", "a.jsonl", "b.jsonl", "--config", "my.toml"])
    assert args.config == "my.toml"


@pytest.mark.parametrize(
    "argv",
    [
        ["--config", "my.toml", "a.jsonl", "b.jsonl"],  # view's options before the files (the README's order)
        ["a.jsonl", "b.jsonl", "--config", "my.toml"],
        ["view", "--config", "my.toml", "a.jsonl", "b.jsonl"],
    ],
)
def test_tracetui_config_before_or_after_the_files(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import tracetui.cli.commands as commands
    from tracetui.cli.main import main

    seen: list[object] = []
    monkeypatch.setattr(commands, "run_view", lambda args, err: seen.append(args) or 0)
    assert main(argv) == 0
    (args,) = seen
    assert (args.original, args.replay) == ("a.jsonl", "b.jsonl")
    assert args.config == "my.toml"
