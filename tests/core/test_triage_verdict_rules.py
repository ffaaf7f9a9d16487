"""docs/triage.md: what ``triage`` takes and how step 3 words its verdicts, one test per rule (issue 25; the survivors
of ``scripts/mutation.py verdict run`` on ``triage``, ``_verdict`` and ``_trial``: tests/mutation_equivalents.md).

The run: the model reads the order (``get_order``), then asks for ``then`` (a write). A trial that asks for
``cancel`` instead is the model deciding otherwise on identical inputs.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import TraceBuilder

from tracetui.core.model import Trace
from tracetui.core.triage import triage
from tracetui.core.triage.verdict import TriageError

HEADER = {"schema": "tracetui/1", "run_id": "r1", "start_ns": 1_762_161_242_118_000_000,
          "clock": {"now": "2025-11-03T09:14:02+00:00"}, "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc",
          "prompt_versions": {"support.system": "v5"}, "code_version": "1.0"}
ASK = [{"role": "user", "content": "refund order 5531"}]


def _call(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "name": name, "arguments": '{"id": 5531}'}]}


def run(prefix: str, then: str = "refund", *, q: str = "refund 5531", path: str = "", order: str = "shipped",
        prompt: str = "v5", llm_prompt: str = "v5", status_failed: bool = False, failed: bool = False,
        words: tuple[str, str] | None = None, code: str = "1.0", stale: bool = False,
        upto: int | None = None, extra: bool = False) -> Trace:
    """The run, its get_order read returning ``order``, the system prompt at version ``prompt`` in the header and
    ``llm_prompt`` on the model calls; with ``status_failed`` a get_status read after the write, failed (else that
    read succeeds); the root failed when ``failed``; with ``words``, the model first says ``words[0]`` (no call),
    and says ``words[1]`` as it asks for get_order; ``code``: the header's code version; with ``stale``, get_order
    is read a second time and returns ``lost``; ``upto``: only the first spans (a run that stopped early); with
    ``extra``, one more read at the end that no model call asked for (get_stock)."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "support", input={"q": q}, output={"answer": "done"},
                 **({"status": "error", "error_type": "AgentError"} if failed else {}))
    llm = {"model": "gpt-4o", "prompt_version": llm_prompt, "tool_schemas_hash": "abc"}
    if words:
        t.add("llm", "chat", parent=root, messages=ASK, output={"role": "assistant", "content": words[0]}, **llm)
    t.add("llm", "chat", parent=root, messages=ASK, output={**_call("get_order"), "content": words and words[1]},
          **llm)
    t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": order}, effect="read")
    if stale:
        t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": "lost"}, effect="read")
    t.add("llm", "chat", parent=root, messages=[*ASK, {"role": "tool", "content": "shipped"}], output=_call(then),
          **llm)
    t.add("tool", then, parent=root, arguments={"id": 5531}, output={"ok": True}, effect="write")
    t.add("tool", "get_status", parent=root, arguments={"id": 5531}, output={"s": 1}, effect="read",
          **({"status": "error", "error_type": "Timeout"} if status_failed else {}))
    if extra:
        t.add("tool", "get_stock", parent=root, arguments={"sku": "BK-700"}, output={"n": 4}, effect="read")
    if upto is not None:
        del t.spans[upto:]
    trace = t.trace(path)
    trace.header = {**HEADER, "prompt_versions": {"support.system": prompt}, "code_version": code}
    return trace


# -- what triage takes ---------------------------------------------------------------------------------------------

def test_the_agents_current_tool_schema_hash_is_checked_in_step_one() -> None:
    """``tool_schema_hash``: the agent's hash now; another than the recorded one is a step-1 finding."""
    codes = [f.code for f in triage(run("o"), tool_schema_hash="def").replayability.findings]
    assert "tool_schema_changed" in codes
    same = triage(run("o"), tool_schema_hash="abc").replayability.findings
    assert "tool_schema_changed" not in [f.code for f in same]
    assert "tool_schema_changed" not in [f.code for f in triage(run("o")).replayability.findings]


