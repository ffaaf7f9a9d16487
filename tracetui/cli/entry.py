"""The ``tracetui`` command's entry point (``pyproject.toml``, ``python -m tracetui``).

It imports nothing heavy itself, so that Ctrl+C while the CLI's modules are being imported (the
first ~0.1 s) ends the command with 130, as Ctrl+C does later (``cli.main``), not with a traceback.
"""

from __future__ import annotations


def main() -> int:
    """Run ``tracetui.cli.main.main`` and return its exit code; 130 when interrupted while importing it."""
    try:
        from tracetui.cli.main import main as cli_main
    except KeyboardInterrupt:
        return 130
    return cli_main()
