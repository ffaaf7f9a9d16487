"""The Redactor's rules that other tests leave loose, one by one: the email rule's limits, a tool's declared field
names in free text, what is learned and found again, how secret values in text are read and hashed, which rules a
text is screened into, the scan going on to the end, the header record, and the errors' wording. The project key and
the stable tokens: ``test_redact_key_rules.py``."""

from __future__ import annotations

import base64
import json
import re
import threading
from pathlib import Path

import pytest

from tracetui.core.harness.redact import Redactor, UnknownRule, UnsupportedValue
from tracetui.core.harness.redact_config import UserRules
from tracetui.core.harness.redact_patterns import LEARN_MAX


# ----------------------------------------------------------------------------- what the rules match


def test_an_email_local_part_of_64_characters_is_one_of_65_is_not_and_the_next_address_is_still_found() -> None:
    """docs/redaction.md: a local part of at most 64 characters (RFC 5321)."""
    r = Redactor(b"k" * 20)
    assert r.text("a" * 64 + "@example.com") == r.token("email", "a" * 64 + "@example.com")
    too_long = "b" * 65 + "@example.com"
    assert r.text(too_long + " and c@example.org") == too_long + " and " + r.token("email", "c@example.org")


def test_an_address_glued_to_the_end_of_another_is_not_read_back_into_it() -> None:
    r = Redactor(b"k" * 20)
    assert r.text("me@example.com@example.org") == r.token("email", "me@example.com") + "@example.org"


def test_a_declared_sensitive_field_is_found_in_text_under_every_spelling_of_its_words() -> None:
    r = Redactor(b"k" * 20, sensitive_fields={"crm": ["full_name"]})
    for spelled in ("full_name", "fullName", "full-name", "FULL_NAME", "fullname"):
        out = r.value({"note": f"{spelled}: Ann"}, tool="crm")["note"]
        assert out == f"{spelled}: " + r.token("sensitive", "Ann"), spelled


def test_an_unknown_rule_names_itself_and_the_valid_rules() -> None:
    with pytest.raises(UnknownRule) as e:
        Redactor(b"k" * 20, rules=["email", "ssn"])
    assert e.value.name == "ssn"
    assert str(e.value) == ("unknown redaction rule 'ssn'; valid rules: email, phone, card, api_key, bearer, "
                            "secret_field, sensitive_field")


def test_a_value_that_is_not_json_says_where_it_is_and_what_to_do() -> None:
    r = Redactor(b"k" * 20)
    expected = ("cannot redact a set: only JSON values (dict, list, str, int, float, bool, None) are recorded; "
                "convert it to one before it reaches the tool layer (at {})")
    with pytest.raises(UnsupportedValue) as top:
        r.value({1, 2})
    assert str(top.value) == expected.format("the top level") and top.value.type_name == "set"
    with pytest.raises(UnsupportedValue) as deep:
        r.value({"a": [{1}]})
    assert str(deep.value) == expected.format("['a'][0]") and deep.value.where == ["a", 0]


# ----------------------------------------------------------------------------- the Redactor: what it learns, counts


@pytest.mark.parametrize("first, secret", [
    ("db postgres://app:pw-in-url-9@db:5432/x", "pw-in-url-9"),
    ("get https://x.io/f?sig=S3cr3tSig99&sv=1", "S3cr3tSig99"),
])
def test_a_url_password_or_signature_is_hidden_wherever_it_is_quoted_later_counted_as_a_secret_field(
        first: str, secret: str) -> None:
    r = Redactor(b"k" * 20)
    assert secret not in r.text(first) and r.fired == {"secret_field": 1}
    assert r.text(f"it was {secret} again") == f"it was {r.token('secret', secret)} again"
    assert r.fired == {"secret_field": 2}


def test_a_bearer_credential_that_is_neither_a_jwt_nor_a_key_is_counted_under_bearer() -> None:
    r = Redactor(b"k" * 20, rules=["bearer"])
    assert r.text("use Bearer abc123def456ghi now") == "use Bearer " + r.token("bearer", "abc123def456ghi") + " now"
    assert r.fired == {"bearer": 1}


def test_an_api_key_after_punctuation_and_a_space_is_a_key_one_glued_to_a_word_in_any_script_is_not() -> None:
    r = Redactor(b"k" * 20)
    key = "AKIAIOSFODNN7EXAMPLE"
    for before in ("aws - ", "x_ ", "(", "key="):
        assert r.text(before + key) == before + r.token("api_key", key), before
    assert r.text("clé" + key) == "clé" + key  # a longer word, whatever its letters


