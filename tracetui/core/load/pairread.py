"""Reading and diffing a pair in a background thread, its first step taken at once.

``tracetui ORIGINAL REPLAY`` makes a ``PairRead`` before it imports the TUI (Textual and Rich take
~0.5 s to import, ``benchmarks/bench_tui.py``): that opens both files and forks the child process
that scans and parses the replay (``load.start_pair``), which works on the other core while
this process imports; the reading thread starts when the app mounts (``start``, or the first
``next_event``), so the import and the first frame do not share the interpreter with it (a
thread started before the import made the first frame 0.5 s later). The TUI's load worker uses
this class for every read (``tui/loading.py``), so both paths report the same events and errors.

Events, in order, from ``next_event``: ``("early", EarlyTraceDiff)`` (at most once; big pairs) and
``("progress", fraction)`` (the share of the original read, 0..1, 0 during the early look; only the
latest not yet taken is kept; an early event waiting is handed out first), then
``("done", TraceDiff)``, ``("failed", stage, exception)`` with stage ``"read"`` (the exception's
``side`` attribute says which file, as ``read_pair`` sets it) or ``"diff"``, or ``("cancelled",)``
after ``cancel``.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["PairRead"]

_SIDE_OPTIONS = ("original_format", "replay_format", "trace_id", "replay_trace_id")  # what keys a kept side


class _Cancelled(Exception):
    """Raised in the read thread's progress hook once ``cancel`` was called: the read stops there."""


class PairRead:
    """``load.read_pair`` then ``diff.diff_traces`` of a pair: the first step (``load.start_pair``:
    files opened, the replay's child forked) in the constructor, the rest in a daemon thread started
    by ``start`` or the first ``next_event``.

    Args:
        original, replay: ``FILE`` or ``FILE#RUN`` (as ``read_pair``).
        early: Ask for the early first divergence (``read_pair(early=)``).
        **options: ``read_pair``'s other keyword arguments (formats, run ids).

    ``matches`` tells whether it reads the pair a caller is about to read (the app adopts it only
    then). Nothing here raises: a failure becomes the ``failed`` event.
    """

    def __init__(self, original: str | os.PathLike[str], replay: str | os.PathLike[str], *, early: bool = True,
                 **options: Any) -> None:
        from tracetui.core.load.pair import start_pair

        self.original, self.replay = os.fspath(original), os.fspath(replay)
        self.options = dict(options)
        self._cond = threading.Condition()
        self._early: Any = None  # the early diff until next_event hands it out
        self._progress: float | None = None
        self._end: tuple[Any, ...] | None = None
        self._cancelled = False
        self._started = start_pair(self.original, self.replay, early=early, **options)  # forks here
        self._thread = threading.Thread(target=self._run, args=(early,), name="tracetui-pair-read", daemon=True)
        self._lock = threading.Lock()
        self._running = False
        self._rules: list[Any] = []
        self._noise_error: str | None = None

    def start(self) -> None:
        """Start the reading thread (once; ``next_event`` starts it too)."""
        with self._lock:
            if not self._running:
                self._running = True
                self._thread.start()

    def matches(self, original: str | os.PathLike[str], replay: str | os.PathLike[str], **options: Any) -> bool:
        """Whether this reads ``original`` and ``replay`` with the same options (None options ignored)."""
        mine = {k: v for k, v in self.options.items() if v is not None}
        theirs = {k: v for k, v in options.items() if v is not None}
        return (self.original, self.replay, mine) == (os.fspath(original), os.fspath(replay), theirs)

    def _run(self, early: bool) -> None:
        from tracetui.core.load.pair import read_pair

        stage = "read"
        from tracetui.core.diff.noise import NoiseConfigError, load_rules

        try:
            self._rules, self._noise_error = load_rules(), None
        except NoiseConfigError as exc:  # the view shows the pair as compared, and says why
            self._rules, self._noise_error = [], str(exc)
        try:
            original, replay = read_pair(self.original, self.replay, early=self._on_early if early else None,
                                         progress=self._on_progress, started=self._started, keep=False,
                                         **self.options)
            stage = "diff"
            from tracetui.core.diff import diff_traces

            diff = diff_traces(original, replay)
            self._noisy(diff)
            end: tuple[Any, ...] = ("done", diff)
        except _Cancelled:
            end = ("cancelled",)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which reports it
            end = ("failed", stage, exc)
        with self._cond:
            self._end = end
            self._cond.notify_all()
        if end[0] == "done" and not self._cancelled:  # kept for the next opening once the pair is handed over
            from tracetui.core.load.pair import keep_pair

            keep_pair(self.original, self.replay, (original, replay),
                      **{k: v for k, v in self.options.items() if k in _SIDE_OPTIONS})

    def _noisy(self, diff: Any) -> None:
        """The user's noise rules applied to ``diff`` (or why they could not be: ``noise_error``)."""
        from tracetui.core.diff.noise import apply_rules

        apply_rules(diff, self._rules)
        diff.noise_error = self._noise_error

    def _on_early(self, diff: Any) -> None:
        # The early look obeys the noise rules too: a first divergence they hide is no first
        # divergence, and the whole pair (where the next one is) is waited for instead.
        self._noisy(diff)
        if diff.first is None:
            return
        with self._cond:
            self._early = diff
            self._cond.notify_all()

    def _on_progress(self, fraction: float) -> None:
        if self._cancelled:
            raise _Cancelled
        with self._cond:
            self._progress = fraction
            self._cond.notify_all()

    def next_event(self, timeout: float | None = None) -> tuple[Any, ...] | None:
        """The next event (module docstring), waiting up to ``timeout`` seconds (None: until one comes);
        None when none came in time. After the last event (``done``, ``failed``, ``cancelled``) it is
        returned again on every call."""
        self.start()
        with self._cond:
            if not self._cond.wait_for(lambda: self._early is not None or self._progress is not None
                                       or self._end is not None, timeout):
                return None
            if self._early is not None:
                got: tuple[Any, ...] = ("early", self._early)
                self._early = None
                return got
            if self._progress is not None:
                got = ("progress", self._progress)
                self._progress = None
                return got
            assert self._end is not None
            return self._end

    def cancel(self) -> None:
        """Stop the read: the child process at once, this process's reading at its next progress report
        (or before it starts); ``next_event`` then ends with ``("cancelled",)``."""
        self._cancelled = True
        with self._lock:
            running, self._running = self._running, True
        self._started.cancel()  # the child stops now (a read waiting on it then ends at once)
        if not running:  # never started: end here
            with self._cond:
                self._end = ("cancelled",)
                self._cond.notify_all()

    @property
    def finished(self) -> bool:
        """True once the read has ended (or was cancelled before it started)."""
        return self._end is not None and not self._thread.is_alive()
