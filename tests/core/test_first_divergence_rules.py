"""The first-divergence rule of ``core/diff/trace_diff.py``, one test per rule (issue 25; mutation-tested:
``scripts/mutation.py trace_diff``, tests/mutation_equivalents.md).

docs/format.md, "Divergence order and the first divergence": a divergence sits at its row's start event
(input side, one-sided rows) or end event (output side, and a one-sided root wrapping the shared run);
where the runs fork, the replay's own steps come first. Each expectation below is written from that rule on a
small built pair, and, where it helps, checked against an explicit walk of the merged tree's events.
"""

from __future__ import annotations

import gc
from dataclasses import fields, replace
from typing import Any

import pytest

from tests.builders import TraceBuilder, row_events
from tracetui.core.diff import DivergenceType, TraceDiff, diff_traces
from tracetui.core.diff import align as align_module
from tracetui.core.diff.compare import ABSENT, payload_sig
from tracetui.core.diff.trace_diff import row_divergence
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers.lazyspan import LazySpan

T = DivergenceType


def _seen(d: TraceDiff) -> list[tuple[str, str]]:
    """The divergences in order: type and the name of the span it is on."""
    return [(x.type.value, (x.original or x.replay).name) for x in d.divergences]  # type: ignore[union-attr]


# -- where the runs fork ------------------------------------------------------------------------------------------

def test_a_missing_call_and_a_later_unrecorded_call_with_a_shared_call_between_are_no_fork() -> None:
    """Only one-sided rows next to each other form a fork: a call the replay skipped, then a shared call, then a call
    the replay added stay in the original's order (the skipped call first)."""
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    o.add("tool", "audit", parent=root, arguments={"id": 1}, output=1)
    o.add("tool", "lookup", parent=root, arguments={"id": 2}, output=2)
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("tool", "lookup", parent=rroot, arguments={"id": 2}, output=2)
    r.add("tool", "refund", parent=rroot, arguments={"id": 3}, output=3)
    d = diff_traces(o.trace(), r.trace())
    assert _seen(d) == [("missing_call", "audit"), ("unrecorded_call", "refund")]
    enter, _ = row_events(d)
    assert [x.order for x in d.divergences] == [enter[x.row] for x in d.divergences]


def test_in_a_fork_the_replays_calls_come_first_and_a_later_replay_call_stays_after_the_originals() -> None:
    """``x`` replaced by ``z`` (a fork: ``z`` first, then ``x``), then a shared call, then a call only the replay
    made: it stays after ``x``, however the fork's block is scanned."""
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    o.add("tool", "x", parent=root, arguments={"id": 1}, output=1)
    o.add("tool", "shared", parent=root, arguments={"id": 2}, output=2)
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("tool", "z", parent=rroot, arguments={"id": 9}, output=9)
    r.add("tool", "shared", parent=rroot, arguments={"id": 2}, output=2)
    r.add("tool", "w", parent=rroot, arguments={"id": 3}, output=3)
    d = diff_traces(o.trace(), r.trace())
    assert _seen(d) == [("unrecorded_call", "z"), ("missing_call", "x"), ("unrecorded_call", "w")]
    enter, _ = row_events(d)
    fork = [x for x in d.divergences if x.original is None or x.original.name == "x"][:2]
    assert sorted(x.order for x in fork) == sorted(enter[x.row] for x in fork)  # the fork's own start events


def test_a_replay_call_in_place_of_a_sub_agent_comes_before_the_sub_agent_and_its_calls() -> None:
    """The original ran a sub-agent (with a call of its own) where the replay made a call instead: one fork of
    three rows at two depths; the replay's call is the first divergence, the sub-agent and its call follow in
    the original's order."""
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    sub = o.add("agent", "planner", parent=root, input=1, output=1)
    o.add("tool", "lookup", parent=sub, arguments={"id": 1}, output=1)
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("tool", "refund", parent=rroot, arguments={"id": 1}, output=1)
    d = diff_traces(o.trace(), r.trace())
    assert _seen(d) == [("unrecorded_call", "refund"), ("missing_span", "planner"), ("missing_call", "lookup")]
    enter, _ = row_events(d)
    assert [x.order for x in d.divergences] == sorted(enter[x.row] for x in d.divergences)


