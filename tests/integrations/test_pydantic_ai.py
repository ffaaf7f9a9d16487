"""pydantic-ai agents recorded and replayed unchanged (tracetui.integrations.pydantic_ai).

Real pydantic-ai ``Agent``s with ``@agent.tool_plain`` tools (``get_weather`` reads the local
server's ``/api/weather``, ``send_report`` posts to ``/api/reports``), the model being the real
``ModelServer`` through pydantic-ai's own OpenAI models (Chat Completions and Responses), streamed
or not, async and ``run_sync``. No mocks.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.run import AgentRunResultEvent  # noqa: E402

import tracetui  # noqa: E402
from tracetui.core.diff import diff_traces  # noqa: E402
from tracetui.core.errors import ReplayDivergence  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402
from tracetui.integrations import pydantic_ai as tpa  # noqa: E402

# A recorded stream's deltas add up to its redacted `.done` event (wire.redact_stream): pydantic-ai
# warns when they differ, and that warning is an error here.
pytestmark = pytest.mark.filterwarnings("error:The provider sent a `function_call_arguments.done`:UserWarning")

PROMPT = "Report the weather"
INSTRUCTIONS = "You are a weather bot."


def add_tools(agent: Agent, server, *, decorate: bool = False) -> Agent:
    """The two tools, plain pydantic-ai function tools calling the server's production endpoints
    (``decorate``: also ``@tracetui.tool``)."""

    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return httpx.get(server.url + "/api/weather", params={"city": city}).json()

    def send_report(to: str, body: str) -> dict:
        """Send a weather report."""
        return httpx.post(server.url + "/api/reports", json={"to": to, "body": body}).json()

    if decorate:
        get_weather = tracetui.tool(read=True)(get_weather)
        send_report = tracetui.tool(send_report)
    agent.tool_plain(get_weather)
    agent.tool_plain(send_report)
    return agent


def explicit_agent(server, api: str = "chat") -> Agent:
    """An agent wired explicitly: tracetui's model and capability."""
    model = tpa.model("gpt-test", api=api, base_url=server.base_url_openai, api_key="test", max_retries=0)
    return add_tools(Agent(model, instructions=INSTRUCTIONS, capabilities=[tpa.capability()]), server)


async def run_agent(agent: Agent, how: str) -> str:
    if how == "run":
        return (await agent.run(PROMPT)).output
    if how == "run_stream":
        async with agent.run_stream(PROMPT) as result:
            return await result.get_output()
    if how == "run_stream_events":
        output = None
        async with agent.run_stream_events(PROMPT) as events:
            async for event in events:
                if isinstance(event, AgentRunResultEvent):
                    output = event.result.output
        return output
    if how == "iter":
        async with agent.iter(PROMPT) as run:
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as stream:
                        async for _ in stream:
                            pass
        return run.result.output
    raise AssertionError(how)


def no_divergence(a: str, b: str) -> None:
    diff = diff_traces(read_trace(a), read_trace(b))
    assert diff.divergences == [], [(d.type, [f.path for f in d.fields]) for d in diff.divergences]


def tool_spans(path: str) -> list[tuple[str, dict]]:
    return [(s.data["tool_name"], s.data["arguments"]) for s in read_trace(path).spans if "tool_name" in s.data]


async def record_and_frozen_replay(server, make_agent, how: str) -> None:
    """Rules 1 and 3: record, then a frozen replay of the unchanged agent matches it with no hit."""
    async with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
        session.output = await run_agent(make_agent(), how)
    assert session.result.error is None
    assert session.output == "Report sent for Paris."
    assert server.hit_count("/api/weather") == 1 and server.hit_count("/api/reports") == 1
    assert server.model_calls == 3
    assert [t for t, _ in tool_spans("rec.jsonl")] == ["get_weather", "send_report"]

    server.clear_hits()
    async with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
        session.output = await run_agent(make_agent(), how)
    result = session.result
    assert result.error is None and session.output == "Report sent for Paris."
    assert server.hits == []  # no model call, no tool call
    assert result.blocked == []
    assert result.outcome.divergences == []
    assert [w["tool"] for w in result.outcome.writes] == ["send_report"]
    assert result.outcome.llm_served == 3
    no_divergence("rec.jsonl", "replay.jsonl")


