"""The run writer's rules (``core/harness/writer.py``), each on a file written in the test (issue 25, round 8).

A header is written first with room to spare and flushed, each span is one flushed line, the header is completed in
place without moving a byte of the spans (or, when the completion does not fit, left as it is until closing writes
the completion in its place), and closing rewrites the file once without the spare room, atomically. A new file is created exclusively; ``overwrite`` leaves the old
file whole until the writer closes, keeps its permissions, and replaces what a link points to.
"""

from __future__ import annotations

import os
import stat

import orjson
import pytest

from tracetui.core.harness import writer as writer_mod
from tracetui.core.harness.writer import HEADER_ROOM, TraceWriter
from tracetui.core.model import Span, SpanKind, Status


def _span(span_id: str, seq: int, parent: str | None = "root") -> Span:
    return Span(span_id, parent, seq, SpanKind.TOOL, "execute_tool lookup", 1, 2, Status.OK, None,
                {"tool_name": "lookup", "arguments": {"q": seq}, "output": "ok"}, {})


def _lines(path) -> list[bytes]:
    with open(path, "rb") as fh:
        data = fh.read()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def _temporaries(folder) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(".tmp")]


def test_the_header_is_written_first_schema_first_with_its_spare_room_and_flushed(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    assert w.path == str(path)
    w.header({"run_id": "r1", "schema": "other/9", "mode": "record"})
    # read while the writer is open: flushed, and padded with exactly HEADER_ROOM spaces
    data = path.read_bytes()
    line = orjson.dumps({"schema": "tracetui/1", "run_id": "r1", "mode": "record"})
    assert data == line + b" " * HEADER_ROOM + b"\n"
    assert HEADER_ROOM == 1024
    w.close()


def test_each_span_is_one_flushed_line_and_counted(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    assert w.spans == 0
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    lines = _lines(path)
    assert len(lines) == 2 and orjson.loads(lines[1])["span_id"] == "a"
    w.span(_span("b", 1, "a"))
    lines = _lines(path)
    assert [orjson.loads(x)["span_id"] for x in lines[1:]] == ["a", "b"]
    assert orjson.loads(lines[2])["parent_id"] == "a" and orjson.loads(lines[2])["tool"]["arguments"] == {"q": 1}
    assert w.spans == 2
    w.close()


def test_completing_the_header_rewrites_it_in_place_without_moving_the_spans(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    before = path.read_bytes()
    assert w.complete_header({"run_id": "r1", "schema": "x", "redaction": {"fired": {"email": 2}}}) is True
    after = path.read_bytes()
    assert len(after) == len(before)
    head, span_line = after.split(b"\n")[:2]
    assert orjson.loads(head) == {"schema": "tracetui/1", "run_id": "r1", "redaction": {"fired": {"email": 2}}}
    assert head.startswith(b'{"schema":"tracetui/1","run_id":"r1","redaction"')
    assert span_line == before.split(b"\n")[1]
    # the writer goes on at the end: the next span follows the first
    w.span(_span("b", 1, "a"))
    assert [orjson.loads(x)["span_id"] for x in _lines(path)[1:]] == ["a", "b"]
    w.close()
    assert _lines(path)[0] == orjson.dumps({"schema": "tracetui/1", "run_id": "r1",
                                            "redaction": {"fired": {"email": 2}}})


def test_a_completion_that_does_not_fit_leaves_the_file_unchanged_until_close_writes_it(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    before = path.read_bytes()
    big = {"run_id": "r1", "big": "x" * (HEADER_ROOM + 10)}
    assert w.complete_header(big) is False
    assert path.read_bytes() == before
    w.span(_span("b", 1, "a"))
    w.close()
    lines = [orjson.loads(x) for x in _lines(path)]
    assert lines[0] == {"schema": "tracetui/1", **big}
    assert [x["span_id"] for x in lines[1:]] == ["a", "b"]


def test_the_latest_completion_wins_whether_it_fits_or_not(tmp_path):
    """A completion too big for the room, then one that fits: the one that fits is the header (written in place and
    kept at close); the other way round, the big one written at close."""
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    assert w.complete_header({"run_id": "r1", "big": "x" * (HEADER_ROOM + 10)}) is False
    assert w.complete_header({"run_id": "r1", "small": 1}) is True
    w.close()
    assert orjson.loads(_lines(path)[0]) == {"schema": "tracetui/1", "run_id": "r1", "small": 1}
    path2 = tmp_path / "run2.jsonl"
    w = TraceWriter(str(path2))
    w.header({"run_id": "r1"})
    assert w.complete_header({"run_id": "r1", "small": 1}) is True
    assert w.complete_header({"run_id": "r1", "big": "y" * (HEADER_ROOM + 10)}) is False
    w.close()
    assert orjson.loads(_lines(path2)[0]) == {"schema": "tracetui/1", "run_id": "r1", "big": "y" * (HEADER_ROOM + 10)}


def test_a_completion_too_big_for_the_first_runs_room_is_written_in_that_runs_header_at_close(tmp_path):
    """Two runs in one file: the first's oversize completion goes to the first header, the second's header is its own
    (completed in place), and every span stays where it was."""
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    big = {"run_id": "r1", "tools": ["t%03d" % i for i in range(200)]}
    assert w.complete_header(big) is False
    w.header({"run_id": "r2"})
    w.span(_span("b", 0, None))
    assert w.complete_header({"run_id": "r2", "done": True}) is True
    w.close()
    lines = [orjson.loads(x) for x in _lines(path)]
    assert lines == [{"schema": "tracetui/1", **big}, lines[1], {"schema": "tracetui/1", "run_id": "r2", "done": True},
                     lines[3]]
    assert lines[1]["span_id"] == "a" and lines[3]["span_id"] == "b"


def test_a_completion_that_fills_the_room_exactly_fits(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    base = len(orjson.dumps({"schema": "tracetui/1", "run_id": "r1", "pad": ""}))
    room = len(orjson.dumps({"schema": "tracetui/1", "run_id": "r1"})) + HEADER_ROOM
    exact = {"run_id": "r1", "pad": "x" * (room - base)}
    assert len(orjson.dumps({"schema": "tracetui/1", **exact})) == room
    assert w.complete_header(exact) is True
    head = path.read_bytes().split(b"\n")[0]
    assert orjson.loads(head) == {"schema": "tracetui/1", **exact} and not head.endswith(b" ")
    one_more = {"run_id": "r1", "pad": "x" * (room - base + 1)}
    assert w.complete_header(one_more) is False
    assert orjson.loads(path.read_bytes().split(b"\n")[0]) == {"schema": "tracetui/1", **exact}
    w.close()
    assert orjson.loads(_lines(path)[0]) == {"schema": "tracetui/1", **one_more}


def test_completion_rewrites_the_current_runs_header_and_close_compacts_every_header(tmp_path):
    path = tmp_path / "runs.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    w.header({"run_id": "r2"})
    w.span(_span("b", 0, None))
    assert w.complete_header({"run_id": "r2", "done": True})
    w.span(_span("c", 1, "b"))
    w.close()
    lines = _lines(path)
    assert [orjson.loads(x) for x in lines] == [
        {"schema": "tracetui/1", "run_id": "r1"},
        orjson.loads(orjson.dumps(_obj("a", 0, None))),
        {"schema": "tracetui/1", "run_id": "r2", "done": True},
        orjson.loads(orjson.dumps(_obj("b", 0, None))),
        orjson.loads(orjson.dumps(_obj("c", 1, "b"))),
    ]
    assert not any(x.endswith(b" ") for x in lines)
    assert lines[0] == orjson.dumps({"schema": "tracetui/1", "run_id": "r1"})


def _obj(span_id: str, seq: int, parent: str | None) -> dict:
    from tracetui.core.readers.native import span_to_obj

    return span_to_obj(_span(span_id, seq, parent))


def test_close_keeps_trailing_spaces_inside_a_span_and_only_strips_the_headers_room(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1 "})
    sp = _span("a", 0, None)
    sp.data["output"] = "ends in spaces   "
    w.span(sp)
    w.close()
    lines = _lines(path)
    assert orjson.loads(lines[0]) == {"schema": "tracetui/1", "run_id": "r1 "}
    assert orjson.loads(lines[1])["tool"]["output"] == "ends in spaces   "
    assert len(lines) == 2


def test_close_replaces_the_file_atomically_once_and_a_second_close_does_nothing(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    ino = os.stat(path).st_ino
    w.close()
    assert os.stat(path).st_ino != ino  # a new file renamed into place, not the open one cut short
    ino2 = os.stat(path).st_ino
    data = path.read_bytes()
    w.close()
    assert os.stat(path).st_ino == ino2 and path.read_bytes() == data
    assert _temporaries(tmp_path) == []


def test_a_new_file_keeps_the_mode_it_was_created_with(tmp_path):
    path = tmp_path / "run.jsonl"
    old = os.umask(0o027)
    try:
        w = TraceWriter(str(path))
    finally:
        os.umask(old)
    w.header({"run_id": "r1"})
    w.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_an_existing_file_is_never_touched_without_overwrite(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"precious\n")
    with pytest.raises(FileExistsError):
        TraceWriter(str(path))
    assert path.read_bytes() == b"precious\n"


def test_overwrite_leaves_the_old_file_whole_until_close_then_replaces_it(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"old run\n")
    w = TraceWriter(str(path), overwrite=True)
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    assert path.read_bytes() == b"old run\n"
    assert len(_temporaries(tmp_path)) == 1  # the run streams to a temporary beside it
    w.close()
    assert [orjson.loads(x)["span_id"] for x in _lines(path)[1:]] == ["a"]
    assert orjson.loads(_lines(path)[0]) == {"schema": "tracetui/1", "run_id": "r1"}
    assert _temporaries(tmp_path) == []


def test_a_failed_run_with_overwrite_never_destroys_the_old_file(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"old run\n")
    w = TraceWriter(str(path), overwrite=True)
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    # the run died before close: its stream is dropped without the writer closing
    w._fh.close()
    assert path.read_bytes() == b"old run\n"


def test_overwrite_keeps_the_old_files_permissions(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"old run\n")
    os.chmod(path, 0o600)
    w = TraceWriter(str(path), overwrite=True)
    w.header({"run_id": "r1"})
    w.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o664)
    w = TraceWriter(str(path), overwrite=True)
    w.header({"run_id": "r2"})
    w.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o664
    assert orjson.loads(_lines(path)[0])["run_id"] == "r2"


def test_overwrite_through_a_link_replaces_the_file_it_points_to_and_keeps_the_link(tmp_path):
    real_dir = tmp_path / "store"
    real_dir.mkdir()
    target = real_dir / "run.jsonl"
    target.write_bytes(b"old run\n")
    os.chmod(target, 0o640)
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    w = TraceWriter(str(link), overwrite=True)
    assert w.path == str(link)
    w.header({"run_id": "r1"})
    assert _temporaries(real_dir) and not _temporaries(tmp_path)  # beside the target, not the link
    w.close()
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert orjson.loads(_lines(target)[0])["run_id"] == "r1"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert _temporaries(real_dir) == [] and _temporaries(tmp_path) == []


def test_overwrite_of_a_dangling_link_writes_where_it_points(tmp_path):
    target = tmp_path / "new.jsonl"
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    w = TraceWriter(str(link), overwrite=True)
    w.header({"run_id": "r1"})
    w.close()
    assert link.is_symlink() and orjson.loads(_lines(target)[0])["run_id"] == "r1"
    assert _temporaries(tmp_path) == []


def test_a_relative_path_is_written_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.jsonl").write_bytes(b"old\n")
    w = TraceWriter("run.jsonl", overwrite=True)
    w.header({"run_id": "r1"})
    w.close()
    assert orjson.loads(_lines(tmp_path / "run.jsonl")[0])["run_id"] == "r1"
    w = TraceWriter("other.jsonl")
    w.header({"run_id": "r2"})
    w.close()
    assert orjson.loads(_lines(tmp_path / "other.jsonl")[0])["run_id"] == "r2"
    assert _temporaries(tmp_path) == []


def test_a_close_that_cannot_rename_leaves_no_temporary_and_raises(tmp_path, monkeypatch):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))

    renames: list[tuple[str, str]] = []

    def refuse(src, dst):
        renames.append((src, dst))
        raise OSError("no rename today")

    monkeypatch.setattr(writer_mod.os, "replace", refuse)
    with pytest.raises(OSError, match="no rename today"):
        w.close()
    # the rewrite was a temporary beside the target, renamed onto it (atomic: same folder, same file system)
    assert [(os.path.dirname(src), dst) for src, dst in renames] == [(str(tmp_path), str(path))]
    assert _temporaries(tmp_path) == []
    # the streamed file is still there, with its spare room
    assert [orjson.loads(x)["span_id"] for x in _lines(path)[1:]] == ["a"]


def test_a_trace_whose_file_was_removed_mid_run_is_written_whole_at_close_readable_by_all(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    os.unlink(path)  # someone removed it while the run went on: the writer still holds every byte
    w.close()
    assert [orjson.loads(x) for x in _lines(path)][0] == {"schema": "tracetui/1", "run_id": "r1"}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_completing_before_any_header_is_refused_there_is_no_room(tmp_path):
    path = tmp_path / "run.jsonl"
    w = TraceWriter(str(path))
    assert w.complete_header({"run_id": "r1"}) is False
    assert path.read_bytes() == b""
    w.close()


def test_overwrite_keeps_the_old_files_mode_from_the_start_even_when_the_old_file_goes_mid_run(tmp_path):
    """The mode ``overwrite`` keeps is the old file's as the run started (the streamed file is given it at once):
    an old trace kept private stays private though the old file is removed before the writer closes; it is not
    written with the mode of a new file."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"old run\n")
    os.chmod(path, 0o600)
    w = TraceWriter(str(path), overwrite=True)
    w.header({"run_id": "r1"})
    w.span(_span("a", 0, None))
    os.unlink(path)  # the old file goes while the run streams to its temporary
    w.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [orjson.loads(x).get("span_id") for x in _lines(path)] == [None, "a"]
    assert _temporaries(tmp_path) == []
