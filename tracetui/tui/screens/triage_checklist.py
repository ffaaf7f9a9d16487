"""What the triage panel lists: a step's heading and its items, each with the span ``enter`` goes to.

Built from a ``TriageResult`` (``tracetui.core.triage``) by ``heading`` and ``entries``, styled by
the screen's component classes (``style``: a name such as ``muted`` or ``original`` -> a Style).
``TriageScreen`` (``triage_screen.py``) shows them in its ``TriageList`` and goes to a ``Target``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import OptionList

from tracetui.tui.formatting import visible

if TYPE_CHECKING:
    from tracetui.core.triage import TriageResult, Trial

Styler = Callable[[str], Style]
"""A component-class name (``muted``, ``original``, ``failed`` ...) -> its style."""

STATE_MARKS = {"passed": "✓", "failed": "✗", "pending": "○", "skipped": "–"}
"""Checklist mark of each step state (``tracetui.core.triage.Step.state``)."""

ITEMS_PER_STEP = 200
"""Findings or evidence listed per step at most; the rest are counted (``tracetui triage`` lists them all)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a checklist item leads.

    Attributes:
        span_id: The span, or None for a run-level fact (a header field, a count).
        side: ``original`` or ``replay``: which trace holds ``span_id``.
        trial: Index into the reproduction's trials when the span belongs to that trial's replay.
        why: The item's text, said again when there is no span to go to.
    """

    span_id: str | None
    side: str = "original"
    trial: int | None = None
    why: str = ""


@dataclass(frozen=True, slots=True)
class Item:
    """One selectable line of the checklist (tests read these).

    Attributes:
        step: The step it belongs to (1, 2 or 3).
        text: What the line says (plain).
        target: Where ``enter`` goes.
    """

    step: int
    text: str
    target: Target



class TriageList(OptionList):
    """The checklist: step headings (not selectable) and their items; enter goes to the item's span."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Go to span", id="triage-jump",
                tooltip="Close the panel with the cursor on this item's span"),
        Binding("j", "cursor_down", "Down", show=False, id="triage-down", tooltip="Next item"),
        Binding("k", "cursor_up", "Up", show=False, id="triage-up", tooltip="Previous item"),
    ]



def answer(result: TriageResult, number: int, state: str) -> str:
    """What a step's heading says on its right: the answer to the step's question once it has one
    (step 1 "yes" / "yes, 2 caveats" / "no", step 2 "yes · 3 of 3" / "no · 0 of 1" / "sometimes · 1 of
    5", step 3 "answered": its detail starts with the verdict), else the state ("pending", "skipped")."""
    if number == 1 and state in ("passed", "failed"):
        n = len(result.caveats)
        return "no" if state == "failed" else f"yes, {n} caveat{'s' if n != 1 else ''}" if n else "yes"
    if number == 2 and state == "passed" and result.reproduction is not None:
        got, of = result.reproduction.reproduced, result.reproduction.trials
        return f"{'no' if got == 0 else 'yes' if got == of else 'sometimes'} · {got} of {of}"
    if number == 3 and state == "passed" and result.verdict:
        return "answered"
    return state


def heading(number: int, title: str, state: str, detail: str, style: Styler, said: str | None = None) -> Group:
    """A step's heading: its mark and number, title and answer (``said``, default the state), and the
    detail under the title, as wide as the panel whatever the answer's width."""
    grid = Table.grid(expand=True, padding=(0, 1))
    grid.add_column(width=3, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_column(no_wrap=True, justify="right")
    mark = style(state) if state in STATE_MARKS else Style()
    grid.add_row(Text(f"{STATE_MARKS.get(state, '?')} {number}", mark + Style(bold=True)),
                 Text(visible(title), Style(bold=True)),
                 Text(visible(said or state), mark + Style(bold=True)))
    under = Table.grid(expand=True, padding=(0, 1))
    under.add_column(width=3, no_wrap=True)
    under.add_column(ratio=1)
    under.add_row(Text(""), Text(visible(detail)))
    return Group(grid, under)


def entries(result: TriageResult, step: int, style: Styler) -> list[tuple[Text, Target]]:
    """The items of step ``step`` (1, 2 or 3): each one's text and where ``enter`` goes."""
    muted = style("muted")
    out: list[tuple[Text, Target]] = []
    if step == 1:
        for f in result.replayability.findings:
            t = Text()
            t.append(f.grade, style("failed" if f.severity == "not_replayable" else "pending"))
            t.append(f"  {where(f.span_id, 'original')}", style("original"))
            if f.field:
                t.append(f"  {visible(f.field)}", muted)
            t.append(f"  {visible(f.reason)}")
            if f.workaround:
                t.append(f"  workaround: {visible(f.workaround)}", muted)
            out.append((t, Target(f.span_id, "original", None, f.reason)))
    elif step == 2:
        if result.reproduction is None:
            t = Text("no replay yet: fill in the agent below and press r (or enter in the agent field)",
                     style("pending"))
            out.append((t, Target(None, why="form")))
        else:
            for i, trial in enumerate(result.reproduction.per_trial):
                out.append(trial_entry(i, trial, style))
    else:
        for e in result.evidence:
            t = Text()
            t.append(where(e.span_id, e.side), style("replay" if e.side == "replay" else "original"))
            t.append(f"  {visible(e.reason)}")
            out.append((t, Target(e.span_id, e.side, trial_of(result, e.span_id, e.side), e.reason)))
        for r in result.reasons:
            t = Text()
            t.append(f"why  {visible(r.rule)}", muted)
            t.append(f"  {visible(r.on)}", muted)
            t.append(f"  {visible(r.text)}")
            out.append((t, Target(None, why=r.text)))
    return out


def trial_entry(i: int, trial: Trial, style: Styler) -> tuple[Text, Target]:
    """Step 2's item for trial ``i``: reproduced or not, its reason, its first divergence."""
    t = Text()
    if trial.reproduced:  # the failure came back
        t.append("● reproduced", style("pending") + Style(bold=True))
    else:
        t.append("○ not reproduced", style("verdict") + Style(bold=True))
    t.append(f"  {visible(trial.label)}", style("replay"))
    t.append(f"  {visible(trial.reason)}")
    first = trial.first
    if first is None:
        return t, Target(None, "replay", i, "this trial does not diverge from the original")
    t.append(f"  · first divergence: {first.type.value}", style("muted"))
    if first.replay is not None:
        return t, Target(first.replay.span_id, "replay", i, trial.reason)
    assert first.original is not None
    return t, Target(first.original.span_id, "original", i, trial.reason)


def trial_of(result: TriageResult, span_id: str | None, side: str) -> int | None:
    """The trial whose replay holds ``span_id`` (replay-side evidence), else None."""
    if side != "replay" or span_id is None or result.reproduction is None:
        return None
    for i, trial in enumerate(result.reproduction.per_trial):
        if any(s.span_id == span_id for s in trial.diff.replay.spans):
            return i
    return None


def indented(text: Text) -> Table:
    """An item: ``▸`` then ``text``, wrapped under itself (a hanging indent)."""
    grid = Table.grid(expand=True, padding=0)
    grid.add_column(width=6, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text("    ▸ "), text)
    return grid


def where(span_id: str | None, side: str) -> str:
    """``original abc123``, or ``run`` for a run-level item."""
    return f"{side} {visible(span_id)}" if span_id is not None else "run"
