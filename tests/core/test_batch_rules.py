"""core/triage/batch.py by rule: folder layouts, signatures, grouping and the report, on traces built in the test.

Each test pins one rule of the module's docstring (layouts, JSON shape) or of a function's docstring, on folders and
traces written in the test (a few spans each: milliseconds) and on divergences built by hand; triage itself is
stood in for where only how its verdict is carried matters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import TraceBuilder, make_span
from tracetui.core.changes import DivergenceType, FieldChange
from tracetui.core.diff import Divergence
from tracetui.core.diff.labels import Label
from tracetui.core.errors import ReadError
from tracetui.core.execute import Finished
from tracetui.core.readers.native import write_trace
from tracetui.core.triage.batch import (
    NO_DIVERGENCE,
    BatchReport,
    Case,
    CaseError,
    CaseResult,
    Group,
    batch,
    examine,
    find_pairs,
    group,
    scan_folder,
    signature,
    signature_text,
)


def _touch(root: Path, *names: str) -> None:
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}\n")


def _names(folder: Path) -> list[str]:
    return [c.name for c in scan_folder(str(folder)).cases]


# --- layouts (scan_folder) -------------------------------------------------------------------------------------


def test_a_missing_folder_and_a_file_are_read_errors_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="no such folder") as gone:
        scan_folder(str(tmp_path / "nope"))
    assert (gone.value.path, gone.value.reason) == (str(tmp_path / "nope"), "no such folder")
    (tmp_path / "f.jsonl").write_text("{}")
    with pytest.raises(ReadError) as file:
        scan_folder(str(tmp_path / "f.jsonl"))
    assert (file.value.path, file.value.reason) == (
        str(tmp_path / "f.jsonl"), "is a file; give the folder that holds the original/replay pairs")


def test_the_scan_keeps_the_folder_as_given(tmp_path: Path) -> None:
    _touch(tmp_path, "a/original.jsonl", "a/replay.jsonl")
    scan = scan_folder(str(tmp_path) + "/")
    assert scan.folder == str(tmp_path) + "/"


def test_files_at_the_top_are_a_case_named_after_the_folder_even_with_a_trailing_slash(tmp_path: Path) -> None:
    _touch(tmp_path / "incident", "original.jsonl", "replay.jsonl")
    assert _names(tmp_path / "incident") == ["incident"]
    assert [c.name for c in scan_folder(str(tmp_path / "incident") + "/").cases] == ["incident"]


def test_a_flat_pair_is_named_by_its_prefix_under_its_folder(tmp_path: Path) -> None:
    _touch(tmp_path, "x.original.jsonl", "x.replay.jsonl", "sub/deeper/y.original.json", "sub/deeper/y.replay.json")
    scan = scan_folder(str(tmp_path))
    assert [(c.name, c.original, c.replay) for c in scan.cases] == [
        ("sub/deeper/y", str(tmp_path / "sub" / "deeper" / "y.original.json"),
         str(tmp_path / "sub" / "deeper" / "y.replay.json")),
        ("x", str(tmp_path / "x.original.jsonl"), str(tmp_path / "x.replay.jsonl")),
    ]
    assert scan.unpaired == []


def test_several_replays_of_one_original_are_one_case_each_named_by_the_replay(tmp_path: Path) -> None:
    _touch(tmp_path, "c/original.jsonl", "c/replay-1.jsonl", "c/replay_2.jsonl", "n.original.json",
           "n.replay-a.json", "n.replay-b.json")
    scan = scan_folder(str(tmp_path))
    assert [c.name for c in scan.cases] == ["c/replay-1", "c/replay_2", "n/replay-a", "n/replay-b"]
    assert {c.original for c in scan.cases[:2]} == {str(tmp_path / "c" / "original.jsonl")}
    assert {c.original for c in scan.cases[2:]} == {str(tmp_path / "n.original.json")}


def test_with_originals_in_two_formats_each_replay_pairs_with_its_own_and_names_carry_the_extension(
        tmp_path: Path) -> None:
    _touch(tmp_path, "s/original.jsonl", "s/original.otlp.json", "s/replay.jsonl", "s/replay.otlp.json",
           "s/replay.yaml", "s/replay.csv")
    scan = scan_folder(str(tmp_path))
    assert [(c.name, Path(c.original).name, Path(c.replay).name) for c in scan.cases] == [
        ("s/replay.jsonl", "original.jsonl", "replay.jsonl"),
        ("s/replay.otlp.json", "original.otlp.json", "replay.otlp.json"),
    ]
    # a replay of neither format is unpaired, and the replays after it still pair (replay.csv comes first)
    assert scan.unpaired == [str(tmp_path / "s" / "replay.csv"), str(tmp_path / "s" / "replay.yaml")]


def test_two_replays_per_format_are_named_by_role_and_extension(tmp_path: Path) -> None:
    _touch(tmp_path, "s/original.jsonl", "s/original.otlp.json", "s/replay-1.jsonl", "s/replay-1.otlp.json",
           "s/replay-2.jsonl")
    assert _names(tmp_path) == ["s/replay-1.jsonl", "s/replay-1.otlp.json", "s/replay-2"]


def test_one_original_pairs_with_a_replay_of_another_extension(tmp_path: Path) -> None:
    _touch(tmp_path, "a/original.jsonl", "a/replay.otlp.json")
    scan = scan_folder(str(tmp_path))
    assert scan.cases == [Case("a", str(tmp_path / "a" / "original.jsonl"), str(tmp_path / "a" / "replay.otlp.json"))]
    assert scan.unpaired == []


def test_lonely_originals_and_replays_are_unpaired_sorted(tmp_path: Path) -> None:
    _touch(tmp_path, "z/original.jsonl", "b.replay.jsonl", "a.original.jsonl", "m/replay-1.jsonl")
    scan = scan_folder(str(tmp_path))
    assert scan.cases == []
    assert scan.unpaired == sorted(str(tmp_path / p) for p in
                                   ["z/original.jsonl", "b.replay.jsonl", "a.original.jsonl", "m/replay-1.jsonl"])


def test_dot_files_dot_folders_sidecars_and_folders_named_like_traces_are_skipped(tmp_path: Path) -> None:
    _touch(tmp_path, "a/original.jsonl", "a/replay.jsonl", "a/replay.jsonl.labels.json", "a/.draft.replay.jsonl",
           ".hidden/original.jsonl", ".hidden/replay.jsonl", "b/original.jsonl", "b/notes.md")
    (tmp_path / "b" / "replay.jsonl").mkdir()  # a folder, not a file
    scan = scan_folder(str(tmp_path))
    assert [c.name for c in scan.cases] == ["a"]
    assert scan.unpaired == [str(tmp_path / "b" / "original.jsonl")]


def test_names_are_in_numeric_order(tmp_path: Path) -> None:
    _touch(tmp_path, *(f"case-{i}/{side}.jsonl" for i in (10, 2, 1) for side in ("original", "replay")))
    _touch(tmp_path, "b/original.jsonl", "b/replay.jsonl", "a10b/original.jsonl", "a10b/replay.jsonl",
           "a9c/original.jsonl", "a9c/replay.jsonl")
    assert _names(tmp_path) == ["a9c", "a10b", "b", "case-1", "case-2", "case-10"]


def test_a_name_starting_with_a_number_comes_before_one_starting_with_text(tmp_path: Path) -> None:
    _touch(tmp_path, "alpha/original.jsonl", "alpha/replay.jsonl", "7up/original.jsonl", "7up/replay.jsonl",
           "b/2/original.jsonl", "b/2/replay.jsonl", "b/a/original.jsonl", "b/a/replay.jsonl")
    assert _names(tmp_path) == ["7up", "alpha", "b/2", "b/a"]


def test_a_case_folder_and_a_flat_case_of_the_same_name_are_both_kept_told_apart(tmp_path: Path) -> None:
    """The top folder is walked first: its flat x.original/x.replay is ``x``, the x/ folder's pair ``x (2)``."""
    _touch(tmp_path, "x.original.jsonl", "x.replay.jsonl", "x/original.jsonl", "x/replay.jsonl")
    by = {c.name: c for c in scan_folder(str(tmp_path)).cases}
    assert sorted(by) == ["x", "x (2)"]
    assert by["x"].original == str(tmp_path / "x.original.jsonl")
    assert by["x (2)"] == Case("x (2)", str(tmp_path / "x" / "original.jsonl"), str(tmp_path / "x" / "replay.jsonl"))


