"""A big OTLP/JSON file decoded with msgspec: typed Structs, each span located in the file.

``readers.otlp`` reads a file of ``otlp_lazy.LAZY_MIN_BYTES`` or more through
``documents``: the document (or each Collector JSON Lines line) is decoded by
``msgspec.json`` with each scope's spans left as ``msgspec.Raw`` (their bytes, not
decoded), and each span is found in the file where the last one ended (the next ``{``
after a comma and white space, checked to start the span's exact bytes; an array's first
span by a search for its bytes): its byte range, ``(offset, length)``, goes with its dict
under ``AT``. The spans are then decoded one by one, 2,048 at a time (``SpanDicts``: the
Structs of a whole document never exist at once), each attribute a ``KeyValue(key, value:
msgspec.Raw)``. A value is parsed at once (msgspec, exact integers of any size) and
decoded as an AnyValue, except a string AnyValue of ``RAW_MIN_BYTES`` or more under a
key in ``RAW_KEYS`` (outputs, tool results, retrieved documents, input messages), which
stays a ``msgspec.Raw`` until the payload pass (``otlp_lazy``'s ``decoded``; the cheap
pass decodes the one ``KEY_RAW_KEYS`` names for itself and drops it). The reader keeps a
span's byte range, not its attributes: its payload pass reads the bytes again from the
file (``span_dict``, the same decoding), so neither the file's bytes nor the decoded
attributes stay in memory. ``documents`` gives the same ``(line, object)`` pairs
``json_values.load_json_or_jsonl`` gives (one line, a pretty-printed document, or JSON
Lines), with every ``attributes`` list already flat (``{key: value}``) and each scope's
spans a ``SpanDicts`` (each span's dict built when reached), so the reader's own span
code runs unchanged.

Whenever the careful path (``jsondoc``) could read the file differently or report
something, ``Doubt`` is raised (by ``documents``, or while the values are iterated) and
the reader starts again on it: a BOM; anything msgspec refuses (not JSON, bare ``NaN``,
an attribute without a string key, a torn last line, a top-level array); a blank line in
JSON Lines; a line without ``resourceSpans``; an integer beyond 64 bits outside the kept
payloads; and a count of ``:`` in the text that the decoded Structs, written back, do not
reach (counted outside the spans by ``_decoded``, inside them as they are decoded; a duplicate key, whose dropped value takes a colon with it, or a field the Structs
do not name: snake_case or legacy keys such as ``resource_spans`` or
``instrumentationLibrarySpans``). ``BadValue`` from an attribute does the same.

Known blind spot: a duplicate key or an integer beyond 64 bits *inside* a kept
payload is read as the careful path reads it (last value; exact) but not reported.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Callable, Iterator
from typing import Any, Union

import msgspec
from msgspec import UNSET, Raw, UnsetType

__all__ = ["AT", "KEY_RAW_KEYS", "RAW_KEYS", "RAW_MIN_BYTES", "Doubt", "QuickSpans", "SpanDicts", "documents",
           "SpanHead", "quick_documents", "span_dict"]

RAW_KEYS = frozenset({"gen_ai.output.messages", "gen_ai.tool.call.result", "output.value",
                      "gen_ai.retrieval.documents", "gen_ai.input.messages"})
"""Attributes kept as bytes: the cheap pass (``otel_attrs.key_fields_from_attributes``) never
reads them but for ``KEY_RAW_KEYS`` (and a kept value is truthy, as its string is)."""
KEY_RAW_KEYS = frozenset({"gen_ai.input.messages"})
"""Kept attributes the cheap pass reads (an llm's first input message: content captured?):
``otlp_lazy.OtlpPayloads.span`` decodes them for it, and keeps the bytes."""
RAW_MIN_BYTES = 256
"""A kept payload's least size (its AnyValue's JSON): smaller values are decoded at once."""

_BOM = b"\xef\xbb\xbf"
_STR_HEAD = re.compile(rb'\{\s*"stringValue"\s*:\s*"').match
_STR_TAIL = re.compile(rb'.*"\s*\}\Z', re.S).match  # from 64 bytes before the end
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
_CHUNK = 2048
_SHORT = 64
"""Strings this long or shorter (span names, trace ids, short attribute values) are interned: a 1M-span
file repeats a few of them a million times."""
_intern = sys.intern
AT = "\x00at"
"""The key of a span dict's byte range in the file, ``(offset, length)`` (no OTLP field is named so)."""


