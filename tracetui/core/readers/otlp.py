"""OTLP/JSON reader: ``ExportTraceServiceRequest`` / ``TracesData`` JSON, one document or JSON Lines.

Envelopes (``../shared/design/formats.md`` §2.1; OTLP spec, "JSON Protobuf Encoding";
OTLP file exporter spec):

- one JSON document ``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``
  (snake_case ``resource_spans`` / ``scope_spans`` too, and a top-level array of such
  documents);
- the Collector ``file`` exporter's JSON Lines: one such object per line, spans of one
  trace spread over many lines (``json_values.load_json_or_jsonl``). A torn last line
  (no trailing newline, not parseable: the file is still being written) is held
  back with a warning, and loaded by the next read once complete; a bad line
  elsewhere is reported and skipped.

Damage read anyway (``jsondoc``; each reported with its line or JSON path): a UTF-8
byte-order mark at the start of the file or of a line (``cat``), CRLF line ends
(silently), bare ``NaN``/``Infinity`` (kept as strings), integers beyond 64 bits
(kept exact), duplicate keys (last value kept), timestamps as numbers in float or
exponent form (``1.762161242118e18``, as a number or a string: the exact integer
written, never rounded through a double; one warning per file).

Values: ids in hex of any case (also ``0x``-prefixed, or base64 as protobuf's
``MessageToJson`` writes them) become lowercase hex; timestamps as strings or
numbers become int ns; ``kind`` and ``status.code`` as ints or enum names.
Attributes are decoded from AnyValue and mapped by ``otlp_lazy.payload_pass``. A file of
``otlp_lazy.LAZY_MIN_BYTES`` or more is decoded by msgspec (``otlp_fast``; this careful path
whenever that may read it differently), only what alignment needs is mapped while reading, and
each span keeps its byte range: the rest is mapped on its first read (``LazySpan``), from the
span's bytes read again. Every trace id is one run, in file order; ``seq`` is left to ``read_trace``.
"""

from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, cast

from msgspec import UNSET

from tracetui.core.errors import ReadError
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.tree import OTEL_CONTENT_WHY
from tracetui.core.readers.base import FileReading, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import exact_int
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.limits import read_rest
from tracetui.core.readers.otlp_fast import AT, Doubt, SpanDicts, documents, span_dict
from tracetui.core.readers.otlp_values import BadValue, anyvalue, normalize_id
from tracetui.core.readers.otlp_lazy import LAZY_MIN_BYTES, Extras, OtlpPayloads, kept_file, payload_pass

_BOM = b"\xef\xbb\xbf"
_UINT64_MAX = (1 << 64) - 1
_SPAN_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_SPAN_KIND_NAMES = {v: v for v in _SPAN_KINDS.values()}
_STATUS_CODES = {0: Status.UNSET, 1: Status.OK, 2: Status.ERROR}
_STATUS_NAMES = {"unset": Status.UNSET, "ok": Status.OK, "error": Status.ERROR}
_RS_KEYS = ("resourceSpans", "resource_spans")
_SS_KEYS = ("scopeSpans", "scope_spans", "instrumentationLibrarySpans", "instrumentation_library_spans")
_SCOPE_KEYS = ("scope", "instrumentationLibrary", "instrumentation_library")
_NO_EVENTS = cast("list[dict[str, Any]]", ())
"""A span without events: one immutable empty sequence for all (a big file keeps one a span until the payload pass)."""


def _get(d: dict[str, Any], camel: str, snake: str) -> Any:
    v = d.get(camel)
    return d.get(snake) if v is None else v


_OK, _ODD, _BAD = 0, 1, 2
"""How a timestamp was written: as the spec says (int64 as a string or number), in
float or exponent form (read exactly, reported once per file), or not at all usable."""


def _ns(v: Any) -> tuple[int | None, int]:
    """Timestamp in ns from a string or number; 0 means unset. Returns ``(ns, _OK | _ODD | _BAD)``.

    Float and exponent forms (``1.762161242118e18``, as a number or a string) give
    the integer written, not the nearest double's (``jsondoc.exact_int``).
    """
    how = _OK
    if type(v) is str:
        try:
            n = int(v)
        except ValueError:
            m = exact_int(v)
            if m is None:
                return None, _BAD
            n, how = m, _ODD
    elif type(v) is int:
        n = v
    elif type(v) is float:
        m = exact_int(v)
        if m is None:
            return None, _BAD
        n, how = m, _ODD
    elif v is None:
        return None, _OK
    else:
        return None, _BAD
    if n < 0 or n > _UINT64_MAX:
        return None, _BAD
    return (n if n > 0 else None), how


