"""The rules of core/harness/sandbox.py (the network namespace of a replay), pinned in process: the probe for
``unshare`` (the platform, the opt-out variable, the command on PATH, the two prefixes in order), the child's checks
(loopback only, brought up; anything else is the guard alone), its environment, and the prefixed command. Nothing here
starts a process: ``subprocess.run``, ``socket.if_nameindex``, ``fcntl.ioctl`` and the relay are stand-ins; the
namespace itself is test_sandbox.py's (children)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import tracetui
from tracetui.core.harness import relay, sandbox


@pytest.fixture(autouse=True)
def _fresh_probe() -> Iterator[None]:
    sandbox.namespace_prefix.cache_clear()
    yield
    sandbox.namespace_prefix.cache_clear()


class _Probe:
    """``subprocess.run`` that answers each probe with the next outcome (an exit code or an exception)."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def __call__(self, argv: list[str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
        self.calls.append((list(argv), kw))
        got = self.outcomes.pop(0)
        if isinstance(got, BaseException):
            raise got
        return subprocess.CompletedProcess(argv, got)


@pytest.fixture
def linux(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv(sandbox.ENV_DISABLE, raising=False)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/usr/bin/" + name if name == "unshare" else None)
    return monkeypatch


# ----------------------------------------------------------------------------- the probe


def test_off_linux_there_is_no_namespace_and_the_reason_names_the_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(sandbox.subprocess, "run", _Probe())
    assert sandbox.namespace_prefix() == (None, "network namespaces are Linux-only (this is darwin)")


def test_the_opt_out_variable_set_to_1_means_no_namespace(linux: pytest.MonkeyPatch) -> None:
    linux.setattr(sandbox.subprocess, "run", _Probe())
    linux.setenv(sandbox.ENV_DISABLE, "1")
    assert sandbox.namespace_prefix() == (None, "TRACETUI_NO_NETNS=1 is set")
    sandbox.namespace_prefix.cache_clear()
    linux.setenv(sandbox.ENV_DISABLE, "0")  # only "1" opts out
    linux.setattr(sandbox.subprocess, "run", _Probe(0))
    assert sandbox.namespace_prefix() == (("/usr/bin/unshare", "--net"), "")


def test_without_unshare_on_path_there_is_no_namespace(linux: pytest.MonkeyPatch) -> None:
    linux.setattr(sandbox.shutil, "which", lambda name: None)
    linux.setattr(sandbox.subprocess, "run", _Probe())
    assert sandbox.namespace_prefix() == (None, "util-linux `unshare` is not on PATH")


def test_the_privileged_prefix_is_probed_first_with_an_empty_python_program(linux: pytest.MonkeyPatch) -> None:
    probe = _Probe(0)
    linux.setattr(sandbox.subprocess, "run", probe)
    assert sandbox.namespace_prefix() == (("/usr/bin/unshare", "--net"), "")
    (argv, kw), = probe.calls
    assert argv == ["/usr/bin/unshare", "--net", sys.executable, "-c", ""]
    assert kw == {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
                  "timeout": 20}
    assert sandbox.namespace_prefix() == (("/usr/bin/unshare", "--net"), "") and len(probe.calls) == 1  # once


@pytest.mark.parametrize("first", [1, OSError("no"), subprocess.TimeoutExpired("unshare", 20)])
def test_when_the_privileged_prefix_fails_the_user_namespace_one_is_tried(linux: pytest.MonkeyPatch,
                                                                          first: Any) -> None:
    probe = _Probe(first, 0)
    linux.setattr(sandbox.subprocess, "run", probe)
    assert sandbox.namespace_prefix() == (("/usr/bin/unshare", "--user", "--map-root-user", "--net"), "")
    assert probe.calls[1][0] == ["/usr/bin/unshare", "--user", "--map-root-user", "--net", sys.executable, "-c", ""]


def test_when_both_prefixes_fail_the_kernel_refused(linux: pytest.MonkeyPatch) -> None:
    linux.setattr(sandbox.subprocess, "run", _Probe(1, 2))
    assert sandbox.namespace_prefix() == (
        None, "the kernel refused a network namespace (unshare --net and unshare --user --net both failed)")


def test_the_isolated_command_is_the_prefix_then_the_command_or_none(linux: pytest.MonkeyPatch) -> None:
    linux.setattr(sandbox.subprocess, "run", _Probe(0))
    assert sandbox.isolated_command(["tracetui", "replay", "r.jsonl"]) == [
        "/usr/bin/unshare", "--net", "tracetui", "replay", "r.jsonl"]
    sandbox.namespace_prefix.cache_clear()
    linux.setattr(sandbox.subprocess, "run", _Probe(1, 1))
    assert sandbox.isolated_command(["tracetui"]) is None


# ----------------------------------------------------------------------------- the child


def test_inside_is_the_child_variable_set_to_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sandbox.ENV_CHILD, "1")
    assert sandbox.inside() is True
    monkeypatch.setenv(sandbox.ENV_CHILD, "0")
    assert sandbox.inside() is False
    monkeypatch.delenv(sandbox.ENV_CHILD)
    assert sandbox.inside() is False


