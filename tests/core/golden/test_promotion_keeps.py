"""Promotion keeps what the case needs (issue 20, items 11-17): every read the original made, every call
of unknown effect, a final_state checked from the run's own output, a redacted --replay side, no promotion
of a recording that did not end without --force, no overwrite by --keep, and the same case for the same input.

The agent is the held-out refunds agent of the golden acceptance (tests/data/golden_acceptance/refund_agent.py):
after answering it reads a help article, after its last LLM call.

The last tests take ``reduce_trace`` and ``redact_trace`` rule by rule on runs built in the test (what the
mutation run of ``promote.py`` found unpinned: tests/mutation_equivalents.md, "core/golden/promote.py").
"""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import builders
import pytest
import yaml

from tracetui.cli.main import main
from tracetui.core.golden.promote import CONTRACT_SCHEMA, GoldenCaseError, promote, reduce_trace
from tracetui.core.golden.runner import load_case, run_case
from tracetui.core.harness import Redactor, load_agent, record
from tracetui.core.model import Trace
from tracetui.core.readers import read_trace

KEY = "keeps-test-key-0123456789abcdefgh"
AGENT = str(Path(__file__).resolve().parents[2] / "data" / "golden_acceptance" / "refund_agent.py")
INPUT = {"customer_id": "CUS-1001",
         "message": "My order 0RD-5521 arrived broken, please refund it. Reach me at ann.lee@example.com"}
