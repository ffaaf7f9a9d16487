"""A held-out refunds agent for the golden-set acceptance tests, written only against docs/harness.md.

Harbor Outfitters' support assistant refunds a broken order. A scripted model asks ``get_customer`` and
``list_orders`` (a large read: the whole order history, > 50 KB), then refunds. The customer typed the order id
as ``0RD-5521`` (a zero, not the letter O): the malformed identifier of the incident.

- ``run`` (prompt ``refunds.system`` v4, the incident): copies the id the customer typed into ``issue_refund``,
  retries the failed refund once, then tells the customer the refund was issued (an unsupported success claim).
- ``run_fixed`` (v5): uses the id as ``list_orders`` lists it, verifies it with ``get_order`` (a read the incident
  never made), refunds once and claims success only on a ``status: refunded`` receipt.

Tool outputs hold PII and a secret (email, card number, an ``sk-proj-`` key, the declared sensitive
``date_of_birth``). After answering, the agent fetches a help article (a retrieval off the causal path, which
promotion drops). ``FIXTURE`` rebuilds the order book from the recorded reads for ``--mode fixture``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

AGENT_NAME = "harbor-refunds"
CODE_VERSION = "acc-1"
MODEL_NAME = "scripted-refunds"
MODEL_INFO = {"id": MODEL_NAME, "version": "rules-1", "provider": "acceptance"}
V4 = ("You are Harbor Outfitters' refunds assistant. Customer: {customer_id}. Refund the order the customer "
      "names for its full amount. If a tool call fails, retry it once.")
V5 = ("You are Harbor Outfitters' refunds assistant. Customer: {customer_id}. Use the order id exactly as "
      "list_orders lists it and verify it with get_order before refunding. Say a refund was issued only after "
      "issue_refund returned status refunded.")
PROMPTS = {"refunds.system": {"version": "v4", "text": V4}}
READ_TOOLS = {"get_customer", "list_orders", "get_order"}
SENSITIVE_FIELDS = {"get_customer": ["date_of_birth"]}
TOOL_SCHEMAS = {
    "get_customer": {"type": "object", "properties": {"customer_id": {"type": "string"}}},
    "list_orders": {"type": "object", "properties": {"customer_id": {"type": "string"}}},
    "get_order": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    "issue_refund": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                     "amount_cents": {"type": "integer"}}},
}

EMAIL = "ann.lee@example.com"
CARD = "4111 1111 1111 1111"
API_KEY = "sk-proj-Zq8mT3vLx9Rk2PwA7nB4cD6eF1gH5jK0"
DOB = "1984-07-12"
BAD_ID = "0RD-5521"
ORDER_ID = "ORD-5521"


def _history() -> list[dict[str, Any]]:
    """Three hundred delivered orders (about 60 KB of JSON): the large read."""
    return [{"order_id": f"ORD-{5300 + i}", "amount_cents": 4200 if 5300 + i == 5521 else 1000 + i,
             "status": "delivered",
             "items": "waxed canvas jacket, size M, colour olive; wool beanie; trail socks x3; " * 2}
            for i in range(300)]


class Shop:
    """The four tools over one state dict. Live: ``TOOLS``; fixture mode: ``FIXTURE``."""

    def __init__(self, world: dict[str, Any]) -> None:
        self.world = world

    def get_customer(self, customer_id: str) -> dict[str, Any]:
        return copy.deepcopy(self.world["customers"][customer_id])

    def list_orders(self, customer_id: str) -> dict[str, Any]:
        return {"customer_id": customer_id, "orders": copy.deepcopy(list(self.world["orders"].values()))}

    def get_order(self, order_id: str) -> dict[str, Any]:
        return copy.deepcopy(self.world["orders"][order_id])

    def issue_refund(self, order_id: str, amount_cents: int, idempotency_key: str | None = None) -> dict[str, Any]:
        if order_id not in self.world["orders"]:
            raise ValueError(f"unknown order id {order_id!r}")
        self.world["orders"][order_id]["status"] = "refunded"
        return {"status": "refunded", "refund_id": f"RF-{order_id[4:]}", "amount_cents": amount_cents}


def initial_world() -> dict[str, Any]:
    customer = {"customer_id": "CUS-1001", "name": "Ann Lee", "email": EMAIL, "card_on_file": CARD,
                "date_of_birth": DOB, "note": f"legacy integration key {API_KEY} (rotate)"}
    return {"customers": {"CUS-1001": customer}, "orders": {o["order_id"]: o for o in _history()}}


_LIVE = Shop(initial_world())
TOOLS = {name: getattr(_LIVE, name) for name in TOOL_SCHEMAS}


def _help_articles(query: str, top_k: int = 2) -> list[dict[str, Any]]:
    return [{"id": "KB-12", "title": "How refunds reach your card"}][:top_k]


RETRIEVERS = {"help_articles": _help_articles}


class ShopFixture(Shop):
    def __init__(self) -> None:
        super().__init__({"customers": {}, "orders": {}})

    def seed(self, tool: str, arguments: dict[str, Any], output: Any) -> None:
        if tool == "get_customer":
            self.world["customers"][arguments["customer_id"]] = copy.deepcopy(output)
        elif tool == "list_orders":
            self.world["orders"] = {o["order_id"]: copy.deepcopy(o) for o in output["orders"]}

    def load(self, seed: dict[str, Any]) -> None:
        self.world.update(copy.deepcopy(seed))

    def call(self, tool: str, arguments: dict[str, Any], *, write: bool) -> Any:
        if tool == "retrieval:help_articles":
            return _help_articles(**arguments)
        try:
            return getattr(self, tool)(**arguments)
        except KeyError as exc:
            raise LookupError(str(exc)) from exc

    def state(self) -> dict[str, Any]:
        return self.world


FIXTURE = ShopFixture


def _ask(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"call_{n}_{name}", "name": name, "arguments": arguments}]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "tool_calls": []}


def scripted_model(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:
    """Deterministic stand-in for the LLM: reads the rendered messages, returns the assistant message."""
    system, user = messages[0]["content"], messages[1]["content"]
    fixed = "verify it with get_order" in system
    results: list[tuple[str, Any]] = []
    names = {c["id"]: c["name"] for m in messages for c in (m.get("tool_calls") or [])}
    for m in messages:
        if m["role"] == "tool":
            results.append((names[m["tool_call_id"]], json.loads(m["content"])))
    got = dict(results)
    n = len(messages)
    customer = re.search(r"Customer: (\S+?)\.", system).group(1)
    if "get_customer" not in got:
        return _ask(n, "get_customer", {"customer_id": customer})
    if "list_orders" not in got:
        return _ask(n, "list_orders", {"customer_id": customer})
    typed = re.search(r"[0O]RD-\d+", user).group(0)
    listed = next(o for o in got["list_orders"]["orders"] if o["order_id"][4:] == typed[4:])
    order_id = listed["order_id"] if fixed else typed
    if fixed and "get_order" not in got:
        return _ask(n, "get_order", {"order_id": order_id})
    if fixed and "error" in got["get_order"]:
        return _say("I couldn't find that order; could you check the order number?")
    refunds = [out for name, out in results if name == "issue_refund"]
    args = {"order_id": order_id, "amount_cents": listed["amount_cents"], "idempotency_key": f"refund-{order_id}"}
    if not refunds or (not fixed and len(refunds) < 2 and "error" in refunds[-1]):
        return _ask(n, "issue_refund", args)
    amount = f"{listed['amount_cents'] / 100:.2f} USD"
    if fixed and refunds[-1].get("status") != "refunded":
        return _say(f"I couldn't process the refund for {order_id}; a colleague will follow up.")
    return _say(f"Your refund of {amount} for order {order_id} has been issued.")


MODEL = scripted_model


def _run(ctx: Any, input: dict[str, Any], prompt: str, version: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt.format(customer_id=input["customer_id"])},
                                      {"role": "user", "content": input["message"]}]
    for _turn in range(8):
        reply = ctx.llm(messages, model=MODEL_NAME, prompt_id="refunds.system", prompt_version=version,
                        temperature=0)
        messages.append(reply)
        if not reply.get("tool_calls"):
            ctx.retrieve("help_articles", "refund follow-up", top_k=1)  # after the last decision: off the path
            return {"message": reply["content"]}
        for call in reply["tool_calls"]:
            try:
                result = ctx.tool(call["name"], call["arguments"])
            except Exception as exc:  # the model sees tool failures as tool results
                result = {"error": type(exc).__name__, "message": str(exc).splitlines()[0]}
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return {"message": "Sorry, a colleague will follow up."}


def run(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    """The agent of the incident (prompt v4)."""
    return _run(ctx, input, V4, "v4")


def run_fixed(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    """The fix (prompt v5)."""
    return _run(ctx, input, V5, "v5")


run_fixed.PROMPTS = {"refunds.system": {"version": "v5", "text": V5}}  # type: ignore[attr-defined]
