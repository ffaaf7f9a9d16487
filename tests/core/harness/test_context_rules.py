"""Rules of ``core/harness/context.py`` pinned directly (issue 25: survivors of its mutation run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import Ticker

from tracetui.core.errors import RecordedToolError
from tracetui.core.harness import load_agent, record, replay
from tracetui.core.harness.context import _recorded_error
from tracetui.core.harness.fixture import RecordedReadsFixture
from tracetui.core.harness.redact import Redactor
from tracetui.core.model import Status
from tracetui.core.readers import read_trace

AGENT = Path(__file__).resolve().parents[2] / "data" / "harness" / "bank_agent.py"
KEY = b"test-project-key"
INPUT = {"email": "ada.lovelace@example.com", "amount": 120}


def test_a_recorded_tool_error_is_raised_as_the_builtin_class_it_names_and_carries_the_recording() -> None:
    e = _recorded_error("get", "TimeoutError", {"message": "slow"})
    assert isinstance(e, TimeoutError) and isinstance(e, RecordedToolError) and type(e).__name__ == "TimeoutError"
    assert (e.tool, e.error_type, e.output, str(e)) == ("get", "TimeoutError", {"message": "slow"}, "slow")
    with pytest.raises(TimeoutError):
        raise e


@pytest.mark.parametrize("error_type", [None, "", "Exception", "BaseException", "KeyboardInterrupt", "print",
                                        "NoSuchError", "int"])
def test_a_recorded_error_naming_no_builtin_exception_is_a_plain_recorded_tool_error(error_type: str | None) -> None:
    e = _recorded_error("get", error_type, "boom")
    assert type(e) is RecordedToolError
    assert (e.tool, e.error_type, e.output) == ("get", error_type, "boom")
    assert str(e) == f"get: recorded {error_type or 'error'}: boom"


def test_a_read_the_fixture_answers_by_raising_is_written_as_a_failed_span_from_the_fixture(
        tmp_path: Path) -> None:
    """Fixture mode: a store whose read raises (not ``LookupError``) is the live tool failing — the span is a
    failed tool span with the error as its output, marked ``replay.source: fixture``; the agent gets the error."""
    spec = load_agent(f"{AGENT}:run")
    spec.run.__globals__["reset"]()
    out = tmp_path / "orig.jsonl"
    red = Redactor(KEY, sensitive_fields=spec.sensitive_fields)
    record(spec, INPUT, str(out), redactor=red, clock="2026-03-02T09:30:00", timezone="America/New_York", seed=42,
           timer=Ticker())
    spec.run.__globals__["reset"]()

    class Failing(RecordedReadsFixture):
        def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
            if tool == "get_balance":
                raise TimeoutError("balance service timed out")
            return super().call(tool, arguments, write=write)

    spec.fixture_factory = Failing
    replay(read_trace(out), spec, str(tmp_path / "r.jsonl"), redactor=red, timer=Ticker(), mode="fixture")
    (span,) = [s for s in read_trace(tmp_path / "r.jsonl").spans if s.data.get("tool_name") == "get_balance"]
    assert (span.status, span.error_type) == (Status.ERROR, "TimeoutError")
    assert span.data["output"] == {"error_type": "TimeoutError", "message": "balance service timed out"}
    assert span.data["output_truncated"] is False
    assert span.attributes["replay.source"] == "fixture"
