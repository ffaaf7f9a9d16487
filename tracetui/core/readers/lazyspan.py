"""``LazySpan``: a ``Span`` whose ``data`` stays in the file until first read.

The index loader (``tracetui.core.load.native_index``) keeps, for each
span of a clean tracetui/1 line, the common fields, the line's byte range,
and what alignment and comparison need from the payload, computed while the
line was parsed:

- ``span_key`` (``tracetui.core.diff.align``): the alignment identity;
- a *payload signature*: a hash of the JSON bytes (orjson) of the kind's
  semantic fields that the span key does not cover (outputs, messages...;
  ``diff.compare.payload_sig``). Two spans of one kind with equal keys and equal
  signatures are an equivalent pair (``compare.screen_pairs`` skips them
  without reading either payload): equal JSON bytes mean equal values of
  equal types. Unequal signatures prove nothing: the pair is compared as any
  other (its payloads read);
- whether the span lacks captured content (``readers.tree.content_issues``).

``span.data`` reads the line again (``os.pread`` on a descriptor kept open
for the trace: a file replaced by rename keeps its old bytes), parses it and
keeps the section: from then on the span is an ordinary one. Everything
else (``Span``'s fields, ``==``, ``dataclasses.replace``, pickling) behaves
as with a ``Span`` holding the same data.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any, Mapping

import orjson

from tracetui.core.errors import SourceChanged
from tracetui.core.model import Span
from tracetui.core.readers.mask import mask_attributes, mask_data

__all__ = ["LazySpan", "PayloadFile", "export_record", "file_identity", "line_file", "make_lazy"]

_DATA = Span.__dict__["data"]  # the slot of Span.data (a member descriptor)
_get_data = _DATA.__get__
_set_data = _DATA.__set__
_ATTRS = Span.__dict__["attributes"]  # None until the payload pass of a span whose loader deferred it
_get_attrs = _ATTRS.__get__
_set_attrs = _ATTRS.__set__


class PayloadFile:
    """An open trace file the payloads of its ``LazySpan``s are read from.

    The descriptor is closed when the last span (and this object) is gone.
    """

    __slots__ = ("path", "fd", "opened", "opened_ns", "__weakref__")

    def __init__(self, path: str, fd: int | None = None, before: os.stat_result | None = None) -> None:
        """Opens ``path``, or takes ``fd`` (a descriptor of it, already open: closed with this object).

        ``opened``: the file's ``(device, inode, size, mtime_ns, ctime_ns)`` when it was opened (or ``before``,
        a ``stat`` of it taken before its bytes were read, when the caller read them first), and
        ``opened_ns``, the time then (ns since the epoch): ``core.load.index_cache`` keeps a read only of a file
        that has not changed since."""
        self.path = path
        self.opened_ns = time.time_ns()
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)) if fd is None else fd
        weakref.finalize(self, os.close, self.fd)
        st = before if before is not None else os.fstat(self.fd)
        self.opened = file_identity(st)

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` (fewer at end of file)."""
        return os.pread(self.fd, length, offset)


def file_identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of a ``stat``: what changes when a file is written,
    truncated, touched or replaced (times before 1970 taken modulo 2**64, so every field is unsigned)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns & _U64, st.st_ctime_ns & _U64


_U64 = 2**64 - 1
_LOCK = threading.Lock()  # two threads reading one span's payload at once: parse once


