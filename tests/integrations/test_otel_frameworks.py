"""Traces made by the frameworks' own OpenTelemetry instrumentation, diffed (issue 18, "Held to").

A LangGraph ReAct agent runs against the real local model server with OpenInference's LangChain
instrumentation and the OpenTelemetry SDK's ``ConsoleSpanExporter`` writing to a file (the
``otel-sdk-json`` format tracetui reads). Every run mints fresh message ids, response ids, system
fingerprints, token counts and tool-call ids, and its chain spans carry LangChain-serialised
messages: an unchanged rerun must still give no divergence, and a changed tool output must part
the runs at that tool.

Issue 19, "Held to": ``triage`` on the same real traces (LangGraph + OpenInference, pydantic-ai's own
instrumentation) grades their missing prompt version and clock as caveats and reaches the verdict of
the change made: none for a rerun (model_or_prompt, reproduced), data_or_integration naming the read
for another tool output, variance for another model argument on the same inputs, and
code_or_config_change for another system prompt.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

pytest.importorskip("langgraph.prebuilt")
pytest.importorskip("langchain_openai")
pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("openinference.instrumentation.langchain")

from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor  # noqa: E402

from tracetui.core.diff import diff_traces  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402
from tracetui.core.triage import triage  # noqa: E402

from .otel_capture import ToFile, console_provider, traced  # noqa: E402
from .servers import ModelServer  # noqa: E402


@pytest.fixture
def openinference():
    """OpenInference's LangChain instrumentation on a private tracer provider, removed after the test."""
    provider, sink = console_provider()
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield sink
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def _run_langgraph(server: ModelServer, sink: ToFile, out: Path, *, temp_c: int = 18,
                   prompt: str = "You report the weather.") -> str:
    """The prebuilt ReAct agent (read get_weather, write send_report) with system ``prompt``, traced into ``out``."""
    import warnings

    from langgraph.prebuilt import create_react_agent

    def get_weather(city: str) -> dict:
        weather = httpx.get(server.url + "/api/weather", params={"city": city}).json()
        return {**weather, "temp_c": temp_c}

    def send_report(to: str, body: str) -> dict:
        httpx.post(server.url + "/api/reports", json={"to": to, "body": body})
        return {"status": "queued"}  # the fake API's receipt id is fresh each call: real data, kept out

    tools = [StructuredTool.from_function(get_weather, name="get_weather", description="Weather now in a city."),
             StructuredTool.from_function(send_report, name="send_report", description="Send a report.")]
    model = ChatOpenAI(model="gpt-test", base_url=server.base_url_openai, api_key="test", max_retries=0,
                       temperature=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, tools, prompt=prompt)
    result = traced(sink, out, lambda: agent.invoke(
        {"messages": [HumanMessage("Send ops the weather in the city you pick.")]}))
    return result["messages"][-1].content


def test_langgraph_openinference_unchanged_rerun_and_changed_tool_output(model_server, openinference, tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert _run_langgraph(model_server, openinference, a) == "Report sent for Paris."
    assert _run_langgraph(model_server, openinference, b) == "Report sent for Paris."
    _run_langgraph(model_server, openinference, c, temp_c=25)
    original = read_trace(a)
    assert original.format == "otel-sdk-json" and len(original.spans) > 15
    # What made the rerun differ before issue 18: chain spans with LangChain messages (fresh ids,
    # fingerprints, token counts) and ToolMessage-wrapped tool outputs.
    assert b"system_fingerprint" in a.read_bytes() and b"ToolMessage" in a.read_bytes()
    assert diff_traces(original, read_trace(b)).divergences == []
    first = diff_traces(original, read_trace(c)).first
    assert first is not None
    assert (first.type.value, first.kind.value, first.original.name) == ("output_mismatch", "tool", "get_weather")
    assert [f.path for f in first.fields] == ["tool.output.temp_c"]


def _run_pydantic_ai(server: ModelServer, out: Path, *, temp_c: int = 18, api: str = "chat", stream: bool = False,
                     system_prompt: str = "You report the weather.") -> str:
    """A pydantic-ai agent with its own OpenTelemetry instrumentation (the ``Instrumentation``
    capability on a private tracer provider), exported by the SDK's console exporter into ``out``
    (``api``: ``chat`` Completions or ``responses``; ``stream``: ``run_stream``, else ``run_sync``)."""
    pytest.importorskip("pydantic_ai.capabilities")
    import asyncio

    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    with out.open("w") as fh:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=fh)))
        model_cls = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
        model = model_cls("gpt-test", provider=OpenAIProvider(base_url=server.base_url_openai, api_key="test"))
        agent = Agent(model, system_prompt=system_prompt,
                      capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))])

        @agent.tool_plain
        def get_weather(city: str) -> dict:
            weather = httpx.get(server.url + "/api/weather", params={"city": city}).json()
            return {**weather, "temp_c": temp_c}

        @agent.tool_plain
        def send_report(to: str, body: str) -> dict:
            httpx.post(server.url + "/api/reports", json={"to": to, "body": body})
            return {"status": "queued"}

        async def streamed() -> str:
            async with agent.run_stream("Send ops the weather in the city you pick.") as result:
                return await result.get_output()

        try:
            if stream:
                return asyncio.run(streamed())
            return agent.run_sync("Send ops the weather in the city you pick.").output
        finally:
            provider.shutdown()


