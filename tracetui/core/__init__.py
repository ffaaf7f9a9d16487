"""The headless library: span model, readers, alignment, comparison, report.

Pure Python (standard library, orjson, rapidfuzz); never imports Textual, Rich
or watchfiles, never prints. Public names resolve lazily (PEP 562) so
``import tracetui.core`` costs nothing until a name is used.
"""

from __future__ import annotations

from tracetui.core.lazy import lazy_getattr

_EXPORTS = {
    "Span": "tracetui.core.model",
    "SpanKind": "tracetui.core.model",
    "Status": "tracetui.core.model",
    "Trace": "tracetui.core.model",
    "ReadIssue": "tracetui.core.model",
    "read_trace": "tracetui.core.readers",
    "read_runs": "tracetui.core.readers",
    "read_replay": "tracetui.core.readers",
    "TraceFile": "tracetui.core.readers",
    "summarize": "tracetui.core.readers.summary",
    "write_trace": "tracetui.core.readers.native",
    "align": "tracetui.core.diff.align",
    "diff_traces": "tracetui.core.diff",
    "TraceDiff": "tracetui.core.diff",
    "Divergence": "tracetui.core.diff",
    "DivergenceType": "tracetui.core.diff",
    "FieldChange": "tracetui.core.diff",
    "diff_report": "tracetui.core.diff.report",
    "TracetuiError": "tracetui.core.errors",
    "ReadError": "tracetui.core.errors",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
