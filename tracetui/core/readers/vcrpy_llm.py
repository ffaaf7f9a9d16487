"""The LLM APIs a vcrpy cassette records, as they are on the wire: which API a request calls, its
messages and parameters, the response (a stream of server-sent events reassembled) and its answer.

Three APIs: OpenAI chat completions (``chat``), Anthropic messages (``anthropic``), OpenAI
Responses (``responses``). ``readers.vcrpy`` makes the spans.
"""

from __future__ import annotations

from typing import Any

import orjson

from tracetui.core.canonical import parse_json_string
from tracetui.core.readers.openai_shapes import (
    choice_output,
    response_items,
    responses_output,
    usage_from,
)
from tracetui.core.readers.otel_messages import (
    Message,
    normalize_finish_reason,
    normalize_message,
    normalize_messages,
)

__all__ = [
    "answer_of",
    "api_of",
    "assemble_anthropic_stream",
    "assemble_chat_stream",
    "provider_of",
    "request_messages",
    "request_params",
    "response_object",
    "sse_data",
]

_PROVIDERS = (("openai.azure.com", "azure.ai.openai"), ("openai.com", "openai"), ("anthropic.com", "anthropic"))
_NOT_PARAMS = {
    "chat": frozenset({"messages", "tools", "functions", "model"}),
    "anthropic": frozenset({"messages", "tools", "model", "system"}),
    "responses": frozenset({"input", "tools", "model", "instructions"}),
}


# -- streams -------------------------------------------------------------------------------


def sse_data(text: str) -> list[tuple[str | None, str]]:
    """Server-sent events as ``(event name, data)`` pairs, in order (``data:`` lines of one
    event joined by newlines, per the SSE spec; comments and ids ignored)."""
    out: list[tuple[str | None, str]] = []
    event: str | None = None
    data: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data:
                out.append((event, "\n".join(data)))
            event, data = None, []
        elif line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif line.startswith("event:"):
            event = line[6:].strip()
    if data:
        out.append((event, "\n".join(data)))
    return out


def assemble_chat_stream(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """One OpenAI chat completion from its streamed ``chat.completion.chunk`` objects.

    Choice 0's content deltas are concatenated in order; tool-call deltas are merged by
    their ``index`` (parallel calls arrive interleaved; ``id`` and ``name`` come in the first
    delta of each, ``arguments`` in pieces), then ordered by index.

    Returns:
        ``{"id", "model", "message": {role, content, tool_calls: [{id, type, function: {name,
        arguments}}]}, "finish_reason", "usage"}`` (keys present when the chunks carry them).
    """
    out: dict[str, Any] = {}
    texts: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    fcall: dict[str, str] | None = None
    role = "assistant"
    for ch in chunks:
        if "id" not in out and isinstance(ch.get("id"), str):
            out["id"] = ch["id"]
        if "model" not in out and isinstance(ch.get("model"), str):
            out["model"] = ch["model"]
        if isinstance(ch.get("usage"), dict):
            out["usage"] = ch["usage"]
        choices = ch.get("choices")
        for c in choices if isinstance(choices, list) else ():
            if not isinstance(c, dict) or c.get("index", 0) != 0:
                continue
            if c.get("finish_reason"):
                out["finish_reason"] = c["finish_reason"]
            delta = c.get("delta")
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("role"), str):
                role = delta["role"]
            if isinstance(delta.get("content"), str):
                texts.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                refusal.append(delta["refusal"])
            for tc in delta.get("tool_calls") or ():
                if not isinstance(tc, dict):
                    continue
                idx = tc.get("index")
                idx = idx if isinstance(idx, int) else len(calls)
                entry = calls.setdefault(idx, {"id": None, "name": "", "arguments": ""})
                if tc.get("id") and entry["id"] is None:
                    entry["id"] = tc["id"]
                fn_raw = tc.get("function")
                fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
                name = fn.get("name")
                if isinstance(name, str) and name and name != entry["name"]:
                    entry["name"] += name  # a name sent in pieces; one repeated whole is kept once
                if isinstance(fn.get("arguments"), str):
                    entry["arguments"] += fn["arguments"]
            fc = delta.get("function_call")
            if isinstance(fc, dict):  # the pre-tools "functions" API
                fcall = fcall or {"name": "", "arguments": ""}
                if isinstance(fc.get("name"), str):
                    fcall["name"] += fc["name"]
                if isinstance(fc.get("arguments"), str):
                    fcall["arguments"] += fc["arguments"]
    msg: dict[str, Any] = {"role": role, "content": "".join(texts) if texts else None}
    if refusal and not texts:
        msg["content"] = "".join(refusal)
    if calls:  # no argument delta at all: a call without arguments, "{}" as the API writes it whole
        msg["tool_calls"] = [{"id": calls[i]["id"], "type": "function",
                              "function": {"name": calls[i]["name"], "arguments": calls[i]["arguments"] or "{}"}}
                             for i in sorted(calls)]
    if fcall is not None:
        msg["function_call"] = fcall
    out["message"] = msg
    return out


