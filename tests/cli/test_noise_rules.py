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
