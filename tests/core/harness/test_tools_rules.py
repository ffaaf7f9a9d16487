"""``@tracetui.tool``'s rules, each on a tool decorated inside the test (a decorator applied at import runs once,
before any test): a tool is a write unless declared a read, ``effect`` spells the same and is checked, the name
recorded, the arguments recorded by parameter name (or as ``args`` when they cannot be bound), the schema hashed
from the signature, an async tool recorded with its awaited result, and the marker integrations look for."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import pytest

import tracetui
from tracetui.core.readers import read_trace

_IDS = itertools.count()


def _unique(stem: str) -> str:
    """A tool name no other test declared: the read declarations are process-wide."""
    return f"{stem}_{next(_IDS)}_rules"


@pytest.fixture(autouse=True)
def _workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _tool_spans(path: str) -> list[dict[str, Any]]:
    return [s.data for s in read_trace(path).spans if s.kind.value == "tool"]


def _record(call: Callable[[], Any], path: str = "rec.jsonl") -> list[dict[str, Any]]:
    with tracetui.record(out=path) as session:
        session.output = call()
    return _tool_spans(path)


def test_a_bare_tool_is_a_write_and_a_read_tool_is_served_in_replay_not_called():
    calls: list[str] = []

    def refund(order_id: str) -> dict:
        calls.append("refund")
        return {"ok": True}

    def lookup(order_id: str) -> dict:
        calls.append("lookup")
        return {"order_id": order_id}

    write = tracetui.tool(refund)  # bare use, not as a decorator factory
    read = tracetui.tool(read=True, name=_unique("lookup"))(lookup)
    spans = _record(lambda: (read("A1"), write("A1")))
    assert [s["effect"] for s in spans] == ["read", "write"]
    assert read_trace("rec.jsonl").header["read_tools"] == [spans[0]["tool_name"]]
    calls.clear()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as replay:
        replay.output = (read("A1"), write("A1"))
    assert calls == [] and replay.result.outcome.served == 1
    assert [w["tool"] for w in replay.result.outcome.writes] == ["refund"]


@pytest.mark.parametrize("effect, recorded", [("read", "read"), ("write", "write")])
def test_effect_spelled_out_is_the_same_as_read_true_or_the_default(effect: str, recorded: str):
    fn = tracetui.tool(effect=effect, name=_unique("spelled"))(lambda order_id: {"order_id": order_id})
    assert [s["effect"] for s in _record(lambda: fn("A1"))] == [recorded]


def test_read_true_with_effect_read_is_a_read():
    fn = tracetui.tool(read=True, effect="read", name=_unique("both"))(lambda order_id: order_id)
    assert [s["effect"] for s in _record(lambda: fn("A1"))] == ["read"]


def test_an_unknown_effect_or_read_true_against_effect_write_is_refused_naming_the_problem():
    with pytest.raises(ValueError) as unknown:
        tracetui.tool(effect="delete")
    with pytest.raises(ValueError) as contradiction:
        tracetui.tool(read=True, effect="write")
    # each message starts with the decorator's name: the user sees where the mistake is
    assert str(unknown.value) == "tracetui.tool: effect must be 'read' or 'write', not 'delete'"
    assert str(contradiction.value) == "tracetui.tool: read=True contradicts effect='write'"


def test_the_recorded_name_is_the_name_given_else_the_functions_else_the_callables_type():
    class PriceLookup:  # a callable object: no __name__
        def __call__(self, sku: str) -> int:
            return 3

    def stock(sku: str) -> int:
        return 7

    named = tracetui.tool(name="inventory")(stock)
    plain = tracetui.tool(stock)
    instance = tracetui.tool(PriceLookup())
    spans = _record(lambda: (named("s1"), plain("s2"), instance("s3")))
    assert [s["tool_name"] for s in spans] == ["inventory", "stock", "PriceLookup"]
    assert (named.__tracetui_tool__, plain.__tracetui_tool__, instance.__tracetui_tool__) == (
        "inventory", "stock", "PriceLookup")  # the marker the framework integrations look for


def test_async_tool_marker_names_it_too():
    async def fetch(sku: str) -> int:
        return 1

    assert tracetui.tool(name="async_inventory")(fetch).__tracetui_tool__ == "async_inventory"


def test_arguments_are_recorded_by_parameter_name_positional_or_keyword_defaults_not_filled_in():
    def ship(order_id: str, carrier: str, express: bool = False, note: str = "") -> str:
        return "ok"

    fn = tracetui.tool(ship)
    spans = _record(lambda: (fn("A1", "ups"), fn("A2", carrier="dhl", express=True), fn(order_id="A3", carrier="fx")))
    assert [s["arguments"] for s in spans] == [
        {"order_id": "A1", "carrier": "ups"},
        {"order_id": "A2", "carrier": "dhl", "express": True},
        {"order_id": "A3", "carrier": "fx"},
    ]


class _NoSignature:
    """A callable whose signature cannot be read (``inspect.signature`` raises TypeError)."""

    __signature__ = "not a signature"

    def __call__(self, *args: Any, **kwargs: Any) -> int:
        return len(args) + len(kwargs)


def test_without_a_signature_positional_arguments_are_recorded_as_args_and_keywords_by_name():
    fn = tracetui.tool(name="opaque")(_NoSignature())
    spans = _record(lambda: (fn(1, 2, unit="kg"), fn(unit="kg"), fn()))
    assert [s["arguments"] for s in spans] == [{"args": [1, 2], "unit": "kg"}, {"unit": "kg"}, {}]


def test_arguments_that_do_not_bind_are_recorded_as_args_and_keywords_as_given():
    def one(x: int) -> int:
        return x

    fn = tracetui.tool(name="one_arg")(one)
    with tracetui.record(out="rec.jsonl") as session:
        for call in (lambda: fn(1, 2), lambda: fn(y=3)):  # both raise TypeError live: recorded as failed calls
            with pytest.raises(TypeError):
                call()
        session.output = fn(x=4)
    assert [s["arguments"] for s in _tool_spans("rec.jsonl")] == [{"args": [1, 2]}, {"y": 3}, {"x": 4}]


def test_the_schema_hashed_for_a_tool_is_its_signature():
    """Two tools of one name and different parameters hash differently; the same parameters hash the same."""

    def v1(order_id: str) -> dict:
        return {}

    def v1_again(order_id: str) -> dict:
        return {}

    def v2(order_id: int, region: str = "eu") -> dict:
        return {}

    schemas = []
    for i, fn in enumerate((v1, v1_again, v2)):
        wrapped = tracetui.tool(name="schema_probe")(fn)
        _record(lambda: wrapped(1), f"rec{i}.jsonl")
        schemas.append(read_trace(f"rec{i}.jsonl").header["tool_schemas"]["schema_probe"])
    assert schemas[0] == schemas[1] != schemas[2]


def test_an_async_tool_is_awaited_and_its_result_recorded_and_replayed():
    async def quote(sku: str) -> dict:
        await asyncio.sleep(0)
        return {"sku": sku, "price": 12}

    fn = tracetui.tool(read=True, name=_unique("quote"))(quote)
    assert asyncio.iscoroutinefunction(fn)
    spans = _record(lambda: asyncio.run(fn("s1")))
    assert [s["output"] for s in spans] == [{"sku": "s1", "price": 12}]
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as replay:
        replay.output = asyncio.run(fn("s1"))
    assert replay.output == {"sku": "s1", "price": 12} and replay.result.outcome.served == 1
