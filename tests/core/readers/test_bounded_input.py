"""Input that does not end, or that is mostly not a trace, ends in a clear error with bounded work
(issue 21): /dev/zero, an endless FIFO, a file of unreadable lines; the CLI prints a capped issue list."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tracetui.cli.main import main
from tracetui.core.errors import ReadError
from tracetui.core.readers import read_runs, read_trace
from tracetui.core.readers.limits import BAD_LINES, STREAM_ENV

SAMPLES = Path(__file__).resolve().parents[3] / "sample_runs"
ORIGINAL = SAMPLES / "scheduling" / "original.jsonl"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("fmt", ["tracetui", "otlp-json", "vcrpy"])
def test_dev_zero_stops_at_the_stream_allowance(monkeypatch, fmt):
    monkeypatch.setenv(STREAM_ENV, "2")
    with pytest.raises(ReadError, match=r"pipe or device that did not end within 2 MiB.*TRACETUI_MAX_STREAM_MB"):
        read_trace("/dev/zero", format=fmt)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("endless", ["span", "garbage"])
def test_an_endless_fifo_ends_in_an_error(tmp_path, monkeypatch, endless):
    monkeypatch.setenv(STREAM_ENV, "2")
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    header, span = ORIGINAL.read_bytes().splitlines()[:2]
    line = (span if endless == "span" else b"{not json") + b"\n"
    stop = threading.Event()

    def write() -> None:  # a writer that never stops, until the reader has gone
        try:
            with open(fifo, "wb") as fh:
                fh.write(header + b"\n")
                while not stop.is_set():
                    fh.write(line * 256)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        with pytest.raises(ReadError) as caught:
            read_runs(str(fifo))
    finally:
        stop.set()
        writer.join(5)
    reason = caught.value.reason
    if endless == "span":
        assert "did not end within 2 MiB" in reason
    else:
        assert "reading stopped: 10,001 lines could not be read" in reason and "tracetui/1" in reason
    assert not writer.is_alive()


@pytest.mark.parametrize("source", [ORIGINAL, SAMPLES / "order_lookup" / "original.otlp.json"])
def test_a_file_of_mostly_bad_lines_stops_after_the_bad_line_budget(tmp_path, source):
    import orjson

    first = source.read_bytes() if source.suffix == ".jsonl" else orjson.dumps(orjson.loads(source.read_bytes())) + b"\n"
    path = tmp_path / "bad.jsonl"
    path.write_bytes(first + b"{bad\n" * (3 * BAD_LINES))
    with pytest.raises(ReadError) as caught:
        read_runs(str(path))
    assert "reading stopped: 10,001 lines could not be read" in caught.value.reason
    assert caught.value.line is not None and caught.value.line < len(first.splitlines()) + BAD_LINES + 2


def test_many_bad_lines_among_more_good_ones_still_read(tmp_path):
    header, *spans = ORIGINAL.read_bytes().splitlines()
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join([header, *spans, *([b"{bad"] * 5)]) + b"\n")
    t = read_trace(str(path))
    assert len(t.spans) == len(spans) and sum("not valid JSON" in i.message for i in t.issues) == 5


def test_diff_prints_a_capped_issue_list(tmp_path, capsys):
    path = tmp_path / "some-bad.jsonl"
    path.write_bytes(ORIGINAL.read_bytes() + b"{bad\n" * 500)
    code = main(["diff", str(path), str(path)])
    err = capsys.readouterr().err
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 2 * 21, err[:2000]
    assert lines[20] == f"tracetui: original: ... 480 more (`tracetui show {path} --format json` lists the first 1,000)"


def test_valid_json_lines_of_the_wrong_shape_keep_a_capped_issue_list_with_the_count(tmp_path):
    import orjson

    from tracetui.core.readers.base import MAX_ISSUES

    first = orjson.dumps(orjson.loads((SAMPLES / "order_lookup" / "original.otlp.json").read_bytes())) + b"\n"
    path = tmp_path / "wrong-shape.jsonl"
    path.write_bytes(first + b'{"resourceSpans": 3}\n' * (MAX_ISSUES + 2500))
    t = read_trace(str(path))
    assert t.spans and len(t.issues) == MAX_ISSUES + 1
    assert t.issues[0].line == 2 and t.issues[MAX_ISSUES - 1].line == MAX_ISSUES + 1  # the first ones, in order
    last = t.issues[-1]
    assert last.message == f"… 2500 more issues not listed (the first {MAX_ISSUES} are): skipped 2500", last
    assert last.severity == "skipped" and last.path == str(path)


def test_an_issue_list_keeps_the_first_and_counts_the_rest_at_the_worst_severity_dropped():
    from tracetui.core.model import ReadIssue
    from tracetui.core.readers.base import MAX_ISSUES, IssueList

    a = IssueList(ReadIssue("f", n, "", "w", "warning") for n in range(MAX_ISSUES + 3))
    a.append(ReadIssue("f", None, "", "broken", "error"))
    b = IssueList([ReadIssue("g", 1, "", "first of b", "info")])
    b.extend(a)  # b's own issue, then a's first ones; a's count carried over
    done = b.finished()
    assert len(done) == MAX_ISSUES + 1 and done[0].message == "first of b" and done[1].line == 0
    assert done[-1].severity == "error" and done[-1].message.startswith("… 5 more issues not listed")
    assert done[-1].message.endswith(": error 1, warning 4")
    assert IssueList([ReadIssue("f", 1, "", "m")]).finished() == [ReadIssue("f", 1, "", "m")]
