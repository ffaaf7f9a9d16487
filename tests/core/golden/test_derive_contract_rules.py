"""The clauses ``derive_contract`` proposes, rule by rule (golden.derive's docstring, docs/golden.md "Promote"), on
runs built in the test: a failing original and, mostly, its fixed replay.

Written from the rules, to pin what ``test_promote.py`` (whole sample cases) leaves open; these tests also make the
module's mutation run fast (``scripts/mutation.py golden-derive-fast``: tests/mutation_equivalents.md,
"core/golden/derive.py").
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import TraceBuilder

from tracetui.core.golden.clauses import GoldenCaseError
from tracetui.core.golden.derive import Derivation, contract_text, derive_contract
from tracetui.core.model import Trace

READS = {"read_tools": ["get_order", "list_slots", "find_customer"]}


def _run(prefix: str, calls: list[tuple], answer: Any = None, header: dict | None = None,
         summary: Any = None) -> Trace:
    """A run: an agent root (its output the final answer, its ``replay.summary`` attribute) and, under it, tool calls
    ``(tool, arguments[, span fields])`` in order; the header lists the read tools (``READS`` unless given)."""
    b = TraceBuilder(prefix)
    root = b.add("agent", "agent", output=answer, attributes={} if summary is None else {"replay.summary": summary})
    for call in calls:
        b.add("tool", call[0], parent=root, arguments=call[1], **(call[2] if len(call) > 2 else {}))
    t = b.trace()
    t.header = dict(READS if header is None else header)
    return t


def _ids(items: list[dict]) -> list[str]:
    return [c["id"] for c in items]


def _derive(o_calls: list[tuple], r_calls: list[tuple] | None, answer: Any = "Here you are.", **kw: Any) -> Derivation:
    replay = _run("r", r_calls, **kw) if r_calls is not None else None
    return derive_contract(_run("o", o_calls, answer), replay)


# --------------------------------------------------------------------------- must_call
def test_a_tool_only_the_fixed_run_called_is_a_must_call_without_arguments() -> None:
    d = _derive([("get_order", {"id": 1})], [("get_order", {"id": 1}), ("list_slots", {"date": "2026-11-06"})])
    assert d.contract["must_call"] == [{"id": "must-call-list-slots", "tool": "list_slots"}]
    assert d.why["must-call-list-slots"] == "the fixed run called list_slots; the original never did"
    # with no other failure, the case is about the missing call
    assert d.failure == 'the agent answered "Here you are." without calling list_slots, which the fixed run did'
    assert d.name == "never-called-list-slots"
    assert d.notes == []


def test_a_new_call_of_a_tool_the_original_called_keeps_the_arguments_that_tell_it_apart() -> None:
    """Only the arguments that differ from the nearest original call (most equal keys) are kept; a repeat of the
    same new call is one clause, and the clause id names its scalar values."""
    original = [("list_slots", {"date": "a", "tz": "x", "n": 1}), ("list_slots", {"date": "a", "tz": "y", "n": 2})]
    replay = [*original, ("list_slots", {"date": "b", "tz": "y", "n": 2, "tags": ["p"]}),
              ("list_slots", {"date": "b", "tz": "y", "n": 2, "tags": ["p"]})]
    d = _derive(original, replay, answer={"text": "Nothing free. Bye."})
    assert d.contract["must_call"] == [{"id": "must-call-list-slots-b", "tool": "list_slots",
                                        "args": {"date": "b", "tags": ["p"]}}]
    assert d.why["must-call-list-slots-b"] == (
        'the fixed run called list_slots with {"date": "b", "tags": ["p"]}; the original never did')
    assert d.failure == ('the agent answered "Nothing free." without calling list_slots with '
                         '{"date": "b", "tags": ["p"]}, which the fixed run did')
    assert d.name == "never-called-list-slots-b"


def test_the_same_call_made_again_by_the_fixed_run_is_no_must_call() -> None:
    d = _derive([("list_slots", {"date": "a", "request_id": "o-1"})],
                [("list_slots", {"date": "a", "request_id": "r-1"}),
                 ("list_slots", {"date": "a", "request_id": "r-2"})],
                answer=None)
    assert d.contract["must_call"] == []  # a volatile argument (request_id) does not make it a new call
    assert d.failure == "the run failed (describe the observable failure in one sentence)"
    assert d.notes == ["no failure could be derived from the run: write the failure statement by hand"]
    assert d.name == ""


def test_arguments_that_change_on_every_run_are_left_out_of_a_must_call() -> None:
    d = _derive([], [("find_customer", {"email": "a@b.c", "idempotency_key": "k", "trace_id": "t",
                                        "X_Request_Id": "q", "correlation": "c", "requests": 2})])
    assert d.contract["must_call"] == [{"id": "must-call-find-customer", "tool": "find_customer"}]
    d = _derive([("find_customer", {"email": "x@y.z"})],
                [("find_customer", {"email": "x@y.z"}),
                 ("find_customer", {"email": "a@b.c", "idempotency_key": "k", "requests": 2, "requester": 1,
                                    "my_request": 3})])
    assert d.contract["must_call"][0]["args"] == {"email": "a@b.c", "requests": 2, "requester": 1}


def test_two_new_calls_with_the_same_id_get_numbered_ids_and_non_scalar_values_stay_out_of_ids() -> None:
    d = _derive([("list_slots", {"date": "a", "q": 0})],
                [("list_slots", {"date": "a", "q": 0}), ("list_slots", {"date": "b", "q": [1]}),
                 ("list_slots", {"date": "b", "q": {"k": 2}}),
                 ("list_slots", {"date": "b", "q": None})])
    assert _ids(d.contract["must_call"]) == ["must-call-list-slots-b", "must-call-list-slots-b-2",
                                             "must-call-list-slots-b-3"]


def test_a_new_call_with_arguments_that_are_not_an_object_reads_as_one_without_arguments() -> None:
    d = _derive([("list_slots", {"date": "a"})], [("list_slots", {"date": "a"}), ("list_slots", ["b"])])
    assert d.contract["must_call"] == []  # no arguments differ from the original call
    d = _derive([], [("list_slots", '{"date": "b"}')])  # a JSON string holding an object is an object
    assert d.contract["must_call"] == [{"id": "must-call-list-slots", "tool": "list_slots"}]
    d = _derive([("list_slots", {"date": "a"})], [("list_slots", {"date": "a"}), ("list_slots", '{"date": "b"}')])
    assert d.contract["must_call"][0]["args"] == {"date": "b"}


def test_only_tool_calls_the_fixed_run_added_are_must_calls() -> None:
    b = TraceBuilder("r")
    root = b.add("agent", "agent")
    b.add("llm", "plan", parent=root, input={"m": 1}, output={"content": "x"})
    b.add("retrieval", "docs", parent=root, query="q", output=[1])
    replay = b.trace()
    replay.header = dict(READS)
    d = derive_contract(_run("o", [], "Done."), replay)
    assert d.contract["must_call"] == []


def test_without_a_replay_must_call_and_order_are_left_to_the_reviewer() -> None:
    d = derive_contract(_run("o", [("get_order", {"id": 1})], "Here."))
    assert d.notes == ["no replay of the fixed run: must_call and order need one; add them by hand",
                       "no failure could be derived from the run: write the failure statement by hand"]
    assert d.contract["trials"] == {"count": 1, "safety": "all", "soft": {"at_least": 1}}
    assert d.contract["schema"] == "tracetui-contract/1"
    assert list(d.contract) == ["schema", "must_call", "forbid_call", "max_calls", "order", "success_requires",
                                "final_state", "trials"]


# --------------------------------------------------------------------------- forbid_call
def test_the_originals_last_write_is_forbidden_with_what_the_fixed_run_did_differently() -> None:
    d = _derive([("refund", {"id": 1, "amount": 5, "note": "a"}), ("refund", {"id": 2, "amount": 9, "note": "b"})],
                [("refund", {"id": 2, "amount": 90, "note": "b"}), ("refund", {"id": 7, "amount": 9, "note": "z"})])
    # the nearest replay call of the tool is the one with most equal arguments (id 2, note b): amount differs
    assert d.contract["forbid_call"] == [{"id": "no-refund-9", "tool": "refund", "args": {"amount": 9}}]
    assert d.why["no-refund-9"] == "the original's last write (span o2), which the fixed run did not make"
    assert d.failure == 'the agent called refund with {"amount": 9}'
    assert d.name == "wrong-refund-9"


def test_a_write_the_fixed_run_never_made_is_forbidden_with_all_its_stable_arguments() -> None:
    d = _derive([("get_order", {"id": 1}), ("cancel", {"id": 1, "reason": "x", "idempotency_key": "k"})],
                [("get_order", {"id": 1})])
    assert d.contract["forbid_call"] == [{"id": "no-cancel-1-x", "tool": "cancel", "args": {"id": 1, "reason": "x"}}]


def test_without_a_replay_the_last_write_is_forbidden_and_its_why_says_only_that() -> None:
    d = derive_contract(_run("o", [("cancel", {"id": 1}), ("cancel", {}), ("get_order", {"id": 1})], "Here."))
    assert d.contract["forbid_call"] == [{"id": "no-cancel", "tool": "cancel"}]  # no arguments: the tool only
    assert d.why["no-cancel"] == "the original's last write (span o2)"
    assert d.failure == "the agent called cancel"
    assert d.name == "wrong-cancel"


def test_a_write_the_fixed_run_made_with_the_same_arguments_is_not_forbidden() -> None:
    d = _derive([("refund", {"id": 1, "request_id": "a"})], [("refund", {"id": 1, "request_id": "b"})])
    assert d.contract["forbid_call"] == []
    assert d.notes[0] == ("the original's last write refund was made with the same arguments by the fixed run: "
                          "not forbidden")


def test_a_failed_read_the_fix_changed_is_forbidden_with_its_original_arguments() -> None:
    """A malformed id stays malformed: the original's failed call (args_mismatch, error in the original, not in
    the replay) is forbidden with the arguments that differ from the fixed call."""
    d = _derive([("get_order", {"id": "x1", "full": True}, {"status": "error", "error_type": "NotFound"})],
                [("get_order", {"id": "X-1", "full": True})])
    assert d.contract["forbid_call"] == [{"id": "no-get-order-x1", "tool": "get_order", "args": {"id": "x1"}}]
    assert d.why["no-get-order-x1"] == (
        'span o1: get_order with {"id": "x1"} failed (NotFound); the fixed run sent {"id": "X-1"}')
    assert d.failure == 'the agent called get_order with {"id": "x1"}, which failed (NotFound)'
    assert d.name == "get-order-bad-args"
    d = _derive([("get_order", {"id": "x1", "opts": ["a"]}, {"status": "error"})],
                [("get_order", {"id": "X-1", "opts": ["b"]})])
    assert d.contract["forbid_call"] == [{"id": "no-get-order-x1", "tool": "get_order",
                                          "args": {"id": "x1", "opts": ["a"]}}]  # the list stays out of the id
    d = _derive([("get_order", {"id": "x1"}, {"status": "error"})], [("get_order", {"id": "X-1"})])
    assert d.failure == 'the agent called get_order with {"id": "x1"}, which failed (error)'
    assert d.why["no-get-order-x1"].endswith("failed (error); the fixed run sent {\"id\": \"X-1\"}")


def test_a_changed_call_is_not_forbidden_unless_it_failed_only_in_the_original() -> None:
    ok = _derive([("get_order", {"id": "x1"})], [("get_order", {"id": "X-1"})])
    both = _derive([("get_order", {"id": "x1"}, {"status": "error"})],
                   [("get_order", {"id": "X-1"}, {"status": "error"})])
    volatile = _derive([("get_order", {"id": 1, "request_id": "a"}, {"status": "error"})],
                       [("get_order", {"id": 1, "request_id": "b"})])
    assert ok.contract["forbid_call"] == both.contract["forbid_call"] == volatile.contract["forbid_call"] == []
    assert ok.contract["must_call"] == []  # a changed call is not a call only the fixed run made


def test_a_failed_write_the_fix_changed_is_forbidden_once() -> None:
    d = _derive([("refund", {"id": "x1"}, {"status": "error", "error_type": "BadId"})], [("refund", {"id": "X-1"})])
    assert d.contract["forbid_call"] == [{"id": "no-refund-x1", "tool": "refund", "args": {"id": "x1"}}]
    assert d.failure == 'the agent called refund with {"id": "x1"}'


def test_failed_changed_calls_of_two_tools_are_each_forbidden() -> None:
    d = _derive([("get_order", {"id": "x1"}, {"status": "error"}),
                 ("find_customer", {"id": "x1"}, {"status": "error"})],
                [("get_order", {"id": "X-1"}), ("find_customer", {"id": "X-1"})])
    assert d.contract["forbid_call"] == [{"id": "no-get-order-x1", "tool": "get_order", "args": {"id": "x1"}},
                                         {"id": "no-find-customer-x1", "tool": "find_customer", "args": {"id": "x1"}}]
    assert d.failure == ('the agent called get_order with {"id": "x1"}, which failed (error); '
                         'the agent called find_customer with {"id": "x1"}, which failed (error)')


# --------------------------------------------------------------------------- max_calls and order
def test_each_write_tool_may_be_called_as_often_as_the_fixed_run_did() -> None:
    d = _derive([("cancel", {"id": 1}), ("refund", {"id": 1}), ("refund", {"id": 1})],
                [("refund", {"id": 1}), ("refund", {"id": 2}), ("notify", {"id": 1}), ("get_order", {"id": 1})])
    assert d.contract["max_calls"] == [{"id": "at-most-1-cancel", "tool": "cancel", "max": 1},
                                       {"id": "at-most-2-refund", "tool": "refund", "max": 2},
                                       {"id": "at-most-1-notify", "tool": "notify", "max": 1}]
    assert d.why["at-most-1-cancel"] == "cancel is a write; the original made it 1 time(s)"
    assert d.why["at-most-2-refund"] == "the fixed run made refund 2 time(s); the original made it 2 time(s)"
    assert d.why["at-most-1-notify"] == "the fixed run made notify 1 time(s)"


def test_the_reads_before_each_write_of_the_fixed_run_are_ordered_before_it() -> None:
    d = _derive([("refund", {"id": 1})],
                [("find_customer", {"e": 1}), ("get_order", {"id": 1}), ("find_customer", {"e": 2}),
                 ("refund", {"id": 1}), ("list_slots", {}), ("notify", {"id": 1}), ("refund", {"id": 1})])
    assert [(c["before"], c["after"]) for c in d.contract["order"]] == [
        ("find_customer", "refund"), ("get_order", "refund"),
        ("find_customer", "notify"), ("get_order", "notify"), ("list_slots", "notify")]
    assert _ids(d.contract["order"])[:2] == ["find-customer-before-refund", "get-order-before-refund"]
    assert d.why["get-order-before-refund"] == "the fixed run read get_order before its first refund"


def test_the_fixed_runs_own_read_tools_decide_its_writes() -> None:
    """The replay's header, when it has one, says which of its tools are reads; else the original's does."""
    d = _derive([], [("audit", {}), ("get_order", {"id": 1}), ("refund", {"id": 1})],
                header={"read_tools": ["audit", "get_order"]})
    assert [(c["before"], c["after"]) for c in d.contract["order"]] == [("audit", "refund"), ("get_order", "refund")]
    assert [c["tool"] for c in d.contract["max_calls"]] == ["refund"]
    d = _derive([], [("get_order", {"id": 1}), ("refund", {"id": 1})], header={})
    assert [c["tool"] for c in d.contract["max_calls"]] == ["refund"]  # the original's header: get_order is a read
    assert [(c["before"], c["after"]) for c in d.contract["order"]] == [("get_order", "refund")]


# --------------------------------------------------------------------------- success_requires
def test_a_success_claim_without_a_write_is_backed_by_the_fixed_runs_matching_write() -> None:
    """The write named most like the claim's words, its status-like output fields (scalars only) required."""
    d = _derive([("get_order", {"id": 1})],
                [("notify_customer", {"id": 1}, {"output": {"status": "sent"}}),
                 ("pause_subscription", {"id": 1}, {"output": {"status": "paused", "ok": True, "state": {"a": 1},
                                                               "result": None, "at": "2026"}}),
                 ("notify_customer", {"id": 2})],
                answer="Your subscription is paused! Anything else?")
    (clause,) = d.contract["success_requires"]
    assert clause == {"id": "pause-subscription-receipt-before-claim", "claim": "(?i)\\b(?:paused)\\b",
                      "tool": "pause_subscription", "output": {"status": "paused", "result": None, "ok": True}}
    assert d.why[clause["id"]] == ("the original's final answer claims success (paused) with no successful "
                                   "pause_subscription output")
    assert d.failure == ('the agent claimed success ("Your subscription is paused!") without a successful '
                         'pause_subscription output')
    assert d.name == "pause-subscription-claimed-without-receipt"


