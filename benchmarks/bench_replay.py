"""What the harness costs per call: record and strict replay of a synthetic agent.

The agent makes N tool calls (reads over K distinct keys, so repeated reads are served in call
order, plus one write every 10 calls) and one LLM call every 20 calls, with outputs of a chosen
size. Printed, medians of --repeat runs: record and replay time per call (µs), the bare cost of
the same tool functions and JSON writes without the harness, cassette build time, and peak RSS.
Budget (``../shared/design/performance.md`` spirit): the harness must stay far below an agent's
own latency (a tool call over the network is milliseconds): tens of µs per call.

    python benchmarks/bench_replay.py               # N=20000, 1 KB outputs, 5 repeats
    python benchmarks/bench_replay.py -n 2000 --output-bytes 40000 --repeat 3
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracetui.core.harness.agent import AgentSpec  # noqa: E402
from tracetui.core.harness.cassette import Cassette  # noqa: E402
from tracetui.core.harness.redact import Redactor  # noqa: E402
from tracetui.core.harness.run import record, replay  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402


def make_agent(n: int, keys: int, output_bytes: int) -> AgentSpec:
    filler = "lorem ipsum dolor sit amet " * (output_bytes // 27 + 1)
    counter = {"writes": 0}

    def lookup(item: str, page: int = 0) -> dict[str, Any]:
        return {"item": item, "page": page, "stock": counter["writes"], "text": filler[:output_bytes]}

    def update(item: str, qty: int) -> dict[str, Any]:
        counter["writes"] += 1
        return {"ok": True, "item": item, "qty": qty}

    def model(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": f"step {len(messages)}", "tool_calls": []}

    def run(ctx: Any, input: Any) -> Any:
        for i in range(n):
            if i % 10 == 9:
                ctx.tool("update", {"item": f"sku-{i % keys}", "qty": i})
            else:
                ctx.tool("lookup", {"item": f"sku-{i % keys}", "page": 0})
            if i % 20 == 19:
                ctx.llm([{"role": "user", "content": f"status after {i}"}], model="bench-1", temperature=0)
        return {"done": n}

    return AgentSpec(ref="bench:run", run=run, name="bench", tools={"lookup": lookup, "update": update},
                     read_tools=frozenset({"lookup"}), model=model, model_info={"id": "bench-1"})


def bare(n: int, keys: int, spec: AgentSpec, out: Path) -> float:
    """The same calls and one orjson line per call written to a file, without the harness."""
    t = time.perf_counter()
    with open(out, "wb") as fh:
        for i in range(n):
            args = {"item": f"sku-{i % keys}", "qty": i} if i % 10 == 9 else {"item": f"sku-{i % keys}", "page": 0}
            res = spec.tools["update" if i % 10 == 9 else "lookup"](**args)
            fh.write(orjson.dumps({"arguments": args, "output": res}) + b"\n")
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--calls", type=int, default=20_000, help="tool calls per run (default 20000)")
    ap.add_argument("--keys", type=int, default=500, help="distinct read keys (default 500)")
    ap.add_argument("--output-bytes", type=int, default=1000, help="size of each read's text output (default 1000)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    spec = make_agent(args.calls, args.keys, args.output_bytes)
    red = Redactor(b"bench-key-0123456789abcdef")
    rec_t, rep_t, bare_t, cas_t = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for r in range(args.repeat):
            orig, rep = d / f"o{r}.jsonl", d / f"r{r}.jsonl"
            t = time.perf_counter()
            record(spec, {"n": args.calls}, str(orig), redactor=red, seed=1)
            rec_t.append(time.perf_counter() - t)
            trace = read_trace(orig)
            t = time.perf_counter()
            Cassette.from_trace(trace)
            cas_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            report = replay(trace, spec, str(rep), redactor=red)
            rep_t.append(time.perf_counter() - t)
            assert not report.diverged and report.runs[0].outcome.live_calls == 0
            bare_t.append(bare(args.calls, args.keys, spec, d / f"b{r}.jsonl"))
        size = (d / "o0.jsonl").stat().st_size / 1e6
    calls = args.calls + args.calls // 20
    us = lambda xs: statistics.median(xs) / calls * 1e6  # noqa: E731
    print(f"synthetic agent: {args.calls} tool calls ({args.keys} keys, {args.output_bytes} B outputs) + "
          f"{args.calls // 20} LLM calls; trace {size:.1f} MB; medians of {args.repeat}")
    print(f"  record           {statistics.median(rec_t):7.3f} s   {us(rec_t):6.1f} µs/call")
    print(f"  strict replay    {statistics.median(rep_t):7.3f} s   {us(rep_t):6.1f} µs/call  (cassette build "
          f"{statistics.median(cas_t) * 1e3:.0f} ms included)")
    print(f"  bare calls+lines {statistics.median(bare_t):7.3f} s   {us(bare_t):6.1f} µs/call")
    print(f"  ratio record/bare {statistics.median(rec_t) / statistics.median(bare_t):.1f}x, "
          f"replay/bare {statistics.median(rep_t) / statistics.median(bare_t):.1f}x")
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
