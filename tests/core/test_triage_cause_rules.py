"""docs/triage.md, "Step 3": why a trial left the original's path (``triage.cause``), one test per rule, on the
divergences of runs built in the test (issue 25: the survivors of ``scripts/mutation.py cause run``,
tests/mutation_equivalents.md).

The run: the model asks for ``lookup`` (a read), then for ``then`` (a write); each side is built with the
differences a rule needs, and ``find_cause`` is given their diff and where the trial left the path.
"""

from __future__ import annotations

from typing import Any

from builders import TraceBuilder, make_span

from tracetui.core.diff import diff_traces
from tracetui.core.model import Trace
from tracetui.core.triage.cause import config_key, find_cause, header_config_changes, stale_reads
from tracetui.core.triage.path import Evidence

HEADER = {"schema": "tracetui/1", "run_id": "r1", "model": {"id": "gpt-4o"}, "tool_schema_hash": "abc",
          "prompt_versions": {"support.system": "v5"}}
ASK = [{"role": "user", "content": "refund order 5531"}]


def _asks(name: str, args: str = '{"id": 5531}') -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": name, "arguments": args}]}


def run(prefix: str, *, then: str = "refund", ask_args: str = '{"id": 5531}', args: Any = None,
        out: Any = None, read_failed: bool = False, error_attr: str | None = None, error_data: str | None = None,
        error_type: str | None = "Timeout", prompt: str = "v5", model: str = "gpt-4o", params: Any = None,
        first_words: str | None = None, decision: Any = None, kind: str = "tool", index: str | None = None,
        tool_name: str | None = None, stop: bool = False, more: bool = False) -> Trace:
    """The run: llm (asks for the read) → the read (``kind``: tool ``lookup`` or retrieval ``kb``) → [decision
    ``route`` = ``decision``] → llm (asks for ``then``) → ``then`` (a write); ``stop``: the run ends after the read;
    ``more``: one read more at the end that no model call asked for."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "support", input={"q": "refund 5531"}, output={"answer": "done"})
    llm: dict[str, Any] = {"model": model, "prompt_version": prompt, "tool_schemas_hash": "abc"}
    if params is not None:
        llm["params"] = params
    if first_words is not None:
        t.add("llm", "chat", parent=root, messages=ASK, output={"role": "assistant", "content": first_words}, **llm)
    t.add("llm", "chat", parent=root, messages=ASK, output=_asks("lookup", ask_args), **llm)
    failed: dict[str, Any] = {}
    if read_failed:
        failed = {"status": "error", "error_type": error_type}
        if error_attr is not None:
            failed["attributes"] = {"otel.status_message": error_attr}
        if error_data is not None:
            failed["error"] = error_data
    if kind == "tool":
        extra = {"tool_name": tool_name} if tool_name is not None else {}
        t.add("tool", "lookup", parent=root, arguments={"id": 5531} if args is None else args,
              output={"status": "shipped"} if out is None else out, effect="read", **extra, **failed)
    else:
        t.add("retrieval", "search", parent=root, query="refund policy", top_k=3,
              documents=[{"id": "d1"}] if out is None else out, **({"index": index} if index else {}), **failed)
    if decision is not None:
        t.add("decision", "route", parent=root, decision="route", value=decision)
    if not stop:
        t.add("llm", "chat", parent=root, messages=[*ASK, {"role": "tool", "content": "shipped"}], output=_asks(then),
              **llm)
        t.add("tool", then, parent=root, arguments={"id": 5531}, output={"ok": True}, effect="write")
    if more:
        t.add("tool", "stock", parent=root, arguments={"sku": "BK-700"}, output={"n": 4}, effect="read")
    trace = t.trace()
    trace.header = {**HEADER, "prompt_versions": {"support.system": prompt}}
    return trace


def cause(o: Trace, r: Trace, at: Evidence | None = None) -> Any:
    return find_cause(diff_traces(o, r), at)


# -- stale reads: the data moved under the run -----------------------------------------------------------------------

def reads(*spans: tuple[str, str, dict[str, Any]]) -> Trace:
    """A run of the given spans under a root: (kind, name, fields) each."""
    t = TraceBuilder("o")
    root = t.add("agent", "support", input={"q": "x"})
    for kind, name, fields in spans:
        t.add(kind, name, parent=root, **fields)
    return t.trace()


def get(order: dict[str, Any], out: Any, **more: Any) -> tuple[str, str, dict[str, Any]]:
    return ("tool", "get_order", {"arguments": order, "output": out, "effect": "read", **more})


def test_two_reads_of_the_same_key_returning_different_data_are_a_stale_read_named_on_both() -> None:
    """The first read with what it returned, then the later one; the same arguments in another key order are the
    same key; the same output, or other arguments, are no stale read."""
    run = reads(get({"id": "A-77", "v": 1}, {"status": "shipped"}), get({"v": 1, "id": "A-77"}, {"status": "lost"}))
    assert [(e.span_id, e.reason) for e in stale_reads(run)] == [
        ("o1", 'get_order {"id":"A-77","v":1} returned {"status":"shipped"}'),
        ("o2", 'a later read of the same key returned {"status":"lost"}, with no write by the run in between: the '
               "data moved under the run")]
    assert stale_reads(reads(get({"id": "A-77"}, {"s": 1}), get({"id": "A-77"}, {"s": 1}))) == []
    long = reads(get({"id": "A-77"}, {"note": "a" * 80}), get({"id": "A-77"}, {"note": "b" * 80}))
    assert [e.reason for e in stale_reads(long)] == [
        'get_order {"id":"A-77"} returned {"note":"' + "a" * 50 + "…",
        'a later read of the same key returned {"note":"' + "b" * 50 + "…, with no write by the run in between: the "
        "data moved under the run"]
    assert stale_reads(reads(get({"id": "A-77"}, {"s": 1}), get({"id": "A-78"}, {"s": 2}))) == []


def test_a_retrieval_repeated_is_stale_when_its_documents_differ() -> None:
    ask = {"query": "refund policy", "top_k": 3}
    run = reads(("retrieval", "kb", {**ask, "documents": [{"id": "d1"}]}),
                ("retrieval", "kb", {**ask, "documents": [{"id": "d2"}]}))
    assert [e.span_id for e in stale_reads(run)] == ["o1", "o2"]


def test_a_write_repeated_with_another_result_is_not_a_stale_read_nor_is_a_tool_named_like_a_kind() -> None:
    """Writes change what they return by design; a read is a read whatever its name (``decision``, ``llm``)."""
    write = {"arguments": {"id": "A-77"}, "effect": "write"}
    assert stale_reads(reads(("tool", "refund", {**write, "output": 1}), ("tool", "refund", {**write, "output": 2}))) == []
    for name in ("decision", "llm"):
        run = reads(("tool", name, {"arguments": {"id": "A-77"}, "output": 1, "effect": "read"}),
                    ("tool", name, {"arguments": {"id": "A-77"}, "output": 2, "effect": "read"}))
        assert len(stale_reads(run)) == 2, name


def test_the_run_writing_to_the_record_between_the_two_reads_explains_the_change() -> None:
    """A call marked ``effect: write``; or a call with no recorded effect that shares an argument value with the read
    (a string of 3+ characters or a number, at any depth, a list included): not stale."""
    first, second = get({"id": "A-77", "n": 5531}, {"s": 1}), get({"id": "A-77", "n": 5531}, {"s": 2})
    for between in (("tool", "cancel", {"arguments": {"x": 1}, "effect": "write"}),
                    ("tool", "cancel", {"arguments": {"order": {"id": "A-77"}}}),
                    ("tool", "cancel", {"arguments": {"orders": [5531], "note": None}}),
                    ("tool", "cancel", {"arguments": {"ref": ["A-77"], "ok": True}})):
        assert stale_reads(reads(first, between, second)) == [], between
        assert len(stale_reads(reads(between, first, second))) == 2, between  # a write before both reads


def test_a_call_that_only_looks_like_a_write_does_not_explain_the_change() -> None:
    """Not a write: a call marked ``read``; a failed call; a span that is not a tool call; a call sharing only a
    true/false, a null, a string under 3 characters, or other values only."""
    first, second = get({"id": "A-77", "n": 5531, "ok": True, "c": "EU", "z": None}, {"s": 1}), \
        get({"id": "A-77", "n": 5531, "ok": True, "c": "EU", "z": None}, {"s": 2})
    for between in (("tool", "cancel", {"arguments": {"id": "A-77"}, "effect": "read"}),
                    ("tool", "cancel", {"arguments": {"id": "A-77"}, "status": "error", "error_type": "Timeout"}),
                    ("llm", "chat", {"messages": [{"role": "user", "content": "A-77"}], "arguments": {"id": "A-77"}}),
                    ("tool", "cancel", {"arguments": {"ok": True, "c": "EU", "z": None}}),
                    ("tool", "cancel", {"arguments": {"note": "another record", "n": 12}})):
        assert len(stale_reads(reads(first, between, second))) == 2, between


def test_every_call_between_the_reads_is_looked_at_and_a_three_character_id_is_shared() -> None:
    failed = ("tool", "cancel", {"arguments": {"id": "B-1"}, "status": "error", "error_type": "Timeout"})
    write = ("tool", "cancel", {"arguments": {"x": 1}, "effect": "write"})
    assert stale_reads(reads(get({"id": "A-77"}, 1), failed, write, get({"id": "A-77"}, 2))) == []
    shared = ("tool", "cancel", {"arguments": {"ref": "A77"}})
    assert stale_reads(reads(get({"id": "A77"}, 1), shared, get({"id": "A77"}, 2))) == []


# -- the config a trial ran with: the headers ------------------------------------------------------------------------

def headed(spans: list[Any] | None = None, **header: Any) -> Trace:
    trace = Trace(spans=spans or [], path="")
    trace.header = header
    return trace


def test_the_header_fields_that_are_config_changes_by_themselves() -> None:
    """Prompt versions, model, tool-schema hash, one level deep; tool versions per tool (sorted, added or removed),
    or whole when either side is not an object; a code version, a clock or another input is not config."""
    assert header_config_changes(
        headed(model={"id": "a"}, prompt_versions={"s": "v1"}, tool_schema_hash="h1", code_version="1",
               clock={"now": "x"}, input={"q": 1}),
        headed(model={"id": "b"}, prompt_versions={"s": "v2"}, tool_schema_hash="h2", code_version="2",
               clock={"now": "y"}, input={"q": 2})) == ["prompt_versions.s", "model.id", "tool_schema_hash"]
    assert header_config_changes(headed(tool_versions={"b": "2", "a": "1", "z": "1"}),
                                 headed(tool_versions={"a": "1", "b": "3", "c": "1", "z": "1"})) == [
        "tool_versions.b", "tool_versions.c"]
    assert header_config_changes(headed(tool_versions={"a": "1"}), headed()) == ["tool_versions.a"]
    assert header_config_changes(headed(tool_versions="v1"), headed(tool_versions="v2")) == ["tool_versions"]
    assert header_config_changes(headed(tool_versions="v1"), headed(tool_versions="v1")) == []
    assert header_config_changes(headed(tool_versions={}), headed(tool_versions=None)) == ["tool_versions"]
    not_an_object = headed()
    not_an_object.header = ["model"]  # type: ignore[assignment]
    assert header_config_changes(not_an_object, headed(model="m")) == ["model"]
    assert header_config_changes(headed(model="m"), not_an_object) == ["model"]


def _system(prefix: str, prompt: str) -> list[Any]:
    t = TraceBuilder(prefix)
    t.add("llm", "chat", messages=[{"role": "system", "content": prompt}, *ASK], output="ok")
    return t.spans


def test_without_prompt_versions_a_changed_system_prompt_is_a_config_change() -> None:
    assert header_config_changes(headed(_system("o", "be brief")), headed(_system("r", "be kind"))) == [
        "system_prompt_hash"]
    assert header_config_changes(headed(_system("o", "be brief")), headed(_system("r", "be brief"))) == []
    versions = {"prompt_versions": {"s": "v1"}}
    assert header_config_changes(headed(_system("o", "be brief"), **versions),
                                 headed(_system("r", "be kind"), **versions)) == []


def test_a_config_change_is_keyed_by_what_changed_one_word_per_kind_whichever_path_showed_it() -> None:
    assert config_key(["llm.prompt_version", "prompt_versions.s", "system_prompt_hash", "llm.prompt_id"]) == \
        "config prompt"
    assert config_key(["model.id", "llm.model", "llm.provider", "model"]) == "config model"
    assert config_key(["tool_schema_hash", "llm.tool_schemas_hash"]) == "config tool_schema"
    assert config_key(["tool_versions.get_order", "tool.tool_version", "tool_versions"]) == "config tool_version"
    assert config_key(["retrieval.index_version"]) == "config index_version"
    assert config_key(["llm.params.temperature", "llm.params"]) == "config params"
    assert config_key(["tool_versions", "model.id", "llm.params"]) == "config model params tool_version"
    assert config_key(["route: decision.value"]) == "config decision route"
    assert config_key(["graph:route: decision.value"]) == "config decision graph:route"  # the name's own colon
    assert config_key(["tool.output[0].items[1]"]) == "config tool.output"


# -- find_cause: the first divergence that explains the departure ---------------------------------------------------

def _key(c: Any) -> tuple[Any, ...]:
    return (c.kind, c.rule, c.fields, c.original and c.original.span_id, c.replay and c.replay.span_id, c.key,
            c.skipped)


def test_a_changed_config_field_is_the_cause_on_both_spans_naming_the_first_three_fields() -> None:
    c = cause(run("o", model="a", prompt="v1"), run("r", model="b", prompt="v2", params={"t": 1}, then="cancel"))
    assert _key(c) == ("config", "config_field", ["llm.model", "llm.prompt_version", "llm.params"], "o1", "r1",
                       "config model params prompt", 0)
    assert c.text == "chat (llm) runs with changed llm.model, llm.prompt_version, llm.params"


def test_the_model_asking_otherwise_is_the_last_resort_worded_by_what_it_did() -> None:
    """Other calls; going on where the original stopped; stopping where it went on. Answers worded otherwise before
    it are counted as passed over."""
    c = cause(run("o", first_words="let me see"), run("r", first_words="one moment", then="cancel"))
    assert _key(c) == ("model", "model_decided", ["llm.output.tool_calls[0].name"], "o4", "r4", "model", 1)
    assert c.text == ('the model asked for other calls: chat asking for cancel {"id":5531} instead of chat asking '
                      'for refund {"id":5531}')
    went_on = cause(run("o", stop=True), run("r"))
    assert (went_on.rule, went_on.original, went_on.replay.span_id) == ("model_decided", None, "r3")
    assert went_on.text == 'the model went on where the original stopped: chat asking for refund {"id":5531}'
    assert len(went_on.fields) == 3
    stopped = cause(run("o"), run("r", stop=True))
    assert (stopped.rule, stopped.original.span_id, stopped.replay) == ("model_decided", "o3", None)
    assert stopped.text == 'the model stopped where the original went on: chat asking for refund {"id":5531}'


def test_arguments_changed_after_the_same_request_are_integration_keyed_by_the_tools_name() -> None:
    c = cause(run("o", tool_name="get_order"), run("r", tool_name="get_order", args={"id": "5531"}))
    assert _key(c) == ("integration", "coerced_arguments", ["tool.arguments.id"], "o2", "r2",
                       "integration tool get_order", 0)
    assert c.text == ('get_order {"id":5531}: the arguments differ (tool.arguments.id) while the model\'s requests '
                      "before it matched: coerced or rebuilt between the model and the tool (integration code)")


def test_a_read_that_failed_in_the_original_only_names_its_error_and_message() -> None:
    """The error type, else "an error"; the status message, else the recorded error, cut at 60 characters."""
    tail = ") and succeeded in the trial: the original decided without what it was reading"
    plain = cause(run("o", read_failed=True), run("r"))
    assert _key(plain) == ("failed_read", "failed_read", ["status", "error_type"], "o2", "r2",
                           "failed_read tool lookup", 0)
    assert plain.text == 'lookup {"id":5531} failed in the original (Timeout' + tail
    long = cause(run("o", read_failed=True, error_attr="x" * 80, error_data="gone"), run("r"))
    assert long.text == 'lookup {"id":5531} failed in the original (Timeout: "' + "x" * 58 + "…" + tail
    data = cause(run("o", read_failed=True, error_data="gone", error_type=None), run("r"))
    assert data.text == 'lookup {"id":5531} failed in the original (an error: "gone"' + tail


def test_a_read_returning_other_data_or_failing_in_the_trial_only_is_moved_data() -> None:
    c = cause(run("o", kind="retrieval", index="kb"), run("r", kind="retrieval", index="kb", out=[{"id": "d2"}]))
    assert _key(c) == ("data", "moved_data", ["retrieval.documents[0].id"], "o2", "r2", "data retrieval kb", 0)
    assert c.text == ('search "refund policy": the original read returned data the trial\'s read does not '
                      "(retrieval.documents[0].id); stale or moving data")
    assert cause(run("o", kind="retrieval"), run("r", kind="retrieval", out=[])).key == "data retrieval search"
    failed = cause(run("o"), run("r", read_failed=True))
    assert (failed.rule, failed.fields) == ("moved_data", ["status", "error_type"])


def test_a_decision_differing_while_everything_before_matched_is_a_rule_change() -> None:
    c = cause(run("o", decision="a"), run("r", decision="b"))
    assert _key(c) == ("config", "decision_changed", ["route: decision.value"], "o3", "r3",
                       "config decision route", 0)
    assert c.text == "decision route differs while everything before it matched: a rule changed"


def test_a_cause_names_at_most_three_fields_and_counts_the_rewordings_passed_before_it() -> None:
    """A config change on the read after an answer worded otherwise: the config cause, one rewording passed over (not
    a stop); four config fields or four output fields changed: the first three named."""
    o, r = run("o", first_words="let me see"), run("r", first_words="one moment")
    r.spans[3].data = {**r.spans[3].data, "tool_version": "2"}
    c = cause(o, r)
    assert (c.kind, c.fields, c.original.span_id, c.skipped) == ("config", ["tool.tool_version"], "o3", 1)
    four = run("r", model="b", prompt="v2", params={"t": 1}, then="cancel")
    four.spans[1].data = {**four.spans[1].data, "provider": "azure"}
    c = cause(run("o"), four)
    assert len(c.fields) == 4 and c.text == f"chat (llm) runs with changed {', '.join(c.fields[:3])}"
    moved = cause(run("o", out={"a": 1, "b": 1, "c": 1, "d": 1}), run("r", out={"a": 2, "b": 2, "c": 2, "d": 2}))
    assert moved.text == ('lookup {"id":5531}: the original read returned data the trial\'s read does not '
                          "(tool.output.a, tool.output.b, tool.output.c); stale or moving data")


def test_a_departure_on_the_originals_side_bounds_the_search_by_the_originals_span() -> None:
    """Where a trial stopped, the departure is the original's call: divergences after it (a later read that failed in
    the original) are consequences, not the cause."""
    o, r = run("o", more=True), run("r", more=True, then="cancel")
    o.spans[-1] = make_span("tool", "stock", span_id=o.spans[-1].span_id, parent_id=o.spans[-1].parent_id,
                            seq=o.spans[-1].seq, start_ns=o.spans[-1].start_ns, end_ns=o.spans[-1].end_ns,
                            arguments={"sku": "BK-700"}, output=None, effect="read", status="error",
                            error_type="Timeout")
    assert cause(o, r).rule == "failed_read"  # looking at every divergence
    c = cause(o, r, Evidence("o3", "where it left", side="original"))
    assert (c.rule, c.original.span_id) == ("model_decided", "o3")


def _failing_stock(o: Trace) -> Trace:
    """``o`` with its last span (the ``stock`` read of ``more=True``) failed."""
    s = o.spans[-1]
    o.spans[-1] = make_span("tool", "stock", span_id=s.span_id, parent_id=s.parent_id, seq=s.seq, start_ns=s.start_ns,
                            end_ns=s.end_ns, arguments={"sku": "BK-700"}, output=None, effect="read",
                            status="error", error_type="Timeout")
    return o


def test_after_the_model_asked_otherwise_a_changed_read_or_decision_is_a_consequence_and_the_search_goes_on() -> None:
    """The model asked for other arguments first: the read's other arguments, other data or the decision's other value
    after it are not the cause; a later read that failed in the original only still is; else the model."""
    asked = '{"id": 1}'
    assert cause(run("o"), run("r", ask_args=asked, out={"status": "lost"})).rule == "model_decided"
    assert cause(run("o", decision="a"), run("r", ask_args=asked, decision="b")).rule == "model_decided"
    for changed in ({"args": {"id": 1}}, {"out": {"status": "lost"}}):
        c = cause(_failing_stock(run("o", more=True)), run("r", more=True, ask_args=asked, **changed))
        assert (c.rule, c.original.span_id) == ("failed_read", "o5"), changed


def test_every_cause_counts_the_rewordings_before_it_and_names_three_fields_at_most() -> None:
    words = {"first_words": "let me see"}, {"first_words": "one moment"}
    four = {"a": 1, "b": 1, "c": 1, "d": 1}, {"a": 2, "b": 2, "c": 2, "d": 2}
    for o_kw, r_kw, rule in (({"args": four[0]}, {"args": four[1]}, "coerced_arguments"),
                             ({"read_failed": True, "out": four[0]}, {"out": four[1]}, "failed_read"),
                             ({"out": four[0]}, {"out": four[1]}, "moved_data"),
                             ({"decision": "a"}, {"decision": "b"}, "decision_changed")):
        c = cause(run("o", **words[0], **o_kw), run("r", **words[1], **r_kw))
        assert (c.rule, c.skipped) == (rule, 1)
        assert len(c.fields) == (1 if rule == "decision_changed" else 3), rule
    c = cause(run("o", decision={"a": 1, "b": 1}), run("r", decision={"a": 2, "b": 2}))
    assert c.fields == ["route: decision.value.a, decision.value.b"]
