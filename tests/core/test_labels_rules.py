"""Rules of core/diff/labels.py: divergence keys, the sidecar's entries, runs, saving and removing labels.

Each expectation is written from the module's docstrings (the sidecar's documented shape, "fields this module does
not know are ignored on load and kept on save", "writes are atomic ... the sidecar's permission bits are kept",
``FILE#RUN`` entries carry ``run``), on divergences, traces and sidecars built here.
"""

from __future__ import annotations

import os
import re
import stat
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.builders import make_span
from tracetui.core.diff import labels as labels_mod
from tracetui.core.diff.labels import (
    LABELS,
    SCHEMA,
    Label,
    divergence_key,
    label_record,
    labels_for,
    load_labels,
    now_iso,
    remove_label,
    replay_ref,
    save_label,
    sidecar_path,
)
from tracetui.core.diff.trace_diff import Divergence, DivergenceType, TraceDiff
from tracetui.core.errors import ReadError
from tracetui.core.model import Trace


def _label(key: str = "k:1:1", label: str = "new_regression", note: str = "n", *, created: str = "2026-11-12T17:03:11Z",
           type_: str = "k", original: str | None = "1", replay: str | None = "1") -> Label:
    return Label(key, label, note, created, type_, original, replay)


def _entry(**fields: Any) -> dict[str, Any]:
    base = {"key": "k:1:1", "label": "new_regression", "note": "n", "created": "", "type": "k",
            "original_span_id": "1", "replay_span_id": "1"}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not _DROP}


_DROP = object()


def _write_sidecar(replay: Path, doc: Any) -> Path:
    side = Path(sidecar_path(str(replay)))
    side.write_bytes(orjson.dumps(doc))
    return side


def _doc(side: Path) -> Any:
    return orjson.loads(side.read_bytes())


# --- keys, references, records --------------------------------------------------------------------


def _div(dtype: DivergenceType, o: str | None, r: str | None) -> Divergence:
    return Divergence(dtype, 0, make_span("tool", "t", span_id=o) if o else None,
                      make_span("tool", "t", span_id=r) if r else None, (), 0)


def test_a_divergence_key_is_its_type_and_both_span_ids_with_a_dash_for_a_missing_side() -> None:
    assert divergence_key(_div(DivergenceType.ARGS_MISMATCH, "o1", "r1")) == "args_mismatch:o1:r1"
    assert divergence_key(_div(DivergenceType.MISSING_CALL, "o1", None)) == "missing_call:o1:-"
    assert divergence_key(_div(DivergenceType.UNRECORDED_CALL, None, "r1")) == "unrecorded_call:-:r1"


