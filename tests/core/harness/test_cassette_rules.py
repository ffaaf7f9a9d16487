"""The cassette's rules, one test each, on cassettes built from spans in the test (issue 25: mutation testing).

The harness tests reach the cassette through a whole record/replay; these pin what it decides on its own:
volatile-argument masking, the index (order, writes, foreign recordings and their redaction), LLM request
checks (``llm_request_differs``, ``llm_differences``, ``llm_unchecked``), the nearest-call hints, the reads
left unconsumed, and the exact wording of the notes a user reads.
"""

from __future__ import annotations

from typing import Any

from tracetui.core.canonical import args_hash
from tracetui.core.changes import ABSENT
from tracetui.core.harness.cassette import (
    VOLATILE,
    Cassette,
    _short,
    describe_calls,
    incomplete_reason,
    llm_key,
    mask_volatile,
    recorded_call,
    retrieval_arguments,
    unchecked_notes,
    unfinished,
    unservable,
)
from tracetui.core.model import Span, SpanKind, Status, Trace

V = VOLATILE


def sp(seq: int, kind: SpanKind, data: dict[str, Any], *, name: str = "", end: int | None = 1,
       status: Status = Status.OK, parent: str | None = "root", **kw: Any) -> Span:
    return Span(f"s{seq}", parent, seq, kind, name or f"{kind.value} {seq}", start_ns=0, end_ns=end,
                status=status, data=data, **kw)


def tool(seq: int, name: str, arguments: Any, output: Any = "ok", **data: Any) -> Span:
    return sp(seq, SpanKind.TOOL, {"tool_name": name, "arguments": arguments, "output": output, **data})


def llm(seq: int, **data: Any) -> Span:
    return sp(seq, SpanKind.LLM, {"output": {"role": "assistant", "content": "x"}, **data})


def trace(*spans: Span, schema: str = "tracetui/1", fmt: str = "tracetui", **header: Any) -> Trace:
    return Trace(list(spans), header={"schema": schema, **header}, format=fmt)


# --- volatile masking -------------------------------------------------------------------------------------------


def test_mask_volatile_replaces_each_path_present_and_names_only_those() -> None:
    args = {"meta": {"request_id": "r1", "keep": 1}, "items": [{"id": 1, "v": 1}, {"v": 2}, {"id": 3}],
            "tags": ["a", "b", "c"], "n": 5}
    paths = ["meta.request_id", "items[*].id", "tags[1]", "tags[-1]", "tags[3]", "tags[x]", "n.deeper",
             "absent", "meta.absent", "", "..meta..keep"]
    value, hit = mask_volatile(args, paths)
    assert value == {"meta": {"request_id": V, "keep": V}, "items": [{"id": V, "v": 1}, {"v": 2}, {"id": V}],
                     "tags": ["a", V, V], "n": 5}
    assert hit == ["meta.request_id", "items[*].id", "tags[1]", "tags[-1]", "..meta..keep"]


def test_mask_volatile_star_matches_every_key_and_a_later_item_alone_counts_as_present() -> None:
    value, hit = mask_volatile({"a": {"x": 1, "y": 2}, "l": [{"k": 0}, {"id": 9}]}, ["a.*", "l[*].id", "*"])
    assert value == {"a": V, "l": V}
    assert hit == ["a.*", "l[*].id", "*"]
    value, hit = mask_volatile({"l": [{"id": 9}, {"k": 0}]}, ["l[*].id"])
    assert (value, hit) == ({"l": [{"id": V}, {"k": 0}]}, ["l[*].id"])
    value, hit = mask_volatile({"l": [{"id": 1}, {"id": 2}]}, ["l[*].id"])
    assert value == {"l": [{"id": V}, {"id": V}]}


