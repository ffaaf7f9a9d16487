"""Semantic comparison of one aligned pair of spans, by the policy of docs/format.md.

The policy table ("Comparison policy: semantic and volatile fields") is encoded
once, in ``_POLICY``: for each span kind, the semantic fields in priority order
(input side, then status, then output side) and the divergence type each one
raises. Everything else is volatile (``VOLATILE_FIELDS``) and never compared.

Values are compared cheaply first (``==``, or exact bytes for small input
fields) and canonicalised (``tracetui.core.canonical``) only when that fails, so
40 KB outputs that are equal cost one C-level ``==``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import Enum
from itertools import count
from typing import Any, Callable, Iterable, Mapping, Sequence

import orjson

from tracetui.core.canonical import canonicalize
from tracetui.core.model import Span, SpanKind

__all__ = [
    "ABSENT",
    "MAX_FIELDS",
    "VOLATILE_FIELDS",
    "DivergenceType",
    "FieldChange",
    "compare_spans",
    "field_side",
    "screen_pairs",
    "semantic_fields",
    "volatile_fields",
]


class DivergenceType(str, Enum):
    """What differs between an original span and its replay (docs/format.md)."""

    UNRECORDED_CALL = "unrecorded_call"
    """A tool or retrieval call only in the replay: the recording has no match."""
    MISSING_CALL = "missing_call"
    """A tool or retrieval call only in the original: the replay never made it."""
    ARGS_MISMATCH = "args_mismatch"
    """Tool/retrieval/memory inputs differ (arguments, effect, version, query...)."""
    OUTPUT_MISMATCH = "output_mismatch"
    """Tool/retrieval/memory/agent outputs differ."""
    STATUS_MISMATCH = "status_mismatch"
    """``status`` or ``error_type`` differ."""
    INPUT_MISMATCH = "input_mismatch"
    """LLM inputs (model, params, messages...) or agent/other input differ."""
    DECISION_MISMATCH = "decision_mismatch"
    """An LLM answered differently to equal inputs, or a decision span differs."""
    EXTRA_SPAN = "extra_span"
    """A span of another kind only in the replay."""
    MISSING_SPAN = "missing_span"
    """A span of another kind only in the original."""


class _Absent:
    """The value of a field one side does not have at all — not a recorded ``null``."""

    __slots__ = ()
    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
"""Stands for a field (or key, or list item) missing on one side of a ``FieldChange``."""


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One semantic field that differs between the two sides of a pair.

    Attributes:
        path: Where, down to the differing leaf: ``status``,
            ``tool.arguments.customer_id``, ``llm.messages[2].content``,
            ``tool.output["odd key"]``. The first segment is the span kind's
            section (or a common field).
        original: The original side's value (canonical form); ``ABSENT`` when
            that side has no such field, key or item (``None`` is a recorded null).
        replay: The replay side's value, likewise.
    """

    path: str
    original: Any
    replay: Any


MAX_FIELDS = 20
"""Most ``FieldChange``s reported for one pair; values themselves are never cut."""

INPUT, STATUS, OUTPUT = 0, 1, 2
"""Sides of a field: where its divergence sits in execution order (see diff.py)."""

_ARGS = DivergenceType.ARGS_MISMATCH
_OUT = DivergenceType.OUTPUT_MISMATCH
_IN = DivergenceType.INPUT_MISMATCH
_DEC = DivergenceType.DECISION_MISMATCH
_STAT = DivergenceType.STATUS_MISMATCH

# Field flags (how "equal" is decided; docs/format.md "Canonical arguments"):
# _BYTES: arguments-like values (small), equal when their canonical JSON bytes
#   are, so ``true``, ``1``, ``1.0`` and ``"1"`` all differ.
# _VALUE: equal when ``==`` holds after canonicalisation (numbers by value, as
#   Python compares them: 1 == 1.0 == true); used for outputs, messages and
#   the other fields, which can be 40 KB, so an equal pair costs one C-level ``==``.
# _IDS: like _VALUE, after dropping provider-minted ids inside messages.
_VALUE, _BYTES, _IDS = 0, 1, 2

