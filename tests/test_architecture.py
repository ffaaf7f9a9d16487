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
        "import tracetui.core.readers, tracetui.core.diff, tracetui.core.diff.report",
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
    """The import-linter contracts in pyproject.toml (core headless; the layers of the stack; the
    vocabulary imports no concern; cli -> tui -> core) are kept."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter not installed")
    out = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


# -- the import graph of tracetui/ (every import statement, in functions too) -------------------

PACKAGE = ROOT / "tracetui"

PRIVATE_IMPORTS_LEFT: set[tuple[str, str, str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, str]]:
    """``(module imported, name imported or "")`` of every ``tracetui`` import in a module."""
    import ast

    found = []
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("tracetui")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith("tracetui"):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((sub, "") if sub in known else (base, a.name))
    return found


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: {m for m, _ in _imports(name, path, known) if m in known and m != name} for name, path in known.items()}


def test_no_import_cycle_in_tracetui() -> None:
    """No module of tracetui/ reaches itself through imports (function-level ones included)."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)  # a later test relies on the default (deep values compared without error)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_private_name_imported_across_modules() -> None:
    """No module imports another module's ``_private`` name (make it public, or move the code)."""
    known = _modules()
    found = {
        (name, module, imported)
        for name, path in known.items()
        for module, imported in _imports(name, path, known)
        if imported.startswith("_") and not imported.startswith("__") and module != name
    }
    assert not found - PRIVATE_IMPORTS_LEFT, sorted(found - PRIVATE_IMPORTS_LEFT)


def test_modules_stay_small_or_say_why() -> None:
    """A module over ~600 lines says in its docstring why it is one room (``Size:``)."""
    import ast

    big = []
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 650 and "Size:" not in (ast.get_docstring(ast.parse(text)) or ""):
            big.append(f"{name} ({text.count(chr(10))} lines)")
    assert not big, "over 600 lines without a stated reason: " + ", ".join(big)
