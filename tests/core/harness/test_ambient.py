"""Ambient sessions (tracetui.record / tracetui.replay) and @tracetui.tool, without any framework."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

import tracetui
from tracetui.core.diff import diff_traces
from tracetui.core.errors import HarnessError, RecordingExhausted, UnrecordedCall
from tracetui.core.readers import read_trace

LIVE: list[tuple[str, object]] = []


@tracetui.tool(read=True)
def lookup_order(order_id: str, *, verbose: bool = False) -> dict:
    """Look an order up."""
    LIVE.append(("lookup_order", order_id))
    return {"order_id": order_id, "status": "shipped", "email": "jane@example.com"}


@tracetui.tool
async def refund(order_id: str, amount: float) -> dict:
    """Refund an order."""
    LIVE.append(("refund", order_id))
    await asyncio.sleep(0.05)
    return {"refund_id": "rf-1", "amount": amount}


def agent(order_id: str) -> dict:
    order = lookup_order(order_id)
    return asyncio.run(refund(order["order_id"], 12.5))


@pytest.fixture(autouse=True)
def _workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    LIVE.clear()


def test_the_decorator_keeps_what_frameworks_read():
    import inspect

    assert lookup_order.__name__ == "lookup_order" and lookup_order.__doc__ == "Look an order up."
    assert inspect.signature(lookup_order) == inspect.signature(lookup_order.__wrapped__)
    assert list(inspect.signature(lookup_order).parameters) == ["order_id", "verbose"]
    assert inspect.iscoroutinefunction(refund)
    assert lookup_order("A1") == {"order_id": "A1", "status": "shipped", "email": "jane@example.com"}
    assert LIVE == [("lookup_order", "A1")]  # outside a session: the function itself


def test_record_then_replay_serves_reads_and_intercepts_writes():
    with tracetui.record(out="rec.jsonl", input={"order": "A1"}) as session:
        session.output = agent("A1")
    assert LIVE == [("lookup_order", "A1"), ("refund", "A1")]
    text = open("rec.jsonl").read()
    assert "jane@example.com" not in text and "<EMAIL_" in text  # redacted before write
    trace = read_trace("rec.jsonl")
    tools = {s.data["tool_name"]: s.data for s in trace.spans if s.kind.value == "tool"}
    assert tools["lookup_order"]["arguments"] == {"order_id": "A1"} and tools["lookup_order"]["effect"] == "read"
    assert tools["refund"]["effect"] == "write"
    assert trace.header["read_tools"] == ["lookup_order"] and trace.header["tool_schema_hash"]
    LIVE.clear()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as replay:
        replay.output = agent("A1")
    assert LIVE == []  # neither the read nor the write ran live
    assert replay.result.outcome.served == 1 and [w["tool"] for w in replay.result.outcome.writes] == ["refund"]
    assert replay.output == {"refund_id": "rf-1", "amount": 12.5}  # the recorded write's output
    assert diff_traces(read_trace("rec.jsonl"), read_trace("replay.jsonl")).divergences == []


def test_the_header_names_only_the_tools_the_run_called_not_every_tool_the_process_declared():
    """A tool declared elsewhere in the process (another agent's, a test's; before or after this one) is not
    this run's: it must not change the header's read list or schema hash (the order of imports would)."""
    with tracetui.record(out="alone.jsonl", input={"order": "A1"}) as session:
        session.output = agent("A1")

    @tracetui.tool(read=True, name="another_agents_lookup")
    def another_agents_lookup(q: str) -> dict:
        return {"q": q}

    with tracetui.record(out="with_more.jsonl", input={"order": "A1"}) as session:
        session.output = agent("A1")
    alone, more = read_trace("alone.jsonl").header, read_trace("with_more.jsonl").header
    assert more["read_tools"] == ["lookup_order"] and sorted(more["tool_schemas"]) == ["lookup_order", "refund"]
    assert (more["tool_schema_hash"], more["tool_schemas"]) == (alone["tool_schema_hash"], alone["tool_schemas"])
    with tracetui.record(out="calls_it.jsonl") as session:
        session.output = another_agents_lookup("x")
    assert read_trace("calls_it.jsonl").header["read_tools"] == ["another_agents_lookup"]


def test_a_changed_argument_is_an_unrecorded_call_naming_the_nearest():
    with tracetui.record(out="rec.jsonl") as session:
        session.output = agent("A1")
    with pytest.raises(UnrecordedCall) as caught:
        with tracetui.replay("rec.jsonl", out="replay.jsonl") as replay:
            agent("A2")
    assert 'lookup_order {"order_id":"A1"}: arguments.order_id: "A2" (recorded "A1")' in str(caught.value)
    assert [d["type"] for d in replay.result.outcome.divergences] == ["unrecorded_call"]
    assert replay.result.summary()["diverged"] is True


def test_a_read_repeated_more_than_recorded_is_exhausted():
    with tracetui.record(out="rec.jsonl"):
        lookup_order("A1")
    with pytest.raises(RecordingExhausted):
        with tracetui.replay("rec.jsonl", out="replay.jsonl"):
            lookup_order("A1")
            lookup_order("A1")


def test_async_session_and_async_tools_do_not_block_the_event_loop():
    events: list[str] = []

    async def ticker():
        for _ in range(5):
            events.append("tick")
            await asyncio.sleep(0.001)

    async def tool():
        events.append("tool start")
        out = await refund("A1", 1.0)  # awaits a 50 ms sleep inside the recorded tool
        events.append("tool end")
        return out

    async def main():
        async with tracetui.record(out="rec.jsonl") as session:
            results = await asyncio.gather(tool(), ticker())
            session.output = results[0]

    asyncio.run(main())
    # the loop ran the ticker while the tool awaited (by order of events, not by seconds): a wrapper that
    # blocked the loop until the tool finished would put every tick after "tool end"
    inside = events[events.index("tool start") + 1:events.index("tool end")]
    assert inside.count("tick") >= 2 and events.count("tick") == 5
    assert [s for s in read_trace("rec.jsonl").spans if s.kind.value == "tool"][0].data["tool_name"] == "refund"


def test_a_thread_started_by_the_agent_finds_the_session():
    with tracetui.record(out="rec.jsonl"):
        t = threading.Thread(target=lookup_order, args=("A1",))
        t.start()
        t.join()
    assert [s.data.get("tool_name") for s in read_trace("rec.jsonl").spans if s.kind.value == "tool"] == [
        "lookup_order"]


def test_replay_blocks_the_network_for_the_whole_block():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    with tracetui.record(out="rec.jsonl"):
        pass
    try:
        with tracetui.replay("rec.jsonl", out="replay.jsonl") as replay:
            with pytest.raises(ConnectionError):
                socket.create_connection(("127.0.0.1", port), timeout=1)
        assert replay.result.blocked == [f"connect 127.0.0.1:{port}"]
        server.settimeout(0.1)
        with pytest.raises(socket.timeout):
            server.accept()  # nothing reached the server
    finally:
        server.close()


def test_clock_and_ids_are_the_recordings():
    with tracetui.record(out="rec.jsonl", clock="2026-11-03T10:14:02+01:00", timezone="Europe/Paris") as rec:
        ids = [rec.new_id(), rec.new_id()]
        now = rec.now()
    with tracetui.replay("rec.jsonl", out="replay.jsonl") as replay:
        assert [replay.new_id(), replay.new_id()] == ids
        assert replay.now() == now and str(replay.now().tzinfo) == "Europe/Paris"


def test_read_tools_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tracetui]\nread_tools = ["refund"]\n')
    with tracetui.record(out="rec.jsonl"):
        asyncio.run(refund("A1", 1.0))
    assert [s for s in read_trace("rec.jsonl").spans if s.kind.value == "tool"][0].data["effect"] == "read"
    (tmp_path / "pyproject.toml").write_text('[tool.tracetui]\nread_tools = "refund"\n')
    with pytest.raises(HarnessError, match="read_tools must be a list"):
        tracetui.record(out="rec2.jsonl")


def test_sessions_do_not_nest_and_never_overwrite():
    with tracetui.record(out="rec.jsonl"):
        with pytest.raises(HarnessError, match="already open"):
            with tracetui.record(out="other.jsonl"):
                pass
    with pytest.raises(HarnessError, match="exists"):
        with tracetui.record(out="rec.jsonl"):
            pass
    with pytest.raises(HarnessError, match="is the recording"):
        with tracetui.replay("rec.jsonl", out="rec.jsonl"):
            pass


def test_the_agent_error_is_the_root_spans_and_goes_on():
    with pytest.raises(StopIteration):
        with tracetui.record(out="rec.jsonl"):
            raise StopIteration()
    root = [s for s in read_trace("rec.jsonl").spans if s.parent_id is None][0]
    assert root.status.value == "error" and root.data["output"] == {"error_type": "StopIteration",
                                                                     "message": "StopIteration"}


def test_tool_schemas_are_compared_tool_by_tool():
    """The header keeps each tool's schema hash; a replay notes only a tool both runs met whose
    schema changed, not the tools a replay that stopped early never reached."""
    with tracetui.record(out="rec.jsonl") as session:
        session.output = agent("A1")
    schemas = read_trace("rec.jsonl").header["tool_schemas"]
    assert set(schemas) >= {"lookup_order", "refund"}
    with pytest.raises(UnrecordedCall):
        with tracetui.replay("rec.jsonl", out="stopped.jsonl") as stopped:
            agent("A2")  # stops at the first read: refund never met
    assert not any("tool schemas differ" in n for n in stopped.result.outcome.notes)

    @tracetui.tool(read=True, name="lookup_order")
    def lookup_order_v2(order_id: str, *, verbose: bool = False, region: str = "eu") -> dict:
        return {"order_id": order_id, "status": "shipped", "email": "jane@example.com"}

    with tracetui.replay("rec.jsonl", out="changed.jsonl") as changed:
        lookup_order_v2("A1")
    assert "tool schemas differ from the recording's: lookup_order" in changed.result.outcome.notes
