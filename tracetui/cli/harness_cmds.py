"""``tracetui record`` and ``tracetui replay``: run a user's agent under the harness and put words
around the result. The work is in ``tracetui.core.harness``."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from typing import Any, TextIO

import orjson

from tracetui.core.errors import HarnessError, ReadError
from tracetui.core.readers import read_trace
from tracetui.core.readers.jsondoc import load_json

EXIT_OK, EXIT_DIVERGED, EXIT_ERROR = 0, 1, 2
EXIT_INCOMPLETE_RECORDING, EXIT_UNSERVABLE_RECORDING = 3, 4

STATUS_EXIT = {"passed": EXIT_OK, "failed": EXIT_DIVERGED, "diverged": EXIT_DIVERGED,
               "incomplete_recording": EXIT_INCOMPLETE_RECORDING, "unservable_recording": EXIT_UNSERVABLE_RECORDING}
"""A replay's named outcome (``RunResult.status``) -> the exit code of ``tracetui replay``."""


def exit_for(status: str | None) -> int:
    """The exit code of a replay outcome (``STATUS_EXIT``); an unknown one is a divergence."""
    return STATUS_EXIT.get(status or "passed", EXIT_DIVERGED)


def add_parsers(sub: Any) -> None:
    """Add the ``record`` and ``replay`` subcommands to ``sub`` (argparse subparsers)."""
    rec = sub.add_parser(
        "record",
        help="run an agent live and record its trace, redacted before writing",
        description="Run AGENT (module:function or path/to/file.py:function, called as run(ctx, input)) live on "
        "--input and write its trace to --out as it goes, in tracetui's own format. Every value is redacted "
        "before it is written (emails, phones, card numbers, API keys, bearer tokens, fields a tool declares "
        "sensitive) with the project's redaction key (docs/redaction.md). Exit 0 when the run completed, 1 when "
        "the agent raised (the trace is still written), 2 on errors.",
        epilog="An unchanged program instead: tracetui record [--read-tools a,b] [--out F] [--force] -- python app.py "
        "ARGS (its options: tracetui record -h -- python).",
    )
    rec.add_argument("agent", metavar="AGENT", help="module:function or path/to/file.py:function")
    _add_input(rec, required=True)
    rec.add_argument("--out", required=True, metavar="TRACE.jsonl", help="the trace file to create")
    rec.add_argument("--clock", metavar="ISO", help="the time the agent is given, ctx.now() (default: now)")
    rec.add_argument("--timezone", metavar="ZONE", help="IANA time zone of the clock (default: $TZ or UTC)")
    rec.add_argument("--seed", type=int, metavar="N", help="seed of ctx.new_id()/ctx.random (default: random; written to the header)")
    rec.add_argument("--run-id", metavar="ID", help="the run's id (default: run-<UTC time>-<hex>)")
    _add_common(rec)

    rep = sub.add_parser(
        "replay",
        help="replay a recorded run offline: reads from the recording, writes intercepted",
        description="Run AGENT again on the recorded run TRACE (FILE#RUN for one run of several) and write the "
        "replay trace to --out. Reads are answered from the recording (strict: keyed by tool name and canonical "
        "arguments, repeated reads in call order), every tool not on READ_TOOLS is a write and is intercepted, "
        "the clock is frozen to the recording's. A call the recording does not cover is a divergence, never "
        "sent to a live system; writes are matched against the recorded writes the same way and never executed; "
        "outbound network connections are blocked. Exit 0 when every trial passed, 1 when a trial diverged "
        "(unrecorded call, write mismatch, recording exhausted, input mismatch), raised where the original did not, "
        "or repeated a write; 2 on errors; 3 incomplete recording (it ends before the point the replay reached); "
        "4 unservable recording (a truncated or ambiguous response; --accept-truncated serves it). Then: "
        "tracetui diff TRACE REPLAY.",
        epilog="An unchanged program instead: tracetui replay TRACE [--mode strict|loose] [--llm frozen|live] "
        "[--out F] [--force] -- python app.py ARGS (its options: tracetui replay -h -- python).",
    )
    rep.add_argument("trace", metavar="TRACE", help="the recorded run (tracetui/1 or any readable format; FILE#RUN)")
    rep.add_argument("agent", metavar="AGENT", help="module:function or path/to/file.py:function")
    rep.add_argument("--out", required=True, metavar="REPLAY.jsonl", help="the replay trace to create (one run per trial)")
    rep.add_argument("--mode", choices=("strict", "loose", "fixture"), default="strict",
                     help="strict: a miss is a divergence (default); loose: misses go live only with --allow-live; "
                     "fixture: a state store seeded from the recorded reads, writes applied to it")
    rep.add_argument("--llm", choices=("frozen", "live"), default="frozen",
                     help="frozen: serve recorded LLM outputs for the same messages (default); live: call MODEL again "
                     "(model in the loop)")
    rep.add_argument("--trials", type=int, default=1, metavar="K", help="run K times and report how many take the original's path")
    rep.add_argument("--allow-live", action="store_true",
                     help="loose mode: let read misses reach the live tools (never a write)")
    rep.add_argument("--accept-truncated", action="store_true",
                     help="serve recorded responses that are truncated or ambiguous (marked on the span, noted in the "
                     "replay header) instead of stopping with unservable_recording (exit 4)")
    rep.add_argument("--seed-file", metavar="FILE", help="fixture mode: a JSON object loaded into the fixture after the recorded reads")
    rep.add_argument("--accept-schema-change", action="store_true",
                     help="replay a recording made against other tool schemas (noted in the replay header)")
    from tracetui.cli.isolate import add_endpoint_flag

    add_endpoint_flag(rep)
    _add_input(rep, required=False)
    _add_common(rep)


