"""One function per subcommand: parse nothing, call the core, put words around it."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any, TextIO

from tracetui.cli.render import dumps_json
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Trace
from tracetui.core.load import keep_pair, read_pair
from tracetui.core.readers import read_runs, read_trace, split_run_ref
from tracetui.core.readers.base import MAX_ISSUES


def load_pair(args: argparse.Namespace, err: TextIO) -> tuple[Trace, Trace]:
    """Read ORIGINAL and REPLAY as the arguments say, reporting on ``err`` what was skipped and which trace was picked.

    Raises:
        ReadError: either file cannot be read.
    """
    # read_pair: the same runs, spans, issues and errors as read_trace + read_replay; big tracetui/1 files go
    # through the index loader, the replay parsed in a child process meanwhile (docs/performance.md)
    original, replay = read_pair(args.original, args.replay, original_format=args.input_format,
                                 replay_format=args.input_format, trace_id=args.trace_id,
                                 replay_trace_id=args.replay_trace_id, keep=False)
    report_read("original", original, err, picked=args.trace_id is not None or split_run_ref(args.original)[1] is not None,
                verbose=getattr(args, "verbose", False))
    report_read("replay", replay, err, picked=args.replay_trace_id is not None or split_run_ref(args.replay)[1] is not None,
                verbose=getattr(args, "verbose", False))
    return original, replay


def report_read(label: str, t: Trace, err: TextIO, *, picked: bool = False, verbose: bool = False) -> None:
    """Diagnostics for one loaded trace: which run of several (unless the user ``picked`` it), and
    each skipped or doubted record (and, when ``verbose``, the ``info`` notes on how values were read)."""
    if len(t.trace_ids) > 1 and not picked:
        print(
            f"tracetui: {label} {t.path} holds {len(t.trace_ids)} runs; using {t.trace_id} "
            f"(pick another with {label.upper()}#RUN; `tracetui show {t.path}` lists them)",
            file=err,
        )
    print_issues(label, t.issues, err, verbose=verbose, path=t.path)


ISSUES_SHOWN = 20
"""Issues of one file printed on stderr; the rest are counted ("... N more")."""


def print_issues(label: str, issues: list[ReadIssue], err: TextIO, *, verbose: bool = False, path: str = "") -> None:
    """``tracetui: LABEL: SEVERITY: ISSUE`` for the first ``ISSUES_SHOWN`` issues (``info`` ones only when
    ``verbose``), then one line counting the rest: a file of thousands of bad lines prints a screenful."""
    shown = [i for i in issues if i.severity != "info" or verbose]
    for issue in shown[:ISSUES_SHOWN]:
        print(f"tracetui: {label}: {issue.severity}: {issue}", file=err)
    if len(shown) > ISSUES_SHOWN:
        where = f"`tracetui show {path} --format json`" if path else "`tracetui show FILE --format json`"
        print(f"tracetui: {label}: ... {len(shown) - ISSUES_SHOWN:,} more ({where} lists the first {MAX_ISSUES:,})", file=err)


def run_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui diff``: 0 no divergence, 1 divergence (0 with --exit-zero)."""
    from tracetui.cli.render import render_text
    from tracetui.core.diff import diff_traces
    from tracetui.core.diff.labels import load_labels, replay_ref, sidecar_path
    from tracetui.core.diff.report import diff_report

    original, replay = load_pair(args, err)
    ref = replay_ref(replay)
    labels_file: str | None = sidecar_path(ref)
    try:
        labels = load_labels(ref)
    except ReadError as exc:  # damaged labels never hide the diff
        print(f"tracetui: warning: reviewer labels not shown: {exc}", file=err)
        labels, labels_file = {}, None
    if labels_file is not None and not os.path.exists(labels_file):
        labels_file = None
    from tracetui.core.diff.noise import NoiseConfigError, apply_rules, load_rules

    try:
        rules = load_rules(ignore=getattr(args, "ignore", None) or ())
    except NoiseConfigError as exc:
        print(f"tracetui: error: {exc}", file=err)
        return 2
    diff = diff_traces(original, replay, redactor=_redactor_for(original, replay))
    noisy = apply_rules(diff, rules)
    report = diff_report(diff, labels=labels, labels_file=labels_file)
    report["ignored_by_config"] = {"fields": noisy.fields, "divergences": noisy.divergences,
                                   "rules": len(rules)}
    if args.format == "json":
        out.write(dumps_json(report))
    else:
        out.write(render_text(report))
    out.flush()
    # kept for the next opening (core.load.index_cache) once the report is out: the user does not wait for it
    keep_pair(args.original, args.replay, (original, replay), original_format=args.input_format,
              replay_format=args.input_format, trace_id=args.trace_id, replay_trace_id=args.replay_trace_id)
    if report["first_divergence"] is None or args.exit_zero:
        return 0
    return 1


