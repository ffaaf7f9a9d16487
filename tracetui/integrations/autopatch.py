"""The zero-code entry's child: run an unchanged Python program inside a tracetui session.

``tracetui record -- python app.py ARGS`` and ``tracetui replay REC -- python app.py ARGS``
(``tracetui.cli.session_cmds``) start ``python -m tracetui.integrations.autopatch app.py ARGS``
(or ``-m module ARGS``, ``-c code ARGS``) with the session's options in the environment variable
``TRACETUI_AUTOPATCH`` (JSON, removed from the environment before the program starts, so the
processes the program spawns are not recorded again). This module then, the way
``opentelemetry-instrument`` does:

1. installs an import hook: when the program imports a supported client or framework
   (``openai``, ``anthropic``, ``agents``, ``pydantic_ai``, ``langgraph`` / ``langchain_core``,
   ``mcp``), the matching integration's ``patch()`` runs right after the package has loaded
   (``tracetui.integrations.clients``, ``openai_agents``, ``pydantic_ai``, ``langgraph``,
   ``mcp``: only those that exist and have a ``patch``; a patch that fails is reported on stderr
   and the program runs unpatched);
2. opens the session (``tracetui.record`` / ``tracetui.replay``), the run's input being the
   program's arguments (``{"argv": [...]}``);
3. runs the program as ``__main__`` (``runpy``), with its own ``sys.argv`` and ``sys.path[0]``;
4. closes the session: the root span's output is ``{"exit_code": N}``; a ``SystemExit`` with a
   non-zero code or an uncaught exception is the root span's error (the traceback is printed as
   Python would); and writes the run's summary as JSON to the report file the parent reads.

The child exits with the program's own exit code (2 when tracetui itself failed before or after
the program, said in the report). In replay the socket guard stays on after the session closes,
until the process ends, so exit-time flushes (a tracing exporter) cannot reach the network.

What is recorded: model calls made through the ``openai`` / ``anthropic`` clients (and every
framework built on them), MCP tool calls, the tools of the patched frameworks, and functions
decorated with ``@tracetui.tool``. A plain function the program calls as a tool is not seen: it
runs as is in record mode and, in replay, runs again (its network calls refused by the guard).
Not covered: a program that ends with ``os._exit`` (no trace end is written), programs started
by a non-Python command, and processes the program spawns (not recorded, not guarded).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import runpy
import sys
import traceback
from typing import Any

ENV = "TRACETUI_AUTOPATCH"
"""The environment variable carrying the child's options (JSON): ``mode`` (record, strict,
loose), ``out``, ``recording``, ``llm``, ``read_tools``, ``force``, ``key_file``, ``report``."""

INTEGRATIONS: dict[str, str] = {
    "openai": "clients",
    "anthropic": "clients",
    "agents": "openai_agents",
    "pydantic_ai": "pydantic_ai",
    "langgraph": "langgraph",
    "langchain_core": "langgraph",
    "mcp": "mcp",
}
"""Top-level package imported by the program -> the ``tracetui.integrations`` module to patch with."""

EXIT_TRACETUI_ERROR = 2

_DONE: set[str] = set()
_WARNINGS: list[str] = []


def patch_integration(package: str) -> bool | None:
    """Call ``patch()`` of the integration for ``package`` (a key of ``INTEGRATIONS``) once per package
    (``patch()`` is idempotent; one integration may serve two packages).

    Returns:
        What ``patch()`` returned; None when the integration module or its ``patch`` does not
        exist, or ``patch()`` raised (reported on stderr).
    """
    module_name = INTEGRATIONS.get(package)
    if module_name is None or package in _DONE:
        return None
    _DONE.add(package)  # per package: clients.patch() patches openai and anthropic as each is imported
    try:
        module = importlib.import_module(f"tracetui.integrations.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"tracetui.integrations.{module_name}":
            return None
        return _warn(package, module_name, exc)
    except Exception as exc:
        return _warn(package, module_name, exc)
    patch = getattr(module, "patch", None)
    if not callable(patch):
        return None
    try:
        return bool(patch())
    except Exception as exc:
        return _warn(package, module_name, exc)


def _warn(package: str, module_name: str, exc: BaseException) -> None:
    text = f"tracetui: warning: {package} imported but tracetui.integrations.{module_name}.patch() failed " \
           f"({type(exc).__name__}: {exc}); its calls are not recorded"
    _WARNINGS.append(text)
    print(text, file=sys.stderr)
    return None


class _PatchingLoader(importlib.abc.Loader):
    """Runs the real loader, then the integration's ``patch()``; the module keeps its own loader."""

    def __init__(self, loader: Any, package: str) -> None:
        self._loader = loader
        self._package = package

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        spec = getattr(module, "__spec__", None)
        if spec is not None:
            spec.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        patch_integration(self._package)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class PatchingFinder(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder that sees the top-level packages of ``INTEGRATIONS`` imported
    and has their integration patched once they have loaded."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in INTEGRATIONS or INTEGRATIONS[fullname] in _DONE:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader, fullname)
        return spec


def install() -> None:
    """Install the import hook (once) and patch the packages already imported."""
    if not any(isinstance(f, PatchingFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PatchingFinder())
    for package in INTEGRATIONS:
        if package in sys.modules:
            patch_integration(package)


# ---- the child ---------------------------------------------------------------------------------
def _program(argv: list[str]) -> tuple[str, str, list[str]]:
    """``(kind, target, args)`` from the child's arguments: ``path``, ``module`` or ``code``."""
    if not argv:
        raise ValueError("no program given: python -m tracetui.integrations.autopatch app.py ARGS")
    if argv[0] == "-m" and len(argv) > 1:
        return "module", argv[1], argv[2:]
    if argv[0] == "-c" and len(argv) > 1:
        return "code", argv[1], argv[2:]
    if argv[0].startswith("-"):
        raise ValueError(f"python option {argv[0]} is not supported here: give app.py, -m module or -c code")
    return "path", argv[0], argv[1:]


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_traceback(exc: BaseException) -> None:
    """Print ``exc``'s traceback as Python would for the program: without this module's and
    ``runpy``'s frames."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__)
                              or "runpy" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb if tb is not None else exc.__traceback__)


def _write_report(path: str | None, report: dict[str, Any]) -> None:
    if not path:
        return
    from tracetui.core.harness.steps import jsonable

    with open(path, "w", encoding="utf-8") as fh:
        json.dump(jsonable(report), fh)


def recorded_exit_code(recording: Any) -> int | None:
    """The exit code of the program a zero-code recording ran (its root span), or None."""
    from tracetui.core.model import Status

    for span in getattr(recording, "spans", []):
        if span.parent_id is not None:
            continue
        output = span.data.get("output")
        if span.status is Status.OK:
            code = output.get("exit_code") if isinstance(output, dict) else None
            return code if isinstance(code, int) else None
        if isinstance(output, dict) and output.get("error_type") == "SystemExit":
            try:
                return int(str(output.get("message")))
            except ValueError:
                return 1
        return 1
    return None


def run(argv: list[str], config: dict[str, Any]) -> int:
    """Run the program ``argv`` (``app.py ARGS``, ``-m module ARGS`` or ``-c code ARGS``) inside
    the session ``config`` describes (``ENV``); returns the exit code (module docstring)."""
    report_path = config.get("report")
    try:
        kind, target, args = _program(argv)
    except ValueError as exc:
        _write_report(report_path, {"error": str(exc)})
        print(f"tracetui: error: {exc}", file=sys.stderr)
        return EXIT_TRACETUI_ERROR
    if kind == "path":
        sys.argv = [target, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        agent = os.path.splitext(os.path.basename(target))[0]
    elif kind == "module":
        sys.argv = [target, *args]
        agent = target
    else:
        sys.argv = ["-c", *args]
        sys.path[0] = ""
        agent = "python-c"
    if kind == "module" and importlib.util.find_spec(target) is None:
        message = f"no module named {target!r}; nothing was recorded"
        _write_report(report_path, {"error": message})
        print(f"tracetui: error: {message}", file=sys.stderr)
        return EXIT_TRACETUI_ERROR
    isolation = config.get("isolation")
    if config.get("netns"):
        from tracetui.core.harness.sandbox import enter_child

        isolation = enter_child()  # loopback up; confirms no other interface
    install()
    from tracetui.core.errors import TracetuiError
    from tracetui.core.harness.ambient import record_session, replay_session

    mode = config.get("mode", "record")
    recorded_exit = None
    try:
        if mode == "record":
            ref = target if kind == "path" else f"-m {target}" if kind == "module" else "-c …"
            session = record_session(config["out"], read_tools=config.get("read_tools") or (), agent=agent,
                                     input={"argv": args}, overwrite=bool(config.get("force")),
                                     key_file=config.get("key_file"), agent_ref=ref)
        else:
            session = replay_session(config["recording"], config["out"], mode=mode, llm=config.get("llm", "frozen"),
                                     read_tools=config.get("read_tools") or (), overwrite=bool(config.get("force")),
                                     key_file=config.get("key_file"), input={"argv": args},
                                     allow_live=bool(config.get("allow_live")))
            recorded_exit = recorded_exit_code(session.recording)
            session.isolation = isolation
        session.__enter__()
    except (TracetuiError, OSError) as exc:
        _write_report(report_path, {"error": str(exc)})
        print(f"tracetui: error: {exc}", file=sys.stderr)
        return EXIT_TRACETUI_ERROR
    error: BaseException | None = None
    code = 0
    try:
        if kind == "path":
            runpy.run_path(target, run_name="__main__")
        elif kind == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            import types

            main = types.ModuleType("__main__")
            saved = sys.modules.get("__main__")
            sys.modules["__main__"] = main
            try:
                exec(compile(target, "<string>", "exec"), main.__dict__)
            finally:
                if saved is not None:
                    sys.modules["__main__"] = saved
    except SystemExit as exc:
        code = _exit_code(exc)
        error = exc if code != 0 else None
    except KeyboardInterrupt as exc:
        error, code = exc, 130
        _print_traceback(exc)
    except BaseException as exc:
        error, code = exc, 1
        _print_traceback(exc)
    session.output = {"exit_code": code}
    try:
        session.__exit__(type(error) if error is not None else None, error, None)
    except Exception as exc:
        _write_report(report_path, {"error": f"closing the session failed: {type(exc).__name__}: {exc}",
                                    "exit_code": code})
        print(f"tracetui: error: closing the session failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_TRACETUI_ERROR
    if mode != "record":
        from tracetui.core.harness.guard import block_network

        block_network(mode).__enter__()  # until the process ends: exit-time flushes stay offline
    result = session.result
    assert result is not None
    summary = result.summary()
    summary["model_calls"] = result.outcome.model_calls
    report = {"mode": mode, "llm": session.llm_mode, "out": session.out, "exit_code": code, "isolation": isolation,
              "recorded_exit_code": recorded_exit, "summary": summary, "warnings": list(_WARNINGS),
              "tools": _tool_counts(session.out)}
    _write_report(report_path, report)
    return code


def _tool_counts(path: str) -> dict[str, int]:
    """Spans by kind in the written trace (``tool``, ``llm``...), for the record report."""
    counts: dict[str, int] = {}
    try:
        from tracetui.core.readers import read_trace

        for span in read_trace(path).spans:
            kind = getattr(span.kind, "value", str(span.kind))
            counts[kind] = counts.get(kind, 0) + 1
    except Exception:
        pass
    return counts


def main(argv: list[str] | None = None) -> int:
    """``python -m tracetui.integrations.autopatch PROGRAM ARGS`` with ``TRACETUI_AUTOPATCH`` set."""
    raw = os.environ.pop(ENV, None)
    if raw is None:
        print(f"tracetui: error: {ENV} is not set: run the program with `tracetui record -- python app.py` "
              "or `tracetui replay REC -- python app.py`", file=sys.stderr)
        return EXIT_TRACETUI_ERROR
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        print(f"tracetui: error: {ENV} is not JSON: {exc}", file=sys.stderr)
        return EXIT_TRACETUI_ERROR
    return run(list(sys.argv[1:] if argv is None else argv), config)


if __name__ == "__main__":
    sys.exit(main())
