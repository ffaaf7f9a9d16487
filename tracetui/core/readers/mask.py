"""Credentials a reader loaded, masked before anything shows or compares them (issue 21).

``diff``, ``show`` and the TUI print what readers load; a foreign trace carries credentials the
agent never meant as data: a password in a URL (``https://user:pass@host``), ``authorization`` /
``x-api-key`` / ``cookie`` header attributes, an ``api_key`` sent in an LLM request body, OAuth
secrets in a cassette's token exchange. ``mask_spans`` (called once per run by ``readers._finish``,
for every reader) and ``mask_data`` (called by ``LazySpan`` when it decodes a payload) replace
them with ``MASK`` — one constant, so a rotated key is no difference between two runs. A value
that already is a redaction token (``<SECRET_…>``, a file tracetui wrote) is kept as it is.

Cheap by design, not a redaction (``tracetui.core.harness.redact`` is, before anything is written):

- ``attributes``: every key (its last dotted segment, ``http.request.header.authorization``) and
  every string value (URL userinfo), one flat pass;
- ``data``: its top-level keys and strings, one level into ``params`` / ``request`` / ``headers``;
  the ``input`` / ``output`` of spans of kind ``other`` (HTTP interactions of cassettes) walked
  whole, with ``key=value`` / ``"key": "value"`` text inside their strings.

Not masked here (the redactor catches them when a file is written): secrets inside LLM messages,
tool arguments and outputs, and URLs below the top level of a payload.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from tracetui.core.model import Span, SpanKind
from tracetui.core.secret_names import is_secret_field, normalise_field

__all__ = ["MASK", "mask_attributes", "mask_data", "mask_spans", "mask_text"]

MASK = "<masked>"
"""What a masked credential reads as."""

_TOKEN = re.compile(r"<[A-Z_]+_[0-9a-f]{8}>\Z")  # a redaction token: already hidden, kept as it is
_USERINFO = re.compile(r"""(?<=://)([^\s/:@<>"']+):([^\s/@<>"']+)@""")
_KV = re.compile(r"""(?P<k>[A-Za-z][\w.-]{0,63})(?P<sep>["']?\s*[:=]\s*["']?)(?P<v>[^\s"'&,;}]+)""")
_NESTED = ("params", "request", "headers", "request_headers", "http_headers")
_names: dict[str, bool] = {}


def _secret(key: str) -> bool:
    got = _names.get(key)
    if got is None:
        last = key.rsplit(".", 1)[-1]
        got = is_secret_field(normalise_field(last))
        if len(_names) < 65536:
            _names[key] = got
    return got


def mask_text(s: str, *, fields: bool = False) -> str:
    """``s`` with URL userinfo passwords masked; with ``fields``, ``key=value`` / ``"key": "value"``
    of secret-named keys too (form bodies, JSON text). The same object when nothing changed."""
    if "://" in s and "@" in s:
        s = _USERINFO.sub(lambda m: f"{m.group(1)}:{MASK}@", s)
    if fields and ("=" in s or ":" in s):
        s = _KV.sub(lambda m: m.group(0) if not _secret(m.group("k")) or m.group("v") == MASK or m.group("v")[:1] == "<"
                    else m.group("k") + m.group("sep") + MASK, s)
    return s


def _flat(d: Mapping[str, Any]) -> dict[str, Any] | None:
    """A masked copy of a flat mapping, or None when nothing in it needs masking."""
    out: dict[str, Any] | None = None
    for k, v in d.items():
        if (type(k) is str and _secret(k) and v not in (None, "", MASK) and not isinstance(v, (bool, dict, list))
                and not (type(v) is str and _TOKEN.match(v))):
            nv: Any = MASK
        elif type(v) is str and "://" in v:
            nv = mask_text(v)
        elif type(v) is list and v and type(v[0]) is str and type(k) is str and _secret(k):
            nv = [MASK] * len(v)
        else:
            continue
        if nv is not v:
            if out is None:
                out = dict(d)
            out[k] = nv
    return out


def mask_attributes(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """``attributes`` with their credentials masked (module doc): the same mapping when nothing
    needed masking, else a masked copy. One flat pass."""
    got = _flat(attributes)
    return attributes if got is None else got


def _deep(v: Any, depth: int = 0) -> Any:
    """Every secret-named field and ``key=value`` text in ``v`` masked (the ``input``/``output`` of
    HTTP interactions); the same object when nothing changed."""
    t = type(v)
    if t is str:
        return mask_text(v, fields=True)
    if depth > 64:
        return v
    if t is dict:
        out = None
        for k, x in v.items():
            nx = MASK if (type(k) is str and _secret(k) and type(x) in (str, int, float) and x != ""
                          and not (type(x) is str and _TOKEN.match(x))) else _deep(x, depth + 1)
            if nx is not x:
                if out is None:
                    out = dict(v)
                out[k] = nx
        return v if out is None else out
    if t is list:
        items = [_deep(x, depth + 1) for x in v]
        return v if all(a is b for a, b in zip(items, v)) else items
    return v


def mask_data(kind: SpanKind, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A span's ``data`` with the credentials this module knows masked; ``data`` itself when none."""
    out = _flat(data)
    base = out if out is not None else data
    for key in _NESTED:
        sub = base.get(key)
        if isinstance(sub, Mapping):
            got = _flat(sub)
            if got is not None:
                if out is None:
                    out = dict(data)
                out[key] = got
                base = out
    if kind is SpanKind.OTHER:
        for key in ("input", "output"):
            if key in base:
                got = _deep(base[key])
                if got is not base[key]:
                    if out is None:
                        out = dict(data)
                    out[key] = got
                    base = out
    return data if out is None else out


def mask_spans(spans: Sequence[Span]) -> None:
    """Mask, in place, the credentials of every span (``attributes`` and ``data``; module doc).
    ``LazySpan`` payloads are masked when they are decoded: neither their ``data`` nor, where the
    payload pass sets them (OTLP), their ``attributes`` are read here, so no payload is decoded."""
    for s in spans:
        if not getattr(s, "loaded", True):  # a LazySpan not decoded yet: masked when it is
            peek = s.peek_attributes()  # type: ignore[attr-defined]
            if peek:
                got = _flat(peek)
                if got is not None:
                    s.attributes = got
            continue
        if s.attributes:
            got = _flat(s.attributes)
            if got is not None:
                s.attributes = got
        data = s.data
        if data:
            new = mask_data(s.kind, data)
            if new is not data:
                s.data = new
