"""Rules of core/diff/report.py: the diff report's shape, run changes, not-a-replay, span paths, labels.

Each expectation is written from the module's docstring (the report's shape, ``RUN_FIELDS``, "absent", the span
path by name from the original side), on runs built here with ``tests.builders``.
"""

from __future__ import annotations

from typing import Any

import orjson

from tests.builders import TraceBuilder, make_span
from tracetui.core.diff import diff_traces
from tracetui.core.diff.compare import ABSENT, FieldChange
from tracetui.core.diff.comparable import Unchecked
from tracetui.core.diff.labels import Label, divergence_key
from tracetui.core.diff.report import (
    RUN_FIELDS,
    SCHEMA_VERSION,
    diff_report,
    divergence_record,
    not_a_replay,
    run_changes,
    span_path,
)
from tracetui.core.diff.trace_diff import Divergence, DivergenceType
from tracetui.core.model import ReadIssue, Trace

# --- run_changes ----------------------------------------------------------------------------------


def test_run_fields_are_the_documented_inputs_of_a_run() -> None:
    assert RUN_FIELDS == ("code_version", "prompt_versions", "model", "tool_schema_hash", "clock", "input")


def test_each_run_field_that_differs_is_a_change_in_run_fields_order() -> None:
    a = {"code_version": "1", "prompt_versions": "p1", "model": "m1", "tool_schema_hash": "h1", "clock": "c1",
         "input": "i1"}
    b = {"input": "i2", "clock": "c2", "tool_schema_hash": "h2", "model": "m2", "prompt_versions": "p2",
         "code_version": "2"}
    assert run_changes(a, b) == [
        {"path": "code_version", "original": "1", "replay": "2"},
        {"path": "prompt_versions", "original": "p1", "replay": "p2"},
        {"path": "model", "original": "m1", "replay": "m2"},
        {"path": "tool_schema_hash", "original": "h1", "replay": "h2"},
        {"path": "clock", "original": "c1", "replay": "c2"},
        {"path": "input", "original": "i1", "replay": "i2"},
    ]


def test_a_change_after_equal_fields_is_still_found() -> None:
    a = {"code_version": "1", "prompt_versions": {"s": "v1"}, "model": "m1", "input": "x"}
    b = {"code_version": "1", "prompt_versions": {"s": "v1"}, "model": "m2", "input": "x"}
    assert run_changes(a, b) == [{"path": "model", "original": "m1", "replay": "m2"}]


def test_ids_start_times_and_other_header_fields_are_never_changes() -> None:
    a = {"run_id": "r1", "trace_id": "t1", "started_at": "x", "start_ns": 1, "seed": 7, "agent": "A", "model": "m"}
    b = {"run_id": "r2", "trace_id": "t2", "started_at": "y", "start_ns": 2, "seed": 8, "agent": "B", "model": "m"}
    assert run_changes(a, b) == []
    assert run_changes({}, {}) == []


def test_a_field_on_one_side_only_is_a_change_with_none_on_the_other() -> None:
    assert run_changes({"code_version": "1"}, {}) == [{"path": "code_version", "original": "1", "replay": None}]
    assert run_changes({}, {"model": {"id": "m"}}) == [{"path": "model", "original": None, "replay": {"id": "m"}}]


def test_two_objects_are_compared_one_level_deep_by_sorted_key() -> None:
    a = {"prompt_versions": {"z.system": "v1", "b.user": "v1", "a.tool": "v1"}, "model": {"id": "m", "version": "1"}}
    b = {"prompt_versions": {"a.tool": "v2", "b.user": "v1", "c.new": "v1"}, "model": {"id": "m", "version": "2"}}
    assert run_changes(a, b) == [
        {"path": "prompt_versions.a.tool", "original": "v1", "replay": "v2"},
        {"path": "prompt_versions.c.new", "original": None, "replay": "v1"},
        {"path": "prompt_versions.z.system", "original": "v1", "replay": None},
        {"path": "model.version", "original": "1", "replay": "2"},
    ]


