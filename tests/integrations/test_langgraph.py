"""LangGraph agents (a prebuilt ReAct agent and a hand-built StateGraph with a ToolNode) over
``ChatOpenAI``, recorded and replayed against the real local model server.

The tools are plain LangChain tools calling the server's production API (no ``@tracetui.tool``):
tracetui sees them only through ToolNode's ``wrap_tool_call`` / ``awrap_tool_call``. Every replay
test counts the server's hits: a frozen replay makes none, a live-model replay reaches the model
only, the tools never.
"""

from __future__ import annotations

import asyncio
import warnings

import httpx
import pytest

pytest.importorskip("langgraph.prebuilt")
pytest.importorskip("langchain_openai")

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import tools_condition  # noqa: E402

import tracetui  # noqa: E402
from tracetui.core.diff import diff_traces  # noqa: E402
from tracetui.core.errors import UnrecordedCall  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402
from tracetui.integrations import langgraph as tl  # noqa: E402

from .servers import ModelServer  # noqa: E402

QUESTION = "Send ops the weather in the city you pick."
SYSTEM = "You report the weather."
FINAL = "Report sent for Paris."


def make_tools(server: ModelServer, *, failing_weather: bool = False) -> list:
    """get_weather (a read) and send_report (a write), each sync and async, calling the server."""

    def get_weather(city: str) -> dict:
        if failing_weather:
            raise ValueError("weather service down")
        return httpx.get(server.url + "/api/weather", params={"city": city}).json()

    async def aget_weather(city: str) -> dict:
        if failing_weather:
            raise ValueError("weather service down")
        async with httpx.AsyncClient() as client:
            return (await client.get(server.url + "/api/weather", params={"city": city})).json()

    def send_report(to: str, body: str) -> dict:
        return httpx.post(server.url + "/api/reports", json={"to": to, "body": body}).json()

    async def asend_report(to: str, body: str) -> dict:
        async with httpx.AsyncClient() as client:
            return (await client.post(server.url + "/api/reports", json={"to": to, "body": body})).json()

    return [StructuredTool.from_function(get_weather, coroutine=aget_weather, name="get_weather",
                                         description="Weather now in a city."),
            StructuredTool.from_function(send_report, coroutine=asend_report, name="send_report",
                                         description="Send a report.")]


def react(server: ModelServer, *, streaming: bool = False, responses: bool = False, **tools_kw):
    """The prebuilt ReAct agent built with tracetui's helpers (``responses``: on the Responses API)."""
    model = tl.chat_openai(model="gpt-test", base_url=server.base_url_openai, api_key="test", max_retries=0,
                           temperature=0, streaming=streaming, use_responses_api=responses)
    return tl.react_agent(model, make_tools(server, **tools_kw), prompt=SYSTEM)


