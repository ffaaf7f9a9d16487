"""docs/triage.md, step 3: the verdict rules and their order, on small built runs (issue 25, statement 6).

The original asks for ``get_order`` then ``refund``; a trial that reproduces makes the same calls, one that does
not asks for ``cancel`` instead (the model deciding otherwise on identical inputs).
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import TraceBuilder

from tracetui.core.model import SpanKind, Trace
from tracetui.core.triage import triage
from tracetui.core.triage.verdict import TriageError, failure_anchor

HEADER = {"schema": "tracetui/1", "run_id": "r1", "start_ns": 1_762_161_242_118_000_000,
          "clock": {"now": "2025-11-03T09:14:02+00:00"}, "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc"}
ASK = [{"role": "user", "content": "refund order 5531"}]


def _call(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": name, "arguments": '{"id": 5531}'}]}


def run(prefix: str, then: str = "refund", prompt: str = "v5", stale: bool = False) -> Trace:
    """A support run: the model reads the order (twice, the second read differing, when ``stale``) and then
    asks for ``then``; ``prompt`` is the system prompt's version (span and header)."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "support", input={"q": "refund 5531"}, output={"answer": "done"})
    llm = {"model": "gpt-4o", "prompt_version": prompt, "tool_schemas_hash": "abc"}
    t.add("llm", "chat", parent=root, messages=ASK, output=_call("get_order"), **llm)
    t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": "shipped"}, effect="read")
    if stale:
        t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": "lost"}, effect="read")
    t.add("llm", "chat", parent=root, messages=[*ASK, {"role": "tool", "content": "shipped"}], output=_call(then), **llm)
    t.add("tool", then, parent=root, arguments={"id": 5531}, output={"ok": True}, effect="write")
    trace = t.trace()
    trace.header = {**HEADER, "prompt_versions": {"support.system": prompt}}
    return trace


def verdict(original: Trace, *trials: Trace) -> tuple[str | None, int, int, list[str]]:
    r = triage(original, list(trials))
    assert r.reproduction is not None
    return r.verdict, r.reproduction.reproduced, r.reproduction.trials, [x.rule for x in r.reasons]


def test_all_trials_reproducing_is_model_or_prompt() -> None:
    v, k, n, rules = verdict(run("o"), run("a"), run("b"))
    assert (v, k, n) == ("model_or_prompt", 2, 2) and "most_reproduce" in rules


def test_exactly_half_reproducing_is_variance_not_model_or_prompt() -> None:
    """"more than half": 1 of 2 is not."""
    v, k, n, rules = verdict(run("o"), run("a"), run("b", then="cancel"))
    assert (v, k, n) == ("variance", 1, 2) and "some_reproduce" in rules and "most_reproduce" not in rules


def test_two_of_three_reproducing_is_model_or_prompt() -> None:
    v, k, n, _ = verdict(run("o"), run("a"), run("b"), run("c", then="cancel"))
    assert (v, k, n) == ("model_or_prompt", 2, 3)


def test_two_of_three_where_the_third_changed_the_prompt_version_is_code_or_config_change() -> None:
    """The config check comes before the rate: swapping them makes this model_or_prompt."""
    v, k, n, rules = verdict(run("o"), run("a"), run("b"), run("c", then="cancel", prompt="v6"))
    assert (v, k, n) == ("code_or_config_change", 2, 3)
    assert rules[rules.index("reproduction") + 1:] == ["config_field", "header_change"]


def test_a_changed_prompt_in_a_trial_that_reproduced_is_not_a_config_verdict() -> None:
    v, k, n, _ = verdict(run("o"), run("a"), run("b"), run("c", prompt="v6"))
    assert (v, k, n) == ("model_or_prompt", 3, 3)


def test_no_trial_reproducing_and_every_cause_the_model_is_variance() -> None:
    v, k, n, rules = verdict(run("o"), run("a", then="cancel"), run("b", then="cancel"))
    assert (v, k, n) == ("variance", 0, 2) and rules.count("model_decided") == 2


def test_no_trial_reproducing_every_cause_the_model_and_a_stale_read_is_data_or_integration() -> None:
    """The case docs/triage.md's table and the code disagreed on (issue 25): the stale read is checked before the
    all-model variance. The original read the same record twice and got two answers: evidence on the original
    itself, which replays with recorded tools (serving both answers again) cannot test; the table now says so."""
    v, k, n, rules = verdict(run("o", stale=True), run("a", then="cancel", stale=True),
                             run("b", then="cancel", stale=True))
    assert (v, k, n) == ("data_or_integration", 0, 2) and "stale_read" in rules and "model_decided" not in rules


