"""docs/triage.md, ``truncated_output``: when a value looks cut (``triage.truncation``), one test per rule (issue 25:
the survivors of ``scripts/mutation.py truncation run``, tests/mutation_equivalents.md)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from tracetui.core.triage.truncation import scan, truncation, uncut_prefix

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
    listed: Any = {"output_truncated": True}
    for depth in range(70):
        listed = [listed]
        if depth == 39:
            assert truncation(listed) == f"at {'[0]' * 40}: {STOPPED}"
    assert truncation(listed) == STOPPED  # lists count as levels too


def test_each_recorder_flag_says_what_it_is() -> None:
    """A stub needs ``truncated: true`` with a preview or the original type (either); a byte count must be above 0,
    in either spelling; ``is_truncated`` must be true."""
    stub = "replaced by a truncation stub (truncated: true, with a preview), as the OpenAI Agents SDK does"
    assert truncation({"truncated": True, "preview": "{"}) == stub
    assert truncation({"truncated": True, "original_type": "dict"}) == stub
    assert truncation({"truncated": True, "data": "{}"}) is None
    assert truncation({"v": "abc", "truncatedByteCount": 1}) == "truncatedByteCount is 1: 1 bytes were cut"
    assert truncation({"v": "abc", "truncated_byte_count": 1_200}) == (
        "truncated_byte_count is 1,200: 1,200 bytes were cut")
    assert truncation({"v": "abc", "truncated_byte_count": True}) is None
    assert truncation({"log": {"is_truncated": True}}) == "at .log: is_truncated is true"
    assert truncation({"log": {"is_truncated": False}}) is None


def test_json_cut_is_json_whose_parse_fails_at_the_end_of_the_input_from_two_characters_on() -> None:
    """A string cut right after a control character still fails at its end (trailing whitespace aside); a failure
    before the end (a trailing comma, content after the document) is not a cut; one character is not JSON."""
    assert truncation('{"a": "first line\n') == "JSON cut mid-value (18 characters; the parser reached the end of input)"
    assert truncation("[1") == "JSON cut mid-value (2 characters; the parser reached the end of input)"
    assert truncation("[") is None and truncation("[1,]") is None and truncation('{"a": 1} x') is None


def test_a_marker_in_a_long_string_is_looked_for_in_its_first_512_and_last_1024_characters() -> None:
    """Lower or upper case, at the head or the tail; not in the middle. A string of 4,096 characters or fewer is
    looked at whole."""
    body = "x" * 5000 + "."
    assert truncation("<truncated 512 chars> " + body) == "carries the truncation marker '<truncated 512 chars>'"
    assert truncation("[TRUNCATED] " + body) == "carries the truncation marker '[TRUNCATED]'"
    assert truncation(body + " ...[truncated]") == "carries the truncation marker '...[truncated]'"
    assert truncation(body + " [TRUNCATED]") == "carries the truncation marker '[TRUNCATED]'"
    assert truncation("x" * 600 + " [TRUNCATED] " + body) is None  # the middle of a long string
    assert truncation("x" * 2000 + " [TRUNCATED] " + body + " truncated") is None  # the tail's word is no marker
    whole = "x" * 2000 + " [TRUNCATED] " + "x" * 2082 + "."
    assert len(whole) == 4096 and truncation(whole) == "carries the truncation marker '[TRUNCATED]'"


def test_a_cap_is_named_by_the_first_source_the_table_lists_for_it() -> None:
    def named(n: int) -> str:
        why = truncation("x" * n)
        assert why is not None
        return why.split("(", 1)[1].split("), ending", 1)[0]

    assert named(256) == "Google Cloud Trace v2 span attribute values"
    assert named(1000) == "MLflow trace request/response previews"
    assert named(1024) == "Sentry Python SDK max_value_length default before 2.34"
    assert named(2048) == "Application Insights request URL max length"
    assert named(10000) == "Elastic APM long_field_max_length default"


def test_the_uncut_prefix_drops_what_a_truncator_appended() -> None:
    assert uncut_prefix("the first part ...[truncated]") == "the first part "
    assert uncut_prefix("the first part [... 300 chars truncated ...] the end") == "the first part "
    assert uncut_prefix("the first part...") == "the first part"
    assert uncut_prefix("the first part…") == "the first part"
    assert uncut_prefix("...the first part") == "...the first part" and uncut_prefix("…the part") == "…the part"


def test_a_string_cut_at_a_cap_names_the_cap_and_shows_its_last_12_characters() -> None:
    """Mid-word or mid-sentence at a cap; ending with an ellipsis at a cap; or a cap plus an appended ``...`` / ``…``.
    A string ending with ``...`` at another length is not cut."""
    sentry = "a known exporter cap (Sentry Python SDK max_value_length default before 2.34)"
    text = ("abcdefghijklmnopqrstuvwxyz " * 40)[:1023] + ","
    assert text[-13:] == "mnopqrstuvwx,"
    assert truncation(text) == f"1,024 characters, {sentry}, ending mid-sentence ('nopqrstuvwx,')"
    worded = text[:1023] + "Q"
    assert truncation(worded) == f"1,024 characters, {sentry}, ending mid-word ('nopqrstuvwxQ')"
    assert truncation(text[:1023] + "…") == f"1,024 characters, {sentry}, ending with an ellipsis"
    assert truncation(text + "…") == f"1,025 characters: {sentry} plus an appended '…'"
    assert truncation(text + "...") == f"1,027 characters: {sentry} plus an appended '...'"
    assert truncation("and so on...") is None and truncation("x" * 1022 + "…") is None


def test_json_cut_after_leading_whitespace_counts_and_a_quote_is_not_json_to_cut() -> None:
    assert truncation(' \n {"a": ') == "JSON cut mid-value (9 characters; the parser reached the end of input)"
    assert truncation(' {"a": ') == "JSON cut mid-value (7 characters; the parser reached the end of input)"
    assert truncation('"he said so') is None


def test_without_any_json_rule_only_a_string_of_a_caps_length_is_parsed_and_without_markers_none_counts() -> None:
    """``scan``'s switches as ``replayability`` sets them per field."""
    cut = '{"a": '
    assert scan(cut, markers=True, caps=True, json_any=False) is None
    at_cap = '{"a": "' + "x" * 1017
    assert scan(at_cap, markers=True, caps=True, json_any=False) is not None
    assert scan("done ...[truncated]", markers=False, caps=True, json_any=True) is None
    assert scan({"a": "done ...[truncated]"}, markers=False, caps=True, json_any=True) is None


