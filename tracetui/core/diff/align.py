"""Tree-aware alignment: which original span pairs with which replay span.

The two runs are aligned level by level: the root lists first, then, for every
paired span, the children of both sides (``Span.parent_id``), in execution
order (``seq``). A span left unpaired takes its whole subtree with it, one-sided;
an extra child never unpairs its parent nor shifts its later siblings.

One sibling list is aligned on compact span keys (kind + name + identity, never
the output): the equal prefix and suffix are trimmed with
galloping slice compares, then Myers' O((N+M)·D) diff finds the longest common
subsequence, capped at ``MAX_D`` edits (beyond it, rapidfuzz's banded
Levenshtein). Spans left over between equal runs ("replace blocks") are
re-paired when they are the same kind of call (same tool, same LLM kind...),
preferring the most similar ones (rapidfuzz ``fuzz.ratio``). Source of the
method and the budgets: ``../shared/design/performance.md``.

Everything is iterative: a 10k-deep span tree aligns without recursion.
"""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Hashable, Iterator, Mapping, Sequence

import orjson
from rapidfuzz import fuzz

from tracetui.core.canonical import canonical_json, parse_json_string
from tracetui.core.readers.lazyspan import LazySpan as _LAZY
from tracetui.core.diff.lcs import equal_run, equal_run_back, matching_blocks
from tracetui.core.diff.siblings import concurrent_order, settle_retries
from tracetui.core.model import Span, SpanKind

__all__ = ["DP_CELLS", "MAX_D", "AlignedRow", "align", "align_with_keys", "align_with_same_keys", "prepare", "prepared_side", "span_key",
           "walk_rows"]

MAX_D = 200
"""Edits an exact Myers diff of one sibling list may find before handing over
to rapidfuzz's banded Levenshtein (pure-Python Myers costs ~D² steps)."""

DP_CELLS = 4096
"""Largest replace block (original spans × replay spans) re-paired by the
similarity-weighted dynamic programme; bigger blocks are paired by call kind
alone (an LCS on the pairing groups), in order."""

SIMILARITY_CUTOFF = 30.0
"""``fuzz.ratio`` below this counts as no similarity (the pair is still allowed)."""


@dataclass(slots=True)
class AlignedRow:
    """One row of the merged tree (not frozen: a frozen __init__ costs 2x on 100k rows).

    Attributes:
        original: Index into the original trace's ``spans``, or None (replay only).
        replay: Index into the replay trace's ``spans``, or None (original only).
        depth: Nesting depth in the merged tree (0 for roots), for indentation.
        retry: A one-sided row that is a failed attempt of a call retried successfully (or a span
            below one): reported as a retry, not a missing or extra span (``diff.siblings``).
    """

    original: int | None
    replay: int | None
    depth: int
    retry: bool = False


# -- keys ---------------------------------------------------------------------

_DUMP_OPT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _digest(value: Any) -> Hashable:
    """A hashable stand-in for a JSON value: itself if scalar, else its canonical bytes.

    A string holding a JSON object or array (or a JSON string of one: encoded
    twice) is parsed first, as in ``tracetui.core.canonical`` (top level only: deeper JSON strings make
    different keys, and the re-pairing of replace blocks still pairs them).
    """
    t = type(value)
    if t is dict or t is list:
        # Decoded: a str is compact, while each kept orjson bytes holds a 1 KiB
        # buffer (3.8 us a key against 0.6 us, measured on 44k tool spans). A
        # str value never gives the same digest: one that is JSON is parsed below.
        try:
            return _dumps(value, option=_SORT).decode()
        except TypeError:  # non-string keys (spans built in code), non-JSON values, nesting > 255
            try:
                return _dumps(value, option=_SORT | orjson.OPT_NON_STR_KEYS).decode()
            except TypeError:
                try:  # integers beyond 64 bits: canonical_json falls back to the standard library
                    return canonical_json(value).decode()
                except (TypeError, ValueError, RecursionError):
                    return _unique()
    if t is str:
        if value[:1] in _JSON_OPENERS:  # type: ignore[index]
            parsed = parse_json_string(value)
            if parsed is not value:
                return _digest(parsed)
        return value
    if value is None:
        return None
    if t is int or t is float or t is bool:
        return (t, value)  # 1, 1.0 and True are equal in Python, not in JSON
    return _unique()


