"""Tree-aware alignment: which original span pairs with which replay span."""

from __future__ import annotations

import random

import pytest

from tests.builders import TraceBuilder, make_span
from tracetui.core.diff import align as align_mod
from tracetui.core.diff import lcs as lcs_mod
from tracetui.core.diff.align import AlignedRow, align, align_with_same_keys, span_key
from tracetui.core.model import Span


def _names(rows: list[AlignedRow], a: list[Span], b: list[Span]) -> list[tuple[str | None, str | None, int]]:
    """Rows as (original name, replay name, depth): easy to read in assertions."""
    return [
        (a[r.original].span_id if r.original is not None else None,
         b[r.replay].span_id if r.replay is not None else None,
         r.depth)
        for r in rows
    ]


def _flat(prefix: str, calls: list[tuple[str, dict]]) -> list[Span]:
    """An agent root with one tool child per call, span ids ``<prefix><tool><n>``."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    seen: dict[str, int] = {}
    for tool, args in calls:
        seen[tool] = seen.get(tool, 0) + 1
        t.add("tool", tool, parent=root, arguments=args, output={"ok": True},
              span_id=f"{prefix}{tool}{seen[tool]}")
    return t.spans


def _assert_complete(rows: list[AlignedRow], a: list[Span], b: list[Span]) -> None:
    assert sorted(r.original for r in rows if r.original is not None) == list(range(len(a)))
    assert sorted(r.replay for r in rows if r.replay is not None) == list(range(len(b)))


def test_identical_runs_pair_every_span_in_order() -> None:
    """Two runs with the same calls pair span for span, depth first."""
    a = _flat("o", [("search", {"q": 1}), ("fetch", {"id": 2})])
    b = _flat("r", [("search", {"q": 1}), ("fetch", {"id": 2})])
    assert _names(align(a, b), a, b) == [
        ("oroot", "rroot", 0), ("osearch1", "rsearch1", 1), ("ofetch1", "rfetch1", 1),
    ]


def test_inserted_call_is_replay_only_and_later_siblings_stay_paired() -> None:
    """A call only in the replay is one replay-only row; the calls after it still pair."""
    a = _flat("o", [("a", {}), ("b", {}), ("c", {})])
    b = _flat("r", [("a", {}), ("x", {}), ("b", {}), ("c", {})])
    assert _names(align(a, b), a, b)[1:] == [
        ("oa1", "ra1", 1), (None, "rx1", 1), ("ob1", "rb1", 1), ("oc1", "rc1", 1),
    ]


def test_deleted_call_is_original_only() -> None:
    """A call the replay never made is one original-only row."""
    a = _flat("o", [("a", {}), ("b", {}), ("c", {})])
    b = _flat("r", [("a", {}), ("c", {})])
    assert _names(align(a, b), a, b)[1:] == [("oa1", "ra1", 1), ("ob1", None, 1), ("oc1", "rc1", 1)]


def test_same_tool_with_other_arguments_pairs_inside_a_replace_block() -> None:
    """Same tool, changed arguments: the two calls pair (to report args_mismatch)."""
    a = _flat("o", [("a", {}), ("search", {"q": "x"}), ("c", {})])
    b = _flat("r", [("a", {}), ("search", {"q": "y"}), ("c", {})])
    assert _names(align(a, b), a, b)[2] == ("osearch1", "rsearch1", 1)


def test_different_tools_never_pair() -> None:
    """A call of another tool at the same place is a delete plus an insert, never a pair."""
    a = _flat("o", [("a", {}), ("refund", {"id": 1}), ("c", {})])
    b = _flat("r", [("a", {}), ("cancel", {"id": 1}), ("c", {})])
    assert _names(align(a, b), a, b)[2:4] == [("orefund1", None, 1), (None, "rcancel1", 1)]


def test_replace_block_pairs_the_most_similar_call() -> None:
    """Two candidate calls of one tool: the replay's call pairs with the closer arguments."""
    a = _flat("o", [("a", {}), ("search", {"query": "refund policy for order 17"}),
                    ("search", {"query": "shipping delays north region"}), ("c", {})])
    b = _flat("r", [("a", {}), ("search", {"query": "shipping delays in the north region"}), ("c", {})])
    names = _names(align(a, b), a, b)
    assert ("osearch2", "rsearch1", 1) in names
    assert ("osearch1", None, 1) in names


