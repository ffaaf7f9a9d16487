"""Several runs in one file: FILE#RUN, run selection by id or unique prefix, read_runs, summaries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tracetui.core.errors import ReadError, TraceNotFound
from tracetui.core.readers import read_replay, read_runs, read_trace, split_run_ref
from tracetui.core.readers.summary import summarize

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data" / "otlp"
TWO = DATA / "collector_two_traces.jsonl"
FIRST, SECOND = "4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"


def test_split_run_ref(tmp_path: Path) -> None:
    assert split_run_ref("runs.json#task-3-trial-1") == ("runs.json", "task-3-trial-1")
    assert split_run_ref("runs.json") == ("runs.json", None)
    assert split_run_ref("runs.json#") == ("runs.json", None)
    assert split_run_ref("a#b.json#r1") == ("a#b.json", "r1")  # the last # splits
    odd = tmp_path / "weird#name.jsonl"
    odd.write_text("x")
    assert split_run_ref(str(odd)) == (str(odd), None)  # an existing path is a file, # and all


def test_file_hash_run_picks_the_run() -> None:
    t = read_trace(f"{TWO}#{SECOND}")
    assert t.trace_id == SECOND and t.path == str(TWO)
    assert t.trace_ids == [FIRST, SECOND]
    assert read_trace(TWO).trace_id == FIRST  # no run given: the first


def test_a_unique_prefix_selects_case_insensitively() -> None:
    assert read_trace(f"{TWO}#0AF765").trace_id == SECOND
    assert read_trace(TWO, trace_id="4bf9").trace_id == FIRST


def test_unknown_and_conflicting_runs_are_errors_that_list_the_runs() -> None:
    with pytest.raises(TraceNotFound) as exc:
        read_trace(f"{TWO}#nope")
    assert FIRST in str(exc.value) and SECOND in str(exc.value)
    with pytest.raises(ReadError, match="two runs"):
        read_trace(f"{TWO}#{FIRST}", trace_id=SECOND)


def test_an_ambiguous_prefix_names_the_candidates(tmp_path: Path) -> None:
    text = TWO.read_text().replace(SECOND, "4bf9" + SECOND[4:])
    p = tmp_path / "two.jsonl"
    p.write_text(text)
    with pytest.raises(TraceNotFound, match="ambiguous"):
        read_trace(f"{p}#4bf9")


def test_replay_hash_run_wins_over_the_originals_trace_id() -> None:
    assert read_replay(f"{TWO}#{SECOND}", trace_id=FIRST).trace_id == SECOND
    assert read_replay(str(TWO), trace_id=SECOND).trace_id == SECOND


def test_a_file_whose_name_has_a_hash_still_reads(tmp_path: Path) -> None:
    p = tmp_path / "incident#42.jsonl"
    shutil.copy(TWO, p)
    assert read_trace(p).trace_id == FIRST
    assert read_trace(f"{p}#{SECOND}").trace_id == SECOND


def test_read_runs_and_summary_count_every_run() -> None:
    tf = read_runs(TWO)
    assert tf.format == "otlp-json" and [t.trace_id for t in tf.runs] == [FIRST, SECOND]
    s = summarize(tf)
    assert s["run_count"] == 2
    assert s["span_count"] == sum(len(t.spans) for t in tf.runs) == 6
    first = s["runs"][0]
    assert first["run_id"] == FIRST
    assert first["kinds"] == {"llm": 2, "tool": 2, "agent": 1}
    assert first["tools"] == {"check_availability": 1, "book_slot": 1}
    assert s["kinds"]["llm"] == 3  # the second run's call adds up
    only = read_runs(f"{TWO}#{SECOND}")
    assert [t.trace_id for t in only.runs] == [SECOND]


def test_a_picked_run_reports_its_own_issues_not_the_other_runs() -> None:
    """tau-bench: run task-33-trial-0 was not graded (warned); picking task-1-trial-0 does not say so."""
    from corpus import corpus

    path = corpus("tau-bench/gpt-4o-airline.json")
    assert not any("task-33" in i.message for i in read_trace(f"{path}#task-1-trial-0").issues)
    assert any("task-33-trial-0" in i.message for i in read_trace(f"{path}#task-33-trial-0").issues)
    assert sum("not graded" in i.message for i in read_runs(path).issues) == 5


def test_a_header_written_twice_at_the_top_shows_the_run_with_spans(tmp_path: Path) -> None:
    """The header twice, then the spans (a writer restarted before its first span): with no run asked for, the
    run shown is the one with spans, not the empty first one (every row would be a missing span); the file
    still says it holds two runs."""
    lines = (ROOT / "sample_runs" / "scheduling" / "original.jsonl").read_bytes().splitlines()
    path = tmp_path / "twice.jsonl"
    path.write_bytes(b"\n".join([lines[0], *lines]) + b"\n")
    whole = read_trace(str(ROOT / "sample_runs" / "scheduling" / "original.jsonl"))
    got = read_trace(str(path))
    assert [s.span_id for s in got.spans] == [s.span_id for s in whole.spans]
    assert len(got.trace_ids) == 2
    assert any("another header line" in i.message for i in got.issues)