class Doubt(Exception):
    """The careful path (``jsondoc``) may read this file differently or report something: use it."""


class KeyValue(msgspec.Struct):
    key: str
    value: Raw = Raw(b"null")


class Event(msgspec.Struct):
    name: Any = UNSET
    timeUnixNano: Any = UNSET
    attributes: Union[list[KeyValue], UnsetType] = UNSET
    droppedAttributesCount: Any = UNSET


class Span(msgspec.Struct):
    traceId: Any = UNSET
    spanId: Any = UNSET
    parentSpanId: Any = UNSET
    name: Any = UNSET
    kind: Any = UNSET
    startTimeUnixNano: Any = UNSET
    endTimeUnixNano: Any = UNSET
    attributes: Union[list[KeyValue], UnsetType] = UNSET
    events: Union[list[Event], UnsetType] = UNSET
    status: Any = UNSET
    flags: Any = UNSET
    traceState: Any = UNSET
    links: Any = UNSET
    droppedAttributesCount: Any = UNSET
    droppedEventsCount: Any = UNSET
    droppedLinksCount: Any = UNSET


class SpanHead(msgspec.Struct):
    """What ``quick_documents(heads=True)`` decodes of every span: its ids and start (the rest is skipped)."""

    traceId: Any = UNSET
    spanId: Any = UNSET
    parentSpanId: Any = UNSET
    startTimeUnixNano: Any = UNSET


class Scope(msgspec.Struct):
    name: Any = UNSET
    version: Any = UNSET
    attributes: Any = UNSET
    droppedAttributesCount: Any = UNSET


class ScopeSpans(msgspec.Struct):
    scope: Union[Scope, UnsetType] = UNSET
    spans: Union[list[Raw], UnsetType] = UNSET  # decoded a chunk at a time (SpanDicts)
    schemaUrl: Any = UNSET


class Resource(msgspec.Struct):
    attributes: Union[list[KeyValue], UnsetType] = UNSET
    droppedAttributesCount: Any = UNSET


class ResourceSpans(msgspec.Struct):
    resource: Union[Resource, UnsetType] = UNSET
    scopeSpans: Union[list[ScopeSpans], UnsetType] = UNSET
    schemaUrl: Any = UNSET


class TracesData(msgspec.Struct):
    resourceSpans: Union[list[ResourceSpans], UnsetType] = UNSET


class _WholeScopeSpans(msgspec.Struct):  # quick_documents: every span decoded at once
    scope: Union[Scope, UnsetType] = UNSET
    spans: Union[list[Span], UnsetType] = UNSET
    schemaUrl: Any = UNSET


class _WholeResourceSpans(msgspec.Struct):
    resource: Union[Resource, UnsetType] = UNSET
    scopeSpans: Union[list[_WholeScopeSpans], UnsetType] = UNSET
    schemaUrl: Any = UNSET


class _WholeTracesData(msgspec.Struct):
    resourceSpans: Union[list[_WholeResourceSpans], UnsetType] = UNSET


_decode_doc = msgspec.json.Decoder(TracesData).decode
_decode_whole_doc = msgspec.json.Decoder(_WholeTracesData).decode
_decode_span = msgspec.json.Decoder(Span).decode
_decode_head = msgspec.json.Decoder(SpanHead).decode
_decode_any = msgspec.json.decode
_encode = msgspec.json.encode


def documents(data: bytes, anyvalue: Callable[[Any], Any]) -> tuple[Iterator[tuple[int | None, Any]], bool]:
    """The file's values as ``json_values.load_json_or_jsonl`` gives them, attributes flat.

    Args:
        data: The whole file.
        anyvalue: ``readers.otlp.anyvalue`` (an AnyValue to a plain value; raises ``BadValue``).

    Returns:
        ``(values, several)``: an iterator of ``(line, value)`` (each value built as it
        is reached; raises ``BadValue`` or ``Doubt`` then) and whether the file is JSON Lines.
        Each span dict also holds, under ``AT``, the span's byte range in ``data``:
        ``(offset, length)``, the bytes ``span_dict`` reads back as the same dict.

    Raises:
        Doubt: the careful path may read the file differently (module docstring).
    """
    mv, end, nl, several = _layout(data)
    flat = _Flat(anyvalue)
    if several:  # each line decoded when reached: one line's Structs at a time
        return ((i, flat.value(doc)) for i, doc in _lines(data, mv, end)), True
    try:
        doc = _decoded(data, mv, 0, end)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise Doubt from None
    return iter([(None if nl >= 0 else 1, flat.value(doc))]), False


