"""Semantic comparison of one aligned pair: the policy table of docs/format.md, field by field.

The matrix follows vcrpy's ``test_matchers`` pattern: start from a base span of
each kind, change exactly one field, and assert the divergence type and that
exactly that field path is reported; changing a volatile field gives nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import make_span
from tracetui.core.diff.compare import (
    ABSENT,
    MAX_FIELDS,
    VOLATILE_FIELDS,
    DivergenceType,
    FieldChange,
    compare_pair,
    compare_spans,
    screen_pairs,
    semantic_fields,
    volatile_fields,
)
from tracetui.core.diff.align import span_key
from tracetui.core.model import Span

T = DivergenceType

BASE: dict[str, dict[str, Any]] = {
    "tool": {
        "tool_name": "get_order", "tool_version": "2", "call_id": "call_8f2",
        "arguments": {"customer_id": "C-2207", "limit": 5}, "args_hash": "5d1c0e2b9a7f3c10",
        "effect": "read", "mode": "live",
        "output": {"orders": [{"id": 5531, "status": "shipped"}]}, "output_truncated": False,
    },
    "retrieval": {
        "index": "kb", "index_version": "2026-10", "query": "refund policy", "top_k": 3,
        "filters": {"lang": "en"},
        "documents": [{"id": "d1", "score": 0.91, "text": "Refunds within 30 days."}],
    },
    "llm": {
        "model": "gpt-4o", "provider": "openai", "prompt_id": "support.system", "prompt_version": "v5",
        "params": {"temperature": 0.2, "seed": 7},
        "messages": [
            {"role": "system", "content": "You help."},
            {"role": "user", "content": "Where is order 5531?"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "call_1", "name": "get_order", "arguments": {"id": 5531}}]},
            {"role": "tool", "content": "shipped", "tool_call_id": "call_1"},
        ],
        "tool_schemas_hash": "9f2c4e1ab03d77e1",
        "output": {"role": "assistant", "content": None,
                   "tool_calls": [{"id": "call_2", "name": "track", "arguments": {"id": 5531}}]},
        "finish_reason": "tool_call",
        "usage": {"input_tokens": 120, "output_tokens": 14}, "response_id": "chatcmpl-1",
    },
    "decision": {"decision": "offer_alternative_day", "value": "2026-11-07", "options": ["2026-11-07", "2026-11-08"]},
    "memory": {"operation": "read", "key": "prefs", "query": None, "value": {"tz": "Europe/Paris"}},
    "agent": {"agent_name": "support-agent", "input": {"message": "hi"}, "output": {"answer": "hello"}},
    "other": {"input": {"x": 1}, "output": {"y": 2}},
}


def base(kind: str, **common: Any) -> Span:
    """The base span of a kind, with fresh copies of its section."""
    return make_span(kind, f"{kind} span", span_id="a1", seq=3, start_ns=10, end_ns=20,
                     **common, **copy.deepcopy(BASE[kind]))


def changed(kind: str, path: str, value: Any) -> Span:
    """The base span with one field of its section set: ``path`` like ``messages[1].content``."""
    span = base(kind)
    data: Any = dict(copy.deepcopy(span.data))
    target: Any = data
    parts = path.replace("[", ".[").split(".")
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target[part]
    last = parts[-1]
    if last.startswith("["):
        target[int(last[1:-1])] = value
    else:
        target[last] = value
    return make_span(kind, span.name, span_id="b9", seq=4, start_ns=99, end_ns=199, **data)


# (kind, path in the section, new value, divergence type)
SEMANTIC_CASES = [
    ("tool", "arguments.customer_id", "C-2270", T.ARGS_MISMATCH),
    ("tool", "arguments.limit", 6, T.ARGS_MISMATCH),
    ("tool", "effect", "write", T.ARGS_MISMATCH),
    ("tool", "tool_version", "3", T.ARGS_MISMATCH),
    ("tool", "output.orders[0].status", "lost", T.OUTPUT_MISMATCH),
    ("tool", "output_truncated", True, T.OUTPUT_MISMATCH),
    ("retrieval", "index", "kb2", T.ARGS_MISMATCH),
    ("retrieval", "index_version", "2026-11", T.ARGS_MISMATCH),
    ("retrieval", "query", "refund rules", T.ARGS_MISMATCH),
    ("retrieval", "top_k", 5, T.ARGS_MISMATCH),
    ("retrieval", "filters.lang", "fr", T.ARGS_MISMATCH),
    ("retrieval", "documents[0].score", 0.5, T.OUTPUT_MISMATCH),
    ("retrieval", "documents[0].id", "d2", T.OUTPUT_MISMATCH),
    ("retrieval", "documents[0].text", "No refunds.", T.OUTPUT_MISMATCH),
    ("llm", "model", "gpt-4o-mini", T.INPUT_MISMATCH),
    ("llm", "provider", "azure", T.INPUT_MISMATCH),
    ("llm", "prompt_id", "support.other", T.INPUT_MISMATCH),
    ("llm", "prompt_version", "v6", T.INPUT_MISMATCH),
    ("llm", "params.temperature", 0.7, T.INPUT_MISMATCH),
    ("llm", "messages[1].content", "Where is order 5532?", T.INPUT_MISMATCH),
    ("llm", "messages[2].tool_calls[0].arguments.id", 5532, T.INPUT_MISMATCH),
    ("llm", "tool_schemas_hash", "0000", T.INPUT_MISMATCH),
    ("llm", "output.content", "Shipped yesterday.", T.DECISION_MISMATCH),
    ("llm", "output.tool_calls[0].name", "cancel", T.DECISION_MISMATCH),
    ("llm", "finish_reason", "stop", T.DECISION_MISMATCH),
    ("decision", "decision", "confirm_booking", T.DECISION_MISMATCH),
    ("decision", "value", "2026-11-08", T.DECISION_MISMATCH),
    ("decision", "options[1]", "2026-11-09", T.DECISION_MISMATCH),
    ("memory", "operation", "search", T.ARGS_MISMATCH),
    ("memory", "key", "history", T.ARGS_MISMATCH),
    ("memory", "query", "tz", T.ARGS_MISMATCH),
    ("memory", "value.tz", "UTC", T.OUTPUT_MISMATCH),
    ("agent", "input.message", "hello", T.INPUT_MISMATCH),
    ("agent", "output.answer", "bye", T.OUTPUT_MISMATCH),
    ("other", "input.x", 2, T.INPUT_MISMATCH),
    ("other", "output.y", 3, T.OUTPUT_MISMATCH),
]


@pytest.mark.parametrize(("kind", "path", "value", "expected"), SEMANTIC_CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in SEMANTIC_CASES])
def test_one_semantic_field_changed_reports_exactly_that_field(kind: str, path: str, value: Any, expected: T) -> None:
    """Changing one semantic field gives its divergence type and exactly its path."""
    a, b = base(kind), changed(kind, path, value)
    dtype, fields = compare_spans(a, b)
    assert dtype is expected
    assert [f.path for f in fields] == [f"{kind}.{path}"]
    assert fields[0].replay == value


@pytest.mark.parametrize("kind", sorted(BASE))
@pytest.mark.parametrize(("common", "value"), [("status", "error"), ("error_type", "TimeoutError")])
def test_status_or_error_type_changed_is_a_status_mismatch(kind: str, common: str, value: str) -> None:
    """For every kind, a changed status or error type is a status_mismatch at that path."""
    a = base(kind)
    b = base(kind, **{common: value})
    dtype, fields = compare_spans(a, b)
    assert dtype is T.STATUS_MISMATCH
    assert [f.path for f in fields] == [common]
    assert fields[0].replay == value


VOLATILE_SECTION_CASES = [
    ("tool", "call_id", "call_zz"),
    ("tool", "args_hash", "ffffffffffffffff"),
    ("tool", "mode", "replay"),
    ("llm", "usage.input_tokens", 999),
    ("llm", "response_id", "chatcmpl-2"),
    ("llm", "messages[2].tool_calls[0].id", "call_other"),
    ("llm", "messages[3].tool_call_id", "call_other"),
    ("llm", "output.tool_calls[0].id", "call_other"),
    ("agent", "agent_name", "renamed"),
    ("tool", "unknown_extra", 1),
]


@pytest.mark.parametrize(("kind", "path", "value"), VOLATILE_SECTION_CASES, ids=[f"{c[0]}.{c[1]}" for c in VOLATILE_SECTION_CASES])
def test_volatile_section_field_changed_is_no_divergence(kind: str, path: str, value: Any) -> None:
    """Ids, usage, replay mode, args_hash and unknown keys never count."""
    assert compare_spans(base(kind), changed(kind, path, value)) == (None, ())


@pytest.mark.parametrize("kind", sorted(BASE))
def test_pair_differing_only_in_ids_and_timestamps_is_equivalent(kind: str) -> None:
    """Span ids, parents, seq, timestamps, trace ids and attributes never count."""
    a = base(kind, parent_id="p1", trace_id="t1", attributes={"x": 1})
    b = make_span(kind, a.name, span_id="zz", parent_id="p9", seq=40, start_ns=5000, end_ns=9000,
                  trace_id="t2", attributes={"x": 2, "y": 3}, **copy.deepcopy(BASE[kind]))
    assert compare_spans(a, b) == (None, ())


def test_json_string_arguments_equal_the_same_object() -> None:
    """Arguments recorded as a JSON string (any spacing, any key order) equal the object."""
    a = make_span("tool", "get", arguments='{ "limit": 5,  "customer_id": "C-2207" }')
    b = make_span("tool", "get", arguments={"customer_id": "C-2207", "limit": 5})
    assert compare_spans(a, b) == (None, ())


def test_key_order_never_matters() -> None:
    """Outputs and arguments with keys in another order are equal."""
    a = make_span("tool", "get", arguments={"a": 1, "b": 2}, output={"x": {"p": 1, "q": 2}})
    b = make_span("tool", "get", arguments={"b": 2, "a": 1}, output={"x": {"q": 2, "p": 1}})
    assert compare_spans(a, b) == (None, ())


@pytest.mark.parametrize(("x", "y"), [(1, True), (1, 1.0), (0, False), ("1", 1)])
def test_arguments_of_other_json_types_differ(x: Any, y: Any) -> None:
    """``true``, ``1``, ``1.0`` and ``"1"`` are different arguments (their canonical bytes differ)."""
    a = make_span("tool", "get", arguments={"n": x})
    b = make_span("tool", "get", arguments={"n": y})
    dtype, fields = compare_spans(a, b)
    assert dtype is T.ARGS_MISMATCH
    assert fields == (FieldChange("tool.arguments.n", x, y),)


def test_input_side_outranks_status_and_output_and_all_fields_are_listed() -> None:
    """Arguments, status and output all changed: args_mismatch, fields in priority order."""
    a = base("tool")
    b = changed("tool", "arguments.limit", 9)
    b = make_span("tool", b.name, status="error", output={"orders": []},
                  **{k: v for k, v in b.data.items() if k != "output"})
    dtype, fields = compare_spans(a, b)
    assert dtype is T.ARGS_MISMATCH
    assert [f.path for f in fields] == ["tool.arguments.limit", "status", "tool.output.orders[0]"]


def test_status_outranks_output() -> None:
    """Status and output changed: status_mismatch, status listed before the output."""
    a = base("tool")
    b = make_span("tool", a.name, status="error", error_type="TimeoutError",
                  **{**copy.deepcopy(BASE["tool"]), "output": None})
    dtype, fields = compare_spans(a, b)
    assert dtype is T.STATUS_MISMATCH
    assert [f.path for f in fields] == ["status", "error_type", "tool.output"]


def test_llm_answer_change_is_input_mismatch_when_inputs_differ() -> None:
    """An LLM whose messages and answer both differ: input_mismatch (the answer is a consequence)."""
    a = base("llm")
    data = copy.deepcopy(dict(a.data))
    data["messages"][1]["content"] = "Where is order 1?"
    data["output"]["content"] = "Order 1 is lost."
    dtype, fields = compare_spans(a, make_span("llm", a.name, **data))
    assert dtype is T.INPUT_MISMATCH
    assert [f.path for f in fields] == ["llm.messages[1].content", "llm.output.content"]


def test_absent_field_is_absent_on_that_side_not_null() -> None:
    """A field or key present on one side only reports ABSENT for the other side, never a null."""
    a = make_span("tool", "get", arguments={"id": 1})
    b = make_span("tool", "get", arguments={"id": 1}, output={"v": 1})
    assert compare_spans(a, b) == (T.OUTPUT_MISMATCH, (FieldChange("tool.output", ABSENT, {"v": 1}),))
    c = make_span("tool", "get", arguments={"id": 1, "extra": "x"})
    assert compare_spans(a, c)[1] == (FieldChange("tool.arguments.extra", ABSENT, "x"),)
    d = make_span("tool", "get", arguments={"id": 1, "extra": None})
    assert compare_spans(d, c)[1] == (FieldChange("tool.arguments.extra", None, "x"),)


def test_field_recorded_null_equals_field_not_recorded() -> None:
    """A top-level field recorded as null and the same field missing are equivalent."""
    a = make_span("tool", "get", arguments={"id": 1}, output=None)
    b = make_span("tool", "get", arguments={"id": 1})
    assert compare_spans(a, b) == (None, ())


def test_list_length_change_reports_the_extra_item() -> None:
    """A message appended in the replay is reported at its index, original side ABSENT."""
    a = base("llm")
    data = copy.deepcopy(dict(a.data))
    data["messages"].append({"role": "user", "content": "and?"})
    _, fields = compare_spans(a, make_span("llm", a.name, **data))
    assert fields == (FieldChange("llm.messages[4]", ABSENT, {"role": "user", "content": "and?"}),)


def test_reported_fields_are_capped_but_values_are_whole() -> None:
    """At most MAX_FIELDS changes per pair; each value is kept whole."""
    big = "x" * 50_000
    a = make_span("tool", "get", output={f"k{i}": i for i in range(100)} | {"big": big})
    b = make_span("tool", "get", output={f"k{i}": -i - 1 for i in range(100)} | {"big": big + "y"})
    _, fields = compare_spans(a, b)
    assert len(fields) == MAX_FIELDS
    assert fields[0] == FieldChange("tool.output.k0", 0, -1)
    c = make_span("tool", "get", output={"big": big})
    d = make_span("tool", "get", output={"big": big + "y"})
    assert compare_spans(c, d)[1][0].replay == big + "y"


def test_odd_keys_are_quoted_in_paths() -> None:
    """A key that is not an identifier is written as a quoted index."""
    a = make_span("tool", "get", output={"a b": 1, "1x": 2})
    b = make_span("tool", "get", output={"a b": 2, "1x": 3})
    _, fields = compare_spans(a, b)
    assert [f.path for f in fields] == ['tool.output["a b"]', 'tool.output["1x"]']


def test_semantic_fields_lists_the_kind_fields_inputs_status_outputs() -> None:
    """The detail pane's semantic fields: inputs, then status and error type, then outputs."""
    fields = semantic_fields(base("tool"))
    assert list(fields) == ["tool.tool_name", "tool.arguments", "tool.effect", "tool.tool_version",
                            "status", "error_type", "tool.output", "tool.output_truncated"]
    assert fields["tool.arguments"] == {"customer_id": "C-2207", "limit": 5}
    assert fields["status"] == "ok"