def _unique() -> Hashable:
    """A key equal to nothing else: the span pairs only through replace-block re-pairing."""
    return object()


_SORT = orjson.OPT_SORT_KEYS
_JSON_OPENERS = ("{", "[", '"')  # '"': arguments encoded twice (canonical.parse_json_string)
_dumps = orjson.dumps
_TOOL, _LLM, _RETRIEVAL, _DECISION = SpanKind.TOOL, SpanKind.LLM, SpanKind.RETRIEVAL, SpanKind.DECISION
_KIND_NAMES = {k: k.value for k in SpanKind}  # Enum.value is a slow descriptor
_SPAN_ID = operator.attrgetter("span_id")
_PARENT_ID = operator.attrgetter("parent_id")


def span_key(span: Span) -> tuple[Any, ...]:
    """The alignment identity of a span: equal keys pair up directly.

    Kind + name + identity, never outputs (a same call with another output must
    pair, then compare as ``output_mismatch``):
    tool: tool name + canonical arguments; retrieval: name + index + query;
    llm: name + model; decision: name + decision; others: name. Equal keys
    prove these fields byte-equal (``tracetui.core.diff.compare.KEY_FIELDS``).
    """
    if type(span) is _LAZY:
        key = span._key  # type: ignore[attr-defined]
        if key is not None:  # computed by the index loader from the same data
            return key  # type: ignore[no-any-return]
        part = span._part  # type: ignore[attr-defined]
        if part is not None:  # the key's fields, read by the loader (OTLP): the payload stays unread
            key = span._key = _key_of(span.kind, span.name, part)  # type: ignore[attr-defined]
            return key
    return _key_of(span.kind, span.name, span.data)


def _key_of(kind: SpanKind, span_name: str, data: Mapping[str, Any]) -> tuple[Any, ...]:
    """``span_key`` of a span of ``kind`` named ``span_name`` whose section is ``data``."""
    if kind is _TOOL:
        d = data
        name = d.get("tool_name")
        args = d.get("arguments")
        if type(args) is dict:
            try:
                digest: Hashable = _dumps(args, option=_SORT).decode()  # decoded: see _digest
            except TypeError:
                digest = _digest(args)
        else:
            digest = _digest(args)
        # The recorded tool_name, as compared (span name only when neither side has one).
        if name is None:
            name = ("name", span_name)
        elif type(name) is not str:  # a malformed trace: an object as tool name must not break hashing
            name = _digest(name)
        return ("tool", name, digest)
    if kind is _LLM:
        return ("llm", span_name, _digest(data.get("model")))
    if kind is _RETRIEVAL:
        return ("retrieval", span_name, _digest(data.get("index")), _digest(data.get("query")))
    if kind is _DECISION:
        return ("decision", span_name, _digest(data.get("decision")))
    return (_KIND_NAMES[kind], span_name)


def _group(span: Span) -> tuple[Any, ...]:
    """Which spans may be re-paired inside a replace block.

    A tool call only with a call of the same tool (docs/format.md: a different
    ``tool_name`` is unpaired). An agent/other span only with one of the same
    name. LLM, retrieval, decision and memory spans with any span of their kind:
    a changed model, index or decision is a mismatch of that pair, not a
    missing span plus an extra one.
    """
    kind = span.kind
    if kind is SpanKind.TOOL:
        return ("tool", span.tool_name)
    if kind in (SpanKind.AGENT, SpanKind.OTHER):
        return (kind.value, span.name)
    return (kind.value,)


def _sim_text(span: Span) -> str:
    """A short text of a span's identifying inputs, for ``fuzz.ratio``."""
    d = span.data
    kind = span.kind
    if kind is SpanKind.TOOL:
        v: Any = d.get("arguments")
    elif kind is SpanKind.LLM:
        msgs = d.get("messages")
        v = [d.get("model"), msgs[-1] if isinstance(msgs, list) and msgs else msgs]
    elif kind is SpanKind.RETRIEVAL:
        v = [d.get("index"), d.get("query")]
    elif kind is SpanKind.DECISION:
        v = [d.get("decision"), d.get("value")]
    elif kind is SpanKind.MEMORY:
        v = [d.get("operation"), d.get("key"), d.get("query")]
    else:
        v = d.get("input")
    try:
        text = orjson.dumps(v, option=_DUMP_OPT)[:300].decode("utf-8", "ignore")
    except TypeError:
        text = ""
    return f"{span.name} {text}"


