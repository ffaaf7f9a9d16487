"""``tracetui promote``: turn a confirmed failure into a golden case (the work is in
``tracetui.core.golden.promote``; docs/golden.md "Promotion")."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

import orjson

from tracetui.cli.render import safe
from tracetui.core.errors import HarnessError
from tracetui.core.readers import read_trace

EXIT_OK, EXIT_ERROR = 0, 2


def add_parser(sub: Any) -> None:
    """Add ``promote`` to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(
        "promote",
        help="turn a failing run into a golden case: redacted minimal fixture, derived contract, provenance",
        description="Write the golden case --to/NAME/ from the failing run ORIGINAL and, optionally, REPLAY (a replay "
        "of the fixed agent): trace.jsonl (ORIGINAL redacted with the project key before it is written and reduced "
        "to the causal path; every dropped span listed), contract.yaml (must_call, forbid_call, max_calls, order, "
        "success_requires, final_state derived from the run and its divergence from REPLAY; edit it freely) and "
        "case.yaml (provenance). An existing case is never overwritten: the same name again writes NAME-fork-N "
        "pointing at it; the same run, replay and mode promoted again writes nothing (\"already promoted as NAME\"). Exit 0 when the case was written, 2 on errors.",
    )
    p.add_argument("original", metavar="ORIGINAL", help="the failing run (any readable format; FILE#RUN)")
    p.add_argument("replay", metavar="REPLAY", nargs="?", help="a replay of the fixed agent (tracetui replay --out)")
    p.add_argument("--to", default="golden", metavar="DIR", help="the golden folder (default: golden/)")
    p.add_argument("--name", metavar="NAME", help="the case name (default: derived from the failure)")
    p.add_argument("--failure", metavar="TEXT", help="the observable failure in one sentence (default: derived)")
    p.add_argument("--owner", metavar="WHO", help="who owns the case (default: $USER)")
    p.add_argument("--mode", choices=("strict", "fixture"),
                   help="how `golden run` replays the agent (default: fixture when REPLAY is a fixture replay)")
    p.add_argument("--agent", metavar="AGENT", help="default AGENT for `golden run` (module:function)")
    p.add_argument("--seed-file", metavar="JSON", help="a fixture seed to keep with the case (seed.json, redacted)")
    p.add_argument("--redaction-key-file", metavar="PATH", help="the project redaction key (docs/redaction.md)")
    p.add_argument("--force", action="store_true", help="promote a recording that did not end (a call never "
                   "finished, the root span missing: the recorder was stopped mid-run); refused without it")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format on stdout")


def _redactor(args: argparse.Namespace, err: TextIO) -> Any:
    """The project Redactor, as ``tracetui record`` finds it (creating the default key when none is set)."""
    from tracetui.cli.harness_cmds import project_redactor_for_cli as harness_redactor

    sensitive: Any = None
    if getattr(args, "agent", None):
        # the fields the agent's tools declare sensitive are redacted too, as when recording
        from tracetui.core.harness.agent import load_agent

        sensitive = load_agent(args.agent).sensitive_fields
    return harness_redactor(args.redaction_key_file, sensitive, create=True, err=err)


def run_promote(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``tracetui promote``: read the runs, write the case, report what was written.

    Returns:
        0 when the case was written; 2 (via ``TracetuiError`` in main) on errors.
    """
    import json

    from tracetui.core.golden.promote import promote

    original = read_trace(args.original)
    replay = read_trace(args.replay) if args.replay else None
    seed = None
    if args.seed_file:
        try:
            with open(args.seed_file, encoding="utf-8") as fh:
                seed = json.load(fh)
        except OSError as exc:
            raise HarnessError(f"--seed-file {args.seed_file}: cannot be read ({exc.strerror or exc})") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise HarnessError(f"--seed-file {args.seed_file}: not a JSON document ({exc}); give the JSON object "
                               "`tracetui replay --seed-file` takes") from None
    redactor = _redactor(args, err)
    case = promote(original, replay, args.to, name=args.name, failure=args.failure, owner=args.owner,
                   redactor=redactor, mode=args.mode, agent=args.agent, seed=seed,
                   force=getattr(args, "force", False))
    clauses = [(section, c) for section, items in case.contract.items() if isinstance(items, list) for c in items]
    if case.already:
        if args.format == "json":
            out.write(orjson.dumps({"schema_version": 1, "case": case.name, "path": case.path,
                                    "already_promoted": True, "notes": case.notes},
                                   option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            print(f"already promoted as {safe(case.name)} ({safe(case.path)}/): nothing written", file=out)
        return EXIT_OK
    if args.format == "json":
        out.write(orjson.dumps({
            "schema_version": 1, "case": case.name, "path": case.path, "parent": case.parent,
            "files": list(case.files), "failure": case.case["failure"], "mode": case.case["mode"],
            "clauses": [{"section": s, **c} for s, c in clauses], "spans_kept": case.kept,
            "dropped_spans": case.dropped, "redactions": case.redactions, "notes": case.notes,
            "already_promoted": False,
        }, option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    fork = f" (fork of {safe(case.parent)})" if case.parent else ""
    print(f"promoted {safe(case.case['source'].get('run_id') or args.original)} -> {safe(case.path)}/{fork}", file=out)
    print(f"  failure: {safe(case.case['failure'])}", file=out)
    print(f"  mode: {case.case['mode']}; files: trace.jsonl, contract.yaml, case.yaml", file=out)
    print(f"  contract: {len(clauses)} clause(s)", file=out)
    for section, c in clauses:
        detail = {k: v for k, v in c.items() if k != "id"}
        print(f"    {section} {safe(c.get('id', ''))}: {safe(orjson.dumps(detail).decode())}", file=out)
    print(f"  fixture: {case.kept} span(s) kept, {len(case.dropped)} dropped", file=out)
    for d in case.dropped:
        print(f"    dropped {safe(d['span_id'])} {safe(d['name'])}: {safe(d['reason'])}", file=out)
    red = ", ".join(f"{k} x{n}" for k, n in case.redactions.items()) or "nothing new matched"
    print(f"  redacted before writing: {red} (key {redactor.key_id})", file=out)
    for note in case.notes:
        print(f"  note: {safe(note)}", file=out)
    print(f"  review the contract, then: tracetui golden run {safe(args.to)}", file=out)
    return EXIT_OK
