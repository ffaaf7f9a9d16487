"""A 100k-row diff opens in the Line-API view: all rows counted, cursor on the far divergence, only a page rendered."""

from __future__ import annotations

from typing import Iterator, Sequence

from tests.tui.helpers import DATA, wait_loaded
from tracetui.core.diff import AlignedRow, Divergence, DivergenceType, FieldChange, TraceDiff
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.tui import TraceTuiApp
from tracetui.tui.messages import PairLoaded
from tracetui.tui.widgets.aligned_view import AlignedView

ROWS = 100_000
FIRST = 90_000


class LazySpans(Sequence[Span]):
    """100k tool spans made on access, so the test measures the view, not span construction."""

    def __init__(self, n: int, side: str) -> None:
        self.n, self.side = n, side

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if not 0 <= i < self.n:
            raise IndexError(i)
        changed = self.side == "replay" and i in (FIRST, FIRST + 5)
        return Span(f"{self.side[0]}{i}", None, i, SpanKind.TOOL, "execute_tool lookup",
                    data={"tool_name": "lookup", "arguments": {"i": i, "v": "new" if changed else "old"}})

    def __iter__(self) -> Iterator[Span]:
        return (self[i] for i in range(self.n))


def big_diff() -> TraceDiff:
    o_spans, r_spans = LazySpans(ROWS, "original"), LazySpans(ROWS, "replay")
    original = Trace(spans=o_spans, path="big-original.jsonl", format="tracetui")  # type: ignore[arg-type]
    replay = Trace(spans=r_spans, path="big-replay.jsonl", format="tracetui")  # type: ignore[arg-type]
    rows = [AlignedRow(i, i, 0) for i in range(ROWS)]
    row_divergence: list[Divergence | None] = [None] * ROWS
    divergences = []
    for n, row in enumerate((FIRST, FIRST + 5)):
        d = Divergence(DivergenceType.ARGS_MISMATCH, row, original.spans[row], replay.spans[row],
                       (FieldChange("tool.arguments.v", "old", "new"),), order=n)
        row_divergence[row] = d
        divergences.append(d)
    return TraceDiff(original, replay, rows, row_divergence, divergences, [FIRST, FIRST + 5])


async def test_100k_rows_open_on_far_first_divergence() -> None:
    """100k rows: the view counts them all, opens on row 90,000 (on screen), n/k/end/p move, a page is rendered."""
    diff = big_diff()
    app = TraceTuiApp(DATA / "original.jsonl", DATA / "replay.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        app.post_message(PairLoaded(diff, generation=app._load_generation))
        await pilot.pause()
        await pilot.pause()
        assert view.row_count == ROWS
        assert view.cursor_row == FIRST
        top = int(view.scroll_offset.y)
        assert top <= FIRST < top + view.scrollable_content_region.height
        line = "".join(s.text for s in view.render_line(FIRST - top))
        assert line.lstrip().startswith(f"{FIRST}▶~") and "args_mismatch" in line  # ▶: the first divergence
        assert view.cached_lines < 200  # rendered a screenful, not 100k rows
        await pilot.press("n")
        assert view.cursor_row == FIRST + 5
        await pilot.press("k", "end")
        assert view.cursor_row == ROWS - 1
        await pilot.press("p")
        assert view.cursor_row == FIRST + 5
