"""Typed errors of the core; each carries the data a message needs.

The CLI and the TUI turn them into words; the core never prints.
"""

from __future__ import annotations


class TracetuiError(Exception):
    """Base class of every error tracetui raises on purpose."""


class ReadError(TracetuiError):
    """A trace file cannot be read at all.

    Attributes:
        path: The file.
        line: 1-based line, when one line is to blame.
        where: JSON path or field name, when known.
        reason: What is wrong, with the fix where there is one.
    """

    def __init__(self, path: str, reason: str, *, line: int | None = None, where: str = "") -> None:
        self.path = path
        self.line = line
        self.where = where
        self.reason = reason
        loc = path if line is None else f"{path}:{line}"
        if where:
            loc += f" ({where})"
        super().__init__(f"{loc}: {reason}")


class SourceChanged(ReadError):
    """A span's payload, read on demand from its file (``tracetui.core.readers.lazyspan``), is no longer there:
    the file was truncated or rewritten in place since it was loaded. Open the pair again."""


class FormatNotRecognised(ReadError):
    """No reader recognises the file's content; lists the formats tried."""


class TraceNotFound(ReadError):
    """``--trace-id`` names a trace the file does not hold; lists those it does."""


class HarnessError(TracetuiError):
    """The record/replay harness cannot start or go on: an agent that cannot be loaded, a
    recording made against other tool schemas, an output file that exists. Never a divergence."""


class AgentLoadError(HarnessError):
    """``module:function`` or ``path/to/file.py:function`` does not name a callable agent."""


class SchemaChanged(HarnessError):
    """Strict replay refused: the recording's tool-schema hash differs from the agent's.

    Attributes:
        recorded: The hash in the recording's header.
        current: The agent's hash now.
    """

    def __init__(self, recorded: str, current: str) -> None:
        self.recorded = recorded
        self.current = current
        super().__init__(
            f"the recording was made against tool schemas {recorded}, the agent now has {current}: "
            "a recording made against other schemas is stale. Record the run again, or replay anyway "
            "with --accept-schema-change (noted in the replay header)")


class ReplayDivergence(TracetuiError):
    """The replayed agent left the recording. Raised into the agent at the call site, and always
    written to the replay trace as a span, whether or not the agent catches it.

    Attributes:
        span_id: The span of the replay trace that records the divergence.
    """

    divergence = "divergence"

    def __init__(self, message: str, *, span_id: str | None = None) -> None:
        self.span_id = span_id
        super().__init__(message)


class UnmatchedCall(ReplayDivergence):
    """A call no recorded call matches (the base of ``UnrecordedCall`` and ``WriteMismatch``): its
    ``tool``, its redacted ``arguments`` and the ``nearest`` recorded calls, best first."""

    def __init__(self, tool: str, arguments: object, nearest: list[dict[str, object]], message: str,
                 *, span_id: str | None = None) -> None:
        self.tool = tool
        self.arguments = arguments
        self.nearest = nearest
        super().__init__(message, span_id=span_id)


class UnrecordedCall(UnmatchedCall):
    """A read (tool or retrieval) the recording has no response for. Never sent to a live system.

    Attributes:
        tool: The tool name (``retrieval:INDEX`` for a retrieval).
        arguments: The call's arguments, redacted as the recording is.
        nearest: The nearest recorded calls, best first: ``[{"tool", "arguments", "differs": [...]}]``.
    """

    divergence = "unrecorded_call"


class RecordingExhausted(ReplayDivergence):
    """A read made more often than the recording holds (the recording has ``recorded`` responses for
    this tool and these arguments, all already served)."""

    divergence = "recording_exhausted"

    def __init__(self, tool: str, arguments: object, recorded: int, message: str,
                 *, span_id: str | None = None) -> None:
        self.tool = tool
        self.arguments = arguments
        self.recorded = recorded
        super().__init__(message, span_id=span_id)


class WriteMismatch(UnmatchedCall):
    """A write whose tool and canonical arguments match no recorded write (a changed value, a reversed
    list, a fresh id). Never executed, never simulated.

    Attributes:
        tool: The tool name.
        arguments: The call's arguments, redacted as the recording is.
        nearest: The nearest recorded writes, best first: ``[{"tool", "arguments", "differs": [...]}]``
            where ``differs`` names each differing argument path with both values.
    """

    divergence = "write_mismatch"


class RecordingIncomplete(ReplayDivergence):
    """The recording ends before the point the replay reached: the call the replay made was started
    but never finished in the recording (no output, no end time), or the recording stops (its run did
    not end) before this call. The replay stops here; nothing is served. Outcome
    ``incomplete_recording``, not a divergence of the agent."""

    divergence = "recording_incomplete"

    def __init__(self, tool: str, message: str, *, span_id: str | None = None) -> None:
        self.tool = tool
        super().__init__(message, span_id=span_id)


class RecordingUnservable(ReplayDivergence):
    """The recording holds a response for this call that cannot be served as it is: its output is
    truncated (by the recorder's flag or by the evidence triage uses) or ambiguous (its arguments
    hold the same key twice with different values). Served only with ``accept_truncated``
    (``--accept-truncated``). Outcome ``unservable_recording``."""

    divergence = "recording_unservable"

    def __init__(self, tool: str, reason: str, message: str, *, span_id: str | None = None) -> None:
        self.tool = tool
        self.reason = reason
        super().__init__(message, span_id=span_id)


class InputMismatch(ReplayDivergence):
    """Frozen LLM replay: the rendered messages or model differ from every recorded call, so there is
    no recorded output to serve.

    Attributes:
        differs: Field paths that differ from the recorded call at the same position
            (``messages[0].content``, ``model``, ``params.temperature``).
    """

    divergence = "input_mismatch"

    def __init__(self, differs: list[str], message: str, *, span_id: str | None = None) -> None:
        self.differs = differs
        super().__init__(message, span_id=span_id)


class LiveCallBlocked(HarnessError, ConnectionError):
    """A network connection was attempted inside a strict or fixture replay (or a live tool or model
    call in a mode that forbids it). Replay never reaches a live system."""


class RecordedToolError(TracetuiError):
    """A replayed tool call whose recording is a failure: raised to the agent as the live tool raised it.

    When the recorded ``error_type`` names a Python built-in exception (``TimeoutError``), the raised
    object is also an instance of that class, so the agent's own ``except TimeoutError`` still runs.

    Attributes:
        tool: The tool name.
        error_type: The recorded error class name.
        output: The recorded error body.
    """

    def __init__(self, tool: str, error_type: str | None, output: object) -> None:
        self.tool = tool
        self.error_type = error_type
        self.output = output
        # str() is the recorded message, so an agent that reads it sees what it saw live.
        message = output.get("message") if isinstance(output, dict) else None
        self.message = message if isinstance(message, str) else f"{tool}: recorded {error_type or 'error'}: {output}"
        super().__init__(self.message)

    def __str__(self) -> str:
        # Ahead of the built-in's own __str__ in the MRO (KeyError's would quote the message again).
        return self.message
