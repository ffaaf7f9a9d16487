"""The rules of ``core/diff/comparable.py`` (what a foreign recording and its replay cannot compare), each stated
on traces built in the test (issue 25: mutation testing).

Two runs of two formats: a field one format cannot hold, a tool-schema hash each format computes its own way, a
run's input held as messages on one side and as text on the other, a redaction token against the raw value. Each
rule takes what cannot be compared out of both sides, counts it (``Unchecked``: path, why, on how many pairs) and
compares the rest.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.builders import TraceBuilder, make_span
from tracetui.core.diff import diff_traces
from tracetui.core.diff.comparable import Comparability, Unchecked, fit_shapes, flat_views, header_fit
from tracetui.core.model import Span, Trace

MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is #5531?"}]
KEY = b"0123456789abcdef0123456789abcdef"
_MARK = {"redaction": {"key_id": "k1"}}


def _trace(fmt: str, *spans: Span, header: dict | None = None) -> Trace:
    return Trace(spans=list(spans), header=header or {}, format=fmt)


def _llm(sid: str, **data: object) -> Span:
    data.setdefault("messages", MSGS)
    data.setdefault("parent_id", "root")
    return make_span("llm", "chat", span_id=sid, model="m", **data)


def _paths(d) -> list[tuple[str, tuple[str, ...]]]:
    return [(x.type.value, tuple(f.path for f in x.fields)) for x in d.divergences]


def _said(d) -> dict[str, tuple[str, int]]:
    return {u.path: (u.reason, u.pairs) for u in d.not_comparable}


# -- when the rules apply ------------------------------------------------------------------------------------------


def test_two_runs_of_one_format_without_a_redaction_mark_compare_every_field_as_recorded() -> None:
    a, b = _llm("a", prompt_version="v1"), _llm("b")
    for fmt in ("otlp-json", ""):
        fit = Comparability(_trace(fmt, a), _trace(fmt, b))
        assert not fit.active and fit.adjust(a, b) == (a, b) and fit.adjust(a, b)[0] is a
        assert fit.unchecked() == () and fit.redacted_with is None


def test_a_run_of_no_named_format_is_unknown_and_said_so() -> None:
    d = diff_traces(_trace("", _llm("a", prompt_version="v1")), _trace("otlp-json", _llm("b")))
    assert d.divergences == [] and _said(d) == {"llm.prompt_version": ("not recorded by otlp-json", 1)}
    d = diff_traces(_trace("otlp-json", _llm("a")), _trace("", _llm("b", prompt_version="v1")))
    assert _said(d) == {"llm.prompt_version": ("not recorded by otlp-json", 1)}
    d = diff_traces(_trace("otlp-json", _llm("a", prompt_version="v1")), _trace("", _llm("b")))
    assert _said(d) == {"llm.prompt_version": ("not recorded by unknown", 1)}
    d = diff_traces(_trace("", _llm("a")), _trace("otlp-json", _llm("b", prompt_version="v1")))
    assert _said(d) == {"llm.prompt_version": ("not recorded by unknown", 1)}


# -- a field one format cannot hold ----------------------------------------------------------------------------------


def test_a_field_no_span_of_that_kind_holds_on_one_side_is_not_compared_and_counted_per_pair() -> None:
    original = _trace("otlp-json", _llm("a1"), _llm("a2", messages=MSGS[1:]))
    replay = _trace("tracetui", _llm("b1", prompt_version="v2"), _llm("b2", messages=MSGS[:1], prompt_version="v2"))
    d = diff_traces(original, replay)
    assert _paths(d) == [("input_mismatch", ("llm.messages[0].role", "llm.messages[0].content"))]  # still compared
    assert d.not_comparable == (Unchecked("llm.prompt_version", "not recorded by otlp-json", 2),)


def test_what_was_not_compared_is_listed_most_pairs_first_then_by_path() -> None:
    original = _trace("otlp-json", _llm("a1"), _llm("a2"))
    replay = _trace("tracetui", _llm("b1", prompt_version="v2", prompt_id="p"), _llm("b2", prompt_version="v2"))
    assert diff_traces(original, replay).not_comparable == (
        Unchecked("llm.prompt_version", "not recorded by otlp-json", 2),
        Unchecked("llm.prompt_id", "not recorded by otlp-json", 1))
    replay = _trace("tracetui", _llm("b1", prompt_version="v2", prompt_id="p"), _llm("b2", prompt_id="p"))
    assert [u.path for u in diff_traces(original, replay).not_comparable] == ["llm.prompt_id", "llm.prompt_version"]


def test_a_field_one_side_holds_on_another_span_of_that_kind_is_compared() -> None:
    original = _trace("otlp-json", _llm("a1"), _llm("a2", prompt_version="v1"))
    replay = _trace("tracetui", _llm("b1", prompt_version="v1"), _llm("b2", prompt_version="v1"))
    d = diff_traces(original, replay)
    assert _paths(d) == [("input_mismatch", ("llm.prompt_version",))] and d.not_comparable == ()


def test_a_field_recorded_only_as_null_or_only_on_spans_of_another_kind_is_not_held() -> None:
    """What a side holds is per kind and per value: ``value`` of a decision is not a memory's ``value``, and a
    field written as null everywhere was not recorded."""
    def mem(sid: str, **data: object) -> Span:
        return make_span("memory", "recall", span_id=sid, parent_id="root", operation="read", key="k", **data)

    decision = make_span("decision", "route", span_id="d", parent_id="root", decision="a", value=1)
    original = _trace("otlp-json", mem("a1"), mem("a2", value=None), decision)
    replay = _trace("tracetui", mem("b1", value="x"), mem("b2", value="y"), replace(decision, span_id="e"))
    d = diff_traces(original, replay)
    assert d.divergences == [] and _said(d) == {"memory.value": ("not recorded by otlp-json", 2)}


def test_tool_schema_hashes_of_two_formats_are_not_compared_unless_equal() -> None:
    def pair(replay_hash: str):
        return diff_traces(_trace("otlp-json", _llm("a", tool_schemas_hash="h1")),
                           _trace("tracetui", _llm("b", tool_schemas_hash=replay_hash)))

    d = pair("h2")
    assert d.divergences == []
    assert d.not_comparable == (
        Unchecked("llm.tool_schemas_hash", "each format hashes its own record of the tools", 1),)
    d = pair("h1")
    assert d.divergences == [] and d.not_comparable == ()


# -- request params ----------------------------------------------------------------------------------------------


def test_a_param_key_the_other_sides_model_calls_never_name_is_left_out_of_both_either_way() -> None:
    rich = {"temperature": 0, "stream": True, "max_tokens": 5}
    for original, replay, poorer in ((_llm("a", params={"temperature": 0}), _llm("b", params=rich), "otlp-json"),
                                     (_llm("a", params=rich), _llm("b", params={"temperature": 0}), "tracetui")):
        d = diff_traces(_trace("otlp-json", original), _trace("tracetui", replay))
        assert d.divergences == []
        assert _said(d) == {"llm.params.stream": (f"not recorded by {poorer}", 1),
                            "llm.params.max_tokens": (f"not recorded by {poorer}", 1)}


def test_a_param_the_other_side_names_on_another_call_is_compared_and_the_params_left_too() -> None:
    original = _trace("otlp-json", _llm("a1", params={"temperature": 0}),
                      _llm("a2", params={"temperature": 0, "seed": 1}))
    replay = _trace("tracetui", _llm("b1", params={"temperature": 1, "seed": 1, "stream": True}),
                    _llm("b2", params={"temperature": 0, "seed": 1}))
    d = diff_traces(original, replay)
    assert _paths(d) == [("input_mismatch", ("llm.params.temperature", "llm.params.seed"))]
    assert _said(d) == {"llm.params.stream": ("not recorded by otlp-json", 1)}


def test_params_left_empty_on_both_sides_are_no_change_and_params_on_one_side_only_are() -> None:
    original = _trace("otlp-json", _llm("a1"), _llm("a2", params={}), _llm("a3", params={"temperature": 0}))
    replay = _trace("tracetui", _llm("b1", params={"stream": True}), _llm("b2", params={"stream": True}),
                    _llm("b3", params={"stream": True, "temperature": 1}))
    d = diff_traces(original, replay)
    assert [x.original.span_id for x in d.divergences] == ["a3"]
    assert _paths(d) == [("input_mismatch", ("llm.params.temperature",))]
    assert _said(d) == {"llm.params.stream": ("not recorded by otlp-json", 3)}
    # params on one side only, with a key both sides name: a change
    original = _trace("otlp-json", _llm("a1"), _llm("a2", params={"temperature": 0}))
    replay = _trace("tracetui", _llm("b1", params={"temperature": 0, "stream": True}),
                    _llm("b2", params={"temperature": 0}))
    assert _paths(diff_traces(original, replay)) == [("input_mismatch", ("llm.params",))]


def test_params_on_one_side_only_are_left_out_where_the_other_side_never_records_params() -> None:
    for original, replay in ((_llm("a", params={"temperature": 0}), _llm("b")),
                             (_llm("a"), _llm("b", params={"temperature": 0}))):
        d = diff_traces(_trace("otlp-json", original), _trace("tracetui", replay))
        assert d.divergences == [] and [u.path for u in d.not_comparable] == ["llm.params.temperature"]


def test_the_originals_params_left_against_none_left_on_the_replay_are_a_change() -> None:
    original = _trace("otlp-json", _llm("a1", params={"temperature": 0}), _llm("a2", params={"temperature": 0}))
    replay = _trace("tracetui", _llm("b1", params={"stream": True}), _llm("b2", params={"temperature": 0}))
    d = diff_traces(original, replay)
    assert [(x.original.span_id, tuple(f.path for f in x.fields)) for x in d.divergences] == [
        ("a1", ("llm.params.temperature",))]


def test_params_that_are_not_a_mapping_are_compared_as_recorded() -> None:
    original = _trace("otlp-json", _llm("a", params="temperature=0"))
    replay = _trace("tracetui", _llm("b", params={"temperature": 0, "stream": True}))
    d = diff_traces(original, replay)
    assert _paths(d) == [("input_mismatch", ("llm.params",))] and d.not_comparable == ()


# -- a run's input and output in two shapes ----------------------------------------------------------------------


def _root(kind: str, **data: object) -> Span:
    return make_span(kind, "run", span_id="root", **data)


@pytest.mark.parametrize("original,replay,said", [
    (MSGS, "Where is #5531?", "otlp-json holds the messages, tracetui the text: compared on the user's text"),
    ("Where is #5531?", MSGS, "otlp-json holds the text, tracetui the messages: compared on the user's text"),
    ({"message": "Where is #5531?", "customer": "C-1"}, MSGS,
     "otlp-json holds the value, tracetui the messages: compared on the user's text"),
])
def test_a_runs_input_in_two_shapes_is_compared_on_the_users_text_and_said_how(original, replay, said) -> None:
    d = diff_traces(_trace("otlp-json", _root("agent", input=original, output="ok")),
                    _trace("tracetui", _root("agent", input=replay, output="ok")))
    assert d.divergences == [] and d.not_comparable == (Unchecked("agent.input", said, 1),)


def test_a_runs_output_in_two_shapes_is_compared_on_the_last_answer() -> None:
    out = [{"role": "assistant", "content": "Let me look."}, {"role": "assistant", "content": None, "tool_calls": []},
           {"role": "tool", "content": "shipped"}, {"role": "assistant", "content": "Checking."},
           {"role": "assistant", "content": "It shipped."}, {"role": "assistant", "content": ""}]
    d = diff_traces(_trace("otlp-json", _root("other", input="q", output=out)),
                    _trace("tracetui", _root("other", input="q", output="It shipped.")))
    assert d.divergences == []
    assert d.not_comparable == (Unchecked("other.output", "otlp-json holds the messages, tracetui the text: compared "
                                                          "on the assistant's text", 1),)
    d = diff_traces(_trace("otlp-json", _root("other", input="q", output=out)),
                    _trace("tracetui", _root("other", input="q", output="It is lost.")))
    assert [(f.original, f.replay) for f in d.divergences[0].fields] == [("It shipped.", "It is lost.")]


def test_a_runs_root_named_agent_by_one_format_and_other_by_the_other_is_one_run() -> None:
    """A framework trace (its steps below the root) against a replay without them: the two roots are paired as
    the run, whatever kind each format gives it, and the kinds are said, not a divergence."""
    t = TraceBuilder("o")
    root = t.add("other", "run", input="q", output="a")
    step = t.add("other", "node", parent=root)
    t.add("tool", "lookup", parent=step, arguments={"id": 1}, output=1)
    original = replace(t.trace(), format="openinference")
    t = TraceBuilder("r")
    root = t.add("agent", "run", input="q", output="a")
    t.add("tool", "lookup", parent=root, arguments={"id": 1}, output=1)
    d = diff_traces(original, replace(t.trace(), format="tracetui"))
    assert d.divergences == []
    assert Unchecked("kind", "openinference records the run as other, tracetui as agent", 1) in d.not_comparable
    # not both roots, or not both a run's kind: the pair is left as it is
    fit = Comparability(_trace("openinference", _root("other")), _trace("tracetui", _root("agent")))
    child = replace(_root("agent"), parent_id="x")
    assert fit.adjust(_root("other"), child) == (_root("other"), child)
    llm = _llm("root", parent_id=None)
    assert fit.adjust(_root("other"), llm)[1] is llm and fit.adjust(llm, _root("other"))[1] == _root("other")
    assert fit.unchecked() == ()
    # one format (active for a redaction mark only): two roots of two kinds are not one run
    fit = Comparability(_trace("tracetui", _root("other")), _trace("tracetui", _root("agent"), header=_MARK))
    assert fit.active and fit.adjust(_root("other"), _root("agent"))[1].kind.value == "agent"
    assert fit.unchecked() == ()


def test_outputs_of_calls_in_two_shapes_are_compared_as_recorded() -> None:
    """Only a run's input and output (an agent's, another root's) are fitted to the text they share; a model's or a
    tool's output in two shapes is a change."""
    answer = {"role": "assistant", "content": "It shipped."}
    d = diff_traces(_trace("otlp-json", _llm("a", output=answer)), _trace("tracetui", _llm("b", output="It shipped.")))
    assert [x.type.value for x in d.divergences] == ["decision_mismatch"] and d.not_comparable == ()
    d = diff_traces(_trace("otlp-json", _tool("a", [answer])), _trace("tracetui", _tool("b", "It shipped.")))
    assert [x.type.value for x in d.divergences] == ["output_mismatch"] and d.not_comparable == ()


