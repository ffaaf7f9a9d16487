"""Reviewer labels: the sidecar next to the replay, its round trip, damage, atomic writes, FILE#RUN, and the diff report."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import orjson
import pytest

from tracetui.core.diff import labels as labels_mod
from tracetui.core.diff import TraceDiff, diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.diff.labels import (
    LABELS,
    SCHEMA,
    Label,
    divergence_key,
    labels_for,
    load_labels,
    now_iso,
    remove_label,
    replay_ref,
    save_label,
    sidecar_path,
)
from tracetui.core.readers import read_trace
from tracetui.core.diff.report import diff_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """The scheduling sample pair, copied: 6 divergences, the first an input_mismatch on the prompt version."""
    for side in ("original", "replay"):
        shutil.copy(SAMPLES / "scheduling" / f"{side}.jsonl", tmp_path / f"{side}.jsonl")
    return tmp_path / "original.jsonl", tmp_path / "replay.jsonl"


def _diff(pair: tuple[Path, Path]) -> TraceDiff:
    return diff_traces(read_trace(str(pair[0])), read_trace(str(pair[1])))


def _label(key: str = "input_mismatch:a:b", label: str = "acceptable_alternative", note: str = "same slot, other wording") -> Label:
    return Label(key=key, label=label, note=note, created="2026-11-12T17:03:11Z", type=key.split(":")[0],
                 original_span_id="a", replay_span_id="b")


def _label_of(d, label: str, note: str = "") -> Label:  # type: ignore[no-untyped-def]
    return Label(divergence_key(d), label, note, now_iso(), d.type.value,
                 d.original.span_id if d.original else None, d.replay.span_id if d.replay else None)


# --- keys and paths ------------------------------------------------------------------------


def test_divergence_key_names_type_and_both_span_ids_and_is_stable(pair: tuple[Path, Path]) -> None:
    """The key is type:original-id:replay-id ('-' for a missing side), the same on a second read of the pair."""
    d1, d2 = _diff(pair), _diff(pair)
    first = d1.divergences[0]
    assert divergence_key(first) == f"input_mismatch:{first.original.span_id}:{first.replay.span_id}"
    one_sided = next(d for d in d1.divergences if d.type.value == "unrecorded_call")
    assert divergence_key(one_sided) == f"unrecorded_call:-:{one_sided.replay.span_id}"
    assert [divergence_key(d) for d in d1.divergences] == [divergence_key(d) for d in d2.divergences]
    assert len({divergence_key(d) for d in d1.divergences}) == len(d1.divergences)


def test_sidecar_sits_next_to_the_replay_file_even_for_file_hash_run() -> None:
    assert sidecar_path("runs/replay.jsonl") == "runs/replay.jsonl.labels.json"
    assert sidecar_path("runs/missing.json#run-b") == "runs/missing.json.labels.json"


def test_replay_ref_adds_the_run_only_when_the_file_holds_several() -> None:
    """A one-run file is labelled under its path; a run of a multi-run file under FILE#TRACE_ID."""
    single = read_trace(str(SAMPLES / "scheduling" / "replay.jsonl"))
    assert replay_ref(single) == single.path
    two = SAMPLES.parent / "tests" / "data" / "damaged" / "cat_two_runs.jsonl"
    t = read_trace(f"{two}#run-b")
    assert len(t.trace_ids) == 2
    assert replay_ref(t) == f"{two}#{t.trace_id}"


# --- round trip, replace, remove -----------------------------------------------------------


def test_round_trip_writes_the_documented_sidecar_and_reads_it_back(pair: tuple[Path, Path]) -> None:
    _orig, replay = pair
    a, b = _label("input_mismatch:a:b"), _label("unrecorded_call:-:c", "new_regression", "")
    save_label(str(replay), a)
    save_label(str(replay), b)
    assert load_labels(str(replay)) == {a.key: a, b.key: b}
    doc = orjson.loads(Path(sidecar_path(str(replay))).read_bytes())
    assert doc["schema"] == SCHEMA == "tracetui-labels/1"
    assert doc["replay"] == "replay.jsonl"
    assert doc["labels"][0] == {"key": "input_mismatch:a:b", "label": "acceptable_alternative",
                                "note": "same slot, other wording", "created": "2026-11-12T17:03:11Z",
                                "type": "input_mismatch", "original_span_id": "a", "replay_span_id": "b"}
    assert [e["key"] for e in doc["labels"]] == [a.key, b.key]


def test_no_sidecar_means_no_labels(tmp_path: Path) -> None:
    assert load_labels(str(tmp_path / "replay.jsonl")) == {}
    assert remove_label(str(tmp_path / "replay.jsonl"), "x:y:z") is False
    assert not (tmp_path / "replay.jsonl.labels.json").exists()


