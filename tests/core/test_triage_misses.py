"""The nine misses of issue 19, each built from a real run: tau-bench's task 34 trial 2 (GPT-4o,
airline; ../shared/corpus/tau-bench) converted with ``tracetui convert``, then changed as the miss
describes. Each asserts the verdict, the first evidence span and the rule that fired.

The converted run records no model, prompt version, clock or tool-schema hash: every verdict here
is reached through those caveats (and its confidence says so), never stopped at step 1.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from corpus import corpus
from otlp_helpers import to_attributes
from tracetui.cli.main import main
from tracetui.core.readers import read_trace
from tracetui.core.triage import triage
from tracetui.core.triage.batch import Case, group

RUN = "task-34-trial-2"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The converted run as [header, span, span...] (dicts), in seq order."""
    src = corpus("tau-bench/gpt-4o-airline.json")
    out = tmp_path_factory.mktemp("tau") / "t34.jsonl"
    err = io.StringIO()
    assert main(["convert", f"{src}#{RUN}", str(out)], stdout=io.StringIO(), stderr=err) == 0, err.getvalue()
    return [json.loads(line) for line in out.read_text().splitlines()]


def span(doc: list[dict[str, Any]], sid: str) -> dict[str, Any]:
    return next(s for s in doc[1:] if s["span_id"] == sid)


def write(tmp_path: Path, name: str, doc: list[dict[str, Any]]) -> str:
    p = tmp_path / name
    p.write_text("".join(json.dumps(x) + "\n" for x in doc))
    return str(p)