@pytest.mark.parametrize("k, n, expected", [(1, 2, "variance"), (2, 3, "model_or_prompt"), (1, 3, "variance"),
                                            (2, 4, "variance"), (3, 4, "model_or_prompt")])
def test_more_than_half_is_the_threshold(k: int, n: int, expected: str) -> None:
    trials = [run(f"t{i}") if i < k else run(f"t{i}", then="cancel") for i in range(n)]
    assert verdict(run("o"), *trials)[:3] == (expected, k, n)


# -- the survivors of `scripts/mutation.py verdict run` (tests/mutation_equivalents.md) ----------------------------

def shop(prefix: str, *, order: Any = None, read_error: bool = False, then: str = "refund", upto: int = 6,
         extra: bool = False, root_error: bool = False) -> Trace:
    """root o0; the model asks for get_order (o1); get_order (o2, failed when ``read_error``; its arguments
    ``order``); a write hold_order (o3); the model asks for ``then`` (o4); ``then`` (o5, a write);
    get_status (o6, a read after the decision); only the spans up to ``upto``; one more read (get_stock, o7)
    when ``extra``; the root failed when ``root_error``."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "support", input={"q": "refund 5531"}, output={"answer": "done"},
                 **({"status": "error", "error_type": "AgentError"} if root_error else {}))
    llm = {"model": "gpt-4o", "prompt_version": "v5", "tool_schemas_hash": "abc"}
    t.add("llm", "chat", parent=root, messages=ASK, output=_call("get_order"), **llm)
    t.add("tool", "get_order", parent=root, arguments=order or {"id": 5531}, output={"status": "shipped"},
          effect="read", **({"status": "error", "error_type": "Timeout"} if read_error else {}))
    t.add("tool", "hold_order", parent=root, arguments={"id": 5531}, output={"ok": True}, effect="write")
    t.add("llm", "chat", parent=root, messages=[*ASK, {"role": "tool", "content": "shipped"}], output=_call(then), **llm)
    t.add("tool", then, parent=root, arguments={"id": 5531}, output={"ok": True}, effect="write")
    t.add("tool", "get_status", parent=root, arguments={"id": 5531}, output={"s": 1}, effect="read")
    if extra:
        t.add("tool", "get_stock", parent=root, arguments={"sku": "BK-700"}, output={"n": 4}, effect="read")
    del t.spans[upto + 1 + extra:]
    trace = t.trace()
    trace.header = {**HEADER, "prompt_versions": {"support.system": "v5"}}
    return trace


def _ev(r: Any) -> list[tuple[str | None, str]]:
    return [(e.span_id, e.side) for e in r.evidence]


def test_the_feeding_read_is_the_last_read_before_the_failing_decision_not_a_write_nor_a_later_read() -> None:
    r = triage(shop("o"), [shop("a"), shop("b")], failing_span="o4")
    assert r.verdict == "model_or_prompt"
    feeding = [e for e in r.evidence if "the last read before the failing decision" in e.reason]
    assert [(e.span_id, e.side, e.reason) for e in feeding] == [("o2", "original", 'get_order {"id":5531}: the last '
                                                                 "read before the failing decision; its recorded output fed it")]
    # failing at the read itself: no read before it, none named
    r = triage(shop("o"), [shop("a"), shop("b")], failing_span="o2")
    assert r.verdict == "model_or_prompt"
    assert not [e for e in r.evidence if "the last read before" in e.reason]


def test_a_read_that_failed_in_the_original_only_is_data_or_integration_with_both_sides_as_evidence() -> None:
    r = triage(shop("o", read_error=True), [shop("a", then="cancel"), shop("b", then="cancel")])
    assert (r.verdict, r.confidence) == ("data_or_integration", "high")
    assert [x.rule for x in r.reasons].count("failed_read") == 2 and r.cause == "failed_read tool get_order"
    assert _ev(r)[:4] == [("o2", "original"), ("a2", "replay"), ("o2", "original"), ("b2", "replay")]


def test_arguments_changed_between_the_model_and_the_tool_are_data_or_integration() -> None:
    r = triage(shop("o"), [shop("a", order={"id": "5531"})])
    assert (r.verdict, r.confidence) == ("data_or_integration", "high")
    assert "coerced_arguments" in [x.rule for x in r.reasons] and "fallback" not in [x.rule for x in r.reasons]
    assert r.cause == "integration tool get_order"
    assert _ev(r)[:2] == [("o2", "original"), ("a2", "replay")]


def test_the_json_document_has_the_documented_keys_at_every_level() -> None:
    from tracetui.core.triage import triage_json

    r = triage(shop("o", read_error=True), [shop("a", then="cancel")])
    doc = triage_json(r)
    assert set(doc) == {"schema_version", "verdict", "confidence", "cause", "summary", "reasons", "caveats",
                        "replayability", "reproduction", "evidence", "failure", "steps"}
    assert doc["schema_version"] == 1 and doc["verdict"] == r.verdict and doc["cause"] == r.cause
    assert doc["summary"] == r.summary and doc["confidence"] == r.confidence
    assert [(x["rule"], x["on"], x["text"]) for x in doc["reasons"]] == [(x.rule, x.on, x.text) for x in r.reasons]
    assert all(set(e) == {"span_id", "reason", "side"} for e in doc["evidence"])
    assert [(e["span_id"], e["side"]) for e in doc["evidence"]] == _ev(r)
    assert set(doc["failure"]) == {"span_id", "reason", "side"} and doc["failure"]["span_id"] == r.failure.span_id
    rep = doc["reproduction"]
    assert (rep["trials"], rep["reproduced"]) == (1, 0)
    (trial,) = rep["per_trial"]
    assert set(trial) == {"label", "reproduced", "reason", "first_divergence", "config_change", "cause"}
    t = r.reproduction.per_trial[0]
    assert (trial["label"], trial["reproduced"], trial["reason"], trial["config_change"]) == (
        t.label, False, t.reason, [])
    first = r.reproduction.per_trial[0].first
    assert trial["first_divergence"] == {
        "type": first.type.value, "row": first.row, "kind": first.kind.value,
        "original_span_id": first.original.span_id if first.original else None,
        "replay_span_id": first.replay.span_id if first.replay else None, "fields": [f.path for f in first.fields]}
    assert trial["first_divergence"]["original_span_id"] == "o2" and trial["first_divergence"]["replay_span_id"] == "a2"
    assert trial["cause"] == {"kind": "failed_read", "rule": "failed_read", "fields": ["status", "error_type"],
                              "original_span_id": "o2", "replay_span_id": "a2", "text": trial["cause"]["text"],
                              "key": "failed_read tool get_order", "rewordings_skipped": 0}
    assert [s["number"] for s in doc["steps"]] == [1, 2, 3]
    assert [(s["number"], s["title"], s["state"], s["detail"], [e["span_id"] for e in s["evidence"]])
            for s in doc["steps"]] == [(s.number, s.title, s.state, s.detail, [e.span_id for e in s.evidence])
                                       for s in r.steps]
    assert [s["state"] for s in doc["steps"]] == ["passed", "passed", "passed"]


def _trial(original: Trace, replay: Trace, failing_span: str | None = None) -> Any:
    r = triage(original, [replay], failing_span=failing_span)
    assert r.reproduction is not None
    (t,) = r.reproduction.per_trial
    return t


def test_a_trial_reproduces_with_the_same_calls_and_ending_counted_up_to_the_failing_one() -> None:
    t = _trial(shop("o"), shop("a"))
    assert (t.reproduced, t.reason, t.at, t.cause, t.config_change) == (
        True, "the same 6 calls and the same ending", None, None, [])
    t = _trial(shop("o"), shop("a", then="cancel", upto=4), failing_span="o3")
    assert (t.reproduced, t.reason) == (True, "the same 3 calls up to the failing one and the same ending")
    assert _trial(shop("o"), shop("a", then="cancel"), failing_span="o1").reason == \
        "the same 1 call up to the failing one and the same ending"


def test_a_trial_that_stops_early_names_the_first_call_it_never_made() -> None:
    t = _trial(shop("o"), shop("a", upto=3))
    assert t.reproduced is False
    assert t.reason == 'the replay stopped before call 4, chat asking for refund {"id":5531}'
    assert (t.at.span_id, t.at.side, t.at.reason) == ("o4", "original", "the call the replay never made")


def test_a_trial_that_leaves_the_path_names_its_own_span() -> None:
    t = _trial(shop("o"), shop("a", then="cancel"))
    assert t.reproduced is False
    assert t.reason == ('left the original\'s path at call 4: chat asking for cancel {"id":5531} instead of '
                        'chat asking for refund {"id":5531}')
    assert (t.at.span_id, t.at.side, t.at.reason) == ("a4", "replay", "where the replay left the original's path")
    assert t.cause is not None and t.cause.kind == "model"


def test_a_trial_with_one_call_more_names_that_call() -> None:
    t = _trial(shop("o"), shop("a", extra=True))
    assert t.reproduced is False
    assert t.reason == 'made a call the original did not: get_stock {"sku":"BK-700"}'
    assert (t.at.span_id, t.at.side, t.at.reason) == ("a7", "replay", "the call the original did not make")
    # limited to a failing span, the calls after it do not count
    assert _trial(shop("o"), shop("a", extra=True), failing_span="o4").reproduced is True


def test_the_same_calls_with_another_ending_do_not_reproduce() -> None:
    t = _trial(shop("o"), shop("a", root_error=True))
    assert (t.reproduced, t.reason, t.at) == (
        False, "the same calls, but the run failed where the original did not", None)
    t = _trial(shop("o", root_error=True), shop("a"))
    assert (t.reproduced, t.reason) == (False, "the same calls, but the run did not fail where the original failed")
    assert _trial(shop("o", root_error=True), shop("a", root_error=True)).reproduced is True


def test_a_trials_config_change_lists_the_departures_fields_then_the_headers_and_code_version_as_support() -> None:
    a = run("a", then="cancel", prompt="v6")  # the span and the header both record prompt v6
    a.header = {**a.header, "code_version": "abc123"}
    t = _trial(run("o"), a)
    assert t.cause is not None and t.cause.kind == "config"
    assert t.config_change == ["llm.prompt_version", "prompt_versions.support.system", "code_version"]
    b = run("b", then="cancel")  # only the code changed: support, not a config change by itself
    b.header = {**b.header, "code_version": "abc123"}
    assert _trial(run("o"), b).config_change == []
    c = run("c", then="cancel")
    c.header = {**c.header, "model": {"id": "gpt-4.1"}, "code_version": "abc123"}
    assert _trial(run("o"), c).config_change == ["model.id", "code_version"]


def test_a_trial_cause_without_one_side_gives_none_for_its_span_in_json() -> None:
    from tracetui.core.triage import triage_json

    stopped = triage_json(triage(shop("o"), [shop("a", upto=3)]))["reproduction"]["per_trial"][0]["cause"]
    assert (stopped["kind"], stopped["original_span_id"], stopped["replay_span_id"]) == ("model", "o4", None)
    went_on = triage_json(triage(shop("o", upto=3), [shop("a", upto=4)]))["reproduction"]["per_trial"][0]["cause"]
    assert (went_on["kind"], went_on["original_span_id"], went_on["replay_span_id"]) == ("model", None, "a4")


def test_the_json_document_without_replays_with_caveats_and_one_sided_first_divergences() -> None:
    from tracetui.core.triage import triage_json

    o = shop("o")
    o.header = {k: v for k, v in o.header.items() if k != "prompt_versions"}
    for s in o.spans:
        s.data.pop("prompt_version", None)
    doc = triage_json(triage(o))
    assert doc["reproduction"] is None and doc["verdict"] is None
    assert [s["state"] for s in doc["steps"]] == ["passed", "pending", "pending"]
    (cav,) = doc["caveats"]
    assert {k: cav[k] for k in ("span_id", "code", "field")} == {
        "span_id": "o1", "code": "missing_field", "field": "llm.prompt_version"}
    assert set(cav) == {"span_id", "code", "field", "reason", "workaround"} and cav["reason"] and cav["workaround"]
    assert doc["steps"][0]["evidence"][0]["span_id"] == "o1"

    went_on = triage_json(triage(shop("o", upto=3), [shop("a", upto=4)]))
    first = went_on["reproduction"]["per_trial"][0]["first_divergence"]
    assert (first["type"], first["row"], first["original_span_id"], first["replay_span_id"]) == ("extra_span", 4, None, "a4")
    assert [(e["span_id"], e["side"]) for e in went_on["steps"][1]["evidence"]] == [("a4", "replay")]
    stopped = triage_json(triage(shop("o"), [shop("a", upto=3)]))
    first = stopped["reproduction"]["per_trial"][0]["first_divergence"]
    assert (first["type"], first["kind"], first["original_span_id"], first["replay_span_id"]) == (
        "missing_span", "llm", "o4", None)


def test_a_failing_call_that_succeeds_in_the_replay_does_not_reproduce() -> None:
    t = _trial(shop("o", read_error=True), shop("a"), failing_span="o2")
    assert (t.reproduced, t.reason) == (False, 'get_order {"id":5531} succeeded in the replay')
    assert _trial(shop("o", read_error=True), shop("a", read_error=True), failing_span="o2").reproduced is True
    # the replay's twin is its last call when it stops right after it
    t = _trial(shop("o", read_error=True), shop("a", upto=2), failing_span="o2")
    assert (t.reproduced, t.reason) == (False, 'get_order {"id":5531} succeeded in the replay')
    # a failing span that is not a call (the root is the whole run's ending, compared as such)
    assert _trial(shop("o", read_error=True), shop("a"), failing_span="o0").reproduced is True


def test_the_json_document_of_a_run_with_no_span_has_no_failure() -> None:
    from tracetui.core.triage import triage_json

    doc = triage_json(triage(Trace(spans=[], path="empty.jsonl")))
    assert doc["failure"] is None and doc["verdict"] == "not_replayable"


def test_a_failing_step_before_any_call_reproduces_in_a_replay_that_makes_no_call() -> None:
    def planned(prefix: str, calls: bool) -> Trace:
        t = TraceBuilder(prefix)
        root = t.add("agent", "support", input={"q": "refund 5531"}, output={"answer": "done"})
        t.add("agent", "plan", parent=root, input={"q": "refund 5531"}, output=None, status="error",
              error_type="PlanError")
        if calls:
            t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": "shipped"}, effect="read")
        trace = t.trace()
        trace.header = dict(HEADER)
        return trace

    t = _trial(planned("o", calls=True), planned("a", calls=False), failing_span="o1")
    assert (t.reproduced, t.reason) == (True, "the same 0 calls up to the failing one and the same ending")


def _cut(trace: Trace, *, output: bool = False) -> Trace:
    """get_order's and the refund's arguments cut mid-value (one blocker); get_status's output too when ``output``."""
    trace.spans[2].data["arguments"] = trace.spans[5].data["arguments"] = '{"id": 55'
    if output:
        trace.spans[6].data["output"] = '{"s": [1, 2'
    return trace


