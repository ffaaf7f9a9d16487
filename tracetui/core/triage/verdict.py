"""Guided triage: can the run be replayed, does the failure come back with recorded tools, and
is it the model, the data, or a change? (docs/triage.md)

The order is practice.md's "Triage order": (1) replayability from the trace alone (a run that
cannot be replayed is an instrumentation bug; fix the schema first); (2) replays with the
recorded tool outputs — does the same bad behaviour come back, in how many of K trials; (3) a
verdict with its evidence as span references:

=========================  ===================================================================
``not_replayable``         step 1 failed: spans missing, outputs truncated, prompt version
                           unrecorded...
``code_or_config_change``  a replay that did not reproduce the failure diverges first on a
                           change of input: prompt version, params, tool schemas, model (an
                           ``input_mismatch`` on those fields or changed run inputs in the
                           headers), or a ``decision`` span differs while everything before
                           it matched
``model_or_prompt``        with recorded tools and the same inputs the failure comes back in
                           most trials (more than half)
``variance``               it comes back in some trials but not most, or in none while the only
                           difference is the model deciding otherwise on identical inputs: the
                           fix is structural (tighter tool contracts, a validator, a narrower
                           decision), not another sentence in the prompt
``data_or_integration``    it does not come back and the evidence points at data: a tool or
                           retrieval read whose output differs in the replay, arguments changed
                           between the model's request and the tool (coerced), a read of the
                           same key returning something else later in the original; the read
                           that fed the failing decision is named
=========================  ===================================================================

"The failure" is the failing call or claim: ``failing_span`` when given; otherwise the whole
run — a replay reproduces it when it makes the same calls (tool and retrieval calls with their
canonical arguments, and decisions with their values), in the same order, and ends the same
way (the root span failed or not). With ``failing_span``, only the calls up to and including it
must match, then the same ending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.diff import Divergence, TraceDiff, diff_traces
from tracetui.core.errors import TracetuiError
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.triage.path import Evidence, call_path
from tracetui.core.triage.path import call_key as _call
from tracetui.core.triage.path import describe_call as _describe_call
from tracetui.core.triage.path import failed as _failed
from tracetui.core.triage.path import root as _root
from tracetui.core.triage.path import short as _short
from tracetui.core.triage.cause import Cause, config_key, find_cause, header_config_changes, stale_reads
from tracetui.core.triage.replayability import Finding, Replayability, assess
from tracetui.core.diff.report import not_a_replay, run_changes

VERDICTS = ("not_replayable", "model_or_prompt", "variance", "data_or_integration", "code_or_config_change")
SCHEMA_VERSION = 1

CONFIDENCE = ("high", "medium", "low")
"""How sure a verdict is, best first: lowered one step by caveats (step 1), by one trial alone where
a rate decides, or by the fallback rule."""


class TriageError(TracetuiError):
    """Triage cannot run as asked (a ``--failing-span`` the original does not hold)."""


@dataclass(slots=True)
class Trial:
    """One replay compared with the original.

    Attributes:
        label: The replay's name (``replay.jsonl#run-id``).
        reproduced: Whether it reproduced the failure (module docstring).
        reason: Why or why not, one sentence.
        first: The diff's first divergence, or None.
        diff: The whole diff.
        config_change: The fields of a change of code or configuration that the trial's departure
            (or the run headers) show, empty when none.
        at: Where the replay left the original's path (a replay span), or None.
        cause: Why it left the path (``cause.find_cause``: config, failed_read, data, integration
            or model), or None (reproduced, or nothing explains it).
    """

    label: str
    reproduced: bool
    reason: str
    first: Divergence | None
    diff: TraceDiff
    config_change: list[str] = field(default_factory=list)
    at: Evidence | None = None
    cause: Cause | None = None


@dataclass(frozen=True, slots=True)
class Reason:
    """One link of a verdict's reason chain: which rule fired, on what.

    Attributes:
        rule: The rule's name (``blockers``, ``caveats``, ``reproduction``, ``header_change``,
            ``config_field``, ``rewording_ignored``, ``failed_read``, ``moved_data``,
            ``coerced_arguments``, ``decision_changed``, ``model_decided``, ``stale_read``,
            ``most_reproduce``, ``some_reproduce``, ``fallback``, ``confidence``).
        on: What it fired on: a span id, a trial label, or a field.
        text: One sentence.
    """

    rule: str
    on: str
    text: str


@dataclass(slots=True)
class Reproduction:
    """Step 2: ``reproduced`` of ``trials`` replays brought the failure back."""

    trials: int
    reproduced: int
    per_trial: list[Trial]


@dataclass(slots=True)
class Step:
    """One step of the guided checklist.

    Attributes:
        number: 1, 2 or 3.
        title: What the step asks.
        state: ``passed`` (answered), ``failed`` (the answer stops triage), ``pending`` (needs
            a replay), ``skipped`` (an earlier step failed).
        detail: The answer in one or two sentences.
        evidence: The spans behind it.
    """

    number: int
    title: str
    state: str
    detail: str
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(slots=True)
class TriageResult:
    """The outcome of ``triage``.

    Attributes:
        verdict: One of ``VERDICTS``, or None while step 2 has no replay.
        replayability: Step 1.
        reproduction: Step 2, or None without replays.
        evidence: The verdict's evidence.
        failure: The failing call or claim in the original.
        steps: The three steps, in order.
        summary: One line: the verdict and its main reason.
        confidence: ``high``, ``medium`` or ``low`` (``CONFIDENCE``), None without a verdict.
        caveats: Step 1's caveats, each with its workaround: listed with the verdict.
        reasons: The reason chain: which rule fired, on what, in order.
        cause: The verdict's cause as ``triage --batch`` groups it (``config model.id``,
            ``data tool get_order``, ``model``, ``instrumentation``...), "" without a verdict.
    """

    verdict: str | None
    replayability: Replayability
    reproduction: Reproduction | None
    evidence: list[Evidence]
    failure: Evidence | None
    steps: list[Step]
    summary: str
    confidence: str | None = None
    caveats: list[Finding] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)
    cause: str = ""


# ---- the failure -------------------------------------------------------------------------------

def failure_anchor(original: Trace, failing_span: str | None = None) -> tuple[Span | None, Evidence | None]:
    """The failing call or claim of the original run.

    ``failing_span`` when given; otherwise the final claim — the last LLM span's answer, or the
    root span — which makes the whole run the failure (module docstring).

    Raises:
        TriageError: ``failing_span`` is not a span of ``original``.
    """
    if failing_span is not None:
        span = next((s for s in original.spans if s.span_id == failing_span), None)
        if span is None:
            raise TriageError(f"{original.path}: no span {failing_span!r} (--failing-span takes a span id of ORIGINAL; "
                              "`tracetui show` and the TUI detail pane show them)")
        what = "failed" if _failed(span) else "is the failure named"
        if span.kind is SpanKind.LLM:
            out = span.data.get("output")
            text = out.get("content") if isinstance(out, dict) else out
            if text:
                what += f": {_short(text, 90)}"
        return span, Evidence(span.span_id, f"{span.name} {what} (--failing-span)")
    root = _root(original)
    llms = [s for s in original.spans if s.kind is SpanKind.LLM]
    if llms:
        last = max(llms, key=lambda s: s.seq)
        out = last.data.get("output")
        text = out.get("content") if isinstance(out, dict) else out
        claim = f": {_short(text, 90)}" if text else ""
        ending = " (the run failed)" if _failed(root) else ""
        return root, Evidence(last.span_id, f"the final claim, {last.name}{claim}{ending}")
    if root is not None:
        return root, Evidence(root.span_id, f"the run's outcome, {root.name}" + (" (failed)" if _failed(root) else ""))
    return None, None


# ---- step 2: one trial ---------------------------------------------------------------------------

def _config_change(original: Trace, replay: Trace, cause: Cause | None) -> list[str]:
    """The config fields a trial that left the path ran with: header changes (``CONFIG_RUN_FIELDS``,
    a changed system prompt where no prompt version is recorded) count by themselves; a config
    cause in the departure (``find_cause``) too. ``code_version`` is added only as support."""
    changed = header_config_changes(original, replay)
    if cause is not None and cause.kind == "config":
        changed = cause.fields + changed
    if changed:
        changed += [c["path"] for c in run_changes(original.header, replay.header) if c["path"] == "code_version"]
    return list(dict.fromkeys(changed))


def _trial(original: Trace, replay: Trace, anchor: Span | None, label: str) -> Trial:
    diff = diff_traces(original, replay)
    until = None if anchor is None or anchor.parent_id is None else anchor.seq
    want = call_path(original, until_seq=until)
    got = call_path(replay)
    reproduced = True
    reason = ""
    at: Evidence | None = None
    for i, (w, ws) in enumerate(want):
        if i >= len(got):
            reproduced, reason = False, f"the replay stopped before call {i + 1}, {_describe_call(ws)}"
            at = Evidence(ws.span_id, "the call the replay never made")
            break
        if got[i][0] != w:
            reproduced, reason = False, (f"left the original's path at call {i + 1}: {_describe_call(got[i][1])} "
                                         f"instead of {_describe_call(ws)}")
            at = Evidence(got[i][1].span_id, "where the replay left the original's path", side="replay")
            break
    if reproduced and until is None and len(got) > len(want):
        extra = got[len(want)][1]
        reproduced, reason = False, f"made a call the original did not: {_describe_call(extra)}"
        at = Evidence(extra.span_id, "the call the original did not make", side="replay")
    if reproduced:
        o_root, r_root = _root(original), _root(replay)
        if _failed(o_root) != _failed(r_root):
            reproduced = False
            reason = "the same calls, but the run " + ("failed" if _failed(r_root) else "did not fail") + \
                " where the original " + ("failed" if _failed(o_root) else "did not")
        elif anchor is not None and anchor.parent_id is not None and _failed(anchor):
            twin = got[len(want) - 1][1] if want and len(got) >= len(want) else None
            if twin is not None and not _failed(twin) and _call(anchor) is not None:
                reproduced, reason = False, f"{_describe_call(anchor)} succeeded in the replay"
    if reproduced:
        reason = f"the same {len(want)} call{'s' if len(want) != 1 else ''}" + \
            (" up to the failing one" if until is not None else "") + " and the same ending"
    cause = None if reproduced else find_cause(diff, at)
    config = _config_change(original, replay, cause) if not reproduced else []
    return Trial(label, reproduced, reason, diff.first, diff, config, at, cause)


# ---- step 3 ----------------------------------------------------------------------------------

def _reads_before(original: Trace, seq: int | None) -> list[Span]:
    return [s for s in sorted(original.spans, key=lambda s: s.seq)
            if s.kind in (SpanKind.TOOL, SpanKind.RETRIEVAL) and (seq is None or s.seq < seq)
            and s.data.get("effect") != "write"]


def _data_causes(trials: list[Trial]) -> list[Trial]:
    return [t for t in trials if not t.reproduced and t.cause is not None
            and t.cause.kind in ("failed_read", "data", "integration")]


def _feeding_read(original: Trace, anchor_seq: int | None) -> Evidence | None:
    reads = _reads_before(original, anchor_seq)
    if not reads:
        return None
    s = reads[-1]
    return Evidence(s.span_id, f"{_describe_call(s)}: the last read before the failing decision; its recorded output "
                               "fed it")


def triage(original: Trace, replays: Sequence[Trace] = (), *, failing_span: str | None = None,
           tool_schema_hash: str | None = None) -> TriageResult:
    """Triage a run: replayability, reproduction over the replays, verdict and evidence.

    Args:
        original: The failed run.
        replays: Replays of it (each one trial), e.g. the runs of a ``tracetui replay --trials K`` file.
        failing_span: The span id of the failing call or claim in ``original``; default the final
            claim (the whole run).
        tool_schema_hash: The agent's current tool-schema hash, when known (step 1 flags a change).

    Returns:
        The TriageResult (verdict None when there are no replays and step 1 passed).

    Raises:
        TriageError: ``failing_span`` is not in ``original``.
    """
    rep = assess(original, tool_schema_hash=tool_schema_hash)
    anchor, failure = failure_anchor(original, failing_span)
    notes: list[Evidence] = []
    comparable: list[Trace] = []
    for r in replays:
        if not r.spans:
            raise TriageError(f"{_label(r)}: the replay holds no spans; nothing to compare (was it cut, or still "
                              "being written?)")
        other = _other_input(original, r)
        if other:
            notes.append(Evidence(None, f"{_label(r)} is not a replay of this run ({other}): left out of step 2",
                                  side="replay"))
        else:
            comparable.append(r)
    if replays and not comparable:
        raise TriageError("no REPLAY replays ORIGINAL: " + "; ".join(n.reason for n in notes))
    trials = [_trial(original, r, anchor, _label(r)) for r in comparable]
    reproduction = Reproduction(len(trials), sum(t.reproduced for t in trials), trials) if trials else None

    hard = [f for f in rep.findings if f.severity == "not_replayable"]
    step1 = Step(1, "Can this run be replayed?", "failed" if hard else "passed",
                 _step1_detail(rep), [Evidence(f.span_id, f.reason if f.workaround is None else
                                               f"caveat: {f.reason}; workaround: {f.workaround}")
                                      for f in rep.findings])
    if reproduction is None:
        step2 = Step(2, "Does the failure come back with recorded tools?", "skipped" if hard else "pending",
                     "no replay yet: run `tracetui replay ORIGINAL AGENT --trials K` (or press r in the triage panel) "
                     "and triage again with the replay")
    else:
        step2 = Step(2, "Does the failure come back with recorded tools?", "passed",
                     f"reproduced in {reproduction.reproduced} of {reproduction.trials} trial"
                     f"{'s' if reproduction.trials != 1 else ''}",
                     [Evidence(t.at.span_id if t.at else None, f"{t.label}: {t.reason}",
                               side=t.at.side if t.at else "replay") for t in trials] + notes)

    verdict, evidence, why, base, reasons, cause = _verdict(original, hard, reproduction, anchor, failure)
    confidence = None
    caveats = rep.caveats
    if verdict is not None:
        reasons = _reasons_before(rep, reproduction) + reasons
        confidence = base
        if caveats and verdict != "not_replayable" and base != CONFIDENCE[-1]:
            confidence = CONFIDENCE[min(CONFIDENCE.index(base) + 1, len(CONFIDENCE) - 1)]
            reasons.append(Reason("confidence", "step 1", f"{base} lowered to {confidence} by {len(caveats)} "
                                  f"caveat{'s' if len(caveats) != 1 else ''} ("
                                  + ", ".join(dict.fromkeys(f.field or f.code for f in caveats)) + ")"))
        why = f"{why} (confidence {confidence})"
    if verdict is None:
        step3 = Step(3, "Model or prompt, data or integration, or a change?", "skipped" if hard else "pending",
                     "needs step 2")
    else:
        step3 = Step(3, "Model or prompt, data or integration, or a change?", "passed", f"{verdict}: {why}", evidence)
    summary = f"{verdict}: {why}" if verdict else (
        "not replayable" if hard else f"replayability {rep.verdict}; replay it to go on")
    return TriageResult(verdict, rep, reproduction, evidence, failure, [step1, step2, step3], summary, confidence,
                        caveats, reasons, cause)


def _reasons_before(rep: Replayability, reproduction: Reproduction | None) -> list[Reason]:
    """The reason chain's first links: step 1's grading and step 2's count."""
    out = []
    b, c = rep.blockers, rep.caveats
    if b:
        out.append(Reason("blockers", b[0].span_id or "header", f"{len(b)} blocker{'s' if len(b) != 1 else ''}; "
                          f"first: {b[0].code} on {b[0].field or 'spans'}"))
    else:
        out.append(Reason("caveats", "step 1", f"no blocker; {len(c)} caveat{'s' if len(c) != 1 else ''}"
                          + (" (" + ", ".join(dict.fromkeys(f.field or f.code for f in c)) + "), triage goes on"
                             if c else "")))
    if reproduction is not None:
        out.append(Reason("reproduction", "step 2", f"reproduced in {reproduction.reproduced} of "
                          f"{reproduction.trials} trial{'s' if reproduction.trials != 1 else ''}"))
    return out


