"""The `tracetui` command line: exit codes, report shapes, diagnostics, and the first divergence on real pairs."""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest

from tracetui.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_runs"
CORPUS = ROOT.parent / "shared" / "corpus"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def sample_pairs() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if (p / "original.jsonl").exists()) if SAMPLES.exists() else []


def expected_first(notes: Path) -> str:
    """The type a sample's NOTES.md announces first under its "## Expected first divergence" heading."""
    import re

    m = re.search(r"^## Expected first divergence\s+`([a-z_]+)`", notes.read_text(), re.M)
    assert m, f"{notes} does not state the expected first divergence type in backticks"
    return m.group(1)


# --- sample pairs -------------------------------------------------------------------------


@pytest.mark.parametrize("pair", sample_pairs(), ids=lambda p: p.name)
def test_sample_pair_reports_the_first_divergence_its_notes_announce(pair: Path) -> None:
    """Each bundled incident pair exits 1 and reports the first divergence type stated in its NOTES.md."""
    code, out, err = run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"), "--format", "json")
    assert code == 1, err
    report = orjson.loads(out)
    assert report["first_divergence"]["type"] == expected_first(pair / "NOTES.md")
    assert report["first_divergence"]["fields"] or report["first_divergence"]["type"] in {
        "unrecorded_call", "missing_call", "extra_span", "missing_span"}
    assert err == ""  # bundled samples load without a single issue


@pytest.mark.parametrize("pair", sample_pairs(), ids=lambda p: p.name)
def test_otlp_copy_of_a_sample_gives_the_same_first_divergence(pair: Path) -> None:
    """A sample also shipped as OTLP/JSON with GenAI attributes diverges at the same place, with the same type."""
    if not (pair / "original.otlp.json").exists():
        pytest.skip("no OTLP copy of this sample")
    _, native_out, _ = run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"), "--format", "json")
    code, out, err = run("diff", str(pair / "original.otlp.json"), str(pair / "replay.otlp.json"), "--format", "json")
    assert code == 1, err
    native, otlp = orjson.loads(native_out), orjson.loads(out)
    assert otlp["original"]["format"] == "otlp-json"
    assert otlp["first_divergence"]["type"] == native["first_divergence"]["type"]
    assert otlp["first_divergence"]["original"]["name"] == native["first_divergence"]["original"]["name"]


def _restamp(src: Path, dst: Path) -> None:
    """Copy a tracetui/1 trace giving every span a new id and every timestamp a shift: a volatile-only change."""
    lines = src.read_bytes().splitlines()
    out = [lines[0]]
    for raw in lines[1:]:
        obj = orjson.loads(raw)
        obj["span_id"] = "x-" + obj["span_id"]
        if obj.get("parent_id"):
            obj["parent_id"] = "x-" + obj["parent_id"]
        for k in ("start_ns", "end_ns"):
            if obj.get(k) is not None:
                obj[k] += 86_400 * 10**9 + 12_345
        if "usage" in obj.get("llm", {}):
            obj["llm"]["usage"] = {"input_tokens": 1, "output_tokens": 2}
        out.append(orjson.dumps(obj))
    dst.write_bytes(b"\n".join(out) + b"\n")


@pytest.mark.parametrize("pair", sample_pairs(), ids=lambda p: p.name)
def test_pair_differing_only_in_ids_and_timestamps_exits_zero(pair: Path, tmp_path: Path) -> None:
    """Ids, timestamps and token counts are volatile: such a pair has no divergence and exits 0."""
    other = tmp_path / "restamped.jsonl"
    _restamp(pair / "original.jsonl", other)
    code, out, _ = run("diff", str(pair / "original.jsonl"), str(other))
    assert code == 0
    assert "no divergence" in out


# --- one thing changed in a real agent run, as OTLP/JSON ------------------------------------


def _otlp_spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _attr(span: dict[str, Any], key: str) -> dict[str, Any] | None:
    for a in span["attributes"]:
        if a["key"] == key:
            return a
    return None


