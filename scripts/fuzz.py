"""Fuzz the CLI with thousands of mutations of real trace files (issue 21); the suite runs a bounded share.

    python scripts/fuzz.py --n 3000 --seed 1 [--timeout 30] [--budget-s S] [--work DIR]

Each mutation (tests/fuzzing.py: truncation, byte flips, type swaps, deep nesting, huge numbers and strings,
bombs) of a corpus file (../shared/corpus) or a sample run goes through `show` (text, JSON), `diff` both ways
(text, JSON) and `convert`, each in a forked child with a time limit. Prints the counts; a problem (internal
error, hang, exit code other than 0/1/2, peak RSS over 20x the file + 300 MB) is printed and its input kept
in the work folder as problem-CASE. Exit 1 when there was a problem.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzzing import run_campaign, seed_files, swap_sweep  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000, help="mutations (each runs 5 commands)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per command before it counts as a hang")
    ap.add_argument("--swaps", type=int, default=0, help="also: this many in-process type swaps per JSON file "
                    "(every reader, fast; tests/fuzzing.swap_sweep)")
    ap.add_argument("--budget-s", type=float, default=None, help="stop after this many seconds (counts what ran)")
    ap.add_argument("--work", type=Path, default=None, help="folder for the mutated files (default: a temp folder)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="tracetui-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    files = seed_files()
    bugs = 0
    if args.swaps:
        t0 = time.monotonic()
        sweep = swap_sweep(args.swaps, args.seed, work, files)
        bugs = len(sweep["errors"])
        for (exc, where, line), (name, path, odd, msg) in sweep["errors"].items():
            print(f"PROBLEM swap {exc} at {where}:{line}: {name} {list(path)} <- {odd}: {msg}")
        print(f"type swaps: {sweep['mutations']} in {time.monotonic() - t0:.0f} s; distinct crash sites {bugs}")
    if not args.n:
        return 1 if bugs else 0
    t0 = time.monotonic()
    stats = run_campaign(args.n, args.seed, work, timeout=args.timeout, files=files, log=sys.stdout,
                         budget_s=args.budget_s)
    took = time.monotonic() - t0
    print(f"files {len(files)}, mutations {stats['mutations']} {stats['kinds']}, command runs {stats['runs']} "
          f"in {took:.0f} s; exit codes {stats['codes']}; slowest {stats['max_secs']:.1f} s; "
          f"highest peak RSS {stats['max_peak_mb']:.0f} MB; problems {len(stats['problems'])} (inputs kept in {work})")
    return 1 if stats["problems"] or bugs else 0


if __name__ == "__main__":
    sys.exit(main())
