"""Readers for the cassette shapes teams write by hand (issue 3, shapes a-e).

Five generic shapes, one reader each (``--format`` name in brackets). They sniff
last and strictly: each requires its own key set on the first records, so a
tau-bench list, an OpenHands event list or an OTLP document is never claimed.
Full mapping tables and decisions: ``docs/readers/cassettes.md``.

(a) tool spans [``cassette-tools``]: ``{"tool", "args", "output"}`` items as a
    JSON array, JSON Lines, or a ``{"spans": [...]}`` / ``{"calls": [...]}`` wrapper.
(b) keyed rows [``cassette-keyed``]: JSON Lines ``{"key", "tool", "args", "result"}``,
    ``key`` = first 16 hex digits of ``sha256(json.dumps({"t": tool, "a": args},
    sort_keys=True))``, optionally after one header line (prompt hash, model id
    and version, tool-schema hash, timestamp).
(c) event stream [``cassette-events``]: ``{runId, sequence, kind, at, version, tool,
    payloadRef, digest}`` with ``kind`` in input, model, tool_call, tool_result,
    policy, outcome; payloads live outside the file.
(d) hashed cassette [``cassette-hashed``]: ``{"runId", "events": [{"seq", "kind":
    "model"|"tool", "name", "requestHash"|"argsHash", "response"}]}``.
(e) recorded run with blobs [``cassette-blobs``]: ``{runId, codeVersion,
    promptVersions, spans: [{spanId, parentSpanId, kind, name, inputRef, outputRef,
    attrs}]}``, payloads in a blob folder next to the file.

Shapes (a)-(d) have no root span: each run gets a synthesized ``agent`` root
named ``cassette`` (common conventions). Span ``seq`` is set here (file or
sequence order); times are integer ns since the epoch (ISO 8601 parsed exactly,
epoch numbers in s / ms / µs / ns by magnitude).

I/O exception (documented): readers are pure, except that (c) and (e) open
payload blobs next to the trace file, using ``path``. Refs are read only inside
the file's folder: an absolute ref or one with a ``..`` component (or a symlink
leading out) is refused with a warning.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, NamedTuple

import orjson

from tracetui.core.canonical import args_hash, canonical_json
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.base import ReaderOutput, RunSpans
from tracetui.core.readers.jsondoc import BOM, load_json, load_json_or_jsonl
from tracetui.core.readers.openai_shapes import choice_output, usage_from
from tracetui.core.readers.otel_attrs import span_fields_from_attributes
from tracetui.core.readers.otel_messages import (
    as_text,
    merge_output,
    normalize_finish_reason,
    normalize_message,
    normalize_messages,
)
from tracetui.core.readers.timefmt import ns_to_iso, time_ns

__all__ = [
    "CASSETTE_READERS",
    "CassetteBlobsReader",
    "CassetteEventsReader",
    "CassetteHashedReader",
    "CassetteKeyedReader",
    "CassetteToolsReader",
    "decode_args",
    "key_rule",
]

ROOT_ID = "root"
ROOT_NAME = "cassette"
"""Id and name of the synthesized root of shapes (a)-(d)."""

_TOOL, _LLM, _AGENT, _OTHER = SpanKind.TOOL, SpanKind.LLM, SpanKind.AGENT, SpanKind.OTHER
_DECISION, _RET, _MEMORY = SpanKind.DECISION, SpanKind.RETRIEVAL, SpanKind.MEMORY
_HEX = re.compile(r"[0-9a-fA-F]{8,64}")
_MAX_ROW_WARNINGS = 10
"""Per-row warnings of one kind reported before they are summed up in one more."""


# --- times ----------------------------------------------------------------------------------

_START_KEYS = ("start_ns", "start", "started_at", "startedAt", "startTime", "start_time", "ts", "timestamp", "at", "time")
_END_KEYS = ("end_ns", "end", "ended_at", "endedAt", "endTime", "end_time")
_DURATION_MS_KEYS = ("duration_ms", "durationMs", "latency_ms", "latencyMs")
_TIME_KEYS = frozenset(_START_KEYS + _END_KEYS + _DURATION_MS_KEYS)


def _times(row: dict[str, Any]) -> tuple[int | None, int | None]:
    """``(start_ns, end_ns)`` from the usual time fields of a row (see ``_START_KEYS``)."""
    if row.keys().isdisjoint(_TIME_KEYS):
        return None, None
    start = end = None
    for k in _START_KEYS:
        if k in row:
            start = time_ns(row[k])
            if start is not None:
                break
    for k in _END_KEYS:
        if k in row:
            end = time_ns(row[k])
            if end is not None:
                break
    if end is None and start is not None:
        for k in _DURATION_MS_KEYS:
            ms = row.get(k)
            if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms) and ms >= 0:
                end = start + int(Decimal(repr(ms)) * 1_000_000)
                break
    return start, end


# --- loading --------------------------------------------------------------------------------


class _Rec(NamedTuple):
    """One record of a file: its line (JSONL) or 1-based index, its JSON path prefix, its value."""

    line: int
    where: str
    value: Any


def _at(prefix: str, field: str) -> str:
    """The JSON path of ``field`` in a record (bare field name for a JSONL line)."""
    return f"{prefix}.{field}" if prefix else field


def _load(path: str, data: bytes, issues: list[ReadIssue]) -> tuple[Any, list[_Rec] | None]:
    """The file as ``(document, None)`` (one JSON value) or ``(None, rows)`` (JSON Lines), by
    ``jsondoc.load_json_or_jsonl`` (BOM, NaN, big integers, duplicate keys; bad lines skipped,
    a torn last line held back).

    Raises:
        ReadError: empty, or neither one JSON document nor JSON Lines.
    """
    values, several = load_json_or_jsonl(path, data, issues)
    if not several:
        return next(values)[1], None
    return None, [_Rec(line or 0, "", v) for line, v in values]


def _records(doc: Any, rows: list[_Rec] | None, wrappers: tuple[str, ...] = ()) -> tuple[list[_Rec], dict[str, Any] | None]:
    """The records of a file and the wrapper object holding them (or None).

    JSON Lines: one record a line. A JSON array: one record an item. An object
    with a list under one of ``wrappers``: its items. Any other object: itself.
    """
    if rows is not None:
        return rows, None
    if isinstance(doc, list):
        return [_Rec(i + 1, f"$[{i}]", v) for i, v in enumerate(doc)], None
    if isinstance(doc, dict):
        for k in wrappers:
            items = doc.get(k)
            if isinstance(items, list):
                return [_Rec(i + 1, f"$.{k}[{i}]", v) for i, v in enumerate(items)], doc
        return [_Rec(1, "$", doc)], None
    return [], None


# --- sniffing -------------------------------------------------------------------------------

_DEC = json.JSONDecoder()
_WS = " \t\r\n"


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _partial(s: str, i: int, depth: int) -> tuple[Any, int, bool]:
    """The JSON value at ``s[i]`` as ``(value, end, complete)``.

    A value cut by the end of the head is decoded partially down to ``depth``
    levels: an object keeps its complete members (and a cut container member,
    partially); an array keeps its complete items (or its cut first item).
    """
    try:
        v, end = _DEC.raw_decode(s, i)
        return v, end, True
    except (ValueError, RecursionError):
        pass
    n = len(s)
    if depth <= 0 or i >= n or s[i] not in "[{":
        return None, i, False
    j = i + 1
    if s[i] == "[":
        items: list[Any] = []
        while True:
            j = _skip(s, j)
            if j >= n or s[j] == "]":
                return items, j, False
            v, j2, ok = _partial(s, j, depth - 1)
            if not ok:
                if not items and isinstance(v, dict):
                    items.append(v)
                return items, j, False
            items.append(v)
            j = _skip(s, j2)
            if j < n and s[j] == ",":
                j += 1
                continue
            return items, j, False
    obj: dict[str, Any] = {}
    while True:
        j = _skip(s, j)
        if j >= n or s[j] != '"':
            return obj, j, False
        try:
            key, j = _DEC.raw_decode(s, j)
        except ValueError:
            return obj, j, False
        j = _skip(s, j)
        if j >= n or s[j] != ":":
            return obj, j, False
        j = _skip(s, j + 1)
        v, j2, ok = _partial(s, j, depth - 1)
        if not ok:
            if isinstance(v, (dict, list)):
                obj[key] = v
            return obj, j, False
        obj[key] = v
        j = _skip(s, j2)
        if j < n and s[j] == ",":
            j += 1
            continue
        return obj, j, False


@functools.lru_cache(maxsize=2)
def _head(head: bytes) -> tuple[str, list[Any]]:
    """The first records of a file head: ``("array", items)``, ``("jsonl", rows)``,
    ``("object", [doc])`` (doc possibly partial) or ``("", [])``. Cached: the five
    sniffs of one head parse it once."""
    text = head.removeprefix(BOM).decode("utf-8", "ignore")
    i = _skip(text, 0)
    if i >= len(text) or text[i] not in "[{":
        return "", []
    v, end, complete = _partial(text, i, 3)
    if text[i] == "[":
        return "array", v if isinstance(v, list) else []
    if not isinstance(v, dict):
        return "", []
    if complete:
        j = _skip(text, end)
        if j < len(text) and text[j] == "{":
            rows: list[Any] = [v]
            while j < len(text) and len(rows) < 64:
                try:
                    w, end = _DEC.raw_decode(text, j)
                except (ValueError, RecursionError):
                    break
                rows.append(w)
                j = _skip(text, end)
            return "jsonl", rows
    return "object", [v]


def _head_records(head: bytes, wrappers: tuple[str, ...]) -> list[Any]:
    """Records at the start of a head: array items, JSONL rows, a wrapper's items or the one object."""
    shape, items = _head(head)
    if shape == "object":
        doc = items[0]
        for k in wrappers:
            if isinstance(doc.get(k), list):
                return doc[k]  # type: ignore[no-any-return]
    return items


def _mostly_dicts_with(records: list[Any], *keys: str) -> bool:
    """Whether at least half of the head's records are objects with ``keys`` (the first is checked
    strictly by each sniff; a damaged record further on does not hide the shape)."""
    n = sum(1 for r in records if isinstance(r, dict) and all(k in r for k in keys))
    return 2 * n >= len(records)


# --- values ---------------------------------------------------------------------------------


