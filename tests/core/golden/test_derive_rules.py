"""Contract derivation's small rules one by one (golden.derive): case names, what counts as a write, which run is
a fixture replay (docs/golden.md, "Promote").

Written from the rules, to pin what the mutation run of ``derive.py``'s small functions found unpinned
(tests/mutation_equivalents.md, "core/golden/derive.py").
"""

from __future__ import annotations

import pytest
from builders import TraceBuilder, make_span

from tracetui.core.golden.clauses import GoldenCaseError
from tracetui.core.golden.derive import (
    derive_contract,
    derive_name,
    is_fixture_replay,
    is_write,
    parse_contract_text,
    slugify,
)
from tracetui.core.model import Trace


def test_a_slug_is_lower_case_ascii_words_joined_by_single_dashes() -> None:
    assert slugify("  The Agent's REFUND -- failed!  ") == "the-agent-s-refund-failed"
    assert slugify("Réservation à 15h") == "r-servation-15h"
    assert slugify("¿?!") == ""


def test_a_long_slug_is_cut_at_a_dash_within_the_limit() -> None:
    assert slugify("alpha-beta-gamma", max_len=12) == "alpha-beta"  # "alpha-beta-g" cut back to a whole word
    assert slugify("alpha-beta-gamma", max_len=11) == "alpha-beta"  # the cut ends on the dash
    assert slugify("alphabetagamma", max_len=5) == "alpha"  # one word: cut inside it
    assert slugify("alpha-beta", max_len=10) == "alpha-beta"  # at the limit: whole
    assert slugify("a" * 61 + " b") == "a" * 60  # 60 by default
    assert len(slugify("word " * 40)) <= 60 and slugify("word " * 40).endswith("word")


def test_a_case_name_is_six_significant_words_of_the_failure_else_the_run_id_else_case() -> None:
    failure = "The agent said it was moved to Friday without checking the open slots first"
    assert derive_name(failure, "run-1") == "said-moved-friday-checking-open-slots"
    assert derive_name("the agent was to", "Run 2026/11/03 #42") == "run-2026-11-03-42"  # only stop words
    # the statement is read whole, not only its first 60 characters
    assert derive_name("the " * 20 + "refund issued twice to the customer", None) == "refund-issued-twice-customer"
    assert derive_name("", "run-7") == "run-7"
    assert derive_name(None, "!!") == "case"
    assert derive_name(None, None) == "case"


def test_a_write_is_a_tool_call_marked_write_or_absent_from_the_read_tools() -> None:
    header = {"read_tools": ["get_order"]}
    assert is_write(make_span("tool", "refund", effect="write"), {})
    assert not is_write(make_span("tool", "refund", effect="read"), header)
    assert is_write(make_span("tool", "refund"), header)  # not listed as a read
    assert not is_write(make_span("tool", "get_order"), header)
    assert not is_write(make_span("tool", "refund"), {})  # nothing says: not a write
    assert not is_write(make_span("tool", "refund"), {"read_tools": "get_order"})
    assert not is_write(make_span("llm", "refund", effect="write"), {})


def _root(summary: object = None, header: dict | None = None) -> Trace:
    b = TraceBuilder()
    b.add("agent", "agent", attributes={} if summary is None else {"replay.summary": summary})
    b.add("tool", "get", parent="s0", arguments={}, output={}, attributes={"replay.summary": {"mode": "fixture"}})
    t = b.trace()
    t.header = header or {}
    return t


def test_a_fixture_replay_says_so_in_its_root_summary_or_its_header() -> None:
    assert is_fixture_replay(_root({"mode": "fixture"}))
    assert not is_fixture_replay(_root({"mode": "strict"}))
    assert not is_fixture_replay(_root("fixture"))  # a summary that is not an object
    assert not is_fixture_replay(_root())  # only a child span's summary
    assert is_fixture_replay(_root({"mode": "strict"}, {"record_mode": "fixture"}))
    assert not is_fixture_replay(_root(None, {"record_mode": "strict"}))
    assert not is_fixture_replay(None)


def test_an_edited_contract_is_returned_as_data_once_valid_and_its_errors_name_the_file() -> None:
    text = "schema: tracetui-contract/1\nmust_call:\n  - {id: a, tool: t}\n"
    assert parse_contract_text(text) == {"schema": "tracetui-contract/1", "must_call": [{"id": "a", "tool": "t"}]}
    with pytest.raises(GoldenCaseError) as exc:
        parse_contract_text("schema: tracetui-contract/1\nmust_call:\n  - {id: a}\n")
    assert str(exc.value) == "contract.yaml: must_call[0].tool: missing"
    with pytest.raises(GoldenCaseError) as exc:
        parse_contract_text("schema: x\n", "golden/c/contract.yaml")
    assert exc.value.path == "golden/c/contract.yaml"


def _claimed(answer: str) -> str | None:
    """The success words ``derive_contract`` finds in a run's answer, as its note names them (no write in the run)."""
    b = TraceBuilder()
    root = b.add("agent", "agent", output=answer)
    b.add("tool", "get_order", parent=root, arguments={"id": 1}, output={"ok": True})
    t = b.trace()
    t.header = {"read_tools": ["get_order"]}
    notes = [n for n in derive_contract(t).notes if n.startswith("the final answer claims success (")]
    return notes[0].split("(", 1)[1].split(")", 1)[0] if notes else None


def test_a_success_claim_is_a_success_word_not_negated_in_its_clause_nor_after_fully() -> None:
    assert _claimed("Your appointment is moved and confirmed.") == "moved, confirmed"  # in the words' order
    assert _claimed("It is all   done") == "all done"  # words apart by any space; "done" alone is inside it
    assert _claimed("Sorry, it couldn't be moved.") is None
    assert _claimed("It is fully booked.") is None  # a state, not a claim
    assert _claimed("Not a problem. Refund processed.") == "processed"  # the negation is in another sentence
    assert _claimed("It couldn't be moved at first, but now it is moved.") == "moved"  # a later match claims
    assert _claimed("It was not so very much truly moved") == "moved"  # a negation five words back is too far
    assert _claimed("It was not very much truly moved") is None
