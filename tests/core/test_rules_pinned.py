"""Rules of docs/format.md and docs/triage.md that only distant tests held (issue 25, statements 1-3 and 5).

Each test names the statement it pins; each was checked by breaking the rule once in the code.
"""

from __future__ import annotations

import pytest
from builders import TraceBuilder, make_span

from tracetui.core.diff import diff_traces
from tracetui.core.diff.compare import DivergenceType, FieldChange, compare_pair, compare_spans
from tracetui.core.triage.replayability import assess, truncation

T = DivergenceType


def _both(a, b):  # type: ignore[no-untyped-def]
    """compare_spans, and compare_pair told the keys are equal (the screen's other path): they must agree."""
    one = compare_spans(a, b)
    assert compare_pair(a, b, True) == one
    return one


# -- 1. ok vs unset is not a change; the output change is what the pair reports ------------------------


@pytest.mark.parametrize("sa, sb", [("ok", "unset"), ("unset", "ok")])
def test_1_ok_vs_unset_with_a_changed_output_is_an_output_mismatch_without_status(sa: str, sb: str) -> None:
    a = make_span("tool", "get_order", status=sa, arguments={"id": 5531}, output={"status": "shipped"})
    b = make_span("tool", "get_order", status=sb, arguments={"id": 5531}, output={"status": "lost"})
    dtype, fields = _both(a, b)
    assert dtype is T.OUTPUT_MISMATCH
    assert fields == (FieldChange("tool.output.status", "shipped", "lost"),)
    assert all(f.path not in ("status", "error_type") for f in fields)


def test_1_ok_vs_unset_alone_is_equivalent_in_a_whole_diff() -> None:
    runs = []
    for prefix, status in (("o", "ok"), ("r", "unset")):
        t = TraceBuilder(prefix)
        root = t.add("agent", "support", status=status, input={"q": 1}, output={"a": 1})
        t.add("tool", "get_order", parent=root, status=status, arguments={"id": 1}, output={"x": 1})
        runs.append(t.trace())
    d = diff_traces(*runs)
    assert d.divergences == [] and d.first is None
    runs[1].spans[1].data["output"] = {"x": 2}
    (div,) = diff_traces(*runs).divergences
    assert div.type is T.OUTPUT_MISMATCH and [f.path for f in div.fields] == ["tool.output.x"]


# -- 2. JSON numbers and booleans are different values ---------------------------------------------------


@pytest.mark.parametrize("same_key", [False, True])
def test_2_decision_options_1_vs_1_0_is_a_decision_mismatch(same_key: bool) -> None:
    a = make_span("decision", "route", decision="pick", options=[1, 2])
    b = make_span("decision", "route", decision="pick", options=[1.0, 2])
    dtype, fields = compare_pair(a, b, same_key)
    assert dtype is T.DECISION_MISMATCH
    assert [f.path for f in fields] == ["decision.options[0]"]
    assert type(fields[0].original) is int and type(fields[0].replay) is float


@pytest.mark.parametrize("same_key", [False, True])
@pytest.mark.parametrize("x, y", [(1, True), (0, False), (True, 1)])
def test_2_memory_key_1_vs_true_is_an_args_mismatch(same_key: bool, x: object, y: object) -> None:
    a = make_span("memory", "recall", operation="get", key=x, value="v")
    b = make_span("memory", "recall", operation="get", key=y, value="v")
    dtype, fields = compare_pair(a, b, same_key)
    assert dtype is T.ARGS_MISMATCH
    assert fields == (FieldChange("memory.key", x, y),)


@pytest.mark.parametrize("x, y", [({"n": True}, {"n": 1}), ({"n": 1.0}, {"n": True}), ([False], [0]),
                                  ({"a": [{"ok": True}]}, {"a": [{"ok": 1}]})])
def test_2_an_output_true_vs_1_is_an_output_mismatch_at_that_leaf(x: object, y: object) -> None:
    """Outputs compare numbers by value (1 == 1.0) but a JSON boolean is never a number (Python's True == 1)."""
    a = make_span("tool", "count", arguments={"q": 1}, output=x)
    b = make_span("tool", "count", arguments={"q": 1}, output=y)
    dtype, fields = _both(a, b)
    assert dtype is T.OUTPUT_MISMATCH
    assert len(fields) == 1 and fields[0].path.startswith("tool.output")
    assert {type(fields[0].original), type(fields[0].replay)} & {bool}


