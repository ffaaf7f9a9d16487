"""The contract format's rules one by one (golden.clauses): the exact error a user reads for each bad field, the
defaults a missing field takes, and how a contract is written back (docs/golden.md "Contract").

Written from the rules, to pin what the mutation run of ``clauses.py`` found unpinned
(tests/mutation_equivalents.md, "core/golden/clauses.py").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracetui.core.golden.contract import (
    Contract,
    FinalState,
    GoldenCaseError,
    MaxCalls,
    Trials,
    contract_dict,
    dump_contract,
    load_contract,
    loads_contract,
    subset_match,
)

HEAD = "schema: tracetui-contract/1\n"
FILE = "golden/x/contract.yaml"


def _error(body: str, path: str = FILE) -> GoldenCaseError:
    with pytest.raises(GoldenCaseError) as exc:
        loads_contract(HEAD + body, path)
    return exc.value


# --------------------------------------------------------------------------- loading: the exact messages
@pytest.mark.parametrize(("body", "where", "reason"), [
    # a clause that is not a mapping names the fields it may hold, and what it is instead
    ("must_call:\n  - a\n", "must_call[0]", "must be a mapping ({id, tool, args}), not a string"),
    ("max_calls:\n  - null\n", "max_calls[0]", "must be a mapping ({id, tool, max}), not null"),
    ("trials: 3\n", "trials", "must be a mapping ({count, safety, soft}), not an integer"),
    ("must_call:\n  - {id: a, tool: t, argz: 1}\n", "must_call[0]", "unknown field 'argz'; valid fields: id, tool, args"),
    # a text field: what the value is, in words
    ("must_call:\n  - {id: a, tool: 3}\n", "must_call[0].tool", "must be a non-empty string, not an integer"),
    ("must_call:\n  - {id: a, tool: {x: 1}}\n", "must_call[0].tool", "must be a non-empty string, not a mapping"),
    ("must_call:\n  - {id: a, tool: 1.5}\n", "must_call[0].tool", "must be a non-empty string, not a number"),
    ("must_call:\n  - {id: a, tool: true}\n", "must_call[0].tool", "must be a non-empty string, not a boolean"),
    ("must_call:\n  - {id: a, tool: [t]}\n", "must_call[0].tool", "must be a non-empty string, not a list"),
    # a type YAML builds but the list above does not name is named by its Python type
    ("must_call:\n  - {id: a, tool: !!set {t}}\n", "must_call[0].tool", "must be a non-empty string, not set"),
    ("must_call:\n  - {id: a, tool: t, args: [1]}\n", "must_call[0].args",
     "must be a mapping of field -> expected value, not a list"),
    ("must_call:\n  - {id: a, tool: t, args: yes please}\n", "must_call[0].args",
     "must be a mapping of field -> expected value, not a string"),
    # an integer: a boolean or a string of digits is not one
    ("max_calls:\n  - {id: a, tool: t, max: true}\n", "max_calls[0].max", "must be an integer >= 0, not True"),
    ("max_calls:\n  - {id: a, tool: t, max: '3'}\n", "max_calls[0].max", "must be an integer >= 0, not '3'"),
    ("max_calls:\n  - {id: a, tool: t}\n", "max_calls[0].max", "missing"),
    ("max_calls:\n  - {id: a, tool: t, max: null}\n", "max_calls[0].max", "missing"),
    ("trials: {count: 0}\n", "trials.count", "must be an integer >= 1, not 0"),
    ("final_state:\n  - {id: a, path: x, unchanged: 1}\n", "final_state[0].unchanged", "must be true or false, not 1"),
    ("final_state:\n  - {id: a, path: x}\n", "final_state[0]", "needs exactly one of `equals: VALUE` or `unchanged: true`"),
    ("final_state:\n  - {id: a, path: 'a..b', equals: 1}\n", "final_state[0].path",
     "'a..b' is not a state path (dotted keys, [n] for list items: appointments.APT-77120.date, "
     "confirmations[0].channel)"),
    ("must_call: {id: a}\n", "must_call", "must be a list of clauses, not a mapping"),
    ("must_call:\n  - {id: structural.x, tool: t}\n", "must_call[0].id",
     "ids starting with `structural.` are reserved for the structural checks"),
    # a duplicate names where the id was first used
    ("must_call:\n  - {id: a, tool: t}\n  - {id: b, tool: t}\nforbid_call:\n  - {id: b, tool: u}\n",
     "forbid_call[0].id", "duplicate id 'b' (also must_call[1])"),
])
def test_each_bad_field_is_named_by_file_and_field_path_with_its_exact_reason(body: str, where: str, reason: str) -> None:
    err = _error(body)
    assert (err.path, err.where, err.reason) == (FILE, where, reason)
    assert str(err) == f"{FILE}: {where}: {reason}"


@pytest.mark.parametrize(("text", "reason"), [
    ("- a\n", "must be a YAML mapping with `schema: tracetui-contract/1` and clause sections, not a list"),
    ("null\n", "must be a YAML mapping with `schema: tracetui-contract/1` and clause sections, not null"),
    # the line is counted from 1, the parser's words kept on one line
    ("schema: tracetui-contract/1\nmust_call: a\n  b: c\n", "not valid YAML (line 3): mapping values are not allowed here"),
    # a character YAML refuses has no line mark: the parser's whole message, on one line
    ("schema: x\x07\n", 'not valid YAML: unacceptable character #x0007: special characters are not allowed in '
                        '"<unicode string>", position 9'),
])
def test_a_document_error_names_the_file_only(text: str, reason: str) -> None:
    with pytest.raises(GoldenCaseError) as exc:
        loads_contract(text)
    err = exc.value
    # without a path the file is called contract.yaml; without a field no empty field is printed
    assert (err.path, err.where, err.reason) == ("contract.yaml", "", reason)
    assert str(err) == f"contract.yaml: {reason}"


def test_an_unreadable_file_gives_the_reason_in_words_not_the_exception(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(GoldenCaseError) as exc:
        load_contract(missing)
    assert (exc.value.path, exc.value.where) == (str(missing), "")
    assert str(exc.value) == f"{missing}: cannot be read: No such file or directory"
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(HEAD.encode() + b"# caf\xe9\n")
    with pytest.raises(GoldenCaseError) as exc:
        load_contract(latin)
    assert str(exc.value) == (f"{latin}: cannot be read: 'utf-8' codec can't decode byte 0xe9 in position 33: "
                              "invalid continuation byte")


@pytest.mark.parametrize("path", ["a..b", "a.", ".a", "a.[0]x"])
def test_an_empty_or_malformed_step_is_not_a_state_path(path: str) -> None:
    err = _error(f"final_state:\n  - {{id: a, path: '{path}', equals: 1}}\n")
    assert err.where == "final_state[0].path"
    assert err.reason.startswith(f"{path!r} is not a state path")


def test_list_steps_alone_are_a_state_path() -> None:
    c = loads_contract(HEAD + "final_state:\n  - {id: a, path: 'slots[0][1].at', equals: 1}\n")
    assert c.final_state[0].path == "slots[0][1].at"


def test_an_unquoted_date_is_the_text_written_and_matches_the_recorded_argument() -> None:
    # YAML reads `2026-11-06` as a date, which never equals the JSON string a trace records: a contract written
    # without quotes failed every run, its message quoting the very date the call had
    c = loads_contract(HEAD + "must_call:\n  - {id: a, tool: list_open_slots, args: {date: 2026-11-06}}\n"
                              "final_state:\n  - {id: f, path: booked.at, equals: 2026-11-06 15:30:00}\n")
    assert c.must_call[0].args == {"date": "2026-11-06"}
    assert c.final_state[0].equals == "2026-11-06 15:30:00"
    assert subset_match(c.must_call[0].args, {"date": "2026-11-06", "region": "north"})
    assert loads_contract(dump_contract(c)) == c


# --------------------------------------------------------------------------- loading: defaults
def test_trials_default_to_one_run_all_soft_clauses_in_every_trial() -> None:
    assert loads_contract(HEAD).trials == Trials(1, "all", None)
    assert loads_contract(HEAD + "trials: {safety: all}\n").trials == Trials(1, "all", None)
    assert loads_contract(HEAD + "trials: {count: 3}\n").trials == Trials(3, "all", None)
    assert loads_contract(HEAD + "trials: {count: 3}\n").trials.needed(3) == 3


def test_a_scaled_soft_threshold_is_at_least_one_and_at_most_the_trials_run() -> None:
    t = Trials(5, "all", 1)
    assert [t.needed(n) for n in (1, 2, 3, 5, 10)] == [1, 1, 1, 1, 2]
    assert [Trials(2, "all", 2).needed(n) for n in (1, 3, 4)] == [1, 3, 4]


# --------------------------------------------------------------------------- writing back
def test_contract_dict_keeps_every_non_empty_section_after_an_empty_one() -> None:
    c = Contract(max_calls=[MaxCalls("m", "t", 2)],
                 final_state=[FinalState("f", "a.b", None, False, True), FinalState("g", "a.c", None, True, False)])
    assert contract_dict(c) == {
        "schema": "tracetui-contract/1",
        "max_calls": [{"id": "m", "tool": "t", "max": 2}],
        # `equals: null` is a value to compare with, kept; `unchanged` written only when true
        "final_state": [{"id": "f", "path": "a.b", "equals": None}, {"id": "g", "path": "a.c", "unchanged": True}],
        "trials": {"count": 1, "safety": "all"},
    }
    assert loads_contract(dump_contract(c)) == c


def test_dump_writes_one_flow_mapping_per_clause_unicode_as_is_up_to_120_columns() -> None:
    long_date = "2026-11-06 at 15:30, room 4, north-east wing"
    c = loads_contract(HEAD + "must_call:\n  - {id: a, tool: t}\n"
                              f"final_state:\n  - {{id: booked-friday, path: appointments.APT-77120.date, "
                              f"equals: '{long_date}'}}\n"
                              "forbid_call:\n  - {id: no-café, tool: reschedule_appointment}\n")
    text = dump_contract(c)
    lines = text.splitlines()
    assert "- {id: a, tool: t}" in lines
    assert "- {id: no-café, tool: reschedule_appointment}" in lines
    line = f"- {{id: booked-friday, path: appointments.APT-77120.date, equals: '{long_date}'}}"
    assert 80 < len(line) <= 120 and line in lines
    assert loads_contract(text) == c
