"""Spans that start at the same instant, ordered by what their data says (``tree.finish_spans``).

A source without an emission order (its spans have no ``seq``) is ordered by start time, and
clocks of millisecond precision make ties: two observations of a Langfuse export, a tool and the
model call that read its result. Left to the file's order, the same run exported twice can come
out in two orders. Within a group of spans starting at the same instant, ``order_ties`` puts a
span after those its data shows it depends on:

- a child after its parent;
- a model call after a tool whose result its input quotes (a ``tool`` message naming the tool's
  ``call_id``, or holding its output);
- a tool call after the model call whose output asked for it (a tool call naming its ``call_id``).

Spans of one group with nothing between them keep the file's order; when two of them are
siblings (their order is the run's order at that level) the read reports it once per run: the
order is the file's, not the data's.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Any

import orjson

from tracetui.core.canonical import canonical_json
from tracetui.core.model import ReadIssue, Span, SpanKind

__all__ = ["order_ties"]


def order_ties(spans: list[Span], path: str, issues: list[ReadIssue]) -> list[Span]:
    """``spans`` (sorted by start time, ties in file order) with each tie group reordered by its
    data (module docstring); one ``warning`` issue when sibling spans of a group stay in file
    order with nothing in their data to order them. Returns ``spans`` itself when no two start
    at the same instant, else a new list."""
    starts = [s.start_ns for s in spans if s.start_ns is not None]
    if len(set(starts)) == len(starts):
        return spans
    out: list[Span] = []
    ambiguous: list[tuple[Span, Span]] = []
    i, n = 0, len(spans)
    while i < n:
        j = i + 1
        start = spans[i].start_ns
        while j < n and start is not None and spans[j].start_ns == start:
            j += 1
        group = spans[i:j]
        out.extend(_order_group(group, ambiguous) if len(group) > 1 else group)
        i = j
    if ambiguous:
        a, b = ambiguous[0]
        more = f"; {len(ambiguous) - 1} more such pair(s)" if len(ambiguous) > 1 else ""
        issues.append(ReadIssue(
            path, b.line, "start_ns",
            f"spans {a.span_id!r} ({a.name}) and {b.span_id!r} ({b.name}) have the same parent and start at the "
            f"same instant, and nothing in their data orders them: the file's order is kept{more}", "warning"))
    return out


def _order_group(group: list[Span], ambiguous: list[tuple[Span, Span]]) -> list[Span]:
    """One tie group in dependency order (Kahn's algorithm, file order among the free ones)."""
    after: dict[int, set[int]] = {k: set() for k in range(len(group))}  # k -> spans k must follow
    for x, a in enumerate(group):
        for y, b in enumerate(group):
            if x != y and _depends(b, a):
                after[y].add(x)
    ordered: list[int] = []
    heap = [k for k, deps in after.items() if not deps]
    heapq.heapify(heap)
    placed: set[int] = set()
    while heap:
        k = heapq.heappop(heap)
        ordered.append(k)
        placed.add(k)
        for m, deps in after.items():
            if m not in placed and m not in heap and k in deps and deps <= placed:
                heapq.heappush(heap, m)
    if len(ordered) < len(group):  # a cycle in the data (should not happen): file order for the rest
        ordered += [k for k in range(len(group)) if k not in placed]
    for x in range(len(group)):
        for y in range(x + 1, len(group)):
            a, b = group[x], group[y]
            if a.parent_id == b.parent_id and not _related(x, y, after) and not _related(y, x, after):
                ambiguous.append((a, b))
    return [group[k] for k in ordered]


def _related(x: int, y: int, after: Mapping[int, set[int]]) -> bool:
    """Whether ``y`` follows ``x`` through the dependencies."""
    seen: set[int] = set()
    todo = [y]
    while todo:
        k = todo.pop()
        if x in after[k]:
            return True
        for d in after[k] - seen:
            seen.add(d)
            todo.append(d)
    return False


def _depends(b: Span, a: Span) -> bool:
    """Whether ``b``'s data shows it comes after ``a``."""
    if b.parent_id is not None and b.parent_id == a.span_id:
        return True
    if a.kind is SpanKind.TOOL and b.kind is SpanKind.LLM:
        return _quotes(b.data.get("messages"), a)
    if a.kind is SpanKind.LLM and b.kind is SpanKind.TOOL:
        call_id = b.data.get("call_id")
        out = a.data.get("output")
        calls = out.get("tool_calls") if isinstance(out, Mapping) else None
        return bool(call_id) and any(isinstance(c, Mapping) and c.get("id") == call_id for c in calls or ())
    return False


def _quotes(messages: Any, tool: Span) -> bool:
    """Whether an LLM input quotes ``tool``'s result: a ``tool`` message naming its call id, or
    holding its output."""
    if not isinstance(messages, list):
        return False
    call_id = tool.data.get("call_id")
    output = tool.data.get("output")
    text = output if isinstance(output, str) else None
    if text is None and output is not None:
        try:
            text = canonical_json(output).decode()
        except (TypeError, ValueError):
            text = None
    for m in messages:
        if not isinstance(m, Mapping) or m.get("role") != "tool":
            continue
        if call_id and m.get("tool_call_id") == call_id:
            return True
        content = m.get("content")
        if text and isinstance(content, str) and (content == text or _same_json(content, output)):
            return True
    return False


def _same_json(content: str, output: Any) -> bool:
    try:
        return bool(orjson.loads(content) == output)
    except (ValueError, TypeError):
        return False
