"""Pilot tests of the triage panel (issue 5, "Triage panel in the TUI"): `t` shows the three steps with the states
and verdict `tracetui.core.triage.triage` gives; enter on an item puts the cursor on its span's row; step 2 runs the
replay in a worker (progress, cancel, errors in the panel) and loads the result."""

from __future__ import annotations

import json

import shutil
import textwrap
from pathlib import Path

import pytest

from tests.tui.helpers import SAMPLE_RUNS, SAMPLES, rendered, sample_pair, wait_loaded
from tracetui.core.readers import read_runs, read_trace
from tracetui.core.triage import triage
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.screens.triage_screen import TriageList, TriageScreen, next_replay_path
from tracetui.tui.widgets.aligned_view import AlignedView

KEY = "tui-triage-test-key-0123456789ab"
"""A 32-character redaction key (TRACETUI_REDACTION_KEY) for the replays the panel runs."""

AGENT = str(SAMPLE_RUNS / "scheduling" / "agent.py")


async def _settle(pilot, until=lambda: True, rounds: int = 200) -> None:  # type: ignore[no-untyped-def]
    """Wait for every worker (the panel's and the app's load) and the messages they post, until ``until()``."""
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if until():
            return
    raise AssertionError("the panel did not settle")


async def _open_panel(pilot) -> TriageScreen:  # type: ignore[no-untyped-def]
    await wait_loaded(pilot)
    await pilot.press("t")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, TriageScreen)
    await _settle(pilot, lambda: screen.result is not None)
    return screen


def _list_text(screen: TriageScreen) -> str:
    """Plain text of every line of the checklist."""
    lst = screen.query_one(TriageList)
    return "\n".join(rendered(option.prompt, 120) for option in lst.options)


def _select(screen: TriageScreen, index: int) -> None:
    """Highlight selectable item ``index`` (into ``screen.items``)."""
    lst = screen.query_one(TriageList)
    lst.highlighted = lst.get_option_index(f"item-{index}")


@pytest.mark.parametrize("name", SAMPLES)
async def test_t_shows_the_three_steps_of_each_sample(name: str) -> None:
    """t opens the panel on each sample pair: the steps' states, the verdict and the evidence are triage()'s."""
    original, replay = sample_pair(name)
    expected = triage(read_trace(original), [read_trace(replay)])
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        result = screen.result
        assert result is not None
        assert result.verdict == expected.verdict
        assert [(s.number, s.state) for s in result.steps] == [(s.number, s.state) for s in expected.steps]
        assert [(e.span_id, e.side, e.reason) for e in result.evidence] == \
            [(e.span_id, e.side, e.reason) for e in expected.evidence]
        text = _list_text(screen)
        flat = " ".join(text.split())
        for step in expected.steps:
            assert step.title in text
            assert " ".join(step.detail.split()) in flat
        headings = [line for line in text.splitlines() if line.startswith(("✓", "✗", "○", "–"))]
        assert [h.split()[1] for h in headings] == ["1", "2", "3"]
        # each heading says its step's answer, never "passed" next to "reproduced in 0 of 1 trial" (issue 23)
        reproduction = expected.reproduction
        assert reproduction is not None and reproduction.trials == 1
        got = reproduction.reproduced
        assert headings[0].endswith(("yes", "caveat", "caveats")), headings[0]
        assert headings[1].endswith(f"{'yes' if got else 'no'} · {got} of 1"), headings[1]
        assert headings[2].endswith("answered"), headings[2]
        assert not any("passed" in h for h in headings)
        assert expected.verdict is not None and expected.verdict in str(screen.query_one("#triage-title").content)
        step3 = [i for i in screen.items if i.step == 3]
        n = len(expected.evidence)
        assert [(i.target.span_id, i.target.side) for i in step3[:n]] == \
            [(e.span_id, e.side) for e in expected.evidence]
        # then the reason chain: which rule fired, on what
        assert [i.target.why for i in step3[n:]] == [r.text for r in expected.reasons]
        trials = [i for i in screen.items if i.step == 2]
        assert len(trials) == 1 and ("not reproduced" in trials[0].text) != expected.reproduction.per_trial[0].reproduced  # type: ignore[union-attr]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TriageScreen)


