"""The contract format: schema, clause types, loading with validation, and writing back (docs/golden.md "Contract").

``loads_contract`` / ``load_contract`` parse and validate ``contract.yaml`` (every bad field is a
``GoldenCaseError`` naming the file and the field path); ``dump_contract`` writes it back in a
stable order. The checker is ``golden.checking``; both are importable from ``golden.contract``.
"""


from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from tracetui.core.errors import TracetuiError

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
    run's final state (fixture mode), except an ``equals`` path whose first key is ``output``: the
    run's own output (the root span's), checked on every run."""

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
            raise GoldenCaseError(path, f"must be a mapping ({{{', '.join(allowed)}}}), not {kind_name(raw)}", where=where)
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
            raise self.fail(key, f"must be a non-empty string, not {kind_name(value)}")
        return value

    def mapping(self, key: str) -> dict[str, Any] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping of field -> expected value, not {kind_name(value)}")
        return {str(k): v for k, v in value.items()}

    def integer(self, key: str, *, minimum: int) -> int:
        if key not in self.raw or self.raw[key] is None:
            raise self.fail(key, "missing")
        value = self.raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"must be an integer >= {minimum}, not {value!r}")
        return value


def kind_name(value: Any) -> str:
    """What ``value`` is, in words for an error message (``a mapping``, ``null``)."""
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
        path_parts(path)
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


class _ContractLoader(yaml.SafeLoader):
    """YAML's safe loader without its timestamp rule: ``date: 2026-11-06`` stays the text written, as the recorded
    arguments and outputs it is compared with hold it (a ``datetime.date`` never equals a JSON string)."""


_ContractLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in rules if tag != "tag:yaml.org,2002:timestamp"]
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def loads_contract(text: str, path: str = "contract.yaml") -> Contract:
    """Parse a contract from YAML text; ``path`` names it in errors. A date or time written unquoted
    (``date: 2026-11-06``) is read as the text written, like the recorded values it is compared with.

    Raises:
        GoldenCaseError: not YAML, not a mapping, a wrong schema, an unknown section (the message
            lists the valid ones), a bad clause field (``must_call[1].tool: missing``), a duplicate id.
    """
    try:
        raw = yaml.load(text, Loader=_ContractLoader)  # noqa: S506 - a SafeLoader, timestamps left as text
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f" (line {mark.line + 1})" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())  # one line, no raw newlines
        raise GoldenCaseError(path, f"not valid YAML{loc}: {problem}") from None
    if not isinstance(raw, Mapping):
        raise GoldenCaseError(path, f"must be a YAML mapping with `schema: {SCHEMA}` and clause sections, "
                                    f"not {kind_name(raw)}")
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
            raise GoldenCaseError(path, f"must be a list of clauses, not {kind_name(items)}", where=section)
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


def path_parts(path: str) -> list[str | int]:
    """A state path (``confirmations[0].channel``) as keys and list indexes.

    Raises:
        ValueError: not a state path.
    """
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