class LazySpan(Span):
    """A ``Span`` from the index loader: ``data`` is read from the file on first access.

    Extra attributes (not fields): ``_src`` (``PayloadFile``, or any object with a
    ``load(span) -> data`` method that also sets ``attributes``: the OTLP reader's
    payload pass), ``_off``/``_len`` (the line's bytes; for another source, what it
    says), ``_key`` (the ``span_key``, or None), ``_part`` (None, or the fields of
    ``data`` a span key reads, equal to ``data``'s: ``span_key`` computes the key from
    them), ``_sig`` (the payload signature, or None: unknown) and ``_miss`` (the span
    may lack captured content, as ``content_issues`` decides: False only when it
    surely does not). ``attributes`` may also wait for the first read (None in its
    slot until then). A copy made by ``dataclasses.replace`` holds its data and has
    no key or signature; so has a span whose ``data`` is set while ``_part`` is.
    """

    __slots__ = ("_src", "_off", "_len", "_key", "_sig", "_miss", "_part")

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # dataclasses.replace, copy, pickle
        self._src = None
        self._off = self._len = 0
        self._key = self._sig = self._part = None
        self._miss = False
        Span.__init__(self, *args, **kwargs)

    @property  # type: ignore[override]
    def data(self) -> Mapping[str, Any]:
        d = _get_data(self)
        if d is None:
            with _LOCK:
                d = _get_data(self)
                if d is None:
                    d = mask_data(self.kind, self._load())  # credentials masked (readers.mask)
                    _set_data(self, d)
                    a = _get_attrs(self)
                    if a:  # the payload pass of an OTLP source sets them: masked too
                        _set_attrs(self, mask_attributes(a))
        return d  # type: ignore[no-any-return]

    @data.setter
    def data(self, value: Mapping[str, Any]) -> None:
        if self._part is not None:  # the key and signature were of the data as read
            self._part = self._key = self._sig = None
        _set_data(self, value)

    @property  # type: ignore[override]
    def attributes(self) -> Mapping[str, Any]:
        a = _get_attrs(self)
        if a is None:
            self.data  # noqa: B018 (the payload pass sets both)
            a = _get_attrs(self)
        return a  # type: ignore[no-any-return]

    @attributes.setter
    def attributes(self, value: Mapping[str, Any]) -> None:
        _set_attrs(self, value)

    def peek_attributes(self) -> Mapping[str, Any] | None:
        """``attributes`` if the span holds them already, else None (an OTLP span whose payload pass
        has not run); never decodes the payload."""
        return _get_attrs(self)  # type: ignore[no-any-return]

    @property
    def loaded(self) -> bool:
        """Whether ``data`` has been read from the file."""
        return _get_data(self) is not None

    def _load(self) -> Mapping[str, Any]:
        src = self._src
        if src is None:
            return {}
        if type(src) is not PayloadFile:
            return src.load(self)  # type: ignore[no-any-return]
        raw = src.read(self._off, self._len)
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            obj = None
        if type(obj) is not dict or obj.get("span_id") != self.span_id:
            raise SourceChanged(src.path, "the file changed since it was read (this span's line is gone); "
                                "open the pair again", line=self.line)
        section = obj.get(self.kind.value)
        return {} if section is None else section

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        return _fields(self) == _fields(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Lazy" + Span.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the plain Span it stands for (payload read): a process that unpickles it may not have the file.
        return (Span, _fields(self))


def _fields(s: Span) -> tuple[Any, ...]:
    return (s.span_id, s.parent_id, s.seq, s.kind, s.name, s.start_ns, s.end_ns, s.status, s.error_type,
            s.data, s.attributes, s.trace_id, s.line)


def make_lazy(src: PayloadFile, recs: list[Any]) -> list[Any]:
    """Turn the index loader's records into ``LazySpan``s, in place; other items (``Span``s) stay.

    A record: ``(span_id, parent_id, seq, kind, name, start_ns, end_ns, status, error_type,
    attributes, trace_id, line, offset, length, key, sig, miss)``.
    """
    new = object.__new__
    cls = LazySpan
    for i, r in enumerate(recs):
        if type(r) is not tuple:
            continue
        s = new(cls)
        (s.span_id, s.parent_id, s.seq, s.kind, s.name, s.start_ns, s.end_ns, s.status, s.error_type,
         attrs, s.trace_id, s.line, s._off, s._len, s._key, s._sig, s._miss) = r
        _set_attrs(s, attrs)
        _set_data(s, None)
        s._part = None
        s._src = src
        recs[i] = s
    return recs


def export_record(span: Span) -> tuple[Any, ...] | None:
    """The ``make_lazy`` record of a ``LazySpan`` whose payload is a line of a ``PayloadFile`` (the index loader's
    spans), for ``make_lazy`` over the same file in another process or a later opening
    (``core.load.index_cache``); None for any other span (a plain ``Span``, an OTLP span: ``otlp_lazy.export_span``).
    The payload is not in the record: it is read from the line again, and its span id checked, on first use."""
    if type(span) is not LazySpan or type(span._src) is not PayloadFile:
        return None
    return (span.span_id, span.parent_id, span.seq, span.kind, span.name, span.start_ns, span.end_ns, span.status,
            span.error_type, _get_attrs(span), span.trace_id, span.line, span._off, span._len, span._key, span._sig,
            span._miss)


def line_file(span: Span) -> PayloadFile | None:
    """The ``PayloadFile`` a ``LazySpan`` of the index loader reads its line from; None for any other span."""
    return span._src if type(span) is LazySpan and type(span._src) is PayloadFile else None
