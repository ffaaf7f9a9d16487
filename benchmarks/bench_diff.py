"""Benchmark: read two tracetui/1 runs and diff them, against a bare orjson parse.

Builds (once, cached under ``benchmarks/_data/``) a synthetic original run of N
spans in a realistic tree (root agent -> sessions -> steps -> llm, tool,
retrieval, decision; tool outputs 200 B to 40 KB, log-uniform) and replays of
it with D edits (changed arguments, outputs, LLM answers, statuses; inserted
and deleted calls), then prints medians over ``--repeat`` runs of:

- read: ``read_trace`` of both files;
- align: ``align`` of the two span lists;
- compare: ``diff_traces`` minus ``align`` (comparison, divergences, order);
- whole: read both + ``diff_traces``, what ``tracetui diff`` does;
- bare: ``orjson.loads`` of every line of both files (GC off), the floor; also
  with lines by ``bytes.split``, and read through a 256 KiB buffer as
  ``read_trace`` does;
- ratio whole / bare (target <= 1.5): of the medians, and the median of the
  per-repeat ratios (whole and bare alternate), also in process CPU time;
  and peak RSS;
- align time at D = ``--edits`` and at D = ``--edits-large``.

Usage::

    python benchmarks/bench_diff.py                 # N=100k, D=10 and 1000, 5 repeats
    python benchmarks/bench_diff.py -n 20000 --repeat 3
    python benchmarks/bench_diff.py --profile       # cProfile of one whole diff, top 25
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracetui.core.diff.align import MAX_D, align, align_with_same_keys, span_key  # noqa: E402
from tracetui.core.diff.lcs import matching_blocks  # noqa: E402
from tracetui.core.diff import diff_traces  # noqa: E402
from tracetui.core.diff.trace_diff import _diff_rows  # noqa: E402
from tracetui.core.readers import read_trace  # noqa: E402

T0 = 1_762_161_242_118_000_000
TOOLS = ["search_orders", "get_order", "get_tracking", "check_availability", "book_appointment",
         "get_billing_account", "pause_subscription", "lookup_customer", "send_email", "refund",
         "list_invoices", "get_weather"]
WORDS = ("order refund tracking delivery invoice account customer schedule install north south "
         "thursday friday router fibre outage ticket agent replay shipped delayed").split()


# -- synthetic runs -----------------------------------------------------------------


class _Gen:
    """Builds one run's span objects (tracetui/1 line shape) in emission order."""

    def __init__(self, n: int, seed: int) -> None:
        self.n = n
        self.rnd = random.Random(seed)
        self.pool = "".join(self.rnd.choice("abcdefghijklmnopqrstuvwxyz     .,0123456789") for _ in range(96_000))
        self.spans: list[dict[str, Any]] = []

    def text(self, size: int) -> str:
        at = self.rnd.randrange(len(self.pool) - size)
        return self.pool[at:at + size]

    def add(self, kind: str, name: str, parent: str | None, section: dict[str, Any]) -> str:
        seq = len(self.spans)
        sid = f"s{seq:x}"
        self.spans.append({"span_id": sid, "parent_id": parent, "seq": seq, "kind": kind, "name": name,
                           "start_ns": T0 + seq * 1_000_000, "end_ns": T0 + seq * 1_000_000 + 400_000,
                           "status": "ok", "error_type": None, kind: section})
        return sid

    def tool(self, parent: str) -> None:
        name = self.rnd.choice(TOOLS)
        size = int(200 * (200 ** self.rnd.random()))  # log-uniform 200 B .. 40 KB
        args = {"id": self.rnd.randrange(100_000), "query": " ".join(self.rnd.sample(WORDS, 3)),
                "limit": self.rnd.choice([5, 10, 20])}
        out = {"status": "ok", "items": [{"id": i, "v": self.rnd.random()} for i in range(3)], "body": self.text(size)}
        self.add("tool", f"execute_tool {name}", parent, {
            "tool_name": name, "tool_version": "2", "call_id": f"call_{len(self.spans):x}", "arguments": args,
            "args_hash": f"{self.rnd.getrandbits(64):016x}", "effect": "read", "mode": "live",
            "output": out, "output_truncated": False})

    def llm(self, parent: str) -> None:
        msgs = [{"role": "system", "content": "You are the support agent. " + self.text(300)},
                {"role": "user", "content": self.text(120)},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": f"call_{len(self.spans):x}", "name": "get_order", "arguments": {"id": 1}}]},
                {"role": "tool", "content": self.text(400), "tool_call_id": f"call_{len(self.spans):x}"}]
        self.add("llm", "chat gpt-4o", parent, {
            "model": "gpt-4o", "provider": "openai", "prompt_id": "support.system", "prompt_version": "v5",
            "params": {"temperature": 0.2, "seed": 7}, "messages": msgs, "tool_schemas_hash": "9f2c4e1ab03d77e1",
            "output": {"role": "assistant", "content": self.text(200)}, "finish_reason": "stop",
            "usage": {"input_tokens": 800, "output_tokens": 60}, "response_id": f"chatcmpl-{len(self.spans):x}"})

    def build(self) -> list[dict[str, Any]]:
        rnd = self.rnd
        root = self.add("agent", "invoke_agent support", None, {"agent_name": "support", "input": {"q": "help"},
                                                                 "output": {"answer": "done"}})
        while len(self.spans) < self.n:
            session = self.add("agent", "session", root, {"input": {"session": len(self.spans)}, "output": None})
            for _ in range(150):
                if len(self.spans) >= self.n:
                    break
                step = self.add("agent", "step", session, {"input": None, "output": None})
                self.llm(step)
                for _ in range(rnd.randint(1, 3)):
                    self.tool(step)
                if rnd.random() < 0.3:
                    self.add("retrieval", "retrieve kb", step, {
                        "index": "kb", "index_version": "2026-10", "query": " ".join(rnd.sample(WORDS, 4)), "top_k": 3,
                        "documents": [{"id": f"d{rnd.randrange(9999)}", "score": rnd.random(), "text": self.text(300)}
                                      for _ in range(3)]})
                if rnd.random() < 0.2:
                    self.add("decision", "route", step, {"decision": rnd.choice(["answer", "escalate"]), "value": 1})
        return self.spans[:self.n]


