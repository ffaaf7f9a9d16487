"""OTLP spans read in two passes (``readers.otlp_lazy``): the same trace as the one-pass read,
payloads mapped only for the spans the diff must compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.otlp_helpers import corpus_otlp_documents, to_attributes
from tracetui.core.diff import diff_traces
from tracetui.core.diff.report import diff_report
from tracetui.core.diff.align import span_key
from tracetui.core.model import SpanKind
from tracetui.core.readers import read_replay, read_runs, read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otel_attrs import VOLATILE_ONLY_ATTRIBUTES, span_fields_from_attributes
from tracetui.core.readers.otlp import OtlpJsonReader
from tracetui.core.readers.otlp_lazy import signature
from tracetui.core.readers.tree import captured

ROOT = Path(__file__).resolve().parents[3]

FILES = [
    ROOT / "sample_runs/order_lookup/original.otlp.json",
    ROOT / "sample_runs/order_lookup/replay.otlp.json",
    *sorted((ROOT / "tests/data/otlp").glob("*.json*")),
]


@pytest.fixture
def lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every OTLP file read in two passes, whatever its size."""
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)


def _read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, list[list[Any]]]:
    eager = read_runs(path)
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    two = read_runs(path)
    keys = [[span_key(s) for s in t.spans] for t in two.runs]  # before any payload is read
    return eager, two, keys


def _assert_same(eager: Any, two: Any, keys: list[list[Any]]) -> None:
    assert [str(i) for i in two.issues] == [str(i) for i in eager.issues]
    assert len(two.runs) == len(eager.runs)
    for t_e, t_l, ks in zip(eager.runs, two.runs, keys):
        assert t_l.header == t_e.header
        assert [str(i) for i in t_l.issues] == [str(i) for i in t_e.issues]
        assert ks == [span_key(s) for s in t_e.spans]
        assert all(type(s) is LazySpan for s in t_l.spans)
        for a, b in zip(t_l.spans, t_e.spans):
            if not a._miss and a.kind is SpanKind.LLM:  # "surely captured" must be true
                assert captured(b.data.get("messages")) or captured(b.data.get("output"))
            if not a._miss and a.kind is SpanKind.TOOL:
                assert b.data.get("arguments") is not None
        assert t_l.spans == t_e.spans  # every field, data and attributes included (payload pass run)
        assert [dict(s.attributes) for s in t_l.spans] == [dict(s.attributes) for s in t_e.spans]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_two_passes_read_what_one_pass_reads(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_same(*_read_both(path, monkeypatch))


def test_two_passes_on_the_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = corpus_otlp_documents(tmp_path)
    if not paths:
        pytest.skip("corpus not present")
    for path in paths:
        monkeypatch.undo()
        _assert_same(*_read_both(path, monkeypatch))


def _pair_docs(n_turns: int, changed_turn: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """An agent run of ``n_turns`` (llm call, tool call) turns, and its replay: other trace and span ids,
    times, response ids, call ids and usage (volatile), and one tool result changed."""

    def doc(replay: bool) -> dict[str, Any]:
        tid = ("b" if replay else "a") * 32
        base = 1_000 if replay else 0
        sid = lambda k: f"{base + k + 1:016x}"  # noqa: E731
        t0 = 1_700_000_000_000_000_000 + (5_000_000 if replay else 0)
        spans = [{"traceId": tid, "spanId": sid(0), "name": "invoke_agent support", "kind": 1,
                  "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 10**9),
                  "attributes": to_attributes({"gen_ai.operation.name": "invoke_agent",
                                               "gen_ai.agent.name": "support"})}]
        for turn in range(n_turns):
            t = t0 + (turn + 1) * 1000
            msgs = [{"role": "user", "parts": [{"type": "text", "content": f"look up order {turn}"}]}]
            out = [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"call{turn}", "name": "get_order",
                                                     "arguments": {"id": turn}}], "finish_reason": "tool_call"}]
            llm = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                   "gen_ai.input.messages": json.dumps(msgs), "gen_ai.output.messages": json.dumps(out),
                   "gen_ai.response.id": f"resp-{replay}-{turn}", "gen_ai.usage.input_tokens": 10 + replay,
                   "gen_ai.usage.output_tokens": 3 + turn}
            result = {"id": turn, "status": "shipped"}
            if replay and turn == changed_turn:
                result["status"] = "lost"
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order",
                    "gen_ai.tool.call.id": f"c-{replay}-{turn}", "gen_ai.tool.call.arguments": json.dumps({"id": turn}),
                    "gen_ai.tool.call.result": json.dumps(result)}
            for k, (name, attrs) in enumerate((("chat gpt-4o", llm), ("execute_tool get_order", tool))):
                spans.append({"traceId": tid, "spanId": sid(2 * turn + k + 1), "parentSpanId": sid(0), "name": name,
                              "kind": 1, "startTimeUnixNano": str(t + k * 100), "endTimeUnixNano": str(t + k * 100 + 50),
                              "attributes": to_attributes(attrs)})
        return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}

    return doc(False), doc(True)


