"""`tracetui diff` says up front when the two runs are not replays of each other (issue 18, item 5)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from tracetui.cli.main import main

RUNS = Path(__file__).resolve().parents[2] / "sample_runs"


def _diff(a: Path, b: Path, fmt: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(a), str(b), "--format", fmt], stdout=out, stderr=err)
    return code, out.getvalue()


def test_two_unrelated_runs_are_said_so_first_and_the_exit_code_is_unchanged() -> None:
    code, text = _diff(RUNS / "scheduling" / "original.jsonl", RUNS / "order_lookup" / "original.jsonl", "text")
    assert code == 1
    assert text.splitlines()[2] == ("warning: not a replay of the original run: its run input differs; "
                                    "the divergences below compare two different runs")
    code, out = _diff(RUNS / "scheduling" / "original.jsonl", RUNS / "order_lookup" / "original.jsonl", "json")
    assert code == 1 and orjson.loads(out)["not_a_replay"] == "its run input differs"


def test_a_real_replay_is_not_flagged() -> None:
    code, out = _diff(RUNS / "scheduling" / "original.jsonl", RUNS / "scheduling" / "replay.jsonl", "json")
    assert orjson.loads(out)["not_a_replay"] is None
    _code, text = _diff(RUNS / "scheduling" / "original.jsonl", RUNS / "scheduling" / "replay.jsonl", "text")
    assert "not a replay" not in text
