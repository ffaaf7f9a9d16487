"""One nightly task: replay one recorded run in one LLM mode, diff each trial, triage, summarise.

``replay_run(task)`` is what a worker executes (a picklable top-level function; its argument and
result are plain dicts). It holds one pair at a time: the recording, then each trial's replay,
read, diffed and dropped; it returns a summary of a few hundred bytes, never a trace. It never
raises for a bad run: a run that cannot be read, loaded or replayed is an ``error`` (with the stage
and the message naming file, line, field), a recording that lacks what a replay needs is
``incomplete``.

Task (``Task.to_json``): ``{"path", "name", "agent", "llm", "trials", "mode", "key_file",
"llm_endpoint"}``. Summary::

    {"key": "NAME|frozen", "name", "path", "llm", "outcome",   # pass | diverged | failed | incomplete | error
     "trials", "trials_diverged", "trials_failed",
     "original_failed",                    # the recorded run's root span failed (None when unread)
     "signature": {"type", "kind", "name", "fields"} | None,   # the first divergence (first diverging trial)
     "first": {"trial", "row", "original_span_id"} | None,   # the replay is not kept: no replay span id
     "divergence_types": {"unrecorded_call": 1, ...},          # all trials
     "unrecorded_call": bool, "write_mismatch": bool,
     "verdict": str | None,                # triage's verdict (diverged / failed runs)
     "stage": "read" | "agent" | "replay" | "diff" | None, "message": str | None,
     "network_isolation": str,             # sandbox.ISOLATION_NAMESPACE or ISOLATION_GUARD
     "seconds": float}                     # wall time of the task on its worker

Network isolation: on Linux, where a network namespace can be had (``core.harness.sandbox``), the
worker reads the recording (an fsspec URL is fetched to a local file here, outside) and runs the
rest of the task (agent load, replay, diff, triage) in a child process in a fresh network namespace
(``python -m tracetui.core.nightly.child``), which writes the summary to a file the worker reads
back; with ``--llm live`` the worker relays the model client's calls to the model endpoint and
nowhere else (``core.harness.relay``). A Dask worker cannot move itself into a namespace, a child it
starts can. Where no namespace can be had, the task runs in the worker's process with the
in-process guard alone, and the summary's ``network_isolation`` says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from tracetui.core.errors import TracetuiError
from tracetui.core.execute import task_error
from tracetui.core.nightly.store import local_copy

OUTCOMES = ("pass", "diverged", "failed", "incomplete", "error")
"""Outcomes of a replayed run, in the report's order."""

LLM_MODES = ("frozen", "live")

_SPECS: dict[str, Any] = {}
_REDACTORS: dict[tuple[str | None, str], Any] = {}


@dataclass(frozen=True, slots=True)
class Task:
    """What a worker needs to replay one run in one mode (all plain, picklable values).

    Attributes:
        path: The trace file (local path or fsspec URL).
        name: Its name under the store.
        agent: ``path/to/agent.py:function`` (absolute path) or ``module:function``.
        llm: ``frozen`` or ``live``.
        trials: K (live); 1 for frozen.
        mode: The replay mode (``strict`` by default: a miss is a divergence).
        key_file: The project redaction key file, or None (``$TRACETUI_REDACTION_KEY``...).
        llm_endpoint: With ``live``: the model endpoint's base URL the sandbox's relay may reach
            (None: the worker's ``relay.endpoint_url`` lookup).
    """

    path: str
    name: str
    agent: str
    llm: str = "frozen"
    trials: int = 1
    mode: str = "strict"
    key_file: str | None = None
    llm_endpoint: str | None = None

    @property
    def key(self) -> str:
        return f"{self.name}|{self.llm}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _spec(ref: str) -> Any:
    from tracetui.core.harness.agent import load_agent

    if ref not in _SPECS:  # loaded once per worker process
        _SPECS[ref] = load_agent(ref)
    return _SPECS[ref]


def _redactor(key_file: str | None, spec: Any) -> Any:
    from tracetui.core.harness.redact import project_redactor

    k = (key_file, spec.ref)
    if k not in _REDACTORS:
        _REDACTORS[k] = project_redactor(key_file, create=False, sensitive_fields=spec.sensitive_fields)[0]
    return _REDACTORS[k]


def base_summary(task: Task) -> dict[str, Any]:
    """The summary of ``task`` before it ran: an ``error`` with no message yet."""
    return {"key": task.key, "name": task.name, "path": task.path, "llm": task.llm, "outcome": "error",
            "trials": task.trials, "trials_diverged": 0, "trials_failed": 0, "original_failed": None,
            "signature": None, "first": None, "divergence_types": {}, "unrecorded_call": False,
            "write_mismatch": False, "verdict": None, "stage": None, "message": None, "network_isolation": None,
            "seconds": 0.0}


