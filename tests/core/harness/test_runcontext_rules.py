"""The agent's ``ctx`` (``core/harness/runcontext.py``), on a ``Session`` built in the test (issue 25, round 8).

``RunContext`` is a thin face: each method records through the session with the arguments the agent gave (a tool's
arguments and idempotency key, the model's prompt id, version and params, a retrieval's keywords, a decision's
options), sync and async alike; ``now`` is the run's clock; ``new_id`` and ``random`` come from the run's seed, so a
replay sees the recording's sequence.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

from harness_sessions import CLOCK, recorded, session

from tracetui.core.harness.runcontext import RunContext
from tracetui.core.model import SpanKind


def test_ctx_carries_the_input_run_id_and_the_sessions_mode():
    s, _ = session("strict", [])
    ctx = RunContext(s, {"q": 1}, "run-7")
    assert (ctx.input, ctx.run_id, ctx.mode) == ({"q": 1}, "run-7", "strict")
    assert not hasattr(ctx, "__dict__")  # a slotted face: nothing else to set on it


def test_a_tool_call_passes_its_arguments_and_returns_the_tools_output():
    calls: list[Any] = []

    def transfer(**kw):
        calls.append(kw)
        return {"done": kw["amount"]}

    s, out = session("record", None, tools={"transfer": transfer})
    ctx = RunContext(s, None, "r")
    assert ctx.tool("transfer", {"amount": 5}, idempotency_key="tx-1") == {"done": 5}
    assert calls == [{"amount": 5}]
    assert out.last.kind is SpanKind.TOOL and out.last.data["arguments"] == {"amount": 5}


def test_a_replayed_write_carries_the_idempotency_key_given_sync_and_async():
    recs = [recorded(i, "transfer", {"amount": 5}, {"done": i}, effect="write") for i in (1, 2, 3)]
    s, _ = session("strict", recs)
    ctx = RunContext(s, None, "r")
    assert ctx.tool("transfer", {"amount": 5}, idempotency_key="tx-1") == {"done": 1}
    assert asyncio.run(ctx.atool("transfer", {"amount": 5}, idempotency_key="tx-2")) == {"done": 2}
    ctx.tool("transfer", {"amount": 5})
    assert [(w["tool"], w["arguments"], w["idempotency_key"]) for w in s.outcome.writes] == [
        ("transfer", {"amount": 5}, "tx-1"), ("transfer", {"amount": 5}, "tx-2"), ("transfer", {"amount": 5}, None)]


def test_the_async_tool_call_awaits_and_passes_the_arguments():
    async def lookup(**kw):
        return ["found", kw]

    s, out = session("record", None, tools={"lookup": lookup}, reads=["lookup"])
    ctx = RunContext(s, None, "r")
    got = asyncio.run(ctx.atool("lookup", {"id": 2}))
    assert got == ["found", {"id": 2}] and out.last.data["arguments"] == {"id": 2}


def test_a_replayed_tool_call_gives_the_agent_the_recorded_output():
    s, _ = session("strict", [recorded(1, "lookup", {"id": 2}, {"v": "recorded"})], reads=["lookup"])
    assert RunContext(s, None, "r").tool("lookup", {"id": 2}) == {"v": "recorded"}


def test_a_model_call_passes_the_model_prompt_and_params():
    asked: list[Any] = []

    def model(messages, *, model, **params):
        asked.append((messages, model, params))
        return {"role": "assistant", "content": "ok"}

    s, out = session("record", None)
    s.spec.model = model
    ctx = RunContext(s, None, "r")
    messages = [{"role": "user", "content": "hi"}]
    assert ctx.llm(messages, model="toy-1", prompt_id="p", prompt_version="v3", temperature=0) == {
        "role": "assistant", "content": "ok"}
    assert asked == [(messages, "toy-1", {"temperature": 0})]
    data = out.last.data
    assert (data["model"], data["prompt_id"], data["prompt_version"], data["params"]) == ("toy-1", "p", "v3",
                                                                                         {"temperature": 0})
    ctx.llm(messages, model="toy-2")
    assert "prompt_id" not in out.last.data and "prompt_version" not in out.last.data


def test_the_async_model_call_passes_the_same():
    async def model(messages, *, model, **params):
        return {"role": "assistant", "content": model + str(params)}

    s, out = session("record", None)
    s.spec.model = model
    ctx = RunContext(s, None, "r")
    got = asyncio.run(ctx.allm([{"role": "user", "content": "hi"}], model="toy-1", prompt_id="p",
                               prompt_version="v1", seed=3))
    assert got == {"role": "assistant", "content": "toy-1{'seed': 3}"}
    data = out.last.data
    assert (data["prompt_id"], data["prompt_version"], data["params"]) == ("p", "v1", {"seed": 3})
    assert data["messages"] == [{"role": "user", "content": "hi"}]


def test_a_retrieval_passes_the_index_query_and_keywords_sync_and_async():
    asked: list[Any] = []

    def docs(query, **kw):
        asked.append((query, kw))
        return [{"id": "d1"}]

    async def adocs(query, **kw):
        asked.append((query, kw))
        return [{"id": "d2"}]

    s, out = session("record", None, retrievers={"kb": docs, "akb": adocs})
    ctx = RunContext(s, None, "r")
    assert ctx.retrieve("kb", "refunds", top_k=3) == [{"id": "d1"}]
    assert out.last.kind is SpanKind.RETRIEVAL and out.last.data["index"] == "kb"
    assert asyncio.run(ctx.aretrieve("akb", "returns", top_k=1, filters={"lang": "en"})) == [{"id": "d2"}]
    assert out.last.data["index"] == "akb"
    assert asked == [("refunds", {"top_k": 3}), ("returns", {"top_k": 1, "filters": {"lang": "en"}})]


def test_a_decision_is_recorded_with_its_options_and_returns_the_value():
    s, out = session("record", None)
    ctx = RunContext(s, None, "r")
    assert ctx.decide("route", "refund", options=["refund", "escalate"]) == "refund"
    assert out.last.data == {"decision": "route", "value": "refund", "options": ["refund", "escalate"]}
    assert ctx.decide("route", 2) == 2
    assert "options" not in out.last.data


def test_now_is_the_runs_clock():
    s, _ = session("record", None)
    assert RunContext(s, None, "r").now() == CLOCK


def test_new_ids_are_version_4_uuids_from_the_runs_seed_with_the_prefix():
    s, _ = session("record", None, seed=42)
    ctx = RunContext(s, None, "r")
    first, second = ctx.new_id(), ctx.new_id("ord-")
    rng = random.Random("42:agent")
    assert first == str(uuid.UUID(int=rng.getrandbits(128), version=4))
    assert second == "ord-" + str(uuid.UUID(int=rng.getrandbits(128), version=4))
    assert uuid.UUID(first).version == 4 and uuid.UUID(second[4:]).version == 4
    again = RunContext(session("record", None, seed=42)[0], None, "r")
    assert [again.new_id(), again.new_id("ord-")] == [first, second]
    other = RunContext(session("record", None, seed=7)[0], None, "r")
    assert other.new_id() != first


def test_random_is_the_runs_seeded_generator_shared_with_new_id():
    s, _ = session("record", None, seed=42)
    ctx = RunContext(s, None, "r")
    assert ctx.random is s.rng and ctx.random is ctx.random
    a = [ctx.random.random(), ctx.new_id()]
    again = RunContext(session("record", None, seed=42)[0], None, "r")
    assert [again.random.random(), again.new_id()] == a
