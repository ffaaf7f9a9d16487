"""Running a replaying command (``replay``, ``golden run``, ``triage --agent``) inside the replay
sandbox (``core.harness.sandbox``): the command runs itself again as a child in a fresh network
namespace, with the model relay (``core.harness.relay``) when the model is called again.

``isolate`` is called at the top of each such command:

- in the namespaced child it confirms the namespace (and hands the relay its listener), and the
  command goes on in process;
- in the parent it starts the child, relays its stdout/stderr, adds the relay's counts to the
  report (a ``model relay:`` line; ``model_relay`` in a JSON report) and returns its exit code;
- where no namespace can be had, the command goes on in process with the in-process guard only,
  and says so (``network isolation: in-process guard only; ...``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any, TextIO

from tracetui.core.harness import relay as relay_mod
from tracetui.core.harness import sandbox


@dataclass
class Isolation:
    """Where the command runs.

    Attributes:
        statement: ``sandbox.ISOLATION_NAMESPACE`` or ``sandbox.ISOLATION_GUARD``: what the output
            and the trace header say.
        exit_code: Set when the command has already run, in the namespaced child: its exit code.
    """

    statement: str
    exit_code: int | None = None


def add_endpoint_flag(p: argparse.ArgumentParser) -> None:
    """``--llm-endpoint URL`` on a replaying command."""
    p.add_argument("--llm-endpoint", metavar="URL",
                   help="with the model called again (--llm live): the model API's base URL, the only place the "
                        "replay sandbox's relay lets the agent reach (default: $TRACETUI_LLM_ENDPOINT, "
                        "[tool.tracetui.replay] llm_endpoint, $OPENAI_BASE_URL, $ANTHROPIC_BASE_URL)")


def isolate(args: argparse.Namespace, out: TextIO, err: TextIO, *, live_llm: bool, possible: bool = True) -> Isolation:
    """Run this command in the replay sandbox where one can be had (module docstring).

    Args:
        args: The parsed command line; ``args.argv`` is the command line to run again (set by
            ``cli.main``; without it the command runs in process), ``args.llm_endpoint`` the flag.
        live_llm: The model is called again: relay its calls to the configured endpoint.
        possible: False when the command must reach more than the model (``--allow-live``).

    Returns:
        The Isolation; ``exit_code`` set when the command ran in the child.

    Raises:
        HarnessError: a model endpoint that is not an http(s) URL.
    """
    if sandbox.inside():
        return Isolation(sandbox.enter_child())
    argv = getattr(args, "argv", None)
    command = sandbox.isolated_command([sys.executable, "-m", "tracetui", *argv]) if possible and argv else None
    if command is None:
        return Isolation(sandbox.ISOLATION_GUARD)
    relay = None
    if live_llm:
        url, source = relay_mod.endpoint_url(getattr(args, "llm_endpoint", None))
        if url is None:
            print("tracetui: note: the model is called again but no model endpoint is configured (--llm-endpoint "
                  f"URL, ${relay_mod.ENV_ENDPOINT}, [tool.tracetui.replay] llm_endpoint, $OPENAI_BASE_URL): inside "
                  "the replay sandbox a MODEL that calls an HTTP API has no route", file=err)
        else:
            relay = relay_mod.Relay(relay_mod.host_port(url))
            print(f"tracetui: model relay to {relay.summary()['endpoint']} (from {source}); nothing else has a route",
                  file=err)
    fmt = getattr(args, "format", "text")
    code, stdout = _run_child(command, relay, out, err, stream=fmt != "json")
    if relay is not None and (code != 2 or relay.summary()["forwarded"] or relay.summary()["refused"]):  # 2: an error
        stdout = _with_relay(stdout, relay.summary(), fmt)
    out.write(stdout)
    return Isolation(sandbox.ISOLATION_NAMESPACE, code)


def _run_child(command: list[str], relay: relay_mod.Relay | None, out: TextIO, err: TextIO, *,
               stream: bool) -> tuple[int, str]:
    """Run ``command`` with the sandbox's environment; its stderr is copied to ``err`` as it comes,
    its stdout to ``out`` as it comes with ``stream`` (a text report), else returned whole (a
    JSON report, completed by the caller). Returns ``(exit code, stdout not yet written)``."""
    env = sandbox.child_env()
    fds: tuple[int, ...] = ()
    if relay is not None:
        env[relay_mod.ENV_RELAY_FD] = str(relay.child_fd)
        fds = (relay.child_fd,)
    held: list[bytes] = []
    try:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=fds)
        if relay is not None:
            relay.started()
        assert proc.stdout is not None and proc.stderr is not None
        diagnostics = threading.Thread(target=_copy, args=(proc.stderr, err, None), daemon=True)
        diagnostics.start()
        report = threading.Thread(target=_copy, args=(proc.stdout, out, None if stream else held), daemon=True)
        report.start()
        while True:
            try:
                proc.wait()
                report.join()
                diagnostics.join()
                break
            except KeyboardInterrupt:  # the child got it too: let it close its trace
                continue
    finally:
        if relay is not None:
            relay.close()
    return proc.returncode, b"".join(held).decode("utf-8", "replace")


def _copy(src: Any, dst: TextIO, held: list[bytes] | None) -> None:
    """Lines of the child's pipe ``src`` to ``dst`` as they come (or into ``held``)."""
    for line in iter(src.readline, b""):
        if held is not None:
            held.append(line)
            continue
        dst.write(line.decode("utf-8", "replace"))
        try:
            dst.flush()
        except (OSError, ValueError):
            pass


def relay_line(summary: dict[str, Any]) -> str:
    """``model relay: 3 requests forwarded to HOST:PORT; refused 1: GET 127.0.0.1:9 ...``."""
    refused = summary["refused"]
    line = f"model relay: {summary['forwarded']} request{'s' * (summary['forwarded'] != 1)} forwarded to " \
           f"{summary['endpoint']}; refused {len(refused)}"
    if refused:
        shown = ", ".join(refused[:8]) + (f", ... ({len(refused) - 8} more)" if len(refused) > 8 else "")
        line += f": {shown}"
    return line


def _with_relay(stdout: str, summary: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        try:
            doc = json.loads(stdout)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            doc["model_relay"] = summary
            return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
        return stdout
    return stdout + relay_line(summary) + "\n"