def test_a_replay_without_spans_is_an_error_naming_the_replay() -> None:
    empty = Trace(spans=[], path="out/replay.jsonl")
    with pytest.raises(TriageError) as err:
        triage(run("o"), [run("a"), empty])
    assert str(err.value) == ("replay.jsonl: the replay holds no spans; nothing to compare (was it cut, or still "
                              "being written?)")


def test_a_replay_of_another_run_is_left_out_of_step_two_with_a_note() -> None:
    """A replay whose run input differs is not a trial: step 2 counts the others and says, on the replay's side,
    which file was left out and why; when every replay is another run's, triage stops with the notes."""
    other = run("b", q="cancel 7", path="runs/b.jsonl")
    r = triage(run("o"), [run("a", path="runs/a.jsonl"), other])
    assert r.reproduction is not None and r.reproduction.trials == 1
    assert [t.label for t in r.reproduction.per_trial] == ["a.jsonl"]
    note = r.steps[1].evidence[-1]
    assert (note.span_id, note.side, note.reason) == (
        None, "replay", "b.jsonl is not a replay of this run (its run input differs): left out of step 2")
    with pytest.raises(TriageError) as err:
        triage(run("o"), [other])
    assert str(err.value) == ("no REPLAY replays ORIGINAL: b.jsonl is not a replay of this run (its run input "
                              "differs): left out of step 2")


# -- one trial ---------------------------------------------------------------------------------------------------

def test_a_trial_that_reproduces_has_no_cause_and_no_config_change_whatever_else_differs() -> None:
    """The same calls and ending reproduce the failure: the trial names no cause and no config change, though its
    read returned other data and its header another prompt version."""
    r = triage(run("o"), [run("a", order="lost", prompt="v6")])
    assert r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert t.reproduced and t.first is not None
    assert t.cause is None and t.config_change == [] and t.at is None


def test_a_trials_cause_is_looked_for_no_further_than_where_it_left_the_path() -> None:
    """The trial asked for ``cancel`` where the original asked for ``refund`` (the model deciding otherwise); a read
    after that point (failed in the original only) is a consequence, not the cause."""
    r = triage(run("o", status_failed=True), [run("a", then="cancel")])
    assert r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert not t.reproduced and t.at is not None and t.at.side == "replay"
    assert t.cause is not None and (t.cause.kind, t.cause.rule) == ("model", "model_decided")
    assert r.verdict == "variance"


# -- step 3: a change of code or configuration -----------------------------------------------------------------------

PROMPT = "prompt_versions.support.system"


def test_a_config_cause_in_the_departure_is_the_evidence_and_the_header_adds_only_its_own_fields() -> None:
    """The trial's model call ran with another prompt version (the cause, on both sides' spans) and its header says
    so too: the evidence is the cause's two spans, then one line per header field the cause does not name."""
    r = triage(run("o"), [run("a", then="cancel", prompt="v6", llm_prompt="v6", path="t.jsonl")])
    assert r.verdict == "code_or_config_change" and r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert t.cause is not None and t.cause.kind == "config" and t.cause.fields == ["llm.prompt_version"]
    assert t.config_change == ["llm.prompt_version", PROMPT]
    assert [(e.span_id, e.side, e.reason) for e in r.evidence] == [
        (t.cause.original.span_id, "original", t.cause.text),  # type: ignore[union-attr]
        (t.cause.replay.span_id, "replay", "t.jsonl: the trial's side of it"),  # type: ignore[union-attr]
        (None, "original", f"run input changed: {PROMPT}")]
    assert [(x.rule, x.on, x.text) for x in r.reasons if x.rule in ("config_field", "header_change")] == [
        ("config_field", t.cause.original.span_id, t.cause.text),  # type: ignore[union-attr]
        ("header_change", "t.jsonl", f"the run header changed {PROMPT}: a config change by itself")]
    assert r.cause == "config prompt" and not r.caveats and r.confidence == "high"
    assert r.summary == ("code_or_config_change: t.jsonl ran with a change of code or configuration "
                         f"(llm.prompt_version, {PROMPT}) and left the original's path; judge the change, not the "
                         "model (confidence high)")


