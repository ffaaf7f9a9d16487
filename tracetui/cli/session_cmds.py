"""``tracetui record -- python app.py ARGS`` and ``tracetui replay REC -- python app.py ARGS``:
record and replay an unchanged program (the zero-code entry).

The program runs in a child process, ``python -m tracetui.integrations.autopatch app.py ARGS``,
that opens the session and patches the supported clients and frameworks when the program
imports them (``tracetui.integrations.autopatch``), so the program's ``__main__``, arguments,
stdin/stdout and exit code are its own. This module parses the options, checks what it can
before starting the program, and reports the run from the summary the child writes.

Exit codes: record, the program's own (2 when tracetui failed); replay, 0 when the replay kept
to the recording, 1 when it diverged (an unrecorded call, an exhausted recording, an input
mismatch), failed where the original did not, repeated a write or ended with another exit code
than the recorded program; 2 on tracetui errors.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any, TextIO

from tracetui.core.errors import HarnessError, TracetuiError
from tracetui.cli.harness_cmds import check_out, exit_for

EXIT_OK, EXIT_DIVERGED, EXIT_ERROR = 0, 1, 2

COVERS = (
    "What is recorded: model calls of the openai and anthropic clients (and of every framework built on them), "
    "MCP tool calls (mcp.ClientSession.call_tool), the tools of the OpenAI Agents SDK, pydantic-ai and LangGraph "
    "(patched when the program imports them), and functions decorated with @tracetui.tool. A tool that is a plain "
    "function the program calls itself is not seen: decorate it with @tracetui.tool, or it runs again in replay "
    "(its network calls refused). Reads: --read-tools, [tool.tracetui] read_tools in pyproject.toml, "
    "@tracetui.tool(read=True), and MCP readOnlyHint annotations (an untrusted hint: served from the recording, "
    "never sent live); every other tool is a write, intercepted in replay."
)

USAGE_RECORD = "tracetui record [--read-tools a,b] [--out TRACE.jsonl] [--force] -- python app.py ARGS"
USAGE_REPLAY = ("tracetui replay TRACE [--mode strict|loose [--allow-live]] [--llm frozen|live] [--out REPLAY.jsonl] "
                "[--force] -- python app.py ARGS")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: error: {message}\n{self.format_usage().rstrip()}")


def build_parser(command: str) -> argparse.ArgumentParser:
    """The parser of the options before ``--`` (``command``: record or replay)."""
    if command == "record":
        p = _Parser(prog="tracetui record", usage=USAGE_RECORD, description=(
            "Run an unchanged Python program live with a tracetui session installed and write its trace to --out, "
            "redacted before writing. The program runs as `python app.py ARGS` would (its own __main__, arguments "
            "and exit code); `python -m module` and `python -c CODE` work too, and `python` means the Python "
            "tracetui runs in. Exit code: the program's own; 2 on tracetui errors. " + COVERS))
        p.add_argument("--out", default="rec.jsonl", metavar="TRACE.jsonl",
                       help="the trace file to create (default: rec.jsonl)")
    else:
        p = _Parser(prog="tracetui replay", usage=USAGE_REPLAY, description=(
            "Run an unchanged Python program again against the recording TRACE: model calls and reads are served "
            "from the recording (--llm live calls the model again), writes are intercepted, the clock is the "
            "recording's, and every outbound network connection is refused. A call the recording does not cover "
            "is a divergence, never sent live. Prints the run report. Exit 0 no divergence, 1 diverged (or the "
            "program failed or exited otherwise than when recorded), 2 on tracetui errors. " + COVERS))
        p.add_argument("trace", metavar="TRACE", help="the recording (a trace written by tracetui record)")
        p.add_argument("--out", default="replay.jsonl", metavar="REPLAY.jsonl",
                       help="the replay trace to create (default: replay.jsonl)")
        p.add_argument("--mode", choices=("strict", "loose"), default="strict",
                       help="strict: a miss is a divergence (default); loose: likewise, unless --allow-live")
        p.add_argument("--allow-live", action="store_true",
                       help="loose mode: a read-list tool the recording does not cover may reach the live tool "
                            "(never a write, never a tool read only on an MCP hint)")
        p.add_argument("--llm", choices=("frozen", "live"), default="frozen",
                       help="frozen: serve the recorded model outputs (default); live: call the model again")
        p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default: text)")
        from tracetui.cli.isolate import add_endpoint_flag

        add_endpoint_flag(p)
    p.add_argument("--read-tools", action="append", default=[], metavar="A,B",
                   help="tools that only read (comma-separated; repeatable)")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists (atomically, at the end)")
    p.add_argument("--redaction-key-file", metavar="FILE", help="the project's redaction key (default as for record)")
    return p


def run(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """Run ``tracetui record|replay [OPTIONS] -- COMMAND...`` (``argv`` without the program name;
    ``cli.main`` sends here ``record`` or ``replay`` followed by ``--`` and a command); returns the
    exit code."""
    argv = list(argv)
    split = argv.index("--", 1)
    command, options, program = argv[0], argv[1:split], argv[split + 1:]
    parser = build_parser(command)
    if not program:
        print(f"tracetui {command}: error: give the program after --: "
              f"{USAGE_RECORD if command == 'record' else USAGE_REPLAY}", file=err)
        return EXIT_ERROR
    try:
        args = parser.parse_args(options)
    except _UsageError as exc:
        print(exc, file=err)
        return EXIT_ERROR
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    try:
        return _run(command, args, program, out, err)
    except TracetuiError as exc:
        print(f"tracetui: error: {exc}", file=err)
        return EXIT_ERROR


def child_command(program: Sequence[str]) -> list[str]:
    """The child's command line for ``program`` (``python app.py ARGS``, ``python -m mod``, a
    script with a Python shebang).

    Raises:
        HarnessError: ``program`` is not a Python program tracetui can start.
    """
    head, rest = program[0], list(program[1:])
    name = os.path.basename(head)
    if name in ("python", "python3") or name.startswith("python3."):
        python = sys.executable if os.sep not in head else head
        flags: list[str] = []
        while rest and (rest[0] in ("-u", "-B", "-O", "-OO", "-s", "-E") or rest[0] in ("-X", "-W") and len(rest) > 1):
            take = 2 if rest[0] in ("-X", "-W") else 1
            flags += rest[:take]
            rest = rest[take:]
        if not rest:
            raise HarnessError(f"give the program to run: {shlex.join(program)} app.py ARGS")
        if not rest[0].startswith("-") and not os.path.isfile(rest[0]):
            raise HarnessError(f"can't open file {rest[0]!r}: no such file (from {os.getcwd()}); nothing was recorded")
        return [python, *flags, "-m", "tracetui.integrations.autopatch", *rest]
    if head.endswith(".py") and os.path.isfile(head):
        return [sys.executable, "-m", "tracetui.integrations.autopatch", head, *rest]
    path = shutil.which(head)
    if path is not None:
        try:
            with open(path, "rb") as fh:
                first = fh.readline()
        except OSError:
            first = b""
        if first.startswith(b"#!") and b"python" in first:
            return [sys.executable, "-m", "tracetui.integrations.autopatch", path, *rest]
    raise HarnessError(f"{head}: the program must be a Python program: python app.py ARGS, python -m module ARGS, "
                       "or a script with a python shebang")


def _env(config: dict[str, Any]) -> dict[str, str]:
    from tracetui.integrations.autopatch import ENV

    env = dict(os.environ)
    env[ENV] = json.dumps(config)
    try:
        importlib.metadata.distribution("tracetui")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree: let the child import it
        import tracetui

        root = os.path.dirname(os.path.dirname(os.path.abspath(tracetui.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), root) if p)
    return env


def _run(command: str, args: argparse.Namespace, program: list[str], out: TextIO, err: TextIO) -> int:
    reads = sorted({t.strip() for item in args.read_tools for t in item.split(",") if t.strip()})
    check_out(args.out, args.force)
    config: dict[str, Any] = {"mode": "record", "out": os.path.abspath(args.out), "read_tools": reads,
                              "force": args.force, "key_file": args.redaction_key_file}
    if command == "replay":
        from tracetui.core.readers import read_trace, split_run_ref

        recording = split_run_ref(args.trace)[0]  # as read_trace splits it: a path that exists keeps its "#"
        if os.path.exists(recording) and os.path.exists(args.out) and os.path.samefile(recording, args.out):
            raise HarnessError(f"--out {args.out} is the recording being replayed; write the replay to another file")
        if args.allow_live and args.mode != "loose":
            raise HarnessError("--allow-live only applies to --mode loose (a strict replay never reaches a live system)")
        read_trace(args.trace)  # a ReadError here is a usage error, before the program starts
        config.update(mode=args.mode, llm=args.llm, recording=_abs_trace(args.trace), allow_live=args.allow_live)
    if config["key_file"]:
        config["key_file"] = os.path.abspath(config["key_file"])
    cmd = child_command(program)
    relay = None
    if command == "replay":
        from tracetui.core.harness import sandbox

        isolated = sandbox.isolated_command(cmd) if not args.allow_live else None
        config["isolation"] = sandbox.ISOLATION_NAMESPACE if isolated else sandbox.ISOLATION_GUARD
        if isolated:
            cmd = isolated
            config["netns"] = True
            if args.llm == "live":
                relay = _relay(args, err)
    fd, report_path = tempfile.mkstemp(prefix="tracetui-run-", suffix=".json")
    os.close(fd)
    config["report"] = report_path
    try:
        env = _env(config)
        if relay is not None:
            from tracetui.core.harness.relay import ENV_RELAY_FD

            env[ENV_RELAY_FD] = str(relay.child_fd)
        proc = subprocess.Popen(cmd, env=env, pass_fds=(relay.child_fd,) if relay is not None else ())
        if relay is not None:
            relay.started()
        while True:
            try:
                code = proc.wait()
                break
            except KeyboardInterrupt:  # the program got it too: let it end and close its trace
                continue
        try:
            with open(report_path, encoding="utf-8") as fh:
                text = fh.read()
            report = json.loads(text) if text.strip() else None
        except (OSError, json.JSONDecodeError):
            report = None
    finally:
        if relay is not None:
            relay.close()
        try:
            os.unlink(report_path)
        except OSError:
            pass
    if report is not None and relay is not None:
        report["model_relay"] = relay.summary()
    if report is None:
        print(f"tracetui: error: the program ended (exit code {code}) before tracetui could close its trace "
              f"({args.out} may be incomplete: killed, or os._exit?)", file=err)
        return EXIT_ERROR if command == "replay" else code
    if report.get("error"):  # the child said it on stderr
        return EXIT_ERROR
    if command == "record":
        _print_record(report, args, program, err)
        return code
    if args.format == "json":
        out.write(json.dumps({"schema_version": 1, "recording": args.trace, "program": program, **report},
                             indent=2) + "\n")
    else:
        _print_replay(report, args, program, out)
    status = (report.get("summary") or {}).get("status")
    if status in ("incomplete_recording", "unservable_recording"):
        return exit_for(status)
    return EXIT_DIVERGED if _failed(report) else EXIT_OK


def _relay(args: argparse.Namespace, err: TextIO) -> Any:
    """The model relay of a sandboxed ``--llm live`` replay (``core.harness.relay``), or None
    (with a note) when no model endpoint is configured."""
    from tracetui.core.harness import relay as relay_mod

    url, source = relay_mod.endpoint_url(args.llm_endpoint)
    if url is None:
        print("tracetui: note: --llm live but no model endpoint is configured (--llm-endpoint URL, "
              f"${relay_mod.ENV_ENDPOINT}, [tool.tracetui.replay] llm_endpoint, $OPENAI_BASE_URL): inside the replay "
              "sandbox the model has no route", file=err)
        return None
    relay = relay_mod.Relay(relay_mod.host_port(url))
    print(f"tracetui: model relay to {relay.summary()['endpoint']} (from {source}); nothing else has a route", file=err)
    return relay


def _abs_trace(trace: str) -> str:
    path, sep, run_id = trace.partition("#")
    return os.path.abspath(path) + sep + run_id


def _failed(report: dict[str, Any]) -> bool:
    summary = report.get("summary") or {}
    recorded = report.get("recorded_exit_code")
    return bool(summary.get("failed")) or (recorded is not None and recorded != report.get("exit_code"))


def _short(value: Any, limit: int = 90) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_record(report: dict[str, Any], args: argparse.Namespace, program: list[str], err: TextIO) -> None:
    counts = report.get("tools") or {}
    s = report.get("summary") or {}
    print(f"tracetui: recorded {args.out}: {counts.get('llm', 0)} model calls, {counts.get('tool', 0)} tool calls"
          f" (program exit code {report.get('exit_code')})", file=err)
    for note in s.get("notes") or []:
        print(f"  note: {note}", file=err)
    print(f"next: tracetui replay {shlex.quote(args.out)} -- {shlex.join(program)}", file=err)


def _print_replay(report: dict[str, Any], args: argparse.Namespace, program: list[str], out: TextIO) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    s = report.get("summary") or {}
    code, recorded = report.get("exit_code"), report.get("recorded_exit_code")
    if s.get("diverged"):
        head = "diverged"
    elif s.get("error") and s.get("new_failure"):
        head = f"the program failed ({s['error']}); the original run did not"
    elif recorded is not None and recorded != code:
        head = f"the program exited with {code}; the recorded run exited with {recorded}"
    else:
        head = "completed" + ("" if s.get("reproduces_original_path", True) else " on another path than the original's")
    llm = f"LLM outputs served {s.get('llm_served', 0)}" if args.llm == "frozen" else \
        f"model calls {s.get('model_calls', 0)} (live model, allowed)"
    p(f"replay {args.mode}, LLM {args.llm}: {args.trace} with `{shlex.join(program)}` -> {args.out}")
    p(f"{head}; reads served {s.get('served', 0)}, misses {s.get('misses', 0)}, writes intercepted "
      f"{len(s.get('writes') or [])}, {llm}, live calls (tools/network): {s.get('live_calls', 0)}; program exit code {code}")
    for d in s.get("divergences") or []:
        p(f"  {d['type']} at seq {d.get('seq')} (span {d.get('span_id')}):")
        for line in str(d.get("message", "")).splitlines():
            p(f"    {line}")
    for w in s.get("writes") or []:
        key = f", idempotency key {w['idempotency_key']}" if w.get("idempotency_key") else ""
        p(f"  write #{w['position']} intercepted: {w['tool']} {_short(w['arguments'])}{key} ({w.get('source')})")
    for dup in s.get("duplicate_writes") or []:
        p(f"  repeated write: #{dup['position']} {dup['tool']} has the idempotency key of write "
          f"#{dup['first_position']} ({dup['idempotency_key']})")
    unconsumed = s.get("unconsumed") or []
    if unconsumed:
        p(f"  unconsumed recordings ({len(unconsumed)}): the replay never asked for")
        for u in unconsumed:
            p(f"    {u['tool']} {_short(u['arguments'])} (seq {u.get('seq')})")
    else:
        p("  unconsumed recordings: none")
    for b in s.get("blocked_network") or []:
        p(f"  blocked network call: {b}")
    for n in s.get("notes") or []:
        p(f"  note: {n}")
    for w in report.get("warnings") or []:
        p(f"  {w}")
    if report.get("isolation"):
        p(f"network isolation: {report['isolation']}")
    if report.get("model_relay"):
        from tracetui.cli.isolate import relay_line

        p(relay_line(report["model_relay"]))
    p(f"next: tracetui diff {shlex.quote(args.trace)} {shlex.quote(args.out)}")
