"""Writing tracetui/1 as a run goes: header first, then each span when it ends, flushed per line.

A reader can open the file at any moment (docs/format.md: a torn last line is held back), and a
run that dies half-way leaves everything it did. The header is written with room to spare
(trailing spaces, which JSON allows) so that, when the run ends, what is only known then — which
redaction rules fired — is written into it in place without moving a byte of the spans. A
completion that outgrows that room (an ambient run that met many tools records their schemas) is
kept and written when the writer closes, so it is never lost.

When the writer closes, the file is rewritten once without the spare room (a temporary file in
the same folder, then an atomic rename), so a finished trace has plain header lines.

A new file is created exclusively (``O_EXCL``): an existing file is never touched unless
``overwrite`` is set, and then the run streams to a temporary file in the same folder that
replaces the old one atomically when the writer closes, so a failed run never destroys it.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

from tracetui.core.model import Span
from tracetui.core.tempfiles import make_temp_file
from tracetui.core.readers.native import SCHEMA, dumps_line, span_to_obj

HEADER_ROOM = 1024
"""Bytes of spaces reserved after each header for the fields completed when the run ends."""


class TraceWriter:
    """Stream runs to a tracetui/1 file.

    Args:
        path: Destination.
        overwrite: Replace an existing file (atomically, on ``close``); otherwise an existing file
            raises ``FileExistsError``.

    Not thread-safe on its own; the harness serialises calls.
    """

    def __init__(self, path: str, *, overwrite: bool = False) -> None:
        self.path = path
        self._tmp: str | None = None
        if overwrite and os.path.lexists(path):
            target = os.path.realpath(path)
            fd, self._tmp = make_temp_file(os.path.dirname(target) or ".")
            try:
                os.fchmod(fd, os.stat(target).st_mode & 0o7777)
            except OSError:
                pass
            self._fh: BinaryIO = os.fdopen(fd, "w+b")
            self._final = target
        else:
            self._fh = open(path, "x+b")  # noqa: SIM115 - closed in close()
            self._final = path
        self._header_at = 0
        self._header_len = 0
        self._headers: list[int] = []
        self._late: dict[int, bytes] = {}  # header offset -> completed line too long for its room
        self.spans = 0

    def header(self, header: dict[str, Any]) -> None:
        """Start a run: write its header line (``schema`` first) with ``HEADER_ROOM`` spare bytes."""
        line = dumps_line({"schema": SCHEMA, **{k: v for k, v in header.items() if k != "schema"}})
        self._header_at = self._fh.tell()
        self._header_len = len(line) + HEADER_ROOM
        self._headers.append(self._header_at)
        self._fh.write(line + b" " * HEADER_ROOM + b"\n")
        self._fh.flush()

    def span(self, span: Span) -> None:
        """Append one span line and flush it."""
        self._fh.write(dumps_line(span_to_obj(span)) + b"\n")
        self._fh.flush()
        self.spans += 1

    def complete_header(self, header: dict[str, Any]) -> bool:
        """Rewrite the current run's header in place with ``header``.

        Returns:
            True when written in place now. False when it does not fit the reserved room: the file
            is unchanged until ``close``, which writes this completion (the latest one given) in
            the header's place; before any ``header`` there is nothing to complete (also False).
        """
        line = dumps_line({"schema": SCHEMA, **{k: v for k, v in header.items() if k != "schema"}})
        if len(line) > self._header_len:
            if self._headers:
                self._late[self._header_at] = line
            return False
        self._late.pop(self._header_at, None)
        end = self._fh.tell()
        self._fh.seek(self._header_at)
        self._fh.write(line + b" " * (self._header_len - len(line)))
        self._fh.seek(end)
        self._fh.flush()
        return True

    def close(self) -> None:
        """Flush; rewrite the file without the headers' spare room (atomically), each header that
        outgrew its room as completed; with ``overwrite``, this replaces the old file now."""
        if self._fh.closed:
            return
        self._fh.flush()
        self._fh.seek(0)
        data = self._fh.read()
        self._fh.close()
        compact = bytearray()
        last = 0
        for at in self._headers:
            end = data.index(b"\n", at)
            compact += data[last:at]
            late = self._late.get(at)
            compact += late if late is not None else data[at:end].rstrip(b" ")
            last = end
        compact += data[last:]
        target = self._final
        folder = os.path.dirname(os.path.abspath(target)) or "."
        fd, tmp = make_temp_file(folder)  # named by this process: a crash's leftover is swept next time
        try:
            try:
                mode = os.stat(self._tmp if self._tmp is not None else target).st_mode & 0o7777
            except OSError:
                mode = 0o644
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(compact)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        if self._tmp is not None:
            os.unlink(self._tmp)
            self._tmp = None