def test_a_call_missing_inside_a_sub_agent_comes_before_a_replay_call_after_the_sub_agent() -> None:
    """A one-sided row shallower than the block's first ends the block: the call the replay skipped inside the
    sub-agent is not a fork with the call the replay made after it, at the parent's level."""
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    sub = o.add("agent", "planner", parent=root, input=1, output=1)
    o.add("tool", "lookup", parent=sub, arguments={"id": 1}, output=1)
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("agent", "planner", parent=rroot, input=1, output=1)
    r.add("tool", "refund", parent=rroot, arguments={"id": 2}, output=2)
    d = diff_traces(o.trace(), r.trace())
    assert [(row.depth, row.original is not None, row.replay is not None) for row in d.rows] == [
        (0, True, True), (1, True, True), (2, True, False), (1, False, True)]
    assert _seen(d) == [("missing_call", "lookup"), ("unrecorded_call", "refund")]
    enter, _ = row_events(d)
    assert [x.order for x in d.divergences] == [enter[2], enter[3]]


# -- one-sided roots: wrappers and not --------------------------------------------------------------------------

def test_a_wrapper_whose_only_shared_row_is_its_first_child_is_reported_at_its_end() -> None:
    """An HTTP span around the agent on the original's side only: a wrapper even when the agent (its first child)
    is the one shared row, so the agent's changed answer comes first."""
    o = TraceBuilder("o")
    http = o.add("other", "POST /chat")
    o.add("agent", "support", parent=http, input=1, output="shipped")
    r = TraceBuilder("r")
    r.add("agent", "support", input=1, output="lost")
    d = diff_traces(o.trace(), r.trace())
    assert _seen(d) == [("output_mismatch", "support"), ("missing_span", "POST /chat")]
    _, leave = row_events(d)
    assert [x.order for x in d.divergences] == [leave[1], leave[0]]


def test_a_one_sided_root_without_shared_rows_is_reported_at_its_start_even_next_to_shared_roots() -> None:
    """A setup step the original ran as a root of its own (with a call below it), after the shared agent root: not
    a wrapper (nothing of the shared run is inside it), so it comes at its start, before its own call."""
    o = TraceBuilder("o")
    agent = o.add("agent", "support", input=1, output=1)
    o.add("tool", "lookup", parent=agent, arguments={"id": 1}, output=1)
    setup = o.add("other", "setup")
    o.add("tool", "warm_cache", parent=setup, arguments={}, output=1)
    r = TraceBuilder("r")
    ragent = r.add("agent", "support", input=1, output=1)
    r.add("tool", "lookup", parent=ragent, arguments={"id": 1}, output=1)
    d = diff_traces(o.trace(), r.trace())
    assert _seen(d) == [("missing_span", "setup"), ("missing_call", "warm_cache")]
    enter, _ = row_events(d)
    assert [x.order for x in d.divergences] == [enter[2], enter[3]]
    # the same setup root first, before the agent: still at its start
    o2 = TraceBuilder("o")
    setup = o2.add("other", "setup")
    o2.add("tool", "warm_cache", parent=setup, arguments={}, output=1)
    agent = o2.add("agent", "support", input=1, output=1)
    o2.add("tool", "lookup", parent=agent, arguments={"id": 2}, output=1)
    d2 = diff_traces(o2.trace(), r.trace())
    assert _seen(d2) == [("missing_span", "setup"), ("missing_call", "warm_cache"), ("args_mismatch", "lookup")]


# -- one-sided rows: what their fields say ---------------------------------------------------------------------

def test_a_one_sided_rows_fields_put_its_values_on_its_own_side_and_absent_on_the_other() -> None:
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    o.add("tool", "audit", parent=root, arguments={"id": 1}, output="a")
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("tool", "refund", parent=rroot, arguments={"id": 2}, output="b")
    d = diff_traces(o.trace(), r.trace())
    by_type = {x.type: {f.path: (f.original, f.replay) for f in x.fields} for x in d.divergences}
    assert by_type[T.MISSING_CALL]["tool.arguments"] == ({"id": 1}, ABSENT)
    assert by_type[T.MISSING_CALL]["tool.output"] == ("a", ABSENT)
    assert by_type[T.UNRECORDED_CALL]["tool.arguments"] == (ABSENT, {"id": 2})
    assert by_type[T.UNRECORDED_CALL]["tool.output"] == (ABSENT, "b")