def test_moved_block_pairs_one_copy_and_leaves_the_other_one_sided() -> None:
    """Calls moved later pair with the longest common order; the moved ones are one-sided."""
    a = _flat("o", [("a", {}), ("b", {}), ("c", {}), ("d", {})])
    b = _flat("r", [("c", {}), ("d", {}), ("a", {}), ("b", {})])
    rows = align(a, b)
    _assert_complete(rows, a, b)
    pairs = [(o, r) for o, r, _ in _names(rows, a, b) if o and r]
    assert len(pairs) == 3  # root + one block of two
    assert pairs[1:] in ([("oa1", "ra1"), ("ob1", "rb1")], [("oc1", "rc1"), ("od1", "rd1")])


def test_extra_child_under_unchanged_parent_keeps_parent_and_siblings_paired() -> None:
    """One extra grandchild: its parent stays paired, and so do the parent's later siblings."""
    def run(prefix: str, extra: bool) -> list[Span]:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", span_id=f"{prefix}root")
        step = t.add("agent", "step", parent=root, span_id=f"{prefix}step")
        t.add("tool", "lookup", parent=step, arguments={"id": 1}, span_id=f"{prefix}lookup")
        if extra:
            t.add("tool", "retry", parent=step, arguments={"id": 1}, span_id=f"{prefix}retry")
        t.add("llm", "chat", parent=root, model="m", span_id=f"{prefix}chat")
        t.add("tool", "reply", parent=root, arguments={}, span_id=f"{prefix}reply")
        return t.spans

    a, b = run("o", False), run("r", True)
    assert _names(align(a, b), a, b) == [
        ("oroot", "rroot", 0),
        ("ostep", "rstep", 1),
        ("olookup", "rlookup", 2),
        (None, "rretry", 2),
        ("ochat", "rchat", 1),
        ("oreply", "rreply", 1),
    ]


def test_unpaired_span_takes_its_subtree_one_sided() -> None:
    """A sub-agent only in the original: it and all its descendants are original-only rows."""
    t = TraceBuilder("o")
    root = t.add("agent", "agent", span_id="oroot")
    sub = t.add("agent", "researcher", parent=root, span_id="osub")
    t.add("tool", "search", parent=sub, arguments={}, span_id="osearch")
    t.add("llm", "chat", parent=root, model="m", span_id="ochat")
    u = TraceBuilder("r")
    rroot = u.add("agent", "agent", span_id="rroot")
    u.add("llm", "chat", parent=rroot, model="m", span_id="rchat")
    assert _names(align(t.spans, u.spans), t.spans, u.spans) == [
        ("oroot", "rroot", 0), ("osub", None, 1), ("osearch", None, 2), ("ochat", "rchat", 1),
    ]


def test_repeated_identical_calls_pair_in_order() -> None:
    """Identical repeated calls pair first with first; a missing repeat is the last one."""
    a = _flat("o", [("poll", {"id": 1})] * 4)
    b = _flat("r", [("poll", {"id": 1})] * 3)
    names = _names(align(a, b), a, b)
    assert names[1:] == [("opoll1", "rpoll1", 1), ("opoll2", "rpoll2", 1), ("opoll3", "rpoll3", 1),
                         ("opoll4", None, 1)]


def test_runs_with_no_common_key_still_pair_by_kind() -> None:
    """Disjoint keys (every argument changed): calls of the same tool still pair up in order."""
    a = _flat("o", [("get", {"id": i}) for i in range(5)])
    b = _flat("r", [("get", {"id": i + 100}) for i in range(5)])
    names = _names(align(a, b), a, b)
    assert names[1:] == [(f"oget{i}", f"rget{i}", 1) for i in range(1, 6)]


