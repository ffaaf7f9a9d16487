"""Secrets the rules missed (issue 21): github_pat_ alone, base64-wrapped and split values, tool
names, short international phone numbers; and no new false positives on the bundled runs."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tracetui.core.harness.redact import Redactor
from tests.builders import run_cli as cli

ROOT = Path(__file__).resolve().parents[3]
KEY = b"test-redaction-key-0123456789abcdef"
TOKEN = re.compile(r"<([A-Z_]+)_[0-9a-f]{8}>")
PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF"


@pytest.fixture
def r() -> Redactor:
    return Redactor(KEY)


def test_a_github_fine_grained_token_alone_in_a_string(r: Redactor) -> None:
    assert TOKEN.findall(r.text(PAT)) == ["API_KEY"]
    assert TOKEN.findall(r.text(f"push with {PAT} please")) == ["API_KEY"]


@pytest.mark.parametrize("inner, kind", [
    ("password=hunter2hunter2", "SECRET"),
    ("sk-proj-ABCDEF0123456789abcdef", "API_KEY"),
    ('{"api_key": "zz9zz9zz9zz9"}', "SECRET"),
    ("mail ann.lee@example.com", "EMAIL"),
])
@pytest.mark.parametrize("alphabet", ["standard", "urlsafe"])
def test_base64_wrapped_secrets_become_one_token(r: Redactor, inner: str, kind: str, alphabet: str) -> None:
    enc = (base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode)(inner.encode()).decode()
    out = r.text(f"config={enc};")
    assert TOKEN.findall(out) == [kind] and enc not in out and out.startswith("config=<") and out.endswith(">;")
    assert r.value({"blob": enc})["blob"] == out[len("config="):-1]  # the same token in a value


def test_base64_that_hides_nothing_stays(r: Redactor) -> None:
    png = base64.b64encode(bytes(range(256)) * 4).decode()
    prose = base64.b64encode(b"hello world, nothing to see here at all").decode()
    for s in (f"data:image/png;base64,{png}", prose, "a" * 64, "0123456789abcdef" * 4):
        assert r.text(s) == s


def test_a_value_split_across_message_parts(r: Redactor) -> None:
    msg = {"role": "user", "content": [{"type": "text", "text": "my key is sk-proj-ABCDEF01"},
                                       {"type": "text", "text": "23456789abcdef, mail ann@exa"},
                                       {"type": "text", "text": "mple.com"}]}
    out = r.value(msg)
    texts = [p["text"] for p in out["content"]]
    assert TOKEN.findall(texts[0]) == ["API_KEY", "EMAIL"] and texts[1:] == ["", ""]
    assert "ABCDEF" not in json.dumps(out) and "exa" not in json.dumps(out)
    whole = [{"type": "text", "text": "hello"}, {"type": "text", "text": " world"}]
    assert r.value(whole) == whole and r.fired == {"api_key": 1, "email": 1}


@pytest.mark.parametrize("text, phones", [
    ("call +1-555-0100 now", 1),
    ("+1-555-0100,+1-555-0199", 2),
    ("+44 20 7946 0958", 1),
    ("tel:+1 555 0100", 1),
    ("+33 1 23 45 67 89", 1),
])
def test_fictional_international_phone_numbers(r: Redactor, text: str, phones: int) -> None:
    out = r.text(text)
    assert TOKEN.findall(out) == ["PHONE"] * phones and not re.search(r"[0-9]{4}", out.replace("_", " ").split("<")[0])


@pytest.mark.parametrize("text", [
    "UTC+1-2026", "v+1.2.3.4", "+12345678", "ts +2026-11-05", "version 1.2.3-4567", "x+1-555-0100",
    "span 6374276302398fb9", "trace 4bf92f3577b34da6a3ce929d0e0e4736", "2026-11-05T10:14:02.123+01:00",
    "1762300800123", "10.0.19041.1234", "sha256:" + "ab" * 32,
])
def test_no_false_positives_on_ids_times_and_versions(r: Redactor, text: str) -> None:
    assert r.text(text) == text


@pytest.mark.parametrize("where", ["sample_runs", "corpus"])
def test_the_new_rules_fire_nowhere_on_real_traces(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """No 8-digit phone and no base64 decode replaces anything in sample_runs/ or the shared corpus
    (real traces: hex ids, timestamps, versions, base64 images)."""
    fired: list[str] = []
    orig_b64 = Redactor._on_b64

    def spy(self: Redactor, s: str, start: int, m: Any) -> Any:
        got = orig_b64(self, s, start, m)
        if got is not None:
            fired.append(m.group())
        return got

    monkeypatch.setattr(Redactor, "_on_b64", spy)
    red = Redactor(KEY)
    phones: list[str] = []
    n = 0
    if where == "corpus":
        from tests.corpus import corpus_files

        paths = [p for p in corpus_files() if p.suffix in (".json", ".jsonl", ".yaml", ".yml") and p.stat().st_size < 3_000_000]
    else:
        paths = sorted((ROOT / "sample_runs").rglob("*.json*"))
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            for s in re.findall(r'"((?:[^"\\]|\\.){8,})"', line):
                n += 1
                out = red.text(s)
                if out != s:
                    phones += [t for t in TOKEN.findall(out) if t == "PHONE" and not re.search(r"[0-9]{9}", re.sub(r"\D", "", s))]
    assert n > 1000 and fired == [] and phones == []


AGENT = '''
def lookup(**kw): return {"ok": True}
def notify(**kw): return {"sent": True}
TOOLS = {"lookup_for_ann@example.com": lookup, "notify:+1-555-0100": notify}
READ_TOOLS = {"lookup_for_ann@example.com"}
def run(ctx, input):
    ctx.tool("lookup_for_ann@example.com", {"q": input["q"]})
    return ctx.tool("notify:+1-555-0100", {"to": "x"})
'''


def test_tool_names_follow_the_same_rules_in_record_replay_and_promote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", KEY.decode())
    (tmp_path / "agent.py").write_text(AGENT)
    code, _, err = cli("record", "agent.py:run", "--input", '{"q": "x"}', "--out", "rec.jsonl")
    assert code == 0, err
    rec = (tmp_path / "rec.jsonl").read_text()
    assert "ann@example.com" not in rec and "555-0100" not in rec
    header = json.loads(rec.splitlines()[0])
    assert [TOKEN.findall(t) for t in header["read_tools"]] == [["EMAIL"]]
    # the unchanged agent replays against its redacted names: the read served, the write intercepted
    code, out, err = cli("replay", "rec.jsonl", "agent.py:run", "--out", "rep.jsonl")
    assert code == 0, out + err
    assert "misses 0" in out and "writes intercepted 1" in out
    # promote writes the same names; the case's contract finds the agent's own call
    code, out, err = cli("promote", "rec.jsonl", "--to", "golden", "--name", "tn", "--agent", "agent.py:run")
    assert code == 0, err
    for f in (tmp_path / "golden" / "tn").iterdir():
        assert "ann@example.com" not in f.read_text() and "555-0100" not in f.read_text()
    code, out, err = cli("golden", "run", "golden", "--agent", "agent.py:run")
    assert "forbidden call notify:<PHONE_" in out, out + err  # the clause matched the agent's call