def test_a_multi_word_claim_matches_any_spacing_and_the_best_named_write_wins_over_the_first() -> None:
    d = _derive([], [("send_email", {"id": 1}, {"output": {"ok": True}}),
                     ("reschedule_visit", {"id": 1}, {"output": "done"})],
                answer="All   set, it is rescheduled.")
    (clause,) = d.contract["success_requires"]
    assert clause["claim"] == "(?i)\\b(?:all\\s+set|rescheduled)\\b"
    assert clause["tool"] == "reschedule_visit" and "output" not in clause  # an output that is not an object
    assert d.why[clause["id"]] == ("the original's final answer claims success (all set, rescheduled) with no "
                                   "successful reschedule_visit output")
    d = _derive([], [("notify_a", {"id": 1}, {"output": {"ok": True}}), ("email_b", {"id": 1})], answer="Refunded.")
    assert d.contract["success_requires"][0]["tool"] == "notify_a"  # no name matches: the first write


def test_a_claim_backed_by_a_failed_original_write_requires_that_write_with_no_output() -> None:
    d = _derive([("refund", {"id": 1}, {"status": "error", "output": {"status": "ok"}})], None, answer="Refunded.")
    (clause,) = d.contract["success_requires"]
    assert clause == {"id": "refund-receipt-before-claim", "claim": "(?i)\\b(?:refunded)\\b", "tool": "refund"}
    assert d.failure == ('the agent claimed success ("Refunded.") without a successful refund output; '
                         'the agent called refund with {"id": 1}')
    assert d.name == "refund-claimed-without-receipt"
    # the fixed run's only refund failed too: the original's write is still the one required
    d = _derive([("refund", {"id": 1}, {"status": "error"})], [("refund", {"id": 2}, {"status": "error"})],
                answer="Refunded.")
    assert d.contract["success_requires"][0]["tool"] == "refund"


