"""Acceptance of golden-set promotion (issue 6) as a new user runs it, with a held-out incident.

The incident is our own: a refunds agent (tests/data/golden_acceptance/refund_agent.py, written only against
docs/harness.md) copied the malformed order id the customer typed (``0RD-5521``) into ``issue_refund``, retried
the failed refund and then told the customer the refund was issued. Its tool outputs hold an email, a card
number, an ``sk-proj-`` key, a declared sensitive field and a > 50 KB order history. It is recorded with
``tracetui record``, replayed with the fix (strict and fixture), promoted with ``tracetui promote`` and run with
``tracetui golden run`` and the pytest plugin; then the commands are fed what a new user would feed them.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tracetui.cli.main import main
from tracetui.core.harness import Redactor, load_agent, record

KEY = "acceptance-key-0123456789abcdefg"  # 32 characters (TRACETUI_REDACTION_KEY)
AGENT = str(Path(__file__).resolve().parents[2] / "data" / "golden_acceptance" / "refund_agent.py")
INPUT = {"customer_id": "CUS-1001",
         "message": "My order 0RD-5521 arrived broken, please refund it. Reach me at ann.lee@example.com"}
CLOCK = ["--clock", "2026-03-02T09:00:00+00:00", "--seed", "1"]
RAW = ["ann.lee@example.com", "4111 1111 1111 1111", "4111111111111111", "sk-proj-Zq8mT3vLx9Rk2PwA7nB4cD6eF1gH5jK0",
       "Zq8mT3vLx9Rk2PwA7nB4cD6eF1gH5jK0", "1984-07-12"]
SAMPLES = Path(__file__).resolve().parents[3] / "sample_runs"


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main([str(a) for a in argv], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return rc, out.getvalue(), err.getvalue()


def promote(*argv: object) -> dict:
    rc, out, err = cli("promote", *argv, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


def golden(*argv: object) -> tuple[int, dict]:
    rc, out, err = cli("golden", "run", *argv, "--format", "json")
    assert rc in (0, 1, 2) and out, err
    return rc, json.loads(out)


def spans(path: Path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()[1:]), key=lambda s: s["seq"])


def tool_spans(path: Path, tool: str) -> list[dict]:
    return [s for s in spans(path) if s["kind"] == "tool" and s["name"] == f"execute_tool {tool}"]


def contract(case: Path) -> dict:
    return yaml.safe_load((case / "contract.yaml").read_text())


@pytest.fixture(autouse=True)
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The incident recorded once, replayed with the fix (strict, fixture); plus an unredacted recording."""
    d = tmp_path_factory.mktemp("incident")
    mp = pytest.MonkeyPatch()
    mp.setenv("TRACETUI_REDACTION_KEY", KEY)
    mp.chdir(d)
    try:
        assert cli("record", f"{AGENT}:run", "--input", json.dumps(INPUT), *CLOCK, "--out", "original.jsonl")[0] == 0
        rc, out, _ = cli("replay", "original.jsonl", f"{AGENT}:run_fixed", "--llm", "live", "--out", "replay.jsonl")
        assert rc == 1 and "unrecorded_call" in out  # the fix reads get_order, which the incident never did
        rc, _, err = cli("replay", "original.jsonl", f"{AGENT}:run_fixed", "--llm", "live", "--mode", "fixture",
                         "--out", "fixture.jsonl")
        assert rc == 0, err
        # a source that still holds raw values (another tool's export, an old recording): no rule ran
        record(load_agent(f"{AGENT}:run"), INPUT, str(d / "raw.jsonl"), redactor=Redactor(KEY.encode(), rules=[]),
               clock="2026-03-02T09:00:00+00:00", seed=1)
        assert "ann.lee@example.com" in (d / "raw.jsonl").read_text()
    finally:
        mp.undo()
    return {name: d / f"{name}.jsonl" for name in ("original", "replay", "fixture", "raw")}


@pytest.fixture()
def cases(runs: dict[str, Path]) -> dict[str, Path]:
    """golden/ with the fixture-mode case and the strict case of the incident."""
    fx = promote(runs["original"], runs["fixture"], "--to", "golden", "--name", "refund-fixture", "--owner", "qa",
                 "--agent", f"{AGENT}:run_fixed")
    st = promote(runs["original"], runs["replay"], "--to", "golden", "--name", "refund-strict")
    assert (fx["mode"], st["mode"]) == ("fixture", "strict")
    return {"fixture": Path(fx["path"]), "strict": Path(st["path"])}


