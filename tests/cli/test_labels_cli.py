"""Reviewer labels in `tracetui diff`: text and JSON, a damaged sidecar, stale labels, FILE#RUN."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import orjson
import pytest

from tracetui.cli.main import main
from tracetui.core.diff import diff_traces
from tracetui.core.diff.labels import (
    Label,
    divergence_key,
    load_labels,
    replay_ref,
    save_label,
    sidecar_path,
)
from tracetui.core.readers import read_replay, read_trace

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    for side in ("original", "replay"):
        shutil.copy(SAMPLES / "scheduling" / f"{side}.jsonl", tmp_path / f"{side}.jsonl")
    return str(tmp_path / "original.jsonl"), str(tmp_path / "replay.jsonl")


def _label(original: str, replay: str, index: int, label: str, note: str = "", *, ref: str | None = None) -> Label:
    r = read_replay(replay)
    d = diff_traces(read_trace(original), r).divergences[index]
    lab = Label(divergence_key(d), label, note, "2026-11-12T17:03:11Z", d.type.value,
                d.original.span_id if d.original else None, d.replay.span_id if d.replay else None)
    save_label(ref if ref is not None else replay_ref(r), lab)
    return lab


def test_text_shows_labels_on_their_divergences_and_a_count(pair: tuple[str, str]) -> None:
    original, replay = pair
    _label(original, replay, 0, "acceptable_alternative", "same slot, other wording")
    _label(original, replay, 1, "new_regression")
    code, out, err = run("diff", original, replay)
    assert code == 1 and err == ""
    lines = out.splitlines()
    first = next(line for line in lines if line.startswith("first divergence: "))
    assert first.endswith(' [acceptable_alternative: "same slot, other wording"]')
    rows = [line for line in lines if line.startswith("  row ")]
    assert rows[0].endswith(" [new_regression]")
    assert not any("[acceptable_alternative" in r or "[new_regression" in r for r in rows[1:])
    assert f"2 of 6 divergences labelled ({sidecar_path(replay)})" in lines


def test_json_adds_the_label_and_the_labels_file(pair: tuple[str, str]) -> None:
    original, replay = pair
    lab = _label(original, replay, 0, "fixture_mismatch", "the fixture lacks Friday")
    code, out, _ = run("diff", original, replay, "--format", "json")
    assert code == 1
    report = orjson.loads(out)
    assert report["schema_version"] == 1
    assert report["labels_file"] == sidecar_path(replay)
    assert report["first_divergence"]["label"] == {
        "key": lab.key, "label": "fixture_mismatch", "note": "the fixture lacks Friday", "created": "2026-11-12T17:03:11Z",
        "type": "input_mismatch", "original_span_id": lab.original_span_id, "replay_span_id": lab.replay_span_id}
    assert report["divergences"][0]["label"] == report["first_divergence"]["label"]
    assert [("label" in d) for d in report["divergences"]] == [True] + [False] * 5
    assert report["unmatched_labels"] == []


def test_without_a_sidecar_the_report_is_unchanged_but_for_null_labels_file(pair: tuple[str, str]) -> None:
    code, out, _ = run("diff", *pair)
    assert code == 1 and "labelled" not in out and "[acceptable" not in out
    report = orjson.loads(run("diff", *pair, "--format", "json")[1])
    assert report["labels_file"] is None and report["unmatched_labels"] == []
    assert not any("label" in d for d in report["divergences"])


def test_a_damaged_sidecar_is_a_warning_and_the_diff_still_prints(pair: tuple[str, str]) -> None:
    original, replay = pair
    Path(sidecar_path(replay)).write_text('{"schema": "tracetui-labels/1", "labels": [{"key": "k", "label": "ok?", "type": "x"}]}')
    code, out, err = run("diff", original, replay)
    assert code == 1
    assert err == (f"tracetui: warning: reviewer labels not shown: {sidecar_path(replay)} (labels[0].label): unknown label 'ok?'; "
                   "known labels: acceptable_alternative, new_regression, fixture_mismatch, insufficient_spec\n")
    assert "first divergence: input_mismatch" in out and "labelled" not in out
    assert orjson.loads(run("diff", original, replay, "--format", "json")[1])["labels_file"] is None


def test_labels_that_match_no_divergence_are_reported(pair: tuple[str, str]) -> None:
    original, replay = pair
    save_label(replay, Label("input_mismatch:old:old", "new_regression", "", "", "input_mismatch", "old", "old"))
    code, out, _ = run("diff", original, replay)
    assert "0 of 6 divergences labelled" in out
    assert f"1 label in {sidecar_path(replay)} matches no divergence (made on another recording of this replay?): input_mismatch:old:old" in out
    code, out, _ = run("diff", original, original)
    assert code == 0 and "no divergence" in out and "matches no divergence" not in out  # the original has no sidecar


def test_a_run_of_a_multi_run_replay_file_has_its_own_labels(tmp_path: Path, pair: tuple[str, str]) -> None:
    """REPLAY#RUN: the sidecar of the file, entries keyed by the run; another run of the file shows none."""
    original, replay = pair
    both = tmp_path / "both.jsonl"
    both.write_bytes(Path(original).read_bytes() + Path(replay).read_bytes())
    replay_run = read_trace(replay).trace_id
    ref = f"{both}#{replay_run}"
    _label(original, ref, 0, "insufficient_spec", "spec silent on Friday")
    assert set(load_labels(ref)) and load_labels(str(both)) == {}
    code, out, _ = run("diff", original, ref)
    assert code == 1 and ' [insufficient_spec: "spec silent on Friday"]' in out and "1 of 6 divergences labelled" in out
    original_run = read_trace(original).trace_id
    code, out, _ = run("diff", original, f"{both}#{original_run}")
    assert code == 0 and "insufficient_spec" not in out
    doc = orjson.loads(Path(sidecar_path(str(both))).read_bytes())
    assert [e["run"] for e in doc["labels"]] == [replay_run]


def test_the_replay_and_original_are_never_written(pair: tuple[str, str]) -> None:
    before = [Path(p).read_bytes() for p in pair]
    _label(*pair, 0, "acceptable_alternative")
    run("diff", *pair)
    assert [Path(p).read_bytes() for p in pair] == before
