"""Step 1 of triage: can this run be replayed, from the trace alone? (docs/triage.md)

practice.md, "Triage order": *missing spans, truncated outputs, unrecorded prompt version: the
report is an instrumentation bug; fix the schema and wait for the next occurrence rather than
guess*. ``assess`` reads one trace and lists what a replay would miss, each finding with the
span, the field and the evidence, and gives a verdict per span and for the run:

- ``not_replayable``: a replay cannot serve or match the run faithfully. Spans missing
  (``orphan_span``, ``seq_gap``, ``unclosed_span``), a field a replay must serve or match missing
  for the span's kind (``missing_field``), a value cut by the recorder or an exporter
  (``truncated_output``), content stripped at capture (``content_not_captured``).
- ``partial``: a replay can run but some calls may not match or the result is weaker: no clock in
  the header (``no_clock``), ids or ``now()`` values in tool arguments (``nondeterministic_argument``),
  tool-schema hash absent or changed (``no_tool_schema_hash``, ``tool_schema_changed``).
- ``replayable``: no finding.

What a span must hold follows practice.md, "What a trace must hold to be replayable", and
docs/format.md: a tool span its ``arguments`` and its ``output`` (a failed call may have none);
an llm span its rendered ``messages``, its ``model`` and its ``prompt_version``; a retrieval span
its ``query`` and ``documents``. Decision, memory, agent and other spans need nothing.

Findings repeated on many spans (the prompt version missing on every llm call of an OTel
export) are grouped: one finding per code and field, attached to the first span, naming at
most ``MAX_LISTED`` span ids and how many more; ``per_span`` still marks every span.

Cost: one pass over the spans; values are walked only where a rule can fire (strings are
checked by length and first character before any content). The 100k-span synthetic run of
``benchmarks/bench_diff.py`` (340 MB of tool outputs) assesses in 1.2-1.5 s on the shared
2-core machine under load, about half the time of reading it.

The evidence of two rules has a module of its own: ``triage.truncation`` (does a value look
cut; ``truncation`` and ``TRUNCATION_CAPS`` are importable from here as before) and
``triage.nondeterminism`` (values minted at run time in tool arguments).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers.tree import MISSING_PARENT, NOT_CAPTURED
from tracetui.core.triage.nondeterminism import ArgumentCheck
from tracetui.core.triage.crosscheck import raw_messages, raw_output, remote_parent, seen_by_model
from tracetui.core.triage.standins import inferred_clock, offered_tools, system_prompt_hash
from tracetui.core.triage.truncation import TRUNCATION_CAPS, describe, scan, truncation

__all__ = ["MAX_LISTED", "SEVERITIES", "TRUNCATION_CAPS", "VERDICTS", "Finding", "Replayability", "assess",
           "truncation"]

SEVERITIES = ("not_replayable", "partial")
"""A finding's weight, worst first."""

VERDICTS = ("replayable", "partial", "not_replayable")
"""Verdicts of a span or a run, best first."""

MAX_LISTED = 5
"""Span ids a grouped finding names before saying how many more."""

_SPAN_ID = operator.attrgetter("span_id")
_LENGTH = ("length", "max_tokens", "max_output_tokens", "model_length")
"""Finish reasons of an answer cut by the model's token limit: a real answer, not a capture cut."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a run or a span cannot be replayed faithfully.

    Attributes:
        span_id: The span (for a grouped finding: the first of the group); None for the run
            (header).
        code: ``orphan_span``, ``seq_gap``, ``unclosed_span``, ``missing_field``,
            ``truncated_output``, ``content_not_captured``, ``no_clock``,
            ``nondeterministic_argument``, ``no_tool_schema_hash``, ``tool_schema_changed``.
        severity: ``not_replayable`` or ``partial`` (``SEVERITIES``).
        reason: One sentence naming the field and the evidence.
        field: The field concerned (``tool.output``, ``llm.prompt_version``, ``header.clock``),
            or None (a span missing).
    """

    span_id: str | None
    code: str
    severity: str
    reason: str
    field: str | None = None
    workaround: str | None = None

    @property
    def grade(self) -> str:
        """``blocker`` (replay impossible or a lie: stops triage) or ``caveat`` (weakens it; has a workaround)."""
        return "blocker" if self.severity == "not_replayable" else "caveat"