def test_a_blocker_stops_triage_at_not_replayable_with_its_findings_as_evidence() -> None:
    r = triage(_cut(shop("o")), [shop("a")])
    assert (r.verdict, r.confidence, r.cause) == ("not_replayable", "high", "instrumentation truncated_output")
    assert [(x.rule, x.on) for x in r.reasons] == [("blockers", "o2"), ("reproduction", "step 2"), ("not_replayable", "o2")]
    assert r.reasons[-1].text == "a blocker stops triage"
    (blocker,) = r.replayability.blockers
    assert [(e.span_id, e.reason) for e in r.evidence] == [("o2", blocker.reason)]
    assert r.summary.startswith(f"not_replayable: 1 blocker; first: {blocker.reason}. Fix the recording")
    two = triage(_cut(shop("o"), output=True))
    assert len(two.replayability.blockers) == 2 and two.summary.startswith("not_replayable: 2 blockers; first: ")


def test_without_a_replay_there_is_no_verdict_confidence_nor_cause() -> None:
    r = triage(shop("o"))
    assert (r.verdict, r.confidence, r.cause, r.reasons) == (None, None, "", [])
    assert r.summary == "replayability replayable; replay it to go on"


def test_rewordings_passed_over_before_the_departure_are_a_reason() -> None:
    a = shop("a", then="cancel")
    a.spans[1].data["output"] = {**_call("get_order"), "content": "let me look"}  # the same call, worded otherwise

    r = triage(shop("o"), [a])
    (why,) = [x for x in r.reasons if x.rule == "rewording_ignored"]
    assert (why.on, why.text) == ("r1", "1 answer worded otherwise before the departure passed over: the "
                                        "reproduction check ignores wording")


