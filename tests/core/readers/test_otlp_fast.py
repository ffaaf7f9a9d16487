"""A big OTLP/JSON file decoded with msgspec (``readers.otlp_fast``): the same trace and issues as the
careful path, big outputs kept as bytes until the payload pass, the careful path whenever in doubt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from msgspec import Raw

from tests.otlp_helpers import to_attributes
from tracetui.core.diff import diff_traces
from tracetui.core.readers import read_runs, read_trace
from tracetui.core.readers.otlp import OtlpJsonReader, anyvalue
from tracetui.core.readers.otlp_fast import Doubt, documents

BIG = "x" * 600


def _doc(result: str = BIG, tid: str = "a" * 32) -> dict[str, Any]:
    out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": BIG}]}])
    spans = [
        {"traceId": tid, "spanId": "01" * 8, "name": "chat gpt-4o", "kind": 3, "startTimeUnixNano": "1000",
         "endTimeUnixNano": "2000", "status": {"code": 0},
         "attributes": to_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                      "gen_ai.input.messages": json.dumps([{"role": "user", "content": "hi"}]),
                                      "gen_ai.output.messages": out})},
        {"traceId": tid, "spanId": "02" * 8, "parentSpanId": "01" * 8, "name": "execute_tool get_order", "kind": 1,
         "startTimeUnixNano": "3000", "endTimeUnixNano": "4000",
         "events": [{"name": "exception", "timeUnixNano": "3500",
                     "attributes": to_attributes({"exception.type": "KeyError"})}],
         "attributes": to_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order",
                                      "gen_ai.tool.call.arguments": '{"id": 1}', "gen_ai.tool.call.result": result,
                                      "retries": 2, "ratio": 0.5, "tags": ["a", "b"]})},
    ]
    return {"resourceSpans": [{"resource": {"attributes": to_attributes({"service.name": "svc"})},
                               "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eager = read_runs(path)
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    two = read_runs(path)
    assert [str(i) for i in two.issues] == [str(i) for i in eager.issues]
    assert [t.spans for t in two.runs] == [t.spans for t in eager.runs]
    assert [[dict(s.attributes) for s in t.spans] for t in two.runs] == \
        [[dict(s.attributes) for s in t.spans] for t in eager.runs]


@pytest.mark.parametrize("form", ["document", "pretty", "jsonl"])
def test_fast_path_reads_what_the_careful_path_reads(form: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.json"
    if form == "jsonl":
        path.write_text(json.dumps(_doc()) + "\r\n" + json.dumps(_doc(tid="b" * 32)) + "\n")
    else:
        path.write_text(json.dumps(_doc(), indent=1 if form == "pretty" else None))
    values, several = documents(path.read_bytes(), anyvalue)
    got = [v for _, v in values]
    assert several is (form == "jsonl")
    attrs = list(got[0]["resourceSpans"][0]["scopeSpans"][0]["spans"])
    assert type(attrs[0]["attributes"]["gen_ai.output.messages"]) is Raw  # kept as bytes
    assert type(attrs[1]["attributes"]["gen_ai.tool.call.result"]) is Raw
    assert attrs[1]["attributes"]["retries"] == 2 and attrs[1]["attributes"]["tags"] == ["a", "b"]
    _same(path, monkeypatch)


@pytest.mark.parametrize("text", [
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101", "name": "a", "name": "b"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101", "flags": 99999999999999999999999}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101", "attributes": '
    '[{"key": "n", "value": {"intValue": 123456789012345678901234567}}]}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101", "x": NaN}]}]}]}',
    '{"resource_spans": [{"scope_spans": [{"spans": [{"span_id": "0101010101010101"}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101", "unknownField": 1}]}]}]}',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101"}]}]}]}\n{"resourceSpans": [{"sc',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0101010101010101"}]}]}]}\n\n{"resourceSpans": []}\n',
])
def test_doubt_falls_back_to_the_careful_path(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(Doubt):
        for _, v in documents(text.encode(), anyvalue)[0]:
            for rs in v["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    list(ss["spans"])
    path = tmp_path / "t.json"
    path.write_text(text)
    _same(path, monkeypatch)


def test_diff_of_kept_payloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_doc()))
    b.write_text(json.dumps(_doc(result=BIG + "y", tid="b" * 32)))
    eager = diff_traces(read_trace(a), read_trace(b))
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    fast = diff_traces(read_trace(a), read_trace(b))
    got = [(d.type.value, [f.path for f in d.fields]) for d in fast.divergences]
    assert got == [(d.type.value, [f.path for f in d.fields]) for d in eager.divergences]
    assert any(d.type.value == "output_mismatch" for d in fast.divergences)


@pytest.mark.parametrize("first", [BIG, ""], ids=["captured", "empty"])
def test_big_input_messages_kept_as_bytes_read_by_the_cheap_pass(first: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An llm's input messages stay bytes until the payload pass; the cheap pass still reads the first
    message (content captured or not) and the read equals the careful path's."""
    doc = _doc()
    msgs = json.dumps([{"role": "user", "content": first}, {"role": "user", "content": BIG}])
    for kv in doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]:
        if kv["key"] == "gen_ai.input.messages":
            kv["value"] = {"stringValue": msgs}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    values, _ = documents(path.read_bytes(), anyvalue)
    spans = list(next(values)[1]["resourceSpans"][0]["scopeSpans"][0]["spans"])
    assert type(spans[0]["attributes"]["gen_ai.input.messages"]) is Raw
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    llm = read_trace(path).spans[0]
    assert llm._miss is (first == "")  # type: ignore[attr-defined]  # read before the payload pass
    assert llm.data["messages"][1]["content"] == BIG
    monkeypatch.undo()
    _same(path, monkeypatch)


def test_signature_of_a_kept_payload() -> None:
    """A payload kept as bytes signs by its bytes, and never as the same text decoded (the two readings
    of one span are compared by mapping, not taken as equal)."""
    from tracetui.core.readers.otlp_lazy import signature

    def raw(text: str) -> Raw:
        return Raw(json.dumps({"stringValue": text}, separators=(",", ":")).encode())

    def sig(v: Any) -> Any:
        return signature("execute_tool t", {"gen_ai.tool.name": "t", "gen_ai.tool.call.result": v}, [], False)

    assert sig(raw(BIG)) == sig(raw(BIG))
    assert sig(raw(BIG)) != sig(raw(BIG + "y"))
    assert sig(raw(BIG)) != sig(BIG)
    assert sig(raw(BIG)) != sig({"stringValue": BIG})
