"""``tracetui triage --batch DIR``: a folder of original/replay pairs, grouped by first divergence.

The core does the work (``tracetui.core.triage.batch``); this module prints it. Exit codes:
0 no case diverged (and every pair was read), 1 at least one case diverged, 2 the
folder does not exist or holds no pair, or no case diverged but some pair could
not be read (nothing can be said about it: not a clean 0).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from tracetui.cli.render import dumps_json, label_text, safe
from tracetui.core.triage.batch import group, scan_folder
from tracetui.core.errors import ReadError

MAX_CASES_SHOWN = 10
"""Case names listed under a group (and under "no divergence") in text before "... and N more"."""

MAX_FIELDS_SHOWN = 6
"""Field paths shown in a group's header line in text before "(+N)"; JSON lists them all."""

PROGRESS_MIN_PAIRS = 20
"""A progress bar is drawn (on a terminal stderr) only for batches of more pairs than this."""

LAYOUTS = ("CASE/original.EXT + CASE/replay.EXT, NAME.original.EXT + NAME.replay.EXT, "
           "or several replays CASE/replay-1.EXT, CASE/replay-2.EXT... beside CASE/original.EXT")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _names(lines: list[str], names: list[str], indent: str = "    ") -> None:
    for name in names[:MAX_CASES_SHOWN]:
        lines.append(indent + name)
    if len(names) > MAX_CASES_SHOWN:
        lines.append(f"{indent}... and {len(names) - MAX_CASES_SHOWN} more")


def _verdict(case: dict[str, Any]) -> str:
    if not case.get("verdict"):
        return ""
    return f"  verdict {case['verdict']}" + (f" ({safe(case['cause'])})" if case.get("cause") else "")


def render_batch_text(report: dict[str, Any]) -> str:
    """The text of a batch report (``BatchReport.to_json()``): a summary line, then each group,
    largest first (count, type, span kind, name, fields; its cases indented, ``MAX_CASES_SHOWN`` at
    most), then the cases without divergence, unreadable pairs and unpaired files."""
    groups = report["groups"]
    diverged = sum(g["count"] for g in groups)
    n_ok, n_err = len(report["no_divergence"]), len(report["errors"])
    summary = f"{safe(report['folder'])}: {_plural(report['cases'], 'pair')}: {diverged} diverged"
    if groups:
        summary += f" in {_plural(len(groups), 'group')}"
    summary += f", {n_ok} with no divergence"
    if n_err:
        summary += f", {n_err} unreadable"
    lines = [summary]
    for g in groups:
        sig = g["signature"]
        name = safe(sig["name"]) if sig["name"] is not None else "-"
        fields = ", ".join(safe(f) for f in sig["fields"][:MAX_FIELDS_SHOWN])
        if len(sig["fields"]) > MAX_FIELDS_SHOWN:
            fields += f" (+{len(sig['fields']) - MAX_FIELDS_SHOWN})"
        lines.append("")
        lines.append(f"{g['count']:>4} × {sig['type']}  {sig['kind']} {name}  [{fields}]")
        shown = []
        for c in g["cases"]:
            shown.append(f"{safe(c['name'])}  (row {c['row']}){_verdict(c)}{label_text(c.get('label'))}")
        _names(lines, shown, "       ")
    if report["no_divergence"]:
        lines.append("")
        lines.append(f"{n_ok:>4} × no divergence")
        _names(lines, [safe(c["name"]) + _verdict(c) for c in report["no_divergence"]], "       ")
    causes = report.get("causes") or []
    if causes:
        lines.append("")
        lines.append("by cause (the verdict and what caused it; one cause may span several groups above):")
        for c in causes:
            split = (f"  — one cause split over {len(c['signatures'])} first-divergence groups by wording"
                     if c["split_by_wording"] else "")
            lines.append(f"{c['count']:>4} × {c['verdict']}  {safe(c['cause'] or '-')}{split}")
            _names(lines, [safe(n) for n in c["cases"]], "       ")
    if report["errors"]:
        lines.append("")
        lines.append(f"unreadable ({n_err}):")
        for e in report["errors"]:
            lines.append(f"  {safe(e['name'])}: {safe(e['message'])}")
    if report["unpaired"]:
        lines.append("")
        lines.append(f"unpaired files ({len(report['unpaired'])}), named as an original or a replay with no partner:")
        _names(lines, [safe(p) for p in report["unpaired"]], "  ")
    for w in report.get("warnings") or []:
        lines.append(f"warning: {safe(w['name'])}: {safe(w['message'])}")
    return "\n".join(lines) + "\n"


class _Bar:
    """A ``rich.progress`` bar on ``err`` (Rich is imported only when a bar is drawn)."""

    def __init__(self, err: TextIO, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("diffing pairs"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=Console(file=err), transient=True,
        )
        self.task = self.progress.add_task("pairs", total=total)

    def __enter__(self) -> Callable[[int, int], None]:
        self.progress.start()
        return lambda done, total: self.progress.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


class _NoBar:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def run_batch(folder: str, fmt: str, out: TextIO, err: TextIO, executor: Any = None) -> int:
    """Group the pairs of ``folder`` by first divergence and print the groups as ``fmt`` ("text" or "json").

    A progress bar is drawn on ``err`` when it is a terminal and there are more than
    ``PROGRESS_MIN_PAIRS`` pairs. ``executor`` (``tracetui.core.execute``; default this process) is
    where the pairs are examined: ``triage --batch --dask`` passes a Dask one.

    Returns:
        0 no case diverged, 1 some did, 2 no such folder / no pair / only unreadable pairs and no
        divergence (module docstring).
    """
    try:
        scan = scan_folder(folder)
    except ReadError as exc:
        print(f"tracetui: error: {exc}", file=err)
        return 2
    if not scan.cases:
        print(f"tracetui: error: {folder}: no original/replay pairs found; expected {LAYOUTS}", file=err)
        if scan.unpaired:
            print(f"tracetui: {len(scan.unpaired)} file(s) pair with nothing: "
                  + ", ".join(safe(p) for p in scan.unpaired[:MAX_CASES_SHOWN])
                  + (" ..." if len(scan.unpaired) > MAX_CASES_SHOWN else ""), file=err)
        return 2
    bar: Any = _Bar(err, len(scan.cases)) if len(scan.cases) > PROGRESS_MIN_PAIRS and _isatty(err) else _NoBar()
    with bar as progress:
        report = group(scan.cases, progress=progress, folder=folder, unpaired=scan.unpaired, executor=executor)
    data = report.to_json()
    if fmt == "json":
        out.write(dumps_json(data))
    else:
        out.write(render_batch_text(data))
    out.flush()
    if report.diverged:
        return 1
    return 2 if report.errors else 0


if __name__ == "__main__":  # pragma: no cover - `python -m tracetui.cli.batch_cmd DIR [json]` until main.py wires it
    sys.exit(run_batch(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "text", sys.stdout, sys.stderr))
