"""``tracetui nightly STORE AGENT``: replay a sample of recorded runs on Dask, grouped, compared, alerted on.

The core does the work (``tracetui.core.nightly``), Dask runs it (``tracetui.integrations.dask_cluster``);
this module parses, draws the progress bar, writes the reports. Exit codes: 0 the job ran and no
``--fail-on`` rule fired; 1 a rule fired; 2 usage or input errors (no such store, no trace in it, a
bad rule, a damaged baseline, Dask missing: the message says how to get it).
"""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

import orjson

from tracetui.cli.render import safe
from tracetui.core.errors import ReadError, TracetuiError

EXIT_OK, EXIT_ALERT, EXIT_ERROR = 0, 1, 2


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "nightly",
        help="replay a sample of recorded runs with the current agent (on Dask), grouped by first divergence",
        description="List the trace store STORE (a folder or an fsspec URL: file://, s3://, gs://...), sample "
        "--sample runs (seeded; every run the path flags as failed is included; stratified by the agent= and "
        "tool= folders), replay each with AGENT in the --llm modes on a Dask cluster (an embedded local cluster "
        "of worker processes, or --scheduler), diff and triage each, and write a JSON report (--out), a "
        "Markdown summary beside it, and the change against --baseline (last night's report). Each result "
        "is journalled as it arrives (OUT.partial.jsonl): --resume finishes a killed job. Exit 0 no "
        "--fail-on rule fired, 1 one did, 2 on errors. Needs pip install 'tracetui[dask]'.",
    )
    p.add_argument("store", metavar="STORE", help="a folder or an fsspec URL of recorded traces")
    p.add_argument("agent", metavar="AGENT", help="module:function or path/to/file.py:function (as for replay)")
    p.add_argument("--out", required=True, metavar="REPORT.json", help="the JSON report to write")
    p.add_argument("--markdown", metavar="FILE", help="the Markdown summary (default: REPORT with .md)")
    p.add_argument("--sample", type=int, default=100, metavar="N", help="runs to replay (default 100; 0: all)")
    p.add_argument("--seed", default="0", help="the sample's seed, any text (a date keeps each night's sample apart)")
    p.add_argument("--llm", action="append", choices=("frozen", "live"), default=None,
                   help="frozen (recorded model outputs: does replay still work) and/or live (the model in the "
                   "loop: drift); repeat for both (default frozen)")
    p.add_argument("--trials", type=int, default=3, metavar="K", help="trials per run with --llm live (default 3)")
    p.add_argument("--baseline", metavar="PREV.json", help="last night's report: the change against it, and "
                   "'... baseline' rules (a missing file: a first night, said on stderr)")
    p.add_argument("--fail-on", action="append", default=[], metavar="RULE",
                   help="exit 1 when RULE holds, e.g. 'unrecorded_call_rate > 2x baseline', 'error_rate > 5%%', "
                   "'diverged > 10', 'new_groups > 0' (repeatable)")
    p.add_argument("--scheduler", metavar="tcp://HOST:8786", help="an existing Dask scheduler (default "
                   "$DASK_SCHEDULER_ADDRESS, else an embedded local cluster)")
    p.add_argument("--workers", type=int, metavar="N", help="embedded cluster: worker processes (default: the cores)")
    p.add_argument("--resume", action="store_true", help="finish the interrupted job journalled beside --out")
    p.add_argument("--force", action="store_true", help="replace an existing report (or start over a journal)")
    p.add_argument("--llm-endpoint", metavar="URL",
                   help="with --llm live: the model API's base URL, the only place the replay sandbox's relay lets "
                        "the agent reach (default: each worker's $TRACETUI_LLM_ENDPOINT, [tool.tracetui.replay] "
                        "llm_endpoint, $OPENAI_BASE_URL, $ANTHROPIC_BASE_URL)")
    p.add_argument("--redaction-key-file", metavar="FILE", help="the project's redaction key (as for replay)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="what goes to stdout: a short text summary (default), the JSON report, or the Markdown")


def _load_baseline(path: str | None, err: TextIO) -> dict[str, Any] | None:
    if not path:
        return None
    if not os.path.exists(path):
        print(f"tracetui: note: no baseline report at {path} (a first night?): rules against the baseline are not "
              "checked", file=err)
        return None
    try:
        with open(path, "rb") as fh:
            data = orjson.loads(fh.read())
    except OSError as exc:
        raise ReadError(path, f"cannot be read: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise ReadError(path, f"--baseline: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != "tracetui.nightly" or not isinstance(data.get("rates"), dict):
        raise ReadError(path, "--baseline: not a tracetui nightly report (kind tracetui.nightly, with rates)")
    return data


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


class _Progress:
    """A Rich bar on ``err`` when it is a terminal; otherwise nothing."""

    def __init__(self, err: TextIO) -> None:
        self.bar: Any = None
        try:
            tty = bool(err.isatty())
        except (AttributeError, ValueError):
            tty = False
        if tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[tally]}"), TimeRemainingColumn(),
                                console=Console(file=err), transient=True)
            self.task = self.bar.add_task("runs", total=None, tally="")
        self.tally: dict[str, int] = {}

    def __call__(self, done: int, total: int, summary: dict[str, Any]) -> None:
        if self.bar is None:
            return
        self.tally[summary["outcome"]] = self.tally.get(summary["outcome"], 0) + 1
        text = " ".join(f"{k} {v}" for k, v in sorted(self.tally.items()))
        self.bar.update(self.task, completed=done, total=total, tally=text)

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def render_text(report: dict[str, Any]) -> str:
    """A few lines for a terminal or a cron mail: counts, rates, the change, alerts, the top groups."""
    c, r = report["counts"], report["rates"]
    lines = [f"nightly: {report['replays']} replays of {report['sample']['sampled']} runs "
             f"(of {report['sample']['listed']} in {safe(str(report['store']))}): "
             + ", ".join(f"{c[k]} {k}" for k in c),
             f"  unrecorded_call_rate {r['unrecorded_call_rate']:.1%}, write_mismatch_rate {r['write_mismatch_rate']:.1%}"]
    b = report.get("baseline")
    if b is not None:
        if not b["changed"]:
            lines.append("  no change against the baseline")
        for k, (before, after) in b["rate_changes"].items():
            lines.append(f"  {k}: {before:.1%} -> {after:.1%}")
        for t in b["new_groups"]:
            lines.append(f"  new group: {safe(t)}")
    for g in report["groups"][:5]:
        lines.append(f"  {g['count']:>4} x {safe(g['text'])}  e.g. {safe(g['example']['name'])}")
    if len(report["groups"]) > 5:
        lines.append(f"  ... {len(report['groups']) - 5} more groups")
    for a in report["alerts"]:
        if a["triggered"]:
            lines.append(f"ALERT: {safe(a['rule'])} (value {a['value']:g}, threshold {a['threshold']:g})")
    return "\n".join(lines) + "\n"


