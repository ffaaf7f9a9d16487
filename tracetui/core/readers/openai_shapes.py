"""OpenAI API objects as tracetui ``llm`` data: usage, chat-completion choices, Responses API items.

Shared by every reader that finds raw provider objects in its source (vcrpy
cassettes, LangSmith runs, OpenAI Agents SDK spans, OpenHands ``model_response``,
ATIF step metrics, hand-written cassettes), so that the same answer read from
two formats gives the same ``output``, ``finish_reason`` and ``usage`` (the
first two are compared: ``docs/format.md``, "llm").

Shapes (OpenAI API reference; the Anthropic and LangChain spellings are read too):

- usage: chat completions ``{prompt_tokens, completion_tokens, total_tokens}``,
  Responses API, Anthropic and LangChain ``usage_metadata``
  ``{input_tokens, output_tokens}``, JavaScript SDKs ``{promptTokens,
  completionTokens}`` / ``{inputTokens, outputTokens}``;
- chat completion ``{id, model, choices: [{index, message | delta, finish_reason}],
  usage}``; a legacy completion's choice holds ``text``;
- Responses API items (``input`` and ``output`` lists): ``{type: message, role,
  content: [{type: input_text | output_text, text}]}``, ``{type: function_call,
  call_id, name, arguments}``, ``{type: function_call_output, call_id, output}``,
  ``{type: reasoning}`` (dropped: not part of the answer); a Responses object
  ``{id, model, status, incomplete_details, output: [items], usage}``.

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracetui.core.readers.otel_messages import (
    Message,
    merge_output,
    normalize_finish_reason,
    normalize_message,
    tool_call,
)

__all__ = ["choice_output", "response_items", "responses_output", "usage_from"]

_INPUT_KEYS = ("input_tokens", "prompt_tokens", "inputTokens", "promptTokens")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens", "outputTokens", "completionTokens")
_MESSAGE_ITEMS = frozenset({None, "message"})
"""Responses API item types that are messages (an input item may omit ``type``)."""


def _count(u: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    """The first token count under ``keys``: an int, or a float with an integral value (JSON ``12.0``)."""
    for k in keys:
        v = u.get(k)
        t = type(v)
        if t is int:
            return v  # type: ignore[no-any-return]
        if t is float and v.is_integer():  # type: ignore[union-attr]
            return int(v)  # type: ignore[arg-type]
    return None


def usage_from(*candidates: Any) -> dict[str, int] | None:
    """``{input_tokens, output_tokens}`` from the first usage-like dict that has either count.

    Args:
        candidates: Usage objects in order of preference (a reader passes the
            response's ``usage`` first, then fallbacks); non-dicts are skipped.

    Returns:
        The counts found (one of them may be missing), or None when no
        candidate has a count. Other counts (cached, reasoning, total tokens)
        are not usage in tracetui's sense (``docs/format.md``): readers keep
        them in attributes when they want them.
    """
    for u in candidates:
        if type(u) is not dict:
            continue
        i = _count(u, _INPUT_KEYS)
        o = _count(u, _OUTPUT_KEYS)
        if i is not None or o is not None:
            out: dict[str, int] = {}
            if i is not None:
                out["input_tokens"] = i
            if o is not None:
                out["output_tokens"] = o
            return out
    return None


def choice_output(resp: Any) -> tuple[Message | None, str | None]:
    """The answer of a chat completion: its first choice as one assistant message, and the finish reason.

    The choice's ``message`` (a streamed chunk's ``delta``; a legacy
    completion's ``text``) is normalised by ``otel_messages.normalize_message``;
    several assistant messages out of it are merged (``merge_output``). The
    finish reason is normalised (``tool_calls`` -> ``tool_call``).

    Returns:
        ``(message, finish_reason)``; ``(None, None)`` when ``resp`` has no
        choice object, a None message when the choice holds none.
    """
    choices = resp.get("choices") if type(resp) is dict else None
    if type(choices) is not list or not choices or type(choices[0]) is not dict:
        return None, None
    c0 = choices[0]
    msg = c0.get("message")
    if msg is None:
        msg = c0.get("delta")
    if msg is None and "text" in c0:
        msg = {"role": "assistant", "content": c0["text"]}
    out = merge_output(normalize_message(msg, "assistant")) if type(msg) is dict else None
    return out, normalize_finish_reason(c0.get("finish_reason"))


def response_items(items: Iterable[Any]) -> list[Message]:
    """Responses API input or output items as tracetui messages, in order.

    A ``function_call`` joins the assistant message just before it (its
    ``tool_calls``; a new assistant message when there is none), as a chat
    completion writes text and tool calls in one message; a
    ``function_call_output`` is a ``tool`` message answering its ``call_id``;
    ``message`` items (or items with a ``role``) are normalised (role
    ``assistant`` when a ``message`` names none); ``reasoning`` and other
    items (``web_search_call``, ``item_reference``...) are dropped.
    """
    out: list[Message] = []
    for it in items:
        if type(it) is not dict:
            out.extend(normalize_message(it))
            continue
        t = it.get("type")
        if t == "function_call":
            c = tool_call({"id": it.get("call_id", it.get("id")), "name": it.get("name"),
                           "arguments": it.get("arguments")})
            if c is not None:
                if out and out[-1]["role"] == "assistant":
                    out[-1] = {**out[-1], "tool_calls": [*out[-1].get("tool_calls", ()), c]}
                else:
                    out.append({"role": "assistant", "content": None, "tool_calls": [c]})
        elif t == "function_call_output":
            out.extend(normalize_message({"role": "tool", "content": it.get("output"), "tool_call_id": it.get("call_id")},
                                         "tool"))
        elif t in _MESSAGE_ITEMS or "role" in it:
            out.extend(normalize_message(it, "assistant" if t == "message" and "role" not in it else "user"))
    return out


def responses_output(resp: dict[str, Any]) -> tuple[Message | None, str | None]:
    """A Responses API object's answer: its output items as one assistant message, and a finish reason.

    The finish reason follows the chat-completions values, so that the same
    answer compares equal across the two APIs: ``tool_call`` when the output
    calls a function, ``stop`` for ``status: completed``, ``length`` for
    ``incomplete`` with reason ``max_output_tokens`` (another reason as
    given, else ``incomplete``), any other status as given.

    Returns:
        ``(message, finish_reason)``; a None message when the output holds no
        text and no function call.
    """
    items = resp.get("output")
    msgs = response_items(items) if type(items) is list else []
    msg = merge_output([m for m in msgs if m["role"] == "assistant"])
    if msg is not None and not msg.get("content") and not msg.get("tool_calls"):
        msg = None
    status = resp.get("status")
    finish: str | None
    if msg is not None and msg.get("tool_calls"):
        finish = "tool_call"
    elif status == "incomplete":
        det = resp.get("incomplete_details")
        reason = det.get("reason") if type(det) is dict else None
        finish = "length" if reason == "max_output_tokens" else normalize_finish_reason(reason) or "incomplete"
    elif status == "completed":
        finish = "stop"
    else:
        finish = normalize_finish_reason(status)
    return msg, finish
