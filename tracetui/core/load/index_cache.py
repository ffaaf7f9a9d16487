"""A big file's read kept for its next opening (issue 22): the index cache.

Reading a 100k-span file takes seconds (``docs/performance.md``); opening it again (the TUI after
``tracetui diff``, a reviewer coming back to a pair) reads it again. ``read_pair`` keeps, per side, what the
read made: the finished ``Trace`` without its spans, and each span as the record the loaders already send
between processes (``lazyspan.export_record`` for tracetui/1 lines, ``otlp_lazy.export_span`` for OTLP
spans kept as byte ranges; a plain ``Span`` as it is): fields, byte range, span key fields and payload
signature, no payload. The next opening of the same file with the same arguments adopts them over its own
descriptor of the file, so payloads are read from the file on first use and checked (span id, payload
signature) exactly as after a read.

An entry is used only for the file it was made from: the device, inode, size, ``mtime_ns`` and ``ctime_ns``
of the file when its read started (``PayloadFile.opened``) must equal those of the descriptor opened now (any
write, truncation, rename over it or ``touch`` changes one of them: then the file is read, and the entry
replaced). A read is kept only if the file still has that identity when it is kept (not written to meanwhile)
and was last modified ``RACY_NS`` or more before the read started (a filesystem whose times tick once a second
would not show a same-size write made later in that second).
The key also holds the path as given, which side it is (original/replay), the reader name and run asked for,
tracetui's version, ``CACHE_FORMAT`` and a digest of the names, sizes and times of ``tracetui/core``'s source
files (so an editable install whose readers changed reads files again).

Where: ``$TRACETUI_CACHE_DIR/index``, else ``$XDG_CACHE_HOME/tracetui/index``, else
``~/.cache/tracetui/index`` (made with mode 0700; a folder another user owns or may write is never read,
since entries are pickles). Off with ``TRACETUI_INDEX_CACHE=0`` (the test suite sets it). Only files of
``MIN_BYTES`` or more whose spans are nearly all kept in the file are cached (``SHARE``: a trace whose spans
hold their payloads would make an entry as big as the file). The folder is kept under ``MAX_TOTAL_BYTES``,
the entries used longest ago going first, and an entry not used for ``MAX_AGE_DAYS`` is removed. Entries are written to a temporary file and renamed into place; a
damaged, truncated or unreadable entry is a miss (and is removed), never an error.
"""

from __future__ import annotations

import copy
import functools
import gc
import hashlib
import os
import pickle
import stat
import struct
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from tracetui import __version__
from tracetui.core.diff.align import span_key
from tracetui.core.model import Span, Trace
from tracetui.core.readers import split_run_ref
from tracetui.core.readers.gc_paused import promote_young_objects
from tracetui.core.readers.lazyspan import LazySpan, PayloadFile, export_record, file_identity, line_file, make_lazy
from tracetui.core.readers.otlp import payload_source
from tracetui.core.readers.otlp_lazy import export_span, range_file

__all__ = ["CACHE_FORMAT", "MAX_TOTAL_BYTES", "MIN_BYTES", "Side", "cache_dir", "holds", "load", "store"]

CACHE_FORMAT = 1
"""Bumped whenever a record's shape or what a reader computes changes (the key holds the version too)."""

MIN_BYTES = 4 * 2**20
"""Smaller files are read in well under a second: not cached (``native_index.INDEX_MIN_BYTES``)."""

MAX_TOTAL_BYTES = 2 * 2**30
"""The cache folder's size limit, in bytes (a 100k-span file's entry: ~15-25 MB)."""

RACY_NS = 2 * 10**9
"""A file modified less than this before its read started is not kept (git's "racy" case): on a filesystem
whose times tick once a second, a same-size write later in that second would leave the entry looking valid.
Such a file is kept by a later opening."""

MAX_AGE_DAYS = 30
"""An entry not used for this many days is removed (its file gone, or made by code since changed)."""

SHARE = 0.9
"""The least share of a trace's spans kept in the file (not holding their payloads) for it to be cached."""

_MAGIC = b"tracetui-index\x00"
_IDENT = struct.Struct("<5Q")  # the file's device, inode, size, mtime_ns, ctime_ns, after the magic
_HEAD = len(_MAGIC) + _IDENT.size
_OFF = frozenset({"0", "off", "no", "false"})


class Side(NamedTuple):
    """One side of a pair as ``read_pair`` reads it: ``ref`` (``FILE`` or ``FILE#RUN``), whether it is the replay
    (``read_replay``'s run choice) and the arguments that choose the reader and the run."""

    ref: str
    replay: bool
    format: str | None
    trace_id: str | None
    replay_trace_id: str | None