def test_no_success_clause_when_the_original_wrote_successfully_or_claimed_nothing() -> None:
    wrote = _derive([("refund", {"id": 1})], [("refund", {"id": 2}, {"output": {"status": "ok"}})], answer="Refunded.")
    silent = _derive([("refund", {"id": 1}, {"status": "error"})], [("refund", {"id": 2})], answer="Let me check.")
    assert wrote.contract["success_requires"] == silent.contract["success_requires"] == []


def test_a_claim_with_no_write_anywhere_is_left_to_the_reviewer() -> None:
    d = _derive([("get_order", {"id": 1})], [("get_order", {"id": 1})], answer="Done. See you.")
    assert d.contract["success_requires"] == []
    assert d.failure == 'the agent claimed success ("Done.") without any write'
    assert d.name == "success-claimed-without-write"
    assert d.notes == ["the final answer claims success (done) without any write, and no fixed run names the write "
                       "that should back it: add a success_requires clause by hand"]


# --------------------------------------------------------------------------- final_state
def _fixture(changes: Any, final_state: Any = None, mode: str = "fixture") -> dict:
    summary: dict[str, Any] = {"mode": mode, "changes": changes}
    if final_state is not None:
        summary["final_state"] = final_state
    return summary


def test_what_a_fixture_replay_changed_is_required_as_its_final_scalar_values() -> None:
    changes = [
        {"path": "state.orders.o1.status", "before": "open", "after": "paused", "by": {"tool": "pause"}},
        {"path": "state.orders.o1.items", "before": [], "after": [1]},  # not a scalar
        {"path": "state.orders.o2", "removed": True, "before": {}},
        {"path": "state.orders.o3", "added": True, "after": 1},
        {"path": "state.orders.o1.tags[0]", "after": "a"},
        {"path": "log.x", "after": 1},
        {"path": 7, "after": 1},
        "state.bad",
        {"path": "state.orders.o1.note", "before": {"long": "x" * 60}, "after": None, "by": "pause"},
    ]
    d = _derive([], [], summary=_fixture(changes))
    assert d.contract["final_state"] == [
        {"id": "state-orders-o1-status", "path": "orders.o1.status", "equals": "paused"},
        {"id": "state-orders-o1-note", "path": "orders.o1.note", "equals": None},
    ]
    assert d.why["state-orders-o1-status"] == "the fixed run's pause set it (was open)"
    assert d.why["state-orders-o1-note"] == 'the fixed run\'s write set it (was {"long": "' + "x" * 29 + "…)"