def test_text_parts_of_a_message_are_its_text() -> None:
    msgs = [{"role": "user", "content": [{"type": "text", "text": "Where is "}, {"type": "text", "content": "#5531"},
                                         "?"]}]
    assert fit_shapes(msgs, "Where is #5531?", "user") == ("Where is #5531?", "Where is #5531?")
    assert fit_shapes(msgs, "Where is #5531?", "user") == ("Where is #5531?", "Where is #5531?")
    two = [{"role": "user", "content": "Where is"}, {"role": "assistant", "content": "?"},
           {"role": "user", "content": "#5531"}]
    assert fit_shapes(two, "Where is\n#5531", "user") == ("Where is\n#5531", "Where is\n#5531")
    # a user message whose content is no text: the user's text cannot be had
    odd = [{"role": "user", "content": {"x": 1}}, {"role": "user", "content": "hi"}]
    assert fit_shapes(odd, "hi", "user") is None


def test_a_langgraph_state_holding_only_messages_is_its_messages_and_one_with_more_keys_a_value() -> None:
    assert fit_shapes({"messages": MSGS}, "Where is #5531?", "user") == ("Where is #5531?",) * 2
    assert fit_shapes({"messages": MSGS, "user_id": 1}, "Where is #5531?", "user") is None
    assert fit_shapes({"messages": MSGS, "q": "Where is #5531?"}, "Where is #5531?", "user") == ("Where is #5531?",) * 2