async def test_enter_on_evidence_moves_the_cursor_to_its_row(scheduling: tuple[str, str]) -> None:
    """On scheduling the verdict's evidence names the prompt change on both sides: enter on the original's item
    closes the panel with the cursor on that span's row; the replay's item on the replay span's row."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        diff = app.diff
        assert diff is not None
        rows = {}
        for n, row in enumerate(diff.rows):
            if row.original is not None:
                rows[("original", diff.original.spans[row.original].span_id)] = n
            if row.replay is not None:
                rows[("replay", diff.replay.spans[row.replay].span_id)] = n
        evidence = [(n, i) for n, i in enumerate(screen.items) if i.step == 3 and i.target.span_id is not None]
        assert {i.target.side for _, i in evidence} == {"original", "replay"}
        view = app.query_one(AlignedView)
        view.cursor_row = 0
        for n, item in evidence:
            if not isinstance(app.screen, TriageScreen):
                await pilot.press("t")
                screen = app.screen  # type: ignore[assignment]
                await _settle(pilot, lambda s=screen: s.result is not None)
            _select(screen, n)
            await pilot.press("enter")
            await pilot.pause()
            assert not isinstance(app.screen, TriageScreen)
            assert view.cursor_row == rows[(item.target.side, item.target.span_id)]
            view.cursor_row = 0


async def test_a_run_level_item_keeps_the_panel_open(scheduling: tuple[str, str]) -> None:
    """An item without a span (a changed run input) says so in the status line; the panel stays."""
    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        run_level = [n for n, i in enumerate(screen.items) if i.target.span_id is None and i.step == 3]
        assert run_level
        _select(screen, run_level[0])
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and "run-level" in screen.message


@pytest.fixture
def scheduling_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The scheduling pair copied to tmp_path (replays land next to the original), with a redaction key set."""
    original, replay = sample_pair("scheduling")
    shutil.copy(original, tmp_path / "original.jsonl")
    shutil.copy(replay, tmp_path / "replay.jsonl")
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    return str(tmp_path / "original.jsonl"), str(tmp_path / "replay.jsonl")


def _form(screen: TriageScreen, agent: str, trials: int = 1) -> None:
    from textual.widgets import Input

    screen.query_one("#triage-agent", Input).value = agent
    screen.query_one("#triage-trials", Input).value = str(trials)


async def test_run_step_2_writes_loads_and_triages_the_replay(scheduling_copy: tuple[str, str], tmp_path: Path) -> None:
    """r with the incident's own agent: original.replay-1.jsonl is written next to the original (a second run
    writes replay-2, never over the first), loaded into the view, and step 2 shows its reproduction."""
    before = Path(scheduling_copy[0]).read_bytes()
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        assert screen.result is not None and screen.result.verdict == "code_or_config_change"
        _form(screen, f"{AGENT}:run")
        await pilot.press("r")
        await _settle(pilot, lambda: screen.run_state == "done" and not app.reloading and screen.result is not None)
        out = tmp_path / "original.replay-1.jsonl"
        assert out.exists() and screen.last_replay == str(out)
        assert app.replay_path == str(out) and app.diff is not None and app.diff.replay.path == str(out)
        assert app.triage_replays == str(out)
        assert app.sub_title.endswith("original.replay-1.jsonl")
        result = screen.result
        assert result.reproduction is not None
        assert (result.reproduction.trials, result.reproduction.reproduced) == (1, 1)  # the same agent: it comes back
        assert result.verdict == triage(read_trace(scheduling_copy[0]), read_runs(str(out)).runs).verdict
        assert "reproduced in 1 of 1 trial" in _list_text(screen)
        assert "replay written: original.replay-1.jsonl (1 trial)" in screen.message
        # the trials ran in the TUI's own process: the guard only, and the panel and the header say so
        assert "network isolation: in-process guard only; subprocesses and native code are not covered" \
            in screen.message
        assert json.loads(out.read_text().splitlines()[0])["network_isolation"].startswith("in-process guard only")
        assert app.diff.divergences == []  # the same agent, recorded tools and model: nothing differs

        _form(screen, f"{AGENT}:run", trials=2)
        await pilot.press("r")
        await _settle(pilot, lambda: screen.run_state == "done" and screen.last_replay is not None
                      and screen.last_replay.endswith("replay-2.jsonl") and not app.reloading
                      and screen.result is not None)
        assert len(read_runs(str(tmp_path / "original.replay-2.jsonl")).runs) == 2
        assert screen.result.reproduction is not None and screen.result.reproduction.trials == 2
        assert len(read_runs(str(out)).runs) == 1  # the first replay is untouched
    assert Path(scheduling_copy[0]).read_bytes() == before


