"""Rules of core/diff/jsonpaths.py: path steps, the lines a path takes, differing lines, kept lines, nested volatile fields.

Each expectation is written from the module's docstrings (a path is spelt as ``tracetui.core.values`` writes it; a
value is printed as JSON indented by 2, a string with line breaks raw; ``line_range`` runs from the key's line to
the closing bracket), on values built here.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from tracetui.core.diff.jsonpaths import (
    LINE_DIFF_MAX,
    Pretty,
    differing_lines,
    keep_lines,
    nested_volatile,
    parse_path,
    pretty_value,
    relative_path,
)

# --- parse_path / relative_path -----------------------------------------------------------------


@pytest.mark.parametrize(("suffix", "steps"), [
    ("", []),
    (".a", ["a"]),
    (".a.b", ["a", "b"]),
    (".aXb.X", ["aXb", "X"]),
    ("[0]", [0]),
    ("[12]", [12]),
    (".a[0]", ["a", 0]),
    ('.a[0]["b c"]', ["a", 0, "b c"]),
    ('["b c"].d', ["b c", "d"]),
    ('["x"][3]', ["x", 3]),
    ('["a\\"]b"]', ['a"]b']),  # the key is JSON-quoted: an escaped quote and a bracket inside are the key's
    ('["."]', ["."]),
    ('.a["b"][1].c', ["a", "b", 1, "c"]),
])
def test_a_suffix_spelt_as_a_path_gives_its_steps(suffix: str, steps: list[Any]) -> None:
    assert parse_path(suffix) == steps


@pytest.mark.parametrize("suffix", [
    "a",            # not opening with . or [
    ".",            # an empty key
    "..a",
    ".a.",
    ".a..b",
    "[x]",          # an index that is not digits
    "[-1]",
    "[]",
    "[1",           # never closed
    ".a[1",
    '["a"',         # a quoted key never closed by ]
    '["a"x]',
    '["a',          # not JSON
    '["a"].',
    "[0]x",
])
def test_a_suffix_not_spelt_as_a_path_gives_none(suffix: str) -> None:
    assert parse_path(suffix) is None


def test_a_path_inside_a_field_gives_its_steps_from_the_field() -> None:
    assert relative_path("llm.messages[0].content", "llm.messages") == [0, "content"]
    assert relative_path('tool.output["odd key"][2]', "tool.output") == ["odd key", 2]
    assert relative_path("tool.output.a", "tool.output") == ["a"]
    assert relative_path("llm.params", "llm.params") == []


def test_a_path_outside_the_field_gives_none() -> None:
    assert relative_path("llm.messagesX", "llm.messages") is None  # the field's name continues: another field
    assert relative_path("llm.params", "llm.messages") is None
    assert relative_path("llm", "llm.messages") is None
    assert relative_path("tool.output.", "tool.output") is None  # inside, but not spelt as a path


# --- pretty_value ---------------------------------------------------------------------------------


def test_a_value_is_printed_as_json_indented_by_two() -> None:
    p = pretty_value({"b": [1, {"c": None}], "a": True})
    assert p.is_json
    assert p.lines == ['{', '  "b": [', '    1,', '    {', '      "c": null', '    }', '  ],', '  "a": true', '}']
    assert p.value == {"b": [1, {"c": None}], "a": True}  # key order kept


def test_a_string_and_the_number_it_spells_stay_apart() -> None:
    assert pretty_value("404").lines == ['"404"']
    assert pretty_value(404).lines == ["404"]
    assert pretty_value("404").is_json and pretty_value(404).is_json


def test_json_strings_inside_are_shown_parsed_so_their_paths_exist() -> None:
    p = pretty_value({"x": '{"deep": [true]}', "k": "[1, 2]", "s": "a b"})
    assert p.is_json
    assert p.value == {"x": {"deep": [True]}, "k": [1, 2], "s": "a b"}
    assert p.lines == json.dumps(p.value, indent=2).split("\n")


def test_json_strings_are_parsed_whatever_other_strings_sit_beside_them() -> None:
    # strings opening with a space, a backslash and non-ASCII letters of several UTF-8 lead bytes
    others = {"c": "\\q", "d": " s", "e": "©", "f": "ᄀ", "g": "…", "h": "あ"}
    p = pretty_value({"a": '{"x": 1}', "b": "[1]", **others})
    assert p.value == {"a": {"x": 1}, "b": [1], **others}
    assert p.lines[1:4] == ['  "a": {', '    "x": 1', '  },']


def test_a_string_with_line_breaks_is_shown_raw_one_line_per_line() -> None:
    p = pretty_value("Dear customer,\nyour install is moved.\n")
    assert p == Pretty(["Dear customer,", "your install is moved.", ""], False, "Dear customer,\nyour install is moved.\n")


def test_a_string_with_line_breaks_holding_json_is_shown_as_that_json() -> None:
    p = pretty_value('{\n  "a": "x y",\n  "b": [1]\n}')
    assert p.is_json
    assert p.value == {"a": "x y", "b": [1]}
    assert p.lines == ['{', '  "a": "x y",', '  "b": [', '    1', '  ]', '}']


def test_a_json_quoted_text_without_raw_line_breaks_is_shown_as_the_string_it_is() -> None:
    quoted = json.dumps("first line\nsecond line")  # only objects and arrays inside strings are parsed
    assert pretty_value(quoted) == Pretty([json.dumps(quoted)], True, quoted)


def test_integers_beyond_64_bits_are_printed_in_the_same_layout() -> None:
    p = pretty_value({"n": 2**70, "m": [1]})
    assert p.is_json
    assert p.lines == ['{', f'  "n": {2**70},', '  "m": [', '    1', '  ]', '}']


def test_a_value_too_deep_for_orjson_is_still_printed_as_indented_json() -> None:
    deep: Any = None
    for _ in range(300):  # orjson stops at 255 levels; the standard library prints it in the same layout
        deep = [deep]
    p = pretty_value({"d": deep, "s": '{"a": 1}'})
    assert p.is_json
    assert len(p.lines) == 2 + 2 * 300 + 1 + 3
    assert p.lines[-4:] == ['  ],', '  "s": {', '    "a": 1', '  }', '}'][-4:]


def test_a_value_orjson_cannot_write_keeps_its_text_as_is_and_other_objects_as_their_text() -> None:
    when = datetime.date(2026, 11, 3)
    p = pretty_value({"n": 2**70, "s": "café ✓", "d": when, 1: "one"})
    assert p.is_json
    assert p.lines == ['{', f'  "n": {2**70},', '  "s": "café ✓",', '  "d": "2026-11-03",', '  "1": "one"', '}']


def test_a_number_json_cannot_hold_prints_the_same_with_or_without_a_json_string_beside_it() -> None:
    for x in (float("nan"), float("inf")):
        assert pretty_value({"x": x}).lines[1] == '  "x": null'
        assert pretty_value({"x": x, "s": "[1]"}).lines[1] == '  "x": null,'


def test_a_key_that_is_not_a_string_is_printed_as_its_text() -> None:
    assert pretty_value({1: "x"}).lines == ['{', '  "1": "x"', '}']
    assert pretty_value({1: "x", "s": "[2]"}).lines == ['{', '  "1": "x",', '  "s": [', '    2', '  ]', '}']


def test_a_circular_value_is_shown_as_python_prints_it() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    p = pretty_value(loop)
    assert p == Pretty(["[1, [...]]"], False, loop)
    mapping: dict[str, Any] = {"a": '{"b": 1}'}
    mapping["self"] = mapping
    assert pretty_value(mapping) == Pretty(["{'a': '{\"b\": 1}', 'self': {...}}"], False, mapping)


def test_prose_holding_json_too_deep_to_canonicalise_is_shown_raw() -> None:
    deep = "[" * 1015 + "]" * 1015
    text = "[ \n" + deep + ",\n  1 ]"  # parsed (orjson reads 1024 levels), not canonicalised
    assert pretty_value(text) == Pretty(["[ ", deep + ",", "  1 ]"], False, text)


def _nested(depth: int, leaf: Any = None) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [1010, 5000])
def test_a_value_nested_deeper_than_python_can_print_never_raises(depth: int) -> None:
    # a JSONL reader keeps a value of 1010 levels (orjson reads 1024): the pair screen must still show something
    p = pretty_value({"out": _nested(depth)})
    assert p.lines == ["(a value nested too deep to print)"] and not p.is_json
    assert p.line_range(["out"]) is None  # not JSON: no path is found in it
    assert p.line_range([]) == (0, len(p.lines))


# --- Pretty.line_range ----------------------------------------------------------------------------


def _node_from_lines(lines: list[str], start: int, end: int) -> Any:
    """The JSON node that lines[start:end] print: the key (if any) and a trailing comma cut off."""
    text = "\n".join(lines[start:end]).strip()
    if text.endswith(","):
        text = text[:-1]
    if text.startswith('"'):
        key, at = json.JSONDecoder().raw_decode(text)
        rest = text[at:].lstrip()
        if rest.startswith(":"):
            text = rest[1:]
    return json.loads(text)


def _every_path(value: Any, steps: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(steps, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _every_path(v, (*steps, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _every_path(v, (*steps, i))
    return out


SAMPLE = {
    "a": 1,
    "b": {"c": [10, [20, 30], {}], "d": []},
    "e": [{"f": "x", "g": {"h": None}}, 2],
    "odd key": {"x": True},
}


@pytest.mark.parametrize("value", [
    SAMPLE,
    [SAMPLE, [[1], [2, 3]], {"z": SAMPLE}],
    {"big": [2**70, {"n": -(2**70)}], "after": {"k": [1, 2]}},  # orjson cannot write these: counted another way
    {"big": [2**70, {}, [], {"e": {}, "l": []}], "after": [{}, []], "last": 1},
])
def test_each_paths_lines_print_exactly_its_node(value: Any) -> None:
    p = pretty_value(value)
    for steps, node in _every_path(p.value):
        start, end = p.line_range(list(steps))  # type: ignore[misc]
        assert 0 <= start < end <= len(p.lines)
        assert _node_from_lines(p.lines, start, end) == node, steps
        if steps:
            last = steps[-1]
            opening = p.lines[start].strip()
            if isinstance(last, str):
                assert opening.startswith(json.dumps(last) + ":"), (steps, opening)


def test_line_range_of_keys_and_items_by_line_number() -> None:
    p = pretty_value({"a": 1, "b": {"c": 2}, "l": [10, [20, 30]]})
    # 0 {  1 "a": 1,  2 "b": {  3 "c": 2  4 },  5 "l": [  6 10,  7 [  8 20,  9 30  10 ]  11 ]  12 }
    assert p.line_range([]) == (0, 13)
    assert p.line_range(["a"]) == (1, 2)
    assert p.line_range(["b"]) == (2, 5)
    assert p.line_range(["b", "c"]) == (3, 4)
    assert p.line_range(["l"]) == (5, 12)
    assert p.line_range(["l", 0]) == (6, 7)
    assert p.line_range(["l", 1]) == (7, 11)
    assert p.line_range(["l", 1, 1]) == (9, 10)


@pytest.mark.parametrize("steps", [
    ["missing"],
    ["b", "missing"],
    ["l", 2],           # past the end
    ["l", -1],          # no negative index
    ["l", "0"],         # a key on a list
    [0],                # an index on an object
    ["a", "x"],         # below a scalar
    ["a", 0],
    ["b", "c", 0],
])
def test_a_path_the_value_does_not_have_has_no_lines(steps: list[Any]) -> None:
    p = pretty_value({"a": 1, "b": {"c": 2}, "l": [10, [20, 30]]})
    assert p.line_range(steps) is None


def test_prose_has_lines_only_for_the_whole_value() -> None:
    p = pretty_value("one\ntwo\nthree")
    assert p.line_range([]) == (0, 3)
    assert p.line_range([0]) is None
    assert p.line_range(["one"]) is None


# --- differing_lines ------------------------------------------------------------------------------


def test_equal_texts_have_no_differing_lines() -> None:
    assert differing_lines(["a", "b"], ["a", "b"]) == ([], [])
    assert differing_lines([], []) == ([], [])


def test_a_changed_line_is_marked_on_both_sides_at_its_own_line() -> None:
    a = ["{", '  "x": 1,', '  "y": 2', "}"]
    b = ["{", '  "x": 1,', '  "y": 3', "}"]
    assert differing_lines(a, b) == ([(2, 3)], [(2, 3)])


def test_an_inserted_line_is_marked_on_its_side_only() -> None:
    assert differing_lines(["h", "t"], ["h", "new", "t"]) == ([], [(1, 2)])
    assert differing_lines(["h", "old", "t"], ["h", "t"]) == ([(1, 2)], [])


def test_a_first_line_that_differs_is_marked() -> None:
    assert differing_lines(["x"], ["y"]) == ([(0, 1)], [(0, 1)])
    assert differing_lines(["x", "same"], ["y", "same"]) == ([(0, 1)], [(0, 1)])


def test_only_the_lines_both_texts_end_with_are_trimmed() -> None:
    # "s" ends neither text: it is matched inside, so only "x" and "y" differ
    assert differing_lines(["s", "x", "e"], ["y", "s", "e"]) == ([(1, 2)], [(0, 1)])
    assert differing_lines(["y", "s", "e"], ["s", "x", "e"]) == ([(0, 1)], [(1, 2)])
    assert differing_lines(["h", "p", "t1", "t2", "t3"], ["h", "q", "t1", "t2", "t3"]) == ([(1, 2)], [(1, 2)])


def test_lines_repeated_many_times_are_matched_like_any_other() -> None:
    a = ["A", *["  },"] * 300, "Z"]  # a popular line (difflib's autojunk would ignore it)
    b = ["B", *["  },"] * 300, "Y"]
    assert differing_lines(a, b) == ([(0, 1), (301, 302)], [(0, 1), (301, 302)])


def test_lines_shared_by_head_and_tail_are_counted_once() -> None:
    # "x" is both the common head and a candidate tail: the longer side keeps one differing line
    assert differing_lines(["x", "x"], ["x"]) == ([(1, 2)], [])
    assert differing_lines(["x"], ["x", "x"]) == ([], [(1, 2)])
    assert differing_lines(["a", "b", "a"], ["a"]) == ([(1, 3)], [])


def test_two_changes_apart_are_two_ranges_past_the_common_head() -> None:
    a = ["h1", "h2", "p", "same", "q", "t"]
    b = ["h1", "h2", "P", "same", "Q", "t"]
    assert differing_lines(a, b) == ([(2, 3), (4, 5)], [(2, 3), (4, 5)])


def test_a_middle_longer_than_the_limit_is_marked_whole() -> None:
    half = LINE_DIFF_MAX // 2

    def side(tag: str, n: int) -> list[str]:
        return ["head", *(f"{tag}{i}" for i in range(n)), "same", *(f"{tag}-{i}" for i in range(n)), "tail"]

    # a middle of LINE_DIFF_MAX + 1 lines: marked whole, the equal line inside included
    a, b = side("a", half), side("b", half)
    assert len(a) - 2 == LINE_DIFF_MAX + 1
    assert differing_lines(a, b) == ([(1, len(a) - 1)], [(1, len(b) - 1)])
    assert differing_lines(a, ["head", "tail"]) == ([(1, len(a) - 1)], [])
    # a middle of LINE_DIFF_MAX lines on each side: matched, the equal line left out
    a2 = [*a[:-2], "tail"]
    b2 = [*b[:-2], "tail"]
    assert len(a2) - 2 == LINE_DIFF_MAX
    ra, rb = differing_lines(a2, b2)
    assert ra == [(1, 1 + half), (2 + half, len(a2) - 1)]
    assert rb == [(1, 1 + half), (2 + half, len(b2) - 1)]
    # one side short, the other long: still whole, though the short side's line is in the long one
    assert differing_lines(["head", "same", "tail"], a) == ([(1, 2)], [(1, len(a) - 1)])
    assert differing_lines(a, ["head", "same", "tail"]) == ([(1, len(a) - 1)], [(1, 2)])


# --- keep_lines -----------------------------------------------------------------------------------


def test_a_value_up_to_head_plus_per_range_lines_is_kept_whole() -> None:
    assert keep_lines(15, [(12, 13)], head=10, per_range=5) == [(0, 15)]
    assert keep_lines(600, [(550, 551)]) == [(0, 600)]  # defaults: 400 + 200
    assert keep_lines(601, []) == [(0, 400)]
    assert keep_lines(0, []) == [(0, 0)]


def test_the_head_and_each_range_with_its_context_are_kept() -> None:
    assert keep_lines(100, [(50, 52)], head=10, context=3, per_range=5) == [(0, 10), (47, 55)]
    assert keep_lines(1000, [(700, 701)]) == [(0, 400), (697, 704)]  # defaults: context 3


def test_a_long_range_is_kept_from_its_start_up_to_per_range_lines() -> None:
    assert keep_lines(100, [(50, 90)], head=10, context=3, per_range=5) == [(0, 10), (47, 58)]
    assert keep_lines(2000, [(1000, 1500)]) == [(0, 400), (997, 1203)]


def test_context_stops_at_the_first_and_last_line() -> None:
    assert keep_lines(100, [(98, 100)], head=10, context=3, per_range=5) == [(0, 10), (95, 100)]
    assert keep_lines(100, [(0, 1)], head=0, context=3, per_range=5) == [(0, 4)]


def test_ranges_are_sorted_and_touching_or_overlapping_ones_merged() -> None:
    got = keep_lines(100, [(60, 61), (30, 31), (33, 34), (2, 4)], head=10, context=2, per_range=5)
    # (2, 4) lies in the head; (30, 31) -> (28, 33) and (33, 34) -> (31, 36) overlap; (60, 61) alone
    assert got == [(0, 10), (28, 36), (58, 63)]
    assert keep_lines(100, [(20, 21), (12, 13)], head=10, context=0, per_range=5) == [(0, 10), (12, 13), (20, 21)]
    assert keep_lines(100, [(10, 12)], head=10, context=0, per_range=5) == [(0, 12)]  # touching the head
    assert keep_lines(100, [(20, 30), (22, 23)], head=10, context=0, per_range=50) == [(0, 10), (20, 30)]


def test_an_empty_range_without_context_keeps_nothing() -> None:
    assert keep_lines(100, [(50, 50)], head=10, context=0, per_range=5) == [(0, 10)]
    assert keep_lines(100, [(50, 50)], head=10, context=1, per_range=5) == [(0, 10), (49, 51)]


# --- nested_volatile ------------------------------------------------------------------------------


def test_tool_call_ids_inside_messages_are_listed_by_path_in_field_order() -> None:
    semantic = {
        "llm.messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "name": "f"}, {"name": "g"}, {"id": "call_3"}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ],
        "status": "ok",
        "llm.output": {"tool_calls": [{"id": "call_9"}], "tool_call_id": "t"},
    }
    got = nested_volatile(semantic)
    assert got == {
        "llm.messages[1].tool_calls[0].id": "call_1",
        "llm.messages[1].tool_calls[2].id": "call_3",
        "llm.messages[2].tool_call_id": "call_1",
        "llm.output.tool_calls[0].id": "call_9",
        "llm.output.tool_call_id": "t",
    }
    keys = list(got)
    assert {k.split("[")[0].split(".tool")[0] for k in keys[:3]} == {"llm.messages"}  # the fields in their order


def test_messages_recorded_as_a_json_string_are_read_as_their_value() -> None:
    semantic = {"llm.messages": json.dumps([{"role": "tool", "tool_call_id": "call_2"}])}
    assert nested_volatile(semantic) == {"llm.messages[0].tool_call_id": "call_2"}


def test_values_of_other_shapes_or_fields_list_nothing() -> None:
    assert nested_volatile({"llm.messages": {"tool_call_id": "x"}}) == {}  # not a list of messages
    assert nested_volatile({"llm.messages": ["text", 3, None]}) == {}
    assert nested_volatile({"llm.output": ["tool_calls"]}) == {}
    assert nested_volatile({"llm.output": {"tool_calls": {"id": "x"}}}) == {}
    assert nested_volatile({"tool.output": {"tool_call_id": "x", "id": "y"}}) == {}
    assert nested_volatile({"llm.messagesX": [{"tool_call_id": "x"}]}) == {}
    assert nested_volatile({"tool.call_id": "c1"}) == {}  # volatile itself, not below a compared field
    assert nested_volatile({}) == {}


def test_a_field_too_deep_to_canonicalise_is_skipped_and_the_others_listed() -> None:
    semantic = {"llm.messages": _nested(5000), "llm.output": {"tool_call_id": "t"}}
    assert nested_volatile(semantic) == {"llm.output.tool_call_id": "t"}
