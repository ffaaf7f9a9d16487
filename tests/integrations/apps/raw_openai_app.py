"""An unchanged raw ``openai`` agent: a chat loop over ``openai.OpenAI()`` with two tools that
call a production API (the test server's ``/api`` endpoints, base URL from ``OPENAI_BASE_URL``).

The only tracetui in it is ``@tracetui.tool`` on the tool functions (a no-op outside a session):
a plain function is invisible to the recorder, which sees model calls at the HTTP boundary but
not the program's own function calls. Which tool is a read comes from the command line
(``tracetui record --read-tools get_weather -- python raw_openai_app.py``).

    python raw_openai_app.py [--stream] [QUESTION]
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx
import openai

import tracetui

BASE = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1").rstrip("/").removesuffix("/v1")

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "send_report", "description": "Send a report by e-mail.",
                                      "parameters": {"type": "object", "properties": {
                                          "to": {"type": "string"}, "body": {"type": "string"}},
                                          "required": ["to", "body"]}}},
]


@tracetui.tool
def get_weather(city: str) -> dict:
    return httpx.get(f"{BASE}/api/weather", params={"city": city}).json()


@tracetui.tool
def send_report(to: str, body: str) -> dict:
    return httpx.post(f"{BASE}/api/reports", json={"to": to, "body": body}).json()


FUNCTIONS = {"get_weather": get_weather, "send_report": send_report}


def main(question: str = "Report the weather", *, stream: bool = False) -> str:
    client = openai.OpenAI(max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a weather bot."},
                                      {"role": "user", "content": question}]
    for _ in range(6):
        if stream:
            with client.chat.completions.stream(model="gpt-test", messages=messages, tools=TOOLS) as s:
                for _event in s:
                    pass
                response = s.get_final_completion()
        else:
            response = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            out = FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out)})
    raise RuntimeError("the model never stopped calling tools")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--stream"]
    print(main(args[0] if args else "Report the weather", stream="--stream" in sys.argv))