class OtlpJsonReader:
    """Reads OTLP/JSON trace files (single document or Collector JSON Lines)."""

    name = "otlp-json"
    content_hint = OTEL_CONTENT_WHY
    """Why spans lack content here: GenAI instrumentations capture it only when asked."""
    lazy_min_bytes = LAZY_MIN_BYTES
    """Files this big or bigger are read in two passes (``otlp_lazy``): ``LazySpan``s."""

    def sniff(self, head: bytes) -> bool:
        """An object or array whose first 64 KiB name ``resourceSpans`` (or ``resource_spans``) as a key."""
        first = head.removeprefix(_BOM).lstrip()[:1]
        return first in (b"{", b"[") and (b'"resourceSpans"' in head or b'"resource_spans"' in head)

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file into one run per trace id (a big file's ``LazySpan``s keep ``data``).

        Raises:
            ReadError: empty, not JSON, or JSON with no ``resourceSpans`` anywhere.
        """
        return self._read(path, data, None)

    @gc_paused
    def read_file(self, path: str, fh: BinaryIO, head: bytes) -> ReaderOutput:
        """``read`` of the open file ``fh`` (``head``: its first bytes, read already): a big regular file's
        spans read their bytes again from it on first use (``otlp_lazy.kept_file``): the bytes are not kept.
        Raises ``ReadError`` as ``read``, or when the file grows past its allowance while being read."""
        try:
            before: os.stat_result | None = os.fstat(fh.fileno())  # the file as its read starts
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            before = None
        return self._read(path, read_rest(fh, path, head), fh, before)

    def _read(self, path: str, data: bytes, fh: BinaryIO | None, before: os.stat_result | None = None
              ) -> ReaderOutput:
        if len(data) < self.lazy_min_bytes:
            return _Reading(path).run(data)
        try:  # a big file: msgspec Structs, spans kept as byte ranges (otlp_fast); the careful path when in doubt
            values, several = documents(data, anyvalue)
            return _Reading(path, lazy=True, file=kept_file(path, data, fh, before)).records(values, several)
        except (Doubt, BadValue, RecursionError):  # RecursionError: an AnyValue nested too deeply (reported there)
            return _Reading(path, lazy=True).run(data)


def status_code(code: Any) -> Status | None:
    """An OTel status code as the exports write it: ``2``, ``"2"``, ``"STATUS_CODE_ERROR"`` (OTLP/JSON),
    ``"StatusCode.ERROR"``, ``"ERROR"`` (SDK exporters); None (absent) is unset; None when unknown."""
    if code is None:
        return Status.UNSET
    if isinstance(code, int) and not isinstance(code, bool):
        return _STATUS_CODES.get(code)
    if isinstance(code, str):
        c = code.strip().lower().removeprefix("statuscode.").removeprefix("status_code_")
        return _STATUS_CODES.get(int(c)) if c.isdigit() and len(c) < 20 else _STATUS_NAMES.get(c)
    return None


class _Reading(FileReading):
    """State of reading one file: issues and runs by trace id (insertion order = file order)."""

    def __init__(self, path: str, lazy: bool = False, file: Any = None) -> None:
        super().__init__(path)
        self.lazy = OtlpPayloads(file, _reread) if lazy else None
        self.runs: dict[str | None, RunSpans] = {}
        self.odd_times: list[tuple[int | None, str, Any]] = []  # (line, where, value) in float/exponent form
        self.shared: dict[Any, Any] = {}  # equal values kept once (trace and span ids, extras)

    # -- envelope -------------------------------------------------------------------

    def run(self, data: bytes) -> ReaderOutput:
        values, several = load_json_or_jsonl(self.path, data, self.issues)
        return self.records(values, several)

    def records(self, values: Any, several: bool) -> ReaderOutput:
        """The runs of the file's ``(line, value)`` pairs (``json_values.load_json_or_jsonl``'s)."""
        if several:  # Collector JSON Lines: one export request a line
            loaded = 0
            for lineno, obj in values:
                if not isinstance(obj, dict) or not _has_rs(obj):
                    self.issue(lineno, "", f"line holds no resourceSpans ({_describe(obj)}); line skipped")
                    continue
                loaded += 1
                self._record(obj, "$", lineno)
            if not loaded:
                raise ReadError(self.path, "no line holds an OTLP/JSON object (an object with resourceSpans)")
        else:
            line, doc = next(values)
            if isinstance(doc, dict):
                records = [(doc, "$")]
            elif isinstance(doc, list):
                records = [(d, f"$[{i}]") for i, d in enumerate(doc)]
            else:
                raise ReadError(self.path, f"JSON {type(doc).__name__} is not OTLP/JSON "
                                "(expected an object with resourceSpans)")
            if not any(isinstance(d, dict) and _has_rs(d) for d, _ in records):
                raise ReadError(self.path, "JSON document has no resourceSpans, so it is not OTLP/JSON; "
                                f"found {_describe(doc)}")
            for d, base in records:
                self._record(d, base, line)
        if self.odd_times:
            line, where, value = self.odd_times[0]
            self.issue(line, where, f"{len(self.odd_times)} timestamp(s) in float or exponent form (first: {value!r}); "
                       "a string is read exactly; a bare number keeps at most 17 significant digits (the digits a "
                       "JSON parser's double holds): the OTLP JSON mapping writes nanoseconds as integer strings",
                       "warning")
        for run in self.runs.values():
            run.header = run_header(run.spans)
        return ReaderOutput(runs=list(self.runs.values()), issues=self.issues)

    def _record(self, obj: Any, base: str, line: int | None) -> None:
        if not isinstance(obj, dict):
            self.issue(line, base, f"expected an object, found {type(obj).__name__}; skipped")
            return
        rs_key = next((k for k in _RS_KEYS if k in obj), None)
        if rs_key is None:
            self.issue(line, base, f"no resourceSpans ({_describe(obj)}); skipped")
            return
        for i, rs in _items(self, obj[rs_key], f"{base}.{rs_key}", line):
            p_rs = f"{base}.{rs_key}[{i}]"
            resource = rs.get("resource")
            res_attrs = self._attrs(resource.get("attributes"), p_rs, ".resource.attributes", line) \
                if isinstance(resource, dict) else {}
            service = res_attrs.get("service.name")
            ss_key = next((k for k in _SS_KEYS if k in rs), None)
            if ss_key is None:
                continue
            for j, ss in _items(self, rs[ss_key], f"{p_rs}.{ss_key}", line):
                p_ss = f"{p_rs}.{ss_key}[{j}]"
                scope = next((ss[k] for k in _SCOPE_KEYS if isinstance(ss.get(k), dict)), None)
                scope_name = scope.get("name") if scope else None
                spans = ss.get("spans")
                if type(spans) is SpanDicts or type(spans) is list and all(type(sp) is dict for sp in spans):
                    span = self._span  # the usual case: no generator, paths built only for issues
                    for k, sp in enumerate(spans):
                        span(sp, p_ss, k, line, service, scope_name)
                    continue
                for k, sp in _items(self, spans, f"{p_ss}.spans", line):
                    self._span(sp, p_ss, k, line, service, scope_name)

    # -- one span -------------------------------------------------------------------

    def _span(self, sp: dict[str, Any], scope_where: str, k: int, line: int | None, service: Any,
              scope_name: Any) -> None:
        where = f"{scope_where}.spans[{k}]"
        sid, problem = normalize_id(_get(sp, "spanId", "span_id"), 8)
        if sid is None:
            self.issue(line, f"{where}.spanId", (problem or "missing spanId") + "; span skipped")
            return
        if problem:
            self.issue(line, f"{where}.spanId", problem, "warning")
        tid, problem = normalize_id(_get(sp, "traceId", "trace_id"), 16)
        tid = self.shared.setdefault(tid, tid)
        if problem:
            self.issue(line, f"{where}.traceId", problem, "warning")
        elif tid is None:
            self.issue(line, f"{where}.traceId", "missing traceId; span grouped in a run without trace id", "warning")
        parent, problem = normalize_id(_get(sp, "parentSpanId", "parent_span_id"), 8)
        if problem:
            self.issue(line, f"{where}.parentSpanId", problem, "warning")
        if parent is not None and not parent.strip("0"):
            parent = None  # an all-zero id is "no parent"
        shared = self.shared
        sid = shared.setdefault(sid, sid)  # a parent id is its parent's span id object, not a copy
        if parent is not None:
            parent = shared.setdefault(parent, parent)
        raw_start = _get(sp, "startTimeUnixNano", "start_time_unix_nano")
        start, how = _ns(raw_start)
        if how:
            self._odd_time(how, line, f"{where}.startTimeUnixNano", raw_start)
        raw_end = _get(sp, "endTimeUnixNano", "end_time_unix_nano")
        end, how = _ns(raw_end)
        if how:
            self._odd_time(how, line, f"{where}.endTimeUnixNano", raw_end)
        status, name, attrs, events, extras = self._rest(sp, where, line, service, scope_name)
        try:
            extras = self.shared.setdefault(extras, extras)  # one tuple for the many spans alike
        except TypeError:  # flags as a list or object: kept as is
            pass
        if self.lazy is not None:  # a big file: the payload pass on first use (otlp_lazy)
            span: Span = self.lazy.span(sid, parent, name, start, end, status, attrs, events, extras, tid, line,
                                        at=sp.get(AT))
        else:
            kind, data, left, error_type = payload_pass(name, attrs, events, status is Status.ERROR, extras)
            # Positional: Span(span_id, parent_id, seq, kind, name, start_ns, end_ns, status, error_type,
            # data, attributes, trace_id, line), cheaper than keywords
            span = Span(sid, parent, -1, kind, name or kind.value, start, end, status, error_type,
                        data, left, tid, line)
        run = self.runs.get(tid)
        if run is None:
            run = self.runs[tid] = RunSpans(trace_id=tid)
        run.spans.append(span)

    def _rest(self, sp: dict[str, Any], where: str, line: int | None, service: Any,
              scope_name: Any) -> tuple[Status, str, dict[str, Any], list[dict[str, Any]], Extras]:
        """``(status, name, attributes, events, extras)`` of a span dict: what the payload pass reads."""
        st = sp.get("status")
        if not st:
            status, status_msg = Status.UNSET, None
        elif type(st) is dict and len(st) == 1 and type(st.get("code")) is int and st["code"] in _STATUS_CODES:
            status, status_msg = _STATUS_CODES[st["code"]], None  # {"code": 2}: the usual shape
        else:
            status, status_msg = self._status(st, where, line)
        name = sp.get("name")
        name = name if isinstance(name, str) else "" if name is None else str(name)
        attrs = self._attrs(sp.get("attributes"), where, ".attributes", line)
        ev = sp.get("events")
        events = self._events(ev, where, line) if ev else _NO_EVENTS
        k_raw = sp.get("kind")
        otel_kind = _SPAN_KINDS.get(k_raw) if type(k_raw) is int else self._kind(k_raw)
        return status, name, attrs, events, (otel_kind, status_msg, service, scope_name, sp.get("flags"))

    def _odd_time(self, how: int, line: int | None, where: str, raw: Any) -> None:
        if how == _BAD:
            self.issue(line, where, f"{raw!r} is not integer nanoseconds; ignored", "warning")
        else:
            self.odd_times.append((line, where, raw))

    def _status(self, st: Any, span_where: str, line: int | None) -> tuple[Status, str | None]:
        where = f"{span_where}.status"
        if st is None or st == {}:
            return Status.UNSET, None
        if not isinstance(st, dict):
            self.issue(line, where, f"status {st!r} is not an object; read as unset", "warning")
            return Status.UNSET, None
        code = st.get("code")
        msg = st.get("message")
        status = status_code(code)
        if status is None:
            self.issue(line, f"{where}.code", f"unknown status code {code!r}; read as unset", "warning")
        return status or Status.UNSET, msg if isinstance(msg, str) and msg else None

    @staticmethod
    def _kind(k: Any) -> str | None:
        if isinstance(k, int) and not isinstance(k, bool):
            return _SPAN_KINDS.get(k)
        if isinstance(k, str) and k:
            s = k.strip().lower()
            if s.isdigit():
                return _SPAN_KINDS.get(int(s)) if len(s) < 20 else None
            return _SPAN_KIND_NAMES.get(s.removeprefix("span_kind_").removeprefix("spankind."), s)
        return None

    def _attrs(self, raw: Any, base: str, suffix: str, line: int | None) -> dict[str, Any]:
        """Decode a ``KeyValue`` list; the JSON path ``base + suffix`` is built only for issues."""
        if not raw:
            return {}
        if isinstance(raw, dict):
            return dict(raw)  # already flat (some producers)
        if not isinstance(raw, list):
            self.issue(line, base + suffix, f"attributes are a {type(raw).__name__}, not a list; ignored", "warning")
            return {}
        out: dict[str, Any] = {}
        for i, kv in enumerate(raw):
            key = kv.get("key") if type(kv) is dict else None
            if type(key) is not str or not key:
                self.issue(line, f"{base}{suffix}[{i}]", "attribute without a string key; attribute skipped", "warning")
                continue
            v = kv.get("value")
            if type(v) is dict and len(v) == 1:  # the common case inline: no call (0.1 us an attribute)
                val = v.get("stringValue")
                if type(val) is str:
                    out[key] = val
                    continue
            try:
                out[key] = anyvalue(v)
            except BadValue as exc:
                self.issue(line, f"{base}{suffix}[{i}]", f"attribute {key!r}: {exc}; attribute skipped", "warning")
            except RecursionError:
                self.issue(line, f"{base}{suffix}[{i}]", f"attribute {key!r} is nested too deeply; attribute skipped",
                           "warning")
        return out

    def _events(self, raw: Any, span_where: str, line: int | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        where = f"{span_where}.events"
        for i, ev in _items(self, raw, where, line):
            name = ev.get("name")
            t, _ = _ns(_get(ev, "timeUnixNano", "time_unix_nano"))
            out.append({"name": name if isinstance(name, str) else str(name), "time_unix_nano": t,
                        "attributes": self._attrs(ev.get("attributes"), where, f"[{i}].attributes", line)})
        return out


def payload_source(file: Any) -> OtlpPayloads:
    """An ``otlp_lazy.OtlpPayloads`` over ``file`` (a ``PayloadFile`` of an OTLP/JSON file) whose spans kept as byte
    ranges are decoded again as this reader decodes them: the source for ``OtlpPayloads.adopt`` of the spans a
    read of that file made in another process (``core.load.read_child``)."""
    return OtlpPayloads(file, _reread)


def _reread(raw: bytes, path: str, service: Any, scope_name: Any) -> Any:
    """A span's bytes read again as ``_span`` read them (``otlp_lazy.Reread``); None when they are not a span."""
    try:
        sp = span_dict(raw, anyvalue)
        status, name, attrs, events, extras = _Reading(path)._rest(sp, "", None, service, scope_name)
    except (Doubt, BadValue, RecursionError):
        return None
    return normalize_id(_get(sp, "spanId", "span_id"), 8)[0], name, attrs, events, status is Status.ERROR, extras


