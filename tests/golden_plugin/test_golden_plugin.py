"""The pytest plugin: `pytest --tracetui-golden DIR --tracetui-agent AGENT` collects one test per case,
fails with the violated clauses, skips a diverged case as DIVERGED, and does nothing without the option."""

from __future__ import annotations

import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from golden_cases import AGENT, ROOT, SAMPLE, make_case

pytest_plugins = ["pytester"]


CONTRACT = textwrap.dedent("""\
    schema: tracetui-contract/1
    must_call:
      - {id: must-check-friday, tool: list_open_slots, args: {date: "2026-11-06"}}
    final_state:
      - {id: booked-friday, path: appointments.APT-77120.date, equals: "2026-11-06"}
    """)

# The entry point (pyproject [project.entry-points.pytest11]) loads the plugin once installed; a
# checkout that was not reinstalled since loads it by name.
_INSTALLED = any(ep.name == "tracetui" and ep.value == "tracetui.pytest_plugin" for ep in entry_points(group="pytest11"))
PLUGIN_ARGS = () if _INSTALLED else ("-p", "tracetui.pytest_plugin")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "golden-plugin-test-key-0123456789")


def _case(root: Path, name: str, mode: str = "fixture") -> None:
    make_case(root, name, mode=mode, contract=CONTRACT)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # in-process run: other plugins with session-wide state (textual-snapshot, syrupy) stay out of it
    return pytester.runpytest(*PLUGIN_ARGS, "-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:syrupy",
                              "-p", "no:asyncio",
                              "-rs", *args)


def test_entry_point_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\ntracetui = "tracetui.pytest_plugin"' in text


def test_one_test_per_case_failing_with_the_violated_clauses(pytester: pytest.Pytester) -> None:
    _case(pytester.path / "golden", "friday")
    _case(pytester.path / "golden", "other")
    result = _run(pytester, "--tracetui-golden", "golden", "--tracetui-agent", f"{AGENT}:run", "-v")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*collected 2 items"])
    result.stdout.fnmatch_lines([
        "*golden/friday FAILED*",
        "*golden/other FAILED*",
        "*golden case friday (*friday):",
        "FAIL friday: 2 clause(s) violated: must-check-friday, booked-friday",
        "  - must-check-friday [[]trajectory] trial 1 span *: required call list_open_slots*",
        "  - booked-friday [[]state] trial 1 span *: final state appointments.APT-77120.date is \"2026-11-10\"*",
    ])
    assert result.ret == 1


def test_fixed_agent_passes_and_strict_case_is_skipped_as_diverged(pytester: pytest.Pytester) -> None:
    _case(pytester.path / "golden", "fixture-case")
    _case(pytester.path / "golden", "strict-case", mode="strict")
    result = _run(pytester, "--tracetui-golden", "golden", "--tracetui-agent", f"{AGENT}:run_fixed")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*DIVERGED strict-case: 1 of 1 trial(s) left the fixture; first: "
                                 "unrecorded_call list_open_slots*"])
    assert result.ret == 0
    strict = _run(pytester, "--tracetui-golden", "golden", "--tracetui-agent", f"{AGENT}:run_fixed",
                  "--tracetui-strict-divergence", "--tracetui-trials", "2")
    strict.assert_outcomes(passed=1, failed=1)
    strict.stdout.fnmatch_lines(["*convert the case to fixture mode*"])


def test_keyword_selection_and_replay_option(pytester: pytest.Pytester) -> None:
    _case(pytester.path / "golden", "friday")
    _case(pytester.path / "golden", "other")
    result = _run(pytester, "--tracetui-golden", "golden", "--tracetui-replay", str(SAMPLE / "fixture.jsonl"),
                  "-k", "friday")
    result.assert_outcomes(passed=1, deselected=1)


def test_damaged_case_fails_with_the_error(pytester: pytest.Pytester) -> None:
    _case(pytester.path / "golden", "friday")
    (pytester.path / "golden" / "friday" / "contract.yaml").write_text("schema: tracetui-contract/1\nbogus: 1\n")
    result = _run(pytester, "--tracetui-golden", "golden", "--tracetui-agent", f"{AGENT}:run_fixed")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["ERROR friday: *contract.yaml: bogus: unknown section 'bogus'; valid sections: *"])


def test_bad_folder_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--tracetui-golden", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tracetui-golden: nope: not a folder of golden cases*"])


def test_without_the_option_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    _case(pytester.path / "golden", "friday")
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    assert "golden" not in result.stdout.str()
