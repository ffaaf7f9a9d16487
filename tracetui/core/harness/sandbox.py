"""Network isolation of a replay: the agent runs in a child process inside its own Linux network
namespace, which has a loopback interface and nothing else, so nothing it does (an import-time
connection, a subprocess such as ``curl``, ``os.system``, ``ctypes``, UDP, a multiprocessing
child, DNS) has a route to any other system.

The namespace is made with ``unshare`` from util-linux: ``unshare --net`` when the process may
create a network namespace (root, or ``CAP_SYS_ADMIN``), else ``unshare --user --map-root-user
--net`` (an unprivileged user namespace, where the kernel allows them). The child is the same
``tracetui`` command line, run again with ``TRACETUI_NETNS=1`` in its environment; it brings its
loopback up and confirms it sees no other interface (``socket.if_nameindex()``) before it imports
the agent. The in-process socket guard (``guard.block_network``) stays on inside the child too,
so the replay report still lists each Python-level attempt it refused. With the model called
again (``--llm live``) the parent relays the model client's calls to the configured model
endpoint and nowhere else (``core.harness.relay``); the commands that run themselves in the
namespace (``replay``, the zero-code ``replay -- python app.py``, ``golden run``, ``triage
--agent``) do so through ``cli.isolate``.

Where no namespace can be had (not Linux, no ``unshare``, a kernel or container that refuses
both forms, ``TRACETUI_NO_NETNS=1``, ``--allow-live``, a replay session opened in the user's own
process) the replay runs in process with the guard alone, and says so
(``ISOLATION_GUARD``). Not isolated by a network namespace: Unix-domain sockets bound to a file
path (they are files; the guard refuses them from Python code in the agent process, not from
its subprocesses).
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence

ENV_CHILD = "TRACETUI_NETNS"
"""Set to ``1`` in the environment of the child started inside the namespace."""
ENV_DISABLE = "TRACETUI_NO_NETNS"
"""Set to ``1`` to run replays in process (guard only) even where a namespace could be had."""

ISOLATION_NAMESPACE = "network namespace (loopback only): the agent process and its subprocesses have no route out"
ISOLATION_GUARD = "in-process guard only; subprocesses and native code are not covered"


@functools.lru_cache(maxsize=1)
def namespace_prefix() -> tuple[tuple[str, ...] | None, str]:
    """The command prefix that starts a program in a fresh network namespace, and why not.

    Returns:
        ``(("/usr/bin/unshare", "--net"), "")`` or the ``--user --map-root-user --net`` form, the
        first one that works here (probed once per process by running ``python -c ''`` in it);
        ``(None, reason)`` when neither does.
    """
    if not sys.platform.startswith("linux"):
        return None, f"network namespaces are Linux-only (this is {sys.platform})"
    if os.environ.get(ENV_DISABLE) == "1":
        return None, f"{ENV_DISABLE}=1 is set"
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, "util-linux `unshare` is not on PATH"
    for prefix in ((unshare, "--net"), (unshare, "--user", "--map-root-user", "--net")):
        try:
            probe = subprocess.run([*prefix, sys.executable, "-c", ""], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return prefix, ""
    return None, "the kernel refused a network namespace (unshare --net and unshare --user --net both failed)"


def inside() -> bool:
    """Whether this process was started as the namespaced child (``ENV_CHILD``)."""
    return os.environ.get(ENV_CHILD) == "1"


def enter_child() -> str:
    """In the namespaced child: bring loopback up, confirm there is no other interface, and (when
    the parent runs a model relay) listen for the model client's calls (``relay.child_listen``).

    Returns:
        ``ISOLATION_NAMESPACE`` when confirmed, else ``ISOLATION_GUARD`` (the environment said
        namespace but the interfaces say otherwise: the guard is all there is).
    """
    from tracetui.core.harness.relay import child_listen

    os.environ.pop(ENV_CHILD, None)  # processes the agent starts are not tracetui's child
    try:
        names = [name for _index, name in socket.if_nameindex()]
    except OSError:
        names = []
    if names != ["lo"]:
        child_listen()
        return ISOLATION_GUARD
    _loopback_up()
    child_listen()  # --llm live: the model relay's listener, handed to the parent
    return ISOLATION_NAMESPACE


def _loopback_up() -> None:
    """``ip link set lo up`` by ioctl (SIOCGIFFLAGS/SIOCSIFFLAGS on a ``struct ifreq``); a failure
    leaves loopback down, which only makes the namespace stricter."""
    import fcntl  # POSIX only: this module is imported everywhere, the namespace exists only on Linux

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            got = fcntl.ioctl(s, siocgifflags, struct.pack("16sh22x", b"lo", 0))
            flags = struct.unpack("16sh22x", got)[1]
            fcntl.ioctl(s, siocsifflags, struct.pack("16sh22x", b"lo", flags | iff_up))
    except OSError:
        pass


def child_env() -> dict[str, str]:
    """The environment of the namespaced child: this one, ``ENV_CHILD=1``, and ``PYTHONPATH``
    naming this tracetui when it runs from a source tree."""
    import tracetui

    env = dict(os.environ)
    env[ENV_CHILD] = "1"
    root = os.path.dirname(os.path.dirname(os.path.abspath(tracetui.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def isolated_command(command: Sequence[str]) -> list[str] | None:
    """``command`` prefixed to run in a fresh network namespace, or None where none can be had."""
    prefix, _why = namespace_prefix()
    return None if prefix is None else [*prefix, *command]
