"""Build the bundled sample runs in ``sample_runs/`` (three incident pairs).

Each scenario is one original run (the production incident) and one replay of
the same input, written as tracetui/1 JSONL (``docs/format.md``); ``order_lookup``
is also written as OTLP/JSON with current OpenTelemetry GenAI attributes
(``../shared/design/formats.md`` §1-2). The scheduling files are made by the
harness (``tracetui.core.harness``: record the agent in ``sample_runs/scheduling/``,
replay the fixed agent strictly and in fixture mode), the others span by span here.
Output is deterministic: fixed timestamps, ids derived from fixed seeds, a demo
redaction key, so a rebuild gives byte-identical files. ``NOTES.md`` files are
written by hand.

Usage::

    python scripts/build_sample_runs.py            # write; refuses (writes nothing) if any file exists
    python scripts/build_sample_runs.py --force    # overwrite existing files
    python scripts/build_sample_runs.py --check    # compare with the files on disk, read them back

Exit status: 0 on success, 1 when files exist without ``--force`` or ``--check``
finds a difference or a read issue.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import orjson

from tracetui.core.canonical import args_hash, canonical_json
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers import read_trace
from tracetui.core.readers.native import dumps_trace

ROOT = Path(__file__).resolve().parents[1]
MS = 1_000_000  # ns per millisecond
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def token(seed: str, n: int, alphabet: str = "0123456789abcdef") -> str:
    """``n`` characters of ``alphabet`` derived from SHA-256 of ``seed`` (deterministic ids)."""
    out, counter = [], 0
    while len(out) < n:
        for b in hashlib.sha256(f"{seed}#{counter}".encode()).digest():
            out.append(alphabet[b % len(alphabet)])
        counter += 1
    return "".join(out[:n])


def iso(ns: int) -> str:
    """UTC ISO 8601 with milliseconds, ``Z`` suffix."""
    dt = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{(ns // MS) % 1000:03d}Z"


def ns_of(stamp: str) -> int:
    """Integer ns since the epoch of an ISO 8601 UTC stamp with milliseconds."""
    dt = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


def tok_count(value: Any) -> int:
    """Rough token count (4 characters a token): deterministic, equal inputs give equal counts."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return max(1, (len(text) + 3) // 4)


def msg(role: str, content: str | None = None, **extra: Any) -> dict[str, Any]:
    """A tracetui/1 message (``docs/format.md``, llm ``messages``)."""
    return {"role": role, "content": content, **extra}


# --------------------------------------------------------------------------- runs


@dataclass
class Rec:
    """A span under construction (fields as in ``Span``)."""

    span_id: str
    parent_id: str | None
    kind: SpanKind
    name: str
    start_ns: int
    end_ns: int
    data: dict[str, Any]
    status: Status = Status.OK
    error_type: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


