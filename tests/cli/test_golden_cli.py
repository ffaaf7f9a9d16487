"""`tracetui golden run`: one line per case, every violated clause with its span, totals, exit codes."""

from __future__ import annotations

import argparse
import io
import json
import textwrap
from pathlib import Path

import pytest

from golden_cases import AGENT, SAMPLE, make_case
from tracetui.cli.golden_cmd import add_parser, exit_code, run_golden, totals_line


CONTRACT = textwrap.dedent("""\
    schema: tracetui-contract/1
    must_call:
      - {id: must-check-friday, tool: list_open_slots, args: {date: "2026-11-06"}}
    forbid_call:
      - {id: no-thursday-booking, tool: reschedule_appointment, args: {date: "2026-11-05"}}
    final_state:
      - {id: booked-friday, path: appointments.APT-77120.date, equals: "2026-11-06"}
    """)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "golden-cli-test-key-0123456789abcd")


def _case(root: Path, name: str, mode: str = "fixture", contract: str = CONTRACT) -> Path:
    return make_case(root, name, mode=mode, contract=contract)


def _run(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="tracetui")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    args = parser.parse_args(["golden", "run", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = run_golden(args, out, err)
    return code, out.getvalue(), err.getvalue()


def test_failing_case_lists_every_violated_clause_with_its_span(tmp_path: Path) -> None:
    _case(tmp_path / "golden", "friday")
    code, out, _ = _run(str(tmp_path / "golden"), "--agent", f"{AGENT}:run")
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "FAIL friday: 2 clause(s) violated: must-check-friday, booked-friday"
    assert lines[1].startswith("  - must-check-friday [trajectory] trial 1 span ")
    assert lines[2].startswith("  - booked-friday [state] trial 1 span ")
    assert "expected \"2026-11-06\"" in lines[2]
    assert lines[-1] == "0 passed, 1 failed, 0 diverged, 0 errors"


def test_mixed_folder_counts_and_exit_codes(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _case(golden, "a-fixture")
    _case(golden, "b-strict", mode="strict")
    code, out, _ = _run(str(golden), "--agent", f"{AGENT}:run_fixed")
    assert code == 0  # diverged does not fail the run by default
    assert out.splitlines()[0].startswith("PASS a-fixture: ")
    assert "DIVERGED b-strict: 1 of 1 trial(s) left the fixture; first: unrecorded_call list_open_slots" in out
    assert "  first divergence: unrecorded_call list_open_slots span " in out
    assert "convert the case to fixture mode" in out
    assert out.splitlines()[-1] == "1 passed, 0 failed, 1 diverged, 0 errors"
    code, _, _ = _run(str(golden), "--agent", f"{AGENT}:run_fixed", "--strict-divergence")
    assert code == 1
    (golden / "c-broken").mkdir()
    (golden / "c-broken" / "contract.yaml").write_text("nope")
    code, out, _ = _run(str(golden), "--agent", f"{AGENT}:run_fixed")
    assert code == 2
    assert "ERROR c-broken: " in out and out.splitlines()[-1] == "1 passed, 0 failed, 1 diverged, 1 error"


def test_json_report(tmp_path: Path) -> None:
    _case(tmp_path / "golden", "friday")
    code, out, _ = _run(str(tmp_path / "golden"), "--replay", str(SAMPLE / "original.jsonl"), "--format", "json")
    doc = json.loads(out)
    assert code == 1
    assert doc["schema_version"] == 1 and doc["exit_code"] == 1
    assert doc["counts"] == {"pass": 0, "fail": 1, "diverged": 0, "error": 0}
    (case,) = doc["cases"]
    assert case["outcome"] == "fail"
    assert [v["clause_id"] for v in case["violations"]] == ["must-check-friday"]
    assert set(case["violations"][0]) == {"clause_id", "layer", "message", "span_id", "trial"}
    code, out, _ = _run(str(tmp_path / "golden"), "--replay", str(SAMPLE / "fixture.jsonl"), "--format", "json")
    assert code == 0 and json.loads(out)["counts"]["pass"] == 1


def test_keep_writes_the_replay(tmp_path: Path) -> None:
    _case(tmp_path / "golden", "friday")
    code, out, _ = _run(str(tmp_path / "golden"), "--agent", f"{AGENT}:run_fixed", "--keep", str(tmp_path / "kept"),
                        "--trials", "2")
    assert code == 0
    assert (tmp_path / "kept" / "friday.jsonl").is_file()
    assert "replay kept: " in out and "(2 trial(s))" in out


def test_keep_never_overwrites_without_force(tmp_path: Path) -> None:
    """Issue 20 item 16: a kept replay already there is left as it is (error, exit 2) unless --force."""
    _case(tmp_path / "golden", "friday")
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "friday.jsonl").write_text("mine\n")
    code, out, _ = _run(str(tmp_path / "golden"), "--agent", f"{AGENT}:run_fixed", "--keep", str(tmp_path / "kept"))
    assert code == 2 and "--force" in out and "ERROR friday" in out
    assert (tmp_path / "kept" / "friday.jsonl").read_text() == "mine\n"
    code, out, _ = _run(str(tmp_path / "golden"), "--agent", f"{AGENT}:run_fixed", "--keep", str(tmp_path / "kept"),
                        "--force")
    assert code == 0 and (tmp_path / "kept" / "friday.jsonl").read_text() != "mine\n"


def test_missing_folder_and_bad_trials_exit_2(tmp_path: Path) -> None:
    code, out, err = _run(str(tmp_path / "nope"), "--agent", f"{AGENT}:run")
    assert (code, out) == (2, "") and "not a folder of golden cases" in err
    (tmp_path / "empty").mkdir()
    code, _, err = _run(str(tmp_path / "empty"))
    assert code == 2 and "no cases under" in err
    code, _, err = _run(str(tmp_path / "empty"), "--trials", "0")
    assert code == 2 and "--trials must be at least 1" in err


def test_agent_and_replay_are_exclusive() -> None:
    with pytest.raises(SystemExit):
        _run("golden", "--agent", "a:b", "--replay", "r.jsonl")


def test_exit_code_and_totals() -> None:
    assert exit_code({"pass": 2}) == 0
    assert exit_code({"diverged": 1}) == 0 and exit_code({"diverged": 1}, strict_divergence=True) == 1
    assert exit_code({"fail": 1, "error": 1}) == 2
    assert totals_line({"pass": 3, "fail": 1, "diverged": 1, "error": 0}) == "3 passed, 1 failed, 1 diverged, 0 errors"


def test_wired_into_main(tmp_path: Path) -> None:
    from tracetui.cli import main as cli

    if "golden" not in cli.COMMANDS:
        pytest.skip("`golden` not wired into tracetui/cli/main.py yet")
    _case(tmp_path / "golden", "friday")
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["golden", "run", str(tmp_path / "golden"), "--agent", f"{AGENT}:run_fixed"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert out.getvalue().splitlines()[-1] == "1 passed, 0 failed, 0 diverged, 0 errors"
