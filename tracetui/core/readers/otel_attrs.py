"""OpenTelemetry span attributes -> a tracetui span's kind and semantic section.

One pure function, ``span_fields_from_attributes``, shared by every reader whose
source carries OTel attributes (OTLP/JSON, Langfuse's embedded attributes,
``ConsoleSpanExporter`` dumps). It accepts the dialects live today
(``../shared/design/formats.md`` §1, §1.6, §3):

- OpenTelemetry GenAI semconv, current names (``gen_ai.operation.name``,
  ``gen_ai.input.messages``, ``gen_ai.tool.call.arguments`` ...) and deprecated
  ones (``gen_ai.system``, ``gen_ai.usage.prompt_tokens``), plus the v1.26-v1.36
  message events;
- OpenLLMetry / Traceloop indexed attributes (``gen_ai.prompt.0.role``,
  ``llm.request.type``, ``traceloop.span.kind``);
- OpenInference (``openinference.span.kind``, ``llm.input_messages.0.message.role``,
  ``input.value``);
- extras met in real files: any-agent (``gen_ai.tool.args``, ``gen_ai.output``),
  pydantic-ai (``tool_arguments``, ``tool_response``, ``final_result``).

Field names of the result are docs/format.md's. Attributes used for a semantic
field are removed from the leftovers; everything else is kept for display.
Helpers: ``otel_flat`` (indexed families, stringly numbers), ``otel_messages``
(message shapes -> tracetui messages).

Judgement calls (so two instrumentations of the same run compare equal):
finish reasons are mapped to the GenAI values (``tool_calls`` -> ``tool_call``);
``llm.invocation_parameters`` loses the per-response keys OpenInference copies
into it (``id``, ``created_at``, ...); several assistant output messages of one
call are merged (Koog splits parallel tool calls over completions); a content
string that is a JSON list of OpenAI tool calls becomes ``tool_calls``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.model import SpanKind
from tracetui.core.readers.otel_flat import as_int as _int
from tracetui.core.readers.otel_flat import as_number as _num
from tracetui.core.readers.otel_flat import indexed_families
from tracetui.core.readers.otel_messages import (
    first_finish_reason,
    merge_output,
    messages_from_events,
    normalize_finish_reason,
    normalize_message,
    normalize_messages,
    tool_call,
)

__all__ = ["VOLATILE_ONLY_ATTRIBUTES", "classify", "indexed_families", "key_fields_from_attributes",
           "span_fields_from_attributes"]

_LLM, _TOOL, _RET, _AGENT = SpanKind.LLM, SpanKind.TOOL, SpanKind.RETRIEVAL, SpanKind.AGENT
_OTHER, _DECISION, _MEMORY = SpanKind.OTHER, SpanKind.DECISION, SpanKind.MEMORY

_OPERATIONS: dict[str, SpanKind] = {
    "chat": _LLM, "text_completion": _LLM, "generate_content": _LLM, "completion": _LLM,
    "call_llm": _LLM, "llm_request": _LLM,  # custom values of any-agent and OpenLLMetry
    "execute_tool": _TOOL,
    "invoke_agent": _AGENT, "create_agent": _AGENT, "invoke_workflow": _AGENT,
    "retrieval": _RET, "embeddings": _OTHER, "plan": _DECISION,
}
"""``gen_ai.operation.name`` values (semconv registry; ``*_memory*`` is memory)."""

_OPENINFERENCE: dict[str, SpanKind] = {
    "llm": _LLM, "tool": _TOOL, "retriever": _RET, "agent": _AGENT, "chain": _OTHER,
    "embedding": _OTHER, "reranker": _OTHER, "guardrail": _OTHER, "evaluator": _OTHER, "prompt": _OTHER,
}
_LLM_REQUEST_TYPE = {"chat": _LLM, "completion": _LLM, "embedding": _OTHER, "rerank": _OTHER}
_TRACELOOP = {"workflow": _AGENT, "agent": _AGENT, "tool": _TOOL, "task": _OTHER}

_LLM_MARKERS = ("gen_ai.input.messages", "gen_ai.output.messages", "llm.model_name")
_LLM_FAMILY_MARKERS = ("gen_ai.prompt", "gen_ai.completion", "llm.input_messages", "llm.output_messages")

_PROVIDER_RENAMES = {
    "vertex_ai": "gcp.vertex_ai", "gemini": "gcp.gemini", "az.ai.openai": "azure.ai.openai",
    "az.ai.inference": "azure.ai.inference", "xai": "x_ai",
}
"""Deprecated ``gen_ai.system`` values renamed in ``gen_ai.provider.name`` (formats.md §1.5)."""

_PARAM_ALIASES = {
    "gen_ai.openai.request.seed": "seed", "gen_ai.output.type": "output_type",
    "llm.top_k": "top_k", "llm.frequency_penalty": "frequency_penalty",
    "llm.presence_penalty": "presence_penalty", "llm.chat.stop_sequences": "stop_sequences",
}
_NOT_PARAMS = frozenset({"gen_ai.request.model", "gen_ai.request.stream"})
_VOLATILE_INVOCATION_KEYS = frozenset(
    {"id", "created_at", "completed_at", "previous_response_id", "object", "status", "usage", "output", "error",
     "incomplete_details", "billing", "model", "stream", "user"})
"""Keys OpenInference's openai-agents instrumentation copies from the *response*
into ``llm.invocation_parameters``; per call, so never compared (``completed_at``: the
Responses API's completion time; ``previous_response_id``: the id of the previous response)."""

_USAGE = (
    ("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")),
    ("output_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion")),
    ("cache_read_input_tokens", ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                                 "llm.token_count.prompt_details.cache_read")),
    ("cache_creation_input_tokens", ("gen_ai.usage.cache_creation.input_tokens",
                                     "gen_ai.usage.cache_creation_input_tokens",
                                     "llm.token_count.prompt_details.cache_write")),
    ("reasoning_output_tokens", ("gen_ai.usage.reasoning.output_tokens",
                                 "llm.token_count.completion_details.reasoning")),
)

