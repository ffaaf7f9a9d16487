"""A real MCP server over stdio for the integration tests.

Run it as ``python tests/integrations/mcp_server.py`` (the tests spawn it with
``mcp.client.stdio.stdio_client``). It is built on ``mcp.server.mcpserver.MCPServer``
(mcp 2.x's name for v1's ``FastMCP``) and serves two tools:

* ``get_weather(city: str)`` -- a read tool, annotated ``readOnlyHint=True``.
  Returns ``"<city>: 18C, cloudy"``.
* ``send_report(to: str, body: str)`` -- a write tool, annotated
  ``destructiveHint=True`` (and ``readOnlyHint=False``). Returns
  ``"queued report <n> to <to>"`` where ``<n>`` is a fresh id per call.

Every live call appends one JSON line ``{"tool", "arguments", "pid", "ts"}`` to
the file named by the env var ``TRACETUI_TEST_MCP_LOG`` (if set), so a test can
count how many calls really reached the server (e.g. zero on a pure replay).

Keep this file free of project imports: it runs as a separate process with only
the venv's packages.
"""

from __future__ import annotations

import json
import os
import time
import uuid

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

LOG_ENV = "TRACETUI_TEST_MCP_LOG"

server = MCPServer(name="tracetui-test-weather", version="0.1.0")


def _log(tool: str, arguments: dict) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    line = json.dumps({"tool": tool, "arguments": arguments, "pid": os.getpid(), "ts": time.time()})
    # One write per line, opened in append mode: concurrent servers don't interleave lines.
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


@server.tool(
    description="Current weather for a city (read-only).",
    annotations=ToolAnnotations(title="Get weather", read_only_hint=True),
)
def get_weather(city: str) -> str:
    _log("get_weather", {"city": city})
    return f"{city}: 18C, cloudy"


@server.tool(
    description="Send a report by e-mail (has side effects).",
    annotations=ToolAnnotations(title="Send report", read_only_hint=False, destructive_hint=True),
)
def send_report(to: str, body: str) -> str:
    _log("send_report", {"to": to, "body": body})
    return f"queued report {uuid.uuid4().hex[:12]} to {to}"


if __name__ == "__main__":
    server.run("stdio")