def test_a_changed_code_version_is_listed_as_support_and_left_out_of_the_cause_key() -> None:
    r = triage(run("o"), [run("a", then="cancel", prompt="v6", llm_prompt="v6", code="1.1")])
    assert r.reproduction is not None and r.reproduction.per_trial[0].config_change[-1] == "code_version"
    assert r.cause == "config prompt"


def test_a_header_change_with_another_cause_names_where_the_trial_left_the_path() -> None:
    """Only the header changed (the model calls record the same prompt version) and the model asked otherwise: the
    evidence is where the trial left the path, running with the changed fields, then the header's fields."""
    r = triage(run("o"), [run("a", then="cancel", prompt="v6", path="t.jsonl")])
    assert r.verdict == "code_or_config_change" and r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert t.cause is not None and t.cause.kind == "model" and t.at is not None
    assert t.config_change == [PROMPT]
    assert [(e.span_id, e.side, e.reason) for e in r.evidence] == [
        (t.at.span_id, "replay", f"t.jsonl left the original's path here, running with changed {PROMPT}"),
        (None, "original", f"run input changed: {PROMPT}")]
    assert [x.rule for x in r.reasons if x.rule != "confidence"][-1:] == ["header_change"]
    assert "config_field" not in [x.rule for x in r.reasons]


def test_a_header_change_in_a_trial_with_another_ending_and_no_cause_is_the_header_alone() -> None:
    """The same calls, but the trial did not fail where the original did, and its header changed the prompt: no
    divergence names a cause nor a departure span; the header's field is the evidence."""
    r = triage(run("o", failed=True), [run("a", prompt="v6", path="t.jsonl")])
    assert r.verdict == "code_or_config_change" and r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert not t.reproduced and t.cause is None and t.at is None
    assert [(e.span_id, e.reason) for e in r.evidence] == [(None, f"run input changed: {PROMPT}")]
    assert [(x.rule, x.on) for x in r.reasons if x.rule != "confidence"][-1:] == [("header_change", "t.jsonl")]


def test_two_answers_worded_otherwise_before_the_departure_are_counted_in_the_plural() -> None:
    r = triage(run("o", words=("let me see", "looking")), [run("a", then="cancel", words=("one moment", "checking"))])
    (why,) = [x for x in r.reasons if x.rule == "rewording_ignored"]
    assert why.text == ("2 answers worded otherwise before the departure passed over: the reproduction check ignores "
                        "wording")


# -- step 3: the rate, the model, the data, the fallback ---------------------------------------------------------

READ = 'get_order {"id":5531}: the last read before the failing decision; its recorded output fed it'


def _trials(*specs: dict[str, Any]) -> list[Trace]:
    return [run(f"t{i}", path=f"runs/t{i}.jsonl", **spec) for i, spec in enumerate(specs)]


def _evidence(r: Any) -> list[tuple[str | None, str, str]]:
    return [(e.span_id, e.side, e.reason) for e in r.evidence]


@pytest.mark.parametrize(("n", "confidence"), [(2, "medium"), (3, "high")])
def test_most_trials_reproducing_is_model_or_prompt_with_the_failure_the_count_and_the_feeding_read(
        n: int, confidence: str) -> None:
    r = triage(run("o"), _trials(*[{}] * n))
    assert (r.verdict, r.confidence, r.cause) == ("model_or_prompt", confidence, "model_or_prompt")
    assert r.failure is not None
    assert _evidence(r) == [
        (r.failure.span_id, "original", r.failure.reason),
        (None, "original", f"reproduced in {n} of {n} trials with recorded tools and the same inputs"),
        ("o2", "original", READ)]
    assert (r.reasons[-1].rule, r.reasons[-1].on, r.reasons[-1].text) == (
        "most_reproduce", "step 2", f"{n} of {n} trials reproduce, more than half")
    assert r.summary == (f"model_or_prompt: the failure comes back in {n} of {n} trials with the same inputs: the "
                         "model saw what it saw and decided badly; fix the prompt, the model or the decision "
                         f"structure, and promote the run (confidence {confidence})")