def test_saving_the_same_key_replaces_the_label_and_keeps_the_others(pair: tuple[Path, Path]) -> None:
    replay = str(pair[1])
    save_label(replay, _label("k:1:1"))
    save_label(replay, _label("k:2:2"))
    newer = _label("k:1:1", "fixture_mismatch", "the fixture is stale")
    save_label(replay, newer)
    got = load_labels(replay)
    assert got["k:1:1"] == newer and got["k:2:2"] == _label("k:2:2")
    doc = orjson.loads(Path(sidecar_path(replay)).read_bytes())
    assert [e["key"] for e in doc["labels"]] == ["k:1:1", "k:2:2"]  # replaced in place, not appended


def test_remove_drops_one_label_and_the_file_when_it_is_empty(pair: tuple[Path, Path]) -> None:
    replay = str(pair[1])
    save_label(replay, _label("k:1:1"))
    save_label(replay, _label("k:2:2"))
    assert remove_label(replay, "k:1:1") is True
    assert remove_label(replay, "k:1:1") is False
    assert set(load_labels(replay)) == {"k:2:2"}
    assert remove_label(replay, "k:2:2") is True
    assert not os.path.exists(sidecar_path(replay))


def test_unknown_fields_are_ignored_on_load_and_kept_on_save(pair: tuple[Path, Path]) -> None:
    """A sidecar written by a newer tracetui (or by hand) keeps what this version does not know."""
    replay = str(pair[1])
    side = Path(sidecar_path(replay))
    entry = {"key": "k:1:1", "label": "insufficient_spec", "note": "", "created": "", "type": "k",
             "original_span_id": None, "replay_span_id": None, "ticket": "INC-42"}
    side.write_bytes(orjson.dumps({"schema": SCHEMA, "replay": "replay.jsonl", "reviewer": "ana", "labels": [entry]}))
    assert load_labels(replay)["k:1:1"].label == "insufficient_spec"
    save_label(replay, _label("k:2:2"))
    save_label(replay, _label("k:1:1", "new_regression"))
    doc = orjson.loads(side.read_bytes())
    assert doc["reviewer"] == "ana"
    assert doc["labels"][0]["ticket"] == "INC-42" and doc["labels"][0]["label"] == "new_regression"
    assert remove_label(replay, "k:1:1") and remove_label(replay, "k:2:2")
    assert orjson.loads(side.read_bytes()) == {"schema": SCHEMA, "replay": "replay.jsonl", "reviewer": "ana", "labels": []}


def test_saving_an_unknown_label_is_refused(pair: tuple[Path, Path]) -> None:
    with pytest.raises(ValueError, match="known labels: acceptable_alternative"):
        save_label(str(pair[1]), _label(label="looks_fine"))
    with pytest.raises(ValueError, match="key"):
        save_label(str(pair[1]), _label(key=""))
    assert not os.path.exists(sidecar_path(str(pair[1])))


# --- damaged sidecars ----------------------------------------------------------------------

_GOOD = {"key": "k:1:1", "label": "new_regression", "note": "n", "created": "", "type": "k",
         "original_span_id": "1", "replay_span_id": "1"}


@pytest.mark.parametrize(
    ("content", "where", "says"),
    [
        (b'{"schema": "tracetui-labels/1", "labels": [', "", "not valid JSON"),
        (b"[]", "", "expected a JSON object"),
        (orjson.dumps({"schema": "tracetui-labels/9", "labels": []}), "schema", "expected 'tracetui-labels/1'"),
        (orjson.dumps({"schema": SCHEMA, "labels": {"k": 1}}), "labels", "expected a list"),
        (orjson.dumps({"schema": SCHEMA, "labels": [_GOOD, "x"]}), "labels[1]", "expected an object"),
        (orjson.dumps({"schema": SCHEMA, "labels": [_GOOD, {**_GOOD, "label": "meh"}]}), "labels[1].label",
         "unknown label 'meh'; known labels: acceptable_alternative, new_regression, fixture_mismatch, insufficient_spec"),
        (orjson.dumps({"schema": SCHEMA, "labels": [{**_GOOD, "note": 3}]}), "labels[0].note", "expected a string, found a number"),
        (orjson.dumps({"schema": SCHEMA, "labels": [{**_GOOD, "replay_span_id": ["x"]}]}), "labels[0].replay_span_id",
         "expected a string or null, found a list"),
        (orjson.dumps({"schema": SCHEMA, "labels": [{k: v for k, v in _GOOD.items() if k != "key"}]}), "labels[0].key", "missing"),
        (orjson.dumps({"schema": SCHEMA, "labels": [{**_GOOD, "run": 7}]}), "labels[0].run", "expected a string or null"),
    ],
    ids=["bad-json", "not-object", "schema", "labels-not-list", "entry-not-object", "unknown-label", "note-type",
         "span-id-type", "missing-key", "run-type"],
)
def test_damaged_sidecar_is_a_read_error_naming_the_field(pair: tuple[Path, Path], content: bytes, where: str, says: str) -> None:
    """load, save and remove all refuse a damaged sidecar, naming file and field, and leave it as it is."""
    replay = str(pair[1])
    side = Path(sidecar_path(replay))
    side.write_bytes(content)
    for call in (lambda: load_labels(replay), lambda: save_label(replay, _label()), lambda: remove_label(replay, "k:1:1")):
        with pytest.raises(ReadError) as info:
            call()
        assert info.value.path == str(side)
        assert info.value.where == where
        assert says in info.value.reason
        assert str(side) in str(info.value)
    assert side.read_bytes() == content


