"""Finding a user's agent and what its module declares.

An agent is a function ``run(ctx, input)``. tracetui finds it as ``module:function`` (imported
with the current directory first on ``sys.path``) or ``path/to/file.py:function`` (loaded from the
file). Its module may declare, all optional (docs/harness.md):

==================  ==========================================================================
``TOOLS``           tool name -> callable taking the arguments as keyword arguments and
                    returning a JSON-serialisable value (the live tools).
``READ_TOOLS``      set of tool names that are reads; **every other tool is a write**.
``RETRIEVERS``      index name -> callable ``(query, **kw)`` returning a list of documents.
``MODEL``           callable ``MODEL(messages, *, model, **params)`` returning the assistant
                    message ``{"role": "assistant", "content": str, "tool_calls": [...]}``.
``MODEL_INFO``      ``{"id", "version", "provider"}`` of the model the agent asks for.
``PROMPTS``         prompt id -> ``{"version": str, "text": str}`` (or the text alone).
``TOOL_SCHEMAS``    tool name -> JSON schema; hashed into the tool-schema hash.
``SENSITIVE_FIELDS`` tool name -> field names that tool declares sensitive (redacted whole).
``FIXTURE``         a factory ``FIXTURE()`` of a fixture store (tracetui.core.harness.fixture).
``AGENT_NAME``      the agent's name (default: the function's module and name).
``CODE_VERSION``    the agent's code version (a commit, a release).
==================  ==========================================================================
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.canonical import canonical_json
from tracetui.core.harness.project import check_volatile
from tracetui.core.errors import AgentLoadError
from tracetui.core.readers import split_run_ref


@dataclass(slots=True)
class AgentSpec:
    """A loaded agent and the declarations of its module.

    Attributes:
        ref: The reference it was loaded from (``agent.py:run``).
        run: The agent function ``run(ctx, input)``.
        name: ``AGENT_NAME`` or ``module.function``.
        tools: Live tools by name (empty when the module declares none).
        read_tools: Names of read tools; every other tool name is a write.
        retrievers: Live retrievers by index name.
        model: The live model callable, or None.
        model_info: ``{"id", "version", "provider"}`` (may be empty).
        prompts: Prompt id -> ``{"version", "text"}``.
        tool_schemas: Tool name -> JSON schema, when declared.
        sensitive_fields: Tool name -> field names declared sensitive.
        fixture_factory: ``FIXTURE`` or None.
        code_version: ``CODE_VERSION`` or None.
        volatile_args: ``VOLATILE_ARGS``: tool name -> argument paths a replay ignores when matching.
    """

    ref: str
    run: Callable[..., Any]
    name: str
    tools: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    read_tools: frozenset[str] = frozenset()
    retrievers: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    model: Callable[..., Any] | None = None
    model_info: Mapping[str, Any] = field(default_factory=dict)
    prompts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tool_schemas: Mapping[str, Any] | None = None
    sensitive_fields: Mapping[str, frozenset[str]] = field(default_factory=dict)
    fixture_factory: Callable[[], Any] | None = None
    code_version: str | None = None
    volatile_args: Mapping[str, list[str]] = field(default_factory=dict)

    def is_read(self, tool: str) -> bool:
        """True only for a tool on the explicit read list (practice.md: every tool is a write unless
        it is on an explicit read list)."""
        return tool in self.read_tools

    def tool_schema_hash(self) -> str:
        """16 hex digits of SHA-256 over the tool schemas and the read list.

        From ``TOOL_SCHEMAS`` when declared; otherwise from each live tool's signature (parameter
        names, kinds, defaults, annotations as text), so renaming or adding a parameter changes it.
        A tool moving between read and write changes it too.
        """
        if self.tool_schemas is not None:
            schemas: Any = self.tool_schemas
        else:
            schemas = {name: signature_schema(fn) for name, fn in self.tools.items()}
        payload = {"tools": schemas, "read_tools": sorted(self.read_tools),
                   "retrievers": sorted(self.retrievers)}
        return hashlib.sha256(canonical_json(payload)).hexdigest()[:16]

    def prompt_hash(self) -> str | None:
        """16 hex digits of SHA-256 over ``PROMPTS`` (ids, versions and texts), or None when the
        module declares no prompts."""
        if not self.prompts:
            return None
        return hashlib.sha256(canonical_json(self.prompts)).hexdigest()[:16]

    def prompt_versions(self) -> dict[str, str]:
        """Prompt id -> version, from ``PROMPTS``."""
        return {pid: str(p.get("version")) for pid, p in self.prompts.items() if p.get("version") is not None}


def signature_schema(fn: Callable[..., Any]) -> Any:
    """A callable's parameters as JSON (name, kind, default and annotation as text), for the
    tool-schema hash; its name when it has no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return getattr(fn, "__name__", repr(type(fn)))
    params = []
    for p in sig.parameters.values():
        item: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            item["default"] = repr(p.default)
        if p.annotation is not inspect.Parameter.empty:
            item["annotation"] = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
        params.append(item)
    return params


