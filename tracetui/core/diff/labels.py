"""Reviewer labels on divergences, kept in a sidecar file next to the replay.

A reviewer who has looked at a divergence says what it is (issue 5, "Reviewer
labels"): an ``acceptable_alternative`` (the replay took another valid path), a
``new_regression`` (the replay is worse), a ``fixture_mismatch`` (the recording
or fixture is wrong, not the agent), or ``insufficient_spec`` (nothing says
which side is right). The label and a note are saved beside the replay, never
inside the original: the original stays as the incident reference
(``../shared/design/practice.md``, "Golden cases": "the original stays as the
incident reference").

Sidecar file: ``<replay file>.labels.json`` (``sidecar_path``), UTF-8 JSON::

    {"schema": "tracetui-labels/1",
     "replay": "replay.jsonl",                 # basename of the replay file, for people; not checked
     "labels": [{"key": "args_mismatch:94542371d4ca9718:e64c300738147c5c",
                 "label": "fixture_mismatch",  # one of LABELS
                 "note": "the fixture has the new id format",
                 "created": "2026-11-12T17:03:11Z",
                 "type": "args_mismatch",      # the divergence type when labelled
                 "original_span_id": "94542371d4ca9718" | null,
                 "replay_span_id": "e64c300738147c5c" | null,
                 "run": "RUN"},                # only for a replay given as FILE#RUN
                ...]}

Runs: a replay given as ``FILE#RUN`` (``tracetui.core.readers.split_run_ref``)
shares the sidecar of ``FILE``; its entries carry ``"run": RUN`` and only they
are loaded, replaced or removed through ``FILE#RUN``; through plain ``FILE``
only entries without ``run`` are. ``replay_ref(trace)`` gives the reference to
use for a loaded replay (``FILE#RUN`` only when the file holds several runs), so
the CLI and the TUI agree on it.

Fields the file has and this module does not know (top level or in an entry)
are ignored on load and kept on save. Writes are atomic (a temporary file in
the same folder, then ``os.replace``; the sidecar's permission bits are kept)
and touch nothing but the sidecar.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.readers import split_run_ref
from tracetui.core.tempfiles import make_temp_file

if TYPE_CHECKING:
    from tracetui.core.diff import Divergence, TraceDiff
    from tracetui.core.model import Trace

__all__ = [
    "LABELS",
    "SCHEMA",
    "Label",
    "divergence_key",
    "label_record",
    "labels_for",
    "load_labels",
    "now_iso",
    "remove_label",
    "replay_ref",
    "save_label",
    "sidecar_path",
]

LABELS: tuple[str, ...] = ("acceptable_alternative", "new_regression", "fixture_mismatch", "insufficient_spec")
"""The reviewer labels, in the order the issue lists them (issue 5, item 5)."""

SCHEMA = "tracetui-labels/1"
"""The sidecar's ``schema`` value."""

SUFFIX = ".labels.json"


@dataclass(frozen=True, slots=True)
class Label:
    """One reviewer label on one divergence.

    Attributes:
        key: ``divergence_key`` of the labelled divergence.
        label: One of ``LABELS``.
        note: The reviewer's note (may be empty).
        created: When it was labelled, ISO 8601 UTC (``now_iso()``).
        type: The divergence type when labelled (``args_mismatch``...).
        original_span_id: The original span, or None (replay-only divergence).
        replay_span_id: The replay span, or None (original-only divergence).
    """

    key: str
    label: str
    note: str
    created: str
    type: str
    original_span_id: str | None
    replay_span_id: str | None


def divergence_key(d: Divergence) -> str:
    """``"{type}:{original span id or '-'}:{replay span id or '-'}"``.

    Stable for the same divergence of the same pair of files: span ids come from
    the files, and a row pairs at most one original span with one replay span.
    A replay recorded again gets new span ids, so its old labels match nothing
    (``labels_for`` leaves them out; the diff report lists them as unmatched).
    """
    o = d.original.span_id if d.original is not None else "-"
    r = d.replay.span_id if d.replay is not None else "-"
    return f"{d.type.value}:{o}:{r}"


