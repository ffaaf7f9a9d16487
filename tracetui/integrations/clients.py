"""Configured model clients: the ``openai`` and ``anthropic`` clients with tracetui's transport.

``tracetui.openai_client(**kwargs)`` is ``openai.OpenAI(http_client=..., **kwargs)`` whose HTTP
client goes through ``ModelTransport``: outside a session it behaves as the plain client; inside
``tracetui.record`` / ``tracetui.replay`` every model call is recorded or served
(``tracetui.integrations.transport``). Needs the ``openai`` (or ``anthropic``) extra.
"""

from __future__ import annotations

from typing import Any

from tracetui.integrations import transport


def _module() -> str:
    """``httpx2`` when installed (openai 3 and anthropic 2 are built on it; anthropic refuses httpx
    objects), else ``httpx``."""
    import importlib.util

    return "httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx"


def http_client() -> object:
    """A sync HTTP client for the SDKs, on tracetui's transport."""
    return transport.http_client(module=_module())


def async_http_client() -> object:
    """An async HTTP client for the SDKs, on tracetui's transport."""
    return transport.async_http_client(module=_module())


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


_PATCHED: set[str] = set()


def patch() -> bool:
    """Make ``openai.OpenAI`` / ``AsyncOpenAI`` and ``anthropic.Anthropic`` / ``AsyncAnthropic`` (and
    their subclasses: Azure, Bedrock...) default to tracetui's transports when built without an
    ``http_client``, so an unchanged program's model calls are recorded (the zero-code entry).

    Patches the packages the program has already imported (the zero-code entry calls it again when
    it imports the other one); when neither is imported yet, imports and patches whichever is
    installed. Idempotent; a client given its own ``http_client`` is left alone.

    Returns:
        True when at least one of the two packages is patched.
    """
    import importlib
    import sys

    names = [n for n in _SDK_CLASSES if n in sys.modules] or list(_SDK_CLASSES)
    done = False
    for module_name in names:
        try:
            module = sys.modules.get(module_name) or importlib.import_module(module_name)
        except ImportError:
            continue
        for cls_name, is_async in _SDK_CLASSES[module_name]:
            cls = getattr(module, cls_name, None)
            key = f"{module_name}.{cls_name}"
            if cls is None or key in _PATCHED:
                continue
            _wrap_init(cls, is_async)
            _PATCHED.add(key)
        done = True
    return done


_SDK_CLASSES = {"openai": (("OpenAI", False), ("AsyncOpenAI", True)),
                "anthropic": (("Anthropic", False), ("AsyncAnthropic", True))}


def _wrap_init(cls: Any, is_async: bool) -> None:
    import functools

    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("http_client") is None:
            kwargs["http_client"] = async_http_client() if is_async else http_client()
        original(self, *args, **kwargs)

    cls.__init__ = __init__
