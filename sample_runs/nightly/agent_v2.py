"""The scheduling agent after a change: one new read (``list_open_slots`` for today, "to warm the
cache") before the same agent as ``sample_runs/scheduling/agent.py:run``.

Replayed against last night's recordings, that read is a call no recording covers: an
``unrecorded_call`` in every run that reaches it, the spike ``tracetui nightly`` alerts on.
Everything else (tools, schemas, prompts, the scripted model) is the original module's.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scheduling", "agent.py")
_spec = importlib.util.spec_from_file_location("_tracetui_sample_scheduling_v1", _path)
_v1 = importlib.util.module_from_spec(_spec)
assert _spec.loader is not None
_spec.loader.exec_module(_v1)

AGENT_NAME = _v1.AGENT_NAME
CODE_VERSION = "sample-3"
MODEL = _v1.MODEL
MODEL_INFO = _v1.MODEL_INFO
PROMPTS = _v1.PROMPTS
READ_TOOLS = _v1.READ_TOOLS
SENSITIVE_FIELDS = _v1.SENSITIVE_FIELDS
TOOL_SCHEMAS = _v1.TOOL_SCHEMAS
TOOLS = _v1.TOOLS
FIXTURE = _v1.FIXTURE


def run(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    """The changed agent: today's slots read first, then the deployed agent (prompt v7)."""
    if "customer" in input:
        ctx.tool("list_open_slots", {"date": ctx.now().date().isoformat(), "region": "lyon-north",
                                     "job_type": "fibre_install"})
    return _v1.run(ctx, input)