def test_only_a_fixture_replays_changes_are_read() -> None:
    changes = [{"path": "state.a.b", "after": 1}]
    assert _derive([], [], summary=_fixture(changes, mode="strict")).contract["final_state"] == []
    assert _derive([], [], summary=_fixture({"path": "state.a.b"})).contract["final_state"] == []
    assert _derive([], [], summary=_fixture(changes)).contract["final_state"] == [
        {"id": "state-a-b", "path": "a.b", "equals": 1}]
    # a fixture replay by its header alone, with no summary: nothing to read, nothing raised
    assert _derive([], [], header={"record_mode": "fixture"}).contract["final_state"] == []


def test_at_most_eight_changes_are_kept_and_the_reviewer_is_told() -> None:
    changes = [{"path": f"state.s.k{i}", "after": i} for i in range(10)]
    d = _derive([], [], summary=_fixture(changes))
    assert [c["path"] for c in d.contract["final_state"]] == [f"s.k{i}" for i in range(8)]
    assert "final_state: only the first 8 changes kept" in d.notes
    d = _derive([], [], summary=_fixture(changes[:8]))
    assert len(d.contract["final_state"]) == 8 and not any(n.startswith("final_state") for n in d.notes)


def test_state_entries_no_write_touched_are_guarded_as_unchanged() -> None:
    state = {
        "orders": {"o1": {"status": "paused"}, "o2": {"status": "open"}, "o3": [1], "o4": 1, "a.b": 1, "X9": 0},
        "bad.top": {"x": 1},
        "flat": 3,
        "customers": {"c1": {}},
    }
    changes = [{"path": "state.orders.o1.status", "after": "paused"}, {"path": "state.orders.o3[0]", "after": 1},
               {"path": "state.orders.o4", "removed": True}]
    d = _derive([], [], summary=_fixture(changes, state))
    assert [(c["path"], c.get("unchanged")) for c in d.contract["final_state"]] == [
        ("orders.o1.status", None), ("orders.o2", True), ("orders.X9", True), ("customers.c1", True)]
    assert d.contract["final_state"][1] == {"id": "unchanged-orders-o2", "path": "orders.o2", "unchanged": True}
    assert d.why["unchanged-orders-o2"] == "the fixed run changed nothing there (collateral damage guard)"
    # a change to a longer key ("o10") does not touch "o1"
    d = _derive([], [], summary=_fixture([{"path": "state.orders.o10", "after": 1}], {"orders": {"o1": 1, "o10": 1}}))
    assert [c["path"] for c in d.contract["final_state"]] == ["orders.o10", "orders.o1"]


