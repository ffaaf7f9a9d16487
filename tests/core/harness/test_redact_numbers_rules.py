"""The rules of core/harness/redact_numbers.py (phone numbers and payment cards), pinned one by one on a Redactor
built in the test: what a phone number's digits are (at most 15 after a "+", at least 9, 8 for a country code and
groups of 3 or more), what a card is (the longest, then leftmost, Luhn-valid run of 13-19 digits in whole groups,
starting with 2-6), and where neither starts (inside a run of digit groups, unless a value just replaced ends right
before it or, for a card, the run is glued to a word)."""

from __future__ import annotations

import pytest

from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.redact_patterns import luhn


def _r() -> Redactor:
    return Redactor(b"k" * 20)


def _valid(prefix: str, length: int) -> str:
    """The first Luhn-valid number of ``length`` digits starting with ``prefix`` (its other digits zeros and a tail)."""
    for tail in range(10 ** 4):
        d = prefix + str(tail).zfill(length - len(prefix))
        if len(d) == length and luhn(d):
            return d
    raise AssertionError("none")


# ----------------------------------------------------------------------------- phone numbers


def test_a_phone_token_is_over_the_plus_and_the_digits_alone_whatever_the_separators() -> None:
    r = _r()
    assert r.text("call +33 1 23 45 67 89 now") == "call " + r.token("phone", "+33123456789") + " now"
    assert r.token("phone", "+33123456789") != r.token("phone", "33123456789")  # the plus is part of the value
    assert r.text("tel (555) 123-4567.") == "tel " + r.token("phone", "5551234567") + "."
    assert r.text("1-555-123-4567") == r.token("phone", "15551234567")
    assert r.fired == {"phone": 3}


def test_an_international_number_keeps_at_most_15_digits_and_gives_trailing_groups_back_untouched() -> None:
    r = _r()
    assert r.text("+123 456 789 012 345") == r.token("phone", "+123456789012345")  # exactly 15: whole
    assert r.text("+123 456 789 012 3456 x") == r.token("phone", "+123456789012") + " 3456 x"
    assert r.text("+1 234 567 8901 2345 2024") == r.token("phone", "+123456789012345") + " 2024"
    assert r.text("+44 20 7946 0958 2023 07") == r.token("phone", "+442079460958") + " 2023 07"
    assert r.text("n +4420794609581234 x") == "n +4420794609581234 x"  # one group of 16: nothing to give back


def test_eight_digits_after_a_plus_are_a_phone_only_as_a_country_code_and_groups_of_three_or_more() -> None:
    r = _r()
    assert r.text("+1-555-0100") == r.token("phone", "+15550100")
    assert r.text("+12-555-010") == r.token("phone", "+12555010")
    assert r.text("+1-55-0100") == "+1-55-0100"  # a group of two
    assert r.text("+1555-0100") == "+1555-0100"  # two groups only
    assert r.text("+1-555-010") == "+1-555-010"  # seven digits
    assert r.text("tel 0123 4567") == "tel 0123 4567"  # eight digits without a plus
    assert r.text("tel 012 345 678") == "tel " + r.token("phone", "012345678")  # nine are enough


def test_a_phone_does_not_start_inside_a_run_of_digit_groups_unless_a_value_just_ended_there() -> None:
    r = _r()
    assert r.text("12 (555) 123-4567") == "12 (555) 123-4567"
    assert r.text("12 555 123 4567") == "12 555 123 4567"
    card = "4111 1111 1111 1111"
    assert r.text(card + " (555) 123-4567") == (r.token("card", "4111111111111111") + " "
                                                + r.token("phone", "5551234567"))
    assert r.text("x (555) 123-4567") == "x " + r.token("phone", "5551234567")


# ----------------------------------------------------------------------------- payment cards


@pytest.mark.parametrize("first", "23456")
def test_a_luhn_valid_run_starting_with_2_to_6_is_a_card(first: str) -> None:
    r = _r()
    number = _valid(first, 16)
    assert r.text(f"pay {number} now") == "pay " + r.token("card", number) + " now"
    assert r.fired == {"card": 1}


@pytest.mark.parametrize("first", "01789")
def test_a_luhn_valid_run_starting_with_another_digit_is_no_card(first: str) -> None:
    number = _valid(first, 16)
    assert _r().text(f"id {number} x") == f"id {number} x"


def test_a_run_that_fails_luhn_is_no_card() -> None:
    assert _r().text("id 4111111111111112 x") == "id 4111111111111112 x"


