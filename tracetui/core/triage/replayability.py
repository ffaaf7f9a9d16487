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

Size: one concern (the findings on a single trace, one function a rule); moving the rules into modules of their own is still open (issue 17).
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracetui.core.canonical import parse_json_string
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers.timefmt import iso_ns
from tracetui.core.readers.tree import MISSING_PARENT, NOT_CAPTURED

__all__ = ["MAX_LISTED", "SEVERITIES", "TRUNCATION_CAPS", "VERDICTS", "Finding", "Replayability", "assess",
           "truncation"]

SEVERITIES = ("not_replayable", "partial")
"""A finding's weight, worst first."""

VERDICTS = ("replayable", "partial", "not_replayable")
"""Verdicts of a span or a run, best first."""

MAX_LISTED = 5
"""Span ids a grouped finding names before saying how many more."""

TRUNCATION_CAPS: dict[int, str] = {
    256: "Google Cloud Trace v2 span attribute values (a string up to 256 bytes, TruncatableString)",
    1000: "MLflow trace request/response previews (TRACE_REQUEST_RESPONSE_PREVIEW_MAX_LENGTH_OSS = 1000, "
          "cut with '...')",
    1024: "Sentry Python SDK max_value_length default before 2.34 (value[:1021] + '...'); Elastic APM agents' "
          "keyword fields",
    2048: "Application Insights request URL max length; practice.md's stored 2 KB preview",
    4095: "New Relic attribute value max length (4,095 characters, OTLP data included)",
    4096: "New Relic's limit as opentelemetry-dotnet#3297 states it; Application Insights JS "
          "attributeValueLengthLimit example",
    8192: "Application Insights custom property max value length (where OTel attributes land)",
    10000: "Elastic APM long_field_max_length default; MLflow Databricks previews "
           "(TRACE_REQUEST_RESPONSE_PREVIEW_MAX_LENGTH_DBX)",
}
"""Known exporter caps, in characters, and where each comes from.

A string of exactly one of these lengths that does not end as complete text (mid-word, with an
ellipsis, or JSON that does not parse) was most likely cut by that exporter; so was a string of
the cap plus ``"..."`` or ``"…"`` appended. OpenTelemetry itself sets no default
(``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` is unlimited unless configured); an SDK configured with
a limit cuts silently (OTel spec, common/#attribute-limits), which is why lengths are the evidence.
"""

_ENDERS = frozenset('.!?)]}"\'>`*\n|»”’。')
"""Last characters of text that looks complete; a cut at a cap lands elsewhere almost always."""

_MARKER = re.compile(
    r"""(?:\.\.\.|…)\s*[\[(<]?\s*truncated\b(?:[^\])>\n]{0,40}[\])>])?  # ...[truncated]  … (truncated string)
      | [\[(<]\s*(?:\.\.\.|…)?\s*(?:[\w,]+\s+){0,3}(?<!not\ )truncated\b[^\])>\n]{0,80}[\])>]
                                                             # [TRUNCATED]  <truncated 512 chars>  [... 300 chars truncated ...]
    """, re.I | re.X)
"""Truncation markers recorders and exporters write: OpenAI Agents SDK ``... [truncated]``, Langfuse
plugins ``…[truncated N chars]``, LangWatch ``... (truncated string)``, ``[TRUNCATED - ...]``,
``<truncated N chars>``, ``[... N chars truncated ...]`` (a middle cut, marked in the middle)."""

_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_DAY_NS = 86_400 * 10**9
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
            "findings": [{"span_id": f.span_id, "code": f.code, "severity": f.severity, "reason": f.reason,
                          "field": f.field} for f in self.findings],
            "spans": dict(self.per_span),
        }


# -- truncation -------------------------------------------------------------------------


