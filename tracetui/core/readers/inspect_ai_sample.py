"""inspect-ai eval logs, one sample's mapping: the events of one sample (one run) into spans
(nesting, model/tool/score/approval/subtask events, attachments resolved), with ``LogInfo``,
what the log header says once for every sample.

The log loading (``.json`` logs, ``.eval`` zips, damaged zips) is ``inspect_ai.py``
(``InspectAiReader``), which calls ``SampleSpans(reporter, sample, base, info, run_id).build()``
per sample; the mapping table is in its module docstring and docs/readers/inspect-ai.md.

The sample's values with attachments resolved (messages, tool schema hashes) are
``inspect_ai_content.SampleContent``, which ``SampleSpans`` builds on.
"""

from __future__ import annotations

from typing import Any, Protocol

from tracetui.core.canonical import args_hash
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.base import RunSpans
from tracetui.core.readers.inspect_ai_content import SampleContent, error_text, python_error_type, split_model
from tracetui.core.readers.otel_messages import normalize_finish_reason
from tracetui.core.readers.timefmt import iso_ns, ns_to_iso

__all__ = ["LogInfo", "Reporter", "SampleSpans"]

_CLIENT_CONFIG = frozenset({"max_retries", "timeout", "attempt_timeout", "max_connections", "batch", "cache_prompt"})
"""GenerateConfig fields that steer inspect's client, not the model's answer: left out of ``params``."""
_MINOR_EVENTS = frozenset({"compaction", "interrupt", "checkpoint", "branch", "anchor", "score_edit", "input"})


class Reporter(Protocol):
    """Where a sample's mapping reports: the log reading (``inspect_ai._Reading``)."""

    unknown_events: set[str]

    def issue(self, where: str, message: str, severity: str = "skipped") -> None: ...


class LogInfo:
    """What the log header says once for every sample: task, model, start, revision."""

    def __init__(self, doc: dict[str, Any]) -> None:
        ev = doc.get("eval")
        ev = ev if isinstance(ev, dict) else {}
        task = ev.get("task")
        self.task = task if isinstance(task, str) and task else "inspect-ai"
        self.model_name = ev.get("model")
        self.created = ev.get("created")
        rev = ev.get("revision")
        self.code_version: str | None = None
        if isinstance(rev, dict) and rev.get("commit"):
            kind = rev.get("type")
            self.code_version = f"{kind}:{rev['commit']}" if isinstance(kind, str) and kind else str(rev["commit"])


