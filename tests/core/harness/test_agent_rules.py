"""The rules of core/harness/agent.py (load_agent, AgentSpec), each on an agent module written in the test.

Each test writes its agent file under its own ``tmp_path`` (a path never loaded before: a loaded file is kept in
``sys.modules`` by path), loads it with ``load_agent`` and reads the ``AgentSpec`` or the ``AgentLoadError``.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tracetui.core.errors import AgentLoadError
from tracetui.core.harness.agent import AgentSpec, load_agent, locate_agent_ref, signature_schema

ROOT = Path(__file__).resolve().parents[3]


def write(folder: Path, source: str, name: str = "agent.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def load(folder: Path, source: str, func: str = "run", name: str = "agent.py") -> AgentSpec:
    return load_agent(f"{write(folder, source, name)}:{func}")


def refused(ref: str) -> str:
    with pytest.raises(AgentLoadError) as info:
        load_agent(ref)
    return str(info.value)


def refused_source(folder: Path, source: str, func: str = "run") -> str:
    return refused(f"{write(folder, source)}:{func}")


def spec(**kw: Any) -> AgentSpec:
    return AgentSpec(ref="agent.py:run", run=lambda ctx, input: None, name="agent.run", **kw)


# --- AgentSpec ---------------------------------------------------------------------------------------------------


def test_only_a_tool_on_the_read_list_is_a_read() -> None:
    s = spec(read_tools=frozenset({"get_order"}))
    assert s.is_read("get_order") is True
    assert s.is_read("issue_refund") is False
    assert s.is_read("get_orde") is False


def test_the_tool_schema_hash_is_16_hex_digits_and_the_same_for_the_same_declarations() -> None:
    def get_order(order_id: str, verbose: bool = False) -> dict: ...

    a = spec(tools={"get_order": get_order}, read_tools=frozenset({"get_order"}))
    b = spec(tools={"get_order": get_order}, read_tools=frozenset({"get_order"}))
    h = a.tool_schema_hash()
    assert len(h) == 16 and int(h, 16) >= 0
    assert h == b.tool_schema_hash()


def test_a_sample_recordings_tool_schema_hash_still_matches_its_agent() -> None:
    # the checked-in recordings hold the hash their agent had when they were recorded: the hash's form is part of
    # the file format (a change makes every recording "stale" in strict replay)
    folder = ROOT / "sample_runs" / "scheduling"
    header = json.loads((folder / "original.jsonl").read_text(encoding="utf-8").splitlines()[0])
    agent = load_agent(f"{folder / 'agent.py'}:run")
    assert agent.tool_schema_hash() == header["tool_schema_hash"]
    assert agent.prompt_hash() == header["prompt_hash"]
    assert agent.prompt_versions() == header["prompt_versions"]


def test_declared_tool_schemas_are_hashed_instead_of_the_signatures() -> None:
    def v1(order_id: str) -> dict: ...

    def v2(order_id: str, extra: int = 1) -> dict: ...

    schemas = {"get_order": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
    declared_v1 = spec(tools={"get_order": v1}, tool_schemas=schemas)
    declared_v2 = spec(tools={"get_order": v2}, tool_schemas=dict(schemas))
    assert declared_v1.tool_schema_hash() == declared_v2.tool_schema_hash()
    assert spec(tools={"get_order": v1}).tool_schema_hash() != spec(tools={"get_order": v2}).tool_schema_hash()
    other = spec(tools={"get_order": v1}, tool_schemas={"get_order": {"type": "object"}})
    assert other.tool_schema_hash() != declared_v1.tool_schema_hash()
    # declared but empty: still the declaration (no tools), not the live tools' signatures
    assert spec(tools={"get_order": v1}, tool_schemas={}).tool_schema_hash() == spec().tool_schema_hash()


def test_renaming_adding_or_retyping_a_parameter_changes_the_tool_schema_hash() -> None:
    def base(order_id: str, limit: int = 5) -> None: ...

    def renamed(order: str, limit: int = 5) -> None: ...

    def added(order_id: str, limit: int = 5, page: int = 1) -> None: ...

    def retyped(order_id: int, limit: int = 5) -> None: ...

    def new_default(order_id: str, limit: int = 6) -> None: ...

    def keyword_only(order_id: str, *, limit: int = 5) -> None: ...

    hashes = {spec(tools={"t": fn}).tool_schema_hash() for fn in (base, renamed, added, retyped, new_default,
                                                                   keyword_only)}
    assert len(hashes) == 6
    assert spec(tools={"t": base}).tool_schema_hash() != spec(tools={"u": base}).tool_schema_hash()


def test_moving_a_tool_between_read_and_write_or_adding_a_retriever_changes_the_tool_schema_hash() -> None:
    def get_order(order_id: str) -> None: ...

    write_only = spec(tools={"get_order": get_order})
    as_read = spec(tools={"get_order": get_order}, read_tools=frozenset({"get_order"}))
    with_retriever = spec(tools={"get_order": get_order}, retrievers={"kb": lambda q: []})
    assert len({write_only.tool_schema_hash(), as_read.tool_schema_hash(), with_retriever.tool_schema_hash()}) == 3
    # the read list and the retrievers are sets: their order does not count
    two = spec(read_tools=frozenset(["a", "b"]), retrievers={"x": len, "y": len})
    assert two.tool_schema_hash() == spec(read_tools=frozenset(["b", "a"]), retrievers={"y": len, "x": len}).tool_schema_hash()


def test_the_prompt_hash_is_none_without_prompts_and_changes_with_a_version_or_a_text() -> None:
    assert spec().prompt_hash() is None
    v1 = spec(prompts={"sys": {"version": "v1", "text": "Be kind."}})
    h = v1.prompt_hash()
    assert isinstance(h, str) and len(h) == 16 and int(h, 16) >= 0
    assert h == spec(prompts={"sys": {"text": "Be kind.", "version": "v1"}}).prompt_hash()
    assert h != spec(prompts={"sys": {"version": "v2", "text": "Be kind."}}).prompt_hash()
    assert h != spec(prompts={"sys": {"version": "v1", "text": "Be brief."}}).prompt_hash()
    assert h != spec(prompts={"other": {"version": "v1", "text": "Be kind."}}).prompt_hash()


def test_prompt_versions_are_each_prompts_version_as_text_and_skip_a_prompt_without_one() -> None:
    s = spec(prompts={"a": {"version": "v3", "text": "x"}, "b": {"version": 2, "text": "y"}, "c": {"text": "z"}})
    assert s.prompt_versions() == {"a": "v3", "b": "2"}
    assert spec().prompt_versions() == {}


# --- signature_schema --------------------------------------------------------------------------------------------


def test_a_signature_schema_lists_each_parameter_with_its_kind_default_and_annotation_as_text() -> None:
    def fn(a, b, c=None, *rest, d=3, **kw) -> None: ...

    fn.__annotations__ = {"b": int, "c": "Custom"}  # a type, and a text (a forward reference)
    assert signature_schema(fn) == [
        {"name": "a", "kind": "POSITIONAL_OR_KEYWORD"},
        {"name": "b", "kind": "POSITIONAL_OR_KEYWORD", "annotation": repr(int)},
        {"name": "c", "kind": "POSITIONAL_OR_KEYWORD", "default": "None", "annotation": "Custom"},
        {"name": "rest", "kind": "VAR_POSITIONAL"},
        {"name": "d", "kind": "KEYWORD_ONLY", "default": "3"},
        {"name": "kw", "kind": "VAR_KEYWORD"},
    ]
    assert signature_schema(lambda: None) == []


def test_a_signature_schema_of_a_callable_without_a_signature_is_its_name_else_its_type() -> None:
    assert signature_schema(iter) == "iter"  # a builtin inspect cannot read

    class Odd:
        __signature__ = "not a signature"  # inspect.signature raises TypeError

        def __call__(self) -> None: ...

    assert signature_schema(Odd()) == repr(Odd)


# --- load_agent: the reference -----------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["agent.py", "agent.py:", ":run", "", "run"])
def test_a_reference_without_a_module_and_a_function_is_refused_with_an_example(ref: str) -> None:
    assert refused(ref) == (f"agent {ref!r}: expected module:function or path/to/file.py:function "
                            "(for example agent.py:run)")


def test_a_missing_agent_file_is_named() -> None:
    assert refused("no/such/agent.py:run") == "agent file no/such/agent.py not found"
    assert refused("missing_agent_file.py:run") == "agent file missing_agent_file.py not found"


def test_an_existing_file_without_the_py_suffix_is_a_path_not_a_module(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentfile").write_text("def run(ctx, input):\n    return 1\n", encoding="utf-8")
    # a path (no module of that name is imported), which Python cannot load as a module without the suffix
    assert refused("agentfile:run") == "agent file agentfile cannot be loaded as a Python module"


def test_a_file_reference_is_named_after_the_file_and_the_function(tmp_path: Path) -> None:
    s = load(tmp_path, "def run(ctx, input):\n    return input\n", name="refund_desk.py")
    assert s.name == "refund_desk.run"
    assert s.ref == f"{tmp_path / 'refund_desk.py'}:run"
    assert s.run(None, 5) == 5


def test_a_module_reference_is_imported_from_the_current_folder_and_named_after_the_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "def go(ctx, input):\n    return 'here'\n", name="agent_rules_mod_a.py")
    # neither the folder nor "" on sys.path: load_agent puts the current folder first
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "agent_rules_mod_a", raising=False)
    s = load_agent("agent_rules_mod_a:go")
    assert s.name == "agent_rules_mod_a.go" and s.run(None, None) == "here"
    assert sys.path[0] == str(tmp_path)
    monkeypatch.delitem(sys.modules, "agent_rules_mod_a", raising=False)


def test_a_missing_module_is_named_with_the_folder_it_was_looked_for_in(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert refused("agent_rules_no_such_mod:run") == (
        f"agent module 'agent_rules_no_such_mod' not found (looked in {os.getcwd()} and sys.path)")
    # a package that exists without the submodule: the submodule is what is missing
    assert refused("json.agent_rules_no_such_sub:run") == (
        f"agent module 'json.agent_rules_no_such_sub' not found (looked in {os.getcwd()} and sys.path)")


def test_a_module_whose_own_import_is_missing_reports_that_import_not_the_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    write(tmp_path, "import agent_rules_missing_dep\n\ndef run(ctx, input):\n    pass\n", name="agent_rules_mod_b.py")
    message = refused("agent_rules_mod_b:run")
    assert message.startswith("agent 'agent_rules_mod_b:run': importing agent_rules_mod_b raised ModuleNotFoundError: "
                              "No module named 'agent_rules_missing_dep' at ")
    assert message.endswith(f"{tmp_path / 'agent_rules_mod_b.py'}:1")
    monkeypatch.delitem(sys.modules, "agent_rules_mod_b", raising=False)


def test_an_agent_raising_on_import_is_reported_with_the_file_and_line_it_raised_at(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        X = 1


        def helper():
            raise ValueError("bad config\\nsecond line")


        helper()
        """)
    message = refused(f"{path}:run")
    assert message == (f"agent '{path}:run': importing {path} raised ValueError: bad config\nsecond line "
                       f"at {path}:5")