def truncation(value: Any) -> str | None:
    """Why ``value`` looks truncated, or None.

    Rules, on ``value`` and every string, list and object nested in it:

    - an object flagged by its recorder: ``output_truncated: true``; ``truncated: true`` with
      ``preview`` or ``original_type`` (the OpenAI Agents SDK's replacement of an oversized
      payload); ``truncatedByteCount`` / ``truncated_byte_count`` > 0 (Cloud Trace
      TruncatableString); ``is_truncated: true`` (OCSF long_string);
    - a string starting with ``{`` or ``[`` that fails to parse because the input ends (orjson:
      "unexpected end of data"), whatever its length: JSON cut mid-value. A string that
      parses, or fails elsewhere (a Python repr, a template), is not cut;
    - ``value`` itself a string whose length is exactly a cap of ``TRUNCATION_CAPS`` and that
      does not end as complete text (mid-word, mid-sentence, or with an ellipsis): exporters
      cut whole attribute values. Complete JSON of that length is not cut;
    - any string of a cap's length ending with ``...`` / ``…``, or of a cap plus an appended
      ``...`` / ``…`` (per-value truncators: Sentry's ``strip_string``, MLflow previews). A
      nested string of a cap's length without an ellipsis is not evidence: it is as likely whole;
    - a truncation marker (``_MARKER``: ``...[truncated]``, ``…(truncated)``, ``[TRUNCATED]``,
      ``<truncated N chars>``).

    Lengths are checked before content, so large values cost little.

    Args:
        value: Any JSON-like value (str, int, float, bool, None, list, dict).

    Returns:
        A short reason naming where in the value (``at .body``) and the evidence, or None.
    """
    hit = _scan(value, markers=True, caps=True, json_any=True)
    return None if hit is None else _describe(value, hit)


def _scan(value: Any, *, markers: bool, caps: bool, json_any: bool) -> tuple[Any, str] | None:
    """The first (leaf, why) that looks cut in ``value``, walking lists and dicts without recursion.

    The exact-cap rule applies to ``value`` itself when it is a string (an attribute an exporter
    cut); a nested string must also carry the ellipsis a per-value truncator appends. Every
    string is first checked by length, first character and a substring search in C; only the
    few that pass are examined.
    """
    if type(value) is str:
        why = _string_why(value, markers=markers, caps=caps, json_any=json_any, top=True)
        return None if why is None else (value, why)
    # Strings are tested where they are met (no push), only containers go on the stack: the
    # walk costs a few type checks per item.
    stack = [value]
    pop, push = stack.pop, stack.append
    flags, lengths, whole = _FLAG_KEYS, _ELLIPSIS_LENGTHS if caps else (), _MARKER_WHOLE
    while stack:
        v = pop()
        t = type(v)
        if t is dict:
            if not flags.isdisjoint(v):
                why = _flag_why(v)
                if why is not None:
                    return v, why
            items = v.values()
        elif t is list or t is tuple:
            items = v
        elif isinstance(v, Mapping):
            items = dict(v).values()
        else:
            continue
        for x in items:
            tx = type(x)
            if tx is str:
                if ((json_any and x[:1] in _OPENERS) or len(x) in lengths or (markers and (
                        ("runcat" in x or "RUNCAT" in x) if len(x) <= whole else _marker_word(x)))):
                    why = _string_why(x, markers=markers, caps=caps, json_any=json_any, top=False)
                    if why is not None:
                        return x, why
            elif tx is dict or tx is list:
                push(x)
            elif tx is int or tx is float or tx is bool or x is None:
                pass
            elif isinstance(x, str):
                why = _string_why(str(x), markers=markers, caps=caps, json_any=json_any, top=False)
                if why is not None:
                    return x, why
            elif isinstance(x, (Mapping, tuple)):
                push(x)
    return None


_FLAG_KEYS = frozenset({"output_truncated", "truncated", "truncatedByteCount", "truncated_byte_count", "is_truncated"})
_ELLIPSIS_LENGTHS = frozenset(c + k for c in TRUNCATION_CAPS for k in (0, 1, 3))
"""Lengths a nested string cut by a per-value truncator has: a cap, or a cap plus ``…`` or ``...``."""