def test_mask_volatile_reads_arguments_recorded_as_json_text_and_leaves_them_alone_without_paths() -> None:
    value, hit = mask_volatile('{"id": "abc", "q": "x"}', ["id"])
    assert (value, hit) == ({"id": V, "q": "x"}, ["id"])
    value, hit = mask_volatile(["a", ["b", "c"]], ["[1][0]", "[-3]", "[2]"])
    assert (value, hit) == (["a", [V, "c"]], ["[1][0]"])
    args = '{"id": "abc"}'
    assert mask_volatile(args, []) == (args, [])
    assert mask_volatile(args, ["x"]) == ({"id": "abc"}, [])


def test_a_volatile_path_makes_calls_differing_there_share_a_key_in_recording_and_replay() -> None:
    c = Cassette.from_trace(trace(tool(1, "pay", {"amount": 5, "idem": "k1"})), {"pay": ["idem"]})
    key, hit = c.key("pay", {"amount": 5, "idem": "k2"})
    assert hit == ["idem"] and key == args_hash({"amount": 5, "idem": V})
    assert list(c.calls) == [("pay", key)]
    assert c.key("other", {"idem": "k2"}) == (args_hash({"idem": "k2"}), [])
    assert c.take("pay", key).arguments == {"amount": 5, "idem": "k1"} and c.take("pay", key) == 1


# --- the index ---------------------------------------------------------------------------------------------------


def test_from_trace_indexes_calls_in_seq_order_with_writes_and_skips_other_spans() -> None:
    spans = [tool(3, "send", {"to": "a"}, effect="write"), sp(0, SpanKind.AGENT, {}, parent=None),
             tool(1, "get", {"id": 1}), llm(2, model="m", messages=[{"role": "user", "content": "hi"}]),
             sp(4, SpanKind.RETRIEVAL, {"index": "docs", "query": "q", "top_k": 2, "documents": []}),
             llm(5, model="m", messages=[{"role": "user", "content": "hi"}]), tool(6, "get", {"id": 1})]
    c = Cassette.from_trace(trace(*spans))
    assert [r.span.seq for r in c.path] == [1, 3, 4, 6]
    assert [r.tool for r in c.path] == ["get", "send", "retrieval:docs", "get"]
    assert c.writes == {"send"}
    assert [s.seq for s in c.llm_order] == [2, 5]
    assert list(c.llm_calls) == [llm_key("m", [{"role": "user", "content": "hi"}])]
    assert [r.span.seq for r in c.calls[("get", args_hash({"id": 1}))]] == [1, 6]
    assert c.path[2].arguments == {"query": "q", "top_k": 2}
    assert c.foreign is False and c.incomplete is None
    assert c.llm_at(0) is c.llm_order[0] and c.llm_at(1).seq == 5
    assert c.llm_at(2) is None and c.llm_at(-1) is None


def test_a_foreign_recording_is_redacted_when_indexed_a_tracetui_one_is_not() -> None:
    seen: list[tuple[Any, Any]] = []

    def redact(value: Any, *, tool: Any = None) -> Any:
        seen.append((value, tool))
        return "R" if value == "secret" else value

    spans = [tool(1, "get", "secret"), sp(2, SpanKind.TOOL, {"arguments": "secret", "output": "o"}, name="named"),
             llm(3, model="secret"), sp(4, SpanKind.AGENT, {"output": "secret"})]
    c = Cassette.from_trace(trace(*spans, schema="other"), redact=redact)
    assert c.foreign is True
    assert [r.arguments for r in c.path] == ["R", "R"] and [r.tool for r in c.path] == ["get", "named"]
    assert ("secret", "get") in seen and ("secret", "named") in seen and ("secret", None) in seen
    assert spans[0].data["arguments"] == "secret"  # the trace is left as read
    assert c.llm_order[0].data["model"] == "R"
    assert all(v != {"output": "secret"} for v, _ in seen) and ("secret", None) in seen
    assert sum(1 for v, t in seen if v == "secret") == 3  # the agent span's output is not redacted
    own = Cassette.from_trace(trace(*spans), redact=redact)
    assert own.foreign is False and [r.arguments for r in own.path] == ["secret", "secret"]


