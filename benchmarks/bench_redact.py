"""Benchmark: redaction time on 1 MB inputs built to be worst cases, and how it grows with size.

Each case is a generator of text of about N bytes: repeated PEM private-key blocks (closed, and
truncated: a ``BEGIN`` with no ``END``, which made the old lazy pattern rescan the rest of the text
for every block: quadratic), repeated ``token:`` fields (one value, distinct values, JSON-quoted,
JSON inside a JSON string left unterminated), secret words inside longer words on one line
(``mytoken: "…``), runs of ``sk-`` prefixes, a remembered secret repeated thousands of times in one
string, and plain prose with nothing to redact. Each is redacted by a fresh ``Redactor`` as one
string (``text``) and as a list of 1 KB strings inside a dict (``value``).

Printed per case: the median process CPU seconds (``time.process_time``: less sensitive to other
jobs on a shared machine than wall time; ``--wall`` for wall time) at 1/4, 1/2 and 1 times ``--size``
and the growth factor from 1/4 to 1 (4 means linear, 16 quadratic).

Usage::

    python benchmarks/bench_redact.py                  # 1 MB, 3 repeats
    python benchmarks/bench_redact.py --size 300000 --repeat 5
    python benchmarks/bench_redact.py --only pem
    python benchmarks/bench_redact.py --size 400000 --check   # exit 1 if any case grows faster than linear

``--check`` is the linear-time rule of issue 21 as a check, kept out of the test suite (no timing asserts
there, issue 25): it exits 1 when a case's growth from 1/4 to 1 times ``--size`` is over ``--max-growth``
(default 8: linear is 4, quadratic 16), naming the case.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

from tracetui.core.harness.redact import Redactor

KEY = b"bench-redaction-key-0123456789abcdef"
PEM_BODY = "MIIEowIBAAKCAQEA" + "q" * 48 + "\n"


def _fill(unit: Callable[[int], str], size: int) -> str:
    parts: list[str] = []
    n = 0
    i = 0
    while n < size:
        u = unit(i)
        parts.append(u)
        n += len(u)
        i += 1
    return "".join(parts)


CASES: dict[str, Callable[[int], str]] = {
    "pem_closed": lambda n: _fill(lambda i: "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY
                                  + "-----END RSA PRIVATE KEY-----\n", n),
    "pem_truncated": lambda n: _fill(lambda i: "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "note ", n),
    "pem_begin_only": lambda n: _fill(lambda i: "-----BEGIN PRIVATE KEY-----", n),
    "token_same": lambda n: _fill(lambda i: "token: abcdef123\n", n),
    "token_distinct": lambda n: _fill(lambda i: f"token: v{i:08d}x\n", n),
    "token_json": lambda n: _fill(lambda i: f'"token": "v{i:08d}x", ', n),
    "token_json_in_json_open": lambda n: _fill(lambda i: r'\"token\": \"v' + f"{i:08d} ", n),
    "word_token_one_line": lambda n: _fill(lambda i: 'mytoken: "abc ', n),
    "sk_run": lambda n: _fill(lambda i: "sk-", n),
    "learned_repeated": lambda n: "password=hunter2hunter2 " + _fill(lambda i: "hunter2hunter2 ", n),
    "prose": lambda n: _fill(lambda i: f"The order {i} shipped on time and the customer was happy. ", n),
}


def _time(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.process_time) -> float:
    runs = []
    for _ in range(repeat):
        t = clock()
        fn()
        runs.append(clock() - t)
    return statistics.median(runs)


def main() -> None:
    """Print the table; with ``--check``, exit 1 naming the cases that grow faster than linear."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1_000_000, help="bytes of the largest input (default 1 MB)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="cases whose name contains this")
    ap.add_argument("--wall", action="store_true", help="wall-clock time instead of process CPU time")
    ap.add_argument("--check", action="store_true", help="exit 1 when a case grows faster than --max-growth")
    ap.add_argument("--max-growth", type=float, default=8.0, help="growth x4 allowed by --check (default 8)")
    args = ap.parse_args()
    over: list[str] = []
    clock = time.perf_counter if args.wall else time.process_time
    print(f"{'case':26} {'how':6} " + " ".join(f"{f'{args.size * k // 4 // 1000} KB':>9}" for k in (1, 2, 4))
          + "   growth x4")
    for name, make in CASES.items():
        if args.only not in name:
            continue
        for how in ("text", "value"):
            times = []
            for k in (1, 2, 4):
                s = make(args.size * k // 4)
                if how == "text":
                    times.append(_time(lambda: Redactor(KEY).text(s), args.repeat, clock))
                else:
                    v = {"output": [s[i:i + 1024] for i in range(0, len(s), 1024)]}
                    times.append(_time(lambda: Redactor(KEY).value(v), args.repeat, clock))
            growth = times[2] / times[0] if times[0] else float("nan")
            print(f"{name:26} {how:6} " + " ".join(f"{t:8.3f}s" for t in times) + f"   {growth:6.1f}", flush=True)
            if growth > args.max_growth and times[2] > 0.01:  # under 10 ms the clock's grain decides
                over.append(f"{name} ({how}): x{growth:.1f}")
    if args.check and over:
        print(f"faster than linear (growth over {args.max_growth:g} for 4x the input): {', '.join(over)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
