"""The fixture store's rules (``core/harness/fixture.py``), on stores and states built in the test (issue 25, round 8).

The default store (``RecordedReadsFixture``) keys a read by tool and canonical arguments, answers its recordings in
call order and then the last again, raises ``LookupError`` on a read never recorded, and logs writes without
applying them; ``snapshot`` is a JSON copy later writes cannot change; ``state_changes`` lists every leaf change in
document order, a key added or removed flagged, lists of equal length item by item, others as a sequence.
"""

from __future__ import annotations

import pytest

from tracetui.core.harness.fixture import RecordedReadsFixture, snapshot, state_changes


# --- the default store ------------------------------------------------------------------------------------------


def test_a_read_is_keyed_by_tool_and_canonical_arguments_not_their_key_order():
    store = RecordedReadsFixture()
    store.seed("get", {"id": 1, "lang": "en"}, "first")
    assert store.call("get", {"lang": "en", "id": 1}, write=False) == "first"
    with pytest.raises(LookupError):
        store.call("other", {"id": 1, "lang": "en"}, write=False)  # the same arguments, another tool
    with pytest.raises(LookupError):
        store.call("get", {"id": 1.5, "lang": "en"}, write=False)


def test_each_key_answers_its_own_recordings_in_order_and_counts_its_own_calls():
    store = RecordedReadsFixture()
    store.seed("get", {"id": 1}, "a1")
    store.seed("get", {"id": 2}, "b1")
    store.seed("get", {"id": 1}, "a2")
    store.seed("list", {"id": 1}, "l1")
    store.seed("list", {"id": 1}, "l2")
    assert store.call("get", {"id": 1}, write=False) == "a1"
    assert store.call("list", {"id": 1}, write=False) == "l1"  # another tool's count, not get's
    assert store.call("get", {"id": 2}, write=False) == "b1"
    assert store.call("get", {"id": 1}, write=False) == "a2"
    assert store.call("get", {"id": 2}, write=False) == "b1"  # used up: the last again
    assert store.call("list", {"id": 1}, write=False) == "l2"
    assert store.call("get", {"id": 1}, write=False) == "a2"


def test_a_write_is_logged_not_applied_and_answered_as_a_simulated_success():
    store = RecordedReadsFixture()
    assert RecordedReadsFixture.applies_writes is False
    store.seed("get", {"id": 1}, {"v": 1})
    result = store.call("set", {"id": 1, "v": 2}, write=True)
    assert result == {"status": "ok", "simulated": True, "intercepted": True}
    assert store.call("get", {"id": 1}, write=False) == {"v": 1}  # later reads do not see the write
    store.call("delete", {"id": 1}, write=True)
    assert store.state() == {
        "reads": {"get": {'{"id":1}': [{"v": 1}]}},
        "writes": [{"tool": "set", "arguments": {"id": 1, "v": 2}}, {"tool": "delete", "arguments": {"id": 1}}],
    }


def test_a_write_to_a_tool_that_was_also_read_is_not_served_as_a_read():
    store = RecordedReadsFixture()
    store.seed("put", {"id": 1}, "recorded read")
    assert store.call("put", {"id": 1}, write=True)["simulated"] is True


def test_the_state_holds_the_reads_by_tool_and_canonical_arguments():
    store = RecordedReadsFixture()
    assert store.state() == {"reads": {}, "writes": []}
    store.seed("get", {"b": 2, "a": 1}, "x")
    store.seed("get", {"a": 1, "b": 2}, "y")
    assert store.state() == {"reads": {"get": {'{"a":1,"b":2}': ["x", "y"]}}, "writes": []}


def test_a_seed_answers_a_read_never_recorded_keyed_canonically():
    store = RecordedReadsFixture()
    store.seed("get", {"id": 1}, "recorded")
    store.load({"reads": {"get": {'{"lang": "en", "id": 2}': "seeded"}, "search": {'{"q": "x"}': ["doc"]}}})
    assert store.call("get", {"id": 2, "lang": "en"}, write=False) == "seeded"
    assert store.call("get", {"id": 2, "lang": "en"}, write=False) == "seeded"
    assert store.call("search", {"q": "x"}, write=False) == ["doc"]
    assert store.call("get", {"id": 1}, write=False) == "recorded"  # a key the seed does not name is kept


