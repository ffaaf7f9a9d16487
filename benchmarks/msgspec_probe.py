"""Probe for a proposal: parse tracetui/1 span lines with msgspec instead of orjson.

Not used by tracetui (msgspec is not a dependency). Times, per file, the parse
of every span line into (1) orjson dicts, what the reader does now, (2) typed
msgspec Structs whose big payloads (outputs, messages, documents, usage,
attributes) stay ``msgspec.Raw`` bytes, and (3) the same Structs with every
payload decoded; then the ``==`` of the tool outputs kept as Raw bytes.

Usage::

    python benchmarks/msgspec_probe.py benchmarks/_data/original_n100000_s1.jsonl [repeat]
"""
from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional

import orjson

try:
    import msgspec
except ImportError:  # pragma: no cover - the probe only
    sys.exit("msgspec is not installed: pip install msgspec")

Raw = msgspec.Raw


class ToolSec(msgspec.Struct):
    tool_name: Optional[str] = None
    tool_version: Optional[str] = None
    call_id: Optional[str] = None
    arguments: Any = None
    args_hash: Optional[str] = None
    effect: Optional[str] = None
    mode: Optional[str] = None
    output: Raw = Raw(b"null")
    output_truncated: bool = False


class LlmSec(msgspec.Struct):
    model: Optional[str] = None
    provider: Optional[str] = None
    prompt_id: Optional[str] = None
    prompt_version: Optional[str] = None
    params: Raw = Raw(b"null")
    messages: Raw = Raw(b"null")
    tool_schemas_hash: Optional[str] = None
    output: Raw = Raw(b"null")
    finish_reason: Optional[str] = None
    usage: Raw = Raw(b"null")
    response_id: Optional[str] = None


class RetrievalSec(msgspec.Struct):
    index: Optional[str] = None
    index_version: Optional[str] = None
    query: Any = None
    top_k: Optional[int] = None
    filters: Any = None
    documents: Raw = Raw(b"null")


class DecisionSec(msgspec.Struct):
    decision: Any = None
    value: Any = None
    options: Any = None


class AgentSec(msgspec.Struct):
    agent_name: Optional[str] = None
    input: Raw = Raw(b"null")
    output: Raw = Raw(b"null")


class Line(msgspec.Struct):
    span_id: str
    parent_id: Optional[str] = None
    seq: int = -1
    kind: str = "other"
    name: str = ""
    start_ns: Optional[int] = None
    end_ns: Optional[int] = None
    status: str = "unset"
    error_type: Optional[str] = None
    trace_id: Optional[str] = None
    attributes: Raw = Raw(b"{}")
    tool: Optional[ToolSec] = None
    llm: Optional[LlmSec] = None
    retrieval: Optional[RetrievalSec] = None
    decision: Optional[DecisionSec] = None
    agent: Optional[AgentSec] = None
    other: Optional[AgentSec] = None


def _decoded(cls: type) -> type:
    """The same Struct with every Raw payload decoded (``Any``)."""
    fields = [(f.name, Any if f.type is Raw else f.type, None if f.type is Raw else f.default)
              for f in msgspec.structs.fields(cls)]
    return msgspec.defstruct(cls.__name__ + "Full", fields)


def lines(path: Path):
    data = path.read_bytes()
    mv = memoryview(data)
    pos, n, find = 0, len(data), data.find
    first = True
    while pos < n:
        end = find(b"\n", pos)
        if end < 0:
            end = n
        if end > pos and not first:
            yield mv[pos:end]
        first = False
        pos = end + 1


def main() -> None:
    path = Path(sys.argv[1])
    views = list(lines(path))
    dec = msgspec.json.Decoder(Line)
    sections = {cls: _decoded(cls) for cls in (ToolSec, LlmSec, RetrievalSec, DecisionSec, AgentSec)}
    full_fields = []
    for f in msgspec.structs.fields(Line):
        t = f.type
        for cls, full in sections.items():
            if t == Optional[cls]:
                t = Optional[full]
        full_fields.append((f.name, Any if t is Raw else t, None if t is Raw else f.default)
                           if f.required is False else (f.name, t))
    full_dec = msgspec.json.Decoder(msgspec.defstruct("LineFull", full_fields))
    res: dict[str, list[float]] = {}
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        for name, fn in (("orjson dicts", orjson.loads), ("msgspec Raw structs", dec.decode),
                         ("msgspec full structs", full_dec.decode)):
            gc.disable()
            t = time.process_time()
            out = [fn(v) for v in views]
            res.setdefault(name, []).append(time.process_time() - t)
            del out
            gc.enable()
            gc.collect()
    for k, v in res.items():
        print(f"{k:22s} parse min {min(v):.3f} s, median {statistics.median(v):.3f} s ({len(views)} lines)")
    a = [dec.decode(v) for v in views]
    b = [dec.decode(v) for v in views]
    t = time.process_time()
    eq = sum(x.tool.output == y.tool.output for x, y in zip(a, b) if x.tool is not None)
    print(f"tool outputs compared as Raw bytes: {time.process_time() - t:.3f} s for {eq} pairs")


if __name__ == "__main__":
    main()
