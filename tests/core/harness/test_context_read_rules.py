"""The replay rules of a read (``core/harness/context.py``: ``_read``, ``_serve``, ``_miss``, ``_diverge``,
``_refused``, ``_past_end``), one test each, on a ``Session`` over a recording written in the test (issue 25:
the survivors of context.py's mutation run). What the agent gets, what the replay span says, what the run counts.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from harness_sessions import recorded, recorded_retrieval, session

from tracetui.core.canonical import args_hash
from tracetui.core.errors import (
    LiveCallBlocked,
    RecordedToolError,
    RecordingExhausted,
    RecordingIncomplete,
    RecordingUnservable,
    UnrecordedCall,
)
from tracetui.core.harness.fixture import RecordedReadsFixture
from tracetui.core.harness.guard import block_network
from tracetui.core.model import SpanKind, Status

BALANCE = {"account": "A1", "balance": 500}


def test_a_recorded_read_is_served_as_a_copy_and_its_span_names_the_recording() -> None:
    s, out = session("strict", [recorded(1, "get", {"account": "A1"}, BALANCE)], reads={"get"})
    got = s.tool("get", {"account": "A1"}, None)
    assert got == BALANCE
    got["balance"] = 0  # the agent may change what it got: the replay span keeps the recording
    (span,) = out.spans
    assert (span.kind, span.name, span.status, span.error_type) == (SpanKind.TOOL, "execute_tool get", Status.OK, None)
    assert (span.seq, span.parent_id, span.trace_id) == (1, s.root_id, "t" * 32)
    assert span.data == {"tool_name": "get", "arguments": {"account": "A1"}, "args_hash": args_hash({"account": "A1"}),
                         "effect": "read", "mode": "replay", "output": BALANCE, "output_truncated": False}
    assert span.attributes == {"replay.source": "recording", "replay.recorded_span_id": "rec1"}
    assert (s.outcome.served, s.outcome.misses, s.outcome.live_calls, s.outcome.divergences) == (1, 0, 0, [])
    assert s.outcome.path == [("get", args_hash({"account": "A1"}))]


def test_a_recorded_failure_is_raised_again_and_written_as_a_failed_span() -> None:
    body = {"error_type": "TimeoutError", "message": "report timed out"}
    s, out = session("strict", [recorded(1, "report", {"a": 1}, body, status=Status.ERROR, error_type="TimeoutError")],
                     reads={"report"})
    with pytest.raises(TimeoutError) as caught:
        s.tool("report", {"a": 1}, None)
    assert isinstance(caught.value, RecordedToolError) and str(caught.value) == "report timed out"
    assert (caught.value.tool, caught.value.output) == ("report", body)
    (span,) = out.spans
    assert (span.status, span.error_type, span.data["output"]) == (Status.ERROR, "TimeoutError", body)
    assert span.attributes == {"replay.source": "recording", "replay.recorded_span_id": "rec1"}
    assert s.outcome.served == 1 and s.outcome.divergences == []


def test_a_truncated_recording_is_served_with_accept_truncated_only_marked_and_noted() -> None:
    rec = recorded(1, "get", {"account": "A1"}, BALANCE, output_truncated=True)
    s, out = session("strict", [rec], reads={"get"}, accept_truncated=True)
    assert s.tool("get", {"account": "A1"}, None) == BALANCE
    why = "its recorded output is truncated (output_truncated: true)"
    assert out.last.data["output_truncated"] is True
    assert out.last.attributes == {"replay.source": "recording", "replay.recorded_span_id": "rec1",
                                   "replay.accepted_truncated": why}
    assert s.outcome.notes == [f"--accept-truncated: get served although {why}"]

    s, out = session("strict", [rec], reads={"get"})
    with pytest.raises(RecordingUnservable) as caught:
        s.tool("get", {"account": "A1"}, None)
    assert str(caught.value) == (f"unservable recording: get: {why}; a strict replay never serves it "
                                 "(--accept-truncated serves it, marked). Nothing was sent to a live system.")
    assert (caught.value.tool, caught.value.reason, caught.value.span_id) == ("get", why, out.last.span_id)
    assert out.last.attributes == {"replay.source": "refused", "replay.divergence": "recording_unservable"}
    assert out.last.data["output"] == {"error": "recording_unservable", "message": str(caught.value)}
    assert (s.outcome.served, s.outcome.misses) == (0, 0)


def test_a_recorded_output_flagged_truncated_false_but_accepted_as_ambiguous_is_marked_truncated() -> None:
    rec = recorded(1, "get", {"account": "A1"}, BALANCE, output_truncated=False,
                   attributes={"tracetui.duplicate_keys": ["account"]})
    s, out = session("strict", [rec], reads={"get"}, accept_truncated=True)
    s.tool("get", {"account": "A1"}, None)
    assert out.last.data["output_truncated"] is True
    assert out.last.attributes["replay.accepted_truncated"].startswith("its recorded arguments are ambiguous")


def test_a_call_the_recording_started_and_never_finished_is_refused_as_incomplete() -> None:
    s, out = session("strict", [recorded(1, "get", {"account": "A1"}, None, end=None)], reads={"get"})
    with pytest.raises(RecordingIncomplete) as caught:
        s.tool("get", {"account": "A1"}, None)
    assert str(caught.value) == ("incomplete recording: get was started but never finished in the recording (no "
                                 "output, no end time; recorded span rec1). The replay stops here; nothing was "
                                 "served.")
    span = out.last
    assert (span.status, span.error_type) == (Status.ERROR, "RecordingIncomplete")
    assert span.data["output"] == {"error": "recording_incomplete", "message": str(caught.value)}
    assert span.data["output_truncated"] is False
    assert span.attributes == {"replay.source": "refused", "replay.divergence": "recording_incomplete"}
    assert s.outcome.divergences == [{"type": "recording_incomplete", "span_id": span.span_id, "seq": 1,
                                      "tool": "get", "message": str(caught.value)}]
    assert caught.value.span_id == span.span_id


def test_an_unrecorded_read_diverges_naming_the_nearest_recorded_calls() -> None:
    s, out = session("strict", [recorded(1, "get", {"account": "A1"}, BALANCE)], reads={"get"})
    with pytest.raises(UnrecordedCall) as caught:
        s.tool("get", {"account": "B2"}, None)
    exc = caught.value
    assert str(exc) == ('unrecorded call get {"account":"B2"}: the recording has no response for this tool and '
                        'these arguments. Nothing was sent to a live system.\nNearest recorded calls:\n'
                        '  get {"account":"A1"}: arguments.account: "B2" (recorded "A1")')
    assert (exc.tool, exc.arguments, exc.span_id) == ("get", {"account": "B2"}, out.last.span_id)
    assert [n["arguments"] for n in exc.nearest] == [{"account": "A1"}]
    assert out.last.data["output"] == {"error": "unrecorded_call", "message": str(exc), "nearest": exc.nearest}
    assert out.last.attributes == {"replay.source": "miss", "replay.divergence": "unrecorded_call"}
    assert (s.outcome.misses, s.outcome.served) == (1, 0)
    assert s.outcome.divergences == [{"type": "unrecorded_call", "span_id": out.last.span_id, "seq": 1, "tool": "get",
                                      "message": str(exc)}]


def test_an_unrecorded_read_with_nothing_near_has_no_nearest_lines() -> None:
    s, _ = session("strict", [], reads={"get"})
    with pytest.raises(UnrecordedCall) as caught:
        s.tool("get", {"account": "B2"}, None)
    assert str(caught.value) == ('unrecorded call get {"account":"B2"}: the recording has no response for this tool '
                                 'and these arguments. Nothing was sent to a live system.')
    assert caught.value.nearest == []


@pytest.mark.parametrize(("recorded_times", "words"), [(1, "1 response"), (2, "2 responses")])
def test_a_read_called_once_more_than_recorded_exhausts_the_recording(recorded_times: int, words: str) -> None:
    recs = [recorded(i, "get", {"account": "A1"}, {"n": i}) for i in range(1, recorded_times + 1)]
    s, out = session("strict", recs, reads={"get"})
    assert [s.tool("get", {"account": "A1"}, None) for _ in recs] == [{"n": i} for i in range(1, recorded_times + 1)]
    with pytest.raises(RecordingExhausted) as caught:
        s.tool("get", {"account": "A1"}, None)
    n = recorded_times
    assert str(caught.value) == (f"get called {n + 1} times with these arguments; the recording has {words}, all "
                                 f"served (recorded {n}, requested {n + 1}). Nothing was sent to a live system.")
    assert (caught.value.tool, caught.value.recorded, caught.value.arguments) == ("get", n, {"account": "A1"})
    assert caught.value.span_id == out.last.span_id
    assert out.last.data["output"] == {"error": "recording_exhausted", "message": str(caught.value), "recorded": n}
    assert out.last.attributes == {"replay.source": "miss", "replay.divergence": "recording_exhausted"}
    assert (s.outcome.served, s.outcome.misses) == (n, 1)


def test_a_miss_after_an_incomplete_recording_was_served_whole_is_past_its_end() -> None:
    recs = [recorded(1, "get", {"account": "A1"}, BALANCE), recorded(2, "slow", {}, None, end=None)]
    s, out = session("strict", recs, reads={"get", "slow", "other"})
    with pytest.raises(UnrecordedCall):  # the recording's complete calls are not all served yet
        s.tool("other", {}, None)
    s.tool("get", {"account": "A1"}, None)
    with pytest.raises(RecordingIncomplete) as caught:
        s.tool("other", {}, None)
    assert str(caught.value) == ("incomplete recording: the replay reached other after the end of the recording "
                                 "(span rec2 (execute_tool slow) was started but never finished (no output, no end "
                                 "time)). The replay stops here.")
    assert (caught.value.tool, caught.value.span_id) == ("other", out.last.span_id)
    assert out.last.attributes == {"replay.source": "miss", "replay.divergence": "recording_incomplete"}
    assert out.last.data["output"] == {"error": "recording_incomplete", "message": str(caught.value)}
    assert s.outcome.misses == 2


def test_a_miss_on_a_complete_recording_served_whole_is_an_unrecorded_call() -> None:
    s, _ = session("strict", [recorded(1, "get", {"account": "A1"}, BALANCE)], reads={"get", "other"})
    s.tool("get", {"account": "A1"}, None)
    with pytest.raises(UnrecordedCall):
        s.tool("other", {}, None)


def test_loose_mode_without_allow_live_says_why_a_miss_was_not_sent_live() -> None:
    calls: list[str] = []
    s, _ = session("loose", [], tools={"get": lambda account: calls.append(account)}, reads={"get"})
    with pytest.raises(UnrecordedCall) as caught:
        s.tool("get", {"account": "B2"}, None)
    assert str(caught.value) == ('unrecorded call get {"account":"B2"}: loose mode sends misses live only with '
                                 '--allow-live. Nothing was sent to a live system.')
    assert calls == [] and s.outcome.live_calls == 0


def test_loose_mode_with_allow_live_sends_a_miss_to_the_live_tool_with_the_network_allowed() -> None:
    def get(account: str) -> dict[str, Any]:
        socket.getaddrinfo("localhost", 80)  # blocked by the guard unless the call is let through
        return {"account": account, "nickname": "Bobby Tables"}

    s, out = session("loose", [], tools={"get": get}, reads={"get"}, allow_live=True, sensitive={"get": ["nickname"]})
    with block_network("loose") as guard:
        got = s.tool("get", {"account": "B2"}, None)
    assert guard.blocked == []
    assert got == {"account": "B2", "nickname": "Bobby Tables"}  # the agent gets the live answer as it is
    span = out.last
    assert span.data["output"]["nickname"].startswith("<SENSITIVE_")  # the span, redacted by the tool's fields
    assert (span.status, span.data["mode"], span.attributes) == (Status.OK, "live", {"replay.source": "live"})
    assert (s.outcome.live_calls, s.outcome.misses, s.outcome.served, s.outcome.divergences) == (1, 1, 0, [])
    with block_network("loose"):
        s.tool("get", {"account": "C3"}, None)
    assert (s.outcome.live_calls, s.outcome.misses) == (2, 2)


def test_a_live_miss_that_fails_is_written_failed_and_raised_to_the_agent() -> None:
    def get(account: str) -> Any:
        raise ConnectionError("refused nickname=Bobby")

    s, out = session("loose", [], tools={"get": get}, reads={"get"}, allow_live=True, sensitive={"get": ["nickname"]})
    with pytest.raises(ConnectionError, match="refused nickname=Bobby"):
        s.tool("get", {"account": "B2"}, None)
    span = out.last
    assert (span.status, span.error_type, span.attributes) == (Status.ERROR, "ConnectionError",
                                                               {"replay.source": "live"})
    assert span.data["output"]["error_type"] == "ConnectionError"
    assert span.data["output"]["message"].startswith("refused nickname=<SENSITIVE_")
    assert (span.data["mode"], s.outcome.live_calls, s.outcome.divergences) == ("live", 1, [])


def test_a_live_miss_goes_only_to_tools_live_allowed_names_and_only_in_loose_mode() -> None:
    calls: list[str] = []
    tools = {"get": lambda account: calls.append(account) or "live"}
    s, _ = session("loose", [], tools=tools, reads={"get"}, allow_live=True, live_allowed=lambda tool: tool == "get")
    assert s.tool("get", {"account": "B2"}, None) == "live"
    s, _ = session("loose", [], tools=tools, reads={"get"}, allow_live=True, live_allowed=lambda tool: False)
    with pytest.raises(UnrecordedCall) as caught:
        s.tool("get", {"account": "B2"}, None)
    assert "the recording has no response for this tool" in str(caught.value)
    s, _ = session("strict", [], tools=tools, reads={"get"}, allow_live=True)
    with pytest.raises(UnrecordedCall):
        s.tool("get", {"account": "B2"}, None)
    s, _ = session("loose", [], reads={"get"}, allow_live=True)  # no live tool to call
    with pytest.raises(UnrecordedCall):
        s.tool("get", {"account": "B2"}, None)
    assert calls == ["B2"]


def test_a_live_retrieval_miss_has_no_output_truncated_field_and_keeps_its_mode() -> None:
    s, out = session("loose", [], retrievers={"faq": lambda query, top_k=3: [{"id": "d1"}][:top_k]}, allow_live=True)
    assert s.retrieve("faq", "limits", {"top_k": 1}) == [{"id": "d1"}]
    assert out.last.data == {"index": "faq", "query": "limits", "top_k": 1, "documents": [{"id": "d1"}]}


class Slots(RecordedReadsFixture):
    """A fixture store answering ``slots`` from its state; any other read: ``LookupError(message)``."""

    def __init__(self, message: str = "no slot on Monday") -> None:
        super().__init__()
        self.message = message

    def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
        assert write is False and "@" not in str(arguments), "a read reaches the store as a read, arguments redacted"
        if tool == "slots":
            return ({"day": arguments["day"], "free": ("09:00", "10:00"), "nickname": "Bobby Tables"})
        raise LookupError(self.message) if self.message else LookupError()


def test_a_fixture_read_is_served_from_the_store_redacted_as_json_and_copied() -> None:
    s, out = session("fixture", [], reads={"slots"}, fixture=Slots(), sensitive={"slots": ["nickname"]})
    got = s.tool("slots", {"day": "mon", "for": "ada@example.com"}, None)
    assert got["free"] == ["09:00", "10:00"] and got["nickname"].startswith("<SENSITIVE_")  # JSON, redacted
    got["free"].clear()
    span = out.last
    assert span.data["output"]["free"] == ["09:00", "10:00"]
    assert (span.status, span.data["output_truncated"], span.attributes) == (Status.OK, False,
                                                                             {"replay.source": "fixture"})
    s.tool("slots", {"day": "tue"}, None)
    assert (s.outcome.served, s.outcome.misses, s.outcome.live_calls) == (2, 0, 0)


@pytest.mark.parametrize(("message", "detail"), [("no slot for ada@example.com", "no slot for <EMAIL_"),
                                                 ("", "LookupError")])
@pytest.mark.parametrize("recording", [[recorded(1, "slots", {"day": "tue"}, [])], None])
def test_a_read_the_fixture_cannot_answer_is_an_unrecorded_call_saying_why(message: str, detail: str,
                                                                           recording: Any) -> None:
    """With or without a recording to name the nearest calls from (a session in fixture mode needs none)."""
    s, out = session("fixture", recording, reads={"rooms"}, fixture=Slots(message))
    with pytest.raises(UnrecordedCall) as caught:
        s.tool("rooms", {"day": "mon"}, None)
    assert str(caught.value).startswith(f'unrecorded call rooms {{"day":"mon"}}: the fixture has no answer for it '
                                        f'({detail}')
    first, *nearest = str(caught.value).split("\nNearest recorded calls:\n")
    assert first.endswith(". Nothing was sent to a live system.")
    assert nearest == ([] if recording is None else ['  slots {"day":"tue"}: tool name: rooms (recorded slots); '
                                                     'arguments.day: "mon" (recorded "tue")'])
    assert "ada@example.com" not in str(caught.value)
    assert out.last.attributes == {"replay.source": "miss", "replay.divergence": "unrecorded_call"}
    assert out.last.data["output"]["error"] == "unrecorded_call" and caught.value.span_id == out.last.span_id
    assert (s.outcome.served, len(s.outcome.divergences)) == (0, 1)


def test_a_read_the_fixture_answers_by_raising_is_a_failed_span_redacted_by_the_tools_fields() -> None:
    class Refusing(RecordedReadsFixture):
        def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
            raise PermissionError(f"{tool} refused for nickname=Bobby")

    s, out = session("fixture", [], reads={"slots"}, fixture=Refusing(), sensitive={"slots": ["nickname"]})
    for _ in range(2):
        with pytest.raises(PermissionError, match="nickname=Bobby"):  # the agent gets the store's own error
            s.tool("slots", {"day": "mon"}, None)
    span = out.last
    assert (span.status, span.error_type, span.attributes) == (Status.ERROR, "PermissionError",
                                                               {"replay.source": "fixture"})
    assert span.data["output"]["message"].startswith("slots refused for nickname=<SENSITIVE_")
    assert span.data["output_truncated"] is False
    assert (s.outcome.served, s.outcome.divergences) == (2, [])  # each answer, a failure too, counts as served
    with pytest.raises(PermissionError):
        s.retrieve("faq", "q", {})
    assert out.last.data["documents"]["message"].startswith("retrieval:faq refused for nickname=")
    assert "output_truncated" not in out.last.data


def test_a_fixture_retrieval_is_written_without_output_truncated() -> None:
    class Docs(RecordedReadsFixture):
        def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
            return [{"id": "d1", "tool": tool}]

    s, out = session("fixture", [], fixture=Docs())
    assert s.retrieve("faq", "limits", {}) == [{"id": "d1", "tool": "retrieval:faq"}]
    assert out.last.data == {"index": "faq", "query": "limits", "documents": [{"id": "d1", "tool": "retrieval:faq"}]}
    assert out.last.attributes == {"replay.source": "fixture"}


def test_a_retrieval_is_keyed_by_query_and_parameters_and_served_from_its_documents() -> None:
    docs = [{"id": "faq-7", "score": 0.9}]
    rec = recorded_retrieval(1, "faq", "limits", docs, top_k=2, filters={"lang": "en"}, params={"rerank": True})
    s, out = session("strict", [rec])
    assert s.retrieve("faq", "limits", {"top_k": 2, "filters": {"lang": "en"}, "rerank": True}) == docs
    span = out.last
    assert (span.kind, span.name) == (SpanKind.RETRIEVAL, "retrieve faq")
    assert span.attributes == {"replay.source": "recording", "replay.recorded_span_id": "rec1"}
    assert span.data == {"index": "faq", "query": "limits", "top_k": 2, "filters": {"lang": "en"},
                         "params": {"rerank": True}, "documents": docs}
    with pytest.raises(UnrecordedCall) as caught:  # another parameter is another call
        s.retrieve("faq", "limits", {"top_k": 2, "filters": {"lang": "en"}, "rerank": False})
    assert out.last.data["documents"]["error"] == "unrecorded_call" and "output_truncated" not in out.last.data
    assert caught.value.tool == "retrieval:faq"
    assert caught.value.arguments == {"query": "limits", "top_k": 2, "filters": {"lang": "en"}, "rerank": False}
    assert s.outcome.path[0][0] == "retrieval:faq"


def test_volatile_argument_paths_are_counted_each_time_a_replayed_call_holds_them() -> None:
    recs = [recorded(1, "get", {"account": "A1", "request_id": "r-1"}, {"n": 1}),
            recorded(2, "get", {"account": "A1", "request_id": "r-2"}, {"n": 2})]
    s, _ = session("strict", recs, reads={"get"}, volatile={"get": ["request_id", "trace.id"]})
    assert s.tool("get", {"account": "A1", "request_id": "r-9"}, None) == {"n": 1}
    assert s.tool("get", {"account": "A1", "request_id": "r-8"}, None) == {"n": 2}
    assert s.volatile_applied == {"get.request_id": 2}


def test_a_retrievals_volatile_parameters_are_masked_under_its_index_tool_name() -> None:
    rec = recorded_retrieval(1, "faq", "limits", ["d1"], params={"request_id": "r-1"})
    s, _ = session("strict", [rec], volatile={"retrieval:faq": ["request_id"]})
    assert s.retrieve("faq", "limits", {"request_id": "r-9"}) == ["d1"]
    assert s.volatile_applied == {"retrieval:faq.request_id": 1}


def test_the_live_call_a_record_makes_is_blocked_by_the_guard_unlike_a_loose_miss() -> None:
    def get(account: str) -> str:
        socket.getaddrinfo("localhost", 80)
        return "live"

    s, _ = session("record", None, tools={"get": get}, reads={"get"})
    with block_network("strict") as guard, pytest.raises(LiveCallBlocked):
        s.tool("get", {"account": "A1"}, None)
    assert guard.blocked == ["getaddrinfo 'localhost'"]
