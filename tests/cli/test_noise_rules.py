"""Noise rules the user controls (issue 18, item 4): `[tool.tracetui]` / `.tracetui.toml` / `--ignore`."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from tests.builders import TraceBuilder
from tracetui.cli.main import main
from tracetui.core.diff import diff_traces
from tracetui.core.diff.noise import NoiseConfigError, apply_rules, load_rules, rules_from_table

RUNS = Path(__file__).resolve().parents[2] / "sample_runs"
SCHED = RUNS / "scheduling"


def _diff(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _clock_run(prefix: str, now: str, status: str) -> object:
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", input={"q": "open?"})
    t.add("tool", "get_time", parent=root, arguments={}, output={"now": now})
    t.add("tool", "get_status", parent=root, arguments={"id": 1}, output={"status": status})
    return t.trace()


def test_a_clock_tools_output_declared_noise_is_no_divergence_and_the_rest_still_is() -> None:
    rules = rules_from_table({"noise": [{"tool": "get_time", "fields": ["tool.output"]}]}, "pyproject.toml")
    d = diff_traces(_clock_run("o", "10:00", "open"), _clock_run("r", "10:07", "open"))
    assert [x.original.name for x in d.divergences] == ["get_time"]
    noisy = apply_rules(d, rules)
    assert d.divergences == [] and d.divergent_rows == [] and noisy.said() == "1 field ignored by config"
    d = diff_traces(_clock_run("o", "10:00", "open"), _clock_run("r", "10:07", "closed"))
    apply_rules(d, rules)
    assert [(x.type.value, x.original.name) for x in d.divergences] == [("output_mismatch", "get_status")]


def test_project_file_and_cli_rules_are_applied_and_said_in_the_report_header(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui.toml").write_text('ignore = ["llm.prompt_version"]\n')
    (tmp_path / "pyproject.toml").write_text('[tool.tracetui]\n[[tool.tracetui.noise]]\nkind = "llm"\n'
                                             'fields = ["llm.messages[*].content"]\n')
    assert len(load_rules()) == 2
    code, text, _ = _diff(str(SCHED / "original.jsonl"), str(SCHED / "replay.jsonl"))
    assert code == 1
    assert text.splitlines()[2] == "6 fields ignored by config"
    assert "first divergence: decision_mismatch" in text  # the prompt's change hidden: the answer's is next
    code, out, _ = _diff(str(SCHED / "original.jsonl"), str(SCHED / "replay.jsonl"), "--format", "json",
                         "--ignore", "llm.output")
    report = orjson.loads(out)
    assert report["ignored_by_config"]["fields"] > 6 and report["ignored_by_config"]["rules"] == 3
    assert report["first_divergence"]["type"] != "decision_mismatch" or \
        all(not f["path"].startswith("llm.output") for f in report["first_divergence"]["fields"])


def test_no_rules_no_header_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _code, text, _ = _diff(str(SCHED / "original.jsonl"), str(SCHED / "replay.jsonl"))
    assert "ignored by config" not in text


def test_a_malformed_rule_names_the_file_and_the_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui.toml").write_text('[[noise]]\ntool = "get_time"\nfeilds = ["tool.output"]\n')
    with pytest.raises(NoiseConfigError, match=r"\.tracetui\.toml: \[\[tool\.tracetui\.noise\]\] entry 1: unknown key 'feilds'"):
        load_rules()
    code, _out, err = _diff(str(SCHED / "original.jsonl"), str(SCHED / "replay.jsonl"))
    assert code == 2 and "feilds" in err


TAU = RUNS / "foreign" / "tau-bench-airline.json"
TRIALS = (f"{TAU}#task-1-trial-0", f"{TAU}#task-1-trial-1")


def test_a_rule_picks_messages_by_role_the_simulated_users_rewording_on_real_tau_bench_trials(
        tmp_path: Path, monkeypatch) -> None:
    """Two real tau-bench trials of one task: the simulated user words its first message otherwise.
    Without rules that rewording is the first divergence; ``llm.messages[role=user]`` hides every
    user message (and only those: the selector looks the role up in the spans), so the first
    divergence moves past it, and the header counts what was hidden."""
    monkeypatch.chdir(tmp_path)
    code, out, _ = _diff(*TRIALS, "--format", "json")
    first = orjson.loads(out)["first_divergence"]
    assert (first["row"], first["type"], first["fields"][0]["path"]) == (1, "input_mismatch", "llm.messages[1].content")

    code, out, _ = _diff(*TRIALS, "--format", "json", "--ignore", "llm.messages[role=user]")
    report = orjson.loads(out)
    first = report["first_divergence"]
    assert (first["row"], first["type"]) == (1, "decision_mismatch")  # the agent's answer to it, next
    assert [f["path"] for f in first["fields"]] == ["llm.output.content"]
    assert report["ignored_by_config"]["fields"] == 20
    assert not any(f["path"].startswith(("llm.messages[1]", "llm.messages[3]"))
                   for d in report["divergences"] for f in d["fields"])

    # Another role picks other messages: the user's rewording is still first.
    code, out, _ = _diff(*TRIALS, "--format", "json", "--ignore", "llm.messages[role=assistant]")
    assert orjson.loads(out)["first_divergence"]["fields"][0]["path"] == "llm.messages[1].content"

    # In the project's config, with the assistant's wording too: the first divergence is the
    # agent's first different step (a tool call the other trial did not make).
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tracetui]\n[[tool.tracetui.noise]]\nkind = "llm"\n'
        'fields = ["llm.messages[role=user]", "llm.messages[role=assistant].content", "llm.output.content"]\n')
    code, text, _ = _diff(*TRIALS)
    assert code == 1 and "34 fields ignored by config" in text.splitlines()[2]
    assert "first divergence: decision_mismatch at row 2" in text and "llm.output.tool_calls" in text