@dataclass(slots=True)
class Replayability:
    """The replayability of one run.

    Attributes:
        verdict: The worst severity among the findings, ``replayable`` when there is none.
        findings: Run-level findings first, then by the ``seq`` of their span.
        per_span: span_id -> verdict, only for spans with findings (members of grouped
            findings and spans right after a ``seq`` gap included).
    """

    verdict: str
    findings: list[Finding]
    per_span: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        """``{"verdict", "findings": [{"span_id", "code", "severity", "reason", "field"}], "spans": {id: verdict}}``."""
        return {
            "verdict": self.verdict,
            "findings": [{"span_id": f.span_id, "code": f.code, "severity": f.severity, "grade": f.grade,
                          "reason": f.reason, "field": f.field, "workaround": f.workaround} for f in self.findings],
            "spans": dict(self.per_span),
        }

    @property
    def blockers(self) -> list[Finding]:
        """The findings that stop triage (``severity`` ``not_replayable``)."""
        return [f for f in self.findings if f.severity == "not_replayable"]

    @property
    def caveats(self) -> list[Finding]:
        """The findings that weaken a replay, each with its ``workaround``."""
        return [f for f in self.findings if f.severity != "not_replayable"]


# -- truncation -------------------------------------------------------------------------



# -- assess -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Raw:
    """A finding on one span before grouping."""

    span: Span | None
    code: str
    severity: str
    field: str | None
    reason: str
    group: str = ""
    """What a group of these does, after "N spans (ids)"; '' = never grouped."""
    detail: bool = False
    """Whether a group quotes its first member's reason (evidence that differs span to span)."""
    key: str = ""
    """Extra grouping key (a content-not-captured reason)."""
    workaround: str = ""
    """For a caveat: what stands in for what is missing, or what to do."""


@dataclass(slots=True)
class _Ctx:
    trace: Trace
    spans: list[Span]
    header: Mapping[str, Any]
    raws: list[_Raw] = field(default_factory=list)
    marks: dict[str, str] = field(default_factory=dict)
    index: dict[str, int] = field(default_factory=dict)
    blobs: dict[int, str] = field(default_factory=dict)
    self_cut: set[str] = field(default_factory=set)
    """Tool outputs the tool cut itself and the model read as they are: not truncation anywhere."""


def assess(trace: Trace, *, tool_schema_hash: str | None = None) -> Replayability:
    """The replayability of ``trace``: verdict, findings, and the verdict of each span with findings.

    Args:
        trace: One run, as ``read_trace`` returns it (spans in ``seq`` order; orphans marked
            with ``attributes["tracetui.missing_parent"]``; spans without content marked with
            ``attributes["tracetui.content_not_captured"]`` where the reader knows why).
        tool_schema_hash: The agent's current tool-schema hash, when known: a recording made
            against other schemas is stale (``tool_schema_changed``).

    Returns:
        The Replayability. Never raises on odd content: a field of an unexpected type is
        treated as absent or as text.

    Rules and severities: the module docstring and docs/triage.md, "Step 1: replayability".
    """
    spans = trace.spans
    header = trace.header if isinstance(trace.header, Mapping) else {}
    ctx = _Ctx(trace, spans, header)
    ctx.index = dict(zip(map(_SPAN_ID, spans), range(len(spans)), strict=True))
    _run_level(ctx, tool_schema_hash)
    if not spans:
        ctx.raws.append(_Raw(None, "no_spans", "not_replayable", "spans",
                             "the run holds no spans (only a header): nothing was recorded, or the file was cut"))
    _structure(ctx)
    _spans(ctx)
    return _finish(ctx)