# --- atomic writes -------------------------------------------------------------------------


def test_save_touches_only_the_sidecar_and_leaves_no_temporary_file(pair: tuple[Path, Path]) -> None:
    original, replay = pair
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in pair}
    save_label(str(replay), _label("k:1:1"))
    save_label(str(replay), _label("k:2:2"))
    remove_label(str(replay), "k:1:1")
    assert sorted(p.name for p in original.parent.iterdir()) == ["original.jsonl", "replay.jsonl", "replay.jsonl.labels.json"]
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in pair} == before


def test_save_keeps_the_sidecars_permission_bits(pair: tuple[Path, Path]) -> None:
    replay = str(pair[1])
    save_label(replay, _label("k:1:1"))
    os.chmod(sidecar_path(replay), 0o640)
    save_label(replay, _label("k:2:2"))
    assert stat.S_IMODE(os.stat(sidecar_path(replay)).st_mode) == 0o640


def test_a_failed_write_leaves_the_old_sidecar_and_no_temporary_file(pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    replay = str(pair[1])
    save_label(replay, _label("k:1:1"))
    side = Path(sidecar_path(replay))
    before = side.read_bytes()

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(labels_mod.os, "replace", fail)
    with pytest.raises(ReadError, match="cannot be written: No space left on device"):
        save_label(replay, _label("k:2:2"))
    assert side.read_bytes() == before
    assert sorted(p.name for p in side.parent.iterdir()) == ["original.jsonl", "replay.jsonl", "replay.jsonl.labels.json"]


# --- FILE#RUN ------------------------------------------------------------------------------


def test_runs_of_one_file_share_the_sidecar_but_not_their_labels(pair: tuple[Path, Path]) -> None:
    """FILE#RUN entries carry "run"; each reference sees, replaces and removes only its own."""
    replay = str(pair[1])
    a, b, plain = _label("k:1:1", "new_regression"), _label("k:1:1", "fixture_mismatch"), _label("k:1:1")
    save_label(f"{replay}#run-a", a)
    save_label(f"{replay}#run-b", b)
    save_label(replay, plain)
    assert load_labels(f"{replay}#run-a") == {"k:1:1": a}
    assert load_labels(f"{replay}#run-b") == {"k:1:1": b}
    assert load_labels(replay) == {"k:1:1": plain}
    doc = orjson.loads(Path(sidecar_path(replay)).read_bytes())
    assert [e.get("run") for e in doc["labels"]] == ["run-a", "run-b", None]
    assert "run" not in doc["labels"][2]
    assert remove_label(f"{replay}#run-a", "k:1:1") is True
    assert load_labels(f"{replay}#run-a") == {} and load_labels(f"{replay}#run-b") == {"k:1:1": b}


# --- labels on a diff ----------------------------------------------------------------------


def test_labels_for_maps_divergence_indices_and_the_report_carries_them(pair: tuple[Path, Path]) -> None:
    diff = _diff(pair)
    first, third = diff.divergences[0], diff.divergences[2]
    stale = _label("input_mismatch:gone:gone", "new_regression")
    labels = {lab.key: lab for lab in (_label_of(first, "acceptable_alternative", "same slot, other wording"),
                                       _label_of(third, "new_regression"), stale)}
    found = labels_for(diff, labels)
    assert sorted(found) == [0, 2]
    assert found[0].label == "acceptable_alternative" and found[2].label == "new_regression"
    report = diff_report(diff, labels=labels, labels_file="x.labels.json")
    assert report["schema_version"] == 1
    assert report["first_divergence"]["label"]["label"] == "acceptable_alternative"
    assert report["first_divergence"]["label"]["note"] == "same slot, other wording"
    assert report["divergences"][2]["label"]["key"] == divergence_key(third)
    assert [("label" in d) for d in report["divergences"]] == [True, False, True, False, False, False]
    assert report["labels_file"] == "x.labels.json"
    assert [u["key"] for u in report["unmatched_labels"]] == [stale.key]
    plain = diff_report(diff)
    assert plain["labels_file"] is None and plain["unmatched_labels"] == []
    assert not any("label" in d for d in plain["divergences"])


def test_labels_constant_is_the_issue_list() -> None:
    assert LABELS == ("acceptable_alternative", "new_regression", "fixture_mismatch", "insufficient_spec")