def test_pydantic_ai_instrumented_unchanged_rerun_changed_tool_output_and_changed_model_argument(model_server, tmp_path):
    runs = {name: tmp_path / f"{name}.json" for name in ("a", "b", "hot", "lyon")}
    _run_pydantic_ai(model_server, runs["a"])
    _run_pydantic_ai(model_server, runs["b"])
    _run_pydantic_ai(model_server, runs["hot"], temp_c=25)
    model_server.city = "Lyon"
    _run_pydantic_ai(model_server, runs["lyon"])
    original = read_trace(runs["a"])
    root = next(s for s in original.spans if s.parent_id is None)
    # pydantic_ai.all_messages: the run's input is the instructions and the user prompt
    assert root.data["input"] == [{"role": "system", "content": "You report the weather."},
                                  {"role": "user", "content": "Send ops the weather in the city you pick."}]
    assert diff_traces(original, read_trace(runs["b"])).divergences == []
    first = diff_traces(original, read_trace(runs["hot"])).first
    assert (first.type.value, first.original.name) == ("output_mismatch", "execute_tool get_weather")
    first = diff_traces(original, read_trace(runs["lyon"])).first
    assert (first.type.value, first.kind.value) == ("decision_mismatch", "llm")
    assert first.fields[0].path == "llm.output.tool_calls[0].arguments.city"


@pytest.mark.parametrize("api,stream", [("chat", False), ("responses", True)])
def test_pydantic_ai_otel_trace_as_the_recording_of_a_frozen_replay(model_server, tmp_path, monkeypatch, api, stream):
    """Issue 18, item 6: the OTel trace pydantic-ai wrote is the recording. Its LLM spans hold the
    output message only (no wire response): the transport builds the response in the API the
    client asks for, streamed or not. The recording is unredacted (``ops@example.com`` in the
    report's arguments): redacted when indexed, it matches the redacted live call. The params it
    does not hold (``stream``, ``tool_choice``) are not compared, and the report says so."""
    import tracetui
    from tracetui.core.errors import InputMismatch
    from tracetui.integrations import pydantic_ai as tpa

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui").mkdir()
    (tmp_path / ".tracetui" / "redaction.key").write_text("a3" * 32)  # the project's key: the diff below uses it
    assert tpa.patch() is True
    otel = tmp_path / "otel.json"
    assert _run_pydantic_ai(model_server, otel, api=api, stream=stream) == "Report sent for Paris."
    assert b"ops@example.com" in otel.read_bytes() and b"wire_response" not in otel.read_bytes()

    model_server.clear_hits()
    with tracetui.replay(str(otel), out="replay.jsonl", read_tools={"get_weather"}) as session:
        session.output = _run_pydantic_ai(model_server, tmp_path / "again.json", api=api, stream=stream)
    assert session.output == "Report sent for Paris."
    assert model_server.hits == []  # no model call, no tool call
    outcome = session.result.outcome
    assert outcome.divergences == [] and outcome.llm_served == 3
    assert [w["tool"] for w in outcome.writes] == ["send_report"]
    assert outcome.writes[0]["arguments"]["to"].startswith("<EMAIL_")  # redacted on both sides alike
    note = next(n for n in outcome.notes if n.startswith("LLM request fields the recording"))
    assert "(otel-sdk-json)" in note and "params.stream (3 calls)" in note
    served = [s for s in read_trace("replay.jsonl").spans if s.kind.value == "llm"]
    assert all("params.stream" in s.attributes["replay.unchecked"] for s in served)

    # What the recording does hold is still compared: another system prompt is an input mismatch.
    with pytest.raises(InputMismatch):
        with tracetui.replay(str(otel), out="changed.jsonl", read_tools={"get_weather"}):
            _run_pydantic_ai(model_server, tmp_path / "changed.json", api=api, stream=stream,
                             system_prompt="You report the weather, briefly.")
    assert model_server.hits == []
    _assert_diff_of_recording_and_replay(model_server, otel, tmp_path / "replay.jsonl", api, stream)


