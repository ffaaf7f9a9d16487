"""A trace store: a folder or an fsspec URL of recorded runs, listed and sampled without being read.

``list_store(location)`` walks a local folder (``os.scandir``) or any fsspec URL (``file://``,
``s3://``, ``gs://``...; fsspec is needed only for URLs) and returns one ``StoreEntry`` per trace
file: its path or URL, its name under the store, its size, and the strata its *path* says. No
trace is opened: 10,000 runs are listed from the directory listing alone (on S3, one paginated
LIST instead of 10,000 GETs).

What a path says (hive-style partitions, as trace exporters write them):

- ``agent=NAME/`` and ``tool=NAME/`` components: the run's agent and a tool it called;
- failure: ``status=``, ``outcome=`` or ``result=`` with ``failed``, ``failure``, ``error`` or
  ``errored``; ``failed=true``; a folder named ``failed``, ``failures`` or ``errors``; or a file
  name with a ``failed`` or ``error`` token (``run-17.failed.jsonl``).

A trace file is any file with a trace extension (``TRACE_EXTENSIONS``), not a dot-file, not a
label sidecar (``*.labels.json``), not a nightly report or journal (``*.nightly.json``,
``*.partial.jsonl``). The format of each is sniffed from its content when it is replayed.

``sample(entries, n, seed)`` draws the runs to replay: every failed run, then ``n`` minus those,
spread over the (agent, tool) strata in proportion to their size (largest remainder, at least one
per stratum while the budget lasts), seeded: the same listing and seed give the same sample.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.errors import ReadError, TracetuiError

__all__ = ["FSSPEC_HINT", "StoreEntry", "is_url", "list_store", "local_copy", "sample", "strata_of"]

TRACE_EXTENSIONS = (".jsonl", ".json", ".ndjson", ".eval", ".traj", ".yaml", ".yml")
FSSPEC_HINT = "pip install fsspec (and s3fs, gcsfs... for those URLs), or pip install 'tracetui[dask]'"
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_FAILED_VALUES = {"failed", "failure", "error", "errored", "true"}
_FAILED_DIRS = {"failed", "failures", "errors"}
_FAILED_TOKEN = re.compile(r"(?:^|[._-])(?:failed|error)(?:[._-]|$)", re.IGNORECASE)
_SKIP_SUFFIXES = (".labels.json", ".nightly.json", ".partial.jsonl")


@dataclass(frozen=True, slots=True)
class StoreEntry:
    """One trace file of a store.

    Attributes:
        path: A local path, or a URL (``s3://bucket/runs/x.jsonl``) for an fsspec store.
        name: Its path under the store, ``/``-separated (what reports show).
        size: Bytes, or -1 when the listing does not say.
        agent: The agent its path names (``agent=NAME``), or None.
        tool: The tool its path names (``tool=NAME``), or None.
        failed: Its path flags the run as failed (module docstring).
    """

    path: str
    name: str
    size: int = -1
    agent: str | None = None
    tool: str | None = None
    failed: bool = False

    @property
    def stratum(self) -> tuple[str, str]:
        """``(agent, tool)``, ``"-"`` for what the path does not say."""
        return (self.agent or "-", self.tool or "-")

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "size": self.size, "agent": self.agent, "tool": self.tool,
                "failed": self.failed}


def is_url(location: str) -> bool:
    """True for ``scheme://...`` (fsspec), False for a plain path."""
    return bool(_URL.match(location))


def strata_of(name: str) -> dict[str, Any]:
    """``{"agent", "tool", "failed"}`` from a store-relative path (module docstring)."""
    parts = name.split("/")
    out: dict[str, Any] = {"agent": None, "tool": None, "failed": False}
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if "=" in part and not last:
            key, _, value = part.partition("=")
            key = key.lower()
            if key == "agent":
                out["agent"] = value
            elif key == "tool":
                out["tool"] = value
            elif key in ("status", "outcome", "result", "failed") and value.lower() in _FAILED_VALUES:
                out["failed"] = True
        elif not last and part.lower() in _FAILED_DIRS:
            out["failed"] = True
        elif last and _FAILED_TOKEN.search(part.rsplit(".", 1)[0]):
            out["failed"] = True
    return out


def _is_trace_name(fname: str) -> bool:
    low = fname.lower()
    return (not fname.startswith(".") and low.endswith(TRACE_EXTENSIONS)
            and not low.endswith(_SKIP_SUFFIXES))


def _fs(location: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:
        raise TracetuiError(f"{location}: a URL store needs fsspec: {FSSPEC_HINT}") from None
    try:
        fs, root = fsspec.core.url_to_fs(location)
    except (ImportError, ValueError) as exc:
        raise ReadError(location, f"cannot open this store: {exc} ({FSSPEC_HINT})") from None
    return fs, root


def list_store(location: str) -> list[StoreEntry]:
    """Every trace file under ``location`` (a folder or an fsspec URL), sorted by name; none is opened.

    Raises:
        ReadError: no such folder, not a folder, or the URL cannot be listed (the reason).
        TracetuiError: a URL without fsspec installed (how to get it).
    """
    found: list[StoreEntry] = []
    if is_url(location):
        fs, root = _fs(location)
        try:
            if not fs.isdir(root):
                raise ReadError(location, "no such folder in the store" if not fs.exists(root) else
                                "is a file; give the folder (or prefix) that holds the traces")
            listing = fs.find(root, detail=True)
        except (OSError, PermissionError) as exc:
            raise ReadError(location, f"cannot be listed: {exc}") from None
        root_s = root.rstrip("/")
        protocol = location.split("://", 1)[0]
        for p, info in listing.items():
            rel = p[len(root_s):].lstrip("/") if p.startswith(root_s) else p
            if any(seg.startswith(".") for seg in rel.split("/")) or not _is_trace_name(rel.rsplit("/", 1)[-1]):
                continue
            url = fs.unstrip_protocol(p) if hasattr(fs, "unstrip_protocol") else f"{protocol}://{p}"
            found.append(StoreEntry(url, rel, int(info.get("size") or -1), **strata_of(rel)))
    else:
        if not os.path.exists(location):
            raise ReadError(location, "no such folder")
        if not os.path.isdir(location):
            raise ReadError(location, "is a file; give the folder that holds the traces")
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            here = os.path.join(location, rel_dir) if rel_dir else location
            try:
                with os.scandir(here) as it:
                    for e in it:
                        if e.name.startswith("."):
                            continue
                        rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
                        if e.is_dir(follow_symlinks=False):
                            stack.append(rel)
                        elif e.is_file() and _is_trace_name(e.name):
                            found.append(StoreEntry(os.path.join(here, e.name), rel, e.stat().st_size,
                                                    **strata_of(rel)))
            except OSError as exc:
                raise ReadError(here, f"cannot be listed: {exc.strerror or exc}") from None
    found.sort(key=lambda e: e.name)
    return found


@dataclass(slots=True)
class Sample:
    """What ``sample`` drew.

    Attributes:
        entries: The runs to replay, sorted by name.
        listed: How many trace files the store holds.
        failed: How many of them the path flags as failed (all are in ``entries``).
        strata: ``"agent/tool"`` -> ``[listed, sampled]``.
    """

    entries: list[StoreEntry]
    listed: int
    failed: int
    strata: dict[str, list[int]] = field(default_factory=dict)


def sample(entries: list[StoreEntry], n: int, seed: int | str) -> Sample:
    """Draw about ``n`` runs: every failed run, the rest stratified by (agent, tool) (module docstring).

    More than ``n`` are drawn only when more than ``n`` runs are flagged failed (all are kept).
    ``n <= 0`` or ``n >= len(entries)`` takes every run.
    """
    rng = random.Random(f"tracetui-nightly:{seed}")
    ordered = sorted(entries, key=lambda e: e.name)
    failed = [e for e in ordered if e.failed]
    rest = [e for e in ordered if not e.failed]
    by: dict[tuple[str, str], list[StoreEntry]] = {}
    for e in rest:
        by.setdefault(e.stratum, []).append(e)
    budget = len(rest) if n <= 0 or n >= len(entries) else max(0, n - len(failed))
    quota = _allocate({k: len(v) for k, v in by.items()}, budget)
    chosen = list(failed)
    for key in sorted(by):
        group = by[key]
        chosen.extend(rng.sample(group, quota[key]) if quota[key] < len(group) else group)
    strata: dict[str, list[int]] = {}
    for e in ordered:
        strata.setdefault("/".join(e.stratum), [0, 0])[0] += 1
    for e in chosen:
        strata["/".join(e.stratum)][1] += 1
    chosen.sort(key=lambda e: e.name)
    return Sample(chosen, len(entries), len(failed), dict(sorted(strata.items())))


def _allocate(sizes: dict[tuple[str, str], int], budget: int) -> dict[tuple[str, str], int]:
    """Largest-remainder apportionment of ``budget`` over strata, at least one each while it lasts."""
    total = sum(sizes.values())
    quota = {k: 0 for k in sizes}
    if budget <= 0 or total == 0:
        return quota
    if budget >= total:
        return dict(sizes)
    for k in sorted(sizes, key=lambda k: (-sizes[k], k)):  # one each, largest strata first
        if budget - sum(quota.values()) <= 0:
            break
        quota[k] = 1
    left = budget - sum(quota.values())
    if left > 0:
        room = {k: sizes[k] - quota[k] for k in sizes}
        total_room = sum(room.values())
        shares = {k: left * room[k] / total_room for k in sizes}
        for k in sizes:
            quota[k] += int(shares[k])
        rem = budget - sum(quota.values())
        for k in sorted(sizes, key=lambda k: (-(shares[k] - int(shares[k])), k))[:rem]:
            quota[k] += 1
    return quota


@contextlib.contextmanager
def local_copy(path: str) -> Iterator[str]:
    """A local path to read ``path`` from: itself, or for a URL a temporary copy (removed after).

    Raises:
        ReadError: the URL cannot be opened or read.
    """
    if not is_url(path):
        yield path
        return
    fs, p = _fs(path)
    tmpdir = tempfile.mkdtemp(prefix="tracetui-store-")
    local = os.path.join(tmpdir, os.path.basename(p.rstrip("/")) or "trace")
    try:
        try:
            with fs.open(p, "rb") as src, open(local, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except (OSError, PermissionError) as exc:
            raise ReadError(path, f"cannot be read from the store: {exc}") from None
        yield local
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
