"""What the five cassette readers share: the synthesized root, row times, loading and sniffing a
document's first records, the run header and the span helpers (order, ids, warnings).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, NamedTuple

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.timefmt import ns_to_iso, time_ns

__all__ = ["HEX", "ROOT_ID", "ROOT_NAME", "Rec", "TIME_KEYS", "at_path", "final_answer", "head_records", "ids_unique", "load_doc", "mostly_dicts_with", "need_spans", "ordered_recs", "records_of", "root_span", "row_times", "run_header", "runs_of", "sniff_head", "sub_ref", "warn_rows"]

ROOT_ID = "root"
ROOT_NAME = "cassette"
"""Id and name of the synthesized root of shapes (a)-(d)."""

_TOOL, _LLM, _AGENT, _OTHER = SpanKind.TOOL, SpanKind.LLM, SpanKind.AGENT, SpanKind.OTHER
_DECISION, _RET, _MEMORY = SpanKind.DECISION, SpanKind.RETRIEVAL, SpanKind.MEMORY
HEX = re.compile(r"[0-9a-fA-F]{8,64}")
_MAX_ROW_WARNINGS = 10
"""Per-row warnings of one kind reported before they are summed up in one more."""


# --- times ----------------------------------------------------------------------------------

_START_KEYS = ("start_ns", "start", "started_at", "startedAt", "startTime", "start_time", "ts", "timestamp", "at", "time")
_END_KEYS = ("end_ns", "end", "ended_at", "endedAt", "endTime", "end_time")
_DURATION_MS_KEYS = ("duration_ms", "durationMs", "latency_ms", "latencyMs")
TIME_KEYS = frozenset(_START_KEYS + _END_KEYS + _DURATION_MS_KEYS)


def row_times(row: dict[str, Any]) -> tuple[int | None, int | None]:
    """``(start_ns, end_ns)`` from the usual time fields of a row (see ``_START_KEYS``)."""
    if row.keys().isdisjoint(TIME_KEYS):
        return None, None
    start = end = None
    for k in _START_KEYS:
        if k in row:
            start = time_ns(row[k])
            if start is not None:
                break
    for k in _END_KEYS:
        if k in row:
            end = time_ns(row[k])
            if end is not None:
                break
    if end is None and start is not None:
        for k in _DURATION_MS_KEYS:
            ms = row.get(k)
            if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms) and ms >= 0:
                end = start + int(Decimal(repr(ms)) * 1_000_000)
                break
    return start, end


# --- loading --------------------------------------------------------------------------------


class Rec(NamedTuple):
    """One record of a file: its line (JSONL) or 1-based index, its JSON path prefix, its value."""

    line: int
    where: str
    value: Any


def at_path(prefix: str, field: str) -> str:
    """The JSON path of ``field`` in a record (bare field name for a JSONL line)."""
    return f"{prefix}.{field}" if prefix else field


def load_doc(path: str, data: bytes, issues: list[ReadIssue]) -> tuple[Any, list[Rec] | None]:
    """The file as ``(document, None)`` (one JSON value) or ``(None, rows)`` (JSON Lines), by
    ``json_values.load_json_or_jsonl`` (BOM, NaN, big integers, duplicate keys; bad lines skipped,
    a torn last line held back).

    Raises:
        ReadError: empty, or neither one JSON document nor JSON Lines.
    """
    values, several = load_json_or_jsonl(path, data, issues)
    if not several:
        return next(values)[1], None
    return None, [Rec(line or 0, "", v) for line, v in values]


def records_of(doc: Any, rows: list[Rec] | None, wrappers: tuple[str, ...] = ()) -> tuple[list[Rec], dict[str, Any] | None]:
    """The records of a file and the wrapper object holding them (or None).

    JSON Lines: one record a line. A JSON array: one record an item. An object
    with a list under one of ``wrappers``: its items. Any other object: itself.
    """
    if rows is not None:
        return rows, None
    if isinstance(doc, list):
        return [Rec(i + 1, f"$[{i}]", v) for i, v in enumerate(doc)], None
    if isinstance(doc, dict):
        for k in wrappers:
            items = doc.get(k)
            if isinstance(items, list):
                return [Rec(i + 1, f"$.{k}[{i}]", v) for i, v in enumerate(items)], doc
        return [Rec(1, "$", doc)], None
    return [], None


# --- sniffing -------------------------------------------------------------------------------

_DEC = json.JSONDecoder()
_WS = " \t\r\n"


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _partial(s: str, i: int, depth: int) -> tuple[Any, int, bool]:
    """The JSON value at ``s[i]`` as ``(value, end, complete)``.

    A value cut by the end of the head is decoded partially down to ``depth``
    levels: an object keeps its complete members (and a cut container member,
    partially); an array keeps its complete items (or its cut first item).
    """
    try:
        v, end = _DEC.raw_decode(s, i)
        return v, end, True
    except (ValueError, RecursionError):
        pass
    n = len(s)
    if depth <= 0 or i >= n or s[i] not in "[{":
        return None, i, False
    j = i + 1
    if s[i] == "[":
        items: list[Any] = []
        while True:
            j = _skip(s, j)
            if j >= n or s[j] == "]":
                return items, j, False
            v, j2, ok = _partial(s, j, depth - 1)
            if not ok:
                if not items and isinstance(v, dict):
                    items.append(v)
                return items, j, False
            items.append(v)
            j = _skip(s, j2)
            if j < n and s[j] == ",":
                j += 1
                continue
            return items, j, False
    obj: dict[str, Any] = {}
    while True:
        j = _skip(s, j)
        if j >= n or s[j] != '"':
            return obj, j, False
        try:
            key, j = _DEC.raw_decode(s, j)
        except ValueError:
            return obj, j, False
        j = _skip(s, j)
        if j >= n or s[j] != ":":
            return obj, j, False
        j = _skip(s, j + 1)
        v, j2, ok = _partial(s, j, depth - 1)
        if not ok:
            if isinstance(v, (dict, list)):
                obj[key] = v
            return obj, j, False
        obj[key] = v
        j = _skip(s, j2)
        if j < n and s[j] == ",":
            j += 1
            continue
        return obj, j, False


@functools.lru_cache(maxsize=2)
def sniff_head(head: bytes) -> tuple[str, list[Any]]:
    """The first records of a file head: ``("array", items)``, ``("jsonl", rows)``,
    ``("object", [doc])`` (doc possibly partial) or ``("", [])``. Cached: the five
    sniffs of one head parse it once."""
    text = head.removeprefix(BOM).decode("utf-8", "ignore")
    i = _skip(text, 0)
    if i >= len(text) or text[i] not in "[{":
        return "", []
    v, end, complete = _partial(text, i, 3)
    if text[i] == "[":
        return "array", v if isinstance(v, list) else []
    if not isinstance(v, dict):
        return "", []
    if complete:
        j = _skip(text, end)
        if j < len(text) and text[j] == "{":
            rows: list[Any] = [v]
            while j < len(text) and len(rows) < 64:
                try:
                    w, end = _DEC.raw_decode(text, j)
                except (ValueError, RecursionError):
                    break
                rows.append(w)
                j = _skip(text, end)
            return "jsonl", rows
    return "object", [v]


def head_records(head: bytes, wrappers: tuple[str, ...]) -> list[Any]:
    """Records at the start of a head: array items, JSONL rows, a wrapper's items or the one object."""
    shape, items = sniff_head(head)
    if shape == "object":
        doc = items[0]
        for k in wrappers:
            if isinstance(doc.get(k), list):
                return doc[k]  # type: ignore[no-any-return]
    return items


