"""Many cases at once: find original/replay pairs in a folder, diff each, group them by first divergence.

"When many cases fail after a change, group them by first divergence"
(``../shared/design/practice.md``, "Diffing runs"); issue 5, item 6. Each pair is
read and diffed as ``tracetui diff ORIGINAL REPLAY`` would (``read_trace``,
``read_replay``, ``diff_traces``), and its first divergence reduced to a
``signature``: cases with the same signature most likely share one cause.

Folder layouts (``scan_folder``), searched recursively; dot-files, dot-folders
and label sidecars (``*.labels.json``) are skipped; ``EXT`` is anything a reader
recognises (``jsonl``, ``json``, ``otlp.json``...; the format is sniffed from the
content, never from the extension):

- ``CASE/original.EXT`` + ``CASE/replay.EXT``: one case named ``CASE`` (its path
  under the folder, ``/``-separated; the folder itself when the files sit at its
  top).
- ``NAME.original.EXT`` + ``NAME.replay.EXT`` in any folder: one case named
  ``NAME`` (``SUB/NAME`` below the top).
- several replays of one original (``replay-1.EXT``, ``replay-2.EXT``, or
  ``replay_N``; ``NAME.replay-1.EXT`` likewise): one case per replay, named
  ``CASE/replay-1``. When one folder holds originals in several formats
  (``original.jsonl`` and ``original.otlp.json``), each replay pairs with the
  original of the same ``EXT``, and cases are named ``CASE/replay.EXT``.
- a file named as an original or a replay that pairs with nothing is
  ``unpaired``: reported, never fatal. Other files (notes, fixtures, agent
  code) are ignored.

JSON shape (``BatchReport.to_json``, ``schema_version`` 1)::

    {"schema_version": 1,
     "folder": "runs/",
     "cases": 26,                                  # pairs found
     "groups": [                                   # largest first, ties by signature text
        {"signature": {"type": "args_mismatch", "kind": "tool", "name": "get_billing_account",
                       "fields": ["tool.arguments.account_id"]},
         "count": 9,
         "cases": [{"name", "original", "replay",  # file paths as found under "folder"
                    "row",                         # row of the first divergence (tracetui diff's numbering)
                    "original_span_id", "replay_span_id",   # null on the missing side
                    "divergences",                 # how many the pair has in all
                    "label",                       # the reviewer label of the first divergence, or null
                    "verdict",                     # tracetui.core.triage's verdict on the pair, or null
                    "cause"}]},                    # the verdict's cause ("config model.id", "data tool x"), or null
        ...],
     "causes": [                                   # the diverged cases grouped by cause, largest first
        {"verdict", "cause", "count", "cases": [names],
         "signatures": [signature texts],          # the first-divergence groups the cause spans
         "split_by_wording": bool}],               # one cause split over several signatures
     "no_divergence": [{"name", "original", "replay", "verdict"}],
     "errors": [{"name", "path", "message"}],      # a pair that could not be read or diffed
     "unpaired": ["runs/x/original.jsonl", ...],
     "warnings": [{"name", "message"}]}            # e.g. a damaged labels sidecar (labels not shown)

Reading failures never stop the batch: each is an ``errors`` entry.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracetui.core.errors import ReadError, TracetuiError
from tracetui.core.execute import Executor, SerialExecutor

if TYPE_CHECKING:
    from tracetui.core.diff import Divergence
    from tracetui.core.diff.labels import Label
    from tracetui.core.model import Trace

__all__ = [
    "BatchReport",
    "Case",
    "CaseError",
    "CaseResult",
    "Group",
    "Scan",
    "Signature",
    "batch",
    "examine",
    "find_pairs",
    "group",
    "scan_folder",
    "signature",
    "signature_text",
]

Signature = tuple[str, str, str | None, tuple[str, ...]]
"""``(divergence type, span kind, tool or model name or None, sorted normalised field paths)``."""

NO_DIVERGENCE = "no divergence"
"""What a pair without divergence is grouped as (``BatchReport.no_divergence``)."""

_ROLE = re.compile(r"^(?:(?P<stem>.+?)\.)?(?P<role>original|replay(?:[-_][A-Za-z0-9]+)?)\.(?P<ext>.+)$")
_INDEX = re.compile(r"\[\d+\]")
_SIDECAR = ".labels.json"


@dataclass(frozen=True, slots=True)
class Case:
    """One original/replay pair of a batch folder.

    Attributes:
        name: The case's name (module docstring: from its folder, its ``NAME.`` prefix, its replay).
        original: Path of the original trace (the batch folder joined with its place under it).
        replay: Path of the replay trace.
    """

    name: str
    original: str
    replay: str


@dataclass(slots=True)
class Scan:
    """What ``scan_folder`` found.

    Attributes:
        folder: The folder, as given.
        cases: The pairs, by name (numbers in names in numeric order: ``case-2`` before ``case-10``).
        unpaired: Files named as an original or a replay that pair with nothing, sorted.
    """

    folder: str
    cases: list[Case]
    unpaired: list[str]


def _natural(text: str) -> list[Any]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text) if p]


def scan_folder(folder: str) -> Scan:
    """Find the original/replay pairs under ``folder`` (layouts in the module docstring).

    Raises:
        ReadError: ``folder`` does not exist or is not a folder.
    """
    if not os.path.exists(folder):
        raise ReadError(folder, "no such folder")
    if not os.path.isdir(folder):
        raise ReadError(folder, "is a file; give the folder that holds the original/replay pairs")
    top = os.path.basename(os.path.normpath(os.path.abspath(folder))) or folder
    cases: list[Case] = []
    unpaired: list[str] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = os.path.relpath(here, folder).replace(os.sep, "/")
        stems: dict[str | None, tuple[dict[str, str], list[tuple[str, str, str]]]] = defaultdict(lambda: ({}, []))
        for fname in sorted(files):
            if fname.startswith(".") or fname.endswith(_SIDECAR):
                continue
            m = _ROLE.match(fname)
            if m is None or not os.path.isfile(os.path.join(here, fname)):
                continue
            originals, replays = stems[m["stem"]]
            path = os.path.join(here, fname)
            if m["role"] == "original":
                originals[m["ext"]] = path
            else:
                replays.append((m["role"], m["ext"], path))
        for stem in sorted(stems, key=lambda s: (s is not None, s or "")):
            originals, replays = stems[stem]
            if stem is None:
                base = top if rel == "." else rel
            else:
                base = stem if rel == "." else f"{rel}/{stem}"
            found: list[tuple[str, str, str, str]] = []  # (role, ext, original, replay)
            used: set[str] = set()
            for role, ext, rpath in replays:
                opath = next(iter(originals.values())) if len(originals) == 1 else originals.get(ext)
                if opath is None:
                    unpaired.append(rpath)
                    continue
                used.add(opath)
                found.append((role, ext, opath, rpath))
            unpaired.extend(p for p in originals.values() if p not in used)
            roles = [role for role, *_ in found]
            for role, ext, opath, rpath in found:
                if len(found) == 1:
                    name = base
                elif roles.count(role) == 1:
                    name = f"{base}/{role}"
                else:
                    name = f"{base}/{role}.{ext}"
                cases.append(Case(name, opath, rpath))
    seen: dict[str, int] = {}
    unique: list[Case] = []
    for c in cases:  # a CASE/ folder and a flat CASE.original.EXT beside it: keep both, told apart
        n = seen.get(c.name, 0) + 1
        seen[c.name] = n
        unique.append(c if n == 1 else Case(f"{c.name} ({n})", c.original, c.replay))
    unique.sort(key=lambda c: _natural(c.name))
    return Scan(folder, unique, sorted(unpaired))


def find_pairs(folder: str) -> list[Case]:
    """The original/replay pairs under ``folder`` (``scan_folder(folder).cases``).

    Raises:
        ReadError: ``folder`` does not exist or is not a folder.
    """
    return scan_folder(folder).cases


def signature(first: Divergence) -> Signature:
    """What identifies a first divergence across cases: ``(type, span kind, name, fields)``.

    ``name`` is the tool name of a tool span, the model of an LLM span, the index of a retrieval
    span, else the span's name (original side when it exists). ``fields`` are the differing field
    paths (``FieldChange.path``), list indices normalised (``llm.messages[3].content`` ->
    ``llm.messages[].content``), deduplicated and sorted: the same change at another position in a
    conversation is the same signature.
    """
    span = first.original if first.original is not None else first.replay
    assert span is not None
    kind = span.kind.value
    name: Any
    if kind == "tool":
        name = span.tool_name
    elif kind == "llm":
        name = span.data.get("model")
    elif kind == "retrieval":
        name = span.data.get("index")
    else:
        name = None
    if name is None or name == "":
        name = span.name or None
    fields = tuple(sorted({_INDEX.sub("[]", f.path) for f in first.fields}))
    return (first.type.value, kind, None if name is None else str(name), fields)


def signature_text(sig: Signature) -> str:
    """``args_mismatch tool get_billing_account [tool.arguments.account_id]``: the order groups tie-break on."""
    typ, kind, name, fields = sig
    return f"{typ} {kind} {name if name is not None else '-'} [{', '.join(fields)}]"


@dataclass(slots=True)
class CaseResult:
    """A case that diverged, with its first divergence.

    Attributes:
        case: The pair.
        row: The first divergence's row (as ``tracetui diff`` numbers it).
        original_span_id: Its original span, or None.
        replay_span_id: Its replay span, or None.
        divergences: How many divergences the pair has in all.
        label: The reviewer label of the first divergence (``tracetui.core.diff.labels``), or None.
        verdict: The triage verdict of the pair (``tracetui.core.triage``, the replay as one trial),
            or None when triage was not asked for or could not run.
    """

    case: Case
    row: int
    original_span_id: str | None
    replay_span_id: str | None
    divergences: int
    label: Label | None = None
    verdict: str | None = None
    cause: str | None = None

    def to_json(self) -> dict[str, Any]:
        from tracetui.core.diff.labels import label_record

        return {
            "name": self.case.name,
            "original": self.case.original,
            "replay": self.case.replay,
            "row": self.row,
            "original_span_id": self.original_span_id,
            "replay_span_id": self.replay_span_id,
            "divergences": self.divergences,
            "label": label_record(self.label) if self.label is not None else None,
            "verdict": self.verdict,
            "cause": self.cause,
        }


@dataclass(slots=True)
class Group:
    """The cases whose first divergences share a signature."""

    signature: Signature
    cases: list[CaseResult]

    @property
    def count(self) -> int:
        return len(self.cases)

    def to_json(self) -> dict[str, Any]:
        typ, kind, name, fields = self.signature
        return {
            "signature": {"type": typ, "kind": kind, "name": name, "fields": list(fields)},
            "count": self.count,
            "cases": [c.to_json() for c in self.cases],
        }


@dataclass(frozen=True, slots=True)
class CaseError:
    """A pair that could not be read or diffed: ``path`` is the file to blame, ``message`` says why."""

    name: str
    path: str
    message: str


@dataclass(slots=True)
class BatchReport:
    """The grouped batch (JSON shape in the module docstring).

    Attributes:
        folder: The folder scanned ("" when the cases did not come from one).
        cases: How many pairs were given.
        groups: Diverged cases by signature, largest group first, ties by ``signature_text``.
        no_divergence: Pairs whose runs match on every semantic field.
        verdicts: Triage verdict by case name (``group(verdicts=True)``), cases that have one.
        errors: Pairs that could not be read or diffed.
        unpaired: Files that pair with nothing.
        warnings: ``(case name, message)``: what was skipped without failing the case.
    """

    folder: str
    cases: int
    groups: list[Group] = field(default_factory=list)
    no_divergence: list[Case] = field(default_factory=list)
    errors: list[CaseError] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The diverged cases grouped by (verdict, cause) rather than by first-divergence signature:
        ``[{"verdict", "cause", "count", "cases", "signatures", "split_by_wording"}]``, largest first.
        ``split_by_wording`` is true when one cause spans several signature groups (the same change
        met at differently worded first divergences). Cases without a verdict are left out."""
        found: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        for g in self.groups:
            for c in g.cases:
                if c.verdict is None:
                    continue
                names, sigs = found.setdefault((c.verdict, c.cause or ""), ([], []))
                names.append(c.case.name)
                text = signature_text(g.signature)
                if text not in sigs:
                    sigs.append(text)
        out = [{"verdict": v, "cause": k, "count": len(n), "cases": n, "signatures": sg,
                "split_by_wording": len(sg) > 1} for (v, k), (n, sg) in found.items()]
        return sorted(out, key=lambda x: (-x["count"], x["verdict"], x["cause"]))

    @property
    def diverged(self) -> int:
        """How many cases diverged."""
        return sum(g.count for g in self.groups)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "folder": self.folder,
            "cases": self.cases,
            "groups": [g.to_json() for g in self.groups],
            "causes": self.causes,
            "no_divergence": [{"name": c.name, "original": c.original, "replay": c.replay,
                               "verdict": self.verdicts.get(c.name)} for c in self.no_divergence],
            "errors": [{"name": e.name, "path": e.path, "message": e.message} for e in self.errors],
            "unpaired": list(self.unpaired),
            "warnings": [{"name": n, "message": m} for n, m in self.warnings],
        }


