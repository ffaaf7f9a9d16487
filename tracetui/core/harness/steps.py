"""One engine, two drivers: how the harness makes live calls from sync and async code.

The harness's rules (what is served, what is intercepted, what diverges, what is written) are
written once, in ``Session``'s step generators (``tracetui.core.harness.context``). A step
generator does no I/O of its own: when a rule needs a live call (a tool in record mode, the model
in record or model-in-the-loop mode, a loose-mode miss with ``--allow-live``) it yields a
``Live`` and is sent the result, or has the call's exception thrown into it. ``run_steps``
drives a generator from sync code; ``arun_steps`` from a coroutine, awaiting the live call, so a
live model call made inside an async framework never blocks the event loop (the ``sans-I/O``
shape of h11 and h2).

Also the value helpers the engine shares: ``jsonable``, ``copy_value``, ``short_json``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from tracetui.core.errors import HarnessError
from tracetui.core.harness.guard import allow_network

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class Live:
    """A live call a step generator asks its driver to make.

    Attributes:
        call: A callable taking no arguments; it may return an awaitable (driven by
            ``arun_steps`` only).
        network: Lift the socket guard for this call alone (``allow_network``): a model call in
            model-in-the-loop replay, a loose-mode miss allowed live.
    """

    call: Callable[[], Any]
    network: bool = False


Steps = Generator[Live, Any, T]
"""A step generator: yields ``Live`` calls, is sent their results, returns the step's value."""


def run_steps(gen: Steps[T]) -> T:
    """Drive ``gen`` from sync code: each ``Live`` is called here and its value sent back; its
    exception (``Exception`` only: ``KeyboardInterrupt`` goes straight up) is thrown in.

    Raises:
        HarnessError: a live call returned an awaitable (an ``async def`` tool or client called
            from sync code: use the async form, ``ctx.atool`` / ``ctx.allm``).
        Whatever the step raises (a divergence, the live tool's own exception).
    """
    try:
        step = next(gen)
        while True:
            try:
                value = _call(step)
                if inspect.isawaitable(value):
                    close = getattr(value, "close", None)
                    if close is not None:
                        close()  # no "coroutine was never awaited" warning
                    raise HarnessError("a live call returned an awaitable in synchronous code: an async tool or "
                                       "client needs the async form (ctx.atool, ctx.allm, or an async framework)")
            except Exception as exc:
                step = gen.throw(exc)
            else:
                step = gen.send(value)
    except StopIteration as stop:
        return stop.value


async def arun_steps(gen: Steps[T]) -> T:
    """Drive ``gen`` from a coroutine: like ``run_steps``, awaiting a live call's awaitable (the
    socket guard's allowance, a context variable, holds across the ``await``)."""
    try:
        step = next(gen)
        while True:
            try:
                if step.network:
                    with allow_network():
                        value = step.call()
                        if inspect.isawaitable(value):
                            value = await value
                else:
                    value = step.call()
                    if inspect.isawaitable(value):
                        value = await value
            except Exception as exc:
                step = gen.throw(exc)
            else:
                step = gen.send(value)
    except StopIteration as stop:
        return stop.value


def _call(step: Live) -> Any:
    if step.network:
        with allow_network():
            return step.call()
    return step.call()


def jsonable(value: Any) -> Any:
    """``value`` as JSON types (tuples to lists, datetimes to ISO text, other objects to ``str``)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str))
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def copy_value(value: Any) -> Any:
    """A deep copy of a JSON value (what a replay hands the agent: it may change it freely)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(value)


def short_json(value: Any, limit: int = 120) -> str:
    """Canonical (sorted-key) JSON of ``value``, cut to ``limit`` characters with ``…``."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