# ------------------------------------------------------------------ promotion: contract, fixture, provenance
def test_the_derived_contract_states_the_failure(cases: dict[str, Path]) -> None:
    c = contract(cases["fixture"])
    assert [(f["tool"], f["args"]) for f in c["forbid_call"]] == [("issue_refund", {"order_id": "0RD-5521"})]
    assert [(m["tool"], m["max"]) for m in c["max_calls"]] == [("issue_refund", 1)]  # the incident refunded twice
    assert [(m["tool"], m.get("args")) for m in c["must_call"]] == [("get_order", None)]
    assert {(o["before"], o["after"]) for o in c["order"]} >= {("get_order", "issue_refund")}
    [claim] = c["success_requires"]
    assert (claim["tool"], claim["output"]) == ("issue_refund", {"status": "refunded"})
    assert re.search(claim["claim"], "Your refund of 42.00 USD for order 0RD-5521 has been issued.")
    assert not re.search(claim["claim"], "I couldn't process the refund for ORD-5521.")
    assert {"path": "orders.ORD-5521.status", "equals": "refunded"} in [
        {k: v for k, v in f.items() if k != "id"} for f in c["final_state"]]
    s = contract(cases["strict"])  # the strict fix never refunded: the whole failing write is forbidden
    assert s["forbid_call"][0]["args"]["order_id"] == "0RD-5521"
    assert [m["tool"] for m in s["must_call"]] == ["get_order"] and s["max_calls"][0]["max"] == 1
    assert s["success_requires"][0]["tool"] == "issue_refund" and "final_state" not in s


def leaked(case: Path, values: list[str]) -> list[tuple[str, str]]:
    """(file, value) for every raw value (or its JSON-escaped form) found in the case's bytes."""
    found = []
    for f in case.iterdir():
        data = f.read_bytes()
        for raw in values:
            forms = {raw, json.dumps(raw)[1:-1], json.dumps(json.dumps(raw))[3:-3], raw.replace("@", "\\u0040")}
            found += [(f.name, raw) for form in forms if form.encode() in data]
    return found


@pytest.mark.parametrize("source", ["original", "raw"])
def test_the_fixture_holds_no_secret_and_nothing_cut(runs: dict[str, Path], source: str) -> None:
    case = Path(promote(runs[source], "--to", "golden", "--agent", f"{AGENT}:run")["path"])
    assert leaked(case, RAW if source == "original" else RAW[:-1]) == []
    fixture = case / "trace.jsonl"
    [orders] = tool_spans(fixture, "list_orders")
    [before] = tool_spans(runs["original"], "list_orders")
    assert orders["tool"]["output"] == before["tool"]["output"] and orders["tool"].get("output_truncated") is not True
    assert len(json.dumps(orders["tool"]["output"])) > 50_000 and len(orders["tool"]["output"]["orders"]) == 300
    refunds = [r["tool"] for r in tool_spans(fixture, "issue_refund")]
    assert [r["arguments"]["order_id"] for r in refunds] == ["0RD-5521"] * 2  # still malformed, both attempts
    assert all(r["output"]["message"] == "unknown order id '0RD-5521'" for r in refunds)  # the error body, exact
    customer = tool_spans(fixture, "get_customer")[0]["tool"]["output"]
    assert customer["email"].startswith("<EMAIL_") and customer["card_on_file"].startswith("<CARD_")
    assert "<API_KEY_" in customer["note"]
    if source == "raw":  # redacted while promoting, with the project key: the same tokens as the recording
        assert customer["email"] == tool_spans(runs["original"], "get_customer")[0]["tool"]["output"]["email"]
        assert yaml.safe_load((case / "case.yaml").read_text())["redactions"].get("email", 0) > 0


def test_promote_redacts_the_declared_sensitive_fields_of_a_raw_source(runs: dict[str, Path]) -> None:
    case = Path(promote(runs["raw"], "--to", "golden", "--agent", f"{AGENT}:run")["path"])
    assert leaked(case, ["1984-07-12"]) == []