@pytest.mark.parametrize("value", [5, ["a", "b"], None, []])
def test_a_value_of_no_shape_of_a_runs_input_fits_nothing(value) -> None:
    assert fit_shapes(value, "x", "user") is None and fit_shapes("x", value, "user") is None
    assert fit_shapes(value, MSGS, "user") is None


@pytest.mark.parametrize("messages", [[{"role": "user", "content": [{"type": "image", "url": "u"}]}],
                                      [{"role": "system", "content": "Be brief."}],
                                      [{"role": "user", "content": {"parts": 1}}]])
def test_messages_without_text_of_the_role_against_a_text_do_not_fit_and_are_compared_as_recorded(messages) -> None:
    """Found by this round: a message list with no user text (an image, a system prompt alone) against a prompt
    string ended the diff in an AttributeError; it is two values that differ."""
    assert fit_shapes(messages, "x", "user") is None and fit_shapes("x", messages, "user") is None
    d = diff_traces(_trace("otlp-json", _root("agent", input=messages, output="a")),
                    _trace("tracetui", _root("agent", input="x", output="a")))
    assert _paths(d) == [("input_mismatch", ("agent.input",))] and d.not_comparable == ()


# -- the run headers -----------------------------------------------------------------------------------------------


def _header_pair(fmt: str = "otlp-json") -> tuple[Trace, Trace]:
    return _trace(fmt), _trace("tracetui")