def test_in_one_folder_the_unprefixed_pair_comes_before_a_prefixed_one_of_the_same_name(tmp_path: Path) -> None:
    """Folder ``x`` holding original/replay (case ``x``) and x.original/x.replay (``x`` too): the unprefixed first."""
    _touch(tmp_path / "x", "original.jsonl", "replay.jsonl", "x.original.jsonl", "x.replay.jsonl")
    by = {c.name: c for c in scan_folder(str(tmp_path / "x")).cases}
    assert by["x"].original == str(tmp_path / "x" / "original.jsonl")
    assert by["x (2)"].original == str(tmp_path / "x" / "x.original.jsonl")


def test_three_cases_of_one_name_are_numbered_in_walk_order(tmp_path: Path) -> None:
    _touch(tmp_path, "x.original.jsonl", "x.replay.jsonl", "x/original.jsonl", "x/replay.jsonl",
           "x/x.original.jsonl", "x/x.replay.jsonl")
    # the top folder's x, then in x/: its unprefixed pair (x), then x/x (a name of its own)
    assert _names(tmp_path) == ["x", "x (2)", "x/x"]


def test_find_pairs_is_the_scans_cases(tmp_path: Path) -> None:
    _touch(tmp_path, "a/original.jsonl", "a/replay.jsonl", "lonely/original.jsonl")
    assert find_pairs(str(tmp_path)) == scan_folder(str(tmp_path)).cases
    assert [c.name for c in find_pairs(str(tmp_path))] == ["a"]