def test_case_yaml_provenance(runs: dict[str, Path], cases: dict[str, Path]) -> None:
    case = yaml.safe_load((cases["fixture"] / "case.yaml").read_text())
    header = json.loads(runs["original"].read_text().splitlines()[0])
    assert case["source"]["sha256"] == hashlib.sha256(runs["original"].read_bytes()).hexdigest()
    assert (case["source"]["file"], case["source"]["run_id"]) == ("original.jsonl", header["run_id"])
    assert case["source"]["span_count"] == len(spans(runs["original"]))
    assert case["dropped_spans"] == []  # the help article read after the answer is kept: a strict replay makes it
    assert "retrieve help_articles" in {s["name"] for s in spans(cases["fixture"] / "trace.jsonl")}
    created = datetime.date.fromisoformat(case["created"])
    assert datetime.date.fromisoformat(case["review_by"]) == created + datetime.timedelta(days=90)
    assert (case["owner"], case["schema_version"], case["parent"], case["mode"]) == ("qa", 1, None, "fixture")
    assert "0RD-5521" in case["failure"]


def test_promoting_again_forks_and_never_overwrites(runs: dict[str, Path], cases: dict[str, Path]) -> None:
    before = {f.name: f.read_bytes() for f in cases["strict"].iterdir()}
    again = promote(runs["original"], runs["replay"], "--to", "golden", "--name", "Refund Strict")
    assert (again["case"], again["already_promoted"]) == ("refund-strict", True)  # the same input: nothing written
    fork = promote(runs["original"], "--to", "golden", "--name", "refund-strict")  # other input, same name
    assert (fork["case"], fork["parent"]) == ("refund-strict-fork-2", "refund-strict")
    assert yaml.safe_load(Path(fork["path"], "case.yaml").read_text())["parent"] == "refund-strict"
    assert promote(runs["original"], "--to", "golden", "--name", "other")["case"] == "refund-strict-fork-2"
    assert {f.name: f.read_bytes() for f in cases["strict"].iterdir()} == before
    assert not [p for p in Path("golden").iterdir() if p.name.startswith(".")]  # no temporary folder left


# ------------------------------------------------------------------ golden run
def test_strict_case_fails_the_incident_run_with_every_clause_and_span(runs: dict[str, Path],
                                                                      cases: dict[str, Path]) -> None:
    rc, rep = golden(cases["strict"], "--replay", runs["original"])
    [case] = rep["cases"]
    assert (rc, case["outcome"]) == (1, "fail")
    ids = {c["id"] for sec in ("must_call", "forbid_call", "max_calls", "success_requires")
           for c in contract(cases["strict"])[sec]}
    assert {v["clause_id"] for v in case["violations"]} == ids
    refunds = [s["span_id"] for s in tool_spans(runs["original"], "issue_refund")]
    by_clause = {v["clause_id"]: v["span_id"] for v in case["violations"]}
    assert by_clause["at-most-1-issue-refund"] == refunds[1]  # the second refund is the one over the limit
    assert {v["span_id"] for v in case["violations"] if v["clause_id"].startswith("no-")} == set(refunds)
    assert by_clause["issue-refund-receipt-before-claim"] in {s["span_id"] for s in spans(runs["original"])}
    rc, text, _ = cli("golden", "run", cases["strict"], "--replay", runs["original"])
    assert all(f"- {i} [" in text for i in ids) and "0 passed, 1 failed" in text


def test_strict_case_fails_the_incident_agent(cases: dict[str, Path]) -> None:
    rc, rep = golden(cases["strict"], "--agent", f"{AGENT}:run")
    assert (rc, rep["cases"][0]["outcome"]) == (1, "fail")
    assert {"no-issue-refund-0rd-5521-4200", "at-most-1-issue-refund"} <= {
        v["clause_id"] for v in rep["cases"][0]["violations"]}


def test_strict_case_diverges_on_the_fix(cases: dict[str, Path]) -> None:
    rc, rep = golden(cases["strict"], "--agent", f"{AGENT}:run_fixed")
    [case] = rep["cases"]
    assert (rc, case["outcome"], case["violations"]) == (0, "diverged", [])
    assert (case["first_divergence"]["type"], case["first_divergence"]["tool"]) == ("unrecorded_call", "get_order")
    assert any("fixture mode" in n for n in case["notes"])
    assert cli("golden", "run", cases["strict"], "--agent", f"{AGENT}:run_fixed", "--strict-divergence")[0] == 1


def test_fixture_case_passes_the_fix_and_fails_the_incident(cases: dict[str, Path]) -> None:
    rc, rep = golden(cases["fixture"])  # the case's own agent: the fix
    assert (rc, rep["cases"][0]["outcome"]) == (0, "pass")
    rc, rep = golden(cases["fixture"], "--agent", f"{AGENT}:run")
    [case] = rep["cases"]
    assert (rc, case["outcome"]) == (1, "fail")
    violated = {v["clause_id"] for v in case["violations"]}
    assert {"must-call-get-order", "state-orders-ord-5521-status", "issue-refund-receipt-before-claim"} <= violated


