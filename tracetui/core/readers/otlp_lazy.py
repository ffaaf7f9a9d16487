"""OTLP spans in two passes: the fields alignment needs at read time, the payloads on first use.

The OTLP reader (``otlp``) maps each span's attributes to tracetui fields. For a file
of ``LAZY_MIN_BYTES`` or more it runs only the *cheap pass* while reading
(``otel_attrs.key_fields_from_attributes``: kind, error type, the fields a span key
reads: a tool's name and arguments, an llm's model, a retrieval's index and query);
the *payload pass* (``payload_pass``: messages, arguments, results, outputs, the
leftover attributes) runs on the first read of the span's ``data`` or ``attributes``
(``LazySpan``, whose source is an ``OtlpPayloads``). Until then the span keeps its byte
range in the file (``otlp_fast.AT``; ``OtlpPayloads.load_range`` reads the bytes again
with ``os.pread`` on a descriptor kept open, ``kept_file``, decodes them as the read
did, and checks they are still the span's: its id and payload signature), or, read
on the careful path (no ranges), its decoded attributes and events. The span carries, besides:

- a payload signature (``signature``): a hash of the JSON bytes of the span's name,
  error status, events (names and attributes) and attributes but the ones the
  mapping reads only into volatile fields (``otel_attrs.VOLATILE_ONLY_ATTRIBUTES``:
  usage, response and call ids). The mapping is a function of exactly those, so two
  spans with equal signatures map to equal compared fields (``compare.screen_pairs``
  skips the pair with both payloads unread);
- whether it may lack captured content (``content_issues`` reads only those).

``payload_pass`` is the one place an OTLP span's values become tracetui fields, for
small files (at read time) and big ones (on first use) alike.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, BinaryIO

import orjson
import xxhash
from msgspec import Raw

from tracetui.core.errors import ReadError, SourceChanged
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.lazyspan import LazySpan, PayloadFile
from tracetui.core.readers.otlp_fast import KEY_RAW_KEYS, decoded
from tracetui.core.readers.otel_attrs import (
    VOLATILE_ONLY_ATTRIBUTES,
    key_fields_from_attributes,
    span_fields_from_attributes,
)

__all__ = ["LAZY_MIN_BYTES", "MESSAGE_EVENTS", "InMemory", "OtlpPayloads", "export_span", "kept_file", "payload_pass",
           "range_file", "signature"]

LAZY_MIN_BYTES = 4 << 20
"""Files this big or bigger get ``LazySpan``s (the size of tracetui/1's index loader)."""

MESSAGE_EVENTS = frozenset({
    "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message",
    "gen_ai.choice", "gen_ai.content.prompt", "gen_ai.content.completion"})
"""Events the mapping reads as messages (not kept in ``otel.events``)."""

Extras = tuple[Any, Any, Any, Any, Any]
"""``(otel span kind, status message, service.name, scope name, flags)``, as the reader found them."""
Reread = Callable[[bytes, str, Any, Any], "tuple[str | None, str, dict[str, Any], list[dict[str, Any]], bool, Extras] | None"]
"""``(span bytes, path, service.name, scope name)`` -> ``(span id, name, attributes, events, status is error,
extras)`` as the reader read them from those bytes, or None when they are not a span (``readers.otlp``)."""


def payload_pass(name: str, attrs: dict[str, Any], events: list[dict[str, Any]], status_error: bool,
                 extras: Extras) -> tuple[SpanKind, dict[str, Any], dict[str, Any], str | None]:
    """An OTLP span's attributes and events as tracetui fields.

    Returns:
        ``(kind, data, attributes, error_type)``: ``span_fields_from_attributes``' result,
        the leftover attributes completed with ``otel.span_kind``, ``otel.status_message``,
        ``service.name``, ``otel.scope.name``, ``otel.flags`` and ``otel.events`` (the
        events that are not messages).
    """
    kind, data, left, error_type = span_fields_from_attributes(name, attrs, events, status_error=status_error)
    otel_kind, status_msg, service, scope_name, flags = extras
    if otel_kind is not None:
        left["otel.span_kind"] = otel_kind
    if status_msg:
        left["otel.status_message"] = status_msg
    if service is not None and "service.name" not in left:
        left["service.name"] = service
    if scope_name:
        left["otel.scope.name"] = scope_name
    if type(flags) is int and flags:
        left["otel.flags"] = flags  # bits 8-9: the parent is remote (triage: not an orphan)
    if events:
        kept = [e for e in events if e["name"] not in MESSAGE_EVENTS]
        if kept:
            left["otel.events"] = kept
    return kind, data, left, error_type


_dumps = orjson.dumps
_xxh3 = xxhash.xxh3_64_intdigest
_Fragment = orjson.Fragment
_VOLATILE = VOLATILE_ONLY_ATTRIBUTES


def signature(name: str, attrs: dict[str, Any], events: list[dict[str, Any]], status_error: bool) -> int | None:
    """The payload signature of an OTLP span (module docstring); None when orjson cannot write a value."""
    kept = attrs if _VOLATILE.isdisjoint(attrs) else {k: v for k, v in attrs.items() if k not in _VOLATILE}
    ev = [(e["name"], e["attributes"]) for e in events] if events else None
    try:
        return _xxh3(_dumps((name, status_error, kept, ev), default=_raw), 1)  # seed 1: never payload_sig's
    except TypeError:
        return None


def _raw(v: Any) -> Any:
    """A payload ``otlp_fast`` kept as bytes, in a signature: its JSON, marked (never equal to a decoded value);
    written as it is (``orjson.Fragment``: not decoded, not escaped again)."""
    if type(v) is Raw:
        return {"\x00raw": _Fragment(bytes(v))}
    raise TypeError


_new = object.__new__
_NO_PART: Mapping[str, Any] = MappingProxyType({})
_LLM = SpanKind.LLM


class OtlpPayloads:
    """The source of one file's ``LazySpan``s: what each span's payload pass needs, until it runs.

    With ``file`` (the read's bytes located: ``otlp_fast.documents``), a span given its byte range
    (``at``) keeps only that: its payload pass reads the span's bytes again from ``file`` and decodes
    them (``reread``) as the read did. Without, or for a span without a range (the careful path), the
    span's decoded attributes and events are kept until then.
    """

    __slots__ = ("adopted", "file", "last", "parts", "pending", "reread", "scopes", "__weakref__")

    def __init__(self, file: Any = None, reread: Reread | None = None) -> None:
        self.pending: list[tuple[str, dict[str, Any], list[dict[str, Any]], bool, Extras] | None] = []
        self.file, self.reread = file, reread  # file: .path, .read(offset, length) -> bytes
        self.scopes: dict[Any, _Ranges] = {}
        self.parts: dict[str, Mapping[str, Any]] = {}  # an llm's key fields by model (never changed)
        self.last: tuple[Extras, _Ranges] | None = None
        self.adopted: tuple[Any, Any, _Ranges] | None = None  # the scope of the span adopted last

    def span(self, sid: str, parent: str | None, name: str, start: int | None, end: int | None, status: Status,
             attrs: dict[str, Any], events: list[dict[str, Any]], extras: Extras, tid: str | None,
             line: int | None, at: tuple[int, int] | None = None) -> LazySpan:
        """A ``LazySpan`` with the cheap pass's fields; the payload pass waits for the first read.

        ``at``: the span's ``(offset, length)`` in the file (``otlp_fast.AT``), or None."""
        err = status is Status.ERROR
        seen = attrs
        for k in KEY_RAW_KEYS:  # a payload otlp_fast kept as bytes that the cheap pass reads: decoded for it
            v = attrs.get(k)
            if type(v) is Raw:
                seen = {**seen, k: decoded(v)}
        kind, error_type, fields, miss = key_fields_from_attributes(name, seen, events, status_error=err)
        if not fields:
            part = _NO_PART  # the many spans whose key reads no field (agents...): one mapping for all
        elif kind is _LLM and len(fields) == 1 and type(fields.get("model")) is str:
            part = self.parts.setdefault(fields["model"], fields)  # one mapping for the llm spans of a model
        else:
            part = fields
        s = _new(LazySpan)
        s.span_id, s.parent_id, s.seq, s.kind, s.name = sid, parent, -1, kind, name or kind.value
        s.start_ns, s.end_ns, s.status, s.error_type, s.trace_id, s.line = start, end, status, error_type, tid, line
        s._key = s._part = None
        s.data = s.attributes = None  # type: ignore[assignment]  # read on first use
        s._part, s._sig, s._miss = part, signature(name, attrs, events, err), miss
        if at is not None and self.file is not None:  # kept: the byte range only
            src = self.last
            if src is None or src[0] is not extras:  # (extras: one tuple for the many spans alike)
                src = self.last = (extras, self._ranges(extras[2], extras[3]))
            s._src, s._off, s._len = src[1], at[0], at[1]
        else:
            s._src, s._off, s._len = self, len(self.pending), 0
            self.pending.append((name, attrs, events, err, extras))
        return s

    def _ranges(self, service: Any, scope_name: Any) -> _Ranges:
        """The source of the spans of one scope (its service and scope name, which the span's bytes lack)."""
        key = (service, scope_name)
        try:
            got = self.scopes.get(key)
        except TypeError:  # a service.name that is a list or an object
            return _Ranges(self, *key)
        if got is None:
            got = self.scopes[key] = _Ranges(self, *key)
        return got

    def export(self, span: LazySpan) -> tuple[Any, ...]:
        """A span of this source as a picklable record (its fields, what ``span`` computed, the payload kept for
        the payload pass), for ``adopt`` in another process (``core.load.otlp_early``: the replay's spans made
        in a child; ``core.load.read_child``: a whole read made in a child)."""
        pending = self.pending[span._off]
        if pending is None:  # its payload pass has run (the tie order read it): its fields instead
            pending = (span.data, span.attributes)
        return _record(span, pending, None)

    def adopt(self, rec: tuple[Any, ...], key: tuple[Any, ...] | None = None) -> LazySpan:
        """The ``LazySpan`` an ``export`` record (of an ``OtlpPayloads`` or a ``_Ranges``) describes, its payload
        pass run here on first read. A span kept as its byte range reads it from this source's ``file``, which
        must be the file the exporting process read (``core.load.read_child`` checks). ``key``: its ``span_key``
        when the exporting side computed it (kept only for a span with key fields: the key of those fields)."""
        s = _new(LazySpan)
        s._key = s._part = None
        (s.span_id, s.parent_id, s.seq, s.kind, s.name, s.start_ns, s.end_ns, s.status, s.error_type, s.trace_id,
         s.line, part, sig, miss, pending, rng) = rec
        if rng is not None:  # kept as its byte range: (offset, length, service, scope name)
            if self.file is None:
                raise ValueError(f"span {s.span_id}: a byte range adopted by a source without a file")
            s.data = s.attributes = None  # type: ignore[assignment]  # read on first use
            last = self.adopted
            if last is None or last[0] != rng[2] or last[1] != rng[3]:  # (the many spans of one scope: one lookup)
                last = self.adopted = (rng[2], rng[3], self._ranges(rng[2], rng[3]))
            s._src, s._off, s._len = last[2], rng[0], rng[1]
        else:
            s._src, s._off, s._len = self, len(self.pending), 0
            loaded = len(pending) == 2
            s.data, s.attributes = pending if loaded else (None, None)  # type: ignore[assignment]
            self.pending.append(None if loaded else pending)
        # after ``data`` is set (its setter drops a key and signature set before)
        s._part, s._sig, s._miss = (part or _NO_PART) if part is not None else None, sig, miss
        if key is not None and part is not None:
            s._key = key
        return s

    def load(self, span: Span) -> dict[str, Any]:
        """The payload pass of ``span`` (a ``LazySpan`` of this source): sets its ``attributes``, returns
        its ``data``. The kept attributes are dropped: the span holds its fields from now on."""
        i = span._off  # type: ignore[attr-defined]
        got = self.pending[i]  # (LazySpan.data calls this once per span, under its lock)
        if got is None:
            raise RuntimeError(f"span {span.span_id}: payload pass run twice")
        self.pending[i] = None
        return _mapped(span, *got)

    def load_range(self, span: Span, service: Any, scope_name: Any) -> dict[str, Any]:
        """``load`` of a span kept as its byte range: read again and checked (the same span id and payload
        signature), then mapped.

        Raises:
            SourceChanged: the bytes there are no longer this span's (the file was rewritten in place).
            ReadError: the file cannot be read.
        """
        f = self.file
        try:
            raw = f.read(span._off, span._len)  # type: ignore[attr-defined]
        except OSError as exc:
            raise ReadError(f.path, f"cannot be read again: {exc.strerror or exc}") from None
        got = self.reread(raw, f.path, service, scope_name) \
            if self.reread is not None and len(raw) == span._len else None  # type: ignore[attr-defined]
        sig = span._sig  # type: ignore[attr-defined]
        if got is None or got[0] != span.span_id or sig is not None and signature(*got[1:5]) != sig:
            raise SourceChanged(f.path, f"the file changed since it was read (span {span.span_id}'s bytes are "
                                "not the same); open the pair again", line=span.line)
        return _mapped(span, *got[1:])


class _Ranges:
    """The ``LazySpan`` source of the spans of one scope kept as byte ranges (``OtlpPayloads.load_range``)."""

    __slots__ = ("payloads", "scope_name", "service")

    def __init__(self, payloads: OtlpPayloads, service: Any, scope_name: Any) -> None:
        self.payloads, self.service, self.scope_name = payloads, service, scope_name

    def load(self, span: Span) -> dict[str, Any]:
        return self.payloads.load_range(span, self.service, self.scope_name)

    def export(self, span: LazySpan) -> tuple[Any, ...]:
        """``OtlpPayloads.export`` of a span kept as its byte range: the range, not the payload (loaded: its
        fields)."""
        if span.loaded:
            return _record(span, (span.data, span.attributes), None)
        return _record(span, None, (span._off, span._len, self.service, self.scope_name))


def export_span(span: Span) -> tuple[Any, ...] | None:
    """The ``OtlpPayloads.export`` record of an OTLP ``LazySpan`` (of an ``OtlpPayloads`` or of a scope's byte
    ranges), for ``OtlpPayloads.adopt`` in another process; None for any other span."""
    src = getattr(span, "_src", None)
    if type(src) is OtlpPayloads or type(src) is _Ranges:
        return src.export(span)  # type: ignore[arg-type]
    return None


def range_file(span: Span) -> Any:
    """The file (``PayloadFile`` or ``InMemory``) an OTLP ``LazySpan`` kept as its byte range reads; else None."""
    src = getattr(span, "_src", None)
    return src.payloads.file if type(src) is _Ranges else None


def _record(span: LazySpan, pending: Any, rng: tuple[int, int, Any, Any] | None) -> tuple[Any, ...]:
    part = span._part  # a dict sent as it is: spans sharing one share it after a pickle too
    return (span.span_id, span.parent_id, span.seq, span.kind, span.name, span.start_ns, span.end_ns, span.status,
            span.error_type, span.trace_id, span.line, None if part is None else part if type(part) is dict else
            dict(part), span._sig, span._miss, pending, rng)


def _mapped(span: Span, name: str, attrs: dict[str, Any], events: list[dict[str, Any]], err: bool,
            extras: Extras) -> dict[str, Any]:
    """The payload pass of ``span``: sets its ``attributes``, returns its ``data``."""
    if any(type(v) is Raw for v in attrs.values()):  # payloads otlp_fast kept as bytes
        attrs = {k: decoded(v) if type(v) is Raw else v for k, v in attrs.items()}
    _kind, data, left, _error_type = payload_pass(name, attrs, events, err, extras)
    span.attributes = left
    return data


def kept_file(path: str, data: bytes, fh: BinaryIO | None, before: os.stat_result | None = None
              ) -> PayloadFile | InMemory:
    """The ``file`` of an ``OtlpPayloads`` for ``data``, the bytes of ``path`` read through ``fh``: a
    ``PayloadFile`` on a new descriptor of ``fh`` when it is a regular file (the spans' bytes are read
    again with ``os.pread``: a file replaced by rename still gives its old bytes; no ``mmap``, which kills
    the process with SIGBUS when the file is truncated); else ``data`` itself, kept (``InMemory``).
    ``before``: ``fh``'s ``stat`` taken before ``data`` was read (``PayloadFile.opened``)."""
    try:
        if fh is not None and stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return PayloadFile(path, os.dup(fh.fileno()), before)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):  # not a real file (BytesIO)
        pass
    return InMemory(path, data)


class InMemory:
    """A file's bytes as the ``file`` of ``OtlpPayloads``, when the file cannot be read again (a pipe, or
    ``OtlpJsonReader.read`` given bytes): kept whole."""

    __slots__ = ("data", "path")

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset``."""
        return self.data[offset:offset + length]