def test_a_field_name_with_a_leading_underscore_or_dash_before_a_secret_word_is_secret() -> None:
    """core/secret_names: a name is secret when it *ends* with ``_`` + a secret name; ``_password`` does (a Laravel
    form's ``_token``, a private ``_password`` attribute). Before the fix these stayed in the clear."""
    r = Redactor(b"k" * 20)
    assert r.value({"_password": "hunter2"}) == {"_password": r.token("secret", "hunter2")}
    assert r.text("_token=abcdef12 and -password=hunter22") == (
        f"_token={r.token('secret', 'abcdef12')} and -password={r.token('secret', 'hunter22')}")


def test_a_secret_field_name_is_read_back_over_word_characters_only() -> None:
    r = Redactor(b"k" * 20)
    assert r.text("x_ password=hunter22") == "x_ password=" + r.token("secret", "hunter22")


def test_the_header_record_names_the_rules_the_key_id_and_what_fired() -> None:
    r = Redactor(b"k" * 20, rules=["email", "bearer"])
    r.text("a@b.co")
    assert r.record() == {"rules": ["email", "bearer"], "key_id": r.key_id, "fired": {"email": 1}}


def test_a_learned_secret_quoted_inside_json_text_gets_the_token_of_the_raw_value() -> None:
    r = Redactor(b"k" * 20)
    token = r.value({"password": 'se"cret1'})["password"]
    assert r.text(json.dumps({"msg": 'quoted se"cret1 here'})) == json.dumps({"msg": f"quoted {token} here"})
    assert r.fired == {"secret_field": 2}


@pytest.mark.parametrize("credential", ["ann:pw", "ann:pwx", "ann:pwxy"])
def test_basic_credentials_are_found_with_or_without_their_padding_and_counted_under_bearer(credential: str) -> None:
    r = Redactor(b"k" * 20, rules=["bearer"])
    padded = base64.b64encode(credential.encode()).decode()
    for v in {padded, padded.rstrip("=")}:
        assert r.text("Authorization: Basic " + v) == "Authorization: Basic " + r.token("basic", v), v
    assert r.fired == {"bearer": len({padded, padded.rstrip("=")})}


@pytest.mark.parametrize("padding", ["=", "==", "==="])
def test_basic_credentials_with_padding_that_is_wrong_are_still_credentials(padding: str) -> None:
    """``Basic YW5uOnB3=`` ("ann:pw" with a stray ``=``): the padding as written is no reason to keep a password."""
    r = Redactor(b"k" * 20, rules=["bearer"])
    v = base64.b64encode(b"ann:pw").decode().rstrip("=") + padding
    assert r.text("Authorization: Basic " + v) == "Authorization: Basic " + r.token("basic", v)


# ----------------------------------------------------------------------------- secret values in text (``key: value``)


def test_a_quoted_secret_with_json_escapes_is_hashed_as_the_value_it_stands_for() -> None:
    r = Redactor(b"k" * 20)
    quoted, bad_escape = 'hun"ter2', "ab\\qcd"
    assert r.text('password: "hun\\"ter2" x') == 'password: "' + r.token("secret", quoted) + '" x'
    # an escape JSON does not know: the text as written is the value
    assert r.text('password: "ab\\qcd" x') == 'password: "' + r.token("secret", bad_escape) + '" x'


def test_a_secret_inside_json_text_inside_a_json_string_is_hashed_as_the_value_itself() -> None:
    r = Redactor(b"k" * 20)
    outer = json.dumps({"body": json.dumps({"password": 'hun"ter2'})})
    assert r.text(outer) == json.dumps({"body": json.dumps({"password": r.token("secret", 'hun"ter2')})})


def test_an_empty_secret_value_and_one_already_a_token_are_left_as_they_are() -> None:
    r = Redactor(b"k" * 20)
    assert r.text('password: "" and x') == 'password: "" and x'
    once = r.text("password=hunter2 and token: 'abc123xyz'")
    assert r.text(once) == once and r.fired == {"secret_field": 2}


# ----------------------------------------------------------------------------- values learned and found again


def _learned(*values: str, field: str = "password", **kwargs) -> Redactor:
    r = Redactor(b"k" * 20, **kwargs)
    for i, v in enumerate(values):
        r.value({f"f{i}_{field}": v})
    return r