# -- the tree -------------------------------------------------------------------


class Side:
    """One trace prepared for alignment: span keys and children lists."""

    __slots__ = ("spans", "keys", "children", "roots", "acyclic", "retry", "_groups", "_texts")

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = spans
        # Key tuples compare exactly; interning them to ints would cost more than it saves.
        self.keys: list[tuple[Any, ...]] = list(map(span_key, spans))
        n = len(spans)
        # C-level passes (map over attribute getters and dict.get), not Python
        # loops: 0.1 s a side instead of 0.15 s at 100k spans.
        ids = list(map(_SPAN_ID, spans))
        index = dict(zip(ids, range(n)))
        if len(index) != n:  # duplicate ids: the first span keeps the id
            index = {}
            for i, sid in enumerate(ids):
                index.setdefault(sid, i)
        # Parent position, -1 for a root (no parent id, or one not in the trace).
        parents = list(map(index.get, map(_PARENT_ID, spans), repeat(-1)))
        # Parents all earlier (spans in seq order): no cycle, every span reachable.
        self.acyclic = all(map(operator.lt, parents, range(n)))
        self.children, self.roots = _tree(parents)
        self.retry: set[int] = set()  # failed attempts left one-sided (``align_lists``)
        self._groups: dict[int, int] = {}
        self._texts: dict[int, str] = {}

    def group(self, i: int, intern: dict[Hashable, int]) -> int:
        g = self._groups.get(i)
        if g is None:
            g = self._groups[i] = intern.setdefault(_group(self.spans[i]), len(intern))
        return g

    def text(self, i: int) -> str:
        t = self._texts.get(i)
        if t is None:
            t = self._texts[i] = _sim_text(self.spans[i])
        return t

    def repair(self, reached: list[bool]) -> None:
        """Make the spans no root reaches (parent cycles, and what hangs below) reachable.

        An unreached span's parent is unreached too, so walking up from it ends
        in a cycle; the cycle's earliest span becomes a root (leaving its
        parent's children list) and its subtree is then reached.
        """
        parent_of: dict[int, int] = {}
        for j, c in enumerate(self.children):
            if c:
                for i in c:
                    parent_of[i] = j
        for i in range(len(self.spans)):
            if reached[i]:
                continue
            seen: set[int] = set()
            k = i
            while k not in seen:
                seen.add(k)
                k = parent_of[k]
            cycle = [k]
            j = parent_of[k]
            while j != k:
                cycle.append(j)
                j = parent_of[j]
            top = min(cycle)
            c = self.children[parent_of.pop(top)]
            assert c is not None
            c.remove(top)
            bisect.insort(self.roots, top)
            stack = [top]
            while stack:
                k = stack.pop()
                reached[k] = True
                stack.extend(x for x in (self.children[k] or ()) if not reached[x])


def _tree(parents: Sequence[int]) -> tuple[list[list[int] | None], list[int]]:
    """Children lists (None for a leaf) and roots of a tree given as each node's parent index (-1, or
    itself: a root)."""
    roots: list[int] = []
    children: list[list[int] | None] = [None] * len(parents)
    for i, p in enumerate(parents):
        if p < 0 or p == i:
            roots.append(i)
        else:
            c = children[p]
            if c is None:
                children[p] = [i]
            else:
                c.append(i)
    return children, roots


def prepared_side(spans: Sequence[Span], keys: Any, parents: Sequence[int]) -> Side:
    """A side for ``walk_rows`` from a tree known already (``core.early``: a file's structure scan).

    Args:
        spans: Span by index (``__getitem__``; may parse on first use).
        keys: ``span_key`` by index (``__getitem__``).
        parents: Each span's parent index, -1 for a root; always an earlier index (acyclic).
    """
    side = Side.__new__(Side)
    side.spans, side.keys = spans, keys
    side.children, side.roots = _tree(parents)
    side.acyclic = True
    side.retry = set()
    side._groups, side._texts = {}, {}
    return side


