"""core/values.py by rule: how recorded JSON values are compared (VALUE, BYTES, IDS) and their leaf changes.

Each test states one rule of the module's docstrings (or docs/format.md, "Canonical arguments"; ``FieldChange``'s
``ABSENT``) on values built in the test: JSON numbers and booleans are different values, a recorded null equals a
field not recorded, a missing key or item is ``ABSENT`` (not a null), at most ``MAX_FIELDS`` changes, a field equal
leaf by leaf yet not byte-equal is reported whole, provider-minted ids do not count under ``IDS``.
"""

from __future__ import annotations

from tracetui.core.changes import ABSENT, MAX_FIELDS, FieldChange
from tracetui.core.values import BYTES, IDS, VALUE, diff_field, iter_equal, json_same, strict_same, strip_ids


def _changes(x: object, y: object, flags: int, path: str = "tool.output") -> tuple[bool, list[FieldChange]]:
    out: list[FieldChange] = []
    return diff_field(path, x, y, flags, out), out


# --- iter_equal: structural == without recursion, with JSON's boolean rule -------------------------------------


def test_iter_equal_objects_with_other_keys_differ() -> None:
    assert iter_equal({"a": 1}, {"b": 1}) is False
    assert iter_equal({"a": 1}, {"a": 1, "b": 2}) is False
    assert iter_equal({"a": 1, "b": [1, {"c": None}]}, {"b": [1, {"c": None}], "a": 1}) is True


def test_iter_equal_lists_of_other_lengths_differ() -> None:
    assert iter_equal([1], [1, 2]) is False
    assert iter_equal([[1, 2]], [[1]]) is False
    assert iter_equal([], []) is True


def test_iter_equal_an_object_against_a_list_or_a_scalar_differs() -> None:
    assert iter_equal({"a": 1}, [1]) is False
    assert iter_equal([1], {"a": 1}) is False
    assert iter_equal(1, {"a": 1}) is False
    assert iter_equal({"a": 1}, "a") is False


def test_iter_equal_a_boolean_never_equals_a_number_on_either_side() -> None:
    assert iter_equal(True, 1) is False
    assert iter_equal(1, True) is False
    assert iter_equal({"n": [False]}, {"n": [0]}) is False
    assert iter_equal(1, 1.0) is True  # numbers by value


# --- json_same / strict_same -----------------------------------------------------------------------------------


def test_json_same_numbers_and_strings_equal_by_value_are_the_same() -> None:
    assert json_same(1, 1.0) is True
    assert json_same("a", "a") is True
    assert json_same(None, None) is True
    assert json_same(True, True) is True
    assert json_same(True, 1) is False


def test_strict_same_tells_numbers_apart_inside_objects_with_non_string_keys() -> None:
    """A value built by hand with non-string keys is still compared by its canonical bytes: 1 is not 1.0."""
    assert strict_same({1: 1}, {1: 1.0}) is False
    assert strict_same({1: 1.0}, {1: 1}) is False
    assert strict_same({1: 1}, {1: 1}) is True


def test_strict_same_trusts_equality_for_values_that_are_not_json() -> None:
    """A container holding what JSON cannot hold (a set: a caller built the span by hand) is compared by == only."""
    assert strict_same([{1, 2}], [{1, 2}]) is True
    assert strict_same({"s": {1}}, {"s": {1}}) is True


# --- diff_field: a missing field -------------------------------------------------------------------------------


def test_a_field_recorded_as_null_equals_a_field_not_recorded_either_way() -> None:
    assert _changes(ABSENT, None, VALUE) == (False, [])
    assert _changes(None, ABSENT, VALUE) == (False, [])
    assert _changes(ABSENT, None, BYTES) == (False, [])


def test_a_value_against_a_missing_field_differs_whole_either_way() -> None:
    assert _changes(5, ABSENT, VALUE) == (True, [FieldChange("tool.output", 5, ABSENT)])
    assert _changes(ABSENT, {"a": 1}, VALUE) == (True, [FieldChange("tool.output", ABSENT, {"a": 1})])
    assert _changes(False, ABSENT, BYTES) == (True, [FieldChange("tool.output", False, ABSENT)])


# --- diff_field: leaves ----------------------------------------------------------------------------------------


def test_a_key_only_on_one_side_is_absent_on_the_other_not_null() -> None:
    assert _changes({"a": 1, "b": 2}, {"a": 1}, VALUE) == (True, [FieldChange("tool.output.b", 2, ABSENT)])
    assert _changes({"a": 1}, {"a": 1, "b": None}, VALUE) == (True, [FieldChange("tool.output.b", ABSENT, None)])
    assert _changes({"a": 1, "b": None}, {"a": 1}, VALUE) == (True, [FieldChange("tool.output.b", None, ABSENT)])


def test_an_item_only_on_one_side_is_absent_on_the_other() -> None:
    assert _changes([1, 2], [1], VALUE) == (True, [FieldChange("tool.output[1]", 2, ABSENT)])
    assert _changes([1], [1, None], VALUE) == (True, [FieldChange("tool.output[1]", ABSENT, None)])


def test_at_most_max_fields_changes_are_reported_in_document_order() -> None:
    x = {f"k{i:02}": i for i in range(MAX_FIELDS + 10)}
    y = {f"k{i:02}": i + 1 for i in range(MAX_FIELDS + 10)}
    differ, out = _changes(x, y, VALUE)
    assert differ is True
    assert len(out) == MAX_FIELDS
    assert [c.path for c in out] == [f"tool.output.k{i:02}" for i in range(MAX_FIELDS)]


def test_arguments_equal_leaf_by_leaf_but_not_byte_equal_are_reported_whole() -> None:
    """BYTES: -0.0 and 0.0 are equal numbers with different JSON bytes; no leaf differs, so the field does, whole."""
    differ, out = _changes({"x": -0.0, "y": 1}, {"x": 0.0, "y": 1}, BYTES, path="tool.arguments")
    assert differ is True
    assert out == [FieldChange("tool.arguments", {"x": -0.0, "y": 1}, {"x": 0.0, "y": 1})]


def test_the_whole_field_change_holds_the_canonical_values() -> None:
    """A JSON string of the arguments is parsed before comparing: the change reported holds the parsed values."""
    differ, out = _changes('{"y": 1, "x": -0.0}', {"x": 0.0, "y": 1}, BYTES, path="tool.arguments")
    assert differ is True
    assert out == [FieldChange("tool.arguments", {"x": -0.0, "y": 1}, {"x": 0.0, "y": 1})]
    assert out[0].original is not out[0].replay


# --- IDS: provider-minted ids ----------------------------------------------------------------------------------


def test_tool_call_ids_do_not_count_but_a_non_object_tool_call_is_kept() -> None:
    message = {"role": "assistant", "tool_calls": ["raw", {"id": "call_1", "function": {"name": "f"}}]}
    assert strip_ids(message) == {"role": "assistant", "tool_calls": ["raw", {"function": {"name": "f"}}]}
    other = {"role": "assistant", "tool_calls": ["raw", {"id": "call_9", "function": {"name": "f"}}]}
    assert _changes([message], [other], IDS, path="llm.messages") == (False, [])
    assert _changes([message], [other], VALUE, path="llm.messages") == (
        True, [FieldChange("llm.messages[0].tool_calls[1].id", "call_1", "call_9")])
