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

Modules: ``vcrpy_file`` reads the cassette file (its YAML or JSON document, bodies decoded);
``vcrpy_llm`` knows the LLM APIs on the wire (requests, streams reassembled, answers); this one
maps the interactions to spans.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.errors import ReadError
from tracetui.core.model import Span, SpanKind, Status
from tracetui.core.readers.base import ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.jsondoc import BOM
from tracetui.core.readers.otel_messages import Message
from tracetui.core.readers.timefmt import ns_to_iso
from tracetui.core.readers.vcrpy_file import YAML_NODE_BUDGET, CassetteFile, date_header_ns, header_dict
from tracetui.core.readers.vcrpy_llm import (
    answer_of,
    api_of,
    assemble_chat_stream,
    provider_of,
    request_messages,
    request_params,
    response_object,
    sse_data,
)

__all__ = ["YAML_NODE_BUDGET", "VcrpyReader", "assemble_chat_stream", "sse_data"]

_YAML_KEY = re.compile(rb"(?m)^interactions:[ \t]*(?:#.*)?\r?$")
_REQUEST_HEADERS = ("content-type", "user-agent", "anthropic-version", "openai-beta")
_RESPONSE_HEADERS = ("content-type", "content-encoding", "date", "x-request-id", "request-id", "openai-processing-ms",
                     "openai-version", "retry-after", "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens",
                     "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
"""The only headers copied to attributes (an allow list: cassettes keep credentials, cookies and org ids)."""
_SECRET_PARAM = re.compile(r"key|token|secret|sig|signature|auth|password|session|credential", re.IGNORECASE)
_RECONSTRUCTED = {"tracetui.reconstructed_from": "next_request"}


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


class _Reading(CassetteFile):
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
                started = date_header_ns(header_dict(resp.get("headers")).get("date"))
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

    def interaction(self, req: dict[str, Any], resp: dict[str, Any], line: int | None, where: str) -> None:
        method = str(req.get("method") or "GET").upper()
        uri = str(req.get("uri") or req.get("url") or "")
        parts = urlsplit(uri)
        host, path = parts.hostname or "", parts.path or "/"
        req_h = header_dict(req.get("headers"))
        resp_h = header_dict(resp.get("headers"))
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
        api = api_of(path, host, req_json)
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
        messages = request_messages(api, req)
        self.tool_spans(messages or [], line)
        data: dict[str, Any] = {}
        model = req.get("model")
        if isinstance(model, str) and model:
            data["model"] = model
        provider = provider_of(host) or ("anthropic" if api == "anthropic" else None)
        if provider:
            data["provider"] = provider
        params = request_params(api, req)
        if params:
            data["params"] = params
        if messages:
            data["messages"] = messages
        else:
            self.no_messages += 1
        tools = req.get("tools") if req.get("tools") is not None else req.get("functions")
        if isinstance(tools, list) and tools:
            data["tool_schemas_hash"] = args_hash(tools)
        resp, bad = response_object(api, resp_text, resp_h)
        if bad:
            self.issue(line, f"{where}.response.body", f"{bad} stream chunk(s) are not JSON; skipped", "warning")
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
            out_msg, finish, usage, rid, version = answer_of(api, resp)
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
