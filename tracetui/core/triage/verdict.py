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

from tracetui.core.canonical import args_hash, canonical_json
from tracetui.core.changes import DivergenceType
from tracetui.core.diff import Divergence, TraceDiff, diff_traces
from tracetui.core.errors import TracetuiError
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.triage.replayability import Replayability, assess
from tracetui.core.diff.report import not_a_replay, run_changes

VERDICTS = ("not_replayable", "model_or_prompt", "variance", "data_or_integration", "code_or_config_change")
SCHEMA_VERSION = 1

CONFIG_FIELDS = ("llm.prompt_version", "llm.prompt_id", "llm.params", "llm.tool_schemas_hash", "llm.model",
                 "llm.provider", "tool.tool_version", "retrieval.index_version")
"""Field path prefixes whose change is a change of code or configuration, not of data or sampling."""

CONFIG_RUN_FIELDS = ("code_version", "prompt_versions", "model", "tool_schema_hash")
"""Header fields (``report.RUN_FIELDS``) whose change between original and replay is a config change."""


class TriageError(TracetuiError):
    """Triage cannot run as asked (a ``--failing-span`` the original does not hold)."""


@dataclass(slots=True)
class Evidence:
    """One piece of evidence: a span and why it matters.

    Attributes:
        span_id: The span (None for a run-level fact such as a header field).
        reason: One sentence.
        side: ``original`` or ``replay``: which trace ``span_id`` belongs to.
    """

    span_id: str | None
    reason: str
    side: str = "original"


@dataclass(slots=True)
class Trial:
    """One replay compared with the original.

    Attributes:
        label: The replay's name (``replay.jsonl#run-id``).
        reproduced: Whether it reproduced the failure (module docstring).
        reason: Why or why not, one sentence.
        first: The diff's first divergence, or None.
        diff: The whole diff.
        config_change: The fields of a change of code or configuration that the first divergence
            (or the run headers) show, empty when none.
        at: Where the replay left the original's path (a replay span), or None.
    """

    label: str
    reproduced: bool
    reason: str
    first: Divergence | None
    diff: TraceDiff
    config_change: list[str] = field(default_factory=list)
    at: Evidence | None = None


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
    """

    verdict: str | None
    replayability: Replayability
    reproduction: Reproduction | None
    evidence: list[Evidence]
    failure: Evidence | None
    steps: list[Step]
    summary: str


# ---- the call path -----------------------------------------------------------------------------

def _call(span: Span) -> tuple[str, str, str] | None:
    """A span's place in the call path: (kind, name, canonical key), or None when not a call."""
    d = span.data
    if span.kind is SpanKind.TOOL:
        return ("tool", str(d.get("tool_name") or span.name), args_hash(d.get("arguments")))
    if span.kind is SpanKind.RETRIEVAL:
        key = {"query": d.get("query"), "top_k": d.get("top_k"), "filters": d.get("filters")}
        return ("retrieval", str(d.get("index") or span.name), args_hash(key))
    if span.kind is SpanKind.DECISION:
        return ("decision", str(d.get("decision") or span.name), args_hash(d.get("value")))
    if span.kind is SpanKind.LLM:
        return ("llm", "", args_hash(_asked(d.get("output"))))
    return None


def _asked(output: Any) -> Any:
    """What an LLM answer decided: the tool calls it asked for (names and arguments), or ``"text"``
    for a final answer. The wording of a text answer is not compared (a model in the loop rephrases)."""
    calls = output.get("tool_calls") if isinstance(output, dict) else None
    if calls:
        return [[c.get("name"), c.get("arguments")] if isinstance(c, dict) else c for c in calls]
    return "text"


def call_path(trace: Trace, *, until_seq: int | None = None) -> list[tuple[tuple[str, str, str], Span]]:
    """The run's path in seq order (up to ``until_seq`` included): tool and retrieval calls with
    their canonical arguments, decisions with their values, and what each LLM answer asked for."""
    out = []
    for s in sorted(trace.spans, key=lambda s: s.seq):
        if until_seq is not None and s.seq > until_seq:
            break
        c = _call(s)
        if c is not None:
            out.append((c, s))
    return out


