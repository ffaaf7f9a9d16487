"""The OpenAI Agents SDK integration against the real SDK and the real local ModelServer (no mocks).

An agent with a read tool (get_weather -> GET /api/weather) and a write tool (send_report ->
POST /api/reports), its model the ModelServer through the SDK's own OpenAI models (Responses, the
SDK's default, and Chat Completions; streamed and not):

1. record -> frozen replay: ``diff_traces`` finds no divergence, the server sees no request, nothing
   is blocked, and the SDK creates no trace during the replay (its notes say so);
2. live-model replay with the model picking another city -> ``unrecorded_call`` on get_weather
   naming the recorded call, no /api/ request;
3. the write is intercepted in replay;
4. the same streamed (``Runner.run_streamed``);
5. a live-model replay of the unchanged agent -> no divergence.

Plus ``patch()`` on an unchanged program (default client, tools built before it, ``run_sync``),
``@function_tool`` over ``@tracetui.tool`` recorded once, and a copied tool staying recorded.
Every test leaves the SDK's global state (default client, tracing, patches) as it found it.
"""

from __future__ import annotations

import asyncio
import copy
import json

import httpx
import pytest

agents = pytest.importorskip("agents")

import agents.tracing.setup as tracing_setup  # noqa: E402
from agents import Agent, FunctionTool, RunConfig, Runner, function_tool  # noqa: E402
from agents.models import _openai_shared, openai_provider  # noqa: E402
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel  # noqa: E402
from agents.run import AgentRunner  # noqa: E402
from agents.tracing.processor_interface import TracingProcessor  # noqa: E402
from agents.tracing.provider import DefaultTraceProvider  # noqa: E402

import tracetui  # noqa: E402
from tracetui.core.diff import diff_traces  # noqa: E402
from tracetui.core.errors import UnrecordedCall  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402
from tracetui.integrations import openai_agents  # noqa: E402

PROMPT = "Report the weather"


class Collector(TracingProcessor):
    """Keeps the SDK's traces in memory (instead of exporting them to api.openai.com)."""

    def __init__(self) -> None:
        self.traces: list[str] = []
        self.spans = 0

    def on_trace_start(self, trace) -> None:
        self.traces.append(trace.trace_id)

    def on_trace_end(self, trace) -> None:
        pass

    def on_span_start(self, span) -> None:
        self.spans += 1

    def on_span_end(self, span) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@pytest.fixture
