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


class FormatNotRecognised(ReadError):
    """No reader recognises the file's content; lists the formats tried."""


class TraceNotFound(ReadError):
    """``--trace-id`` names a trace the file does not hold; lists those it does."""
