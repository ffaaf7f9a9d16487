"""`tracetui promote ORIGINAL [REPLAY] --to golden/`: writes the case, reports clauses, drops and redactions;
bad input is exit 2 with one line, never a traceback."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
import yaml

from tracetui.cli.promote_cmd import add_parser, run_promote
from tracetui.core.errors import TracetuiError
from tracetui.core.readers import read_trace

ROOT = Path(__file__).resolve().parents[2]
SCHED = ROOT / "sample_runs" / "scheduling"
PAUSE = ROOT / "sample_runs" / "subscription_pause"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not (SCHED / "original.jsonl").exists():
        pytest.skip("sample_runs not present")
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "0123456789abcdef0123456789abcdef")
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    monkeypatch.setenv("USER", "ci-bot")
    monkeypatch.chdir(tmp_path)


def _cli(*argv: str) -> tuple[int, str, str]:
    """Run the subcommand as main() would (the lead wires it there): TracetuiError -> 2 with one line."""
    main_mod = pytest.importorskip("tracetui.cli.main")
    out, err = io.StringIO(), io.StringIO()
    if "promote" in getattr(main_mod, "COMMANDS", ()):
        code = main_mod.main(["promote", *argv], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()
    parser = argparse.ArgumentParser(prog="tracetui")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["promote", *argv])
    try:
        code = run_promote(args, out, err)
    except TracetuiError as exc:
        print(f"tracetui: error: {exc}", file=err)
        code = 2
    return code, out.getvalue(), err.getvalue()


def test_promote_subscription_pause_text(tmp_path: Path) -> None:
    """The held-out style incident: the report names the case folder, every clause and the redactions."""
    code, out, err = _cli(str(PAUSE / "original.jsonl"), str(PAUSE / "replay.jsonl"), "--to", "golden")
    assert code == 0, err
    case = tmp_path / "golden" / "pause-subscription-claimed-without-receipt"
    assert sorted(p.name for p in case.iterdir()) == ["case.yaml", "contract.yaml", "trace.jsonl"]
    assert f"-> {Path('golden') / case.name}/" in out
    for needle in ("success_requires", "forbid_call", "max_calls", "must_call", "order",
                   '"account_id":"AC10442"', "redacted before writing", "0 dropped"):
        assert needle in out, needle
    meta = yaml.safe_load((case / "case.yaml").read_text())
    assert meta["owner"] == "ci-bot" and meta["mode"] == "fixture"
    assert read_trace(case / "trace.jsonl").issues == []


def test_promote_json_and_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--format json; --name, --failure, --owner, --mode, --agent, --seed-file all land in case.yaml.
    The agent is loaded (its SENSITIVE_FIELDS are redacted), so it is named from the checkout."""
    (tmp_path / "sample_runs").symlink_to(SCHED.parent)
    code, out, err = _cli(str(SCHED / "original.jsonl"), str(SCHED / "fixture.jsonl"), "--to", "g", "--name",
                          "Friday not offered", "--failure", "the agent apologised without checking Friday",
                          "--owner", "ana", "--mode", "strict", "--agent", "sample_runs/scheduling/agent.py:run",
                          "--seed-file", str(SCHED / "fixture_seed.json"), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["case"] == "friday-not-offered" and report["parent"] is None
    assert {c["section"] for c in report["clauses"]} >= {"must_call", "max_calls", "order", "final_state"}
    meta = yaml.safe_load((tmp_path / "g" / "friday-not-offered" / "case.yaml").read_text())
    assert meta["failure"] == "the agent apologised without checking Friday"
    assert (meta["owner"], meta["mode"], meta["agent"]) == ("ana", "strict", "sample_runs/scheduling/agent.py:run")
    assert meta["seed_file"] == "seed.json"
    seed = json.loads((tmp_path / "g" / "friday-not-offered" / "seed.json").read_text())
    assert seed == json.loads((SCHED / "fixture_seed.json").read_text())


def test_promote_twice_forks(tmp_path: Path) -> None:
    args = (str(SCHED / "original.jsonl"), str(SCHED / "replay.jsonl"), "--to", "golden", "--name", "friday")
    assert _cli(*args)[0] == 0
    code, out, _ = _cli(str(SCHED / "original.jsonl"), str(SCHED / "fixture.jsonl"), "--to", "golden", "--name",
                        "friday", "--mode", "strict")
    assert code == 0 and "fork of friday" in out
    meta = yaml.safe_load((tmp_path / "golden" / "friday-fork-2" / "case.yaml").read_text())
    assert meta["parent"] == "friday"


def test_raw_secret_source_is_redacted(tmp_path: Path) -> None:
    """A source trace with a raw email and API key: nothing raw in the case, the report counts them."""
    text = (SCHED / "original.jsonl").read_text().replace("<EMAIL_bbc9b75f>", "jane.doe@example.com")
    text = text.replace("Please try again later.", "Please try again later. sk-proj-AbCdEf0123456789GhIjKlMnOpQrStUv")
    (tmp_path / "raw.jsonl").write_text(text)
    code, out, err = _cli("raw.jsonl", "--to", "golden", "--name", "raw")
    assert code == 0, err
    assert "email x" in out and "api_key x" in out
    for f in (tmp_path / "golden" / "raw").iterdir():
        body = f.read_text()
        assert "jane.doe@example.com" not in body and "sk-proj-" not in body


def test_errors_are_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _cli("missing.jsonl", "--to", "golden")
    assert code == 2 and out == "" and "missing.jsonl" in err and "Traceback" not in err
    (tmp_path / "golden").write_text("not a folder")
    code, _, err = _cli(str(SCHED / "original.jsonl"), "--to", "golden")
    assert code == 2 and "golden" in err and "Traceback" not in err
    (tmp_path / "bad.json").write_text("{")
    code, _, err = _cli(str(SCHED / "original.jsonl"), "--to", "g2", "--seed-file", "bad.json")
    assert code == 2 and "--seed-file" in err
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "")
    code, _, err = _cli(str(SCHED / "original.jsonl"), "--to", "g3")
    assert code == 2 and "TRACETUI_REDACTION_KEY" in err and not (tmp_path / "g3").exists()
