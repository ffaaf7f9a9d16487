"""Framework payloads compared as what the run meant (issue 18, item 1): ``diff.envelopes``."""

from __future__ import annotations

from tests.builders import make_span
from tracetui.core.diff.compare import compare_spans
from tracetui.core.diff.envelopes import framework_value, tool_output


def _lc_ai(msg_id: str, call_id: str, fp: str, tokens: int, city: str = "Paris") -> dict:
    """An AIMessage as LangChain's ``message_to_dict`` writes it (OpenInference chain spans)."""
    return {"type": "ai", "data": {
        "content": "", "id": msg_id, "type": "ai", "name": None, "example": False,
        "additional_kwargs": {"refusal": None},
        "response_metadata": {"id": f"chatcmpl-{msg_id}", "system_fingerprint": fp,
                              "token_usage": {"total_tokens": tokens}, "finish_reason": "tool_calls"},
        "tool_calls": [{"name": "get_weather", "args": {"city": city}, "id": call_id, "type": "tool_call"}],
        "usage_metadata": {"input_tokens": tokens, "output_tokens": 3, "total_tokens": tokens + 3}}}


def _lc_human(msg_id: str, text: str = "weather?") -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
            "kwargs": {"content": text, "id": msg_id, "type": "human"}}


def _chain(name: str, msgs: list, **extra: object) -> object:
    return make_span("other", name, input={"messages": msgs, **extra}, output={"messages": msgs})


def test_two_runs_of_one_chain_differ_only_in_minted_ids_and_are_equal() -> None:
    a = _chain("agent", [_lc_human("h1"), _lc_ai("m1", "call_1", "fp_a", 10)], run_id="r1")
    b = _chain("agent", [_lc_human("h2"), _lc_ai("m2", "call_2", "fp_b", 99)], run_id="r2")
    assert compare_spans(a, b) == (None, ())


def test_a_changed_argument_inside_a_chain_payload_still_diverges() -> None:
    a = _chain("agent", [_lc_human("h1"), _lc_ai("m1", "call_1", "fp_a", 10)])
    b = _chain("agent", [_lc_human("h2"), _lc_ai("m2", "call_2", "fp_b", 99, city="Lyon")])
    dtype, fields = compare_spans(a, b)
    assert dtype is not None and dtype.value == "input_mismatch"
    assert fields[0].path == "other.input.messages[1].tool_calls[0].arguments.city"


def test_both_message_shapes_normalise_to_the_langsmith_readers_message() -> None:
    assert framework_value(_lc_human("x", "hi")) == {"role": "user", "content": "hi"}
    assert framework_value({"type": "human", "data": {"content": "hi", "id": "y"}}) == {"role": "user", "content": "hi"}


def test_a_tool_output_in_a_toolmessage_envelope_is_its_content() -> None:
    wrapped = {"type": "tool", "data": {"content": '{"temp_c": 18}', "tool_call_id": "call_9", "id": "t1",
                                         "name": "get_weather", "status": "success"}}
    assert tool_output(wrapped) == {"temp_c": 18}
    a = make_span("tool", "get_weather", arguments={"city": "Paris"}, output=wrapped)
    b = make_span("tool", "get_weather", arguments={"city": "Paris"}, output={"temp_c": 18})
    assert compare_spans(a, b) == (None, ())


def test_an_llm_endpoint_url_is_not_a_divergence_but_a_parameter_is() -> None:
    def llm(params: dict) -> object:
        return make_span("llm", "chat", model="m", messages=[], params=params)

    assert compare_spans(llm({"temperature": 0, "base_url": "http://127.0.0.1:1/v1"}),
                         llm({"temperature": 0, "base_url": "http://127.0.0.1:2/v1"})) == (None, ())
    assert compare_spans(llm({"temperature": 0}), llm({"temperature": 1}))[0] is not None


def test_langgraph_send_repr_strings_lose_their_ids() -> None:
    def send(call_id: str, msg_id: str, city: str = "Paris") -> str:
        return (f"Send(node='tools', arg={{'tool_call': {{'name': 'get_weather', 'args': {{'city': '{city}'}}, "
                f"'id': '{call_id}', 'type': 'tool_call'}}, 'state': {{'messages': [AIMessage(content='', "
                f"response_metadata={{'token_usage': {{'total_tokens': 5}}, 'id': 'x'}}, id='{msg_id}')]}}}})")

    assert framework_value(send("c1", "m1")) == framework_value(send("c2", "m2"))
    assert framework_value(send("c1", "m1")) != framework_value(send("c1", "m1", city="Lyon"))
