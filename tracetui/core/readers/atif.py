"""ATIF reader: Harbor / Terminal-Bench "Agent Trajectory Interchange Format" (ATIF-v1.x).

Shape (``../shared/design/formats.md`` §9.3; Harbor RFC 0001 "trajectory format",
https://harborframework.com/docs/trajectory-format, whose Pydantic models are mirrored by
several public projects; corpus ``atif/harbor_openhands.json`` (v1.5) and
``atif/multi_tool_trajectory.json`` (v1.4))::

    {schema_version: "ATIF-v1.x", session_id, trajectory_id?, notes?, extra?,
     agent: {name, version, model_name?, tool_definitions?, extra?},
     steps: [{step_id, timestamp?, source: system|user|agent, message: str | [ContentPart],
              model_name?, reasoning_effort?, reasoning_content?, llm_call_count?, is_copied_context?,
              tool_calls?: [{tool_call_id, function_name, arguments}],
              observation?: {results: [{source_call_id?, content?: str | [ContentPart],
                                        subagent_trajectory_ref?: [{trajectory_id?, session_id?,
                                                                    trajectory_path?}]}]},
              metrics?: {prompt_tokens, completion_tokens, cached_tokens, cost_usd, ...}, extra?}],
     final_metrics?: {...}, subagent_trajectories?: [<trajectory>, ...]}   # v1.7

``ContentPart`` (v1.6+) is ``{type: text, text}`` or ``{type: image, source: {media_type, path}}``.
A file holds one trajectory, a JSON array of them, or JSON Lines of them: one run each.

Mapping (docs/readers/atif.md has the table): a root ``agent`` span per trajectory; each
agent step is one ``llm`` span (``messages``: the conversation rebuilt from the earlier
steps; ``output``: this step's message and tool calls, ``reasoning_content`` kept) and one
``tool`` span per tool call in order, whose ``output`` is the observation result naming it
in ``source_call_id``. System and user steps are messages only. Steps marked
``is_copied_context`` (context copied from an earlier trajectory) are messages only; agent
steps with ``llm_call_count: 0`` (deterministic dispatch) have tool spans and no llm span.
ATIF v1.7 embedded ``subagent_trajectories`` become nested ``agent`` spans under the tool
call whose result references them (``subagent_trajectory_ref[].trajectory_id``; before
v1.7, ``session_id``).
"""

from __future__ import annotations

import re
from typing import Any

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.errors import ReadError
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.base import FileReading, ReaderOutput, RunSpans
from tracetui.core.readers.event_values import (
    content_text,
    message_text,
    small_attrs,
    unique_id,
)
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.openai_shapes import usage_from
from tracetui.core.readers.timefmt import iso_ns, ns_to_iso

__all__ = ["AtifReader"]

_SCHEMA = re.compile(rb'"schema_version"\s*:\s*"ATIF-')
# Terminal tools: their call ends the run, so no result is expected (OpenHands' ``finish``).
_TERMINAL = frozenset({"finish"})
_METRIC_SKIP = frozenset({"prompt_tokens", "completion_tokens", "prompt_token_ids", "completion_token_ids",
                          "logprobs"})


