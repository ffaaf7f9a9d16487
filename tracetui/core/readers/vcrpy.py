"""vcrpy cassette reader: recorded HTTP interactions as one run of LLM, tool and HTTP spans.

Shape (``../shared/design/formats.md`` §8; vcrpy ``vcr/serializers``, ``vcr/stubs``)::

    interactions:
    - request:  {body, headers, method, uri}
      response: {body: {string}, headers, status: {code, message}}
    version: 1

YAML (``yaml.CSafeLoader`` when libyaml is there, else ``yaml.SafeLoader``: no Python
object tags) or vcrpy's JSON serializer. Bodies may be text, a YAML block string, null or
``!!binary`` (bytes; gzip/deflate decompressed when ``content-encoding`` says so or the
bytes start with the gzip magic). Older httpx cassettes write the response as
``{status_code, headers, content}``.

Mapping (one run per cassette, under a synthesized ``agent`` root named ``cassette``):

- an OpenAI chat-completions call (path ending ``/chat/completions``), an Anthropic
  messages call (``/messages``) or an OpenAI Responses call (``/responses``) with a JSON
  request body -> one ``llm`` span: ``model``, ``params`` (the request minus messages,
  tools and model), ``messages``, ``tool_schemas_hash`` (``args_hash`` of ``tools``),
  ``output``, ``finish_reason``, ``usage``, ``response_id``. A streamed answer (SSE
  ``data:`` chunks) is reassembled: content deltas concatenated in order, tool-call
  deltas merged by their ``index`` (parallel calls arrive interleaved), finish reason and
  usage from the chunks;
- the tool results an agent sent back between two LLM calls (``tool`` messages in the
  next request whose ``tool_call_id`` names a tool call of the previous answer) ->
  ``tool`` spans placed before that request, with the call's name and arguments and the
  message's content as ``output``; attribute ``tracetui.reconstructed_from`` =
  ``next_request`` says they are inferred, not recorded;
- any other interaction -> an ``other`` span named ``METHOD host/path``;
- an HTTP status >= 400 -> ``status=error``, ``error_type`` = the status code.

Cassettes are often not scrubbed: only a fixed list of harmless headers is copied to
attributes (never ``authorization``, ``cookie``, ``set-cookie``, ``openai-organization``,
``openai-project``, api keys), and secret-looking query parameters of the URL are masked.
Cassettes record no timing: spans have no times (``seq`` is the interaction order).

Size: one format family's reader (LLM calls, reconstructed tool calls, other HTTP) in one place.
"""

from __future__ import annotations

import gzip
import re
import zlib
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import yaml

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.base import FileReading, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM, load_json
from tracetui.core.readers.openai_shapes import (
    choice_output,
    response_items,
    responses_output,
    usage_from,
)
from tracetui.core.readers.otel_messages import (
    Message,
    normalize_finish_reason,
    normalize_message,
    normalize_messages,
)
from tracetui.core.readers.timefmt import ns_to_iso

__all__ = ["VcrpyReader", "assemble_chat_stream", "sse_data"]

_YAML_KEY = re.compile(rb"(?m)^interactions:[ \t]*(?:#.*)?\r?$")
_YAML_ITEM = re.compile(r"(?m)^-[ \n\r]")
class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, with integers Python refuses to convert (over 4,300 digits) kept as text."""

    def huge_int(self, node: yaml.ScalarNode) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_int(self, node)  # type: ignore[arg-type]
        except ValueError:
            self.kept_as_text.append(node.start_mark.line + 1)
            return str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.huge_int)

YAML_NODE_BUDGET = 5_000_000
"""The most nodes a cassette's YAML may expand to once its aliases are followed: a real cassette of
hundreds of MB stays far below; 10 KB of nested aliases would otherwise take many GB."""


def _expanded_size(root: Any, budget: int) -> int:
    """How many nodes ``root`` (a composed YAML node graph, aliases shared) stands for once every
    alias is expanded, counting up to just past ``budget`` (each distinct node sized once, bottom up)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes and not done:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 1
            continue
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        sizes[key] = min(budget + 1, 1 + sum(sizes.get(id(c), 1) for c in children))
    return sizes.get(id(root), 1)

