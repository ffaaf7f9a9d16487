"""The index loader of tracetui/1 files: spans whose payloads stay in the file (``LazySpan``).

Same parse as ``NativeReader.read_file`` (same lines accepted, same issues,
same runs), but each span of a clean line (the writer's own bytes, read by
the fast path) is kept as a compact record: its common fields, its line's
byte range, its ``span_key``, its payload signature and whether it lacks
captured content (``tracetui.core.readers.lazyspan``). The payload dict is dropped as
soon as the line is done, so a loaded trace holds a fraction of its file
size, and a record pickles cheaply: ``fork_parse`` parses a file in a child
process (the other file is parsed meanwhile by the caller, on the other
core) and sends back only the records.

Used by ``load.read_pair`` (the TUI's loader); ``read_trace`` keeps
reading whole spans.
"""

from __future__ import annotations

import gc
import os
import sys
import pickle
import signal
import struct
import threading
import warnings
from typing import Any, Callable

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None  # type: ignore[assignment]

from tracetui.core.diff.align import span_key
from tracetui.core.diff.compare import payload_sig
from tracetui.core.load.channel import die_with
from tracetui.core.readers.lazyspan import PayloadFile, make_lazy
from tracetui.core.model import Span, SpanKind
from tracetui.core.readers.base import ReaderOutput
from tracetui.core.readers.native import NativeReader
from tracetui.core.readers.tree import captured

__all__ = ["ForkedParse", "INDEX_MIN_BYTES", "can_fork", "fork_parse", "indexable", "parse_indexed", "widen_pipe"]

INDEX_MIN_BYTES = 4 * 2**20
"""Files smaller than this are read whole (``read_trace``): a few thousand spans load in
milliseconds, and their payloads are then in memory for search and display."""

SNIFF_BYTES = 64 * 1024
NATIVE = NativeReader()
_TOOL, _LLM = SpanKind.TOOL, SpanKind.LLM


def indexable(path: str, format: str | None, min_bytes: int) -> PayloadFile | None:
    """The file, opened for its payloads, when the index loader reads it as ``read_trace`` would
    read it with this ``format``: a tracetui/1 file (sniffed, or ``format="tracetui"``) of at
    least ``min_bytes``. None otherwise, and on any error (``read_trace`` then reports it)."""
    if format is not None and format != NATIVE.name:
        return None
    try:
        if os.stat(path).st_size < max(min_bytes, 1):
            return None
        src = PayloadFile(path)
        if format is None:
            head = src.read(0, SNIFF_BYTES)
            # NativeReader sniffs first (readers._readers): it accepting the head is sniff_format's answer.
            if not head or head.isspace() or not NATIVE.sniff(head):
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
        return not captured(m) and not captured(data.get("output"))
    if kind is _TOOL:
        return data.get("arguments") is None and data.get("output") is None
    return False


def recorder() -> Callable[..., tuple[Any, ...]]:
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


def _parse_records(src: PayloadFile, progress: Callable[[ReaderOutput, int], None] | None = None,
                   known: dict[int, Span] | None = None) -> ReaderOutput:
    """``NativeReader.read_file``'s output for the file, with records for the clean lines' spans."""
    with os.fdopen(os.dup(src.fd), "rb") as fh:  # shares src.fd's offset, which pread ignores
        fh.seek(0)
        head = fh.read(SNIFF_BYTES)
        return NATIVE.read_file(src.path, fh, head, index=recorder(), progress=progress, known=known)


def parse_indexed(src: PayloadFile, known: dict[int, Span] | None = None,
                  progress: Callable[[float], None] | None = None) -> ReaderOutput:
    """Parse a tracetui/1 file in this process; spans of clean lines are ``LazySpan``s.

    ``known``: ``LazySpan``s of this file read already (``core.early``), by line offset: kept,
    their lines not parsed again. ``progress``: called with the share of the file's bytes parsed
    (0..1) after each 256 KiB; an exception it raises ends the parse.

    Raises:
        ReadError: nothing could be loaded (as ``NativeReader``).
        OSError: reading failed.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        hook = None
        if progress is not None:
            size = max(1, os.fstat(src.fd).st_size)

            def hook(_out: ReaderOutput, done: int) -> None:
                progress(done / size)

        out = _parse_records(src, known=known, progress=hook)
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


_FRAME = struct.Struct("<Q")
_WAIT = object()  # ForkedParse._next: no whole message yet
STREAM_STEP = 2048
"""Spans per message of the child's stream (a few ms of pickling each)."""