def mostly_dicts_with(records: list[Any], *keys: str) -> bool:
    """Whether at least half of the head's records are objects with ``keys`` (the first is checked
    strictly by each sniff; a damaged record further on does not hide the shape)."""
    n = sum(1 for r in records if isinstance(r, dict) and all(k in r for k in keys))
    return 2 * n >= len(records)


# --- header ---------------------------------------------------------------------------------

_HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    "run_id": ("run_id", "runId"),
    "code_version": ("code_version", "codeVersion"),
    "prompt_hash": ("prompt_hash", "promptHash", "prompt_sha256", "promptSha256"),
    "tool_schema_hash": ("tool_schema_hash", "toolSchemaHash", "tool_schemas_hash", "toolSchemasHash",
                         "tools_hash", "toolsHash", "schema_hash", "schemaHash"),
    "agent": ("agent", "agent_name", "agentName"),
    "clock": ("clock",),
    "input": ("input",),
    "outcome": ("outcome",),
    "normalization": ("normalization",),
    "redaction": ("redaction",),
}
_TIME_ALIASES = ("started_at", "startedAt", "timestamp", "ts", "recorded_at", "recordedAt", "created_at",
                 "createdAt", "time", "start_ns")
_MODEL_ID = ("model_id", "modelId")
_MODEL_VERSION = ("model_version", "modelVersion", "model_snapshot", "modelSnapshot")
_PROMPT_VERSIONS = ("prompt_versions", "promptVersions")