_POLICY: dict[SpanKind, tuple[_Field, ...]] = {
    SpanKind.TOOL: (
        ("tool_name", INPUT, _ARGS, _VALUE),
        ("arguments", INPUT, _ARGS, _BYTES),
        ("effect", INPUT, _ARGS, _VALUE),
        ("tool_version", INPUT, _ARGS, _VALUE),
        ("output", OUTPUT, _OUT, _VALUE),
        ("output_truncated", OUTPUT, _OUT, _VALUE),
    ),
    SpanKind.RETRIEVAL: (
        ("index", INPUT, _ARGS, _VALUE),
        ("index_version", INPUT, _ARGS, _VALUE),
        ("query", INPUT, _ARGS, _BYTES),
        ("top_k", INPUT, _ARGS, _VALUE),
        ("filters", INPUT, _ARGS, _BYTES),
        ("documents", OUTPUT, _OUT, _VALUE),
    ),
    SpanKind.LLM: (
        ("model", INPUT, _IN, _VALUE),
        ("provider", INPUT, _IN, _VALUE),
        ("prompt_id", INPUT, _IN, _VALUE),
        ("prompt_version", INPUT, _IN, _VALUE),
        ("params", INPUT, _IN, _VALUE),
        ("messages", INPUT, _IN, _IDS),
        ("tool_schemas_hash", INPUT, _IN, _VALUE),
        ("output", OUTPUT, _DEC, _IDS),
        ("finish_reason", OUTPUT, _DEC, _VALUE),
    ),
    SpanKind.DECISION: (
        ("decision", OUTPUT, _DEC, _VALUE),
        ("value", OUTPUT, _DEC, _BYTES),
        ("options", OUTPUT, _DEC, _BYTES),
    ),
    SpanKind.MEMORY: (
        ("operation", INPUT, _ARGS, _VALUE),
        ("key", INPUT, _ARGS, _BYTES),
        ("query", INPUT, _ARGS, _BYTES),
        ("value", OUTPUT, _OUT, _VALUE),
    ),
    SpanKind.AGENT: (
        ("input", INPUT, _IN, _VALUE),
        ("output", OUTPUT, _OUT, _VALUE),
    ),
    SpanKind.OTHER: (
        ("input", INPUT, _IN, _VALUE),
        ("output", OUTPUT, _OUT, _VALUE),
    ),
}

# Per kind: (input fields, output fields), with the section prefix precomputed.
_SPLIT: dict[SpanKind, tuple[tuple[tuple[str, str, DivergenceType, int], ...], ...]] = {
    kind: tuple(
        tuple((name, f"{kind.value}.{name}", dtype, flags) for name, side, dtype, flags in fields if side == want)
        for want in (INPUT, OUTPUT)
    )
    for kind, fields in _POLICY.items()
}
_SEMANTIC_NAMES: dict[SpanKind, frozenset[str]] = {k: frozenset(f[0] for f in v) for k, v in _POLICY.items()}

# Fields a span key (tracetui.core.align.span_key) proves byte-equal when two keys are equal.
KEY_FIELDS: dict[SpanKind, frozenset[str]] = {
    SpanKind.TOOL: frozenset({"tool_name", "arguments"}),
    SpanKind.RETRIEVAL: frozenset({"index", "query"}),
    SpanKind.LLM: frozenset({"model"}),
    SpanKind.DECISION: frozenset({"decision"}),
}


def _fast_spec(fields: tuple[_Field, ...], skip: frozenset[str]) -> tuple[Callable[[Any], tuple[Any, ...]], tuple[str, ...], tuple[int, ...]]:
    names = tuple(f[0] for f in fields if f[0] not in skip)
    flags = {f[0]: f[3] for f in fields}
    if len(names) == 1:
        one = names[0]
        getter: Callable[[Any], tuple[Any, ...]] = lambda d: (d[one],)  # noqa: E731
    else:
        getter = operator.itemgetter(*names)
    return getter, names, tuple(i for i, n in enumerate(names) if flags[n] == _BYTES)