def test_values_of_4_to_4096_characters_are_learned_shorter_or_longer_are_not() -> None:
    r = _learned("Lyon", "abc", "y" * 4096, "z" * 4097)
    assert r.text("in Lyon, abc") == f"in {r.token('secret', 'Lyon')}, abc"
    assert r.text("y" * 4096) == r.token("secret", "y" * 4096)
    assert r.text("z" * 4097) == "z" * 4097


def test_digit_values_are_learned_from_8_characters() -> None:
    r = _learned("12345678", "1234567")
    assert r.text("code 12345678 or 1234567") == f"code {r.token('secret', '12345678')} or 1234567"


def test_a_learned_value_keeps_the_rule_and_kind_that_first_replaced_it_and_is_counted_under_that_rule() -> None:
    r = Redactor(b"k" * 20, sensitive_fields={"crm": ["address"]})
    first = r.value({"address": "1 Main St"}, tool="crm")["address"]
    r.value({"password": "1 Main St"})
    assert first == r.token("sensitive", "1 Main St")
    assert r.text("ship to 1 Main St") == f"ship to {first}"
    assert r.fired == {"secret_field": 1, "sensitive_field": 2}


def test_a_learned_value_with_a_quote_and_an_accent_is_found_in_json_text_however_it_was_encoded() -> None:
    value = 'clé"1234'
    r = _learned(value)
    token = r.token("secret", value)
    for text in (json.dumps({"m": f"x {value}"}), json.dumps({"m": f"x {value}"}, ensure_ascii=False),
                 json.dumps(json.dumps({"m": f"x {value}"}))):
        assert value.encode("unicode_escape").decode() not in r.text(text)
        assert token in r.text(text), text
    assert r.text("null ul") == "null ul"  # no stray piece of an encoding is learned


def test_learned_values_sharing_a_first_word_are_each_found_the_longest_first() -> None:
    r = _learned("Ann Lee", "Ann Lex", "Ann Leeds", "Ann Lee Jr", "#Ann Lee9", "Ann Leez")
    t = {v: r.token("secret", v) for v in ("Ann Lee", "Ann Lex", "Ann Leeds", "Ann Lee Jr", "#Ann Lee9", "Ann Leez")}
    assert r.text("Ann Lex and Ann Leeds") == f"{t['Ann Lex']} and {t['Ann Leeds']}"
    assert r.text("see Ann Lee Jr.") == f"see {t['Ann Lee Jr']}."
    assert r.text("see Ann Lee.") == f"see {t['Ann Lee']}."
    assert r.text("tag #Ann Lee9 and Ann Leez") == f"tag {t['#Ann Lee9']} and {t['Ann Leez']}"


def test_a_learned_value_is_found_at_the_end_of_a_text_and_not_as_the_start_of_a_longer_word() -> None:
    r = _learned("Ann Lee", "Ann Lee Jr")
    assert r.text("call Ann Lee") == "call " + r.token("secret", "Ann Lee")
    assert r.text("Ann Leed.") == "Ann Leed."
    assert r.text("Ann Lee Jrx") == r.token("secret", "Ann Lee") + " Jrx"  # the longer one ends inside a word


def test_a_learned_value_ending_in_punctuation_is_found_even_when_a_word_follows() -> None:
    r = _learned("hunter2!", "#hunter22")
    assert r.text("say hunter2!x") == f"say {r.token('secret', 'hunter2!')}x"
    assert r.text("pw #hunter22 again") == f"pw {r.token('secret', '#hunter22')} again"


# ----------------------------------------------------------------------------- text(): what it takes, the allow-list


def test_text_takes_a_str_subclass_as_plain_text_and_refuses_anything_else_naming_its_type() -> None:
    class Label(str):
        pass

    r = Redactor(b"k" * 20)
    out = r.text(Label("mail a@b.co"))
    assert out == "mail " + r.token("email", "a@b.co") and type(out) is str
    assert type(r.text(Label("nothing here"))) is str
    with pytest.raises(UnsupportedValue) as e:
        r.text(42)  # type: ignore[arg-type]
    assert e.value.type_name == "int" and str(e.value) == "text() takes a str, not a int (at the top level)"


