"""Build a batch folder of 25 original/replay pairs with known groups, from the bundled samples.

Used by tests/core/test_batch.py and tests/cli/test_batch_cli.py (loaded by path: tests/data is
not a package). Every pair is a real trace derived from ``sample_runs/*/original.jsonl|replay.jsonl``
by one edit of its JSON, so its first divergence is known:

==========================  =====  ====================================================================
group                       cases  how
==========================  =====  ====================================================================
args_mismatch tool          9      subscription_pause original; replay = the same with the second
get_billing_account                ``get_billing_account`` call's ``account_id`` changed (4 CASE/ folders,
[tool.arguments.account_id]        2 flat NAME.original/NAME.replay, 3 replays replay-N of one original)
input_mismatch llm          6      the scheduling sample pair (prompt v7 -> v8), copied
scripted-scheduler
missing_call tool           2      order_lookup original; replay = it without the search_orders span
search_orders
decision_mismatch llm       1      the order_lookup sample pair
gpt-4o
output_mismatch tool        1      subscription_pause; replay's second get_billing_account output
get_billing_account                ``status`` 404 -> 500
no divergence               5      an original against itself (3 samples, one as OTLP), and one against
                                   a copy with new span ids and shifted clocks (volatile fields only)
unreadable                  1      ``broken/replay.jsonl`` is not a trace
==========================  =====  ====================================================================

Plus two unpaired files (``lonely/original.jsonl``, ``stray.replay.jsonl``), and files every scan
must ignore (``NOTES.md``, ``fixture.jsonl``, a ``.hidden/`` folder).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

SAMPLES = Path(__file__).resolve().parents[3] / "sample_runs"

EXPECTED_GROUPS: list[tuple[int, str, str, str, list[str]]] = [
    (9, "args_mismatch", "tool", "get_billing_account", ["tool.arguments.account_id"]),
    (6, "input_mismatch", "llm", "scripted-scheduler", ["llm.messages[].content", "llm.prompt_version"]),
    (2, "missing_call", "tool", "search_orders", None),  # type: ignore[list-item]  # one-sided: every field of the span
    (1, "decision_mismatch", "llm", "gpt-4o", ["llm.output.tool_calls[].arguments.customer_id"]),
    (1, "output_mismatch", "tool", "get_billing_account", ["tool.output.status"]),
]
"""(count, type, kind, name, fields or None when not asserted), in the order groups must come."""

ARGS_CASES = ["args-01", "args-02", "args-03", "args-04", "args-multi/replay-1", "args-multi/replay-2",
              "args-multi/replay-3", "flat/args-05", "flat/args-06"]
PROMPT_CASES = [f"prompt-{i}" for i in range(1, 7)]
NO_DIVERGENCE = ["same-order", "same-order-otlp", "same-schedule", "same-subscription", "restamped"]
PAIRS = 25
UNPAIRED = ["lonely/original.jsonl", "stray.replay.jsonl"]


def _lines(sample: str, side: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (SAMPLES / sample / f"{side}.jsonl").read_bytes().splitlines() if line.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def _edited(records: list[dict[str, Any]], span_id: str, edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    out = orjson.loads(orjson.dumps(records))  # deep copy
    hit = [r for r in out if r.get("span_id") == span_id]
    assert hit, f"span {span_id} not in the sample"
    edit(hit[0])
    return out


SECOND_BILLING_CALL = "94542371d4ca9718"  # subscription_pause: get_billing_account("AC10442")
SEARCH_ORDERS = "c8a63104aac099c1"  # order_lookup: search_orders


def build(root: Path) -> Path:
    """Write the batch folder under ``root`` (created) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    sub = _lines("subscription_pause", "original")

    def args_replay(i: int) -> list[dict[str, Any]]:
        return _edited(sub, SECOND_BILLING_CALL, lambda s: s["tool"]["arguments"].__setitem__("account_id", f"AC-X{i}"))

    for i in range(1, 5):
        _write(root / f"args-0{i}" / "original.jsonl", sub)
        _write(root / f"args-0{i}" / "replay.jsonl", args_replay(i))
    _write(root / "args-multi" / "original.jsonl", sub)
    for i in range(1, 4):
        _write(root / "args-multi" / f"replay-{i}.jsonl", args_replay(10 + i))
    for i in (5, 6):
        _write(root / "flat" / f"args-0{i}.original.jsonl", sub)
        _write(root / "flat" / f"args-0{i}.replay.jsonl", args_replay(i))
    for i in range(1, 7):
        (root / f"prompt-{i}").mkdir()
        for side in ("original", "replay"):
            shutil.copy(SAMPLES / "scheduling" / f"{side}.jsonl", root / f"prompt-{i}" / f"{side}.jsonl")
    (root / "prompt-1" / "NOTES.md").write_text("ignored by the scan\n")
    shutil.copy(SAMPLES / "scheduling" / "fixture.jsonl", root / "prompt-1" / "fixture.jsonl")
    order = _lines("order_lookup", "original")
    for i in (1, 2):
        _write(root / f"dropped-{i}" / "original.jsonl", order)
        _write(root / f"dropped-{i}" / "replay.jsonl", [r for r in order if r.get("span_id") != SEARCH_ORDERS])
    (root / "order").mkdir()
    for side in ("original", "replay"):
        shutil.copy(SAMPLES / "order_lookup" / f"{side}.jsonl", root / "order" / f"{side}.jsonl")
    _write(root / "stale-output" / "original.jsonl", sub)
    _write(root / "stale-output" / "replay.jsonl",
           _edited(sub, SECOND_BILLING_CALL, lambda s: s["tool"]["output"].__setitem__("status", 500)))
    for name, sample in (("same-order", "order_lookup"), ("same-schedule", "scheduling"), ("same-subscription", "subscription_pause")):
        _write(root / name / "original.jsonl", _lines(sample, "original"))
        _write(root / name / "replay.jsonl", _lines(sample, "original"))
    (root / "same-order-otlp").mkdir()
    shutil.copy(SAMPLES / "order_lookup" / "original.otlp.json", root / "same-order-otlp" / "original.otlp.json")
    shutil.copy(SAMPLES / "order_lookup" / "original.otlp.json", root / "same-order-otlp" / "replay.otlp.json")
    restamped = orjson.loads(orjson.dumps(sub))
    for r in restamped[1:]:
        r["span_id"] = "r-" + r["span_id"]
        if r.get("parent_id"):
            r["parent_id"] = "r-" + r["parent_id"]
        for k in ("start_ns", "end_ns"):
            if r.get(k) is not None:
                r[k] += 3_600 * 10**9
    _write(root / "restamped" / "original.jsonl", sub)
    _write(root / "restamped" / "replay.jsonl", restamped)
    _write(root / "broken" / "original.jsonl", sub)
    (root / "broken" / "replay.jsonl").write_text("this is not a trace\n")
    _write(root / "lonely" / "original.jsonl", sub)
    _write(root / "stray.replay.jsonl", sub)
    _write(root / ".hidden" / "original.jsonl", sub)
    _write(root / ".hidden" / "replay.jsonl", args_replay(99))
    return root
