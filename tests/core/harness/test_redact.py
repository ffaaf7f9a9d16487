"""Redaction before write: typed stable tokens, rule by rule, deep values, and the project key."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
import re
import stat

import pytest

from tracetui.core.errors import TracetuiError
from tracetui.core.harness.redact import (
    RULES,
    RedactionKeyError,
    RedactionKeyMissing,
    Redactor,
    UnknownRule,
    UnsupportedValue,
    load_key,
)

KEY = b"test-redaction-key-0123456789abcdef"
TOKEN = re.compile(r"<([A-Z_]+)_[0-9a-f]{8}>")


@pytest.fixture
def r() -> Redactor:
    return Redactor(KEY)


def kinds(s: str) -> list[str]:
    """The token types in ``s``, in order."""
    return TOKEN.findall(s)


# ----------------------------------------------------------------------------- tokens


def test_token_format_is_type_and_8_hex_of_hmac_sha256_of_kind_nul_value(r: Redactor) -> None:
    """The documented construction, so another tool can compute the same tokens with the key."""
    digest = hmac.new(KEY, b"api_key\0sk-abc", hashlib.sha256).hexdigest()[:8]
    assert r.token("api_key", "sk-abc") == f"<API_KEY_{digest}>"


def test_token_normalises_email_case_phone_and_card_digits(r: Redactor) -> None:
    assert r.token("email", "Ann.Lee@Example.COM") == r.token("email", "ann.lee@example.com")
    assert r.token("phone", "+33 6 12 34 56 78") == r.token("phone", "+33612345678")
    assert r.token("phone", "+33612345678") != r.token("phone", "33612345678")  # the + is kept
    assert r.token("card", "4111 1111-1111 1111") == r.token("card", "4111111111111111")
    assert r.token("secret", "Hunter2") != r.token("secret", "hunter2")  # others exact


def test_same_value_same_token_across_instances_and_different_value_kind_or_key_differ() -> None:
    a, b = Redactor(KEY), Redactor(KEY)
    assert a.text("mail ann@example.com") == b.text("mail ann@example.com")
    assert a.token("email", "ann@example.com") != a.token("email", "bob@example.com")
    assert a.token("secret", "x1") != a.token("sensitive", "x1")
    other = Redactor(b"another-key-0123456789abcdef")
    assert other.text("mail ann@example.com") != a.text("mail ann@example.com")
    assert other.key_id != a.key_id


def test_key_id_is_12_hex_and_does_not_reveal_the_key(r: Redactor) -> None:
    assert re.fullmatch(r"[0-9a-f]{12}", r.key_id)
    assert r.key_id == Redactor(KEY).key_id
    assert r.key_id not in hashlib.sha256(KEY).hexdigest()
    assert KEY.hex()[:12] != r.key_id


def test_token_rejects_a_kind_that_cannot_be_a_token_type(r: Redactor) -> None:
    with pytest.raises(ValueError, match="letters and underscores"):
        r.token("e-mail", "a@b.co")


# ----------------------------------------------------------------------------- email


@pytest.mark.parametrize("text, expected", [
    ("mail me at a@b.co.", "mail me at {}."),
    ("first.last+tag@sub.example.co.uk", "{}"),
    ("to=ann@example.com&x=1", "to={}&x=1"),
    ("'ann@example.com'", "'{}'"),
    ("<ann@example.com>", "<{}>"),
    ("mailto:ann@example.com", "mailto:{}"),
    ("josé@exämple.fr", "{}"),
])
def test_email_is_replaced_and_the_punctuation_around_it_kept(r: Redactor, text: str, expected: str) -> None:
    out = r.text(text)
    assert kinds(out) == ["EMAIL"]
    assert out == expected.format(TOKEN.search(out).group())


@pytest.mark.parametrize("text", ["root@localhost", "user@host.c", "@handle", "a@b", "price @ 12.50"])
def test_not_an_email(r: Redactor, text: str) -> None:
    assert r.text(text) == text


def test_email_case_does_not_change_its_token(r: Redactor) -> None:
    assert r.text("Ann@Example.com") == r.text("ann@example.com")


# ----------------------------------------------------------------------------- phone


@pytest.mark.parametrize("text", [
    "+33 6 12 34 56 78", "+1-555-123-4567", "+447911123456", "+1 (555) 123-4567", "+33 (0)6 12 34 56 78",
    "(555) 123-4567", "555-123-4567", "555.123.4567", "1-555-123-4567", "06 12 34 56 78", "06.12.34.56.78",
    "020 7946 0958", "07911 123456", "030/1234567", "555 123 4567",
])
def test_phone_formats(r: Redactor, text: str) -> None:
    out = r.text(f"call {text} today")
    assert out == f"call {r.token('phone', text)} today"


@pytest.mark.parametrize("text", [
    "2026-11-05", "05/11/2026", "05.11.2026", "10:30:00", "2026-11-05T10:30:00+01:00", "2026-11-05 10:30:00",
    "2026-11-05T10:30:00.123456789Z", "1.2.3", "v10.0.19041.1234", "APT-77120", "C-48213", "ORDER-555123456",
    "deadbeef12345678901", "0x5551234567", "1234.56", "1234567.89", "1,234,567.89", "1762300800", "1762300800123",
    "192.168.100.254", "00 11 22 33 44 55 66", "555-123", "+1234567", "id 5551234567",
])
def test_not_a_phone(r: Redactor, text: str) -> None:
    assert r.text(text) == text


def test_a_long_digit_run_that_is_a_card_is_a_card_not_a_phone(r: Redactor) -> None:
    assert kinds(r.text("4111 1111 1111 1111")) == ["CARD"]
    assert kinds(r.text("4111111111111111")) == ["CARD"]
    assert kinds(r.text("5555 5555 5555 4444")) == ["CARD"]


def test_international_phone_gives_back_digits_beyond_e164_length(r: Redactor) -> None:
    out = r.text("+33 6 12 34 56 78 90 12 34 56")  # 17 digits; E.164 has at most 15
    assert out == r.token("phone", "+33 6 12 34 56 78 90 12") + " 34 56"


# ----------------------------------------------------------------------------- card


@pytest.mark.parametrize("text", [
    "4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "378282246310005", "3782 822463 10005",
    "6011 1111 1111 1117",
])
def test_luhn_valid_cards(r: Redactor, text: str) -> None:
    assert r.text(f"card {text}.") == f"card {r.token('card', text)}."


@pytest.mark.parametrize("text", [
    "4111 1111 1111 1112", "4111111111111112", "1234 5678 9012 3456", "0.4111111111111111", "4111111111111111.50",
    "411111111111", "41111111111111111111",
    "1762300800004", "1234567890123456785", "8111111111111112",  # Luhn-valid, but 1/7/8/9/0 are not payment cards
    "6374276302398fb9", "4111111111111111ab",  # hex span ids: the digits run into letters (a replay summary's span_id)
])
def test_not_a_card(r: Redactor, text: str) -> None:
    assert r.text(text) == text


def test_card_next_to_other_numbers_is_still_found(r: Redactor) -> None:
    card = r.token("card", "4111111111111111")
    assert r.text("4111111111111111 12/26") == f"{card} 12/26"
    assert r.text("qty 12 4111111111111111") == f"qty 12 {card}"
    assert r.text("4111 1111 1111 1111 2026") == f"{card} 2026"


# ----------------------------------------------------------------------------- api keys


@pytest.mark.parametrize("key", [
    "sk-" + "aB3" * 16,
    "sk-proj-" + "Xy9_-" * 10,
    "sk-ant-api03-" + "a1B2c3" * 8,
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "A1b2" * 9,
    "gho_" + "A1b2" * 9,
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "xoxb-123456789012-1234567890123-abcdefghijkl",
    "AIza" + "SyA0123456789abcdefghijklmnopqrstu_",
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
])
def test_api_keys_by_prefix(r: Redactor, key: str) -> None:
    assert r.text(f"using {key}, then") == f"using {r.token('api_key', key)}, then"


@pytest.mark.parametrize("text", [
    "sk-learn-classification-model", "task-" + "a" * 30, "sk-short1", "xAKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLEX",
    "ghp_tooshort", "risk_live_feed",
])
def test_not_an_api_key(r: Redactor, text: str) -> None:
    assert r.text(text) == text


def test_pem_private_key_whole_or_truncated(r: Redactor) -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc+/=\n-----END RSA PRIVATE KEY-----"
    assert r.text(f"key:\n{pem}\nend") == f"key:\n{r.token('private_key', pem)}\nend"
    out = r.text("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg")
    assert kinds(out) == ["PRIVATE_KEY"] and "MIIE" not in out


# ----------------------------------------------------------------------------- bearer


def test_bearer_token_keeps_the_word(r: Redactor) -> None:
    assert r.text("Bearer abc123def456") == "Bearer " + r.token("bearer", "abc123def456")
    assert r.text("bearer abc123def456.") == "bearer " + r.token("bearer", "abc123def456.")


@pytest.mark.parametrize("text", ["use Bearer authentication", "the bearer of this letter", "Bearer short1"])
def test_bearer_in_prose_is_not_a_token(r: Redactor, text: str) -> None:
    assert r.text(text) == text


def test_jwt_anywhere_and_after_bearer_gets_one_token(r: Redactor) -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    bare = r.text(f"jwt={jwt};")
    assert bare == f"jwt={r.token('jwt', jwt)};"
    assert r.text(f"Bearer {jwt}") == f"Bearer {r.token('jwt', jwt)}"
    assert r.fired["bearer"] == 2


def test_bearer_api_key_is_typed_api_key(r: Redactor) -> None:
    key = "sk-" + "aB3" * 16
    assert r.text(f"Bearer {key}") == f"Bearer {r.token('api_key', key)}"
    assert r.fired == {"api_key": 1}


def test_basic_auth_only_when_it_decodes_to_user_colon_password(r: Redactor) -> None:
    assert r.text("Basic dXNlcjpwYXNz") == "Basic " + r.token("basic", "dXNlcjpwYXNz")
    assert r.text("basic examples") == "basic examples"
    assert r.text("Basic aGVsbG8=") == "Basic aGVsbG8="  # "hello": no colon


# ----------------------------------------------------------------------------- secrets in text


def test_secret_named_fields_inside_text(r: Redactor) -> None:
    s = r.token("secret", "hunter2")
    assert r.text('{"password": "hunter2", "max_tokens": 5}') == f'{{"password": "{s}", "max_tokens": 5}}'
    assert r.text("password=hunter2&user=ann") == f"password={s}&user=ann"
    assert r.text("{'passwd': 'hunter2'}") == f"{{'passwd': '{s}'}}"
    assert r.text("DB_PASSWORD=hunter2") == f"DB_PASSWORD={s}"
    assert r.text('accessToken="hunter2"') == f'accessToken="{s}"'
    assert r.text('{\\"password\\": \\"hunter2\\"}') == f'{{\\"password\\": \\"{s}\\"}}'


def test_text_and_value_give_the_same_secret_token(r: Redactor) -> None:
    as_text = r.text('{"api_key": "k-123", "Authorization": "Bearer abc123def456"}')
    as_value = r.value({"api_key": "k-123", "Authorization": "Bearer abc123def456"})
    assert json.loads(as_text) == as_value


def test_header_lines_lose_the_whole_credential(r: Redactor) -> None:
    out = r.text("GET / HTTP/1.1\r\nAuthorization: Digest user=ann, nonce=1\r\nCookie: sid=abc; theme=dark\r\nHost: x")
    assert "ann" not in out and "sid=abc" not in out and "dark" not in out
    assert out.endswith("\r\nHost: x") and kinds(out) == ["SECRET", "SECRET"]


@pytest.mark.parametrize("text", [
    '{"max_tokens": 512, "token_count": 3, "idempotency_key": "k-1"}', "mytoken=abc123", '{"token": null}',
    '{"secret": false}', "tokens: 5", "if token == expected:",
])
def test_names_that_only_look_secret_stay(r: Redactor, text: str) -> None:
    assert r.text(text) == text


def test_json_brackets_after_a_bare_secret_value_are_kept(r: Redactor) -> None:
    assert r.text('{"token": 123}') == '{"token": ' + r.token("secret", "123") + "}"


def test_url_credentials_and_signed_url_parameters(r: Redactor) -> None:
    assert r.text("https://ann:pw123@db.example.com/x") == f"https://ann:{r.token('secret', 'pw123')}@db.example.com/x"
    out = r.text("https://b.s3.amazonaws.com/f?X-Amz-Signature=abcdef0123&X-Amz-Expires=60")
    assert out == f"https://b.s3.amazonaws.com/f?X-Amz-Signature={r.token('secret', 'abcdef0123')}&X-Amz-Expires=60"
    sas = r.text("https://a.blob.core.windows.net/c?sv=2020&sig=AbC%2Bd")
    assert sas == f"https://a.blob.core.windows.net/c?sv=2020&sig={r.token('secret', 'AbC%2Bd')}"


# ----------------------------------------------------------------------------- text in general


def test_idempotent(r: Redactor) -> None:
    s = ("ann@example.com +33 6 12 34 56 78 4111 1111 1111 1111 Bearer abc123def456 password=x1 "
         "AKIAIOSFODNN7EXAMPLE https://u:p@h.io eyJa.eyJb.c <EMAIL_0123abcd>")
    once = r.text(s)
    fired = r.fired
    assert r.text(once) == once
    assert r.fired == fired  # nothing replaced the second time


def test_existing_tokens_are_left_alone(r: Redactor) -> None:
    s = "<EMAIL_1a2b3c4d> <PHONE_12345678> <CARD_00000000> password=<SECRET_deadbeef>"
    assert r.text(s) == s
    assert r.fired == {}


def test_text_without_matches_is_the_same_object(r: Redactor) -> None:
    s = "the appointment on 2026-11-05T10:30:00+01:00 is APT-77120, price 1234.56"
    assert r.text(s) is s


def test_fired_counts_each_replaced_value_cumulatively_in_rules_order(r: Redactor) -> None:
    r.text("a@b.co c@d.org")
    r.text("call 555-123-4567 or mail a@b.co")
    assert r.fired == {"email": 3, "phone": 1}
    assert list(r.fired) == [x for x in RULES if x in r.fired]
    r.fired["email"] = 0  # a copy
    assert r.fired["email"] == 3


def test_rules_subset_runs_only_those(r: Redactor) -> None:
    only = Redactor(KEY, rules=["email"])
    assert only.rules == ("email",)
    assert only.text("a@b.co 555-123-4567") == f"{r.token('email', 'a@b.co')} 555-123-4567"
    assert Redactor(KEY, rules=["phone", "email"]).rules == ("email", "phone")
    assert Redactor(KEY).rules == RULES


def test_unknown_rule_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown redaction rule 'emails'.*email, phone") as e:
        Redactor(KEY, rules=["emails"])
    assert isinstance(e.value, (UnknownRule, TracetuiError))


def test_empty_key_is_refused() -> None:
    with pytest.raises(RedactionKeyError):
        Redactor(b"")


# ----------------------------------------------------------------------------- value


def test_value_deep_with_keys_and_no_mutation(r: Redactor) -> None:
    v = {
        "patients": [{"email": "Ann@Example.com", "phone": "+33 6 12 34 56 78", "age": 41, "vip": True, "n": None}],
        "ann@example.com": {"notes": ("call 555-123-4567",)},
        7: "x@y.org and more",
    }
    before = copy.deepcopy(v)
    out = r.value(v)
    assert v == before
    e = r.token("email", "ann@example.com")
    assert out == {
        "patients": [{"email": e, "phone": r.token("phone", "+33612345678"), "age": 41, "vip": True, "n": None}],
        e: {"notes": (f"call {r.token('phone', '5551234567')}",)},
        7: f"{r.token('email', 'x@y.org')} and more",
    }
    assert out["patients"] is not v["patients"]


def test_value_secret_named_keys_replaced_whole(r: Redactor) -> None:
    v = {"headers": {"Authorization": "Bearer abc123def456", "X-Api-Key": "k1", "Cookie": "sid=1"},
         "client_secret": 12345, "refresh-token": 1.5, "apiKey": "k1", "session_token": "t",
         "password": "", "token": None, "id_token": True, "max_tokens": 512, "idempotency_key": "k-1"}
    out = r.value(v)
    assert out["headers"] == {"Authorization": r.token("secret", "Bearer abc123def456"),
                              "X-Api-Key": r.token("secret", "k1"), "Cookie": r.token("secret", "sid=1")}
    assert out["client_secret"] == r.token("secret", "12345")
    assert out["refresh-token"] == r.token("secret", "1.5")
    assert out["apiKey"] == out["headers"]["X-Api-Key"]
    assert out["session_token"] == r.token("secret", "t")
    assert (out["password"], out["token"], out["id_token"]) == ("", None, True)
    assert (out["max_tokens"], out["idempotency_key"]) == (512, "k-1")
    assert r.fired == {"secret_field": 7}


def test_value_secret_key_over_a_structure_replaces_every_leaf_and_keeps_shape(r: Redactor) -> None:
    out = r.value({"private_key": {"pem": "-----", "parts": ["a1", 2, None]}})
    assert out == {"private_key": {"pem": r.token("secret", "-----"),
                                   "parts": [r.token("secret", "a1"), r.token("secret", "2"), None]}}


def test_value_tool_declared_fields_only_for_that_tool() -> None:
    v = {"customerName": "Ann Lee", "nested": [{"ADDRESS": {"street": "1 Main St", "zip": 75001}}], "other": "Bob"}
    assert Redactor(KEY, sensitive_fields={"crm": ["customer_name"]}).value(v, tool="calendar") == v
    assert Redactor(KEY, sensitive_fields={"crm": ["customer_name"]}).value(v) == v
    r = Redactor(KEY, sensitive_fields={"crm": ["customer_name", "Address"]})
    out = r.value(v, tool="crm")
    assert out == {"customerName": r.token("sensitive", "Ann Lee"),
                   "nested": [{"ADDRESS": {"street": r.token("sensitive", "1 Main St"),
                                           "zip": r.token("sensitive", "75001")}}],
                   "other": "Bob"}
    assert r.fired == {"sensitive_field": 3}


def test_a_value_found_sensitive_or_secret_is_hidden_wherever_it_is_quoted_later() -> None:
    """The agent pastes a tool's output into its next model call: the declared field's value stays hidden."""
    r = Redactor(KEY, sensitive_fields={"get_appointment": ["street_address"]})
    tool_out = r.value({"address": {"street_address": "14 rue des Tanneurs", "city": "Lyon"}}, tool="get_appointment")
    street = r.token("sensitive", "14 rue des Tanneurs")
    assert tool_out == {"address": {"street_address": street, "city": "Lyon"}}
    messages = r.value([{"role": "tool", "content": json.dumps({"address": {"street_address": "14 rue des Tanneurs"}})},
                        {"role": "assistant", "content": "Your technician comes to 14 rue des Tanneurs, Lyon."}])
    assert messages[1]["content"] == f"Your technician comes to {street}, Lyon."
    assert street in messages[0]["content"] and "Tanneurs" not in json.dumps(messages)
    assert r.text("pw hunter22 here") == "pw hunter22 here"
    r.value({"password": "hunter22"})
    assert r.text("pw hunter22 here") == f"pw {r.token('secret', 'hunter22')} here"


def test_a_learned_value_is_hidden_in_the_same_call_and_only_as_a_whole_word() -> None:
    r = Redactor(KEY, sensitive_fields={"t": ["name"]})
    out = r.value({"note": "Ann Lee called; Joann Leeds too", "name": "Ann Lee"}, tool="t")
    assert out == {"note": f"{r.token('sensitive', 'Ann Lee')} called; Joann Leeds too",
                   "name": r.token("sensitive", "Ann Lee")}
    assert r.text("password=s3cr3t! then s3cr3t! again") == (
        f"password={r.token('secret', 's3cr3t!')} then {r.token('secret', 's3cr3t!')} again")


def test_short_or_numeric_values_are_not_searched_for_elsewhere() -> None:
    r = Redactor(KEY, sensitive_fields={"t": ["age", "year", "code"]})
    r.value({"age": 41, "year": "2026", "code": "abc"}, tool="t")
    assert r.text("on 2026-11-05, 41 people, abc") == "on 2026-11-05, 41 people, abc"


def test_value_tool_declared_fields_inside_a_json_string() -> None:
    r = Redactor(KEY, sensitive_fields={"crm": ["customer_name"]})
    out = r.value({"raw": '{"customer_name": "ann@example.com", "id": 7}'}, tool="crm")
    assert out == {"raw": '{"customer_name": "' + r.token("sensitive", "ann@example.com") + '", "id": 7}'}


def test_value_sensitive_bool_and_number_are_replaced() -> None:
    r = Redactor(KEY, sensitive_fields={"t": "diagnosis"})
    assert r.value({"diagnosis": True}, tool="t") == {"diagnosis": r.token("sensitive", "true")}


def test_value_is_idempotent_including_whole_field_tokens() -> None:
    r = Redactor(KEY, sensitive_fields={"t": ["name"]})
    v = {"password": "x", "name": "Ann", "m": "a@b.co", "n": [4111111111111111, "4111111111111111"]}
    once = r.value(v, tool="t")
    assert r.value(once, tool="t") == once


def test_value_numbers_outside_secret_fields_are_never_touched(r: Redactor) -> None:
    assert r.value({"n": 4111111111111111, "p": 5551234567}) == {"n": 4111111111111111, "p": 5551234567}


def test_value_unsupported_type_is_a_typed_error_with_its_path(r: Redactor) -> None:
    with pytest.raises(UnsupportedValue, match=r"bytes.*\['a'\]\[1\]"):
        r.value({"a": ["ok", b"raw"]})
    with pytest.raises(TracetuiError):
        r.value({"a": object()})


def test_value_error_leaves_fired_unchanged(r: Redactor) -> None:
    with pytest.raises(UnsupportedValue):
        r.value(["a@b.co", {1, 2}])
    assert r.fired == {}


def test_value_too_deep_is_a_typed_error(r: Redactor) -> None:
    v: list = []
    v.append(v)
    with pytest.raises(UnsupportedValue, match="recursion"):
        r.value(v)


def test_value_subclasses_come_back_as_builtins(r: Redactor) -> None:
    from collections import OrderedDict
    from enum import Enum

    class Colour(str, Enum):
        RED = "ann@example.com"

    out = r.value(OrderedDict(c=Colour.RED))
    assert type(out) is dict and out == {"c": r.token("email", "ann@example.com")}


def test_replay_matches_because_args_redact_to_the_recorded_form() -> None:
    """The recorded args and the replayed agent's args (raw, or holding tokens it read) agree."""
    recording = Redactor(KEY).value({"to": "Ann@Example.com", "body": "hi"}, tool="send")
    replay = Redactor(KEY)
    assert replay.value({"to": "ann@example.com", "body": "hi"}, tool="send") == recording
    assert replay.value(recording, tool="send") == recording


