"""The rules of ``core/diff/noise.py`` (which spans and fields a declared noise rule hides, and how a table is
read), each stated on traces and tables built in the test (issue 25: mutation testing)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.builders import TraceBuilder, make_span
from tracetui.core.diff import diff_traces
from tracetui.core.diff.noise import NoiseConfigError, NoiseRule, Noisy, apply_rules, load_rules, rules_from_table
from tracetui.core.model import Span, SpanKind, Status

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What time is it?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [{"name": "now", "arguments": {}}]},
    {"role": "tool", "content": "10:00"},
]


def _llm(messages: list, **fields: object) -> Span:
    return make_span("llm", "chat", model="m", messages=messages, output={"role": "assistant", "content": "ok"},
                     **fields)


# -- which fields a pattern reaches ---------------------------------------------------------------------------


def test_a_field_pattern_hides_its_path_and_everything_below_it_and_nothing_beside_it() -> None:
    rule = NoiseRule(fields=("tool.output",))
    assert rule.field("tool.output") and rule.field("tool.output.now") and rule.field("tool.output[0]")
    assert rule.field('tool.output["odd key"]')  # below it through "." or "["
    assert not rule.field("tool.output_truncated") and not rule.field("tool.outputs")
    assert not rule.field("toolXoutput") and not rule.field("x.tool.output")  # "." literal, anchored at the start


def test_a_star_matches_any_run_of_characters_and_brackets_are_literal() -> None:
    rule = NoiseRule(fields=("llm.messages[*].content",))
    assert rule.field("llm.messages[3].content") and rule.field("llm.messages[12].content[0].text")
    assert not rule.field("llm.messages[3].tool_calls") and not rule.field("llm.messages")
    index = NoiseRule(fields=("llm.messages[2]",))
    assert index.field("llm.messages[2]") and index.field("llm.messages[2].content")
    assert not index.field("llm.messages[12]") and not index.field("llm.messages2")  # not a character class


def test_a_rule_without_fields_hides_every_field_and_one_of_several_patterns_is_enough() -> None:
    assert NoiseRule(kind="tool").field("status") and NoiseRule(kind="tool").field("anything.at.all")
    rule = NoiseRule(fields=("tool.arguments", "tool.output"))
    assert rule.field("tool.output.now") and rule.field("tool.arguments.id") and not rule.field("status")


# -- which spans a rule applies to ----------------------------------------------------------------------------


def test_a_tool_rule_names_a_tool_spans_tool_not_its_span_name_nor_another_kinds_name() -> None:
    rule = NoiseRule(tool="now")
    assert rule.spans(make_span("tool", "clock", tool_name="now"))
    assert not rule.spans(make_span("tool", "now", tool_name="clock"))
    assert not rule.spans(make_span("llm", "now"))
    # a tool span that records no tool_name is named by its span name
    assert rule.spans(Span(span_id="s", parent_id=None, seq=0, kind=SpanKind.TOOL, name="now", status=Status.OK,
                           data={}))


def test_every_selector_a_rule_gives_must_match_and_none_given_matches_every_span() -> None:
    rule = NoiseRule(kind="llm", name="chat")
    assert rule.spans(make_span("llm", "chat"))
    assert not rule.spans(make_span("llm", "plan")) and not rule.spans(make_span("tool", "chat"))
    assert NoiseRule(name="chat").spans(make_span("tool", "chat"))
    assert NoiseRule(fields=("status",)).spans(make_span("memory", "m"))
    assert not NoiseRule(kind="tool", tool="now", name="clock").spans(make_span("tool", "now", tool_name="now"))


# -- [KEY=VALUE] selectors --------------------------------------------------------------------------------------


def test_a_role_selector_hides_the_items_of_that_role_in_either_span_and_only_with_the_spans_given() -> None:
    rule = NoiseRule(fields=("llm.messages[role=user]",))
    original, replay = _llm(MESSAGES[:2]), _llm(MESSAGES)
    assert rule.field("llm.messages[1].content", (original, replay))
    assert rule.field("llm.messages[1]", (original, replay))
    assert not rule.field("llm.messages[2].content", (original, replay))  # the assistant's turn
    assert not rule.field("llm.messages[1].content")  # no spans: nothing to look the role up in
    # an item only one side has is looked up on that side (the original's list has two messages)
    assistant = NoiseRule(fields=("llm.messages[role=assistant]",))
    assert assistant.field("llm.messages[2].tool_calls", (original, replay))
    assert assistant.field("llm.messages[2].tool_calls", (None, replay))
    assert not assistant.field("llm.messages[2].tool_calls", (original, None))
    assert not assistant.field("llm.messages[7]", (original, replay))  # past the end of both lists


def test_a_selector_value_is_compared_as_text_and_a_missing_key_never_matches() -> None:
    spans = (make_span("tool", "t", output={"rows": [{"n": 1, "id": "a"}, {"id": "b"}]}),)
    assert NoiseRule(fields=("tool.output.rows[n=1]",)).field("tool.output.rows[0].id", spans)
    assert not NoiseRule(fields=("tool.output.rows[n=1]",)).field("tool.output.rows[1].id", spans)
    assert not NoiseRule(fields=("tool.output.rows[n=2]",)).field("tool.output.rows[0].id", spans)
    assert not NoiseRule(fields=("tool.output[n=1]",)).field("tool.output[0]", spans)  # output is no list
    assert not NoiseRule(fields=("tool.rows[n=1]",)).field("tool.rows[0]", spans)  # no such key
    # a key looked up in a list or a string is no item
    for output in ([{"n": 1}], "rows"):
        span = make_span("tool", "t", output=output)
        assert not NoiseRule(fields=("tool.output.rows[n=1]",)).field("tool.output.rows[0]", (span,))


def test_after_a_star_and_a_selector_every_selector_must_hold() -> None:
    spans = (_llm(MESSAGES),)
    rule = NoiseRule(fields=("llm.messages[role=assistant].tool_calls[name=now]",))
    assert rule.field("llm.messages[2].tool_calls[0].arguments", spans)
    assert not NoiseRule(fields=("llm.messages[role=user].tool_calls[name=now]",)).field(
        "llm.messages[2].tool_calls[0]", spans)
    assert not NoiseRule(fields=("llm.messages[role=assistant].tool_calls[name=later]",)).field(
        "llm.messages[2].tool_calls[0]", spans)
    star = NoiseRule(fields=("llm.*[role=tool].content",))
    assert star.field("llm.messages[3].content", spans) and not star.field("llm.messages[1].content", spans)
    assert not star.field("llm.messages[3].name", spans)


# -- the table's shape -------------------------------------------------------------------------------------------


def test_a_table_gives_its_ignore_paths_then_its_noise_entries_with_their_source() -> None:
    rules = rules_from_table({"ignore": ["llm.prompt_version"],
                              "noise": [{"tool": "now"}, {"kind": "llm", "name": "chat", "fields": ["llm.output"]}],
                              "other": 1}, "p.toml")
    assert rules == [NoiseRule(fields=("llm.prompt_version",), source="p.toml"),
                     NoiseRule(tool="now", source="p.toml"),
                     NoiseRule(kind="llm", name="chat", fields=("llm.output",), source="p.toml")]
    assert rules_from_table(None, "p.toml") == [] and rules_from_table(["ignore"], "p.toml") == []
    assert rules_from_table({}, "p.toml") == []


@pytest.mark.parametrize("table,message", [
    ({"ignore": "tool.output"}, r"^p\.toml: \[tool\.tracetui\] ignore must be a list of field paths$"),
    ({"ignore": ["tool.output", 3]}, r"^p\.toml: \[tool\.tracetui\] ignore must be a list of field paths$"),
    ({"noise": {"tool": "now"}}, r"^p\.toml: \[tool\.tracetui\] noise must be an array of tables"),
    ({"noise": [{"tool": "now"}, "now"]}, r"^p\.toml: \[\[tool\.tracetui\.noise\]\] entry 2 is not a table$"),
    ({"noise": [{"tool": "now", "feilds": [], "zz": 1}]},
     r"entry 1: unknown key 'feilds' \(kind, tool, name, fields\)$"),
    ({"noise": [{"kind": 3}]}, r"entry 1: kind must be a string$"),
    ({"noise": [{"tool": ["now"]}]}, r"entry 1: tool must be a string$"),
    ({"noise": [{"name": None}]}, r"entry 1: name must be a string$"),
    ({"noise": [{"kind": "tools"}]}, r"entry 1: kind 'tools' is not one of agent, decision, llm, memory, other, "
                                     r"retrieval, tool$"),
    ({"noise": [{"kind": "tool", "fields": "tool.output"}]}, r"entry 1: fields must be a list of field paths$"),
    ({"noise": [{"kind": "tool", "fields": ["tool.output", 1]}]}, r"entry 1: fields must be a list of field paths$"),
    ({"noise": [{"fields": []}]}, r"entry 1: says no span \(kind, tool or name\) and no field: it would hide"),
    ({"noise": [{}]}, r"entry 1: says no span"),
])
def test_a_table_of_the_wrong_shape_names_the_source_the_entry_and_the_key(table: dict, message: str) -> None:
    with pytest.raises(NoiseConfigError, match=message):
        rules_from_table(table, "p.toml")


def test_an_entry_naming_only_fields_or_only_spans_is_a_rule() -> None:
    assert rules_from_table({"noise": [{"fields": ["status"]}, {"name": "x"}, {"kind": "tool"}]}, "f") == [
        NoiseRule(fields=("status",), source="f"), NoiseRule(name="x", source="f"), NoiseRule(kind="tool", source="f")]


def test_rules_come_from_the_nearest_pyproject_then_the_nearest_tracetui_toml_then_the_command_line(
        tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('ignore = ["not.ours"]\n[tool.tracetui]\nignore = ["a.b"]\n')
    (tmp_path / ".tracetui.toml").write_text('ignore = ["c.d"]\n[[noise]]\ntool = "now"\n')
    below = tmp_path / "sub" / "deeper"
    below.mkdir(parents=True)
    rules = load_rules(str(below), ignore=["e.f"])
    assert rules == [NoiseRule(fields=("a.b",), source=str(tmp_path / "pyproject.toml")),
                     NoiseRule(fields=("c.d",), source=str(tmp_path / ".tracetui.toml")),
                     NoiseRule(tool="now", source=str(tmp_path / ".tracetui.toml")),
                     NoiseRule(fields=("e.f",), source="--ignore")]


def test_a_tracetui_toml_may_hold_a_tool_tracetui_table_and_a_pyproject_without_one_gives_no_rules(
        tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('ignore = ["not.ours"]\n[project]\nname = "x"\n')
    (tmp_path / ".tracetui.toml").write_text('[tool.tracetui]\nignore = ["c.d"]\n')
    assert load_rules(str(tmp_path)) == [NoiseRule(fields=("c.d",), source=str(tmp_path / ".tracetui.toml"))]


def test_a_file_that_is_not_toml_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / ".tracetui.toml").write_text("ignore = [\n")
    with pytest.raises(NoiseConfigError, match=r"\.tracetui\.toml: cannot read the noise rules: ") as info:
        load_rules(str(tmp_path))
    assert str(info.value).startswith(str(tmp_path / ".tracetui.toml"))
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_the_header_line_counts_hidden_fields_in_singular_and_plural_and_says_nothing_for_none() -> None:
    assert Noisy().said() == "" and Noisy(0, 3).said() == ""
    assert Noisy(1).said() == "1 field ignored by config"
    assert Noisy(2, 1).said() == "2 fields ignored by config"


# -- applying rules to a diff ---------------------------------------------------------------------------------


def _run(prefix: str, *, status: str = "ok", out: str = "10:00", args: int = 1, text: str = "ok",
         question: str = "What time is it?", extra: bool = False) -> object:
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", input={"q": "time"})
    t.add("llm", "chat", parent=root, model="m", messages=[{"role": "user", "content": question}],
          output={"role": "assistant", "content": text})
    t.add("tool", "lookup", parent=root, arguments={"id": args}, output={"value": {"at": out}},
          status=status, error_type=None if status == "ok" else "Boom")
    if extra:
        t.add("tool", "audit", parent=root, arguments={}, output=None)
    return t.trace()


def test_no_rules_change_nothing() -> None:
    d = diff_traces(_run("o"), _run("r", out="10:07"))
    before = list(d.divergences)
    assert apply_rules(d, []) == Noisy() and d.divergences == before and d.ignored_by_config == 0


def test_hiding_some_fields_of_a_divergence_keeps_it_typed_by_the_policys_first_field_left() -> None:
    d = diff_traces(_run("o"), _run("r", status="error", out="x", args=2))
    [div] = d.divergences
    assert div.type.value == "args_mismatch" and [f.path for f in div.fields][0] == "tool.arguments.id"
    noisy = apply_rules(d, [NoiseRule(tool="lookup", fields=("tool.arguments",))])
    [left] = d.divergences
    assert left.type.value == "status_mismatch"  # status and error_type before the output, by the policy
    assert [f.path for f in left.fields] == [f.path for f in div.fields if not f.path.startswith("tool.arguments")]
    assert d.row_divergence[left.row] is left and d.divergent_rows == [left.row]
    assert noisy == Noisy(1, 0) and d.ignored_by_config == 1
    apply_rules(d, [NoiseRule(fields=("status", "error_type"))])
    assert d.divergences[0].type.value == "output_mismatch" and d.ignored_by_config == 3  # the count adds up


def test_hiding_every_field_of_a_divergence_removes_it_from_the_list_the_rows_and_the_navigation() -> None:
    d = diff_traces(_run("o"), _run("r", out="10:07", text="fine"))
    rows = [x.row for x in d.divergences]
    assert len(rows) == 2
    noisy = apply_rules(d, [NoiseRule(tool="lookup", fields=("tool.output",))])
    assert noisy == Noisy(1, 1) and [x.row for x in d.divergences] == rows[:1]
    assert d.row_divergence[rows[1]] is None and d.divergent_rows == rows[:1]


def test_a_rule_for_other_spans_leaves_a_divergence_as_it_was() -> None:
    d = diff_traces(_run("o"), _run("r", out="10:07"))
    [div] = d.divergences
    assert apply_rules(d, [NoiseRule(kind="llm"), NoiseRule(tool="lookup", fields=("tool.arguments",))]) == Noisy()
    assert d.divergences == [div] and d.divergences[0] is div and d.ignored_by_config == 0


def test_a_one_sided_span_is_hidden_only_by_a_whole_span_rule_and_counts_at_least_one_field() -> None:
    d = diff_traces(_run("o"), _run("r", extra=True))
    [div] = d.divergences
    assert div.original is None and div.type.value == "unrecorded_call"
    assert apply_rules(d, [NoiseRule(tool="audit", fields=("tool.output",))]) == Noisy()
    assert d.divergences == [div]
    noisy = apply_rules(d, [NoiseRule(tool="audit")])
    assert noisy == Noisy(max(len(div.fields), 1), 1) and d.divergences == [] and d.divergent_rows == []
    assert d.row_divergence[div.row] is None
    d = diff_traces(_run("o", extra=True), _run("r"))  # missing on the replay's side: the same rule
    assert apply_rules(d, [NoiseRule(tool="audit")]).divergences == 1 and d.divergences == []


def test_a_rule_applies_when_either_sides_span_matches_it() -> None:
    """A pair of one tool whose span was renamed: a rule naming either span name hides the pair's fields."""
    def run(prefix: str, name: str, out: int) -> object:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", input={"q": "time"})
        t.add("tool", name, parent=root, tool_name="lookup", arguments={"id": 1}, output={"value": out})
        return t.trace()

    for name in ("lookup", "Lookup"):
        d = diff_traces(run("o", "lookup", 1), run("r", "Lookup", 2))
        [div] = d.divergences
        assert (div.original.name, div.replay.name) == ("lookup", "Lookup")
        assert apply_rules(d, [NoiseRule(name=name)]) == Noisy(1, 1) and d.divergences == []
    d = diff_traces(run("o", "lookup", 1), run("r", "Lookup", 2))
    assert apply_rules(d, [NoiseRule(name="other")]) == Noisy() and len(d.divergences) == 1