def assemble_anthropic_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    """An Anthropic Messages response from its stream events (``message_start``,
    ``content_block_start``/``_delta``, ``message_delta``).

    Returns:
        ``{"id", "model", "role", "content": [blocks by index], "stop_reason", "usage"}`` (keys
        present when the events carry them; a tool-use block's ``input`` parsed from its pieces).
    """
    msg: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    for ev in events:
        t = ev.get("type")
        if t == "message_start" and isinstance(ev.get("message"), dict):
            m = ev["message"]
            msg.update({k: m[k] for k in ("id", "model", "role") if k in m})
            if isinstance(m.get("usage"), dict):
                usage.update(m["usage"])
        elif t == "content_block_start" and isinstance(ev.get("content_block"), dict):
            blocks[ev.get("index", len(blocks))] = dict(ev["content_block"])
        elif t == "content_block_delta" and isinstance(ev.get("delta"), dict):
            i = ev.get("index", 0)
            b = blocks.setdefault(i, {"type": "text", "text": ""})
            d = ev["delta"]
            if d.get("type") == "text_delta":
                b["text"] = (b.get("text") or "") + (d.get("text") or "")
            elif d.get("type") == "input_json_delta":
                partial.setdefault(i, []).append(d.get("partial_json") or "")
        elif t == "message_delta":
            d = ev.get("delta")
            if isinstance(d, dict) and d.get("stop_reason"):
                msg["stop_reason"] = d["stop_reason"]
            if isinstance(ev.get("usage"), dict):
                usage.update(ev["usage"])
    for i, parts in partial.items():
        text = "".join(parts)
        blocks[i]["input"] = parse_json_string(text) if text else {}
    msg["content"] = [blocks[i] for i in sorted(blocks)]
    if usage:
        msg["usage"] = usage
    return msg


# -- API shapes ---------------------------------------------------------------------------


def api_of(path: str, host: str, req: Any) -> str | None:
    """Which LLM API an interaction calls, from its URL path (and request body)."""
    if not isinstance(req, dict):
        return None
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/messages") and ("anthropic" in host or ("messages" in req and "max_tokens" in req)):
        return "anthropic"
    if path.endswith("/responses") and ("input" in req or "model" in req):
        return "responses"
    return None


def provider_of(host: str) -> str | None:
    """The model provider a host belongs to (``openai``, ``azure.ai.openai``, ``anthropic``), or None."""
    for suffix, name in _PROVIDERS:
        if host == suffix or host.endswith("." + suffix):
            return name
    return None


