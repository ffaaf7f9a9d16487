"""Benchmark: every reader against a bare orjson parse of the same bytes.

For each file, medians over ``--repeat`` runs (reader and bare alternate in
each repeat, so a change in the load of the shared machine weighs on both) of:

- bare: the floor, ``orjson.loads`` of the file's bytes (read whole) with the
  GC off; for JSON Lines (a file orjson refuses whole) ``orjson.loads`` of
  every line as a memoryview slice; for a zip (inspect ``.eval``) of every
  ``.json`` member; none for YAML;
- read: the registry's ``_read`` (the reader on the open file, as
  ``read_trace`` calls it) plus ``finish_spans`` of **every** run, GC off:
  what loading the whole file costs;
- read_trace: ``read_trace`` of the first run, what ``tracetui show`` pays;
- ratio = read / bare (target <= 1.5).

Files: every file of ``../shared/corpus/`` whose format a registered reader
sniffs (others are listed as skipped, with the reason), plus generated files
cached under ``benchmarks/_data/``: the 100k-span tracetui/1 run of
``bench_diff.py`` and the same spans as OTLP/JSON, one document and Collector
JSON Lines (100 spans a line), with OTel GenAI attributes.

Usage::

    python benchmarks/bench_readers.py                   # corpus + 100k-span files, 5 repeats
    python benchmarks/bench_readers.py -n 10000 --repeat 3
    python benchmarks/bench_readers.py --only tau        # files whose name contains "tau"
    python benchmarks/bench_readers.py --profile FILE    # cProfile of one read of FILE, top 25
    python benchmarks/bench_readers.py --scaled 20000 --no-generated --only scaled   # 20k-observation exports
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import zipfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_diff import _Gen, ensure_data, timed  # timed: freeing the result is not timed (the caller drops it)

from tracetui.core.readers import (
    SNIFF_BYTES,
    _read,
    _reader,
    finish_spans,
    promote_young_objects,
    read_trace,
    sniff_format,
)

CORPUS = (ROOT / ".." / "shared" / "corpus").resolve()
SPANS_PER_LINE = 100


# -- generated OTLP/JSON ------------------------------------------------------------------


def _anyvalue(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [_anyvalue(x) for x in v]}}
    return {"stringValue": v if isinstance(v, str) else orjson.dumps(v).decode()}


def _genai_message(m: dict[str, Any]) -> dict[str, Any]:
    """A tracetui message as a GenAI ``parts`` message (gen_ai.input.messages)."""
    parts: list[dict[str, Any]] = []
    if m.get("role") == "tool":
        parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"), "response": m.get("content")})
    else:
        if m.get("content") is not None:
            parts.append({"type": "text", "content": m["content"]})
        for c in m.get("tool_calls") or ():
            parts.append({"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["arguments"]})
    return {"role": m["role"], "parts": parts}


def otlp_span(s: dict[str, Any], trace_id: str) -> dict[str, Any]:
    """A tracetui/1 span object (bench_diff's generator) as an OTLP/JSON span with GenAI attributes."""
    kind = s["kind"]
    sec = s.get(kind) or {}
    dumps = orjson.dumps
    if kind == "tool":
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": sec["tool_name"],
            "gen_ai.tool.call.id": sec["call_id"], "gen_ai.tool.call.arguments": dumps(sec["arguments"]).decode(),
            "gen_ai.tool.call.result": dumps(sec["output"]).decode()}
    elif kind == "llm":
        attrs = {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": sec["model"],
            "gen_ai.provider.name": sec["provider"], "gen_ai.request.temperature": sec["params"]["temperature"],
            "gen_ai.request.seed": sec["params"]["seed"],
            "gen_ai.input.messages": dumps([_genai_message(m) for m in sec["messages"]]).decode(),
            "gen_ai.output.messages": dumps([_genai_message(sec["output"])]).decode(),
            "gen_ai.response.finish_reasons": [sec["finish_reason"]], "gen_ai.response.id": sec["response_id"],
            "gen_ai.usage.input_tokens": sec["usage"]["input_tokens"],
            "gen_ai.usage.output_tokens": sec["usage"]["output_tokens"]}
    elif kind == "retrieval":
        attrs = {"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": sec["index"],
                 "gen_ai.retrieval.query.text": sec["query"], "gen_ai.request.top_k": sec["top_k"],
                 "gen_ai.retrieval.documents": dumps(sec["documents"]).decode()}
    elif kind == "agent":
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": sec.get("agent_name") or s["name"]}
    else:
        attrs = {"gen_ai.operation.name": "plan", "tracetui.decision": dumps(sec).decode()}
    seq = int(s["span_id"][1:], 16)
    out = {
        "traceId": trace_id, "spanId": f"{seq + 1:016x}",
        "parentSpanId": "" if s["parent_id"] is None else f"{int(s['parent_id'][1:], 16) + 1:016x}",
        "name": s["name"], "kind": 3 if kind == "llm" else 1,
        "startTimeUnixNano": str(s["start_ns"]), "endTimeUnixNano": str(s["end_ns"]),
        "attributes": [{"key": k, "value": _anyvalue(v)} for k, v in attrs.items()],
        "status": {"code": 2 if s["status"] == "error" else 0},
    }
    return out


