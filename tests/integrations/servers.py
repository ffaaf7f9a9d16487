"""Real local servers for the framework-integration tests.

``ModelServer`` is a real HTTP server on ``127.0.0.1`` (stdlib
``ThreadingHTTPServer`` in a daemon thread) that the **real** SDK clients talk
to: point ``openai.OpenAI(base_url=server.base_url_openai)`` or
``anthropic.Anthropic(base_url=server.url)`` (and every framework built on them)
at it.

What it speaks
--------------
* OpenAI **Chat Completions** ``POST /v1/chat/completions``: JSON, or with
  ``"stream": true`` an SSE stream of ``data: {chat.completion.chunk}`` lines
  ending in ``data: [DONE]``; a usage-only chunk (``choices: []``) comes last
  when ``stream_options.include_usage`` is set (and every other chunk then
  carries ``"usage": null``, as the real API does).
* OpenAI **Responses** ``POST /v1/responses``: JSON, or a typed SSE stream
  (``event: response.created`` / ``response.in_progress`` /
  ``response.output_item.added`` / ``response.content_part.added`` /
  ``response.output_text.delta`` / ``.done`` / ``response.content_part.done`` /
  ``response.function_call_arguments.delta`` / ``.done`` /
  ``response.output_item.done`` / ``response.completed``), each event with a
  ``sequence_number`` counting from 0. ``previous_response_id`` is honoured for
  the tool-result count (see below).
* Anthropic **Messages** ``POST /v1/messages``: JSON, or an SSE stream
  (``message_start``, ``content_block_start``, one ``ping``,
  ``content_block_delta`` with ``text_delta`` / ``input_json_delta``,
  ``content_block_stop``, ``message_delta``, ``message_stop``).
* "Production API" endpoints for test tools, so live tool calls are countable:
  ``GET /api/weather?city=X`` -> ``{"city": X, "temp_c": 18, "conditions": "cloudy"}``
  and ``POST /api/reports`` -> ``{"status": "queued", "id": "rep_<fresh>"}``.

Anything else answers 404 with an OpenAI-style error body.

Every model answer carries **fresh** volatile fields: response / message id,
tool-call ids, ``created`` (wall clock plus a per-call tick and a per-server
random offset, so no two answers share one, even across servers),
``system_fingerprint``, request-id headers, and ``usage`` numbers drawn at
random (and never equal to the previous call's). Tests can therefore prove the
recorder/differ never compares them.

The scripted model
------------------
Deterministic from the request content. If the request has tools, count the tool
results already in the conversation (Chat: ``role: "tool"`` messages; Responses:
``function_call_output`` input items, plus those of the ``previous_response_id``
chain; Anthropic: ``tool_result`` content blocks):

* 0 results -> call ``get_weather`` with ``{"city": CITY}``;
* 1 result  -> call ``send_report`` with
  ``{"to": "ops@example.com", "body": "Weather in CITY: <text of that tool result>"}``;
* 2 or more -> final text ``"Report sent for CITY."`` (finish reason ``stop`` /
  status ``completed`` / stop reason ``end_turn``).

``CITY`` is ``server.city`` at the time of the request (constructor argument,
default ``"Paris"``; set ``server.city = "Lyon"`` mid-test to make the live model
"pick a different argument"). Tool names are always those two, whatever tools the
request declares.

Without tools the model answers plain text: the next text queued with
``queue_text(...)`` if any, else ``server.default_text`` if set (a string, or a
callable taking the request body dict), else ``"Echo: <last user text>"``.

Knobs
-----
* ``fail_next(status=429, count=1, message=None, retry_after_ms=1)``: the next
  ``count`` model calls (``/v1/...``) answer that HTTP error (OpenAI- or
  Anthropic-shaped body by path). ``retry-after-ms`` keeps SDK retries fast;
  pass ``max_retries=0`` to the client to see the error.
* ``latency`` (seconds before each model answer) and ``stream_delay`` (seconds
  between SSE events); both 0 by default.
* ``hits`` (a copy of the thread-safe list of ``{"path", "method", "body",
  "query", "status"}``, one per request, in arrival order; ``path`` has no query
  string, ``body`` is parsed JSON / text / ``None``), ``hit_count(path_prefix=None)``,
  ``clear_hits()``, ``model_calls`` (the number of ``/v1/`` hits).

``mcp_stdio_params(log_path)`` builds the ``StdioServerParameters`` that start
``mcp_server.py`` (the real stdio MCP server) with this interpreter.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import socket
import sys
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "MCP_SERVER_PATH",
    "ModelServer",
    "READ_TOOL",
    "REPORT_TO",
    "WRITE_TOOL",
    "mcp_stdio_params",
]

READ_TOOL = "get_weather"
WRITE_TOOL = "send_report"
REPORT_TO = "ops@example.com"
MCP_SERVER_PATH = Path(__file__).with_name("mcp_server.py")


def mcp_stdio_params(log_path: str | Path | None = None, **env: str):
    """``mcp.StdioServerParameters`` that run ``mcp_server.py`` with this Python;
    ``log_path`` becomes ``TRACETUI_TEST_MCP_LOG`` (one JSON line per live call)."""
    from mcp import StdioServerParameters

    extra = dict(env)
    if log_path is not None:
        extra["TRACETUI_TEST_MCP_LOG"] = str(log_path)
    return StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER_PATH)], env=extra)


def _hex(n: int = 24) -> str:
    return uuid.uuid4().hex[:n]


def _pieces(text: str, size: int = 8) -> list[str]:
    """Split a string into stream deltas (words for text, fixed slices for JSON)."""
    if not text:
        return [""]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text) or [""]


def _text_of(content: Any) -> str:
    """Text of a message/tool-result content: a string, or a list of text-ish parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
        return "".join(out)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return json.dumps(content)


