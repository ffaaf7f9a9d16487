"""Values of cassette rows: tool arguments (``decode_args``, ``hash_args``), errors, and the
assistant message and parameters of a model call.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from tracetui.core.canonical import args_hash
from tracetui.core.readers.openai_shapes import choice_output, usage_from
from tracetui.core.readers.otel_messages import (
    as_text,
    merge_output,
    normalize_finish_reason,
    normalize_message,
    normalize_messages,
)

__all__ = ["assistant_message", "decode_args", "error_name", "failed_error", "hash_args", "llm_payload", "put_arguments"]

# --- values ---------------------------------------------------------------------------------


def decode_args(v: Any) -> tuple[Any, int]:
    """Arguments as recorded -> ``(arguments, layers)``.

    ``{"city": "Paris"}``, ``'{"city": "Paris"}'`` (a JSON string) and
    ``'"{\\"city\\": \\"Paris\\"}"'`` (a JSON string of a JSON string: double
    encoded) all give the object; ``layers`` counts the string encodings undone
    (0, 1, 2). A string is decoded only when it holds a JSON object or array
    (directly, or inside a JSON string literal); anything else is kept.
    """
    layers = 0
    while isinstance(v, str) and layers < 4:
        s = v.strip()
        if s[:1] not in ("{", "[", '"'):
            break
        try:
            inner = orjson.loads(s)
        except orjson.JSONDecodeError:
            break
        if s[0] == '"' and not (isinstance(inner, str) and inner.lstrip()[:1] in ("{", "[")):
            break
        v = inner
        layers += 1
    return v, layers


_SORT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_MAYBE_JSON_STRING = re.compile(rb'"[\[{ \\\x80-\xff]')
"""In orjson's output, a string whose first character is ``{``, ``[``, whitespace
(escaped: a backslash) or non-ASCII (Unicode whitespace) — the only strings
``canonical.canonicalize`` may parse. A key or an escaped quote can match too:
that only costs the slow path."""


def hash_args(args: Any) -> str | None:
    """``canonical.args_hash(args)``, without the recursive ``canonicalize`` walk when the
    sorted serialisation shows no string that could hold JSON (same bytes then: JSON-loaded
    keys are already strings). ~3x faster on typical arguments. None when not JSON at all."""
    try:
        raw = orjson.dumps(args, option=_SORT)
    except TypeError:  # integers beyond 64 bits (kept exact by the loader): canonical's own fallback
        raw = None
    try:
        if raw is not None and _MAYBE_JSON_STRING.search(raw) is None:
            return hashlib.sha256(raw).hexdigest()[:16]
        return args_hash(args)
    except (TypeError, ValueError, RecursionError):
        return None



def put_arguments(data: dict[str, Any], args: Any) -> None:
    """Set a tool span's ``arguments`` to ``args`` (decoded) and its ``args_hash`` (``hash_args``;
    left out when the arguments are not JSON)."""
    data["arguments"] = args
    h = hash_args(args)
    if h is not None:
        data["args_hash"] = h


def error_name(err: Any) -> str:
    if isinstance(err, dict):
        for k in ("type", "name", "error_type", "errorType", "code"):
            v = err.get(k)
            if isinstance(v, str) and v:
                return v
    if isinstance(err, str) and re.fullmatch(r"[A-Za-z_][\w.]*(Error|Exception|Timeout)", err):
        return err
    return "error"


_ERROR_KEYS = frozenset({"error", "is_error", "isError", "status"})


def failed_error(row: dict[str, Any], result: Any) -> str | None:
    """The error type when a row (or its result object) marks the call failed, else None.

    Markers: a non-empty ``error`` on the row or on the result object,
    ``is_error``/``isError: true`` (MCP), ``status`` ``error``/``failed``.
    """
    if row.keys().isdisjoint(_ERROR_KEYS) and (type(result) is not dict or result.keys().isdisjoint(_ERROR_KEYS)):
        return None
    err = row.get("error")
    if err not in (None, False, "", {}, []):
        return error_name(err)
    if row.get("is_error") is True or row.get("isError") is True:
        return "error"
    st = row.get("status")
    if isinstance(st, str) and st.lower() in ("error", "failed", "failure"):
        return "error"
    if isinstance(result, dict):
        err = result.get("error")
        if err not in (None, False, "", {}, []):
            return error_name(err)
        if result.get("is_error") is True or result.get("isError") is True:
            return "error"
    return None


_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "parts"})


def assistant_message(v: Any) -> dict[str, Any]:
    """llm fields from a model response in any common shape.

    A string is the answer text; an OpenAI chat completion (``choices``) gives
    the first choice's message, finish reason, usage, id and model; a message
    (``role``/``content``/``tool_calls``, Anthropic content blocks too) is
    normalised; a list of messages is merged. Anything else becomes the text of
    its JSON, so the answer is never dropped.
    """
    d: dict[str, Any] = {}
    if isinstance(v, str):
        d["output"] = {"role": "assistant", "content": v}
        return d
    if isinstance(v, dict):
        msg, fr = choice_output(v)  # an OpenAI chat completion
        if msg is None and not _MESSAGE_KEYS.isdisjoint(v):  # a message
            msg = merge_output(normalize_message(v, "assistant"))
        if msg is not None:
            d["output"] = msg
        fr = fr or normalize_finish_reason(v.get("finish_reason", v.get("stop_reason")))
        if fr:
            d["finish_reason"] = fr
        usage = usage_from(v.get("usage"))
        if usage:
            d["usage"] = usage
        if isinstance(v.get("model"), str):
            d["model"] = v["model"]
        if isinstance(v.get("id"), str) and ("output" in d):
            d["response_id"] = v["id"]
        if "output" in d:
            return d
    elif isinstance(v, list):
        msgs = normalize_messages(v, "assistant")
        msg = merge_output(msgs) if msgs else None
        if msg is not None:
            d["output"] = msg
            return d
    if v is not None:
        d["output"] = {"role": "assistant", "content": as_text(v)}
    return d


_PARAMS = ("temperature", "top_p", "max_tokens", "max_output_tokens", "seed", "tool_choice", "stop")


def llm_payload(payload: Any) -> dict[str, Any]:
    """llm data from one model payload: a request and/or a response.

    ``{"messages"|"input": [...], "model", params..., "response"|"output"|"completion": ...}``
    or a bare response (see ``assistant_message``).
    """
    if not isinstance(payload, dict):
        return assistant_message(payload)
    req = payload.get("request") if isinstance(payload.get("request"), dict) else payload
    d: dict[str, Any] = {}
    msgs = req.get("messages")
    if msgs is None and isinstance(req.get("input"), list):
        msgs = req["input"]
    if msgs is not None:
        norm = normalize_messages(msgs)
        if norm is not None:
            d["messages"] = norm
    params = {k: req[k] for k in _PARAMS if k in req}
    if params:
        d["params"] = params
    if isinstance(req.get("model"), str):
        d["model"] = req["model"]
    resp = None
    for k in ("response", "output", "completion", "result"):
        if k in payload:
            resp = payload[k]
            break
    if resp is None and "messages" not in d and "request" not in payload:
        resp = payload  # the payload is the response itself
    if resp is not None:
        out = assistant_message(resp)
        if "model" in d:
            out.pop("model", None)
        d.update(out)
    return d
