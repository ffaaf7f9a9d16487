"""`tracetui help [COMMAND]`, `-V`, and `tracetui FILE` (one trace, or a file's runs) from the command line."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from tracetui import __version__
from tracetui.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SCHEDULING = ROOT / "sample_runs" / "scheduling" / "original.jsonl"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(flag)[0] == 0
    assert capsys.readouterr().out.strip() == f"tracetui {__version__}"


def test_help_is_a_command_not_a_file_name() -> None:
    code, out, err = run("help")
    assert code == 0 and out.startswith("usage: tracetui") and "tracetui FILE" in out and not err
    code, out, err = run("help", "diff")
    assert code == 0 and out.startswith("usage: tracetui diff") and "--exit-zero" in out
    code, out, err = run("help", "triage")
    assert code == 0 and "--batch" in out
    code, out, err = run("help", "no-such-command")
    assert code == 2 and not out and "no command 'no-such-command'" in err and "diff" in err


def test_one_file_is_not_a_usage_error() -> None:
    """`tracetui FILE` parses (the TUI needs a terminal, which tests have not: it says so, naming `show`)."""
    if not SCHEDULING.exists():
        pytest.skip("sample_runs not present")
    code, out, err = run(str(SCHEDULING))
    assert code == 2 and "the view needs a terminal" in err and "tracetui show FILE" in err
    assert "the following arguments are required" not in err
    code, _, err = run(str(SCHEDULING) + ".missing")
    assert code == 2 and "no such file" in err
    code, _, err = run("--watch", str(SCHEDULING))
    assert code == 2 and "--watch follows a replay" in err


def test_how_values_were_read_is_said_only_with_verbose(tmp_path: Path) -> None:
    """Integers beyond 64 bits are kept exact: nothing for the user to act on, so `show`, `diff` and
    `convert` say how they were read (Python's json, slower) only with --verbose; --format json lists it."""
    big = 123456789012345678901234567890
    f = tmp_path / "big.jsonl"
    f.write_text(f'{{"tool": "t", "args": {{"n": {big}}}, "output": 1}}\n')
    for argv in (["show", str(f)], ["diff", str(f), str(f)], ["convert", str(f), str(tmp_path / "out.jsonl")]):
        code, out, err = run(*argv)
        assert code == 0 and "beyond 64 bits" not in out + err, (argv, out, err)
    (tmp_path / "out.jsonl").unlink()
    for argv in (["show", str(f), "--verbose"], ["diff", "-v", str(f), str(f)],
                 ["convert", "--verbose", str(f), str(tmp_path / "out.jsonl")], ["show", str(f), "--format", "json"]):
        code, out, err = run(*argv)
        assert code == 0 and "1 integer(s) beyond 64 bits" in out + err and "Python's json" in out + err, argv


def test_diff_json_escapes_c1_controls_and_bidi_overrides(tmp_path: Path) -> None:
    """`diff --format json` writes C1 controls, bidi overrides and isolates as \\u escapes: the same
    JSON values, but nothing raw that could drive a terminal when the report is `cat`ed."""
    nasty = "ok\u202eevil\u0085\u009b31m\u2066x\u2069\U000e0041"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(orjson.dumps({"tool": "lookup" + nasty, "args": {"q": nasty}, "output": "one"}).decode() + "\n")
    b.write_text(orjson.dumps({"tool": "lookup" + nasty, "args": {"q": nasty}, "output": "two" + nasty}).decode() + "\n")
    code, out, err = run("diff", "--format", "json", str(a), str(b))
    assert code == 1, err
    assert not any(c in out for c in "\u202e\u0085\u009b\u2066\u2069\U000e0041")
    assert "\\u202e" in out and "\\u0085" in out and "\\udb40\\udc41" in out
    doc = orjson.loads(out)
    assert any(f["replay"] == "two" + nasty for d in doc["divergences"] for f in d["fields"])


def test_diff_text_shortens_deep_span_paths_like_the_breadcrumb(tmp_path: Path) -> None:
    """A divergence 1,500 spans deep prints its root, a count and its nearest ancestors, not 1,500
    names (the JSON report keeps the whole path)."""
    import json

    def trace(out: str) -> str:
        header = {"schema": "tracetui/1", "run_id": "r"}
        spans = [{"span_id": f"s{i}", "parent_id": f"s{i - 1}" if i else None, "seq": i, "kind": "agent",
                  "name": f"level{i}", "status": "ok"} for i in range(1500)]
        spans.append({"span_id": "t", "parent_id": "s1499", "seq": 1500, "kind": "tool", "name": "lookup",
                      "status": "ok", "tool": {"tool_name": "lookup", "arguments": {}, "output": out}})
        return "\n".join(json.dumps(x) for x in [header, *spans]) + "\n"

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(trace("one"))
    b.write_text(trace("two"))
    code, out, err = run("diff", str(a), str(b))
    assert code == 1, err
    line = next(x for x in out.splitlines() if x.startswith("first divergence:"))
    assert line.endswith("span: level0 > … 1,494 more > level1495 > level1496 > level1497 > level1498 > level1499 > lookup")
    assert len(out) < 2000
    code, out, _ = run("diff", "--format", "json", str(a), str(b))
    assert orjson.loads(out)["first_divergence"]["path"].count(" > ") == 1500
