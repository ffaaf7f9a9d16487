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


# -- the full run of compare.py (issue 25, second session): the survivors of `scripts/mutation.py compare run` --

def test_failed_is_status_error_only() -> None:
    from tracetui.core.diff.compare import failed

    assert failed(make_span("tool", "t", status="error")) is True
    assert failed(make_span("tool", "t", status="ok")) is False
    assert failed(make_span("tool", "t", status="unset")) is False


def test_field_side_places_output_decision_and_status_types_at_the_span_end() -> None:
    from tracetui.core.diff.compare import INPUT, OUTPUT, field_side

    assert [field_side(t) for t in (T.OUTPUT_MISMATCH, T.DECISION_MISMATCH, T.STATUS_MISMATCH)] == [OUTPUT] * 3
    assert [field_side(t) for t in (T.ARGS_MISMATCH, T.INPUT_MISMATCH, T.MISSING_CALL, T.UNRECORDED_CALL)] == [INPUT] * 4


def test_a_pair_of_two_kinds_reports_the_kind_first_typed_by_the_originals_kind() -> None:
    tool = make_span("tool", "t", arguments={"q": 1}, output=1)
    llm = make_span("llm", "t", model="m", messages=[])
    dtype, fields = compare_spans(tool, llm)
    assert dtype is T.ARGS_MISMATCH and fields[0] == FieldChange("kind", "tool", "llm")
    for kind in ("llm", "agent", "other"):
        a = make_span(kind, "t", input={"q": 1}, output=1)
        dtype, fields = compare_spans(a, tool)
        assert dtype is T.INPUT_MISMATCH and fields[0] == FieldChange("kind", kind, "tool"), kind
    for kind in ("retrieval", "memory"):
        dtype, fields = compare_spans(make_span(kind, "t"), make_span("llm", "t"))
        assert dtype is T.ARGS_MISMATCH and fields[0] == FieldChange("kind", kind, "llm"), kind


def test_the_harness_mark_turns_only_an_argument_change_into_unrecorded_call() -> None:
    mark = {"replay.divergence": "unrecorded_call"}
    a = make_span("tool", "t", arguments={"q": 1}, output=1)
    moved = make_span("tool", "t", arguments={"q": 2}, output=1, attributes=mark)
    assert compare_spans(a, moved)[0] is T.UNRECORDED_CALL
    assert compare_spans(a, make_span("tool", "t", arguments={"q": 2}, output=1))[0] is T.ARGS_MISMATCH
    other = make_span("tool", "t", arguments={"q": 2}, output=1, attributes={"replay.divergence": "other"})
    assert compare_spans(a, other)[0] is T.ARGS_MISMATCH
    # the mark on a pair whose arguments agree changes nothing
    assert compare_spans(a, make_span("tool", "t", arguments={"q": 1}, output=2, attributes=mark))[0] is T.OUTPUT_MISMATCH
    assert compare_spans(a, make_span("tool", "t", arguments={"q": 1}, output=1, attributes=mark)) == (None, ())


def test_a_toolmessage_envelope_on_either_side_and_message_ids_inside_a_tool_output_are_not_changes() -> None:
    wrapped = {"type": "tool", "data": {"content": '{"temp_c": 18}', "tool_call_id": "call_9", "id": "t1",
                                         "name": "get_weather", "status": "success"}}
    plain = make_span("tool", "w", arguments={"city": "Paris"}, output={"temp_c": 18})
    env = make_span("tool", "w", arguments={"city": "Paris"}, output=wrapped)
    assert compare_spans(plain, env) == (None, ()) and compare_spans(env, plain) == (None, ())
    x = make_span("tool", "w", arguments={}, output={"tool_call_id": "a", "content": "x"})
    y = make_span("tool", "w", arguments={}, output={"tool_call_id": "b", "content": "x"})
    assert compare_spans(x, y) == (None, ())


def test_semantic_and_one_sided_fields_give_the_recorded_values_none_left_out_of_one_sided() -> None:
    from tracetui.core.changes import ABSENT
    from tracetui.core.diff.compare import one_sided_fields, semantic_fields

    s = make_span("tool", "t", arguments={"q": 1}, output=None, status="error", error_type="E", call_id="c")
    assert semantic_fields(s) == {"tool.tool_name": "t", "tool.arguments": {"q": 1}, "status": "error",
                                  "error_type": "E", "tool.output": None}
    out = make_span("retrieval", "r", index="kb", query="q", documents=[{"id": "d1"}])
    assert semantic_fields(out) == {"retrieval.index": "kb", "retrieval.query": "q", "status": "ok",
                                    "error_type": None, "retrieval.documents": [{"id": "d1"}]}
    assert one_sided_fields(s, original=True) == (
        FieldChange("tool.tool_name", "t", ABSENT), FieldChange("tool.arguments", {"q": 1}, ABSENT),
        FieldChange("status", "error", ABSENT), FieldChange("error_type", "E", ABSENT))
    assert one_sided_fields(s, original=False) == (
        FieldChange("tool.tool_name", ABSENT, "t"), FieldChange("tool.arguments", ABSENT, {"q": 1}),
        FieldChange("status", ABSENT, "error"), FieldChange("error_type", ABSENT, "E"))


