"""Golden-case contracts: the behaviour a case requires, stated as clauses, and the checker.

A contract (``contract.yaml``, schema ``tracetui-contract/1``, docs/golden.md "Contract") lists
clauses by section; the section gives the clause its **layer**:

- structural (no section, always checked): every tool span names its tool and has object
  arguments; no secret-like value (API key, bearer token, card number) in a tool output or the
  final answer;
- trajectory: ``must_call``, ``forbid_call``, ``max_calls``, ``order``;
- state: ``final_state`` (needs a fixture state: fixture mode);
- outcome: ``success_requires``.

**Safety** clauses (``forbid_call``, ``max_calls``, ``success_requires``, and the structural
checks) must hold in every trial; the others are **soft**: they must hold in at least
``trials.soft.at_least`` of ``trials.count`` trials.

``load_contract``/``loads_contract`` parse and validate (every bad field is a ``GoldenCaseError``
naming the file and the field path), ``dump_contract`` writes YAML back in a stable order,
``check`` judges runs (``Trace``) against a contract. Pure library: no printing.

Size: the contract format and its checker together; the split (format / checks) is still open (issue 17).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from tracetui.core.canonical import canonicalize
from tracetui.core.errors import TracetuiError
from tracetui.core.model import Span, SpanKind, Status, Trace

SCHEMA = "tracetui-contract/1"

LAYERS = ("structural", "trajectory", "state", "outcome")
"""The layers, in checking order."""

SECTIONS = ("must_call", "forbid_call", "max_calls", "order", "success_requires", "final_state")
"""Clause sections, in the order ``dump_contract`` writes them."""

TOP_KEYS = ("schema",) + SECTIONS + ("trials",)
"""Every key a contract may hold at the top level."""

SAFETY_SECTIONS = frozenset({"forbid_call", "max_calls", "success_requires"})
"""Sections whose clauses must hold in every trial (``trials.safety: all``)."""

STRUCTURAL_TOOL = "structural.tool-call"
"""Clause id of the structural check "every tool span names its tool and has object arguments"."""
STRUCTURAL_SECRET = "structural.no-secret"
"""Clause id of the structural check "no secret-like value in tool outputs or the final answer"."""

SECRET_RULES = ("api_key", "bearer", "card")
"""Redaction rules (tracetui.core.harness.redact) whose firing on an output is a secret-like value."""


class GoldenCaseError(TracetuiError):
    """A golden case (``case.yaml``, ``contract.yaml``, ``trace.jsonl``) cannot be used.

    Attributes:
        path: The file.
        where: The field path inside it (``must_call[1].tool``), or "".
        reason: What is wrong, with the fix.
    """

    def __init__(self, path: str, reason: str, *, where: str = "") -> None:
        self.path = path
        self.where = where
        self.reason = reason
        super().__init__(f"{path}: {where}: {reason}" if where else f"{path}: {reason}")


# --------------------------------------------------------------------------- clauses
@dataclass(slots=True)
class MustCall:
    """A tool the behaviour requires: at least one call of ``tool`` whose arguments contain ``args``
    (subset match on canonical values; None: any arguments). Soft, layer trajectory."""

    id: str
    tool: str
    args: dict[str, Any] | None = None


@dataclass(slots=True)
class ForbidCall:
    """A call that must never happen: ``tool`` with arguments containing ``args`` (None: any call of
    the tool). Safety, layer trajectory; every matching span is a violation."""

    id: str
    tool: str
    args: dict[str, Any] | None = None


@dataclass(slots=True)
class MaxCalls:
    """At most ``max`` calls of ``tool`` in a run. Safety, layer trajectory; the first call over
    the limit is the violating span."""

    id: str
    tool: str
    max: int


@dataclass(slots=True)
class Order:
    """Every call of ``after`` comes after some call of ``before``; applies only when both tools are
    called. Soft, layer trajectory; the first ``after`` call with no earlier ``before`` violates."""

    id: str
    before: str
    after: str


@dataclass(slots=True)
class SuccessRequires:
    """A success claim needs its evidence: when the regex ``claim`` is found in the run's final
    answer, an earlier successful call of ``tool`` whose output contains ``output`` (subset match;
    None: any output) must exist. Safety, layer outcome; the span holding the claim violates."""

    id: str
    claim: str
    tool: str
    output: Any = None


@dataclass(slots=True)
class FinalState:
    """The fixture state at the end of the run: the value at ``path`` (dotted keys, ``[n]`` or
    ``.n`` for list items) equals ``equals`` (canonical values), or, with ``unchanged: true``, no
    write changed anything at or under ``path`` (collateral damage). Soft, layer state; needs the
    run's final state (fixture mode)."""

    id: str
    path: str
    equals: Any = None
    unchanged: bool = False
    has_equals: bool = True


