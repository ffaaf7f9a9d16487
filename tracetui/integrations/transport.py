"""httpx transports that record and replay model calls at the HTTP boundary.

Every framework built on the ``openai`` or ``anthropic`` client reaches the model through an
``httpx`` transport; ``ModelTransport`` (sync) and ``AsyncModelTransport`` (async) sit there.
With no tracetui session open they pass every request through untouched. Inside one
(``tracetui.record`` / ``tracetui.replay``), a model call (``wire.api_of``: Chat Completions,
Responses, Anthropic Messages; streamed or not) is an LLM span:

- **record**: sent live, the response returned to the client as received, and the wire request
  and response written whole (redacted) with the semantic fields derived from them;
- **frozen replay**: never sent; the recorded response for the same model, messages and params
  is returned — a streamed one as the same stream of events — or ``InputMismatch`` is raised
  (and written) when the recording holds no such call. A recording made by another tool (an
  OTel export...) holds no wire response: one is built from its output message in the API the
  client asked for, streamed or not (``wire_build``);
- **model-in-the-loop replay** (``llm="live"``): sent live through the socket guard, recorded.

Any other request (``/v1/models``, embeddings, files) is passed through in record mode and
refused in replay (``LiveCallBlocked``): nothing leaves a replay that tracetui does not record.
Recording a streamed response reads it whole before the client sees the first event (the span
is written when the call ends): streaming works, but not incrementally, while recording.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson

from tracetui.core.errors import LiveCallBlocked
from tracetui.core.harness.ambient import HarnessSession, current_session
from tracetui.integrations import wire
from tracetui.integrations.wire_build import build_response

_PROVIDER = {"openai.chat": "openai", "openai.responses": "openai", "anthropic.messages": "anthropic"}


def _session() -> HarnessSession | None:
    session = current_session()
    return session if session is not None and session.engine is not None else None


def _prepare(session: HarnessSession, request: httpx.Request, api: str) -> tuple[wire.ModelRequest, dict[str, Any]]:
    req = wire.parse_request(api, request.content)
    inputs: dict[str, Any] = {"provider": _PROVIDER[api], "api": api, "tool_schemas_hash": req.tools_hash,
                              "wire_request": {"method": request.method, "path": request.url.path, "body": req.body}}
    inputs["prompt_hash"] = session.saw_system_prompt(req.system)  # '' (no system prompt) is a prompt too
    return req, inputs


def _decoder(session: HarnessSession, api: str) -> Callable[[Any], dict[str, Any]]:
    def decode(live: tuple[int, str, bytes]) -> dict[str, Any]:
        status, content_type, raw = live
        fields = wire.response_fields(api, status, content_type, raw)
        events = fields["wire_response"].get("events")
        if events:  # a value split across deltas is redacted whole, before the engine writes it
            wire.redact_stream(api, events, session.redactor.text, session.redactor.value)
        return fields
    return decode


def _served(hx: Any, request: Any, data: dict[str, Any], req: wire.ModelRequest) -> Any:
    """The recorded wire response of a served LLM span, rebuilt byte for byte where it can be; a
    recording without one (another tool's trace) gets a response built from its output message
    in the API and streaming ``req`` asked for (``wire_build``)."""
    recorded = data.get("wire_response") or {}
    if not recorded:
        status, content_type, content = build_response(req.api, req.stream, data, req.model, req.body)
        headers = {"content-type": content_type, "x-tracetui-replay": "built-from-recording"}
        return hx.Response(status, headers=headers, content=content, request=request)
    status = int(recorded.get("status") or 200)
    content_type = str(recorded.get("content_type") or "application/json")
    if "events" in recorded:
        content = wire.sse_bytes(recorded["events"])
    else:
        body = recorded.get("body")
        content = body.encode() if isinstance(body, str) else orjson.dumps(body)
    headers = {"content-type": content_type, "x-tracetui-replay": "recording"}
    return hx.Response(status, headers=headers, content=content, request=request)


def _live_response(hx: Any, request: Any, live: tuple[int, str, bytes], headers: Any) -> Any:
    status, _ctype, raw = live
    keep = hx.Headers({k: v for k, v in headers.items()
                       if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")})
    return hx.Response(status, headers=keep, content=raw, request=request)


def _refuse(session: HarnessSession, request: Any) -> LiveCallBlocked:
    return LiveCallBlocked(f"{session.mode} replay refused {request.method} {request.url.path}: it is not a model "
                           "call tracetui records (Chat Completions, Responses, Anthropic Messages), and a replay "
                           "never reaches a live system")


def _relay_proxy() -> dict[str, Any]:
    """``{"proxy": URL}`` inside a replay sandbox with a model relay (``core.harness.relay``: the
    only route out of the namespace), else ``{}``. A transport given to an httpx client ignores
    the proxy variables, so the live call's inner transport is pointed at the relay here."""
    import os

    from tracetui.core.harness.relay import ENV_PROXY

    url = os.environ.get(ENV_PROXY)
    return {"proxy": url} if url else {}


def _through_relay(transport: Any) -> Any:
    """``transport()`` pointed at the model relay where there is one (``_relay_proxy``); a
    transport class that takes no ``proxy`` gets none (inside the sandbox it then has no route)."""
    try:
        return transport(**_relay_proxy())
    except TypeError:
        return transport()


def _make_transports(hx: Any) -> tuple[type, type]:
    """``(ModelTransport, AsyncModelTransport)`` on the httpx-compatible module ``hx`` (``httpx``,
    or ``httpx2``, which openai 3 and anthropic 2 are built on)."""

    class ModelTransport(hx.BaseTransport):  # type: ignore[name-defined]
        """A sync httpx transport recording and replaying model calls (module docstring).

        Args:
            inner: The transport live calls go through (default ``hx.HTTPTransport()``, through the
                replay sandbox's model relay when there is one, ``core.harness.relay``).
        """

        def __init__(self, inner: Any = None) -> None:
            self.inner = inner if inner is not None else _through_relay(hx.HTTPTransport)

        def handle_request(self, request: Any) -> Any:
            session = _session()
            if session is None:
                return self.inner.handle_request(request)
            api = wire.api_of(request.method, request.url.path)
            if api is None:
                if session.mode != "record":
                    raise _refuse(session, request)
                return self.inner.handle_request(request)
            request.read()
            try:
                req, inputs = _prepare(session, request, api)
            except wire.WireError:
                if session.mode != "record":
                    raise _refuse(session, request) from None
                return self.inner.handle_request(request)
            headers: list[Any] = []

            def live() -> tuple[int, str, bytes]:
                response = self.inner.handle_request(request)
                try:
                    raw = response.read()
                finally:
                    response.close()
                headers.append(response.headers)
                return response.status_code, response.headers.get("content-type", ""), raw

            from tracetui.core.harness.steps import run_steps

            raw, data = run_steps(session.engine.llm_steps(  # type: ignore[union-attr]
                req.messages, req.model, None, None, req.params, live=live, decode=_decoder(session, api), inputs=inputs))
            if raw is None:
                return _served(hx, request, data, req)
            return _live_response(hx, request, raw, headers[-1])

        def close(self) -> None:
            self.inner.close()


    class AsyncModelTransport(hx.AsyncBaseTransport):  # type: ignore[name-defined]
        """The async twin of ``ModelTransport``: a live call is awaited (the event loop never blocks).

        Args:
            inner: The transport live calls go through (default ``hx.AsyncHTTPTransport()``, through
                the replay sandbox's model relay when there is one).
        """

        def __init__(self, inner: Any = None) -> None:
            self.inner = inner if inner is not None else _through_relay(hx.AsyncHTTPTransport)

        async def handle_async_request(self, request: Any) -> Any:
            session = _session()
            if session is None:
                return await self.inner.handle_async_request(request)
            api = wire.api_of(request.method, request.url.path)
            if api is None:
                if session.mode != "record":
                    raise _refuse(session, request)
                return await self.inner.handle_async_request(request)
            await request.aread()
            try:
                req, inputs = _prepare(session, request, api)
            except wire.WireError:
                if session.mode != "record":
                    raise _refuse(session, request) from None
                return (await self.inner.handle_async_request(request))
            headers: list[Any] = []

            async def live() -> tuple[int, str, bytes]:
                response = await self.inner.handle_async_request(request)
                try:
                    raw = await response.aread()
                finally:
                    await response.aclose()
                headers.append(response.headers)
                return response.status_code, response.headers.get("content-type", ""), raw

            from tracetui.core.harness.steps import arun_steps

            raw, data = await arun_steps(session.engine.llm_steps(  # type: ignore[union-attr]
                req.messages, req.model, None, None, req.params, live=live, decode=_decoder(session, api), inputs=inputs))
            if raw is None:
                return _served(hx, request, data, req)
            return _live_response(hx, request, raw, headers[-1])

        async def aclose(self) -> None:
            await self.inner.aclose()

    return ModelTransport, AsyncModelTransport


_TRANSPORTS: dict[str, tuple[type, type]] = {}


def transports(module: str = "httpx") -> tuple[type, type]:
    """``(ModelTransport, AsyncModelTransport)`` for ``module``: ``"httpx"`` (LangChain and any httpx
    client) or ``"httpx2"`` (the openai 3 and anthropic 2 SDKs, which refuse httpx objects).

    Raises:
        ImportError: the module is not installed.
    """
    if module not in _TRANSPORTS:
        if module not in ("httpx", "httpx2"):
            raise ValueError(f"transports(): module must be 'httpx' or 'httpx2', not {module!r}")
        _TRANSPORTS[module] = _make_transports(__import__(module))
    return _TRANSPORTS[module]


ModelTransport, AsyncModelTransport = transports("httpx")


def http_client(*, module: str = "httpx", **kwargs: Any) -> Any:
    """A ``Client`` of ``module`` (``httpx`` or ``httpx2``) whose transport is a ``ModelTransport``
    (``kwargs`` go to the client)."""
    hx = __import__(module)
    return hx.Client(transport=transports(module)[0](), **kwargs)


def async_http_client(*, module: str = "httpx", **kwargs: Any) -> Any:
    """An ``AsyncClient`` of ``module`` whose transport is an ``AsyncModelTransport``."""
    hx = __import__(module)
    return hx.AsyncClient(transport=transports(module)[1](), **kwargs)
