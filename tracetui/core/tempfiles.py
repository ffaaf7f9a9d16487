"""Temporary files and folders of atomic writes, named by their owner so a crash leaves nothing for long.

Every atomic write of tracetui (``convert``, the run writer, the TUI's ``w``, labels, ``promote``) writes
a temporary file (or folder) beside its target and renames it into place. Killed mid-write (``kill -9``,
power loss), the temporary stays. Their names carry the host and the process id that made them::

    .tracetui-<host>-<pid>-<random>.tmp          files
    .<case>.<host>-<pid>-<random>.promote-tmp    promote's case folders

and the next write into the same folder removes those whose process is gone (same host, the pid no
longer running, the file ours: same owner, untouched for ``GRACE_S`` seconds). Nothing else is ever
removed: not a name of another shape, not another host's, not a live process's, not another user's.
Temporaries of tracetui before this naming (``.tracetui-<random>.tmp``) carry no owner and are left.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import tempfile
import time

__all__ = ["GRACE_S", "make_temp_dir", "make_temp_file", "sweep"]

GRACE_S = 10.0
"""A temporary younger than this is never removed (its process may have just started)."""

_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
_FILE = re.compile(r"\.tracetui-([0-9a-f]{8})-(\d+)-[A-Za-z0-9_]+\.tmp\Z")
_DIR = re.compile(r"\..+\.([0-9a-f]{8})-(\d+)-[A-Za-z0-9_]+\.promote-tmp\Z")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # someone else's process, or no way to tell: alive
        return True
    return True


def sweep(folder: str) -> list[str]:
    """Remove the temporaries of dead tracetui processes of this host from ``folder``; return their paths.

    Never raises: a folder that cannot be listed, or an entry that cannot be removed, is left as it is."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder or "."))
    except OSError:
        return removed
    now = time.time()
    uid = os.getuid() if hasattr(os, "getuid") else None
    for e in entries:
        name = e.name
        if not name.startswith("."):
            continue
        m = _FILE.match(name) or _DIR.match(name)
        if m is None or m.group(1) != _HOST or _alive(int(m.group(2))):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if (uid is not None and st.st_uid != uid) or now - st.st_mtime < GRACE_S:
                continue
            if m.re is _DIR:
                if not e.is_dir(follow_symlinks=False):
                    continue
                shutil.rmtree(e.path)
            elif e.is_file(follow_symlinks=False):
                os.unlink(e.path)
            else:
                continue
        except OSError:
            continue
        removed.append(e.path)
    return removed


def make_temp_file(folder: str) -> tuple[int, str]:
    """``(fd, path)`` of a new temporary file (mode 0600) in ``folder``, named by this process; the
    stale temporaries of dead processes there are removed first (``sweep``).

    Raises:
        OSError: the folder cannot be written.
    """
    folder = folder or "."
    sweep(folder)
    return tempfile.mkstemp(prefix=f".tracetui-{_HOST}-{os.getpid()}-", suffix=".tmp", dir=folder)


def make_temp_dir(folder: str, name: str) -> str:
    """A new temporary folder ``.<name>.<host>-<pid>-<random>.promote-tmp`` in ``folder`` (after ``sweep``).

    Raises:
        OSError: the folder cannot be written.
    """
    sweep(folder)
    return tempfile.mkdtemp(prefix=f".{name}.{_HOST}-{os.getpid()}-", suffix=".promote-tmp", dir=folder)
