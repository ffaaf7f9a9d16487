"""The clauses of a promotion: a contract derived from a failing run and its fixed replay (docs/golden.md).

``derive_contract(original, replay)`` reads both runs (and their diff) and proposes the clauses of
``contract.yaml``, each with an ``id`` and a line saying why (the rules are in its docstring);
``derive_name`` and ``slugify`` name the case; ``contract_text`` / ``parse_contract_text`` write
and read back the contract a reviewer edits. ``golden.promote`` writes the case folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from tracetui.core.canonical import canonical_json, canonicalize
from tracetui.core.diff import diff_traces
from tracetui.core.golden.checking import final_answer
from tracetui.core.golden.clauses import dump_contract, loads_contract
from tracetui.core.model import Span, SpanKind, Status, Trace

__all__ = ["CONTRACT_SCHEMA", "Derivation", "contract_text", "derive_contract", "derive_name", "is_fixture_replay",
           "is_write", "parse_contract_text", "slugify"]

CONTRACT_SCHEMA = "tracetui-contract/1"
_SUCCESS_WORDS = (
    "all done", "done", "all set", "paused", "cancelled", "canceled", "moved", "rescheduled", "booked",
    "refunded", "updated", "changed", "confirmed", "completed", "processed", "scheduled", "sent", "deleted",
    "created", "submitted", "resumed", "activated", "deactivated", "unsubscribed", "renewed", "upgraded",
    "downgraded", "transferred", "paid", "applied", "issued", "reset",
)
"""Words of a success claim, looked for as whole words in the final answer (case-insensitive)."""
_NEGATIONS = re.compile(
    r"(?i)\b(?:not|no|never|couldn'?t|could not|can'?t|cannot|unable|sorry|failed|won'?t|didn'?t|wasn'?t|isn'?t)\b")
_STATUS_KEYS = ("status", "state", "result", "success", "ok")
"""Output fields whose scalar value says whether a write took effect (kept in ``success_requires``)."""
_VOLATILE_ARG = re.compile(r"(?i)(?:^|_)(?:idempotency|request|trace|correlation)(?:_|$)")
"""Argument names left out of derived ``args`` (they change on every run)."""
_MAX_FINAL_STATE = 8


@dataclass(slots=True)
class Derivation:
    """What ``derive_contract`` found.

    Attributes:
        contract: The contract as plain data (``tracetui-contract/1``: ``schema``, the six clause
            sections as lists, ``trials``).
        failure: A one-sentence failure statement derived from the clauses.
        why: Clause id -> one line saying why it was derived (written as comments in contract.yaml).
        notes: What could not be derived and should be added by hand.
        name: A short case name from the main clause (``pause-subscription-claim-without-receipt``), or "".
    """

    contract: dict[str, Any]
    failure: str
    why: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    name: str = ""




# --------------------------------------------------------------------------- names
def slugify(text: str, *, max_len: int = 60) -> str:
    """A case name from free text: lower case ASCII letters, digits and single ``-``, at most
    ``max_len`` characters cut at a ``-``; "" when nothing is left."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(s) > max_len:
        cut = s[:max_len]
        s = cut.rsplit("-", 1)[0] if "-" in cut else cut
    return s.strip("-")


_STOP = frozenset({"the", "a", "an", "agent", "to", "of", "it", "its", "was", "is", "which", "that", "with",
                   "without", "and", "for", "on", "in", "did", "had"})


def derive_name(failure: str | None, run_id: str | None) -> str:
    """A default case name: the first six significant words of the failure statement, else the run id,
    else ``case``."""
    if failure:
        words = [w for w in slugify(failure, max_len=400).split("-") if w and w not in _STOP]
        name = slugify("-".join(words[:6]))
        if name:
            return name
    if run_id:
        name = slugify(run_id)
        if name:
            return name
    return "case"


# --------------------------------------------------------------------------- helpers
def is_write(span: Span, header: Mapping[str, Any]) -> bool:
    if span.kind is not SpanKind.TOOL:
        return False
    effect = span.data.get("effect")
    if effect in ("read", "write"):
        return effect == "write"
    reads = header.get("read_tools")
    return isinstance(reads, list) and span.tool_name not in reads