def decode_args(v: Any) -> tuple[Any, int]:
    """Arguments as recorded -> ``(arguments, layers)``.

    ``{"city": "Paris"}``, ``'{"city": "Paris"}'`` (a JSON string) and
    ``'"{\\"city\\": \\"Paris\\"}"'`` (a JSON string of a JSON string: double
    encoded) all give the object; ``layers`` counts the string encodings undone
    (0, 1, 2). A string is decoded only when it holds a JSON object or array
    (directly, or inside a JSON string literal); anything else is kept.
    """
    layers = 0
    while isinstance(v, str) and layers < 4:
        s = v.strip()
        if s[:1] not in ("{", "[", '"'):
            break
        try:
            inner = orjson.loads(s)
        except orjson.JSONDecodeError:
            break
        if s[0] == '"' and not (isinstance(inner, str) and inner.lstrip()[:1] in ("{", "[")):
            break
        v = inner
        layers += 1
    return v, layers


_SORT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_MAYBE_JSON_STRING = re.compile(rb'"[\[{ \\\x80-\xff]')
"""In orjson's output, a string whose first character is ``{``, ``[``, whitespace
(escaped: a backslash) or non-ASCII (Unicode whitespace) — the only strings
``canonical.canonicalize`` may parse. A key or an escaped quote can match too:
that only costs the slow path."""


def _hash_args(args: Any) -> str | None:
    """``canonical.args_hash(args)``, without the recursive ``canonicalize`` walk when the
    sorted serialisation shows no string that could hold JSON (same bytes then: JSON-loaded
    keys are already strings). ~3x faster on typical arguments. None when not JSON at all."""
    try:
        raw = orjson.dumps(args, option=_SORT)
    except TypeError:  # integers beyond 64 bits (kept exact by the loader): canonical's own fallback
        raw = None
    try:
        if raw is not None and _MAYBE_JSON_STRING.search(raw) is None:
            return hashlib.sha256(raw).hexdigest()[:16]
        return args_hash(args)
    except (TypeError, ValueError, RecursionError):
        return None


def _error_name(err: Any) -> str:
    if isinstance(err, dict):
        for k in ("type", "name", "error_type", "errorType", "code"):
            v = err.get(k)
            if isinstance(v, str) and v:
                return v
    if isinstance(err, str) and re.fullmatch(r"[A-Za-z_][\w.]*(Error|Exception|Timeout)", err):
        return err
    return "error"


_ERROR_KEYS = frozenset({"error", "is_error", "isError", "status"})


def _failed(row: dict[str, Any], result: Any) -> str | None:
    """The error type when a row (or its result object) marks the call failed, else None.

    Markers: a non-empty ``error`` on the row or on the result object,
    ``is_error``/``isError: true`` (MCP), ``status`` ``error``/``failed``.
    """
    if row.keys().isdisjoint(_ERROR_KEYS) and (type(result) is not dict or result.keys().isdisjoint(_ERROR_KEYS)):
        return None
    err = row.get("error")
    if err not in (None, False, "", {}, []):
        return _error_name(err)
    if row.get("is_error") is True or row.get("isError") is True:
        return "error"
    st = row.get("status")
    if isinstance(st, str) and st.lower() in ("error", "failed", "failure"):
        return "error"
    if isinstance(result, dict):
        err = result.get("error")
        if err not in (None, False, "", {}, []):
            return _error_name(err)
        if result.get("is_error") is True or result.get("isError") is True:
            return "error"
    return None


_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "parts"})


def _assistant(v: Any) -> dict[str, Any]:
    """llm fields from a model response in any common shape.

    A string is the answer text; an OpenAI chat completion (``choices``) gives
    the first choice's message, finish reason, usage, id and model; a message
    (``role``/``content``/``tool_calls``, Anthropic content blocks too) is
    normalised; a list of messages is merged. Anything else becomes the text of
    its JSON, so the answer is never dropped.
    """
    d: dict[str, Any] = {}
    if isinstance(v, str):
        d["output"] = {"role": "assistant", "content": v}
        return d
    if isinstance(v, dict):
        msg, fr = choice_output(v)  # an OpenAI chat completion
        if msg is None and not _MESSAGE_KEYS.isdisjoint(v):  # a message
            msg = merge_output(normalize_message(v, "assistant"))
        if msg is not None:
            d["output"] = msg
        fr = fr or normalize_finish_reason(v.get("finish_reason", v.get("stop_reason")))
        if fr:
            d["finish_reason"] = fr
        usage = usage_from(v.get("usage"))
        if usage:
            d["usage"] = usage
        if isinstance(v.get("model"), str):
            d["model"] = v["model"]
        if isinstance(v.get("id"), str) and ("output" in d):
            d["response_id"] = v["id"]
        if "output" in d:
            return d
    elif isinstance(v, list):
        msgs = normalize_messages(v, "assistant")
        msg = merge_output(msgs) if msgs else None
        if msg is not None:
            d["output"] = msg
            return d
    if v is not None:
        d["output"] = {"role": "assistant", "content": as_text(v)}
    return d


_PARAMS = ("temperature", "top_p", "max_tokens", "max_output_tokens", "seed", "tool_choice", "stop")


def _llm_payload(payload: Any) -> dict[str, Any]:
    """llm data from one model payload: a request and/or a response.

    ``{"messages"|"input": [...], "model", params..., "response"|"output"|"completion": ...}``
    or a bare response (see ``_assistant``).
    """
    if not isinstance(payload, dict):
        return _assistant(payload)
    req = payload.get("request") if isinstance(payload.get("request"), dict) else payload
    d: dict[str, Any] = {}
    msgs = req.get("messages")
    if msgs is None and isinstance(req.get("input"), list):
        msgs = req["input"]
    if msgs is not None:
        norm = normalize_messages(msgs)
        if norm is not None:
            d["messages"] = norm
    params = {k: req[k] for k in _PARAMS if k in req}
    if params:
        d["params"] = params
    if isinstance(req.get("model"), str):
        d["model"] = req["model"]
    resp = None
    for k in ("response", "output", "completion", "result"):
        if k in payload:
            resp = payload[k]
            break
    if resp is None and "messages" not in d and "request" not in payload:
        resp = payload  # the payload is the response itself
    if resp is not None:
        out = _assistant(resp)
        if "model" in d:
            out.pop("model", None)
        d.update(out)
    return d


# --- header ---------------------------------------------------------------------------------

_HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    "run_id": ("run_id", "runId"),
    "code_version": ("code_version", "codeVersion"),
    "prompt_hash": ("prompt_hash", "promptHash", "prompt_sha256", "promptSha256"),
    "tool_schema_hash": ("tool_schema_hash", "toolSchemaHash", "tool_schemas_hash", "toolSchemasHash",
                         "tools_hash", "toolsHash", "schema_hash", "schemaHash"),
    "agent": ("agent", "agent_name", "agentName"),
    "clock": ("clock",),
    "input": ("input",),
    "outcome": ("outcome",),
    "normalization": ("normalization",),
    "redaction": ("redaction",),
}
_TIME_ALIASES = ("started_at", "startedAt", "timestamp", "ts", "recorded_at", "recordedAt", "created_at",
                 "createdAt", "time", "start_ns")
_MODEL_ID = ("model_id", "modelId")
_MODEL_VERSION = ("model_version", "modelVersion", "model_snapshot", "modelSnapshot")
_PROMPT_VERSIONS = ("prompt_versions", "promptVersions")


