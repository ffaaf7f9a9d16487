"""tau-bench reader: the 4 MB corpus file (200 runs), a hand-written retail file, bad input, sniffing,
and the diff of two trials of one task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import corpus, corpus_files

from tracetui.core.canonical import args_hash
from tracetui.core.diff import diff_traces
from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind
from tracetui.core.readers import read_runs, read_trace, sniff_format
from tracetui.core.readers.tau_bench import TauBenchReader

TESTS = Path(__file__).resolve().parents[2]
DATA = TESTS / "data" / "tau_bench"
ROOT = TESTS.parent
AIRLINE = "tau-bench/gpt-4o-airline.json"



def all_issues(out):  # type: ignore[no-untyped-def]
    """The file's issues, then each run's, in run order."""
    return [*out.issues, *(i for r in out.runs for i in r.issues)]

def read(path: Path) -> Any:
    return TauBenchReader().read(str(path), path.read_bytes())


def write(tmp_path: Path, value: Any) -> Path:
    p = tmp_path / "results.json"
    p.write_bytes(value if isinstance(value, bytes) else orjson.dumps(value))
    return p


# --- corpus ---------------------------------------------------------------------------------------


def test_corpus_counts_match_sources() -> None:
    """SOURCES.md: 200 trajectories (50 task_ids x trials 0-3), 1164 tool calls; 2454 assistant turns."""
    out = read(corpus(AIRLINE))
    assert len(out.runs) == 200
    ids = [r.trace_id for r in out.runs]
    assert len(set(ids)) == 200
    assert ids[:3] == ["task-0-trial-0", "task-1-trial-0", "task-2-trial-0"] and ids[50] == "task-0-trial-1"
    assert {f"task-{t}-trial-{n}" for t in range(50) for n in range(4)} == set(ids)
    count = {k: sum(s.kind is k for r in out.runs for s in r.spans) for k in SpanKind}
    assert count[SpanKind.AGENT] == 200 and count[SpanKind.LLM] == 2454 and count[SpanKind.TOOL] == 1164
    tools = [s for r in out.runs for s in r.spans if s.kind is SpanKind.TOOL]
    assert all("output" in s.data for s in tools)  # every call is answered
    assert all(s.data["args_hash"] == args_hash(s.data["arguments"]) for s in tools[:200])
    for r in out.runs:
        assert r.in_order and [s.seq for s in r.spans] == list(range(len(r.spans)))
        assert r.spans[0].parent_id is None and {s.parent_id for s in r.spans[1:]} <= {"root"}
    # the 5,308 messages: each turn's messages are every message before it in traj
    doc = orjson.loads(corpus(AIRLINE).read_bytes())
    assert sum(len(d["traj"]) for d in doc) == 5308
    for d, r in zip(doc, out.runs):
        turns = [i for i, m in enumerate(d["traj"]) if m["role"] == "assistant"]
        llms = [s for s in r.spans if s.kind is SpanKind.LLM]
        assert [len(s.data["messages"]) for s in llms] == turns
        assert [s.span_id for s in llms] == [f"msg-{i}" for i in turns]
    mean = sum(r.header["outcome"]["reward"] for r in out.runs) / 200
    assert round(mean, 3) == 0.420


def test_corpus_issues_are_the_five_ungraded_results() -> None:
    out = read(corpus(AIRLINE))
    assert [(i.where, i.severity) for i in all_issues(out)] == [
        ("$[33].info.reward_info", "warning"), ("$[52].info.reward_info", "warning"),
        ("$[109].info.reward_info", "warning"), ("$[159].info.reward_info", "warning"),
        ("$[196].info.reward_info", "warning")]
    assert "task-33-trial-0" in all_issues(out)[0].message and "'search_direct_flight'" in all_issues(out)[0].message
    assert out.issues == []  # every one concerns one run: reported with that run only
    assert [i.where for i in next(r for r in out.runs if r.trace_id == "task-33-trial-0").issues] == ["$[33].info.reward_info"]


def test_first_run_spans_and_header() -> None:
    t = read_trace(corpus(AIRLINE))
    assert t.format == "tau-bench" and t.trace_id == "task-0-trial-0" and len(t.trace_ids) == 200
    root, first_llm = t.spans[0], t.spans[1]
    assert (root.kind, root.name) == (SpanKind.AGENT, "tau-bench airline task 0")
    assert root.data["input"].startswith("You are mia_li_3668. You want to fly from New York to Seattle on May 20")
    assert root.data["agent_name"] == "tau-bench airline" and root.attributes == {"task_id": 0, "trial": 0}
    assert (first_llm.span_id, first_llm.name) == ("msg-2", "chat")
    assert [m["role"] for m in first_llm.data["messages"]] == ["system", "user"]
    assert first_llm.data["output"] == {"content": "To assist you with booking a flight, I'll need your user ID. "
                                                   "Could you please provide that?", "role": "assistant"}
    user = next(s for s in t.spans if s.kind is SpanKind.TOOL)
    assert user.name == "execute_tool get_user_details" and user.data["arguments"] == {"user_id": "mia_li_3668"}
    assert user.data["call_id"] == "call_oIHazX6yQrB8hUwl4cRilFKj"
    assert user.data["output"].startswith('{"name": {"first_name": "Mia", "last_name": "Li"}')
    h = t.header
    assert h["run_id"] == "task-0-trial-0" and h["task_id"] == 0 and h["trial"] == 0
    assert h["input"] == root.data["input"] and h["agent"] == "tau-bench airline"
    assert h["task"]["user_id"] == "mia_li_3668" and h["task"]["instruction"].startswith("You are mia_li_3668.")
    assert "actions" not in h["task"] and h["expected_actions"][0]["name"] == "book_reservation"
    assert h["outcome"] == {"reward": 0.0, "info": {"r_actions": 0.0, "gt_data_hash":
                            "ea1402bc4f27311c55d06e318cef7d22ed1f33431a33ada16db71c4177283103"},
                            "source": "user", "user_cost": 0.0035475000000000003}


def test_reused_call_id_in_one_run_answers_each_call() -> None:
    """task 0 trial 0 uses call_HGn16KZh9oNCruxsMJ4gYXan for two different searches."""
    t = read_trace(corpus(AIRLINE))
    searches = [s for s in t.spans if s.kind is SpanKind.TOOL and s.data["call_id"] == "call_HGn16KZh9oNCruxsMJ4gYXan"]
    assert [s.data["tool_name"] for s in searches] == ["search_direct_flight", "search_onestop_flight"]
    assert searches[0].data["output"].startswith('[{"flight_number": "HAT069"')
    assert searches[1].data["output"].startswith('[[{"flight_number": "HAT057"')
    assert searches[0].span_id != searches[1].span_id


def test_pick_a_run_and_read_all_runs() -> None:
    path = corpus(AIRLINE)
    t = read_trace(path, trace_id="task-1-trial-1")
    assert t.trace_id == "task-1-trial-1" and t.header["outcome"]["reward"] == 1.0
    assert read_trace(f"{path}#task-1-trial-0").header["outcome"]["reward"] == 0.0
    assert len(read_runs(path).runs) == 200


def test_two_trials_of_task_1_first_diverge_at_the_simulated_users_opening() -> None:
    """Trial 0 (reward 0) and trial 1 (reward 1) share the task instruction (the root's input),
    so the first divergence is the first model call: the user simulator opened differently."""
    path = corpus(AIRLINE)
    a, b = read_trace(path, trace_id="task-1-trial-0"), read_trace(path, trace_id="task-1-trial-1")
    assert a.spans[0].data["input"] == b.spans[0].data["input"]
    first = diff_traces(a, b).first
    assert first is not None and first.type.value == "input_mismatch"
    assert first.original.span_id == first.replay.span_id == "msg-2"
    assert first.fields[0].path == "llm.messages[1].content"
    assert first.fields[0].replay == "Hi! I need to change my return flight from Texas to Newark."


# --- hand-written file ---------------------------------------------------------------------------


def test_retail_file_parallel_calls_unanswered_calls_and_bad_records() -> None:
    out = read(DATA / "retail_two_trials.json")
    assert [r.trace_id for r in out.runs] == ["task-7-trial-0", "task-7-trial-1", "task-7-trial-1-record-3"]
    ok, transferred, broken = out.runs
    assert [(s.span_id, s.name) for s in ok.spans] == [
        ("root", "tau-bench retail task 7"), ("msg-2", "chat"), ("msg-2-call-0", "execute_tool get_order_details"),
        ("msg-2-call-1", "execute_tool get_user_details"), ("msg-5", "chat"), ("msg-7", "chat"),
        ("msg-7-call-0", "execute_tool cancel_pending_order"), ("msg-9", "chat")]
    assert ok.spans[2].data["output"] == '{"status": "pending"}' and ok.spans[3].data["output"] == '{"name": "Yusuf"}'
    assert ok.spans[0].data == {"agent_name": "tau-bench retail", "input": "You are Yusuf. Cancel order #W1.",
                                "output": "Your order #W1 is cancelled."}
    assert ok.header["outcome"] == {"reward": 1.0, "info": {"r_actions": 1.0, "gt_data_hash": "abc"},
                                    "source": "user", "user_cost": 0.001}
    # the final assistant turn only calls a tool: the answer is the last one with text
    assert transferred.spans[0].data["output"] == "Let me look that up."
    assert "output" not in transferred.spans[2].data
    assert transferred.header["outcome"] == {"reward": 0.0, "source": "transfer_to_human_agents", "user_cost": 0.002}
    assert [s.span_id for s in broken.spans] == ["root"] and broken.spans[0].name == "tau-bench task 7"
    assert [(i.where, i.severity) for i in all_issues(out)] == [
        ("$[1]", "skipped"),
        ("$[2].traj[2].tool_calls[0]", "warning"),
        ("$[2].info.reward_info", "warning"),
        ("$[3]", "warning"),
        ("$[3].traj", "warning"),
        ("$[3].info.reward_info", "warning"),
    ]


def test_reward_info_actions_are_kept_when_they_differ_from_the_gold_list(tmp_path: Path) -> None:
    gold = [{"name": "a", "kwargs": {}}]
    result = {"task_id": 1, "trial": 0, "reward": 0.5, "traj": [],
              "info": {"task": {"actions": gold}, "reward_info": {"reward": 0.5, "actions": [{"name": "b"}]}}}
    (run,) = read(write(tmp_path, [result])).runs
    assert run.header["outcome"] == {"reward": 0.5, "actions": [{"name": "b"}]}
    assert run.header["expected_actions"] == gold


def test_a_single_result_object_and_records_without_ids(tmp_path: Path) -> None:
    out = read(write(tmp_path, {"traj": [{"role": "user", "content": "hi"}], "reward": 1}))
    assert [r.trace_id for r in out.runs] == ["record-0"]
    out = read(write(tmp_path, [{"task_id": "t9", "traj": []}]))
    assert [r.trace_id for r in out.runs] == ["task-t9"]


@pytest.mark.parametrize("content", [b"not json", b'{"a": 1}', b"[]", b"[1, 2]", b'"x"'])
def test_nothing_loadable_raises_read_error(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(ReadError):
        read(write(tmp_path, content))


# --- sniffing -------------------------------------------------------------------------------------


def test_sniff_accepts_tau_bench_files_and_nothing_else() -> None:
    r = TauBenchReader()
    others = []  # the corpus: test_sniff_rejects_every_other_corpus_file
    others += [p for p in (TESTS / "data").rglob("*") if p.is_file() and p.parent.name != "tau_bench"]
    bundled = ROOT / "sample_runs" / "foreign" / "tau-bench-airline.json"
    others += [p for p in (ROOT / "sample_runs").rglob("*") if p.is_file() and p != bundled]
    assert any("otlp" in p.parts for p in others) and any("sample_runs" in p.parts for p in others)
    assert [str(p) for p in others if r.sniff(p.read_bytes()[:65536])] == []
    assert r.sniff(bundled.read_bytes()[:65536])  # the README's bundled tau-bench results file
    for p in [*DATA.iterdir(), corpus(AIRLINE)]:
        assert r.sniff(p.read_bytes()[:65536]), p
        assert sniff_format(p.read_bytes()[:65536]) == "tau-bench", p
    assert r.sniff(b'\xef\xbb\xbf [ {"task_id": 1, "traj": [')  # BOM, blanks, cut mid-way
    assert not r.sniff(b'{"task_id": 1, "traj": []}')


def test_sniff_rejects_every_other_corpus_file() -> None:
    r = TauBenchReader()
    assert [str(p) for p in corpus_files(outside="tau-bench") if r.sniff(p.read_bytes()[:65536])] == []
