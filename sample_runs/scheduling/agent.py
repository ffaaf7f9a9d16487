"""The scheduling agent of the sample incident: a small agent written against tracetui's agent context.

Lumen Fibre's scheduling assistant moves a customer's fibre install. It reaches everything through
``ctx`` (tracetui.core.harness.RunContext): the model through ``ctx.llm``, the booking system
through ``ctx.tool``, the time through ``ctx.now``.

- ``run``: prompt ``scheduler.system`` v7, the version of the incident: "Only offer slots on the
  date the customer asks for." On a full Thursday it apologises, although the customer said Friday
  was fine too.
- ``run_fixed``: prompt v8: "if the day is full, check the next working day; book it only if the
  customer already accepted that day".

The model is **scripted**: deterministic rules that read the rendered messages and choose tools as
an LLM would (``MODEL``), so the sample runs offline, with no API key, and the same way every time.
The tools are live in-memory services (``TOOLS``); ``FIXTURE`` is the same booking logic over a
state seeded from a recording's reads, for ``tracetui replay --mode fixture``.

    tracetui record sample_runs/scheduling/agent.py:run --input @sample_runs/scheduling/input.json \\
        --clock 2026-11-03T10:14:02+01:00 --timezone Europe/Paris --out original.jsonl
    tracetui replay original.jsonl sample_runs/scheduling/agent.py:run_fixed --llm live --out replay.jsonl
    tracetui replay original.jsonl sample_runs/scheduling/agent.py:run_fixed --llm live --mode fixture \\
        --seed-file sample_runs/scheduling/fixture_seed.json --out fixture.jsonl
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from datetime import date, timedelta
from typing import Any

AGENT_NAME = "scheduling-agent"
CODE_VERSION = "sample-2"
MODEL_NAME = "scripted-scheduler"
MODEL_INFO = {"id": MODEL_NAME, "version": "scripted-scheduler-rules-2", "provider": "tracetui-sample"}
PARAMS = {"temperature": 0.2, "max_tokens": 600, "seed": 7}

_HEAD = (
    "You are the scheduling assistant of Lumen Fibre, a broadband provider.\n"
    "Today is {today} ({iso}), {time} ({zone}).\n"
    "Signed-in customer: {customer_id}, {email}, phone {phone}.\n"
    "Use get_appointment to find the customer's appointment and list_open_slots to find free technician "
    "slots; reschedule_appointment moves it and send_confirmation tells the customer. "
)
PROMPT_V7 = _HEAD + (
    "Only offer slots on the date the customer asks for. If that date has no free slot, apologise and ask "
    "them to try again later. Never invent a slot. Answer in at most three sentences."
)
PROMPT_V8 = _HEAD + (
    "If the date the customer asks for has no free slot, check the next working day with list_open_slots "
    "and offer its slots; reschedule to it only if the customer has already said that day is acceptable. "
    "Never invent a slot. Answer in at most three sentences."
)
PROMPTS = {"scheduler.system": {"version": "v7", "text": PROMPT_V7}}
READ_TOOLS = {"get_appointment", "list_open_slots"}
SENSITIVE_FIELDS = {"get_appointment": ["street_address"]}
TOOL_SCHEMAS = {
    "get_appointment": {"type": "object", "properties": {"customer_id": {"type": "string"}},
                        "required": ["customer_id"]},
    "list_open_slots": {"type": "object", "properties": {
        "date": {"type": "string", "format": "date"}, "region": {"type": "string"},
        "job_type": {"type": "string"}}, "required": ["date", "region"]},
    "reschedule_appointment": {"type": "object", "properties": {
        "appointment_id": {"type": "string"}, "date": {"type": "string", "format": "date"},
        "start": {"type": "string"}, "end": {"type": "string"}, "idempotency_key": {"type": "string"}},
        "required": ["appointment_id", "date", "start", "end"]},
    "send_confirmation": {"type": "object", "properties": {
        "customer_id": {"type": "string"}, "channel": {"type": "string"}, "message": {"type": "string"}},
        "required": ["customer_id", "channel", "message"]},
}


# ------------------------------------------------------------------ the booking system (live, in memory)
def initial_world() -> dict[str, Any]:
    """The booking system as it was on Tue 3 Nov 2026: Thursday full, Friday open."""
    return {
        "appointments": {
            "APT-77120": {
                "appointment_id": "APT-77120", "customer_id": "C-48213", "type": "fibre_install",
                "status": "booked", "date": "2026-11-10", "start": "08:00", "end": "10:00", "region": "lyon-north",
                "contact": {"email": "jeanne.martin@example.com", "phone": "+33 6 12 34 56 78"},
                "address": {"street_address": "14 rue des Tanneurs", "city": "Lyon"},
                # Typed by the customer in the portal: markup-like text and real ESC bytes (display trap).
                "customer_note": "Ring twice [bold]please[/] - \u001b[31mdog in the garden\u001b[0m",
            },
        },
        "slots": {
            "2026-11-05": {"lyon-north": []},
            "2026-11-06": {"lyon-north": [{"start": "10:00", "end": "12:00"}, {"start": "14:00", "end": "16:00"}]},
        },
        "confirmations": [],
    }


class BookingService:
    """The four tools over one state dict. Live: ``TOOLS``; replay in fixture mode: ``FIXTURE``."""

    def __init__(self, world: dict[str, Any]) -> None:
        self.world = world

    def get_appointment(self, customer_id: str) -> dict[str, Any]:
        for appt in self.world["appointments"].values():
            if appt["customer_id"] == customer_id and appt["status"] == "booked":
                return copy.deepcopy(appt)
        raise KeyError(f"no booked appointment for customer {customer_id}")

    def list_open_slots(self, date: str, region: str, job_type: str = "fibre_install") -> dict[str, Any]:
        slots = self.world["slots"][date][region]
        return {"date": date, "region": region, "job_type": job_type, "slots": copy.deepcopy(slots)}

    def reschedule_appointment(self, appointment_id: str, date: str, start: str, end: str,
                               idempotency_key: str | None = None) -> dict[str, Any]:
        appt = self.world["appointments"][appointment_id]
        day = self.world["slots"].setdefault(date, {}).setdefault(appt["region"], [])
        slot = {"start": start, "end": end}
        if slot not in day:
            return {"status": "rejected", "reason": f"no open slot {start}-{end} on {date}"}
        day.remove(slot)
        appt.update(date=date, start=start, end=end)
        return {"status": "rescheduled", "appointment_id": appointment_id, "date": date, "start": start, "end": end}

    def send_confirmation(self, customer_id: str, channel: str, message: str) -> dict[str, Any]:
        sent = self.world["confirmations"]
        sent.append({"customer_id": customer_id, "channel": channel, "message": message})
        return {"status": "sent", "message_id": f"msg-{len(sent):04d}"}


_LIVE = BookingService(initial_world())
TOOLS = {name: getattr(_LIVE, name) for name in TOOL_SCHEMAS}


class SchedulingFixture(BookingService):
    """Fixture store: the booking state rebuilt from a recording's reads (and a seed file)."""

    def __init__(self) -> None:
        super().__init__({"appointments": {}, "slots": {}, "confirmations": []})

    def seed(self, tool: str, arguments: dict[str, Any], output: Any) -> None:
        if tool == "get_appointment":
            self.world["appointments"][output["appointment_id"]] = copy.deepcopy(output)
        elif tool == "list_open_slots":
            self.world["slots"].setdefault(arguments["date"], {})[arguments["region"]] = copy.deepcopy(output["slots"])

    def load(self, seed: dict[str, Any]) -> None:
        for day, regions in seed.get("slots", {}).items():
            for region, slots in regions.items():
                self.world["slots"].setdefault(day, {})[region] = copy.deepcopy(slots)

    def call(self, tool: str, arguments: dict[str, Any], *, write: bool) -> Any:
        return getattr(self, tool)(**arguments)

    def state(self) -> dict[str, Any]:
        return self.world


