"""Why a trial left the original's path: the cause step 3 judges (docs/triage.md, "Step 3").

``find_cause`` reads one trial's whole departure, not its first divergence alone: the run headers
first (a changed prompt version, model, tool-schema hash or tool versions is a config change by
itself; on traces that record no prompt version, a changed rendered system prompt is), then every
divergence up to and including the point where the trial left the path, in execution order:

- an answer worded otherwise (the same calls asked for, or both a text answer) is **rewording**,
  which the reproduction check ignores: skipped, never a cause; so is an llm input that differs
  only in its messages (the history carries an earlier rewording or an earlier read);
- a changed config field (``CONFIG_FIELDS``: prompt version or id, params, tool-schema hash,
  model, provider, ``tool.tool_version``, ``retrieval.index_version``) in any divergence: **config**;
- a read (tool or retrieval) that failed in the original and succeeded in the trial: **failed_read**;
- a read whose output differs: **data**;
- tool or retrieval arguments that differ while the model asked for the same call:
  **integration** (coerced or rebuilt between the model and the tool);
- a decision span differing while nothing before it did: **config** (a rule changed);
- the model asking for other calls on the same inputs: **model** (the last resort: the
  departure itself, when nothing before it explains it).

``stale_reads`` finds reads of the same key that return different outputs within the original,
except when the run itself wrote to that record between the two reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.canonical import canonical_json
from tracetui.core.changes import DivergenceType
from tracetui.core.diff import TraceDiff
from tracetui.core.diff.report import run_changes
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.triage.path import Evidence, call_key, describe_call, short
from tracetui.core.triage.standins import run_prompt

__all__ = ["CONFIG_FIELDS", "CONFIG_RUN_FIELDS", "Cause", "config_key", "find_cause", "header_config_changes",
           "stale_reads"]

CONFIG_FIELDS = ("llm.prompt_version", "llm.prompt_id", "llm.params", "llm.tool_schemas_hash", "llm.model",
                 "llm.provider", "tool.tool_version", "retrieval.index_version")
"""Field path prefixes whose change is a change of code or configuration, not of data or sampling."""

CONFIG_RUN_FIELDS = ("prompt_versions", "model", "tool_schema_hash", "tool_versions")
"""Header fields whose change between original and trial is a config change by itself.
``code_version`` is not one: a replay made with a code fix has another code version, and that does
not make the original's failure a config change (it is listed as support)."""

_READS = (SpanKind.TOOL, SpanKind.RETRIEVAL)


@dataclass(slots=True)
class Cause:
    """What made one trial leave the original's path.

    Attributes:
        kind: ``config``, ``failed_read``, ``data``, ``integration`` or ``model``.
        rule: The rule that fired (``header_change``, ``config_field``, ``failed_read``,
            ``moved_data``, ``coerced_arguments``, ``decision_changed``, ``model_decided``).
        fields: The field paths concerned (``model.id``, ``tool.output.status``).
        original: The original's span it shows on, or None (a header change before any span).
        replay: The trial's span, or None.
        text: One sentence: what differs, on what.
        key: What cases with the same cause share (``config model.id``, ``data tool get_order``):
            ``triage --batch`` groups by it.
        skipped: How many rewordings before it were passed over.
    """

    kind: str
    rule: str
    fields: list[str]
    original: Span | None
    replay: Span | None
    text: str
    key: str
    skipped: int = 0
    support: list[str] = field(default_factory=list)


