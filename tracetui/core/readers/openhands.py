"""OpenHands event-stream reader: V0 action/observation events and V1 SDK events.

Shapes accepted (``../shared/design/formats.md`` §9.2):

- **V0** (``openhands.events.serialization.event_to_dict``; saved trajectories such as
  OpenHands ``tests/runtime/trajs/*.json``, corpus ``openhands/basic.json``): a JSON array of
  ``{id, timestamp, source: user|agent|environment, message, action, args}`` actions and
  ``{id, timestamp, source, message, observation, content, extras, cause}`` observations,
  where ``cause`` is the id of the action answered. Actions the LLM asked for carry
  ``tool_call_metadata{function_name, tool_call_id, model_response, total_calls_in_response}``,
  ``model_response`` being the raw LiteLLM/OpenAI chat completion; ``llm_metrics`` may hold
  ``response_latencies`` and ``token_usages`` keyed by ``response_id``.
- **V1** (``OpenHands/software-agent-sdk`` ``openhands.sdk.event``): events with a ``kind``
  discriminator: ``SystemPromptEvent{system_prompt, tools}``, ``MessageEvent{source,
  llm_message, llm_response_id}``, ``ActionEvent{thought, reasoning_content, action,
  tool_name, tool_call_id, tool_call{id, name, arguments}, llm_response_id}``,
  ``ObservationEvent{tool_name, tool_call_id, observation{content, is_error}, action_id}``,
  ``UserRejectObservation{rejection_reason, action_id}``, ``AgentErrorEvent{tool_name,
  tool_call_id, error}``, ``ConversationStateUpdateEvent{key, value}``; bookkeeping kinds
  (``Condensation``, ``TokenEvent``, ``LLMCompletionLogEvent``, ``PauseEvent`` ...) are skipped.
- Envelopes: the bare array; an object holding the array under ``trajectory`` (V0 server
  ``GET /api/conversations/{id}/trajectory``), ``history`` (evaluation ``output.jsonl``
  records: ``instance_id``, ``instruction``, ``metadata``, ``test_result``, ``error``),
  ``events`` or ``items`` (V1 agent-server event search pages); a list of such records, or
  JSON Lines of records (one run each) or of events (one run).

Mapping (one run per event list; docs/readers/openhands.md has the table): a synthesized
root ``agent`` span; per distinct model response (``model_response.id`` /
``llm_response_id``) one ``llm`` span whose ``messages`` are rebuilt from the earlier events
(system prompt, user messages, assistant turns, tool results) and ``output`` is
``choices[0].message``; one ``tool`` span per tool-like action whose ``output`` is the
observation naming it in ``cause`` (``action_id`` in V1). Times: ISO strings converted
exactly to ns; OpenHands writes ``datetime.now().isoformat()`` with no UTC offset, read as
UTC.

Modules: this one finds the event lists in a file (envelopes, JSON Lines); ``openhands_run`` maps
one list to spans; ``event_values`` holds the value helpers it shares with ``atif``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tracetui.core.errors import ReadError
from tracetui.core.readers.base import FileReading, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.json_values import load_json_or_jsonl
from tracetui.core.readers.openhands_run import OpenHandsRun

__all__ = ["OpenHandsReader"]

# -- sniffing ----------------------------------------------------------------------------------

_V0_TYPED = re.compile(rb'"(?:action|observation)"\s*:\s*"[a-z_]+"')
_V1_KIND = re.compile(
    rb'"kind"\s*:\s*"(?:SystemPromptEvent|MessageEvent|ActionEvent|ObservationEvent|AgentErrorEvent|'
    rb'UserRejectObservation|ConversationStateUpdateEvent)"')
_V1_FIELDS = (b'"llm_message"', b'"tool_call_id"', b'"system_prompt"', b'"llm_response_id"')

_WRAPPER_KEYS = ("trajectory", "history", "events", "items")


class OpenHandsReader:
    """Reads OpenHands V0 and V1 event lists (see the module docstring)."""

    name = "openhands"

    def sniff(self, head: bytes) -> bool:
        """A JSON array/object whose first 64 KiB hold an OpenHands event: V0 ``"action": "<type>"``
        or ``"observation": "<type>"`` with ``args``/``extras`` and ``source``, or a V1 ``kind``
        naming an SDK event class next to one of its fields."""
        first = head.removeprefix(BOM).lstrip()[:1]
        if first not in (b"[", b"{"):
            return False
        if b'"schema_version"' in head and b'"ATIF-' in head:
            return False
        if b'"source"' in head and _V0_TYPED.search(head) is not None and (b'"args"' in head or b'"extras"' in head):
            return True
        return _V1_KIND.search(head) is not None and any(f in head for f in _V1_FIELDS)

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole file: one run per event list.

        Raises:
            ReadError: not JSON (nor JSON Lines), or no OpenHands event list anywhere.
        """
        return _Reading(path).run(data)