def test_some_trials_reproducing_is_variance_with_each_trial_that_did_not() -> None:
    r = triage(run("o"), _trials({}, {"then": "cancel"}))
    assert (r.verdict, r.confidence, r.cause) == ("variance", "medium", "variance")
    assert r.reproduction is not None and r.failure is not None
    t = r.reproduction.per_trial[1]
    assert t.at is not None
    assert _evidence(r) == [(r.failure.span_id, "original", r.failure.reason),
                            (t.at.span_id, "replay", f"t1.jsonl did not reproduce: {t.reason}")]
    assert (r.reasons[-1].rule, r.reasons[-1].on, r.reasons[-1].text) == (
        "some_reproduce", "step 2", "1 of 2 trials reproduce: not most")
    assert r.summary == ("variance: the failure comes back in only 1 of 2 trials: make the decision structurally "
                         "safer (tighter tool contracts, a validator, a narrower decision) (confidence medium)")


def test_variance_names_a_trial_that_stopped_early_on_the_original_and_one_without_a_departure_span() -> None:
    """One of three reproduces; one stopped before a call (the call it never made, the original's span), one made
    the same calls but ended otherwise (no span: the replay's side)."""
    r = triage(run("o"), _trials({}, {"upto": 3}, {"failed": True}))
    assert r.verdict == "variance" and r.reproduction is not None and r.failure is not None
    _, early, ending = r.reproduction.per_trial
    assert early.at is not None and ending.at is None
    assert _evidence(r) == [(r.failure.span_id, "original", r.failure.reason),
                            (early.at.span_id, "original", f"t1.jsonl did not reproduce: {early.reason}"),
                            (None, "replay", f"t2.jsonl did not reproduce: {ending.reason}")]


@pytest.mark.parametrize(("n", "confidence"), [(2, "medium"), (3, "high")])
def test_no_trial_reproducing_and_the_model_deciding_otherwise_in_each_is_variance(n: int, confidence: str) -> None:
    r = triage(run("o"), _trials(*[{"then": "cancel"}] * n))
    assert (r.verdict, r.confidence, r.cause) == ("variance", confidence, "variance")
    assert r.reproduction is not None and r.failure is not None
    trials = r.reproduction.per_trial
    assert _evidence(r) == [(r.failure.span_id, "original", r.failure.reason)] + [
        (t.cause.replay.span_id, "replay",  # type: ignore[union-attr]
         f"t{i}.jsonl: the model answered otherwise on identical inputs ({t.reason})") for i, t in enumerate(trials)]
    assert [(x.rule, x.on, x.text) for x in r.reasons if x.rule == "model_decided"] == [
        ("model_decided", f"t{i}.jsonl", t.cause.text) for i, t in enumerate(trials)]  # type: ignore[union-attr]
    assert r.summary == (f"variance: 0 of {n} trials reproduce and the only difference is the model deciding "
                         f"otherwise on the same inputs: the original's decision was a rare sample (confidence "
                         f"{confidence})")


def test_a_read_that_moved_is_data_or_integration_with_its_two_sides_then_the_feeding_read() -> None:
    r = triage(run("o"), _trials({"then": "cancel", "order": "lost"}))
    assert (r.verdict, r.confidence, r.cause) == ("data_or_integration", "high", "data tool get_order")
    assert r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert t.cause is not None and t.cause.rule == "moved_data"
    # the read that moved is also the read that fed the decision: named once
    assert _evidence(r) == [("o2", "original", t.cause.text), ("t02", "replay", "t0.jsonl: the trial's side of it")]
    assert (r.reasons[-1].rule, r.reasons[-1].on, r.reasons[-1].text) == ("moved_data", "o2", t.cause.text)
    assert r.summary == ("data_or_integration: with recorded tools the failure does not come back, and the "
                         f"evidence points at data or integration: {t.cause.text} (confidence high)")


