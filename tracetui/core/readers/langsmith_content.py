"""What a LangSmith run holds, as span fields: its messages in any shape LangChain or the SDK writes
them, an ``llm`` run's call (model, parameters, messages, output, usage), a ``tool`` run's call and
a ``retriever`` run's documents. ``readers.langsmith`` reads the runs and builds the trees.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.model import Status
from tracetui.core.readers.openai_shapes import (
    choice_output,
    response_items,
    responses_output,
    usage_from,
)
from tracetui.core.readers.otel_messages import (
    merge_output,
    normalize_finish_reason,
    normalize_message,
    normalize_role,
)

__all__ = ["as_dict", "as_str", "lc_message", "llm_data", "retrieval_data", "tool_data", "unwrap"]

_NOT_PARAMS = frozenset({
    "messages", "model", "model_name", "tools", "functions", "stream", "stream_options",
    "extra_headers", "extra_query", "extra_body", "timeout", "_type", "system", "input",
    "instructions", "prompt", "prompts", "api_key", "openai_api_key", "base_url",
})
"""Request keys that are not call parameters (content, transport, tool schemas)."""
_LS_PARAMS = (("ls_temperature", "temperature"), ("ls_max_tokens", "max_tokens"), ("ls_stop", "stop"))
_LC_ROLES = {
    "HumanMessage": "user", "HumanMessageChunk": "user", "AIMessage": "assistant",
    "AIMessageChunk": "assistant", "SystemMessage": "system", "SystemMessageChunk": "system",
    "ToolMessage": "tool", "ToolMessageChunk": "tool", "FunctionMessage": "tool",
    "FunctionMessageChunk": "tool",
}
_SIMPLE_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
_LC_TYPES = frozenset({"human", "ai", "system", "tool", "function", "chat", "developer",
                       "AIMessageChunk", "HumanMessageChunk"})


def as_str(v: Any) -> str | None:
    """``v`` as a string (None stays None)."""
    return None if v is None else v if type(v) is str else str(v)


def as_dict(v: Any) -> dict[str, Any]:
    """``v`` when it is a dict, else an empty one."""
    return v if type(v) is dict else {}


def unwrap(v: Any, key: str) -> Any:
    """``{"input": x}`` -> ``x`` (LangChain wraps single values so); anything else as is."""
    if type(v) is dict and len(v) == 1 and key in v:
        return v[key]
    return v


# -- messages ------------------------------------------------------------------------

def lc_message(m: Any, default_role: str = "user") -> list[dict[str, Any]]:
    """One message in any shape a LangSmith run holds, as tracetui messages.

    LangChain-serialised (``{lc: 1, type: "constructor", id: [..., "HumanMessage"],
    kwargs: {content, tool_calls, tool_call_id ...}}``), ``message_to_dict``
    (``{type: "human", data: {...}}``), a message's own dict (``{type: "ai",
    content, tool_calls}``), or anything ``otel_messages.normalize_message`` reads
    (OpenAI, Anthropic, plain strings).
    """
    if type(m) is not dict:
        return normalize_message(m, default_role)
    if len(m) == 2:  # fast path: the plain {"role", "content": "text"} of most OpenAI-style inputs
        role, content = m.get("role"), m.get("content")
        if type(content) is str and type(role) is str and content[:1] != "[":
            return [{"role": _SIMPLE_ROLES.get(role) or normalize_role(role, default_role), "content": content}]
    role = None
    fields: dict[str, Any] | None = None
    if m.get("lc") is not None and type(m.get("kwargs")) is dict:
        ident = m.get("id")
        cls = ident[-1] if type(ident) is list and ident else None
        fields = m["kwargs"]
        role = _LC_ROLES.get(cls) if isinstance(cls, str) else None
        if role is None:
            role = normalize_role(fields.get("role", fields.get("type")), default_role)
    elif "role" not in m and type(m.get("data")) is dict and isinstance(m.get("type"), str):
        fields = m["data"]
        role = normalize_role(fields.get("role", m["type"].removesuffix("MessageChunk").lower()), default_role)
    elif "role" not in m and m.get("type") in _LC_TYPES:
        fields = m
        role = normalize_role(m.get("role", m["type"].removesuffix("MessageChunk").lower()), default_role)
    if fields is None:
        return normalize_message(m, default_role)
    msg: dict[str, Any] = {"role": role, "content": fields.get("content")}
    calls = fields.get("tool_calls")
    if not calls:
        calls = as_dict(fields.get("additional_kwargs")).get("tool_calls")
    if calls:
        msg["tool_calls"] = calls
        if msg["content"] == "":
            msg["content"] = None  # LangChain writes "" where OpenAI writes null beside tool calls
        content = msg["content"]
        if type(content) is list:  # Anthropic: tool_use blocks repeat the tool_calls
            msg["content"] = [p for p in content
                              if not (type(p) is dict and p.get("type") in ("tool_use", "tool_call", "function_call"))]
    fc = as_dict(fields.get("additional_kwargs")).get("function_call")
    if fc and not calls:
        msg["function_call"] = fc
    if fields.get("tool_call_id") is not None:
        msg["tool_call_id"] = fields["tool_call_id"]
    return normalize_message(msg, role or default_role)


def _lc_messages(items: Iterable[Any], default_role: str = "user") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in items:
        out.extend(lc_message(m, default_role))
    return out


# -- one run's content ---------------------------------------------------------------

def llm_data(run: dict[str, Any], inputs: dict[str, Any], outputs: dict[str, Any], extra: dict[str, Any],
             attrs: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The fields of an ``llm`` run's span: ``model``, ``provider``, ``params``, ``messages``,
    ``tool_schemas_hash``, ``output``, ``finish_reason``, ``usage``, ``response_id`` (those found);
    the response's model goes to ``attrs["response_model"]``.

    ``inputs``, ``outputs`` and ``extra`` are the run's (dicts; ``{}`` when absent). Returns the
    data and the warnings met: ``(path below the run, message)`` pairs, e.g. a batch of message
    lists of which the first is kept.
    """
    data: dict[str, Any] = {}
    notes: list[tuple[str, str]] = []
    ip = as_dict(extra.get("invocation_params"))
    md = as_dict(extra.get("metadata"))
    model = inputs.get("model") or ip.get("model") or ip.get("model_name") or md.get("ls_model_name")
    if model is not None:
        data["model"] = as_str(model)
    if md.get("ls_provider") is not None:
        data["provider"] = as_str(md["ls_provider"])
    params: dict[str, Any] = {}
    for src in (ip, inputs if "messages" in inputs or "input" in inputs or "prompt" in inputs else {}):
        for k, v in src.items():
            if v is not None and k not in _NOT_PARAMS and not k.startswith("ls_"):
                params[k] = v
    for ls_key, key in _LS_PARAMS:
        if md.get(ls_key) is not None and key not in params:
            params[key] = md[ls_key]
    tools = inputs.get("tools") or ip.get("tools") or inputs.get("functions") or ip.get("functions")
    messages = _llm_messages(inputs, notes)
    if params:
        data["params"] = params
    if messages is not None:
        data["messages"] = messages
    if tools:
        try:
            data["tool_schemas_hash"] = args_hash(tools)
        except TypeError:
            pass
    _llm_output(outputs, data, attrs)
    usage = data.pop("_usage", None) or usage_from(
        {"prompt_tokens": run.get("prompt_tokens"), "completion_tokens": run.get("completion_tokens")})
    if usage:
        data["usage"] = usage
    return data, notes

