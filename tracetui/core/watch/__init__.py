"""Watch mode: a replay diffed against its original while the replay is being written (docs/watch.md).

What belongs here: ``tail`` (reading a growing file: ``TailReader``), ``common`` (the
``LiveTraceDiff`` result and the placeholders of parents not written yet), ``live``
(``LiveDiff``: rows that never move) and ``incremental`` (its update at the cost of what
changed). ``live`` uses ``incremental``, never the reverse.

May import: the vocabulary, the readers and the diff. Never the TUI (``tui/watching.py`` drives
this from a worker) or the CLI.
"""

from __future__ import annotations

from tracetui.core.model import PLACEHOLDER
from tracetui.core.watch.common import ROOT_PLACEHOLDER, LiveTraceDiff, placeholder_plan
from tracetui.core.watch.live import LiveDiff, read_original
from tracetui.core.watch.tail import ReplaySnapshot, TailReader

__all__ = ["PLACEHOLDER", "ROOT_PLACEHOLDER", "LiveDiff", "LiveTraceDiff", "ReplaySnapshot", "TailReader",
           "placeholder_plan", "read_original"]
