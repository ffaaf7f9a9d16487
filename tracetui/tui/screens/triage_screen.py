"""TriageScreen: the three triage steps as a guided checklist, the verdict with its evidence, and step 2's replay.

Opened with ``t`` (issue 5, "Triage panel"). The steps are practice.md's "Triage order", as
``tracetui.core.triage.triage`` answers them for the original and the replay's runs (each run
one trial):

1. Can this run be replayed? (the replayability verdict and every finding)
2. Does the failure come back with recorded tools? (reproduced of trials, each trial's reason)
3. Model or prompt, data or integration, or a change? (the verdict and its evidence)

Every finding, trial and piece of evidence is an item of one list: ``enter`` closes the panel with
the aligned view's cursor on its span (evidence from a trial that is not the replay shown first
loads that trial into the view). From the panel, step 2 runs ``tracetui.core.harness.replay`` in a
thread worker: the trial count is reported as each trial ends, ``c`` stops after the trial running
(cooperative: the harness cannot be interrupted mid-trial), the replay is written next to the
original as ``<original stem>.replay-N.jsonl`` (never over an existing file), loaded into the view,
and triaged again. Errors (a bad agent reference, changed tool schemas) are shown in the panel,
never as a traceback.

A modal rather than a docked panel: the checklist, its evidence and the run form need the height
of the screen at 80x24, and an item's ``enter`` closes it onto the row, as the full pair screen does.

What the checklist lists (headings, items, their targets) is built in ``triage_checklist``
(``TriageList``, ``Target``, ``Item`` are importable from here); this module is the screen:
its layout, the triage and replay workers, going to a span.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Select, Static
from textual.widgets.option_list import Option

from tracetui.tui.formatting import visible
from tracetui.tui.screens.triage_checklist import (
    ITEMS_PER_STEP,
    STATE_MARKS,
    Item,
    Target,
    TriageList,
    answer,
    entries,
    heading,
    indented,
)

if TYPE_CHECKING:
    from tracetui.core.model import Trace
    from tracetui.core.triage import TriageResult
    from tracetui.tui.host import PairHost

__all__ = ["ITEMS_PER_STEP", "LLM_MODES", "MAX_TRIALS", "REPLAY_MODES", "STATE_MARKS", "Item", "RunCancelled", "Target",
           "TriageList", "TriageScreen", "next_replay_path", "trace_ref"]

MAX_TRIALS = 100
"""Largest K the panel accepts."""

REPLAY_MODES = ("strict", "fixture")
LLM_MODES = ("frozen", "live")


def next_replay_path(original: str) -> str:
    """``<folder>/<original stem>.replay-N.jsonl`` for the smallest N >= 1 naming no existing file.

    Args:
        original: The original trace (``FILE`` or ``FILE#RUN``; the run is ignored).
    """
    from tracetui.core.readers import split_run_ref

    path, _run = split_run_ref(original)
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    n = 1
    while True:
        candidate = os.path.join(folder, f"{stem}.replay-{n}.jsonl")
        if not os.path.lexists(candidate):
            return candidate
        n += 1


def trace_ref(trace: Trace) -> str:
    """``FILE#RUN`` of one run of a file holding several, else ``FILE`` (how the view is told to show it)."""
    if len(trace.trace_ids) > 1 and trace.trace_id is not None:
        return f"{trace.path}#{trace.trace_id}"
    return trace.path


def _same_run(a: Trace, b: Trace) -> bool:
    return a is b or (os.path.abspath(a.path) == os.path.abspath(b.path) and a.trace_id == b.trace_id)


class RunCancelled(Exception):
    """Raised from ``on_trial`` between trials when the user cancelled; carries the trials done."""

    def __init__(self, done: int) -> None:
        super().__init__(f"cancelled after trial {done}")
        self.done = done


class TriageScreen(ModalScreen["int | None"]):
    """Modal triage panel over the aligned view; dismisses with the row to put the cursor on, or None."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "triage--passed",
        "triage--failed",
        "triage--pending",
        "triage--skipped",
        "triage--muted",
        "triage--verdict",
        "triage--error",
        "triage--original",
        "triage--replay",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,t", "close", "Close", id="triage-close", tooltip="Back to the aligned view"),
        Binding("r", "run", "Run replay", id="triage-run",
                tooltip="Step 2: replay the original with the agent, mode, LLM and trials of the form"),
        Binding("c", "cancel_run", "Cancel run", id="triage-cancel",
                tooltip="Stop the replay after the trial running now (it finishes first)"),
        Binding("question_mark", "app.help", "Help", id="triage-help", tooltip="This list of keys"),
    ]

    # -- messages from the workers (post_message is thread-safe; a closed screen drops them) --

    @dataclass
    class Computed(Message):
        """Triage finished: the result, or why it failed."""

        result: TriageResult | None
        error: str | None = None

    @dataclass
    class TrialDone(Message):
        """Trial ``trial`` of ``trials`` ended."""

        trial: int
        trials: int
        reproduces: bool | None
        diverged: bool

    @dataclass
    class RunFinished(Message):
        """The replay was written to ``out`` with ``done`` of ``trials`` trials (fewer when cancelled)."""

        out: str
        done: int
        trials: int
        cancelled: bool
        notes: list[str]
        schema_hash: str | None

    @dataclass
    class RunFailed(Message):
        """The replay could not run; ``reason`` says why (never a traceback)."""

        reason: str

    def __init__(self) -> None:
        super().__init__()
        self.result: TriageResult | None = None
        """The triage shown (None while computing)."""
        self.items: list[Item] = []
        """The selectable items, in list order."""
        self.run_state = "idle"
        """``idle``, ``running``, ``cancelling``, ``done``, ``cancelled`` or ``failed``."""
        self.message = ""
        """The status line's text (plain): progress, the replay written, or the last error."""
        self.last_replay: str | None = None
        """The replay file the last run wrote."""
        self._cancel = threading.Event()
        self._option_targets: dict[str, Target] = {}
        self._counts: tuple[int, int, str] = (0, 0, "")

    @property
    def tui(self) -> PairHost:
        """The app (typed)."""
        return self.app  # type: ignore[return-value]

    # -- layout -------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.tui
        agent = ""
        if app.diff is not None:
            ref = app.diff.original.header.get("agent_ref")
            if isinstance(ref, str):  # recorded relative to where `tracetui record` ran: find it from here
                from tracetui.core.harness.agent import locate_agent_ref

                agent = locate_agent_ref(ref, app.diff.original.path)
        with Vertical(id="triage-box"):
            yield Static(id="triage-title", markup=False)
            yield TriageList(Option(Text("assessing the run…", "dim"), disabled=True), id="triage-list")
            with Horizontal(id="triage-form"):
                with Horizontal(id="triage-agent-row"):
                    yield Static("step 2 · agent", classes="triage-field")
                    yield Input(value=agent, placeholder="module:function or path/to/agent.py:function",
                                id="triage-agent", compact=True)
                with Horizontal(id="triage-options-row"):
                    yield from self._options()
            yield Static(id="triage-status", markup=False)
            yield Static(Text("enter go to span · r run replay · c cancel run · tab form · escape close",
                              no_wrap=True, overflow="ellipsis"), id="triage-hint")

    def _options(self) -> ComposeResult:
        """Mode, LLM, trials and the run button (the second row of the form on narrow screens)."""
        yield Static("mode", classes="triage-field")
        yield Select([(m, m) for m in REPLAY_MODES], value="strict", allow_blank=False, compact=True,
                     id="triage-mode")
        yield Static("LLM", classes="triage-field")
        yield Select([(m, m) for m in LLM_MODES], value="frozen", allow_blank=False, compact=True,
                     id="triage-llm")
        yield Static("trials", classes="triage-field")
        yield Input(value="1", type="integer", id="triage-trials", compact=True)
        yield Button("Run", id="triage-run-button", compact=True, variant="primary")

    def on_mount(self) -> None:
        self._show_title()
        self._set_status("r runs step 2's replay with the agent below (tab moves to the form)", "muted")
        self.query_one(TriageList).focus()
        self._compute(self.tui.triage_replays, None)

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"triage--{name}")
        return Style(color=full.color, bold=full.bold, italic=full.italic)

    def _show_title(self) -> None:
        app = self.tui
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("triage", "bold")
        if app.diff is not None:
            title.append(f"  {visible(os.path.basename(app.diff.original.path))}", self._style("original"))
            replays = self.tui.triage_replays or app.replay_path
            title.append("  ⟷  ", self._style("muted"))
            title.append(visible(os.path.basename(replays)), self._style("replay"))
        r = self.result
        if r is not None:
            title.append("   verdict ", self._style("muted"))
            title.append(r.verdict or "pending (step 2 needs a replay)",
                         self._style("verdict" if r.verdict else "pending") + Style(bold=True))
            if r.confidence:
                title.append(f" ({r.confidence} confidence)", self._style("muted"))
            if r.reproduction is not None:
                n = r.reproduction.trials
                title.append(f"  ·  {r.reproduction.reproduced} of {n} trial{'s' if n != 1 else ''} reproduced",
                             self._style("muted"))
        self.query_one("#triage-title", Static).update(title)

    # -- computing the triage -------------------------------------------------

    @work(thread=True, exclusive=True, group="triage", exit_on_error=False)
    def _compute(self, replays_ref: str | None, schema_hash: str | None) -> None:
        """Triage the original against the replay's runs, off the event loop; posts ``Computed``."""
        from tracetui.core.errors import TracetuiError

        try:
            from tracetui.core.triage import triage

            app = self.tui
            diff = app.diff
            if diff is None:
                self.post_message(self.Computed(None, "the pair is not loaded"))
                return
            replays = self._replay_runs(replays_ref)
            result = triage(diff.original, replays, tool_schema_hash=schema_hash)
        except (TracetuiError, OSError, ValueError) as exc:
            self.post_message(self.Computed(None, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bug is a message in the panel, never a traceback
            self.post_message(self.Computed(None, f"internal error: {type(exc).__name__}: {exc}"))
        else:
            self.post_message(self.Computed(result))

    def _replay_runs(self, replays_ref: str | None) -> list[Trace]:
        """The runs counted as trials: every run of ``replays_ref`` (a file the panel wrote), else of the
        replay shown (only that run when it was picked with ``#RUN`` or shares the original's file)."""
        from tracetui.core.readers import read_runs, split_run_ref

        app = self.tui
        assert app.diff is not None
        original, shown = app.diff.original, app.diff.replay
        if replays_ref is None:
            path, run = split_run_ref(app.replay_path)
            if run is not None or app.replay_trace_id is not None or len(shown.trace_ids) <= 1:
                return [shown]
            if os.path.abspath(path) == os.path.abspath(original.path):
                return [shown]
            replays_ref = path
        runs = read_runs(replays_ref).runs
        return [t for t in runs if not _same_run(t, original)] or [shown]

    @on(Computed)
    def _computed(self, message: Computed) -> None:
        lst = self.query_one(TriageList)
        if message.result is None:
            lst.clear_options()
            lst.add_option(Option(Text(f"triage failed: {visible(message.error or '')}", self._style("error")),
                                  disabled=True))
            return
        self.result = message.result
        self._show_title()
        self._fill(message.result)

    # -- the checklist --------------------------------------------------------

    def _fill(self, result: TriageResult) -> None:
        options: list[Option | None] = []
        self.items = []
        self._option_targets = {}
        for step in result.steps:
            if options:
                options.append(None)  # separator
            options.append(Option(heading(step.number, step.title, step.state, step.detail, self._style,
                                          answer(result, step.number, step.state)), disabled=True))
            items = entries(result, step.number, self._style)
            for text, target in items[:ITEMS_PER_STEP]:
                option_id = f"item-{len(self.items)}"
                self.items.append(Item(step.number, text.plain, target))
                self._option_targets[option_id] = target
                options.append(Option(indented(text), id=option_id))
            if len(items) > ITEMS_PER_STEP:
                more = Text(f"… {len(items) - ITEMS_PER_STEP:,} more (`tracetui triage ORIGINAL` lists them all)",
                            self._style("muted"))
                options.append(Option(indented(more), disabled=True))
        lst = self.query_one(TriageList)
        lst.clear_options()
        lst.add_options(options)
        first = next((i for i, o in enumerate(lst.options) if not o.disabled), None)
        lst.highlighted = first


    # -- going to a span --------------------------------------------------------

    @on(OptionList.OptionSelected, "#triage-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        target = self._option_targets.get(event.option_id or "")
        if target is not None:
            self.go_to(target)

    def go_to(self, target: Target) -> None:
        """Close onto ``target``'s row; load its trial into the view first when another replay is shown.

        A run-level item (no span) says so in the status line and keeps the panel open.
        """
        app = self.tui
        if target.span_id is None:
            if target.why == "form":
                self.query_one("#triage-agent", Input).focus()
                self._set_status("type the agent (module:function or path/to/agent.py:function), then enter", "muted")
                return
            self._set_status(f"run-level (no span to go to): {target.why}", "muted")
            return
        if app.reloading or app.diff is None:
            self._set_status("the view is still loading the replay; try again in a moment", "muted")
            return
        if target.trial is not None and self.result is not None and self.result.reproduction is not None:
            trial_replay = self.result.reproduction.per_trial[target.trial].diff.replay
            if not _same_run(trial_replay, app.diff.replay):
                if self._busy():
                    return
                app.load_replay(trace_ref(trial_replay), jump_to=(target.side, target.span_id))
                self.dismiss(None)
                return
        row = app.row_of_span(target.span_id, target.side)
        if row is None:
            self._set_status(f"span {target.span_id} is not in the pair shown", "error")
            return
        if self._busy():
            return
        self.dismiss(row)

    # -- step 2: running the replay ---------------------------------------------

    def _busy(self) -> bool:
        if self.run_state in ("running", "cancelling"):
            self.app.bell()
            self.notify("A replay is running: c cancels it (the current trial finishes first).", title="triage",
                        markup=False)
            return True
        return False

    def action_close(self) -> None:
        """Back to the aligned view (not while a replay runs: cancel it first)."""
        if self._busy():
            return
        self.dismiss(None)

    @on(Input.Submitted, "#triage-agent")
    @on(Input.Submitted, "#triage-trials")
    @on(Button.Pressed, "#triage-run-button")
    def _run_asked(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        """Replay the original with the form's agent, mode, LLM and trials, in a thread worker."""
        if self.run_state in ("running", "cancelling"):
            self._busy()
            return
        app = self.tui
        if app.diff is None:
            return
        agent = self.query_one("#triage-agent", Input).value.strip()
        if not agent:
            self.query_one("#triage-agent", Input).focus()
            self._fail("type the agent first: module:function or path/to/agent.py:function (called as run(ctx, input))")
            return
        raw = self.query_one("#triage-trials", Input).value.strip() or "1"
        try:
            trials = int(raw)
        except ValueError:
            trials = 0
        if not 1 <= trials <= MAX_TRIALS:
            self.query_one("#triage-trials", Input).focus()
            self._fail(f"trials must be a whole number from 1 to {MAX_TRIALS}, not {raw!r}")
            return
        mode = str(self.query_one("#triage-mode", Select).value)
        llm = str(self.query_one("#triage-llm", Select).value)
        self._cancel.clear()
        self.run_state = "running"
        self._form_enabled(False)
        self.query_one(TriageList).focus()
        self._progress(0, trials)
        self._run_replay(agent, mode, llm, trials, app.diff.original, app.original_path)

    def action_cancel_run(self) -> None:
        """Ask the running replay to stop after its current trial."""
        if self.run_state != "running":
            self.app.bell()
            self._set_status("no replay is running", "muted")
            return
        self._cancel.set()
        self.run_state = "cancelling"
        self._progress(*self._counts)

    @work(thread=True, exclusive=True, group="triage-run", exit_on_error=False)
    def _run_replay(self, agent: str, mode: str, llm: str, trials: int, recording: Trace, original_path: str) -> None:
        """Load the agent, replay K trials into a new file next to the original; posts ``RunFinished`` or ``RunFailed``."""
        from tracetui.core.errors import TracetuiError
        from tracetui.core.harness import load_agent, replay
        from tracetui.core.harness.redact import project_redactor
        from tracetui.core.harness.sandbox import ISOLATION_GUARD

        notes: list[str] = []
        try:
            spec = load_agent(agent)
            red = recording.header.get("redaction")
            redactor, note = project_redactor(sensitive_fields=spec.sensitive_fields,
                                              recorded_key=red.get("key_id") if isinstance(red, dict) else None)
            if note is not None:
                notes.append(note)

            def on_trial(result: Any) -> None:
                self.post_message(self.TrialDone(result.trial, trials, result.reproduces, bool(result.diverged)))
                if self._cancel.is_set() and result.trial < trials:
                    raise RunCancelled(result.trial)

            for _attempt in range(3):  # another process may take the name between the check and the write
                out = next_replay_path(original_path)
                try:
                    report = replay(recording, spec, out, redactor=redactor, mode=mode, llm=llm, trials=trials,
                                    on_trial=on_trial, isolation=ISOLATION_GUARD)  # in the TUI's process
                except FileExistsError:
                    continue
                except RunCancelled as exc:
                    self.post_message(self.RunFinished(out, exc.done, trials, True, notes, spec.tool_schema_hash()))
                    return
                self.post_message(self.RunFinished(out, len(report.runs), trials, False, notes,
                                                   spec.tool_schema_hash()))
                return
            self.post_message(self.RunFailed("could not find a free name for the replay file; try again"))
        except (TracetuiError, OSError, ValueError) as exc:
            self.post_message(self.RunFailed(_one_line(f"{type(exc).__name__}: {exc}" if isinstance(exc, OSError)
                                                       else str(exc))))
        except Exception as exc:  # noqa: BLE001 - the user's agent may raise anything; never a traceback
            self.post_message(self.RunFailed(_one_line(f"{type(exc).__name__}: {exc}")))

    @on(TrialDone)
    def _trial_done(self, message: TrialDone) -> None:
        if self.run_state not in ("running", "cancelling"):
            return
        state = "diverged" if message.diverged else ("same path" if message.reproduces else "other path")
        self._progress(message.trial, message.trials, f"trial {message.trial}: {state}")

    @on(RunFinished)
    def _run_finished(self, message: RunFinished) -> None:
        self.run_state = "cancelled" if message.cancelled else "done"
        self.last_replay = message.out
        self._form_enabled(True)
        name = os.path.basename(message.out)
        if message.cancelled:
            text = (f"cancelled after trial {message.done} of {message.trials}: {name} holds the "
                    f"{message.done} finished trial{'s' if message.done != 1 else ''}; loaded")
        else:
            text = f"replay written: {name} ({message.done} trial{'s' if message.done != 1 else ''}); loaded"
        if message.notes:
            text += " · " + " · ".join(message.notes)
        from tracetui.core.harness.sandbox import ISOLATION_GUARD

        text += f" · network isolation: {ISOLATION_GUARD}"  # the trials ran in this process
        self._set_status(text, "pending" if message.notes or message.cancelled else "passed")
        app = self.tui
        app.triage_replays = message.out
        app.load_replay(message.out)
        self.result = None
        self._show_title()
        self._compute(message.out, message.schema_hash)

    @on(RunFailed)
    def _run_failed(self, message: RunFailed) -> None:
        self.run_state = "failed"
        self._form_enabled(True)
        self._fail(message.reason)

    # -- status ---------------------------------------------------------------

    def _progress(self, done: int, total: int, last: str = "") -> None:
        self._counts = (done, total, last)
        width = min(total, 20)
        filled = round(width * done / total) if total else 0
        bar = "■" * filled + "□" * (width - filled)
        text = f"running trial {min(done + 1, total)} of {total}" if done < total else f"finishing ({total} trials)"
        parts = [text, bar] + ([last] if last else [])
        if self.run_state == "cancelling":
            parts.append("cancelling: the current trial finishes first…")
        else:
            parts.append("c cancels (the current trial finishes first)")
        self._set_status(" · ".join(parts), "pending")

    def _fail(self, reason: str) -> None:
        self._set_status(f"✗ {reason}", "error")

    def _set_status(self, text: str, kind: str) -> None:
        self.message = text
        self.query_one("#triage-status", Static).update(Text(visible(text), self._style(kind)))

    def _form_enabled(self, enabled: bool) -> None:
        for widget in self.query("#triage-form Input, #triage-form Select, #triage-form Button"):
            widget.disabled = not enabled


def _one_line(text: str, limit: int = 600) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
