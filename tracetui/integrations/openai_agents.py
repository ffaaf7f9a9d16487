"""OpenAI Agents SDK (``openai-agents``): record and replay agents run with ``Runner``, unchanged.

Three seams, all found through ``tracetui.current_session()`` (none open: untouched):

- **model calls**: the SDK's OpenAI models (``OpenAIResponsesModel``, its default, and
  ``OpenAIChatCompletionsModel``), streamed (``Runner.run_streamed``) or not, on an
  ``openai.AsyncOpenAI`` whose HTTP client is tracetui's transport
  (``tracetui.integrations.transport``): recorded, served from the recording (frozen replay) or
  sent live through the guard (``llm="live"``). ``model_provider(**client_kwargs)`` is such a
  provider for ``RunConfig(model_provider=...)``; for a model object use
  ``OpenAIChatCompletionsModel(name, openai_client=tracetui.async_openai_client(...))``;
- **tool calls**: each ``FunctionTool``'s ``on_invoke_tool`` is wrapped (``instrument(agent)``:
  the agent's tools, its handoff agents' and its agents-as-tools' agents'), so a call is a tool
  span named ``FunctionTool.name`` with the model's JSON arguments, through
  ``session.engine.atool``: recorded live, a read served from the recording, a write intercepted,
  a call the recording does not hold a divergence (``UnrecordedCall``... raised by the tool: the
  SDK ends the run with a ``UserError`` whose ``__cause__`` it is; the session records it).
  Reads: the session's ``read_tools``, ``@tracetui.tool(read=True)``, ``[tool.tracetui]
  read_tools``. A ``@function_tool`` over a ``@tracetui.tool`` function is recorded once, by the
  inner ``@tracetui.tool``;
- **the SDK's tracing**: its exporter sends traces to api.openai.com (and flushes at exit), so
  while a *replay* session is open the SDK creates no trace (``DefaultTraceProvider`` gives
  no-op traces and spans) and the run's notes say so; outside replays tracing is unchanged.
  Installed once per process by ``model_provider``, ``instrument`` and ``patch``.

``patch()`` (the zero-code entry, ``tracetui record -- python app.py``) does all of it for an
unchanged program: the SDK's default OpenAI client (built by ``OpenAIProvider`` when no client is
set) goes through tracetui's transport, every ``FunctionTool`` built afterwards is wrapped, and
``Runner.run`` / ``run_sync`` / ``run_streamed`` instrument the starting agent (tools built before
``patch()``). ``unpatch()`` undoes it. Clients the program builds itself are
``tracetui.integrations.clients.patch()``'s, MCP servers ``tracetui.integrations.mcp``'s.

What this cannot cover yet:

- **MCP servers** (``agents.mcp.MCPServerStdio`` / ``Sse`` / ``StreamableHttp``) all end in
  ``mcp.ClientSession.call_tool``, which ``tracetui.integrations.mcp.patch()`` records (called by
  ``instrument`` for an agent with ``mcp_servers``); this module leaves MCP tools alone (two
  spans per call otherwise). A custom ``MCPServer`` not built on ``ClientSession`` is not seen.
- The Responses **websocket** transport, hosted tools (web search, file search, code
  interpreter, hosted MCP: they run at OpenAI, inside the recorded model answer, never replayed
  separately), ``ComputerTool``, ``ShellTool``, ``ApplyPatchTool`` and ``CustomTool`` (not
  ``FunctionTool``s), models of other providers (LiteLLM...) unless built on an httpx client.
- A handoff agent reached only through a ``Handoff`` object is found through the SDK's weak
  reference to it (best effort); tools added to an agent after ``instrument`` are not wrapped
  unless ``patch()`` is in effect.
- A tool's output is recorded as the model sees it: JSON values as they are, the SDK's
  structured outputs (``ToolOutputText``...) as their JSON form, any other object as
  ``str(output)`` (what the SDK sends the model); so in replay, and while recording, such a tool
  hands the SDK that text, not the object (a tool output guardrail sees the text).
- Custom trace providers (``set_trace_provider``) are not switched off in replay.
"""

from __future__ import annotations

import inspect
import json
import types
from collections.abc import Callable
from typing import Any

from tracetui.core.harness.ambient import HarnessSession, current_session
from tracetui.core.harness.steps import jsonable

