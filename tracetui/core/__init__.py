"""The headless library: span model, readers, alignment, comparison, report.

Pure Python (standard library, orjson, rapidfuzz); never imports Textual, Rich
or watchfiles, never prints. Public names resolve lazily (PEP 562) so
``import tracetui.core`` costs nothing until a name is used.
"""

from __future__ import annotations

from tracetui.core.lazy import lazy_getattr

_BY_MODULE = {
    "tracetui.core.model": ("Span", "SpanKind", "Status", "Trace", "ReadIssue"),
    "tracetui.core.readers": ("read_trace", "read_runs", "read_replay", "TraceFile"),
    "tracetui.core.readers.summary": ("summarize",),
    "tracetui.core.readers.native": ("write_trace",),
    "tracetui.core.diff.align": ("align",),
    "tracetui.core.diff": ("diff_traces", "TraceDiff", "Divergence", "DivergenceType", "FieldChange"),
    "tracetui.core.diff.report": ("diff_report",),
    "tracetui.core.errors": ("TracetuiError", "ReadError"),
}
"""Defining module -> the public names it gives this package."""
_EXPORTS = {name: module for module, names in _BY_MODULE.items() for name in names}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
