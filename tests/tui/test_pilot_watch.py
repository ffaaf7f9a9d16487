"""Watch mode: the app follows a replay file while another writer appends to it."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Callable

from tracetui.core.harness.writer import TraceWriter
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.native import dumps_trace
from tracetui.tui.app import TraceTuiApp
from tracetui.tui.widgets.aligned_view import AlignedHeader, AlignedView
from tracetui.tui.widgets.status_bar import StatusBar


def _span(sid: str, parent: str | None, seq: int, name: str, args: dict | None = None) -> Span:
    if parent is None:
        return Span(sid, None, seq, SpanKind.AGENT, "invoke_agent bot", 1, 2, Status.OK, None, {"input": "x"})
    return Span(sid, parent, seq, SpanKind.TOOL, name, 1, 2, Status.OK, None,
                {"tool_name": name, "arguments": args or {}, "output": "ok"})


ORIGINAL = [_span("o0", None, 0, ""), *(_span(f"o{i}", "o0", i, f"tool{i}", {"i": i}) for i in range(1, 9))]
REPLAY = [_span("r0", None, 0, ""), *(_span(f"r{i}", "r0", i, f"tool{i}", {"i": i}) for i in range(1, 9)),
          _span("r9", "r0", 9, "extra")]


async def until(pilot, cond: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Let the app run until ``cond()`` holds (polling, with a deadline)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def _replay_ids(app: TraceTuiApp) -> list[str | None]:
    d = app.diff
    assert d is not None
    return [d.replay.spans[r.replay].span_id if r.replay is not None else None for r in d.rows]


def _write(fh, data: bytes) -> None:
    fh.write(data)
    fh.flush()


async def test_watch_grows_torn_line_cursor_follow(tmp_path: Path) -> None:
    op, rp = tmp_path / "original.jsonl", tmp_path / "replay.jsonl"
    op.write_bytes(dumps_trace({"run_id": "o", "code_version": "c1"}, ORIGINAL))
    lines = dumps_trace({"run_id": "r"}, REPLAY).splitlines(keepends=True)  # header, root, children, extra
    app = TraceTuiApp(op, rp, watch=True)
    async with app.run_test(size=(120, 36)) as pilot:
        bar = app.query_one(StatusBar)
        view = app.query_one(AlignedView)
        # No replay file yet: waiting, not an error.
        await until(pilot, lambda: "waiting for replay.jsonl" in bar.watch_text, "the waiting state")
        assert app.load_error is None
        # ... with the original's rows shown meanwhile (keys work on them), every replay side pending
        await until(pilot, lambda: app.diff is not None and view.row_count == 9, "the original's skeleton")
        assert not any(_replay_ids(app)) and not app.diff.divergences
        # no header yet: nothing to say about the run's inputs (every field would read "→ null")
        from tracetui.tui.widgets.notice_line import NoticeLine

        assert "run inputs changed" not in app.query_one(NoticeLine).notices
        with rp.open("wb") as fh:
            _write(fh, lines[0] + lines[1] + lines[2])  # header, root, first child
            await until(pilot, lambda: app.diff is not None and "r1" in _replay_ids(app), "the first spans")
            assert "watching replay.jsonl" in bar.watch_text and "2 new spans" in bar.watch_text
            # the replay column counts the spans written, not the placeholder of their parent
            assert app.query_one(AlignedHeader)._right.plain.endswith("  2 spans")
            assert len(app.diff.rows) == 9  # the original's skeleton: every original span has its row already
            view.cursor_row = 5
            # A torn write: half of the next line. No row for it until the rest arrives.
            _write(fh, lines[3][:25])
            await until(pilot, lambda: "being written" in bar.watch_text, "the torn-line notice")
            assert "r2" not in _replay_ids(app)
            _write(fh, lines[3][25:])
            await until(pilot, lambda: "r2" in _replay_ids(app), "the completed line")
            assert view.cursor_row == 5  # not following: the cursor stays where the user put it
            assert "3 new spans" in bar.watch_text
            # Follow: F puts the cursor on the newest span, and it moves with each new one.
            await pilot.press("F")
            assert app.following and view.cursor_row == _replay_ids(app).index("r2")
            for line in lines[4:]:
                _write(fh, line)
            await until(pilot, lambda: "r9" in _replay_ids(app), "the extra span")
            ids = _replay_ids(app)
            assert ids.index("r9") == len(ids) - 1  # the replay-only span is appended, never inserted
            await until(pilot, lambda: view.cursor_row == ids.index("r9"), "the cursor following")
            assert "10 new spans" in bar.watch_text and "following the end" in bar.watch_text
            # A line written twice (the same span id): skipped with a warning, not counted as a new span.
            _write(fh, lines[-1])
            await until(pilot, lambda: app.diff is not None and any("r9" in str(i) for i in app.diff.replay.issues),
                        "the duplicate's warning")
            assert "10 new spans" in bar.watch_text
            assert app.query_one(AlignedHeader)._right.plain.endswith("  10 spans")
            await pilot.press("F")
            assert not app.following


async def test_watch_writer_compaction_is_handled(tmp_path: Path) -> None:
    """Our writer: spans when they end (root last), header completed in place, then an atomic rename."""
    op, rp = tmp_path / "original.jsonl", tmp_path / "replay.jsonl"
    op.write_bytes(dumps_trace({"run_id": "o"}, ORIGINAL))
    w = TraceWriter(str(rp))
    w.header({"run_id": "r"})
    app = TraceTuiApp(op, rp, watch=True)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(AlignedView)
        bar = app.query_one(StatusBar)
        await until(pilot, lambda: app.diff is not None, "the first diff")
        for s in REPLAY[1:5]:
            w.span(s)
        await until(pilot, lambda: "r4" in _replay_ids(app), "children before their parent")
        assert _replay_ids(app)[1] == "r1"  # paired with the original's first child at once
        # the root is a placeholder until written: the replay column counts the 4 spans written, not 5
        assert app.diff.placeholder_rows and app.query_one(AlignedHeader)._right.plain.endswith("  4 spans")
        view.cursor_row = 3
        for s in REPLAY[5:]:
            w.span(s)
        w.span(REPLAY[0])
        w.complete_header({"run_id": "r", "redaction": {"rules": []}})
        await until(pilot, lambda: "r0" in _replay_ids(app), "the root")
        assert _replay_ids(app)[0] == "r0" and view.cursor_row == 3
        ino = os.stat(rp).st_ino
        w.close()  # compaction: a new inode replaces the file
        assert os.stat(rp).st_ino != ino
        await until(pilot, lambda: app.watch_state == "complete", "the stopped state")
        assert "stopped: replay complete" in bar.watch_text and not app.watching
        assert view.cursor_row == 3 and _replay_ids(app)[3] == "r3"  # same span, same row
        assert app.diff.replay.header["redaction"] == {"rules": []}
        assert [d.type.value for d in app.diff.divergences] == ["unrecorded_call"]
        await asyncio.sleep(0)


async def test_the_status_line_says_when_the_noise_config_is_malformed_and_that_watching_skips_the_rules(
        tmp_path: Path, monkeypatch) -> None:
    """Issue 18: a malformed noise config is said (not silently skipped); a watch says it does not
    apply the project's noise rules."""
    from tests.tui.helpers import sample_pair, wait_loaded, widget_text

    original, replay = sample_pair("scheduling")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui.toml").write_text('[[noise]]\nkind = 3\n')
    app = TraceTuiApp(original, replay)
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_loaded(pilot)
        text = widget_text(app.query_one(StatusBar), 400)
        assert "noise config not applied" in text and ".tracetui.toml" in text, text

    (tmp_path / ".tracetui.toml").write_text('ignore = ["tool.output"]\n')
    op, rp = tmp_path / "original.jsonl", tmp_path / "replay.jsonl"
    op.write_bytes(dumps_trace({"run_id": "o"}, ORIGINAL))
    rp.write_bytes(dumps_trace({"run_id": "r"}, REPLAY))
    app = TraceTuiApp(op, rp, watch=True)
    async with app.run_test(size=(200, 30)) as pilot:
        bar = app.query_one(StatusBar)
        await until(pilot, lambda: "watching replay.jsonl" in bar.watch_text, "the watch")
        assert "noise rules not applied while watching" in bar.watch_text
        app.stop_watch()
