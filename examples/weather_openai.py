"""A hand-rolled loop over the ``openai`` client. Its tools are plain functions, which a recorder
at the HTTP boundary cannot see: ``@tracetui.tool`` makes them tool spans (it does nothing
outside a tracetui session). Record it with
``tracetui record --read-tools get_weather --out rec.jsonl -- python examples/weather_openai.py``."""

import json

import httpx
import openai

import tracetui
from local_model import api_base

API = api_base()  # a local scripted model and API unless OPENAI_BASE_URL is set


@tracetui.tool
def get_weather(city: str) -> dict:
    """Current weather in a city."""
    return httpx.get(f"{API}/weather", params={"city": city}).json()


@tracetui.tool
def send_report(to: str, body: str) -> dict:
    """E-mail a weather report."""
    return httpx.post(f"{API}/reports", json={"to": to, "body": body}).json()


def schema(name: str, **params: str) -> dict:
    props = {p: {"type": "string"} for p in params}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


TOOLS = [schema("get_weather", city="str"), schema("send_report", to="str", body="str")]
client = openai.OpenAI()
messages = [{"role": "system", "content": "Report the weather to ops."},
            {"role": "user", "content": "Send ops today's weather."}]
while True:
    message = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS).choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    if not message.tool_calls:
        break
    for call in message.tool_calls:
        out = {"get_weather": get_weather, "send_report": send_report}[call.function.name](
            **json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(out)})
print(message.content)