def test_an_agent_that_failed_to_import_is_imported_again_once_fixed(tmp_path: Path) -> None:
    path = write(tmp_path, "raise RuntimeError('not yet')\n")
    assert "raised RuntimeError: not yet" in refused(f"{path}:run")
    write(tmp_path, "def run(ctx, input):\n    return 'fixed'\n")
    assert load_agent(f"{path}:run").run(None, None) == "fixed"


def test_an_agent_file_is_executed_once_however_often_it_is_loaded(tmp_path: Path) -> None:
    path = write(tmp_path, "import builtins\nbuiltins.agent_rules_loads = getattr(builtins, 'agent_rules_loads', 0) + 1\n"
                           "def run(ctx, input):\n    pass\n")
    import builtins

    try:
        first = load_agent(f"{path}:run")
        second = load_agent(f"{path}:run")
        assert builtins.agent_rules_loads == 1  # type: ignore[attr-defined]
        assert first.run is second.run
    finally:
        if hasattr(builtins, "agent_rules_loads"):
            del builtins.agent_rules_loads  # type: ignore[attr-defined]


def test_an_agent_file_imports_its_neighbours_and_leaves_sys_path_as_it_was(tmp_path: Path) -> None:
    write(tmp_path, "VALUE = 'neighbour'\n", name="agent_rules_neighbour.py")
    before = list(sys.path)
    s = load(tmp_path, "from agent_rules_neighbour import VALUE\n\ndef run(ctx, input):\n    return VALUE\n")
    assert s.run(None, None) == "neighbour"
    assert sys.path == before
    sys.modules.pop("agent_rules_neighbour", None)