def make_replay(spans: list[dict[str, Any]], edits: int, seed: int) -> list[dict[str, Any]]:
    """A replay of ``spans``: other ids and timestamps, tools in replay mode, ``edits`` semantic edits."""
    rnd = random.Random(seed)
    out = []
    for s in spans:
        r = dict(s)
        r["span_id"] = "r" + s["span_id"]
        r["parent_id"] = None if s["parent_id"] is None else "r" + s["parent_id"]
        if s["kind"] == "tool":
            r["tool"] = {**s["tool"], "mode": "replay"}
        out.append(r)
    tools = [i for i, s in enumerate(out) if s["kind"] == "tool"]
    llms = [i for i, s in enumerate(out) if s["kind"] == "llm"]
    deleted: set[int] = set()
    inserted: dict[int, list[dict[str, Any]]] = {}
    for e in range(edits):
        what = e % 6
        i = rnd.choice(llms if what == 4 else tools)
        s = out[i]
        if what == 0:
            s["tool"] = {**s["tool"], "arguments": {**s["tool"]["arguments"], "id": -e}}
        elif what == 1:
            s["tool"] = {**s["tool"], "output": {**s["tool"]["output"], "status": "changed"}}
        elif what == 2:
            inserted.setdefault(i, []).append({**s, "span_id": f"rx{e}", "tool": {**s["tool"], "tool_name": "refund",
                                                                                "arguments": {"id": e}}})
        elif what == 3:
            deleted.add(i)
        elif what == 4:
            s["llm"] = {**s["llm"], "output": {"role": "assistant", "content": f"another answer {e}"}}
        else:
            out[i] = {**s, "status": "error", "error_type": "TimeoutError"}
    final = []
    for i, s in enumerate(out):
        if i not in deleted:
            final.append(s)
        final.extend(inserted.get(i, ()))
    for seq, s in enumerate(final):
        s["seq"] = seq
        s["start_ns"] = T0 + 3_600_000_000_000 + seq * 1_100_000
        s["end_ns"] = s["start_ns"] + 500_000
    return final


def write_jsonl(path: Path, spans: list[dict[str, Any]], run_id: str) -> None:
    header = {"schema": "tracetui/1", "run_id": run_id, "start_ns": T0, "agent": "support"}
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        fh.write(orjson.dumps(header) + b"\n")
        for s in spans:
            fh.write(orjson.dumps(s) + b"\n")
    tmp.replace(path)


