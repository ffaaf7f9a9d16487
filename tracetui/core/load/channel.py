"""Pickled messages from a forked child process over a pipe: ``send`` in the child, ``Frames`` in the parent.

A message is a Python value pickled (highest protocol) behind its length (8 bytes, little-endian). The parent's
``Frames`` drains the pipe in a thread as the child writes (so the child never waits for the parent while the
parent is busy: with ``native_index.widen_pipe`` on the child's end, a 64 KiB pipe stalled it) and hands the
messages out by number, unpickled when taken. Used by the OTLP early look's children (``otlp_early.SideChild``)
and a file's whole read in a child (``read_child.ReadChild``).
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import struct
import threading
import time
from typing import Any, Callable

__all__ = ["Frames", "die_with", "send"]

_FRAME = struct.Struct("<Q")


def _load_prctl() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


_PRCTL = _load_prctl()  # looked up before any fork
_PR_SET_PDEATHSIG = 1


def die_with(parent: int) -> None:
    """Called first in a forked child: be killed when ``parent`` (the pid that forked it) ends (Linux
    ``PR_SET_PDEATHSIG``), and end now if it has already. A TUI killed mid-read then leaves no orphan reading on,
    or waiting for a reader that is gone (elsewhere a child ends at its first write to the closed pipe)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


def send(fd: int, obj: Any) -> None:
    """Write ``obj`` pickled as one message to the pipe ``fd`` (waits while the pipe is full).

    Raises:
        OSError: the pipe is closed (the parent stopped reading), or another write error.
        pickle.PicklingError, TypeError: ``obj`` cannot be pickled.
    """
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class Frames:
    """The messages a child writes to the pipe ``fd`` with ``send``, drained by a daemon thread (named ``name``)
    from now on; ``fd`` is closed when the child's end is (or on a read error)."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd = fd
        self._cond = threading.Condition()
        self._frames: list[bytes | None] = []
        self.ended = False
        """Whether the pipe ended (the child closed it, exited or was killed): no message comes after."""
        threading.Thread(target=self._drain, name=name, daemon=True).start()

    def _drain(self) -> None:
        buf = bytearray()
        try:
            while True:
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:
                    break
                buf += chunk
                got = []
                at = 0
                while len(buf) - at >= 8:
                    n = _FRAME.unpack_from(buf, at)[0]
                    if len(buf) - at < 8 + n:
                        break
                    got.append(bytes(buf[at + 8:at + 8 + n]))
                    at += 8 + n
                if at:
                    del buf[:at]
                if got:
                    with self._cond:
                        self._frames.extend(got)
                        self._cond.notify_all()
        except OSError:
            pass
        finally:
            with self._cond:
                self.ended = True
                self._cond.notify_all()
            try:
                os.close(self._fd)
            except OSError:
                pass

    def message(self, i: int, tick: Callable[[], object] | None = None, timeout: float | None = None) -> Any:
        """The ``i``-th message (from 0), waited for and unpickled; each is handed out once (its bytes are dropped).

        Args:
            i: The message's number.
            tick: Called every 50 ms while waiting; an exception it raises ends the wait (it propagates).
            timeout: Seconds to wait at most (None: until the message comes or the pipe ends).

        Returns:
            The value, or None when the pipe ended (or ``timeout`` passed) before the message came.

        Raises:
            pickle.UnpicklingError and what unpickling raises: a message that is not a whole pickle.
        """
        cond = self._cond
        until = None if timeout is None else time.monotonic() + timeout
        while True:
            with cond:
                if len(self._frames) > i or self.ended:
                    break
                cond.wait(0.05)
            if tick is not None:
                tick()
            if until is not None and time.monotonic() >= until:
                return None
        with cond:
            if len(self._frames) <= i:
                return None
            raw, self._frames[i] = self._frames[i], None
        if raw is None:
            raise ValueError(f"message {i} was handed out already")
        return pickle.loads(raw)
