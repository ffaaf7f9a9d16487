"""Build a trace store for ``tracetui nightly``: the scheduling agent recorded on varied inputs.

    python sample_runs/nightly/make_store.py OUT_DIR [--runs N] [--damaged] [--seed S]

Each run is ``sample_runs/scheduling/agent.py:run`` recorded (``tracetui.core.harness.run.record``)
on one of a few dozen customer messages and clocks, with the booking world reset before each run,
a fixed span clock and run ids, and the sample key ``sample_runs/nightly/redaction.key``: the same
arguments give the same files. Layout, as a trace exporter partitions a store::

    OUT_DIR/agent=scheduling-agent/status=ok/2026-11-03/run-00001.jsonl
    OUT_DIR/agent=scheduling-agent/status=failed/2026-11-03/run-00007.jsonl   # the agent raised

About one run in twelve has no customer in its input: the agent raises (a failed run).
``--damaged`` adds four files that cannot be replayed: a run cut mid-write (no root span, torn
last line), text that is no trace, an empty file, and a JSON document no reader knows.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "..", "scheduling", "agent.py")
KEY_FILE = os.path.join(HERE, "redaction.key")

_MESSAGES = [
    "Hi, can you move my fibre install to {day}?",
    "Please reschedule my install to {day}, mornings only please.",
    "Can you move my fibre install to {day}? If {day} is impossible {next} is fine too, mornings only please.",
    "I need to change the install date to {day}.",
    "Could you cancel my appointment?",
    "Hello, who am I talking to?",
    "Move my install please.",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
_CLOCKS = ["2026-11-02T09:05:00", "2026-11-03T10:14:02", "2026-11-03T16:40:00", "2026-11-04T08:30:00"]
_CUSTOMER = {"id": "C-48213", "email": "jeanne.martin@example.com", "phone": "+33 6 12 34 56 78"}


def _agent() -> Any:
    spec = importlib.util.spec_from_file_location("_tracetui_sample_scheduling", AGENT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def build_store(out: str, runs: int = 36, *, damaged: bool = False, seed: int = 7) -> list[str]:
    """Record ``runs`` runs under ``out`` (created); returns the files written, damaged ones last."""
    from tracetui.core.harness.agent import load_agent
    from tracetui.core.harness.redact import Redactor
    from tracetui.core.harness.redact_tokens import load_key
    from tracetui.core.harness.run import record

    rng = random.Random(seed)
    spec = load_agent(f"{AGENT}:run")
    module = sys.modules[spec.run.__module__]
    key, _ = load_key(KEY_FILE)
    written: list[str] = []
    for i in range(1, runs + 1):
        day = rng.choice(_DAYS)
        nxt = _DAYS[(_DAYS.index(day) + 1) % len(_DAYS)]
        message = rng.choice(_MESSAGES).format(day=day, next=nxt)
        clock = rng.choice(_CLOCKS)
        failed = i % 12 == 7
        value: dict[str, Any] = {"channel": rng.choice(["web_chat", "sms", "app"]), "message": message}
        if failed:
            value["message"] = f"Please move my fibre install to {day}."  # no customer: the agent raises
        else:
            value["customer"] = dict(_CUSTOMER)
        status = "failed" if failed else "ok"
        folder = os.path.join(out, "agent=scheduling-agent", f"status={status}", clock[:10])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"run-{i:05d}.jsonl")
        module._LIVE.world = module.initial_world()  # every run starts from the same booking state
        ticks = iter(range(10**6))
        base = 1_793_000_000_000_000_000 + i * 60_000_000_000
        record(spec, value, path, redactor=Redactor(key, sensitive_fields=spec.sensitive_fields),
               clock=clock, timezone="Europe/Paris", seed=1000 + i, run_id=f"run-{i:05d}", overwrite=True,
               timer=lambda: base + next(ticks) * 1_000_000)
        written.append(path)
    if damaged:
        bad = os.path.join(out, "agent=scheduling-agent", "status=ok", "damaged")
        os.makedirs(bad, exist_ok=True)
        with open(written[0], "rb") as fh:
            lines = fh.read().splitlines(keepends=True)
        cut = lines[: max(2, len(lines) // 2)]
        cut.append(lines[len(cut)][: len(lines[len(cut)]) // 2])  # torn last line, no root span
        files = {"cut-mid-write.jsonl": b"".join(cut), "not-a-trace.jsonl": b"hello, this is no trace\n",
                 "empty.jsonl": b"", "unknown-shape.json": b'{"rows": [1, 2, 3]}\n'}
        for name, data in files.items():
            p = os.path.join(bad, name)
            with open(p, "wb") as fh:
                fh.write(data)
            written.append(p)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=36)
    ap.add_argument("--damaged", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    files = build_store(args.out, args.runs, damaged=args.damaged, seed=args.seed)
    print(f"{len(files)} files under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
