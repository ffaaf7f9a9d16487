"""An unchanged MCP agent: a raw ``openai`` chat loop whose tools come from an MCP server over stdio.

It knows nothing of tracetui. The model is ``openai.AsyncOpenAI()`` (base URL from
``OPENAI_BASE_URL``); the tools are those ``tests/integrations/mcp_server.py`` lists
(``get_weather``, annotated ``readOnlyHint``, and ``send_report``), called with
``ClientSession.call_tool``. The server logs each live call to ``$TRACETUI_TEST_MCP_LOG``.

    python mcp_app.py [--stream] [QUESTION]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import openai
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = Path(__file__).resolve().parent.parent / "mcp_server.py"


def server_params() -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k == "TRACETUI_TEST_MCP_LOG"}
    return StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=env)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def main(question: str = "Report the weather", *, stream: bool = False, client: Any = None) -> str:
    client = client or openai.AsyncOpenAI(max_retries=0)
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as mcp:
            await mcp.initialize()
            listed = await mcp.list_tools()
            tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                       "parameters": t.input_schema}} for t in listed.tools]
            messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a weather bot."},
                                              {"role": "user", "content": question}]
            for _ in range(6):
                if stream:
                    async with client.chat.completions.stream(model="gpt-test", messages=messages,
                                                              tools=tools) as s:
                        async for _event in s:
                            pass
                        response = await s.get_final_completion()
                else:
                    response = await client.chat.completions.create(model="gpt-test", messages=messages,
                                                                    tools=tools)
                message = response.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content or ""
                for call in message.tool_calls:
                    result = await mcp.call_tool(call.function.name, json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": _text(result)})
    raise RuntimeError("the model never stopped calling tools")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--stream"]
    print(asyncio.run(main(args[0] if args else "Report the weather", stream="--stream" in sys.argv)))