def _envelope(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "support-agent"}}]},
        "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


def ensure_otlp(folder: Path, n: int, seed: int) -> tuple[Path, Path]:
    """The 100k-span run of ``bench_diff`` as an OTLP/JSON document and as Collector JSON Lines."""
    doc = folder / f"otlp_n{n}_s{seed}.json"
    jsonl = folder / f"otlp_n{n}_s{seed}.jsonl"
    if doc.exists() and jsonl.exists():
        return doc, jsonl
    print(f"building OTLP/JSON runs of {n} spans in {folder} ...", flush=True)
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    spans = [otlp_span(s, trace_id) for s in _Gen(n, seed).build()]
    tmp = doc.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(_envelope(spans)))
    tmp.replace(doc)
    with open(tmp, "wb") as fh:
        fh.writelines(orjson.dumps(_envelope(spans[k:k + SPANS_PER_LINE])) + b"\n" for k in range(0, len(spans), SPANS_PER_LINE))
    tmp.replace(jsonl)
    return doc, jsonl


# -- measurements -------------------------------------------------------------------------


def bare_parse(path: Path) -> Any:
    """The floor: the bytes read whole, parsed by orjson (whole, per line, or per zip member), GC off."""
    gc.disable()
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                return [orjson.loads(z.read(m)) for m in z.namelist() if m.endswith(".json")]
        with open(path, "rb") as fh:
            data = fh.read()
        nl = data.find(b"\n")
        if nl < 0:
            return orjson.loads(data)
        try:  # JSON Lines when the first line is a whole value and more follows (a failed
            # orjson.loads of a whole 400 MB JSONL file costs 1.4 s before it gives up)
            orjson.loads(data[:nl])
            jsonl = not data[nl:nl + 65536].isspace()
        except orjson.JSONDecodeError:
            jsonl = False
        if not jsonl:
            return orjson.loads(data)
        mv, find, loads, out = memoryview(data), data.find, orjson.loads, []
        pos, n = 0, len(data)
        while pos < n:
            end = find(b"\n", pos)
            if end < 0:
                end = n
            if end > pos:
                try:
                    out.append(loads(mv[pos:end]))
                except orjson.JSONDecodeError:  # a blank line (no slice copy to test it)
                    pass
            pos = end + 1
        return out
    finally:
        gc.enable()


def read_all(path: Path, fmt: str) -> list[list[Any]]:
    """``_read`` + ``finish_spans`` of every run (as ``read_trace`` does for one), GC off: the runs' spans."""
    reader = _reader(fmt)
    gc.disable()
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
            out = _read(reader, str(path), fh, head)
        issues = list(out.issues)
        runs = [run.spans if run.in_order else finish_spans(run.spans, str(path), issues) for run in out.runs]
        promote_young_objects()
        return runs
    finally:
        gc.enable()



def settle() -> None:
    gc.collect()


_TIMES = ("startTime", "endTime", "completionStartTime")


