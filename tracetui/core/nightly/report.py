"""The nightly report: run summaries aggregated, compared with last night's, judged by alert rules.

``aggregate(summaries, meta)`` builds the report (``schema_version`` 1) from the per-run summaries
(``nightly.task``); it is deterministic in its input (runs sorted by key, groups by size then
signature), so the same job gives the same report whatever ran it; what depends on the run of the
job (times, the executor) is under ``"job"``. ``compare(report, baseline)`` adds the change against
a previous report; ``parse_rule``/``evaluate`` judge ``--fail-on`` rules. Shape::

    {"schema_version": 1, "kind": "tracetui.nightly",
     "store", "agent", "llm": ["frozen", "live"], "trials", "mode",
     "sample": {"requested", "seed", "listed", "sampled", "failed_flagged", "strata": {"agent/tool": [listed, sampled]}},
     "replays": 40,                                   # (run, LLM mode) units
     "counts": {"pass", "diverged", "failed", "incomplete", "error"},
     "rates": {"unrecorded_call_rate", "write_mismatch_rate",      # of the replays that ran (pass+diverged+failed)
               "pass_rate", "diverged_rate", "failed_rate", "incomplete_rate", "error_rate"},   # of all replays
     "by_llm": {"frozen": {"replays", "counts", "rates"}, ...},
     "groups": [{"llm", "signature": {"type", "kind", "name", "fields"}, "text", "count",
                 "verdicts": {"code_or_config_change": 29}, "example": {"name", "path", "row", "original_span_id",
                 "trial"}, "runs": [names, at most MAX_GROUP_RUNS]}],
     "unreadable": [{"name", "llm", "outcome", "stage", "message"}],   # error and incomplete
     "runs": [summary, ...],                          # every summary (no trace)
     "baseline": null | {"path", "replays", "counts", "rates", "rate_changes": {"unrecorded_call_rate": [before, after]},
                         "new_groups": [text], "gone_groups": [text], "grown_groups": [[text, before, after]],
                         "changed": bool},
     "alerts": [{"rule", "metric", "value", "threshold", "triggered", "note"}],
     "exit_code": 0 | 1,
     "job": {"started_at", "finished_at", "seconds", "executor", "replays_per_second", "resumed"}}
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tracetui.core.errors import TracetuiError
from tracetui.core.nightly.task import OUTCOMES

__all__ = ["MAX_GROUP_RUNS", "Rule", "RuleError", "aggregate", "compare", "evaluate", "parse_rule", "render_markdown",
           "signature_text"]

SCHEMA_VERSION = 1
MAX_GROUP_RUNS = 50
"""Run names listed under a group in the JSON report (the count is always whole)."""

RATE_EPSILON = 0.005
"""A rate that moved less than this (half a percentage point) is reported as unchanged."""

METRICS = ("unrecorded_call_rate", "write_mismatch_rate", "pass_rate", "diverged_rate", "failed_rate",
           "incomplete_rate", "error_rate") + OUTCOMES + ("replays", "new_groups")


class RuleError(TracetuiError):
    """A ``--fail-on`` rule that cannot be parsed (what was expected)."""


def signature_text(llm: str, sig: dict[str, Any] | None) -> str:
    """``frozen: args_mismatch tool get_billing_account [tool.arguments.account_id]``; no brackets
    when the signature has no field paths (``frozen: unrecorded_call tool list_open_slots``)."""
    if sig is None:
        return f"{llm}: -"
    text = f"{llm}: {sig['type']} {sig['kind']} {sig['name'] if sig['name'] is not None else '-'}"
    return text + (f" [{', '.join(sig['fields'])}]" if sig["fields"] else "")


def _rates(counts: dict[str, int], runs: list[dict[str, Any]]) -> dict[str, float]:
    total = sum(counts.values())
    ran = counts["pass"] + counts["diverged"] + counts["failed"]
    out = {
        "unrecorded_call_rate": round(sum(1 for r in runs if r["unrecorded_call"]) / ran, 4) if ran else 0.0,
        "write_mismatch_rate": round(sum(1 for r in runs if r["write_mismatch"]) / ran, 4) if ran else 0.0,
    }
    for o in OUTCOMES:
        out[f"{o}_rate"] = round(counts[o] / total, 4) if total else 0.0
    return out


def _counts(runs: Iterable[dict[str, Any]]) -> dict[str, int]:
    c = Counter(r["outcome"] for r in runs)
    return {o: c.get(o, 0) for o in OUTCOMES}


def aggregate(summaries: Iterable[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The report of ``summaries`` (one per (run, LLM mode)); ``meta`` gives ``store``, ``agent``,
    ``llm``, ``trials``, ``mode``, ``sample`` and ``job`` as they are to be reported."""
    runs = sorted(summaries, key=lambda r: r["key"])
    counts = _counts(runs)
    by_llm: dict[str, Any] = {}
    for llm in meta.get("llm") or sorted({r["llm"] for r in runs}):
        mine = [r for r in runs if r["llm"] == llm]
        c = _counts(mine)
        by_llm[llm] = {"replays": len(mine), "counts": c, "rates": _rates(c, mine)}
    groups: dict[str, dict[str, Any]] = {}
    for r in runs:
        if r["outcome"] not in ("diverged", "failed") or r["signature"] is None:
            continue
        text = signature_text(r["llm"], r["signature"])
        g = groups.setdefault(text, {"llm": r["llm"], "signature": r["signature"], "text": text, "count": 0,
                                     "verdicts": Counter(), "example": None, "runs": []})
        g["count"] += 1
        if r["verdict"]:
            g["verdicts"][r["verdict"]] += 1
        if g["example"] is None:
            g["example"] = {"name": r["name"], "path": r["path"], **(r["first"] or {})}
        if len(g["runs"]) < MAX_GROUP_RUNS:
            g["runs"].append(r["name"])
    ordered = sorted(groups.values(), key=lambda g: (-g["count"], g["text"]))
    for g in ordered:
        g["verdicts"] = dict(sorted(g["verdicts"].items(), key=lambda kv: (-kv[1], kv[0])))
    return {
        "schema_version": SCHEMA_VERSION, "kind": "tracetui.nightly",
        "store": meta.get("store"), "agent": meta.get("agent"), "llm": list(meta.get("llm") or by_llm),
        "trials": meta.get("trials"), "mode": meta.get("mode", "strict"), "sample": meta.get("sample"),
        "replays": len(runs), "counts": counts, "rates": _rates(counts, runs), "by_llm": by_llm,
        "groups": ordered,
        "unreadable": [{"name": r["name"], "llm": r["llm"], "outcome": r["outcome"], "stage": r["stage"],
                        "message": r["message"]} for r in runs if r["outcome"] in ("error", "incomplete")],
        "runs": runs, "baseline": None, "alerts": [], "exit_code": 0, "job": meta.get("job") or {},
    }


