"""pydantic-ai: record and replay pydantic-ai agents unchanged (``pip install 'tracetui[pydantic-ai]'``).

Two seams, both inside an open ``tracetui.record`` / ``tracetui.replay`` block (outside one every
piece here passes straight through):

- **Model calls** at the HTTP boundary (``tracetui.integrations.transport``): a pydantic-ai OpenAI
  model whose ``AsyncOpenAI`` client goes through tracetui's transport. ``model("gpt-4o")`` is
  ``OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=tracetui.async_openai_client()))``;
  ``model(name, api="responses")`` the ``OpenAIResponsesModel`` likewise; ``provider(**kw)`` the
  provider alone. Streamed runs (``run_stream``, ``run_stream_events``, ``iter``) record and replay
  the same SSE stream.
- **Tool calls** at pydantic-ai's tool-execution hook (``AbstractCapability.wrap_tool_execute``):
  each call of a tool from any toolset (``@agent.tool`` / ``@agent.tool_plain``,
  ``FunctionToolset``, wrapped, prefixed or prepared toolsets) is one tool span named by its
  ``ToolDefinition`` (``tool_def.name``), with the arguments the tool receives (validated, as
  JSON). Pass ``capability()`` (a ``TracetuiCapability``) to ``Agent(..., capabilities=[...])`` (or
  to one run), or call ``patch()``. MCP toolsets' tools are left to ``tracetui.integrations.mcp``
  (patched here on the first one met), which records them at ``mcp.ClientSession.call_tool``
  with the server's ``readOnlyHint`` as a hinted read: one span per call, not two; likewise a
  function that is a ``@tracetui.tool`` records itself.

``patch()`` makes an unchanged program recorded: ``Agent('openai:gpt-4o', ...)`` (any
``OpenAIProvider`` / ``AnthropicProvider`` built without a client of the program's own) talks
through tracetui's transport, and every agent's tool calls go through the session (the agents'
root ``CombinedCapability.wrap_tool_execute``, patched at the class). It is idempotent and leaves
nothing changed outside a session.

In replay a read is served from the recording, a write intercepted (the recorded output of the
same write, or a simulated success), a call the recording lacks raised inside the agent as
``UnrecordedCall`` (pydantic-ai lets it propagate out of ``run``); a recorded ``ModelRetry`` /
``ToolFailed`` is raised again as such, so the model gets the same retry prompt or failure.

Cannot cover yet:
- a provider given the program's own ``openai_client`` / ``http_client`` (pass tracetui's instead:
  ``provider()``), and other providers (Google, Groq, Bedrock, ...), whose calls are not recorded
  (in replay the socket guard blocks them);
- the hooks that run inside tool execution (``before_tool_execute`` / ``after_tool_execute``,
  ``on_tool_execute_error``) are skipped with the tool in replay; the recorded output is the
  one after them;
- a tool's return value is replayed as its JSON form (a ``ToolReturn``, ``BinaryContent`` or a
  model returns as a dict / list);
- a tool that itself calls a model (an agent used as a tool): in record mode its model calls are
  recorded inside the tool's call, in replay the tool is served whole and they are not made, so
  the diff reports them missing;
- MCP toolsets: ``pydantic_ai.mcp.MCPToolset`` needs ``fastmcp``, not installed in the test
  environment, so that path (an MCP tool told apart by the ``meta`` / ``annotations`` metadata
  ``MCPToolset`` gives its tool definitions, then recorded by ``tracetui.integrations.mcp``) is
  untested here.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from tracetui.core.errors import RecordedToolError
from tracetui.core.harness.ambient import current_session
from tracetui.integrations.clients import async_http_client, async_openai_client

APIS = ("chat", "responses")

_IN_TOOL: contextvars.ContextVar[bool] = contextvars.ContextVar("tracetui_pydantic_ai_tool", default=False)
"""True while a tool call recorded here runs live: a nested pass of the seam (the capability and
the patched root both present, or a tool running an agent) is not recorded twice."""

_PATCHED: dict[str, bool] = {}
_CAPABILITY_CLASS: list[type] = []


# ---- model calls ------------------------------------------------------------------------------
def provider(**client_kwargs: Any) -> Any:
    """An ``OpenAIProvider`` whose ``AsyncOpenAI`` client is recorded and replayed by tracetui
    (``client_kwargs`` go to ``openai.AsyncOpenAI``: ``base_url``, ``api_key``, ``max_retries``...)."""
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIProvider(openai_client=async_openai_client(**client_kwargs))


def model(name: str, *, api: str = "chat", settings: Any = None, **client_kwargs: Any) -> Any:
    """A pydantic-ai OpenAI model recorded and replayed by tracetui.

    Args:
        name: The model name (``"gpt-4o"``).
        api: ``"chat"`` (``OpenAIChatModel``, Chat Completions) or ``"responses"``
            (``OpenAIResponsesModel``, the Responses API).
        settings: The model's default ``ModelSettings``.
        client_kwargs: For ``openai.AsyncOpenAI`` (``base_url``, ``api_key``...).

    Raises:
        ValueError: ``api`` is neither ``chat`` nor ``responses``.
    """
    if api not in APIS:
        raise ValueError(f"tracetui pydantic_ai.model: api must be one of {', '.join(APIS)}, not {api!r}")
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

    cls = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    return cls(name, provider=provider(**client_kwargs), settings=settings)


# ---- tool calls -------------------------------------------------------------------------------
async def record_tool_call(ctx: Any, tool_def: Any, args: dict[str, Any],
                           handler: Callable[[dict[str, Any]], Awaitable[Any]]) -> Any:
    """Run one pydantic-ai tool call through the open session: ``handler(args)`` is the live call.

    Outside a session, for output tools, for a tool whose function is already a
    ``@tracetui.tool`` or an MCP tool (each recorded at its own seam), and inside a call recorded
    here, ``handler(args)`` is awaited as is. Returns the tool's output (in replay: the recorded JSON).

    Raises:
        UnrecordedCall, RecordingExhausted, InputMismatch: a replay divergence (recorded too).
        ModelRetry, ToolFailed: the recorded call raised it (replay); live, what the tool raised.
    """
    session = current_session()
    name = getattr(tool_def, "name", None)
    if (session is None or session.engine is None or _IN_TOOL.get() or not isinstance(name, str)
            or getattr(tool_def, "kind", "function") == "output" or _is_tracetui_tool(ctx, name)):
        return await handler(args)
    if _is_mcp_tool(tool_def):
        from tracetui.integrations import mcp

        mcp.patch()
        return await handler(args)
    session.saw_tool(name, getattr(tool_def, "parameters_json_schema", None))

    async def live() -> Any:
        token = _IN_TOOL.set(True)
        try:
            return await handler(args)
        finally:
            try:
                _IN_TOOL.reset(token)
            except ValueError:  # reset in another context than set
                _IN_TOOL.set(False)

    try:
        return await session.engine.atool(name, _json_args(args), None, live)
    except RecordedToolError as exc:
        again = _control_flow(exc)
        if again is None:
            raise
        raise again from None


def _control_flow(exc: RecordedToolError) -> Exception | None:
    """The pydantic-ai exception a recorded ``ModelRetry`` / ``ToolFailed`` is raised again as (it
    reaches this seam as ``ToolRetryError`` / ``ToolFailedError``, already counted and wrapped):
    the tool manager wraps it again as it did live, so the model gets the same retry prompt."""
    from pydantic_ai.exceptions import ModelRetry, ToolFailed

    cls = {"ModelRetry": ModelRetry, "ToolRetryError": ModelRetry, "ToolFailed": ToolFailed,
           "ToolFailedError": ToolFailed}.get(exc.error_type or "")
    if cls is None:
        return None
    output = exc.output if isinstance(exc.output, dict) else {}
    message = output.get("message")
    return cls(message if isinstance(message, str) else str(exc))


def _json_args(args: Any) -> dict[str, Any]:
    """The validated arguments as JSON (a tool parameter typed as a model or a date records as
    its JSON form)."""
    from pydantic_core import to_jsonable_python

    value = to_jsonable_python(args, fallback=repr)
    return value if isinstance(value, dict) else {"args": value}


def _is_mcp_tool(tool_def: Any) -> bool:
    """Whether the tool comes from an MCP toolset (``MCPToolset.get_tools`` puts the server's
    ``meta`` and ``annotations`` in each definition's metadata)."""
    metadata = getattr(tool_def, "metadata", None)
    return isinstance(metadata, dict) and "annotations" in metadata and "meta" in metadata


def _is_tracetui_tool(ctx: Any, name: str) -> bool:
    """Whether the agent's function tool ``name`` is a ``@tracetui.tool`` (which records itself)."""
    agent = getattr(ctx, "agent", None)
    if agent is None:
        return False
    found: list[bool] = []

    def visit(toolset: Any) -> None:
        tools = getattr(toolset, "tools", None)
        if isinstance(tools, dict) and name in tools:
            fn = getattr(tools[name], "function", None)
            found.append(bool(getattr(fn, "__tracetui_tool__", None)))

    try:
        for toolset in agent.toolsets:
            toolset.apply(visit)
    except Exception:  # an agent whose toolsets cannot be listed here: record at this seam
        return False
    return any(found)


def _capability_class() -> type:
    if not _CAPABILITY_CLASS:
        from dataclasses import dataclass

        from pydantic_ai.capabilities import AbstractCapability

        @dataclass
        class TracetuiCapability(AbstractCapability[Any]):
            """A pydantic-ai capability recording and replaying the agent's tool calls through the
            open tracetui session (``wrap_tool_execute``; module docstring). Stateless: one
            instance serves every agent and run."""

            async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: dict[str, Any],
                                        handler: Callable[[dict[str, Any]], Awaitable[Any]]) -> Any:
                return await record_tool_call(ctx, tool_def, args, handler)

        TracetuiCapability.__module__ = __name__
        _CAPABILITY_CLASS.append(TracetuiCapability)
    return _CAPABILITY_CLASS[0]