def test_an_object_against_another_value_is_one_change_of_the_whole_field() -> None:
    a = {"clock": {"now": "2026-11-03T10:14:02+01:00"}}
    b = {"clock": "2026-11-03T10:14:02+01:00"}
    assert run_changes(a, b) == [{"path": "clock", "original": a["clock"], "replay": b["clock"]}]
    assert run_changes({"input": [1]}, {"input": {"0": 1}}) == [{"path": "input", "original": [1], "replay": {"0": 1}}]


# --- span_path ------------------------------------------------------------------------------------


def test_a_span_path_names_the_ancestors_root_first() -> None:
    spans = [make_span("agent", "agent", span_id="a"), make_span("decision", "plan", span_id="b", parent_id="a"),
             make_span("llm", "chat gpt-4o", span_id="c", parent_id="b")]
    by_id = {s.span_id: s for s in spans}
    assert span_path(by_id, spans[2]) == "agent > plan > chat gpt-4o"
    assert span_path(by_id, spans[2], sep="/") == "agent/plan/chat gpt-4o"
    assert span_path(by_id, spans[0]) == "agent"


def test_a_span_path_stops_at_a_parent_the_trace_does_not_hold() -> None:
    spans = [make_span("decision", "plan", span_id="b", parent_id="gone"),
             make_span("llm", "chat", span_id="c", parent_id="b")]
    by_id = {s.span_id: s for s in spans}
    assert span_path(by_id, spans[1]) == "plan > chat"


def test_a_span_path_stops_at_a_parent_cycle() -> None:
    spans = [make_span("decision", "x", span_id="x", parent_id="y"), make_span("decision", "y", span_id="y", parent_id="x"),
             make_span("tool", "t", span_id="t", parent_id="x")]
    by_id = {s.span_id: s for s in spans}
    assert span_path(by_id, spans[2]) == "y > x > t"  # each span named once
    me = make_span("decision", "me", span_id="me", parent_id="me")
    assert span_path({"me": me}, me) == "me"


# --- divergence_record ----------------------------------------------------------------------------


def test_a_field_absent_on_one_side_is_null_and_says_which_side() -> None:
    o = make_span("tool", "search", span_id="o1", seq=4)
    r = make_span("tool", "search", span_id="r1", seq=5)
    d = Divergence(DivergenceType.ARGS_MISMATCH, 3, o, r, (
        FieldChange("tool.arguments.q", ABSENT, "x"),
        FieldChange("tool.arguments.k", 1, ABSENT),
        FieldChange("tool.arguments.n", None, 2),
        FieldChange("tool.arguments.m", [1], None),
    ), 0)
    rec = divergence_record(d, {"o1": o}, {"r1": r})
    assert rec == {
        "type": "args_mismatch",
        "kind": "tool",
        "row": 3,
        "path": "search",
        "original": {"span_id": "o1", "name": "search", "seq": 4},
        "replay": {"span_id": "r1", "name": "search", "seq": 5},
        "fields": [
            {"path": "tool.arguments.q", "original": None, "replay": "x", "absent": "original"},
            {"path": "tool.arguments.k", "original": 1, "replay": None, "absent": "replay"},
            {"path": "tool.arguments.n", "original": None, "replay": 2},
            {"path": "tool.arguments.m", "original": [1], "replay": None},
        ],
    }


def test_the_path_is_the_original_sides_else_the_replays() -> None:
    oroot, rroot = make_span("agent", "agent-o", span_id="oa"), make_span("agent", "agent-r", span_id="ra")
    o = make_span("tool", "lookup", span_id="o1", parent_id="oa")
    r = make_span("retrieval", "search", span_id="r1", parent_id="ra", seq=2)
    o_ids, r_ids = {"oa": oroot, "o1": o}, {"ra": rroot, "r1": r}
    both = divergence_record(Divergence(DivergenceType.OUTPUT_MISMATCH, 1, o, r, (), 0), o_ids, r_ids)
    assert both["path"] == "agent-o > lookup" and both["kind"] == "tool"
    extra = divergence_record(Divergence(DivergenceType.UNRECORDED_CALL, 2, None, r, (), 0), o_ids, r_ids)
    assert extra["path"] == "agent-r > search" and extra["kind"] == "retrieval"
    assert extra["original"] is None and extra["replay"] == {"span_id": "r1", "name": "search", "seq": 2}
    missing = divergence_record(Divergence(DivergenceType.MISSING_CALL, 1, o, None, (), 0), o_ids, r_ids)
    assert missing["path"] == "agent-o > lookup" and missing["replay"] is None and missing["kind"] == "tool"
    neither = divergence_record(Divergence(DivergenceType.MISSING_SPAN, 0, None, None, (), 0), o_ids, r_ids)
    assert neither["path"] == "" and neither["kind"] is None


