"""A held-out refund-desk agent, written only against the documented agent context (docs/harness.md).

Northwind Outdoor's refund desk: a customer reports a double charge; the agent looks the order and the
customer up, retrieves the refund policy, asks a scripted model what to do, records the decision,
issues the refund (a write with an idempotency key), reads the order again (it is now ``refunded``:
a read after a write that answers differently) and e-mails the customer.

Live tools count their calls in ``CALLS`` so a test can prove a replay made none. ``reset()`` puts
the live world back. Variants (functions in this module) make a replay diverge on purpose.
Secrets and PII in the input and the tool outputs: an e-mail, a phone number, card numbers, an
OpenAI-style API key, a bearer token in a header-like field, declared-sensitive fields.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import threading
from collections import Counter
from typing import Any

AGENT_NAME = "refund-desk"
CODE_VERSION = "heldout-1"
MODEL_NAME = "scripted-refunds"
MODEL_INFO = {"id": MODEL_NAME, "version": "rules-1", "provider": "heldout"}
SYSTEM = "You are Northwind Outdoor's refund desk. Today is {today}. Refund duplicate charges in full. 🧾"
PROMPTS = {"refunds.system": {"version": "v3", "text": SYSTEM}}
READ_TOOLS = {"get_order", "get_customer", "weird_read"}
SENSITIVE_FIELDS = {"get_customer": ["full_name", "date_of_birth"]}

# Raw secrets the recording must never hold (tests grep every written file for them).
SECRETS = {
    "email": "lucy.park@example.org",
    "phone": "+44 7911 123456",
    "input_card": "4242 4242 4242 4242",
    "order_card": "5555 5555 5555 4444",
    "api_key": "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4",
    "bearer": "zq81Xa9Lk2Wp77Ht0cRv",
    "full_name": "Zoë Ünal-Park",
    "date_of_birth": "1987-04-12",
}
INPUT = {
    "order_id": "ORD-1001",
    "message": (f"I was charged twice for ORD-1001 😡 — card {SECRETS['input_card']}. "
                f"Reach me at {SECRETS['email']} or {SECRETS['phone']}."),
}

CALLS: Counter[str] = Counter()


def _world() -> dict[str, Any]:
    return {
        "orders": {
            "ORD-1001": {"order_id": "ORD-1001", "customer_id": "CUS-2231", "status": "charged_twice",
                         "amount": 129.5, "currency": "EUR",
                         "payment": {"card": SECRETS["order_card"], "charges": 2}},
            "ORD-1002": {"order_id": "ORD-1002", "customer_id": "CUS-2231", "status": "shipped",
                         "amount": 12.0, "currency": "EUR", "payment": {"card": SECRETS["order_card"], "charges": 1}},
        },
        "customers": {
            "CUS-2231": {"customer_id": "CUS-2231", "full_name": SECRETS["full_name"], "email": SECRETS["email"],
                         "phone": SECRETS["phone"], "date_of_birth": SECRETS["date_of_birth"], "tier": "gold",
                         "crm_debug": f"synced with key {SECRETS['api_key']} at 03:12",
                         "upstream_headers": {"X-Upstream-Auth": f"Bearer {SECRETS['bearer']}"}},
        },
        "refunds": [],
        "outbox": [],
    }


WORLD = _world()


def reset() -> None:
    """Put the live world back and zero the call counters."""
    WORLD.clear()
    WORLD.update(_world())
    CALLS.clear()


class Desk:
    """The refund system's tools over one state dict (live: ``TOOLS``; replay: ``FIXTURE``)."""

    def __init__(self, world: dict[str, Any]) -> None:
        self.world = world

    def get_order(self, order_id: str) -> dict[str, Any]:
        return copy.deepcopy(self.world["orders"][order_id])

    def get_customer(self, customer_id: str) -> dict[str, Any]:
        return copy.deepcopy(self.world["customers"][customer_id])

    def issue_refund(self, order_id: str, amount: float, reason: str, idempotency_key: str | None = None) -> dict:
        order = self.world["orders"][order_id]
        order["status"] = "refunded"
        refund = {"refund_id": f"RF-{len(self.world['refunds']) + 1:03d}", "order_id": order_id, "amount": amount,
                  "card": order["payment"]["card"], "status": "accepted"}
        self.world["refunds"].append(refund)
        return refund

    def send_email(self, to: str, subject: str, body: str) -> dict[str, Any]:
        self.world["outbox"].append({"to": to, "subject": subject})
        return {"status": "queued", "message_id": f"m-{len(self.world['outbox'])}"}


