"""The model relay's rules (``core/harness/relay.py``), in this process (issue 25, round 8).

The relay forwards bytes to one host and port, the model endpoint, and nothing else, whatever the child sends: a
``CONNECT`` to the endpoint is tunnelled, an absolute-form plain-HTTP request to it is sent on with its hop-by-hop
headers dropped and ``Connection: close``, every other request is answered ``403`` and counted. The child's side
(``child_listen``) listens on loopback, hands the listening socket to the parent and points the proxy variables at
it. The endpoint comes from the flag, ``$TRACETUI_LLM_ENDPOINT``, ``pyproject.toml``, then the SDKs' base URLs.

Here the "child" is this process too: ``child_listen`` runs with the relay pair's fd in the environment, and a local
server plays the endpoint.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time

import pytest

from tracetui.core.errors import HarnessError
from tracetui.core.harness import relay as relay_mod
from tracetui.core.harness.relay import (ENV_ENDPOINT, ENV_PROXY, ENV_RELAY_FD, PROXY_VARS, Relay, child_listen,
                                         endpoint_url, host_port)

URL_VARS = (ENV_ENDPOINT, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


# --- the endpoint -----------------------------------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for var in URL_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_the_endpoint_is_looked_up_flag_first_then_the_environment_then_pyproject_then_the_sdks(clean_env, tmp_path):
    proj = tmp_path / "proj"  # the start folder, not the current one (tmp_path, no pyproject.toml)
    proj.mkdir()
    assert endpoint_url(None, str(proj)) == (None, "")
    clean_env.setenv("ANTHROPIC_BASE_URL", "http://anthropic.local")
    assert endpoint_url(None, str(proj)) == ("http://anthropic.local", "$ANTHROPIC_BASE_URL")
    clean_env.setenv("OPENAI_BASE_URL", "http://openai.local/v1")
    assert endpoint_url(None, str(proj)) == ("http://openai.local/v1", "$OPENAI_BASE_URL")
    (proj / "pyproject.toml").write_text('[tool.tracetui.replay]\nllm_endpoint = "http://pyproject.local"\n')
    path = str(proj / "pyproject.toml")
    assert endpoint_url(None, str(proj)) == ("http://pyproject.local",
                                                 f"{path} [tool.tracetui.replay] llm_endpoint")
    clean_env.setenv(ENV_ENDPOINT, "http://env.local")
    assert endpoint_url(None, str(proj)) == ("http://env.local", "$TRACETUI_LLM_ENDPOINT")
    assert endpoint_url("http://flag.local", str(proj)) == ("http://flag.local", "--llm-endpoint")
    assert endpoint_url("", str(proj)) == ("http://env.local", "$TRACETUI_LLM_ENDPOINT")


def test_an_empty_variable_is_not_an_endpoint(clean_env, tmp_path):
    clean_env.setenv(ENV_ENDPOINT, "")
    clean_env.setenv("OPENAI_BASE_URL", "")
    clean_env.setenv("ANTHROPIC_BASE_URL", "http://a.local")
    assert endpoint_url(None, str(tmp_path)) == ("http://a.local", "$ANTHROPIC_BASE_URL")


def test_the_endpoint_is_read_from_the_current_folder_by_default(clean_env, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.replay]\nllm_endpoint = "http://here.local"\n')
    assert endpoint_url(None)[0] == "http://here.local"


def test_a_pyproject_without_an_endpoint_falls_through(clean_env, tmp_path):
    clean_env.setenv("OPENAI_BASE_URL", "http://openai.local")
    for text in ('[tool.tracetui]\nreplay = "not a table"\n', '[tool.tracetui.replay]\nvolatile = {}\n'):
        (tmp_path / "pyproject.toml").write_text(text)
        assert endpoint_url(None, str(tmp_path)) == ("http://openai.local", "$OPENAI_BASE_URL")


@pytest.mark.parametrize("value", ["8000", '""', "[\"http://a\"]"])
def test_an_endpoint_in_pyproject_that_is_not_a_url_string_is_refused_naming_the_file(clean_env, tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f"[tool.tracetui.replay]\nllm_endpoint = {value}\n")
    with pytest.raises(HarnessError) as info:
        endpoint_url(None, str(tmp_path))
    assert str(info.value) == (f"{tmp_path / 'pyproject.toml'}: [tool.tracetui.replay] llm_endpoint must be a URL "
                               "(a string)")


def test_host_and_port_of_an_endpoint_default_by_scheme_and_lowercase_the_host():
    assert host_port("https://API.Example.com/v1") == ("api.example.com", 443)
    assert host_port("http://LocalHost/v1") == ("localhost", 80)
    assert host_port("http://127.0.0.1:8000/v1") == ("127.0.0.1", 8000)
    assert host_port("https://[::1]:9443") == ("::1", 9443)


@pytest.mark.parametrize("url", ["ftp://example.com", "http:///v1", "example.com:443", "HTTPS://"])
def test_an_endpoint_that_is_not_an_http_url_with_a_host_is_refused(url):
    with pytest.raises(HarnessError) as info:
        host_port(url)
    assert str(info.value) == (f"model endpoint {url!r}: use an http:// or https:// URL with a host (the model API's "
                               "base URL, as the client is given it)")


def test_an_endpoint_with_a_bad_port_is_refused_naming_it():
    with pytest.raises(HarnessError, match=r"^model endpoint 'http://h:99999': Port out of range"):
        host_port("http://h:99999")


# --- the relay --------------------------------------------------------------------------------------------------


class Upstream:
    """The model endpoint: one connection at a time, read until ``END``, answered ``REPLY:`` + what it got."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                data = b""
                while b"END" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.received.append(data)
                conn.sendall(b"REPLY:" + data)