def span_dict(raw: bytes, anyvalue: Callable[[Any], Any]) -> dict[str, Any]:
    """One span's bytes (a range ``documents`` gave under ``AT``) as the reader's dict, as ``documents``
    gave it then (without ``AT``).

    Raises:
        Doubt, BadValue: ``raw`` is not such a span (the file changed).
    """
    try:
        sp = _decode_span(raw)
    except msgspec.DecodeError:  # ValidationError too
        raise Doubt from None
    if _odd(sp):
        raise Doubt
    return _Flat(anyvalue).span(sp)


def _lines(data: bytes, mv: memoryview, end: int) -> Iterator[tuple[int, TracesData]]:
    """``(line number, Structs)`` of each JSON Lines line; ``Doubt`` on a blank or refused line."""
    for i, a, stop in _line_ranges(data, end):
        try:
            yield i, _decoded(data, mv, a, stop)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise Doubt from None


def _layout(data: bytes) -> tuple[memoryview, int, int, bool]:
    """``(view, end, first newline, JSON Lines?)`` of a file: ``end`` leaves out trailing white space (no copy of
    the file: rstrip would make one); JSON Lines when the first line is a whole value (jsondoc's rule), else one
    document. ``Doubt`` on a BOM."""
    if data[:3] == _BOM:
        raise Doubt
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":
        end -= 1
    mv = memoryview(data)
    nl = data.find(b"\n", 0, end)
    several = nl >= 0
    if several:
        try:
            _decode_any(mv[:nl])
        except msgspec.DecodeError:
            several = False
    return mv, end, nl, several


def _line_ranges(data: bytes, end: int) -> Iterator[tuple[int, int, int]]:
    """``(line number, start, stop)`` of each JSON Lines line of ``data[:end]`` (CRLF left out); ``Doubt`` on a
    blank line."""
    a, i = 0, 1
    while a <= end:
        b = data.find(b"\n", a, end)
        b = end if b < 0 else b
        stop = b - 1 if b > a and data[b - 1] == 13 else b  # CRLF
        if stop - a < 64 and not data[a:stop].strip():
            raise Doubt
        yield i, a, stop
        a, i = b + 1, i + 1


def _decoded(data: bytes, mv: memoryview, a: int, b: int) -> TracesData:
    """The document ``data[a:b]`` as Structs, each scope's ``spans`` a triple ``(Raws, offsets, colons)``:
    the spans' bytes, not decoded yet, where each starts in ``data``, and the count of the colons they hold
    (``_Colons``, checked as they are decoded: ``SpanDicts``); the colons outside the spans checked here."""
    doc = _decode_doc(mv[a:b])
    if doc.resourceSpans is UNSET:
        raise Doubt
    cursor = a
    outside = 0  # the colons of data[a:b] outside every span's bytes
    held = []
    spans = 0
    for rs in doc.resourceSpans:
        if rs.scopeSpans is UNSET:
            continue
        for ss in rs.scopeSpans:
            raws = ss.spans
            if raws is UNSET:
                continue
            at, cursor, between = _locate(data, raws, cursor, b)
            outside += between
            held.append((ss, raws, at))
            spans += len(raws)
            ss.spans = []
    outside += data.count(b":", cursor, b)
    n = _encode(doc).count(b":")  # "spans":[] counts the colon the text has
    if n != outside:
        raise Doubt
    colons = _Colons(data.count(b":", a, b) - outside, spans)
    for ss, raws, at in held:
        ss.spans = (raws, at, colons)  # type: ignore[assignment]  # (SpanDicts reads them)
    return doc


_SEP = re.compile(rb"[\s,]*\Z").match  # between two spans of one array: a comma and white space


