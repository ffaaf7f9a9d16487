"""The rules of ``core/diff/envelopes.py``, each stated on values built in the test (issue 25: mutation testing).

``framework_value`` rewrites a chain/agent value into what the run meant (LangChain message envelopes as
messages, minted ids and volatile keys dropped); ``tool_message_content`` takes a tool's output out of its
``ToolMessage`` envelope. Each test states which values are rewritten and, as much, which are left as recorded.
"""

from __future__ import annotations

import json

from tracetui.core.diff.envelopes import framework_value, tool_message_content, tool_output

LC_TOOL = ["langchain", "schema", "messages", "ToolMessage"]


# -- Python reprs of framework objects (LangGraph logs them as strings) ----------------------------------------


def test_a_repr_loses_its_ids_and_nothing_else() -> None:
    assert framework_value("AIMessage(content='hi', id='run-1')") == "AIMessage(content='hi', )"
    assert framework_value("AIMessage(content='hi', id=\"run-1\")") == "AIMessage(content='hi', )"
    assert framework_value("ToolMessage(content='18', tool_call_id='call_1')") == "ToolMessage(content='18', )"
    assert framework_value("Send(node='tools', arg={'id': 'call_1', 'q': 1})") == "Send(node='tools', arg={, 'q': 1})"
    assert framework_value("Send(arg={'tool_call_id': 'c', 'system_fingerprint': 'fp', 'id': 'x'})") == \
        "Send(arg={, , })"


def test_a_repr_loses_each_metadata_block_whole_nested_braces_included_and_keeps_what_follows() -> None:
    s = ("AIMessage(content='a{b}', response_metadata={'token_usage': {'total_tokens': 5}, 'model': 'm'}, "
         "id='run-1', usage_metadata={'input_tokens': 3}, name='x')")
    assert framework_value(s) == "AIMessage(content='a{b}', , , , name='x')"
    # a block nested in one already taken out (token_usage in response_metadata) does not end the scan
    s = "X(response_metadata={'token_usage': {'n': 1}}, usage_metadata={'n': 2}, id='i', k=1)"
    assert framework_value(s) == "X(, , , k=1)"
    # blocks right after one another, and the dict-key form
    assert framework_value("X(response_metadata={'a': 1}usage_metadata={'b': 2}, id='i')") == "X(, )"
    assert framework_value("Send(arg={'usage_metadata': {'a': {'b': 1}}, 'id': 'i', 'v': 2})") == \
        "Send(arg={, , 'v': 2})"


def test_a_metadata_block_never_closed_takes_the_rest_of_the_string() -> None:
    assert framework_value("X(q=1, response_metadata={'a': {'b': 1}, id='m')") == "X(q=1, "


def test_a_call_like_string_without_any_id_is_left_as_recorded() -> None:
    """The scrubbing applies to reprs of framework objects, which carry ids; other text is the run's own."""
    s = "compute(x=1, usage_metadata={'n': 2})"
    assert framework_value(s) == s
    assert framework_value("not a repr, id='x'") == "not a repr, id='x'"


# -- JSON strings ----------------------------------------------------------------------------------------------


def test_json_strings_of_objects_and_arrays_are_read_as_their_values() -> None:
    assert framework_value('[{"run_id": "r1", "a": 1}]') == [{"a": 1}]
    assert framework_value('{"usage": {"n": 1}, "a": [1]}') == {"a": [1]}
    assert framework_value("[not json") == "[not json"


# -- LangChain message envelopes -------------------------------------------------------------------------------


def test_a_messages_own_dict_typed_by_langchain_is_a_message_without_its_id() -> None:
    assert framework_value({"type": "human", "content": "hi", "id": "m1"}) == {"role": "user", "content": "hi"}


def test_a_dict_with_a_role_or_without_content_is_not_a_langchain_message() -> None:
    openai = {"type": "human", "role": "user", "content": "hi", "id": "m1"}
    assert framework_value(openai) == openai
    no_content = {"type": "human", "text": "hi", "id": "m1"}
    assert framework_value(no_content) == no_content
    other = {"type": "document", "content": "abc", "id": "d1"}  # a type LangChain's messages do not have
    assert framework_value(other) == other


