"""Promotion (issue 6, item 1): a failing run becomes golden/NAME/ with a redacted, reduced fixture, a
contract derived from the run and its fixed replay, and provenance; never overwriting a case."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from tracetui.core.golden.contract import check, load_contract
from tracetui.core.golden.promote import (
    GoldenCaseError,
    derive_contract,
    derive_name,
    parse_contract_text,
    promote,
    reduce_trace,
    slugify,
)
from tracetui.core.harness.redact import Redactor
from tracetui.core.readers import read_trace

ROOT = Path(__file__).resolve().parents[3]
SCHED = ROOT / "sample_runs" / "scheduling"
PAUSE = ROOT / "sample_runs" / "subscription_pause"
KEY = b"promote-test-key-0123456789abcdef"
RAW_EMAIL = "jane.doe@example.com"
RAW_KEY = "sk-proj-AbCdEf0123456789GhIjKlMnOpQrStUv"
TODAY = dt.date(2026, 11, 29)


@pytest.fixture(autouse=True)
def _samples() -> None:
    if not (SCHED / "original.jsonl").exists() or not (PAUSE / "original.jsonl").exists():
        pytest.skip("sample_runs not present")


def _promote(original: Path | str, replay: Path | str | None, to: Path, **kw: object):
    kw.setdefault("name", None)
    kw.setdefault("failure", None)
    kw.setdefault("owner", "tester")
    kw.setdefault("today", TODAY)
    return promote(read_trace(original), read_trace(replay) if replay else None, to,
                   redactor=Redactor(KEY), **kw)  # type: ignore[arg-type]


def _clauses(case) -> dict[str, list[dict]]:  # type: ignore[no-untyped-def]
    data = yaml.safe_load((Path(case.path) / "contract.yaml").read_text())
    return {k: v for k, v in data.items() if isinstance(v, list)}


def _strip_ids(items: list[dict]) -> list[dict]:
    return [{k: v for k, v in c.items() if k != "id"} for c in items]


def _no_temp_left(folder: Path) -> None:
    assert not [p for p in folder.rglob("*") if "tmp" in p.name], list(folder.rglob("*"))


# --------------------------------------------------------------------------- the three files
def test_scheduling_with_strict_replay(tmp_path: Path) -> None:
    """The scheduling incident with its strict replay of the fix: must_call the Friday lookup, no write
    clauses (neither run wrote), strict mode; provenance complete; the fixture reads with no issues."""
    case = _promote(SCHED / "original.jsonl", SCHED / "replay.jsonl", tmp_path / "golden")
    folder = Path(case.path)
    assert sorted(p.name for p in folder.iterdir()) == ["case.yaml", "contract.yaml", "trace.jsonl"]
    assert case.name == "never-called-list-open-slots-2026-11-06" and case.parent is None
    clauses = _clauses(case)
    assert _strip_ids(clauses["must_call"]) == [{"tool": "list_open_slots", "args": {"date": "2026-11-06"}}]
    assert "forbid_call" not in clauses and "max_calls" not in clauses and "success_requires" not in clauses
    meta = yaml.safe_load((folder / "case.yaml").read_text())
    assert meta["schema"] == "tracetui-case/1" and meta["schema_version"] == 1
    assert meta["mode"] == "strict" and meta["parent"] is None and meta["owner"] == "tester"
    assert (meta["created"], meta["review_by"]) == ("2026-11-29", "2027-02-27")
    import hashlib

    assert meta["source"] == {"file": "original.jsonl",
                              "sha256": hashlib.sha256((SCHED / "original.jsonl").read_bytes()).hexdigest(),
                              "run_id": "run-2026-11-03-0042", "trace_id": read_trace(SCHED / "original.jsonl").header["trace_id"],
                              "span_count": 7,
                              "replay_sha256": hashlib.sha256((SCHED / "replay.jsonl").read_bytes()).hexdigest()}
    assert "list_open_slots" in meta["failure"] and "2026-11-06" in meta["failure"]
    fixture = read_trace(folder / "trace.jsonl")
    assert fixture.issues == []
    assert len(fixture.spans) == 7 and meta["dropped_spans"] == []
    # values whole: the customer note with markup and ESC characters is byte-identical
    src = {s.span_id: s for s in read_trace(SCHED / "original.jsonl").spans}
    for s in fixture.spans:
        assert dict(s.data) == dict(src[s.span_id].data)
    load_contract(folder / "contract.yaml")  # the other side's parser accepts it
    _no_temp_left(tmp_path)


def test_scheduling_contract_fails_the_incident_and_passes_the_fix(tmp_path: Path) -> None:
    """The derived contract, checked by the contract checker: the original run violates must_call, the
    fixed (strict) replay meets it."""
    case = _promote(SCHED / "original.jsonl", SCHED / "replay.jsonl", tmp_path)
    contract = load_contract(Path(case.path) / "contract.yaml")
    bad = check(contract, [read_trace(SCHED / "original.jsonl")])
    assert not bad.passed and {v.clause_id for v in bad.violations} == {"must-call-list-open-slots-2026-11-06"}
    assert check(contract, [read_trace(SCHED / "replay.jsonl")]).passed


def test_scheduling_with_fixture_replay(tmp_path: Path) -> None:
    """With the fixture-mode replay: mode fixture, max_calls per write tool the fix made (1 each), reads
    before writes, final_state from the changed scalar paths and the untouched entries; the fix passes, the
    incident fails."""
    case = _promote(SCHED / "original.jsonl", SCHED / "fixture.jsonl", tmp_path)
    clauses = _clauses(case)
    meta = yaml.safe_load((Path(case.path) / "case.yaml").read_text())
    assert meta["mode"] == "fixture"
    assert _strip_ids(clauses["must_call"]) == [
        {"tool": "list_open_slots", "args": {"date": "2026-11-06"}},
        {"tool": "reschedule_appointment"}, {"tool": "send_confirmation"}]
    assert _strip_ids(clauses["max_calls"]) == [{"tool": "reschedule_appointment", "max": 1},
                                                {"tool": "send_confirmation", "max": 1}]
    assert {"before": "list_open_slots", "after": "reschedule_appointment"} in _strip_ids(clauses["order"])
    assert _strip_ids(clauses["final_state"]) == [
        {"path": "appointments.APT-77120.date", "equals": "2026-11-06"},
        {"path": "appointments.APT-77120.start", "equals": "10:00"},
        {"path": "appointments.APT-77120.end", "equals": "12:00"},
        {"path": "slots.2026-11-05", "unchanged": True}]  # Thursday: nothing the fix touched (collateral guard)
    assert "forbid_call" not in clauses  # the incident made no write
    contract = load_contract(Path(case.path) / "contract.yaml")
    assert check(contract, [read_trace(SCHED / "fixture.jsonl")]).passed
    assert not check(contract, [read_trace(SCHED / "original.jsonl")]).passed


def test_subscription_pause_claim_without_receipt(tmp_path: Path) -> None:
    """subscription_pause: "paused" claimed with no pause receipt. success_requires (claim words from the
    answer, pause_subscription with status paused), forbid_call the malformed retry id AC10442 that
    failed (kept malformed), max_calls pause_subscription 1, must_call pause_subscription."""
    case = _promote(PAUSE / "original.jsonl", PAUSE / "replay.jsonl", tmp_path)
    clauses = _clauses(case)
    (sr,) = clauses["success_requires"]
    assert sr["tool"] == "pause_subscription" and sr["output"] == {"status": "paused"}
    import re

    assert re.search(sr["claim"], "All done: your subscription is paused")
    assert re.search(sr["claim"], "Done: your Family 4 box is paused from Monday")
    assert not re.search(sr["claim"], "I could not find your subscription")
    assert _strip_ids(clauses["forbid_call"]) == [{"tool": "get_billing_account", "args": {"account_id": "AC10442"}}]
    assert _strip_ids(clauses["max_calls"]) == [{"tool": "pause_subscription", "max": 1}]
    assert _strip_ids(clauses["must_call"]) == [{"tool": "pause_subscription"}]
    assert _strip_ids(clauses["order"]) == [{"before": "get_billing_account", "after": "pause_subscription"}]
    assert case.name == "pause-subscription-claimed-without-receipt"
    assert "claimed success" in case.case["failure"] and "pause_subscription" in case.case["failure"]
    contract = load_contract(Path(case.path) / "contract.yaml")
    bad = check(contract, [read_trace(PAUSE / "original.jsonl")])
    assert {v.clause_id for v in bad.violations} >= {sr["id"], clauses["forbid_call"][0]["id"]}
    assert check(contract, [read_trace(PAUSE / "replay.jsonl")]).passed
    # error bodies preserved exactly: the timeout body with its retry hint, the 404 body with the bad id
    src = {s.span_id: s for s in read_trace(PAUSE / "original.jsonl").spans}
    fixture = read_trace(Path(case.path) / "trace.jsonl")
    assert fixture.issues == []
    for s in fixture.spans:
        if s.kind.value == "tool":
            assert dict(s.data) == dict(src[s.span_id].data) and s.error_type == src[s.span_id].error_type


def test_no_replay_still_promotes_with_notes(tmp_path: Path) -> None:
    """Without a replay: no must_call or order, notes say what to add; the claim is still the failure."""
    case = _promote(PAUSE / "original.jsonl", None, tmp_path)
    assert "must_call" not in _clauses(case)
    assert any("no replay" in n for n in case.notes)
    assert "claimed success" in case.case["failure"]
    assert case.case["mode"] == "strict"


# --------------------------------------------------------------------------- redaction
def _raw_copy(tmp_path: Path) -> Path:
    """The scheduling original with its email token replaced by a raw email and an API key in a tool output."""
    text = (SCHED / "original.jsonl").read_text()
    text = text.replace("<EMAIL_bbc9b75f>", RAW_EMAIL)
    lines = [json.loads(x) for x in text.splitlines()]
    for obj in lines[1:]:
        if obj.get("kind") == "tool" and obj["tool"]["tool_name"] == "list_open_slots":
            obj["tool"]["output"]["debug"] = f"Authorization failed for key {RAW_KEY}"
    path = tmp_path / "raw.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines))
    return path


def test_raw_secrets_never_reach_disk(tmp_path: Path) -> None:
    """A source with a raw email and an sk-proj key: the case folder holds neither (tokens instead) and
    case.yaml counts the redactions."""
    raw = _raw_copy(tmp_path)
    assert RAW_EMAIL in raw.read_text() and RAW_KEY in raw.read_text()
    case = _promote(raw, SCHED / "replay.jsonl", tmp_path / "golden", failure=f"mail {RAW_EMAIL} was not answered")
    for f in Path(case.path).iterdir():
        body = f.read_text()
        assert RAW_EMAIL not in body and RAW_KEY not in body and "sk-proj" not in body, f.name
    fixture = read_trace(Path(case.path) / "trace.jsonl")
    assert fixture.issues == []
    assert case.redactions.get("email", 0) >= 2 and case.redactions.get("api_key") == 1
    assert yaml.safe_load((Path(case.path) / "case.yaml").read_text())["redactions"] == case.redactions
    token = Redactor(KEY).token("email", RAW_EMAIL)
    assert token in (Path(case.path) / "trace.jsonl").read_text()  # stable token of the project key
    assert token in case.case["failure"]


# --------------------------------------------------------------------------- reduction
def _span(sid: str, parent: str | None, seq: int, kind: str, name: str, **section: object) -> dict:
    return {"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": name,
            "start_ns": 1_000 + seq, "end_ns": 2_000 + seq, "status": "ok", "error_type": None, kind: section}


def _noisy(tmp_path: Path) -> Path:
    """A run with a memory span, duplicate telemetry of a read, a read after the last decision, an
    orphan LLM span, a write (the failing one) with a malformed id and a truncated output."""
    header = {"schema": "tracetui/1", "run_id": "run-noisy-1", "read_tools": ["lookup"],
              "input": {"message": "refund order 12"}}
    spans = [
        _span("r", None, 0, "agent", "invoke_agent shop", input={"message": "refund order 12"},
              output={"message": "Refunded: done."}),
        _span("m", "r", 1, "memory", "memory read", operation="read", key="prefs", value={"x": 1}),
        _span("l1", "r", 2, "llm", "chat m", output={"role": "assistant", "content": None,
                                                    "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {}}]}),
        _span("t1", "r", 3, "tool", "execute_tool lookup", tool_name="lookup", call_id="c1", effect="read",
              arguments={"order": "O-12"}, output={"items": ["a" * 5000]}, output_truncated=True),
        _span("t1b", "r", 4, "tool", "execute_tool lookup", tool_name="lookup", call_id="c1", effect="read",
              arguments={"order": "O-12"}, output={"items": ["a" * 5000]}, output_truncated=True),
        _span("w1", "r", 5, "tool", "execute_tool refund", tool_name="refund", effect="write",
              arguments={"order": "O--12 ", "amount": 10, "idempotency_key": "k1"}, output={"status": "refunded"}),
        _span("l2", "gone", 6, "llm", "chat m", output={"role": "assistant", "content": "Refunded: done."}),
        _span("t2", "r", 7, "tool", "execute_tool lookup", tool_name="lookup", effect="read",
              arguments={"order": "O-13"}, output={"items": []}),
        _span("o1", "r", 8, "other", "http flush"),
    ]
    path = tmp_path / "noisy.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in [header, *spans]))
    return path


def test_reduce_to_the_causal_path(tmp_path: Path) -> None:
    """Memory/other spans and duplicate telemetry are dropped with a reason, a read after the last
    decision is kept (a strict replay makes it); the orphan is re-parented; the malformed id and the truncated flag are kept as they were."""
    trace = read_trace(_noisy(tmp_path))
    kept, dropped, notes = reduce_trace(trace)
    assert [s.span_id for s in kept] == ["r", "l1", "t1", "w1", "l2", "t2"]
    reasons = {d["span_id"]: d["reason"] for d in dropped}
    assert set(reasons) == {"m", "t1b", "o1"}
    assert "duplicate telemetry of span t1" in reasons["t1b"]
    assert "not on the causal path" in reasons["m"]
    assert any("re-parented" in n for n in notes)
    case = _promote(tmp_path / "noisy.jsonl", None, tmp_path / "golden")
    fixture = read_trace(Path(case.path) / "trace.jsonl")
    assert fixture.issues == []
    assert {s.span_id: s.parent_id for s in fixture.spans}["l2"] == "r"
    by_id = {s.span_id: s for s in fixture.spans}
    assert by_id["w1"].data["arguments"]["order"] == "O--12 "  # malformed value kept exactly
    assert by_id["t1"].data["output_truncated"] is True and len(by_id["t1"].data["output"]["items"][0]) == 5000
    meta = yaml.safe_load((Path(case.path) / "case.yaml").read_text())
    assert [d["span_id"] for d in meta["dropped_spans"]] == ["m", "t1b", "o1"]
    # the failing write, no replay: forbidden with its stable args (idempotency key left out), max 1
    clauses = _clauses(case)
    assert _strip_ids(clauses["forbid_call"]) == [{"tool": "refund", "args": {"order": "O--12 ", "amount": 10}}]
    assert _strip_ids(clauses["max_calls"]) == [{"tool": "refund", "max": 1}]


# --------------------------------------------------------------------------- names, forks, atomicity
def test_promoting_twice_forks_with_parent(tmp_path: Path) -> None:
    """The same name for other input: NAME-fork-2, then -fork-3, each pointing at NAME; the original case
    untouched; the same input again: nothing written."""
    first = _promote(SCHED / "original.jsonl", SCHED / "replay.jsonl", tmp_path, name="Friday not offered!")
    assert first.name == "friday-not-offered"
    before = {p.name: p.read_bytes() for p in Path(first.path).iterdir()}
    again = _promote(SCHED / "original.jsonl", SCHED / "replay.jsonl", tmp_path, name="Friday not offered!")
    assert (again.already, again.name) == (True, "friday-not-offered")
    second = _promote(SCHED / "original.jsonl", SCHED / "fixture.jsonl", tmp_path, name="friday not offered")
    third = _promote(SCHED / "original.jsonl", None, tmp_path, name="friday-not-offered")
    assert (second.name, second.parent) == ("friday-not-offered-fork-2", "friday-not-offered")
    assert (third.name, third.parent) == ("friday-not-offered-fork-3", "friday-not-offered")
    assert yaml.safe_load((Path(second.path) / "case.yaml").read_text())["parent"] == "friday-not-offered"
    assert {p.name: p.read_bytes() for p in Path(first.path).iterdir()} == before
    _no_temp_left(tmp_path)


def test_a_failed_write_leaves_no_case_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write failing half-way leaves neither a partial case nor a temporary folder."""
    import tracetui.core.golden.promote as mod

    real = mod._write_file
    calls = []

    def flaky(folder: str, name: str, data: bytes) -> str:
        calls.append(name)
        if name == "case.yaml":
            raise OSError(28, "No space left on device")
        return real(folder, name, data)

    monkeypatch.setattr(mod, "_write_file", flaky)
    with pytest.raises(OSError):
        _promote(SCHED / "original.jsonl", None, tmp_path, name="x")
    assert calls and list(tmp_path.iterdir()) == []