TRACING_NOTE = ("openai-agents: the SDK's tracing was off during this replay (no trace was created, so its "
                "exporter had nothing to send to api.openai.com); it is on again after the session")

_ORIGINALS: dict[str, tuple[Any, str, Any]] = {}
"""What this module replaced, key -> (owner, attribute, original): ``unpatch`` puts it back
(``_INHERITED`` as the original: the attribute was inherited, and is deleted again)."""

_INHERITED = object()


def _session() -> HarnessSession | None:
    session = current_session()
    return session if session is not None and session.engine is not None else None


def _replace(key: str, owner: Any, attribute: str, make: Callable[[Any], Any]) -> None:
    if key not in _ORIGINALS:
        own = attribute in vars(owner)
        original = vars(owner)[attribute] if own else getattr(owner, attribute)
        _ORIGINALS[key] = (owner, attribute, original if own else _INHERITED)
        setattr(owner, attribute, make(original))


# ---- model calls -------------------------------------------------------------------------------
def model_provider(*, use_responses: bool | None = None, **client_kwargs: Any) -> Any:
    """An ``agents.models.openai_provider.OpenAIProvider`` whose models call the model through
    tracetui's transport: ``RunConfig(model_provider=model_provider(base_url=..., api_key=...))``.

    Args:
        use_responses: True: the Responses API; False: Chat Completions; None: the SDK's default
            (``set_default_openai_api``; Responses unless changed).
        client_kwargs: For ``openai.AsyncOpenAI`` (``api_key``, ``base_url``, ``max_retries``...).

    Raises:
        ImportError: ``openai-agents`` is not installed; openai's error when no API key is given
        and ``OPENAI_API_KEY`` is not set.
    """
    from agents.models.openai_provider import OpenAIProvider

    from tracetui.integrations.clients import async_openai_client

    suppress_tracing_in_replay()
    return OpenAIProvider(openai_client=async_openai_client(**client_kwargs), use_responses=use_responses)


def _shared_http_client() -> Any:
    """Stands in for ``agents.models.openai_provider.shared_http_client`` under ``patch()``: a
    fresh client on tracetui's transport (fresh: a pool is bound to one event loop)."""
    from tracetui.integrations.clients import async_http_client

    return async_http_client()


# ---- tool calls --------------------------------------------------------------------------------
class RecordedInvoker:
    """A ``FunctionTool.on_invoke_tool`` recorded and replayed (module docstring); built by
    ``instrument_tool``. Outside a session, and for MCP tools, agents-as-tools and tools whose
    function is a ``@tracetui.tool``, it calls the invoker it wraps unchanged.

    Attributes:
        tool: The ``FunctionTool`` it belongs to (its ``name`` is the span's tool name).
        inner: The invoker it wraps; other attributes are read from it.
    """

    def __init__(self, tool: Any, inner: Callable[..., Any], *, recorded_inside: bool | None = None) -> None:
        self.tool = tool
        self.inner = inner
        self.__wrapped__ = inner  # inspect.signature (the SDK reads the context parameter's annotation)
        if recorded_inside is None:
            try:
                fn = tool.__wrapped__  # the decorated function (raises for tools not built by function_tool)
            except AttributeError:
                fn = None
            recorded_inside = getattr(fn, "__tracetui_tool__", None) is not None
        self.recorded_inside = recorded_inside

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """The wrapped invoker's class when it is an object (the SDK's invoker), for the SDK's
        ``isinstance`` checks on ``on_invoke_tool`` (``FunctionTool.__wrapped__``, approvals); not
        for a function or method (``FunctionTool.__copy__`` would rebind the method unwrapped).
        ``type()`` always gives ``RecordedInvoker``."""
        inner = self.inner
        return RecordedInvoker if isinstance(inner, (types.FunctionType, types.MethodType)) else type(inner)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __agents_bind_function_tool__(self, function_tool: Any) -> RecordedInvoker:
        """The SDK's hook for a copied ``FunctionTool``: the copy gets its own recorded invoker."""
        inner = self.inner
        if inspect.ismethod(inner) and inner.__self__ is self.tool:  # a tool subclass's own method
            inner = inner.__func__.__get__(function_tool, type(function_tool))
        bind = getattr(inner, "__agents_bind_function_tool__", None)
        inner = bind(function_tool) if callable(bind) else inner
        if function_tool is self.tool and inner is self.inner:
            return self
        return RecordedInvoker(function_tool, inner, recorded_inside=self.recorded_inside)

    async def __call__(self, ctx: Any, input: str) -> Any:
        session = _session()
        tool = self.tool
        if session is None or not self.recorded():
            return await self.inner(ctx, input)
        name = tool.name
        session.saw_tool(name, tool.params_json_schema)
        visible = getattr(tool, "output_json_schema", None) is None

        async def live() -> Any:
            output = await self.inner(ctx, input)
            return model_visible(output) if visible else output

        return await session.engine.atool(name, tool_arguments(input), None, live)  # type: ignore[union-attr]

    def recorded(self) -> bool:
        """Whether calls of this tool are tool spans here: not an MCP tool (``tracetui.integrations.mcp``
        records them), not an agent used as a tool (its own model and tool calls are recorded), not
        a ``@tracetui.tool`` function (recorded by it)."""
        tool = self.tool
        return not (self.recorded_inside or getattr(tool, "_is_agent_tool", False)
                    or getattr(tool, "_mcp_tool_binding", None) is not None)