_GET_KINDS: set[SpanKind] = set()
"""Kinds whose spans were seen lacking a semantic field: read with ``.get``
(a C-level ``itemgetter`` is 3x faster when every field is there). Only speed
depends on it."""

# Per kind: (getter, names, positions checked exactly) for [any pair, pair with equal keys].
_FAST = {
    kind: (_fast_spec(fields, frozenset()), _fast_spec(fields, KEY_FIELDS.get(kind, frozenset())))
    for kind, fields in _POLICY.items()
}
_CONTAINERS = (dict, list)

VOLATILE_FIELDS: frozenset[str] = frozenset({
    "span_id", "parent_id", "trace_id", "seq", "start_ns", "end_ns", "duration_ns", "attributes",
    "llm.usage", "llm.response_id",
    "tool.call_id", "tool.args_hash", "tool.mode",
    "llm.messages[].tool_calls[].id", "llm.messages[].tool_call_id",
    "llm.output.tool_calls[].id", "llm.output.tool_call_id",
})
"""The documented volatile fields (docs/format.md, "Volatile, never compared").

Any other field a span carries that is not in its kind's semantic list (an
unknown key in the kind's section) is not compared either; ``volatile_fields``
returns those too, for display.
"""

_dumps = orjson.dumps
_DUMP_OPT = orjson.OPT_NON_STR_KEYS
_SORT_OPT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def field_side(dtype: DivergenceType) -> int:
    """``INPUT`` or ``OUTPUT``: where a divergence of this type sits in execution order.

    Input-side (placed where the span starts): arguments/inputs mismatches and
    the one-sided types. Output-side (placed where the span ends, after its
    children): output, decision and status mismatches. Source: docs/format.md,
    "Divergence order and the first divergence".
    """
    if dtype in (_OUT, _DEC, _STAT):
        return OUTPUT
    return INPUT


def compare_spans(a: Span, b: Span) -> tuple[DivergenceType | None, tuple[FieldChange, ...]]:
    """Compare an aligned pair by the semantic fields of its kind.

    Args:
        a: The original span.
        b: The replay span (normally the same kind; if not, the pair is
            compared as ``a``'s kind, and ``b``'s kind counts as a change).

    Returns:
        ``(None, ())`` when the pair is equivalent; otherwise the primary
        divergence type (input side > status > output side; an LLM's
        ``decision_mismatch`` only when its inputs are equal) and every
        differing semantic field, in that same priority order, down to the
        differing leaves, at most ``MAX_FIELDS`` of them.
    """
    return compare_pair(a, b, False)


def _deep_fallback(a: Span, b: Span) -> tuple[DivergenceType | None, tuple[FieldChange, ...]]:
    """Comparison for values nested too deep for Python's recursive ``==`` (~1000 levels).

    Iterative equality per field; a differing field is reported whole.
    """
    changes: list[FieldChange] = []
    primary: DivergenceType | None = None
    ins, outs = _SPLIT[a.kind]
    for group in (ins, None, outs):
        if group is None:
            for path, x, y in (("status", a.status.value, b.status.value), ("error_type", a.error_type, b.error_type)):
                if x != y:
                    changes.append(FieldChange(path, x, y))
                    primary = primary or _STAT
            continue
        for name, path, dtype, _flags in group:
            x, y = a.data.get(name), b.data.get(name)
            if not _iter_equal(x, y):
                changes.append(FieldChange(path, x, y))
                primary = primary or dtype
    return primary, tuple(changes[:MAX_FIELDS])


