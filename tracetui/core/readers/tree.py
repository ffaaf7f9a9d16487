"""Make a run's span tree sound: order by ``seq``, drop duplicate ids, re-root
orphans, break parent cycles, put parents before children when the order comes
from clocks; and say when content was not captured. Shared by every reader
through ``read_trace``."""

from __future__ import annotations

import heapq
import operator
from collections.abc import Mapping, Sequence
from itertools import compress, repeat
from typing import Any

from tracetui.core.model import ReadIssue, Span, SpanKind
from tracetui.core.readers.ties import order_ties

__all__ = ["MISSING_PARENT", "content_issues", "finish_spans"]

MISSING_PARENT = "tracetui.missing_parent"
"""Attribute holding the parent id of a span re-rooted because no span has that id."""

_SPAN_ID = operator.attrgetter("span_id")
_SEQ = operator.attrgetter("seq")
_PARENT_ID = operator.attrgetter("parent_id")
_KIND = operator.attrgetter("kind")


def finish_spans(spans: Sequence[Span], path: str, issues: list[ReadIssue]) -> list[Span]:
    """Order spans by ``seq`` and make the tree sound.

    - Spans without a ``seq`` (-1) get one from ``(start_ns, file order)``, spans starting at
      the same instant ordered by their data where it says (``ties.order_ties``: parent before
      child, a tool before the model call quoting its result), a warning when siblings tie with
      nothing to order them.
    - A duplicate ``span_id`` keeps its first span; the later one is skipped.
    - A parent id that no span has makes the span a root, reported once per
      span with its line; the id is kept in ``attributes["tracetui.missing_parent"]``
      (``MISSING_PARENT``) for display (the parent was never recorded, sits in
      another file, or the file is incomplete).
    - A parent cycle is broken at the span found in it.
    - When ``seq`` came from ``start_ns`` (the source has no emission order),
      a child that starts before its parent (clocks of two processes or hosts
      disagree) is put after it: the order becomes the earliest-starting span
      whose parent is already placed, first (a stable topological fix of the
      start order), so a skewed run and the same run without skew align
      alike. One warning per run names the first such span and the skew in ms;
      a child starting at the same instant as its parent is moved silently.

    The common case (unique ids, seq set, parents earlier) is checked with
    C-level passes (``map``/``zip`` over attribute getters) and one dict, not
    Python loops and two dicts: 0.18 s against 0.24 s for 100k spans.
    """
    unique = list(spans)
    n = len(unique)
    position = dict(zip(map(_SPAN_ID, unique), range(n)))
    if len(position) != n:
        first: dict[str, Span] = {}
        for s in spans:
            if s.span_id in first:
                issues.append(ReadIssue(path, s.line, "span_id", f"duplicate span_id {s.span_id!r}; the later span is skipped"))
                continue
            first[s.span_id] = s
        unique = list(first.values())
        n = len(unique)
        position = {}
    seqs = list(map(_SEQ, unique))
    derived = bool(n) and min(seqs) < 0
    if derived:
        big = 1 << 62
        order = sorted(range(n), key=lambda i: (unique[i].start_ns if unique[i].start_ns is not None else big, i))
        for k, span in enumerate(order_ties([unique[i] for i in order], path, issues)):
            span.seq = k  # fresh from the reader, not yet shared
        seqs = list(map(_SEQ, unique))
    if seqs != sorted(seqs):  # sorted(): O(n) on the usual already-ordered input
        unique.sort(key=_SEQ)  # stable: ties keep file order
        position = {}
    if not position:
        position = dict(zip(map(_SPAN_ID, unique), range(n)))
    position[None] = -1  # type: ignore[index]  # a root
    # A missing parent gets the span's own index from .get's default: not earlier, so not "all".
    if all(map(operator.lt, map(position.get, map(_PARENT_ID, unique), range(n)), range(n))):
        return unique  # every parent known and earlier in seq: no orphan, no cycle possible (O(N))
    # Spans are fresh from the reader and not yet shared: fixed in place, like seq above.
    seen = {s.span_id: s for s in unique}
    for s in unique:
        if s.parent_id is not None and s.parent_id not in seen:
            issues.append(ReadIssue(path, s.line, "parent_id", f"span {s.span_id!r} names parent {s.parent_id!r}, which is not in the trace; shown as a root (the id is kept in attributes[{MISSING_PARENT!r}])", "warning"))
            s.attributes = {**s.attributes, MISSING_PARENT: s.parent_id}  # a new dict: readers may share one
            s.parent_id = None
    # Break cycles: walk up from each span; a revisit means a cycle. A walk stops
    # at a span an earlier walk went through (it reaches a root, or a broken
    # cycle, now a root): O(N) on a 100k-deep chain, not O(N * depth).
    parent = {s.span_id: s.parent_id for s in unique}
    broken: set[str] = set()
    done: set[str] = set()
    for s in unique:
        path_ids: set[str] = set()
        cur: str | None = s.span_id
        while cur is not None and cur not in done:
            if cur in path_ids:
                broken.add(cur)
                parent[cur] = None
                issues.append(ReadIssue(path, seen[cur].line, "parent_id", f"span {cur!r} is its own ancestor; shown as a root", "warning"))
                break
            path_ids.add(cur)
            cur = parent[cur]
        done |= path_ids
    for cur in broken:
        seen[cur].parent_id = None
    if derived:
        return _parents_first(unique, path, issues)
    return unique


