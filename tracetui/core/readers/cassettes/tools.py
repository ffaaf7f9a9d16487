"""(a) tool spans [``cassette-tools``]: ``{"tool", "args", "output"}`` items (docs/readers/cassettes.md).
"""

from __future__ import annotations

from typing import Any

from tracetui.core.model import SpanKind, ReadIssue, Span, Status
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.cassettes.common import (
    ROOT_ID,
    ROOT_NAME,
    TIME_KEYS,
    head_records,
    load_doc,
    mostly_dicts_with,
    need_spans,
    records_of,
    root_span,
    row_times,
    run_header,
)
from tracetui.core.readers.cassettes.values import decode_args, failed_error, put_arguments

__all__ = ["CassetteToolsReader"]

_TOOL = SpanKind.TOOL


# --- (a) tool spans -------------------------------------------------------------------------

_TOOLS_WRAPPERS = ("spans", "calls")
_TOOLS_KEYS = frozenset({"tool", "args", "output", "error", "is_error", "isError", "call_id", "id"}) | TIME_KEYS
KEYED_KEYS = _TOOLS_KEYS - {"output"} | {"key", "result"}


def tool_span(span_id: str, seq: int, tool: str, args: Any, has_args: bool, output: Any, has_output: bool,
               row: dict[str, Any], consumed: frozenset[str], line: int, trace_id: str | None) -> Span:
    """One tool span of a cassette row (shapes a and b): arguments decoded, hashed; failure marked."""
    data: dict[str, Any] = {"tool_name": tool}
    cid = row.get("call_id", row.get("id"))
    if isinstance(cid, (str, int)) and not isinstance(cid, bool):
        data["call_id"] = str(cid)
    if has_args:
        put_arguments(data, args)
    if has_output:
        data["output"] = output
    err = failed_error(row, output)
    start, end = row_times(row)
    attrs = {} if row.keys() <= consumed else {k: v for k, v in row.items() if k not in consumed}
    status = Status.ERROR if err is not None else Status.OK if has_output else Status.UNSET
    return Span(span_id, ROOT_ID, seq, _TOOL, tool, start_ns=start, end_ns=end, status=status, error_type=err,
                data=data, attributes=attrs, trace_id=trace_id, line=line)


class CassetteToolsReader:
    """Shape (a): a list of tool spans ``{"tool": name, "args": {...}, "output": ...}``.

    Container: a JSON array, JSON Lines, or ``{"spans": [...]}`` / ``{"calls": [...]}``
    (the wrapper's ``runId``/``run_id`` is the run id; its other fields go to the
    header as in ``run_header``). Each item is one ``tool`` span, child of a
    synthesized root, in file order (``seq`` 1..n, ids ``call-<index>``).
    ``args`` as an object, a JSON string or a double-encoded JSON string gives
    the same ``arguments`` and ``args_hash``; double encoding is reported once.
    An item marked failed (``error``, ``is_error``) is ``status=error``. Other
    item fields (except times: ``ts``, ``start``, ``end``, ``duration_ms``...)
    go to ``attributes``.
    """

    name = "cassette-tools"

    def sniff(self, head: bytes) -> bool:
        """Records whose first item has ``tool`` (a string), ``args`` and ``output``, and whose
        other head items all have ``tool``; no ``key`` (that is shape b)."""
        recs = head_records(head, _TOOLS_WRAPPERS)
        if not recs or not isinstance(recs[0], dict):
            return False
        first = recs[0]
        return (isinstance(first.get("tool"), str) and "args" in first and "output" in first and "key" not in first
                and mostly_dicts_with(recs, "tool"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read the tool spans of one run.

        Raises:
            ReadError: not JSON, or no item is a tool span.
        """
        issues: list[ReadIssue] = IssueList()
        doc, rows = load_doc(path, data, issues)
        recs, wrapper = records_of(doc, rows, _TOOLS_WRAPPERS)
        header = run_header(wrapper, skip=_TOOLS_WRAPPERS) if wrapper is not None else {}
        run_id = header.get("run_id")
        trace_id = str(run_id) if run_id is not None else None
        spans: list[Span] = []
        double: list[int] = []
        no_output = no_args = 0
        for rec in recs:
            v = rec.value
            if not isinstance(v, dict) or not isinstance(v.get("tool"), str) or not v["tool"]:
                issues.append(ReadIssue(path, rec.line, rec.where, "not a tool span {\"tool\", \"args\", \"output\"} "
                                        "(no tool name); skipped"))
                continue
            args, layers = decode_args(v.get("args"))
            if layers >= 2:
                double.append(rec.line)
            no_args += "args" not in v
            no_output += "output" not in v
            spans.append(tool_span(f"call-{rec.line - 1}", len(spans) + 1, v["tool"], args, "args" in v,
                                    v.get("output"), "output" in v, v, _TOOLS_KEYS, rec.line, trace_id))
        need_spans(spans, issues, path, "tool span")
        run = trace_id or "(unnamed)"
        if double:
            issues.append(ReadIssue(path, double[0], "args", f"run {run}: {len(double)} call(s) record args as a "
                                    "double-encoded JSON string (a JSON string of a JSON string); decoded", "warning"))
        if no_args:
            issues.append(ReadIssue(path, None, "", f"run {run}: {no_args} of {len(spans)} tool call(s) have no args "
                                    "recorded; their arguments stay absent", "warning"))
        if no_output:
            issues.append(ReadIssue(path, None, "", f"run {run}: {no_output} of {len(spans)} tool call(s) have no "
                                    "output recorded (not captured); their output stays absent", "warning"))
        root = root_span(spans, str(header.get("agent") or ROOT_NAME), trace_id)
        return ReaderOutput([RunSpans(trace_id, [root, *spans], header, in_order=True)], issues)