def test_without_any_cause_the_fallback_is_data_or_integration_with_low_confidence() -> None:
    """No trial reproduces (the same calls, but none failed where the original did), no divergence names a cause:
    the failure, the feeding read and each trial's reason are the evidence."""
    r = triage(run("o", failed=True), _trials({}))
    assert (r.verdict, r.confidence, r.cause) == ("data_or_integration", "low", "unexplained")
    assert r.reproduction is not None and r.failure is not None
    (t,) = r.reproduction.per_trial
    assert t.at is None and t.cause is None
    assert _evidence(r) == [(r.failure.span_id, "original", r.failure.reason), ("o2", "original", READ),
                            (None, "replay", f"t0.jsonl: {t.reason}")]
    assert (r.reasons[-1].rule, r.reasons[-1].on, r.reasons[-1].text) == (
        "fallback", "step 3", "no trial reproduces and no divergence up to the departure names a cause: nothing "
                              "else explains it")
    assert r.summary == ("data_or_integration: with recorded tools the failure does not come back in any of 1 "
                         "trials: the original saw something the replay does not reproduce (confidence low)")


def test_a_stale_read_in_the_original_alone_is_data_or_integration_keyed_stale_read() -> None:
    """The original read the same record twice and got two answers; the trials (the model deciding otherwise) name
    no data cause: the stale read's evidence, its reason on the second read, and the read that fed the decision."""
    from tracetui.core.triage.cause import stale_reads

    original = run("o", stale=True)
    r = triage(original, _trials({"then": "cancel", "stale": True}, {"then": "cancel", "stale": True}))
    stale = stale_reads(original)
    assert (r.verdict, r.confidence, r.cause) == ("data_or_integration", "high", "data stale_read")
    assert [(x.rule, x.on, x.text) for x in r.reasons if x.rule == "stale_read"] == [
        ("stale_read", stale[1].span_id, stale[1].reason)]
    assert _evidence(r)[:len(stale)] == [(e.span_id, e.side, e.reason) for e in stale]
    assert len({(e.span_id, e.side) for e in r.evidence}) == len(r.evidence)  # each span named once
    assert r.summary.endswith(f"points at data or integration: {stale[0].reason} (confidence high)")


def test_a_run_without_spans_is_not_replayable_on_the_header() -> None:
    """The first blocker names no span (a run holding none): the verdict's reason is on ``header``."""
    r = triage(Trace(spans=[], path="empty.jsonl"))
    assert (r.verdict, r.confidence, r.cause) == ("not_replayable", "high", "instrumentation no_spans")
    assert (r.reasons[-1].rule, r.reasons[-1].on, r.reasons[-1].text) == (
        "not_replayable", "header", "a blocker stops triage")


def test_a_header_changing_many_fields_names_the_first_three_at_the_departure_and_four_in_the_reason() -> None:
    trial = run("a", then="cancel", path="t.jsonl")
    trial.header = {**trial.header, "prompt_versions": {"support.system": "v6", "support.tools": "v2"},
                    "model": {"id": "gpt-5"}, "tool_schema_hash": "xyz", "tool_versions": {"get_order": "2"}}
    r = triage(run("o"), [trial])
    assert r.verdict == "code_or_config_change" and r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert len(t.config_change) == 5
    assert r.evidence[0].reason == ("t.jsonl left the original's path here, running with changed "
                                    + ", ".join(t.config_change[:3]))
    (why,) = [x for x in r.reasons if x.rule == "header_change"]
    assert why.text == f"the run header changed {', '.join(t.config_change[:4])}: a config change by itself"
    assert f"({', '.join(t.config_change[:3])}) and left the original's path" in r.summary