class _Stream:
    """The child's side of the pipe: framed pickles (length, then bytes), spans sent as they are read."""

    def __init__(self, fd: int, feed: Callable[[Callable[[Any], None], int], None] | None = None) -> None:
        self.fh = os.fdopen(fd, "wb", buffering=1 << 20)
        self.run = 0  # the run whose spans are being sent, and how many of them are
        self.sent = 0
        self.feed = feed

    def send(self, msg: Any) -> None:
        b = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        self.fh.write(_FRAME.pack(len(b)))
        self.fh.write(b)

    def __call__(self, out: ReaderOutput, done: int = 0, final: bool = False) -> None:
        """Send the spans read since the last call (``read_file``'s progress hook), in steps; while a
        ``feed`` runs, at every call (the early look waits for them), then the feed's turn."""
        runs = out.runs
        feed = self.feed
        step = 1 if feed is not None and not feed.done else STREAM_STEP  # type: ignore[attr-defined]
        while True:
            spans = runs[self.run].spans
            last = self.run == len(runs) - 1
            if len(spans) > self.sent and (not last or final or len(spans) - self.sent >= step):
                self.send(("spans", self.run, spans[self.sent:]))
                self.sent = len(spans)
            if last:
                break
            self.run += 1
            self.sent = 0
        if feed is not None and not final and not feed.done:  # type: ignore[attr-defined]
            feed(self.send, len(runs[0].spans) if runs else 0)
            self.fh.flush()  # the early look waits for what was said to be parsed: not in a 1 MiB buffer