def test_an_allowed_value_is_kept_and_not_counted_as_fired(tmp_path: Path) -> None:
    from tracetui.core.harness.redact import load_user_rules

    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.redaction]\nallow = ["noreply@example\\\\.com"]\n')
    r = Redactor(b"k" * 20, user_rules=load_user_rules(str(tmp_path)))
    assert r.text("mail noreply@example.com") == "mail noreply@example.com" and r.fired == {}
    assert r.text("or ann@example.com") == "or " + r.token("email", "ann@example.com") and r.fired == {"email": 1}


# ----------------------------------------------------------------------------- the scan: every rule goes on to the end


def test_a_rule_whose_first_match_lies_inside_another_value_still_finds_its_later_matches() -> None:
    r = Redactor(b"k" * 20)
    assert r.text("token: 'a@b.co' then c@d.org") == (
        f"token: '{r.token('secret', 'a@b.co')}' then {r.token('email', 'c@d.org')}")


def test_a_rule_whose_first_candidate_is_refused_still_finds_its_later_matches() -> None:
    r = Redactor(b"k" * 20)
    assert r.text("basic examples; use Basic YW5uOnB3") == "basic examples; use Basic " + r.token("basic", "YW5uOnB3")


def test_numbers_right_after_a_replaced_number_are_read_as_their_own_values() -> None:
    r = Redactor(b"k" * 20)
    assert r.text("call +1-555-0142 +1-555-0143 now") == (
        f"call {r.token('phone', '+15550142')} {r.token('phone', '+15550143')} now")
    assert r.text("cards 4111 1111 1111 1111 5500 0000 0000 0004") == (
        f"cards {r.token('card', '4111111111111111')} {r.token('card', '5500000000000004')}")


def test_a_private_key_block_is_one_token_counted_under_api_key_the_same_on_a_second_pass() -> None:
    r = Redactor(b"k" * 20)
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAabc\n-----END RSA PRIVATE KEY-----"
    text = f"key:\n{block}\nend"
    once = r.text(text)
    assert once == f"key:\n{r.token('private_key', block)}\nend" and r.fired == {"api_key": 1}
    assert r.text(text) == once  # the same text object again: the block's end remembered, not lost


def test_a_secret_value_found_in_text_is_learned_and_counted_as_a_secret_field_when_it_recurs() -> None:
    r = Redactor(b"k" * 20)
    r.text("password=hunter22")
    assert r.text("again hunter22") == "again " + r.token("secret", "hunter22") and r.fired == {"secret_field": 2}


def test_a_secret_in_json_text_inside_a_json_string_with_an_escape_json_does_not_know_is_hashed_as_written() -> None:
    r = Redactor(b"k" * 20)
    text = '{\\"password\\": \\"ab\\qcd\\"}'  # \q: not a JSON escape
    assert r.text(text) == '{\\"password\\": \\"' + r.token("secret", "ab\\qcd") + '\\"}'


# ----------------------------------------------------------------------------- which rules a text is screened into


@pytest.mark.parametrize("text, value", [
    ("Authorization: Digest abc123def", "Digest abc123def"),  # the header alone, no other trigger word
    ("Cookie: sid=9f8e7d", "sid=9f8e7d"),
    ("secret=abc123xyz", "abc123xyz"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIDEXAMPLE2024&x=1", "AKIDEXAMPLE2024"),
    ("https://s.googleapis.com/k?X-Goog-Credential=svc1234abcd&x=1", "svc1234abcd"),
])
def test_each_secret_trigger_word_alone_is_enough_for_its_value_to_be_found(text: str, value: str) -> None:
    r = Redactor(b"k" * 20)
    assert r.text(text) == text.replace(value, r.token("secret", value)) and r.fired == {"secret_field": 1}


def test_a_base64_wrapped_secret_of_exactly_the_shortest_length_looked_at_is_found() -> None:
    r = Redactor(b"k" * 20)
    wrapped = base64.b64encode(b"password=abcdefg").decode()
    assert len(wrapped) == 24 and r.text(wrapped) == r.token("secret", wrapped)


def test_url_credentials_and_signatures_are_left_alone_when_secret_field_is_not_among_the_rules() -> None:
    r = Redactor(b"k" * 20, rules=["email"])
    text = "postgres://app:pw@db/x https://x.io/f?sig=S3cr3tSig99"
    assert r.text(text) == text and r.fired == {}


def test_the_projects_own_fields_in_text_are_secret_fields(tmp_path: Path) -> None:
    from tracetui.core.harness.redact import load_user_rules

    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.redaction]\nfields = ["member_no"]\n')
    r = Redactor(b"k" * 20, user_rules=load_user_rules(str(tmp_path)))
    assert r.text("member_no=AB12CD") == "member_no=" + r.token("secret", "AB12CD")
    assert r.fired == {"secret_field": 1}


