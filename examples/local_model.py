"""A scripted model on 127.0.0.1 for the examples, so they run with no API key and no network.

``model_base_url()`` returns ``$OPENAI_BASE_URL`` when it is set (your own endpoint), else starts
the scripted model the tests use (``tests/integrations/servers.py``: Chat Completions, the
Responses API and Anthropic Messages, streamed or not) in this process and points the SDKs at it
(``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, keys ``test``; the Agents SDK's trace export off:
it would try the OpenAI platform). Its script: call ``get_weather``,
then ``send_report``, then answer. It also serves the "production API" the example tools call
(``/api/weather``, ``/api/reports``): a replay that reached it would show up in its log.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_started: list[object] = []


def model_base_url() -> str:
    """The OpenAI-style base URL (``http://HOST:PORT/v1``) the example's model is at."""
    if os.environ.get("OPENAI_BASE_URL"):
        return os.environ["OPENAI_BASE_URL"]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integrations"))
    from servers import ModelServer  # noqa: E402 - the tests' scripted model

    server = ModelServer().start()
    _started.append(server)
    os.environ["OPENAI_BASE_URL"] = server.base_url_openai
    os.environ["ANTHROPIC_BASE_URL"] = server.url
    os.environ.setdefault("OPENAI_API_KEY", "test")
    os.environ.setdefault("ANTHROPIC_API_KEY", "test")
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # its exporter would try api.openai.com
    return server.base_url_openai


def api_base() -> str:
    """Where the example tools' "production API" is (the model server's ``/api``)."""
    return model_base_url().rstrip("/").removesuffix("/v1") + "/api"
