"""docs/triage.md, step 1: the evidence read beside a span's own fields (``core/triage/crosscheck.py``): how a
later prompt quoted a tool result, the raw message attributes a reader kept, OTLP's remote-parent flag; one test
per rule (issue 25: ``scripts/mutation.py crosscheck``; tests/mutation_equivalents.md). Spans are built in the test.
"""

from __future__ import annotations

import json
from typing import Any

from tracetui.core.model import Span, SpanKind
from tracetui.core.triage.crosscheck import raw_messages, raw_output, remote_parent, seen_by_model

WHOLE = "Order 5531 shipped on 3 November via DHL, tracking DE-4411"
CUT = WHOLE[:30] + "..."


def llm(sid: str, attributes: dict[str, Any] | None = None, **data: Any) -> Span:
    return Span(span_id=sid, parent_id="root", seq=0, kind=SpanKind.LLM, name="chat", data=data,
                attributes=attributes or {})


def tool(call_id: Any = "c1") -> Span:
    return Span(span_id="t", parent_id="root", seq=0, kind=SpanKind.TOOL, name="get_order",
                data={"call_id": call_id, "output": CUT})


def quoting(sid: str, content: Any, call_id: str = "c1") -> Span:
    return llm(sid, messages=[{"role": "user", "content": "where is 5531"},
                              {"role": "tool", "tool_call_id": call_id, "content": content}])


def test_raw_messages_and_output_are_the_first_non_empty_text_attribute_in_the_sources_order() -> None:
    keys_in = ["gen_ai.input.messages", "gen_ai.prompt", "llm.input_messages", "input.value"]
    keys_out = ["gen_ai.output.messages", "gen_ai.completion", "llm.output_messages", "output.value"]
    for read, keys in ((raw_messages, keys_in), (raw_output, keys_out)):
        for n, key in enumerate(keys):
            later = {k: f"text of {k}" for k in keys[n:]}
            assert read(llm("s", {**{k: "" for k in keys[:n]}, **later})) == f"text of {key}"
        assert read(llm("s", {keys[0]: ["not", "text"], keys[1]: "kept"})) == "kept"
        assert read(llm("s", {"other": "x"})) is None
        assert read(llm("s")) is None


def test_a_remote_parent_needs_both_otlp_flag_bits() -> None:
    assert remote_parent(llm("s", {"otel.flags": 0x300})) is True
    assert remote_parent(llm("s", {"otel.flags": 0x301})) is True
    assert remote_parent(llm("s", {"otel.flags": 0x100})) is False  # known local
    assert remote_parent(llm("s", {"otel.flags": 0x200})) is False
    assert remote_parent(llm("s", {"otel.flags": "768"})) is False
    assert remote_parent(llm("s", {"otel.flags": 768.0})) is False
    assert remote_parent(llm("s")) is False
    bare = Span(span_id="s", parent_id=None, seq=0, kind=SpanKind.LLM, name="chat",
                attributes=None)  # type: ignore[arg-type]
    assert remote_parent(bare) is False  # a span built without attributes


def test_a_prompt_quoting_the_same_cut_string_means_the_tool_cut_it() -> None:
    spans = [tool(), quoting("m1", CUT)]
    assert seen_by_model(spans, spans[0], 0, CUT) == ("m1", True)
    nested = [tool(), quoting("m1", json.dumps({"order": {"notes": [CUT]}}))]
    assert seen_by_model(nested, nested[0], 0, CUT) == ("m1", True)
    listed = [tool(), quoting("m1", [{"type": "text", "text": CUT}])]
    assert seen_by_model(listed, listed[0], 0, CUT) == ("m1", True)
    tupled = [tool(), quoting("m1", ("x", CUT))]
    assert seen_by_model(tupled, tupled[0], 0, CUT) == ("m1", True)


def test_a_prompt_quoting_a_longer_string_with_the_same_start_means_the_recorder_cut_it() -> None:
    spans = [tool(), quoting("m1", {"text": WHOLE})]
    assert seen_by_model(spans, spans[0], 0, CUT) == ("m1", False)
    marked = WHOLE[:20] + "...[truncated]"
    assert seen_by_model(spans, spans[0], 0, marked) == ("m1", False)


def test_a_prefix_under_16_characters_or_no_longer_quote_is_no_evidence() -> None:
    short_cut = WHOLE[:15] + "..."
    spans = [tool(), quoting("m1", WHOLE)]
    assert seen_by_model(spans, spans[0], 0, short_cut) is None
    assert seen_by_model(spans, spans[0], 0, WHOLE[:16] + "...") == ("m1", False)
    other = [tool(), quoting("m1", "something else entirely, long enough")]
    assert seen_by_model(other, other[0], 0, CUT) is None
    exact_prefix = [tool(), quoting("m1", WHOLE[:30])]  # as long as the prefix: not longer
    assert seen_by_model(exact_prefix, exact_prefix[0], 0, CUT) is None


def test_the_first_later_prompt_answering_the_call_decides_and_its_last_answer_counts() -> None:
    spans = [tool(), quoting("m1", "nothing like it"), quoting("m2", CUT)]
    assert seen_by_model(spans, spans[0], 0, CUT) is None
    twice = llm("m1", messages=[{"role": "tool", "tool_call_id": "c1", "content": "old"},
                                {"role": "tool", "tool_call_id": "c1", "content": CUT}])
    assert seen_by_model([tool(), twice], tool(), 0, CUT) == ("m1", True)


def test_only_later_llm_prompts_answering_this_call_id_are_read() -> None:
    t = tool()
    not_llm = Span(span_id="x", parent_id="root", seq=0, kind=SpanKind.TOOL, name="y",
                   data={"messages": [{"role": "tool", "tool_call_id": "c1", "content": CUT}]})
    no_list = llm("m0", messages="raw text")
    other_call = quoting("m1", CUT, call_id="c2")
    odd_entry = llm("m1b", messages=["odd entry"])
    spans = [quoting("m-1", CUT), t, not_llm, no_list, other_call, odd_entry, quoting("m2", CUT)]
    assert seen_by_model(spans, t, 1, CUT) == ("m2", True)


def test_it_looks_at_most_200_spans_ahead() -> None:
    t = tool()
    filler = [llm(f"f{n}", messages=[]) for n in range(199)]
    assert seen_by_model([t, *filler, quoting("m200", CUT)], t, 0, CUT) == ("m200", True)
    assert seen_by_model([t, *filler, llm("f199", messages=[]), quoting("m201", CUT)], t, 0, CUT) is None


def test_no_call_id_or_a_non_text_leaf_gives_no_evidence() -> None:
    for call_id in (None, "", 7):
        t = tool(call_id)
        assert seen_by_model([t, quoting("m1", CUT, call_id="c1")], t, 0, CUT) is None
        answering = llm("m2", messages=[{"role": "tool", "tool_call_id": call_id, "content": CUT}])
        assert seen_by_model([t, answering], t, 0, CUT) is None  # a message answering that id is no evidence
    t = tool()
    assert seen_by_model([t, quoting("m1", {"n": 5})], t, 0, 5) is None
