"""(c) event stream [``cassette-events``]: ``{runId, sequence, kind, at, version, tool, payloadRef,
digest}``, payloads outside the file (docs/readers/cassettes.md).
"""

from __future__ import annotations

import itertools
from typing import Any

from tracetui.core.model import SpanKind, ReadIssue, Span, Status
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.cassettes.blobs import Blobs, PayloadLog, blob_payload, report_nofolder
from tracetui.core.readers.cassettes.common import (
    ROOT_ID,
    ROOT_NAME,
    Rec,
    at_path,
    final_answer,
    head_records,
    ids_unique,
    load_doc,
    mostly_dicts_with,
    need_spans,
    ordered_recs,
    records_of,
    root_span,
)
from tracetui.core.readers.cassettes.values import decode_args, failed_error, llm_payload, put_arguments
from tracetui.core.readers.otel_messages import as_text
from tracetui.core.readers.timefmt import ns_to_iso, time_ns

__all__ = ["CassetteEventsReader"]

_TOOL, _LLM, _OTHER, _DECISION = SpanKind.TOOL, SpanKind.LLM, SpanKind.OTHER, SpanKind.DECISION


# --- (c) event stream -----------------------------------------------------------------------

_EVENT_KINDS = frozenset({"input", "model", "tool_call", "tool_result", "policy", "outcome"})
_VERSION_FIELDS = ("prompt", "model", "tools", "policy")
_PAIR_FIELDS = ("idempotencyKey", "operationId")