def _start_order(s: Span) -> tuple[bool, int]:
    return s.start_ns is None, s.start_ns or 0


def run_header(spans: list[Span]) -> dict[str, Any]:
    """The run header fields an OTLP run carries (issue 18; as the OTel SDK reader fills them).

    In start order (file order among equal starts): ``agent``, the root agent span's
    ``agent_name``; ``model``, ``{"id": ..., "provider": ...}`` of the first llm span
    naming a model; ``input``, the content of the first ``user`` message of an llm span.
    A field the spans do not carry is left out ({} for a run with none of them).
    """
    h: dict[str, Any] = {}
    ordered = sorted(spans, key=_start_order)
    root = next((s for s in ordered if s.parent_id is None), None)
    if root is not None and root.kind is SpanKind.AGENT and root.data.get("agent_name"):
        h["agent"] = root.data["agent_name"]
    llms = [s for s in ordered if s.kind is SpanKind.LLM]
    llm = next((s for s in llms if s.data.get("model")), None)
    if llm is not None:
        h["model"] = {"id": llm.data["model"]}
        if "provider" in llm.data:
            h["model"]["provider"] = llm.data["provider"]
    first_user = next((m.get("content") for s in llms for m in s.data.get("messages", ())
                       if type(m) is dict and m.get("role") == "user"), None)
    if first_user is not None:
        h["input"] = first_user
    return h