def _run_level(ctx: _Ctx, tool_schema_hash: str | None) -> None:
    h = ctx.header
    clock = h.get("clock")
    if not (isinstance(clock, Mapping) and clock.get("now")):
        at = inferred_clock(ctx.trace)
        ctx.raws.append(_Raw(None, "no_clock", "partial", "header.clock",
                             "header.clock.now is not recorded: the time the agent was given is unknown, so a replay "
                             "cannot freeze its clock to it, and anything derived from now() (dates in prompts, "
                             "'today' in arguments) may differ",
                             workaround=(f"the root span's start time, {at} (inferred), stands for the clock: replay "
                                         f"with that clock" if at else
                                         "none: no span has a start time; give the replay a clock by hand")))
    recorded = h.get("tool_schema_hash") if isinstance(h.get("tool_schema_hash"), str) else None
    per_llm: dict[str, list[Span]] = {}
    uses_tools = False
    for s in ctx.spans:
        if s.kind is SpanKind.LLM:
            v = s.data.get("tool_schemas_hash")
            if isinstance(v, str) and v:
                per_llm.setdefault(v, []).append(s)
        elif s.kind is SpanKind.TOOL:
            uses_tools = True
    if not recorded and not per_llm:
        if uses_tools:
            offered = offered_tools(ctx.trace)
            ctx.raws.append(_Raw(None, "no_tool_schema_hash", "partial", "header.tool_schema_hash",
                                 "no tool-schema hash is recorded (neither header.tool_schema_hash nor "
                                 "llm.tool_schemas_hash): a replay cannot tell whether the recording was made against "
                                 "the tool schemas the agent exposes now",
                                 workaround=(f"the {offered[1]} tool definitions offered to the model (llm span "
                                             f"{offered[0].span_id!r}) stand for the hash" if offered else
                                             "none recorded: the tools offered to the model are not in the trace; "
                                             "a schema change shows only as calls that no longer match")))
    elif len(per_llm) > 1:
        (a, sa), (b, sb) = sorted(per_llm.items(), key=lambda kv: ctx.index[kv[1][0].span_id])[:2]
        ctx.raws.append(_Raw(sb[0], "tool_schema_changed", "partial", "llm.tool_schemas_hash",
                             f"the llm spans of this run saw {len(per_llm)} different tool-schema hashes "
                             f"({a!r} from span {sa[0].span_id!r}, {b!r} from span {sb[0].span_id!r}): the tools "
                             "changed during the run, so one recording cannot serve every call",
                             workaround="compare each call with the schema its own llm span saw"))
    if tool_schema_hash is not None:
        have = [recorded] if recorded else sorted(per_llm)
        if have and tool_schema_hash not in have:
            where = "header.tool_schema_hash" if recorded else "llm.tool_schemas_hash"
            ctx.raws.append(_Raw(None, "tool_schema_changed", "partial", where,
                                 f"the recording was made against tool schemas {have[0]!r} ({where}) and the agent "
                                 f"now exposes {tool_schema_hash!r}: recorded calls may no longer match the tools' "
                                 "contracts; re-record, or check the schema change first",
                                 workaround="judge the schema change first: it is a config change"))


def _structure(ctx: _Ctx) -> None:
    """Spans missing: orphans, gaps in seq, spans that never closed."""
    spans = ctx.spans
    for s in spans:
        if s.attributes and MISSING_PARENT in s.attributes and not remote_parent(s):
            p = s.attributes[MISSING_PARENT]
            ctx.raws.append(_Raw(s, "orphan_span", "not_replayable", None,
                                 f"span {s.span_id!r} names parent {p!r}, which is not in the trace: the parent span "
                                 "was never recorded, sits in another file, or the file is incomplete",
                                 "name a parent that is not in the trace: spans are missing", detail=True))
    seqs = [s.seq for s in spans]
    gaps: list[tuple[int, int]] = []  # (index after the gap, missing count)
    if seqs and seqs[0] > 0:
        gaps.append((0, seqs[0]))
    for i in range(1, len(seqs)):
        d = seqs[i] - seqs[i - 1]
        if d > 1:
            gaps.append((i, d - 1))
    if gaps:
        total = sum(k for _, k in gaps)
        first_i, first_k = gaps[0]
        after = spans[first_i]
        before = f"seq {seqs[first_i - 1]}" if first_i else "the start"
        desc = (f"{total} span{'s' if total != 1 else ''} missing from the seq order: {first_k} between {before} and "
                f"span {after.span_id!r} (seq {after.seq})")
        if len(gaps) > 1:
            desc += f", and {len(gaps) - 1} more gap{'s' if len(gaps) > 2 else ''}"
        ctx.raws.append(_Raw(after, "seq_gap", "not_replayable", None,
                             desc + ": lines were lost (skipped as unreadable, dropped by a collector, or never written)"))
        for i, _ in gaps[1:]:
            ctx.marks[spans[i].span_id] = "not_replayable"
    ends = any(s.end_ns is not None for s in spans)
    if not ends:
        return  # the source records no end times: nothing tells an open span from a point event
    parents = {s.parent_id for s in spans if s.parent_id is not None}
    native = ctx.trace.format == "tracetui"
    for s in spans:
        if s.end_ns is None and s.start_ns is not None and (s.parent_id is None or s.span_id in parents or native):
            what = ("the run's root" if s.parent_id is None else
                    "a parent" if s.span_id in parents else "the span")
            ctx.raws.append(_Raw(s, "unclosed_span", "not_replayable", "end_ns",
                                 f"span {s.span_id!r} ({what}) started but never closed (no end_ns) while other spans "
                                 "of the run did: its end, and what it returned, were never recorded (a crash, a kill, "
                                 "or a file still being written)",
                                 "started but never closed while the run went on: their ends, and what they "
                                 "returned, were never recorded"))


