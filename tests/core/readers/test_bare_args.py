"""A one-argument tool's bare-string arguments named by the trace (readers/bare_args.py, issue 18)."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.builders import make_span
from tests.corpus import corpus
from tracetui.core.diff import diff_traces
from tracetui.core.readers import read_trace
from tracetui.core.readers.bare_args import BARE_ARGUMENTS, name_bare_arguments

SRC = "langfuse/pydantic-ai-tools-2025-12-04.trace.json"


def _bare(tmp_path: Path, call_id: bool) -> Path:
    """The real export with one tool's recorded input (and, unless ``call_id``, its call id) as a
    producer writing a one-argument tool's input bare would have it: ``"programming"``."""
    doc = orjson.loads(corpus(SRC).read_bytes())
    for o in doc["observations"]:
        if o["id"] == "99ec63d0b5ecdbf5":
            o["input"] = "programming"
            attrs = o["metadata"]["attributes"]
            attrs.pop("tool_arguments", None)
            if not call_id:
                attrs.pop("gen_ai.tool.call.id", None)
    out = tmp_path / ("bare.json" if call_id else "bare-no-id.json")
    out.write_bytes(orjson.dumps(doc))
    return out


def test_a_bare_string_is_named_by_the_models_tool_call_and_the_runs_do_not_diverge(tmp_path: Path) -> None:
    original = read_trace(corpus(SRC))
    for call_id in (True, False):  # by the call's id, else by the call of that tool holding the string
        bare = read_trace(_bare(tmp_path, call_id))
        span = next(s for s in bare.spans if s.span_id == "99ec63d0b5ecdbf5")
        assert span.data["arguments"] == {"topic": "programming"}, call_id
        assert span.attributes[BARE_ARGUMENTS] == {"value": "programming", "named_by": "the model's tool call"}
        assert diff_traces(original, bare).divergences == []


def test_a_schema_names_it_and_nothing_else_is_guessed() -> None:
    by_schema = make_span("tool", "search", arguments="llamas",
                          attributes={"tool.parameters": '{"type": "object", "properties": {"query": {"type": "string"}}}'})
    unnamed = make_span("tool", "lookup", span_id="u", arguments="llamas")
    other_value = make_span("tool", "fetch", span_id="f", arguments="alpacas")
    asked = make_span("llm", "chat", span_id="l", output={"role": "assistant", "tool_calls": [
        {"id": "c1", "name": "fetch", "arguments": {"url": "llamas"}}]})
    spans = [asked, by_schema, unnamed, other_value]
    assert name_bare_arguments(spans) == 1
    assert by_schema.data["arguments"] == {"query": "llamas"}
    assert by_schema.attributes[BARE_ARGUMENTS]["named_by"] == "schema"
    assert unnamed.data["arguments"] == "llamas" and other_value.data["arguments"] == "alpacas"
