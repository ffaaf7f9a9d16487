"""The step drivers' and value helpers' rules (``core/harness/steps.py``), on generators built in the test
(issue 25, round 8).

A step generator yields ``Live`` calls; ``run_steps`` (sync) and ``arun_steps`` (async) make each call, send its
value back or throw its exception in (``Exception`` only), lift the network guard for a ``network`` call alone, and
return the generator's value. Sync code handed an awaitable is a ``HarnessError`` (the awaitable closed, never left
un-awaited). ``jsonable``, ``copy_value`` and ``short_json`` shape the values the engine writes and hands back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import warnings
from datetime import datetime, timezone
from typing import Any

import pytest

from tracetui.core.errors import HarnessError
from tracetui.core.harness import guard
from tracetui.core.harness.steps import Live, arun_steps, copy_value, jsonable, run_steps, short_json


def _echo_steps(calls: list[Live], log: list[Any]):
    """Yield each call, log what comes back (a value, or the exception thrown in), return the log."""
    for call in calls:
        try:
            log.append(("value", (yield call)))
        except Exception as exc:  # noqa: BLE001 - the rule under test: the driver throws it in
            log.append(("raised", exc))
    return log


def test_a_live_call_lifts_no_guard_unless_asked_and_cannot_be_changed():
    live = Live(lambda: 1)
    assert live.network is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        live.network = True  # type: ignore[misc]


def test_run_steps_sends_each_value_back_and_returns_the_generators_value():
    log: list[Any] = []
    out = run_steps(_echo_steps([Live(lambda: 1), Live(lambda: "two")], log))
    assert out is log and log == [("value", 1), ("value", "two")]
    assert run_steps(_echo_steps([], [])) == []


def test_run_steps_throws_a_calls_exception_into_the_generator():
    err = ValueError("tool failed")

    def fail():
        raise err

    log: list[Any] = []
    run_steps(_echo_steps([Live(fail), Live(lambda: 3)], log))
    assert log == [("raised", err), ("value", 3)]


def test_an_exception_the_generator_does_not_catch_goes_to_the_caller():
    def steps():
        yield Live(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        run_steps(steps())
    with pytest.raises(ZeroDivisionError):
        asyncio.run(arun_steps(steps()))


def test_a_keyboard_interrupt_is_not_thrown_into_the_generator():
    log: list[Any] = []

    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_steps(_echo_steps([Live(interrupt), Live(lambda: 1)], log))
    assert log == []
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(arun_steps(_echo_steps([Live(interrupt), Live(lambda: 1)], log)))
    assert log == []


def test_sync_code_handed_an_awaitable_is_a_harness_error_thrown_in_and_the_awaitable_closed():
    async def tool():
        return 1

    coros: list[Any] = []

    def call():
        coros.append(tool())
        return coros[-1]

    log: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would be a RuntimeWarning
        run_steps(_echo_steps([Live(call)], log))
        gc.collect()
    (kind, exc), = log
    assert kind == "raised" and isinstance(exc, HarnessError)
    assert str(exc) == ("a live call returned an awaitable in synchronous code: an async tool or client needs the "
                        "async form (ctx.atool, ctx.allm, or an async framework)")
    assert coros[0].cr_frame is None  # closed


def test_an_awaitable_without_close_is_still_refused_in_sync_code():
    class Waitable:
        def __await__(self):
            yield
            return 1

    log: list[Any] = []
    run_steps(_echo_steps([Live(Waitable)], log))
    assert isinstance(log[0][1], HarnessError)


def test_the_network_guard_is_lifted_for_a_network_call_alone_sync_and_async():
    def seen():
        return guard._ALLOWED.get()

    async def aseen():
        await asyncio.sleep(0)
        return guard._ALLOWED.get()

    calls = [Live(seen), Live(seen, network=True), Live(seen)]
    assert run_steps(_echo_steps(calls, [])) == [("value", False), ("value", True), ("value", False)]
    acalls = [Live(aseen), Live(aseen, network=True), Live(seen, network=True), Live(seen)]
    got = asyncio.run(arun_steps(_echo_steps(acalls, [])))
    assert got == [("value", False), ("value", True), ("value", True), ("value", False)]


def test_arun_steps_awaits_an_awaitable_and_takes_a_plain_value_as_it_is():
    async def tool():
        await asyncio.sleep(0)
        return "awaited"

    log: list[Any] = []
    out = asyncio.run(arun_steps(_echo_steps([Live(tool), Live(lambda: "plain"), Live(tool, network=True)], log)))
    assert out == [("value", "awaited"), ("value", "plain"), ("value", "awaited")]


def test_arun_steps_throws_an_awaited_calls_exception_in():
    async def fail():
        raise LookupError("missing")

    async def fail_net():
        raise KeyError("net")

    def fail_now():
        raise ValueError("sync")

    log: list[Any] = []
    asyncio.run(arun_steps(_echo_steps([Live(fail), Live(fail_net, network=True), Live(fail_now),
                                        Live(lambda: 4)], log)))
    assert [(k, type(v).__name__) for k, v in log] == [("raised", "LookupError"), ("raised", "KeyError"),
                                                        ("raised", "ValueError"), ("value", "int")]


# --- value helpers ----------------------------------------------------------------------------------------------


def test_jsonable_gives_json_types():
    class Thing:
        def __str__(self):
            return "a thing"

    assert jsonable((1, (2, 3))) == [1, [2, 3]]
    assert jsonable({1: "a", "b": (True, None)}) == {"1": "a", "b": [True, None]}
    assert jsonable({"at": datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)}) == {"at": "2026-03-02T09:30:00+00:00"}
    assert jsonable({"x": Thing()}) == {"x": "a thing"}
    assert jsonable(Thing()) == "a thing"
    assert jsonable([2 ** 70]) == "[1180591620717411303424]"  # beyond JSON's integers: the value's text


def test_jsonable_and_copy_value_hand_back_json_scalars_themselves():
    big = 2 ** 70
    for v in (None, "s", 3, 2.5, True, big):
        assert jsonable(v) is v and copy_value(v) is v


def test_copy_value_is_a_deep_copy_the_receiver_may_change():
    value = {"rows": [{"id": 1}], 1: "int key"}
    got = copy_value(value)
    assert got == {"rows": [{"id": 1}], "1": "int key"}
    got["rows"][0]["id"] = 2
    assert value["rows"][0]["id"] == 1


def test_copy_value_of_what_json_cannot_hold_is_a_deep_copy_of_it():
    value = {"tags": {"a"}, "n": [1]}
    got = copy_value(value)
    assert got == value and got is not value and got["tags"] is not value["tags"]
    assert copy_value([2 ** 70]) == [2 ** 70]


def test_short_json_is_sorted_canonical_json_cut_to_its_limit_with_an_ellipsis():
    assert short_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert short_json({2: "x", 1: "y"}) == '{"1":"y","2":"x"}'
    text = "x" * 118
    assert short_json(text) == f'"{text}"'  # 120 characters: kept
    assert short_json("x" * 119) == '"' + "x" * 118 + "…"
    assert len(short_json("x" * 500)) == 120
    assert short_json("abcdef", limit=5) == '"abc…'
    assert short_json("abc", limit=5) == '"abc"'


def test_short_json_of_what_json_cannot_hold_is_its_repr():
    assert short_json({"s": {1}}) == "{'s': {1}}"
    assert short_json([2 ** 70], limit=10) == "[11805916…"