def _is_event(d: Any) -> bool:
    return isinstance(d, dict) and ("action" in d or "observation" in d or "kind" in d)


class _Reading(FileReading):
    """One file: finds the event lists in it and builds a run from each."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.runs: list[RunSpans] = []

    def run(self, data: bytes) -> ReaderOutput:
        values, several = load_json_or_jsonl(self.path, data, self.issues)
        if several:
            self._jsonl(values)
        else:
            self._document(next(values)[1])
        if not self.runs:
            raise ReadError(self.path, "no OpenHands event list found (expected a JSON array of events with "
                            "action/observation or kind, or an object holding one under "
                            + "/".join(_WRAPPER_KEYS) + ")")
        return ReaderOutput(runs=self.runs, issues=self.issues)

    def _document(self, doc: Any) -> None:
        if isinstance(doc, list):
            if any(_is_event(e) for e in doc):
                self._build(doc, "$", None, None, {})
                return
            for i, rec in enumerate(doc):
                self._record(rec, f"$[{i}]", None, f"run-{i + 1}")
            return
        if isinstance(doc, dict):
            if _is_event(doc):
                self._build([doc], "$", None, None, {})
            else:
                self._record(doc, "$", None, None)
            return
        raise ReadError(self.path, f"JSON {type(doc).__name__} is not an OpenHands event list")

    def _record(self, rec: Any, where: str, line: int | None, fallback_id: str | None) -> None:
        if not isinstance(rec, dict):
            self.issue(line, where, f"expected an object holding events, found {type(rec).__name__}; skipped")
            return
        key = next((k for k in _WRAPPER_KEYS if isinstance(rec.get(k), list)), None)
        if key is None:
            self.issue(line, where, "no event list (" + "/".join(_WRAPPER_KEYS) + "); skipped")
            return
        run_id = rec.get("instance_id")
        run_id = str(run_id) if run_id is not None else fallback_id
        self._build(rec[key], f"{where}.{key}", line, run_id, rec)

    def _jsonl(self, values: Iterable[tuple[int | None, Any]]) -> None:
        """JSON Lines: of events (one run), or of records holding event lists (one run each)."""
        events: list[Any] = []
        event_lines: list[int] = []
        for lineno, obj in values:  # lineno: always a line number in JSON Lines
            if _is_event(obj):
                events.append(obj)
                event_lines.append(lineno or 0)
            else:
                self._record(obj, "$", lineno, f"line-{lineno}")
        if events:
            self._build(events, "$", None, None, {}, lines=event_lines)

    def _build(self, events: Any, where: str, line: int | None, run_id: str | None, rec: dict[str, Any],
               lines: list[int] | None = None) -> None:
        b = OpenHandsRun(self, where, line, lines)
        for i, ev in enumerate(events):
            b.event(i, ev)
        run = b.finish(run_id, rec)
        if run is not None:
            self.runs.append(run)
