"""MCP tool calls recorded and replayed at ``mcp.ClientSession.call_tool``, against the real stdio
MCP server (tests/integrations/mcp_server.py) and the real local model server.

The agent is tests/integrations/apps/mcp_app.py: a raw ``openai`` chat loop whose tools are the MCP
server's, unchanged but for the model client the test hands it (the zero-code entry's tests run it
with no change at all). The MCP server logs every live ``tools/call`` it receives: replays must add
no line to that log; the model server's hit counter proves no model call in a frozen replay.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import tracetui
from tracetui.core.diff import diff_traces
from tracetui.core.errors import UnrecordedCall
from tracetui.core.readers import read_trace
from tracetui.integrations import mcp as tracetui_mcp

from .apps import mcp_app
from .servers import ModelServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def _setup(tmp_path, monkeypatch, mcp_log):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_TEST_MCP_LOG", str(mcp_log))
    assert tracetui_mcp.patch() is True
    assert tracetui_mcp.patch() is True  # idempotent


def mcp_calls(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run_agent(server: ModelServer, session_cm, *, stream: bool = False):
    """Run the MCP agent inside ``session_cm``; returns ``(session, error)``."""
    async def go():
        client = tracetui.async_openai_client(base_url=server.base_url_openai, api_key="test", max_retries=0)
        async with session_cm as session:
            session.output = await mcp_app.main(client=client, stream=stream)
        return session

    error = None
    try:
        session = asyncio.run(go())
    except BaseException as exc:  # anyio wraps the divergence in an ExceptionGroup
        error = exc
        session = session_cm
    return session, error


def divergences(a: str, b: str) -> list:
    return diff_traces(read_trace(a), read_trace(b)).divergences


@pytest.mark.parametrize("stream", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_record_then_frozen_replay_calls_nothing_live(model_server, mcp_log, stream):
    session, error = run_agent(model_server, tracetui.record(out="rec.jsonl"), stream=stream)
    assert error is None and session.output == "Report sent for Paris."
    assert [c["tool"] for c in mcp_calls(mcp_log)] == ["get_weather", "send_report"]
    trace = read_trace("rec.jsonl")
    tools = [s for s in trace.spans if s.kind.value == "tool"]
    assert [s.data["tool_name"] for s in tools] == ["get_weather", "send_report"]
    assert tools[0].data["arguments"] == {"city": "Paris"}
    assert tools[0].data["effect"] == "read" and tools[1].data["effect"] == "write"
    assert tools[0].data["output"]["content"][0]["text"] == "Paris: 18C, cloudy"  # the CallToolResult as JSON
    # a read on the server's readOnlyHint alone: an untrusted hint, said in the header and the report
    assert session.result.header["hinted_read_tools"] == ["get_weather"]
    assert any("readOnlyHint" in n for n in session.result.outcome.notes)

    model_server.clear_hits()
    mcp_log.unlink()
    replay, error = run_agent(model_server, tracetui.replay("rec.jsonl", out="replay.jsonl"), stream=stream)
    assert error is None and replay.output == "Report sent for Paris."
    assert mcp_calls(mcp_log) == []          # the server process started but never got a tools/call
    assert model_server.hits == []           # no model call, no /api call
    result = replay.result
    assert result.blocked == []              # the stdio pipes pass the socket guard
    assert [w["tool"] for w in result.outcome.writes] == ["send_report"]
    assert result.outcome.served == 1 and result.outcome.live_calls == 0
    assert result.outcome.divergences == []
    assert divergences("rec.jsonl", "replay.jsonl") == []


def test_live_model_replay_with_another_argument_is_an_unrecorded_call(model_server, mcp_log):
    run_agent(model_server, tracetui.record(out="rec.jsonl"))
    model_server.city = "Lyon"
    model_server.clear_hits()
    mcp_log.unlink()
    session, error = run_agent(model_server, tracetui.replay("rec.jsonl", out="live.jsonl", llm="live"))
    assert error is not None  # the divergence reached the agent (wrapped by anyio's task group)
    (div,) = session.result.outcome.divergences
    assert div["type"] == "unrecorded_call" and div["tool"] == "get_weather"
    assert 'get_weather {"city":"Paris"}' in div["message"]
    assert mcp_calls(mcp_log) == []
    assert model_server.hit_count("/api/") == 0 and model_server.model_calls == 1
    span = next(s for s in read_trace("live.jsonl").spans if s.span_id == div["span_id"])
    assert span.data["tool_name"] == "get_weather" and span.data["arguments"] == {"city": "Lyon"}
    assert divergences("rec.jsonl", "live.jsonl")  # tracetui diff sees the replay leave the recording


@pytest.mark.slow
def test_live_model_replay_of_the_unchanged_agent_has_no_divergence(model_server, mcp_log):
    run_agent(model_server, tracetui.record(out="rec.jsonl"))
    model_server.clear_hits()
    mcp_log.unlink()
    session, error = run_agent(model_server, tracetui.replay("rec.jsonl", out="live.jsonl", llm="live"))
    assert error is None and session.result.outcome.divergences == []
    assert model_server.model_calls == 3 and model_server.hit_count("/api/") == 0
    assert mcp_calls(mcp_log) == []
    assert divergences("rec.jsonl", "live.jsonl") == []  # usage, ids, timestamps never compared


@pytest.mark.slow
def test_a_hinted_read_is_never_sent_live_even_loose_with_allow_live(model_server, mcp_log):
    run_agent(model_server, tracetui.record(out="rec.jsonl"))
    model_server.city = "Lyon"
    mcp_log.unlink()
    session, _error = run_agent(model_server, tracetui.replay("rec.jsonl", out="loose.jsonl", mode="loose",
                                                              llm="live", allow_live=True))
    assert mcp_calls(mcp_log) == []
    assert [d["type"] for d in session.result.outcome.divergences] == ["unrecorded_call"]


def test_writes_are_intercepted_and_a_changed_write_is_a_write_mismatch(mcp_log):
    """Calls made straight on a ClientSession: the recorded write gets its recorded CallToolResult
    without reaching the server; a write with new arguments is a write_mismatch divergence (never
    executed, never a simulated success); outside a session the patched call_tool is the plain one."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async def calls(cm, body):
        async with stdio_client(mcp_app.server_params()) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                if cm is None:
                    return await client.call_tool("get_weather", {"city": "Oslo"})
                async with cm as session:
                    weather = await client.call_tool("get_weather", {"city": "Paris"})
                    sent = await client.call_tool("send_report", {"to": "ops@example.com", "body": body})
                    session.output = [weather.content[0].text, sent.structured_content]
                return weather, sent

    plain = asyncio.run(calls(None, ""))  # no session: untouched, live
    assert plain.content[0].text == "Oslo: 18C, cloudy" and len(mcp_calls(mcp_log)) == 1
    asyncio.run(calls(tracetui.record(out="rec.jsonl", read_tools={"get_weather"}), "first"))
    recorded = [s for s in read_trace("rec.jsonl").spans if s.data.get("tool_name") == "send_report"][0]
    mcp_log.unlink()
    weather, sent = asyncio.run(calls(tracetui.replay("rec.jsonl", out="replay.jsonl"), "first"))
    assert mcp_calls(mcp_log) == []
    assert type(weather).__name__ == "CallToolResult" and weather.content[0].text == "Paris: 18C, cloudy"
    assert type(sent).__name__ == "CallToolResult" and sent.is_error is False
    span = [s for s in read_trace("replay.jsonl").spans if s.data.get("tool_name") == "send_report"][0]
    assert span.attributes["replay.intercepted"] is True and span.data["output"] == recorded.data["output"]
    with pytest.raises(BaseException):
        asyncio.run(calls(tracetui.replay("rec.jsonl", out="changed.jsonl"), "another body"))
    assert mcp_calls(mcp_log) == []
    root = next(s for s in read_trace("changed.jsonl").spans if s.parent_id is None)
    (div,) = root.attributes["replay.summary"]["divergences"]
    assert div["type"] == "write_mismatch" and "arguments.body" in div["message"]
