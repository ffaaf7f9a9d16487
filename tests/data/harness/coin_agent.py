"""A toy agent whose scripted model takes the bad path on every third call (calls 0, 3, 6...):
recorded once (bad), then replayed with the model in the loop, the failure comes back in some
trials but not most — the `variance` verdict."""

from __future__ import annotations

from typing import Any

CALLS = {"model": 0}
READ_TOOLS = {"lookup"}


def lookup(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "status": "delivered"}


def refund(order_id: str) -> dict[str, Any]:
    return {"refunded": order_id}


TOOLS = {"lookup": lookup, "refund": refund}


def MODEL(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:  # noqa: N802
    n = CALLS["model"]
    CALLS["model"] += 1
    if n % 3 == 0:  # the bad decision: refund a delivered order
        return {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "refund", "arguments": {"order_id": "A-1"}}]}
    return {"role": "assistant", "content": "Your order was delivered; no refund is due.", "tool_calls": []}


def run(ctx: Any, input: Any) -> Any:
    order = ctx.tool("lookup", {"order_id": "A-1"})
    reply = ctx.llm([{"role": "user", "content": f"refund? order is {order['status']}"}], model="coin-1", prompt_version="v1")
    for call in reply.get("tool_calls") or []:
        ctx.tool(call["name"], call["arguments"])
    return {"message": reply.get("content") or "refunded"}