def test_a_seed_answers_a_recorded_read_once_the_recordings_are_used_up():
    store = RecordedReadsFixture()
    store.seed("get", {"id": 1}, "recorded")
    store.load({"reads": {"get": {'{"id": 1}': "seeded"}}})
    store.call("get", {"id": 1}, write=False)
    assert store.call("get", {"id": 1}, write=False) == "seeded"


def test_a_seed_without_reads_changes_nothing():
    store = RecordedReadsFixture()
    store.seed("get", {"id": 1}, "recorded")
    before = snapshot(store)
    store.load({})
    store.load({"reads": None})
    store.load({"writes": [1]})
    assert snapshot(store) == before


# --- snapshot ---------------------------------------------------------------------------------------------------


class _Store:
    def __init__(self, state):
        self._state = state

    def state(self):
        return self._state


def test_a_snapshot_is_a_copy_later_changes_cannot_reach():
    live = {"rows": [{"id": 1}], "n": 1}
    snap = snapshot(_Store(live))
    live["rows"][0]["id"] = 2
    live["n"] = 5
    assert snap == {"rows": [{"id": 1}], "n": 1}


def test_a_snapshot_is_json_integer_keys_as_text_other_values_as_their_text():
    class Odd:
        def __str__(self):
            return "odd-value"

    snap = snapshot(_Store({1: ("a", "b"), "x": Odd()}))
    assert snap == {"1": ["a", "b"], "x": "odd-value"}


# --- state_changes ----------------------------------------------------------------------------------------------


def test_changes_come_in_document_order_before_keys_first_then_keys_only_in_after():
    before = {"b": 1, "a": {"y": 1, "x": 1}, "gone": True}
    after = {"new": 0, "a": {"x": 2, "y": 2}, "b": 2}
    assert state_changes(before, after) == [
        {"path": "state.b", "before": 1, "after": 2},
        {"path": "state.a.y", "before": 1, "after": 2},
        {"path": "state.a.x", "before": 1, "after": 2},
        {"path": "state.gone", "before": True, "after": None, "removed": True},
        {"path": "state.new", "before": None, "after": 0, "added": True},
    ]


def test_a_key_holding_null_is_not_an_absent_key():
    assert state_changes({"k": None}, {}) == [{"path": "state.k", "before": None, "after": None, "removed": True}]
    assert state_changes({}, {"k": None}) == [{"path": "state.k", "before": None, "after": None, "added": True}]
    assert state_changes({"k": None}, {"k": None}) == []


def test_a_changed_leaf_has_neither_flag():
    (change,) = state_changes({"k": "a"}, {"k": "b"})
    assert "added" not in change and "removed" not in change


def test_json_types_differ_even_when_python_calls_them_equal():
    assert state_changes({"k": True}, {"k": 1}) == [{"path": "state.k", "before": True, "after": 1}]
    assert state_changes({"k": {"n": 1}}, {"k": {"n": 1.0}}) == [{"path": "state.k.n", "before": 1, "after": 1.0}]
    assert state_changes([1, 2], [1, 2.0]) == [{"path": "state[1]", "before": 2, "after": 2.0}]
    assert state_changes([[0]], [[False]]) == [{"path": "state[0][0]", "before": 0, "after": False}]
    assert state_changes(1, 1) == [] and state_changes("a", "a") == []


def test_a_container_against_another_type_is_one_change_at_its_path():
    assert state_changes({"k": {"a": 1}}, {"k": [1]}) == [{"path": "state.k", "before": {"a": 1}, "after": [1]}]
    assert state_changes({"k": [1]}, {"k": "1"}) == [{"path": "state.k", "before": [1], "after": "1"}]