# -- subtree ends, many output-side divergences -----------------------------------------------------------------

def test_many_output_divergences_in_a_wide_tree_sit_at_their_rows_end_events() -> None:
    """Above 64 output-side divergences the subtree ends come from one pass over the rows: on a tree of
    sub-agents, each with calls whose outputs differ, every divergence still sits at its row's end event."""
    def run(prefix: str, out: int) -> Trace:
        t = TraceBuilder(prefix)
        root = t.add("agent", "support", input=1, output=out)
        for i in range(12):
            sub = t.add("agent", f"sub{i}", parent=root, input=i, output=out)
            for j in range(6):
                t.add("tool", f"t{i}_{j}", parent=sub, arguments={"j": j}, output=out)
        return t.trace()

    d = diff_traces(run("o", 1), run("r", 2))
    assert len(d.divergences) == 1 + 12 + 72
    _, leave = row_events(d)
    assert [x.order for x in d.divergences] == sorted(leave[x.row] for x in d.divergences)
    assert all(x.order == leave[x.row] for x in d.divergences)
    assert d.divergences[-1].row == 0 and d.divergences[0].original.name == "t0_0"  # type: ignore[union-attr]


# -- what diff_traces takes besides the two runs -------------------------------------------------------------------

def _pair() -> tuple[Trace, Trace]:
    """A root over three calls; the replay changes the first call's output and the third's arguments."""
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    o.add("tool", "a", parent=root, arguments={"id": 1}, output=1)
    o.add("tool", "b", parent=root, arguments={"id": 2}, output=2)
    o.add("tool", "c", parent=root, arguments={"id": 3}, output=3)
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("tool", "a", parent=rroot, arguments={"id": 1}, output=-1)
    r.add("tool", "b", parent=rroot, arguments={"id": 2}, output=2)
    r.add("tool", "c", parent=rroot, arguments={"id": 30}, output=3)
    return o.trace(), r.trace()


def test_rows_not_compared_get_no_divergence_and_the_rows_after_them_still_do() -> None:
    """Watch mode's ``not_compared``: the rows it names (not reached yet) have none; every other row is compared."""
    o, r = _pair()
    whole = diff_traces(o, r)
    assert [(x.row, x.type) for x in whole.divergences] == [(1, T.OUTPUT_MISMATCH), (3, T.ARGS_MISMATCH)]
    d = diff_traces(o, r, not_compared=lambda rows: {1})
    assert [(x.row, x.type) for x in d.divergences] == [(3, T.ARGS_MISMATCH)]
    assert d.row_divergence[1] is None and d.divergent_rows == [3]
    assert diff_traces(o, r, not_compared=lambda rows: set()).divergent_rows == [1, 3]


def test_a_prepared_original_is_not_prepared_again() -> None:
    """``original_side`` (watch mode: one original against a growing replay): the diff prepares only the replay,
    and finds what the diff without it finds."""
    o, r = _pair()
    side = align_module.prepare(o.spans)
    made: list[int] = []
    real = align_module.Side

    class Counted(real):  # type: ignore[misc, valid-type]
        def __init__(self, spans: Any) -> None:
            made.append(len(spans))
            super().__init__(spans)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(align_module, "Side", Counted)
        d = diff_traces(o, r, original_side=side)
    assert made == [len(r.spans)]
    assert [(x.row, x.type, x.fields) for x in d.divergences] == \
        [(x.row, x.type, x.fields) for x in diff_traces(o, r).divergences]


@pytest.mark.parametrize("was_enabled", [True, False])
def test_the_diff_leaves_the_garbage_collector_as_it_found_it(was_enabled: bool) -> None:
    o, r = _pair()
    enabled = gc.isenabled()
    try:
        (gc.enable if was_enabled else gc.disable)()
        diff_traces(o, r)
        assert gc.isenabled() is was_enabled
    finally:
        (gc.enable if enabled else gc.disable)()