def test_a_data_cause_after_the_decision_adds_the_read_that_fed_the_decision() -> None:
    """The trial ended otherwise (no departure span) and the only cause is a later read that failed in the original
    alone: its two sides, then the read before the failing decision, which no cause named."""
    r = triage(run("o", status_failed=True), _trials({"failed": True}))
    assert (r.verdict, r.cause) == ("data_or_integration", "failed_read tool get_status")
    assert [(e.span_id, e.side) for e in r.evidence] == [("o5", "original"), ("t05", "replay"), ("o2", "original")]
    assert r.evidence[-1].reason == READ


def test_the_fallback_names_where_a_trial_left_the_path() -> None:
    """A trial that made one read more than the original, no model call asking for it: no cause; the fallback's
    evidence names that call on the replay's side."""
    r = triage(run("o"), _trials({"extra": True}))
    assert (r.verdict, r.cause) == ("data_or_integration", "unexplained")
    assert r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert t.at is not None and t.cause is None
    assert [(e.span_id, e.side) for e in r.evidence][1:] == [("o2", "original"), (t.at.span_id, "replay")]
    assert r.evidence[-1].reason == f"t0.jsonl: {t.reason}"


def test_the_fallback_names_the_call_a_trial_never_made_on_the_original() -> None:
    """A trial that stopped before the last read (no model call differing): no cause; the fallback's evidence names
    the original's call it never made, on the original's side."""
    r = triage(run("o"), _trials({"upto": 5}))
    assert (r.verdict, r.cause) == ("data_or_integration", "unexplained")
    assert r.reproduction is not None
    (t,) = r.reproduction.per_trial
    assert t.at is not None and t.cause is None
    last = r.evidence[-1]
    assert (last.span_id, last.side, last.reason) == ("o5", "original", f"t0.jsonl: {t.reason}")


# -- the checklist: the three steps as a user reads them, and the confidence caveats lower ---------------------------

TITLES = ["Can this run be replayed?", "Does the failure come back with recorded tools?",
          "Model or prompt, data or integration, or a change?"]
ASK_REPLAY = ("no replay yet: run `tracetui replay ORIGINAL AGENT --trials K` (or press r in the triage panel) and "
              "triage again with the replay")


def _no_clock(trace: Trace) -> Trace:
    """``trace`` without the header clock: one caveat (``no_clock`` on ``header.clock``), with a workaround."""
    trace.header = {k: v for k, v in trace.header.items() if k != "clock"}
    return trace


def _steps(r: Any) -> list[tuple[int, str, str, str]]:
    return [(s.number, s.title, s.state, s.detail) for s in r.steps]


def test_without_a_replay_step_two_asks_for_one_and_step_three_waits_for_it() -> None:
    """Step 1 passed with a caveat, listed with its workaround; step 2 says how to get a replay; step 3 needs it; no
    verdict yet."""
    r = triage(_no_clock(run("o")))
    (caveat,) = r.replayability.findings
    assert caveat.severity == "partial" and caveat.workaround
    assert _steps(r) == [(1, TITLES[0], "passed", r.steps[0].detail), (2, TITLES[1], "pending", ASK_REPLAY),
                         (3, TITLES[2], "pending", "needs step 2")]
    assert [(e.span_id, e.side, e.reason) for e in r.steps[0].evidence] == [
        (caveat.span_id, "original", f"caveat: {caveat.reason}; workaround: {caveat.workaround}")]
    assert r.steps[1].evidence == [] and r.steps[2].evidence == []
    assert (r.verdict, r.confidence, r.cause) == (None, None, "")
    assert r.summary == "replayability partial; replay it to go on"