def test_header_changes_of_one_format_are_all_kept() -> None:
    changes = [{"path": "model", "original": None, "replay": "m"}]
    assert header_fit(changes, _trace("x"), _trace("x")) == (changes, [])


def test_a_header_field_one_format_does_not_write_is_not_compared_and_says_which() -> None:
    changes = [{"path": "model", "original": None, "replay": "m"}, {"path": "clock", "original": "t", "replay": None},
               {"path": "code_version", "original": "a", "replay": "b"}]
    kept, out = header_fit(changes, *_header_pair())
    assert kept == changes[2:]
    assert out == [Unchecked("header.model", "not recorded by otlp-json", 1),
                   Unchecked("header.clock", "not recorded by tracetui", 1)]
    kept, out = header_fit(changes[:1], *_header_pair(""))
    assert out == [Unchecked("header.model", "not recorded by unknown", 1)]
    kept, out = header_fit([{"path": "clock", "original": "t", "replay": None}], _trace("x"), _trace(""))
    assert out == [Unchecked("header.clock", "not recorded by unknown", 1)]


def test_the_header_tool_schema_hash_is_not_compared_across_formats() -> None:
    changes = [{"path": "tool_schema_hash", "original": "h1", "replay": "h2"},
               {"path": "tool_schema_hash.search", "original": "h1", "replay": "h2"},
               {"path": "prompt_versions.main", "original": "1", "replay": "2"}]
    kept, out = header_fit(changes, *_header_pair())
    assert kept == changes[2:]
    assert out == [Unchecked("header.tool_schema_hash", "each format hashes its own record of the tools", 1)] * 2