def _spans_where(doc: dict[str, Any], op: str) -> list[dict[str, Any]]:
    return [s for s in _otlp_spans(doc) if (_attr(s, "gen_ai.operation.name") or {}).get("value", {}).get("stringValue") == op]


def _set(span: dict[str, Any], keys: str, value: str) -> None:
    """Set the first of the comma-separated attribute keys the span has (current GenAI name, then any-agent's)."""
    for key in keys.split(","):
        a = _attr(span, key)
        if a is not None:
            a["value"] = {"stringValue": value}
            return
    raise AssertionError(f"span {span['name']} has none of {keys}")


def change_argument(doc: dict[str, Any]) -> None:
    _set(_spans_where(doc, "execute_tool")[0], "gen_ai.tool.call.arguments,gen_ai.tool.args", '{"timezone": "Europe/Paris"}')


def change_output(doc: dict[str, Any]) -> None:
    _set(_spans_where(doc, "execute_tool")[0], "gen_ai.tool.call.result,gen_ai.output", '{"datetime": "1999-01-01T00:00:00"}')


def extra_call(doc: dict[str, Any]) -> None:
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    tool = _spans_where(doc, "execute_tool")[0]
    clone = copy.deepcopy(tool)
    clone["spanId"] = "ffffffffffff0001"
    _set(clone, "gen_ai.tool.name", "lookup_weather")
    clone["name"] = "execute_tool lookup_weather"
    clone["startTimeUnixNano"] = str(int(tool["endTimeUnixNano"]) + 1)
    clone["endTimeUnixNano"] = str(int(tool["endTimeUnixNano"]) + 2)
    spans.append(clone)


def removed_call(doc: dict[str, Any]) -> None:
    victim = _spans_where(doc, "execute_tool")[-1]
    for ss in (ss for rs in doc["resourceSpans"] for ss in rs["scopeSpans"]):
        ss["spans"] = [s for s in ss["spans"] if s is not victim]


def change_model(doc: dict[str, Any]) -> None:
    for s in _spans_where(doc, "chat") + _spans_where(doc, "call_llm"):
        if _attr(s, "gen_ai.request.model"):
            _set(s, "gen_ai.request.model", "gpt-4o-mini-2099")
            return
    raise AssertionError("no LLM span with a model")


def change_llm_answer(doc: dict[str, Any]) -> None:
    for s in reversed(_spans_where(doc, "chat") + _spans_where(doc, "call_llm")):
        if _attr(s, "gen_ai.output.messages") or _attr(s, "gen_ai.output"):
            _set(s, "gen_ai.output.messages,gen_ai.output", orjson.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "I refuse."}]}]).decode())
            return
    raise AssertionError("no LLM span with output messages")


