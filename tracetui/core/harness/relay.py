"""The model relay of a sandboxed model-in-the-loop replay (``--llm live``): the agent runs inside a
network namespace with no route out (``core.harness.sandbox``), and its model client's HTTP calls
reach the model through the parent process, which is the only process with a route and forwards
only to the configured model endpoint.

How the calls cross the namespace's edge:

1. The parent makes a Unix socket pair and passes one end to the child (an inherited file
   descriptor named by ``TRACETUI_RELAY_FD``); nothing is bound to a path or a port outside.
2. The child, inside the namespace and before the agent is imported, listens on its own
   loopback (``127.0.0.1:PORT``), sends that listening socket to the parent over the pair
   (``SCM_RIGHTS``) and sets ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` (both cases) to it,
   clearing ``NO_PROXY``: httpx (the OpenAI and Anthropic SDKs), requests, urllib and curl send
   their requests to that proxy.
3. The parent accepts on the listening socket and reads each connection's first request: a
   ``CONNECT host:port`` (HTTPS, tunnelled: the parent never sees the TLS content) or an
   absolute-form ``GET http://host:port/path`` (plain HTTP, sent on with ``Connection: close``
   so one connection carries one request to one host). Only ``host:port`` equal to the endpoint's
   is opened and piped; every other request is answered ``403`` and counted in ``refused``.

The parent therefore forwards bytes to one host and port and nothing else, whatever the child
sends. Not covered: what the model endpoint itself is allowed to reach.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tracetui.core.errors import HarnessError

ENV_RELAY_FD = "TRACETUI_RELAY_FD"
"""Set in the namespaced child's environment: the file descriptor of its end of the relay pair."""
ENV_ENDPOINT = "TRACETUI_LLM_ENDPOINT"
"""The model endpoint a sandboxed ``--llm live`` replay may reach (a base URL)."""
ENV_PROXY = "TRACETUI_RELAY_PROXY"
"""Set by the namespaced child to the relay's proxy URL, for transports that ignore the proxy
variables (``integrations.transport``'s live calls)."""
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_HEAD_LIMIT = 64 * 1024


def endpoint_url(flag: str | None, start: str | None = None) -> tuple[str | None, str]:
    """The model endpoint to relay to, and where it came from.

    Looked up in order: ``flag`` (``--llm-endpoint``), ``$TRACETUI_LLM_ENDPOINT``, ``llm_endpoint``
    of ``[tool.tracetui.replay]`` in the nearest pyproject.toml, ``$OPENAI_BASE_URL``,
    ``$ANTHROPIC_BASE_URL``.

    Returns:
        ``(url, source)`` (``("http://127.0.0.1:8000/v1", "--llm-endpoint")``), or ``(None, "")``.

    Raises:
        HarnessError: ``llm_endpoint`` in pyproject.toml is not a string.
    """
    if flag:
        return flag, "--llm-endpoint"
    if os.environ.get(ENV_ENDPOINT):
        return os.environ[ENV_ENDPOINT], f"${ENV_ENDPOINT}"
    from tracetui.core.harness.project import project_table

    path, table = project_table(start)
    replay = table.get("replay", {})
    value = replay.get("llm_endpoint") if isinstance(replay, dict) else None
    if value is not None:
        if not isinstance(value, str) or not value:
            raise HarnessError(f"{path}: [tool.tracetui.replay] llm_endpoint must be a URL (a string)")
        return value, f"{path} [tool.tracetui.replay] llm_endpoint"
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        if os.environ.get(var):
            return os.environ[var], f"${var}"
    return None, ""