def _spans(ctx: _Ctx) -> None:
    h = ctx.header
    pv = h.get("prompt_versions")
    header_prompts = pv if isinstance(pv, Mapping) else {}
    hm = h.get("model")
    header_model = bool(hm.get("id") or hm.get("version")) if isinstance(hm, Mapping) else bool(hm)
    native = ctx.trace.format == "tracetui"
    nondet = ArgumentCheck(ctx.spans, ctx.header, ctx.blobs)
    last_llm = max((i for i, s in enumerate(ctx.spans) if s.kind is SpanKind.LLM), default=-1)
    for i, s in enumerate(ctx.spans):
        k = s.kind
        d = s.data
        if type(d) is not dict and not isinstance(d, Mapping):
            d = {}
        why = s.attributes.get(NOT_CAPTURED) if s.attributes else None
        if k is SpanKind.TOOL:
            args, out = d.get("arguments"), d.get("output")
            if isinstance(why, str) and why or (args is None and out is None):
                _not_captured(ctx, s, "tool.output", why)
            else:
                if args is None:
                    ctx.raws.append(_Raw(s, "missing_field", "not_replayable", "tool.arguments",
                                         f"tool span {s.span_id!r} ({s.tool_name}) has no tool.arguments: a replay "
                                         "cannot match the call to its recording",
                                         "have no tool.arguments: a replay cannot match these calls to their "
                                         "recording"))
                if out is None and ("output" not in d or not native) and s.status is not Status.ERROR:
                    if i < last_llm:
                        ctx.raws.append(_Raw(s, "missing_field", "not_replayable", "tool.output",
                                             f"tool span {s.span_id!r} ({s.tool_name}) has no tool.output and did "
                                             "not fail: a replay has nothing to serve for the call",
                                             "have no tool.output and did not fail: a replay has nothing to serve "
                                             "for these calls"))
                    else:  # no llm call came after it: the output fed no decision (a final `finish` action)
                        ctx.raws.append(_Raw(s, "missing_field", "partial", "tool.output",
                                             f"tool span {s.span_id!r} ({s.tool_name}) has no tool.output; no llm "
                                             "call came after it, so no decision read it, but a replay cannot "
                                             "serve it either",
                                             "have no tool.output, after the last llm call",
                                             workaround="none needed for the verdict: no decision read it"))
                if d.get("output_truncated") is True:
                    ctx.raws.append(_Raw(s, "truncated_output", "not_replayable", "tool.output",
                                         f"tool span {s.span_id!r}: tool.output_truncated is true, the recorder could "
                                         "not store the output whole; a strict replay never serves a truncated output",
                                         "have tool.output_truncated true: the recorder could not store their "
                                         "outputs whole, and a strict replay never serves a truncated output",
                                         key="flag"))
                elif out is not None:
                    _truncated(ctx, s, i, "tool.output", out, tool=True)
                if args is not None:
                    _truncated(ctx, s, i, "tool.arguments", args)
                    _nondeterministic(ctx, s, nondet.check(s, i, args))
        elif k is SpanKind.LLM:
            msgs, out = d.get("messages"), d.get("output")
            has_msgs = _has_content(msgs)
            raw_out = raw_output(s) if out is None else None
            if raw_out is not None:  # the reader kept an output attribute it could not read
                hit = scan(raw_out, markers=True, caps=True, json_any=True)
                if hit is not None:
                    _add_trunc(ctx, s, "llm.output", raw_out, hit)
                else:
                    ctx.raws.append(_Raw(s, "missing_field", "not_replayable", "llm.output",
                                         f"llm span {s.span_id!r}: its output attribute ({len(raw_out):,} characters) "
                                         "could not be read as messages: the answer the model gave is lost",
                                         "have an output attribute that could not be read: the answers are lost"))
            if isinstance(why, str) and why or (not has_msgs and not _has_content(out) and raw_out is None
                                                and raw_messages(s) is None):
                _not_captured(ctx, s, "llm.messages", why)
            elif not has_msgs:
                raw = raw_messages(s)
                hit = None if raw is None else scan(raw, markers=True, caps=True, json_any=True)
                if hit is not None:  # a reader kept the attribute it could not parse: say why
                    _add_trunc(ctx, s, "llm.messages", raw, hit)
                else:  # the answer is there: a replay can serve it; only the input check is lost
                    ctx.raws.append(_Raw(s, "missing_field", "partial", "llm.messages",
                                         f"llm span {s.span_id!r} has no llm.messages: the rendered messages "
                                         "actually sent were not recorded, so a replay cannot check the model's input",
                                         "have no llm.messages: the rendered messages actually sent were not "
                                         "recorded",
                                         workaround="the run's earlier spans (the answers and tool outputs before "
                                                    "each call) stand for the input; the recorded answer is served"))
            else:
                if type(msgs) is str:
                    hit = scan(msgs, markers=True, caps=True, json_any=True)
                else:
                    hit = scan(msgs, markers=False, caps=True, json_any=False, skip=ctx.self_cut)
                if hit is not None:
                    _add_trunc(ctx, s, "llm.messages", msgs, hit)
            if out is not None and d.get("finish_reason") not in _LENGTH:
                hit = scan(out, markers=True, caps=True, json_any=True)
                if hit is not None:
                    _add_trunc(ctx, s, "llm.output", out, hit)
            if not d.get("model") and not header_model:
                ctx.raws.append(_Raw(s, "missing_field", "partial", "llm.model",
                                     f"llm span {s.span_id!r} has no llm.model and the header names none: a replay "
                                     "cannot be sure to call the same model", "have no llm.model and the header names none",
                                     workaround="the answers are compared by what they asked for; a replay whose "
                                                "header or spans name a model is still compared with it"))
            pid = d.get("prompt_id")
            if not d.get("prompt_version") and not d.get("prompt_hash") and not (
                    len(header_prompts) == 1 or (isinstance(pid, str) and pid in header_prompts)):
                ph = system_prompt_hash(s) if has_msgs else None
                ctx.raws.append(_Raw(s, "missing_field", "partial", "llm.prompt_version",
                                     f"llm span {s.span_id!r} has no llm.prompt_version"
                                     + (f" and the header names {len(header_prompts)} templates" if header_prompts
                                        else " and the header has no prompt_versions")
                                     + ": the prompt the model was given cannot be rebuilt or compared",
                                     "have no llm.prompt_version, and the header's prompt_versions does not say "
                                     "which version was rendered: the prompt cannot be named by version",
                                     workaround=(f"the rendered system prompt's hash ({ph}, first span) stands for "
                                                 "the version: a trial whose system prompt hashes otherwise counts "
                                                 "as a prompt change" if ph else
                                                 "the rendered messages stand for it: they are compared as sent")))
        elif k is SpanKind.RETRIEVAL:
            if isinstance(why, str) and why:
                _not_captured(ctx, s, "retrieval.documents", why)
                continue
            for f in ("query", "documents"):
                if d.get(f) is None:
                    ctx.raws.append(_Raw(s, "missing_field", "not_replayable", f"retrieval.{f}",
                                         f"retrieval span {s.span_id!r} has no retrieval.{f}: a replay cannot "
                                         + ("match the call" if f == "query" else "serve what was retrieved"),
                                         f"have no retrieval.{f}"))
            docs = d.get("documents")
            if docs is not None:
                hit = scan(docs, markers=True, caps=False, json_any=False)
                if hit is not None:
                    _add_trunc(ctx, s, "retrieval.documents", docs, hit)
        elif isinstance(why, str) and why:
            _not_captured(ctx, s, f"{k.value}.output", why)