def test_model_or_prompt_without_a_failing_span_names_the_read_before_the_final_claim() -> None:
    r = triage(shop("o"), [shop("a"), shop("b")])
    assert r.verdict == "model_or_prompt" and r.confidence == "medium"
    assert [e.span_id for e in r.evidence] == ["o4", None, "o2"]  # the final claim, the rate, the feeding read


def test_without_an_llm_the_whole_run_is_the_failure_and_its_last_read_fed_it() -> None:
    def plain(prefix: str) -> Trace:
        t = TraceBuilder(prefix)
        root = t.add("agent", "batch", input={"q": "sync"}, output=None, status="error", error_type="SyncError")
        t.add("tool", "get_order", parent=root, arguments={"id": 1}, output={"s": 1}, effect="read")
        t.add("tool", "put_order", parent=root, arguments={"id": 1}, output={"ok": True}, effect="write")
        trace = t.trace()
        trace.header = dict(HEADER)
        return trace

    r = triage(plain("o"), [plain("a"), plain("b")])
    assert r.verdict == "model_or_prompt" and r.failure is not None and r.failure.span_id == "o0"
    assert [e.span_id for e in r.evidence] == ["o0", None, "o1"]


def test_a_trial_is_named_by_its_file_and_run_or_in_memory_by_its_run_id_trace_id_or_replay() -> None:
    """``Trial.label`` (docs/triage.md): ``FILE#RUN`` for a run of a many-run file, ``FILE`` for a one-run file
    (a path without a folder too), the run id alone (else the trace id, else ``replay``) for a trial held in
    memory."""
    def labelled(path: str = "", run_id: Any = None, trace_id: str | None = None, ids: int = 1) -> str:
        r = run("r")
        r.path, r.trace_id, r.trace_ids = path, trace_id, [f"t{i}" for i in range(ids)]
        r.header = {k: v for k, v in r.header.items() if k != "run_id"} | ({} if run_id is None else {"run_id": run_id})
        report = triage(run("o"), [r])
        assert report.reproduction is not None
        return report.reproduction.per_trial[0].label

    assert labelled("/tmp/a/b/replays.jsonl", "r2", ids=2) == "replays.jsonl#r2"
    assert labelled("replays.jsonl", "r2", ids=2) == "replays.jsonl#r2"
    assert labelled("/tmp/a/replay.jsonl", "r2") == "replay.jsonl"
    assert labelled("/tmp/a/replays.jsonl", None, ids=2) == "replays.jsonl"
    assert labelled("/tmp/a/replays.jsonl", None, trace_id="tt", ids=2) == "replays.jsonl#tt"
    assert labelled(run_id="r2", trace_id="tt") == "r2"
    assert labelled(run_id=7, trace_id="tt") == "tt"
    assert labelled() == "replay"