def _iter_equal(x: Any, y: Any) -> bool:
    """Structural ``==`` of two JSON values without recursion."""
    stack = [(x, y)]
    while stack:
        u, v = stack.pop()
        if isinstance(u, dict) and isinstance(v, dict):
            if u.keys() != v.keys():
                return False
            stack.extend((u[k], v[k]) for k in u)
        elif isinstance(u, list) and isinstance(v, list):
            if len(u) != len(v):
                return False
            stack.extend(zip(u, v))
        elif isinstance(u, (dict, list)) or isinstance(v, (dict, list)) or u != v:
            return False
    return True


def compare_pair(a: Span, b: Span, same_key: bool) -> tuple[DivergenceType | None, tuple[FieldChange, ...]]:
    """``compare_spans``, told whether alignment found the two span keys equal.

    Equal keys (``tracetui.core.align.span_key``) prove the identity fields
    byte-equal (a tool's name and canonical arguments, a retrieval's index and
    query...), so they are not compared again. ``screen_pairs`` settles the
    equal pair; the field-by-field slow path decides the others.
    """
    if not screen_pairs((a,), (b,), (0,), (0,), (same_key,)):
        return None, ()
    try:
        return _compare_slow(a, b)
    except RecursionError:
        return _deep_fallback(a, b)


def screen_pairs(
    originals: Sequence[Span],
    replays: Sequence[Span],
    original_index: Iterable[int | None],
    replay_index: Iterable[int | None],
    same_key: Iterable[bool],
) -> list[int]:
    """Positions of aligned rows that may diverge; every other row is an equivalent pair.

    The fast half of ``compare_pair`` over all rows in one loop (no call per
    row): kind, ``status`` and ``error_type`` compared first, then the kind's
    semantic values (minus the key fields when ``same_key``) fetched by one
    C-level ``itemgetter`` per side and compared with one ``==``, plus exact
    type checks of the ``_BYTES`` fields left. 100k equal pairs: 0.32 s, most
    of it the ``==`` of the values themselves, against 0.54 s with a
    ``compare_pair`` call per row (benchmarks/bench_diff.py data).

    Args:
        originals: The original run's spans.
        replays: The replay's spans.
        original_index: Per row, an index into ``originals`` or None.
        replay_index: Per row, an index into ``replays`` or None.
        same_key: Per row, whether alignment found the two span keys equal.

    Returns:
        Ascending row positions: the one-sided rows, and the pairs for which
        ``compare_pair`` must decide (most of them diverge).
    """
    out: list[int] = []
    flag = out.append
    fast = _FAST
    get_kinds = _GET_KINDS
    strict = _strict_same
    for k, o, r, same in zip(count(), original_index, replay_index, same_key):
        if o is None or r is None:
            flag(k)
            continue
        a = originals[o]
        b = replays[r]
        kind = a.kind
        if b.kind is not kind or a.status is not b.status or a.error_type != b.error_type:
            flag(k)
            continue
        getter, names, byte_idx = fast[kind][same]
        da = a.data
        db = b.data
        try:
            if kind in get_kinds:
                va: tuple[Any, ...] = tuple(map(da.get, names))
                vb: tuple[Any, ...] = tuple(map(db.get, names))
            else:
                try:
                    va = getter(da)
                    vb = getter(db)
                except KeyError:  # fields absent: this kind's spans get .get from now on
                    get_kinds.add(kind)
                    va = tuple(map(da.get, names))
                    vb = tuple(map(db.get, names))
            if va != vb:
                flag(k)
                continue
            for i in byte_idx:
                if not strict(va[i], vb[i]):
                    flag(k)
                    break
        except RecursionError:  # nested too deep for ==: compare_pair's fallback decides
            flag(k)
    return out