def tool_arguments(input: str) -> dict[str, Any]:
    """The arguments recorded for a tool call: the model's JSON arguments as an object;
    ``{"input": ...}`` when they are not a JSON object (the SDK then reports the error)."""
    try:
        args = json.loads(input) if input else {}
    except ValueError:
        return {"input": input}
    return args if isinstance(args, dict) else {"input": args}


def model_visible(output: Any) -> Any:
    """``output`` as the model sees it and as a replay can hand it back: JSON values unchanged, the
    SDK's structured outputs (``ToolOutputText``, ``ToolOutputImage``, ``ToolOutputFileContent``,
    or a list of them) as their JSON form, any other object as ``str(output)`` (the SDK's own
    conversion)."""
    if output is None or isinstance(output, (str, int, float, bool)):
        return output
    from agents import ToolOutputFileContent, ToolOutputImage, ToolOutputText

    structured = (ToolOutputText, ToolOutputImage, ToolOutputFileContent)
    if isinstance(output, structured):
        return output.model_dump(mode="json")
    if isinstance(output, (list, tuple)) and output and all(isinstance(o, structured) for o in output):
        return [o.model_dump(mode="json") for o in output]
    if isinstance(output, (dict, list)) and jsonable(output) == output:
        return output
    return str(output)


def instrument_tool(tool: Any) -> Any:
    """Wrap ``tool.on_invoke_tool`` (a ``FunctionTool``) in a ``RecordedInvoker``, in place;
    idempotent. Returns ``tool``; anything not a ``FunctionTool`` is returned unchanged."""
    from agents import FunctionTool

    if isinstance(tool, FunctionTool) and type(tool.on_invoke_tool) is not RecordedInvoker:
        tool.on_invoke_tool = RecordedInvoker(tool, tool.on_invoke_tool)
    return tool


def instrument(agent: Any) -> Any:
    """Record and replay the tool calls of ``agent`` (an ``agents.Agent``): wrap its
    ``FunctionTool``s and those of every agent reachable through its handoffs and its
    agents-as-tools, in place; idempotent. An agent with ``mcp_servers`` also gets
    ``tracetui.integrations.mcp.patch()`` (when that module is present). Also switches the SDK's
    tracing off during replays (module docstring).

    Returns:
        ``agent`` itself.
    """
    from agents import FunctionTool, Handoff

    seen: set[int] = set()
    stack = [agent]
    mcp = False
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        for tool in getattr(current, "tools", None) or ():
            if isinstance(tool, FunctionTool):
                instrument_tool(tool)
                stack.append(getattr(tool, "_agent_instance", None))
        for handoff in getattr(current, "handoffs", None) or ():
            if isinstance(handoff, Handoff):
                ref = getattr(handoff, "_agent_ref", None)
                stack.append(ref() if callable(ref) else None)
            else:
                stack.append(handoff)
        mcp = mcp or bool(getattr(current, "mcp_servers", None))
    if mcp:
        try:
            from tracetui.integrations import mcp as tracetui_mcp
        except ImportError:
            pass
        else:
            tracetui_mcp.patch()
    suppress_tracing_in_replay()
    return agent