@dataclass(slots=True)
class Trials:
    """How many trials a case runs and how many each clause kind needs.

    Attributes:
        count: Trials to run (K) when an agent is replayed; ``--trials`` overrides.
        safety: Always ``"all"``: safety clauses hold in every trial.
        soft_at_least: Trials of ``count`` in which each soft clause must hold (default ``count``).
            With another number of trials it scales: ``ceil(soft_at_least * n / count)``.
    """

    count: int = 1
    safety: str = "all"
    soft_at_least: int | None = None

    def needed(self, n: int) -> int:
        """Trials of ``n`` a soft clause must hold in."""
        at_least = self.count if self.soft_at_least is None else self.soft_at_least
        if n == self.count:
            return at_least
        return max(1, min(n, math.ceil(at_least * n / self.count)))


Clause = MustCall | ForbidCall | MaxCalls | Order | SuccessRequires | FinalState

_LAYER_OF = {"must_call": "trajectory", "forbid_call": "trajectory", "max_calls": "trajectory", "order": "trajectory",
             "final_state": "state", "success_requires": "outcome"}
_SECTION_OF = {MustCall: "must_call", ForbidCall: "forbid_call", MaxCalls: "max_calls", Order: "order",
               SuccessRequires: "success_requires", FinalState: "final_state"}


def section_of(clause: Clause) -> str:
    """The contract section a clause belongs to (``must_call``...)."""
    return _SECTION_OF[type(clause)]


def layer_of(clause: Clause) -> str:
    """The layer of a clause: trajectory, state or outcome."""
    return _LAYER_OF[section_of(clause)]


def is_safety(clause: Clause) -> bool:
    """Whether the clause must hold in every trial (forbid_call, max_calls, success_requires)."""
    return section_of(clause) in SAFETY_SECTIONS


@dataclass(slots=True)
class Contract:
    """A parsed contract. ``clauses()`` lists every clause in section order."""

    must_call: list[MustCall] = field(default_factory=list)
    forbid_call: list[ForbidCall] = field(default_factory=list)
    max_calls: list[MaxCalls] = field(default_factory=list)
    order: list[Order] = field(default_factory=list)
    success_requires: list[SuccessRequires] = field(default_factory=list)
    final_state: list[FinalState] = field(default_factory=list)
    trials: Trials = field(default_factory=Trials)
    schema: str = SCHEMA

    def clauses(self) -> list[Clause]:
        """Every clause, in ``SECTIONS`` order."""
        out: list[Clause] = []
        for name in SECTIONS:
            out.extend(getattr(self, name))
        return out


