"""OTLP/JSON run headers: agent, model and input filled from the spans (issue 18, as the OTel SDK reader)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tracetui.core.readers import read_trace

TESTS = Path(__file__).resolve().parents[2]
CORPUS = TESTS.parent / ".." / "shared" / "corpus"
sys.path.insert(0, str(TESTS))
from otlp_helpers import any_agent_to_otlp  # noqa: E402


def _otlp(tmp_path: Path, name: str) -> Path:
    src = CORPUS / "any-agent-trace" / name
    if not src.exists():
        pytest.skip(f"corpus file any-agent-trace/{name} not available")
    p = tmp_path / "run.json"
    p.write_text(json.dumps(any_agent_to_otlp(src)))
    return p


def test_otlp_header_names_the_agent_the_first_model_and_the_first_user_message(tmp_path: Path) -> None:
    trace = read_trace(_otlp(tmp_path, "OPENAI_trace.json"))
    first_llm = next(s for s in trace.spans if s.kind.value == "llm")
    user = next(m["content"] for m in first_llm.data["messages"] if m["role"] == "user")
    assert trace.header["agent"] == "any_agent"
    assert trace.header["model"]["id"] == "mistral/mistral-small-latest"
    assert trace.header["input"] == user and user


def test_otlp_header_is_the_same_as_the_otel_sdk_readers_for_the_same_spans(tmp_path: Path) -> None:
    sdk = read_trace(CORPUS / "any-agent-trace" / "OPENAI_trace.json") if (
        CORPUS / "any-agent-trace" / "OPENAI_trace.json").exists() else pytest.skip("corpus absent")
    otlp = read_trace(_otlp(tmp_path, "OPENAI_trace.json"))
    for field in ("agent", "model", "input"):
        assert otlp.header.get(field) == sdk.header.get(field), field


def test_otlp_run_without_agent_or_llm_spans_has_no_such_header_fields(tmp_path: Path) -> None:
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "01" * 8, "name": "op", "startTimeUnixNano": "1000"}]}]}]}
    p = tmp_path / "plain.json"
    p.write_text(json.dumps(doc))
    h = read_trace(p).header
    assert "agent" not in h and "model" not in h and "input" not in h
