"""Triage verdicts on pairs of each kind (issue 5 "Done when"), made with the harness and the
scheduling sample agent, plus a toy agent for variance."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracetui.cli.main import main
from tracetui.core.harness import load_agent, record, replay
from tracetui.core.harness.redact import Redactor
from tracetui.core.readers import read_runs, read_trace
from tracetui.core.triage import TriageError, triage, triage_json

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "sample_runs" / "scheduling" / "agent.py"
KEY = b"triage-test-key-0123456789"


def _red(spec: Any) -> Redactor:
    return Redactor(KEY, sensitive_fields=spec.sensitive_fields)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("triage")
    unfixed, fixed = load_agent(f"{AGENT}:run"), load_agent(f"{AGENT}:run_fixed")
    orig = d / "original.jsonl"
    record(unfixed, orjson.loads((AGENT.parent / "input.json").read_bytes()), str(orig), redactor=_red(unfixed),
           clock="2026-11-03T10:14:02+01:00", timezone="Europe/Paris", seed=7)
    recording = read_trace(orig)
    # The failure comes back: the same agent, recorded tools, the model called again 3 times.
    replay(recording, unfixed, str(d / "same.jsonl"), redactor=_red(unfixed), llm="live", trials=3)
    # A prompt-version change: the fixed agent (v8), strict.
    replay(recording, fixed, str(d / "fixed.jsonl"), redactor=_red(fixed), llm="live")
    # Stale data: the original read "Thursday is full"; the booking system had a slot (seed file).
    replay(recording, unfixed, str(d / "fresh.jsonl"), redactor=_red(unfixed), llm="live", mode="fixture",
           seed_state={"slots": {"2026-11-05": {"lyon-north": [{"start": "09:00", "end": "11:00"}]}}})
    # Damaged recordings: a truncated tool output; no prompt version.
    lines = orig.read_bytes().splitlines()
    header = orjson.loads(lines[0])
    header.pop("prompt_versions")
    header.pop("prompt_hash")
    cut, unversioned = [lines[0]], [orjson.dumps(header)]
    for raw in lines[1:]:
        obj = orjson.loads(raw)
        if obj.get("tool", {}).get("tool_name") == "get_appointment":
            obj["tool"]["output_truncated"] = True
        cut.append(orjson.dumps(obj))
        obj = orjson.loads(raw)
        obj.get("llm", {}).pop("prompt_version", None)
        unversioned.append(orjson.dumps(obj))
    (d / "truncated.jsonl").write_bytes(b"\n".join(cut) + b"\n")
    (d / "unversioned.jsonl").write_bytes(b"\n".join(unversioned) + b"\n")
    # Variance: a model that takes the bad path on every third call.
    coin = load_agent(f"{ROOT / 'tests' / 'data' / 'harness' / 'coin_agent.py'}:run")
    coin.run.__globals__["CALLS"]["model"] = 0
    record(coin, {}, str(d / "coin.jsonl"), redactor=_red(coin), seed=1)
    replay(read_trace(d / "coin.jsonl"), coin, str(d / "coin-trials.jsonl"), redactor=_red(coin), llm="live", trials=3)
    return {p.stem: p for p in d.iterdir()}


def runs(path: Path) -> list[Any]:
    return read_runs(str(path)).runs


def test_original_alone_is_replayable_and_waits_for_a_replay(cases: dict[str, Path]) -> None:
    result = triage(read_trace(cases["original"]))
    assert result.replayability.verdict in ("replayable", "partial")
    assert result.verdict is None and result.reproduction is None
    assert [s.state for s in result.steps] == ["passed", "pending", "pending"]


def test_failure_that_comes_back_with_recorded_tools_is_model_or_prompt(cases: dict[str, Path]) -> None:
    result = triage(read_trace(cases["original"]), runs(cases["same"]))
    assert result.reproduction is not None and (result.reproduction.trials, result.reproduction.reproduced) == (3, 3)
    assert result.verdict == "model_or_prompt"
    doc = triage_json(result)
    assert doc["reproduction"]["trials"] == 3 and doc["reproduction"]["reproduced"] == 3
    llm_ids = {s.span_id for s in read_trace(cases["original"]).spans if s.kind.value == "llm"}
    assert doc["failure"]["span_id"] in llm_ids  # the final claim
    assert any(e["span_id"] for e in doc["evidence"])


def test_prompt_version_change_is_code_or_config_change(cases: dict[str, Path]) -> None:
    original = read_trace(cases["original"])
    result = triage(original, runs(cases["fixed"]))
    assert result.verdict == "code_or_config_change"
    first_llm = min((s for s in original.spans if s.kind.value == "llm"), key=lambda s: s.seq)
    assert result.evidence[0].span_id == first_llm.span_id
    assert "llm.prompt_version" in result.evidence[0].reason
    assert any("prompt_versions.scheduler.system" in e.reason for e in result.evidence)


def test_stale_tool_output_is_data_or_integration_pointing_at_the_read(cases: dict[str, Path]) -> None:
    original = read_trace(cases["original"])
    result = triage(original, runs(cases["fresh"]))
    assert result.reproduction is not None and result.reproduction.reproduced == 0
    assert result.verdict == "data_or_integration"
    thursday = next(s for s in original.spans if s.data.get("tool_name") == "list_open_slots")
    assert result.evidence[0].span_id == thursday.span_id and "stale" in result.evidence[0].reason


def test_truncated_output_is_not_replayable(cases: dict[str, Path]) -> None:
    damaged = read_trace(cases["truncated"])
    result = triage(damaged, runs(cases["same"]))
    assert result.verdict == "not_replayable"
    appt = next(s for s in damaged.spans if s.data.get("tool_name") == "get_appointment")
    assert appt.span_id in {e.span_id for e in result.evidence}
    assert [s.state for s in result.steps][0] == "failed"


def test_missing_prompt_version_is_a_caveat_that_lowers_confidence(cases: dict[str, Path]) -> None:
    alone = triage(read_trace(cases["unversioned"]))
    assert alone.verdict is None and alone.steps[0].state == "passed"  # a caveat does not stop triage
    result = triage(read_trace(cases["unversioned"]), runs(cases["same"]))
    assert result.verdict == "model_or_prompt" and result.confidence == "medium"  # high, lowered by the caveat
    (caveat,) = [f for f in result.caveats if f.field == "llm.prompt_version"]
    assert caveat.grade == "caveat" and "rendered system prompt's hash" in caveat.workaround
    assert [r.rule for r in result.reasons] == ["caveats", "reproduction", "most_reproduce", "confidence"]
    doc = triage_json(result)
    assert doc["confidence"] == "medium" and doc["reasons"][-1]["rule"] == "confidence"
    assert doc["caveats"][0]["workaround"] == caveat.workaround


def test_rare_comeback_is_variance(cases: dict[str, Path]) -> None:
    result = triage(read_trace(cases["coin"]), runs(cases["coin-trials"]))
    assert result.reproduction is not None
    assert (result.reproduction.trials, result.reproduction.reproduced) == (3, 1)
    assert result.verdict == "variance"


def test_failing_span_limits_the_comparison_and_unknown_ids_are_refused(cases: dict[str, Path]) -> None:
    original = read_trace(cases["original"])
    appt = next(s for s in original.spans if s.data.get("tool_name") == "get_appointment")
    # Up to get_appointment the fixed agent made the same calls: the named failure comes back.
    result = triage(original, runs(cases["fixed"]), failing_span=appt.span_id)
    assert result.reproduction is not None and result.reproduction.reproduced == 1
    with pytest.raises(TriageError, match="no span 'nope'"):
        triage(original, failing_span="nope")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


def test_cli_json_and_text(cases: dict[str, Path]) -> None:
    code, out, err = cli("triage", str(cases["original"]), str(cases["fixed"]), "--format", "json")
    assert code == 0, err
    doc = orjson.loads(out)
    assert doc["verdict"] == "code_or_config_change"
    assert set(doc) >= {"verdict", "replayability", "reproduction", "evidence"}
    assert all(set(e) >= {"span_id", "reason"} for e in doc["evidence"])
    code, out, _ = cli("triage", str(cases["original"]), str(cases["same"]))
    assert code == 0
    assert "verdict: model_or_prompt" in out and "reproduced in 3 of 3 trials" in out
    code, _, err = cli("triage", str(cases["original"]), "--failing-span", "nope")
    assert code == 2 and "no span 'nope'" in err


def test_cli_runs_the_replays_itself_with_an_agent(cases: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY.decode())
    code, out, err = cli("triage", str(cases["original"]), "--agent", f"{AGENT}:run_fixed", "--trials", "2",
                         "--format", "json")
    assert code == 0, err
    doc = orjson.loads(out)
    assert doc["reproduction"]["trials"] == 2 and doc["verdict"] == "code_or_config_change"


def test_trials_run_by_the_agent_are_named_by_run_not_after_a_removed_file(
        cases: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --replay-out the trials' temporary file is removed: they are named by run id, and the
    header says they were not kept (issue 23: they read `replay.jsonl#replay-1-of-...`)."""
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY.decode())
    code, out, err = cli("triage", str(cases["original"]), "--agent", f"{AGENT}:run", "--trials", "2")
    assert code == 0, err
    run = read_trace(str(cases["original"])).header["run_id"]
    assert "against 2 replays run now by --agent (not kept: --replay-out FILE keeps them)" in out.splitlines()[0]
    assert f"   - replay-1-of-{run}: " in out and f"   - replay-2-of-{run}: " in out
    assert "replay.jsonl" not in out


