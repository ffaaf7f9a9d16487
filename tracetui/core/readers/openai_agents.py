"""OpenAI Agents SDK reader: the ``BackendSpanExporter``'s trace-ingest payloads.

Shape (``../shared/design/formats.md`` §6; the SDK's ``tracing/spans.py``,
``traces.py`` and ``span_data.py`` ``export()``): the SDK POSTs
``{"data": [item ...]}`` to ``/v1/traces/ingest``, an item being a trace record
``{"object": "trace", "id": "trace_<hex>", "workflow_name", "group_id", "metadata"}``
or a span ``{"object": "trace.span", "id": "span_<hex>", "trace_id", "parent_id",
"started_at", "ended_at", "span_data": {"type", ...}, "error": null | {message, data}}``.

Accepted files: one batch per line (JSON Lines, as the corpus files
``openai-agents/*.ingest.jsonl`` hold them), one JSON document (a batch, a list
of batches, or a bare list of items). A batch may mix traces, and a trace's
``trace`` record may come in another batch than its spans (the SDK exports spans
as they end, and the trace record when the trace starts or ends), so everything
is collected first and then grouped by ``trace_id``: one run per trace id, in
first-seen order. A bad line is reported with its number and skipped.

Spans are exported when they *end*, so file order is end order: ``seq`` is
derived from ``started_at`` (``read_trace``). Ids are kept as given.
"""

from __future__ import annotations

import re
from typing import Any

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.openai_shapes import usage_from
from tracetui.core.readers.otel_messages import merge_output, normalize_message
from tracetui.core.readers.timefmt import iso_ns, ns_to_iso

__all__ = ["OpenAIAgentsReader"]

_OBJECT_HEAD = re.compile(rb'"object"\s*:\s*"trace(?:\.span)?"')
_SPAN_HEAD = re.compile(rb'"span_data"\s*:\s*\{')
_OTHER_TYPES = frozenset({"mcp_tools", "transcription", "speech", "speech_group"})
_MODEL_CONFIG_NOT_PARAMS = frozenset({"base_url"})


def _s(v: Any) -> str | None:
    return None if v is None else v if type(v) is str else str(v)


