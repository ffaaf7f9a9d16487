"""docs/triage.md, step 3: the verdict rules and their order, on small built runs (issue 25, statement 6).

The original asks for ``get_order`` then ``refund``; a trial that reproduces makes the same calls, one that does
not asks for ``cancel`` instead (the model deciding otherwise on identical inputs).
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import TraceBuilder

from tracetui.core.model import Trace
from tracetui.core.triage import triage

HEADER = {"schema": "tracetui/1", "run_id": "r1", "start_ns": 1_762_161_242_118_000_000,
          "clock": {"now": "2025-11-03T09:14:02+00:00"}, "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc"}
ASK = [{"role": "user", "content": "refund order 5531"}]


def _call(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": name, "arguments": '{"id": 5531}'}]}


def run(prefix: str, then: str = "refund", prompt: str = "v5", stale: bool = False) -> Trace:
    """A support run: the model reads the order (twice, the second read differing, when ``stale``) and then
    asks for ``then``; ``prompt`` is the system prompt's version (span and header)."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "support", input={"q": "refund 5531"}, output={"answer": "done"})
    llm = {"model": "gpt-4o", "prompt_version": prompt, "tool_schemas_hash": "abc"}
    t.add("llm", "chat", parent=root, messages=ASK, output=_call("get_order"), **llm)
    t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": "shipped"}, effect="read")
    if stale:
        t.add("tool", "get_order", parent=root, arguments={"id": 5531}, output={"status": "lost"}, effect="read")
    t.add("llm", "chat", parent=root, messages=[*ASK, {"role": "tool", "content": "shipped"}], output=_call(then), **llm)
    t.add("tool", then, parent=root, arguments={"id": 5531}, output={"ok": True}, effect="write")
    trace = t.trace()
    trace.header = {**HEADER, "prompt_versions": {"support.system": prompt}}
    return trace


def verdict(original: Trace, *trials: Trace) -> tuple[str | None, int, int, list[str]]:
    r = triage(original, list(trials))
    assert r.reproduction is not None
    return r.verdict, r.reproduction.reproduced, r.reproduction.trials, [x.rule for x in r.reasons]


def test_all_trials_reproducing_is_model_or_prompt() -> None:
    v, k, n, rules = verdict(run("o"), run("a"), run("b"))
    assert (v, k, n) == ("model_or_prompt", 2, 2) and "most_reproduce" in rules


def test_exactly_half_reproducing_is_variance_not_model_or_prompt() -> None:
    """"more than half": 1 of 2 is not."""
    v, k, n, rules = verdict(run("o"), run("a"), run("b", then="cancel"))
    assert (v, k, n) == ("variance", 1, 2) and "some_reproduce" in rules and "most_reproduce" not in rules


def test_two_of_three_reproducing_is_model_or_prompt() -> None:
    v, k, n, _ = verdict(run("o"), run("a"), run("b"), run("c", then="cancel"))
    assert (v, k, n) == ("model_or_prompt", 2, 3)


def test_two_of_three_where_the_third_changed_the_prompt_version_is_code_or_config_change() -> None:
    """The config check comes before the rate: swapping them makes this model_or_prompt."""
    v, k, n, rules = verdict(run("o"), run("a"), run("b"), run("c", then="cancel", prompt="v6"))
    assert (v, k, n) == ("code_or_config_change", 2, 3)
    assert rules[rules.index("reproduction") + 1:] == ["config_field", "header_change"]


def test_a_changed_prompt_in_a_trial_that_reproduced_is_not_a_config_verdict() -> None:
    v, k, n, _ = verdict(run("o"), run("a"), run("b"), run("c", prompt="v6"))
    assert (v, k, n) == ("model_or_prompt", 3, 3)


def test_no_trial_reproducing_and_every_cause_the_model_is_variance() -> None:
    v, k, n, rules = verdict(run("o"), run("a", then="cancel"), run("b", then="cancel"))
    assert (v, k, n) == ("variance", 0, 2) and rules.count("model_decided") == 2


def test_no_trial_reproducing_every_cause_the_model_and_a_stale_read_is_data_or_integration() -> None:
    """The case docs/triage.md's table and the code disagreed on (issue 25): the stale read is checked before the
    all-model variance. The original read the same record twice and got two answers: evidence on the original
    itself, which replays with recorded tools (serving both answers again) cannot test; the table now says so."""
    v, k, n, rules = verdict(run("o", stale=True), run("a", then="cancel", stale=True),
                             run("b", then="cancel", stale=True))
    assert (v, k, n) == ("data_or_integration", 0, 2) and "stale_read" in rules and "model_decided" not in rules


@pytest.mark.parametrize("k, n, expected", [(1, 2, "variance"), (2, 3, "model_or_prompt"), (1, 3, "variance"),
                                            (2, 4, "variance"), (3, 4, "model_or_prompt")])
def test_more_than_half_is_the_threshold(k: int, n: int, expected: str) -> None:
    trials = [run(f"t{i}") if i < k else run(f"t{i}", then="cancel") for i in range(n)]
    assert verdict(run("o"), *trials)[:3] == (expected, k, n)