@pytest.mark.parametrize(("sample", "verdict"), [
    ("scheduling", "code_or_config_change"),        # prompt v7 -> v8 is the first divergence
    ("subscription_pause", "data_or_integration"),  # the retry's account id is rebuilt between model and tool
    ("order_lookup", "variance"),                   # one unchanged trial: the model chose otherwise on the same inputs
])
def test_bundled_samples_get_the_verdicts_docs_triage_states(sample: str, verdict: str) -> None:
    folder = ROOT / "sample_runs" / sample
    result = triage(read_trace(folder / "original.jsonl"), [read_trace(folder / "replay.jsonl")])
    assert result.replayability.verdict == "replayable"
    assert result.verdict == verdict
    assert result.evidence and all(e.span_id is None or isinstance(e.span_id, str) for e in result.evidence)


def test_reviewer_labels_show_in_triage_output(tmp_path: Path) -> None:
    import shutil

    from tracetui.core.diff import diff_traces
    from tracetui.core.diff.labels import Label, divergence_key, now_iso, save_label

    for name in ("original.jsonl", "replay.jsonl"):
        shutil.copy(ROOT / "sample_runs" / "scheduling" / name, tmp_path / name)
    original, rep = read_trace(tmp_path / "original.jsonl"), read_trace(tmp_path / "replay.jsonl")
    first = diff_traces(original, rep).first
    assert first is not None
    save_label(str(tmp_path / "replay.jsonl"), Label(divergence_key(first), "acceptable_alternative", "the fix", now_iso(),
                                                     first.type.value, first.original.span_id, first.replay.span_id))
    code, out, _ = cli("triage", str(tmp_path / "original.jsonl"), str(tmp_path / "replay.jsonl"))
    assert code == 0 and 'label replay.jsonl row 2 input_mismatch: acceptable_alternative "the fix"' in out
    code, out, _ = cli("triage", str(tmp_path / "original.jsonl"), str(tmp_path / "replay.jsonl"), "--format", "json")
    labels = orjson.loads(out)["reproduction"]["per_trial"][0]["labels"]
    assert labels == [{"row": 2, "type": "input_mismatch", "label": "acceptable_alternative", "note": "the fix"}]
