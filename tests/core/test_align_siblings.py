"""Alignment that understands retries and concurrency (issue 18, item 2): ``diff.siblings``."""

from __future__ import annotations

from pathlib import Path

import orjson

from corpus import corpus
from tests.builders import TraceBuilder, make_span
from tracetui.core.diff import diff_traces
from tracetui.core.model import Trace
from tracetui.core.readers import read_trace

MS = 1_000_000


def _llm_retry_run(prefix: str, failed_attempts: int, tool_output: object = "ok") -> Trace:
    """An agent whose first model call failed with a 429 ``failed_attempts`` times, then succeeded."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", input={"task": "refund"})
    msgs = [{"role": "user", "content": "refund order 7"}]
    for _ in range(failed_attempts):
        t.add("llm", "chat gpt-4o", parent=root, model="gpt-4o", messages=msgs, status="error",
              error_type="RateLimitError")
    t.add("llm", "chat gpt-4o", parent=root, model="gpt-4o", messages=msgs,
          output={"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "refund", "arguments": {"id": 7}}]})
    t.add("tool", "refund", parent=root, arguments={"id": 7}, output=tool_output)
    return t.trace()


def test_a_429_then_retry_pairs_the_replays_call_with_the_success_and_reports_the_attempt() -> None:
    original = _llm_retry_run("o", failed_attempts=1)
    replay = _llm_retry_run("r", failed_attempts=0)
    d = diff_traces(original, replay)
    assert d.divergences == []
    paired = [(r.original, r.replay) for r in d.rows]
    assert paired == [(0, 0), (1, None), (2, 1), (3, 2)]  # the success (2) pairs the replay's call
    assert d.retries == [1]
    # The other way round (the replay was throttled twice): the same, from the replay's side.
    d = diff_traces(_llm_retry_run("o", 0), _llm_retry_run("r", 2))
    assert d.divergences == [] and len(d.retries) == 2


def test_a_retried_call_whose_result_changed_still_diverges_on_the_success() -> None:
    d = diff_traces(_llm_retry_run("o", 1, tool_output="ok"), _llm_retry_run("r", 0, tool_output="refused"))
    assert [(x.type.value, x.original.span_id) for x in d.divergences] == [("output_mismatch", "o3")]


def test_a_failure_that_was_not_retried_is_still_a_divergence() -> None:
    """Only an attempt followed by a success of the same call is a retry: a call that failed and
    was given up on (the replay succeeded at once) stays a status mismatch."""
    t = TraceBuilder("o")
    root = t.add("agent", "agent")
    t.add("llm", "chat gpt-4o", parent=root, model="gpt-4o", messages=[{"role": "user", "content": "x"}], status="error")
    t.add("tool", "refund", parent=root, arguments={"id": 7}, output="ok")
    d = diff_traces(t.trace(), _llm_retry_run("r", 0))
    assert d.retries == []
    assert d.first is not None and d.first.type.value in ("status_mismatch", "input_mismatch", "decision_mismatch")


def _tools_run(prefix: str, order: list[str], outputs: dict[str, object], *, overlap: bool) -> Trace:
    """An LLM turn asking for two tool calls, the calls in ``order`` (overlapping in time when
    ``overlap``, else one after the other, no call ids), then the final LLM call."""
    root = f"{prefix}root"
    msgs = [{"role": "user", "content": "weather and time in Paris"}]
    calls = [{"id": f"{prefix}-{n}", "name": n, "arguments": {"city": "Paris"}} for n in ("weather", "clock")]
    t0 = 1_762_161_242_118_000_000
    spans = [make_span("agent", "agent", span_id=root, seq=0, start_ns=t0, end_ns=t0 + 100 * MS),
             make_span("llm", "chat", span_id=f"{prefix}llm1", parent_id=root, seq=1, start_ns=t0 + MS,
                       end_ns=t0 + 5 * MS, model="m", messages=msgs,
                       output={"role": "assistant", "content": "", "tool_calls": calls})]
    for k, name in enumerate(order):
        start = t0 + 10 * MS + (k * 100_000 if overlap else k * 10 * MS)
        spans.append(make_span("tool", name, span_id=f"{prefix}{name}", parent_id=root, seq=2 + k,
                               start_ns=start, end_ns=start + 5 * MS, arguments={"city": "Paris"},
                               output=outputs[name], **({"call_id": f"{prefix}-{name}"} if overlap else {})))
    spans.append(make_span("llm", "chat", span_id=f"{prefix}llm2", parent_id=root, seq=4, start_ns=t0 + 50 * MS,
                           end_ns=t0 + 60 * MS, model="m", messages=msgs, output="sunny, 10:00"))
    return Trace(spans=spans, path="", format="test")


OUT = {"weather": "sunny", "clock": "10:00"}


def test_concurrent_tool_calls_that_started_in_another_order_pair_as_a_set() -> None:
    d = diff_traces(_tools_run("o", ["weather", "clock"], OUT, overlap=True),
                    _tools_run("r", ["clock", "weather"], OUT, overlap=True))
    assert d.divergences == []
    assert [(d.original.spans[r.original].name, d.replay.spans[r.replay].name) for r in d.rows][2:4] == [
        ("weather", "weather"), ("clock", "clock")]


def test_a_concurrent_reorder_that_changed_data_diverges_on_that_data() -> None:
    """The clock read after the weather call in the replay and saw another time: that tool's output."""
    d = diff_traces(_tools_run("o", ["weather", "clock"], OUT, overlap=True),
                    _tools_run("r", ["clock", "weather"], {**OUT, "clock": "10:01"}, overlap=True))
    assert [(x.type.value, x.original.name) for x in d.divergences] == [("output_mismatch", "clock")]


def test_a_sequential_reorder_is_still_a_divergence() -> None:
    """Calls that did not overlap and are not one LLM turn's set: another order is another run."""
    d = diff_traces(_tools_run("o", ["weather", "clock"], OUT, overlap=False),
                    _tools_run("r", ["clock", "weather"], OUT, overlap=False))
    assert {x.type.value for x in d.divergences} == {"missing_call", "unrecorded_call"}


def test_one_llm_turns_tool_calls_match_as_a_set_even_when_run_one_after_the_other() -> None:
    a = _tools_run("o", ["weather", "clock"], OUT, overlap=False)
    b = _tools_run("r", ["clock", "weather"], OUT, overlap=False)
    # Give the calls their call ids (the LLM turn's tool_calls[].id): now they are one turn's set.
    for trace, prefix in ((a, "o"), (b, "r")):
        for s in trace.spans:
            if s.kind.value == "tool":
                s.data["call_id"] = f"{prefix}-{s.name}"  # type: ignore[index]
    assert diff_traces(a, b).divergences == []


def _reversed_langfuse(src: Path, tmp_path: Path) -> Path:
    doc = orjson.loads(src.read_bytes())
    doc["observations"] = doc["observations"][::-1]
    out = tmp_path / src.name
    out.write_bytes(orjson.dumps(doc))
    return out


def test_two_langfuse_exports_whose_observations_tie_at_the_millisecond_do_not_diverge(tmp_path: Path) -> None:
    """Real exports with sibling observations starting in the same millisecond (beeai: 2 ties, koog
    and pydantic-ai: 1): the same trace with its observations array reversed is the same run."""
    for name in ("beeai-2025-08-01", "koog-2025-08-26", "pydantic-ai-tools-2025-12-04"):
        src = corpus(f"langfuse/{name}.trace.json")
        d = diff_traces(read_trace(src), read_trace(_reversed_langfuse(src, tmp_path)))
        assert d.divergences == [], name