def test_llm_with_changed_model_pairs_with_its_counterpart() -> None:
    """An LLM call whose model (and so span name) changed pairs, instead of missing + extra."""
    t = TraceBuilder("o")
    root = t.add("agent", "agent")
    t.add("llm", "chat gpt-4o", parent=root, model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    u = TraceBuilder("r")
    rroot = u.add("agent", "agent")
    u.add("llm", "chat gpt-4o-mini", parent=rroot, model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    rows = align(t.spans, u.spans)
    assert [(r.original, r.replay) for r in rows] == [(0, 0), (1, 1)]


def test_json_string_arguments_align_with_the_same_object() -> None:
    """Arguments recorded as a JSON string share the key of the same object (any key order)."""
    a = make_span("tool", "get", arguments='{"b": 1, "a": 2}')
    b = make_span("tool", "get", arguments={"a": 2, "b": 1})
    assert span_key(a) == span_key(b)


def test_output_is_not_part_of_the_key() -> None:
    """The same call with another output pairs directly (the output is compared, not matched)."""
    a = make_span("tool", "get", arguments={"id": 1}, output={"v": 1})
    b = make_span("tool", "get", arguments={"id": 1}, output={"v": 2})
    assert span_key(a) == span_key(b)


def test_deep_tree_aligns_without_recursion_error() -> None:
    """A 10,000-deep chain aligns (iteratively) with one extra leaf at the bottom."""
    depth = 10_000

    def chain(prefix: str, extra: bool) -> list[Span]:
        spans = [make_span("agent", "step", span_id=f"{prefix}{i}", parent_id=f"{prefix}{i - 1}" if i else None, seq=i)
                 for i in range(depth)]
        if extra:
            spans.append(make_span("tool", "t", span_id=f"{prefix}x", parent_id=f"{prefix}{depth - 1}", seq=depth))
        return spans

    a, b = chain("o", False), chain("r", True)
    rows = align(a, b)
    assert len(rows) == depth + 1
    assert rows[-1] == AlignedRow(None, depth, depth)
    assert all(r.original == r.replay == r.depth for r in rows[:-1])


def test_missing_parent_makes_a_root_and_cycles_are_broken() -> None:
    """Spans naming an absent parent are roots; a parent cycle is broken at its earliest span."""
    a = [make_span("tool", "w", span_id="w", parent_id="y", seq=0),  # hangs below the cycle
         make_span("tool", "t", span_id="x", parent_id="y", seq=1),
         make_span("tool", "u", span_id="y", parent_id="x", seq=2),
         make_span("tool", "v", span_id="z", parent_id="nowhere", seq=3)]
    b = list(a)
    rows = align(a, b)
    _assert_complete(rows, a, b)
    assert all(r.original == r.replay for r in rows)
    assert [(a[r.original].span_id, r.depth) for r in rows if r.original is not None] == [
        ("x", 0), ("y", 1), ("w", 2), ("z", 0),
    ]


def test_empty_sides() -> None:
    """An empty replay makes every original span one-sided, and vice versa."""
    a = _flat("o", [("a", {})])
    assert [(r.original, r.replay) for r in align(a, [])] == [(0, None), (1, None)]
    assert [(r.original, r.replay) for r in align([], a)] == [(None, 0), (None, 1)]
    assert align([], []) == []


def test_large_edit_count_falls_back_beyond_the_myers_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_D edits the alignment comes from rapidfuzz and is still complete and in order."""
    monkeypatch.setattr(align_mod, "MAX_D", 3)
    rnd = random.Random(7)
    calls = [(f"t{rnd.randrange(30)}", {"i": i}) for i in range(300)]
    edited = list(calls)
    for _ in range(40):
        edited[rnd.randrange(len(edited))] = (f"t{rnd.randrange(30)}", {"i": -1})
    a, b = _flat("o", calls), _flat("r", edited)
    rows = align(a, b)
    _assert_complete(rows, a, b)
    paired = [(r.original, r.replay) for r in rows if r.original is not None and r.replay is not None]
    assert paired == sorted(paired) and len({p[1] for p in paired}) == len(paired)
    assert len(paired) >= 260


def test_myers_finds_a_longest_common_subsequence() -> None:
    """Myers' blocks are in order, equal, and as long in total as a dynamic-programming LCS."""
    def lcs(x: list[int], y: list[int]) -> int:
        t = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
        for i, u in enumerate(x):
            for j, v in enumerate(y):
                t[i + 1][j + 1] = t[i][j] + 1 if u == v else max(t[i][j + 1], t[i + 1][j])
        return t[-1][-1]

    rnd = random.Random(3)
    for _ in range(400):
        x = [rnd.randrange(5) for _ in range(rnd.randint(1, 20))]
        y = [rnd.randrange(5) for _ in range(rnd.randint(1, 20))]
        blocks = lcs_mod.myers(x, y, 100)
        assert blocks is not None
        i0 = j0 = 0
        for i, j, size in blocks:
            assert i >= i0 and j >= j0 and size > 0 and x[i:i + size] == y[j:j + size]
            i0, j0 = i + size, j + size
        assert sum(size for _, _, size in blocks) == lcs(x, y)
    assert lcs_mod.myers([1, 2, 3, 4], [5, 6, 7, 8], 3) is None


def test_keys_keep_json_types_apart() -> None:
    """1, 1.0, true and "1" are different identities, as their canonical bytes differ."""
    keys = {span_key(make_span("retrieval", "r", index="kb", query=q)) for q in (1, 1.0, True, "1")}
    assert len(keys) == 4
    keys = {span_key(make_span("tool", "t", arguments={"n": v})) for v in (1, 1.0, True, "1")}
    assert len(keys) == 4


def _steps(prefix: str, rnd: random.Random, steps: int, edits: int) -> list[Span]:
    """agent -> steps -> (llm, tools, and sometimes a nested sub-agent with its own tool), with random edits."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    edit_at = set(rnd.sample(range(steps), edits))
    for i in range(steps):
        step = t.add("agent", "step", parent=root)
        t.add("llm", "chat", parent=step, model="m")
        for j in range(1 + i % 3):
            t.add("tool", f"t{j}", parent=step, arguments={"i": i, "j": j if i not in edit_at else -1})
        if i % 4 == 0:
            sub = t.add("agent", "sub", parent=step)
            t.add("tool", "deep", parent=sub, arguments={"i": i})
        if i in edit_at and i % 2:
            t.add("tool", "extra", parent=step, arguments={})
    return t.spans


def test_same_key_flags_say_which_pairs_have_equal_keys() -> None:
    """``align_with_same_keys`` rows equal ``align``'s; each flag is True exactly for a pair with equal keys."""
    rnd = random.Random(11)
    a, b = _steps("o", rnd, 60, 0), _steps("r", rnd, 60, 9)
    rows, same = align_with_same_keys(a, b)
    assert rows == align(a, b)
    _assert_complete(rows, a, b)
    assert len(same) == len(rows)
    for row, flag in zip(rows, same):
        both = row.original is not None and row.replay is not None
        assert flag == (both and span_key(a[row.original]) == span_key(b[row.replay]))  # type: ignore[index]
    assert 0 < sum(same) < len(rows)
    # Depth-first: a row's depth is at most one more than the row before it.
    assert all(r.depth <= p.depth + 1 for p, r in zip(rows, rows[1:]))


def test_single_roots_of_one_kind_pair_even_when_renamed() -> None:
    """A run's one root pairs with the replay's one root of the same kind, renamed or not; the tree below stays paired."""
    a = TraceBuilder("o")
    root = a.add("agent", "invoke_agent billing-agent")
    a.add("tool", "lookup", parent=root, tool_name="lookup", arguments={"id": 1})
    b = TraceBuilder("r")
    root_b = b.add("agent", "invoke_agent billing-agent-v2")
    b.add("tool", "lookup", parent=root_b, tool_name="lookup", arguments={"id": 1})
    rows = align(a.spans, b.spans)
    assert [(r.original, r.replay) for r in rows] == [(0, 0), (1, 1)]


def test_double_encoded_and_big_integer_arguments_key_like_the_object() -> None:
    """Arguments recorded as an object, a JSON string, or a JSON string of a JSON string are one
    key; integers beyond 64 bits (orjson cannot serialise them) still key by value, not by identity."""
    import json

    args = {"order": 17, "ids": [1, 2]}
    once = json.dumps(args)
    twice = json.dumps(once)
    keys = {span_key(make_span("tool", "lookup", arguments=a)) for a in (args, once, twice)}
    assert len(keys) == 1
    big = {"id": 2**70}
    assert span_key(make_span("tool", "lookup", arguments=big)) == span_key(make_span("tool", "lookup", arguments={"id": 2**70}))
    assert span_key(make_span("tool", "lookup", arguments=big)) != span_key(make_span("tool", "lookup", arguments={"id": 2**70 + 1}))


def test_a_prepared_original_aligns_every_replay_as_a_fresh_one() -> None:
    """``prepare`` once, align many replays (watch mode): the rows are those of a fresh alignment, the replace
    blocks' pairing groups included (they are interned per call: a group id kept from another call would pair
    a tool call with another tool's)."""
    rng = random.Random(7)
    tools = ["lookup", "refund", "send_email", "get_order"]

    def run(prefix: str, calls: list[tuple[str, int]]) -> list[Span]:
        t = TraceBuilder(prefix=prefix)
        root = t.add("agent", "support")
        for name, arg in calls:
            t.add("tool", f"execute_tool {name}", parent=root, tool_name=name, arguments={"k": arg})
        return t.trace().spans

    base = [(rng.choice(tools), rng.randrange(5)) for _ in range(60)]
    original = run("o", base)
    side = align_mod.prepare(original)
    for trial in range(12):
        calls = list(base)
        for _ in range(trial * 2):  # replace a few calls: other tools, other arguments
            i = rng.randrange(len(calls))
            calls[i] = (rng.choice(tools), rng.randrange(5))
        replay = run("r", calls[: rng.randrange(20, len(calls) + 1)])  # and a replay cut short (watch mode)
        assert align_with_same_keys(original, replay, original_side=side) == align_with_same_keys(original, replay)
