"""The replay sandbox: an agent that tries every way out it can reach no server on 127.0.0.1.

Real TCP (127.0.0.1 and ::1), UDP and Unix-socket servers and the model server run in the test
process (outside the namespace); the agent under replay tries the issue's 19 techniques (import-time
call, pre-opened connection, subprocesses (``python -c``, ``curl``), ``os.system``, ``ctypes``, a Unix
socket, UDP ``sendto``/``sendmsg``, a multiprocessing spawn, a thread, asyncio, urllib, http.client,
httpx, requests, DNS) and TCP to ::1, in every replay mode: ``tracetui replay`` frozen and
``--llm live``, the zero-code entry frozen and live, ``golden run``, ``triage --agent`` and ``nightly``
(frozen and live on the local executor, frozen on an embedded Dask cluster's worker process). The
servers count what arrives: 0; with ``--llm live`` the model server gets the model's calls through
the parent's relay, and curl's request through the relay is refused.
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

MODEL_CODE = """
import os

import httpx


def MODEL(messages, *, model, **params):  # the model client: httpx, which honours the proxy variables
    base = os.environ["OPENAI_BASE_URL"]
    body = httpx.post(base + "/chat/completions", json={"model": model, "messages": messages}, timeout=20).json()
    return body["choices"][0]["message"]


def ask(ctx):
    return ctx.llm([{"role": "user", "content": "sandbox?"}], model="gpt-test")


def ask_openai():  # the zero-code program's model call: the real openai client
    import openai
    openai.OpenAI(api_key="test", max_retries=0).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "sandbox?"}])
"""

BENIGN = MODEL_CODE + """

def run(ctx, input):
    ask(ctx)
    return 'ok'


if __name__ == "__main__":
    ask_openai()