def test_now_is_utc_to_the_second_in_the_documented_form() -> None:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "JST-9"  # the machine's zone is not the label's (POSIX form: no tz database needed)
    time.tzset()
    try:
        _check_now_is_utc()
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def _check_now_is_utc() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    got = now_iso()
    after = datetime.now(timezone.utc)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", got)
    at = datetime.strptime(got, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert before <= at <= after


def test_the_sidecar_sits_next_to_the_replay_file() -> None:
    assert sidecar_path("replay.jsonl") == "replay.jsonl.labels.json"
    assert sidecar_path("a/b/runs.json#task-3") == "a/b/runs.json.labels.json"


def test_a_replay_is_labelled_under_file_hash_run_only_for_a_run_of_several() -> None:
    assert replay_ref(Trace(spans=[], path="r.json", trace_id="t2", trace_ids=["t1", "t2"])) == "r.json#t2"
    assert replay_ref(Trace(spans=[], path="r.json", trace_id="t1", trace_ids=["t1"])) == "r.json"
    assert replay_ref(Trace(spans=[], path="r.json", trace_id=None, trace_ids=["t1", "t2"])) == "r.json"
    assert replay_ref(Trace(spans=[], path="r.json")) == "r.json"


def test_a_label_record_is_the_documented_entry_without_run() -> None:
    rec = label_record(_label("a:b:c", "fixture_mismatch", "stale", original=None, replay="c", type_="a"))
    assert rec == {"key": "a:b:c", "label": "fixture_mismatch", "note": "stale", "created": "2026-11-12T17:03:11Z",
                   "type": "a", "original_span_id": None, "replay_span_id": "c"}
    assert list(rec) == ["key", "label", "note", "created", "type", "original_span_id", "replay_span_id"]


def test_labels_for_gives_labels_by_divergence_index_and_leaves_the_others_out() -> None:
    divs = [_div(DivergenceType.ARGS_MISMATCH, "o1", "r1"), _div(DivergenceType.MISSING_CALL, "o2", None),
            _div(DivergenceType.UNRECORDED_CALL, None, "r3")]
    diff = TraceDiff(Trace(spans=[]), Trace(spans=[]), [], [], divs)
    second, third = _label("missing_call:o2:-"), _label("unrecorded_call:-:r3", "acceptable_alternative")
    got = labels_for(diff, {second.key: second, third.key: third, "x:y:z": _label("x:y:z")})
    assert got == {1: second, 2: third}
    assert labels_for(diff, {}) == {}
    assert labels_for(diff, {"x:y:z": _label("x:y:z")}) == {}


# --- loading --------------------------------------------------------------------------------------


def test_optional_fields_have_their_defaults_and_an_empty_run_is_no_run(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    _write_sidecar(replay, {"schema": SCHEMA, "labels": [
        _entry(note=_DROP, created=_DROP, original_span_id=_DROP, replay_span_id=_DROP),
        _entry(key="k:2:2", original_span_id=None, replay_span_id=None, run=""),
        _entry(key="k:3:3", run=None),
    ]})
    got = load_labels(str(replay))
    assert got["k:1:1"] == Label("k:1:1", "new_regression", "", "", "k", None, None)
    assert got["k:2:2"] == Label("k:2:2", "new_regression", "n", "", "k", None, None)
    assert set(got) == {"k:1:1", "k:2:2", "k:3:3"}  # "run": "" and null are entries of the plain FILE


def test_a_sidecar_without_a_labels_list_has_no_labels(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    _write_sidecar(replay, {"schema": SCHEMA})
    assert load_labels(str(replay)) == {}


def test_a_key_written_twice_by_hand_loads_as_the_later_entry(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(note="first"), _entry(note="second")]})
    assert load_labels(str(replay))["k:1:1"].note == "second"


def test_only_the_entries_of_the_run_asked_for_are_loaded(tmp_path: Path) -> None:
    replay = tmp_path / "runs.json"
    _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(note="plain"), _entry(note="a", run="run-a"),
                                                          _entry(key="k:2:2", note="b", run="run-b")]})
    assert {k: v.note for k, v in load_labels(str(replay)).items()} == {"k:1:1": "plain"}
    assert {k: v.note for k, v in load_labels(f"{replay}#run-a").items()} == {"k:1:1": "a"}
    assert {k: v.note for k, v in load_labels(f"{replay}#run-b").items()} == {"k:2:2": "b"}
    assert load_labels(f"{replay}#run-c") == {}


@pytest.mark.parametrize(("entry", "where", "says"), [
    (_entry(label=_DROP), "labels[0].label", "missing; fix the field, or delete the file to drop every label of this replay"),
    (_entry(type=_DROP), "labels[0].type", "missing; fix the field"),
    (_entry(key=""), "labels[0].key", "is empty; fix the field"),
    (_entry(key=None), "labels[0].key", "expected a string, found null; fix the field"),
    (_entry(label=1), "labels[0].label", "expected a string, found a number"),
    (_entry(note=1.5), "labels[0].note", "expected a string, found a number"),
    (_entry(note=True), "labels[0].note", "expected a string, found a boolean"),
    (_entry(created={}), "labels[0].created", "expected a string, found an object"),
    (_entry(type=[]), "labels[0].type", "expected a string, found a list"),
    (_entry(original_span_id=False), "labels[0].original_span_id", "expected a string or null, found a boolean"),
    (_entry(run={"a": 1}), "labels[0].run", "expected a string or null, found an object"),
    (_entry(label="Meh"), "labels[0].label",
     "unknown label 'Meh'; known labels: acceptable_alternative, new_regression, fixture_mismatch, insufficient_spec"),
])
def test_a_damaged_entry_is_a_read_error_naming_its_field(tmp_path: Path, entry: Any, where: str, says: str) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [entry]})
    with pytest.raises(ReadError) as info:
        load_labels(str(replay))
    assert (info.value.path, info.value.where) == (str(side), where)
    assert info.value.reason.startswith(says)


@pytest.mark.parametrize(("doc", "where", "says"), [
    (None, "", "expected a JSON object, found null; fix the field"),
    ("x", "", "expected a JSON object, found a string"),
    (3, "", "expected a JSON object, found a number"),
    (True, "", "expected a JSON object, found a boolean"),
    ({"labels": []}, "schema", "schema is None, expected 'tracetui-labels/1'; fix the field"),
    ({"schema": "tracetui-labels/9", "labels": []}, "schema",
     "schema is 'tracetui-labels/9', expected 'tracetui-labels/1'; fix the field, or delete the file to drop every label"),
    ({"schema": SCHEMA, "labels": "x"}, "labels", "expected a list, found a string; fix the field"),
    ({"schema": SCHEMA, "labels": [_entry(), 3]}, "labels[1]", "expected an object, found a number; fix the field"),
    ({"schema": SCHEMA, "labels": [_entry(), None]}, "labels[1]", "expected an object, found null"),
])
def test_a_damaged_sidecar_is_a_read_error_naming_where(tmp_path: Path, doc: Any, where: str, says: str) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, doc)
    with pytest.raises(ReadError) as info:
        load_labels(str(replay))
    assert (info.value.path, info.value.where) == (str(side), where)
    assert info.value.reason == says or info.value.reason.startswith(says)


