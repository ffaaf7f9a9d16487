"""Random ids and ``now()`` values in tool arguments: the evidence ``nondeterministic_argument`` rests on.

``ArgumentCheck`` looks through a tool call's arguments for values minted at run time (UUID-4s,
date-times and epoch times near the run's start) that the agent did not read anywhere before the
call; ``triage.replayability`` turns what it finds into a finding (docs/triage.md).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Any

import orjson

from tracetui.core.model import Span, SpanKind
from tracetui.core.readers.timefmt import iso_ns

__all__ = ["ArgumentCheck"]

_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_DAY_NS = 86_400 * 10**9


class ArgumentCheck:
    """Random ids and ``now()`` values in tool arguments (minted by code, they differ on replay).

    Candidates: UUID-4 strings (unless the header records a ``seed``: the harness draws ids
    from a seeded generator); ISO date-times with a time of day, and epoch seconds or
    milliseconds (numbers or digit strings), within a day of the run's start (unless equal to
    the header clock, which a replay freezes). A candidate the agent read (it appears in the
    run's input, in the messages or answer of the llm call before the tool call, or in the
    outputs of the 20 spans before it) is data, not nondeterminism.
    """

    def __init__(self, spans: list[Span], header: Mapping[str, Any], blobs: dict[int, str]) -> None:
        """``blobs``: the text of the llm span at an index, shared with the caller (filled as needed)."""
        self.spans = spans
        self.header = header
        self.blobs = blobs
        h = header
        self.seeded = h.get("seed") is not None
        start = h.get("start_ns")
        if type(start) is not int:
            start = iso_ns(h.get("started_at"))
        if start is None:
            starts = [s.start_ns for s in spans if s.start_ns is not None]
            start = min(starts) if starts else None
        self.start = start
        clock = h.get("clock")
        self.clock = iso_ns(clock.get("now")) if isinstance(clock, Mapping) else None
        self.input_blob: str | None = None
        self.llms: list[int] = []
        if start is None:
            self.sec = self.ms = (1.0, 0.0)  # empty ranges
        else:
            self.sec = ((start - _DAY_NS) / 1e9, (start + _DAY_NS) / 1e9)
            self.ms = ((start - _DAY_NS) / 1e6, (start + _DAY_NS) / 1e6)

    def check(self, s: Span, i: int, args: Any) -> tuple[str, str] | None:
        """The first minted value in ``args`` of the tool span ``s`` (at index ``i``) and why, or None."""
        found: list[tuple[str, str]] = []
        stack = [args]
        (slo, shi), (mlo, mhi) = self.sec, self.ms
        while stack and len(found) < 3:
            v = stack.pop()
            t = type(v)
            if t is str:
                n = len(v)
                if 16 <= n <= 200:
                    if not self.seeded and n >= 36 and "-" in v:
                        m = _UUID4.search(v)
                        if m is not None:
                            found.append((m.group(0), "a random UUID-4"))
                            continue
                    if self.start is not None and ":" in v:
                        m = _ISO.search(v)
                        if m is not None:
                            why = self._near(iso_ns(m.group(0).replace(" ", "T")))
                            if why:
                                found.append((m.group(0), why))
                elif self.start is not None and n in (10, 13) and v.isdigit():
                    why = self._epoch(int(v))
                    if why:
                        found.append((v, why))
            elif t is int or t is float:
                if slo <= v <= shi or mlo <= v <= mhi:
                    why = self._epoch(v)
                    if why:
                        found.append((repr(v) if t is float else str(v), why))
            elif t is dict:
                stack.extend(v.values())
            elif t is list:
                stack.extend(v)
        for value, why in found:
            if not self._read(s, i, value):
                return value, why
        return None

    def _near(self, ns: int | None) -> str:
        if ns is None or self.start is None or abs(ns - self.start) > _DAY_NS:
            return ""
        if self.clock is not None and ns == self.clock:
            return ""  # the header clock: a replay freezes now() to it
        return "a date-time within a day of the run's start"

    def _epoch(self, v: float) -> str:
        if isinstance(v, bool) or self.start is None:
            return ""
        for scale, unit in ((10**9, "epoch seconds"), (10**6, "epoch milliseconds")):
            ns = v * scale
            if abs(ns - self.start) <= _DAY_NS:
                if self.clock is not None and int(ns) // 10**9 == self.clock // 10**9:
                    return ""
                return f"{unit} within a day of the run's start"
        return ""

    def _read(self, s: Span, i: int, value: str) -> bool:
        """Whether ``value`` appears in what the agent read before the call at index ``i``."""
        spans = self.spans
        if self.input_blob is None:
            self.input_blob = _text(self.header.get("input"))
            self.llms = [j for j, p in enumerate(spans) if p.kind is SpanKind.LLM]
        if value in self.input_blob:
            return True
        at = bisect_left(self.llms, i) - 1
        if at >= 0:
            j = self.llms[at]
            blob = self.blobs.get(j)
            if blob is None:
                p = spans[j]
                blob = self.blobs[j] = _text(p.data.get("messages")) + _text(p.data.get("output"))
            if value in blob:
                return True
        for p in spans[max(0, i - 20):i]:
            if p.kind is not SpanKind.LLM and value in _text(
                    p.data.get("documents") if p.kind is SpanKind.RETRIEVAL else p.data.get("output")):
                return True
        return False


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)
