"""OpenTelemetry spans serialised as plain dicts (not OTLP): SDK console dumps and span-dict files.

Shapes accepted (``../shared/design/formats.md`` §2.2, §2.3):

- **Python SDK** ``ConsoleSpanExporter`` / ``ReadableSpan.to_json()``: pretty-printed
  objects printed back to back (not an array, not one per line), children usually
  before parents (a span prints when it ends). ``context.trace_id`` / ``span_id``
  as ``0x`` hex, ``parent_id``, ``kind: "SpanKind.INTERNAL"``, ISO-8601 UTC
  ``start_time`` / ``end_time``, ``status.status_code`` ``UNSET|OK|ERROR`` (+
  ``description``), flat attribute dicts with native JSON values, events with ISO
  ``timestamp``. The same dicts as a JSON array or JSON Lines are read too.
- **mozilla-ai any-agent** ``AgentTrace`` dumps (``{"spans": [...], "final_output": ...}``,
  corpus ``any-agent-trace/``): the same dicts with ``context`` / ``parent``
  objects whose ids are **decimal integers**, ``start_time`` / ``end_time``
  integer ns, lowercase ``kind`` and ``status_code``.
- **OTel JS** ``ReadableSpan`` JSON (Vercel AI SDK fixtures, GitHub Copilot Chat's
  file exporter): ``spanContext{traceId, spanId}`` or flat ``traceId`` / ``spanId``,
  ``parentSpanId`` or ``parentSpanContext{spanId}``, ``kind`` numbered the JS way
  (0 INTERNAL, 1 SERVER, 2 CLIENT, 3 PRODUCER, 4 CONSUMER: one less than OTLP),
  ``startTime`` / ``endTime`` as ``[seconds, nanos]`` hrtime pairs, ``status{code}``
  (0 UNSET, 1 OK, 2 ERROR), ``events[{name, time: [s, ns], attributes}]``. JSON
  Lines mixing ``"type": "span"`` lines with other line types (metrics, logs):
  the other lines are skipped and counted in one issue.

Ids become lowercase hex (``otlp.normalize_id``: ``0x`` hex, hex, base64, integers);
attributes are mapped by ``otel_attrs.span_fields_from_attributes``. Every trace id
is one run, in file order; ``seq`` orders spans by start time, a parent before a
child that starts at the same instant.

JSON is read by ``jsondoc`` (integers beyond 64 bits, any-agent's decimal trace
ids, kept exact); times by ``timefmt`` (exact ISO 8601 -> ns). Also here, used by the
Langfuse reader too: ``assign_seq`` and ``content_gaps``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.ties import order_ties
from tracetui.core.readers.tree import OTEL_CONTENT_WHY
from tracetui.core.readers.base import FileReading, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.otel_attrs import span_fields_from_attributes
from tracetui.core.readers.otlp import status_code
from tracetui.core.readers.otlp_values import BadValue, anyvalue, normalize_id
from tracetui.core.readers.timefmt import epoch_ns, iso_ns, ns_to_iso

__all__ = ["OtelSdkJsonReader", "assign_seq", "content_gaps"]

_JS_KINDS = {0: "internal", 1: "server", 2: "client", 3: "producer", 4: "consumer"}
"""``SpanKind`` of @opentelemetry/api: no UNSPECIFIED, so one less than OTLP's numbers."""
_KIND_NAMES = frozenset({"internal", "server", "client", "producer", "consumer", "unspecified"})
_MESSAGE_EVENTS = frozenset({
    "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message",
    "gen_ai.choice", "gen_ai.content.prompt", "gen_ai.content.completion"})
_UINT64_MAX = (1 << 64) - 1
_HEX = frozenset("0123456789abcdef")
_SPAN_KEYS = ("context", "spanContext", "span_id", "spanId")


# -- helpers shared with the Langfuse reader ------------------------------------------------