class CassetteEventsReader:
    """Shape (c): an event stream ``{runId, sequence, kind, at, version, tool, payloadRef, digest}``.

    JSON Lines, a JSON array or ``{"events": [...]}``. Every ``runId`` is one run
    (file order of first appearance). Within a run events are ordered by
    ``sequence``; duplicates (the later skipped) and gaps are reported (gaps
    over the whole stream when several runs share one counter).

    ======================  ===============================================================
    event ``kind``          span
    ======================  ===============================================================
    ``input``               the root's ``input`` and header ``input`` (a later one: ``other`` ``input``)
    ``model``               ``llm`` (payload: request and/or response; model and prompt version from ``version``)
    ``tool_call`` + result  one ``tool`` span, paired by ``tool.idempotencyKey``, else
                            ``operationId``, else adjacency; ``arguments`` / ``output`` from the payloads
    ``policy``              ``decision`` named ``policy``
    ``outcome``             ``other`` named ``outcome`` and header ``outcome``
    ======================  ===============================================================

    ``version`` {prompt, model, tools, policy} -> header ``prompt_versions``
    {"prompt": ...}, ``model`` {version}, ``tool_schema_hash``, ``policy_version``;
    a version that changes mid-run is reported at its sequence. Payloads are not
    inline: ``payloadRef`` is resolved in a blob folder next to the file (see
    ``Blobs``) and checked against ``digest`` when it is a sha256; without a
    blob folder, one warning per run says payloads are not in the file.
    An inline ``payload`` field is used when present.
    """

    name = "cassette-events"

    def sniff(self, head: bytes) -> bool:
        """Records whose first has ``runId``, ``sequence`` and a ``kind`` of this shape, the others
        ``sequence`` and ``kind``."""
        recs = head_records(head, ("events",))
        if not recs or not isinstance(recs[0], dict):
            return False
        first = recs[0]
        return ("runId" in first and "sequence" in first and first.get("kind") in _EVENT_KINDS
                and mostly_dicts_with(recs, "sequence", "kind"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read every run of the stream.

        Raises:
            ReadError: not JSON, or no event could be read.
        """
        issues: list[ReadIssue] = IssueList()
        doc, rows = load_doc(path, data, issues)
        recs, _ = records_of(doc, rows, ("events",))
        by_run: dict[str, list[tuple[Rec, Any]]] = {}
        orphans: list[Rec] = []
        for rec in recs:
            v = rec.value
            if not isinstance(v, dict) or not isinstance(v.get("kind"), str):
                issues.append(ReadIssue(path, rec.line, rec.where, "not an event {runId, sequence, kind, ...}; skipped"))
                continue
            rid = v.get("runId")
            if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid):
                by_run.setdefault(str(rid), []).append((rec, v.get("sequence")))
            else:
                orphans.append(rec)
        if orphans:
            if len(by_run) == 1:
                only = next(iter(by_run))
                for rec in orphans:
                    issues.append(ReadIssue(path, rec.line, at_path(rec.where, "runId"), f"event has no runId; read as part "
                                            f"of the file's only run {only}", "warning"))
                    by_run[only].append((rec, rec.value.get("sequence")))
            else:
                for rec in orphans:
                    issues.append(ReadIssue(path, rec.line, at_path(rec.where, "runId"), "event has no runId and the file "
                                            f"holds {len(by_run)} runs; skipped"))
        seqs = [s for evs in by_run.values() for _, s in evs if isinstance(s, int)]
        shared_counter = len(by_run) > 1 and len(seqs) == len(set(seqs))
        blobs = Blobs(path)
        runs: list[RunSpans] = []
        for rid, evs in by_run.items():
            ordered = ordered_recs(evs, "event", "sequence", path, issues, rid, check_gaps=not shared_counter)
            runs.append(_EventRun(path, rid, issues, blobs).build(ordered))
        if shared_counter:
            every = sorted(seqs)
            for a, b in itertools.pairwise(every):
                if b > a + 1:
                    issues.append(ReadIssue(path, None, "sequence", f"sequence jumps from {a} to {b} (one counter "
                                            f"shared by the file's runs): {b - a - 1} event(s) missing", "warning"))
        need_spans([s for r in runs for s in r.spans], issues, path, "event")
        return ReaderOutput(runs, issues)


class _EventRun:
    """Builds one run of shape (c) from its events in sequence order."""

    def __init__(self, path: str, rid: str, issues: list[ReadIssue], blobs: Blobs) -> None:
        self.path, self.rid, self.issues, self.blobs = path, rid, issues, blobs
        self.log = PayloadLog(path)
        self.header: dict[str, Any] = {"run_id": rid}
        self.version: dict[str, Any] = {}
        self.last_version: dict[str, Any] | None = None
        self.no_payload = 0
        self.open: dict[int, tuple[Span, dict[str, Any]]] = {}  # open tool_calls by call number, in call order
        self.by_key: dict[tuple[str, Any], list[int]] = {}  # (field, key) -> open call numbers, oldest first
        self.unknown_kinds: set[str] = set()

    def payload(self, rec: Rec, v: dict[str, Any], seq: int) -> tuple[bool, Any]:
        """The event's payload: inline ``payload``, else the blob ``payloadRef`` names."""
        if "payload" in v:
            return True, v["payload"]
        ref = v.get("payloadRef")
        if ref is None:
            self.no_payload += 1
            return False, None
        return blob_payload(self.blobs, ref, self.log, self.issues, rec.line, at_path(rec.where, "payloadRef"),
                        f"run {self.rid}: event {seq} ({v['kind']})", v.get("digest"))

    def track_version(self, rec: Rec, v: dict[str, Any], seq: int) -> dict[str, Any]:
        """The versions in force at this event (header set from the first; changes reported)."""
        ver = v.get("version")
        if not isinstance(ver, dict) or ver == self.last_version:
            return self.version
        self.last_version = ver
        for f in _VERSION_FIELDS:
            if f not in ver:
                continue
            new = ver[f]
            if f in self.version and self.version[f] != new:
                self.issues.append(ReadIssue(self.path, rec.line, at_path(rec.where, f"version.{f}"), f"run {self.rid}: "
                                             f"version.{f} changes at sequence {seq}: {self.version[f]!r} -> {new!r}; "
                                             "the header keeps the first, each span its own", "warning"))
            elif f not in self.version:
                self.set_header(f, new)
        cur = {**self.version, **ver}
        self.version = cur
        return cur

    def set_header(self, f: str, value: Any) -> None:
        if f == "prompt":
            self.header["prompt_versions"] = value if isinstance(value, dict) else {"prompt": value}
        elif f == "model":
            self.header["model"] = value if isinstance(value, dict) else {"version": value}
        elif f == "tools":
            self.header["tool_schema_hash"] = value
        elif f == "policy":
            self.header["policy_version"] = value

    def build(self, ordered: list[tuple[Rec, int]]) -> RunSpans:
        spans: list[Span] = []
        root_data: dict[str, Any] = {}
        prev_kind: str | None = None
        first_at: int | None = None
        root_at: int | None = None
        seen_input = False
        for rec, seq in ordered:
            v = rec.value
            kind = v["kind"]
            ver = self.track_version(rec, v, seq)
            at = time_ns(v.get("at"))
            if first_at is None and at is not None:
                first_at = at
            tool = v.get("tool") if isinstance(v.get("tool"), dict) else {}
            sid = f"ev-{seq}" if isinstance(v.get("sequence"), int) else f"line-{rec.line}"
            attrs = {k: v[k] for k in ("payloadRef", "digest") if k in v}
            if kind == "input":
                found, payload = self.payload(rec, v, seq)
                if not seen_input:
                    seen_input = True
                    if found:
                        root_data["input"] = payload
                        self.header["input"] = payload
                    root_at = at
                else:
                    spans.append(Span(sid, ROOT_ID, 0, _OTHER, "input", start_ns=at, data={"input": payload} if found else {},
                                      attributes=attrs, trace_id=self.rid, line=rec.line))
            elif kind == "model":
                found, payload = self.payload(rec, v, seq)
                data = llm_payload(payload) if found else {}
                if "model" not in data and isinstance(ver.get("model"), str):
                    data["model"] = ver["model"]
                if isinstance(ver.get("prompt"), str):
                    data["prompt_version"] = ver["prompt"]
                name = v.get("name") if isinstance(v.get("name"), str) else \
                    f"chat {data['model']}" if isinstance(data.get("model"), str) else "model"
                status = Status.OK if "output" in data else Status.UNSET
                spans.append(Span(sid, ROOT_ID, 0, _LLM, name, start_ns=at, status=status, data=data,
                                  attributes=attrs, trace_id=self.rid, line=rec.line))
            elif kind == "tool_call":
                found, payload = self.payload(rec, v, seq)
                name = tool.get("name") if isinstance(tool.get("name"), str) else "tool"
                data = {"tool_name": name}
                if isinstance(tool.get("operationId"), (str, int)):
                    data["call_id"] = str(tool["operationId"])
                if found:
                    args, _ = decode_args(payload)
                    put_arguments(data, args)
                tattrs = {**attrs, **{k: tool[k] for k in ("operationId", "idempotencyKey") if k in tool}}
                span = Span(sid, ROOT_ID, 0, _TOOL, name, start_ns=at, data=data, attributes=tattrs,
                            trace_id=self.rid, line=rec.line)
                spans.append(span)
                n = len(spans)
                self.open[n] = (span, tool)
                for field in _PAIR_FIELDS:
                    if tool.get(field) is not None:
                        self.by_key.setdefault((field, _hashable(tool[field])), []).append(n)
            elif kind == "tool_result":
                found, payload = self.payload(rec, v, seq)
                match = self.pair(tool, prev_kind, rec, seq)
                err = failed_error(v, payload if found else None)
                if match is None:
                    self.issues.append(ReadIssue(self.path, rec.line, rec.where, f"run {self.rid}: tool_result at "
                                                 f"sequence {seq} matches no tool_call; kept as a tool span of its own",
                                                 "warning"))
                    name = tool.get("name") if isinstance(tool.get("name"), str) else "tool"
                    data = {"tool_name": name}
                    if found:
                        data["output"] = payload
                    spans.append(Span(sid, ROOT_ID, 0, _TOOL, name, start_ns=at, end_ns=at,
                                      status=Status.ERROR if err else Status.OK if found else Status.UNSET,
                                      error_type=err, data=data, attributes=attrs, trace_id=self.rid, line=rec.line))
                else:
                    span = match
                    data = dict(span.data)
                    if found:
                        data["output"] = payload
                    span.data = data
                    span.end_ns = at
                    span.status = Status.ERROR if err else Status.OK if found else Status.UNSET
                    span.error_type = err
                    if attrs:
                        span.attributes = {**span.attributes, **{f"result_{k}": x for k, x in attrs.items()}}
            elif kind == "policy":
                found, payload = self.payload(rec, v, seq)
                data = {"decision": "policy"}
                if isinstance(payload, dict):
                    for k in ("decision", "action", "verdict", "result", "outcome"):
                        if isinstance(payload.get(k), str):
                            data["decision"] = payload[k]
                            break
                    data["value"] = payload
                elif found and payload is not None:
                    data["value"] = payload
                name = f"policy {tool['name']}" if isinstance(tool.get("name"), str) else "policy"
                spans.append(Span(sid, ROOT_ID, 0, _DECISION, name, start_ns=at, data=data, attributes=attrs,
                                  trace_id=self.rid, line=rec.line))
            elif kind == "outcome":
                found, payload = self.payload(rec, v, seq)
                if found:
                    if "outcome" in self.header:
                        self.issues.append(ReadIssue(self.path, rec.line, rec.where, f"run {self.rid}: another outcome "
                                                     f"at sequence {seq}; the header keeps the last", "warning"))
                    self.header["outcome"] = payload if isinstance(payload, dict) else {"value": payload}
                spans.append(Span(sid, ROOT_ID, 0, _OTHER, "outcome", start_ns=at,
                                  data={"output": payload} if found else {}, attributes=attrs, trace_id=self.rid,
                                  line=rec.line))
            else:
                if kind not in self.unknown_kinds:
                    self.unknown_kinds.add(kind)
                    self.issues.append(ReadIssue(self.path, rec.line, at_path(rec.where, "kind"), f"run {self.rid}: unknown "
                                                 f"event kind {kind!r}; read as an other span", "warning"))
                found, payload = self.payload(rec, v, seq)
                spans.append(Span(sid, ROOT_ID, 0, _OTHER, kind, start_ns=at, data={"output": payload} if found else {},
                                  attributes=attrs, trace_id=self.rid, line=rec.line))
            prev_kind = kind
        for span, _ in self.open.values():
            self.issues.append(ReadIssue(self.path, span.line, "", f"run {self.rid}: tool_call {span.span_id} "
                                         f"({span.name}) has no tool_result; its output stays absent", "warning"))
        report_nofolder(self.log, self.issues, self.rid, self.blobs)
        if self.no_payload:
            self.issues.append(ReadIssue(self.path, None, "", f"run {self.rid}: {self.no_payload} event(s) carry no "
                                         "payload and no payloadRef; their content was not recorded", "warning"))
        for i, s in enumerate(spans):
            s.seq = i + 1
        answer = final_answer(spans)
        if answer is not None:
            root_data["output"] = answer
        root = root_span(spans, ROOT_NAME, self.rid, root_data)
        if root_at is not None and (root.start_ns is None or root_at < root.start_ns):
            root.start_ns = root_at
        if "started_at" not in self.header and first_at is not None:
            self.header["start_ns"] = first_at
            self.header["started_at"] = ns_to_iso(first_at)
        return RunSpans(self.rid, [root, *spans], self.header, in_order=ids_unique(spans))

    def pair(self, tool: dict[str, Any], prev_kind: str | None, rec: Rec, seq: int) -> Span | None:
        """The open tool_call a tool_result answers (no longer open afterwards), or None.

        By ``idempotencyKey``, else ``operationId`` (the oldest open call with
        it: a retried write keeps its key, so results answer calls in order),
        else adjacency: the call right before the result, else the latest open
        call of the same tool name (reported: paired by position only).
        """
        for field in _PAIR_FIELDS:
            want = tool.get(field)
            if want is None:
                continue
            numbers = self.by_key.get((field, _hashable(want)))
            while numbers:
                n = numbers.pop(0)
                if n in self.open:
                    return self.open.pop(n)[0]
        if not self.open:
            return None
        keyed = any(tool.get(f) is not None for f in _PAIR_FIELDS)
        if prev_kind == "tool_call" and not keyed:
            return self.open.pop(next(reversed(self.open)))[0]
        name = tool.get("name")
        for n, (span, t) in reversed(self.open.items()):
            if name is None or t.get("name") in (None, name):
                del self.open[n]
                self.issues.append(ReadIssue(self.path, rec.line, rec.where, f"run {self.rid}: tool_result at sequence "
                                             f"{seq} paired with the open tool_call {span.span_id} by position only "
                                             "(no matching idempotencyKey or operationId)", "warning"))
                return span
        return None


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool)) else as_text(v)
