"""The rules of core/harness/redact_walk.py (the walk over values), pinned one by one on a Redactor built in the
test: which strings, keys and leaves are redacted and under which rule, the value under a secret or declared field
replaced whole with its shape kept, values learned in a call replaced in what was walked before them (strings, keys,
tuples), keys seen clean and learned since, the type subclasses come back as, and where an unsupported value is."""

from __future__ import annotations

import enum
from collections import OrderedDict, namedtuple
from typing import Any

import pytest

from tracetui.core.harness.redact import Redactor, UnsupportedValue
from tracetui.core.harness.redact_config import UserRules

KEY = b"k" * 20
_ALL_BUT_SENSITIVE = ["email", "phone", "card", "api_key", "bearer", "secret_field"]


def _r(**kw: Any) -> Redactor:
    return Redactor(KEY, sensitive_fields={"crm": ["full_name", "id"]}, **kw)


class Name(str):
    """A str subclass (a str enum's shape)."""


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    pass


class Items(list):  # type: ignore[type-arg]
    pass


Pair = namedtuple("Pair", "a b")


# ----------------------------------------------------------------------------- the declared fields of a tool


def test_a_declared_field_is_replaced_only_for_its_tool_and_only_with_the_sensitive_rule_on() -> None:
    r = _r()
    assert r.value({"full_name": "Ann Lee"}, tool="crm") == {"full_name": r.token("sensitive", "Ann Lee")}
    assert r.value({"full_name": "Bob"}, tool="other") == {"full_name": "Bob"}
    off = _r(rules=_ALL_BUT_SENSITIVE)
    assert off.value({"full_name": "Ann Lee"}, tool="crm") == {"full_name": "Ann Lee"}
    assert off.value("full_name: Ann Lee", tool="crm") == "full_name: Ann Lee"


def test_a_declared_field_inside_a_string_is_replaced_in_lists_tuples_and_subclasses_too() -> None:
    r = _r()
    tok = r.token("sensitive", "Ann")
    assert r.value("full_name: Ann", tool="crm") == "full_name: " + tok
    assert r.value(["full_name: Ann"], tool="crm") == ["full_name: " + tok]
    assert r.value(("full_name: Ann",), tool="crm") == ("full_name: " + tok,)
    assert r.value({1: "full_name: Ann"}, tool="crm") == {1: "full_name: " + tok}
    assert r.value(OrderedDict(note="full_name: Ann"), tool="crm") == {"note": "full_name: " + tok}
    assert r.fired == {"sensitive_field": 5}


def test_a_declared_field_in_a_string_of_exactly_six_characters_is_replaced() -> None:
    r = _r()
    assert r.value("id=Ann", tool="crm") == "id=" + r.token("sensitive", "Ann")


def test_every_declared_field_in_a_string_is_replaced_past_an_empty_or_allowed_one() -> None:
    r = _r()
    out = r.value('full_name: "" and full_name: "Ann"', tool="crm")
    assert out == 'full_name: "" and full_name: "' + r.token("sensitive", "Ann") + '"'
    import re

    allowing = _r(user_rules=UserRules(allow=(re.compile("Ann"),)))
    assert allowing.value("full_name: Ann, full_name: Bob", tool="crm") == (
        "full_name: Ann, full_name: " + allowing.token("sensitive", "Bob"))
    assert allowing.fired == {"sensitive_field": 1}


def test_a_value_learned_from_a_string_is_replaced_later_under_the_same_rule_and_token() -> None:
    r = _r()
    tok = r.token("sensitive", "Ann Lee")
    assert r.value('full_name: "Ann Lee"', tool="crm") == 'full_name: "' + tok + '"'
    assert r.text("call Ann Lee today") == "call " + tok + " today"
    assert r.fired == {"sensitive_field": 2}


# ----------------------------------------------------------------------------- strings and keys


def test_strings_of_exactly_six_characters_are_redacted_as_values_and_list_items() -> None:
    r = _r()
    tok = r.token("email", "a@b.co")
    assert r.value({"x": "a@b.co"}) == {"x": tok}
    assert r.value(["a@b.co"]) == [tok]
    assert r.value("a@b.co") == tok