# --- signature --------------------------------------------------------------------------------------------------


def _div(original: Any, replay: Any, *paths: str, typ: DivergenceType = DivergenceType.ARGS_MISMATCH) -> Divergence:
    return Divergence(typ, 3, original, replay, tuple(FieldChange(p, 1, 2) for p in paths), 0)


def test_a_tool_span_is_named_by_its_tool() -> None:
    span = make_span("tool", "call it", tool_name="get_account")
    assert signature(_div(span, span, "tool.arguments.id")) == ("args_mismatch", "tool", "get_account",
                                                                ("tool.arguments.id",))


def test_an_llm_span_is_named_by_its_model_a_retrieval_span_by_its_index() -> None:
    llm = make_span("llm", "chat", model="gpt-4o")
    assert signature(_div(llm, llm, "llm.messages", typ=DivergenceType.INPUT_MISMATCH))[1:3] == ("llm", "gpt-4o")
    docs = make_span("retrieval", "search docs", index="kb-v2")
    assert signature(_div(docs, docs, "retrieval.query"))[1:3] == ("retrieval", "kb-v2")


def test_other_spans_and_spans_without_the_field_are_named_by_the_span_name() -> None:
    agent = make_span("agent", "planner", model="ignored")
    assert signature(_div(agent, agent, "agent.input"))[2] == "planner"
    llm = make_span("llm", "chat")  # no model
    assert signature(_div(llm, llm, "llm.messages"))[2] == "chat"
    empty = make_span("llm", "chat2", model="")
    assert signature(_div(empty, empty, "llm.messages"))[2] == "chat2"


def test_without_any_name_the_name_is_none_and_shown_as_a_dash() -> None:
    nameless = make_span("agent", "")
    sig = signature(_div(nameless, nameless, "agent.output", typ=DivergenceType.OUTPUT_MISMATCH))
    assert sig == ("output_mismatch", "agent", None, ("agent.output",))
    assert signature_text(sig) == "output_mismatch agent - [agent.output]"


def test_a_name_that_is_not_text_is_given_as_text() -> None:
    docs = make_span("retrieval", "search", index=7)
    assert signature(_div(docs, docs, "retrieval.query"))[2] == "7"


