"""One sibling list as the run executed it: retries and concurrency, settled before the LCS.

``align.align_lists`` aligns two sibling lists by a longest common subsequence of span keys,
which assumes each list is one sequence of distinct steps. Two things real runs do break that:

- **Retries.** A call that failed (status ``error``: a 429, a timeout) and was tried again with
  the same kind, name and input is one step done in several attempts. ``split_retries`` takes the
  failed attempts out of the list, attached to the attempt that succeeded; the lists are aligned
  without them, so the replay's single call pairs with the *successful* attempt, and the attempts
  come back as rows just before it: paired with the other side's attempts where both have some,
  else one-sided rows marked ``retry`` (not a missing span).
- **Concurrency.** Siblings that overlap in time, start at the same timestamp (a tie at the
  source's precision: the order between them is the array's, not the run's), or carry the tool
  calls of one LLM turn (their ``call_id`` is in the preceding LLM span's ``tool_calls``) ran as a
  set. ``concurrent_order`` puts each such group of the replay in the order of the original's
  matching spans, so a set that merely started in another order pairs span for span; what each
  call got and returned is still compared, so a reorder that changed data still diverges.

No span is ever dropped: every index of the input lists comes back exactly once.
"""

from __future__ import annotations

from typing import Any, Hashable, Protocol, Sequence

import orjson

from tracetui.core.model import Span, SpanKind, Status

__all__ = ["concurrent_groups", "concurrent_order", "failed_identities", "retry_identity", "settle_retries", "split_retries"]

_ERROR = Status.ERROR
_OPT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


class _Side(Protocol):
    spans: Sequence[Span]
    keys: Any


def _ident(value: Any) -> Hashable:
    try:
        return orjson.dumps(value, option=_OPT)
    except TypeError:
        return repr(value)


def retry_identity(span: Span, key: Hashable) -> Hashable:
    """What two attempts of one call share: the span key (kind, name, call identity) and the input.

    Args:
        span: The attempt.
        key: Its ``align.span_key``.
    """
    kind = span.kind
    d = span.data
    if kind is SpanKind.LLM:
        extra: Any = (d.get("messages"), d.get("prompt_id"), d.get("params"))
    elif kind in (SpanKind.AGENT, SpanKind.OTHER):
        extra = d.get("input")
    elif kind is SpanKind.MEMORY:
        extra = (d.get("operation"), d.get("key"), d.get("query"))
    else:
        extra = None  # tool, retrieval, decision: the key holds the call's identity already
    return (key, _ident(extra)) if extra is not None else key


def settle_retries(ai: list[int], bi: list[int], a: _Side, b: _Side) -> tuple[
        tuple[list[int], dict[int, list[int]]] | None, tuple[list[int], dict[int, list[int]]] | None]:
    """``split_retries`` of both sibling lists, minding the other side.

    A side's failed attempts stay in its list when the other side has a failed span of the same
    identity that no success followed there: the two failures are the same step (the other run gave
    up, or retried differently), and pair as such.
    """
    ra, rb = split_retries(ai, a), split_retries(bi, b)
    if ra is None and rb is None:
        return None, None
    fa = failed_identities(ra[0] if ra is not None else ai, a)
    fb = failed_identities(rb[0] if rb is not None else bi, b)
    if ra is not None and fb:
        ra = split_retries(ai, a, fb)
    if rb is not None and fa:
        rb = split_retries(bi, b, fa)
    return ra, rb


def failed_identities(idx: list[int], side: _Side) -> frozenset[Hashable]:
    """The ``retry_identity`` of every failed span of a sibling list."""
    spans, keys = side.spans, side.keys
    return frozenset(retry_identity(spans[i], keys[i]) for i in idx if spans[i].status is _ERROR)