def test_recorded_call_keys_tools_by_name_and_retrievals_by_index_query_and_params() -> None:
    assert recorded_call(tool(1, "get", {"a": 1})) == ("get", {"a": 1})
    assert recorded_call(sp(1, SpanKind.TOOL, {"arguments": [1]}, name="fallback")) == ("fallback", [1])
    r = sp(1, SpanKind.RETRIEVAL, {"index": "kb", "query": "q", "top_k": 3, "filters": {"f": 1},
                                   "params": {"lang": "en"}})
    assert recorded_call(r) == ("retrieval:kb", {"query": "q", "lang": "en", "top_k": 3, "filters": {"f": 1}})
    assert recorded_call(sp(1, SpanKind.RETRIEVAL, {"index": "kb", "query": "q"})) == ("retrieval:kb", {"query": "q"})
    assert recorded_call(llm(1)) is None
    assert retrieval_arguments("q", {"top_k": 1}) == {"query": "q", "top_k": 1}
    assert llm_key("m", [{"role": "tool", "tool_call_id": "a", "content": "x"}]) == llm_key(
        "m", [{"role": "tool", "tool_call_id": "b", "content": "x"}]) != llm_key("n", [])
    assert len(llm_key("m", [])) == 16


# --- LLM matching and request checks -----------------------------------------------------------------------------

MSG = [{"role": "user", "content": "hi"}]


def test_take_llm_serves_equal_calls_in_order_and_a_foreign_recording_on_the_fields_it_holds() -> None:
    own = Cassette.from_trace(trace(llm(1, model="m", messages=MSG), llm(2, model="m", messages=MSG)))
    assert own.take_llm("m", MSG).seq == 1 and own.take_llm("m", MSG).seq == 2 and own.take_llm("m", MSG) is None
    assert Cassette.from_trace(trace(llm(1, messages=MSG))).take_llm("m", MSG) is None
    foreign = Cassette.from_trace(trace(llm(1, messages=MSG), llm(2, model="m"), llm(3), llm(4, model="m",
                                                                                         messages=MSG), schema="x"))
    assert [foreign.take_llm("m", MSG).seq for _ in range(4)] == [4, 1, 2, 3]
    assert foreign.take_llm("m", MSG) is None


def test_llm_request_differs_compares_params_and_given_extras_whole_in_a_tracetui_recording() -> None:
    c = Cassette.from_trace(trace(llm(1, model="m", messages=MSG, params={"temperature": 0}, prompt_id="p1")))
    rec = c.llm_order[0]
    assert c.llm_request_differs(rec, {"temperature": 0}, {"prompt_id": "p1", "prompt_version": None}) is False
    assert c.llm_request_differs(rec, {"temperature": 1}, {}) is True
    assert c.llm_request_differs(rec, {"temperature": 0, "top_p": 1}, {}) is True
    assert c.llm_request_differs(rec, {}, {}) is True
    assert c.llm_request_differs(rec, {"temperature": 0}, {"prompt_id": "p2"}) is True
    assert c.llm_request_differs(rec, {"temperature": 0}, {"prompt_version": "v1"}) is True
    bare = Cassette.from_trace(trace(llm(1, model="m", params="not a mapping")))
    assert bare.llm_request_differs(bare.llm_order[0], {}, {}) is False


def test_llm_request_differs_in_a_foreign_recording_compares_only_what_it_holds() -> None:
    c = Cassette.from_trace(trace(llm(1, model="m", params={"temperature": 0, "seed": 1}, prompt_id="p1"),
                                  schema="x"))
    rec = c.llm_order[0]
    assert c.llm_request_differs(rec, {"temperature": 0, "top_p": 1}, {"prompt_version": "v2"}) is False
    assert c.llm_request_differs(rec, {}, {}) is False
    assert c.llm_request_differs(rec, {"seed": 2}, {}) is True
    assert c.llm_request_differs(rec, {"temperature": 0}, {"prompt_id": "p2"}) is True
    assert c.llm_request_differs(rec, {"temperature": 0}, {"prompt_id": None}) is False
    bare = Cassette.from_trace(trace(llm(1, params=[1]), schema="x"))
    assert bare.llm_request_differs(bare.llm_order[0], {"temperature": 1}, {}) is False


