"""Framework envelopes taken off a value before it is compared (docs/format.md, "Framework payloads").

Chain, agent and graph spans of OpenInference, OpenLLMetry, LangChain/LangGraph, LlamaIndex, CrewAI
and the OpenAI Agents SDK carry their framework's own objects as inputs and outputs: LangChain
messages serialised (``{"lc": 1, "kwargs": {...}}``, ``{"type": "ai", "data": {...}}``) with a
message id, a response id, a system fingerprint, token counts and tool-call ids minted afresh on
every run; tool results wrapped in a ``ToolMessage``. Compared as recorded, an unchanged rerun
differs everywhere. ``framework_value`` rewrites such a value into what the run meant:

- every message envelope becomes the normalised message the LangSmith reader produces
  (``readers.langsmith_content.lc_message``: role, content, tool calls), without its provider-minted ids
  (``tool_calls[].id``, ``tool_call_id``);
- a ``ToolMessage`` given as a tool's output becomes its content (``tool_output``);
- keys that only say which run, which response or which endpoint (``VOLATILE_KEYS``) are dropped,
  at any depth; a tool call's ``id`` beside its ``name`` and ``args`` / ``arguments`` too.

Only the comparison sees the rewritten value: the detail pane shows what was recorded.
"""

from __future__ import annotations

import re
from typing import Any

from tracetui.core.canonical import parse_json_string
from tracetui.core.readers.langsmith_content import lc_message

__all__ = ["VOLATILE_KEYS", "framework_value", "tool_message_content", "tool_output"]

VOLATILE_KEYS: frozenset[str] = frozenset({
    # which run / response / message: minted afresh on every run
    "run_id", "parent_run_id", "lc_run_id", "response_id", "system_fingerprint", "created", "created_at",
    "request_id", "x_request_id", "checkpoint_id", "checkpoint_ns", "thread_ts",
    # token counts and provider bookkeeping riding on messages
    "response_metadata", "usage_metadata", "token_usage", "usage", "logprobs",
    # endpoints: where the call went, not what it asked
    "base_url", "api_base", "openai_api_base", "azure_endpoint", "endpoint", "endpoint_url",
})
"""Keys dropped at any depth of a chain/agent/graph value (and of an LLM's ``params``)."""

_LC_CLASSES = frozenset({
    "HumanMessage", "HumanMessageChunk", "AIMessage", "AIMessageChunk", "SystemMessage", "SystemMessageChunk",
    "ToolMessage", "ToolMessageChunk", "FunctionMessage", "FunctionMessageChunk", "ChatMessage", "ChatMessageChunk",
})
_LC_TYPES = frozenset({"human", "ai", "system", "tool", "function", "chat", "developer", "AIMessageChunk",
                       "HumanMessageChunk", "ToolMessageChunk"})


_REPR = re.compile(r"[A-Za-z_][\w.]*\(.*\)\Z", re.DOTALL)
_REPR_BLOCK = re.compile(r"\b(?:response_metadata|usage_metadata)=\{|'(?:response_metadata|usage_metadata|token_usage)': \{")
_REPR_ID = re.compile(r"\b((?:tool_call_)?id)=('|\")[^'\"]*\2|'(id|tool_call_id|system_fingerprint)': '[^']*'")


def _scrub_repr(s: str) -> str:
    """A Python ``repr`` of framework objects (LangGraph logs ``Send(node=..., arg={... AIMessage(...)})``
    as a string) without its message ids, tool-call ids, fingerprints and metadata blocks."""
    out: list[str] = []
    pos = 0
    for m in _REPR_BLOCK.finditer(s):
        if m.start() < pos:
            continue
        depth, k = 1, m.end()
        while k < len(s) and depth:
            c = s[k]
            depth += 1 if c == "{" else -1 if c == "}" else 0
            k += 1
        out.append(s[pos:m.start()])
        pos = k
    out.append(s[pos:])
    return _REPR_ID.sub("", "".join(out))


def _envelope(d: dict[str, Any]) -> dict[str, Any] | None:
    """The message fields of a LangChain message envelope, or None when ``d`` is not one."""
    if d.get("lc") is not None and type(d.get("kwargs")) is dict:
        ident = d.get("id")
        if type(ident) is list and ident and ident[-1] in _LC_CLASSES:
            return d["kwargs"]
        return None
    t = d.get("type")
    if type(t) is str and t in _LC_TYPES:
        data = d.get("data")
        if type(data) is dict and "content" in data:
            return data
        if "content" in d and "role" not in d:
            return d
    return None


def _is_tool_message(d: dict[str, Any]) -> bool:
    if d.get("lc") is not None:
        ident = d.get("id")
        return type(ident) is list and bool(ident) and ident[-1] in ("ToolMessage", "ToolMessageChunk")
    return d.get("type") in ("tool", "ToolMessageChunk") and (type(d.get("data")) is dict or "tool_call_id" in d)


def _message(d: dict[str, Any]) -> Any:
    msgs = lc_message(d)
    out = [_strip(m) for m in msgs]
    return out[0] if len(out) == 1 else out


def _strip(m: Any) -> Any:
    if type(m) is not dict:
        return m
    out = {k: framework_value(v) for k, v in m.items() if k != "tool_call_id" and k not in VOLATILE_KEYS}
    calls = out.get("tool_calls")
    if type(calls) is list:
        out["tool_calls"] = [{k: v for k, v in c.items() if k != "id"} if type(c) is dict else c for c in calls]
    return out


def framework_value(value: Any) -> Any:
    """``value`` with framework envelopes unwrapped and volatile keys dropped (see the module doc).

    JSON strings holding an object or array are parsed first. Raises RecursionError on values nested
    deeper than Python's recursion limit (the comparison then falls back to comparing as recorded).
    """
    t = type(value)
    if t is str:
        if value[:1] in ("{", "["):
            parsed = parse_json_string(value)
            if parsed is not value:
                return framework_value(parsed)
        elif ("id=" in value or "'id'" in value) and _REPR.match(value):
            return _scrub_repr(value)
        return value
    if t is list:
        return [framework_value(v) for v in value]
    if t is not dict:
        return value
    fields = _envelope(value)
    if fields is not None:
        return _message(value)
    out = {k: framework_value(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if "id" in out and "name" in out and ("args" in out or "arguments" in out):
        del out["id"]  # a tool call: its id is the provider's
    return out


def tool_message_content(value: Any) -> Any:
    """The content of a serialised ``ToolMessage`` (``{"lc": 1, "kwargs": {...}}``, ``{"type": "tool",
    "data": {...}}``, a JSON string of either), as recorded; any other value as given."""
    parsed = parse_json_string(value) if type(value) is str and value[:1] == "{" else value
    if type(parsed) is dict and _is_tool_message(parsed):
        fields = parsed.get("kwargs") if parsed.get("lc") is not None else parsed.get("data", parsed)
        if type(fields) is dict:
            return fields.get("content")
    return value


def tool_output(value: Any) -> Any:
    """A tool's output without its ``ToolMessage`` envelope (the content), then ``framework_value``."""
    return framework_value(tool_message_content(value))
