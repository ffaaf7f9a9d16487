"""Big tie groups (readers/ties.py): a second-precision clock, or an export whose spans all start at once.

The rules of ``order_ties`` hold for a group of any size, found through indexes, never by comparing every pair
(a 20k-observation export whose copies start in the same instant took 8 minutes that way): each group's order
and ambiguity report equal those of the pairwise definition (``_depends`` on every pair, Kahn's algorithm, every
sibling pair checked for a path between them), on random groups; and a big group is ordered without one
pairwise comparison.
"""

from __future__ import annotations

import heapq
import random
from typing import Any

import pytest

from tests.builders import make_span
from tracetui.core.model import ReadIssue, Span
from tracetui.core.readers import ties
from tracetui.core.readers.ties import order_ties

T = 1_762_161_242_118_000_000


def _reference(group: list[Span]) -> tuple[list[str], list[tuple[str, str]]]:
    """The definition, pair by pair: the group's order, and every ambiguous sibling pair in (x, y) order."""
    n = len(group)
    after: dict[int, set[int]] = {k: set() for k in range(n)}
    for x, a in enumerate(group):
        for y, b in enumerate(group):
            if x != y and ties._depends(b, a):
                after[y].add(x)
    ordered: list[int] = []
    heap = [k for k, deps in after.items() if not deps]
    heapq.heapify(heap)
    placed: set[int] = set()
    while heap:
        k = heapq.heappop(heap)
        ordered.append(k)
        placed.add(k)
        for m, deps in after.items():
            if m not in placed and m not in heap and k in deps and deps <= placed:
                heapq.heappush(heap, m)
    ordered += [k for k in range(n) if k not in placed]

    def related(x: int, y: int) -> bool:  # y follows x through the dependencies
        seen: set[int] = set()
        todo = [y]
        while todo:
            k = todo.pop()
            if x in after[k]:
                return True
            for d in after[k] - seen:
                seen.add(d)
                todo.append(d)
        return False

    amb = [(group[x].span_id, group[y].span_id) for x in range(n) for y in range(x + 1, n)
           if group[x].parent_id == group[y].parent_id and not related(x, y) and not related(y, x)]
    return [group[k].span_id for k in ordered], amb


def _random_group(rng: random.Random, n: int) -> list[Span]:
    """``n`` spans starting at once: parents among them (or outside, or none), llm calls asking for tools by
    call id, tools whose results later llm calls quote (by call id, by the same text, by an equal JSON value
    written otherwise), duplicate ids, and now and then a parent cycle."""
    spans: list[Span] = []
    ids = [f"s{k}" for k in range(n)]
    if n > 3 and rng.random() < 0.3:
        ids[rng.randrange(n)] = ids[rng.randrange(n)]  # a duplicate id
    outputs = [{"n": 1}, {"n": 1.0}, "plain text", [1, True], {"a": {"b": [1, 2]}}, None, ""]
    for k in range(n):
        parent = rng.choice([None, "outside", *ids[:max(1, k + rng.choice([-2, 0, 3]))]])
        kind = rng.choice(["tool", "llm", "agent"])
        if kind == "tool":
            s = make_span("tool", "t", span_id=ids[k], parent_id=parent, seq=-1, start_ns=T,
                          call_id=rng.choice([None, "", "c1", "c2", "c3"]), arguments={},
                          output=rng.choice(outputs))
        elif kind == "llm":
            msgs: list[Any] = [{"role": "user", "content": "q"}]
            for _ in range(rng.randrange(3)):
                msgs.append({"role": "tool", "tool_call_id": rng.choice([None, "c1", "c2", "c9"]),
                             "content": rng.choice(['{"n": 1}', '{"n":1.0}', "plain text", "[1, 1]", '[1,true]',
                                                    '{"a":{"b":[1,2]}}', "x", 3])})
            calls = [{"id": rng.choice(["c1", "c2", "c3", None]), "name": "t"} for _ in range(rng.randrange(3))]
            s = make_span("llm", "chat", span_id=ids[k], parent_id=parent, seq=-1, start_ns=T, messages=msgs,
                          output={"role": "assistant", "tool_calls": calls} if rng.random() < 0.8 else "text")
        else:
            s = make_span("agent", "a", span_id=ids[k], parent_id=parent, seq=-1, start_ns=T)
        spans.append(s)
    return spans