def test_llm_unchecked_names_the_request_fields_a_foreign_recording_does_not_hold() -> None:
    c = Cassette.from_trace(trace(llm(1, params={"temperature": 0}, prompt_id="p"), llm(2, model="m", messages=MSG,
                                                                                         params=[0]), schema="x"))
    a, b = c.llm_order
    assert c.llm_unchecked(a, "m", MSG, {"temperature": 0, "top_p": 1, "seed": 2},
                           {"prompt_id": "p", "prompt_version": "v", "other": None}) == [
        "model", "messages", "params.seed", "params.top_p", "prompt_version"]
    assert c.llm_unchecked(a, None, [], {}, {}) == []
    assert c.llm_unchecked(b, "m", MSG, {"t": 1}, {}) == ["params.t"]
    own = Cassette.from_trace(trace(llm(1)))
    assert own.llm_unchecked(own.llm_order[0], "m", MSG, {"t": 1}, {"prompt_id": "p"}) == []


def test_llm_differences_names_each_field_with_both_values() -> None:
    c = Cassette.from_trace(trace(llm(1, model="m", messages=MSG, params={"temperature": 0}, prompt_id="p1")))
    rec, diffs = c.llm_differences(0, "n", [{"role": "user", "content": "ho"}], {"temperature": 1},
                                   {"prompt_id": "p1", "prompt_version": "v2", "seed": None})
    assert rec is c.llm_order[0]
    assert diffs == ['model: "n" (recorded "m")', 'messages[0].content: "ho" (recorded "hi")',
                     "params.temperature: 1 (recorded 0)", 'prompt_version: "v2" (recorded absent)']
    assert c.llm_differences(0, "m", MSG, {"temperature": 0}, {"prompt_id": "p1"}) == (rec, [])
    assert c.llm_differences(0, "m", MSG, {"temperature": 0}, {"prompt_id": None}) == (
        rec, ['prompt_id: null (recorded "p1")'])
    assert c.llm_differences(1, "m", MSG, {}, {}) == (
        None, ["no recorded LLM call at this position (the recording has 1)"])
    no_params = Cassette.from_trace(trace(llm(1, model="m", messages=MSG)))
    assert no_params.llm_differences(0, "m", MSG, {"seed": 1}, {})[1] == ["params.seed: 1 (recorded absent)"]
    assert no_params.llm_differences(0, "m", MSG, {}, {})[1] == []


def test_llm_differences_in_a_foreign_recording_skips_the_fields_it_does_not_hold() -> None:
    c = Cassette.from_trace(trace(llm(1, params={"temperature": 0, "seed": 1}, prompt_id="p1"), schema="x"))
    rec, diffs = c.llm_differences(0, "n", MSG, {"temperature": 1, "top_p": 1}, {"prompt_id": "p2", "v": "x"})
    assert diffs == ["params.temperature: 1 (recorded 0)", 'prompt_id: "p2" (recorded "p1")']
    c2 = Cassette.from_trace(trace(llm(1, model="m", messages=MSG, params=[1]), schema="x"))
    assert c2.llm_differences(0, "n", [{"role": "user", "content": "ho"}], {"t": 1}, {})[1] == [
        'model: "n" (recorded "m")', 'messages[0].content: "ho" (recorded "hi")']


def test_unchecked_notes_words_the_fields_and_counts_in_name_order() -> None:
    rec = trace(fmt="otel-sdk-json")
    assert unchecked_notes({}, rec) == []
    assert unchecked_notes({"params.stream": 3, "model": 1}, rec) == [
        "LLM request fields the recording (otel-sdk-json) does not hold, not compared: model (1 call), "
        "params.stream (3 calls)"]
    assert unchecked_notes({"x": 2}, None) == [
        "LLM request fields the recording (foreign) does not hold, not compared: x (2 calls)"]