def _root(trace: Trace) -> Span | None:
    roots = [s for s in trace.spans if s.parent_id is None]
    return min(roots, key=lambda s: s.seq) if roots else None


def _failed(span: Span | None) -> bool:
    return span is not None and span.status is Status.ERROR


def _describe_call(span: Span) -> str:
    d = span.data
    if span.kind is SpanKind.LLM:
        asked = _asked(d.get("output"))
        if asked == "text":
            return f"{span.name} answering in text"
        return f"{span.name} asking for " + ", ".join(f"{c[0]} {_short(c[1], 50)}" if isinstance(c, list) else str(c)
                                                     for c in asked)
    if span.kind is SpanKind.TOOL:
        return f"{d.get('tool_name') or span.name} {_short(d.get('arguments'))}"
    if span.kind is SpanKind.DECISION:
        return f"decision {d.get('decision') or span.name} = {_short(d.get('value'))}"
    return f"{span.name} {_short(d.get('query'))}"


def _short(value: Any, limit: int = 70) -> str:
    try:
        text = canonical_json(value).decode()
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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

def _config_change(diff: TraceDiff) -> list[str]:
    """Fields showing that the first divergence is a change of code or configuration: an input
    mismatch on config fields (``CONFIG_FIELDS``), or a decision span differing while everything
    before it matched. Then the run inputs that changed in the headers (``CONFIG_RUN_FIELDS``)
    are added as support. Empty when the first divergence is anything else: a header change alone
    (a code fix in the replay) does not make the original's failure a config change."""
    first = diff.first
    changed: list[str] = []
    if first is not None:
        if first.type is DivergenceType.INPUT_MISMATCH:
            changed += [f.path for f in first.fields if f.path.startswith(CONFIG_FIELDS)]
        elif first.type is DivergenceType.DECISION_MISMATCH and first.kind is SpanKind.DECISION:
            name = first.original.name if first.original is not None else "decision"
            changed += [f"{name}: " + ", ".join(f.path for f in first.fields)]
    if changed:
        changed += [c["path"] for c in run_changes(diff.original.header, diff.replay.header)
                    if c["path"].split(".")[0] in CONFIG_RUN_FIELDS]
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
    return Trial(label, reproduced, reason, diff.first, diff, _config_change(diff), at)


# ---- step 3 ----------------------------------------------------------------------------------

def _reads_before(original: Trace, seq: int | None) -> list[Span]:
    return [s for s in sorted(original.spans, key=lambda s: s.seq)
            if s.kind in (SpanKind.TOOL, SpanKind.RETRIEVAL) and (seq is None or s.seq < seq)
            and s.data.get("effect") != "write"]


def _stale_reads(original: Trace) -> list[Evidence]:
    """Reads of the same key (tool + canonical arguments) returning different outputs in the
    original: the data moved under the run."""
    seen: dict[tuple[str, str, str], Span] = {}
    out = []
    for s in sorted(original.spans, key=lambda s: s.seq):
        c = _call(s)
        if c is None or c[0] == "decision" or s.data.get("effect") == "write":
            continue
        field_name = "output" if s.kind is SpanKind.TOOL else "documents"
        prev = seen.get(c)
        if prev is not None and canonical_json(prev.data.get(field_name)) != canonical_json(s.data.get(field_name)):
            out.append(Evidence(prev.span_id, f"{_describe_call(prev)} returned {_short(prev.data.get(field_name), 60)}"))
            out.append(Evidence(s.span_id, f"a later read of the same key returned {_short(s.data.get(field_name), 60)}"))
        seen[c] = s
    return out


