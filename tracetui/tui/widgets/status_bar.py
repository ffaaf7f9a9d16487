"""StatusBar: one line of facts about the pair: files, span counts, divergences, load warnings; in watch
mode, first, whether the replay is being followed and how many spans arrived."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from tracetui.tui.formatting import visible

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff

SEP = "  │  "


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def issues_summary(diff: TraceDiff) -> str:
    """``3 lines skipped, 1 warning`` for both traces' read issues, or empty when there are none."""
    issues = [*diff.original.issues, *diff.replay.issues]
    skipped = sum(1 for i in issues if i.severity == "skipped")
    warned = len(issues) - skipped
    parts = []
    if skipped:
        parts.append(f"{skipped:,} line{'' if skipped == 1 else 's'} skipped")
    if warned:
        parts.append(_plural(warned, "warning"))
    return ", ".join(parts)


def issues_summary_one(trace: object) -> str:
    """``issues_summary`` of one trace."""
    issues = list(getattr(trace, "issues", ()))
    skipped = sum(1 for i in issues if i.severity == "skipped")
    parts = [f"{skipped:,} line{'' if skipped == 1 else 's'} skipped"] if skipped else []
    if len(issues) - skipped:
        parts.append(_plural(len(issues) - skipped, "warning"))
    return ", ".join(parts)