def test_every_entry_is_checked_not_only_the_runs_asked_for(tmp_path: Path) -> None:
    replay = tmp_path / "runs.json"
    _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(run="run-a"), _entry(run="run-b", label="x")]})
    with pytest.raises(ReadError) as info:
        load_labels(f"{replay}#run-a")
    assert info.value.where == "labels[1].label"


def test_a_sidecar_that_is_a_folder_or_cannot_be_opened_is_a_read_error(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    Path(sidecar_path(str(replay))).mkdir()
    with pytest.raises(ReadError) as info:
        load_labels(str(replay))
    assert (info.value.path, info.value.reason) == (sidecar_path(str(replay)), "is a directory, expected a labels file")
    blocker = tmp_path / "file"
    blocker.write_text("")
    under = blocker / "replay.jsonl"  # a folder that is a regular file: works as root too
    with pytest.raises(ReadError) as info:
        load_labels(str(under))
    assert info.value.path == sidecar_path(str(under))
    assert info.value.reason == "cannot be read: Not a directory"


@pytest.mark.parametrize("content", [b"{nope", b'{"schema": "tracetui-labels/1", "labels": [], "x": "\xff\xfe"}'])
def test_a_sidecar_that_is_not_json_names_the_fix(tmp_path: Path, content: bytes) -> None:
    replay = tmp_path / "replay.jsonl"
    Path(sidecar_path(str(replay))).write_bytes(content)  # not JSON; not UTF-8
    with pytest.raises(ReadError) as info:
        load_labels(str(replay))
    assert info.value.path == sidecar_path(str(replay))
    assert info.value.reason.startswith("not valid JSON (")
    assert info.value.reason.endswith("); fix the field, or delete the file to drop every label of this replay")


# --- saving ---------------------------------------------------------------------------------------


def test_a_first_label_writes_the_documented_sidecar(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    save_label(str(replay), _label())
    side = Path(sidecar_path(str(replay)))
    raw = side.read_bytes()
    assert raw.endswith(b"}\n") and b'\n  "schema": "tracetui-labels/1",\n' in raw  # indented JSON, one newline
    assert _doc(side) == {"schema": SCHEMA, "replay": "replay.jsonl", "labels": [label_record(_label())]}
    assert list(_doc(side)) == ["schema", "replay", "labels"]


def test_a_label_of_a_run_carries_the_run_and_names_the_file(tmp_path: Path) -> None:
    replay = tmp_path / "runs.json"
    save_label(f"{replay}#run-a", _label())
    doc = _doc(Path(sidecar_path(str(replay))))
    assert doc["replay"] == "runs.json"
    assert doc["labels"] == [{**label_record(_label()), "run": "run-a"}]


def test_saving_refuses_an_unknown_label_or_a_missing_key_and_writes_nothing(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    with pytest.raises(ValueError) as info:
        save_label(str(replay), _label(label="meh"))
    assert str(info.value) == ("unknown label 'meh'; known labels: acceptable_alternative, new_regression, "
                               "fixture_mismatch, insufficient_spec")
    for key in ("", None):
        with pytest.raises(ValueError) as info:
            save_label(str(replay), _label(key=key))  # type: ignore[arg-type]
        assert str(info.value) == "a label needs the key of its divergence (divergence_key)"
    assert list(tmp_path.iterdir()) == []


def test_every_label_of_the_list_is_accepted() -> None:
    assert LABELS == ("acceptable_alternative", "new_regression", "fixture_mismatch", "insufficient_spec")


@pytest.mark.parametrize("label", LABELS)
def test_each_known_label_is_saved_and_loaded(tmp_path: Path, label: str) -> None:
    replay = tmp_path / "replay.jsonl"
    save_label(str(replay), _label(label=label))
    assert load_labels(str(replay))["k:1:1"].label == label


def test_replacing_a_label_keeps_the_old_entrys_unknown_fields_and_drops_later_duplicates(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "replay": "old-name.jsonl", "reviewer": "ana", "labels": [
        _entry(key="k:0:0"),
        _entry(ticket="INC-1", note="old"),
        _entry(key="k:2:2"),
        _entry(note="duplicate", extra=1),
        _entry(note="plain run-a", run="run-a"),
    ]})
    save_label(str(replay), _label(note="new"))
    doc = _doc(side)
    assert list(doc) == ["schema", "replay", "reviewer", "labels"]
    assert doc["replay"] == "replay.jsonl" and doc["reviewer"] == "ana"
    assert [(e["key"], e["note"], e.get("run")) for e in doc["labels"]] == [
        ("k:0:0", "n", None), ("k:1:1", "new", None), ("k:2:2", "n", None), ("k:1:1", "plain run-a", "run-a")]
    assert doc["labels"][1] == {**label_record(_label(note="new")), "ticket": "INC-1"}


def test_replacing_a_run_label_keeps_its_run_and_leaves_the_plain_files(tmp_path: Path) -> None:
    replay = tmp_path / "runs.json"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(note="plain"),
                                                                 _entry(note="a", run="run-a", ticket="T")]})
    save_label(f"{replay}#run-a", _label(note="a2"))
    doc = _doc(side)
    assert doc["labels"] == [_entry(note="plain"), {**label_record(_label(note="a2")), "run": "run-a", "ticket": "T"}]
    save_label(f"{replay}#run-b", _label(note="b"))
    assert [e.get("run") for e in _doc(side)["labels"]] == [None, "run-a", "run-b"]