def test_a_key_that_was_redacted_is_redacted_again_every_time() -> None:
    r = _r()
    tok = r.token("email", "ann@example.com")
    for _ in range(3):
        assert r.value({"ann@example.com": 1}) == {tok: 1}
    assert r.fired == {"email": 3}


def test_a_key_seen_clean_and_learned_since_is_replaced_with_the_learned_token_and_counted() -> None:
    r = _r()
    assert r.value({"Ann Lee": 1}) == {"Ann Lee": 1}
    assert r.value({"full_name": "Ann Lee"}, tool="crm")
    assert r.value({"Ann Lee": 2}) == {r.token("sensitive", "Ann Lee"): 2}
    assert r.fired == {"sensitive_field": 2}


def test_a_clean_key_in_its_json_escaped_form_gets_the_raw_values_token() -> None:
    r = _r()
    raw = 'say "hi" Bob'
    escaped = 'say \\"hi\\" Bob'
    assert r.value({escaped: 1}) == {escaped: 1}
    r.value({"full_name": raw}, tool="crm")
    assert r.value({escaped: 2}) == {r.token("sensitive", raw): 2}


def test_a_key_in_the_json_escaped_form_of_a_value_learned_later_in_the_call_gets_the_raw_values_token() -> None:
    r = _r()
    raw = 'say "yo" Cy'
    escaped = 'say \\"yo\\" Cy'
    tok = r.token("sensitive", raw)
    assert r.value({escaped: 1, "full_name": raw}, tool="crm") == {tok: 1, "full_name": tok}


def test_a_str_subclass_key_is_read_as_its_text() -> None:
    r = _r()
    assert r.value({Name("full_name"): "Ann"}, tool="crm") == {"full_name": r.token("sensitive", "Ann")}
    assert r.value({Name("note"): "ann@example.com"}) == {"note": r.token("email", "ann@example.com")}


def test_a_non_string_key_is_kept_and_the_keys_after_it_are_walked() -> None:
    r = _r()
    assert r.value({1: "a", "b": "ann@example.com", 2: None}) == {1: "a", "b": r.token("email", "ann@example.com"),
                                                                   2: None}


# ----------------------------------------------------------------------------- values learned within one call


def test_a_value_learned_in_a_call_is_replaced_in_what_was_walked_before_it() -> None:
    r = _r()
    tok = r.token("sensitive", "Ann Lee")
    assert r.value(["Ann Lee is here", {"full_name": "Ann Lee"}], tool="crm") == [tok + " is here",
                                                                                 {"full_name": tok}]
    assert r.value(("Ann Lee", {"full_name": "Ann Lee"}), tool="crm") == (tok, {"full_name": tok})


def test_a_key_walked_before_the_value_it_is_learned_from_is_replaced_in_the_same_call() -> None:
    r = _r()
    tok = r.token("sensitive", "Bob Ray")
    assert r.value({"Bob Ray": 1, "full_name": "Bob Ray"}, tool="crm") == {tok: 1, "full_name": tok}
    assert r.value({3: "x", "full_name": "Cy Lo Mar"}, tool="crm") == {3: "x", "full_name": r.token("sensitive",
                                                                                                   "Cy Lo Mar")}


def test_a_learned_value_of_four_characters_is_replaced_in_a_string_walked_before_it() -> None:
    r = _r()
    tok = r.token("sensitive", "Lyon")
    assert r.value(["Lyon", {"full_name": "Lyon"}], tool="crm") == [tok, {"full_name": tok}]


def test_a_token_already_in_a_string_walked_again_is_kept_whole() -> None:
    r = _r()
    tok = r.token("sensitive", "Ann Lee")
    email = r.token("email", "ann@example.com")
    out = r.value(["mail ann@example.com, Ann Lee", {"full_name": "Ann Lee"}], tool="crm")
    assert out == [f"mail {email}, {tok}", {"full_name": tok}]


# ----------------------------------------------------------------------------- a value replaced whole, its shape kept


def test_under_a_secret_field_every_scalar_is_replaced_and_the_shape_kept() -> None:
    r = _r()
    out = r.value({"password": {"ann@example.com": "x1y2", 7: ["a1b2", ("c3d4", "e5f6")], "n": None}})
    assert out == {"password": {r.token("email", "ann@example.com"): r.token("secret", "x1y2"),
                                7: [r.token("secret", "a1b2"), (r.token("secret", "c3d4"), r.token("secret", "e5f6"))],
                                "n": None}}
    assert r.fired == {"email": 1, "secret_field": 4}


