"""Langfuse trace export: the UI's "download trace" JSON and the public API's trace object.

Shapes accepted (``../shared/design/formats.md`` §4; corpus ``langfuse/``, the
fixtures Langfuse keeps for its ChatML mapping):

- UI export ``{"trace": {...}, "observations": [...]}`` (the trace may repeat the
  observations under ``trace.observations``; the top-level list wins when it has any);
- public API ``GET /api/public/traces/{id}``: one trace object with ``observations``
  embedded, older usage names (``usage{input, output, total, unit}``,
  ``promptTokens``/``completionTokens``, ``calculatedTotalCost``);
- a JSON array of either (one run each), or a trace list page ``{"data": [trace ...]}``
  (its observations are ids only: the traces' headers load, with one issue each).

Observations -> spans. Nesting by ``parentObservationId``; order by ``startTime``
(ISO, read exactly to the ns; a parent before a child of the same instant).
``metadata`` (a JSON string or an object) embeds, for OTel-ingested observations,
the original span ``attributes`` with ``resourceAttributes`` and ``scope``: those
attributes are mapped by ``otel_attrs.span_fields_from_attributes`` (OpenInference,
GenAI semconv, pydantic-ai, OpenLLMetry dialects). Langfuse's own fields decide the
kind when the attributes do not (``type``: GENERATION -> llm, TOOL -> tool, AGENT ->
agent, RETRIEVER -> retrieval, GUARDRAIL -> decision, the rest -> other) and fill
what the attributes lack: ``model``, ``modelParameters``, ``input``/``output``
(Langfuse lifts ``gen_ai.input.messages`` and tool arguments out of the attributes
into them: they are put back), ``usageDetails``/``usage``, ``promptName`` /
``promptVersion`` -> ``prompt_id`` / ``prompt_version``. ``level`` ERROR is a
failed span (``statusMessage`` kept). EVENT observations have no end.

Run id = the trace id; the header comes from the trace (``name`` -> agent,
``input``, ``output``, ``release``/``version`` -> code_version, ``timestamp`` ->
started_at / start_ns, ``scores`` -> outcome).
"""

from __future__ import annotations

from typing import Any

import orjson

from tracetui.core.canonical import parse_json_string
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.tree import OTEL_CONTENT_WHY
from tracetui.core.readers.base import ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM, load_json
from tracetui.core.readers.limits import dumps_any
from tracetui.core.readers.otel_attrs import classify, span_fields_from_attributes
from tracetui.core.readers.otel_messages import normalize_message, normalize_messages
from tracetui.core.readers.otel_sdk import assign_seq, content_gaps
from tracetui.core.readers.timefmt import iso_ns

__all__ = ["LangfuseReader"]

_LLM, _TOOL, _RET, _AGENT = SpanKind.LLM, SpanKind.TOOL, SpanKind.RETRIEVAL, SpanKind.AGENT
_OTHER, _DECISION = SpanKind.OTHER, SpanKind.DECISION

_TYPE_KINDS = {
    "GENERATION": _LLM, "TOOL": _TOOL, "AGENT": _AGENT, "RETRIEVER": _RET, "GUARDRAIL": _DECISION,
    "SPAN": _OTHER, "EVENT": _OTHER, "CHAIN": _OTHER, "EVALUATOR": _OTHER, "EMBEDDING": _OTHER,
}
"""Langfuse observation ``type`` -> span kind (Langfuse docs, "observation types", 2025)."""

_FORCE_OP = {_LLM: "chat", _TOOL: "execute_tool", _AGENT: "invoke_agent", _RET: "retrieval"}
"""``gen_ai.operation.name`` that makes the attribute mapper shape ``data`` for a kind."""

_INPUT_KEYS = frozenset({"gen_ai.input.messages", "input.value", "traceloop.entity.input", "llm.prompts"})
_INPUT_PREFIXES = ("gen_ai.prompt", "llm.input_messages")
_OUTPUT_KEYS = frozenset({"gen_ai.output.messages", "output.value", "traceloop.entity.output", "gen_ai.output",
                          "final_result"})
_OUTPUT_PREFIXES = ("gen_ai.completion", "llm.output_messages", "llm.choices")
_TOOL_ARG_KEYS = ("gen_ai.tool.call.arguments", "gen_ai.tool.args", "tool_arguments", "input.value",
                  "traceloop.entity.input")