def test_volatile_fields_lists_everything_else() -> None:
    """Ids, timestamps, duration, non-semantic section keys and attributes are volatile."""
    span = base("llm", attributes={"gen_ai.system": "openai"})
    vol = volatile_fields(span)
    assert vol["span_id"] == "a1" and vol["seq"] == 3 and vol["duration_ns"] == 10
    assert vol["llm.usage"] == {"input_tokens": 120, "output_tokens": 14}
    assert vol["llm.response_id"] == "chatcmpl-1"
    assert vol["attributes.gen_ai.system"] == "openai"
    assert not set(vol) & set(semantic_fields(span))
    assert {"tool.call_id", "tool.mode", "llm.usage", "span_id"} <= VOLATILE_FIELDS


def test_outputs_compare_by_value_after_canonicalisation() -> None:
    """Outputs are equal by value (1 == 1.0) and by meaning (a JSON string equals its object)."""
    a = make_span("tool", "get", output={"n": 1, "raw": '{"b": 2, "a": 1}'})
    b = make_span("tool", "get", output={"n": 1.0, "raw": {"a": 1, "b": 2}})
    assert compare_spans(a, b) == (None, ())


def test_values_nested_deeper_than_python_recursion_compare_without_error() -> None:
    """A value nested 1,020 deep (orjson reads up to 1,024) still compares, iteratively."""
    def nest(leaf: Any) -> Any:
        v = leaf
        for _ in range(1020):
            v = [v]
        return v

    a = make_span("tool", "get", output=nest(1))
    assert compare_spans(a, make_span("tool", "get", output=nest(1))) == (None, ())
    dtype, fields = compare_spans(a, make_span("tool", "get", output=nest(2)))
    assert dtype is T.OUTPUT_MISMATCH and [f.path for f in fields] == ["tool.output"]


