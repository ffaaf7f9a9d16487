"""Step 1 of triage, rule by rule (tracetui.core.triage.replayability): for each finding, the span, the field,
the severity and the words a user reads (reason and workaround), single and grouped; the order of the findings.

Written from the rules, to pin what the mutation run of ``replayability.py`` found unpinned
(tests/mutation_equivalents.md, "core/triage/replayability.py"). The rules themselves: the module docstring and
docs/triage.md, "Step 1: replayability".
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
from builders import TraceBuilder, make_span

from tracetui.core.model import Trace
from tracetui.core.readers.tree import MISSING_PARENT, NOT_CAPTURED
from tracetui.core.triage.replayability import Finding, assess

T0 = 1_762_161_242_118_000_000  # TraceBuilder's first span
GOOD = {"schema": "tracetui/1", "run_id": "r1", "start_ns": T0, "clock": {"now": "2025-11-03T09:14:02+00:00"},
        "prompt_versions": {"support.system": "v5"}, "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc"}
FULL = orjson.dumps({"orders": [{"id": f"o{i}", "status": "delivered"} for i in range(150)]}).decode()
UUID = "3f0b9a4e-2c1d-4e8f-9a7b-1c2d3e4f5a6b"
NOT_CAPTURED_DEFAULT = "content capture was off or the content was stripped before the file was written"


def run(*steps: tuple[str, str, dict[str, Any]], header: Any = None) -> Trace:
    """An agent root, then (kind, name, fields) spans under it; a header that leaves nothing to find by default."""
    b = TraceBuilder()
    root = b.add("agent", "support", input={"q": "where is my order"})
    for kind, name, fields in steps:
        b.add(kind, name, parent=root, **fields)
    t = b.trace()
    t.header = dict(GOOD) if header is None else header
    return t


def llm(**kw: Any) -> tuple[str, str, dict[str, Any]]:
    fields = {"model": "gpt-4o", "prompt_version": "v5", "messages": [{"role": "user", "content": "hi"}],
              "output": {"role": "assistant", "content": "ok"}, "tool_schemas_hash": "abc"}
    return ("llm", "chat", {**fields, **kw})


def tool(**kw: Any) -> tuple[str, str, dict[str, Any]]:
    return ("tool", "search_orders", {"arguments": {"q": "5531"}, "output": {"orders": []}, **kw})


def findings(trace: Trace, code: str) -> list[Finding]:
    return [f for f in assess(trace).findings if f.code == code]


# --------------------------------------------------------------------------- no spans, no header
def test_a_run_without_spans_is_not_replayable_and_says_why() -> None:
    rep = assess(Trace(spans=[], header=dict(GOOD), format="test"))
    assert rep.verdict == "not_replayable"
    assert rep.findings == [Finding(None, "no_spans", "not_replayable", "the run holds no spans (only a header): "
                                    "nothing was recorded, or the file was cut", "spans")]


def test_a_header_that_is_not_an_object_is_read_as_empty() -> None:
    rep = assess(run(header=["not", "a", "header"]))
    assert [(f.code, f.field) for f in rep.findings] == [("no_clock", "header.clock")]


# --------------------------------------------------------------------------- what counts as content
def _messages_finding(messages: Any) -> list[tuple[str, str | None, str]]:
    """The findings on an llm span holding ``messages`` and an answer."""
    return [(f.code, f.field, f.severity) for f in assess(run(llm(messages=messages))).findings]


NO_MESSAGES = [("missing_field", "llm.messages", "partial")]


def test_messages_with_text_tool_calls_or_a_later_message_with_text_are_content() -> None:
    assert _messages_finding([{"role": "system", "content": ""}, {"role": "user", "content": "hi"}]) == []
    assert _messages_finding([{"role": "assistant", "tool_calls": [{"id": "c1", "name": "get"}]}]) == []
    assert _messages_finding({"role": "user", "content": "hi"}) == []
    assert _messages_finding(["a plain string message"]) == []


def test_messages_with_only_a_role_a_name_and_a_call_id_are_no_content() -> None:
    assert _messages_finding([{"role": "user", "content": ""}]) == NO_MESSAGES
    assert _messages_finding([{"role": "tool", "name": "search", "tool_call_id": "c1", "content": None}]) == NO_MESSAGES
    assert _messages_finding([{"role": "user", "content": []}, {"role": "user", "content": {}}]) == NO_MESSAGES
    for empty in ("", [], {}, [[], ""]):
        assert _messages_finding(empty) == NO_MESSAGES, empty


def test_an_answer_in_words_is_content_whatever_it_says() -> None:
    # no messages, an answer mentioning a role: the answer is there, only the input check is lost
    assert [(f.code, f.field) for f in assess(run(llm(messages=None, output="your role is admin"))).findings] == [
        ("missing_field", "llm.messages")]


# --------------------------------------------------------------------------- content not captured
def test_content_not_captured_names_what_is_missing_for_each_kind_and_why() -> None:
    why = "the Agents SDK exports only the response id"
    rep = assess(run(tool(arguments=None, output=None),
                     llm(messages=None, output=None, attributes={NOT_CAPTURED: why}),
                     ("memory", "recall", {"attributes": {NOT_CAPTURED: why}}),
                     tool(attributes={NOT_CAPTURED: ""}, arguments=None, output=None)))
    got = [(f.span_id, f.field, f.severity, f.reason) for f in rep.findings]
    assert got == [
        ("s1", "tool.output", "not_replayable",
         "2 tool spans ('s1', 's4') carry no arguments or output: " + NOT_CAPTURED_DEFAULT),
        ("s2", "llm.messages", "not_replayable", f"llm span 's2' carries no messages or output: {why}"),
        ("s3", "memory.output", "not_replayable", f"memory span 's3' carries no content: {why}"),
    ]
    single = assess(run(tool(arguments=None, output=None))).findings
    assert [f.reason for f in single] == [f"tool span 's1' carries no arguments or output: {NOT_CAPTURED_DEFAULT}"]


# --------------------------------------------------------------------------- truncation
def test_a_truncated_tool_output_names_the_field_the_span_and_the_evidence() -> None:
    (f,) = findings(run(tool(output={"body": "the first part [TRUNCATED]"})), "truncated_output")
    assert (f.span_id, f.field, f.severity) == ("s1", "tool.output", "not_replayable")
    assert f.reason == ("tool.output of span 's1' looks truncated, at .body: carries the truncation marker "
                        "'[TRUNCATED]': a strict replay never serves a truncated value")
    (g,) = findings(run(llm(output={"role": "assistant", "content": "so far [TRUNCATED]"})), "truncated_output")
    assert g.reason == ("llm.output of span 's1' looks truncated, at .content: carries the truncation marker "
                        "'[TRUNCATED]': a strict replay never serves a truncated value")


def test_each_truncation_evidence_counts_in_tool_outputs_and_arguments() -> None:
    cut_json = FULL[:700]  # JSON cut mid-value, whatever its length
    words = "lorem ipsum dolor sit amet " * 200
    at_cap = words[:2048]  # an exporter's cap, ending mid-word
    for value, words_in_reason in ((cut_json, "JSON cut mid-value"), (at_cap, "2,048 characters"),
                                   ("first part [TRUNCATED]", "marker")):
        (f,) = findings(run(tool(output=value)), "truncated_output")
        assert (f.field, words_in_reason in f.reason) == ("tool.output", True), value[:40]
        (a,) = findings(run(tool(arguments=value)), "truncated_output")  # arguments recorded as text
        assert (a.field, words_in_reason in a.reason) == ("tool.arguments", True), value[:40]


def test_truncations_on_many_spans_are_grouped_quoting_the_first() -> None:
    rep = assess(run(tool(output="one [TRUNCATED]"), tool(output="two [TRUNCATED]")))
    (f,) = [f for f in rep.findings if f.code == "truncated_output"]
    assert f.span_id == "s1"
    assert f.reason.startswith("2 tool spans ('s1', 's2') have a tool.output that looks truncated; first: "
                               "tool.output of span 's1' looks truncated, ")
    assert rep.per_span == {"s1": "not_replayable", "s2": "not_replayable"}


def test_text_the_tool_cut_itself_is_not_truncation_in_later_prompts_either() -> None:
    cut = ("lorem ipsum dolor sit amet " * 40)[:1000] + "..."  # the tool's own cut: 1,000 characters and '...'
    seen = [{"role": "user", "content": "where?"}, {"role": "tool", "tool_call_id": "c1", "content": cut}]
    later = [*seen, {"role": "assistant", "content": "looking"}]
    rep = assess(run(tool(output=cut, call_id="c1"), llm(messages=seen), llm(messages=later)))
    assert rep.findings == [] and rep.verdict == "replayable"


# --------------------------------------------------------------------------- nondeterminism
def test_an_id_minted_at_run_time_says_to_seed_the_ids() -> None:
    (f,) = findings(run(tool(arguments={"idempotency_key": UUID})), "nondeterministic_argument")
    seed = "Seed the ids (the harness's ctx.new_id() with a header seed) or record them"
    assert (f.span_id, f.field, f.severity, f.workaround) == ("s1", "tool.arguments", "partial", seed)
    assert f.reason.startswith(f"tool.arguments of span 's1' (search_orders) hold {UUID!r}, ")
    assert f.reason.endswith(", that the agent did not read anywhere: minted at run time, it will not match on "
                             f"replay. {seed}")
    assert "UUID" in f.reason


def test_a_time_minted_at_run_time_says_to_freeze_the_clock_and_many_are_grouped() -> None:
    near = "2025-11-03T10:00:00Z"  # an hour after the run's start
    freeze = "Freeze the clock (header clock; the harness's ctx.now()) or pass the time in"
    (f,) = findings(run(tool(arguments={"at": near})), "nondeterministic_argument")
    assert (f.field, f.workaround) == ("tool.arguments", freeze)
    assert f.reason.endswith(f"minted at run time, it will not match on replay. {freeze}")
    (g,) = findings(run(tool(arguments={"at": near}), tool(arguments={"k": UUID})), "nondeterministic_argument")
    assert (g.span_id, g.field, g.workaround) == ("s1", "tool.arguments", freeze)
    assert g.reason.startswith("2 tool spans ('s1', 's2') hold random ids or now() values minted at run time, which "
                               "will not match on replay unless the clock and ids are seeded; first: "
                               "tool.arguments of span 's1' (search_orders) hold ")


# --------------------------------------------------------------------------- order
def test_findings_come_run_level_first_then_by_span_grouped_or_not() -> None:
    rep = assess(run(tool(arguments={"at": "2025-11-03T10:00:00Z"}), tool(arguments={"k": UUID}), tool(arguments=None),
                     header={**GOOD, "clock": {}}))
    assert [(f.code, f.span_id) for f in rep.findings] == [
        ("no_clock", None), ("nondeterministic_argument", "s1"), ("missing_field", "s3")]
    root = assess(run(header={**GOOD, "clock": {}}))  # nothing but the root span: still after the header
    b = TraceBuilder()
    b.add("agent", "support", input={"q": 1}, attributes={NOT_CAPTURED: "stripped"})
    t = b.trace()
    t.header = {**GOOD, "clock": {}}
    assert [(f.code, f.span_id) for f in assess(t).findings] == [("no_clock", None), ("content_not_captured", "s0")]
    assert [f.code for f in root.findings] == ["no_clock"]


# --------------------------------------------------------------------------- run level: clock and tool schemas
NO_CLOCK = ("header.clock.now is not recorded: the time the agent was given is unknown, so a replay cannot freeze its "
            "clock to it, and anything derived from now() (dates in prompts, 'today' in arguments) may differ")


def test_no_clock_offers_the_roots_start_time_or_says_there_is_none() -> None:
    (f,) = findings(run(header={**GOOD, "clock": {"now": ""}}), "no_clock")
    assert (f.span_id, f.field, f.severity, f.reason) == (None, "header.clock", "partial", NO_CLOCK)
    assert f.workaround == ("the root span's start time, 2025-11-03T09:14:02.118Z (inferred), stands for the clock: "
                            "replay with that clock")
    b = TraceBuilder()
    b.add("agent", "support")
    timeless = b.trace()
    timeless.spans[0].start_ns = timeless.spans[0].end_ns = None
    timeless.header = {**GOOD, "clock": None}
    (g,) = findings(timeless, "no_clock")
    assert (g.reason, g.workaround) == (NO_CLOCK, "none: no span has a start time; give the replay a clock by hand")


NO_HASH = ("no tool-schema hash is recorded (neither header.tool_schema_hash nor llm.tool_schemas_hash): a replay "
           "cannot tell whether the recording was made against the tool schemas the agent exposes now")


def test_no_tool_schema_hash_offers_the_tools_shown_to_the_model_or_says_there_are_none() -> None:
    bare = {**GOOD, "tool_schema_hash": None}
    (f,) = findings(run(llm(tool_schemas_hash=None), tool(), llm(tool_schemas_hash=None, tools=[{"name": "a"},
                                                                                                {"name": "b"}]),
                        header=bare), "no_tool_schema_hash")
    assert (f.span_id, f.field, f.severity, f.reason) == (None, "header.tool_schema_hash", "partial", NO_HASH)
    assert f.workaround == "the 2 tool definitions offered to the model (llm span 's3') stand for the hash"
    (g,) = findings(run(llm(tool_schemas_hash=None), tool(), header=bare), "no_tool_schema_hash")
    assert g.workaround == ("none recorded: the tools offered to the model are not in the trace; a schema change "
                            "shows only as calls that no longer match")


def test_a_hash_that_is_not_text_is_no_hash() -> None:
    odd = {**GOOD, "tool_schema_hash": 5}
    assert [f.code for f in assess(run(llm(tool_schemas_hash=7), tool(), header=odd)).findings] == ["no_tool_schema_hash"]
    assert findings(run(tool(), header={**GOOD, "tool_schema_hash": None}), "no_tool_schema_hash") != []
    assert findings(run(llm(tool_schemas_hash=None), header={**GOOD, "tool_schema_hash": None}),
                    "no_tool_schema_hash") == []  # no tool called: nothing to match


def test_hashes_changing_during_the_run_name_the_first_two_in_span_order() -> None:
    rep = assess(run(llm(tool_schemas_hash="zz"), llm(tool_schemas_hash="aa"), llm(tool_schemas_hash="mm"),
                     header={**GOOD, "tool_schema_hash": None}))
    (f,) = rep.findings
    assert (f.code, f.span_id, f.field, f.severity) == ("tool_schema_changed", "s2", "llm.tool_schemas_hash", "partial")
    assert f.reason == ("the llm spans of this run saw 3 different tool-schema hashes ('zz' from span 's1', 'aa' from "
                        "span 's2'): the tools changed during the run, so one recording cannot serve every call")
    assert f.workaround == "compare each call with the schema its own llm span saw"


def test_a_recording_against_other_schemas_than_the_agents_names_where_its_hash_was_read() -> None:
    changed = assess(run(tool()), tool_schema_hash="def").findings  # GOOD's header hash is "abc"
    assert [(f.span_id, f.field, f.severity, f.workaround) for f in changed] == [
        (None, "header.tool_schema_hash", "partial", "judge the schema change first: it is a config change")]
    assert changed[0].reason == ("the recording was made against tool schemas 'abc' (header.tool_schema_hash) and the "
                                 "agent now exposes 'def': recorded calls may no longer match the tools' contracts; "
                                 "re-record, or check the schema change first")
    per_llm = assess(run(llm(tool_schemas_hash="h1"), tool(), header={**GOOD, "tool_schema_hash": None}),
                     tool_schema_hash="h2").findings
    assert [(f.field, "tool schemas 'h1' (llm.tool_schemas_hash)" in f.reason) for f in per_llm] == [
        ("llm.tool_schemas_hash", True)]
    assert assess(run(llm(tool_schemas_hash="h1"), header={**GOOD, "tool_schema_hash": None}),
                  tool_schema_hash="h1").findings == []


# --------------------------------------------------------------------------- spans missing
def _seqs(*seqs: int, **attributes_by_id: dict[str, Any]) -> Trace:
    spans = [make_span("agent", f"x{q}", span_id=f"x{q}", parent_id=None if i == 0 else "x" + str(seqs[0]), seq=q,
                       attributes=attributes_by_id.get(f"x{q}", {})) for i, q in enumerate(seqs)]
    return Trace(spans=spans, header=dict(GOOD), format="test")


LOST = ": lines were lost (skipped as unreadable, dropped by a collector, or never written)"


def test_a_gap_in_seq_names_how_many_spans_and_where_the_first_gap_is() -> None:
    (f,) = findings(_seqs(0, 2, 3), "seq_gap")
    assert (f.span_id, f.field, f.severity) == ("x2", None, "not_replayable")
    assert f.reason == "1 span missing from the seq order: 1 between seq 0 and span 'x2' (seq 2)" + LOST
    (g,) = findings(_seqs(1, 2, 3), "seq_gap")  # seq counts from 0: the first span is missing
    assert g.reason == "1 span missing from the seq order: 1 between the start and span 'x1' (seq 1)" + LOST
    rep = assess(_seqs(0, 3, 4, 6, 9))
    (h,) = [f for f in rep.findings if f.code == "seq_gap"]
    assert h.reason == ("5 spans missing from the seq order: 2 between seq 0 and span 'x3' (seq 3), and 2 more gaps"
                        + LOST)
    assert rep.per_span == {"x3": "not_replayable", "x6": "not_replayable", "x9": "not_replayable"}
    (one_more,) = findings(_seqs(0, 2, 4), "seq_gap")
    assert one_more.reason.endswith("(seq 2), and 1 more gap" + LOST)
    assert findings(_seqs(0, 1, 2), "seq_gap") == []


ORPHAN = ("span {sid!r} names parent 'gone', which is not in the trace: the parent span was never recorded, sits in "
          "another file, or the file is incomplete")


def test_orphans_name_the_parent_they_lost_grouped_when_many() -> None:
    lost = {MISSING_PARENT: "gone"}
    (f,) = findings(_seqs(0, 1, x1=lost), "orphan_span")
    assert (f.span_id, f.field, f.severity, f.reason) == ("x1", None, "not_replayable", ORPHAN.format(sid="x1"))
    (g,) = findings(_seqs(0, 1, 2, x1=lost, x2=lost), "orphan_span")
    assert (g.span_id, g.reason) == ("x1", "2 agent spans ('x1', 'x2') name a parent that is not in the trace: spans "
                                           "are missing; first: " + ORPHAN.format(sid="x1"))
    # a parent flagged remote lives in another service's trace: a root here
    assert findings(_seqs(0, 1, x1={**lost, "otel.flags": 0x300}), "orphan_span") == []


UNCLOSED = ("span {sid!r} ({what}) started but never closed (no end_ns) while other spans of the run did: its end, and "
            "what it returned, were never recorded (a crash, a kill, or a file still being written)")


def _open(native: bool, *open_ids: str) -> Trace:
    """root s0 > parent s1 > leaf s2, and a closed sibling s3; the spans named stay open."""
    b = TraceBuilder()
    root = b.add("agent", "support")
    parent = b.add("agent", "step", parent=root)
    b.add("tool", "search", parent=parent, arguments={}, output=[])
    b.add("tool", "get", parent=root, arguments={}, output=[])
    t = b.trace()
    for s in t.spans:
        if s.span_id in open_ids:
            s.end_ns = None
    t.header = dict(GOOD)
    t.format = "tracetui" if native else "test"
    return t


def test_an_open_root_or_parent_is_unclosed_an_open_leaf_only_in_a_native_file() -> None:
    (f,) = findings(_open(False, "s0"), "unclosed_span")
    assert (f.span_id, f.field, f.severity, f.reason) == ("s0", "end_ns", "not_replayable",
                                                          UNCLOSED.format(sid="s0", what="the run's root"))
    (g,) = findings(_open(False, "s1"), "unclosed_span")
    assert g.reason == UNCLOSED.format(sid="s1", what="a parent")
    assert findings(_open(False, "s2"), "unclosed_span") == []  # a point event in a foreign file
    (h,) = findings(_open(True, "s2"), "unclosed_span")
    assert h.reason == UNCLOSED.format(sid="s2", what="the span")
    (grouped,) = findings(_open(False, "s0", "s1"), "unclosed_span")
    assert grouped.reason == ("2 agent spans ('s0', 's1') started but never closed while the run went on: their ends, "
                              "and what they returned, were never recorded")
    # a source that records no end time at all: nothing tells an open span from a point event
    assert findings(_open(True, "s0", "s1", "s2", "s3"), "unclosed_span") == []


# --------------------------------------------------------------------------- fields a replay needs, per span kind
def _one(trace: Trace, field: str) -> Finding:
    (f,) = [f for f in assess(trace).findings if f.field == field]
    return f


def test_a_tool_call_without_arguments_cannot_be_matched() -> None:
    f = _one(run(tool(arguments=None)), "tool.arguments")
    assert (f.span_id, f.code, f.severity) == ("s1", "missing_field", "not_replayable")
    assert f.reason == "tool span 's1' (search_orders) has no tool.arguments: a replay cannot match the call to its recording"
    g = _one(run(tool(arguments=None), tool(arguments=None)), "tool.arguments")
    assert g.reason == ("2 tool spans ('s1', 's2') have no tool.arguments: a replay cannot match these calls to their "
                        "recording")


def test_a_tool_output_missing_before_a_decision_blocks_after_the_last_llm_call_it_weakens() -> None:
    f = _one(run(tool(output=None), llm()), "tool.output")
    assert (f.span_id, f.code, f.severity, f.workaround) == ("s1", "missing_field", "not_replayable", None)
    assert f.reason == ("tool span 's1' (search_orders) has no tool.output and did not fail: a replay has nothing to "
                        "serve for the call")
    g = _one(run(tool(output=None), tool(output=None), llm()), "tool.output")
    assert g.reason == ("2 tool spans ('s1', 's2') have no tool.output and did not fail: a replay has nothing to serve "
                        "for these calls")
    late = _one(run(llm(), tool(output=None)), "tool.output")
    assert (late.severity, late.workaround) == ("partial", "none needed for the verdict: no decision read it")
    assert late.reason == ("tool span 's2' (search_orders) has no tool.output; no llm call came after it, so no decision "
                           "read it, but a replay cannot serve it either")
    assert _one(run(llm(), tool(output=None), tool(output=None)), "tool.output").reason == (
        "2 tool spans ('s2', 's3') have no tool.output, after the last llm call")
    # a failed call may have no output
    assert assess(run(tool(output=None, status="error"), llm())).findings == []


def test_a_native_file_that_wrote_output_null_recorded_an_empty_output() -> None:
    t = run(tool(output=None), llm())
    t.format = "tracetui"
    assert assess(t).findings == []
    t.spans[1].data.pop("output")
    assert [f.field for f in assess(t).findings] == ["tool.output"]


def test_the_recorders_truncation_flag_is_its_own_finding() -> None:
    f = _one(run(tool(output_truncated=True)), "tool.output")
    assert (f.code, f.severity) == ("truncated_output", "not_replayable")
    assert f.reason == ("tool span 's1': tool.output_truncated is true, the recorder could not store the output whole; "
                        "a strict replay never serves a truncated output")
    g = _one(run(tool(output_truncated=True), tool(output_truncated=True)), "tool.output")
    assert g.reason == ("2 tool spans ('s1', 's2') have tool.output_truncated true: the recorder could not store their "
                        "outputs whole, and a strict replay never serves a truncated output")
    assert assess(run(tool(output_truncated=False))).findings == []


def test_an_llm_output_attribute_the_reader_could_not_read_is_a_lost_answer() -> None:
    raw = '{"role": "assistant", "content": "ok", "extra": tru'  # JSON cut mid-value
    lost = "not messages at all"
    f = _one(run(llm(output=None, attributes={"gen_ai.output.messages": lost})), "llm.output")
    assert (f.code, f.severity) == ("missing_field", "not_replayable")
    assert f.reason == (f"llm span 's1': its output attribute ({len(lost):,} characters) could not be read as messages: "
                        "the answer the model gave is lost")
    g = _one(run(llm(output=None, attributes={"gen_ai.output.messages": raw})), "llm.output")
    assert g.code == "truncated_output"


def test_an_llm_call_without_its_messages_is_served_but_not_checked() -> None:
    f = _one(run(llm(messages=None)), "llm.messages")
    assert (f.code, f.severity) == ("missing_field", "partial")
    assert f.reason == ("llm span 's1' has no llm.messages: the rendered messages actually sent were not recorded, so a "
                        "replay cannot check the model's input")
    assert f.workaround == ("the run's earlier spans (the answers and tool outputs before each call) stand for the "
                            "input; the recorded answer is served")
    g = _one(run(llm(messages=None), llm(messages=None)), "llm.messages")
    assert g.reason == ("2 llm spans ('s1', 's2') have no llm.messages: the rendered messages actually sent were not "
                        "recorded")


def test_an_llm_answer_cut_by_the_capture_is_truncated_one_cut_by_the_token_limit_is_not() -> None:
    cut = {"role": "assistant", "content": "the first part [TRUNCATED]"}
    assert _one(run(llm(output=cut)), "llm.output").code == "truncated_output"
    for reason in ("length", "max_tokens", "max_output_tokens", "model_length"):
        assert assess(run(llm(output=cut, finish_reason=reason))).findings == [], reason
    assert _one(run(llm(output=cut, finish_reason="stop")), "llm.output").code == "truncated_output"


def test_the_model_is_needed_on_the_span_or_in_the_header() -> None:
    f = _one(run(llm(model=None), header={**GOOD, "model": None}), "llm.model")
    assert (f.code, f.severity) == ("missing_field", "partial")
    assert f.reason == ("llm span 's1' has no llm.model and the header names none: a replay cannot be sure to call the "
                        "same model")
    assert f.workaround == ("the answers are compared by what they asked for; a replay whose header or spans name a "
                            "model is still compared with it")
    assert _one(run(llm(model=None), llm(model=""), header={**GOOD, "model": {"id": ""}}), "llm.model").reason == (
        "2 llm spans ('s1', 's2') have no llm.model and the header names none")
    for named in ({"id": "", "version": "2024-08-06"}, "gpt-4o"):
        assert assess(run(llm(model=None), header={**GOOD, "model": named})).findings == [], named


def test_the_prompt_version_is_needed_unless_the_header_names_the_one_template() -> None:
    bare = {**GOOD, "prompt_versions": {}}
    f = _one(run(llm(prompt_version=None), header=bare), "llm.prompt_version")
    assert (f.code, f.severity) == ("missing_field", "partial")
    assert f.reason == ("llm span 's1' has no llm.prompt_version and the header has no prompt_versions: the prompt the "
                        "model was given cannot be rebuilt or compared")
    assert f.workaround == "the rendered messages stand for it: they are compared as sent"
    two = {**GOOD, "prompt_versions": {"a": "v1", "b": "v2"}}
    system = [{"role": "system", "content": "You are a support agent."}, {"role": "user", "content": "hi"}]
    g = _one(run(llm(prompt_version=None, messages=system), header=two), "llm.prompt_version")
    assert g.reason.startswith("llm span 's1' has no llm.prompt_version and the header names 2 templates: ")
    assert g.workaround.startswith("the rendered system prompt's hash (sha256:") and g.workaround.endswith(
        ", first span) stands for the version: a trial whose system prompt hashes otherwise counts as a prompt change")
    assert _one(run(llm(prompt_version=None), llm(prompt_version=None), header=bare), "llm.prompt_version").reason == (
        "2 llm spans ('s1', 's2') have no llm.prompt_version, and the header's prompt_versions does not say which "
        "version was rendered: the prompt cannot be named by version")
    assert assess(run(llm(prompt_version=None, prompt_hash="sha256:ab"), header=bare)).findings == []
    assert assess(run(llm(prompt_version=None, prompt_id="b"), header=two)).findings == []
    assert assess(run(llm(prompt_version=None, prompt_id="c"), header=two)).findings != []


def test_a_retrieval_needs_its_query_and_its_documents() -> None:
    q = _one(run(("retrieval", "kb", {"query": None, "documents": []})), "retrieval.query")
    assert (q.code, q.severity, q.reason) == ("missing_field", "not_replayable",
                                              "retrieval span 's1' has no retrieval.query: a replay cannot match the call")
    d = _one(run(("retrieval", "kb", {"query": "x"})), "retrieval.documents")
    assert d.reason == "retrieval span 's1' has no retrieval.documents: a replay cannot serve what was retrieved"
    both = run(("retrieval", "kb", {}), ("retrieval", "kb", {}))
    assert [(f.field, f.reason) for f in assess(both).findings] == [
        ("retrieval.query", "2 retrieval spans ('s1', 's2') have no retrieval.query"),
        ("retrieval.documents", "2 retrieval spans ('s1', 's2') have no retrieval.documents")]
    cut = _one(run(("retrieval", "kb", {"query": "x", "documents": ["a page [TRUNCATED]"]})), "retrieval.documents")
    assert cut.code == "truncated_output"
    words = "lorem ipsum dolor sit amet " * 200
    assert assess(run(("retrieval", "kb", {"query": "x", "documents": [words[:2048]]}))).findings == []  # no caps
    stripped = _one(run(("retrieval", "kb", {"attributes": {NOT_CAPTURED: "stripped"}})), "retrieval.documents")
    assert (stripped.code, stripped.reason) == ("content_not_captured", "retrieval span 's1' carries no content: stripped")


def test_arguments_cut_are_truncated_even_when_the_model_saw_them_so() -> None:
    # the model's prompt showing a value cut the same way excuses a tool's output (the tool cut it), never its
    # arguments: the call itself was recorded cut
    cut = ("lorem ipsum dolor sit amet " * 40)[:1000] + "..."
    seen = [{"role": "user", "content": "where?"}, {"role": "tool", "tool_call_id": "c1", "content": cut}]
    rep = assess(run(tool(arguments=cut, output={"ok": True}, call_id="c1"), llm(messages=seen)))
    assert [(f.code, f.span_id, f.field) for f in rep.findings] == [("truncated_output", "s1", "tool.arguments"),
                                                                    ("truncated_output", "s2", "llm.messages")]


# --------------------------------------------------------------------------- verdicts per span, grouping, order
def test_a_span_is_marked_by_its_worst_finding_whatever_their_order() -> None:
    # llm: the messages missing (a caveat) is found before the answer cut (a blocker)
    rep = assess(run(llm(messages=None, output={"role": "assistant", "content": "so far [TRUNCATED]"})))
    assert [f.severity for f in rep.findings] == ["partial", "not_replayable"]
    assert rep.per_span == {"s1": "not_replayable"}
    # tool: the output missing (a blocker) is found before an id minted at run time (a caveat)
    rep = assess(run(tool(arguments={"k": UUID}, output=None), llm()))
    assert sorted(f.severity for f in rep.findings) == ["not_replayable", "partial"]
    assert rep.per_span == {"s1": "not_replayable"}


def test_a_group_of_spans_of_several_kinds_names_them_all_and_lists_five_ids() -> None:
    lost = {MISSING_PARENT: "gone"}
    b = TraceBuilder()
    root = b.add("agent", "support")
    b.add("agent", "step", parent="gone", attributes=lost)
    b.add("tool", "get", parent="gone", attributes=lost, arguments={}, output=[])
    t = b.trace()
    t.header = dict(GOOD)
    (f,) = findings(t, "orphan_span")
    assert f.reason.startswith("2 agent/tool spans ('s1', 's2') name a parent")
    five = assess(run(*[tool(arguments=None)] * 5)).findings
    assert five[0].reason.startswith("5 tool spans ('s1', 's2', 's3', 's4', 's5') have no tool.arguments")
    six = assess(run(*[tool(arguments=None)] * 6)).findings
    assert six[0].reason.startswith("6 tool spans ('s1', 's2', 's3', 's4', 's5' and 1 more) have no tool.arguments")
    assert root == "s0"


def test_single_and_grouped_findings_are_ordered_together_by_their_span() -> None:
    bare = {**GOOD, "tool_schema_hash": None}
    # a grouped finding (s2) before a single one (the hash change, on s3)
    rep = assess(run(llm(tool_schemas_hash="h1"), tool(arguments=None), llm(tool_schemas_hash="h2"), header=bare))
    assert [(f.code, f.span_id) for f in rep.findings] == [("missing_field", "s2"), ("tool_schema_changed", "s3")]
    # a single finding (s2) before a grouped one (s3)
    rep = assess(run(llm(tool_schemas_hash="h1"), llm(tool_schemas_hash="h2"), tool(arguments=None), header=bare))
    assert [(f.code, f.span_id) for f in rep.findings] == [("tool_schema_changed", "s2"), ("missing_field", "s3")]


# --------------------------------------------------------------------------- odd spans and the scans of each field
WORDS = "lorem ipsum dolor sit amet " * 200


def test_span_data_or_attributes_of_another_type_are_read_as_empty_not_a_crash() -> None:
    t = run(tool(), tool(), tool())
    t.spans[1].data = MappingProxyType(dict(t.spans[1].data))  # a read-only mapping is a mapping
    t.spans[2].data = ["not", "a", "mapping"]
    t.spans[3].attributes = None
    assert [(f.code, f.span_id) for f in assess(t).findings] == [("content_not_captured", "s2")]


def test_an_empty_not_captured_reason_is_no_reason() -> None:
    blank = {NOT_CAPTURED: ""}
    rep = assess(run(tool(attributes=blank), llm(attributes=blank), ("retrieval", "kb", {"query": "x", "documents": [],
                                                                                       "attributes": blank}),
                     ("memory", "recall", {"attributes": blank})))
    assert rep.findings == []
    why = "the exporter dropped the payload"
    f = _one(run(tool(arguments=None, output=None, attributes={NOT_CAPTURED: why})), "tool.output")
    assert f.reason == f"tool span 's1' carries no arguments or output: {why}"


def test_a_run_whose_only_span_is_a_tool_without_output_fed_no_decision() -> None:
    t = Trace(spans=[make_span("tool", "finish", span_id="t", arguments={})], header=dict(GOOD), format="test")
    (f,) = assess(t).findings
    assert (f.code, f.field, f.severity) == ("missing_field", "tool.output", "partial")
    late = _one(run(llm(), tool(output=None)), "tool.output")
    assert late.code == "missing_field"


def test_a_retrieval_not_captured_does_not_stop_the_spans_after_it() -> None:
    rep = assess(run(("retrieval", "kb", {"attributes": {NOT_CAPTURED: "stripped"}}), tool(arguments=None)))
    assert [(f.code, f.span_id) for f in rep.findings] == [("content_not_captured", "s1"), ("missing_field", "s2")]


def test_an_output_recorded_is_read_not_the_raw_attribute() -> None:
    assert assess(run(llm(attributes={"gen_ai.output.messages": "unreadable"}))).findings == []
    f = _one(run(llm(output=None, attributes={"gen_ai.output.messages": "x"})), "llm.output")
    assert f.span_id == "s1"
    two = run(llm(output=None, attributes={"gen_ai.output.messages": "x"}),
              llm(output=None, attributes={"gen_ai.output.messages": "y"}))
    assert _one(two, "llm.output").reason == (
        "2 llm spans ('s1', 's2') have an output attribute that could not be read: the answers are lost")


def test_the_model_and_prompt_version_recorded_on_the_span_are_read() -> None:
    assert assess(run(llm(model="gpt-4o"), header={**GOOD, "model": None})).findings == []
    assert assess(run(llm(prompt_version="v5"), header={**GOOD, "prompt_versions": {}})).findings == []
    # messages without content: no system prompt to hash
    empty_system = [{"role": "system", "content": ""}]
    f = _one(run(llm(prompt_version=None, messages=empty_system), header={**GOOD, "prompt_versions": {}}),
             "llm.prompt_version")
    assert f.workaround == "the rendered messages stand for it: they are compared as sent"


def _cut_fields(**fields: Any) -> list[tuple[str, str | None, str]]:
    return [(f.code, f.field, f.reason) for f in assess(run(llm(**fields))).findings if f.code == "truncated_output"]


def test_each_llm_field_is_scanned_for_each_evidence() -> None:
    evidence = {"marker": "the first part [TRUNCATED]", "cap": WORDS[:2048], "json": FULL[:700]}
    for name, text in evidence.items():
        # an answer, messages recorded as text, raw attributes the reader could not parse
        assert [c[1] for c in _cut_fields(output=text)] == ["llm.output"], name
        assert [c[1] for c in _cut_fields(messages=text)] == ["llm.messages"], name
        assert [c[1] for c in _cut_fields(output=None, attributes={"gen_ai.output.messages": text})] == ["llm.output"]
        assert [c[1] for c in _cut_fields(messages=None, attributes={"gen_ai.input.messages": text})] == [
            "llm.messages"], name


def test_parsed_messages_are_scanned_for_cut_values_not_for_markers_and_name_the_path() -> None:
    quoted = [{"role": "user", "content": "my export says [TRUNCATED] at the end, why?"}]
    assert _cut_fields(messages=quoted) == []  # a user may write a marker
    cut = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": WORDS[:1000] + "..."}]
    [(_, _, reason)] = _cut_fields(messages=cut)
    assert reason.startswith("llm.messages of span 's1' looks truncated, at [1].content: ")


def test_documents_are_scanned_for_markers_only_and_name_the_path() -> None:
    docs = [{"text": "ok"}, {"text": "a page [TRUNCATED]"}]
    (f,) = findings(run(("retrieval", "kb", {"query": "x", "documents": docs})), "truncated_output")
    assert f.reason.startswith("retrieval.documents of span 's1' looks truncated, at [1].text: ")
    for text in (WORDS[:1000] + "...", '{"a": [1, 2'):  # a cap plus '...', JSON cut: documents are text
        assert assess(run(("retrieval", "kb", {"query": "x", "documents": [text]}))).findings == [], text