async def test_selecting_a_trial_of_another_replay_loads_it(scheduling_copy: tuple[str, str], tmp_path: Path) -> None:
    """After a 2-trial run of the fixed agent (prompt v8), enter on trial 2's item loads that run (FILE#RUN)
    into the view with the cursor on its first divergence."""
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        _form(screen, f"{AGENT}:run_fixed", trials=2)
        await pilot.press("r")
        await _settle(pilot, lambda: screen.run_state == "done" and not app.reloading and screen.result is not None)
        runs = read_runs(str(tmp_path / "original.replay-1.jsonl")).runs
        assert app.diff is not None and app.diff.replay.trace_id == runs[0].trace_id  # the view opens on trial 1
        trials = [n for n, i in enumerate(screen.items) if i.step == 2]
        assert len(trials) == 2
        _select(screen, trials[1])
        await pilot.press("enter")
        await _settle(pilot, lambda: not app.reloading)
        assert not isinstance(app.screen, TriageScreen)
        assert app.diff.replay.trace_id == runs[1].trace_id
        assert app.replay_path == f"{tmp_path / 'original.replay-1.jsonl'}#{runs[1].trace_id}"
        target = screen.items[trials[1]].target
        assert app.query_one(AlignedView).cursor_row == app.row_of_span(target.span_id, target.side)  # type: ignore[arg-type]
        assert app.triage_replays == str(tmp_path / "original.replay-1.jsonl")  # the panel still counts both trials
        await pilot.press("t")
        await _settle(pilot, lambda: isinstance(app.screen, TriageScreen) and app.screen.result is not None)
        assert app.screen.result.reproduction.trials == 2  # type: ignore[attr-defined]


GATED_AGENT = '''
"""The scheduling agent, held at the start of each trial until the test opens GATE."""
import importlib.util
import threading

_spec = importlib.util.spec_from_file_location("tracetui_test_scheduling_agent", {agent!r})
_agent = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_agent)
for _name in ("AGENT_NAME", "CODE_VERSION", "MODEL", "MODEL_INFO", "PROMPTS", "READ_TOOLS", "SENSITIVE_FIELDS",
              "TOOL_SCHEMAS", "TOOLS", "FIXTURE"):
    globals()[_name] = getattr(_agent, _name)

GATE = threading.Event()
STARTED = threading.Event()


def run(ctx, input):
    STARTED.set()
    GATE.wait(20)
    return _agent.run(ctx, input)
'''