# --- not_a_replay ---------------------------------------------------------------------------------


def _run(header: dict[str, Any] | None = None, *, fmt: str = "tracetui", root: dict[str, Any] | None = None,
         root_kind: str = "agent") -> Trace:
    t = TraceBuilder()
    if root is not None:
        t.add(root_kind, "root", **root)
    return Trace(spans=t.trace().spans, header=dict(header or {}), format=fmt)


def test_another_run_input_in_the_headers_is_not_a_replay() -> None:
    assert not_a_replay(_run({"input": {"q": 1}}), _run({"input": {"q": 2}})) == "its run input differs"
    assert not_a_replay(_run({"input": {"q": 1, "r": 2}}), _run({"input": {"r": 2, "q": 1}})) == ""  # key order
    assert not_a_replay(_run({"input": {"q": 1}}), _run({"input": '{"q": 1}'})) == ""  # a JSON string of it
    assert not_a_replay(_run({"input": 1}), _run({"input": True})) == "its run input differs"  # JSON values


def test_without_a_header_input_the_root_agent_spans_input_is_the_run_input() -> None:
    a = _run(root={"input": "move my install"})
    b = _run(root={"input": "cancel my install"})
    assert not_a_replay(a, b) == "its run input differs"
    assert not_a_replay(a, _run(root={"input": "move my install"})) == ""
    # the header's input wins over the root span's
    assert not_a_replay(_run({"input": "x"}, root={"input": "A"}), _run({"input": "x"}, root={"input": "B"})) == ""
    # a root span of another kind holds no run input
    assert not_a_replay(_run(root={"input": "A"}, root_kind="decision"), _run(root={"input": "B"}, root_kind="decision")) == ""


def test_the_root_is_the_parentless_span_emitted_first() -> None:
    def run(first: str, second: str) -> Trace:
        spans = [make_span("agent", "late", input=second, span_id="z", seq=9),
                 make_span("agent", "early", input=first, span_id="y", seq=1),
                 make_span("tool", "child", parent_id="y", input="never", seq=2)]
        return Trace(spans=spans, format="tracetui")

    # "early" (seq 1) is the root though it comes second in the list
    assert not_a_replay(run("same", "A"), run("same", "B")) == ""
    assert not_a_replay(run("A", "same"), run("B", "same")) == "its run input differs"


def test_an_input_on_one_side_only_says_nothing() -> None:
    assert not_a_replay(_run({"input": "x"}), _run()) == ""
    assert not_a_replay(_run(), _run(root={"input": "x"})) == ""
    assert not_a_replay(_run(), _run()) == ""


def test_another_agent_is_not_a_replay_naming_both() -> None:
    assert not_a_replay(_run({"agent": "A"}), _run({"agent": "B"})) == "another agent: B instead of A"
    assert not_a_replay(_run({"agent": "A"}), _run({"agent": "A"})) == ""
    a = _run(root={"agent_name": "support"})
    b = _run(root={"agent_name": "billing"})
    assert not_a_replay(a, b) == "another agent: billing instead of support"
    # a header agent that is not text: the root agent span's name
    assert not_a_replay(_run({"agent": 3}, root={"agent_name": "s"}), _run({"agent": 3}, root={"agent_name": "t"})) \
        == "another agent: t instead of s"
    # an agent on one side only, or not text: nothing said
    assert not_a_replay(_run({"agent": "A"}), _run()) == ""
    assert not_a_replay(_run(root={"agent_name": 1}), _run(root={"agent_name": 2})) == ""
    assert not_a_replay(_run(root={"agent_name": "s"}, root_kind="decision"),
                        _run(root={"agent_name": "t"}, root_kind="decision")) == ""