_REQUEST_HEADERS = ("content-type", "user-agent", "anthropic-version", "openai-beta")
_RESPONSE_HEADERS = ("content-type", "content-encoding", "date", "x-request-id", "request-id", "openai-processing-ms",
                     "openai-version", "retry-after", "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens",
                     "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
"""The only headers copied to attributes (an allow list: cassettes keep credentials, cookies and org ids)."""
_SECRET_PARAM = re.compile(r"key|token|secret|sig|signature|auth|password|session|credential", re.IGNORECASE)
_PROVIDERS = (("openai.azure.com", "azure.ai.openai"), ("openai.com", "openai"), ("anthropic.com", "anthropic"))
_NOT_PARAMS = {
    "chat": frozenset({"messages", "tools", "functions", "model"}),
    "anthropic": frozenset({"messages", "tools", "model", "system"}),
    "responses": frozenset({"input", "tools", "model", "instructions"}),
}
_RECONSTRUCTED = {"tracetui.reconstructed_from": "next_request"}


# -- bodies -------------------------------------------------------------------------------


def _headers(h: Any) -> dict[str, str]:
    """Header dict with lowercase names and one string value each (vcrpy writes lists)."""
    out: dict[str, str] = {}
    if not isinstance(h, dict):
        return out
    for k, v in h.items():
        if isinstance(v, list):
            v = ", ".join(str(x) for x in v)
        out[str(k).lower()] = "" if v is None else str(v)
    return out


def sse_data(text: str) -> list[tuple[str | None, str]]:
    """Server-sent events as ``(event name, data)`` pairs, in order (``data:`` lines of one
    event joined by newlines, per the SSE spec; comments and ids ignored)."""
    out: list[tuple[str | None, str]] = []
    event: str | None = None
    data: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data:
                out.append((event, "\n".join(data)))
            event, data = None, []
        elif line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif line.startswith("event:"):
            event = line[6:].strip()
    if data:
        out.append((event, "\n".join(data)))
    return out


def assemble_chat_stream(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """One OpenAI chat completion from its streamed ``chat.completion.chunk`` objects.

    Choice 0's content deltas are concatenated in order; tool-call deltas are merged by
    their ``index`` (parallel calls arrive interleaved; ``id`` and ``name`` come in the first
    delta of each, ``arguments`` in pieces), then ordered by index.

    Returns:
        ``{"id", "model", "message": {role, content, tool_calls: [{id, type, function: {name,
        arguments}}]}, "finish_reason", "usage"}`` (keys present when the chunks carry them).
    """
    out: dict[str, Any] = {}
    texts: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    fcall: dict[str, str] | None = None
    role = "assistant"
    for ch in chunks:
        if "id" not in out and isinstance(ch.get("id"), str):
            out["id"] = ch["id"]
        if "model" not in out and isinstance(ch.get("model"), str):
            out["model"] = ch["model"]
        if isinstance(ch.get("usage"), dict):
            out["usage"] = ch["usage"]
        choices = ch.get("choices")
        for c in choices if isinstance(choices, list) else ():
            if not isinstance(c, dict) or c.get("index", 0) != 0:
                continue
            if c.get("finish_reason"):
                out["finish_reason"] = c["finish_reason"]
            delta = c.get("delta")
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("role"), str):
                role = delta["role"]
            if isinstance(delta.get("content"), str):
                texts.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                refusal.append(delta["refusal"])
            for tc in delta.get("tool_calls") or ():
                if not isinstance(tc, dict):
                    continue
                idx = tc.get("index")
                idx = idx if isinstance(idx, int) else len(calls)
                entry = calls.setdefault(idx, {"id": None, "name": "", "arguments": ""})
                if tc.get("id") and entry["id"] is None:
                    entry["id"] = tc["id"]
                fn_raw = tc.get("function")
                fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
                name = fn.get("name")
                if isinstance(name, str) and name and name != entry["name"]:
                    entry["name"] += name  # a name sent in pieces; one repeated whole is kept once
                if isinstance(fn.get("arguments"), str):
                    entry["arguments"] += fn["arguments"]
            fc = delta.get("function_call")
            if isinstance(fc, dict):  # the pre-tools "functions" API
                fcall = fcall or {"name": "", "arguments": ""}
                if isinstance(fc.get("name"), str):
                    fcall["name"] += fc["name"]
                if isinstance(fc.get("arguments"), str):
                    fcall["arguments"] += fc["arguments"]
    msg: dict[str, Any] = {"role": role, "content": "".join(texts) if texts else None}
    if refusal and not texts:
        msg["content"] = "".join(refusal)
    if calls:  # no argument delta at all: a call without arguments, "{}" as the API writes it whole
        msg["tool_calls"] = [{"id": calls[i]["id"], "type": "function",
                              "function": {"name": calls[i]["name"], "arguments": calls[i]["arguments"] or "{}"}}
                             for i in sorted(calls)]
    if fcall is not None:
        msg["function_call"] = fcall
    out["message"] = msg
    return out


def _assemble_anthropic_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    """An Anthropic Messages response from its stream events (``message_start``,
    ``content_block_start``/``_delta``, ``message_delta``)."""
    msg: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    for ev in events:
        t = ev.get("type")
        if t == "message_start" and isinstance(ev.get("message"), dict):
            m = ev["message"]
            msg.update({k: m[k] for k in ("id", "model", "role") if k in m})
            if isinstance(m.get("usage"), dict):
                usage.update(m["usage"])
        elif t == "content_block_start" and isinstance(ev.get("content_block"), dict):
            blocks[ev.get("index", len(blocks))] = dict(ev["content_block"])
        elif t == "content_block_delta" and isinstance(ev.get("delta"), dict):
            i = ev.get("index", 0)
            b = blocks.setdefault(i, {"type": "text", "text": ""})
            d = ev["delta"]
            if d.get("type") == "text_delta":
                b["text"] = (b.get("text") or "") + (d.get("text") or "")
            elif d.get("type") == "input_json_delta":
                partial.setdefault(i, []).append(d.get("partial_json") or "")
        elif t == "message_delta":
            d = ev.get("delta")
            if isinstance(d, dict) and d.get("stop_reason"):
                msg["stop_reason"] = d["stop_reason"]
            if isinstance(ev.get("usage"), dict):
                usage.update(ev["usage"])
    for i, parts in partial.items():
        text = "".join(parts)
        blocks[i]["input"] = parse_json_string(text) if text else {}
    msg["content"] = [blocks[i] for i in sorted(blocks)]
    if usage:
        msg["usage"] = usage
    return msg


# -- API shapes ---------------------------------------------------------------------------


def _api(path: str, host: str, req: Any) -> str | None:
    """Which LLM API an interaction calls, from its URL path (and request body)."""
    if not isinstance(req, dict):
        return None
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/messages") and ("anthropic" in host or ("messages" in req and "max_tokens" in req)):
        return "anthropic"
    if path.endswith("/responses") and ("input" in req or "model" in req):
        return "responses"
    return None


def _provider(host: str) -> str | None:
    for suffix, name in _PROVIDERS:
        if host == suffix or host.endswith("." + suffix):
            return name
    return None


def _request_messages(api: str, req: dict[str, Any]) -> list[Message] | None:
    if api == "chat":
        return normalize_messages(req.get("messages"))
    if api == "anthropic":
        out: list[Message] = []
        system = req.get("system")
        if system is not None:
            out.extend(normalize_message({"role": "system", "content": system}, "system"))
        more = normalize_messages(req.get("messages"))
        return out + more if more is not None else (out or None)
    # responses: instructions + input items (messages, function calls, function call outputs)
    msgs: list[Message] = []
    if isinstance(req.get("instructions"), str):
        msgs.append({"role": "system", "content": req["instructions"]})
    inp = req.get("input")
    if isinstance(inp, str):
        msgs.append({"role": "user", "content": inp})
    elif isinstance(inp, list):
        msgs.extend(response_items(inp))
    return msgs or None


def _safe_url(uri: str) -> str:
    """The URL with secret-looking query parameters (``key``, ``token``, ``sig``...) masked."""
    parts = urlsplit(uri)
    if not parts.query:
        return uri
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(_SECRET_PARAM.search(k) for k, _ in pairs):
        return uri
    masked = [(k, "REDACTED" if _SECRET_PARAM.search(k) else v) for k, v in pairs]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(masked), parts.fragment))


