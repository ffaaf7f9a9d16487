"""The JSON values of a file: one document, JSON Lines, or values back to back.

Shared by every reader of a format that comes more than one way (LangSmith, OpenAI Agents,
OTLP/JSON, OTel span dumps, ATIF, OpenHands, cassettes). Each value is read with
``jsondoc``'s rules (exact integers, NaN kept as a string, duplicate keys reported); this
module decides where the values are, reads JSON Lines one line at a time, and holds back a
torn last line (issue 3, "robustness on real-world damage").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue
from tracetui.core.readers.jsondoc import BOM, bom_issue, careful_load, load_json, may_hide_duplicates, recheck
from tracetui.core.readers.limits import BadLines

__all__ = ["HELD_BACK", "iter_json_values", "load_json_or_jsonl"]

_loads, _dumps = orjson.loads, orjson.dumps


def iter_json_values(path: str, text: str, issues: list[ReadIssue]) -> list[tuple[int, Any]]:
    """Split concatenated JSON values (pretty-printed objects back to back, as
    OpenTelemetry's ``ConsoleSpanExporter`` prints them, or JSONL) into values.

    Args:
        path: For issues.
        text: The whole file as text (BOM already removed).
        issues: A value that does not parse is reported (``skipped``) and
            reading resumes at the next line that starts with ``{`` or ``[``.
            A value holding bare ``NaN``/``Infinity`` (kept as strings) or a
            duplicate key (last value kept) is reported with the line it
            starts on.

    Returns:
        ``(line, value)`` pairs, ``line`` 1-based where the value starts.
    """
    constants: list[str] = []

    def constant(name: str) -> str:
        constants.append(name)
        return name  # kept as the string it names

    decoder = json.JSONDecoder(parse_constant=constant)
    out: list[tuple[int, Any]] = []
    pos, n = 0, len(text)
    line = 1
    while True:
        # skip whitespace, counting lines
        while pos < n and text[pos] in " \t\r\n\ufeff":
            if text[pos] == "\n":
                line += 1
            elif text[pos] == "\ufeff":
                issues.append(bom_issue(path, line))
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
        except RecursionError:
            issues.append(ReadIssue(path, line, "", "JSON nested too deeply to read; skipped"))
            return out
        if constants or may_hide_duplicates(text, pos, end, value):
            # Parsed again with every hook: reports constants, duplicate keys (paths), big integers.
            try:
                value = careful_load(path, text[pos:end].encode("utf-8"), issues, line=line)
            except (UnicodeEncodeError, ReadError):  # lone surrogates: keep the first parse
                if constants:
                    names = ", ".join(sorted(set(constants)))
                    issues.append(ReadIssue(path, line, "", f"{len(constants)} bare {names} value(s) (not JSON) "
                                            "kept as strings", "warning"))
            constants.clear()
        out.append((line, value))
        line += text.count("\n", pos, end)
        pos = end


HELD_BACK = "last line is incomplete (file still being written?); held back"
"""The warning for a torn last line of JSON Lines (no line end, not JSON): loaded by the next read."""


def load_json_or_jsonl(path: str, data: bytes, issues: list[ReadIssue], *,
                       values_back_to_back: bool = False) -> tuple[Iterator[tuple[int | None, Any]], bool]:
    """The JSON values of a file: one document, or one value a line (JSON Lines).

    Rules, shared by every reader of a format that comes both ways (LangSmith,
    OpenAI Agents, OTLP/JSON, OTel span dumps, ATIF, OpenHands, cassettes;
    issue 3, "robustness on real-world damage"):

    - a BOM at the start is dropped with a warning; an empty (or blank) file is
      a ``ReadError``;
    - JSON Lines when the file has more than one line and its first line is a
      whole JSON value (checked first: parsing a big JSON Lines file whole would
      only fail, after reading it all); else one document (``load_json``'s
      rules: orjson, then the standard library for bare NaN, big integers,
      duplicate keys);
    - a document that does not parse is read as JSON Lines after all when its
      first or second non-blank line is a whole value (a JSON Lines file whose
      first line is damaged) or it is one line; with ``values_back_to_back``,
      when its first line is not a value, as values back to back
      (``iter_json_values``: pretty-printed objects one after the other, as
      OpenTelemetry's ``ConsoleSpanExporter`` prints them). Otherwise its
      ``ReadError`` (line and column) is raised: a broken pretty-printed
      document is not read line by line;
    - in JSON Lines every line goes through ``load_json``'s rules (a BOM after
      ``cat``, NaN, big integers, duplicate keys: kept and reported with the
      line); a line that is not JSON is reported (``skipped``) with its number;
      a last line without a line end that is not JSON, after lines that were,
      is held back with a warning (the file is still being written; the next
      read loads it).

    Args:
        path: For issues and errors.
        data: The whole file.
        issues: Issues are appended here, as the values are read.
        values_back_to_back: Accept concatenated values (see above).

    Returns:
        ``(values, several)``: an iterator of ``(line, value)``, read lazily
        for JSON Lines (one line parsed at a time; its issues appended as it
        is reached); ``line`` is 1 for a one-line document, None for a
        multi-line one, the 1-based line of the value otherwise. ``several``
        is False for one document.

    Raises:
        ReadError: empty file, not UTF-8 (values back to back), or nothing in
            it is JSON (the whole-document error, with line and column; raised
            by the iterator, when it ends, for JSON Lines that hold no value).
    """
    if data[:3] == BOM:
        issues.append(bom_issue(path, 1))
        data = data[3:]
    if not data or data.isspace():  # isspace, not strip: no copy of a big file
        raise ReadError(path, "file is empty")
    one_line = _one_line(data)
    if not one_line and _first_line_is_a_value(data):
        return _jsonl_values(path, data, issues, None), True
    try:
        value = _loads(data)
    except orjson.JSONDecodeError:
        try:
            doc = careful_load(path, data, issues, line=1 if one_line else None)
        except ReadError as whole:
            first, second = _first_lines(data)
            if one_line or _is_value(first) or _is_value(second):
                return _jsonl_values(path, data, issues, whole), True
            if values_back_to_back:
                return iter(_back_to_back(path, data, issues)), True
            raise
        return iter([(1 if one_line else None, doc)]), False
    return iter([(1 if one_line else None, recheck(path, data, value, issues, line=1 if one_line else None))]), False


def _jsonl_values(path: str, data: bytes, issues: list[ReadIssue],
                  whole: ReadError | None) -> Iterator[tuple[int | None, Any]]:
    """The values of JSON Lines, one line at a time (see ``load_json_or_jsonl``)."""
    lines = data.split(b"\n")
    last = len(lines)
    torn = not data.endswith(b"\n") and not lines[-1].isspace()
    loaded = 0
    bad = BadLines(path, "JSON Lines")  # 2 million unreadable lines end the read, not 2 million issues
    for lineno, raw in enumerate(lines, 1):
        if not raw or raw.isspace():
            continue
        try:
            value = _loads(raw)
        except orjson.JSONDecodeError:
            found: list[ReadIssue] = []
            try:  # a BOM (files joined with cat), NaN, a number beyond a double: kept and reported
                value = load_json(path, raw, found, line=lineno)
            except ReadError as exc:
                if torn and lineno == last and loaded:
                    issues.append(ReadIssue(path, lineno, "", HELD_BACK, "warning"))
                else:
                    issues.append(ReadIssue(path, lineno, "", f"{exc.reason}; line skipped"))
                    bad.add(exc.reason, loaded, lineno)
                continue
            issues.extend(found)
        else:
            value = recheck(path, raw, value, issues, line=lineno)
        loaded += 1
        yield lineno, value
    if not loaded:
        if whole is None:  # pragma: no cover - the first line parsed when whole is None
            raise ReadError(path, "no line is JSON")
        raise ReadError(path, f"{whole.reason}; and no line of it is JSON either", line=whole.line)


def _back_to_back(path: str, data: bytes, issues: list[ReadIssue]) -> list[tuple[int | None, Any]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(path, f"not UTF-8 text (byte {exc.start})") from None
    got = iter_json_values(path, text, issues)
    if not got:
        raise ReadError(path, "not valid JSON: no JSON value could be read"
                        + (f"; first problem: {issues[0]}" if issues else ""))
    return list(got)


def _one_line(data: bytes) -> bool:
    """Whether the text is one line (a trailing newline and blanks after it allowed; checked
    on the last 64 KiB, so no copy of a big file)."""
    nl = data.find(b"\n")
    return nl < 0 or (len(data) - nl <= 65536 and data[nl:].isspace())


def _first_line_is_a_value(data: bytes) -> bool:
    """Whether the first line parses on its own (the file is JSON Lines when more follows)."""
    try:
        _loads(data[:data.find(b"\n")])
    except orjson.JSONDecodeError:
        return False
    return True


def _first_lines(data: bytes) -> tuple[bytes, bytes]:
    """The first two non-blank lines (``b""`` when there are fewer)."""
    got: list[bytes] = []
    pos, n = 0, len(data)
    while pos < n and len(got) < 2:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl
        if data[pos:end].strip():
            got.append(data[pos:end])
        pos = end + 1
    got += [b"", b""]
    return got[0], got[1]


def _is_value(raw: bytes) -> bool:
    """Whether a line is a JSON value on its own (through ``load_json``'s rules: NaN allowed)."""
    if not raw.strip():
        return False
    try:
        load_json("", raw, [])
    except ReadError:
        return False
    return True
