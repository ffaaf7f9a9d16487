"""Search and `:` jump compare NFC-normalised, case-folded text (issue 23)."""

from __future__ import annotations

import pytest

from tests.builders import write_pair
from tracetui.core.diff import diff_traces
from tracetui.core.readers import read_trace
from tracetui.tui.search import SearchIndex, SpanLookupError, find_span, fold_text


def test_fold_text_equates_canonically_equal_text_in_any_case() -> None:
    assert fold_text("Cafe\u0301") == fold_text("café") == fold_text("CAFÉ")
    assert fold_text("STRASSE") == fold_text("straße")


def _diff(tmp_path, name: str, span_id: str):  # type: ignore[no-untyped-def]
    def build(t, side):  # type: ignore[no-untyped-def]
        root = t.add("agent", "root")
        t.add("tool", "lookup", parent=root, arguments={"city": "Cafe\u0301 de Flore"}, span_id=span_id)

    original, replay = write_pair(tmp_path, build)
    return diff_traces(read_trace(original), read_trace(replay))


def test_search_finds_decomposed_text_typed_composed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    diff = _diff(tmp_path, "x", "s-1")
    index = SearchIndex(diff)
    assert index.find("café") == [1]
    assert index.find("CAFÉ DE") == [1]
    assert index.find("cafe de") == []  # no accent is another word


def test_jump_matches_a_canonically_equal_id(tmp_path) -> None:  # type: ignore[no-untyped-def]
    diff = _diff(tmp_path, "x", "Cafe\u0301-1")
    assert find_span(diff, "café-1").row == 1
    assert find_span(diff, "CAFÉ").row == 1
    with pytest.raises(SpanLookupError):
        find_span(diff, "cafe-1")
