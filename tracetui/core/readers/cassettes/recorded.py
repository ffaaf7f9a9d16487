"""(e) recorded run with blobs [``cassette-blobs``]: ``{runId, codeVersion, promptVersions, spans}``,
payloads in a blob folder next to the file (docs/readers/cassettes.md).
"""

from __future__ import annotations

from typing import Any

from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.base import ReaderOutput, RunSpans
from tracetui.core.readers.cassettes.blobs import Blobs, PayloadLog, blob_payload, report_nofolder
from tracetui.core.readers.cassettes.common import (
    Rec,
    TIME_KEYS,
    at_path,
    mostly_dicts_with,
    row_times,
    run_header,
    runs_of,
    sniff_head,
    sub_ref,
)
from tracetui.core.readers.cassettes.values import assistant_message, decode_args, error_name, llm_payload, put_arguments
from tracetui.core.readers.otel_attrs import span_fields_from_attributes
from tracetui.core.readers.otel_messages import as_text

__all__ = ["CassetteBlobsReader"]

_TOOL, _LLM, _AGENT, _OTHER, _DECISION, _RET, _MEMORY = SpanKind.TOOL, SpanKind.LLM, SpanKind.AGENT, SpanKind.OTHER, SpanKind.DECISION, SpanKind.RETRIEVAL, SpanKind.MEMORY


# --- (e) recorded run with blobs ------------------------------------------------------------

_KINDS: dict[str, SpanKind] = {
    **{k.value: k for k in SpanKind},
    # OpenInference span kinds (upper case in the spec)
    "retriever": _RET, "chain": _OTHER, "embedding": _OTHER, "reranker": _OTHER, "evaluator": _OTHER,
    "guardrail": _DECISION, "prompt": _OTHER, "unknown": _OTHER,
    # OTel GenAI operation names and common words
    "chat": _LLM, "model": _LLM, "generation": _LLM, "completion": _LLM, "text_completion": _LLM,
    "generate_content": _LLM, "execute_tool": _TOOL, "function": _TOOL, "tool_call": _TOOL,
    "invoke_agent": _AGENT, "workflow": _AGENT, "run": _AGENT, "retrieve": _RET,
    "policy": _DECISION, "router": _DECISION, "routing": _DECISION, "handoff": _DECISION, "plan": _DECISION,
    "planner": _DECISION, "span": _OTHER, "task": _OTHER, "step": _OTHER, "embeddings": _OTHER,
}
"""Span ``kind`` values of shape (e), lower-cased: tracetui kinds, OpenInference kinds
(``RETRIEVER`` -> retrieval; guardrails are decisions, as the common conventions say),
GenAI operation names and common words. Anything else: ``other`` with a warning."""
_E_SPAN_KEYS = frozenset({"runId", "spanId", "parentSpanId", "kind", "name", "inputRef", "outputRef", "attrs",
                          "status", "error", "errorType"}) | TIME_KEYS