def test_existing_tokens_are_left_alone_even_by_a_project_pattern_that_matches_their_digits(tmp_path: Path) -> None:
    from tracetui.core.harness.redact import load_user_rules

    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.redaction.patterns]\nhexid = "[0-9a-f]{8}"\n')
    r = Redactor(b"k" * 20, user_rules=load_user_rules(str(tmp_path)))
    token = r.token("email", "a@b.co")
    assert r.text(f"mail {token} and id 0badc0de") == f"mail {token} and id {r.token('hexid', '0badc0de')}"


def test_credentials_are_left_alone_when_their_rules_are_not_among_the_rules() -> None:
    r = Redactor(b"k" * 20, rules=["email"])
    text = ("-----BEGIN PRIVATE KEY-----\nMIIEabc\n-----END PRIVATE KEY----- Bearer abc123def456ghi "
            "Basic YW5uOnB3 eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2ln sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t")
    assert r.text(text) == text and r.fired == {}
    phones_only = Redactor(b"k" * 20, rules=["phone"])
    assert phones_only.text("mail a@b.co") == "mail a@b.co" and phones_only.fired == {}


def test_rules_may_be_one_name_given_as_a_string() -> None:
    assert Redactor(b"k" * 20, rules="email").rules == ("email",)


def test_the_projects_own_fields_are_left_alone_in_text_when_secret_field_is_not_among_the_rules(
        tmp_path: Path) -> None:
    from tracetui.core.harness.redact import load_user_rules

    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.redaction]\nfields = ["member_no"]\n')
    r = Redactor(b"k" * 20, rules=["email"], user_rules=load_user_rules(str(tmp_path)))
    assert r.text("member_no=AB12CD") == "member_no=AB12CD"


@pytest.mark.parametrize("before", ["mail ", "<b> mail "])
def test_a_value_a_field_declared_wins_over_a_pattern_that_matches_it_at_the_same_place(before: str) -> None:
    r = Redactor(b"k" * 20, sensitive_fields={"crm": ["contact"]})
    token = r.value({"contact": "ann@example.com"}, tool="crm")["contact"]
    assert token == r.token("sensitive", "ann@example.com")
    assert r.text(before + "ann@example.com") == before + token


@pytest.mark.parametrize("key", ["ASIAIOSFODNN7EXAMPLE", "AIzaSyA1234567890abcdefABCDEF1234567890",
                                 "xoxb-1234567890-abcdefijkl"])
def test_an_aws_session_key_a_google_key_or_a_slack_token_alone_in_a_text_is_found(key: str) -> None:
    r = Redactor(b"k" * 20)
    assert r.text(f"use {key} now") == f"use {r.token('api_key', key)} now"


@pytest.mark.parametrize("bad", ["", "-_ ", "-_", 5])
def test_a_declared_field_name_that_is_empty_or_not_a_string_is_refused_naming_the_tool_and_the_name(bad) -> None:
    with pytest.raises(ValueError) as e:
        Redactor(b"k" * 20, sensitive_fields={"crm": ["address", bad]})
    assert str(e.value) == f"sensitive_fields['crm']: field names must be non-empty strings, got {bad!r}"


def test_a_one_letter_declared_field_name_is_a_name() -> None:
    r = Redactor(b"k" * 20, sensitive_fields={"crm": ["X"]})
    assert r.value({"x": "hidden value"}, tool="crm") == {"x": r.token("sensitive", "hidden value")}


# ----------------------------------------------------------------------------- round 9c: the scan's last rules