class SampleSpans(SampleContent):
    """Builds the spans of one sample (one run)."""

    def __init__(self, reading: Reporter, sample: dict[str, Any], base: str, info: LogInfo, run_id: str) -> None:
        super().__init__(sample)
        self.r = reading
        self.sample = sample
        self.base = base
        self.info = info
        self.run_id = run_id
        self.spans: list[Span] = []
        self.by_id: dict[str, Span] = {}
        self.seq = 1
        self.root_id = "root"
        self.no_messages = 0
        self.input: Any = None

    # -- spans ---------------------------------------------------------------------------

    def add(self, span_id: str, parent: str | None, kind: SpanKind, name: str, start: int | None, end: int | None,
            data: dict[str, Any] | None = None, attrs: dict[str, Any] | None = None,
            status: Status = Status.UNSET, error_type: str | None = None, line: int | None = None) -> Span:
        span = Span(span_id=span_id, parent_id=parent, seq=self.seq, kind=kind, name=name, start_ns=start, end_ns=end,
                    status=status, error_type=error_type, data=data or {}, attributes=attrs or {}, line=line)
        self.seq += 1
        self.spans.append(span)
        self.by_id.setdefault(span_id, span)
        return span

    def ts(self, ev: dict[str, Any], key: str, where: str) -> int | None:
        v = ev.get(key)
        if v is None:
            return None
        ns = iso_ns(v)
        if ns is None:
            self.r.issue(f"{where}.{key}", f"{v!r} is not an ISO 8601 time; ignored", "warning")
        return ns

    def build(self) -> RunSpans:
        s = self.sample
        info = self.info
        if not self.events:
            self.r.issue(self.base + ".events", "sample has no events (an early log, or written without a transcript); "
                         "only its root span is loaded", "warning")
        self.walk(self.events, f"{self.base}.events", None, "event-")
        # the synthesized root: first, named after the task
        sample_input = self.res(s.get("input"))
        run_input = sample_input if sample_input is not None else self.input
        if isinstance(run_input, list):
            run_input = self.messages(run_input)
        out_msg, _ = self.output_message(s.get("output"))
        answer = out_msg.get("content") if out_msg else None
        starts = [x.start_ns for x in self.spans if x.start_ns is not None]
        ends = [x.end_ns for x in self.spans if x.end_ns is not None]
        err = error_text(s.get("error"))
        root = Span(span_id=self.root_id, parent_id=None, seq=0, kind=SpanKind.AGENT, name=info.task,
                    start_ns=min(starts) if starts else None, end_ns=max(ends) if ends else None,
                    status=Status.ERROR if err else Status.UNSET, error_type=python_error_type(err) if err else None,
                    data={"agent_name": info.task, "input": run_input, "output": answer},
                    attributes={"error.message": err} if err else {})
        spans = [root, *self.spans]
        # header
        header: dict[str, Any] = {"run_id": self.run_id, "agent": info.task}
        model, provider = split_model(info.model_name)
        if model:
            mh: dict[str, Any] = {"id": model}
            out = s.get("output")
            version = out.get("model") if isinstance(out, dict) else None
            if isinstance(version, str) and version:
                mh["version"] = version
            if provider:
                mh["provider"] = provider
            header["model"] = mh
        start = iso_ns(info.created)
        if start is not None:
            header["started_at"] = ns_to_iso(start)
            header["start_ns"] = start
        if info.code_version:
            header["code_version"] = info.code_version
        if run_input is not None:
            header["input"] = run_input
        outcome: dict[str, Any] = {}
        scores = self.res(s.get("scores"))
        if isinstance(scores, dict):  # each scorer's scalar value up front: `tracetui show` prints flat values
            for name, sc in scores.items():
                value = sc.get("value") if isinstance(sc, dict) else None
                if isinstance(value, (str, int, float, bool)) and name not in ("scores", "target", "error", "limit"):
                    outcome[str(name)] = value
        if scores is not None:
            outcome["scores"] = scores
        target = self.res(s.get("target"))
        if target is not None and target != "":
            outcome["target"] = target
        if err:
            outcome["error"] = err
        if s.get("limit") is not None:
            outcome["limit"] = s.get("limit")
        if outcome:
            header["outcome"] = outcome
        if self.missing:
            shown = ", ".join(sorted(self.missing)[:3])
            self.r.issue(self.base + ".attachments", f"{len(self.missing)} attachment reference(s) not in the sample's "
                         f"attachments, left as is (attachment://{shown}{', ...' if len(self.missing) > 3 else ''})", "warning")
        if self.no_messages:
            self.r.issue(self.base + ".events", f"{self.no_messages} model event(s) without input messages", "warning")
        return RunSpans(trace_id=self.run_id, spans=spans, header=header)

    # -- events --------------------------------------------------------------------------

    def walk(self, events: list[Any], base: str, default_parent: str | None, prefix: str) -> None:
        """Map a list of events to spans. ``default_parent``: parent of events outside any span/step
        (None = the root). Nested ``events`` lists of older tool/subtask events recurse here."""
        root = default_parent or self.root_id
        span_ids: set[str] = set()
        tool_spans: dict[tuple[Any, Any], list[int]] = {}  # (parent_id, name) -> indexes of tool span_begins
        begins: dict[str, int] = {}
        for i, ev in enumerate(events):
            if isinstance(ev, dict) and ev.get("event") == "span_begin" and isinstance(ev.get("id"), str):
                span_ids.add(ev["id"])
                begins.setdefault(ev["id"], i)
                pid, name = ev.get("parent_id"), ev.get("name")
                if ev.get("type") == "tool" and isinstance(pid, (str, type(None))) and isinstance(name, str):
                    tool_spans.setdefault((pid, name), []).append(i)
        # pair each tool event with the tool span_begin that wraps its execution (same function,
        # a child of the tool event's span, or the span the tool event sits in), in file order
        merged: dict[int, int] = {}  # tool event index <-> span_begin index, both ways
        if tool_spans:
            for i, ev in enumerate(events):
                if not (isinstance(ev, dict) and ev.get("event") == "tool"):
                    continue
                fn, sid = ev.get("function"), ev.get("span_id")
                if not isinstance(fn, str) or not isinstance(sid, (str, type(None))):
                    continue
                j = None
                b = begins.get(sid) if isinstance(sid, str) else None
                if b is not None and b not in merged and events[b].get("type") == "tool" and events[b].get("name") == fn:
                    j = b
                else:
                    cands = tool_spans.get((sid, fn))
                    while cands and j is None:
                        c = cands.pop(0)
                        if c not in merged:
                            j = c
                if j is not None:
                    merged[i] = j
                    merged[j] = i
        steps: list[tuple[Any, str | None]] = []  # open step events: (name, span id or None when skipped)
        done: set[int] = set()

        def parent_of(ev: dict[str, Any]) -> str:
            sid = ev.get("span_id")
            if isinstance(sid, str) and sid in span_ids:
                return sid
            for _, step_id in reversed(steps):
                if step_id is not None:
                    return str(step_id)
            return root

        for i, ev in enumerate(events):
            where = f"{base}[{i}]"
            if not isinstance(ev, dict):
                self.r.issue(where, f"event is a {type(ev).__name__}, not an object; skipped")
                continue
            if i in done:
                continue
            kind = ev.get("event")
            if not isinstance(kind, str):
                self.r.issue(where + ".event", f"event type {kind!r} is not a string; event skipped")
                continue
            if kind == "span_begin":
                if i in merged:
                    done.add(merged[i])
                    self.tool(events[merged[i]], f"{base}[{merged[i]}]", ev, self.begin_parent(ev, span_ids, root, where), i)
                else:
                    self.span_begin(ev, where, self.begin_parent(ev, span_ids, root, where))
            elif kind == "span_end":
                self.span_end(ev, where)
            elif kind == "tool":
                if i in merged:
                    j = merged[i]
                    done.add(j)
                    b = events[j]
                    # a tool event inside its own span: the span's parent; a sibling: the event's span
                    p = self.begin_parent(b, span_ids, root, where) if ev.get("span_id") == b.get("id") else parent_of(ev)
                    self.tool(ev, where, b, p, i)
                else:
                    self.tool(ev, where, None, parent_of(ev), i)
            elif kind == "step":
                self.step(ev, where, i, steps, parent_of(ev), prefix)
            else:
                self.event(ev, where, i, parent_of(ev), prefix)
        for name, step_id in steps:
            if step_id is not None:
                self.r.issue(base, f"step {name!r} has no end event; its end time is unknown", "warning")

    def begin_parent(self, ev: dict[str, Any], span_ids: set[str], root: str, where: str) -> str:
        """Parent of a ``span_begin``: its ``parent_id`` when that span is in the sample, else ``root``."""
        p = ev.get("parent_id")
        if p is None:
            return root
        if isinstance(p, str) and p in span_ids and p != ev.get("id"):
            return p
        self.r.issue(where + ".parent_id", f"parent span {p!r} is not in the sample; placed under the run's root", "warning")
        return root

    def step(self, ev: dict[str, Any], where: str, i: int, steps: list[tuple[Any, str | None]], parent: str,
             prefix: str) -> None:
        name = ev.get("name")
        action = ev.get("action")
        ts = self.ts(ev, "timestamp", where)
        if action == "begin":
            # transitional logs wrote a step and a span_begin for one solver: keep the span only
            p = self.by_id.get(parent)
            if p is not None and p.name == name and p.attributes.get("inspect.span_type") == ev.get("type") \
                    and p.seq == self.seq - 1:
                steps.append((name, None))
                return
            sid = f"step-{prefix}{i}" if prefix != "event-" else f"step-{i}"
            attrs = {"inspect.step_type": ev["type"]} if ev.get("type") is not None else {}
            self.add(sid, parent, SpanKind.OTHER, str(name) if name is not None else "step", ts, None, attrs=attrs)
            steps.append((name, sid))
        elif action == "end":
            for k in range(len(steps) - 1, -1, -1):
                if steps[k][0] == name:
                    opened = steps.pop(k)[1]
                    if opened is not None and ts is not None:
                        self.by_id[opened].end_ns = ts
                    return
            self.r.issue(where, f"step end {name!r} without a matching begin; ignored", "warning")
        else:
            self.r.issue(where, f"step event with action {action!r} (expected begin or end); ignored")

    def span_begin(self, ev: dict[str, Any], where: str, parent: str) -> None:
        sid = ev["id"] if isinstance(ev.get("id"), str) else None
        if sid is None:
            self.r.issue(where, "span_begin without an id; skipped")
            return
        if sid in self.by_id:
            self.r.issue(where, f"a second span_begin with id {sid!r}; skipped")
            return
        stype = ev.get("type")
        name = ev.get("name")
        name = str(name) if name is not None else str(stype or "span")
        attrs = {"inspect.span_type": stype} if stype is not None else {}
        if stype == "agent":
            self.add(sid, parent, SpanKind.AGENT, name, self.ts(ev, "timestamp", where), None,
                     data={"agent_name": name}, attrs=attrs)
        else:
            self.add(sid, parent, SpanKind.OTHER, name, self.ts(ev, "timestamp", where), None, attrs=attrs)

    def span_end(self, ev: dict[str, Any], where: str) -> None:
        sid = ev.get("id")
        span = self.by_id.get(sid) if isinstance(sid, str) else None
        if span is None:
            self.r.issue(where, f"span_end for {sid!r}, which no span_begin opened; ignored", "warning")
            return
        end = self.ts(ev, "timestamp", where)
        if end is not None and (span.end_ns is None or end > span.end_ns):
            span.end_ns = end

    def tool(self, ev: dict[str, Any], where: str, begin: dict[str, Any] | None, parent: str, i: int) -> None:
        fn = ev.get("function")
        fn = str(fn) if fn is not None else "tool"
        args = self.res(ev.get("arguments"))
        result = self.res(ev.get("result"))
        data: dict[str, Any] = {"tool_name": fn}
        call_id = ev.get("id")
        if call_id is not None:
            data["call_id"] = str(call_id)
        data["arguments"] = args
        try:
            data["args_hash"] = args_hash(args)
        except TypeError:
            pass
        data["output"] = result
        attrs: dict[str, Any] = {}
        if ev.get("truncated") is not None:
            data["output_truncated"] = True
            attrs["inspect.truncated"] = ev["truncated"]
        status, etype = Status.UNSET, None
        err = ev.get("error")
        if isinstance(err, dict):
            status = Status.ERROR
            etype = str(err["type"]) if err.get("type") is not None else "error"
            if err.get("message") is not None:
                attrs["error.message"] = self.res(err["message"])
        elif err is not None:
            status, etype = Status.ERROR, "error"
            attrs["error.message"] = self.res(err)
        if ev.get("failed") is True and status is not Status.ERROR:
            status, etype = Status.ERROR, "failed"
        for key in ("agent", "pending"):
            if ev.get(key):
                attrs[f"inspect.{key}"] = ev[key]
        start = self.ts(ev, "timestamp", where)
        end = self.ts(ev, "completed", where)
        if begin is not None:
            sid = begin["id"]
            b = self.ts(begin, "timestamp", where)
            if b is not None and (start is None or b < start):
                start = b
            attrs["inspect.span_type"] = "tool"
        else:
            sid = f"tool-{call_id}" if call_id is not None else f"event-{i}"
            if sid in self.by_id:
                sid = f"{sid}-event-{i}"
        span = self.add(sid, parent, SpanKind.TOOL, fn, start, end, data, attrs, status, etype)
        nested = ev.get("events")
        if isinstance(nested, list) and nested:  # logs before inspect 0.3.7x nested a tool's events in it
            self.walk(nested, f"{where}.events", span.span_id, f"{span.span_id}.")

    def event(self, ev: dict[str, Any], where: str, i: int, parent: str, prefix: str) -> None:
        kind = ev.get("event")
        sid = f"{prefix}{i}"
        start = self.ts(ev, "timestamp", where)
        if kind == "model":
            self.model(ev, where, sid, parent, start)
            return
        end = self.ts(ev, "completed", where) if ev.get("completed") is not None else start
        data: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        status, etype = Status.UNSET, None
        name = str(kind)
        span_kind = SpanKind.OTHER
        if kind == "score":
            data["output"] = self.res(ev.get("score"))
            if ev.get("target") is not None:
                attrs["inspect.target"] = self.res(ev.get("target"))
            if ev.get("intermediate"):
                attrs["inspect.intermediate"] = True
        elif kind == "sample_init":
            smp = ev.get("sample")
            value = self.res(smp.get("input")) if isinstance(smp, dict) else None
            data["input"] = value
            if self.input is None:
                self.input = value
        elif kind == "state":
            changes = ev.get("changes")
            # paths only: the values repeat what model/tool spans carry, and some vary every run (/output/time)
            data["output"] = [f"{c.get('op')} {c.get('path')}" for c in changes if isinstance(c, dict)] \
                if isinstance(changes, list) else None
        elif kind == "store":
            changes = ev.get("changes")
            data["output"] = [{"op": c.get("op"), "path": c.get("path"), "value": self.res(c.get("value"))}
                              for c in changes if isinstance(c, dict)] if isinstance(changes, list) else None
        elif kind == "sandbox":
            action = ev.get("action")
            name = f"sandbox {action}" if action else "sandbox"
            inp = {k: self.res(ev[k]) for k in ("cmd", "file") if ev.get(k) is not None}
            data["input"] = inp or None
            data["output"] = {"exit_code": ev.get("result")} if ev.get("result") is not None else None
            for k in ("input", "output"):
                v = ev.get(k)
                if isinstance(v, str) and v.strip():
                    attrs[f"sandbox.{k}"] = v.strip()
        elif kind == "info":
            src = ev.get("source")
            name = f"info {src}" if isinstance(src, str) and src else "info"
            data["output"] = self.res(ev.get("data"))
        elif kind == "logger":
            msg = ev.get("message")
            msg = msg if isinstance(msg, dict) else {}
            level = msg.get("level")
            name = f"logger {level}" if level else "logger"
            data["output"] = self.res(msg.get("message"))
            for k in ("name", "filename", "lineno"):
                if msg.get(k) is not None:
                    attrs[f"logger.{k}"] = msg[k]
        elif kind == "error":
            text = error_text(ev.get("error"))
            status, etype = Status.ERROR, python_error_type(text) or "error"
            data["output"] = text
        elif kind == "sample_limit":
            ltype = ev.get("type")
            name = f"sample_limit {ltype}" if ltype else "sample_limit"
            data["output"] = {k: ev[k] for k in ("type", "limit", "message") if ev.get(k) is not None}
        elif kind == "approval":
            span_kind = SpanKind.DECISION
            call = ev.get("call")
            fn = call.get("function") if isinstance(call, dict) else None
            name = f"approval {fn}" if fn else "approval"
            data = {"decision": "approval", "value": ev.get("decision")}
            for k in ("approver", "explanation"):
                if ev.get(k) is not None:
                    attrs[f"approval.{k}"] = self.res(ev[k])
        elif kind == "subtask":
            span_kind = SpanKind.AGENT
            sname = ev.get("name")
            name = str(sname) if sname is not None else "subtask"
            data = {"agent_name": name, "input": self.res(ev.get("input")), "output": self.res(ev.get("result"))}
        elif kind in _MINOR_EVENTS:
            if kind == "input":
                data["output"] = self.res(ev.get("input"))
            elif kind == "score_edit":
                data["output"] = self.res(ev.get("edit"))
        else:
            name = str(kind) if kind is not None else "event"
            if kind not in self.r.unknown_events:
                self.r.unknown_events.add(str(kind))
                self.r.issue(where, f"unknown inspect event type {kind!r}: read as an 'other' span without data "
                             "(later ones of this type too)", "warning")
        span = self.add(sid, parent, span_kind, name, start, end, data, attrs, status, etype)
        nested = ev.get("events")
        if kind == "subtask" and isinstance(nested, list) and nested:
            self.walk(nested, f"{where}.events", span.span_id, f"{span.span_id}.")

    def model(self, ev: dict[str, Any], where: str, sid: str, parent: str, start: int | None) -> None:
        model, provider = split_model(ev.get("model"))
        data: dict[str, Any] = {}
        if model:
            data["model"] = model
        if provider:
            data["provider"] = provider
        params: dict[str, Any] = {}
        config = ev.get("config")
        if isinstance(config, dict):
            params = {k: v for k, v in config.items() if v is not None and k not in _CLIENT_CONFIG}
        tools = ev.get("tools")
        if isinstance(tools, list) and tools and ev.get("tool_choice") is not None:
            params["tool_choice"] = ev["tool_choice"]
        if params:
            data["params"] = params
        messages = self.messages(ev.get("input"))
        if messages:
            data["messages"] = messages
        else:
            self.no_messages += 1
        if isinstance(tools, list) and tools:
            h = self.tools_hash(tools)
            if h is not None:
                data["tool_schemas_hash"] = h
        out = ev.get("output")
        msg, choice = self.output_message(out)
        if msg is not None:
            data["output"] = msg
        if choice is not None:
            fr = normalize_finish_reason(choice.get("stop_reason"))
            if fr:
                data["finish_reason"] = fr
        attrs: dict[str, Any] = {}
        if isinstance(out, dict):
            usage = out.get("usage")
            if isinstance(usage, dict):
                u = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
                if u:
                    data["usage"] = u
            if isinstance(out.get("model"), str):
                attrs["gen_ai.response.model"] = out["model"]
        call = ev.get("call")
        resp = call.get("response") if isinstance(call, dict) else None
        if isinstance(resp, dict) and isinstance(resp.get("id"), str):
            data["response_id"] = resp["id"]
        status, etype = Status.UNSET, None
        err = ev.get("error")
        if err is None and isinstance(out, dict):
            err = out.get("error")
        text = error_text(err)
        if text:
            status, etype = Status.ERROR, python_error_type(text) or "error"
            attrs["error.message"] = text
        if ev.get("cache"):
            attrs["inspect.cache"] = ev["cache"]
        end = self.ts(ev, "completed", where)
        self.add(sid, parent, SpanKind.LLM, str(ev.get("model") or "model"), start, end, data, attrs, status, etype)
