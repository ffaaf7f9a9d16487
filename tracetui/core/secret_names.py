"""Which field names hold secrets: the vocabulary the redactor (``harness.redact``) and the readers'
credential masking (``readers.mask``) share.

A field name is normalised by splitting camelCase, lower-casing and reading ``-`` as ``_``
(``X-Api-Key``, ``x_api_key`` and ``xApiKey`` are one name); it is secret when it *is* one of
``SECRET_KEYS`` or *ends* with ``_`` + one of them.
"""

from __future__ import annotations

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

SECRET_KEYS: frozenset[str] = frozenset({
    "authorization", "proxy_authorization", "password", "passwd", "secret", "client_secret",
    "api_key", "apikey", "x_api_key", "access_token", "refresh_token", "id_token", "token",
    "cookie", "set_cookie", "private_key",
    "passphrase", "pwd", "secret_key", "secret_access_key", "session_id", "otp", "pin", "cvv", "cvc",
    "connection_string",
})
"""Normalised field names whose value is a secret (rule ``secret_field``).

A field name is normalised by splitting camelCase, lower-casing and reading
``-`` as ``_`` (``X-Api-Key``, ``x_api_key`` and ``xApiKey`` are one name). A
name is secret when it *is* one of these or *ends* with ``_`` + one of them
(``session_token``, ``db_password``, ``OPENAI_API_KEY``); ``max_tokens``,
``token_count`` and ``idempotency_key`` are not.
"""


def normalise_field(name: str) -> str:
    """A field name as rules compare it: camelCase split, lower case, ``-`` read as ``_``."""
    return _CAMEL.sub("_", name).lower().replace("-", "_")


def is_secret_field(norm: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a normalised field name is, or ends in ``_`` + , a name of ``SECRET_KEYS`` or ``extra``."""
    if norm in SECRET_KEYS or norm in extra:
        return True
    i = norm.rfind("_")
    while i >= 0:
        tail = norm[i + 1:]
        if tail in SECRET_KEYS or tail in extra:
            return True
        i = norm.rfind("_", 0, i)
    return False
