"""PromoteDialog: turn the original run into a golden case (issue 6, key ``g``; docs/golden.md "Promotion").

Prefilled from ``tracetui.core.golden.promote.derive_redacted`` on the pair shown (the original, and the
replay as the fixed run), every field editable: the case name, the failure in one sentence, the contract
(YAML, validated on save by the contract parser: a bad field is shown with its path, nothing written)
and the golden folder (default ``golden/`` under the current directory). Save writes the case with
``promote`` (redacted with the project key, as ``tracetui record`` does) and dismisses with the
``PromotedCase``; an existing case is never overwritten (a fork is written).

Keys: tab moves between fields, ``ctrl+s`` saves from anywhere, escape cancels.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from tracetui.core.errors import TracetuiError
from tracetui.core.golden.promote import (
    PromotedCase,
    contract_text,
    derive_name,
    derive_redacted,
    parse_contract_text,
    promote,
)
from tracetui.tui.formatting import visible

if TYPE_CHECKING:
    from tracetui.core.model import Trace


def project_redactor() -> Any:
    """The project's Redactor, found as ``tracetui record`` finds the key (``load_key(create=True)``).

    Raises:
        RedactionKeyError: a key source is set but unusable (the message says which and how to fix it).
    """
    from tracetui.core.harness.redact import project_redactor

    return project_redactor(create=True)[0]


class PromoteDialog(ModalScreen["PromotedCase | None"]):
    """Modal: name, failure, contract YAML and folder, prefilled; dismisses with the case written, or None."""

    DEFAULT_CSS = """
    PromoteDialog { align: center middle; background: $background 60%; }
    #promote-box { width: 94%; max-width: 110; height: 90%; background: $panel; border: round $primary;
                   padding: 0 1; }
    #promote-title { text-style: bold; color: $text-primary; margin-bottom: 1; }
    .promote-row { height: 1; }
    .promote-caption { width: 9; color: $text-muted; }
    .promote-row Input { width: 1fr; }
    #promote-contract-caption { color: $text-muted; margin-top: 1; }
    #promote-contract { height: 1fr; min-height: 4; width: 100%; }
    #promote-notes { height: auto; max-height: 3; }
    #promote-error { display: none; height: auto; max-height: 6; color: $text-error; }
    #promote-buttons { height: 1; margin-top: 1; }
    #promote-buttons Button { margin-right: 2; }
    #promote-hint { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="promote-cancel", tooltip="Close without writing"),
        Binding("ctrl+s", "save", "Save", id="promote-save", priority=True,
                tooltip="Validate the contract and write the golden case"),
    ]

    def __init__(self, original: Trace, replay: Trace | None, redactor: Any, *, to: str | None = None) -> None:
        super().__init__()
        self.original = original
        """The failing run promoted."""
        self.replay = replay
        """The fixed run it is compared with (the contract's must_call, order, final_state), or None."""
        self.redactor = redactor
        """The project Redactor (``project_redactor``)."""
        self.derivation = derive_redacted(original, replay, redactor)
        """What was derived (redacted values only)."""
        self.default_to = to if to is not None else os.path.join(os.getcwd(), "golden")
        """The golden folder proposed."""
        self.error: str | None = None
        """The last save error shown, or None."""

    @classmethod
    def for_pair(cls, original: Trace, replay: Trace | None, *, to: str | None = None) -> PromoteDialog:
        """The dialog with the project Redactor. Raises RedactionKeyError when the key is unusable."""
        return cls(original, replay, project_redactor(), to=to)

    def compose(self) -> ComposeResult:
        d = self.derivation
        run_id = self.original.header.get("run_id")
        name = d.name or derive_name(d.failure, run_id if isinstance(run_id, str) else None)
        source = os.path.basename(self.original.path) or "the original"
        if self.replay is not None:
            source += f" (fixed run: {os.path.basename(self.replay.path) or 'the replay'})"
        text = contract_text(d.contract, d.why, comment="derived by tracetui promote; edit freely (docs/golden.md)")
        with Vertical(id="promote-box"):
            yield Static(Text(f"promote {visible(source)} to a golden case"), id="promote-title")
            with Horizontal(classes="promote-row"):
                yield Static("name", classes="promote-caption")
                yield Input(value=name, id="promote-name", compact=True, placeholder="case-name")
            with Horizontal(classes="promote-row"):
                yield Static("failure", classes="promote-caption")
                yield Input(value=d.failure, id="promote-failure", compact=True,
                            placeholder="the observable failure, in one sentence")
            with Horizontal(classes="promote-row"):
                yield Static("folder", classes="promote-caption")
                yield Input(value=self.default_to, id="promote-to", compact=True)
            yield Static("contract (YAML, tracetui-contract/1)", id="promote-contract-caption")
            yield TextArea(text, id="promote-contract", soft_wrap=False, show_line_numbers=True, compact=True)
            notes = "; ".join(d.notes)
            if notes:
                yield Static(Text(visible(notes), "dim"), id="promote-notes")
            yield Static("", id="promote-error", markup=False)
            with Horizontal(id="promote-buttons"):
                yield Button("Save", id="promote-save-button", variant="primary", compact=True)
                yield Button("Cancel", id="promote-cancel-button", compact=True)
            yield Static(Text("tab next field · ctrl+s save · esc cancel"), id="promote-hint")

    def on_mount(self) -> None:
        self.query_one("#promote-name", Input).focus()

    # -- actions -------------------------------------------------------------

    def _show_error(self, message: str) -> None:
        self.error = message
        error = self.query_one("#promote-error", Static)
        error.update(Text(visible(message), "bold red"))
        error.display = True

    def action_save(self) -> None:
        """Validate the contract, write the case with ``promote`` and dismiss with it; errors stay in the dialog."""
        name = self.query_one("#promote-name", Input).value.strip()
        failure = " ".join(self.query_one("#promote-failure", Input).value.split())
        to = self.query_one("#promote-to", Input).value.strip()
        if not to:
            self._show_error("folder: give the golden folder (default golden/)")
            self.query_one("#promote-to", Input).focus()
            return
        try:
            contract = parse_contract_text(self.query_one("#promote-contract", TextArea).text)
        except TracetuiError as exc:
            self._show_error(f"contract not saved: {exc}")
            self.query_one("#promote-contract", TextArea).focus()
            return
        try:
            case = promote(self.original, self.replay, to, name=name or None, failure=failure or None, owner=None,
                           redactor=self.redactor, contract=contract)
        except TracetuiError as exc:
            self._show_error(str(exc))
            return
        except OSError as exc:
            self._show_error(f"{to}: cannot write the case ({exc.strerror or exc})")
            return
        self.dismiss(case)

    def action_cancel(self) -> None:
        """Close without writing."""
        self.dismiss(None)

    # -- events --------------------------------------------------------------

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _edited(self) -> None:
        if self.error is not None:
            self.error = None
            self.query_one("#promote-error", Static).display = False

    @on(Button.Pressed, "#promote-save-button")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#promote-cancel-button")
    def _cancel_pressed(self) -> None:
        self.action_cancel()


def promoted_message(case: PromotedCase) -> str:
    """What the app says once a case is written (where, fork, clauses, drops)."""
    clauses = sum(len(v) for v in case.contract.values() if isinstance(v, list))
    fork = f" (fork of {case.parent})" if case.parent else ""
    return (f"wrote {case.path}{fork}: {clauses} clause(s), {case.kept} span(s) kept, "
            f"{len(case.dropped)} dropped")
