"""openai_shapes (usage, chat-completion choices, Responses API items) and otel_messages.tool_call's shapes."""

from __future__ import annotations

from typing import Any

import pytest

from tracetui.core.readers.openai_shapes import (
    choice_output,
    response_items,
    responses_output,
    usage_from,
)
from tracetui.core.readers.otel_messages import normalize_message, tool_call

# -- tool calls --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tc", "expected"), [
    # OpenAI chat completions
    ({"id": "call_1", "type": "function", "function": {"name": "get", "arguments": '{"q": 1}'}},
     {"id": "call_1", "name": "get", "arguments": {"q": 1}}),
    # inspect-ai ToolCall: the function is the name, arguments already an object
    ({"id": "toolu_01", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"},
     {"id": "toolu_01", "name": "bash", "arguments": {"cmd": "ls"}}),
    ({"id": "t2", "function": "submit", "arguments": '{"answer": "42"}'},
     {"id": "t2", "name": "submit", "arguments": {"answer": "42"}}),
    ({"id": "t3", "function": "think", "input": {"x": 1}}, {"id": "t3", "name": "think", "arguments": {"x": 1}}),
    ({"id": "t4", "function": "noargs"}, {"id": "t4", "name": "noargs", "arguments": None}),
    # Anthropic tool_use, OpenInference wrapper, any-agent
    ({"type": "tool_use", "id": "tu", "name": "f", "input": {"a": 1}}, {"id": "tu", "name": "f", "arguments": {"a": 1}}),
    ({"tool_call": {"id": 7, "function": {"name": "g", "arguments": "[1]"}}}, {"id": "7", "name": "g", "arguments": [1]}),
    ({"tool.name": "h", "tool.args": "{}"}, {"id": None, "name": "h", "arguments": {}}),
])
def test_tool_call_reads_every_shape(tc: dict[str, Any], expected: dict[str, Any]) -> None:
    assert tool_call(tc) == expected


def test_inspect_tool_calls_in_a_message_are_read() -> None:
    """The shape inspect-ai logs write (``ChatMessageAssistant.tool_calls``): formerly misread as no call."""
    m = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": "bash", "arguments": {"cmd": "pwd"}, "type": "function"},
        {"id": "c2", "function": "python", "arguments": {"code": "1+1"}}]}
    (msg,) = normalize_message(m)
    assert msg["tool_calls"] == [{"id": "c1", "name": "bash", "arguments": {"cmd": "pwd"}},
                                 {"id": "c2", "name": "python", "arguments": {"code": "1+1"}}]


# -- usage ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("candidates", "expected"), [
    (({"prompt_tokens": 75, "completion_tokens": 51, "total_tokens": 126},), {"input_tokens": 75, "output_tokens": 51}),
    (({"input_tokens": 43, "output_tokens": 2497},), {"input_tokens": 43, "output_tokens": 2497}),
    (({"promptTokens": 3, "completionTokens": 4},), {"input_tokens": 3, "output_tokens": 4}),
    (({"inputTokens": 3.0, "outputTokens": 4},), {"input_tokens": 3, "output_tokens": 4}),  # integral float
    (({"prompt_tokens": 9},), {"input_tokens": 9}),
    (({"input_tokens": None, "prompt_tokens": 5},), {"input_tokens": 5}),
    ((None, "x", {"total_tokens": 7}, {"output_tokens": 2}), {"output_tokens": 2}),  # first candidate with a count
    (({"input_tokens": 1}, {"input_tokens": 99, "output_tokens": 99}), {"input_tokens": 1}),
    (({"prompt_tokens": True, "completion_tokens": 1.5},), None),  # bools and fractions are not counts
    (({},), None),
    ((), None),
])
def test_usage_from(candidates: tuple[Any, ...], expected: dict[str, int] | None) -> None:
    assert usage_from(*candidates) == expected


# -- chat completions ------------------------------------------------------------------------------


def test_choice_output_reads_the_first_choice() -> None:
    resp = {"id": "chatcmpl-1", "model": "gpt-4o", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get", "arguments": "{}"}}]}},
        {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "other choice"}}]}
    msg, finish = choice_output(resp)
    assert msg == {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "name": "get", "arguments": {}}]}
    assert finish == "tool_call"


@pytest.mark.parametrize(("resp", "expected"), [
    ({"choices": [{"text": "legacy", "finish_reason": "length"}]}, ({"role": "assistant", "content": "legacy"}, "length")),
    ({"choices": [{"delta": {"content": "chunk"}, "finish_reason": None}]}, ({"role": "assistant", "content": "chunk"}, None)),
    ({"choices": [{"finish_reason": "stop"}]}, (None, "stop")),
    ({"choices": []}, (None, None)),
    ({"choices": ["x"]}, (None, None)),
    ({"content": "not a completion"}, (None, None)),
    ("text", (None, None)),
])
def test_choice_output_shapes(resp: Any, expected: tuple[Any, Any]) -> None:
    assert choice_output(resp) == expected


# -- Responses API --------------------------------------------------------------------------------------

ITEMS: list[Any] = [
    {"role": "user", "content": "weather in Paris?"},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "message", "content": [{"type": "output_text", "text": "Let me look."}]},
    {"type": "function_call", "call_id": "call_a", "name": "weather", "arguments": '{"city": "Paris"}'},
    {"type": "function_call", "call_id": "call_b", "name": "time", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_a", "output": "18C"},
    {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "noon"}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
]


def test_response_items_join_calls_to_the_assistant_message_and_answer_them() -> None:
    assert response_items(ITEMS) == [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_a", "name": "weather", "arguments": {"city": "Paris"}},
            {"id": "call_b", "name": "time", "arguments": {}}]},
        {"role": "tool", "content": "18C", "tool_call_id": "call_a"},
        {"role": "tool", "content": "noon", "tool_call_id": "call_b"},
    ]


def test_a_call_with_no_message_before_it_opens_one() -> None:
    assert response_items([{"type": "function_call", "call_id": 5, "name": "f", "arguments": "{}"}]) == [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "5", "name": "f", "arguments": {}}]}]


@pytest.mark.parametrize(("resp", "content", "calls", "finish"), [
    ({"status": "completed", "output": [{"type": "message", "role": "assistant",
                                         "content": [{"type": "output_text", "text": "Hi"}]}]}, "Hi", 0, "stop"),
    ({"status": "completed", "output": ITEMS[2:5]}, "Let me look.", 2, "tool_call"),
    ({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
      "output": [{"type": "message", "content": [{"type": "output_text", "text": "cut"}]}]}, "cut", 0, "length"),
    ({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []}, None, 0, "content_filter"),
    ({"status": "incomplete", "output": []}, None, 0, "incomplete"),
    ({"status": "failed", "output": [{"type": "reasoning"}]}, None, 0, "failed"),
])
def test_responses_output(resp: dict[str, Any], content: str | None, calls: int, finish: str) -> None:
    msg, fr = responses_output(resp)
    assert fr == finish
    if content is None and not calls:
        assert msg is None
    else:
        assert msg is not None and msg["role"] == "assistant" and msg["content"] == content
        assert len(msg.get("tool_calls", ())) == calls