async def live_replays(server, make_agent, how: str) -> None:
    """Rules 5 and 2: a live-model replay of the unchanged agent matches the recording; with the
    model choosing another city it diverges on get_weather, naming the recorded call."""
    server.clear_hits()
    async with tracetui.replay("rec.jsonl", out="live.jsonl", llm="live") as session:
        session.output = await run_agent(make_agent(), how)
    assert session.result.error is None and session.result.outcome.divergences == []
    assert server.hit_count("/api/") == 0 and server.model_calls == 3
    no_divergence("rec.jsonl", "live.jsonl")

    server.city = "Lyon"
    server.clear_hits()
    with pytest.raises(ReplayDivergence):
        async with tracetui.replay("rec.jsonl", out="lyon.jsonl", llm="live") as session:
            await run_agent(make_agent(), how)
    (div,) = [d for d in session.result.outcome.divergences if d["type"] == "unrecorded_call"]
    assert div["tool"] == "get_weather"
    assert 'get_weather {"city":"Paris"}' in div["message"]
    assert server.hit_count("/api/") == 0 and server.model_calls >= 1


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_record_replay_explicit_model_and_capability(model_server, tmp_path, monkeypatch, api):
    monkeypatch.chdir(tmp_path)

    async def main():
        await record_and_frozen_replay(model_server, lambda: explicit_agent(model_server, api), "run")
        await live_replays(model_server, lambda: explicit_agent(model_server, api), "run")

    asyncio.run(main())


@pytest.mark.parametrize("api,how", [("chat", "run_stream"), ("responses", "run_stream"),
                                     ("chat", "run_stream_events"), ("responses", "iter")])
def test_record_replay_streaming(model_server, tmp_path, monkeypatch, api, how):
    monkeypatch.chdir(tmp_path)

    async def main():
        await record_and_frozen_replay(model_server, lambda: explicit_agent(model_server, api), how)
        wire = [s.data["wire_request"]["body"] for s in read_trace("rec.jsonl").spans if "wire_request" in s.data]
        assert all(body.get("stream") is True for body in wire)
        await live_replays(model_server, lambda: explicit_agent(model_server, api), how)

    asyncio.run(main())


@pytest.fixture
def patched(model_server, monkeypatch):
    """pydantic-ai patched (``tracetui record -- python app.py`` does this) and the environment of
    an unchanged program pointing the OpenAI SDK at the server."""
    assert tpa.patch() is True
    assert tpa.patch() is True  # idempotent
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url_openai)
    monkeypatch.setenv("OPENAI_API_KEY", "test")


def unchanged_agent(server, model: str = "openai:gpt-test", **kw) -> Agent:
    """The program's own agent: no tracetui anywhere."""
    return add_tools(Agent(model, instructions=INSTRUCTIONS), server, **kw)


@pytest.mark.parametrize("model,how", [("openai:gpt-test", "run"), ("openai-chat:gpt-test", "run_stream")])
def test_patch_records_an_unchanged_agent(model_server, tmp_path, monkeypatch, patched, model, how):
    """``openai:`` is the Responses API in this pydantic-ai, ``openai-chat:`` Chat Completions."""
    monkeypatch.chdir(tmp_path)

    async def main():
        await record_and_frozen_replay(model_server, lambda: unchanged_agent(model_server, model), how)
        paths = {s.data["wire_request"]["path"] for s in read_trace("rec.jsonl").spans if "wire_request" in s.data}
        assert paths == {"/v1/responses" if model.startswith("openai:") else "/v1/chat/completions"}
        await live_replays(model_server, lambda: unchanged_agent(model_server, model), how)

    asyncio.run(main())


def test_patch_records_an_unchanged_anthropic_agent(model_server, tmp_path, monkeypatch, patched):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")

    async def main():
        await record_and_frozen_replay(model_server, lambda: unchanged_agent(model_server, "anthropic:claude-test"),
                                       "run_stream")

    asyncio.run(main())