class _Ioctl:
    def __init__(self, flags: int, fail: bool = False) -> None:
        self.flags, self.fail = flags, fail
        self.calls: list[tuple[int, bytes]] = []
        self.sockets: list[Any] = []

    def __call__(self, fd: Any, request: int, arg: bytes) -> bytes:
        self.calls.append((request, arg))
        self.sockets.append(fd)
        if self.fail:
            raise OSError("not permitted")
        return struct.pack("16sh22x", b"lo", self.flags) if request == 0x8913 else arg


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch) -> tuple[pytest.MonkeyPatch, list[str]]:
    listened: list[str] = []
    monkeypatch.setattr(relay, "child_listen", lambda: listened.append("listen"))
    monkeypatch.setenv(sandbox.ENV_CHILD, "1")
    return monkeypatch, listened


def test_a_child_that_sees_loopback_only_brings_it_up_listens_and_is_namespaced(child: Any) -> None:
    import fcntl

    monkeypatch, listened = child
    ioctl = _Ioctl(flags=0x48)
    monkeypatch.setattr(fcntl, "ioctl", ioctl)
    monkeypatch.setattr(sandbox.socket, "if_nameindex", lambda: [(1, "lo")])
    assert sandbox.enter_child() == sandbox.ISOLATION_NAMESPACE
    assert listened == ["listen"] and sandbox.ENV_CHILD not in os.environ  # the agent's processes are not the child
    assert ioctl.calls == [(0x8913, struct.pack("16sh22x", b"lo", 0)), (0x8914, struct.pack("16sh22x", b"lo", 0x49))]
    assert all(isinstance(s, socket.socket) and s.family == socket.AF_INET for s in ioctl.sockets)  # on a socket


def test_bringing_loopback_up_may_fail_and_the_child_is_still_namespaced(child: Any) -> None:
    import fcntl

    monkeypatch, listened = child
    ioctl = _Ioctl(flags=0, fail=True)
    monkeypatch.setattr(fcntl, "ioctl", ioctl)
    monkeypatch.setattr(sandbox.socket, "if_nameindex", lambda: [(1, "lo")])
    assert sandbox.enter_child() == sandbox.ISOLATION_NAMESPACE and listened == ["listen"]
    assert len(ioctl.calls) == 1


@pytest.mark.parametrize("names", [[(1, "lo"), (2, "eth0")], [(2, "eth0")], []])
def test_a_child_that_sees_another_interface_or_none_is_the_guard_alone(child: Any, names: list[Any]) -> None:
    import fcntl

    monkeypatch, listened = child
    ioctl = _Ioctl(flags=0)
    monkeypatch.setattr(fcntl, "ioctl", ioctl)
    monkeypatch.setattr(sandbox.socket, "if_nameindex", lambda: names)
    assert sandbox.enter_child() == sandbox.ISOLATION_GUARD
    assert listened == ["listen"] and ioctl.calls == [] and sandbox.ENV_CHILD not in os.environ


def test_a_child_that_cannot_list_its_interfaces_is_the_guard_alone(child: Any) -> None:
    monkeypatch, listened = child

    def refuse() -> list[Any]:
        raise OSError("no")

    monkeypatch.setattr(sandbox.socket, "if_nameindex", refuse)
    assert sandbox.enter_child() == sandbox.ISOLATION_GUARD and listened == ["listen"]


def test_the_child_environment_is_this_one_with_the_child_variable_and_this_tracetui_first_on_the_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(tracetui.__file__)))
    monkeypatch.setenv("SOME_VAR", "kept")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = sandbox.child_env()
    assert env["SOME_VAR"] == "kept" and env[sandbox.ENV_CHILD] == "1"
    assert env["PYTHONPATH"] == root + os.pathsep + "/elsewhere"
    assert sandbox.ENV_CHILD not in os.environ or os.environ[sandbox.ENV_CHILD] != "1"  # this process unchanged
    monkeypatch.delenv("PYTHONPATH")
    assert sandbox.child_env()["PYTHONPATH"] == root
    monkeypatch.setenv("PYTHONPATH", "")
    assert sandbox.child_env()["PYTHONPATH"] == root


def test_a_child_started_without_the_child_variable_still_checks_its_interfaces(child: Any) -> None:
    """The zero-code entry's child is told by its configuration (``autopatch``), not always by the variable."""
    monkeypatch, listened = child
    monkeypatch.delenv(sandbox.ENV_CHILD)
    monkeypatch.setattr(sandbox.socket, "if_nameindex", lambda: [(2, "eth0")])
    assert sandbox.enter_child() == sandbox.ISOLATION_GUARD and listened == ["listen"]
