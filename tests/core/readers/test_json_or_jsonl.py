"""json_values.load_json_or_jsonl: one JSON document or JSON Lines, the damaged-input rules every reader shares."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import HELD_BACK, load_json_or_jsonl


def load(data: bytes, **kw: Any) -> tuple[list[tuple[int | None, Any]], bool, list[ReadIssue]]:
    issues: list[ReadIssue] = []
    values, several = load_json_or_jsonl("f", data, issues, **kw)
    return list(values), several, issues


def jl(*objs: Any) -> bytes:
    return b"".join(orjson.dumps(o) + b"\n" for o in objs)


def test_one_document_one_line_or_pretty() -> None:
    assert load(b'{"a": 1}\n') == ([(1, {"a": 1})], False, [])
    assert load(b'{\n  "a": [1,\n 2]\n}\n') == ([(None, {"a": [1, 2]})], False, [])
    assert load(b"[1, 2]") == ([(1, [1, 2])], False, [])


def test_json_lines_give_each_line_with_its_number() -> None:
    values, several, issues = load(jl({"a": 1}) + b"\n" + jl([2], "x"))
    assert several and issues == []
    assert values == [(1, {"a": 1}), (3, [2]), (4, "x")]


def test_a_bad_middle_line_is_skipped_and_a_torn_last_line_held_back() -> None:
    data = jl({"a": 1}) + b'{"a": 2, broken\n' + jl({"a": 3}) + b'{"a": 4, "b'
    values, several, issues = load(data)
    assert several and values == [(1, {"a": 1}), (3, {"a": 3})]
    assert [(i.line, i.severity) for i in issues] == [(2, "skipped"), (4, "warning")]
    assert issues[0].message.startswith("not valid JSON") and issues[0].message.endswith("; line skipped")
    assert issues[1].message == HELD_BACK


def test_the_torn_line_loads_once_complete() -> None:
    full = jl({"a": 1}, {"a": 2})
    assert load(full[:-6])[0] == [(1, {"a": 1})]
    assert load(full) == ([(1, {"a": 1}), (2, {"a": 2})], True, [])


def test_bom_at_the_start_and_after_cat_nan_and_big_integers_are_kept_and_reported() -> None:
    data = BOM + jl({"a": 1}) + BOM + b'{"n": NaN}\n' + b'{"big": 123456789012345678901234567890}\n'
    values, several, issues = load(data)
    assert several and values == [(1, {"a": 1}), (2, {"n": "NaN"}), (3, {"big": 123456789012345678901234567890})]
    # the big integer is kept exact: an implementation note (info, shown with --verbose), not a warning
    assert [(i.line, i.severity) for i in issues] == [(1, "warning"), (2, "warning"), (2, "warning"), (3, "info")]


def test_duplicate_keys_in_a_line_are_reported_with_the_line() -> None:
    values, _, issues = load(jl({"a": 1}) + b'{"k": 1, "k": 2}\n')
    assert values[1] == (2, {"k": 2})
    assert [(i.line, i.where) for i in issues] == [(2, "$")] and "duplicate key 'k'" in issues[0].message


def test_json_lines_with_a_damaged_first_line_still_load() -> None:
    values, several, issues = load(b'{"a": 1, oops\n' + jl({"a": 2}, {"a": 3}))
    assert several and values == [(2, {"a": 2}), (3, {"a": 3})]
    assert [(i.line, i.severity) for i in issues] == [(1, "skipped")]


def test_a_broken_pretty_document_raises_with_line_and_column() -> None:
    """Not read line by line: its lines are not values (a stray one would load as a record)."""
    data = b'[\n  {"id": 1},\n  {"id": 2,\n   "x": }\n]\n'
    with pytest.raises(ReadError) as err:
        load(data)
    assert err.value.line == 4 and "not valid JSON" in err.value.reason and "column" in err.value.reason


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "file is empty"), (b"  \n\t\n", "file is empty"), (BOM, "file is empty"),
    (b"{nope", "no line of it is JSON"), (b"[{]\n", "no line of it is JSON"),
    (b'{"a": 1, x\n{"b": \n', "not valid JSON"),  # no line is a value: the document's error
])
def test_nothing_to_load_raises(data: bytes, reason: str) -> None:
    with pytest.raises(ReadError, match=reason):
        load(data)


def test_values_back_to_back_when_asked() -> None:
    data = b'{\n  "a": 1\n}\n{\n  "a": 2\n}\n'
    with pytest.raises(ReadError):
        load(data)
    values, several, issues = load(data, values_back_to_back=True)
    assert several and values == [(1, {"a": 1}), (4, {"a": 2})] and issues == []


def test_json_lines_are_read_lazily() -> None:
    """Issues of a line are appended when the line is reached (big Collector files: one line at a time)."""
    issues: list[ReadIssue] = []
    values, several = load_json_or_jsonl("f", jl({"a": 1}) + b"{bad\n" + jl({"a": 3}), issues)
    assert several and issues == []
    assert next(values) == (1, {"a": 1}) and issues == []
    assert next(values) == (3, {"a": 3}) and [i.line for i in issues] == [2]