class OpenAIAgentsReader:
    """Reads OpenAI Agents SDK trace-ingest batches (JSON Lines or one JSON document)."""

    name = "openai-agents"

    def sniff(self, head: bytes) -> bool:
        """An object or array with an item ``"object": "trace"`` / ``"trace.span"``, or a
        ``span_data`` object, in its first 64 KiB."""
        h = head.removeprefix(BOM)
        if h.lstrip()[:1] not in (b"{", b"["):
            return False
        return _OBJECT_HEAD.search(h) is not None or (b'"trace_id"' in h and _SPAN_HEAD.search(h) is not None)

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file into one run per trace id, in first-seen order.

        Raises:
            ReadError: empty, not JSON, or no trace or span item anywhere.
        """
        return _Reading(path).run(data)


class _Run:
    __slots__ = ("has_record", "header", "missing", "responses", "spans")

    def __init__(self) -> None:
        self.header: dict[str, Any] = {}
        self.has_record = False
        self.spans: list[Span] = []
        self.responses = 0
        self.missing = {"function_in": 0, "function_out": 0, "generation_in": 0, "generation_out": 0}


class _Reading:
    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[ReadIssue] = IssueList()
        self.runs: dict[str | None, _Run] = {}
        self.index = 0
        self.per_line = False
        self.warned_types: set[str] = set()

    def issue(self, line: int | None, where: str, message: str, severity: str = "skipped") -> None:
        self.issues.append(ReadIssue(self.path, line, where, message, severity))

    def run(self, data: bytes) -> ReaderOutput:
        values, jsonl = load_json_or_jsonl(self.path, data, self.issues)
        docs = list(values)
        self.per_line = jsonl or (len(docs) == 1 and docs[0][0] == 1)
        found = 0
        for line, value in docs:
            found += self._document(value, line)
        if not found:
            raise ReadError(self.path, "no OpenAI Agents trace or span item found (expected "
                            "{\"data\": [{\"object\": \"trace\" | \"trace.span\", ...}]})"
                            + (f"; first problem: {self.issues[0]}" if self.issues else ""))
        out: list[RunSpans] = []
        for tid, run in self.runs.items():
            where = f"trace {tid}"
            if not run.has_record and run.spans:
                self.issue(None, where, "the trace record (workflow name, group id, metadata) never came; "
                           "its spans are loaded as a run without them", "warning")
            if run.responses:
                self.issue(None, where, f"{run.responses} response span(s): the Agents SDK exports only the "
                           "response id and usage of a Responses API call, not its input or output messages",
                           "warning")
            m = run.missing
            notes = [f"{n} {what}" for n, what in (
                (m["function_in"], "function span(s) without input"),
                (m["function_out"], "function span(s) without output"),
                (m["generation_in"], "generation span(s) without input messages"),
                (m["generation_out"], "generation span(s) without output"),
            ) if n]
            if notes:
                self.issue(None, where, "content not recorded (trace_include_sensitive_data off?): "
                           + "; ".join(notes), "warning")
            starts = [s.start_ns for s in run.spans if s.start_ns is not None]
            header = run.header
            if starts:
                header["start_ns"] = min(starts)
                header["started_at"] = ns_to_iso(header["start_ns"])
            if "agent" not in header:
                first_agent = min((s for s in run.spans if s.kind is SpanKind.AGENT and s.parent_id is None),
                                  key=lambda s: s.start_ns if s.start_ns is not None else 1 << 62, default=None)
                if first_agent is not None:
                    header["agent"] = first_agent.name
            out.append(RunSpans(trace_id=tid, spans=run.spans, header=header))
        return ReaderOutput(runs=out, issues=self.issues)

    def _document(self, value: Any, line: int | None) -> int:
        if type(value) is dict and "data" in value and "object" not in value:
            items = value["data"]
            if type(items) is not list:
                self.issue(line, "$.data", f"expected a list, found {type(items).__name__}; skipped")
                return 0
            return self._items(items, line, "$.data")
        if type(value) is list:
            if all(type(v) is dict and "data" in v and "object" not in v for v in value):
                return sum(self._items(v["data"], line, f"$[{i}].data") if type(v["data"]) is list else 0
                           for i, v in enumerate(value))
            return self._items(value, line, "$")
        if type(value) is dict:
            return self._items([value], line, "$", single=True)
        self.issue(line, "$", f"expected a {{\"data\": [...]}} batch, found {type(value).__name__}; skipped")
        return 0

    def _items(self, items: list[Any], line: int | None, base: str, single: bool = False) -> int:
        found = 0
        for i, it in enumerate(items):
            where = base if single else f"{base}[{i}]"
            self.index += 1
            ln = line if self.per_line else self.index
            if type(it) is not dict:
                self.issue(ln, where, f"expected an object, found {type(it).__name__}; skipped")
                continue
            obj = it.get("object")
            if obj == "trace":
                self._trace(it, ln, where)
            elif obj == "trace.span" or (obj is None and "span_data" in it):
                self._span(it, ln, where)
            else:
                self.issue(ln, where, f"object {obj!r} is neither \"trace\" nor \"trace.span\"; skipped")
                continue
            found += 1
        return found

    def _run(self, tid: str | None) -> _Run:
        run = self.runs.get(tid)
        if run is None:
            run = self.runs[tid] = _Run()
            if tid is not None:
                run.header["run_id"] = tid
        return run

    def _trace(self, it: dict[str, Any], line: int | None, where: str) -> None:
        tid = _s(it.get("id")) or None
        if tid is None:
            self.issue(line, where, "trace record without an id; skipped")
            return
        run = self._run(tid)
        if run.has_record:
            self.issue(line, where, f"second trace record for {tid}; its fields override", "warning")
        run.has_record = True
        if it.get("workflow_name") is not None:
            run.header["agent"] = _s(it["workflow_name"])
        if it.get("group_id") is not None:
            run.header["group_id"] = it["group_id"]
        if it.get("metadata"):
            run.header["metadata"] = it["metadata"]

    def _span(self, it: dict[str, Any], line: int | None, where: str) -> None:
        sid = _s(it.get("id")) or None
        if sid is None:
            self.issue(line, where, "span without an id; skipped")
            return
        tid = _s(it.get("trace_id")) or None
        if tid is None:
            self.issue(line, f"{where}.trace_id", "span without a trace_id; grouped in a run without trace id", "warning")
        run = self._run(tid)
        parent = _s(it.get("parent_id")) or None
        start = self._time(it, "started_at", line, where)
        end = self._time(it, "ended_at", line, where)
        sd = it.get("span_data")
        if type(sd) is not dict:
            self.issue(line, f"{where}.span_data", "span without span_data; read as other", "warning")
            sd = {}
        typ = sd.get("type")
        if typ is not None and type(typ) is not str:  # a list or object cannot name a type: kept as text
            self.issue(line, f"{where}.span_data.type", f"span_data type is a {type(typ).__name__}, not a string "
                       f"({str(typ)[:60]}); read as other", "warning")
            typ = str(typ)
            self.warned_types.add(typ)
        attrs: dict[str, Any] = {"span_type": typ} if typ is not None else {}
        kind, name, data = self._map(typ, sd, attrs, line, where, run)
        status = Status.OK if end is not None else Status.UNSET
        error_type = None
        err = it.get("error")
        if err:
            status = Status.ERROR
            if type(err) is dict:
                error_type = _s(err.get("message"))
                if err.get("data") is not None:
                    attrs["error.data"] = err["data"]
            else:
                error_type = _s(err)
        if it.get("metadata"):
            attrs["metadata"] = it["metadata"]
        if kind is SpanKind.TOOL and "output" not in data and status is not Status.ERROR:
            run.missing["function_out"] += 1
        run.spans.append(Span(span_id=sid, parent_id=parent, seq=-1, kind=kind, name=name, start_ns=start,
                              end_ns=end, status=status, error_type=error_type, data=data, attributes=attrs,
                              trace_id=tid, line=line))

    def _time(self, it: dict[str, Any], key: str, line: int | None, where: str) -> int | None:
        v = it.get(key)
        if v is None:
            return None
        ns = iso_ns(v)
        if ns is None:
            self.issue(line, f"{where}.{key}", f"{key} {v!r} is not an ISO 8601 time; ignored", "warning")
        return ns

    def _map(self, typ: Any, sd: dict[str, Any], attrs: dict[str, Any], line: int | None, where: str,
             run: _Run) -> tuple[SpanKind, str, dict[str, Any]]:
        name = _s(sd.get("name"))
        data: dict[str, Any] = {}
        if typ == "agent":
            for k in ("handoffs", "tools", "output_type"):
                if sd.get(k) is not None:
                    attrs[k] = sd[k]
            if name is not None:
                data["agent_name"] = name
            return SpanKind.AGENT, name or "agent", data
        if typ == "function":
            data["tool_name"] = name
            if sd.get("input") is not None:
                args = parse_json_string(sd["input"])
                data["arguments"] = args
                data["args_hash"] = args_hash(args)
            else:
                run.missing["function_in"] += 1
            if sd.get("output") is not None:  # the SDK exports a falsy output as null
                data["output"] = sd["output"]
            if sd.get("mcp_data") is not None:
                attrs["mcp_data"] = sd["mcp_data"]
            return SpanKind.TOOL, name or "function", data
        if typ == "generation":
            model = _s(sd.get("model"))
            if model is not None:
                data["model"] = model
            cfg = sd.get("model_config")
            if type(cfg) is dict:
                params = {k: v for k, v in cfg.items() if v is not None and k not in _MODEL_CONFIG_NOT_PARAMS}
                if params:
                    data["params"] = params
                if cfg.get("base_url") is not None:
                    attrs["base_url"] = cfg["base_url"]
            inp = sd.get("input")
            if type(inp) is list:
                msgs: list[dict[str, Any]] = []
                for m in inp:
                    msgs.extend(normalize_message(m))
                data["messages"] = msgs
            else:
                run.missing["generation_in"] += 1
            outp = sd.get("output")
            if type(outp) is list:
                outs: list[dict[str, Any]] = []
                for m in outp:
                    outs.extend(normalize_message(m, "assistant"))
                out = merge_output(outs)
                if out is not None:
                    data["output"] = out
            if "output" not in data:
                run.missing["generation_out"] += 1
            usage = usage_from(sd.get("usage"))
            if usage:
                data["usage"] = usage
            return SpanKind.LLM, model or "generation", data
        if typ == "response":
            run.responses += 1
            if sd.get("response_id") is not None:
                data["response_id"] = _s(sd["response_id"])
            usage = usage_from(sd.get("usage"))
            if usage:
                data["usage"] = usage
            return SpanKind.LLM, "response", data
        if typ == "handoff":
            data["decision"] = "handoff"
            data["value"] = sd.get("to_agent")
            if sd.get("from_agent") is not None:
                data["from_agent"] = sd["from_agent"]
            return SpanKind.DECISION, "handoff", data
        if typ == "guardrail":
            data["decision"] = f"guardrail:{name}"
            data["value"] = sd.get("triggered")
            return SpanKind.DECISION, name or "guardrail", data
        if typ == "custom":
            cd = sd.get("data")
            if cd is not None:
                attrs["data"] = cd
                if type(cd) is dict and cd.get("sdk_span_type") is not None:
                    attrs["sdk_span_type"] = cd["sdk_span_type"]
            return SpanKind.OTHER, name or "custom", data
        if typ in _OTHER_TYPES:
            if typ == "mcp_tools":
                if sd.get("server") is not None:
                    data["input"] = sd["server"]
                if "result" in sd:
                    data["output"] = sd["result"]
            else:
                if sd.get("input") is not None:
                    data["input"] = sd["input"]
                if sd.get("output") is not None:
                    data["output"] = sd["output"]
                for k in ("model", "model_config", "first_content_at"):
                    if sd.get(k) is not None:
                        attrs[k] = sd[k]
            return SpanKind.OTHER, name or typ, data
        key = str(typ)
        if key not in self.warned_types:
            self.warned_types.add(key)
            self.issue(line, f"{where}.span_data.type", f"unknown span_data type {typ!r}; read as other", "warning")
        rest = {k: v for k, v in sd.items() if k not in ("type", "name")}
        if rest:
            attrs["span_data"] = rest
        return SpanKind.OTHER, name or key, data