def group(
    cases: Iterable[Case],
    *,
    progress: Callable[[int, int], None] | None = None,
    folder: str = "",
    unpaired: Iterable[str] = (),
    verdicts: bool = True,
    executor: Executor | None = None,
) -> BatchReport:
    """Read and diff each pair, and group the diverged ones by ``signature`` of their first divergence.

    Args:
        cases: The pairs (``find_pairs``).
        progress: Called as ``progress(done, total)`` after each pair (``total`` calls in all).
        folder: Reported as ``BatchReport.folder``.
        unpaired: Reported as ``BatchReport.unpaired``.
        verdicts: Also triage each pair (``tracetui.core.triage.triage(original, [replay])``: the
            replay as one trial, the whole run as the failure) and report its verdict; a pair triage
            cannot handle gets no verdict and a warning.
        executor: Where the pairs are examined (``tracetui.core.execute``: default this process,
            one after another; ``tracetui.integrations.dask_cluster.DaskExecutor`` for a Dask
            cluster). Each task holds one pair and returns its result, not its traces; the report
            is the same whichever ran it (cases in their given order).

    Returns:
        The ``BatchReport``. A pair that cannot be read or diffed is an ``errors`` entry with the
        reader's message (file, line, field); it never stops the batch.
    """
    todo = list(cases)
    report = BatchReport(folder=folder, cases=len(todo), unpaired=list(unpaired))
    results: list[tuple[str, Any, list[tuple[str, str]], str | None] | None] = [None] * len(todo)
    run = executor if executor is not None else SerialExecutor()
    for done, fin in enumerate(run.map_unordered(examine, [(c, verdicts) for c in todo]), 1):
        if fin.error is not None or fin.value is None:
            c = todo[fin.index]
            results[fin.index] = ("error", CaseError(c.name, c.original, f"{c.original}: the task failed on its "
                                                     f"worker: {fin.error}"), [], None)
        else:
            results[fin.index] = fin.value
        if progress is not None:
            progress(done, len(todo))
    by_sig: dict[Signature, list[CaseResult]] = {}
    for case, res in zip(todo, results):
        assert res is not None
        kind, value, warnings, verdict = res
        report.warnings.extend(warnings)
        if verdict is not None:
            report.verdicts[case.name] = verdict
        if kind == "error":
            report.errors.append(value)
        elif kind == "same":
            report.no_divergence.append(case)
        else:
            sig, found = value
            by_sig.setdefault(sig, []).append(found)
    report.groups = sorted((Group(sig, found) for sig, found in by_sig.items()),
                           key=lambda g: (-g.count, signature_text(g.signature)))
    return report


