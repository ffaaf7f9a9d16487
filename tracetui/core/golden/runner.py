"""Running golden cases: replay the agent against each case's fixture (or take a given replay) and
check the case's contract (docs/golden.md "Running cases").

A case is a folder with ``case.yaml`` (provenance, ``mode``, optional ``agent`` and ``seed_file``),
``contract.yaml`` (``tracetui.core.golden.contract``) and ``trace.jsonl`` (the fixture, a
tracetui/1 run). Every case ends in one of four **outcomes**:

- ``pass``: every clause met its threshold;
- ``fail``: a clause did not (each violation listed with its span), or the agent raised;
- ``diverged``: the agent's path left the fixture (a strict replay's ``unrecorded_call``, an
  exhausted recording, a fixture that could not answer): not a failure — the case cannot judge
  this agent in its mode; the first divergence is given, with the hint to convert the case to
  fixture mode. A safety clause violated in a trial that did not diverge is still ``fail``;
- ``error``: the case or the infrastructure is broken (a damaged file, an agent that cannot be
  loaded, a bad seed file); never stops the other cases.

Pure library: no printing.
"""

from __future__ import annotations

import json
import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from tracetui.core.errors import TracetuiError
from tracetui.core.golden.contract import (
    Contract,
    ContractResult,
    GoldenCaseError,
    Violation,
    check,
    is_safety,
    load_contract,
)
from tracetui.core.model import Span, Status, Trace

OUTCOMES = ("pass", "fail", "diverged", "error")
"""Case outcomes, in the order counts are reported."""

CASE_SCHEMA = "tracetui-case/1"
CASE_FILE, CONTRACT_FILE, TRACE_FILE = "case.yaml", "contract.yaml", "trace.jsonl"
CASE_MODES = ("strict", "fixture")
DIVERGED_HINT = ("the agent's path left the fixture: if this follows a deliberate fix, convert the case to fixture "
                 "mode (case.yaml `mode: fixture`, with a `seed_file` for what the recording never saw)")


@dataclass(slots=True)
class Case:
    """One case folder.

    Attributes:
        name: ``case.yaml`` ``name``, else the folder name.
        path: The case folder.
        meta: ``case.yaml`` as parsed (empty when it could not be read).
        contract: The parsed contract, or None when the case is damaged.
        error: Why the case cannot run (a ``GoldenCaseError`` message), or None.
    """

    name: str
    path: str
    meta: dict[str, Any] = field(default_factory=dict)
    contract: Contract | None = None
    error: str | None = None

    @property
    def trace_path(self) -> str:
        return os.path.join(self.path, TRACE_FILE)

    @property
    def mode(self) -> str:
        """``strict`` (default) or ``fixture``: how the agent is replayed."""
        return str(self.meta.get("mode") or "strict")

    @property
    def agent(self) -> str | None:
        """The default agent reference of the case (``case.yaml`` ``agent``), or None."""
        value = self.meta.get("agent")
        return value if isinstance(value, str) and value else None

    @property
    def seed_file(self) -> str | None:
        """The fixture seed file, resolved against the case folder, or None."""
        value = self.meta.get("seed_file")
        return os.path.join(self.path, value) if isinstance(value, str) and value else None


@dataclass(slots=True)
class CaseResult:
    """The result of one case.

    Attributes:
        name: The case name; ``path``: its folder.
        outcome: ``pass``, ``fail``, ``diverged`` or ``error`` (``OUTCOMES``).
        violations: Every violation of every failed clause, with span and trial.
        first_divergence: When diverged: ``{type, trial, span_id, seq, tool, message}`` of the first
            call that left the fixture (from the replay's ``replay.summary``); else None.
        trials: Runs checked (or attempted).
        message: One line for the report.
        notes: What else the reader should know (a one-off redaction key, clauses not checked).
        clauses: Each clause's tally (``ClauseResult.to_dict``), when the contract was checked.
        replay_path: The replay trace kept (``keep``), else None.
    """

    name: str
    path: str
    outcome: str
    violations: list[Violation] = field(default_factory=list)
    first_divergence: dict[str, Any] | None = None
    trials: int = 0
    message: str = ""
    notes: list[str] = field(default_factory=list)
    clauses: list[dict[str, Any]] = field(default_factory=list)
    replay_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "outcome": self.outcome, "message": self.message,
                "trials": self.trials, "violations": [v.to_dict() for v in self.violations],
                "first_divergence": self.first_divergence, "clauses": self.clauses, "notes": list(self.notes),
                "replay_path": self.replay_path}