# -- a redacted side against a raw one ----------------------------------------------------------------------------

KEY = b"0123456789abcdef0123456789abcdef"


def _redacted_pair(replay_email: str) -> tuple[Trace, Trace, Any]:
    """A raw original (a tool reading a customer's email) and its replay redacted with ``KEY``."""
    from tracetui.core.harness.redact import Redactor

    red = Redactor(KEY)
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    o.add("tool", "lookup", parent=root, arguments={"id": 1}, output={"email": "ann.lee@example.com"})
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("tool", "lookup", parent=rroot, arguments={"id": 1}, output=red.value({"email": replay_email}, tool="lookup"))
    replay = r.trace()
    replay.header = {"redaction": red.record()}
    return o.trace(), replay, Redactor(KEY)


def test_with_the_recording_key_a_raw_side_is_redacted_before_comparing() -> None:
    o, r, red = _redacted_pair("ann.lee@example.com")
    assert r.spans[1].data["output"]["email"] != "ann.lee@example.com"  # a token in the replay
    d = diff_traces(o, r, redactor=red)
    assert d.divergences == [] and d.redacted_with == red.key_id and d.not_comparable == ()
    # another customer's email: a token of another value, an output_mismatch
    o, r, red = _redacted_pair("bob.kay@example.com")
    d = diff_traces(o, r, redactor=red)
    assert _seen(d) == [("output_mismatch", "lookup")]
    # without the key: the token against the raw value is not compared, and said
    d = diff_traces(o, r)
    assert d.divergences == [] and d.redacted_with is None
    assert [u.path for u in d.not_comparable] == ["tool.output"]


# -- two formats, one of them recording framework steps ------------------------------------------------------------

def _framework_run() -> Trace:
    """An OpenInference-like run: framework nodes (``other`` spans) between the root and its calls; the model was
    throttled once (a failed attempt, then the same call again)."""
    t = TraceBuilder("o")
    root = t.add("agent", "support", input={"q": "refund 7"}, output="done")
    node = t.add("other", "agent_node", parent=root)
    msgs = [{"role": "user", "content": "refund 7"}]
    t.add("llm", "chat", parent=node, model="m", messages=msgs, status="error", error_type="RateLimitError")
    t.add("llm", "chat", parent=node, model="m", messages=msgs, output={"role": "assistant", "content": "refund"})
    tools = t.add("other", "tools_node", parent=root)
    t.add("tool", "refund", parent=tools, arguments={"id": 7}, output="ok")
    return replace(t.trace(), format="openinference")


def _flat_replay(refund_id: int) -> Trace:
    """The same run as a tracetui replay records it: the root, its model call and its tool call."""
    t = TraceBuilder("r")
    root = t.add("agent", "support", input={"q": "refund 7"}, output="done")
    msgs = [{"role": "user", "content": "refund 7"}]
    t.add("llm", "chat", parent=root, model="m", messages=msgs, output={"role": "assistant", "content": "refund"})
    t.add("tool", "refund", parent=root, arguments={"id": refund_id}, output="ok")
    return replace(t.trace(), format="tracetui")


def test_framework_steps_on_one_side_compare_the_run_and_its_calls_and_say_so() -> None:
    """The view of each side: its root, then its calls in ``seq`` order below it; the framework steps are left
    out and counted first in ``not_comparable``; a failed attempt retried is a retry, not a divergence."""
    original, replay = _framework_run(), _flat_replay(8)
    d = diff_traces(original, replay)
    assert [s.name for s in d.original.spans] == ["support", "chat", "chat", "refund"]
    assert [s.name for s in d.replay.spans] == ["support", "chat", "refund"]
    assert [(row.original, row.replay, row.depth, row.retry) for row in d.rows] == [
        (0, 0, 0, False), (1, None, 1, True), (2, 1, 1, False), (3, 2, 1, False)]
    assert d.retries == [1]
    assert [(x.type, x.row, [f.path for f in x.fields]) for x in d.divergences] == [
        (T.ARGS_MISMATCH, 3, ["tool.arguments.id"])]
    assert (d.not_comparable[0].path, d.not_comparable[0].pairs) == ("spans", 2)
    assert "framework steps openinference records" in d.not_comparable[0].reason
    # the other way round: the views swap sides
    d2 = diff_traces(_flat_replay(8), _framework_run())
    assert [(row.original, row.replay, row.depth, row.retry) for row in d2.rows] == [
        (0, 0, 0, False), (None, 1, 1, True), (1, 2, 1, False), (2, 3, 1, False)]
    assert [x.type for x in d2.divergences] == [T.ARGS_MISMATCH]
    assert diff_traces(original, _flat_replay(7)).divergences == []