def _flag_why(d: dict[Any, Any]) -> str | None:
    """Why an object says it was cut, or None."""
    if d.get("output_truncated") is True:
        return "output_truncated is true: the recorder could not store it whole"
    if d.get("truncated") is True and ("preview" in d or "original_type" in d):
        return "replaced by a truncation stub (truncated: true, with a preview), as the OpenAI Agents SDK does"
    for k in ("truncatedByteCount", "truncated_byte_count"):
        c = d.get(k)
        if type(c) is int and c > 0:
            return f"{k} is {c:,}: {c:,} bytes were cut"
    if d.get("is_truncated") is True:
        return "is_truncated is true"
    return None


_OK, _CUT, _NOT_JSON = 0, 1, 2
_OPENERS = ("{", "[", " ", "\n", "\t", "\r")


def _json_state(s: str) -> int:
    """``_OK`` when ``s`` parses; ``_CUT`` when the parser reached the end of input (JSON cut
    mid-value); ``_NOT_JSON`` when it fails elsewhere (a Python repr, a template, prose)."""
    try:
        orjson.loads(s)
    except orjson.JSONDecodeError as e:
        return _CUT if ("end of data" in e.msg or e.pos >= len(s.rstrip())) and len(s) > 1 else _NOT_JSON
    return _OK


def _string_why(s: str, *, markers: bool, caps: bool, json_any: bool, top: bool) -> str | None:
    """Why the string ``s`` looks cut, or None (rules: ``truncation``; ``top``: ``s`` is the whole value)."""
    n = len(s)
    body = s.lstrip() if s[:1].isspace() else s
    cap = 0
    if caps:
        if n in TRUNCATION_CAPS:
            cap = n
        elif n - 3 in TRUNCATION_CAPS and s.endswith("..."):
            cap = n - 3
        elif n - 1 in TRUNCATION_CAPS and s.endswith("…"):
            cap = n - 1
    state = _NOT_JSON
    if body[:1] in ("{", "[") and (json_any or (cap and top)):
        state = _json_state(body)
        if state == _CUT:
            if cap:
                return f"{n:,} characters, a known exporter cap ({_cap_name(cap)}), and JSON cut mid-value"
            return f"JSON cut mid-value ({n:,} characters; the parser reached the end of input)"
    if cap and state != _OK:  # complete JSON of a cap's length is not cut
        name = _cap_name(cap)
        if cap != n:
            return f"{n:,} characters: a known exporter cap ({name}) plus an appended {s[cap:]!r}"
        if s.endswith(("...", "…")):
            return f"{n:,} characters, a known exporter cap ({name}), ending with an ellipsis"
        # Without an ellipsis only the whole value counts: exporters cut whole attribute values,
        # and a nested string of a cap's length is as likely to be whole.
        last = s[-1]
        if top and last.isalnum():
            return f"{n:,} characters, a known exporter cap ({name}), ending mid-word ({s[-12:]!r})"
        if top and last not in _ENDERS:
            return f"{n:,} characters, a known exporter cap ({name}), ending mid-sentence ({s[-12:]!r})"
    if markers and _marker_word(s):
        m = _MARKER.search(s if n <= _MARKER_WHOLE else s[:_MARKER_HEAD] + "\n" + s[-_MARKER_TAIL:])
        if m is not None:
            return f"carries the truncation marker {m.group(0)!r}"
    return None


_MARKER_WHOLE, _MARKER_HEAD, _MARKER_TAIL = 4096, 512, 1024
"""Markers are looked for in a whole string up to 4 KiB, else in its first 512 and last 1,024
characters: suffix markers are the rule, and searching every long output costs more than the
rest of the assessment (0.7 s of 340 MB of tool outputs in the 100k-span benchmark)."""


def _marker_word(s: str) -> bool:
    """Whether ``s`` (its head and tail when long) contains ``truncat`` in lower or upper case."""
    if len(s) > _MARKER_WHOLE:
        h, t = s[:_MARKER_HEAD], s[-_MARKER_TAIL:]
        return "runcat" in h or "RUNCAT" in h or "runcat" in t or "RUNCAT" in t
    return "runcat" in s or "RUNCAT" in s


