"""What recording and replaying costs an unchanged agent, per model call and per tool call.

A real local model server (tests/integrations/servers.py, on 127.0.0.1) answers every model call;
the tools are plain functions (no I/O) so their own cost is nothing and the figures are tracetui's.
For each client or framework, one three-turn agent run (3 model calls, 2 tool calls) is timed:

- ``plain``: no session (the client as it is, tracetui's transport passing through);
- ``record``: inside ``tracetui.record`` (live model calls, spans redacted and written);
- ``frozen``: inside ``tracetui.replay`` (model answered from the recording, tools served).

Printed, medians of --repeat runs: time per run, and tracetui's overhead per model call
((record - plain) / 3) and the cost per call in frozen replay (frozen / 5 boundary calls). A
separate loop times one tool call alone (``@tracetui.tool`` recorded and served) over N calls.

    python benchmarks/bench_integrations.py                 # every installed framework, 15 repeats
    python benchmarks/bench_integrations.py --only raw_openai raw_anthropic --repeat 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tracetui  # noqa: E402
from tests.integrations.servers import ModelServer  # noqa: E402


def _tools() -> dict[str, Callable[..., Any]]:
    @tracetui.tool(read=True)
    def get_weather(city: str) -> dict:
        """Weather now in a city."""
        return {"city": city, "temp_c": 18, "conditions": "cloudy"}

    @tracetui.tool
    def send_report(to: str, body: str) -> dict:
        """Send a report."""
        return {"status": "queued"}

    return {"get_weather": get_weather, "send_report": send_report}


def raw_openai(server: ModelServer) -> Callable[[], Any]:
    import json

    from tests.integrations.test_clients import OPENAI_TOOLS

    client = tracetui.openai_client(base_url=server.base_url_openai, api_key="test", max_retries=0)
    tools = _tools()

    def run() -> Any:
        messages: list[Any] = [{"role": "user", "content": "Send ops the weather."}]
        while True:
            message = client.chat.completions.create(model="gpt-test", messages=messages,
                                                     tools=OPENAI_TOOLS).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                out = tools[call.function.name](**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out)})
    return run


def raw_anthropic(server: ModelServer) -> Callable[[], Any]:
    import json

    from tests.integrations.test_clients import ANTHROPIC_TOOLS

    client = tracetui.anthropic_client(base_url=server.url, api_key="test", max_retries=0)
    tools = _tools()

    def run() -> Any:
        messages: list[Any] = [{"role": "user", "content": "Send ops the weather."}]
        while True:
            reply = client.messages.create(model="claude-test", max_tokens=256, messages=messages,
                                           tools=ANTHROPIC_TOOLS)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                return reply.content[0].text
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u.id, "content": json.dumps(tools[u.name](**u.input))}
                for u in uses]})
    return run


def openai_agents(server: ModelServer) -> Callable[[], Any]:
    from agents import Agent, RunConfig, Runner, function_tool

    from tracetui.integrations import openai_agents as integration

    tools = _tools()
    agent = integration.instrument(Agent(name="weather", instructions="Send ops the weather.",
                                         tools=[function_tool(tools["get_weather"]),
                                                function_tool(tools["send_report"])]))

    def run() -> Any:  # a provider per run: its HTTP pool belongs to the run's event loop
        config = RunConfig(model_provider=integration.model_provider(base_url=server.base_url_openai,
                                                                     api_key="test"))
        return Runner.run_sync(agent, "Send ops the weather.", run_config=config).final_output
    return run


def pydantic_ai(server: ModelServer) -> Callable[[], Any]:
    from pydantic_ai import Agent

    from tracetui.integrations import pydantic_ai as integration

    tools = _tools()

    def run() -> Any:
        agent = Agent(integration.model("gpt-test", base_url=server.base_url_openai, api_key="test"),
                      tools=[tools["get_weather"], tools["send_report"]], capabilities=[integration.capability()])
        return agent.run_sync("Send ops the weather.").output
    return run


def langgraph(server: ModelServer) -> Callable[[], Any]:
    from tracetui.integrations import langgraph as integration

    tools = _tools()
    graph = integration.react_agent(integration.chat_openai(model="gpt-test", base_url=server.base_url_openai,
                                                            api_key="test"),
                                    [tools["get_weather"], tools["send_report"]])
    return lambda: graph.invoke({"messages": [("user", "Send ops the weather.")]})["messages"][-1].content


AGENTS = {"raw_openai": raw_openai, "raw_anthropic": raw_anthropic, "openai_agents": openai_agents,
          "pydantic_ai": pydantic_ai, "langgraph": langgraph}


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def bench_agent(name: str, server: ModelServer, repeat: int, folder: str) -> dict[str, float] | None:
    try:
        run = AGENTS[name](server)
    except (ImportError, AttributeError) as exc:
        print(f"  {name}: skipped ({exc})")
        return None
    run()  # warm up: imports, connection pool
    plain = _median_ms(run, repeat)
    counter = iter(range(10**6))

    def recorded() -> Any:
        with tracetui.record(out=os.path.join(folder, f"{name}-rec-{next(counter)}.jsonl")):
            return run()

    rec = _median_ms(recorded, repeat)
    source = os.path.join(folder, f"{name}-rec-0.jsonl")

    def frozen() -> Any:
        with tracetui.replay(source, out=os.path.join(folder, f"{name}-rep-{next(counter)}.jsonl")):
            return run()

    hits = server.hit_count()
    rep = _median_ms(frozen, repeat)
    assert server.hit_count() == hits, "a frozen replay reached the server"

    def empty_record() -> None:
        with tracetui.record(out=os.path.join(folder, f"{name}-empty-{next(counter)}.jsonl")):
            pass

    def empty_replay() -> None:
        with tracetui.replay(source, out=os.path.join(folder, f"{name}-empty-{next(counter)}.jsonl")):
            pass

    return {"plain": plain, "record": rec, "frozen": rep, "open_record": _median_ms(empty_record, repeat),
            "open_replay": _median_ms(empty_replay, repeat)}


def bench_tool(n: int, folder: str) -> tuple[float, float, float]:
    tools = _tools()
    get = tools["get_weather"]
    t = time.perf_counter()
    for _ in range(n):
        get(city="Paris")
    plain = (time.perf_counter() - t) / n * 1e6
    with tracetui.record(out=os.path.join(folder, "tools.jsonl")):
        t = time.perf_counter()
        for i in range(n):
            get(city=f"city-{i % 50}")
        rec = (time.perf_counter() - t) / n * 1e6
    with tracetui.replay(os.path.join(folder, "tools.jsonl"), out=os.path.join(folder, "tools-rep.jsonl")):
        t = time.perf_counter()
        for i in range(n):
            get(city=f"city-{i % 50}")
        rep = (time.perf_counter() - t) / n * 1e6
    return plain, rec, rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", nargs="*", choices=sorted(AGENTS), default=None)
    ap.add_argument("--tool-calls", type=int, default=5000)
    args = ap.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="tracetui-bench-")
    os.chdir(folder)
    os.environ.setdefault("TRACETUI_REDACTION_KEY", "bench-key-0123456789abcdef0123456789")
    asyncio.set_event_loop_policy(None)
    print(f"one agent run = 3 model calls + 2 tool calls, medians of {args.repeat}; ms per run, then per call with "
          "the session's own opening and closing (an empty session: 'open') taken out")
    print(f"{'agent':<15}{'plain':>8}{'record':>8}{'frozen':>8}{'open r/f':>12}   {'record +/model call':>20}"
          f"{'frozen /call':>14}")
    with ModelServer() as server:
        for name in args.only or list(AGENTS):
            r = bench_agent(name, server, args.repeat, folder)
            if r is None:
                continue
            per_model = (r["record"] - r["open_record"] - r["plain"]) / 3
            per_frozen = (r["frozen"] - r["open_replay"]) / 5
            print(f"{name:<15}{r['plain']:>8.2f}{r['record']:>8.2f}{r['frozen']:>8.2f}"
                  f"{r['open_record']:>6.2f}/{r['open_replay']:<5.2f}   {per_model:>17.2f} ms{per_frozen:>11.2f} ms")
    plain, rec, rep = bench_tool(args.tool_calls, folder)
    print(f"\n@tracetui.tool, {args.tool_calls} calls: plain {plain:.1f} µs, recorded {rec:.1f} µs, "
          f"served in replay {rep:.1f} µs per call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
