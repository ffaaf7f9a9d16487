"""The diff report: a versioned, JSON-serialisable summary of a ``TraceDiff``.

This is what ``tracetui diff --format json`` prints and what CI consumes.
Shape (``schema_version`` 1)::

    {"schema_version": 1,
     "original": {"path", "format", "trace_id", "run_count", "span_count", "skipped"},
     "replay":   {... same ...},
     "first_divergence": null | DIVERGENCE,
     "divergences": [DIVERGENCE, ...],          # in the original's execution order
     "counts": {"args_mismatch": 1, ...},       # by type, only types that occur
     "run_changes": [{"path", "original", "replay"}, ...],  # header fields that differ
     "not_a_replay": null | WHY,                # the two runs are not replays of each other (another agent, input)
     "not_comparable": {"fields": N, "items": [{"path", "reason", "pairs"}, ...]},
                                                # what the two formats record differently, not compared
     "redacted_with_key": null | KEY_ID,        # the raw side redacted with the other side's key first
     "labels_file": null | PATH,                # the replay's reviewer labels (tracetui.core.diff.labels)
     "unmatched_labels": [LABEL, ...]}          # labels of the sidecar that match no divergence

``run_changes`` compares the run headers' inputs (``RUN_FIELDS``: code and
prompt versions, model, tool schemas, the clock the agent was given, the run's
input): the short answer to "what changed between the two runs" that a CI
report should lead with (``../shared/design/practice.md``, "Diffing runs").

    DIVERGENCE = {"type", "kind", "row", "path",
                  "original": null | {"span_id", "name", "seq"},
                  "replay":   null | {"span_id", "name", "seq"},
                  "fields": [{"path", "original", "replay"[, "absent"]}, ...]
                  [, "label": LABEL]}           # only on a divergence a reviewer labelled

    LABEL = {"key", "label", "note", "created", "type", "original_span_id", "replay_span_id"}

A field one side does not have at all reports ``null`` for that side and
``"absent": "original"`` or ``"replay"`` (a recorded ``null`` has no ``absent``).
``path`` is the span's ancestry by name (``agent > chat gpt-4o``), taken from
the original side when it exists. Values are JSON, never truncated.

``not_comparable`` (``tracetui.core.diff.comparable``): the fields left out of the comparison
because the two runs' formats record them differently (a foreign recording against its tracetui
replay): span fields (``llm.params.stream``, on ``pairs`` span pairs) and run-header fields
(``header.model``, left out of ``run_changes``); ``fields`` is the sum of ``pairs``.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping

from tracetui.core.canonical import canonical_json
from tracetui.core.diff.compare import ABSENT, FieldChange
from tracetui.core.model import SpanKind

if TYPE_CHECKING:
    from tracetui.core.diff import Divergence, TraceDiff
    from tracetui.core.diff.labels import Label
    from tracetui.core.model import Span, Trace

SCHEMA_VERSION = 1

RUN_FIELDS: tuple[str, ...] = ("code_version", "prompt_versions", "model", "tool_schema_hash", "clock", "input")
"""Header fields compared by ``run_changes``; ids and start times are volatile."""


def not_a_replay(original: Trace, replay: Trace) -> str:
    """Why ``replay`` is not a replay of ``original``, or "" when nothing says so.

    Another run input (the header's ``input``, else the root agent span's ``input``; across formats
    after ``comparable.fit_shapes``: a message list against the value holding its user text is the
    same input): "its run input differs"; another agent (the headers' ``agent``, else the root agent spans' ``agent_name``):
    "another agent: B instead of A". ``triage`` leaves such a replay out; ``diff`` says it up front.
    """
    def run_input(t: Trace) -> Any:
        if "input" in t.header:
            return t.header["input"]
        root = _root(t)
        return root.data.get("input") if root is not None and root.kind is SpanKind.AGENT else None

    def agent(t: Trace) -> Any:
        if isinstance(t.header.get("agent"), str):
            return t.header["agent"]
        root = _root(t)
        return root.data.get("agent_name") if root is not None and root.kind is SpanKind.AGENT else None

    a, b = run_input(original), run_input(replay)
    if a is not None and b is not None and original.format != replay.format:
        from tracetui.core.diff.comparable import fit_shapes

        a, b = fit_shapes(a, b, "user") or (a, b)  # the messages one format holds, the value the other
    if a is not None and b is not None:
        try:
            if canonical_json(a) != canonical_json(b):
                return "its run input differs"
        except (TypeError, ValueError):
            pass
    agents = agent(original), agent(replay)
    if all(isinstance(x, str) for x in agents) and agents[0] != agents[1]:
        return f"another agent: {agents[1]} instead of {agents[0]}"
    return ""


def _root(trace: Trace) -> Span | None:
    roots = [s for s in trace.spans if s.parent_id is None]
    return min(roots, key=lambda s: s.seq) if roots else None


def run_changes(original: Mapping[str, Any], replay: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Header fields in ``RUN_FIELDS`` that differ, one level deep (``prompt_versions.scheduler.system``).

    A field absent from both headers is not a change; absent from one side is
    (the other side reports ``None``).
    """
    changes: list[dict[str, Any]] = []
    for key in RUN_FIELDS:
        a, b = original.get(key), replay.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for sub in sorted(set(a) | set(b)):
                if a.get(sub) != b.get(sub):
                    changes.append({"path": f"{key}.{sub}", "original": a.get(sub), "replay": b.get(sub)})
        else:
            changes.append({"path": key, "original": a, "replay": b})
    return changes