def sdk(tmp_path, monkeypatch, model_server):
    """cwd tmp_path, ``OPENAI_API_KEY=test`` and ``OPENAI_BASE_URL`` at the server, and the SDK's
    tracing going to an in-memory ``Collector``; afterwards every patch is undone and the SDK's
    global state is checked to be what it was."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url_openai)
    monkeypatch.delenv("OPENAI_AGENTS_DISABLE_TRACING", raising=False)
    collector = Collector()
    provider = DefaultTraceProvider()
    provider.register_processor(collector)
    monkeypatch.setattr(tracing_setup, "GLOBAL_TRACE_PROVIDER", provider)
    before = {"post_init": FunctionTool.__post_init__, "run": AgentRunner.run, "run_sync": AgentRunner.run_sync,
              "run_streamed": AgentRunner.run_streamed, "http": openai_provider.shared_http_client,
              "create_trace": DefaultTraceProvider.create_trace, "create_span": DefaultTraceProvider.create_span,
              "client": _openai_shared.get_default_openai_client(), "key": _openai_shared.get_default_openai_key()}
    yield collector
    openai_agents.unpatch()
    after = {"post_init": FunctionTool.__post_init__, "run": AgentRunner.run, "run_sync": AgentRunner.run_sync,
             "run_streamed": AgentRunner.run_streamed, "http": openai_provider.shared_http_client,
             "create_trace": DefaultTraceProvider.create_trace, "create_span": DefaultTraceProvider.create_span,
             "client": _openai_shared.get_default_openai_client(), "key": _openai_shared.get_default_openai_key()}
    assert after == before
    assert openai_agents.patched() == []


def weather_tools(server):
    @function_tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return httpx.get(server.url + "/api/weather", params={"city": city}).json()

    @function_tool
    def send_report(to: str, body: str) -> dict:
        """Send a report."""
        return httpx.post(server.url + "/api/reports", json={"to": to, "body": body}).json()

    return [get_weather, send_report]


def weather_agent(server, api):
    """``api``: "responses" (the SDK's default model, through ``model_provider``) or "chat"
    (``OpenAIChatCompletionsModel`` on ``tracetui.async_openai_client``)."""
    if api == "chat":
        model = OpenAIChatCompletionsModel(
            "gpt-test", openai_client=tracetui.async_openai_client(base_url=server.base_url_openai, max_retries=0))
        run_config = RunConfig()
    else:
        model = "gpt-test"
        run_config = RunConfig(model_provider=openai_agents.model_provider(
            base_url=server.base_url_openai, api_key="test", max_retries=0))
    agent = Agent(name="weather", instructions="You are a weather bot.", tools=weather_tools(server), model=model)
    return openai_agents.instrument(agent), run_config


def run(build, stream):
    """Run the agent ``build()`` gives (built in the run's event loop: an HTTP client's pool is
    bound to one loop) on ``PROMPT``; returns its final output."""
    async def go():
        agent, run_config = build()
        if stream:
            result = Runner.run_streamed(agent, PROMPT, run_config=run_config)
            async for _event in result.stream_events():
                pass
            return result.final_output
        return (await Runner.run(agent, PROMPT, run_config=run_config)).final_output

    return asyncio.run(go())


def no_divergence(a, b):
    diff = diff_traces(read_trace(a), read_trace(b))
    assert diff.divergences == [], [(d.type, d.message) for d in diff.divergences]


def tool_spans(path):
    return [s for s in read_trace(path).spans if s.data.get("tool_name")]


def assert_frozen_replay(server, collector, recording, out, agent_run):
    server.clear_hits()
    traces = len(collector.traces)
    with tracetui.replay(recording, out=out) as session:
        session.output = agent_run()
    assert session.output == "Report sent for Paris."
    assert server.hits == []  # no model call, no /api call
    assert session.result.blocked == []
    assert session.result.outcome.divergences == []
    assert [w["tool"] for w in session.result.outcome.writes] == ["send_report"]  # intercepted
    assert len(collector.traces) == traces  # the SDK created no trace during the replay
    assert openai_agents.TRACING_NOTE in session.result.outcome.notes
    no_divergence(recording, out)


def assert_live_replays(server, recording, agent_run):
    server.clear_hits()
    with tracetui.replay(recording, out="live_same.jsonl", llm="live") as session:
        session.output = agent_run()
    assert session.output == "Report sent for Paris."
    assert server.hit_count("/api/") == 0 and server.hit_count("/v1/") == 3
    no_divergence(recording, "live_same.jsonl")

    server.city = "Lyon"
    server.clear_hits()
    with pytest.raises(Exception) as raised:  # the SDK wraps the tool's divergence in a UserError
        with tracetui.replay(recording, out="live_lyon.jsonl", llm="live") as session:
            agent_run()
    assert isinstance(raised.value, UnrecordedCall) or isinstance(raised.value.__cause__, UnrecordedCall)
    (div,) = session.result.outcome.divergences
    assert div["type"] == "unrecorded_call" and div["tool"] == "get_weather"
    assert 'get_weather {"city":"Paris"}' in div["message"]
    assert server.hit_count("/api/") == 0
    server.city = "Paris"


@pytest.mark.parametrize("api, stream", [("responses", False), ("responses", True), ("chat", False), ("chat", True)])
def test_record_replay_frozen_and_live(sdk, model_server, api, stream):
    agent_run = lambda: run(lambda: weather_agent(model_server, api), stream)  # noqa: E731

    with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
        session.output = agent_run()
    assert session.output == "Report sent for Paris."
    assert model_server.hit_count("/api/weather") == 1 and model_server.hit_count("/api/reports") == 1
    assert model_server.hit_count("/v1/responses" if api == "responses" else "/v1/chat/completions") == 3
    assert sdk.traces, "the SDK traces as usual while recording"
    spans = tool_spans("rec.jsonl")
    assert [(s.data["tool_name"], s.data["effect"]) for s in spans] == [("get_weather", "read"), ("send_report", "write")]
    assert spans[0].data["arguments"] == {"city": "Paris"}
    assert spans[0].data["output"] == {"city": "Paris", "temp_c": 18, "conditions": "cloudy"}

    assert_frozen_replay(model_server, sdk, "rec.jsonl", "replay.jsonl", agent_run)
    assert_live_replays(model_server, "rec.jsonl", agent_run)


def test_patch_records_an_unchanged_program(sdk, model_server):
    tools = weather_tools(model_server)  # built before patch(): Runner.run instruments them
    agent = Agent(name="weather", instructions="You are a weather bot.", tools=tools, model="gpt-test")
    assert openai_agents.patch() is True
    assert openai_agents.patch() is True  # idempotent
    late = weather_tools(model_server)[0]  # built after patch(): wrapped at construction
    assert type(late.on_invoke_tool) is openai_agents.RecordedInvoker
    agent_run = lambda: Runner.run_sync(agent, PROMPT).final_output  # noqa: E731

    with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
        session.output = agent_run()
    assert session.output == "Report sent for Paris."
    assert model_server.hit_count("/v1/responses") == 3 and model_server.hit_count("/api/") == 2
    assert [s.data["tool_name"] for s in tool_spans("rec.jsonl")] == ["get_weather", "send_report"]

    assert_frozen_replay(model_server, sdk, "rec.jsonl", "replay.jsonl", agent_run)
    assert_live_replays(model_server, "rec.jsonl", agent_run)


def test_function_tool_over_tracetui_tool_is_recorded_once(sdk, model_server):
    @function_tool
    @tracetui.tool(read=True, name="agents_test_weather")
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return httpx.get(model_server.url + "/api/weather", params={"city": city}).json()

    send_report = weather_tools(model_server)[1]
    agent = openai_agents.instrument(Agent(name="weather", instructions="You are a weather bot.",
                                           tools=[get_weather, send_report], model="gpt-test"))

    def agent_run():
        return run(lambda: (agent, RunConfig(model_provider=openai_agents.model_provider(
            base_url=model_server.base_url_openai))), stream=False)

    with tracetui.record(out="rec.jsonl") as session:  # the read is declared by the decorator
        session.output = agent_run()
    spans = tool_spans("rec.jsonl")
    assert [(s.data["tool_name"], s.data["effect"]) for s in spans] == [("agents_test_weather", "read"),
                                                                        ("send_report", "write")]
    assert_frozen_replay(model_server, sdk, "rec.jsonl", "replay.jsonl", agent_run)


def test_copied_tool_stays_recorded_and_keeps_its_function(sdk, model_server):
    tool = openai_agents.instrument_tool(weather_tools(model_server)[0])
    assert openai_agents.instrument_tool(tool).on_invoke_tool is tool.on_invoke_tool  # idempotent
    assert tool.__wrapped__.__name__ == "get_weather"  # the SDK's isinstance check still sees its invoker
    copied = copy.copy(tool)
    assert type(copied.on_invoke_tool) is openai_agents.RecordedInvoker
    assert copied.on_invoke_tool.tool is copied and tool.on_invoke_tool.tool is tool
    assert openai_agents.tool_arguments('{"city": "Paris"}') == {"city": "Paris"}
    assert openai_agents.tool_arguments("not json") == {"input": "not json"}
    assert openai_agents.model_visible(agents.ToolOutputText(text="hi")) == {"type": "text", "text": "hi"}
    assert openai_agents.model_visible({"a": [1]}) == {"a": [1]}
    assert json.loads(json.dumps(openai_agents.model_visible({"a": (1,)}))) == "{'a': (1,)}"
