"""SWE-agent trajectories (``.traj``): one JSON object per run, ``trajectory`` steps + ``history`` messages.

Shape (``../shared/design/formats.md`` §9.1; SWE-agent ``sweagent/agent/agents.py``
``save_trajectory``, ``sweagent/types.py`` ``TrajectoryStep`` / ``HistoryItem``)::

    {"environment": "main",
     "trajectory": [{"action", "observation", "response", "thought", "execution_time",
                     "state": {...} | "<JSON string>", "query": [messages]?}],
     "history": [{"role", "content", "agent", "message_type", "thought", "action",
                  "tool_calls": [OpenAI tool calls]?, "tool_call_ids": [ids]?, "is_demo"?}],
     "info": {"submission", "exit_status", "model_stats": {...}},
     "replay_config": {"agent": {"name", "model": {"name", "temperature", "top_p"},
                                 "tools": {"command_docs", ...}},
                       "problem_statement": {"id", "text"}, "env": {...}}}

Two layouts are read (corpus ``swe-agent/``, SOURCES.md): SWE-agent >= 1.0
(function calling: assistant history messages carry ``tool_calls``, tool
messages ``tool_call_ids``; ``replay_config`` an object) and legacy v0.x (no
tool calls, the command is fenced in ``response``; ``state`` a JSON string; no
``replay_config``).

Mapping (``docs/readers/swe-agent.md``): a synthesized root ``agent`` span;
each trajectory step = one ``llm`` span (the model turn) + one ``tool`` span
(the action it ran). Steps are linked to ``history`` by order: the k-th
non-demonstration assistant message whose ``action`` equals the step's.
"""

from __future__ import annotations

import math
import re
from typing import Any

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.chat_transcript import normalize_chat_message
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM, load_json
from tracetui.core.readers.otel_messages import Message

__all__ = ["SweAgentReader"]

_FIRST_STEP = re.compile(rb'"trajectory"\s*:\s*\[\s*(?:\]|\{\s*"(?:action|observation|response|thought|state|execution_time|query|extra_info|messages)")')
"""SWE-agent writes a step's ``TrajectoryStep`` keys in that order (``sweagent/types.py``)."""
_SHAPE = "a SWE-agent trajectory object ({trajectory: [steps], history: [messages], info})"


def _get(d: Any, *keys: str) -> Any:
    """``d[k1][k2]...`` through dicts, or None."""
    for k in keys:
        if type(d) is not dict:
            return None
        d = d.get(k)
    return d


def _chat(h: Any) -> list[Message]:
    """A history item as tracetui messages: ``tool_call_ids`` (SWE-agent's own key) -> ``tool_call_id``."""
    if type(h) is not dict:
        return normalize_chat_message(h)
    m: dict[str, Any] = {"role": h.get("role"), "content": h.get("content")}
    tcs = h.get("tool_calls")
    if tcs:
        m["tool_calls"] = tcs
    ids = h.get("tool_call_ids")
    if isinstance(ids, list) and ids:
        m["tool_call_id"] = ids[0]
    elif h.get("tool_call_id") is not None:
        m["tool_call_id"] = h["tool_call_id"]
    return normalize_chat_message(m)


def _duration_ns(value: Any) -> int | None:
    """``execution_time`` (seconds, float) as integer nanoseconds, or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        ns = value * 1_000_000_000
        return round(ns) if math.isfinite(ns) else None  # 1e308 s: no duration
    return None


class SweAgentReader:
    """Reads SWE-agent ``.traj`` files (v1 function-calling layout and legacy v0.x)."""

    name = "swe-agent"

    def sniff(self, head: bytes) -> bool:
        """A JSON object with a ``"trajectory"`` list that is empty or whose first step opens with
        a ``TrajectoryStep`` key (``action``, ``observation``, ``response``, ``thought``...).

        An OpenHands ``{"trajectory": [events]}`` export opens its events with ``id``.
        """
        if head.removeprefix(BOM).lstrip()[:1] != b"{":
            return False
        return _FIRST_STEP.search(head) is not None

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file: one run.

        Raises:
            ReadError: not JSON, or not an object with a ``trajectory`` list.
        """
        return _read(path, data)


