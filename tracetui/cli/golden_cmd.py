"""``tracetui golden run``: run every golden case of a folder and report (the work is in
tracetui.core.golden.runner; docs/golden.md "Running cases").

Exit codes: 0 when no case failed (diverged cases do not fail the run unless
``--strict-divergence``), 1 when a case failed, 2 when a case could not be run (an ``error``
outcome) or on usage errors.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from tracetui.cli.render import safe

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

_LABEL = {"pass": "PASS", "fail": "FAIL", "diverged": "DIVERGED", "error": "ERROR"}


def add_parser(sub: Any) -> None:
    """Add ``golden`` (with its ``run`` subcommand) to ``sub`` (argparse subparsers)."""
    golden = sub.add_parser(
        "golden",
        help="run the golden cases of a folder against an agent or a replay trace",
        description="Golden cases (docs/golden.md): golden/NAME/ holds a redacted fixture (trace.jsonl), a "
        "contract (contract.yaml) and provenance (case.yaml).",
    )
    gsub = golden.add_subparsers(dest="golden_command", metavar="SUBCOMMAND", parser_class=type(golden))
    gsub.required = True
    run = gsub.add_parser(
        "run",
        help="replay the agent against each case (or check --replay) and check the contracts",
        description="For each case under FOLDER: replay AGENT against the case's fixture (strict or fixture mode, "
        "as case.yaml says; the model called again) or take the runs of --replay, then check the contract layer by "
        "layer (structural, trajectory, state, outcome) and the trials thresholds. Outcomes: pass, fail (every "
        "violated clause listed with its span), diverged (the agent left the fixture: not a failure; convert the "
        "case to fixture mode), error. Exit 0 when no case failed, 1 when one did (or diverged, with "
        "--strict-divergence), 2 when a case could not be run.",
    )
    run.add_argument("folder", metavar="FOLDER", help="the golden folder (golden/), or one case folder")
    source = run.add_mutually_exclusive_group()
    source.add_argument("--agent", metavar="AGENT", help="the agent to replay (module:function or file.py:function); "
                        "default: each case's case.yaml `agent`")
    source.add_argument("--replay", metavar="REPLAY.jsonl", help="check this replay trace instead of running an "
                        "agent: each of its runs is a trial (checked against every case's contract)")
    run.add_argument("--trials", type=int, metavar="K", help="trials per case (default: the contract's trials.count)")
    run.add_argument("--format", choices=("text", "json"), default="text", help="report format on stdout (default: text)")
    run.add_argument("--keep", metavar="DIR", help="keep each case's replay trace as DIR/CASE.jsonl (default: "
                     "temporary, removed); an existing file is never replaced without --force")
    run.add_argument("--force", action="store_true", help="with --keep: replace an existing DIR/CASE.jsonl")
    run.add_argument("--strict-divergence", action="store_true", help="exit 1 when a case diverged, as for a failure")
    from tracetui.cli.isolate import add_endpoint_flag

    add_endpoint_flag(run)
    run.add_argument("--redaction-key-file", metavar="PATH", help="the project redaction key (default: "
                     "TRACETUI_REDACTION_KEY, TRACETUI_REDACTION_KEY_FILE, then .tracetui/redaction.key; with none, "
                     "a one-off key, noted)")


def exit_code(counts: dict[str, int], *, strict_divergence: bool = False) -> int:
    """2 when a case errored, else 1 when one failed (or diverged with ``strict_divergence``), else 0."""
    if counts.get("error"):
        return EXIT_ERROR
    if counts.get("fail") or (strict_divergence and counts.get("diverged")):
        return EXIT_FAIL
    return EXIT_OK


def totals_line(counts: dict[str, int]) -> str:
    """``3 passed, 1 failed, 1 diverged, 0 errors``."""
    errors = counts.get("error", 0)
    return (f"{counts.get('pass', 0)} passed, {counts.get('fail', 0)} failed, {counts.get('diverged', 0)} diverged, "
            f"{errors} error{'' if errors == 1 else 's'}")


def case_lines(result: Any) -> list[str]:
    """The text report of one case: its line, then its violations, divergence and notes, indented."""
    lines = [f"{_LABEL.get(result.outcome, result.outcome.upper())} {safe(result.name)}: {safe(result.message)}"]
    for v in result.violations:
        span = f" span {safe(v.span_id)}" if v.span_id else ""
        lines.append(f"  - {safe(v.clause_id)} [{v.layer}] trial {v.trial}{span}: {safe(v.message)}")
    d = result.first_divergence
    if d:
        tool = f" {safe(str(d['tool']))}" if d.get("tool") else ""
        span = f" span {safe(str(d['span_id']))}" if d.get("span_id") else ""
        lines.append(f"  first divergence: {safe(str(d.get('type')))}{tool}{span} (trial {d.get('trial')})")
        if d.get("message"):
            lines.append(f"    {safe(str(d['message']))}")
    for note in result.notes:
        lines.append(f"  note: {safe(note)}")
    if result.replay_path:
        lines.append(f"  replay kept: {safe(result.replay_path)}")
    return lines


def run_golden(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui golden run``; returns the exit code (module docstring). A folder that does not
    exist raises ``GoldenCaseError`` (the CLI prints it, exit 2)."""
    from tracetui.core.golden.runner import counts as count_outcomes
    from tracetui.core.golden.runner import find_cases, run_case

    if getattr(args, "golden_command", "run") != "run":
        print(f"tracetui golden: unknown subcommand {args.golden_command!r}", file=err)
        return EXIT_ERROR
    if args.trials is not None and args.trials < 1:
        print(f"tracetui golden run: error: --trials must be at least 1, not {args.trials}", file=err)
        return EXIT_ERROR
    from tracetui.core.golden.contract import GoldenCaseError

    try:
        cases = find_cases(args.folder)
    except GoldenCaseError as exc:
        print(f"tracetui golden run: error: {safe(str(exc))}", file=err)
        return EXIT_ERROR
    if not cases:
        print(f"tracetui golden run: no cases under {safe(args.folder)} (each case is a folder holding case.yaml, "
              "contract.yaml and trace.jsonl)", file=err)
        return EXIT_ERROR
    isolation = None
    if args.replay is None:  # each case's agent runs in the replay sandbox, the model through its relay
        from tracetui.cli.isolate import isolate

        where = isolate(args, out, err, live_llm=True)
        if where.exit_code is not None:
            return where.exit_code
        isolation = where.statement
    results = []
    for case in cases:
        result = run_case(case, agent=args.agent, replay=args.replay, trials=args.trials, keep=args.keep,
                          redaction_key_file=args.redaction_key_file, force=getattr(args, "force", False),
                          isolation=isolation)
        results.append(result)
        if args.format == "text":
            print("\n".join(case_lines(result)), file=out)
    counts = count_outcomes(results)
    code = exit_code(counts, strict_divergence=args.strict_divergence)
    if args.format == "json":
        doc = {"schema_version": 1, "folder": args.folder, "cases": [r.to_dict() for r in results],
               "counts": counts, "exit_code": code}
        if isolation is not None:
            doc["network_isolation"] = isolation
        print(json.dumps(doc, indent=2, ensure_ascii=True, default=str), file=out)
    else:
        if isolation is not None:
            print(f"network isolation: {isolation}", file=out)
        print(totals_line(counts), file=out)
    return code