# --- nearest calls, unconsumed reads ------------------------------------------------------------------------------


def test_nearest_ranks_same_tool_by_fewest_differences_then_other_names_by_edit_distance() -> None:
    c = Cassette.from_trace(trace(
        tool(1, "get", {"a": 1, "b": 2}), tool(2, "get", {"a": 9, "b": 9}), tool(3, "gets", {"a": 1, "b": 2}),
        tool(4, "fetch_all", {"a": 1, "b": 2}), tool(5, "get", {"a": 1, "b": 3})))
    c.take("get", args_hash({"a": 1, "b": 3}))
    near = c.nearest("get", {"a": 1, "b": 2, "c": 0}, limit=4)
    assert [(e["tool"], e["arguments"]) for e in near] == [
        ("get", {"a": 1, "b": 2}), ("get", {"a": 1, "b": 3}), ("get", {"a": 9, "b": 9}), ("gets", {"a": 1, "b": 2})]
    assert near[0] == {"tool": "get", "arguments": {"a": 1, "b": 2}, "recorded": 1, "served": 0,
                       "differs": ["arguments.c: 0 (recorded absent)"]}
    assert near[1]["served"] == 1 and near[1]["differs"] == ["arguments.b: 2 (recorded 3)",
                                                             "arguments.c: 0 (recorded absent)"]
    assert near[3]["differs"] == ["tool name: get (recorded gets)", "arguments.c: 0 (recorded absent)"]
    assert len(c.nearest("get", {})) == 3
    # "fetch": 3 edits from get and gets, 4 from fetch_all; equal names ranked by fewest differing fields
    other = c.nearest("fetch", {"a": 1, "b": 2}, limit=5)
    assert [(e["tool"], len(e["differs"])) for e in other] == [
        ("get", 1), ("gets", 1), ("get", 2), ("get", 3), ("fetch_all", 1)]


def test_nearest_compares_a_write_with_recorded_writes_and_a_read_with_reads() -> None:
    c = Cassette.from_trace(trace(tool(1, "send", {"to": "a"}, effect="write"), tool(2, "sand", {"to": "a"}),
                                  tool(3, "post", {"to": "a"}, effect="write")))
    assert [e["tool"] for e in c.nearest("send", {"to": "b"}, writes=True)] == ["send", "post"]
    assert [e["tool"] for e in c.nearest("sand", {"to": "b"})] == ["sand"]
    assert [e["tool"] for e in c.nearest("send", {"to": "b"})] == ["send", "sand"]
    only_writes = Cassette.from_trace(trace(tool(1, "send", {}, effect="write")))
    assert [e["tool"] for e in only_writes.nearest("read", {})] == ["send"]


def test_describe_calls_gives_one_line_per_call_with_what_differs_or_the_counts() -> None:
    entries = [{"tool": "get", "arguments": {"d": "x" * 100}, "recorded": 1, "served": 0, "differs": ["a", "b"]},
               {"tool": "get", "arguments": [], "recorded": 1, "served": 1, "differs": []},
               {"tool": "put", "arguments": {}, "recorded": 2, "served": 0, "differs": []}]
    assert describe_calls(entries) == (
        '  get {"d":"' + "x" * 73 + "…: a; b\n"
        "  get []: the same tool and arguments (recorded 1 time, 1 served)\n"
        "  put {}: the same tool and arguments (recorded 2 times, 0 served)")
    assert describe_calls([]) == ""


def test_short_cuts_at_the_limit_with_an_ellipsis_and_names_absent() -> None:
    assert _short(ABSENT) == "absent"
    assert _short("x" * 58) == '"' + "x" * 58 + '"'
    assert _short("x" * 59) == '"' + "x" * 58 + "…"
    assert _short({1, 2}) == repr({1, 2})
    assert _short([1, 2], limit=4) == "[1,…"