def capability() -> Any:
    """A ``TracetuiCapability`` for ``Agent(..., capabilities=[capability()])`` or
    ``agent.run(..., capabilities=[...])``: the agent's tool calls go through the session."""
    return _capability_class()()


def __getattr__(name: str) -> Any:  # TracetuiCapability, built when pydantic-ai is first needed
    if name == "TracetuiCapability":
        return _capability_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- patch ------------------------------------------------------------------------------------
def patch() -> bool:
    """Patch pydantic-ai so an unchanged program is recorded (module docstring): OpenAI and
    Anthropic providers built without a client of the program's own use tracetui's transport, and
    every agent's tool calls go through the session. Idempotent.

    Returns:
        False when pydantic-ai is not installed, else True.
    """
    try:
        from pydantic_ai.capabilities import CombinedCapability
    except ImportError:
        return False
    if not _PATCHED.get("tools"):
        _patch_tool_seam(CombinedCapability)
        _PATCHED["tools"] = True
    for module, cls_name, client_arg in (("pydantic_ai.providers.openai", "OpenAIProvider", "openai_client"),
                                         ("pydantic_ai.providers.anthropic", "AnthropicProvider",
                                          "anthropic_client")):
        if not _PATCHED.get(cls_name):
            try:
                cls = getattr(__import__(module, fromlist=[cls_name]), cls_name)
            except ImportError:  # that SDK is not installed
                continue
            _patch_provider(cls, client_arg)
            _PATCHED[cls_name] = True
    return True