class _Decision:
    """What the scripted model answers: a tool call or a final text."""

    __slots__ = ("tool", "arguments", "text")

    def __init__(self, tool: str | None = None, arguments: dict | None = None, text: str | None = None):
        self.tool, self.arguments, self.text = tool, arguments, text

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, separators=(",", ":"))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "ModelServer"


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive, like real APIs; SSE goes out chunked
    disable_nagle_algorithm = True  # headers and body in separate writes: without it, 40 ms delayed ACKs per call

    # -- plumbing ---------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def _send_sse(self, events: Iterable[tuple[str | None, str]], headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        delay = self.server.owner.stream_delay
        try:
            for name, data in events:
                frame = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
                raw = frame.encode()
                self.wfile.write(b"%X\r\n%s\r\n" % (len(raw), raw))
                if delay:
                    time.sleep(delay)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):  # client went away mid-stream
            self.close_connection = True

    # -- dispatch ---------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        owner = self.server.owner
        raw = self._read_body()
        split = urlsplit(self.path)
        path = split.path
        query = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(split.query).items()}
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        hit = {"path": path, "method": method, "body": body, "query": query, "status": None}
        owner._record(hit)
        self._hit = hit
        try:
            status = self._route(method, path, query, body)
        except Exception as exc:  # a bug in the server: say so loudly to the client
            status = 500
            self._send_json(500, {"error": {"message": f"test server error: {exc!r}", "type": "server_error"}})
        hit["status"] = status

    def send_response(self, code: int, message: str | None = None) -> None:
        """The status goes into the hit before the response leaves: a client that has its answer
        reads the hit complete (set after sending, a test saw ``None`` under load)."""
        hit = getattr(self, "_hit", None)
        if hit is not None:
            hit["status"] = code
        super().send_response(code, message)

    def _route(self, method: str, path: str, query: dict, body: Any) -> int:
        owner = self.server.owner
        if path == "/api/weather" and method == "GET":
            city = query.get("city", owner.city)
            self._send_json(200, {"city": city, "temp_c": 18, "conditions": "cloudy"})
            return 200
        if path == "/api/reports" and method == "POST":
            self._send_json(200, {"status": "queued", "id": f"rep_{_hex(16)}"})
            return 200

        model_paths = {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "anthropic"}
        api = model_paths.get(path) if method == "POST" else None
        if api is None:
            self._send_json(404, {"error": {"message": f"no route {method} {path}", "type": "invalid_request_error"}})
            return 404

        if owner.latency:
            time.sleep(owner.latency)
        failure = owner._take_failure()
        if failure is not None:
            return self._send_failure(api, *failure)
        if not isinstance(body, dict):
            self._send_json(400, {"error": {"message": "body must be a JSON object", "type": "invalid_request_error"}})
            return 400

        stream = bool(body.get("stream"))
        if api == "chat":
            decision = owner._decide(body, owner._chat_results(body))
            if stream:
                self._send_sse(owner._chat_stream(body, decision), owner._openai_headers())
            else:
                self._send_json(200, owner._chat_json(body, decision), owner._openai_headers())
        elif api == "responses":
            results = owner._responses_results(body)
            decision = owner._decide(body, results)
            response = owner._responses_object(body, decision, results)
            if stream:
                self._send_sse(owner._responses_stream(response), owner._openai_headers())
            else:
                self._send_json(200, response, owner._openai_headers())
        else:
            decision = owner._decide(body, owner._anthropic_results(body))
            message = owner._anthropic_message(body, decision)
            headers = {"request-id": f"req_{_hex()}"}
            if stream:
                self._send_sse(owner._anthropic_stream(message), headers)
            else:
                self._send_json(200, message, headers)
        return 200

    def _send_failure(self, api: str, status: int, message: str | None, retry_after_ms: int | None) -> int:
        headers = {} if retry_after_ms is None else {"retry-after-ms": str(retry_after_ms)}
        msg = message or f"scripted failure {status}"
        if api == "anthropic":
            kind = {429: "rate_limit_error", 529: "overloaded_error", 400: "invalid_request_error"}.get(status, "api_error")
            payload = {"type": "error", "error": {"type": kind, "message": msg}}
            headers["request-id"] = f"req_{_hex()}"
        else:
            kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
            payload = {"error": {"message": msg, "type": kind, "param": None, "code": kind}}
            headers.update(self.server.owner._openai_headers())
        self._send_json(status, payload, headers)
        return status


