"""The socket guard: no outbound network connection from inside a strict or fixture replay.

Built on a PEP 578 audit hook (``sys.addaudithook``) on the ``socket.connect``, ``socket.sendto``,
``socket.sendmsg``, ``socket.getaddrinfo``, ``socket.gethostbyname``, ``socket.gethostbyaddr``
and ``socket.getnameinfo`` events. The hook sees every connection, datagram and name lookup made
through Python's ``socket`` module, whichever library made it (http.client, urllib3, httpx,
asyncio streams), and raising from it aborts the call before any packet leaves. Unix-domain
sockets (``AF_UNIX``) bound to a path are refused too: a local database or a container daemon
listens on one. ``socket.socketpair`` (asyncio's self-pipe) and pipes are not network calls.

Audit hooks cannot be removed, so the hook is installed once per process and does nothing
unless a guard is active. A guard is **process-wide** while it is active: a thread the agent
starts is blocked too. ``allow_network`` lifts it for one explicitly allowed live call, in the
current context only (a ``contextvars.ContextVar``: other threads stay blocked), with one exception:
while an allowed call is in progress, a *name lookup* from another thread is let through, because
an async model client resolves its host in a worker thread (asyncio's ``loop.getaddrinfo`` runs
``socket.getaddrinfo`` in the default executor, which does not carry the context); connections
and datagrams from other threads stay blocked, and inside the replay sandbox's network namespace
a lookup has no route anyway. Limits,
documented in docs/harness.md: a C extension that opens sockets without Python's ``socket``
module, and a subprocess, are not seen; ``tracetui replay`` therefore runs the agent inside a
network namespace where Linux gives one (``core.harness.sandbox``), with this guard inside it.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.errors import LiveCallBlocked


@dataclass(slots=True)
class NetworkGuard:
    """What one guard saw.

    Attributes:
        mode: The replay mode the guard protects (for the message).
        blocked: Each blocked attempt: ``"connect 93.184.216.34:443"``, ``"getaddrinfo example.com"``.
    """

    mode: str
    blocked: list[str] = field(default_factory=list)


_GUARDS: list[NetworkGuard] = []  # active guards, innermost last; process-wide
_ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar("tracetui_network_allowed", default=False)
_INSTALLED = False
_ACTIVE_ALLOWANCES = [0]  # allow_network blocks in progress, in any thread (under _COUNT_LOCK)
_COUNT_LOCK = threading.Lock()
_LOOKUPS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo"})


_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
                     "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo"})


def _audit(event: str, args: tuple[Any, ...]) -> None:  # pragma: no mutate block
    """The hook installed: every audit event of the process passes here, only the socket ones go on to
    ``_hook``. Kept apart so that a mutation-testing run (``scripts/mutation.py guard``), which installs the
    hook in its own process, does not route its own events (``os.putenv``...) through a mutated ``_hook``."""
    if event in _EVENTS:
        _hook(event, args)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event not in _EVENTS:
        return
    if not _GUARDS or _ALLOWED.get():
        return
    if event in _LOOKUPS and _ACTIVE_ALLOWANCES[0] > 0:
        return  # an allowed call's own lookup, made in an executor thread (module docstring)
    guard = _GUARDS[-1]
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[1]
        if address is None:
            return  # sendmsg on a connected socket: its connect was the call to refuse
        what = f"{event.split('.')[1]} {_address(address)}"
        if getattr(sock, "family", None) == getattr(socket, "AF_UNIX", object()):
            what = f"{event.split('.')[1]} unix:{_address(address)}"
    else:
        host = args[0]
        if isinstance(host, tuple):
            host = host[0] if host else None
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if event in ("socket.getaddrinfo", "socket.gethostbyname") and (host is None or _numeric(host)):
            return  # no lookup leaves the machine for an address literal; its connect is what gets blocked
        what = f"{event.split('.')[1]} {host!r}"
    guard.blocked.append(what)
    raise LiveCallBlocked(
        f"{guard.mode} replay blocked an outbound network call ({what}): replay never reaches a live "
        "system. A tool or retriever that needs the network must be answered from the recording or the "
        "fixture; use --mode loose --allow-live to let misses reach a live (staging) system")


def _numeric(host: Any) -> bool:
    """``host`` is an address literal (``127.0.0.1``, ``::1``, ``fe80::1%eth0``: an IPv6 scope is part of one),
    which a lookup answers without the name service. ``127.0.0.1%eth0`` is not one: the C library looks it up
    as a name."""
    try:
        ipaddress.ip_address(str(host))
    except ValueError:
        return False
    return True


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def _install() -> None:
    global _INSTALLED
    if not _INSTALLED:
        sys.addaudithook(_audit)
        _INSTALLED = True


@contextmanager
def block_network(mode: str) -> Iterator[NetworkGuard]:
    """Block outbound network connections in this context.

    Args:
        mode: The replay mode, named in the error message (``strict``, ``fixture``).

    Yields:
        The NetworkGuard, whose ``blocked`` lists every attempt it refused.

    Raises:
        Inside the block, any ``socket.connect``/``connect_ex``/``sendto`` to a network address and
        any name lookup raise ``LiveCallBlocked`` (a ``ConnectionError``) at the call site.
    """
    _install()
    guard = NetworkGuard(mode)
    _GUARDS.append(guard)
    token = _ALLOWED.set(False)
    try:
        yield guard
    finally:
        _ALLOWED.reset(token)
        _GUARDS.remove(guard)


@contextmanager
def allow_network() -> Iterator[None]:
    """Lift the guard for one explicitly allowed live call (a model-in-the-loop ``MODEL`` call, a
    loose-mode miss with ``--allow-live``), in the current thread or task only (and, while it
    lasts, for name lookups from any thread: module docstring)."""
    token = _ALLOWED.set(True)
    with _COUNT_LOCK:
        _ACTIVE_ALLOWANCES[0] += 1
    try:
        yield
    finally:
        with _COUNT_LOCK:
            _ACTIVE_ALLOWANCES[0] -= 1
        _ALLOWED.reset(token)