def _cap_name(cap: int) -> str:
    """The first source named for ``cap``, short."""
    return TRUNCATION_CAPS[cap].split(" (", 1)[0].split(";", 1)[0]


def _describe(value: Any, hit: tuple[Any, str]) -> str:
    leaf, why = hit
    path = _path_to(value, leaf)
    return f"at {path}: {why}" if path else why


def _path_to(value: Any, leaf: Any, prefix: str = "", depth: int = 0) -> str:
    """The JSON path (``.items[2].text``) of ``leaf`` (by identity) in ``value``; '' at the top or when not found."""
    if value is leaf or depth > 64:
        return prefix
    if isinstance(value, Mapping):
        for k, v in value.items():
            p = _path_to(v, leaf, f"{prefix}.{k}", depth + 1)
            if p or v is leaf:
                return p
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            p = _path_to(v, leaf, f"{prefix}[{i}]", depth + 1)
            if p or v is leaf:
                return p
    return ""


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


@dataclass(slots=True)
class _Ctx:
    trace: Trace
    spans: list[Span]
    header: Mapping[str, Any]
    raws: list[_Raw] = field(default_factory=list)
    marks: dict[str, str] = field(default_factory=dict)
    index: dict[str, int] = field(default_factory=dict)
    blobs: dict[int, str] = field(default_factory=dict)


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
        ctx.raws.append(_Raw(None, "no_clock", "partial", "header.clock",
                             "header.clock.now is not recorded: the time the agent was given is unknown, so a replay "
                             "cannot freeze its clock to it, and anything derived from now() (dates in prompts, "
                             "'today' in arguments) may differ"))
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
            ctx.raws.append(_Raw(None, "no_tool_schema_hash", "partial", "header.tool_schema_hash",
                                 "no tool-schema hash is recorded (neither header.tool_schema_hash nor "
                                 "llm.tool_schemas_hash): a replay cannot tell whether the recording was made against "
                                 "the tool schemas the agent exposes now"))
    elif len(per_llm) > 1:
        (a, sa), (b, sb) = sorted(per_llm.items(), key=lambda kv: ctx.index[kv[1][0].span_id])[:2]
        ctx.raws.append(_Raw(sb[0], "tool_schema_changed", "partial", "llm.tool_schemas_hash",
                             f"the llm spans of this run saw {len(per_llm)} different tool-schema hashes "
                             f"({a!r} from span {sa[0].span_id!r}, {b!r} from span {sb[0].span_id!r}): the tools "
                             "changed during the run, so one recording cannot serve every call"))
    if tool_schema_hash is not None:
        have = [recorded] if recorded else sorted(per_llm)
        if have and tool_schema_hash not in have:
            where = "header.tool_schema_hash" if recorded else "llm.tool_schemas_hash"
            ctx.raws.append(_Raw(None, "tool_schema_changed", "partial", where,
                                 f"the recording was made against tool schemas {have[0]!r} ({where}) and the agent "
                                 f"now exposes {tool_schema_hash!r}: recorded calls may no longer match the tools' "
                                 "contracts; re-record, or check the schema change first"))