def test_the_role_selector_hides_a_users_rewording_in_a_diff_and_not_the_answer() -> None:
    d = diff_traces(_run("o"), _run("r", question="Time, please?", text="fine"))
    [div] = d.divergences
    assert div.type.value == "input_mismatch"
    noisy = apply_rules(d, [NoiseRule(kind="llm", fields=("llm.messages[role=user]",))])
    [left] = d.divergences
    assert left.type.value == "decision_mismatch" and all(f.path.startswith("llm.output") for f in left.fields)
    assert noisy.fields == len(div.fields) - len(left.fields) > 0


def _pair(output: object, args: int, **attrs: object) -> tuple[object, object]:
    def run(prefix: str, out: object, arg: int, attributes: dict) -> object:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", input={"q": "time"})
        t.add("tool", "search", parent=root, arguments={"q": arg}, output=out, attributes=attributes)
        return t.trace()

    return run("o", [{"tags": ["a"]}], 1, {}), run("r", output, args, dict(attrs))


@pytest.mark.parametrize("output,path", [([{"tags": ["b"]}], "tool.output[0].tags[0]"), ("none", "tool.output")])
def test_the_type_left_is_read_from_any_field_path_of_the_kind(output: object, path: str) -> None:
    """The type of what is left comes from the policy entry its path starts with, however deep the path
    and whatever indexes it holds."""
    d = diff_traces(*_pair(output, 2))
    assert d.divergences[0].type.value == "args_mismatch"
    apply_rules(d, [NoiseRule(fields=("tool.arguments",))])
    [left] = d.divergences
    assert [f.path for f in left.fields] == [path] and left.type.value == "output_mismatch"


