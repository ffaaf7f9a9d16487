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
    at the same instant, else a new list.

    Time: about linear in a group's spans and messages (the dependencies are found through indexes of
    span ids, call ids and tool results, not by comparing every pair), plus a bit set per span in a
    dependency: a 20k-span group (a second-precision clock) takes a fraction of a second."""
    starts = [s.start_ns for s in spans if s.start_ns is not None]
    if len(set(starts)) == len(starts):
        return spans
    out: list[Span] = []
    ambiguous = _Ambiguous()
    i, n = 0, len(spans)
    while i < n:
        j = i + 1
        start = spans[i].start_ns
        while j < n and start is not None and spans[j].start_ns == start:
            j += 1
        group = spans[i:j]
        out.extend(_order_group(group, ambiguous) if len(group) > 1 else group)
        i = j
    if ambiguous.first is not None:
        a, b = ambiguous.first
        more = f"; {ambiguous.count - 1} more such pair(s)" if ambiguous.count > 1 else ""
        issues.append(ReadIssue(
            path, b.line, "start_ns",
            f"spans {a.span_id!r} ({a.name}) and {b.span_id!r} ({b.name}) have the same parent and start at the "
            f"same instant, and nothing in their data orders them: the file's order is kept{more}", "warning"))
    return out


class _Ambiguous:
    """The sibling pairs left in file order: the first (in file order) and how many."""

    __slots__ = ("count", "first")

    def __init__(self) -> None:
        self.first: tuple[Span, Span] | None = None
        self.count = 0

    def add(self, a: Span, b: Span, count: int = 1) -> None:
        if self.first is None:
            self.first = (a, b)
        self.count += count


def _order_group(group: list[Span], ambiguous: _Ambiguous) -> list[Span]:
    """One tie group in dependency order (Kahn's algorithm, file order among the free ones)."""
    try:
        after = _edges(group)
        by_parent: dict[Any, list[int]] = {}
        for k, s in enumerate(group):
            by_parent.setdefault(s.parent_id, []).append(k)
    except TypeError:  # an unhashable id or call id (a malformed file): every pair compared
        after = _pairwise_edges(group)
        by_parent = {}
        for k, s in enumerate(group):
            for key, members in by_parent.items():
                if key == s.parent_id:
                    members.append(k)
                    break
            else:
                by_parent[s.parent_id] = [k]  # type: ignore[index]
    n = len(group)
    nexts: list[list[int]] = [[] for _ in range(n)]
    for m, deps in enumerate(after):
        for d in deps:
            nexts[d].append(m)
    remaining = [len(d) for d in after]
    heap = [k for k in range(n) if not remaining[k]]  # ascending: a heap already
    ordered: list[int] = []
    while heap:
        k = heapq.heappop(heap)
        ordered.append(k)
        for m in nexts[k]:
            remaining[m] -= 1
            if not remaining[m]:
                heapq.heappush(heap, m)
    acyclic = len(ordered) == n
    if not acyclic:  # a cycle in the data (should not happen): file order for the rest
        placed = set(ordered)
        ordered += [k for k in range(n) if k not in placed]
    _siblings_left(group, after, nexts, by_parent, ordered if acyclic else None, ambiguous)
    return [group[k] for k in ordered]


def _siblings_left(group: list[Span], after: list[set[int]], nexts: list[list[int]],
                   by_parent: dict[Any, list[int]], topo: list[int] | None, ambiguous: _Ambiguous) -> None:
    """Add to ``ambiguous`` the pairs ``x < y`` of ``group`` with one parent and neither following the other
    through the dependencies (transitively), in ``(x, y)`` order. ``topo``: the group in dependency order, or
    None (a cycle). Each span in a dependency gets two bit sets: the spans it follows and the spans that follow
    it; a span in none is related to no other span."""
    n = len(group)
    touched = [bool(after[k] or nexts[k]) for k in range(n)]
    follows = [0] * n  # bit x set: this span follows x
    followed = [0] * n  # bit y set: y follows this span
    if any(touched):
        if topo is not None:
            for k in topo:
                acc = 0
                for d in after[k]:
                    acc |= follows[d] | (1 << d)
                follows[k] = acc
            for k in reversed(topo):
                acc = 0
                for m in nexts[k]:
                    acc |= followed[m] | (1 << m)
                followed[k] = acc
        else:
            for k in range(n):
                if touched[k]:
                    follows[k] = _reach(k, after)
                    followed[k] = _reach(k, nexts)
    first: tuple[int, int] | None = None
    count = 0
    for members in by_parent.values():
        if len(members) < 2:
            continue
        later = 0
        for k in members:
            later |= 1 << k
        for k in members:
            later &= ~(1 << k)  # the members after k
            free = later & ~(follows[k] | followed[k]) if touched[k] else later
            if free:
                count += free.bit_count()
                y = (free & -free).bit_length() - 1
                if first is None or (k, y) < first:
                    first = (k, y)
    if first is not None:
        ambiguous.add(group[first[0]], group[first[1]], count)


def _reach(k: int, edges: list[Any]) -> int:
    """Bits of the spans reached from ``k`` through ``edges`` (``k`` itself only through a cycle)."""
    seen = 0
    todo = list(edges[k])
    while todo:
        d = todo.pop()
        if not seen >> d & 1:
            seen |= 1 << d
            todo.extend(edges[d])
    return seen


def _edges(group: list[Span]) -> list[set[int]]:
    """For each span of ``group``, the spans it must follow (``_depends``), found through indexes: span ids,
    tool call ids, tool results (their text, and their value for a message holding it as JSON).

    Raises:
        TypeError: an id or call id that cannot be a dict key (the caller compares every pair instead).
    """
    n = len(group)
    after: list[set[int]] = [set() for _ in range(n)]
    by_id: dict[Any, list[int]] = {}
    for k, s in enumerate(group):
        by_id.setdefault(s.span_id, []).append(k)
    for y, b in enumerate(group):
        if b.parent_id is not None:
            for x in by_id.get(b.parent_id, ()):
                if x != y:
                    after[y].add(x)
    tools = [k for k, s in enumerate(group) if s.kind is SpanKind.TOOL]
    llms = [k for k, s in enumerate(group) if s.kind is SpanKind.LLM]
    if not tools or not llms:
        return after
    # a model call after a tool whose result its input quotes
    by_call: dict[Any, list[int]] = {}
    by_text: dict[str, list[int]] = {}
    by_value: dict[Any, list[int]] = {}
    outputs: dict[int, Any] = {}
    for x in tools:
        data = group[x].data
        call_id, output = data.get("call_id"), data.get("output")
        if call_id:
            by_call.setdefault(call_id, []).append(x)
        text = _text(output)
        if text:
            by_text.setdefault(text, []).append(x)
            key = _value_key(output)
            if key is not _NO_KEY:
                by_value.setdefault(key, []).append(x)
                outputs[x] = output
    for y in llms:
        messages = group[y].data.get("messages")
        if not isinstance(messages, list):
            continue
        for m in messages:
            if not isinstance(m, Mapping) or m.get("role") != "tool":
                continue
            tcid = m.get("tool_call_id")
            if tcid:
                after[y].update(by_call.get(tcid, ()))
            content = m.get("content")
            if isinstance(content, str):
                after[y].update(by_text.get(content, ()))
                try:
                    parsed = orjson.loads(content)
                except (ValueError, TypeError):
                    continue
                key = _value_key(parsed)
                if key is not _NO_KEY:
                    after[y].update(x for x in by_value.get(key, ()) if bool(parsed == outputs[x]))
    # a tool call after the model call whose output asked for it
    by_asked: dict[Any, list[int]] = {}
    for x in llms:
        out = group[x].data.get("output")
        calls = out.get("tool_calls") if isinstance(out, Mapping) else None
        for c in calls or ():
            if isinstance(c, Mapping):
                by_asked.setdefault(c.get("id"), []).append(x)
    for y in tools:
        call_id = group[y].data.get("call_id")
        if call_id:
            after[y].update(by_asked.get(call_id, ()))
    return after


def _pairwise_edges(group: list[Span]) -> list[set[int]]:
    """``_edges`` by comparing every pair (``_depends``): for ids that cannot be indexed."""
    after: list[set[int]] = [set() for _ in range(len(group))]
    for x, a in enumerate(group):
        for y, b in enumerate(group):
            if x != y and _depends(b, a):
                after[y].add(x)
    return after


_NO_KEY = object()


def _value_key(v: Any, depth: int = 0) -> Any:
    """A hashable key of a JSON value, equal for values Python finds equal (``1``, ``1.0`` and ``True`` alike);
    ``_NO_KEY`` when there is none (nesting past 64 levels, a value that is not JSON)."""
    if depth > 64:
        return _NO_KEY
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, int, float)):
        try:
            f = float(v)
        except OverflowError:
            return ("n", v)
        return ("n", f)
    if isinstance(v, list):
        items = tuple(_value_key(x, depth + 1) for x in v)
        return _NO_KEY if _NO_KEY in items else ("l", items)
    if isinstance(v, dict):
        pairs = [(k, _value_key(x, depth + 1)) for k, x in v.items()]
        return _NO_KEY if any(x is _NO_KEY for _, x in pairs) else ("d", frozenset(pairs))
    return _NO_KEY


def _text(output: Any) -> str | None:
    """A tool result as ``_quotes`` compares it with a message's content: itself if a string, else its
    canonical JSON; None without one."""
    if isinstance(output, str):
        return output
    if output is None:
        return None
    try:
        return canonical_json(output).decode()
    except (TypeError, ValueError):
        return None


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
