"""The harness engine's LLM path: ``ctx.llm``/``ctx.allm`` recorded live, served from the
recording (frozen replay) or made again (model in the loop, ``--llm live``).

``LlmCalls`` is a part of ``tracetui.core.harness.context.Session`` (its base class), kept
apart because the model call has rules of its own (matching on model, rendered messages and
params; the output fields a frozen replay copies) that no tool or retrieval call shares. It
uses the session's ids, spans, redactor, recording and outcome; it holds no state of its own
beyond the LLM call position.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tracetui.core.errors import HarnessError, InputMismatch, RecordingIncomplete, RecordingUnservable
from tracetui.core.harness.cassette import unfinished
from tracetui.core.harness.steps import Live, Steps, arun_steps, copy_value, jsonable, run_steps
from tracetui.core.model import SpanKind, Status
from tracetui.core.readers.otel_messages import normalize_finish_reason

if TYPE_CHECKING:
    from tracetui.core.harness.agent import AgentSpec
    from tracetui.core.harness.cassette import Cassette
    from tracetui.core.harness.redact import Redactor


class LlmCalls:
    """The LLM calls of a ``Session`` (``llm``, ``allm``, ``llm_steps``); see ``Session`` for the
    attributes it reads."""

    if TYPE_CHECKING:  # provided by Session
        spec: AgentSpec
        mode: str
        llm_mode: str
        redactor: Redactor
        cassette: Cassette | None
        outcome: Any
        tool_schema_hash: str
        _llm_position: int

        def _open(self) -> tuple[str, int, int]: ...

        def _emit(self, span_id: str, seq: int, start: int, kind: SpanKind, name: str, data: dict[str, Any], *,
                  status: Status = ..., error_type: str | None = ..., attributes: Mapping[str, Any] | None = ...,
                  parent: str | None = ...) -> Any: ...

    def llm(self, messages: Any, model: str, prompt_id: str | None, prompt_version: str | None,
            params: dict[str, Any]) -> Any:
        """``ctx.llm``: ``llm_steps`` driven from sync code, the assistant message returned."""
        raw, data = run_steps(self.llm_steps(messages, model, prompt_id, prompt_version, params))
        return _llm_value(self.mode, raw, data)

    async def allm(self, messages: Any, model: str, prompt_id: str | None, prompt_version: str | None,
                   params: dict[str, Any]) -> Any:
        """``ctx.allm``: ``llm_steps`` driven from a coroutine (``MODEL`` may be async)."""
        raw, data = await arun_steps(self.llm_steps(messages, model, prompt_id, prompt_version, params))
        return _llm_value(self.mode, raw, data)

    def llm_steps(self, messages: Any, model: str, prompt_id: str | None, prompt_version: str | None,
                  params: dict[str, Any], *, live: Callable[[], Any] | None = None,
                  decode: Callable[[Any], dict[str, Any]] | None = None,
                  inputs: Mapping[str, Any] | None = None) -> Steps[tuple[Any, dict[str, Any]]]:
        """One model call: recorded live, served from the recording (frozen replay) or made again
        (model-in-the-loop replay).

        Args:
            messages: The rendered messages (tracetui's message shape, docs/format.md).
            model, prompt_id, prompt_version, params: As recorded; frozen replay matches model,
                messages and params (and the prompt id/version when given).
            live: The live call (default ``MODEL(messages, model=model, **params)``).
            decode: The live call's value -> the span's output fields (``output``,
                ``finish_reason``, ``usage``, ``response_id`` and any other, such as the wire
                response; ``error_type`` marks the call failed, an HTTP 429 say); unredacted,
                redacted here. Default: the value is the assistant message.
            inputs: More input fields for the span (``provider``, ``tool_schemas_hash``,
                ``prompt_hash``, the wire request...), unredacted; they override the defaults.

        Returns:
            ``(raw, data)``: the live call's own value (None when served from the recording) and
            the span's data as written (redacted; a frozen replay's carries the recorded output
            fields).

        Raises:
            InputMismatch: frozen replay of a call the recording does not hold.
            HarnessError: no live call and no ``MODEL``.
            Whatever the live call raised (recorded as a failed span first).
        """
        span_id, seq, start = self._open()
        position = self._llm_position
        self._llm_position += 1
        red_messages = self.redactor.value(jsonable(messages))
        red_params = self.redactor.value(jsonable(params))
        info = self.spec.model_info
        data: dict[str, Any] = {"model": model}
        if info.get("provider"):
            data["provider"] = info["provider"]
        if prompt_id is not None:
            data["prompt_id"] = prompt_id
        if prompt_version is not None:
            data["prompt_version"] = prompt_version
        data["params"] = red_params
        data["messages"] = red_messages
        data["tool_schemas_hash"] = self.tool_schema_hash
        if inputs:
            data.update(self.redactor.value(jsonable(dict(inputs))))
        name = f"chat {model}"
        if self.mode != "record" and self.llm_mode == "frozen":
            return None, self._llm_served(span_id, seq, start, position, name, data, model, red_messages,
                                          red_params, prompt_id, prompt_version)
        if live is None:
            if self.spec.model is None:
                exc2 = HarnessError(f"the agent called ctx.llm(model={model!r}) but its module declares no MODEL "
                                    "(MODEL(messages, *, model, **params) returning the assistant message)")
                data["output"] = None
                self._emit(span_id, seq, start, SpanKind.LLM, name, data, status=Status.ERROR,
                           error_type="HarnessError")
                raise exc2
            model_fn = self.spec.model
            live = lambda: model_fn(messages, model=model, **params)  # noqa: E731
        self.outcome.model_calls += 1
        try:
            out = yield Live(live, network=self.mode != "record")
        except Exception as exc:
            data["output"] = None
            self._emit(span_id, seq, start, SpanKind.LLM, name, data, status=Status.ERROR,
                       error_type=type(exc).__name__, attributes={"error.message": self.redactor.text(str(exc))})
            raise
        fields = decode(out) if decode is not None else _assistant_fields(out)
        usage = fields.pop("usage", None)
        error_type = fields.pop("error_type", None)
        data.update(self.redactor.value(jsonable(fields)))
        if isinstance(usage, Mapping):
            data["usage"] = jsonable(dict(usage))  # counts, never redacted
        attrs = {} if self.mode == "record" else {"replay.source": "model"}
        if self.spec.model_info.get("version"):
            attrs["gen_ai.response.model"] = self.spec.model_info["version"]
        self._emit(span_id, seq, start, SpanKind.LLM, name, data, attributes=attrs,
                   status=Status.OK if error_type is None else Status.ERROR, error_type=error_type)
        return out, data

    def _llm_served(self, span_id: str, seq: int, start: int, position: int, name: str, data: dict[str, Any],
                    model: str, red_messages: Any, red_params: Any, prompt_id: str | None,
                    prompt_version: str | None) -> dict[str, Any]:
        """Frozen replay: the recorded output for the same model, messages and params, else an
        ``InputMismatch`` (written to the replay trace first)."""
        assert self.cassette is not None
        rec = self.cassette.take_llm(model, red_messages)
        if (rec is not None and unfinished(rec)) or (rec is None and self.cassette.incomplete is not None and position
                                                     >= sum(not unfinished(s) for s in self.cassette.llm_order)):
            why = (f"LLM call #{position + 1} was started but never finished in the recording" if rec is not None
                   else f"the replay reached LLM call #{position + 1} after the end of the recording "
                        f"({self.cassette.incomplete})")
            exc = RecordingIncomplete(name, f"incomplete recording: {why}. The replay stops here; nothing was served.",
                                      span_id=span_id)
            data["output"] = None
            self._emit(span_id, seq, start, SpanKind.LLM, name, data, status=Status.ERROR,
                       error_type="RecordingIncomplete", attributes={"replay.source": "refused",
                                                                     "replay.divergence": exc.divergence})
            self.outcome.divergences.append({"type": exc.divergence, "span_id": span_id, "seq": seq, "tool": name,
                                             "message": str(exc)})
            raise exc
        extra = {"prompt_id": prompt_id, "prompt_version": prompt_version}
        differs: list[str] = []
        if rec is not None:
            if self.cassette.llm_request_differs(rec, red_params or {}, extra):
                _, differs = self.cassette.llm_differences(
                    self.cassette.llm_order.index(rec), model, red_messages, red_params, extra)
        if rec is None or differs:
            if rec is None:
                rec, differs = self.cassette.llm_differences(position, model, red_messages, red_params, extra)
            msg = (f"input mismatch on LLM call #{position + 1} ({name}): frozen replay serves recorded outputs "
                   "only for the same rendered messages, model and params; differs from the recorded call: "
                   + "; ".join(differs[:6]) + (" ..." if len(differs) > 6 else "")
                   + ". Replay with --llm live to call the model again.")
            exc = InputMismatch(differs, msg, span_id=span_id)
            data["output"] = None
            self._emit(span_id, seq, start, SpanKind.LLM, name, data, status=Status.ERROR,
                       error_type="InputMismatch", attributes={
                           "replay.source": "input_mismatch", "replay.divergence": "input_mismatch",
                           "replay.differs": differs,
                           "replay.recorded_span_id": rec.span_id if rec is not None else None})
            self.outcome.divergences.append({"type": "input_mismatch", "span_id": span_id, "seq": seq,
                                             "tool": name, "message": msg})
            raise exc
        dup = rec.attributes.get("tracetui.duplicate_keys")
        if dup and not getattr(self, "accept_truncated", False):
            why = f"its recorded tool-call arguments are ambiguous (the same key twice with different values: {dup})"
            exc = RecordingUnservable(name, why, f"unservable recording: LLM call #{position + 1} ({name}): {why}; a "
                                      "strict replay never serves it (--accept-truncated serves it, marked).",
                                      span_id=span_id)
            data["output"] = None
            self._emit(span_id, seq, start, SpanKind.LLM, name, data, status=Status.ERROR,
                       error_type="RecordingUnservable", attributes={
                           "replay.source": "refused", "replay.divergence": exc.divergence,
                           "replay.recorded_span_id": rec.span_id})
            self.outcome.divergences.append({"type": exc.divergence, "span_id": span_id, "seq": seq, "tool": name,
                                             "message": str(exc)})
            raise exc
        self.outcome.llm_served += 1
        for k, v in rec.data.items():
            if k in _LLM_OUTPUT_FIELDS or k.startswith("wire_response"):
                data[k] = v
        attrs: dict[str, Any] = {"replay.source": "recording", "replay.recorded_span_id": rec.span_id}
        unchecked = self.cassette.llm_unchecked(rec, model, red_messages, red_params or {}, extra)
        if unchecked:
            attrs["replay.unchecked"] = unchecked
            for name_ in unchecked:
                self.llm_unchecked[name_] = self.llm_unchecked.get(name_, 0) + 1
        self._emit(span_id, seq, start, SpanKind.LLM, name, data, status=rec.status, error_type=rec.error_type,
                   attributes=attrs)
        return data


_LLM_OUTPUT_FIELDS = frozenset({"output", "finish_reason", "usage", "response_id"})
"""The output fields a frozen replay copies from the recorded LLM span (with ``wire_response*``)."""


def _assistant_fields(out: Any) -> dict[str, Any]:
    """The output fields of a ``MODEL`` return value (the assistant message): ``output``, and
    ``finish_reason`` (normalised: ``tool_calls`` -> ``tool_call``) and ``usage`` when a mapping."""
    fields: dict[str, Any] = {"output": out}
    if isinstance(out, Mapping):
        fields["finish_reason"] = normalize_finish_reason(out.get("finish_reason")) or (
            "tool_call" if out.get("tool_calls") else "stop")
        if isinstance(out.get("usage"), Mapping):
            fields["usage"] = dict(out["usage"])
    return fields


def _llm_value(mode: str, raw: Any, data: Mapping[str, Any]) -> Any:
    """What ``ctx.llm`` returns: the live value in record mode, else a copy of the (redacted)
    output as written."""
    if mode == "record":
        return raw
    return copy_value(data.get("output"))
