"""Triage on traces of other tools, as a new user tries them (issue 19): none records a prompt version
or a clock, and triage reaches a verdict with those caveats listed instead of stopping at step 1, and
the verdict matches the change that was made."""

from __future__ import annotations

from pathlib import Path

from corpus import corpus
from tracetui.core.readers import read_runs, read_trace
from tracetui.core.triage import triage

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT / "sample_runs" / "foreign" / "tau-bench-airline.json"


def test_tau_bench_trials_get_a_verdict_with_caveats() -> None:
    runs = read_runs(str(TAU)).runs
    result = triage(runs[0], runs[1:])
    assert result.steps[0].state == "passed" and result.replayability.verdict == "partial"
    assert {f.field for f in result.caveats} == {"header.clock", "llm.model", "llm.prompt_version"}
    assert result.verdict == "variance" and result.confidence == "medium"  # 0 of 3, the model choosing otherwise: high, lowered
    assert all(t.cause is not None and t.cause.kind == "model" for t in result.reproduction.per_trial)


def test_swe_agent_schema_change_is_code_or_config_change() -> None:
    a = corpus("swe-agent/marshmallow-1867__function_calling.traj")
    b = corpus("swe-agent/marshmallow-1867__function_calling_replace.traj")
    result = triage(read_trace(str(a)), [read_trace(str(b))])
    assert result.steps[0].state == "passed"
    assert result.verdict == "code_or_config_change" and result.cause == "config tool_schema"
    assert [r.rule for r in result.reasons][2] == "header_change"


def test_any_agent_run_gets_a_verdict_with_caveats() -> None:
    src = corpus("any-agent-trace/OPENAI_trace.json")
    same = triage(read_trace(str(src)), [read_trace(str(src))])
    assert same.steps[0].state == "passed" and same.verdict == "model_or_prompt"  # it comes back: 1 of 1
    assert any(f.field == "llm.messages" and f.workaround for f in same.caveats)
