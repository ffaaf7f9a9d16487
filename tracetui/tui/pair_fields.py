"""The field-by-field comparison of one aligned row, shared by the detail pane and the pair screen.

Pure data, no widgets: which fields each side has (``tracetui.core.diff.compare``'s
semantic and volatile fields), which differ according to the row's
``Divergence``, and the words that explain a divergence type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from tracetui.core.canonical import canonicalize
from tracetui.core.diff.compare import ABSENT, semantic_fields, volatile_fields
from tracetui.core.model import Span
from tracetui.tui.widgets.aligned_layout import row_category

if TYPE_CHECKING:
    from tracetui.core.diff import Divergence, TraceDiff


DIVERGENCE_HELP: Mapping[str, str] = {
    "unrecorded_call": "the replay made a call the recording has no match for",
    "missing_call": "the original made this call; the replay never did",
    "args_mismatch": "same call, different arguments",
    "output_mismatch": "same call, different output",
    "status_mismatch": "status or error type differs",
    "input_mismatch": "different input (model, prompt, params or messages)",
    "decision_mismatch": "same input, different decision or answer",
    "extra_span": "a span only the replay has",
    "missing_span": "a span only the original has",
}
"""One-line meaning of each divergence type (docs/format.md, comparison policy)."""

__all__ = ["ABSENT", "DIVERGENCE_HELP", "FieldRow", "PairFields", "pair_fields"]



@dataclass(frozen=True, slots=True)
class FieldRow:
    """One field of the pair.

    Attributes:
        path: Field path as ``tracetui.core.diff.compare`` names it (``arguments``,
            ``output.slots[0]``).
        original: The original's value; ``ABSENT`` (``tracetui.core.diff.compare``)
            when that side has no such field, ``None`` for a recorded null.
        replay: The replay's value, likewise.
        changed: The row's divergence names this field (or a field inside it).
    """

    path: str
    original: Any
    replay: Any
    changed: bool


@dataclass(frozen=True, slots=True)
class PairFields:
    """Everything the detail pane and the pair screen show about one aligned row.

    Attributes:
        row: The aligned row.
        category: ``equal``, ``changed``, ``extra`` or ``missing``.
        divergence: The row's divergence, or None.
        is_first: The row holds the first divergence.
        original: The original's span, or None.
        replay: The replay's span, or None.
        changes: Field changes of the divergence whose path is not itself a
            semantic field (a path inside one, like ``arguments.date``).
        semantic: Compared fields, union of both sides, in the original's order.
        volatile: Never-compared fields (ids, times, usage...).
    """

    row: int
    category: str
    divergence: Divergence | None
    is_first: bool
    original: Span | None
    replay: Span | None
    changes: tuple[FieldRow, ...]
    semantic: tuple[FieldRow, ...]
    volatile: tuple[FieldRow, ...]

    @property
    def type_name(self) -> str:
        """The divergence type's name (``args_mismatch``), or empty."""
        return self.divergence.type.value if self.divergence is not None else ""


def _inside(path: str, outer: str) -> bool:
    return path == outer or path.startswith(outer + ".") or path.startswith(outer + "[")


def _rows(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, changed: tuple[str, ...]) -> list[FieldRow]:
    a = a or {}
    b = b or {}
    out = []
    for path in dict.fromkeys([*a, *b]):
        is_changed = any(_inside(c, path) or _inside(path, c) for c in changed)
        out.append(FieldRow(path, a.get(path, ABSENT), b.get(path, ABSENT), is_changed))
    return out


def _differs(row: FieldRow) -> bool:
    if row.original is ABSENT or row.replay is ABSENT:
        return row.original is not row.replay
    try:
        return bool(canonicalize(row.original) != canonicalize(row.replay))
    except Exception:  # noqa: BLE001 - odd values: fall back to plain equality
        return bool(row.original != row.replay)


def read_payloads(diff: TraceDiff, row: int) -> None:
    """Read row ``row``'s span payloads now (a no-op once read, or for spans read whole), so that a screen
    can refuse to open on them before it is built.

    Raises:
        tracetui.core.errors.SourceChanged: a payload's file was truncated or rewritten since it was read.
    """
    aligned = diff.rows[row]
    for index, trace in ((aligned.original, diff.original), (aligned.replay, diff.replay)):
        if index is not None:
            trace.spans[index].data  # noqa: B018 - a LazySpan reads its payload on this access


def pair_fields(diff: TraceDiff, row: int) -> PairFields:
    """Collect the fields of aligned row ``row`` of ``diff``.

    Args:
        diff: The pair's diff.
        row: Index into ``diff.rows``.

    Raises:
        IndexError: ``row`` is out of range.
    """
    aligned = diff.rows[row]
    divergence = diff.row_divergence[row]
    original = diff.original.spans[aligned.original] if aligned.original is not None else None
    replay = diff.replay.spans[aligned.replay] if aligned.replay is not None else None
    category = row_category(aligned.original, aligned.replay, divergence)
    # A one-sided row differs as a whole; its "changes" are every field against nothing.
    paired = category not in ("extra", "missing")
    changed = tuple(f.path for f in divergence.fields) if divergence is not None and paired else ()

    semantic = _rows(
        semantic_fields(original) if original is not None else None,
        semantic_fields(replay) if replay is not None else None,
        changed,
    )
    if changed and original is not None and replay is not None and not any(r.changed for r in semantic):
        # The divergence names its fields in another vocabulary: mark what differs.
        semantic = [FieldRow(r.path, r.original, r.replay, _differs(r)) for r in semantic]
    keys = {r.path for r in semantic}
    changes = tuple(
        FieldRow(f.path, f.original, f.replay, True)
        for f in (divergence.fields if divergence is not None and paired else ())
        if f.path not in keys
    )
    volatile = _rows(
        _with_duration(volatile_fields(original)) if original is not None else None,
        _with_duration(volatile_fields(replay)) if replay is not None else None,
        (),
    )
    first = diff.first
    return PairFields(
        row=row,
        category=category,
        divergence=divergence,
        is_first=first is not None and first.row == row,
        original=original,
        replay=replay,
        changes=changes,
        semantic=tuple(semantic),
        volatile=tuple(volatile),
    )


def _with_duration(fields: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(fields)
    start, end = out.get("start_ns"), out.get("end_ns")
    if "duration_ns" not in out and isinstance(start, int) and isinstance(end, int):
        out["duration_ns"] = end - start
    return out