def request_messages(api: str, req: dict[str, Any]) -> list[Message] | None:
    """A request's messages, normalized (``api`` as ``api_of`` names it): chat ``messages``;
    Anthropic's ``system`` then ``messages``; a Responses call's ``instructions`` then ``input`` items.
    None when there are none."""
    if api == "chat":
        return normalize_messages(req.get("messages"))
    if api == "anthropic":
        out: list[Message] = []
        system = req.get("system")
        if system is not None:
            out.extend(normalize_message({"role": "system", "content": system}, "system"))
        more = normalize_messages(req.get("messages"))
        return out + more if more is not None else (out or None)
    # responses: instructions + input items (messages, function calls, function call outputs)
    msgs: list[Message] = []
    if isinstance(req.get("instructions"), str):
        msgs.append({"role": "system", "content": req["instructions"]})
    inp = req.get("input")
    if isinstance(inp, str):
        msgs.append({"role": "user", "content": inp})
    elif isinstance(inp, list):
        msgs.extend(response_items(inp))
    return msgs or None


def request_params(api: str, req: dict[str, Any]) -> dict[str, Any]:
    """A request's parameters: the body minus what the span keeps apart (messages, tools, model,
    system prompt or instructions)."""
    skip = _NOT_PARAMS[api]
    return {k: v for k, v in req.items() if k not in skip}


def response_object(api: str, text: str | None, headers: dict[str, str]) -> tuple[Any, int]:
    """The response as one JSON object (a stream reassembled), or None; and how many stream chunks
    were not JSON (skipped).

    A body that starts with ``{`` or ``[`` is JSON; one of SSE lines (or served as
    ``text/event-stream``) is a stream: chat chunks merged (``assemble_chat_stream``), Anthropic
    events merged, a Responses stream's final ``response`` (else its finished output items).
    """
    if text is None:
        return None, 0
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        value = parse_json_string(text)
        return (value if isinstance(value, dict) else None), 0
    if not (stripped.startswith(("data:", "event:", ":")) or "event-stream" in headers.get("content-type", "")):
        return None, 0
    chunks: list[dict[str, Any]] = []
    bad = 0
    for _event, payload in sse_data(text):
        if payload.strip() == "[DONE]":
            continue
        try:
            v = orjson.loads(payload)
        except orjson.JSONDecodeError:
            bad += 1
            continue
        if isinstance(v, dict):
            chunks.append(v)
    if not chunks:
        return None, bad
    if api == "chat":
        done = assemble_chat_stream(chunks)
        obj: dict[str, Any] = {k: done[k] for k in ("id", "model", "usage") if k in done}
        obj["choices"] = [{"index": 0, "message": done["message"], "finish_reason": done.get("finish_reason")}]
        return obj, bad
    if api == "anthropic":
        return assemble_anthropic_stream(chunks), bad
    # responses: the final event carries the whole response object
    for ch in reversed(chunks):
        if ch.get("type") in ("response.completed", "response.incomplete", "response.failed", "response.done") \
                and isinstance(ch.get("response"), dict):
            return ch["response"], bad
    items = [ch["item"] for ch in chunks
             if ch.get("type") == "response.output_item.done" and isinstance(ch.get("item"), dict)]
    return ({"output": items} if items else None), bad


def answer_of(api: str, resp: dict[str, Any]) -> tuple[Message | None, str | None, dict[str, int] | None,
                                                     str | None, str | None]:
    """``(output message, finish reason, usage, response id, response model)`` of a response object."""
    rid = resp.get("id") if isinstance(resp.get("id"), str) else None
    version = resp.get("model") if isinstance(resp.get("model"), str) else None
    usage = usage_from(resp.get("usage"))
    if api == "chat":
        out, finish = choice_output(resp)
        return out, finish, usage, rid, version
    if api == "anthropic":
        msgs = normalize_message({"role": "assistant", "content": resp.get("content")}, "assistant") \
            if resp.get("content") is not None else []
        out = next((m for m in msgs if m.get("role") == "assistant"), None)
        return out, normalize_finish_reason(resp.get("stop_reason")), usage, rid, version
    out, finish = responses_output(resp)
    return out, finish, usage, rid, version
