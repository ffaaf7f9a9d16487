"""MCP clients: every ``tools/call`` an MCP client makes, recorded and replayed at one choke point.

Every framework that uses MCP tools (the OpenAI Agents SDK's ``MCPServer*``, pydantic-ai's MCP
toolsets, LangChain's MCP adapters, ``mcp.Client``, ``ClientSessionGroup``, a hand-written
client) ends in ``mcp.ClientSession.call_tool(name, arguments)``. ``patch()`` wraps it at the
class level (idempotent), so an unchanged program is covered whatever it is built on::

    import tracetui
    from tracetui.integrations import mcp as tracetui_mcp

    tracetui_mcp.patch()
    with tracetui.record(out="rec.jsonl"):
        asyncio.run(my_agent())          # its MCP tool calls are tool spans

Inside a session (``tracetui.record`` / ``tracetui.replay``; none open: the call is untouched)
each ``call_tool`` is a tool span named after the MCP tool, with its arguments:

- **record**: sent to the server; the span's output is the ``CallToolResult`` as JSON
  (``model_dump(mode="json", by_alias=True, exclude_none=True)``), the program gets the real result;
- **replay**, a read: the recorded result, rebuilt as a ``CallToolResult`` (an
  ``InputRequiredResult`` when that is what was recorded); a call the recording does not hold is
  an ``UnrecordedCall`` naming the nearest recorded calls;
- **replay**, a write: intercepted — the recorded result of the same write, else a simulated
  success (a ``CallToolResult`` whose text and ``structuredContent`` are
  ``{"status": "ok", "simulated": true, "intercepted": true}``).

Which tools are reads: the session's read list (``read_tools``, ``@tracetui.tool(read=True)``,
``[tool.tracetui] read_tools``, the recording's), plus tools the server annotates
``readOnlyHint: true`` in a ``tools/list`` answer (``ClientSession.list_tools`` is wrapped too and
every hint it sees is remembered for the process). A hint comes from the server and the MCP spec
says not to trust it: it is taken through ``session.hinted_read`` (noted in the run report and
the header's ``hinted_read_tools``), so the tool is served from the recording in replay, and a
hinted read is **never sent live** in replay, not even a loose-mode miss with ``allow_live``:
only tools the user put on the read list may reach a live system.

What this cannot cover yet:

- **The server process still starts in replay.** With the stdio transport the program spawns
  the server and exchanges ``initialize`` and ``tools/list`` with it (not recorded: they change
  nothing); it never receives a ``tools/call``. An HTTP transport (streamable HTTP, SSE) cannot
  connect at all in replay: the socket guard refuses it, so such a program must be replayed with
  its MCP session never opened, which needs the program's cooperation. The socket guard does
  not see the server subprocess (stdio uses pipes, which the guard allows).
- A framework integration that wraps its own MCP layer above this one (records the call
  itself) and lets it reach ``call_tool`` too would make two spans per call: MCP calls are left
  to this module. Nested ``call_tool`` calls (a wrapper session calling another) are recorded once,
  the outermost.
- A call that raised when recorded (an ``McpError``, a timeout) raises ``RecordedToolError`` in
  replay, not the original exception class; a result with ``isError: true`` replays as recorded.
- The replayed result is not re-validated against the tool's output schema; resources,
  prompts, sampling and elicitation requests are not recorded.
"""

from __future__ import annotations

import contextvars
import functools
import json
from typing import Any

from tracetui.core.harness.ambient import HarnessSession, current_session

SOURCE = "MCP server"
"""Named in the run report's note when a ``readOnlyHint`` is taken (``session.hinted_read``)."""

SIMULATED = {"status": "ok", "simulated": True, "intercepted": True}

_HINTS: dict[str, bool] = {}
"""Tool name -> the ``readOnlyHint`` last seen for it in a ``tools/list`` answer, this process."""

_IN_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("tracetui_mcp_in_call", default=False)
_PATCHED = False


def patch() -> bool:
    """Wrap ``mcp.ClientSession.call_tool`` and ``list_tools`` so every MCP tool call of this
    process is recorded and replayed inside a tracetui session. Idempotent.

    Returns:
        True when ``mcp`` is installed (and is now patched), False when it is not.
    """
    global _PATCHED
    try:
        from mcp.client.session import ClientSession
    except ImportError:
        return False
    if _PATCHED or getattr(ClientSession.call_tool, "__tracetui_patched__", False):
        _PATCHED = True
        return True
    ClientSession.call_tool = _wrap_call_tool(ClientSession.call_tool)  # type: ignore[method-assign]
    ClientSession.list_tools = _wrap_list_tools(ClientSession.list_tools)  # type: ignore[method-assign]
    _PATCHED = True
    return True


