"""Redaction of the inputs that made it quadratic (issue 21) finds each secret once, by count.

The time rule itself (CPU time growing linearly with the input, not the quadratic rescan per match of
the lazy PEM pattern on truncated blocks, a secret word inside a longer word read to the end of the
line, a linear look-up of remembered values) is measured, not asserted here (no timing asserts in the
test run, issue 25): ``python benchmarks/bench_redact.py --size 400000 --check`` exits 1 naming a case
that grows faster than linear. Here: at 200 KB each case gives exactly one token per block or field.
"""

from __future__ import annotations

import re
from typing import Callable

import pytest

from tracetui.core.harness.redact import Redactor

KEY = b"test-redaction-key-0123456789abcdef"
TOKEN = re.compile(r"<([A-Z_]+)_[0-9a-f]{8}>")
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "q" * 48 + "\n"


def _fill(unit: Callable[[int], str], size: int) -> tuple[str, int]:
    parts = []
    n = 0
    while n < size:
        parts.append(unit(len(parts)))
        n += len(parts[-1])
    return "".join(parts), len(parts)


CASES: dict[str, tuple[Callable[[int], str], str]] = {
    # unit, the token kind each unit becomes
    "pem_truncated": (lambda i: PEM + "note ", "PRIVATE_KEY"),
    "pem_closed": (lambda i: PEM + "-----END RSA PRIVATE KEY-----\n", "PRIVATE_KEY"),
    "pem_begin_only": (lambda i: "-----BEGIN PRIVATE KEY-----", "PRIVATE_KEY"),
    "token_fields": (lambda i: f"token: v{i:08d}x\n", "SECRET"),
    "json_in_json_unterminated": (lambda i: r'\"token\": \"v' + f"{i:08d} ", "SECRET"),
    "github_pat_run": (lambda i: f"github_pat_{i:022d} ", "API_KEY"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_repeated_matches_give_one_token_each(case: str) -> None:
    unit, kind = CASES[case]
    big, n_big = _fill(unit, 200_000)
    out = Redactor(KEY).text(big)
    assert TOKEN.findall(out) == [kind] * n_big  # one token per block or field, nothing else


@pytest.mark.parametrize("case", ["word_token_one_line", "sk_run", "remembered_repeated"])
def test_near_misses_and_repeats_are_redacted_by_count(case: str) -> None:
    make = {
        # a secret word inside a longer word: not a field, read to the end of the line before
        "word_token_one_line": lambda n: _fill(lambda i: 'mytoken: "abc ', n)[0],
        # key prefixes inside one run of key characters: tried once, not at every prefix
        "sk_run": lambda n: _fill(lambda i: "sk-", n)[0],
        # a remembered secret quoted thousands of times in one string
        "remembered_repeated": lambda n: "password=hunter2hunter2 " + _fill(lambda i: "hunter2hunter2 ", n)[0],
    }[case]
    big = make(200_000)
    out = Redactor(KEY).text(big)
    if case == "remembered_repeated":
        assert "hunter2" not in out and len(TOKEN.findall(out)) == big.count("hunter2hunter2")
    else:
        assert out == big  # nothing there to redact