def test_a_header_tool_schema_hash_per_tool_is_not_compared_whatever_the_tools_name() -> None:
    changes = [{"path": "tool_schema_hash.search.v2", "original": "h1", "replay": "h2"}]
    assert header_fit(changes, *_header_pair()) == (
        [], [Unchecked("header.tool_schema_hash", "each format hashes its own record of the tools", 1)])


def test_the_header_input_in_two_shapes_is_compared_on_the_users_text() -> None:
    same = {"path": "input", "original": MSGS, "replay": "Where is #5531?"}
    other = {"path": "input", "original": MSGS, "replay": "Where is #5529?"}
    strings = {"path": "input", "original": "a", "replay": "b"}
    kept, out = header_fit([same], *_header_pair())
    assert kept == [] and out == [Unchecked("header.input", "otlp-json and tracetui hold it in two shapes: compared on "
                                                            "the user's text", 1)]
    assert header_fit([other], *_header_pair()) == ([other], [])
    assert header_fit([strings], *_header_pair()) == ([strings], [])


# -- a redaction token against the raw value ---------------------------------------------------------------------


def _tool(sid: str, output: object, name: str = "lookup", **data: object) -> Span:
    return make_span("tool", name, span_id=sid, tool_name="lookup", arguments={"id": 1}, output=output, **data)