def test_langgraph_openinference_trace_as_the_recording_and_diffed_against_its_replay(model_server, openinference,
                                                                                    tmp_path, monkeypatch):
    """Issue 18: a LangGraph run's OpenInference trace serves a frozen replay (its tool outputs are
    ToolMessage envelopes: the ToolMessage rebuilt holds their content, so the model's next request
    is the recorded one), and ``diff`` of the trace against that replay gives no divergence: the
    chain spans (LangGraph nodes, prompts, sequences) only the OTel side records are left out and
    counted, the two roots (a LangGraph chain, tracetui's agent) are the run on each side, compared on
    the user's and the assistant's text. A changed tool output is still that tool's output_mismatch."""
    import tracetui
    from tracetui.integrations import langgraph as tl

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracetui").mkdir()
    (tmp_path / ".tracetui" / "redaction.key").write_text("a3" * 32)
    otel, hot = tmp_path / "otel.json", tmp_path / "hot.json"
    _run_langgraph(model_server, openinference, otel)
    _run_langgraph(model_server, openinference, hot, temp_c=25)
    model_server.clear_hits()
    assert tl.patch() is True
    try:
        with tracetui.replay(str(otel), out="replay.jsonl", read_tools={"get_weather"}) as session:
            session.output = _run_langgraph(model_server, openinference, tmp_path / "again.json")
    finally:
        tl.unpatch()
    assert session.output == "Report sent for Paris." and model_server.hits == []
    assert session.result.outcome.divergences == []

    code, report = _diff_cli(otel, tmp_path / "replay.jsonl")
    assert (code, report["divergences"]) == (0, [])
    items = {i["path"]: i for i in report["not_comparable"]["items"]}
    assert items["spans"]["pairs"] >= 15 and "framework steps otel-sdk-json records" in items["spans"]["reason"]
    assert {"kind", "other.input", "other.output", "llm.tool_schemas_hash"} <= set(items)
    first = diff_traces(read_trace(hot), read_trace(tmp_path / "replay.jsonl")).first
    assert (first.type.value, first.kind.value, first.original.name) == ("output_mismatch", "tool", "get_weather")
    assert [f.path for f in first.fields] == ["tool.output.temp_c"]


def _diff_cli(original: Path, replay: Path) -> tuple[int, dict]:
    import io
    import json

    from tracetui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(original), str(replay), "--format", "json"], stdout=out, stderr=err)
    return code, json.loads(out.getvalue())


def _assert_diff_of_recording_and_replay(model_server: ModelServer, otel: Path, replay: Path, api: str,
                                         stream: bool) -> None:
    """Issue 18: ``tracetui diff`` of the OTel recording against its tracetui replay. What only one
    format records (params, effect, output_truncated), the tool-schema hash each format computes over
    its own record of the tools, the root input (the prompt against every message) and the raw
    address against its token are not divergences of the agent: 0 divergences, each said under
    ``not_comparable``. The tokens are checked with the project key (the replay's)."""
    code, report = _diff_cli(otel, replay)
    assert (code, report["divergences"]) == (0, [])
    items = {i["path"]: i for i in report["not_comparable"]["items"]}
    assert items["llm.params.stream"] == {"path": "llm.params.stream", "reason": "not recorded by otel-sdk-json",
                                          "pairs": 3}
    assert {"llm.tool_schemas_hash", "tool.effect", "tool.output_truncated", "agent.input",
            "header.clock"} <= set(items)
    assert report["not_comparable"]["fields"] == sum(i["pairs"] for i in items.values())
    assert report["redacted_with_key"] == read_trace(replay).header["redaction"]["key_id"]
    assert not any(p.startswith(("tool.arguments", "llm.output", "llm.messages")) for p in items)  # checked

    # Another address in the recording: with the key, its token is not the replay's: a divergence.
    other = otel.with_name("other_address.json")
    other.write_bytes(otel.read_bytes().replace(b"ops@example.com", b"dev@example.com"))
    code, report = _diff_cli(other, replay)
    first = report["first_divergence"]
    assert (code, first["type"], first["kind"]) == (1, "decision_mismatch", "llm")
    assert first["fields"][0]["path"] == "llm.output.tool_calls[0].arguments.to"
    assert any(d["type"] == "args_mismatch" and d["fields"][0]["path"] == "tool.arguments.to"
               for d in report["divergences"])
    # Without the key the tokens cannot be checked: not comparable, said, not a divergence.
    key = Path(".tracetui/redaction.key")
    saved = key.read_bytes()
    key.unlink()
    try:
        code, report = _diff_cli(other, replay)
    finally:
        key.write_bytes(saved)
    items = {i["path"]: i for i in report["not_comparable"]["items"]}
    assert (code, report["redacted_with_key"]) == (0, None)
    assert "that key is not here" in items["tool.arguments"]["reason"]

    # A changed tool output is still that tool's output_mismatch, first.
    hot = otel.with_name("hot.json")
    _run_pydantic_ai(model_server, hot, temp_c=25, api=api, stream=stream)
    first = diff_traces(read_trace(hot), read_trace(replay)).first
    assert (first.type.value, first.original.name) == ("output_mismatch", "execute_tool get_weather")
    assert [f.path for f in first.fields] == ["tool.output.temp_c"]