# ---- the SDK's tracing -------------------------------------------------------------------------
def _replaying() -> bool:
    session = _session()
    if session is None or session.mode == "record":
        return False
    if TRACING_NOTE not in session.notes:
        session.notes.append(TRACING_NOTE)
    return True


def _disabled_in_replay(original: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(original)

    def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _replaying():
            bound = signature.bind(self, *args, **kwargs)
            bound.arguments["disabled"] = True
            return original(*bound.args, **bound.kwargs)
        return original(self, *args, **kwargs)

    create.__name__ = original.__name__
    create.__doc__ = original.__doc__
    create.__wrapped__ = original  # type: ignore[attr-defined]
    return create


def suppress_tracing_in_replay() -> None:
    """While a replay session is open, the SDK's default trace provider creates no-op traces and
    spans (nothing reaches its exporter, which would send them to api.openai.com); the session's
    notes say so. Outside replays tracing is unchanged. Idempotent; undone by ``unpatch()``."""
    from agents.tracing.provider import DefaultTraceProvider

    for method in ("create_trace", "create_span"):
        _replace(f"tracing.{method}", DefaultTraceProvider, method, _disabled_in_replay)


# ---- zero-code entry ---------------------------------------------------------------------------
def _post_init(original: Callable[..., Any]) -> Callable[..., Any]:
    def __post_init__(self: Any) -> None:
        original(self)
        if type(self.on_invoke_tool) is not RecordedInvoker:
            self.on_invoke_tool = RecordedInvoker(self, self.on_invoke_tool)

    __post_init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __post_init__


def _instrumenting(original: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, starting_agent: Any, *args: Any, **kwargs: Any) -> Any:
        if _session() is not None:
            instrument(starting_agent)
        return original(self, starting_agent, *args, **kwargs)

    run.__name__ = original.__name__
    run.__doc__ = original.__doc__
    run.__wrapped__ = original  # type: ignore[attr-defined]
    return run


def patch() -> bool:
    """Patch the Agents SDK so an unchanged program is recorded and replayed (module docstring):
    the default OpenAI client's HTTP client (``openai_provider.shared_http_client``), every
    ``FunctionTool`` (``__post_init__``), ``AgentRunner.run`` / ``run_sync`` / ``run_streamed``
    (instrument the starting agent) and the SDK's tracing in replays. Idempotent.

    Returns:
        True when ``openai-agents`` is installed (and is now patched), False when it is not.
    """
    try:
        from agents import FunctionTool
        from agents.models import openai_provider
        from agents.run import AgentRunner
    except ImportError:
        return False
    _replace("openai_provider.shared_http_client", openai_provider, "shared_http_client",
             lambda _original: _shared_http_client)
    _replace("FunctionTool.__post_init__", FunctionTool, "__post_init__", _post_init)
    for method in ("run", "run_sync", "run_streamed"):
        if inspect.iscoroutinefunction(getattr(AgentRunner, method)):
            _replace(f"AgentRunner.{method}", AgentRunner, method, _async_instrumenting)
        else:
            _replace(f"AgentRunner.{method}", AgentRunner, method, _instrumenting)
    suppress_tracing_in_replay()
    return True


def _async_instrumenting(original: Callable[..., Any]) -> Callable[..., Any]:
    async def run(self: Any, starting_agent: Any, *args: Any, **kwargs: Any) -> Any:
        if _session() is not None:
            instrument(starting_agent)
        return await original(self, starting_agent, *args, **kwargs)

    run.__name__ = original.__name__
    run.__doc__ = original.__doc__
    run.__wrapped__ = original  # type: ignore[attr-defined]
    return run


def unpatch() -> None:
    """Undo ``patch()`` and ``suppress_tracing_in_replay()`` (tools already wrapped stay wrapped:
    outside a session they behave as before)."""
    while _ORIGINALS:
        _key, (owner, attribute, original) = _ORIGINALS.popitem()
        if original is _INHERITED:
            delattr(owner, attribute)
        else:
            setattr(owner, attribute, original)


def patched() -> list[str]:
    """What is patched now (``"FunctionTool.__post_init__"``, ``"tracing.create_trace"``...)."""
    return sorted(_ORIGINALS)