def align(original: Sequence[Span], replay: Sequence[Span]) -> list[AlignedRow]:
    """Align two runs' spans into one merged tree.

    Args:
        original: The original run's spans, in ``seq`` order (``Trace.spans``).
        replay: The replay's spans, in ``seq`` order.

    Returns:
        Rows in depth-first order: each row is followed by its children's rows,
        in execution order. Every span of each side appears in exactly one row;
        a paired row has both indices, a one-sided row one index and None. A
        span whose parent is not in its trace is a root; a parent cycle is
        broken at its earliest span.
    """
    return _align(original, replay)[0]


def align_with_keys(
    original: Sequence[Span], replay: Sequence[Span]
) -> tuple[list[AlignedRow], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``align``, also returning each side's span keys (``span_key`` of each span)."""
    rows, _same, a, b = _align(original, replay)
    return rows, a.keys, b.keys


def prepare(spans: Sequence[Span]) -> Any:
    """One run's spans prepared for alignment (span keys, children lists): pass it to
    ``align_with_same_keys(spans, ..., original_side=)`` to align the same spans again without
    preparing them again (watch mode: one original against a growing replay; ~0.1 s per 10k spans)."""
    return Side(spans)


def align_with_same_keys(original: Sequence[Span], replay: Sequence[Span], *,
                         original_side: Any = None) -> tuple[list[AlignedRow], list[bool]]:
    """``align``, and per row whether it pairs two spans of equal ``span_key`` (False if one-sided).

    Equal keys prove ``compare.KEY_FIELDS`` equal; the alignment compared the
    keys already, and comparing them again costs ~0.7 µs a row. ``original_side``: ``prepare(original)``
    from an earlier call (ignored unless prepared from this very ``original`` sequence).
    """
    rows, same, _a, _b = _align(original, replay, original_side)
    return rows, same


def _align(original: Sequence[Span], replay: Sequence[Span],
           a: Side | None = None) -> tuple[list[AlignedRow], list[bool], Side, Side]:
    intern: dict[Hashable, int] = {}  # pairing groups -> small ints
    if a is None or a.spans is not original:
        a = Side(original)
    else:
        a._groups = {}  # interned against another call's table
        a.retry = set()
    b = Side(replay)
    rows, same = _walk(a, b, intern)
    if a.acyclic and b.acyclic:
        return rows, same, a, b
    na = sum(1 for r in rows if r.original is not None)
    nb = sum(1 for r in rows if r.replay is not None)
    if na == len(original) and nb == len(replay):
        return rows, same, a, b
    # Some spans sit in a parent cycle (no root reaches them): re-root and redo.
    for side, n, attr in ((a, len(original), "original"), (b, len(replay), "replay")):
        reached = [False] * n
        for r in rows:
            idx = getattr(r, attr)
            if idx is not None:
                reached[idx] = True
        side.repair(reached)
    rows, same = _walk(a, b, intern)
    return rows, same, a, b


def wraps(side: Side, root: int, other_root: Span) -> bool:
    """True when ``root`` has a child of the other run's root kind and name: it wraps that run."""
    kids = side.children[root]
    return bool(kids) and any(
        side.spans[k].kind is other_root.kind and side.spans[k].name == other_root.name for k in kids  # type: ignore[union-attr]
    )


def _walk(a: Side, b: Side, intern: dict[Hashable, int]) -> tuple[list[AlignedRow], list[bool]]:
    """All rows of ``walk_rows``, and per row whether its two span keys are equal."""
    same: list[bool] = []
    rows = list(walk_rows(a, b, intern, same))
    return rows, same


def walk_rows(a: Side, b: Side, intern: dict[Hashable, int], same: list[bool]) -> Iterator[AlignedRow]:
    """Yield the merged tree's rows depth-first, computing as little as the rows asked for need.

    Iterative (an explicit stack, no recursion). Before yielding each row it appends to ``same``
    whether the row pairs two spans of equal keys. Keys, children lists and spans are read only
    as each sibling list is aligned, so a caller that stops early (``core.early``: the first
    divergence of a pair read lazily) reads only the spans the rows so far needed; ``list()`` of
    it is ``align``'s rows (a generator costs ~4 ms per 100k rows over a list built in place).
    """
    append, extend = same.append, same.extend
    achildren, bchildren = a.children, b.children
    achild, bchild = achildren.__getitem__, bchildren.__getitem__
    akey, bkey = a.keys.__getitem__, b.keys.__getitem__
    row = AlignedRow
    aretry, bretry = a.retry, b.retry
    stack: list[tuple[Any, int]] = []
    if len(a.roots) == 1 and len(b.roots) == 1:
        ra, rb = a.roots[0], b.roots[0]
        if a.spans[ra].kind is b.spans[rb].kind:
            # One root each, of one kind: both are the run's entry point, whatever it is named
            # (a renamed agent must not make the whole run one-sided).
            stack.append((iter([(ra, rb)]), 0))
        elif wraps(a, ra, b.spans[rb]):
            # The original's root wraps the run (an HTTP server span above the agent, which a
            # replay harness does not have): it stands alone, its children align with the replay's root.
            append(False)
            yield row(ra, None, 0)
            stack.append((iter(align_lists(achildren[ra] or [], [rb], a, b, intern)), 1))
        elif wraps(b, rb, a.spans[ra]):
            append(False)
            yield row(None, rb, 0)
            stack.append((iter(align_lists([ra], bchildren[rb] or [], a, b, intern)), 1))
    if not stack:
        stack.append((iter(align_lists(a.roots, b.roots, a, b, intern)), 0))
    while stack:
        it, depth = stack[-1]
        for o, r in it:
            if o is not None and r is not None:
                append(akey(o) == bkey(r))
                yield row(o, r, depth)
            elif (o is not None and o in aretry) or (r is not None and r in bretry):
                append(False)
                yield row(o, r, depth, True)
                aretry.update(achildren[o] or () if o is not None else ())  # its subtree: the attempt's
                bretry.update(bchildren[r] or () if r is not None else ())
            else:
                append(False)
                yield row(o, r, depth)
            oc = achildren[o] if o is not None else None
            rc = bchildren[r] if r is not None else None
            if oc is None and rc is None:
                continue
            if oc is not None and rc is not None:
                if (
                    len(oc) == len(rc)
                    and not any(map(achild, oc))
                    and not any(map(bchild, rc))
                    and list(map(akey, oc)) == list(map(bkey, rc))
                ):
                    # The usual step: equal lists of leaves pair one to one, no descent.
                    extend(repeat(True, len(oc)))
                    yield from map(row, oc, rc, repeat(depth + 1))
                    continue
                pairs = align_lists(oc, rc, a, b, intern)
            elif oc is not None:
                pairs = [(c, None) for c in oc]
            else:
                pairs = [(None, c) for c in rc]  # type: ignore[union-attr]
            stack.append((iter(pairs), depth + 1))
            break
        else:
            stack.pop()


# -- one sibling list -------------------------------------------------------------

_Pair = tuple["int | None", "int | None"]


def align_lists(ai: list[int], bi: list[int], a: Side, b: Side, intern: dict[Hashable, int],
                retries: bool = True) -> list[_Pair]:
    """Merge two sibling lists (span indices) into ``(original, replay)`` pairs, in order.

    Lists that differ are first settled by ``diff.siblings``: failed attempts retried successfully
    aligned apart (``retries``), the replay's concurrent groups put in the original's order.
    """
    if not ai:
        return [(None, j) for j in bi]
    if not bi:
        return [(i, None) for i in ai]
    ak, bk = a.keys, b.keys
    x = [ak[i] for i in ai]
    y = [bk[j] for j in bi]
    if x == y:
        return list(zip(ai, bi))
    if retries:
        ra, rb = settle_retries(ai, bi, a, b)
        if ra is not None or rb is not None:
            return _with_retries(ai, bi, ra, rb, a, b, intern)
    reordered = concurrent_order(x, bi, y, b)
    if reordered is not None:
        bi = reordered
        y = [bk[j] for j in bi]
        if x == y:
            return list(zip(ai, bi))
    n, m = len(x), len(y)
    pre = equal_run(x, y, 0, 0, min(n, m))
    suf = equal_run_back(x, y, n, m, min(n, m) - pre)
    out: list[_Pair] = list(zip(ai[:pre], bi[:pre]))
    xm, ym = x[pre:n - suf], y[pre:m - suf]
    i0 = j0 = 0
    for i, j, size in matching_blocks(xm, ym, MAX_D):
        out.extend(_pair_block(ai[pre + i0:pre + i], bi[pre + j0:pre + j], a, b, intern))
        out.extend(zip(ai[pre + i:pre + i + size], bi[pre + j:pre + j + size]))
        i0, j0 = i + size, j + size
    out.extend(_pair_block(ai[pre + i0:n - suf], bi[pre + j0:m - suf], a, b, intern))
    out.extend(zip(ai[n - suf:], bi[m - suf:]))
    return out


def _with_retries(ai: list[int], bi: list[int], ra: tuple[list[int], dict[int, list[int]]] | None,
                  rb: tuple[list[int], dict[int, list[int]]] | None, a: Side, b: Side,
                  intern: dict[Hashable, int]) -> list[_Pair]:
    """Align the lists without their failed attempts, then put each attempt back before its success:
    paired with the other side's attempts where both have some, else one-sided and marked retry."""
    ka, atta = ra if ra is not None else (ai, {})
    kb, attb = rb if rb is not None else (bi, {})
    out: list[_Pair] = []
    none: list[int] = []
    for o, r in align_lists(ka, kb, a, b, intern, retries=False):
        xo = atta.get(o, none) if o is not None else none  # type: ignore[arg-type]
        xr = attb.get(r, none) if r is not None else none  # type: ignore[arg-type]
        if xo or xr:
            k = min(len(xo), len(xr))
            out.extend(zip(xo[:k], xr[:k]))
            out.extend((i, None) for i in xo[k:])
            out.extend((None, j) for j in xr[k:])
            a.retry.update(xo[k:])
            b.retry.update(xr[k:])
        out.append((o, r))
    return out


# -- replace blocks ----------------------------------------------------------------


def _pair_block(ai: list[int], bi: list[int], a: Side, b: Side, intern: dict[Hashable, int]) -> list[_Pair]:
    """Re-pair a replace block: same-group spans pair up, most similar first, in order.

    Returns the block's rows in order: between two pairs, the original-only
    spans first, then the replay-only ones.
    """
    if not ai or not bi:
        return [(i, None) for i in ai] + [(None, j) for j in bi]
    ga = [a.group(i, intern) for i in ai]
    gb = [b.group(j, intern) for j in bi]
    if set(ga).isdisjoint(gb):
        matches: list[tuple[int, int]] = []
    elif len(ai) * len(bi) <= DP_CELLS:
        matches = _best_pairs(ai, bi, ga, gb, a, b)
    else:
        matches = [(i + t, j + t) for i, j, size in matching_blocks(ga, gb, MAX_D) for t in range(size)]
    out: list[_Pair] = []
    i0 = j0 = 0
    for i, j in matches:
        out.extend((ai[t], None) for t in range(i0, i))
        out.extend((None, bi[t]) for t in range(j0, j))
        out.append((ai[i], bi[j]))
        i0, j0 = i + 1, j + 1
    out.extend((ai[t], None) for t in range(i0, len(ai)))
    out.extend((None, bi[t]) for t in range(j0, len(bi)))
    return out


def _best_pairs(ai: list[int], bi: list[int], ga: list[int], gb: list[int], a: Side, b: Side) -> list[tuple[int, int]]:
    """Order-preserving pairing of maximum weight (positions into ``ai``, ``bi``).

    A pair is allowed when both spans share a group; its weight is 100 plus the
    ``fuzz.ratio`` of their texts (0 below ``SIMILARITY_CUTOFF``), so one pair more
    wins unless the pairs it displaces are over 100 points more similar in total
    (two near-identical pairs outweigh three of which one is close), and similarity
    breaks ties. Classic O(n·m) dynamic programme.
    """
    n, m = len(ai), len(bi)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        gi = ga[i - 1]
        row, up = score[i], score[i - 1]
        for j in range(1, m + 1):
            best = up[j] if up[j] >= row[j - 1] else row[j - 1]
            if gb[j - 1] == gi:
                w = 100.0 + fuzz.ratio(a.text(ai[i - 1]), b.text(bi[j - 1]), score_cutoff=SIMILARITY_CUTOFF)
                if up[j - 1] + w > best:
                    best = up[j - 1] + w
            row[j] = best
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        s = score[i][j]
        if s == score[i - 1][j]:
            i -= 1
        elif s == score[i][j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
    pairs.reverse()
    return pairs