def _add_input(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--input", required=required, metavar="JSON",
                   help="the run's input: a JSON value, or @FILE to read it from a file"
                   + ("" if required else " (default: the recorded input)"))


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--redaction-key-file", metavar="FILE",
                   help="the project's redaction key (default: $TRACETUI_REDACTION_KEY, $TRACETUI_REDACTION_KEY_FILE, "
                   "then .tracetui/redaction.key, created on first record)")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists (atomically, at the end)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format on stdout (default: text)")


def _parse_input(value: str) -> Any:
    if value.startswith("@"):
        path = value[1:]
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise HarnessError(f"--input {value}: cannot read {path}: {exc.strerror or exc}") from None
        return load_json(path, data, [])
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise HarnessError(f"--input is not JSON ({exc}); give a JSON value such as '{{\"message\": \"hi\"}}' "
                           "or @file.json (a plain string needs quotes: '\"hello\"')") from None


def check_out(path: str, force: bool) -> None:
    """Refuse an ``--out`` that is a folder, exists (without ``--force``) or sits in a missing folder."""
    if os.path.isdir(path):
        raise HarnessError(f"--out {path} is a folder; give a file name such as {os.path.join(path, 'trace.jsonl')}")
    if os.path.lexists(path) and not force:
        raise HarnessError(f"--out {path} exists; choose another name or pass --force to replace it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise HarnessError(f"--out {path}: folder {folder} does not exist")


def project_redactor_for_cli(key_file: str | None, sensitive_fields: Any, *, create: bool, err: TextIO,
              recorded_key: str | None = None) -> Any:
    """The project Redactor (``redact.project_redactor``), saying on ``err`` what the user should know:
    a key file just created, or a one-off key used where the recording had a project key."""
    from tracetui.core.harness.redact import project_redactor

    redactor, note = project_redactor(key_file, create=create, sensitive_fields=sensitive_fields,
                                      recorded_key=recorded_key)
    if note is not None and recorded_key:
        print(f"tracetui: warning: {note}", file=err)
    default = os.path.join(os.getcwd(), ".tracetui", "redaction.key")
    if create and not key_file and not os.environ.get("TRACETUI_REDACTION_KEY") and _created_now(default):
        print(f"tracetui: created redaction key {default} (mode 0600). Keep it out of version control: "
              "the same key gives the same tokens in every file of this project", file=err)
    return redactor


def _created_now(path: str) -> bool:
    import time

    try:
        return time.time() - os.stat(path).st_mtime < 5
    except OSError:
        return False


def run_record(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui record``; exit 0 completed, 1 the agent raised, 2 error."""
    from tracetui.core.harness.agent import load_agent
    from tracetui.core.harness.run import error_text, record

    value = _parse_input(args.input)
    check_out(args.out, args.force)
    spec = load_agent(args.agent)
    redactor = project_redactor_for_cli(args.redaction_key_file, spec.sensitive_fields, create=True, err=err)
    try:
        result = record(spec, value, args.out, redactor=redactor, clock=args.clock, timezone=args.timezone,
                        seed=args.seed, run_id=args.run_id, overwrite=args.force)
    except KeyboardInterrupt:
        print(f"tracetui: interrupted; the trace so far is in {args.out} (its root span says KeyboardInterrupt)", file=err)
        raise
    except FileExistsError:
        raise HarnessError(f"--out {args.out} exists; choose another name or pass --force to replace it") from None
    trace = read_trace(args.out)
    kinds = Counter(s.kind.value for s in trace.spans)
    fired = result.header.get("redaction", {}).get("fired", {})
    if args.format == "json":
        out.write(orjson.dumps({"schema_version": 1, "out": args.out, "run_id": result.run_id,
                                "spans": len(trace.spans), "by_kind": dict(kinds), "live_calls": result.outcome.live_calls,
                                "model_calls": result.outcome.model_calls, "redaction": result.header.get("redaction"),
                                "error": error_text(result.error)},
                               option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        print(f"recorded {result.run_id}: {len(trace.spans)} spans ({by_kind}) -> {args.out}", file=out)
        print(f"  live calls: {result.outcome.live_calls} tool/retrieval, {result.outcome.model_calls} model", file=out)
        red = ", ".join(f"{k} x{n}" for k, n in fired.items()) or "nothing matched"
        print(f"  redacted before writing: {red} (key {redactor.key_id})", file=out)
        print(f"  clock: {result.header['clock']['now']} ({result.header['clock']['timezone']}), seed {result.header['seed']}",
              file=out)
        if result.error is not None:
            print(f"  the agent raised {error_text(result.error)} "
                  "(recorded as the root span's error)", file=out)
        print(f"next: tracetui replay {args.out} {args.agent} --out replay.jsonl", file=out)
    return EXIT_OK if result.error is None else EXIT_DIVERGED


def run_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui replay``; exit 0 no trial diverged, 1 one did, 2 error."""
    from tracetui.core.harness.agent import load_agent
    from tracetui.core.harness.run import replay

    if args.allow_live and args.mode != "loose":
        raise HarnessError(f"--allow-live only applies to --mode loose (strict and fixture replays never reach a "
                           f"live system); got --mode {args.mode}")
    if args.seed_file and args.mode != "fixture":
        raise HarnessError("--seed-file only applies to --mode fixture")
    if args.trials < 1:
        raise HarnessError(f"--trials must be at least 1, not {args.trials}")
    value: Any = ... if args.input is None else _parse_input(args.input)
    seed_state = None
    if args.seed_file:
        try:
            with open(args.seed_file, "rb") as fh:
                seed_state = load_json(args.seed_file, fh.read(), [])
        except OSError as exc:
            raise HarnessError(f"--seed-file {args.seed_file}: {exc.strerror or exc}") from None
        if not isinstance(seed_state, dict):
            raise ReadError(args.seed_file, f"a fixture seed must be a JSON object, not {type(seed_state).__name__}")
    check_out(args.out, args.force)
    from tracetui.cli.isolate import isolate

    # --allow-live lets misses reach live tools: no sandbox can allow that, so the guard alone
    where = isolate(args, out, err, live_llm=args.llm == "live", possible=not args.allow_live)
    if where.exit_code is not None:
        return where.exit_code
    isolation = where.statement
    recording = read_trace(args.trace)
    from tracetui.cli.commands import print_issues

    print_issues("recording", recording.issues, err, verbose=True, path=recording.path)
    if not args.allow_live:
        from tracetui.core.harness.guard import block_network

        with block_network(args.mode):  # code at the agent module's top level is offline too
            spec = load_agent(args.agent)
    else:
        spec = load_agent(args.agent)
    red = recording.header.get("redaction")
    redactor = project_redactor_for_cli(args.redaction_key_file, spec.sensitive_fields, create=False, err=err,
                         recorded_key=red.get("key_id") if isinstance(red, dict) else None)

    def progress(result: Any) -> None:
        if args.trials > 1 and args.format == "text":
            state = result.status if result.diverged else ("same path" if result.reproduces else "other path")
            print(f"  trial {result.trial}/{args.trials}: {state}", file=err)

    try:
        report = replay(recording, spec, args.out, redactor=redactor, mode=args.mode, llm=args.llm, trials=args.trials,
                        allow_live=args.allow_live, seed_state=seed_state,
                        accept_schema_change=args.accept_schema_change, overwrite=args.force, input=value,
                        on_trial=progress, accept_truncated=args.accept_truncated, isolation=isolation)
    except KeyboardInterrupt:
        print(f"tracetui: interrupted; the replay so far is in {args.out}", file=err)
        raise
    except FileExistsError:
        raise HarnessError(f"--out {args.out} exists; choose another name or pass --force to replace it") from None
    if args.format == "json":
        out.write(orjson.dumps({
            "schema_version": 1, "recording": args.trace, "agent": args.agent, "out": args.out, "mode": args.mode,
            "llm": args.llm, "trials": len(report.runs), "reproduced": report.reproduced,
            "status": report.status, "diverged": report.diverged, "network_isolation": isolation,
            "runs": [r.summary() for r in report.runs]},
            option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n")
    else:
        _print_report(report, args, out)
        print(f"network isolation: {isolation}", file=out)
    return exit_for(report.status)


def _short(value: Any, limit: int = 90) -> str:
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_report(report: Any, args: argparse.Namespace, out: TextIO) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    from tracetui.core.harness.run import error_text

    p(f"replay {args.mode}, LLM {args.llm}, {len(report.runs)} trial{'s' if len(report.runs) > 1 else ''}: "
      f"{args.trace} with {args.agent} -> {args.out}"
      + (" (--accept-truncated: truncated or ambiguous recorded responses served, marked)"
         if args.accept_truncated else ""))
    for r in report.runs:
        o = r.outcome
        if r.status in ("incomplete_recording", "unservable_recording"):
            head = r.status.replace("_", " ")
        elif r.diverged:
            head = "diverged"
        elif r.error is not None:
            head = f"agent raised {type(r.error).__name__}" + (" (the original run did not fail)" if r.new_failure else "")
        else:
            head = "completed" + ("" if r.reproduces else " on another path than the original's")
        llm = f"LLM outputs served {o.llm_served}" if args.llm == "frozen" else \
            f"model calls {o.model_calls} (live model, allowed)"
        p(f"trial {r.trial}: {head}; reads served {o.served}, misses {o.misses}, writes intercepted {len(o.writes)}, "
          f"{llm}, live calls (tools/network): {o.live_calls}")
        for d in o.divergences:
            p(f"  {d['type']} at seq {d['seq']} (span {d['span_id']}):")
            for line in d["message"].splitlines():
                p(f"    {line}")
        for w in o.writes:
            key = f", idempotency key {w['idempotency_key']}" if w.get("idempotency_key") else ""
            if w.get("source") == "diverged":
                p(f"  write #{w['position']} refused (not executed): {w['tool']} {_short(w['arguments'])}")
                continue
            p(f"  write #{w['position']} intercepted: {w['tool']} {_short(w['arguments'])}{key} ({w['source']})")
        for dup in o.duplicate_writes:
            p(f"  repeated write: #{dup['position']} {dup['tool']} has the idempotency key of write #{dup['first_position']}"
              f" ({dup['idempotency_key']})")
        if args.mode != "fixture":
            if r.unconsumed:
                p(f"  unconsumed recordings ({len(r.unconsumed)}): the replay never asked for")
                for u in r.unconsumed:
                    p(f"    {u['tool']} {_short(u['arguments'])} (seq {u['seq']})")
            else:
                p("  unconsumed recordings: none")
        if r.final_state is not None:
            p(f"  fixture changes ({len(o.changes)}):")
            for c in o.changes:
                p(f"    {c['path']}: {_short(c['before'], 40)} -> {_short(c['after'], 40)} (write #{c['by']['position']} "
                  f"{c['by']['tool']})")
            p(f"  final state: {_short(r.final_state, 400)}")
        for b in r.blocked:
            p(f"  blocked network call: {b}")
        for n in o.notes:
            p(f"  note: {n}")
        if r.error is not None and not r.diverged:
            p(f"  the agent raised {error_text(r.error)}")
    if args.mode == "loose":
        misses = sum(r.outcome.misses for r in report.runs)
        p(f"loose mode: {misses} miss{'es' if misses != 1 else ''}"
          + (f", {sum(r.outcome.live_calls for r in report.runs)} sent live" if args.allow_live else ", none sent live"))
    p(f"reproduction: {report.reproduced} of {len(report.runs)} trial{'s' if len(report.runs) > 1 else ''} took the "
      "original's call path")
    p(f"outcome: {report.status} (exit {exit_for(report.status)})")
    p(f"next: tracetui diff {args.trace} {args.out}")