def _data_evidence(original: Trace, trials: list[Trial]) -> list[Evidence]:
    ev: list[Evidence] = []
    for t in trials:
        d = t.first
        if d is None or d.original is None:
            continue
        if d.kind in (SpanKind.TOOL, SpanKind.RETRIEVAL) and d.type is DivergenceType.OUTPUT_MISMATCH:
            fields = ", ".join(f.path for f in d.fields[:3])
            ev.append(Evidence(d.original.span_id, f"{_describe_call(d.original)}: the original read returned data the "
                                                  f"replay's read does not ({fields}); stale or moving data"))
            if d.replay is not None:
                ev.append(Evidence(d.replay.span_id, "the replay's read of the same call", side="replay"))
        elif d.kind is SpanKind.TOOL and d.type is DivergenceType.ARGS_MISMATCH:
            fields = ", ".join(f.path for f in d.fields[:3])
            ev.append(Evidence(d.original.span_id, f"{_describe_call(d.original)}: the arguments differ ({fields}) while "
                                                  "the model's requests before it matched: coerced or rebuilt between "
                                                  "the model and the tool (integration code)"))
        elif d.kind is SpanKind.RETRIEVAL and d.type is DivergenceType.ARGS_MISMATCH:
            ev.append(Evidence(d.original.span_id, f"{_describe_call(d.original)}: the retrieval request differs"))
    seen = set()
    unique = []
    for e in ev + _stale_reads(original):
        if (e.span_id, e.side) not in seen:
            seen.add((e.span_id, e.side))
            unique.append(e)
    return unique


def _model_only(trials: list[Trial]) -> bool:
    """Every trial's first divergence is the model answering otherwise on identical inputs."""
    return bool(trials) and all(
        t.first is not None and t.first.kind is SpanKind.LLM and t.first.type is DivergenceType.DECISION_MISMATCH
        for t in trials)


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
                 _step1_detail(rep), [Evidence(f.span_id, f.reason) for f in rep.findings])
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

    verdict, evidence, why = _verdict(original, rep, hard, reproduction, anchor, failure)
    if verdict is None:
        step3 = Step(3, "Model or prompt, data or integration, or a change?", "skipped" if hard else "pending",
                     "needs step 2")
    else:
        step3 = Step(3, "Model or prompt, data or integration, or a change?", "passed", f"{verdict}: {why}", evidence)
    summary = f"{verdict}: {why}" if verdict else (
        "not replayable" if hard else f"replayability {rep.verdict}; replay it to go on")
    return TriageResult(verdict, rep, reproduction, evidence, failure, [step1, step2, step3], summary)


def _other_input(original: Trace, replay: Trace) -> str:
    """Why ``replay`` is not a replay of ``original`` (its run input or agent differs), or ""."""
    return not_a_replay(original, replay)


def _label(replay: Trace) -> str:
    name = (replay.path or "replay").rsplit("/", 1)[-1]
    if len(replay.trace_ids) <= 1:
        return name
    run = replay.header.get("run_id") if isinstance(replay.header.get("run_id"), str) else replay.trace_id
    return f"{name}#{run}" if run else name


def _step1_detail(rep: Replayability) -> str:
    if not rep.findings:
        return "replayable: every span holds what a replay needs"
    hard = sum(1 for f in rep.findings if f.severity == "not_replayable")
    soft = len(rep.findings) - hard
    parts = []
    if hard:
        parts.append(f"{hard} finding{'s' if hard != 1 else ''} that block a faithful replay")
    if soft:
        parts.append(f"{soft} that weaken it")
    return f"{rep.verdict}: " + ", ".join(parts) + f"; first: {rep.findings[0].reason}"


