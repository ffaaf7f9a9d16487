"""``diff`` of a foreign recording against its redacted tracetui replay looks up the project's redactor
(``cli.commands``); a malformed ``[tool.tracetui.redaction]`` must not end the diff in an internal error:
the token-vs-raw fields are then counted not comparable, as with no key at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import run_cli

PAIR = Path(__file__).resolve().parents[2] / "sample_runs" / "order_lookup"


def test_a_malformed_redaction_config_leaves_the_diff_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "a-test-key-of-enough-length-0123456789")
    (tmp_path / "pyproject.toml").write_text("[tool.tracetui.redaction]\npatterns = 3\n")
    code, out, err = run_cli("diff", str(PAIR / "original.otlp.json"), str(PAIR / "replay.jsonl"), "--format", "json")
    assert code in (0, 1), err
    assert "internal error" not in err
    report = json.loads(out)
    assert report["not_comparable"]  # the raw-vs-token fields could not be checked: counted, not called equal
    assert not report.get("redacted_with_key")
