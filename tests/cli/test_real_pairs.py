"""`tracetui diff` on the real original/replay pairs of the shared corpus: the first divergence
is where the runs really part, for the reason the files show (issue 3, "done when")."""

from __future__ import annotations

import io

import orjson

from corpus import corpus
from tracetui.cli.main import main


def diff_json(a: str, b: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", a, b, "--format", "json"], stdout=out, stderr=err)
    assert code == 1, err.getvalue()
    return orjson.loads(out.getvalue())


def test_two_tau_bench_trials_with_different_rewards_part_at_the_users_opening() -> None:
    """Task 1: trial 0 (reward 0) and trial 1 (reward 1). The task instruction (the run's input)
    is the same; the simulated user opens differently, so the first model call's input differs."""
    path = corpus("tau-bench/gpt-4o-airline.json")
    doc = diff_json(f"{path}#task-1-trial-0", f"{path}#task-1-trial-1")
    first = doc["first_divergence"]
    assert (first["type"], first["kind"], first["original"]["span_id"]) == ("input_mismatch", "llm", "msg-2")
    assert first["fields"][0]["path"] == "llm.messages[1].content"
    assert first["fields"][0]["replay"] == "Hi! I need to change my return flight from Texas to Newark."


def test_swe_agent_tool_configurations_part_at_step_1_edit_vs_insert() -> None:
    """Same demonstration under two tool configurations: step 0 (`create reproduce.py`) matches,
    step 1's model turn calls `edit` in one and `insert` in the other."""
    doc = diff_json(str(corpus("swe-agent/marshmallow-1867__function_calling.traj")),
                    str(corpus("swe-agent/marshmallow-1867__function_calling_replace.traj")))
    first = doc["first_divergence"]
    assert (first["type"], first["original"]["span_id"]) == ("decision_mismatch", "step-1-llm")
    assert first["fields"][0] == {"path": "llm.output.tool_calls[0].name", "original": "edit", "replay": "insert"}
    assert [c["path"] for c in doc["run_changes"]] == ["tool_schema_hash"]
    types = [d["type"] for d in doc["divergences"]]
    # At the fork the replay's own steps come first (its insert call, its next model turn); the
    # original's edit call it never made is a consequence, listed after them (docs/format.md).
    assert types[:3] == ["decision_mismatch", "unrecorded_call", "input_mismatch"] and "missing_call" in types


def test_inspect_runs_of_one_task_part_at_the_scorer_the_second_run_added() -> None:
    """The second popularity log scores each sample; the first does not: extra spans at the end."""
    doc = diff_json(str(corpus("inspect-ai/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval")) + "#sample-1-epoch-1",
                    str(corpus("inspect-ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval")) + "#sample-1-epoch-1")
    assert [d["type"] for d in doc["divergences"]] == ["extra_span", "extra_span"]
    assert doc["first_divergence"]["path"].endswith("match")
    assert doc["divergences"][1]["path"].endswith("match > score")


def test_openai_and_langchain_frameworks_part_at_the_clock() -> None:
    """Same task, two frameworks: the first divergence is the current-time tool's answer, half an
    hour apart: the world moved between the runs (the reason replays freeze the clock)."""
    doc = diff_json(str(corpus("any-agent-trace/OPENAI_trace.json")), str(corpus("any-agent-trace/LANGCHAIN_trace.json")))
    first = doc["first_divergence"]
    assert (first["type"], first["kind"]) == ("output_mismatch", "tool")
    assert first["path"].endswith("execute_tool get_current_time")
    assert first["fields"][0]["path"] == "tool.output.datetime"
    assert (first["fields"][0]["original"], first["fields"][0]["replay"]) == ("2025-09-16T08:43:13-04:00", "2025-09-16T09:16:41-04:00")
