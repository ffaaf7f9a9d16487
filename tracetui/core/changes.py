"""Typed divergences and the field changes that explain them (docs/format.md)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["ABSENT", "MAX_FIELDS", "DivergenceType", "FieldChange"]


class DivergenceType(str, Enum):
    """What differs between an original span and its replay (docs/format.md)."""

    UNRECORDED_CALL = "unrecorded_call"
    """A tool or retrieval call only in the replay: the recording has no match."""
    MISSING_CALL = "missing_call"
    """A tool or retrieval call only in the original: the replay never made it."""
    ARGS_MISMATCH = "args_mismatch"
    """Tool/retrieval/memory inputs differ (arguments, effect, version, query...)."""
    OUTPUT_MISMATCH = "output_mismatch"
    """Tool/retrieval/memory/agent outputs differ."""
    STATUS_MISMATCH = "status_mismatch"
    """``status`` or ``error_type`` differ."""
    INPUT_MISMATCH = "input_mismatch"
    """LLM inputs (model, params, messages...) or agent/other input differ."""
    DECISION_MISMATCH = "decision_mismatch"
    """An LLM answered differently to equal inputs, or a decision span differs."""
    EXTRA_SPAN = "extra_span"
    """A span of another kind only in the replay."""
    MISSING_SPAN = "missing_span"
    """A span of another kind only in the original."""


class _Absent:
    """The value of a field one side does not have at all — not a recorded ``null``."""

    __slots__ = ()
    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
"""Stands for a field (or key, or list item) missing on one side of a ``FieldChange``."""


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One semantic field that differs between the two sides of a pair.

    Attributes:
        path: Where, down to the differing leaf: ``status``,
            ``tool.arguments.customer_id``, ``llm.messages[2].content``,
            ``tool.output["odd key"]``. The first segment is the span kind's
            section (or a common field).
        original: The original side's value (canonical form); ``ABSENT`` when
            that side has no such field, key or item (``None`` is a recorded null).
        replay: The replay side's value, likewise.
    """

    path: str
    original: Any
    replay: Any


MAX_FIELDS = 20
"""Most ``FieldChange``s reported for one pair; values themselves are never cut."""
