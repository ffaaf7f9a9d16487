"""tracetui: record, replay and diff AI-agent runs; find the first divergence.

The library lives in ``tracetui.core`` (pure Python, no UI); ``tracetui.cli`` and ``tracetui.tui``
sit on top. This package gives the names an unchanged agent needs (resolved lazily, PEP 562):

- ``tracetui.record(out=..., read_tools=...)`` / ``tracetui.replay(recording, out=...)``: a
  session for a ``with`` / ``async with`` block (``tracetui.core.harness.ambient``);
- ``@tracetui.tool`` / ``@tracetui.tool(read=True)``: a recorded tool function;
- ``tracetui.current_session()``;
- client and framework glue in ``tracetui.integrations`` (``openai_client``, ``anthropic_client``...).
"""

from __future__ import annotations

from tracetui.core.lazy import lazy_getattr

__version__ = "0.1.0"

_EXPORTS = {
    "record": ("tracetui.core.harness.ambient", "record_session"),
    "replay": ("tracetui.core.harness.ambient", "replay_session"),
    "current_session": "tracetui.core.harness.ambient",
    "HarnessSession": "tracetui.core.harness.ambient",
    "tool": "tracetui.core.harness.tools",
    "openai_client": "tracetui.integrations.clients",
    "async_openai_client": "tracetui.integrations.clients",
    "anthropic_client": "tracetui.integrations.clients",
    "async_anthropic_client": "tracetui.integrations.clients",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
