"""SpanDetail: the highlighted pair's fields side by side (original | replay), differences marked.

A ``TextLines`` view: the lines are laid out once per row change (or resize), a
few milliseconds, where a Rich ``Table`` took tens per cursor move. Values are compact one-line JSON wrapped to at most
``VALUE_LINES`` lines; a changed value is shown from just before its first
difference. ``enter`` opens the full pair. Everything drawn is ``Text``, never
markup.

Line layout::

    row 2 · args_mismatch · first divergence — same call, different arguments
    label ✗ new_regression · “the date moved a day” · 2026-11-12T17:03:11Z · l: change or remove
      field              original: tool check(...)     │ replay: tool check(...)
    ~ tool.arguments     {"date":"2026-11-06"}         │ {"date":"2026-11-07"}
      not compared
      span_id            "s2"                          │ "s2"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text

from tracetui.core.errors import SourceChanged
from tracetui.tui.formatting import (
    ABSENT_TEXT,
    ELLIPSIS,
    format_duration,
    one_line,
    path_lines,
    span_label,
    visible,
)
from tracetui.tui.pair_fields import ABSENT, DIVERGENCE_HELP, FieldRow, PairFields, pair_fields
from tracetui.tui.widgets.aligned_layout import LABEL_MARKS, UNKNOWN_LABEL_MARK
from tracetui.tui.widgets.text_lines import Line, TextLines, fold, side_by_side

if TYPE_CHECKING:
    from tracetui.core.diff import TraceDiff
    from tracetui.core.diff.labels import Label
    from tracetui.core.model import Span

VALUE_LINES = 2
"""Lines a value (or a field path) may take in the pane; the pair screen shows it whole."""

CONTEXT = 16
"""Characters kept before the first difference when a changed value is shown from there."""

SEPARATOR = " │ "


class SpanDetail(TextLines, can_focus=False):
    """Field-by-field comparison of one aligned row.

    Not focusable, so the aligned view keeps every key; the mouse wheel scrolls it.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "span-detail--title",
        "span-detail--changed",
        "span-detail--extra",
        "span-detail--missing",
        "span-detail--muted",
        "span-detail--section",
        "span-detail--label",
        "span-detail--match",
    }

    DEFAULT_CSS = """
    SpanDetail > .span-detail--match { background: $accent 55%; color: $text; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._diff: TraceDiff | None = None
        self._pair: PairFields | None = None
        self._message: Text | None = None
        self._labels: dict[int, Label] = {}
        self._by_id: dict[tuple[int, str], dict[str, Any]] = {}
        self._highlight = ""
        self.single = False
        """One trace alone (``tracetui FILE``): the span's fields in one column, nothing compared."""

    @property
    def highlight(self) -> str:
        """The search term highlighted in the fields shown ("" when none)."""
        return self._highlight

    def set_highlight(self, term: str) -> None:
        """Highlight ``term`` (any case) wherever the pane shows it: field names, values, titles, breadcrumb;
        "" clears."""
        if term != self._highlight:
            self._highlight = term
            self.invalidate()

    def _mark(self, text: Text) -> Text:
        """``text`` with the search term highlighted (in place), when one is set."""
        if self._highlight:
            text.highlight_words([self._highlight], self.get_component_rich_style("span-detail--match"),
                                 case_sensitive=False)
        return text

    @property
    def labels(self) -> dict[int, Label]:
        """Reviewer labels by row (rows with a label only)."""
        return self._labels

    def set_labels(self, labels: dict[int, Label]) -> None:
        """Reviewer labels by aligned row; the label of the row shown appears under its title."""
        self._labels = dict(labels)
        self.invalidate()

    @property
    def pair(self) -> PairFields | None:
        """The fields shown, or None while a message is shown."""
        return self._pair

    def show_row(self, diff: TraceDiff, row: int) -> None:
        """Show aligned row ``row`` of ``diff``."""
        if self._pair is not None and self._pair.row == row and self._diff is diff:
            return
        self._diff = diff
        try:
            self._pair = pair_fields(diff, row)
        except SourceChanged as exc:  # a payload read on demand is gone (the file changed since it was read)
            from tracetui.tui.notices import STALE_LABEL, say_source_changed

            say_source_changed(self.app, exc)
            self._pair = None
            self.show_message(Text(f"row {row} · {STALE_LABEL}: {visible(str(exc))}", style="bold"))
            return
        self._message = None
        self.invalidate()
        self.scroll_to(y=0, animate=False, immediate=True)

    def _breadcrumb(self, row: int) -> list[str]:
        """Span names from the root down to ``row``'s span (original side, else replay side), with a
        span-id map built once per pair (the cursor moves often; a trace can hold 1M spans)."""
        diff = self._diff
        if diff is None or not 0 <= row < len(diff.rows):
            return []
        aligned = diff.rows[row]
        side, index = ("original", aligned.original) if aligned.original is not None else ("replay", aligned.replay)
        if index is None:
            return []
        trace = diff.original if side == "original" else diff.replay
        key = (id(diff), side)
        by_id = self._by_id.get(key)
        if by_id is None:
            self._by_id = {k: v for k, v in self._by_id.items() if k[0] == id(diff)}  # drop older pairs
            by_id = self._by_id[key] = {sp.span_id: sp for sp in trace.spans}
        span = trace.spans[index]
        names: list[str] = []
        seen: set[str] = set()
        while span is not None and span.span_id not in seen and len(names) < 64:
            seen.add(span.span_id)
            names.append(span.name)
            span = by_id.get(span.parent_id) if span.parent_id is not None else None
        return names[::-1]

    def show_message(self, text: Text) -> None:
        """Show a plain message instead of a pair (loading, empty traces)."""
        self._pair = None
        self._message = text
        self.invalidate()

    def layout(self, width: int) -> list[Line]:
        if self._pair is not None:
            return self._layout(self._pair, width)
        return [self._message] if self._message is not None else []

    def _style(self, name: str) -> Style:
        return self.foreground(f"span-detail--{name}")

    def _layout_single(self, pf: PairFields, width: int) -> list[Line]:
        """One trace alone: the row's span, its breadcrumb and its fields in one value column."""
        muted = self._style("muted")
        span = pf.original or pf.replay
        title = Text()
        title.append(f"row {pf.row}", self._style("title"))
        if span is not None:
            title.append(f" · {span.kind.value} ", muted)
            title.append(visible(span_label(span)))
        lines: list[Line] = fold(title, width, max_lines=1)
        lines += self._crumb_lines(pf.row, width, muted)
        field_w = max(12, min(28, width // 4))
        value_w = max(8, width - 2 - field_w - 1)
        limit = VALUE_LINES * value_w
        rows = [(fr, Style()) for fr in pf.semantic] + [(fr, muted) for fr in pf.volatile]
        for n, (fr, style) in enumerate(rows):
            if n == len(pf.semantic) and pf.volatile:
                lines.append(Text("  ids, times, token counts", self._style("section")))
            value = fr.original if fr.original is not ABSENT else fr.replay
            name = [Text(part, style) for part in path_lines(visible(fr.path), field_w, VALUE_LINES)]
            lines += side_by_side(
                [([Text("  ")], 2), ([self._mark(t) for t in name], field_w),
                 (fold(self._mark(_value(value, fr.path, muted, style, limit)), value_w, VALUE_LINES), value_w)],
                [Text(), Text(" "), Text()],
            )
        return lines

    def _crumb_lines(self, row: int, width: int, muted: Style) -> list[Line]:
        """Where the span of ``row`` sits: its ancestors, root first (at most two lines; none for a root)."""
        crumbs = self._breadcrumb(row)
        if len(crumbs) <= 1:
            return []
        path = Text("  ")
        for i, name in enumerate(crumbs):
            if i:
                path.append(" › ", muted)
            path.append(visible(name), muted if i < len(crumbs) - 1 else Style())
        return fold(self._mark(path), width, max_lines=2)

    def _layout(self, pf: PairFields, width: int) -> list[Line]:
        """Every line of the pane for ``pf`` at ``width`` cells."""
        if self.single:
            return self._layout_single(pf, width)
        muted = self._style("muted")
        accent = self._style(pf.category) if pf.category != "equal" else Style()
        title = Text()
        title.append(f"row {pf.row}", self._style("title"))
        if pf.divergence is not None:
            title.append(" · ", muted)
            title.append(pf.type_name, accent + Style(bold=True))
            if pf.is_first:
                title.append(" · first divergence", self._style("title"))
            title.append(f" — {DIVERGENCE_HELP.get(pf.type_name, '')}", muted)
        else:
            title.append(" · no divergence", muted)

        field_w = max(12, min(28, width // 4))
        value_w = max(8, (width - 2 - field_w - 1 - len(SEPARATOR)) // 2)
        lines: list[Line] = [title]
        lines += self._crumb_lines(pf.row, width, muted)
        label = self._labels.get(pf.row)
        if label is not None:
            lines += fold(_label_line(label, self._style("label"), muted), width, max_lines=VALUE_LINES)
        lines += self._row(" ", Text("field", muted), _side_title("original", pf.original, muted),
                           _side_title("replay", pf.replay, muted), field_w, value_w, wrap=False)

        changed = self._style("changed")
        for fr in pf.changes:
            lines += self._field(fr, "Δ", changed, field_w, value_w)
        deeper = [c.path for c in pf.changes]
        for fr in sorted(pf.semantic, key=lambda r: not r.changed):  # differences first: the pane is short
            # When Δ rows already pinpoint changes inside this field, show it from its start: its first
            # raw difference may be a volatile id the comparison ignores.
            window = fr.changed and not any(p.startswith((fr.path + ".", fr.path + "[")) for p in deeper)
            # A one-sided row's fields take its colour (green: replay only, red: original only).
            plain = accent if pf.category in ("extra", "missing") else Style()
            mark, style = ("~", changed) if fr.changed else (" ", plain)
            lines += self._field(fr, mark, style, field_w, value_w, window=window)
        if pf.volatile:
            lines.append(Text("  not compared", self._style("section")))
            for fr in pf.volatile:
                lines += self._field(fr, " ", muted, field_w, value_w)
        return lines

    def _field(
        self, fr: FieldRow, mark: str, style: Style, field_w: int, value_w: int, *, window: bool = True
    ) -> list[Line]:
        muted = self._style("muted")
        limit = VALUE_LINES * value_w
        if window and fr.changed and fr.original is not ABSENT and fr.replay is not ABSENT:
            left, right = _changed_values(fr.original, fr.replay, limit, style)
        else:
            left = _value(fr.original, fr.path, muted, style, limit)
            right = _value(fr.replay, fr.path, muted, style, limit)
        # A field path breaks only at its separators, or is shortened from the left (the pair screen shows it whole).
        name = [Text(part, style) for part in path_lines(visible(fr.path), field_w, VALUE_LINES)]
        return self._row(mark, name, left, right, field_w, value_w, mark_style=style)

    def _row(
        self, mark: str, name: Text | list[Text], left: Text, right: Text, field_w: int, value_w: int,
        *, wrap: bool = True, mark_style: Style | None = None,
    ) -> list[Line]:
        """One field as terminal lines: the cells folded side by side, at most ``VALUE_LINES`` tall; ``name``
        is a text to fold, or its lines already laid out (a field path: ``path_lines``)."""
        height = VALUE_LINES if wrap else 1
        marks = [Text(mark + " ", (mark_style or Style()) + Style(bold=True))]
        names = [self._mark(n) for n in name] if isinstance(name, list) else fold(self._mark(name), field_w, height)
        left, right = self._mark(left), self._mark(right)
        return side_by_side(
            [(marks, 2), (names, field_w), (fold(left, value_w, height), value_w),
             (fold(right, value_w, height), value_w)],
            [Text(), Text(" "), Text(SEPARATOR, self._style("muted")), Text()],
        )


def _label_line(label: Label, style: Style, muted: Style) -> Text:
    """``label ✗ new_regression · “note” · created · l: change or remove``."""
    mark = LABEL_MARKS.get(label.label, UNKNOWN_LABEL_MARK)[0]
    text = Text()
    text.append("label ", muted)
    text.append(f"{mark} {visible(label.label)}", style + Style(bold=True))
    if label.note:
        text.append(" · ", muted)
        text.append(f"“{visible(' '.join(label.note.split()))}”", style)
    if label.created:
        text.append(f" · {visible(label.created)}", muted)
    text.append(" · l: change or remove", muted)
    return text


def _side_title(side: str, span: Span | None, style: Style) -> Text:
    if span is None:
        return Text(f"{side}: —", style)
    return Text(f"{side}: {span.kind.value} {span_label(span)}", style)


def _value(value: Any, path: str, muted: Style, style: Style, limit: int) -> Text:
    if value is ABSENT:  # no such field on this side; a recorded null shows as ``null``
        return Text(ABSENT_TEXT, muted)
    if path == "duration_ns" and isinstance(value, int):
        return Text(format_duration(value), style)
    return Text(one_line(value, limit), style)


def _changed_values(a: Any, b: Any, limit: int, style: Style) -> tuple[Text, Text]:
    """Both sides of a changed field, shown from just before their first difference.

    A long prompt that differs in its last sentence would otherwise show two
    identical-looking prefixes; here both start ``CONTEXT`` characters before
    the first differing character, and the differing tail is bold. Each side
    is at most ``limit`` characters, and ends with ``…`` when it was cut
    (as unchanged values do).
    """
    sa, sb = one_line(a, 20 * limit), one_line(b, 20 * limit)
    same = 0
    for ca, cb in zip(sa, sb, strict=False):
        if ca != cb:
            break
        same += 1
    start = same - CONTEXT if same > CONTEXT + 8 else 0
    out = []
    for s in (sa, sb):
        text = Text(style=style)
        if start:
            text.append(ELLIPSIS)
        text.append(s[start:same])
        room = max(1, limit - len(text))
        tail = s[same:]
        if len(tail) > room:
            tail = tail[: room - 1] + ELLIPSIS
        text.append(tail, Style(bold=True))
        out.append(text)
    return out[0], out[1]