def _compare_slow(a: Span, b: Span) -> tuple[DivergenceType | None, tuple[FieldChange, ...]]:
    """Field by field, in priority order, down to the leaves."""
    kind = a.kind
    ins, outs = _SPLIT[kind]
    da, db = a.data, b.data
    changes: list[FieldChange] = []
    primary: DivergenceType | None = None
    if b.kind is not kind:
        changes.append(FieldChange("kind", kind.value, b.kind.value))
        primary = _IN if kind in (SpanKind.LLM, SpanKind.AGENT, SpanKind.OTHER) else _ARGS
    for name, path, dtype, flags in ins:
        if _diff_field(path, da.get(name, ABSENT), db.get(name, ABSENT), flags, changes) and primary is None:
            primary = dtype
    if a.status is not b.status:
        changes.append(FieldChange("status", a.status.value, b.status.value))
        if primary is None:
            primary = _STAT
    if a.error_type != b.error_type:
        changes.append(FieldChange("error_type", a.error_type, b.error_type))
        if primary is None:
            primary = _STAT
    for name, path, dtype, flags in outs:
        if _diff_field(path, da.get(name, ABSENT), db.get(name, ABSENT), flags, changes) and primary is None:
            primary = dtype
    if primary is None:
        return None, ()
    return primary, tuple(changes[:MAX_FIELDS])


def semantic_fields(span: Span) -> dict[str, Any]:
    """The fields that count for this span's kind, as ``path -> value``.

    Returns:
        Insertion-ordered dict: the kind's input-side fields present in the
        span (``tool.arguments``...), then ``status`` and ``error_type``, then
        its output-side fields. Values are as recorded (not canonicalised).
    """
    out: dict[str, Any] = {}
    ins, outs = _SPLIT[span.kind]
    d = span.data
    for name, path, _dtype, _flags in ins:
        if name in d:
            out[path] = d[name]
    out["status"] = span.status.value
    out["error_type"] = span.error_type
    for name, path, _dtype, _flags in outs:
        if name in d:
            out[path] = d[name]
    return out


def volatile_fields(span: Span) -> dict[str, Any]:
    """Everything the comparison ignores, as ``path -> value``, for dimmed display.

    Returns:
        ``span_id``, ``parent_id``, ``trace_id``, ``seq``, ``start_ns``,
        ``end_ns``, ``duration_ns`` (ns), then every key of the kind's section
        that is not semantic (``llm.usage``, ``tool.call_id``, ``tool.mode``,
        unknown keys...), then ``attributes.<key>`` for each attribute.
    """
    out: dict[str, Any] = {
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "trace_id": span.trace_id,
        "seq": span.seq,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "duration_ns": span.duration_ns,
    }
    names = _SEMANTIC_NAMES[span.kind]
    prefix = span.kind.value
    for k, v in span.data.items():
        if k not in names:
            out[f"{prefix}.{k}"] = v
    for k, v in span.attributes.items():
        out[f"attributes.{k}"] = v
    return out


def one_sided_fields(span: Span, *, original: bool) -> tuple[FieldChange, ...]:
    """The semantic fields of a span that has no counterpart, as changes from/to absent.

    Fields whose value is None are left out; the missing side is ``ABSENT``.

    Args:
        span: The span that exists.
        original: True when it is the original's (the replay side is None).
    """
    items = [(p, v) for p, v in semantic_fields(span).items() if v is not None][:MAX_FIELDS]
    if original:
        return tuple(FieldChange(p, v, ABSENT) for p, v in items)
    return tuple(FieldChange(p, ABSENT, v) for p, v in items)


# -- value comparison ---------------------------------------------------------


def _same_bytes(x: Any, y: Any) -> bool:
    """Exact equality of two ``==``-equal containers: same canonical JSON bytes."""
    try:
        if _dumps(x, option=_DUMP_OPT) == _dumps(y, option=_DUMP_OPT):
            return True
        return _dumps(canonicalize(x), option=_SORT_OPT) == _dumps(canonicalize(y), option=_SORT_OPT)
    except TypeError:  # not JSON (a caller built spans by hand): trust ==
        return True


def _equal(x: Any, y: Any, flags: int) -> bool:
    """Equality of two raw field values under the field's flag (see ``_VALUE``...)."""
    if x is y:
        return True
    if x != y:
        return False
    return flags != _BYTES or _strict_same(x, y)