def _has_content(value: Any) -> bool:
    """Whether a message, a message list or an answer holds any content (text, parts, tool calls)."""
    if type(value) is list and value and type(value[0]) is dict and value[0].get("content"):
        return True  # the usual case first: a system or user prompt with text
    if value is None or value == "" or value == [] or value == {}:
        return False
    if type(value) is list:
        return any(map(_has_content, value))
    if isinstance(value, Mapping) and "role" in value:
        return any(value.get(k) not in (None, "", [], {}) for k in value if k not in ("role", "name", "tool_call_id"))
    return True


def _not_captured(ctx: _Ctx, s: Span, where: str, why: Any) -> None:
    what = "arguments or output" if s.kind is SpanKind.TOOL else "messages or output" if s.kind is SpanKind.LLM \
        else "content"
    reason = why if isinstance(why, str) and why else (
        "content capture was off or the content was stripped before the file was written")
    ctx.raws.append(_Raw(s, "content_not_captured", "not_replayable", where,
                         f"{s.kind.value} span {s.span_id!r} carries no {what}: {reason}",
                         f"carry no {what}: {reason}", key=reason))


def _truncated(ctx: _Ctx, s: Span, i: int, where: str, value: Any, *, tool: bool = False) -> None:
    hit = scan(value, markers=True, caps=True, json_any=True)
    if hit is None:
        return
    extra = ""
    if tool:
        seen = seen_by_model(ctx.spans, s, i, hit[0])
        if seen is not None:
            span_id, same = seen
            if same:  # the model read the same cut text: the tool cut it, a replay serves what was seen
                if isinstance(hit[0], str):
                    ctx.self_cut.add(hit[0])
                return
            extra = f"; the model's next prompt (span {span_id!r}) shows the value went on"
    _add_trunc(ctx, s, where, value, hit, extra)


