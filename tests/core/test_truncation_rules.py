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
