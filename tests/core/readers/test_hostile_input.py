"""Hostile shapes end in a warning or a clear error, within bounded memory and time (issue 21,
the first of them): an integer literal Python refuses to convert, a YAML alias bomb, a zip bomb."""

from __future__ import annotations

import io
import zipfile

import pytest

from tracetui.core.errors import ReadError
from tracetui.core.readers import read_trace
from tracetui.core.readers.inspect_ai import member_cap
from tracetui.core.readers.jsondoc import load_json
from tracetui.core.readers.vcrpy import YAML_NODE_BUDGET


def test_an_integer_of_5000_digits_is_kept_as_text_with_a_warning(tmp_path):
    issues: list = []
    big = "7" * 5000
    value = load_json("x.json", ('{"a": {"n": ' + big + '}, "m": 3}').encode(), issues)
    assert value == {"a": {"n": big}, "m": 3}
    (issue,) = [i for i in issues if "4300 digits" in i.message]
    assert issue.where == "$.a.n" and "5000 digits" in issue.message


def test_a_yaml_alias_bomb_is_refused_not_expanded(tmp_path):
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    lines += ["interactions:", "- request: {method: GET, uri: 'https://example.test/', body: *a9}",
              "  response: {status: {code: 200}, body: {string: ok}}"]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReadError, match="YAML aliases expand .* more than 5,000,000 nodes"):
        read_trace(str(path), format="vcrpy")
    assert YAML_NODE_BUDGET == 5_000_000


def test_aliases_within_the_budget_still_read(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("req: &r {method: GET, uri: 'https://example.test/a', body: null}\n"
                    "interactions:\n- request: *r\n  response: {status: {code: 200}, body: {string: 'hi'}}\n"
                    "- request: *r\n  response: {status: {code: 200}, body: {string: 'hi again'}}\n")
    assert len(read_trace(str(path), format="vcrpy").spans) >= 2


def test_a_zip_member_past_the_cap_is_skipped_with_a_finding(tmp_path, monkeypatch):
    import tracetui.core.readers.inspect_ai as inspect_ai

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", '{"eval": {"task": "t"}}')
        zf.writestr("samples/1_epoch_1.json", b'{"id": 1, "epoch": 1, "messages": [' + b" " * 2_000_000 + b"]}")
    data = buf.getvalue()
    assert len(data) < 20_000  # two megabytes of spaces deflate to a few kilobytes
    monkeypatch.setattr(inspect_ai, "member_cap", lambda n: 100 * n)  # the real cap is 20x + 256 MiB
    path = tmp_path / "bomb.eval"
    path.write_bytes(data)
    with pytest.raises(ReadError) as caught:
        read_trace(str(path), format="inspect-ai")
    assert "expands past" in str(caught.value) and "zip bomb" in str(caught.value)
    assert member_cap(1 << 20) == 20 * (1 << 20) + (256 << 20)


def test_a_yaml_integer_of_5000_digits_is_kept_as_text(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("interactions:\n- request: {method: GET, uri: 'https://example.test/', body: null}\n"
                    f"  response: {{status: {{code: 200}}, body: {{string: ok}}, n: {'9' * 5000}}}\n")
    t = read_trace(str(path), format="vcrpy")
    (issue,) = [i for i in t.issues if "4300 digits" in i.message]
    assert issue.line == 3 and issue.severity == "warning"
