"""The network guard's rules, one by one: what a replay may not reach (datagrams, reverse lookups, lookups of a name
given as bytes or of something that only looks like an address), what is let through because no lookup leaves the
machine (an address literal), how each refusal is reported (the destination named) and what the error tells the
user to do. Each on real sockets in the test, none of which reaches anything."""

from __future__ import annotations

import socket

import pytest

from tracetui.core.errors import LiveCallBlocked
from tracetui.core.harness.guard import block_network


@pytest.fixture()
def udp_port():
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.2)
    yield rx.getsockname()[1]
    rx.close()


def test_a_refused_datagram_names_its_destination(udp_port: int) -> None:
    with block_network("strict") as guard:
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            with pytest.raises(LiveCallBlocked, match=f"sendto 127.0.0.1:{udp_port}"):
                tx.sendto(b"x", ("127.0.0.1", udp_port))
            with pytest.raises(LiveCallBlocked, match=f"sendmsg 127.0.0.1:{udp_port}"):
                tx.sendmsg([b"x"], [], 0, ("127.0.0.1", udp_port))
        finally:
            tx.close()
    assert guard.blocked == [f"sendto 127.0.0.1:{udp_port}", f"sendmsg 127.0.0.1:{udp_port}"]


def test_a_reverse_lookup_of_a_socket_address_is_refused_naming_the_host() -> None:
    with block_network("strict") as guard:
        with pytest.raises(LiveCallBlocked):
            socket.getnameinfo(("127.0.0.1", 80), 0)
    assert guard.blocked == ["getnameinfo '127.0.0.1'"]


def test_a_host_name_given_as_bytes_is_refused_like_text_even_when_not_ascii() -> None:
    with block_network("strict") as guard:
        with pytest.raises(LiveCallBlocked):
            socket.getaddrinfo(b"example.invalid", 443)
        with pytest.raises(LiveCallBlocked):
            socket.getaddrinfo(b"caf\xe9.invalid", 443)
    assert guard.blocked == ["getaddrinfo 'example.invalid'", "getaddrinfo 'caf\ufffd.invalid'"]


def test_an_address_literal_is_resolved_without_a_lookup_and_is_not_refused() -> None:
    with block_network("strict") as guard:
        assert socket.gethostbyname("127.0.0.1") == "127.0.0.1"
        assert socket.getaddrinfo("127.0.0.1", 80, socket.AF_INET)[0][4] == ("127.0.0.1", 80)
        assert socket.getaddrinfo("::1", 80)[0][4][:2] == ("::1", 80)
        assert socket.getaddrinfo("fe80::1%1", 80)[0][4][:2] == ("fe80::1", 80)  # an IPv6 scope: still a literal
        assert socket.getaddrinfo(None, 80)  # no host: the local addresses
    assert guard.blocked == []


@pytest.mark.parametrize("host", ["127.0.0.1%eth0", "fe80::1%a%b"])
def test_something_that_only_starts_like_an_address_is_a_name_and_its_lookup_is_refused(host: str) -> None:
    """The C library looks these up as names (the name service): the guard must not take them for literals."""
    with block_network("strict") as guard:
        with pytest.raises(LiveCallBlocked):
            socket.getaddrinfo(host, 80)
        with pytest.raises(LiveCallBlocked):
            socket.gethostbyname(host)
    assert guard.blocked == [f"getaddrinfo {host!r}", f"gethostbyname {host!r}"]


def test_the_error_names_the_mode_and_says_how_to_let_a_live_call_through() -> None:
    with block_network("fixture"):
        with pytest.raises(LiveCallBlocked) as caught:
            socket.getaddrinfo("example.invalid", 443)
    message = str(caught.value)
    assert message.startswith("fixture replay blocked an outbound network call (getaddrinfo 'example.invalid')")
    assert "replay never reaches a live system. A tool or retriever that needs the network must be answered " \
        "from the recording or the fixture; use --mode loose --allow-live to let misses reach a live (staging) " \
        "system" in message
