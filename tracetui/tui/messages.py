"""App-wide events of the TUI (posted by the load worker, handled by the app)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff


@dataclass
class PairLoaded(Message):
    """Both traces were read and diffed; the aligned rows are ready to show."""

    diff: TraceDiff
    """The diff of the pair (rows, per-row divergences, both traces)."""
    generation: int = 0
    """Which read posted it (``LoadingMixin.load_pair``): a superseded read's result is dropped."""


@dataclass
class EarlyLoaded(Message):
    """The first rows of the pair and its first divergence, found before the files are read whole
    (``core.early``); a ``PairLoaded`` (or ``LoadFailed``) follows."""

    diff: TraceDiff
    """A ``core.early.EarlyTraceDiff`` (``diff.partial`` is True)."""
    generation: int = 0
    """Which read posted it."""


@dataclass
class LoadProgress(Message):
    """How much of the original the load worker has parsed (big tracetui/1 files)."""

    fraction: float
    """0..1 of the original's bytes."""
    generation: int = 0
    """Which read posted it."""


@dataclass
class LoadFailed(Message):
    """A trace could not be read (or diffed); carries what the error panel names.

    Never carries a traceback: only the located facts of the error.
    """

    side: str
    """``original``, ``replay`` or ``diff`` (the comparison itself failed)."""
    path: str
    """The file concerned (empty for a ``diff`` failure)."""
    reason: str
    """What is wrong, with the fix when known."""
    line: int | None = None
    """1-based line in the file, when one line is to blame."""
    where: str = ""
    """JSON path or field name, when known."""
    generation: int = 0
    """Which read posted it."""
