"""A big OTLP/JSON file's spans kept as byte ranges of the file (``otlp_lazy.OtlpPayloads.load_range``):
the ranges are the spans' own bytes in every layout, the payload pass reads them again from the file, and
a file changed on disk since the read gives ``SourceChanged`` naming it, never another span's data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.otlp_helpers import to_attributes
from tracetui.core.errors import SourceChanged
from tracetui.core.readers import read_runs, read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otlp import OtlpJsonReader
from tracetui.core.readers.otlp_lazy import InMemory

BIG = "y" * 400  # kept as bytes by otlp_fast at read time (>= RAW_MIN_BYTES)


def _spans(tid: str, result: str = "ok") -> list[dict[str, Any]]:
    out = []
    for i in range(6):
        sid = f"{tid[:2]}{i:014x}"
        if i % 2:
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                     "gen_ai.tool.call.arguments": json.dumps({"n": i}),
                     "gen_ai.tool.call.result": json.dumps({"n": i, "r": result, "pad": BIG})}
            name = "execute_tool lookup"
        else:
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                     "gen_ai.input.messages": json.dumps([{"role": "user", "content": f"q{i} {BIG}"}]),
                     "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": f"a{i}"}])}
            name = "chat gpt-4o"
        out.append({"traceId": tid, "spanId": sid, "parentSpanId": f"{tid[:2]}{0:014x}" if i else "",
                    "name": name, "kind": 1, "startTimeUnixNano": str(1000 + i), "endTimeUnixNano": str(2000 + i),
                    "attributes": to_attributes(attrs), "status": {"code": 0},
                    "events": [{"name": "note", "timeUnixNano": "1500",
                                "attributes": to_attributes({"i": i})}] if i == 3 else []})
    return out


def _doc(tid: str, result: str = "ok") -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": to_attributes({"service.name": "svc"})},
                               "scopeSpans": [{"scope": {"name": "first"}, "spans": _spans(tid, result)[:3]},
                                              {"scope": {"name": "second"}, "spans": _spans(tid, result)[3:]}]}]}


LAYOUTS = {
    "one line": lambda: json.dumps(_doc("a" * 32)),
    "pretty": lambda: json.dumps(_doc("a" * 32), indent=2),
    "pretty CRLF": lambda: json.dumps(_doc("a" * 32), indent=2).replace("\n", "\r\n"),
    "JSON Lines": lambda: json.dumps(_doc("a" * 32)) + "\n" + json.dumps(_doc("b" * 32)) + "\n",
    "JSON Lines CRLF": lambda: json.dumps(_doc("a" * 32)) + "\r\n" + json.dumps(_doc("b" * 32)) + "\r\n",
}


@pytest.fixture
def lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_each_span_range_is_that_spans_bytes(layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(LAYOUTS[layout]().encode())
    eager = read_runs(path)
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    two = read_runs(path)
    data = path.read_bytes()
    spans = [s for t in two.runs for s in t.spans]
    assert len(spans) == (12 if "Lines" in layout else 6)
    for s in spans:
        assert type(s) is LazySpan
        assert type(s._src).__name__ == "_Ranges"  # kept as a range, not as decoded attributes
        obj = json.loads(data[s._off:s._off + s._len])
        assert obj["spanId"] == s.span_id and obj["name"] == s.name
    assert [t.spans for t in two.runs] == [t.spans for t in eager.runs]  # every payload read from the file
    assert [[dict(s.attributes) for s in t.spans] for t in two.runs] == \
        [[dict(s.attributes) for s in t.spans] for t in eager.runs]


def _read(path: Path) -> tuple[Any, bytes]:
    t = read_trace(path)
    assert not any(s.loaded for s in t.spans[1:])  # (the run header read the first llm span)
    return t, path.read_bytes()


def test_file_rewritten_in_place_gives_source_changed(tmp_path: Path, lazy: None) -> None:
    """Same size, same span ids at the same offsets, one tool result changed: the span's bytes are read
    again and found to be another span's payload (the signature differs): an error naming the file."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc("a" * 32, result="ok")))
    t, before = _read(path)
    tool = t.spans[3]
    with open(path, "r+b") as f:  # in place: the same inode, as an editor's save-in-place or a copy over it
        f.write(before.replace(b'\\"r\\": \\"ok\\"', b'\\"r\\": \\"no\\"'))
    assert path.read_bytes() != before and len(path.read_bytes()) == len(before)
    with pytest.raises(SourceChanged) as got:
        tool.data  # noqa: B018
    assert str(path) in str(got.value) and "changed since it was read" in str(got.value)


def test_file_truncated_gives_source_changed(tmp_path: Path, lazy: None) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc("a" * 32)))
    t, before = _read(path)
    with open(path, "r+b") as f:
        f.truncate(len(before) // 2)
    with pytest.raises(SourceChanged, match="changed since it was read"):
        t.spans[-1].data  # noqa: B018


def test_file_replaced_by_rename_still_reads_its_old_bytes(tmp_path: Path, lazy: None) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc("a" * 32, result="ok")))
    t = read_trace(path)
    new = tmp_path / "new.json"
    new.write_text(json.dumps(_doc("a" * 32, result="no")))
    os.replace(new, path)  # what an atomic writer does
    assert not t.spans[3].loaded
    assert t.spans[3].data["output"]["r"] == "ok"


def test_bytes_given_without_a_file_are_kept(tmp_path: Path, lazy: None) -> None:
    """``OtlpJsonReader.read(path, data)`` (the Reader protocol: bytes, no file) keeps the bytes it was
    given: the path named is not read again."""
    path = tmp_path / "t.json"
    data = json.dumps(_doc("a" * 32)).encode()
    out = OtlpJsonReader().read(str(path), data)  # no such file on disk
    s = out.runs[0].spans[3]
    assert type(s._src.payloads.file) is InMemory
    assert s.data["tool_name"] == "lookup"