def _screened(a: Span, b: Span, same_key: bool) -> bool:
    """True when screen_pairs flags the pair (compare_pair then decides)."""
    return screen_pairs([a], [b], [0], [0], [same_key]) == [0]


@pytest.mark.parametrize(("kind", "path", "value", "expected"), SEMANTIC_CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in SEMANTIC_CASES])
def test_screen_flags_every_semantic_change(kind: str, path: str, value: Any, expected: T) -> None:
    """The one-loop screen never lets a diverging pair through, with or without equal span keys."""
    a, b = base(kind), changed(kind, path, value)
    same = span_key(a) == span_key(b)
    assert _screened(a, b, same)
    assert compare_pair(a, b, same)[0] is expected


def test_screen_passes_equal_pairs_and_decides_as_compare_spans() -> None:
    """Pairs the screen leaves out compare equal; one-sided rows are always flagged, in row order."""
    kinds = list(BASE)
    originals = [base(k) for k in kinds] + [base("tool")]
    replays = [make_span(k, f"{k} span", span_id="b9", seq=4, start_ns=99, end_ns=199,
                         **{**copy.deepcopy(BASE[k]), **({"mode": "replay", "call_id": "x"} if k == "tool" else {})})
               for k in kinds] + [changed("tool", "output.orders[0].status", "lost")]
    oi: list[int | None] = list(range(len(originals))) + [None, 2]
    ri: list[int | None] = list(range(len(replays))) + [0, None]
    same = [span_key(originals[o]) == span_key(replays[r]) if o is not None and r is not None else False
            for o, r in zip(oi, ri)]
    flagged = screen_pairs(originals, replays, oi, ri, same)
    assert flagged == [len(kinds), len(kinds) + 1, len(kinds) + 2]
    for k in range(len(kinds)):
        assert compare_spans(originals[k], replays[k]) == (None, ())