def assign_seq(spans: list[Span], path: str = "", issues: list[ReadIssue] | None = None) -> None:
    """Set ``seq`` (emission order) from ``(start_ns, depth, file order)``.

    Sources that only have start times (SDK dumps, Langfuse) often give a parent
    and its first child the same instant (ms precision); depth breaks the tie so
    a parent is emitted before its children, and within a tie the data orders
    the rest (``ties.order_ties``: a tool before the model call quoting its
    result); with ``issues``, siblings tied with nothing to order them are
    reported there (one warning naming ``path``). Spans without a start go last.
    Spans are fresh from the reader, so ``seq`` is set in place.
    """
    parent = {s.span_id: s.parent_id for s in spans}
    depth: dict[str, int] = {}
    for s in spans:
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = s.span_id
        while cur is not None and cur not in depth and cur in parent and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            cur = parent[cur]
        base = depth.get(cur, -1) if cur is not None else -1
        for c in reversed(chain):
            base += 1
            depth[c] = base
    big = 1 << 62
    order = sorted(range(len(spans)), key=lambda i: (
        spans[i].start_ns if spans[i].start_ns is not None else big, depth.get(spans[i].span_id, 0), i))
    for k, span in enumerate(order_ties([spans[i] for i in order], path, issues if issues is not None else [])):
        span.seq = k


def content_gaps(path: str, spans: Iterable[Span]) -> ReadIssue | None:
    """One warning for a run whose producer did not capture content, else None.

    Counts llm spans without input ``messages``, llm spans without ``output``, and
    tool spans without ``output``, failed spans aside (house rule: content not captured is reported
    once per run, never silently empty).
    """
    llm = no_msgs = no_out = tools = no_tool_out = 0
    for s in spans:
        if s.status is Status.ERROR:
            continue  # a failed call has no output to capture
        if s.kind is SpanKind.LLM:
            llm += 1
            no_msgs += "messages" not in s.data
            no_out += "output" not in s.data
        elif s.kind is SpanKind.TOOL:
            tools += 1
            no_tool_out += "output" not in s.data
    parts = []
    if no_msgs:
        parts.append(f"{no_msgs} of {llm} llm spans have no input messages")
    if no_out:
        parts.append(f"{no_out} of {llm} llm spans no output")
    if no_tool_out:
        parts.append(f"{no_tool_out} of {tools} tool spans no output")
    if not parts:
        return None
    return ReadIssue(path, None, "", "; ".join(parts) + " (not captured by the producer)", "warning")


# -- reader ---------------------------------------------------------------------------------