def test_a_blocker_fails_step_one_skips_step_two_and_is_the_verdict_as_it_reads() -> None:
    """A blocker (arguments cut mid-value) fails step 1 and is listed as it reads, the caveat with its workaround;
    step 2 is skipped; step 3 gives ``not_replayable`` on the blocker, whatever the caveat."""
    o = _no_clock(run("o"))
    o.spans[2].data = {**o.spans[2].data, "arguments": '{"id": 55'}
    r = triage(o)
    (blocker,) = r.replayability.blockers
    (caveat,) = r.replayability.caveats
    assert blocker.workaround is None
    assert _steps(r) == [(1, TITLES[0], "failed", r.steps[0].detail), (2, TITLES[1], "skipped", ASK_REPLAY),
                         (3, TITLES[2], "passed", r.summary)]
    assert r.summary.startswith("not_replayable: 1 blocker; first: ")
    assert [(e.span_id, e.reason) for e in r.steps[0].evidence] == [
        (caveat.span_id, f"caveat: {caveat.reason}; workaround: {caveat.workaround}"), ("o2", blocker.reason)]
    assert [(e.span_id, e.reason) for e in r.steps[2].evidence] == [("o2", blocker.reason)]
    assert (r.verdict, r.confidence) == ("not_replayable", "high")  # a caveat does not lower a blocker's verdict


def test_step_two_counts_the_trials_in_words_and_names_where_each_left_the_path() -> None:
    """One line per trial: its label and reason, on the span where it left the path (the original's call it never
    made, for a trial that stopped early) or on the replay's side without one; then step 3 with the verdict."""
    one = triage(run("o"), _trials({}))
    assert _steps(one)[1] == (2, TITLES[1], "passed", "reproduced in 1 of 1 trial")
    r = triage(run("o"), _trials({}, {"upto": 3}, {"failed": True}))
    assert r.reproduction is not None
    same, early, ending = r.reproduction.per_trial
    assert early.at is not None and early.at.side == "original" and same.at is None and ending.at is None
    assert _steps(r)[1] == (2, TITLES[1], "passed", "reproduced in 1 of 3 trials")
    assert [(e.span_id, e.side, e.reason) for e in r.steps[1].evidence] == [
        (None, "replay", f"t0.jsonl: {same.reason}"), (early.at.span_id, "original", f"t1.jsonl: {early.reason}"),
        (None, "replay", f"t2.jsonl: {ending.reason}")]
    assert _steps(r)[2] == (3, TITLES[2], "passed", r.summary)
    assert r.steps[2].evidence == r.evidence and r.evidence


def test_caveats_lower_the_confidence_one_step_and_say_by_how_many_on_which_fields() -> None:
    """``medium`` (two trials) with one caveat is ``low``; ``high`` (three) with two is ``medium``; the reason counts
    the caveats in words and names their fields; ``low`` stays ``low``, with no such reason."""
    r = triage(_no_clock(run("o")), _trials({}, {}))
    assert (r.verdict, r.confidence) == ("model_or_prompt", "low")
    assert (r.reasons[-1].rule, r.reasons[-1].on, r.reasons[-1].text) == (
        "confidence", "step 1", "medium lowered to low by 1 caveat (header.clock)")
    assert r.summary.endswith("(confidence low)")
    two = _no_clock(run("o"))
    two.spans[5].data = {k: v for k, v in two.spans[5].data.items() if k != "output"}
    r = triage(two, _trials({}, {}, {}))
    assert [f.field for f in r.caveats] == ["header.clock", "tool.output"]
    assert (r.confidence, r.reasons[-1].text) == ("medium", "high lowered to medium by 2 caveats (header.clock, "
                                                            "tool.output)")
    low = triage(_no_clock(run("o", failed=True)), _trials({}))
    assert (low.verdict, low.confidence) == ("data_or_integration", "low") and low.caveats
    assert "confidence" not in [x.rule for x in low.reasons]


def test_when_no_replay_is_of_this_run_the_error_lists_every_one_left_out() -> None:
    others = [run("b", q="cancel 7", path="runs/b.jsonl"), run("c", q="cancel 8", path="runs/c.jsonl")]
    with pytest.raises(TriageError) as err:
        triage(run("o"), others)
    assert str(err.value) == ("no REPLAY replays ORIGINAL: b.jsonl is not a replay of this run (its run input "
                              "differs): left out of step 2; c.jsonl is not a replay of this run (its run input "
                              "differs): left out of step 2")
