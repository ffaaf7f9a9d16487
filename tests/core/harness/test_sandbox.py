"""The replay sandbox: an agent that tries every way out it can reach no server on 127.0.0.1.

A real TCP, UDP and Unix-socket server run in the test process (outside the namespace); the agent
under replay tries an import-time connection, subprocesses (``python -c``, ``curl``), ``os.system``,
``ctypes``, a Unix socket, UDP ``sendto``/``sendmsg``, a multiprocessing spawn, a thread, asyncio,
urllib, http.client, httpx and a DNS lookup. The servers count what arrives: 0.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from tracetui.cli.main import main
from tracetui.core.harness import sandbox

BENIGN = "def run(ctx, input):\n    return 'ok'\n"

ESCAPES = '''
import asyncio, ctypes, http.client, multiprocessing, os, socket, struct, subprocess, sys, threading
import urllib.request

TCP, UDP, UNIX = {tcp}, {udp}, {unix!r}
HOST = "127.0.0.1"
DIAL = "import socket; socket.create_connection(('127.0.0.1', %d), 2).close()" % TCP


def attempt(f):
    try:
        f()
    except BaseException:
        pass


attempt(lambda: socket.create_connection((HOST, TCP), 2).close())  # import time


def dial():
    socket.create_connection((HOST, TCP), 2).close()


def native():
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    addr = struct.pack("!HH4s8x", socket.AF_INET, TCP, socket.inet_aton(HOST))
    addr = struct.pack("=H", socket.AF_INET) + addr[2:]
    libc.connect(fd, addr, len(addr))
    libc.close(fd)


def unix():
    s = socket.socket(socket.AF_UNIX)
    s.connect(UNIX)
    s.close()


def udp_sendto():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", (HOST, UDP))


def udp_sendmsg():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendmsg([b"x"], [], 0, (HOST, UDP))


def in_thread():
    t = threading.Thread(target=lambda: attempt(dial))
    t.start()
    t.join()


def spawn():
    p = multiprocessing.get_context("spawn").Process(target=dial)
    p.start()
    p.join(20)


def with_asyncio():
    async def go():
        r, w = await asyncio.open_connection(HOST, TCP)
        w.close()
    asyncio.run(go())


def with_httpx():
    import httpx
    httpx.get(f"http://{{HOST}}:{{TCP}}/", timeout=2)


TECHNIQUES = [
    dial, native, unix, udp_sendto, udp_sendmsg, in_thread, spawn, with_asyncio, with_httpx,
    lambda: subprocess.run([sys.executable, "-c", DIAL], timeout=20),
    lambda: subprocess.run(["curl", "-s", "-m", "2", f"http://{{HOST}}:{{TCP}}/"], timeout=20),
    lambda: os.system(f"{{sys.executable}} -c \\"{{DIAL}}\\""),
    lambda: urllib.request.urlopen(f"http://{{HOST}}:{{TCP}}/", timeout=2),
    lambda: http.client.HTTPConnection(HOST, TCP, timeout=2).request("GET", "/"),
    lambda: socket.getaddrinfo("example.com", 443),
]


def run(ctx, input):
    for technique in TECHNIQUES:
        attempt(technique)
    return "ok"


if __name__ == "__main__":
    for technique in TECHNIQUES:
        attempt(technique)
'''


class Servers:
    """A TCP, a UDP and a Unix-socket server on this machine, counting what reaches them."""

    def __init__(self, folder: Path) -> None:
        self.hits: list[str] = []
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(folder / "daemon.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        self.unix.listen(16)
        self.threads = [threading.Thread(target=self._accept, args=(s, n), daemon=True)
                        for s, n in ((self.tcp, "tcp"), (self.unix, "unix"))]
        self.threads.append(threading.Thread(target=self._recv, daemon=True))
        for t in self.threads:
            t.start()

    def _accept(self, s: socket.socket, name: str) -> None:
        try:
            while True:
                conn, _ = s.accept()
                self.hits.append(name)
                conn.close()
        except OSError:
            pass

    def _recv(self) -> None:
        try:
            while True:
                self.udp.recv(10)
                self.hits.append("udp")
        except OSError:
            pass

    def ports(self) -> dict[str, Any]:
        return {"tcp": self.tcp.getsockname()[1], "udp": self.udp.getsockname()[1], "unix": self.unix_path}

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.unix):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


@pytest.fixture()
def servers(tmp_path: Path):
    s = Servers(tmp_path)
    yield s
    s.close()


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key")
    (tmp_path / "benign.py").write_text(BENIGN)
    code, _out, err = _cli("record", "benign.py:run", "--input", "{}", "--out", "rec.jsonl")
    assert code == 0, err
    return tmp_path / "rec.jsonl"


@pytest.mark.slow
@pytest.mark.skipif(sandbox.namespace_prefix()[0] is None, reason="no network namespace here")
def test_no_escape_technique_reaches_a_server_from_a_sandboxed_replay(servers: Servers, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _recording(tmp_path, monkeypatch)
    (tmp_path / "escape.py").write_text(ESCAPES.format(**servers.ports()))
    # The same agent run plainly reaches the servers: the techniques work.
    os.system(f"cd {tmp_path} && {os.sys.executable} escape.py")
    assert {"tcp", "udp", "unix"} <= set(servers.hits) and servers.hits.count("tcp") >= 10
    servers.hits.clear()
    # Guard only, the subprocess techniques get through: the namespace is what stops them.
    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    sandbox.namespace_prefix.cache_clear()
    code, out, err = _cli("replay", str(rec), "escape.py:run", "--out", "guarded.jsonl")
    monkeypatch.delenv(sandbox.ENV_DISABLE)
    sandbox.namespace_prefix.cache_clear()
    assert servers.hits.count("tcp") >= 2, (servers.hits, out, err)
    servers.hits.clear()
    code, out, err = _cli("replay", str(rec), "escape.py:run", "--out", "replay.jsonl", "--format", "json")
    assert code == 0, out + err
    assert servers.hits == []
    report = json.loads(out)
    assert report["network_isolation"] == sandbox.ISOLATION_NAMESPACE
    assert report["runs"][0]["live_calls"] == 0
    blocked = report["runs"][0]["blocked_network"]
    assert any(b.startswith("connect unix:") for b in blocked) and any(b.startswith("sendmsg") for b in blocked)
    header = json.loads((tmp_path / "replay.jsonl").read_text().splitlines()[0])
    assert header["network_isolation"] == sandbox.ISOLATION_NAMESPACE


def test_without_a_namespace_the_replay_says_so_and_the_guard_covers_the_agent_process(
        servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _recording(tmp_path, monkeypatch)
    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    sandbox.namespace_prefix.cache_clear()
    agent = ESCAPES.format(**servers.ports())
    # in process, only what runs in the agent's own process: the guard cannot see a subprocess
    agent = agent.replace("    lambda: subprocess.run([sys.executable", "    # ").replace("    lambda: subprocess.run([\"curl\"", "    # ")
    agent = agent.replace("    lambda: os.system(", "    # ").replace("dial, native, unix", "dial, unix")
    agent = agent.replace("in_thread, spawn,", "in_thread,")
    (tmp_path / "inproc.py").write_text(agent)
    try:
        code, out, err = _cli("replay", str(rec), "inproc.py:run", "--out", "replay.jsonl")
    finally:
        sandbox.namespace_prefix.cache_clear()
    assert code == 0, out + err
    assert servers.hits == []
    assert f"network isolation: {sandbox.ISOLATION_GUARD}" in out
    assert "blocked network call: connect 127.0.0.1" in out  # the import-time attempt, at least
    header = json.loads((tmp_path / "replay.jsonl").read_text().splitlines()[0])
    assert header["network_isolation"] == sandbox.ISOLATION_GUARD



@pytest.mark.slow
@pytest.mark.skipif(sandbox.namespace_prefix()[0] is None, reason="no network namespace here")
def test_the_zero_code_entry_replays_an_unchanged_program_inside_the_namespace(
        servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key")
    (tmp_path / "app.py").write_text("print('hello')\n")
    code, _out, err = _cli("record", "--out", "rec.jsonl", "--", "python", "app.py")
    assert code == 0, err
    (tmp_path / "app.py").write_text(ESCAPES.format(**servers.ports()))
    code, out, err = _cli("replay", "rec.jsonl", "--out", "replay.jsonl", "--", "python", "app.py")
    assert servers.hits == [], out + err
    assert f"network isolation: {sandbox.ISOLATION_NAMESPACE}" in out, out + err
    header = json.loads((tmp_path / "replay.jsonl").read_text().splitlines()[0])
    assert header["network_isolation"] == sandbox.ISOLATION_NAMESPACE
