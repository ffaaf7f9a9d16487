"""(d) hashed cassette [``cassette-hashed``]: ``{"runId", "events": [...]}`` (docs/readers/cassettes.md).
"""

from __future__ import annotations

from typing import Any

from tracetui.core.model import SpanKind, ReadIssue, Span, Status
from tracetui.core.readers.base import ReaderOutput, RunSpans
from tracetui.core.readers.cassettes.common import (
    ROOT_ID,
    ROOT_NAME,
    Rec,
    TIME_KEYS,
    at_path,
    final_answer,
    ids_unique,
    mostly_dicts_with,
    ordered_recs,
    root_span,
    row_times,
    run_header,
    runs_of,
    sniff_head,
    sub_ref,
)
from tracetui.core.readers.cassettes.values import assistant_message, failed_error

__all__ = ["CassetteHashedReader"]

_TOOL, _LLM, _OTHER = SpanKind.TOOL, SpanKind.LLM, SpanKind.OTHER


# --- (d) hashed cassette --------------------------------------------------------------------


class CassetteHashedReader:
    """Shape (d): ``{"runId", "events": [{"seq", "kind": "model"|"tool", "name", "requestHash"|"argsHash", "response"}]}``.

    One such object, a JSON array of them or JSON Lines of them; each is one run.
    Events in ``seq`` order (duplicates and gaps reported) become ``llm``
    (``model``) / ``tool`` (``tool``) spans under a synthesized root. Only a
    hash of the request / arguments was recorded: a tool span gets it as
    ``args_hash`` and no ``arguments``, an llm span a ``request_hash`` field and
    no ``messages``; reported once per run. ``response`` -> tool ``output`` /
    llm ``output`` (with finish reason, usage, model when the response has
    them). The span name is ``name``; an llm span's ``model`` is the event's or
    the response's ``model`` field, never guessed from ``name``.
    """

    name = "cassette-hashed"

    def sniff(self, head: bytes) -> bool:
        """An object (or array / JSON Lines of them) with ``runId`` and ``events`` whose first event has
        ``seq``, ``kind`` model or tool and ``requestHash`` or ``argsHash``."""
        _shape, docs = sniff_head(head)
        if not docs or not isinstance(docs[0], dict):
            return False
        events = docs[0].get("events")
        if "runId" not in docs[0] or not isinstance(events, list) or not events or not isinstance(events[0], dict):
            return False
        first = events[0]
        return ("seq" in first and first.get("kind") in ("model", "tool")
                and ("requestHash" in first or "argsHash" in first) and mostly_dicts_with(events, "seq", "kind"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read every run.

        Raises:
            ReadError: not JSON, or no event could be read.
        """
        return runs_of(path, data, "events", 'a cassette {"runId", "events": [...]}', "cassette event",
                        lambda rec, v, rid, issues: self._run(path, rec, v, rid, issues))

    def _run(self, path: str, rec: Rec, v: dict[str, Any], rid: str, issues: list[ReadIssue]) -> RunSpans:
        evs: list[tuple[Rec, Any]] = []
        for i, e in enumerate(v["events"]):
            r = Rec(*sub_ref(rec, "events", i), e)
            if not isinstance(e, dict):
                issues.append(ReadIssue(path, r.line, r.where, f"run {rid}: event is not an object; skipped"))
                continue
            evs.append((r, e.get("seq")))
        header = run_header(v, skip=("events", "runId"))
        header["run_id"] = rid
        spans: list[Span] = []
        hashed_tools = hashed_llm = no_response = 0
        for r, seq in ordered_recs(evs, "event", "seq", path, issues, rid):
            e = r.value
            kind = e.get("kind")
            name = e.get("name") if isinstance(e.get("name"), str) else str(kind)
            sid = f"event-{e['seq']}" if isinstance(e.get("seq"), int) else "event" + r.where[r.where.rfind("["):]
            has_resp = "response" in e
            resp = e.get("response")
            no_response += not has_resp
            start, end = row_times(e)
            h = e.get("argsHash", e.get("requestHash"))
            attrs = {k: x for k, x in e.items() if k not in ("seq", "kind", "name", "argsHash", "requestHash",
                                                             "response", "model") and k not in TIME_KEYS}
            if kind == "tool":
                data: dict[str, Any] = {"tool_name": name}
                if h is not None:
                    data["args_hash"] = str(h)
                    hashed_tools += 1
                if has_resp:
                    data["output"] = resp
                err = failed_error(e, resp)
                status = Status.ERROR if err else Status.OK if has_resp else Status.UNSET
                spans.append(Span(sid, ROOT_ID, len(spans) + 1, _TOOL, name, start_ns=start, end_ns=end, status=status,
                                  error_type=err, data=data, attributes=attrs, trace_id=rid, line=r.line))
            else:
                if kind != "model":
                    issues.append(ReadIssue(path, r.line, at_path(r.where, "kind"), f"run {rid}: event kind {kind!r} is "
                                            "neither model nor tool; read as an other span", "warning"))
                    spans.append(Span(sid, ROOT_ID, len(spans) + 1, _OTHER, name, start_ns=start, end_ns=end,
                                      data={"output": resp} if has_resp else {}, attributes=attrs, trace_id=rid,
                                      line=r.line))
                    continue
                data = assistant_message(resp) if has_resp else {}
                if isinstance(e.get("model"), str):
                    data["model"] = e["model"]
                if h is not None:
                    data["request_hash"] = str(h)
                    hashed_llm += 1
                err = failed_error(e, None)
                status = Status.ERROR if err else Status.OK if has_resp else Status.UNSET
                spans.append(Span(sid, ROOT_ID, len(spans) + 1, _LLM, name, start_ns=start, end_ns=end, status=status,
                                  error_type=err, data=data, attributes=attrs, trace_id=rid, line=r.line))
        if hashed_tools or hashed_llm:
            issues.append(ReadIssue(path, None, "", f"run {rid}: arguments were recorded only as hashes ({hashed_tools} "
                                    f"tool call(s): argsHash kept as args_hash, no arguments; {hashed_llm} LLM call(s): "
                                    "requestHash kept as request_hash, no messages); argument changes cannot be "
                                    "shown", "warning"))
        if no_response:
            issues.append(ReadIssue(path, None, "", f"run {rid}: {no_response} event(s) have no response recorded; "
                                    "their output stays absent", "warning"))
        answer = final_answer(spans)
        root = root_span(spans, str(header.get("agent") or ROOT_NAME), rid, {"output": answer} if answer is not None else None)
        return RunSpans(rid, [root, *spans], header, in_order=ids_unique(spans))