def _documents(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if isinstance(item, dict):
            d = item.get("document") if isinstance(item.get("document"), dict) else item
            text = d.get("text", d.get("content", d.get("page_content")))
            did = d.get("id", d.get("doc_id"))
            out.append({"id": None if did is None else str(did), "score": d.get("score"),
                        "text": text if text is None or isinstance(text, str) else as_text(text)})
        else:
            out.append({"id": None, "score": None, "text": item if isinstance(item, str) else as_text(item)})
    return out


def _kind_data(kind: SpanKind, name: str, has_in: bool, inp: Any, has_out: bool, out: Any,
               attributes: dict[str, Any]) -> dict[str, Any]:
    """A span's kind section from its input and output payloads (shape e)."""
    d: dict[str, Any] = {}
    if kind is _LLM:
        if has_in:
            d.update(llm_payload({"request": inp} if isinstance(inp, dict) else {"messages": inp}
                                  if isinstance(inp, list) else {"messages": [inp]}))
        if has_out:
            d.update(assistant_message(out))
    elif kind is _TOOL:
        d["tool_name"] = name
        if has_in:
            args, _ = decode_args(inp)
            put_arguments(d, args)
        if has_out:
            d["output"] = out
    elif kind is _RET:
        if has_in:
            d["query"] = inp.get("query", inp) if isinstance(inp, dict) else inp
        if has_out:
            docs = _documents(out.get("documents") if isinstance(out, dict) and "documents" in out else out)
            if docs is not None:
                d["documents"] = docs
            else:
                attributes["output"] = out
    elif kind is _DECISION:
        d["decision"] = name
        if has_out:
            d["value"] = out
        if has_in:
            if isinstance(inp, list):
                d["options"] = inp
            else:
                attributes["input"] = inp
    elif kind is _MEMORY:
        d["operation"] = name
        if has_in:
            d["query"] = inp
        if has_out:
            d["value"] = out
    else:
        if kind is _AGENT:
            d["agent_name"] = name
        if has_in:
            d["input"] = inp
        if has_out:
            d["output"] = out
    return d


class CassetteBlobsReader:
    """Shape (e): a recorded run ``{runId, codeVersion, promptVersions, spans: [...]}`` with payload blobs.

    One such object, a JSON array of them or JSON Lines of them; each is one run.
    Header: ``runId`` -> ``run_id``, ``codeVersion`` -> ``code_version``,
    ``promptVersions`` -> ``prompt_versions`` (and the other ``run_header`` fields).
    Spans keep their ``spanId`` / ``parentSpanId`` tree; ``kind`` is mapped by
    ``_KINDS`` (tracetui, OpenInference and GenAI names). ``inputRef`` /
    ``outputRef`` name payload blobs (see ``Blobs``), JSON-parsed when JSON,
    else text, mapped per kind: llm input -> ``messages`` / params, output ->
    ``output`` message; tool -> ``arguments`` (+ ``args_hash``) / ``output``;
    retrieval -> ``query`` / ``documents``; decision -> ``options`` / ``value``;
    memory -> ``query`` / ``value``; agent and other -> ``input`` / ``output``.
    ``attrs`` go through ``span_fields_from_attributes`` (OTel / OpenInference
    attributes fill model, usage...; the rest stays in ``attributes``). A blob
    that is missing is a warning naming the ref and the span; the field stays
    absent. ``seq``: from start times when every span has one, else a pre-order
    walk of the tree in file order (parents before children).
    """

    name = "cassette-blobs"

    def sniff(self, head: bytes) -> bool:
        """An object (or array / JSON Lines of them) with ``runId`` and ``spans`` whose first span has
        ``spanId`` and ``kind``, with ``inputRef``/``outputRef`` on a span or ``codeVersion``/``promptVersions``."""
        _, docs = sniff_head(head)
        if not docs or not isinstance(docs[0], dict):
            return False
        doc = docs[0]
        spans = doc.get("spans")
        if "runId" not in doc or not isinstance(spans, list) or not spans or not isinstance(spans[0], dict):
            return False
        if not ("spanId" in spans[0] and "kind" in spans[0]) or not mostly_dicts_with(spans, "spanId"):
            return False
        return ("codeVersion" in doc or "promptVersions" in doc
                or any("inputRef" in s or "outputRef" in s for s in spans))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read every run, with its payloads from the blob folder next to ``path``.

        Raises:
            ReadError: not JSON, or no span could be read.
        """
        blobs = Blobs(path)
        return runs_of(path, data, "spans", 'a recorded run {"runId", "spans": [...]}', "span",
                        lambda rec, v, rid, issues: self._run(path, rec, v, rid, issues, blobs))

    def _run(self, path: str, rec: Rec, v: dict[str, Any], rid: str, issues: list[ReadIssue],
             blobs: Blobs) -> RunSpans:
        header = run_header(v, skip=("spans",))
        header["run_id"] = rid
        log = PayloadLog(path)
        spans: list[Span] = []
        unknown: set[str] = set()
        other_run = 0
        for i, s in enumerate(v["spans"]):
            line, where = sub_ref(rec, "spans", i)
            if not isinstance(s, dict):
                issues.append(ReadIssue(path, line, where, f"run {rid}: span is not an object; skipped"))
                continue
            sid = s.get("spanId")
            if not isinstance(sid, (str, int)) or isinstance(sid, bool) or sid == "":
                issues.append(ReadIssue(path, line, at_path(where, "spanId"), f"run {rid}: span has no spanId; read as "
                                        f"span-{i}", "warning"))
                sid = f"span-{i}"
            sid = str(sid)
            parent = s.get("parentSpanId")
            parent = None if parent in (None, "") or isinstance(parent, bool) else str(parent)
            if s.get("runId") is not None and str(s["runId"]) != rid:
                other_run += 1
            raw_kind = s.get("kind")
            kind = _KINDS.get(raw_kind.lower()) if isinstance(raw_kind, str) else None
            if kind is None:
                kind = _OTHER
                label = str(raw_kind)
                if label not in unknown:
                    unknown.add(label)
                    issues.append(ReadIssue(path, line, at_path(where, "kind"), f"run {rid}: span kind {raw_kind!r} is not "
                                            "a known kind; read as other", "warning"))
            name = s.get("name") if isinstance(s.get("name"), str) and s["name"] else str(raw_kind or "span")
            owner = f"span {sid} ({name})"
            has_in = has_out = False
            inp = out = None
            if s.get("inputRef") is not None:
                has_in, inp = blob_payload(blobs, s["inputRef"], log, issues, line, at_path(where, "inputRef"), owner)
            if s.get("outputRef") is not None:
                has_out, out = blob_payload(blobs, s["outputRef"], log, issues, line, at_path(where, "outputRef"), owner)
            status, err = self._status(s)
            raw_attrs = s.get("attrs") if isinstance(s.get("attrs"), dict) else {}
            attributes: dict[str, Any]
            base: dict[str, Any] = {}
            if raw_attrs:
                akind, adata, leftover, aerr = span_fields_from_attributes(
                    name, raw_attrs, status_error=status is Status.ERROR)
                if akind is kind:
                    base, attributes = adata, leftover
                else:
                    attributes = dict(raw_attrs)
                err = err or aerr
            else:
                attributes = {}
            extra = {k: x for k, x in s.items() if k not in _E_SPAN_KEYS}
            if extra:
                attributes.update(extra)
            data = {**base, **_kind_data(kind, name, has_in, inp, has_out, out, attributes)}
            if kind is _LLM and "model" not in data and isinstance(raw_attrs.get("model"), str):
                data["model"] = raw_attrs["model"]
            if kind is _TOOL:
                for k in ("tool_name", "toolName", "tool"):
                    if isinstance(raw_attrs.get(k), str):
                        data["tool_name"] = raw_attrs[k]
                        break
            start, end = row_times(s)
            spans.append(Span(sid, parent, -1, kind, name, start_ns=start, end_ns=end, status=status, error_type=err,
                              data=data, attributes=attributes, trace_id=rid, line=line))
        report_nofolder(log, issues, rid, blobs)
        if other_run:
            issues.append(ReadIssue(path, rec.line, at_path(rec.where, "spans"), f"run {rid}: {other_run} span(s) name another runId; read "
                                    "as part of this run", "warning"))
        if spans and any(s.start_ns is None for s in spans):
            _preorder(spans)
        return RunSpans(rid, spans, header)

    @staticmethod
    def _status(s: dict[str, Any]) -> tuple[Status, str | None]:
        st = s.get("status")
        if isinstance(st, dict):
            st = st.get("code", st.get("status_code"))
        err = s.get("errorType")
        if isinstance(err, str) and err:
            return Status.ERROR, err
        if s.get("error") not in (None, False, "", {}):
            return Status.ERROR, error_name(s["error"])
        if isinstance(st, str):
            low = st.lower().removeprefix("status_code_")
            if low in ("error", "failed", "failure"):
                return Status.ERROR, None
            if low in ("ok", "success", "succeeded"):
                return Status.OK, None
        if st == 2:
            return Status.ERROR, None
        if st == 1:
            return Status.OK, None
        return Status.UNSET, None


def _preorder(spans: list[Span]) -> None:
    """Set ``seq`` by a pre-order walk of the tree (siblings in file order): parents before children."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[Span]] = {}
    for s in spans:
        key = s.parent_id if s.parent_id in ids and s.parent_id != s.span_id else None
        children.setdefault(key, []).append(s)
    n = 0
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        s = stack.pop()
        if s.span_id in seen:
            continue
        seen.add(s.span_id)
        s.seq = n
        n += 1
        stack.extend(reversed(children.get(s.span_id, [])))
    for s in spans:  # spans in parent cycles: after the rest, file order (finish_spans breaks the cycle)
        if s.span_id not in seen:
            seen.add(s.span_id)
            s.seq = n
            n += 1
