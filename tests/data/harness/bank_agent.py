"""A toy banking agent for the harness tests: counts every live call it receives.

Input flags change its path so each replay rule can be exercised:
``extra_read`` reads the balance a third time (RecordingExhausted), ``account`` reads another
account (UnrecordedCall), ``double_transfer`` repeats the transfer with the same idempotency key,
``dial`` opens a TCP connection itself to ``("127.0.0.1", dial)`` (the socket guard), ``reply`` changes
the user message sent to the model (InputMismatch in a frozen replay).
"""

from __future__ import annotations

import socket
from collections import Counter
from typing import Any

LIVE_CALLS: Counter[str] = Counter()
STATE: dict[str, Any] = {}
SECRET_KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"


def reset() -> None:
    LIVE_CALLS.clear()
    STATE.clear()
    STATE.update({"A1": 500, "B2": 20, "A9": 7})


reset()


def lookup_customer(email: str) -> dict[str, Any]:
    LIVE_CALLS["lookup_customer"] += 1
    return {"customer_id": "CU-1", "email": email, "card": "4111 1111 1111 1111", "phone": "+44 7911 123456",
            "api_key": SECRET_KEY, "auth": f"Bearer {SECRET_KEY}", "pin": "8841"}


def get_balance(account: str) -> dict[str, Any]:
    LIVE_CALLS["get_balance"] += 1
    return {"account": account, "balance": STATE[account]}


def transfer(src: str, dst: str, amount: int) -> dict[str, Any]:
    LIVE_CALLS["transfer"] += 1
    if amount > STATE[src]:
        raise ValueError(f"insufficient funds in {src}")
    STATE[src] -= amount
    STATE[dst] += amount
    return {"status": "done", "transfer_id": f"T-{LIVE_CALLS['transfer']}"}


def slow_report(account: str) -> dict[str, Any]:
    LIVE_CALLS["slow_report"] += 1
    raise TimeoutError(f"report for {account} timed out after 30 s")


TOOLS = {"lookup_customer": lookup_customer, "get_balance": get_balance, "transfer": transfer,
         "slow_report": slow_report}
READ_TOOLS = {"lookup_customer", "get_balance", "slow_report"}
SENSITIVE_FIELDS = {"lookup_customer": ["pin"]}
MODEL_INFO = {"id": "toy-1", "version": "toy-1-2026", "provider": "toy"}
PROMPTS = {"bank.system": {"version": "v1", "text": "You are a bank assistant. Today is {now}."}}


def MODEL(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:  # noqa: N802
    LIVE_CALLS["model"] += 1
    return {"role": "assistant", "content": f"noted ({len(messages)} messages, last: {messages[-1]['content'][:40]})",
            "tool_calls": []}


def run(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    customer = ctx.tool("lookup_customer", {"email": input["email"]})
    account = input.get("account", "A1")
    before = ctx.tool("get_balance", {"account": account})
    key = ctx.new_id("tx-")
    receipt = ctx.tool("transfer", {"src": "A1", "dst": "B2", "amount": input["amount"]}, idempotency_key=key)
    if input.get("double_transfer"):
        ctx.tool("transfer", {"src": "A1", "dst": "B2", "amount": input["amount"]}, idempotency_key=key)
    after = ctx.tool("get_balance", {"account": "A1"})
    if input.get("extra_read"):
        ctx.tool("get_balance", {"account": "A1"})
    report = None
    if input.get("report"):
        try:
            ctx.tool("slow_report", {"account": "A1"})
        except TimeoutError as exc:
            report = str(exc)
    if input.get("dial"):
        with socket.create_connection(("127.0.0.1", input["dial"]), timeout=2) as conn:
            conn.sendall(b"hello")
    ctx.retrieve("faq", "transfer limits", top_k=2)
    reply = ctx.llm([{"role": "system", "content": f"You are a bank assistant. Today is {ctx.now().isoformat()}."},
                     {"role": "user", "content": input.get("reply", f"moved {input['amount']} for {customer['email']}")}],
                    model="toy-1", prompt_id="bank.system", prompt_version="v1", temperature=0)
    ctx.decide("notify_customer", bool(receipt), options=[True, False])
    return {"before": before["balance"], "after": after["balance"], "reply": reply["content"],
            "now": ctx.now().isoformat(), "key": key, "customer": customer["customer_id"], "report": report}


def faq(query: str, top_k: int = 3) -> list[dict[str, Any]]:
    LIVE_CALLS["faq"] += 1
    return [{"id": "faq-7", "score": 0.91, "text": "Transfers above 1000 need a second approval."},
            {"id": "faq-2", "score": 0.52, "text": "Transfers are instant between our accounts."}][:top_k]


RETRIEVERS = {"faq": faq}