class Run:
    """One run of an agent: a root ``agent`` span, then llm/tool/decision children in order.

    Args:
        seed: ``"<scenario>/<original|replay>"``; every id derives from it.
        t0: Start of the run, ns since the epoch.
        agent: Agent name; agent_input: the run's input (the root span's ``input``).
        llm: Settings shared by every LLM call: ``model``, ``provider``, ``prompt_id``,
            ``prompt_version``, ``params``, ``tool_schemas_hash``, ``model_version``,
            ``server``, optional ``fingerprint`` ({is_replay: system_fingerprint}).
        conv: The first rendered messages (system, user); extended as the run goes.
    """

    def __init__(self, seed: str, t0: int, agent: str, agent_input: Any, llm: dict[str, Any], conv: list[dict[str, Any]]) -> None:
        self.seed, self.t, self.llm_cfg, self.conv = seed, t0, llm, conv
        self.replay = seed.endswith("/replay")
        self.n = 0
        self.trace_id = token(seed + "/trace", 32)
        self.root = Rec(self._id(), None, SpanKind.AGENT, f"invoke_agent {agent}", t0, t0,
                        {"agent_name": agent, "input": agent_input, "output": None})
        self.recs = [self.root]
        self.t += 4 * MS

    def _id(self) -> str:
        self.n += 1
        return token(f"{self.seed}/span/{self.n}", 16)

    def ident(self, kind: str) -> str:
        """A provider-style id (call id, response id) unique to this run."""
        self.n += 1
        n, prefix = (24, "call_") if kind == "call" else (29, "chatcmpl-")
        if self.llm_cfg["provider"] == "anthropic":
            n, prefix = (22, "toolu_01") if kind == "call" else (22, "msg_01")
        return prefix + token(f"{self.seed}/{kind}/{self.n}", n, B62)

    def _add(self, kind: SpanKind, name: str, dur_ms: float, data: dict[str, Any], gap_ms: float,
             status: Status = Status.OK, error_type: str | None = None, attributes: dict[str, Any] | None = None) -> Rec:
        start = self.t + int(gap_ms * MS)
        rec = Rec(self._id(), self.root.span_id, kind, name, start, start + int(dur_ms * MS), data,
                  status, error_type, attributes or {})
        self.t = rec.end_ns
        self.recs.append(rec)
        return rec

    def decision(self, decision: str, value: Any, options: list[Any]) -> None:
        """A code decision span (router, planner)."""
        self._add(SpanKind.DECISION, f"decision {decision}", 3.4, {"decision": decision, "value": value, "options": options}, 2.1)

    def chat(self, content: str | None = None, calls: list[tuple[str, dict[str, Any]]] = ()) -> list[str]:
        """One LLM call on the current conversation; appends the answer. Returns the new tool call ids."""
        cfg = self.llm_cfg
        ids = [self.ident("call") for _ in calls]
        out = msg("assistant", content)
        if calls:
            out["tool_calls"] = [{"id": i, "name": n, "arguments": a} for i, (n, a) in zip(ids, calls)]
        usage = {"input_tokens": 212 + sum(tok_count(m) for m in self.conv), "output_tokens": tok_count(out) - 6}
        data = {k: cfg[k] for k in ("model", "provider", "prompt_id", "prompt_version", "params")}
        data.update(messages=copy.deepcopy(self.conv), tool_schemas_hash=cfg["tool_schemas_hash"], output=out,
                    finish_reason="tool_call" if calls else "stop", usage=usage, response_id=self.ident("response"))
        attrs = {"gen_ai.response.model": cfg["model_version"], "server.address": cfg["server"]}
        if cfg.get("fingerprint"):
            attrs["system_fingerprint"] = cfg["fingerprint"][self.replay]
        jitter = 0.8 + 0.4 * int(token(f"{self.seed}/latency/{self.n}", 4), 16) / 0xFFFF  # latency varies run to run
        self._add(SpanKind.LLM, f"chat {cfg['model']}", (420 + 21.5 * usage["output_tokens"]) * jitter, data, 1.3, attributes=attrs)
        self.conv.append(out)
        return ids

    def tool(self, name: str, arguments: dict[str, Any], output: Any, *, call_id: str, effect: str = "read",
             dur_ms: float = 140, status: Status = Status.OK, error_type: str | None = None,
             source: str = "recording", answer: bool = True, gap_ms: float = 0.8,
             attributes: dict[str, Any] | None = None) -> None:
        """One tool call. ``source`` (replay only) says how the replay served it; ``answer``
        appends the output to the conversation as the tool message the model reads next."""
        data = {"tool_name": name, "tool_version": "1", "call_id": call_id, "arguments": arguments,
                "args_hash": args_hash(arguments), "effect": effect, "mode": "replay" if self.replay else "live",
                "output": output, "output_truncated": False}
        attrs = dict(attributes or {})
        if self.replay:
            attrs["replay.source"] = source
        self._add(SpanKind.TOOL, f"execute_tool {name}", max(dur_ms / 20, 2.5) if self.replay else dur_ms,
                  data, gap_ms, status, error_type, attrs)
        if answer:
            self.conv.append(msg("tool", orjson.dumps(output).decode(), tool_call_id=call_id))

    def finish(self, output: Any) -> list[Span]:
        """Close the root span; spans in emission order (a span is written when it ends)."""
        self.root.data["output"] = output
        self.root.end_ns = self.t + 9 * MS
        seq = {r.span_id: i for i, r in enumerate(sorted(self.recs, key=lambda r: r.start_ns))}
        spans = [Span(span_id=r.span_id, parent_id=r.parent_id, seq=seq[r.span_id], kind=r.kind, name=r.name,
                      start_ns=r.start_ns, end_ns=r.end_ns, status=r.status, error_type=r.error_type,
                      data=r.data, attributes=r.attributes, trace_id=self.trace_id) for r in self.recs]
        return sorted(spans, key=lambda s: (s.end_ns or 0, -s.seq))