def _llm_messages(inputs: dict[str, Any], notes: list[tuple[str, str]]) -> list[dict[str, Any]] | None:
    raw = inputs.get("messages")
    messages: list[dict[str, Any]] | None = None
    if type(raw) is list:
        if raw and all(type(x) is list for x in raw):
            if len(raw) > 1:
                notes.append((".inputs.messages",
                              f"batch of {len(raw)} message lists in one llm run; the first is kept"))
            raw = raw[0]
        messages = _lc_messages(raw)
    elif type(inputs.get("prompts")) is list and inputs["prompts"]:
        prompts = inputs["prompts"]
        if len(prompts) > 1:
            notes.append((".inputs.prompts", f"batch of {len(prompts)} prompts in one llm run; the first is kept"))
        messages = normalize_message(prompts[0])
    elif "input" in inputs and isinstance(inputs["input"], (str, list)):  # Responses API
        inp: Any = inputs["input"]
        messages = normalize_message(inp) if type(inp) is str else response_items(inp)
    elif type(inputs.get("prompt")) is str:
        messages = normalize_message(inputs["prompt"])
    system = inputs.get("system", inputs.get("instructions"))
    if system and messages is not None:
        messages = normalize_message({"role": "system", "content": system}, "system") + messages
    return messages

def _llm_output(outputs: dict[str, Any], data: dict[str, Any], attrs: dict[str, Any]) -> None:
    out_msgs: list[dict[str, Any]] = []
    finish: Any = None
    usage_cands: list[Any] = [outputs.get("usage_metadata"), outputs.get("usage")]
    response_model = None
    choices = outputs.get("choices")
    gens = outputs.get("generations")
    if type(choices) is list and choices:  # OpenAI chat completion (or completion)
        out, finish = choice_output(outputs)
        out_msgs = [out] if out is not None else []
        if outputs.get("id") is not None:
            data["response_id"] = as_str(outputs["id"])
        response_model = outputs.get("model")
    elif type(gens) is list and gens:  # LangChain LLMResult
        g0 = gens[0]
        if type(g0) is list:
            g0 = g0[0] if g0 else None
        g0 = as_dict(g0)
        msg = g0.get("message")
        if msg is not None:
            out_msgs = lc_message(msg, "assistant")
            kw = as_dict(msg.get("kwargs")) if type(msg) is dict and "kwargs" in msg else as_dict(msg)
            rm = as_dict(kw.get("response_metadata"))
            finish = rm.get("finish_reason", rm.get("stop_reason"))
            usage_cands.append(kw.get("usage_metadata"))
            usage_cands.append(rm.get("token_usage", rm.get("usage")))
            response_model = rm.get("model_name", rm.get("model"))
            if rm.get("id") is not None:
                data["response_id"] = as_str(rm["id"])
        elif g0.get("text") is not None:
            out_msgs = [{"role": "assistant", "content": as_str(g0["text"])}]
        gi = as_dict(g0.get("generation_info"))
        finish = gi.get("finish_reason", finish)
        lo = as_dict(outputs.get("llm_output"))
        usage_cands.insert(0, lo.get("token_usage", lo.get("usage")))
        response_model = lo.get("model_name", response_model)
    elif type(outputs.get("output")) is list and outputs.get("object") == "response" or \
            (type(outputs.get("output")) is list and outputs.get("id") is not None):  # Responses API
        out, finish = responses_output(outputs)
        out_msgs = [out] if out is not None else []
        if outputs.get("id") is not None:
            data["response_id"] = as_str(outputs["id"])
        response_model = outputs.get("model")
    elif "content" in outputs and ("role" in outputs or outputs.get("type") == "message"):  # Anthropic message
        out_msgs = normalize_message(outputs, "assistant")
        finish = outputs.get("stop_reason")
        if outputs.get("id") is not None:
            data["response_id"] = as_str(outputs["id"])
        response_model = outputs.get("model")
    elif "output" in outputs:  # a traceable function's return value
        out_msgs = lc_message(outputs["output"], "assistant") if outputs["output"] is not None else []
    out = merge_output(out_msgs)
    if out is not None:
        data["output"] = out
    fr = normalize_finish_reason(finish)
    if fr is not None:
        data["finish_reason"] = fr
    if response_model is not None:
        attrs["response_model"] = response_model
    usage = usage_from(*usage_cands)
    if usage:
        data["_usage"] = usage


