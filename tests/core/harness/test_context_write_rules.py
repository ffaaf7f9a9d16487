"""The write and record rules of ``core/harness/context.py`` (``_write``, ``tool_steps``, ``retrieve_steps``,
``_live``, ``_fail``, ``decide``, the async forms), one test each, on a ``Session`` built in the test (issue 25: the
survivors and the untested functions of context.py's mutation run).

A write is never executed in a replay: matched against the recorded writes (strict, loose) or applied to the
fixture; each write intent is counted in order, with its idempotency key and where its answer came from.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from harness_sessions import KEY, recorded, session

from tracetui.core.canonical import args_hash
from tracetui.core.errors import HarnessError, RecordingExhausted, RecordingIncomplete, WriteMismatch
from tracetui.core.harness.cassette import Cassette
from tracetui.core.harness.fixture import RecordedReadsFixture
from tracetui.core.harness.redact import Redactor
from tracetui.core.harness.steps import run_steps
from tracetui.core.model import Span, SpanKind, Status, Trace

MOVE = {"src": "A1", "dst": "B2", "amount": 120}


def intent(position: int, span_id: str, source: str, key: str | None = None, args: Any = MOVE) -> dict[str, Any]:
    return {"tool": "transfer", "arguments": args, "idempotency_key": key, "position": position, "span_id": span_id,
            "source": source}


def test_a_recorded_write_is_matched_not_executed_and_served_its_recorded_answer() -> None:
    executed: list[Any] = []
    rec = recorded(1, "transfer", MOVE, {"status": "done"}, effect="write")
    s, out = session("strict", [rec], tools={"transfer": lambda **kw: executed.append(kw)})
    got = s.tool("transfer", MOVE, "tx-1")
    assert got == {"status": "done"} and executed == []
    span = out.last
    assert span.data == {"tool_name": "transfer", "arguments": MOVE, "args_hash": args_hash(MOVE), "effect": "write",
                         "mode": "replay", "output": {"status": "done"}, "output_truncated": False}
    assert span.attributes == {"replay.intercepted": True, "replay.simulated": True, "replay.source": "recording",
                               "replay.recorded_span_id": "rec1",
                               "replay.write_intent": {"tool": "transfer", "idempotency_key": "tx-1", "position": 1}}
    assert s.outcome.writes == [intent(1, span.span_id, "recording", "tx-1")]
    assert (s.outcome.served, s.outcome.misses, s.outcome.live_calls) == (0, 0, 0)  # served counts reads


def test_a_write_matching_no_recorded_write_diverges_naming_the_nearest_writes() -> None:
    recs = [recorded(1, "transfer", MOVE, {"status": "done"}, effect="write"), recorded(2, "get", {"a": 1}, "x")]
    s, out = session("loose", recs, reads={"get"}, allow_live=True)
    other = {**MOVE, "amount": 99}
    with pytest.raises(WriteMismatch) as caught:
        s.tool("transfer", other, None)
    assert str(caught.value) == (
        'write mismatch: transfer {"amount":99,"dst":"B2","src":"A1"} matches no recorded write (tool + canonical '
        'arguments + order). It was not executed and not simulated.\nNearest recorded writes:\n'
        '  transfer {"amount":120,"dst":"B2","src":"A1"}: arguments.amount: 99 (recorded 120)')
    assert [n["tool"] for n in caught.value.nearest] == ["transfer"]  # writes only: not the recorded read
    assert (caught.value.tool, caught.value.arguments, caught.value.span_id) == ("transfer", other, out.last.span_id)
    span = out.last
    assert (span.status, span.error_type) == (Status.ERROR, "WriteMismatch")
    assert span.data["output"] == {"error": "write_mismatch", "message": str(caught.value),
                                   "nearest": caught.value.nearest}
    assert span.attributes == {"replay.intercepted": True, "replay.source": "miss",
                               "replay.divergence": "write_mismatch",
                               "replay.write_intent": {"tool": "transfer", "idempotency_key": None, "position": 1}}
    assert s.outcome.writes == [intent(1, span.span_id, "diverged", args=other)]
    assert (s.outcome.misses, s.outcome.live_calls) == (1, 0)
    assert s.outcome.divergences[0]["type"] == "write_mismatch"
    with pytest.raises(WriteMismatch):
        s.tool("transfer", {**MOVE, "amount": 98}, None)
    assert s.outcome.misses == 2


def test_a_write_with_no_recorded_write_near_has_no_nearest_lines() -> None:
    s, _ = session("strict", [])
    with pytest.raises(WriteMismatch) as caught:
        s.tool("transfer", MOVE, None)
    assert str(caught.value).endswith("It was not executed and not simulated.")


def test_a_recorded_write_never_finished_is_refused_and_the_intent_diverged() -> None:
    s, out = session("strict", [recorded(1, "transfer", MOVE, None, effect="write", end=None)])
    with pytest.raises(RecordingIncomplete) as caught:
        s.tool("transfer", MOVE, None)
    assert str(caught.value).startswith("incomplete recording: transfer was started but never finished")
    assert (caught.value.tool, caught.value.span_id) == ("transfer", out.last.span_id)
    assert out.last.attributes["replay.source"] == "refused"
    assert out.last.attributes["replay.intercepted"] is True
    assert s.outcome.writes == [intent(1, out.last.span_id, "diverged")]
    assert (s.outcome.served, s.outcome.misses) == (0, 0)


def test_a_write_after_an_incomplete_recording_was_served_whole_is_past_its_end() -> None:
    s, out = session("strict", [recorded(1, "get", {}, "x"), recorded(2, "slow", {}, None, end=None)],
                     reads={"get", "slow"})
    s.tool("get", {}, None)
    with pytest.raises(RecordingIncomplete, match="reached transfer after the end of the recording") as caught:
        s.tool("transfer", MOVE, None)
    assert caught.value.span_id == out.last.span_id
    assert out.last.attributes["replay.source"] == "miss" and s.outcome.misses == 1


def test_a_tool_declared_a_read_that_the_recording_holds_as_a_write_is_a_write() -> None:
    calls: list[Any] = []
    rec = recorded(1, "transfer", MOVE, {"status": "done"}, effect="write")
    s, out = session("loose", [rec], tools={"transfer": lambda **kw: calls.append(kw)}, reads={"transfer"},
                     allow_live=True)
    assert s.tool("transfer", MOVE, None) == {"status": "done"}
    with pytest.raises(RecordingExhausted):  # a write miss is never sent live, even with allow_live
        s.tool("transfer", MOVE, None)
    assert calls == [] and out.last.data["effect"] == "write" and s.outcome.live_calls == 0


def test_the_idempotency_key_is_the_given_one_else_the_arguments_string_one_redacted() -> None:
    s, _ = session("strict", [])
    for args, key in [({**MOVE, "idempotency_key": "k-1"}, None), ({**MOVE, "idempotency_key": 7}, None),
                      ({**MOVE, "idempotency_key": "k-2"}, "given"), (MOVE, "ada@example.com")]:
        with pytest.raises(WriteMismatch):
            s.tool("transfer", args, key)
    keys = [w["idempotency_key"] for w in s.outcome.writes]
    assert keys[:3] == ["k-1", None, "given"]
    assert keys[3].startswith("<EMAIL_")
    s, _ = session("strict", [], reads={"get"})  # a read's argument named so is only an argument
    with pytest.raises(Exception):  # noqa: B017 - an unrecorded read
        s.tool("get", {"idempotency_key": "k-1"}, None)
    assert s.outcome.writes == []


def test_a_write_repeating_an_idempotency_key_of_the_same_tool_is_a_duplicate_of_the_first() -> None:
    s, out = session("fixture", [], fixture=RecordedReadsFixture())
    s.tool("transfer", MOVE, "tx-1")
    s.tool("refund", MOVE, "tx-1")  # another tool: not a duplicate
    s.tool("transfer", {**MOVE, "amount": 5}, "tx-2")
    s.tool("transfer", MOVE, "tx-1")
    s.tool("transfer", MOVE, "tx-1")
    assert s.outcome.duplicate_writes == [
        {"tool": "transfer", "idempotency_key": "tx-1", "position": 4, "first_position": 1},
        {"tool": "transfer", "idempotency_key": "tx-1", "position": 5, "first_position": 1}]
    assert [sp.attributes.get("replay.duplicate_write_of") for sp in out.spans] == [None, None, None, 1, 1]
    assert [w["position"] for w in s.outcome.writes] == [1, 2, 3, 4, 5]
    s.tool("transfer", MOVE, None)  # no key: never a duplicate
    assert len(s.outcome.duplicate_writes) == 2


class Ledger(RecordedReadsFixture):
    """A fixture store that applies ``transfer`` to its balances, refuses an overdraft, and cannot apply others."""

    applies_writes = True

    def __init__(self) -> None:
        super().__init__()
        self.balances = {"A1": 500, "B2": 20}

    def call(self, tool: str, arguments: Any, *, write: bool) -> Any:
        assert write is True, "a write reaches the store as a write"
        if tool != "transfer":
            raise LookupError(tool)
        self.balances[arguments["src"]] -= arguments["amount"]
        if self.balances[arguments["src"]] < 0:
            raise ValueError(f"insufficient funds in {arguments['src']} (nickname=Bobby)")
        self.balances[arguments["dst"]] += arguments["amount"]
        return {"status": "done", "at": ("2026", "03"), "nickname": "Bobby Tables"}

    def state(self) -> Any:
        return {"balances": self.balances}


def test_a_fixture_write_is_applied_to_the_store_and_its_state_changes_are_attributed() -> None:
    s, out = session("fixture", [], fixture=Ledger(), sensitive={"transfer": ["nickname"]})
    got = s.tool("transfer", MOVE, "tx-1")
    assert got["at"] == ["2026", "03"] and got["nickname"].startswith("<SENSITIVE_")  # JSON, redacted
    got["at"].clear()
    span = out.last
    assert span.data["output"]["at"] == ["2026", "03"] and span.data["output_truncated"] is False
    assert (span.status, span.attributes) == (Status.OK, {
        "replay.intercepted": True, "replay.simulated": True, "replay.source": "fixture",
        "replay.write_intent": {"tool": "transfer", "idempotency_key": "tx-1", "position": 1}})
    by = {"position": 1, "tool": "transfer", "span_id": span.span_id}
    assert s.outcome.changes == [{"path": "state.balances.A1", "before": 500, "after": 380, "by": by},
                                 {"path": "state.balances.B2", "before": 20, "after": 140, "by": by}]
    assert s.outcome.writes == [intent(1, span.span_id, "fixture", "tx-1")]
    assert (s.outcome.notes, s.outcome.served, s.outcome.live_calls) == ([], 0, 0)


def test_a_write_the_fixture_cannot_apply_is_simulated_and_noted() -> None:
    s, out = session("fixture", [], fixture=Ledger())
    s.tool("transfer", MOVE, None)
    got = s.tool("refund", {"id": "T-1"}, None)
    assert got == {"status": "ok", "simulated": True, "intercepted": True}
    assert out.last.data["output"] == got and out.last.attributes["replay.source"] == "simulated"
    assert out.last.attributes["replay.simulated"] is True
    assert s.outcome.notes == ["write #2 refund: the fixture cannot apply it; a simulated success was returned and "
                               "the state is unchanged"]
    assert [w["source"] for w in s.outcome.writes] == ["fixture", "simulated"] and len(s.outcome.changes) == 2


def test_a_write_the_fixture_refuses_is_a_failed_span_its_partial_changes_kept_and_raised() -> None:
    s, out = session("fixture", [], fixture=Ledger(), sensitive={"transfer": ["nickname"]})
    with pytest.raises(ValueError, match=r"insufficient funds in A1 \(nickname=Bobby\)"):
        s.tool("transfer", {**MOVE, "amount": 900}, "tx-9")
    span = out.last
    assert (span.status, span.error_type) == (Status.ERROR, "ValueError")
    assert span.data["output"]["error_type"] == "ValueError"  # the message redacted by the tool's fields
    assert span.data["output"]["message"].startswith("insufficient funds in A1 (nickname=<SENSITIVE_")
    assert span.attributes == {"replay.intercepted": True, "replay.source": "fixture",
                               "replay.write_intent": {"tool": "transfer", "idempotency_key": "tx-9", "position": 1}}
    assert s.outcome.writes == [intent(1, span.span_id, "fixture", "tx-9", {**MOVE, "amount": 900})]
    assert s.outcome.changes == [{"path": "state.balances.A1", "before": 500, "after": -400,
                                  "by": {"position": 1, "tool": "transfer", "span_id": span.span_id}}]


# --- record mode --------------------------------------------------------------------------------------------------


def test_a_recorded_tool_call_is_live_its_output_redacted_in_the_span_only() -> None:
    def get(account: str) -> dict[str, Any]:
        return {"account": account, "nickname": "Bobby Tables", "at": ("2026",)}

    s, out = session("record", None, tools={"get": get}, reads={"get"}, sensitive={"get": ["nickname"]})
    got = s.tool("get", {"account": "A1"}, None)
    assert got == {"account": "A1", "nickname": "Bobby Tables", "at": ("2026",)}  # the agent's value, untouched
    assert s.outcome.live_calls == 1
    span = out.last
    assert span.data == {"tool_name": "get", "arguments": {"account": "A1"}, "args_hash": args_hash({"account": "A1"}),
                         "effect": "read", "mode": "live", "output": {"account": "A1", "nickname": span.data["output"]
                                                                      ["nickname"], "at": ["2026"]},
                         "output_truncated": False}
    assert span.data["output"]["nickname"].startswith("<SENSITIVE_")
    assert (span.status, span.attributes) == (Status.OK, {})
    assert s.outcome.path == [("get", args_hash({"account": "A1"}))]  # the call path, keyed by the arguments' hash
    s.tool("get", {"account": "B2"}, None)
    assert s.outcome.live_calls == 2


def test_a_recorded_tool_call_that_fails_is_a_failed_span_and_the_error_goes_to_the_agent() -> None:
    def get(account: str) -> Any:
        raise TimeoutError("slow for nickname=Bobby")

    s, out = session("record", None, tools={"get": get}, reads={"get"}, sensitive={"get": ["nickname"]})
    with pytest.raises(TimeoutError):
        s.tool("get", {"account": "A1"}, None)
    span = out.last
    assert (span.status, span.error_type, span.data["output_truncated"]) == (Status.ERROR, "TimeoutError", False)
    assert span.data["output"]["error_type"] == "TimeoutError"
    assert span.data["output"]["message"].startswith("slow for nickname=<SENSITIVE_")
    assert s.outcome.live_calls == 1


def test_a_recorded_retrieval_has_its_documents_and_no_output_truncated_field() -> None:
    def faq(query: str, top_k: int = 3, lang: str = "en") -> list[dict[str, Any]]:
        if query == "fail":
            raise KeyError("index down")
        return [{"id": "d1", "lang": lang}][:top_k]

    s, out = session("record", None, retrievers={"faq": faq})
    assert s.retrieve("faq", "limits", {"top_k": 1, "lang": "fr"}) == [{"id": "d1", "lang": "fr"}]
    assert out.last.data == {"index": "faq", "query": "limits", "top_k": 1, "params": {"lang": "fr"},
                             "documents": [{"id": "d1", "lang": "fr"}]}
    with pytest.raises(KeyError):
        s.retrieve("faq", "fail", {})
    assert out.last.data == {"index": "faq", "query": "fail",
                             "documents": {"error_type": "KeyError", "message": "'index down'"}}
    assert (out.last.kind, out.last.status, out.last.error_type) == (SpanKind.RETRIEVAL, Status.ERROR, "KeyError")


@pytest.mark.parametrize(("tools", "has"), [({"get": print, "add": print}, "add, get"), ({}, "none")])
def test_a_tool_the_agent_has_not_is_a_failed_span_and_a_harness_error(tools: dict[str, Any], has: str) -> None:
    s, out = session("record", None, tools=tools)
    with pytest.raises(HarnessError) as caught:
        s.tool("missing", {"a": 1}, None)
    assert str(caught.value) == f"the agent called tool 'missing', which TOOLS does not have (it has: {has})"
    span = out.last
    assert (span.kind, span.name, span.status, span.error_type) == (SpanKind.TOOL, "execute_tool missing",
                                                                    Status.ERROR, "HarnessError")
    assert span.data["output"] == {"error_type": "HarnessError", "message": str(caught.value)}
    assert s.outcome.live_calls == 0


@pytest.mark.parametrize(("retrievers", "has"), [({"faq": print, "docs": print}, "docs, faq"), ({}, "none")])
def test_an_index_the_agent_has_not_is_a_failed_retrieval_span(retrievers: dict[str, Any], has: str) -> None:
    s, out = session("record", None, retrievers=retrievers)
    with pytest.raises(HarnessError) as caught:
        s.retrieve("wiki", "q", {})
    assert str(caught.value) == f"the agent retrieved from index 'wiki', which RETRIEVERS does not have (it has: {has})"
    span = out.last
    assert (span.kind, span.name, span.status, span.error_type) == (SpanKind.RETRIEVAL, "retrieve wiki", Status.ERROR,
                                                                    "HarnessError")
    assert span.data == {"index": "wiki", "query": "q",
                         "documents": {"error_type": "HarnessError", "message": str(caught.value)}}


@pytest.mark.parametrize(("name", "args", "message"), [
    ("", {}, "ctx.tool: the tool name must be a non-empty string, not ''"),
    (7, {}, "ctx.tool: the tool name must be a non-empty string, not 7"),
    ("get", [1], "ctx.tool('get', ...): arguments must be a mapping of argument name to value (or one plain string), "
                 "not list")])
def test_a_tool_call_with_a_bad_name_or_arguments_is_refused_before_any_span(name: Any, args: Any,
                                                                              message: str) -> None:
    s, out = session("record", None, tools={"get": print})
    with pytest.raises(HarnessError) as caught:
        s.tool(name, args, None)
    assert str(caught.value) == message and out.spans == []


def test_a_tool_takes_no_arguments_as_none_and_one_plain_string_as_its_one_argument() -> None:
    seen: list[Any] = []
    s, out = session("record", None, tools={"ping": lambda: seen.append("none") or "pong",
                                            "echo": lambda text: seen.append(text) or text}, reads={"ping", "echo"})
    assert s.tool("ping", None, None) == "pong"
    assert out.last.data["arguments"] == {}
    assert s.tool("echo", "hello", None) == "hello"
    assert out.last.data["arguments"] == "hello" and seen == ["none", "hello"]


def test_a_tool_name_is_redacted_in_the_span_and_the_agents_registry_keeps_the_raw_name() -> None:
    s, out = session("record", None, tools={"mail ada@example.com": lambda: "sent"}, reads={"mail ada@example.com"})
    assert s.tool("mail ada@example.com", {}, None) == "sent"
    assert out.last.data["tool_name"].startswith("mail <EMAIL_")
    assert out.last.name == f"execute_tool {out.last.data['tool_name']}"
    assert out.last.data["effect"] == "read"


def test_arguments_are_written_redacted_by_the_tools_own_sensitive_fields_and_the_tool_gets_them_raw() -> None:
    seen: list[Any] = []
    s, out = session("record", None, tools={"get": lambda **kw: seen.append(kw) or "ok"}, reads={"get"},
                     sensitive={"get": ["nickname"]})
    s.tool("get", {"nickname": "Bobby Tables", "account": "A1"}, None)
    assert seen == [{"nickname": "Bobby Tables", "account": "A1"}]
    assert out.last.data["arguments"]["nickname"].startswith("<SENSITIVE_")
    assert out.last.data["args_hash"] == args_hash(out.last.data["arguments"])


def test_a_tool_on_the_read_list_by_its_written_name_is_a_read() -> None:
    """An ambient session lists read tools as written (redacted); the agent calls them by the raw name."""
    written = Redactor(KEY).text("mail ada@example.com")
    s, out = session("record", None, tools={"mail ada@example.com": lambda: "sent"}, reads={written})
    s.tool("mail ada@example.com", {}, None)
    assert out.last.data["effect"] == "read"


def test_a_write_of_one_plain_string_has_no_idempotency_key_from_its_arguments() -> None:
    s, out = session("fixture", [], fixture=RecordedReadsFixture())
    assert s.tool("note", "idempotency_key", None) == {"status": "ok", "simulated": True, "intercepted": True}
    assert s.outcome.writes[0]["idempotency_key"] is None and out.last.data["arguments"] == "idempotency_key"


def test_a_retrieval_is_written_redacted_and_the_retriever_gets_the_query_and_parameters_raw() -> None:
    seen: list[Any] = []

    def faq(query: str, **kw: Any) -> list[str]:
        seen.append((query, kw))
        return ["d1"]

    s, out = session("record", None, retrievers={"faq": faq})
    s.retrieve("faq", "limits for ada@example.com", {"owner": "bob@example.com", "top_k": 1})
    assert seen == [("limits for ada@example.com", {"owner": "bob@example.com", "top_k": 1})]
    assert out.last.data["query"].startswith("limits for <EMAIL_")
    assert out.last.data["params"]["owner"].startswith("<EMAIL_") and out.last.data["top_k"] == 1
    assert s.outcome.path[0][0] == "retrieval:faq"


def test_an_explicit_live_call_is_made_instead_of_the_agents_tool() -> None:
    s, _ = session("record", None, tools={"get": lambda: "registry"}, reads={"get"})
    assert s.tool("get", {}, None, live=lambda: "given") == "given"


def test_the_async_forms_await_an_async_tool_and_retriever_and_pass_the_idempotency_key() -> None:
    async def get(account: str) -> str:
        return f"balance of {account}"

    async def faq(query: str, top_k: int = 3) -> list[str]:
        return [query] * top_k

    s, out = session("record", None, tools={"get": get}, reads={"get"}, retrievers={"faq": faq})
    assert asyncio.run(s.atool("get", {"account": "A1"}, None)) == "balance of A1"
    assert asyncio.run(s.aretrieve("faq", "q", {"top_k": 2})) == ["q", "q"]
    assert out.last.data["documents"] == ["q", "q"]
    assert asyncio.run(s.atool("get", {}, None, live=lambda: "given")) == "given"
    s, _ = session("fixture", [], fixture=RecordedReadsFixture())
    asyncio.run(s.atool("transfer", MOVE, "tx-1"))
    assert s.outcome.writes[0]["idempotency_key"] == "tx-1"


def test_a_decision_is_written_with_its_value_and_options_redacted_and_returned_as_given() -> None:
    s, out = session("record", None)
    value = ("ada@example.com", 1)
    assert s.decide("notify", value, ("yes", "no")) is value
    span = out.last
    assert (span.kind, span.name, span.status) == (SpanKind.DECISION, "decision notify", Status.OK)
    assert span.data["decision"] == "notify" and span.data["options"] == ["yes", "no"]  # JSON: lists
    assert type(span.data["value"]) is list and type(span.data["options"]) is list
    assert span.data["value"][0].startswith("<EMAIL_") and span.data["value"][1] == 1
    s.decide("plain", True, None)
    assert out.last.data == {"decision": "plain", "value": True}


def test_spans_are_numbered_after_the_root_under_it_with_ids_from_the_seed_and_the_trace() -> None:
    s, out = session("record", None)
    for i in range(3):
        s.decide("d", i, None)
    assert [sp.seq for sp in out.spans] == [1, 2, 3]
    assert {sp.parent_id for sp in out.spans} == {s.root_id} and {sp.trace_id for sp in out.spans} == {"t" * 32}
    assert all(sp.start_ns < sp.end_ns for sp in out.spans)
    ids = [s.root_id] + [sp.span_id for sp in out.spans]
    assert len(set(ids)) == 4 and all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    again, out2 = session("record", None)
    for i in range(3):
        again.decide("d", i, None)
    assert [again.root_id] + [sp.span_id for sp in out2.spans] == ids  # the same seed and trace: the same ids
    assert session("record", None, seed=7)[0].root_id != s.root_id
    assert session("record", None, trace_id="u" * 32)[0].root_id != s.root_id
    assert session("record", None)[0].rng.random() == again.rng.random()
    assert session("record", None, seed=7)[0].rng.random() != session("record", None)[0].rng.random()


def test_a_replay_session_serves_llm_calls_frozen_by_default_and_counts_the_fields_a_foreign_one_lacks() -> None:
    """No ``llm_mode`` given: a replay serves the recorded answer (the agent has no MODEL to call); a foreign
    recording's call that lacks a param the replay sends is counted per field (the run report's note)."""
    messages = [{"role": "user", "content": "hi"}]
    rec = Span("rec1", "root", 1, SpanKind.LLM, "chat toy-1", 1, 2, Status.OK, None,
               {"model": "toy-1", "messages": messages, "output": {"role": "assistant", "content": "hello"}}, {})
    s, out = session("strict", [], tools={"get": lambda account: account})
    s.cassette = Cassette.from_trace(Trace([rec], header={}, format="otel-sdk-json"))
    raw, data = run_steps(s.llm_steps(messages, "toy-1", None, None, {"temperature": 0}))
    assert raw is None and data["output"] == {"role": "assistant", "content": "hello"}
    assert data["tool_schemas_hash"] == s.spec.tool_schema_hash() == out.last.data["tool_schemas_hash"]
    assert (s.llm_unchecked, s.outcome.llm_served, s.outcome.model_calls) == ({"params.temperature": 1}, 1, 0)