class ModelServer:
    """A scripted model + fake production API on a real 127.0.0.1 HTTP port.

    ``ModelServer(city="Paris", *, host="127.0.0.1", port=0, latency=0.0,
    stream_delay=0.0, default_text=None)``; ``start()`` / ``stop()`` or use it
    as a context manager. See the module docstring for the protocols, the
    script and the knobs.
    """

    def __init__(
        self,
        city: str = "Paris",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        stream_delay: float = 0.0,
        default_text: str | Callable[[dict], str] | None = None,
    ) -> None:
        self.city = city
        self.host = host
        self.port = port
        self.latency = latency
        self.stream_delay = stream_delay
        self.default_text = default_text
        self._lock = threading.Lock()
        self._hits: list[dict] = []
        self._failures: deque[tuple[int, str | None, int | None]] = deque()
        self._texts: deque[str] = deque()
        self._conns: set[socket.socket] = set()
        self._response_results: dict[str, tuple[int, list[str]]] = {}
        self._tick = itertools.count(1)
        self._rng = random.Random()  # OS-seeded: two servers never share usage numbers
        self._clock_offset = self._rng.randint(0, 10_000)
        self._last_usage: tuple[int, int] | None = None
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------
    def start(self) -> "ModelServer":
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=f"ModelServer:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # idle keep-alive connections would hold handler threads
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> "ModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic client's ``base_url``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url_openai(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI client's ``base_url``)."""
        return f"{self.url}/v1"

    # -- hits -------------------------------------------------------------
    @property
    def hits(self) -> list[dict]:
        """A snapshot copy of every request received so far, in order."""
        with self._lock:
            return list(self._hits)

    def hit_count(self, path_prefix: str | None = None) -> int:
        with self._lock:
            if path_prefix is None:
                return len(self._hits)
            return sum(1 for h in self._hits if h["path"].startswith(path_prefix))

    @property
    def model_calls(self) -> int:
        return self.hit_count("/v1/")

    def clear_hits(self) -> None:
        with self._lock:
            self._hits.clear()

    def _record(self, hit: dict) -> None:
        with self._lock:
            self._hits.append(hit)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    # -- knobs ------------------------------------------------------------
    def fail_next(
        self, status: int = 429, *, count: int = 1, message: str | None = None, retry_after_ms: int | None = 1
    ) -> None:
        """Answer the next ``count`` model calls with HTTP ``status``."""
        with self._lock:
            for _ in range(count):
                self._failures.append((status, message, retry_after_ms))

    def queue_text(self, *texts: str) -> None:
        """Queue plain-text answers for requests without tools (first in, first out)."""
        with self._lock:
            self._texts.extend(texts)

    def _take_failure(self) -> tuple[int, str | None, int | None] | None:
        with self._lock:
            return self._failures.popleft() if self._failures else None

    # -- the script -------------------------------------------------------
    def _decide(self, body: dict, results: tuple[int, list[str]]) -> _Decision:
        count, texts = results
        city = self.city
        if not body.get("tools"):
            with self._lock:
                queued = self._texts.popleft() if self._texts else None
            if queued is not None:
                return _Decision(text=queued)
            if callable(self.default_text):
                return _Decision(text=self.default_text(body))
            if isinstance(self.default_text, str):
                return _Decision(text=self.default_text)
            return _Decision(text=f"Echo: {self._last_user_text(body)}")
        if count == 0:
            return _Decision(tool=READ_TOOL, arguments={"city": city})
        if count == 1:
            return _Decision(tool=WRITE_TOOL, arguments={"to": REPORT_TO, "body": f"Weather in {city}: {texts[-1]}"})
        return _Decision(text=f"Report sent for {city}.")

    @staticmethod
    def _last_user_text(body: dict) -> str:
        if "input" in body:  # Responses
            inp = body["input"]
            if isinstance(inp, str):
                return inp
            for item in reversed(inp or []):
                if isinstance(item, dict) and item.get("role") == "user":
                    return _text_of(item.get("content"))
            return ""
        for msg in reversed(body.get("messages") or []):
            if isinstance(msg, dict) and msg.get("role") == "user":
                return _text_of(msg.get("content"))
        return ""

    @staticmethod
    def _chat_results(body: dict) -> tuple[int, list[str]]:
        texts = [_text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "tool"]
        return len(texts), texts

    def _responses_results(self, body: dict) -> tuple[int, list[str]]:
        inp = body.get("input")
        items = inp if isinstance(inp, list) else []
        texts = [
            _text_of(i.get("output")) for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        prev = body.get("previous_response_id")
        if prev:
            with self._lock:
                _, prev_texts = self._response_results.get(prev, (0, []))
            texts = prev_texts + texts
        return len(texts), texts

    @staticmethod
    def _anthropic_results(body: dict) -> tuple[int, list[str]]:
        texts = []
        for msg in body.get("messages") or []:
            content = msg.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        texts.append(_text_of(block.get("content")))
        return len(texts), texts

    # -- volatile fields --------------------------------------------------
    def _created(self) -> int:
        return int(time.time()) + self._clock_offset + next(self._tick)

    def _usage_pair(self) -> tuple[int, int]:
        with self._lock:
            while True:
                pair = (self._rng.randint(12, 4000), self._rng.randint(3, 900))
                if pair[0] != (self._last_usage or (0, 0))[0] and pair[1] != (self._last_usage or (0, 0))[1]:
                    self._last_usage = pair
                    return pair

    @staticmethod
    def _openai_headers() -> dict[str, str]:
        return {"x-request-id": f"req_{_hex()}", "openai-processing-ms": str(random.randint(5, 500))}

    # -- Chat Completions -------------------------------------------------
    def _chat_usage(self) -> dict:
        p, c = self._usage_pair()
        return {
            "prompt_tokens": p,
            "completion_tokens": c,
            "total_tokens": p + c,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def _chat_json(self, body: dict, d: _Decision) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": d.text, "refusal": None, "annotations": []}
        if d.tool:
            message["tool_calls"] = [
                {
                    "id": f"call_{_hex()}",
                    "type": "function",
                    "function": {"name": d.tool, "arguments": d.arguments_json},
                }
            ]
        return {
            "id": f"chatcmpl-{_hex(29)}",
            "object": "chat.completion",
            "created": self._created(),
            "model": body.get("model") or "scripted-model",
            "system_fingerprint": f"fp_{_hex(10)}",
            "service_tier": "default",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if d.tool else "stop",
                }
            ],
            "usage": self._chat_usage(),
        }

    def _chat_stream(self, body: dict, d: _Decision) -> Iterable[tuple[None, str]]:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base = {
            "id": f"chatcmpl-{_hex(29)}",
            "object": "chat.completion.chunk",
            "created": self._created(),
            "model": body.get("model") or "scripted-model",
            "system_fingerprint": f"fp_{_hex(10)}",
            "service_tier": "default",
        }

        def chunk(delta: dict, finish: str | None = None) -> tuple[None, str]:
            c = {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            if include_usage:
                c["usage"] = None
            return None, json.dumps(c)

        if d.tool:
            yield chunk({"role": "assistant", "content": None, "refusal": None})
            call = {"index": 0, "id": f"call_{_hex()}", "type": "function", "function": {"name": d.tool, "arguments": ""}}
            yield chunk({"tool_calls": [call]})
            for piece in _pieces(d.arguments_json):
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            yield chunk({}, "tool_calls")
        else:
            yield chunk({"role": "assistant", "content": "", "refusal": None})
            for piece in _words(d.text or ""):
                yield chunk({"content": piece})
            yield chunk({}, "stop")
        if include_usage:
            yield None, json.dumps({**base, "choices": [], "usage": self._chat_usage()})
        yield None, "[DONE]"

    # -- Responses --------------------------------------------------------
    def _responses_object(self, body: dict, d: _Decision, results: tuple[int, list[str]]) -> dict:
        if d.tool:
            item: dict[str, Any] = {
                "id": f"fc_{_hex(32)}",
                "type": "function_call",
                "status": "completed",
                "call_id": f"call_{_hex()}",
                "name": d.tool,
                "arguments": d.arguments_json,
            }
        else:
            item = {
                "id": f"msg_{_hex(32)}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": d.text or "", "annotations": [], "logprobs": []}],
            }
        p, c = self._usage_pair()
        created = self._created()
        response = {
            "id": f"resp_{_hex(32)}",
            "object": "response",
            "created_at": created,
            "completed_at": created + 1,
            "status": "completed",
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "max_tool_calls": None,
            "model": body.get("model") or "scripted-model",
            "output": [item],
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_logprobs": 0,
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": {
                "input_tokens": p,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": c,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": p + c,
            },
            "user": None,
            "metadata": body.get("metadata") or {},
        }
        # For previous_response_id chains: this response's conversation holds the
        # tool results counted so far (its own output is a call, not a result).
        with self._lock:
            self._response_results[response["id"]] = results
        return response

    def _responses_stream(self, response: dict) -> Iterable[tuple[str, str]]:
        seq = itertools.count()
        item = response["output"][0]

        def ev(kind: str, **fields: Any) -> tuple[str, str]:
            return kind, json.dumps({"type": kind, "sequence_number": next(seq), **fields})

        in_progress = {
            **response,
            "status": "in_progress",
            "output": [],
            "usage": None,
            "completed_at": None,
        }
        yield ev("response.created", response=in_progress)
        yield ev("response.in_progress", response=in_progress)
        if item["type"] == "function_call":
            yield ev("response.output_item.added", output_index=0, item={**item, "status": "in_progress", "arguments": ""})
            for piece in _pieces(item["arguments"]):
                yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=0, delta=piece)
            yield ev(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=0,
                name=item["name"],
                arguments=item["arguments"],
            )
        else:
            text = item["content"][0]["text"]
            yield ev("response.output_item.added", output_index=0, item={**item, "status": "in_progress", "content": []})
            empty_part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            yield ev("response.content_part.added", item_id=item["id"], output_index=0, content_index=0, part=empty_part)
            for piece in _words(text):
                yield ev(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=0,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            yield ev(
                "response.output_text.done", item_id=item["id"], output_index=0, content_index=0, text=text, logprobs=[]
            )
            yield ev(
                "response.content_part.done",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                part=item["content"][0],
            )
        yield ev("response.output_item.done", output_index=0, item=item)
        yield ev("response.completed", response=response)

    # -- Anthropic Messages -----------------------------------------------
    def _anthropic_message(self, body: dict, d: _Decision) -> dict:
        if d.tool:
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{_hex()}", "name": d.tool, "input": d.arguments}
        else:
            block = {"type": "text", "text": d.text or "", "citations": None}
        p, c = self._usage_pair()
        return {
            "id": f"msg_{_hex()}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "scripted-model",
            "content": [block],
            "stop_reason": "tool_use" if d.tool else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": p,
                "output_tokens": c,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "service_tier": "standard",
            },
        }

    def _anthropic_stream(self, message: dict) -> Iterable[tuple[str, str]]:
        def ev(kind: str, **fields: Any) -> tuple[str, str]:
            return kind, json.dumps({"type": kind, **fields})

        block = message["content"][0]
        usage = message["usage"]
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        }
        yield ev("message_start", message=start)
        if block["type"] == "tool_use":
            yield ev("content_block_start", index=0, content_block={**block, "input": {}})
            yield ev("ping")
            for piece in _pieces(json.dumps(block["input"], separators=(",", ":"))):
                yield ev("content_block_delta", index=0, delta={"type": "input_json_delta", "partial_json": piece})
        else:
            yield ev("content_block_start", index=0, content_block={"type": "text", "text": "", "citations": None})
            yield ev("ping")
            for piece in _words(block["text"]):
                yield ev("content_block_delta", index=0, delta={"type": "text_delta", "text": piece})
        yield ev("content_block_stop", index=0)
        yield ev(
            "message_delta",
            delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
            usage={"output_tokens": usage["output_tokens"]},
        )
        yield ev("message_stop")