def cache_dir() -> Path | None:
    """The folder entries go in (module docstring), or None when the cache is off (``TRACETUI_INDEX_CACHE=0``)."""
    if os.environ.get("TRACETUI_INDEX_CACHE", "").strip().lower() in _OFF:
        return None
    root = os.environ.get("TRACETUI_CACHE_DIR")
    if root:
        return Path(root) / "index"
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "tracetui" / "index"
    home = os.environ.get("HOME")
    if home is not None and not os.path.isabs(home):
        return None  # HOME= (empty) or relative: no folder that is surely this user's
    try:
        base = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no passwd entry (a container's uid): no cache
        return None
    return base / ".cache" / "tracetui" / "index"


def load(side: Side) -> Trace | None:
    """The ``Trace`` an earlier ``store`` of ``side`` kept, its spans adopted over a descriptor of the file opened
    now; None when there is no usable entry (cache off, no entry, another file now at that path or the file
    changed, a damaged entry: removed). Never raises but for ``KeyboardInterrupt``-like exceptions."""
    gc_was = gc.isenabled()
    gc.disable()  # ~5 containers a span and no cycles: the collector would walk them again and again (x10 here)
    try:
        return _load(side)
    finally:
        promote_young_objects()
        if gc_was:
            gc.enable()


def holds(side: Side) -> bool:
    """Whether there is an entry for ``side`` made from the file as it is now (its head read, nothing adopted):
    ``load`` would then most likely give a trace (it checks again, and reads the rest). Never raises."""
    got = _read_entry(side, _HEAD)
    if got is None:
        return False
    try:
        now = file_identity(os.stat(split_run_ref(side.ref)[0]))
    except OSError:
        return False
    return got[1] == _MAGIC + _IDENT.pack(*now)


def _read_entry(side: Side, size: int = -1) -> tuple[Path, bytes] | None:
    """``(entry path, its first size bytes or all)`` when the cache is on, the file is a regular file of
    ``MIN_BYTES`` or more, and its entry a regular file of this user; else None."""
    folder = _trusted(cache_dir(), create=False)
    if folder is None:
        return None
    path = split_run_ref(side.ref)[0]
    entry = folder / _name(side)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size < MIN_BYTES:
            return None
        fd = os.open(entry, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:  # (non-blocking: a FIFO put there is refused below, never waited on)
            est = os.fstat(fd)
            if not stat.S_ISREG(est.st_mode) or est.st_uid != os.getuid():
                return None
            return entry, fh.read(size)
    except OSError:
        return None


def _load(side: Side) -> Trace | None:
    got = _read_entry(side)
    if got is None:
        return None
    entry, blob = got
    path = split_run_ref(side.ref)[0]
    try:
        if not blob.startswith(_MAGIC) or len(blob) < _HEAD:
            raise ValueError("not an entry")
        ident = _IDENT.unpack_from(blob, len(_MAGIC))
        fmt, trace, source, recs, keys = pickle.loads(memoryview(blob)[_HEAD:])
        if fmt != CACHE_FORMAT or type(trace) is not Trace or type(recs) is not list or type(keys) is not list:
            raise ValueError("another format")
    except Exception:  # noqa: BLE001 - a damaged entry is a miss; it is made again
        _remove(entry)
        return None
    del blob
    try:
        file = PayloadFile(path)
    except OSError:
        return None
    if file.opened != ident:
        return None  # another file, or this one changed: read again (the entry is replaced then)
    try:
        trace.spans = _adopted(file, source, recs, keys)
    except Exception:  # noqa: BLE001 - a record this version cannot adopt: read the file
        _remove(entry)
        return None
    try:
        os.utime(entry)  # used now: pruned last
    except OSError:
        pass
    return trace


def store(side: Side, trace: Trace) -> bool:
    """Keep ``trace`` (read from ``side``) for the next opening; whether it is kept (True also when the entry there
    is already of this file as it is now: nothing is written then, so storing a trace the cache gave is cheap).
    Nothing is written
    for a small file, a trace whose spans hold their payloads, spans of two files, or when the cache is off or
    its folder cannot be made; an error writing is swallowed (the cache is an optimisation). Never raises but
    for ``KeyboardInterrupt``-like exceptions."""
    gc_was = gc.isenabled()
    gc.disable()  # a record a span, no cycles (as in ``load``)
    try:
        return _store(side, trace)
    finally:
        if gc_was:
            gc.enable()


def _store(side: Side, trace: Trace) -> bool:
    try:
        file = next((f for f in map(_file_of, trace.spans) if f is not None), None)
        if type(file) is not PayloadFile:
            return False
        ident = file.opened  # the file as it was when its read started
        if ident[2] < MIN_BYTES or file_identity(os.fstat(file.fd)) != ident:
            return False  # small, or written to since the read started: what was read is not the file
        if file.opened_ns - ident[3] < RACY_NS:
            return False  # written just before the read: a write in the same clock tick would go unseen
        folder = _trusted(cache_dir(), create=True)
        if folder is None:
            return False
        head_bytes = _MAGIC + _IDENT.pack(*ident)
        try:
            fd = os.open(folder / _name(side), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            with os.fdopen(fd, "rb") as fh:
                est = os.fstat(fd)
                if stat.S_ISREG(est.st_mode) and est.st_uid == os.getuid() and fh.read(_HEAD) == head_bytes:
                    return True  # kept already (this trace came from it, or was kept by an earlier call)
        except OSError:
            pass
        got = _records(trace.spans)
        if got is None or got[0] is not file:
            return False
        _file, source, recs, keys = got
        head = copy.copy(trace)
        head.spans = []
        blob = pickle.dumps((CACHE_FORMAT, head, source, recs, keys), protocol=pickle.HIGHEST_PROTOCOL)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".idx")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(head_bytes)
                fh.write(blob)
            os.replace(tmp, folder / _name(side))
        except BaseException:
            _remove(Path(tmp))
            raise
        _prune(folder)
        return True
    except (OSError, pickle.PicklingError, TypeError, ValueError, AttributeError, RecursionError):
        return False


def _records(spans: list[Span]) -> tuple[PayloadFile, str, list[Any], list[Any]] | None:
    """``(file, source, records, keys)`` of a trace's spans, or None when they cannot be kept (module docstring).
    ``keys``: each OTLP span's ``span_key`` (computed here and kept on the span: the diff that follows the read
    needs it too), in record order; empty for tracetui/1 records, which hold theirs."""
    file: PayloadFile | None = None
    source = ""
    recs: list[Any] = []
    keys: list[Any] = []
    lazy = 0
    for s in spans:
        if type(s) is LazySpan:
            rec = export_record(s)
            if rec is not None:
                kind, f = "native", line_file(s)
            else:
                rec, kind, f = export_span(s), "otlp", range_file(s)
                if rec is None:
                    return None  # a source that cannot be adopted elsewhere
            if f is not None:
                if type(f) is not PayloadFile or (file is not None and f is not file):
                    return None  # bytes held in memory (a pipe), or spans of two files
                file = f
            if source and kind != source:
                return None
            source = kind
            lazy += 1
            recs.append(rec)
        elif type(s) is Span:
            recs.append(s)
        else:
            return None
    if file is None or lazy < SHARE * len(spans):
        return None
    if source == "otlp":
        keys = list(map(span_key, spans))
    return file, source, recs, keys


def _file_of(span: Span) -> Any:
    """The file a ``LazySpan``'s payload is read from (a ``PayloadFile``, or bytes held: ``InMemory``); None for a
    plain span or a span whose payload is held."""
    if type(span) is not LazySpan:
        return None
    return line_file(span) or range_file(span)


def _adopted(file: PayloadFile, source: str, recs: list[Any], keys: list[Any]) -> list[Any]:
    if source == "native":
        return make_lazy(file, recs)
    if source != "otlp" or len(keys) != len(recs):
        raise ValueError(f"unknown source {source!r}, or keys missing")
    adopt = payload_source(file).adopt
    return [adopt(r, k) if type(r) is tuple else r for r, k in zip(recs, keys)]


def _name(side: Side) -> str:
    path = split_run_ref(side.ref)[0]
    key = repr((CACHE_FORMAT, __version__, _code_stamp(), os.path.abspath(path), tuple(side)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40] + ".idx"


@functools.lru_cache(maxsize=1)
def _code_stamp() -> str:
    """A digest of the core package's source files (name, size, modification time): an editable install whose
    readers changed since an entry was made does not use it (a release changes ``__version__`` too)."""
    core = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(core.rglob("*.py")):
        try:
            st = f.stat()
        except OSError:
            continue
        h.update(f"{f.relative_to(core)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]





def _trusted(folder: Path | None, *, create: bool) -> Path | None:
    """``folder`` when this user owns it and nobody else may write it (made, mode 0700, when ``create``)."""
    if folder is None:
        return None
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return folder


def _prune(folder: Path, limit: int | None = None) -> None:
    """Remove the entries used longest ago until the folder's entries take at most ``limit`` bytes."""
    limit = MAX_TOTAL_BYTES if limit is None else limit
    entries = []
    now = time.time_ns()
    stale, unused = now - 3600 * 10**9, now - MAX_AGE_DAYS * 86400 * 10**9
    for e in folder.glob("*.idx"):
        try:
            st = e.stat()
        except OSError:
            continue
        if e.name.startswith(".tmp-"):  # being written (another process), or left by one that was killed
            if st.st_mtime_ns < stale:
                _remove(e)
            continue
        if st.st_mtime_ns < unused:  # not used for MAX_AGE_DAYS: a file gone, or made by older code
            _remove(e)
            continue
        entries.append((st.st_mtime_ns, st.st_size, e))
    total = sum(size for _, size, _ in entries)
    for _, size, e in sorted(entries):
        if total <= limit:
            break
        _remove(e)
        total -= size


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
