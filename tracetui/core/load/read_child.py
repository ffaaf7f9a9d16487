"""A file's whole read made in a forked child process (issue 22): ``readers.read_trace`` or ``read_replay`` of a
big OTLP/JSON file on the other core while this process reads the pair's other file.

The child runs the reader's own entry (so the runs, spans, issues and errors are the reader's) and sends, over
a pipe (``core.load.channel``), the run's spans as ``otlp_lazy`` export records, ``BLOCK`` a message, then the
``Trace`` without its spans and the identity of the file it read (``PayloadFile.opened``: device, inode, size and
times as its read started). This process adopts them (``OtlpPayloads.adopt``) over its own descriptor of the
file, opened before the fork (``readers.otlp.payload_source``): the payloads stay in the file and are decoded here on first use, checked
against the span's id and payload signature, as after a read made here. A file that is not the one the child
read (replaced or written to in between), a child that fails (an error in the file, a crash, killed), or a span of a source
that cannot be sent gives None: the caller reads the file itself, which reports any error as the reader does.

Why (docs/performance.md, "Both sides read at once"): reading a 100k-span OTLP/JSON file is ~5 s of per-span
Python work in one process; sending its spans and adopting them here costs a fraction of that.

The records carry what the child computed, the payload signatures among them (XXH3 hashes: the same in every
process).

A child can be forked *gated* (``ReadChild(..., gated=True)``): it waits, holding no core, until ``go``. The TUI
forks it before importing Textual (no threads yet: a fork with threads running can copy a held lock) and lets it
read once its early look is over, so the early look's own two children have the cores meanwhile.
"""

from __future__ import annotations

import gc
import os
import signal
from typing import Any

from tracetui.core import readers
from tracetui.core.load.channel import Frames, die_with, send
from tracetui.core.load.native_index import widen_pipe
from tracetui.core.model import Trace
from tracetui.core.readers.gc_paused import promote_young_objects
from tracetui.core.readers.lazyspan import LazySpan, PayloadFile
from tracetui.core.readers.otlp import payload_source
from tracetui.core.readers.otlp_lazy import export_span, range_file

__all__ = ["BLOCK", "ReadChild"]

BLOCK = 4096
"""Spans a message of the child carries."""


class ReadChild:
    """``readers.read_replay(path, ...)`` (``replay``) or ``readers.read_trace(path, ...)`` in a forked child
    (module docstring). ``result`` gives its ``Trace`` or None; ``cancel`` stops it.

    Raises (the constructor):
        OSError: the file cannot be opened, or no pipe or process can be made (the caller reads the file itself).
    """

    def __init__(self, path: str, *, replay: bool, format: str | None = None, trace_id: str | None = None,
                 replay_trace_id: str | None = None, gated: bool = False) -> None:
        self.path = path
        self.file = PayloadFile(readers.split_run_ref(path)[0])  # the file this process's spans read
        r, w = os.pipe()
        widen_pipe(w)
        gate_r, gate_w = os.pipe() if gated else (-1, -1)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                die_with(parent)
                os.close(r)
                if gated:
                    os.close(gate_w)
                    if os.read(gate_r, 1) != b"g":  # closed: not wanted
                        os._exit(0)
                _child(path, w, replay, format, trace_id, replay_trace_id)
            finally:
                os._exit(0)
        os.close(w)
        if gated:
            os.close(gate_r)
        self.pid: int | None = pid
        self._gate = gate_w
        self._frames = Frames(r, "tracetui-read-child")

    def go(self) -> None:
        """Let a gated child start its read (idempotent; nothing for a child not gated)."""
        if self._gate >= 0:
            try:
                os.write(self._gate, b"g")
            except OSError:
                pass
            self._close_gate()

    def result(self) -> Trace | None:
        """The child's ``Trace`` (waited for; a gated child is let go first), its spans adopted here; None when
        the child failed, sent what cannot be adopted, or read another file than this process's descriptor
        holds. Then the child is reaped. Never raises but for ``KeyboardInterrupt``-like exceptions."""
        self.go()
        gc_was = gc.isenabled()
        gc.disable()
        try:
            return self._adopted()
        except Exception:  # noqa: BLE001 - the caller reads the file itself and reports
            return None
        finally:
            promote_young_objects()
            if gc_was:
                gc.enable()
            self.cancel()

    def _adopted(self) -> Trace | None:
        payloads = payload_source(self.file)
        adopt = payloads.adopt
        spans: list[Any] = []
        i = 0
        while True:
            m = self._frames.message(i)
            i += 1
            if type(m) is not tuple or not m:
                return None
            if m[0] == "spans":
                spans.extend([adopt(r) if type(r) is tuple else r for r in m[1]])
                continue
            if m[0] != "ok":
                return None
            trace, ident = m[1], m[2]
            if ident is not None and ident != self.file.opened:
                return None  # the child read another file (replaced since this process opened it)
            trace.spans = spans
            return trace  # type: ignore[no-any-return]

    def cancel(self) -> None:
        """Stop the child (if it still runs) and reap it (idempotent)."""
        self._close_gate()
        pid, self.pid = self.pid, None
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass

    def _close_gate(self) -> None:
        gate, self._gate = self._gate, -1
        if gate >= 0:
            try:
                os.close(gate)
            except OSError:
                pass


def _child(path: str, w: int, replay: bool, fmt: str | None, trace_id: str | None,
           replay_trace_id: str | None) -> None:
    gc.disable()
    try:
        trace = readers.read_replay(path, format=fmt, trace_id=trace_id, replay_trace_id=replay_trace_id) \
            if replay else readers.read_trace(path, format=fmt, trace_id=trace_id)
        ident = None
        block: list[Any] = []
        for s in trace.spans:
            if type(s) is LazySpan:
                rec = export_span(s)
                if rec is None:  # another source (a tracetui/1 line range): not sent, the parent reads
                    send(w, ("error",))
                    return
                if ident is None and rec[-1] is not None:  # a byte range: the file it is in
                    f = range_file(s)
                    if type(f) is not PayloadFile:  # bytes kept in memory (not a regular file): not sent
                        send(w, ("error",))
                        return
                    ident = f.opened  # (device, inode, size, times) as its read started
                block.append(rec)
            else:
                block.append(s)
            if len(block) == BLOCK:
                send(w, ("spans", block))
                block = []
        if block:
            send(w, ("spans", block))
        trace.spans = []
        send(w, ("ok", trace, ident))
    except BaseException:  # noqa: BLE001 - the parent reads the file itself and reports
        try:
            send(w, ("error",))
        except BaseException:  # noqa: BLE001 - the parent sees the pipe end
            pass