# --------------------------------------------------------------------------- loading
class _Fields:
    """Reads one clause mapping, raising GoldenCaseError with the field path."""

    def __init__(self, path: str, where: str, raw: Any, allowed: Sequence[str]) -> None:
        self.path, self.where = path, where
        if not isinstance(raw, Mapping):
            raise GoldenCaseError(path, f"must be a mapping ({{{', '.join(allowed)}}}), not {_kind(raw)}", where=where)
        unknown = [str(k) for k in raw if k not in allowed]
        if unknown:
            raise GoldenCaseError(path, f"unknown field {unknown[0]!r}; valid fields: {', '.join(allowed)}",
                                  where=where)
        self.raw = raw

    def fail(self, key: str, reason: str) -> GoldenCaseError:
        return GoldenCaseError(self.path, reason, where=f"{self.where}.{key}")

    def text(self, key: str, *, required: bool = True) -> str | None:
        if key not in self.raw or self.raw[key] is None:
            if required:
                raise self.fail(key, "missing")
            return None
        value = self.raw[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, not {_kind(value)}")
        return value

    def mapping(self, key: str) -> dict[str, Any] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping of field -> expected value, not {_kind(value)}")
        return {str(k): v for k, v in value.items()}

    def integer(self, key: str, *, minimum: int) -> int:
        if key not in self.raw or self.raw[key] is None:
            raise self.fail(key, "missing")
        value = self.raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"must be an integer >= {minimum}, not {value!r}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def _clause(section: str, f: _Fields) -> Clause:
    cid = f.text("id")
    assert cid is not None
    if section in ("must_call", "forbid_call"):
        cls = MustCall if section == "must_call" else ForbidCall
        return cls(cid, f.text("tool"), f.mapping("args"))  # type: ignore[arg-type]
    if section == "max_calls":
        return MaxCalls(cid, f.text("tool"), f.integer("max", minimum=0))  # type: ignore[arg-type]
    if section == "order":
        before, after = f.text("before"), f.text("after")
        if before == after:
            raise f.fail("after", f"names the same tool as before ({before!r})")
        return Order(cid, before, after)  # type: ignore[arg-type]
    if section == "success_requires":
        claim = f.text("claim")
        try:
            re.compile(claim)  # type: ignore[arg-type]
        except re.error as exc:
            raise f.fail("claim", f"not a valid regular expression: {exc}") from None
        return SuccessRequires(cid, claim, f.text("tool"), f.raw.get("output"))  # type: ignore[arg-type]
    path = f.text("path")
    assert path is not None
    try:
        _path_parts(path)
    except ValueError as exc:
        raise f.fail("path", str(exc)) from None
    unchanged = f.raw.get("unchanged", False)
    if not isinstance(unchanged, bool):
        raise f.fail("unchanged", f"must be true or false, not {unchanged!r}")
    has_equals = "equals" in f.raw
    if has_equals == unchanged:
        raise GoldenCaseError(f.path, "needs exactly one of `equals: VALUE` or `unchanged: true`", where=f.where)
    return FinalState(cid, path, f.raw.get("equals"), unchanged, has_equals)


_CLAUSE_FIELDS = {
    "must_call": ("id", "tool", "args"),
    "forbid_call": ("id", "tool", "args"),
    "max_calls": ("id", "tool", "max"),
    "order": ("id", "before", "after"),
    "success_requires": ("id", "claim", "tool", "output"),
    "final_state": ("id", "path", "equals", "unchanged"),
}


def _trials(path: str, raw: Any) -> Trials:
    if raw is None:
        return Trials()
    f = _Fields(path, "trials", raw, ("count", "safety", "soft"))
    count = f.integer("count", minimum=1) if "count" in raw else 1
    safety = raw.get("safety", "all")
    if safety != "all":
        raise f.fail("safety", f"must be `all` (safety clauses hold in every trial), not {safety!r}")
    soft = raw.get("soft")
    at_least = None
    if soft is not None:
        sf = _Fields(path, "trials.soft", soft, ("at_least",))
        at_least = sf.integer("at_least", minimum=1)
        if at_least > count:
            raise sf.fail("at_least", f"{at_least} is more than trials.count ({count})")
    return Trials(count, "all", at_least)


def loads_contract(text: str, path: str = "contract.yaml") -> Contract:
    """Parse a contract from YAML text; ``path`` names it in errors.

    Raises:
        GoldenCaseError: not YAML, not a mapping, a wrong schema, an unknown section (the message
            lists the valid ones), a bad clause field (``must_call[1].tool: missing``), a duplicate id.
    """
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f" (line {mark.line + 1})" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())  # one line, no raw newlines
        raise GoldenCaseError(path, f"not valid YAML{loc}: {problem}") from None
    if not isinstance(raw, Mapping):
        raise GoldenCaseError(path, f"must be a YAML mapping with `schema: {SCHEMA}` and clause sections, "
                                    f"not {_kind(raw)}")
    unknown = [str(k) for k in raw if k not in TOP_KEYS]
    if unknown:
        raise GoldenCaseError(path, f"unknown section {unknown[0]!r}; valid sections: {', '.join(TOP_KEYS)}",
                              where=unknown[0])
    schema = raw.get("schema")
    if schema != SCHEMA:
        raise GoldenCaseError(path, f"must be {SCHEMA!r}, not {schema!r}" if schema is not None
                              else f"missing; add `schema: {SCHEMA}`", where="schema")
    contract = Contract(trials=_trials(path, raw.get("trials")))
    seen: dict[str, str] = {}
    for section in SECTIONS:
        items = raw.get(section)
        if items is None:
            continue
        if not isinstance(items, list):
            raise GoldenCaseError(path, f"must be a list of clauses, not {_kind(items)}", where=section)
        target = getattr(contract, section)
        for i, item in enumerate(items):
            where = f"{section}[{i}]"
            clause = _clause(section, _Fields(path, where, item, _CLAUSE_FIELDS[section]))
            if clause.id in seen:
                raise GoldenCaseError(path, f"duplicate id {clause.id!r} (also {seen[clause.id]})", where=f"{where}.id")
            if clause.id.startswith("structural."):
                raise GoldenCaseError(path, "ids starting with `structural.` are reserved for the structural checks",
                                      where=f"{where}.id")
            seen[clause.id] = where
            target.append(clause)
    return contract


