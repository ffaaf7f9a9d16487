"""The secret corpus (issue 21): one raw value of every kind docs/redaction.md documents, planted in a
run, through every command that writes or prints: record (``ctx`` and the session API), replay,
promote, golden run, convert, a label's note and the TUI's ``w``/``c``; every file written and the
output of diff / show / golden run is scanned for the raw values: none may be there."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import run_cli as cli

KEY = "test-redaction-key-0123456789abcdef"
B64_WRAPPED = base64.b64encode(b"password=plantedB64Secret9").decode()
BASIC = base64.b64encode(b"ann:plantedBasicPw4").decode()
PEM_BODY = "MIIEowIBAAKCAQEAplantedPemBody0123456789abcdefABCDEF"
# kind -> the raw value as the agent sees it; SCAN: what must not appear in any written byte
PLANTED: dict[str, str] = {
    "email": "ann.lee@example.com",
    "phone_e164": "+33 6 12 34 56 78",
    "phone_fictional": "+1-555-0142",
    "phone_uk": "+44 20 7946 0958",
    "card": "4111 1111 1111 1111",
    "openai_key": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
    "anthropic_key": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk",
    "aws_key_id": "AKIAPLANTED0EXAMPLE7",
    "github_token": "ghp_" + "PlantedGitHubToken0123456789abcdefghij",
    "github_pat": "github_pat_11PLANTED0123456789_abcdefghijklmnopqrstuv",
    "slack": "xoxb-1234567890-plantedslack",
    "google": "AIza" + "PlantedGoogleKey0123456789abcdefghi",
    "stripe": "sk_live_plantedStripe0123456",
    "pem": f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
    "bearer": "Bearer plantedBearerTok3n99",
    "basic": f"Basic {BASIC}",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA",
    "url_userinfo": "https://svc:plantedUrlPass5@db.example.org/x",
    "signed_url": "https://b.s3.amazonaws.com/o?X-Amz-Signature=plantedsig0123abcd",
    "base64_wrapped": B64_WRAPPED,
    "user_pattern": "TCK-734912",
}
FIELDS = {"password": "plantedPassw0rd!", "client_secret": "plantedClientSecret7",
          "aws_secret_access_key": "plantedAwsSecretKey1234", "connection_string": "plantedConnString88",
          "member_no": "plantedMemberNo55"}  # member_no: a field the project's config adds
SENSITIVE = "14 rue des Tanneurs"
SPLIT = ["my key is sk-proj-SpLiT0123", "456789abcdefghij, thanks"]
SCAN = sorted({*(v for k, v in PLANTED.items() if k not in ("pem", "bearer", "basic", "url_userinfo", "signed_url")),
               PEM_BODY, "plantedBearerTok3n99", BASIC, "plantedUrlPass5", "plantedsig0123abcd", "plantedB64Secret9",
               *FIELDS.values(), SENSITIVE, "SpLiT0123"})

AGENT = f'''
PLANTED = {PLANTED!r}
FIELDS = {FIELDS!r}
SPLIT = {SPLIT!r}
SENSITIVE_FIELDS = {{"crm": ["street_address"]}}
READ_TOOLS = {{"crm", "vault"}}

def crm(**kw):
    return {{"street_address": {SENSITIVE!r}, "email": PLANTED["email"], "phones": [PLANTED["phone_e164"],
            PLANTED["phone_fictional"] + "," + "+1-555-0199", PLANTED["phone_uk"]]}}

def vault(**kw):
    return {{"text": " ".join(PLANTED.values()), **FIELDS,
            "content": [{{"type": "text", "text": SPLIT[0]}}, {{"type": "text", "text": SPLIT[1]}}]}}

def send(**kw):
    return {{"sent": True}}

TOOLS = {{"crm": crm, "vault": vault, "send": send}}

def run(ctx, input):
    a = ctx.tool("crm", {{"customer": input["customer"]}})
    v = ctx.tool("vault", {{"q": input["note"]}})
    ctx.tool("send", {{"to": a["email"], "body": "visit " + a["street_address"] + " " + v["text"],
                      "password": FIELDS["password"]}})
    return {{"done": True, "said": v["text"]}}

def run_changed(ctx, input):
    a = ctx.tool("crm", {{"customer": input["customer"]}})
    v = ctx.tool("vault", {{"q": input["note"]}})
    ctx.tool("send", {{"to": a["email"], "body": "changed " + v["text"]}})
    return {{"done": False}}
'''

PYPROJECT = '''
[tool.tracetui.redaction]
fields = ["member_no"]
[tool.tracetui.redaction.patterns]
ticket = "TCK-[0-9]{6}"
'''


def leaks(text: str) -> list[str]:
    """The planted raw values found in ``text`` (JSON-escaped newlines read as newlines)."""
    flat = text.replace("\\n", "\n")
    return [s for s in SCAN if s in flat]


def foreign_trace() -> dict[str, Any]:
    """An OTLP/JSON run as another tool exports it: the planted values in a tool's arguments, an
    ``authorization`` header attribute, a URL with a password, an LLM request body's ``api_key``."""
    attrs = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": "vault"}},
        {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": json.dumps({**PLANTED, **FIELDS})}},
        {"key": "http.request.header.authorization", "value": {"stringValue": PLANTED["bearer"]}},
        {"key": "url.full", "value": {"stringValue": PLANTED["url_userinfo"]}},
    ]
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [{
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7", "name": "execute_tool vault",
        "kind": 1, "startTimeUnixNano": "1000", "endTimeUnixNano": "2000", "attributes": attrs}]}]}]}