def test_names() -> None:
    assert slugify("  Friday NOT offered -- v7! ") == "friday-not-offered-v7"
    assert derive_name("the agent claimed the subscription was paused", None) == "claimed-subscription-paused"
    assert derive_name(None, "run-2026-11-03-0042") == "run-2026-11-03-0042"
    assert derive_name(None, None) == "case"


def test_bad_inputs_are_typed_errors(tmp_path: Path) -> None:
    """An invalid contract names the field; a bad mode and a file as --to are GoldenCaseErrors."""
    with pytest.raises(GoldenCaseError, match=r"must_call\[0\]\.tool"):
        _promote(SCHED / "original.jsonl", None, tmp_path, contract={"schema": "tracetui-contract/1",
                                                                     "must_call": [{"id": "x"}]})
    with pytest.raises(GoldenCaseError, match="mode"):
        _promote(SCHED / "original.jsonl", None, tmp_path, mode="loose")
    (tmp_path / "file").write_text("x")
    with pytest.raises(GoldenCaseError):
        _promote(SCHED / "original.jsonl", None, tmp_path / "file")
    with pytest.raises(GoldenCaseError, match="not valid YAML"):
        parse_contract_text("must_call: [")
    assert list(p.name for p in tmp_path.iterdir()) == ["file"]