def test_the_first_reasons_count_the_blockers_and_name_the_first_on_its_span_or_the_header() -> None:
    empty = triage(Trace([], header=dict(HEADER)))
    assert [(x.rule, x.on, x.text) for x in empty.reasons] == [
        ("blockers", "header", "1 blocker; first: no_spans on spans"),
        ("not_replayable", "header", "a blocker stops triage")]
    two = triage(_cut(shop("o"), output=True), [shop("a"), shop("b")])
    assert [(x.rule, x.on, x.text) for x in two.reasons][:2] == [
        ("blockers", "o2", "2 blockers; first: truncated_output on tool.arguments"),
        ("reproduction", "step 2", "reproduced in 0 of 2 trials")]
    gap = shop("o")
    del gap.spans[3]  # a span missing: the blocker names no field
    assert [(x.rule, x.on, x.text) for x in triage(gap, [shop("a")]).reasons][0] == (
        "blockers", "o4", "1 blocker; first: seq_gap on spans")


def test_the_first_reasons_count_the_caveats_with_their_fields_and_the_trials_in_words() -> None:
    def first_two(o: Trace, *trials: Trace) -> list[tuple[str, str, str]]:
        return [(x.rule, x.on, x.text) for x in triage(o, list(trials)).reasons][:2]

    assert first_two(shop("o"), shop("a")) == [("caveats", "step 1", "no blocker; 0 caveats"),
                                               ("reproduction", "step 2", "reproduced in 1 of 1 trial")]
    one = shop("o")
    one.header = {k: v for k, v in one.header.items() if k != "clock"}
    assert first_two(one, shop("a"))[0] == ("caveats", "step 1", "no blocker; 1 caveat (header.clock), triage goes on")
    three = shop("o")
    three.header = {k: v for k, v in three.header.items() if k != "clock"}
    three.spans[1].data = {k: v for k, v in three.spans[1].data.items() if k != "messages"}
    three.spans[6].data = {k: v for k, v in three.spans[6].data.items() if k != "output"}
    assert first_two(three, shop("a"), shop("b")) == [
        ("caveats", "step 1", "no blocker; 3 caveats (header.clock, llm.messages, tool.output), triage goes on"),
        ("reproduction", "step 2", "reproduced in 2 of 2 trials")]


