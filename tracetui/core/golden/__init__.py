"""Golden cases: a redacted fixture, a contract and provenance per confirmed failure (docs/golden.md).

``clauses`` is the contract format (parse, validate, write), ``checking`` judges runs against a
contract (``contract`` names both), ``runner`` finds cases and runs them (replaying an agent with
the harness, or checking a given replay), ``derive`` proposes a contract from a failure and
``promote`` writes it as a new case. Names resolve lazily (PEP 562), like
``tracetui.core``.
"""

from __future__ import annotations

from tracetui.core.lazy import lazy_getattr

_BY_MODULE = {
    "tracetui.core.golden.clauses": (
        "GoldenCaseError", "Contract", "MustCall", "ForbidCall", "MaxCalls", "Order", "SuccessRequires",
        "FinalState", "Trials", "load_contract", "loads_contract", "dump_contract",
    ),
    "tracetui.core.golden.checking": ("Violation", "ContractResult", "check"),
    "tracetui.core.golden.runner": (
        "Case", "CaseResult", "OUTCOMES", "find_cases", "load_case", "run_case", "run_cases",
    ),
}
"""Defining module -> the public names it gives this package."""
_EXPORTS = {name: module for module, names in _BY_MODULE.items() for name in names}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
