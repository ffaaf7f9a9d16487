"""LangSmith reader: runs as the langsmith SDK sends them, or as exports list them.

Accepted shapes (``../shared/design/formats.md`` §5; ``langsmith.schemas.Run``):

- the run-ingest payload the SDK POSTs to ``/runs/batch``:
  ``{"post": [run-create ...], "patch": [run-update ...]}``; a run posted and then
  patched is merged by ``id`` (patch fields such as ``end_time``, ``outputs``,
  ``error``, ``extra`` override; a ``null`` in a patch never erases a posted
  value; ``extra.metadata`` is merged key by key). Corpus:
  ``langsmith/langsmith_py_wrap_openai_reasoning.json``;
- a single run object, a JSON list of runs (or of payloads), ``{"runs": [...]}``;
- JSON Lines of runs (exports are one run per line) or of payloads; a patch may
  come before its post. Runs nested in ``child_runs`` are read too.

Runs -> spans: one span per run, ``span_id`` = run id. ``run_type`` ``llm`` ->
llm, ``tool`` -> tool, ``retriever`` -> retrieval, ``chain`` / ``prompt`` /
``parser`` / ``embedding`` -> other, except a ``chain`` that is a root or whose
name says agent (``AgentExecutor``) -> agent. Parent: ``parent_run_id``, else the
next-to-last segment of ``dotted_order`` (segments ``YYYYMMDDTHHMMSSffffffZ`` +
run UUID joined by ``.``). Runs are grouped by ``trace_id`` (= root run id,
else the first ``dotted_order`` segment, else the root found through parents)
into one ``RunSpans`` each, in first-seen order. ``seq`` follows
``dotted_order`` when every run of the trace has one (it sorts runs in
execution order), else it is derived from ``start_time``. Times: ISO 8601 ->
exact integer ns (no offset = UTC, as LangSmith stores them).

Modules: this one collects the runs (payloads merged, JSON Lines, ``child_runs``) and builds each
trace's tree; ``langsmith_content`` maps what a run holds (messages, an LLM call, a tool call,
retrieved documents) to span fields.
"""

from __future__ import annotations

import re
from typing import Any

from tracetui.core.errors import ReadError
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.base import FileReading, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.langsmith_content import (
    as_dict,
    as_str,
    lc_message,
    llm_data,
    retrieval_data,
    tool_data,
    unwrap,
)
from tracetui.core.readers.timefmt import iso_ns, ns_to_iso

__all__ = ["LangSmithReader", "error_type_of", "lc_message"]

# -- constants -----------------------------------------------------------------------

_DOTTED_TS = re.compile(r"\d{8}T\d{12}Z", re.ASCII)
"""A ``dotted_order`` segment's time: ``YYYYMMDDTHHMMSSffffffZ`` (µs, UTC; ``langsmith.run_trees``)."""
_KINDS = {"llm": SpanKind.LLM, "tool": SpanKind.TOOL, "retriever": SpanKind.RETRIEVAL,
          "chain": SpanKind.OTHER, "prompt": SpanKind.OTHER, "parser": SpanKind.OTHER,
          "embedding": SpanKind.OTHER}
_AGENT_NAME = re.compile(r"agent", re.IGNORECASE)
_ERROR_TYPE = re.compile(r"\s*([A-Za-z_][\w.]*)(?:\(|:|\Z)")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_PAYLOAD_START = re.compile(rb'\A\s*\[?\s*\{\s*"(?:post|patch)"\s*:\s*\[')
_DOTTED_HEAD = re.compile(rb'"dotted_order"\s*:\s*"\d{8}T\d{12}Z[0-9a-fA-F]{8}-')
_RUN_TYPE_HEAD = re.compile(rb'"run_type"\s*:\s*"(?:llm|chain|tool|retriever|embedding|prompt|parser)"')
_RUN_KEYS_HEAD = re.compile(rb'"(?:parent_run_id|trace_id|start_time|session_name)"\s*:')


