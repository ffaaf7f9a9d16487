"""Batch grouping: folder layouts, signatures, and 25 generated pairs grouped by first divergence."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from tracetui.core.triage.batch import (
    Case,
    batch,
    find_pairs,
    group,
    scan_folder,
    signature,
    signature_text,
)
from tracetui.core.diff import diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.diff.labels import Label, divergence_key, save_label
from tracetui.core.readers import read_trace

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_runs"


def _builder() -> ModuleType:
    path = ROOT / "tests" / "data" / "batch" / "build_cases.py"
    spec = importlib.util.spec_from_file_location("batch_build_cases", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("batch_build_cases", mod)
    spec.loader.exec_module(mod)
    return mod


B = _builder()


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    return B.build(tmp_path / "cases")


# --- layouts -------------------------------------------------------------------------------


def _touch(root: Path, *names: str) -> None:
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}\n")


def test_layouts_folder_flat_and_several_replays(tmp_path: Path) -> None:
    """CASE/ folders, NAME.original/NAME.replay files, replay-N beside one original; any extension."""
    _touch(tmp_path, "a/original.jsonl", "a/replay.jsonl",
           "b/original.otlp.json", "b/replay.otlp.json", "b/NOTES.md",
           "c/original.json", "c/replay-1.json", "c/replay-2.json", "c/replay-10.json",
           "flat/x.original.jsonl", "flat/x.replay.jsonl", "y.original.json", "y.replay-1.json", "y.replay-2.json",
           "deep/er/original.jsonl", "deep/er/replay.jsonl")
    cases = find_pairs(str(tmp_path))
    assert [c.name for c in cases] == ["a", "b", "c/replay-1", "c/replay-2", "c/replay-10", "deep/er",
                                      "flat/x", "y/replay-1", "y/replay-2"]
    by = {c.name: c for c in cases}
    assert by["b"] == Case("b", str(tmp_path / "b" / "original.otlp.json"), str(tmp_path / "b" / "replay.otlp.json"))
    assert by["c/replay-10"].original == str(tmp_path / "c" / "original.json")
    assert by["flat/x"].replay == str(tmp_path / "flat" / "x.replay.jsonl")


def test_originals_in_two_formats_pair_by_extension(tmp_path: Path) -> None:
    """The sample layout: original.jsonl + replay.jsonl and original.otlp.json + replay.otlp.json in one folder."""
    _touch(tmp_path, "s/original.jsonl", "s/replay.jsonl", "s/original.otlp.json", "s/replay.otlp.json", "s/replay.yaml")
    scan = scan_folder(str(tmp_path))
    assert [(c.name, Path(c.original).name, Path(c.replay).name) for c in scan.cases] == [
        ("s/replay.jsonl", "original.jsonl", "replay.jsonl"),
        ("s/replay.otlp.json", "original.otlp.json", "replay.otlp.json"),
    ]
    assert scan.unpaired == [str(tmp_path / "s" / "replay.yaml")]


def test_the_top_folder_itself_can_be_a_case(tmp_path: Path) -> None:
    _touch(tmp_path / "incident", "original.jsonl", "replay.jsonl")
    assert [c.name for c in find_pairs(str(tmp_path / "incident"))] == ["incident"]


def test_unpaired_sidecars_hidden_and_other_files(tmp_path: Path) -> None:
    """Lonely originals/replays are unpaired; labels sidecars, dot-files, dot-folders and other names are ignored."""
    _touch(tmp_path, "a/original.jsonl", "a/replay.jsonl", "a/replay.jsonl.labels.json", "a/fixture.jsonl",
           "lonely/original.jsonl", "orphan.replay.jsonl", ".git/original.jsonl", ".git/replay.jsonl",
           "b/.original.jsonl.swp", "b/notes.txt")
    scan = scan_folder(str(tmp_path))
    assert [c.name for c in scan.cases] == ["a"]
    assert scan.unpaired == [str(tmp_path / "lonely" / "original.jsonl"), str(tmp_path / "orphan.replay.jsonl")]


def test_missing_folder_or_a_file_is_a_read_error(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="no such folder"):
        find_pairs(str(tmp_path / "nope"))
    (tmp_path / "f.jsonl").write_text("{}")
    with pytest.raises(ReadError, match="is a file"):
        find_pairs(str(tmp_path / "f.jsonl"))


# --- signature -----------------------------------------------------------------------------


def test_signature_of_the_scheduling_sample_normalises_list_indices() -> None:
    d = diff_traces(read_trace(str(SAMPLES / "scheduling" / "original.jsonl")), read_trace(str(SAMPLES / "scheduling" / "replay.jsonl")))
    assert d.first is not None
    assert [f.path for f in d.first.fields] == ["llm.prompt_version", "llm.messages[0].content"]
    sig = signature(d.first)
    assert sig == ("input_mismatch", "llm", "scripted-scheduler", ("llm.messages[].content", "llm.prompt_version"))
    assert signature_text(sig) == "input_mismatch llm scripted-scheduler [llm.messages[].content, llm.prompt_version]"


def test_signature_names_the_tool_of_a_tool_span() -> None:
    d = diff_traces(read_trace(str(SAMPLES / "subscription_pause" / "original.jsonl")),
                    read_trace(str(SAMPLES / "subscription_pause" / "replay.jsonl")))
    assert d.first is not None
    typ, kind, name, fields = signature(d.first)
    assert (typ, kind, name) == ("args_mismatch", "tool", "get_billing_account")
    assert "tool.arguments.account_id" in fields and list(fields) == sorted(fields)


# --- 25 pairs ------------------------------------------------------------------------------


def test_batch_of_25_pairs_groups_by_first_divergence_largest_first(cases_dir: Path) -> None:
    calls: list[tuple[int, int]] = []
    report = batch(str(cases_dir), progress=lambda done, total: calls.append((done, total)))
    assert report.cases == B.PAIRS == 25
    assert calls == [(i, 25) for i in range(1, 26)]
    got = [(g.count, *g.signature) for g in report.groups]
    assert [(c, t, k, n) for c, t, k, n, _ in got] == [(c, t, k, n) for c, t, k, n, _ in B.EXPECTED_GROUPS]
    for (_, *_rest, fields), (_, _, _, _, want) in zip(got, B.EXPECTED_GROUPS, strict=True):
        if want is not None:
            assert list(fields) == want
    assert [r.case.name for r in report.groups[0].cases] == B.ARGS_CASES
    assert [r.case.name for r in report.groups[1].cases] == B.PROMPT_CASES
    assert sorted(c.name for c in report.no_divergence) == sorted(B.NO_DIVERGENCE)
    assert [(e.name, Path(e.path).name) for e in report.errors] == [("broken", "replay.jsonl")]
    assert "format not recognised" in report.errors[0].message
    assert report.unpaired == [str(cases_dir / p) for p in B.UNPAIRED]
    assert report.diverged == 19


def test_group_cases_carry_the_first_divergence_row_and_span_ids(cases_dir: Path) -> None:
    report = batch(str(cases_dir))
    args = report.groups[0].cases[0]
    assert (args.row, args.original_span_id, args.divergences) == (3, B.SECOND_BILLING_CALL, 1)
    assert args.replay_span_id == B.SECOND_BILLING_CALL  # the replay is an edited copy: same ids
    dropped = report.groups[2].cases[0]
    assert (dropped.original_span_id, dropped.replay_span_id) == (B.SEARCH_ORDERS, None)


def test_batch_json_shape(cases_dir: Path) -> None:
    data = orjson.loads(orjson.dumps(batch(str(cases_dir)).to_json()))
    assert set(data) >= {"schema_version", "folder", "cases", "groups", "no_divergence", "errors", "unpaired"}
    assert data["schema_version"] == 1 and data["cases"] == 25 and data["folder"] == str(cases_dir)
    g = data["groups"][0]
    assert g["signature"] == {"type": "args_mismatch", "kind": "tool", "name": "get_billing_account",
                              "fields": ["tool.arguments.account_id"]}
    assert g["count"] == 9 == len(g["cases"])
    assert set(g["cases"][0]) >= {"name", "original", "replay", "row", "original_span_id", "replay_span_id"}
    assert data["errors"][0]["name"] == "broken" and data["errors"][0]["path"].endswith("replay.jsonl")
    assert {c["name"] for c in data["no_divergence"]} == set(B.NO_DIVERGENCE)


def test_ties_are_ordered_by_signature_text(cases_dir: Path) -> None:
    ones = [g for g in batch(str(cases_dir)).groups if g.count == 1]
    texts = [signature_text(g.signature) for g in ones]
    assert texts == sorted(texts) and len(texts) == 2


def test_an_unreadable_original_never_stops_the_batch(tmp_path: Path) -> None:
    """Errors from either side, or a missing file, become entries; the other pairs are still grouped."""
    good = Case("good", str(SAMPLES / "scheduling" / "original.jsonl"), str(SAMPLES / "scheduling" / "replay.jsonl"))
    (tmp_path / "empty.jsonl").write_text("")
    bad_original = Case("bad-original", str(tmp_path / "empty.jsonl"), good.replay)
    gone = Case("gone", good.original, str(tmp_path / "gone.jsonl"))
    report = group([bad_original, good, gone])
    assert [(e.name, e.path) for e in report.errors] == [("bad-original", str(tmp_path / "empty.jsonl")),
                                                         ("gone", str(tmp_path / "gone.jsonl"))]
    assert "file is empty" in report.errors[0].message and "no such file" in report.errors[1].message
    assert [g.count for g in report.groups] == [1]


def test_a_labelled_first_divergence_carries_its_label(cases_dir: Path) -> None:
    replay = cases_dir / "args-02" / "replay.jsonl"
    d = diff_traces(read_trace(str(cases_dir / "args-02" / "original.jsonl")), read_trace(str(replay)))
    assert d.first is not None
    save_label(str(replay), Label(divergence_key(d.first), "fixture_mismatch", "new id format", "2026-11-12T17:03:11Z",
                                  d.first.type.value, d.first.original.span_id, d.first.replay.span_id))
    (cases_dir / "args-03" / "replay.jsonl.labels.json").write_text("{not json")
    report = batch(str(cases_dir))
    assert report.cases == 25  # the sidecars are not cases
    labels = {r.case.name: r.label for r in report.groups[0].cases}
    assert labels["args-02"] is not None and labels["args-02"].label == "fixture_mismatch"
    assert labels["args-01"] is None and labels["args-03"] is None
    assert [n for n, _ in report.warnings] == ["args-03"]
    assert "labels not shown" in report.warnings[0][1]
    assert report.to_json()["groups"][0]["cases"][1]["label"]["note"] == "new id format"


def test_the_bundled_samples_folder_is_a_batch() -> None:
    """sample_runs/ itself: four pairs (order_lookup in two formats), every one diverged."""
    report = batch(str(SAMPLES))
    assert report.cases == 4 and report.diverged == 4 and not report.errors
    assert report.groups[0].count == 2  # order_lookup as tracetui/1 and as OTLP: same signature
    assert {r.case.name for r in report.groups[0].cases} == {"order_lookup/replay.jsonl", "order_lookup/replay.otlp.json"}


def test_copying_a_case_elsewhere_keeps_its_signature(tmp_path: Path, cases_dir: Path) -> None:
    shutil.copytree(cases_dir / "prompt-1", tmp_path / "other" / "p")
    report = batch(str(tmp_path / "other"))
    assert [g.signature for g in report.groups] == [batch(str(cases_dir)).groups[1].signature]


def test_each_pair_gets_the_triage_verdict(cases_dir: Path) -> None:
    """The replay as one trial: a prompt-version change is code_or_config_change (issue 5); every verdict is a known one."""
    from tracetui.core.triage import VERDICTS

    report = batch(str(cases_dir))
    assert {r.verdict for r in report.groups[1].cases} == {"code_or_config_change"}
    verdicts = [r.verdict for g in report.groups for r in g.cases] + [report.verdicts[c.name] for c in report.no_divergence]
    assert len(verdicts) == 24 and set(verdicts) <= set(VERDICTS)
    data = report.to_json()
    assert data["groups"][1]["cases"][0]["verdict"] == "code_or_config_change"
    assert all(c["verdict"] in VERDICTS for c in data["no_divergence"])
    quiet = group(find_pairs(str(cases_dir)), verdicts=False)
    assert all(r.verdict is None for g in quiet.groups for r in g.cases) and quiet.verdicts == {}


def test_a_triage_failure_is_a_warning_not_an_error(cases_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracetui.core.triage as triage_mod

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("triage broke")

    monkeypatch.setattr(triage_mod, "triage", boom)
    report = batch(str(cases_dir))
    assert [g.count for g in report.groups] == [9, 6, 2, 1, 1] and len(report.errors) == 1
    assert len(report.warnings) == 24 and report.warnings[0][1] == "no triage verdict: RuntimeError: triage broke"
