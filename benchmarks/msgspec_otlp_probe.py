"""Probe: decode an OTLP/JSON document with msgspec Structs, attribute values left ``msgspec.Raw``.

Not used by tracetui (msgspec is not a dependency). Measures what a typed partial decoder
would save over ``orjson.loads`` of the whole document (what ``readers.otlp`` does now):
the decode's wall time and the process's peak RSS, each mode in a fresh process.

Modes:

- ``orjson``: ``orjson.loads`` of the document (every attribute two dicts and its strings);
- ``msgspec``: ``msgspec.json.decode`` into ``TracesData`` Structs, each attribute a
  ``KeyValue(key, value: Raw)`` (the value's bytes, a view of the file's buffer, not parsed);
- ``msgspec+small``: the same, then every attribute value under 256 bytes parsed with orjson
  (ids, names, models: what a cheap pass would read), the payloads left as Raw.

Usage::

    python benchmarks/msgspec_otlp_probe.py benchmarks/_data/otlp_original_n100000_s1.json
"""


import resource
import subprocess
import sys
import time
from typing import Any, Union

import orjson


def _structs() -> Any:
    import msgspec

    Raw = msgspec.Raw

    class KeyValue(msgspec.Struct):
        key: str
        value: Raw = Raw(b"null")

    class Status(msgspec.Struct, frozen=True):
        code: Union[int, str] = 0
        message: str = ""

    class Span(msgspec.Struct):
        traceId: str = ""
        spanId: str = ""
        parentSpanId: str = ""
        name: str = ""
        kind: Union[int, str] = 0
        startTimeUnixNano: Union[int, str] = 0
        endTimeUnixNano: Union[int, str] = 0
        attributes: list[KeyValue] = []
        events: list[Raw] = []
        status: Status = Status()
        flags: int = 0

    class Scope(msgspec.Struct, frozen=True):
        name: str = ""

    class ScopeSpans(msgspec.Struct):
        scope: Scope = Scope()
        spans: list[Span] = []

    class Resource(msgspec.Struct):
        attributes: list[KeyValue] = []

    class ResourceSpans(msgspec.Struct):
        resource: Resource = msgspec.field(default_factory=Resource)
        scopeSpans: list[ScopeSpans] = []

    class TracesData(msgspec.Struct):
        resourceSpans: list[ResourceSpans] = []

    return msgspec.json.Decoder(TracesData)


def run(mode: str, path: str) -> None:
    data = open(path, "rb").read()
    t = time.perf_counter()
    if mode == "orjson":
        doc = orjson.loads(data)
        n = sum(len(ss["spans"]) for rs in doc["resourceSpans"] for ss in rs["scopeSpans"])
    else:
        doc = _structs().decode(data)
        n = 0
        small = 0
        for rs in doc.resourceSpans:
            for ss in rs.scopeSpans:
                n += len(ss.spans)
                if mode == "msgspec+small":
                    loads = orjson.loads
                    for sp in ss.spans:
                        for kv in sp.attributes:
                            if len(kv.value) < 256:
                                loads(memoryview(kv.value))
                                small += 1
    dt = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{mode:<14} {n:>8} spans  {dt:6.2f} s  peak {peak:7.0f} MiB  ({peak * 2**20 / len(data):.2f}x the file)")


def main() -> int:
    if len(sys.argv) == 3:
        run(sys.argv[1], sys.argv[2])
        return 0
    path = sys.argv[1]
    for mode in ("orjson", "msgspec", "msgspec+small"):
        subprocess.run([sys.executable, __file__, mode, path], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
