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


@pytest.mark.parametrize("s", ["hello", "{not json", "[1, 2", '"hello"', '"[1, 2"', "", " ", "12", "{name} here",
                               '"a quote never closed', '"{"'])
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


@pytest.mark.parametrize("n", [
    2**70 + 1,               # beyond 64 bits, and not a float exactly (2**70 is: a rounded value would still ==)
    -(2**70 + 1),
    -9999999999999999999,    # 19 digits, below the smallest 64-bit integer
    18446744073709551617,    # 20 digits, just past the largest unsigned 64-bit integer
])
def test_an_integer_beyond_64_bits_in_a_json_string_keeps_every_digit(n: int) -> None:
    for text in (f"[{n}]", f'{{"s": "x", "n": {n}}}', json.dumps(json.dumps([n]))):
        value = parse_json_string(text)
        inner = value[0] if isinstance(value, list) else value["n"]
        assert type(inner) is int and inner == n, text
    assert canonical_json({"a": f"[{n}]"}) == f'{{"a":[{n}]}}'.encode()


def test_a_str_subclass_holding_json_is_parsed_like_a_str() -> None:
    class Text(str):
        pass

    assert parse_json_string(Text('{"a": 1}')) == {"a": 1}
    assert args_hash({"q": Text('{"b": 2, "a": 1}')}) == args_hash({"q": {"a": 1, "b": 2}})


def test_non_ascii_text_gives_the_same_bytes_on_the_fast_and_the_slow_path() -> None:
    """The slow path (a JSON string inside) writes UTF-8 as the fast path does, not ASCII escapes."""
    assert canonical_json({"a": '{"b": "caf\u00e9 \u65e5"}'}) == '{"a":{"b":"café 日"}}'.encode()
    assert canonical_json({"a": '{"b": "café 日"}'}) == canonical_json({"a": {"b": "café 日"}})


def test_json_strings_within_64_bits_are_parsed_once_without_the_standard_library(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A count, not a time: the standard library's parse is kept for what orjson refuses or would round
    (kills the mutants that send every string there, tests/mutation_equivalents.md)."""
    import types

    import tracetui.core.canonical as canonical

    calls: list[str] = []
    counting = types.SimpleNamespace(**vars(json))
    counting.loads = lambda s, **kw: calls.append(s) or json.loads(s, **kw)
    monkeypatch.setattr(canonical, "json", counting)
    assert canonical.parse_json_string('{"a": 1, "b": [1234567890123456789, "x"]}') == {
        "a": 1, "b": [1234567890123456789, "x"]}
    assert calls == []
    assert canonical.parse_json_string("[NaN]") == ["NaN"] and calls == ["[NaN]"]
