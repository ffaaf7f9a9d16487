"""Big files, fast: a pair of runs read at once (``pair.read_pair``), tracetui/1 files indexed with
their payloads left in the file (``native_index``), and the early first divergence found before
either file is read whole (``structure``, ``early_spans``, ``early``; for OTLP/JSON pairs
``otlp_early``); ``pairread`` runs the read in a thread the TUI can cancel.

What belongs here: anything that reads a pair, or a big file, faster than the readers alone.
The early look uses the diff (``core.diff``), not the other way round.

May import: the vocabulary, the readers and the diff. Never watch mode, triage, the harness,
golden cases, the TUI or the CLI.
"""

from __future__ import annotations

from tracetui.core.load.pair import PairStart, keep_pair, read_pair, start_pair

__all__ = ["PairStart", "keep_pair", "read_pair", "start_pair"]