def _error(out: dict[str, Any], stage: str, exc: BaseException, where: str) -> dict[str, Any]:
    out["outcome"] = "error"
    out["stage"] = stage
    if isinstance(exc, TracetuiError):
        msg = str(exc)
        out["message"] = msg if where in msg else f"{where}: {msg}"
    else:
        out["message"] = f"{where}: {task_error(exc)}"
    return out


def replay_run(task: Task | dict[str, Any]) -> dict[str, Any]:
    """Replay one run (``task``) and return its summary (module docstring). Never raises for the run.

    In a fresh network namespace (a child process) where one can be had, else in this process
    with the in-process guard only (``network_isolation`` says which).
    """
    from tracetui.core.harness.sandbox import ISOLATION_GUARD, isolated_command

    if isinstance(task, dict):
        task = Task(**task)
    t0 = time.perf_counter()
    out = base_summary(task)
    try:
        command = isolated_command([sys.executable, "-m", "tracetui.core.nightly.child"])
        if command is None:
            out["network_isolation"] = ISOLATION_GUARD
            _replay(task, out, None)
        else:
            _replay_isolated(task, out, command)
    except Exception as exc:  # noqa: BLE001 - a bug on one odd run must not cost the batch
        _error(out, out["stage"] or "replay", exc, task.name)
    out["seconds"] = round(time.perf_counter() - t0, 4)
    return out


def replay_local(task: dict[str, Any], local: str, isolation: str) -> dict[str, Any]:
    """In the namespaced child (``nightly.child``): the summary of ``task`` with its recording
    already at ``local``; ``isolation`` is what the replay header and the summary say."""
    t = Task(**task)
    out = base_summary(t)
    out["network_isolation"] = isolation
    try:
        _replay(t, out, local)
    except Exception as exc:  # noqa: BLE001 - as replay_run
        _error(out, out["stage"] or "replay", exc, t.name)
    return out


def _replay_isolated(task: Task, out: dict[str, Any], command: list[str]) -> None:
    """Fetch the recording here, run the rest in the namespaced child, take its summary."""
    from tracetui.core.harness import relay as relay_mod
    from tracetui.core.harness import sandbox

    out["stage"] = "read"
    out["network_isolation"] = sandbox.ISOLATION_NAMESPACE  # where this task runs (the child confirms it)
    with contextlib.ExitStack() as stack:
        try:
            local = stack.enter_context(local_copy(task.path))
        except (TracetuiError, ValueError, OSError) as exc:
            _error(out, "read", exc, task.name)
            return
        out["stage"] = "replay"
        tmp = tempfile.mkdtemp(prefix="tracetui-nightly-")
        stack.callback(shutil.rmtree, tmp, True)
        env = sandbox.child_env()
        relay = None
        if task.llm == "live":
            url, _source = relay_mod.endpoint_url(task.llm_endpoint)
            if url is not None:
                relay = relay_mod.Relay(relay_mod.host_port(url))
                stack.callback(relay.close)
                env[relay_mod.ENV_RELAY_FD] = str(relay.child_fd)
        result, log_path = os.path.join(tmp, "summary.json"), os.path.join(tmp, "child.log")
        request = json.dumps({"task": task.to_json(), "local": os.path.abspath(local), "result": result})
        with open(log_path, "wb") as log:  # the agent's own output, kept for a child that dies
            proc = subprocess.Popen([*command, request], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    pass_fds=(relay.child_fd,) if relay is not None else ())
            if relay is not None:
                relay.started()
            proc.wait()
        try:
            with open(result, "rb") as fh:
                summary = json.load(fh)
        except (OSError, ValueError):
            with open(log_path, "rb") as fh:
                fh.seek(max(0, os.path.getsize(log_path) - 600))
                tail = fh.read().decode("utf-8", "replace").strip().splitlines()[-3:]
            out["message"] = (f"{task.name}: the isolated replay ended (exit code {proc.returncode}) without a "
                              "result" + (": " + " | ".join(tail) if tail else ""))
            return
        summary.pop("seconds", None)
        out.update(summary)


