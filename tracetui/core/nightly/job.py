"""A nightly job: list and sample the store, replay each sampled run on an executor, journal each
result as it arrives, and build the report (``nightly.report``).

The journal (``REPORT.partial.jsonl`` beside the report) is the incremental report: its first line
is the job (configuration, sample, tasks), then one summary per finished (run, LLM mode), appended
and flushed as each arrives. A killed job resumes from it (``resume=True``): the same tasks, the
finished ones skipped, a torn last line ignored. The final report is written atomically and the
journal removed.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import orjson

from tracetui.core.errors import ReadError, TracetuiError
from tracetui.core.execute import Executor, SerialExecutor
from tracetui.core.nightly.report import aggregate
from tracetui.core.nightly.store import is_url, list_store, sample
from tracetui.core.nightly.task import LLM_MODES, Task, base_summary, replay_run

__all__ = ["JOURNAL_VERSION", "NightlyConfig", "NightlyError", "journal_path", "run_nightly"]

JOURNAL_VERSION = 1


class NightlyError(TracetuiError):
    """A job that cannot start or resume as asked (the reason and what to do)."""


@dataclass(slots=True)
class NightlyConfig:
    """What to replay.

    Attributes:
        store: A folder or an fsspec URL.
        agent: ``path/to/agent.py:function`` or ``module:function`` (made absolute for the workers
            when it is a file here).
        sample: Runs to draw (``<= 0``: all); failed runs are always added.
        seed: The sample's seed (any text or number).
        llm: LLM modes to replay each run in, ``frozen`` and/or ``live``.
        trials: K trials per run in ``live`` mode (frozen runs once).
        mode: Replay mode (``strict``: a call the recording does not cover is a divergence).
        key_file: The redaction key file, or None for the usual lookup.
        extra: Not part of the job's identity: ``llm_endpoint``, the model endpoint the replay
            sandbox's relay may reach with ``live`` (None: each worker's own lookup).
    """

    store: str
    agent: str
    sample: int = 100
    seed: str = "0"
    llm: tuple[str, ...] = ("frozen",)
    trials: int = 3
    mode: str = "strict"
    key_file: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def identity(self) -> dict[str, Any]:
        """What a resumed job must share with the interrupted one."""
        d = asdict(self)
        d.pop("extra")
        d["llm"] = list(self.llm)
        return d


def journal_path(report_path: str) -> str:
    """``nightly.json`` -> ``nightly.json.partial.jsonl``."""
    return report_path + ".partial.jsonl"


def _absolute_agent(ref: str) -> str:
    target, sep, func = ref.rpartition(":")
    if sep and (target.endswith(".py") or os.sep in target) and os.path.exists(target):
        return f"{os.path.abspath(target)}:{func}"
    return ref


def _plan(config: NightlyConfig) -> tuple[dict[str, Any], list[Task]]:
    for llm in config.llm:
        if llm not in LLM_MODES:
            raise NightlyError(f"--llm {llm!r}: use frozen and/or live")
    if config.trials < 1:
        raise NightlyError(f"--trials must be at least 1, not {config.trials}")
    store = config.store if is_url(config.store) else os.path.abspath(config.store)
    entries = list_store(store)
    if not entries:
        raise ReadError(config.store, "holds no trace files (.jsonl, .json, .eval, .traj, .yaml)")
    drawn = sample(entries, config.sample, config.seed)
    agent = _absolute_agent(config.agent)
    key_file = os.path.abspath(config.key_file) if config.key_file else None
    endpoint = config.extra.get("llm_endpoint")
    tasks = [Task(e.path, e.name, agent, llm, config.trials if llm == "live" else 1, config.mode, key_file, endpoint)
             for e in drawn.entries for llm in config.llm]
    meta = {"requested": config.sample, "seed": config.seed, "listed": drawn.listed, "sampled": len(drawn.entries),
            "failed_flagged": drawn.failed, "strata": drawn.strata}
    return meta, tasks


def _read_journal(path: str, config: NightlyConfig) -> tuple[dict[str, Any], list[Task], dict[str, dict[str, Any]]]:
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
    except OSError as exc:
        raise NightlyError(f"--resume: cannot read the journal {path}: {exc.strerror or exc}") from None
    try:
        head = orjson.loads(lines[0])
        if head.get("journal") != JOURNAL_VERSION:
            raise ValueError("not a nightly journal")
    except (ValueError, AttributeError):
        raise ReadError(path, "line 1: not a tracetui nightly journal") from None
    if head.get("config") != config.identity():
        raise NightlyError(f"--resume: {path} is the journal of another job (store, agent, sample, seed, modes or "
                           "trials differ); run with the same options, or without --resume (and --force) to start again")
    done: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            s = orjson.loads(line)
            done[s["key"]] = s
        except (ValueError, KeyError, TypeError):
            if n == len(lines) or (n == len(lines) - 1 and not lines[-1]):
                continue  # the torn last line of a killed job: that run is replayed again
            raise ReadError(path, f"line {n}: not a run summary") from None
    return head["sample"], [Task(**t) for t in head["tasks"]], done


def run_nightly(config: NightlyConfig, executor: Executor | None = None, *, journal: str, resume: bool = False,
                force: bool = False,
                progress: Callable[[int, int, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run the job and return its report (``nightly.report.aggregate``; no baseline, no alerts yet).

    Args:
        config: What to replay.
        executor: Where (default: this process, serially).
        journal: The journal file (``journal_path(report)``).
        resume: Continue the job of an existing journal, skipping its finished runs.
        force: Start again over an existing journal.
        progress: Called ``progress(done, total, summary)`` after each run (``done`` counts the runs
            skipped on resume).

    Raises:
        ReadError: the store cannot be listed or holds no trace; a damaged journal.
        NightlyError: a bad option; a journal of an interrupted job without ``resume`` or ``force``;
            ``resume`` with a journal of another job.
    """
    executor = executor or SerialExecutor()
    started = time.time()
    done: dict[str, dict[str, Any]] = {}
    if resume and os.path.exists(journal):
        sample_meta, tasks, done = _read_journal(journal, config)
        tasks = [replace(t, llm_endpoint=config.extra.get("llm_endpoint")) for t in tasks]  # this invocation's
        fh = open(journal, "ab")
    else:
        if os.path.exists(journal) and not force and not resume:
            raise NightlyError(f"{journal}: an earlier job was interrupted here; pass --resume to finish it, or --force "
                               "to start again")
        sample_meta, tasks = _plan(config)
        head = {"journal": JOURNAL_VERSION, "config": config.identity(), "sample": sample_meta,
                "tasks": [{**t.to_json(), "llm_endpoint": None} for t in tasks]}  # the endpoint: each invocation's
        tmp = journal + ".tmp"
        with open(tmp, "wb") as new:
            new.write(orjson.dumps(head) + b"\n")
        os.replace(tmp, journal)
        fh = open(journal, "ab")
    todo = [t for t in tasks if t.key not in done]
    total = len(tasks)
    results = list(done.values())
    try:
        for finished in executor.map_unordered(replay_run, [t.to_json() for t in todo]):
            summary = finished.value
            if finished.error is not None or not isinstance(summary, dict):
                t = todo[finished.index]
                summary = _lost(t, finished.error or "no result")
            fh.write(orjson.dumps(summary) + b"\n")
            fh.flush()
            results.append(summary)
            if progress is not None:
                progress(len(results), total, summary)
    finally:
        fh.close()
    finished_at = time.time()
    ran = len(results) - len(done)
    meta = {"store": config.store, "agent": config.agent, "llm": list(config.llm), "trials": config.trials,
            "mode": config.mode, "sample": sample_meta,
            "job": {"started_at": _iso(started), "finished_at": _iso(finished_at),
                    "seconds": round(finished_at - started, 3), "executor": executor.describe(),
                    "replayed_now": ran, "resumed": len(done),
                    "replays_per_second": round(ran / (finished_at - started), 3) if finished_at > started else None,
                    "network_isolation": dict(sorted(Counter(str(r.get("network_isolation")) for r in results
                                                             if r.get("network_isolation")).items()))}}
    return aggregate(results, meta)


def _lost(task: Task, error: str) -> dict[str, Any]:
    """The summary of a task whose worker failed or died (never a replay result)."""
    out = base_summary(task)
    out.update(outcome="error", stage="worker", message=f"{task.name}: the task failed on its worker: {error}")
    return out


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")
