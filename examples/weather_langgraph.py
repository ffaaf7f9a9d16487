"""A LangGraph ReAct agent on ChatOpenAI, unchanged: record it with
``tracetui record --read-tools get_weather --out rec.jsonl -- python examples/weather_langgraph.py``."""

import warnings

import httpx
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from local_model import api_base

from langgraph.prebuilt import create_react_agent

API = api_base()  # a local scripted model and API unless OPENAI_BASE_URL is set


@tool
def get_weather(city: str) -> dict:
    """Current weather in a city."""
    return httpx.get(f"{API}/weather", params={"city": city}).json()


@tool
def send_report(to: str, body: str) -> dict:
    """E-mail a weather report."""
    return httpx.post(f"{API}/reports", json={"to": to, "body": body}).json()


with warnings.catch_warnings():  # create_react_agent is deprecated for langchain.agents in langgraph 1.x
    warnings.simplefilter("ignore")
    graph = create_react_agent(ChatOpenAI(model="gpt-4o"), [get_weather, send_report],
                               prompt="Report the weather to ops.")
print(graph.invoke({"messages": [("user", "Send ops today's weather.")]})["messages"][-1].content)