def _redactor_for(original: Trace, replay: Trace) -> Any:
    """The project's redactor when exactly one side is redacted and with the project's key (the
    diff then redacts the other side's raw values to compare them with the tokens), else None."""
    marks = [t.header.get("redaction") for t in (original, replay)]
    if isinstance(marks[0], dict) == isinstance(marks[1], dict):
        return None
    from tracetui.core.harness.redact import RedactionError, project_redactor

    try:
        redactor, note = project_redactor(create=False)
    except (RedactionError, OSError):  # no usable key or malformed rules: compare without redacting
        return None
    return redactor if note is None else None


def run_view(args: argparse.Namespace, err: TextIO) -> int:
    """``tracetui [view] ORIGINAL REPLAY``: open the TUI (Textual is imported here only)."""
    watch = bool(getattr(args, "watch", False))
    if args.replay is None and watch:
        raise ReadError(args.original, "--watch follows a replay: give ORIGINAL and REPLAY")
    refs = (args.original,) if watch or args.replay is None else (args.original, args.replay)
    for ref in refs:  # --watch: the replay may come later
        path, _run = split_run_ref(ref)
        if not os.path.exists(path):
            raise ReadError(path, "no such file")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("tracetui: error: the view needs a terminal; in scripts and CI use `tracetui diff ORIGINAL REPLAY` "
              "(or `tracetui show FILE`)", file=err)
        return 2
    if args.replay is None:
        return _run_one(args)
    options = dict(original_format=args.input_format, replay_format=args.input_format, trace_id=args.trace_id,
                   replay_trace_id=args.replay_trace_id)
    prefetched = None
    if not watch:  # the read starts now, while Textual is imported (~0.4 s); the app takes it over
        from tracetui.core.load.pairread import PairRead

        prefetched = PairRead(args.original, args.replay, **options)
    from tracetui.tui import TraceTuiApp

    app = TraceTuiApp(
        args.original,
        args.replay,
        original_format=args.input_format,
        replay_format=args.input_format,
        trace_id=args.trace_id,
        replay_trace_id=args.replay_trace_id,
        watch=watch,
        config_path=getattr(args, "config", None),
        prefetched=prefetched,
    )
    app.run()
    return int(app.return_code or 0)


def _run_one(args: argparse.Namespace) -> int:
    """``tracetui FILE``: the trace alone, or, for a file of several runs none of which is picked, their list."""
    runs = None
    if split_run_ref(args.original)[1] is None and args.trace_id is None:
        from tracetui.core.readers.summary import summarize_run

        trace_file = read_runs(args.original, format=args.input_format)
        if len(trace_file.runs) > 1:
            runs = [summarize_run(t) for t in trace_file.runs]
    from tracetui.tui import TraceTuiApp

    app = TraceTuiApp(args.original, None, original_format=args.input_format, trace_id=args.trace_id,
                      config_path=getattr(args, "config", None), runs=runs)
    app.run()
    return int(app.return_code or 0)


