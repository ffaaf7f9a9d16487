"""The index loader of tracetui/1 files: spans whose payloads stay in the file (``LazySpan``).

Same parse as ``NativeReader.read_file`` (same lines accepted, same issues,
same runs), but each span of a clean line (the writer's own bytes, read by
the fast path) is kept as a compact record: its common fields, its line's
byte range, its ``span_key``, its payload signature and whether it lacks
captured content (``tracetui.core.lazyspan``). The payload dict is dropped as
soon as the line is done, so a loaded trace holds a fraction of its file
size, and a record pickles cheaply: ``fork_parse`` parses a file in a child
process (the other file is parsed meanwhile by the caller, on the other
core) and sends back only the records.

Used by ``readers.read_pair`` (the TUI's loader); ``read_trace`` keeps
reading whole spans.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import warnings
from typing import Any, Callable

from tracetui.core.align import span_key
from tracetui.core.lazyspan import PayloadFile, make_lazy, payload_sig
from tracetui.core.model import Span, SpanKind
from tracetui.core.readers.base import ReaderOutput
from tracetui.core.readers.native import NativeReader
from tracetui.core.readers.tree import _captured

__all__ = ["INDEX_MIN_BYTES", "ForkedParse", "can_fork", "fork_parse", "indexable", "parse_indexed"]

INDEX_MIN_BYTES = 4 * 2**20
"""Files smaller than this are read whole (``read_trace``): a few thousand spans load in
milliseconds, and their payloads are then in memory for search and display."""

SNIFF_BYTES = 64 * 1024
_NATIVE = NativeReader()
_TOOL, _LLM = SpanKind.TOOL, SpanKind.LLM


def indexable(path: str, format: str | None, min_bytes: int) -> PayloadFile | None:
    """The file, opened for its payloads, when the index loader reads it as ``read_trace`` would
    read it with this ``format``: a tracetui/1 file (sniffed, or ``format="tracetui"``) of at
    least ``min_bytes``. None otherwise, and on any error (``read_trace`` then reports it)."""
    if format is not None and format != _NATIVE.name:
        return None
    try:
        if os.stat(path).st_size < max(min_bytes, 1):
            return None
        src = PayloadFile(path)
        if format is None:
            head = src.read(0, SNIFF_BYTES)
            # NativeReader sniffs first (readers._readers): it accepting the head is sniff_format's answer.
            if not head or head.isspace() or not _NATIVE.sniff(head):
                return None
    except (OSError, ValueError):
        return None
    return src


def _lacks_content(kind: SpanKind, data: Any) -> bool:
    """``tree.content_issues``' test of one span: an llm or tool span whose content was not captured."""
    if kind is _LLM:
        m = data.get("messages")
        if type(m) is list and m and type(m[0]) is dict and m[0].get("content"):
            return False
        return not _captured(m) and not _captured(data.get("output"))
    if kind is _TOOL:
        return data.get("arguments") is None and data.get("output") is None
    return False


def _recorder() -> Callable[..., tuple[Any, ...]]:
    """The index hook of one parse: a span of a clean line -> its record (layout: ``lazyspan.make_lazy``).

    Equal names and equal span keys become one object each (a run repeats a few names, and a call
    its key): fewer objects to pickle, send and build again (-40% pickling time, -20% unpickling).
    """
    names: dict[str, str] = {}
    keys: dict[Any, Any] = {}
    name_of, key_of = names.setdefault, keys.setdefault

    def record(span: Span, offset: int, length: int) -> tuple[Any, ...]:
        kind, d, name = span.kind, span.data, span.name
        key = span_key(span)
        try:
            key = key_of(key, key)
        except TypeError:  # unhashable: cannot happen for span_key's tuples, kept as is
            pass
        return (span.span_id, span.parent_id, span.seq, kind, name_of(name, name), span.start_ns, span.end_ns,
                span.status, span.error_type, span.attributes, span.trace_id, span.line, offset, length,
                key, payload_sig(kind, d), _lacks_content(kind, d))

    return record


def _parse_records(src: PayloadFile) -> ReaderOutput:
    """``NativeReader.read_file``'s output for the file, with records for the clean lines' spans."""
    with os.fdopen(os.dup(src.fd), "rb") as fh:  # shares src.fd's offset, which pread ignores
        fh.seek(0)
        head = fh.read(SNIFF_BYTES)
        return _NATIVE.read_file(src.path, fh, head, index=_recorder())


def parse_indexed(src: PayloadFile) -> ReaderOutput:
    """Parse a tracetui/1 file in this process; spans of clean lines are ``LazySpan``s.

    Raises:
        ReadError: nothing could be loaded (as ``NativeReader``).
        OSError: reading failed.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        out = _parse_records(src)
        for run in out.runs:
            make_lazy(src, run.spans)
        return out
    finally:
        if was:
            gc.enable()


def can_fork() -> bool:
    """Whether a second process can parse a file: ``os.fork`` exists and two cores are ours."""
    if not hasattr(os, "fork"):
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2


class ForkedParse:
    """A child process parsing one file with the index loader; ``result`` collects its records.

    The child runs only this module's parse (every module it needs is imported before the fork,
    so it takes no import lock another thread may hold), pickles the ``ReaderOutput`` of records
    into a pipe and exits with ``os._exit``. Any failure there (an error in the file, a crash, the
    child killed) makes ``result`` return None: the caller parses the file itself, which reports
    the error as ``read_trace`` does.
    """

    def __init__(self, src: PayloadFile) -> None:
        self.src = src
        r, w = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads running
            pid = os.fork()
        if pid == 0:  # the child
            try:
                os.close(r)
                gc.disable()
                try:
                    payload = pickle.dumps(("ok", _parse_records(src)), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException:  # noqa: BLE001 - the parent parses again and reports
                    payload = pickle.dumps(("error",))
                with os.fdopen(w, "wb") as pipe:
                    pipe.write(payload)
            finally:
                os._exit(0)
        os.close(w)
        self.pid, self.fd = pid, r

    def result(self) -> ReaderOutput | None:
        """The child's output with ``LazySpan``s, or None when it failed (waits for it)."""
        chunks: list[bytes] = []
        try:
            while True:
                b = os.read(self.fd, 1 << 22)
                if not b:
                    break
                chunks.append(b)
        finally:
            os.close(self.fd)
            self._reap()
        was = gc.isenabled()
        gc.disable()
        try:
            got = pickle.loads(b"".join(chunks))
            if not (type(got) is tuple and got[0] == "ok" and isinstance(got[1], ReaderOutput)):
                return None
            out: ReaderOutput = got[1]
            for run in out.runs:
                make_lazy(self.src, run.spans)
            return out
        except Exception:  # noqa: BLE001 - a truncated or foreign payload: parse again here
            return None
        finally:
            if was:
                gc.enable()

    def cancel(self) -> None:
        """Stop the child (the other file failed: its result is not needed)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        os.close(self.fd)
        self._reap()

    def _reap(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def fork_parse(src: PayloadFile) -> ForkedParse | None:
    """Start parsing ``src`` in a child process; None when no process can be started."""
    try:
        return ForkedParse(src)
    except OSError:
        return None