def test_unconsumed_lists_unserved_reads_in_seq_order() -> None:
    c = Cassette.from_trace(trace(
        tool(5, "get", {"id": 2}), tool(1, "get", {"id": 1}), tool(2, "send", {}, effect="write"),
        sp(3, SpanKind.RETRIEVAL, {"index": "kb", "query": "q", "documents": []}), tool(4, "log", {})))
    c.take("get", args_hash({"id": 1}))
    assert c.unconsumed() == [
        {"tool": "retrieval:kb", "arguments": {"query": "q"}, "span_id": "s3", "seq": 3},
        {"tool": "log", "arguments": {}, "span_id": "s4", "seq": 4},
        {"tool": "get", "arguments": {"id": 2}, "span_id": "s5", "seq": 5}]
    assert [e["tool"] for e in c.unconsumed(lambda name: name in ("send", "get"))] == ["send", "retrieval:kb", "get"]
    assert c.exhausted() is False
    c.reset()
    assert len(c.unconsumed()) == 4 and c.take("get", args_hash({"id": 1})) is c.path[0]


# --- recordings that cannot be served, recordings that end early -------------------------------------------------


def test_unfinished_is_no_end_no_output_and_no_error() -> None:
    assert unfinished(sp(1, SpanKind.TOOL, {}, end=None)) is True
    assert unfinished(sp(1, SpanKind.TOOL, {"output": "o"}, end=None)) is False
    assert unfinished(sp(1, SpanKind.TOOL, {}, end=5)) is False
    assert unfinished(sp(1, SpanKind.TOOL, {}, end=None, status=Status.ERROR)) is False
    assert unfinished(sp(1, SpanKind.RETRIEVAL, {"output": "o"}, end=None)) is True
    assert unfinished(sp(1, SpanKind.RETRIEVAL, {"documents": []}, end=None)) is False
    c = Cassette.from_trace(trace(sp(1, SpanKind.TOOL, {"tool_name": "t", "arguments": {}}, end=None)))
    assert c.path[0].unfinished is True and c.exhausted() is True


def test_incomplete_reason_names_the_unfinished_call_or_the_missing_root() -> None:
    root = sp(0, SpanKind.AGENT, {}, parent=None)
    cut = sp(2, SpanKind.LLM, {}, end=None, name="chat m")
    assert incomplete_reason(trace(root, sp(3, SpanKind.TOOL, {}, end=None), cut)) == (
        "span s2 (chat m) was started but never finished (no output, no end time)")
    assert incomplete_reason(trace(sp(1, SpanKind.OTHER, {}, end=None), root)) is None
    no_root = "the recording has no root span: its run did not end (the recorder was stopped mid-run)"
    assert incomplete_reason(trace(tool(1, "t", {}), record_mode="record")) == no_root
    assert incomplete_reason(trace(sp(0, SpanKind.AGENT, {}), record_mode="record")) == no_root  # not a root
    assert incomplete_reason(trace(sp(0, SpanKind.TOOL, {}, parent=None), record_mode="record")) == no_root
    assert incomplete_reason(trace(root, record_mode="record")) is None
    assert incomplete_reason(trace(tool(1, "t", {}))) is None
    assert incomplete_reason(trace(tool(1, "t", {}), schema="x", record_mode="record")) is None
    assert Cassette.from_trace(trace(cut)).incomplete.startswith("span s2 (chat m)")


def test_unservable_names_truncation_and_ambiguous_arguments() -> None:
    assert unservable(tool(1, "t", {}, output="o", output_truncated=True)) == (
        "its recorded output is truncated (output_truncated: true)")
    assert unservable(tool(1, "t", {}, output="o", output_truncated="yes")) is None
    assert unservable(tool(1, "t", {}, output='{"a": [1, 2')) == (
        "its recorded output looks truncated (JSON cut mid-value (11 characters; the parser reached the end of input))")
    assert unservable(sp(1, SpanKind.RETRIEVAL, {"output": '{"a": [1, 2', "documents": ["d"]})) is None
    assert unservable(sp(1, SpanKind.RETRIEVAL, {"documents": '{"a": [1, 2'})) is not None
    dup = tool(1, "t", {}, output="o")
    dup.attributes = {"tracetui.duplicate_keys": "a: 1 then 2"}
    assert unservable(dup) == (
        "its recorded arguments are ambiguous (the same key twice with different values: a: 1 then 2)")
    c = Cassette.from_trace(trace(dup))
    assert c.path[0].unservable() == unservable(dup)