def now_iso() -> str:
    """The current time as ISO 8601 UTC to the second (``2026-11-12T17:03:11Z``), for ``Label.created``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sidecar_path(replay_path: str) -> str:
    """``"<replay file>.labels.json"``, next to the replay (``FILE#RUN``: next to ``FILE``)."""
    path, _run = split_run_ref(replay_path)
    return path + SUFFIX


def replay_ref(trace: Trace) -> str:
    """The reference to label a loaded replay under: its file, with ``#RUN`` only when the file holds
    several runs (so ``FILE`` and ``FILE#THE-ONLY-RUN`` share labels)."""
    if len(trace.trace_ids) > 1 and trace.trace_id is not None:
        return f"{trace.path}#{trace.trace_id}"
    return trace.path


def label_record(label: Label) -> dict[str, Any]:
    """A label as its sidecar entry (without ``run``); also the ``"label"`` object of the diff report."""
    return {
        "key": label.key,
        "label": label.label,
        "note": label.note,
        "created": label.created,
        "type": label.type,
        "original_span_id": label.original_span_id,
        "replay_span_id": label.replay_span_id,
    }


def labels_for(diff: TraceDiff, labels: Mapping[str, Label]) -> dict[int, Label]:
    """Labels by divergence index (into ``diff.divergences``); divergences without a label are left out."""
    if not labels:
        return {}
    found: dict[int, Label] = {}
    for i, d in enumerate(diff.divergences):
        label = labels.get(divergence_key(d))
        if label is not None:
            found[i] = label
    return found


# --- the sidecar file --------------------------------------------------------------------------

_FIX = "fix the field, or delete the file to drop every label of this replay"


def _read_doc(path: str) -> dict[str, Any] | None:
    """The sidecar's JSON object, None when there is none; ReadError when it is not a sidecar."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ReadError(path, "is a directory, expected a labels file") from None
    except OSError as exc:
        raise ReadError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ReadError(path, f"not valid JSON ({exc}); {_FIX}") from None
    if not isinstance(doc, dict):
        raise ReadError(path, f"expected a JSON object, found {_type_name(doc)}; {_FIX}")
    if doc.get("schema") != SCHEMA:
        raise ReadError(path, f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}; {_FIX}", where="schema")
    entries = doc.get("labels", [])
    if not isinstance(entries, list):
        raise ReadError(path, f"expected a list, found {_type_name(entries)}; {_FIX}", where="labels")
    for i, entry in enumerate(entries):
        _parse_entry(path, i, entry)  # every entry checked, not only the run asked for
    return doc


def _type_name(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number")


def _parse_entry(path: str, i: int, entry: Any) -> tuple[Label, str | None]:
    """One entry as ``(Label, run)``; ReadError naming ``labels[i].FIELD`` when it is damaged."""
    where = f"labels[{i}]"
    if not isinstance(entry, dict):
        raise ReadError(path, f"expected an object, found {_type_name(entry)}; {_FIX}", where=where)

    def text(name: str, *, required: bool = False, nullable: bool = False, default: str | None = "") -> str | None:
        if name not in entry:
            if required:
                raise ReadError(path, f"missing; {_FIX}", where=f"{where}.{name}")
            return default
        v = entry[name]
        if isinstance(v, str) or (nullable and v is None):
            return v
        want = "a string or null" if nullable else "a string"
        raise ReadError(path, f"expected {want}, found {_type_name(v)}; {_FIX}", where=f"{where}.{name}")

    key = text("key", required=True)
    label = text("label", required=True)
    if label not in LABELS:
        raise ReadError(path, f"unknown label {label!r}; known labels: {', '.join(LABELS)}", where=f"{where}.label")
    if not key:
        raise ReadError(path, f"is empty; {_FIX}", where=f"{where}.key")
    run = text("run", nullable=True, default=None)
    return Label(
        key=key,  # type: ignore[arg-type]
        label=label,
        note=text("note") or "",
        created=text("created") or "",
        type=text("type", required=True),  # type: ignore[arg-type]
        original_span_id=text("original_span_id", nullable=True, default=None),
        replay_span_id=text("replay_span_id", nullable=True, default=None),
    ), (run or None)


def load_labels(replay_path: str) -> dict[str, Label]:
    """The labels of a replay (``FILE`` or ``FILE#RUN``), by key; ``{}`` when it has no sidecar.

    Raises:
        ReadError: the sidecar is not valid JSON, not a ``tracetui-labels/1`` object, or an entry
            has a missing or mistyped field or an unknown label; ``where`` names the field
            (``labels[2].label``).
    """
    side = sidecar_path(replay_path)
    doc = _read_doc(side)
    if doc is None:
        return {}
    _path, run = split_run_ref(replay_path)
    found: dict[str, Label] = {}
    for i, entry in enumerate(doc.get("labels", [])):
        label, entry_run = _parse_entry(side, i, entry)
        if entry_run == run:
            found[label.key] = label  # a key written twice by hand: the later entry wins
    return found


def _check(label: Label) -> None:
    if label.label not in LABELS:
        raise ValueError(f"unknown label {label.label!r}; known labels: {', '.join(LABELS)}")
    if not isinstance(label.key, str) or not label.key:
        raise ValueError("a label needs the key of its divergence (divergence_key)")


def _entry_matches(entry: dict[str, Any], key: str, run: str | None) -> bool:
    return entry.get("key") == key and (entry.get("run") or None) == run


def save_label(replay_path: str, label: Label) -> None:
    """Add ``label`` to the replay's sidecar, replacing the label of the same key (and run).

    Other entries, and fields this module does not know, are kept as they are.

    Raises:
        ValueError: ``label.label`` is not one of ``LABELS``, or ``label.key`` is empty.
        ReadError: the existing sidecar is damaged (as ``load_labels``; it is left untouched), or
            the sidecar cannot be written (read-only folder, disk full).
    """
    _check(label)
    side = sidecar_path(replay_path)
    path, run = split_run_ref(replay_path)
    doc = _read_doc(side) or {"schema": SCHEMA, "labels": []}
    entry: dict[str, Any] = label_record(label)
    if run is not None:
        entry["run"] = run
    entries = doc.get("labels", [])
    for i, old in enumerate(entries):
        if _entry_matches(old, label.key, run):
            extra = {k: v for k, v in old.items() if k not in entry and k != "run"}
            entries[i] = {**entry, **extra}
            # later duplicates (hand-edited files) would shadow the new entry on load
            entries[i + 1:] = [e for e in entries[i + 1:] if not _entry_matches(e, label.key, run)]
            break
    else:
        entries.append(entry)
    doc = {"schema": SCHEMA, "replay": os.path.basename(path), **{k: v for k, v in doc.items() if k not in ("schema", "replay", "labels")}, "labels": entries}
    _write(side, doc)


def remove_label(replay_path: str, key: str) -> bool:
    """Remove the label of ``key`` (for this run) from the replay's sidecar.

    The sidecar is deleted when nothing is left in it (no entry and no unknown field).

    Returns:
        True when a label was removed; False when the replay has no sidecar or no such label.

    Raises:
        ReadError: as ``save_label``.
    """
    side = sidecar_path(replay_path)
    doc = _read_doc(side)
    if doc is None:
        return False
    _path, run = split_run_ref(replay_path)
    entries = doc.get("labels", [])
    kept = [e for e in entries if not _entry_matches(e, key, run)]
    if len(kept) == len(entries):
        return False
    extra = {k for k in doc if k not in ("schema", "replay", "labels")}
    if not kept and not extra:
        try:
            os.remove(side)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise ReadError(side, f"cannot be removed: {exc.strerror or exc}") from None
        return True
    doc["labels"] = kept
    _write(side, doc)
    return True


def _write(side: str, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``side`` atomically: a temporary file in the same folder, then ``os.replace``.

    A symlinked sidecar has its target replaced (the link stays); the file's permission bits are
    kept, a new file gets the umask's.
    """
    target = os.path.realpath(side) if os.path.islink(side) else side
    folder = os.path.dirname(os.path.abspath(target))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError as exc:
        raise ReadError(side, f"cannot be written: {exc.strerror or exc}") from None
    payload = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    try:
        fd, tmp = make_temp_file(folder)  # named by this process: a crash's leftover is swept next time
    except OSError as exc:
        raise ReadError(side, f"cannot be written: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:  # Ctrl-C included: never leave the temporary file behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ReadError(side, f"cannot be written: {exc.strerror or exc}") from None
        raise