def load_agent(ref: str) -> AgentSpec:
    """Load ``module:function`` or ``path/to/file.py:function``.

    Args:
        ref: The reference. A part before the last ``:`` that ends in ``.py`` or names an existing
            file is a path; anything else is a module name, imported with the current directory
            first on ``sys.path``.

    Returns:
        The AgentSpec with the module's declarations.

    Raises:
        AgentLoadError: no ``:``, file or module missing, the module raised on import (the message
            gives the exception and the file and line it came from), no such function, not
            callable, or a declaration of the wrong type (``TOOLS`` not a mapping...).
    """
    target, sep, func = ref.rpartition(":")
    if not sep or not target or not func:
        raise AgentLoadError(
            f"agent {ref!r}: expected module:function or path/to/file.py:function (for example agent.py:run)")
    is_path = target.endswith(".py") or os.sep in target or os.path.isfile(target)
    try:
        if is_path:
            module = _load_file(target)
        else:
            module = _import(target)
    except AgentLoadError:
        raise
    except BaseException as exc:  # the user's code raised on import
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AgentLoadError(f"agent {ref!r}: importing {target} raised {_describe(exc)}") from exc
    fn = getattr(module, func, None)
    if fn is None:
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module.__name__)
        hint = f"; functions there: {', '.join(names[:12])}" if names else ""
        raise AgentLoadError(f"agent {ref!r}: {target} has no {func!r}{hint}")
    if not callable(fn):
        raise AgentLoadError(f"agent {ref!r}: {func!r} is a {type(fn).__name__}, not a function run(ctx, input)")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise AgentLoadError(f"agent {ref!r}: {func}{inspect.signature(fn)} cannot be called as run(ctx, input)") from None
    except ValueError:  # no signature (a builtin): let the call tell
        pass
    display = os.path.splitext(os.path.basename(target))[0] if is_path else target
    return _spec(ref, module, fn, display)


def locate_agent_ref(ref: str, trace_path: str) -> str:
    """A recorded ``agent_ref`` made usable from the current directory.

    A trace's header keeps the reference as typed when it was recorded (``sample_runs/x/agent.py:run``,
    relative to the folder ``tracetui record`` ran in). When its file part does not exist from here, the
    folders from the trace's own folder upwards are tried (the project the trace belongs to), and the first
    one holding the file gives the reference, as a path relative to the current directory when that is
    shorter. Module references (``pkg.agent:run``) and references that already work are returned unchanged,
    as is one found nowhere (``load_agent`` then says the file is missing).

    Args:
        ref: ``path/to/file.py:function`` or ``module:function``.
        trace_path: The trace whose header held it (``FILE`` or ``FILE#RUN``, split as ``read_trace`` splits it:
            a path that exists is a file even with a ``#`` in it, else the run follows the last ``#``).
    """
    target, sep, func = ref.rpartition(":")
    if not sep or not target or os.path.isabs(target) or os.path.exists(target):
        return ref
    if not (target.endswith(".py") or "/" in target or os.sep in target):
        return ref
    folder = os.path.dirname(os.path.abspath(split_run_ref(trace_path)[0]))
    while True:
        candidate = os.path.join(folder, target)
        if os.path.isfile(candidate):
            relative = os.path.relpath(candidate)
            return f"{relative if len(relative) < len(candidate) else candidate}:{func}"
        parent = os.path.dirname(folder)
        if parent == folder:
            return ref
        folder = parent


