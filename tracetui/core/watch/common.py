"""What watch mode's full and incremental paths share: the ``LiveTraceDiff`` they return, the span
clone, and the placeholders of parents not written yet (``placeholder_plan``).

May import: the diff and the vocabulary.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
from dataclasses import dataclass

from tracetui.core.diff import TraceDiff
from tracetui.core.model import Span, SpanKind

__all__ = ["ROOT_PLACEHOLDER", "LiveTraceDiff", "child_types", "clone_span", "placeholder_plan"]


@dataclass(slots=True)
class LiveTraceDiff(TraceDiff):
    """A ``TraceDiff`` of a replay still being written, rows in stable slots.

    Attributes:
        pending: Rows of original spans the replay has not reached yet (no divergence shown for them).
        placeholder_rows: Rows whose replay side is a parent not written yet.
        relaid: True when this update could not keep every row in place (a row shown as replay-only
            paired with an original span later, or a replaced file lost spans): rows were laid out again.
        final: True when computed as the complete replay (no row pending).
    """

    pending: frozenset[int] = frozenset()
    placeholder_rows: frozenset[int] = frozenset()
    relaid: bool = False
    final: bool = False


_SPAN_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(Span)))


def clone_span(span: Span) -> Span:
    """A shallow copy of a span (``copy.copy``: 8 µs a span through ``__reduce_ex__``; this: ~1.5 µs)."""
    if type(span) is Span:
        return Span(*_SPAN_FIELDS(span))
    return copy.copy(span)


_Type = tuple[SpanKind, str]  # (kind, name): what placeholder_plan knows of a span


def child_types(spans: list[Span]) -> dict[_Type, dict[_Type, int]]:
    """For each (kind, name) of the original's spans, how often each (kind, name) occurs among their
    children: ``placeholder_plan`` guesses what a parent not written yet is from it."""
    by_id = {s.span_id: s for s in spans}
    table: dict[_Type, dict[_Type, int]] = {}
    for s in spans:
        parent = by_id.get(s.parent_id) if s.parent_id is not None else None
        if parent is not None:
            kids = table.setdefault((parent.kind, parent.name), {})
            t = (s.kind, s.name)
            kids[t] = kids.get(t, 0) + 1
    return table


_GUESSABLE = (SpanKind.AGENT, SpanKind.OTHER)  # kinds whose span key is kind and name (align.span_key)

ROOT_PLACEHOLDER = "tracetui.placeholder:root"
"""``span_id`` of the run root's placeholder while the root has no written child (so no id for it)."""


def placeholder_plan(missing: dict[str, int], first_child: dict[str, _Type], root: Span | None,
                     child_types: dict[_Type, dict[_Type, int]]) -> list[tuple[str, str | None, int, SpanKind, str]]:
    """The placeholders of a replay being written: ``(span_id, parent_id, seq, kind, name)`` of each.

    Args:
        missing: Each parent id no written span has -> the lowest ``seq`` of its written children
            (dict order: as first met in file order).
        first_child: Each missing parent -> (kind, name) of that lowest-``seq`` child.
        root: The original's root when it has one (else None).
        child_types: ``child_types`` of the original.

    The writer writes a span when it ends, so the parents not written yet are the spans still open:
    in a run that does one thing at a time, one chain from the root down, and ordered by their first
    written child they come in that chain's order. So the first stands for the run's root (the
    original root's kind, its name marked "(not written yet)"; the diff pairs roots of one kind),
    and each next one is the child of the one before. Its kind and name are guessed from the
    original: among the children of the spans the parent placeholder stands for, the most frequent
    (kind, name) whose own children include the kind and name of its first written child (an agent
    or other span only: their key is kind and name, so it pairs with the original's span at its
    place). No guess: an agent span named "(not written yet)". Before the root has a written child,
    the first open span is not the root but one of its children (its first child is of a kind the
    root's children have below them, not the root itself): the root then gets a placeholder of its
    own, ``ROOT_PLACEHOLDER``, first in the plan. Its ``seq`` is its first child's
    (before its children on ties: the caller puts placeholders first), so it sits among its
    siblings where its children do, not before them all (which made the diff pair the written
    siblings with the original's last ones: docs/watch.md). A run with parallel branches has
    several chains; they are nested as one here (a guess can then fail, and the rows of the branch
    that is not the chain's stay unpaired until their parents are written).
    """
    order = sorted(missing, key=missing.__getitem__)
    if root is not None and order:
        below = child_types.get((root.kind, root.name), {})
        want = first_child.get(order[0])
        if want not in below and any(want in child_types.get(t, ()) for t in below):
            # The root has no written child yet: the first open span is one of its children, the root
            # (open too: it ends last) gets a placeholder of its own, under an id no span has.
            missing = {ROOT_PLACEHOLDER: missing[order[0]], **missing}
            order.insert(0, ROOT_PLACEHOLDER)
    plan: list[tuple[str, str | None, int, SpanKind, str]] = []
    above: _Type | None = None  # what the previous placeholder stands for
    for k, p in enumerate(order):
        if k == 0:
            if root is not None:
                plan.append((p, None, missing[p], root.kind, f"{root.name} (not written yet)"))
                above = (root.kind, root.name)
            else:
                plan.append((p, None, missing[p], SpanKind.AGENT, "(not written yet)"))
                above = None
            continue
        guess: _Type | None = None
        kids = child_types.get(above) if above is not None else None
        if kids:
            want = first_child.get(p)
            best = 0
            for t, count in kids.items():
                if count > best and t[0] in _GUESSABLE and want in child_types.get(t, ()):
                    guess, best = t, count
        if guess is not None:
            plan.append((p, order[k - 1], missing[p], guess[0], guess[1]))
        else:
            plan.append((p, order[k - 1], missing[p], SpanKind.AGENT, "(not written yet)"))
        above = guess
    return plan