def _redactor():
    from tracetui.core.harness.redact import Redactor

    return Redactor(KEY, sensitive_fields={"lookup": ["account"]})


def test_with_the_key_the_raw_side_is_redacted_as_its_tool_declares_and_compared() -> None:
    """The replay harness redacts a tool's declared sensitive fields by its tool name (``tool_name``, not the span
    name); the diff redacts the raw side the same way before comparing, whichever side is raw."""
    red = _redactor()
    raw = {"account": "blue-falcon"}
    tokened = _redactor().value(raw, tool="lookup")
    assert tokened != raw
    header = {"redaction": red.record()}
    for o, r in ((_trace("tracetui", _tool("a", raw, "fetch customer")),
                  _trace("tracetui", _tool("b", tokened, "fetch customer"), header=header)),
                 (_trace("tracetui", _tool("a", tokened, "fetch customer"), header=header),
                  _trace("tracetui", _tool("b", raw, "fetch customer")))):
        d = diff_traces(o, r, redactor=_redactor())
        assert d.divergences == [] and d.redacted_with == red.key_id and d.not_comparable == ()
    other = _trace("tracetui", _tool("b", _redactor().value({"account": "red-kite"}, tool="lookup"), "fetch customer"),
                   header=header)
    d = diff_traces(_trace("tracetui", _tool("a", raw, "fetch customer")), other, redactor=_redactor())
    assert _paths(d) == [("output_mismatch", ("tool.output.account",))]


def test_with_the_key_a_model_calls_values_are_redacted_without_any_tools_declared_fields() -> None:
    """A tool's declared sensitive fields are that tool's: a model call named like the tool is redacted by the
    general rules only, as the harness redacts it."""
    red = _redactor()
    raw = {"account": "blue-falcon", "to": "ann.lee@example.com"}
    redacted = _redactor().value(raw)  # as the harness redacts a model call: no tool named
    assert redacted["account"] == "blue-falcon" and redacted["to"] != raw["to"]
    llm = make_span("llm", "lookup", span_id="a", model="m", messages=[], output=raw)
    replay = make_span("llm", "lookup", span_id="b", model="m", messages=[], output=redacted)
    d = diff_traces(_trace("tracetui", llm), _trace("tracetui", replay, header={"redaction": red.record()}),
                    redactor=red)
    assert d.divergences == [] and d.redacted_with == red.key_id


def test_a_redactor_of_another_key_or_no_mark_is_not_used() -> None:
    red = _redactor()
    raw, tokened = {"account": "blue-falcon"}, _redactor().value({"account": "blue-falcon"}, tool="lookup")
    o = _trace("tracetui", _tool("a", raw))
    for header in ({"redaction": {**red.record(), "key_id": "another"}}, {"redaction": {**red.record(), "key_id": ""}}):
        fit = Comparability(o, _trace("tracetui", _tool("b", tokened), header=header), red)
        assert fit.redactor is None and fit.redacted_with is None
    fit = Comparability(o, _trace("tracetui", _tool("b", tokened)), red)  # neither side marked
    assert not fit.active and fit.redactor is None


@pytest.mark.parametrize("redacted_side,mark,key", [("replay", {"key_id": "k9"}, "k9"),
                                                     ("original", {"key_id": "k9"}, "k9"), ("replay", {}, "")])