def _add_trunc(ctx: _Ctx, s: Span, where: str, value: Any, hit: tuple[Any, str], extra: str = "") -> None:
    ctx.raws.append(_Raw(s, "truncated_output", "not_replayable", where,
                         f"{where} of span {s.span_id!r} looks truncated, {describe(value, hit)}{extra}: "
                         "a strict replay never serves a truncated value",
                         f"have a {where} that looks truncated", detail=True))


def _nondeterministic(ctx: _Ctx, s: Span, found: tuple[str, str] | None) -> None:
    """The finding for a value minted at run time in the arguments of tool span ``s`` (``ArgumentCheck``)."""
    if found is None:
        return
    value, why = found
    seeded = (" Seed the ids (the harness's ctx.new_id() with a header seed) or record them"
              if "UUID" in why else
              " Freeze the clock (header clock; the harness's ctx.now()) or pass the time in")
    ctx.raws.append(_Raw(
        s, "nondeterministic_argument", "partial", "tool.arguments",
        f"tool.arguments of span {s.span_id!r} ({s.tool_name}) hold {value!r}, {why}, that the agent "
        f"did not read anywhere: minted at run time, it will not match on replay.{seeded}",
        "hold random ids or now() values minted at run time, which will not match on replay unless the "
        "clock and ids are seeded", detail=True, workaround=seeded.strip()))


def _finish(ctx: _Ctx) -> Replayability:
    """Group repeated findings, order them, and mark the spans."""
    marks = ctx.marks
    rank = {"not_replayable": 2, "partial": 1}
    groups: dict[tuple[str, str | None, str], list[_Raw]] = {}
    singles: list[_Raw] = []
    for r in ctx.raws:
        if r.span is not None:
            sid = r.span.span_id
            if rank[r.severity] > rank.get(marks.get(sid, ""), 0):
                marks[sid] = r.severity
        if r.group and r.span is not None:
            groups.setdefault((r.code, r.field, r.key), []).append(r)
        else:
            singles.append(r)
    findings: list[tuple[int, Finding]] = []
    for r in singles:
        findings.append((_order(ctx, r.span), Finding(r.span.span_id if r.span else None, r.code, r.severity,
                                                      r.reason, r.field, r.workaround or None)))
    for (code, fld, _), rs in groups.items():
        first = rs[0]
        if len(rs) == 1:
            f = Finding(first.span.span_id, code, first.severity, first.reason, fld,  # type: ignore[union-attr]
                        first.workaround or None)
        else:
            ids = [r.span.span_id for r in rs]  # type: ignore[union-attr]
            listed = ", ".join(repr(x) for x in ids[:MAX_LISTED])
            more = f" and {len(ids) - MAX_LISTED:,} more" if len(ids) > MAX_LISTED else ""
            kinds = "/".join(sorted({r.span.kind.value for r in rs}))  # type: ignore[union-attr]
            text = f"{len(rs):,} {kinds} spans ({listed}{more}) {first.group}"
            if first.detail:
                text += f"; first: {first.reason}"
            f = Finding(first.span.span_id, code, first.severity, text, fld,  # type: ignore[union-attr]
                        first.workaround or None)
        findings.append((_order(ctx, first.span), f))
    findings.sort(key=lambda x: x[0])
    out = [f for _, f in findings]
    verdict = "replayable"
    if out:
        verdict = "not_replayable" if any(f.severity == "not_replayable" for f in out) else "partial"
    return Replayability(verdict, out, marks)


def _order(ctx: _Ctx, span: Span | None) -> int:
    return -1 if span is None else ctx.index.get(span.span_id, len(ctx.spans))
