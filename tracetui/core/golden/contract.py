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

The format lives in ``golden.clauses``, the checker in ``golden.checking``; this module names
both, as the docs and callers import them.
"""
from __future__ import annotations

from tracetui.core.golden.checking import (
    ClauseResult,
    ContractResult,
    Violation,
    check,
    final_answer,
    final_state_of,
    subset_match,
)
from tracetui.core.golden.clauses import (
    LAYERS,
    SAFETY_SECTIONS,
    SCHEMA,
    SECRET_RULES,
    SECTIONS,
    STRUCTURAL_SECRET,
    STRUCTURAL_TOOL,
    TOP_KEYS,
    Clause,
    Contract,
    FinalState,
    ForbidCall,
    GoldenCaseError,
    MaxCalls,
    MustCall,
    Order,
    SuccessRequires,
    Trials,
    contract_dict,
    dump_contract,
    is_safety,
    layer_of,
    load_contract,
    loads_contract,
    section_of,
)

__all__ = [
    "LAYERS", "SAFETY_SECTIONS", "SCHEMA", "SECRET_RULES", "SECTIONS", "STRUCTURAL_SECRET", "STRUCTURAL_TOOL",
    "TOP_KEYS", "Clause", "ClauseResult", "Contract", "ContractResult", "FinalState", "ForbidCall",
    "GoldenCaseError", "MaxCalls", "MustCall", "Order", "SuccessRequires", "Trials", "Violation", "check",
    "contract_dict", "dump_contract", "final_answer", "final_state_of", "is_safety", "layer_of", "load_contract",
    "loads_contract", "section_of", "subset_match",
]
