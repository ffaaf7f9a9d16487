"""The model APIs on the wire: which request is a model call, what it asked and what came back.

Pure functions over JSON bodies and SSE text (no httpx, no SDK): the transports
(``tracetui.integrations.transport``) record the wire request and response whole and derive from
them the semantic fields tracetui compares, in the readers' vocabulary (docs/format.md):
``model``, the rendered ``messages`` (``{"role", "content", "tool_calls": [{"id", "name",
"arguments"}], "tool_call_id"}``), ``params``, ``tool_schemas_hash``, the ``output`` message and a
normalised ``finish_reason`` (``tool_call``, ``stop``, ``length``). ``usage``, response ids,
fingerprints and timestamps are kept (in ``usage``, ``response_id`` and the wire response) and
never compared.

APIs, by request path:

=====================  ===========================  =====================================
``openai.chat``        ``POST .../chat/completions``  Chat Completions (SSE: ``data:`` chunks, ``[DONE]``)
``openai.responses``   ``POST .../responses``          Responses API (SSE: typed ``event:`` lines)
``anthropic.messages`` ``POST .../messages``           Anthropic Messages (SSE: typed events)
=====================  ===========================  =====================================
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracetui.core.canonical import canonical_json, parse_json_string
from tracetui.core.readers.otel_messages import normalize_finish_reason, normalize_message, normalize_messages

APIS = ("openai.chat", "openai.responses", "anthropic.messages")

_NOT_PARAMS = {
    "openai.chat": frozenset({"model", "messages", "tools", "functions"}),
    "openai.responses": frozenset({"model", "input", "instructions", "tools"}),
    "anthropic.messages": frozenset({"model", "messages", "system", "tools"}),
}
"""Request fields that are not params: they are the model, the messages or the tools."""


def api_of(method: str, path: str) -> str | None:
    """The model API a request speaks, from its method and URL path, or None (not a model call:
    ``/v1/models``, embeddings, files...)."""
    if method.upper() != "POST":
        return None
    p = path.rstrip("/")
    if p.endswith("/chat/completions"):
        return "openai.chat"
    if p.endswith("/responses"):
        return "openai.responses"
    if p.endswith("/messages") and not p.endswith("/batches/messages"):
        return "anthropic.messages"
    return None


@dataclass(slots=True)
class ModelRequest:
    """A model call as tracetui compares it.

    Attributes:
        api: One of ``APIS``.
        model: The model asked for.
        messages: The rendered messages, tracetui's shape (system prompt first).
        params: Every other request field but the tools (``temperature``, ``stream``, ...).
        tools_hash: 16 hex digits of SHA-256 over the canonical tool definitions, or None.
        system: The system prompt's text ('' when there is none).
        stream: Whether the response is an SSE stream.
        body: The request body as sent.
    """

    api: str
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    tools_hash: str | None
    system: str
    stream: bool
    body: dict[str, Any] = field(default_factory=dict)


class WireError(ValueError):
    """A request or response body that is not what its API sends (not JSON, not an object)."""


def parse_request(api: str, content: bytes) -> ModelRequest:
    """The semantic fields of a model request body.

    Raises:
        WireError: the body is not a JSON object.
    """
    try:
        body = orjson.loads(content or b"{}")
    except orjson.JSONDecodeError as exc:
        raise WireError(f"{api} request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise WireError(f"{api} request body is a JSON {type(body).__name__}, not an object")
    skip = _NOT_PARAMS[api]
    params = {k: v for k, v in body.items() if k not in skip}
    tools = body.get("tools") or body.get("functions")
    tools_hash = hashlib.sha256(canonical_json(tools)).hexdigest()[:16] if tools else None
    if api == "openai.chat":
        messages = normalize_messages(body.get("messages")) or []
    elif api == "openai.responses":
        messages = responses_input_messages(body.get("input"), body.get("instructions"))
    else:
        messages = anthropic_messages(body.get("messages"), body.get("system"))
    system = "\n".join(m["content"] for m in messages if m.get("role") == "system" and isinstance(m.get("content"), str))
    return ModelRequest(api, str(body.get("model") or ""), messages, params, tools_hash, system,
                        bool(body.get("stream")), body)


def responses_input_messages(items: Any, instructions: Any = None) -> list[dict[str, Any]]:
    """Responses API ``input`` (a string or a list of items) and ``instructions`` as tracetui
    messages: ``message`` items by role, ``function_call`` items as the assistant's tool calls
    (consecutive assistant items merged into one message, as Chat Completions has them),
    ``function_call_output`` items as tool messages; reasoning items dropped."""
    out: list[dict[str, Any]] = []
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    if isinstance(items, str):
        out.append({"role": "user", "content": items})
        return out
    if not isinstance(items, list):
        return out
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            call = {"id": _opt_str(item.get("call_id")), "name": _opt_str(item.get("name")),
                    "arguments": parse_json_string(item.get("arguments"))}
            last = out[-1] if out else None
            if last is not None and last.get("role") == "assistant" and "tool_call_id" not in last:
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            out.append({"role": "tool", "content": output if isinstance(output, str) or output is None
                        else orjson.dumps(output).decode(), "tool_call_id": _opt_str(item.get("call_id"))})
        elif kind in ("reasoning", "item_reference"):
            continue
        elif kind in (None, "message"):
            for m in normalize_message(item):
                last = out[-1] if out else None
                if (m.get("role") == "assistant" and last is not None and last.get("role") == "assistant"
                        and "tool_call_id" not in last and not last.get("tool_calls")):
                    last["content"] = _join(last.get("content"), m.get("content"))
                    if m.get("tool_calls"):
                        last["tool_calls"] = m["tool_calls"]
                else:
                    out.append(m)
        else:  # other item kinds (web search calls, computer calls...): kept by their type
            out.append({"role": "assistant", "content": orjson.dumps(item, option=orjson.OPT_SORT_KEYS).decode()})
    return out


def anthropic_messages(messages: Any, system: Any = None) -> list[dict[str, Any]]:
    """Anthropic ``messages`` and ``system`` (a string or text blocks) as tracetui messages."""
    out: list[dict[str, Any]] = []
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    elif isinstance(system, list):
        text = "\n".join(b.get("text", "") for b in system if isinstance(b, dict) and b.get("type") == "text")
        if text:
            out.append({"role": "system", "content": text})
    out.extend(normalize_messages(messages) or [])
    return out


# ---- responses -------------------------------------------------------------------------------

def sse_events(raw: bytes) -> list[dict[str, Any]]:
    """An SSE body as ``[{"event": name or None, "data": JSON value or text}]``, in order.

    Comment lines and ``id:``/``retry:`` fields are dropped; multi-line ``data`` is joined with
    newlines (the SSE rule); ``data`` holding JSON is parsed (so redaction walks its values), other
    text (``[DONE]``) kept as is.
    """
    events: list[dict[str, Any]] = []
    name: str | None = None
    data: list[str] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line:
            if data:
                events.append({"event": name, "data": _json_or_text("\n".join(data))})
            name, data = None, []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)
    if data:
        events.append({"event": name, "data": _json_or_text("\n".join(data))})
    return events


def sse_bytes(events: Iterable[Mapping[str, Any]]) -> bytes:
    """SSE text of ``events`` (``sse_events``' shape), as the server sent it."""
    parts: list[bytes] = []
    for e in events:
        if e.get("event"):
            parts.append(b"event: " + str(e["event"]).encode() + b"\n")
        data = e.get("data")
        text = data if isinstance(data, str) else orjson.dumps(data).decode()
        for line in text.split("\n"):
            parts.append(b"data: " + line.encode() + b"\n")
        parts.append(b"\n")
    return b"".join(parts)


def response_fields(api: str, status: int, content_type: str, raw: bytes) -> dict[str, Any]:
    """The span fields of a model response: ``output``, ``finish_reason``, ``usage``,
    ``response_id`` and ``wire_response`` (``{"status", "content_type", "body"}`` or
    ``{"status", "content_type", "events"}``, the body whole), plus ``error_type`` when the status
    is not 2xx (the call failed: a 429, a 500)."""
    wire: dict[str, Any] = {"status": status, "content_type": content_type}
    if "text/event-stream" in content_type:
        events = sse_events(raw)
        wire["events"] = events
        final = assemble_stream(api, events)
    else:
        final = _json_or_text(raw.decode("utf-8", "replace")) if raw else None
        wire["body"] = final
    fields: dict[str, Any] = {"wire_response": wire}
    if status >= 400 or not isinstance(final, dict):
        fields["output"] = None
        fields["error_type"] = f"HTTP {status}" if status >= 400 else "BadResponse"
        return fields
    fields.update(decode_final(api, final))
    return fields


def decode_final(api: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``output``, ``finish_reason``, ``usage``, ``response_id`` of a whole (non-streamed or
    assembled) response body."""
    out: dict[str, Any] = {}
    if api == "openai.chat":
        choices = body.get("choices") or []
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        msgs = normalize_message(first.get("message") or {}, "assistant")
        out["output"] = msgs[-1] if msgs else None
        out["finish_reason"] = normalize_finish_reason(first.get("finish_reason"))
        if len(choices) > 1:
            out["choices"] = len(choices)
    elif api == "openai.responses":
        items = body.get("output") or []
        msgs = responses_input_messages([i for i in items if isinstance(i, dict)])
        msg = msgs[-1] if msgs else {"role": "assistant", "content": None}
        out["output"] = msg
        incomplete = (body.get("incomplete_details") or {}).get("reason") if isinstance(
            body.get("incomplete_details"), dict) else None
        if msg.get("tool_calls"):
            out["finish_reason"] = "tool_call"
        elif body.get("status") == "incomplete":
            out["finish_reason"] = normalize_finish_reason("length" if incomplete == "max_output_tokens" else incomplete)
        else:
            out["finish_reason"] = "stop"
    else:
        msgs = normalize_message({"role": "assistant", "content": body.get("content") or []}, "assistant")
        out["output"] = msgs[-1] if msgs else None
        out["finish_reason"] = normalize_finish_reason(body.get("stop_reason"))
    if isinstance(body.get("usage"), dict):
        out["usage"] = body["usage"]
    if body.get("id") is not None:
        out["response_id"] = str(body["id"])
    return out


def assemble_stream(api: str, events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The whole response a stream of events adds up to (the non-streamed body's shape), or None
    when the stream holds none (cut before its end)."""
    datas = [e.get("data") for e in events]
    if api == "openai.responses":
        for e, d in zip(events, datas):
            if isinstance(d, dict) and (e.get("event") or d.get("type")) in (
                    "response.completed", "response.incomplete", "response.failed"):
                return d.get("response") if isinstance(d.get("response"), dict) else None
        return None
    if api == "openai.chat":
        return _assemble_chat([d for d in datas if isinstance(d, dict)])
    return _assemble_anthropic([d for d in datas if isinstance(d, dict)])


def _assemble_chat(chunks: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not chunks:
        return None
    choices: dict[int, dict[str, Any]] = {}
    usage = None
    for c in chunks:
        if isinstance(c.get("usage"), dict):
            usage = c["usage"]
        for ch in c.get("choices") or []:
            if not isinstance(ch, dict):
                continue
            slot = choices.setdefault(int(ch.get("index") or 0), {"message": {"role": "assistant", "content": None},
                                                                   "finish_reason": None, "calls": {}})
            delta = ch.get("delta") or {}
            if isinstance(delta.get("content"), str):
                slot["message"]["content"] = (slot["message"]["content"] or "") + delta["content"]
            if isinstance(delta.get("refusal"), str):
                slot["message"]["refusal"] = slot["message"].get("refusal", "") + delta["refusal"]
            for tc in delta.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                call = slot["calls"].setdefault(int(tc.get("index") or 0), {"id": None, "type": "function",
                                                                           "function": {"name": "", "arguments": ""}})
                if tc.get("id"):
                    call["id"] = tc["id"]
                fn = tc.get("function") or {}
                call["function"]["name"] += fn.get("name") or ""
                call["function"]["arguments"] += fn.get("arguments") or ""
            if ch.get("finish_reason"):
                slot["finish_reason"] = ch["finish_reason"]
    out_choices = []
    for index in sorted(choices):
        slot = choices[index]
        if slot["calls"]:
            for call in slot["calls"].values():  # no argument delta: "{}", as the API writes it whole
                call["function"]["arguments"] = call["function"]["arguments"] or "{}"
            slot["message"]["tool_calls"] = [slot["calls"][i] for i in sorted(slot["calls"])]
        out_choices.append({"index": index, "message": slot["message"], "finish_reason": slot["finish_reason"]})
    body: dict[str, Any] = {"id": chunks[0].get("id"), "model": chunks[0].get("model"), "choices": out_choices}
    if usage is not None:
        body["usage"] = usage
    return body


def _assemble_anthropic(datas: list[dict[str, Any]]) -> dict[str, Any] | None:
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for d in datas:
        kind = d.get("type")
        if kind == "message_start" and isinstance(d.get("message"), dict):
            message = dict(d["message"])
        elif kind == "content_block_start" and isinstance(d.get("content_block"), dict):
            blocks[int(d.get("index") or 0)] = dict(d["content_block"])
        elif kind == "content_block_delta" and isinstance(d.get("delta"), dict):
            i = int(d.get("index") or 0)
            block = blocks.setdefault(i, {"type": "text", "text": ""})
            delta = d["delta"]
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + (delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                partial[i] = partial.get(i, "") + (delta.get("partial_json") or "")
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")
        elif kind == "message_delta" and message is not None:
            message.update({k: v for k, v in (d.get("delta") or {}).items() if v is not None})
            if isinstance(d.get("usage"), dict):
                message["usage"] = {**(message.get("usage") or {}), **d["usage"]}
    if message is None:
        return None
    for i, text in partial.items():
        blocks[i]["input"] = parse_json_string(text) if text else {}
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _json_or_text(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _join(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return f"{a}\n{b}"


# ---- redacting a stream ------------------------------------------------------------------------

def _delta_slots(api: str, events: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[tuple[dict[str, Any], str]]]:
    """The text pieces of a stream, grouped by what they add up to: group key -> ``[(holder,
    field)]`` in order, where ``holder[field]`` is one delta's string. Chat Completions: each
    choice's content, refusal and each tool call's arguments; Responses: each ``*.delta`` event
    by type, item and part; Anthropic: each content block's text, JSON input or thinking."""
    groups: dict[tuple[Any, ...], list[tuple[dict[str, Any], str]]] = {}
    for e in events:
        d = e.get("data")
        if not isinstance(d, dict):
            continue
        if api == "openai.chat":
            for ch in d.get("choices") or []:
                delta = ch.get("delta") if isinstance(ch, dict) else None
                if not isinstance(delta, dict):
                    continue
                i = ch.get("index")
                for name in ("content", "refusal"):
                    if isinstance(delta.get(name), str):
                        groups.setdefault((name, i), []).append((delta, name))
                for tc in delta.get("tool_calls") or []:
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                        groups.setdefault(("arguments", i, tc.get("index")), []).append((fn, "arguments"))
        elif api == "openai.responses":
            kind = d.get("type")
            if isinstance(kind, str) and kind.endswith(".delta") and isinstance(d.get("delta"), str):
                key = (kind, d.get("item_id"), d.get("output_index"), d.get("content_index"), d.get("summary_index"))
                groups.setdefault(key, []).append((d, "delta"))
        elif d.get("type") == "content_block_delta" and isinstance(d.get("delta"), dict):
            delta = d["delta"]
            for name in ("text", "partial_json", "thinking"):
                if isinstance(delta.get(name), str):
                    groups.setdefault((d.get("index"), name), []).append((delta, name))
    return groups


def redact_stream(api: str, events: list[dict[str, Any]], redact_text: Callable[[str], str],
                  redact_value: Callable[[Any], Any]) -> int:
    """Redact a stream's text pieces where they add up to something to redact, in place.

    Redacting each delta alone would miss a value split across deltas (``"ops@examp"`` +
    ``"le.com"``) and write it in readable pieces. For each group of pieces (``_delta_slots``)
    the joined text is redacted (a JSON arguments text as a value, so secret-named fields are
    caught too); when that changes it, the first piece takes the whole redacted text and the
    others become ``""``: the same events, in the same order, adding up to the redacted text.

    Returns:
        How many groups were rewritten. Per-token ``logprobs`` are not rewritten (a limit).
    """
    changed = 0
    for key, slots in _delta_slots(api, events).items():
        whole = "".join(holder[name] for holder, name in slots)
        red = _redact_joined(whole, redact_text, redact_value, json_text=key[0] == "arguments"
                             or key[-1] == "partial_json" or "arguments" in str(key[0]))
        if red == whole:
            continue
        changed += 1
        for n, (holder, name) in enumerate(slots):
            holder[name] = red if n == 0 else ""
    return changed


def _redact_joined(whole: str, redact_text: Callable[[str], str], redact_value: Callable[[Any], Any],
                   json_text: bool) -> str:
    if json_text:
        try:
            parsed = orjson.loads(whole)
        except orjson.JSONDecodeError:
            return redact_text(whole)
        red = redact_value(parsed)
        return whole if red == parsed else orjson.dumps(red).decode()
    return redact_text(whole)