def _located(data: bytes, doc: TracesData, a: int, b: int) -> None:
    """Each scope's ``spans`` of ``doc`` (the document ``data[a:b]``) made ``(Raws, offsets)`` (``_locate``)."""
    cursor = a
    for rs in doc.resourceSpans:  # type: ignore[union-attr]
        if rs.scopeSpans is UNSET:
            continue
        for ss in rs.scopeSpans:
            if ss.spans is not UNSET:
                at, cursor, _ = _locate(data, ss.spans, cursor, b)
                ss.spans = (ss.spans, at)  # type: ignore[assignment]


def _locate(data: bytes, raws: list[Raw], cursor: int, b: int) -> tuple[array, int, int]:
    """``(offsets, end, colons)``: where each of a scope's spans (``raws``, in file order) starts in ``data``, each
    found after the last one from ``cursor`` (the next ``{`` after a comma and white space, checked to start its
    bytes; an array's first span by a search for its bytes, before ``b``), where the last one ends, and the
    colons passed over outside the spans. ``Doubt`` when a span's bytes are not there."""
    find, count, startswith = data.find, data.count, data.startswith
    at = array("q")
    outside = 0
    for raw in raws:
        p = find(b"{", cursor, b)
        if p < 0 or not (p - cursor == 1 and data[cursor] == 44 or _SEP(data, cursor, p)) \
                or not startswith(raw, p):  # an array's first span: found by its bytes
            p = find(raw, cursor, b)
            if p < 0:
                raise Doubt
            outside += count(b":", cursor, p)
        at.append(p)
        cursor = p + len(raw)
    return at, cursor, outside


def _odd(sp: Span) -> bool:
    """Whether an integer beyond 64 bits is in a span's values decoded here (not its attributes)."""
    for v in (sp.startTimeUnixNano, sp.endTimeUnixNano, sp.traceId, sp.spanId, sp.parentSpanId, sp.flags):
        if type(v) is int and not _INT_MIN <= v <= _INT_MAX:
            return True
    if type(sp.kind) is int and not _INT_MIN <= sp.kind <= _INT_MAX:
        return True
    st = sp.status
    if st is not UNSET and not (type(st) is dict and len(st) == 1 and type(st.get("code")) is int
                                and 0 <= st["code"] <= 2) and _big(st):
        return True
    if sp.events is not UNSET and any(_big(e.timeUnixNano) or _big(e.name) for e in sp.events):
        return True
    return sp.links is not UNSET and _big(sp.links) or _big(sp.traceState) or _big(sp.droppedAttributesCount)


def _big(v: Any) -> bool:
    """Whether an integer beyond 64 bits is anywhere in a plain value."""
    t = type(v)
    if t is int:
        return not _INT_MIN <= v <= _INT_MAX
    if t is list:
        return any(_big(x) for x in v)
    if t is dict:
        return any(_big(x) for x in v.values())
    return False


class _Colons:
    """The colons the spans of one document hold in the file, and how many of its spans are not decoded yet:
    the spans' Structs written back must reach the count when the last is decoded (module docstring)."""

    __slots__ = ("left", "spans")

    def __init__(self, left: int, spans: int) -> None:
        self.left, self.spans = left, spans


class SpanDicts:
    """A scope's spans as the reader's dicts, each built when reached: decoded from their bytes a chunk at
    a time (the Structs of a whole document never exist at once), their colons counted then (``_Colons``);
    each dict holds its span's byte range under ``AT``."""

    __slots__ = ("at", "colons", "make", "raws")

    def __init__(self, raws: list[Raw], at: array, colons: _Colons, make: Callable[[Span], dict[str, Any]]) -> None:
        self.raws, self.at, self.colons, self.make = raws, at, colons, make

    def __iter__(self) -> Iterator[dict[str, Any]]:
        raws, at, colons, make = self.raws, self.at, self.colons, self.make
        self.raws = []
        decode = _decode_span
        for i in range(0, len(raws), _CHUNK):
            chunk = raws[i:i + _CHUNK]
            raws[i:i + _CHUNK] = [None] * len(chunk)  # type: ignore[list-item]
            try:
                structs = [decode(r) for r in chunk]
            except msgspec.ValidationError:  # a value of the wrong type
                raise Doubt from None
            colons.left -= _encode(structs).count(b":")
            colons.spans -= len(chunk)
            if colons.left < 0 or not colons.spans and colons.left:
                raise Doubt
            for j, sp in enumerate(structs):
                if _odd(sp):
                    raise Doubt
                structs[j] = None  # type: ignore[call-overload]
                d = make(sp)
                d[AT] = (at[i + j], len(chunk[j]))
                yield d


