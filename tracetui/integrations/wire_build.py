"""A model API response built from a recorded output message (a recording without its wire response).

A trace made by another tool (an OTel export of a pydantic-ai run, a Langfuse trace...) records
an LLM call's semantic fields only: the ``output`` message (``{"role": "assistant", "content",
"tool_calls": [{"id", "name", "arguments"}]}``), ``finish_reason``, ``usage``, ``response_id``.
When such a call is served in a frozen replay, the transport (``transport._served``) needs the
response the client asked for; ``build_response`` makes it, in the API and the streaming the
replayed request uses:

=====================  =========================================  ========================================
API                    body                                       stream (SSE)
=====================  =========================================  ========================================
``openai.chat``        ``chat.completion``, one choice             ``chat.completion.chunk`` s, ``[DONE]``
``openai.responses``   ``response`` with message / function_call   ``response.created`` ... ``response.completed``
``anthropic.messages`` ``message`` with text / tool_use blocks     ``message_start`` ... ``message_stop``
=====================  =========================================  ========================================

Each stream carries a value whole in one delta. Ids the recording lacks are made up from the call
position (``call_0``); times are 0. A recorded call with no output (it failed) is an HTTP 500.
Pure functions (no httpx): ``wire.assemble_stream`` reads every stream built here back to the
same output (tests/integrations/test_wire_build.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from tracetui.integrations.wire import sse_bytes

_CHAT_FINISH = {"tool_call": "tool_calls", "stop": "stop", "length": "length", "content_filter": "content_filter"}
_ANTHROPIC_STOP = {"tool_call": "tool_use", "stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def build_response(api: str, stream: bool, data: Mapping[str, Any], model: str,
                   request: Mapping[str, Any] | None = None) -> tuple[int, str, bytes]:
    """``(status, content_type, body)`` of the response ``api`` sends for the recorded LLM span
    fields ``data`` (``output``, ``finish_reason``, ``usage``, ``response_id``).

    Args:
        api: ``openai.chat``, ``openai.responses`` or ``anthropic.messages`` (``wire.APIS``).
        stream: An SSE stream (``text/event-stream``) rather than one JSON body.
        model: The model name the response names (the replayed request's).
        request: The request body (Chat Completions: ``stream_options.include_usage`` adds the
            usage chunk).
    """
    output = data.get("output")
    if not isinstance(output, Mapping):
        if output is None:
            body = {"error": {"message": "the recorded call failed (no output recorded)", "type": "server_error"}}
            return 500, "application/json", orjson.dumps(body)
        output = {"role": "assistant", "content": output if isinstance(output, str) else orjson.dumps(output).decode()}
    text = _text(output.get("content"))
    calls = [_call(c, i) for i, c in enumerate(output.get("tool_calls") or []) if isinstance(c, Mapping)]
    finish = str(data.get("finish_reason") or ("tool_call" if calls else "stop"))
    usage = _usage(data.get("usage"))
    rid = str(data.get("response_id") or "tracetui-replay")
    if api == "openai.chat":
        if stream:
            include = bool(((request or {}).get("stream_options") or {}).get("include_usage"))
            return 200, "text/event-stream", sse_bytes(_chat_stream(rid, model, text, calls, finish, usage, include))
        return 200, "application/json", orjson.dumps(_chat_body(rid, model, text, calls, finish, usage))
    if api == "openai.responses":
        items = _responses_items(text, calls)
        final = _responses_body(rid, model, items, finish, usage)
        if stream:
            return 200, "text/event-stream", sse_bytes(_responses_stream(final, items))
        return 200, "application/json", orjson.dumps(final)
    blocks = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": _as_object(c["arguments"])} for c in calls]
    message = {"id": rid, "type": "message", "role": "assistant", "model": model, "content": blocks,
               "stop_reason": _ANTHROPIC_STOP.get(finish, "end_turn"), "stop_sequence": None,
               "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}
    if stream:
        return 200, "text/event-stream", sse_bytes(_anthropic_stream(message))
    return 200, "application/json", orjson.dumps(message)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: their text joined
        parts = [p.get("text") or p.get("content") if isinstance(p, Mapping) else p for p in content]
        return "".join(p for p in parts if isinstance(p, str)) or None
    return orjson.dumps(content).decode()


def _call(c: Mapping[str, Any], i: int) -> dict[str, Any]:
    args = c.get("arguments")
    if args is None:
        args = {}
    text = args if isinstance(args, str) else orjson.dumps(args).decode()
    return {"id": str(c.get("id") or f"call_{i}"), "name": str(c.get("name") or ""), "arguments": text}


def _as_object(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return {"input": text}


def _usage(usage: Any) -> tuple[int, int]:
    u = usage if isinstance(usage, Mapping) else {}
    tin = u.get("input_tokens", u.get("prompt_tokens", 0))
    tout = u.get("output_tokens", u.get("completion_tokens", 0))
    return (tin if isinstance(tin, int) else 0), (tout if isinstance(tout, int) else 0)


# ---- Chat Completions ---------------------------------------------------------------------------

def _chat_body(rid: str, model: str, text: str | None, calls: list[dict[str, Any]], finish: str,
               usage: tuple[int, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    return {"id": rid, "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": _CHAT_FINISH.get(finish, "stop"),
                         "logprobs": None}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def _chat_stream(rid: str, model: str, text: str | None, calls: list[dict[str, Any]], finish: str,
                 usage: tuple[int, int], include_usage: bool) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"event": None, "data": {"id": rid, "object": "chat.completion.chunk", "created": 0, "model": model,
                                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}}

    events = [chunk({"role": "assistant"})]
    if text:
        events.append(chunk({"content": text}))
    for i, c in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                             "function": {"name": c["name"], "arguments": c["arguments"]}}]}))
    events.append(chunk({}, _CHAT_FINISH.get(finish, "stop")))
    if include_usage:
        events.append({"event": None, "data": {
            "id": rid, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}})
    events.append({"event": None, "data": "[DONE]"})
    return events


# ---- Responses ----------------------------------------------------------------------------------

def _responses_items(text: str | None, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if text:
        items.append({"type": "message", "id": "msg_0", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]})
    for i, c in enumerate(calls):
        items.append({"type": "function_call", "id": f"fc_{i}", "call_id": c["id"], "name": c["name"],
                      "arguments": c["arguments"], "status": "completed"})
    return items


def _responses_body(rid: str, model: str, items: list[dict[str, Any]], finish: str,
                    usage: tuple[int, int]) -> dict[str, Any]:
    incomplete = finish == "length"
    return {"id": rid, "object": "response", "created_at": 0, "model": model,
            "status": "incomplete" if incomplete else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None, "error": None,
            "output": items, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "instructions": None, "metadata": {}, "temperature": None, "top_p": None,
            "text": {"format": {"type": "text"}}, "truncation": "disabled",
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage),
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def _responses_stream(final: dict[str, Any], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"event": kind, "data": {"type": kind, "sequence_number": len(events), **fields}})

    emit("response.created", response={**final, "status": "in_progress", "output": [], "incomplete_details": None})
    for n, item in enumerate(items):
        if item["type"] == "message":
            part = item["content"][0]
            emit("response.output_item.added", output_index=n, item={**item, "status": "in_progress", "content": []})
            common = {"item_id": item["id"], "output_index": n, "content_index": 0}
            emit("response.content_part.added", **common, part={**part, "text": ""})
            emit("response.output_text.delta", **common, delta=part["text"], logprobs=[])
            emit("response.output_text.done", **common, text=part["text"], logprobs=[])
            emit("response.content_part.done", **common, part=part)
        else:
            emit("response.output_item.added", output_index=n, item={**item, "status": "in_progress", "arguments": ""})
            common = {"item_id": item["id"], "output_index": n}
            emit("response.function_call_arguments.delta", **common, delta=item["arguments"])
            emit("response.function_call_arguments.done", **common, arguments=item["arguments"], name=item["name"])
        emit("response.output_item.done", output_index=n, item=item)
    emit("response.incomplete" if final["status"] == "incomplete" else "response.completed", response=final)
    return events


# ---- Anthropic Messages -------------------------------------------------------------------------

def _anthropic_stream(message: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"event": kind, "data": {"type": kind, **fields}})

    emit("message_start", message={**message, "content": [], "stop_reason": None,
                                   "usage": {**message["usage"], "output_tokens": 0}})
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            emit("content_block_start", index=i, content_block={"type": "text", "text": ""})
            emit("content_block_delta", index=i, delta={"type": "text_delta", "text": block["text"]})
        else:
            emit("content_block_start", index=i, content_block={**block, "input": {}})
            emit("content_block_delta", index=i,
                 delta={"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()})
        emit("content_block_stop", index=i)
    emit("message_delta", delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
         usage={"output_tokens": message["usage"]["output_tokens"]})
    emit("message_stop")
    return events