async def test_cancel_stops_after_the_current_trial(scheduling_copy: tuple[str, str], tmp_path: Path) -> None:
    """trials=3, c pressed during trial 1: the panel says the trial finishes first, escape is refused while it
    runs, and the run stops after trial 1; the file holds that one trial, loaded and triaged."""
    from tracetui.core.harness import load_agent

    agent_file = tmp_path / "gated_agent.py"
    agent_file.write_text(textwrap.dedent(GATED_AGENT.format(agent=AGENT)), encoding="utf-8")
    module = load_agent(f"{agent_file}:run").run.__globals__  # the panel's load_agent gets this same module
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        _form(screen, f"{agent_file}:run", trials=3)
        await pilot.press("r")
        assert module["STARTED"].wait(10)
        await pilot.pause()
        assert screen.run_state == "running" and "running trial 1 of 3" in screen.message
        assert screen.query_one("#triage-agent").disabled  # the form waits for the run
        await pilot.press("c")
        assert screen.run_state == "cancelling" and "the current trial finishes first" in screen.message
        await pilot.press("escape")
        assert app.screen is screen  # not closed under a running replay
        module["GATE"].set()
        await _settle(pilot, lambda: screen.run_state == "cancelled" and not app.reloading
                      and screen.result is not None)
        out = tmp_path / "original.replay-1.jsonl"
        assert "cancelled after trial 1 of 3" in screen.message
        assert len(read_runs(str(out)).runs) == 1
        assert screen.result.reproduction is not None and screen.result.reproduction.trials == 1
        assert app.replay_path == str(out)
        assert not screen.query_one("#triage-agent").disabled


async def test_bad_agent_and_bad_trials_are_messages(scheduling_copy: tuple[str, str], tmp_path: Path) -> None:
    """An agent file that does not exist, a module without the function, an empty agent, trials 0: each is a
    message in the panel (no traceback, no replay file), and the panel stays usable."""
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        _form(screen, "nowhere/agent.py:run")
        await pilot.press("r")
        await _settle(pilot, lambda: screen.run_state == "failed")
        assert screen.message.startswith("✗") and "nowhere/agent.py" in screen.message and "not found" in screen.message
        _form(screen, f"{AGENT}:no_such_function")
        await pilot.press("r")
        await _settle(pilot, lambda: "no_such_function" in screen.message)
        assert "has no 'no_such_function'" in screen.message and "run_fixed" in screen.message  # names what exists
        _form(screen, "")
        await pilot.press("r")
        assert "type the agent first" in screen.message
        await pilot.press("escape")  # focus is in the agent field: escape still closes
        await pilot.press("t")
        await _settle(pilot, lambda: isinstance(app.screen, TriageScreen) and app.screen.result is not None)
        screen = app.screen  # type: ignore[assignment]
        _form(screen, f"{AGENT}:run", trials=0)
        await pilot.press("r")
        assert "trials must be a whole number from 1 to" in screen.message
        assert isinstance(app.screen, TriageScreen)
    assert not list(tmp_path.glob("*.replay-*.jsonl"))


async def test_changed_tool_schemas_are_a_message(scheduling_copy: tuple[str, str], tmp_path: Path) -> None:
    """A strict replay against other tool schemas is refused by the harness: the panel says so."""
    agent_file = tmp_path / "schema_agent.py"
    agent_file.write_text(textwrap.dedent(GATED_AGENT.format(agent=AGENT)) + textwrap.dedent('''
        TOOL_SCHEMAS = {**TOOL_SCHEMAS, "get_appointment": {"type": "object", "properties": {}}}
        GATE.set()
    '''), encoding="utf-8")
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        _form(screen, f"{agent_file}:run")
        await pilot.press("r")
        await _settle(pilot, lambda: screen.run_state == "failed")
        assert "schema" in screen.message.lower() and "Traceback" not in screen.message