def test_fixture_case_reports_the_forbidden_refunds(cases: dict[str, Path]) -> None:
    rc, rep = golden(cases["fixture"], "--agent", f"{AGENT}:run")
    violated = {v["clause_id"] for v in rep["cases"][0]["violations"]}
    assert {"no-issue-refund-0rd-5521", "at-most-1-issue-refund"} <= violated


def test_trials_scale_the_soft_threshold_and_list_every_trial(cases: dict[str, Path]) -> None:
    text = (cases["fixture"] / "contract.yaml").read_text()
    text = text.replace("count: 1", "count: 5").replace("at_least: 1", "at_least: 4")
    (cases["fixture"] / "contract.yaml").write_text(text)
    rc, rep = golden(cases["fixture"], "--trials", "3")
    assert (rc, rep["cases"][0]["outcome"]) == (0, "pass")
    assert any("3 of 3" in n for n in rep["cases"][0]["notes"])  # ceil(4 * 3 / 5) = 3
    rc, rep = golden(cases["fixture"], "--agent", f"{AGENT}:run", "--trials", "3")
    trials = {v["trial"] for v in rep["cases"][0]["violations"] if v["clause_id"] == "issue-refund-receipt-before-claim"}
    assert (rc, trials) == (1, {1, 2, 3})
    assert cli("golden", "run", cases["strict"], "--trials", "0")[0] == 2


