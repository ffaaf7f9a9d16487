"""TraceTuiApp: the original and replay traces side by side, opened on the first divergence.

Reading and diffing run in a thread worker; the first frame (a loading state)
is drawn before the data exists, and the result arrives as a ``PairLoaded``
message. A trace that cannot be read shows an error panel naming file, line
and field, never a traceback.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Callable, ClassVar, TypeVar

import orjson
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.widget import Widget

from tracetui.core.errors import TracetuiError
from tracetui.core.model import ReadIssue
from tracetui.tui.commands import TraceCommands
from tracetui.tui.config import load_config
from tracetui.tui.formatting import visible
from tracetui.tui.loading import LoadingMixin, column_title
from tracetui.tui.messages import LoadFailed
from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
from tracetui.tui.widgets.footer import TraceFooter
from tracetui.tui.widgets.load_error import LoadErrorPanel
from tracetui.tui.widgets.notice_line import NoticeLine
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.watching import WatchMixin
from tracetui.tui.widgets.status_bar import StatusBar

# Imported on first use, not here, so the first frame comes sooner (benchmarks/bench_tui.py): the readers and
# the labels module (in the load worker and once loaded), and every screen pushed later (help, pair, triage,
# label, promote, warnings).
if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.load.pairread import PairRead
    from tracetui.core.diff.labels import Label
    from tracetui.tui.screens.label_dialog import LabelOutcome

WidgetType = TypeVar("WidgetType", bound=Widget)


class TraceTuiApp(LoadingMixin, WatchMixin, App[int]):
    """``tracetui ORIGINAL REPLAY``: aligned spans, the highlighted pair's fields, and a status line.

    Args:
        original_path: Trace of the run that happened.
        replay_path: Trace of the replay.
        original_format: Reader name for the original (default: sniffed).
        replay_format: Reader name for the replay (default: sniffed).
        trace_id: Trace to pick in files holding several; also tried on the
            replay, which falls back to its first trace when it lacks that id.
        replay_trace_id: Trace to pick in the replay (no fallback).
        config_path: The user config file (theme, keys; ``tui/config.py``); default ``$TRACETUI_CONFIG``, else
            ``$XDG_CONFIG_HOME/tracetui/config.toml``. A bad file is a warning; its good parts still apply.
        watch: Follow the replay while it is written (``tui/watching.py``, docs/watch.md).
        prefetched: The pair's read, started before the app (``core.pairread.PairRead``; the CLI starts it
            before importing Textual): the first load takes it if it reads the same pair, else cancels it.
    """

    CSS_PATH = "app.tcss"
    TITLE = "tracetui"
    ENABLE_COMMAND_PALETTE = True
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {TraceCommands}
    """The palette (ctrl+p) offers tracetui's commands only (``tui/commands.py``), theme and help included."""

    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [(0, "-short"), (30, "-tall")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit tracetui"),
        Binding("question_mark", "help", "Help", id="help", tooltip="This list of keys"),
        Binding("d", "toggle_detail", "Detail", id="toggle-detail", tooltip="Hide or show the detail pane"),
        Binding("t", "triage", "Triage", id="triage",
                tooltip="Triage: can the run be replayed, does the failure come back with recorded tools, the verdict "
                "and its evidence; runs the replay"),
        Binding("l", "label", "Label", id="label",
                tooltip="Label the divergence under the cursor (acceptable_alternative, new_regression, "
                "fixture_mismatch, insufficient_spec) with a note, or change or remove its label"),
        Binding("g", "promote", "Promote", id="promote",
                tooltip="Promote the original run to a golden case: a redacted minimal fixture, a contract derived "
                "from the run and the replay (editable), provenance; written to golden/NAME/"),
        # Not in the footer (it would crowd out the others at 80 columns): the status line says
        # "press w" when there are warnings, and the help lists it.
        Binding("ctrl+p", "command_palette", "Commands", show=False, priority=True, id="command-palette",
                tooltip="The command palette: every action by name (jump to span, divergences, triage, promote, "
                "theme...)"),
        Binding("R", "reload", "Reload", show=False, id="reload",
                tooltip="Read both files again (they changed on disk, or failed to load); the view opens on the "
                "first divergence again"),
        Binding("w", "show_issues", "Warnings", show=False, id="show-issues",
                tooltip="Lines the readers skipped or doubted, with file and line"),
        Binding("J,ctrl+down", "scroll_detail(1)", "Detail down", show=False, id="detail-scroll-down",
                tooltip="Scroll the detail pane down a line (the list keeps the cursor)"),
        Binding("K,ctrl+up", "scroll_detail(-1)", "Detail up", show=False, id="detail-scroll-up",
                tooltip="Scroll the detail pane up a line"),
        Binding("B", "run_list", "Runs", id="run-list",
                tooltip="The file's runs: open another alone, or mark two and diff them (when the app opened on "
                "the list)"),
        Binding("X", "dismiss_notices", "Hide notices", show=False, id="dismiss-notices",
                tooltip="Hide the notice line above the detail pane (run inputs changed, several runs, config "
                "problems)"),
        Binding("F", "toggle_follow", "Follow", show=False, id="toggle-follow",
                tooltip="Watch mode: follow the replay as it is written (the cursor goes to each new span), "
                "or stop following and keep the cursor where it is"),
    ]

    def __init__(
        self,
        original_path: str | os.PathLike[str],
        replay_path: str | os.PathLike[str] | None = None,
        *,
        original_format: str | None = None,
        replay_format: str | None = None,
        trace_id: str | None = None,
        replay_trace_id: str | None = None,
        config_path: str | os.PathLike[str] | None = None,
        watch: bool = False,
        prefetched: PairRead | None = None,
        runs: list[dict[str, object]] | None = None,
    ) -> None:
        super().__init__()
        self.single = replay_path is None
        """One trace alone (``tracetui FILE``): the same tree, detail pane, search and filters, no diff columns
        (the trace is read as both sides of an equal pair)."""
        self.runs = runs
        """The runs of ``original_path`` (``summarize_run`` dicts) when it holds several and none was picked:
        the app opens on the run list (``screens/run_list.py``), from which one run or two are opened."""
        if replay_path is None:
            replay_path, replay_trace_id = original_path, trace_id
        self.prefetched = prefetched
        self.watch_mode = watch
        """True for ``--watch``: the replay is followed while it is written."""
        self.original_path = os.fspath(original_path)
        self.replay_path = os.fspath(replay_path)
        self.original_format = original_format
        self.replay_format = replay_format
        self.trace_id = trace_id
        self.replay_trace_id = replay_trace_id
        self.diff: TraceDiff | None = None
        """The loaded pair's diff (None while loading or after a load error)."""
        self.load_error: LoadFailed | None = None
        """Why loading failed, when it did."""
        self.labels: dict[str, Label] = {}
        """Reviewer labels of the loaded replay, by ``divergence_key`` (``tracetui.core.diff.labels``)."""
        self.labels_error: str | None = None
        """Why the labels sidecar could not be read (the labels are then not shown), else None."""
        self.triage_replays: str | None = None
        """The replay file (``FILE`` or ``FILE#RUN``) whose runs the triage panel counts as trials; None: the
        replay shown. Set when the panel runs a replay (every trial of the new file), kept when the view then
        shows one of its trials."""
        self.reloading = False
        """True from ``load_replay`` until the new pair is shown."""
        self.source_changed_said: set[str] = set()
        """Files whose change on disk was said (``notices.say_source_changed``), so it is said once each."""
        self._jump_after_load: tuple[str, str] | None = None
        self.config = load_config(config_path)
        """The user config read (``tui/config.py``); ``config.problems`` lists what was ignored."""
        if self.config.keys:
            from tracetui.tui.keymap import drop_bad_keys

            self.config.problems.extend(drop_bad_keys(self.config))  # a malformed key would unbind its action
            self.set_keymap(self.config.keys)  # ids no binding has are ignored by Textual, and reported
        if self.config.theme is not None:
            from tracetui.tui.keymap import apply_theme

            self.config.problems.extend(apply_theme(self, self.config))
        self.sub_title = self._sub_title()

    def _sub_title(self) -> str:
        if self.single:
            return os.path.basename(self.original_path)
        return f"{os.path.basename(self.original_path)} ⟷ {os.path.basename(self.replay_path)}"

    def _apply_single(self) -> None:
        """Tell the main screen's widgets whether one trace is shown alone."""
        for kind in (AlignedView, AlignedHeader, SpanDetail, StatusBar):
            self._main(kind).single = self.single  # type: ignore[attr-defined]

    def open_runs(self, original: str, replay: str | None) -> None:
        """Show ``original`` alone (``replay`` None) or diffed against ``replay`` (``FILE#RUN`` each): what the
        run list opens. Read in the load worker; the view opens on the first divergence (or the first row)."""
        self._thaw_pair()
        self.stop_watch()
        self.single = replay is None
        self.original_path = original
        self.replay_path = replay if replay is not None else original
        self.replay_format = self.original_format
        self.trace_id = self.replay_trace_id = None
        self._run_inputs_said = False
        self.forget_pair_notices()
        self._jump_after_load = None
        self.diff = None
        self.sub_title = self._sub_title()
        self._apply_single()
        self.clear_load_error()
        view = self._main(AlignedView)
        view.placeholder = "loading…"
        view.focus()
        self._main(StatusBar).show_loading(self.original_path, self.replay_path)
        self._main(SpanDetail).show_message(Text("loading…", style="dim"))
        self.load_pair()

    def action_run_list(self) -> None:
        """Back to the list of the file's runs (``B``; only when the app opened on it)."""
        if self.runs is None or self.screen is not self.screen_stack[0]:
            return
        from tracetui.tui.screens.run_list import RunListScreen
        from tracetui.core.readers import split_run_ref

        self.push_screen(RunListScreen(split_run_ref(self.original_path)[0], list(self.runs)))  # type: ignore[arg-type]

    def compose(self) -> ComposeResult:
        yield AlignedHeader(id="columns")
        yield AlignedView(id="aligned")
        yield NoticeLine(id="notices")
        yield SpanDetail(id="detail")
        yield LoadErrorPanel(id="load-error")
        yield StatusBar(id="status")
        yield TraceFooter()

    def on_mount(self) -> None:
        self._apply_single()
        if self.runs is not None:  # a file of several runs, none picked: the run list first
            from tracetui.tui.screens.run_list import RunListScreen

            self._main(AlignedView).placeholder = "pick a run in the list (B shows it again)"
            self._main(SpanDetail).show_message(Text("no run open", style="dim"))
            self.push_screen(RunListScreen(self.original_path, list(self.runs)))  # type: ignore[arg-type]
            return
        view = self._main(AlignedView)
        view.placeholder = "loading…"
        view.focus()
        self._main(StatusBar).show_loading(self.original_path, self.replay_path)
        self._main(AlignedHeader).set_titles(
            column_title("original", self.original_path, None), column_title("replay", self.replay_path, None), 0
        )
        self._main(SpanDetail).show_message(Text("loading…", style="dim"))
        if self.watch_mode:
            self.start_watch()  # the watch worker does the first load too (the replay may not exist yet)
        else:
            self.load_pair()
        if self.config.keys or self.config.problems:
            self.call_after_refresh(self._check_config)

    def _check_config(self) -> None:
        """Warn about what the config file got wrong (after the first frame: checking the keymap imports every
        screen); the app runs on with the defaults for those parts."""
        from tracetui.tui.keymap import check_keymap, key_conflicts

        self.config.problems.extend(check_keymap(self.config))
        self.config.problems.extend(key_conflicts(self.config, type(self)))
        problems = self.config_issues()
        if problems:  # short (a few lines at 80 columns): every problem in full is in w's list
            first = problems[0].message
            shown = [visible(first if len(first) <= 90 else first[:89] + "…")]
            if len(problems) > 1:
                shown.append(f"and {len(problems) - 1} more")
            shown.append("w lists them; the rest of the file applies")
            count = f"{len(problems)} problem{'s' * (len(problems) > 1)}"
            self.say_notice(f"config file: {count}", "\n".join(shown), severity="warning")

    def _main(self, kind: type[WidgetType]) -> WidgetType:
        """A widget of the main screen, even while another screen (help, pair) is on top."""
        return self.screen_stack[0].query_one(kind)

    _run_inputs_said = False

    def say_run_inputs(self, diff: TraceDiff) -> None:
        """Notify what changed in the run's inputs before any span ran (prompt version, model, tool schemas:
        the headers), once per pair; nothing while the replay has no header yet (watch mode, waiting)."""
        from tracetui.core.diff.report import not_a_replay, run_changes

        if self._run_inputs_said or not diff.replay.header:
            return
        self._run_inputs_said = True
        unrelated = not_a_replay(diff.original, diff.replay)
        if unrelated:
            self.notify(visible(f"{unrelated}: the divergences compare two different runs"),
                        title="not a replay of the original run", severity="warning", markup=False, timeout=12)
        changes = [c for c in run_changes(diff.original.header, diff.replay.header) if c["path"] != "input"]
        if changes:
            lines = [visible(f"{c['path']}: {_short(c['original'])} → {_short(c['replay'])}") for c in changes[:6]]
            if len(changes) > 6:
                lines.append(f"… {len(changes) - 6} more")
            self.say_notice("run inputs changed", "\n".join(lines))

    def say_notice(self, title: str, message: str, *, severity: str = "information") -> None:
        """Say something on the notice line above the detail pane (``widgets/notice_line.py``), never in a
        toast over it: what the app has to say on launch, while the user reads the first divergence."""
        self._main(NoticeLine).add(title, message, severity=severity)

    def forget_pair_notices(self) -> None:
        """Drop the notices about the pair shown (its run inputs, which run of a file), before another is read."""
        notices = self._main(NoticeLine)
        for title in ("run inputs changed", "original: several runs", "replay: several runs"):
            notices.remove(title)

    def action_dismiss_notices(self) -> None:
        """Hide the notice line (``X``)."""
        self._main(NoticeLine).dismiss()

    def on_unmount(self) -> None:
        self.stop_watch()
        self._thaw_pair()

    # -- reviewer labels ----------------------------------------------------

    @property
    def label_ref(self) -> str:
        """The replay reference labels are saved under (``labels.replay_ref``: ``FILE``, or ``FILE#RUN`` when
        the file holds several runs), so the CLI's ``diff`` shows the labels made here."""
        if self.diff is None:
            return self.replay_path
        from tracetui.core.diff.labels import replay_ref

        return replay_ref(self.diff.replay) or self.replay_path

    def _load_labels(self) -> None:
        """Read the replay's labels sidecar; a damaged one is a warning (labels not shown), never a crash."""
        from tracetui.core.diff.labels import load_labels, sidecar_path

        self.labels, self.labels_error = {}, None
        if self.single:  # labels are of divergences: none on one trace alone
            self._show_labels()
            return
        try:
            self.labels = load_labels(self.label_ref)
        except (TracetuiError, OSError, ValueError) as exc:
            self.labels_error = str(exc)
            self.say_notice(
                "reviewer labels not loaded",
                f"{visible(str(exc))}\nLabels are not shown, and new ones cannot be saved until "
                f"{os.path.basename(sidecar_path(self.label_ref))} is fixed or removed.",
                severity="warning",
            )
        self._show_labels()

    def _show_labels(self) -> None:
        """Mark labelled rows in the view and the detail pane."""
        if self.diff is None:
            return
        from tracetui.core.diff.labels import labels_for

        by_row = {self.diff.divergences[i].row: label for i, label in labels_for(self.diff, self.labels).items()}
        self._main(AlignedView).set_labels({row: label.label for row, label in by_row.items()})
        self._main(SpanDetail).set_labels(by_row)

    def label_of_row(self, row: int) -> Label | None:
        """The reviewer label of the divergence at ``row``, or None."""
        if self.diff is None or not 0 <= row < len(self.diff.rows):
            return None
        divergence = self.diff.row_divergence[row]
        if divergence is None:
            return None
        from tracetui.core.diff.labels import divergence_key

        return self.labels.get(divergence_key(divergence))

    def _label_done(self, outcome: LabelOutcome | None) -> None:
        """Save or remove what the label dialog returned, then redraw the marks."""
        if outcome is None:
            return
        from tracetui.core.diff.labels import remove_label, save_label, sidecar_path
        from tracetui.tui.redacting import redacted_label

        ref = self.label_ref
        try:
            if outcome.label is not None:
                outcome = dataclasses.replace(outcome, label=redacted_label(outcome.label))  # the note as record writes it
                save_label(ref, outcome.label)
                self.labels[outcome.label.key] = outcome.label
                self.notify(f"{outcome.label.label} saved to {os.path.basename(sidecar_path(ref))}", title="label",
                            markup=False)
            else:
                remove_label(ref, outcome.key)
                self.labels.pop(outcome.key, None)
                self.notify(f"label removed from {os.path.basename(sidecar_path(ref))}", title="label", markup=False)
        except (TracetuiError, OSError, ValueError) as exc:
            self.notify(visible(str(exc)), title="label not saved", severity="error", markup=False, timeout=12)
            return
        self.labels_error = None
        self._show_labels()

    # -- jumps (the triage panel) --------------------------------------------

    def row_of_span(self, span_id: str, side: str = "original") -> int | None:
        """The aligned row holding span ``span_id`` of ``side`` (``original`` or ``replay``) in the pair shown;
        the other side is tried when that side has no such span. None when neither has it."""
        if self.diff is None:
            return None
        diff = self.diff
        sides = ("replay", "original") if side == "replay" else ("original", "replay")
        for which in sides:
            spans = diff.original.spans if which == "original" else diff.replay.spans
            for n, row in enumerate(diff.rows):
                index = row.original if which == "original" else row.replay
                if index is not None and spans[index].span_id == span_id:
                    return n
        return None

    def jump_to_row(self, row: int) -> None:
        """Put the aligned view's cursor on ``row`` (scrolled into view; the detail pane follows)."""
        self._main(AlignedView).cursor_row = row

    # -- the cursor ---------------------------------------------------------

    @on(AlignedView.RowHighlighted)
    def _row_highlighted(self, message: AlignedView.RowHighlighted) -> None:
        if self.diff is None or not self.diff.rows:
            return
        self._main(SpanDetail).show_row(self.diff, message.row)
        self._main(StatusBar).show_row(message.row)

    @on(AlignedView.FiltersChanged)
    def _filters_changed(self, message: AlignedView.FiltersChanged) -> None:
        self._main(StatusBar).set_filter(message.summary)

    @on(AlignedView.RowSelected)
    def _row_selected(self, message: AlignedView.RowSelected) -> None:
        if self.diff is None:
            return
        from tracetui.tui.screens.pair_screen import PairScreen

        def follow(row: int | None) -> None:
            if row is not None:
                self._main(AlignedView).cursor_row = row

        from tracetui.core.errors import SourceChanged

        from tracetui.tui.pair_fields import read_payloads

        try:
            read_payloads(self.diff, message.row)  # a file changed since it was read is said here, no screen
        except SourceChanged as exc:
            from tracetui.tui.notices import say_source_changed

            say_source_changed(self, exc)
            self.bell()
            return
        self.push_screen(PairScreen(self.diff, message.row), follow)

    # -- actions ------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pane, warning, triage, label and promote keys only on the loaded main screen (w too when there are no
        warnings: it says so), so the footer offers them only there."""
        if action in ("toggle_detail", "show_issues", "scroll_detail", "triage", "label", "promote"):
            if self.diff is None or self.screen is not self.screen_stack[0]:
                return False
            if self.single and action in ("triage", "label", "promote"):  # they need a replay to compare with
                return False
        if action == "run_list":
            return self.runs is not None and self.screen is self.screen_stack[0]
        return True

    def action_reload(self) -> None:
        """Read both traces again, with the same formats and runs; a load error panel goes away first."""
        if self.screen is not self.screen_stack[0]:
            return
        if self.reloading:
            self.notify("The pair is already being read.", title="reload", markup=False)
            return
        self._thaw_pair()  # the pair shown until now may be collected once replaced
        self.source_changed_said.clear()  # a file that changes again is said again
        self._run_inputs_said = False
        self.forget_pair_notices()
        self._jump_after_load = None
        if self.clear_load_error():
            view = self._main(AlignedView)
            view.placeholder = "loading…"
            view.focus()
        self._main(StatusBar).show_loading(self.original_path, self.replay_path)
        if self.watch_mode:
            self.start_watch()  # the watch worker reads both again and follows the replay
        else:
            self.load_pair()

    async def action_quit(self) -> None:
        """Quit; the return code is 2 after a load error (what the CLI exits with), else 0."""
        self.exit(return_code=2 if self.load_error is not None else 0)

    def action_help(self) -> None:
        """Show every active key, generated from the bindings of the current screen."""
        from tracetui.tui.screens.help_screen import HelpScreen, collect_key_help

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(collect_key_help(self, self.screen.active_bindings)))

    def action_toggle_detail(self) -> None:
        """Hide or show the detail pane (more rows on small terminals)."""
        self._main(SpanDetail).toggle_class("-hidden")

    def action_scroll_detail(self, lines: int) -> None:
        """Scroll the detail pane ``lines`` lines (negative: up); the aligned view keeps focus and cursor."""
        self._main(SpanDetail).scroll_relative(y=lines, animate=False, immediate=True)

    def action_triage(self) -> None:
        """Open the triage panel (the three steps, the verdict and its evidence); it closes on the row picked."""
        if self.diff is None or self.still_reading("Triage runs"):
            return
        if self.reloading:
            self.notify("The replay is still loading; press t again in a moment.", title="triage", markup=False)
            return
        from tracetui.tui.screens.triage_screen import TriageScreen

        def follow(row: int | None) -> None:
            if row is not None:
                self.jump_to_row(row)

        self.push_screen(TriageScreen(), follow)

    def action_label(self) -> None:
        """Label the divergence under the cursor, or change or remove its label; bell on a row without one."""
        if self.diff is None or not self.diff.rows or self.still_reading("Labels can be set"):
            return
        row = self._main(AlignedView).cursor_row
        divergence = self.diff.row_divergence[row]
        if divergence is None:
            self.bell()
            self.notify("No divergence on this row: labels apply to divergences (n and p step through them).",
                        title="label", markup=False)
            return
        if self.labels_error is not None:
            self.notify(f"{visible(self.labels_error)}\nFix or remove the labels file first.",
                        title="labels file damaged", severity="error", markup=False, timeout=12)
            return
        from tracetui.tui.screens.label_dialog import LabelDialog

        self.push_screen(LabelDialog(self.diff, row, self.label_of_row(row)), self._label_done)

    def action_promote(self) -> None:
        """Open the promotion dialog on the pair shown (the original as the failing run, the replay as the fix)."""
        if self.diff is None or self.still_reading("Promote works"):
            return
        from tracetui.core.golden.promote import PromotedCase
        from tracetui.tui.screens.promote_dialog import PromoteDialog, promoted_message

        try:
            dialog = PromoteDialog.for_pair(self.diff.original, self.diff.replay)
        except TracetuiError as exc:
            self.notify(visible(str(exc)), title="promote", severity="error", markup=False, timeout=12)
            return

        def done(case: PromotedCase | None) -> None:
            if case is not None:
                self.notify(visible(promoted_message(case)), title="golden case", markup=False, timeout=12)

        self.push_screen(dialog, done)

    def config_issues(self) -> list[ReadIssue]:
        """What the config file got wrong (``config.problems``), as warnings for the ``w`` list."""
        import re

        name = str(self.config.path) if self.config.path is not None else "config"
        located = re.compile(rf"{re.escape(name)}(?::(\d+)(?::\d+)?)?: (.*)", re.DOTALL)  # PATH[:LINE[:COL]]: text
        issues = []
        for problem in self.config.problems:
            m = located.match(problem)
            line, message = (int(m.group(1)) if m.group(1) else None, m.group(2)) if m else (None, problem)
            issues.append(ReadIssue(path=name, line=line, where="", severity="warning", message=message))
        return issues

    def action_show_issues(self) -> None:
        """List what the readers skipped or doubted in both files."""
        if self.diff is None or self.still_reading("The load warnings are listed"):
            return
        issues = [*(("original", i) for i in self.diff.original.issues), *(("replay", i) for i in self.diff.replay.issues)]
        issues.extend(("config", issue) for issue in self.config_issues())
        if not issues:
            self.notify("Both files loaded without warnings.", title="load warnings", markup=False)
            return
        from tracetui.tui.screens.issues_screen import IssuesScreen

        self.push_screen(IssuesScreen(issues))


def _short(value: object, limit: int = 40) -> str:
    """A header value as compact JSON, cut to ``limit`` characters."""
    try:
        text = orjson.dumps(value, default=str).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
