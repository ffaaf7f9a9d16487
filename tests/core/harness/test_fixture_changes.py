"""Fixture state changes: every leaf change, never capped, lists matched as sequences."""

from __future__ import annotations

from tracetui.core.harness.fixture import RecordedReadsFixture, snapshot, state_changes


def test_nested_changes_name_their_path_and_both_values() -> None:
    before = {"appointments": {"APT-1": {"date": "2026-11-10", "start": "08:00"}}, "log": []}
    after = {"appointments": {"APT-1": {"date": "2026-11-06", "start": "08:00"}, "APT-2": {"date": "x"}}, "log": []}
    assert state_changes(before, after) == [
        {"path": "state.appointments.APT-1.date", "before": "2026-11-10", "after": "2026-11-06"},
        {"path": "state.appointments.APT-2", "before": None, "after": {"date": "x"}, "added": True},
    ]


def test_removing_one_item_of_a_list_is_one_change_not_a_shift() -> None:
    slots = [{"start": "10:00"}, {"start": "14:00"}, {"start": "16:00"}]
    changes = state_changes({"slots": slots}, {"slots": slots[1:]})
    assert changes == [{"path": "state.slots[0]", "before": {"start": "10:00"}, "after": None, "removed": True}]


def test_more_than_twenty_changes_are_all_listed() -> None:
    before = {f"k{i}": i for i in range(50)}
    after = {f"k{i}": i + 1 for i in range(50)}
    assert len(state_changes(before, after)) == 50


def test_type_changes_count_and_equal_states_have_none() -> None:
    assert state_changes({"n": 1}, {"n": 1.0}) == [{"path": "state.n", "before": 1, "after": 1.0}]
    assert state_changes({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []


def test_default_fixture_answers_recordings_in_order_then_the_last_and_logs_writes() -> None:
    store = RecordedReadsFixture()
    store.seed("get", {"id": 1}, {"v": "old"})
    store.seed("get", {"id": 1}, {"v": "new"})
    assert store.call("get", {"id": 1}, write=False) == {"v": "old"}
    assert store.call("get", {"id": 1}, write=False) == {"v": "new"}
    assert store.call("get", {"id": 1}, write=False) == {"v": "new"}  # more reads than recorded: the last again
    before = snapshot(store)
    assert store.call("put", {"id": 1, "v": 2}, write=True)["simulated"] is True
    assert [c["path"] for c in state_changes(before, snapshot(store))] == ["state.writes[0]"]
    try:
        store.call("get", {"id": 2}, write=False)
    except LookupError:
        pass
    else:
        raise AssertionError("an unseen read must raise LookupError")
