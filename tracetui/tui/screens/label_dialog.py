"""LabelDialog: a reviewer's label and note for one divergence (issue 5, "Reviewer labels").

Opened with ``l`` on a divergent row. The reviewer picks one of ``tracetui.core.diff.labels.LABELS``
and types a note; the dialog returns what to save (or, on a labelled row, that the label is to be
removed). The app writes it to the sidecar next to the replay (``save_label`` / ``remove_label``),
never into the original.

Keys: arrows pick a label (enter or space takes it and moves to the note), enter in the note
saves, ``ctrl+s`` saves from anywhere, ``ctrl+r`` removes the current label, escape cancels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from tracetui.core.diff.labels import LABELS, Label, divergence_key, now_iso
from tracetui.tui.formatting import span_label, visible
from tracetui.tui.widgets.aligned_layout import LABEL_MARKS, UNKNOWN_LABEL_MARK

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff

LABEL_HELP = {
    "acceptable_alternative": "the replay took another valid path",
    "new_regression": "the replay is worse: a bug the change brought in",
    "fixture_mismatch": "the recording or fixture is wrong, not the agent",
    "insufficient_spec": "nothing says which side is right",
}
"""One line per label, as the dialog shows it (the meanings of ``tracetui.core.diff.labels``)."""

NOTE_MAX = 2000
"""Characters of a note kept at most."""


@dataclass(frozen=True, slots=True)
class LabelOutcome:
    """What the dialog asks the app to do.

    Attributes:
        key: ``divergence_key`` of the divergence.
        label: The label to save (replacing any label of ``key``), or None to remove the label of ``key``.
    """

    key: str
    label: Label | None


class LabelChoice(RadioSet):
    """The labels as radio buttons; enter on the label already taken confirms it too (focus moves on)."""

    def highlight(self, index: int) -> None:
        """Put the highlight (not the choice) on button ``index``."""
        self._selected = index

    def action_toggle_button(self) -> None:
        """Take the highlighted label; on the label already taken, say so again (the dialog moves to the note)."""
        if self._selected is not None and self._nodes[self._selected] is self.pressed_button:
            button = self.pressed_button
            assert isinstance(button, RadioButton)
            self.post_message(self.Changed(self, button))
            return
        super().action_toggle_button()


class LabelDialog(ModalScreen["LabelOutcome | None"]):
    """Modal: pick a label, type a note; dismisses with a ``LabelOutcome``, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="label-cancel", tooltip="Close without saving"),
        Binding("ctrl+s", "save", "Save", id="label-save", tooltip="Save the label and note"),
        Binding("ctrl+r", "remove", "Remove", id="label-remove", tooltip="Remove this divergence's label"),
    ]

    def __init__(self, diff: TraceDiff, row: int, current: Label | None = None) -> None:
        super().__init__()
        divergence = diff.row_divergence[row]
        if divergence is None:
            raise ValueError(f"row {row} has no divergence to label")
        self.row = row
        """The aligned row labelled."""
        self.divergence = divergence
        """The divergence labelled."""
        self.key = divergence_key(divergence)
        """Its ``divergence_key``."""
        self.current = current
        """The label it has now, or None."""

    def compose(self) -> ComposeResult:
        d = self.divergence
        span = d.original if d.original is not None else d.replay
        what = Text(no_wrap=True, overflow="ellipsis")
        what.append(f"row {self.row} · ", "dim")
        what.append(d.type.value, "bold")
        if span is not None:
            what.append(f" · {span.kind.value} {span_label(span)}")
        with Vertical(id="label-box"):
            yield Static(Text("label this divergence"), id="label-title")
            yield Static(what, id="label-what")
            with LabelChoice(id="label-choice"):
                for name in LABELS:
                    mark = LABEL_MARKS.get(name, UNKNOWN_LABEL_MARK)[0]
                    prompt = Text()
                    prompt.append(f"{mark} {name}", "bold")
                    prompt.append(f"  {LABEL_HELP.get(name, '')}", "dim")
                    yield RadioButton(prompt, value=self.current is not None and self.current.label == name,
                                      name=name)
            with Horizontal(id="label-note-row"):
                yield Static("note", id="label-note-caption")
                yield Input(value=self.current.note if self.current is not None else "",
                            placeholder="why (optional): what you checked, what should happen",
                            max_length=NOTE_MAX, id="label-note", compact=True)
            current = Text(no_wrap=True, overflow="ellipsis")
            if self.current is not None:
                current.append("now: ", "dim")
                current.append(self.current.label, "bold")
                if self.current.created:
                    current.append(f" · {visible(self.current.created)}", "dim")
            else:
                current.append("no label yet", "dim")
            yield Static(current, id="label-current")
            yield Static("", id="label-error", markup=False)
            with Horizontal(id="label-buttons"):
                yield Button("Save", id="label-save-button", variant="primary", compact=True)
                if self.current is not None:
                    yield Button("Remove label", id="label-remove-button", variant="error", compact=True)
                yield Button("Cancel", id="label-cancel-button", compact=True)
            hint = "↑↓ pick · enter takes it, then saves from the note · "
            hint += "ctrl+r remove · esc cancel" if self.current is not None else "esc cancel"
            yield Static(Text(hint), id="label-hint")

    def on_mount(self) -> None:
        choice = self.query_one(LabelChoice)
        choice.focus()
        if self.current is not None and self.current.label in LABELS:
            choice.highlight(LABELS.index(self.current.label))

    # -- results ------------------------------------------------------------

    @property
    def chosen(self) -> str | None:
        """The label picked, or None."""
        pressed = self.query_one(RadioSet).pressed_button
        return pressed.name if pressed is not None else None

    @property
    def note(self) -> str:
        """The note typed (surrounding whitespace dropped)."""
        return self.query_one("#label-note", Input).value.strip()

    def action_save(self) -> None:
        """Dismiss with the label to save; asks for a label when none is picked."""
        name = self.chosen
        if name is None:
            error = self.query_one("#label-error", Static)
            error.update(Text("pick a label first (↑↓, then enter)", "bold red"))
            error.display = True
            self.query_one(RadioSet).focus()
            return
        d = self.divergence
        label = Label(
            key=self.key, label=name, note=self.note, created=now_iso(), type=d.type.value,
            original_span_id=d.original.span_id if d.original is not None else None,
            replay_span_id=d.replay.span_id if d.replay is not None else None,
        )
        self.dismiss(LabelOutcome(self.key, label))

    def action_remove(self) -> None:
        """Dismiss asking to remove the current label (bell when there is none)."""
        if self.current is None:
            self.app.bell()
            return
        self.dismiss(LabelOutcome(self.key, None))

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)

    # -- events -------------------------------------------------------------

    @on(RadioSet.Changed)
    def _picked(self, event: RadioSet.Changed) -> None:
        self.query_one("#label-error", Static).display = False
        self.query_one("#label-note", Input).focus()

    @on(Input.Submitted, "#label-note")
    def _note_submitted(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#label-save-button")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#label-remove-button")
    def _remove_pressed(self) -> None:
        self.action_remove()

    @on(Button.Pressed, "#label-cancel-button")
    def _cancel_pressed(self) -> None:
        self.action_cancel()