def test_a_call_the_harness_served_nothing_for_stays_an_unrecorded_call_when_its_output_is_hidden() -> None:
    """The harness marks a replayed call it had no recording for (``replay.divergence: unrecorded_call``);
    with its arguments changed the pair is that ``unrecorded_call``. Hiding its output (a clock's value)
    leaves the argument change: still the unrecorded call, not an ``args_mismatch``."""
    d = diff_traces(*_pair([{"tags": ["b"]}], 2, **{"replay.divergence": "unrecorded_call"}))
    assert d.divergences[0].type.value == "unrecorded_call"
    apply_rules(d, [NoiseRule(fields=("tool.output",))])
    [left] = d.divergences
    assert [f.path for f in left.fields] == ["tool.arguments.q"] and left.type.value == "unrecorded_call"
    d = diff_traces(*_pair([{"tags": ["b"]}], 2, **{"replay.divergence": "unrecorded_call"}))
    apply_rules(d, [NoiseRule(fields=("tool.arguments",))])  # the output left: an output change
    assert d.divergences[0].type.value == "output_mismatch"


def test_two_roots_of_two_kinds_hidden_down_to_their_kind_change_keep_their_type() -> None:
    """An OpenInference trace whose root is an LLM call against a replay whose root is the agent: the roots
    are paired (the run's), their fields are the kind change then the LLM's. Hiding the LLM's fields
    leaves the kind change, typed as the pair was."""
    t = TraceBuilder("o")
    root = t.add("llm", "run", model="m", messages=[{"role": "user", "content": "hi"}],
                 output={"role": "assistant", "content": "a"})
    step = t.add("other", "step", parent=root, input={})
    t.add("tool", "lookup", parent=step, arguments={"id": 1}, output=1)
    original = replace(t.trace(), format="openinference")
    t = TraceBuilder("r")
    root = t.add("agent", "run", input="hi", output="a")
    t.add("tool", "lookup", parent=root, arguments={"id": 1}, output=1)
    d = diff_traces(original, replace(t.trace(), format="tracetui"))
    [div] = d.divergences
    assert div.fields[0].path == "kind" and div.type.value == "input_mismatch"
    assert apply_rules(d, [NoiseRule(name="run", fields=("llm",))]) == Noisy(len(div.fields) - 1, 0)
    [left] = d.divergences
    assert [f.path for f in left.fields] == ["kind"] and left.type.value == "input_mismatch"