# ----------------------------------------------------------------------------- load_key


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.delenv("TRACETUI_REDACTION_KEY", raising=False)
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_load_key_explicit_path_then_env(clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    f = clean_env / "k.key"
    f.write_text("file-key-0123456789abcdef\n")
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", " env-key-0123456789abcdef\n")
    monkeypatch.setenv("TRACETUI_REDACTION_KEY_FILE", str(f))
    assert load_key(str(f)) == (b"file-key-0123456789abcdef", str(f))  # an explicit --redaction-key-file wins
    assert load_key() == (b"env-key-0123456789abcdef", "env TRACETUI_REDACTION_KEY")


def test_load_key_path_then_env_file_then_default(clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env / ".tracetui").mkdir()
    (clean_env / ".tracetui" / "redaction.key").write_text("default-key-0123456789abcdef\n")
    envf = clean_env / "env.key"
    envf.write_text("envfile-key-0123456789abcdef")
    given = clean_env / "given.key"
    given.write_text("given-key-0123456789abcdef")
    monkeypatch.setenv("TRACETUI_REDACTION_KEY_FILE", str(envf))
    assert load_key(str(given)) == (b"given-key-0123456789abcdef", str(given))
    assert load_key() == (b"envfile-key-0123456789abcdef", str(envf))
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE")
    key, source = load_key()
    assert key == b"default-key-0123456789abcdef"
    assert source == str(clean_env / ".tracetui" / "redaction.key")


def test_same_key_text_in_env_or_file_gives_the_same_tokens(clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    f = clean_env / "k.key"
    f.write_text("shared-key-0123456789abcdef\n")
    from_file = Redactor(load_key(str(f))[0])
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "shared-key-0123456789abcdef")
    from_env = Redactor(load_key()[0])
    assert from_file.text("a@b.co") == from_env.text("a@b.co")


def test_load_key_missing_says_how_to_provide_one(clean_env) -> None:
    with pytest.raises(RedactionKeyMissing, match="TRACETUI_REDACTION_KEY.*token_hex") as e:
        load_key()
    assert isinstance(e.value, TracetuiError)
    assert not (clean_env / ".tracetui").exists()


def test_load_key_named_file_missing_is_an_error_not_a_fallback(clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RedactionKeyError, match="does not exist") as e:
        load_key(str(clean_env / "nope.key"), create=True)
    assert not isinstance(e.value, RedactionKeyMissing)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY_FILE", str(clean_env / "nope.key"))
    with pytest.raises(RedactionKeyError, match="does not exist"):
        load_key(create=True)
    assert not (clean_env / ".tracetui").exists()


@pytest.mark.parametrize("content, message", [("", "empty"), ("  \n", "empty"), ("short", "at least 16"),
                                              (b"\xff\xfe" * 10, "UTF-8")])
def test_load_key_bad_key_file(clean_env, content, message) -> None:
    f = clean_env / "bad.key"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(RedactionKeyError, match=message):
        load_key(str(f))


def test_load_key_empty_env_is_an_error_not_silently_ignored(clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "")
    with pytest.raises(RedactionKeyError, match="empty"):
        load_key(create=True)
    assert not (clean_env / ".tracetui").exists()


def test_load_key_creates_the_default_file_private_and_stable(clean_env) -> None:
    key, source = load_key(create=True)
    path = clean_env / ".tracetui" / "redaction.key"
    assert source == str(path)
    assert re.fullmatch(rb"[0-9a-f]{64}", key)
    assert path.read_text() == key.decode() + "\n"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (clean_env / ".tracetui" / ".gitignore").read_text() == "redaction.key\n"
    assert load_key(create=True) == (key, source)  # not recreated
    assert load_key() == (key, source)
    assert sorted(p.name for p in path.parent.iterdir()) == [".gitignore", "redaction.key"]  # no temp file left


def test_load_key_create_keeps_an_existing_gitignore(clean_env) -> None:
    (clean_env / ".tracetui").mkdir()
    (clean_env / ".tracetui" / ".gitignore").write_text("*\n")
    load_key(create=True)
    assert (clean_env / ".tracetui" / ".gitignore").read_text() == "*\n"


def test_load_key_unreadable_file(clean_env) -> None:
    d = clean_env / "dir.key"
    d.mkdir()
    with pytest.raises(RedactionKeyError, match="cannot read"):
        load_key(str(d))


def test_no_secret_survives_in_the_written_bytes() -> None:
    """A tool exchange full of PII and credentials: none of the raw values is in the JSON written."""
    r = Redactor(KEY, sensitive_fields={"crm.lookup": ["full_name", "address"]})
    secrets = ["ann.lee@example.com", "+33 6 12 34 56 78", "4111 1111 1111 1111", "hunter2", "sid=9f8e7d",
               "sk-proj-Abc123Def456Ghi789Jkl0", "AKIAIOSFODNN7EXAMPLE", "abc123def456ghi", "Ann Lee", "1 Main St",
               "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2ln", "pw-in-url", "S3cr3tSig"]
    args = {"query": {"email": "ann.lee@example.com"}, "headers": {"Authorization": "Bearer abc123def456ghi",
            "Cookie": "sid=9f8e7d"}, "full_name": "Ann Lee"}
    output = {"customer": {"fullName": "Ann Lee", "address": {"line1": "1 Main St"}, "phone": "+33 6 12 34 56 78"},
              "log": "login ann.lee@example.com password=hunter2 card 4111 1111 1111 1111 key sk-proj-Abc123Def456Ghi789Jkl0",
              "raw": '{"aws": "AKIAIOSFODNN7EXAMPLE", "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2ln"}',
              "links": ["postgres://app:pw-in-url@db:5432/x", "https://x.io/f?sig=S3cr3tSig&sv=1"]}
    written = json.dumps([r.value(args, tool="crm.lookup"), r.value(output, tool="crm.lookup")])
    for secret in secrets:
        assert secret not in written
    assert set(r.fired) == {"email", "phone", "card", "api_key", "bearer", "secret_field", "sensitive_field"}


def test_more_secret_field_names_are_redacted_by_name() -> None:
    from tracetui.core.harness.redact import Redactor

    names = ["passphrase", "pwd", "secret_key", "aws_secret_access_key", "session_id", "otp", "pin", "cvv",
             "connection_string", "DB_PWD", "userPin"]
    out = Redactor(b"k" * 32).value({n: f"value-of-{n}" for n in names} | {"pinned": "keep", "spin": "keep"})
    assert not any(f"value-of-{n}" in str(v) for n, v in out.items()), out
    assert out["pinned"] == "keep" and out["spin"] == "keep"