_TOOL_OUT_KEYS = ("gen_ai.tool.call.result", "gen_ai.output", "tool_response", "output.value",
                  "traceloop.entity.output")
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
_USAGE_KEYS = (("input_tokens", ("input", "prompt_tokens", "input_tokens")),
               ("output_tokens", ("output", "completion_tokens", "output_tokens")))
_META_SKIP = frozenset({"attributes", "resourceAttributes", "scope"})


class LangfuseReader:
    """Reads Langfuse trace exports (UI download or public API trace object)."""

    name = "langfuse"
    content_hint = OTEL_CONTENT_WHY
    """Why spans lack content here: GenAI instrumentations capture it only when asked."""

    def sniff(self, head: bytes) -> bool:
        """An object or array naming ``parentObservationId``, or ``observations``
        beside a Langfuse trace key (``"trace"``, ``"projectId"``, ``"htmlPath"``)."""
        body = head.removeprefix(BOM).lstrip()
        if body[:1] not in (b"{", b"["):
            return False
        if b'"parentObservationId"' in head:
            return True
        return b'"observations"' in head and (
            b'"trace"' in head or b'"projectId"' in head or b'"htmlPath"' in head)

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file: one run per trace.

        Raises:
            ReadError: empty, not JSON, or no trace with observations in it.
        """
        return _Reading(path).run(data)


class _Reading:
    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[ReadIssue] = []

    def issue(self, where: str, message: str, severity: str = "skipped") -> None:
        self.issues.append(ReadIssue(self.path, None, where, message, severity))

    def run(self, data: bytes) -> ReaderOutput:
        if not data.removeprefix(BOM).strip():
            raise ReadError(self.path, "file is empty")
        doc = load_json(self.path, data, self.issues)
        if isinstance(doc, list):
            items = [(d, f"$[{i}]") for i, d in enumerate(doc)]
        elif isinstance(doc, dict) and "trace" not in doc and "observations" not in doc \
                and isinstance(doc.get("data"), list):
            items = [(d, f"$.data[{i}]") for i, d in enumerate(doc["data"])]  # GET /api/public/traces (a page)
        elif isinstance(doc, dict):
            items = [(doc, "$")]
        else:
            raise ReadError(self.path, f"JSON {type(doc).__name__} is not a Langfuse trace export "
                            "(expected an object with trace and observations)")
        runs: list[RunSpans] = []
        for d, where in items:
            run = self._trace(d, where)
            if run is not None:
                runs.append(run)
        if not runs:
            raise ReadError(self.path, "no Langfuse trace found (expected {\"trace\": {...}, \"observations\": [...]} "
                            "or a trace object with observations)"
                            + (f"; first problem: {self.issues[0]}" if self.issues else ""))
        return ReaderOutput(runs=runs, issues=self.issues)

    # -- one trace -----------------------------------------------------------------

    def _trace(self, d: Any, where: str) -> RunSpans | None:
        if not isinstance(d, dict):
            self.issue(where, f"expected a trace object, found {type(d).__name__}; skipped")
            return None
        trace = d.get("trace")
        if isinstance(trace, dict):
            obs, obs_where = d.get("observations"), f"{where}.observations"
            if not obs and isinstance(trace.get("observations"), list) and trace["observations"]:
                obs, obs_where = trace["observations"], f"{where}.trace.observations"
        elif "observations" in d:
            trace, obs, obs_where = d, d.get("observations"), f"{where}.observations"
        else:
            keys = ", ".join(map(repr, list(d)[:6]))
            self.issue(where, f"no trace or observations (found keys {keys}); skipped")
            return None
        tid = trace.get("id")
        tid = str(tid) if tid is not None and tid != "" else None
        if tid is None:
            self.issue(f"{where}.trace.id" if trace is not d else f"{where}.id", "trace without id", "warning")
        if obs is None:
            obs = []
        if not isinstance(obs, list):
            self.issue(obs_where, f"observations are a {type(obs).__name__}, not a list; skipped")
            obs = []
        spans: list[Span] = []
        ids_only = 0
        for i, o in enumerate(obs):
            if isinstance(o, str):
                ids_only += 1
                continue
            span = self._observation(o, f"{obs_where}[{i}]", tid)
            if span is not None:
                spans.append(span)
        if ids_only:
            self.issue(obs_where, f"{ids_only} observation(s) are ids only (a trace list, not a trace export); "
                       "fetch the trace itself (GET /api/public/traces/{id}); skipped")
        assign_seq(spans, self.path, self.issues)
        gap = content_gaps(self.path, spans)
        if gap is not None:
            self.issues.append(gap)
        return RunSpans(trace_id=tid, spans=spans, header=self._header(trace, tid))

    def _header(self, t: dict[str, Any], tid: str | None) -> dict[str, Any]:
        h: dict[str, Any] = {}
        if tid is not None:
            h["run_id"] = tid
        ts = t.get("timestamp")
        ns = iso_ns(ts)
        if ns is not None:
            h["started_at"] = ts
            h["start_ns"] = ns
        name = t.get("name")
        if isinstance(name, str) and name:
            h["agent"] = name
        inp = _value(t.get("input"))
        if inp is not None:
            h["input"] = inp
        out = _value(t.get("output"))
        if out is not None:
            h["output"] = out
        version = t.get("release") or t.get("version")
        if version:
            h["code_version"] = str(version)
        tags = t.get("tags")
        if isinstance(tags, list) and tags:
            h["tags"] = tags
        if t.get("sessionId"):
            h["session_id"] = str(t["sessionId"])
        scores = t.get("scores")
        if isinstance(scores, list):
            got = [_score(s) for s in scores if isinstance(s, dict)]
            if got:
                h["outcome"] = {"scores": got}
        meta = _object(t.get("metadata"))
        if isinstance(meta, dict):
            own = {k: v for k, v in meta.items() if k not in _META_SKIP}  # OTel wrapper keys repeat the root span
            if own:
                h["metadata"] = own
        return h

    # -- one observation -----------------------------------------------------------

    def _observation(self, o: Any, where: str, tid: str | None) -> Span | None:
        if not isinstance(o, dict):
            self.issue(where, f"expected an observation object, found {type(o).__name__}; skipped")
            return None
        oid = o.get("id")
        if oid is None or oid == "":
            self.issue(f"{where}.id", "observation without id; skipped")
            return None
        oid = str(oid)
        parent = o.get("parentObservationId")
        parent = str(parent) if parent not in (None, "") else None
        otype = o.get("type")
        otype = otype.upper() if isinstance(otype, str) and otype else "SPAN"
        type_kind = _TYPE_KINDS.get(otype)
        if type_kind is None:
            self.issue(f"{where}.type", f"unknown observation type {o.get('type')!r}; read as other", "warning")
            type_kind = _OTHER
        name = o.get("name")
        name = name if isinstance(name, str) and name else otype.lower()
        start = self._time(o, "startTime", where)
        end = None if otype == "EVENT" else self._time(o, "endTime", where)
        level = o.get("level")
        failed = isinstance(level, str) and level.upper() == "ERROR"
        status = Status.ERROR if failed else Status.UNSET

        meta = o.get("metadata")
        attrs: dict[str, Any] = {}
        extra_meta: dict[str, Any] = {}
        resource: Any = None
        scope: Any = None
        if meta is not None and meta != "" and meta != {}:
            parsed = _object(meta)
            if isinstance(parsed, dict) and isinstance(parsed.get("attributes"), dict):
                attrs = parsed["attributes"]
                resource, scope = parsed.get("resourceAttributes"), parsed.get("scope")
                extra_meta = {k: v for k, v in parsed.items() if k not in _META_SKIP}
            elif isinstance(parsed, dict):
                resource, scope = parsed.get("resourceAttributes"), parsed.get("scope")
                extra_meta = {k: v for k, v in parsed.items() if k not in _META_SKIP}
            else:
                if isinstance(meta, str) and meta.lstrip()[:1] in ("{", "["):
                    self.issue(f"{where}.metadata", "metadata is a string that is not valid JSON; kept as text",
                               "warning")
                extra_meta = {"metadata": parsed}

        inp = _value(o.get("input"))
        out = _value(o.get("output"))
        kind0 = classify(name, attrs) if attrs else _OTHER
        kind = kind0 if kind0 is not _OTHER else type_kind
        extra: dict[str, Any] = {}
        if kind is _LLM or kind is _AGENT:
            if inp is not None and not _has(attrs, _INPUT_KEYS, _INPUT_PREFIXES) and _messages_like(inp):
                extra["gen_ai.input.messages"] = inp
            if out is not None and not _has(attrs, _OUTPUT_KEYS, _OUTPUT_PREFIXES) and _messages_like(out):
                extra["gen_ai.output.messages"] = out
        elif kind is _TOOL:
            if inp is not None and not any(attrs.get(k) not in (None, "") for k in _TOOL_ARG_KEYS):
                extra["gen_ai.tool.call.arguments"] = inp
            if out is not None and not any(attrs.get(k) not in (None, "") for k in _TOOL_OUT_KEYS):
                extra["gen_ai.tool.call.result"] = out
            if otype == "TOOL" and not any(attrs.get(k) for k in _TOOL_NAME_KEYS):
                extra["gen_ai.tool.name"] = name  # a Langfuse TOOL observation is named after its tool
        elif kind is _RET:
            if inp is not None and not any(attrs.get(k) for k in ("gen_ai.retrieval.query.text", "input.value")):
                extra["gen_ai.retrieval.query.text"] = inp
            if isinstance(out, list) and "gen_ai.retrieval.documents" not in attrs and not any(
                    k.startswith("retrieval.documents") for k in attrs):
                extra["gen_ai.retrieval.documents"] = out
        forced = bool(extra) or kind is not kind0
        if forced and kind in _FORCE_OP:
            extra["gen_ai.operation.name"] = _FORCE_OP[kind]
        mapped_attrs = {**attrs, **extra} if extra else attrs
        mkind, data, left, error_type = span_fields_from_attributes(name, mapped_attrs, [], status_error=failed)
        for k in extra:
            left.pop(k, None)
        if "gen_ai.operation.name" in extra and "gen_ai.operation.name" in attrs:
            left["gen_ai.operation.name"] = attrs["gen_ai.operation.name"]
        if mkind is not kind:
            data = {}  # the mapper shaped another kind (decision from GUARDRAIL): rebuilt below
        data = self._complete(kind, data, o, name, inp, out, otype)
        self._attributes(left, o, otype, level, extra_meta, resource, scope)
        return Span(span_id=oid, parent_id=parent, seq=-1, kind=kind, name=name, start_ns=start, end_ns=end,
                    status=status, error_type=error_type, data=data, attributes=left, trace_id=tid)

    def _time(self, o: dict[str, Any], key: str, where: str) -> int | None:
        raw = o.get(key)
        if raw is None or raw == "":
            return None
        ns = iso_ns(raw)
        if ns is None:
            if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0:
                return raw
            self.issue(f"{where}.{key}", f"{raw!r} is not an ISO 8601 time; ignored", "warning")
        return ns

    def _complete(self, kind: SpanKind, data: dict[str, Any], o: dict[str, Any], name: str,
                  inp: Any, out: Any, otype: str) -> dict[str, Any]:
        """Fill what the OTel attributes did not give from Langfuse's own fields."""
        if kind is _LLM:
            model = o.get("model")
            if "model" not in data and isinstance(model, str) and model:
                data["model"] = model
            params = _object(o.get("modelParameters"))
            if "params" not in data and isinstance(params, dict) and params:
                data["params"] = params
            if "messages" not in data and inp is not None:
                data["messages"] = _as_messages(inp, "user")
            if "output" not in data and out is not None:
                msgs = _as_messages(out, "assistant")
                assistant = [m for m in msgs if m.get("role") == "assistant"] or msgs
                if assistant:
                    data["output"] = assistant[0]
            if "usage" not in data:
                usage = _usage(o)
                if usage:
                    data["usage"] = usage
            if "prompt_id" not in data and o.get("promptName"):
                data["prompt_id"] = str(o["promptName"])
            if "prompt_version" not in data and o.get("promptVersion") is not None:
                data["prompt_version"] = str(o["promptVersion"])
        elif kind is _TOOL:
            if "tool_name" not in data:
                data["tool_name"] = name
        elif kind is _DECISION:
            data.setdefault("decision", name)
            if "value" not in data and out is not None:
                data["value"] = out
        elif kind is _AGENT or kind is _OTHER:
            if kind is _AGENT and "agent_name" not in data and otype == "AGENT":
                data["agent_name"] = name
            if "input" not in data and inp is not None:
                data["input"] = inp
            if "output" not in data and out is not None:
                data["output"] = out
        return data

    @staticmethod
    def _attributes(left: dict[str, Any], o: dict[str, Any], otype: str, level: Any,
                    extra_meta: dict[str, Any], resource: Any, scope: Any) -> None:
        left["langfuse.type"] = otype
        if level not in (None, "DEFAULT"):
            left["langfuse.level"] = level
        if o.get("statusMessage"):
            left["langfuse.status_message"] = o["statusMessage"]
        cost = o.get("totalCost")
        if cost is None:
            cost = o.get("calculatedTotalCost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost:
            left["langfuse.total_cost"] = cost
        if isinstance(resource, dict) and resource.get("service.name") is not None and "service.name" not in left:
            left["service.name"] = resource["service.name"]
        if isinstance(scope, dict) and scope.get("name"):
            left["otel.scope.name"] = scope["name"]
        for k, v in extra_meta.items():
            left.setdefault(f"metadata.{k}" if k != "metadata" else k, v)


# -- values ---------------------------------------------------------------------------------


def _value(v: Any) -> Any:
    """A Langfuse ``input``/``output``: JSON text holding an object, array or string is parsed."""
    if isinstance(v, str):
        s = v.lstrip()
        if s[:1] == '"':
            try:
                got = orjson.loads(v)
            except orjson.JSONDecodeError:
                return v
            return parse_json_string(got) if isinstance(got, str) else got
        return parse_json_string(v)
    return v


def _object(v: Any) -> Any:
    """``metadata`` / ``modelParameters``: an object, or JSON text of one."""
    return parse_json_string(v) if isinstance(v, str) else v


def _messages_like(v: Any) -> bool:
    """A list of chat messages (every item an object with a ``role``), or one such message."""
    if isinstance(v, dict):
        return "role" in v
    return isinstance(v, list) and bool(v) and all(isinstance(m, dict) and "role" in m for m in v)


def _as_messages(v: Any, role: str) -> list[dict[str, Any]]:
    """Langfuse-native input/output as messages: a message list, ``{"messages": [...]}``,
    one message, or anything else as the text of one message of ``role``."""
    if isinstance(v, dict) and isinstance(v.get("messages"), list):
        v = v["messages"]
    if _messages_like(v):
        return normalize_messages(v, role) or []
    return normalize_message({"role": role, "content": v if isinstance(v, str) else
                              dumps_any(v, option=orjson.OPT_NON_STR_KEYS).decode()}, role)


def _usage(o: dict[str, Any]) -> dict[str, int]:
    """Token counts from ``usageDetails`` (current), ``usage`` (older API), or the public
    API's ``promptTokens`` / ``completionTokens`` (0 there means not recorded)."""
    out: dict[str, int] = {}
    for src in (o.get("usageDetails"), o.get("usage")):
        if isinstance(src, dict) and any(_is_int(v) and v for v in src.values()):  # all 0: API defaults
            for field, keys in _USAGE_KEYS:
                n = next((src[k] for k in keys if _is_int(src.get(k))), None)
                if n is not None and field not in out:
                    out[field] = n
    for field, key in (("input_tokens", "promptTokens"), ("output_tokens", "completionTokens")):
        if field not in out and _is_int(o.get(key)) and o[key]:
            out[field] = o[key]
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _score(s: dict[str, Any]) -> dict[str, Any]:
    got: dict[str, Any] = {"name": s.get("name")}
    value = s.get("value")
    if value is None:
        value = s.get("stringValue")
    got["value"] = value
    if s.get("source"):
        got["source"] = s["source"]
    if s.get("observationId"):
        got["observation_id"] = s["observationId"]
    return got


def _has(attrs: dict[str, Any], keys: frozenset[str], prefixes: tuple[str, ...]) -> bool:
    if not attrs:
        return False
    for k, v in attrs.items():
        if v is None or v == "":
            continue
        if k in keys or k.startswith(prefixes):
            return True
    return False
