"""``tracetui replay`` and ``tracetui diff`` name the same first divergence (issue 20, "the diff
agrees with the replay").

For each pair the harness tests make (the bank, coin and held-out agents of tests/data/harness/,
replayed with a changed input or a fixed agent), the replay's first divergence
(``RunResult.outcome.divergences[0]``) and the diff's (``diff_traces(...).first``) point at the
same replay span. The one legitimate difference: when the replay was run with another input than
the recording's, the diff compares the root agent spans too, and the root's ``input_mismatch``
comes first in run order (the replay does not count its own input as a divergence); the replay's
first divergence is then the diff's first below the root. And with the model in the loop (the coin
agent), a model that now decides otherwise is the diff's first divergence while the replay, which
served every call it made, has none (its verdict: does not reproduce).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builders import BANK_NEW_READ_FIRST, Ticker
from tracetui.core.diff import DivergenceType, diff_traces
from tracetui.core.harness import load_agent, record, replay
from tracetui.core.harness.redact import Redactor
from tracetui.core.readers import read_trace

DATA = Path(__file__).resolve().parents[2] / "data" / "harness"
KEY = b"first-divergence-test-key-012345"
BANK = {"email": "ada.lovelace@example.com", "amount": 120}



def reset(spec: Any, model_calls: int = 0) -> None:
    """Fresh live state; the coin agent's scripted model takes the bad path on call 0 (recorded),
    the good one on call 1 (the replay, model in the loop)."""
    g = spec.run.__globals__
    if "reset" in g:
        g["reset"]()
    if "CALLS" in g and isinstance(g["CALLS"], dict) and "model" in g["CALLS"]:
        g["CALLS"]["model"] = model_calls


HELDOUT_INPUT = load_agent(f"{DATA / 'heldout_agent.py'}:run").run.__globals__["INPUT"]

NEW_READ_FIRST = BANK_NEW_READ_FIRST

# (id, agent file, recorded function, recorded input, replayed function, replayed input, replay
# options, the replay's first divergence type)
PAIRS = [
    ("bank-write-changed", "bank_agent.py", "run", BANK, "run", {**BANK, "amount": 121}, {}, "write_mismatch"),
    ("bank-other-account", "bank_agent.py", "run", BANK, "run", {**BANK, "account": "A9"}, {}, "unrecorded_call"),
    ("bank-extra-read", "bank_agent.py", "run", BANK, "run", {**BANK, "extra_read": True}, {}, "recording_exhausted"),
    ("bank-double-transfer", "bank_agent.py", "run", BANK, "run", {**BANK, "double_transfer": True}, {},
     "recording_exhausted"),
    ("bank-other-message", "bank_agent.py", "run", BANK, "run", {**BANK, "reply": "hi"}, {}, "input_mismatch"),
    ("bank-fix-reads-first", "bank_agent.py", "run", BANK, "fixed", BANK, {}, "unrecorded_call"),
    ("coin-model-in-the-loop", "coin_agent.py", "run", {}, "run", {}, {"llm": "live"}, None),
    ("heldout-extra-read", "heldout_agent.py", "run", HELDOUT_INPUT, "run_extra_read", HELDOUT_INPUT, {},
     "recording_exhausted"),
    ("heldout-other-order", "heldout_agent.py", "run", HELDOUT_INPUT, "run_other_order", HELDOUT_INPUT, {},
     "unrecorded_call"),
    ("heldout-double-write", "heldout_agent.py", "run", HELDOUT_INPUT, "run_double", HELDOUT_INPUT, {},
     "recording_exhausted"),
]


@pytest.mark.parametrize(("agent", "fn", "inp", "fn2", "inp2", "options", "expected"),
                         [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_replay_and_diff_name_the_same_first_divergence(
        tmp_path: Path, agent: str, fn: str, inp: Any, fn2: str, inp2: Any, options: dict[str, Any],
        expected: str | None) -> None:
    spec = load_agent(f"{DATA / agent}:{fn}")
    reset(spec)
    red = Redactor(KEY, sensitive_fields=spec.sensitive_fields)
    original = tmp_path / "orig.jsonl"
    record(spec, inp, str(original), redactor=red, clock="2026-03-02T09:30:00", timezone="UTC", seed=7,
           timer=Ticker())
    reset(spec, model_calls=1)
    if fn2 == "fixed":
        (tmp_path / "fixed.py").write_text(NEW_READ_FIRST.format(bank=str(DATA / agent)))
        spec2 = load_agent(f"{tmp_path / 'fixed.py'}:run")
    else:
        spec2 = load_agent(f"{DATA / agent}:{fn2}")
    (run,) = replay(read_trace(original), spec2, str(tmp_path / "replay.jsonl"), redactor=red, timer=Ticker(),
                    input=inp2, accept_schema_change=True, **options).runs
    d = diff_traces(read_trace(original), read_trace(tmp_path / "replay.jsonl"))
    if expected is None:
        # The other legitimate difference: with the model in the loop the model now decides
        # otherwise; the replay served every call it made from the recording, so it has no
        # divergence (its verdict is "does not reproduce"), while the diff names the model's
        # changed decision first.
        assert run.outcome.divergences == [] and run.reproduces is False
        assert d.first is not None and d.first.type is DivergenceType.DECISION_MISMATCH
        assert d.first.replay is not None and d.first.replay.kind.value == "llm"
        return
    assert run.outcome.divergences, "every pair here diverges"
    first = run.outcome.divergences[0]
    if expected is not None:
        assert first["type"] == expected
    below = d.divergences
    if inp2 != inp:
        # The legitimate difference: the diff's first is the root agent span's input mismatch.
        assert d.first is not None and d.first.type is DivergenceType.INPUT_MISMATCH
        assert d.first.replay is not None and d.first.replay.parent_id is None
        below = [x for x in d.divergences if x.replay is None or x.replay.parent_id is not None]
    else:
        assert below and below[0] is d.first
    assert below[0].replay is not None, f"the diff's first is {below[0].type.value} on the original side only"
    assert below[0].replay.span_id == first["span_id"], (below[0].type.value, first)
    if first["type"] == "unrecorded_call":  # and by the same name, even where alignment paired it with a recorded call
        assert below[0].type is DivergenceType.UNRECORDED_CALL, below[0].type
