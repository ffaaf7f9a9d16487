"""OpenAI Agents SDK and raw openai runs traced by OpenTelemetry instrumentations, diffed (issue 18, "Held to").

Each run is a real agent against the real local model server (``servers.ModelServer``), traced by a
real instrumentation package into a file by the OpenTelemetry SDK's ``ConsoleSpanExporter`` (the
``otel-sdk-json`` format tracetui reads). Every run mints fresh response ids, tool-call ids, token
counts and fingerprints: an unchanged rerun must give no divergence, and a changed tool output must
part the runs at that tool (``output_mismatch``, first), and another argument the model picks must part
them at the LLM span that picked it (``decision_mismatch``).

- the OpenAI Agents SDK (Responses and Chat Completions models) with OpenInference's
  ``openinference-instrumentation-openai-agents``;
- a raw openai tool loop (Chat Completions) with the official GenAI instrumentation
  (``opentelemetry-instrumentation-openai-v2``, latest experimental conventions, content on the
  span), OpenInference's ``openinference-instrumentation-openai`` and OpenLLMetry's
  ``opentelemetry-instrumentation-openai``. These trace the model calls only: the loop traces its
  tool calls itself, as the conventions of each say (GenAI ``execute_tool`` spans, OpenInference
  ``TOOL`` spans, OpenLLMetry ``traceloop.span.kind = tool``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402

from tracetui.core.diff import diff_traces  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402

from .otel_capture import ToFile, console_provider, traced  # noqa: E402
from .servers import ModelServer  # noqa: E402

PROMPT = "Send ops the weather in the city you pick."


def _assert_rerun_clean_and_changed_output_first(runs: dict[str, Path], tool_span: str) -> None:
    """``a`` and ``b``: the unchanged agent; ``hot``: get_weather returns another temperature;
    ``lyon``: the model picks another city."""
    original = read_trace(runs["a"])
    assert original.format == "otel-sdk-json"
    assert any(s.kind.value == "llm" and s.data.get("messages") for s in original.spans)  # content captured
    assert diff_traces(original, read_trace(runs["b"])).divergences == []
    first = diff_traces(original, read_trace(runs["hot"])).first
    assert first is not None
    assert (first.type.value, first.kind.value, first.original.name) == ("output_mismatch", "tool", tool_span)
    assert [f.path for f in first.fields] == ["tool.output.temp_c"]
    first = diff_traces(original, read_trace(runs["lyon"])).first
    assert (first.type.value, first.kind.value) == ("decision_mismatch", "llm")
    assert first.fields[0].path == "llm.output.tool_calls[0].arguments.city"


# ---- the OpenAI Agents SDK + OpenInference ---------------------------------------------------------

@pytest.fixture
def agents_openinference(monkeypatch):
    """OpenInference's Agents SDK instrumentation on a private tracer provider (it replaces the SDK's
    own trace processors, so nothing is exported to the OpenAI backend); removed after the test."""
    pytest.importorskip("agents")
    oi = pytest.importorskip("openinference.instrumentation.openai_agents")
    monkeypatch.delenv("OPENAI_AGENTS_DISABLE_TRACING", raising=False)
    provider, sink = console_provider()
    instrumentor = oi.OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield sink
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def _run_agents_sdk(server: ModelServer, sink: ToFile, out: Path, *, api: str, temp_c: int = 18) -> str:
    from agents import Agent, Runner, function_tool
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    @function_tool
    def get_weather(city: str) -> dict:
        """Weather now in a city."""
        weather = httpx.get(server.url + "/api/weather", params={"city": city}).json()
        return {**weather, "temp_c": temp_c}

    @function_tool
    def send_report(to: str, body: str) -> dict:
        """Send a report."""
        httpx.post(server.url + "/api/reports", json={"to": to, "body": body})
        return {"status": "queued"}  # the fake API's receipt id is fresh each call: real data, kept out

    async def go() -> str:
        client = AsyncOpenAI(base_url=server.base_url_openai, api_key="test", max_retries=0)
        model_cls = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
        agent = Agent(name="weather", instructions="You report the weather.", tools=[get_weather, send_report],
                      model=model_cls("gpt-test", openai_client=client))
        return (await Runner.run(agent, PROMPT)).final_output

    return traced(sink, out, lambda: asyncio.run(go()))


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_agents_sdk_openinference_unchanged_rerun_and_changed_tool_output(model_server, agents_openinference,
                                                                         tmp_path, api):
    runs = {name: tmp_path / f"{name}.json" for name in ("a", "b", "hot", "lyon")}
    assert _run_agents_sdk(model_server, agents_openinference, runs["a"], api=api) == "Report sent for Paris."
    _run_agents_sdk(model_server, agents_openinference, runs["b"], api=api)
    _run_agents_sdk(model_server, agents_openinference, runs["hot"], api=api, temp_c=25)
    model_server.city = "Lyon"
    _run_agents_sdk(model_server, agents_openinference, runs["lyon"], api=api)
    _assert_rerun_clean_and_changed_output_first(runs, "get_weather")


# ---- a raw openai tool loop + each openai instrumentation ------------------------------------------

_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather now in a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "send_report", "description": "Send a report.",
                                      "parameters": {"type": "object",
                                                     "properties": {"to": {"type": "string"},
                                                                    "body": {"type": "string"}},
                                                     "required": ["to", "body"]}}},
]

# How the loop traces its own agent and tool spans, in each instrumentation's conventions:
# (root span name, root attributes, tool span name format, tool attributes(name, call id, arguments JSON),
#  the attribute holding a tool's result).
_STYLES: dict[str, tuple[str, dict[str, str], str, Callable[[str, str, str], dict[str, str]], str]] = {
    "genai": ("invoke_agent weather", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
              "execute_tool {}",
              lambda name, call_id, args: {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                           "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.arguments": args},
              "gen_ai.tool.call.result"),
    "openinference": ("weather", {"openinference.span.kind": "AGENT", "input.value": PROMPT}, "{}",
                      lambda name, call_id, args: {"openinference.span.kind": "TOOL", "tool.name": name,
                                                   "input.value": args, "input.mime_type": "application/json"},
                      "output.value"),
    "traceloop": ("weather.workflow", {"traceloop.span.kind": "workflow", "traceloop.entity.name": "weather"},
                  "{}.tool",
                  lambda name, call_id, args: {"traceloop.span.kind": "tool", "traceloop.entity.name": name,
                                               "traceloop.entity.input": args},
                  "traceloop.entity.output"),
}


def _run_raw_openai(server: ModelServer, provider: TracerProvider, sink: ToFile, out: Path, style: str, *,
                    temp_c: int = 18) -> str:
    """A plain tool loop on ``openai.OpenAI`` (Chat Completions): the instrumentation traces the model
    calls, the loop its agent and tool spans in that instrumentation's ``style``."""
    from openai import OpenAI

    root_name, root_attrs, tool_name_fmt, tool_attrs, result_key = _STYLES[style]
    tracer = provider.get_tracer("weather-app")

    def get_weather(city: str) -> dict:
        weather = httpx.get(server.url + "/api/weather", params={"city": city}).json()
        return {**weather, "temp_c": temp_c}

    def send_report(to: str, body: str) -> dict:
        httpx.post(server.url + "/api/reports", json={"to": to, "body": body})
        return {"status": "queued"}

    impl = {"get_weather": get_weather, "send_report": send_report}

    def loop() -> str:
        client = OpenAI(base_url=server.base_url_openai, api_key="test", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You report the weather."},
                                          {"role": "user", "content": PROMPT}]
        with tracer.start_as_current_span(root_name, attributes=root_attrs):
            while True:
                answer = client.chat.completions.create(model="gpt-test", messages=messages, tools=_TOOLS,
                                                        temperature=0).choices[0].message
                if not answer.tool_calls:
                    return answer.content or ""
                messages.append(answer.model_dump(exclude_none=True))
                for call in answer.tool_calls:
                    name, args = call.function.name, call.function.arguments
                    with tracer.start_as_current_span(tool_name_fmt.format(name),
                                                      attributes=tool_attrs(name, call.id, args)) as span:
                        result = json.dumps(impl[name](**json.loads(args)))
                        span.set_attribute(result_key, result)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    return traced(sink, out, loop)