def test_an_entry_with_an_empty_run_is_the_plain_files(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(note="old", run="")]})
    save_label(str(replay), _label(note="new"))
    assert [e["note"] for e in _doc(side)["labels"]] == ["new"]
    assert remove_label(str(replay), "k:1:1") is True


def test_saving_to_a_damaged_sidecar_leaves_it_as_it_was(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": "other", "labels": []})
    before = side.read_bytes()
    with pytest.raises(ReadError):
        save_label(str(replay), _label())
    assert side.read_bytes() == before


def test_a_new_sidecar_gets_the_umasks_permission_bits(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    old = os.umask(0o027)
    try:
        save_label(str(replay), _label())
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(sidecar_path(str(replay))).st_mode) == 0o640
    assert os.umask(old) == old  # the umask is left as it was


def test_a_symlinked_sidecar_has_its_target_replaced_and_stays_a_link(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    target = tmp_path / "kept" / "labels.json"
    target.parent.mkdir()
    save_label(str(target.parent / "x"), _label(key="k:0:0"))  # any sidecar content
    os.rename(sidecar_path(str(target.parent / "x")), target)
    os.chmod(target, 0o600)
    link = Path(sidecar_path(str(replay)))
    link.symlink_to(target)
    save_label(str(replay), _label())
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert [e["key"] for e in _doc(target)["labels"]] == ["k:0:0", "k:1:1"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["labels.json"]  # no temporary file left


def test_a_sidecar_that_cannot_be_written_is_a_read_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "replay.jsonl"
    with pytest.raises(ReadError) as info:
        save_label(str(missing), _label())
    assert info.value.path == sidecar_path(str(missing))
    assert info.value.reason == "cannot be written: No such file or directory"
    blocker = tmp_path / "file"
    blocker.write_text("")
    under = blocker / "replay.jsonl"
    with pytest.raises(ReadError) as info:
        save_label(str(under), _label())
    assert info.value.reason.startswith("cannot be read: Not a directory")


def test_a_failed_stat_is_a_read_error_naming_the_sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "replay.jsonl"
    real_stat = os.stat

    def stat_fails(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path).endswith(".labels.json"):
            raise PermissionError(13, "Permission denied")
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(labels_mod.os, "stat", stat_fails)
    with pytest.raises(ReadError) as info:
        save_label(str(replay), _label())
    assert info.value.reason == "cannot be written: Permission denied"
    assert info.value.path == sidecar_path(str(replay))


def test_an_interrupted_write_leaves_no_temporary_file_and_is_not_swallowed(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "replay.jsonl"
    save_label(str(replay), _label(key="k:0:0"))
    before = Path(sidecar_path(str(replay))).read_bytes()

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(labels_mod.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_label(str(replay), _label())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replay.jsonl.labels.json"]
    assert Path(sidecar_path(str(replay))).read_bytes() == before


# --- removing -------------------------------------------------------------------------------------


def test_removing_the_last_label_keeps_a_sidecar_with_unknown_fields(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "replay": "replay.jsonl", "reviewer": "ana",
                                   "labels": [_entry()]})
    assert remove_label(str(replay), "k:1:1") is True
    assert _doc(side) == {"schema": SCHEMA, "replay": "replay.jsonl", "reviewer": "ana", "labels": []}


def test_removing_the_last_label_deletes_a_sidecar_with_only_known_fields(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(), _entry(note="dup")]})
    assert remove_label(str(replay), "k:1:1") is True  # both entries of the key
    assert not side.exists()


def test_removing_drops_every_entry_of_the_key_for_that_run_only(tmp_path: Path) -> None:
    replay = tmp_path / "runs.json"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [
        _entry(), _entry(run="run-a"), _entry(key="k:2:2"), _entry(run="run-a", note="dup")]})
    assert remove_label(f"{replay}#run-a", "k:1:1") is True
    assert [(e["key"], e.get("run")) for e in _doc(side)["labels"]] == [("k:1:1", None), ("k:2:2", None)]
    assert remove_label(f"{replay}#run-a", "k:1:1") is False
    assert remove_label(f"{replay}#run-a", "k:2:2") is False