def test_the_card_token_is_over_its_digits_alone_and_its_separators_go_with_it() -> None:
    r = _r()
    tok = r.token("card", "4111111111111111")
    assert r.text("4111-1111-1111-1111") == tok
    assert r.text("4111 1111 1111 1111") == tok


@pytest.mark.parametrize("length", [13, 19])
def test_a_card_has_13_to_19_digits(length: int) -> None:
    r = _r()
    number = _valid("4", length)
    assert r.text(f"pay {number} now") == "pay " + r.token("card", number) + " now"


def test_a_card_is_the_longest_luhn_valid_run_of_whole_groups_and_the_rest_stays() -> None:
    r = _r()
    tok = r.token("card", "4111111111111111")
    assert r.text("qty 3 4111111111111111 exp 12 29") == "qty 3 " + tok + " exp 12 29"
    assert r.text("4111 1111 1111 1111 4 x") == tok + " 4 x"
    assert r.text("3 4111 1111 1111 1111 4") == "3 " + tok + " 4"
    # the whole run of 17 digits when it is valid too (longest first)
    longer = next(f"3{d}" for d in ["4111111111111111"] if luhn(f"3{d}"))  if luhn("34111111111111111") else None
    assert longer is None or r.text(longer[0] + " " + longer[1:]) == r.token("card", longer)


def test_of_two_valid_runs_of_the_same_length_the_leftmost_is_the_card() -> None:
    r = _r()
    # groups a (1 digit), b (15), c (1): a+b and b+c both 16 digits and valid: a+b is taken, c stays
    for b in (str(n) + "0" * 9 for n in range(400000, 409999)):
        a, c = "4", None
        if not luhn(a + b):
            continue
        c = next((x for x in "0123456789" if luhn(b + x) and b[0] in "23456"), None)
        if c is not None:
            break
    assert c is not None
    assert r.text(f"x {a} {b} {c} y") == "x " + r.token("card", a + b) + f" {c} y"


def test_a_card_inside_a_run_of_digit_groups_is_found_from_where_the_run_starts() -> None:
    """docs/redaction.md: within digit groups, the longest Luhn-valid run of whole groups is redacted, wherever
    the run starts (after a word, a digit group, punctuation or nothing); a match starting inside the run is not
    taken (the run's own is), so nothing is redacted twice."""
    r = _r()
    tok = r.token("card", "4111111111111111")
    assert r.text("n99 4111 1111 1111 1111") == "n99 " + tok
    assert r.text("id n9 9 4111 1111 1111 1111") == "id n9 9 " + tok
    assert r.text("12 99 4111 1111 1111 1111") == "12 99 " + tok  # left in the clear before the seventh session
    assert r.text("(12 99 4111 1111 1111 1111)") == "(12 99 " + tok + ")"  # after punctuation
    assert r.text("ref: 12 99 4111 1111 1111 1111") == "ref: 12 99 " + tok


def test_a_card_is_looked_for_up_to_24_characters_past_the_first_19_digits_of_a_run() -> None:
    """The bound that keeps a long table linear: a card after a run of groups longer than that is not found
    (docs/redaction.md, "Limits")."""
    r = _r()
    tok = r.token("card", "4111111111111111")
    near = "n" + "99 " * 5
    assert r.text(near + "4111 1111 1111 1111") == near + tok
    nine = "99 " * 9  # the card starts 27 characters into the run: within the 19 digits + 24 characters
    assert r.text(nine + "4111 1111 1111 1111") == nine + tok
    table = "99 " * 12  # 36 characters of groups first: past the bound
    assert r.text(table + "4111 1111 1111 1111") == table + "4111 1111 1111 1111"


def test_a_card_right_after_a_value_just_replaced_is_still_a_card() -> None:
    r = _r()
    tok = r.token("card", "4111111111111111")
    assert r.text("4111 1111 1111 1111 12 99 4111 1111 1111 1111") == tok + " 12 99 " + tok


# ----------------------------------------------------------------------------- what "inside a run" means


def test_eight_digits_with_a_short_group_after_the_country_code_are_no_phone() -> None:
    assert _r().text("+1-55-01000") == "+1-55-01000"  # 1 + 55 + 01000: the 55 is too short


def test_a_long_international_run_of_two_groups_gives_the_second_back() -> None:
    r = _r()
    assert r.text("+123456789 1234567") == r.token("phone", "+123456789") + " 1234567"