async def test_missing_redaction_key_replays_with_a_one_off_key(scheduling_copy: tuple[str, str],
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no project key anywhere the replay still runs, with a one-off key, and the panel says what that costs."""
    monkeypatch.delenv("TRACETUI_REDACTION_KEY", raising=False)
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        _form(screen, f"{AGENT}:run")
        await pilot.press("r")
        await _settle(pilot, lambda: screen.run_state == "done" and not app.reloading)
        assert "one-off key" in screen.message and (tmp_path / "original.replay-1.jsonl").exists()
    assert not (tmp_path / ".tracetui").exists()  # the panel never creates a key


async def test_enter_in_the_agent_field_runs(scheduling_copy: tuple[str, str], tmp_path: Path) -> None:
    """tab to the form, type the agent, enter: the replay runs (the keys typed there never reach the panel's)."""
    app = TraceTuiApp(*scheduling_copy)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        _form(screen, "")
        await pilot.press("tab")
        assert app.focused is screen.query_one("#triage-agent")
        await pilot.press(*f"{AGENT}:run", "enter")
        await _settle(pilot, lambda: screen.run_state == "done" and not app.reloading)
        assert (tmp_path / "original.replay-1.jsonl").exists()
        assert app.screen is screen  # the t, q and c typed did not close or cancel anything


def test_next_replay_path_never_reuses_a_name(tmp_path: Path) -> None:
    """<stem>.replay-N.jsonl with the first free N, next to the original; FILE#RUN is the file."""
    original = tmp_path / "incident.jsonl"
    original.write_text("")
    assert next_replay_path(str(original)) == str(tmp_path / "incident.replay-1.jsonl")
    (tmp_path / "incident.replay-1.jsonl").write_text("")
    (tmp_path / "incident.replay-3.jsonl").write_text("")
    assert next_replay_path(f"{original}#run-7") == str(tmp_path / "incident.replay-2.jsonl")


async def test_help_and_footer_list_t_and_l(scheduling: tuple[str, str]) -> None:
    """The help (generated from the bindings) lists triage and label; the footer shows both keys at 120 columns;
    neither applies when no pair is loaded (a load error)."""
    from textual.widgets._footer import FooterKey

    from tests.tui.helpers import DATA

    broken = TraceTuiApp(DATA / "original.jsonl", DATA / "garbage.jsonl")
    async with broken.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert broken.load_error is not None
        assert broken.check_action("triage", ()) is False and broken.check_action("label", ()) is False
        await pilot.press("t", "l")
        assert broken.screen is broken.screen_stack[0]

    app = TraceTuiApp(*scheduling)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        keys = {k.key for k in app.screen.query(FooterKey)}
        assert {"t", "l"} <= keys
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        ids = {e.binding_id for e in app.screen.entries}
        assert {"triage", "label"} <= ids
        await pilot.press("escape", "t")
        await pilot.pause()
        assert isinstance(app.screen, TriageScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)  # the panel's own keys
        assert {"triage-close", "triage-run", "triage-cancel"} <= {e.binding_id for e in app.screen.entries}


async def test_every_panel_binding_has_an_id() -> None:
    """Each binding of the triage panel and the label dialog carries a kebab-case id (for set_keymap)."""
    from tracetui.tui.screens.label_dialog import LabelDialog

    for owner in (TriageScreen, TriageList, LabelDialog):
        for binding in owner.BINDINGS:
            assert binding.id, f"{owner.__name__}: {binding.key} has no id"  # type: ignore[union-attr]
            assert binding.id == binding.id.lower() and "_" not in binding.id  # type: ignore[union-attr]


async def test_the_agent_field_finds_the_recorded_agent_from_another_folder(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's agent_ref is relative to where the run was recorded; opened from elsewhere, the field holds a
    reference that loads from here (found from the trace's folder upwards), not one that says "not found"."""
    from textual.widgets import Input

    from tracetui.core.harness.agent import load_agent

    original, replay = sample_pair("scheduling")
    monkeypatch.chdir(tmp_path)
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open_panel(pilot)
        value = screen.query_one("#triage-agent", Input).value
        assert value.endswith("agent.py:run") and value != "sample_runs/scheduling/agent.py:run"
        assert load_agent(value).run.__name__ == "run"