def _other_input(original: Trace, replay: Trace) -> str:
    """Why ``replay`` is not a replay of ``original`` (its run input or agent differs), or ""."""
    return not_a_replay(original, replay)


def _label(replay: Trace) -> str:
    """A trial's name: ``FILE#RUN`` (``FILE`` for a one-run file); the run id alone for a trial held in
    memory (``path`` empty: ``triage --agent`` without ``--replay-out`` keeps no file to name)."""
    run = replay.header.get("run_id") if isinstance(replay.header.get("run_id"), str) else replay.trace_id
    if not replay.path:
        return run or "replay"
    name = replay.path.rsplit("/", 1)[-1]
    if len(replay.trace_ids) <= 1:
        return name
    return f"{name}#{run}" if run else name


def _step1_detail(rep: Replayability) -> str:
    if not rep.findings:
        return "replayable: every span holds what a replay needs"
    hard = len(rep.blockers)
    soft = len(rep.findings) - hard
    parts = []
    if hard:
        parts.append(f"{hard} blocker{'s' if hard != 1 else ''} (a faithful replay is impossible)")
    if soft:
        parts.append(f"{soft} caveat{'s' if soft != 1 else ''} (each with a workaround; they lower the verdict's "
                     "confidence" + (")" if hard else ", triage goes on)"))
    first = (rep.blockers or rep.findings)[0]
    return f"{rep.verdict}: " + ", ".join(parts) + f"; first: {first.reason}"


