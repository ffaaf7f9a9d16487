"""One OpenHands event list mapped to spans, in one pass: V0 actions and observations, V1 SDK events.

The table is docs/readers/openhands.md; ``readers.openhands`` finds the event lists in a file and
builds each with ``OpenHandsRun``.
"""

from __future__ import annotations

from typing import Any

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.base import FileReading, RunSpans
from tracetui.core.readers.event_values import content_text, message_text, small_attrs, unique_id
from tracetui.core.readers.openai_shapes import choice_output, usage_from
from tracetui.core.readers.otel_messages import (
    normalize_finish_reason,
    normalize_message,
)
from tracetui.core.readers.timefmt import iso_ns, ns_to_iso

__all__ = ["OpenHandsRun"]

# V0 action types that never become spans (conversation bookkeeping).
_V0_NO_SPAN_ACTIONS = frozenset({"system", "change_agent_state", "condensation", "condensation_request", "null",
                                 "message", "finish", "reject"})
# Terminal tools: no observation is expected, so a missing one is not reported.
_TERMINAL = frozenset({"finish", "reject", "message"})
_V0_ERROR_OBS = {"error": "ErrorObservation", "user_rejected": "UserRejectObservation"}
_V0_SILENT_OBS = frozenset({"agent_state_changed", "null"})
_V1_SKIPPED = frozenset({
    "Condensation", "CondensationRequest", "CondensationSummaryEvent", "TokenEvent", "LLMCompletionLogEvent",
    "PauseEvent", "InterruptEvent", "StreamingDeltaEvent", "UnknownEvent", "HookExecutionEvent",
    "SecurityAnalyzerEvent", "ConversationIterationLimitEvent", "WarningEvent"})
_ARG_SKIP = frozenset({"thought", "kind"})
_UNKNOWN = object()  # arguments the source did not record


