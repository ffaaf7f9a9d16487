"""Golden cases: a redacted fixture, a contract and provenance per confirmed failure (docs/golden.md).

``contract`` parses and checks contracts, ``runner`` finds cases and runs them (replaying an agent
with the harness, or checking a given replay). Names resolve lazily (PEP 562), like
``tracetui.core``.
"""

from __future__ import annotations

from tracetui.core.lazy import lazy_getattr

_EXPORTS = {
    "GoldenCaseError": "tracetui.core.golden.contract",
    "Contract": "tracetui.core.golden.contract",
    "MustCall": "tracetui.core.golden.contract",
    "ForbidCall": "tracetui.core.golden.contract",
    "MaxCalls": "tracetui.core.golden.contract",
    "Order": "tracetui.core.golden.contract",
    "SuccessRequires": "tracetui.core.golden.contract",
    "FinalState": "tracetui.core.golden.contract",
    "Trials": "tracetui.core.golden.contract",
    "Violation": "tracetui.core.golden.contract",
    "ContractResult": "tracetui.core.golden.contract",
    "load_contract": "tracetui.core.golden.contract",
    "loads_contract": "tracetui.core.golden.contract",
    "dump_contract": "tracetui.core.golden.contract",
    "check": "tracetui.core.golden.contract",
    "Case": "tracetui.core.golden.runner",
    "CaseResult": "tracetui.core.golden.runner",
    "OUTCOMES": "tracetui.core.golden.runner",
    "find_cases": "tracetui.core.golden.runner",
    "load_case": "tracetui.core.golden.runner",
    "run_case": "tracetui.core.golden.runner",
    "run_cases": "tracetui.core.golden.runner",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