def test_the_diff_maps_payloads_only_where_it_must(tmp_path: Path, lazy: None) -> None:
    o_doc, r_doc = _pair_docs(40, changed_turn=25)
    o, r = tmp_path / "o.json", tmp_path / "r.json"
    o.write_text(json.dumps(o_doc))
    r.write_text(json.dumps(r_doc))
    a, b = read_trace(o), read_replay(r)
    result = diff_traces(a, b)
    loaded = [(s.name, s.seq) for s in b.spans if s.loaded]
    # The run header reads the root and the first llm call; the diff only the changed tool call.
    assert loaded == [("invoke_agent support", 0), ("chat gpt-4o", 1), ("execute_tool get_order", 52)]
    assert [s.seq for s in a.spans if s.loaded] == [0, 1, 52]
    types = [(d.type.value, d.fields[0].path if d.fields else None) for d in result.divergences]
    assert types == [("output_mismatch", "tool.output.status")]


def test_diff_of_two_passes_is_the_diff_of_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    o_doc, r_doc = _pair_docs(12, changed_turn=5)
    pairs = [(ROOT / "sample_runs/order_lookup/original.otlp.json", ROOT / "sample_runs/order_lookup/replay.otlp.json")]
    o, r = tmp_path / "o.json", tmp_path / "r.json"
    o.write_text(json.dumps(o_doc))
    r.write_text(json.dumps(r_doc))
    pairs.append((o, r))
    for po, pr in pairs:
        monkeypatch.undo()
        one = diff_report(diff_traces(read_trace(po), read_replay(pr)))
        monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
        two = diff_report(diff_traces(read_trace(po), read_replay(pr)))
        assert two == one


def _mapped(name: str, attrs: dict[str, Any]) -> tuple[Any, ...]:
    kind, data, _left, err = span_fields_from_attributes(name, attrs)
    volatile = {"usage", "response_id", "call_id"}
    return kind, {k: v for k, v in data.items() if k not in volatile}, err


@pytest.mark.parametrize("key", sorted(VOLATILE_ONLY_ATTRIBUTES))
def test_volatile_only_attributes_change_no_compared_field(key: str) -> None:
    """The signature leaves these out: each must feed only usage, response_id or call_id."""
    o_doc, _ = _pair_docs(1, None)
    for span in o_doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        attrs = {kv["key"]: next(iter(kv["value"].values())) for kv in span["attributes"]}
        base = _mapped(span["name"], attrs)
        for value in ("x-1", 7, "", None):
            assert _mapped(span["name"], {**attrs, key: value}) == base, (key, value)
        assert signature(span["name"], {**attrs, key: "other"}, [], False) == signature(span["name"], attrs, [], False)
        changed = {**attrs, "gen_ai.request.temperature": 0.5}
        assert signature(span["name"], changed, [], False) != signature(span["name"], attrs, [], False)


def test_setting_data_forgets_the_key_read_before(tmp_path: Path, lazy: None) -> None:
    """Naming a bare argument (``bare_args``) replaces ``data``: the span key follows the new data."""
    o_doc, _ = _pair_docs(1, None)
    p = tmp_path / "o.json"
    p.write_text(json.dumps(o_doc))
    tool = next(s for s in read_trace(p).spans if s.kind is SpanKind.TOOL)
    assert tool._part is not None and not tool.loaded
    tool.data = {**tool.data, "arguments": {"id": 99}}
    assert span_key(tool)[2] == '{"id":99}'
    assert tool._sig is None
