"""`tracetui show` and `tracetui convert`, and FILE#RUN in every command."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from tracetui.cli.main import main
from tracetui.core.readers import read_trace

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_runs" / "scheduling" / "original.jsonl"
TWO = ROOT / "tests" / "data" / "otlp" / "collector_two_traces.jsonl"
SECOND = "0af7651916cd43dd8448eb211c80319c"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_show_json_has_format_runs_and_warnings() -> None:
    code, out, _ = run("show", str(TWO), "--format", "json")
    assert code == 0
    doc = orjson.loads(out)
    assert doc["format"] == "otlp-json" and doc["run_count"] == 2
    assert [r["run_id"] for r in doc["runs"]] == ["4bf92f3577b34da6a3ce929d0e0e4736", SECOND]
    assert doc["runs"][0]["kinds"] == {"llm": 2, "tool": 2, "agent": 1}
    assert doc["warnings"] == []


def test_show_text_lists_runs_tools_and_warnings(tmp_path: Path) -> None:
    damaged = tmp_path / "live.jsonl"
    damaged.write_bytes(TWO.read_bytes()[:-40])  # torn last line
    code, out, _ = run("show", str(damaged))
    assert code == 0
    assert "otlp-json" in out and "runs (pick one with FILE#RUN)" in out
    assert "check_availability ×1" in out
    assert "warnings (1):" in out and f"{damaged}:4" in out


def test_show_one_run_with_file_hash_run() -> None:
    code, out, _ = run("show", f"{TWO}#{SECOND}", "--format", "json")
    assert code == 0 and [r["run_id"] for r in orjson.loads(out)["runs"]] == [SECOND]


def test_show_errors_exit_2_in_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    for target in (str(tmp_path / "missing.json"), str(junk), f"{TWO}#nope"):
        code, out, err = run("show", target)
        assert code == 2 and out == ""
        assert err.startswith("tracetui: error:") and err.count("\n") == 1 and "Traceback" not in err


def test_convert_writes_tracetui_and_is_idempotent(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    code, _, err = run("convert", f"{TWO}#{SECOND}", str(a))
    assert code == 0 and "wrote 1 spans" in err
    t = read_trace(a)
    assert t.format == "tracetui" and t.header["run_id"] == SECOND
    assert t.header["converted_from"] == {"format": "otlp-json", "file": TWO.name}
    original = read_trace(f"{TWO}#{SECOND}")
    assert [(s.span_id, s.kind, s.name, s.data) for s in t.spans] == [(s.span_id, s.kind, s.name, s.data) for s in original.spans]
    assert run("convert", str(a), str(b))[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_convert_of_a_native_file_keeps_header_and_spans(tmp_path: Path) -> None:
    """Spans are written in seq order (the sample has them in end order); the header line is unchanged."""
    out, again = tmp_path / "copy.jsonl", tmp_path / "again.jsonl"
    assert run("convert", str(SAMPLE), str(out))[0] == 0
    assert out.read_bytes().split(b"\n", 1)[0] == SAMPLE.read_bytes().split(b"\n", 1)[0]
    assert sorted(out.read_bytes().splitlines()) == sorted(SAMPLE.read_bytes().splitlines())
    assert run("convert", str(out), str(again))[0] == 0
    assert again.read_bytes() == out.read_bytes()


def test_convert_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")
    code, _, err = run("convert", str(SAMPLE), str(out))
    assert code == 2 and "--force" in err
    assert out.read_text() == "precious\n"
    assert run("convert", str(SAMPLE), str(out), "--force")[0] == 0
    assert read_trace(out).format == "tracetui"


def test_diff_takes_file_hash_run_on_both_sides() -> None:
    code, out, _ = run("diff", f"{TWO}#4bf92f", f"{TWO}#{SECOND}", "--format", "json")
    assert code == 1
    doc = orjson.loads(out)
    assert doc["first_divergence"] is not None
    assert (doc["original"]["run_count"], doc["replay"]["trace_id"]) == (2, SECOND)
    _, text, _ = run("diff", f"{TWO}#4bf92f", f"{TWO}#{SECOND}")
    assert f"original: {TWO}#4bf92f3577b34da6a3ce929d0e0e4736 (otlp-json" in text
    assert f"replay:   {TWO}#{SECOND} (otlp-json" in text


def test_the_several_runs_note_only_when_no_run_was_picked() -> None:
    _, _, err = run("diff", str(TWO), str(TWO))
    assert err.count("holds 2 runs") == 2 and "ORIGINAL#RUN" in err and "REPLAY#RUN" in err
    _, _, err = run("diff", f"{TWO}#4bf9", f"{TWO}#{SECOND}")
    assert "holds 2" not in err


def test_convert_to_stdout_and_through_a_symlink(tmp_path: Path) -> None:
    code, out, _ = run("convert", str(SAMPLE), "-")
    assert code == 0 and out.startswith('{"schema":"tracetui/1"')
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert run("convert", str(SAMPLE), str(link), "--force")[0] == 0
    assert link.is_symlink() and real.read_text().startswith('{"schema":"tracetui/1"')


def test_convert_output_has_the_usual_mode_and_keeps_a_replaced_files_mode(tmp_path: Path) -> None:
    import os
    import stat

    out = tmp_path / "out.jsonl"
    old = os.umask(0o022)
    try:
        assert run("convert", str(SAMPLE), str(out))[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o644  # not mkstemp's 0600
        out.chmod(0o640)
        assert run("convert", str(SAMPLE), str(out), "--force")[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o640
    finally:
        os.umask(old)