# --------------------------------------------------------------------------- finding cases
def _read_case_yaml(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except OSError as exc:
        raise GoldenCaseError(path, f"cannot be read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise GoldenCaseError(path, "not valid YAML: " + " ".join(str(exc).split())) from None
    if not isinstance(raw, Mapping):
        raise GoldenCaseError(path, f"must be a YAML mapping (schema: {CASE_SCHEMA}, name, mode, ...)")
    meta = {str(k): v for k, v in raw.items()}
    schema = meta.get("schema")
    if schema is not None and schema != CASE_SCHEMA:
        raise GoldenCaseError(path, f"must be {CASE_SCHEMA!r}, not {schema!r}", where="schema")
    mode = meta.get("mode")
    if mode is not None and mode not in CASE_MODES:
        raise GoldenCaseError(path, f"must be one of {', '.join(CASE_MODES)}, not {mode!r}", where="mode")
    for key in ("agent", "seed_file", "name"):
        value = meta.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise GoldenCaseError(path, f"must be a non-empty string or null, not {value!r}", where=key)
    return meta


def load_case(folder: str | os.PathLike[str]) -> Case:
    """Read one case folder.

    Raises:
        GoldenCaseError: a file missing or damaged (the message names the file and field).
    """
    path = os.fspath(folder)
    missing = [f for f in (CASE_FILE, CONTRACT_FILE, TRACE_FILE) if not os.path.isfile(os.path.join(path, f))]
    if missing:
        raise GoldenCaseError(path, f"not a complete case: {', '.join(missing)} missing (a case holds {CASE_FILE}, "
                                    f"{CONTRACT_FILE} and {TRACE_FILE}; `tracetui promote` writes them)")
    meta = _read_case_yaml(os.path.join(path, CASE_FILE))
    contract = load_contract(os.path.join(path, CONTRACT_FILE))
    name = meta.get("name") or os.path.basename(os.path.normpath(path))
    return Case(str(name), path, meta, contract)


def _is_case_dir(path: str) -> bool:
    return any(os.path.isfile(os.path.join(path, f)) for f in (CASE_FILE, CONTRACT_FILE, TRACE_FILE))


def find_cases(folder: str | os.PathLike[str]) -> list[Case]:
    """Every case under ``folder``: each subfolder holding any of the three case files, sorted by
    folder name (``folder`` itself when it is a case). A damaged case is returned with ``error`` set
    (and ``contract`` None), so a run reports it and goes on.

    Raises:
        GoldenCaseError: ``folder`` does not exist or is not a folder.
    """
    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise GoldenCaseError(root, "not a folder of golden cases (golden/NAME/{case.yaml,contract.yaml,trace.jsonl})")
    if _is_case_dir(root):
        dirs = [root]
    else:
        # Dot-folders are skipped: a promotion builds its case in a hidden folder, then renames it.
        dirs = [os.path.join(root, d) for d in sorted(os.listdir(root)) if not d.startswith(".")
                and os.path.isdir(os.path.join(root, d)) and _is_case_dir(os.path.join(root, d))]
    cases: list[Case] = []
    for d in dirs:
        try:
            cases.append(load_case(d))
        except GoldenCaseError as exc:
            cases.append(Case(os.path.basename(os.path.normpath(d)), d, error=str(exc)))
    return cases


# --------------------------------------------------------------------------- running
def _root(trace: Trace) -> Span | None:
    return next((s for s in trace.spans if s.parent_id is None), trace.spans[0] if trace.spans else None)


def _summary(trace: Trace) -> Mapping[str, Any] | None:
    root = _root(trace)
    value = root.attributes.get("replay.summary") if root is not None else None
    return value if isinstance(value, Mapping) else None


def _divergence(trace: Trace, trial: int) -> dict[str, Any] | None:
    """The first divergence of a replayed run (its ``replay.summary``, else a span marked
    ``replay.divergence``), or None."""
    summary = _summary(trace)
    found: dict[str, Any] | None = None
    if summary is not None and isinstance(summary.get("divergences"), list) and summary["divergences"]:
        d = summary["divergences"][0]
        if isinstance(d, Mapping):
            found = {"type": d.get("type"), "span_id": d.get("span_id"), "seq": d.get("seq"), "tool": d.get("tool"),
                     "message": str(d.get("message") or "").splitlines()[0] if d.get("message") else ""}
    if found is None:
        for s in trace.spans:
            kind = s.attributes.get("replay.divergence")
            if kind:
                out = s.data.get("output")
                msg = out.get("message") if isinstance(out, Mapping) else None
                found = {"type": str(kind), "span_id": s.span_id, "seq": s.seq, "tool": s.tool_name,
                         "message": str(msg).splitlines()[0] if msg else ""}
                break
    if found is not None:
        found["trial"] = trial
    return found


_DIVERGENCE_ERRORS = frozenset({"UnrecordedCall", "RecordingExhausted", "InputMismatch", "ReplayDivergence"})


def _agent_error(trace: Trace) -> str | None:
    """The agent's own exception in a replayed run (not a divergence), as text, or None."""
    summary = _summary(trace)
    if summary is not None and "new_failure" in summary:
        return str(summary.get("error") or "the agent raised") if summary.get("new_failure") else None
    root = _root(trace)
    if root is None or root.status is not Status.ERROR or root.error_type in _DIVERGENCE_ERRORS:
        return None
    out = root.data.get("output")
    msg = out.get("message") if isinstance(out, Mapping) else None
    return f"{root.error_type or 'error'}: {msg}" if msg else str(root.error_type or "the agent raised")


def judge(case: Case, runs: Sequence[Trace]) -> CaseResult:
    """The outcome of a case over replayed runs (one per trial): see the module docstring."""
    assert case.contract is not None
    contract = case.contract
    result = CaseResult(case.name, case.path, "pass", trials=len(runs))
    if not runs:
        result.outcome, result.message = "error", "the replay holds no run"
        return result
    diverged = [(i, d) for i, t in enumerate(runs, start=1) if (d := _divergence(t, i)) is not None]
    div_trials = {i for i, _ in diverged}
    raised = [(i, e) for i, t in enumerate(runs, start=1) if i not in div_trials and (e := _agent_error(t))]
    clean = [t for i, t in enumerate(runs, start=1) if i not in div_trials]
    checked: ContractResult | None = None
    if clean:
        checked = check(contract, clean)
        # trial numbers of the clean runs in the whole set
        numbers = [i for i in range(1, len(runs) + 1) if i not in div_trials]
        for v in checked.violations:
            v.trial = numbers[v.trial - 1]
        result.clauses = [c.to_dict() for c in checked.clauses]
        result.notes.extend(checked.notes)
    if raised:
        i, text = raised[0]
        result.outcome = "fail"
        result.message = f"the agent raised in trial {i}: {text}"
        if checked is not None:
            result.violations = checked.violations
        return result
    safety_ids = {c.id for c in contract.clauses() if is_safety(c)}
    if diverged:
        # Calls made before a run left the fixture did happen: a forbidden call or one call too many
        # there is a failure, whatever comes after (a divergence must not hide a harmful write).
        early = replace(contract, must_call=[], order=[], success_requires=[], final_state=[],
                        trials=replace(contract.trials, count=1))
        partial = [runs[i - 1] for i in sorted(div_trials)]
        if early.clauses():
            before = check(early, partial)
            numbers = sorted(div_trials)
            hits = list(before.violations)
            for v in hits:
                v.trial = numbers[v.trial - 1]
            if hits:
                ids = list(dict.fromkeys(v.clause_id for v in hits))
                result.outcome = "fail"
                result.violations = hits + (checked.violations if checked is not None else [])
                result.message = (f"{len(ids)} clause(s) violated before the run left the fixture: {', '.join(ids)}")
                return result
    if checked is not None and not checked.passed:
        failed = [c for c in checked.clauses if not c.passed]
        real = not diverged or any(c.clause_id in safety_ids or c.layer == "structural" for c in failed)
        if real:
            result.outcome = "fail"
            result.violations = checked.violations
            ids = ", ".join(c.clause_id for c in failed)
            result.message = f"{len(failed)} clause(s) violated: {ids}"
            return result
    if diverged:
        i, d = diverged[0]
        result.outcome = "diverged"
        result.first_divergence = d
        where = f" at span {d['span_id']}" if d.get("span_id") else ""
        what = f"{d.get('type')}" + (f" {d['tool']}" if d.get("tool") else "")
        result.message = f"{len(diverged)} of {len(runs)} trial(s) left the fixture; first: {what}{where} (trial {i})"
        result.notes.append(DIVERGED_HINT)
        return result
    n = len(contract.clauses()) + 2
    result.message = f"{n} clause(s) held ({len(runs)} trial(s))"
    return result


def _error(case: Case, message: str, trials: int = 0) -> CaseResult:
    return CaseResult(case.name, case.path, "error", trials=trials, message=message)


def _load_seed(case: Case) -> Any:
    path = case.seed_file
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except OSError as exc:
        raise GoldenCaseError(os.path.join(case.path, CASE_FILE), f"seed file {path} cannot be read: "
                              f"{exc.strerror or exc}", where="seed_file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise GoldenCaseError(path, f"not JSON: {exc}") from None
    if not isinstance(value, Mapping):
        raise GoldenCaseError(path, "a fixture seed must be a JSON object")
    return value


def _redactor(spec: Any, notes: list[str], key_file: str | None) -> Any:
    from tracetui.core.harness.redact import project_redactor

    redactor, note = project_redactor(key_file, sensitive_fields=spec.sensitive_fields)
    if note is not None:
        notes.append(note)
    return redactor


def run_case(case: Case, *, agent: str | None = None, replay: str | None = None, trials: int | None = None,
             keep: str | None = None, redaction_key_file: str | None = None, force: bool = False,
             isolation: str | None = None) -> CaseResult:
    """Run one case and judge it.

    Args:
        case: From ``find_cases``/``load_case`` (a case with ``error`` gives an ``error`` result).
        agent: ``module:function`` or ``file.py:function`` to replay (default ``case.yaml`` ``agent``;
            a relative path is taken from the current directory, as by ``tracetui replay``).
        replay: A replay trace to check instead of running an agent: each of its runs is a trial,
            redacted with the project key (as the case was) before it is checked.
        trials: Trials to run (default the contract's ``trials.count``); ignored with ``replay``.
        keep: A folder to keep the replay trace in (``NAME.jsonl``); default a temporary folder,
            removed. An existing ``NAME.jsonl`` is an ``error`` outcome unless ``force``.
        redaction_key_file: The project key file (default: ``load_key``'s lookup; with no key a
            one-off key is used and noted).
        force: Replace an existing kept replay trace.
        isolation: How the agent is cut off from the network (``sandbox.ISOLATION_NAMESPACE`` when
            this process runs in the replay sandbox), written to the replay header's
            ``network_isolation``; default ``ISOLATION_GUARD`` (the pytest plugin, a library caller:
            the in-process guard only).

    The agent is replayed against ``trace.jsonl`` in the case's ``mode`` (``strict`` or ``fixture``,
    with ``seed_file``) with the model called again (``llm="live"``: a fixed agent renders other
    prompts, so frozen LLM outputs would only report input mismatches); an agent that declares no
    ``MODEL`` is replayed with frozen LLM outputs.

    Returns:
        The CaseResult; never raises for a broken case, agent or replay (outcome ``error``).
    """
    if case.error is not None or case.contract is None:
        return _error(case, case.error or "the case could not be read")
    try:
        if replay is not None:
            from tracetui.core.readers import read_runs

            from tracetui.core.golden.promote import redact_trace
            from tracetui.core.harness.redact import project_redactor

            # the case holds tokens of the project key: the replay is redacted with it before it is
            # checked, so a raw value matches its token and no raw value reaches the report
            redactor, note = project_redactor(redaction_key_file)
            runs = [redact_trace(t, redactor) for t in read_runs(replay).runs]
            result = judge(case, runs)
            if note is not None:
                result.notes.insert(0, note)
            return result
        ref = agent or case.agent
        if ref is None:
            return _error(case, "no agent to replay: pass --agent AGENT (or --replay REPLAY.jsonl), or set `agent` "
                                "in case.yaml")
        return _replay_agent(case, ref, trials, keep, redaction_key_file, force, isolation)
    except (TracetuiError, OSError) as exc:
        return _error(case, str(exc))


def _replay_agent(case: Case, ref: str, trials: int | None, keep: str | None, key_file: str | None,
                  force: bool = False, isolation: str | None = None) -> CaseResult:
    from tracetui.core.harness.agent import load_agent
    from tracetui.core.harness.run import replay as harness_replay
    from tracetui.core.harness.sandbox import ISOLATION_GUARD
    from tracetui.core.readers import read_runs, read_trace

    assert case.contract is not None
    k = trials if trials is not None else case.contract.trials.count
    if k < 1:
        return _error(case, f"--trials must be at least 1, not {k}")
    recording = read_trace(case.trace_path)
    seed = _load_seed(case)
    spec = load_agent(ref)
    notes: list[str] = []
    redactor = _redactor(spec, notes, key_file)
    llm = "live" if spec.model is not None else "frozen"
    if llm == "frozen":
        notes.append(f"{ref} declares no MODEL: replayed with the recorded LLM outputs (--llm frozen)")
    tmpdir = None
    if keep is not None:
        if os.path.exists(keep) and not os.path.isdir(keep):
            return _error(case, f"--keep {keep} is a file, not a folder: name a folder for the replay traces")
        os.makedirs(keep, exist_ok=True)
        out = os.path.join(keep, f"{_safe_name(os.path.basename(os.path.normpath(case.path)))}.jsonl")
        if os.path.lexists(out) and not force:
            return _error(case, f"--keep: {out} exists; pass --force to replace it, or keep into another folder")
    else:
        tmpdir = tempfile.mkdtemp(prefix="tracetui-golden-")
        out = os.path.join(tmpdir, "replay.jsonl")
    try:
        harness_replay(recording, spec, out, redactor=redactor, mode=case.mode, llm=llm, trials=k,
                       seed_state=seed, overwrite=keep is not None, isolation=isolation or ISOLATION_GUARD)
        runs = read_runs(out).runs
        result = judge(case, runs)
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    result.notes[:0] = notes
    result.replay_path = out if keep is not None else None
    return result


def _safe_name(name: str) -> str:
    """The kept replay's file name for a case folder ``name``: letters, digits and ``-_.`` kept, anything else
    ``_``, no dot at either end (``case`` when nothing is left); a name that changed gets ``-`` and 8 hex
    digits of its SHA-256, so two folders never share one (``a b`` and ``a_b``: ``--force`` would have
    replaced the first case's replay with the second's)."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    if cleaned == name:
        return cleaned
    return f"{cleaned or 'case'}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def run_cases(folder: str | os.PathLike[str], *, agent: str | None = None, replay: str | None = None,
              trials: int | None = None, keep: str | None = None,
              redaction_key_file: str | None = None, force: bool = False) -> list[CaseResult]:
    """``run_case`` on every case of ``find_cases(folder)``, in order.

    Raises:
        GoldenCaseError: ``folder`` is not a folder (a damaged case is an ``error`` result instead).
    """
    return [run_case(c, agent=agent, replay=replay, trials=trials, keep=keep, redaction_key_file=redaction_key_file,
                     force=force) for c in find_cases(folder)]


def counts(results: Sequence[CaseResult]) -> dict[str, int]:
    """Cases per outcome, every outcome present (``OUTCOMES`` order)."""
    out = {o: 0 for o in OUTCOMES}
    for r in results:
        out[r.outcome] = out.get(r.outcome, 0) + 1
    return out
