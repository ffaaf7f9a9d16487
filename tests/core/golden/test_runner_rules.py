"""The golden runner rule by rule (docs/golden.md "Running cases"; tracetui/core/golden/runner.py): the report's
fields, the counts, the options ``run_cases`` hands to every case, the kept replay's name, the seed file's and the
options' errors, how the agent is replayed (its declared sensitive fields, the key file, frozen LLM outputs without
a ``MODEL``).

Cases are the scheduling sample's (tests/golden_cases.py); the agents run in this process (~0.1 s a replay).
What the mutation run of ``runner.py`` found unpinned (tests/mutation_equivalents.md, round 8c).
"""

from __future__ import annotations

import hashlib

import os
from pathlib import Path
from typing import Any

import builders
import pytest

from golden_cases import AGENT, SAMPLE, make_case
from tracetui.core.golden.contract import GoldenCaseError, Violation
from tracetui.core.golden.runner import OUTCOMES, CaseResult, counts, find_cases, load_case, run_case, run_cases
from tracetui.core.model import Status, Trace
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
def _tag(name: str) -> str:  # a changed name's suffix: 8 hex digits of the folder name's SHA-256
    return "-" + hashlib.sha256(name.encode()).hexdigest()[:8]


@pytest.mark.parametrize(("folder", "kept"), [
    ("Xmas case!", "Xmas_case_" + _tag("Xmas case!") + ".jsonl"),  # anything but letters, digits, - _ . becomes _
    ("..v1.2-a_b..", "v1.2-a_b" + _tag("..v1.2-a_b..") + ".jsonl"),  # no dot at either end
    ("été", "été.jsonl"),                                          # letters of any script; unchanged: no suffix
    ("v1.2-a_b", "v1.2-a_b.jsonl"),
    ("...", "case" + _tag("...") + ".jsonl"),                      # nothing left: "case"
])
def test_the_kept_replay_is_named_for_the_case_folder_made_safe(tmp_path: Path, folder: str, kept: str) -> None:
    case = load_case(make_case(tmp_path / "golden", folder))
    result = run_case(case, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"))
    assert result.replay_path == str(tmp_path / "kept" / kept)
    assert [p.name for p in (tmp_path / "kept").iterdir()] == [kept]


def test_two_case_folders_made_safe_alike_keep_two_replays(tmp_path: Path) -> None:
    """``a b`` and ``a_b`` both clean to ``a_b``: each keeps its own replay, and ``--force`` replaces neither's
    with the other's."""
    results = [run_case(load_case(make_case(tmp_path / "golden", name)), agent=f"{AGENT}:run_fixed",
                        keep=str(tmp_path / "kept"), force=True) for name in ("a b", "a_b")]
    assert [r.outcome for r in results] == ["pass", "pass"]
    assert len({r.replay_path for r in results}) == 2
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == sorted(
        ["a_b.jsonl", "a_b" + _tag("a b") + ".jsonl"])


def test_a_case_folder_whose_name_is_not_utf8_keeps_its_replay_under_a_safe_name(tmp_path: Path) -> None:
    """A folder name with a byte that is not UTF-8 (read back with a lone surrogate in it) is made safe, never an
    error: the byte becomes ``_`` and the name's digest is taken over its surrogate too."""
    name = "bad\udcffname"  # the folder b"bad\xffname"
    result = run_case(load_case(make_case(tmp_path / "golden", name, case_name="bad name")),
                      agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"))
    tag = "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    assert result.outcome == "pass"
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["bad_name" + tag + ".jsonl"]


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



def test_the_replay_header_says_how_the_agent_was_cut_off_the_network_guard_by_default(tmp_path: Path) -> None:
    from tracetui.core.harness.sandbox import ISOLATION_GUARD, ISOLATION_NAMESPACE

    case = load_case(make_case(tmp_path / "golden"))
    for isolation, said in ((None, ISOLATION_GUARD), (ISOLATION_NAMESPACE, ISOLATION_NAMESPACE)):
        result = run_case(case, agent=f"{AGENT}:run_fixed", keep=str(tmp_path / "kept"), force=True,
                          isolation=isolation)
        assert read_runs(result.replay_path).runs[0].header["network_isolation"] == said


def test_a_replay_not_kept_is_written_to_a_temporary_folder_removed_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    case = load_case(make_case(tmp_path / "golden"))
    result = run_case(case, agent=f"{AGENT}:run_fixed")
    assert (result.outcome, result.replay_path) == ("pass", None)
    assert list((tmp_path / "tmp").iterdir()) == []


# --------------------------------------------------------------------------- judging runs built here
FORBID_AND_MUST = """\
schema: tracetui-contract/1
must_call:
  - {id: must-read, tool: read_x}
forbid_call:
  - {id: no-delete, tool: delete_x}
trials: {count: 1}
"""


def _judge(runs: list[Trace], contract: str = FORBID_AND_MUST) -> CaseResult:
    from tracetui.core.golden.contract import loads_contract
    from tracetui.core.golden.runner import Case, judge

    return judge(Case("c", "golden/c", {}, loads_contract(contract)), runs)


def _run(*calls: str, summary: object = None, status: str = "ok", error_type: str | None = None,
         output: object = "done", marked: dict[str, Any] | None = None, parented: bool = True) -> Trace:
    """An agent root (its ``replay.summary``, status, error type and output) and one tool call per name; ``marked``:
    the ``replay.divergence`` attribute and output of the last call."""
    attrs = {"replay.summary": summary} if summary is not None else {}
    spans = [builders.make_span("agent", "agent", span_id="r", parent_id=None if parented else "gone", seq=0,
                                status=status, error_type=error_type, attributes=attrs, output=output)]
    for i, tool in enumerate(calls, start=1):
        fields: dict[str, Any] = {"arguments": {}, "output": {"ok": True}}
        if marked is not None and i == len(calls):
            fields = {"arguments": {}, "output": marked["output"], "attributes": {"replay.divergence": marked["type"]}}
        spans.append(builders.make_span("tool", tool, span_id=f"s{i}", parent_id="r", seq=i, **fields))
    return Trace(spans=spans)


def _diverged(*calls: str, **d: object) -> Trace:
    div = {"type": "unrecorded_call", "span_id": "s9", "seq": 9, "tool": "read_y",
           "message": "not in the fixture\nmore", **d}
    return _run(*calls, summary={"divergences": [div]})


def test_no_run_is_an_error() -> None:
    result = _judge([])
    assert (result.outcome, result.message, result.trials) == ("error", "the replay holds no run", 0)


def test_runs_that_hold_every_clause_pass_counting_the_two_structural_checks() -> None:
    result = _judge([_run("read_x"), _run("read_x")])
    assert (result.outcome, result.message, result.trials) == ("pass", "4 clause(s) held (2 trial(s))", 2)
    assert [c["clause_id"] for c in result.clauses][2:] == ["must-read", "no-delete"]
    assert result.notes == ["2 trial(s) checked, the contract asks for 1: soft clauses need 2 of 2"]


def test_a_violated_clause_fails_naming_each_with_its_trial_in_the_whole_set() -> None:
    result = _judge([_diverged("read_x"), _run("delete_x")])
    assert result.outcome == "fail"
    assert result.message == "2 clause(s) violated: must-read, no-delete"
    assert [(v.clause_id, v.trial, v.span_id) for v in result.violations] == [("must-read", 2, "r"),
                                                                            ("no-delete", 2, "s1")]


def test_an_agent_that_raised_fails_with_its_error_and_the_violations_of_the_clean_trials() -> None:
    raised = _run("read_x", "delete_x", summary={"new_failure": True, "error": "ValueError: boom"})
    result = _judge([_run("read_x"), raised])
    assert (result.outcome, result.message) == ("fail", "the agent raised in trial 2: ValueError: boom")
    assert [(v.clause_id, v.trial) for v in result.violations] == [("no-delete", 2)]
    quiet = _judge([_run("read_x", summary={"new_failure": True})])
    assert quiet.message == "the agent raised in trial 1: the agent raised"


def test_the_summary_decides_whether_the_agent_raised_else_the_roots_error() -> None:
    # a summary that says no new failure: the root's error is the recording's, not this agent's
    said_no = _run("read_x", summary={"new_failure": False}, status="error", error_type="ValueError")
    assert _judge([said_no]).outcome == "pass"
    cases = [
        (_run("read_x", status="error", error_type="ValueError", output={"message": "boom\nat line 3"}),
         "ValueError: boom\nat line 3"),
        (_run("read_x", status="error", error_type="KeyError", output="not a mapping"), "KeyError"),
        (_run("read_x", status="error", output={"message": "no type"}), "error: no type"),
        (_run("read_x", status="error"), "the agent raised"),
    ]
    for run, text in cases:
        result = _judge([run])
        assert (result.outcome, result.message) == ("fail", f"the agent raised in trial 1: {text}")
    for run in (_run("read_x", summary={"other": 1}), _run("read_x"),
                _run("read_x", status="error", error_type="UnrecordedCall"),
                _run("read_x", status="error", error_type="RecordingExhausted"),
                _run("read_x", status="error", error_type="InputMismatch"),
                _run("read_x", status="error", error_type="ReplayDivergence")):
        assert _judge([run]).outcome == "pass"


def test_the_root_is_the_first_span_without_a_parent_else_the_first_span() -> None:
    orphan = _run("read_x", status="error", error_type="ValueError", parented=False)
    assert _judge([orphan]).message == "the agent raised in trial 1: ValueError"
    later_root = _run("read_x")
    root = later_root.spans.pop(0)
    later_root.spans.append(root)
    later_root.spans[0].attributes = {"replay.summary": {"new_failure": True, "error": "from the first span"}}
    root.status, root.error_type = Status.ERROR, "ValueError"
    assert _judge([later_root]).message == "the agent raised in trial 1: ValueError"


def test_a_run_that_left_the_fixture_diverges_with_its_first_divergence_and_the_hint() -> None:
    result = _judge([_run("read_x"), _diverged("read_x"), _diverged("read_x", type="exhausted")])
    assert result.outcome == "diverged" and result.violations == []
    assert result.first_divergence == {"type": "unrecorded_call", "span_id": "s9", "seq": 9, "tool": "read_y",
                                       "message": "not in the fixture", "trial": 2}
    assert result.message == "2 of 3 trial(s) left the fixture; first: unrecorded_call read_y at span s9 (trial 2)"
    assert result.notes[-1].startswith("the agent's path left the fixture: if this follows a deliberate fix")
    bare = _judge([_diverged("read_x", span_id=None, tool=None, message=None)])
    assert bare.message == "1 of 1 trial(s) left the fixture; first: unrecorded_call (trial 1)"
    assert bare.first_divergence["message"] == ""


def test_a_soft_clause_missed_beside_a_divergence_is_no_failure_but_a_safety_or_structural_one_is() -> None:
    assert _judge([_diverged("read_x"), _run()]).outcome == "diverged"
    safety = _judge([_diverged("read_x"), _run("read_x", "delete_x")])
    assert (safety.outcome, safety.message) == ("fail", "1 clause(s) violated: no-delete")
    structural = _run("read_x")
    structural.spans[1].data["arguments"] = "not an object"
    result = _judge([_diverged("read_x"), structural])
    assert result.outcome == "fail" and result.message.startswith("1 clause(s) violated: structural.")


def test_a_forbidden_call_before_a_run_left_the_fixture_fails_whatever_follows() -> None:
    result = _judge([_run("read_x", "delete_x"), _diverged("delete_x", "delete_x")],
                    contract=FORBID_AND_MUST.replace("trials: {count: 1}", "max_calls:\n  - {id: one-delete, "
                                                     "tool: delete_x, max: 1}\ntrials: {count: 2}"))
    assert result.outcome == "fail"
    assert result.message == "2 clause(s) violated before the run left the fixture: no-delete, one-delete"
    assert [(v.clause_id, v.trial) for v in result.violations] == [
        ("no-delete", 2), ("no-delete", 2), ("one-delete", 2), ("no-delete", 1)]
    only_diverged = _judge([_diverged("delete_x")])
    assert [(v.clause_id, v.trial) for v in only_diverged.violations] == [("no-delete", 1)]
    soft_only = "schema: tracetui-contract/1\nmust_call:\n  - {id: must-read, tool: read_x}\n"
    assert _judge([_diverged()], contract=soft_only).outcome == "diverged"


def test_a_divergence_is_read_from_the_summary_else_from_the_first_marked_span() -> None:
    marked = {"type": "input_mismatch", "output": {"message": "arguments differ\nat s2"}}
    for summary in (None, {"divergences": []}, {"divergences": "x"}, {"divergences": ["not a mapping"]}):
        run = _run("read_x", "read_y", marked=marked)
        if summary is not None:
            run.spans[0].attributes = {"replay.summary": summary}
        result = _judge([run])
        assert result.outcome == "diverged", summary
        assert result.first_divergence == {"type": "input_mismatch", "span_id": "s2", "seq": 2, "tool": "read_y",
                                           "message": "arguments differ", "trial": 1}
    unsaid = _judge([_run("read_x", "read_y", marked={"type": "exhausted", "output": "text"})])
    assert unsaid.first_divergence["message"] == ""
    assert _judge([_run("read_x", "read_y", marked={"type": "", "output": {}})]).outcome == "pass"


def test_a_summary_that_is_no_mapping_and_a_run_without_spans_say_nothing_of_a_divergence_or_an_error() -> None:
    for summary in ("new_failure divergences", ["new_failure"]):
        assert _judge([_run("read_x", summary=summary)]).outcome == "pass"
    empty = _judge([Trace(spans=[])])
    assert (empty.outcome, empty.message) == ("fail", "1 clause(s) violated: must-read")


# --------------------------------------------------------------------------- reading cases
def _refused(folder: Path) -> tuple[str, str, str]:
    with pytest.raises(GoldenCaseError) as exc:
        load_case(folder)
    return exc.value.path, exc.value.where, exc.value.reason


def test_a_case_yaml_that_is_no_yaml_mapping_is_refused_naming_the_file(tmp_path: Path) -> None:
    folder = make_case(tmp_path / "golden")
    case_yaml = folder / "case.yaml"
    for text in (b"name: [unclosed\n  mode: x\n", b"name: caf\xe9\n"):
        case_yaml.write_bytes(text)
        path, where, reason = _refused(folder)
        assert (path, where) == (str(case_yaml), "") and reason.startswith("not valid YAML: ")
        assert "\n" not in reason and "  " not in reason and len(reason) > len("not valid YAML: ") + 10
    for text in (b"- a\n- b\n", b""):
        case_yaml.write_bytes(text)
        assert _refused(folder) == (str(case_yaml), "",
                                    "must be a YAML mapping (schema: tracetui-case/1, name, mode, ...)")


@pytest.mark.parametrize(("line", "where", "reason"), [
    ("schema: tracetui-case/2", "schema", "must be 'tracetui-case/1', not 'tracetui-case/2'"),
    ("mode: loose", "mode", "must be one of strict, fixture, not 'loose'"),
    ("agent: 3", "agent", "must be a non-empty string or null, not 3"),
    ("seed_file: '  '", "seed_file", "must be a non-empty string or null, not '  '"),
    ("name: []", "name", "must be a non-empty string or null, not []"),
])
def test_a_case_yaml_field_of_the_wrong_value_is_refused_naming_it(tmp_path: Path, line: str, where: str,
                                                                   reason: str) -> None:
    folder = make_case(tmp_path / "golden", seed=False)
    (folder / "case.yaml").write_text(line + "\n")
    assert _refused(folder) == (str(folder / "case.yaml"), where, reason)


def test_a_case_is_named_by_case_yaml_else_by_its_folder_and_reads_its_fields(tmp_path: Path) -> None:
    folder = make_case(tmp_path / "golden", "friday", seed=False)
    (folder / "case.yaml").write_text("1: one\nagent: null\nseed_file: null\n")
    case = load_case(str(folder) + "/")
    assert (case.name, case.path, case.meta, case.error) == ("friday", str(folder) + "/", {"1": "one", "agent": None,
                                                             "seed_file": None}, None)
    assert [c.id for c in case.contract.clauses()] == ["must-check-friday", "booked-friday"]
    assert (case.mode, case.agent, case.seed_file) == ("strict", None, None)
    assert case.trace_path == os.path.join(str(folder) + "/", "trace.jsonl")
    (folder / "case.yaml").write_text("schema: tracetui-case/1\nname: the-name\nmode: fixture\nagent: m:f\n"
                                      "seed_file: seeds/s.json\n")
    named = load_case(folder)
    assert (named.name, named.mode, named.agent, named.seed_file) == (
        "the-name", "fixture", "m:f", os.path.join(str(folder), "seeds/s.json"))


def test_an_incomplete_case_names_the_files_missing(tmp_path: Path) -> None:
    folder = tmp_path / "partial"
    folder.mkdir()
    (folder / "case.yaml").write_text("name: partial\n")
    (folder / "contract.yaml").mkdir()  # not a file
    assert _refused(folder) == (str(folder), "", "not a complete case: contract.yaml, trace.jsonl missing (a case "
                                "holds case.yaml, contract.yaml and trace.jsonl; `tracetui promote` writes them)")


def test_find_cases_takes_each_visible_subfolder_holding_any_case_file_in_name_order(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    make_case(golden, "b-good", case_name="scheduling-friday")
    make_case(golden, ".hidden")
    for name, file in (("a-trace-only", "trace.jsonl"), ("c-contract-only", "contract.yaml"),
                       ("d-case-only", "case.yaml")):
        (golden / name).mkdir()
        (golden / name / file).write_text("")
    (golden / "notes").mkdir()
    (golden / "notes" / "readme.md").write_text("")
    (golden / "case.txt").write_text("")
    cases = find_cases(golden)
    assert [(c.name, c.path) for c in cases] == [
        ("a-trace-only", str(golden / "a-trace-only")), ("scheduling-friday", str(golden / "b-good")),
        ("c-contract-only", str(golden / "c-contract-only")), ("d-case-only", str(golden / "d-case-only"))]
    assert cases[1].error is None and cases[1].contract is not None
    assert cases[0].contract is None
    assert cases[0].error == f"{golden / 'a-trace-only'}: not a complete case: case.yaml, contract.yaml missing " \
                             "(a case holds case.yaml, contract.yaml and trace.jsonl; `tracetui promote` writes them)"
    assert [c.name for c in find_cases(golden / "b-good")] == ["scheduling-friday"]
    with pytest.raises(GoldenCaseError) as exc:
        find_cases(golden / "case.txt")
    assert (exc.value.path, exc.value.reason) == (
        str(golden / "case.txt"), "not a folder of golden cases (golden/NAME/{case.yaml,contract.yaml,trace.jsonl})")


# --------------------------------------------------------------------------- run_case's own rules
def test_a_case_that_could_not_be_read_is_an_error_with_its_reason(tmp_path: Path) -> None:
    from tracetui.core.golden.runner import Case

    assert (run_case(Case("x", "golden/x", error="golden/x: broken")).message,
            run_case(Case("x", "golden/x")).message) == ("golden/x: broken", "the case could not be read")
    assert run_case(Case("x", "golden/x", error="golden/x: broken"), replay=str(SAMPLE / "fixture.jsonl")).outcome == (
        "error")


def test_the_agent_given_wins_over_the_cases_own(tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden", agent=f"{AGENT}:run"))
    assert run_case(case).outcome == "fail"
    assert run_case(case, agent=f"{AGENT}:run_fixed").outcome == "pass"


def test_a_replay_given_is_checked_with_the_key_file_given_else_a_one_off_key_noted_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACETUI_REDACTION_KEY")
    case = load_case(make_case(tmp_path / "golden"))
    result = run_case(case, replay=str(SAMPLE / "replay.jsonl"))
    assert result.outcome == "diverged"
    assert "one-off key" in result.notes[0] and result.notes[1].startswith("the agent's path left the fixture")
    (tmp_path / "project.key").write_text(KEY)
    keyed = run_case(case, replay=str(SAMPLE / "replay.jsonl"), redaction_key_file=str(tmp_path / "project.key"))
    assert not any("one-off key" in n for n in keyed.notes)
    missing = run_case(case, replay=str(SAMPLE / "replay.jsonl"), redaction_key_file=str(tmp_path / "nope.key"))
    assert missing.outcome == "error" and "nope.key" in missing.message


def test_violations_carry_their_trial_number_in_the_whole_set() -> None:
    clean = _judge([_run("read_x"), _diverged("read_x"), _run("read_x", "delete_x")])
    assert (clean.outcome, clean.path, clean.name) == ("fail", "golden/c", "c")
    assert [(v.clause_id, v.trial) for v in clean.violations] == [("no-delete", 3)]
    early = _judge([_diverged("read_x"), _run("read_x"), _diverged("delete_x")])
    assert early.message == "1 clause(s) violated before the run left the fixture: no-delete"
    assert [(v.clause_id, v.trial) for v in early.violations] == [("no-delete", 3)]


def test_only_forbidden_calls_and_call_limits_count_before_a_run_left_the_fixture() -> None:
    """A run cut short by its divergence is not judged on what it would have done after: its order, its claims of
    success, its final output (soft or not)."""
    div = {"divergences": [{"type": "unrecorded_call", "span_id": "s9", "tool": "read_y"}]}
    for clause, run in (
            ("order:\n  - {id: read-first, before: read_x, after: write_x}", _run("write_x", "read_x", summary=div)),
            ("success_requires:\n  - {id: done-needs-write, claim: '(?i)done', tool: write_x}",
             _run("read_x", summary=div, output="All done.")),
            ("final_state:\n  - {id: says-ok, path: output.status, equals: ok}",
             _run("read_x", summary=div, output={"status": "failed"}))):
        result = _judge([run], contract=f"schema: tracetui-contract/1\n{clause}\n")
        assert result.outcome == "diverged", clause
        assert result.violations == [], clause


def test_a_case_yaml_that_cannot_be_read_is_refused_with_the_systems_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    import errno

    folder = make_case(tmp_path / "golden")
    real_open = builtins.open

    def locked(file: Any, *args: Any, **kw: Any) -> Any:  # as root no mode makes a file unreadable
        if str(file) == str(folder / "case.yaml"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kw)

    monkeypatch.setattr(builtins, "open", locked)
    assert _refused(folder) == (str(folder / "case.yaml"), "", f"cannot be read: {os.strerror(errno.EACCES)}")


def test_a_yaml_error_is_given_on_one_line(tmp_path: Path) -> None:
    import yaml

    folder = make_case(tmp_path / "golden")
    (folder / "case.yaml").write_text("name: [unclosed\n  mode: x\n")
    with pytest.raises(yaml.YAMLError) as exc, open(folder / "case.yaml", encoding="utf-8") as fh:
        yaml.safe_load(fh)  # the parser's own words, which name the file, line and column
    assert _refused(folder)[2] == "not valid YAML: " + " ".join(str(exc.value).split())


def test_a_kept_replay_is_never_replaced_unless_forced_and_no_agent_is_an_error_saying_what_to_pass(
        tmp_path: Path) -> None:
    case = load_case(make_case(tmp_path / "golden"))
    assert run_case(case).message == ("no agent to replay: pass --agent AGENT (or --replay REPLAY.jsonl), or set "
                                      "`agent` in case.yaml")
    kept = tmp_path / "kept"
    assert run_case(case, agent=f"{AGENT}:run_fixed", keep=str(kept)).outcome == "pass"
    again = run_case(case, agent=f"{AGENT}:run_fixed", keep=str(kept))
    assert (again.outcome, again.message) == (
        "error", f"--keep: {kept / 'friday.jsonl'} exists; pass --force to replace it, or keep into another folder")