def header(run: Run, run_id: str, clock: dict[str, str], code: str, spans: list[Span], **extra: Any) -> dict[str, Any]:
    """The tracetui/1 header; ``redaction.fired`` counts the typed tokens present in the spans."""
    body = b"\n".join(orjson.dumps(s.data) for s in spans)
    fired = {rule: body.count(f"<{rule.upper()}_".encode()) for rule in ("email", "phone")}
    cfg = run.llm_cfg
    return {"run_id": run_id, "trace_id": run.trace_id, "started_at": iso(run.root.start_ns), "start_ns": run.root.start_ns,
            "clock": clock, "code_version": code, "prompt_versions": {cfg["prompt_id"]: cfg["prompt_version"]},
            "model": {"id": cfg["model"], "version": cfg["model_version"], "provider": cfg["provider"]},
            "tool_schema_hash": cfg["tool_schemas_hash"], "agent": run.root.data["agent_name"], "input": run.root.data["input"],
            "normalization": ["tool outputs: the services' JSON text recorded parsed, as JSON values",
                              "emails and phone numbers: replaced before write by stable typed tokens (see redaction)"],
            "redaction": {"rules": ["email", "phone"], "fired": {k: v for k, v in fired.items() if v}}, **extra}


def definitions(tools: dict[str, tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The tool definitions sent to the model (GenAI ``gen_ai.tool.definitions`` shape)."""
    return [{"type": "function", "name": n, "description": d, "parameters": p} for n, (d, p) in tools.items()]


def schema_hash(tools: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """Hash of the tool definitions an agent exposes: the args hash of ``definitions(tools)``,
    which is also what the OTLP reader computes from ``gen_ai.tool.definitions``."""
    return args_hash(definitions(tools))


# --------------------------------------------------------------------------- scheduling (built by the harness)

SAMPLE_KEY = b"tracetui sample runs: a demo redaction key, never use it for real data"
"""The redaction key of the bundled samples (invented data); real projects keep theirs out of git."""


class StepTimer:
    """A deterministic span clock: each reading advances 1-520 ms (seeded), in integer ns."""

    def __init__(self, start_ns: int, seed: str) -> None:
        import random

        self.now = start_ns
        self.rng = random.Random(seed)

    def __call__(self) -> int:
        self.now += self.rng.randint(1, 400) * 1_300_000 + self.rng.randint(0, 999) * 1_000
        return self.now


def scheduling_files() -> dict[str, bytes]:
    """The scheduling pair, made by the commands users run (docs/harness.md): record the agent as
    deployed (prompt v7), replay the fixed agent (v8) strictly with the scripted model in the loop,
    and again in fixture mode with the seed file. Returns path relative to sample_runs/ -> bytes."""
    import tempfile

    from tracetui.core.harness import load_agent, record, replay
    from tracetui.core.harness.redact import Redactor

    import os

    folder = ROOT / "sample_runs" / "scheduling"
    # The agent reference goes into the headers (agent_ref): relative to the checkout, as a user types it.
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        unfixed, fixed = load_agent("sample_runs/scheduling/agent.py:run"), load_agent("sample_runs/scheduling/agent.py:run_fixed")
    finally:
        os.chdir(here)
    files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        orig = Path(tmp) / "original.jsonl"
        red = Redactor(SAMPLE_KEY, sensitive_fields=unfixed.sensitive_fields)
        record(unfixed, orjson.loads((folder / "input.json").read_bytes()), str(orig), redactor=red,
               clock="2026-11-03T10:14:02+01:00", timezone="Europe/Paris", seed=7, run_id="run-2026-11-03-0042",
               timer=StepTimer(ns_of("2026-11-03T09:14:02.118Z"), "scheduling/original"))
        recording = read_trace(orig)
        for name, mode, seed_file, t0 in (("replay", "strict", None, "2026-11-10T15:02:47.530Z"),
                                          ("fixture", "fixture", folder / "fixture_seed.json", "2026-11-10T15:09:12.204Z")):
            seed_state = orjson.loads(seed_file.read_bytes()) if seed_file else None
            replay(recording, fixed, str(Path(tmp) / f"{name}.jsonl"), mode=mode, llm="live", seed_state=seed_state,
                   redactor=Redactor(SAMPLE_KEY, sensitive_fields=fixed.sensitive_fields),
                   timer=StepTimer(ns_of(t0), f"scheduling/{name}"))
        for name in ("original", "replay", "fixture"):
            files[f"scheduling/{name}.jsonl"] = (Path(tmp) / f"{name}.jsonl").read_bytes()
    return files


# --------------------------------------------------------------------------- subscription_pause

PAUSE_TOOLS = {
    "get_billing_account": ("Read a billing account and its subscription.", {
        "type": "object", "properties": {"account_id": {"type": "string", "pattern": "^AC-[0-9]{5}$"}}, "required": ["account_id"]}),
    "pause_subscription": ("Pause a subscription between two billing days.", {"type": "object", "properties": {"subscription_id": {"type": "string"}, "start_date": {"type": "string", "format": "date"},
                                                            "resume_date": {"type": "string", "format": "date"}},
                           "required": ["subscription_id", "start_date", "resume_date"]}),
}
PAUSE_PROMPT = (
    "You are the billing assistant of Verdant Box, a weekly meal-kit subscription.\n"
    "Today is Thursday 12 November 2026, 16:41 (Europe/London).\n"
    "Signed-in customer: C-30518, billing account AC-10442, contact <EMAIL_9b07>.\n"
    "Use get_billing_account to read the subscription and pause_subscription to pause it. A pause starts on a billing day "
    "(Monday) and lasts at most 12 weeks. Only tell the customer a change is done when a tool has confirmed it, and quote "
    "the confirmation reference."
)


def subscription_pause(side: str) -> tuple[dict[str, Any], list[Span]]:
    """Pause request: a timeout, a retry with a mangled id, a success claimed without a receipt (fixture replay of the code fix)."""
    replay = side == "replay"
    ask = {"channel": "app_chat", "customer_id": "C-30518",
           "message": "Hi! I'm travelling for work until mid-January, can you pause my subscription until then? I don't want to be charged in December."}
    llm = {"model": "claude-sonnet-4-5", "provider": "anthropic", "prompt_id": "billing.system", "prompt_version": "v12",
           "params": {"temperature": 0.3, "max_tokens": 1024},
           "tool_schemas_hash": schema_hash(PAUSE_TOOLS), "model_version": "claude-sonnet-4-5-20250929", "server": "api.anthropic.com"}
    conv = [msg("system", PAUSE_PROMPT), msg("user", ask["message"])]
    t0 = "2026-11-17T10:26:31.044Z" if replay else "2026-11-12T16:41:09.502Z"
    run = Run(f"subscription_pause/{side}", ns_of(t0), "billing-agent", ask, llm, conv)
    acct = {"account_id": "AC-10442"}
    (c1,) = run.chat("Let me look up your subscription.", calls=[("get_billing_account", acct)])
    run.tool("get_billing_account", acct, {
        "error": "timeout", "message": "billing-api did not answer within 5000 ms", "retryable": True,
        "retry_after_ms": 750, "request_id": "req_01JC8ZQ3KX4T"}, call_id=c1, dur_ms=5003, status=Status.ERROR,
        error_type="TimeoutError", answer=False, attributes={"retry.attempt": 1})
    retry = {"account_id": "AC-10442"} if replay else {"account_id": "AC10442"}
    if not replay:
        run.tool("get_billing_account", retry, {
            "error": "not_found", "status": 404, "message": "No active subscription found for account AC10442"},
            call_id=c1, dur_ms=212, status=Status.ERROR, error_type="NotFoundError", gap_ms=750,
            attributes={"retry.attempt": 2, "retry.reason": "TimeoutError"})
        text = ("All done: your subscription is paused, so you won't be charged in December. It will restart automatically "
                "in mid-January; just tell us if you'd like a specific restart date.")
    else:
        run.tool("get_billing_account", retry, {
            "account_id": "AC-10442", "customer_id": "C-30518", "status": "active",
            "subscription": {"subscription_id": "SUB-88121", "plan": "family-4", "billing_day": "monday",
                             "next_charge": {"date": "2026-11-16", "amount": "64.90", "currency": "GBP"}},
            "pause": {"allowed": True, "max_weeks": 12, "earliest_start": "2026-11-16"}},
            call_id=c1, gap_ms=750, source="fixture", attributes={"retry.attempt": 2, "retry.reason": "TimeoutError"})
        pause = {"subscription_id": "SUB-88121", "start_date": "2026-11-16", "resume_date": "2027-01-18"}
        (c2,) = run.chat(calls=[("pause_subscription", pause)])
        run.tool("pause_subscription", pause, {
            "intercepted": True, "simulated": True, "status": "paused", "receipt_id": "PSE-SIM-0001", **pause,
            "write_intent": {"tool": "pause_subscription", "position": 1, "idempotency_key": "idem-" + token("pause/sub", 12)}},
            call_id=c2, effect="write", source="intercepted")
        text = ("Done: your Family 4 box is paused from Monday 16 November and restarts on Monday 18 January 2027, so there "
                "are no charges in December. Your confirmation reference is PSE-SIM-0001.")
    run.chat(text)
    spans = run.finish({"message": text})
    extra = {"replay_of": "run-2026-11-12-1187", "record_mode": "fixture",
             "fixture": {"seeded_from": ["recording run-2026-11-12-1187",
                                         "billing account AC-10442 as of 2026-11-12T16:41Z (exported for case PAUSE-311)"]}} if replay else {}
    return header(run, "replay-2026-11-17-0003" if replay else "run-2026-11-12-1187",
                  {"now": "2026-11-12T16:41:09+00:00", "timezone": "Europe/London"}, "git:4e0b9d3" if replay else "git:a93e5c0",
                  spans, **extra), spans


# --------------------------------------------------------------------------- order_lookup

ORDER_TOOLS = {
    "search_orders": ("Search a customer's orders by order number or text.", {
        "type": "object", "properties": {"customer_id": {"type": "string"}, "query": {"type": "string"}}, "required": ["customer_id"]}),
    "get_tracking": ("Shipping events of a parcel.", {
        "type": "object", "properties": {"carrier": {"type": "string"}, "tracking_number": {"type": "string"}},
        "required": ["carrier", "tracking_number"]}),
}
ORDER_PROMPT = (
    "You are the order-support assistant of Northwind Home.\n"
    "Today is Wednesday 4 November 2026, 19:05 (America/Chicago).\n"
    "Signed-in customer: C-2270 (<EMAIL_a41c>).\n"
    "Notes from earlier conversations:\n"
    "- 2026-10-28: asked about order #5529, placed on the linked household account C-2207; delivered 30 October.\n"
    "Use search_orders to find the customer's orders and get_tracking for shipping events. Never guess an order's status."
)


def order_lookup(side: str) -> tuple[dict[str, Any], list[Span]]:
    """Where is order #5531: the model searches the linked account C-2207 and reports its delivery (model-in-the-loop replay)."""
    replay = side == "replay"
    ask = {"channel": "web_chat", "customer_id": "C-2270",
           "message": "Hi, where is my order #5531? It was supposed to arrive yesterday."}
    llm = {"model": "gpt-4o", "provider": "openai", "prompt_id": "support.system", "prompt_version": "v5",
           "params": {"temperature": 0.7, "max_tokens": 500, "seed": 1234},
           "tool_schemas_hash": schema_hash(ORDER_TOOLS), "model_version": "gpt-4o-2024-08-06", "server": "api.openai.com",
           "fingerprint": {False: "fp_7c5f0a2b1e", True: "fp_d1a9e3b4c6"}}
    conv = [msg("system", ORDER_PROMPT), msg("user", ask["message"])]
    t0 = "2026-11-09T14:30:12.205Z" if replay else "2026-11-05T01:05:33.870Z"
    run = Run(f"order_lookup/{side}", ns_of(t0), "support-agent", ask, llm, conv)
    search = {"customer_id": "C-2270" if replay else "C-2207", "query": "5531"}
    (c1,) = run.chat(calls=[("search_orders", search)])
    if not replay:
        run.tool("search_orders", search, {
            "customer_id": "C-2207", "query": "5531", "exact_match": False,
            "note": "no order matches '5531'; showing the most recent orders",
            "orders": [{"order_id": "5529", "placed_at": "2026-10-24", "status": "delivered", "items": ["Mesh Wi-Fi extender (2-pack)"],
                        "carrier": "ups", "delivered_at": "2026-10-30"}]}, call_id=c1, dur_ms=164)
        text = ("Good news: your order was delivered on Friday 30 October by UPS (Mesh Wi-Fi extender, 2-pack). "
                "If you can't find it, please check with your neighbours or building mail room and let me know.")
    else:
        run.tool("search_orders", search, {
            "customer_id": "C-2270", "query": "5531", "exact_match": True,
            "orders": [{"order_id": "5531", "placed_at": "2026-10-29", "status": "in_transit", "items": ["Smart thermostat T6"],
                        "carrier": "fedex", "tracking_number": "779104205531", "promised_date": "2026-11-03"}]},
            call_id=c1, source="fixture")
        track = {"carrier": "fedex", "tracking_number": "779104205531"}
        (c2,) = run.chat(calls=[("get_tracking", track)])
        run.tool("get_tracking", track, {
            "tracking_number": "779104205531", "status": "in_transit", "estimated_delivery": "2026-11-06",
            "events": [{"at": "2026-11-04T06:12:00-06:00", "location": "Joliet, IL", "event": "Delay: severe weather"},
                       {"at": "2026-11-02T21:40:00-06:00", "location": "Memphis, TN", "event": "Departed FedEx hub"}]},
            call_id=c2, source="fixture")
        text = ("Your order #5531 (Smart thermostat T6) is on its way with FedEx but was held up by severe weather in "
                "Joliet, IL this morning. The new estimated delivery is Friday 6 November; sorry for the delay.")
    run.chat(text)
    spans = run.finish({"message": text})
    extra = {"replay_of": "run-2026-11-05-0311", "record_mode": "fixture",
             "fixture": {"seeded_from": ["recording run-2026-11-05-0311",
                                         "orders of C-2270 and linked C-2207 as of 2026-11-05T01:05Z (case ORD-5531)"]}} if replay else {}
    return header(run, "replay-2026-11-09-0021" if replay else "run-2026-11-05-0311",
                  {"now": "2026-11-04T19:05:33-06:00", "timezone": "America/Chicago"}, "git:51d0e7f",
                  spans, **extra), spans


# --------------------------------------------------------------------------- OTLP/JSON


def any_value(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue (int64 as a JSON string, per the protobuf JSON mapping)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [any_value(x) for x in v]}}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": any_value(x)} for k, x in v.items()]}}
    return {"stringValue": str(v)}


def genai_message(m: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """A tracetui/1 message in the GenAI ``{role, parts}`` shape (text, tool_call, tool_call_response)."""
    if m["role"] == "tool":
        parts = [{"type": "tool_call_response", "id": m["tool_call_id"], "response": orjson.loads(m["content"])}]
    else:
        parts = [{"type": "text", "content": m["content"]}] if m.get("content") is not None else []
        parts += [{"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in m.get("tool_calls", [])]
    out: dict[str, Any] = {"role": m["role"], "parts": parts}
    if finish_reason is not None:
        out["finish_reason"] = finish_reason
    return out


def js(v: Any) -> str:
    return orjson.dumps(v).decode()


def otlp_span(s: Span, conversation: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """One span as OTLP/JSON with current GenAI attributes (gen_ai_latest_experimental names)."""
    d = s.data
    if s.kind is SpanKind.AGENT:
        kind, attrs = 1, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": d["agent_name"],
                          "gen_ai.conversation.id": conversation,
                          "gen_ai.input.messages": js([genai_message(msg("user", d["input"]["message"]))]),
                          "gen_ai.output.messages": js([genai_message(msg("assistant", d["output"]["message"]), "stop")])}
    elif s.kind is SpanKind.LLM:
        p = d["params"]
        kind, attrs = 3, {"gen_ai.operation.name": "chat", "gen_ai.provider.name": d["provider"], "gen_ai.request.model": d["model"],
                          "gen_ai.request.temperature": float(p["temperature"]), "gen_ai.request.max_tokens": p["max_tokens"],
                          "gen_ai.request.seed": p["seed"], "gen_ai.conversation.id": conversation,
                          "gen_ai.response.model": s.attributes["gen_ai.response.model"], "gen_ai.response.id": d["response_id"],
                          "gen_ai.response.finish_reasons": [d["finish_reason"]],
                          "gen_ai.usage.input_tokens": d["usage"]["input_tokens"], "gen_ai.usage.output_tokens": d["usage"]["output_tokens"],
                          "gen_ai.input.messages": js([genai_message(m) for m in d["messages"]]),
                          "gen_ai.output.messages": js([genai_message(d["output"], d["finish_reason"])]),
                          "server.address": s.attributes["server.address"], "openai.response.system_fingerprint": s.attributes["system_fingerprint"],
                          "gen_ai.tool.definitions": js(tools)}
    else:
        kind, attrs = 1, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": d["tool_name"], "gen_ai.tool.type": "function",
                          "gen_ai.tool.call.id": d["call_id"], "gen_ai.tool.call.arguments": js(d["arguments"]),
                          "gen_ai.tool.call.result": js(d["output"])}
    status: dict[str, Any] = {"code": 1}
    if s.status is Status.ERROR:
        status = {"code": 2, "message": str(d.get("output", {}).get("message", s.error_type))}
        attrs["error.type"] = s.error_type
    parent = {"parentSpanId": s.parent_id} if s.parent_id else {}
    return {"traceId": s.trace_id, "spanId": s.span_id, **parent, "name": s.name, "kind": kind,
            "startTimeUnixNano": str(s.start_ns), "endTimeUnixNano": str(s.end_ns),
            "attributes": [{"key": k, "value": any_value(v)} for k, v in attrs.items()], "status": status}


def to_otlp(head: dict[str, Any], spans: list[Span], environment: str, tools: list[dict[str, Any]]) -> bytes:
    """A ``TracesData`` document: one resource, one scope, the spans in emission order."""
    resource = {"service.name": head["agent"], "service.version": head["code_version"], "deployment.environment.name": environment}
    doc = {"resourceSpans": [{
        "resource": {"attributes": [{"key": k, "value": any_value(v)} for k, v in resource.items()]},
        "scopeSpans": [{"scope": {"name": "tracetui.samples", "version": "1"},
                        "spans": [otlp_span(s, head["run_id"], tools) for s in spans]}]}]}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


# --------------------------------------------------------------------------- build, check

SCENARIOS: dict[str, Callable[[str], tuple[dict[str, Any], list[Span]]]] = {
    "subscription_pause": subscription_pause, "order_lookup": order_lookup}
OTLP_SCENARIOS = {"order_lookup": definitions(ORDER_TOOLS)}


def build() -> dict[str, bytes]:
    """Every generated file: path relative to ``sample_runs/`` -> bytes."""
    files: dict[str, bytes] = scheduling_files()
    for name, make in SCENARIOS.items():
        for side in ("original", "replay"):
            head, spans = make(side)
            files[f"{name}/{side}.jsonl"] = dumps_trace(head, spans)
            if name in OTLP_SCENARIOS:
                files[f"{name}/{side}.otlp.json"] = to_otlp(head, spans, "replay-harness" if side == "replay" else "production",
                                                           OTLP_SCENARIOS[name])
    return files


def semantic(span: Span) -> dict[str, Any]:
    """The compared fields of a span (docs/format.md, comparison policy), volatile ids removed."""
    keep = {"tool": ("tool_name", "tool_version", "arguments", "effect", "output", "output_truncated"),
            "llm": ("model", "provider", "prompt_id", "prompt_version", "params", "messages", "tool_schemas_hash", "output", "finish_reason"),
            "decision": ("decision", "value", "options"), "agent": ("input", "output")}[span.kind.value]
    out = {k: copy.deepcopy(span.data.get(k)) for k in keep}
    for m in (out.get("messages") or []) + ([out["output"]] if span.kind is SpanKind.LLM else []):
        m.pop("tool_call_id", None)
        for c in m.get("tool_calls", []):
            c.pop("id", None)
    return {"status": span.status.value, "error_type": span.error_type, **out}


def differing(a: Span, b: Span) -> list[str]:
    """Semantic field names whose canonical bytes differ between two spans."""
    sa, sb = semantic(a), semantic(b)
    return [k for k in sa if canonical_json(sa[k]) != canonical_json(sb[k])]


def check(out: Path, files: dict[str, bytes]) -> list[str]:
    """Compare built bytes with disk, read every file back, list the semantic differences by seq."""
    problems: list[str] = []
    for rel, data in files.items():
        path = out / rel
        if not path.exists() or path.read_bytes() != data:
            problems.append(f"{rel}: differs from a fresh build (run with --force to rebuild)")
            continue
        try:
            trace = read_trace(path)
        except NotImplementedError:
            print(f"{rel}: reader not implemented yet, not read back")
            continue
        problems += [f"{rel}: {issue}" for issue in trace.issues]
        print(f"{rel}: {len(trace.spans)} spans, format {trace.format}, {len(trace.issues)} issues")
    try:
        from tracetui.core.diff.compare import compare_spans  # written in parallel; optional here
    except ImportError:
        compare_spans = None
    for name in ("scheduling", *SCENARIOS):
        try:
            orig, rep = (read_trace(out / name / f"{side}.jsonl") for side in ("original", "replay"))
        except Exception as exc:  # noqa: BLE001 - reported, the check goes on
            problems.append(f"{name}: {exc}")
            continue
        print(f"{name}: semantic differences, pairing spans by seq:")
        for a, b in zip(orig.spans, rep.spans):
            diff = differing(a, b) if a.kind is b.kind and a.name == b.name else ["(different span)"]
            verdict = ""
            if compare_spans is not None and a.kind is b.kind:
                dtype, changes = compare_spans(a, b)
                verdict = f" -> {dtype.value if dtype else 'equal'} {[c.path for c in changes][:4]}"
            print(f"  seq {a.seq}: {a.name:<34} {', '.join(diff) or 'equal'}{verdict}")
        for a in rep.spans[len(orig.spans):]:
            print(f"  seq {a.seq}: {a.name:<34} (replay only)")
        if name in OTLP_SCENARIOS:
            problems += otlp_parity(out / name)
    return problems


def otlp_parity(folder: Path) -> list[str]:
    """Each OTLP span must carry the same semantic values as its JSONL twin, for the fields OTLP can carry."""
    problems = []
    for side in ("original", "replay"):
        jl, ot = read_trace(folder / f"{side}.jsonl"), read_trace(folder / f"{side}.otlp.json")
        if [(s.span_id, s.seq, s.kind) for s in jl.spans] != [(s.span_id, s.seq, s.kind) for s in ot.spans]:
            problems.append(f"{folder.name}/{side}: OTLP spans differ from the JSONL spans (ids, order or kinds)")
            continue
        absent: set[str] = set()
        for a, b in zip(jl.spans, ot.spans):
            sa, sb = semantic(a), semantic(b)
            for k in sa:
                if sb[k] is None and sa[k] is not None:
                    absent.add(f"{a.kind.value}.{k}")
                elif a.kind is not SpanKind.AGENT and canonical_json(sa[k]) != canonical_json(sb[k]):
                    problems.append(f"{folder.name}/{side} seq {a.seq}: {k} differs between JSONL and OTLP")
        print(f"{folder.name}/{side}.otlp.json: same semantics as the JSONL; not carried by OTLP: {', '.join(sorted(absent))}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", type=Path, default=ROOT / "sample_runs", help="output folder (default: sample_runs/)")
    ap.add_argument("--force", action="store_true", help="overwrite existing files")
    ap.add_argument("--check", action="store_true", help="write nothing; compare with disk and read the files back")
    args = ap.parse_args(argv)
    files = build()
    if args.check:
        problems = check(args.out, files)
        for p in problems:
            print("PROBLEM:", p, file=sys.stderr)
        return 1 if problems else 0
    existing = [rel for rel in files if (args.out / rel).exists()]
    if existing and not args.force:
        print("refusing to overwrite (use --force): " + ", ".join(existing), file=sys.stderr)
        return 1
    for rel, data in files.items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {path.relative_to(args.out.parent) if args.out.parent in path.parents else path} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