FIXTURE = SchedulingFixture


# ------------------------------------------------------------------ the scripted model
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _call_id(messages: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> str:
    seed = f"{len(messages)}:{name}:{json.dumps(arguments, sort_keys=True)}"
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:24]


def _ask(messages: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": _call_id(messages, name, arguments), "name": name, "arguments": arguments}]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "tool_calls": []}


def scripted_model(messages: list[dict[str, Any]], *, model: str, **params: Any) -> dict[str, Any]:
    """A deterministic stand-in for the LLM: reads the rendered messages, returns the assistant message."""
    system = messages[0]["content"]
    user = next(m["content"] for m in messages if m["role"] == "user").lower()
    results: dict[tuple[str, str], Any] = {}
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for call in m.get("tool_calls") or []:
            pending[call["id"]] = (call["name"], call["arguments"])
        if m["role"] == "tool" and m.get("tool_call_id") in pending:
            name, args = pending[m["tool_call_id"]]
            results[(name, args.get("date", ""))] = json.loads(m["content"])
    customer = re.search(r"Signed-in customer: (\S+?),", system).group(1)
    today = date.fromisoformat(re.search(r"\((\d{4}-\d{2}-\d{2})\)", system).group(1))
    appt = results.get(("get_appointment", ""))
    if appt is None:
        return _ask(messages, "get_appointment", {"customer_id": customer})
    if "error" in appt:
        return _say("Sorry, I can't find your appointment right now; please try again later.")
    wanted = next((d for d in _DAYS if d in user), None)
    if wanted is None:
        return _say("Which day would suit you for the install?")
    day = today + timedelta(days=(_DAYS.index(wanted) - today.weekday()) % 7 or 7)
    asked = results.get(("list_open_slots", day.isoformat()))
    if asked is None:
        return _ask(messages, "list_open_slots", {"date": day.isoformat(), "region": appt["region"],
                                                  "job_type": appt["type"]})
    mornings = "morning" in user
    chosen_day, slots = day, asked.get("slots") or []
    if not slots:
        if "check the next working day" not in system:
            return _say(f"I'm sorry, there are no free slots on {wanted.title()} {day.day} November. "
                        "Please try again later.")
        nxt = day + timedelta(days=3 if day.weekday() == 4 else 1)
        other = results.get(("list_open_slots", nxt.isoformat()))
        if other is None:
            return _ask(messages, "list_open_slots", {"date": nxt.isoformat(), "region": appt["region"],
                                                      "job_type": appt["type"]})
        if "error" in other:
            return _say(f"{wanted.title()} is fully booked and I couldn't check {_DAYS[nxt.weekday()].title()} "
                        "right now; please try again later.")
        accepted = _DAYS[nxt.weekday()] in user and "fine" in user
        chosen_day, slots = nxt, other.get("slots") or []
        if not accepted:
            return _say(f"{wanted.title()} is full; {_DAYS[nxt.weekday()].title()} has "
                        f"{', '.join(s['start'] for s in slots)}. Shall I book one?")
    fitting = [s for s in slots if not mornings or s["start"] < "12:00"]
    if not fitting:
        return _say("There is no morning slot on that day; would an afternoon suit you?")
    slot = fitting[0]
    done = results.get(("reschedule_appointment", chosen_day.isoformat()))
    if done is None:
        return _ask(messages, "reschedule_appointment", {
            "appointment_id": appt["appointment_id"], "date": chosen_day.isoformat(),
            "start": slot["start"], "end": slot["end"],
            "idempotency_key": f"resched-{appt['appointment_id']}-{chosen_day.isoformat()}"})
    if done.get("status") != "rescheduled":
        return _say("I couldn't move your install; please try again later.")
    label = f"{_DAYS[chosen_day.weekday()].title()} {chosen_day.day} November, {slot['start']}-{slot['end']}"
    if ("send_confirmation", "") not in results:
        return _ask(messages, "send_confirmation", {
            "customer_id": customer, "channel": "sms", "message": f"Your fibre install is now on {label}."})
    return _say(f"Done: your fibre install is moved to {label}. You'll get a confirmation by text.")


MODEL = scripted_model


# ------------------------------------------------------------------ the agent
def _route(message: str) -> str:
    text = message.lower()
    if any(w in text for w in ("move", "reschedule", "change")):
        return "reschedule_appointment"
    if "cancel" in text:
        return "cancel_appointment"
    return "handoff_human"


def _run(ctx: Any, input: dict[str, Any], prompt: str, version: str) -> dict[str, Any]:
    intent = ctx.decide("route_intent", _route(input["message"]),
                        options=["reschedule_appointment", "cancel_appointment", "handoff_human"])
    if intent != "reschedule_appointment":
        return {"message": "Let me hand you over to a colleague.", "handoff": True}
    now = ctx.now()
    customer = input["customer"]
    system = prompt.format(today=now.strftime("%A %d %B %Y").replace(" 0", " "), iso=now.date().isoformat(),
                           time=now.strftime("%H:%M"), zone=str(now.tzinfo),
                           customer_id=customer["id"], email=customer["email"], phone=customer["phone"])
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": input["message"]}]
    for _turn in range(8):
        reply = ctx.llm(messages, model=MODEL_NAME, prompt_id="scheduler.system", prompt_version=version, **PARAMS)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return {"message": reply["content"]}
        for call in reply["tool_calls"]:
            try:
                result = ctx.tool(call["name"], call["arguments"])
            except Exception as exc:  # the model sees tool failures as tool results, like most agent loops
                result = {"error": type(exc).__name__, "message": str(exc).splitlines()[0]}
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": json.dumps(result, sort_keys=True)})
    return {"message": "Sorry, I couldn't finish this; a colleague will call you."}


def run(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    """The agent as deployed on 3 Nov 2026 (prompt v7)."""
    return _run(ctx, input, PROMPT_V7, "v7")


def run_fixed(ctx: Any, input: dict[str, Any]) -> dict[str, Any]:
    """The fix (prompt v8): offer the next working day, book it if the customer already accepted it."""
    return _run(ctx, input, PROMPT_V8, "v8")


# A declaration set on the agent function wins over the module's (docs/harness.md).
run_fixed.PROMPTS = {"scheduler.system": {"version": "v8", "text": PROMPT_V8}}  # type: ignore[attr-defined]