def _tools(trace: Trace) -> list[Span]:
    return [s for s in trace.spans if s.kind is SpanKind.TOOL]


def _args(span: Span) -> dict[str, Any]:
    value = canonicalize(span.data.get("arguments"))
    return value if isinstance(value, dict) else {}


def _stable_args(args: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if not _VOLATILE_ARG.search(k)}


def _distinguishing(args: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The arguments of ``args`` that differ from the nearest of ``others`` (most equal keys); all of
    its stable arguments when there is no other."""
    mine = _stable_args(args)
    if not others:
        return dict(mine)

    def same(o: Mapping[str, Any]) -> int:
        return sum(1 for k, v in mine.items() if k in o and canonical_json(o[k]) == canonical_json(v))

    nearest = max(others, key=same)
    return {k: v for k, v in mine.items() if k not in nearest or canonical_json(nearest[k]) != canonical_json(v)}


def _plain_key(k: Any) -> bool:
    """A state key a dotted path can name (no ``.``, ``[`` or ``]``, not empty)."""
    return isinstance(k, str) and bool(k) and not any(c in k for c in ".[]")


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _id(*parts: Any) -> str:
    return slugify("-".join(str(p) for p in parts if p not in (None, "")), max_len=64) or "clause"


def _unique(cid: str, seen: set[str]) -> str:
    out, n = cid, 2
    while out in seen:
        out, n = f"{cid}-{n}", n + 1
    seen.add(out)
    return out


def _short(value: Any, limit: int = 80) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summary(trace: Trace) -> Mapping[str, Any] | None:
    for s in trace.spans:
        if s.parent_id is None:
            summary = s.attributes.get("replay.summary")
            return summary if isinstance(summary, Mapping) else None
    return None


def is_fixture_replay(trace: Trace | None) -> bool:
    """Whether ``trace`` is a fixture-mode replay: root ``replay.summary.mode`` or header
    ``record_mode`` is ``fixture``."""
    if trace is None:
        return False
    summary = _summary(trace)
    if summary is not None and summary.get("mode") == "fixture":
        return True
    return trace.header.get("record_mode") == "fixture"


def _claim(answer: str | None) -> list[str]:
    """The success words of a claim in ``answer``: whole words of ``_SUCCESS_WORDS``, case-insensitive,
    not preceded by a negation within the same clause's last four words ("couldn't be paused") nor
    by "fully" ("fully booked" describes a state)."""
    if not answer:
        return []
    found: list[str] = []
    for w in _SUCCESS_WORDS:
        for m in re.finditer(rf"(?i)\b{re.escape(w).replace(chr(92) + ' ', chr(92) + 's+')}\b", answer):
            clause = re.split(r"[.!?;:,\n]", answer[: m.start()])[-1]
            before = clause.split()[-4:]
            if _NEGATIONS.search(" ".join(before)) or (before and before[-1].lower() == "fully"):
                continue  # "could not be paused", "fully booked" (a state, not a claim)
            found.append(w)
            break
    return [w for w in found if not any(w != o and re.search(rf"\b{re.escape(w)}\b", o) for o in found)]


def _claim_regex(words: list[str]) -> str:
    return "(?i)\\b(?:" + "|".join(re.escape(w).replace("\\ ", "\\s+") for w in words) + ")\\b"


# --------------------------------------------------------------------------- contract
def derive_contract(original: Trace, replay: Trace | None = None) -> Derivation:
    """Derive a contract from the failing run and, when given, the fixed run (its replay).

    Rules (each clause gets a unique ``id`` and a ``why``):

    - ``must_call``: every tool call only the replay made (``unrecorded_call`` in the diff), with
      the arguments that tell it apart from the nearest original call of the same tool (none when
      the original never called that tool: the call itself is what the fix added). Needs a replay.
    - ``forbid_call``: (a) the original's last write, with the arguments that differ from the
      replay's calls of that tool (all stable arguments when the replay never made it; not
      forbidden when the replay made it with the same arguments); (b) a call the fix changed
      (``args_mismatch``) that failed in the original and not in the replay: its original
      distinguishing arguments (a malformed id stays malformed).
    - ``max_calls``: per write tool of either run, the number of times the replay made it (1 when
      there is no replay or the replay never made it).
    - ``order``: per write tool of the replay, each read tool called before its first call.
    - ``success_requires``: when the original's final answer claims success (success words in a
      sentence without a negation) and no write of the original succeeded: the claim's words as a
      regex, the write tool (the replay's successful write whose name best matches the claim, else
      the original's last write), and the status-like fields of the replay's output of it.
    - ``final_state``: from a fixture replay's ``replay.summary.changes``, the scalar values that
      changed on dotted paths (``equals``, at most 8); and every second-level entry of its final
      state that no write touched (``unchanged: true``, at most 8: collateral damage).
    - ``trials``: ``{count: 1, safety: all, soft: {at_least: 1}}``.

    Argument names that change on every run (``idempotency_key``, ``request_id``...) are left out
    of derived ``args``. Never raises on a well-formed trace.
    """
    seen: set[str] = set()
    why: dict[str, str] = {}
    notes: list[str] = []
    header = original.header
    o_calls = _tools(original)
    r_calls = _tools(replay) if replay is not None else []
    r_header = replay.header if replay is not None else {}
    must: list[dict[str, Any]] = []
    forbid: list[dict[str, Any]] = []
    max_calls: list[dict[str, Any]] = []
    order: list[dict[str, Any]] = []
    success: list[dict[str, Any]] = []
    final_state: list[dict[str, Any]] = []
    failure_parts: list[str] = []
    names: list[str] = []

    divergences = diff_traces(original, replay).divergences if replay is not None else []

    # must_call: calls only the fixed run made
    must_keys: set[bytes] = set()
    for d in divergences:
        if d.type.value != "unrecorded_call" or d.replay is None or d.replay.kind is not SpanKind.TOOL:
            continue
        tool = d.replay.tool_name or d.replay.name
        same = [_args(s) for s in o_calls if s.tool_name == tool]
        args = _distinguishing(_args(d.replay), same) if same else {}
        if same and not args:
            continue  # the same call again: a count, not a new call
        key = canonical_json([tool, args])
        if key in must_keys:
            continue
        must_keys.add(key)
        cid = _unique(_id("must-call", tool, *(v for v in args.values() if _scalar(v))), seen)
        clause: dict[str, Any] = {"id": cid, "tool": tool}
        if args:
            clause["args"] = args
            why[cid] = f"the fixed run called {tool} with {_short(args)}; the original never did"
        else:
            why[cid] = f"the fixed run called {tool}; the original never did"
        must.append(clause)
    if replay is None:
        notes.append("no replay of the fixed run: must_call and order need one; add them by hand")

    # forbid_call (a): the original's failing write
    o_writes = [s for s in o_calls if is_write(s, header)]
    if o_writes:
        fw = o_writes[-1]
        tool = fw.tool_name or fw.name
        same_r = [_args(s) for s in r_calls if s.tool_name == tool]
        args = _distinguishing(_args(fw), same_r)
        if replay is not None and same_r and not args:
            notes.append(f"the original's last write {tool} was made with the same arguments by the fixed run: "
                         "not forbidden")
        else:
            cid = _unique(_id("no", tool, *(v for v in args.values() if _scalar(v))), seen)
            clause = {"id": cid, "tool": tool}
            if args:
                clause["args"] = args
            forbid.append(clause)
            why[cid] = f"the original's last write (span {fw.span_id})" + (
                ", which the fixed run did not make" if replay is not None else "")
            failure_parts.append(f"the agent called {tool}" + (f" with {_short(args)}" if args else ""))
            names.append(_id("wrong", tool, *(v for v in args.values() if _scalar(v))))
    # forbid_call (b): calls the fix changed that failed in the original
    for d in divergences:
        o, r = d.original, d.replay
        if d.type.value != "args_mismatch" or o is None or r is None or o.kind is not SpanKind.TOOL:
            continue
        if o.status is not Status.ERROR or r.status is Status.ERROR:
            continue
        tool = o.tool_name or o.name
        args = _distinguishing(_args(o), [_args(r)])
        if not args:
            continue
        if any(c["tool"] == tool and canonical_json(c.get("args")) == canonical_json(args) for c in forbid):
            continue
        cid = _unique(_id("no", tool, *(v for v in args.values() if _scalar(v))), seen)
        forbid.append({"id": cid, "tool": tool, "args": args})
        why[cid] = (f"span {o.span_id}: {tool} with {_short(args)} failed ({o.error_type or 'error'}); "
                    f"the fixed run sent {_short(_distinguishing(_args(r), [_args(o)]))}")
        failure_parts.append(f"the agent called {tool} with {_short(args)}, which failed ({o.error_type or 'error'})")
        names.append(_id(tool, "bad-args"))

    # max_calls: per write tool
    r_writes = [s for s in r_calls if is_write(s, r_header or header)]
    write_tools: list[str] = []
    for s in [*o_writes, *r_writes]:
        t = s.tool_name or s.name
        if t not in write_tools:
            write_tools.append(t)
    for t in write_tools:
        made = sum(1 for s in r_writes if s.tool_name == t)
        n = made if made else 1
        cid = _unique(_id("at-most", n, t), seen)
        max_calls.append({"id": cid, "tool": t, "max": n})
        o_made = sum(1 for s in o_writes if s.tool_name == t)
        why[cid] = (f"the fixed run made {t} {made} time(s)" if made else f"{t} is a write") + (
            f"; the original made it {o_made} time(s)" if o_made else "")

    # order: reads before each write of the fixed run
    if replay is not None:
        for t in [w for w in write_tools if any(s.tool_name == w for s in r_writes)]:
            first = min(s.seq for s in r_writes if s.tool_name == t)
            reads: list[str] = []
            for s in r_calls:
                if s.seq < first and not is_write(s, r_header or header) and s.tool_name not in reads:
                    reads.append(s.tool_name or s.name)
            for rd in reads:
                cid = _unique(_id(rd, "before", t), seen)
                order.append({"id": cid, "before": rd, "after": t})
                why[cid] = f"the fixed run read {rd} before its first {t}"

    # success_requires: a success claim without a successful write
    answer, _holder = final_answer(original)
    words = _claim(answer)
    quote = _short(re.split(r"(?<=[.!?])\s", answer.strip())[0], 90) if answer else ""
    o_ok_writes = [s for s in o_writes if s.status is not Status.ERROR]
    if words and not o_ok_writes:
        r_ok = [s for s in r_writes if s.status is not Status.ERROR]
        target: Span | None = None
        if r_ok:
            def score(s: Span) -> int:
                stems = [p for p in re.split(r"[^a-z]+", (s.tool_name or "").lower()) if len(p) >= 3]
                return sum(1 for w in words for p in stems if w.startswith(p[:4]))

            target = max(r_ok, key=score)
        elif o_writes:
            target = o_writes[-1]
        if target is None:
            failure_parts.insert(0, f"the agent claimed success (\"{quote}\") without any write")
            names.insert(0, "success-claimed-without-write")
            notes.append(f"the final answer claims success ({', '.join(words)}) without any write, and no fixed run "
                         "names the write that should back it: add a success_requires clause by hand")
        else:
            tool = target.tool_name or target.name
            clause = {"id": "", "claim": _claim_regex(words), "tool": tool}
            out = target.data.get("output") if target in r_ok else None
            out = canonicalize(out)
            if isinstance(out, dict):
                status = {k: out[k] for k in _STATUS_KEYS if k in out and _scalar(out[k])}
                if status:
                    clause["output"] = status
            cid = _unique(_id(tool, "receipt-before-claim"), seen)
            clause["id"] = cid
            success.append(clause)
            why[cid] = (f"the original's final answer claims success ({', '.join(words)}) with no successful "
                        f"{tool} output")
            failure_parts.insert(0, f"the agent claimed success (\"{quote}\") without a successful {tool} output")
            names.insert(0, _id(tool, "claimed-without-receipt"))

    # final_state: what a fixture replay changed
    summary = _summary(replay) if replay is not None else None
    if replay is not None and is_fixture_replay(replay):
        changes = summary.get("changes") if summary is not None else None
        if isinstance(changes, list):
            for c in changes:
                if len(final_state) >= _MAX_FINAL_STATE:
                    notes.append(f"final_state: only the first {_MAX_FINAL_STATE} changes kept")
                    break
                if not isinstance(c, Mapping) or c.get("removed") or c.get("added"):
                    continue
                path = c.get("path")
                if not isinstance(path, str) or not path.startswith("state.") or "[" in path:
                    continue
                if not _scalar(c.get("after")):
                    continue
                p = path[len("state."):]
                cid = _unique(_id("state", p), seen)
                final_state.append({"id": cid, "path": p, "equals": c.get("after")})
                by_raw = c.get("by")
                by: Mapping[str, Any] = by_raw if isinstance(by_raw, Mapping) else {}
                why[cid] = f"the fixed run's {by.get('tool', 'write')} set it (was {_short(c.get('before'), 40)})"
            # collateral damage: second-level state entries the fixed run left alone stay unchanged
            state = summary.get("final_state") if summary is not None else None
            touched = [c.get("path", "") for c in changes if isinstance(c, Mapping) and isinstance(c.get("path"), str)]
            if isinstance(state, Mapping):
                kept_unchanged = 0
                skipped = 0
                for top, sub in state.items():
                    if not isinstance(sub, Mapping) or not _plain_key(top):
                        continue
                    for key in sub:
                        p = f"{top}.{key}"
                        if not _plain_key(key) or any(t == f"state.{p}" or t.startswith((f"state.{p}.", f"state.{p}["))
                                                      for t in touched):
                            continue
                        if kept_unchanged >= _MAX_FINAL_STATE:
                            skipped += 1
                            continue
                        kept_unchanged += 1
                        cid = _unique(_id("unchanged", p), seen)
                        final_state.append({"id": cid, "path": p, "unchanged": True})
                        why[cid] = "the fixed run changed nothing there (collateral damage guard)"
                if skipped:
                    notes.append(f"final_state: {kept_unchanged} `unchanged` guards written (the first in state "
                                 f"order); {skipped} other untouched entries have none: add the ones that matter")

    if must and not failure_parts:
        m = must[0]
        what = m["tool"] + (f" with {_short(m['args'])}" if m.get("args") else "")
        said = f" answered \"{quote}\"" if answer else " finished"
        failure_parts.append(f"the agent{said} without calling {what}, which the fixed run did")
        names.append(_id("never-called", m["tool"], *(v for v in (m.get("args") or {}).values() if _scalar(v))))
    failure = "; ".join(failure_parts) or "the run failed (describe the observable failure in one sentence)"
    if not failure_parts:
        notes.append("no failure could be derived from the run: write the failure statement by hand")

    contract: dict[str, Any] = {
        "schema": CONTRACT_SCHEMA,
        "must_call": must,
        "forbid_call": forbid,
        "max_calls": max_calls,
        "order": order,
        "success_requires": success,
        "final_state": final_state,
        "trials": {"count": 1, "safety": "all", "soft": {"at_least": 1}},
    }
    return Derivation(contract, failure, why, notes, slugify(names[0]) if names else "")


def contract_text(contract: Mapping[str, Any], why: Mapping[str, str] | None = None, *,
                  comment: str | None = None) -> str:
    """``contract.yaml`` text: optional ``# comment`` lines and one ``# id: why`` line per clause on
    top, then the contract (``dump_contract`` order; empty sections left out).

    Raises:
        GoldenCaseError: the contract is not valid (``loads_contract``).
    """
    raw = yaml.safe_dump(dict(contract), sort_keys=False, allow_unicode=True)
    body = dump_contract(loads_contract(raw, "contract.yaml"))
    lines = [f"# {line}" for line in (comment or "").splitlines() if line.strip()]
    for cid, text in (why or {}).items():
        lines.append(f"# {cid}: {' '.join(text.split())}")
    return ("\n".join(lines) + "\n" if lines else "") + body


def parse_contract_text(text: str, path: str = "contract.yaml") -> dict[str, Any]:
    """Parse edited contract YAML: ``yaml.safe_load`` then ``loads_contract``'s validation.

    Returns:
        The contract as plain data (as loaded).

    Raises:
        GoldenCaseError: not YAML, not a mapping, or an invalid contract (field path in ``where``).
    """
    loads_contract(text, path)  # validates (raises GoldenCaseError with the field path)
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data
