"""The contract checker: runs (``Trace``) judged against a contract, clause by clause, trial by trial.

``check(contract, runs)`` returns a ``ContractResult``: a ``ClauseResult`` per clause (the
structural checks first) with its ``Violation``s; safety clauses must hold in every trial, soft
ones in ``trials.soft.at_least`` of them (docs/golden.md "Contract"). The format is
``golden.clauses``; both are importable from ``golden.contract``.
"""


from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.canonical import canonicalize
from tracetui.core.golden.clauses import (
    LAYERS,
    SECRET_RULES,
    STRUCTURAL_SECRET,
    STRUCTURAL_TOOL,
    Clause,
    Contract,
    FinalState,
    ForbidCall,
    MaxCalls,
    MustCall,
    Order,
    SuccessRequires,
    is_safety,
    kind_name,
    layer_of,
    path_parts,
)
from tracetui.core.model import Span, SpanKind, Status, Trace

# --------------------------------------------------------------------------- checking
@dataclass(slots=True)
class Violation:
    """One clause violated in one trial.

    Attributes:
        clause_id: The clause's ``id`` (``structural.*`` for the structural checks).
        layer: structural, trajectory, state or outcome.
        message: What happened, in words (never a secret value).
        span_id: The span that violates it (the forbidden call; the root span for a missing call).
        trial: 1-based trial (run) number.
    """

    clause_id: str
    layer: str
    message: str
    span_id: str | None
    trial: int

    def to_dict(self) -> dict[str, Any]:
        return {"clause_id": self.clause_id, "layer": self.layer, "message": self.message,
                "span_id": self.span_id, "trial": self.trial}


@dataclass(slots=True)
class ClauseResult:
    """One clause over all trials.

    Attributes:
        clause_id, layer: As in Violation.
        safety: Whether it must hold in every trial.
        held: Trials in which it held; ``of``: trials checked; ``needed``: trials it must hold in.
        checked: False when it could not be checked (a final_state clause without a fixture state).
    """

    clause_id: str
    layer: str
    safety: bool
    held: int
    of: int
    needed: int
    checked: bool = True

    @property
    def passed(self) -> bool:
        return not self.checked or self.held >= self.needed

    def to_dict(self) -> dict[str, Any]:
        return {"clause_id": self.clause_id, "layer": self.layer, "safety": self.safety, "held": self.held,
                "of": self.of, "needed": self.needed, "checked": self.checked, "passed": self.passed}


@dataclass(slots=True)
class ContractResult:
    """The verdict of ``check``.

    Attributes:
        passed: Every clause met its threshold.
        violations: Every violation of a clause that failed its threshold, by trial then layer order.
        clauses: Every clause's tally (structural checks first).
        trials: Runs checked.
        notes: Things the reader should know (clauses not checked, thresholds scaled).
    """

    passed: bool
    violations: list[Violation]
    clauses: list[ClauseResult]
    trials: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "trials": self.trials,
                "violations": [v.to_dict() for v in self.violations],
                "clauses": [c.to_dict() for c in self.clauses], "notes": list(self.notes)}


def _root(trace: Trace) -> Span | None:
    for s in trace.spans:
        if s.parent_id is None:
            return s
    return trace.spans[0] if trace.spans else None


def _tool_calls(trace: Trace) -> list[Span]:
    return [s for s in trace.spans if s.kind is SpanKind.TOOL]


def _arguments(span: Span) -> Any:
    return canonicalize(span.data.get("arguments"))