def span_path(by_id: Mapping[str, Span], span: Span, sep: str = " > ") -> str:
    """Names of the span's ancestors and the span, root first, joined by ``sep``.

    Args:
        by_id: The trace's spans by ``span_id``.
        span: The span.
    """
    names = [span.name]
    seen = {span.span_id}
    cur = span.parent_id
    while cur is not None and cur in by_id and cur not in seen:
        seen.add(cur)
        parent = by_id[cur]
        names.append(parent.name)
        cur = parent.parent_id
    return sep.join(reversed(names))


def _side(span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    return {"span_id": span.span_id, "name": span.name, "seq": span.seq}


def divergence_record(d: Divergence, original_by_id: Mapping[str, Span], replay_by_id: Mapping[str, Span]) -> dict[str, Any]:
    """One divergence as its JSON report object (see the module docstring)."""
    if d.original is not None:
        path = span_path(original_by_id, d.original)
    elif d.replay is not None:
        path = span_path(replay_by_id, d.replay)
    else:
        path = ""
    side = d.original or d.replay
    return {
        "type": d.type.value,
        "kind": side.kind.value if side is not None else None,
        "row": d.row,
        "path": path,
        "original": _side(d.original),
        "replay": _side(d.replay),
        "fields": [_field_record(f) for f in d.fields],
    }


def _field_record(f: FieldChange) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "path": f.path,
        "original": None if f.original is ABSENT else f.original,
        "replay": None if f.replay is ABSENT else f.replay,
    }
    if f.original is ABSENT:
        rec["absent"] = "original"
    elif f.replay is ABSENT:
        rec["absent"] = "replay"
    return rec


def _trace_record(t: Trace) -> dict[str, Any]:
    return {
        "path": t.path,
        "format": t.format,
        "trace_id": t.trace_id,
        "run_count": max(1, len(t.trace_ids)),
        "span_count": len(t.spans),
        "skipped": [str(i) for i in t.issues],
    }


def diff_report(diff: TraceDiff, *, labels: Mapping[str, Label] | None = None, labels_file: str | None = None) -> dict[str, Any]:
    """The full report of a diff, as plain JSON data (module docstring gives the shape).

    Args:
        diff: The diff.
        labels: The replay's reviewer labels by key (``tracetui.core.diff.labels.load_labels``): each
            divergence whose ``divergence_key`` has one gets ``"label"``; the others are
            ``unmatched_labels``.
        labels_file: The sidecar they came from, reported as ``labels_file``.
    """
    from tracetui.core.diff.labels import label_record, labels_for

    o_ids = {s.span_id: s for s in diff.original.spans}
    r_ids = {s.span_id: s for s in diff.replay.spans}
    divs = [divergence_record(d, o_ids, r_ids) for d in diff.divergences]
    matched = labels_for(diff, labels) if labels else {}
    for i, label in matched.items():
        divs[i]["label"] = label_record(label)  # divs[0] is first_divergence: labelled there too
    used = {label.key for label in matched.values()}
    from tracetui.core.diff.comparable import header_fit

    changes, header_unchecked = header_fit(run_changes(diff.original.header, diff.replay.header),
                                           diff.original, diff.replay)
    unchecked = [*diff.not_comparable, *header_unchecked]
    return {
        "schema_version": SCHEMA_VERSION,
        "original": _trace_record(diff.original),
        "replay": _trace_record(diff.replay),
        "first_divergence": divs[0] if divs else None,
        "divergences": divs,
        "counts": dict(Counter(d["type"] for d in divs)),
        "run_changes": changes,
        "not_a_replay": not_a_replay(diff.original, diff.replay) or None,
        "not_comparable": {"fields": sum(u.pairs for u in unchecked),
                           "items": [{"path": u.path, "reason": u.reason, "pairs": u.pairs} for u in unchecked]},
        "redacted_with_key": diff.redacted_with,
        "labels_file": labels_file,
        "unmatched_labels": [label_record(v) for k, v in (labels or {}).items() if k not in used],
    }