class _Attrs:
    """Attribute look-ups that remember which keys a semantic field used."""

    __slots__ = ("attrs", "families", "used")

    def __init__(self, attrs: Mapping[str, Any]) -> None:
        self.attrs = attrs
        self.families = indexed_families(attrs)
        self.used: set[str] = set()

    def first(self, *keys: str) -> Any:
        """Value of the first key present with a non-empty value (marked used), else None."""
        for k in keys:
            v = self.attrs.get(k)
            if v is not None and v != "":
                self.used.add(k)
                return v
        return None

    def family(self, prefix: str) -> list[Any] | None:
        """The un-flattened family (marked used), or a structured list stored under ``prefix``."""
        got = self.families.get(prefix)
        if got is not None:
            self.used.update(got[1])
            return got[0]
        v = parse_json_string(self.attrs.get(prefix))
        if isinstance(v, list):
            self.used.add(prefix)
            return v
        return None

    def has(self, *keys: str) -> bool:
        return any(self.attrs.get(k) not in (None, "") for k in keys)


def _op_kind(op: Any) -> SpanKind | None:
    if not isinstance(op, str) or not op:
        return None
    op = op.lower()
    if "_memory" in op:
        return _MEMORY
    return _OPERATIONS.get(op)


def classify(name: str, attrs: Mapping[str, Any], families: Mapping[str, Any] | None = None) -> SpanKind:
    """The span kind: ``gen_ai.operation.name``, then ``openinference.span.kind``,
    ``llm.request.type``, ``traceloop.span.kind``, then tell-tale attributes
    (a tool name -> tool, messages -> llm, an agent name -> agent), then the span
    name's first word (``execute_tool x`` -> tool), else ``other``."""
    kind = _op_kind(attrs.get("gen_ai.operation.name"))
    if kind is not None:
        return kind
    for key, table in (("openinference.span.kind", _OPENINFERENCE), ("llm.request.type", _LLM_REQUEST_TYPE),
                       ("traceloop.span.kind", _TRACELOOP)):
        v = attrs.get(key)
        if isinstance(v, str) and v.lower() in table:
            return table[v.lower()]
    fams = families if families is not None else indexed_families(attrs)
    if attrs.get("gen_ai.tool.name") or attrs.get("tool.name"):
        return _TOOL
    if any(attrs.get(k) for k in _LLM_MARKERS) or any(p in fams for p in _LLM_FAMILY_MARKERS):
        return _LLM
    if attrs.get("gen_ai.agent.name") or attrs.get("agent.name"):
        return _AGENT
    if attrs.get("gen_ai.data_source.id") or "retrieval.documents" in fams:
        return _RET
    word = name.split(" ", 1)[0].lower() if isinstance(name, str) else ""
    return _op_kind(word) or _OTHER


