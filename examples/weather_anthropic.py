"""A hand-rolled loop over the ``anthropic`` client (Messages API, streamed), tools made tool spans
with ``@tracetui.tool``. Record it with
``tracetui record --read-tools get_weather --out rec.jsonl -- python examples/weather_anthropic.py``."""

import httpx
import anthropic

import tracetui
from local_model import api_base

API = api_base()  # a local scripted model and API unless ANTHROPIC_BASE_URL / OPENAI_BASE_URL is set


@tracetui.tool
def get_weather(city: str) -> dict:
    """Current weather in a city."""
    return httpx.get(f"{API}/weather", params={"city": city}).json()


@tracetui.tool
def send_report(to: str, body: str) -> dict:
    """E-mail a weather report."""
    return httpx.post(f"{API}/reports", json={"to": to, "body": body}).json()


def schema(name: str, *params: str) -> dict:
    return {"name": name, "input_schema": {"type": "object", "properties": {p: {"type": "string"} for p in params}}}


client = anthropic.Anthropic()
messages: list = [{"role": "user", "content": "Send ops today's weather."}]
while True:
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=1024, system="Report the weather to ops.",
                                messages=messages, tools=[schema("get_weather", "city"),
                                                          schema("send_report", "to", "body")]) as stream:
        reply = stream.get_final_message()
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
    uses = [b for b in reply.content if b.type == "tool_use"]
    if not uses:
        break
    tools = {"get_weather": get_weather, "send_report": send_report}
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": u.id, "content": str(tools[u.name](**u.input))} for u in uses]})
print("".join(b.text for b in reply.content if b.type == "text"))
