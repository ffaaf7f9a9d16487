"""Responses built from a recorded output message (integrations/wire_build), read back by ``wire``.

A recording made by another tool holds an LLM call's output message, not its wire response; a
frozen replay builds one in the API and streaming the client asked for. Each built body and
stream must read back (``wire.response_fields``, the reader of live responses) to the recorded
output and finish reason.
"""

from __future__ import annotations

import pytest

from tracetui.integrations import wire
from tracetui.integrations.wire_build import build_response

CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
                       {"id": "call_2", "name": "get_time", "arguments": {}}]}
TEXT = {"role": "assistant", "content": "Report sent for Paris."}


@pytest.mark.parametrize("api", wire.APIS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("output,finish", [(CALL, "tool_call"), (TEXT, "stop")])
def test_built_response_reads_back_to_the_recorded_output(api, stream, output, finish):
    data = {"output": output, "finish_reason": finish, "usage": {"input_tokens": 12, "output_tokens": 5},
            "response_id": "resp-1"}
    status, ctype, body = build_response(api, stream, data, "gpt-test",
                                         {"stream_options": {"include_usage": True}})
    assert status == 200 and ctype == ("text/event-stream" if stream else "application/json")
    fields = wire.response_fields(api, status, ctype, body)
    assert fields["output"] == output
    assert fields["finish_reason"] == finish
    assert fields["response_id"] == "resp-1"


def test_a_failed_recorded_call_is_a_server_error_and_a_bare_string_output_a_text_answer():
    status, _ctype, _body = build_response("openai.chat", False, {"output": None}, "gpt-test")
    assert status == 500
    status, ctype, body = build_response("anthropic.messages", False, {"output": "plain answer"}, "claude-test")
    assert wire.response_fields("anthropic.messages", status, ctype, body)["output"] == {
        "role": "assistant", "content": "plain answer"}