def compare(report: dict[str, Any], baseline: dict[str, Any] | None, path: str | None = None) -> None:
    """Fill ``report["baseline"]`` with the change against ``baseline`` (a previous report), in place."""
    if baseline is None:
        report["baseline"] = None
        return
    before_rates = baseline.get("rates") or {}
    rate_changes = {k: [before_rates.get(k, 0.0), v] for k, v in report["rates"].items()
                    if abs(v - float(before_rates.get(k, 0.0) or 0.0)) >= RATE_EPSILON}
    old = {g["text"]: g["count"] for g in baseline.get("groups") or []}
    new = {g["text"]: g["count"] for g in report["groups"]}
    report["baseline"] = {
        "path": path, "replays": baseline.get("replays"), "counts": baseline.get("counts"), "rates": before_rates,
        "rate_changes": rate_changes,
        "new_groups": [t for t in new if t not in old],
        "gone_groups": [t for t in old if t not in new],
        "grown_groups": [[t, old[t], n] for t, n in new.items() if t in old and n > old[t]],
    }
    b = report["baseline"]
    b["changed"] = bool(rate_changes or b["new_groups"] or b["gone_groups"] or b["grown_groups"])


_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}
_RULE = re.compile(r"^\s*(?P<metric>[a-z_]+)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<rhs>.+?)\s*$")
_RHS = re.compile(r"^(?:(?P<num>\d+(?:\.\d+)?)(?P<pct>%)?"
                  r"|(?:(?P<mul>\d+(?:\.\d+)?)\s*x\s*)?baseline(?:\s*(?P<sign>[+-])\s*(?P<add>\d+(?:\.\d+)?)(?P<apct>%)?)?)$")


