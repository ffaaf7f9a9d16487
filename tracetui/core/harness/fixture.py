"""Fixture stores: a small state seeded from the recorded reads, to which intercepted writes apply.

A fixture answers consistently when the agent takes a path the recording never saw, and lets a
replay grade the **final state** and find **collateral damage** (changes nobody asked for)
(practice.md, "Three ways to freeze reads" and "Rules that hold whatever the mode").

An agent module that wants one declares ``FIXTURE``, a factory of an object with:

=========================================  ===================================================
``seed(tool, arguments, output)``          called for every recorded read, in call order
``load(seed)``                             optional: a user seed file's value (a JSON object)
``call(tool, arguments, *, write)``        answer a read, or apply a write and return its result;
                                           raise ``LookupError`` (``KeyError``...) when the store
                                           cannot answer: a divergence, never a live call
``state()``                                the whole state as a JSON value
=========================================  ===================================================

Without one, ``RecordedReadsFixture`` serves each read's latest recorded output and keeps
writes as a log: later reads do not see them (the replay summary says so).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Protocol

import orjson

from tracetui.core.canonical import canonical_json
from tracetui.core.values import strict_same


class FixtureStore(Protocol):
    """What a fixture store offers (see the module docstring)."""

    def seed(self, tool: str, arguments: Any, output: Any) -> None: ...

    def call(self, tool: str, arguments: Any, *, write: bool) -> Any: ...

    def state(self) -> Any: ...


class RecordedReadsFixture:
    """The default fixture: recorded reads by tool and canonical arguments, writes kept as a log.

    State: ``{"reads": {tool: {canonical_args_json: [output, ...]}}, "writes": [{"tool", "arguments"}]}``.
    A read gets its key's recordings in call order, as the live system answered, and the last one
    again once they are used up (it keeps answering when the agent reads more than recorded); a
    read never recorded raises ``KeyError``. Writes are logged, not applied: without a ``FIXTURE``
    that knows what a write does, later reads cannot see it (the replay says so).
    """

    applies_writes = False

    def __init__(self) -> None:
        self._reads: dict[str, dict[str, list[Any]]] = {}
        self._served: dict[tuple[str, str], int] = {}
        self._writes: list[dict[str, Any]] = []

    def seed(self, tool: str, arguments: Any, output: Any) -> None:
        self._reads.setdefault(tool, {}).setdefault(canonical_json(arguments).decode(), []).append(output)

    def load(self, seed: Mapping[str, Any]) -> None:
        """Merge a seed ``{"reads": {tool: {args_json: output}}}``: each given output is then what
        that read answers (after the recorded ones are used up, and instead of them if none)."""
        for tool, entries in (seed.get("reads") or {}).items():
            for args, output in entries.items():
                self._reads.setdefault(tool, {})[canonical_json(orjson.loads(args)).decode()] = [output]

    def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
        if write:
            self._writes.append({"tool": tool, "arguments": arguments})
            return {"status": "ok", "simulated": True, "intercepted": True}
        key = canonical_json(arguments).decode()
        outputs = self._reads[tool][key]
        i = self._served.get((tool, key), 0)
        self._served[(tool, key)] = i + 1
        return outputs[min(i, len(outputs) - 1)]

    def state(self) -> Any:
        return {"reads": self._reads, "writes": self._writes}


def snapshot(store: Any) -> Any:
    """A deep, JSON-round-tripped copy of ``store.state()`` (so later writes cannot change it)."""
    return orjson.loads(orjson.dumps(store.state(), option=orjson.OPT_NON_STR_KEYS, default=str))


def state_changes(before: Any, after: Any) -> list[dict[str, Any]]:
    """Every leaf change between two JSON states, in document order, never capped:
    ``[{"path": "state.appointments.APT-1.date", "before": ..., "after": ...}]``. A key only in
    ``after`` has ``"added": true`` (``before`` None), one only in ``before`` ``"removed": true``.
    Lists of equal length are compared item by item; otherwise items are matched as a
    sequence (``difflib``), so removing one slot from a list reports that slot removed, not
    every later item shifted. A removed item's path has its old index, an added one its new."""
    changes: list[dict[str, Any]] = []
    stack: list[tuple[str, Any, Any]] = [("state", before, after)]
    while stack:
        path, a, b = stack.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            keys = list(a) + [k for k in b if k not in a]
            for k in reversed(keys):
                if k in a and k in b and a[k] == b[k] and strict_same(a[k], b[k]):
                    continue
                stack.append((f"{path}.{k}", a.get(k, _ABSENT), b.get(k, _ABSENT)))
        elif isinstance(a, list) and isinstance(b, list):
            stack.extend(reversed(_list_changes(path, a, b)))
        elif a != b or type(a) is not type(b):
            entry: dict[str, Any] = {"path": path, "before": None if a is _ABSENT else a,
                                     "after": None if b is _ABSENT else b}
            if a is _ABSENT:
                entry["added"] = True
            if b is _ABSENT:
                entry["removed"] = True
            changes.append(entry)
    return changes


_ABSENT: Any = object()


def _list_changes(path: str, a: list[Any], b: list[Any]) -> list[tuple[str, Any, Any]]:
    if len(a) == len(b):
        return [(f"{path}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y or not strict_same(x, y)]
    keys_a = [canonical_json(x) for x in a]
    keys_b = [canonical_json(y) for y in b]
    out: list[tuple[str, Any, Any]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:
            out.extend((f"{path}[{j1 + k}]", a[i1 + k], b[j1 + k]) for k in range(i2 - i1))
            continue
        out.extend((f"{path}[{i}]", a[i], _ABSENT) for i in range(i1, i2))
        out.extend((f"{path}[{j}]", _ABSENT, b[j]) for j in range(j1, j2))
    return out