@pytest.mark.parametrize("seed", range(300))
def test_a_group_is_ordered_and_reported_as_the_pairwise_definition_says(seed: int) -> None:
    rng = random.Random(seed)
    group = _random_group(rng, rng.randrange(2, 14))
    want_order, want_amb = _reference(group)
    issues: list[ReadIssue] = []
    got = order_ties(list(group), "f.json", issues)
    assert [s.span_id for s in got] == want_order
    if not want_amb:
        assert issues == []
    else:
        (issue,) = issues
        a, b = want_amb[0]
        assert f"spans {a!r}" in issue.message and f"and {b!r}" in issue.message
        more = f"{len(want_amb) - 1} more such pair(s)"
        assert (more in issue.message) == (len(want_amb) > 1), (issue.message, len(want_amb))


def test_a_big_group_is_ordered_without_comparing_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 spans in one instant (agents, each asking a tool and quoting its result): the rules hold, and no
    pair was compared (``_depends`` is the pairwise test: 9 million calls for this group)."""
    calls = [0]
    real = ties._depends

    def counted(b: Span, a: Span) -> bool:
        calls[0] += 1
        return real(b, a)

    monkeypatch.setattr(ties, "_depends", counted)
    group: list[Span] = []
    for k in range(750):
        group += [
            make_span("llm", "answer", span_id=f"ans{k}", parent_id=f"ag{k}", seq=-1, start_ns=T,
                      messages=[{"role": "tool", "tool_call_id": f"c{k}", "content": "ok"}], output="done"),
            make_span("tool", "t", span_id=f"tool{k}", parent_id=f"ag{k}", seq=-1, start_ns=T, call_id=f"c{k}",
                      arguments={}, output={"k": k}),
            make_span("llm", "ask", span_id=f"ask{k}", parent_id=f"ag{k}", seq=-1, start_ns=T, messages=[],
                      output={"tool_calls": [{"id": f"c{k}", "name": "t"}]}),
            make_span("agent", "a", span_id=f"ag{k}", parent_id=None, seq=-1, start_ns=T),
        ]
    issues: list[ReadIssue] = []
    got = [s.span_id for s in order_ties(group, "f.json", issues)]
    assert calls[0] == 0
    for k in range(750):  # agent, then the call asking, the tool, the call quoting it
        pos = [got.index(f"{p}{k}") for p in ("ag", "ask", "tool", "ans")]
        assert pos == sorted(pos)
    (issue,) = issues  # the 750 agents are root siblings with nothing between them
    assert "spans 'ag0' (a) and 'ag1' (a)" in issue.message
    assert f"{750 * 749 // 2 - 1} more such pair(s)" in issue.message


def test_ids_that_cannot_be_dict_keys_are_compared_pair_by_pair_with_the_same_result() -> None:
    """A malformed file: a call id that is a list (no index can hold it). The group is ordered by comparing every
    pair, as the definition does: the model call asking for that call id first, then the tool."""
    group = [
        make_span("tool", "t", span_id="tool", parent_id="ag", seq=-1, start_ns=T, call_id=["c", 1], arguments={},
                  output="ok"),
        make_span("llm", "ask", span_id="ask", parent_id="ag", seq=-1, start_ns=T, messages=[],
                  output={"tool_calls": [{"id": ["c", 1], "name": "t"}]}),
        make_span("agent", "a", span_id="other", parent_id="ag", seq=-1, start_ns=T),
    ]
    want_order, want_amb = _reference(group)
    issues: list[ReadIssue] = []
    assert [s.span_id for s in order_ties(list(group), "f.json", issues)] == want_order == ["ask", "tool", "other"]
    (issue,) = issues
    assert f"{len(want_amb) - 1} more such pair(s)" in issue.message
