"""Configured model clients: the ``openai`` and ``anthropic`` clients with tracetui's transport.

``tracetui.openai_client(**kwargs)`` is ``openai.OpenAI(http_client=..., **kwargs)`` whose HTTP
client goes through ``ModelTransport``: outside a session it behaves as the plain client; inside
``tracetui.record`` / ``tracetui.replay`` every model call is recorded or served
(``tracetui.integrations.transport``). Needs the ``openai`` (or ``anthropic``) extra.
"""

from __future__ import annotations

from typing import Any

from tracetui.integrations.transport import async_http_client, http_client


def openai_client(**kwargs: Any) -> Any:
    """An ``openai.OpenAI`` client recorded and replayed by tracetui (``kwargs`` as for the client:
    ``base_url``, ``api_key``, ``max_retries``...)."""
    import openai

    return openai.OpenAI(http_client=http_client(), **kwargs)


def async_openai_client(**kwargs: Any) -> Any:
    """An ``openai.AsyncOpenAI`` client recorded and replayed by tracetui."""
    import openai

    return openai.AsyncOpenAI(http_client=async_http_client(), **kwargs)


def anthropic_client(**kwargs: Any) -> Any:
    """An ``anthropic.Anthropic`` client recorded and replayed by tracetui."""
    import anthropic

    return anthropic.Anthropic(http_client=http_client(), **kwargs)


def async_anthropic_client(**kwargs: Any) -> Any:
    """An ``anthropic.AsyncAnthropic`` client recorded and replayed by tracetui."""
    import anthropic

    return anthropic.AsyncAnthropic(http_client=async_http_client(), **kwargs)