def _parents_first(spans: list[Span], path: str, issues: list[ReadIssue]) -> list[Span]:
    """Spans ordered by start (seq derived), with every parent moved before its children.

    Every parent id names a span and there is no cycle (``finish_spans`` fixed
    both). Kahn's algorithm on a heap of start-order positions: the next span
    is the earliest-starting one whose parent is already placed. A span whose
    parent started earlier keeps its place relative to the others.
    """
    pos = {s.span_id: i for i, s in enumerate(spans)}
    late = [i for i, s in enumerate(spans) if s.parent_id is not None and pos[s.parent_id] > i]
    if not late:
        return spans
    children: dict[int, list[int]] = {}
    heap: list[int] = []
    for i, s in enumerate(spans):
        if s.parent_id is None:
            heap.append(i)
        else:
            children.setdefault(pos[s.parent_id], []).append(i)
    heapq.heapify(heap)
    out: list[Span] = []
    while heap:
        i = heapq.heappop(heap)
        out.append(spans[i])
        for c in children.get(i, ()):
            heapq.heappush(heap, c)
    for k, s in enumerate(out):
        s.seq = k  # derived above, fresh from the reader
    skews = []
    for i in late:
        child = spans[i]
        parent = spans[pos[child.parent_id]]  # type: ignore[index]
        if child.start_ns is not None and parent.start_ns is not None and parent.start_ns > child.start_ns:
            skews.append((child, parent, parent.start_ns - child.start_ns))
    if skews:
        child, parent, ns = skews[0]
        more = ""
        if len(skews) > 1:
            more = f"; {len(skews) - 1} more span(s) like it, skew up to {max(x[2] for x in skews) / 1e6:.3f} ms"
        issues.append(ReadIssue(
            path, child.line, "start_ns",
            f"span {child.span_id!r} starts {ns / 1e6:.3f} ms before its parent {parent.span_id!r} "
            f"(clocks of two processes disagree?); ordered after its parent, as emitted{more}", "warning"))
    return out


def captured(value: Any) -> bool:
    """Whether a message or message list holds any content (text, parts, tool calls)."""
    if value is None or value == "" or value == [] or value == {}:
        return False
    if isinstance(value, list):
        return any(map(captured, value))
    if isinstance(value, Mapping) and "role" in value:
        return any(value.get(k) not in (None, "", [], {}) for k in value if k not in ("role", "name", "tool_call_id"))
    return True


NOT_CAPTURED = "tracetui.content_not_captured"
"""Span attribute a reader sets to say why a span has no content (``"the Agents SDK exports only the
response id"``); ``content_issues`` groups spans by it instead of guessing."""

OTEL_CONTENT_WHY = ("content capture was off (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) "
             "or stripped by the exporter")
NOT_IN_FILE_WHY = "not in the file (not recorded, or stripped before it was written)"


def content_issues(spans: Sequence[Span], path: str, run: str | None = None, *, why: str = NOT_IN_FILE_WHY) -> list[ReadIssue]:
    """Warnings for content the producer did not capture, one per span kind, for one run.

    An ``llm`` span with neither messages nor output (no text, no tool calls
    in them), and a ``tool`` span with neither arguments nor output, lost
    their content before the file was written: OpenTelemetry GenAI
    instrumentations record message content only when asked
    (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``), and exporters and
    collectors may strip it. Reported once per kind with the count and the
    first span (id and line), never silently left empty.

    Args:
        spans: One run's spans, in ``seq`` order.
        path: The file, for the issues.
        run: The run's id, named in the message when given (files of several runs).
        why: The reason given when a span names none: the reader's
            ``content_hint`` (OpenTelemetry readers: ``OTEL_CONTENT_WHY``, the
            content-capture switch), else ``NOT_IN_FILE_WHY``. A span's
            ``NOT_CAPTURED`` attribute overrides it.

    Returns:
        Zero, one or two ``warning`` issues.
    """
    llm, tool = SpanKind.LLM, SpanKind.TOOL
    kinds = list(map(_KIND, spans))
    llms = list(compress(spans, map(operator.is_, kinds, repeat(llm))))  # C-level passes: 100k spans in ~10 ms
    tools = list(compress(spans, map(operator.is_, kinds, repeat(tool))))
    no_llm: list[Span] = []
    for s in llms:
        d = s.data
        m = d.get("messages")
        if type(m) is list and m and type(m[0]) is dict and m[0].get("content"):
            continue  # the usual case first: a system or user prompt with text
        if not captured(m) and not captured(d.get("output")):
            no_llm.append(s)
    no_tool = [s for s in tools if s.data.get("arguments") is None and s.data.get("output") is None]
    out: list[ReadIssue] = []
    default = why
    for found, what, where in ((no_llm, "llm span(s)", "llm.messages"), (no_tool, "tool span(s)", "tool.arguments")):
        if not found:
            continue
        by_reason: dict[str, list[Span]] = {}
        for s in found:
            reason = s.attributes.get(NOT_CAPTURED) if s.attributes else None
            by_reason.setdefault(reason if isinstance(reason, str) and reason else default, []).append(s)
        total = len(llms) if found[0].kind is llm else len(tools)
        in_run = f" of run {run!r}" if run is not None else ""
        lacks = "messages or output" if found[0].kind is llm else "arguments or output"
        for why, group in by_reason.items():
            first = group[0]
            share = f"{len(group)} of {total}" if total != len(group) else f"all {total}"
            out.append(ReadIssue(path, first.line, where,
                                 f"{share} {what}{in_run} carry no {lacks}: {why}; first: span {first.span_id!r}",
                                 "warning"))
    return out
