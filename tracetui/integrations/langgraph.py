"""LangGraph / LangChain: record and replay a graph's tool calls and its ``ChatOpenAI`` model calls.

Two seams, both public in the installed versions (langgraph 1.2, langgraph-prebuilt 1.1,
langchain-openai 1.7):

- **tool calls**: ``langgraph.prebuilt.ToolNode(tools, wrap_tool_call=..., awrap_tool_call=...)``.
  ``wrap_tool_call`` / ``awrap_tool_call`` here send each call (name and args from the
  request's ``tool_call``) through the session's engine: recorded live (the tool runs through
  ToolNode's own ``execute``: argument injection and error handling unchanged), and in replay
  answered from the recording (a read), intercepted (a write) or raised as a divergence, the
  tool never run. ``tool_node(tools, **kw)`` builds such a ToolNode (keeping wrappers of your
  own, ours innermost); ``react_agent(model, tools, **kw)`` is ``create_react_agent`` with it.
- **model calls**: ``ChatOpenAI(http_client=http_client(), http_async_client=async_http_client())``
  (``tracetui.integrations.clients``: the transports of ``tracetui.integrations.transport`` on
  ``httpx2`` when installed, as openai 3 is): Chat Completions or the Responses API, streamed
  (``streaming=True``, ``graph.stream(..., stream_mode="messages")``) or not.
  ``chat_openai(**kw)`` builds one.

``patch()`` makes an unchanged program recorded: every ``ToolNode`` built afterwards gets the
wrappers (so does ``create_react_agent``'s, and ``langchain.agents.create_agent``'s, which
builds a ToolNode too), and every ``ChatOpenAI`` / ``AzureChatOpenAI`` built afterwards without
``http_client`` / ``client`` / ``openai_proxy`` of its own sends its calls through the
transports (its openai clients are copied with ``http_client=`` replaced; every other setting
kept). ``unpatch()`` undoes it.

What is recorded as a tool's output: the ``ToolMessage`` content, as JSON when it is the JSON
ToolNode made of the tool's return value (``{"city": "Paris", ...}``), else the text; a replay
rebuilds the same content, so the model sees the same conversation. A ToolMessage with
``status="error"`` (ToolNode's ``handle_tool_errors``) is recorded as a failed span and replayed
as the same error message. A replay divergence (``UnrecordedCall``...) raised in the wrapper goes
through ToolNode's error handling like any tool error: with the default it ends the run; with
``handle_tool_errors=True`` the agent reads it as an error ToolMessage and goes on. Either way the
divergence is in the session's result.

Tested against langgraph's ``create_react_agent`` and hand-built ``StateGraph``s;
``langchain.agents.create_agent`` (langchain 1.x, not installed here) builds its ToolNode with its
middleware's wrappers, which ``patch()`` keeps outside ours, but that path is untested.

Not covered yet: a tool returning a ``Command`` (state update, ``goto``) or a ToolMessage
``artifact`` is recorded as text and replayed as a plain ToolMessage (the graph's control flow
may differ); tools run outside a ToolNode (called from a node of your own: decorate them with
``@tracetui.tool``); chat models other than ``ChatOpenAI`` / ``AzureChatOpenAI`` (not patched here); a ``ChatOpenAI`` built before
``patch()``, or given its own ``http_client`` (pass ``tracetui.integrations.clients.http_client()``
yourself). Through the patch, ``ChatOpenAI``'s own httpx tuning (socket options, env proxies) is
replaced by a plain httpx transport.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tracetui.core.errors import RecordedToolError
from tracetui.core.harness.ambient import HarnessSession, current_session
from tracetui.core.harness.steps import Steps, arun_steps, run_steps
from tracetui.integrations.clients import async_http_client, http_client

_MARK = "__tracetui_langgraph__"
_ERROR_TYPE = "ToolMessageError"


class ToolMessageError(Exception):
    """A ToolMessage with ``status="error"`` (a tool error ToolNode handled), recorded as a failed
    tool span; its ``str`` is the message content."""


# ---- tool calls: ToolNode's wrap_tool_call seam --------------------------------------------------
def _session() -> HarnessSession | None:
    session = current_session()
    return session if session is not None and session.engine is not None else None


def _traced_elsewhere(tool: Any) -> bool:
    """Whether the tool's function is a ``@tracetui.tool`` (it records itself: never twice)."""
    for attr in ("func", "coroutine"):
        if getattr(getattr(tool, attr, None), "__tracetui_tool__", None):
            return True
    return False