def test_pytest_plugin_one_test_per_case(cases: dict[str, Path], tmp_path: Path) -> None:
    def pytest_(agent: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TRACETUI_REDACTION_KEY": KEY, "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run([sys.executable, "-m", "pytest", "--tracetui-golden", "golden", "golden", "-p",
                               "no:cacheprovider", "--tracetui-agent", agent, "-rfEs", "-q"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    bad = pytest_(f"{AGENT}:run")  # refund-strict: see test_strict_case_fails_the_incident_agent
    assert bad.returncode == 1 and "FAILED golden/refund-fixture" in bad.stdout, bad.stdout
    assert "golden/refund-strict" in bad.stdout
    for clause in ("must-call-get-order [trajectory] trial 1 span", "state-orders-ord-5521-status [state]",
                   "issue-refund-receipt-before-claim [outcome]"):
        assert clause in bad.stdout
    good = pytest_(f"{AGENT}:run_fixed")
    assert good.returncode == 0 and "1 passed, 1 skipped" in good.stdout, good.stdout
    assert "DIVERGED refund-strict" in good.stdout


# ------------------------------------------------------------------ what a new user feeds it by mistake
def test_promote_a_non_native_trace() -> None:
    case = Path(promote(SAMPLES / "order_lookup" / "original.otlp.json", SAMPLES / "order_lookup" / "replay.otlp.json",
                        "--to", "golden")["path"])
    assert [m["tool"] for m in contract(case)["must_call"]] == ["get_tracking"]
    assert json.loads((case / "trace.jsonl").read_text().splitlines()[0])["schema"] == "tracetui/1"
    assert golden(case, "--replay", SAMPLES / "order_lookup" / "original.otlp.json")[0] == 1
    assert golden(case, "--replay", SAMPLES / "order_lookup" / "replay.otlp.json")[0] == 0


def test_promote_without_a_replay_says_what_is_missing(runs: dict[str, Path]) -> None:
    rep = promote(runs["original"], "--to", "golden")
    c = contract(Path(rep["path"]))
    assert {"forbid_call", "max_calls", "success_requires"} <= set(c) and not {"must_call", "order"} & set(c)
    assert any("must_call" in n for n in rep["notes"])


def test_damaged_cases_are_reported_and_the_others_still_run(cases: dict[str, Path]) -> None:
    for name in ("bad-contract", "bad-case", "bad-trace"):
        shutil.copytree(cases["fixture"], Path("golden", name))
    Path("golden/bad-contract/contract.yaml").write_text("schema: tracetui-contract/1\nforbid_call:\n  - {tool: 3}\n")
    Path("golden/bad-case/case.yaml").write_text("name: [unclosed\n")
    Path("golden/bad-trace/trace.jsonl").write_text('{"schema": "tracetui/1"\n')
    shutil.rmtree(cases["strict"])
    rc, rep = golden("golden")
    outcome = {Path(c["path"]).name: (c["outcome"], c["message"]) for c in rep["cases"]}
    assert rc == 2 and outcome["refund-fixture"][0] == "pass"
    assert outcome["bad-contract"][0] == "error" and "contract.yaml" in outcome["bad-contract"][1]
    assert "forbid_call[0]" in outcome["bad-contract"][1]
    assert outcome["bad-case"][0] == "error" and "case.yaml" in outcome["bad-case"][1]
    assert outcome["bad-trace"][0] == "error" and "trace.jsonl" in outcome["bad-trace"][1]


def test_golden_run_on_nothing_runnable(cases: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for target, words in (("empty", "no cases"), ("golden/refund-fixture/trace.jsonl", "not a folder"),
                          ("missing", "not a folder")):
        rc, out, err = cli("golden", "run", target)
        assert rc == 2 and words in out + err, out + err
    Path("golden/refund-strict/case.yaml").write_text(
        (cases["strict"] / "case.yaml").read_text().replace("agent: null", "agent: nowhere.py:run"))
    rc, rep = golden(cases["strict"])
    assert (rc, rep["cases"][0]["outcome"]) == (2, "error") and "nowhere.py" in rep["cases"][0]["message"]
    rc, rep = golden(cases["fixture"], "--agent", f"{AGENT}:no_such_function")
    assert rc == 2 and "no_such_function" in rep["cases"][0]["message"]
    Path("kept.jsonl").write_text("mine")  # --keep given a file: an error, the file left alone
    rc, rep = golden(cases["fixture"], "--keep", "kept.jsonl")
    assert (rc, rep["cases"][0]["outcome"], Path("kept.jsonl").read_text()) == (2, "error", "mine")


def test_odd_names_stay_inside_the_golden_folder(runs: dict[str, Path]) -> None:
    rep = promote(runs["original"], "--to", "golden", "--name", "../../etc/x y!")
    assert Path(rep["path"]).resolve().parent == Path("golden").resolve() and rep["case"] == "etc-x-y"
    rc, _, err = cli("promote", runs["original"], "--to", "golden", "--name", "***")
    assert rc == 2 and "--name" in err
    rep = promote(runs["original"], runs["replay"], "--to", "golden", "--name", "Remboursement double ✓")
    assert rep["case"] == "remboursement-double"


def test_promote_errors_are_clear_and_write_nothing(runs: dict[str, Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    Path("damaged.jsonl").write_text('{"schema":"tracetui/1"\n')
    Path("a-file").write_text("x")
    for argv, words in (([runs["original"], "--to", "a-file"], "cannot create the golden folder"),
                        ([runs["original"], "--to", "/sys/golden"], "cannot create the golden folder"),
                        (["missing.jsonl", "--to", "golden"], "no such file"),
                        (["damaged.jsonl", "--to", "golden"], "damaged.jsonl")):
        rc, out, err = cli("promote", *argv)
        assert rc == 2 and words in err, err
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "short")
    rc, _, err = cli("promote", runs["original"], "--to", "golden")
    assert rc == 2 and "redaction key" in err
    assert not Path("golden").exists() and Path("a-file").read_text() == "x"


def test_promote_under_a_regular_file_fails_clearly_even_as_root(runs: dict[str, Path]) -> None:
    """The unwritable target that holds for root too (CI runs as root): a folder under a regular file."""
    Path("a-file").write_text("x")
    rc, _, err = cli("promote", runs["original"], "--to", "a-file/golden")
    assert rc == 2 and "a-file/golden" in err and "cannot create the golden folder" in err, err
    assert "Traceback" not in err and Path("a-file").read_text() == "x"


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux sysfs: a folder root cannot write into")
def test_promote_into_an_existing_folder_root_cannot_write_into(runs: dict[str, Path]) -> None:
    """The existing-folder branch (``cannot write there``), as root too: sysfs refuses new entries to everyone."""
    rc, _, err = cli("promote", runs["original"], "--to", "/sys/kernel")
    assert rc == 2 and "/sys/kernel" in err and "cannot write there" in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into chmod 555 folders; the two tests above run as root")
def test_promote_into_a_read_only_folder(runs: dict[str, Path]) -> None:
    Path("golden").mkdir(mode=0o555)
    try:
        rc, _, err = cli("promote", runs["original"], "--to", "golden")
        assert rc == 2 and "golden" in err and not list(Path("golden").iterdir())
    finally:
        Path("golden").chmod(0o755)