def test_payload_sig_covers_the_non_key_semantic_fields_only() -> None:
    from tracetui.core.diff.compare import SIG_NAMES, payload_sig
    from tracetui.core.model import SpanKind

    assert SIG_NAMES[SpanKind.TOOL] == ("effect", "tool_version", "output", "output_truncated")
    base = {"tool_name": "t", "arguments": {"q": 1}, "output": {"v": 1}}
    sig = payload_sig(SpanKind.TOOL, base)
    assert type(sig) is int
    assert payload_sig(SpanKind.TOOL, dict(base)) == sig
    assert payload_sig(SpanKind.TOOL, {**base, "arguments": {"q": 2}, "call_id": "x"}) == sig  # key / volatile
    assert payload_sig(SpanKind.TOOL, {**base, "output": {"v": 2}}) != sig
    assert payload_sig(SpanKind.TOOL, {**base, "effect": "read"}) != sig
    assert payload_sig(SpanKind.TOOL, {**base, "output": 2**70}) is None  # orjson cannot write it: always compared


def test_screen_pairs_flags_every_row_that_may_diverge_and_only_those() -> None:
    from tracetui.core.diff.compare import screen_pairs

    a = [make_span("tool", "t", arguments={"q": i}, output=i) for i in range(4)]
    b = [make_span("tool", "t", arguments={"q": i}, output=i if i != 2 else -1) for i in range(4)]
    # a one-sided row first, then an equal pair, then the changed one, then one-sided again
    assert screen_pairs(a, b, [0, 1, 2, None, 3], [None, 1, 2, 0, 3], [False, True, True, False, True]) == [0, 2, 3]
    # a pair whose status differs (failed vs not) is flagged before its values, and the rows after it still screened
    failed = [make_span("tool", "t", status="error", arguments={}, output=1), *a]
    assert screen_pairs(failed, [make_span("tool", "t", arguments={}, output=1), *b], [0, 3, 4], [0, 3, 4],
                        [True, True, True]) == [0, 1]
    deep = make_span("tool", "t", arguments={}, output=nest(1))
    assert screen_pairs([deep], [make_span("tool", "t", arguments={}, output=nest(1))], [0], [0], [True]) == [0]


def test_screen_pairs_reads_spans_lacking_fields_with_get_from_the_first_one(monkeypatch: Any) -> None:
    """The ``KeyError`` fallback, taken once per kind (``_GET_KINDS`` is process-wide: emptied here)."""
    import tracetui.core.diff.compare as compare
    from tracetui.core.model import SpanKind

    kinds: set = set()
    monkeypatch.setattr(compare, "_GET_KINDS", kinds)
    a = [make_span("memory", "m", operation="get", key="k", value=i) for i in range(3)]  # no "query"
    b = [make_span("memory", "m", operation="get", key="k", value=i if i != 1 else 9) for i in range(3)]
    assert compare.screen_pairs(a, b, [0, 1, 2], [0, 1, 2], [True] * 3) == [1]
    assert kinds == {SpanKind.MEMORY}
    assert compare.screen_pairs(a, b, [0, 1, 2], [0, 1, 2], [True] * 3) == [1]


def test_screen_pairs_settles_lazy_pairs_by_their_signature_without_reading_them(tmp_path: Any) -> None:
    """Equal keys and equal payload signatures: equivalent, payloads left unread; a different signature, or
    keys that differ (the signature leaves the key fields out), is flagged."""
    from builders import write_pair

    from tracetui.core.diff.compare import screen_pairs
    from tracetui.core.load import read_pair

    def build(t: Any, side: str) -> None:
        root = t.add("agent", "a", input={"q": 1}, output=1)
        for i in range(4):
            args = {"q": 9} if side == "replay" and i == 3 else {"q": i}
            t.add("tool", "t", parent=root, arguments=args, output=-1 if side == "replay" and i == 1 else i)

    o, r = write_pair(tmp_path, build)
    orig, rep = read_pair(o, r, index_min_bytes=0)
    assert all(s._sig is not None for s in [*orig.spans, *rep.spans])  # read lazily, signed
    rows = list(range(5))
    assert screen_pairs(orig.spans, rep.spans, rows, rows, [True, True, True, True, False]) == [2, 4]
    unread = {s.span_id for s in [*orig.spans, *rep.spans] if not s.loaded}
    assert {"o0", "o1", "o3", "r0", "r1", "r3"} <= unread
