"""Pilot tests of reviewer labels in the TUI (issue 5, "Reviewer labels"): `l` on a divergent row opens the label
dialog; the label and note go to the sidecar next to the replay (never the original); the row shows a mark and the
detail pane the label and note; `l` again changes or removes it; a damaged sidecar is a warning, not a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.tui.helpers import sample_pair, wait_loaded
from tracetui.core.diff.labels import Label, divergence_key, load_labels, save_label, sidecar_path
from tracetui.tui import TraceTuiApp
from tracetui.tui.screens.label_dialog import LabelDialog
from tracetui.tui.widgets.aligned_view import LABEL_MARKS, AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    """The scheduling pair copied to tmp_path (the sidecar is written next to the replay)."""
    original, replay = sample_pair("scheduling")
    shutil.copy(original, tmp_path / "original.jsonl")
    shutil.copy(replay, tmp_path / "replay.jsonl")
    return str(tmp_path / "original.jsonl"), str(tmp_path / "replay.jsonl")


def _row_text(view: AlignedView, row: int) -> str:
    """The plain text the view draws for ``row`` (which must be on screen)."""
    return view.render_line(row - int(view.scroll_offset.y)).text


async def test_label_a_divergence(pair: tuple[str, str], tmp_path: Path) -> None:
    """l on the first divergence, pick new_regression, type a note, enter: the sidecar next to the replay holds
    the label under the divergence's key, the original is untouched, the row shows ✗ and the pane the note."""
    before = Path(pair[0]).read_bytes()
    app = TraceTuiApp(*pair)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.cursor_row == 2 and " " == _row_text(view, 2)[5]  # no label mark yet
        await pilot.press("l")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, LabelDialog) and dialog.row == 2 and dialog.current is None
        await pilot.press("down", "enter")  # acceptable_alternative -> new_regression, taken; focus moves to the note
        await pilot.pause()
        assert dialog.chosen == "new_regression"
        await pilot.press(*"v8 asks Friday")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, LabelDialog)

        first = app.diff.first  # type: ignore[union-attr]
        assert first is not None
        saved = load_labels(pair[1])
        assert list(saved) == [divergence_key(first)]
        label = saved[divergence_key(first)]
        assert (label.label, label.note, label.type) == ("new_regression", "v8 asks Friday", "input_mismatch")
        assert label.original_span_id == first.original.span_id  # type: ignore[union-attr]
        assert Path(sidecar_path(pair[1])).parent == tmp_path
        assert Path(pair[0]).read_bytes() == before  # never written into the original
        assert not Path(sidecar_path(pair[0])).exists()

        assert view.row_labels == {2: "new_regression"}
        assert _row_text(view, 2)[5] == LABEL_MARKS["new_regression"][0]
        detail = app.query_one(SpanDetail).text
        assert "label ✗ new_regression" in detail and "v8 asks Friday" in detail
        await pilot.press("n")  # another row: its pane has no label line
        assert "label ✗" not in app.query_one(SpanDetail).text


async def test_labels_load_at_start_and_l_changes_or_removes(pair: tuple[str, str]) -> None:
    """A label saved before opening is shown at once; l on its row opens the dialog on it, another pick replaces it,
    ctrl+r removes it (the sidecar goes with its last label)."""
    from tracetui.core.diff import diff_traces
    from tracetui.core.readers import read_trace

    diff = diff_traces(read_trace(pair[0]), read_trace(pair[1]))
    target = diff.divergences[1]  # not the first: the cursor must be moved there
    key = divergence_key(target)
    save_label(pair[1], Label(key, "fixture_mismatch", "seeded", "2026-11-12T17:03:11Z", target.type.value,
                              target.original.span_id if target.original else None,
                              target.replay.span_id if target.replay else None))
    app = TraceTuiApp(*pair)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(AlignedView)
        assert view.row_labels == {target.row: "fixture_mismatch"}
        view.cursor_row = target.row
        await pilot.pause()
        assert "label ◆ fixture_mismatch · “seeded”" in app.query_one(SpanDetail).text

        await pilot.press("l")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, LabelDialog) and dialog.current is not None
        assert dialog.chosen == "fixture_mismatch"
        await pilot.press("down", "enter")  # fixture_mismatch -> insufficient_spec
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert load_labels(pair[1])[key].label == "insufficient_spec"
        assert load_labels(pair[1])[key].note == "seeded"  # the note was kept
        assert view.row_labels == {target.row: "insufficient_spec"}

        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LabelDialog)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not isinstance(app.screen, LabelDialog)
        assert load_labels(pair[1]) == {}
        assert not Path(sidecar_path(pair[1])).exists()
        assert view.row_labels == {}
        assert "label " not in app.query_one(SpanDetail).text.splitlines()[1]


