"""Golden-case contracts: loading (every bad field named), dumping, and checking runs layer by layer."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from tracetui.core.golden.contract import (
    STRUCTURAL_SECRET,
    STRUCTURAL_TOOL,
    Contract,
    FinalState,
    GoldenCaseError,
    MustCall,
    Trials,
    check,
    dump_contract,
    load_contract,
    loads_contract,
    subset_match,
)
from tracetui.core.model import Trace
from tracetui.core.readers import read_trace

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_runs" / "scheduling"

FULL = textwrap.dedent("""\
    schema: tracetui-contract/1
    must_call:
      - {id: must-check-friday, tool: list_open_slots, args: {date: "2026-11-06"}}
    forbid_call:
      - {id: no-thursday-booking, tool: reschedule_appointment, args: {date: "2026-11-05"}}
    max_calls:
      - {id: one-reschedule, tool: reschedule_appointment, max: 1}
    order:
      - {id: read-before-write, before: list_open_slots, after: reschedule_appointment}
    success_requires:
      - {id: receipt-before-claim, claim: "(?i)\\\\bmoved\\\\b", tool: reschedule_appointment, output: {status: rescheduled}}
    final_state:
      - {id: booked-friday, path: appointments.APT-77120.date, equals: "2026-11-06"}
      - {id: thursday-untouched, path: "slots.2026-11-05", unchanged: true}
    trials: {count: 1, safety: all, soft: {at_least: 1}}
    """)


@pytest.fixture(scope="module")
def original() -> Trace:
    return read_trace(SAMPLE / "original.jsonl")


@pytest.fixture(scope="module")
def fixture_run() -> Trace:
    return read_trace(SAMPLE / "fixture.jsonl")


@pytest.fixture(scope="module")
def strict_replay() -> Trace:
    return read_trace(SAMPLE / "replay.jsonl")


def _contract(body: str) -> Contract:
    return loads_contract("schema: tracetui-contract/1\n" + textwrap.dedent(body))


def _ids(result) -> list[str]:
    return [v.clause_id for v in result.violations]


# --------------------------------------------------------------------------- loading
def test_full_contract_loads_every_section_and_round_trips() -> None:
    c = loads_contract(FULL)
    assert [x.id for x in c.clauses()] == ["must-check-friday", "no-thursday-booking", "one-reschedule",
                                           "read-before-write", "receipt-before-claim", "booked-friday",
                                           "thursday-untouched"]
    assert c.must_call[0] == MustCall("must-check-friday", "list_open_slots", {"date": "2026-11-06"})
    assert c.final_state[1] == FinalState("thursday-untouched", "slots.2026-11-05", None, True, False)
    assert c.trials == Trials(1, "all", 1)
    text = dump_contract(c)
    assert text.index("must_call") < text.index("forbid_call") < text.index("trials")
    assert loads_contract(text) == c
    assert dump_contract(loads_contract(text)) == text


def test_load_contract_names_file_and_field_path(tmp_path: Path) -> None:
    p = tmp_path / "contract.yaml"
    p.write_text("schema: tracetui-contract/1\nmust_call:\n  - {id: a, tool: x}\n  - {id: b}\n")
    with pytest.raises(GoldenCaseError) as exc:
        load_contract(p)
    assert str(exc.value) == f"{p}: must_call[1].tool: missing"
    assert exc.value.where == "must_call[1].tool"


@pytest.mark.parametrize(("body", "where", "words"), [
    ("bogus: []\n", "bogus", "valid sections: schema, must_call, forbid_call, max_calls, order, success_requires"),
    ("max_calls:\n  - {id: a, tool: t, max: -1}\n", "max_calls[0].max", "integer >= 0"),
    ("max_calls:\n  - {id: a, tool: t}\n", "max_calls[0].max", "missing"),
    ("must_call:\n  - {id: a, tool: t, argz: {}}\n", "must_call[0]", "unknown field 'argz'"),
    ("must_call:\n  - {id: a, tool: t, args: [1]}\n", "must_call[0].args", "mapping"),
    ("must_call: {id: a}\n", "must_call", "list of clauses"),
    ("must_call:\n  - {id: a, tool: t}\nforbid_call:\n  - {id: a, tool: u}\n", "forbid_call[0].id", "duplicate id 'a'"),
    ("success_requires:\n  - {id: a, claim: '(', tool: t}\n", "success_requires[0].claim", "regular expression"),
    ("final_state:\n  - {id: a, path: x.y}\n", "final_state[0]", "exactly one of"),
    ("final_state:\n  - {id: a, path: x, equals: 1, unchanged: true}\n", "final_state[0]", "exactly one of"),
    ("final_state:\n  - {id: a, path: 'x[a]', equals: 1}\n", "final_state[0].path", "not a state path"),
    ("order:\n  - {id: a, before: t, after: t}\n", "order[0].after", "same tool"),
    ("trials: {count: 2, soft: {at_least: 3}}\n", "trials.soft.at_least", "more than trials.count"),
    ("trials: {count: 2, safety: 1}\n", "trials.safety", "must be `all`"),
    ("must_call:\n  - {id: structural.x, tool: t}\n", "must_call[0].id", "reserved"),
])
def test_bad_fields_are_typed_errors(body: str, where: str, words: str) -> None:
    with pytest.raises(GoldenCaseError) as exc:
        loads_contract("schema: tracetui-contract/1\n" + body, "golden/x/contract.yaml")
    assert exc.value.where == where
    assert words in str(exc.value)
    assert str(exc.value).startswith("golden/x/contract.yaml: ")


@pytest.mark.parametrize(("text", "words"), [
    ("must_call: []\n", "schema: missing; add `schema: tracetui-contract/1`"),
    ("schema: tracetui-contract/9\n", "must be 'tracetui-contract/1'"),
    ("- a\n- b\n", "must be a YAML mapping"),
    ("schema: [\n", "not valid YAML (line"),
])
def test_bad_documents_are_typed_errors(text: str, words: str) -> None:
    with pytest.raises(GoldenCaseError, match="contract.yaml") as exc:
        loads_contract(text)
    assert words in str(exc.value)


def test_unreadable_file_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(GoldenCaseError, match="cannot be read"):
        load_contract(tmp_path / "missing.yaml")


def test_subset_match_is_canonical() -> None:
    assert subset_match({"date": "2026-11-06"}, '{"date": "2026-11-06", "region": "x"}')
    assert subset_match({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert not subset_match({"a": [1]}, {"a": [1, 2]})
    assert not subset_match({"a": True}, {"a": 1})
    assert not subset_match({"a": 1}, {"b": 1})


# --------------------------------------------------------------------------- checking
def test_incident_run_violates_must_call_at_the_root(original: Trace) -> None:
    result = check(loads_contract(FULL), [original])
    assert not result.passed
    assert _ids(result) == ["must-check-friday"]
    v = result.violations[0]
    assert (v.layer, v.trial, v.span_id) == ("trajectory", 1, original.spans[0].span_id)
    assert "list_open_slots" in v.message and "2026-11-06" in v.message
    # no fixture state in a recording: state clauses are not checked, and say so
    assert any("booked-friday: not checked" in n for n in result.notes)


def test_fixed_run_in_fixture_mode_passes_every_layer(fixture_run: Trace) -> None:
    result = check(loads_contract(FULL), [fixture_run])
    assert result.passed, result.violations
    assert {c.clause_id for c in result.clauses} >= {STRUCTURAL_TOOL, STRUCTURAL_SECRET, "booked-friday"}
    assert all(c.checked for c in result.clauses)


def test_forbidden_call_is_reported_at_its_span(fixture_run: Trace) -> None:
    c = _contract("""\
        forbid_call:
          - {id: no-friday, tool: reschedule_appointment, args: {date: "2026-11-06"}}
          - {id: no-cancel, tool: cancel_appointment}
        """)
    result = check(c, [fixture_run])
    write = next(s for s in fixture_run.spans if s.tool_name == "reschedule_appointment")
    assert [(v.clause_id, v.span_id) for v in result.violations] == [("no-friday", write.span_id)]


def test_max_calls_points_at_the_first_call_over_the_limit(fixture_run: Trace) -> None:
    result = check(_contract("max_calls:\n  - {id: one-list, tool: list_open_slots, max: 1}\n"), [fixture_run])
    lists = [s for s in fixture_run.spans if s.tool_name == "list_open_slots"]
    assert [(v.clause_id, v.span_id) for v in result.violations] == [("one-list", lists[1].span_id)]
    assert "2 times, at most 1" in result.violations[0].message


def test_order_applies_only_when_both_calls_happen(fixture_run: Trace, original: Trace) -> None:
    c = _contract("order:\n  - {id: confirm-first, before: send_confirmation, after: reschedule_appointment}\n")
    result = check(c, [fixture_run])
    write = next(s for s in fixture_run.spans if s.tool_name == "reschedule_appointment")
    assert [(v.clause_id, v.span_id) for v in result.violations] == [("confirm-first", write.span_id)]
    assert check(c, [original]).passed  # neither call: the clause does not apply


def test_success_claim_needs_its_recorded_evidence(fixture_run: Trace, original: Trace) -> None:
    wrong = _contract("""\
        success_requires:
          - {id: receipt, claim: "(?i)moved", tool: reschedule_appointment, output: {status: rejected}}
        """)
    result = check(wrong, [fixture_run])
    assert [(v.clause_id, v.layer, v.span_id) for v in result.violations] == [
        ("receipt", "outcome", fixture_run.spans[0].span_id)]
    # the incident claims nothing: the clause holds
    assert check(wrong, [original]).passed
    apology = _contract("success_requires:\n  - {id: r, claim: '(?i)sorry', tool: reschedule_appointment}\n")
    assert _ids(check(apology, [original])) == ["r"]


def test_final_state_unchanged_reports_the_write_that_changed_it(fixture_run: Trace) -> None:
    c = _contract("""\
        final_state:
          - {id: friday-untouched, path: "slots.2026-11-06", unchanged: true}
          - {id: thursday-untouched, path: "slots.2026-11-05", unchanged: true}
          - {id: confirmation, path: "confirmations[0].channel", equals: sms}
          - {id: wrong-date, path: appointments.APT-77120.date, equals: "2026-11-05"}
        """)
    result = check(c, [fixture_run])
    write = next(s for s in fixture_run.spans if s.tool_name == "reschedule_appointment")
    assert [(v.clause_id, v.span_id) for v in result.violations] == [
        ("friday-untouched", write.span_id), ("wrong-date", fixture_run.spans[0].span_id)]
    assert '"2026-11-06", expected "2026-11-05"' in result.violations[1].message


def test_final_states_argument_overrides_the_summary(original: Trace) -> None:
    c = _contract("final_state:\n  - {id: s, path: a.b, equals: 1}\n")
    assert check(c, [original], final_states=[{"a": {"b": 1}}]).passed
    result = check(c, [original], final_states=[{"a": {}}])
    assert "is absent" in result.violations[0].message
    with pytest.raises(ValueError):
        check(c, [original], final_states=[])
    with pytest.raises(ValueError):
        check(c, [])


def test_soft_clauses_need_at_least_n_trials_safety_every_trial(fixture_run: Trace, original: Trace) -> None:
    soft = _contract("""\
        must_call:
          - {id: friday, tool: list_open_slots, args: {date: "2026-11-06"}}
        trials: {count: 3, soft: {at_least: 2}}
        """)
    runs = [fixture_run, original, fixture_run]
    result = check(soft, runs)
    assert result.passed and result.violations == []
    assert [(c.held, c.of, c.needed) for c in result.clauses if c.clause_id == "friday"] == [(2, 3, 2)]
    strict = dataclasses.replace(soft, trials=Trials(3, "all", 3))
    result = check(strict, runs)
    assert not result.passed
    assert [(v.clause_id, v.trial) for v in result.violations] == [("friday", 2)]
    safety = _contract("""\
        forbid_call:
          - {id: no-write, tool: reschedule_appointment}
        trials: {count: 3, soft: {at_least: 1}}
        """)
    result = check(safety, runs)
    assert [(v.clause_id, v.trial) for v in result.violations] == [("no-write", 1), ("no-write", 3)]


def test_soft_threshold_scales_with_another_number_of_trials(original: Trace) -> None:
    c = _contract("""\
        must_call:
          - {id: friday, tool: list_open_slots, args: {date: "2026-11-06"}}
        trials: {count: 5, soft: {at_least: 4}}
        """)
    result = check(c, [original])
    assert [(x.held, x.of, x.needed) for x in result.clauses if x.clause_id == "friday"] == [(0, 1, 1)]
    assert any("1 trial(s) checked, the contract asks for 5" in n for n in result.notes)
    assert Trials(5, "all", 4).needed(10) == 8 and Trials(5, "all", None).needed(5) == 5


def _with_output(trace: Trace, tool: str, output: object) -> Trace:
    spans = [dataclasses.replace(s, data={**s.data, "output": output}) if s.tool_name == tool else s
             for s in trace.spans]
    return dataclasses.replace(trace, spans=spans)


@pytest.mark.parametrize("secret", [
    "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2",
    "Bearer " + "abc123def456ghi789jkl0mnop",
    "4111 1111 1111 1111",
])
def test_structural_layer_finds_secret_like_values_without_printing_them(original: Trace, secret: str) -> None:
    leaky = _with_output(original, "get_appointment", {"status": "booked", "note": f"key {secret}"})
    result = check(_contract(""), [leaky])
    span = next(s for s in leaky.spans if s.tool_name == "get_appointment")
    assert [(v.clause_id, v.layer, v.span_id) for v in result.violations] == [(STRUCTURAL_SECRET, "structural", span.span_id)]
    assert secret not in result.violations[0].message
    assert check(_contract(""), [original]).passed  # the redacted sample holds none


def test_structural_layer_checks_tool_names_and_arguments(original: Trace) -> None:
    spans = []
    for s in original.spans:
        if s.tool_name == "list_open_slots":
            s = dataclasses.replace(s, data={**s.data, "arguments": ["2026-11-05"]})
        elif s.tool_name == "get_appointment":
            s = dataclasses.replace(s, data={k: v for k, v in s.data.items() if k != "tool_name"} | {"tool_name": ""})
        spans.append(s)
    result = check(_contract(""), [dataclasses.replace(original, spans=spans)])
    assert [v.clause_id for v in result.violations] == [STRUCTURAL_TOOL, STRUCTURAL_TOOL]
    assert "has no tool name" in result.violations[0].message
    assert "arguments that are a list" in result.violations[1].message


def test_strict_replay_claim_regex_is_searched_in_the_final_answer(strict_replay: Trace) -> None:
    # "fully booked" is not a success claim: a word-bounded regex keeps apologies out
    c = _contract("success_requires:\n  - {id: r, claim: '(?i)\\bmoved\\b', tool: reschedule_appointment}\n")
    assert check(c, [strict_replay]).passed
    loose = _contract("success_requires:\n  - {id: r, claim: '(?i)booked', tool: reschedule_appointment}\n")
    assert _ids(check(loose, [strict_replay])) == ["r"]