def depart(doc: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model asks for another sum at msg-30 (the trial leaves the original's path there)."""
    doc = copy.deepcopy(doc)
    call = span(doc, "msg-30")["llm"]["output"]["tool_calls"][0]
    call["arguments"] = {"expression": "402 + 306"}
    span(doc, "msg-30-call-0")["tool"]["arguments"] = {"expression": "402 + 306"}
    span(doc, "msg-30-call-0")["tool"].pop("args_hash", None)
    return doc


def run(tmp_path: Path, original: list[dict[str, Any]], trial: list[dict[str, Any]]) -> Any:
    o, r = write(tmp_path, "original.jsonl", original), write(tmp_path, "replay.jsonl", trial)
    return triage(read_trace(o), [read_trace(r)])


def rules(result: Any) -> list[str]:
    return [x.rule for x in result.reasons]


# -- the converted run itself ------------------------------------------------------------------


def test_the_converted_run_reaches_a_verdict_through_caveats(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run(tmp_path, base, depart(base))
    assert result.steps[0].state == "passed" and result.replayability.blockers == []
    assert {f.field for f in result.caveats} >= {"llm.model", "llm.prompt_version", "header.clock"}
    assert all(f.workaround for f in result.caveats)
    assert result.verdict == "variance" and result.confidence == "low"  # 1 trial: medium, lowered by the caveats
    assert result.evidence[1].span_id == "msg-30" and result.evidence[1].side == "replay"
    assert rules(result)[-2:] == ["model_decided", "confidence"]


# -- 1. header changes are config changes; batch keeps them apart from variance ----------------


@pytest.mark.parametrize(("field", "before", "after", "path"), [
    ("model", {"id": "gpt-4o"}, {"id": "gpt-4o-mini"}, "model.id"),
    ("prompt_versions", {"airline.system": "v3"}, {"airline.system": "v4"}, "prompt_versions.airline.system"),
    ("tool_schema_hash", "a1b2c3", "d4e5f6", "tool_schema_hash"),
])
def test_1_header_change_is_code_or_config_change(base, tmp_path: Path, field, before, after, path) -> None:  # type: ignore[no-untyped-def]
    original, trial = copy.deepcopy(base), depart(base)
    original[0][field], trial[0][field] = before, after
    result = run(tmp_path, original, trial)
    assert result.verdict == "code_or_config_change"
    assert (result.evidence[0].span_id, result.evidence[0].side) == ("msg-30", "replay")  # where it left the path
    assert any(e.reason == f"run input changed: {path}" for e in result.evidence)
    assert "header_change" in rules(result)


def test_1_batch_groups_a_model_change_apart_from_variance(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cases = []
    for name, model in (("model", {"id": "gpt-4o-mini"}), ("variance", {"id": "gpt-4o"})):
        original, trial = copy.deepcopy(base), depart(base)
        original[0]["model"], trial[0]["model"] = {"id": "gpt-4o"}, model
        d = tmp_path / name
        d.mkdir()
        cases.append(Case(name, write(d, "original.jsonl", original), write(d, "replay.jsonl", trial)))
    report = group(cases)
    assert len(report.groups) == 1  # one first-divergence signature...
    causes = {c["cause"]: (c["verdict"], c["cases"]) for c in report.causes}
    assert causes == {"config model": ("code_or_config_change", ["model"]), "variance": ("variance", ["variance"])}


# -- 2. a tool's tool_version ------------------------------------------------------------------


def test_2_tool_version_change_is_code_or_config_change(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original, trial = copy.deepcopy(base), depart(base)
    span(original, "msg-18-call-0")["tool"]["tool_version"] = "1"
    span(trial, "msg-18-call-0")["tool"]["tool_version"] = "2"
    result = run(tmp_path, original, trial)
    assert result.verdict == "code_or_config_change"
    assert result.evidence[0].span_id == "msg-18-call-0" and "tool.tool_version" in result.evidence[0].reason
    assert "config_field" in rules(result) and result.cause == "config tool_version"
    assert "coerced" not in result.summary


# -- 3. the whole departure, past a rewording --------------------------------------------------


def _reworded(doc: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = span(doc, "msg-10")["llm"]["output"]
    out["content"] = "Put differently: " + str(out.get("content"))
    return doc


def test_3_other_data_past_a_rewording_is_data_or_integration(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trial = _reworded(depart(base))
    span(trial, "msg-20-call-0")["tool"]["output"] = span(trial, "msg-20-call-0")["tool"]["output"].replace(
        '"price": 77', '"price": 177')
    result = run(tmp_path, base, trial)
    assert result.reproduction.per_trial[0].first.original.span_id == "msg-10"  # the rewording comes first
    assert result.verdict == "data_or_integration"
    assert result.evidence[0].span_id == "msg-20-call-0" and "stale or moving data" in result.evidence[0].reason
    assert rules(result)[2:4] == ["rewording_ignored", "moved_data"]


def test_3_another_model_past_a_rewording_is_code_or_config_change(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trial = _reworded(depart(base))
    for sid in ("msg-28", "msg-30", "msg-32", "msg-34"):
        span(trial, sid)["llm"]["model"] = "gpt-4o-mini"
    for sid in ("msg-28", "msg-30", "msg-32", "msg-34"):
        span(base, sid)["llm"]["model"] = "gpt-4o"
    try:
        result = run(tmp_path, base, trial)
    finally:
        for sid in ("msg-28", "msg-30", "msg-32", "msg-34"):
            span(base, sid)["llm"].pop("model")
    assert result.verdict == "code_or_config_change"
    assert result.evidence[0].span_id == "msg-28" and "llm.model" in result.evidence[0].reason
    assert "rewording_ignored" in rules(result) and result.cause == "config model"


# -- 4. the run's own write between two reads --------------------------------------------------


def _reread(doc: list[dict[str, Any]], *, write_same: bool) -> list[dict[str, Any]]:
    """msg-20 reads XEHM4B again after update_reservation_flights (seq 11) changed it."""
    doc = copy.deepcopy(doc)
    later = span(doc, "msg-20-call-0")["tool"]
    later["arguments"] = {"reservation_id": "XEHM4B"}
    later.pop("args_hash", None)
    later["output"] = span(doc, "msg-14-call-0")["tool"]["output"]  # the record as the update left it
    if not write_same:
        upd = span(doc, "msg-14-call-0")["tool"]
        upd["arguments"] = {**upd["arguments"], "reservation_id": "ZZZZZZ", "payment_id": "gift_card_0"}
        upd.pop("args_hash", None)
    return doc


def test_4_a_runs_own_write_between_two_reads_is_not_moving_data(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original = _reread(base, write_same=True)
    result = run(tmp_path, original, depart(original))
    assert result.verdict == "variance" and "stale_read" not in rules(result)
    assert result.evidence[0].span_id == "msg-34"  # the final claim, then where the model answered otherwise
    assert rules(result)[-2] == "model_decided"
    # without the write to that record, the same two reads are data moving under the run
    moved = _reread(base, write_same=False)
    result = run(tmp_path, moved, depart(moved))
    assert result.verdict == "data_or_integration" and "stale_read" in rules(result)
    assert result.evidence[0].span_id == "msg-4-call-0"


# -- 5. a tool's own cut output, seen by the model as it is ------------------------------------


def test_5_a_self_cut_output_the_model_saw_is_not_truncation(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original = copy.deepcopy(base)
    tool = span(original, "msg-18-call-0")["tool"]
    cut = tool["output"][:253] + "..."  # the tool's own 256-character preview
    tool["output"] = cut
    seen = 0
    for s in original[1:]:
        for m in (s.get("llm") or {}).get("messages") or []:
            if m.get("tool_call_id") == tool["call_id"]:
                m["content"] = cut
                seen += 1
    assert seen >= 5  # every later prompt quotes it
    result = run(tmp_path, original, depart(original))
    assert not [f for f in result.replayability.findings if f.code == "truncated_output"]
    assert result.verdict == "variance" and result.evidence[0].span_id == "msg-34"
    assert rules(result)[-2] == "model_decided"
    # the recorder's cut (the model read more) is still a blocker
    for s in original[1:]:
        for m in (s.get("llm") or {}).get("messages") or []:
            if m.get("tool_call_id") == tool["call_id"]:
                m["content"] = span(base, "msg-18-call-0")["tool"]["output"]
    result = run(tmp_path, original, depart(original))
    assert result.verdict == "not_replayable" and result.evidence[0].span_id == "msg-18-call-0"
    assert "truncated" in result.evidence[0].reason and "went on" in result.evidence[0].reason


# -- 6-8. the same run exported as OTLP ----------------------------------------------------------


def to_otlp(doc: list[dict[str, Any]], *, flags: dict[str, int] | None = None,
            raw: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The converted run as the OTLP/JSON an OTel GenAI exporter would write (ids hex, times by seq)."""
    ids = {s["span_id"]: f"{i + 1:016x}" for i, s in enumerate(doc[1:])}
    spans = []
    for s in doc[1:]:
        a: dict[str, Any] = {}
        if s["kind"] == "llm":
            llm = s["llm"]
            a["gen_ai.operation.name"] = "chat"
            a["gen_ai.request.model"] = "gpt-4o"
            a["gen_ai.input.messages"] = json.dumps(llm.get("messages"))
            a["gen_ai.output.messages"] = json.dumps([{**llm["output"], "role": "assistant"}])
        elif s["kind"] == "tool":
            t = s["tool"]
            a.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": t["tool_name"],
                      "gen_ai.tool.call.id": t.get("call_id"), "gen_ai.tool.call.arguments": json.dumps(t["arguments"]),
                      "gen_ai.tool.call.result": t["output"] if isinstance(t["output"], str) else json.dumps(t["output"])})
        else:
            a["gen_ai.operation.name"] = "invoke_agent"
        a.update((raw or {}).get(s["span_id"], {}))
        sp: dict[str, Any] = {"traceId": "ab" * 16, "spanId": ids[s["span_id"]], "name": s["name"], "kind": 1,
                              "startTimeUnixNano": str(1_715_800_000_000_000_000 + s["seq"] * 1_000_000),
                              "endTimeUnixNano": str(1_715_800_000_000_000_000 + s["seq"] * 1_000_000 + 500_000),
                              "attributes": to_attributes({k: v for k, v in a.items() if v is not None}),
                              "status": {}}
        if s["parent_id"]:
            sp["parentSpanId"] = ids[s["parent_id"]]
        if flags and s["span_id"] in flags:
            sp["parentSpanId"] = "00f067aa0ba902b7"
            sp["flags"] = flags[s["span_id"]]
        spans.append(sp)
    return {"resourceSpans": [{"resource": {"attributes": to_attributes({"service.name": "tau-airline"})},
                               "scopeSpans": [{"scope": {"name": "tau"}, "spans": spans}]}]}


def otlp_pair(tmp_path: Path, original: dict[str, Any], trial: dict[str, Any]) -> Any:
    (tmp_path / "o.otlp.json").write_text(json.dumps(original))
    (tmp_path / "r.otlp.json").write_text(json.dumps(trial))
    return triage(read_trace(str(tmp_path / "o.otlp.json")), [read_trace(str(tmp_path / "r.otlp.json"))])


def _sid(doc: list[dict[str, Any]], sid: str) -> str:
    return f"{[s['span_id'] for s in doc[1:]].index(sid) + 1:016x}"


def test_6_an_empty_tool_result_is_an_output(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original = copy.deepcopy(base)
    span(original, "msg-8-call-0")["tool"]["output"] = ""  # `think` returns nothing
    result = otlp_pair(tmp_path, to_otlp(original), to_otlp(depart(original)))
    trace = read_trace(str(tmp_path / "o.otlp.json"))
    assert next(s for s in trace.spans if s.span_id == _sid(base, "msg-8-call-0")).data["output"] == ""
    assert result.replayability.blockers == []
    assert result.verdict == "variance" and result.evidence[1].span_id == _sid(base, "msg-30")
    assert rules(result)[-2] == "model_decided"


def test_7_a_remote_parent_is_not_an_orphan(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    flags = {"root": 0x301}  # sampled, parent remote (HAS_IS_REMOTE | IS_REMOTE)
    result = otlp_pair(tmp_path, to_otlp(base, flags=flags), to_otlp(depart(base), flags=flags))
    assert not [f for f in result.replayability.findings if f.code == "orphan_span"]
    assert result.verdict == "variance" and result.evidence[1].span_id == _sid(base, "msg-30")
    # a parent that is not flagged remote is still a lost span
    result = otlp_pair(tmp_path, to_otlp(base, flags={"root": 0x1}), to_otlp(depart(base)))
    assert result.verdict == "not_replayable" and result.evidence[0].span_id == _sid(base, "root")
    assert "names parent" in result.evidence[0].reason


@pytest.mark.parametrize(("attr", "sid", "cap"), [("gen_ai.output.messages", "msg-10", 256),
                                                  ("gen_ai.input.messages", "msg-20", 4096)])
def test_8_an_exporter_cut_message_attribute_is_a_finding_naming_length_and_cap(base, tmp_path: Path, attr, sid, cap) -> None:  # type: ignore[no-untyped-def]
    full = to_otlp(base)
    sp = next(s for s in full["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["spanId"] == _sid(base, sid))
    value = next(a for a in sp["attributes"] if a["key"] == attr)["value"]["stringValue"]
    assert len(value) > cap
    raw = {sid: {attr: value[:cap]}}  # Cloud Trace's 256 / New Relic's 4,096: cut mid-JSON
    result = otlp_pair(tmp_path, to_otlp(base, raw=raw), to_otlp(depart(base)))
    field = "llm.output" if "output" in attr else "llm.messages"
    (f,) = [f for f in result.replayability.findings if f.code == "truncated_output"]
    assert f.field == field and f.span_id == _sid(base, sid)
    assert f"{cap:,} characters, a known exporter cap" in f.reason and "JSON cut mid-value" in f.reason
    assert result.verdict == "not_replayable" and result.evidence[0].span_id == _sid(base, sid)


# -- 9. a read that timed out in the original ----------------------------------------------------


def test_9_a_read_that_timed_out_and_then_succeeded_says_so(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original = copy.deepcopy(base)
    read = span(original, "msg-20-call-0")
    read.update(status="error", error_type="TimeoutError")
    read["tool"]["output"] = {"error": "timeout", "message": "reservation service did not answer in 30 s"}
    result = run(tmp_path, original, depart(base))
    assert result.verdict == "data_or_integration"
    assert result.evidence[0].span_id == "msg-20-call-0"
    assert "failed in the original (TimeoutError" in result.evidence[0].reason
    assert "succeeded in the trial" in result.evidence[0].reason
    assert "failed_read" in rules(result) and result.cause == "failed_read tool get_reservation_details"