def _dotted_ns(seg: str) -> int | None:
    """The start time a ``dotted_order`` segment opens with, as ns (None when it has none)."""
    if _DOTTED_TS.match(seg) is None:
        return None
    return iso_ns(f"{seg[:4]}-{seg[4:6]}-{seg[6:8]}T{seg[9:11]}:{seg[11:13]}:{seg[13:15]}.{seg[15:21]}Z")


def error_type_of(error: str) -> str | None:
    """The exception class a LangSmith ``error`` string starts with (``ValueError('x')``,
    ``ToolException: ...``, JS ``Error: ...``), or None."""
    m = _ERROR_TYPE.match(error)
    return m.group(1) if m else None


# -- the reader ----------------------------------------------------------------------

class LangSmithReader:
    """Reads LangSmith run-ingest payloads and run exports (JSON or JSON Lines)."""

    name = "langsmith"

    def sniff(self, head: bytes) -> bool:
        """An object or array that starts as a ``{"post": [...]}`` / ``{"patch": [...]}``
        payload, or holds a ``dotted_order`` value (timestamp + UUID), or a ``run_type``
        of LangSmith's enum next to a run field (``parent_run_id``, ``trace_id``,
        ``start_time``, ``session_name``)."""
        h = head.removeprefix(BOM)
        first = h.lstrip()[:1]
        if first not in (b"{", b"["):
            return False
        if _PAYLOAD_START.match(h) or _DOTTED_HEAD.search(h):
            return True
        return _RUN_TYPE_HEAD.search(h) is not None and _RUN_KEYS_HEAD.search(h) is not None

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file into one run per trace id, in first-seen order.

        Raises:
            ReadError: empty, not JSON (no line of a JSONL file parses either), or
                no run record anywhere.
        """
        return _Reading(path).run(data)


class _Rec:
    """One run id: its post(s), its patches, where it was first seen."""

    __slots__ = ("line", "patches", "post", "where")

    def __init__(self, line: int | None, where: str) -> None:
        self.post: dict[str, Any] | None = None
        self.patches: list[dict[str, Any]] = []
        self.line = line
        self.where = where


def _merge(post: dict[str, Any] | None, patches: list[dict[str, Any]]) -> dict[str, Any]:
    if not patches:
        return post or {}
    out = dict(post) if post else {}
    for p in patches:
        for k, v in p.items():
            old = out.get(k)
            if v is None and old is not None:
                continue  # a null in a patch never erases what was posted
            if k == "extra" and type(v) is dict and type(old) is dict:
                merged = {**old, **v}
                if type(old.get("metadata")) is dict and type(v.get("metadata")) is dict:
                    merged["metadata"] = {**old["metadata"], **v["metadata"]}
                v = merged
            out[k] = v
    return out


class _Reading(FileReading):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.recs: dict[str, _Rec] = {}
        self.record_index = 0
        self.single_line: int | None = None
        self.jsonl = False
        self.warned_types: set[str] = set()

    def run(self, data: bytes) -> ReaderOutput:
        docs, self.jsonl = load_json_or_jsonl(self.path, data, self.issues)
        for line, value in docs:
            self.single_line = line
            self._value(value, line, "$", top=True)
        if not self.recs:
            raise ReadError(self.path, "no LangSmith run found (expected a run object with an id, "
                            "or a {\"post\": [...], \"patch\": [...]} payload)"
                            + (f"; first problem: {self.issues[0]}" if self.issues else ""))
        return ReaderOutput(runs=self._build(), issues=self.issues)

    # -- collecting ------------------------------------------------------------------

    def _value(self, v: Any, line: int | None, where: str, top: bool = False) -> None:
        if type(v) is list:
            if not top:
                self.issue(line, where, "nested list is not a run; skipped")
                return
            for i, item in enumerate(v):
                self._value(item, line, f"{where}[{i}]")
            return
        if type(v) is not dict:
            self.issue(line, where, f"expected a run object, found {type(v).__name__}; skipped")
            return
        if "id" not in v and ("post" in v or "patch" in v):
            for key in ("post", "patch"):
                items = v.get(key)
                if items is None:
                    continue
                if type(items) is not list:
                    self.issue(line, f"{where}.{key}", f"expected a list, found {type(items).__name__}; skipped")
                    continue
                for i, r in enumerate(items):
                    self._run(r, line, f"{where}.{key}[{i}]", patch=key == "patch")
            return
        if "id" not in v and type(v.get("runs")) is list:
            for i, r in enumerate(v["runs"]):
                self._run(r, line, f"{where}.runs[{i}]", patch=False)
            return
        self._run(v, line, where, patch=False)

    def _run(self, r: Any, line: int | None, where: str, *, patch: bool) -> None:
        if type(r) is not dict:
            self.issue(line, where, f"expected a run object, found {type(r).__name__}; skipped")
            return
        rid = r.get("id")
        if rid is None or rid == "":
            self.issue(line, where, "run without an id; skipped")
            return
        rid = str(rid).strip().lower()
        self.record_index += 1
        rec_line = line if self.jsonl or self.single_line is not None else self.record_index
        rec = self.recs.get(rid)
        if rec is None:
            rec = self.recs[rid] = _Rec(rec_line, where)
        elif not patch and rec.post is None:  # the post of a run patched earlier: the span points at the post
            rec.line, rec.where = rec_line, where
        children = r.get("child_runs")
        if type(children) is list and children:
            r = {k: v for k, v in r.items() if k != "child_runs"}
        if patch:
            rec.patches.append(r)
        elif rec.post is None:
            rec.post = r
        else:
            self.issue(line, where, f"run {rid} posted twice; the later post's fields override", "warning")
            rec.patches.append(r)
        if type(children) is list:
            for i, c in enumerate(children):
                if type(c) is dict and c.get("parent_run_id") is None:
                    c = {**c, "parent_run_id": rid}
                self._run(c, line, f"{where}.child_runs[{i}]", patch=False)

    # -- building --------------------------------------------------------------------

    def _build(self) -> list[RunSpans]:
        runs: dict[str, dict[str, Any]] = {}
        dotted: dict[str, list[str] | None] = {}
        parents: dict[str, str | None] = {}
        tids: dict[str, str | None] = {}
        for rid, rec in self.recs.items():
            run = _merge(rec.post, rec.patches)
            runs[rid] = run
            if rec.post is None:
                self.issue(rec.line, rec.where, f"run {rid} was patched but never posted; loaded from the patch alone"
                           + ("" if run.get("run_type") else " (no run_type: shown as other)"), "warning")
            segs = self._dotted(run.get("dotted_order"), rid, rec)
            dotted[rid] = segs
            parent = run.get("parent_run_id")
            parent = str(parent).strip().lower() if parent not in (None, "") else None
            if segs is not None and len(segs) > 1:
                from_dotted = segs[-2][22:].lower()
                if parent is None:
                    parent = from_dotted
                elif parent != from_dotted:
                    self.issue(rec.line, f"{rec.where}.dotted_order",
                               f"dotted_order names parent {from_dotted}, parent_run_id {parent}; parent_run_id kept", "warning")
            parents[rid] = parent
            tid = run.get("trace_id")
            tid = str(tid).strip().lower() if tid not in (None, "") else None
            if tid is None and segs is not None:
                tid = segs[0][22:].lower()
            tids[rid] = tid
        # trace ids not given: the root reached through parents
        for rid in runs:
            if tids[rid] is None:
                seen = {rid}
                cur = rid
                while parents.get(cur) is not None and parents[cur] in runs and parents[cur] not in seen:
                    cur = parents[cur]  # type: ignore[assignment]
                    seen.add(cur)
                    if tids[cur] is not None:
                        break
                tids[rid] = tids[cur] if tids[cur] is not None else cur
        groups: dict[str, list[str]] = {}
        for rid in runs:
            groups.setdefault(tids[rid], []).append(rid)  # type: ignore[arg-type]
        out: list[RunSpans] = []
        for tid, ids in groups.items():
            out.append(self._trace(tid, ids, runs, dotted, parents))
        return out

    def _dotted(self, value: Any, rid: str, rec: _Rec) -> list[str] | None:
        if value in (None, ""):
            return None
        segs = value.split(".") if type(value) is str else []
        # the segments read: the run's own (last), its parent's, the root's (the trace id)
        if not segs or not all(len(s) == 58 and _DOTTED_TS.match(s) and _UUID.match(s, 22)
                               for s in {segs[0], segs[-2] if len(segs) > 1 else segs[0], segs[-1]}):
            self.issue(rec.line, f"{rec.where}.dotted_order",
                       f"dotted_order {value!r} is not timestamp+UUID segments joined by '.'; ignored", "warning")
            return None
        if segs[-1][22:].lower() != rid:
            self.issue(rec.line, f"{rec.where}.dotted_order",
                       f"dotted_order ends in {segs[-1][22:]}, not the run id {rid}; ignored", "warning")
            return None
        return segs

    def _trace(self, tid: str, ids: list[str], runs: dict[str, dict[str, Any]],
               dotted: dict[str, list[str] | None], parents: dict[str, str | None]) -> RunSpans:
        by_dotted = all(dotted[i] is not None for i in ids)
        if by_dotted:
            ids = sorted(ids, key=lambda i: runs[i]["dotted_order"])
        spans: list[Span] = []
        missing = {"llm_in": 0, "llm_out": 0, "tool_out": 0, "open": 0}
        for n, rid in enumerate(ids):
            span = self._span(rid, runs[rid], parents[rid], tid, dotted[rid], n if by_dotted else -1, missing)
            spans.append(span)
        header = self._header(tid, ids, runs, spans, parents)
        notes = []
        if missing["llm_in"]:
            notes.append(f"{missing['llm_in']} llm run(s) without input messages")
        if missing["llm_out"]:
            notes.append(f"{missing['llm_out']} llm run(s) without an output message")
        if missing["tool_out"]:
            notes.append(f"{missing['tool_out']} tool run(s) without output")
        if missing["open"]:
            notes.append(f"{missing['open']} run(s) never ended (no end_time: still running, or the patch is missing)")
        if notes:
            self.issue(None, f"trace {tid}", "content not recorded: " + "; ".join(notes), "warning")
        return RunSpans(trace_id=tid, spans=spans, header=header)

    def _header(self, tid: str, ids: list[str], runs: dict[str, dict[str, Any]], spans: list[Span],
                parents: dict[str, str | None]) -> dict[str, Any]:
        header: dict[str, Any] = {"run_id": tid}
        roots = [s for s in spans if s.parent_id is None or s.parent_id not in runs]
        root = next((s for s in roots if s.span_id == tid), roots[0] if roots else spans[0])
        starts = [s.start_ns for s in roots if s.start_ns is not None]
        if starts:
            header["start_ns"] = min(starts)
            header["started_at"] = ns_to_iso(header["start_ns"])
        run = runs[root.span_id]
        if root.name:
            header["agent"] = root.name
        if root.kind is SpanKind.LLM:
            msgs = root.data.get("messages") or ()
            user = next((m.get("content") for m in msgs if m.get("role") == "user"), None)
            if user is not None:
                header["input"] = user
        elif run.get("inputs") not in (None, {}):
            header["input"] = unwrap(run["inputs"], "input")
        llm = next((s for s in spans if s.kind is SpanKind.LLM), None)
        if llm is not None:
            model = {k: v for k, v in (("id", llm.data.get("model")), ("version", llm.attributes.get("response_model")),
                                       ("provider", llm.data.get("provider"))) if v is not None}
            if model:
                header["model"] = model
        md = as_dict(as_dict(run.get("extra")).get("metadata"))
        if md.get("revision_id") is not None:
            header["code_version"] = str(md["revision_id"])
        if run.get("session_name") is not None:
            header["project"] = run["session_name"]
        outcome: dict[str, Any] = {}
        if root.status is Status.ERROR:
            outcome["status"] = "error"
            if run.get("error"):
                outcome["error"] = run["error"]
        if run.get("feedback_stats"):
            outcome["feedback"] = run["feedback_stats"]
        if outcome:
            header["outcome"] = outcome
        return header

    # -- one run ---------------------------------------------------------------------

    def _span(self, rid: str, run: dict[str, Any], parent: str | None, tid: str, segs: list[str] | None,
              seq: int, missing: dict[str, int]) -> Span:
        rec = self.recs[rid]
        name = as_str(run.get("name")) or ""
        rt = run.get("run_type")
        rt_s = rt.lower() if type(rt) is str else None
        kind = _KINDS.get(rt_s) if rt_s else SpanKind.OTHER
        if kind is None:
            kind = SpanKind.OTHER
            if rt_s not in self.warned_types:
                self.warned_types.add(rt_s)  # type: ignore[arg-type]
                self.issue(rec.line, f"{rec.where}.run_type", f"unknown run_type {rt!r}; read as other", "warning")
        if rt_s == "chain" and (parent is None or _AGENT_NAME.search(name)):
            kind = SpanKind.AGENT
        start = self._time(run, "start_time", rec)
        if start is None and segs is not None:
            start = _dotted_ns(segs[-1])
        end = self._time(run, "end_time", rec)
        error = run.get("error")
        error = as_str(error) if error not in (None, "") else None
        status = Status.UNSET
        if error is not None or run.get("status") == "error":
            status = Status.ERROR
        elif end is not None or run.get("status") == "success":
            status = Status.OK
        if end is None and run.get("status") != "success" and error is None:
            missing["open"] += 1
        error_type = error_type_of(error) if error else None
        inputs = run.get("inputs")
        outputs = run.get("outputs")
        extra = as_dict(run.get("extra"))
        attrs: dict[str, Any] = {}
        if rt is not None:
            attrs["run_type"] = rt
        if kind is SpanKind.LLM:
            data, notes = llm_data(run, as_dict(inputs), outputs if type(outputs) is dict else {}, extra, attrs)
            for below, message in notes:
                self.issue(rec.line, f"{rec.where}{below}", message, "warning")
            if not data.get("messages"):
                missing["llm_in"] += 1
            if data.get("output") is None and status is not Status.ERROR:
                missing["llm_out"] += 1
        elif kind is SpanKind.TOOL:
            data, call_status = tool_data(name, inputs, outputs)
            if call_status is Status.ERROR:
                status = Status.ERROR
            if "output" not in data and status is not Status.ERROR:
                missing["tool_out"] += 1
        elif kind is SpanKind.RETRIEVAL:
            data = retrieval_data(inputs, outputs)
        else:
            data = {}
            if kind is SpanKind.AGENT:
                data["agent_name"] = name
            if inputs is not None and inputs != {}:
                data["input"] = unwrap(inputs, "input")
            if outputs is not None and (outputs != {} or end is not None):
                data["output"] = unwrap(outputs, "output")
        if error is not None:
            attrs["error"] = error
        tags = run.get("tags")
        if tags:
            attrs["tags"] = tags
        md = extra.get("metadata")
        if type(md) is dict:
            md = {k: v for k, v in md.items() if not k.startswith("ls_")}
            if md:
                attrs["metadata"] = md
        events = run.get("events")
        if type(events) is list and events:
            kept = [e for e in events if not (type(e) is dict and e.get("name") == "new_token")]
            if kept:
                attrs["events"] = kept
        for k in ("reference_example_id", "session_id"):
            if run.get(k) is not None:
                attrs[k] = run[k]
        return Span(span_id=rid, parent_id=parent, seq=seq, kind=kind, name=name or (rt_s or kind.value),
                    start_ns=start, end_ns=end, status=status, error_type=error_type, data=data,
                    attributes=attrs, trace_id=tid, line=rec.line)

    def _time(self, run: dict[str, Any], key: str, rec: _Rec) -> int | None:
        v = run.get(key)
        if v is None:
            return None
        ns = iso_ns(v)
        if ns is None:
            self.issue(rec.line, f"{rec.where}.{key}", f"{key} {v!r} is not an ISO 8601 time; ignored", "warning")
        return ns