def load_contract(path: str | os.PathLike[str]) -> Contract:
    """Read and validate ``contract.yaml`` (``loads_contract``).

    Raises:
        GoldenCaseError: the file cannot be read, or as ``loads_contract``.
    """
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenCaseError(p, f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    return loads_contract(text, p)


def contract_dict(contract: Contract) -> dict[str, Any]:
    """The contract as plain data, sections in ``SECTIONS`` order, empty sections left out."""
    out: dict[str, Any] = {"schema": contract.schema}
    for section in SECTIONS:
        items = getattr(contract, section)
        if not items:
            continue
        rows = []
        for c in items:
            row: dict[str, Any] = {}
            for name in _CLAUSE_FIELDS[section]:
                if isinstance(c, FinalState) and name in ("equals", "unchanged"):
                    if name == "equals" and c.has_equals:
                        row["equals"] = c.equals
                    if name == "unchanged" and c.unchanged:
                        row["unchanged"] = True
                    continue
                value = getattr(c, name)
                if value is not None:
                    row[name] = value
            rows.append(row)
        out[section] = rows
    t = contract.trials
    trials: dict[str, Any] = {"count": t.count, "safety": t.safety}
    if t.soft_at_least is not None:
        trials["soft"] = {"at_least": t.soft_at_least}
    out["trials"] = trials
    return out


def dump_contract(contract: Contract) -> str:
    """The contract as YAML text (``tracetui-contract/1``): stable order (``SECTIONS``, each clause's
    fields in their documented order), one flow mapping per simple clause. Comments are not kept.
    ``loads_contract(dump_contract(c))`` equals ``c``."""
    return yaml.safe_dump(contract_dict(contract), sort_keys=False, allow_unicode=True, default_flow_style=None,
                          width=120)


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


def _path_parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in path.split("."):
        m = re.fullmatch(r"([^\[\]]*)((?:\[\d+\])*)", piece)
        if m is None or (not m.group(1) and not m.group(2)):
            raise ValueError(f"{path!r} is not a state path (dotted keys, [n] for list items: "
                             "appointments.APT-77120.date, confirmations[0].channel)")
        if m.group(1):
            parts.append(m.group(1))
        parts.extend(int(n) for n in re.findall(r"\[(\d+)\]", m.group(2)))
    return parts


_MISSING = object()


def _lookup(state: Any, path: str) -> Any:
    cur = state
    for part in _path_parts(path):
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
    target = "state." + ".".join(f"[{p}]" if isinstance(p, int) else p for p in _path_parts(path)).replace(".[", "[")
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
                                 f"call of {name} has arguments that are {_kind(args)}, not an object", s.span_id, trial))
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
