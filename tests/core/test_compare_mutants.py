"""Tests that kill the mutants of core/diff/compare.py the suite let live (tests/mutation_equivalents.md)."""

from __future__ import annotations

import sys
from typing import Any

from builders import make_span

from tracetui.core.diff.compare import DivergenceType, FieldChange, compare_spans, volatile_fields

T = DivergenceType


def nest(leaf: Any, depth: int = sys.getrecursionlimit() + 200) -> Any:
    v = leaf
    for _ in range(depth):
        v = [v]
    return v


def test_values_nested_too_deep_for_eq_still_follow_the_policy() -> None:
    """The iterative fallback: status and error type first, ok == unset, a differing field reported whole."""
    deep1, deep2 = nest(1), nest(2)
    a = make_span("tool", "t", status="ok", arguments={"q": 1}, output=deep1)
    b = make_span("tool", "t", status="error", error_type="TimeoutError", arguments={"q": 1}, output=deep2)
    dtype, fields = compare_spans(a, b)
    assert dtype is T.STATUS_MISMATCH
    assert [f.path for f in fields] == ["status", "error_type", "tool.output"]
    assert fields[0] == FieldChange("status", "ok", "error") and fields[1] == FieldChange("error_type", None, "TimeoutError")
    assert fields[2].original is deep1 and fields[2].replay is deep2

    unset = make_span("tool", "t", status="unset", arguments={"q": 1}, output=deep1)
    assert compare_spans(a, unset) == (None, ())
    changed = make_span("tool", "t", status="unset", arguments={"q": 1}, output=deep2)
    dtype, fields = compare_spans(a, changed)
    assert dtype is T.OUTPUT_MISMATCH and [f.path for f in fields] == ["tool.output"]
    args = make_span("tool", "t", status="ok", arguments={"q": deep2}, output=deep2)
    dtype, fields = compare_spans(a, args)
    assert dtype is T.ARGS_MISMATCH and [f.path for f in fields] == ["tool.arguments", "tool.output"]


def test_volatile_fields_names_each_field_exactly() -> None:
    s = make_span("tool", "t", span_id="a1", parent_id="p0", seq=3, start_ns=10, end_ns=20, trace_id="tr",
                  arguments={}, output=1, call_id="c9", attributes={"http.status": 200})
    assert volatile_fields(s) == {"span_id": "a1", "parent_id": "p0", "trace_id": "tr", "seq": 3, "start_ns": 10,
                                  "end_ns": 20, "duration_ns": 10, "tool.call_id": "c9",
                                  "attributes.http.status": 200}


def test_field_types_give_the_policy_priority_and_type_per_path() -> None:
    """What noise rules use to retype a divergence whose top field was hidden (diff.noise)."""
    from tracetui.core.diff.compare import field_types
    from tracetui.core.model import SpanKind

    assert field_types(SpanKind.TOOL) == {
        "tool.tool_name": (0, T.ARGS_MISMATCH), "tool.arguments": (1, T.ARGS_MISMATCH),
        "tool.effect": (2, T.ARGS_MISMATCH), "tool.tool_version": (3, T.ARGS_MISMATCH),
        "status": (4, T.STATUS_MISMATCH), "error_type": (4, T.STATUS_MISMATCH),
        "tool.output": (5, T.OUTPUT_MISMATCH), "tool.output_truncated": (6, T.OUTPUT_MISMATCH)}
    assert field_types(SpanKind.DECISION) == {
        "status": (0, T.STATUS_MISMATCH), "error_type": (0, T.STATUS_MISMATCH),
        "decision.decision": (1, T.DECISION_MISMATCH), "decision.value": (2, T.DECISION_MISMATCH),
        "decision.options": (3, T.DECISION_MISMATCH)}
