"""``tracetui`` command line: ``tracetui ORIGINAL REPLAY`` opens the TUI, ``tracetui diff`` reports.

Exit codes (after ruff/ty): 0 no divergence, 1 divergence found, 2 usage, input
or I/O error. stdout carries the report; stderr carries diagnostics. Textual
is imported only when the TUI is opened, so ``tracetui diff`` and ``--help``
stay light.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from tracetui import __version__
from tracetui.core.errors import TracetuiError
from tracetui.core.readers import reader_names

EXIT_OK = 0
EXIT_DIVERGED = 1
EXIT_ERROR = 2

COMMANDS = ("view", "diff", "show", "convert", "record", "replay", "triage", "golden", "promote", "nightly")


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` returns an int."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: error: {message}\n{self.format_usage().rstrip()}")


class _UsageError(Exception):
    pass


_RUN_HELP = "FILE#RUN picks one run of a file that holds several (see `tracetui show FILE`)"


def _add_input_format(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also say how values were read when nothing was lost (e.g. integers beyond 64 bits kept exact)")
    p.add_argument(
        "--input-format",
        choices=reader_names(),
        metavar="NAME",
        help=f"read {what} as this format instead of sniffing the content ({', '.join(reader_names())})",
    )


def _add_inputs(p: argparse.ArgumentParser, *, replay_optional: bool = False) -> None:
    p.add_argument("original", metavar="ORIGINAL", help=f"trace of the run that happened (any supported format; {_RUN_HELP})")
    if replay_optional:
        p.add_argument("replay", metavar="REPLAY", nargs="?",
                       help="trace of the replay to compare with it (REPLAY#RUN works too); without it ORIGINAL is "
                       "shown alone, or, when it holds several runs, their list (open one, or mark two and diff them)")
    else:
        p.add_argument("replay", metavar="REPLAY", help="trace of the replay to compare with it (REPLAY#RUN works too)")
    _add_input_format(p, "both files")
    p.add_argument("--trace-id", metavar="ID", help="trace to pick in ORIGINAL when it holds several (default: the first)")
    p.add_argument("--replay-trace-id", metavar="ID", help="trace to pick in REPLAY (default: --trace-id if REPLAY holds it, else the first)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to document the commands)."""
    parser = _Parser(
        prog="tracetui",
        description=(
            "Diff an AI agent's original run against its replay, span by span, and show the first divergence.\n\n"
            "  tracetui ORIGINAL REPLAY            open the side-by-side view (same as `tracetui view`)\n"            "  tracetui FILE                       open one trace alone; a file of several runs lists them\n"
            "  tracetui diff ORIGINAL REPLAY       print the divergences (exit 0 none, 1 some, 2 error)\n"
            "  tracetui show TRACE                 what a file holds: format, runs, spans by kind, tools, warnings\n"
            "  tracetui convert TRACE OUT.jsonl    write one run in tracetui's own format (tracetui/1)\n"
            "  tracetui record AGENT --input JSON --out TRACE.jsonl\n"
            "                                      run an agent live, record its trace (redacted before writing)\n"
            "  tracetui replay TRACE AGENT --out REPLAY.jsonl\n"
            "                                      replay it offline: reads from the recording, writes intercepted\n"
            "  tracetui record [--read-tools a,b] [--out F] -- python app.py ARGS\n"
            "  tracetui replay TRACE [--llm live] -- python app.py ARGS\n"
            "                                      the same for an unchanged program (model clients, MCP and\n"
            "                                      frameworks patched at import; `tracetui record -h -- python`)\n"
            "  tracetui triage ORIGINAL [REPLAY...] replayable? does the failure come back? model or data?\n"
            "  tracetui promote ORIGINAL [REPLAY] --to golden/\n"
            "                                      make the failure a golden-set case: fixture + contract\n"
            "  tracetui golden run golden/ --agent AGENT\n"
            "                                      run the golden set (exit 0 pass, 1 fail, 2 error)\n"
            "  tracetui nightly STORE AGENT --out REPORT.json\n"
            "                                      replay a sample of recorded runs on Dask, grouped, alerted on\n\n"
            "A file that holds several runs (a tau-bench file, an inspect log, an OTLP export) takes FILE#RUN.\n"
            "`tracetui help COMMAND` (or `tracetui COMMAND -h`) shows a command's options; -V the version."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"tracetui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    view = sub.add_parser(
        "view", help="open the two runs side by side in the terminal UI (one file: that trace alone, or its runs)",
        description="Open ORIGINAL and REPLAY aligned side by side, cursor on the first divergence. With ORIGINAL "
        "alone: that trace on its own (tree, detail pane, search, filters), or, for a file of several runs, the "
        "list of its runs (id, spans, status, reward or verdict) to open one or diff two.",
    )
    _add_inputs(view, replay_optional=True)
    view.add_argument("--config", metavar="PATH",
                      help="the TUI's config file: theme and keys (default: $TRACETUI_CONFIG, else "
                      "$XDG_CONFIG_HOME/tracetui/config.toml; docs/tui.md)")
    view.add_argument("--watch", action="store_true",
                      help="follow REPLAY while it is written: new spans appear as they arrive (REPLAY need not "
                      "exist yet); F makes the cursor follow them (docs/watch.md)")
    diff = sub.add_parser(
        "diff",
        help="report the divergences between two runs",
        description="Align ORIGINAL and REPLAY, compare them span by span, and report the first divergence. "
        "Exit 0 when there is no divergence, 1 when there is, 2 on usage or input errors.",
    )
    _add_inputs(diff)
    diff.add_argument("--format", choices=("text", "json"), default="text", help="report format on stdout (default: text)")
    diff.add_argument("--exit-zero", action="store_true", help="exit 0 even when the runs diverge (errors still exit 2)")
    diff.add_argument("--ignore", action="append", metavar="PATH", default=[],
                      help="a field path never counted as a divergence, in any span (repeatable; tool.output.fetched_at, "
                      "llm.messages[*].content); with [tool.tracetui] noise rules of pyproject.toml / .tracetui.toml "
                      "(docs/format.md, \"Noise rules\")")
    show = sub.add_parser(
        "show",
        help="what a trace file holds: format, runs, spans by kind, tools, models, warnings",
        description=f"Read TRACE and summarise it: the format detected, each run with its spans by kind, tools "
        f"called, models, and every record skipped or doubted. {_RUN_HELP}. Exit 0 when it loads, 2 when it does not.",
    )
    show.add_argument("trace", metavar="TRACE", help="a trace file, or FILE#RUN")
    _add_input_format(show, "TRACE")
    show.add_argument("--format", choices=("text", "json"), default="text", help="output format on stdout (default: text)")
    convert = sub.add_parser(
        "convert",
        help="write one run of any supported format as tracetui/1 JSONL",
        description="Read one run of TRACE (FILE#RUN, or the first run) and write it to OUT in tracetui's own "
        "format, atomically, redacted with the project key and rules as record writes (--no-redact: as read, "
        "with a warning counting what the rules would have replaced). OUT is never overwritten unless --force is "
        "given. Converting the output again gives the same bytes.",
    )
    convert.add_argument("trace", metavar="TRACE", help="a trace file, or FILE#RUN")
    convert.add_argument("out", metavar="OUT", help="the tracetui/1 file to write; - writes to stdout")
    _add_input_format(convert, "TRACE")
    convert.add_argument("--force", action="store_true", help="replace OUT if it exists")
    convert.add_argument("--no-redact", action="store_true",
                         help="write the values as read (default: redacted with the project key and rules, as record "
                              "writes them; a warning says how many values the rules would have replaced)")
    convert.add_argument("--redaction-key-file", metavar="PATH", help="the project redaction key (docs/redaction.md)")
    from tracetui.cli.harness_cmds import add_parsers

    add_parsers(sub)
    from tracetui.cli.triage_cmd import add_parser as add_triage

    add_triage(sub)
    from tracetui.cli.golden_cmd import add_parser as add_golden

    add_golden(sub)
    from tracetui.cli.promote_cmd import add_parser as add_promote

    add_promote(sub)
    from tracetui.cli.nightly_cmd import add_parser as add_nightly

    add_nightly(sub)
    return parser


_TOP_LEVEL_OPTIONS = frozenset({"-h", "--help", "--version", "-V"})
"""Options of ``tracetui`` itself; any other first argument that is not a command starts ``view``."""


def _help(topic: list[str], out: TextIO, err: TextIO) -> int:
    """``tracetui help [COMMAND]``: the help of tracetui, or of one command, on stdout (0); an unknown command is
    a usage error (2) naming the commands."""
    parser = build_parser()
    if not topic:
        out.write(parser.format_help())
        return EXIT_OK
    if topic[0] not in COMMANDS or len(topic) > 1:
        print(f"tracetui: error: no command {' '.join(topic)!r} (commands: {', '.join(COMMANDS)}; "
              "`tracetui help` for all)", file=err)
        return EXIT_ERROR
    import contextlib

    with contextlib.redirect_stdout(out):
        try:
            parser.parse_args([topic[0], "--help"])
        except SystemExit:
            pass
    return EXIT_OK


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the CLI.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).
        stdout: Where the report goes (default ``sys.stdout``).
        stderr: Where diagnostics go (default ``sys.stderr``).

    Returns:
        The exit code: 0, 1 or 2 (module docstring).
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] in (["record"], ["replay"]) and "--" in args_list[1:]:
        # `tracetui record|replay [OPTIONS] -- python app.py ARGS`: an unchanged program (cli.session_cmds)
        from tracetui.cli.session_cmds import run as run_program

        try:
            return run_program(args_list, out, err)
        except KeyboardInterrupt:
            return 130
    if args_list[:1] == ["help"]:
        return _help(args_list[1:], out, err)
    # `tracetui A B` is `tracetui view A B`: the on-call path is the short one (view's options, such as
    # `--config PATH` or `--watch`, may come first: `tracetui --watch A B`).
    if args_list and args_list[0] not in COMMANDS and args_list[0] not in _TOP_LEVEL_OPTIONS:
        args_list.insert(0, "view")
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except _UsageError as exc:
        print(exc, file=err)
        return EXIT_ERROR
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(err)  # a usage error: the report stream stays empty
        return EXIT_ERROR
    try:
        if args.command == "diff":
            from tracetui.cli.commands import run_diff

            return run_diff(args, out, err)
        if args.command == "show":
            from tracetui.cli.commands import run_show

            return run_show(args, out, err)
        if args.command == "convert":
            from tracetui.cli.commands import run_convert

            return run_convert(args, out, err)
        if args.command == "golden":
            from tracetui.cli.golden_cmd import run_golden

            args.argv = args_list  # golden run re-runs itself inside the replay sandbox (cli.isolate)
            return run_golden(args, out, err)
        if args.command == "promote":
            from tracetui.cli.promote_cmd import run_promote

            return run_promote(args, out, err)
        if args.command == "nightly":
            from tracetui.cli.nightly_cmd import run_nightly_cmd

            return run_nightly_cmd(args, out, err)
        if args.command == "triage":
            from tracetui.cli.triage_cmd import run_triage

            args.argv = args_list  # --agent re-runs itself inside the replay sandbox (cli.isolate)
            return run_triage(args, out, err)
        if args.command in ("record", "replay"):
            from tracetui.cli import harness_cmds

            run = harness_cmds.run_record if args.command == "record" else harness_cmds.run_replay
            args.argv = args_list  # replay re-runs itself inside a network namespace (core.harness.sandbox)
            return run(args, out, err)
        from tracetui.cli.commands import run_view

        return run_view(args, err)
    except TracetuiError as exc:
        print(f"tracetui: error: {exc}", file=err)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: say so in one line, never as "diverged" (1), never a bare traceback
        if os.environ.get("TRACETUI_DEBUG"):
            raise
        print(
            f"tracetui: internal error: {type(exc).__name__}: {exc}\n"
            "  this is a bug in tracetui; please report it with the command and, if you can, the input files\n"
            "  (run again with TRACETUI_DEBUG=1 for the traceback)",
            file=err,
        )
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