def test_the_two_roots_of_the_views_are_compared_on_every_field_their_keys_hold_too() -> None:
    """The views' roots are paired whatever their keys: a root that is a model call (its key: the model) is still
    compared on its model."""
    def run(fmt: str, model: str, node: bool) -> Trace:
        t = TraceBuilder(fmt[0])
        root = t.add("llm", "plan", model=model, messages=[{"role": "user", "content": "go"}], output="ok")
        parent = t.add("other", "node", parent=root) if node else root
        t.add("tool", "lookup", parent=parent, arguments={"id": 1}, output=1)
        return replace(t.trace(), format=fmt)

    d = diff_traces(run("openinference", "m1", True), run("tracetui", "m2", False))
    assert [(row.original, row.replay) for row in d.rows] == [(0, 0), (1, 1)]
    assert [(x.row, [f.path for f in x.fields]) for x in d.divergences] == [(0, ["llm.model"])]


def test_watch_modes_diff_of_the_same_pair_keeps_the_original_tree() -> None:
    """``not_compared`` or ``original_side`` given (watch mode, whose rows index the original's own spans): the
    trees are aligned as recorded, no views."""
    original, replay = _framework_run(), _flat_replay(8)
    for d in (diff_traces(original, replay, not_compared=lambda rows: ()),
              diff_traces(original, replay, original_side=align_module.prepare(original.spans))):
        assert d.original is original and d.replay is replay
        assert sum(row.original is not None for row in d.rows) == len(original.spans) == 6
        assert all(u.path != "spans" for u in d.not_comparable)


# -- row_divergence: one row, as the early look asks ---------------------------------------------------------------

def _lazy(span: Span) -> LazySpan:
    """``span`` as a span of the index loader (its data held), with the payload signature the loader gives it."""
    lazy = LazySpan(**{f.name: getattr(span, f.name) for f in fields(Span)})
    lazy._sig = payload_sig(span.kind, span.data)
    return lazy


def test_row_divergence_gives_each_rows_divergence_as_the_whole_diff_does() -> None:
    """Every row of a pair with each kind of divergence (and equal rows): the same type and fields, or None."""
    o = TraceBuilder("o")
    root = o.add("agent", "support", input=1, output=1)
    o.add("tool", "audit", parent=root, arguments={"id": 1}, output="a")
    o.add("llm", "chat", parent=root, model="m", messages=[1], output="x")
    o.add("tool", "lookup", parent=root, arguments={"id": 2}, output=2)
    o.add("other", "note", parent=root)
    r = TraceBuilder("r")
    rroot = r.add("agent", "support", input=1, output=1)
    r.add("llm", "chat", parent=rroot, model="m", messages=[1], output="y")
    r.add("tool", "lookup", parent=rroot, arguments={"id": 2}, output=2)
    r.add("tool", "refund", parent=rroot, arguments={"id": 3}, output="b")
    r.add("other", "extra", parent=rroot)
    a, b = o.trace(), r.trace()
    d = diff_traces(a, b)
    _, same = align_module.align_with_same_keys(a.spans, b.spans)
    got = [row_divergence(a.spans, b.spans, row.original, row.replay, same[n]) for n, row in enumerate(d.rows)]
    want = [None if x is None else (x.type, x.fields) for x in d.row_divergence]
    assert got == want
    assert {w[0] for w in want if w is not None} == {T.MISSING_CALL, T.UNRECORDED_CALL, T.DECISION_MISMATCH,
                                                    T.MISSING_SPAN, T.EXTRA_SPAN}
    assert None in want  # the equal rows
    assert row_divergence(a.spans, b.spans, None, None, False) is None


