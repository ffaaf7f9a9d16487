"""Step 1 of triage, rule by rule (tracetui.core.triage.replayability): for each finding, the span, the field,
the severity and the words a user reads (reason and workaround), single and grouped; the order of the findings.

Written from the rules, to pin what the mutation run of ``replayability.py`` found unpinned
(tests/mutation_equivalents.md, "core/triage/replayability.py"). The rules themselves: the module docstring and
docs/triage.md, "Step 1: replayability".
"""

from __future__ import annotations

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
    marker = "the first part ...[truncated] rest"
    (f,) = findings(run(tool(output={"body": marker})), "truncated_output")
    assert (f.span_id, f.field, f.severity) == ("s1", "tool.output", "not_replayable")
    assert f.reason.startswith("tool.output of span 's1' looks truncated, ")
    assert f.reason.endswith(": a strict replay never serves a truncated value")
    assert "marker" in f.reason and "at .body" in f.reason


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
    cut = FULL[:2048]
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