def _read(path: str, data: bytes) -> ReaderOutput:
    issues: list[ReadIssue] = IssueList()
    doc = load_json(path, data, issues)
    if type(doc) is not dict:
        raise ReadError(path, f"expected {_SHAPE}, found a JSON {type(doc).__name__}")
    steps = doc.get("trajectory")
    if type(steps) is not list:
        raise ReadError(path, f"expected {_SHAPE}; no trajectory list", where="$.trajectory")
    history = doc.get("history")
    if type(history) is not list:
        if history is not None or steps:
            issues.append(ReadIssue(path, None, "$.history", "no history list: the llm spans have no input messages "
                                    "and only the steps' responses as output", "warning"))
        history = []
    info = doc.get("info") if type(doc.get("info")) is dict else {}
    rc = doc.get("replay_config")
    if isinstance(rc, str):  # some versions store the config as a JSON string
        rc = parse_json_string(rc)
    if type(rc) is not dict:
        rc = {}

    instance_id = _get(rc, "problem_statement", "id") or info.get("instance_id")
    agent = _get(rc, "agent", "name") or doc.get("environment") or "swe-agent"
    model = _get(rc, "agent", "model", "name")
    model = model if isinstance(model, str) and model else None
    params = {k: v for k in ("temperature", "top_p") if (v := _get(rc, "agent", "model", k)) is not None}

    # History in tracetui's shape; pos[i] = index in norm of history[i]'s first message.
    norm: list[Message] = []
    pos: list[int] = []
    assistants: list[int] = []  # history indices of the agent's own turns (not demonstrations)
    for i, h in enumerate(history):
        pos.append(len(norm))
        msgs = _chat(h)
        if not msgs:
            issues.append(ReadIssue(path, None, f"$.history[{i}]", f"not a message ({type(h).__name__}); skipped"))
        norm.extend(msgs)
        if type(h) is dict and h.get("role") == "assistant" and not h.get("is_demo"):
            assistants.append(i)
    pos.append(len(norm))

    problem = next((m for i, h in enumerate(history) if type(h) is dict and h.get("role") == "user"
                    and not h.get("is_demo") for m in norm[pos[i]:pos[i + 1]] if m.get("content")), None)
    task_input = problem["content"] if problem is not None else _get(rc, "problem_statement", "text")
    root = Span("root", None, 0, SpanKind.AGENT, f"swe-agent {agent}",
                data={"agent_name": agent, "input": task_input, "output": info.get("submission")},
                attributes={k: v for k, v in (("environment", doc.get("environment")),
                                              ("repo", _get(rc, "env", "repo", "repo_name")),
                                              ("base_commit", _get(rc, "env", "repo", "base_commit")),
                                              ("image", _get(rc, "env", "deployment", "image"))) if v is not None})
    spans: list[Span] = [root]
    seq = 1
    llm_name = f"chat {model}" if model else "chat"
    base: dict[str, Any] = {}
    if model:
        base["model"] = model
    if params:
        base["params"] = params
    nxt = 0  # next candidate in ``assistants``
    for k, step in enumerate(steps):
        where = f"$.trajectory[{k}]"
        if type(step) is not dict:
            issues.append(ReadIssue(path, None, where, f"not a step object ({type(step).__name__}); skipped"))
            continue
        action = step.get("action")
        hi: int | None = None
        for a in range(nxt, len(assistants)):
            h = history[assistants[a]]
            if "action" not in h or action is None or h.get("action") == action:
                hi, nxt = assistants[a], a + 1
                break
        if hi is None and history:
            issues.append(ReadIssue(path, None, where, f"step {k} has no assistant message in history with its action; "
                                    "its llm span has the step's response as output and the history up to the next unlinked turn",
                                    "warning"))
        # The model turn.
        query = step.get("query")
        if isinstance(query, list) and query:
            messages = [m for q in query for m in _chat(q)]
        else:
            # Unlinked: everything up to the next agent turn not yet linked (or the end).
            cut = pos[hi] if hi is not None else pos[assistants[nxt]] if nxt < len(assistants) else len(norm)
            messages = norm[:cut]
        outs = norm[pos[hi]:pos[hi + 1]] if hi is not None else []
        output: Message = outs[0] if outs else {"role": "assistant", "content": step.get("response", step.get("thought"))}
        sid = f"step-{k}"
        llm = Span(f"{sid}-llm", "root", seq, SpanKind.LLM, llm_name,
                   data={**base, "messages": messages, "output": output}, line=None)  # one JSON document: no line
        spans.append(llm)
        seq += 1
        # The action it ran.
        calls = output.get("tool_calls") or []
        if len(calls) > 1:
            issues.append(ReadIssue(path, None, where, f"step {k}'s turn has {len(calls)} tool calls; "
                                    "the step's one observation is given to the first", "warning"))
        attributes: dict[str, Any] = {}
        if calls:
            call = calls[0]
            tool_name = call["name"]
            tool: dict[str, Any] = {"tool_name": tool_name, "call_id": call["id"], "arguments": call["arguments"]}
            if isinstance(action, str):
                attributes["action"] = action
        elif isinstance(action, str) and action.strip():
            tool_name = action.split(None, 1)[0]
            tool = {"tool_name": tool_name, "arguments": {"command": action}}
        else:  # no action ran (a step that only ended the run): its observation stays visible on the turn
            if step.get("observation"):
                llm.attributes = {"observation": step["observation"]}
            continue
        tool["args_hash"] = args_hash(tool["arguments"])
        if "observation" in step:
            tool["output"] = step["observation"]
        else:
            issues.append(ReadIssue(path, None, f"{where}.observation", f"step {k} has no observation; its tool span has no output", "warning"))
        state = parse_json_string(step.get("state"))
        if state is not None:
            attributes["state"] = state
        duration = _duration_ns(step.get("execution_time"))
        if duration is not None:
            attributes["duration_ns"] = duration  # no timestamps in .traj files: the only timing there is
        spans.append(Span(f"{sid}-tool", "root", seq, SpanKind.TOOL, f"execute_tool {tool_name}" if tool_name else "execute_tool",
                          status=Status.UNSET, data=tool, attributes=attributes, line=None))
        seq += 1

    outcome: dict[str, Any] = {}
    if "exit_status" in info:
        outcome["exit_status"] = info["exit_status"]
    stats = info.get("model_stats")
    if type(stats) is dict:
        outcome.update(stats)
    header: dict[str, Any] = {}
    if instance_id is not None:
        header["run_id"] = str(instance_id)
    header["agent"] = agent
    if model:
        header["model"] = {"id": model}
    if task_input is not None:
        header["input"] = task_input
    docs = _get(rc, "agent", "tools", "command_docs")
    if isinstance(docs, str):
        header["tool_schema_hash"] = args_hash(docs)
    header["outcome"] = outcome
    run = RunSpans(None if instance_id is None else str(instance_id), spans, header, in_order=True)
    return ReaderOutput([run], issues)
