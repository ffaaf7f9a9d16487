"""Values of an agent's event log as span fields: content as text, small objects as attributes, span
ids made unique. Shared by the readers of event lists (``openhands_run``, ``atif``).
"""

from __future__ import annotations

from typing import Any

from tracetui.core.readers.limits import dumps_any

__all__ = ["content_text", "message_text", "small_attrs", "unique_id"]


def unique_id(want: str, ids: set[str]) -> str:
    """A span id not in ``ids`` (``want``, else ``want#2``, ``want#3``...), added to ``ids``."""
    sid, n = want, 1
    while sid in ids:
        n += 1
        sid = f"{want}#{n}"
    ids.add(sid)
    return sid


def content_text(content: Any) -> Any:
    """Tool output / message content as text when it is text.

    A string stays as is; a list of text parts (``{type: text, text}``, ``TextContent``,
    ATIF ``ContentPart``) becomes their texts joined by newlines; a list with other parts
    (images) is kept whole as JSON; None stays None.
    """
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        texts: list[str] = []
        for p in content:
            if isinstance(p, str):
                texts.append(p)
            elif isinstance(p, dict) and p.get("type", "text") == "text" and isinstance(p.get("text"), str):
                texts.append(p["text"])
            else:
                return content
        return "\n".join(texts)
    return content


def message_text(value: Any) -> str | None:
    """``content_text`` forced to a string (JSON for non-text parts), for message ``content``."""
    value = content_text(value)
    if value is None or isinstance(value, str):
        return value
    return dumps_any(value).decode()


def small_attrs(d: Any, *, skip: frozenset[str] = frozenset(), limit: int = 200) -> dict[str, Any]:
    """The entries of a dict worth keeping as span attributes: scalars, short strings, small
    objects (not strings longer than ``limit`` nor values in ``skip``)."""
    if not isinstance(d, dict):
        return {}
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k in skip or v is None:
            continue
        if isinstance(v, str) and len(v) > limit:
            continue
        if isinstance(v, (dict, list)) and len(dumps_any(v)) > limit:
            continue
        out[k] = v
    return out
