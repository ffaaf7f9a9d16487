"""docs/triage.md, "Step 2": the run's call path the reproduction check compares, and the words the verdict
describes calls with (``core/triage/path.py``), one test per rule (issue 25: ``scripts/mutation.py triage-path``;
tests/mutation_equivalents.md). Spans are built in the test.
"""

from __future__ import annotations

from typing import Any

from tracetui.core.canonical import args_hash
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.triage.path import Evidence, asked, call_key, call_path, describe_call, failed, root, short


def span(kind: str, name: str, seq: int = 0, parent: str | None = "root", status: Status = Status.OK,
         **data: Any) -> Span:
    return Span(span_id=f"s{seq}", parent_id=parent, seq=seq, kind=SpanKind(kind), name=name, status=status,
                data=data)


def test_evidence_belongs_to_the_original_run_unless_told() -> None:
    assert Evidence("s1", "why").side == "original"
    assert Evidence(None, "why", "replay").side == "replay"


def test_a_tool_call_is_keyed_by_its_recorded_tool_name_and_canonical_arguments() -> None:
    named = span("tool", "execute_tool x", tool_name="get_order", arguments={"id": 1, "at": "a"})
    assert call_key(named) == ("tool", "get_order", args_hash({"at": "a", "id": 1}))
    unnamed = span("tool", "get_order", arguments={"id": 2})
    assert call_key(unnamed) == ("tool", "get_order", args_hash({"id": 2}))
    assert call_key(unnamed) != call_key(span("tool", "get_order", arguments={"id": 3}))


def test_a_retrieval_is_keyed_by_index_query_top_k_and_filters_only() -> None:
    base = {"query": "refund", "top_k": 3, "filters": {"lang": "en"}}
    r = span("retrieval", "search", index="kb", **base, documents=["a"])
    assert call_key(r) == ("retrieval", "kb", args_hash(base))
    assert call_key(span("retrieval", "kb", **base, documents=["b"])) == call_key(r)  # results are not the call
    for field, other in (("query", "cancel"), ("top_k", 4), ("filters", {"lang": "fr"})):
        assert call_key(span("retrieval", "search", index="kb", **{**base, field: other}))[2] != call_key(r)[2]


def test_a_decision_is_keyed_by_its_name_and_value() -> None:
    d = span("decision", "route", decision="escalate", value={"to": "human"})
    assert call_key(d) == ("decision", "escalate", args_hash({"to": "human"}))
    assert call_key(span("decision", "route", value=True)) == ("decision", "route", args_hash(True))


def test_an_llm_call_is_keyed_by_what_it_asked_for_not_its_wording() -> None:
    calls = [{"name": "lookup", "arguments": '{"id":1}', "id": "c9"}]
    ask = span("llm", "chat", output={"content": "let me look", "tool_calls": calls})
    assert call_key(ask) == ("llm", "", args_hash([["lookup", '{"id":1}']]))
    said = span("llm", "chat", output={"content": "done"})
    assert call_key(said) == ("llm", "", args_hash("text"))
    assert call_key(said) == call_key(span("llm", "chat2", output={"content": "all done"}))


def test_agent_memory_and_other_spans_are_not_calls() -> None:
    assert call_key(span("agent", "support")) is None
    assert call_key(span("memory", "recall", query="x")) is None
    assert call_key(span("other", "plan")) is None


def test_asked_lists_names_and_arguments_keeps_odd_entries_and_calls_anything_else_text() -> None:
    assert asked({"tool_calls": [{"name": "a", "arguments": {"x": 1}, "id": "c1"}, "raw"]}) == [["a", {"x": 1}], "raw"]
    assert asked({"tool_calls": [], "content": "hi"}) == "text"
    assert asked("a string answer") == "text"
    assert asked(None) == "text"


def test_call_path_is_in_seq_order_skips_non_calls_and_stops_after_until_seq_included() -> None:
    spans = [span("tool", "b", 3, arguments={}), span("agent", "root", 0, parent=None),
             span("tool", "a", 1, arguments={}), span("llm", "chat", 2, output={"content": "x"})]
    t = Trace(spans=spans)
    assert [s.seq for _, s in call_path(t)] == [1, 2, 3]
    assert [s.seq for _, s in call_path(t, until_seq=2)] == [1, 2]
    assert [k for k, _ in call_path(t, until_seq=1)] == [call_key(spans[2])]
    assert call_path(t, until_seq=0) == []


def test_root_is_the_lowest_seq_span_without_a_parent() -> None:
    a, b = span("agent", "late", 5, parent=None), span("agent", "early", 2, parent=None)
    assert root(Trace(spans=[span("tool", "t", 0, arguments={}), a, b])) is b
    assert root(Trace(spans=[span("tool", "t", 0, arguments={})])) is None


def test_failed_means_a_span_that_ended_in_error() -> None:
    assert failed(span("tool", "t", status=Status.ERROR)) is True
    assert failed(span("tool", "t", status=Status.OK)) is False
    assert failed(span("tool", "t", status=Status.UNSET)) is False
    assert failed(None) is False


def test_describe_call_words_each_kind() -> None:
    assert describe_call(span("tool", "x", tool_name="get_order", arguments={"id": "A1"})) == 'get_order {"id":"A1"}'
    assert describe_call(span("tool", "get_order", arguments={"id": "A1"})) == 'get_order {"id":"A1"}'
    assert describe_call(span("decision", "route", decision="esc", value=1)) == "decision esc = 1"
    assert describe_call(span("decision", "route", value=[1])) == "decision route = [1]"
    assert describe_call(span("retrieval", "kb", query="refund")) == 'kb "refund"'
    assert describe_call(span("llm", "chat", output={"content": "hi"})) == "chat answering in text"


def test_describe_call_lists_what_an_llm_asked_for_with_arguments_cut_to_50() -> None:
    long = {"text": "y" * 80}
    out = {"tool_calls": [{"name": "lookup", "arguments": {"id": 1}}, {"name": "note", "arguments": long}, "raw"]}
    words = describe_call(span("llm", "chat", output=out))
    assert words == "chat asking for lookup {\"id\":1}, note " + short(long, 50) + ", raw"
    assert len(short(long, 50)) == 50


def test_short_keeps_up_to_the_limit_and_cuts_longer_with_an_ellipsis() -> None:
    assert short("x" * 68) == '"' + "x" * 68 + '"'  # 70 characters: kept
    cut = short("x" * 69)
    assert cut == '"' + "x" * 68 + "…" and len(cut) == 70
    assert short({"b": 1, "a": 2}, 5) == '{"a"…'
    assert short("abc", 5) == '"abc"'


def test_short_falls_back_to_repr_for_what_json_cannot_hold() -> None:
    assert short(b"raw") == "b'raw'"
    assert short({1}) == "{1}"