def test_lists_of_equal_length_are_compared_item_by_item():
    assert state_changes({"l": [1, 2, 3]}, {"l": [1, 9, 3]}) == [{"path": "state.l[1]", "before": 2, "after": 9}]
    assert state_changes({"l": [{"a": 1}, {"a": 2}]}, {"l": [{"a": 1}, {"a": 3}]}) == [
        {"path": "state.l[1].a", "before": 2, "after": 3}]
    assert state_changes([3, 2, 1], [1, 2, 3]) == [{"path": "state[0]", "before": 3, "after": 1},
                                                     {"path": "state[2]", "before": 1, "after": 3}]


def test_an_added_item_has_its_new_index_and_a_removed_one_its_old():
    assert state_changes(["a", "c"], ["a", "b", "c"]) == [
        {"path": "state[1]", "before": None, "after": "b", "added": True}]
    assert state_changes(["a", "b", "c", "d"], ["a", "d"]) == [
        {"path": "state[1]", "before": "b", "after": None, "removed": True},
        {"path": "state[2]", "before": "c", "after": None, "removed": True}]
    assert state_changes(["x", "a", "b"], ["a", "b", "y", "z"]) == [
        {"path": "state[0]", "before": "x", "after": None, "removed": True},
        {"path": "state[2]", "before": None, "after": "y", "added": True},
        {"path": "state[3]", "before": None, "after": "z", "added": True}]


def test_a_replaced_run_of_the_same_length_is_compared_pairwise_at_the_new_index():
    before = ["keep", {"id": 1, "v": "a"}, "tail"]
    after = ["new", "keep", {"id": 1, "v": "b"}, "tail"]
    assert state_changes(before, after) == [
        {"path": "state[0]", "before": None, "after": "new", "added": True},
        {"path": "state[2].v", "before": "a", "after": "b"},
    ]


def test_a_replaced_run_of_another_length_is_removed_then_added():
    assert state_changes(["a", "x", "b"], ["a", "y", "z", "b"]) == [
        {"path": "state[1]", "before": "x", "after": None, "removed": True},
        {"path": "state[1]", "before": None, "after": "y", "added": True},
        {"path": "state[2]", "before": None, "after": "z", "added": True},
    ]


def test_list_items_are_matched_by_their_json_not_python_equality():
    assert state_changes([1, True, "x"], [1, "x"]) == [
        {"path": "state[1]", "before": True, "after": None, "removed": True}]
    assert state_changes([{"b": 1, "a": 2}, "x"], ["x"]) == [
        {"path": "state[0]", "before": {"b": 1, "a": 2}, "after": None, "removed": True}]


def test_a_long_list_with_a_common_item_is_still_matched_as_a_sequence():
    # difflib's autojunk treats an item making up over 1% of 200+ items as junk: not here
    before = [0] * 250 + ["end"]
    after = [0] * 250 + ["end", "more"]
    assert state_changes(before, after) == [
        {"path": "state[251]", "before": None, "after": "more", "added": True}]
    before = ["x"] + [0] * 250
    after = [0] * 250
    assert state_changes(before, after) == [{"path": "state[0]", "before": "x", "after": None, "removed": True}]


def test_a_replaced_run_of_several_items_pairs_each_with_its_counterpart_and_later_changes_still_count():
    before = ["a", "x1", "x2", "b"]
    after = ["new", "a", "y1", "y2", "b", "end"]
    assert state_changes(before, after) == [
        {"path": "state[0]", "before": None, "after": "new", "added": True},
        {"path": "state[2]", "before": "x1", "after": "y1"},
        {"path": "state[3]", "before": "x2", "after": "y2"},
        {"path": "state[5]", "before": None, "after": "end", "added": True},
    ]


def test_each_read_answers_every_recording_once_in_order_before_repeating_the_last():
    store = RecordedReadsFixture()
    for v in ("v1", "v2", "v3"):
        store.seed("get", {"id": 1}, v)
    assert [store.call("get", {"id": 1}, write=False) for _ in range(5)] == ["v1", "v2", "v3", "v3", "v3"]
