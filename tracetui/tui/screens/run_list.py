"""RunListScreen: the runs of a file that holds several (``tracetui FILE``: a tau-bench results file, an
inspect log, an OTLP export of many traces, a K-trial replay), one line each — id, span count, status,
reward or verdict where the format records one. ``enter`` opens a run alone; ``space`` marks runs, and
``enter`` (or ``d``) with two marked diffs them (the first marked is the original).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from tracetui.tui.formatting import visible
from tracetui.tui.widgets.footer import TraceFooter

MARK = "●"


def outcome_text(run: dict[str, Any]) -> str:
    """What the run's header says of its result (``summarize_run``'s ``outcome``: tau-bench's reward, an
    inspect score) and, for a ``tracetui replay`` run, whether it diverged; empty when the format has none."""
    parts: list[str] = []
    outcome = run.get("outcome")
    if isinstance(outcome, dict):
        for key, value in list(outcome.items())[:3]:
            if isinstance(value, (dict, list)):
                continue
            parts.append(f"{key}={value!r}" if isinstance(value, str) and " " in value else f"{key}={value}")
    elif outcome is not None:
        parts.append(str(outcome))
    replay = run.get("replay")
    if isinstance(replay, dict) and replay.get("diverged") is not None:
        parts.append("diverged" if replay["diverged"] else "stayed on the recording")
    return visible(" ".join(parts))


class RunListScreen(Screen[None]):
    """The runs of ``path``; the app opens what is picked (``TraceTuiApp.open_runs``).

    Args:
        path: The file (no ``#RUN``).
        runs: ``summarize_run`` dicts, in file order.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="runs-open",
                tooltip="Open the run under the cursor alone, or diff the two marked runs"),
        Binding("space", "mark", "Mark", id="runs-mark", tooltip="Mark or unmark the run (two marked: enter diffs them)"),
        Binding("d", "diff", "Diff marked", id="runs-diff", tooltip="Diff the two marked runs (first marked: original)"),
        Binding("escape", "back", "Back", id="runs-back", tooltip="Back to the view (when a run is open)"),
        Binding("q", "app.quit", "Quit", id="runs-quit", tooltip="Quit tracetui"),
    ]

    def __init__(self, path: str, runs: list[dict[str, Any]]) -> None:
        super().__init__()
        self.path = path
        self.runs = runs
        self.marked: list[int] = []
        """Indexes of the marked runs, in marking order (at most two)."""

    def compose(self) -> ComposeResult:
        import os

        yield Static(
            Text.assemble((visible(os.path.basename(self.path)), "bold"),
                          f"  {len(self.runs):,} runs — enter opens one; space marks two, enter diffs them"),
            id="runs-title",
        )
        table: DataTable[Any] = DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("", id="runs-status")
        yield TraceFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(" ", key="mark", width=1)
        table.add_column("run", key="run")
        table.add_column("spans", key="spans")
        table.add_column("status", key="status")
        table.add_column("result", key="result")
        for n, run in enumerate(self.runs):
            errors = run.get("errors") or 0
            status = Text(f"{errors} error{'s' * (errors != 1)}", "bold red") if errors else Text("ok")
            table.add_row(" ", visible(str(run.get("run_id") or f"run {n + 1}")),
                          Text(f"{run.get('span_count', 0):,}", justify="right"), status, outcome_text(run),
                          key=str(n))
        table.focus()
        self._say()

    def ref(self, index: int) -> str:
        """``FILE#RUN`` of run ``index`` (the file alone when the run has no id)."""
        run_id = self.runs[index].get("run_id")
        return f"{self.path}#{run_id}" if run_id else self.path

    def _say(self) -> None:
        names = [str(self.runs[i].get("run_id")) for i in self.marked]
        if not names:
            text = "no run marked"
        elif len(names) == 1:
            text = f"marked: {names[0]} (original) — mark the replay to diff"
        else:
            text = f"diff: {names[0]} (original) ⟷ {names[1]} (replay) — enter or d"
        self.query_one("#runs-status", Static).update(Text(visible(text)))

    def action_mark(self) -> None:
        table = self.query_one(DataTable)
        row = table.cursor_row
        if row in self.marked:
            self.marked.remove(row)
        else:
            if len(self.marked) == 2:
                dropped = self.marked.pop(0)
                table.update_cell(str(dropped), "mark", " ")
            self.marked.append(row)
        table.update_cell(str(row), "mark", MARK if row in self.marked else " ")
        self._say()
        table.move_cursor(row=min(row + 1, table.row_count - 1))

    def action_open(self) -> None:
        if len(self.marked) == 2:
            self.action_diff()
            return
        self.app.open_runs(self.ref(self.query_one(DataTable).cursor_row), None)  # type: ignore[attr-defined]
        self.dismiss()

    def action_diff(self) -> None:
        if len(self.marked) != 2:
            self.app.notify("Mark two runs with space first (the first marked is the original).",
                            title="runs", markup=False)
            return
        self.app.open_runs(self.ref(self.marked[0]), self.ref(self.marked[1]))  # type: ignore[attr-defined]
        self.dismiss()

    def action_back(self) -> None:
        if getattr(self.app, "diff", None) is not None:
            self.dismiss()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()