class OtelSdkJsonReader:
    """Reads OTel spans serialised as plain dicts: Python SDK console output, any-agent
    ``AgentTrace`` dumps, OTel JS ``ReadableSpan`` JSON (one document, JSON Lines, or
    objects back to back)."""

    name = "otel-sdk-json"
    content_hint = OTEL_CONTENT_WHY
    """Why spans lack content here: GenAI instrumentations capture it only when asked."""

    def sniff(self, head: bytes) -> bool:
        """An object or array with a span's id keys and no OTLP envelope.

        Python / any-agent: ``"context"`` (or ``"parent_id"``), ``"span_id"``,
        ``"trace_id"`` and ``"start_time"``. JS: ``"spanContext"``, or ``"spanId"``
        with ``"traceId"`` and ``"startTime"`` / ``"parentSpanId"``. Never
        ``resourceSpans`` (that is OTLP/JSON).
        """
        body = head.removeprefix(BOM).lstrip()
        if body[:1] not in (b"{", b"["):
            return False
        if b'"resourceSpans"' in head or b'"resource_spans"' in head:
            return False
        if b'"span_id"' in head and b'"trace_id"' in head and b'"start_time"' in head \
                and (b'"context"' in head or b'"parent_id"' in head):
            return True
        if b'"spanContext"' in head:
            return True
        return b'"spanId"' in head and b'"traceId"' in head and (b'"startTime"' in head or b'"parentSpanId"' in head)

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file into one run per trace id.

        Raises:
            ReadError: empty, not JSON, or no span anywhere.
        """
        return _Reading(path).run(data)


class _Reading(FileReading):
    """State of reading one file."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.runs: dict[str | None, RunSpans] = {}
        self.non_span: list[tuple[int | None, str, str]] = []  # (line, where, what)

    # -- envelope ------------------------------------------------------------------

    def run(self, data: bytes) -> ReaderOutput:
        records = self._records(data)
        outputs: dict[str | None, Any] = {}
        for line, where, obj, final in records:
            tid = self._record(obj, where, line)
            if final is not _NO_FINAL and tid is not _SKIPPED:
                outputs.setdefault(tid, final)
        if self.non_span:
            line, where, what = self.non_span[0]
            self.issue(line, "" if where == "$" else where,
                       f"{len(self.non_span)} record(s) are not spans (first: {what}); skipped")
        runs = [r for r in self.runs.values() if r.spans]
        if not runs:
            raise ReadError(self.path, "no OpenTelemetry span found (expected objects with context/spanContext, "
                            "span ids and start times)" + (f"; first problem: {self.issues[0]}" if self.issues else ""))
        for run in runs:
            assign_seq(run.spans, self.path, self.issues)
            run.header = self._header(run, outputs)
            gap = content_gaps(self.path, run.spans)
            if gap is not None:
                self.issues.append(gap)
        return ReaderOutput(runs=runs, issues=self.issues)

    def _records(self, data: bytes) -> list[tuple[int | None, str, Any, Any]]:
        """``(line, where, value, final_output)`` for every top-level span candidate: one document,
        JSON Lines, or pretty-printed values back to back (``json_values.load_json_or_jsonl``)."""
        out: list[tuple[int | None, str, Any, Any]] = []
        values, _ = load_json_or_jsonl(self.path, data, self.issues, values_back_to_back=True)
        for line, v in values:
            if isinstance(v, list):
                for i, item in enumerate(v):
                    self._expand(item, f"$[{i}]", line, out)
            else:
                self._expand(v, "$", line, out)
        return out

    def _expand(self, v: Any, where: str, line: int | None, out: list[tuple[int | None, str, Any, Any]]) -> None:
        if isinstance(v, dict) and isinstance(v.get("spans"), list) and not any(k in v for k in _SPAN_KEYS):
            final = v.get("final_output", _NO_FINAL)
            for i, s in enumerate(v["spans"]):
                out.append((line, f"{where}.spans[{i}]", s, final))
        else:
            out.append((line, where, v, _NO_FINAL))

    # -- one span ------------------------------------------------------------------

    def _record(self, obj: Any, where: str, line: int | None) -> Any:
        """Read one span dict; returns its trace id, or ``_SKIPPED``."""
        if not isinstance(obj, dict):
            self.non_span.append((line, where, f"a JSON {type(obj).__name__}"))
            return _SKIPPED
        rtype = obj.get("type")
        if isinstance(rtype, str) and rtype != "span" and not any(k in obj for k in _SPAN_KEYS):
            self.non_span.append((line, where, f'"type": {rtype!r}'))
            return _SKIPPED
        if not any(k in obj for k in _SPAN_KEYS) and "traceId" not in obj and "trace_id" not in obj:
            keys = ", ".join(map(repr, list(obj)[:5]))
            self.non_span.append((line, where, f"an object with keys {keys}" if keys else "an empty object"))
            return _SKIPPED
        return self._span(obj, where, line)

    def _span(self, sp: dict[str, Any], where: str, line: int | None) -> Any:
        ctx = sp.get("context")
        if not isinstance(ctx, dict):
            ctx = sp.get("spanContext")
        if isinstance(ctx, dict):
            raw_tid = _get(ctx, "trace_id", "traceId")
            raw_sid = _get(ctx, "span_id", "spanId")
            ctx_where = f"{where}.context" if "context" in sp else f"{where}.spanContext"
        else:
            raw_tid = _get(sp, "traceId", "trace_id")
            raw_sid = _get(sp, "spanId", "span_id")
            ctx_where = where
        sid, problem = _norm_id(raw_sid, 8)
        if sid is None:
            self.issue(line, f"{ctx_where}.span_id", (problem or "missing span id") + "; span skipped")
            return _SKIPPED
        if problem:
            self.issue(line, f"{ctx_where}.span_id", problem, "warning")
        tid, problem = _norm_id(raw_tid, 16)
        if problem:
            self.issue(line, f"{ctx_where}.trace_id", problem, "warning")
        elif tid is None:
            self.issue(line, f"{ctx_where}.trace_id", "missing trace id; span grouped in a run without trace id",
                       "warning")
        raw_parent = _first(sp, "parent_id", "parentSpanId", "parent_span_id")
        if raw_parent is None:
            pc = sp.get("parent")
            if not isinstance(pc, dict):
                pc = sp.get("parentSpanContext")
            if isinstance(pc, dict):
                raw_parent = _get(pc, "span_id", "spanId")
        parent, problem = _norm_id(raw_parent, 8)
        if problem:
            self.issue(line, f"{where}.parent_id", problem, "warning")
        if parent is not None and not parent.strip("0"):
            parent = None  # all-zero: no parent
        name = sp.get("name")
        name = name if isinstance(name, str) else "" if name is None else str(name)
        start = self._time(sp, where, line, "start_time", "startTime")
        end = self._time(sp, where, line, "end_time", "endTime")
        if end is None and start is not None:
            dur = sp.get("duration")
            if dur is not None:
                d, ok = _ns(dur)
                if ok and d is not None:
                    end = start + d
        status, status_msg = self._status(sp.get("status"), where, line)
        attrs = self._attrs(sp.get("attributes"), f"{where}.attributes", line)
        ev = sp.get("events")
        events = self._events(ev, f"{where}.events", line) if ev else []
        kind, data, left, error_type = span_fields_from_attributes(
            name, attrs, events, status_error=status is Status.ERROR)
        otel_kind = self._kind(sp.get("kind"), where, line)
        if otel_kind is not None:
            left["otel.span_kind"] = otel_kind
        if status_msg:
            left["otel.status_message"] = status_msg
        res = sp.get("resource")
        if isinstance(res, dict):
            ra = res.get("attributes")
            if isinstance(ra, dict) and ra.get("service.name") is not None and "service.name" not in left:
                left["service.name"] = ra["service.name"]
        scope = _first(sp, "instrumentationScope", "instrumentationLibrary", "instrumentation_scope",
                       "instrumentation_info")
        if isinstance(scope, dict) and scope.get("name"):
            left["otel.scope.name"] = scope["name"]
        kept = [e for e in events if e["name"] not in _MESSAGE_EVENTS]
        if kept:
            left["otel.events"] = kept
        span = Span(span_id=sid, parent_id=parent, seq=-1, kind=kind, name=name or kind.value,
                    start_ns=start, end_ns=end, status=status, error_type=error_type,
                    data=data, attributes=left, trace_id=tid, line=line)
        run = self.runs.get(tid)
        if run is None:
            run = self.runs[tid] = RunSpans(trace_id=tid)
        run.spans.append(span)
        return tid

    def _time(self, sp: dict[str, Any], where: str, line: int | None, snake: str, camel: str) -> int | None:
        key = snake if snake in sp else camel
        raw = sp.get(key)
        ns, ok = _ns(raw)
        if not ok:
            self.issue(line, f"{where}.{key}", f"{raw!r} is not a time (ISO 8601, integer ns, or [s, ns]); ignored",
                       "warning")
        return ns

    def _status(self, st: Any, where: str, line: int | None) -> tuple[Status, str | None]:
        if st is None or st == {}:
            return Status.UNSET, None
        if not isinstance(st, dict):
            self.issue(line, f"{where}.status", f"status {st!r} is not an object; read as unset", "warning")
            return Status.UNSET, None
        code = _first(st, "status_code", "code")
        msg = _first(st, "description", "message")
        status = status_code(code)
        if status is None:
            self.issue(line, f"{where}.status", f"unknown status code {code!r}; read as unset", "warning")
        return status or Status.UNSET, msg if isinstance(msg, str) and msg else None

    def _kind(self, k: Any, where: str, line: int | None) -> str | None:
        if k is None:
            return None
        if isinstance(k, int) and not isinstance(k, bool):
            got = _JS_KINDS.get(k)
        elif isinstance(k, str) and k.strip():
            s = k.strip().lower().removeprefix("spankind.").removeprefix("span_kind_")
            got = _JS_KINDS.get(int(s)) if s.isdigit() and len(s) < 20 else s if s in _KIND_NAMES else None
        else:
            got = None
        if got is None:
            self.issue(line, f"{where}.kind", f"unknown span kind {k!r}; ignored", "warning")
        return got

    def _attrs(self, raw: Any, where: str, line: int | None) -> dict[str, Any]:
        if not raw:
            return {}
        if isinstance(raw, dict):
            return raw
        if isinstance(raw, list):  # an OTLP-style KeyValue list
            out: dict[str, Any] = {}
            for i, kv in enumerate(raw):
                key = kv.get("key") if isinstance(kv, dict) else None
                if not isinstance(key, str) or not key:
                    self.issue(line, f"{where}[{i}]", "attribute without a string key; attribute skipped", "warning")
                    continue
                try:
                    out[key] = anyvalue(kv.get("value"))
                except (BadValue, RecursionError) as exc:
                    self.issue(line, f"{where}[{i}]", f"attribute {key!r}: {exc}; attribute skipped", "warning")
            return out
        self.issue(line, where, f"attributes are a {type(raw).__name__}, not an object; ignored", "warning")
        return {}

    def _events(self, raw: Any, where: str, line: int | None) -> list[dict[str, Any]]:
        if not isinstance(raw, list):
            self.issue(line, where, f"events are a {type(raw).__name__}, not a list; ignored", "warning")
            return []
        out: list[dict[str, Any]] = []
        for i, ev in enumerate(raw):
            if not isinstance(ev, dict):
                self.issue(line, f"{where}[{i}]", f"expected an object, found {type(ev).__name__}; skipped")
                continue
            name = ev.get("name")
            t, _ = _ns(_first(ev, "timestamp", "time", "timeUnixNano", "time_unix_nano"))
            out.append({"name": name if isinstance(name, str) else str(name), "time_unix_nano": t,
                        "attributes": self._attrs(ev.get("attributes"), f"{where}[{i}].attributes", line)})
        return out

    # -- run header ----------------------------------------------------------------

    def _header(self, run: RunSpans, outputs: dict[str | None, Any]) -> dict[str, Any]:
        h: dict[str, Any] = {}
        if run.trace_id is not None:
            h["run_id"] = run.trace_id
            h["trace_id"] = run.trace_id
        starts = [s.start_ns for s in run.spans if s.start_ns is not None]
        if starts:
            first = min(starts)
            h["started_at"] = ns_to_iso(first)
            h["start_ns"] = first
        ordered = sorted(run.spans, key=_SEQ)
        root = next((s for s in ordered if s.parent_id is None), None)
        if root is not None and root.kind is SpanKind.AGENT and root.data.get("agent_name"):
            h["agent"] = root.data["agent_name"]
        llm = next((s for s in ordered if s.kind is SpanKind.LLM and s.data.get("model")), None)
        if llm is not None:
            h["model"] = {"id": llm.data["model"]}
            if "provider" in llm.data:
                h["model"]["provider"] = llm.data["provider"]
        first_user = next((m.get("content") for s in ordered if s.kind is SpanKind.LLM
                           for m in s.data.get("messages", ()) if m.get("role") == "user"), None)
        if first_user is not None:
            h["input"] = first_user
        final = outputs.get(run.trace_id, _NO_FINAL)
        if final is not _NO_FINAL and final is not None:
            h["output"] = final
        return h