def test_every_divergence_is_weighed_each_hidden_one_counted_and_the_rest_kept_in_order() -> None:
    """Two extra calls a whole-span rule hides, two changed calls a field rule empties, a changed call a
    rule reaches without hiding anything, and one no rule reaches: each counted once, the rest kept."""
    def run(prefix: str, side: int) -> object:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", input={"q": 1})
        for n in range(2):
            if side:
                t.add("tool", "audit", parent=root, arguments={"n": n}, output=None)
            t.add("tool", f"clock{n}", parent=root, arguments={}, output={"now": side})
        t.add("tool", "lookup", parent=root, arguments={"id": 1}, output={"v": side})
        t.add("tool", "status", parent=root, arguments={"id": 1}, output={"v": side})
        return t.trace()

    d = diff_traces(run("o", 0), run("r", 1))
    by_name = {(x.original or x.replay).name: x for x in d.divergences}
    assert sorted(by_name) == ["audit", "clock0", "clock1", "lookup", "status"] and len(d.divergences) == 6
    audit_fields = sum(max(len(x.fields), 1) for x in d.divergences if x.original is None)
    noisy = apply_rules(d, [NoiseRule(tool="audit"), NoiseRule(fields=("tool.output.now",)),
                            NoiseRule(tool="lookup", fields=("tool.arguments",))])
    assert noisy == Noisy(audit_fields + 2, 4)
    assert [x.original.name for x in d.divergences] == ["lookup", "status"]
    assert d.divergent_rows == [x.row for x in d.divergences] and d.ignored_by_config == audit_fields + 2