def _structure(ctx: _Ctx) -> None:
    """Spans missing: orphans, gaps in seq, spans that never closed."""
    spans = ctx.spans
    for s in spans:
        if s.attributes and MISSING_PARENT in s.attributes:
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
    nondet = _Nondet(ctx)
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
                                             "have no tool.output, after the last llm call"))
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
                    nondet.check(s, i, args)
        elif k is SpanKind.LLM:
            msgs, out = d.get("messages"), d.get("output")
            has_msgs = _has_content(msgs)
            if isinstance(why, str) and why or (not has_msgs and not _has_content(out)):
                _not_captured(ctx, s, "llm.messages", why)
            elif not has_msgs:
                raw = _raw_messages(s)
                hit = None if raw is None else _scan(raw, markers=True, caps=True, json_any=True)
                if hit is not None:  # a reader kept the attribute it could not parse: say why
                    _add_trunc(ctx, s, "llm.messages", raw, hit)
                else:
                    ctx.raws.append(_Raw(s, "missing_field", "not_replayable", "llm.messages",
                                         f"llm span {s.span_id!r} has no llm.messages: the rendered messages "
                                         "actually sent were not recorded, so a replay cannot check or reproduce the "
                                         "model's input",
                                         "have no llm.messages: the rendered messages actually sent were not "
                                         "recorded"))
            else:
                if type(msgs) is str:
                    hit = _scan(msgs, markers=True, caps=True, json_any=True)
                else:
                    hit = _scan(msgs, markers=False, caps=True, json_any=False)
                if hit is not None:
                    _add_trunc(ctx, s, "llm.messages", msgs, hit)
            if out is not None and d.get("finish_reason") not in _LENGTH:
                hit = _scan(out, markers=True, caps=True, json_any=True)
                if hit is not None:
                    _add_trunc(ctx, s, "llm.output", out, hit)
            if not d.get("model") and not header_model:
                ctx.raws.append(_Raw(s, "missing_field", "not_replayable", "llm.model",
                                     f"llm span {s.span_id!r} has no llm.model and the header names none: a replay "
                                     "cannot call the same model", "have no llm.model and the header names none"))
            pid = d.get("prompt_id")
            if not d.get("prompt_version") and not (
                    len(header_prompts) == 1 or (isinstance(pid, str) and pid in header_prompts)):
                ctx.raws.append(_Raw(s, "missing_field", "not_replayable", "llm.prompt_version",
                                     f"llm span {s.span_id!r} has no llm.prompt_version"
                                     + (f" and the header names {len(header_prompts)} templates" if header_prompts
                                        else " and the header has no prompt_versions")
                                     + ": the prompt the model was given cannot be rebuilt or compared",
                                     "have no llm.prompt_version, and the header's prompt_versions does not say "
                                     "which version was rendered: the prompt cannot be rebuilt or compared; fix the "
                                     "instrumentation before reading the prompt"))
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
                hit = _scan(docs, markers=True, caps=False, json_any=False)
                if hit is not None:
                    _add_trunc(ctx, s, "retrieval.documents", docs, hit)
        elif isinstance(why, str) and why:
            _not_captured(ctx, s, f"{k.value}.output", why)


_RAW_MESSAGE_KEYS = ("gen_ai.input.messages", "gen_ai.prompt", "llm.input_messages", "input.value")
"""Source attributes that hold an llm span's input, where a reader may have kept one it could not parse."""


def _raw_messages(s: Span) -> str | None:
    a = s.attributes
    if a:
        for k in _RAW_MESSAGE_KEYS:
            v = a.get(k)
            if isinstance(v, str) and v:
                return v
    return None


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
    hit = _scan(value, markers=True, caps=True, json_any=True)
    if hit is None:
        return
    extra = ""
    if tool:
        seen = _seen_by_model(ctx, s, i, hit[0])
        if seen is not None:
            span_id, same = seen
            if same:
                return  # the model read the same cut text: the tool cut it, a replay serves what was seen
            extra = f"; the model's next prompt (span {span_id!r}) shows the value went on"
    _add_trunc(ctx, s, where, value, hit, extra)


def _add_trunc(ctx: _Ctx, s: Span, where: str, value: Any, hit: tuple[Any, str], extra: str = "") -> None:
    ctx.raws.append(_Raw(s, "truncated_output", "not_replayable", where,
                         f"{where} of span {s.span_id!r} looks truncated, {_describe(value, hit)}{extra}: "
                         "a strict replay never serves a truncated value",
                         f"have a {where} that looks truncated", detail=True))