def test_2_an_output_1_vs_1_0_stays_equal_numbers_by_value() -> None:
    a = make_span("tool", "count", arguments={"q": 1}, output={"n": 1, "m": [2]})
    b = make_span("tool", "count", arguments={"q": 1}, output={"m": [2.0], "n": 1.0})
    assert _both(a, b) == (None, ())


def test_2_a_boolean_against_a_number_in_an_output_is_found_by_the_whole_diff() -> None:
    """The whole diff screens equal-looking pairs with one ``==`` (compare.screen_pairs): that must not hide it."""
    runs = []
    for prefix, flag in (("o", True), ("r", 1)):
        t = TraceBuilder(prefix)
        root = t.add("agent", "support", input={"q": 1}, output={"a": 1})
        t.add("tool", "in_stock", parent=root, arguments={"sku": "A1"}, output={"available": flag})
        runs.append(t.trace())
    (div,) = diff_traces(*runs).divergences
    assert div.type is T.OUTPUT_MISMATCH
    assert [(f.path, f.original, f.replay) for f in div.fields] == [("tool.output.available", True, 1)]


# -- 3. an agent span whose status and output change ------------------------------------------------------


def test_3_agent_status_and_output_changed_is_a_status_mismatch_listing_all_three_fields() -> None:
    a = make_span("agent", "support", status="ok", input={"q": "where"}, output={"answer": "shipped"})
    b = make_span("agent", "support", status="error", error_type="TimeoutError", input={"q": "where"},
                  output={"answer": "sorry"})
    dtype, fields = _both(a, b)
    assert dtype is T.STATUS_MISMATCH
    assert [f.path for f in fields] == ["status", "error_type", "agent.output.answer"]
    assert fields[0] == FieldChange("status", "ok", "error")
    assert fields[1] == FieldChange("error_type", None, "TimeoutError")


def test_3_error_type_alone_is_a_status_mismatch() -> None:
    a = make_span("agent", "support", status="error", error_type="TimeoutError", input={}, output=None)
    b = make_span("agent", "support", status="error", error_type="ConnectionError", input={}, output=None)
    assert _both(a, b) == (T.STATUS_MISMATCH, (FieldChange("error_type", "TimeoutError", "ConnectionError"),))


# -- 5. tool arguments cut mid-value --------------------------------------------------------------------


def _run(**tool_fields):  # type: ignore[no-untyped-def]
    t = TraceBuilder()
    root = t.add("agent", "support", input={"q": "where"})
    t.add("tool", "search_orders", parent=root, **{"arguments": {"q": "5531"}, "output": {"orders": []},
                                                  **tool_fields})
    trace = t.trace()
    trace.header = {"schema": "tracetui/1", "run_id": "r1", "start_ns": 1_762_161_242_118_000_000, "clock": {"now": "2025-11-03T09:14:02Z"},
                    "prompt_versions": {}, "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc"}
    return trace


@pytest.mark.parametrize("cut", ['{"q": "55', '{"q": "5531", "limit', '[{"q": 1}, {"q"'])
def test_5_tool_arguments_cut_mid_value_are_truncated_output_and_not_replayable(cut: str) -> None:
    rep = assess(_run(arguments=cut))
    (f,) = rep.findings
    assert (f.code, f.field, f.severity, f.span_id) == ("truncated_output", "tool.arguments", "not_replayable", "s1")
    assert rep.verdict == "not_replayable" and rep.per_span == {"s1": "not_replayable"}


def test_5_complete_json_arguments_and_a_zero_truncated_byte_count_are_not_a_cut() -> None:
    assert assess(_run(arguments='{"q": "5531"}')).verdict == "replayable"
    zero = {"q": "5531", "truncatedByteCount": 0}
    assert truncation(zero) is None and truncation({"v": "abc", "truncated_byte_count": 0}) is None
    assert assess(_run(arguments=zero)).findings == []
    cut = assess(_run(arguments={"q": "5531", "truncatedByteCount": 3}))
    assert [(f.code, f.field) for f in cut.findings] == [("truncated_output", "tool.arguments")]
