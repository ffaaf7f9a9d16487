"""Promotion: turn a confirmed failure into a golden case ``golden/NAME/`` (docs/golden.md "Promotion").

``promote(original, replay, to, ...)`` writes three files into a new case folder:

- ``trace.jsonl``: the fixture, the original run **redacted before it is written** (the project
  ``Redactor``: stable typed tokens, the same as recording) and **reduced to the causal path**
  (``reduce_trace``): the root and every ancestor of a kept span, the input (the root's), every
  LLM and decision span, every tool/retrieval call that started before the last decision (its
  output could feed it), every write. Dropped: memory and other spans, calls after the last
  decision, duplicate telemetry of a call; each drop is listed in ``case.yaml``. Values are
  copied whole: error bodies, malformed ids and ``output_truncated`` flags stay as they were.
- ``contract.yaml``: clauses derived from the run and its divergence from the fixed replay
  (``derive_contract``; the rules are in its docstring).
- ``case.yaml``: provenance (source file hash, run id, dates, owner, failure statement,
  redactions applied, dropped spans, mode).

The case folder is built in a hidden temporary folder next to it and renamed into place, so a
case is complete or absent; an existing case is never overwritten: promoting again under the
same name writes the fork ``NAME-fork-2`` (the next free number) with ``parent: NAME``.

Pure library: no printing; errors are ``GoldenCaseError`` naming the file, field and fix.

Size: promotion of a failure into a golden case end to end; the split (clauses / files) is still open (issue 17).
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from tracetui.core.canonical import canonical_json, canonicalize
from tracetui.core.diff import diff_traces
from tracetui.core.golden.contract import GoldenCaseError, dump_contract, final_answer, loads_contract
from tracetui.core.model import Span, SpanKind, Status, Trace
from tracetui.core.readers import split_run_ref
from tracetui.core.readers.native import dumps_trace

__all__ = [
    "CASE_SCHEMA",
    "CONTRACT_SCHEMA",
    "Derivation",
    "GoldenCaseError",
    "PromotedCase",
    "REVIEW_DAYS",
    "contract_text",
    "derive_contract",
    "derive_name",
    "derive_redacted",
    "is_fixture_replay",
    "parse_contract_text",
    "promote",
    "redact_trace",
    "reduce_trace",
    "slugify",
]

CASE_SCHEMA = "tracetui-case/1"
CONTRACT_SCHEMA = "tracetui-contract/1"
REVIEW_DAYS = 90
"""Days from ``created`` to ``review_by``."""

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
_HEADER_KEPT = frozenset({"schema", "trace_id", "started_at", "start_ns", "clock", "seed", "tool_schema_hash",
                          "prompt_hash", "redaction", "trial", "trials"})
"""Header fields copied without redaction: structural values (ids, hashes, times, the rules that ran)."""
_MAX_FINAL_STATE = 8
_MISSING_PARENT = "tracetui.missing_parent"
"""Attribute a reader puts on a span whose parent id no span has (docs/format.md, damaged input)."""


# --------------------------------------------------------------------------- results
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


@dataclass(slots=True)
class PromotedCase:
    """A case ``promote`` wrote.

    Attributes:
        name: The case folder's name (a fork: ``NAME-fork-N``).
        path: The case folder.
        parent: The case this one forks (the name asked for, taken), or None.
        files: The three files written (paths).
        contract: The contract written (plain data).
        case: ``case.yaml`` as written (plain data).
        dropped: Spans left out of the fixture: ``{span_id, name, reason}``.
        redactions: Rule -> values replaced while promoting (``Redactor.fired`` difference).
        kept: Spans in the fixture.
        notes: What the reader should check or add.
    """

    name: str
    path: str
    parent: str | None
    files: tuple[str, ...]
    contract: dict[str, Any]
    case: dict[str, Any]
    dropped: list[dict[str, Any]]
    redactions: dict[str, int]
    kept: int
    notes: list[str] = field(default_factory=list)


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
def _is_write(span: Span, header: Mapping[str, Any]) -> bool:
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
    o_writes = [s for s in o_calls if _is_write(s, header)]
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
    r_writes = [s for s in r_calls if _is_write(s, r_header or header)]
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
                if s.seq < first and not _is_write(s, r_header or header) and s.tool_name not in reads:
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


# --------------------------------------------------------------------------- fixture
def _duplicate_of(span: Span, kept: list[Span]) -> Span | None:
    """An earlier call this span duplicates as telemetry: same call id (or same times), same kind,
    arguments, output and status."""
    if span.kind not in (SpanKind.TOOL, SpanKind.RETRIEVAL):
        return None
    cid = span.data.get("call_id")
    for k in kept:
        if k.kind is not span.kind or k.name != span.name or k.status is not span.status:
            continue
        same_id = cid is not None and k.data.get("call_id") == cid
        same_time = span.start_ns is not None and k.start_ns == span.start_ns and k.end_ns == span.end_ns
        if not (same_id or same_time):
            continue
        if canonical_json(canonicalize(dict(k.data))) == canonical_json(canonicalize(dict(span.data))):
            return k
    return None


def reduce_trace(trace: Trace) -> tuple[list[Span], list[dict[str, Any]], list[str]]:
    """The causal path of a run (not redacted: ``promote`` redacts).

    Kept: roots and agent spans; LLM and decision spans; tool and retrieval calls that started
    before the last LLM or decision span; every write (the failing write among them); every
    ancestor of a kept span. Dropped (with a reason): memory and other spans, calls after the last
    decision, a call repeated as duplicate telemetry (same call id or times, same content).
    A span whose parent is absent (or dropped) is re-parented to the nearest kept ancestor, else
    to the root, so the fixture reads without warnings.

    Returns:
        ``(spans, dropped, notes)``: the kept spans in ``seq`` order (values untouched), the drops
        as ``{span_id, name, reason}``, and notes (re-parented spans).
    """
    spans = sorted(trace.spans, key=lambda s: s.seq)
    by_id = {s.span_id: s for s in spans}
    decisions = [s.seq for s in spans if s.kind in (SpanKind.LLM, SpanKind.DECISION)]
    last_decision = max(decisions) if decisions else None
    keep: set[str] = set()
    reasons: dict[str, str] = {}
    kept_calls: list[Span] = []
    for s in spans:
        if s.parent_id is None or s.kind in (SpanKind.AGENT, SpanKind.LLM, SpanKind.DECISION):
            keep.add(s.span_id)
            continue
        if s.kind in (SpanKind.TOOL, SpanKind.RETRIEVAL):
            dup = _duplicate_of(s, kept_calls)
            if dup is not None:
                reasons[s.span_id] = f"duplicate telemetry of span {dup.span_id}"
                continue
            if _is_write(s, trace.header):
                keep.add(s.span_id)
                kept_calls.append(s)
                continue
            if last_decision is not None and s.seq < last_decision:
                keep.add(s.span_id)
                kept_calls.append(s)
                continue
            reasons[s.span_id] = ("a read after the last decision (seq %d): its output fed no decision" % last_decision
                                  if last_decision is not None else "a read in a run with no decision")
            continue
        reasons[s.span_id] = f"{s.kind.value} span: not on the causal path"
    # ancestors of kept spans
    for sid in list(keep):
        cur = by_id[sid].parent_id
        guard = 0
        while cur is not None and cur in by_id and guard < len(spans):
            if cur not in keep:
                keep.add(cur)
                reasons.pop(cur, None)
            cur = by_id[cur].parent_id
            guard += 1
    kept = [s for s in spans if s.span_id in keep]
    # orphans: a reader keeps a span whose parent is absent as a root, marked with the missing id
    roots = [s for s in kept if s.parent_id is None and _MISSING_PARENT not in s.attributes]
    root_id = roots[0].span_id if roots else None
    notes: list[str] = []
    out: list[Span] = []
    for s in kept:
        missing = s.attributes.get(_MISSING_PARENT) if s.parent_id is None else None
        if s.parent_id is None and missing is None:
            out.append(s)
            continue
        if s.parent_id is not None and s.parent_id in keep:
            out.append(s)
            continue
        attrs = {k: v for k, v in s.attributes.items() if k != _MISSING_PARENT}
        if root_id is None or root_id == s.span_id:
            root_id = s.span_id
            out.append(replace(s, parent_id=None, attributes=attrs))
            notes.append(f"span {s.span_id} ({s.name}) had parent {missing or s.parent_id}, absent from the run; "
                         "it is the fixture's root")
            continue
        notes.append(f"span {s.span_id} ({s.name}) had parent {missing or s.parent_id}, absent from the run; "
                     f"re-parented to the root {root_id}")
        out.append(replace(s, parent_id=root_id, attributes=attrs))
    dropped = [{"span_id": s.span_id, "name": s.name, "reason": reasons[s.span_id]}
               for s in spans if s.span_id not in keep]
    return out, dropped, notes


def _redact_span(span: Span, redactor: Any) -> Span:
    tool = span.tool_name if span.kind is SpanKind.TOOL else None
    data = redactor.value(dict(span.data), tool=tool)
    attributes = redactor.value(dict(span.attributes)) if span.attributes else {}
    return replace(span, name=redactor.text(span.name), data=data, attributes=attributes)


def _redact_header(header: Mapping[str, Any], redactor: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in header.items():
        out[k] = v if k in _HEADER_KEPT else redactor.value(v)
    return out


def redact_trace(trace: Trace, redactor: Any) -> Trace:
    """A copy of ``trace`` with its header (but ids, hashes, times and the redaction record) and every
    span's name, data and attributes redacted by ``redactor``, in ``seq`` order (so values a
    sensitive field reveals are remembered for the spans after it)."""
    header = _redact_header(trace.header, redactor)
    spans = [_redact_span(s, redactor) for s in sorted(trace.spans, key=lambda s: s.seq)]
    return replace(trace, header=header, spans=spans, issues=list(trace.issues))


def derive_redacted(original: Trace, replay: Trace | None, redactor: Any) -> Derivation:
    """``derive_contract`` on redacted copies of both runs: derived arguments, quotes and names hold
    tokens, never the raw values (what the TUI shows before writing). Teaches ``redactor`` every
    value a sensitive field reveals in either run."""
    red_o = redact_trace(original, redactor)
    red_r = redact_trace(replay, redactor) if replay is not None else None
    return derive_contract(red_o, red_r)


# --------------------------------------------------------------------------- writing
def _sha256(path: str) -> str | None:
    file, _run = split_run_ref(path)
    try:
        h = hashlib.sha256()
        with open(file, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def _write_file(folder: str, name: str, data: bytes) -> str:
    path = os.path.join(folder, name)
    with open(path, "xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def _case_names(base: str) -> Any:
    yield base, None
    n = 2
    while True:
        yield f"{base}-fork-{n}", base
        n += 1


def promote(
    original: Trace,
    replay: Trace | None,
    to: str | os.PathLike[str],
    *,
    name: str | None,
    failure: str | None,
    owner: str | None,
    redactor: Any,
    contract: Mapping[str, Any] | None = None,
    mode: str | None = None,
    agent: str | None = None,
    seed: Any = None,
    today: _dt.date | None = None,
) -> PromotedCase:
    """Write the golden case ``to/NAME/`` (``trace.jsonl``, ``contract.yaml``, ``case.yaml``).

    Args:
        original: The failing run (any format tracetui reads; its ``path`` is hashed for provenance).
        replay: The fixed run (a replay of it), or None. Decides the derived clauses and the default
            mode: ``fixture`` for a fixture-mode replay, else ``strict``.
        to: The golden folder (created when absent).
        name: The case name (slugified); default derived from the failure statement, else the run id.
        failure: The observable failure in one sentence; default derived from the contract.
        owner: Who owns the case; default ``$USER`` (or ``unknown``).
        redactor: A ``tracetui.core.harness.Redactor`` with the project key: applied to every span's
            data, attributes and name and to the header before any byte is written. Its ``fired``
            difference is the case's ``redactions``.
        contract: The contract to write (plain data, e.g. edited in the TUI); default ``derive_contract``.
        mode: ``strict`` or ``fixture`` (how ``golden run`` replays the agent); default from ``replay``.
        agent: The default AGENT for ``golden run`` (``module:function``), or None.
        seed: A fixture seed (JSON value, e.g. ``--seed-file``'s content), written redacted as
            ``seed.json`` and named in ``seed_file``; None: no seed.
        today: The creation date (default: today, local time).

    Returns:
        The PromotedCase.

    Raises:
        GoldenCaseError: an invalid ``contract`` (field path given), an unknown ``mode``, ``to``
            that is not a folder or cannot be written, an empty run.
    """
    to_path = os.fspath(to)
    if mode is not None and mode not in ("strict", "fixture"):
        raise GoldenCaseError("case.yaml", f"mode must be strict or fixture, not {mode!r}", where="mode")
    if not original.spans:
        raise GoldenCaseError(original.path or "ORIGINAL", "the run has no spans: nothing to promote")
    # pass 1: redact both runs whole (the redactor learns every sensitive value), derive from them
    derivation = derive_redacted(original, replay, redactor)
    notes = list(derivation.notes)
    why: Mapping[str, str] = derivation.why
    if contract is None:
        contract_data: dict[str, Any] = derivation.contract
    else:
        contract_data = dict(contract)
        why = {k: v for k, v in derivation.why.items() if any(
            isinstance(c, Mapping) and c.get("id") == k for sec in contract_data.values() if isinstance(sec, list)
            for c in sec)}
    # pass 2: redact what is written, from the raw values, counting what fired
    before = redactor.fired
    header = _redact_header(original.header, redactor)
    kept, dropped, reduce_notes = reduce_trace(original)
    notes.extend(reduce_notes)
    spans = [_redact_span(s, redactor) for s in kept]
    failure_text = redactor.text(" ".join((failure or derivation.failure).split()))
    seed_value = redactor.value(seed) if seed is not None else None
    if contract is not None:
        contract_data = redactor.value(contract_data)
    dropped = [{**d, "name": redactor.text(d["name"])} for d in dropped]
    after = redactor.fired
    redactions = {r: after[r] - before.get(r, 0) for r in after if after[r] - before.get(r, 0) > 0}
    src_key = original.header.get("redaction", {}).get("key_id") if isinstance(
        original.header.get("redaction"), Mapping) else None
    if src_key and getattr(redactor, "key_id", None) and src_key != redactor.key_id:
        notes.append(f"the source was redacted with key {src_key}, promotion used key {redactor.key_id}: "
                     "raw values found now get this key's tokens")

    text = contract_text(contract_data, why, comment=(
        f"derived by tracetui promote from {os.path.basename(split_run_ref(original.path)[0]) or 'the run'}"
        + (f" and {os.path.basename(split_run_ref(replay.path)[0]) or 'its replay'}" if replay is not None else "")
        + "; edit freely (docs/golden.md)"))

    run_id = header.get("run_id") if isinstance(header.get("run_id"), str) else None
    if name:
        base = slugify(name)
    elif failure or not derivation.name:
        base = derive_name(failure_text, run_id)
    else:
        base = derivation.name
    if not base:
        raise GoldenCaseError("case.yaml", f"name {name!r} has no letters or digits; give another --name",
                              where="name")
    case_mode = mode or ("fixture" if is_fixture_replay(replay) else "strict")
    created = today or _dt.date.today()
    src_file = split_run_ref(original.path)[0] if original.path else ""
    header["promoted"] = {"source_sha256": _sha256(original.path) if original.path else None,
                          "spans_in_source": len(original.spans), "spans_dropped": len(dropped),
                          "redaction_key_id": getattr(redactor, "key_id", None)}
    payload = dumps_trace(header, spans)

    try:
        os.makedirs(to_path, exist_ok=True)
    except OSError as exc:
        raise GoldenCaseError(to_path, f"cannot create the golden folder ({exc.strerror or exc}); "
                              "choose another --to") from None
    if not os.path.isdir(to_path):
        raise GoldenCaseError(to_path, "is not a folder; choose another --to")

    for case_name, parent in _case_names(base):
        final = os.path.join(to_path, case_name)
        if os.path.lexists(final):
            continue
        case = {
            "schema": CASE_SCHEMA,
            "name": case_name,
            "failure": failure_text,
            "source": {"file": os.path.basename(src_file) or None, "sha256": _sha256(original.path) if src_file else None,
                       "run_id": run_id, "trace_id": header.get("trace_id") or original.trace_id,
                       "span_count": len(original.spans)},
            "created": created.isoformat(),
            "owner": owner or os.environ.get("USER") or os.environ.get("USERNAME") or "unknown",
            "review_by": (created + _dt.timedelta(days=REVIEW_DAYS)).isoformat(),
            "schema_version": 1,
            "parent": parent,
            "mode": case_mode,
            "agent": agent,
            "seed_file": "seed.json" if seed_value is not None else None,
            "redactions": redactions,
            "dropped_spans": dropped,
        }
        try:
            tmp = tempfile.mkdtemp(prefix=f".{case_name}.", suffix=".promote-tmp", dir=to_path)
        except OSError as exc:
            raise GoldenCaseError(to_path, f"cannot write there ({exc.strerror or exc})") from None
        try:
            _write_file(tmp, "trace.jsonl", payload)
            _write_file(tmp, "contract.yaml", text.encode("utf-8"))
            _write_file(tmp, "case.yaml", yaml.safe_dump(case, sort_keys=False, allow_unicode=True,
                                                         width=120).encode("utf-8"))
            if seed_value is not None:
                import json

                _write_file(tmp, "seed.json", (json.dumps(seed_value, indent=2, ensure_ascii=False) + "\n").encode())
            os.chmod(tmp, 0o777 & ~_umask())
            if os.path.lexists(final):  # appeared meanwhile: never replace it
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            try:
                os.rename(tmp, final)
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    continue
                raise GoldenCaseError(final, f"cannot create the case folder ({exc.strerror or exc})") from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        files = tuple(os.path.join(final, f) for f in ("trace.jsonl", "contract.yaml", "case.yaml"))
        return PromotedCase(case_name, final, parent, files, yaml.safe_load(text), case, dropped, redactions,
                            len(spans), notes)
    raise AssertionError("unreachable")  # pragma: no cover


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
