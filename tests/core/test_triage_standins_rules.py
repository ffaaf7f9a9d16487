"""docs/triage.md, "Blockers and caveats": what stands for a header field a trace did not record
(``core/triage/standins.py``), one test per rule (issue 25: ``scripts/mutation.py standins``;
tests/mutation_equivalents.md). Spans and traces are built in the test.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tracetui.core.canonical import canonical_json
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.triage.standins import inferred_clock, offered_tools, run_prompt, system_prompt_hash

NS = 1_762_161_242_118_000_000  # 2025-11-03T09:14:02.118Z


def llm(seq: int = 1, attributes: dict[str, Any] | None = None, **data: Any) -> Span:
    return Span(span_id=f"s{seq}", parent_id="s0", seq=seq, kind=SpanKind.LLM, name="chat", data=data,
                attributes=attributes or {})


def digest(content: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(content)).hexdigest()[:16]


def test_a_recorded_prompt_hash_is_the_system_prompts_hash() -> None:
    msgs = [{"role": "system", "content": "be brief"}]
    assert system_prompt_hash(llm(prompt_hash="sha256:feed", messages=msgs)) == "sha256:feed"
    assert system_prompt_hash(llm(prompt_hash="", messages=msgs)) == digest("be brief")
    assert system_prompt_hash(llm(prompt_hash=7, messages=msgs)) == digest("be brief")


def test_else_the_first_system_or_developer_message_is_hashed_as_16_hex_of_sha256() -> None:
    msgs = ["odd", {"role": "user", "content": "hi"}, {"role": "developer", "content": {"rules": [1]}},
            {"role": "system", "content": "later"}]
    h = system_prompt_hash(llm(messages=msgs))
    assert h == digest({"rules": [1]})
    assert len(h) == len("sha256:") + 16
    assert system_prompt_hash(llm(messages=[{"role": "system", "content": "b"}])) != digest({"rules": [1]})


def test_a_system_content_json_cannot_hold_is_hashed_by_its_repr() -> None:
    h = system_prompt_hash(llm(messages=[{"role": "system", "content": b"raw"}]))
    assert h == "sha256:" + hashlib.sha256(repr(b"raw").encode()).hexdigest()[:16]


def test_no_system_message_or_no_message_list_gives_no_hash() -> None:
    assert system_prompt_hash(llm(messages=[{"role": "user", "content": "hi"}])) is None
    assert system_prompt_hash(llm(messages=({"role": "system", "content": "x"},))) is None
    assert system_prompt_hash(llm()) is None
    odd = Span(span_id="s", parent_id=None, seq=0, kind=SpanKind.LLM, name="chat", data=None)  # type: ignore[arg-type]
    assert system_prompt_hash(odd) is None


def test_recorded_prompt_versions_are_the_runs_prompt_identity() -> None:
    t = Trace(spans=[llm(messages=[{"role": "system", "content": "a"}])],
              header={"prompt_versions": {"support.system": "v5"}, "prompt_hash": "sha256:head"})
    assert run_prompt(t) == ("prompt_versions", {"support.system": "v5"})


def test_the_headers_prompt_hash_stands_for_every_system_prompt_of_the_run() -> None:
    spans = [llm(1, messages=[{"role": "system", "content": "a"}])]
    t = Trace(spans=spans, header={"prompt_versions": {}, "prompt_hash": "sha256:head"})
    assert run_prompt(t) == ("system_prompt_hash", ["sha256:head"])


def test_else_the_distinct_system_prompts_of_the_llm_spans_in_order() -> None:
    a, b = [{"role": "system", "content": "a"}], [{"role": "system", "content": "b"}]
    tool = Span(span_id="t", parent_id="s0", seq=2, kind=SpanKind.TOOL, name="x", data={"messages": a})
    t = Trace(spans=[llm(1, messages=b), tool, llm(3, messages=a), llm(4, messages=b), llm(5)],
              header={"prompt_hash": ""})
    assert run_prompt(t) == ("system_prompt_hash", [digest("b"), digest("a")])


def test_a_run_with_no_prompt_identity_gives_an_empty_one() -> None:
    assert run_prompt(Trace(spans=[llm(1)])) == ("", None)
    assert run_prompt(Trace(spans=[], header=None)) == ("", None)  # type: ignore[arg-type]


def test_the_inferred_clock_is_the_earliest_root_start_else_the_earliest_span_start() -> None:
    def at(seq: int, parent: str | None, start: int | None) -> Span:
        return Span(span_id=f"s{seq}", parent_id=parent, seq=seq, kind=SpanKind.AGENT, name="a", start_ns=start)

    roots = Trace(spans=[at(0, None, NS + 5_000_000_000), at(1, "s0", NS), at(2, None, NS + 1_000_000_000),
                         at(3, None, None)])
    assert inferred_clock(roots) == "2025-11-03T09:14:03.118Z"
    orphans = Trace(spans=[at(0, None, None), at(1, "s0", NS + 2_000_000_000), at(2, "s0", NS)])
    assert inferred_clock(orphans) == "2025-11-03T09:14:02.118Z"
    assert inferred_clock(Trace(spans=[at(0, None, None)])) is None


def test_offered_tools_is_the_first_llm_span_that_recorded_them_and_their_count() -> None:
    tools = [{"name": "a"}, {"name": "b"}]
    tool_span = Span(span_id="t", parent_id="s0", seq=0, kind=SpanKind.TOOL, name="x", data={"tools": tools})
    first, second = llm(2, tools=tools), llm(3, functions=[{"name": "c"}])
    assert offered_tools(Trace(spans=[tool_span, llm(1, tools=[]), first, second])) == (first, 2)
    for key in ("tool_definitions", "functions"):
        s = llm(1, **{key: tools + [{"name": "c"}]})
        assert offered_tools(Trace(spans=[s])) == (s, 3)


def test_offered_tools_read_from_source_attributes_count_a_list_or_one_blob() -> None:
    for key in ("gen_ai.tool.definitions", "llm.tools", "llm.request.functions"):
        listed = llm(1, attributes={key: [{"name": "a"}, {"name": "b"}]})
        assert offered_tools(Trace(spans=[listed])) == (listed, 2)
    blob = llm(1, attributes={"llm.tools": '[{"name": "a"}, {"name": "b"}]'})
    assert offered_tools(Trace(spans=[blob])) == (blob, 1)
    assert offered_tools(Trace(spans=[llm(1, attributes={"llm.tools": ""}), llm(2)])) is None


def test_offered_tools_of_an_llm_span_without_a_data_section_are_read_from_its_attributes() -> None:
    bare = Span(span_id="s", parent_id=None, seq=0, kind=SpanKind.LLM, name="chat", data=None,  # type: ignore[arg-type]
                attributes={"llm.tools": [{"name": "a"}]})
    assert offered_tools(Trace(spans=[bare])) == (bare, 1)
