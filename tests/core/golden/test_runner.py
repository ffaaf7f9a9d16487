"""Golden runner: the scheduling incident as a case fails on the unfixed agent, diverges in strict mode
on the fixed one, passes in fixture mode; damaged cases are errors that never stop the run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from golden_cases import AGENT, SAMPLE, make_case as _make_case
from tracetui.core.golden.runner import OUTCOMES, counts, find_cases, load_case, run_case, run_cases
from tracetui.core.readers import read_runs


CONTRACT = textwrap.dedent("""\
    schema: tracetui-contract/1
    must_call:
      - {id: must-check-friday, tool: list_open_slots, args: {date: "2026-11-06"}}
    forbid_call:
      - {id: no-thursday-booking, tool: reschedule_appointment, args: {date: "2026-11-05"}}
    max_calls:
      - {id: one-reschedule, tool: reschedule_appointment, max: 1}
    success_requires:
      - {id: receipt-before-claim, claim: "(?i)\\\\bmoved\\\\b", tool: reschedule_appointment, output: {status: rescheduled}}
    final_state:
      - {id: booked-friday, path: appointments.APT-77120.date, equals: "2026-11-06"}
    trials: {count: 1, safety: all, soft: {at_least: 1}}
    """)


def make_case(root: Path, name: str = "friday", *, mode: str = "fixture", seed: bool = True,
              contract: str = CONTRACT, agent: str | None = None) -> Path:
    return _make_case(root, name, mode=mode, seed=seed, contract=contract, agent=agent, case_name=f"scheduling-{name}")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "golden-runner-test-key-0123456789")
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)


def test_incident_agent_fails_with_every_violated_clause(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    result = run_case(case, agent=f"{AGENT}:run", keep=str(tmp_path / "kept"))
    assert result.outcome == "fail"
    assert [(v.clause_id, v.layer) for v in result.violations] == [
        ("must-check-friday", "trajectory"), ("booked-friday", "state")]
    replay = read_runs(result.replay_path).runs[0]
    assert {v.span_id for v in result.violations} == {replay.spans[0].span_id}  # the root: nothing to point at
    assert result.message == "2 clause(s) violated: must-check-friday, booked-friday"
    assert result.trials == 1


def test_fixed_agent_diverges_in_strict_mode(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden", mode="strict", seed=False))
    result = run_case(case, agent=f"{AGENT}:run_fixed")
    assert result.outcome == "diverged"
    assert result.violations == []
    d = result.first_divergence
    assert (d["type"], d["tool"], d["trial"]) == ("unrecorded_call", "list_open_slots", 1)
    assert "2026-11-06" in d["message"] and "\n" not in d["message"]
    assert any("convert the case to fixture mode" in n for n in result.notes)
    assert result.replay_path is None


def test_fixed_agent_passes_in_fixture_mode_over_k_trials(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    result = run_case(case, agent=f"{AGENT}:run_fixed", trials=3)
    assert result.outcome == "pass", result.violations
    assert result.trials == 3
    friday = next(c for c in result.clauses if c["clause_id"] == "booked-friday")
    assert (friday["held"], friday["of"]) == (3, 3)


def test_agent_comes_from_case_yaml(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden", agent=f"{AGENT}:run_fixed"))
    assert run_case(case).outcome == "pass"


@pytest.mark.parametrize(("name", "outcome"), [("replay.jsonl", "diverged"), ("fixture.jsonl", "pass"),
                                               ("original.jsonl", "fail")])
def test_given_replay_is_checked_instead_of_running_an_agent(tmp_path: Path, name: str, outcome: str) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    result = run_case(case, replay=str(SAMPLE / name))
    assert result.outcome == outcome
    if outcome == "diverged":
        assert result.first_divergence["span_id"] == "80a4f09e7684834c"


def test_agent_that_raises_fails_with_its_exception(tmp_path: Path) -> None:
    agent = tmp_path / "boom_agent.py"
    agent.write_text(f"exec(open({AGENT!r}).read())\n\n"
                     "def boom(ctx, input):\n"
                     "    ctx.tool('get_appointment', {'customer_id': 'C-48213'})\n"
                     "    raise ValueError('the booking client broke')\n")
    case = load_case(make_case(tmp_path / "golden", mode="strict", seed=False))
    result = run_case(case, agent=f"{agent}:boom")
    assert result.outcome == "fail"
    assert "ValueError: the booking client broke" in result.message


def test_damaged_cases_are_errors_and_the_run_goes_on(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    make_case(golden, "a-good")
    bad = make_case(golden, "b-bad-contract")
    (bad / "contract.yaml").write_text("schema: tracetui-contract/1\nmust_call:\n  - {id: x}\n")
    partial = golden / "c-partial"
    partial.mkdir()
    (partial / "case.yaml").write_text("name: partial\n")
    badmode = make_case(golden, "d-bad-mode", mode="loose")
    (golden / "notes").mkdir()  # not a case: ignored
    cases = find_cases(golden)
    assert [Path(c.path).name for c in cases] == ["a-good", "b-bad-contract", "c-partial", "d-bad-mode"]
    results = run_cases(golden, agent=f"{AGENT}:run_fixed")
    assert [r.outcome for r in results] == ["pass", "error", "error", "error"]
    assert "must_call[0].tool: missing" in results[1].message and "contract.yaml" in results[1].message
    assert "contract.yaml, trace.jsonl missing" in results[2].message
    assert f"{badmode / 'case.yaml'}: mode:" in results[3].message
    assert counts(results) == {"pass": 1, "fail": 0, "diverged": 0, "error": 3}
    assert tuple(counts([])) == OUTCOMES


def test_infrastructure_errors_are_error_results(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    assert "no agent to replay" in run_case(case).message
    assert run_case(case, agent="no_such_module_xyz:run").outcome == "error"
    assert run_case(case, replay=str(tmp_path / "missing.jsonl")).outcome == "error"
    (Path(case.path) / "seed.json").write_text("[1, 2]")
    result = run_case(case, agent=f"{AGENT}:run_fixed")
    assert result.outcome == "error" and "JSON object" in result.message


def test_single_case_folder_and_missing_folder(tmp_path: Path) -> None:
    folder = make_case(tmp_path / "golden")
    assert [c.name for c in find_cases(folder)] == ["scheduling-friday"]
    from tracetui.core.golden.contract import GoldenCaseError

    with pytest.raises(GoldenCaseError, match="not a folder"):
        find_cases(tmp_path / "nope")


def test_missing_key_replays_with_a_one_off_key_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACETUI_REDACTION_KEY")
    monkeypatch.chdir(tmp_path)
    case = load_case(make_case(tmp_path / "golden"))
    result = run_case(case, agent=f"{AGENT}:run_fixed")
    assert result.outcome == "pass"
    assert any("one-off key" in n for n in result.notes)
    assert not (tmp_path / ".tracetui").exists()  # never creates a key file


def test_a_safety_violation_in_a_clean_trial_is_a_failure_even_beside_a_divergence(tmp_path: Path) -> None:
    from tracetui.core.golden.runner import judge

    diverged = read_runs(SAMPLE / "replay.jsonl").runs[0]
    fixed = read_runs(SAMPLE / "fixture.jsonl").runs[0]
    safety = load_case(make_case(tmp_path / "g1", contract=textwrap.dedent("""\
        schema: tracetui-contract/1
        forbid_call:
          - {id: no-friday-write, tool: reschedule_appointment, args: {date: "2026-11-06"}}
        trials: {count: 2}
        """)))
    result = judge(safety, [diverged, fixed])
    assert result.outcome == "fail"
    assert [(v.clause_id, v.trial) for v in result.violations] == [("no-friday-write", 2)]
    soft = load_case(make_case(tmp_path / "g2", contract=textwrap.dedent("""\
        schema: tracetui-contract/1
        must_call:
          - {id: never-made, tool: cancel_appointment}
        trials: {count: 2}
        """)))
    result = judge(soft, [diverged, fixed])
    assert result.outcome == "diverged" and result.first_divergence["trial"] == 1