@dataclass(frozen=True, slots=True)
class Rule:
    """``METRIC OP RHS``: RHS a number (``0.05``, ``5%``), or ``[Nx] baseline [+|- M[%]]``."""

    text: str
    metric: str
    op: str
    number: float | None = None
    factor: float = 1.0
    offset: float = 0.0

    @property
    def uses_baseline(self) -> bool:
        return self.number is None


def parse_rule(text: str) -> Rule:
    """Parse one ``--fail-on`` rule.

    Raises:
        RuleError: not ``METRIC OP VALUE``, an unknown metric, or a value that is neither a number
            nor ``[Nx] baseline [+ M]``.
    """
    m = _RULE.match(text)
    if m is None:
        raise RuleError(f"--fail-on {text!r}: expected METRIC OP VALUE, for example "
                        "'unrecorded_call_rate > 2x baseline' or 'error_rate > 5%'")
    metric, op, rhs = m["metric"], m["op"], m["rhs"].lower()
    if metric not in METRICS:
        raise RuleError(f"--fail-on {text!r}: unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    r = _RHS.match(rhs)
    if r is None:
        raise RuleError(f"--fail-on {text!r}: {m['rhs']!r} is neither a number (0.05, 5%) nor "
                        "'[Nx] baseline [+ M]' (2x baseline, baseline + 1%)")
    if r["num"] is not None:
        n = float(r["num"]) / (100 if r["pct"] else 1)
        return Rule(text.strip(), metric, op, number=n)
    add = float(r["add"]) / (100 if r["apct"] else 1) if r["add"] else 0.0
    return Rule(text.strip(), metric, op, factor=float(r["mul"]) if r["mul"] else 1.0,
                offset=-add if r["sign"] == "-" else add)


def _metric(report: dict[str, Any], name: str) -> float:
    if name in report["rates"]:
        return float(report["rates"][name])
    if name in report["counts"]:
        return float(report["counts"][name])
    if name == "replays":
        return float(report["replays"])
    if name == "new_groups":
        b = report.get("baseline")
        return float(len(b["new_groups"])) if b else 0.0
    raise RuleError(f"unknown metric {name!r}")


def _baseline_metric(baseline: dict[str, Any], name: str) -> float:
    if name == "new_groups":
        return 0.0
    for where in ("rates", "counts"):
        if name in (baseline.get(where) or {}):
            return float(baseline[where][name])
    return float(baseline.get(name) or 0.0)


def evaluate(report: dict[str, Any], rules: Iterable[Rule], baseline: dict[str, Any] | None) -> int:
    """Judge ``rules`` on ``report`` (with ``baseline`` for ``... baseline`` rules), fill
    ``report["alerts"]`` and ``report["exit_code"]`` (1 when a rule is triggered), and return it.
    A rule against a baseline when there is none is not triggered; its ``note`` says so."""
    alerts = []
    for rule in rules:
        value = _metric(report, rule.metric)
        note = None
        if rule.uses_baseline:
            if baseline is None:
                alerts.append({"rule": rule.text, "metric": rule.metric, "value": value, "threshold": None,
                               "triggered": False, "note": "no baseline report: rule not checked"})
                continue
            threshold = _baseline_metric(baseline, rule.metric) * rule.factor + rule.offset
            note = f"baseline {_baseline_metric(baseline, rule.metric):g}"
        else:
            threshold = rule.number if rule.number is not None else 0.0
        alerts.append({"rule": rule.text, "metric": rule.metric, "value": value, "threshold": round(threshold, 6),
                       "triggered": bool(_OPS[rule.op](value, threshold)), "note": note})
    report["alerts"] = alerts
    report["exit_code"] = 1 if any(a["triggered"] for a in alerts) else 0
    return report["exit_code"]


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _md(text: Any) -> str:
    """Text safe in a Markdown table cell or list item (pipes, backticks, newlines)."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "'").replace("\n", " ")


def render_markdown(report: dict[str, Any], max_groups: int = 10) -> str:
    """The summary a team can post: outcome counts, rates with their change, alerts, the largest
    groups with an example run each, unreadable runs."""
    lines: list[str] = []
    c, rates = report["counts"], report["rates"]
    b = report.get("baseline")
    status = "ALERT" if report.get("exit_code") else "OK"
    lines.append(f"## Nightly replay: {status}")
    lines.append("")
    sample = report.get("sample") or {}
    lines.append(f"`{_md(report['agent'])}` on {report['replays']} replays ({', '.join(report['llm'])}"
                 + (f", {report['trials']} trials live" if "live" in report["llm"] else "")
                 + f") of {sample.get('sampled', '?')} runs sampled from {sample.get('listed', '?')} "
                 f"in `{_md(report['store'])}` (seed {_md(sample.get('seed'))}).")
    isolation = (report.get("job") or {}).get("network_isolation") or {}
    if isolation:  # where the agents ran: a network namespace, or the in-process guard alone
        lines.append("Network isolation: " + "; ".join(f"{_md(k)} ({v})" for k, v in isolation.items()) + ".")
    lines.append("")
    lines.append("| outcome | runs | share |" + (" baseline |" if b else ""))
    lines.append("|---|---:|---:|" + ("---:|" if b else ""))
    for o in OUTCOMES:
        row = f"| {o} | {c[o]} | {_pct(rates[f'{o}_rate'])} |"
        if b:
            row += f" {(b.get('counts') or {}).get(o, '-')} |"
        lines.append(row)
    lines.append("")
    for name in ("unrecorded_call_rate", "write_mismatch_rate"):
        text = f"- **{name}**: {_pct(rates[name])}"
        if b:
            before = float((b.get("rates") or {}).get(name, 0.0) or 0.0)
            text += f" (baseline {_pct(before)}" + (", **changed**)" if name in b["rate_changes"] else ", unchanged)")
        lines.append(text)
    lines.append("")
    if b is not None:
        if not b["changed"]:
            lines.append("No change against the baseline.")
        else:
            for t in b["new_groups"]:
                lines.append(f"- new group: `{_md(t)}`")
            for t, before, after in b["grown_groups"]:
                lines.append(f"- grown: `{_md(t)}` {before} -> {after}")
            for t in b["gone_groups"]:
                lines.append(f"- gone: `{_md(t)}`")
        lines.append("")
    for a in report.get("alerts") or []:
        mark = "FAILED" if a["triggered"] else "ok"
        thr = "-" if a["threshold"] is None else f"{a['threshold']:g}"
        lines.append(f"- rule `{_md(a['rule'])}`: **{mark}** (value {a['value']:g}, threshold {thr}"
                     + (f", {_md(a['note'])}" if a.get("note") else "") + ")")
    if report.get("alerts"):
        lines.append("")
    if report["groups"]:
        lines.append("| runs | first divergence | verdicts | example |")
        lines.append("|---:|---|---|---|")
        for g in report["groups"][:max_groups]:
            ex = g["example"] or {}
            verdicts = ", ".join(f"{k} {v}" for k, v in g["verdicts"].items()) or "-"
            where = f" row {ex['row']}" if ex.get("row") is not None else ""
            lines.append(f"| {g['count']} | `{_md(g['text'])}` | {_md(verdicts)} | `{_md(ex.get('name'))}`{where} |")
        if len(report["groups"]) > max_groups:
            lines.append(f"| … | {len(report['groups']) - max_groups} more groups in the JSON report | | |")
        lines.append("")
    if report["unreadable"]:
        lines.append(f"Not replayed ({len(report['unreadable'])}):")
        for u in report["unreadable"][:max_groups]:
            lines.append(f"- {u['outcome']} `{_md(u['name'])}` ({u['llm']}): {_md(u['message'])[:200]}")
        if len(report["unreadable"]) > max_groups:
            lines.append(f"- … and {len(report['unreadable']) - max_groups} more")
        lines.append("")
    return "\n".join(lines)
