"""A pydantic-ai agent, unchanged: record it with
``tracetui record --read-tools get_weather --out rec.jsonl -- python examples/weather_pydantic_ai.py``."""

import httpx
from pydantic_ai import Agent

from local_model import api_base

API = api_base()  # a local scripted model and API unless OPENAI_BASE_URL is set
agent = Agent("openai:gpt-4o", instructions="Report the weather to ops.")


@agent.tool_plain
def get_weather(city: str) -> dict:
    """Current weather in a city."""
    return httpx.get(f"{API}/weather", params={"city": city}).json()


@agent.tool_plain
def send_report(to: str, body: str) -> dict:
    """E-mail a weather report."""
    return httpx.post(f"{API}/reports", json={"to": to, "body": body}).json()


print(agent.run_sync("Send ops today's weather.").output)
