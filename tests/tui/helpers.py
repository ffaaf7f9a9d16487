"""Helpers of the TUI tests: where the trace pairs are, waiting for a load, reading what a widget drew."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot

from tests.builders import write_pair  # noqa: F401 - the TUI tests import it from here

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = ROOT / "sample_runs"
DATA = Path(__file__).resolve().parent / "data"

SAMPLES = ("scheduling", "subscription_pause", "order_lookup")
"""Sample pairs, each with ``original.jsonl`` and ``replay.jsonl`` (see sample_runs/README.md)."""


def sample_pair(name: str) -> tuple[str, str]:
    """``(original, replay)`` paths of a sample run; skips the test when the sample is absent."""
    folder = SAMPLE_RUNS / name
    if not (folder / "original.jsonl").exists():
        pytest.skip(f"sample_runs/{name} not present")
    return str(folder / "original.jsonl"), str(folder / "replay.jsonl")


async def wait_loaded(pilot: Pilot[object]) -> None:
    """Wait for the load worker, then for the messages it posted to be handled."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def rendered(renderable: object, width: int = 200) -> str:
    """Plain text of a Rich renderable (what a widget draws, styles dropped)."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def widget_text(widget: object, width: int = 200) -> str:
    """Plain text of a ``Static``-like widget's current content."""
    return rendered(widget.content, width)  # type: ignore[attr-defined]
