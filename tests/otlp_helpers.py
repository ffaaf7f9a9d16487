"""Build OTLP/JSON test documents from real span dumps.

``any_agent_to_otlp`` turns a mozilla-ai any-agent ``AgentTrace`` dump
(``shared/corpus/any-agent-trace/*.json``: OpenTelemetry Python SDK spans as
dicts, decimal integer ids, flat native attributes) into the OTLP/JSON
``TracesData`` document the same spans would have been exported as: hex ids,
AnyValue attribute lists, enum integers, string nanosecond timestamps. The
``gen_ai.*`` attributes are passed through unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_KINDS = {"unspecified": 0, "internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}
_STATUS = {"unset": 0, "ok": 1, "error": 2}


def to_anyvalue(v: Any) -> dict[str, Any]:
    """A native JSON value as an OTLP ``AnyValue`` (ints as strings, as protobuf JSON writes them)."""
    if v is None:
        return {}
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [to_anyvalue(x) for x in v]}}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": str(k), "value": to_anyvalue(x)} for k, x in v.items()]}}
    return {"stringValue": str(v)}


def to_attributes(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """A flat attribute dict as an OTLP ``KeyValue`` list."""
    return [{"key": k, "value": to_anyvalue(v)} for k, v in attrs.items()]


def _hex(value: Any, nbytes: int) -> str:
    return "" if value in (None, 0) else format(int(value), f"0{2 * nbytes}x")


def any_agent_span_to_otlp(span: dict[str, Any]) -> dict[str, Any]:
    """One any-agent span dict as an OTLP/JSON span."""
    ctx = span.get("context") or {}
    parent = span.get("parent") or {}
    status = span.get("status") or {}
    out: dict[str, Any] = {
        "traceId": _hex(ctx.get("trace_id"), 16),
        "spanId": _hex(ctx.get("span_id"), 8),
        "parentSpanId": _hex(parent.get("span_id"), 8),
        "name": span.get("name", ""),
        "kind": _KINDS.get(str(span.get("kind", "internal")).lower(), 1),
        "startTimeUnixNano": str(span["start_time"]),
        "endTimeUnixNano": str(span["end_time"]),
        "attributes": to_attributes(span.get("attributes") or {}),
        "events": [
            {"name": ev.get("name", ""), "timeUnixNano": str(ev.get("timestamp", 0)),
             "attributes": to_attributes(ev.get("attributes") or {})}
            for ev in span.get("events") or []
        ],
        "status": {"code": _STATUS.get(str(status.get("status_code", "unset")).lower(), 0)},
    }
    if status.get("description"):
        out["status"]["message"] = status["description"]
    return out


def any_agent_to_otlp(path: str | Path) -> dict[str, Any]:
    """An any-agent ``AgentTrace`` JSON file as one OTLP/JSON ``TracesData`` document.

    Args:
        path: An any-agent dump (``{"spans": [...], "final_output": ...}``).

    Returns:
        ``{"resourceSpans": [{"resource": {...}, "scopeSpans": [{"scope": {"name": "any_agent"},
        "spans": [...]}]}]}``; spans in the dump's order (children before
        parents, as the SDK finished them).
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    spans = doc["spans"] if isinstance(doc, dict) else doc
    resource = (spans[0].get("resource") or {}).get("attributes") or {} if spans else {}
    return {
        "resourceSpans": [{
            "resource": {"attributes": to_attributes(resource)},
            "scopeSpans": [{
                "scope": {"name": "any_agent"},
                "spans": [any_agent_span_to_otlp(s) for s in spans],
            }],
        }]
    }


def corpus_otlp_documents(out: Path) -> list[Path]:
    """The corpus's OTLP/JSON documents: the OTLP proto example, and each any-agent trace converted
    (``any_agent_to_otlp``) and written under ``out``; none when the corpus is absent."""
    from tests.corpus import CORPUS

    docs = []
    proto = CORPUS / "otlp-json" / "opentelemetry-proto_examples_trace.json"
    if proto.is_file():
        docs.append(proto)
    for src in sorted((CORPUS / "any-agent-trace").glob("*.json")):
        dst = out / (src.stem + ".otlp.json")
        dst.write_text(json.dumps(any_agent_to_otlp(src)))
        docs.append(dst)
    return docs