def test_another_input_is_said_before_another_agent() -> None:
    a, b = _run({"agent": "A", "input": 1}), _run({"agent": "B", "input": 2})
    assert not_a_replay(a, b) == "its run input differs"


def test_an_input_that_cannot_be_canonicalised_is_left_to_the_agent_check() -> None:
    a, b = _run({"agent": "A", "input": {1, 2}}), _run({"agent": "B", "input": {3}})
    assert not_a_replay(a, b) == "another agent: B instead of A"


def test_across_formats_a_message_list_and_the_value_holding_its_user_text_are_one_input() -> None:
    messages = [{"role": "system", "content": "be nice"}, {"role": "user", "content": "move my install"}]
    a = _run({"input": messages}, fmt="otlp-json")
    assert not_a_replay(a, _run({"input": {"message": "move my install", "customer": "C-1"}})) == ""
    assert not_a_replay(a, _run({"input": {"message": "cancel", "customer": "C-1"}})) == "its run input differs"
    # one format: compared as recorded
    assert not_a_replay(_run({"input": messages}), _run({"input": "move my install"})) == "its run input differs"


# --- diff_report ----------------------------------------------------------------------------------


def _pair() -> tuple[Trace, Trace]:
    o, r = TraceBuilder("o"), TraceBuilder("r")
    for t, side in ((o, "o"), (r, "r")):
        root = t.add("agent", "agent", input="q")
        t.add("tool", "search", parent=root, arguments={"q": "x" if side == "o" else "y"}, output=[1])
        t.add("tool", "lookup", parent=root, arguments={"id": 1}, output={"v": 1 if side == "o" else 2})
        if side == "r":
            t.add("tool", "write", parent=root, arguments={"id": 1}, output=None)
    return (Trace(spans=o.trace().spans, header={"code_version": "1"}, path="o.jsonl", format="tracetui",
                  trace_id="T1", trace_ids=["T1"]),
            Trace(spans=r.trace().spans, header={"code_version": "2"}, path="r.jsonl", format="tracetui",
                  trace_id="T2", trace_ids=["T2", "T3"], issues=[ReadIssue("r.jsonl", 3, "", "a bad line")]))


def test_the_report_has_the_documented_shape_and_is_json() -> None:
    original, replay = _pair()
    diff = diff_traces(original, replay)
    report = diff_report(diff)
    assert list(report) == ["schema_version", "original", "replay", "first_divergence", "divergences", "counts",
                            "run_changes", "not_a_replay", "not_comparable", "redacted_with_key", "labels_file",
                            "unmatched_labels"]
    assert report["schema_version"] == SCHEMA_VERSION == 1
    assert report["original"] == {"path": "o.jsonl", "format": "tracetui", "trace_id": "T1", "run_count": 1,
                                  "span_count": 3, "skipped": []}
    assert report["replay"] == {"path": "r.jsonl", "format": "tracetui", "trace_id": "T2", "run_count": 2,
                                "span_count": 4, "skipped": [str(replay.issues[0])]}
    assert [d["type"] for d in report["divergences"]] == ["args_mismatch", "output_mismatch", "unrecorded_call"]
    assert report["first_divergence"] == report["divergences"][0]
    assert report["first_divergence"]["path"] == "agent > search"
    assert report["counts"] == {"args_mismatch": 1, "output_mismatch": 1, "unrecorded_call": 1}
    assert report["run_changes"] == [{"path": "code_version", "original": "1", "replay": "2"}]
    assert report["not_a_replay"] is None
    assert report["not_comparable"] == {"fields": 0, "items": []}
    assert report["redacted_with_key"] is None and report["labels_file"] is None
    assert report["unmatched_labels"] == []
    assert orjson.loads(orjson.dumps(report)) == report


def test_a_file_without_trace_ids_counts_one_run() -> None:
    original, replay = _pair()
    original.trace_ids = []
    assert diff_report(diff_traces(original, replay))["original"]["run_count"] == 1