def test_a_phone_after_a_letter_a_colon_or_at_the_start_after_a_space_is_a_phone() -> None:
    r = _r()
    tok = r.token("phone", "5551234567")
    assert r.text("A 555 123 4567") == "A " + tok
    assert r.text("tel: (555) 123-4567") == "tel: " + tok
    assert r.text(" (555) 123-4567 ext 1") == " " + tok + " ext 1"  # the text's last character is no digit before it


@pytest.mark.parametrize("before", ["2", "10", "19"])
def test_a_phone_right_after_a_digit_group_is_inside_the_run(before: str) -> None:
    text = f"{before} (555) 123-4567"
    assert _r().text(text) == text


def test_a_card_after_a_letter_or_at_the_start_after_a_space_is_a_card() -> None:
    r = _r()
    tok = r.token("card", "4111111111111111")
    assert r.text("A 4111 1111 1111 1111") == "A " + tok
    assert r.text(" 4111 1111 1111 1111 n1") == " " + tok + " n1"


@pytest.mark.parametrize("glued", ["N99", "X99", "(n99", "(n9", "reference number for the order: n99"])
def test_a_card_after_digits_glued_to_a_letter_is_a_card_wherever_it_sits(glued: str) -> None:
    r = _r()
    assert r.text(f"{glued} 4111 1111 1111 1111") == f"{glued} " + r.token("card", "4111111111111111")


@pytest.mark.parametrize(("filler", "found"), [
    ("9 " * 21, True),         # the card's last group ends 24 characters past the first 19 digits' match
    ("9 " * 19 + "99 9 ", False),  # ... 25 characters past it
    ("9 " * 22, False),        # ... 26
])
def test_the_24_characters_are_counted_from_the_end_of_the_first_19_digits_to_the_cards_last_digit(
        filler: str, found: bool) -> None:
    r = _r()
    text = filler + "4111 1111 1111 1111"
    want = filler + r.token("card", "4111111111111111") if found else text
    assert r.text(text) == want


def test_a_run_of_20_digits_is_no_card_even_luhn_valid() -> None:
    """A card is 13 to 19 digits: a 20-digit run of whole groups is not one, though it passes Luhn and starts
    with 4 (and none of its 13-19-digit runs passes)."""
    assert luhn("43915000806360837783")
    assert _r().text("x 4391 5000 8063 6083 7783") == "x 4391 5000 8063 6083 7783"


@pytest.mark.parametrize("run", ["(5550", "(5055"])
def test_a_card_after_a_run_of_digit_groups_not_glued_to_a_word_is_a_card(run: str) -> None:
    r = _r()
    assert r.text(f"{run} 4111 1111 1111 1111") == f"{run} " + r.token("card", "4111111111111111")


def test_a_19_digit_card_one_group_long_right_after_a_digit_group_is_not_found() -> None:
    """A limit (docs/redaction.md): no match can start at the "1" and take the 19 digits in (20 in all), and a
    match starting inside the run is not taken."""
    assert luhn("4111111111111111003")
    assert _r().text("1 4111111111111111003") == "1 4111111111111111003"


def test_a_separator_after_a_non_digit_is_not_a_run() -> None:
    r = _r()
    assert r.text("(1- 4111 1111 1111 1111)") == "(1- " + r.token("card", "4111111111111111") + ")"


def test_the_longest_valid_run_wins_over_a_shorter_valid_one_inside_it() -> None:
    r = _r()
    assert luhn("4111111111111111003") and luhn("4111111111111111")
    assert r.text("4111 1111 1111 1111 003") == r.token("card", "4111111111111111003")


@pytest.mark.parametrize("group", ["99 ", "10 ", "01 ", "00 ", "10-"])
def test_the_bound_of_a_run_of_digit_groups_holds_whatever_digits_its_groups_hold(group: str) -> None:
    """docs/redaction.md, "Limits": a card after more than 19 digits and 24 characters of a table's groups is not
    looked for, and a match starting inside the run is not taken: whether a card is found does not depend on which
    digits the table holds (a 0 right before the card or further back is a digit like any other)."""
    r = _r()
    table = group * 12  # 36 characters of groups first: past the bound
    assert r.text(table + "4111 1111 1111 1111") == table + "4111 1111 1111 1111"
    near = "n" + group * 5  # glued to a word: the card is found wherever it sits
    assert r.text(near + "4111 1111 1111 1111") == near + r.token("card", "4111111111111111")