def _shifted(value: Any, ms: int) -> Any:
    """An ISO time string ``ms`` milliseconds later (``...Z``, milliseconds); anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return (t + timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def scaled_langfuse(src: Path, out: Path, n: int) -> Path:
    """A Langfuse trace export of at least ``n`` observations: ``src``'s observations copied again and again, one
    copy after the other in time (each copy's times shifted past the one before), ids and parent ids suffixed
    with the copy's number, under ``src``'s trace: a long run of the same agent. Written once."""
    if out.exists():
        return out
    doc = orjson.loads(src.read_bytes())
    obs = doc["observations"]
    starts = [datetime.fromisoformat(o[k].replace("Z", "+00:00")) for o in obs for k in _TIMES
              if isinstance(o.get(k), str)]
    span_ms = int((max(starts) - min(starts)).total_seconds() * 1000) + 1 if starts else 1
    copies = []
    for k in range(-(-n // len(obs))):
        for o in obs:
            c = dict(o, id=f"{o['id']}-{k}")
            if c.get("parentObservationId"):
                c["parentObservationId"] = f"{o['parentObservationId']}-{k}"
            for t in _TIMES:
                if t in c:
                    c[t] = _shifted(c[t], k * span_ms)
            copies.append(c)
    doc["observations"] = copies
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(doc))
    return out


def scaled_langsmith(src: Path, out: Path, n: int) -> Path:
    """A LangSmith run-ingest batch (``{"post": [...], "patch": [...]}``) of at least ``n`` runs: ``src``'s runs
    copied, each copy under run ids whose last 8 hex digits are the copy's number (so they stay UUIDs, and the
    ``dotted_order`` naming them stays well-formed). Written once."""
    if out.exists():
        return out
    text = src.read_text()
    doc = orjson.loads(text)
    ids = sorted({r["id"] for part in ("post", "patch") for r in doc.get(part, [])})
    post: list[Any] = []
    patch: list[Any] = []
    for k in range(-(-n // max(1, len(doc.get("post", []))))):
        t = text
        for i, rid in enumerate(ids):
            t = t.replace(rid, f"{rid[:-8]}{(k * len(ids) + i) % 2**32:08x}")
        d = orjson.loads(t)
        post += d.get("post", [])
        patch += d.get("patch", [])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps({"post": post, "patch": patch}))
    return out


def files(args: argparse.Namespace) -> list[Path]:
    found: list[Path] = []
    if CORPUS.is_dir() and not args.no_corpus:
        found += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    if CORPUS.is_dir() and args.scaled:
        for src in sorted((CORPUS / "langfuse").glob("*.json")):
            found.append(scaled_langfuse(src, args.data / f"scaled_{args.scaled}_{src.name}", args.scaled))
        for src in sorted((CORPUS / "langsmith").glob("*.json")):
            found.append(scaled_langsmith(src, args.data / f"scaled_{args.scaled}_{src.name}", args.scaled))
    if not args.no_generated:
        native, _ = ensure_data(args.data, args.spans, [], args.seed)
        found.append(native)
        found.extend(ensure_otlp(args.data, args.spans, args.seed))
    if args.only:
        found = [p for p in found if args.only in str(p)]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("-n", "--spans", type=int, default=100_000, help="spans of the generated runs (default 100000)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure; medians are printed (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "_data", help="where generated files go")
    ap.add_argument("--only", help="only files whose path contains this")
    ap.add_argument("--no-corpus", action="store_true", help="skip ../shared/corpus")
    ap.add_argument("--no-generated", action="store_true", help="skip the generated 100k-span files")
    ap.add_argument("--profile", type=Path, metavar="FILE", help="cProfile one read of FILE instead of timing")
    ap.add_argument("--scaled", type=int, metavar="N", help="also the corpus's Langfuse and LangSmith files scaled "
                    "to N observations / runs (their records copied under new ids; written once to --data)")
    args = ap.parse_args(argv)

    if args.profile:
        fmt = sniff_format(args.profile.read_bytes()[:SNIFF_BYTES])
        if fmt is None:
            print(f"{args.profile}: no reader recognises it")
            return 1
        prof = cProfile.Profile()
        prof.enable()
        n = sum(map(len, read_all(args.profile, fmt)))
        prof.disable()
        print(f"{args.profile}: {fmt}, {n} spans")
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0

    rows: list[tuple[str, ...]] = []
    skipped: list[str] = []
    for path in files(args):
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        fmt = sniff_format(head)
        name = str(path.relative_to(CORPUS)) if path.is_relative_to(CORPUS) else path.name
        if fmt is None:
            skipped.append(f"{name} (no registered reader recognises it)")
            continue
        is_yaml = path.suffix in (".yaml", ".yml")
        bares: list[float] = []
        reads: list[float] = []
        traces: list[float] = []
        nspans = 0
        for _ in range(args.repeat):
            if not is_yaml:
                t, out = timed(lambda p=path: bare_parse(p))
                bares.append(t)
                del out
                settle()
            t, out = timed(lambda p=path, f=fmt: read_all(p, f))
            reads.append(t)
            nspans = sum(map(len, out))
            del out
            settle()
            t, out = timed(lambda p=path, f=fmt: read_trace(p, format=f))
            traces.append(t)
            del out
            settle()
        read = statistics.median(reads)
        bare = statistics.median(bares) if bares else None
        rows.append((name, fmt, f"{os.path.getsize(path) / 1e6:.2f}", str(nspans),
                     "-" if bare is None else f"{bare * 1e3:.1f}", f"{read * 1e3:.1f}",
                     "-" if bare is None else f"{read / bare:.2f}", f"{statistics.median(traces) * 1e3:.1f}"))
        print(".", end="", flush=True)
    print()
    head = ("file", "format", "MB", "spans", "orjson ms", "read ms", "ratio", "read_trace ms")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"medians of {args.repeat}; ratio = read (all runs) / bare orjson parse, target <= 1.5")
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    for s in skipped:
        print(f"skipped: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
