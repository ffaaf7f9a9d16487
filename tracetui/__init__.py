"""tracetui: record, replay and diff AI-agent runs; find the first divergence.

The library lives in ``tracetui.core`` (pure Python, no UI); this package
re-exports its public API. ``tracetui.cli`` and ``tracetui.tui`` sit on top.
"""

from __future__ import annotations

__version__ = "0.1.0"
