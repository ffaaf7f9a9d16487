"""Promotion: turn a confirmed failure into a golden case ``golden/NAME/`` (docs/golden.md "Promotion").

``promote(original, replay, to, ...)`` writes three files into a new case folder:

- ``trace.jsonl``: the fixture, the original run **redacted before it is written** (the project
  ``Redactor``: stable typed tokens, the same as recording) and **reduced to the causal path**
  (``reduce_trace``): the root and every ancestor of a kept span, the input (the root's), every
  LLM and decision span, every tool/retrieval call (reads after the last decision too: a strict
  replay of the fixed agent makes them; a call of unknown effect is kept as a write). Dropped:
  memory and other spans, duplicate telemetry of a call; each drop is listed in ``case.yaml``. Values are
  copied whole: error bodies, malformed ids and ``output_truncated`` flags stay as they were.
- ``contract.yaml``: clauses derived from the run and its divergence from the fixed replay
  (``derive_contract``; the rules are in its docstring).
- ``case.yaml``: provenance (source file hash, run id, dates, owner, failure statement,
  redactions applied, dropped spans, mode).

The case folder is built in a hidden temporary folder next to it and renamed into place, so a
case is complete or absent; an existing case is never overwritten: promoting other input under
the same name writes the fork ``NAME-fork-2`` (the next free number) with ``parent: NAME``.
Promotion is deterministic and content-addressed: the same run (source file hash and run id),
replay (``source.replay_sha256``) and mode give the same fixture and contract, so promoting them
again writes nothing and returns the case found (``PromotedCase.already``, its date kept).

Pure library: no printing; errors are ``GoldenCaseError`` naming the file, field and fix.

The clauses are derived in ``golden.derive`` (``derive_contract``, ``derive_name``,
``contract_text``, ...; importable from here as before); this module reduces and redacts the
fixture and writes the case.
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from tracetui.core.canonical import canonical_json, canonicalize
from tracetui.core.golden.contract import GoldenCaseError
from tracetui.core.golden.derive import (
    CONTRACT_SCHEMA,
    Derivation,
    contract_text,
    derive_contract,
    derive_name,
    is_fixture_replay,
    parse_contract_text,
    slugify,
)
from tracetui.core.model import Span, SpanKind, Trace
from tracetui.core.readers import split_run_ref
from tracetui.core.readers.native import dumps_trace
from tracetui.core.tempfiles import make_temp_dir

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
REVIEW_DAYS = 90
"""Days from ``created`` to ``review_by``."""

_HEADER_KEPT = frozenset({"schema", "trace_id", "started_at", "start_ns", "clock", "seed", "tool_schema_hash",
                          "prompt_hash", "redaction", "trial", "trials"})
"""Header fields copied without redaction: structural values (ids, hashes, times, the rules that ran)."""
_MISSING_PARENT = "tracetui.missing_parent"
"""Attribute a reader puts on a span whose parent id no span has (docs/format.md, damaged input)."""


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
        already: The same input was promoted before: nothing was written, ``name``/``path`` are
            that case's (``files``, ``contract`` and ``case`` as found there).
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
    already: bool = False




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

    Kept: roots and agent spans; LLM and decision spans; every tool and retrieval call, reads
    after the last LLM or decision span included (a strict replay of the fixed agent is served
    each of them, or it diverges) and calls of unknown effect (no ``effect``, no header
    ``read_tools``: kept as writes, the failing write may be one); every ancestor of a kept span.
    Dropped (with a reason): memory and other spans, a call repeated as duplicate telemetry (same
    call id or times, same content).
    A span whose parent is absent (or dropped) is re-parented to the nearest kept ancestor, else
    to the root, so the fixture reads without warnings.

    Returns:
        ``(spans, dropped, notes)``: the kept spans in ``seq`` order (values untouched), the drops
        as ``{span_id, name, reason}``, and notes (re-parented spans).
    """
    spans = sorted(trace.spans, key=lambda s: s.seq)
    by_id = {s.span_id: s for s in spans}
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
            # Every call is kept: a strict replay of the fixed agent is served each read the original
            # made (also after the last decision), and a call of unknown effect may be the failing write.
            keep.add(s.span_id)
            kept_calls.append(s)
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