def test_edited_contract_is_written_as_given(tmp_path: Path) -> None:
    """A contract passed in (as the TUI does after editing) is what contract.yaml holds."""
    mine = {"schema": "tracetui-contract/1", "forbid_call": [{"id": "no-thursday", "tool": "reschedule_appointment",
                                                             "args": {"date": "2026-11-05"}}],
            "trials": {"count": 1, "safety": "all"}}
    case = _promote(SCHED / "original.jsonl", SCHED / "replay.jsonl", tmp_path, contract=mine, agent="a.py:run",
                    mode="fixture")
    c = load_contract(Path(case.path) / "contract.yaml")
    assert [x.id for x in c.clauses()] == ["no-thursday"]
    assert (case.case["agent"], case.case["mode"]) == ("a.py:run", "fixture")


def test_derivation_is_generic_over_the_diff() -> None:
    """derive_contract on the samples directly (no writing): the clause sections each incident needs."""
    d = derive_contract(read_trace(PAUSE / "original.jsonl"), read_trace(PAUSE / "replay.jsonl"))
    assert {k for k, v in d.contract.items() if isinstance(v, list) and v} == {
        "must_call", "forbid_call", "max_calls", "order", "success_requires"}
    d = derive_contract(read_trace(SCHED / "original.jsonl"), read_trace(SCHED / "replay.jsonl"))
    assert {k for k, v in d.contract.items() if isinstance(v, list) and v} == {"must_call"}
    assert d.contract["trials"] == {"count": 1, "safety": "all", "soft": {"at_least": 1}}