def _counted(name: str, fn: Any) -> Any:
    def tool(**kw: Any) -> Any:
        CALLS[name] += 1
        return fn(**kw)

    tool.__name__ = name
    return tool


def _weird_read(kind: str) -> Any:
    from datetime import datetime, timezone

    CALLS["weird_read"] += 1
    if kind == "huge":
        return {"blob": "é😀x" * 700_000}
    return {"when": datetime(2026, 5, 4, 9, 15, tzinfo=timezone.utc), "raw": b"\xff\x00ok", "tags": {"b"}}


_LIVE = Desk(WORLD)
TOOLS = {n: _counted(n, getattr(_LIVE, n)) for n in ("get_order", "get_customer", "issue_refund", "send_email")}
TOOLS["weird_read"] = _weird_read


def _policy(query: str, top_k: int = 3) -> list[dict[str, Any]]:
    CALLS["retrieval:refund_policy"] += 1
    docs = [{"id": "POL-7", "text": "Duplicate charges are refunded in full to the original card."},
            {"id": "POL-2", "text": "Refunds above 500 EUR need a supervisor."}]
    return docs[:top_k]


RETRIEVERS = {"refund_policy": _policy}


class RefundFixture(Desk):
    """Fixture store seeded from the recorded reads (docs/harness.md, fixture mode)."""

    def __init__(self) -> None:
        super().__init__({"orders": {}, "customers": {}, "refunds": [], "outbox": []})
        self.docs: dict[str, Any] = {}

    def seed(self, tool: str, arguments: dict[str, Any], output: Any) -> None:
        if tool == "get_order" and arguments["order_id"] not in self.world["orders"]:
            self.world["orders"][arguments["order_id"]] = copy.deepcopy(output)  # first read: the state before
        elif tool == "get_customer":
            self.world["customers"][arguments["customer_id"]] = copy.deepcopy(output)
        elif tool.startswith("retrieval:"):
            self.docs[arguments["query"]] = copy.deepcopy(output)

    def call(self, tool: str, arguments: dict[str, Any], *, write: bool) -> Any:
        if tool.startswith("retrieval:"):
            return copy.deepcopy(self.docs[arguments["query"]])
        return getattr(self, tool)(**arguments)

    def state(self) -> dict[str, Any]:
        return self.world


