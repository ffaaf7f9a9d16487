"""The GenAI ``gen_ai.client.inference.operation.details`` event (semconv 1.37+) read (issue 18, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.otlp_helpers import to_attributes
from tracetui.core.readers import read_trace

INPUT = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
OUTPUT = [{"role": "assistant", "parts": [{"type": "text", "content": "Cloudy, 18 C."}], "finish_reason": "stop"}]


def _doc(structured: bool) -> dict:
    details = {
        "gen_ai.input.messages": INPUT if structured else json.dumps(INPUT),
        "gen_ai.output.messages": OUTPUT if structured else json.dumps(OUTPUT),
        "gen_ai.system_instructions": [{"type": "text", "content": "Be brief."}] if structured
        else json.dumps([{"type": "text", "content": "Be brief."}]),
    }
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chat gpt-4o",
        "kind": 3, "startTimeUnixNano": "1762161242118000000", "endTimeUnixNano": "1762161243118000000",
        "attributes": to_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                     "gen_ai.provider.name": "openai"}),
        "events": [{"name": "gen_ai.client.inference.operation.details", "timeUnixNano": "1762161243118000000",
                    "attributes": to_attributes(details)}],
        "status": {},
    }
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": [span]}]}]}


@pytest.mark.parametrize("structured", [False, True], ids=["json-strings", "structured"])
def test_content_on_the_operation_details_event_is_read(tmp_path: Path, structured: bool) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc(structured)))
    trace = read_trace(path)
    (span,) = trace.spans
    assert span.data["messages"] == [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "Weather in Paris?"}]
    assert span.data["output"] == {"role": "assistant", "content": "Cloudy, 18 C."}
    assert span.data["finish_reason"] == "stop"
    assert not [i for i in trace.issues if "content capture" in i.message]


def test_a_responses_answer_written_as_content_and_as_contents_is_read_once() -> None:
    """OpenInference flattens a Responses answer to ``message.content`` and ``message.contents.0``."""
    from tracetui.core.readers.otel_messages import normalize_message

    msg = {"role": "assistant", "content": "Cloudy, 18 C.",
           "contents": [{"message_content": {"type": "text", "text": "Cloudy, 18 C."}}]}
    assert normalize_message(msg) == [{"role": "assistant", "content": "Cloudy, 18 C."}]
    two = {"role": "assistant", "contents": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}
    assert normalize_message(two) == [{"role": "assistant", "content": "A\nB"}]