def run_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui show``: 0 when the file loads (warnings included), 2 when it does not."""
    from tracetui.cli.render import render_show
    from tracetui.core.readers.summary import summarize

    summary = summarize(read_runs(args.trace, format=args.input_format))
    if args.format == "json":
        out.write(dumps_json(summary))
    else:
        out.write(render_show(summary, verbose=args.verbose))
    out.flush()
    return 0


def run_convert(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui convert TRACE OUT``: write one run as tracetui/1; never overwrite without ``--force``."""
    from tracetui.core.readers.native import write_trace

    trace = read_trace(args.trace, format=args.input_format)
    report_read("input", trace, err, picked=split_run_ref(args.trace)[1] is not None, verbose=args.verbose)
    spans, red_header, said = _convert_redacted(trace, args, err)
    header = dict(red_header)
    if trace.format != "tracetui":  # a tracetui/1 header is kept byte for byte: converting twice changes nothing
        if trace.trace_id is not None:
            header.setdefault("run_id", trace.trace_id)
        header.setdefault("converted_from", {"format": trace.format, "file": os.path.basename(trace.path)})
    trace = dataclasses.replace(trace, spans=spans)
    if args.out == "-":  # stdout: pipe it on (`tracetui convert X - | jq`)
        from tracetui.core.readers.native import dumps_trace

        payload = dumps_trace(header, trace.spans)
        if hasattr(out, "buffer"):
            out.flush()
            out.buffer.write(payload)
        else:
            out.write(payload.decode())
        out.flush()
        return 0
    if os.path.isdir(args.out):
        raise ReadError(args.out, "is a directory; give the file to write")
    target = os.path.realpath(args.out) if os.path.islink(args.out) else args.out  # --force replaces what the link points to, not the link
    try:
        write_trace(target, (header, trace.spans), overwrite=args.force)
    except FileExistsError:
        raise ReadError(args.out, "already exists; pass --force to replace it") from None
    except OSError as exc:
        raise ReadError(args.out, f"cannot be written: {exc.strerror or exc}") from None
    print(f"tracetui: wrote {len(trace.spans)} spans of run {trace.trace_id or '(unnamed)'} ({trace.format}) to {args.out}"
          + (f"; {said}" if said else ""), file=err)
    return 0


def _convert_redacted(trace: Any, args: argparse.Namespace, err: TextIO) -> tuple[list[Any], dict[str, Any], str]:
    """The spans and header ``convert`` writes: redacted with the project key and rules (what record
    writes), or, with ``--no-redact``, as read, after a warning naming how many values the rules
    would have replaced. Returns (spans in the trace's order, header, what to say)."""
    from tracetui.core.golden.promote import redact_trace
    from tracetui.core.harness.redact import Redactor, load_user_rules

    if args.no_redact:
        probe = Redactor(os.urandom(32), user_rules=load_user_rules())
        redact_trace(trace, probe)
        n = sum(probe.fired.values())
        if n:
            print(f"tracetui: warning: --no-redact: {n} value{'s' if n != 1 else ''} the redaction rules would have "
                  f"replaced ({_fired_text(probe.fired)}) are written as they are", file=err)
        return list(trace.spans), dict(trace.header), ""
    from tracetui.core.harness.redact import project_redactor

    redactor, note = project_redactor(args.redaction_key_file, create=False)
    if note is not None:  # convert creates no key file: the values are hidden all the same
        print("tracetui: note: no project redaction key (TRACETUI_REDACTION_KEY, .tracetui/redaction.key; "
              "`tracetui record` creates one): redacted with a one-off key, whose tokens match no other file", file=err)
    red = redact_trace(trace, redactor)
    order = sorted(range(len(trace.spans)), key=lambda i: trace.spans[i].seq)  # redact_trace's (stable) order
    spans: list[Any] = [None] * len(order)
    for i, span in zip(order, red.spans):
        spans[i] = span
    header = dict(red.header)
    if redactor.fired or not isinstance(trace.header.get("redaction"), dict):
        header["redaction"] = redactor.record()
    else:  # an already redacted file: nothing new replaced, its record kept (converting twice changes nothing)
        header["redaction"] = trace.header["redaction"]
    fired = redactor.fired
    return spans, header, (f"redacted {_fired_text(fired)} (key {redactor.key_id})" if fired else "")


def _fired_text(fired: dict[str, int]) -> str:
    return ", ".join(f"{rule} x{n}" for rule, n in fired.items())