EMPTY = {"schema": CONTRACT_SCHEMA, "trials": {"count": 1, "safety": "all", "soft": {"at_least": 1}}}


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main([str(a) for a in argv], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("keeps") / "original.jsonl"
    record(load_agent(f"{AGENT}:run"), INPUT, str(out), redactor=Redactor(KEY.encode()),
           clock="2026-03-02T09:00:00+00:00", seed=1)
    return out


def _promote(original: Path, to: Path, **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("name", None)
    kw.setdefault("failure", "the agent refunded a malformed order id")
    kw.setdefault("owner", "qa")
    kw.setdefault("today", dt.date(2026, 3, 2))
    return promote(read_trace(original), None, to, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ 11, 12
def test_a_strict_golden_run_of_the_same_calls_passes(incident: Path, tmp_path: Path) -> None:
    """Item 11: the read after the last LLM call is in the fixture, so a strict replay of an agent that
    makes the original's calls is served every one of them and passes (before: diverged on it)."""
    case = _promote(incident, tmp_path / "golden", contract=EMPTY, agent=f"{AGENT}:run")
    names = [s.name for s in read_trace(Path(case.path) / "trace.jsonl").spans]
    assert "retrieve help_articles" in names
    result = run_case(load_case(case.path))
    assert (result.outcome, result.first_divergence) == ("pass", None), result.message


def _write_unknown_effect(tmp_path: Path) -> Path:
    """A run of another tool: no read_tools, no effect; the failing write comes after the last LLM call."""
    def span(sid: str, parent: str | None, seq: int, kind: str, name: str, **section: object) -> dict:
        return {"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": name,
                "start_ns": 1_000 + seq, "end_ns": 2_000 + seq, "status": "ok", "error_type": None, kind: section}

    header = {"schema": "tracetui/1", "run_id": "run-unknown-1", "input": {"message": "cancel order 7"}}
    write = span("w", "r", 3, "tool", "execute_tool cancel_order", tool_name="cancel_order",
                 arguments={"order": "O-7"}, output={"error": "already shipped"})
    write.update(status="error", error_type="Conflict")
    spans = [span("r", None, 0, "agent", "invoke_agent shop", input={"message": "cancel order 7"},
                  output={"message": "Cancelled."}),
             span("l", "r", 1, "llm", "chat m", output={"role": "assistant", "content": "Cancelled."}),
             span("t", "r", 2, "tool", "execute_tool lookup", tool_name="lookup", arguments={"order": "O-7"},
                  output={"status": "shipped"}),
             write]
    path = tmp_path / "unknown.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in [header, *spans]))
    return path


def test_a_call_of_unknown_effect_is_kept(tmp_path: Path) -> None:
    """Item 12: with no read list, the failed cancel_order after the last decision is the incident: kept."""
    kept, dropped, _ = reduce_trace(read_trace(_write_unknown_effect(tmp_path)))
    assert [s.span_id for s in kept] == ["r", "l", "t", "w"] and dropped == []
    case = _promote(tmp_path / "unknown.jsonl", tmp_path / "golden")
    fixture = {s.span_id: s for s in read_trace(Path(case.path) / "trace.jsonl").spans}
    assert fixture["w"].status.value == "error" and fixture["w"].data["arguments"] == {"order": "O-7"}


# ------------------------------------------------------------------ 17
def test_the_same_input_gives_the_same_case_and_is_promoted_once(incident: Path, tmp_path: Path) -> None:
    """Item 17: two promotions of the same run on different days, into two folders, write the same fixture
    and contract (each case keeps its own date); into the same folder, the second says "already promoted
    as NAME" and writes nothing."""
    a = _promote(incident, tmp_path / "a", today=dt.date(2026, 3, 2))
    b = _promote(incident, tmp_path / "b", today=dt.date(2026, 4, 9))
    for f in ("trace.jsonl", "contract.yaml"):
        assert (Path(a.path) / f).read_bytes() == (Path(b.path) / f).read_bytes(), f
    assert yaml.safe_load((Path(b.path) / "case.yaml").read_text())["created"] == "2026-04-09"
    before = sorted(p.name for p in (tmp_path / "a").iterdir())
    again = _promote(incident, tmp_path / "a", today=dt.date(2026, 5, 1), name="another name")
    assert (again.already, again.name) == (True, a.name)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == before
    assert yaml.safe_load((Path(a.path) / "case.yaml").read_text())["created"] == "2026-03-02"  # the date kept


def test_promoting_the_bundled_incident_again_says_already_promoted(tmp_path: Path) -> None:
    """Item 17: the repository's own golden case, promoted again from its sample run, is found, not duplicated."""
    root = Path(__file__).resolve().parents[3]
    sched = root / "sample_runs" / "scheduling"
    if not (root / "golden" / "scheduling-friday-not-offered").is_dir():
        pytest.skip("bundled golden case not present")
    import shutil

    shutil.copytree(root / "golden", tmp_path / "golden")
    rc, out, err = cli("promote", sched / "original.jsonl", sched / "fixture.jsonl", "--to", tmp_path / "golden",
                       "--agent", sched / "agent.py:run_fixed", "--seed-file", sched / "fixture_seed.json")
    assert rc == 0, err
    assert "already promoted as scheduling-friday-not-offered" in out
    assert sorted(p.name for p in (tmp_path / "golden").iterdir()) == ["scheduling-friday-not-offered"]


# ------------------------------------------------------------------ 15
def test_a_recording_that_did_not_end_is_refused_unless_forced(incident: Path, tmp_path: Path) -> None:
    """Item 15: the writer killed mid-run (no root span: the last line never written) is refused, exit 2,
    naming the file and --force; with --force the case is written and says so."""
    lines = incident.read_text().splitlines()
    cut = tmp_path / "killed.jsonl"
    cut.write_text("\n".join(line for line in lines if '"parent_id":null' not in line.replace(" ", "")) + "\n")
    rc, out, err = cli("promote", cut, "--to", tmp_path / "golden")
    assert rc == 2 and "killed.jsonl" in err and "did not end" in err and "--force" in err
    assert not (tmp_path / "golden").exists() or not list((tmp_path / "golden").iterdir())
    rc, out, err = cli("promote", cut, "--to", tmp_path / "golden", "--force", "--format", "json")
    assert rc == 0, err
    rep = json.loads(out)
    assert any("did not end" in n for n in rep["notes"])
    assert "root span" in yaml.safe_load(Path(rep["path"], "case.yaml").read_text())["source"]["incomplete"]


# ------------------------------------------------------------------ 13
THREE = """\
schema: tracetui-contract/1
forbid_call:
  - {id: no-refund, tool: issue_refund}
max_calls:
  - {id: one-refund, tool: issue_refund, max: 1}
final_state:
  - {id: asks-to-check, path: output.message, equals: "I couldn't find that order; could you check the order number?"}
"""


def test_a_final_state_of_the_runs_own_output_is_checked_without_a_fixture(incident: Path, tmp_path: Path) -> None:
    """Item 13: a contract with three violations reports three on a run with no fixture state (a recording)."""
    case = _promote(incident, tmp_path / "golden", contract=yaml.safe_load(THREE))
    rc, out, err = cli("golden", "run", case.path, "--replay", incident, "--format", "json")
    [res] = json.loads(out)["cases"]
    assert rc == 1 and res["outcome"] == "fail"
    assert {v["clause_id"] for v in res["violations"]} == {"no-refund", "one-refund", "asks-to-check"}
    [state] = [v for v in res["violations"] if v["clause_id"] == "asks-to-check"]
    assert "has been issued" in state["message"]  # the run's own answer, quoted
    assert not any("asks-to-check: not checked" in n for n in res["notes"])


# ------------------------------------------------------------------ 14
RAW_EMAIL = "ann.lee@example.com"


def _raw_run(tmp_path: Path) -> Path:
    """A run holding a raw email in a write's arguments (another tool's export: nothing redacted)."""
    def span(sid: str, parent: str | None, seq: int, kind: str, name: str, **section: object) -> dict:
        return {"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": name,
                "start_ns": 1_000 + seq, "end_ns": 2_000 + seq, "status": "ok", "error_type": None, kind: section}

    header = {"schema": "tracetui/1", "run_id": "run-raw-1", "read_tools": []}
    spans = [span("r", None, 0, "agent", "invoke_agent mailer", input={"message": f"write to {RAW_EMAIL}"},
                  output={"message": f"Sent to {RAW_EMAIL}."}),
             span("l", "r", 1, "llm", "chat m", output={"role": "assistant", "content": "Sending."}),
             span("w", "r", 2, "tool", "execute_tool send_email", tool_name="send_email", effect="write",
                  arguments={"to": RAW_EMAIL, "body": "hello"}, output={"status": "sent"})]
    path = tmp_path / "raw.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in [header, *spans]))
    return path


def test_golden_run_redacts_a_raw_replay_before_checking(tmp_path: Path) -> None:
    """Item 14: the case holds the email's token; a raw replay is redacted with the project key first, so the
    forbidden call fires, and no raw value is printed (text or JSON)."""
    raw = _raw_run(tmp_path)
    case = _promote(raw, tmp_path / "golden")
    forbid = yaml.safe_load((Path(case.path) / "contract.yaml").read_text())["forbid_call"]
    assert RAW_EMAIL not in json.dumps(forbid) and "<EMAIL_" in json.dumps(forbid)
    for fmt in ("json", "text"):
        rc, out, err = cli("golden", "run", case.path, "--replay", raw, "--format", fmt)
        assert rc == 1 and RAW_EMAIL not in out + err, out
        assert forbid[0]["id"] in out


# --------------------------------------------------------------------------- reduce_trace, rule by rule
def _spans(*specs: tuple) -> Trace:
    """A run from ``(kind, name, span_id, parent_id, fields)`` tuples, in ``seq`` order."""
    spans = [builders.make_span(kind, name, span_id=sid, parent_id=parent, seq=i, **fields)
             for i, (kind, name, sid, parent, fields) in enumerate(specs)]
    return Trace(spans=spans)


def _reduce(trace) -> tuple[list[tuple[str, str | None]], dict[str, str], list[str]]:  # type: ignore[no-untyped-def]
    kept, dropped, notes = reduce_trace(trace)
    return [(s.span_id, s.parent_id) for s in kept], {d["span_id"]: d["reason"] for d in dropped}, notes


def test_the_causal_path_keeps_the_root_agents_llm_decisions_and_calls_and_drops_the_rest_with_a_reason() -> None:
    trace = _spans(("agent", "root", "r", None, {}), ("memory", "mem", "m", "r", {"key": "k"}),
                   ("agent", "sub", "a", "r", {}), ("llm", "plan", "l", "a", {}), ("decision", "pick", "d", "a", {}),
                   ("other", "log", "o", "r", {}), ("retrieval", "docs", "q", "a", {"query": "x"}),
                   ("tool", "get", "t", "a", {"arguments": {}}))
    kept, reasons, notes = _reduce(trace)
    assert kept == [("r", None), ("a", "r"), ("l", "a"), ("d", "a"), ("q", "a"), ("t", "a")]
    assert reasons == {"m": "memory span: not on the causal path", "o": "other span: not on the causal path"}
    assert notes == []


def test_an_ancestor_of_a_kept_span_is_kept_whatever_its_kind() -> None:
    trace = _spans(("agent", "root", "r", None, {}), ("other", "step", "o", "r", {}), ("memory", "m", "m", "o", {}),
                   ("tool", "get", "t", "m", {"arguments": {}}), ("other", "leaf", "x", "o", {}))
    kept, reasons, _ = _reduce(trace)
    assert kept == [("r", None), ("o", "r"), ("m", "o"), ("t", "m")]
    assert reasons == {"x": "other span: not on the causal path"}
    chain = _spans(("agent", "root", "r", None, {}), ("other", "a", "a", "r", {}), ("other", "b", "b", "a", {}),
                   ("other", "c", "c", "b", {}), ("other", "d", "d", "c", {}), ("tool", "get", "t", "d", {}))
    assert [sid for sid, _ in _reduce(chain)[0]] == ["r", "a", "b", "c", "d", "t"]  # as deep as the run


def test_a_parent_cycle_ends_the_walk_up() -> None:
    trace = _spans(("agent", "root", "r", None, {}), ("tool", "a", "a", "b", {}), ("tool", "b", "b", "a", {}),
                   ("other", "c", "c", "a", {}))
    kept, reasons, _ = _reduce(trace)
    assert kept == [("r", None), ("a", "b"), ("b", "a")]
    assert reasons == {"c": "other span: not on the causal path"}


def test_a_call_repeated_as_telemetry_is_dropped_only_when_everything_but_its_id_is_the_same() -> None:
    """Same kind, name, status and content, and the same call id or the same start and end: a duplicate of the
    first; anything else different keeps both."""
    call = {"arguments": {"id": 1}, "output": {"ok": True}}
    t0 = {"start_ns": 10, "end_ns": 20}
    trace = _spans(("agent", "root", "r", None, {}),
                   ("tool", "cancel", "t0", "r", {**call, **t0}),  # another tool first: looked past
                   ("tool", "get", "t1", "r", {**call, **t0}),
                   ("tool", "get", "t2", "r", {**call, **t0}),  # same times
                   ("tool", "get", "t3", "r", {**call, "call_id": "c", "start_ns": 30, "end_ns": 40}),
                   ("tool", "get", "t4", "r", {**call, "call_id": "c", "start_ns": 50, "end_ns": 60}),  # same call id
                   ("tool", "get", "t5", "r", {**call, "start_ns": 10, "end_ns": 21}),  # other end
                   ("tool", "get", "t6", "r", {**call, **t0, "status": "error"}),  # other status
                   ("tool", "list", "t7", "r", {**call, **t0, "tool_name": "get"}),  # other name
                   ("tool", "get", "t8", "r", {"arguments": {"id": 2}, "output": {"ok": True}, **t0}),  # other content
                   ("retrieval", "get", "t9", "r", {**call, **t0}),  # other kind
                   ("tool", "get", "t10", "r", {**call, "call_id": "d", **t0}),  # no id match, but the same times
                   ("tool", "get", "t11", "r", {**call, "call_id": "e", "start_ns": 70, "end_ns": 80}),
                   ("tool", "get", "t12", "r", {**call}))  # no times, no id
    kept, reasons, _ = _reduce(trace)
    assert reasons == {"t2": "duplicate telemetry of span t1", "t4": "duplicate telemetry of span t3"}
    assert [sid for sid, _ in kept] == ["r", "t0", "t1", "t3", "t5", "t6", "t7", "t8", "t9", "t10", "t11", "t12"]
    untimed = _spans(("agent", "root", "r", None, {}), ("tool", "get", "a", "r", {**call}),
                     ("tool", "get", "b", "r", {**call}))
    assert _reduce(untimed)[1] == {}  # no times and no call id: nothing says they are one call


def test_a_span_whose_parent_is_absent_is_re_parented_to_the_root_and_said_so() -> None:
    trace = _spans(("agent", "root", "r", None, {}), ("tool", "get", "t", "gone", {"arguments": {}}),
                   ("llm", "plan", "l", None, {"attributes": {"tracetui.missing_parent": "p9", "x": 1}}))
    kept, dropped, notes = reduce_trace(trace)
    assert [(s.span_id, s.parent_id) for s in kept] == [("r", None), ("t", "r"), ("l", "r")]
    assert kept[2].attributes == {"x": 1}  # the reader's mark removed
    assert dropped == []
    assert notes == ["span t (get) had parent gone, absent from the run; re-parented to the root r",
                     "span l (plan) had parent p9, absent from the run; re-parented to the root r"]
    # the root is the first span without a parent, not the first span: a child may come before it
    trace = _spans(("tool", "get", "t", "r", {"arguments": {}}), ("agent", "root", "r", None, {}),
                   ("tool", "put", "u", "gone", {"arguments": {}}))
    assert _reduce(trace)[0] == [("t", "r"), ("r", None), ("u", "r")]


def test_without_a_root_the_first_orphan_becomes_the_fixtures_root() -> None:
    trace = _spans(("agent", "a", "a", None, {"attributes": {"tracetui.missing_parent": "p0"}}),
                   ("tool", "get", "t", "p1", {"arguments": {}}))
    kept, _, notes = reduce_trace(trace)
    assert [(s.span_id, s.parent_id, dict(s.attributes)) for s in kept] == [("a", None, {}), ("t", "a", {})]
    assert notes == ["span a (a) had parent p0, absent from the run; it is the fixture's root",
                     "span t (get) had parent p1, absent from the run; re-parented to the root a"]
    trace = _spans(("tool", "get", "t", "p1", {"arguments": {}}), ("llm", "plan", "l", "p2", {}))
    kept, _, notes = reduce_trace(trace)
    assert [(s.span_id, s.parent_id) for s in kept] == [("t", None), ("l", "t")]
    assert notes[0] == "span t (get) had parent p1, absent from the run; it is the fixture's root"


def test_the_kept_spans_come_in_seq_order_with_their_values_untouched() -> None:
    from dataclasses import replace

    trace = _spans(("agent", "root", "r", None, {}), ("tool", "get", "t", "r", {"arguments": {"id": "O--12 "}}),
                   ("llm", "plan", "l", "r", {"output": {"content": "x" * 5000}}))
    trace.spans = [replace(trace.spans[1], seq=5), trace.spans[0], trace.spans[2]]  # t last by seq, first in the list
    kept, _, _ = reduce_trace(trace)
    assert [s.span_id for s in kept] == ["r", "l", "t"]
    assert kept[2].data == {"arguments": {"id": "O--12 "}, "tool_name": "get"}
    assert kept[1].data["output"]["content"] == "x" * 5000


# --------------------------------------------------------------------------- redact_trace
def test_a_redacted_copy_hides_values_in_names_data_attributes_and_the_header_but_ids_hashes_and_times() -> None:
    from tracetui.core.golden.promote import redact_trace
    from tracetui.core.model import ReadIssue

    email = "ann.lee@example.com"
    b = builders.TraceBuilder()
    root = b.add("agent", f"support for {email}", input={"from": email}, attributes={"user": email})
    b.add("tool", "lookup", root, arguments={"email": email}, output={"api_key": "k-1"})
    trace = b.trace()
    kept = {k: email for k in ("schema", "trace_id", "started_at", "start_ns", "clock", "seed", "tool_schema_hash",
                               "prompt_hash", "redaction", "trial", "trials")}
    trace.header = {**kept, "run_id": f"run for {email}", "user": email}
    trace.spans = list(reversed(trace.spans))
    trace.issues = [ReadIssue(path="run.jsonl", line=1, where="", message="a warning", severity="warning")]
    red = redact_trace(trace, Redactor(KEY.encode()))
    assert {k: red.header[k] for k in kept} == kept  # structural fields copied as they are
    assert email not in red.header["run_id"] and email not in red.header["user"]
    assert red.header["run_id"].startswith("run for <EMAIL_")
    assert [s.span_id for s in red.spans] == ["s0", "s1"]  # seq order
    root_span, call = red.spans
    assert root_span.name.startswith("support for <EMAIL_") and root_span.attributes["user"].startswith("<EMAIL_")
    assert root_span.data["input"]["from"] == call.data["arguments"]["email"] != email  # the same token
    assert call.data["output"]["api_key"].startswith("<SECRET_")
    assert red.issues == trace.issues and red.issues is not trace.issues
    assert trace.header["user"] == email and trace.spans[1].name == f"support for {email}"  # the run untouched


def test_a_tools_sensitive_fields_are_redacted_in_its_calls_and_remembered_for_the_spans_after() -> None:
    from tracetui.core.golden.promote import redact_trace

    note = "leave it with the porter"
    b = builders.TraceBuilder()
    root = b.add("agent", "agent", input={"note": note})
    b.add("tool", "lookup", root, arguments={"id": 1}, output={"note": note})
    b.add("llm", "reply", root, output={"content": f"They said: {note}", "note": "kept"})
    red = redact_trace(b.trace(), Redactor(KEY.encode(), sensitive_fields={"lookup": ["note"]}))
    root_span, call, reply = red.spans
    assert root_span.data["input"]["note"] == note  # before the tool revealed it, and not the tool's field
    assert call.data["output"]["note"] != note and call.data["output"]["note"].startswith("<")
    assert note not in reply.data["output"]["content"]  # remembered after the call
    assert reply.data["output"]["note"] == "kept"  # the field is the tool's, not every span's


def test_promoting_again_finds_the_case_past_hidden_and_broken_folders(tmp_path: Path) -> None:
    """A hidden folder (a copy, a temporary folder left by a crash) is not a case, and folders whose case.yaml is not
    a mapping, has no source, whose fixture differs (runs read from no file are told apart by their fixture's
    bytes), whose mode or replay differs, or, written before ``replay_sha256``, whose contract differs or is
    missing, are looked past: the same input is still found as promoted, nothing written."""
    import shutil

    b = builders.TraceBuilder()
    b.add("tool", "refund", b.add("agent", "agent", output="Refunded."), arguments={"id": 1})
    trace = b.trace()
    kw = {"name": "refund-twice", "failure": "the agent refunded twice", "owner": "qa", "today": dt.date(2026, 3, 2)}
    golden = tmp_path / "golden"
    first = promote(trace, None, golden, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]
    shutil.copytree(first.path, golden / ".a-copy")
    (golden / "a-broken").mkdir()
    (golden / "a-broken" / "case.yaml").write_text("- not a mapping\n")
    (golden / "a-no-source").mkdir()
    (golden / "a-no-source" / "case.yaml").write_text("mode: strict\nsource: original.jsonl\n")
    shutil.copytree(first.path, golden / "a-other")  # another run read from no file: its fixture differs
    (golden / "a-other" / "trace.jsonl").write_bytes(b"{}\n")
    meta = yaml.safe_load((Path(first.path) / "case.yaml").read_text())

    def copy(name: str, source: dict, contract: bytes | None, mode: str = "strict") -> None:
        shutil.copytree(first.path, golden / name)
        (golden / name / "case.yaml").write_text(yaml.safe_dump({**meta, "source": source, "mode": mode}))
        if contract is None:
            (golden / name / "contract.yaml").unlink()
        else:
            (golden / name / "contract.yaml").write_bytes(contract)

    old_source = {k: v for k, v in meta["source"].items() if k != "replay_sha256"}
    same_contract = (Path(first.path) / "contract.yaml").read_bytes()
    copy("b-other-replay", {**meta["source"], "replay_sha256": "f" * 64}, same_contract)  # the replay decides
    copy("b-old-other-contract", old_source, b"schema: tracetui-contract/1\n")  # before replay_sha256: the contract
    copy("b-old-no-contract", old_source, None)
    copy("b-fixture-mode", meta["source"], same_contract, mode="fixture")
    copy("b-no-fixture", meta["source"], same_contract)
    (golden / "b-no-fixture" / "trace.jsonl").unlink()
    again = promote(trace, None, golden, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]
    assert (again.already, again.name) == (True, "refund-twice")
    assert len(list(golden.iterdir())) == 10


def _small_run(*, finished: bool = True) -> Trace:
    """An agent and one refund call: with its output, or (not finished) with neither output nor end time."""
    call = {"arguments": {"id": 1}, **({"output": {"ok": True}} if finished else {})}
    return _spans(("agent", "agent", "r", None, {"output": "Refunded."}), ("tool", "refund", "t", "r", call))


def test_the_mode_is_strict_or_fixture_and_anything_else_is_refused_naming_the_field(tmp_path: Path) -> None:
    kw = {"name": None, "failure": "the agent refunded twice", "owner": "qa", "today": dt.date(2026, 3, 2)}
    for mode in ("strict", "fixture"):
        case = promote(_small_run(), None, tmp_path / mode, redactor=Redactor(KEY.encode()), mode=mode,
                       **kw)  # type: ignore[arg-type]
        assert case.case["mode"] == mode
    with pytest.raises(GoldenCaseError) as exc:
        promote(_small_run(), None, tmp_path / "x", redactor=Redactor(KEY.encode()), mode="replay",
                **kw)  # type: ignore[arg-type]
    assert (exc.value.path, exc.value.where) == ("case.yaml", "mode")
    assert str(exc.value) == "case.yaml: mode: mode must be strict or fixture, not 'replay'"
    assert not (tmp_path / "x").exists()


def test_a_recording_that_did_not_end_is_refused_by_default(tmp_path: Path) -> None:
    kw = {"name": None, "failure": "the agent refunded twice", "owner": "qa", "today": dt.date(2026, 3, 2)}
    with pytest.raises(GoldenCaseError) as exc:
        promote(_small_run(finished=False), None, tmp_path, redactor=Redactor(KEY.encode()),
                **kw)  # type: ignore[arg-type]
    assert str(exc.value) == (
        "ORIGINAL: the recording did not end (span t (refund) was started but never finished (no output, no end "
        "time)): a case from it would test a run cut short; record the run again, or pass --force to promote it "
        "as it is")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_run_is_refused_naming_its_file(tmp_path: Path) -> None:
    kw = {"name": "x", "failure": "f", "owner": "qa", "today": dt.date(2026, 3, 2)}
    for path, named in (("", "ORIGINAL"), ("runs/a.jsonl", "runs/a.jsonl")):
        with pytest.raises(GoldenCaseError) as exc:
            promote(Trace(spans=[], path=path), None, tmp_path, redactor=Redactor(KEY.encode()),
                    **kw)  # type: ignore[arg-type]
        assert (exc.value.path, str(exc.value)) == (named, f"{named}: the run has no spans: nothing to promote")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- what promote writes besides the fixture
EMAIL = "ann.lee@example.com"


def _emailed_run() -> Trace:
    """An agent whose one refund call (a write) sends the customer's address; a replay-less promotion."""
    return _spans(("agent", "agent", "r", None, {"output": "Refunded."}),
                  ("tool", "refund", "t", "r", {"arguments": {"id": 1, "to": EMAIL}, "output": {"ok": True},
                                                  "effect": "write"}))


def _promote_small(trace: Trace, to: Path, redactor: Redactor | None = None,  # type: ignore[no-untyped-def]
                   **kw: object):
    kw = {"name": "case", "failure": "the agent refunded twice", "owner": "qa", "today": dt.date(2026, 3, 2), **kw}
    return promote(trace, None, to, redactor=redactor or Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]


def test_an_edited_contract_is_written_redacted_with_the_why_lines_of_its_own_clauses_only(tmp_path: Path) -> None:
    edited = {"schema": CONTRACT_SCHEMA, "max_calls": [{"id": "at-most-1-refund", "tool": "refund", "max": 1}],
              "must_call": [{"id": "notify", "tool": "notify", "args": {"to": EMAIL}}],
              "trials": {"count": 1, "safety": "all", "soft": {"at_least": 1}}}
    case = _promote_small(_emailed_run(), tmp_path, contract=edited)
    text = (Path(case.path) / "contract.yaml").read_text()
    assert text.startswith("# derived by tracetui promote from the run; edit freely (docs/golden.md)\n")  # no file
    whys = [line.split(":")[0] for line in text.splitlines() if line.startswith("# ") and ": " in line]
    assert whys == ["# at-most-1-refund"]  # the derived forbid_call's line is left out with its clause
    assert EMAIL not in text and case.contract["must_call"][0]["args"]["to"].startswith("<EMAIL_")


def test_a_seed_is_written_redacted_as_seed_json_and_named_in_the_case(tmp_path: Path) -> None:
    case = _promote_small(_emailed_run(), tmp_path / "a", seed={"customer": EMAIL, "n": 1})
    seed = json.loads((Path(case.path) / "seed.json").read_text())
    assert seed["n"] == 1 and seed["customer"].startswith("<EMAIL_")
    assert case.case["seed_file"] == "seed.json"
    bare = _promote_small(_emailed_run(), tmp_path / "b")
    assert bare.case["seed_file"] is None and not (Path(bare.path) / "seed.json").exists()


def test_the_redactions_count_what_was_replaced_in_the_files_written(tmp_path: Path) -> None:
    """Counted from the raw values written (the fixture, the failure statement, the dropped spans' names), not from
    the derivation's pass over both runs: a rule that fired only there is not listed."""
    replay = _spans(("agent", "agent", "r", None, {"output": "Refunded."}),
                    ("tool", "refund", "t", "r", {"arguments": {"id": 1, "api_key": "k-12345678"}}))
    case = promote(_emailed_run(), replay, tmp_path, name="case", failure=f"refunded {EMAIL}", owner="qa",
                   today=dt.date(2026, 3, 2), redactor=Redactor(KEY.encode()))
    assert case.redactions == {"email": 2}  # the fixture's argument and the failure statement
    assert case.case["redactions"] == {"email": 2}
    plain = _spans(("agent", "agent", "r", None, {"output": "Refunded."}),
                   ("tool", "refund", "t", "r", {"arguments": {}, "output": 1}))
    case = _promote_small(plain, tmp_path / "b", failure=f"the agent wrote to {EMAIL}")
    assert case.redactions == {"email": 1}  # a rule only the failure statement fired


def test_a_source_redacted_with_another_key_is_noted(tmp_path: Path) -> None:
    redactor = Redactor(KEY.encode())
    other = _emailed_run()
    other.header = {"redaction": {"key_id": "k-other"}}
    assert (f"the source was redacted with key k-other, promotion used key {redactor.key_id}: raw values found now "
            "get this key's tokens") in _promote_small(other, tmp_path / "a", redactor).notes
    same = _emailed_run()
    same.header = {"redaction": {"key_id": redactor.key_id}}
    unkeyed = _emailed_run()
    unkeyed.header = {"redaction": "none"}
    for i, run in enumerate((same, unkeyed, _emailed_run())):
        assert not any("redacted with key" in n for n in _promote_small(run, tmp_path / str(i), redactor).notes)



def test_a_run_read_from_a_file_is_found_again_by_its_hash_past_other_sources_cases(tmp_path: Path) -> None:
    from tracetui.core.readers.native import write_trace

    write_trace(str(tmp_path / "run.jsonl"), _emailed_run())
    golden = tmp_path / "golden"
    first = _promote_small(read_trace(tmp_path / "run.jsonl"), golden)
    meta = yaml.safe_load((Path(first.path) / "case.yaml").read_text())
    import shutil

    shutil.copytree(first.path, golden / "a-other-source")
    (golden / "a-other-source" / "case.yaml").write_text(
        yaml.safe_dump({**meta, "source": {**meta["source"], "sha256": "0" * 64}}))
    again = _promote_small(read_trace(tmp_path / "run.jsonl"), golden)
    assert (again.already, again.name) == (True, "case")
    import hashlib

    digest = hashlib.sha256((tmp_path / "run.jsonl").read_bytes()).hexdigest()
    assert meta["source"]["sha256"] == digest
    assert read_trace(Path(first.path) / "trace.jsonl").header["promoted"]["source_sha256"] == digest


def test_a_dropped_spans_name_is_written_redacted(tmp_path: Path) -> None:
    run = _spans(("agent", "agent", "r", None, {"output": "Refunded."}),
                 ("memory", f"notes on {EMAIL}", "m", "r", {"key": "k"}),
                 ("tool", "refund", "t", "r", {"arguments": {"id": 1}, "output": {"ok": True}}))
    case = _promote_small(run, tmp_path)
    (dropped,) = case.case["dropped_spans"]
    assert dropped["span_id"] == "m" and dropped["name"].startswith("notes on <EMAIL_")
    assert EMAIL not in (Path(case.path) / "case.yaml").read_text()


def test_the_fixture_header_records_the_promotion_and_the_case_its_source(tmp_path: Path) -> None:
    """``promoted`` in the fixture's header: the source's hash (None for a run read from no file), its span count,
    the spans dropped, the key id; ``source`` in case.yaml: no file, and a run id only when it is text."""
    run = _spans(("agent", "agent", "r", None, {"output": "Refunded."}), ("memory", "m", "m", "r", {"key": "k"}),
                 ("tool", "refund", "t", "r", {"arguments": {"id": 1}, "output": {"ok": True}}))
    run.header = {"run_id": 42}
    redactor = Redactor(KEY.encode())
    case = _promote_small(run, tmp_path, redactor)
    fixture = read_trace(Path(case.path) / "trace.jsonl")
    assert fixture.header["promoted"] == {"source_sha256": None, "spans_in_source": 3, "spans_dropped": 1,
                                          "redaction_key_id": redactor.key_id}
    assert (case.case["source"]["file"], case.case["source"]["run_id"]) == (None, None)


def test_a_case_is_named_from_the_name_given_else_the_failure_else_the_derivation(tmp_path: Path) -> None:
    replay = _spans(("agent", "agent", "r", None, {"output": "Refunded."}))
    run = _emailed_run()
    run.header = {"run_id": "Run 42"}
    kw = {"owner": "qa", "today": dt.date(2026, 3, 2), "redactor": Redactor(KEY.encode())}
    named = promote(run, replay, tmp_path / "a", name="My Case!", failure=None, **kw)  # type: ignore[arg-type]
    assert named.name == "my-case"
    text = (Path(named.path) / "contract.yaml").read_text()
    assert text.startswith("# derived by tracetui promote from the run and its replay; edit freely (docs/golden.md)\n")
    assert promote(run, replay, tmp_path / "b", name=None, failure="The agent refunded the wrong order",
                   **kw).name == "refunded-wrong-order"  # type: ignore[arg-type]
    assert promote(run, replay, tmp_path / "c", name=None, failure="the agent was to",
                   **kw).name == "run-42"  # type: ignore[arg-type]  # no significant word: the run id
    derived = promote(run, replay, tmp_path / "d", name=None, failure=None, **kw)  # type: ignore[arg-type]
    assert derived.name.startswith("wrong-refund-1-")  # the derivation's: the write the fix did not make
    with pytest.raises(GoldenCaseError) as exc:
        promote(run, replay, tmp_path / "e", name="¿?", failure=None, **kw)  # type: ignore[arg-type]
    assert (exc.value.path, exc.value.where, exc.value.reason) == (
        "case.yaml", "name", "name '¿?' has no letters or digits; give another --name")


def test_a_replay_read_from_no_file_is_identified_by_its_contract_and_found_again_whole(tmp_path: Path) -> None:
    import hashlib

    replay = _spans(("agent", "agent", "r", None, {"output": "Refunded."}))
    kw = {"name": "case", "failure": "f", "owner": "qa", "today": dt.date(2026, 3, 2)}
    first = promote(_emailed_run(), replay, tmp_path, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]
    contract = (Path(first.path) / "contract.yaml").read_bytes()
    assert first.case["source"]["replay_sha256"] == "contract:" + hashlib.sha256(contract).hexdigest()
    again = promote(_emailed_run(), replay, tmp_path, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]
    assert (again.already, again.path, again.parent) == (True, first.path, None)
    assert (again.case, again.contract) == (first.case, first.contract)  # as found there
    assert (again.files, again.dropped, again.redactions, again.kept) == (first.files, first.dropped, {}, first.kept)
    assert again.notes[-1] == "already promoted as case: nothing written (the same run, replay and mode)"
    fork = promote(_emailed_run(), None, tmp_path, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]
    assert (fork.name, fork.parent) == ("case-fork-2", "case")
    again = promote(_emailed_run(), None, tmp_path, redactor=Redactor(KEY.encode()), **kw)  # type: ignore[arg-type]
    assert (again.already, again.name, again.parent) == (True, "case-fork-2", "case")


def test_a_golden_folder_that_is_a_file_or_cannot_be_made_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for to, reason in ((tmp_path / "file", "cannot create the golden folder (File exists); choose another --to"),
                       (tmp_path / "file" / "golden", "cannot create the golden folder (Not a directory); "
                                                      "choose another --to")):
        with pytest.raises(GoldenCaseError) as exc:
            _promote_small(_emailed_run(), to)
        assert (exc.value.path, exc.value.reason) == (str(to), reason)


def test_the_case_names_itself_its_trace_and_its_owner_else_the_users_name_else_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _emailed_run()
    run.header = {"trace_id": "t-header"}
    run.trace_id = "t-file"
    case = _promote_small(run, tmp_path / "a", owner=None)
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.setenv("USERNAME", "win-user")
    run.header = {}
    other = _promote_small(run, tmp_path / "b", owner=None)
    monkeypatch.delenv("USERNAME")
    nobody = _promote_small(run, tmp_path / "c", owner=None)
    assert (case.case["name"], case.case["source"]["trace_id"]) == ("case", "t-header")
    assert other.case["source"]["trace_id"] == "t-file"  # the trace picked from the file when the header has none
    assert (other.case["owner"], nobody.case["owner"]) == ("win-user", "unknown")