def _name_tail(name: str, *ops: str) -> str | None:
    """``"execute_tool get_order"`` -> ``"get_order"`` when the first word is one of ``ops``."""
    if isinstance(name, str) and " " in name:
        head, tail = name.split(" ", 1)
        if head in ops and tail.strip():
            return tail.strip()
    return None


def _system_message(value: Any) -> dict[str, Any] | None:
    """``gen_ai.system_instructions`` (parts list, JSON string of one, or text) as a system message."""
    value = parse_json_string(value)
    if value is None or value == "":
        return None
    msgs = normalize_message({"role": "system", "parts": value} if isinstance(value, list) else
                             {"role": "system", "content": value}, "system")
    return msgs[0] if msgs else None


def _input_messages(a: _Attrs, ev_in: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    raw = a.first("gen_ai.input.messages")
    msgs = normalize_messages(raw)
    if msgs is None and isinstance(raw, str):
        a.used.discard("gen_ai.input.messages")  # unreadable (cut by an exporter?): kept for triage to judge
    if msgs is None:
        for prefix in ("gen_ai.prompt", "llm.input_messages"):
            fam = a.family(prefix)
            if fam is not None:
                msgs = [m for item in fam for m in normalize_message(item)]
                break
    if msgs is None:
        fam = a.family("llm.prompts")
        if fam is not None:
            msgs = [m for item in fam for m in normalize_message(
                item.get("prompt", {}).get("text") if isinstance(item, dict) else item)]
    if msgs is None and ev_in:
        msgs = ev_in
    system = _system_message(a.first("gen_ai.system_instructions"))
    if system is not None:
        msgs = msgs or []
        if not (msgs and msgs[0].get("role") == "system" and msgs[0].get("content") == system.get("content")):
            msgs = [system, *msgs]
    return msgs


def _any_agent_output(value: Any) -> dict[str, Any]:
    """any-agent's ``gen_ai.output`` on an LLM span: a JSON list of
    ``{"tool.name", "tool.args"}`` (tool calls) or the answer text."""
    parsed = parse_json_string(value)
    if isinstance(parsed, list) and parsed and all(isinstance(x, dict) and "tool.name" in x for x in parsed):
        calls = [c for c in (tool_call(x) for x in parsed) if c is not None]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    if isinstance(value, str):
        return {"role": "assistant", "content": value}
    msgs = normalize_message(value, "assistant")
    return msgs[0] if msgs else {"role": "assistant", "content": None}


_NONE = object()  # "no such attribute" (None is a value parse_json_string may return)


def _tool_name(a: _Attrs, name: str) -> str | None:
    tname = a.first("gen_ai.tool.name", "tool.name", "traceloop.entity.name") or _name_tail(name, "execute_tool")
    return None if tname is None else str(tname)


def _tool_args(a: _Attrs) -> Any:
    args = a.first("gen_ai.tool.call.arguments", "gen_ai.tool.args", "tool_arguments", "input.value",
                   "traceloop.entity.input")
    return _NONE if args is None else parse_json_string(args)


def _llm_key(a: _Attrs) -> dict[str, Any]:
    d: dict[str, Any] = {}
    model = a.first("gen_ai.request.model", "llm.request.model_name", "llm.model_name", "gen_ai.response.model")
    if model is not None:
        d["model"] = str(model)
    return d


def _retrieval_key(a: _Attrs, name: str) -> dict[str, Any]:
    d: dict[str, Any] = {}
    index = a.first("gen_ai.data_source.id") or _name_tail(name, "retrieval")
    if index is not None:
        d["index"] = str(index)
    query = a.first("gen_ai.retrieval.query.text", "input.value")
    if query is not None:
        d["query"] = parse_json_string(query)
    return d


def _llm(a: _Attrs, events: list[dict[str, Any]]) -> dict[str, Any]:
    d = _llm_key(a)
    provider = a.first("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
    if provider is not None:
        p = str(provider).lower()
        d["provider"] = _PROVIDER_RENAMES.get(p, p)
    prompt_id = a.first("langfuse.observation.prompt.name")
    if prompt_id is not None:
        d["prompt_id"] = str(prompt_id)
    version = a.first("llm.prompt_template.version", "langfuse.observation.prompt.version")
    if version is not None:
        d["prompt_version"] = str(version)
    params: dict[str, Any] = {}
    inv = parse_json_string(a.attrs.get("llm.invocation_parameters"))
    if isinstance(inv, dict):
        a.used.add("llm.invocation_parameters")
        params.update({k: v for k, v in inv.items() if k not in _VOLATILE_INVOCATION_KEYS and v is not None})
    for key, value in a.attrs.items():
        if not isinstance(key, str):
            continue
        if key.startswith("gen_ai.request.") and key not in _NOT_PARAMS:
            pname = key[15:].replace(".", "_")
        elif key in _PARAM_ALIASES:
            pname = _PARAM_ALIASES[key]
        else:
            continue
        a.used.add(key)
        if value is not None and value != "":
            params[pname] = _num(value)
    if params:
        d["params"] = params
    tools = parse_json_string(a.attrs.get("gen_ai.tool.definitions"))
    if not isinstance(tools, list):
        fam = a.families.get("llm.tools") or a.families.get("llm.request.functions")
        tools = [parse_json_string(t) for t in fam[0]] if fam else None
    if tools:
        try:
            d["tool_schemas_hash"] = args_hash(tools)
        except TypeError:
            pass
    ev_in, ev_out, ev_finish = messages_from_events(events) if events else ([], [], None)
    msgs = _input_messages(a, ev_in)
    if msgs is not None:
        d["messages"] = msgs
    choices = _int(params.get("choice_count"))
    raw_out = a.first("gen_ai.output.messages")
    finish = None
    out_msgs = normalize_messages(raw_out, "assistant") if raw_out is not None else None
    if out_msgs is None and isinstance(raw_out, str):
        a.used.discard("gen_ai.output.messages")  # unreadable (cut by an exporter?): kept for triage to judge
    if out_msgs is not None:
        finish = first_finish_reason(raw_out)
    else:
        for prefix in ("gen_ai.completion", "llm.output_messages", "llm.choices"):
            fam = a.family(prefix)
            if fam is not None:
                if prefix == "llm.choices":
                    fam = [item.get("completion", {}).get("text") if isinstance(item, dict) else item for item in fam]
                out_msgs = [m for item in fam for m in normalize_message(item, "assistant")]
                finish = first_finish_reason(fam)
                break
    if out_msgs is None and ev_out:
        out_msgs, finish = ev_out, ev_finish
    output = merge_output(out_msgs, choices) if out_msgs else None
    if output is None:
        raw = a.first("gen_ai.output")
        if raw is not None:
            output = _any_agent_output(raw)
    if output is not None:
        d["output"] = output
    finish = finish or normalize_finish_reason(a.first("gen_ai.response.finish_reasons", "llm.finish_reason"))
    if finish is not None:
        d["finish_reason"] = finish
    usage = {}
    for field, keys in _USAGE:
        n = _int(a.first(*keys))
        if n is not None:
            usage[field] = n
    if usage:
        d["usage"] = usage
    rid = a.first("gen_ai.response.id")
    if rid is not None:
        d["response_id"] = str(rid)
    return d


def _tool(a: _Attrs, name: str) -> dict[str, Any]:
    d: dict[str, Any] = {}
    tname = _tool_name(a, name)
    if tname is not None:
        d["tool_name"] = tname
    version = a.first("gen_ai.tool.version", "tool.version")
    if version is not None:
        d["tool_version"] = str(version)
    cid = a.first("gen_ai.tool.call.id", "tool_call.id", "tool.id")
    if cid is not None:
        d["call_id"] = str(cid)
    args = _tool_args(a)
    if args is not _NONE:
        d["arguments"] = args
        try:
            d["args_hash"] = args_hash(d["arguments"])
        except TypeError:
            pass
    out_keys = ("gen_ai.tool.call.result", "gen_ai.output", "tool_response", "output.value", "traceloop.entity.output")
    out = a.first(*out_keys)
    if out is not None:
        d["output"] = parse_json_string(out)
    else:
        empty = next((k for k in out_keys if a.attrs.get(k) == ""), None)
        if empty is not None:  # a tool that returned nothing: an output, not a missing one
            a.used.add(empty)
            d["output"] = ""
    return d


def _document(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None if item is None else {"id": None, "score": None, "text": str(item)}
    doc = item.get("document") if isinstance(item.get("document"), dict) else item
    text = doc.get("content", doc.get("text"))
    did = doc.get("id")
    return {"id": None if did is None else str(did), "score": _num(doc.get("score")),
            "text": text if text is None or isinstance(text, str) else str(text)}


def _retrieval(a: _Attrs, name: str) -> dict[str, Any]:
    d = _retrieval_key(a, name)
    top_k = _int(a.first("gen_ai.request.top_k", "retrieval.top_k"))
    if top_k is not None:
        d["top_k"] = top_k
    docs = parse_json_string(a.first("gen_ai.retrieval.documents"))
    if not isinstance(docs, list):
        docs = a.family("retrieval.documents")
    if isinstance(docs, list):
        d["documents"] = [x for x in (_document(i) for i in docs) if x is not None]
    return d


def _io(a: _Attrs) -> tuple[Any, Any]:
    """Generic input and output of agent / chain / other spans."""
    inp = a.first("input.value", "traceloop.entity.input")
    if inp is not None:
        inp = parse_json_string(inp)
    elif a.has("gen_ai.input.messages", "gen_ai.system_instructions"):
        inp = _input_messages(a, [])
    elif a.has("pydantic_ai.all_messages"):
        # pydantic-ai's agent run span: the whole conversation; the run's input is what came before
        # the model's first answer (instructions and the user prompt).
        msgs = normalize_messages(a.first("pydantic_ai.all_messages")) or []
        head = []
        for m in msgs:
            if m.get("role") not in ("system", "user"):
                break
            head.append(m)
        inp = head or None
    out = a.first("output.value", "traceloop.entity.output", "final_result", "gen_ai.output")
    if out is not None:
        out = parse_json_string(out)
    elif a.has("gen_ai.output.messages"):
        out = normalize_messages(a.first("gen_ai.output.messages"), "assistant")
    return inp, out


def _memory(a: _Attrs, op: str) -> dict[str, Any]:
    d: dict[str, Any] = {"operation": op[: op.index("_memory")] + ("_store" if op.endswith("_store") else "")}
    key = a.first("gen_ai.memory.id", "gen_ai.memory.key")
    if key is not None:
        d["key"] = str(key)
    query = a.first("gen_ai.memory.query.text", "gen_ai.memory.query")
    if query is not None:
        d["query"] = parse_json_string(query)
    value = a.first("gen_ai.memory.content", "gen_ai.memory.value", "output.value")
    if value is not None:
        d["value"] = parse_json_string(value)
    return d


def _error_type(a: _Attrs, events: Iterable[dict[str, Any]], status_error: bool | None) -> str | None:
    err = a.first("error.type")
    if err is not None:
        return str(err)
    if status_error is False:
        return None
    for ev in events:
        if ev.get("name") == "exception" and isinstance(ev.get("attributes"), dict):
            t = ev["attributes"].get("exception.type")
            if t:
                return str(t)
    return None


OPERATION_DETAILS = "gen_ai.client.inference.operation.details"
"""The GenAI event (semconv 1.37+) that carries an inference's content and details as its attributes,
with the span's attribute names (string JSON or structured values)."""


def _merged(attrs: Any, events: Iterable[Any]) -> tuple[Mapping[str, Any], list[dict[str, Any]]]:
    if type(attrs) is not dict and not isinstance(attrs, Mapping):
        attrs = {}
    events = [e for e in events if isinstance(e, dict)] if events else []
    for ev in events:
        if ev.get("name") == OPERATION_DETAILS and isinstance(ev.get("attributes"), Mapping):
            # GenAI semconv 1.37+: content (gen_ai.input.messages, gen_ai.output.messages,
            # gen_ai.system_instructions...) on this event instead of the span; the span's own win.
            extra = {k: v for k, v in ev["attributes"].items() if k not in attrs}
            if extra:
                attrs = {**attrs, **extra}
    return attrs, events


VOLATILE_ONLY_ATTRIBUTES = frozenset({
    "gen_ai.response.id", "gen_ai.tool.call.id", "tool_call.id", "tool.id", *(k for _, keys in _USAGE for k in keys)})
"""Attributes the mapping reads only into volatile fields (``usage``, ``response_id``, ``call_id``):
two spans whose other attributes, name, events and status agree map to the same compared fields."""


def key_fields_from_attributes(
    name: str, attrs: Mapping[str, Any], events: Iterable[dict[str, Any]] = (), *, status_error: bool | None = None,
) -> tuple[SpanKind, str | None, dict[str, Any], bool]:
    """The cheap half of ``span_fields_from_attributes``: what alignment needs, payloads left alone.

    Returns:
        ``(kind, error_type, key_data, maybe_missing)``: kind and error type exactly as
        ``span_fields_from_attributes`` returns them; ``key_data`` the fields of the kind's
        section a span key reads (tool: ``tool_name``, ``arguments``; llm: ``model``;
        retrieval: ``index``, ``query``; others: none), equal to that section's; and
        ``maybe_missing``, False only when the section surely holds captured content
        (``readers.tree.content_issues``: a tool's arguments, an llm's first input message with content).
    """
    attrs, events = _merged(attrs, events)
    a = _Attrs(attrs)
    kind = classify(name, attrs, a.families)
    part: dict[str, Any] = {}
    miss = kind is _LLM or kind is _TOOL
    if kind is _TOOL:
        tname = _tool_name(a, name)
        if tname is not None:
            part["tool_name"] = tname
        args = _tool_args(a)
        if args is not _NONE:
            part["arguments"] = args
            miss = args is None
    elif kind is _LLM:
        part = _llm_key(a)
        msgs = parse_json_string(a.first("gen_ai.input.messages"))
        if type(msgs) is list and msgs:
            first = normalize_message(msgs[0])
            miss = not (first and first[0].get("content"))
    elif kind is _RET:
        part = _retrieval_key(a, name)
    return kind, _error_type(a, events, status_error), part, miss



def span_fields_from_attributes(
    name: str,
    attrs: Mapping[str, Any],
    events: Iterable[dict[str, Any]] = (),
    *,
    status_error: bool | None = None,
) -> tuple[SpanKind, dict[str, Any], dict[str, Any], str | None]:
    """Map a span's decoded OTel attributes to tracetui fields.

    Args:
        name: The span name (used when attributes do not say the kind:
            ``execute_tool get_order`` is a tool span for tool ``get_order``).
        attrs: Flat, decoded attributes (``{"gen_ai.request.model": "gpt-4o", ...}``);
            values may be native (OTLP AnyValue decoded) or strings (Langfuse
            stores numbers and lists as strings: both are accepted).
        events: The span's events as ``{"name": str, "attributes": dict}``; message
            events fill messages/output when attributes carry none, and an
            ``exception`` event gives ``exception.type``.
        status_error: Whether the span's status is ERROR; when False, exception
            events do not set the error type (caught exceptions). None: unknown.

    Returns:
        ``(kind, data, leftover_attributes, error_type)``: ``data`` is the
        kind's section as docs/format.md defines it (``llm``: model, provider,
        params, messages, output, finish_reason, usage, response_id ...;
        ``tool``: tool_name, call_id, arguments, args_hash, output; ...);
        ``leftover_attributes`` are the attributes no field used; ``error_type``
        comes from ``error.type`` or an exception event, else None.
        Never raises on odd values: what cannot be mapped stays in the leftovers.
    """
    attrs, events = _merged(attrs, events)
    a = _Attrs(attrs)
    kind = classify(name, attrs, a.families)
    if kind is _LLM:
        data = _llm(a, events)
    elif kind is _TOOL:
        data = _tool(a, name)
    elif kind is _RET:
        data = _retrieval(a, name)
    elif kind is _MEMORY:
        op = attrs.get("gen_ai.operation.name")
        op = op.lower() if isinstance(op, str) and "_memory" in op.lower() else str(name).split(" ", 1)[0].lower()
        data = _memory(a, op) if "_memory" in op else {}
    else:
        inp, out = _io(a)
        data = {}
        if kind is _AGENT:
            agent = a.first("gen_ai.agent.name", "agent.name", "agent_name") or \
                _name_tail(name, "invoke_agent", "create_agent")
            if agent is not None:
                data["agent_name"] = str(agent)
        if kind is _DECISION:
            if out is not None:
                data["value"] = out
        else:
            if inp is not None:
                data["input"] = inp
            if out is not None:
                data["output"] = out
    error_type = _error_type(a, events, status_error)
    leftover = {k: v for k, v in attrs.items() if k not in a.used} if a.used else dict(attrs)
    return kind, data, leftover, error_type