class QuickSpans:
    """A scope's spans for ``quick_documents``: ``structs``, every span's ``Span`` Struct (with ``heads``: its
    ``SpanHead`` Struct, with ``raws``, its bytes, and ``at``, where each starts in the file), and ``make``, a
    ``Span`` Struct to the reader's span dict (``_Flat.span``). ``whole(i)`` is span ``i``'s ``Span`` Struct
    either way, ``dict(i)`` its dict (with its byte range under ``AT`` when known)."""

    __slots__ = ("at", "make", "raws", "structs")

    def __init__(self, structs: list[Any], make: Callable[[Span], dict[str, Any]],
                 raws: list[Raw] | None = None, at: array | None = None) -> None:
        self.structs, self.make, self.raws, self.at = structs, make, raws, at

    def whole(self, i: int) -> Span:
        """Span ``i``'s ``Span`` Struct (decoded from its bytes now when only heads were).

        Raises:
            msgspec.DecodeError, msgspec.ValidationError: its bytes are not a span (cannot happen for bytes
                the document's decode accepted).
        """
        return self.structs[i] if self.raws is None else _decode_span(self.raws[i])

    def dict(self, i: int) -> dict[str, Any]:
        """Span ``i``'s dict as ``documents`` gives it: under ``AT`` its byte range, when known (``heads``)."""
        d = self.make(self.whole(i))
        if self.at is not None:
            d[AT] = (self.at[i], len(self.raws[i]))  # type: ignore[index]
        return d


class _Flat:
    """Documents as Structs to ``{"resourceSpans": [...]}`` with flat attribute dicts."""

    __slots__ = ("anyvalue",)

    def __init__(self, anyvalue: Callable[[Any], Any]) -> None:
        self.anyvalue = anyvalue

    def value(self, doc: Any, quick: bool | str = False) -> dict[str, Any]:
        """The plain value; raises ``BadValue`` (an attribute ``anyvalue`` refuses) or ``Doubt``. ``quick``: a
        ``_WholeTracesData`` (``quick_documents``), each scope's spans a ``QuickSpans``; ``"heads"``: a
        ``TracesData`` whose spans are bytes, each scope's spans a ``QuickSpans`` of their heads."""
        out = []
        attrs = self.attrs
        for rs in doc.resourceSpans:  # type: ignore[union-attr]
            d: dict[str, Any] = {}
            if rs.resource is not UNSET:
                res = rs.resource.attributes
                d["resource"] = {"attributes": attrs(res)} if res is not UNSET else {}
            if rs.scopeSpans is not UNSET:
                sss = []
                for ss in rs.scopeSpans:
                    s: dict[str, Any] = {}
                    if ss.scope is not UNSET:
                        s["scope"] = {"name": ss.scope.name} if ss.scope.name is not UNSET else {}
                    if ss.spans is not UNSET and quick == "heads":  # the spans' bytes: their heads decoded
                        raws, at = ss.spans  # type: ignore[misc]  # (quick_documents located them)
                        s["spans"] = QuickSpans([_decode_head(r) for r in raws], self.span, raws, at)
                    elif ss.spans is not UNSET and quick:
                        s["spans"] = QuickSpans(ss.spans, self.span)
                    elif ss.spans is not UNSET:
                        raws, at, colons = ss.spans  # type: ignore[misc]  # (_decoded's)
                        s["spans"] = SpanDicts(raws, at, colons, self.span)
                    sss.append(s)
                d["scopeSpans"] = sss
            out.append(d)
        return {"resourceSpans": out}

    def span(self, sp: Span) -> dict[str, Any]:
        """A span as the reader's dict (flat attributes)."""
        d = {k: v for k, v in (
            ("traceId", sp.traceId), ("spanId", sp.spanId), ("parentSpanId", sp.parentSpanId), ("name", sp.name),
            ("kind", sp.kind), ("startTimeUnixNano", sp.startTimeUnixNano), ("endTimeUnixNano", sp.endTimeUnixNano),
            ("status", sp.status), ("flags", sp.flags)) if v is not UNSET}
        if type(sp.name) is str and len(sp.name) <= _SHORT:
            d["name"] = _intern(sp.name)
        if type(sp.traceId) is str:
            d["traceId"] = _intern(sp.traceId)
        if sp.attributes:
            d["attributes"] = self.attrs(sp.attributes, keep=True)
        if sp.events:
            attrs = self.attrs
            d["events"] = [{k: v for k, v in (("name", e.name), ("timeUnixNano", e.timeUnixNano),
                                              ("attributes", attrs(e.attributes) if e.attributes else UNSET))
                            if v is not UNSET} for e in sp.events]  # type: ignore[union-attr]
        return d

    def attrs(self, kvs: Any, keep: bool = False) -> dict[str, Any]:
        """``{key: value}``, as ``readers.otlp`` decodes a KeyValue list; a kept payload as its Raw.

        The values not kept are parsed in one msgspec call (a JSON array of their bytes)."""
        out: dict[str, Any] = {}
        keys, raws = [], []
        for kv in kvs:
            key, raw = _intern(kv.key), kv.value  # a key is one object for the whole file
            if not key:
                raise Doubt  # the careful path reports it
            if keep and key in RAW_KEYS and len(raw) >= RAW_MIN_BYTES:
                b = memoryview(raw)  # no copy
                if _STR_HEAD(b) and _STR_TAIL(b, len(b) - 64):  # {"stringValue": "..."} (a JSON value: checked)
                    out[key] = raw
                    continue
            out[key] = None  # the file's order
            keys.append(key)
            raws.append(raw)
        if len(out) < len(kvs):  # a key written twice: the last wins, in order
            return self.one_by_one(kvs, keep)
        if raws:
            anyvalue = self.anyvalue
            for key, raw, v in zip(keys, raws, _decode_any(b"[" + b",".join(raws) + b"]")):
                if type(v) is dict and len(v) == 1:
                    s = v.get("stringValue")
                    if type(s) is str:
                        out[key] = s if len(s) > _SHORT else _intern(s)  # models, names: one object each
                        continue
                if len(raw) > 20 and _big(v):  # a 20-digit integer needs more bytes
                    raise Doubt
                out[key] = anyvalue(v)
        return out

    def one_by_one(self, kvs: Any, keep: bool) -> dict[str, Any]:
        """``attrs`` for a list that names a key twice."""
        out: dict[str, Any] = {}
        for kv in kvs:
            got = self.attrs([kv], keep)
            out.pop(kv.key, None)
            out.update(got)
        return out


