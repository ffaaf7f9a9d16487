"""Loading a pair in the TUI: the load worker, the early first divergence, the loaded and failed states.

``LoadingMixin`` is part of ``TraceTuiApp`` (which provides ``_main``, the paths and formats, ``diff``,
``load_error``, ``say_run_inputs``, the labels and jumps). The worker reads both files with
``load.read_pair`` and posts, in order: ``EarlyLoaded`` (big pairs: the first rows and the first
divergence, ``core.early``), then ``PairLoaded`` or ``LoadFailed``.
"""

from __future__ import annotations

import gc
import os
import time
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work

from tracetui.core.errors import ReadError, TracetuiError
from tracetui.tui.formatting import visible
from tracetui.tui.messages import EarlyLoaded, LoadFailed, LoadProgress, PairLoaded
from tracetui.tui.widgets.aligned_layout import ColumnTitle
from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
from tracetui.tui.widgets.load_error import LoadErrorPanel
from tracetui.tui.widgets.span_detail import SpanDetail
from tracetui.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.load.pairread import PairRead
    from tracetui.core.model import Trace


class LoadingMixin:
    """Reading the pair off the event loop, and showing what arrives (for ``TraceTuiApp``)."""

    diff: TraceDiff | None
    _main: Any
    _jump_after_load: tuple[str, str] | None
    reloading: bool

    _load_generation = 0

    def load_pair(self) -> None:
        """Read both traces and diff them off the event loop (the load worker); it posts ``EarlyLoaded``
        (big pairs), ``LoadProgress``, then ``PairLoaded`` or ``LoadFailed``. A read started before is
        superseded: what it posts later is dropped. ``reloading`` is True until the result is shown."""
        self._load_generation += 1
        self.reloading = True
        self._load_worker(self._load_generation, early=self.diff is None)

    prefetched: PairRead | None = None
    """A read started before the app (``tracetui ORIGINAL REPLAY`` starts it before importing the TUI):
    the first load takes it when it reads the same pair (``PairRead.matches``)."""

    def _pair_read(self, early: bool) -> PairRead:
        """The read for a load: the prefetched one when it matches (taken once), else a new one."""
        from tracetui.core.load.pairread import PairRead

        options = dict(original_format=self.original_format, replay_format=self.replay_format,
                       trace_id=self.trace_id, replay_trace_id=self.replay_trace_id)
        read, self.prefetched = self.prefetched, None
        if read is not None and early and read.matches(self.original_path, self.replay_path, **options):
            return read
        if read is not None:
            read.cancel()
        return PairRead(self.original_path, self.replay_path, early=early, **options)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_worker(self, generation: int, early: bool) -> None:
        """Relay a ``PairRead``'s events as messages; a cancelled worker (the app quits, a newer read)
        stops the read at its next progress report."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        read = self._pair_read(early)
        last = 0.0
        while True:
            if worker.is_cancelled:
                read.cancel()
                return
            event = read.next_event(timeout=0.1)
            if event is None:
                continue
            kind = event[0]
            if kind == "early":
                self.post_message(EarlyLoaded(event[1], generation))
            elif kind == "progress":
                now = time.monotonic()  # said at most 5 times a second
                if now - last >= 0.2:
                    last = now
                    self.post_message(LoadProgress(event[1], generation))
            elif kind == "done":
                self.post_message(PairLoaded(event[1], generation))
                return
            elif kind == "failed":
                self.post_message(self._load_failed(event[1], event[2], generation))
                return
            else:  # cancelled
                return

    def _load_failed(self, stage: str, exc: BaseException, generation: int) -> LoadFailed:
        """The message for a failed read (``stage`` "read": ``exc.side`` names the file, as ``read_pair``
        sets it) or diff."""
        if stage == "diff":
            side, path = "diff", ""
        elif getattr(exc, "side", None) == "replay":
            side, path = "replay", self.replay_path
        else:
            side, path = "original", self.original_path
        if isinstance(exc, ReadError):
            return LoadFailed(side, exc.path, exc.reason, exc.line, exc.where, generation)
        if isinstance(exc, (TracetuiError, ValueError, OSError)):
            return LoadFailed(side, path, str(exc), generation=generation)
        # never let a bug become a traceback on screen
        return LoadFailed(side, path, f"internal error: {type(exc).__name__}: {exc}", generation=generation)

    def _stale(self, message: Any) -> bool:
        """A load message to drop: from a read superseded by another, or come while the app shuts down
        (its widgets are being removed: a read released just before the app exits posts on)."""
        return message.generation != self._load_generation or not self.is_running  # type: ignore[attr-defined]

    def on_load_progress(self, message: LoadProgress) -> None:
        if not self._stale(message) and self.reloading:
            self._main(StatusBar).set_progress(message.fraction)

    def on_early_loaded(self, message: EarlyLoaded) -> None:
        """Show the first rows and the first divergence while the rest of the pair is read (big pairs:
        ``core.early``); keys that need the whole pair say so until ``PairLoaded``."""
        if self._stale(message):
            return  # a read superseded by another, or the app shutting down
        if self.diff is not None or self.load_error is not None:
            return  # a pair is shown already (a reload), or the read failed meanwhile
        diff = message.diff
        self.diff = diff
        with self.batch_update():
            self._main(AlignedHeader).set_titles(
                column_title("original", diff.original.path, None, reading=True),
                column_title("replay", diff.replay.path, None, reading=True),
                diff.rows_expected,
            )
            self._main(StatusBar).show_diff(diff)
            self._main(AlignedView).set_diff(diff)
        self.refresh_bindings()

    def still_reading(self, what: str) -> bool:
        """True (and a notice saying so) while only the first rows of the pair are shown: ``what``
        needs the whole pair."""
        if self.diff is None or not self.diff.partial:
            return False
        self.notify(f"{what} once the whole pair is read (the status line shows how far the read is)",
                    title="still reading the pair", markup=False, timeout=4)
        return True

    def on_pair_loaded(self, message: PairLoaded) -> None:
        if self._stale(message):
            return  # a read superseded by another (R pressed meanwhile...), or the app shutting down
        diff = message.diff
        early = self.diff if self.diff is not None and self.diff.partial else None
        self.diff = diff
        self._freeze_pair()
        view = self._main(AlignedView)
        with self.batch_update():
            self._main(AlignedHeader).set_titles(
                column_title("original", diff.original.path, diff.original),
                column_title("replay", diff.replay.path, diff.replay),
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
        sides = (("original", diff.original, self.original_path, self.trace_id),
                 ("replay", diff.replay, self.replay_path, self.replay_trace_id))
        for side, trace, ref, asked in sides[:1] if self.single else sides:  # type: ignore[attr-defined]
            if len(trace.trace_ids) > 1 and asked is None and split_run_ref(ref)[1] is None:  # not picked: say so
                self.say_notice(  # type: ignore[attr-defined]
                    f"{side}: several runs",
                    f"{os.path.basename(trace.path)} holds {len(trace.trace_ids)} runs; showing {trace.trace_id} "
                    f"({side.upper()}#RUN picks another; `tracetui {os.path.basename(trace.path)}` lists them)",
                )

    def on_load_failed(self, message: LoadFailed) -> None:
        if self._stale(message):
            return
        for screen in self.screen_stack[1:]:  # a pair screen opened on the early rows: nothing to show now
            if self.diff is not None and getattr(screen, "diff", None) is self.diff:
                screen.replace_diff(None)  # type: ignore[attr-defined]
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

    def clear_load_error(self) -> bool:
        """Take the load error panel away (the undoing of ``on_load_failed``) before the pair is
        read again: the aligned view enabled again. Returns whether there was one."""
        if self.load_error is None:
            return False
        self.load_error = None
        self.screen_stack[0].remove_class("-load-error")
        self._main(AlignedView).disabled = False
        return True

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
        self._run_inputs_said = False
        self.forget_pair_notices()  # type: ignore[attr-defined]
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


def _agrees(early: TraceDiff, whole: TraceDiff) -> bool:
    from tracetui.core.load.early import agrees

    return agrees(early, whole)


def column_title(side: str, path: str, trace: Trace | None, *, not_counted: int = 0, reading: bool = False) -> ColumnTitle:
    """``side  FILE[#RUN]  N spans`` over a column; ``not_counted`` spans are left out of N (watch mode's
    placeholders for parents not written yet); ``reading``: ``reading…`` in place of N. The header fits it to
    the column (``ColumnTitle.fit``: the run id stays legible at 80 columns)."""
    run = ""
    if trace is not None and len(trace.trace_ids) > 1 and trace.trace_id is not None:
        run = visible(trace.trace_id)
    count = ""
    if trace is not None:
        n = len(trace.spans) - not_counted
        count = f"{n:,} span{'' if n == 1 else 's'}"
    elif reading:
        count = "reading…"
    return ColumnTitle(side, visible(os.path.basename(path)), run, count)