def split_retries(idx: list[int], side: _Side, keep: frozenset[Hashable] = frozenset()) -> tuple[
        list[int], dict[int, list[int]]] | None:
    """Take failed attempts that a successful retry follows out of a sibling list.

    Args:
        idx: Span indices of one sibling list, in execution order.
        side: The spans (``spans``) and their keys (``keys``), by index.
        keep: Retry identities whose attempts stay in the list.

    Returns:
        ``(kept, attempts)``: the list without the failed attempts, and for each kept span that
        succeeded after failed attempts, those attempts in order; None when the list has no retry.
        A run of failed attempts that no success of the same identity follows stays in the list.
    """
    spans, keys = side.spans, side.keys
    # Cheap screen: a retry needs a failed span followed by one with an equal key.
    if not any(spans[i].status is _ERROR and keys[i] == keys[j] for i, j in zip(idx, idx[1:])):
        return None
    kept: list[int] = []
    attempts: dict[int, list[int]] = {}
    pending: list[int] = []
    pending_id: Hashable = None
    for i in idx:
        span = spans[i]
        ident = retry_identity(span, keys[i]) if pending or span.status is _ERROR else None
        if pending and ident != pending_id:
            kept.extend(pending)  # failed attempts no success followed: ordinary spans
            pending = []
        if span.status is _ERROR:
            pending.append(i)
            pending_id = ident
            continue
        if pending:
            if pending_id in keep:
                kept.extend(pending)
            else:
                attempts[i] = pending
            pending = []
        kept.append(i)
    kept.extend(pending)
    return (kept, attempts) if attempts else None


def _turn_ids(span: Span) -> frozenset[str]:
    """The ``tool_calls[].id`` of an LLM span's answer (a message, or a list of them)."""
    out = span.data.get("output")
    msgs = out if isinstance(out, list) else [out]
    ids: set[str] = set()
    for m in msgs:
        if isinstance(m, dict):
            for call in m.get("tool_calls") or ():
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    ids.add(call["id"])
    return frozenset(ids)


def concurrent_groups(idx: Sequence[int], spans: Sequence[Span]) -> list[tuple[int, int]]:
    """Runs of siblings that ran as a set, as ``(start, end)`` positions into ``idx`` (2+ spans each).

    A sibling joins the run before it when it starts before every span of the run has ended, at
    the same timestamp as the previous one, or when it is a tool call of the same LLM turn as the
    previous one (both ``call_id`` in the last LLM sibling's ``tool_calls``).
    """
    groups: list[tuple[int, int]] = []
    start = 0
    end: int | None = None
    prev_start: int | None = None
    turn: frozenset[str] = frozenset()
    prev_in_turn = False
    for p, i in enumerate(idx):
        span = spans[i]
        st, en = span.start_ns, span.end_ns
        in_turn = False
        if span.kind is SpanKind.TOOL and turn:
            cid = span.data.get("call_id")
            in_turn = isinstance(cid, str) and cid in turn
        joined = p > 0 and (
            (st is not None and ((end is not None and st < end) or st == prev_start))
            or (in_turn and prev_in_turn)
        )
        if not joined:
            if p - start >= 2:
                groups.append((start, p))
            start, end = p, en
        elif en is not None:
            end = en if end is None or en > end else end
        prev_start, prev_in_turn = st, in_turn
        if span.kind is SpanKind.LLM:
            turn = _turn_ids(span)
    if len(idx) - start >= 2:
        groups.append((start, len(idx)))
    return groups


def concurrent_order(x: Sequence[Hashable], bi: list[int], y: Sequence[Hashable], b: _Side) -> list[int] | None:
    """The replay's sibling list with each concurrent group in the order of the original's spans.

    Args:
        x: The original sibling list's span keys, in execution order.
        bi: The replay sibling list (span indices), in execution order.
        y: Its span keys.
        b: The replay's spans.

    Returns:
        ``bi`` reordered inside its ``concurrent_groups`` (each member placed where the original's
        first unclaimed span of equal key sits; members without one keep their order, after), or
        None when no group needs it.
    """
    groups = concurrent_groups(bi, b.spans)
    if not groups:
        return None
    where: dict[Hashable, list[int]] = {}
    for p, k in enumerate(x):
        where.setdefault(k, []).append(p)
    used: dict[Hashable, int] = {}
    target: list[int] = []
    big = len(x)
    for k in y:
        lst = where.get(k)
        t = used.get(k, 0)
        if lst is not None and t < len(lst):
            target.append(lst[t])
            used[k] = t + 1
        else:
            target.append(big)
    out = list(bi)
    changed = False
    for s, e in groups:
        order = sorted(range(s, e), key=lambda p: (target[p], p))
        if order != list(range(s, e)):
            out[s:e] = [bi[p] for p in order]
            changed = True
    return out if changed else None