def subset_match(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` contains ``expected``: every key of an expected mapping is in the actual
    mapping with a matching value (recursively); lists and scalars are equal. Both sides are
    canonicalised first (JSON strings parsed)."""
    return _subset(canonicalize(expected), canonicalize(actual))


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            _subset(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


def _calls_matching(calls: list[Span], tool: str, args: Mapping[str, Any] | None) -> list[Span]:
    return [s for s in calls if s.tool_name == tool and (args is None or subset_match(args, s.data.get("arguments")))]


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def final_answer(trace: Trace) -> tuple[str | None, Span | None]:
    """The run's final answer and the span holding it: the root span's output (its strings joined
    by newlines when it is an object), else the last LLM output's ``content``; (None, None) when
    the run has neither."""
    root = _root(trace)
    if root is not None and root.data.get("output") is not None and root.status is not Status.ERROR:
        texts = _strings(root.data["output"])
        if texts:
            return "\n".join(texts), root
    for s in reversed(trace.spans):
        if s.kind is SpanKind.LLM:
            out = s.data.get("output")
            content = out.get("content") if isinstance(out, Mapping) else out if isinstance(out, str) else None
            if isinstance(content, str) and content:
                return content, s
    return None, None


def final_state_of(trace: Trace) -> Any:
    """The fixture's final state of a replayed run: root span ``replay.summary.final_state``, or None."""
    summary = _summary(trace)
    return summary.get("final_state") if summary is not None else None


def _summary(trace: Trace) -> Mapping[str, Any] | None:
    root = _root(trace)
    if root is None:
        return None
    summary = root.attributes.get("replay.summary")
    return summary if isinstance(summary, Mapping) else None


_MISSING = object()
OUTPUT_PATH = "output"
"""First key of a ``final_state`` path that names the run's own output (the root span's ``output``,
what the agent returned) rather than the fixture state: checked with or without a fixture replay."""


def _lookup(state: Any, path: str | list[Any]) -> Any:
    cur = state
    for part in (path_parts(path) if isinstance(path, str) else path):
        if isinstance(cur, Mapping):
            key = str(part)
            if key not in cur:
                return _MISSING
            cur = cur[key]
        elif isinstance(cur, list):
            try:
                idx = int(part)
            except ValueError:
                return _MISSING
            if not 0 <= idx < len(cur):
                return _MISSING
            cur = cur[idx]
        else:
            return _MISSING
    return cur


def _change_under(change_path: str, path: str) -> bool:
    target = "state." + ".".join(f"[{p}]" if isinstance(p, int) else p for p in path_parts(path)).replace(".[", "[")
    return change_path == target or change_path.startswith(target + ".") or change_path.startswith(target + "[")


def _secret_rules(redactor: Any, value: Any) -> list[str]:
    before = redactor.fired
    try:
        redactor.value(value)
    except Exception:  # a value the redactor cannot walk is not this check's business
        return []
    after = redactor.fired
    return [r for r in after if after[r] > before.get(r, 0)]


def _structural(trace: Trace, trial: int, redactor: Any) -> list[Violation]:
    out: list[Violation] = []
    for s in _tool_calls(trace):
        name = s.data.get("tool_name")
        args = _arguments(s)
        if not isinstance(name, str) or not name.strip():
            out.append(Violation(STRUCTURAL_TOOL, "structural", f"tool span {s.name!r} has no tool name", s.span_id, trial))
        elif not isinstance(args, dict):
            out.append(Violation(STRUCTURAL_TOOL, "structural",
                                 f"call of {name} has arguments that are {kind_name(args)}, not an object", s.span_id, trial))
    spans = [(s, s.data.get("output")) for s in _tool_calls(trace)]
    answer, holder = final_answer(trace)
    if answer is not None and holder is not None:
        spans.append((holder, answer))
    for s, value in spans:
        if value is None:
            continue
        fired = _secret_rules(redactor, value)
        if fired:
            what = s.tool_name or s.name
            out.append(Violation(STRUCTURAL_SECRET, "structural",
                                 f"the output of {what} holds a secret-like value ({', '.join(fired)}); it must be "
                                 "redacted before it is written", s.span_id, trial))
    return out


def _check_clause(clause: Clause, trace: Trace, trial: int, final_state: Any) -> list[Violation] | None:
    """Violations of one clause in one run; None when it cannot be checked (no fixture state)."""
    layer = layer_of(clause)
    root = _root(trace)
    root_id = root.span_id if root is not None else None
    calls = _tool_calls(trace)

    def v(message: str, span_id: str | None) -> Violation:
        return Violation(clause.id, layer, message, span_id, trial)

    if isinstance(clause, MustCall):
        if _calls_matching(calls, clause.tool, clause.args):
            return []
        what = clause.tool + (f" with {_short(clause.args)}" if clause.args else "")
        seen = [s for s in calls if s.tool_name == clause.tool]
        extra = f" ({len(seen)} call(s) of {clause.tool} with other arguments)" if seen else ""
        return [v(f"required call {what} never made{extra}", root_id)]
    if isinstance(clause, ForbidCall):
        return [v(f"forbidden call {clause.tool} {_short(canonicalize(s.data.get('arguments')))}", s.span_id)
                for s in _calls_matching(calls, clause.tool, clause.args)]
    if isinstance(clause, MaxCalls):
        made = _calls_matching(calls, clause.tool, None)
        if len(made) <= clause.max:
            return []
        return [v(f"{clause.tool} called {len(made)} times, at most {clause.max} allowed", made[clause.max].span_id)]
    if isinstance(clause, Order):
        befores = [s.seq for s in calls if s.tool_name == clause.before]
        afters = [s for s in calls if s.tool_name == clause.after]
        if not befores or not afters:
            return []
        first_before = min(befores)
        early = [s for s in afters if s.seq < first_before]
        return [v(f"{clause.after} called before any {clause.before}", early[0].span_id)] if early else []
    if isinstance(clause, SuccessRequires):
        answer, holder = final_answer(trace)
        if answer is None or holder is None or not re.search(clause.claim, answer):
            return []
        claim_seq = holder.seq if holder.parent_id is not None else max((s.seq for s in trace.spans), default=0) + 1
        evidence = [s for s in calls if s.tool_name == clause.tool and s.seq < claim_seq and s.status is not Status.ERROR
                    and (clause.output is None or subset_match(clause.output, s.data.get("output")))]
        if evidence:
            return []
        need = f"a successful {clause.tool}" + (f" with output {_short(clause.output)}" if clause.output is not None else "")
        return [v(f"the final answer claims success (/{clause.claim}/) without {need} before it", holder.span_id)]
    assert isinstance(clause, FinalState)
    parts = path_parts(clause.path)
    if not clause.unchanged and parts and parts[0] == OUTPUT_PATH and not (
            isinstance(final_state, Mapping) and OUTPUT_PATH in final_state):
        # the run's own output (the root span's): checked in every run, fixture state or none
        output = root.data.get("output", _MISSING) if root is not None else _MISSING
        actual = _lookup(output, list(parts[1:]))
        if actual is not _MISSING and canonicalize(actual) == canonicalize(clause.equals):
            return []
        got = "absent" if actual is _MISSING else _short(actual)
        return [v(f"the run's {clause.path} is {got}, expected {_short(clause.equals)}", root_id)]
    if clause.unchanged:
        summary = _summary(trace)
        changes = summary.get("changes") if summary is not None else None
        if not isinstance(changes, list):
            return None
        bad = [c for c in changes if isinstance(c, Mapping) and isinstance(c.get("path"), str)
               and _change_under(c["path"], clause.path)]
        out = []
        for c in bad:
            by = c.get("by") if isinstance(c.get("by"), Mapping) else {}
            out.append(v(f"{c['path'][len('state.'):]} changed by {by.get('tool', 'a write')} "
                         f"({_short(c.get('before'))} -> {_short(c.get('after'))}); it must stay unchanged",
                         by.get("span_id") or root_id))
        return out
    if final_state is None:
        return None
    actual = _lookup(final_state, clause.path)
    if actual is not _MISSING and canonicalize(actual) == canonicalize(clause.equals):
        return []
    got = "absent" if actual is _MISSING else _short(actual)
    return [v(f"final state {clause.path} is {got}, expected {_short(clause.equals)}", root_id)]


def check(contract: Contract, runs: Sequence[Trace], *, final_states: Sequence[Any] | None = None) -> ContractResult:
    """Check runs (one per trial) against a contract, layer by layer, then the trials thresholds.

    Args:
        contract: The contract.
        runs: The runs to judge (replays of the case, one per trial); at least one.
        final_states: The fixture's final state of each run (fixture mode); default: each run's
            root span ``replay.summary.final_state``. A run without one leaves its ``final_state``
            ``equals`` clauses unchecked (noted), never violated.

    Returns:
        The ContractResult: a clause fails when it holds in fewer trials than it needs (every
        trial for safety and structural clauses, ``trials.needed(len(runs))`` for soft ones); the
        violations of every failed clause are listed, each with its span and trial.

    Raises:
        ValueError: ``runs`` is empty, or ``final_states`` has another length.
    """
    from tracetui.core.harness.redact import Redactor

    if not runs:
        raise ValueError("check() needs at least one run")
    if final_states is not None and len(final_states) != len(runs):
        raise ValueError(f"final_states has {len(final_states)} entries for {len(runs)} runs")
    n = len(runs)
    notes: list[str] = []
    soft_needed = contract.trials.needed(n)
    if n != contract.trials.count:
        notes.append(f"{n} trial(s) checked, the contract asks for {contract.trials.count}: soft clauses need "
                     f"{soft_needed} of {n}")
    redactor = Redactor(os.urandom(32), rules=SECRET_RULES)
    per_trial: list[dict[str, list[Violation] | None]] = []
    for i, trace in enumerate(runs, start=1):
        state = final_states[i - 1] if final_states is not None else final_state_of(trace)
        found: dict[str, list[Violation] | None] = {STRUCTURAL_TOOL: [], STRUCTURAL_SECRET: []}
        for viol in _structural(trace, i, redactor):
            found[viol.clause_id].append(viol)  # type: ignore[union-attr]
        for layer in LAYERS[1:]:
            for clause in contract.clauses():
                if layer_of(clause) == layer:
                    found[clause.id] = _check_clause(clause, trace, i, state)
        per_trial.append(found)
    tallies: list[ClauseResult] = []
    violations: list[Violation] = []
    specs: list[tuple[str, str, bool]] = [(STRUCTURAL_TOOL, "structural", True), (STRUCTURAL_SECRET, "structural", True)]
    ordered = [c for layer in LAYERS[1:] for c in contract.clauses() if layer_of(c) == layer]
    specs += [(c.id, layer_of(c), is_safety(c)) for c in ordered]
    for cid, layer, safety in specs:
        results = [t[cid] for t in per_trial]
        checked = [r for r in results if r is not None]
        needed = n if safety else soft_needed
        if len(checked) < n:
            notes.append(f"{cid}: not checked in {n - len(checked)} of {n} trial(s): the run has no fixture state "
                         "(run the case in fixture mode)")
        if not checked:
            tallies.append(ClauseResult(cid, layer, safety, 0, 0, needed, checked=False))
            continue
        needed = min(needed, len(checked))
        held = sum(1 for r in checked if not r)
        tally = ClauseResult(cid, layer, safety, held, len(checked), needed)
        tallies.append(tally)
        if not tally.passed:
            for r in checked:
                violations.extend(r)
    violations.sort(key=lambda v: (v.trial, LAYERS.index(v.layer)))
    return ContractResult(all(t.passed for t in tallies), violations, tallies, n, notes)
