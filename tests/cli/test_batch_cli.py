"""`tracetui triage --batch DIR` (run_batch): text and JSON groups, exit codes, the progress bar."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from tracetui.cli.batch_cmd import MAX_CASES_SHOWN, render_batch_text, run_batch

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_runs"


def _builder() -> ModuleType:
    path = ROOT / "tests" / "data" / "batch" / "build_cases.py"
    spec = importlib.util.spec_from_file_location("batch_build_cases_cli", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


B = _builder()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(folder: Path | str, fmt: str = "text", err: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), err if err is not None else io.StringIO()
    code = run_batch(str(folder), fmt, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    return B.build(tmp_path / "cases")


def test_text_lists_groups_largest_first_with_their_cases(cases_dir: Path) -> None:
    code, out, err = _run(cases_dir)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{cases_dir}: 25 pairs: 19 diverged in 5 groups, 5 with no divergence, 1 unreadable"
    by_cause = lines.index("by cause (the verdict and what caused it; one cause may span several groups above):")
    causes = [line for line in lines[by_cause:] if " × " in line]
    assert causes[:2] == ["   9 × data_or_integration  integration tool get_billing_account",
                          "   6 × code_or_config_change  config prompt"]
    headers = [line for line in lines if " × " in line and line not in causes]
    assert headers == [
        "   9 × args_mismatch  tool get_billing_account  [tool.arguments.account_id]",
        "   6 × input_mismatch  llm scripted-scheduler  [llm.messages[].content, llm.prompt_version]",
        "   2 × missing_call  tool search_orders  [status, tool.arguments, tool.effect, tool.output, tool.output_truncated, tool.tool_name (+1)]",
        "   1 × decision_mismatch  llm gpt-4o  [llm.output.tool_calls[].arguments.customer_id]",
        "   1 × output_mismatch  tool get_billing_account  [tool.output.status]",
        "   5 × no divergence",
    ]
    first = lines.index(headers[0])
    for line, name in zip(lines[first + 1:first + 10], B.ARGS_CASES, strict=True):
        assert line.startswith(f"       {name}  (row 3)  verdict ")  # the verdict itself: tests/core/test_triage.py
    assert "unreadable (1):" in lines
    assert any(line.startswith("  broken: ") and "format not recognised" in line for line in lines)
    assert f"  {cases_dir / 'lonely' / 'original.jsonl'}" in lines and f"  {cases_dir / 'stray.replay.jsonl'}" in lines


def test_json_is_the_batch_report(cases_dir: Path) -> None:
    code, out, err = _run(cases_dir, "json")
    assert code == 1 and err == ""
    data = orjson.loads(out)
    assert data["schema_version"] == 1 and data["cases"] == 25
    assert [(g["count"], g["signature"]["type"]) for g in data["groups"]] == [(c, t) for c, t, *_ in B.EXPECTED_GROUPS]
    assert [c["name"] for c in data["groups"][1]["cases"]] == B.PROMPT_CASES
    assert len(data["no_divergence"]) == 5 and len(data["errors"]) == 1 and len(data["unpaired"]) == 2


def test_long_groups_are_cut_after_ten_names() -> None:
    report = {"folder": "runs", "cases": 13, "no_divergence": [], "errors": [], "unpaired": [],
              "groups": [{"signature": {"type": "args_mismatch", "kind": "tool", "name": "t", "fields": ["tool.arguments.x"]},
                          "count": 13, "cases": [{"name": f"c{i}", "row": 1} for i in range(13)]}]}
    lines = render_batch_text(report).splitlines()
    assert lines[0] == "runs: 13 pairs: 13 diverged in 1 group, 0 with no divergence"
    assert lines[3:3 + MAX_CASES_SHOWN] == [f"       c{i}  (row 1)" for i in range(10)]
    assert lines[-1] == "       ... and 3 more"


def test_exit_0_when_no_case_diverged(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for side in ("original", "replay"):
            (tmp_path / name / f"{side}.jsonl").write_bytes((SAMPLES / "scheduling" / "original.jsonl").read_bytes())
    code, out, _ = _run(tmp_path)
    assert code == 0
    assert "2 pairs: 0 diverged, 2 with no divergence" in out


def test_exit_2_when_only_unreadable_pairs_and_no_divergence(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "original.jsonl").write_text("nope\n")
    (tmp_path / "x" / "replay.jsonl").write_text("nope\n")
    code, out, _ = _run(tmp_path)
    assert code == 2
    assert "1 unreadable" in out


def test_exit_2_and_a_clear_message_for_a_missing_or_empty_folder(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path / "nope")
    assert (code, out) == (2, "")
    assert err == f"tracetui: error: {tmp_path / 'nope'}: no such folder\n"
    (tmp_path / "lonely").mkdir()
    (tmp_path / "lonely" / "original.jsonl").write_text("{}")
    code, out, err = _run(tmp_path)
    assert (code, out) == (2, "")
    assert "no original/replay pairs found; expected CASE/original.EXT + CASE/replay.EXT" in err
    assert "1 file(s) pair with nothing: " + str(tmp_path / "lonely" / "original.jsonl") in err


def test_progress_bar_on_a_terminal_for_more_than_20_pairs(cases_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")  # Rich draws nothing on a dumb terminal (TERM=dumb, TTY_COMPATIBLE=0)
    for var in ("TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(var, raising=False)
    tty = _Tty()
    code, out, err = _run(cases_dir, err=tty)
    assert code == 1
    assert "diffing pairs" in err and "25" in err
    assert out == _run(cases_dir)[1]  # the report is the same with or without the bar


def test_no_progress_bar_when_stderr_is_not_a_terminal_or_the_batch_is_small(tmp_path: Path, cases_dir: Path) -> None:
    assert _run(cases_dir)[2] == ""
    (tmp_path / "one").mkdir()
    for side in ("original", "replay"):
        (tmp_path / "one" / f"{side}.jsonl").write_bytes((SAMPLES / "scheduling" / f"{side}.jsonl").read_bytes())
    assert _run(tmp_path / "one", err=_Tty())[2] == ""


def test_batch_without_a_terminal_never_imports_rich(cases_dir: Path) -> None:
    code = (
        "import io, sys\n"
        "from tracetui.cli.batch_cmd import run_batch\n"
        f"run_batch({str(cases_dir)!r}, 'json', io.StringIO(), io.StringIO())\n"
        "print('rich' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_tracetui_triage_batch_runs_it(cases_dir: Path) -> None:
    """`tracetui triage --batch DIR [--format json]` is this command (wired in main.py)."""
    from tracetui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["triage", "--batch", str(cases_dir), "--format", "json"], stdout=out, stderr=err)
    assert code == 1, err.getvalue()
    assert orjson.loads(out.getvalue())["cases"] == 25