def _text_within(r: Redactor, s: str, seconds: float = 10) -> str:
    """``r.text(s)``, failing (not hanging) when it does not return."""
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(r.text(s)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"text({s!r}) did not return within {seconds} s"
    return out[0]


def test_a_project_pattern_that_matches_empty_somewhere_finds_each_non_empty_match_whole_and_the_scan_ends() -> None:
    """The config refuses a pattern that matches an empty text, not one that matches empty after a look-behind
    (``(?<=[=":])[0-9]*``): such an empty match is no match, the one starting a character later is found whole, and
    an empty match at the very end of the text ends the scan (it searched from the end again, for ever, before)."""
    r = Redactor(b"k" * 20, user_rules=UserRules(patterns=(("pin", re.compile(r'(?<=[=":])[0-9]*')),)))
    assert _text_within(r, 'pin="1234" ok') == f'pin="{r.token("pin", "1234")}" ok'
    assert _text_within(r, 'pin="1234"') == f'pin="{r.token("pin", "1234")}"'
    ids = Redactor(b"k" * 20, user_rules=UserRules(patterns=(("acct", re.compile(r"(?<=id=)\w*")),)))
    assert _text_within(ids, "user id=") == "user id="
    assert _text_within(ids, "user id=u42") == "user id=" + ids.token("acct", "u42")


def test_an_existing_token_takes_back_no_count_even_when_the_allow_list_matches_its_text() -> None:
    """What fired is counted once per value replaced; an allowed value takes its count back. A token already in the
    text is left as it is, not a value replaced, so an allow-list entry that matches a token's text (placeholders
    in angle brackets) takes nothing back from the rule that fired last."""
    r = Redactor(b"k" * 20, user_rules=UserRules(allow=(re.compile(r"<[^>]*>"),)))
    existing = r.token("email", "ann@example.com")
    out = r.text(f"password=hunter22 and {existing}")
    assert out == f"password={r.token('secret', 'hunter22')} and {existing}"
    assert r.fired == {"secret_field": 1}
    assert r.text(f"token: {existing}") == f"token: {existing}" and r.fired == {"secret_field": 1}


def test_at_most_learn_max_values_are_remembered_the_next_is_replaced_only_where_it_is_a_field() -> None:
    """``_learn``: nothing more is remembered once ``LEARN_MAX`` values are known (memory stays bounded): the
    value that fills the memory is found in later text, the one after it only where it is a secret field."""
    r = Redactor(b"k" * 20)
    r.value({"password": [f"pw{i:06d}x" for i in range(LEARN_MAX)]})
    last = f"pw{LEARN_MAX - 1:06d}x"
    assert r.text(f"then {last}") == "then " + r.token("secret", last)
    assert r.value({"password": "one-more-secret"}) == {"password": r.token("secret", "one-more-secret")}
    assert r.text("later one-more-secret") == "later one-more-secret"


def test_what_a_text_becomes_does_not_depend_on_the_order_values_were_learned_in() -> None:
    """Two learned values of the same length found at the same word (``#Ann Lee`` and ``Ann Lee#`` in
    ``#Ann Lee#``): record and replay learn in their own order, and the text is redacted the same either way."""
    outs = []
    for order in (["#Ann Lee", "Ann Lee#"], ["Ann Lee#", "#Ann Lee"]):
        r = Redactor(b"k" * 20, sensitive_fields={"crm": ["full_name"]})
        for v in order:
            r.value({"full_name": v}, tool="crm")
        outs.append(r.text("met #Ann Lee# today"))
    assert outs[0] == outs[1]
    assert "Ann Lee" not in outs[0]


@pytest.mark.parametrize("credential", [b"ann:pw", b"ann:pxy", b"ann:pxyz"])
@pytest.mark.parametrize("stray", ["=", "=="])
def test_basic_credentials_with_stray_padding_after_the_right_padding_are_still_credentials(credential: bytes,
                                                                                            stray: str) -> None:
    """Padding as written is stripped and the right padding added before the strict decode: a stray ``=`` after a
    credential's own padding (``YW5uOnB4eQ===``) hides no less of a password."""
    r = Redactor(b"k" * 20, rules=["bearer"])
    v = base64.b64encode(credential).decode() + stray
    assert r.text("Authorization: Basic " + v) == "Authorization: Basic " + r.token("basic", v)


def test_basic_credentials_whose_base64_ends_in_x_are_read_whole() -> None:
    """Only the padding is stripped before decoding, not the letters before it: ``ann:pwau×`` (a Latin-1 password,
    RFC 7617's historical charset) is ``YW5uOnB3YXXX`` in base64."""
    r = Redactor(b"k" * 20, rules=["bearer"])
    v = base64.b64encode("ann:pwau×".encode("latin-1")).decode()
    assert v.endswith("XXX")
    assert r.text("Authorization: Basic " + v) == "Authorization: Basic " + r.token("basic", v)