def ensure_data(folder: Path, n: int, edit_counts: list[int], seed: int) -> tuple[Path, dict[int, Path]]:
    """Write the original and one replay per edit count, unless already there."""
    folder.mkdir(parents=True, exist_ok=True)
    orig = folder / f"original_n{n}_s{seed}.jsonl"
    replays = {d: folder / f"replay_n{n}_s{seed}_d{d}.jsonl" for d in edit_counts}
    if orig.exists() and all(p.exists() for p in replays.values()):
        return orig, replays
    print(f"building synthetic runs of {n} spans in {folder} ...", flush=True)
    spans = _Gen(n, seed).build()
    write_jsonl(orig, spans, "original")
    for d, p in replays.items():
        if not p.exists():
            write_jsonl(p, make_replay(spans, d, seed + d), f"replay-d{d}")
    return orig, replays


# -- measurements ---------------------------------------------------------------------


def bare_parse(path: Path) -> list[Any]:
    """The floor: read the bytes, ``orjson.loads`` every line, GC off.

    Lines are handed to orjson as memoryview slices: ``bytes.split`` would
    copy the whole file once more (about 0.6 s per 400 MB here).
    """
    gc.disable()
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        mv, find, loads, out = memoryview(data), data.find, orjson.loads, []
        pos, n = 0, len(data)
        while pos < n:
            end = find(b"\n", pos)
            if end < 0:
                end = n
            if end > pos:
                out.append(loads(mv[pos:end]))
            pos = end + 1
        return out
    finally:
        gc.enable()


def bare_parse_split(path: Path) -> list[Any]:
    """``bare_parse`` the obvious way, ``data.split(b"\n")`` (one more copy of the file)."""
    gc.disable()
    try:
        with open(path, "rb") as fh:
            return [orjson.loads(line) for line in fh.read().split(b"\n") if line]
    finally:
        gc.enable()


