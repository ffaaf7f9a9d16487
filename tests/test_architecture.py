"""The core stays headless: importing the library and the CLI never loads Textual, Rich or watchfiles."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UI_MODULES = ("textual", "rich", "watchfiles")


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint('\\n'.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import tracetui, tracetui.core",
        "import tracetui.core.readers, tracetui.core.diff, tracetui.core.report",
        "import tracetui.cli.main, tracetui.cli.commands, tracetui.cli.render",
        "from tracetui.cli.main import main; main(['--help'])",
    ],
)
def test_headless_imports_load_no_ui_library(code: str) -> None:
    """Core and CLI imports (and `tracetui --help`) leave textual, rich and watchfiles unloaded."""
    loaded = _loaded_after(code)
    assert not loaded & set(UI_MODULES), f"{code!r} loaded {sorted(loaded & set(UI_MODULES))}"


def test_diff_command_loads_no_ui_library(tmp_path: Path) -> None:
    """Running `tracetui diff` end to end never imports the TUI stack."""
    sample = ROOT / "sample_runs" / "order_lookup"
    if not sample.exists():
        pytest.skip("sample_runs/order_lookup not present")
    code = (
        "from tracetui.cli.main import main\n"
        f"main(['diff', {str(sample / 'original.jsonl')!r}, {str(sample / 'replay.jsonl')!r}, '--format', 'json'])"
    )
    loaded = _loaded_after(code)
    assert not loaded & set(UI_MODULES)


def test_import_linter_contracts_hold() -> None:
    """The import-linter contracts in pyproject.toml (core headless; cli -> tui -> core) are kept."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter not installed")
    out = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