"""

ESCAPES = MODEL_CODE.replace("{", "{{").replace("}", "}}") + '''
import asyncio, ctypes, http.client, json, multiprocessing, os, socket, struct, subprocess, sys, threading
import urllib.request

TCP, TCP6, UDP, UNIX, RESULTS = {tcp}, {tcp6}, {udp}, {unix!r}, {results!r}
HOST = "127.0.0.1"
DIAL = "import socket; socket.create_connection(('127.0.0.1', %d), 2).close()" % TCP
OUTCOMES = {{}}


def attempt(f):
    try:
        f()
        OUTCOMES[getattr(f, "__name__", "?")] = "ok"
    except BaseException as exc:
        OUTCOMES[getattr(f, "__name__", "?")] = type(exc).__name__


attempt(lambda: socket.create_connection((HOST, TCP), 2).close())  # import time
PRE = []
attempt(lambda: PRE.append(socket.create_connection((HOST, TCP), 2)))  # opened before the run


def pre_opened():
    PRE[0].sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")


def dial():
    socket.create_connection((HOST, TCP), 2).close()


def dial_ipv6():
    socket.create_connection(("::1", TCP6), 2).close()


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


def spawn():  # the target is a stdlib function, so the spawned interpreter can import it in any mode
    p = multiprocessing.get_context("spawn").Process(target=socket.create_connection, args=((HOST, TCP), 2))
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


def with_requests():
    import requests
    requests.get(f"http://{{HOST}}:{{TCP}}/", timeout=2)


def with_urllib():
    urllib.request.urlopen(f"http://{{HOST}}:{{TCP}}/", timeout=2)


def with_http_client():
    http.client.HTTPConnection(HOST, TCP, timeout=2).request("GET", "/")


def dns_getaddrinfo():
    socket.getaddrinfo("example.com", 443)


def dns_gethostbyname():
    socket.gethostbyname("example.org")


def python_subprocess():
    subprocess.run([sys.executable, "-c", DIAL], timeout=20)


def curl_subprocess():
    subprocess.run(["curl", "-s", "-m", "2", f"http://{{HOST}}:{{TCP}}/"], timeout=20)


def shell():
    os.system(f"{{sys.executable}} -c \\"{{DIAL}}\\"")


TECHNIQUES = [
    pre_opened, dial, dial_ipv6, native, unix, udp_sendto, udp_sendmsg, in_thread, spawn, with_asyncio,
    with_httpx, with_requests, with_urllib, with_http_client, dns_getaddrinfo, dns_gethostbyname,
    python_subprocess, curl_subprocess, shell,
]


def escape():
    for technique in TECHNIQUES:
        attempt(technique)
    with open(RESULTS, "w") as fh:
        json.dump(OUTCOMES, fh)


def run(ctx, input):
    ask(ctx)
    escape()
    return "ok"


if __name__ == "__main__":
    if os.environ.get("ESCAPE_ONLY") != "1":
        ask_openai()
    escape()
'''
"""20 techniques (the issue's 19: import-time call, pre-opened connection, subprocess (python, curl),
os.system, ctypes, Unix socket, UDP sendto/sendmsg, multiprocessing spawn, thread, asyncio, urllib,
http.client, httpx, requests, DNS (getaddrinfo, gethostbyname); plus TCP to ::1), each tried once;
``RESULTS`` gets each in-process technique's outcome (``ok`` or the exception's name)."""


class Servers:
    """A TCP (127.0.0.1 and ::1), a UDP and a Unix-socket server on this machine, counting what
    reaches them."""

    def __init__(self, folder: Path) -> None:
        self.hits: list[str] = []
        self.folder = folder
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.tcp6 = socket.socket(socket.AF_INET6)
        self.tcp6.bind(("::1", 0))
        self.tcp6.listen(16)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(folder / "daemon.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        self.unix.listen(16)
        self.threads = [threading.Thread(target=self._accept, args=(s, n), daemon=True)
                        for s, n in ((self.tcp, "tcp"), (self.tcp6, "tcp6"), (self.unix, "unix"))]
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
        return {"tcp": self.tcp.getsockname()[1], "tcp6": self.tcp6.getsockname()[1], "udp": self.udp.getsockname()[1],
                "unix": self.unix_path, "results": str(self.folder / "outcomes.json")}

    def outcomes(self) -> dict[str, str]:
        """Each in-process technique's outcome in the last run (``ok`` or the exception's name)."""
        return json.loads((self.folder / "outcomes.json").read_text())

    def close(self) -> None:
        for s in (self.tcp, self.tcp6, self.udp, self.unix):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


NETWORK_TECHNIQUES = {"pre_opened", "dial", "dial_ipv6", "unix", "udp_sendto", "udp_sendmsg", "with_asyncio",
                      "with_httpx", "with_requests", "with_urllib", "with_http_client", "dns_getaddrinfo",
                      "dns_gethostbyname"}
"""The in-process techniques that raise when they cannot reach their server (the others start a
thread, a process or a command, whose attempt the servers count)."""


@pytest.fixture()
def servers(tmp_path: Path):
    s = Servers(tmp_path)
    yield s
    s.close()


@pytest.fixture()
def model():
    from integrations.servers import ModelServer

    with ModelServer() as server:
        yield server


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of the benign agent (rec.jsonl, agent.py:run, one model call to a model server)
    and of the benign program (zrec.jsonl, the same call through the openai client), made once."""
    from integrations.servers import ModelServer

    folder = tmp_path_factory.mktemp("recordings")
    env = {"TRACETUI_REDACTION_KEY": "sandbox-test-key-0123456789abcdef", "OPENAI_API_KEY": "test"}
    with ModelServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        for k, v in {**env, "OPENAI_BASE_URL": server.base_url_openai}.items():
            mp.setenv(k, v)
        mp.delenv("TRACETUI_AUTOPATCH", raising=False)
        (folder / "agent.py").write_text(BENIGN)
        code, _out, err = _cli("record", "agent.py:run", "--input", "{}", "--out", "rec.jsonl")
        assert code == 0, err
        (folder / "app.py").write_text(BENIGN)
        code, _out, err = _cli("record", "--out", "zrec.jsonl", "--", "python", "app.py")
        assert code == 0, err
        assert server.model_calls == 2
    return folder