def test_a_named_failing_span_is_the_anchor_with_its_own_words() -> None:
    o = shop("o")
    o.spans[4].data = {**o.spans[4].data, "output": {"role": "assistant", "content": "refunded " + "x" * 100}}
    o.spans[1].data = {**o.spans[1].data, "output": "plain text"}
    span, ev = failure_anchor(o, "o4")
    assert span is o.spans[4] and ev is not None and ev.span_id == "o4"
    assert ev.reason == 'chat is the failure named: "refunded ' + "x" * 79 + '… (--failing-span)'
    assert failure_anchor(o, "o1")[1].reason == 'chat is the failure named: "plain text" (--failing-span)'  # type: ignore[union-attr]
    assert failure_anchor(o, "o2")[1].reason == "get_order is the failure named (--failing-span)"  # type: ignore[union-attr]
    failed = failure_anchor(shop("o", read_error=True), "o2")[1]
    assert failed is not None and failed.reason == "get_order failed (--failing-span)"
    o.path = "run.jsonl"
    with pytest.raises(TriageError) as err:
        failure_anchor(o, "zz")
    assert str(err.value) == ("run.jsonl: no span 'zz' (--failing-span takes a span id of ORIGINAL; `tracetui show` "
                              "and the TUI detail pane show them)")


def test_without_a_named_span_the_anchor_is_the_root_and_the_last_llm_answer_is_the_claim() -> None:
    o = shop("o")
    root, ev = failure_anchor(o)
    assert root is o.spans[0] and ev is not None and (ev.span_id, ev.reason) == ("o4", "the final claim, chat")
    failed = shop("o", root_error=True)
    failed.spans[4].data = {**failed.spans[4].data, "output": {"role": "assistant", "content": "refunded " + "x" * 100}}
    assert failure_anchor(failed)[1].reason == (  # type: ignore[union-attr]
        'the final claim, chat: "refunded ' + "x" * 79 + '… (the run failed)')
    failed.spans[4].data = {**failed.spans[4].data, "output": "plain"}
    assert failure_anchor(failed)[1].reason == 'the final claim, chat: "plain" (the run failed)'  # type: ignore[union-attr]


