"""Golden cases built by hand for the golden-set tests: the scheduling sample's original as the
fixture, a contract, and case.yaml (docs/golden.md)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_runs" / "scheduling"
AGENT = str(SAMPLE / "agent.py")

FRIDAY_CONTRACT = textwrap.dedent("""\
    schema: tracetui-contract/1
    must_call:
      - {id: must-check-friday, tool: list_open_slots, args: {date: "2026-11-06"}}
    final_state:
      - {id: booked-friday, path: appointments.APT-77120.date, equals: "2026-11-06"}
    """)
"""The smallest contract: check Friday, end with the appointment on Friday."""


def make_case(root: Path, name: str = "friday", *, mode: str = "fixture", seed: bool = True,
              contract: str = FRIDAY_CONTRACT, agent: str | None = None, case_name: str | None = None) -> Path:
    """Write ``root/name/{trace.jsonl, contract.yaml, case.yaml}`` (and ``seed.json`` with ``seed``);
    returns the case folder."""
    folder = root / name
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE / "original.jsonl", folder / "trace.jsonl")
    lines = ["schema: tracetui-case/1", f"name: {case_name or name}", f"mode: {mode}"]
    if seed:
        shutil.copy(SAMPLE / "fixture_seed.json", folder / "seed.json")
        lines.append("seed_file: seed.json")
    if agent:
        lines.append(f"agent: {agent}")
    (folder / "case.yaml").write_text("\n".join(lines) + "\n")
    (folder / "contract.yaml").write_text(contract)
    return folder
