"""Small helpers of the alignment's rule tests (``tests/core/test_align_rules.py``, ``test_align_sibling_rules.py``):
runs built span by span, and the rows ``align`` gives as span ids."""

from __future__ import annotations

from tests.builders import TraceBuilder
from tracetui.core.diff.align import AlignedRow, align
from tracetui.core.model import Span

def run_calls(prefix: str, calls: list[str]) -> list[Span]:
    """An agent root whose children are tool calls named ``calls``, one after the other (no overlap), span ids
    ``<prefix><tool><n>`` (the n-th call of that tool)."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    seen: dict[str, int] = {}
    for tool in calls:
        seen[tool] = seen.get(tool, 0) + 1
        t.add("tool", tool, parent=root, arguments={"q": 1}, span_id=f"{prefix}{tool}{seen[tool]}")
    return t.spans


def row_ids(a: list[Span], b: list[Span]) -> list[tuple[str | None, str | None]]:
    """The rows under the root as (original span id, replay span id), as the diff view lists them."""
    rows: list[AlignedRow] = align(a, b)
    return [(a[r.original].span_id if r.original is not None else None,
             b[r.replay].span_id if r.replay is not None else None) for r in rows[1:]]



def attempts(prefix: str, kind: str, name: str, inputs: list[tuple[str, dict]]) -> list[Span]:
    """An agent root with one child per ``(status, fields)`` in ``inputs``: spans of ``kind`` named ``name``,
    one after the other, span ids ``<prefix>0``, ``<prefix>1``... under ``<prefix>root``."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    for n, (status, fields) in enumerate(inputs):
        t.add(kind, name, parent=root, status=status, span_id=f"{prefix}{n}", **fields)
    return t.spans
