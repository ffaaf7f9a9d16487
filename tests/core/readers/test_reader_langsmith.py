"""LangSmith reader: the SDK's run-ingest payload (corpus), run trees by parent_run_id
or dotted_order, post/patch merging in any order, LangChain-serialised messages."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from corpus import CORPUS, corpus

from tracetui.core.errors import ReadError
from tracetui.core.model import SpanKind, Status, Trace
from tracetui.core.readers import read_trace
from tracetui.core.readers.langsmith import LangSmithReader, lc_message
from tracetui.core.readers.openai_agents import OpenAIAgentsReader

DATA = Path(__file__).resolve().parents[2] / "data" / "langsmith"
ROOT = Path(__file__).resolve().parents[3]
R = "11111111-1111-4111-8111-111111111111"
L1 = "22222222-2222-4222-8222-222222222222"
T = "33333333-3333-4333-8333-333333333333"
L2 = "44444444-4444-4444-8444-444444444444"


def _ns(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int) -> int:
    return int(datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp()) * 1_000_000_000 + us * 1000


def _read(tmp_path: Path, text: str | bytes, name: str = "runs.jsonl"):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return LangSmithReader().read(str(p), p.read_bytes())


# -- the corpus payload ----------------------------------------------------------------

def test_corpus_payload_merges_post_and_patch() -> None:
    t = read_trace(corpus("langsmith/langsmith_py_wrap_openai_reasoning.json"))
    assert t.format == "langsmith"
    assert t.trace_ids == ["a8b34ded-ccd2-4fb7-bccb-9cd625066a14"]
    assert len(t.spans) == 1 and not t.issues
    s = t.spans[0]
    assert (s.span_id, s.parent_id, s.kind, s.name, s.status) == (
        "a8b34ded-ccd2-4fb7-bccb-9cd625066a14", None, SpanKind.LLM, "ChatOpenAI", Status.OK)
    assert s.start_ns == _ns(2024, 10, 11, 20, 58, 24, 544431)
    assert s.end_ns == _ns(2024, 10, 11, 20, 58, 39, 682524)  # end_time is only in the patch
    d = s.data
    assert d["model"] == "o1-mini" and d["provider"] == "openai"
    assert "params" not in d  # stream / extra_* are not call parameters
    assert d["messages"] == [{"role": "user", "content": "Write a bash script that takes a matrix represented as a "
                              "string with format '[1,2],[3,4],[5,6]' and prints the transpose in the same format."}]
    # outputs came from the patch (the post's outputs are {})
    assert d["response_id"] == "chatcmpl-AHH0LWUyAupsCrDZu564ZHwRbNQeZ"
    assert d["output"]["role"] == "assistant"
    assert d["output"]["content"].startswith("Certainly! Below is a **Bash script**")
    assert d["finish_reason"] == "stop"
    assert d["usage"] == {"input_tokens": 43, "output_tokens": 2497}
    assert s.attributes["response_model"] == "o1-mini-2024-09-12"
    assert t.header["model"] == {"id": "o1-mini", "version": "o1-mini-2024-09-12", "provider": "openai"}
    assert t.header["code_version"] == "v0.1.82-381-g03d9e1a-dirty"
    assert t.header["started_at"] == "2024-10-11T20:58:24.544431Z"


# -- run trees ------------------------------------------------------------------------

def _tree(t: Trace) -> list[tuple[object, ...]]:
    return [(s.seq, s.span_id, s.parent_id, s.kind, s.name, s.start_ns, s.end_ns, s.status, dict(s.data))
            for s in t.spans]


def test_tree_by_parent_run_id_and_by_dotted_order_agree() -> None:
    a = read_trace(DATA / "tree_parent_run_id.jsonl")
    b = read_trace(DATA / "tree_dotted_order.jsonl")
    assert a.format == b.format == "langsmith"
    assert not a.issues and not b.issues
    assert _tree(a) == _tree(b)
    assert a.trace_ids == b.trace_ids == [R]
    # lines are in end order (children first); spans come out in execution order
    assert [(s.span_id, s.parent_id, s.kind) for s in a.spans] == [
        (R, None, SpanKind.AGENT), (L1, R, SpanKind.LLM), (T, R, SpanKind.TOOL), (L2, R, SpanKind.LLM)]
    assert [s.line for s in b.spans] == [4, 1, 2, 3]
    root, llm1, tool, llm2 = a.spans
    assert root.data == {"agent_name": "AgentExecutor", "input": "Look up order 17", "output": "Order 17 has shipped."}
    assert tool.data["tool_name"] == "get_order"
    assert tool.data["arguments"] == {"id": 17}  # {"input": "<json string>"} parsed
    assert tool.data["output"] == '{"status": "shipped"}'
    assert llm1.data["params"] == {"n": 1, "temperature": 0.0}
    assert llm1.data["finish_reason"] == "tool_call"
    assert llm1.data["usage"] == {"input_tokens": 30, "output_tokens": 12}
    assert llm2.data["output"] == {"role": "assistant", "content": "Order 17 has shipped."}
    assert a.header["agent"] == "AgentExecutor" and a.header["input"] == "Look up order 17"
    assert a.header["code_version"] == "git:abc1234"


def test_langchain_serialised_messages() -> None:
    llm2 = read_trace(DATA / "tree_dotted_order.jsonl").spans[3]
    assert llm2.data["messages"] == [
        {"role": "system", "content": "You look up orders."},
        {"role": "user", "content": "Look up order 17"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "name": "get_order", "arguments": {"id": 17}}]},
        {"role": "tool", "content": '{"status": "shipped"}', "tool_call_id": "call_1"},
    ]


def test_lc_message_shapes() -> None:
    # Anthropic AIMessage: tool_use blocks in content repeat tool_calls; counted once
    ai = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
          "kwargs": {"content": [{"type": "text", "text": "Looking."},
                                 {"type": "tool_use", "id": "tu_1", "name": "search", "input": {"q": "x"}}],
                     "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "tu_1", "type": "tool_call"}]}}
    assert lc_message(ai) == [{"role": "assistant", "content": "Looking.",
                               "tool_calls": [{"id": "tu_1", "name": "search", "arguments": {"q": "x"}}]}]
    # message_to_dict shape and a message's own dict
    assert lc_message({"type": "human", "data": {"content": "hi"}}) == [{"role": "user", "content": "hi"}]
    assert lc_message({"type": "tool", "content": "42", "tool_call_id": "c9"}) == [
        {"role": "tool", "content": "42", "tool_call_id": "c9"}]
    # OpenAI shape passes through
    assert lc_message({"role": "developer", "content": "be brief"}) == [{"role": "system", "content": "be brief"}]


# -- post / patch ---------------------------------------------------------------------

_RUN = {"id": L1, "trace_id": L1, "dotted_order": "20240927T160000200000Z" + L1, "name": "ChatOpenAI",
        "run_type": "llm", "start_time": "2024-09-27T16:00:00.200000+00:00", "outputs": {},
        "inputs": {"messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o-mini", "temperature": 0.2},
        "extra": {"metadata": {"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}}}
_PATCH = {"id": L1, "trace_id": L1, "dotted_order": "20240927T160000200000Z" + L1, "inputs": None,
          "end_time": "2024-09-27T17:00:01.5+01:00",
          "outputs": {"id": "chatcmpl-1", "model": "gpt-4o-mini-2024-07-18",
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": "hello"}}],
                      "usage_metadata": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6}},
          "extra": {"metadata": {"revision_id": "r2"}}}


def _dump(obj: object) -> str:
    return orjson.dumps(obj).decode()


@pytest.mark.parametrize("text", [
    _dump({"post": [_RUN], "patch": [_PATCH]}),  # one payload
    _dump({"post": [_RUN]}) + "\n" + _dump({"patch": [_PATCH]}) + "\n",  # JSONL, post first
    _dump({"patch": [_PATCH]}) + "\n" + _dump({"post": [_RUN]}) + "\n",  # JSONL, patch first
    _dump([{"patch": [_PATCH]}, {"post": [_RUN]}]),  # a JSON list of payloads
], ids=["payload", "post-then-patch", "patch-then-post", "list"])
def test_post_patch_merge_in_any_order(tmp_path: Path, text: str) -> None:
    out = _read(tmp_path, text)
    assert not out.issues
    [run] = out.runs
    [s] = run.spans
    assert s.start_ns == _ns(2024, 9, 27, 16, 0, 0, 200000)
    assert s.end_ns == _ns(2024, 9, 27, 16, 0, 1, 500000)  # +01:00 applied
    assert s.status is Status.OK
    assert s.data["messages"] == [{"role": "user", "content": "hi"}]  # the patch's null inputs erase nothing
    assert s.data["params"] == {"temperature": 0.2}
    assert s.data["output"] == {"role": "assistant", "content": "hello"}
    assert s.data["usage"] == {"input_tokens": 5, "output_tokens": 1}
    assert run.header["code_version"] == "r2"  # extra.metadata merged key by key
    assert s.attributes["metadata"] == {"revision_id": "r2"}
    assert run.header["model"] == {"id": "gpt-4o-mini", "version": "gpt-4o-mini-2024-07-18", "provider": "openai"}


def test_patch_never_posted_is_loaded_with_a_warning(tmp_path: Path) -> None:
    patch = {**_PATCH, "error": "ValueError('rate limited')\n\nTraceback (most recent call last): ..."}
    out = _read(tmp_path, _dump({"patch": [patch]}))
    [run] = out.runs
    [s] = run.spans
    assert s.kind is SpanKind.OTHER  # no run_type in the patch
    assert s.status is Status.ERROR and s.error_type == "ValueError"
    assert s.end_ns == _ns(2024, 9, 27, 16, 0, 1, 500000)
    assert s.start_ns == _ns(2024, 9, 27, 16, 0, 0, 200000)  # from dotted_order
    [w] = [i for i in out.issues if "never posted" in i.message]
    assert w.severity == "warning" and L1 in w.message and w.where == "$.patch[0]"


def test_unfinished_llm_run_is_reported(tmp_path: Path) -> None:
    out = _read(tmp_path, _dump({"post": [_RUN]}))
    s = out.runs[0].spans[0]
    assert s.status is Status.UNSET and s.end_ns is None and "output" not in s.data
    [w] = out.issues
    assert w.severity == "warning"
    assert "1 llm run(s) without an output message" in w.message and "never ended" in w.message


def test_bad_jsonl_line_is_skipped_with_its_number(tmp_path: Path) -> None:
    lines = (DATA / "tree_parent_run_id.jsonl").read_text().splitlines()
    text = "\n".join([lines[0], '{"id": "x", broken', *lines[1:]]) + "\n"
    out = _read(tmp_path, text)
    assert [(i.line, i.severity) for i in out.issues] == [(2, "skipped")]
    assert len(out.runs[0].spans) == 4


def test_error_run_and_retriever_and_named_agent_chain(tmp_path: Path) -> None:
    runs = [
        {"id": R, "name": "graph", "run_type": "chain", "start_time": "2024-09-27T16:00:00Z",
         "end_time": "2024-09-27T16:00:09Z", "inputs": {"question": "q"}, "outputs": None,
         "error": "GraphRecursionError('Recursion limit of 25 reached')"},
        {"id": L1, "parent_run_id": R, "name": "research_agent", "run_type": "chain",
         "start_time": "2024-09-27T16:00:01Z", "end_time": "2024-09-27T16:00:02Z", "inputs": {}, "outputs": {}},
        {"id": T, "parent_run_id": L1, "name": "VectorStoreRetriever", "run_type": "retriever",
         "start_time": "2024-09-27T16:00:01.5Z", "end_time": "2024-09-27T16:00:01.6Z",
         "inputs": {"query": "refund policy"},
         "outputs": {"documents": [{"page_content": "Refunds within 30 days.", "metadata": {"id": "doc-3", "score": 0.9},
                                    "type": "Document"}]}},
    ]
    out = _read(tmp_path, "\n".join(map(_dump, runs)) + "\n")
    [run] = out.runs
    root, agent, ret = run.spans
    assert root.kind is SpanKind.AGENT and root.status is Status.ERROR and root.error_type == "GraphRecursionError"
    assert run.header["outcome"]["status"] == "error"
    assert agent.kind is SpanKind.AGENT  # a chain named like an agent
    assert ret.kind is SpanKind.RETRIEVAL
    assert ret.data == {"query": "refund policy",
                        "documents": [{"id": "doc-3", "score": 0.9, "text": "Refunds within 30 days."}]}
    assert root.parent_id is None and agent.parent_id == R and ret.parent_id == L1
    assert {s.trace_id for s in run.spans} == {R}  # trace id found through parents


def test_not_json_at_all_raises(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_bytes(b'{"post": [')
    with pytest.raises(ReadError):
        LangSmithReader().read(str(p), p.read_bytes())
    p.write_bytes(b'{"hello": 1}')
    with pytest.raises(ReadError, match="no LangSmith run"):
        LangSmithReader().read(str(p), p.read_bytes())


# -- sniffing -------------------------------------------------------------------------

def _other_files() -> list[Path]:
    roots = [CORPUS, ROOT / "tests" / "data" / "otlp", ROOT / "sample_runs"]
    return sorted(p for r in roots if r.exists() for p in r.rglob("*") if p.is_file())


def test_sniff_only_langsmith_files() -> None:
    if not CORPUS.exists():
        pytest.skip("corpus not available")
    r = LangSmithReader()
    for p in _other_files():
        head = p.read_bytes()[:65536]
        assert r.sniff(head) == (p.parent.name == "langsmith" and p.suffix != ".md"), p
    for p in DATA.iterdir():
        head = p.read_bytes()[:65536]
        assert r.sniff(head) and not OpenAIAgentsReader().sniff(head), p
    # a payload whose first run has a huge serialized section before run_type still sniffs
    assert r.sniff(b'{"post": [{"id": "a", "serialized": {"x": "' + b"y" * 70000)


def test_span_line_is_the_post_even_when_the_patch_came_first(tmp_path: Path) -> None:
    out = _read(tmp_path, "\n".join([_dump({"patch": [_PATCH]}), "", _dump({"post": [_RUN]})]) + "\n")
    assert out.runs[0].spans[0].line == 3