async def test_no_planted_secret_in_any_file_or_printed_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY)
    inputs = {"agent.py": AGENT, "pyproject.toml": PYPROJECT, "foreign.json": json.dumps(foreign_trace()),
              "input.json": json.dumps({"customer": {"email": PLANTED["email"], "phone": PLANTED["phone_e164"]},
                                        "note": f"{PLANTED['user_pattern']} {PLANTED['bearer']} {PLANTED['card']}"})}
    for name, text in inputs.items():
        (tmp_path / name).write_text(text)
    printed: list[str] = []

    def run(*argv: str) -> int:
        code, out, err = cli(*argv)
        printed.append(out + err)
        return code

    # record (ctx), replay of the unchanged and of a changed agent
    assert run("record", "agent.py:run", "--input", "@input.json", "--out", "rec.jsonl") == 0, printed[-1]
    assert run("replay", "rec.jsonl", "agent.py:run", "--out", "rep.jsonl") == 0, printed[-1]
    run("replay", "rec.jsonl", "agent.py:run_changed", "--out", "changed.jsonl")
    assert (tmp_path / "changed.jsonl").exists(), printed[-1]
    # promote, golden run
    assert run("promote", "rec.jsonl", "changed.jsonl", "--to", "golden", "--name", "c1", "--agent", "agent.py:run") == 0, printed[-1]
    run("golden", "run", "golden", "--agent", "agent.py:run")
    # convert a foreign trace (redacted by default)
    assert run("convert", "foreign.json", "converted.jsonl") == 0, printed[-1]
    # what diff and show print
    for argv in (("diff", "rec.jsonl", "changed.jsonl"), ("diff", "rec.jsonl", "changed.jsonl", "--format", "json"),
                 ("show", "rec.jsonl", "-v"), ("show", "converted.jsonl", "-v"), ("diff", "converted.jsonl", "rec.jsonl")):
        run(*argv)
    # the session API
    import tracetui

    @tracetui.tool(read=True, name="vault_api")
    def vault_api(q: str) -> dict[str, Any]:
        return {"text": " ".join(PLANTED.values()), **FIELDS}

    with tracetui.record(out=str(tmp_path / "session.jsonl"), input={"q": PLANTED["email"]}):
        vault_api(PLANTED["openai_key"])
    # the TUI: a label's note with raw values, then w and c on the pair screen
    from tracetui.tui import TraceTuiApp

    app = TraceTuiApp(str(tmp_path / "rec.jsonl"), str(tmp_path / "changed.jsonl"))
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        await pilot.press(*f"password={FIELDS['password']} mail {PLANTED['email']}")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
    # (not the inputs, nor the agent's bytecode that Python writes beside it unless PYTHONDONTWRITEBYTECODE is set:
    # a compiled copy of the test's own input, secrets and all)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name not in inputs and p.suffix != ".key"
               and "__pycache__" not in p.parts]
    names = {p.name for p in written}
    assert {"rec.jsonl", "rep.jsonl", "changed.jsonl", "converted.jsonl", "session.jsonl",
            "changed.jsonl.labels.json", "trace.jsonl", "contract.yaml", "case.yaml"} <= names, names
    assert any(n.startswith("tracetui-row") for n in names), names
    assert copied, "c copied nothing"
    found = {str(p.relative_to(tmp_path)): leaks(p.read_text(errors="replace")) for p in written}
    found["printed"] = leaks("\n".join(printed))
    found["copied"] = leaks("\n".join(copied))
    assert {k: v for k, v in found.items() if v} == {}
    # and the values were there to find: the tokens of each kind are in the recording
    rec = (tmp_path / "rec.jsonl").read_text()
    for kind in ("EMAIL", "PHONE", "CARD", "API_KEY", "PRIVATE_KEY", "BEARER", "BASIC", "JWT", "SECRET",
                 "SENSITIVE", "TICKET"):
        assert f"<{kind}_" in rec, kind
