"""core/canonical.py on its own: one byte string per meaning (glossary, "canonical arguments")."""

from __future__ import annotations

import json

import pytest

from tracetui.core.canonical import args_hash, canonical_json, canonicalize, parse_json_string

ARGS = {"customer_id": "C-2207", "limit": 5, "filters": {"status": "open", "since": "2025-11-01"}}
REORDERED = {"limit": 5, "filters": {"since": "2025-11-01", "status": "open"}, "customer_id": "C-2207"}


def test_key_order_does_not_change_the_bytes_or_the_hash() -> None:
    assert canonical_json(ARGS) == canonical_json(REORDERED)
    assert canonical_json(ARGS) == b'{"customer_id":"C-2207","filters":{"since":"2025-11-01","status":"open"},"limit":5}'
    assert args_hash(ARGS) == args_hash(REORDERED)


@pytest.mark.parametrize("form", [
    json.dumps(ARGS),                        # a JSON string of the same object
    json.dumps(REORDERED, indent=2),         # ... with spaces and newlines, keys in another order
    "  \n" + json.dumps(ARGS),               # leading blanks
    json.dumps(json.dumps(ARGS)),            # encoded twice
    json.dumps(json.dumps(json.dumps(ARGS))),  # three times
])
def test_a_json_string_form_of_the_same_arguments_hashes_equal(form: str) -> None:
    assert args_hash(form) == args_hash(ARGS)
    assert canonical_json(form) == canonical_json(ARGS)


def test_nested_json_strings_are_parsed_too() -> None:
    assert canonical_json({"a": json.dumps({"y": 1, "x": [1, 2]})}) == b'{"a":{"x":[1,2],"y":1}}'
    assert args_hash([json.dumps({"b": 2, "a": 1})]) == args_hash([{"a": 1, "b": 2}])


@pytest.mark.parametrize("x, y", [
    ({}, []),                      # an empty object is not an empty list
    ("{}", "[]"),
    ({"a": 1}, {"a": 1.0}),        # JSON numbers keep their recorded form
    ({"a": 1}, {"a": True}),       # 1 is not true (Python's 1 == True is not the JSON rule)
    ({"a": 0}, {"a": False}),
    ({"a": None}, {}),             # null is a value
    ([1, 2], [2, 1]),              # list order is kept
    ({"a": "1"}, {"a": 1}),        # a string holding a number stays a string
    ("hello", '"hello"'),          # a quoted plain string is not unwrapped
    ({"a": 1}, {"A": 1}),
])
def test_different_values_hash_differently(x: object, y: object) -> None:
    assert canonical_json(x) != canonical_json(y)
    assert args_hash(x) != args_hash(y)


def test_the_hash_is_16_hex_digits_of_sha256_of_the_canonical_bytes() -> None:
    import hashlib

    h = args_hash(ARGS)
    assert len(h) == 16 and int(h, 16) >= 0
    assert h == hashlib.sha256(canonical_json(ARGS)).hexdigest()[:16]


@pytest.mark.parametrize("s", ["hello", "{not json", "[1, 2", '"hello"', '"[1, 2"', "", " ", "12", "{name} here"])
def test_strings_that_are_not_json_objects_or_arrays_are_kept(s: str) -> None:
    assert parse_json_string(s) is s
    assert canonicalize(s) == s


def test_parse_json_string_parses_objects_arrays_and_double_encoding_only() -> None:
    assert parse_json_string('{"a": 1}') == {"a": 1}
    assert parse_json_string(" [1, 2]") == [1, 2]
    assert parse_json_string(json.dumps('{"a": 1}')) == {"a": 1}
    assert parse_json_string(5) == 5 and parse_json_string(None) is None


def test_big_integers_and_constants_keep_their_value() -> None:
    big = 2**70
    assert parse_json_string(f"[{big}]") == [big]  # not rounded to a float
    assert parse_json_string(f"[-{big}]") == [-big]
    assert parse_json_string(f'{{"n": {big}, "s": "x"}}') == {"n": big, "s": "x"}
    assert canonical_json({"n": big}) == f'{{"n":{big}}}'.encode()
    assert parse_json_string("[NaN, Infinity]") == ["NaN", "Infinity"]
    assert canonical_json(["1" * 25]) != canonical_json([int("1" * 25)])


def test_non_string_keys_and_values_orjson_cannot_write_still_give_bytes() -> None:
    assert canonical_json({1: "a", "2": json.dumps([1])}) == b'{"1":"a","2":[1]}'
    assert canonical_json({"s": "\ud800", "b": json.dumps({"x": 1})}) == b'{"b":{"x":1},"s":"\\ud800"}'
    with pytest.raises(TypeError):
        canonical_json({"a": object()})


def test_a_value_without_json_strings_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A count, not a time: without a string the slow path would parse, ``canonicalize`` is never called
    (kills the mutants that disable the fast path, tests/mutation_equivalents.md)."""
    import tracetui.core.canonical as canonical

    calls: list[object] = []
    real = canonical.canonicalize
    monkeypatch.setattr(canonical, "canonicalize", lambda v: calls.append(v) or real(v))
    assert canonical.canonical_json(REORDERED) == canonical_json(ARGS) and calls == []
    assert canonical.canonical_json({"a": '{"x": 1}'}) == b'{"a":{"x":1}}' and calls[0] == {"a": '{"x": 1}'}