def test_nested_values_are_all_walked_lists_tuples_other_mappings_and_str_subclasses_included() -> None:
    """A lower-case marker in a short nested string; a marker at the tail of a long one; a flag inside a list inside
    an object, or inside a mapping of another type; a str subclass examined like a str, nested; a string passed over
    by ``skip`` leaves the rest of its container looked at."""
    assert truncation({"a": "some text ...[truncated]"}) == "at .a: carries the truncation marker '...[truncated]'"
    assert truncation({"a": "x" * 5000 + " [truncated]"}) == "at .a: carries the truncation marker '[truncated]'"
    assert truncation({"a": [{"b": 1, "c": None, "d": 1.5, "e": True, "f": {"output_truncated": True}}]}) == (
        f"at .a[0].f: {STOPPED}")
    assert truncation(("ok", {"output_truncated": True})) == f"at [1]: {STOPPED}"
    assert truncation({"a": MappingProxyType({"b": {"output_truncated": True}})}) == f"at .a.b: {STOPPED}"

    class Text(str):
        pass

    assert truncation({"a": Text('{"b": ')}) == (
        "at .a: JSON cut mid-value (6 characters; the parser reached the end of input)")
    assert truncation({"a": Text("done ...[truncated]")}) == "at .a: carries the truncation marker '...[truncated]'"
    assert truncation({"a": Text("x" * 1024 + "...")}) is not None
    assert truncation({"a": Text("x" * 1024)}) is None  # nested: a cap's length alone is not evidence
    assert scan(["cut {", {"output_truncated": True}], markers=True, caps=True, json_any=True,
                skip={"cut {"}) is not None