def read_only_hints() -> dict[str, bool]:
    """The ``readOnlyHint`` of every tool seen in a ``tools/list`` answer so far (a copy)."""
    return dict(_HINTS)


def _wrap_list_tools(original: Any) -> Any:
    @functools.wraps(original)
    async def list_tools(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = await original(self, *args, **kwargs)
        try:
            note_tools(getattr(result, "tools", None) or [])
        except Exception:  # a listing tracetui cannot read is the program's business, not ours
            pass
        return result

    list_tools.__tracetui_patched__ = True  # type: ignore[attr-defined]
    return list_tools


def note_tools(tools: Any) -> None:
    """Remember the ``readOnlyHint`` of each ``mcp.types.Tool`` in ``tools``; inside a session,
    note each tool's input schema (``session.saw_tool``) and take hinted reads
    (``session.hinted_read``)."""
    session = _session()
    for tool in tools:
        name = getattr(tool, "name", None)
        if not isinstance(name, str):
            continue
        annotations = getattr(tool, "annotations", None)
        hint = getattr(annotations, "read_only_hint", None) if annotations is not None else None
        _HINTS[name] = hint is True
        if session is not None:
            session.saw_tool(name, _schema(tool))
            if hint is True:
                session.hinted_read(name, SOURCE)


def _wrap_call_tool(original: Any) -> Any:
    @functools.wraps(original)
    async def call_tool(self: Any, name: str, arguments: dict[str, Any] | None = None, *args: Any,
                        **kwargs: Any) -> Any:
        session = _session()
        if session is None or _IN_CALL.get():
            return await original(self, name, arguments, *args, **kwargs)
        if _HINTS.get(name):
            session.hinted_read(name, SOURCE)
        live_result: list[Any] = []

        async def live() -> Any:
            token = _IN_CALL.set(True)
            try:
                result = await original(self, name, arguments, *args, **kwargs)
            finally:
                _IN_CALL.reset(token)
            live_result.append(result)
            return dump_result(result)

        hinted = name in _hinted_reads(session)
        call = live if session.mode == "record" or not hinted else None
        output = await session.engine.atool(name, dict(arguments or {}), None, call)
        if live_result:
            return live_result[0]
        return build_result(output)

    call_tool.__tracetui_patched__ = True  # type: ignore[attr-defined]
    return call_tool


def dump_result(result: Any) -> Any:
    """A ``CallToolResult`` (or any MCP result model) as the JSON recorded for it."""
    dump = getattr(result, "model_dump", None)
    if dump is None:
        return result
    return dump(mode="json", by_alias=True, exclude_none=True)


def build_result(output: Any) -> Any:
    """The MCP result a replay hands the program for a recorded output: a ``CallToolResult``
    (an ``InputRequiredResult`` when ``resultType`` says so). A recorded output that is not an
    MCP result (a simulated write: ``SIMULATED``) becomes a ``CallToolResult`` carrying it as text
    and as ``structuredContent``."""
    from mcp import types

    if isinstance(output, dict) and output.get("resultType") == "input_required":
        return types.InputRequiredResult.model_validate(output)
    if isinstance(output, dict) and "content" in output:
        try:
            return types.CallToolResult.model_validate(output)
        except Exception:  # recorded by another mcp version: carry it as text
            pass
    text = output if isinstance(output, str) else json.dumps(output, sort_keys=True)
    structured = output if isinstance(output, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured,
                                is_error=False)


def _hinted_reads(session: HarnessSession) -> set[str]:
    """Tools the recording took as reads on a hint only (its header's ``hinted_read_tools``): in
    replay they are never given a live call. (A hint taken in this session, on no read list, is
    not on the explicit list, so the engine never sends it live either.)"""
    recording = session.recording
    recorded = recording.header.get("hinted_read_tools") if recording is not None else None
    return {str(n) for n in recorded} if isinstance(recorded, list) else set()


def _schema(tool: Any) -> Any:
    schema = getattr(tool, "input_schema", None)
    if schema is None:
        schema = getattr(tool, "inputSchema", None)
    return {"description": getattr(tool, "description", None), "input_schema": schema}


def _session() -> HarnessSession | None:
    session = current_session()
    return session if session is not None and session.engine is not None else None