def header_config_changes(original: Trace, replay: Trace) -> list[str]:
    """Config fields that differ between the two run headers (``CONFIG_RUN_FIELDS``, one level deep:
    ``prompt_versions.scheduler.system``, ``model.id``), and ``system_prompt_hash`` when neither
    header records prompt versions and the rendered system prompts differ (``standins.run_prompt``)."""
    oh = original.header if isinstance(original.header, Mapping) else {}
    rh = replay.header if isinstance(replay.header, Mapping) else {}
    out = [c["path"] for c in run_changes(oh, rh) if c["path"].split(".")[0] in CONFIG_RUN_FIELDS]
    tv_o, tv_r = oh.get("tool_versions"), rh.get("tool_versions")
    if tv_o != tv_r and (tv_o is not None or tv_r is not None):
        a = tv_o if isinstance(tv_o, Mapping) else {}
        b = tv_r if isinstance(tv_r, Mapping) else {}
        out += [f"tool_versions.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)] or ["tool_versions"]
    po, pr = run_prompt(original), run_prompt(replay)
    if po[0] == pr[0] == "system_prompt_hash" and po[1] != pr[1]:
        out.append("system_prompt_hash")
    return list(dict.fromkeys(out))


def _departure_order(diff: TraceDiff, at: Evidence | None) -> int | None:
    """The ``order`` of the divergence where the trial left the path, or None (look at all)."""
    if at is None or at.span_id is None:
        return None
    for d in diff.divergences:
        span = d.replay if at.side == "replay" else d.original
        if span is not None and span.span_id == at.span_id:
            return d.order
    return None


def _name(span: Span) -> str:
    d = span.data
    if span.kind is SpanKind.TOOL:
        return str(d.get("tool_name") or span.name)
    if span.kind is SpanKind.RETRIEVAL:
        return str(d.get("index") or span.name)
    return span.name


def find_cause(diff: TraceDiff, at: Evidence | None) -> Cause | None:
    """The cause of one trial's departure (module docstring), or None when no divergence and no
    header change explains it. ``at`` is where the reproduction check found the trial left the path."""
    until = _departure_order(diff, at)
    divs = sorted(diff.divergences, key=lambda d: d.order)
    if until is not None:
        divs = [d for d in divs if d.order <= until]
    skipped = 0
    model: Cause | None = None
    found: Cause | None = None
    for d in divs:
        o, r = d.original, d.replay
        span = o if o is not None else r
        assert span is not None
        conf = [f.path for f in d.fields if f.path.startswith(CONFIG_FIELDS)]
        if conf and o is not None and r is not None:
            found = Cause("config", "config_field", conf, o, r,
                          f"{_name(span)} ({span.kind.value}) runs with changed {', '.join(conf[:3])}",
                          config_key(conf), skipped)
            break
        if span.kind is SpanKind.LLM:
            if o is not None and r is not None and call_key(o) == call_key(r):
                if d.type is DivergenceType.DECISION_MISMATCH:
                    skipped += 1  # worded otherwise: the reproduction check ignores it
                continue  # same request as far as the path goes (history carries earlier differences)
            if model is None:
                text = (f"the model asked for other calls: {describe_call(r)} instead of {describe_call(o)}"
                        if o is not None and r is not None else
                        f"the model went on where the original stopped: {describe_call(r)}" if r is not None else
                        f"the model stopped where the original went on: {describe_call(o)}" if o is not None else "")
                model = Cause("model", "model_decided", [f.path for f in d.fields][:3], o, r, text, "model", skipped)
            continue
        if span.kind in _READS and o is not None and r is not None:
            fields = ", ".join(f.path for f in d.fields[:3])
            if d.type is DivergenceType.ARGS_MISMATCH:
                if model is None:
                    found = Cause("integration", "coerced_arguments", [f.path for f in d.fields][:3], o, r,
                                  f"{describe_call(o)}: the arguments differ ({fields}) while the model's requests "
                                  "before it matched: coerced or rebuilt between the model and the tool "
                                  "(integration code)", f"integration {span.kind.value} {_name(span)}", skipped)
                    break
                continue  # the model asked otherwise first: a consequence
            if o.status is Status.ERROR and r.status is not Status.ERROR:
                err = o.error_type or "an error"
                msg = (o.attributes or {}).get("otel.status_message") or o.data.get("error")
                found = Cause("failed_read", "failed_read", [f.path for f in d.fields][:3], o, r,
                              f"{describe_call(o)} failed in the original ({err}"
                              + (f": {short(msg, 60)}" if msg else "") + ") and succeeded in the trial: "
                              "the original decided without what it was reading",
                              f"failed_read {span.kind.value} {_name(span)}", skipped)
                break
            if d.type in (DivergenceType.OUTPUT_MISMATCH, DivergenceType.STATUS_MISMATCH) and model is None:
                found = Cause("data", "moved_data", [f.path for f in d.fields][:3], o, r,
                              f"{describe_call(o)}: the original read returned data the trial's read does not "
                              f"({fields}); stale or moving data",
                              f"data {span.kind.value} {_name(span)}", skipped)
                break
            continue
        if (span.kind is SpanKind.DECISION and d.type is DivergenceType.DECISION_MISMATCH and model is None
                and o is not None):
            found = Cause("config", "decision_changed", [f"{o.name}: " + ", ".join(f.path for f in d.fields)], o, r,
                          f"decision {o.name} differs while everything before it matched: a rule changed",
                          config_key([f"{o.name}: decision"]), skipped)
            break
    return found or model


_CONFIG_KINDS = (("prompt", ("llm.prompt_version", "llm.prompt_id", "prompt_versions", "system_prompt_hash")),
                 ("model", ("llm.model", "llm.provider", "model")),
                 ("tool_schema", ("llm.tool_schemas_hash", "tool_schema_hash")),
                 ("tool_version", ("tool.tool_version", "tool_versions")),
                 ("index_version", ("retrieval.index_version",)),
                 ("params", ("llm.params",)))


def config_key(fields: list[str]) -> str:
    """The batch key of a config change: ``config`` and what changed, one word per kind
    (``config model``, ``config prompt tool_version``), whichever field path showed it; a decision
    rule keeps its name (``config decision route``)."""
    kinds = []
    for f in fields:
        for name, prefixes in _CONFIG_KINDS:
            if f == prefixes[0] or f.startswith(tuple(p + c for p in prefixes for c in (".", "[", ""))):
                kinds.append(name)
                break
        else:
            kinds.append("decision " + f.split(": ", 1)[0] if ": " in f else f.split("[", 1)[0])
    return "config " + " ".join(sorted(set(kinds)))



def _values(value: Any, out: set[str]) -> set[str]:
    """Scalar values (strings of 3+ characters, numbers) in ``value``, as text."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if len(v) >= 3:
                out.add(v)
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, (int, float)):
            out.add(str(v))
        elif isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return out


def _own_write(spans: list[Span], read: Span, key: tuple[str, str, str]) -> bool:
    """Whether one of ``spans`` (between two reads of ``key``) is the run writing to that record:
    a tool call with ``effect: write``, or with no recorded effect that is another call and
    shares an argument value (a record id) with the read."""
    wanted = _values(read.data.get("arguments"), set())
    for s in spans:
        if s.kind is not SpanKind.TOOL or s.status is Status.ERROR:
            continue
        effect = s.data.get("effect")
        if effect == "write":
            return True
        if effect is None and call_key(s) != key and wanted & _values(s.data.get("arguments"), set()):
            return True
    return False


def stale_reads(original: Trace) -> list[Evidence]:
    """Reads of the same key (tool + canonical arguments) returning different outputs in the
    original: the data moved under the run. Not when the run wrote to that record in between."""
    spans = sorted(original.spans, key=lambda s: s.seq)
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for i, s in enumerate(spans):
        c = call_key(s)
        if c is None or c[0] in ("decision", "llm") or s.data.get("effect") == "write":
            continue
        field_name = "output" if s.kind is SpanKind.TOOL else "documents"
        j = seen.get(c)
        if j is not None:
            prev = spans[j]
            if canonical_json(prev.data.get(field_name)) != canonical_json(s.data.get(field_name)) and \
                    not _own_write(spans[j + 1:i], s, c):
                out.append(Evidence(prev.span_id, f"{describe_call(prev)} returned {short(prev.data.get(field_name), 60)}"))
                out.append(Evidence(s.span_id, f"a later read of the same key returned "
                                               f"{short(s.data.get(field_name), 60)}, with no write by the run "
                                               "in between: the data moved under the run"))
        seen[c] = i
    return out