def test_the_original_side_names_the_signature_the_replay_when_there_is_no_original() -> None:
    old = make_span("tool", "a", tool_name="old_tool")
    new = make_span("tool", "b", tool_name="new_tool")
    assert signature(_div(old, new, "tool.tool_name"))[2] == "old_tool"
    assert signature(_div(None, new, "tool.arguments", typ=DivergenceType.UNRECORDED_CALL)) == (
        "unrecorded_call", "tool", "new_tool", ("tool.arguments",))
    assert signature(_div(old, None, "tool.arguments", typ=DivergenceType.MISSING_CALL))[:3] == (
        "missing_call", "tool", "old_tool")


def test_fields_drop_list_indices_and_come_deduplicated_and_sorted() -> None:
    llm = make_span("llm", "chat", model="m")
    sig = signature(_div(llm, llm, "llm.messages[3].content", "llm.messages[12].content", "llm.model",
                         "llm.tools[0].name[1]", typ=DivergenceType.INPUT_MISMATCH))
    assert sig[3] == ("llm.messages[].content", "llm.model", "llm.tools[].name[]")


def test_signature_text_lists_type_kind_name_and_fields() -> None:
    assert signature_text(("args_mismatch", "tool", "get_billing_account", ("tool.arguments.a", "tool.arguments.b"))) \
        == "args_mismatch tool get_billing_account [tool.arguments.a, tool.arguments.b]"
    assert signature_text(("missing_span", "agent", "x", ())) == "missing_span agent x []"


# --- the report's JSON ------------------------------------------------------------------------------------------


def _result(name: str, verdict: str | None = None, cause: str | None = None, **kw: Any) -> CaseResult:
    return CaseResult(Case(name, f"{name}/original.jsonl", f"{name}/replay.jsonl"), row=kw.pop("row", 2),
                      original_span_id=kw.pop("original_span_id", "o1"), replay_span_id=kw.pop("replay_span_id", None),
                      divergences=kw.pop("divergences", 4), verdict=verdict, cause=cause, **kw)


SIG_A = ("args_mismatch", "tool", "lookup", ("tool.arguments.id",))
SIG_B = ("input_mismatch", "llm", "gpt-4o", ("llm.messages[].content",))


def test_a_case_result_in_json_holds_every_field() -> None:
    label = Label("args_mismatch:o1:-", "fixture_mismatch", "new ids", "2026-11-12T17:03:11Z", "args_mismatch", "o1",
                  None)
    r = _result("c1", "variance", "data tool x", label=label)
    assert r.to_json() == {
        "name": "c1", "original": "c1/original.jsonl", "replay": "c1/replay.jsonl", "row": 2,
        "original_span_id": "o1", "replay_span_id": None, "divergences": 4,
        "label": {"key": "args_mismatch:o1:-", "label": "fixture_mismatch", "note": "new ids",
                  "created": "2026-11-12T17:03:11Z", "type": "args_mismatch", "original_span_id": "o1",
                  "replay_span_id": None},
        "verdict": "variance", "cause": "data tool x",
    }
    assert _result("c2").to_json()["label"] is None


def test_a_group_in_json_names_its_signature_count_and_cases() -> None:
    g = Group(SIG_A, [_result("c1"), _result("c2")])
    assert g.count == 2
    assert g.to_json() == {
        "signature": {"type": "args_mismatch", "kind": "tool", "name": "lookup", "fields": ["tool.arguments.id"]},
        "count": 2,
        "cases": [_result("c1").to_json(), _result("c2").to_json()],
    }