def test_patch_run_sync(model_server, tmp_path, monkeypatch, patched):
    monkeypatch.chdir(tmp_path)
    with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
        session.output = unchanged_agent(model_server).run_sync(PROMPT).output
    assert session.output == "Report sent for Paris." and model_server.model_calls == 3

    model_server.clear_hits()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
        session.output = unchanged_agent(model_server).run_sync(PROMPT).output
    assert session.output == "Report sent for Paris."
    assert model_server.hits == [] and session.result.blocked == []
    assert [w["tool"] for w in session.result.outcome.writes] == ["send_report"]
    no_divergence("rec.jsonl", "replay.jsonl")

    model_server.city = "Lyon"
    with pytest.raises(ReplayDivergence):
        with tracetui.replay("rec.jsonl", out="lyon.jsonl", llm="live") as session:
            unchanged_agent(model_server).run_sync(PROMPT)
    assert [d["tool"] for d in session.result.outcome.divergences] == ["get_weather"]
    assert model_server.hit_count("/api/") == 0


def test_one_span_per_call_when_seams_overlap(model_server, tmp_path, monkeypatch, patched):
    """The patched seam, the explicit capability and ``@tracetui.tool`` tools together still
    record each tool call once, and the frozen replay matches."""
    monkeypatch.chdir(tmp_path)

    def make():
        model = tpa.model("gpt-test", base_url=model_server.base_url_openai, api_key="test")
        return add_tools(Agent(model, capabilities=[tpa.TracetuiCapability()]), model_server, decorate=True)

    async def main():
        async with tracetui.record(out="rec.jsonl") as session:  # reads declared by @tracetui.tool(read=True)
            session.output = await run_agent(make(), "run")
        assert [t for t, _ in tool_spans("rec.jsonl")] == ["get_weather", "send_report"]
        model_server.clear_hits()
        async with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
            session.output = await run_agent(make(), "run")
        assert model_server.hits == [] and session.result.outcome.divergences == []
        no_divergence("rec.jsonl", "replay.jsonl")

    asyncio.run(main())


def test_outside_a_session_nothing_changes(model_server, tmp_path, monkeypatch, patched):
    monkeypatch.chdir(tmp_path)
    assert unchanged_agent(model_server).run_sync(PROMPT).output == "Report sent for Paris."
    assert model_server.hit_count("/api/") == 2 and model_server.model_calls == 3
    assert not list(tmp_path.glob("*.jsonl"))


def test_user_prompt_and_instructions_on_the_wire(model_server, tmp_path, monkeypatch):
    """The LLM span keeps pydantic-ai's user prompt and instructions (the wire request carries them)."""
    monkeypatch.chdir(tmp_path)

    async def main():
        async with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
            session.output = await run_agent(explicit_agent(model_server), "run")

    asyncio.run(main())
    first = next(s for s in read_trace("rec.jsonl").spans if "wire_request" in s.data)
    text = str(first.data.get("messages") or first.data["wire_request"]["body"]["messages"])
    assert PROMPT in text and INSTRUCTIONS in text


def test_model_retry_replayed_as_a_retry(model_server, tmp_path, monkeypatch):
    """A tool that raised ModelRetry is raised again in replay: the model gets the same retry
    prompt (the next request matches the recording) and the run goes on."""
    monkeypatch.chdir(tmp_path)

    def make():
        model = tpa.model("gpt-test", base_url=model_server.base_url_openai, api_key="test")
        agent = Agent(model, capabilities=[tpa.capability()])

        @agent.tool_plain
        def get_weather(city: str) -> dict:
            raise ModelRetry("weather service busy, try later")

        @agent.tool_plain
        def send_report(to: str, body: str) -> dict:
            return httpx.post(model_server.url + "/api/reports", json={"to": to, "body": body}).json()

        return agent

    async def main():
        async with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
            session.output = await run_agent(make(), "run")
        assert session.output == "Report sent for Paris."
        model_server.clear_hits()
        async with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
            session.output = await run_agent(make(), "run")
        assert session.output == "Report sent for Paris." and model_server.hits == []
        assert session.result.outcome.divergences == []
        no_divergence("rec.jsonl", "replay.jsonl")

    asyncio.run(main())
