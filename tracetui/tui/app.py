"""TraceTuiApp: the original and replay traces side by side, opened on the first divergence.

Reading and diffing run in a thread worker; the first frame (a loading state)
is drawn before the data exists, and the result arrives as a ``PairLoaded``
message. A trace that cannot be read shows an error panel naming file, line
and field, never a traceback.
"""

from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING, Callable, ClassVar, TypeVar

import orjson
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.widget import Widget

from tracetui.core.errors import ReadError, TracetuiError
from tracetui.core.model import ReadIssue
from tracetui.tui.commands import TraceCommands
from tracetui.tui.config import load_config
from tracetui.tui.formatting import visible
from tracetui.tui.messages import EarlyLoaded, LoadFailed, PairLoaded
from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
from tracetui.tui.widgets.footer import TraceFooter
from tracetui.tui.widgets.load_error import LoadErrorPanel
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.status_bar import StatusBar
from tracetui.tui.watching import WatchMixin

# Imported on first use, not here, so the first frame comes sooner (benchmarks/bench_tui.py): the readers and
# the labels module (in the load worker and once loaded), and every screen pushed later (help, pair, triage,
# label, promote, warnings).
if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.labels import Label
    from tracetui.core.model import Trace
    from tracetui.tui.screens.label_dialog import LabelOutcome

WidgetType = TypeVar("WidgetType", bound=Widget)