def test_the_report_in_json_has_every_section() -> None:
    report = BatchReport(
        folder="runs/", cases=5, groups=[Group(SIG_A, [_result("c1", "variance")])],
        no_divergence=[Case("same", "same/o.jsonl", "same/r.jsonl"), Case("quiet", "q/o.jsonl", "q/r.jsonl")],
        errors=[CaseError("bad", "bad/replay.jsonl", "bad/replay.jsonl: file is empty")],
        unpaired=["runs/x/original.jsonl"], warnings=[("c1", "reviewer labels not shown: broken")],
        verdicts={"same": "not_reproduced", "c1": "variance"})
    data = report.to_json()
    assert data == {
        "schema_version": 1,
        "folder": "runs/",
        "cases": 5,
        "groups": [Group(SIG_A, [_result("c1", "variance")]).to_json()],
        "causes": [{"verdict": "variance", "cause": "", "count": 1, "cases": ["c1"],
                    "signatures": [signature_text(SIG_A)], "split_by_wording": False}],
        "no_divergence": [{"name": "same", "original": "same/o.jsonl", "replay": "same/r.jsonl",
                           "verdict": "not_reproduced"},
                          {"name": "quiet", "original": "q/o.jsonl", "replay": "q/r.jsonl", "verdict": None}],
        "errors": [{"name": "bad", "path": "bad/replay.jsonl", "message": "bad/replay.jsonl: file is empty"}],
        "unpaired": ["runs/x/original.jsonl"],
        "warnings": [{"name": "c1", "message": "reviewer labels not shown: broken"}],
    }
    assert data["unpaired"] is not report.unpaired


def test_diverged_counts_the_cases_of_every_group() -> None:
    report = BatchReport("", 9, groups=[Group(SIG_A, [_result("a"), _result("b")]), Group(SIG_B, [_result("c")])])
    assert report.diverged == 3
    assert BatchReport("", 0).diverged == 0


def test_causes_group_cases_by_verdict_and_cause_largest_first_across_signatures() -> None:
    report = BatchReport("", 6, groups=[
        Group(SIG_A, [_result("a1", "code_or_config_change", "config model.id"), _result("a2", "variance"),
                      _result("a3", "code_or_config_change", "config model.id"), _result("a4")]),
        Group(SIG_B, [_result("b1", "code_or_config_change", "config model.id"), _result("b2", "variance", ""),
                      _result("b3", "code_or_config_change", "config model.id")]),
    ])
    assert report.causes == [
        {"verdict": "code_or_config_change", "cause": "config model.id", "count": 4, "cases": ["a1", "a3", "b1", "b3"],
         "signatures": [signature_text(SIG_A), signature_text(SIG_B)], "split_by_wording": True},
        {"verdict": "variance", "cause": "", "count": 2, "cases": ["a2", "b2"],
         "signatures": [signature_text(SIG_A), signature_text(SIG_B)], "split_by_wording": True},
    ]


def test_causes_of_equal_size_are_ordered_by_verdict_then_cause() -> None:
    report = BatchReport("", 4, groups=[Group(SIG_A, [
        _result("a", "variance", "z"), _result("b", "model_or_prompt", "y"), _result("c", "variance", "a"),
        _result("d", "model_or_prompt", "b")])])
    assert [(c["verdict"], c["cause"]) for c in report.causes] == [
        ("model_or_prompt", "b"), ("model_or_prompt", "y"), ("variance", "a"), ("variance", "z")]
    assert all(c["split_by_wording"] is False and c["count"] == 1 for c in report.causes)


# --- group: order, errors, progress (a stand-in executor, no files) ---------------------------------------------


class _Reversed:
    """An executor that finishes the tasks last to first, and loses the ones named in ``lost``."""

    workers = 1

    def __init__(self, lost: Iterable[int] = (), fail: Iterable[int] = ()) -> None:
        self.lost, self.fail = set(lost), set(fail)

    def describe(self) -> str:
        return "reversed"

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Finished]:
        todo = list(items)
        for i in reversed(range(len(todo))):
            if i in self.fail:
                yield Finished(i, None, "OSError: worker died")
            elif i in self.lost:
                yield Finished(i, None)
            else:
                yield Finished(i, fn(todo[i]))


def _fake_examine(monkeypatch: pytest.MonkeyPatch, outcomes: dict[str, tuple[str, Any, list[tuple[str, str]],
                                                                             str | None]]) -> list[Any]:
    import tracetui.core.triage.batch as batch_mod

    seen: list[Any] = []

    def fake(job: tuple[Case, bool]) -> Any:
        seen.append(job)
        return outcomes[job[0].name]

    monkeypatch.setattr(batch_mod, "examine", fake)
    return seen


