"""``tracetui convert`` redacts with the project key by default; ``--no-redact`` warns (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import run_cli as cli

KEY = "test-redaction-key-0123456789abcdef"
RAW = ["ann@example.com", "zz9zz9zz9zz9", "abcdef0123456789"]
OTLP = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeSpans": [{"spans": [{
            "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7", "name": "execute_tool lookup",
            "kind": 1, "startTimeUnixNano": "1000", "endTimeUnixNano": "2000", "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
                {"key": "gen_ai.tool.call.arguments",
                 "value": {"stringValue": json.dumps({"email": RAW[0], "api_key": RAW[1]})}},
                {"key": "app.note", "value": {"stringValue": f"sent with Bearer {RAW[2]}"}}]}]}]}]}


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    (tmp_path / "foreign.json").write_text(json.dumps(OTLP))
    return tmp_path


def test_convert_redacts_by_default_and_says_so(project: Path) -> None:
    code, _, err = cli("convert", "foreign.json", "out.jsonl")
    assert code == 0, err
    text = (project / "out.jsonl").read_text()
    assert not [r for r in RAW if r in text]
    header = json.loads(text.splitlines()[0])
    assert header["redaction"]["fired"] == {"email": 1, "bearer": 1, "secret_field": 1}
    assert "redacted email x1, bearer x1, secret_field x1" in err
    # converting the converted file changes nothing, byte for byte
    assert cli("convert", "out.jsonl", "again.jsonl")[0] == 0
    assert (project / "again.jsonl").read_bytes() == (project / "out.jsonl").read_bytes()
    # to stdout too
    code, out, _ = cli("convert", "foreign.json", "-")
    assert code == 0 and not [r for r in RAW if r in out]


def test_no_redact_writes_as_read_with_a_warning_counting_what_rules_would_change(project: Path) -> None:
    code, _, err = cli("convert", "--no-redact", "foreign.json", "raw.jsonl")
    assert code == 0
    text = (project / "raw.jsonl").read_text()
    assert all(r in text for r in RAW)
    assert "warning: --no-redact: 3 values the redaction rules would have replaced" in err
    # nothing to replace: no warning
    cli("convert", "foreign.json", "clean.jsonl")
    code, _, err = cli("convert", "--no-redact", "clean.jsonl", "clean2.jsonl")
    assert code == 0 and "warning" not in err