class AtifReader:
    """Reads ATIF trajectories (see the module docstring)."""

    name = "atif"

    def sniff(self, head: bytes) -> bool:
        """A JSON object or array whose first 64 KiB name ``"schema_version": "ATIF-..."``."""
        first = head.removeprefix(BOM).lstrip()[:1]
        return first in (b"{", b"[") and _SCHEMA.search(head) is not None

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file: one run per trajectory.

        Raises:
            ReadError: not JSON (nor JSON Lines), or no object with a ``steps`` list.
        """
        return _Reading(path).run(data)


class _Reading(FileReading):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.runs: list[RunSpans] = []
        self.run_ids: set[str] = set()

    def run(self, data: bytes) -> ReaderOutput:
        values, several = load_json_or_jsonl(self.path, data, self.issues)
        if several:  # JSON Lines: one trajectory a line
            objs = list(values)
            for i, (lineno, obj) in enumerate(objs):
                self._trajectory(obj, "$", lineno, len(objs), single=len(objs) == 1, index=i)
        else:
            doc = next(values)[1]
            if isinstance(doc, dict):
                self._trajectory(doc, "$", None, 1, single=True)
            elif isinstance(doc, list):
                for i, t in enumerate(doc):
                    self._trajectory(t, f"$[{i}]", None, len(doc), single=len(doc) == 1, index=i)
            else:
                raise ReadError(self.path, f"JSON {type(doc).__name__} is not an ATIF trajectory")
        if not self.runs:
            first = f"; first problem: {self.issues[0]}" if self.issues else ""
            raise ReadError(self.path, "no ATIF trajectory found (expected an object with schema_version "
                            f"\"ATIF-v1.x\" and a steps list){first}")
        return ReaderOutput(runs=self.runs, issues=self.issues)

    def _trajectory(self, traj: Any, where: str, line: int | None, count: int, *, single: bool,
                    index: int = 0) -> None:
        if not isinstance(traj, dict) or not isinstance(traj.get("steps"), list):
            what = f"a {type(traj).__name__}" if not isinstance(traj, dict) else "an object without a steps list"
            self.issue(line, where, f"expected an ATIF trajectory, found {what}; skipped")
            return
        sv = traj.get("schema_version")
        if not (isinstance(sv, str) and sv.startswith("ATIF-")):
            self.issue(line, f"{where}.schema_version", f"schema_version {sv!r} is not ATIF-v1.x; read as ATIF",
                       "warning")
        run = _Run(self, line)
        run.trajectory(traj, where, "", None)
        run.finish_warnings()
        rid = traj.get("session_id") or traj.get("trajectory_id")
        rid = str(rid) if rid is not None else (None if single else f"run-{index + 1}")
        if rid is not None and rid in self.run_ids:
            n = 2
            while f"{rid}-{n}" in self.run_ids:
                n += 1
            rid = f"{rid}-{n}"
        if rid is not None:
            self.run_ids.add(rid)
        self.runs.append(RunSpans(trace_id=rid, spans=run.spans, header=run.header(traj, rid), in_order=True))


class _Run:
    """The spans of one top-level trajectory and its embedded subagents, in one pass."""

    def __init__(self, reading: _Reading, line: int | None) -> None:
        self.r = reading
        self.line0 = line
        self.spans: list[Span] = []
        self.ids: set[str] = set()
        self.unanswered: list[tuple[str, str]] = []
        self.top_root: Span | None = None
        self.top_model: str | None = None

    def issue(self, line: int | None, where: str, message: str, severity: str = "skipped") -> None:
        self.r.issue(line, where, message, severity)

    def add(self, want: str, parent: str | None, kind: SpanKind, name: str, start: int | None, end: int | None,
            data: dict[str, Any], attrs: dict[str, Any], line: int | None) -> Span:
        span = Span(span_id=unique_id(want, self.ids), parent_id=parent, seq=len(self.spans), kind=kind, name=name,
                    start_ns=start, end_ns=end, data=data, attributes=attrs, line=line)
        self.spans.append(span)
        return span

    # -- one trajectory ------------------------------------------------------------------

    def trajectory(self, traj: dict[str, Any], where: str, prefix: str, parent: str | None) -> Span:
        agent = traj.get("agent") if isinstance(traj.get("agent"), dict) else {}
        name = str(agent.get("name") or "agent")
        attrs: dict[str, Any] = {}
        for key, attr in (("schema_version", "atif.schema_version"), ("trajectory_id", "atif.trajectory_id"),
                          ("notes", "atif.notes"), ("continued_trajectory_ref", "atif.continued_trajectory_ref")):
            if traj.get(key) is not None:
                attrs[attr] = traj[key]
        if prefix and traj.get("session_id") is not None:
            attrs["atif.session_id"] = traj["session_id"]
        if agent.get("version") is not None:
            attrs["atif.agent_version"] = agent["version"]
        attrs.update({f"atif.agent.extra.{k}": v for k, v in small_attrs(agent.get("extra")).items()})
        data: dict[str, Any] = {"agent_name": name, "input": None, "output": None}
        root = self.add(f"{prefix}root", parent, SpanKind.AGENT, name, None, None, data, attrs,
                        self.line0 if not prefix else None)
        if self.top_root is None:
            self.top_root = root
        default_model = agent.get("model_name")
        subs = self._embedded(traj, where)
        used: set[int] = set()
        conv: list[dict[str, Any]] = []
        first_ts = last_ts = None
        first_user = first_fresh_user = last_agent = None
        v17 = _minor(traj.get("schema_version")) >= 7
        for i, step in enumerate(traj["steps"]):
            sw = f"{where}.steps[{i}]"
            line = self.line0 if self.line0 is not None else i + 1
            if not isinstance(step, dict):
                self.issue(line, sw, f"step is a {type(step).__name__}, not an object; skipped")
                continue
            raw_ts = step.get("timestamp")
            ts = iso_ns(raw_ts)
            if ts is None and raw_ts is not None:
                self.issue(line, f"{sw}.timestamp", f"timestamp {raw_ts!r} is not ISO 8601; ignored", "warning")
            source = step.get("source")
            copied = bool(step.get("is_copied_context"))
            if ts is not None and not copied:  # copied context carries the earlier run's times
                first_ts = ts if first_ts is None or ts < first_ts else first_ts
                last_ts = ts if last_ts is None or ts > last_ts else last_ts
            text = message_text(step.get("message"))
            sid = step.get("step_id", i + 1)
            if source in ("system", "user"):
                conv.append({"role": source, "content": text})
                if source == "user":
                    first_user = text if first_user is None else first_user
                    if not copied and first_fresh_user is None:
                        first_fresh_user = text
                self._results(step, sw, line, ts, prefix, root.span_id, None, {}, conv, copied, subs, used, v17)
                continue
            if source != "agent":
                self.issue(line, f"{sw}.source", f"source {source!r} is not system, user or agent; step skipped")
                continue
            calls = self._calls(step, sw, line, prefix, sid)
            output: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                output["tool_calls"] = [c for c, _ in calls]
            conv_msg = dict(output)
            if isinstance(step.get("reasoning_content"), str) and step["reasoning_content"]:
                output["reasoning_content"] = step["reasoning_content"]
            if text and not copied:
                last_agent = text
            llm_id = root.span_id
            if not copied and step.get("llm_call_count") != 0:
                model = step.get("model_name") or default_model
                if model and self.top_model is None:
                    self.top_model = str(model)
                ldata: dict[str, Any] = {}
                if model:
                    ldata["model"] = str(model)
                if step.get("reasoning_effort") is not None:
                    ldata["params"] = {"reasoning_effort": step["reasoning_effort"]}
                ldata["messages"] = conv[:]
                ldata["output"] = output
                metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
                usage = usage_from(metrics)
                if usage:
                    ldata["usage"] = usage
                lattrs = {f"atif.metrics.{k}": v for k, v in small_attrs(metrics, skip=_METRIC_SKIP).items()}
                lattrs.update({f"atif.step.extra.{k}": v for k, v in small_attrs(step.get("extra")).items()})
                if isinstance(step.get("llm_call_count"), int) and step["llm_call_count"] > 1:
                    lattrs["atif.llm_call_count"] = step["llm_call_count"]
                lspan = self.add(f"{prefix}step-{sid}", root.span_id, SpanKind.LLM,
                                 f"chat {model}" if model else "chat", ts, None, ldata, lattrs, line)
                llm_id = lspan.span_id
            conv.append(conv_msg)
            tools: dict[str, Span] = {}
            if not copied:
                for call, where_c in calls:
                    tdata: dict[str, Any] = {"tool_name": call["name"], "call_id": call["id"],
                                             "arguments": call["arguments"]}
                    try:
                        tdata["args_hash"] = args_hash(call["arguments"])
                    except TypeError:
                        pass
                    tspan = self.add(f"{prefix}{call['id']}" if call["id"] else f"{prefix}step-{sid}-tool", root.span_id, SpanKind.TOOL,
                                     f"execute_tool {call['name']}", ts, None, tdata, {}, line)
                    if call["id"] is not None:
                        tools.setdefault(call["id"], tspan)
            self._results(step, sw, line, ts, prefix, root.span_id, llm_id, tools, conv, copied, subs, used, v17)
            for cid, tspan in tools.items():
                if "output" not in tspan.data and tspan.data.get("tool_name") not in _TERMINAL:
                    self.unanswered.append((cid, str(tspan.data.get("tool_name"))))
        for k, (sub, sub_where) in enumerate(subs):
            if k not in used:
                self.issue(self.line0, sub_where, "embedded subagent trajectory is referenced by no step; shown under "
                           "the parent agent", "warning")
                self._subagent(sub, sub_where, prefix, root.span_id, k)
        data["input"] = first_fresh_user if first_fresh_user is not None else first_user
        data["output"] = last_agent
        root.start_ns, root.end_ns = first_ts, last_ts
        return root

    def _calls(self, step: dict[str, Any], sw: str, line: int | None, prefix: str,
               sid: Any) -> list[tuple[dict[str, Any], str]]:
        raw = step.get("tool_calls")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.issue(line, f"{sw}.tool_calls", f"tool_calls is a {type(raw).__name__}, not a list; ignored")
            return []
        out: list[tuple[dict[str, Any], str]] = []
        for j, tc in enumerate(raw):
            cw = f"{sw}.tool_calls[{j}]"
            if not isinstance(tc, dict):
                self.issue(line, cw, f"tool call is a {type(tc).__name__}, not an object; skipped")
                continue
            cid = tc.get("tool_call_id")
            if cid is None:
                self.issue(line, cw, "tool call without tool_call_id: no observation result can name it", "warning")
            name = tc.get("function_name")
            if not name:
                self.issue(line, cw, "tool call without function_name; read as 'tool'", "warning")
            out.append(({"id": None if cid is None else str(cid), "name": str(name or "tool"),
                         "arguments": parse_json_string(tc.get("arguments"))}, cw))
        return out

    def _results(self, step: dict[str, Any], sw: str, line: int | None, ts: int | None, prefix: str, root_id: str,
                 llm_id: str | None, tools: dict[str, Span], conv: list[dict[str, Any]], copied: bool,
                 subs: list[tuple[dict[str, Any], str]], used: set[int], v17: bool) -> None:
        obs = step.get("observation")
        if obs is None:
            return
        results = obs.get("results") if isinstance(obs, dict) else None
        if not isinstance(results, list):
            self.issue(line, f"{sw}.observation", "observation has no results list; ignored")
            return
        for k, res in enumerate(results):
            rw = f"{sw}.observation.results[{k}]"
            if not isinstance(res, dict):
                self.issue(line, rw, f"result is a {type(res).__name__}, not an object; skipped")
                continue
            content = content_text(res.get("content"))
            scid = res.get("source_call_id")
            scid = None if scid is None else str(scid)
            if scid is not None:
                conv.append({"role": "tool", "content": message_text(content), "tool_call_id": scid})
            else:
                conv.append({"role": "user", "content": message_text(content)})
            if copied:
                continue
            owner: Span | None = tools.get(scid) if scid is not None else None
            if owner is not None and "output" in owner.data:
                self.issue(line, f"{rw}.source_call_id", f"second result for tool call {scid!r}; kept as an "
                           "'other' span", "warning")
                owner = None
            elif owner is not None:
                owner.data["output"] = content  # type: ignore[index]  # fresh dict
                owner.status = Status.OK
            elif scid is not None:
                self.issue(line, f"{rw}.source_call_id", f"result names tool call {scid!r}, which this step does "
                           "not make; kept as an 'other' span", "warning")
            if owner is None:
                owner = self.add(f"{prefix}step-{step.get('step_id', '?')}-result-{k}", root_id, SpanKind.OTHER,
                                 "observation", ts, ts, {"output": content}, {}, line)
            self._refs(res, rw, line, prefix, owner, llm_id or root_id, subs, used, v17)

    def _refs(self, res: dict[str, Any], rw: str, line: int | None, prefix: str, owner: Span, fallback: str,
              subs: list[tuple[dict[str, Any], str]], used: set[int], v17: bool) -> None:
        refs = res.get("subagent_trajectory_ref")
        if not refs:
            return
        if isinstance(refs, dict):
            refs = [refs]
        if not isinstance(refs, list):
            self.issue(line, f"{rw}.subagent_trajectory_ref", "not a list of references; ignored", "warning")
            return
        kept: list[Any] = []
        for ref in refs:
            if not isinstance(ref, dict):
                continue
            k = _find(subs, ref, v17)
            if k is None:
                kept.append(ref)
                where_to = ref.get("trajectory_path") or ref.get("trajectory_id") or ref.get("session_id")
                self.issue(line, f"{rw}.subagent_trajectory_ref", f"subagent trajectory {where_to!r} is not embedded "
                           "in this file; not loaded (reference kept in the span's attributes)", "warning")
                continue
            if k in used:
                self.issue(line, f"{rw}.subagent_trajectory_ref", "subagent trajectory referenced a second time; "
                           "shown once, under its first reference", "warning")
                continue
            used.add(k)
            sub, sub_where = subs[k]
            self._subagent(sub, sub_where, prefix, owner.span_id, k)
        if kept:
            owner.attributes["atif.subagent_trajectory_ref"] = kept  # type: ignore[index]  # fresh dict

    def _embedded(self, traj: dict[str, Any], where: str) -> list[tuple[dict[str, Any], str]]:
        raw = traj.get("subagent_trajectories")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.issue(self.line0, f"{where}.subagent_trajectories", "not a list; ignored", "warning")
            return []
        out = []
        for k, sub in enumerate(raw):
            sw = f"{where}.subagent_trajectories[{k}]"
            if isinstance(sub, dict) and isinstance(sub.get("steps"), list):
                out.append((sub, sw))
            else:
                self.issue(self.line0, sw, "embedded subagent is not a trajectory with steps; skipped")
        return out

    def _subagent(self, sub: dict[str, Any], sub_where: str, prefix: str, parent: str, k: int) -> None:
        tid = sub.get("trajectory_id") or sub.get("session_id") or f"subagent-{k + 1}"
        self.trajectory(sub, sub_where, f"{prefix}{tid}/", parent)

    # -- end -----------------------------------------------------------------------------

    def finish_warnings(self) -> None:
        if self.unanswered:
            names = ", ".join(f"{cid} ({name})" for cid, name in self.unanswered[:5])
            more = f" and {len(self.unanswered) - 5} more" if len(self.unanswered) > 5 else ""
            self.issue(self.line0, "", f"{len(self.unanswered)} tool call(s) have no observation result: "
                       f"{names}{more}", "warning")

    def header(self, traj: dict[str, Any], rid: str | None) -> dict[str, Any]:
        agent = traj.get("agent") if isinstance(traj.get("agent"), dict) else {}
        root = self.top_root
        h: dict[str, Any] = {}
        if rid is not None:
            h["run_id"] = rid
        if root is not None and root.start_ns is not None:
            h["started_at"] = ns_to_iso(root.start_ns)
            h["start_ns"] = root.start_ns
        model = agent.get("model_name") or self.top_model
        if model:
            h["model"] = {"id": str(model)}
        if agent.get("name"):
            h["agent"] = str(agent["name"])
        if agent.get("version") is not None:
            h["code_version"] = str(agent["version"])
        if root is not None and root.data.get("input") is not None:
            h["input"] = root.data["input"]
        if agent.get("tool_definitions"):
            try:
                h["tool_schema_hash"] = args_hash(agent["tool_definitions"])
            except TypeError:
                pass
        if traj.get("final_metrics") is not None:
            h["outcome"] = traj["final_metrics"]
        return h


def _minor(sv: Any) -> int:
    """The minor version of ``ATIF-v1.N`` (0 when unreadable)."""
    m = re.search(r"v\d+\.(\d{1,9})", sv) if isinstance(sv, str) else None
    return int(m.group(1)) if m else 0


def _find(subs: list[tuple[dict[str, Any], str]], ref: dict[str, Any], v17: bool) -> int | None:
    """Index of the embedded subagent a reference names: by ``trajectory_id`` (v1.7), or by
    ``session_id`` (the resolution key before v1.7; informational only from v1.7 on)."""
    tid = ref.get("trajectory_id")
    if tid is not None:
        for k, (sub, _) in enumerate(subs):
            if sub.get("trajectory_id") == tid:
                return k
    sid = ref.get("session_id")
    if sid is not None and not v17:
        for k, (sub, _) in enumerate(subs):
            if sub.get("session_id") == sid:
                return k
    return None
