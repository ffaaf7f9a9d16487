"""chat_transcript: OpenAI chat message lists -> llm / tool spans, and its fast paths (same results as
the general normaliser and the canonical hash)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from corpus import corpus

from tracetui.core.canonical import args_hash
from tracetui.core.model import SpanKind
from tracetui.core.readers import chat_transcript as ct
from tracetui.core.readers.chat_transcript import (
    first_text,
    last_text,
    normalize_chat_message,
    tool_args_hash,
    transcript_spans,
)
from tracetui.core.readers.otel_messages import normalize_message


def call(cid: str | None, name: str, args: Any) -> dict[str, Any]:
    tc: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        tc["id"] = cid
    return tc


def assistant(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(cid: str, content: str, name: str | None = None) -> dict[str, Any]:
    m = {"role": "tool", "tool_call_id": cid, "content": content}
    if name:
        m["name"] = name
    return m


CONVERSATION = [
    {"role": "system", "content": "You are an airline agent."},
    {"role": "user", "content": "Book me a flight."},
    assistant(call("c1", "get_user", '{"user_id": "mia"}'), call("c2", "search", '{"to": "SEA", "from": "JFK"}')),
    tool("c2", '[{"flight": "HAT1"}]', "search"),  # parallel answers out of order: matched by id
    tool("c1", '{"name": "Mia"}', "get_user"),
    {"content": "Booked.", "role": "assistant"},
]


# --- mapping --------------------------------------------------------------------------------------


def test_each_assistant_turn_is_an_llm_span_and_each_call_a_tool_span_in_order() -> None:
    t = transcript_spans(CONVERSATION, parent_id="root", seq_start=1, line=7, trace_id="t1", path="f")
    assert [(s.span_id, s.seq, s.kind, s.name, s.parent_id) for s in t.spans] == [
        ("msg-2", 1, SpanKind.LLM, "chat", "root"),
        ("msg-2-call-0", 2, SpanKind.TOOL, "execute_tool get_user", "root"),
        ("msg-2-call-1", 3, SpanKind.TOOL, "execute_tool search", "root"),
        ("msg-5", 4, SpanKind.LLM, "chat", "root"),
    ]
    assert t.next_seq == 5 and t.issues == []
    assert {s.line for s in t.spans} == {7} and {s.trace_id for s in t.spans} == {"t1"}
    first, get_user, search, final = t.spans
    assert first.data["messages"] == CONVERSATION[:2]
    assert first.data["output"] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "name": "get_user", "arguments": {"user_id": "mia"}},
        {"id": "c2", "name": "search", "arguments": {"to": "SEA", "from": "JFK"}}]}
    assert get_user.data == {"tool_name": "get_user", "call_id": "c1", "arguments": {"user_id": "mia"},
                             "args_hash": args_hash({"user_id": "mia"}), "output": '{"name": "Mia"}'}
    assert search.data["output"] == '[{"flight": "HAT1"}]'
    # every message before the final turn, tool messages in tracetui's shape (no "name")
    assert final.data["messages"] == [CONVERSATION[0], CONVERSATION[1], first.data["output"],
                                      {"role": "tool", "content": '[{"flight": "HAT1"}]', "tool_call_id": "c2"},
                                      {"role": "tool", "content": '{"name": "Mia"}', "tool_call_id": "c1"}]
    assert final.data["output"] == {"role": "assistant", "content": "Booked."}
    assert t.messages == [*final.data["messages"], final.data["output"]]


def test_model_provider_id_prefix_and_llm_extra() -> None:
    t = transcript_spans(CONVERSATION, parent_id=None, id_prefix="r1/", model="gpt-4o", provider="openai",
                         llm_extra={5: {"usage": {"input_tokens": 9, "output_tokens": 2}, "model": "gpt-4o-mini"}})
    assert [s.span_id for s in t.spans] == ["r1/msg-2", "r1/msg-2-call-0", "r1/msg-2-call-1", "r1/msg-5"]
    assert t.spans[0].name == "chat gpt-4o" and t.spans[0].data["model"] == "gpt-4o"
    assert t.spans[0].data["provider"] == "openai" and t.spans[0].parent_id is None and t.spans[0].seq == 0
    assert t.spans[3].name == "chat gpt-4o-mini"
    assert t.spans[3].data["usage"] == {"input_tokens": 9, "output_tokens": 2}


def test_a_call_never_answered_has_no_output_and_one_warning() -> None:
    msgs = [{"role": "user", "content": "hi"}, assistant(call("a", "f", "{}"), call("b", "g", "{}")), tool("a", "ok")]
    t = transcript_spans(msgs, parent_id="root", path="p.json", where="$[4].traj")
    f, g = (s for s in t.spans if s.kind is SpanKind.TOOL)
    assert f.data["output"] == "ok" and "output" not in g.data
    assert [(i.where, i.severity) for i in t.issues] == [("$[4].traj[1].tool_calls[1]", "warning")]
    assert "'b'" in t.issues[0].message and "never answered" in t.issues[0].message


def test_a_tool_message_answering_no_call_is_kept_and_reported() -> None:
    t = transcript_spans([{"role": "user", "content": "hi"}, tool("zz", "stray")], parent_id="root")
    assert t.spans == [] and t.messages[1] == {"role": "tool", "content": "stray", "tool_call_id": "zz"}
    assert [(i.where, i.severity) for i in t.issues] == [("$[1]", "warning")]


def test_reused_call_ids_answer_the_nearest_open_call() -> None:
    """tau-bench reuses call ids within one run (task 0 trial 0: call_HGn16... twice)."""
    msgs = [assistant(call("x", "one", "{}")), tool("x", "first"),
            assistant(call("x", "two", "{}")), tool("x", "second"),
            assistant(call("y", "three", "{}")),  # never answered ...
            assistant(call("y", "four", "{}")), tool("y", "fourth")]  # ... the id is reused: the later call gets it
    t = transcript_spans(msgs, parent_id="root")
    outputs = {s.data["tool_name"]: s.data.get("output") for s in t.spans if s.kind is SpanKind.TOOL}
    assert outputs == {"one": "first", "two": "second", "three": None, "four": "fourth"}
    assert [i.where for i in t.issues] == ["$[4].tool_calls[0]"]


def test_parallel_calls_sharing_an_id_are_answered_in_order() -> None:
    t = transcript_spans([assistant(call("x", "a", "{}"), call("x", "b", "{}")), tool("x", "1"), tool("x", "2")],
                         parent_id="root")
    assert [s.data["output"] for s in t.spans if s.kind is SpanKind.TOOL] == ["1", "2"]


def test_non_messages_are_skipped_and_other_shapes_go_through_the_general_normaliser() -> None:
    msgs: list[Any] = [
        42,
        {"role": "Developer", "content": [{"type": "text", "text": "policy"}]},
        {"role": "assistant", "content": None, "function_call": {"name": "legacy", "arguments": '{"a": 1}'}},
        {"role": "function", "name": "legacy", "content": "done"},
    ]
    t = transcript_spans(msgs, parent_id="root")
    assert [(i.where, i.severity) for i in t.issues] == [("$[0]", "skipped")]
    assert t.messages[0] == {"role": "system", "content": "policy"}
    assert [s.kind for s in t.spans] == [SpanKind.LLM, SpanKind.TOOL]
    assert t.spans[1].data["arguments"] == {"a": 1} and t.spans[1].data["call_id"] is None


def test_first_and_last_text() -> None:
    msgs = [{"role": "user", "content": ""}, {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"}, {"role": "assistant", "content": None, "tool_calls": []}]
    assert first_text(msgs, "user") == "q" and last_text(msgs, "assistant") == "a"
    assert first_text([], "user") is None and last_text(msgs, "tool") is None


# --- fast paths agree with the general code ------------------------------------------------------


EDGE_MESSAGES: list[Any] = [
    {"role": "user", "content": "plain"},
    {"content": "key order", "role": "assistant"},
    {"role": "user", "content": ""},
    {"role": "assistant", "content": None},
    {"role": "user"},
    {"role": "user", "name": "x"},
    {"role": "system", "content": "s", "name": "policy"},
    {"role": "developer", "content": "d"},
    {"role": "USER", "content": "upper"},
    {"role": "assistant", "content": None, "tool_calls": []},
    {"role": "assistant", "content": "t", "tool_calls": [call("i", "f", '{"b": 1, "a": [2]}')]},
    {"role": "assistant", "content": None, "tool_calls": [call(None, "f", None), {"function": {}}, "junk"]},
    {"role": "assistant", "content": None, "tool_calls": [{"call_id": 7, "function": {"name": 3, "arguments": "x"}}]},
    {"role": "assistant", "content": None, "tool_calls": [{"tool_call": {"id": "o", "function": {"name": "n", "arguments": "{}"}}}]},
    {"role": "assistant", "content": None, "tool_calls": '[{"id": "s", "function": {"name": "n", "arguments": "{}"}}]'},
    {"role": "assistant", "content": '[{"id": "k", "function": {"name": "koog", "arguments": "{}"}}]'},
    {"role": "tool", "content": '[{"id": "k", "function": {"name": "koog", "arguments": "{}"}}]'},
    {"role": "tool", "content": '\u00a0[{"id": "k", "function": {"name": "koog", "arguments": "{}"}}]', "tool_call_id": "t"},
    {"role": "tool", "content": '[{"flight": "HAT1"}]', "tool_call_id": "t", "name": "search"},
    {"role": "tool", "content": " [1, 2]", "tool_call_id": 5},
    {"role": "tool", "content": "no id", "id": "from-id"},
    {"role": "tool", "content": "x", "tool_call_id": "a", "name": "n", "extra": 1},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "user", "parts": [{"type": "text", "content": "gen ai"}]},
    {"message": {"role": "user", "content": "openinference"}},
    {"role": "assistant", "content": {"type": "text", "text": "dict content"}},
    {"role": 3, "content": "bad role"},
    {"role": "user", "content": 5},
    "a bare string",
    None,
    ["not", "a", "message"],
]


@pytest.mark.parametrize("m", EDGE_MESSAGES, ids=range(len(EDGE_MESSAGES)))
def test_normalize_chat_message_equals_normalize_message(m: Any) -> None:
    assert normalize_chat_message(m) == normalize_message(m)
    # the transcript builds the same messages as the general normaliser, shape for shape
    assert transcript_spans([m], parent_id=None).messages == normalize_message(m)


def test_whitespace_table_is_exactly_str_isspace() -> None:
    assert set(ct._WHITESPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}


@pytest.mark.parametrize("raw", [
    '{"user_id": "mia"}',
    '{"b": 1, "a": {"d": [1, 2.5, null, true], "c": "x"}}',
    '{"nested": "{\\"b\\": 1, \\"a\\": 2}"}',
    '{"nested": "  [1, 2]"}',
    '{"nested": "\\u007b\\"a\\": 1}"}',
    '{"nested": "\\u00a0{\\"a\\": 1}"}',
    '{"twice": "\\"{\\\\\\"a\\\\\\": 1}\\""}',
    '{"nbsp": "\u00a0[1]"}',
    '{"quote": "say \\"{x}\\""}',
    '[{"a": 1}, "[2]"]',
    '{"big": 123456789012345678901234567890}',
    '"{\\"double\\": \\"encoded\\"}"',
    "not json",
])
def test_tool_args_hash_equals_the_canonical_hash(raw: str) -> None:
    args = ct._args(raw, None)[0]
    assert tool_args_hash(args, raw) == args_hash(args) == ct._args(raw, {})[1]


def test_args_cache_parses_each_text_once_and_shares_the_value() -> None:
    cache: ct.ArgsCache = {}
    msgs = [assistant(call("a", "f", '{"x": [1]}')), tool("a", "1"), assistant(call("b", "f", '{"x": [1]}')), tool("b", "2")]
    t1 = transcript_spans(msgs, parent_id=None, args_cache=cache)
    t2 = transcript_spans(msgs, parent_id=None, args_cache=cache)
    args = [s.data["arguments"] for t in (t1, t2) for s in t.spans if s.kind is SpanKind.TOOL]
    assert args == [{"x": [1]}] * 4 and all(a is args[0] for a in args) and len(cache) == 1


def test_tau_bench_messages_agree_with_the_general_normaliser() -> None:
    """Every one of the corpus file's 5,308 messages, through the fast paths."""
    doc = orjson.loads(corpus("tau-bench/gpt-4o-airline.json").read_bytes())
    n = 0
    for result in doc:
        want = [x for m in result["traj"] for x in normalize_message(m)]
        t = transcript_spans(result["traj"], parent_id="root")
        assert t.messages == want
        n += len(t.messages)
        for s in t.spans:
            if s.kind is SpanKind.TOOL:
                assert s.data["args_hash"] == args_hash(s.data["arguments"])
    assert n == 5308