def _items(reading: _Reading, raw: Any, where: str, line: int | None):  # type: ignore[no-untyped-def]
    """``(index, dict)`` pairs of a list, reporting what is not a list or not an object."""
    if raw is None:
        return
    if not isinstance(raw, list):
        reading.issue(line, where, f"expected a list, found {type(raw).__name__}; skipped")
        return
    for i, item in enumerate(raw):
        if isinstance(item, dict):
            yield i, item
        else:
            reading.issue(line, f"{where}[{i}]", f"expected an object, found {type(item).__name__}; skipped")


def _has_rs(d: dict[str, Any]) -> bool:
    return any(k in d for k in _RS_KEYS)


def _describe(obj: Any) -> str:
    """A short description of what a JSON value holds, for messages."""
    if isinstance(obj, dict):
        keys = list(obj)[:6]
        return "an object with keys " + ", ".join(map(repr, keys)) + (", ..." if len(obj) > 6 else "") \
            if keys else "an empty object"
    if isinstance(obj, list):
        return f"a list of {len(obj)} items"
    return f"a JSON {type(obj).__name__}"


class SpanByStruct:
    """The reader's own steps for one span at a time, for a first look at a big file (``core.load.otlp_early``):
    the scopes of ``otlp_fast.quick_documents``' values as ``_record`` walks them, a span's head (ids, trace id,
    start) as ``_span`` reads it, and the ``LazySpan`` ``read`` makes of it (``_span`` itself, on the span dict
    ``otlp_fast`` makes of its Struct). Anything the read would report gives None: the caller gives up."""

    def __init__(self, path: str, file: Any = None) -> None:
        """``file``: the file's ``PayloadFile`` (``otlp_lazy.OtlpPayloads.file``): a span dict with its byte range
        (``otlp_fast.AT``) then gives a span kept as that range, its payload read from ``file`` on first use."""
        self._reading = _Reading(path, lazy=True, file=file)

    @staticmethod
    def scopes(values: Any) -> Any:
        """``(line, service name, scope name, SpanDicts)`` of each scope, in file order."""
        for line, doc in values:
            for rs in doc["resourceSpans"]:
                resource = rs.get("resource")
                service = resource.get("attributes", {}).get("service.name") if resource else None
                for ss in rs.get("scopeSpans") or ():
                    scope = ss.get("scope")
                    spans = ss.get("spans")
                    if spans is not None:
                        yield line, service, scope.get("name") if scope else None, spans

    @staticmethod
    def head(sp: Any) -> tuple[str, str | None, str, int] | None:
        """``(span id, parent id, trace id, start ns)`` of a ``otlp_fast.Span`` as ``_span`` reads them; None
        when the read reports something about them or a value is missing (no trace id, no start)."""
        def get(v: Any) -> Any:
            return None if v is UNSET else v

        sid, p1 = normalize_id(get(sp.spanId), 8)
        tid, p2 = normalize_id(get(sp.traceId), 16)
        parent, p3 = normalize_id(get(sp.parentSpanId), 8)
        start, how = _ns(get(sp.startTimeUnixNano))
        if sid is None or tid is None or start is None or p1 or p2 or p3 or how == _BAD:
            return None
        if parent is not None and not parent.strip("0"):
            parent = None
        return sid, parent, tid, start

    def span(self, d: dict[str, Any], line: int | None, service: Any, scope_name: Any) -> Span | None:
        """The ``LazySpan`` the read makes of span dict ``d`` (``SpanDicts.make``), ``seq`` not set yet; None
        when the read reports an issue about it."""
        r = self._reading
        n = len(r.issues)
        r.runs.clear()
        r._span(d, "$", 0, line, service, scope_name)
        if len(r.issues) != n or len(r.runs) != 1:
            return None
        (run,) = r.runs.values()
        return run.spans[0] if len(run.spans) == 1 else None