# ---- triage on these traces (issue 19, "Held to") -----------------------------------------------

def _triaged(original, replay) -> tuple[str, str, list]:
    """Triage ``replay`` as one trial of ``original``: (verdict, cause key, reasons), after checking
    that step 1 graded the usual instrumentation's gaps as caveats, not blockers."""
    result = triage(original, [replay])
    assert result.steps[0].state == "passed" and result.replayability.blockers == []
    assert {f.field for f in result.caveats} >= {"header.clock", "llm.prompt_version"}
    assert result.verdict not in (None, "not_replayable")
    assert any(r.rule == "confidence" and "lowered" in r.text for r in result.reasons)
    return result.verdict, result.cause, result


def _assert_verdicts_match_the_changes(runs: dict[str, Path], read_name: str) -> None:
    original = read_trace(runs["a"])
    read = next(s for s in original.spans if s.name == read_name)

    verdict, cause, result = _triaged(original, read_trace(runs["b"]))
    assert (verdict, result.reproduction.reproduced) == ("model_or_prompt", 1)

    # another tool output: the read that returned it is the cause, and the first evidence
    verdict, cause, result = _triaged(original, read_trace(runs["hot"]))
    assert (verdict, cause) == ("data_or_integration", "data tool get_weather")
    assert result.evidence[0].span_id == read.span_id and "tool.output.temp_c" in result.evidence[0].reason
    assert any(r.rule == "moved_data" and r.on == read.span_id for r in result.reasons)

    # the same inputs, another model argument: the model decided otherwise
    verdict, cause, result = _triaged(original, read_trace(runs["lyon"]))
    assert (verdict, cause) == ("variance", "variance")
    assert any(r.rule == "model_decided" and '"Lyon"' in r.text for r in result.reasons)

    # another system prompt, under which the model decided otherwise: a prompt change
    verdict, cause, result = _triaged(original, read_trace(runs["prompt"]))
    assert (verdict, cause) == ("code_or_config_change", "config prompt")
    assert any(r.rule == "header_change" and "system_prompt_hash" in r.text for r in result.reasons)


def test_triage_reaches_the_verdict_of_the_change_on_pydantic_ai_traces(model_server, tmp_path):
    runs = {name: tmp_path / f"{name}.json" for name in ("a", "b", "hot", "lyon", "prompt")}
    _run_pydantic_ai(model_server, runs["a"])
    _run_pydantic_ai(model_server, runs["b"])
    _run_pydantic_ai(model_server, runs["hot"], temp_c=25)
    model_server.city = "Lyon"
    _run_pydantic_ai(model_server, runs["lyon"])
    _run_pydantic_ai(model_server, runs["prompt"], system_prompt="You report the weather, briefly.")
    _assert_verdicts_match_the_changes(runs, "execute_tool get_weather")


def test_triage_reaches_the_verdict_of_the_change_on_langgraph_openinference_traces(model_server, openinference,
                                                                                     tmp_path):
    runs = {name: tmp_path / f"{name}.json" for name in ("a", "b", "hot", "lyon", "prompt")}
    _run_langgraph(model_server, openinference, runs["a"])
    _run_langgraph(model_server, openinference, runs["b"])
    _run_langgraph(model_server, openinference, runs["hot"], temp_c=25)
    model_server.city = "Lyon"
    _run_langgraph(model_server, openinference, runs["lyon"])
    _run_langgraph(model_server, openinference, runs["prompt"], prompt="You report the weather, briefly.")
    _assert_verdicts_match_the_changes(runs, "get_weather")