async def test_escape_cancels_and_l_needs_a_divergence(pair: tuple[str, str]) -> None:
    """escape closes the dialog without writing anything; l on a row without a divergence opens nothing and says why."""
    app = TraceTuiApp(*pair)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LabelDialog)
        await pilot.press("down", "enter", "x", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, LabelDialog)
        assert not Path(sidecar_path(pair[1])).exists()

        view = app.query_one(AlignedView)
        view.cursor_row = 1  # route_intent: equal on both sides
        assert app.diff.row_divergence[1] is None  # type: ignore[union-attr]
        await pilot.press("l")
        await pilot.pause()
        assert not isinstance(app.screen, LabelDialog)
        assert any("labels apply to divergences" in n.message for n in app._notifications)


async def test_save_without_a_pick_asks_for_one(pair: tuple[str, str]) -> None:
    """ctrl+s before any label is picked keeps the dialog open with a message; nothing is written."""
    app = TraceTuiApp(*pair)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("l", "ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, LabelDialog)
        assert "pick a label first" in str(app.screen.query_one("#label-error").content)
        assert not Path(sidecar_path(pair[1])).exists()


async def test_damaged_sidecar_is_a_warning(pair: tuple[str, str]) -> None:
    """A sidecar that is not JSON: the pair still opens on its first divergence, a warning names the file, and l
    refuses to write over it (the file is left as it was)."""
    side = Path(sidecar_path(pair[1]))
    side.write_text("{not json", encoding="utf-8")
    app = TraceTuiApp(*pair)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.diff is not None and app.query_one(AlignedView).cursor_row == 2
        assert app.labels == {} and app.labels_error is not None and side.name in app.labels_error
        from tracetui.tui.widgets.notice_line import NoticeLine

        message, severity = app.query_one(NoticeLine).notices["reviewer labels not loaded"]
        assert severity == "warning" and side.name in message
        await pilot.press("l")
        await pilot.pause()
        assert not isinstance(app.screen, LabelDialog)
        assert any(n.severity == "error" and n.title == "labels file damaged" for n in app._notifications)
    assert side.read_text(encoding="utf-8") == "{not json"


async def test_a_run_of_a_multi_run_replay_is_labelled_under_file_hash_run(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay file holding several runs (a K-trial replay), opened as FILE#RUN: the label is saved in FILE's
    sidecar for that run only (``labels.replay_ref``), so the same file opened on another run shows no label."""
    from tests.tui.helpers import SAMPLE_RUNS
    from tracetui.core.harness import Redactor, load_agent, replay
    from tracetui.core.readers import read_runs, read_trace

    original, _ = sample_pair("scheduling")
    shutil.copy(original, tmp_path / "original.jsonl")
    spec = load_agent(f"{SAMPLE_RUNS / 'scheduling' / 'agent.py'}:run_fixed")
    replay(read_trace(str(tmp_path / "original.jsonl")), spec, str(tmp_path / "trials.jsonl"),
           redactor=Redactor(b"0123456789abcdef0123456789abcdef"), llm="live", trials=2)
    runs = read_runs(str(tmp_path / "trials.jsonl")).runs
    first_ref = f"{tmp_path / 'trials.jsonl'}#{runs[0].trace_id}"
    app = TraceTuiApp(tmp_path / "original.jsonl", first_ref)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.label_ref == first_ref
        await pilot.press("l", "enter", "enter")  # acceptable_alternative, no note
        await pilot.pause()
        assert [v.label for v in load_labels(first_ref).values()] == ["acceptable_alternative"]
        assert load_labels(str(tmp_path / "trials.jsonl")) == {}
        assert load_labels(f"{tmp_path / 'trials.jsonl'}#{runs[1].trace_id}") == {}