def examine(job: tuple[Case, bool]) -> tuple[str, Any, list[tuple[str, str]], str | None]:
    """One pair of a batch, read, diffed (and triaged when ``job[1]``): a task for an executor.

    Returns:
        ``(kind, value, warnings, verdict)``: ``("error", CaseError, ...)`` when a file cannot be
        read or diffed, ``("same", Case, ...)`` without divergence, ``("diverged", (Signature,
        CaseResult), ...)`` otherwise; ``warnings`` as ``BatchReport.warnings``; the verdict or None.
        Only this small result leaves the task: one pair in memory at a time.
    """
    from tracetui.core.diff import diff_traces
    from tracetui.core.diff.labels import divergence_key, load_labels, replay_ref
    from tracetui.core.readers import read_replay, read_trace

    case, verdicts = job
    warnings: list[tuple[str, str]] = []
    blame = case.original
    try:
        original = read_trace(case.original)
        blame = case.replay
        replay = read_replay(case.replay)
        blame = case.original
        diff = diff_traces(original, replay)
    except TracetuiError as exc:
        return "error", CaseError(case.name, getattr(exc, "path", None) or blame, str(exc)), warnings, None
    except (ValueError, RecursionError, MemoryError) as exc:
        return "error", CaseError(case.name, blame, f"{blame}: {type(exc).__name__}: {exc}"), warnings, None
    except Exception as exc:  # noqa: BLE001 - a reader bug on one odd file must not cost the other cases
        return "error", CaseError(
            case.name, blame, f"{blame}: internal error: {type(exc).__name__}: {exc} (a bug in tracetui; please report it)"), \
            warnings, None
    first = diff.first
    verdict, cause = _verdict(original, replay, case, warnings) if verdicts else (None, None)
    if first is None:
        return "same", case, warnings, verdict
    label = None
    try:
        label = load_labels(replay_ref(replay)).get(divergence_key(first))
    except ReadError as exc:
        warnings.append((case.name, f"reviewer labels not shown: {exc}"))
    found = CaseResult(
        case=case,
        row=first.row,
        original_span_id=first.original.span_id if first.original is not None else None,
        replay_span_id=first.replay.span_id if first.replay is not None else None,
        divergences=len(diff.divergences),
        label=label,
        verdict=verdict,
        cause=cause,
    )
    return "diverged", (signature(first), found), warnings, verdict


def _verdict(original: Trace, replay: Trace, case: Case,
             warnings: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """The triage verdict of one pair and its cause; (None, None) and a warning when triage fails on it."""
    try:
        from tracetui.core.triage import triage

        result = triage(original, [replay])
        return result.verdict, result.cause or None
    except Exception as exc:  # noqa: BLE001 - a verdict is extra: its failure must not cost the grouping
        warnings.append((case.name, f"no triage verdict: {type(exc).__name__}: {exc}"))
        return None, None


def batch(folder: str, *, progress: Callable[[int, int], None] | None = None,
          executor: Executor | None = None) -> BatchReport:
    """``scan_folder`` then ``group``: the whole ``tracetui triage --batch DIR``.

    Raises:
        ReadError: ``folder`` does not exist or is not a folder.
    """
    scan = scan_folder(folder)
    return group(scan.cases, progress=progress, folder=folder, unpaired=scan.unpaired, executor=executor)
