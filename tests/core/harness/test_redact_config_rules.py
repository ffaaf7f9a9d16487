"""The rules of core/harness/redact_config.py (the project's own redaction rules), pinned one by one on config files
written in the test: what a checked table is, each error's file and key, which tables of which file are read and
how two files merge, what the digest covers, and how a pattern's ``value`` group and the allow-list apply."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tracetui.core.harness.redact import RedactionConfigError, Redactor
from tracetui.core.harness.redact_config import load_user_rules, rules_from_table
from tracetui.core.harness.redact_patterns import RULES

KEY = b"k" * 20


def _write(folder: Path, text: str, name: str = "pyproject.toml") -> str:
    (folder / name).write_text(text)
    return str(folder / name)


# ----------------------------------------------------------------------------- one table checked


def test_a_checked_table_has_exactly_fields_allow_and_patterns_as_written() -> None:
    assert rules_from_table({}, "p.toml") == {"fields": [], "allow": [], "patterns": {}}
    got = rules_from_table({"fields": ["badge"], "allow": ["a@b\\.co"], "patterns": {"ticket": "TCK-[0-9]+"}}, "p.toml")
    assert got == {"fields": ["badge"], "allow": ["a@b\\.co"], "patterns": {"ticket": "TCK-[0-9]+"}}


@pytest.mark.parametrize(("table", "message"), [
    ("not a table", "p.toml: [tool.tracetui.redaction] must be a table"),
    ({"patterns": ["x"]}, 'p.toml: [tool.tracetui.redaction] patterns must be a table of name = "regex"'),
    ({"patterns": {"ticket": 3}}, "p.toml: [tool.tracetui.redaction].patterns.ticket must be a regex string"),
    ({"patterns": {"ticket": ""}}, "p.toml: [tool.tracetui.redaction].patterns.ticket must be a regex string"),
    ({"patterns": {"Ticket": "x"}}, "p.toml: [tool.tracetui.redaction].patterns: name 'Ticket' must be lower-case "
                                    "letters and _ (it names the token: <TICKET_…>) and not a built-in rule ("
                                    + ", ".join(RULES) + ")"),
])
def test_each_error_names_the_file_and_the_key(table: object, message: str) -> None:
    with pytest.raises(RedactionConfigError) as e:
        rules_from_table(table, "p.toml")
    assert str(e.value) == message


def test_a_pattern_is_refused_only_when_it_matches_the_empty_string() -> None:
    assert rules_from_table({"patterns": {"code": "[A-Z]{4}"}}, "p.toml")["patterns"] == {"code": "[A-Z]{4}"}
    with pytest.raises(RedactionConfigError, match="matches the empty string"):
        rules_from_table({"patterns": {"code": "[A-Z]*"}}, "p.toml")


# ----------------------------------------------------------------------------- the files read and merged


def test_a_file_that_is_not_toml_names_itself_and_the_parsers_reason(tmp_path: Path) -> None:
    path = _write(tmp_path, "[tool.tracetui\n")
    with pytest.raises(RedactionConfigError) as e:
        load_user_rules(str(tmp_path))
    assert str(e.value).startswith(f"{path}: cannot read the redaction rules: ")
    assert len(str(e.value)) > len(f"{path}: cannot read the redaction rules: ")


def test_a_tool_or_tracetui_key_that_is_not_a_table_is_no_rules(tmp_path: Path) -> None:
    _write(tmp_path, 'tool = "x"\n')
    _write(tmp_path, '[tool]\ntracetui = 3\n[redaction]\nfields = ["badge"]\n', ".tracetui.toml")
    rules = load_user_rules(str(tmp_path))
    assert rules.fields == ("badge",) and rules.sources == (str(tmp_path / ".tracetui.toml"),)


def test_a_top_level_redaction_table_counts_in_tracetui_toml_only(tmp_path: Path) -> None:
    _write(tmp_path, '[redaction]\nfields = ["badge"]\n')
    assert not load_user_rules(str(tmp_path))
    assert load_user_rules(str(tmp_path)).sources == ()


def test_in_tracetui_toml_the_tool_table_wins_over_the_top_level_one(tmp_path: Path) -> None:
    _write(tmp_path, '[tool.tracetui.redaction]\nfields = ["badge"]\n[redaction]\nfields = ["other"]\n',
           ".tracetui.toml")
    assert load_user_rules(str(tmp_path)).fields == ("badge",)


def test_a_pyproject_without_rules_does_not_hide_the_tracetui_toml_ones(tmp_path: Path) -> None:
    _write(tmp_path, '[project]\nname = "x"\n')
    path = _write(tmp_path, '[redaction]\nallow = ["a"]\n', ".tracetui.toml")
    rules = load_user_rules(str(tmp_path))
    assert [a.pattern for a in rules.allow] == ["a"] and rules.sources == (path,)


def test_two_files_merge_lists_joined_without_repeats_and_patterns_by_name(tmp_path: Path) -> None:
    first = _write(tmp_path, '[tool.tracetui.redaction]\nfields = ["badge", "pin"]\nallow = ["a", "b"]\n'
                             '[tool.tracetui.redaction.patterns]\nticket = "TCK-[0-9]+"\ncode = "C-[0-9]+"\n')
    second = _write(tmp_path, '[redaction]\nfields = ["pin", "member_no"]\nallow = ["b", "c"]\n'
                              '[redaction.patterns]\nticket = "T-[0-9]+"\n', ".tracetui.toml")
    rules = load_user_rules(str(tmp_path))
    assert rules.fields == ("badge", "pin", "member_no")
    assert [a.pattern for a in rules.allow] == ["a", "b", "c"]
    assert [(n, p.pattern) for n, p in rules.patterns] == [("code", "C-[0-9]+"), ("ticket", "T-[0-9]+")]
    assert rules.sources == (first, second)


def test_the_digest_is_12_hex_digits_and_does_not_depend_on_the_order_patterns_are_written(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _write(a, '[tool.tracetui.redaction.patterns]\nticket = "TCK-[0-9]+"\ncode = "C-[0-9]+"\n')
    _write(b, '[tool.tracetui.redaction.patterns]\ncode = "C-[0-9]+"\nticket = "TCK-[0-9]+"\n')
    da, db = load_user_rules(str(a)).digest, load_user_rules(str(b)).digest
    assert da == db and len(da) == 12 and int(da, 16) >= 0
    _write(b, '[tool.tracetui.redaction.patterns]\ncode = "C-[0-9]+"\nticket = "TCK-[0-9]{2}"\n')
    assert load_user_rules(str(b)).digest != da


# ----------------------------------------------------------------------------- a pattern's value group, the allow-list


def _redactor(tmp_path: Path, table: str) -> Redactor:
    _write(tmp_path, "[tool.tracetui.redaction]\n" + table)
    return Redactor(KEY, user_rules=load_user_rules(str(tmp_path)))


def test_a_value_group_at_the_start_of_the_text_is_the_only_part_replaced(tmp_path: Path) -> None:
    r = _redactor(tmp_path, '[tool.tracetui.redaction.patterns]\nmember = "(?P<value>[0-9]{7}) member"\n')
    assert r.text("1234567 member here") == r.token("member", "1234567") + " member here"
    assert r.fired == {"member": 1}


def test_an_allowed_value_inside_a_value_group_keeps_its_text_and_is_not_counted(tmp_path: Path) -> None:
    r = _redactor(tmp_path, 'allow = ["1234567"]\n[tool.tracetui.redaction.patterns]\n'
                            'member = "member (?P<value>[0-9]{7}) ok"\n')
    text = "see member 1234567 ok and member 7654321 ok"
    assert r.text(text) == "see member 1234567 ok and member " + r.token("member", "7654321") + " ok"
    assert r.fired == {"member": 1}