def scripted_model(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:
    """Deterministic stand-in for the LLM: refund a double charge in full, then write the reply."""
    CALLS["model"] += 1
    facts = json.loads(next(m["content"] for m in messages if m["role"] == "tool"))
    if messages[-1]["role"] == "tool":
        order = facts["order"]
        if order["status"] == "charged_twice":
            return {"role": "assistant", "content": "", "tool_calls": [{
                "id": "call_1", "name": "issue_refund",
                "arguments": {"order_id": order["order_id"], "amount": order["amount"], "reason": "duplicate"}}]}
        return {"role": "assistant", "content": "Nothing to refund.", "tool_calls": []}
    return {"role": "assistant", "tool_calls": [],
            "content": f"Refunded {facts['order']['amount']} EUR to card {facts['order']['payment']['card']}; "
                       f"we wrote to {facts['customer']['email']}."}


MODEL = scripted_model


def _run(ctx: Any, input: Any, *, first_order: str | None = None, extra_read: bool = False,
         double_refund: bool = False, ascii_json: bool = False) -> dict[str, Any]:
    now = ctx.now()
    case_id = ctx.new_id("case-")
    order_id = input["order_id"]
    order = ctx.tool("get_order", {"order_id": first_order or order_id})
    customer = ctx.tool("get_customer", {"customer_id": order["customer_id"]})
    docs = ctx.retrieve("refund_policy", "duplicate charge refund", top_k=2)
    messages = [{"role": "system", "content": SYSTEM.format(today=now.date().isoformat())},
                {"role": "user", "content": input["message"]},
                {"role": "tool", "content": json.dumps({"order": order, "customer": customer, "policy": docs},
                                                          ensure_ascii=ascii_json)}]
    reply = ctx.llm(messages, model=MODEL_NAME, prompt_id="refunds.system", prompt_version="v3", temperature=0)
    action = ctx.decide("refund_action", reply["tool_calls"][0]["name"] if reply["tool_calls"] else "close",
                        options=["issue_refund", "close"])
    refund = None
    if action == "issue_refund":
        args = reply["tool_calls"][0]["arguments"]
        key = f"refund-{order_id}-{case_id}"
        refund = ctx.tool("issue_refund", args, idempotency_key=key)
        if double_refund:  # a retry bug: the same refund again, same key
            ctx.tool("issue_refund", args, idempotency_key=key)
    after = ctx.tool("get_order", {"order_id": order_id})
    if extra_read:
        ctx.tool("get_order", {"order_id": order_id})
    ctx.tool("send_email", {"to": customer["email"], "subject": f"Refund for {order_id} ✅",
                            "body": f"Status: {after['status']}. Case {case_id}."})
    messages.append({"role": "assistant", "content": f"status {after['status']}"})
    final = ctx.llm(messages, model=MODEL_NAME, prompt_id="refunds.system", prompt_version="v3", temperature=0)
    return {"case_id": case_id, "status_before": order["status"], "status_after": after["status"],
            "refund": refund, "reply": final["content"], "now": now.isoformat(),
            "tz": str(now.tzinfo), "utcoffset": now.utcoffset().total_seconds()}


def run(ctx: Any, input: Any) -> dict[str, Any]:
    """The agent as deployed."""
    return _run(ctx, input)


run.FIXTURE = RefundFixture  # type: ignore[attr-defined]


def run_plain(ctx: Any, input: Any) -> dict[str, Any]:
    """The same agent, declaring no FIXTURE (the default store is used in fixture mode)."""
    return _run(ctx, input)


def run_extra_read(ctx: Any, input: Any) -> dict[str, Any]:
    """Reads the order a third time: one more than recorded."""
    return _run(ctx, input, extra_read=True)


def run_other_order(ctx: Any, input: Any) -> dict[str, Any]:
    """Looks up ORD-1002 instead of ORD-1001 first: an unrecorded call differing in order_id."""
    return _run(ctx, input, first_order="ORD-1002")


def run_ascii(ctx: Any, input: Any) -> dict[str, Any]:
    """Pastes the tool outputs into the model's messages with json.dumps' default ensure_ascii=True."""
    return _run(ctx, input, ascii_json=True)


def run_double(ctx: Any, input: Any) -> dict[str, Any]:
    """Issues the refund twice with the same idempotency key."""
    return _run(ctx, input, double_refund=True)


def run_net(ctx: Any, input: Any) -> dict[str, Any]:
    """Tries to reach a 'production' service over TCP (port from $HELDOUT_NET_PORT) and to resolve a
    host name, then runs normally. With $HELDOUT_NET_THREAD set it also tries from a thread it starts."""
    port = int(os.environ["HELDOUT_NET_PORT"])
    outcomes: list[str] = []

    def attempt(call: Any) -> None:
        try:
            call()
            outcomes.append("connected")
        except Exception as exc:
            outcomes.append(type(exc).__name__)

    attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())
    attempt(lambda: socket.getaddrinfo("payments.example.com", 443))
    if os.environ.get("HELDOUT_NET_THREAD"):
        t = threading.Thread(target=attempt, args=(lambda: socket.create_connection(("127.0.0.1", port), timeout=2),))
        t.start()
        t.join()
    out = _run(ctx, input)
    out["net"] = outcomes
    return out


def run_crash(ctx: Any, input: Any) -> dict[str, Any]:
    """Raises after its first read (an agent bug mid-run)."""
    ctx.tool("get_order", {"order_id": input["order_id"]})
    raise RuntimeError("agent bug: refund amount missing")


def run_weird(ctx: Any, input: Any) -> Any:
    """A read tool that returns non-JSON values (datetime, bytes, set)."""
    return ctx.tool("weird_read", {"kind": "odd"})


def run_huge(ctx: Any, input: Any) -> Any:
    """A read tool that returns ~4 MB of non-ASCII text."""
    return len(ctx.tool("weird_read", {"kind": "huge"})["blob"])


def run_threads(ctx: Any, input: Any) -> Any:
    """Calls ctx from four threads at once."""
    results: dict[int, Any] = {}

    def worker(i: int) -> None:
        results[i] = ctx.tool("get_order", {"order_id": input["order_id"]})["status"]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results.get(i) for i in range(4)]


def run_interrupt(ctx: Any, input: Any) -> Any:
    """The user presses Ctrl-C after the first read."""
    ctx.tool("get_order", {"order_id": input["order_id"]})
    raise KeyboardInterrupt
