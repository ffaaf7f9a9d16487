"""Chat messages from OpenTelemetry GenAI, OpenInference and OpenLLMetry shapes.

Every producer writes LLM messages its own way; tracetui compares one shape
(docs/format.md, "A message is ..."):
``{"role", "content": str | None, "tool_calls": [{"id", "name", "arguments"}], "tool_call_id"}``
with ``tool_calls`` / ``tool_call_id`` only where they apply.

Accepted input shapes (``../shared/design/formats.md`` §1.3, §1.4, §1.6, §3):

- GenAI semconv ``{role, parts: [{type: text, content} | {type: tool_call, id, name,
  arguments} | {type: tool_call_response, id, response | result} | ...]}``;
- OpenAI chat ``{role, content: str | [{type: text, text}], tool_calls: [{id, type,
  function: {name, arguments}}], tool_call_id}`` (also OpenLLMetry's un-flattened
  ``gen_ai.prompt.N`` and v1.28-v1.36 event bodies);
- OpenInference un-flattened ``{message: {role, content, contents: [{message_content:
  {type, text}}], tool_call_id, tool_calls: [{tool_call: {id, function: {name,
  arguments}}}]}}``;
- Anthropic-style content blocks ``tool_use`` / ``tool_result``.

Pure functions, no I/O. Tool-call arguments holding a JSON object or array are
parsed (``canonical.parse_json_string``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from tracetui.core.canonical import parse_json_string

Message = dict[str, Any]

_ROLES = {
    "system": "system", "developer": "system", "user": "user", "human": "user",
    "assistant": "assistant", "ai": "assistant", "model": "assistant", "bot": "assistant",
    "tool": "tool", "function": "tool", "ipython": "tool",
}
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_CALL_PARTS = frozenset({"tool_call", "function_call", "tool_use"})
_RESPONSE_PARTS = frozenset({"tool_call_response", "tool_result", "function_call_output", "function_result"})
_SKIPPED_PARTS = frozenset({"reasoning", "thinking", "redacted_thinking"})

_FINISH = {
    "tool_calls": "tool_call", "function_call": "tool_call", "tool_use": "tool_call",
    "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
}
"""Provider finish reasons mapped to the GenAI semconv values (``stop``, ``length``,
``tool_call``, ``content_filter``, ``error``) so that two instrumentations of the same
answer agree."""


def normalize_role(role: Any, default: str = "user") -> str:
    """Lowercase a role and map synonyms (``developer`` -> ``system``, ``model`` -> ``assistant``)."""
    if not isinstance(role, str) or not role:
        return default
    r = role.lower()
    return _ROLES.get(r, r)


def normalize_finish_reason(value: Any) -> str | None:
    """A finish reason as a lowercase GenAI value (``tool_calls`` -> ``tool_call``), or None.

    A list (``gen_ai.response.finish_reasons``) or a JSON string of one gives its first item.
    """
    value = parse_json_string(value)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if value is None or value == "":
        return None
    r = str(value).lower()
    return _FINISH.get(r, r)


def as_text(value: Any) -> str | None:
    """Content as a string: strings (and None) kept, anything else serialised as JSON (``str`` when
    orjson cannot: an integer beyond 64 bits)."""
    if value is None or isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def tool_call(tc: Any) -> dict[str, Any] | None:
    """One tool call ``{"id", "name", "arguments"}`` from any supported shape, or None.

    Accepts GenAI parts, OpenAI ``{id, type, function: {name, arguments}}``, OpenInference
    ``{tool_call: {id, function: {...}}}``, Anthropic ``{type: tool_use, id, name, input}``,
    inspect-ai ``{id, function: "<name>", arguments}`` (``inspect_ai.tool.ToolCall``: the
    function is the name) and any-agent ``{"tool.name", "tool.args"}``.
    """
    if not isinstance(tc, dict):
        return None
    inner = tc.get("tool_call")
    if isinstance(inner, dict):
        tc = inner
    fn = tc.get("function")
    if isinstance(fn, dict):
        name, args = fn.get("name"), fn.get("arguments")
    elif isinstance(fn, str):  # inspect-ai ToolCall: {id, function: "<name>", arguments: {...}}
        name, args = fn, tc.get("arguments", tc.get("input"))
    else:
        name = tc.get("name", tc.get("tool.name"))
        args = tc.get("arguments", tc.get("input", tc.get("args", tc.get("tool.args"))))
    if name is None and args is None:
        return None
    cid = tc.get("id")
    if cid is None:
        cid = tc.get("call_id")
    return {"id": None if cid is None else str(cid), "name": None if name is None else str(name),
            "arguments": parse_json_string(args)}


def _tool_calls_in_content(content: Any) -> list[dict[str, Any]] | None:
    """Tool calls when a content string is a JSON list of OpenAI tool calls (Koog writes them so)."""
    if not isinstance(content, str) or not content.lstrip().startswith("["):
        return None
    value = parse_json_string(content)
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, dict) and isinstance(v.get("function"), dict) for v in value):
        return None
    calls = [tool_call(v) for v in value]
    return [c for c in calls if c is not None] or None


def normalize_message(m: Any, default_role: str = "user") -> list[Message]:
    """One source message as tracetui messages (usually one; see below).

    Args:
        m: A message in any shape this module accepts, or a plain string (content).
        default_role: Role when the message names none (``assistant`` for outputs).

    Returns:
        Messages in tracetui's shape. A message carrying ``tool_call_response``
        parts becomes one ``tool`` message per response (each with its
        ``tool_call_id``), followed by the rest of the message if it has text or
        tool calls. Reasoning parts are dropped; non-text media parts are ignored.
        Not a message (a number, None): ``[]``.
    """
    if isinstance(m, str):
        return [{"role": default_role, "content": m}]
    if not isinstance(m, dict):
        return []
    inner = m.get("message")
    if isinstance(inner, dict) and "role" not in m and "parts" not in m:
        m = inner
    role = normalize_role(m.get("role"), default_role)
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    responses: list[Message] = []

    def part(p: Any) -> None:
        if isinstance(p, str):
            texts.append(p)
            return
        if not isinstance(p, dict):
            return
        inner_p = p.get("message_content")
        if isinstance(inner_p, dict):
            p = inner_p
        ptype = p.get("type")
        if not isinstance(ptype, str):
            ptype = None
        if ptype in _CALL_PARTS:
            c = tool_call(p)
            if c is not None:
                calls.append(c)
        elif ptype in _RESPONSE_PARTS:
            cid = p.get("id", p.get("tool_use_id", p.get("call_id")))
            out = next((p[k] for k in ("response", "result", "content", "output") if k in p), None)
            msg: Message = {"role": "tool", "content": as_text(out)}
            if cid is not None:
                msg["tool_call_id"] = str(cid)
            responses.append(msg)
        elif ptype in _SKIPPED_PARTS:
            return
        elif ptype is None or ptype in _TEXT_PARTS or "text" in p or "content" in p:
            t = p.get("content", p.get("text"))
            if t is not None:
                texts.append(t if isinstance(t, str) else as_text(t) or "")

    parts = m.get("parts")
    if isinstance(parts, list):
        for p in parts:
            part(p)
    content = m.get("content")
    if isinstance(content, list):
        for p in content:
            part(p)
    elif isinstance(content, dict):
        part(content)
    elif content is not None:
        found = _tool_calls_in_content(content) if not m.get("tool_calls") else None
        if found:
            calls.extend(found)
            if role == "tool" and not m.get("tool_call_id"):
                role = "assistant"  # Koog labels an assistant's tool-call message "tool"
        else:
            texts.append(content if isinstance(content, str) else as_text(content) or "")
    contents = m.get("contents")
    if isinstance(contents, list):
        before = list(texts)
        for p in contents:
            part(p)
        if before and texts[len(before):] == before:
            # OpenInference writes a Responses answer twice (message.content and message.contents.N):
            # one answer, read once.
            del texts[len(before):]
    for key in ("tool_calls", "function_call"):
        raw = parse_json_string(m.get(key))
        items = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
        for tc in items:
            c = tool_call(tc)
            if c is not None:
                calls.append(c)
    tcid = m.get("tool_call_id")
    if tcid is None and role == "tool":
        tcid = m.get("id")
    out: list[Message] = list(responses)
    if texts or calls or not responses or tcid is not None:
        msg = {"role": role, "content": "\n".join(texts) if texts else None}
        if calls:
            msg["tool_calls"] = calls
        if tcid is not None:
            msg["tool_call_id"] = str(tcid)
        out.append(msg)
    return out


def normalize_messages(value: Any, default_role: str = "user") -> list[Message] | None:
    """A list of source messages (or a JSON string of one) as tracetui messages.

    Returns:
        The messages, or None when ``value`` is not a list of messages (a single
        message object is accepted as a one-item list).
    """
    value = parse_json_string(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    out: list[Message] = []
    for m in value:
        out.extend(normalize_message(m, default_role))
    return out


def first_finish_reason(value: Any) -> str | None:
    """The first ``finish_reason`` found on source output messages (or ``message``/choice bodies)."""
    value = parse_json_string(value)
    items: Iterable[Any] = value if isinstance(value, list) else [value]
    for m in items:
        if isinstance(m, dict):
            fr = m.get("finish_reason")
            if fr is None and isinstance(m.get("message"), dict):
                fr = m["message"].get("finish_reason")
            if fr:
                return normalize_finish_reason(fr)
    return None


def merge_output(messages: list[Message], choice_count: int | None = None) -> Message | None:
    """The assistant message an LLM call returned, from its output messages.

    The first assistant message, except that several assistant messages of one
    call (no ``choice.count`` above 1) are merged: their texts joined by a
    newline and their tool calls concatenated (Koog and some OpenLLMetry
    instrumentations split one answer with parallel tool calls over
    ``gen_ai.completion.0``, ``.1``...).
    """
    assistants = [m for m in messages if m.get("role") == "assistant"] or messages
    if not assistants:
        return None
    if len(assistants) == 1 or (choice_count or 1) > 1:
        return assistants[0]
    texts = [m["content"] for m in assistants if m.get("content")]
    calls = [c for m in assistants for c in m.get("tool_calls", ())]
    merged: Message = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        merged["tool_calls"] = calls
    return merged


_EVENT_ROLES = {
    "gen_ai.system.message": "system", "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
}
_BODY_KEYS = ("gen_ai.event.content", "event.body", "body")


def _event_body(attrs: dict[str, Any]) -> dict[str, Any]:
    for k in _BODY_KEYS:
        v = parse_json_string(attrs.get(k))
        if isinstance(v, dict):
            return {**{a: b for a, b in attrs.items() if a not in _BODY_KEYS}, **v}
    if "message" not in attrs and any(k.startswith("message.") for k in attrs):
        msg = {k[8:]: v for k, v in attrs.items() if k.startswith("message.")}
        return {**{k: v for k, v in attrs.items() if not k.startswith("message.")}, "message": msg}
    return attrs


def messages_from_events(events: Iterable[dict[str, Any]]) -> tuple[list[Message], list[Message], str | None]:
    """Input messages, output messages and finish reason carried by span events.

    GenAI semconv v1.28-v1.36 write one event per message (``gen_ai.system.message``,
    ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``,
    ``gen_ai.choice``), v1.26-v1.27 one event each for the whole prompt and
    completion (``gen_ai.content.prompt`` with attribute ``gen_ai.prompt``,
    ``gen_ai.content.completion`` with ``gen_ai.completion``, JSON strings).

    Args:
        events: ``{"name": str, "attributes": dict}`` items (decoded attributes;
            a body may also sit in ``gen_ai.event.content`` as a JSON string).

    Returns:
        ``(input_messages, output_messages, finish_reason)``; empty lists when
        the events carry no messages.
    """
    inputs: list[Message] = []
    outputs: list[Message] = []
    finish: str | None = None
    for ev in events:
        name = ev.get("name")
        attrs = ev.get("attributes")
        if not isinstance(name, str) or not name.startswith("gen_ai.") or not isinstance(attrs, dict):
            continue
        if name in _EVENT_ROLES:
            body = _event_body(attrs)
            inputs.extend(normalize_message({"role": _EVENT_ROLES[name], **body} if "role" not in body else body,
                                            _EVENT_ROLES[name]))
        elif name == "gen_ai.choice":
            body = _event_body(attrs)
            msg = parse_json_string(body.get("message"))
            outputs.extend(normalize_message(msg if isinstance(msg, dict) else body, "assistant"))
            finish = finish or normalize_finish_reason(body.get("finish_reason"))
        elif name == "gen_ai.content.prompt":
            inputs.extend(normalize_messages(attrs.get("gen_ai.prompt")) or [])
        elif name == "gen_ai.content.completion":
            raw = attrs.get("gen_ai.completion")
            outputs.extend(normalize_messages(raw, "assistant") or [])
            finish = finish or first_finish_reason(raw)
    return inputs, outputs, finish
