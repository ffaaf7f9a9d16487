"""The project's harness settings (``core/harness/project.py``), on ``pyproject.toml`` files written in the test
(issue 25, round 8).

The nearest ``pyproject.toml`` from the start folder upwards is the project's (a nearer one without a
``[tool.tracetui]`` table still hides a farther one); ``read_tools`` is a list of tool names, ``volatile`` a table of
tool name to argument paths (non-empty strings); anything else is a ``HarnessError`` naming the file and the field.
"""

from __future__ import annotations

import pytest

from tracetui.core.errors import HarnessError
from tracetui.core.harness.project import check_volatile, project_read_tools, project_table, project_volatile


@pytest.fixture
def project(tmp_path):
    def write(text: str, folder=tmp_path):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pyproject.toml").write_text(text)
        return str(folder / "pyproject.toml")

    return write


def test_no_pyproject_is_no_table_no_read_tools_and_no_volatile_arguments(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert project_table(str(tmp_path)) == (None, {})
    assert project_table() == (None, {})
    assert project_read_tools(str(tmp_path)) == set()
    assert project_volatile(str(tmp_path)) == {}


def test_the_nearest_pyproject_above_the_start_folder_is_the_projects(project, tmp_path):
    path = project('[tool.tracetui]\nread_tools = ["get_weather"]\n[tool.tracetui.replay]\nx = 1\n')
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    assert project_table(str(deep)) == (path, {"read_tools": ["get_weather"], "replay": {"x": 1}})
    assert project_read_tools(str(deep)) == {"get_weather"}
    nearer = project('[project]\nname = "inner"\n', deep)
    assert project_table(str(deep)) == (nearer, {})  # the nearest file, even without a [tool.tracetui] table
    assert project_read_tools(str(deep)) == set()


def test_the_current_folder_is_the_default_start(project, tmp_path, monkeypatch):
    project('[tool.tracetui]\nread_tools = ["a", "b"]\n[tool.tracetui.replay]\nvolatile = {t = ["k"]}\n')
    monkeypatch.chdir(tmp_path)
    assert project_read_tools() == {"a", "b"}
    assert project_volatile() == {"t": ["k"]}
    assert project_table()[0] == str(tmp_path / "pyproject.toml")


def test_a_tool_key_that_is_not_a_table_is_no_tracetui_table(project, tmp_path):
    path = project('tool = "nothing"\n')
    assert project_table(str(tmp_path)) == (path, {})


def test_a_tracetui_key_that_is_not_a_table_is_refused_naming_the_file(project, tmp_path):
    path = project('[tool]\ntracetui = ["x"]\n')
    with pytest.raises(HarnessError) as info:
        project_table(str(tmp_path))
    assert str(info.value) == f"{path}: [tool.tracetui] must be a table"


def test_a_file_that_is_not_toml_is_refused_naming_it(project, tmp_path):
    path = project("[tool.tracetui\n")
    with pytest.raises(HarnessError) as info:
        project_table(str(tmp_path))
    assert str(info.value).startswith(f"{path}: cannot read [tool.tracetui]: ")
    assert len(str(info.value)) > len(f"{path}: cannot read [tool.tracetui]: ")  # the parser's reason follows
    with pytest.raises(HarnessError):
        project_read_tools(str(tmp_path))


@pytest.mark.parametrize("value", ['"get_weather"', '["a", 1]', "{a = 1}"])
def test_read_tools_that_are_not_a_list_of_names_are_refused(project, tmp_path, value):
    path = project(f"[tool.tracetui]\nread_tools = {value}\n")
    with pytest.raises(HarnessError) as info:
        project_read_tools(str(tmp_path))
    assert str(info.value) == f"{path}: [tool.tracetui] read_tools must be a list of tool names"


def test_volatile_arguments_are_read_per_tool(project, tmp_path):
    project('[tool.tracetui.replay]\nvolatile = {transfer = ["idempotency_key"], search = ["meta.request_id", '
            '"items[*].id"]}\n')
    assert project_volatile(str(tmp_path)) == {"transfer": ["idempotency_key"],
                                               "search": ["meta.request_id", "items[*].id"]}
    project('[tool.tracetui]\nread_tools = []\n')
    assert project_volatile(str(tmp_path)) == {}


@pytest.mark.parametrize("text", ['[tool.tracetui]\nreplay = "x"\n',
                                  '[tool.tracetui.replay]\nvolatile = ["idempotency_key"]\n',
                                  '[tool.tracetui.replay]\nvolatile = {transfer = "idempotency_key"}\n',
                                  '[tool.tracetui.replay]\nvolatile = {transfer = [""]}\n',
                                  '[tool.tracetui.replay]\nvolatile = {transfer = [1]}\n'])
def test_volatile_arguments_that_are_not_a_table_of_path_lists_are_refused_naming_the_file(project, tmp_path, text):
    path = project(text)
    with pytest.raises(HarnessError) as info:
        project_volatile(str(tmp_path))
    assert str(info.value) == (f"{path}: [tool.tracetui.replay] volatile must map each tool name to a list of "
                               'argument paths (volatile = {transfer = ["idempotency_key"]})')


def test_check_volatile_raises_the_callers_error_naming_the_callers_place():
    class AgentError(Exception):
        pass

    with pytest.raises(AgentError) as info:
        check_volatile({"t": "k"}, "agent 'a.py:run': VOLATILE_ARGS", AgentError)
    assert str(info.value).startswith("agent 'a.py:run': VOLATILE_ARGS must map each tool name")
    got = check_volatile({1: ["a"], "t": ["b", "c"]}, "x", ValueError)
    assert got == {"1": ["a"], "t": ["b", "c"]} and all(type(v) is list for v in got.values())
    assert check_volatile({}, "x", ValueError) == {}
    source = {"t": ["a"]}
    got = check_volatile(source, "x", ValueError)
    got["t"].append("b")
    assert source == {"t": ["a"]}  # a copy: the caller's table is not shared


def test_only_pyproject_holds_the_harness_settings_not_tracetui_toml(tmp_path):
    (tmp_path / ".tracetui.toml").write_text('[tool.tracetui]\nread_tools = ["elsewhere"]\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    assert project_table(str(inner)) == (None, {})
    assert project_read_tools(str(inner)) == set()