def test_screen_checks_json_types_of_bytes_fields_left_by_equal_keys() -> None:
    """Equal retrieval keys skip index and query, not ``filters``: 1 and 1.0 are == but not the same JSON."""
    a = base("retrieval")
    b = changed("retrieval", "filters.lang", "en")
    b.data["filters"]["n"] = 1.0  # type: ignore[index]
    a.data["filters"]["n"] = 1  # type: ignore[index]
    assert span_key(a) == span_key(b)
    assert _screened(a, b, True)
    dtype, fields = compare_pair(a, b, True)
    assert dtype is T.ARGS_MISMATCH and [f.path for f in fields] == ["retrieval.filters.n"]


def test_screen_reads_spans_lacking_semantic_fields() -> None:
    """A section without some semantic fields compares them as absent (None), equal on both sides."""
    a = make_span("decision", "route", decision="answer")
    b = make_span("decision", "route", decision="answer", span_id="b")
    c = make_span("decision", "route", decision="answer", value=1, span_id="c")
    assert not _screened(a, b, True) and not _screened(a, b, False)
    assert _screened(a, c, True)
    assert compare_pair(a, c, True)[0] is T.DECISION_MISMATCH


def test_ok_and_unset_status_are_equal_only_error_differs() -> None:
    """An OTel SDK leaves a successful span UNSET; a recorder writes ok: no divergence between them."""
    from tracetui.core.diff import diff_traces
    from tracetui.core.model import Trace

    ok = make_span("tool", "lookup", span_id="a", seq=0, arguments={"id": 1}, output={"x": 1}, status="ok")
    unset = make_span("tool", "lookup", span_id="a", seq=0, arguments={"id": 1}, output={"x": 1}, status="unset")
    err = make_span("tool", "lookup", span_id="a", seq=0, arguments={"id": 1}, output={"x": 1}, status="error")
    assert compare_spans(ok, unset) == (None, ())
    assert diff_traces(Trace([ok]), Trace([unset])).first is None
    dtype, fields = compare_spans(unset, err)
    assert dtype is DivergenceType.STATUS_MISMATCH and [f.path for f in fields] == ["status"]
    assert diff_traces(Trace([ok]), Trace([err])).first is not None


def test_a_field_one_side_never_recorded_matches_the_other_sides_default() -> None:
    """Issue 20 item 10: another tool's recording has no ``effect`` nor ``output_truncated``; the harness
    replay of it writes ``effect: read`` and ``output_truncated: false``: the pair is equivalent. A truncated
    output (true) against an unrecorded flag still differs."""
    args = {"customer_id": "C-2207"}
    recorded = make_span("tool", "get_order", arguments=args, output={"ok": 1})
    replayed = make_span("tool", "get_order", arguments=args, output={"ok": 1}, effect="read",
                         output_truncated=False)
    assert compare_spans(recorded, replayed) == (None, ())
    assert compare_spans(replayed, recorded) == (None, ())
    truncated = make_span("tool", "get_order", arguments=args, output={"ok": 1}, effect="read",
                          output_truncated=True)
    dtype, changes = compare_spans(recorded, truncated)
    assert dtype is T.OUTPUT_MISMATCH and [c.path for c in changes] == ["tool.output_truncated"]
    zero = make_span("tool", "get_order", arguments=args, output={"ok": 1}, output_truncated=0)
    assert compare_spans(recorded, zero)[0] is T.OUTPUT_MISMATCH  # 0 is not false