def test_group_orders_by_size_then_signature_text_and_keeps_cases_in_given_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [Case(n, f"{n}.o", f"{n}.r") for n in ("b1", "a1", "s", "b2", "e", "c1")]
    sig_c = ("args_mismatch", "tool", "alpha", ())
    outcomes = {
        "b1": ("diverged", (SIG_B, _result("b1")), [("b1", "w1")], "variance"),
        "a1": ("diverged", (SIG_A, _result("a1")), [], None),
        "s": ("same", cases[2], [], "not_reproduced"),
        "b2": ("diverged", (SIG_B, _result("b2")), [("b2", "w2")], None),
        "e": ("error", CaseError("e", "e.o", "e.o: broken"), [], None),
        "c1": ("diverged", (sig_c, _result("c1")), [], "model_or_prompt"),
    }
    seen = _fake_examine(monkeypatch, outcomes)
    progress: list[tuple[int, int]] = []
    report = group(cases, progress=lambda d, t: progress.append((d, t)), folder="runs", unpaired=("u1",),
                   verdicts=False, executor=_Reversed())
    assert [job[1] for job in seen] == [False] * 6
    assert progress == [(i, 6) for i in range(1, 7)]
    assert (report.folder, report.cases, report.unpaired) == ("runs", 6, ["u1"])
    assert [(g.signature, [r.case.name for r in g.cases]) for g in report.groups] == [
        (SIG_B, ["b1", "b2"]), (sig_c, ["c1"]), (SIG_A, ["a1"])]
    assert report.no_divergence == [cases[2]]
    assert report.errors == [CaseError("e", "e.o", "e.o: broken")]
    assert report.warnings == [("b1", "w1"), ("b2", "w2")]
    assert report.verdicts == {"b1": "variance", "s": "not_reproduced", "c1": "model_or_prompt"}


def test_group_asks_for_verdicts_by_default_and_runs_serially_without_an_executor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [Case("a", "a.o", "a.r"), Case("b", "b.o", "b.r")]
    seen = _fake_examine(monkeypatch, {"a": ("same", cases[0], [], None), "b": ("same", cases[1], [], None)})
    report = group(cases)
    assert [job for job in seen] == [(cases[0], True), (cases[1], True)]
    assert report.no_divergence == cases and report.folder == "" and report.unpaired == []