# -- the reader ---------------------------------------------------------------------------


class VcrpyReader:
    """Reads vcrpy cassettes (YAML or vcrpy's JSON serializer)."""

    name = "vcrpy"

    def sniff(self, head: bytes) -> bool:
        """A top-level ``interactions:`` YAML key with a ``request:`` entry, or a JSON object whose
        ``interactions`` hold ``request`` objects with ``uri`` and ``method``."""
        body = head.removeprefix(BOM).lstrip()
        if body.startswith(b"{"):
            return b'"interactions"' in head and b'"request"' in head and b'"uri"' in head and b'"method"' in head
        return _YAML_KEY.search(head) is not None and b"request:" in head

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole cassette: one run.

        Raises:
            ReadError: not YAML/JSON (with the line), or no ``interactions`` list.
        """
        return _Reading(path).run(data)


class _Reading(FileReading):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.spans: list[Span] = []
        self.seq = 1
        self.prev_calls: dict[str, list[dict[str, Any]]] = {}  # id -> tool calls of the previous LLM answer
        self.seen_call_ids: dict[str, int] = {}  # tool spans made per call id (a shared id: distinct span ids)
        self.first_llm: dict[str, Any] | None = None
        self.first_version: str | None = None
        self.ids: set[str] = {"root"}
        self.last_output: Message | None = None
        self.unanswered = 0
        self.no_messages = 0

    def load(self, data: bytes) -> tuple[Any, list[int] | None]:
        body = data.removeprefix(BOM)
        if not body.strip():
            raise ReadError(self.path, "file is empty")
        if body.lstrip().startswith(b"{"):
            return load_json(self.path, body, self.issues), None
        loader = _Loader(body)
        loader.kept_as_text = []
        try:
            node = loader.get_single_node()
            if node is not None:
                expanded = _expanded_size(node, YAML_NODE_BUDGET)
                if expanded > YAML_NODE_BUDGET:
                    raise ReadError(self.path, f"YAML aliases expand this {len(body):,}-byte file to more than "
                                    f"{YAML_NODE_BUDGET:,} nodes (an alias bomb?); not read")
            doc = loader.construct_document(node) if node is not None else None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
            raise ReadError(self.path, f"not valid YAML: {problem}"
                            + (f" (column {mark.column + 1})" if mark is not None else ""),
                            line=mark.line + 1 if mark is not None else None) from None
        finally:
            loader.dispose()
        for line in loader.kept_as_text:
            self.issues.append(ReadIssue(self.path, line, "", "an integer of more than 4300 digits kept as text",
                                         "warning"))
        text = body.decode("utf-8", "replace")
        lines = [text.count("\n", 0, m.start()) + 1 for m in _YAML_ITEM.finditer(text)] if "\n-" in text else []
        return doc, lines

    def run(self, data: bytes) -> ReaderOutput:
        doc, lines = self.load(data)
        inter = doc.get("interactions") if isinstance(doc, dict) else None
        if not isinstance(inter, list):
            found = type(doc).__name__ if not isinstance(doc, dict) else "keys " + ", ".join(map(str, list(doc)[:8]))
            raise ReadError(self.path, f"not a vcrpy cassette: no 'interactions' list (found {found})")
        if not inter:
            raise ReadError(self.path, "the cassette records no interactions", where="$.interactions")
        if lines is not None and len(lines) != len(inter):
            lines = None  # column-0 list items that are not interactions: do not guess
        started: int | None = None
        for k, it in enumerate(inter):
            line = lines[k] if lines else None
            where = f"$.interactions[{k}]"
            if not isinstance(it, dict) or not isinstance(it.get("request"), dict):
                self.issue(line, where, "interaction without a request object; skipped")
                continue
            resp_raw = it.get("response")
            resp: dict[str, Any] = resp_raw if isinstance(resp_raw, dict) else {}
            if started is None:
                started = _date_ns(_headers(resp.get("headers")).get("date"))
            self.interaction(it["request"], resp, line, where)
        if self.prev_calls:
            self.unanswered += sum(map(len, self.prev_calls.values()))
        if self.unanswered:
            self.issue(None, "$.interactions", f"{self.unanswered} tool call(s) requested by an LLM answer have no "
                       "result in a later request (the cassette ends, or the agent dropped them): no tool span for "
                       "them", "warning")
        if self.no_messages:
            self.issue(None, "$.interactions", f"{self.no_messages} LLM request(s) without messages", "warning")
        return ReaderOutput(runs=[self.finish(started)], issues=self.issues)

    def finish(self, started: int | None) -> RunSpans:
        first = self.first_llm
        run_input: Any = None
        if first is not None:
            users = [m for m in first.get("messages") or () if m.get("role") == "user"]
            run_input = users[0].get("content") if users else None
        output = self.last_output.get("content") if self.last_output else None
        root_data: dict[str, Any] = {"input": run_input, "output": output}
        root = Span(span_id="root", parent_id=None, seq=0, kind=SpanKind.AGENT, name="cassette", data=root_data)
        header: dict[str, Any] = {"run_id": "cassette"}
        if first is not None:
            model: dict[str, Any] = {}
            if first.get("model"):
                model["id"] = first["model"]
            if self.first_version:
                model["version"] = self.first_version
            if first.get("provider"):
                model["provider"] = first["provider"]
            if model:
                header["model"] = model
            if first.get("tool_schemas_hash"):
                header["tool_schema_hash"] = first["tool_schemas_hash"]
        if started is not None:
            header["started_at"] = ns_to_iso(started)
            header["start_ns"] = started
        if run_input is not None:
            header["input"] = run_input
        return RunSpans(trace_id="cassette", spans=[root, *self.spans], header=header, in_order=True)

    def add(self, span_id: str, kind: SpanKind, name: str, data: dict[str, Any], attrs: dict[str, Any],
            status: Status, error_type: str | None, line: int | None) -> None:
        if span_id in self.ids:
            span_id = f"{span_id}-{self.seq}"
        self.ids.add(span_id)
        self.spans.append(Span(span_id=span_id, parent_id="root", seq=self.seq, kind=kind, name=name, status=status,
                               error_type=error_type, data=data, attributes=attrs, line=line))
        self.seq += 1

    # -- one interaction ------------------------------------------------------------------

    def body(self, raw: Any, headers: dict[str, str], where: str, line: int | None) -> tuple[str | None, int]:
        """A body as text (decompressed, decoded), and its size in bytes when it is binary (else -1)."""
        if isinstance(raw, dict):  # response body {"string": ...}
            raw = raw.get("string", raw.get("base64_string"))
        if raw is None:
            return None, -1
        if isinstance(raw, str):
            return raw, -1  # text: already decoded (vcrpy's decode_compressed_response, or never compressed)
        if not isinstance(raw, (bytes, bytearray)):
            return orjson.dumps(raw).decode() if isinstance(raw, (dict, list)) else str(raw), -1
        b = bytes(raw)
        enc = headers.get("content-encoding", "").lower()
        try:
            if "gzip" in enc or b[:2] == b"\x1f\x8b":
                b = gzip.decompress(b)
            elif "deflate" in enc:
                try:
                    b = zlib.decompress(b)
                except zlib.error:
                    b = zlib.decompress(b, -15)
            elif enc and enc not in ("identity", "utf-8"):
                self.issue(line, where, f"content-encoding {enc!r} is not supported; body kept as {len(b)} bytes",
                           "warning")
                return None, len(b)
        except (OSError, EOFError, zlib.error) as exc:
            self.issue(line, where, f"body says {enc or 'gzip'} but does not decompress ({exc}); kept as "
                       f"{len(b)} bytes", "warning")
            return None, len(b)
        try:
            return b.decode("utf-8"), -1
        except UnicodeDecodeError:
            return None, len(b)

    def interaction(self, req: dict[str, Any], resp: dict[str, Any], line: int | None, where: str) -> None:
        method = str(req.get("method") or "GET").upper()
        uri = str(req.get("uri") or req.get("url") or "")
        parts = urlsplit(uri)
        host, path = parts.hostname or "", parts.path or "/"
        req_h = _headers(req.get("headers"))
        resp_h = _headers(resp.get("headers"))
        status_obj = resp.get("status")
        code: Any = status_obj.get("code") if isinstance(status_obj, dict) else status_obj
        if code is None:
            code = resp.get("status_code")  # httpx cassettes of older vcrpy
        try:
            code = int(code) if code is not None else None
        except (TypeError, ValueError):
            self.issue(line, f"{where}.response.status", f"status code {code!r} is not a number; ignored", "warning")
            code = None
        req_text, req_bin = self.body(req.get("body"), req_h, f"{where}.request.body", line)
        resp_raw = resp.get("body", resp.get("content"))
        resp_text, resp_bin = self.body(resp_raw, resp_h, f"{where}.response.body", line)
        req_json = parse_json_string(req_text) if req_text else None
        attrs: dict[str, Any] = {"http.request.method": method, "url.full": _safe_url(uri)}
        if code is not None:
            attrs["http.response.status_code"] = code
        msg = status_obj.get("message") if isinstance(status_obj, dict) else None
        if msg:
            attrs["http.response.status_text"] = str(msg)
        for name in _REQUEST_HEADERS:
            if name in req_h:
                attrs[f"http.request.header.{name}"] = req_h[name]
        for name in _RESPONSE_HEADERS:
            if name in resp_h:
                attrs[f"http.response.header.{name}"] = resp_h[name]
        failed = code is not None and code >= 400
        status = Status.ERROR if failed else Status.UNSET
        etype = str(code) if failed else None
        sid = f"interaction-{where[len('$.interactions['):-1]}"
        api = _api(path, host, req_json)
        if api is not None and isinstance(req_json, dict):
            self.llm(api, req_json, resp_text, resp_h, host, attrs, status, etype, sid, line, where)
            return
        data: dict[str, Any] = {"input": self.value(req_text, req_bin), "output": self.value(resp_text, resp_bin)}
        self.add(sid, SpanKind.OTHER, f"{method} {host}{path}", data, attrs, status, etype, line)

    @staticmethod
    def value(text: str | None, binary: int) -> Any:
        if text is None:
            return f"<binary body, {binary} bytes>" if binary >= 0 else None
        return parse_json_string(text)

    def llm(self, api: str, req: dict[str, Any], resp_text: str | None, resp_h: dict[str, str], host: str,
            attrs: dict[str, Any], status: Status, etype: str | None, sid: str, line: int | None, where: str) -> None:
        messages = _request_messages(api, req)
        self.tool_spans(messages or [], line)
        data: dict[str, Any] = {}
        model = req.get("model")
        if isinstance(model, str) and model:
            data["model"] = model
        provider = _provider(host) or ("anthropic" if api == "anthropic" else None)
        if provider:
            data["provider"] = provider
        skip = _NOT_PARAMS[api]
        params = {k: v for k, v in req.items() if k not in skip}
        if params:
            data["params"] = params
        if messages:
            data["messages"] = messages
        else:
            self.no_messages += 1
        tools = req.get("tools") if req.get("tools") is not None else req.get("functions")
        if isinstance(tools, list) and tools:
            data["tool_schemas_hash"] = args_hash(tools)
        resp = self.response(api, resp_text, resp_h, line, where)
        out_msg: Message | None = None
        if status is Status.ERROR:
            err = resp.get("error") if isinstance(resp, dict) else None
            if isinstance(err, dict):
                for k in ("type", "code", "message"):
                    if err.get(k) is not None:
                        attrs[f"error.{k}"] = err[k]
            elif isinstance(resp_text, str) and resp_text:
                attrs["error.message"] = resp_text
        elif isinstance(resp, dict):
            out_msg, finish, usage, rid, version = self.answer(api, resp)
            if out_msg is not None:
                data["output"] = out_msg
            if finish:
                data["finish_reason"] = finish
            if usage:
                data["usage"] = usage
            if rid:
                data["response_id"] = rid
            if version:
                attrs["gen_ai.response.model"] = version
                if self.first_version is None:
                    self.first_version = version
        else:
            self.issue(line, f"{where}.response.body", "LLM response body is not JSON nor a stream of JSON "
                       "chunks: no output", "warning")
        if self.first_llm is None:
            self.first_llm = data
        name = f"chat {model}" if isinstance(model, str) and model else "chat"
        self.add(sid, SpanKind.LLM, name, data, attrs, status, etype, line)
        if out_msg is not None:
            self.last_output = out_msg
        prev: dict[str, list[dict[str, Any]]] = {}
        for c in (out_msg or {}).get("tool_calls") or ():
            if c.get("id") is not None:
                prev.setdefault(str(c["id"]), []).append(c)
        for cid, calls in prev.items():
            if len(calls) > 1:  # never merged: each call its own span, results paired in order
                shown = "; ".join(f"{c.get('name')} {orjson.dumps(c.get('arguments')).decode()}" for c in calls)
                self.issue(line, f"{where}.response.body", f"{len(calls)} tool calls of one answer share the id "
                           f"{cid!r} ({shown}): kept apart, tool results paired with them in order", "warning")
        self.prev_calls = prev

    def response(self, api: str, text: str | None, headers: dict[str, str], line: int | None, where: str) -> Any:
        """The response as one JSON object (a stream reassembled), or None."""
        if text is None:
            return None
        stripped = text.lstrip()
        if stripped[:1] in ("{", "["):
            value = parse_json_string(text)
            return value if isinstance(value, dict) else None
        if not (stripped.startswith(("data:", "event:", ":")) or "event-stream" in headers.get("content-type", "")):
            return None
        chunks: list[dict[str, Any]] = []
        bad = 0
        for _event, payload in sse_data(text):
            if payload.strip() == "[DONE]":
                continue
            try:
                v = orjson.loads(payload)
            except orjson.JSONDecodeError:
                bad += 1
                continue
            if isinstance(v, dict):
                chunks.append(v)
        if bad:
            self.issue(line, f"{where}.response.body", f"{bad} stream chunk(s) are not JSON; skipped", "warning")
        if not chunks:
            return None
        if api == "chat":
            done = assemble_chat_stream(chunks)
            obj: dict[str, Any] = {k: done[k] for k in ("id", "model", "usage") if k in done}
            obj["choices"] = [{"index": 0, "message": done["message"], "finish_reason": done.get("finish_reason")}]
            return obj
        if api == "anthropic":
            return _assemble_anthropic_stream(chunks)
        # responses: the final event carries the whole response object
        for ch in reversed(chunks):
            if ch.get("type") in ("response.completed", "response.incomplete", "response.failed", "response.done") \
                    and isinstance(ch.get("response"), dict):
                return ch["response"]
        items = [ch["item"] for ch in chunks if ch.get("type") == "response.output_item.done" and isinstance(ch.get("item"), dict)]
        return {"output": items} if items else None

    def answer(self, api: str, resp: dict[str, Any]) -> tuple[Message | None, str | None, dict[str, int] | None,
                                                            str | None, str | None]:
        """``(output message, finish reason, usage, response id, response model)`` of a response object."""
        rid = resp.get("id") if isinstance(resp.get("id"), str) else None
        version = resp.get("model") if isinstance(resp.get("model"), str) else None
        usage = usage_from(resp.get("usage"))
        if api == "chat":
            out, finish = choice_output(resp)
            return out, finish, usage, rid, version
        if api == "anthropic":
            msgs = normalize_message({"role": "assistant", "content": resp.get("content")}, "assistant") \
                if resp.get("content") is not None else []
            out = next((m for m in msgs if m.get("role") == "assistant"), None)
            return out, normalize_finish_reason(resp.get("stop_reason")), usage, rid, version
        out, finish = responses_output(resp)
        return out, finish, usage, rid, version

    def tool_spans(self, messages: list[Message], line: int | None) -> None:
        """Tool spans for the tool results this request sends back for the previous answer's calls."""
        if not self.prev_calls:
            return
        pending = self.prev_calls
        for m in messages:
            if m.get("role") != "tool":
                continue
            key = str(m.get("tool_call_id"))
            calls = pending.get(key)
            if not calls:
                continue
            call = calls.pop(0)
            nth = self.seen_call_ids.get(key, 0) + 1
            self.seen_call_ids[key] = nth
            args = call.get("arguments")
            name = call.get("name") or "tool"
            data: dict[str, Any] = {"tool_name": name, "call_id": str(call["id"]), "arguments": args,
                                    "args_hash": args_hash(args), "output": m.get("content")}
            sid = f"tool-{call['id']}" if nth == 1 else f"tool-{call['id']}#{nth}"
            self.add(sid, SpanKind.TOOL, str(name), data, dict(_RECONSTRUCTED), Status.UNSET, None, line)
        self.unanswered += sum(map(len, pending.values()))
        self.prev_calls = {}


def _date_ns(value: str | None) -> int | None:
    """An HTTP ``Date`` header (RFC 9110 IMF-fixdate) as ns since the epoch, or None."""
    if not value:
        return None
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if dt.tzinfo is None:
        return None
    return int(dt.timestamp()) * 1_000_000_000