def test_at_most_eight_unchanged_guards_are_written_in_state_order_and_the_rest_counted() -> None:
    state = {"a": {f"k{i}": i for i in range(11)}}
    d = _derive([], [], summary=_fixture([], state))
    assert [c["path"] for c in d.contract["final_state"]] == [f"a.k{i}" for i in range(8)]
    assert d.notes[0] == ("final_state: 8 `unchanged` guards written (the first in state order); 3 other untouched "
                           "entries have none: add the ones that matter")
    d = _derive([], [], summary=_fixture([], {"a": {f"k{i}": i for i in range(8)}}))
    assert len(d.contract["final_state"]) == 8 and not any(n.startswith("final_state") for n in d.notes)


def test_a_final_state_that_is_not_an_object_gives_no_guards() -> None:
    assert _derive([], [], summary=_fixture([], ["a"])).contract["final_state"] == []


# --------------------------------------------------------------------------- the whole derivation
def test_the_failure_statement_puts_the_claim_first_and_the_name_follows_it() -> None:
    d = _derive([("get_order", {"id": "x1"}, {"status": "error"}), ("refund", {"id": 1}, {"status": "error"})],
                [("get_order", {"id": "X-1"}), ("refund", {"id": 2}, {"output": {"status": "ok"}})],
                answer="Refunded, thanks.")
    assert d.failure.split("; ") == [
        'the agent claimed success ("Refunded, thanks.") without a successful refund output',
        'the agent called refund with {"id": 1}',
        'the agent called get_order with {"id": "x1"}, which failed (error)']
    assert d.name == "refund-claimed-without-receipt"
    assert len(set(d.why)) == sum(len(v) for v in d.contract.values() if isinstance(v, list))