def test_removing_an_absent_key_leaves_the_sidecar_untouched(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry()]})
    before = (side.read_bytes(), side.stat().st_mtime_ns)
    assert remove_label(str(replay), "k:9:9") is False
    assert (side.read_bytes(), side.stat().st_mtime_ns) == before


def test_a_sidecar_that_cannot_be_removed_is_a_read_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry()]})

    def busy(path: Any) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(labels_mod.os, "remove", busy)
    with pytest.raises(ReadError) as info:
        remove_label(str(replay), "k:1:1")
    assert (info.value.path, info.value.reason) == (str(side), "cannot be removed: Device or resource busy")


def test_a_sidecar_removed_meanwhile_is_still_a_label_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "replay.jsonl"
    _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry()]})

    def gone(path: Any) -> None:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(labels_mod.os, "remove", gone)
    assert remove_label(str(replay), "k:1:1") is True


def test_saving_to_a_sidecar_without_a_labels_list_starts_one_and_writes_labels_last(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "reviewer": "ana"})
    save_label(str(replay), _label())
    assert _doc(side) == {"schema": SCHEMA, "replay": "replay.jsonl", "reviewer": "ana", "labels": [label_record(_label())]}
    side = _write_sidecar(replay, {"labels": [], "schema": SCHEMA, "reviewer": "ana", "replay": "x"})
    save_label(str(replay), _label())
    assert list(_doc(side)) == ["schema", "replay", "reviewer", "labels"]  # the documented order, whatever it was


def test_removing_from_a_sidecar_without_a_labels_list_removes_nothing(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA})
    assert remove_label(str(replay), "k:1:1") is False
    assert _doc(side) == {"schema": SCHEMA}


def test_replacing_a_run_label_drops_that_runs_later_duplicates_only(tmp_path: Path) -> None:
    replay = tmp_path / "runs.json"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [
        _entry(note="a", run="run-a"), _entry(note="plain"), _entry(note="a dup", run="run-a")]})
    save_label(f"{replay}#run-a", _label(note="a2"))
    assert [(e["note"], e.get("run")) for e in _doc(side)["labels"]] == [("a2", "run-a"), ("plain", None)]


def test_a_plain_label_replacing_an_entry_with_an_empty_run_drops_the_run(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    side = _write_sidecar(replay, {"schema": SCHEMA, "labels": [_entry(note="old", run="", ticket="T")]})
    save_label(str(replay), _label(note="new"))
    assert _doc(side)["labels"] == [{**label_record(_label(note="new")), "ticket": "T"}]


def test_the_temporary_file_is_written_in_the_sidecars_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "runs" / "replay.jsonl"
    replay.parent.mkdir()
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    made: list[str] = []
    real = labels_mod.make_temp_file

    def spy(folder: str) -> tuple[int, str]:
        fd, tmp = real(folder)
        made.append(tmp)
        return fd, tmp

    monkeypatch.setattr(labels_mod, "make_temp_file", spy)
    save_label(str(replay), _label())
    assert len(made) == 1 and os.path.dirname(made[0]) == str(replay.parent)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_a_new_sidecars_bits_are_read_write_less_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    replay = tmp_path / "replay.jsonl"
    old = os.umask(umask)
    try:
        save_label(str(replay), _label())
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(sidecar_path(str(replay))).st_mode) == mode


def test_a_failed_replace_is_a_read_error_naming_the_sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "replay.jsonl"

    def full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(labels_mod.os, "replace", full)
    with pytest.raises(ReadError) as info:
        save_label(str(replay), _label())
    assert (info.value.path, info.value.reason) == (sidecar_path(str(replay)), "cannot be written: No space left on device")
    assert list(tmp_path.iterdir()) == []