def test_under_a_declared_field_a_bool_is_replaced_by_the_token_of_its_json_spelling() -> None:
    r = _r()
    assert r.value({"full_name": [True, False]}, tool="crm") == {"full_name": [r.token("sensitive", "true"),
                                                                               r.token("sensitive", "false")]}
    assert r.fired == {"sensitive_field": 2}
    assert r.value({"password": False}) == {"password": False}  # a secret field's bool stays


def test_subclasses_under_a_secret_field_are_replaced_as_their_plain_values() -> None:
    r = _r()
    out = r.value({"password": [Name("hunter2"), Level.HIGH, OrderedDict(a="x1y2"), Items(["c3d4"])]})
    assert out == {"password": [r.token("secret", "hunter2"), r.token("secret", "3"), {"a": r.token("secret", "x1y2")},
                                [r.token("secret", "c3d4")]]}
    assert r.fired == {"secret_field": 4}


def test_a_set_or_a_str_subclass_is_not_iterated_as_a_sequence_under_a_secret_field() -> None:
    r = _r()
    with pytest.raises(UnsupportedValue):
        r.value({"password": {1, 2}})
    assert r.value({"password": Name("abcd")}) == {"password": r.token("secret", "abcd")}


@pytest.mark.parametrize(("value", "where"), [
    ({"password": {"a": {"b": {1}}}}, ["password", "a", "b"]),
    ({"password": ["a", ["b", "c", {1}]]}, ["password", 1, 2]),
    ([["a", "b", {1}]], [0, 2]),
    ([["a"], ["b", "c", {1}]], [1, 2]),
])
def test_an_unsupported_value_says_where_it_is_from_the_top(value: Any, where: list[Any]) -> None:
    with pytest.raises(UnsupportedValue) as e:
        _r().value(value)
    assert e.value.where == where and e.value.type_name == "set"


def test_a_value_nested_too_deep_is_unsupported_names_its_type_and_leaves_the_counts() -> None:
    r = _r()
    r.value("ann@example.com")
    deep: Any = "ann@example.com"
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(UnsupportedValue) as e:
        r.value(deep)
    assert e.value.type_name == "list"
    assert str(e.value) == "value nested deeper than Python's recursion limit (or containing itself) (at the top level)"
    assert r.fired == {"email": 1}


# ----------------------------------------------------------------------------- what comes back


def test_subclasses_come_back_as_their_plain_json_types() -> None:
    r = _r()
    out = r.value([Level.HIGH, Ratio(1.5), Pair("a", "b"), Items(["x"]), Name("plain")])
    assert out == [3, 1.5, ("a", "b"), ["x"], "plain"]
    assert [type(x) for x in out] == [int, float, tuple, list, str]


# ----------------------------------------------------------------------------- message parts (redact_wrapped) from the walk

KEY_TEXT = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


@pytest.mark.parametrize("middle", [[], ["a plain string part"], [{"type": "image", "url": "x"}]])
def test_text_parts_are_joined_when_the_first_is_a_text_part_whatever_sits_between(middle: list[Any]) -> None:
    r = _r()
    parts = [{"type": "text", "text": "my key is " + KEY_TEXT[:6]}, *middle, {"type": "text", "text": KEY_TEXT[6:]}]
    whole = r.text("my key is " + KEY_TEXT)
    assert r.value(parts) == [{"type": "text", "text": whole}, *middle, {"type": "text", "text": ""}]


def test_an_existing_token_in_a_string_walked_before_is_left_alone_where_a_learned_value_starts_at_it() -> None:
    """Existing tokens are left alone (``text()``'s rule), in the re-walk of what was walked before a value was
    learned as in a later text: a learned value that starts where a token does (``<EMAIL_…`` without its ``>``,
    no whole token, so it is learned) does not cut the token."""
    r = _r()
    existing = r.token("email", "ann@example.com")
    partial = existing[:-1]  # the token without its closing ">": no token, a declared value like any other
    out = r.value([f"sent to {existing} today", {"full_name": partial}, f"again {existing}"], tool="crm")
    assert out == [f"sent to {existing} today", {"full_name": r.token("sensitive", partial)}, f"again {existing}"]
