"""The diff of two runs: one divergence per row, ordered by the original run's execution."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import TraceBuilder, row_events
from tracetui.core.diff import ABSENT, DivergenceType, TraceDiff, diff_traces
from tracetui.core.model import SpanKind
from tracetui.core.readers import read_trace

T = DivergenceType
SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


def _run(prefix: str, *, lookup_out: object = "shipped", answer: str = "It shipped.",
         llm_msg: str = "where?", llm_out: str = "call lookup", extra_call: bool = False,
         drop_llm: bool = False) -> TraceBuilder:
    """agent -> llm -> lookup tool (-> extra refund call) -> final llm; the agent answers."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "support", input={"q": "where is 5531"}, output={"answer": answer})
    if not drop_llm:
        t.add("llm", "chat", parent=root, model="m", messages=[{"role": "user", "content": llm_msg}],
              output={"role": "assistant", "content": llm_out})
    t.add("tool", "lookup", parent=root, arguments={"id": 5531}, output=lookup_out)
    if extra_call:
        t.add("tool", "refund", parent=root, arguments={"id": 5531}, output="ok")
    t.add("retrieval", "kb", parent=root, index="kb", query="shipping")
    return t


def test_identical_runs_have_no_divergence() -> None:
    """Equal runs (other ids and timestamps): every row paired, no divergence."""
    a, b = _run("o").trace(), _run("r").trace()
    d = diff_traces(a, b)
    assert isinstance(d, TraceDiff)
    assert d.first is None and d.divergences == [] and d.divergent_rows == []
    assert d.row_divergence == [None] * len(d.rows) == [None] * 4


def test_agent_output_ranks_after_the_tool_output_that_caused_it() -> None:
    """Tool output and agent answer differ: the tool's output_mismatch is first, the agent's last."""
    d = diff_traces(_run("o").trace(), _run("r", lookup_out="lost", answer="It is lost.").trace())
    assert [x.type for x in d.divergences] == [T.OUTPUT_MISMATCH, T.OUTPUT_MISMATCH]
    assert d.first is not None and d.first.kind is SpanKind.TOOL
    assert d.divergences[1].kind is SpanKind.AGENT
    assert d.divergent_rows == [0, 2]
    assert d.row_divergence[0] is d.divergences[1]


def test_llm_input_mismatch_ranks_before_an_earlier_starting_spans_output() -> None:
    """An input divergence sits at the span start, an output one at the span end."""
    d = diff_traces(_run("o").trace(), _run("r", llm_msg="where is it?", lookup_out="lost").trace())
    assert [x.type for x in d.divergences] == [T.INPUT_MISMATCH, T.OUTPUT_MISMATCH]
    assert d.first is not None and d.first.fields[0].path == "llm.messages[0].content"


def test_llm_decision_mismatch_is_placed_at_its_end_after_its_start() -> None:
    """Same LLM inputs, other answer: decision_mismatch, ordered after the llm starts."""
    d = diff_traces(_run("o").trace(), _run("r", llm_out="call refund").trace())
    assert d.first is not None and d.first.type is T.DECISION_MISMATCH
    assert d.first.fields[0].path == "llm.output.content"


def test_unrecorded_and_missing_calls() -> None:
    """A tool call only in the replay is unrecorded_call; only in the original, missing_call."""
    d = diff_traces(_run("o").trace(), _run("r", extra_call=True).trace())
    assert [x.type for x in d.divergences] == [T.UNRECORDED_CALL]
    extra = d.divergences[0]
    assert extra.original is None and extra.replay is not None and extra.replay.name == "refund"
    assert ("tool.arguments", ABSENT, {"id": 5531}) in [(f.path, f.original, f.replay) for f in extra.fields]
    d2 = diff_traces(_run("o", extra_call=True).trace(), _run("r").trace())
    assert [x.type for x in d2.divergences] == [T.MISSING_CALL]


def test_extra_and_missing_spans_of_other_kinds() -> None:
    """An LLM span only on one side is extra_span / missing_span."""
    d = diff_traces(_run("o", drop_llm=True).trace(), _run("r").trace())
    assert [x.type for x in d.divergences] == [T.EXTRA_SPAN]
    d2 = diff_traces(_run("o").trace(), _run("r", drop_llm=True).trace())
    assert [x.type for x in d2.divergences] == [T.MISSING_SPAN]
    assert d2.first is not None and d2.first.kind is SpanKind.LLM


def test_replay_only_span_is_ordered_where_the_original_would_have_run_it() -> None:
    """An unrecorded call after the lookup ranks before the agent's changed answer, after the lookup's."""
    d = diff_traces(_run("o").trace(), _run("r", extra_call=True, lookup_out="lost", answer="Refunded.").trace())
    assert [(x.type, x.kind) for x in d.divergences] == [
        (T.OUTPUT_MISMATCH, SpanKind.TOOL), (T.UNRECORDED_CALL, SpanKind.TOOL), (T.OUTPUT_MISMATCH, SpanKind.AGENT),
    ]
    orders = [x.order for x in d.divergences]
    assert orders == sorted(orders) and len(set(orders)) == 3


def test_divergent_rows_are_sorted_row_indices_with_one_divergence_each() -> None:
    """divergent_rows lists each divergent row once, ascending, matching row_divergence."""
    d = diff_traces(_run("o").trace(), _run("r", extra_call=True, llm_msg="x", answer="y").trace())
    assert d.divergent_rows == sorted(d.divergent_rows)
    assert d.divergent_rows == [i for i, x in enumerate(d.row_divergence) if x is not None]
    assert all(d.row_divergence[x.row] is x for x in d.divergences)


