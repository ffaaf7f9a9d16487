"""Record and replay at the tool boundary (docs/harness.md).

An agent ``run(ctx, input)`` reaches tools, the model, retrieval, the clock and randomness only
through ``ctx`` (``RunContext``). ``record`` runs it live and writes a redacted tracetui/1 trace
as it goes; ``replay`` runs it again against that recording — strict, loose or fixture mode,
frozen or live model, K trials — and writes the replay trace that ``tracetui diff`` compares.
Replay never reaches a live system: live callables are not invoked in strict and fixture modes
and a socket guard blocks outbound connections.

Names resolve lazily (PEP 562), like ``tracetui.core``.
"""

from __future__ import annotations

from tracetui.core.lazy import lazy_getattr

_EXPORTS = {
    "AgentSpec": "tracetui.core.harness.agent",
    "load_agent": "tracetui.core.harness.agent",
    "RunContext": "tracetui.core.harness.runcontext",
    "Outcome": "tracetui.core.harness.context",
    "MODES": "tracetui.core.harness.context",
    "LLM_MODES": "tracetui.core.harness.context",
    "Cassette": "tracetui.core.harness.cassette",
    "RecordedReadsFixture": "tracetui.core.harness.fixture",
    "block_network": "tracetui.core.harness.guard",
    "Redactor": "tracetui.core.harness.redact",
    "load_key": "tracetui.core.harness.redact",
    "record": "tracetui.core.harness.run",
    "replay": "tracetui.core.harness.run",
    "RunResult": "tracetui.core.harness.run",
    "ReplayReport": "tracetui.core.harness.run",
    "REPLAY_MODES": "tracetui.core.harness.run",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
