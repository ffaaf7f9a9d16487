"""The socket guard on its own: process-wide while active, lifted only where allowed."""

from __future__ import annotations

import socket
import threading
import urllib.request

import pytest

from tracetui.core.errors import LiveCallBlocked
from tracetui.core.harness.guard import allow_network, block_network


@pytest.fixture()
def server() -> tuple[socket.socket, list[socket.socket]]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.3)
    accepted: list[socket.socket] = []
    yield srv, accepted
    srv.close()
    for c in accepted:
        c.close()


def _accept_all(srv: socket.socket, accepted: list[socket.socket]) -> None:
    try:
        while True:
            accepted.append(srv.accept()[0])
    except OSError:
        pass


def test_blocks_connect_urllib_and_name_lookups_and_reports_each(server) -> None:
    srv, accepted = server
    port = srv.getsockname()[1]
    with block_network("strict") as guard:
        with pytest.raises(LiveCallBlocked):
            socket.create_connection(("127.0.0.1", port), timeout=1)
        with pytest.raises(OSError):  # urllib wraps it in URLError, an OSError
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
        with pytest.raises(LiveCallBlocked):
            socket.getaddrinfo("example.invalid", 443)
    _accept_all(srv, accepted)
    assert accepted == []
    assert guard.blocked[0] == f"connect 127.0.0.1:{port}" and "getaddrinfo 'example.invalid'" in guard.blocked
    # Outside the guard the same connection goes through.
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
    _accept_all(srv, accepted)
    assert len(accepted) == 1


def test_a_thread_started_inside_a_replay_is_blocked_too(server) -> None:
    srv, accepted = server
    port = srv.getsockname()[1]
    errors: list[BaseException] = []

    def dial() -> None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            errors.append(exc)

    with block_network("fixture"):
        t = threading.Thread(target=dial)
        t.start()
        t.join()  # (no time limit: the dial ends by itself, its connect refused or timed out)
    _accept_all(srv, accepted)
    assert accepted == [] and len(errors) == 1 and isinstance(errors[0], LiveCallBlocked)
    assert "fixture replay blocked" in str(errors[0])


def test_allow_network_lifts_it_for_the_current_thread_only(server) -> None:
    srv, accepted = server
    port = srv.getsockname()[1]
    other: list[BaseException] = []

    def dial() -> None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except BaseException as exc:  # noqa: BLE001
            other.append(exc)

    with block_network("strict"):
        with allow_network():
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            t = threading.Thread(target=dial)
            t.start()
            t.join()  # (no time limit: the dial ends by itself, its connect refused or timed out)
        with pytest.raises(LiveCallBlocked):
            socket.create_connection(("127.0.0.1", port), timeout=1)
    _accept_all(srv, accepted)
    assert len(accepted) == 1 and len(other) == 1


def test_unix_socket_paths_are_refused_socketpair_is_not(tmp_path) -> None:
    # a local database or a container daemon listens on a Unix socket: a replay must not reach it
    path = str(tmp_path / "s")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen()
    try:
        with block_network("strict") as guard:
            c = socket.socket(socket.AF_UNIX)
            with pytest.raises(LiveCallBlocked):
                c.connect(path)
            c.close()
            a, b = socket.socketpair()  # asyncio's self-pipe: not a network call
            a.close()
            b.close()
        assert guard.blocked == [f"connect unix:{path}"]
    finally:
        srv.close()


def test_udp_sendmsg_and_reverse_lookups_are_refused() -> None:
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.2)
    port = rx.getsockname()[1]
    try:
        with block_network("strict") as guard:
            tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            with pytest.raises(LiveCallBlocked):
                tx.sendmsg([b"x"], [], 0, ("127.0.0.1", port))
            with pytest.raises(LiveCallBlocked):
                tx.sendto(b"x", ("127.0.0.1", port))
            tx.close()
            with pytest.raises(LiveCallBlocked):
                socket.gethostbyaddr("127.0.0.1")
            with pytest.raises(LiveCallBlocked):
                socket.gethostbyname("example.invalid")
        with pytest.raises(TimeoutError):
            rx.recv(10)
        assert [b.split()[0] for b in guard.blocked] == ["sendmsg", "sendto", "gethostbyaddr", "gethostbyname"]
    finally:
        rx.close()


def test_an_async_clients_lookup_in_an_executor_thread_is_allowed_during_an_allowed_call_only() -> None:
    import asyncio

    async def lookup() -> None:  # asyncio resolves in its default executor: the context is not carried
        await asyncio.get_running_loop().getaddrinfo("localhost", 80)

    with block_network("strict") as guard:
        with allow_network():
            asyncio.run(lookup())
        with pytest.raises(LiveCallBlocked):
            asyncio.run(lookup())
    assert guard.blocked == ["getaddrinfo 'localhost'"]