def _replay(task: Task, out: dict[str, Any], local: str | None) -> None:
    from tracetui.core.harness.run import replay
    from tracetui.core.model import Status
    from tracetui.core.readers import read_trace
    from tracetui.core.triage.replayability import assess

    out["stage"] = "read"
    try:
        with local_copy(task.path) if local is None else contextlib.nullcontext(local) as path:
            original = read_trace(path)
    except (TracetuiError, ValueError, RecursionError, MemoryError, OSError) as exc:
        _error(out, "read", exc, task.name)
        return
    roots = [s for s in original.spans if s.parent_id is None]
    out["original_failed"] = any(s.status is Status.ERROR for s in roots)
    rep = assess(original)
    if not roots or rep.verdict == "not_replayable" or any(i.severity == "error" for i in original.issues):
        out["outcome"] = "incomplete"
        out["stage"] = "read"
        reasons = [f.reason for f in rep.findings if f.severity == "not_replayable"][:2]
        reasons += [str(i) for i in original.issues if i.severity == "error"][:2]
        out["message"] = f"{task.name}: " + ("; ".join(reasons) if reasons else "no root span: the run never finished")
        return
    out["stage"] = "agent"
    try:
        spec = _spec(task.agent)
        redactor = _redactor(task.key_file, spec)
    except TracetuiError as exc:
        _error(out, "agent", exc, task.agent)
        return
    out["stage"] = "replay"
    tmp = tempfile.mkdtemp(prefix="tracetui-nightly-")
    try:
        path = os.path.join(tmp, "replay.jsonl")
        try:
            report = replay(original, spec, path, redactor=redactor, mode=task.mode, llm=task.llm,
                            trials=task.trials, accept_schema_change=False,
                            isolation=out["network_isolation"])
        except TracetuiError as exc:
            _error(out, "replay", exc, task.name)
            return
        out["stage"] = "diff"
        replays = [read_trace(path, trace_id=r.run_id) for r in report.runs] if len(report.runs) > 1 \
            else [read_trace(path)]
        _judge(task, original, report, replays, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out["stage"] = None if out["outcome"] not in ("error", "incomplete") else out["stage"]


def _first(run: Any, diff: Any, trial: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first divergence of one trial as ``(signature, where)``.

    When the harness stopped serving the replay (an ``unrecorded_call``, an exhausted recording, an
    input mismatch), that is the first divergence: the point where the replay left the recording,
    typed as the harness typed it and named by its tool, without field paths (the diff alone may
    pair the new call with a recorded one, or with none, and the fields it lists then vary with the
    run: one cause would be split over several groups). Otherwise it is
    the diff's first divergence, with ``triage.batch.signature``.
    """
    from tracetui.core.triage.batch import signature

    if run.outcome.divergences:
        d0 = run.outcome.divergences[0]
        match = next((d for d in diff.divergences if d.replay is not None and d.replay.span_id == d0.get("span_id")),
                     None)
        _t, kind, name, _fields = signature(match) if match is not None else (None, "tool", None, ())
        sig = {"type": str(d0.get("type")), "kind": kind, "name": d0.get("tool") or name, "fields": []}
        where = {"trial": trial, "row": match.row if match is not None else None,
                 "original_span_id": match.original.span_id if match is not None and match.original is not None else None}
        return sig, where
    f = diff.first
    typ, kind, name, fields = signature(f)
    return ({"type": typ, "kind": kind, "name": name, "fields": list(fields)},
            {"trial": trial, "row": f.row, "original_span_id": f.original.span_id if f.original is not None else None})


def _judge(task: Task, original: Any, report: Any, replays: list[Any], out: dict[str, Any]) -> None:
    """Diff each trial (through triage, which diffs once per trial), classify, keep the first divergence."""
    from tracetui.core.diff import diff_traces
    from tracetui.core.triage import triage

    reads = set(original.header.get("read_tools") or ()) if isinstance(original.header.get("read_tools"), list) \
        else set(_spec(task.agent).read_tools)
    try:
        result = triage(original, replays)
        diffs = [t.diff for t in result.reproduction.per_trial] if result.reproduction is not None else []
        verdict = result.verdict
    except Exception:  # noqa: BLE001 - triage is extra: the diff alone still classifies the run
        diffs, verdict = [], None
    if len(diffs) != len(replays):
        diffs = [diff_traces(original, r) for r in replays]
    types: Counter[str] = Counter()
    diverged = failed = 0
    for i, (run, diff) in enumerate(zip(report.runs, diffs), 1):
        these = Counter(d.type.value for d in diff.divergences)
        for t in {str(d.get("type")) for d in run.outcome.divergences if d.get("type")}:
            these[t] = max(these[t], 1)  # the harness saw it even where the diff types the row otherwise
        types.update(these)
        for d in diff.divergences:
            span = d.original if d.original is not None else d.replay
            if span is not None and span.kind.value == "tool" and span.tool_name not in reads:
                out["write_mismatch"] = True
        if run.new_failure or run.outcome.duplicate_writes:
            failed += 1
        if (diff.first is not None or run.diverged) and out["signature"] is None:
            out["signature"], out["first"] = _first(run, diff, i)
        if diff.first is not None or run.diverged:
            diverged += 1
    out["divergence_types"] = dict(sorted((k, v) for k, v in types.items() if v))
    out["unrecorded_call"] = types.get("unrecorded_call", 0) > 0
    out["trials_diverged"] = diverged
    out["trials_failed"] = failed
    out["outcome"] = "failed" if failed else "diverged" if diverged else "pass"
    out["verdict"] = verdict if out["outcome"] != "pass" or out["original_failed"] else None