def tool_data(name: str, inputs: Any, outputs: Any) -> tuple[dict[str, Any], Status | None]:
    """The fields of a ``tool`` run's span (``tool_name``, ``arguments``, ``args_hash``,
    ``call_id``, ``output``), and ``Status.ERROR`` when its output is a ToolMessage with status
    error (else None)."""
    data: dict[str, Any] = {"tool_name": name}
    status: Status | None = None
    if type(inputs) is dict and inputs:
        args = parse_json_string(inputs["input"]) if len(inputs) == 1 and "input" in inputs else inputs
        data["arguments"] = args
        try:
            data["args_hash"] = args_hash(args)
        except TypeError:
            pass
    elif inputs is not None and inputs != {}:
        data["arguments"] = parse_json_string(inputs)
        data["args_hash"] = args_hash(data["arguments"])
    if outputs is not None and outputs != {}:
        out = outputs["output"] if type(outputs) is dict and "output" in outputs else outputs
        if type(out) is dict:  # a serialised ToolMessage carries the call id and status
            kw = out.get("kwargs") if out.get("lc") is not None and type(out.get("kwargs")) is dict else \
                out if out.get("type") == "tool" and "tool_call_id" in out else None
            if kw is not None:
                if kw.get("tool_call_id") is not None:
                    data["call_id"] = as_str(kw["tool_call_id"])
                if kw.get("status") == "error":
                    status = Status.ERROR
                out = kw.get("content")
        data["output"] = out
    return data, status


def retrieval_data(inputs: Any, outputs: Any) -> dict[str, Any]:
    """The fields of a ``retriever`` run's span: ``query``, ``documents`` (``{id, score, text}``)."""
    data: dict[str, Any] = {}
    if type(inputs) is dict and "query" in inputs:
        data["query"] = inputs["query"]
    elif inputs is not None and inputs != {}:
        data["query"] = unwrap(inputs, "input")
    docs = outputs.get("documents") if type(outputs) is dict and "documents" in outputs else unwrap(outputs, "output")
    if type(docs) is list:
        out = []
        for d in docs:
            if type(d) is not dict:
                out.append({"text": as_str(d)})
                continue
            kw = d["kwargs"] if d.get("lc") is not None and type(d.get("kwargs")) is dict else d
            md = as_dict(kw.get("metadata"))
            doc: dict[str, Any] = {}
            did = kw.get("id", md.get("id"))
            if did is not None:
                doc["id"] = as_str(did)
            score = md.get("score", md.get("relevance_score"))
            if score is not None:
                doc["score"] = score
            doc["text"] = kw.get("page_content", kw.get("text"))
            out.append(doc)
        data["documents"] = out
    return data