def _child_side(relay: Relay, monkeypatch) -> int:
    """Set up ``relay``'s child side in this process, as the child would hold it: its own descriptor (``child_listen``
    closes it), the parent's copy closed by ``started()``; the proxy variables set to ``before`` first. Returns the
    proxy's port."""
    for var in (*PROXY_VARS, ENV_PROXY, "NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "before")
    monkeypatch.setenv(ENV_RELAY_FD, str(os.dup(relay.child_fd)))
    url = child_listen()
    relay.started()
    assert url is not None
    return int(url.rsplit(":", 1)[1])


@pytest.fixture
def wired(monkeypatch):
    """A relay to a local endpoint, its child side set up in this process: ``(relay, upstream, proxy port)``."""
    up = Upstream()
    relay = Relay(("127.0.0.1", up.port))
    yield relay, up, _child_side(relay, monkeypatch)
    relay.close()
    up.sock.close()


def ask(port: int, data: bytes, *, close_write: bool = False, timeout: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(data)
        if close_write:
            c.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                return out
            out += chunk


def refused_body(relay: Relay, what: str) -> bytes:
    return (f"tracetui replay sandbox: {what} refused; the only route out of a replay is the model endpoint "
            f"{relay.endpoint[0]}:{relay.endpoint[1]}\n").encode()


def forbidden(relay: Relay, what: str) -> bytes:
    body = refused_body(relay, what)
    return (b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


def test_the_child_listens_on_loopback_and_points_every_proxy_variable_at_it(wired):
    relay, _up, port = wired
    url = f"http://127.0.0.1:{port}"
    for var in (*PROXY_VARS, ENV_PROXY):
        assert os.environ[var] == url, var
    assert "NO_PROXY" not in os.environ and "no_proxy" not in os.environ
    assert ENV_RELAY_FD not in os.environ  # taken: a child of the child gets no relay
    assert set(PROXY_VARS) == {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}


def test_a_child_without_a_relay_changes_nothing(monkeypatch):
    monkeypatch.delenv(ENV_RELAY_FD, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "keep")
    assert child_listen() is None
    assert os.environ["HTTP_PROXY"] == "keep"
    monkeypatch.setenv(ENV_RELAY_FD, "")
    assert child_listen() is None and os.environ["HTTP_PROXY"] == "keep"


def test_a_connect_to_the_endpoint_is_tunnelled_both_ways(wired):
    relay, up, port = wired
    got = ask(port, f"CONNECT 127.0.0.1:{up.port} HTTP/1.1\r\nHost: x\r\n\r\nhello\r\n\r\nEND".encode())
    assert got == b"HTTP/1.1 200 Connection established\r\n\r\nREPLY:hello\r\n\r\nEND"
    assert up.received == [b"hello\r\n\r\nEND"]  # bytes after the head go through, the head does not
    assert relay.summary() == {"endpoint": f"127.0.0.1:{up.port}", "forwarded": 1, "refused": []}


def test_bytes_sent_after_the_tunnel_opens_reach_the_endpoint_and_its_answer_comes_back(wired):
    _relay, up, port = wired
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(f"CONNECT 127.0.0.1:{up.port} HTTP/1.1\r\n\r\n".encode())
        opened = b""
        while not opened.endswith(b"\r\n\r\n"):
            opened += c.recv(1)
        assert opened == b"HTTP/1.1 200 Connection established\r\n\r\n"
        c.sendall(b"later END")
        got = b""
        while chunk := c.recv(65536):
            got += chunk
    assert got == b"REPLY:later END" and up.received == [b"later END"]


def test_a_child_without_no_proxy_variables_still_listens(monkeypatch):
    relay = Relay(("127.0.0.1", 1))
    try:
        for var in (*PROXY_VARS, ENV_PROXY):
            monkeypatch.setenv(var, "before")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.setenv(ENV_RELAY_FD, str(os.dup(relay.child_fd)))
        url = child_listen()
        relay.started()
        assert url is not None and url.startswith("http://127.0.0.1:") and os.environ["HTTPS_PROXY"] == url
        # the parent took the listener: a request is answered (and the relay closes what it took)
        assert ask(int(url.rsplit(":", 1)[1]), b"CONNECT example.com:443 HTTP/1.1\r\n\r\n").startswith(
            b"HTTP/1.1 403 Forbidden")
    finally:
        relay.close()


def test_a_head_that_arrives_in_pieces_is_read_whole(wired):
    relay, up, port = wired
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(f"CONNECT 127.0.0.1:{up.port} HTTP/1.1\r\nHost: x".encode())
        time.sleep(0.3)
        c.sendall(b"\r\n\r\nhello END")
        got = b""
        while chunk := c.recv(65536):
            got += chunk
    assert got == b"HTTP/1.1 200 Connection established\r\n\r\nREPLY:hello END"
    assert relay.refused == []


def test_a_connect_naming_the_endpoint_in_capitals_or_brackets_is_the_endpoint(wired):
    relay, up, port = wired
    relay.endpoint = ("localhost", up.port)  # resolvable to the local endpoint
    got = ask(port, f"connect LOCALHOST:{up.port} HTTP/1.1\r\n\r\nEND".encode())
    assert got.startswith(b"HTTP/1.1 200 Connection established\r\n\r\n")
    relay.endpoint = ("127.0.0.1", up.port)
    got = ask(port, f"CONNECT [127.0.0.1]:{up.port} HTTP/1.1\r\n\r\nEND".encode())
    assert got.startswith(b"HTTP/1.1 200 Connection established")
    assert relay.forwarded == 2 and relay.refused == []


def test_a_plain_request_to_the_endpoint_goes_on_without_hop_by_hop_headers_and_with_connection_close(wired):
    relay, up, port = wired
    request = (f"POST http://127.0.0.1:{up.port}/v1/chat?x=1 HTTP/1.1\r\n"
               f"Host: 127.0.0.1:{up.port}\r\nConnection: keep-alive\r\nProxy-Connection: keep-alive\r\n"
               "Proxy-Authorization: Digest user=a:b\r\nKeep-Alive: 300\r\nContent-Type: application/json\r\n"
               "\r\n{\"a\": 1}END").encode()
    got = ask(port, request)
    sent = (f"POST /v1/chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{up.port}\r\nContent-Type: application/json\r\n"
            "Connection: close\r\n\r\n{\"a\": 1}END").encode()
    assert up.received == [sent]
    assert got == b"REPLY:" + sent
    assert relay.summary()["forwarded"] == 1


def test_a_plain_request_without_a_path_asks_for_the_root(wired):
    _relay, up, port = wired
    ask(port, f"GET http://127.0.0.1:{up.port} HTTP/1.0\r\n\r\nEND".encode())
    assert up.received == [b"GET / HTTP/1.0\r\nConnection: close\r\n\r\nEND"]


def test_a_plain_request_without_a_port_is_port_80(wired):
    relay, up, port = wired
    got = ask(port, b"GET http://127.0.0.1/x HTTP/1.1\r\n\r\n")
    assert got == forbidden(relay, "GET 127.0.0.1:80") and relay.refused == ["GET 127.0.0.1:80"]
    assert up.received == []


def test_every_other_host_or_port_is_refused_and_counted(wired):
    relay, up, port = wired
    assert ask(port, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n") == forbidden(relay, "CONNECT example.com:443")
    assert ask(port, f"CONNECT 127.0.0.1:{up.port + 1} HTTP/1.1\r\n\r\n".encode()) == forbidden(
        relay, f"CONNECT 127.0.0.1:{up.port + 1}")
    assert ask(port, b"GET http://Example.COM:8080/a HTTP/1.1\r\n\r\n") == forbidden(relay, "GET example.com:8080")
    # an IPv6 literal's colons are the host's: the port is after the last; only brackets are taken off
    assert ask(port, b"CONNECT [::2]:443 HTTP/1.1\r\n\r\n") == forbidden(relay, "CONNECT ::2:443")
    assert ask(port, b"CONNECT X.Example:443 HTTP/1.1\r\n\r\n") == forbidden(relay, "CONNECT x.example:443")
    assert up.received == []
    assert relay.summary() == {"endpoint": f"127.0.0.1:{up.port}", "forwarded": 0,
                               "refused": ["CONNECT example.com:443", f"CONNECT 127.0.0.1:{up.port + 1}",
                                           "GET example.com:8080", "CONNECT ::2:443", "CONNECT x.example:443"]}


def test_a_request_that_is_not_plain_http_or_has_no_host_is_refused(wired):
    relay, up, port = wired
    target = f"https://127.0.0.1:{up.port}/v1"
    assert ask(port, f"GET {target} HTTP/1.1\r\n\r\n".encode()) == forbidden(relay, f"GET {target}")
    assert ask(port, b"GET /v1/chat HTTP/1.1\r\n\r\n") == forbidden(relay, "GET /v1/chat")
    assert ask(port, b"CONNECT 127.0.0.1:http HTTP/1.1\r\n\r\n") == forbidden(relay, "CONNECT 127.0.0.1:http")
    long = "https://" + "a" * 100
    assert ask(port, f"GET {long} HTTP/1.1\r\n\r\n".encode()) == forbidden(relay, f"GET {long[:80]}")
    assert up.received == [] and relay.forwarded == 0 and len(relay.refused) == 4


def test_what_is_not_a_proxy_request_is_refused_naming_its_first_line(wired):
    relay, up, port = wired
    assert ask(port, b"hello there\r\n\r\n") == forbidden(relay, "not a proxy request ('hello there')")
    assert ask(port, b"GET  http://x/ HTTP/1.1\r\n\r\n") == forbidden(
        relay, "not a proxy request ('GET  http://x/ HTTP/1.1')")
    line = "X" * 100
    assert ask(port, f"{line}\r\n\r\n".encode()) == forbidden(relay, f"not a proxy request ({line[:60]!r})")
    # a head that never ends: refused once the child closes its side
    assert ask(port, f"CONNECT 127.0.0.1:{up.port} HTTP/1.1\r\n".encode(), close_write=True) == forbidden(
        relay, f"not a proxy request ('CONNECT 127.0.0.1:{up.port} HTTP/1.1')")
    assert up.received == [] and relay.forwarded == 0


def test_a_head_longer_than_the_limit_is_refused_without_waiting_for_more(wired):
    relay, up, port = wired
    assert relay_mod._HEAD_LIMIT == 64 * 1024
    # exactly the limit, the connection left open: the relay has read it all (no reset) and must answer now
    got = ask(port, b"a" * (64 * 1024), timeout=5)
    assert got == forbidden(relay, f"not a proxy request ({'a' * 60!r})")
    assert up.received == []


def test_an_endpoint_that_cannot_be_reached_is_a_bad_gateway_not_a_refusal(wired):
    relay, _up, port = wired
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()
    relay.endpoint = ("127.0.0.1", dead_port)
    got = ask(port, f"CONNECT 127.0.0.1:{dead_port} HTTP/1.1\r\n\r\n".encode())
    head, _, body = got.partition(b"\r\n\r\n")
    assert head == b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: " + str(len(body)).encode()
    assert body.startswith(f"tracetui relay: cannot reach 127.0.0.1:{dead_port}: ".encode()) and body.endswith(b"\n")
    assert relay.forwarded == 0 and relay.refused == []


def test_closing_a_relay_twice_raises_nothing_and_keeps_its_summary(wired):
    relay, up, port = wired
    ask(port, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
    relay.close()
    relay.close()
    assert relay.summary() == {"endpoint": f"127.0.0.1:{up.port}", "forwarded": 0,
                               "refused": ["CONNECT example.com:443"]}


def test_the_child_fd_is_inheritable_and_the_parents_copy_closes_when_started():
    relay = Relay(("127.0.0.1", 1))
    try:
        fd = relay.child_fd
        assert os.get_inheritable(fd)
        relay.started()
        with pytest.raises(OSError):
            os.fstat(fd)
    finally:
        relay.close()


def test_the_relays_threads_never_keep_the_parent_alive(wired):
    """Every thread the relay starts is a daemon: a replay that ends while the child still holds a connection
    exits (its accept thread is named ``tracetui-relay`` in thread dumps)."""
    relay, up, port = wired
    (accept,) = [t for t in threading.enumerate() if t.name == "tracetui-relay" and t.is_alive()
                 and getattr(t, "_target", None) is not None and t._target.__self__ is relay]
    assert accept.daemon
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(f"CONNECT 127.0.0.1:{up.port} HTTP/1.1\r\n\r\n".encode())
        opened = b""
        while not opened.endswith(b"\r\n\r\n"):
            opened += c.recv(1)
        # the tunnel is open: its two pipes run, one in the connection's thread, one in a thread of its own
        piping = [t for t in threading.enumerate() if "(_serve)" in t.name or "(_pipe)" in t.name]
        assert len(piping) >= 2 and all(t.daemon for t in piping)
        c.sendall(b"END")
        while c.recv(65536):
            pass


def test_a_relay_closed_before_the_child_hands_over_its_listener_accepts_nothing(monkeypatch):
    """``close`` stops accepting: a listening socket that reaches a closed relay (the child started late, or the
    replay ended first) is never accepted on; the relay's accept thread ends once the socket arrives."""
    relay = Relay(("127.0.0.1", 1))
    (accept,) = [t for t in threading.enumerate() if t.name == "tracetui-relay" and t.is_alive()
                 and getattr(t, "_target", None) is not None and t._target.__self__ is relay]
    # the accept thread waits for the child's socket (so closing the relay's end does not stop that wait)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(accept.ident)
        if frame is not None and frame.f_code.co_name == "recv_fds":
            break
        time.sleep(0.005)
    time.sleep(0.05)
    relay.close()
    _child_side(relay, monkeypatch)
    accept.join(5)
    assert not accept.is_alive()
    assert relay.summary()["refused"] == [] and relay.forwarded == 0