def bare_parse_chunked(path: Path, chunk: int = 256 * 1024) -> list[Any]:
    """``bare_parse`` reading through a reused 256 KiB buffer, as ``read_trace`` reads tracetui/1.

    The lines are parsed while the buffer is in cache and the file is never
    held whole (about 0.3 s less a 400 MB file here): the floor of that method.
    """
    gc.disable()
    try:
        out: list[Any] = []
        loads = orjson.loads
        buf = bytearray(chunk)
        mv = memoryview(buf)
        have = 0
        with open(path, "rb") as fh:
            while True:
                if have == len(buf):
                    mv.release()
                    buf = buf + bytes(len(buf))
                    mv = memoryview(buf)
                n = fh.readinto(mv[have:])
                if not n:
                    break
                stop, pos, find = have + n, 0, buf.find
                while (end := find(b"\n", pos, stop)) >= 0:
                    if end > pos:
                        out.append(loads(mv[pos:end]))
                    pos = end + 1
                have = stop - pos
                buf[:have] = buf[pos:stop]
        if have:
            out.append(loads(mv[:have]))
        mv.release()
        return out
    finally:
        gc.enable()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def median_of(repeat: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--spans", type=int, default=100_000, help="spans per run (default 100000)")
    ap.add_argument("--edits", type=int, default=10, help="edits in the replay (default 10)")
    ap.add_argument("--edits-large", type=int, default=1000, help="edits of the second replay, align only (default 1000)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure; medians are printed (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data", help="where synthetic files go")
    ap.add_argument("--profile", action="store_true", help="cProfile one read+diff instead of timing")
    args = ap.parse_args(argv)

    orig, replays = ensure_data(args.data, args.spans, sorted({args.edits, args.edits_large}), args.seed)
    rep = replays[args.edits]
    mb = (orig.stat().st_size + rep.stat().st_size) / 1e6
    print(f"files: {orig.name} + {rep.name}: {mb:.0f} MB, {args.spans} spans each; D={args.edits}")

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        d = diff_traces(read_trace(orig), read_trace(rep))
        prof.disable()
        print(f"{len(d.rows)} rows, {len(d.divergences)} divergences")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        return 0

    def run_bare(parse: Callable[[Path], list[Any]]) -> tuple[float, float]:
        c, t = time.process_time(), time.perf_counter()
        out = (parse(orig), parse(rep))
        t, c = time.perf_counter() - t, time.process_time() - c
        del out
        gc.collect()
        return t, c

    reads: list[float] = []
    aligns: list[float] = []
    compares: list[float] = []
    wholes: list[float] = []
    bares: list[float] = []
    bares_chunked: list[float] = []
    bares_split: list[float] = []
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    ndiv = nrows = 0
    # Whole and bare alternate within each repeat, so that a change in the load
    # of the (shared) machine weighs on both; the ratio is also taken per repeat.
    for _ in range(args.repeat):
        c0 = time.process_time()
        t_read, (a, b) = timed(lambda: (read_trace(orig), read_trace(rep)))
        t_diff, d = timed(lambda: diff_traces(a, b))
        c_whole = time.process_time() - c0
        ndiv, nrows = len(d.divergences), len(d.rows)
        del d
        gc.disable()
        try:
            t_align, (rows, same) = timed(lambda: align_with_same_keys(a.spans, b.spans))
            t_cmp, d = timed(lambda: _diff_rows(a, b, rows, same))
        finally:
            gc.enable()
        reads.append(t_read)
        aligns.append(t_align)
        compares.append(t_cmp)
        wholes.append(t_read + t_diff)
        del a, b, rows, same, d
        gc.collect()
        t_bare, c_bare = run_bare(bare_parse)
        bares.append(t_bare)
        ratios.append(wholes[-1] / t_bare)
        cpu_ratios.append(c_whole / c_bare)
        bares_chunked.append(run_bare(bare_parse_chunked)[0])
        bares_split.append(run_bare(bare_parse_split)[0])
    bare = statistics.median(bares)
    bare_chunked = statistics.median(bares_chunked)
    bare_split = statistics.median(bares_split)

    def flat_lcs(x: Any, y: Any) -> float:
        """Median time of the LCS of the two runs' key sequences, flat in seq order."""
        kx, ky = [span_key(s) for s in x.spans], [span_key(s) for s in y.spans]
        return median_of(args.repeat, lambda: timed(lambda: matching_blocks(kx, ky, MAX_D))[0])

    a_l = read_trace(orig)
    b_s = read_trace(rep)
    b_l = read_trace(replays[args.edits_large])
    gc.disable()
    try:
        t_align_small = median_of(args.repeat, lambda: timed(lambda: align(a_l.spans, b_s.spans))[0])
        t_align_large = median_of(args.repeat, lambda: timed(lambda: align(a_l.spans, b_l.spans))[0])
        rows_l = align(a_l.spans, b_l.spans)
        paired_l = sum(1 for r in rows_l if r.original is not None and r.replay is not None)
        t_flat_small, t_flat_large = flat_lcs(a_l, b_s), flat_lcs(a_l, b_l)
    finally:
        gc.enable()
    del a_l, b_s, b_l, rows_l
    gc.collect()

    whole = statistics.median(wholes)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows {nrows}, divergences {ndiv} (D={args.edits}); medians of {args.repeat}:")
    print(f"  read both (read_trace x2)     {statistics.median(reads):7.3f} s")
    print(f"  align                         {statistics.median(aligns):7.3f} s")
    print(f"  compare (diff minus align)    {statistics.median(compares):7.3f} s")
    print(f"  whole (read both + diff)      {whole:7.3f} s")
    print(f"  bare orjson.loads per line x2 {bare:7.3f} s   (lines as memoryview slices: the floor)")
    print(f"  bare, lines by bytes.split    {bare_split:7.3f} s")
    print(f"  bare, read in 256 KiB chunks  {bare_chunked:7.3f} s   (how read_trace reads tracetui/1)")
    print(f"  ratio whole / bare            {whole / bare:7.2f}   (target <= 1.5; ratio of the medians)")
    print(f"  same, median of the repeats'  {statistics.median(ratios):7.2f}   ("
          + ", ".join(f"{w:.2f}/{b:.2f}" for w, b in zip(wholes, bares)) + " s)")
    print(f"  same, CPU time of the process {statistics.median(cpu_ratios):7.2f}   (less sensitive to other processes)")
    print(f"  ratio vs the other floors     {whole / bare_chunked:7.2f} chunked, {whole / bare_split:.2f} split (medians)")
    print(f"  align D={args.edits:<5} (warm, same method) {t_align_small:7.3f} s")
    print(f"  align D={args.edits_large:<5} (warm, same method) {t_align_large:7.3f} s  ({paired_l} pairs)")
    print(f"  flat key-sequence LCS D={args.edits:<5}   {t_flat_small:7.3f} s  (the part of align that grows with D;")
    print(f"  flat key-sequence LCS D={args.edits_large:<5}   {t_flat_large:7.3f} s   the rest is per-span key/tree/row work)")
    print(f"  peak RSS                      {rss:7.0f} MB")
    return 0


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    sys.exit(main())