def test_step_one_counts_blockers_and_caveats_in_words_and_names_the_first_blocker_before_any_caveat() -> None:
    assert triage(shop("o")).steps[0].detail == "replayable: every span holds what a replay needs"
    o = shop("o")
    o.header = {k: v for k, v in o.header.items() if k != "clock"}
    r = triage(o)
    assert r.steps[0].detail == ("partial: 1 caveat (each with a workaround; they lower the verdict's confidence, "
                                 f"triage goes on); first: {r.replayability.findings[0].reason}")
    o.spans[6].data = {k: v for k, v in o.spans[6].data.items() if k != "output"}
    assert triage(o).steps[0].detail.startswith("partial: 2 caveats (each with a workaround; they lower the "
                                                "verdict's confidence, triage goes on); first: header.clock")
    one = triage(_cut(shop("o")))
    assert one.steps[0].detail == ("not_replayable: 1 blocker (a faithful replay is impossible); first: "
                                   f"{one.replayability.blockers[0].reason}")
    both = _cut(shop("o"), output=True)
    both.header = {k: v for k, v in both.header.items() if k != "clock"}
    r = triage(both)
    assert r.replayability.findings[0] not in r.replayability.blockers  # the clock caveat comes first in the list
    assert r.steps[0].detail == (
        "not_replayable: 2 blockers (a faithful replay is impossible), 1 caveat (each with a workaround; they "
        f"lower the verdict's confidence); first: {r.replayability.blockers[0].reason}")


def test_without_an_llm_the_anchor_is_the_runs_outcome_failed_or_not() -> None:
    for root_error, reason in ((False, "the run's outcome, support"), (True, "the run's outcome, support (failed)")):
        o = shop("o", root_error=root_error)
        o.spans = [s for s in o.spans if s.kind is not SpanKind.LLM]
        root, ev = failure_anchor(o)
        assert root is o.spans[0] and ev is not None and (ev.span_id, ev.reason) == ("o0", reason)
