"""``tracetui triage``: the three steps of triage as a report (the work is in tracetui.core.triage)."""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any, TextIO

import orjson

from tracetui.cli.render import dumps_json, safe
from tracetui.core.errors import HarnessError
from tracetui.core.model import Trace
from tracetui.core.readers import read_runs, read_trace, split_run_ref

EXIT_OK, EXIT_ERROR = 0, 2


def add_parser(sub: Any) -> None:
    """Add ``triage`` to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(
        "triage",
        help="can the run be replayed, does the failure come back with recorded tools, model or data?",
        description="Triage a failed run in three steps (docs/triage.md): (1) can ORIGINAL be replayed at all "
        "(missing spans, truncated outputs, missing prompt or model versions)? (2) do the REPLAYs — each run of "
        "each file is one trial, or --agent runs K trials now — bring the failure back? (3) the verdict: "
        "not_replayable, model_or_prompt, variance, data_or_integration or code_or_config_change, with its "
        "evidence as span ids. --batch DIR groups a folder of original/replay pairs by first divergence. "
        "Exit 0 when triage ran (any verdict), 2 on errors; with --batch, 1 when a case diverged.",
    )
    p.add_argument("original", metavar="ORIGINAL", nargs="?", help="the failed run (any readable format; FILE#RUN)")
    p.add_argument("replays", metavar="REPLAY", nargs="*", help="replays of it: every run of each file is a trial "
                   "(FILE#RUN for one)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format on stdout (default: text)")
    p.add_argument("--failing-span", metavar="SPAN_ID",
                   help="the failing call or claim in ORIGINAL (default: the final claim, i.e. the whole run)")
    p.add_argument("--agent", metavar="AGENT", help="run the replays now with this agent (module:function or "
                   "file.py:function), as `tracetui replay` would")
    p.add_argument("--trials", type=int, default=3, metavar="K", help="with --agent: trials to run (default 3)")
    p.add_argument("--mode", choices=("strict", "fixture"), default="strict", help="with --agent: replay mode")
    p.add_argument("--llm", choices=("frozen", "live"), default="live",
                   help="with --agent: live (default: the model called again, so trials can differ) or frozen")
    from tracetui.cli.isolate import add_endpoint_flag

    add_endpoint_flag(p)
    p.add_argument("--replay-out", metavar="FILE", help="with --agent: keep the replay trace there (default: a "
                   "temporary file, removed)")
    p.add_argument("--batch", metavar="DIR", help="triage every original/replay pair under DIR, grouped by "
                   "first-divergence signature, largest group first")
    p.add_argument("--dask", action="store_true", help="with --batch: examine the pairs on Dask (an embedded local "
                   "cluster of worker processes, or --scheduler), as tracetui nightly does; needs tracetui[dask]")
    p.add_argument("--scheduler", metavar="tcp://HOST:8786", help="with --batch: an existing Dask scheduler "
                   "(implies --dask)")


def _load_replays(paths: list[str]) -> list[Trace]:
    out: list[Trace] = []
    for path in paths:
        if split_run_ref(path)[1] is not None:
            out.append(read_trace(path))
        else:
            out.extend(read_runs(path).runs)
    return out


def _run_agent(args: argparse.Namespace, original: Trace, err: TextIO,
               isolation: str | None = None) -> tuple[list[Trace], str | None]:
    from tracetui.cli.harness_cmds import project_redactor_for_cli
    from tracetui.core.harness.agent import load_agent
    from tracetui.core.harness.run import replay

    spec = load_agent(args.agent)
    red = original.header.get("redaction")
    redactor = project_redactor_for_cli(None, spec.sensitive_fields, create=False, err=err,
                         recorded_key=red.get("key_id") if isinstance(red, dict) else None)
    if args.replay_out:
        if os.path.lexists(args.replay_out):
            raise HarnessError(f"--replay-out {args.replay_out} exists; choose another name")
        out, tmpdir = args.replay_out, None
    else:
        tmpdir = tempfile.mkdtemp(prefix="tracetui-triage-")
        out = os.path.join(tmpdir, "replay.jsonl")

    def progress(result: Any) -> None:
        print(f"  trial {result.trial}/{args.trials}: " + ("diverged" if result.diverged else "done"), file=err)

    replay(original, spec, out, redactor=redactor, mode=args.mode, llm=args.llm, trials=args.trials,
           on_trial=progress if args.format == "text" else None, isolation=isolation)
    runs = read_runs(out).runs
    if tmpdir is not None:
        os.unlink(out)
        os.rmdir(tmpdir)
        for run in runs:  # its file is gone: the trials are named by run id, not after a removed file
            run.path = ""
    return runs, (out if args.replay_out else None)


def run_triage(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui triage``; exit 0 when triage ran, 2 on errors (``--batch``: see batch_cmd)."""
    if args.batch:
        if args.original or args.replays:
            raise HarnessError("--batch DIR takes no ORIGINAL/REPLAY arguments")
        from tracetui.cli.batch_cmd import run_batch

        if args.dask or args.scheduler:
            from tracetui.integrations.dask_cluster import DaskExecutor

            with DaskExecutor(args.scheduler, what="triage --batch --dask") as executor:
                print(f"tracetui: triage --batch on {executor.describe()}", file=err)
                return run_batch(args.batch, args.format, out, err, executor=executor)
        return run_batch(args.batch, args.format, out, err)
    if not args.original:
        raise HarnessError("triage needs ORIGINAL (or --batch DIR)")
    if args.agent and args.replays:
        raise HarnessError("give REPLAY files or --agent, not both")
    if args.trials < 1:
        raise HarnessError(f"--trials must be at least 1, not {args.trials}")
    from tracetui.core.triage import triage, triage_json

    original = read_trace(args.original)
    from tracetui.cli.commands import print_issues

    print_issues("original", original.issues, err, path=original.path)
    kept = None
    isolation = None
    if args.agent:  # the trials run in the replay sandbox, the model through its relay
        from tracetui.cli.isolate import isolate

        where = isolate(args, out, err, live_llm=args.llm == "live")
        if where.exit_code is not None:
            return where.exit_code
        isolation = where.statement
        replays, kept = _run_agent(args, original, err, isolation)
    else:
        replays = _load_replays(args.replays)
    result = triage(original, replays, failing_span=args.failing_span)
    labels = _trial_labels(result, err)
    if args.format == "json":
        doc = triage_json(result)
        for entry, found in zip(doc["reproduction"]["per_trial"] if doc["reproduction"] else [], labels, strict=False):
            entry["labels"] = found
        doc["original"] = args.original
        doc["replays"] = list(args.replays) if not args.agent else ([kept] if kept else [])
        if isolation is not None:
            doc["network_isolation"] = isolation
        out.write(dumps_json(doc, orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
        return EXIT_OK
    _print(result, original, replays, args, kept, out, labels)
    if isolation is not None:
        print(f"network isolation: {isolation}", file=out)
    return EXIT_OK


def _trial_labels(result: Any, err: TextIO) -> list[list[dict[str, Any]]]:
    """Per trial, the reviewer labels of its divergences (docs/labels-and-batch.md): ``[{"row",
    "type", "label", "note"}]``, the first divergence's first. A damaged sidecar is a warning."""
    from tracetui.core.errors import ReadError
    from tracetui.core.diff.labels import labels_for, load_labels, replay_ref

    out: list[list[dict[str, Any]]] = []
    for t in (result.reproduction.per_trial if result.reproduction else []):
        if not t.diff.replay.path:  # a trial run now and not kept has no labels sidecar
            out.append([])
            continue
        try:
            labels = load_labels(replay_ref(t.diff.replay))
        except ReadError as exc:
            print(f"tracetui: warning: reviewer labels not shown: {exc}", file=err)
            labels = {}
        found = labels_for(t.diff, labels)
        out.append([{"row": t.diff.divergences[i].row, "type": lab.type, "label": lab.label, "note": lab.note}
                    for i, lab in sorted(found.items())])
    return out


_STATE = {"passed": "done", "failed": "FAILED", "pending": "pending", "skipped": "skipped"}


def _print(result: Any, original: Trace, replays: list[Trace], args: argparse.Namespace, kept: str | None,
           out: TextIO, labels: list[list[dict[str, Any]]]) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    names = {s.span_id: s.name for s in original.spans}
    rnames = {s.span_id: s.name for r in replays for s in r.spans}
    p(f"triage {safe(original.path)} ({len(original.spans)} spans)"
      + (f" against {len(replays)} replay{'s' if len(replays) != 1 else ''}" if replays else "")
      + (" run now by --agent (not kept: --replay-out FILE keeps them)" if args.agent and not kept else ""))
    if result.failure is not None:
        p(f"failure: {safe(result.failure.reason)}")
    p("")
    for step in result.steps:
        p(f"{step.number}. {step.title}  [{_STATE.get(step.state, step.state)}]")
        p(f"   {safe(step.detail)}")
        shown = step.evidence if step.number != 3 else []
        for e in shown[:12]:
            where = _where(e, names, rnames)
            p(f"   - {where}{safe(e.reason)}")
        if len(shown) > 12:
            p(f"   ... and {len(shown) - 12} more (--format json lists them all)")
        if step.number == 2:
            for t, found in zip(result.reproduction.per_trial if result.reproduction else [], labels, strict=False):
                for lab in found:
                    note = f' "{safe(lab["note"])}"' if lab["note"] else ""
                    p(f"   label {t.label} row {lab['row']} {lab['type']}: {lab['label']}{note}")
    p("")
    if result.verdict is None:
        p("verdict: none yet" + ("" if result.replayability.verdict == "not_replayable" else
                                 f" ({_replay_hint(original, args.original)})"))
        return
    p(f"verdict: {result.verdict}" + (f" (confidence {result.confidence})" if result.confidence else ""))
    p("evidence:")
    for e in result.evidence:
        p(f"  - {_where(e, names, rnames)}{safe(e.reason)}")
    if result.reasons:
        p("why:")
        for r in result.reasons:
            p(f"  - {r.rule} [{safe(r.on)}]: {safe(r.text)}")
    if result.caveats and result.verdict != "not_replayable":
        p("caveats (listed with the verdict; each lowers its confidence):")
        for f in result.caveats:
            p(f"  - {f.field or f.code}: {safe(f.workaround or '')}")
    if kept:
        p(f"replays kept in {kept}")


def _where(e: Any, names: dict[str, str], rnames: dict[str, str]) -> str:
    if e.span_id is None:
        return ""
    name = (names if e.side == "original" else rnames).get(e.span_id, "")
    return f"[{e.side} {e.span_id}{' ' + safe(name) if name else ''}] "


def _replay_hint(original: Any, path: str) -> str:
    """How to get a replay to triage against: a program recorded by the zero-code entry
    (``tracetui record -- python app.py``) is replayed the same way; a ``run(ctx, input)`` agent
    with ``--agent``."""
    header = getattr(original, "header", None) or {}
    if header.get("recorder") == "tracetui.session":
        program = str(header.get("agent_ref") or "app.py")
        return (f"replay it: tracetui replay {path} --llm live --out replay.jsonl -- python {program}; "
                f"then tracetui triage {path} replay.jsonl")
    return f"replay it: tracetui triage {path} --agent AGENT --trials 3"
