"""The rules of core/harness/redact_wrapped.py, pinned one by one on a Redactor built in the test: a base64 run (either
alphabet, never both, any padding) that decodes to text with a secret becomes one token of the kind found inside,
hashed over the run as written; and the text parts of one message are redacted together when that finds more."""

from __future__ import annotations

import base64
import re

import pytest

from tracetui.core.harness.redact import Redactor

SECRET = "password: hunter2-correct-horse "
"""Decoded text holding a secret field's value (``<SECRET_…>``, a kind the token takes exactly as given)."""


def _r() -> Redactor:
    return Redactor(b"k" * 20)


def _std(tail: str) -> str:
    return base64.b64encode((SECRET + tail).encode()).decode()


def _url(tail: str) -> str:
    return base64.urlsafe_b64encode((SECRET + tail).encode()).decode()


# ----------------------------------------------------------------------------- base64-wrapped secrets


@pytest.mark.parametrize("tail", ["~", "~~", "~~~", "?", "~~~?"])
def test_a_standard_base64_run_wrapping_a_secret_is_one_token_over_the_run_as_written(tail: str) -> None:
    r = _r()
    run = _std(tail)  # with "+", "/", one "=" or two among them
    assert r.text(f"blob {run} end") == "blob " + r.token("secret", run) + " end"
    assert r.fired == {"secret_field": 1}


@pytest.mark.parametrize("tail", ["~~", "?~~", "~~~?", "~", "~~~", "?"])
def test_a_url_safe_run_wrapping_a_secret_is_one_token_padded_or_not(tail: str) -> None:
    r = _r()
    run = _url(tail)
    assert "-" in run or "_" in run
    for written in (run, run.rstrip("=")):  # URL-safe base64 is often written without its padding
        assert r.text(f"blob {written} end") == "blob " + r.token("secret", written) + " end"


def test_a_run_with_its_padding_too_long_or_missing_is_still_decoded() -> None:
    r = _r()
    run = _std("~~~")  # needs one "="
    assert run.endswith("=") and not run.endswith("==")
    for written in (run + "=", run.rstrip("=")):
        assert r.text(f"blob {written} end") == "blob " + r.token("secret", written) + " end"


def test_a_run_mixing_the_two_alphabets_is_not_decoded() -> None:
    run = _std("~~~?")
    assert "+" in run and "/" in run
    for mixed in (run.replace("/", "_"), run.replace("+", "-")):  # "+" with "_", "-" with "/"
        assert _r().text(f"blob {mixed} end") == f"blob {mixed} end"


def test_the_kind_of_the_token_is_the_kind_found_inside_and_the_last_character_counts() -> None:
    r = _r()
    run = base64.b64encode(b"mail: ann.lee@example.IW").decode()  # the address's last letter is the run's last
    assert run.endswith("X")
    out = r.text(f"blob {run} end")
    assert re.fullmatch(r"blob <EMAIL_[0-9a-f]{8}> end", out), out
    assert out != "blob " + r.token("email", run) + " end"  # hashed over the run as written, not lower-cased
    assert r.fired == {"email": 1}


def test_a_run_wrapping_text_with_nothing_to_hide_or_binary_data_stays() -> None:
    r = _r()
    plain = base64.b64encode(b"just some ordinary words here, nothing else").decode()
    binary = base64.b64encode(bytes(range(0, 60))).decode()
    for run in (plain, binary):
        assert r.text(f"blob {run} end") == f"blob {run} end"
    assert r.fired == {}


# ----------------------------------------------------------------------------- message parts redacted together

KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


def test_a_secret_split_across_two_text_parts_goes_to_the_first_part_and_the_second_is_emptied() -> None:
    r = _r()
    parts = [{"type": "text", "text": "my key is " + KEY[:6]}, {"type": "text", "text": KEY[6:] + " ok"}]
    whole = r.text("my key is " + KEY + " ok")
    assert whole != "my key is " + KEY + " ok"
    assert r.value(parts) == [{"type": "text", "text": whole}, {"type": "text", "text": ""}]


def test_parts_that_are_not_text_dicts_are_left_out_of_the_join_and_kept() -> None:
    r = _r()
    parts = [{"type": "text", "text": "my key is " + KEY[:6]}, "a plain string part", {"type": "image", "url": "x"},
             {"type": "text", "text": KEY[6:] + " ok"}]
    whole = r.text("my key is " + KEY + " ok")
    assert r.value(parts) == [{"type": "text", "text": whole}, "a plain string part", {"type": "image", "url": "x"},
                              {"type": "text", "text": ""}]


def test_a_secret_split_across_parts_that_are_dict_subclasses_is_found_too() -> None:
    """Framework message parts may be ``OrderedDict``s (or another dict subclass): joined as plain dicts are."""
    from collections import OrderedDict

    r = _r()
    parts = [OrderedDict(type="text", text="my key is " + KEY[:6]), OrderedDict(type="text", text=KEY[6:] + " ok")]
    whole = r.text("my key is " + KEY + " ok")
    got = r.value(parts)
    assert [p["text"] for p in got] == [whole, ""]
    assert KEY not in "".join(p["text"] for p in got)


def test_parts_with_nothing_split_are_each_their_own_and_counted_once() -> None:
    r = _r()
    parts = [{"type": "text", "text": "mail ann@example.com "}, {"type": "text", "text": "and bob@example.org"}]
    assert r.value(parts) == [{"type": "text", "text": "mail " + r.token("email", "ann@example.com") + " "},
                              {"type": "text", "text": "and " + r.token("email", "bob@example.org")}]
    assert r.fired == {"email": 2}