def run_nightly_cmd(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``tracetui nightly``; exit 0 no rule fired, 1 a rule fired, 2 errors."""
    from tracetui.core.nightly import NightlyConfig, compare, evaluate, journal_path, parse_rule, render_markdown
    from tracetui.core.nightly import run_nightly
    from tracetui.integrations.dask_cluster import DaskExecutor

    rules = [parse_rule(t) for t in args.fail_on]
    md_path = args.markdown or (os.path.splitext(args.out)[0] + ".md")
    for path in (args.out, md_path):
        if os.path.isdir(path):
            raise TracetuiError(f"{path} is a folder; give a file name")
        if os.path.exists(path) and not (args.force or args.resume):
            raise TracetuiError(f"{path} exists; choose another name, pass --force to replace it, or --resume")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise TracetuiError(f"{path}: folder {folder} does not exist")
    baseline = _load_baseline(args.baseline, err)
    config = NightlyConfig(args.store, args.agent, sample=args.sample, seed=str(args.seed),
                           llm=tuple(dict.fromkeys(args.llm or ["frozen"])), trials=args.trials,
                           key_file=args.redaction_key_file, extra={"llm_endpoint": args.llm_endpoint})
    journal = journal_path(args.out)
    with DaskExecutor(args.scheduler, workers=args.workers, what="tracetui nightly") as executor:
        print(f"tracetui: nightly on {executor.describe()}", file=err)
        with _Progress(err) as progress:
            report = run_nightly(config, executor, journal=journal, resume=args.resume, force=args.force,
                                 progress=progress)
    compare(report, baseline, args.baseline)
    code = evaluate(report, rules, baseline)
    _write(args.out, orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    markdown = render_markdown(report)
    _write(md_path, markdown.encode())
    try:
        os.remove(journal)
    except OSError:
        pass
    job = report["job"]
    for statement, n in (job.get("network_isolation") or {}).items():  # what each worker could have
        print(f"tracetui: network isolation: {statement} ({n} replay{'s' * (n != 1)})", file=err)
    print(f"tracetui: {job['replayed_now']} replays in {job['seconds']:.1f} s"
          + (f" ({job['resumed']} finished before, from the journal)" if job["resumed"] else "")
          + f"; report {args.out}, summary {md_path}", file=err)
    if args.format == "json":
        out.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif args.format == "markdown":
        out.write(markdown)
    else:
        out.write(render_text(report))
    out.flush()
    return EXIT_ALERT if code else EXIT_OK