def _patch_tool_seam(cls: type) -> None:
    original = cls.wrap_tool_execute  # type: ignore[attr-defined]
    if getattr(original, "__tracetui_patched__", False):
        return

    @functools.wraps(original)
    async def wrap_tool_execute(self: Any, ctx: Any, *, call: Any, tool_def: Any, args: dict[str, Any],
                                handler: Callable[[dict[str, Any]], Awaitable[Any]]) -> Any:
        async def recorded(a: dict[str, Any]) -> Any:
            return await record_tool_call(ctx, tool_def, a, handler)

        return await original(self, ctx, call=call, tool_def=tool_def, args=args, handler=recorded)

    wrap_tool_execute.__tracetui_patched__ = True  # type: ignore[attr-defined]
    cls.wrap_tool_execute = wrap_tool_execute  # type: ignore[attr-defined]


def _patch_provider(cls: type, client_arg: str) -> None:
    original = cls.__init__  # type: ignore[misc]
    if getattr(original, "__tracetui_patched__", False):
        return
    sig = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError:  # let the provider say what is wrong
            return original(self, *args, **kwargs)
        if bound.arguments.get(client_arg) is not None or bound.arguments.get("http_client") is not None:
            return original(self, *args, **kwargs)
        bound.arguments["http_client"] = async_http_client()
        original(*bound.args, **bound.kwargs)

    __init__.__tracetui_patched__ = True  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]
