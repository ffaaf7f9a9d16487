"""Raw model-client loops (openai Chat Completions and Responses, anthropic Messages), unchanged but
for the client tracetui hands out, recorded and replayed against the real local model server.

Every replay test counts the server's hits: a frozen replay makes none (no model call, no
production API call), a live-model replay reaches the model only, and the tools never.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

import tracetui
from tracetui.core.diff import diff_traces
from tracetui.core.errors import LiveCallBlocked, UnrecordedCall
from tracetui.core.readers import read_trace

from .servers import ModelServer

OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather now in a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "send_report", "description": "Send a report.",
                                      "parameters": {"type": "object", "properties": {
                                          "to": {"type": "string"}, "body": {"type": "string"}},
                                          "required": ["to", "body"]}}},
]
RESPONSES_TOOLS = [{"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
                    "parameters": t["function"]["parameters"]} for t in OPENAI_TOOLS]
ANTHROPIC_TOOLS = [{"name": t["function"]["name"], "description": t["function"]["description"],
                    "input_schema": t["function"]["parameters"]} for t in OPENAI_TOOLS]


def make_tools(server: ModelServer):
    """The agent's tools: plain functions calling the server's production API, made tracetui tools."""

    @tracetui.tool(read=True)
    def get_weather(city: str) -> dict:
        """Weather now in a city."""
        return httpx.get(server.url + "/api/weather", params={"city": city}).json()

    @tracetui.tool
    def send_report(to: str, body: str) -> dict:
        """Send a report."""
        return httpx.post(server.url + "/api/reports", json={"to": to, "body": body}).json()

    return {"get_weather": get_weather, "send_report": send_report}


def chat_agent(server: ModelServer, *, stream: bool) -> str:
    client = tracetui.openai_client(base_url=server.base_url_openai, api_key="test", max_retries=0)
    tools = make_tools(server)
    messages = [{"role": "system", "content": "You report the weather."},
                {"role": "user", "content": "Send ops the weather in the city you pick."}]
    for _ in range(6):
        if stream:
            with client.chat.completions.stream(model="gpt-test", messages=messages, tools=OPENAI_TOOLS,
                                                temperature=0) as s:
                for _event in s:
                    pass
                reply = s.get_final_completion()
        else:
            reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=OPENAI_TOOLS,
                                                   temperature=0)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            out = tools[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out)})
    raise AssertionError("the agent did not finish")


async def responses_agent(server: ModelServer, *, stream: bool) -> str:
    client = tracetui.async_openai_client(base_url=server.base_url_openai, api_key="test", max_retries=0)
    tools = make_tools(server)
    items: list = [{"role": "user", "content": "Send ops the weather in the city you pick."}]
    for _ in range(6):
        if stream:
            async with client.responses.stream(model="gpt-test", instructions="You report the weather.",
                                               input=items, tools=RESPONSES_TOOLS) as s:
                async for _event in s:
                    pass
                reply = await s.get_final_response()
        else:
            reply = await client.responses.create(model="gpt-test", instructions="You report the weather.",
                                                  input=items, tools=RESPONSES_TOOLS)
        calls = [o for o in reply.output if o.type == "function_call"]
        if not calls:
            return reply.output_text
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name,
                          "arguments": call.arguments})
            out = tools[call.name](**json.loads(call.arguments))
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": json.dumps(out)})
    raise AssertionError("the agent did not finish")


def anthropic_agent(server: ModelServer, *, stream: bool) -> str:
    client = tracetui.anthropic_client(base_url=server.url, api_key="test", max_retries=0)
    tools = make_tools(server)
    messages: list = [{"role": "user", "content": "Send ops the weather in the city you pick."}]
    for _ in range(6):
        kwargs = dict(model="claude-test", max_tokens=512, system="You report the weather.", messages=messages,
                      tools=ANTHROPIC_TOOLS)
        if stream:
            with client.messages.stream(**kwargs) as s:
                reply = s.get_final_message()
        else:
            reply = client.messages.create(**kwargs)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in reply.content if b.type == "text")
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": json.dumps(tools[u.name](**u.input))} for u in uses]})
    raise AssertionError("the agent did not finish")


AGENTS = {
    "chat": lambda server, stream: chat_agent(server, stream=stream),
    "responses": lambda server, stream: asyncio.run(responses_agent(server, stream=stream)),
    "anthropic": lambda server, stream: anthropic_agent(server, stream=stream),
}
CASES = [(name, stream) for name in AGENTS for stream in (False, True)]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _record(server: ModelServer, name: str, stream: bool, path: str = "rec.jsonl") -> tracetui.HarnessSession:
    with tracetui.record(out=path, input={"task": "weather report"}) as session:
        session.output = AGENTS[name](server, stream)
    assert session.result.error is None
    return session


def _divergences(a: str, b: str) -> list:
    return diff_traces(read_trace(a), read_trace(b)).divergences


@pytest.mark.parametrize("name,stream", CASES)
def test_frozen_replay_of_the_unchanged_agent_matches_with_no_live_call(model_server, workdir, name, stream):
    rec = _record(model_server, name, stream)
    assert rec.output == "Report sent for Paris."
    assert model_server.hit_count("/api/") == 2  # record: one read, one write, live
    model_server.clear_hits()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
        session.output = AGENTS[name](model_server, stream)
    assert session.output == "Report sent for Paris."
    assert model_server.hits == []  # no model call, no production call
    result = session.result
    assert result.error is None and not result.diverged
    assert result.outcome.llm_served == 3 and result.outcome.model_calls == 0 and result.outcome.live_calls == 0
    assert [w["tool"] for w in result.outcome.writes] == ["send_report"]  # the write intercepted
    assert _divergences("rec.jsonl", "replay.jsonl") == []


@pytest.mark.parametrize("name,stream", CASES)
def test_live_model_replay_of_the_unchanged_agent_has_no_false_divergence(model_server, workdir, name, stream):
    _record(model_server, name, stream)
    model_server.clear_hits()
    with tracetui.replay("rec.jsonl", out="replay.jsonl", llm="live") as session:
        session.output = AGENTS[name](model_server, stream)
    assert model_server.hit_count("/api/") == 0
    assert model_server.model_calls == 3  # the model was called again: fresh ids, usage, fingerprints
    assert session.result.outcome.model_calls == 3
    assert _divergences("rec.jsonl", "replay.jsonl") == []


@pytest.mark.parametrize("name,stream", CASES)
def test_live_model_replay_with_another_argument_is_an_unrecorded_call(model_server, workdir, name, stream):
    _record(model_server, name, stream)
    model_server.city = "Lyon"
    model_server.clear_hits()
    with pytest.raises(UnrecordedCall) as caught:
        with tracetui.replay("rec.jsonl", out="replay.jsonl", llm="live") as session:
            AGENTS[name](model_server, stream)
    assert "Nearest recorded calls" in str(caught.value) and '"city":"Paris"' in str(caught.value)
    assert model_server.hit_count("/api/") == 0
    (divergence,) = session.result.outcome.divergences
    assert divergence["type"] == "unrecorded_call" and divergence["tool"] == "get_weather"
    diff = diff_traces(read_trace("rec.jsonl"), read_trace("replay.jsonl"))
    first = diff.first
    assert first is not None and first.type.value == "decision_mismatch"  # the model chose another city
    assert [f.path for f in first.fields] == ["llm.output.tool_calls[0].arguments.city"]
    tool_rows = [d for d in diff.divergences if d.replay is not None and d.replay.span_id == divergence["span_id"]]
    assert tool_rows and "tool.arguments.city" in [f.path for f in tool_rows[0].fields]


def test_a_recorded_stream_is_served_as_the_same_events(model_server, workdir):
    _record(model_server, "chat", True)
    recorded = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    events = recorded[0].data["wire_response"]["events"]
    assert events[-1]["data"] == "[DONE]" and len(events) > 3
    client = httpx.Client(transport=tracetui.integrations.transport.ModelTransport())
    with tracetui.replay("rec.jsonl", out="replay.jsonl"):
        body = recorded[0].data["wire_request"]["body"]
        raw = client.post(model_server.base_url_openai + "/chat/completions", json=body).content
    from tracetui.integrations.wire import sse_events

    assert sse_events(raw) == events
    assert model_server.hit_count("/v1/") == 3  # the recording's three calls only


def test_the_recording_keeps_the_wire_and_compares_the_semantic_fields(model_server, workdir):
    _record(model_server, "chat", False)
    trace = read_trace("rec.jsonl")
    llm = [s for s in trace.spans if s.kind.value == "llm"]
    first = llm[0].data
    assert first["model"] == "gpt-test" and first["provider"] == "openai"
    assert first["params"] == {"temperature": 0}
    assert first["messages"][0] == {"role": "system", "content": "You report the weather."}
    assert first["output"]["tool_calls"][0]["name"] == "get_weather"
    assert first["finish_reason"] == "tool_call"  # the readers' vocabulary, not tool_calls
    assert first["usage"] and first["response_id"]
    assert first["wire_response"]["status"] == 200 and "choices" in first["wire_response"]["body"]
    assert first["tool_schemas_hash"] and first["prompt_hash"]
    assert "authorization" not in json.dumps(first["wire_request"]).lower()
    assert trace.header["prompt_hash"] and trace.header["recorder"] == "tracetui.session"
    tools = [s for s in trace.spans if s.kind.value == "tool"]
    assert [(t.data["tool_name"], t.data["effect"]) for t in tools] == [("get_weather", "read"),
                                                                         ("send_report", "write")]
    assert "ops@example.com" not in (workdir / "rec.jsonl").read_text()  # redacted before write


def test_a_failed_call_retried_is_recorded_and_replayed_in_order(model_server, workdir):
    client_kw = dict(base_url=model_server.base_url_openai, api_key="test", max_retries=1)
    model_server.fail_next(429)
    with tracetui.record(out="rec.jsonl") as session:
        reply = tracetui.openai_client(**client_kw).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}])
        session.output = reply.choices[0].message.content
    spans = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    assert [s.status.value for s in spans] == ["error", "ok"]
    assert spans[0].error_type == "HTTP 429"
    model_server.clear_hits()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as replayed:
        reply = tracetui.openai_client(**client_kw).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}])
        replayed.output = reply.choices[0].message.content
    assert reply.choices[0].message.content == session.output
    assert model_server.hits == [] and replayed.result.outcome.llm_served == 2
    assert _divergences("rec.jsonl", "replay.jsonl") == []


def test_other_requests_are_refused_in_replay(model_server, workdir):
    _record(model_server, "chat", False)
    client = tracetui.openai_client(base_url=model_server.base_url_openai, api_key="test", max_retries=0)
    model_server.clear_hits()
    import openai

    with tracetui.replay("rec.jsonl", out="replay.jsonl"):
        with pytest.raises((LiveCallBlocked, openai.APIConnectionError)) as caught:
            client.models.list()
    assert "refused GET /v1/models" in str(caught.value) + str(caught.value.__cause__)
    assert model_server.hits == []


def test_frozen_replay_of_a_changed_prompt_is_an_input_mismatch(model_server, workdir):
    _record(model_server, "chat", False)
    client = tracetui.openai_client(base_url=model_server.base_url_openai, api_key="test", max_retries=0)
    model_server.clear_hits()
    from tracetui.core.errors import InputMismatch

    with pytest.raises(openai_error_types()) as caught:
        with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
            client.chat.completions.create(model="gpt-test", tools=OPENAI_TOOLS, temperature=0, messages=[
                {"role": "system", "content": "You report the weather, briefly."},
                {"role": "user", "content": "Send ops the weather in the city you pick."}])
    assert isinstance(caught.value, InputMismatch) or isinstance(caught.value.__cause__, InputMismatch)
    assert session.result.outcome.divergences[0]["type"] == "input_mismatch"
    assert "messages[0].content" in session.result.outcome.divergences[0]["message"]
    assert model_server.hits == []


def openai_error_types():
    import openai

    from tracetui.core.errors import InputMismatch

    return (InputMismatch, openai.APIConnectionError)


@pytest.mark.parametrize("name", ["chat", "responses", "anthropic"])
def test_a_value_split_across_stream_deltas_is_redacted_whole(model_server, workdir, name):
    """The server streams 8-character pieces: ops@example.com in the write's arguments reaches the
    recorder split across deltas ("ps@examp" + "le.com"); each piece alone matches no rule."""
    from tracetui.integrations.wire import assemble_stream

    _record(model_server, name, True)
    joined = []
    for span in read_trace("rec.jsonl").spans:
        wire = span.data.get("wire_response") if span.kind.value == "llm" else None
        if wire and "events" in wire:
            joined.append(json.dumps(assemble_stream(span.data["api"], wire["events"])))
            joined.append("".join(e["data"]["delta"] for e in wire["events"] if isinstance(e["data"], dict)
                                  and str(e["data"].get("type", "")).endswith(".delta")))  # Responses deltas
    assert len(joined) == 6 and any("<EMAIL_" in j for j in joined)
    assert not any("example.com" in j for j in joined)  # the deltas add up to the token, not the address
    model_server.clear_hits()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:  # the rewritten stream replays
        session.output = AGENTS[name](model_server, True)
    assert model_server.hits == [] and not session.result.diverged
    assert _divergences("rec.jsonl", "replay.jsonl") == []


@pytest.mark.parametrize("name", ["chat", "anthropic"])
def test_a_recording_without_prompt_versions_triages_to_a_verdict(model_server, workdir, name):
    """Frameworks know no prompt id or version: the recorder keeps the rendered system prompt's
    hash, and triage's step 1 accepts it instead of calling the run not_replayable."""
    from tracetui.core.triage import triage

    _record(model_server, name, False)
    llm = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    assert all(s.data.get("prompt_hash") and "prompt_version" not in s.data for s in llm)
    model_server.city = "Lyon"
    with pytest.raises(UnrecordedCall):
        with tracetui.replay("rec.jsonl", out="replay.jsonl", llm="live"):
            AGENTS[name](model_server, False)
    result = triage(read_trace("rec.jsonl"), [read_trace("replay.jsonl")])
    assert result.replayability.verdict == "replayable"
    assert result.verdict is not None and result.verdict != "not_replayable"


def test_a_call_without_a_system_prompt_still_names_its_prompt(model_server, workdir):
    with tracetui.record(out="rec.jsonl"):
        tracetui.openai_client(base_url=model_server.base_url_openai, api_key="test", max_retries=0) \
            .chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    (llm,) = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    assert llm.data["prompt_hash"]  # the hash of an empty system prompt: triage's step 1 accepts it
