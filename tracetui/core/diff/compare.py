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
from itertools import count
from typing import Any, Callable, Iterable, Mapping, Sequence

import orjson
import xxhash

from tracetui.core.changes import ABSENT, MAX_FIELDS, DivergenceType, FieldChange
from tracetui.core.diff.envelopes import framework_value, tool_output
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.values import BYTES, IDS, VALUE, diff_field, iter_equal, json_same, strict_same

__all__ = [
    "ABSENT",
    "MAX_FIELDS",
    "SIG_NAMES",
    "VOLATILE_FIELDS",
    "DivergenceType",
    "FieldChange",
    "compare_spans",
    "field_side",
    "payload_sig",
    "screen_pairs",
    "semantic_fields",
    "semantic_names",
    "volatile_fields",
]


INPUT, STATUS, OUTPUT = 0, 1, 2
"""Sides of a field: where its divergence sits in execution order (see diff.py)."""

_ARGS = DivergenceType.ARGS_MISMATCH
_OUT = DivergenceType.OUTPUT_MISMATCH
_IN = DivergenceType.INPUT_MISMATCH
_DEC = DivergenceType.DECISION_MISMATCH
_STAT = DivergenceType.STATUS_MISMATCH

_Field = tuple[str, int, DivergenceType, int]
"""(field name, side INPUT/OUTPUT, divergence type, equality flag)."""

FRAME, TOOL_OUT = 8, 9
"""Flags of fields compared as ``IDS`` after ``diff.envelopes`` rewrites them: framework payloads
(``framework_value``) and a tool's output (``tool_output``: a ``ToolMessage`` envelope taken off)."""
_REWRITE = {FRAME: framework_value, TOOL_OUT: tool_output}

