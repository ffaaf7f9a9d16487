"""Readers mask the credentials they load (issue 21, ``readers.mask``): URL userinfo, authorization /
api-key / cookie header attributes, an LLM request body's ``api_key``, OAuth secrets of non-LLM cassette
interactions; once, for every reader, and for lazily read tracetui/1 payloads when they are decoded."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tracetui.cli.main import main
from tracetui.core.load.pair import read_pair
from tracetui.core.model import SpanKind
from tracetui.core.readers import read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.mask import MASK, mask_text

RAW = ("sk-body-AAAA1111", "hunter2pass", "oauthSECRET777", "oauthACCESS888", "oauthREFRESH999", "cookieSECRET5")
CASSETTE = '''interactions:
- request:
    body: '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"api_key":"sk-body-AAAA1111"}'
    headers: {}
    method: POST
    uri: https://user:hunter2pass@api.openai.com/v1/chat/completions
  response:
    body: {string: '{"id":"c1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}'}
    headers: {}
    status: {code: 200, message: OK}
- request:
    body: grant_type=client_credentials&client_id=app1&client_secret=oauthSECRET777
    headers: {Content-Type: ['application/x-www-form-urlencoded']}
    method: POST
    uri: https://auth.example.com/oauth/token
  response:
    body: {string: '{"access_token":"oauthACCESS888","refresh_token":"oauthREFRESH999","token_type":"bearer"}'}
    headers: {}
    status: {code: 200, message: OK}
version: 1
'''


def cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue() + err.getvalue()


def test_cassette_credentials_are_masked_and_a_rotated_body_key_is_no_divergence(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text(CASSETTE)
    b = tmp_path / "b.yaml"
    b.write_text(CASSETTE.replace("sk-body-AAAA1111", "sk-body-ZZZZ9999").replace("oauthACCESS888", "oauthACCESS000"))
    t = read_trace(str(a))
    llm = next(s for s in t.spans if s.kind is SpanKind.LLM)
    assert llm.data["params"]["api_key"] == MASK and llm.attributes["url.full"] == f"https://user:{MASK}@api.openai.com/v1/chat/completions"
    http = next(s for s in t.spans if s.kind is SpanKind.OTHER)
    assert http.data["input"].endswith(f"client_secret={MASK}") and http.data["output"]["access_token"] == MASK
    assert http.data["output"]["token_type"] == "bearer"  # not a secret name
    code, out = cli("diff", str(a), str(b))
    assert code == 0 and "no divergence" in out  # the rotated key and token are one mask
    for argv in (("diff", str(a), str(b), "--format", "json"), ("show", str(a), "-v"), ("show", str(a), "--format", "json")):
        assert not [r for r in RAW if r in cli(*argv)[1]]


def test_otlp_header_attributes_and_url_userinfo(tmp_path: Path) -> None:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
             {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
             {"key": "http.request.header.authorization", "value": {"stringValue": "Bearer abcdef0123456789"}},
             {"key": "http.request.header.x-api-key", "value": {"stringValue": "xk-123456789"}},
             {"key": "http.request.header.cookie", "value": {"arrayValue": {"values": [{"stringValue": "sid=cookieSECRET5"}]}}},
             {"key": "server.url", "value": {"stringValue": "postgres://app:hunter2pass@db:5432/x"}},
             {"key": "http.request.header.content-type", "value": {"stringValue": "application/json"}}]
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [{
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7", "name": "execute_tool lookup",
        "kind": 1, "startTimeUnixNano": "1000", "endTimeUnixNano": "2000", "attributes": attrs}]}]}]}
    path = tmp_path / "otlp.json"
    path.write_text(json.dumps(doc))
    span = read_trace(str(path)).spans[0]
    text = json.dumps(span.attributes)
    assert not [r for r in (*RAW, "abcdef0123456789", "xk-123456789") if r in text], text
    assert span.attributes["http.request.header.content-type"] == "application/json"
    assert span.attributes["server.url"] == f"postgres://app:{MASK}@db:5432/x"


def test_lazy_payloads_are_masked_when_decoded(tmp_path: Path) -> None:
    """A tracetui/1 file read by the index loader: the payload is masked on first access, not at load."""
    lines = [json.dumps({"schema": "tracetui/1", "run_id": "r1", "trace_id": "t1"})]
    for i in range(40):
        lines.append(json.dumps({"span_id": f"s{i}", "parent_id": None if i == 0 else "s0", "seq": i, "kind": "llm",
                                 "name": "chat m", "start_ns": i, "end_ns": i + 1, "status": "ok", "trace_id": "t1",
                                 "llm": {"model": "m", "params": {"api_key": f"sk-body-AAAA111{i}"},
                                         "messages": [{"role": "user", "content": "hi"}],
                                         "output": {"role": "assistant", "content": "ok"}}}))
    (tmp_path / "src.jsonl").write_text("\n".join(lines) + "\n")
    # tracetui's own writer gives the index loader's clean lines (reading masked the key: put raw ones back)
    assert cli("convert", "--no-redact", str(tmp_path / "src.jsonl"), str(tmp_path / "w.jsonl"))[0] == 0
    written = (tmp_path / "w.jsonl").read_text()
    for name, raw in (("o.jsonl", "sk-body-AAAA1111"), ("r.jsonl", "sk-body-BBBB2222")):
        (tmp_path / name).write_text(written.replace(MASK, raw))
    assert "AAAA1111" in (tmp_path / "o.jsonl").read_text()
    o, r = read_pair(str(tmp_path / "o.jsonl"), str(tmp_path / "r.jsonl"), index_min_bytes=0, processes=False)
    lazy = [s for s in o.spans if type(s) is LazySpan]
    assert lazy and not any(s.loaded for s in lazy)  # nothing decoded at load
    assert all(s.data["params"]["api_key"] == MASK for s in o.spans)
    code, out = cli("diff", str(tmp_path / "o.jsonl"), str(tmp_path / "r.jsonl"))
    assert "no divergence" in out and "AAAA" not in out and "BBBB" not in out


def test_mask_text_keeps_what_is_not_a_credential() -> None:
    assert mask_text("see https://example.com/a@b and mailto:x@y.z") == "see https://example.com/a@b and mailto:x@y.z"
    assert mask_text("max_tokens=5&token=abc", fields=True) == f"max_tokens=5&token={MASK}"


def test_lazy_otlp_spans_are_masked_when_decoded_and_not_decoded_to_mask(tmp_path: Path, monkeypatch) -> None:
    """A big OTLP file gives LazySpans whose payload pass sets data *and* attributes: masking must
    neither decode them at load (the whole point of the two passes) nor let the pass skip it."""
    from tracetui.core.readers.otlp import OtlpJsonReader

    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    spans = []
    for i in range(30):
        attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                 {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
                 {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": json.dumps({"q": i})}},
                 {"key": "http.request.header.authorization", "value": {"stringValue": f"Bearer abcdef012345678{i}"}},
                 {"key": "server.url", "value": {"stringValue": "postgres://app:hunter2pass@db:5432/x"}}]
        spans.append({"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": f"{i + 1:016x}",
                      "name": "execute_tool lookup", "kind": 1, "startTimeUnixNano": str(1000 + i),
                      "endTimeUnixNano": str(2000 + i), "attributes": attrs})
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "otlp.json"
    path.write_text(json.dumps(doc))
    trace = read_trace(str(path))
    lazy = [s for s in trace.spans if type(s) is LazySpan]
    assert len(lazy) == 30 and not any(s.loaded for s in lazy)  # masking at load decoded nothing
    text = json.dumps([dict(s.attributes) for s in trace.spans]) + json.dumps([dict(s.data) for s in trace.spans])
    assert "abcdef0123456780" not in text and "hunter2pass" not in text, text
    assert lazy[3].attributes["server.url"] == f"postgres://app:{MASK}@db:5432/x"