@pytest.fixture()
def world(recordings: Path, servers: Servers, model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path (the current folder) with the recordings, the escaping agent in the benign one's
    place (agent.py, app.py: the same agent, changed) and a golden case of it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", model.base_url_openai)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    for var in ("TRACETUI_LLM_ENDPOINT", "TRACETUI_AUTOPATCH", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    for name in ("rec.jsonl", "zrec.jsonl"):
        shutil.copy(recordings / name, tmp_path / name)
    escape = ESCAPES.format(**servers.ports())
    (tmp_path / "agent.py").write_text(escape)
    (tmp_path / "app.py").write_text(escape)
    case = tmp_path / "golden" / "escape"
    case.mkdir(parents=True)
    shutil.copy(tmp_path / "rec.jsonl", case / "trace.jsonl")
    (case / "case.yaml").write_text("schema: tracetui-case/1\nname: escape\nmode: strict\n")
    (case / "contract.yaml").write_text("schema: tracetui-contract/1\n")
    return tmp_path


MODES = {  # argv, whether the model is called again (through the relay)
    "replay frozen": (["replay", "rec.jsonl", "agent.py:run", "--out", "out.jsonl"], False),
    "replay --llm live": (["replay", "rec.jsonl", "agent.py:run", "--out", "out.jsonl", "--llm", "live",
                           "--llm-endpoint", "{model}"], True),
    "zero-code frozen": (["replay", "zrec.jsonl", "--out", "out.jsonl", "--", "python", "app.py"], False),
    "zero-code --llm live": (["replay", "zrec.jsonl", "--out", "out.jsonl", "--llm", "live", "--", "python", "app.py"],
                             True),
    "golden run": (["golden", "run", "golden", "--agent", "agent.py:run", "--trials", "1", "--keep", "kept"], True),
    "triage --agent": (["triage", "rec.jsonl", "--agent", "agent.py:run", "--trials", "1", "--replay-out", "out.jsonl"],
                       True),
}


@pytest.mark.slow
@pytest.mark.skipif(sandbox.namespace_prefix()[0] is None, reason="no network namespace here")
@pytest.mark.parametrize("mode", list(MODES))
def test_no_escape_technique_reaches_a_server_in_any_replay_mode(mode: str, world: Path, servers: Servers,
                                                                 model: Any) -> None:
    argv, live = MODES[mode]
    code, out, err = _cli(*(a.format(model=model.base_url_openai) for a in argv))
    assert "tracetui: internal error" not in err, err  # (the agent's subprocesses print their own tracebacks)
    assert servers.hits == [], (servers.hits, out, err)
    outcomes = servers.outcomes()  # the agent ran every technique, and each one in process failed
    assert NETWORK_TECHNIQUES <= set(outcomes) and not {t for t in NETWORK_TECHNIQUES if outcomes[t] == "ok"}, outcomes
    assert f"network isolation: {sandbox.ISOLATION_NAMESPACE}" in out, out + err
    trace = world / ("kept/escape.jsonl" if mode == "golden run" else "out.jsonl")
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["network_isolation"] == sandbox.ISOLATION_NAMESPACE
    if live:  # the model was reached, through the relay only; curl's request through it was refused
        assert model.model_calls >= 1 and model.hit_count("/api/") == 0, (out, err)
        relay = next(line for line in out.splitlines() if line.startswith("model relay: "))
        assert f"forwarded to 127.0.0.1:{model.port}" in relay and " 0 requests forwarded" not in relay, relay
        assert f"GET 127.0.0.1:{servers.ports()['tcp']}" in relay, relay
    else:
        assert model.model_calls == 0 and "model relay" not in out


NIGHTLY = {"nightly frozen": ("frozen", False), "nightly --llm live": ("live", False),
           "nightly frozen on a Dask worker process": ("frozen", True)}


def _nightly(folder: Path, llm: str, endpoint: str, dask: bool) -> dict[str, Any]:
    """``run_nightly`` over a store of rec.jsonl with agent.py:run, serially here or on a one-worker
    embedded Dask cluster (worker processes)."""
    from tracetui.core.execute import SerialExecutor
    from tracetui.core.nightly import NightlyConfig, run_nightly

    (folder / "store").mkdir()
    shutil.copy(folder / "rec.jsonl", folder / "store" / "rec.jsonl")
    config = NightlyConfig(str(folder / "store"), "agent.py:run", sample=0, llm=(llm,), trials=1,
                           extra={"llm_endpoint": endpoint})
    if not dask:
        return run_nightly(config, SerialExecutor(), journal=str(folder / "n.json.partial.jsonl"))
    pytest.importorskip("dask.distributed")
    from tracetui.integrations.dask_cluster import DaskExecutor

    with DaskExecutor(None, workers=1) as executor:
        return run_nightly(config, executor, journal=str(folder / "n.json.partial.jsonl"))


@pytest.mark.slow
@pytest.mark.skipif(sandbox.namespace_prefix()[0] is None, reason="no network namespace here")
@pytest.mark.parametrize("mode", list(NIGHTLY))
def test_no_escape_technique_reaches_a_server_in_a_nightly_replay(mode: str, world: Path, servers: Servers,
                                                                  model: Any) -> None:
    llm, dask = NIGHTLY[mode]
    report = _nightly(world, llm, model.base_url_openai, dask)
    run = report["runs"][0]
    assert run["outcome"] in ("pass", "diverged", "failed"), run  # replayed, not an error
    assert servers.hits == [], (servers.hits, run)
    outcomes = servers.outcomes()
    assert NETWORK_TECHNIQUES <= set(outcomes) and not {t for t in NETWORK_TECHNIQUES if outcomes[t] == "ok"}, outcomes
    assert run["network_isolation"] == sandbox.ISOLATION_NAMESPACE
    assert report["job"]["network_isolation"] == {sandbox.ISOLATION_NAMESPACE: 1}
    if llm == "live":  # the model was reached, through the worker's relay only
        assert model.model_calls >= 1 and model.hit_count("/api/") == 0
    else:
        assert model.model_calls == 0


def test_where_no_namespace_can_be_had_nightly_says_guard_only_and_calls_the_model_directly(
        recordings: Path, model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", model.base_url_openai)
    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    for name in ("rec.jsonl", "agent.py"):
        shutil.copy(recordings / name, tmp_path / name)
    sandbox.namespace_prefix.cache_clear()
    try:
        report = _nightly(tmp_path, "live", model.base_url_openai, False)
    finally:
        sandbox.namespace_prefix.cache_clear()
    run = report["runs"][0]
    assert run["outcome"] == "pass" and run["network_isolation"] == sandbox.ISOLATION_GUARD, run
    assert report["job"]["network_isolation"] == {sandbox.ISOLATION_GUARD: 1} and model.model_calls == 1


@pytest.mark.parametrize("mode", list(MODES))
def test_where_no_namespace_can_be_had_every_replay_mode_says_guard_only(
        mode: str, recordings: Path, model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", model.base_url_openai)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    monkeypatch.delenv("TRACETUI_AUTOPATCH", raising=False)
    for name in ("rec.jsonl", "zrec.jsonl", "agent.py", "app.py"):  # the benign agent and program
        shutil.copy(recordings / name, tmp_path / name)
    case = tmp_path / "golden" / "escape"
    case.mkdir(parents=True)
    shutil.copy(tmp_path / "rec.jsonl", case / "trace.jsonl")
    (case / "case.yaml").write_text("schema: tracetui-case/1\nname: escape\nmode: strict\n")
    (case / "contract.yaml").write_text("schema: tracetui-contract/1\n")
    argv, live = MODES[mode]
    sandbox.namespace_prefix.cache_clear()
    try:
        code, out, err = _cli(*(a.format(model=model.base_url_openai) for a in argv))
    finally:
        sandbox.namespace_prefix.cache_clear()
    assert code == 0, out + err
    assert f"network isolation: {sandbox.ISOLATION_GUARD}" in out, out + err
    trace = tmp_path / ("kept/escape.jsonl" if mode == "golden run" else "out.jsonl")
    assert json.loads(trace.read_text().splitlines()[0])["network_isolation"] == sandbox.ISOLATION_GUARD
    assert "model relay" not in out and model.model_calls == (1 if live else 0)  # called directly, no relay


@pytest.mark.slow
@pytest.mark.skipif(sandbox.namespace_prefix()[0] is None, reason="no network namespace here")
def test_the_techniques_reach_the_servers_run_plainly_and_with_the_guard_alone(
        world: Path, servers: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same agent run plainly reaches the servers: the techniques work here.
    os.system(f"cd {world} && ESCAPE_ONLY=1 {os.sys.executable} agent.py")
    assert {"tcp", "tcp6", "udp", "unix"} <= set(servers.hits) and servers.hits.count("tcp") >= 10, servers.hits
    servers.hits.clear()
    # Guard only, the subprocess techniques get through: the namespace is what stops them.
    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    sandbox.namespace_prefix.cache_clear()
    shutil.copy(world / "agent.py", world / "guarded.py")  # this process has agent.py's benign version loaded
    try:
        code, out, err = _cli("replay", "rec.jsonl", "guarded.py:run", "--out", "guarded.jsonl", "--format", "json")
    finally:
        sandbox.namespace_prefix.cache_clear()
    assert servers.hits.count("tcp") >= 2, (servers.hits, out, err)
    report = json.loads(out)
    assert report["network_isolation"] == sandbox.ISOLATION_GUARD
    blocked = report["runs"][0]["blocked_network"]
    assert any(b.startswith("connect unix:") for b in blocked) and any(b.startswith("sendmsg") for b in blocked)
    assert any(b.startswith("connect ::1:") for b in blocked) and any(b.startswith("gethostbyname") for b in blocked)


def test_without_a_namespace_the_replay_says_so_and_the_guard_covers_the_agent_process(
        servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key-0123456789abcdef")
    (tmp_path / "benign.py").write_text("def run(ctx, input):\n    return 'ok'\n")
    code, _out, err = _cli("record", "benign.py:run", "--input", "{}", "--out", "rec.jsonl")
    assert code == 0, err
    monkeypatch.setenv(sandbox.ENV_DISABLE, "1")
    sandbox.namespace_prefix.cache_clear()
    agent = ESCAPES.format(**servers.ports()).replace("    ask(ctx)\n    escape()", "    escape()")
    # in process, only what runs in the agent's own process: the guard cannot see a subprocess
    agent = agent.replace("    python_subprocess, curl_subprocess, shell,\n", "")
    agent = agent.replace(" native,", "").replace(" spawn,", "")
    (tmp_path / "inproc.py").write_text(agent)
    try:
        code, out, err = _cli("replay", "rec.jsonl", "inproc.py:run", "--out", "replay.jsonl")
    finally:
        sandbox.namespace_prefix.cache_clear()
    assert code == 0, out + err
    assert servers.hits == []
    outcomes = servers.outcomes()
    assert not {t for t in NETWORK_TECHNIQUES if outcomes[t] == "ok"}, outcomes
    assert f"network isolation: {sandbox.ISOLATION_GUARD}" in out
    assert "blocked network call: connect 127.0.0.1" in out  # the import-time attempt, at least
    header = json.loads((tmp_path / "replay.jsonl").read_text().splitlines()[0])
    assert header["network_isolation"] == sandbox.ISOLATION_GUARD


def test_the_relay_forwards_to_the_model_endpoint_and_refuses_everything_else(servers: Servers, model: Any) -> None:
    import urllib.error
    import urllib.request
    from unittest import mock

    from tracetui.core.harness import relay as relay_mod

    relay = relay_mod.Relay(relay_mod.host_port(model.base_url_openai))
    tcp = servers.ports()["tcp"]
    with mock.patch.dict(os.environ, {relay_mod.ENV_RELAY_FD: str(os.dup(relay.child_fd))}):
        relay.started()
        proxy = relay_mod.child_listen()  # what the namespaced child does before the agent loads
        assert proxy is not None and os.environ["https_proxy"] == proxy and relay_mod.ENV_RELAY_FD not in os.environ
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        with opener.open(urllib.request.Request(model.base_url_openai + "/chat/completions", data=body,
                                                headers={"content-type": "application/json"}), timeout=10) as r:
            assert json.loads(r.read())["choices"][0]["message"]["content"] == "Echo: hi"
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(f"http://127.0.0.1:{tcp}/", timeout=10)
        assert refused.value.code == 403
        port = int(proxy.rsplit(":", 1)[1])

        def raw(request: bytes) -> bytes:
            with socket.create_connection(("127.0.0.1", port), 10) as s:
                s.sendall(request)
                return s.recv(200)

        assert raw(f"CONNECT 127.0.0.1:{tcp} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 403")
        assert raw(b"CONNECT example.com:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
        assert raw(b"hello\r\n\r\n").startswith(b"HTTP/1.1 403")
        assert raw(f"CONNECT 127.0.0.1:{model.port} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 200")
    relay.close()
    assert servers.hits == [] and model.model_calls == 1
    summary = relay.summary()
    assert summary["forwarded"] == 2 and summary["endpoint"] == f"127.0.0.1:{model.port}"
    assert summary["refused"] == [f"GET 127.0.0.1:{tcp}", f"CONNECT 127.0.0.1:{tcp}", "CONNECT example.com:443",
                                  "not a proxy request ('hello')"]


def test_the_model_endpoint_comes_from_the_flag_the_environment_or_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracetui.core.errors import HarnessError
    from tracetui.core.harness import relay as relay_mod

    monkeypatch.chdir(tmp_path)
    for var in ("TRACETUI_LLM_ENDPOINT", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    assert relay_mod.endpoint_url(None, str(tmp_path)) == (None, "")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    assert relay_mod.endpoint_url(None, str(tmp_path)) == ("https://api.anthropic.com", "$ANTHROPIC_BASE_URL")
    (tmp_path / "pyproject.toml").write_text('[tool.tracetui.replay]\nllm_endpoint = "https://llm.internal:8443/v1"\n')
    url, source = relay_mod.endpoint_url(None, str(tmp_path))
    assert url == "https://llm.internal:8443/v1" and "llm_endpoint" in source
    monkeypatch.setenv("TRACETUI_LLM_ENDPOINT", "http://127.0.0.1:9/v1")
    assert relay_mod.endpoint_url(None, str(tmp_path))[0] == "http://127.0.0.1:9/v1"
    assert relay_mod.endpoint_url("http://flag:1", str(tmp_path)) == ("http://flag:1", "--llm-endpoint")
    assert relay_mod.host_port("https://api.openai.com/v1") == ("api.openai.com", 443)
    assert relay_mod.host_port("http://LOCALHOST/v1") == ("localhost", 80)
    with pytest.raises(HarnessError, match="use an http:// or https:// URL"):
        relay_mod.host_port("api.openai.com")
    (tmp_path / "pyproject.toml").write_text("[tool.tracetui.replay]\nllm_endpoint = 3\n")
    monkeypatch.delenv("TRACETUI_LLM_ENDPOINT")
    with pytest.raises(HarnessError, match="llm_endpoint must be a URL"):
        relay_mod.endpoint_url(None, str(tmp_path))


def test_a_library_replay_session_says_in_its_header_that_only_the_guard_covers_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracetui

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key-0123456789abcdef")
    with tracetui.record(str(tmp_path / "rec.jsonl")) as session:
        session.output = "ok"
    with tracetui.replay(str(tmp_path / "rec.jsonl"), str(tmp_path / "out.jsonl")) as session:
        session.output = "ok"  # this process cannot be moved into a namespace after the fact
    header = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert header["network_isolation"] == sandbox.ISOLATION_GUARD
    assert "network_isolation" not in json.loads((tmp_path / "rec.jsonl").read_text().splitlines()[0])


@pytest.mark.skipif(sandbox.namespace_prefix()[0] is None, reason="no network namespace here")
def test_a_nightly_agent_that_kills_its_process_is_an_error_of_that_run_with_its_last_words(
        recordings: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "sandbox-test-key-0123456789abcdef")
    shutil.copy(recordings / "rec.jsonl", tmp_path / "rec.jsonl")
    (tmp_path / "agent.py").write_text("import os, sys\nprint('going down', file=sys.stderr, flush=True)\nos._exit(3)\n")
    report = _nightly(tmp_path, "frozen", "", False)  # in the worker's own process this would end the worker
    run = report["runs"][0]
    assert run["outcome"] == "error" and run["stage"] == "replay", run
    assert run["message"] == "rec.jsonl: the isolated replay ended (exit code 3) without a result: going down", run
    assert run["network_isolation"] == sandbox.ISOLATION_NAMESPACE