def _strict_same(x: Any, y: Any) -> bool:
    """For ``==``-equal values: also the same JSON types all the way down."""
    if type(x) is not type(y):
        return False
    if type(x) in _CONTAINERS:
        return _same_bytes(x, y)
    return True


def _diff_field(path: str, x: Any, y: Any, flags: int, out: list[FieldChange]) -> bool:
    """Append the leaf changes between two raw values of one field; True if they differ.

    Cheap equality first; then drops volatile message ids (``_IDS``),
    canonicalises (JSON strings parsed, key order ignored) and walks both.
    """
    if x is ABSENT or y is ABSENT:
        # A field recorded as null equals one not recorded; anything else against a missing field differs whole.
        if (x if y is ABSENT else y) in (None, ABSENT):
            return False
        out.append(FieldChange(path, x, y))
        return True
    if _equal(x, y, flags):
        return False
    if flags == _IDS:
        x = _strip_ids(x)
        y = _strip_ids(y)
        if _equal(x, y, flags):
            return False
    try:
        cx = canonicalize(x)
        cy = canonicalize(y)
    except RecursionError:  # JSON nested ~1000 deep: compare as recorded
        cx, cy = x, y
    if _equal(cx, cy, flags):
        return False
    before = len(out)
    _walk(path, cx, cy, out, flags == _BYTES)
    if len(out) == before:  # equal leaf by leaf yet not byte-equal: report the field whole
        out.append(FieldChange(path, cx, cy))
    return True


def _strip_ids(value: Any) -> Any:
    """A message or list of messages without ``tool_call_id`` and ``tool_calls[].id``."""
    if isinstance(value, list):
        return [_strip_message(m) for m in value]
    return _strip_message(value)


def _strip_message(m: Any) -> Any:
    if not isinstance(m, Mapping):
        return m
    if "tool_call_id" not in m and "tool_calls" not in m:
        return m
    out = {k: v for k, v in m.items() if k != "tool_call_id"}
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {k: v for k, v in c.items() if k != "id"} if isinstance(c, Mapping) else c for c in calls
        ]
    return out


def _key_path(path: str, key: Any) -> str:
    k = str(key)
    if k.isidentifier():
        return f"{path}.{k}"
    return f"{path}[{orjson.dumps(k).decode()}]"


def _walk(path: str, x: Any, y: Any, out: list[FieldChange], strict: bool) -> None:
    """Append ``FieldChange``s for the differing leaves of two canonical values.

    Iterative (JSON nesting can be deep); stops at ``MAX_FIELDS`` entries in
    ``out``. Dicts are walked by key (original's order, then keys only in the
    replay), lists by index; a missing side is None. Leaves differ when their
    values differ, and with ``strict`` also when their JSON types do.
    """
    stack: list[tuple[str, Any, Any]] = [(path, x, y)]
    while stack:
        if len(out) >= MAX_FIELDS:
            return
        p, u, v = stack.pop()
        if isinstance(u, dict) and isinstance(v, dict):
            keys = list(u)
            keys.extend(k for k in v if k not in u)
            # Push in reverse so the walk reports in document order.
            for k in reversed(keys):
                a = u.get(k, ABSENT)
                b = v.get(k, ABSENT)
                if k in u and k in v and a == b and (not strict or _strict_same(a, b)):
                    continue
                stack.append((_key_path(p, k), a, b))
        elif isinstance(u, list) and isinstance(v, list):
            nu, nv = len(u), len(v)
            for i in reversed(range(max(nu, nv))):
                a = u[i] if i < nu else ABSENT
                b = v[i] if i < nv else ABSENT
                if i < nu and i < nv and a == b and (not strict or _strict_same(a, b)):
                    continue
                stack.append((f"{p}[{i}]", a, b))
        elif u != v or (strict and type(u) is not type(v)):
            out.append(FieldChange(p, u, v))
