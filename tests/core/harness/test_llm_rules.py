"""The LLM path's rules (``core/harness/llm.py``), on a ``Session`` built in the test (issue 25, round 8).

Record: the model is called live and the span holds what it was asked (model, provider, prompt id and version when
given, redacted params and messages, the tool schemas' hash, the caller's extra inputs) and what it answered (the
assistant message, its finish reason normalised, its usage never redacted); a failed call is a failed span and the
exception goes on. Frozen replay: the recorded answer for the same model, messages and params, else an
``InputMismatch``; a call the recording started and never finished, or one past an incomplete recording's end, is
``RecordingIncomplete``; ambiguous recorded arguments are ``RecordingUnservable``. Every refusal is written to the
replay trace first and counted as a divergence. ``--llm live`` replays call the model again, marked.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from builders import Ticker
from harness_sessions import CLOCK, KEY, Spans

from tracetui.core.errors import HarnessError, InputMismatch, RecordingIncomplete, RecordingUnservable
from tracetui.core.harness import guard
from tracetui.core.harness.agent import AgentSpec
from tracetui.core.harness.cassette import Cassette
from tracetui.core.harness.context import Session
from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.steps import run_steps
from tracetui.core.model import Span, SpanKind, Status, Trace

EMAIL = "ann.lee@example.com"
MESSAGES = [{"role": "user", "content": "hi"}]
ANSWER = {"role": "assistant", "content": "hello", "tool_calls": []}


def make(mode: str = "record", recording: list[Span] | None = None, *, model: Any = None,
         model_info: dict[str, Any] | None = None, llm_mode: str = "frozen", foreign: bool = False,
         **kw: Any) -> tuple[Session, Spans]:
    spec = AgentSpec("test_agent.py:run", lambda ctx, input: None, "test_agent", model=model,
                     model_info=dict(model_info or {}))
    cassette = None
    if recording is not None:
        header = {} if foreign else {"schema": "tracetui/1"}
        cassette = Cassette.from_trace(Trace(recording, header=header,
                                             format="otel-sdk-json" if foreign else "tracetui"))
    out = Spans()
    s = Session(spec, mode, out, Redactor(KEY), CLOCK, 42, "t" * 32, cassette=cassette, llm_mode=llm_mode,
                timer=Ticker(), **kw)
    return s, out


def rec_llm(seq: int, output: Any = ANSWER, *, model: str = "toy-1", messages: Any = MESSAGES,
            params: Any = None, end: int | None = 2, status: Status = Status.OK, error_type: str | None = None,
            attributes: dict[str, Any] | None = None, **data: Any) -> Span:
    body: dict[str, Any] = {"model": model, "messages": messages, "params": {} if params is None else params, **data}
    if output is not None:
        body["output"] = output
    return Span(f"rec{seq}", "root", seq, SpanKind.LLM, f"chat {model}", 1, end, status, error_type, body,
                dict(attributes or {}))


# --- record -----------------------------------------------------------------------------------------------------


def test_a_recorded_call_holds_what_the_model_was_asked_and_answered():
    calls: list[Any] = []

    def model(messages, *, model, **params):
        calls.append((messages, model, params))
        return {"role": "assistant", "content": "hello", "finish_reason": "stop", "usage": {"input_tokens": 3}}

    s, out = make(model=model, model_info={"provider": "acme", "version": "toy-1-2026"})
    got = s.llm(MESSAGES, "toy-1", "greet", "v2", {"temperature": 0})
    assert got == {"role": "assistant", "content": "hello", "finish_reason": "stop", "usage": {"input_tokens": 3}}
    assert calls == [(MESSAGES, "toy-1", {"temperature": 0})]
    span = out.last
    assert span.kind is SpanKind.LLM and span.name == "chat toy-1" and span.status is Status.OK
    assert span.error_type is None
    assert span.data == {"model": "toy-1", "provider": "acme", "prompt_id": "greet", "prompt_version": "v2",
                         "params": {"temperature": 0}, "messages": MESSAGES,
                         "tool_schemas_hash": s.tool_schema_hash, "output": got, "finish_reason": "stop",
                         "usage": {"input_tokens": 3}}
    assert list(span.data)[:6] == ["model", "provider", "prompt_id", "prompt_version", "params", "messages"]
    assert span.attributes == {"gen_ai.response.model": "toy-1-2026"}  # record mode: no replay.source
    assert s.outcome.model_calls == 1


def test_no_provider_or_prompt_given_is_no_field():
    s, out = make(model=lambda messages, **kw: "plain text")
    s.llm(MESSAGES, "toy-1", None, None, {})
    assert set(out.last.data) == {"model", "params", "messages", "tool_schemas_hash", "output"}
    assert out.last.data["output"] == "plain text" and out.last.attributes == {}
    s, out = make(model=lambda messages, **kw: "x", model_info={"provider": ""})
    s.llm(MESSAGES, "toy-1", "", "", {})
    assert "provider" not in out.last.data and out.last.data["prompt_id"] == "" and out.last.data["prompt_version"] == ""


def test_what_is_asked_and_answered_is_redacted_but_usage_counts_are_not():
    answer = {"role": "assistant", "content": f"mail {EMAIL}", "usage": {"note": EMAIL, "output_tokens": 2}}
    s, out = make(model=lambda messages, **kw: answer)
    messages = [{"role": "user", "content": f"write to {EMAIL}"}]
    got = s.llm(messages, "toy-1", None, None, {"user": EMAIL})
    assert got is answer  # record mode: the live value itself
    data = out.last.data
    assert EMAIL not in repr({k: data[k] for k in ("messages", "params", "output")})
    assert data["messages"][0]["content"].startswith("write to ") and data["params"]["user"] != EMAIL
    assert data["usage"] == {"note": EMAIL, "output_tokens": 2}


def test_finish_reason_is_normalised_or_inferred_from_tool_calls():
    for answer, reason in [({"content": "x", "finish_reason": "tool_calls"}, "tool_call"),
                           ({"content": None, "tool_calls": [{"name": "get", "arguments": {}}]}, "tool_call"),
                           ({"content": "x", "tool_calls": []}, "stop"),
                           ({"content": "x"}, "stop"),
                           ({"content": "x", "finish_reason": "length"}, "length")]:
        s, out = make(model=lambda messages, answer=answer, **kw: answer)
        s.llm(MESSAGES, "toy-1", None, None, {})
        assert out.last.data["finish_reason"] == reason, answer
        assert "usage" not in out.last.data


def test_a_usage_that_is_not_a_mapping_is_not_recorded_as_usage():
    s, out = make(model=lambda messages, **kw: {"content": "x", "usage": 7})
    s.llm(MESSAGES, "toy-1", None, None, {})
    assert "usage" not in out.last.data and out.last.data["output"] == {"content": "x", "usage": 7}


def test_extra_inputs_are_recorded_redacted_and_override_the_defaults():
    s, out = make(model=lambda messages, **kw: "x")
    run_steps(s.llm_steps(MESSAGES, "toy-1", None, None, {}, inputs={"tool_schemas_hash": "h1", "who": EMAIL}))
    assert out.last.data["tool_schemas_hash"] == "h1" and out.last.data["who"] not in (EMAIL, None)


def test_a_decoded_live_value_gives_the_span_its_output_fields_and_may_mark_it_failed():
    raw = object()
    s, out = make()
    got, data = run_steps(s.llm_steps(MESSAGES, "toy-1", None, None, {}, live=lambda: raw,
                                      decode=lambda v: {"output": None, "error_type": "RateLimited",
                                                        "usage": {"input_tokens": 1}, "response_id": EMAIL}))
    assert got is raw and data is not None
    span = out.last
    assert span.status is Status.ERROR and span.error_type == "RateLimited"
    assert span.data["usage"] == {"input_tokens": 1} and "error_type" not in span.data
    assert span.data["response_id"] != EMAIL and span.data["output"] is None
    s, out = make()
    run_steps(s.llm_steps(MESSAGES, "toy-1", None, None, {}, live=lambda: 1, decode=lambda v: {"output": v}))
    assert out.last.status is Status.OK and out.last.error_type is None and out.last.data["output"] == 1


def test_a_failed_live_call_is_a_failed_span_and_the_exception_goes_on():
    def model(messages, **kw):
        raise TimeoutError(f"upstream timed out for {EMAIL}")

    s, out = make(model=model)
    with pytest.raises(TimeoutError):
        s.llm(MESSAGES, "toy-1", None, None, {})
    with pytest.raises(TimeoutError):
        s.llm(MESSAGES, "toy-1", None, None, {})
    assert s.outcome.model_calls == 2
    span = out.last
    assert span.status is Status.ERROR and span.error_type == "TimeoutError" and span.data["output"] is None
    assert span.attributes["error.message"].startswith("upstream timed out for ")
    assert EMAIL not in span.attributes["error.message"]


def test_no_model_declared_is_a_harness_error_written_as_a_failed_span():
    s, out = make()
    with pytest.raises(HarnessError) as info:
        s.llm(MESSAGES, "toy-1", None, None, {})
    assert str(info.value) == ("the agent called ctx.llm(model='toy-1') but its module declares no MODEL "
                               "(MODEL(messages, *, model, **params) returning the assistant message)")
    span = out.last
    assert span.status is Status.ERROR and span.error_type == "HarnessError" and span.data["output"] is None
    assert s.outcome.model_calls == 0


def test_the_live_call_lifts_the_network_guard_only_in_a_replay():
    seen: list[bool] = []

    def model(messages, **kw):
        seen.append(guard._ALLOWED.get())
        return "x"

    s, _ = make(model=model)
    s.llm(MESSAGES, "toy-1", None, None, {})
    s, _ = make("strict", [], model=model, llm_mode="live")
    s.llm(MESSAGES, "toy-1", None, None, {})
    assert seen == [False, True]


def test_a_model_in_the_loop_replay_calls_the_model_again_marked_and_hands_back_a_copy():
    answer = {"role": "assistant", "content": "again"}
    s, out = make("strict", [rec_llm(1)], model=lambda messages, **kw: answer, llm_mode="live",
                  model_info={"version": "v9"})
    got = s.llm(MESSAGES, "toy-1", None, None, {})
    assert got == answer and got is not answer
    assert out.last.attributes == {"replay.source": "model", "gen_ai.response.model": "v9"}
    assert s.outcome.model_calls == 1 and s.outcome.llm_served == 0


def test_the_async_form_awaits_an_async_model():
    async def model(messages, **kw):
        await asyncio.sleep(0)
        return {"content": "async", "finish_reason": "stop"}

    answers: list[Any] = []

    async def model_kept(messages, **kw):
        answers.append({"content": "async", "finish_reason": "stop"})
        return answers[-1]

    s, out = make(model=model_kept)
    got = asyncio.run(s.allm(MESSAGES, "toy-1", "greet", "v4", {"seed": 1}))
    assert got is answers[0]  # record mode: the live value itself
    assert out.last.data["output"] == got
    assert (out.last.data["prompt_id"], out.last.data["prompt_version"], out.last.data["params"]) == (
        "greet", "v4", {"seed": 1})
    s, out = make(model=model)
    assert asyncio.run(s.allm(MESSAGES, "toy-1", None, None, {})) == {"content": "async", "finish_reason": "stop"}
    s, out = make("strict", [rec_llm(1)])
    got = asyncio.run(s.allm(MESSAGES, "toy-1", None, None, {}))
    assert got == ANSWER and out.last.attributes["replay.source"] == "recording"


# --- frozen replay ----------------------------------------------------------------------------------------------


def test_a_frozen_replay_serves_the_recorded_output_fields_and_hands_back_a_copy():
    rec = rec_llm(1, finish_reason="stop", usage={"input_tokens": 9}, response_id="r-1", wire_response={"a": 1},
                  wire_response_headers={"h": "v"}, provider="recorded-provider", status=Status.ERROR,
                  error_type="ContentFilter")
    s, out = make("strict", [rec], model=lambda *a, **k: pytest.fail("a frozen replay never calls the model"))
    got = s.llm(MESSAGES, "toy-1", None, None, {})
    assert got == ANSWER
    got["content"] = "changed by the agent"
    span = out.last
    assert span.data["output"] == ANSWER  # the written span is not the agent's copy
    assert span.data == {"model": "toy-1", "params": {}, "messages": MESSAGES, "tool_schemas_hash": s.tool_schema_hash,
                         "output": ANSWER, "finish_reason": "stop", "usage": {"input_tokens": 9}, "response_id": "r-1",
                         "wire_response": {"a": 1}, "wire_response_headers": {"h": "v"}}
    assert span.attributes == {"replay.source": "recording", "replay.recorded_span_id": "rec1"}
    assert span.status is Status.ERROR and span.error_type == "ContentFilter"
    assert (s.outcome.llm_served, s.outcome.model_calls, s.outcome.divergences) == (1, 0, [])


def test_a_call_the_recording_does_not_hold_is_an_input_mismatch_naming_what_differs():
    s, out = make("strict", [rec_llm(1)])
    other = [{"role": "user", "content": "bye"}]
    with pytest.raises(InputMismatch) as info:
        s.llm(other, "toy-1", None, None, {})
    msg = str(info.value)
    assert msg.startswith("input mismatch on LLM call #1 (chat toy-1): frozen replay serves recorded outputs only for "
                          "the same rendered messages, model and params; differs from the recorded call: messages")
    assert msg == ("input mismatch on LLM call #1 (chat toy-1): frozen replay serves recorded outputs only for the "
                   "same rendered messages, model and params; differs from the recorded call: "
                   + "; ".join(info.value.differs) + ". Replay with --llm live to call the model again.")
    span = out.last
    assert span.status is Status.ERROR and span.error_type == "InputMismatch" and span.data["output"] is None
    assert span.attributes["replay.source"] == "input_mismatch"
    assert span.attributes["replay.divergence"] == "input_mismatch"
    assert span.attributes["replay.recorded_span_id"] == "rec1"
    assert span.attributes["replay.differs"] == info.value.differs and info.value.differs
    assert info.value.span_id == span.span_id
    assert s.outcome.divergences == [{"type": "input_mismatch", "span_id": span.span_id, "seq": span.seq,
                                      "tool": "chat toy-1", "message": msg}]
    assert s.outcome.llm_served == 0


def test_changed_params_or_prompt_version_are_an_input_mismatch_against_the_matched_call():
    s, out = make("strict", [rec_llm(1, params={"temperature": 0}, prompt_version="v1"),
                             rec_llm(2, messages=[{"role": "user", "content": "two"}], params={"temperature": 0})])
    with pytest.raises(InputMismatch) as info:
        s.llm([{"role": "user", "content": "two"}], "toy-1", None, None, {"temperature": 1})
    # the call matched by its messages is the second: the differences are against it, not call #1 by position
    assert out.last.attributes["replay.recorded_span_id"] == "rec2"
    assert info.value.differs and all("messages" not in d and not d.startswith("model")
                                      for d in info.value.differs)
    assert any("temperature" in d for d in info.value.differs)
    s, out = make("strict", [rec_llm(1, params={"temperature": 0}, prompt_version="v1")])
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-1", None, "v2", {"temperature": 0})
    assert any(d.startswith("prompt_version") for d in info.value.differs)
    s, out = make("strict", [rec_llm(1, params={"temperature": 0}, prompt_id="greet")])
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-1", "farewell", None, {"temperature": 0})
    assert any(d.startswith("prompt_id") for d in info.value.differs)
    # params sent now that the recorded call did not have: a mismatch too
    s, out = make("strict", [rec_llm(1, params={})])
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-1", None, None, {"temperature": 1})
    assert any("temperature" in d for d in info.value.differs)
    s, out = make("strict", [rec_llm(1, params={"temperature": 0}, prompt_version="v1")])
    s.llm(MESSAGES, "toy-1", None, "v1", {"temperature": 0})
    assert out.last.attributes["replay.source"] == "recording"


def test_a_call_past_the_recorded_ones_names_the_position_and_no_recorded_span():
    s, out = make("strict", [rec_llm(1)])
    s.llm(MESSAGES, "toy-1", None, None, {})
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-1", None, None, {})
    assert "on LLM call #2 (chat toy-1)" in str(info.value)
    assert out.last.attributes["replay.recorded_span_id"] is None
    assert info.value.differs == ["no recorded LLM call at this position (the recording has 1)"]


def test_another_model_with_the_same_messages_differs_in_the_model_only():
    s, _ = make("strict", [rec_llm(1)])
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-2", None, None, {})
    assert info.value.differs and all(d.startswith("model") for d in info.value.differs)


def _params_mismatch(n: int) -> InputMismatch:
    s, _ = make("strict", [rec_llm(1, params={f"p{i}": i for i in range(n)})])
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-1", None, None, {f"p{i}": -i - 1 for i in range(n)})
    return info.value


def test_six_differences_are_all_named_and_a_seventh_is_an_ellipsis():
    six = _params_mismatch(6)
    assert len(six.differs) == 6
    assert str(six).endswith("; ".join(six.differs) + ". Replay with --llm live to call the model again.")
    seven = _params_mismatch(7)
    assert len(seven.differs) == 7
    assert str(seven).endswith("; ".join(seven.differs[:6]) + " .... Replay with --llm live to call the model again.")


def test_more_than_six_differences_are_cut_with_an_ellipsis():
    params = {f"p{i}": i for i in range(8)}
    s, out = make("strict", [rec_llm(1, model="toy-0", messages=[{"role": "user", "content": "x"}],
                                     params=params, prompt_id="a", prompt_version="a")])
    with pytest.raises(InputMismatch) as info:
        s.llm(MESSAGES, "toy-1", "b", "b", {f"p{i}": -i - 1 for i in range(8)})
    differs = info.value.differs
    assert len(differs) > 6
    assert "; ".join(differs[:6]) + " ... Replay with --llm live" not in str(info.value)
    assert "; ".join(differs[:6]) + " .... Replay with --llm live" in str(info.value)
    assert differs[6] not in str(info.value)
    assert out.last.attributes["replay.differs"] == differs  # the span keeps them all


def test_a_call_the_recording_started_and_never_finished_is_refused_as_incomplete():
    s, out = make("strict", [rec_llm(1, output=None, end=None)])
    with pytest.raises(RecordingIncomplete) as info:
        s.llm(MESSAGES, "toy-1", None, None, {})
    assert str(info.value) == ("incomplete recording: LLM call #1 was started but never finished in the recording. "
                               "The replay stops here; nothing was served.")
    span = out.last
    assert span.status is Status.ERROR and span.error_type == "RecordingIncomplete" and span.data["output"] is None
    assert span.attributes == {"replay.source": "refused", "replay.divergence": "recording_incomplete"}
    assert s.outcome.divergences == [{"type": "recording_incomplete", "span_id": span.span_id, "seq": span.seq,
                                      "tool": "chat toy-1", "message": str(info.value)}]
    assert info.value.span_id == span.span_id and s.outcome.llm_served == 0
    assert info.value.tool == "chat toy-1"


def test_a_call_past_an_incomplete_recordings_end_is_refused_as_incomplete():
    # the recording's second call never finished: the first is served, the second and any later refused
    s, out = make("strict", [rec_llm(1), rec_llm(2, output=None, end=None)])
    assert s.cassette is not None and s.cassette.incomplete
    s.llm(MESSAGES, "toy-1", None, None, {})
    with pytest.raises(RecordingIncomplete) as info:
        s.llm([{"role": "user", "content": "other"}], "toy-1", None, None, {})
    assert str(info.value).startswith("incomplete recording: the replay reached LLM call #2 after the end of the "
                                      f"recording ({s.cassette.incomplete}).")
    assert out.last.attributes["replay.source"] == "refused"


def test_a_mismatch_before_an_incomplete_recordings_end_is_still_an_input_mismatch():
    s, out = make("strict", [rec_llm(1), rec_llm(2), rec_llm(3, output=None, end=None)])
    with pytest.raises(InputMismatch):
        s.llm([{"role": "user", "content": "other"}], "toy-1", None, None, {})
    with pytest.raises(InputMismatch):
        s.llm([{"role": "user", "content": "other"}], "toy-1", None, None, {})
    with pytest.raises(RecordingIncomplete):
        s.llm([{"role": "user", "content": "other"}], "toy-1", None, None, {})


def test_a_complete_recordings_extra_call_is_an_input_mismatch_not_incomplete():
    s, _ = make("strict", [rec_llm(1)])
    assert s.cassette is not None and s.cassette.incomplete is None
    s.llm(MESSAGES, "toy-1", None, None, {})
    with pytest.raises(InputMismatch):
        s.llm([{"role": "user", "content": "other"}], "toy-1", None, None, {})


def test_ambiguous_recorded_arguments_are_never_served_unless_truncation_is_accepted():
    dup = {"tracetui.duplicate_keys": ["tool_calls[0].arguments.id"]}
    s, out = make("strict", [rec_llm(1, attributes=dup)])
    with pytest.raises(RecordingUnservable) as info:
        s.llm(MESSAGES, "toy-1", None, None, {})
    why = ("its recorded tool-call arguments are ambiguous (the same key twice with different values: "
           "['tool_calls[0].arguments.id'])")
    assert str(info.value) == (f"unservable recording: LLM call #1 (chat toy-1): {why}; a strict replay never serves "
                               "it (--accept-truncated serves it, marked).")
    span = out.last
    assert span.status is Status.ERROR and span.error_type == "RecordingUnservable" and span.data["output"] is None
    assert span.attributes == {"replay.source": "refused", "replay.divergence": "recording_unservable",
                               "replay.recorded_span_id": "rec1"}
    assert s.outcome.divergences == [{"type": "recording_unservable", "span_id": span.span_id, "seq": span.seq,
                                      "tool": "chat toy-1", "message": str(info.value)}]
    assert (info.value.tool, info.value.reason, info.value.span_id) == ("chat toy-1", why, span.span_id)
    assert s.outcome.llm_served == 0
    s, out = make("strict", [rec_llm(1, attributes=dup)], accept_truncated=True)
    assert s.llm(MESSAGES, "toy-1", None, None, {}) == ANSWER
    s, out = make("strict", [rec_llm(1, attributes={"tracetui.duplicate_keys": []})])
    assert s.llm(MESSAGES, "toy-1", None, None, {}) == ANSWER


def test_a_foreign_calls_unchecked_fields_are_marked_and_counted():
    rec = rec_llm(1, model=None, params={})
    rec.data.pop("model")
    rec.data.pop("params")
    s, out = make("strict", [rec], foreign=True)
    s.llm(MESSAGES, "toy-1", None, None, {"temperature": 0})
    s2_unchecked = out.last.attributes["replay.unchecked"]
    assert "model" in s2_unchecked and "params.temperature" in s2_unchecked
    assert s.llm_unchecked == {name: 1 for name in s2_unchecked}
    assert s.cassette is not None
    s.cassette.reset()
    s.llm(MESSAGES, "toy-1", None, None, {"temperature": 0})
    assert s.llm_unchecked == {name: 2 for name in s2_unchecked}
    s, out = make("strict", [rec_llm(1)])
    s.llm(MESSAGES, "toy-1", None, None, {})
    assert "replay.unchecked" not in out.last.attributes and s.llm_unchecked == {}
    # content capture off: the recording holds no messages, so they could not be checked either
    quiet = rec_llm(1)
    quiet.data.pop("messages")
    s, out = make("strict", [quiet], foreign=True)
    s.llm(MESSAGES, "toy-1", None, None, {})
    assert "messages" in out.last.attributes["replay.unchecked"]


def test_each_call_takes_the_next_position():
    s, out = make("strict", [rec_llm(1), rec_llm(2)])
    s.llm(MESSAGES, "toy-1", None, None, {})
    s.llm(MESSAGES, "toy-1", None, None, {})
    assert [sp.attributes["replay.recorded_span_id"] for sp in out.spans] == ["rec1", "rec2"]
    assert s.outcome.llm_served == 2
    with pytest.raises(InputMismatch, match=r"LLM call #3 "):
        s.llm(MESSAGES, "toy-1", None, None, {})