_POLICY: dict[SpanKind, tuple[_Field, ...]] = {
    SpanKind.TOOL: (
        ("tool_name", INPUT, _ARGS, VALUE),
        ("arguments", INPUT, _ARGS, BYTES),
        ("effect", INPUT, _ARGS, VALUE),
        ("tool_version", INPUT, _ARGS, VALUE),
        ("output", OUTPUT, _OUT, TOOL_OUT),
        ("output_truncated", OUTPUT, _OUT, VALUE),
    ),
    SpanKind.RETRIEVAL: (
        ("index", INPUT, _ARGS, VALUE),
        ("index_version", INPUT, _ARGS, VALUE),
        ("query", INPUT, _ARGS, BYTES),
        ("top_k", INPUT, _ARGS, VALUE),
        ("filters", INPUT, _ARGS, BYTES),
        ("documents", OUTPUT, _OUT, VALUE),
    ),
    SpanKind.LLM: (
        ("model", INPUT, _IN, VALUE),
        ("provider", INPUT, _IN, VALUE),
        ("prompt_id", INPUT, _IN, VALUE),
        ("prompt_version", INPUT, _IN, VALUE),
        ("params", INPUT, _IN, FRAME),
        ("messages", INPUT, _IN, IDS),
        ("tool_schemas_hash", INPUT, _IN, VALUE),
        ("output", OUTPUT, _DEC, IDS),
        ("finish_reason", OUTPUT, _DEC, VALUE),
    ),
    SpanKind.DECISION: (
        ("decision", OUTPUT, _DEC, VALUE),
        ("value", OUTPUT, _DEC, BYTES),
        ("options", OUTPUT, _DEC, BYTES),
    ),
    SpanKind.MEMORY: (
        ("operation", INPUT, _ARGS, VALUE),
        ("key", INPUT, _ARGS, BYTES),
        ("query", INPUT, _ARGS, BYTES),
        ("value", OUTPUT, _OUT, VALUE),
    ),
    SpanKind.AGENT: (
        ("input", INPUT, _IN, FRAME),
        ("output", OUTPUT, _OUT, FRAME),
    ),
    SpanKind.OTHER: (
        ("input", INPUT, _IN, FRAME),
        ("output", OUTPUT, _OUT, FRAME),
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
_NAMES_IN_ORDER: dict[SpanKind, tuple[str, ...]] = {k: tuple(f[0] for f in v) for k, v in _POLICY.items()}


def semantic_names(kind: SpanKind) -> tuple[str, ...]:
    """The semantic field names of ``kind`` (keys of ``Span.data``), in the policy's priority order."""
    return _NAMES_IN_ORDER[kind]

# Fields a span key (tracetui.core.diff.align.span_key) proves byte-equal when two keys are equal.
KEY_FIELDS: dict[SpanKind, frozenset[str]] = {
    SpanKind.TOOL: frozenset({"tool_name", "arguments"}),
    SpanKind.RETRIEVAL: frozenset({"index", "query"}),
    SpanKind.LLM: frozenset({"model"}),
    SpanKind.DECISION: frozenset({"decision"}),
}


_ERROR = Status.ERROR
_NON_STR = orjson.OPT_NON_STR_KEYS


def failed(span: Span) -> bool:
    """Whether a span failed: ``status`` ``error``. ``ok`` and ``unset`` compare equal:
    OpenTelemetry's UNSET is the default of a span that did not fail, and exporters
    differ on whether they set OK (the OTel SDKs leave UNSET; many recorders write
    ``ok``), so only failed / not failed is semantic."""
    return span.status is _ERROR


def _fast_spec(fields: tuple[_Field, ...], skip: frozenset[str]) -> tuple[Callable[[Any], tuple[Any, ...]], tuple[str, ...], tuple[int, ...]]:
    names = tuple(f[0] for f in fields if f[0] not in skip)
    flags = {f[0]: f[3] for f in fields}
    if len(names) == 1:
        one = names[0]
        getter: Callable[[Any], tuple[Any, ...]] = lambda d: (d[one],)  # noqa: E731
    else:
        getter = operator.itemgetter(*names)
    return getter, names, tuple(i for i, n in enumerate(names) if flags[n] == BYTES)


_GET_KINDS: set[SpanKind] = set()
"""Kinds whose spans were seen lacking a semantic field: read with ``.get``
(a C-level ``itemgetter`` is 3x faster when every field is there). Only speed
depends on it."""

# Per kind: (getter, names, positions checked exactly) for [any pair, pair with equal keys].
_FAST = {
    kind: (_fast_spec(fields, frozenset()), _fast_spec(fields, KEY_FIELDS.get(kind, frozenset())))
    for kind, fields in _POLICY.items()
}

# -- what the index loader computes from a span's payload (core.load.native_index) ------------

SIG_NAMES: dict[SpanKind, tuple[str, ...]] = {kind: spec[1][1] for kind, spec in _FAST.items()}
"""Per kind, the semantic fields the payload signature covers: those ``screen_pairs`` compares for a
pair whose span keys are equal (the kind's semantic fields minus ``KEY_FIELDS``)."""

_dumps = orjson.dumps
_xxh3 = xxhash.xxh3_64_intdigest


def payload_sig(kind: SpanKind, data: Mapping[str, Any]) -> int | None:
    """The payload signature of a span's data (``LazySpan._sig``): a hash of the JSON bytes of
    ``SIG_NAMES[kind]``'s values. Two spans of one kind with equal keys and equal signatures are an
    equivalent pair (``screen_pairs`` skips them without reading either payload).

    None when they cannot be written by orjson (nesting deeper than 255, integers beyond 64 bits...):
    such a span is always compared. The hash is xxHash's XXH3 (64 bits, seeded 0): the same in every
    process and run, so signatures stored by one opening (``core.load.index_cache``) hold in the next.
    """
    try:
        return _xxh3(_dumps(tuple(map(data.get, SIG_NAMES[kind]))), 0)
    except TypeError:
        return None


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
                if x != y and (path != "status" or failed(a) is not failed(b)):
                    changes.append(FieldChange(path, x, y))
                    primary = primary or _STAT
            continue
        for name, path, dtype, _flags in group:
            x, y = a.data.get(name), b.data.get(name)
            if not iter_equal(x, y):
                changes.append(FieldChange(path, x, y))
                primary = primary or dtype
    return primary, tuple(changes[:MAX_FIELDS])


def compare_pair(a: Span, b: Span, same_key: bool) -> tuple[DivergenceType | None, tuple[FieldChange, ...]]:
    """``compare_spans``, told whether alignment found the two span keys equal.

    Equal keys (``tracetui.core.diff.align.span_key``) prove the identity fields
    byte-equal (a tool's name and canonical arguments, a retrieval's index and
    query...), so they are not compared again. ``screen_pairs`` settles the
    equal pair; the field-by-field slow path decides the others. An
    ``args_mismatch`` whose replay span the harness marked ``replay.divergence:
    unrecorded_call`` is that ``unrecorded_call`` (``replay`` and ``diff`` name it alike).
    """
    if not screen_pairs((a,), (b,), (0,), (0,), (same_key,)):
        return None, ()
    try:
        dtype, fields = _compare_slow(a, b)
    except RecursionError:
        dtype, fields = _deep_fallback(a, b)
    if dtype is _ARGS and b.attributes and b.attributes.get("replay.divergence") == "unrecorded_call":
        # The replay harness served nothing for this call (its span says so): paired by alignment
        # with a recorded call of the same tool, it is still the call the recording does not cover.
        dtype = DivergenceType.UNRECORDED_CALL
    return dtype, fields


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
    type checks of the ``BYTES`` fields left. 100k equal pairs: 0.32 s, most
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
    strict = strict_same
    same_json = json_same
    dumps = orjson.dumps
    lazy = LazySpan
    for k, o, r, same in zip(count(), original_index, replay_index, same_key):
        if o is None or r is None:
            flag(k)
            continue
        a = originals[o]
        b = replays[r]
        kind = a.kind
        if b.kind is not kind or (a.status is _ERROR) is not (b.status is _ERROR) or a.error_type != b.error_type:
            flag(k)
            continue
        if same and type(a) is lazy and type(b) is lazy:
            sig = a._sig  # type: ignore[attr-defined]
            if sig is not None and sig == b._sig:  # type: ignore[attr-defined]
                continue  # the same bytes for every field compared below: equivalent, payloads left unread
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
            else:  # == holds; a JSON boolean against a number it cannot tell: the same bytes can
                try:
                    if dumps(va, option=_NON_STR) == dumps(vb, option=_NON_STR):
                        continue
                except TypeError:  # not JSON (spans built by hand): the walk decides
                    pass
                if not same_json(list(va), list(vb)):
                    flag(k)
        except RecursionError:  # nested too deep for ==: compare_pair's fallback decides
            flag(k)
    return out


_UNRECORDED_MATCHES: dict[str, tuple[Any, ...] | None] = {"effect": None, "output_truncated": (False,)}
"""Fields some recorders never write: absent on one side, they match the other side's value when it is
one of these (None: any value; ``effect`` absent means unknown, not different) instead of differing
whole (a harness replay of another tool's recording writes ``effect`` and ``output_truncated: false``)."""


def _unrecorded(name: str, x: Any, y: Any) -> bool:
    """One side never recorded ``name`` and the other holds its default (``_UNRECORDED_MATCHES``)."""
    if (x is ABSENT) is (y is ABSENT) or name not in _UNRECORDED_MATCHES:
        return False
    allowed = _UNRECORDED_MATCHES[name]
    other = y if x is ABSENT else x
    return allowed is None or any(other is v for v in allowed)


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
        x, y = da.get(name, ABSENT), db.get(name, ABSENT)
        if not _unrecorded(name, x, y) and _diff(path, x, y, flags, changes) and primary is None:
            primary = dtype
    if failed(a) is not failed(b):
        changes.append(FieldChange("status", a.status.value, b.status.value))
        if primary is None:
            primary = _STAT
    if a.error_type != b.error_type:
        changes.append(FieldChange("error_type", a.error_type, b.error_type))
        if primary is None:
            primary = _STAT
    for name, path, dtype, flags in outs:
        x, y = da.get(name, ABSENT), db.get(name, ABSENT)
        if not _unrecorded(name, x, y) and _diff(path, x, y, flags, changes) and primary is None:
            primary = dtype
    if primary is None:
        return None, ()
    return primary, tuple(changes[:MAX_FIELDS])


def _diff(path: str, x: Any, y: Any, flags: int, out: list[FieldChange]) -> bool:
    """``values.diff_field``, after the ``diff.envelopes`` rewrite for ``FRAME`` / ``TOOL_OUT`` fields."""
    rewrite = _REWRITE.get(flags)
    if rewrite is None:
        return diff_field(path, x, y, flags, out)
    if x == y and strict_same(x, y):
        return False
    if x is not ABSENT:
        x = rewrite(x)
    if y is not ABSENT:
        y = rewrite(y)
    return diff_field(path, x, y, IDS, out)


def field_types(kind: SpanKind) -> dict[str, tuple[int, DivergenceType]]:
    """Per field path of ``kind`` (``tool.output``, ``status``...): its priority (lower first) and the
    divergence type it raises (docs/format.md's policy table)."""
    out: dict[str, tuple[int, DivergenceType]] = {}
    ins, outs = _SPLIT[kind]
    for n, (_name, path, dtype, _flags) in enumerate(ins):
        out[path] = (n, dtype)
    out["status"] = out["error_type"] = (len(ins), _STAT)
    for n, (_name, path, dtype, _flags) in enumerate(outs):
        out[path] = (len(ins) + 1 + n, dtype)
    return out


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
