"""What the agent receives as ``ctx``: ``RunContext``, a thin face over the harness engine
(``tracetui.core.harness.context.Session``), sync and async."""

from __future__ import annotations

import random as _random_mod
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tracetui.core.harness.context import Session


class RunContext:
    """What the agent receives as ``ctx``. Every method records a span (redacted before writing).

    Methods raise what the boundary raised: a live tool's own exception (record, loose with
    ``--allow-live``); ``UnrecordedCall``, ``RecordingExhausted``, ``InputMismatch`` (replay
    divergences, always also written to the replay trace); ``RecordedToolError`` (a recorded
    failure, replayed); ``HarnessError`` (a tool or model the module does not declare).
    """

    __slots__ = ("_s", "input", "run_id", "mode")

    def __init__(self, session: Session, input: Any, run_id: str) -> None:
        self._s = session
        self.input = input
        self.run_id = run_id
        self.mode = session.mode

    def tool(self, name: str, args: Mapping[str, Any] | None = None, *, idempotency_key: str | None = None) -> Any:
        """Call tool ``name`` with ``args`` (a mapping, passed to the live tool as keyword arguments).

        Reads (tools on ``READ_TOOLS``) are answered from the recording in replay; every other tool
        is a write, intercepted in replay: its intent is recorded and a success marked simulated
        is returned. ``idempotency_key`` (or an ``idempotency_key`` argument) lets a replay report
        a write issued twice.

        Returns:
            The tool's output (a JSON value). In replay, a fresh copy the agent may change.
        """
        return self._s.tool(name, args, idempotency_key)

    async def atool(self, name: str, args: Mapping[str, Any] | None = None, *,
                    idempotency_key: str | None = None) -> Any:
        """``tool`` for async agents: an ``async def`` tool is awaited, and the event loop is never
        blocked by the harness. Same rules, same return value."""
        return await self._s.atool(name, args, idempotency_key)

    def llm(self, messages: list[Mapping[str, Any]], *, model: str, prompt_id: str | None = None,
            prompt_version: str | None = None, **params: Any) -> Any:
        """Call the model with the **rendered** messages and return the assistant message
        ``{"role": "assistant", "content": str | None, "tool_calls": [{"name", "arguments"}]}``.

        ``prompt_id``/``prompt_version`` are recorded, not sent; ``params`` (temperature, max_tokens,
        seed, ...) are sent to ``MODEL`` and recorded. Frozen replay serves the recorded output for
        the same messages, model and params, and raises ``InputMismatch`` otherwise.
        """
        return self._s.llm(messages, model, prompt_id, prompt_version, params)

    async def allm(self, messages: list[Mapping[str, Any]], *, model: str, prompt_id: str | None = None,
                   prompt_version: str | None = None, **params: Any) -> Any:
        """``llm`` for async agents: an ``async def`` ``MODEL`` is awaited (a live model call never
        blocks the event loop). Same rules, same return value."""
        return await self._s.allm(messages, model, prompt_id, prompt_version, params)

    def retrieve(self, index: str, query: Any, **kw: Any) -> Any:
        """Retrieve from ``index`` (``RETRIEVERS[index](query, **kw)`` live); a read, keyed by index,
        query and ``kw`` (``top_k``, ``filters``, ...). Returns the documents."""
        return self._s.retrieve(index, query, kw)

    async def aretrieve(self, index: str, query: Any, **kw: Any) -> Any:
        """``retrieve`` for async agents (an ``async def`` retriever is awaited)."""
        return await self._s.aretrieve(index, query, kw)

    def decide(self, name: str, value: Any, *, options: Any = None) -> Any:
        """Record a planner decision (what was decided, the value chosen, the options) and return
        ``value``: so a reader can tell whether the model or the code chose."""
        return self._s.decide(name, value, options)

    def now(self) -> datetime:
        """The run's clock: a timezone-aware datetime, the same for the whole run. Record mode: the
        time the run started (or ``--clock``); replay: the recording's, in its timezone."""
        return self._s.clock

    def new_id(self, prefix: str = "") -> str:
        """A random UUID (version 4 form) from the run's seed: the same sequence in the recording and
        every replay of it. ``prefix`` is prepended."""
        return prefix + str(uuid.UUID(int=self._s.rng.getrandbits(128), version=4))

    @property
    def random(self) -> _random_mod.Random:
        """The run's seeded ``random.Random`` (the same sequence in the recording and its replays)."""
        return self._s.rng