_NO_FINAL = object()
_SKIPPED = object()


_SEQ = operator.attrgetter("seq")


def _get(d: dict[str, Any], a: str, b: str) -> Any:
    v = d.get(a)
    return d.get(b) if v is None else v


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        v = d.get(k)
        if v is not None:
            return v
    return None


def _norm_id(v: Any, nbytes: int) -> tuple[str | None, str | None]:
    """``otlp.normalize_id``, plus decimal integers written as strings (wider than hex would be)."""
    if type(v) is str and len(v) == 2 * nbytes + 2 and v[:2] == "0x":  # Python SDK's format: the common case
        low = v[2:].lower()
        if _HEX.issuperset(low):
            return low, None
    if type(v) is str and 2 * nbytes < len(v) <= 40 and v.isdigit():  # no 5,000-digit int() (Python refuses)
        n = int(v)
        if n < 1 << (8 * nbytes):
            return format(n, f"0{2 * nbytes}x"), None
    if isinstance(v, float):
        return None, f"id {v!r} is a float (an integer id too big for the JSON parser?); ignored"
    return normalize_id(v, nbytes)


def _ns(v: Any) -> tuple[int | None, bool]:
    """A time as int ns: ISO string, integer ns (number or digits), ``[s, ns]`` hrtime, or a
    float epoch number (``timefmt.epoch_ns``: unit by magnitude, read exactly).
    ``(None, True)`` for missing/zero, ``(None, False)`` for junk."""
    if v is None:
        return None, True
    if isinstance(v, bool):
        return None, False
    if isinstance(v, int):
        return (v if v > 0 else None), 0 <= v <= _UINT64_MAX
    if isinstance(v, str):
        s = v.strip()
        if s.isdigit() and len(s) <= 20:  # longer: beyond 64 bits, junk
            n = int(s)
            ok = n <= _UINT64_MAX
            return (n if n > 0 and ok else None), ok
        ns = iso_ns(s)
        ok = ns is not None and 0 <= ns <= _UINT64_MAX
        return (ns if ok and ns else None), ok
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v):
        n = v[0] * 1_000_000_000 + v[1]
        ok = 0 <= n <= _UINT64_MAX
        return (n if n > 0 and ok else None), ok
    if isinstance(v, float) and math.isfinite(v) and 0 <= v <= _UINT64_MAX:
        return epoch_ns(v), True  # epoch s / ms / µs / ns by magnitude, the digits written (timefmt)
    return None, False