def test_a_long_answer_is_quoted_by_its_first_sentence_cut_to_ninety_characters() -> None:
    answer = "  " + "word " * 30 + "end. Second sentence."
    d = _derive([], [("list_slots", {})], answer=answer)
    quoted = d.failure.split('"')[1]
    assert quoted == ("word " * 30)[:89] + "…"
    d = _derive([], [("list_slots", {})], answer="Ünïcode ok? Yes.")
    assert d.failure == 'the agent answered "Ünïcode ok?" without calling list_slots, which the fixed run did'
    d = _derive([], [("list_slots", {})], answer=None)
    assert d.failure == "the agent finished without calling list_slots, which the fixed run did"


# --------------------------------------------------------------------------- contract_text
def test_contract_text_puts_comments_and_one_why_line_per_clause_above_the_contract() -> None:
    d = _derive([], [("list_slots", {"date": "b"})])
    why = {**d.why, "extra": "two\n  lines   here"}
    text = contract_text(d.contract, why, comment="Promoted from a run.\n\n  \nReview by 2027.")
    assert text.splitlines()[:4] == ["# Promoted from a run.", "# Review by 2027.",
                                     "# must-call-list-slots: the fixed run called list_slots; the original never did",
                                     "# extra: two lines here"]
    body = "\n".join(text.splitlines()[4:])
    assert body.startswith("schema: tracetui-contract/1\n")
    assert "forbid_call" not in body and "must_call:" in body  # empty sections left out
    assert contract_text(d.contract) == body + "\n"