def state_graph(server: ModelServer, **tools_kw):
    """A hand-built agent: a model node and ``tl.tool_node`` (handle_tool_errors on)."""
    tools = make_tools(server, **tools_kw)
    model = tl.chat_openai(model="gpt-test", base_url=server.base_url_openai, api_key="test",
                           max_retries=0).bind_tools(tools)

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke([SystemMessage(SYSTEM), *state["messages"]])]}

    async def aagent(state: MessagesState) -> dict:
        return {"messages": [await model.ainvoke([SystemMessage(SYSTEM), *state["messages"]])]}

    from langchain_core.runnables import RunnableLambda

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(agent, afunc=aagent))
    graph.add_node("tools", tl.tool_node(tools, handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def invoke(graph) -> str:
    return graph.invoke({"messages": [HumanMessage(QUESTION)]})["messages"][-1].text


async def ainvoke(graph) -> str:
    return (await graph.ainvoke({"messages": [HumanMessage(QUESTION)]}))["messages"][-1].text


def stream_messages(graph) -> str:
    """``graph.stream(stream_mode="messages")``: the model's tokens as they come; the answer is the
    text of the last AI message's chunks."""
    text: dict[str, str] = {}
    for chunk, meta in graph.stream({"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"):
        if isinstance(chunk, AIMessage) and meta.get("langgraph_node") == "agent":
            text[chunk.id] = text.get(chunk.id, "") + (chunk.content or "")
    return [t for t in text.values() if t][-1]


async def astream_messages(graph) -> str:
    text: dict[str, str] = {}
    async for chunk, meta in graph.astream({"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"):
        if isinstance(chunk, AIMessage) and meta.get("langgraph_node") == "agent":
            text[chunk.id] = text.get(chunk.id, "") + (chunk.content or "")
    return [t for t in text.values() if t][-1]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _divergences(a: str, b: str) -> list:
    return diff_traces(read_trace(a), read_trace(b)).divergences


def _drive(run, graph):
    import asyncio
    import inspect

    if inspect.iscoroutinefunction(run):
        return asyncio.run(run(graph))
    return run(graph)


def _record(server, build, run, path="rec.jsonl", **kw):
    server.clear_hits()
    with tracetui.record(out=path, read_tools={"get_weather"}, input={"task": QUESTION}) as session:
        session.output = _drive(run, build(server, **kw))
    assert session.result.error is None, session.result.error
    assert server.hit_count("/api/") == 2  # record: the read and the write, live
    return session


def _check_all_rules(server, build, run, caught_by_tool_node=False, **kw):
    """Rules 1, 3, 5 and 2 of issue 16 for one agent and one way of running it; with
    ``caught_by_tool_node`` the ToolNode turns the divergence into an error ToolMessage."""
    rec = _record(server, build, run, **kw)
    assert rec.output == FINAL
    # 1 + 3: frozen replay of the unchanged agent: no hit at all, no divergence, the write intercepted
    server.clear_hits()
    with tracetui.replay("rec.jsonl", out="frozen.jsonl") as session:
        session.output = _drive(run, build(server, **kw))
    assert session.output == FINAL
    assert server.hits == []
    result = session.result
    assert result.error is None and not result.diverged and result.blocked == []
    assert result.outcome.llm_served == 3 and result.outcome.model_calls == 0 and result.outcome.live_calls == 0
    assert [w["tool"] for w in result.outcome.writes] == ["send_report"]
    assert _divergences("rec.jsonl", "frozen.jsonl") == []
    # 5: live-model replay of the unchanged agent: the model again, the tools never, no false divergence
    server.clear_hits()
    with tracetui.replay("rec.jsonl", out="live.jsonl", llm="live") as session:
        session.output = _drive(run, build(server, **kw))
    assert server.hit_count("/api/") == 0 and server.model_calls == 3
    assert _divergences("rec.jsonl", "live.jsonl") == []
    # 2: the live model picks another city: an unrecorded call, naming the nearest recorded one
    server.city = "Lyon"
    server.clear_hits()
    if caught_by_tool_node:  # handle_tool_errors=True: the agent reads the divergence as a tool error
        with tracetui.replay("rec.jsonl", out="lyon.jsonl", llm="live") as session:
            session.output = _drive(run, build(server, **kw))
        assert session.output == "Report sent for Lyon."
        assert server.model_calls == 3
    else:
        with pytest.raises(UnrecordedCall) as caught:
            with tracetui.replay("rec.jsonl", out="lyon.jsonl", llm="live") as session:
                _drive(run, build(server, **kw))
        assert '"city":"Paris"' in str(caught.value)
        assert server.model_calls == 1
    assert server.hit_count("/api/") == 0
    divergence = session.result.outcome.divergences[0]
    assert divergence["type"] == "unrecorded_call" and divergence["tool"] == "get_weather"
    assert 'get_weather {"city":"Paris"}' in divergence["message"]
    assert _divergences("rec.jsonl", "lyon.jsonl")  # the diff shows it too
    server.city = "Paris"


# ---- the rules, sync, async and streamed --------------------------------------------------------
def test_react_agent_invoke(model_server, workdir):
    _check_all_rules(model_server, react, invoke)


def test_react_agent_ainvoke(model_server, workdir):
    _check_all_rules(model_server, react, ainvoke)


def test_react_agent_streaming_chat_openai(model_server, workdir):
    _check_all_rules(model_server, lambda s: react(s, streaming=True), invoke)
    llm = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    assert llm[0].data["wire_request"]["body"]["stream"] is True
    assert llm[0].data["wire_response"]["events"][-1]["data"] == "[DONE]"


def test_react_agent_on_the_responses_api_streamed_async(model_server, workdir):
    _check_all_rules(model_server, lambda s: react(s, streaming=True, responses=True), ainvoke)
    llm = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    assert llm[0].data["wire_request"]["path"] == "/v1/responses"


def test_state_graph_stream_mode_messages(model_server, workdir):
    _check_all_rules(model_server, state_graph, stream_messages, caught_by_tool_node=True)
    llm = [s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]
    assert all(s.data["wire_request"]["body"].get("stream") is True for s in llm)


def test_state_graph_astream_mode_messages(model_server, workdir):
    _check_all_rules(model_server, state_graph, astream_messages, caught_by_tool_node=True)


# ---- what is recorded ------------------------------------------------------------------------------
def test_tool_spans_record_the_tool_output_as_json(model_server, workdir):
    _record(model_server, react, invoke)
    trace = read_trace("rec.jsonl")
    tools = [s for s in trace.spans if s.kind.value == "tool"]
    assert [(t.data["tool_name"], t.data["effect"]) for t in tools] == [("get_weather", "read"),
                                                                         ("send_report", "write")]
    assert tools[0].data["arguments"] == {"city": "Paris"}
    assert tools[0].data["output"] == {"city": "Paris", "temp_c": 18, "conditions": "cloudy"}
    assert tools[1].data["output"]["status"] == "queued"
    assert trace.header["read_tools"] == ["get_weather"] and trace.header["tool_schema_hash"]
    assert "ops@example.com" not in (workdir / "rec.jsonl").read_text()  # redacted before write


def test_a_tool_error_handled_by_tool_node_is_replayed_as_the_same_message(model_server, workdir):
    build = lambda s: state_graph(s, failing_weather=True)  # noqa: E731
    model_server.clear_hits()
    with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as rec:
        rec.output = invoke(build(model_server))
    assert rec.output == FINAL and model_server.hit_count("/api/") == 1  # the report only
    (weather,) = [s for s in read_trace("rec.jsonl").spans if s.data.get("tool_name") == "get_weather"]
    assert weather.status.value == "error" and "weather service down" in weather.data["output"]["message"]
    model_server.clear_hits()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
        result = build(model_server).invoke({"messages": [HumanMessage(QUESTION)]})
        session.output = result["messages"][-1].content
    (tool_msg, _report) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert tool_msg.status == "error" and "weather service down" in tool_msg.content
    assert model_server.hits == [] and session.result.outcome.llm_served == 3  # the same conversation
    assert _divergences("rec.jsonl", "replay.jsonl") == []


def _tool_spans(path: str) -> list[str]:
    return [s.data["tool_name"] for s in read_trace(path).spans if s.kind.value == "tool"]


def test_wrappers_of_your_own_run_around_the_recording(model_server, workdir):
    seen: list[str] = []

    def mine(request, execute):
        seen.append(request.tool_call["name"])
        return execute(request)

    model = tl.chat_openai(model="gpt-test", base_url=model_server.base_url_openai, api_key="test", max_retries=0)
    with tracetui.record(out="rec.jsonl", read_tools={"get_weather"}) as session:
        session.output = invoke(tl.react_agent(model, tl.tool_node(make_tools(model_server), wrap_tool_call=mine)))
    assert seen == ["get_weather", "send_report"]
    assert _tool_spans("rec.jsonl") == ["get_weather", "send_report"]
    # a sync wrapper alone: ToolNode runs it in async graphs too (as without tracetui), ours inside it
    seen.clear()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as session:
        session.output = asyncio.run(ainvoke(
            tl.react_agent(model, tl.tool_node(make_tools(model_server), wrap_tool_call=mine))))
    assert seen == ["get_weather", "send_report"] and session.output == FINAL
    assert _divergences("rec.jsonl", "replay.jsonl") == []
    wrap, awrap = tl.wrappers(mine)
    assert awrap is None and tl.wrappers(wrap, awrap) == (wrap, None)  # never wrapped twice


def test_outside_a_session_the_wrappers_change_nothing(model_server, workdir):
    assert invoke(react(model_server)) == FINAL
    assert model_server.hit_count("/api/") == 2 and model_server.model_calls == 3


# ---- patch(): the unchanged program ------------------------------------------------------------------
def unchanged_app(server: ModelServer, *, streaming: bool = False):
    """What a user writes: ``ChatOpenAI`` and ``create_react_agent``, no tracetui at all."""
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    model = ChatOpenAI(model="gpt-test", base_url=server.base_url_openai, api_key="test", max_retries=0,
                       streaming=streaming)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(model, make_tools(server), prompt=SYSTEM)


@pytest.fixture
def patched():
    assert tl.patch() is True
    assert tl.patch() is True  # idempotent
    try:
        yield
    finally:
        tl.unpatch()


def test_patch_records_an_unchanged_create_react_agent(model_server, workdir, patched):
    _check_all_rules(model_server, unchanged_app, invoke)


def test_patch_records_an_unchanged_streaming_agent_async(model_server, workdir, patched):
    _check_all_rules(model_server, lambda s: unchanged_app(s, streaming=True), ainvoke)


def test_patch_keeps_clients_and_wrappers_the_program_chose(model_server, workdir, patched):
    import httpx2
    from langchain_openai import ChatOpenAI

    kw = dict(model="gpt-test", api_key="test", base_url=model_server.base_url_openai, max_retries=0)
    own = ChatOpenAI(http_client=httpx2.Client(), **kw)  # the program's own client: left alone
    routed = ChatOpenAI(**kw)
    with tracetui.record(out="rec.jsonl") as session:
        session.output = [own.invoke("hi").text, routed.invoke("hi").text]
    assert model_server.model_calls == 2
    assert len([s for s in read_trace("rec.jsonl").spans if s.kind.value == "llm"]) == 1
    # our wrappers given to a patched ToolNode: not wrapped again (one span per call, not two)
    with tracetui.record(out="tools.jsonl", read_tools={"get_weather"}) as session:
        session.output = invoke(tl.react_agent(routed, tl.tool_node(make_tools(model_server))))
    assert _tool_spans("tools.jsonl") == ["get_weather", "send_report"]


def test_unpatch_restores_the_classes(model_server, workdir):
    from langchain_openai.chat_models.base import BaseChatOpenAI

    tl.patch()
    tl.unpatch()
    assert "__init__" not in BaseChatOpenAI.__dict__
    with tracetui.record(out="rec.jsonl") as session:
        session.output = invoke(unchanged_app(model_server))
    assert session.output == FINAL and _tool_spans("rec.jsonl") == []  # nothing recorded any more
