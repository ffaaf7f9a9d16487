"""The diff engine: two runs' spans aligned as trees, each pair compared, the first divergence.

What belongs here: alignment (``align``, ``lcs``), the semantic comparison of two spans
(``compare``: which fields count, per kind), the diff of two runs (``trace_diff``: rows,
divergences, their order), its report (``report``), a reviewer's labels on divergences kept in a
sidecar file (``labels``) and the JSON paths and pretty values the pair view shows (``jsonpaths``).

May import: ``tracetui.core``'s vocabulary and the readers. Never the fast paths for big files
(``core.load``), watch mode, triage, the harness or anything above them: they use the diff, not
the other way round.

The diff's public names are here: ``from tracetui.core.diff import diff_traces, TraceDiff``.
"""

from __future__ import annotations

from tracetui.core.diff.trace_diff import (
    ABSENT,
    AlignedRow,
    Divergence,
    DivergenceType,
    FieldChange,
    TraceDiff,
    diff_traces,
    row_divergence,
)

__all__ = ["ABSENT", "AlignedRow", "Divergence", "DivergenceType", "FieldChange", "TraceDiff", "diff_traces",
           "row_divergence"]
