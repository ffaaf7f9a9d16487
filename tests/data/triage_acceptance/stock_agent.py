"""A held-out stock-and-price agent for the triage acceptance tests, written only against docs/harness.md.

Kestrel Cycles' shop assistant answers "can I buy SKU X?": a scripted model asks ``get_stock``, then
``get_price`` when something is available, and answers; the agent records the outcome with ``ctx.decide``.
The live inventory is ``./warehouse.json`` (``{"on_hand", "backorder"}``) when the current folder has one, so a
test moves the data between runs; ``FIXTURE`` seeds a store from the recorded reads and lets ``--seed-file``
override the stock (the current data).

- ``run``: prompt ``shop.system`` v2, which does not mention backorders: the model quotes stock that is all
  on backorder (the same bad answer every time it sees that data).
- ``run_v3``: prompt v3, "stock on backorder is not available": the model refuses instead (a prompt change).
- ``run_unversioned``: no prompt version recorded anywhere (an instrumentation gap).
"""

from __future__ import annotations

import json
from typing import Any

AGENT_NAME = "kestrel-shop"
CODE_VERSION = "acc-1"
MODEL_NAME = "scripted-shop"
MODEL_INFO = {"id": MODEL_NAME, "version": "rules-1", "provider": "acceptance"}
SYSTEM = "You are Kestrel Cycles' shop assistant. Check stock before quoting a price."
PROMPTS = {"shop.system": {"version": "v2", "text": SYSTEM}}
READ_TOOLS = {"get_stock", "get_price"}
TOOL_SCHEMAS = {"get_stock": {"type": "object", "properties": {"sku": {"type": "string"}}},
                "get_price": {"type": "object", "properties": {"sku": {"type": "string"}}}}

PRICES = {"BK-700": 1299.0}
V3 = SYSTEM + " Stock on backorder is not available."


def _get_stock(sku: str) -> dict[str, Any]:
    try:
        with open("warehouse.json", encoding="utf-8") as f:
            row = json.load(f)
    except FileNotFoundError:
        row = {"on_hand": 4, "backorder": 0}
    return {"sku": sku, **row}


def _get_price(sku: str) -> dict[str, Any]:
    return {"sku": sku, "price": PRICES[sku], "currency": "EUR"}


TOOLS = {"get_stock": _get_stock, "get_price": _get_price}


class StockFixture:
    """Answers reads from the recording, then from ``--seed-file`` ``{"stock": {sku: {...}}}``."""

    def __init__(self) -> None:
        self.stock: dict[str, Any] = {}
        self.prices: dict[str, Any] = {}

    def seed(self, tool: str, arguments: dict[str, Any], output: Any) -> None:
        (self.stock if tool == "get_stock" else self.prices)[arguments["sku"]] = output

    def load(self, seed: dict[str, Any]) -> None:
        for sku, row in seed.get("stock", {}).items():
            self.stock[sku] = {"sku": sku, **row}

    def call(self, tool: str, arguments: dict[str, Any], *, write: bool) -> Any:
        if tool == "get_price" and arguments["sku"] in PRICES:  # the catalogue is static
            return self.prices.get(arguments["sku"], _get_price(arguments["sku"]))
        table = self.stock if tool == "get_stock" else self.prices
        if arguments["sku"] not in table:
            raise LookupError(arguments["sku"])
        return table[arguments["sku"]]

    def state(self) -> dict[str, Any]:
        return {"stock": self.stock, "prices": self.prices}


FIXTURE = StockFixture


def _model(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:
    sku = messages[1]["content"].split()[-1].rstrip("?")
    seen = {m["tool_call_id"]: json.loads(m["content"]) for m in messages if m["role"] == "tool"}
    stock = seen.get("c-stock")
    if stock is None:
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "c-stock", "name": "get_stock", "arguments": {"sku": sku}}]}
    available = stock["on_hand"] - (stock["backorder"] if "backorder" in messages[0]["content"] else 0)
    if available <= 0:
        return {"role": "assistant", "content": f"Sorry, {sku} is out of stock.", "tool_calls": []}
    price = seen.get("c-price")
    if price is None:
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "c-price", "name": "get_price", "arguments": {"sku": sku}}]}
    return {"role": "assistant", "content": f"{sku} is in stock at {price['price']} EUR.", "tool_calls": []}


MODEL = _model


def _run(ctx: Any, input: dict[str, Any], version: str | None, system: str = SYSTEM) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": f"Can I buy {input['sku']}?"}]
    kw = {"prompt_id": "shop.system", "prompt_version": version} if version else {}
    for _turn in range(4):
        reply = ctx.llm(messages, model=MODEL_NAME, temperature=0, **kw)
        messages.append(reply)
        if not reply.get("tool_calls"):
            break
        for call in reply["tool_calls"]:
            result = ctx.tool(call["name"], call["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result, sort_keys=True)})
    outcome = "quoted" if "in stock" in (reply["content"] or "") else "refused"
    ctx.decide("quote_outcome", outcome, options=["quoted", "refused"])
    return {"message": reply["content"], "outcome": outcome}


def run(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    return _run(ctx, input, "v2")


def run_v3(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    return _run(ctx, input, "v3", V3)


run_v3.PROMPTS = {"shop.system": {"version": "v3", "text": V3}}  # type: ignore[attr-defined]


def run_unversioned(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    return _run(ctx, input, None)


run_unversioned.PROMPTS = {}  # type: ignore[attr-defined]