def test_contract_text_refuses_an_invalid_contract_naming_the_file_and_field() -> None:
    with pytest.raises(GoldenCaseError) as exc:
        contract_text({"schema": "tracetui-contract/1", "must_call": [{"id": "a"}]})
    assert exc.value.path == "contract.yaml"
    assert str(exc.value) == "contract.yaml: must_call[0].tool: missing"


def test_contract_text_keeps_the_arguments_in_the_order_given() -> None:
    text = contract_text({"schema": "tracetui-contract/1",
                          "must_call": [{"id": "a", "tool": "t", "args": {"when": "Zürich 9h", "amount": 5}}]})
    assert "args: {when: Zürich 9h, amount: 5}" in text


# --------------------------------------------------------------------------- every divergence is read
def test_every_call_only_the_fixed_run_made_is_read_past_the_ones_that_make_no_clause() -> None:
    """A changed call, a repeat of an original call and a repeat of a new call make no must_call; the calls after
    them still do."""
    d = _derive([("get_order", {"id": "x1"}), ("get_order", {"id": 1})],
                [("get_order", {"id": "X-1"}), ("get_order", {"id": 1}), ("get_order", {"id": 1}),
                 ("list_slots", {"d": 1}), ("list_slots", {"d": 1}), ("find_customer", {"e": 2})])
    assert [(c["tool"], c.get("args")) for c in d.contract["must_call"]] == [("list_slots", None),
                                                                          ("find_customer", None)]


def test_every_failed_call_the_fix_changed_is_read_past_the_ones_that_make_no_clause() -> None:
    """A new call, a changed call that did not fail, one that differs only in a volatile argument, and one the
    last-write rule already forbids make no new clause; the failed calls after them still do."""
    d = _derive([("list_slots", {"d": 0}), ("refund", {"id": "x1"}, {"status": "error"}), ("get_order", {"id": "a"}),
                 ("get_order", {"id": "b", "request_id": "1"}, {"status": "error"}),
                 ("find_customer", {"id": "x1"}, {"status": "error"})],
                [("list_slots", {"d": 0}), ("list_slots", {"d": 1}), ("refund", {"id": "X-1"}),
                 ("get_order", {"id": "A"}),
                 ("get_order", {"id": "b", "request_id": "2"}),
                 ("find_customer", {"id": "X-1"})])
    assert [(c["tool"], c.get("args")) for c in d.contract["forbid_call"]] == [("refund", {"id": "x1"}),
                                                                            ("find_customer", {"id": "x1"})]


def test_a_failed_retrieval_the_fix_changed_is_not_a_forbidden_call() -> None:
    """forbid_call names tool calls only, even when a retrieval span carries ``arguments`` like a tool's."""
    b = TraceBuilder("o")
    b.add("retrieval", "docs", b.add("agent", "agent"), query="a", arguments={"q": "a"}, output=[1], status="error")
    original = b.trace()
    b = TraceBuilder("r")
    b.add("retrieval", "docs", b.add("agent", "agent"), query="b", arguments={"q": "b"}, output=[1])
    d = derive_contract(original, b.trace())
    assert d.contract["forbid_call"] == []