def _read_yaml(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except (OSError, ValueError, yaml.YAMLError):
        return None


def _same_input(to_path: str, source: Mapping[str, Any], mode: str, contract_body: bytes,
                payload_sha: str) -> str | None:
    """The name of a case under ``to_path`` promoted from the same input, or None.

    Same input: the same source file hash and run id (or, for a run read from no file, the same
    fixture bytes), the same mode, and the same replay (``source.replay_sha256``; a case written
    before that field existed: the same contract text, the one the replay derived)."""
    try:
        names = sorted(os.listdir(to_path))
    except OSError:
        return None
    for name in names:
        folder = os.path.join(to_path, name)
        meta = _read_yaml(os.path.join(folder, "case.yaml"))
        if name.startswith(".") or not isinstance(meta, Mapping) or meta.get("mode") != mode:
            continue
        src = meta.get("source")
        if not isinstance(src, Mapping):
            continue
        if source.get("sha256"):
            if (src.get("sha256"), src.get("run_id")) != (source.get("sha256"), source.get("run_id")):
                continue
        else:
            try:
                with open(os.path.join(folder, "trace.jsonl"), "rb") as fh:
                    if hashlib.sha256(fh.read()).hexdigest() != payload_sha:
                        continue
            except OSError:
                continue
        if "replay_sha256" in src:
            if src.get("replay_sha256") != source.get("replay_sha256"):
                continue
        else:
            try:
                with open(os.path.join(folder, "contract.yaml"), "rb") as fh:
                    if fh.read() != contract_body:
                        continue
            except OSError:
                continue
        return name
    return None


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
    force: bool = False,
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
        force: Promote a recording that did not end (``incomplete_reason``: a call started and
            never finished, a tracetui recording without its root span); noted in ``notes`` and
            as ``source.incomplete`` in ``case.yaml``.

    Returns:
        The PromotedCase; ``already`` when a case under ``to`` was promoted from the same input
        (nothing written).

    Raises:
        GoldenCaseError: an invalid ``contract`` (field path given), an unknown ``mode``, ``to``
            that is not a folder or cannot be written, an empty run, a recording that did not end
            (without ``force``).
    """
    to_path = os.fspath(to)
    if mode is not None and mode not in ("strict", "fixture"):
        raise GoldenCaseError("case.yaml", f"mode must be strict or fixture, not {mode!r}", where="mode")
    if not original.spans:
        raise GoldenCaseError(original.path or "ORIGINAL", "the run has no spans: nothing to promote")
    from tracetui.core.harness.cassette import incomplete_reason

    incomplete = incomplete_reason(original)
    if incomplete is not None and not force:
        raise GoldenCaseError(original.path or "ORIGINAL", f"the recording did not end ({incomplete}): a case from "
                              "it would test a run cut short; record the run again, or pass --force to promote it as "
                              "it is")
    # pass 1: redact both runs whole (the redactor learns every sensitive value), derive from them
    derivation = derive_redacted(original, replay, redactor)
    notes = list(derivation.notes)
    if incomplete is not None:
        notes.append(f"promoted with --force although the recording did not end: {incomplete}")
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

    source_sha = _sha256(original.path) if src_file else None
    replay_sha = _sha256(replay.path) if replay is not None and replay.path else None
    source_id = {"sha256": source_sha, "run_id": run_id,
                 "replay_sha256": replay_sha if replay is not None else None}
    if replay is not None and replay_sha is None:  # a replay read from no file: its derived contract says it
        source_id["replay_sha256"] = "contract:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    same = _same_input(to_path, source_id, case_mode, text.encode("utf-8"), hashlib.sha256(payload).hexdigest())
    if same is not None:
        folder = os.path.join(to_path, same)
        found = _read_yaml(os.path.join(folder, "case.yaml"))
        found_contract = _read_yaml(os.path.join(folder, "contract.yaml"))
        return PromotedCase(same, folder, found.get("parent") if isinstance(found, Mapping) else None,
                            tuple(os.path.join(folder, f) for f in ("trace.jsonl", "contract.yaml", "case.yaml")),
                            found_contract if isinstance(found_contract, dict) else {},
                            dict(found) if isinstance(found, Mapping) else {}, dropped, {}, len(spans),
                            [*notes, f"already promoted as {same}: nothing written (the same run, replay and mode)"],
                            already=True)

    for case_name, parent in _case_names(base):
        final = os.path.join(to_path, case_name)
        if os.path.lexists(final):
            continue
        case = {
            "schema": CASE_SCHEMA,
            "name": case_name,
            "failure": failure_text,
            "source": {"file": os.path.basename(src_file) or None, "sha256": source_sha,
                       "run_id": run_id, "trace_id": header.get("trace_id") or original.trace_id,
                       "span_count": len(original.spans), "replay_sha256": source_id["replay_sha256"],
                       **({"incomplete": incomplete} if incomplete is not None else {})},
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
            tmp = make_temp_dir(to_path, case_name)  # named by this process: swept after a crash
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
