"""What alignment knows of one trace (``diff.align``): span keys, pairing groups, similarity texts, the span tree.

A span's key (``span_key``: kind + name + identity, never the output) decides which spans pair
directly; its pairing group (``Side.group``) which spans left over between equal runs may be
re-paired, and its similarity text (``Side.text``) which of those pair first. ``Side`` holds one
trace prepared for alignment: the keys, each span's children in execution order, the roots, and
whether the parent links are a tree (``acyclic``; ``Side.repair`` makes cycles reachable).
"""

from __future__ import annotations

import bisect
import operator
from itertools import repeat
from typing import Any, Hashable, Mapping, Sequence

import orjson

from tracetui.core.canonical import canonical_json, parse_json_string
from tracetui.core.readers.lazyspan import LazySpan as _LAZY
from tracetui.core.model import Span, SpanKind

__all__ = ["Side", "prepared_side", "span_key"]

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

    @classmethod
    def of_parts(cls, spans: Any, keys: Any, children: list[list[int] | None] | None, roots: list[int] | None,
                 acyclic: bool) -> Side:
        """A side from a structure known already, with empty group and text caches and no retries.

        Args:
            spans: Span by index (``__getitem__``; may parse on first use).
            keys: ``span_key`` by index (``__getitem__``).
            children: Each span's children indices in execution order (None for a leaf), or None
                where the caller walks its own tree (``watch.incremental``).
            roots: The root indices in execution order (None as ``children``).
            acyclic: Whether every parent comes before its children.
        """
        side = cls.__new__(cls)
        side.spans, side.keys, side.children, side.roots, side.acyclic = spans, keys, children, roots, acyclic
        side.retry = set()
        side._groups, side._texts = {}, {}
        return side

    def new_pairing(self) -> None:
        """Start an alignment against another intern table: the pairing groups interned before are
        dropped (the similarity texts are kept: they depend on the span alone), and so are the retries."""
        self._groups = {}
        self.retry = set()

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
    children, roots = _tree(parents)
    return Side.of_parts(spans, keys, children, roots, True)