def _instrumentor(kind: str, monkeypatch) -> Any:
    if kind == "genai":  # the official GenAI instrumentation, latest conventions, content on the span
        monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
        return pytest.importorskip("opentelemetry.instrumentation.openai_v2").OpenAIInstrumentor()
    if kind == "openinference":
        return pytest.importorskip("openinference.instrumentation.openai").OpenAIInstrumentor()
    monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", "true")  # OpenLLMetry
    return pytest.importorskip("opentelemetry.instrumentation.openai").OpenAIInstrumentor()


@pytest.mark.parametrize("kind", ["genai", "openinference", "traceloop"])
def test_raw_openai_instrumented_unchanged_rerun_and_changed_tool_output(model_server, tmp_path, monkeypatch, kind):
    pytest.importorskip("openai")
    instrumentor = _instrumentor(kind, monkeypatch)
    provider, sink = console_provider()
    instrumentor.instrument(tracer_provider=provider)
    try:
        runs = {name: tmp_path / f"{name}.json" for name in ("a", "b", "hot", "lyon")}
        assert _run_raw_openai(model_server, provider, sink, runs["a"], kind) == "Report sent for Paris."
        _run_raw_openai(model_server, provider, sink, runs["b"], kind)
        _run_raw_openai(model_server, provider, sink, runs["hot"], kind, temp_c=25)
        model_server.city = "Lyon"
        _run_raw_openai(model_server, provider, sink, runs["lyon"], kind)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    _assert_rerun_clean_and_changed_output_first(runs, _STYLES[kind][2].format("get_weather"))