def test_a_task_that_failed_or_was_lost_on_its_worker_is_an_error_of_its_case(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [Case(n, f"{n}/original.jsonl", f"{n}/replay.jsonl") for n in ("a", "b", "c")]
    _fake_examine(monkeypatch, {"a": ("same", cases[0], [], None), "b": ("same", cases[1], [], None),
                                "c": ("same", cases[2], [], None)})
    report = group(cases, executor=_Reversed(lost=[0], fail=[2]), verdicts=False)
    assert report.errors == [
        CaseError("a", "a/original.jsonl", "a/original.jsonl: the task failed on its worker: None"),
        CaseError("c", "c/original.jsonl", "c/original.jsonl: the task failed on its worker: OSError: worker died"),
    ]
    assert report.no_divergence == [cases[1]]


# --- examine: one pair written in the test ----------------------------------------------------------------------


def _pair(folder: Path, replay_arg: str = "AC1", *, same: bool = False) -> Case:
    folder.mkdir(parents=True, exist_ok=True)
    for side in ("original", "replay"):
        t = TraceBuilder(prefix="s")
        root = t.add("agent", "support-agent", input={"q": "pause"})
        arg = "AC1" if side == "original" or same else replay_arg
        t.add("tool", "get_account", parent=root, arguments={"account_id": arg}, output={"ok": True})
        t.add("tool", "pause", parent=root, arguments={"account_id": arg}, output={"ok": True})
        write_trace(str(folder / f"{side}.jsonl"), t.trace())
    return Case(folder.name, str(folder / "original.jsonl"), str(folder / "replay.jsonl"))


def test_a_diverged_pair_gives_its_signature_first_row_span_ids_and_count(tmp_path: Path) -> None:
    case = _pair(tmp_path / "c", "AC2")
    kind, value, warnings, verdict = examine((case, False))
    assert (kind, warnings, verdict) == ("diverged", [], None)
    sig, found = value
    assert sig == ("args_mismatch", "tool", "get_account", ("tool.arguments.account_id",))
    assert found == CaseResult(case, row=1, original_span_id="s1", replay_span_id="s1", divergences=2)


def test_a_pair_without_divergence_is_same(tmp_path: Path) -> None:
    case = _pair(tmp_path / "c", same=True)
    assert examine((case, False)) == ("same", case, [], None)


def test_a_labelled_first_divergence_carries_its_label_and_a_damaged_sidecar_warns(tmp_path: Path) -> None:
    from tracetui.core.diff.labels import save_label

    case = _pair(tmp_path / "c", "AC2")
    label = Label("args_mismatch:s1:s1", "fixture_mismatch", "new ids", "2026-11-12T17:03:11Z", "args_mismatch", "s1",
                  "s1")
    save_label(case.replay, label)
    _, (_, found), warnings, _ = examine((case, False))
    assert found.label == label and warnings == []
    Path(case.replay + ".labels.json").write_text("{not json")
    _, (_, found), warnings, _ = examine((case, False))
    assert found.label is None
    assert len(warnings) == 1 and warnings[0][0] == "c"
    assert warnings[0][1].startswith("reviewer labels not shown: ")


def test_an_unreadable_side_is_an_error_blaming_that_file(tmp_path: Path) -> None:
    case = _pair(tmp_path / "c", "AC2")
    Path(case.replay).write_text("")
    kind, err, warnings, verdict = examine((case, True))
    assert (kind, warnings, verdict) == ("error", [], None)
    assert err.name == "c" and err.path == case.replay and "file is empty" in err.message
    gone = Case("g", str(tmp_path / "nope.jsonl"), case.original)
    kind, err, _, _ = examine((gone, False))
    assert kind == "error" and err.path == gone.original and "no such file" in err.message


@pytest.mark.parametrize(("stage", "blamed"), [("read_trace", "original"), ("read_replay", "replay"),
                                               ("diff_traces", "original")])
def test_a_value_error_blames_the_file_being_read_or_the_original_when_diffing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str, blamed: str) -> None:
    import tracetui.core.diff as diff_mod
    import tracetui.core.readers as readers_mod

    case = _pair(tmp_path / "c", "AC2")

    def boom(*_a: object, **_k: object) -> None:
        raise ValueError("bad number")

    monkeypatch.setattr(diff_mod if stage == "diff_traces" else readers_mod, stage, boom)
    path = case.original if blamed == "original" else case.replay
    assert examine((case, False)) == ("error", CaseError("c", path, f"{path}: ValueError: bad number"), [], None)


def test_any_other_exception_is_an_internal_error_of_that_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracetui.core.readers as readers_mod

    case = _pair(tmp_path / "c", "AC2")

    def boom(*_a: object, **_k: object) -> None:
        raise KeyError("k")

    monkeypatch.setattr(readers_mod, "read_replay", boom)
    assert examine((case, False)) == ("error", CaseError(
        "c", case.replay, f"{case.replay}: internal error: KeyError: 'k' (a bug in tracetui; please report it)"), [],
        None)


class _Triaged:
    def __init__(self, verdict: str, cause: str) -> None:
        self.verdict, self.cause = verdict, cause


def test_the_verdict_and_cause_come_from_triage_of_the_replay_as_one_trial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracetui.core.triage as triage_mod

    calls: list[tuple[Any, Any]] = []

    def fake(original: Any, trials: Any) -> _Triaged:
        calls.append((original, trials))
        return _Triaged("code_or_config_change", "config model.id")

    monkeypatch.setattr(triage_mod, "triage", fake)
    case = _pair(tmp_path / "c", "AC2")
    kind, (_, found), warnings, verdict = examine((case, True))
    assert (kind, verdict, found.verdict, found.cause, warnings) == (
        "diverged", "code_or_config_change", "code_or_config_change", "config model.id", [])
    assert len(calls) == 1 and calls[0][0].path == case.original and [t.path for t in calls[0][1]] == [case.replay]
    monkeypatch.setattr(triage_mod, "triage", lambda o, t: _Triaged("not_reproduced", ""))
    same = _pair(tmp_path / "s", same=True)
    assert examine((same, True)) == ("same", same, [], "not_reproduced")
    _, (_, found), _, _ = examine((case, True))
    assert found.cause is None