def run_header(obj: dict[str, Any], *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """tracetui/1 header fields from a cassette's header object (camelCase or snake_case).

    ``model`` (string or ``{id|name, version, provider}``) plus ``model_id`` /
    ``model_version`` -> ``model`` {id, version, provider}; ``promptVersions`` ->
    ``prompt_versions``; the first time field -> ``started_at`` and ``start_ns``;
    ``codeVersion`` -> ``code_version``; hash fields -> ``prompt_hash``,
    ``tool_schema_hash``. Other scalar fields are kept under their own names.
    """
    h: dict[str, Any] = {}
    used = set(skip)
    for dst, keys in _HEADER_ALIASES.items():
        for k in keys:
            v = obj.get(k)
            if dst == "agent" and isinstance(v, dict):
                v = v.get("name")  # {"name", "version"}: the name is the header's agent
            if v is None or dst in ("run_id", "code_version", "agent") and not isinstance(v, (str, int)):
                continue
            h[dst] = str(v) if dst in ("run_id", "code_version", "agent") else v
            used.add(k)
            break
    for k in _PROMPT_VERSIONS:
        v = obj.get(k)
        if v is not None:
            h["prompt_versions"] = v if isinstance(v, dict) else {"prompt": v}
            used.add(k)
            break
    model: dict[str, Any] = {}
    m = obj.get("model")
    if isinstance(m, str):
        model["id"] = m
        used.add("model")
    elif isinstance(m, dict):
        for dst, keys in (("id", ("id", "name", "model")), ("version", ("version", "snapshot")), ("provider", ("provider",))):
            for k in keys:
                if isinstance(m.get(k), str):
                    model[dst] = m[k]
                    break
        used.add("model")
    for dst, keys in (("id", _MODEL_ID), ("version", _MODEL_VERSION), ("provider", ("provider", "model_provider"))):
        for k in keys:
            if isinstance(obj.get(k), str):
                model.setdefault(dst, obj[k])
                used.add(k)
                break
    if model:
        h["model"] = model
    for k in _TIME_ALIASES:
        v = obj.get(k)
        if v is None:
            continue
        ns = time_ns(v)
        if ns is None:
            continue  # not a time: kept under its own name below
        used.add(k)
        h["started_at"] = v if isinstance(v, str) and "-" in v else ns_to_iso(ns)  # an ISO string as written
        h["start_ns"] = ns
        break
    for k, v in obj.items():
        if k not in used and k not in h and (v is None or isinstance(v, (str, int, float, bool))):
            h[k] = v
    return h


# --- shared span helpers --------------------------------------------------------------------


def root_span(children: list[Span], name: str, trace_id: str | None, data: dict[str, Any] | None = None) -> Span:
    """The synthesized ``agent`` root of a run without one: times span its children's."""
    starts = [s.start_ns for s in children if s.start_ns is not None]
    ends = [s.end_ns if s.end_ns is not None else s.start_ns for s in children]
    ends_known = [e for e in ends if e is not None]
    d: dict[str, Any] = {"agent_name": name}
    if data:
        d.update(data)
    return Span(ROOT_ID, None, 0, _AGENT, name, start_ns=min(starts) if starts else None,
                end_ns=max(ends_known) if ends_known else None, data=d, trace_id=trace_id)


def ids_unique(children: list[Span]) -> bool:
    """Whether a synthesized root's children have unique ids, none of them the root's: with
    ``seq`` set in order and every parent the root, the run needs no ``finish_spans`` pass."""
    ids = {s.span_id for s in children}
    return len(ids) == len(children) and ROOT_ID not in ids


def final_answer(spans: list[Span]) -> Any:
    """The run's final answer: the last llm span's output text, when it calls no tool."""
    for s in reversed(spans):
        if s.kind is _LLM:
            out = s.data.get("output")
            if isinstance(out, dict) and not out.get("tool_calls") and out.get("content") is not None:
                return out["content"]
            return None
    return None


def ordered_recs(recs: list[tuple[Rec, Any]], label: str, seq_key: str, path: str, issues: list[ReadIssue],
             run: str, *, check_gaps: bool = True) -> list[tuple[Rec, int]]:
    """Records sorted by their sequence number, duplicates dropped, gaps reported.

    A record without an integer sequence is placed right after the record
    before it in the file (warning). A sequence seen twice keeps the first
    record in file order; the later one is skipped, naming both lines.
    Returns ``(record, sequence)`` pairs.
    """
    keyed: list[tuple[int, int, Rec, int | None]] = []
    prev = -1
    for i, (rec, seq) in enumerate(recs):
        n = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
        if n is None and isinstance(seq, str) and seq.strip().lstrip("-").isdigit() and len(seq) < 40:
            n = int(seq)
        if n is None:
            issues.append(ReadIssue(path, rec.line, at_path(rec.where, seq_key), f"run {run}: {label} has no integer "
                                    f"{seq_key} ({seq!r}); placed after the record before it in the file", "warning"))
            keyed.append((prev, i, rec, None))
        else:
            keyed.append((n, i, rec, n))
            prev = n
    keyed.sort(key=lambda t: (t[0], t[1]))
    out: list[tuple[Rec, int]] = []
    first_line: dict[int, Rec] = {}
    last: int | None = None
    for sort_seq, _, rec, n in keyed:
        if n is not None:
            if n in first_line:
                earlier = first_line[n]
                same = " (identical: delivered twice)" if earlier.value == rec.value else ""
                issues.append(ReadIssue(path, rec.line, at_path(rec.where, seq_key), f"run {run}: {seq_key} {n} already on "
                                        f"line {earlier.line}{same}; this {label} skipped"))
                continue
            first_line[n] = rec
            if check_gaps and last is not None and n > last + 1:
                issues.append(ReadIssue(path, rec.line, at_path(rec.where, seq_key), f"run {run}: {seq_key} jumps from "
                                        f"{last} to {n}: {n - last - 1} {label}(s) missing", "warning"))
            last = n
        out.append((rec, sort_seq))
    return out


def sub_ref(rec: Rec, key: str, i: int) -> tuple[int, str]:
    """Line and JSON path of item ``i`` of list ``key`` inside a record: a JSONL line keeps its
    line; inside a JSON document the line is the 1-based item index."""
    if not rec.where:
        return rec.line, f"{key}[{i}]"
    return i + 1, f"{rec.where}.{key}[{i}]"


def _run_id(rid: Any, k: int, used: set[str], path: str, rec: Rec, issues: list[ReadIssue]) -> str:
    """A run's id, unique in the file: ``runId``, else ``run-<n>``; a repeated one gets ``-2``, ``-3`` (warning)."""
    base = str(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid) else f"run-{k + 1}"
    out, n = base, 1
    while out.lower() in used:
        n += 1
        out = f"{base}-{n}"
    if out != base:
        issues.append(ReadIssue(path, rec.line, at_path(rec.where, "runId"), f"runId {base!r} already used by an earlier "
                                f"run of the file; this one is {out!r}", "warning"))
    used.add(out.lower())
    return out


def runs_of(path: str, data: bytes, key: str, shape: str, what: str,
             build: Callable[[Rec, dict[str, Any], str, list[ReadIssue]], RunSpans]) -> ReaderOutput:
    """Shapes (d) and (e): one run per record holding a ``key`` list (one object, an array of them or
    JSON Lines), built by ``build(record, value, run id, issues)``; other records are skipped.

    Raises:
        ReadError: not JSON, or no ``what`` could be read.
    """
    issues: list[ReadIssue] = IssueList()
    recs, _ = records_of(*load_doc(path, data, issues))
    runs: list[RunSpans] = []
    used: set[str] = set()
    for k, rec in enumerate(recs):
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get(key), list):
            issues.append(ReadIssue(path, rec.line, rec.where, f"not {shape}; skipped"))
            continue
        runs.append(build(rec, v, _run_id(v.get("runId"), k, used, path, rec, issues), issues))
    need_spans([s for r in runs for s in r.spans], issues, path, what)
    return ReaderOutput(runs, issues)


def need_spans(spans: list[Span], issues: list[ReadIssue], path: str, what: str) -> None:
    if not spans:
        raise ReadError(path, f"no {what} could be loaded" + (f"; first problem: {issues[0]}" if issues else ""))


def warn_rows(issues: list[ReadIssue], path: str, items: list[tuple[int | None, str, str]], summary: str) -> None:
    """Per-row warnings, the first ``_MAX_ROW_WARNINGS`` one by one, the rest summed up."""
    for line, where, msg in items[:_MAX_ROW_WARNINGS]:
        issues.append(ReadIssue(path, line, where, msg, "warning"))
    if len(items) > _MAX_ROW_WARNINGS:
        issues.append(ReadIssue(path, None, "", f"{len(items) - _MAX_ROW_WARNINGS} more {summary}", "warning"))
