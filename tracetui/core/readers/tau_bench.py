"""tau-bench results: a JSON array of ``{task_id, trial, reward, info, traj}``, one run per element.

Shape (``../shared/design/formats.md`` §9.4; sierra-research/tau-bench
``historical_trajectories/*.json``, written by ``run.py`` as ``EnvRunResult``):
``{"task_id": int, "trial": int, "reward": float, "info": {"task": {"user_id",
"actions": [{"name", "kwargs"}], "instruction", "outputs"}, "source",
"user_cost", "reward_info": {"reward", "info", "actions"} | null}, "traj":
[OpenAI chat messages]}``.

Mapping (``docs/readers/tau-bench.md``):

- run id ``task-{task_id}-trial-{trial}``;
- a synthesized root ``agent`` span ``root``, named ``tau-bench {domain} task
  {task_id}`` (domain from the policy heading of the system prompt, ``#
  Airline Agent Policy``), input = the task's ``instruction`` (what the
  simulated user was told to do: the same in every trial of a task, so two
  trials first differ where the conversation does, not at the root), else the
  first user message; output = the last assistant message with text;
- ``traj`` -> ``llm`` and ``tool`` spans under it (``chat_transcript``);
- header: ``run_id``, ``agent``, ``input``, ``task_id``, ``trial``, ``task``
  (``info.task`` without ``actions``), ``expected_actions`` (the gold
  ``info.task.actions``), ``outcome`` ``{reward, ...reward_info, source,
  user_cost}`` (``reward_info.actions`` only when it differs from the gold list).
"""

from __future__ import annotations

import re
from typing import Any

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.chat_transcript import (
    ArgsCache,
    first_text,
    last_text,
    transcript_spans,
)
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM, load_json

__all__ = ["TauBenchReader"]

_DOMAIN = re.compile(r"#\s*(\w+)\s+agent\s+policy", re.IGNORECASE)
"""tau-bench's wiki.md policies open with ``# Airline Agent Policy`` / ``# Retail agent policy``."""
_SHAPE = "a JSON array of tau-bench results ({task_id, trial, reward, info, traj})"


def _domain(traj: list[Any]) -> str | None:
    """The domain named by the first system message's policy heading, lowercase, or None."""
    for m in traj[:3]:
        if type(m) is dict and m.get("role") == "system" and isinstance(m.get("content"), str):
            found = _DOMAIN.match(m["content"][:200].lstrip())
            return found.group(1).lower() if found else None
    return None


class TauBenchReader:
    """Reads tau-bench result files (historical trajectories, ``run.py`` output)."""

    name = "tau-bench"

    def sniff(self, head: bytes) -> bool:
        """A JSON array of objects whose first 64 KiB name the keys ``task_id`` and ``traj``."""
        start = head.removeprefix(BOM).lstrip()
        return start[:1] == b"[" and start[1:].lstrip()[:1] == b"{" and b'"traj"' in head and b'"task_id"' in head

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file: one run per result, in file order.

        Raises:
            ReadError: not JSON, not an array (or one result object), or no
                element is a result object.
        """
        return _read(path, data)


def _read(path: str, data: bytes) -> ReaderOutput:
    issues: list[ReadIssue] = IssueList()
    doc = load_json(path, data, issues)
    if isinstance(doc, dict) and "traj" in doc:
        records: list[Any] = [doc]
    elif isinstance(doc, list):
        records = doc
    else:
        raise ReadError(path, f"expected {_SHAPE}, found a JSON {type(doc).__name__}")
    if not any(type(r) is dict and ("traj" in r or "task_id" in r) for r in records):
        raise ReadError(path, f"expected {_SHAPE}; no element has task_id or traj")
    runs: list[RunSpans] = []
    seen: set[str] = set()
    cache: ArgsCache = {}  # trials of one task repeat their calls: parse and hash each text once
    for k, r in enumerate(records):
        if type(r) is not dict:
            issues.append(ReadIssue(path, None, f"$[{k}]", f"not a result object ({type(r).__name__}); skipped"))
            continue
        run_issues: list[ReadIssue] = IssueList()  # reported with this run only, not when another run is picked
        runs.append(_run(path, k, r, seen, cache, run_issues))
        runs[-1].issues = run_issues
    return ReaderOutput(runs, issues)


def _run(path: str, k: int, r: dict[str, Any], seen: set[str], cache: ArgsCache, issues: list[ReadIssue]) -> RunSpans:
    """One result as a run: root span, transcript spans, header."""
    task_id, trial = r.get("task_id"), r.get("trial")
    if task_id is None:
        rid = f"record-{k}"
    else:
        rid = f"task-{task_id}" if trial is None else f"task-{task_id}-trial-{trial}"
    if rid in seen:
        new = f"{rid}-record-{k}"
        issues.append(ReadIssue(path, None, f"$[{k}]", f"run id {rid!r} already used by an earlier result; this one is {new!r}", "warning"))
        rid = new
    seen.add(rid)
    info = r.get("info")
    if type(info) is not dict:
        info = {}
    task = info.get("task")
    if type(task) is not dict:
        task = {}
    traj = r.get("traj")
    if type(traj) is not list:
        issues.append(ReadIssue(path, None, f"$[{k}].traj", "no message list (traj); the run has only its root span", "warning"))
        traj = []
    domain = _domain(traj)
    agent = f"tau-bench {domain}" if domain else "tau-bench"
    tr = transcript_spans(traj, parent_id="root", path=path, where=f"$[{k}].traj", seq_start=1, line=None, args_cache=cache)
    issues.extend(tr.issues)
    instruction = task.get("instruction")
    first_user = instruction if isinstance(instruction, str) and instruction else first_text(tr.messages, "user")
    root = Span("root", None, 0, SpanKind.AGENT, f"{agent} task {task_id}" if task_id is not None else agent,
                data={"agent_name": agent, "input": first_user, "output": last_text(tr.messages, "assistant")},
                attributes={"task_id": task_id, "trial": trial}, line=None)  # one JSON document: no line per span

    expected = task.get("actions")
    outcome: dict[str, Any] = {"reward": r.get("reward")}
    reward_info = info.get("reward_info")
    if type(reward_info) is dict:
        for key, value in reward_info.items():
            if key == "actions" and value == expected:
                continue  # the gold actions again: kept once, as expected_actions
            outcome.setdefault(key, value)
    else:
        issues.append(ReadIssue(path, None, f"$[{k}].info.reward_info",
                                f"run {rid}: no reward_info (not graded; info.source {info.get('source')!r}); "
                                "outcome has the reward only",
                                "warning"))
    for key in ("source", "user_cost"):
        if key in info:
            outcome[key] = info[key]
    header: dict[str, Any] = {"run_id": rid, "agent": agent, "input": first_user, "task_id": task_id, "trial": trial,
                              "task": {key: v for key, v in task.items() if key != "actions"},
                              "expected_actions": expected, "outcome": outcome}
    return RunSpans(rid, [root, *tr.spans], header, in_order=True)