def test_without_the_key_a_string_equal_to_the_tokens_once_each_token_stands_for_any_text_is_not_comparable(
        redacted_side: str, mark: dict, key: str) -> None:
    raw = {"to": "ann.lee@example.com", "note": "Dear Ann\nLee,", "n": 1, "tags": ["a@b.c", "x"]}
    tokened = {"to": "<EMAIL_ae401a19>", "note": "Dear <NAME_12345678>,", "n": 1, "tags": ["<EMAIL_00000000>", "x"]}
    raw_t = _trace("tracetui", _tool("a", raw))
    tok_t = _trace("tracetui", _tool("b", tokened), header={"redaction": mark})
    d = diff_traces(raw_t, tok_t) if redacted_side == "replay" else diff_traces(tok_t, raw_t)
    assert d.divergences == [] and d.redacted_with is None
    assert d.not_comparable == (Unchecked("tool.output", f"redacted in the {redacted_side} only (key {key}); that key "
                                                         "is not here to check the raw value", 1),)


@pytest.mark.parametrize("raw,tokened", [
    ("bob@example.com", "Dear <NAME_12345678>,"),  # the text around the token differs
    ("a < b", "c < d"),  # no token at all
    ("<EMAIL_ae401a19>", "<EMAIL_00000000>"),  # two tokens: the raw side is no raw value
    (["a@b.c", "x"], ["<EMAIL_00000000>"]),  # lists of two lengths
    (["a@b.c"], "<EMAIL_00000000>"),
    ({"to": "a@b.c"}, None),
])
def test_without_the_key_anything_else_still_differs_as_recorded(raw, tokened) -> None:
    d = diff_traces(_trace("tracetui", _tool("a", raw)),
                    _trace("tracetui", _tool("b", tokened), header={"redaction": {"key_id": "k9"}}))
    assert [x.type.value for x in d.divergences] == ["output_mismatch"] and d.not_comparable == ()
    assert d.divergences[0].original.data["output"] == raw


def test_without_the_key_a_field_only_one_side_holds_is_a_change() -> None:
    raw_t = _trace("tracetui", _tool("a", "a@b.c"))
    tok_t = _trace("tracetui", make_span("tool", "lookup", span_id="b", tool_name="lookup", arguments={"id": 1}),
                   header={"redaction": {"key_id": "k9"}})
    assert _paths(diff_traces(raw_t, tok_t)) == [("output_mismatch", ("tool.output",))]


# -- two formats, one recording framework steps ---------------------------------------------------------------


def _with_steps(fmt: str, steps: int) -> Trace:
    t = TraceBuilder(fmt[:1] or "u")
    root = t.add("agent", "support", input="q", output="a")
    parent = root
    for n in range(steps):
        parent = t.add("other", f"node{n}", parent=parent)
    t.add("tool", "lookup", parent=parent, arguments={"id": 1}, output=1)
    t.add("llm", "chat", parent=root, model="m", messages=[], output="a")
    return replace(t.trace(), format=fmt)


def test_the_views_hold_each_root_and_its_calls_below_it_and_name_the_side_with_the_steps() -> None:
    for original, replay, side, other, n in ((_with_steps("openinference", 2), _with_steps("tracetui", 0),
                                              "openinference", "tracetui", 2),
                                             (_with_steps("tracetui", 0), _with_steps("openinference", 1),
                                              "openinference", "tracetui", 1)):
        views = flat_views(original, replay)
        assert views is not None
        for view in views[:2]:
            assert [s.name for s in view.spans] == ["support", "lookup", "chat"]
            assert [s.parent_id for s in view.spans] == [None] + [view.spans[0].span_id] * 2
        assert views[2] == Unchecked("spans", f"framework steps {side} records and {other} does not (agent/other "
                                              "spans below the root)", n)


def test_no_views_for_one_format_or_steps_on_both_sides_or_neither() -> None:
    assert flat_views(_with_steps("", 1), _with_steps("", 0)) is None
    assert flat_views(_with_steps("", 0), _with_steps("", 1)) is None
    assert flat_views(_with_steps("openinference", 1), _with_steps("tracetui", 1)) is None
    assert flat_views(_with_steps("openinference", 0), _with_steps("tracetui", 0)) is None
    assert flat_views(_with_steps("", 1), _with_steps("tracetui", 0)) is not None
