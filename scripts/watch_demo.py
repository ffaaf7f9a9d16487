"""Write a replay file span by span, the way a run in progress does, to watch it with ``--watch``.

    python scripts/watch_demo.py sample_runs/scheduling/replay.jsonl /tmp/live.jsonl --pause 1.0
    tracetui sample_runs/scheduling/original.jsonl /tmp/live.jsonl --watch     # in another terminal

Like ``core/harness/writer.py``: the header first with spare room, then each span when it *ends*
(children before their parent: the roots last), some lines torn (half written, the rest after a
pause), the header completed in place, and at the end the file compacted and replaced atomically
(a new inode). ``--plain`` writes the lines in file order, without spare room nor compaction.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import orjson


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="a tracetui/1 trace to copy")
    p.add_argument("target", help="the file to write (replaced if it exists)")
    p.add_argument("--pause", type=float, default=1.0, help="seconds between spans (default 1.0)")
    p.add_argument("--tear-every", type=int, default=3, help="tear every Nth span line (0: never; default 3)")
    p.add_argument("--plain", action="store_true", help="file order, no header room, no compaction")
    args = p.parse_args(argv)
    with open(args.source, "rb") as fh:
        lines = [ln for ln in fh.read().splitlines() if ln.strip()]
    header, spans = lines[0], lines[1:]
    if not args.plain:  # when each span ended: a parent after its children (the writer's order)
        objs = [orjson.loads(s) for s in spans]
        spans = [s for _, s in sorted(zip(objs, spans, strict=True), key=lambda t: (t[0].get("end_ns") or 0, -(t[0].get("seq") or 0)))]
    if os.path.exists(args.target):
        os.unlink(args.target)
    room = b"" if args.plain else b" " * 256
    with open(args.target, "wb") as out:
        out.write(header + room + b"\n")
        out.flush()
        print(f"header written to {args.target}", file=sys.stderr)
        for n, line in enumerate(spans, 1):
            time.sleep(args.pause)
            if args.tear_every and n % args.tear_every == 0:
                half = len(line) // 2
                out.write(line[:half])
                out.flush()
                print(f"span {n}/{len(spans)}: torn write ({half} of {len(line) + 1} bytes)", file=sys.stderr)
                time.sleep(args.pause)
                out.write(line[half:] + b"\n")
            else:
                out.write(line + b"\n")
            out.flush()
            print(f"span {n}/{len(spans)} written", file=sys.stderr)
        if not args.plain:
            time.sleep(args.pause)
            done = orjson.loads(header)
            done["watch_demo"] = {"completed": True}
            new = orjson.dumps(done)
            out.seek(0)
            out.write(new + b" " * (len(header) + len(room) - len(new)))  # in place, like complete_header
            out.flush()
            print("header completed in place", file=sys.stderr)
    if not args.plain:
        time.sleep(args.pause)
        with open(args.target, "rb") as fh:
            data = fh.read()
        first, rest = data.split(b"\n", 1)
        fd, tmp = tempfile.mkstemp(prefix=".tracetui-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(args.target)))
        with os.fdopen(fd, "wb") as fh:
            fh.write(first.rstrip(b" ") + b"\n" + rest)
        os.replace(tmp, args.target)
        print("compacted: file replaced atomically", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