@pytest.mark.parametrize(("scenario", "first_type", "first_path"), [
    ("scheduling", T.INPUT_MISMATCH, "llm.prompt_version"),
    ("subscription_pause", T.ARGS_MISMATCH, "tool.arguments.account_id"),
    ("order_lookup", T.DECISION_MISMATCH, "llm.output.tool_calls[0].arguments.customer_id"),
])
def test_sample_runs_first_divergence(scenario: str, first_type: T, first_path: str) -> None:
    """The bundled incident pairs show the divergence their story is about, first."""
    folder = SAMPLES / scenario
    if not (folder / "original.jsonl").exists():
        pytest.skip(f"{folder} not built")
    d = diff_traces(read_trace(folder / "original.jsonl"), read_trace(folder / "replay.jsonl"))
    assert d.first is not None
    assert d.first.type is first_type
    assert d.first.fields[0].path == first_path
    # Every span of both runs has exactly one row.
    assert sum(r.original is not None for r in d.rows) == len(d.original.spans)
    assert sum(r.replay is not None for r in d.rows) == len(d.replay.spans)


def test_sample_run_against_itself_has_no_divergence() -> None:
    """A run diffed with itself is equivalent."""
    path = SAMPLES / "scheduling" / "original.jsonl"
    if not path.exists():
        pytest.skip("sample_runs not built")
    t = read_trace(path)
    assert diff_traces(t, t).divergences == []


def test_divergence_order_is_the_enter_or_exit_event_of_its_row() -> None:
    """Input-side and one-sided divergences sit at the row's start event, output-side at its end."""
    t = TraceBuilder("o")
    root = t.add("agent", "a", input=1, output=1)
    sub = t.add("agent", "sub", parent=root, input=1, output=1)
    t.add("tool", "x", parent=sub, arguments={"i": 1}, output=1)
    t.add("tool", "y", parent=sub, arguments={"i": 2}, output=1)
    t.add("llm", "chat", parent=root, model="m", messages=[1], output=1)
    u = TraceBuilder("r")
    rroot = u.add("agent", "a", input=1, output=2)
    rsub = u.add("agent", "sub", parent=rroot, input=2, output=2)
    u.add("tool", "x", parent=rsub, arguments={"i": 1}, output=2)
    u.add("tool", "z", parent=rsub, arguments={}, output=1)
    u.add("llm", "chat", parent=rroot, model="m", messages=[1], output=2)
    d = diff_traces(t.trace(), u.trace())
    enter, leave = row_events(d)
    output_side = {T.OUTPUT_MISMATCH, T.DECISION_MISMATCH, T.STATUS_MISMATCH}
    fork = [x for x in d.divergences if x.type in (T.MISSING_CALL, T.UNRECORDED_CALL)]
    for x in d.divergences:
        if x not in fork:
            assert x.order == (leave[x.row] if x.type in output_side else enter[x.row])
    # Where the runs fork (y replaced by z) the two one-sided rows share their start events, the
    # replay's own call first: the first thing the replay did that the original did not.
    assert sorted(x.order for x in fork) == sorted(enter[x.row] for x in fork)
    # The sub-agent's input and output both differ: one divergence, input first.
    assert [x.type for x in d.divergences] == [
        T.INPUT_MISMATCH, T.OUTPUT_MISMATCH, T.UNRECORDED_CALL, T.MISSING_CALL,
        T.DECISION_MISMATCH, T.OUTPUT_MISMATCH,
    ]
    assert [f.path for f in d.divergences[0].fields] == ["agent.input", "agent.output"]


def test_deep_chain_diverging_everywhere_orders_fast_and_right() -> None:
    """A 3,000-deep chain whose every output differs: one pass, deepest output first."""
    def chain(prefix: str, out: int) -> TraceBuilder:
        t = TraceBuilder(prefix)
        parent = None
        for _ in range(3000):
            parent = t.add("agent", "step", parent=parent, input=1, output=out)
        return t

    d = diff_traces(chain("o", 1).trace(), chain("r", 2).trace())
    assert len(d.divergences) == 3000
    assert [x.row for x in d.divergences] == list(range(2999, -1, -1))
    enter, leave = row_events(d)
    assert all(x.order == leave[x.row] for x in d.divergences)


def test_a_root_wrapping_the_run_on_one_side_keeps_the_run_paired_and_the_first_divergence_inside() -> None:
    """A production trace with an HTTP server span above the agent still aligns with a replay rooted at the agent.

    The wrapper is a `missing_span`, ordered at its end, so the first divergence is the real change inside.
    """
    o = TraceBuilder("o")
    http = o.add("other", "POST /chat")
    agent = o.add("agent", "invoke_agent support", parent=http)
    o.add("tool", "lookup", parent=agent, tool_name="lookup", arguments={"id": 1}, output="shipped")
    r = TraceBuilder("r")
    agent_r = r.add("agent", "invoke_agent support")
    r.add("tool", "lookup", parent=agent_r, tool_name="lookup", arguments={"id": 2}, output="shipped")
    d = diff_traces(o.trace(), r.trace())
    assert [(row.original, row.replay, row.depth) for row in d.rows] == [(0, None, 0), (1, 0, 1), (2, 1, 2)]
    assert [x.type for x in d.divergences] == [DivergenceType.ARGS_MISMATCH, DivergenceType.MISSING_SPAN]
    # and the other way round: the replay has the wrapper
    d2 = diff_traces(r.trace(), o.trace())
    assert [(row.original, row.replay) for row in d2.rows] == [(None, 0), (0, 1), (1, 2)]
    assert d2.first is not None and d2.first.type is DivergenceType.ARGS_MISMATCH