def test_row_divergence_of_a_pair_equal_by_the_rules_but_not_byte_equal_is_none() -> None:
    """A tool output in a LangChain ToolMessage envelope against the bare output: the fast screen flags the pair,
    the comparison settles it equal; the row has no divergence."""
    envelope = {"type": "tool", "data": {"content": '{"temp_c": 18}', "tool_call_id": "call_9", "id": "t1",
                                         "name": "get_weather", "status": "success"}}
    o, r = TraceBuilder("o"), TraceBuilder("r")
    o.add("tool", "get_weather", arguments={"city": "Paris"}, output=envelope)
    r.add("tool", "get_weather", arguments={"city": "Paris"}, output={"temp_c": 18})
    assert row_divergence(o.spans, r.spans, 0, 0, True) is None
    assert row_divergence(o.spans, r.spans, 0, 0, False) is None
    assert diff_traces(o.trace(), r.trace()).divergences == []


@pytest.mark.parametrize(("change", "want"), [
    ({"status": Status.OK}, T.STATUS_MISMATCH),
    ({"error_type": "ValueError"}, T.STATUS_MISMATCH),
    ({"kind": SpanKind.RETRIEVAL}, None),
])
def test_row_divergence_of_index_loader_spans_settles_by_signature_only_what_the_signature_covers(
        change: dict[str, Any], want: T | None) -> None:
    """Two spans of the index loader with equal keys and equal payload signatures are equivalent without a read;
    a changed status, error type or kind still diverges: the signature covers none of them."""
    o = TraceBuilder("o")
    o.add("tool", "lookup", arguments={"id": 1}, output="ok", status="error", error_type="Timeout")
    a = _lazy(o.spans[0])
    assert row_divergence([a], [_lazy(replace(o.spans[0], span_id="r0"))], 0, 0, True) is None
    b = _lazy(replace(o.spans[0], span_id="r0", **change))
    b._sig = a._sig  # equal signatures (the same data; for another kind, as if they collided)
    got = row_divergence([a], [b], 0, 0, True)
    assert got is not None
    assert got[0] is (want or got[0]) and got[1]
    if "kind" in change:
        assert got[1][0].path == "kind"


def test_row_divergence_compares_index_loader_spans_without_a_signature() -> None:
    """A span of the index loader whose signature is unknown (None) is compared, never settled by it."""
    o = TraceBuilder("o")
    o.add("tool", "lookup", arguments={"id": 1}, output="ok")
    a = _lazy(o.spans[0])
    b = _lazy(replace(o.spans[0], span_id="r0", data={**o.spans[0].data, "output": "lost"}))
    a._sig = b._sig = None
    got = row_divergence([a], [b], 0, 0, True)
    assert got is not None and got[0] is T.OUTPUT_MISMATCH and [f.path for f in got[1]] == ["tool.output"]


def test_row_divergence_compares_an_index_loader_span_with_a_parsed_one_either_way() -> None:
    """``read_pair`` indexes only the files big enough: one side's spans may be the index loader's and the other's
    parsed whole; such a pair is compared (equal: None; changed: its divergence)."""
    o = TraceBuilder("o")
    o.add("tool", "lookup", arguments={"id": 1}, output="ok")
    parsed = o.spans[0]
    lazy_same = _lazy(replace(parsed, span_id="r0"))
    lazy_other = _lazy(replace(parsed, span_id="r0", data={**parsed.data, "output": "lost"}))
    assert row_divergence([parsed], [lazy_same], 0, 0, True) is None
    assert row_divergence([lazy_same], [parsed], 0, 0, True) is None
    assert row_divergence([parsed], [lazy_other], 0, 0, True)[0] is T.OUTPUT_MISMATCH  # type: ignore[index]
    assert row_divergence([lazy_other], [parsed], 0, 0, True)[0] is T.OUTPUT_MISMATCH  # type: ignore[index]
