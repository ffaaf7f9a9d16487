"""Triage: is a run replayable, is its failure the model, the data or a change, and the labels and
batch views over many pairs (docs/triage.md, docs/labels-and-batch.md).

What belongs here: ``replayability`` (step 1, from the trace alone), ``verdict`` (the guided
triage: ``triage()``) and ``batch`` (many pairs at once, grouped by first divergence, with their
labels: ``core.diff.labels``). A new triage rule goes in
``verdict`` (a verdict) or ``replayability`` (a finding on one trace).

May import: the vocabulary, the readers and the diff. Never the TUI, the CLI, the harness or
golden cases.
"""

from __future__ import annotations

from tracetui.core.triage.verdict import VERDICTS, TriageError, TriageResult, Trial, triage, triage_json

__all__ = ["VERDICTS", "TriageError", "TriageResult", "Trial", "triage", "triage_json"]
