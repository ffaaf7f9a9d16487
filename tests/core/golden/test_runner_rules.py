"""The golden runner rule by rule (docs/golden.md "Running cases"; tracetui/core/golden/runner.py): the report's
fields, the counts, the options ``run_cases`` hands to every case, the kept replay's name, the seed file's and the
options' errors, how the agent is replayed (its declared sensitive fields, the key file, frozen LLM outputs without
a ``MODEL``).

Cases are the scheduling sample's (tests/golden_cases.py); the agents run in this process (~0.1 s a replay).
What the mutation run of ``runner.py`` found unpinned (tests/mutation_equivalents.md, round 8c).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_cases import AGENT, SAMPLE, make_case
from tracetui.core.golden.contract import Violation
from tracetui.core.golden.runner import OUTCOMES, CaseResult, counts, load_case, run_case, run_cases
from tracetui.core.readers import read_runs

KEY = "golden-runner-rules-key-0123456789"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    monkeypatch.chdir(tmp_path)


def _leaky_agent(tmp_path: Path) -> str:
    """The scheduling agent module (its ``SENSITIVE_FIELDS``: ``get_appointment``'s ``street_address``) without a
    ``MODEL``, with an entry point that sends a street address to ``get_appointment``."""
    agent = tmp_path / "leaky_agent.py"
    agent.write_text(f"exec(open({AGENT!r}).read())\n\nMODEL = None\n\n"
                     "def leak(ctx, input):\n"
                     "    ctx.tool('get_appointment', {'customer_id': 'C-48213', 'street_address': '12 rue Cachée'})\n"
                     "    return 'done'\n")
    return f"{agent}:leak"


# --------------------------------------------------------------------------- the report
def test_a_result_reads_as_a_dict_of_every_field() -> None:
    v = Violation("no-thursday", "trajectory", "called on Thursday", "s1", 2)
    result = CaseResult("friday", "golden/friday", "fail", [v], {"type": "unrecorded_call"}, 3, "1 clause(s) violated",
                        ["a note"], [{"clause_id": "no-thursday"}], "kept/friday.jsonl")
    assert result.to_dict() == {
        "name": "friday", "path": "golden/friday", "outcome": "fail", "message": "1 clause(s) violated", "trials": 3,
        "violations": [{"clause_id": "no-thursday", "layer": "trajectory", "message": "called on Thursday",
                        "span_id": "s1", "trial": 2}],
        "first_divergence": {"type": "unrecorded_call"}, "clauses": [{"clause_id": "no-thursday"}],
        "notes": ["a note"], "replay_path": "kept/friday.jsonl"}
    assert result.to_dict()["notes"] is not result.notes


def test_counts_give_every_outcome_in_order_and_an_unknown_outcome_under_its_name() -> None:
    results = [CaseResult("c", "p", o) for o in ("fail", "error", "fail", "diverged", "fail", "pass", "other")]
    assert list(counts(results).items()) == [("pass", 1), ("fail", 3), ("diverged", 1), ("error", 1), ("other", 1)]
    assert list(counts([])) == list(OUTCOMES)


def test_an_error_result_names_the_case_and_counts_no_trial(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    for result in (run_case(case), run_case(case, agent=f"{AGENT}:run_fixed", trials=0)):
        assert (result.outcome, result.name, result.path, result.trials) == ("error", case.name, case.path, 0)


# --------------------------------------------------------------------------- run_cases hands every option on
def test_run_cases_hands_the_replay_trials_keep_force_and_key_file_to_every_case(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = tmp_path / "golden"
    make_case(golden, "a")
    make_case(golden, "b")
    assert [r.outcome for r in run_cases(golden, replay=str(SAMPLE / "fixture.jsonl"))] == ["pass", "pass"]
    assert [r.trials for r in run_cases(golden, agent=f"{AGENT}:run_fixed", trials=2)] == [2, 2]
    kept = run_cases(golden, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"))
    assert [r.replay_path for r in kept] == [str(tmp_path / "kept" / "a.jsonl"), str(tmp_path / "kept" / "b.jsonl")]
    again = run_cases(golden, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"))
    assert [r.outcome for r in again] == ["error", "error"] and "pass --force" in again[0].message
    forced = run_cases(golden, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"), force=True)
    assert [r.outcome for r in forced] == ["pass", "pass"]
    monkeypatch.delenv("TRACETUI_REDACTION_KEY")
    (tmp_path / "project.key").write_text(KEY)
    keyed = run_cases(golden, agent=f"{AGENT}:run_fixed", redaction_key_file=str(tmp_path / "project.key"))
    assert [r.outcome for r in keyed] == ["pass", "pass"]
    assert not any("one-off key" in n for r in keyed for n in r.notes)
    assert all(any("one-off key" in n for n in r.notes) for r in run_cases(golden, agent=f"{AGENT}:run_fixed"))


# --------------------------------------------------------------------------- the kept replay's name
@pytest.mark.parametrize(("folder", "kept"), [
    ("Xmas case!", "Xmas_case_.jsonl"),           # anything but letters, digits, - _ . becomes _
    ("..v1.2-a_b..", "v1.2-a_b.jsonl"),           # no dot at either end
    ("été", "été.jsonl"),                         # letters of any script
    ("...", "case.jsonl"),                        # nothing left: "case"
])
def test_the_kept_replay_is_named_for_the_case_folder_made_safe(tmp_path: Path, folder: str, kept: str) -> None:
    case = load_case(make_case(tmp_path / "golden", folder))
    result = run_case(case, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"))
    assert result.replay_path == str(tmp_path / "kept" / kept)
    assert [p.name for p in (tmp_path / "kept").iterdir()] == [kept]


# --------------------------------------------------------------------------- errors of the seed file and the options
def test_a_seed_file_that_cannot_be_read_or_is_no_json_object_is_an_error_naming_the_file(tmp_path: Path) -> None:
    folder = make_case(tmp_path / "golden")
    seed = folder / "seed.json"
    seed.unlink()
    result = run_case(load_case(folder), agent=f"{AGENT}:run_fixed")
    assert (result.outcome, result.message) == (
        "error", f"{folder / 'case.yaml'}: seed_file: seed file {seed} cannot be read: No such file or directory")
    seed.write_text("{not json")
    message = run_case(load_case(folder), agent=f"{AGENT}:run_fixed").message
    assert message.startswith(f"{seed}: not JSON: Expecting property name enclosed in double quotes")
    seed.write_text("[1, 2]")
    assert run_case(load_case(folder), agent=f"{AGENT}:run_fixed").message == (
        f"{seed}: a fixture seed must be a JSON object")


def test_trials_below_one_and_a_keep_that_is_a_file_are_errors_saying_so(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    assert run_case(case, agent=f"{AGENT}:run_fixed", trials=0).message == "--trials must be at least 1, not 0"
    (tmp_path / "kept").write_text("")
    result = run_case(case, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"))
    assert (result.outcome, result.path, result.message) == (
        "error", case.path, f"--keep {tmp_path / 'kept'} is a file, not a folder: name a folder for the replay traces")


# --------------------------------------------------------------------------- how the agent is replayed
def test_the_agents_sensitive_fields_are_redacted_in_the_replay_with_the_key_file_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACETUI_REDACTION_KEY")
    (tmp_path / "project.key").write_text(KEY)
    case = load_case(make_case(tmp_path / "golden", mode="strict", seed=False))
    ref = _leaky_agent(tmp_path)
    result = run_case(case, agent=ref, keep=str(tmp_path / "kept"), redaction_key_file=str(tmp_path / "project.key"))
    call = next(s for s in read_runs(result.replay_path).runs[0].spans if s.tool_name == "get_appointment")
    assert call.data["arguments"]["customer_id"] == "C-48213"
    assert call.data["arguments"]["street_address"].startswith("<SENSITIVE_")
    assert "12 rue Cachée" not in Path(result.replay_path).read_text(encoding="utf-8")
    assert not any("one-off key" in n for n in result.notes)


def test_an_agent_without_a_model_is_replayed_with_the_recorded_llm_outputs_and_says_so_first(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden", mode="strict", seed=False))
    ref = _leaky_agent(tmp_path)
    result = run_case(case, agent=ref)
    assert result.notes[0] == f"{ref} declares no MODEL: replayed with the recorded LLM outputs (--llm frozen)"
    with_model = run_case(case, agent=f"{AGENT}:run_fixed")
    assert not any("declares no MODEL" in n for n in with_model.notes)

