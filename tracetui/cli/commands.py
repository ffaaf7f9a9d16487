"""One function per subcommand: parse nothing, call the core, put words around it."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.model import Trace
from tracetui.core.readers import read_replay, read_trace


def load_pair(args: argparse.Namespace, err: TextIO) -> tuple[Trace, Trace]:
    """Read ORIGINAL and REPLAY as the arguments say, reporting on ``err`` what was skipped and which trace was picked.

    Raises:
        ReadError: either file cannot be read.
    """
    original = read_trace(args.original, format=args.input_format, trace_id=args.trace_id)
    replay = read_replay(args.replay, format=args.input_format, trace_id=args.trace_id, replay_trace_id=args.replay_trace_id)
    for label, t in (("original", original), ("replay", replay)):
        report_read(label, t, err)
    return original, replay


def report_read(label: str, t: Trace, err: TextIO) -> None:
    """Diagnostics for one loaded trace: which trace of several, and each skipped or doubted record."""
    if len(t.trace_ids) > 1:
        print(
            f"tracetui: {label} {t.path} holds {len(t.trace_ids)} traces; using {t.trace_id} "
            f"(pick another with --{'replay-' if label == 'replay' else ''}trace-id)",
            file=err,
        )
    for issue in t.issues:
        print(f"tracetui: {label}: {issue.severity}: {issue}", file=err)


def run_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui diff``: 0 no divergence, 1 divergence (0 with --exit-zero)."""
    from tracetui.cli.render import render_text
    from tracetui.core.diff import diff_traces
    from tracetui.core.report import diff_report

    original, replay = load_pair(args, err)
    report = diff_report(diff_traces(original, replay))
    if args.format == "json":
        out.write(orjson.dumps(report, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")
    else:
        out.write(render_text(report))
    out.flush()
    if report["first_divergence"] is None or args.exit_zero:
        return 0
    return 1


def run_view(args: argparse.Namespace, err: TextIO) -> int:
    """``tracetui [view] ORIGINAL REPLAY``: open the TUI (Textual is imported here only)."""
    for path in (args.original, args.replay):
        if not os.path.exists(path):
            raise ReadError(path, "no such file")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("tracetui: error: the view needs a terminal; in scripts and CI use `tracetui diff ORIGINAL REPLAY`", file=err)
        return 2
    from tracetui.tui import TraceTuiApp

    app = TraceTuiApp(
        args.original,
        args.replay,
        original_format=args.input_format,
        replay_format=args.input_format,
        trace_id=args.trace_id,
        replay_trace_id=args.replay_trace_id,
    )
    app.run()
    return int(app.return_code or 0)