def _seen_by_model(ctx: _Ctx, s: Span, i: int, leaf: Any) -> tuple[str, bool] | None:
    """How the next llm prompt quoted a tool result: (llm span id, same cut) or None when it did not.

    The tool message answering the call (``tool_call_id`` = the span's ``call_id``) in a later
    llm span's messages shows what the model read. When it holds the suspicious string as it
    is, the tool itself cut it (the model saw the same; a replay serves what was seen); when
    it holds a longer string starting the same way, the recorder cut it. Looks at most 200
    spans ahead.
    """
    call_id = s.data.get("call_id")
    if not isinstance(call_id, str) or not call_id or not isinstance(leaf, str):
        return None
    for later in ctx.spans[i + 1:i + 201]:
        if later.kind is not SpanKind.LLM:
            continue
        msgs = later.data.get("messages")
        if type(msgs) is not list:
            continue
        for m in reversed(msgs):
            if isinstance(m, Mapping) and m.get("tool_call_id") == call_id:
                quoted = _strings(m.get("content"))
                if leaf in quoted:
                    return later.span_id, True
                prefix = _uncut_prefix(leaf)
                if len(prefix) >= 16 and any(len(q) > len(prefix) and q.startswith(prefix) for q in quoted):
                    return later.span_id, False
                return None
    return None


