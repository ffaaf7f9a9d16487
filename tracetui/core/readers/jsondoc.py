"""Load one JSON document (or a stream of them) the way real trace files need.

Shared by the readers of whole-document formats (Langfuse, inspect-ai,
tau-bench, SWE-agent ...). orjson parses the clean case; a file orjson refuses
is parsed again by the standard library to tell damage it can keep (bare
``NaN``/``Infinity``, integers beyond 64 bits) from a broken file, whose error
names the line and column.

Rules (``../shared/design/formats.md`` §10):

- a UTF-8 byte-order mark at the start is dropped;
- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON, written by Python's
  ``json.dumps`` by default) are kept as the strings ``"NaN"``, ``"Infinity"``,
  ``"-Infinity"`` with one warning per document: a float NaN is unequal to
  itself and would make a span differ from its own copy;
- integers of any size are kept exact (Python ints).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue

__all__ = ["BOM", "iter_json_values", "load_json"]

BOM = b"\xef\xbb\xbf"
_CONSTANTS = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity"}


def _decode_error(path: str, data: bytes, exc: ValueError) -> ReadError:
    """A ``ReadError`` naming the line and column of a stdlib decode error."""
    if isinstance(exc, json.JSONDecodeError):
        return ReadError(path, f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno)
    return ReadError(path, f"not valid JSON: {exc}")


def load_json(path: str, data: bytes, issues: list[ReadIssue], *, line: int | None = None) -> Any:
    """Parse one JSON document.

    Args:
        path: Used in issues and errors only.
        data: The document's bytes (UTF-8, optionally with a BOM).
        issues: Warnings are appended here (non-JSON constants kept as strings).
        line: The line the document starts on, for issues (JSONL callers).

    Returns:
        The parsed value.

    Raises:
        ReadError: the bytes are not JSON (with line and column) or not UTF-8.
    """
    data = data.removeprefix(BOM)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    found: list[str] = []

    def constant(name: str) -> str:
        found.append(name)
        return _CONSTANTS[name]

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(path, f"not UTF-8 text (byte {exc.start})", line=line) from None
    try:
        value = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        err = _decode_error(path, data, exc)
        if line is not None:
            err = ReadError(path, err.reason, line=line + exc.lineno - 1)
        raise err from None
    except RecursionError:
        raise ReadError(path, "JSON nested too deeply to read", line=line) from None
    if found:
        names = ", ".join(sorted(set(found)))
        issues.append(ReadIssue(path, line, "", f"{len(found)} bare {names} value(s) (not JSON) kept as strings", "warning"))
    return value


def iter_json_values(path: str, text: str, issues: list[ReadIssue]) -> list[tuple[int, Any]]:
    """Split concatenated JSON values (pretty-printed objects back to back, as
    OpenTelemetry's ``ConsoleSpanExporter`` prints them, or JSONL) into values.

    Args:
        path: For issues.
        text: The whole file as text (BOM already removed).
        issues: A value that does not parse is reported (``skipped``) and
            reading resumes at the next line that starts with ``{`` or ``[``.

    Returns:
        ``(line, value)`` pairs, ``line`` 1-based where the value starts.
    """
    decoder = json.JSONDecoder(parse_constant=lambda name: _CONSTANTS[name])
    out: list[tuple[int, Any]] = []
    pos, n = 0, len(text)
    line = 1
    while True:
        # skip whitespace, counting lines
        while pos < n and text[pos] in " \t\r\n":
            if text[pos] == "\n":
                line += 1
            pos += 1
        if pos >= n:
            return out
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            issues.append(ReadIssue(path, exc.lineno, "", f"not valid JSON ({exc.msg}, column {exc.colno}); skipped to the next value"))
            nxt = pos
            while True:
                nl = text.find("\n", nxt)
                if nl < 0:
                    return out
                nxt = nl + 1
                if text[nxt:nxt + 1] in ("{", "["):
                    break
            line += text.count("\n", pos, nxt)
            pos = nxt
            continue
        out.append((line, value))
        line += text.count("\n", pos, end)
        pos = end