def _ev_cause(t: Trial) -> list[Evidence]:
    c = t.cause
    assert c is not None
    ev = []
    if c.original is not None:
        ev.append(Evidence(c.original.span_id, c.text))
    if c.replay is not None:
        ev.append(Evidence(c.replay.span_id, f"{t.label}: the trial's side of it", side="replay"))
    return ev


def _verdict(original: Trace, hard: list[Finding], reproduction: Reproduction | None, anchor: Span | None,
             failure: Evidence | None) -> tuple[str | None, list[Evidence], str, str, list[Reason], str]:
    """(verdict, evidence, why, base confidence, reasons, cause key); the rules in docs/triage.md, "Step 3"."""
    if hard:
        ev = [Evidence(f.span_id, f.reason) for f in hard]
        return "not_replayable", ev, (f"{len(hard)} blocker{'s' if len(hard) != 1 else ''}; "
                                      f"first: {hard[0].reason}. Fix the recording before reading the prompt"), \
            "high", [Reason("not_replayable", hard[0].span_id or "header", "a blocker stops triage")], \
            "instrumentation " + hard[0].code
    if reproduction is None:
        return None, [], "", "", [], ""
    trials = reproduction.per_trial
    k, n = reproduction.reproduced, reproduction.trials
    reasons: list[Reason] = []
    for t in trials:
        if t.cause is not None and t.cause.skipped:
            reasons.append(Reason("rewording_ignored", t.label, f"{t.cause.skipped} answer"
                                  f"{'s' if t.cause.skipped != 1 else ''} worded otherwise before the departure "
                                  "passed over: the reproduction check ignores wording"))
    anchor_seq = None if anchor is None or anchor.parent_id is None else anchor.seq
    if anchor_seq is None and failure is not None and failure.span_id is not None:
        claim = next((s for s in original.spans if s.span_id == failure.span_id), None)
        anchor_seq = claim.seq if claim is not None and claim.parent_id is not None else None
    changed = [t for t in trials if not t.reproduced and t.config_change]
    if changed:
        t = changed[0]
        header = [c for c in t.config_change if t.cause is None or c not in t.cause.fields]
        ev = _ev_cause(t) if t.cause is not None and t.cause.kind == "config" else []
        if not ev and t.at is not None:
            ev.append(Evidence(t.at.span_id, f"{t.label} left the original's path here, running with changed "
                                             f"{', '.join(t.config_change[:3])}", side=t.at.side))
        ev.extend(Evidence(None, f"run input changed: {c}") for c in header)
        if t.cause is not None and t.cause.kind == "config":
            reasons.append(Reason(t.cause.rule, t.cause.original.span_id if t.cause.original else t.label,
                                  t.cause.text))
        if header:
            reasons.append(Reason("header_change", t.label, "the run header changed "
                                  f"{', '.join(header[:4])}: a config change by itself"))
        key = config_key([c for c in t.config_change if c != "code_version"])
        return "code_or_config_change", ev, (f"{t.label} ran with a change of code or configuration "
                                             f"({', '.join(t.config_change[:3])}) and left the original's path; "
                                             "judge the change, not the model"), "high", reasons, key
    if k * 2 > n:
        ev = ([failure] if failure else []) + [Evidence(None, f"reproduced in {k} of {n} trials with recorded tools "
                                                              "and the same inputs")]
        read = _feeding_read(original, anchor_seq)
        if read is not None:
            ev.append(read)
        reasons.append(Reason("most_reproduce", "step 2", f"{k} of {n} trials reproduce, more than half"))
        return "model_or_prompt", ev, (f"the failure comes back in {k} of {n} trials with the same inputs: the model "
                                       "saw what it saw and decided badly; fix the prompt, the model or the decision "
                                       "structure, and promote the run"), "high" if n >= 3 else "medium", reasons, \
            "model_or_prompt"
    if k > 0:
        ev = ([failure] if failure else []) + [
            Evidence(t.at.span_id if t.at else None, f"{t.label} did not reproduce: {t.reason}",
                     side=t.at.side if t.at else "replay") for t in trials if not t.reproduced]
        reasons.append(Reason("some_reproduce", "step 2", f"{k} of {n} trials reproduce: not most"))
        return "variance", ev, (f"the failure comes back in only {k} of {n} trials: make the decision structurally "
                                "safer (tighter tool contracts, a validator, a narrower decision)"), "medium", \
            reasons, "variance"
    data = _data_causes(trials)
    stale = stale_reads(original)
    if data or stale:
        ev = []
        for t in data:
            ev.extend(_ev_cause(t))
            c = t.cause
            assert c is not None
            reasons.append(Reason(c.rule, c.original.span_id if c.original else t.label, c.text))
        for e in stale:
            if all((e.span_id, e.side) != (x.span_id, x.side) for x in ev):
                ev.append(e)
        if stale:
            reasons.append(Reason("stale_read", stale[1].span_id or "", stale[1].reason))
        read = _feeding_read(original, anchor_seq)
        if read is not None and all(e.span_id != read.span_id for e in ev):
            ev.append(read)
        key = data[0].cause.key if data and data[0].cause else "data stale_read"
        return "data_or_integration", ev, ("with recorded tools the failure does not come back, and the "
                                           f"evidence points at data or integration: {ev[0].reason}"), "high", \
            reasons, key
    models = [t for t in trials if t.cause is not None and t.cause.kind == "model"]
    if trials and len(models) == len(trials):
        ev = ([failure] if failure else []) + [
            Evidence(t.cause.replay.span_id if t.cause and t.cause.replay else None,
                     f"{t.label}: the model answered otherwise on identical inputs ({t.reason})", side="replay")
            for t in trials]
        reasons.extend(Reason("model_decided", t.label, t.cause.text) for t in models if t.cause)
        return "variance", ev, (f"0 of {n} trials reproduce and the only difference is the model deciding "
                                "otherwise on the same inputs: the original's decision was a rare sample"), \
            "medium" if n < 3 else "high", reasons, "variance"
    ev = ([failure] if failure else [])
    read = _feeding_read(original, anchor_seq)
    if read is not None:
        ev.append(read)
    ev.extend(Evidence(t.at.span_id if t.at else None, f"{t.label}: {t.reason}", side=t.at.side if t.at else "replay")
              for t in trials)
    reasons.append(Reason("fallback", "step 3", "no trial reproduces and no divergence up to the departure "
                          "names a cause: nothing else explains it"))
    return "data_or_integration", ev, (f"with recorded tools the failure does not come back in any of {n} trials: the "
                                       "original saw something the replay does not reproduce"), "low", reasons, \
        "unexplained"


