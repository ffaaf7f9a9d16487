"""One inspect-ai sample's values, attachments resolved: its messages (each distinct one normalised
once), tool schema hashes, and the error and model names inspect writes. ``inspect_ai_sample``
maps the sample's events to spans on top of it.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from tracetui.core.canonical import args_hash
from tracetui.core.readers.otel_messages import Message, normalize_message

__all__ = ["SampleContent", "error_text", "python_error_type", "split_model"]

_ATTACHMENT = "attachment://"
_CONTENT_REF = "tc://"  # inspect's earlier name for attachment references
_ERROR_TYPE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Timeout|Cancelled\w*))\b")


def split_model(name: Any) -> tuple[str | None, str | None]:
    """inspect's ``provider/model`` -> ``(model, provider)``; a name without ``/`` has no provider."""
    if not isinstance(name, str) or not name:
        return None, None
    provider, sep, model = name.partition("/")
    return (model, provider) if sep and model else (name, None)


def python_error_type(message: Any) -> str | None:
    """The exception class a Python error text starts with (``RateLimitError('...')`` -> ``RateLimitError``)."""
    if not isinstance(message, str):
        return None
    m = _ERROR_TYPE.match(message)
    return m.group(1) if m else None


def error_text(err: Any) -> str | None:
    """An inspect error value (a string, or ``EvalError`` ``{message, traceback}``) as one line of text."""
    if isinstance(err, dict):
        err = err.get("message")
    return err if isinstance(err, str) and err else None


class SampleContent:
    """One sample's values with attachments resolved: messages (each distinct one normalised
    once), tool schema hashes. ``events`` is the sample's event list and ``att`` its attachments
    (``transcript.events`` / ``transcript.content`` in early logs); ``missing`` collects the
    attachment keys referenced but absent."""

    def __init__(self, sample: dict[str, Any]) -> None:
        events = sample.get("events")
        att = sample.get("attachments")
        transcript = sample.get("transcript")
        if events is None and isinstance(transcript, dict):  # early logs: transcript.events + transcript.content
            events = transcript.get("events")
            if att is None:
                att = transcript.get("content")
        self.events: list[Any] = events if isinstance(events, list) else []
        self.att: dict[str, Any] = att if isinstance(att, dict) else {}
        self.missing: set[str] = set()
        self.tool_hashes: dict[bytes, str | None] = {}
        self.seen: dict[tuple[str, str], tuple[Any, Any, Any, Any, list[Message]]] = {}

    # -- attachments --------------------------------------------------------------------

    def res(self, v: Any) -> Any:
        """``v`` with attachment references replaced; the same object when nothing changed."""
        t = type(v)
        if t is str:
            if v.startswith(_ATTACHMENT):
                key = v[len(_ATTACHMENT):]
            elif v.startswith(_CONTENT_REF):
                key = v[len(_CONTENT_REF):]
            else:
                return v
            found = self.att.get(key)
            if found is None:
                self.missing.add(key)
                return v
            return found
        if t is list:
            out: list[Any] | None = None
            for i, x in enumerate(v):
                y = self.res(x)
                if y is not x:
                    if out is None:
                        out = list(v)
                    out[i] = y
            return v if out is None else out
        if t is dict:
            dout: dict[str, Any] | None = None
            for k, x in v.items():
                y = self.res(x)
                if y is not x:
                    if dout is None:
                        dout = dict(v)
                    dout[k] = y
            return v if dout is None else dout
        return v

    def message(self, m: Any, default_role: str = "user") -> list[Message]:
        """An inspect ChatMessage as tracetui messages (attachments resolved; tool calls
        ``{id, function: <name>, arguments}`` are read by ``otel_messages.tool_call``)."""
        if not isinstance(m, dict):
            return normalize_message(self.res(m), default_role)
        content, calls, role, tcid = m.get("content"), m.get("tool_calls"), m.get("role"), m.get("tool_call_id")
        # Every model event repeats the conversation so far: a message seen before (same id and
        # same fields, compared in C) shares its normalised form instead of being rebuilt.
        mid = m.get("id")
        key = (mid, default_role) if isinstance(mid, str) else None
        if key is not None:
            hit = self.seen.get(key)
            if hit is not None and hit[0] == content and hit[1] == calls and hit[2] == role and hit[3] == tcid:
                return hit[4]
        src: dict[str, Any] = {"role": role, "content": self.res(content)}
        if isinstance(calls, list) and calls:
            src["tool_calls"] = self.res(calls)
        if tcid is not None:
            src["tool_call_id"] = tcid
        out = normalize_message(src, default_role)
        if key is not None:
            self.seen[key] = (content, calls, role, tcid, out)
        return out

    def messages(self, value: Any) -> list[Message] | None:
        """A model event's ``input`` (a string, or a list of ChatMessages) as messages; None when it is neither."""
        if isinstance(value, str):
            return [{"role": "user", "content": self.res(value)}]
        if not isinstance(value, list):
            return None
        out: list[Message] = []
        for m in value:
            out.extend(self.message(m))
        return out

    def output_message(self, output: Any) -> tuple[Message | None, Any]:
        """A ModelOutput's first choice as a message, and the choice (for ``stop_reason``)."""
        if not isinstance(output, dict):
            return None, None
        choices = output.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if choice is None:
            return None, None
        msgs = self.message(choice.get("message"), "assistant")
        msg = next((x for x in msgs if x.get("role") == "assistant"), msgs[0] if msgs else None)
        return msg, choice

    def tools_hash(self, tools: list[Any]) -> str | None:
        """``args_hash`` of the tool schemas, computed once per distinct list (every model
        event of a sample usually repeats the same tools)."""
        try:
            key = orjson.dumps(tools)
        except TypeError:
            return None
        if key not in self.tool_hashes:
            try:
                self.tool_hashes[key] = args_hash(self.res(tools))
            except TypeError:
                self.tool_hashes[key] = None
        return self.tool_hashes[key]