def _header(obj: dict[str, Any], *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """tracetui/1 header fields from a cassette's header object (camelCase or snake_case).

    ``model`` (string or ``{id|name, version, provider}``) plus ``model_id`` /
    ``model_version`` -> ``model`` {id, version, provider}; ``promptVersions`` ->
    ``prompt_versions``; the first time field -> ``started_at`` and ``start_ns``;
    ``codeVersion`` -> ``code_version``; hash fields -> ``prompt_hash``,
    ``tool_schema_hash``. Other scalar fields are kept under their own names.
    """
    h: dict[str, Any] = {}
    used = set(skip)
    for dst, keys in _HEADER_ALIASES.items():
        for k in keys:
            v = obj.get(k)
            if dst == "agent" and isinstance(v, dict):
                v = v.get("name")  # {"name", "version"}: the name is the header's agent
            if v is None or dst in ("run_id", "code_version", "agent") and not isinstance(v, (str, int)):
                continue
            h[dst] = str(v) if dst in ("run_id", "code_version", "agent") else v
            used.add(k)
            break
    for k in _PROMPT_VERSIONS:
        v = obj.get(k)
        if v is not None:
            h["prompt_versions"] = v if isinstance(v, dict) else {"prompt": v}
            used.add(k)
            break
    model: dict[str, Any] = {}
    m = obj.get("model")
    if isinstance(m, str):
        model["id"] = m
        used.add("model")
    elif isinstance(m, dict):
        for dst, keys in (("id", ("id", "name", "model")), ("version", ("version", "snapshot")), ("provider", ("provider",))):
            for k in keys:
                if isinstance(m.get(k), str):
                    model[dst] = m[k]
                    break
        used.add("model")
    for dst, keys in (("id", _MODEL_ID), ("version", _MODEL_VERSION), ("provider", ("provider", "model_provider"))):
        for k in keys:
            if isinstance(obj.get(k), str):
                model.setdefault(dst, obj[k])
                used.add(k)
                break
    if model:
        h["model"] = model
    for k in _TIME_ALIASES:
        v = obj.get(k)
        if v is None:
            continue
        ns = time_ns(v)
        if ns is None:
            continue  # not a time: kept under its own name below
        used.add(k)
        h["started_at"] = v if isinstance(v, str) and "-" in v else ns_to_iso(ns)  # an ISO string as written
        h["start_ns"] = ns
        break
    for k, v in obj.items():
        if k not in used and k not in h and (v is None or isinstance(v, (str, int, float, bool))):
            h[k] = v
    return h


# --- blobs ----------------------------------------------------------------------------------

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(//)?(.*)", re.DOTALL)
_LOCAL_SCHEMES = frozenset({"blob", "blobs", "payload", "payloads", "ref", "sha256", "cas"})
_TEXT_EXTS = (".txt", ".md", ".log", ".text", ".html", ".csv")


class _Blob(NamedTuple):
    """What resolving a ref gave: ``status`` ok, escape, missing, nofolder, remote, unreadable."""

    status: str
    raw: bytes | None = None
    file: str = ""
    detail: str = ""


class _Blobs:
    """Payload blobs next to a trace file (shapes c and e).

    A ref with a ``/`` is a path relative to the file's folder
    (``blobs/ab12.json``). A bare ref (an id or a hash, optionally ``sha256:``
    or ``blob://`` prefixed) is looked up, in order, in ``<dir>/blobs/``,
    ``<dir>/<stem>.blobs/``, ``<dir>/payloads/`` (exact name, then the name plus
    any extension), then ``<dir>/<ref>``. Absolute refs, refs with a ``..``
    component and files whose real path leaves the folder are refused.
    Folder listings and blobs are read once per file.
    """

    def __init__(self, path: str) -> None:
        self.base = os.path.dirname(os.path.abspath(path))
        self.real_base = os.path.realpath(self.base)
        name = os.path.basename(path)
        stems = [name.rsplit(".", 1)[0], name.split(".", 1)[0]]
        self.folders = [os.path.join(self.base, "blobs")]
        self.folders += [os.path.join(self.base, s + ".blobs") for s in dict.fromkeys(stems) if s]
        self.folders.append(os.path.join(self.base, "payloads"))
        self._listing: dict[str, dict[str, str] | None] = {}
        self._cache: dict[str, _Blob] = {}

    def _stems(self, folder: str) -> dict[str, str] | None:
        """name and name-without-extension -> file name, for one folder (None: no such folder)."""
        if folder not in self._listing:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                self._listing[folder] = None
                return None
            table: dict[str, str] = {}
            for n in names:
                table.setdefault(n, n)
            for n in names:
                if "." in n:
                    table.setdefault(n.split(".", 1)[0], n)
            self._listing[folder] = table
        return self._listing[folder]

    def _inside(self, file: str) -> bool:
        real = os.path.realpath(file)
        return real == self.real_base or real.startswith(self.real_base + os.sep)

    def _read(self, file: str) -> _Blob:
        if not self._inside(file):
            return _Blob("escape", detail="its real path leaves the trace file's folder")
        try:
            with open(file, "rb") as fh:
                return _Blob("ok", fh.read(), file)
        except OSError as exc:
            return _Blob("unreadable", detail=exc.strerror or str(exc))

    def get(self, ref: Any) -> _Blob:
        """Resolve one ref (cached)."""
        if not isinstance(ref, str) or not ref.strip():
            return _Blob("missing", detail="the ref is not a non-empty string")
        hit = self._cache.get(ref)
        if hit is None:
            hit = self._cache[ref] = self._resolve(ref.strip())
        return hit

    def _resolve(self, ref: str) -> _Blob:
        m = _SCHEME.fullmatch(ref)
        if m is not None and len(m[1]) > 1:  # "C:\..." is a drive, not a scheme
            if m[1].lower() not in _LOCAL_SCHEMES:
                return _Blob("remote", detail=f"a {m[1]} URL, not a local file")
            ref = m[3]
        if "\x00" in ref:
            return _Blob("escape", detail="the ref holds a NUL byte")
        parts = re.split(r"[\\/]", ref)
        if os.path.isabs(ref) or ref.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", ref) or ".." in parts:
            return _Blob("escape", detail="absolute or leaving the file's folder (..)")
        if len(parts) > 1:
            file = os.path.join(self.base, *parts)
            if os.path.isfile(file):
                return self._read(file)
            if not os.path.isdir(os.path.dirname(file)):
                return _Blob("nofolder")
            return _Blob("missing")
        found_folder = False
        for folder in self.folders:
            table = self._stems(folder)
            if table is None:
                continue
            found_folder = True
            name = table.get(ref)
            if name is not None:
                return self._read(os.path.join(folder, name))
        file = os.path.join(self.base, ref)
        if os.path.isfile(file):
            return self._read(file)
        return _Blob("missing" if found_folder else "nofolder")


def _parse_blob(blob: _Blob, issues: list[ReadIssue], path: str, line: int | None, where: str) -> Any:
    """A blob's payload: JSON parsed when it is JSON (and not a ``.txt``-like file), else text."""
    raw = (blob.raw or b"").removeprefix(BOM)
    if not blob.file.lower().endswith(_TEXT_EXTS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                return load_json(path, raw, issues, line=line)
            except ReadError:
                pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(ReadIssue(path, line, where, f"blob {os.path.basename(blob.file)} is not UTF-8 text (byte "
                                f"{exc.start}); undecodable bytes replaced", "warning"))
        return raw.decode("utf-8", "replace")


def _digest_problem(digest: Any, raw: bytes, payload: Any) -> str | None:
    """Why a recorded sha256 digest does not match a blob, or None (match, or not a sha256).

    Accepted: ``sha256:<hex>``, ``sha256-<base64>`` (subresource integrity), a
    bare hex string of 16 to 64 digits (a sha256 or its prefix). The digest may
    be of the blob's bytes or of the payload's canonical JSON.
    """
    if not isinstance(digest, str):
        return None
    d = digest.strip()
    low = d.lower()
    if low.startswith("sha256:"):
        want = low[7:]
    elif low.startswith("sha256-"):
        try:
            want = base64.b64decode(d[7:], validate=True).hex()
        except (binascii.Error, ValueError):
            return f"digest {digest!r} is not valid base64"
    elif re.fullmatch(r"[0-9a-f]{16,64}", low):
        want = low
    else:
        return None  # another algorithm: not verified
    got = hashlib.sha256(raw).hexdigest()
    if got.startswith(want):
        return None
    try:
        if hashlib.sha256(canonical_json(payload)).hexdigest().startswith(want):
            return None
    except TypeError:
        pass
    return f"sha256 of the blob is {got[:16]}..., the recorded digest is {d}"


class _PayloadLog:
    """Counts refs that could not be read, so a run without its blob folder is reported once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.nofolder: list[str] = []
        self.warned = 0


def _payload(blobs: _Blobs, ref: Any, log: _PayloadLog, issues: list[ReadIssue], line: int | None,
             where: str, owner: str, digest: Any = None) -> tuple[bool, Any]:
    """Resolve a payload ref: ``(found, value)``. Problems are reported (see ``_Blobs``)."""
    blob = blobs.get(ref)
    path = log.path
    if blob.status == "ok":
        value = _parse_blob(blob, issues, path, line, where)
        problem = _digest_problem(digest, blob.raw or b"", value) if digest is not None else None
        if problem:
            issues.append(ReadIssue(path, line, where, f"{owner}: payload {ref!r}: {problem}; payload kept, it may "
                                    "not be what was recorded", "warning"))
        return True, value
    if blob.status == "nofolder":
        log.nofolder.append(str(ref))
        return False, None
    reason = {"escape": "refused: ", "remote": "not read: ", "missing": "missing: no such blob",
              "unreadable": "unreadable: "}[blob.status] + blob.detail
    issues.append(ReadIssue(path, line, where, f"{owner}: payload ref {ref!r} {reason}; the field stays absent", "warning"))
    return False, None


def _report_nofolder(log: _PayloadLog, issues: list[ReadIssue], run: str, blobs: _Blobs) -> None:
    if log.nofolder:
        n = len(log.nofolder)
        folders = ", ".join(os.path.relpath(f, blobs.base) + "/" for f in blobs.folders)
        issues.append(ReadIssue(
            log.path, None, "", f"run {run}: payloads are not in the file: {n} payload ref(s) (first {log.nofolder[0]!r}) "
            f"and no blob folder next to it ({folders}): content stripped at capture or not shipped; "
            "those fields stay absent", "warning"))
        log.nofolder = []


# --- shared span helpers --------------------------------------------------------------------


def _root(children: list[Span], name: str, trace_id: str | None, data: dict[str, Any] | None = None) -> Span:
    """The synthesized ``agent`` root of a run without one: times span its children's."""
    starts = [s.start_ns for s in children if s.start_ns is not None]
    ends = [s.end_ns if s.end_ns is not None else s.start_ns for s in children]
    ends_known = [e for e in ends if e is not None]
    d: dict[str, Any] = {"agent_name": name}
    if data:
        d.update(data)
    return Span(ROOT_ID, None, 0, _AGENT, name, start_ns=min(starts) if starts else None,
                end_ns=max(ends_known) if ends_known else None, data=d, trace_id=trace_id)


def _ids_unique(children: list[Span]) -> bool:
    """Whether a synthesized root's children have unique ids, none of them the root's: with
    ``seq`` set in order and every parent the root, the run needs no ``finish_spans`` pass."""
    ids = {s.span_id for s in children}
    return len(ids) == len(children) and ROOT_ID not in ids


def _final_answer(spans: list[Span]) -> Any:
    """The run's final answer: the last llm span's output text, when it calls no tool."""
    for s in reversed(spans):
        if s.kind is _LLM:
            out = s.data.get("output")
            if isinstance(out, dict) and not out.get("tool_calls") and out.get("content") is not None:
                return out["content"]
            return None
    return None


def _ordered(recs: list[tuple[_Rec, Any]], label: str, seq_key: str, path: str, issues: list[ReadIssue],
             run: str, *, check_gaps: bool = True) -> list[tuple[_Rec, int]]:
    """Records sorted by their sequence number, duplicates dropped, gaps reported.

    A record without an integer sequence is placed right after the record
    before it in the file (warning). A sequence seen twice keeps the first
    record in file order; the later one is skipped, naming both lines.
    Returns ``(record, sequence)`` pairs.
    """
    keyed: list[tuple[int, int, _Rec, int | None]] = []
    prev = -1
    for i, (rec, seq) in enumerate(recs):
        n = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
        if n is None and isinstance(seq, str) and seq.strip().lstrip("-").isdigit():
            n = int(seq)
        if n is None:
            issues.append(ReadIssue(path, rec.line, _at(rec.where, seq_key), f"run {run}: {label} has no integer "
                                    f"{seq_key} ({seq!r}); placed after the record before it in the file", "warning"))
            keyed.append((prev, i, rec, None))
        else:
            keyed.append((n, i, rec, n))
            prev = n
    keyed.sort(key=lambda t: (t[0], t[1]))
    out: list[tuple[_Rec, int]] = []
    first_line: dict[int, _Rec] = {}
    last: int | None = None
    for sort_seq, _, rec, n in keyed:
        if n is not None:
            if n in first_line:
                earlier = first_line[n]
                same = " (identical: delivered twice)" if earlier.value == rec.value else ""
                issues.append(ReadIssue(path, rec.line, _at(rec.where, seq_key), f"run {run}: {seq_key} {n} already on "
                                        f"line {earlier.line}{same}; this {label} skipped"))
                continue
            first_line[n] = rec
            if check_gaps and last is not None and n > last + 1:
                issues.append(ReadIssue(path, rec.line, _at(rec.where, seq_key), f"run {run}: {seq_key} jumps from "
                                        f"{last} to {n}: {n - last - 1} {label}(s) missing", "warning"))
            last = n
        out.append((rec, sort_seq))
    return out


def _sub(rec: _Rec, key: str, i: int) -> tuple[int, str]:
    """Line and JSON path of item ``i`` of list ``key`` inside a record: a JSONL line keeps its
    line; inside a JSON document the line is the 1-based item index."""
    if not rec.where:
        return rec.line, f"{key}[{i}]"
    return i + 1, f"{rec.where}.{key}[{i}]"


def _run_id(rid: Any, k: int, used: set[str], path: str, rec: _Rec, issues: list[ReadIssue]) -> str:
    """A run's id, unique in the file: ``runId``, else ``run-<n>``; a repeated one gets ``-2``, ``-3`` (warning)."""
    base = str(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid) else f"run-{k + 1}"
    out, n = base, 1
    while out.lower() in used:
        n += 1
        out = f"{base}-{n}"
    if out != base:
        issues.append(ReadIssue(path, rec.line, _at(rec.where, "runId"), f"runId {base!r} already used by an earlier "
                                f"run of the file; this one is {out!r}", "warning"))
    used.add(out.lower())
    return out


def _runs_of(path: str, data: bytes, key: str, shape: str, what: str,
             build: Callable[[_Rec, dict[str, Any], str, list[ReadIssue]], RunSpans]) -> ReaderOutput:
    """Shapes (d) and (e): one run per record holding a ``key`` list (one object, an array of them or
    JSON Lines), built by ``build(record, value, run id, issues)``; other records are skipped.

    Raises:
        ReadError: not JSON, or no ``what`` could be read.
    """
    issues: list[ReadIssue] = []
    recs, _ = _records(*_load(path, data, issues))
    runs: list[RunSpans] = []
    used: set[str] = set()
    for k, rec in enumerate(recs):
        v = rec.value
        if not isinstance(v, dict) or not isinstance(v.get(key), list):
            issues.append(ReadIssue(path, rec.line, rec.where, f"not {shape}; skipped"))
            continue
        runs.append(build(rec, v, _run_id(v.get("runId"), k, used, path, rec, issues), issues))
    _need([s for r in runs for s in r.spans], issues, path, what)
    return ReaderOutput(runs, issues)


def _need(spans: list[Span], issues: list[ReadIssue], path: str, what: str) -> None:
    if not spans:
        raise ReadError(path, f"no {what} could be loaded" + (f"; first problem: {issues[0]}" if issues else ""))


def _warn_rows(issues: list[ReadIssue], path: str, items: list[tuple[int | None, str, str]], summary: str) -> None:
    """Per-row warnings, the first ``_MAX_ROW_WARNINGS`` one by one, the rest summed up."""
    for line, where, msg in items[:_MAX_ROW_WARNINGS]:
        issues.append(ReadIssue(path, line, where, msg, "warning"))
    if len(items) > _MAX_ROW_WARNINGS:
        issues.append(ReadIssue(path, None, "", f"{len(items) - _MAX_ROW_WARNINGS} more {summary}", "warning"))


# --- (a) tool spans -------------------------------------------------------------------------

_TOOLS_WRAPPERS = ("spans", "calls")
_TOOLS_KEYS = frozenset({"tool", "args", "output", "error", "is_error", "isError", "call_id", "id"}) | _TIME_KEYS
_KEYED_KEYS = _TOOLS_KEYS - {"output"} | {"key", "result"}


def _tool_span(span_id: str, seq: int, tool: str, args: Any, has_args: bool, output: Any, has_output: bool,
               row: dict[str, Any], consumed: frozenset[str], line: int, trace_id: str | None) -> Span:
    """One tool span of a cassette row (shapes a and b): arguments decoded, hashed; failure marked."""
    data: dict[str, Any] = {"tool_name": tool}
    cid = row.get("call_id", row.get("id"))
    if isinstance(cid, (str, int)) and not isinstance(cid, bool):
        data["call_id"] = str(cid)
    if has_args:
        data["arguments"] = args
        h = _hash_args(args)
        if h is not None:
            data["args_hash"] = h
    if has_output:
        data["output"] = output
    err = _failed(row, output)
    start, end = _times(row)
    attrs = {} if row.keys() <= consumed else {k: v for k, v in row.items() if k not in consumed}
    status = Status.ERROR if err is not None else Status.OK if has_output else Status.UNSET
    return Span(span_id, ROOT_ID, seq, _TOOL, tool, start_ns=start, end_ns=end, status=status, error_type=err,
                data=data, attributes=attrs, trace_id=trace_id, line=line)


class CassetteToolsReader:
    """Shape (a): a list of tool spans ``{"tool": name, "args": {...}, "output": ...}``.

    Container: a JSON array, JSON Lines, or ``{"spans": [...]}`` / ``{"calls": [...]}``
    (the wrapper's ``runId``/``run_id`` is the run id; its other fields go to the
    header as in ``_header``). Each item is one ``tool`` span, child of a
    synthesized root, in file order (``seq`` 1..n, ids ``call-<index>``).
    ``args`` as an object, a JSON string or a double-encoded JSON string gives
    the same ``arguments`` and ``args_hash``; double encoding is reported once.
    An item marked failed (``error``, ``is_error``) is ``status=error``. Other
    item fields (except times: ``ts``, ``start``, ``end``, ``duration_ms``...)
    go to ``attributes``.
    """

    name = "cassette-tools"

    def sniff(self, head: bytes) -> bool:
        """Records whose first item has ``tool`` (a string), ``args`` and ``output``, and whose
        other head items all have ``tool``; no ``key`` (that is shape b)."""
        recs = _head_records(head, _TOOLS_WRAPPERS)
        if not recs or not isinstance(recs[0], dict):
            return False
        first = recs[0]
        return (isinstance(first.get("tool"), str) and "args" in first and "output" in first and "key" not in first
                and _mostly_dicts_with(recs, "tool"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read the tool spans of one run.

        Raises:
            ReadError: not JSON, or no item is a tool span.
        """
        issues: list[ReadIssue] = []
        doc, rows = _load(path, data, issues)
        recs, wrapper = _records(doc, rows, _TOOLS_WRAPPERS)
        header = _header(wrapper, skip=_TOOLS_WRAPPERS) if wrapper is not None else {}
        run_id = header.get("run_id")
        trace_id = str(run_id) if run_id is not None else None
        spans: list[Span] = []
        double: list[int] = []
        no_output = no_args = 0
        for rec in recs:
            v = rec.value
            if not isinstance(v, dict) or not isinstance(v.get("tool"), str) or not v["tool"]:
                issues.append(ReadIssue(path, rec.line, rec.where, "not a tool span {\"tool\", \"args\", \"output\"} "
                                        "(no tool name); skipped"))
                continue
            args, layers = decode_args(v.get("args"))
            if layers >= 2:
                double.append(rec.line)
            no_args += "args" not in v
            no_output += "output" not in v
            spans.append(_tool_span(f"call-{rec.line - 1}", len(spans) + 1, v["tool"], args, "args" in v,
                                    v.get("output"), "output" in v, v, _TOOLS_KEYS, rec.line, trace_id))
        _need(spans, issues, path, "tool span")
        run = trace_id or "(unnamed)"
        if double:
            issues.append(ReadIssue(path, double[0], "args", f"run {run}: {len(double)} call(s) record args as a "
                                    "double-encoded JSON string (a JSON string of a JSON string); decoded", "warning"))
        if no_args:
            issues.append(ReadIssue(path, None, "", f"run {run}: {no_args} of {len(spans)} tool call(s) have no args "
                                    "recorded; their arguments stay absent", "warning"))
        if no_output:
            issues.append(ReadIssue(path, None, "", f"run {run}: {no_output} of {len(spans)} tool call(s) have no "
                                    "output recorded (not captured); their output stays absent", "warning"))
        root = _root(spans, str(header.get("agent") or ROOT_NAME), trace_id)
        return ReaderOutput([RunSpans(trace_id, [root, *spans], header, in_order=True)], issues)


# --- (b) keyed rows -------------------------------------------------------------------------

_KEY_RULES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("python-default", "json.dumps(..., sort_keys=True): separators (', ', ': '), ASCII escapes",
     {"sort_keys": True}),
    ("compact", "json.dumps(..., sort_keys=True, separators=(',', ':')): compact, ASCII escapes",
     {"sort_keys": True, "separators": (",", ":")}),
    ("python-default-utf8", "json.dumps(..., sort_keys=True, ensure_ascii=False): separators (', ', ': '), raw UTF-8",
     {"sort_keys": True, "ensure_ascii": False}),
    ("compact-utf8", "compact, raw UTF-8 (orjson OPT_SORT_KEYS, JS stable stringify)",
     {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}),
)
_KEY_RULE_TEXT = {name: text for name, text, _ in _KEY_RULES}


def _key_encoder(opts: dict[str, Any]) -> Any:
    """``json.dumps(obj, **opts)`` as one reusable C encoder: ``json.dumps`` with options
    builds a new encoder object on every call (half the cost on small rows).
    Falls back to ``JSONEncoder.encode`` without the C accelerator."""
    enc = json.JSONEncoder(**opts)
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:
        return enc.encode
    basestring = json.encoder.encode_basestring_ascii if enc.ensure_ascii else json.encoder.encode_basestring
    c_enc = c_make(None, enc.default, basestring, None, enc.key_separator, enc.item_separator, enc.sort_keys,
                   enc.skipkeys, enc.allow_nan)
    return lambda obj: "".join(c_enc(obj, 0))


_KEY_ENCODERS = tuple((name, _key_encoder(opts)) for name, _, opts in _KEY_RULES)
"""One encoder a rule, made once (same text as ``json.dumps(obj, **opts)``)."""


def key_rule(key: Any, tool: Any, args: Any) -> str | None:
    """Which serialisation made a shape (b) key, or None when none does.

    The rule: ``key`` is a prefix (16 hex digits by convention; 8 to 64 accepted)
    of ``sha256(json.dumps({"t": tool, "a": args}, sort_keys=True).encode())``.
    Python writers use ``json.dumps``'s default separators ``(", ", ": ")``
    (most hand-written recorders found, e.g. ``hashlib.sha256(json.dumps({"t":
    tool, "a": args}, sort_keys=True).encode()).hexdigest()[:16]``); others pass
    ``separators=(",", ":")``, and JS / orjson writers are compact with raw
    UTF-8. Returns ``python-default``, ``compact``, ``python-default-utf8`` or
    ``compact-utf8`` (tried in that order; the UTF-8 ones only differ when the
    text is not ASCII).
    """
    return _key_rule(key, tool, args)[0]


def _key_rule(key: Any, tool: Any, args: Any) -> tuple[str | None, bool]:
    """``key_rule`` and whether the match tells the escaping: only text with non-ASCII
    characters is serialised differently with and without ``ensure_ascii``."""
    if not isinstance(key, str) or not _HEX.fullmatch(key):
        return None, False
    want = key.lower()
    obj = {"t": tool, "a": args}
    non_ascii: bool | None = None
    for name, encode in _KEY_ENCODERS:
        try:
            text = encode(obj)
        except (TypeError, ValueError):
            return None, False
        if name.endswith("utf8"):
            if text.isascii():
                non_ascii = False
                continue  # same bytes as the ASCII rule already tried
            non_ascii = True
        if hashlib.sha256(text.encode("utf-8")).hexdigest().startswith(want):
            if non_ascii is None:
                non_ascii = "\\u" in text and not json.dumps(obj, sort_keys=True, ensure_ascii=False).isascii()
            return name, non_ascii
    return None, False


def _family(rule: str) -> str:
    return rule.removesuffix("-utf8")


class CassetteKeyedReader:
    """Shape (b): JSON Lines ``{"key", "tool", "args", "result"}``, optionally after a header line.

    - Header: a first line without ``key`` and ``tool``; fields mapped by
      ``_header`` (``prompt_hash``, ``model`` {id, version}, ``tool_schema_hash``,
      ``started_at``/``start_ns``; other scalars kept).
    - Keys: each is checked against ``key_rule``; the rule(s) that matched go to
      the header's ``normalization``; a key matching no rule is kept with a
      warning (recorded under another normalisation); rules mixed in one file
      are reported.
    - Retries: the same key (same tool and canonical arguments) on two
      *adjacent* rows is a retry the writer logged twice: the last row wins
      (its result, status and line) and takes the first row's place in call
      order; the earlier row is dropped with an issue naming both lines. The
      same key on non-adjacent rows is a repeated read: both kept, in call
      order, because a replay serving reads in call order needs every
      recording (a read after a write gets the second one).
    - Spans: one ``tool`` span a kept row (id: the key, ``<key>-2`` for its
      second occurrence...), under a synthesized root; ``key`` and the matched
      ``key_rule`` in ``attributes``.
    """

    name = "cassette-keyed"

    def sniff(self, head: bytes) -> bool:
        """JSON Lines (or an array) whose first row after an optional header has ``key`` (hex),
        ``tool``, ``args`` and ``result``, every further head row having ``key`` and ``tool``."""
        shape, recs = _head(head)
        if shape not in ("jsonl", "array", "object") or not recs or not isinstance(recs[0], dict):
            return False
        if "key" not in recs[0] and "tool" not in recs[0]:
            recs = recs[1:]
        if not recs or not isinstance(recs[0], dict):
            return False
        first = recs[0]
        return (all(k in first for k in ("key", "tool", "args", "result")) and isinstance(first["key"], str)
                and _HEX.fullmatch(first["key"]) is not None and _mostly_dicts_with(recs, "key", "tool"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read the rows of one run.

        Raises:
            ReadError: not JSON, or no row is a cassette row.
        """
        issues: list[ReadIssue] = []
        doc, rows = _load(path, data, issues)
        recs, _ = _records(doc, rows)
        header: dict[str, Any] = {}
        if recs and isinstance(recs[0].value, dict) and "key" not in recs[0].value and "tool" not in recs[0].value:
            header = _header(recs[0].value)
            recs = recs[1:]
        trace_id = str(header["run_id"]) if "run_id" in header else None
        run = trace_id or "(unnamed)"
        spans: list[Span] = []
        matched: list[tuple[str, bool]] = []  # per kept-or-dropped row: rule, whether it tells the escaping
        mismatched: list[tuple[int | None, str, str]] = []
        seen: dict[str, int] = {}
        prev: tuple[tuple[Any, ...], _Rec] | None = None  # (key, tool, args_hash, has args) of the last row, the row
        double = 0
        for rec in recs:
            v = rec.value
            if not isinstance(v, dict) or not isinstance(v.get("tool"), str) or not v["tool"]:
                issues.append(ReadIssue(path, rec.line, rec.where, "not a cassette row {\"key\", \"tool\", \"args\", "
                                        "\"result\"} (no tool name); skipped"))
                continue
            tool, key = v["tool"], v.get("key")
            args, layers = decode_args(v.get("args"))
            double += layers >= 2
            rule, decisive = _key_rule(key, tool, v.get("args"))
            if rule is None and layers and isinstance(key, str):
                rule, decisive = _key_rule(key, tool, args)
            if not isinstance(key, str) or not key:
                mismatched.append((rec.line, _at(rec.where, "key"), "row has no key; kept"))
                key = None
            elif rule is None:
                mismatched.append((rec.line, _at(rec.where, "key"), (f"key {key!r} is not sha256 of "
                                   "{\"t\": tool, \"a\": args} under Python's default json.dumps separators nor "
                                   "compact ones; kept (recorded under another normalisation)")))
            else:
                matched.append((rule, decisive))
            if key is not None:
                n = seen.get(key, 0) + 1
                span_id = key if n == 1 else f"{key}-{n}"
            else:
                span_id = f"row-{rec.line}"
            span = _tool_span(span_id, len(spans) + 1, tool, args, "args" in v, v.get("result"), "result" in v, v,
                              _KEYED_KEYS, rec.line, trace_id)
            if key is not None:
                span.attributes = {"key": key, "key_rule": rule or "unknown", **span.attributes}
            ident = (key, tool, span.data.get("args_hash"), "args" in v)
            if key is not None and prev is not None and prev[0] == ident:
                # a retry logged twice: the last row wins, in the first row's place (the same place: adjacent)
                earlier, old = prev[1], spans[-1]
                issues.append(ReadIssue(
                    path, earlier.line, _at(earlier.where, "key"),
                    f"key {key} written again on the next row (line {rec.line}): a retry; the last row wins and this "
                    "row is dropped" + ("" if old.status is Status.ERROR else " (it had not failed: if the call was "
                                        "deliberately repeated, the recording cannot tell)")))
                span.span_id, span.seq = old.span_id, old.seq
                spans[-1] = span
            else:
                if key is not None:
                    seen[key] = seen.get(key, 0) + 1
                spans.append(span)
            prev = (ident, rec) if key is not None else None
        # span ids: a repeated-read id may clash with a literal "<key>-2" key; finish_spans reports that
        _need(spans, issues, path, "cassette row")
        _warn_rows(issues, path, mismatched, "rows whose key matches no known normalisation")
        self._report_rules(path, matched, spans, header, issues)
        if double:
            issues.append(ReadIssue(path, None, "args", f"run {run}: {double} row(s) record args as a double-encoded "
                                    "JSON string; decoded", "warning"))
        missing = sum(1 for s in spans if "output" not in s.data)
        if missing:
            issues.append(ReadIssue(path, None, "", f"run {run}: {missing} of {len(spans)} row(s) have no result "
                                    "recorded; their output stays absent", "warning"))
        root = _root(spans, str(header.get("agent") or ROOT_NAME), trace_id)
        if root.start_ns is None and "start_ns" in header:
            root.start_ns = header["start_ns"]
        return ReaderOutput([RunSpans(trace_id, [root, *spans], header, in_order=_ids_unique(spans))], issues)


    @staticmethod
    def _report_rules(path: str, matched: list[tuple[str, bool]], spans: list[Span], header: dict[str, Any],
                      issues: list[ReadIssue]) -> None:
        """Header ``normalization`` lines for the key rules found; a warning when they disagree.

        Rows whose text is ASCII only match the ASCII-escaping rule whatever the
        writer; when the rows that do tell (non-ASCII text) all say UTF-8, the
        ASCII-only rows of that separator family are counted as UTF-8 too.
        """
        if not matched:
            return
        decided: dict[str, set[str]] = {}
        for rule, decisive in matched:
            if decisive:
                decided.setdefault(_family(rule), set()).add(rule)
        relabel = {fam: next(iter(rules)) for fam, rules in decided.items() if len(rules) == 1 and
                   next(iter(rules)) != fam}  # only UTF-8 rules relabel the ASCII-only rows
        counts: dict[str, int] = {}
        for rule, _ in matched:
            final = relabel.get(_family(rule), rule)
            counts[final] = counts.get(final, 0) + 1
        for s in spans if relabel else ():
            rule = s.attributes.get("key_rule")
            if isinstance(rule, str) and rule != "unknown" and relabel.get(_family(rule), rule) != rule:
                s.attributes = {**s.attributes, "key_rule": relabel[_family(rule)]}  # type: ignore[dict-item]
        header["normalization"] = list(header.get("normalization") or []) + [
            f"cassette keys: 16-hex sha256 prefix of {{\"t\": tool, \"a\": args}} serialised by {_KEY_RULE_TEXT[r]} "
            f"({n} row(s))" for r, n in counts.items()]
        families = {_family(r) for r in counts}
        if len(families) > 1 or any(len(r) > 1 for r in decided.values()):
            issues.append(ReadIssue(path, None, "key", "keys written under several normalisations (" + ", ".join(
                f"{n} {r}" for r, n in counts.items()) + "): more than one writer?", "warning"))


# --- (c) event stream -----------------------------------------------------------------------

_EVENT_KINDS = frozenset({"input", "model", "tool_call", "tool_result", "policy", "outcome"})
_VERSION_FIELDS = ("prompt", "model", "tools", "policy")
_PAIR_FIELDS = ("idempotencyKey", "operationId")


class CassetteEventsReader:
    """Shape (c): an event stream ``{runId, sequence, kind, at, version, tool, payloadRef, digest}``.

    JSON Lines, a JSON array or ``{"events": [...]}``. Every ``runId`` is one run
    (file order of first appearance). Within a run events are ordered by
    ``sequence``; duplicates (the later skipped) and gaps are reported (gaps
    over the whole stream when several runs share one counter).

    ======================  ===============================================================
    event ``kind``          span
    ======================  ===============================================================
    ``input``               the root's ``input`` and header ``input`` (a later one: ``other`` ``input``)
    ``model``               ``llm`` (payload: request and/or response; model and prompt version from ``version``)
    ``tool_call`` + result  one ``tool`` span, paired by ``tool.idempotencyKey``, else
                            ``operationId``, else adjacency; ``arguments`` / ``output`` from the payloads
    ``policy``              ``decision`` named ``policy``
    ``outcome``             ``other`` named ``outcome`` and header ``outcome``
    ======================  ===============================================================

    ``version`` {prompt, model, tools, policy} -> header ``prompt_versions``
    {"prompt": ...}, ``model`` {version}, ``tool_schema_hash``, ``policy_version``;
    a version that changes mid-run is reported at its sequence. Payloads are not
    inline: ``payloadRef`` is resolved in a blob folder next to the file (see
    ``_Blobs``) and checked against ``digest`` when it is a sha256; without a
    blob folder, one warning per run says payloads are not in the file.
    An inline ``payload`` field is used when present.
    """

    name = "cassette-events"

    def sniff(self, head: bytes) -> bool:
        """Records whose first has ``runId``, ``sequence`` and a ``kind`` of this shape, the others
        ``sequence`` and ``kind``."""
        recs = _head_records(head, ("events",))
        if not recs or not isinstance(recs[0], dict):
            return False
        first = recs[0]
        return ("runId" in first and "sequence" in first and first.get("kind") in _EVENT_KINDS
                and _mostly_dicts_with(recs, "sequence", "kind"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read every run of the stream.

        Raises:
            ReadError: not JSON, or no event could be read.
        """
        issues: list[ReadIssue] = []
        doc, rows = _load(path, data, issues)
        recs, _ = _records(doc, rows, ("events",))
        by_run: dict[str, list[tuple[_Rec, Any]]] = {}
        orphans: list[_Rec] = []
        for rec in recs:
            v = rec.value
            if not isinstance(v, dict) or not isinstance(v.get("kind"), str):
                issues.append(ReadIssue(path, rec.line, rec.where, "not an event {runId, sequence, kind, ...}; skipped"))
                continue
            rid = v.get("runId")
            if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid):
                by_run.setdefault(str(rid), []).append((rec, v.get("sequence")))
            else:
                orphans.append(rec)
        if orphans:
            if len(by_run) == 1:
                only = next(iter(by_run))
                for rec in orphans:
                    issues.append(ReadIssue(path, rec.line, _at(rec.where, "runId"), f"event has no runId; read as part "
                                            f"of the file's only run {only}", "warning"))
                    by_run[only].append((rec, rec.value.get("sequence")))
            else:
                for rec in orphans:
                    issues.append(ReadIssue(path, rec.line, _at(rec.where, "runId"), "event has no runId and the file "
                                            f"holds {len(by_run)} runs; skipped"))
        seqs = [s for evs in by_run.values() for _, s in evs if isinstance(s, int)]
        shared_counter = len(by_run) > 1 and len(seqs) == len(set(seqs))
        blobs = _Blobs(path)
        runs: list[RunSpans] = []
        for rid, evs in by_run.items():
            ordered = _ordered(evs, "event", "sequence", path, issues, rid, check_gaps=not shared_counter)
            runs.append(_EventRun(path, rid, issues, blobs).build(ordered))
        if shared_counter:
            every = sorted(seqs)
            for a, b in itertools.pairwise(every):
                if b > a + 1:
                    issues.append(ReadIssue(path, None, "sequence", f"sequence jumps from {a} to {b} (one counter "
                                            f"shared by the file's runs): {b - a - 1} event(s) missing", "warning"))
        _need([s for r in runs for s in r.spans], issues, path, "event")
        return ReaderOutput(runs, issues)


class _EventRun:
    """Builds one run of shape (c) from its events in sequence order."""

    def __init__(self, path: str, rid: str, issues: list[ReadIssue], blobs: _Blobs) -> None:
        self.path, self.rid, self.issues, self.blobs = path, rid, issues, blobs
        self.log = _PayloadLog(path)
        self.header: dict[str, Any] = {"run_id": rid}
        self.version: dict[str, Any] = {}
        self.last_version: dict[str, Any] | None = None
        self.no_payload = 0
        self.open: dict[int, tuple[Span, dict[str, Any]]] = {}  # open tool_calls by call number, in call order
        self.by_key: dict[tuple[str, Any], list[int]] = {}  # (field, key) -> open call numbers, oldest first
        self.unknown_kinds: set[str] = set()

    def payload(self, rec: _Rec, v: dict[str, Any], seq: int) -> tuple[bool, Any]:
        """The event's payload: inline ``payload``, else the blob ``payloadRef`` names."""
        if "payload" in v:
            return True, v["payload"]
        ref = v.get("payloadRef")
        if ref is None:
            self.no_payload += 1
            return False, None
        return _payload(self.blobs, ref, self.log, self.issues, rec.line, _at(rec.where, "payloadRef"),
                        f"run {self.rid}: event {seq} ({v['kind']})", v.get("digest"))

    def track_version(self, rec: _Rec, v: dict[str, Any], seq: int) -> dict[str, Any]:
        """The versions in force at this event (header set from the first; changes reported)."""
        ver = v.get("version")
        if not isinstance(ver, dict) or ver == self.last_version:
            return self.version
        self.last_version = ver
        for f in _VERSION_FIELDS:
            if f not in ver:
                continue
            new = ver[f]
            if f in self.version and self.version[f] != new:
                self.issues.append(ReadIssue(self.path, rec.line, _at(rec.where, f"version.{f}"), f"run {self.rid}: "
                                             f"version.{f} changes at sequence {seq}: {self.version[f]!r} -> {new!r}; "
                                             "the header keeps the first, each span its own", "warning"))
            elif f not in self.version:
                self.set_header(f, new)
        cur = {**self.version, **ver}
        self.version = cur
        return cur

    def set_header(self, f: str, value: Any) -> None:
        if f == "prompt":
            self.header["prompt_versions"] = value if isinstance(value, dict) else {"prompt": value}
        elif f == "model":
            self.header["model"] = value if isinstance(value, dict) else {"version": value}
        elif f == "tools":
            self.header["tool_schema_hash"] = value
        elif f == "policy":
            self.header["policy_version"] = value

    def build(self, ordered: list[tuple[_Rec, int]]) -> RunSpans:
        spans: list[Span] = []
        root_data: dict[str, Any] = {}
        prev_kind: str | None = None
        first_at: int | None = None
        root_at: int | None = None
        seen_input = False
        for rec, seq in ordered:
            v = rec.value
            kind = v["kind"]
            ver = self.track_version(rec, v, seq)
            at = time_ns(v.get("at"))
            if first_at is None and at is not None:
                first_at = at
            tool = v.get("tool") if isinstance(v.get("tool"), dict) else {}
            sid = f"ev-{seq}" if isinstance(v.get("sequence"), int) else f"line-{rec.line}"
            attrs = {k: v[k] for k in ("payloadRef", "digest") if k in v}
            if kind == "input":
                found, payload = self.payload(rec, v, seq)
                if not seen_input:
                    seen_input = True
                    if found:
                        root_data["input"] = payload
                        self.header["input"] = payload
                    root_at = at
                else:
                    spans.append(Span(sid, ROOT_ID, 0, _OTHER, "input", start_ns=at, data={"input": payload} if found else {},
                                      attributes=attrs, trace_id=self.rid, line=rec.line))
            elif kind == "model":
                found, payload = self.payload(rec, v, seq)
                data = _llm_payload(payload) if found else {}
                if "model" not in data and isinstance(ver.get("model"), str):
                    data["model"] = ver["model"]
                if isinstance(ver.get("prompt"), str):
                    data["prompt_version"] = ver["prompt"]
                name = v.get("name") if isinstance(v.get("name"), str) else \
                    f"chat {data['model']}" if isinstance(data.get("model"), str) else "model"
                status = Status.OK if "output" in data else Status.UNSET
                spans.append(Span(sid, ROOT_ID, 0, _LLM, name, start_ns=at, status=status, data=data,
                                  attributes=attrs, trace_id=self.rid, line=rec.line))
            elif kind == "tool_call":
                found, payload = self.payload(rec, v, seq)
                name = tool.get("name") if isinstance(tool.get("name"), str) else "tool"
                data = {"tool_name": name}
                if isinstance(tool.get("operationId"), (str, int)):
                    data["call_id"] = str(tool["operationId"])
                if found:
                    args, _ = decode_args(payload)
                    data["arguments"] = args
                    h = _hash_args(args)
                    if h is not None:
                        data["args_hash"] = h
                tattrs = {**attrs, **{k: tool[k] for k in ("operationId", "idempotencyKey") if k in tool}}
                span = Span(sid, ROOT_ID, 0, _TOOL, name, start_ns=at, data=data, attributes=tattrs,
                            trace_id=self.rid, line=rec.line)
                spans.append(span)
                n = len(spans)
                self.open[n] = (span, tool)
                for field in _PAIR_FIELDS:
                    if tool.get(field) is not None:
                        self.by_key.setdefault((field, _hashable(tool[field])), []).append(n)
            elif kind == "tool_result":
                found, payload = self.payload(rec, v, seq)
                match = self.pair(tool, prev_kind, rec, seq)
                err = _failed(v, payload if found else None)
                if match is None:
                    self.issues.append(ReadIssue(self.path, rec.line, rec.where, f"run {self.rid}: tool_result at "
                                                 f"sequence {seq} matches no tool_call; kept as a tool span of its own",
                                                 "warning"))
                    name = tool.get("name") if isinstance(tool.get("name"), str) else "tool"
                    data = {"tool_name": name}
                    if found:
                        data["output"] = payload
                    spans.append(Span(sid, ROOT_ID, 0, _TOOL, name, start_ns=at, end_ns=at,
                                      status=Status.ERROR if err else Status.OK if found else Status.UNSET,
                                      error_type=err, data=data, attributes=attrs, trace_id=self.rid, line=rec.line))
                else:
                    span = match
                    data = dict(span.data)
                    if found:
                        data["output"] = payload
                    span.data = data
                    span.end_ns = at
                    span.status = Status.ERROR if err else Status.OK if found else Status.UNSET
                    span.error_type = err
                    if attrs:
                        span.attributes = {**span.attributes, **{f"result_{k}": x for k, x in attrs.items()}}
            elif kind == "policy":
                found, payload = self.payload(rec, v, seq)
                data = {"decision": "policy"}
                if isinstance(payload, dict):
                    for k in ("decision", "action", "verdict", "result", "outcome"):
                        if isinstance(payload.get(k), str):
                            data["decision"] = payload[k]
                            break
                    data["value"] = payload
                elif found and payload is not None:
                    data["value"] = payload
                name = f"policy {tool['name']}" if isinstance(tool.get("name"), str) else "policy"
                spans.append(Span(sid, ROOT_ID, 0, _DECISION, name, start_ns=at, data=data, attributes=attrs,
                                  trace_id=self.rid, line=rec.line))
            elif kind == "outcome":
                found, payload = self.payload(rec, v, seq)
                if found:
                    if "outcome" in self.header:
                        self.issues.append(ReadIssue(self.path, rec.line, rec.where, f"run {self.rid}: another outcome "
                                                     f"at sequence {seq}; the header keeps the last", "warning"))
                    self.header["outcome"] = payload if isinstance(payload, dict) else {"value": payload}
                spans.append(Span(sid, ROOT_ID, 0, _OTHER, "outcome", start_ns=at,
                                  data={"output": payload} if found else {}, attributes=attrs, trace_id=self.rid,
                                  line=rec.line))
            else:
                if kind not in self.unknown_kinds:
                    self.unknown_kinds.add(kind)
                    self.issues.append(ReadIssue(self.path, rec.line, _at(rec.where, "kind"), f"run {self.rid}: unknown "
                                                 f"event kind {kind!r}; read as an other span", "warning"))
                found, payload = self.payload(rec, v, seq)
                spans.append(Span(sid, ROOT_ID, 0, _OTHER, kind, start_ns=at, data={"output": payload} if found else {},
                                  attributes=attrs, trace_id=self.rid, line=rec.line))
            prev_kind = kind
        for span, _ in self.open.values():
            self.issues.append(ReadIssue(self.path, span.line, "", f"run {self.rid}: tool_call {span.span_id} "
                                         f"({span.name}) has no tool_result; its output stays absent", "warning"))
        _report_nofolder(self.log, self.issues, self.rid, self.blobs)
        if self.no_payload:
            self.issues.append(ReadIssue(self.path, None, "", f"run {self.rid}: {self.no_payload} event(s) carry no "
                                         "payload and no payloadRef; their content was not recorded", "warning"))
        for i, s in enumerate(spans):
            s.seq = i + 1
        answer = _final_answer(spans)
        if answer is not None:
            root_data["output"] = answer
        root = _root(spans, ROOT_NAME, self.rid, root_data)
        if root_at is not None and (root.start_ns is None or root_at < root.start_ns):
            root.start_ns = root_at
        if "started_at" not in self.header and first_at is not None:
            self.header["start_ns"] = first_at
            self.header["started_at"] = ns_to_iso(first_at)
        return RunSpans(self.rid, [root, *spans], self.header, in_order=_ids_unique(spans))

    def pair(self, tool: dict[str, Any], prev_kind: str | None, rec: _Rec, seq: int) -> Span | None:
        """The open tool_call a tool_result answers (no longer open afterwards), or None.

        By ``idempotencyKey``, else ``operationId`` (the oldest open call with
        it: a retried write keeps its key, so results answer calls in order),
        else adjacency: the call right before the result, else the latest open
        call of the same tool name (reported: paired by position only).
        """
        for field in _PAIR_FIELDS:
            want = tool.get(field)
            if want is None:
                continue
            numbers = self.by_key.get((field, _hashable(want)))
            while numbers:
                n = numbers.pop(0)
                if n in self.open:
                    return self.open.pop(n)[0]
        if not self.open:
            return None
        keyed = any(tool.get(f) is not None for f in _PAIR_FIELDS)
        if prev_kind == "tool_call" and not keyed:
            return self.open.pop(next(reversed(self.open)))[0]
        name = tool.get("name")
        for n, (span, t) in reversed(self.open.items()):
            if name is None or t.get("name") in (None, name):
                del self.open[n]
                self.issues.append(ReadIssue(self.path, rec.line, rec.where, f"run {self.rid}: tool_result at sequence "
                                             f"{seq} paired with the open tool_call {span.span_id} by position only "
                                             "(no matching idempotencyKey or operationId)", "warning"))
                return span
        return None


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool)) else as_text(v)


# --- (d) hashed cassette --------------------------------------------------------------------


class CassetteHashedReader:
    """Shape (d): ``{"runId", "events": [{"seq", "kind": "model"|"tool", "name", "requestHash"|"argsHash", "response"}]}``.

    One such object, a JSON array of them or JSON Lines of them; each is one run.
    Events in ``seq`` order (duplicates and gaps reported) become ``llm``
    (``model``) / ``tool`` (``tool``) spans under a synthesized root. Only a
    hash of the request / arguments was recorded: a tool span gets it as
    ``args_hash`` and no ``arguments``, an llm span a ``request_hash`` field and
    no ``messages``; reported once per run. ``response`` -> tool ``output`` /
    llm ``output`` (with finish reason, usage, model when the response has
    them). The span name is ``name``; an llm span's ``model`` is the event's or
    the response's ``model`` field, never guessed from ``name``.
    """

    name = "cassette-hashed"

    def sniff(self, head: bytes) -> bool:
        """An object (or array / JSON Lines of them) with ``runId`` and ``events`` whose first event has
        ``seq``, ``kind`` model or tool and ``requestHash`` or ``argsHash``."""
        _shape, docs = _head(head)
        if not docs or not isinstance(docs[0], dict):
            return False
        events = docs[0].get("events")
        if "runId" not in docs[0] or not isinstance(events, list) or not events or not isinstance(events[0], dict):
            return False
        first = events[0]
        return ("seq" in first and first.get("kind") in ("model", "tool")
                and ("requestHash" in first or "argsHash" in first) and _mostly_dicts_with(events, "seq", "kind"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read every run.

        Raises:
            ReadError: not JSON, or no event could be read.
        """
        return _runs_of(path, data, "events", 'a cassette {"runId", "events": [...]}', "cassette event",
                        lambda rec, v, rid, issues: self._run(path, rec, v, rid, issues))

    def _run(self, path: str, rec: _Rec, v: dict[str, Any], rid: str, issues: list[ReadIssue]) -> RunSpans:
        evs: list[tuple[_Rec, Any]] = []
        for i, e in enumerate(v["events"]):
            r = _Rec(*_sub(rec, "events", i), e)
            if not isinstance(e, dict):
                issues.append(ReadIssue(path, r.line, r.where, f"run {rid}: event is not an object; skipped"))
                continue
            evs.append((r, e.get("seq")))
        header = _header(v, skip=("events", "runId"))
        header["run_id"] = rid
        spans: list[Span] = []
        hashed_tools = hashed_llm = no_response = 0
        for r, seq in _ordered(evs, "event", "seq", path, issues, rid):
            e = r.value
            kind = e.get("kind")
            name = e.get("name") if isinstance(e.get("name"), str) else str(kind)
            sid = f"event-{e['seq']}" if isinstance(e.get("seq"), int) else "event" + r.where[r.where.rfind("["):]
            has_resp = "response" in e
            resp = e.get("response")
            no_response += not has_resp
            start, end = _times(e)
            h = e.get("argsHash", e.get("requestHash"))
            attrs = {k: x for k, x in e.items() if k not in ("seq", "kind", "name", "argsHash", "requestHash",
                                                             "response", "model") and k not in _TIME_KEYS}
            if kind == "tool":
                data: dict[str, Any] = {"tool_name": name}
                if h is not None:
                    data["args_hash"] = str(h)
                    hashed_tools += 1
                if has_resp:
                    data["output"] = resp
                err = _failed(e, resp)
                status = Status.ERROR if err else Status.OK if has_resp else Status.UNSET
                spans.append(Span(sid, ROOT_ID, len(spans) + 1, _TOOL, name, start_ns=start, end_ns=end, status=status,
                                  error_type=err, data=data, attributes=attrs, trace_id=rid, line=r.line))
            else:
                if kind != "model":
                    issues.append(ReadIssue(path, r.line, _at(r.where, "kind"), f"run {rid}: event kind {kind!r} is "
                                            "neither model nor tool; read as an other span", "warning"))
                    spans.append(Span(sid, ROOT_ID, len(spans) + 1, _OTHER, name, start_ns=start, end_ns=end,
                                      data={"output": resp} if has_resp else {}, attributes=attrs, trace_id=rid,
                                      line=r.line))
                    continue
                data = _assistant(resp) if has_resp else {}
                if isinstance(e.get("model"), str):
                    data["model"] = e["model"]
                if h is not None:
                    data["request_hash"] = str(h)
                    hashed_llm += 1
                err = _failed(e, None)
                status = Status.ERROR if err else Status.OK if has_resp else Status.UNSET
                spans.append(Span(sid, ROOT_ID, len(spans) + 1, _LLM, name, start_ns=start, end_ns=end, status=status,
                                  error_type=err, data=data, attributes=attrs, trace_id=rid, line=r.line))
        if hashed_tools or hashed_llm:
            issues.append(ReadIssue(path, None, "", f"run {rid}: arguments were recorded only as hashes ({hashed_tools} "
                                    f"tool call(s): argsHash kept as args_hash, no arguments; {hashed_llm} LLM call(s): "
                                    "requestHash kept as request_hash, no messages); argument changes cannot be "
                                    "shown", "warning"))
        if no_response:
            issues.append(ReadIssue(path, None, "", f"run {rid}: {no_response} event(s) have no response recorded; "
                                    "their output stays absent", "warning"))
        answer = _final_answer(spans)
        root = _root(spans, str(header.get("agent") or ROOT_NAME), rid, {"output": answer} if answer is not None else None)
        return RunSpans(rid, [root, *spans], header, in_order=_ids_unique(spans))


# --- (e) recorded run with blobs ------------------------------------------------------------

_KINDS: dict[str, SpanKind] = {
    **{k.value: k for k in SpanKind},
    # OpenInference span kinds (upper case in the spec)
    "retriever": _RET, "chain": _OTHER, "embedding": _OTHER, "reranker": _OTHER, "evaluator": _OTHER,
    "guardrail": _DECISION, "prompt": _OTHER, "unknown": _OTHER,
    # OTel GenAI operation names and common words
    "chat": _LLM, "model": _LLM, "generation": _LLM, "completion": _LLM, "text_completion": _LLM,
    "generate_content": _LLM, "execute_tool": _TOOL, "function": _TOOL, "tool_call": _TOOL,
    "invoke_agent": _AGENT, "workflow": _AGENT, "run": _AGENT, "retrieve": _RET,
    "policy": _DECISION, "router": _DECISION, "routing": _DECISION, "handoff": _DECISION, "plan": _DECISION,
    "planner": _DECISION, "span": _OTHER, "task": _OTHER, "step": _OTHER, "embeddings": _OTHER,
}
"""Span ``kind`` values of shape (e), lower-cased: tracetui kinds, OpenInference kinds
(``RETRIEVER`` -> retrieval; guardrails are decisions, as the common conventions say),
GenAI operation names and common words. Anything else: ``other`` with a warning."""
_E_SPAN_KEYS = frozenset({"runId", "spanId", "parentSpanId", "kind", "name", "inputRef", "outputRef", "attrs",
                          "status", "error", "errorType"}) | _TIME_KEYS


def _documents(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if isinstance(item, dict):
            d = item.get("document") if isinstance(item.get("document"), dict) else item
            text = d.get("text", d.get("content", d.get("page_content")))
            did = d.get("id", d.get("doc_id"))
            out.append({"id": None if did is None else str(did), "score": d.get("score"),
                        "text": text if text is None or isinstance(text, str) else as_text(text)})
        else:
            out.append({"id": None, "score": None, "text": item if isinstance(item, str) else as_text(item)})
    return out


def _kind_data(kind: SpanKind, name: str, has_in: bool, inp: Any, has_out: bool, out: Any,
               attributes: dict[str, Any]) -> dict[str, Any]:
    """A span's kind section from its input and output payloads (shape e)."""
    d: dict[str, Any] = {}
    if kind is _LLM:
        if has_in:
            d.update(_llm_payload({"request": inp} if isinstance(inp, dict) else {"messages": inp}
                                  if isinstance(inp, list) else {"messages": [inp]}))
        if has_out:
            d.update(_assistant(out))
    elif kind is _TOOL:
        d["tool_name"] = name
        if has_in:
            args, _ = decode_args(inp)
            d["arguments"] = args
            h = _hash_args(args)
            if h is not None:
                d["args_hash"] = h
        if has_out:
            d["output"] = out
    elif kind is _RET:
        if has_in:
            d["query"] = inp.get("query", inp) if isinstance(inp, dict) else inp
        if has_out:
            docs = _documents(out.get("documents") if isinstance(out, dict) and "documents" in out else out)
            if docs is not None:
                d["documents"] = docs
            else:
                attributes["output"] = out
    elif kind is _DECISION:
        d["decision"] = name
        if has_out:
            d["value"] = out
        if has_in:
            if isinstance(inp, list):
                d["options"] = inp
            else:
                attributes["input"] = inp
    elif kind is _MEMORY:
        d["operation"] = name
        if has_in:
            d["query"] = inp
        if has_out:
            d["value"] = out
    else:
        if kind is _AGENT:
            d["agent_name"] = name
        if has_in:
            d["input"] = inp
        if has_out:
            d["output"] = out
    return d


class CassetteBlobsReader:
    """Shape (e): a recorded run ``{runId, codeVersion, promptVersions, spans: [...]}`` with payload blobs.

    One such object, a JSON array of them or JSON Lines of them; each is one run.
    Header: ``runId`` -> ``run_id``, ``codeVersion`` -> ``code_version``,
    ``promptVersions`` -> ``prompt_versions`` (and the other ``_header`` fields).
    Spans keep their ``spanId`` / ``parentSpanId`` tree; ``kind`` is mapped by
    ``_KINDS`` (tracetui, OpenInference and GenAI names). ``inputRef`` /
    ``outputRef`` name payload blobs (see ``_Blobs``), JSON-parsed when JSON,
    else text, mapped per kind: llm input -> ``messages`` / params, output ->
    ``output`` message; tool -> ``arguments`` (+ ``args_hash``) / ``output``;
    retrieval -> ``query`` / ``documents``; decision -> ``options`` / ``value``;
    memory -> ``query`` / ``value``; agent and other -> ``input`` / ``output``.
    ``attrs`` go through ``span_fields_from_attributes`` (OTel / OpenInference
    attributes fill model, usage...; the rest stays in ``attributes``). A blob
    that is missing is a warning naming the ref and the span; the field stays
    absent. ``seq``: from start times when every span has one, else a pre-order
    walk of the tree in file order (parents before children).
    """

    name = "cassette-blobs"

    def sniff(self, head: bytes) -> bool:
        """An object (or array / JSON Lines of them) with ``runId`` and ``spans`` whose first span has
        ``spanId`` and ``kind``, with ``inputRef``/``outputRef`` on a span or ``codeVersion``/``promptVersions``."""
        _, docs = _head(head)
        if not docs or not isinstance(docs[0], dict):
            return False
        doc = docs[0]
        spans = doc.get("spans")
        if "runId" not in doc or not isinstance(spans, list) or not spans or not isinstance(spans[0], dict):
            return False
        if not ("spanId" in spans[0] and "kind" in spans[0]) or not _mostly_dicts_with(spans, "spanId"):
            return False
        return ("codeVersion" in doc or "promptVersions" in doc
                or any("inputRef" in s or "outputRef" in s for s in spans))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read every run, with its payloads from the blob folder next to ``path``.

        Raises:
            ReadError: not JSON, or no span could be read.
        """
        blobs = _Blobs(path)
        return _runs_of(path, data, "spans", 'a recorded run {"runId", "spans": [...]}', "span",
                        lambda rec, v, rid, issues: self._run(path, rec, v, rid, issues, blobs))

    def _run(self, path: str, rec: _Rec, v: dict[str, Any], rid: str, issues: list[ReadIssue],
             blobs: _Blobs) -> RunSpans:
        header = _header(v, skip=("spans",))
        header["run_id"] = rid
        log = _PayloadLog(path)
        spans: list[Span] = []
        unknown: set[str] = set()
        other_run = 0
        for i, s in enumerate(v["spans"]):
            line, where = _sub(rec, "spans", i)
            if not isinstance(s, dict):
                issues.append(ReadIssue(path, line, where, f"run {rid}: span is not an object; skipped"))
                continue
            sid = s.get("spanId")
            if not isinstance(sid, (str, int)) or isinstance(sid, bool) or sid == "":
                issues.append(ReadIssue(path, line, _at(where, "spanId"), f"run {rid}: span has no spanId; read as "
                                        f"span-{i}", "warning"))
                sid = f"span-{i}"
            sid = str(sid)
            parent = s.get("parentSpanId")
            parent = None if parent in (None, "") or isinstance(parent, bool) else str(parent)
            if s.get("runId") is not None and str(s["runId"]) != rid:
                other_run += 1
            raw_kind = s.get("kind")
            kind = _KINDS.get(raw_kind.lower()) if isinstance(raw_kind, str) else None
            if kind is None:
                kind = _OTHER
                label = str(raw_kind)
                if label not in unknown:
                    unknown.add(label)
                    issues.append(ReadIssue(path, line, _at(where, "kind"), f"run {rid}: span kind {raw_kind!r} is not "
                                            "a known kind; read as other", "warning"))
            name = s.get("name") if isinstance(s.get("name"), str) and s["name"] else str(raw_kind or "span")
            owner = f"span {sid} ({name})"
            has_in = has_out = False
            inp = out = None
            if s.get("inputRef") is not None:
                has_in, inp = _payload(blobs, s["inputRef"], log, issues, line, _at(where, "inputRef"), owner)
            if s.get("outputRef") is not None:
                has_out, out = _payload(blobs, s["outputRef"], log, issues, line, _at(where, "outputRef"), owner)
            status, err = self._status(s)
            raw_attrs = s.get("attrs") if isinstance(s.get("attrs"), dict) else {}
            attributes: dict[str, Any]
            base: dict[str, Any] = {}
            if raw_attrs:
                akind, adata, leftover, aerr = span_fields_from_attributes(
                    name, raw_attrs, status_error=status is Status.ERROR)
                if akind is kind:
                    base, attributes = adata, leftover
                else:
                    attributes = dict(raw_attrs)
                err = err or aerr
            else:
                attributes = {}
            extra = {k: x for k, x in s.items() if k not in _E_SPAN_KEYS}
            if extra:
                attributes.update(extra)
            data = {**base, **_kind_data(kind, name, has_in, inp, has_out, out, attributes)}
            if kind is _LLM and "model" not in data and isinstance(raw_attrs.get("model"), str):
                data["model"] = raw_attrs["model"]
            if kind is _TOOL:
                for k in ("tool_name", "toolName", "tool"):
                    if isinstance(raw_attrs.get(k), str):
                        data["tool_name"] = raw_attrs[k]
                        break
            start, end = _times(s)
            spans.append(Span(sid, parent, -1, kind, name, start_ns=start, end_ns=end, status=status, error_type=err,
                              data=data, attributes=attributes, trace_id=rid, line=line))
        _report_nofolder(log, issues, rid, blobs)
        if other_run:
            issues.append(ReadIssue(path, rec.line, _at(rec.where, "spans"), f"run {rid}: {other_run} span(s) name another runId; read "
                                    "as part of this run", "warning"))
        if spans and any(s.start_ns is None for s in spans):
            _preorder(spans)
        return RunSpans(rid, spans, header)

    @staticmethod
    def _status(s: dict[str, Any]) -> tuple[Status, str | None]:
        st = s.get("status")
        if isinstance(st, dict):
            st = st.get("code", st.get("status_code"))
        err = s.get("errorType")
        if isinstance(err, str) and err:
            return Status.ERROR, err
        if s.get("error") not in (None, False, "", {}):
            return Status.ERROR, _error_name(s["error"])
        if isinstance(st, str):
            low = st.lower().removeprefix("status_code_")
            if low in ("error", "failed", "failure"):
                return Status.ERROR, None
            if low in ("ok", "success", "succeeded"):
                return Status.OK, None
        if st == 2:
            return Status.ERROR, None
        if st == 1:
            return Status.OK, None
        return Status.UNSET, None


def _preorder(spans: list[Span]) -> None:
    """Set ``seq`` by a pre-order walk of the tree (siblings in file order): parents before children."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[Span]] = {}
    for s in spans:
        key = s.parent_id if s.parent_id in ids and s.parent_id != s.span_id else None
        children.setdefault(key, []).append(s)
    n = 0
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        s = stack.pop()
        if s.span_id in seen:
            continue
        seen.add(s.span_id)
        s.seq = n
        n += 1
        stack.extend(reversed(children.get(s.span_id, [])))
    for s in spans:  # spans in parent cycles: after the rest, file order (finish_spans breaks the cycle)
        if s.span_id not in seen:
            seen.add(s.span_id)
            s.seq = n
            n += 1


CASSETTE_READERS = (CassetteToolsReader, CassetteKeyedReader, CassetteEventsReader, CassetteHashedReader,
                    CassetteBlobsReader)
"""The five readers, in the order the registry appends them (all sniff strictly, so order is not load-bearing)."""