CHANGES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "argument": (change_argument, "args_mismatch"),
    "output": (change_output, "output_mismatch"),
    "extra call": (extra_call, "unrecorded_call"),
    "removed call": (removed_call, "missing_call"),
    "model": (change_model, "input_mismatch"),
    "llm answer": (change_llm_answer, "decision_mismatch"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_one_change_in_a_real_otlp_agent_run_is_the_first_divergence(change: str, tmp_path: Path) -> None:
    """A real agent run (any-agent's OpenAI trace as OTLP/JSON) with one thing changed reports exactly that change first."""
    src = CORPUS / "any-agent-trace" / "OPENAI_trace.json"
    if not src.exists():
        pytest.skip("shared corpus not present")
    from tests.otlp_helpers import any_agent_to_otlp

    doc = any_agent_to_otlp(src)
    a, b = tmp_path / "original.json", tmp_path / "replay.json"
    a.write_bytes(orjson.dumps(doc))
    mutated = copy.deepcopy(doc)
    mutate, expected = CHANGES[change]
    mutate(mutated)
    b.write_bytes(orjson.dumps(mutated))
    code, out, err = run("diff", str(a), str(b), "--format", "json")
    report = orjson.loads(out)
    assert code == 1, err
    assert report["first_divergence"]["type"] == expected
    # and the unchanged copy is clean
    assert run("diff", str(a), str(a))[0] == 0


# --- report shape ---------------------------------------------------------------------------


def test_json_report_shape() -> None:
    """--format json carries schema_version, first_divergence with sides and fields, divergences and both traces."""
    pair = sample_pairs()[0]
    code, out, _ = run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"), "--format", "json")
    report = orjson.loads(out)
    assert report["schema_version"] == 1
    first = report["first_divergence"]
    assert set(first) >= {"type", "kind", "original", "replay", "fields"}
    for side in ("original", "replay"):
        assert first[side] is None or set(first[side]) == {"span_id", "name", "seq"}
        assert set(report[side]) >= {"path", "format", "span_count"}
        assert report[side]["format"] == "tracetui"
    assert all(set(f) == {"path", "original", "replay"} for f in first["fields"])
    assert report["divergences"][0] == first
    assert sum(report["counts"].values()) == len(report["divergences"])


def test_text_report_names_type_path_and_both_values() -> None:
    """The text report states the first divergence's type, each differing field, and both values."""
    pair = sample_pairs()[0]
    _, js, _ = run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"), "--format", "json")
    first = orjson.loads(js)["first_divergence"]
    code, out, _ = run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"))
    assert code == 1
    assert f"first divergence: {first['type']}" in out
    for f in first["fields"]:
        assert f["path"] in out
    assert "divergence" in out.splitlines()[-1]


# --- errors -----------------------------------------------------------------------------------


def test_missing_file_is_exit_2_with_the_path(tmp_path: Path) -> None:
    code, out, err = run("diff", str(tmp_path / "nope.jsonl"), str(tmp_path / "nope.jsonl"))
    assert code == 2 and out == ""
    assert "nope.jsonl" in err and "no such file" in err
    assert "Traceback" not in err


def test_garbage_file_is_exit_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a trace\n")
    code, _, err = run("diff", str(bad), str(bad))
    assert code == 2
    assert "bad.txt" in err and "not recognised" in err


def test_bad_line_is_reported_and_the_rest_still_diffs(tmp_path: Path) -> None:
    """One broken line is skipped with file and line named on stderr; the diff still runs."""
    pair = sample_pairs()[0]
    lines = (pair / "original.jsonl").read_bytes().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\n".join(lines[:2] + [b'{"span_id": "oops", '] + lines[2:]) + b"\n")
    code, out, err = run("diff", str(broken), str(pair / "original.jsonl"), "--format", "json")
    assert code in (0, 1)
    assert f"{broken}:3" in err
    assert orjson.loads(out)["original"]["span_count"] == len(lines) - 1


@pytest.mark.parametrize(
    "argv",
    [["diff"], ["diff", "a"], ["diff", "a", "b", "--format", "xml"], ["diff", "a", "b", "--input-format", "nope"], ["--bogus"], []],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    code, _, err = run(*argv)
    assert code == 2
    assert "Traceback" not in err


def test_help_and_version_exit_0() -> None:
    assert run("--help")[0] == 0
    code, _, _ = run("diff", "--help")
    assert code == 0


def test_exit_zero_forces_zero_on_divergence() -> None:
    pair = sample_pairs()[0]
    assert run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"), "--exit-zero")[0] == 0


# --- hostile and odd input -------------------------------------------------------------------


def _one_span_trace(path: Path, **span: Any) -> Path:
    header = {"schema": "tracetui/1", "run_id": "r"}
    base = {"span_id": "a", "parent_id": None, "seq": 0, "kind": "tool", "name": "t", "status": "ok"}
    path.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps({**base, **span}) + b"\n")
    return path


def test_span_names_and_values_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """Escape sequences, bells, newlines and bidi overrides in a trace are escaped in the text report."""
    evil = "\x1b[2J\x1b]0;pwned\x07\u202eevil\nname"
    a = _one_span_trace(tmp_path / "a.jsonl", name=evil, tool={"tool_name": "t", "arguments": {"q": evil}})
    b = _one_span_trace(tmp_path / "b.jsonl", name=evil, tool={"tool_name": "t", "arguments": {"q": "x"}})
    code, out, _ = run("diff", str(a), str(b))
    assert code == 1
    assert not any(c in out for c in "\x1b\x07\u202e")
    assert "\\x1b" in out or "\\u001b" in out
    assert all(line.isprintable() for line in out.splitlines())


def test_absent_and_null_are_told_apart(tmp_path: Path) -> None:
    """A key missing on one side reads `(absent)`; a recorded null reads `null` (text), `absent` marks it (JSON)."""
    a = _one_span_trace(tmp_path / "a.jsonl", tool={"tool_name": "t", "output": {"error": "x", "v": None}})
    b = _one_span_trace(tmp_path / "b.jsonl", tool={"tool_name": "t", "output": {"v": 1}})
    _, out, _ = run("diff", str(a), str(b))
    assert "(absent)" in out and "null" in out
    _, js, _ = run("diff", str(a), str(b), "--format", "json")
    fields = {f["path"]: f for f in orjson.loads(js)["first_divergence"]["fields"]}
    assert fields["tool.output.error"]["absent"] == "replay"
    assert "absent" not in fields["tool.output.v"] and fields["tool.output.v"]["original"] is None


def test_malformed_field_types_are_warnings_not_crashes(tmp_path: Path) -> None:
    """An object as status or as tool name is read with a warning; the diff still runs (exit 0/1, never a traceback)."""
    a = _one_span_trace(tmp_path / "a.jsonl", status={"code": 2}, tool={"tool_name": {"a": 1}, "arguments": {}})
    b = _one_span_trace(tmp_path / "b.jsonl", status=[], tool={"tool_name": ["x"], "arguments": {}})
    code, out, err = run("diff", str(a), str(b))
    assert code in (0, 1)
    assert "Traceback" not in err and "internal error" not in err
    assert "status" in err


def test_byte_order_mark_and_later_schema_are_read(tmp_path: Path) -> None:
    """A UTF-8 BOM is skipped with a warning naming the line; a `tracetui/2` header is read as tracetui/1
    with a warning naming the line."""
    src = SAMPLES / "order_lookup" / "original.jsonl"
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
    code, out, err = run("diff", str(bom), str(src))
    assert code == 0 and "byte-order mark" in err and f"{bom}:1" in err
    later = tmp_path / "later.jsonl"
    later.write_bytes(src.read_bytes().replace(b'"schema":"tracetui/1"', b'"schema":"tracetui/2"', 1))
    code, _, err = run("diff", str(later), str(src))
    assert code == 0
    assert f"{later}:1 (schema)" in err and "original" in err


def test_internal_errors_exit_2_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug surfaces as one `internal error` line and exit 2 — never as exit 1 ("diverged") with a traceback."""
    import tracetui.core.diff as diff_mod

    def boom(*_: Any, **__: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(diff_mod, "diff_traces", boom)
    monkeypatch.delenv("TRACETUI_DEBUG", raising=False)
    pair = sample_pairs()[0]
    code, out, err = run("diff", str(pair / "original.jsonl"), str(pair / "replay.jsonl"))
    assert code == 2 and out == ""
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_view_refuses_to_run_without_a_terminal() -> None:
    """`tracetui A B` with stdout not a terminal (a pipe, CI) exits 2 and points at `tracetui diff`."""
    pair = sample_pairs()[0]
    code, _, err = run(str(pair / "original.jsonl"), str(pair / "replay.jsonl"))
    assert code == 2 and "tracetui diff" in err


def test_ctrl_c_while_the_cli_is_imported_exits_130_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's entry point (``cli.entry``, named in pyproject.toml) imports the CLI itself: Ctrl+C in those
    first ~0.1 s ends with 130, as it does later, instead of a KeyboardInterrupt traceback."""
    import importlib.abc
    import sys
    import tomllib

    from tracetui.cli import entry

    class Interrupted(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "tracetui.cli.main":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "tracetui.cli.main", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Interrupted(), *sys.meta_path])
    assert entry.main() == 130
    scripts = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["tracetui"] == "tracetui.cli.entry:main"