def _verdict(original: Trace, rep: Replayability, hard: list[Any], reproduction: Reproduction | None,
             anchor: Span | None, failure: Evidence | None) -> tuple[str | None, list[Evidence], str]:
    if hard:
        ev = [Evidence(f.span_id, f.reason) for f in hard]
        return "not_replayable", ev, (f"{len(hard)} instrumentation finding{'s' if len(hard) != 1 else ''}; "
                                      f"first: {hard[0].reason}. Fix the recording before reading the prompt")
    if reproduction is None:
        return None, [], ""
    trials = reproduction.per_trial
    k, n = reproduction.reproduced, reproduction.trials
    anchor_seq = None if anchor is None or anchor.parent_id is None else anchor.seq
    if anchor_seq is None and failure is not None and failure.span_id is not None:
        claim = next((s for s in original.spans if s.span_id == failure.span_id), None)
        anchor_seq = claim.seq if claim is not None and claim.parent_id is not None else None
    changed = [t for t in trials if not t.reproduced and t.config_change]
    if changed:
        t = changed[0]
        ev = []
        if t.first is not None and t.first.original is not None:
            ev.append(Evidence(t.first.original.span_id, f"first divergence {t.first.type.value} at row {t.first.row}: "
                                                         + ", ".join(t.config_change[:4])))
        if t.first is not None and t.first.replay is not None:
            ev.append(Evidence(t.first.replay.span_id, "the replay's side of it", side="replay"))
        ev.extend(Evidence(None, f"run input changed: {c}") for c in t.config_change if "." in c and
                  c.split(".")[0] in CONFIG_RUN_FIELDS)
        return "code_or_config_change", ev, (f"{t.label} diverges first on a change of code or configuration "
                                             f"({', '.join(t.config_change[:3])}); judge the change, not the model")
    if k * 2 > n:
        ev = ([failure] if failure else []) + [Evidence(None, f"reproduced in {k} of {n} trials with recorded tools "
                                                              "and the same inputs")]
        read = _feeding_read(original, anchor_seq)
        if read is not None:
            ev.append(read)
        return "model_or_prompt", ev, (f"the failure comes back in {k} of {n} trials with the same inputs: the model "
                                       "saw what it saw and decided badly; fix the prompt, the model or the decision "
                                       "structure, and promote the run")
    if k > 0:
        ev = ([failure] if failure else []) + [
            Evidence(t.at.span_id if t.at else None, f"{t.label} did not reproduce: {t.reason}",
                     side=t.at.side if t.at else "replay") for t in trials if not t.reproduced]
        return "variance", ev, (f"the failure comes back in only {k} of {n} trials: make the decision structurally "
                                "safer (tighter tool contracts, a validator, a narrower decision)")
    data = _data_evidence(original, trials)
    if data:
        read = _feeding_read(original, anchor_seq)
        if read is not None and all(e.span_id != read.span_id for e in data):
            data.append(read)
        return "data_or_integration", data, ("with recorded tools the failure does not come back, and the "
                                             f"evidence points at data or integration: {data[0].reason}")
    if _model_only(trials):
        ev = ([failure] if failure else []) + [
            Evidence(t.first.original.span_id if t.first and t.first.original else None,
                     f"{t.label}: the model answered otherwise on identical inputs ({t.reason})") for t in trials]
        return "variance", ev, (f"0 of {n} trials reproduce and the only difference is the model deciding "
                                "otherwise on the same inputs: the original's decision was a rare sample")
    ev = ([failure] if failure else [])
    read = _feeding_read(original, anchor_seq)
    if read is not None:
        ev.append(read)
    ev.extend(Evidence(t.first.original.span_id if t.first and t.first.original else None,
                       f"{t.label}: {t.reason}") for t in trials)
    return "data_or_integration", ev, (f"with recorded tools the failure does not come back in any of {n} trials: the "
                                       "original saw something the replay does not reproduce")


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


def triage_json(result: TriageResult) -> dict[str, Any]:
    """The ``tracetui triage --format json`` document.

    Shape: ``{"schema_version": 1, "verdict": str | None, "summary", "replayability": {"verdict",
    "findings": [...], "spans": {...}}, "reproduction": {"trials", "reproduced", "per_trial":
    [{"label", "reproduced", "reason", "first_divergence", "config_change"}]} | None, "evidence":
    [{"span_id", "reason", "side"}], "failure": {...} | None, "steps": [{"number", "title",
    "state", "detail", "evidence"}]}``.
    """
    r = result.reproduction
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": result.verdict,
        "summary": result.summary,
        "replayability": result.replayability.to_json(),
        "reproduction": None if r is None else {
            "trials": r.trials, "reproduced": r.reproduced,
            "per_trial": [{"label": t.label, "reproduced": t.reproduced, "reason": t.reason,
                           "first_divergence": _div(t.first), "config_change": t.config_change} for t in r.per_trial]},
        "evidence": [_ev(e) for e in result.evidence],
        "failure": _ev(result.failure),
        "steps": [{"number": s.number, "title": s.title, "state": s.state, "detail": s.detail,
                   "evidence": [_ev(e) for e in s.evidence]} for s in result.steps],
    }
