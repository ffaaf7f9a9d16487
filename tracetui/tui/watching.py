"""Watch mode (``tracetui ORIGINAL REPLAY --watch``): follow a replay file while it is written.

``WatchMixin`` gives ``TraceTuiApp`` a thread worker (exclusive, group ``watch``) that reads the
original once, then polls a ``core.watch.TailReader`` whenever ``watchfiles`` reports a change in the
replay's folder (the folder, not the file: the writer's compaction replaces the file by a rename),
feeds ``core.watch.LiveDiff``, and posts ``WatchUpdated`` messages that the app applies on the event
loop with ``AlignedView.update_diff`` (rows keep their index; the cursor stays unless following).
A ``threading.Event`` stops ``watchfiles.watch`` on exit and before another replay is loaded.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.worker import get_current_worker

from tracetui.core.errors import ReadError, TracetuiError
from tracetui.tui.messages import LoadFailed, PairLoaded

if TYPE_CHECKING:
    from tracetui.core.watch import LiveTraceDiff

POLL_SECONDS = 0.5
"""A poll at least this often even without a file-system event (network folders, missed events)."""


@dataclass
class WatchUpdated(Message):
    """The replay grew (or was replaced): the new diff, and facts for the status line."""

    diff: LiveTraceDiff
    state: str
    """``following`` or ``complete`` (the writer compacted the file: the run ended)."""
    arrived: int
    """Spans read since the watch began."""
    newest_row: int | None
    """Row of the span written last (where following puts the cursor)."""
    torn: bool
    """A last line is still being written (held back)."""


@dataclass
class WatchWaiting(Message):
    """The replay file does not exist yet, or is empty."""

    path: str


@dataclass
class WatchStopped(Message):
    """The watch worker ended."""

    reason: str


class WatchMixin:
    """Watch-mode state and behaviour for ``TraceTuiApp`` (which provides ``_main``, ``diff``, paths)."""

    watching: bool = False
    """True while the watch worker runs (the replay may still grow)."""
    following: bool = False
    """True when the cursor follows each new span (``F``)."""
    watch_state: str = ""
    """``waiting``, ``following``, ``complete`` or ``stopped`` (empty: not in watch mode)."""
    watch_arrived: int = 0
    """Spans read from the replay since the watch began."""
    _watch_stop: threading.Event | None = None
    _watch_noise_note: str = ""
    _newest_row: int | None = None

    # -- the worker --------------------------------------------------------------------------

    def start_watch(self) -> None:
        """Start (or restart) following the replay: the first load included."""
        self.stop_watch()
        self._watch_stop = threading.Event()
        self.watching = True
        self.watch_state = "waiting"
        self._watch_noise_note = _noise_note()
        self._watch_worker(self._watch_stop)

    def stop_watch(self) -> None:
        """Stop the watch worker (it ends within a few tens of ms); the pair shown stays."""
        if self._watch_stop is not None:
            self._watch_stop.set()
            self._watch_stop = None
        self.watching = False

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def _watch_worker(self, stop: threading.Event) -> None:
        from tracetui.core.watch import LiveDiff, TailReader, read_original

        app: Any = self
        worker = get_current_worker()
        try:
            original = read_original(app.original_path, format=app.original_format, trace_id=app.trace_id)
        except ReadError as exc:
            app.post_message(LoadFailed("original", exc.path, exc.reason, exc.line, exc.where))
            return
        except (TracetuiError, ValueError, OSError) as exc:
            app.post_message(LoadFailed("original", app.original_path, str(exc)))
            return
        path = app.replay_path
        reader = TailReader(path, format=app.replay_format, trace_id=app.replay_trace_id or app.trace_id)
        live = LiveDiff(original)
        shown = False
        baseline: int | None = None
        waiting_said = False

        def step() -> bool:
            """Poll once; True when the run is complete (stop watching)."""
            nonlocal shown, baseline, waiting_said
            try:
                snap = reader.poll()
            except OSError as exc:
                app.post_message(WatchStopped(f"cannot read {os.path.basename(path)}: {exc.strerror or exc}"))
                return True
            waiting = snap.state == "waiting" and not snap.spans and not snap.header
            if waiting and (not waiting_said or snap.changed):
                app.post_message(WatchWaiting(path))
                waiting_said = True
            if shown and not snap.changed:
                return False
            complete = snap.state == "complete"
            try:
                diff = live.update(snap, path=path, final=complete)
            except Exception as exc:  # noqa: BLE001 - a bug must not become a traceback on screen
                app.post_message(WatchStopped(f"internal error: {type(exc).__name__}: {exc}"))
                return True
            newest = _newest_row(diff, snap.spans[-1].span_id) if snap.spans else None
            # Spans as the replay column counts them: a line skipped (a duplicate id...) and the
            # placeholders of parents not written yet are not spans that arrived.
            count = len(diff.replay.spans) - len(diff.placeholder_rows)
            if baseline is None:  # what the file held when the watch began is not "new"
                baseline = count
            if not shown:
                shown = True
                app.post_message(PairLoaded(diff))
            state = "complete" if complete else "waiting" if waiting else "following"
            app.post_message(WatchUpdated(diff, state,
                                          max(0, count - baseline), newest, snap.torn))
            return complete

        if step():
            app.post_message(WatchStopped("complete"))
            return
        folder = os.path.dirname(os.path.abspath(path)) or "."
        try:
            import watchfiles

            events = watchfiles.watch(folder, stop_event=stop, debounce=50, step=20,
                                      rust_timeout=int(POLL_SECONDS * 1000), yield_on_timeout=True,
                                      recursive=False, watch_filter=None, raise_interrupt=False)
            for _changes in events:
                if stop.is_set() or worker.is_cancelled:
                    break
                if step():
                    app.post_message(WatchStopped("complete"))
                    return
        except (OSError, RuntimeError):  # no such folder yet, or no watcher: poll
            while not stop.wait(POLL_SECONDS) and not worker.is_cancelled:
                if step():
                    app.post_message(WatchStopped("complete"))
                    return
        if not stop.is_set():
            app.post_message(WatchStopped("ended"))

    # -- on the event loop -------------------------------------------------------------------

    def on_watch_waiting(self, message: WatchWaiting) -> None:
        from tracetui.tui.widgets.aligned_view import AlignedView
        from tracetui.tui.widgets.status_bar import StatusBar

        app: Any = self
        if not app.is_running:
            return  # the app shuts down: its widgets are being removed
        self.watch_state = "waiting"
        if app.diff is None:
            app._main(AlignedView).placeholder = f"waiting for {os.path.basename(message.path)}…"
            app._main(AlignedView).refresh()
        app._main(StatusBar).set_watch("waiting", message.path, self.watch_arrived, following=self.following)

    def on_watch_updated(self, message: WatchUpdated) -> None:
        from tracetui.tui.loading import column_title
        from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
        from tracetui.tui.widgets.status_bar import StatusBar

        app: Any = self
        if not self.watching or not app.is_running:
            return  # stopped (another replay loaded) while this was queued, or the app shuts down
        diff = message.diff
        view = app._main(AlignedView)
        old = app.diff
        keep: tuple[str | None, str | None] | None = None
        if old is not None and diff.relaid and old.rows:
            keep = _identity(old, view.cursor_row)
        had_first = old is not None and old is not diff and old.first is not None
        app.diff = diff
        self.watch_state = message.state
        self.watch_arrived = message.arrived
        self._newest_row = message.newest_row
        with app.batch_update():
            app._main(AlignedHeader).set_titles(
                column_title("original", diff.original.path, diff.original),
                column_title("replay", diff.replay.path, diff.replay, not_counted=len(diff.placeholder_rows)),
                len(diff.rows))
            view.update_diff(diff)
            bar = app._main(StatusBar)
            bar.watch_note = self._watch_noise_note
            bar.show_diff(diff)
            bar.set_watch(message.state, app.replay_path, message.arrived, following=self.following,
                          torn=message.torn)
        if keep is not None:
            row = _row_of(diff, keep)
            if row is not None:
                view.cursor_row = row
            app.notify("The replay was re-read and its rows laid out again; the cursor stayed on its span.",
                       title="watch", markup=False)
        if self.following and message.newest_row is not None:
            view.cursor_row = message.newest_row
        app.say_run_inputs(diff)  # once the replay's header has arrived
        if not had_first and diff.first is not None and old is not None and old is not diff:
            app.notify(f"first divergence at row {diff.first.row}: {diff.first.type.value} (f jumps there)",
                       title="watch", markup=False, timeout=8)

    def on_watch_stopped(self, message: WatchStopped) -> None:
        from tracetui.tui.widgets.status_bar import StatusBar

        app: Any = self
        if not self.watching or not app.is_running:
            return
        self.watching = False
        self.following = False
        self.watch_state = "complete" if message.reason == "complete" else "stopped"
        bar = app._main(StatusBar)
        bar.set_watch(self.watch_state, app.replay_path, self.watch_arrived, following=False,
                      reason="" if message.reason in ("complete", "ended") else message.reason)
        app.refresh_bindings()

    def action_toggle_follow(self) -> None:
        """Follow the replay as it is written (the cursor goes to each new span's row), or stop following."""
        from tracetui.tui.widgets.aligned_view import AlignedView
        from tracetui.tui.widgets.status_bar import StatusBar

        app: Any = self
        if not self.watching:
            app.bell()
            app.notify("Not watching: start with --watch to follow a replay while it is written.",
                       title="follow", markup=False)
            return
        self.following = not self.following
        if self.following and app.diff is not None and app.diff.rows:
            row = self._newest_row if self._newest_row is not None else len(app.diff.rows) - 1
            app._main(AlignedView).cursor_row = row
        app._main(StatusBar).set_watch(self.watch_state, app.replay_path, self.watch_arrived,
                                       following=self.following)


def _noise_note() -> str:
    """What the watch says about the project's noise rules: the watched diff grows span by span
    and does not apply them (the pair opened without ``--watch`` does), nor a malformed config."""
    from tracetui.core.diff.noise import NoiseConfigError, load_rules

    try:
        rules = load_rules()
    except NoiseConfigError as exc:
        return f"noise config not applied: {exc}"
    return "noise rules not applied while watching (open the pair without --watch)" if rules else ""


def _newest_row(diff: LiveTraceDiff, span_id: str) -> int | None:
    spans = diff.replay.spans
    for n in range(len(diff.rows) - 1, -1, -1):
        r = diff.rows[n].replay
        if r is not None and spans[r].span_id == span_id:
            return n
    return None


def _identity(diff: Any, row: int) -> tuple[str | None, str | None]:
    r = diff.rows[row]
    return (diff.original.spans[r.original].span_id if r.original is not None else None,
            diff.replay.spans[r.replay].span_id if r.replay is not None else None)


def _row_of(diff: Any, ident: tuple[str | None, str | None]) -> int | None:
    """The row holding the original span of ``ident``, else its replay span."""
    for side in (0, 1):
        if ident[side] is None:
            continue
        for n in range(len(diff.rows)):
            if _identity(diff, n)[side] == ident[side]:
                return n
    return None
