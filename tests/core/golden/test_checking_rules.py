"""The contract checker's rules one by one (golden.checking), on runs built span by span in the test: which span
violates, in which trial, in which words; what the final answer and the run's output are; what the tallies and
notes say (docs/golden.md "Contract", "Layers", "Trials").

Written from the rules, to pin what the mutation run of ``checking.py`` found unpinned
(tests/mutation_equivalents.md, "core/golden/checking.py").
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from builders import TraceBuilder, make_span

from tracetui.core.golden.contract import (
    STRUCTURAL_SECRET,
    STRUCTURAL_TOOL,
    ClauseResult,
    Contract,
    FinalState,
    ForbidCall,
    MustCall,
    Order,
    SuccessRequires,
    Trials,
    check,
    final_answer,
    final_state_of,
    loads_contract,
    subset_match,
)
from tracetui.core.model import Trace

API_KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"


def _run(*steps: tuple[str, str, dict[str, Any]], root: dict[str, Any] | None = None) -> Trace:
    """A run: a root agent span (``root``: its fields), then each (kind, name, fields) under it, in order."""
    t = TraceBuilder()
    top = t.add("agent", "agent", **(root or {}))
    for kind, name, fields in steps:
        t.add(kind, name, parent=top, **fields)
    return t.trace()


def _tool(name: str, arguments: Any = None, output: Any = None, **fields: Any) -> tuple[str, str, dict[str, Any]]:
    return ("tool", name, {"arguments": {} if arguments is None else arguments, "output": output, **fields})


def _llm(output: Any) -> tuple[str, str, dict[str, Any]]:
    return ("llm", "llm", {"output": output})


def _violations(contract: Contract, *runs: Trace, **kw: Any) -> list[tuple[str, str | None, int, str]]:
    return [(v.clause_id, v.span_id, v.trial, v.message) for v in check(contract, list(runs), **kw).violations]


# --------------------------------------------------------------------------- matching
def test_lists_match_item_by_item_each_item_a_subset_in_the_same_order() -> None:
    assert subset_match([{"id": 1}], [{"id": 1, "extra": 2}])
    assert subset_match({"slots": ["a", "b"]}, {"slots": ["a", "b"], "day": "fri"})
    assert not subset_match(["a", "b"], ["b", "a"])
    assert not subset_match([1, 2], [1, 3])
    assert not subset_match([{"id": 1}], [{"id": 2}])


# --------------------------------------------------------------------------- the final answer
def test_the_final_answer_is_the_roots_output_strings_joined_by_newlines() -> None:
    run = _run(root={"output": {"answer": "Moved", "notes": ["to Friday", {"n": 1, "at": "15:30"}]}})
    assert final_answer(run) == ("Moved\nto Friday\n15:30", run.spans[0])


def test_without_a_root_output_the_final_answer_is_the_last_llm_answer_with_text() -> None:
    run = _run(_llm({"content": "Moved to Friday"}), _tool("reschedule"), _llm("Done, as a plain string"),
               _llm({"content": ""}), _llm({"content": [{"type": "text", "text": "parts"}]}), _llm(None))
    assert final_answer(run) == ("Done, as a plain string", run.spans[3])
    first = _run(_llm({"content": "Moved to Friday"}), _llm({"content": ""}))
    assert final_answer(first) == ("Moved to Friday", first.spans[1])
    # a failed root's output is not an answer
    failed = _run(_llm({"content": "Sorry"}), root={"output": {"answer": "partial"}, "status": "error"})
    assert final_answer(failed) == ("Sorry", failed.spans[1])
    assert final_answer(_run(_tool("t"))) == (None, None)
    assert final_answer(Trace(spans=[], format="test")) == (None, None)


def test_the_root_is_the_span_without_a_parent_else_the_first_span() -> None:
    spans = [make_span("tool", "list", span_id="a", parent_id="gone", seq=0, arguments={}),
             make_span("agent", "agent", span_id="b", parent_id="gone", seq=1)]
    fragment = Trace(spans=spans, format="test")
    c = Contract(must_call=[MustCall("m", "send")])
    assert [v[1] for v in _violations(c, fragment)] == ["a"]
    assert [v[1] for v in _violations(c, Trace(spans=[*spans, make_span("agent", "root", span_id="r", seq=2)],
                                                   format="test"))] == ["r"]


def test_a_run_without_spans_violates_at_no_span() -> None:
    empty = Trace(spans=[], format="test")
    c = Contract(must_call=[MustCall("m", "send")], final_state=[FinalState("o", "output.status", "ok")])
    assert _violations(c, empty) == [("m", None, 1, "required call send never made"),
                                     ("o", None, 1, "the run's output.status is absent, expected \"ok\"")]


# --------------------------------------------------------------------------- trajectory: the words and the span
def test_a_missing_call_says_how_many_calls_of_the_tool_had_other_arguments() -> None:
    run = _run(_tool("list_open_slots", {"date": "2026-11-05"}), _tool("list_open_slots", {"date": "2026-11-04"}),
               _tool("get_appointment", {"id": 1}))
    c = Contract(must_call=[MustCall("fri", "list_open_slots", {"date": "2026-11-06"}), MustCall("conf", "send"),
                            MustCall("get", "get_appointment", {"id": 2})])
    root = run.spans[0].span_id
    assert _violations(c, run) == [
        ("fri", root, 1, 'required call list_open_slots with {"date": "2026-11-06"} never made '
                         "(2 call(s) of list_open_slots with other arguments)"),
        ("conf", root, 1, "required call send never made"),
        ("get", root, 1, 'required call get_appointment with {"id": 2} never made '
                         "(1 call(s) of get_appointment with other arguments)"),
    ]


def test_a_forbidden_call_quotes_its_arguments_keys_sorted_text_as_written() -> None:
    run = _run(_tool("reschedule", '{"note": "café", "date": "2026-11-05"}'))
    c = Contract(forbid_call=[ForbidCall("no-thu", "reschedule", {"date": "2026-11-05"})])
    assert _violations(c, run) == [
        ("no-thu", run.spans[1].span_id, 1, 'forbidden call reschedule {"date": "2026-11-05", "note": "café"}')]


@pytest.mark.parametrize(("n", "quoted"), [
    (111, '{"q": "' + "x" * 111 + '"}'),  # 120 characters: kept whole
    (112, '{"q": "' + "x" * 110 + "..."),  # 121: cut to 117 and an ellipsis
])
def test_a_quoted_value_is_cut_past_120_characters(n: int, quoted: str) -> None:
    run = _run(_tool("search", {"q": "x" * n}))
    [(_, _, _, message)] = _violations(Contract(forbid_call=[ForbidCall("f", "search")]), run)
    assert message == f"forbidden call search {quoted}"


def test_order_holds_when_only_one_of_the_tools_is_called_and_names_both_when_broken() -> None:
    c = Contract(order=[Order("read-first", "list_open_slots", "reschedule")])
    assert _violations(c, _run(_tool("reschedule"))) == []
    assert _violations(c, _run(_tool("list_open_slots"))) == []
    run = _run(_tool("reschedule"), _tool("list_open_slots"), _tool("reschedule"))
    assert _violations(c, run) == [("read-first", run.spans[1].span_id, 1, "reschedule called before any list_open_slots")]


def test_a_success_claim_needs_a_successful_call_before_the_answer_that_claims_it() -> None:
    receipt = {"status": "rescheduled"}
    c = Contract(success_requires=[SuccessRequires("moved", "(?i)moved", "reschedule", receipt),
                                   SuccessRequires("any", "(?i)moved", "reschedule")])
    # the claim is an llm answer: a call after it is no evidence for it
    late = _run(_llm({"content": "Moved to Friday"}), _tool("reschedule", output=receipt))
    claim = late.spans[1].span_id
    assert _violations(c, late) == [
        ("moved", claim, 1, "the final answer claims success (/(?i)moved/) without a successful reschedule with output "
                            '{"status": "rescheduled"} before it'),
        ("any", claim, 1, "the final answer claims success (/(?i)moved/) without a successful reschedule before it"),
    ]
    # the claim is the root's output: every call of the run came before it, the last one too
    assert _violations(c, _run(_tool("reschedule", output=receipt), root={"output": "Moved to Friday"})) == []
    # a failed call is no evidence
    failed = _run(_tool("reschedule", output=receipt, status="error"), root={"output": "Moved to Friday"})
    assert [v[0] for v in _violations(c, failed)] == ["moved", "any"]


def test_a_claim_is_searched_in_the_answers_strings_joined_by_newlines() -> None:
    run = _run(root={"output": {"lines": ["Moved", "to Friday"]}})
    c = Contract(success_requires=[SuccessRequires("r", r"Moved\nto Friday", "reschedule")])
    assert [v[0] for v in _violations(c, run)] == ["r"]


# --------------------------------------------------------------------------- state: the fixture's and the run's output
def test_an_output_path_reads_the_runs_own_output_without_a_fixture_state() -> None:
    run = _run(root={"output": {"status": "rescheduled", "refund": {"id": "R1"}}})
    root = run.spans[0].span_id
    c = Contract(final_state=[FinalState("st", "output.status", "rescheduled"), FinalState("rf", "output.refund.id", "R2"),
                              FinalState("gone", "output.receipt", "x")])
    result = check(c, [run])
    assert [(v.clause_id, v.span_id, v.message) for v in result.violations] == [
        ("rf", root, 'the run\'s output.refund.id is "R1", expected "R2"'),
        ("gone", root, 'the run\'s output.receipt is absent, expected "x"'),
    ]
    assert result.notes == []
    # no output at all is absent, not null
    assert _violations(Contract(final_state=[FinalState("o", "output", None)]), _run()) == [
        ("o", run.spans[0].span_id, 1, "the run's output is absent, expected null")]
    assert _violations(Contract(final_state=[FinalState("o", "output", None)]), _run(root={"output": None})) == []


def test_an_output_path_reads_the_fixture_state_when_it_has_an_output_key() -> None:
    run = _run(root={"output": {"status": "rescheduled"}})
    c = Contract(final_state=[FinalState("st", "output.status", "rescheduled")])
    assert check(c, [run], final_states=[{"other": 1}]).passed
    assert _violations(c, run, final_states=[{"output": {"status": "pending"}}]) == [
        ("st", run.spans[0].span_id, 1, 'final state output.status is "pending", expected "rescheduled"')]


def test_a_list_index_past_the_end_or_a_key_into_a_list_is_absent() -> None:
    state = {"confirmations": [{"channel": "sms"}], "count": 3}
    run = _run()
    c = Contract(final_state=[FinalState("one", "confirmations[0].channel", "sms"),
                              FinalState("two", "confirmations[1].channel", "sms"),
                              FinalState("key", "confirmations.first", "sms"),
                              FinalState("deep", "count.n", 3)])
    assert [(v[0], v[3]) for v in _violations(c, run, final_states=[state])] == [
        ("two", 'final state confirmations[1].channel is absent, expected "sms"'),
        ("key", 'final state confirmations.first is absent, expected "sms"'),
        ("deep", "final state count.n is absent, expected 3"),
    ]


def test_a_final_state_value_json_cannot_write_is_quoted_as_text() -> None:
    at = datetime.datetime(2026, 11, 6, 15, 30)
    c = Contract(final_state=[FinalState("at", "booked.at", "2026-11-06T15:30")])
    assert [v[3] for v in _violations(c, _run(), final_states=[{"booked": {"at": at}}])] == [
        'final state booked.at is "2026-11-06 15:30:00", expected "2026-11-06T15:30"']


def _changed(*changes: Any) -> Trace:
    return _run(_tool("reschedule"), root={"attributes": {"replay.summary": {"changes": list(changes)}}})


def test_unchanged_is_broken_by_a_change_at_or_under_its_path_on_a_step_boundary() -> None:
    c = loads_contract("schema: tracetui-contract/1\nfinal_state:\n"
                       "  - {id: first-slot, path: 'slots[0]', unchanged: true}\n"
                       "  - {id: all-slots, path: slots, unchanged: true}\n")
    by = {"tool": "reschedule", "span_id": "s1"}
    run = _changed({"path": "state.slots[0].at", "before": "a", "after": "b", "by": by},
                   {"path": "state.slots[2]", "before": None, "after": 1, "added": True, "by": by},
                   {"path": "state.slotsX", "before": 1, "after": 2, "by": by})
    assert _violations(c, run) == [
        ("first-slot", "s1", 1, 'slots[0].at changed by reschedule ("a" -> "b"); it must stay unchanged'),
        ("all-slots", "s1", 1, 'slots[0].at changed by reschedule ("a" -> "b"); it must stay unchanged'),
        ("all-slots", "s1", 1, "slots[2] changed by reschedule (null -> 1); it must stay unchanged"),
    ]
    assert _violations(c, _changed({"path": "state.slots[1]", "before": 1, "after": 2, "by": by})) == [
        ("all-slots", "s1", 1, "slots[1] changed by reschedule (1 -> 2); it must stay unchanged")]


def test_a_change_without_its_write_is_by_a_write_at_the_root() -> None:
    c = Contract(final_state=[FinalState("keep", "slots", unchanged=True, has_equals=False)])
    run = _changed({"path": "state.slots.fri", "before": 1, "after": 0, "by": "garbled"},
                   {"path": "state.slots.thu", "before": 1, "after": 0})
    root = run.spans[0].span_id
    assert _violations(c, run) == [("keep", root, 1, "slots.fri changed by a write (1 -> 0); it must stay unchanged"),
                                   ("keep", root, 1, "slots.thu changed by a write (1 -> 0); it must stay unchanged")]


def test_a_summary_that_is_not_an_object_is_no_fixture_state() -> None:
    run = _run(root={"attributes": {"replay.summary": "garbled"}})
    assert final_state_of(run) is None
    c = Contract(final_state=[FinalState("keep", "slots", unchanged=True, has_equals=False)])
    result = check(c, [run])
    assert result.passed and result.notes == [
        "keep: not checked in 1 of 1 trial(s): the run has no fixture state (run the case in fixture mode)"]


# --------------------------------------------------------------------------- structural
def test_structural_violations_name_the_span_and_the_trial() -> None:
    bad = _run(_tool("list", ["2026-11-05"]), ("tool", "nameless", {"tool_name": " ", "arguments": {}}))
    result = check(Contract(), [_run(), bad])
    assert [(v.clause_id, v.span_id, v.trial, v.message) for v in result.violations] == [
        (STRUCTURAL_TOOL, bad.spans[1].span_id, 2, "call of list has arguments that are a list, not an object"),
        (STRUCTURAL_TOOL, bad.spans[2].span_id, 2, "tool span 'nameless' has no tool name"),
    ]


def test_a_secret_in_a_tool_output_or_the_final_answer_is_named_by_the_tool_or_the_span() -> None:
    run = _run(_tool("noop"), ("tool", "call get_appointment", {"tool_name": "get_appointment", "arguments": {},
                                                                 "output": {"note": f"key {API_KEY}"}}),
               root={"output": f"here is {API_KEY}"})
    assert _violations(Contract(), _run(), run) == [
        (STRUCTURAL_SECRET, run.spans[2].span_id, 2, "the output of get_appointment holds a secret-like value "
                                                     "(api_key); it must be redacted before it is written"),
        (STRUCTURAL_SECRET, run.spans[0].span_id, 2, "the output of agent holds a secret-like value (api_key); it "
                                                     "must be redacted before it is written"),
    ]
    # every rule that fired is named, in the order the rules are listed
    two = _run(_tool("get", output={"a": "Bearer " + "abc123def456ghi789jkl0mnop", "b": f"key {API_KEY}"}))
    assert [v[3] for v in _violations(Contract(), two)] == [
        "the output of get holds a secret-like value (api_key, bearer); it must be redacted before it is written"]
    # the llm answer holding the final answer is checked too
    llm = _run(_llm({"content": f"use {API_KEY}"}))
    assert [v[:2] for v in _violations(Contract(), llm)] == [(STRUCTURAL_SECRET, llm.spans[1].span_id)]


def test_personal_data_is_not_a_secret_like_value() -> None:
    run = _run(_tool("get_patient", output={"email": "ana.silva@example.org", "phone": "+1 415 555 0134",
                                             "ip": "203.0.113.7"}))
    assert check(Contract(), [run]).passed


# --------------------------------------------------------------------------- trials, tallies, notes
def test_each_trial_is_checked_against_its_own_final_state() -> None:
    c = Contract(final_state=[FinalState("fri", "date", "fri")], trials=Trials(2, "all", 2))
    result = check(c, [_run(), _run()], final_states=[{"date": "fri"}, {"date": "thu"}])
    assert [(v.clause_id, v.trial) for v in result.violations] == [("fri", 2)]


def test_structural_checks_hold_in_every_trial_whatever_the_soft_threshold() -> None:
    bad = _run(_tool("list", ["x"]))
    result = check(Contract(trials=Trials(3, "all", 1)), [_run(), bad, _run()])
    assert not result.passed
    assert [c for c in result.clauses if c.clause_id == STRUCTURAL_TOOL] == [
        ClauseResult(STRUCTURAL_TOOL, "structural", True, 2, 3, 3)]


def test_the_tallies_list_every_clause_checked_or_not_in_layer_order() -> None:
    c = Contract(must_call=[MustCall("m", "list")], final_state=[FinalState("f", "a", 1)],
                 success_requires=[SuccessRequires("s", "moved", "reschedule")], trials=Trials(2, "all", 1))
    runs = [_run(_tool("list")), _run()]
    result = check(c, runs)
    assert result.clauses == [
        ClauseResult(STRUCTURAL_TOOL, "structural", True, 2, 2, 2),
        ClauseResult(STRUCTURAL_SECRET, "structural", True, 2, 2, 2),
        ClauseResult("m", "trajectory", False, 1, 2, 1),
        ClauseResult("f", "state", False, 0, 0, 1, checked=False),
        ClauseResult("s", "outcome", True, 2, 2, 2),
    ]
    assert result.passed and result.trials == 2 and result.violations == []
    assert result.notes == ["f: not checked in 2 of 2 trial(s): the run has no fixture state (run the case in "
                            "fixture mode)"]
    # one trial with a state, one without: checked in the one, noted for the other
    half = check(c, runs, final_states=[{"a": 1}, None])
    assert [x for x in half.clauses if x.clause_id == "f"] == [ClauseResult("f", "state", False, 1, 1, 1)]
    assert half.notes == ["f: not checked in 1 of 2 trial(s): the run has no fixture state (run the case in "
                          "fixture mode)"]


def test_the_result_as_json() -> None:
    run = _run(_tool("reschedule", {"date": "thu"}))
    c = Contract(forbid_call=[ForbidCall("no-thu", "reschedule", {"date": "thu"})], final_state=[FinalState("f", "a", 1)])
    assert check(c, [run]).to_dict() == {
        "passed": False, "trials": 1,
        "violations": [{"clause_id": "no-thu", "layer": "trajectory", "message": 'forbidden call reschedule {"date": "thu"}',
                        "span_id": run.spans[1].span_id, "trial": 1}],
        "clauses": [
            {"clause_id": STRUCTURAL_TOOL, "layer": "structural", "safety": True, "held": 1, "of": 1, "needed": 1,
             "checked": True, "passed": True},
            {"clause_id": STRUCTURAL_SECRET, "layer": "structural", "safety": True, "held": 1, "of": 1, "needed": 1,
             "checked": True, "passed": True},
            {"clause_id": "no-thu", "layer": "trajectory", "safety": True, "held": 0, "of": 1, "needed": 1,
             "checked": True, "passed": False},
            {"clause_id": "f", "layer": "state", "safety": False, "held": 0, "of": 0, "needed": 1,
             "checked": False, "passed": True},
        ],
        "notes": ["f: not checked in 1 of 1 trial(s): the run has no fixture state (run the case in fixture mode)"],
    }


def test_check_refuses_no_runs_and_a_final_state_count_that_differs() -> None:
    with pytest.raises(ValueError) as exc:
        check(Contract(), [])
    assert str(exc.value) == "check() needs at least one run"
    with pytest.raises(ValueError) as exc:
        check(Contract(), [_run(), _run()], final_states=[{}])
    assert str(exc.value) == "final_states has 1 entries for 2 runs"
