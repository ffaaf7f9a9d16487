"""Benchmark: ``tracetui diff`` of a 1M-span OTLP/JSON pair, peak memory against the 3 GB target (issue 22).

``bench_otlp.py``'s generator writes about 4.5 KB a span (4.5 GB a file at 1M spans, more than the
machine's disk and memory allow), so this one streams its own pair with small payloads (about 600 B
a span: an llm call with a short input and output, a tool call with arguments and a result), one
OTLP/JSON document per file (``--jsonl``: Collector JSON Lines, 1,000 spans a line). Shape: a root
agent span, a session span per 500 turns, each turn an llm span and a tool span; the replay has other
trace and span ids, times, response and call ids, and ``--edits`` tool results changed. The target
is about span count, not bytes.

Then ``tracetui diff A B --format json`` runs once under ``/usr/bin/time -v``: wall and user CPU seconds,
peak RSS.

Usage::

    python benchmarks/bench_otlp_1m.py                  # 1,000,000 spans a file
    python benchmarks/bench_otlp_1m.py -n 200000 --jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _kv(key: str, value: object) -> str:
    if isinstance(value, int):
        v = {"intValue": str(value)}
    else:
        v = {"stringValue": value}
    return json.dumps({"key": key, "value": v}, separators=(",", ":"))


def write_run(path: Path, n: int, replay: bool, edits: set[int], jsonl: bool) -> None:
    """``n`` spans (about; whole turns) as one OTLP/JSON document or Collector JSON Lines, streamed."""
    rnd = random.Random(7)
    words = [("".join(rnd.choice("abcdefghij klmnop") for _ in range(6))) for _ in range(200)]
    tid = ("5c" if replay else "4b") * 16
    base = (1 << 40) if replay else 0
    t0 = 1_762_161_242_118_000_000 + (7_000_000 if replay else 0)
    head = '{"resourceSpans":[{"resource":{"attributes":[' + _kv("service.name", "bench") + \
        ']},"scopeSpans":[{"scope":{"name":"bench"},"spans":['
    tail = "]}]}]}"
    count = 0

    def span(k: int, parent: int | None, name: str, attrs: list[str]) -> str:
        t = t0 + k * 1000
        return (f'{{"traceId":"{tid}","spanId":"{base + k + 1:016x}","parentSpanId":'
                f'"{"" if parent is None else f"{base + parent + 1:016x}"}","name":"{name}","kind":1,'
                f'"startTimeUnixNano":"{t}","endTimeUnixNano":"{t + 500}","attributes":[{",".join(attrs)}],'
                '"status":{"code":0}}')

    def text(m: int) -> str:
        return " ".join(rnd.choice(words) for _ in range(m))

    with open(path.with_suffix(".tmp"), "w") as f:
        batch: list[str] = []

        def emit(s: str) -> None:
            nonlocal count
            count += 1
            batch.append(s)
            if jsonl and len(batch) == 1000:
                f.write(head + ",".join(batch) + tail + "\n")
                batch.clear()

        emit(span(0, None, "invoke_agent support", [_kv("gen_ai.operation.name", "invoke_agent"),
                                                     _kv("gen_ai.agent.name", "support")]))
        k, turn, session = 1, 0, 0
        while k < n:
            if turn % 500 == 0:
                session = k
                emit(span(k, 0, "session", [_kv("gen_ai.operation.name", "invoke_agent"),
                                            _kv("gen_ai.agent.name", "session")]))
                k += 1
            msgs = json.dumps([{"role": "user", "parts": [{"type": "text", "content": text(6)}]}])
            out = json.dumps([{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{turn}",
                                                                "name": "get_order", "arguments": {"id": turn}}]}])
            emit(span(k, session, "chat gpt-4o", [
                _kv("gen_ai.operation.name", "chat"), _kv("gen_ai.request.model", "gpt-4o"),
                _kv("gen_ai.input.messages", msgs), _kv("gen_ai.output.messages", out),
                _kv("gen_ai.response.id", f"r{replay}{turn}"), _kv("gen_ai.usage.input_tokens", 100 + turn % 7)]))
            result = json.dumps({"id": turn, "status": "lost" if replay and turn in edits else "ok",
                                 "body": text(12)})
            emit(span(k + 1, session, "execute_tool get_order", [
                _kv("gen_ai.operation.name", "execute_tool"), _kv("gen_ai.tool.name", "get_order"),
                _kv("gen_ai.tool.call.id", f"c{replay}{turn}"),
                _kv("gen_ai.tool.call.arguments", json.dumps({"id": turn})),
                _kv("gen_ai.tool.call.result", result)]))
            k += 2
            turn += 1
        if jsonl:
            if batch:
                f.write(head + ",".join(batch) + tail + "\n")
        else:
            f.write(head + ",".join(batch) + tail)
    path.with_suffix(".tmp").replace(path)
    print(f"{path.name}: {count} spans, {path.stat().st_size / 2**20:.0f} MiB", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--spans", type=int, default=1_000_000)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--jsonl", action="store_true", help="Collector JSON Lines instead of one document")
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)
    args.data.mkdir(parents=True, exist_ok=True)
    ext = "jsonl" if args.jsonl else "json"
    a = args.data / f"otlp_small_original_n{args.spans}.{ext}"
    b = args.data / f"otlp_small_replay_n{args.spans}_d{args.edits}.{ext}"
    turns = args.spans // 2
    edits = set(random.Random(args.edits).sample(range(turns), min(args.edits, turns)))
    for path, replay in ((a, False), (b, True)):
        if not path.exists():
            write_run(path, args.spans, replay, edits, args.jsonl)
    print(f"load average: {os.getloadavg()[0]:.2f}", flush=True)
    p = subprocess.run(["/usr/bin/time", "-v", args.python, "-m", "tracetui", "diff", str(a), str(b),
                        "--format", "json"], cwd=ROOT, capture_output=True, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", p.stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    user = re.search(r"User time \(seconds\): (\S+)", p.stderr)
    div = len(json.loads(p.stdout).get("divergences", [])) if p.stdout.strip().startswith("{") else None
    print(f"diff exit {p.returncode}, wall {wall.group(1) if wall else '?'}, user {user.group(1) if user else '?'} s, "
          f"peak {int(peak.group(1)) / 2**20 if peak else 0:.2f} GiB, divergences {div}")
    return 0


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    raise SystemExit(main())
