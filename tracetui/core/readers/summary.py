"""What a trace file holds, as plain data: the core of ``tracetui show``.

``summarize(trace_file)`` turns ``read_runs``' result into a JSON-ready dict;
the CLI prints it as text or JSON. Counts are of spans as tracetui reads them
(one span per LLM call, tool call, agent, ...), so they can be checked against
a source's own counts (a tau-bench file's tool calls = its tool spans).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tracetui.core.model import ReadIssue, SpanKind, Status, Trace
from tracetui.core.readers import TraceFile

__all__ = ["SUMMARY_SCHEMA_VERSION", "issue_to_obj", "summarize", "summarize_run"]

SUMMARY_SCHEMA_VERSION = 1
"""Version of the ``show --format json`` document; bumped on incompatible changes."""

_KIND_ORDER = [k.value for k in SpanKind]


def _kinds(counter: Counter[str]) -> dict[str, int]:
    """Kind counts in the model's kind order (llm, tool, retrieval, ...), zeros left out."""
    return {k: counter[k] for k in _KIND_ORDER if counter.get(k)}


def issue_to_obj(issue: ReadIssue) -> dict[str, Any]:
    """A read issue as JSON: ``path``, ``line`` (when known), ``where`` (when known), ``message``, ``severity``."""
    obj: dict[str, Any] = {"path": issue.path}
    if issue.line is not None:
        obj["line"] = issue.line
    if issue.where:
        obj["where"] = issue.where
    obj["message"] = issue.message
    obj["severity"] = issue.severity
    return obj


def summarize_run(trace: Trace) -> dict[str, Any]:
    """One run's summary.

    Returns:
        ``{"run_id", "span_count", "kinds": {kind: count}, "tools": {name: count},
        "models": {name: count}, "errors": int, "start_ns", "duration_ms",
        "agent", "outcome", "replay"}``; ``run_id`` is None when the source names no run,
        ``duration_ms`` (float, milliseconds) spans the earliest start to the
        latest end, None without timestamps; ``agent``/``outcome`` come from the
        run header when the source records them (tau-bench reward, inspect scores);
        ``replay`` is ``{"mode", "llm", "replay_of", "diverged", "misses", "live_calls",
        "divergences", "writes", "unconsumed", ...}`` for a ``tracetui replay`` run, else None.
    """
    kinds: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    models: Counter[str] = Counter()
    errors = 0
    start: int | None = None
    end: int | None = None
    for s in trace.spans:
        kinds[s.kind.value] += 1
        if s.kind is SpanKind.TOOL:
            tools[s.tool_name or s.name] += 1
        elif s.kind is SpanKind.LLM:
            model = s.data.get("model")
            if model:
                models[str(model)] += 1
        if s.status is Status.ERROR:
            errors += 1
        if s.start_ns is not None and (start is None or s.start_ns < start):
            start = s.start_ns
        if s.end_ns is not None and (end is None or s.end_ns > end):
            end = s.end_ns
    header = trace.header
    run_id = trace.trace_id if trace.trace_id is not None else header.get("run_id")
    return {
        "run_id": None if run_id is None else str(run_id),
        "span_count": len(trace.spans),
        "kinds": _kinds(kinds),
        "tools": dict(tools.most_common()),
        "models": dict(models.most_common()),
        "errors": errors,
        "start_ns": start,
        "duration_ms": None if start is None or end is None else (end - start) / 1e6,
        "agent": header.get("agent"),
        "outcome": header.get("outcome"),
        "replay": _replay_info(trace),
    }


def _replay_info(trace: Trace) -> dict[str, Any] | None:
    """A harness replay's mode and result (docs/harness.md), from its header and its root span's
    ``replay.summary``; None for any other run."""
    header = trace.header
    mode = header.get("record_mode")
    if mode not in ("strict", "loose", "fixture"):
        return None
    info: dict[str, Any] = {"mode": mode, "llm": header.get("llm_mode")}
    of = header.get("replay_of")
    if isinstance(of, dict):
        info["replay_of"] = of.get("run_id")
    if header.get("trials", 1) != 1:
        info["trial"] = header.get("trial")
        info["trials"] = header.get("trials")
    summary = next((s.attributes.get("replay.summary") for s in trace.spans
                    if s.parent_id is None and isinstance(s.attributes.get("replay.summary"), dict)), None)
    if summary is not None:
        for key in ("diverged", "misses", "live_calls"):
            info[key] = summary.get(key)
        divs = summary.get("divergences")  # the file's own words: any JSON shape, kept as text
        info["divergences"] = [str(d.get("type")) if isinstance(d, dict) else str(d)
                               for d in (divs if isinstance(divs, list) else [])]
        info["writes"] = _count(summary.get("writes"))
        info["unconsumed"] = _count(summary.get("unconsumed"))
        if "reproduces_original_path" in summary:
            info["reproduces_original_path"] = summary["reproduces_original_path"]
    return info


def _count(v: Any) -> int:
    return len(v) if isinstance(v, (list, dict)) else 0


def summarize(tf: TraceFile) -> dict[str, Any]:
    """A whole file's summary: the ``tracetui show --format json`` document.

    Returns:
        ``{"schema_version": 1, "path", "format", "run_count", "span_count",
        "kinds", "tools", "models", "runs": [summarize_run(...)...],
        "warnings": [issue_to_obj(...)...]}``; file-level counts add up the runs'.
    """
    runs = [summarize_run(t) for t in tf.runs]
    kinds: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    models: Counter[str] = Counter()
    for r in runs:
        kinds.update(r["kinds"])
        tools.update(r["tools"])
        models.update(r["models"])
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "path": tf.path,
        "format": tf.format,
        "run_count": len(runs),
        "span_count": sum(r["span_count"] for r in runs),
        "kinds": _kinds(kinds),
        "tools": dict(tools.most_common()),
        "models": dict(models.most_common()),
        "runs": runs,
        "warnings": [issue_to_obj(i) for i in tf.issues],
    }