def test_a_triage_failure_leaves_the_pair_without_verdict_and_warns(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import tracetui.core.triage as triage_mod

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("triage broke")

    monkeypatch.setattr(triage_mod, "triage", boom)
    case = _pair(tmp_path / "c", "AC2")
    kind, (_, found), warnings, verdict = examine((case, True))
    assert (kind, verdict, found.verdict, found.cause) == ("diverged", None, None, None)
    assert warnings == [("c", "no triage verdict: RuntimeError: triage broke")]


# --- batch: scan then group -------------------------------------------------------------------------------------


def test_batch_groups_the_folders_pairs_and_reports_its_unpaired_files(tmp_path: Path) -> None:
    _pair(tmp_path / "runs" / "a", "AC2")
    _pair(tmp_path / "runs" / "b", "AC3")
    _pair(tmp_path / "runs" / "same", same=True)
    _touch(tmp_path / "runs", "lonely/original.jsonl")
    progress: list[tuple[int, int]] = []

    class Serial(_Reversed):
        pass

    folder = str(tmp_path / "runs")
    report = batch(folder, progress=lambda d, t: progress.append((d, t)), executor=Serial())
    assert report.folder == folder and report.cases == 3
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert [(g.count, [r.case.name for r in g.cases]) for g in report.groups] == [(2, ["a", "b"])]
    assert [c.name for c in report.no_divergence] == ["same"]
    assert report.unpaired == [str(tmp_path / "runs" / "lonely" / "original.jsonl")]
    assert set(report.verdicts) == {"a", "b", "same"}
    assert NO_DIVERGENCE == "no divergence"


def test_batch_examines_the_pairs_on_the_executor_given(tmp_path: Path) -> None:
    """A pair whose task failed on the executor's worker is an error of that pair (the executor was used)."""
    case = _pair(tmp_path / "runs" / "a", "AC2")
    report = batch(str(tmp_path / "runs"), executor=_Reversed(fail=[0]))
    assert report.errors == [CaseError("a", case.original,
                                       f"{case.original}: the task failed on its worker: OSError: worker died")]
    assert report.groups == [] and report.cases == 1


def test_a_tracetui_error_blames_the_file_it_names_else_the_file_being_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay read on demand while diffing (its file changed since): the error names the replay, not the original."""
    import tracetui.core.diff as diff_mod
    from tracetui.core.errors import TracetuiError

    case = _pair(tmp_path / "c", "AC2")

    def changed(*_a: object, **_k: object) -> None:
        raise ReadError(case.replay, "changed since it was loaded")

    monkeypatch.setattr(diff_mod, "diff_traces", changed)
    assert examine((case, False)) == (
        "error", CaseError("c", case.replay, f"{case.replay}: changed since it was loaded"), [], None)

    def pathless(*_a: object, **_k: object) -> None:
        raise TracetuiError("no path here")

    monkeypatch.setattr(diff_mod, "diff_traces", pathless)
    assert examine((case, False)) == ("error", CaseError("c", case.original, "no path here"), [], None)


def test_a_call_only_in_the_replay_has_no_original_span_id(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    for side in ("original", "replay"):
        t = TraceBuilder(prefix=side[0])
        root = t.add("agent", "support-agent", input={"q": "pause"})
        t.add("tool", "get_account", parent=root, arguments={"account_id": "AC1"}, output={"ok": True})
        if side == "replay":
            t.add("tool", "refund", parent=root, arguments={"account_id": "AC1"}, output={"ok": True})
        write_trace(str(folder / f"{side}.jsonl"), t.trace())
    case = Case("c", str(folder / "original.jsonl"), str(folder / "replay.jsonl"))
    kind, (sig, found), _, _ = examine((case, False))
    assert kind == "diverged" and sig[:3] == ("unrecorded_call", "tool", "refund")
    assert (found.original_span_id, found.replay_span_id) == (None, "r2")