def test_clauses_name_the_tool_called_not_the_spans_display_name() -> None:
    d = _derive([("execute_tool", {"id": "x1"}, {"tool_name": "get_order", "status": "error"}),
                 ("execute_tool", {"id": 1}, {"tool_name": "refund"})],
                [("execute_tool", {"id": "X-1"}, {"tool_name": "get_order"}),
                 ("execute_tool", {"id": 1}, {"tool_name": "refund"}),
                 ("execute_tool", {"day": 2}, {"tool_name": "list_slots"})])
    assert [c["tool"] for c in d.contract["must_call"]] == ["list_slots"]
    assert [c["tool"] for c in d.contract["forbid_call"]] == ["get_order"]
    assert [c["tool"] for c in d.contract["max_calls"]] == ["refund"]
    assert [(c["before"], c["after"]) for c in d.contract["order"]] == [("get_order", "refund")]
    d = _derive([("execute_tool", {"id": 1}, {"tool_name": "refund"})], [])
    assert d.contract["forbid_call"] == [{"id": "no-refund-1", "tool": "refund", "args": {"id": 1}}]


def test_a_forbidden_calls_id_and_the_case_name_hold_its_scalar_values_only() -> None:
    d = _derive([("cancel", {"items": [1, 2], "meta": {"k": 5}, "id": 3})], [])
    assert d.contract["forbid_call"][0]["id"] == "no-cancel-3"
    assert d.name == "wrong-cancel-3"


def test_a_clause_id_is_at_most_64_characters_cut_at_a_dash() -> None:
    d = _derive([("list_slots", {"d": 0})], [("list_slots", {"d": 0}), ("list_slots", {"d": "a" * 43}),
                                           ("list_slots", {"d": "b" * 44})])
    assert _ids(d.contract["must_call"]) == ["must-call-list-slots-" + "a" * 43, "must-call-list-slots"]


# --------------------------------------------------------------------------- values in the why lines
def test_a_value_in_a_why_line_is_whole_up_to_its_limit_else_cut_with_an_ellipsis() -> None:
    """80 characters for arguments, 40 for a state's old value; JSON with its keys sorted and its text unescaped;
    a string as itself; a value JSON cannot hold by its text."""
    calls = [("list_slots", {"date": 0}), ("find_customer", {"date": 0})]
    d = _derive(calls, [*calls, ("list_slots", {"date": "x" * 68}), ("find_customer", {"date": "y" * 69})])
    assert d.why["must-call-list-slots"] == (
        'the fixed run called list_slots with {"date": "' + "x" * 68 + '"}; the original never did')
    (cid,) = [c["id"] for c in d.contract["must_call"] if c["tool"] == "find_customer"]
    assert d.why[cid] == 'the fixed run called find_customer with {"date": "' + "y" * 69 + '…; the original never did'
    import datetime as dt

    befores = ["s" * 40, "s" * 41, {"b": 1, "a": "Zürich"}, dt.date(2026, 11, 29)]
    changes = [{"path": f"state.k.v{i}", "before": v, "after": 1} for i, v in enumerate(befores)]
    d = _derive([], [], summary=_fixture(changes))
    assert [d.why[c["id"]] for c in d.contract["final_state"]] == [
        "the fixed run's write set it (was " + "s" * 40 + ")",
        "the fixed run's write set it (was " + "s" * 39 + "…)",
        'the fixed run\'s write set it (was {"a": "Zürich", "b": 1})',
        'the fixed run\'s write set it (was "2026-11-29")']


def test_the_claimed_write_is_the_one_whose_name_words_begin_like_the_claim() -> None:
    """Each word of three letters or more in the tool's name counts by its first four letters: "create_booking"
    backs "booked", "update_res" backs "rescheduled"; no match: the first write."""
    d = _derive([], [("notify_guest", {"id": 1}), ("create_booking", {"id": 1})], answer="Your table is booked.")
    assert d.contract["success_requires"][0]["tool"] == "create_booking"
    d = _derive([], [("notify_guest", {"id": 1}), ("update_res", {"id": 1})], answer="Rescheduled for Friday.")
    assert d.contract["success_requires"][0]["tool"] == "update_res"
    d = _derive([], [("execute_tool", {"id": 1}, {"tool_name": "refund"})], answer="Refunded.")
    assert d.contract["success_requires"][0]["tool"] == "refund"  # the tool called, not the span's name


def test_a_claim_without_any_write_comes_first_before_a_failed_call() -> None:
    d = _derive([("get_order", {"id": "x1"}, {"status": "error"})], [("get_order", {"id": "X-1"})], answer="Done.")
    assert d.failure == ('the agent claimed success ("Done.") without any write; '
                         'the agent called get_order with {"id": "x1"}, which failed (error)')
    assert d.name == "success-claimed-without-write"