class ForkedParse:
    """A child process parsing one file with the index loader, sending its spans as it reads them.

    The child runs only this module's parse (every module it needs is imported before the fork,
    so it takes no import lock another thread may hold) and exits with ``os._exit``. On the pipe,
    in order: the ``prelude``'s result when one is given, the spans of each run in steps of
    ``STREAM_STEP`` (records, or whole ``Span``s of careful-path lines), then the
    ``ReaderOutput`` without its spans. With a ``feed`` (``core.early_spans.Feed``), the spans go
    at every step of the parse while it runs, with the blocks of the original it parses between
    them (``("orig", block, records)``, then ``("orig_end",)``; ``original_block`` hands them out). A thread of this process drains the pipe as the child
    writes (so the child never waits for this process); ``spans`` hands out what arrived (the
    early first divergence reads the replay while it is parsed), ``result`` the whole output.
    Any failure in the child (an error in the file, a crash, the child killed) makes ``result``
    return None: the caller parses the file itself, which reports the error as ``read_trace`` does.
    """

    def __init__(self, src: PayloadFile, prelude: Callable[[PayloadFile], Any] | None = None,
                 feed: Callable[[Callable[[Any], None], int], None] | None = None) -> None:
        self.src = src
        r, w = os.pipe()
        widen_pipe(w)
        parent = os.getpid()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads running
            pid = os.fork()
        if pid == 0:  # the child
            try:
                die_with(parent)
                os.close(r)
                gc.disable()
                stream = _Stream(w, feed)
                try:
                    if prelude is not None:
                        try:
                            got = prelude(src)
                        except Exception:  # noqa: BLE001 - optional: the parent goes without
                            got = None
                        stream.send(("prelude", got))
                    out = _parse_records(src, progress=stream)
                    stream(out, final=True)
                    for run in out.runs:
                        run.spans = []  # sent already
                    stream.send(("ok", out))
                except BaseException:  # noqa: BLE001 - the parent parses again and reports
                    stream.send(("error",))
                stream.fh.flush()
            finally:
                os._exit(0)
        os.close(w)
        self.pid, self.fd = pid, r
        self.early_meet: Any = None
        """``core.structure.Meet``: where the original's structure scan is split with this child (None:
        not started by ``early.start_stream``)."""
        self.early_feed: Any = feed
        """``core.early_spans.Feed``: the original's early spans this child also parses (None: none)."""
        self.has_prelude = prelude is not None
        self._buf = bytearray()
        self._pos = 0
        self._eof = False
        self._cond = threading.Condition()
        self._finished = False
        self._runs: list[list[Any]] = []
        self._orig: dict[int, list[Any]] = {}  # the feed's blocks of the original (records), by block
        self._orig_last = -1  # the last block received; the feed's end: sys.maxsize
        self._prelude: Any = None
        self._end: Any = None  # the last message: ("ok", output) or ("error",); False: none (EOF)
        self._drain = threading.Thread(target=self._read_pipe, name="tracetui-child-pipe", daemon=True)
        self._drain.start()

    def _read_pipe(self) -> None:
        fd, cond, buf = self.fd, self._cond, self._buf
        while True:
            try:
                b = os.read(fd, 1 << 20)
            except OSError:
                b = b""
            with cond:
                if b:
                    buf += b
                else:
                    self._eof = True
                cond.notify_all()
            if not b:
                return

    def _next(self, block: bool = True) -> Any:
        """The next message from the child, or None at the end of the pipe (or on garbage);
        ``_WAIT`` when ``block`` is False and the next message has not fully arrived."""
        cond, size = self._cond, _FRAME.size
        with cond:
            while True:
                have = len(self._buf) - self._pos
                if have >= size:
                    (n,) = _FRAME.unpack_from(self._buf, self._pos)
                    if have >= size + n:
                        start = self._pos + size
                        data = bytes(self._buf[start:start + n])
                        self._pos = start + n
                        if self._pos > 1 << 24:  # drop what was read
                            del self._buf[:self._pos]
                            self._pos = 0
                        break
                if self._eof:
                    return None
                if not block:
                    return _WAIT
                cond.wait()
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a torn or foreign message: treated as the end
            return None

    def _step(self, block: bool = True) -> bool:
        """Take one message; False once the child's output has ended (or, not blocking, when
        no whole message is there yet)."""
        if self._end is not None:
            return False
        msg = self._next(block)
        if msg is _WAIT:
            return False
        if type(msg) is not tuple or not msg:
            self._end = False
        elif msg[0] == "prelude":
            self._prelude = msg[1]
        elif msg[0] == "spans":
            while len(self._runs) <= msg[1]:
                self._runs.append([])
            self._runs[msg[1]].extend(make_lazy(self.src, msg[2]))
        elif msg[0] == "orig":
            self._orig[msg[1]] = msg[2]
            self._orig_last = msg[1]
        elif msg[0] == "orig_end":
            self._orig_last = sys.maxsize
        else:
            self._end = msg
        return self._end is None

    def prelude(self) -> Any:
        """What the ``prelude`` returned in the child (None if it failed, or none was given)."""
        if not self.has_prelude:
            return None
        while self._prelude is None and not self._runs and self._step():
            pass
        return self._prelude

    def spans(self, run: int, upto: int, *, wait: bool = True) -> list[Span]:
        """The spans of run ``run`` received so far (``LazySpan``s, and whole ``Span``s of careful-path
        lines, in file order), waiting
        until at least ``upto`` are there, or the run (or the child's output) has ended; with
        ``wait`` False, only the messages already in the pipe are taken."""
        while (len(self._runs) <= run or len(self._runs[run]) < upto) and len(self._runs) <= run + 1 and self._step(wait):
            pass
        return self._runs[run] if len(self._runs) > run else []

    def original_block(self, block: int, *, wait: bool = True) -> list[Any] | None:
        """The records of the original's ``block`` the feed sent (``early_spans.Feed``; taken out: a
        block is handed out once), or None: not sent yet when ``wait`` is False; with ``wait``, once
        a later block or the feed's end has come (the child skipped or dropped it) or the child's
        output has ended."""
        while True:
            got = self._orig.pop(block, None)
            if got is not None or self._orig_last >= block:
                return got
            if not self._step(wait):
                return self._orig.pop(block, None)

    def result(self) -> ReaderOutput | None:
        """The child's output with ``LazySpan``s, or None when it failed (waits for it)."""
        was = gc.isenabled()
        gc.disable()
        try:
            while self._step():
                pass
            self._finish()
            end = self._end
            if not (type(end) is tuple and end[0] == "ok" and isinstance(end[1], ReaderOutput)):
                return None
            out: ReaderOutput = end[1]
            if len(self._runs) > len(out.runs):
                return None
            for n, run in enumerate(out.runs):
                run.spans = self._runs[n] if n < len(self._runs) else []  # LazySpans already (_step)
            return out
        except Exception:  # noqa: BLE001 - a truncated or foreign payload: parse again here
            return None
        finally:
            self._runs = []
            if was:
                gc.enable()

    def cancel(self) -> None:
        """Stop the child (the other file failed: its result is not needed)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self._finish()

    def _finish(self) -> None:
        """Wait for the drain thread, close the pipe and reap the child: once (``cancel`` may come from
        another thread while ``result`` ends; closing the descriptor twice could close another file
        opened in between)."""
        self._drain.join()
        with self._cond:
            if self._finished:
                return
            self._finished = True
        try:
            os.close(self.fd)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


_PIPE_BYTES = 4 << 20


def widen_pipe(fd: int) -> None:
    """Give the pipe a buffer of up to 4 MiB (Linux; the most allowed): the thread draining it
    runs only when this process's other threads let go of the GIL (every 5 ms when busy), and a
    64 KiB pipe would stall the child ~0.1 s a MB (measured: 2.8 s of waiting for 27k spans)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", 1031) if fcntl is not None else None
    if setsize is None or not sys.platform.startswith("linux"):
        return
    for size in (_PIPE_BYTES, 1 << 20):
        try:
            fcntl.fcntl(fd, setsize, size)
            return
        except OSError:  # above /proc/sys/fs/pipe-max-size for this user
            continue


def fork_parse(src: PayloadFile, prelude: Callable[[PayloadFile], Any] | None = None,
               feed: Callable[[Callable[[Any], None], int], None] | None = None) -> ForkedParse | None:
    """Start parsing ``src`` in a child process (``prelude(src)`` first, when given, its result sent
    ahead of the spans; ``feed(send, spans_parsed)`` after each step of the parse, when given, in the
    child: ``core.early_spans.Feed``); None when no process can be started."""
    try:
        return ForkedParse(src, prelude, feed)
    except OSError:
        return None

