"""Benchmark: the OTLP/JSON reader's cost grows linearly with the span count.

Moved here from tests/core/test_reader_otlp.py (issue 25: no timing assert in the default test run; a loaded
2-core machine once measured 8.7x for 4x the spans against an 8x limit). Reads 5k and 20k GenAI tool spans
(Collector JSON Lines, 100 spans a line), best CPU time of ``--repeat`` reads each, and prints the ratio:
~4x is linear, ~16x would be quadratic. Exit status 1 when the ratio is 8x or more.

Usage::

    python benchmarks/bench_otlp_scaling.py [--repeat 3]
"""

from __future__ import annotations

import os

import argparse
import gc
import json
import sys
import time

import orjson

from tracetui.core.readers.otlp import OtlpJsonReader


def make(n: int) -> bytes:
    """``n`` GenAI tool spans under the first, as Collector JSON Lines of 100 spans."""
    def span(i: int) -> dict:
        return {"traceId": "0" * 31 + "1", "spanId": f"{i + 1:016x}", "parentSpanId": "" if i == 0 else f"{1:016x}",
                "name": "execute_tool t", "startTimeUnixNano": str(1000 + i), "endTimeUnixNano": str(2000 + i),
                "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in
                               (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "t"),
                                ("gen_ai.tool.call.arguments", json.dumps({"i": i})))]}
    spans = [span(i) for i in range(n)]
    return b"".join(orjson.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans":
                                                                                       spans[k:k + 100]}]}]}) + b"\n"
                    for k in range(0, n, 100))


def best(data: bytes, repeat: int) -> float:
    reader, times = OtlpJsonReader(), []
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        reader.read("trace", data)
        times.append(time.process_time() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t_small, t_big = best(make(5_000), args.repeat), best(make(20_000), args.repeat)
    ratio = t_big / max(t_small, 1e-9)
    print(f"5k spans: {t_small:.3f} s CPU; 20k spans: {t_big:.3f} s CPU; ratio {ratio:.1f}x (linear ~4x)")
    return 0 if ratio < 8 else 1


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    sys.exit(main())
