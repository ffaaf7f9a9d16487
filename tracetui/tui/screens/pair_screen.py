"""PairScreen: one aligned pair in full, every field side by side, payloads wrapped and scrollable.

Pushed on ``enter``. Values are pretty-printed (JSON indented, strings holding
JSON parsed, prose with its own line breaks). The paths the row's divergence
names (``Divergence.fields``) are highlighted on both sides: a tinted background
and a gutter mark (``▌``, ``▶`` on the difference stepped to) so they read
without colour; ``]``/``[`` step through them ("difference 2 of 5") and scroll
there. Never-compared fields (``compare.volatile_fields`` and the nested
entries of ``compare.VOLATILE_FIELDS``) are listed apart, under "not compared".

``c`` copies the span's JSON (both sides as ``{"original": ..., "replay": ...}``,
or the side ``s`` picks) with OSC 52; ``w`` writes it to a new file in the
current directory. A long value shows its first lines and the lines around its
differences, saying how many are left out; ``a`` shows everything.
``n``/``p`` step through divergent rows; the screen returns the row it ends on.

The body (fields side by side, highlights, long values capped) is the widget ``PairBody``
(``widgets/pair_body.py``; its names are importable from here); this module is the screen: its
title, status line, keys and actions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from tracetui.core.readers.export import SIDES, span_json, write_new_file
from tracetui.tui.formatting import span_label, visible
from tracetui.core.errors import SourceChanged
from tracetui.tui.pair_fields import DIVERGENCE_HELP, PairFields, pair_fields, read_payloads
from tracetui.tui.widgets.pair_body import (
    CURRENT,
    GUTTER,
    HEAD_LINES,
    LINE_CHARS,
    PER_RANGE,
    SEPARATOR,
    SHOW_ALL_HINT,
    Cells,
    PairBody,
    Side,
)

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.model import Span

__all__ = ["CURRENT", "GUTTER", "HEAD_LINES", "LINE_CHARS", "PER_RANGE", "SEPARATOR", "SHOW_ALL_HINT", "Cells", "PairBody",
           "PairScreen", "PairStatus", "Side"]


class PairStatus(Static):
    """One line under the pair: which difference is shown, what ``c``/``w`` take, how much is left out."""

    DEFAULT_CSS = """
    PairStatus {
        height: 1;
        background: $panel;
        color: $text-muted;
        padding: 0 1;
    }
    """


class PairScreen(Screen[int]):
    """Every field of aligned row ``row`` of a diff; dismisses with the row it was showing."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"pair-screen--changed", "pair-screen--muted"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="close-pair", tooltip="Back to the aligned view, cursor on this row"),
        Binding("f", "first", "First div", id="pair-first-divergence", tooltip="Show the first divergent pair"),
        Binding("n", "step(1)", "Next div", id="pair-next-divergence", tooltip="Show the next divergent pair"),
        Binding("p", "step(-1)", "Prev div", id="pair-previous-divergence", tooltip="Show the previous divergent pair"),
        Binding("right_square_bracket", "difference(1)", "Next diff", id="pair-next-difference",
                tooltip="Scroll to the next differing path of this pair (highlighted ▌; wraps around)"),
        Binding("left_square_bracket", "difference(-1)", "Prev diff", show=False, id="pair-previous-difference",
                tooltip="Scroll to the previous differing path of this pair (wraps around)"),
        Binding("c", "copy_json", "Copy", id="pair-copy-json",
                tooltip="Copy the span's JSON to the clipboard (OSC 52): both sides as "
                        "{\"original\": ..., \"replay\": ...}, or the side s picks"),
        Binding("w", "write_json", "Write", show=False, id="pair-write-json",
                tooltip="Write the span's JSON to a new file in the current directory (for terminals "
                        "without OSC 52; never overwrites)"),
        Binding("s", "cycle_side", "Side", show=False, id="pair-copy-side",
                tooltip="Choose what c and w take: both sides, the original or the replay"),
        Binding("a", "show_all", "All", show=False, id="pair-show-all",
                tooltip="Show long values in full instead of their head and the lines around their differences"),
    ]

    def __init__(self, diff: TraceDiff, row: int) -> None:
        super().__init__()
        self._diff = diff
        self.row = row
        """The aligned row shown."""
        self.side = "both"
        """What ``c`` and ``w`` take: one of ``tracetui.core.readers.export.SIDES``."""
        self.last_written: Path | None = None
        """The file ``w`` wrote last."""
        self._divergent = sorted(diff.divergent_rows)
        self._pf: PairFields | None = None

    @property
    def diff(self) -> TraceDiff:
        """The diff whose row is shown."""
        return self._diff

    def replace_diff(self, diff: TraceDiff | None) -> None:
        """The pair was read whole: step through its divergences from now on (``diff``: its first rows
        are those of the diff shown), or close (None: the rows were laid out again)."""
        if diff is None:
            self.dismiss(None)
            return
        self._diff = diff
        self._divergent = sorted(diff.divergent_rows)

    def compose(self) -> ComposeResult:
        yield Static(id="pair-title", markup=False)
        yield PairBody(id="pair-body")
        yield PairStatus(id="pair-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self._show()
        self.query_one(PairBody).focus()

    def _show(self) -> None:
        pf = pair_fields(self._diff, self.row)
        self._pf = pf
        if self.side == "original" and pf.original is None or self.side == "replay" and pf.replay is None:
            self.side = "both"
        self.query_one("#pair-title", Static).update(self._title(pf))
        self.query_one(PairBody).show(pf)
        self._update_status()
        self.call_after_refresh(self._update_status)  # how much is left out is known once laid out

    def _update_status(self) -> None:
        body = self.query_one(PairBody)
        muted = self._style("muted")
        text = Text(no_wrap=True, overflow="ellipsis")
        n = len(body.differences)
        if body.current is not None and n:
            text.append(f"difference {body.current + 1} of {n}: ", Style(bold=True))
            text.append(visible(body.differences[body.current]), self._style("changed"))
        elif n:
            text.append(f"{n} difference{'s' if n != 1 else ''} highlighted ▌ (] next, [ previous)", muted)
        else:
            text.append("no differing paths to step through", muted)
        side = "both sides" if self.side == "both" else f"the {self.side}"
        text.append(f"  ·  c copies / w writes {side} (s changes)", muted)
        if body.hidden_lines:
            text.append(f"  ·  {body.hidden_lines:,} lines left out (a shows all)", muted)
        self.query_one(PairStatus).update(text)

    def action_close(self) -> None:
        """Back to the aligned view, its cursor on the row shown here."""
        self.dismiss(self.row)

    def action_first(self) -> None:
        """Show the first divergence (``TraceDiff.first``); bell when the traces agree."""
        first = self._diff.first
        if first is None:
            self.app.bell()
            return
        self._show_row(first.row)

    def _show_row(self, row: int) -> None:
        """Show ``row``'s pair; stay on the pair shown (and say why) when its file changed since it was read."""
        try:
            read_payloads(self._diff, row)
        except SourceChanged as exc:
            from tracetui.tui.notices import say_source_changed

            say_source_changed(self.app, exc)
            self.app.bell()
            return
        self.row = row
        self._show()

    def action_step(self, direction: int) -> None:
        """Show the next (1) or previous (-1) divergent row."""
        if direction > 0:
            i = bisect_right(self._divergent, self.row)
            target = self._divergent[i] if i < len(self._divergent) else None
        else:
            i = bisect_left(self._divergent, self.row)
            target = self._divergent[i - 1] if i > 0 else None
        if target is None:
            still = getattr(self.app, "still_reading", None)
            if direction > 0 and self._diff.partial and still is not None:
                still("Later divergences are shown")
                return
            self.app.bell()
            from tracetui.tui.notices import notify_replacing

            where = "below" if direction > 0 else "above"
            notify_replacing(self.app, f"no divergence {where} this row" if self._divergent else
                             "no divergence: the runs agree", title="divergences")
            return
        self._show_row(target)

    def action_difference(self, direction: int) -> None:
        """Scroll to the next (1) or previous (-1) differing path of this pair, wrapping; bell when there is none."""
        body = self.query_one(PairBody)
        n = len(body.differences)
        if not n:
            self.app.bell()
            return
        if body.current is None:
            index = 0 if direction > 0 else n - 1
        else:
            index = (body.current + direction) % n
        body.go_to(index)
        self._update_status()

    def action_cycle_side(self) -> None:
        """Switch what ``c``/``w`` take: both sides, then the original, then the replay (sides that exist)."""
        pf = self._pf
        have = {"both": True, "original": pf is not None and pf.original is not None,
                "replay": pf is not None and pf.replay is not None}
        i = SIDES.index(self.side)
        for step in range(1, len(SIDES) + 1):
            candidate = SIDES[(i + step) % len(SIDES)]
            if have[candidate]:
                self.side = candidate
                break
        self._update_status()

    def span_json(self) -> str:
        """The JSON ``c`` and ``w`` take (``tracetui.core.readers.export.span_json`` of the chosen side),
        redacted with the project key and rules (``tui.redacting``).

        Raises:
            TracetuiError: the project's redaction key or rules cannot be used."""
        from tracetui.tui.redacting import redacted_span

        pf = self._pf or pair_fields(self._diff, self.row)
        return span_json(redacted_span(pf.original), redacted_span(pf.replay), self.side)

    def action_copy_json(self) -> None:
        """Copy the span's JSON to the clipboard with OSC 52 (the terminal must allow it; ``w`` writes a file)."""
        payload = self._redacted_json("copy")
        if payload is None:
            return
        self.app.copy_to_clipboard(payload)
        side = "both spans" if self.side == "both" else f"the {self.side} span"
        self.notify(
            f"Copied {side} of row {self.row} as JSON ({len(payload):,} characters). "
            "If nothing was copied, your terminal ignores OSC 52: w writes it to a file.",
            title="copy",
        )

    def action_write_json(self) -> None:
        """Write the span's JSON to a fresh file in the current directory and say where."""
        payload = self._redacted_json("write")
        if payload is None:
            return
        stem = f"tracetui-row{self.row}-{self.side}"
        try:
            path = write_new_file(Path.cwd(), stem, payload.encode("utf-8", "surrogatepass") + b"\n")
        except OSError as exc:
            self.notify(f"Could not write the span's JSON in {Path.cwd()}: {exc.strerror or exc}",
                        title="write", severity="error")
            return
        self.last_written = path
        self.notify(f"Wrote {path}", title="write")

    def _redacted_json(self, title: str) -> str | None:
        from tracetui.core.errors import TracetuiError

        try:
            return self.span_json()
        except TracetuiError as exc:
            self.notify(f"Not redacted, so not written: {exc}", title=title, severity="error", markup=False)
            return None

    def action_show_all(self) -> None:
        """Draw long values whole (the lines left out so far)."""
        body = self.query_one(PairBody)
        if body.show_all or not body.hidden_lines:
            self.app.bell()
            return
        self.notify(f"Laying out {body.hidden_lines:,} more lines…", title="show all", timeout=2)
        body.set_show_all()
        if body.current is not None:
            body.go_to(body.current)  # lays out once, keeps the difference in view
        else:
            body.relayout()
        self._update_status()

    # -- rendering ----------------------------------------------------------

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"pair-screen--{name}")
        return Style(color=full.color, bold=full.bold)

    def _title(self, pf: PairFields) -> RenderableType:
        line = Text(no_wrap=True, overflow="ellipsis")
        muted = self._style("muted")
        line.append(f"row {pf.row}", Style(bold=True))
        if pf.divergence is not None:
            line.append(" · ", muted)
            line.append(pf.type_name, self._style("changed") + Style(bold=True))
            if pf.is_first:
                line.append(" · first divergence", Style(bold=True))
            line.append(f" — {DIVERGENCE_HELP.get(pf.type_name, '')}", muted)
        else:
            line.append(" · no divergence", muted)
        sides = []
        for side, span in (("original", pf.original), ("replay", pf.replay)):
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append(f"{side:<9} ", self._style("muted"))
            text.append_text(_span_line(span))
            sides.append(text)
        return Group(line, *sides)


def _span_line(span: Span | None) -> Text:
    if span is None:
        return Text("—")
    where = f"  (span {span.span_id}" + (f", line {span.line}" if span.line is not None else "") + ")"
    return Text(f"{span.kind.value} {span_label(span)}" + visible(where))