# --- added for the survivors of the first run with the tests above (tests/mutation_equivalents.md) ----------------


def test_the_cassette_keeps_the_trace_it_was_built_from() -> None:
    t = trace(tool(1, "get", {}))
    assert Cassette.from_trace(t).trace is t


def test_mask_volatile_takes_brackets_only_around_a_whole_step_and_list_indexes_only_in_range() -> None:
    assert mask_volatile({"x]": 1, "": 2}, ["x]"]) == ({"x]": V, "": 2}, ["x]"])
    assert mask_volatile({"l": [1, 2]}, ["l[X1]", "l[-X]"]) == ({"l": [1, 2]}, [])
    assert mask_volatile({"l": [1, 2, 3]}, ["l[-3]"]) == ({"l": [V, 2, 3]}, ["l[-3]"])
    assert mask_volatile({"l": [1, 2, 3]}, ["l[-4]"]) == ({"l": [1, 2, 3]}, [])


def test_llm_checks_compare_json_types_not_python_equality() -> None:
    """1 and True, 1 and 1.0 are different JSON values (``1 == True`` is Python's rule, not JSON's)."""
    c = Cassette.from_trace(trace(llm(1, model=1, messages=MSG, params={"temperature": 1}, prompt_version=1)))
    assert c.llm_differences(0, True, MSG, {"temperature": 1.0}, {"prompt_version": 1.0})[1] == [
        "model: true (recorded 1)", "params.temperature: 1.0 (recorded 1)", "prompt_version: 1.0 (recorded 1)"]
    n = Cassette.from_trace(trace(tool(1, "get", {"n": 1})))
    assert n.nearest("get", {"n": True})[0]["differs"] == ["arguments.n: true (recorded 1)"]


def test_llm_differences_drops_provider_tool_call_ids_and_names_fields_never_recorded_as_absent() -> None:
    recorded = [{"role": "tool", "tool_call_id": "call_a", "content": "x"}]
    c = Cassette.from_trace(trace(llm(1, model="m", messages=recorded)))
    assert c.llm_differences(0, "m", [{"role": "tool", "tool_call_id": "call_b", "content": "x"}], {}, {})[1] == []
    bare = Cassette.from_trace(trace(llm(1)))
    assert bare.llm_differences(0, "m", MSG, {}, {})[1] == [
        'model: "m" (recorded absent)', "messages: " + _short(MSG) + " (recorded absent)"]


def test_a_foreign_llm_call_is_checked_on_the_extras_it_holds_equal_and_unequal() -> None:
    c = Cassette.from_trace(trace(llm(1, prompt_id="p1"), llm(2, model="m", params={"seed": 1}), schema="x"))
    first, second = c.llm_order
    assert c.llm_request_differs(first, {}, {"prompt_id": "p1"}) is False
    assert c.llm_request_differs(first, {}, {"prompt_id": "p2"}) is True
    assert c.llm_unchecked(first, "m", MSG, {"seed": 1}, {}) == ["model", "messages", "params.seed"]
    assert c.llm_unchecked(second, "m", MSG, {"seed": 1}, {}) == ["messages"]


def test_an_output_of_an_exporter_caps_length_is_unservable() -> None:
    why = unservable(tool(1, "t", {}, output="a" * 1024))
    assert why is not None and why.startswith("its recorded output looks truncated (1,024 characters, a known "
                                              "exporter cap")
    assert unservable(tool(1, "t", {}, output="a" * 1023)) is None
