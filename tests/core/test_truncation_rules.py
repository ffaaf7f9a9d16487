"""docs/triage.md, ``truncated_output``: when a value looks cut (``triage.truncation``), one test per rule (issue 25:
the survivors of ``scripts/mutation.py truncation run``, tests/mutation_equivalents.md)."""

from __future__ import annotations

from typing import Any

from tracetui.core.triage.truncation import truncation, uncut_prefix

STOPPED = "output_truncated is true: the recorder could not store it whole"


def nest(depth: int, leaf: Any, key: str = "k") -> Any:
    for _ in range(depth):
        leaf = {key: leaf}
    return leaf


def test_the_reason_names_the_path_to_the_cut_value_or_none_past_64_levels_or_at_the_top() -> None:
    """``at .a.b[1]: why``; a value cut at the top has no path; 65 levels deep at most, past that the path is left
    out, never replaced by the path of another, deeper branch."""
    assert truncation({"a": {"b": [1, {"output_truncated": True}]}}) == f"at .a.b[1]: {STOPPED}"
    assert truncation({"output_truncated": True}) == STOPPED
    assert truncation('{"a": ') == "JSON cut mid-value (6 characters; the parser reached the end of input)"
    assert truncation(nest(64, {"output_truncated": True})) == f"at {'.k' * 64}: {STOPPED}"
    assert truncation(nest(63, [{"output_truncated": True}])) == f"at {'.k' * 63}[0]: {STOPPED}"
    assert truncation(nest(65, {"output_truncated": True})) == f"at {'.k' * 65}: {STOPPED}"
    assert truncation(nest(66, {"output_truncated": True})) == STOPPED
    assert truncation(nest(65, [{"output_truncated": True}])) == STOPPED
    assert truncation({"a": nest(70, {"x": 1}), "b": {"output_truncated": True}}) == f"at .b: {STOPPED}"