class StatusBar(Static):
    """The status line under the aligned view (``Text`` only, never markup)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "status-bar--file",
        "status-bar--divergent",
        "status-bar--clean",
        "status-bar--warning",
        "status-bar--muted",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._diff: TraceDiff | None = None
        self._row = 0
        self._base: Text = Text()
        self._watch: Text | None = None
        self._filter = ""
        self.filter_text = ""
        """What the view's filters and folds hide (``AlignedView.filter_summary``), empty when nothing is."""
        self.watch_text = ""
        """The watch-mode part of the line as plain text (empty outside watch mode)."""
        self.watch_note = ""
        """Said while following a replay: ``noise rules not applied while watching`` when the
        project declares some (the watched diff grows span by span; the rules apply to the pair
        opened without ``--watch``), or that the noise config is malformed."""
        self.single = False
        """One trace alone (``tracetui FILE``): the line names it and its spans, no divergence count."""

    def _style(self, name: str) -> Style:
        full = self.get_component_rich_style(f"status-bar--{name}")
        return Style(color=full.color, bold=full.bold, italic=full.italic)

    _progress = 0.0

    def set_progress(self, fraction: float) -> None:
        """How much of the original the load worker has read (0..1): shown while the first rows of a big
        pair are (``TraceDiff.partial``)."""
        self._progress = fraction
        if self._diff is not None and self._diff.partial:
            self.show_diff(self._diff)

    def show_loading(self, original: str, replay: str) -> None:
        """Loading state: names both files."""
        self._diff = None
        self._progress = 0.0
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("loading ", self._style("muted"))
        text.append(visible(os.path.basename(original)), self._style("file"))
        text.append(" and ", self._style("muted"))
        text.append(visible(os.path.basename(replay)), self._style("file"))
        text.append("…", self._style("muted"))
        self.update(text, layout=False)  # one line, always: no layout pass per cursor move

    def show_error(self, message: str) -> None:
        """Error state (the error panel carries the details)."""
        self._diff = None
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("load failed", self._style("divergent"))
        text.append(SEP + visible(message), self._style("muted"))
        self.update(text, layout=False)  # one line, always: no layout pass per cursor move

    def set_watch(self, state: str, replay: str, arrived: int, *, following: bool, torn: bool = False,
                  reason: str = "") -> None:
        """Watch mode: put the watch state at the start of the line.

        Args:
            state: ``waiting`` (no replay file yet, or empty), ``following`` (read as it grows),
                ``complete`` (the writer compacted the file: the run ended, the watch stopped) or
                ``stopped`` (the watch ended otherwise).
            replay: The replay file.
            arrived: Spans read since the watch began.
            following: The cursor follows each new span (``F``).
            torn: A last line is still being written (held back, not shown).
            reason: Why the watch stopped, when not because the run completed.
        """
        name = visible(os.path.basename(replay))
        text = Text(no_wrap=True, overflow="ellipsis")
        if state == "waiting":
            text.append(f"waiting for {name}…", self._style("warning"))
        elif state == "following":
            text.append(f"watching {name}", self._style("clean"))
            text.append(f" · {_plural(arrived, 'new span')}", self._style("muted"))
            if torn:
                text.append(" · a line is being written", self._style("muted"))
            text.append(" · following the end (F stops)" if following else " · F follows the end", self._style("muted"))
            if self.watch_note:
                text.append(f" · {visible(self.watch_note)}", self._style("warning"))
        else:
            done = "stopped: replay complete" if state == "complete" else "stopped watching"
            text.append(f"{done} ({name})", self._style("warning"))
            text.append(f" · {_plural(arrived, 'new span')}", self._style("muted"))
            if reason:
                text.append(f" · {visible(reason)}", self._style("muted"))
        self._watch = text
        self.watch_text = text.plain
        if self._diff is not None:
            self.show_diff(self._diff)
        else:
            self.update(text, layout=False)

    def set_filter(self, summary: str) -> None:
        """Say what the view's filters and folds hide (``showing 1,203 of 100,003 rows: tool; divergent only``),
        or nothing (empty ``summary``): shown after the divergence count."""
        self._filter = self.filter_text = summary
        if self._diff is not None:
            self.show_diff(self._diff)

    def show_diff(self, diff: TraceDiff) -> None:
        """Summary of a loaded pair; the cursor position is added by ``show_row``."""
        self._diff = diff
        muted = self._style("muted")
        text = Text(no_wrap=True, overflow="ellipsis")
        if self._watch is not None:
            text.append_text(self._watch)
            text.append(SEP, muted)
        # Most important first: a narrow terminal cuts the end of the line.
        count = len(diff.divergences)
        if self.single:
            trace = diff.original
            name = visible(os.path.basename(trace.path))
            if len(trace.trace_ids) > 1 and trace.trace_id is not None:
                name += f"#{visible(trace.trace_id)}"
            text.append(name, self._style("file"))
            text.append(f" {_plural(len(trace.spans), 'span')}", muted)
            errors = sum(1 for sp in trace.spans if sp.status.value == "error")
            if errors:
                text.append(f" · {_plural(errors, 'error')}", self._style("warning"))
            if self._filter:
                text.append(SEP, muted)
                text.append(visible(self._filter), self._style("warning"))
            notice = issues_summary(diff)
            if notice:  # one trace read twice: its issues are counted once
                text.append(SEP, muted)
                text.append(f"⚠ {issues_summary_one(trace)} — press w", self._style("warning"))
            self._base = text
            self.show_row(self._row)
            return
        if diff.partial and diff.first is not None:  # core.early: the first rows, the rest still being read
            first = diff.first
            text.append(f"first divergence: row {first.row} {first.type.value}", self._style("divergent"))
            text.append(SEP, muted)
            done = self._progress
            text.append("reading the rest of the pair…" + (f" {done:.0%}" if done > 0 else ""), self._style("warning"))
        elif count:
            text.append(_plural(count, "divergence"), self._style("divergent"))
            first = diff.first
            if first is not None:
                text.append(f" · first: row {first.row} {first.type.value}", self._style("divergent"))
        else:
            text.append("no divergence", self._style("clean"))
        ignored = getattr(diff, "ignored_by_config", 0)
        if ignored:
            text.append(SEP, muted)
            text.append(f"{_plural(ignored, 'field')} ignored by config", self._style("warning"))
        unchecked = sum(u.pairs for u in getattr(diff, "not_comparable", ()))
        if unchecked:  # the formats record them differently (core.diff.comparable): said, not hidden
            text.append(SEP, muted)
            text.append(f"{_plural(unchecked, 'field')} not comparable", self._style("warning"))
        noise_error = getattr(diff, "noise_error", None)
        if noise_error:
            text.append(SEP, muted)
            text.append(f"⚠ noise config not applied: {visible(noise_error)}", self._style("warning"))
        if self._filter:
            text.append(SEP, muted)
            text.append(visible(self._filter), self._style("warning"))
        notice = issues_summary(diff)
        if notice:
            text.append(SEP, muted)
            text.append(f"⚠ {notice} — press w", self._style("warning"))
        text.append(SEP, muted)
        for n, trace in enumerate((diff.original, diff.replay)):
            if n:
                text.append(" ⟷ ", muted)
            name = visible(os.path.basename(trace.path))
            if len(trace.trace_ids) > 1 and trace.trace_id is not None:  # two trials of one file differ only here
                name += f"#{visible(trace.trace_id)}"
            text.append(name, self._style("file"))
            if not diff.partial:  # (the spans read so far are not the trace's)
                text.append(f" {_plural(len(trace.spans), 'span')}", muted)
        self._base = text
        self.show_row(self._row)

    def show_row(self, row: int) -> None:
        """Add the cursor position to the summary: ``row 12 of 340``.

        ``row`` is 0-based, like the numbers in the aligned view and in
        ``tracetui diff``; the count after ``of`` is the number of rows. Nothing
        is added when there are no rows.
        """
        self._row = row
        if self._diff is None:
            return
        text = self._base.copy()
        count = len(self._diff.rows)
        if count:
            text.append(SEP, self._style("muted"))
            text.append(f"row {row:,} of the first {count:,}" if self._diff.partial else f"row {row:,} of {count:,}",
                        self._style("muted"))
        self.update(text, layout=False)  # one line, always: no layout pass per cursor move