def _strings(value: Any) -> set[str]:
    """Every string in ``value``, and in the JSON a string of it holds."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
            p = parse_json_string(v)
            if p is not v:
                stack.append(p)
        elif isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return out


def _uncut_prefix(s: str) -> str:
    """``s`` without what a truncator appended (an ellipsis, a marker and what follows it)."""
    m = _MARKER.search(s)
    if m is not None:
        return s[:m.start()]
    return s.removesuffix("...").removesuffix("…")


class _Nondet:
    """Random ids and ``now()`` values in tool arguments (minted by code, they differ on replay).

    Candidates: UUID-4 strings (unless the header records a ``seed``: the harness draws ids
    from a seeded generator); ISO date-times with a time of day, and epoch seconds or
    milliseconds (numbers or digit strings), within a day of the run's start (unless equal to
    the header clock, which a replay freezes). A candidate the agent read (it appears in the
    run's input, in the messages or answer of the llm call before the tool call, or in the
    outputs of the 20 spans before it) is data, not nondeterminism.
    """

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        h = ctx.header
        self.seeded = h.get("seed") is not None
        start = h.get("start_ns")
        if type(start) is not int:
            start = iso_ns(h.get("started_at"))
        if start is None:
            starts = [s.start_ns for s in ctx.spans if s.start_ns is not None]
            start = min(starts) if starts else None
        self.start = start
        clock = h.get("clock")
        self.clock = iso_ns(clock.get("now")) if isinstance(clock, Mapping) else None
        self.input_blob: str | None = None
        self.llms: list[int] = []
        if start is None:
            self.sec = self.ms = (1.0, 0.0)  # empty ranges
        else:
            self.sec = ((start - _DAY_NS) / 1e9, (start + _DAY_NS) / 1e9)
            self.ms = ((start - _DAY_NS) / 1e6, (start + _DAY_NS) / 1e6)

    def check(self, s: Span, i: int, args: Any) -> None:
        found: list[tuple[str, str]] = []
        stack = [args]
        (slo, shi), (mlo, mhi) = self.sec, self.ms
        while stack and len(found) < 3:
            v = stack.pop()
            t = type(v)
            if t is str:
                n = len(v)
                if 16 <= n <= 200:
                    if not self.seeded and n >= 36 and "-" in v:
                        m = _UUID4.search(v)
                        if m is not None:
                            found.append((m.group(0), "a random UUID-4"))
                            continue
                    if self.start is not None and ":" in v:
                        m = _ISO.search(v)
                        if m is not None:
                            why = self._near(iso_ns(m.group(0).replace(" ", "T")))
                            if why:
                                found.append((m.group(0), why))
                elif self.start is not None and n in (10, 13) and v.isdigit():
                    why = self._epoch(int(v))
                    if why:
                        found.append((v, why))
            elif t is int or t is float:
                if slo <= v <= shi or mlo <= v <= mhi:
                    why = self._epoch(v)
                    if why:
                        found.append((repr(v) if t is float else str(v), why))
            elif t is dict:
                stack.extend(v.values())
            elif t is list:
                stack.extend(v)
        for value, why in found:
            if not self._read(s, i, value):
                seeded = (" Seed the ids (the harness's ctx.new_id() with a header seed) or record them"
                          if "UUID" in why else
                          " Freeze the clock (header clock; the harness's ctx.now()) or pass the time in")
                self.ctx.raws.append(_Raw(
                    s, "nondeterministic_argument", "partial", "tool.arguments",
                    f"tool.arguments of span {s.span_id!r} ({s.tool_name}) hold {value!r}, {why}, that the agent "
                    f"did not read anywhere: minted at run time, it will not match on replay.{seeded}",
                    "hold random ids or now() values minted at run time, which will not match on replay unless the "
                    "clock and ids are seeded", detail=True))
                return

    def _near(self, ns: int | None) -> str:
        if ns is None or self.start is None or abs(ns - self.start) > _DAY_NS:
            return ""
        if self.clock is not None and ns == self.clock:
            return ""  # the header clock: a replay freezes now() to it
        return "a date-time within a day of the run's start"

    def _epoch(self, v: float) -> str:
        if isinstance(v, bool) or self.start is None:
            return ""
        for scale, unit in ((10**9, "epoch seconds"), (10**6, "epoch milliseconds")):
            ns = v * scale
            if abs(ns - self.start) <= _DAY_NS:
                if self.clock is not None and int(ns) // 10**9 == self.clock // 10**9:
                    return ""
                return f"{unit} within a day of the run's start"
        return ""

    def _read(self, s: Span, i: int, value: str) -> bool:
        """Whether ``value`` appears in what the agent read before the call at index ``i``."""
        ctx = self.ctx
        if self.input_blob is None:
            self.input_blob = _text(ctx.header.get("input"))
            self.llms = [j for j, p in enumerate(ctx.spans) if p.kind is SpanKind.LLM]
        if value in self.input_blob:
            return True
        at = bisect_left(self.llms, i) - 1
        if at >= 0:
            j = self.llms[at]
            blob = ctx.blobs.get(j)
            if blob is None:
                p = ctx.spans[j]
                blob = ctx.blobs[j] = _text(p.data.get("messages")) + _text(p.data.get("output"))
            if value in blob:
                return True
        for p in ctx.spans[max(0, i - 20):i]:
            if p.kind is not SpanKind.LLM and value in _text(
                    p.data.get("documents") if p.kind is SpanKind.RETRIEVAL else p.data.get("output")):
                return True
        return False


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


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
                                                      r.reason, r.field)))
    for (code, fld, _), rs in groups.items():
        first = rs[0]
        if len(rs) == 1:
            f = Finding(first.span.span_id, code, first.severity, first.reason, fld)  # type: ignore[union-attr]
        else:
            ids = [r.span.span_id for r in rs]  # type: ignore[union-attr]
            listed = ", ".join(repr(x) for x in ids[:MAX_LISTED])
            more = f" and {len(ids) - MAX_LISTED:,} more" if len(ids) > MAX_LISTED else ""
            kinds = "/".join(sorted({r.span.kind.value for r in rs}))  # type: ignore[union-attr]
            text = f"{len(rs):,} {kinds} spans ({listed}{more}) {first.group}"
            if first.detail:
                text += f"; first: {first.reason}"
            f = Finding(first.span.span_id, code, first.severity, text, fld)  # type: ignore[union-attr]
        findings.append((_order(ctx, first.span), f))
    findings.sort(key=lambda x: x[0])
    out = [f for _, f in findings]
    verdict = "replayable"
    if out:
        verdict = "not_replayable" if any(f.severity == "not_replayable" for f in out) else "partial"
    return Replayability(verdict, out, marks)


def _order(ctx: _Ctx, span: Span | None) -> int:
    return -1 if span is None else ctx.index.get(span.span_id, len(ctx.spans))
