"""A raw ``openai`` loop whose tools come from an MCP server over stdio, unchanged (no tracetui in
it: the recorder sees the model at the HTTP boundary and the tools at ``ClientSession.call_tool``;
the server's ``readOnlyHint`` marks ``get_weather`` a read). Record it with
``tracetui record --out rec.jsonl -- python examples/weather_mcp.py``."""

import asyncio
import json
import sys
from pathlib import Path

import openai
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from local_model import model_base_url

model_base_url()  # a local scripted model unless OPENAI_BASE_URL is set
SERVER = StdioServerParameters(command=sys.executable,
                               args=[str(Path(__file__).resolve().parents[1] / "tests/integrations/mcp_server.py")])


async def main() -> str:
    async with stdio_client(SERVER) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.input_schema}}
                 for t in (await mcp.list_tools()).tools]
        client = openai.AsyncOpenAI()
        messages = [{"role": "user", "content": "Send ops today's weather."}]
        while True:
            reply = await client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                result = await mcp.call_tool(call.function.name, json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": "".join(c.text for c in result.content if c.type == "text")})


print(asyncio.run(main()))
