"""The user's redaction rules in the project config (``[tool.tracetui.redaction]``, issue 21)."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from tracetui.core.harness.redact import RedactionConfigError, Redactor, load_user_rules
from tests.builders import run_cli as cli

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_runs" / "scheduling"
KEY = b"test-redaction-key-0123456789abcdef"
TOKEN = re.compile(r"<([A-Z_]+)_[0-9a-f]{8}>")

RULES = r'''
[tool.tracetui.redaction]
fields = ["member_no", "badge"]
allow = ["noreply@example\\.com"]
[tool.tracetui.redaction.patterns]
ticket = "TCK-[0-9]{6}"
member = "member (?P<value>[0-9]{7})"
'''


def write(folder: Path, text: str, name: str = "pyproject.toml") -> Path:
    (folder / name).write_text(text)
    return folder / name


def test_user_patterns_fields_and_allow_list_run_with_the_built_in_rules(tmp_path: Path) -> None:
    write(tmp_path, RULES)
    r = Redactor(KEY, user_rules=load_user_rules(str(tmp_path)))
    out = r.text("ticket TCK-123456 for member 1234567; mail noreply@example.com or ann@example.com; "
                 "member_no=AB12CD badge: 'X9Y8'")
    assert TOKEN.findall(out) == ["TICKET", "MEMBER", "EMAIL", "SECRET", "SECRET"]
    assert "for member <MEMBER_" in out  # only the named group is replaced
    assert "noreply@example.com" in out  # allowed
    got = r.value({"memberNo": "abc123", "db_badge": 5, "note": "TCK-000001, abc123 again", "contact": "noreply@example.com"})
    assert got["memberNo"].startswith("<SECRET_") and got["db_badge"].startswith("<SECRET_")
    assert got["note"] == f"{r.text('TCK-000001')}, {got['memberNo']} again"  # remembered like a built-in field
    assert got["contact"] == "noreply@example.com"
    rec = r.record()
    assert rec["rules"][-2:] == ["member", "ticket"] and rec["fired"]["ticket"] == 3 and "email" in rec["fired"]
    assert re.fullmatch(r"[0-9a-f]{12}", rec["user_rules"])
    # without the config none of it happens, and the header has no user_rules
    plain = Redactor(KEY)
    assert "TCK-123456" in plain.text("ticket TCK-123456") and "user_rules" not in plain.record()


def test_the_hash_names_the_rules_as_written_and_tracetui_toml_adds_to_pyproject(tmp_path: Path) -> None:
    write(tmp_path, RULES)
    one = load_user_rules(str(tmp_path))
    write(tmp_path, '[redaction]\nfields = ["otp_seed"]\n', ".tracetui.toml")
    two = load_user_rules(str(tmp_path))
    assert two.fields == ("member_no", "badge", "otp_seed") and two.digest != one.digest
    assert len(two.sources) == 2
    assert load_user_rules(str(tmp_path)).digest == two.digest  # stable


@pytest.mark.parametrize("table, key", [
    ('fields = "pin2"', "fields"),
    ('allow = ["("]', "allow[0]"),
    ('colour = 1', "'colour'"),
    ('[tool.tracetui.redaction.patterns]\nEmail2 = "x"', "'Email2'"),
    ('[tool.tracetui.redaction.patterns]\nemail = "x"', "'email'"),
    ('[tool.tracetui.redaction.patterns]\nbad = "[a-"', "patterns.bad"),
    ('[tool.tracetui.redaction.patterns]\nanything = "x*"', "patterns.anything"),
])
def test_bad_config_is_a_clear_error_naming_file_and_key(tmp_path: Path, table: str, key: str) -> None:
    path = write(tmp_path, "[tool.tracetui.redaction]\n" + table + "\n")
    with pytest.raises(RedactionConfigError) as exc:
        load_user_rules(str(tmp_path))
    assert str(path) in str(exc.value) and key in str(exc.value)


def test_record_runs_the_projects_rules_and_the_header_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY.decode())
    # the sample's customer id C-48213 is no secret by default; the project says it is
    write(tmp_path, '[tool.tracetui.redaction.patterns]\ncustomer_id = "C-[0-9]{5}"\n')
    code, _, err = cli("record", f"{SAMPLE / 'agent.py'}:run", "--input", f"@{SAMPLE / 'input.json'}",
                       "--out", "rec.jsonl")
    assert code == 0, err
    raw = (tmp_path / "rec.jsonl").read_bytes()
    assert b"C-48213" not in raw and b"<CUSTOMER_ID_" in raw
    header = orjson.loads(raw.splitlines()[0])
    red = header.get("redaction") or header.get("header", {}).get("redaction")
    assert "customer_id" in red["rules"] and red["fired"]["customer_id"] >= 1 and red["user_rules"]
    # a broken table stops the command before anything is written, naming the file and the key
    write(tmp_path, '[tool.tracetui.redaction]\nfields = [1]\n')
    code, _, err = cli("record", f"{SAMPLE / 'agent.py'}:run", "--input", f"@{SAMPLE / 'input.json'}",
                       "--out", "rec2.jsonl")
    assert code == 2 and "pyproject.toml" in err and "fields" in err and "Traceback" not in err
    assert not (tmp_path / "rec2.jsonl").exists()