# ---- JSON -----------------------------------------------------------------------------------

def _ev(e: Evidence | None) -> dict[str, Any] | None:
    return None if e is None else {"span_id": e.span_id, "reason": e.reason, "side": e.side}


def _div(d: Divergence | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"type": d.type.value, "row": d.row, "kind": d.kind.value,
            "original_span_id": d.original.span_id if d.original else None,
            "replay_span_id": d.replay.span_id if d.replay else None,
            "fields": [f.path for f in d.fields]}


def _cause(c: Cause | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {"kind": c.kind, "rule": c.rule, "fields": list(c.fields),
            "original_span_id": c.original.span_id if c.original else None,
            "replay_span_id": c.replay.span_id if c.replay else None, "text": c.text, "key": c.key,
            "rewordings_skipped": c.skipped}


def triage_json(result: TriageResult) -> dict[str, Any]:
    """The ``tracetui triage --format json`` document.

    Shape: ``{"schema_version": 1, "verdict": str | None, "confidence": "high" | "medium" | "low" |
    None, "cause": str, "summary", "reasons": [{"rule", "on", "text"}], "caveats": [{"span_id",
    "code", "field", "reason", "workaround"}], "replayability": {"verdict", "findings": [...],
    "spans": {...}}, "reproduction": {"trials", "reproduced", "per_trial": [{"label", "reproduced",
    "reason", "first_divergence", "config_change", "cause"}]} | None, "evidence": [{"span_id",
    "reason", "side"}], "failure": {...} | None, "steps": [{"number", "title", "state", "detail",
    "evidence"}]}``. A trial's ``cause`` is ``{"kind", "rule", "fields", "original_span_id",
    "replay_span_id", "text", "key", "rewordings_skipped"}`` or None.
    """
    r = result.reproduction
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": result.verdict,
        "confidence": result.confidence,
        "cause": result.cause,
        "summary": result.summary,
        "reasons": [{"rule": x.rule, "on": x.on, "text": x.text} for x in result.reasons],
        "caveats": [{"span_id": f.span_id, "code": f.code, "field": f.field, "reason": f.reason,
                     "workaround": f.workaround} for f in result.caveats],
        "replayability": result.replayability.to_json(),
        "reproduction": None if r is None else {
            "trials": r.trials, "reproduced": r.reproduced,
            "per_trial": [{"label": t.label, "reproduced": t.reproduced, "reason": t.reason,
                           "first_divergence": _div(t.first), "config_change": t.config_change, "cause": _cause(t.cause)}
                          for t in r.per_trial]},
        "evidence": [_ev(e) for e in result.evidence],
        "failure": _ev(result.failure),
        "steps": [{"number": s.number, "title": s.title, "state": s.state, "detail": s.detail,
                   "evidence": [_ev(e) for e in s.evidence]} for s in result.steps],
    }
