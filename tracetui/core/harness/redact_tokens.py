"""The stable tokens: the project key (where it is looked for, how one is made) and the HMAC behind each token.

A token ``<EMAIL_7f3a09c1>`` is the value's kind and 8 hex digits of HMAC-SHA256 under the project
key (``StableTokens``), so the same value gives the same token in every file recorded with that key.
``load_key`` finds the key: an explicit file, ``TRACETUI_REDACTION_KEY``,
``TRACETUI_REDACTION_KEY_FILE``, then ``.tracetui/redaction.key`` (``docs/redaction.md``).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

from tracetui.core.harness.redact_patterns import CACHE_MAX, RedactionError

KEY_ENV = "TRACETUI_REDACTION_KEY"
KEY_FILE_ENV = "TRACETUI_REDACTION_KEY_FILE"
DEFAULT_KEY_PATH = Path(".tracetui") / "redaction.key"
"""The project key file, relative to the current directory."""
MIN_KEY_CHARS = 16
"""Shortest key ``load_key`` accepts: a short key lets anyone who knows one
value and its token brute-force the key, then reverse every phone number."""

_KEY_HELP = (
    f"set {KEY_ENV} to the key text (in CI: a secret), or {KEY_FILE_ENV} to a key file, or write one to "
    f"{DEFAULT_KEY_PATH} with: python -c 'import secrets; print(secrets.token_hex(32))' > {DEFAULT_KEY_PATH}"
    " (keep it out of git: recordings made with another key share no tokens with yours)"
)

_KIND_RE = re.compile(r"[A-Za-z][A-Za-z_]*\Z")


class RedactionKeyError(RedactionError):
    """The project redaction key cannot be used (unreadable, empty, too short).

    Attributes:
        source: Where the key was looked for (an env variable or a path).
    """

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class RedactionKeyMissing(RedactionKeyError):
    """No redaction key where one was expected; the message says how to provide one."""


class StableTokens:
    """Typed tokens under one key: ``<KIND_xxxxxxxx>``, the same for the same key, kind and value.

    Raises:
        RedactionKeyError: ``key`` is empty or not bytes.
    """

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, (bytes, bytearray, memoryview)) or not bytes(key):
            raise RedactionKeyError("Redactor(key=...)", "the key must be non-empty bytes; get one from load_key()")
        key = bytes(key)
        self.key_id: str = hashlib.sha256(b"tracetui redaction key id v1\0" + key).hexdigest()[:12]
        """12 hex digits naming the key; safe to write in a header (not reversible)."""
        # HMAC-SHA256 (RFC 2104) with its two keyed states precomputed: the
        # same digest as hmac.new(key, msg, sha256), at a third of the cost.
        block = hashlib.sha256(key).digest() if len(key) > 64 else key
        block = block.ljust(64, b"\0")
        self._inner = hashlib.sha256(bytes(b ^ 0x36 for b in block))
        self._outer = hashlib.sha256(bytes(b ^ 0x5C for b in block))
        self._tokens: dict[tuple[str, str], str] = {}

    def token(self, kind: str, value: str) -> str:
        """The token for ``value`` of type ``kind``: ``<KIND_xxxxxxxx>``.

        ``xxxxxxxx`` is the first 8 hex digits of HMAC-SHA256(key, kind + NUL +
        normalised value), kind in lower case. Normalisation: ``email`` lower
        case, ``phone`` its digits (a leading ``+`` kept), ``card`` its
        digits; any other kind is exact. 32 bits: two distinct values of one
        kind share a token with probability about n²/2³³ (1 % at 9,000 values).

        Raises:
            ValueError: ``kind`` is not letters and underscores.
        """
        if not _KIND_RE.match(kind):
            raise ValueError(f"token kind {kind!r} must be letters and underscores, such as 'email'")
        kind = kind.lower()
        if kind == "email":
            value = value.lower()
        elif kind in ("phone", "card"):
            digits = "".join(c for c in value if "0" <= c <= "9")
            value = "+" + digits if kind == "phone" and value.lstrip().startswith("+") else digits
        return self.normalised(kind, value)

    def normalised(self, kind: str, norm: str) -> str:
        """The token for a value already normalised (``kind`` in lower case)."""
        cached = self._tokens.get((kind, norm))
        if cached is None:
            inner = self._inner.copy()
            inner.update((kind + "\0" + norm).encode("utf-8", "surrogatepass"))
            outer = self._outer.copy()
            outer.update(inner.digest())
            cached = f"<{kind.upper()}_{outer.hexdigest()[:8]}>"
            if len(self._tokens) >= CACHE_MAX:
                self._tokens.clear()
            self._tokens[(kind, norm)] = cached
        return cached


def _read_key(path: Path, source: str, *, named: bool) -> bytes:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if named:  # configured explicitly: falling back to another key would silently change every token
            raise RedactionKeyError(
                source, "the redaction key file named here does not exist; fix the path, or create the file with: "
                "python -c 'import secrets; print(secrets.token_hex(32))' > FILE (mode 0600, out of git)"
            ) from None
        raise RedactionKeyMissing(source, f"no redaction key; {_KEY_HELP}") from None
    except OSError as e:
        raise RedactionKeyError(source, f"cannot read the redaction key ({e.strerror or e}); fix its permissions") from None
    return _check_key(raw, source)


def _check_key(raw: bytes, source: str) -> bytes:
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise RedactionKeyError(source, "the redaction key is not UTF-8 text; write it as hex text") from None
    if not text:
        raise RedactionKeyError(source, f"the redaction key is empty; {_KEY_HELP}")
    if len(text) < MIN_KEY_CHARS:
        raise RedactionKeyError(
            source,
            f"the redaction key is {len(text)} characters; use at least {MIN_KEY_CHARS} "
            "(python -c 'import secrets; print(secrets.token_hex(32))')",
        )
    return text.encode("utf-8")


def _create_key(path: Path) -> None:
    """Write a new random key at ``path`` (mode 0600) unless one appears there first.

    The key is written to a private temporary file and hard-linked into place,
    so no reader ever sees a half-written key and a concurrent creator loses
    cleanly (``FileExistsError``: its key is discarded, the winner's is read).
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = (secrets.token_hex(32) + "\n").encode("ascii")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links on this filesystem: exclusive create instead
            try:
                fd = os.open(path, flags, 0o600)
            except FileExistsError:
                pass
            else:
                try:
                    os.write(fd, data)
                    os.fsync(fd)
                finally:
                    os.close(fd)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    ignore = path.parent / ".gitignore"
    try:
        fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return  # one exists (keep it) or cannot be written (the key still is)
    try:
        os.write(fd, f"{path.name}\n".encode())
    finally:
        os.close(fd)


def load_key(path: str | os.PathLike[str] | None = None, *, create: bool = False) -> tuple[bytes, str]:
    """The project redaction key and where it came from.

    Looked up in order: ``path`` (an explicit ``--redaction-key-file`` wins), env
    ``TRACETUI_REDACTION_KEY`` (the key text itself), env ``TRACETUI_REDACTION_KEY_FILE``, then
    ``.tracetui/redaction.key`` under the current directory. The first source
    that is *set* is used: a named file that does not exist is an error, not a
    reason to fall back to another key (tokens would silently stop matching).
    A key is its text without surrounding whitespace, UTF-8 encoded, so the
    same text in the env variable or in a file gives the same tokens.

    Args:
        path: A key file chosen by the caller (``--key-file``).
        create: With no key anywhere, create the default file: 32 random bytes
            as hex text, mode 0600, parent created, written atomically; a
            ``.gitignore`` naming it is added beside it when there is none.

    Returns:
        ``(key, source)``: the key bytes and ``"env TRACETUI_REDACTION_KEY"``
        or the key file's path.

    Raises:
        RedactionKeyMissing: nothing configured, no default file, and
            ``create`` is false.
        RedactionKeyError: a named key file (``path``, the env variable) that
            does not exist; a key that is empty, shorter than 16 characters,
            not UTF-8, or unreadable; or the default file cannot be created.
    """
    if path is not None:
        p = Path(path)
        return _read_key(p, str(p), named=True), str(p)
    env = os.environ.get(KEY_ENV)
    if env is not None:
        source = f"env {KEY_ENV}"
        if not env.strip():
            raise RedactionKeyError(source, f"set but empty (a missing CI secret?); set the key or unset {KEY_ENV}")
        return _check_key(env.encode("utf-8", "surrogateescape"), source), source
    env_file = os.environ.get(KEY_FILE_ENV)
    if env_file is not None:
        if not env_file.strip():
            raise RedactionKeyError(f"env {KEY_FILE_ENV}", f"set but empty; name the key file or unset {KEY_FILE_ENV}")
        p = Path(env_file)
        return _read_key(p, f"{p} (from env {KEY_FILE_ENV})", named=True), str(p)
    p = Path.cwd() / DEFAULT_KEY_PATH
    if create and not p.exists():
        try:
            _create_key(p)
        except OSError as e:
            raise RedactionKeyError(str(p), f"cannot create the redaction key ({e.strerror or e}); {_KEY_HELP}") from None
    return _read_key(p, str(p), named=False), str(p)
