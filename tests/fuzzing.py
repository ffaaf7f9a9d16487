"""Mutations of real trace files, and a worker that runs the CLI on each in a fresh forked child.

Shared by ``tests/test_fuzz.py`` (seeded, bounded, in the suite) and ``scripts/fuzz.py`` (thousands of
mutations, run by hand). Each mutation is one of:

- ``truncate``: the file cut at a random byte;
- ``flip``: 1-16 random bytes replaced by random bytes;
- ``swap``: a JSON value (a JSON Lines line's, or the document's) replaced by an odd one of another
  type: null, a bool, 0, an integer beyond 64 bits, an empty or a 100 KB string, a lone surrogate,
  a list, an object, a 1e308 float;
- ``nest``: a JSON value wrapped in 3,000 levels of lists;
- ``huge``: a number token replaced by a 5,000-digit integer, or a string by a 2 MB one;
- ``bomb``: a YAML alias bomb (YAML files), a member that deflates 2,000x (zips), 50,000 bad lines
  appended (JSON Lines), or a 100 KB string put first (JSON objects).

``Worker`` is a child process that imports tracetui once and forks per command: the command runs
``tracetui.cli.main.main(argv)`` with its output captured, and the worker sends back the exit code,
the stderr tail, the wall time and the child's own peak RSS (``os.wait4``); a command over its time
limit is killed and reported as a hang.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = (ROOT / ".." / "shared" / "corpus").resolve()
SAMPLES = ROOT / "sample_runs"

KINDS = ("truncate", "flip", "swap", "nest", "huge", "bomb")
ODDS: tuple[Any, ...] = (None, True, 0, -1, 2**70, -(2**80), "", "x" * 100_000, "a\ud800b", [], {}, [1, "a", None],
                         {"type": 3}, 1e308, "NaN")


def seed_files() -> list[Path]:
    """The real files mutated: every corpus file (when ``../shared/corpus`` is there) and the sample runs."""
    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")
                   and "store" not in p.parts and p.name != "fixture_seed.json" and p.name != "input.json")
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    return files


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def _dumps(value: Any) -> bytes:
    # ensure_ascii: a lone surrogate is written as the escape "\ud800", as a damaged file holds it
    return json.dumps(value, ensure_ascii=True).encode()


def _json_units(data: bytes) -> tuple[str, list[Any]] | None:
    """``("doc", [value])`` for a JSON document, ``("lines", values)`` for JSON Lines, else None."""
    try:
        return "doc", [json.loads(data)]
    except (ValueError, RecursionError):
        pass
    try:
        values = [json.loads(line) for line in data.splitlines() if line.strip()]
    except (ValueError, RecursionError):
        return None
    return ("lines", values) if values else None


def _pack(kind: str, values: list[Any]) -> bytes:
    if kind == "doc":
        return _dumps(values[0])
    return b"\n".join(_dumps(v) for v in values) + b"\n"


def _swap_value(data: bytes, rng: random.Random, make: Any) -> bytes | None:
    units = _json_units(data)
    if units is None:
        return None
    kind, values = units
    i = rng.randrange(len(values))
    paths = list(_paths(values[i]))
    path = rng.choice(paths[1:] or paths)
    values[i] = _set(values[i], path, make(rng))
    return _pack(kind, values)


def _dumps_deep(data: bytes) -> bytes:
    return data.replace(b'"__DEEP__"', b"[" * 3000 + b"1" + b"]" * 3000)


def mutate(data: bytes, name: str, kind: str, rng: random.Random) -> bytes:
    """One mutation of ``kind`` of the file ``name``'s bytes ``data`` (see the module docstring)."""
    if name.endswith(".eval"):
        return _mutate_zip(data, kind, rng)
    if kind == "truncate":
        return data[: rng.randrange(max(1, len(data)))]
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if name.endswith((".yaml", ".yml")):
        return _mutate_yaml(data, kind, rng)
    if kind == "swap":
        out = _swap_value(data, rng, lambda r: r.choice(ODDS))
    elif kind == "nest":
        out = _swap_value(data, rng, lambda r: "__DEEP__")
        out = _dumps_deep(out) if out is not None else None
    elif kind == "huge":
        if rng.random() < 0.5:
            nums = [m.start() for m in re.finditer(rb"(?<=[:\[,])\s*-?\d+", data[:2_000_000])]
            if nums:
                at = rng.choice(nums)
                m = re.match(rb"\s*-?\d+(\.\d+)?([eE][-+]?\d+)?", data[at:])
                end = at + (m.end() if m else 1)
                return data[:at] + b"9" * 5000 + data[end:]
        out = _swap_value(data, rng, lambda r: "y" * 2_000_000)
    else:  # bomb
        units = _json_units(data)
        if units is not None and units[0] == "lines":
            return data + b"{not json\n" * 50_000
        if units is not None and isinstance(units[1][0], dict):
            doc = {"_padding": "p" * 100_000, **units[1][0]}
            return _dumps(doc)
        return data + b"\n" * 100_000
    return out if out is not None else data[: len(data) // 2]


def _mutate_yaml(data: bytes, kind: str, rng: random.Random) -> bytes:
    text = data.decode("utf-8", "replace")
    if kind == "bomb":
        lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
        return ("\n".join(lines) + "\n" + text.replace("body:", "body: *a8\n  _was_body:", 1)).encode()
    scalars = [m for m in re.finditer(r"(?m)(?<=: )[^\n&*|>{\[][^\n]*$", text)]
    if not scalars:
        return data[: len(data) // 2]
    m = rng.choice(scalars)
    odd = {"swap": rng.choice(["null", "[]", "{}", "12345678901234567890123", "true", "'\\ud800'", "~", "!!binary AAAA"]),
           "nest": "[" * 3000 + "]" * 3000,
           "huge": rng.choice(["9" * 5000, "'" + "y" * 2_000_000 + "'"])}[kind]
    return (text[: m.start()] + odd + text[m.end():]).encode()


def _mutate_zip(data: bytes, kind: str, rng: random.Random) -> bytes:
    if kind in ("truncate", "flip"):
        return mutate(data, "x.bin", kind, rng)
    try:
        src = zipfile.ZipFile(io.BytesIO(data))
        members = [(i.filename, src.read(i)) for i in src.infolist()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return data
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        jsons = [i for i, (n, _) in enumerate(members) if n.endswith(".json")]
        pick = rng.choice(jsons) if jsons else -1
        for i, (n, body) in enumerate(members):
            if i == pick:
                body = (b'{"pad": "' + b" " * 40_000_000 + b'"}') if kind == "bomb" else mutate(body, n, kind, rng)
            out.writestr(n, body)
    return buf.getvalue()


def cases(files: list[Path], n: int, seed: int) -> Iterator[tuple[str, Path, str, bytes]]:
    """``n`` mutations, seeded: ``(case id, the file mutated, kind, bytes)``; files in turn, and the kinds
    shifted by one each round, so any first part of the sequence mixes files and kinds."""
    rng = random.Random(seed)
    datas = {p: p.read_bytes() for p in files}
    for i in range(n):
        p = files[i % len(files)]
        kind = KINDS[(i + i // len(files)) % len(KINDS)]
        sub = random.Random(rng.getrandbits(64))
        yield f"{i}-{kind}-{p.name}", p, kind, mutate(datas[p], p.name, kind, sub)


def commands(original: Path, mutated: Path, out_dir: Path) -> list[list[str]]:
    """The CLI runs each mutated file goes through: show (text, JSON), diff both ways (text, JSON), convert."""
    m, o = str(mutated), str(original)
    return [["show", m], ["show", m, "--format", "json"], ["diff", o, m, "--format", "json"], ["diff", m, o],
            ["convert", m, str(out_dir / (mutated.name + ".converted.jsonl")), "--force"]]


_WORKER = r"""
import json, os, sys, signal, time, io
sys.setrecursionlimit(1000)
from tracetui.cli.main import main
import tracetui.core.readers as readers
readers.all_readers()
inp, outp = sys.stdin.buffer, sys.stdout.buffer
for line in inp:
    job = json.loads(line)
    t0 = time.monotonic()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        err = io.StringIO()
        try:
            with open(os.devnull, "w") as out:
                code = main(job["argv"], stdout=out, stderr=err)
        except BaseException as exc:
            import traceback
            err.write("UNCAUGHT " + "".join(traceback.format_exception(exc)))
            code = 99
        os.write(w, err.getvalue()[-4000:].encode("utf-8", "backslashreplace"))
        os._exit(code if isinstance(code, int) and 0 <= code < 256 else 98)
    os.close(w)
    os.set_blocking(r, False)
    chunks, status, usage, hung = [], None, None, False
    deadline = t0 + job["timeout"]
    while status is None:
        try:
            b = os.read(r, 65536)
            if b:
                chunks.append(b)
        except BlockingIOError:
            pass
        got, st, ru = os.wait4(pid, os.WNOHANG)
        if got:
            status, usage = st, ru
            break
        if time.monotonic() > deadline:
            hung = True
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.005)
    try:
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
    except BlockingIOError:
        pass
    os.close(r)
    code = os.waitstatus_to_exitcode(status)
    res = {"code": code, "hung": hung, "secs": time.monotonic() - t0, "peak_kb": usage.ru_maxrss,
           "stderr": b"".join(chunks).decode("utf-8", "replace")}
    outp.write(json.dumps(res).encode() + b"\n")
    outp.flush()
"""


class Worker:
    """A child process that imports tracetui once and forks one grandchild per command (see the module docstring)."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, cwd=str(ROOT))

    def run(self, argv: list[str], timeout: float) -> dict[str, Any]:
        """Run ``tracetui ARGV``; ``{"code", "hung", "secs", "peak_kb", "stderr"}`` (the last 4,000 characters)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "timeout": timeout}).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"fuzz worker died (exit {self.proc.wait()}) on {argv}")
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()


def problem(res: dict[str, Any], size: int) -> str | None:
    """What is wrong with one command's result, or None: an internal error or traceback, a hang, an exit
    code other than 0/1/2, a peak RSS over 20x the file + 300 MB."""
    if res["hung"]:
        return f"hang (killed after {res['secs']:.1f} s)"
    if "internal error" in res["stderr"] or "Traceback" in res["stderr"] or "UNCAUGHT" in res["stderr"]:
        return "internal error: " + res["stderr"][-1500:]
    if res["code"] not in (0, 1, 2):
        return f"exit code {res['code']}: " + res["stderr"][-800:]
    limit_kb = (20 * size + 300 * 2**20) // 1024
    if res["peak_kb"] > limit_kb:
        return f"peak RSS {res['peak_kb'] // 1024} MB over the bound {limit_kb // 1024} MB"
    return None


def run_campaign(n: int, seed: int, work: Path, *, timeout: float = 30.0, files: list[Path] | None = None,
                 budget_s: float | None = None, log: Any = None) -> dict[str, Any]:
    """``n`` mutations through every command of ``commands``; counts and the problems found.

    Stops early (counted) once ``budget_s`` seconds have passed. Returns ``{"mutations", "runs", "problems":
    [(case, argv, what)], "codes": {code: count}, "max_secs", "max_peak_mb"}``.
    """
    files = files if files is not None else seed_files()
    worker = Worker()
    start = time.monotonic()
    stats: dict[str, Any] = {"mutations": 0, "runs": 0, "problems": [], "codes": {}, "max_secs": 0.0,
                             "max_peak_mb": 0.0, "kinds": {}}
    try:
        for case, original, kind, data in cases(files, n, seed):
            if budget_s is not None and time.monotonic() - start > budget_s:
                break
            suffix = original.suffix
            mutated = work / f"m{stats['mutations']}{suffix}"
            mutated.write_bytes(data)
            stats["mutations"] += 1
            stats["kinds"][kind] = stats["kinds"].get(kind, 0) + 1
            for argv in commands(original, mutated, work):
                res = worker.run(argv, timeout)
                stats["runs"] += 1
                stats["codes"][res["code"]] = stats["codes"].get(res["code"], 0) + 1
                stats["max_secs"] = max(stats["max_secs"], res["secs"])
                stats["max_peak_mb"] = max(stats["max_peak_mb"], res["peak_kb"] / 1024)
                what = problem(res, len(data))
                if what is not None:
                    kept = work / f"problem-{case}"
                    kept.write_bytes(data)
                    stats["problems"].append((case, argv, what))
                    if log is not None:
                        print(f"PROBLEM {case} {argv[0]}: {what[:600]}", file=log, flush=True)
            for leftover in work.glob("m*"):
                leftover.unlink()
    finally:
        worker.close()
    return stats


def swap_sweep(per_file: int, seed: int, work: Path, files: list[Path] | None = None) -> dict[str, Any]:
    """In process, fast: ``per_file`` seeded type swaps of each JSON seed file (one value replaced by an odd
    one: ``ODDS``, 5,000-digit numbers as strings, a 100 KB string) through ``read_runs``, ``show``'s summary
    (text and JSON), ``diff_traces`` against the unchanged file and the report (text and JSON). Returns
    ``{"mutations", "errors": {(exception, file, line): (seed file, JSON path, odd value, message)}}``: any
    exception but a ``TracetuiError`` is a bug."""
    import copy
    import traceback

    from tracetui.cli.render import dumps_json, render_show, render_text
    from tracetui.core.diff import diff_traces
    from tracetui.core.diff.report import diff_report
    from tracetui.core.errors import TracetuiError
    from tracetui.core.readers import read_runs, read_trace
    from tracetui.core.readers.summary import summarize

    odds = [*ODDS, "9" * 5000, "ATIF-v1." + "7" * 5000, "attr." + "3" * 5000, "0x" + "f" * 5000]
    rng = random.Random(seed)
    errors: dict[tuple[str, str, int], tuple[str, Any, str, str]] = {}
    n = 0
    for f in files if files is not None else seed_files():
        units = _json_units(f.read_bytes()) if f.suffix not in (".eval", ".yaml", ".yml") else None
        if units is None:
            continue
        kind, values = units
        try:
            orig = read_trace(str(f))
        except TracetuiError:
            continue
        every = [(i, p) for i, v in enumerate(values) for p in list(_paths(v))[1:]]
        for i, p in rng.sample(every, min(per_file, len(every))):
            odd = rng.choice(odds)
            vs = list(values)
            vs[i] = _set(copy.deepcopy(values[i]), p, copy.deepcopy(odd))
            m = work / ("swap" + f.suffix)
            m.write_bytes(_pack(kind, vs))
            n += 1
            try:
                tf = read_runs(str(m))
                render_show(summarize(tf))
                dumps_json(summarize(tf))
                report = diff_report(diff_traces(orig, read_trace(str(m))))
                dumps_json(report)
                render_text(report)
            except TracetuiError:
                pass
            except Exception as exc:  # noqa: BLE001 - every other exception is what the sweep looks for
                last = traceback.extract_tb(exc.__traceback__)[-1]
                key = (type(exc).__name__, last.filename.rsplit("tracetui/", 1)[-1], last.lineno or 0)
                errors.setdefault(key, (f.name, p, repr(odd)[:40], str(exc)[:200]))
    return {"mutations": n, "errors": errors}
