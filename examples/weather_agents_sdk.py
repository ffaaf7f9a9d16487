"""An OpenAI Agents SDK agent, unchanged: record it with
``tracetui record --read-tools get_weather --out rec.jsonl -- python examples/weather_agents_sdk.py``."""

import httpx
from agents import Agent, Runner, function_tool

from local_model import api_base

API = api_base()  # a local scripted model and API unless OPENAI_BASE_URL is set


@function_tool
def get_weather(city: str) -> dict:
    """Current weather in a city."""
    return httpx.get(f"{API}/weather", params={"city": city}).json()


@function_tool
def send_report(to: str, body: str) -> dict:
    """E-mail a weather report."""
    return httpx.post(f"{API}/reports", json={"to": to, "body": body}).json()


agent = Agent(name="weather", instructions="Report the weather to ops.", tools=[get_weather, send_report])
print(Runner.run_sync(agent, "Send ops today's weather.").final_output)