def decoded(raw: Raw) -> str:
    """A kept payload's string (a ``{"stringValue": ...}`` AnyValue, checked when kept)."""
    return _decode_any(raw)["stringValue"]  # type: ignore[no-any-return]


def quick_documents(data: bytes, anyvalue: Callable[[Any], Any],
                    heads: bool = False) -> tuple[list[tuple[int | None, Any]], bool]:
    """``documents`` without its exactness checks: the values as ``documents`` gives them (attributes flat,
    each scope's spans a ``QuickSpans``: the decoded ``Span`` Structs and the function making a span's dict,
    without ``AT``: such spans keep their attributes), all decoded at
    once. For a first look at a big file (``core.load.otlp_early``) whose whole read (``documents``, checked)
    follows and decides; what it skips is what that read may find. With ``heads``, only each span's ids and
    start are decoded (``SpanHead``), its bytes kept for ``QuickSpans.whole``: a 1M-span file's Structs took
    ~3.8x the file, its heads and bytes take ~1.5x.

    Raises:
        Doubt: a BOM, a blank line in JSON Lines, a document msgspec refuses or without ``resourceSpans``.
        BadValue: from ``anyvalue`` (a resource attribute it refuses).
    """
    mv, end, nl, several = _layout(data)
    spans: list[tuple[int | None, Any]] = []
    decode = _decode_doc if heads else _decode_whole_doc
    try:
        if several:
            spans.extend((i, decode(mv[a:stop]), a, stop) for i, a, stop in _line_ranges(data, end))
        else:
            spans.append((None if nl >= 0 else 1, decode(mv[:end]), 0, end))
        flat = _Flat(anyvalue)
        out = []
        for line, doc, a, b in spans:
            if doc.resourceSpans is UNSET:
                raise Doubt
            if heads:
                _located(data, doc, a, b)
            out.append((line, flat.value(doc, quick="heads" if heads else True)))
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise Doubt from None
    return out, several