def test_two_equal_runs_report_no_first_divergence_and_no_counts() -> None:
    original, _ = _pair()
    report = diff_report(diff_traces(original, original))
    assert report["first_divergence"] is None and report["divergences"] == [] and report["counts"] == {}
    assert report["run_changes"] == []


def test_counts_add_up_divergences_of_one_type() -> None:
    o, r = TraceBuilder("o"), TraceBuilder("r")
    for t in (o, r):
        root = t.add("agent", "agent")
        for i in range(3):
            t.add("tool", f"t{i}", parent=root, arguments={"i": i if t is o else -i - 1})
    report = diff_report(diff_traces(o.trace(), r.trace()))
    assert report["counts"] == {"args_mismatch": 3}


def test_not_a_replay_and_the_key_a_side_was_redacted_with_are_reported() -> None:
    original, replay = _pair()
    original.header["agent"], replay.header["agent"] = "A", "B"
    diff = diff_traces(original, replay)
    diff.redacted_with = "39c0e1811577"
    report = diff_report(diff)
    assert report["not_a_replay"] == "another agent: B instead of A"
    assert report["redacted_with_key"] == "39c0e1811577"


def test_not_comparable_sums_the_pairs_of_span_and_header_fields() -> None:
    original, replay = _pair()
    replay.format = "otlp-json"
    original.header["clock"] = {"now": "x"}
    diff = diff_traces(original, replay)
    diff.not_comparable = (Unchecked("llm.params.stream", "not recorded by otlp-json", 3),
                           Unchecked("tool.effect", "not recorded by otlp-json", 2))
    report = diff_report(diff)
    items = report["not_comparable"]["items"]
    assert items[:2] == [{"path": "llm.params.stream", "reason": "not recorded by otlp-json", "pairs": 3},
                         {"path": "tool.effect", "reason": "not recorded by otlp-json", "pairs": 2}]
    assert {"path": "header.clock", "reason": "not recorded by otlp-json", "pairs": 1} in items
    assert report["not_comparable"]["fields"] == sum(i["pairs"] for i in items) == 3 + 2 + len(items) - 2
    assert all(c["path"] != "clock" for c in report["run_changes"])


def _label(key: str, label: str = "new_regression") -> Label:
    return Label(key, label, "a note", "2026-11-12T17:03:11Z", key.split(":")[0], None, None)


def test_labelled_divergences_carry_their_label_and_the_others_are_unmatched() -> None:
    original, replay = _pair()
    diff = diff_traces(original, replay)
    keys = [divergence_key(d) for d in diff.divergences]
    labels = {keys[1]: _label(keys[1], "fixture_mismatch"), "args_mismatch:gone:gone": _label("args_mismatch:gone:gone"),
              keys[0]: _label(keys[0]), "x:y:z": _label("x:y:z")}
    report = diff_report(diff, labels=labels, labels_file="r.jsonl.labels.json")
    assert report["labels_file"] == "r.jsonl.labels.json"
    record = {"key": keys[1], "label": "fixture_mismatch", "note": "a note", "created": "2026-11-12T17:03:11Z",
              "type": keys[1].split(":")[0], "original_span_id": None, "replay_span_id": None}
    assert report["divergences"][1]["label"] == record
    assert report["first_divergence"]["label"]["key"] == keys[0]
    assert "label" not in report["divergences"][2]
    assert [u["key"] for u in report["unmatched_labels"]] == ["args_mismatch:gone:gone", "x:y:z"]  # in the given order
    assert report["unmatched_labels"][1] == {"key": "x:y:z", "label": "new_regression", "note": "a note",
                                             "created": "2026-11-12T17:03:11Z", "type": "x",
                                             "original_span_id": None, "replay_span_id": None}


def test_labels_that_match_nothing_are_all_unmatched_and_no_labels_is_none_unmatched() -> None:
    original, replay = _pair()
    diff = diff_traces(original, replay)
    report = diff_report(diff, labels={"x:y:z": _label("x:y:z")})
    assert [u["key"] for u in report["unmatched_labels"]] == ["x:y:z"]
    assert not any("label" in d for d in report["divergences"])
    assert diff_report(diff, labels={})["unmatched_labels"] == []