class OpenHandsRun:
    """Builds the spans of one run from its events, in one pass: ``event(i, ev)`` for each event in
    order, then ``finish``. Issues go to ``reading`` at the event's line and JSON path (``where``
    is the list's path; ``lines`` the 1-based line of each event, for JSON Lines)."""

    def __init__(self, reading: FileReading, where: str, line: int | None, lines: list[int] | None) -> None:
        self.r = reading
        self.base = where
        self.rec_line = line
        self.lines = lines
        self.spans: list[Span] = []
        self.ids: set[str] = {"root"}
        self.conv: list[dict[str, Any]] = []
        self.llm_by_response: dict[str, Span] = {}
        self.tool_by_event: dict[str, Span] = {}
        self.tool_by_call: dict[str, Span] = {}
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self.prev_ts: int | None = None
        self.input: Any = None
        self.output: Any = None
        self.last_agent_text: str | None = None
        self.model: str | None = None
        self.agent: str | None = None
        self.code_version: str | None = None
        self.tool_schema_hash: str | None = None
        self.outcome: dict[str, Any] = {}
        self.system_seen = False
        self.condensed = False
        self.unknown_kinds: dict[str, int] = {}
        self.where = ""
        self.line: int | None = None

    # -- helpers ---------------------------------------------------------------------------

    def issue(self, message: str, severity: str = "skipped", where: str | None = None) -> None:
        self.r.issue(self.line, self.where if where is None else where, message, severity)

    def add(self, span_id: str, kind: SpanKind, name: str, start: int | None, end: int | None,
            data: dict[str, Any], attrs: dict[str, Any], status: Status = Status.UNSET,
            error_type: str | None = None) -> Span:
        span = Span(span_id=unique_id(span_id, self.ids), parent_id="root", seq=len(self.spans) + 1, kind=kind, name=name,
                    start_ns=start, end_ns=end, status=status, error_type=error_type, data=data,
                    attributes=attrs, line=self.line)
        self.spans.append(span)
        return span

    def ts(self, ev: dict[str, Any]) -> int | None:
        raw = ev.get("timestamp")
        t = iso_ns(raw)
        if t is None and raw is not None:
            self.issue(f"timestamp {raw!r} is not ISO 8601; ignored", "warning", f"{self.where}.timestamp")
        if t is not None:
            if self.first_ts is None or t < self.first_ts:
                self.first_ts = t
            if self.last_ts is None or t > self.last_ts:
                self.last_ts = t
        return t

    def llm(self, key: str, span_id: str, ts: int | None, output: dict[str, Any], *, model: Any = None,
            usage: dict[str, Any] | None = None, finish: Any = None, response_id: Any = None,
            latency_s: Any = None, attrs: dict[str, Any] | None = None) -> Span:
        """The llm span of one model response (created once per ``key``)."""
        span = self.llm_by_response.get(key)
        if span is not None:
            return span
        data: dict[str, Any] = {}
        if model:
            data["model"] = str(model)
            self.model = self.model or str(model)
        data["messages"] = self.conv[:]
        data["output"] = output
        fr = normalize_finish_reason(finish)
        if fr:
            data["finish_reason"] = fr
        if usage:
            data["usage"] = usage
        if response_id is not None:
            data["response_id"] = str(response_id)
        start = self.prev_ts
        if isinstance(latency_s, (int, float)) and not isinstance(latency_s, bool) and ts is not None and latency_s >= 0:
            start = ts - round(latency_s * 1e9)
        if start is not None and ts is not None and start > ts:
            start = None
        span = self.add(span_id, SpanKind.LLM, f"chat {model}" if model else "chat", start, ts, data, attrs or {})
        self.llm_by_response[key] = span
        conv_msg = {k: v for k, v in output.items() if k != "reasoning_content"}
        self.conv.append(conv_msg)
        text = output.get("content")
        if isinstance(text, str) and text:
            self.last_agent_text = text
        return span

    def tool(self, ev_id: str, ts: int | None, tool_name: str, call_id: Any, arguments: Any,
             attrs: dict[str, Any]) -> Span:
        data: dict[str, Any] = {"tool_name": tool_name}
        if call_id is not None:
            data["call_id"] = str(call_id)
        if arguments is not _UNKNOWN:
            data["arguments"] = arguments
            try:
                data["args_hash"] = args_hash(arguments)
            except TypeError:
                pass
        span = self.add(ev_id, SpanKind.TOOL, f"execute_tool {tool_name}", ts, None, data, attrs)
        self.tool_by_event[ev_id] = span
        if call_id is not None:
            self.tool_by_call.setdefault(str(call_id), span)
        return span

    def answer(self, cause: Any, call_id: Any) -> Span | None:
        """The pending tool span an observation answers (by action id, else by tool call id)."""
        span = None
        if cause is not None:
            span = self.tool_by_event.pop(str(cause), None)
        if span is None and call_id is not None:
            cand = self.tool_by_call.get(str(call_id))
            if cand is not None and self.tool_by_event.get(cand.span_id) is cand:
                span = self.tool_by_event.pop(cand.span_id)
        if span is not None:
            cid = span.data.get("call_id")
            if cid is not None and self.tool_by_call.get(cid) is span:
                del self.tool_by_call[cid]
        return span

    def observe(self, span: Span, ts: int | None, output: Any, status: Status, error_type: str | None,
                attrs: dict[str, Any]) -> None:
        span.data["output"] = output  # type: ignore[index]  # fresh dict, not yet shared
        span.end_ns = ts
        span.status = status
        span.error_type = error_type
        if attrs:
            span.attributes.update(attrs)  # type: ignore[attr-defined]
        msg: dict[str, Any] = {"role": "tool", "content": message_text(output)}
        cid = span.data.get("call_id")
        if cid is not None:
            msg["tool_call_id"] = cid
        else:
            msg["role"] = "user"
        self.conv.append(msg)

    def user_message(self, text: Any) -> None:
        text = message_text(text)
        if self.input is None and text:
            self.input = text
        self.conv.append({"role": "user", "content": text})

    # -- events ----------------------------------------------------------------------------

    def event(self, i: int, ev: Any) -> None:
        """Map event ``i`` of the list (a V0 action or observation, or a V1 SDK event)."""
        self.where = f"{self.base}[{i}]"
        self.line = self.lines[i] if self.lines is not None else (self.rec_line if self.rec_line is not None else i + 1)
        if not isinstance(ev, dict):
            self.issue(f"event is a {type(ev).__name__}, not an object; skipped")
            return
        ts = self.ts(ev)
        if type(ev.get("action")) is str:
            self.v0_action(ev, ts)
        elif type(ev.get("observation")) is str:
            self.v0_observation(ev, ts)
        elif isinstance(ev.get("kind"), str):
            self.v1(ev, ts)
        else:
            self.issue("neither a V0 action or observation nor a V1 event (no action/observation type, no kind); "
                       "skipped")
        if ts is not None:
            self.prev_ts = ts

    def v0_action(self, ev: dict[str, Any], ts: int | None) -> None:
        atype = ev.get("action")
        atype = atype if isinstance(atype, str) else str(atype)
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        source = ev.get("source")
        ev_id = str(ev.get("id", f"event-{self.line}"))
        meta = ev.get("tool_call_metadata")
        meta = meta if isinstance(meta, dict) else None
        if atype == "system":
            self.system_seen = True
            self.conv.append({"role": "system", "content": message_text(args.get("content", ev.get("message")))})
            tools = args.get("tools")
            if tools:
                self.tool_schema_hash = args_hash(tools)
            self.agent = args.get("agent_class") or self.agent
            self.code_version = args.get("openhands_version") or self.code_version
            return
        if atype in ("condensation", "condensation_request"):
            self.condensed = True
            return
        if atype in ("change_agent_state", "null"):
            return
        if atype == "message" and source != "agent" and meta is None:
            self.user_message(args.get("content", ev.get("message")))
            return
        if atype == "recall":
            data = {"operation": "recall"}
            if args.get("query") is not None:
                data["query"] = args["query"]
            span = self.add(ev_id, SpanKind.MEMORY, "recall", ts, None, data,
                            small_attrs(args, skip=frozenset({"query", "thought"})))
            self.tool_by_event[ev_id] = span
            return
        thought = args.get("thought") or (ev.get("message") if atype == "message" else None)
        call = None
        if meta is not None:
            resp = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
            call = self._v0_llm(ev, ev_id, ts, meta, resp)
        elif source == "agent":
            text = args.get("content") if atype == "message" else thought
            if atype in ("finish", "reject"):
                text = args.get("final_thought") or thought or ev.get("message")
            self.llm(f"event:{ev_id}", f"llm-{ev_id}", ts, {"role": "assistant", "content": message_text(text)})
        if atype in ("finish", "reject"):
            out = args.get("final_thought") or args.get("thought") or ev.get("message")
            if atype == "reject":
                outputs = args.get("outputs")
                out = (outputs.get("reason") if isinstance(outputs, dict) else None) or out
                self.outcome["rejected"] = True
            self.output = out
            if "task_completed" in args and args["task_completed"] is not None:
                self.outcome["task_completed"] = args["task_completed"]
        if meta is None and atype in _V0_NO_SPAN_ACTIONS:
            return
        tool_name = meta.get("function_name") if meta is not None else None
        tool_name = str(tool_name) if tool_name else atype
        call_id = meta.get("tool_call_id") if meta is not None else None
        if call is not None:
            arguments = call.get("arguments")
        else:
            arguments = {k: parse_json_string(v) for k, v in args.items() if k not in _ARG_SKIP}
        attrs: dict[str, Any] = {"openhands.action": atype}
        if isinstance(ev.get("timeout"), (int, float)):
            attrs["openhands.timeout"] = ev["timeout"]
        self.tool(ev_id, ts, tool_name, call_id, arguments, attrs)

    def _v0_llm(self, ev: dict[str, Any], ev_id: str, ts: int | None, meta: dict[str, Any],
                resp: dict[str, Any]) -> dict[str, Any] | None:
        """The llm span of an action's ``model_response``; returns that response's tool call
        matching the action's ``tool_call_id`` (normalised), if any."""
        rid = resp.get("id")
        output, finish = choice_output(resp)
        if output is None:
            output = {"role": "assistant", "content": None}
        choices = resp.get("choices")
        raw_msg = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
            else None
        if isinstance(raw_msg, dict) and isinstance(raw_msg.get("reasoning_content"), str) and raw_msg["reasoning_content"]:
            output["reasoning_content"] = raw_msg["reasoning_content"]  # a fresh dict: normalize_message's
        usage = usage_from(resp.get("usage"))
        latency = None
        metrics = ev.get("llm_metrics")
        if isinstance(metrics, dict) and rid is not None:
            latency = _by_response(metrics.get("response_latencies"), rid, "latency")
            if usage is None:
                tu = _by_response(metrics.get("token_usages"), rid, None)
                usage = usage_from(tu)
        attrs: dict[str, Any] = {}
        n = meta.get("total_calls_in_response")
        if isinstance(n, int) and n > 1:
            attrs["openhands.total_calls_in_response"] = n
        extra = _usage_extra(resp.get("usage"))
        if extra:
            attrs["llm.usage"] = extra
        key = f"response:{rid}" if rid is not None else f"event:{ev_id}"
        span = self.llm(key, f"llm-{ev_id}", ts, output, model=resp.get("model"), usage=usage,
                        finish=finish, response_id=rid, latency_s=latency, attrs=attrs)
        cid = meta.get("tool_call_id")
        out = span.data.get("output") or {}
        for c in out.get("tool_calls", ()):
            if cid is not None and c.get("id") == str(cid):
                return c
        return None

    def v0_observation(self, ev: dict[str, Any], ts: int | None) -> None:
        otype = ev.get("observation")
        otype = otype if isinstance(otype, str) else str(otype)
        extras = ev.get("extras") if isinstance(ev.get("extras"), dict) else {}
        if otype == "agent_state_changed":
            state = extras.get("agent_state")
            if state is not None:
                self.outcome["agent_state"] = state
            return
        if otype in _V0_SILENT_OBS:
            return
        content = ev.get("content")
        meta = ev.get("tool_call_metadata")
        call_id = meta.get("tool_call_id") if isinstance(meta, dict) else None
        span = self.answer(ev.get("cause"), call_id)
        err = _V0_ERROR_OBS.get(otype)
        status = Status.ERROR if err else Status.OK
        attrs = small_attrs(extras)
        attrs = {f"openhands.extras.{k}": v for k, v in attrs.items()}
        attrs["openhands.observation"] = otype
        if span is not None and span.kind is SpanKind.MEMORY:
            span.data["value"] = {"content": content, **extras} if extras else content  # type: ignore[index]
            span.end_ns = ts
            span.status = status
            return
        if span is not None:
            self.observe(span, ts, content, status, err, attrs)
            return
        ev_id = str(ev.get("id", f"event-{self.line}"))
        cause = ev.get("cause")
        why = f"names cause {cause!r}, which is no pending action" if cause is not None else "has no cause"
        self.issue(f"{otype!r} observation {why}; kept as an 'other' span", "warning")
        self.add(ev_id, SpanKind.OTHER, f"observation {otype}", ts, ts, {"output": content}, attrs, status, err)

    # -- V1 ----------------------------------------------------------------------------------

    def v1(self, ev: dict[str, Any], ts: int | None) -> None:
        kind = ev.get("kind")
        ev_id = str(ev.get("id", f"event-{self.line}"))
        if kind == "SystemPromptEvent":
            self.system_seen = True
            sp = ev.get("system_prompt")
            parts = [sp] + ([ev["dynamic_context"]] if isinstance(ev.get("dynamic_context"), dict) else [])
            self.conv.append({"role": "system", "content": message_text(parts)})
            if ev.get("tools"):
                self.tool_schema_hash = args_hash(ev["tools"])
        elif kind == "MessageEvent":
            lm = ev.get("llm_message") if isinstance(ev.get("llm_message"), dict) else {}
            source = ev.get("source")
            if source == "agent" or lm.get("role") == "assistant":
                msgs = normalize_message(lm, "assistant")
                output = msgs[-1] if msgs else {"role": "assistant", "content": None}
                if isinstance(lm.get("reasoning_content"), str) and lm["reasoning_content"]:
                    output["reasoning_content"] = lm["reasoning_content"]
                rid = ev.get("llm_response_id")
                key = f"response:{rid}" if rid is not None else f"event:{ev_id}"
                self.llm(key, f"llm-{ev_id}", ts, output, response_id=rid)
            else:
                self.user_message(lm.get("content"))
        elif kind == "ActionEvent":
            self._v1_action(ev, ev_id, ts)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self._v1_observation(ev, ev_id, kind, ts)
        elif kind == "ConversationStateUpdateEvent":
            key, value = ev.get("key"), ev.get("value")
            if key in ("execution_status", "agent_status"):
                self.outcome[key] = value
            elif key == "full_state" and isinstance(value, dict):
                agent = value.get("agent")
                llm = agent.get("llm") if isinstance(agent, dict) else None
                if isinstance(llm, dict) and isinstance(llm.get("model"), str):
                    self.model = self.model or llm["model"]
        elif kind == "ConversationErrorEvent":
            self.outcome["error"] = ev.get("detail") or ev.get("code")
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            self.condensed = True
        elif kind not in _V1_SKIPPED:
            self.unknown_kinds[str(kind)] = self.unknown_kinds.get(str(kind), 0) + 1

    def _v1_action(self, ev: dict[str, Any], ev_id: str, ts: int | None) -> None:
        tc = ev.get("tool_call") if isinstance(ev.get("tool_call"), dict) else {}
        tool_name = ev.get("tool_name") or tc.get("name") or "tool"
        call_id = ev.get("tool_call_id") or tc.get("id")
        action = ev.get("action") if isinstance(ev.get("action"), dict) else None
        if "arguments" in tc:
            arguments = parse_json_string(tc.get("arguments"))
        else:
            arguments = {k: v for k, v in (action or {}).items() if k not in _ARG_SKIP}
        call = {"id": None if call_id is None else str(call_id), "name": str(tool_name), "arguments": arguments}
        rid = ev.get("llm_response_id")
        key = f"response:{rid}" if rid is not None else f"event:{ev_id}"
        span = self.llm_by_response.get(key)
        if span is None:
            output: dict[str, Any] = {"role": "assistant", "content": message_text(ev.get("thought")) or None,
                                      "tool_calls": []}
            if isinstance(ev.get("reasoning_content"), str) and ev["reasoning_content"]:
                output["reasoning_content"] = ev["reasoning_content"]
            span = self.llm(key, f"llm-{ev_id}", ts, output, response_id=rid)
        span.data["output"]["tool_calls"].append(call)  # shared with the conversation copy: same list
        if tool_name == "finish":
            msg = (action or {}).get("message") if action else None
            if msg is None and isinstance(arguments, dict):
                msg = arguments.get("message")
            self.output = msg
        attrs: dict[str, Any] = {}
        if action is not None and action.get("kind"):
            attrs["openhands.action"] = action["kind"]
        for k in ("security_risk", "summary"):
            if ev.get(k) not in (None, "UNKNOWN"):
                attrs[f"openhands.{k}"] = ev[k]
        if action is None:
            attrs["openhands.not_executed"] = True
        self.tool(ev_id, ts, str(tool_name), call_id, arguments, attrs)

    def _v1_observation(self, ev: dict[str, Any], ev_id: str, kind: str, ts: int | None) -> None:
        span = self.answer(ev.get("action_id"), ev.get("tool_call_id"))
        attrs: dict[str, Any] = {}
        if kind == "ObservationEvent":
            obs = ev.get("observation") if isinstance(ev.get("observation"), dict) else {}
            output = content_text(obs.get("content"))
            status, err = (Status.ERROR, "tool_error") if obs.get("is_error") else (Status.OK, None)
            if obs.get("kind"):
                attrs["openhands.observation"] = obs["kind"]
            attrs.update({f"openhands.observation.{k}": v for k, v in
                          small_attrs(obs, skip=frozenset({"content", "kind", "is_error"})).items()})
        elif kind == "UserRejectObservation":
            output, status, err = ev.get("rejection_reason"), Status.ERROR, "UserRejectObservation"
            if ev.get("rejection_source"):
                attrs["openhands.rejection_source"] = ev["rejection_source"]
        else:
            output, status, err = ev.get("error"), Status.ERROR, "AgentErrorEvent"
        if span is not None:
            self.observe(span, ts, output, status, err, attrs)
            return
        if kind == "AgentErrorEvent" and ev.get("tool_name"):
            # The SDK reports a tool call it could not turn into an action (unknown tool, bad
            # arguments) with this event alone: the call is a failed tool span.
            span = self.tool(ev_id, ts, str(ev["tool_name"]), ev.get("tool_call_id"), _UNKNOWN, attrs)
            del self.tool_by_event[ev_id]
            self.observe(span, ts, output, status, err, {})
            return
        self.issue(f"{kind} answers no pending action (action_id {ev.get('action_id')!r}); kept as an 'other' span",
                   "warning")
        self.add(ev_id, SpanKind.OTHER, kind, ts, ts, {"output": output}, attrs, status, err)

    # -- end -------------------------------------------------------------------------------

    def finish(self, run_id: str | None, rec: dict[str, Any]) -> RunSpans | None:
        """The run (a synthesized ``agent`` root over the spans, its header), or None when the list
        held no action, observation or message (an issue). ``rec`` is the evaluation record around
        the list (``instance_id``, ``instruction``, ``metadata``, ``test_result``, ``error``), or ``{}``."""
        self.where, self.line = self.base, self.rec_line
        if not self.spans and self.input is None:
            self.issue("event list holds no actions, observations or messages; run skipped")
            return None
        for kind, n in self.unknown_kinds.items():
            self.issue(f"{n} event(s) of unknown kind {kind!r} skipped")
        waiting = [s for s in self.tool_by_event.values()
                   if s.kind is SpanKind.TOOL and s.data.get("tool_name") not in _TERMINAL]
        if waiting:
            names = ", ".join(f"{s.span_id} ({s.data.get('tool_name')})" for s in waiting[:5])
            more = f" and {len(waiting) - 5} more" if len(waiting) > 5 else ""
            self.issue(f"{len(waiting)} tool call(s) have no observation (run cut short?): {names}{more}", "warning")
        has_llm = any(s.kind is SpanKind.LLM for s in self.spans)
        if has_llm and not self.system_seen:
            self.issue("no system prompt recorded: LLM input messages are rebuilt from the events and start at "
                       "the first user message", "warning")
        if self.condensed:
            self.issue("the history was condensed during the run: LLM input messages after it are rebuilt from "
                       "the full event list, not the condensed view the model saw", "warning")
        meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
        agent = self.agent or meta.get("agent_class") or "openhands"
        if self.input is None and isinstance(rec.get("instruction"), str):
            self.input = rec["instruction"]
        output = self.output if self.output is not None else self.last_agent_text
        llm_cfg = meta.get("llm_config") if isinstance(meta.get("llm_config"), dict) else {}
        model = self.model or llm_cfg.get("model")
        for k in ("test_result", "error"):
            if rec.get(k) is not None:
                self.outcome[k] = rec[k]
        root = Span(span_id="root", parent_id=None, seq=0, kind=SpanKind.AGENT, name=str(agent),
                    start_ns=self.first_ts, end_ns=self.last_ts, status=Status.UNSET,
                    data={"agent_name": str(agent), "input": self.input, "output": output},
                    attributes={}, line=self.rec_line)
        spans = [root, *self.spans]
        header: dict[str, Any] = {}
        if run_id is not None:
            header["run_id"] = run_id
        if self.first_ts is not None:
            header["started_at"] = ns_to_iso(self.first_ts)
            header["start_ns"] = self.first_ts
        if model:
            header["model"] = {"id": str(model)}
        header["agent"] = str(agent)
        if self.code_version:
            header["code_version"] = str(self.code_version)
        if self.input is not None:
            header["input"] = self.input
        if self.tool_schema_hash:
            header["tool_schema_hash"] = self.tool_schema_hash
        if self.outcome:
            header["outcome"] = self.outcome
        return RunSpans(trace_id=run_id, spans=spans, header=header, in_order=True)


def _usage_extra(u: Any) -> dict[str, int]:
    """The non-zero token counts of a usage object besides prompt/completion tokens, flattened
    (``cache_read_input_tokens``, ``prompt_tokens_details.cached_tokens`` ...), for attributes."""
    out: dict[str, int] = {}
    if not isinstance(u, dict):
        return out
    for k, v in u.items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if isinstance(v2, int) and not isinstance(v2, bool) and v2:
                    out[f"{k}.{k2}"] = v2
        elif isinstance(v, int) and not isinstance(v, bool) and v and k not in ("prompt_tokens", "completion_tokens"):
            out[k] = v
    return out


def _by_response(items: Any, rid: Any, field: str | None) -> Any:
    """The last entry of an ``llm_metrics`` list whose ``response_id`` is ``rid`` (its ``field``)."""
    if not isinstance(items, list):
        return None
    for it in reversed(items):
        if isinstance(it, dict) and it.get("response_id") == rid:
            return it.get(field) if field is not None else it
    return None