class TraceTuiApp(WatchMixin, App[int]):
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
        Binding("F", "toggle_follow", "Follow", show=False, id="toggle-follow",
                tooltip="Watch mode: follow the replay as it is written (the cursor goes to each new span), "
                "or stop following and keep the cursor where it is"),
    ]

    def __init__(
        self,
        original_path: str | os.PathLike[str],
        replay_path: str | os.PathLike[str],
        *,
        original_format: str | None = None,
        replay_format: str | None = None,
        trace_id: str | None = None,
        replay_trace_id: str | None = None,
        config_path: str | os.PathLike[str] | None = None,
        watch: bool = False,
    ) -> None:
        super().__init__()
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
        """Reviewer labels of the loaded replay, by ``divergence_key`` (``tracetui.core.labels``)."""
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
        self.sub_title = f"{os.path.basename(self.original_path)} ⟷ {os.path.basename(self.replay_path)}"

    def compose(self) -> ComposeResult:
        yield AlignedHeader(id="columns")
        yield AlignedView(id="aligned")
        yield SpanDetail(id="detail")
        yield LoadErrorPanel(id="load-error")
        yield StatusBar(id="status")
        yield TraceFooter()

    def on_mount(self) -> None:
        view = self._main(AlignedView)
        view.placeholder = "loading…"
        view.focus()
        self._main(StatusBar).show_loading(self.original_path, self.replay_path)
        self._main(AlignedHeader).set_titles(
            _column_title("original", self.original_path, None), _column_title("replay", self.replay_path, None), 0
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
            self.notify("\n".join(shown), title=f"config file: {count}", severity="warning", markup=False,
                        timeout=12)

    def _main(self, kind: type[WidgetType]) -> WidgetType:
        """A widget of the main screen, even while another screen (help, pair) is on top."""
        return self.screen_stack[0].query_one(kind)

    # -- loading ------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_pair(self) -> None:
        """Read both traces and diff them off the event loop; post ``PairLoaded`` or ``LoadFailed``."""
        side, path = "original", self.original_path
        try:
            from tracetui.core.readers import read_pair

            try:  # read_trace + read_replay, the two files at once (big tracetui/1 files: payloads read on demand)
                original, replay = read_pair(path, self.replay_path, original_format=self.original_format,
                                             replay_format=self.replay_format, trace_id=self.trace_id,
                                             replay_trace_id=self.replay_trace_id,
                                             early=self._post_early if self.diff is None else None)
            except Exception as exc:
                if getattr(exc, "side", None) == "replay":  # read_pair names the file that failed
                    side, path = "replay", self.replay_path
                raise
            side, path = "diff", ""
            from tracetui.core.diff import diff_traces

            diff = diff_traces(original, replay)
        except ReadError as exc:
            self.post_message(LoadFailed(side, exc.path, exc.reason, exc.line, exc.where))
        except (TracetuiError, ValueError, OSError) as exc:
            self.post_message(LoadFailed(side, path, str(exc)))
        except Exception as exc:  # noqa: BLE001 - never let a bug become a traceback on screen
            self.post_message(LoadFailed(side, path, f"internal error: {type(exc).__name__}: {exc}"))
        else:
            self.post_message(PairLoaded(diff))

    def _post_early(self, diff: TraceDiff) -> None:
        """``read_pair``'s early hook (load worker thread): show the first divergence found early."""
        self.post_message(EarlyLoaded(diff))

    @on(EarlyLoaded)
    def _early_loaded(self, message: EarlyLoaded) -> None:
        """Show the first rows and the first divergence while the rest of the pair is read (big pairs:
        ``core.early``); keys that need the whole pair say so until ``PairLoaded``."""
        if self.diff is not None or self.load_error is not None:
            return  # a pair is shown already (a reload), or the read failed meanwhile
        diff = message.diff
        self.diff = diff
        with self.batch_update():
            self._main(AlignedHeader).set_titles(
                _column_title("original", diff.original.path, None, reading=True),
                _column_title("replay", diff.replay.path, None, reading=True),
                len(diff.rows),
            )
            self._main(StatusBar).show_diff(diff)
            self._main(AlignedView).set_diff(diff)
        self.refresh_bindings()

    def still_reading(self, what: str) -> bool:
        """True (and a notice saying so) while only the first rows of the pair are shown: ``what``
        needs the whole pair."""
        if self.diff is None or not self.diff.partial:
            return False
        self.notify(f"{what} once the whole pair is read (a few seconds; the status line says when)",
                    title="still reading the pair", markup=False, timeout=4)
        return True

    @on(PairLoaded)
    def _pair_loaded(self, message: PairLoaded) -> None:
        diff = message.diff
        early = self.diff if self.diff is not None and self.diff.partial else None
        self.diff = diff
        self._freeze_pair()
        view = self._main(AlignedView)
        with self.batch_update():
            self._main(AlignedHeader).set_titles(
                _column_title("original", diff.original.path, diff.original),
                _column_title("replay", diff.replay.path, diff.replay),
                len(diff.rows),
            )
            self._main(StatusBar).show_diff(diff)
            if not diff.rows:
                self._main(SpanDetail).show_message(Text("both traces are empty", style="dim"))
            kept = early is not None and _agrees(early, diff)
            if kept:
                view.update_diff(diff)  # the early rows stay where they are; the rest is added below
            else:
                view.set_diff(diff)
                if early is not None:
                    self.notify("The whole pair does not begin as its first rows read early did (a line read "
                                "later changed the tree): the rows were laid out again, the cursor is on the "
                                "first divergence.", title="first divergence", markup=False, timeout=10)
            for screen in self.screen_stack[1:]:  # a pair screen opened on the early rows
                if early is not None and getattr(screen, "diff", None) is early:
                    screen.replace_diff(diff if kept else None)  # type: ignore[attr-defined]
            self._load_labels()
        self.reloading = False
        if self._jump_after_load is not None:
            side, span_id = self._jump_after_load
            self._jump_after_load = None
            row = self.row_of_span(span_id, side)
            if row is not None:
                self.jump_to_row(row)
        self.refresh_bindings()  # d and w apply now
        from tracetui.core.readers import split_run_ref

        self.say_run_inputs(diff)
        for side, trace, ref, asked in (("original", diff.original, self.original_path, self.trace_id),
                                        ("replay", diff.replay, self.replay_path, self.replay_trace_id)):
            if len(trace.trace_ids) > 1 and asked is None and split_run_ref(ref)[1] is None:  # not picked: say so
                self.notify(
                    f"{os.path.basename(trace.path)} holds {len(trace.trace_ids)} runs; showing {trace.trace_id} "
                    f"(pick another with {side.upper()}#RUN; `tracetui show` lists them)",
                    title=f"{side}: several runs",
                    markup=False,
                    timeout=8,
                )

    _run_inputs_said = False

    def say_run_inputs(self, diff: TraceDiff) -> None:
        """Notify what changed in the run's inputs before any span ran (prompt version, model, tool schemas:
        the headers), once per pair; nothing while the replay has no header yet (watch mode, waiting)."""
        from tracetui.core.report import run_changes

        if self._run_inputs_said or not diff.replay.header:
            return
        self._run_inputs_said = True
        changes = [c for c in run_changes(diff.original.header, diff.replay.header) if c["path"] != "input"]
        if changes:
            lines = [visible(f"{c['path']}: {_short(c['original'])} → {_short(c['replay'])}") for c in changes[:6]]
            if len(changes) > 6:
                lines.append(f"… {len(changes) - 6} more")
            self.notify("\n".join(lines), title="run inputs changed", markup=False, timeout=8)

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        self.load_error = message
        self.diff = None  # a replay loaded from the triage panel failed: the old pair is no longer shown
        self.reloading = False
        self._jump_after_load = None
        with self.batch_update():
            self._main(AlignedView).placeholder = ""
            self.screen_stack[0].add_class("-load-error")
            self._main(LoadErrorPanel).show_error(message)
            where = f"{message.side}: {os.path.basename(message.path)}" if message.path else message.side
            self._main(StatusBar).show_error(where)
        # The hidden view must not keep (or, via a deferred focus(), regain) focus:
        # its keys (n, p, enter) mean nothing now, and the footer must not offer them.
        self._main(AlignedView).disabled = True
        self.set_focus(None)
        self.refresh_bindings()

    def load_replay(self, replay_path: str, *, jump_to: tuple[str, str] | None = None) -> None:
        """Show ``replay_path`` (``FILE`` or ``FILE#RUN``) against the same original: read and diff again in the
        load worker; the view opens on the new pair's first divergence, or on ``jump_to``.

        Args:
            replay_path: The replay to show.
            jump_to: ``(side, span_id)`` to put the cursor on once loaded (``row_of_span``).
        """
        self._thaw_pair()  # the pair shown until now may be collected once replaced
        self.stop_watch()  # another replay: the one followed is no longer shown
        self.replay_path = os.fspath(replay_path)
        self.replay_format = None
        self.replay_trace_id = None
        self.reloading = True
        self._run_inputs_said = False
        self._jump_after_load = jump_to
        self.sub_title = f"{os.path.basename(self.original_path)} ⟷ {os.path.basename(self.replay_path)}"
        self.load_pair()

    # -- garbage collection ------------------------------------------------

    _frozen = False

    def _freeze_pair(self) -> None:
        """Move everything alive now — the loaded pair above all, millions of acyclic objects — out of
        the cyclic collector's reach (``gc.freeze``): a full collection would otherwise walk them all
        while the user navigates (1.3 s at 100k spans, 11 s at 1M: benchmarks/bench_tui.py). Reference
        counting still frees them; ``_thaw_pair`` hands them back before a reload and at exit."""
        if not self._frozen:
            gc.freeze()
            self._frozen = True

    def _thaw_pair(self) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

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
        from tracetui.core.labels import replay_ref

        return replay_ref(self.diff.replay) or self.replay_path

    def _load_labels(self) -> None:
        """Read the replay's labels sidecar; a damaged one is a warning (labels not shown), never a crash."""
        from tracetui.core.labels import load_labels, sidecar_path

        self.labels, self.labels_error = {}, None
        try:
            self.labels = load_labels(self.label_ref)
        except (TracetuiError, OSError, ValueError) as exc:
            self.labels_error = str(exc)
            self.notify(
                f"{visible(str(exc))}\nLabels are not shown, and new ones cannot be saved until "
                f"{os.path.basename(sidecar_path(self.label_ref))} is fixed or removed.",
                title="reviewer labels not loaded", severity="warning", markup=False, timeout=12,
            )
        self._show_labels()

    def _show_labels(self) -> None:
        """Mark labelled rows in the view and the detail pane."""
        if self.diff is None:
            return
        from tracetui.core.labels import labels_for

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
        from tracetui.core.labels import divergence_key

        return self.labels.get(divergence_key(divergence))

    def _label_done(self, outcome: LabelOutcome | None) -> None:
        """Save or remove what the label dialog returned, then redraw the marks."""
        if outcome is None:
            return
        from tracetui.core.labels import remove_label, save_label, sidecar_path

        ref = self.label_ref
        try:
            if outcome.label is not None:
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
        self._jump_after_load = None
        view = self._main(AlignedView)
        if self.load_error is not None:
            self.load_error = None
            self.screen_stack[0].remove_class("-load-error")
            view.disabled = False
            view.placeholder = "loading…"
            view.focus()
        self._main(StatusBar).show_loading(self.original_path, self.replay_path)
        if self.watch_mode:
            self.start_watch()  # the watch worker reads both again and follows the replay
        else:
            self.reloading = True
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


def _agrees(early: TraceDiff, whole: TraceDiff) -> bool:
    from tracetui.core.early import agrees

    return agrees(early, whole)


def _short(value: object, limit: int = 40) -> str:
    """A header value as compact JSON, cut to ``limit`` characters."""
    try:
        text = orjson.dumps(value, default=str).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _column_title(side: str, path: str, trace: Trace | None, *, not_counted: int = 0, reading: bool = False) -> Text:
    """``side  FILE[#RUN]  N spans`` over a column; ``not_counted`` spans are left out of N (watch mode's
    placeholders for parents not written yet); ``reading``: ``reading…`` in place of N."""
    title = Text(no_wrap=True, overflow="ellipsis")
    title.append(side, "bold")
    title.append(f"  {visible(os.path.basename(path))}")
    if trace is not None and len(trace.trace_ids) > 1 and trace.trace_id is not None:
        title.append(f"#{visible(trace.trace_id)}")
    if trace is not None:
        count = len(trace.spans) - not_counted
        title.append(f"  {count:,} span{'' if count == 1 else 's'}", "dim")
    elif reading:
        title.append("  reading…", "dim")
    return title