def test_a_serialised_langchain_object_that_is_no_message_keeps_its_fields() -> None:
    document = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
                "kwargs": {"page_content": "x", "id": "d1"}}
    assert framework_value(document) == document
    stub = {"lc": 1, "type": "not_implemented", "id": ["langchain", "schema", "messages", "HumanMessage"],
            "repr": "HumanMessage(...)"}
    assert framework_value(stub) == stub


def test_a_message_holding_two_tool_results_is_both_messages() -> None:
    m = {"type": "human", "data": {"content": [{"type": "tool_result", "content": "x", "tool_use_id": "t1"},
                                               {"type": "tool_result", "content": "y", "tool_use_id": "t2"}]}}
    assert framework_value(m) == [{"role": "tool", "content": "x"}, {"role": "tool", "content": "y"}]


def test_a_message_loses_its_tool_call_id_and_its_tool_calls_their_ids_and_nothing_else() -> None:
    tool = {"type": "tool", "data": {"content": "18", "tool_call_id": "call_1", "id": "t1", "name": "w"}}
    assert framework_value(tool) == {"role": "tool", "content": "18"}
    ai = {"type": "ai", "data": {"content": "", "id": "m1", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}}
    assert framework_value(ai) == {"role": "assistant", "content": None,
                                   "tool_calls": [{"name": "f", "arguments": {"a": 1}}]}


# -- tool calls and other ids ----------------------------------------------------------------------------------


def test_a_tool_calls_id_is_dropped_beside_its_name_and_args_or_arguments_only() -> None:
    assert framework_value({"id": "c1", "name": "f", "args": {}}) == {"name": "f", "args": {}}
    assert framework_value({"id": "c1", "name": "f", "arguments": {}}) == {"name": "f", "arguments": {}}
    for kept in ({"id": "doc-1", "text": "a"}, {"id": "doc-1", "name": "a"}, {"id": "c1", "args": {}},
                 {"name": "f", "args": {}}, {"args": [1], "x": 1}):
        assert framework_value(kept) == kept


# -- a tool's output in a ToolMessage envelope -----------------------------------------------------------------


def test_each_shape_of_a_toolmessage_gives_its_content() -> None:
    lc = {"lc": 1, "type": "constructor", "id": LC_TOOL, "kwargs": {"content": "18", "tool_call_id": "c1"}}
    chunk = {**lc, "id": [*LC_TOOL[:-1], "ToolMessageChunk"]}
    assert tool_message_content(lc) == "18" and tool_message_content(chunk) == "18"
    assert tool_message_content(json.dumps(lc)) == "18"
    assert tool_message_content({"type": "tool", "content": "18", "tool_call_id": "c1"}) == "18"
    assert tool_message_content({"type": "ToolMessageChunk", "content": "18", "tool_call_id": "c1"}) == "18"
    assert tool_message_content({"type": "tool", "data": {"content": "18", "tool_call_id": "c1"}}) == "18"
    wrapped = {**lc, "kwargs": {"content": '{"temp_c": 18, "run_id": "r1"}', "tool_call_id": "c1"}}
    assert tool_output(json.dumps(wrapped)) == {"temp_c": 18}  # then read as framework_value reads a value


def test_other_messages_and_values_are_a_tools_output_as_given() -> None:
    ai = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
          "kwargs": {"content": "18"}}
    for value in (ai, {"type": "ai", "data": {"content": "18"}}, {"type": "tool", "content": "18"},
                  {"lc": 1, "id": "ToolMessage", "kwargs": {"content": "18"}}, {"content": "18"}, "18", 18):
        assert tool_message_content(value) is value


def test_only_a_string_opening_with_a_brace_is_read_as_json_as_framework_value_reads_strings() -> None:
    spaced = " " + json.dumps({"type": "tool", "data": {"content": "18"}})
    assert tool_message_content(spaced) is spaced and framework_value(spaced) == spaced