def host_port(url: str) -> tuple[str, int]:
    """``(host, port)`` of an http(s) URL; the port defaults to 80 / 443.

    Raises:
        HarnessError: not an http or https URL with a host.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise HarnessError(f"model endpoint {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HarnessError(f"model endpoint {url!r}: use an http:// or https:// URL with a host "
                           "(the model API's base URL, as the client is given it)")
    return parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


@dataclass
class Relay:
    """The parent's side: forwards the child's proxy requests to ``endpoint`` and refuses the rest.

    Attributes:
        endpoint: ``(host, port)`` the relay may open.
        forwarded: Requests forwarded to the endpoint.
        refused: Each refused request: ``"CONNECT example.com:443"``, ``"GET 127.0.0.1:8080"``.
    """

    endpoint: tuple[str, int]
    forwarded: int = 0
    refused: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._mine, self._theirs = socket.socketpair()
        self._theirs.set_inheritable(True)
        self._listener: socket.socket | None = None
        self._closed = False
        threading.Thread(target=self._receive, name="tracetui-relay", daemon=True).start()

    @property
    def child_fd(self) -> int:
        """The file descriptor to pass to the child (``pass_fds``) and name in ``ENV_RELAY_FD``."""
        return self._theirs.fileno()

    def started(self) -> None:
        """Call once the child has been started: the parent's copy of the child's end is closed."""
        self._theirs.close()

    def close(self) -> None:
        """Stop accepting (connections being piped end on their own)."""
        self._closed = True
        for s in (self._listener, self._mine):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    def summary(self) -> dict[str, Any]:
        """``{"endpoint": "host:port", "forwarded": N, "refused": [...]}``."""
        with self._lock:
            return {"endpoint": f"{self.endpoint[0]}:{self.endpoint[1]}", "forwarded": self.forwarded,
                    "refused": list(self.refused)}

    def _receive(self) -> None:
        try:
            _msg, fds, _flags, _addr = socket.recv_fds(self._mine, 16, 1)
        except OSError:
            return
        if not fds:
            return
        self._listener = socket.socket(fileno=fds[0])
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _refuse(self, conn: socket.socket, what: str) -> None:
        with self._lock:
            self.refused.append(what)
        body = (f"tracetui replay sandbox: {what} refused; the only route out of a replay is the model "
                f"endpoint {self.endpoint[0]}:{self.endpoint[1]}\n").encode()
        try:
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        except OSError:
            pass
        conn.close()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(60)
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                head += chunk
        except OSError:
            conn.close()
            return
        end = head.find(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if end < 0 or len(parts) != 3:
            self._refuse(conn, f"not a proxy request ({line[:60]!r})")
            return
        method, target, version = parts
        try:
            if method.upper() == "CONNECT":
                host, _, port_text = target.rpartition(":")
                host, port = host.strip("[]").lower(), int(port_text)
                path = None
            else:
                url = urlsplit(target)
                if url.scheme != "http" or not url.hostname:
                    raise ValueError(target)
                host, port = url.hostname.lower(), url.port or 80
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        except ValueError:
            self._refuse(conn, f"{method} {target[:80]}")
            return
        if (host, port) != self.endpoint:
            self._refuse(conn, f"{method} {host}:{port}")
            return
        try:
            upstream = socket.create_connection((host, port), timeout=60)
        except OSError as exc:
            msg = f"tracetui relay: cannot reach {host}:{port}: {exc}\n".encode()
            try:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: "
                             + str(len(msg)).encode() + b"\r\n\r\n" + msg)
            except OSError:
                pass
            conn.close()
            return
        with self._lock:
            self.forwarded += 1
        rest = head[end + 4:]
        try:
            if path is None:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                headers = [h for h in head[:end].split(b"\r\n")[1:]
                           if h.split(b":", 1)[0].strip().lower() not in (b"connection", b"proxy-connection",
                                                                           b"proxy-authorization", b"keep-alive")]
                first = f"{method} {path} {version}".encode("latin-1")
                upstream.sendall(b"\r\n".join([first, *headers, b"Connection: close"]) + b"\r\n\r\n")
            if rest:
                upstream.sendall(rest)
        except OSError:
            upstream.close()
            conn.close()
            return
        conn.settimeout(None)
        upstream.settimeout(None)
        back = threading.Thread(target=_pipe, args=(upstream, conn), daemon=True)
        back.start()
        _pipe(conn, upstream)
        back.join()
        conn.close()
        upstream.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def child_listen() -> str | None:
    """In the namespaced child, before the agent loads: listen on loopback, hand the listening
    socket to the parent (``ENV_RELAY_FD``) and point the proxy variables at it.

    Returns:
        The proxy URL (``http://127.0.0.1:PORT``), or None when this child has no relay.
    """
    fd = os.environ.pop(ENV_RELAY_FD, None)
    if not fd:
        return None
    control = socket.socket(fileno=int(fd))
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port = listener.getsockname()[1]
        socket.send_fds(control, [b"L"], [listener.fileno()])
    finally:
        listener.close()
        control.close()
    url = f"http://127.0.0.1:{port}"
    for var in (*PROXY_VARS, ENV_PROXY):
        os.environ[var] = url
    for var in ("NO_PROXY", "no_proxy"):
        os.environ.pop(var, None)
    return url