_LOADING = threading.Lock()
"""Held while an agent file is imported: a second thread (a Dask worker's) asking for the same file
waits for the whole module instead of getting it half-executed from ``sys.modules``."""


def _load_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise AgentLoadError(f"agent file {path} not found")
    with _LOADING:
        return _load_file_locked(path)


def _load_file_locked(path: str) -> Any:
    name = "tracetui_agent_" + hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AgentLoadError(f"agent file {path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = os.path.dirname(os.path.abspath(path))
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)  # so the agent can import its neighbours
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if added:
            sys.path.remove(folder)
    return module


def _import(name: str) -> Any:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise AgentLoadError(f"agent module {name!r} not found (looked in {cwd} and sys.path)") from exc
        raise


def _describe(exc: BaseException) -> str:
    tb = exc.__traceback__
    where = ""
    while tb is not None:
        frame = tb.tb_frame
        if not frame.f_code.co_filename.startswith("<frozen"):
            where = f" at {frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"{type(exc).__name__}: {exc}{where}"


def _spec(ref: str, module: Any, fn: Callable[..., Any], display: str) -> AgentSpec:
    def declared(name: str) -> Any:
        # A declaration set on the agent function wins over the module's (two agents in one module).
        value = getattr(fn, name, None)
        return getattr(module, name, None) if value is None else value

    def get(name: str, kind: type | tuple[type, ...], what: str) -> Any:
        value = declared(name)
        if value is not None and not isinstance(value, kind):
            raise AgentLoadError(f"agent {ref!r}: {name} must be {what}, not {type(value).__name__}")
        return value

    tools = get("TOOLS", Mapping, "a mapping of tool name to callable") or {}
    for name, tool in tools.items():
        if not callable(tool):
            raise AgentLoadError(f"agent {ref!r}: TOOLS[{name!r}] is not callable")
    read = get("READ_TOOLS", (set, frozenset, list, tuple), "a set of tool names") or ()
    retrievers = get("RETRIEVERS", Mapping, "a mapping of index name to callable") or {}
    model = declared("MODEL")
    if model is not None and not callable(model):
        raise AgentLoadError(f"agent {ref!r}: MODEL must be callable MODEL(messages, *, model, **params)")
    prompts_raw = get("PROMPTS", Mapping, "a mapping of prompt id to {version, text}") or {}
    prompts = {str(k): (dict(v) if isinstance(v, Mapping) else {"text": str(v)}) for k, v in prompts_raw.items()}
    sensitive = get("SENSITIVE_FIELDS", Mapping, "a mapping of tool name to field names") or {}
    fixture = declared("FIXTURE")
    if fixture is not None and not callable(fixture):
        raise AgentLoadError(f"agent {ref!r}: FIXTURE must be a factory (a class or function) of a fixture store")
    schemas = get("TOOL_SCHEMAS", Mapping, "a mapping of tool name to JSON schema")
    return AgentSpec(
        ref=ref,
        run=fn,
        name=str(declared("AGENT_NAME") or f"{display}.{fn.__name__}"),
        tools=dict(tools),
        read_tools=frozenset(str(t) for t in read),
        retrievers=dict(retrievers),
        model=model,
        model_info=dict(get("MODEL_INFO", Mapping, "a mapping {id, version, provider}") or {}),
        prompts=prompts,
        tool_schemas=dict(schemas) if schemas is not None else None,
        sensitive_fields={str(k): frozenset(str(f) for f in v) for k, v in sensitive.items()},
        fixture_factory=fixture,
        code_version=(str(declared("CODE_VERSION")) if declared("CODE_VERSION") else None),
        volatile_args=check_volatile(declared("VOLATILE_ARGS") or {}, f"agent {ref!r}: VOLATILE_ARGS", AgentLoadError),
    )