def _call_parts(request: Any) -> tuple[str, dict[str, Any], Any]:
    call = request.tool_call
    args = call.get("args") or {}
    return str(call["name"]), dict(args) if isinstance(args, dict) else {"input": args}, call.get("id")


def _note_schema(session: HarnessSession, name: str, tool: Any) -> None:
    if tool is None:
        return
    try:
        schema: Any = {"description": getattr(tool, "description", ""), "parameters": tool.args}
    except Exception:  # a tool whose schema cannot be built: name only
        schema = {"description": getattr(tool, "description", "")}
    session.saw_tool(name, schema)


def _content_of(output: Any) -> Any:
    """ToolMessage content from a recorded output (the inverse of ``_recordable`` on content): text
and lists (content blocks) as they are, any other JSON value as ToolNode writes it (its JSON text)."""
    from langgraph.prebuilt.tool_node import msg_content_output

    from tracetui.core.diff.envelopes import tool_message_content

    output = tool_message_content(output)  # another tool's trace (OpenInference) records the ToolMessage whole
    return output if isinstance(output, (str, list)) else msg_content_output(output)


def _recordable(result: Any) -> Any:
    """What a tool call's result is recorded as: the ToolMessage content, as JSON when the
    content is exactly the JSON ToolNode would make of it again (so a replay rebuilds it
    byte for byte: a tool's dict, not its list), else as text; a Command (or list) as its text.

    Raises:
        ToolMessageError: the result is a ToolMessage with ``status="error"``.
    """
    from langchain_core.messages import ToolMessage

    if not isinstance(result, ToolMessage):
        return repr(result)
    content = result.content
    if result.status == "error":
        raise ToolMessageError(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    if isinstance(content, str):
        try:
            value = json.loads(content)
        except ValueError:
            return content
        return value if not isinstance(value, str) and _content_of(value) == content else content
    return content


def _message(output: Any, name: str, call_id: Any, status: str = "success") -> Any:
    from langchain_core.messages import ToolMessage

    return ToolMessage(content=_content_of(output), name=name, tool_call_id=call_id, status=status)


def _replayed_error(exc: RecordedToolError, name: str, call_id: Any) -> Any:
    """A recorded ToolMessage error served again as that ToolMessage; any other recorded failure
    is raised as the tool raised it."""
    if exc.error_type != _ERROR_TYPE:
        raise exc
    return _message(exc.message, name, call_id, status="error")


def _tool_call_steps(session: HarnessSession, request: Any, live: Callable[[], Any], held: list[Any]) -> Steps[Any]:
    """The body of ``wrap_tool_call`` and ``awrap_tool_call``, as the engine's step generator
    (driven by ``run_steps`` / ``arun_steps``): ``live`` runs ToolNode's ``execute`` and appends
    its result to ``held``; that result is returned as it is when the tool ran, else the
    replayed ToolMessage."""
    name, args, call_id = _call_parts(request)
    _note_schema(session, name, request.tool)
    try:
        output = yield from session.engine.tool_steps(name, args, None, live)  # type: ignore[union-attr]
    except ToolMessageError:
        if held:
            return held[-1]
        raise
    except RecordedToolError as exc:
        return _replayed_error(exc, name, call_id)
    return held[-1] if held else _message(output, name, call_id)


def wrap_tool_call(request: Any, execute: Callable[[Any], Any]) -> Any:
    """ToolNode's ``wrap_tool_call``: the call recorded or replayed by the open session.

    Args:
        request: ``langgraph.prebuilt.tool_node.ToolCallRequest`` (``tool_call`` with ``name``,
            ``args``, ``id``; ``tool``; ``state``; ``runtime``).
        execute: ToolNode's execute callable (runs the tool; returns a ToolMessage or Command).

    Returns:
        Record mode (or no session): what ``execute`` returned. Replay: a ``ToolMessage`` with the
        recorded output as content and the call's id (a write not in the recording: the
        intercepted result ``{"status": "ok", "simulated": true, "intercepted": true}``).

    Raises:
        UnrecordedCall, RecordingExhausted: replay of a call the recording does not cover (the
        divergence is written to the session first); whatever the tool raised (record mode) or
        ``RecordedToolError`` (replay of a recorded failure).
    """
    session = _session()
    if session is None or _traced_elsewhere(request.tool):
        return execute(request)
    held: list[Any] = []

    def live() -> Any:
        held.append(execute(request))
        return _recordable(held[-1])

    return run_steps(_tool_call_steps(session, request, live, held))


async def awrap_tool_call(request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
    """ToolNode's ``awrap_tool_call``: the async twin of ``wrap_tool_call`` (``execute`` is
    awaited; the event loop never blocks). Same returns and errors."""
    session = _session()
    if session is None or _traced_elsewhere(request.tool):
        return await execute(request)
    held: list[Any] = []

    async def live() -> Any:
        held.append(await execute(request))
        return _recordable(held[-1])

    return await arun_steps(_tool_call_steps(session, request, live, held))


setattr(wrap_tool_call, _MARK, True)
setattr(awrap_tool_call, _MARK, True)


def wrappers(wrap: Callable[..., Any] | None = None,
             awrap: Callable[..., Any] | None = None) -> tuple[Callable[..., Any], Callable[..., Any] | None]:
    """The ``(wrap_tool_call, awrap_tool_call)`` pair to give a ToolNode, around wrappers of your
    own (``wrap`` / ``awrap``, may be None): yours run first (retries, argument changes), ours
    innermost, so what is recorded is what the tool was called with. Given wrappers that
    already include ours are returned as they are.

    With only a sync ``wrap`` of yours, the async wrapper stays None (ToolNode then runs your
    sync wrapper in async graphs, as it would without tracetui).
    """
    if wrap is None:
        new_wrap: Callable[..., Any] = wrap_tool_call
    elif getattr(wrap, _MARK, False):
        new_wrap = wrap
    else:
        user_wrap = wrap

        def new_wrap(request: Any, execute: Callable[[Any], Any]) -> Any:
            return user_wrap(request, lambda req: wrap_tool_call(req, execute))

        setattr(new_wrap, _MARK, True)
    if awrap is None:
        new_awrap: Callable[..., Any] | None = awrap_tool_call if wrap is None else None
    elif getattr(awrap, _MARK, False):
        new_awrap = awrap
    else:
        user_awrap = awrap

        async def new_awrap(request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
            return await user_awrap(request, lambda req: awrap_tool_call(req, execute))

        setattr(new_awrap, _MARK, True)
    return new_wrap, new_awrap


def tool_node(tools: Sequence[Any], **kwargs: Any) -> Any:
    """``langgraph.prebuilt.ToolNode(tools, **kwargs)`` whose tool calls are recorded and replayed
    (``wrap_tool_call`` / ``awrap_tool_call`` of ``kwargs`` kept, see ``wrappers``)."""
    from langgraph.prebuilt import ToolNode

    wrap, awrap = wrappers(kwargs.pop("wrap_tool_call", None), kwargs.pop("awrap_tool_call", None))
    return ToolNode(tools, wrap_tool_call=wrap, awrap_tool_call=awrap, **kwargs)


def react_agent(model: Any, tools: Sequence[Any] | Any, **kwargs: Any) -> Any:
    """``langgraph.prebuilt.create_react_agent(model, tool_node(tools), **kwargs)`` (the prebuilt
    agent of langgraph 1.x, deprecated there in favour of ``langchain.agents.create_agent``; its
    deprecation warning is silenced here). ``tools`` may be a ToolNode already (used as is)."""
    import warnings

    from langgraph.prebuilt import ToolNode, create_react_agent

    node = tools if isinstance(tools, ToolNode) else tool_node(list(tools))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="create_react_agent has been moved")
        return create_react_agent(model, node, **kwargs)


# ---- model calls: ChatOpenAI's http clients --------------------------------------------------------
def chat_openai(**kwargs: Any) -> Any:
    """``langchain_openai.ChatOpenAI(**kwargs)`` whose model calls are recorded and replayed
    (``http_client`` / ``http_async_client`` are tracetui's transports unless given)."""
    from langchain_openai import ChatOpenAI

    kwargs.setdefault("http_client", http_client())
    kwargs.setdefault("http_async_client", async_http_client())
    return ChatOpenAI(**kwargs)


def _route_clients(model: Any, given: dict[str, Any]) -> None:
    """Point a just-built ChatOpenAI's default openai clients at tracetui's transports (the
    clients copied with ``http_client`` replaced), unless the caller chose its own."""
    given = {k: v for k, v in given.items() if v is not None}
    if given.get("openai_proxy"):
        return
    if not ({"client", "root_client", "http_client"} & given.keys()) and model.root_client is not None:
        model.root_client = model.root_client.copy(http_client=http_client())
        model.client = model.root_client.chat.completions
    if not ({"async_client", "root_async_client", "http_async_client"} & given.keys()) \
            and model.root_async_client is not None:
        model.root_async_client = model.root_async_client.copy(http_client=async_http_client())
        model.async_client = model.root_async_client.chat.completions


# ---- patch ----------------------------------------------------------------------------------------
_ORIGINAL: dict[str, tuple[type, Any, bool]] = {}
"""What ``patch()`` replaced: key -> (class, original ``__init__``, whether the class defined it)."""


def _patch_init(key: str, cls: type, after: Callable[[Any, dict[str, Any]], None] | None = None,
                before: Callable[[dict[str, Any]], None] | None = None) -> None:
    if key in _ORIGINAL:
        return
    original = cls.__init__  # type: ignore[misc]
    own = "__init__" in cls.__dict__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if before is not None:
            before(kwargs)
        given = dict(kwargs)
        original(self, *args, **kwargs)
        if after is not None:
            after(self, given)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    _ORIGINAL[key] = (cls, original, own)
    cls.__init__ = __init__  # type: ignore[misc]


def _with_wrappers(kwargs: dict[str, Any]) -> None:
    kwargs["wrap_tool_call"], kwargs["awrap_tool_call"] = wrappers(kwargs.get("wrap_tool_call"),
                                                                   kwargs.get("awrap_tool_call"))


def patch() -> bool:
    """Record an unchanged LangGraph / LangChain program: every ``ToolNode`` and ``ChatOpenAI``
    (and subclasses: ``AzureChatOpenAI``) built from now on is recorded (module docstring).
    Idempotent.

    Returns:
        False when neither langgraph nor langchain-openai is installed, else True.
    """
    found = False
    try:
        from langgraph.prebuilt import ToolNode
    except ImportError:
        pass
    else:
        found = True
        _patch_init("ToolNode", ToolNode, before=_with_wrappers)
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:
        pass
    else:
        found = True
        _patch_init("BaseChatOpenAI", BaseChatOpenAI, after=_route_clients)
    return found


def unpatch() -> None:
    """Undo ``patch()`` (objects built meanwhile keep their wrappers and clients)."""
    for key in list(_ORIGINAL):
        cls, original, own = _ORIGINAL.pop(key)
        if own:
            cls.__init__ = original  # type: ignore[misc]
        else:
            del cls.__init__  # type: ignore[misc]