def test_an_agent_file_in_a_folder_already_on_sys_path_leaves_it_there(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    before = list(sys.path)
    load(tmp_path, "def run(ctx, input):\n    pass\n")
    assert sys.path == before
    path = write(tmp_path, "raise KeyError('x')\n", name="broken.py")
    refused(f"{path}:run")
    assert sys.path == before


def test_a_keyboard_interrupt_while_importing_the_agent_is_not_turned_into_a_load_error(tmp_path: Path) -> None:
    path = write(tmp_path, "raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        load_agent(f"{path}:run")


def test_a_system_exit_while_importing_the_agent_is_a_load_error(tmp_path: Path) -> None:
    path = write(tmp_path, "raise SystemExit(3)\n")
    assert refused(f"{path}:run") == f"agent '{path}:run': importing {path} raised SystemExit: 3 at {path}:1"


# --- load_agent: the function ------------------------------------------------------------------------------------


def test_a_missing_function_lists_the_public_functions_the_module_defines(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        from os.path import join


        def zeta(ctx, input): pass
        def alpha(ctx, input): pass
        def _private(ctx, input): pass
        class Agent: pass
        CONSTANT = 3
        """)
    assert refused(f"{path}:run") == f"agent '{path}:run': {path} has no 'run'; functions there: Agent, alpha, zeta"


def test_a_missing_function_lists_at_most_twelve_names_and_no_hint_when_there_is_none(tmp_path: Path) -> None:
    names = [f"f{i:02d}" for i in range(14)]
    path = write(tmp_path, "".join(f"def {n}(ctx, input): pass\n" for n in names))
    assert refused(f"{path}:run") == f"agent '{path}:run': {path} has no 'run'; functions there: {', '.join(names[:12])}"
    empty = write(tmp_path, "X = 1\n", name="empty.py")
    assert refused(f"{empty}:run") == f"agent '{empty}:run': {empty} has no 'run'"


def test_a_function_name_that_is_not_callable_is_refused_with_its_type(tmp_path: Path) -> None:
    path = write(tmp_path, "run = 42\n")
    assert refused(f"{path}:run") == f"agent '{path}:run': 'run' is a int, not a function run(ctx, input)"


@pytest.mark.parametrize("params", ["ctx", "ctx, input, extra", "*, ctx, input"])
def test_a_function_that_cannot_take_ctx_and_input_is_refused_with_its_signature(tmp_path: Path, params: str) -> None:
    path = write(tmp_path, f"def run({params}):\n    pass\n")
    assert refused(f"{path}:run") == f"agent '{path}:run': run({params}) cannot be called as run(ctx, input)"


def test_a_function_with_defaults_or_varargs_or_without_a_signature_is_accepted(tmp_path: Path) -> None:
    assert load(tmp_path, "def run(ctx, input=None, *more, **kw):\n    return 1\n").run(None) == 1
    s = load(tmp_path, "run = iter\n", name="builtin_agent.py")  # no signature inspect can read: the call tells
    assert s.run is iter and s.name == "builtin_agent.iter"


# --- load_agent: the module's declarations ----------------------------------------------------------------------


def test_an_agent_without_declarations_has_empty_ones(tmp_path: Path) -> None:
    s = load(tmp_path, "def run(ctx, input):\n    pass\n")
    assert (dict(s.tools), s.read_tools, dict(s.retrievers), s.model, dict(s.model_info), dict(s.prompts),
            s.tool_schemas, dict(s.sensitive_fields), s.fixture_factory, s.code_version, dict(s.volatile_args)) == (
        {}, frozenset(), {}, None, {}, {}, None, {}, None, None, {})


def test_every_declaration_of_the_module_is_read(tmp_path: Path) -> None:
    s = load(tmp_path, """\
        def get_order(order_id): return {}
        def refund(order_id, amount): return {}
        def search(query, **kw): return []
        def model(messages, *, model, **params): return {"role": "assistant", "content": ""}
        class Store: pass

        TOOLS = {"get_order": get_order, "refund": refund}
        READ_TOOLS = ["get_order"]
        RETRIEVERS = {"kb": search}
        MODEL = model
        MODEL_INFO = {"id": "m", "version": "1", "provider": "p"}
        PROMPTS = {"sys": {"version": "v2", "text": "Be kind."}, 7: "plain text"}
        TOOL_SCHEMAS = {"get_order": {"type": "object"}}
        SENSITIVE_FIELDS = {"refund": ["iban", "name"]}
        FIXTURE = Store
        AGENT_NAME = "refund-desk"
        CODE_VERSION = 12
        VOLATILE_ARGS = {"refund": ["idempotency_key"]}

        def run(ctx, input):
            pass
        """)
    m = sys.modules[s.run.__module__]
    assert s.name == "refund-desk"
    assert s.tools == {"get_order": m.get_order, "refund": m.refund}
    assert s.read_tools == frozenset({"get_order"}) and s.is_read("get_order") and not s.is_read("refund")
    assert s.retrievers == {"kb": m.search}
    assert s.model is m.model
    assert s.model_info == {"id": "m", "version": "1", "provider": "p"}
    assert s.prompts == {"sys": {"version": "v2", "text": "Be kind."}, "7": {"text": "plain text"}}
    assert s.tool_schemas == {"get_order": {"type": "object"}}
    assert s.sensitive_fields == {"refund": frozenset({"iban", "name"})}
    assert s.fixture_factory is m.Store
    assert s.code_version == "12"
    assert s.volatile_args == {"refund": ["idempotency_key"]}
    # the spec holds copies: the module's declarations changing later do not change it
    m.TOOLS["later"] = len
    m.MODEL_INFO["id"] = "other"
    m.TOOL_SCHEMAS["later"] = {}
    assert "later" not in s.tools and s.model_info["id"] == "m" and "later" not in s.tool_schemas


def test_a_declaration_on_the_agent_function_wins_over_the_modules(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        PROMPTS = {"sys": {"version": "v1", "text": "old"}}
        AGENT_NAME = "desk"
        CODE_VERSION = "c1"

        def run(ctx, input): pass
        def run_fixed(ctx, input): pass
        run_fixed.PROMPTS = {"sys": {"version": "v2", "text": "new"}}
        run_fixed.CODE_VERSION = "c2"
        """)
    old, fixed = load_agent(f"{path}:run"), load_agent(f"{path}:run_fixed")
    assert old.prompt_versions() == {"sys": "v1"} and fixed.prompt_versions() == {"sys": "v2"}
    assert old.code_version == "c1" and fixed.code_version == "c2"
    assert old.name == fixed.name == "desk"  # not set on the function: the module's


def test_read_tools_may_be_a_set_list_or_tuple_and_are_kept_as_text(tmp_path: Path) -> None:
    for i, value in enumerate(['{"a"}', 'frozenset({"a"})', '["a", 2]', '("a",)']):
        s = load(tmp_path, f"READ_TOOLS = {value}\ndef run(ctx, input): pass\n", name=f"reads{i}.py")
        assert "a" in s.read_tools and all(isinstance(t, str) for t in s.read_tools)
    assert load(tmp_path, "READ_TOOLS = [2]\ndef run(ctx, input): pass\n", name="reads_n.py").is_read("2")


def test_an_empty_code_version_or_agent_name_is_none_or_the_default(tmp_path: Path) -> None:
    s = load(tmp_path, "CODE_VERSION = ''\nAGENT_NAME = ''\ndef run(ctx, input): pass\n", name="blank.py")
    assert s.code_version is None and s.name == "blank.run"


@pytest.mark.parametrize(("declaration", "message"), [
    ("TOOLS = [len]", "TOOLS must be a mapping of tool name to callable, not list"),
    ("TOOLS = {'get': 3}", "TOOLS['get'] is not callable"),
    ("READ_TOOLS = 'get'", "READ_TOOLS must be a set of tool names, not str"),
    ("RETRIEVERS = [len]", "RETRIEVERS must be a mapping of index name to callable, not list"),
    ("MODEL = 'gpt'", "MODEL must be callable MODEL(messages, *, model, **params)"),
    ("MODEL_INFO = 'gpt'", "MODEL_INFO must be a mapping {id, version, provider}, not str"),
    ("PROMPTS = ['x']", "PROMPTS must be a mapping of prompt id to {version, text}, not list"),
    ("SENSITIVE_FIELDS = ['iban']", "SENSITIVE_FIELDS must be a mapping of tool name to field names, not list"),
    ("FIXTURE = {}", "FIXTURE must be a factory (a class or function) of a fixture store"),
    ("TOOL_SCHEMAS = ['x']", "TOOL_SCHEMAS must be a mapping of tool name to JSON schema, not list"),
    ("VOLATILE_ARGS = {'t': 'key'}", "VOLATILE_ARGS must map each tool name to a list of argument paths"),
])
def test_a_declaration_of_the_wrong_type_is_refused_naming_it(tmp_path: Path, declaration: str, message: str) -> None:
    path = write(tmp_path, f"{declaration}\ndef run(ctx, input): pass\n")
    assert refused(f"{path}:run").startswith(f"agent '{path}:run': {message}")


# --- locate_agent_ref --------------------------------------------------------------------------------------------


def test_a_recorded_file_reference_is_found_in_a_folder_above_the_trace(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "agents").mkdir(parents=True)
    (project / "agents" / "desk.py").write_text("def run(ctx, input): pass\n", encoding="utf-8")
    (project / "runs" / "2026" / "nov").mkdir(parents=True)
    trace = project / "runs" / "2026" / "nov" / "orig.jsonl"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert locate_agent_ref("agents/desk.py:run", f"{trace}#run-2") == "../project/agents/desk.py:run"
    # a folder name alone (no .py) is a path too
    assert locate_agent_ref("agents/desk.py:run", str(trace)) == "../project/agents/desk.py:run"


def test_a_found_reference_is_absolute_when_that_is_shorter_than_the_relative_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "desk.py").write_text("def run(ctx, input): pass\n", encoding="utf-8")
    deep = tmp_path.joinpath(*[f"level{i}" for i in range(40)])
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    found = locate_agent_ref("desk.py:run", str(tmp_path / "orig.jsonl"))
    assert found == f"{tmp_path / 'desk.py'}:run"


def test_a_file_reference_without_the_py_suffix_is_looked_for_too(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "agentfile").write_text("", encoding="utf-8")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert locate_agent_ref("pkg/agentfile:run", str(tmp_path / "t.jsonl")) == "../pkg/agentfile:run"
    # a module name is never looked for, even when a file of that name is there
    (tmp_path / "desk").write_text("", encoding="utf-8")
    assert locate_agent_ref("desk:run", str(tmp_path / "t.jsonl")) == "desk:run"


def test_an_absolute_or_working_or_unfound_reference_is_returned_unchanged(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "desk.py").write_text("", encoding="utf-8")
    trace = str(tmp_path / "sub" / "t.jsonl")
    assert locate_agent_ref("/nowhere/desk.py:run", trace) == "/nowhere/desk.py:run"
    assert locate_agent_ref("sub/desk.py:run", trace) == "sub/desk.py:run"  # works from here
    assert locate_agent_ref("desk.py", trace) == "desk.py"  # no ':'
    assert locate_agent_ref("other/desk.py:run", trace) == "other/desk.py:run"  # found nowhere
    # empty target: unchanged
    assert locate_agent_ref(":run", trace) == ":run"



def test_a_module_raising_a_module_not_found_error_of_its_own_reports_it_as_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    write(tmp_path, "raise ModuleNotFoundError('plugin registry missing')\n", name="agent_rules_mod_c.py")
    message = refused("agent_rules_mod_c:run")
    assert message == ("agent 'agent_rules_mod_c:run': importing agent_rules_mod_c raised ModuleNotFoundError: "
                       f"plugin registry missing at {tmp_path / 'agent_rules_mod_c.py'}:1")
    monkeypatch.delitem(sys.modules, "agent_rules_mod_c", raising=False)


def test_a_reference_whose_path_holds_a_colon_is_split_at_its_last_colon(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    odd = tmp_path / "team:a"
    odd.mkdir()
    path = write(odd, "def run(ctx, input):\n    return 7\n")
    s = load_agent(f"{path}:run")
    assert s.run(None, None) == 7 and s.name == "agent.run"
    # locate_agent_ref splits the same way: the file part is "team:a/desk.py"
    (odd / "desk.py").write_text("", encoding="utf-8")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert locate_agent_ref("team:a/desk.py:run", str(tmp_path / "t.jsonl")) == "../team:a/desk.py:run"


def test_a_module_reference_is_named_after_the_whole_dotted_module(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "agent_rules_pkg").mkdir()
    (tmp_path / "agent_rules_pkg" / "__init__.py").write_text("", encoding="utf-8")
    write(tmp_path / "agent_rules_pkg", "def run(ctx, input):\n    return 1\n", name="desk.py")
    assert load_agent("agent_rules_pkg.desk:run").name == "agent_rules_pkg.desk.run"
    for name in ("agent_rules_pkg.desk", "agent_rules_pkg"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_missing_function_hint_skips_callables_without_a_module(tmp_path: Path) -> None:
    # str.upper has no __module__: not the module's own function, and no error reading it
    path = write(tmp_path, "upper = str.upper\ndef helper(ctx, input): pass\n")
    assert refused(f"{path}:run") == f"agent '{path}:run': {path} has no 'run'; functions there: helper"


def test_the_current_folder_is_not_added_when_the_empty_entry_already_stands_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "def run(ctx, input):\n    return 2\n", name="agent_rules_mod_d.py")
    monkeypatch.setattr(sys, "path", [""] + [p for p in sys.path if p not in ("", str(tmp_path))])
    before = list(sys.path)
    assert load_agent("agent_rules_mod_d:run").run(None, None) == 2
    assert sys.path == before
    monkeypatch.delitem(sys.modules, "agent_rules_mod_d", raising=False)


def test_an_agent_files_neighbour_wins_over_a_module_of_the_same_name_elsewhere_on_sys_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere, mine = tmp_path / "elsewhere", tmp_path / "mine"
    elsewhere.mkdir()
    mine.mkdir()
    write(elsewhere, "VALUE = 'elsewhere'\n", name="agent_rules_shadow.py")
    write(mine, "VALUE = 'neighbour'\n", name="agent_rules_shadow.py")
    monkeypatch.syspath_prepend(str(elsewhere))
    monkeypatch.delitem(sys.modules, "agent_rules_shadow", raising=False)
    s = load(mine, "from agent_rules_shadow import VALUE\n\ndef run(ctx, input):\n    return VALUE\n")
    assert s.run(None, None) == "neighbour"
    monkeypatch.delitem(sys.modules, "agent_rules_shadow", raising=False)


def test_an_agent_that_removed_itself_from_sys_modules_and_raised_reports_its_own_error(tmp_path: Path) -> None:
    path = write(tmp_path, "import sys\ndel sys.modules[__name__]\nraise LookupError('gone')\n")
    assert refused(f"{path}:run") == f"agent '{path}:run': importing {path} raised LookupError: gone at {path}:3"


def test_the_place_an_import_error_came_from_is_a_real_file_not_the_import_machinery(tmp_path: Path) -> None:
    path = write(tmp_path, "import importlib\nimportlib.import_module('agent_rules_nowhere_mod')\n")
    message = refused(f"{path}:run")
    assert "raised ModuleNotFoundError: No module named 'agent_rules_nowhere_mod' at " in message
    where = message.rsplit(" at ", 1)[1]
    assert "<frozen" not in where and os.path.isfile(where.rsplit(":", 1)[0]), where


def test_a_found_reference_of_the_same_length_either_way_is_the_absolute_one(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # relative "../" * k + "desk.py" and absolute BASE + "/desk.py" are as long when 3k == len(BASE) + 1
    base = tmp_path / ("x" * (3 - (len(str(tmp_path)) + 2) % 3))
    assert (len(str(base)) + 1) % 3 == 0
    k = (len(str(base)) + 1) // 3
    deep = base.joinpath(*["a"] * k)
    deep.mkdir(parents=True)
    (base / "desk.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(deep)
    assert len(os.path.relpath(base / "desk.py")) == len(str(base / "desk.py"))
    assert locate_agent_ref("desk.py:run", str(base / "orig.jsonl")) == f"{base / 'desk.py'}:run"


def test_a_trace_in_a_folder_with_a_hash_in_its_name_is_looked_up_from_that_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # FILE#RUN is split as read_trace splits it (readers.split_run_ref): the run follows the last "#", and a path
    # that exists is a file even with a "#" in it (was: cut at the first "#", so the walk started above the folder)
    runs = tmp_path / "runs#2" / "nov 3"
    runs.mkdir(parents=True)
    (runs / "orig.jsonl").write_text("", encoding="utf-8")
    (runs / "desk.py").write_text("", encoding="utf-8")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    expected = "../runs#2/nov 3/desk.py:run"
    assert locate_agent_ref("desk.py:run", str(runs / "orig.jsonl")) == expected
    assert locate_agent_ref("desk.py:run", f"{runs / 'orig.jsonl'}#run-1") == expected
