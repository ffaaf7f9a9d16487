"""Redaction before write: PII and secrets become stable typed tokens.

Rule (issue 4, ``../shared/design/practice.md`` "Privacy"): redaction runs on
every value *before* a byte of it is written, never as a later scrub. Each
value a rule matches becomes a **typed token** ``<EMAIL_7f3a09c1>``: the type
says what was there, and 8 hex digits of HMAC-SHA256 under the project key say
*which* value, so the same value maps to the same token in every file recorded
with that key (replay matching keeps working), while a different value or key
gives a different token and nobody without the key can reverse it by hashing
guesses. Text around a match is kept byte for byte, so a malformed identifier
that triggered a bug stays malformed.

A value replaced whole because of its field (a secret-named field, a field a
tool declares sensitive) is remembered by the ``Redactor`` and replaced
wherever it appears afterwards, as whole words: the address a tool declared
sensitive stays hidden when the agent pastes that tool's output into its next
model call or quotes it in its answer.

Rules (``RULES``), what each matches and its limits are described in
``docs/redaction.md``.

Size: the redactor whole (patterns, tokens, the walk over values); the split by job asked in issue 17 is still open.
"""

from __future__ import annotations

import base64
import bisect
import binascii
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Callable

from tracetui.core.errors import TracetuiError

RULES: tuple[str, ...] = ("email", "phone", "card", "api_key", "bearer", "secret_field", "sensitive_field")
"""Every rule, in the order they are reported."""

SECRET_KEYS: frozenset[str] = frozenset({
    "authorization", "proxy_authorization", "password", "passwd", "secret", "client_secret",
    "api_key", "apikey", "x_api_key", "access_token", "refresh_token", "id_token", "token",
    "cookie", "set_cookie", "private_key",
})
"""Normalised field names whose value is a secret (rule ``secret_field``).

A field name is normalised by splitting camelCase, lower-casing and reading
``-`` as ``_`` (``X-Api-Key``, ``x_api_key`` and ``xApiKey`` are one name). A
name is secret when it *is* one of these or *ends* with ``_`` + one of them
(``session_token``, ``db_password``, ``OPENAI_API_KEY``); ``max_tokens``,
``token_count`` and ``idempotency_key`` are not.
"""

TOKEN_RE = re.compile(r"<[A-Z_]+_[0-9a-f]{8}>")
"""A redaction token anywhere in a string; text that holds one is left as it is."""

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


class RedactionError(TracetuiError):
    """Base class of the errors this module raises."""


class UnknownRule(RedactionError, ValueError):
    """A rule name that is not in ``RULES``; the message lists the valid ones."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown redaction rule {name!r}; valid rules: {', '.join(RULES)}")


class UnsupportedValue(RedactionError, TypeError):
    """A value that is not JSON-like (dict/list/tuple/str/int/float/bool/None).

    Attributes:
        type_name: The offending type.
        where: Path of dict keys and list indexes from the top of the value.
    """

    def __init__(self, type_name: str, reason: str = "") -> None:
        self.type_name = type_name
        self.reason = reason
        self.where: list[str | int] = []
        super().__init__(type_name)

    def __str__(self) -> str:
        at = "".join(f"[{p!r}]" for p in self.where) or "the top level"
        why = self.reason or (
            f"cannot redact a {self.type_name}: only JSON values (dict, list, str, int, float, bool, None) "
            "are recorded; convert it to one before it reaches the tool layer"
        )
        return f"{why} (at {at})"


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


# --------------------------------------------------------------------------- patterns
#
# Speed: CPython's regex engine is fast only when a pattern starts with a
# literal or a character class (it then skips ahead in C); an alternation of
# twelve rules that start with look-behinds costs about a microsecond per
# character. So each rule is its own pattern starting with a consumable
# character (boundaries are look-behinds placed after it), a string is first
# screened by one cheap search (``_PRE``/``_DIGITS``), only the rules whose
# trigger text occurs in it run, and their matches are merged leftmost-first.

# Value grammar after ``key: `` / ``key=`` / ``"key": ``: a double-quoted string
# (JSON escapes; an unterminated one runs to the end of the line, so a
# truncated output leaks nothing), the same inside a JSON-encoded string
# (``\"key\": \"value\"``), a single-quoted one, or a bare word (not JSON's
# null/true/false, and never taking a closing bracket or brace with it).
_VALUE = (
    r"""\\?["']?[ \t]*[:=][ \t]*(?:"""
    r'''"(?P<kv_dq>(?:[^"\\\r\n]|\\.)*)(?:"|(?=[\r\n])|\Z)'''
    r'''|\\"(?P<kv_eq>(?:[^"\\\r\n]|\\\\\\"|\\[^"\r\n])*)\\"'''
    r"""|'(?P<kv_sq>[^'\r\n]*)'"""
    r"""|(?P<kv_uq>(?!(?:null|true|false)(?![\w-]))[^\s"'&,;<>{}\[\]()\\=][^\s"'&,;<>{}\[\])]*))"""
)
_AK = (
    r"(?:sk-ant-[A-Za-z0-9_-]{20,}"
    r"|sk-(?:proj-)?(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,}"
    r"|A(?:KIA|SIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|[sr]k_live_[0-9A-Za-z]{10,}|sk_test_[0-9A-Za-z]{10,}"
    r")(?![A-Za-z0-9_-])"
)
_JWT = r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
_RULE_PATTERNS: dict[str, str] = {
    "tok": r"<[A-Z_]+_[0-9a-f]{8}>",
    # secret_field in free text: ``password=…``, ``"api_key": "…"``,
    # ``Authorization: Bearer …``; anchored at the secret word, the handler
    # reads the whole field name back to its start and applies SECRET_KEYS.
    "kv": r"(?P<kv_key>[AaCcPpSsTt](?:(?<=[Pp])(?i:assw(?:or)?d|rivate[-_]?key)|(?<=[Ss])(?i:ecret)"
          r"|(?<=[Tt])(?i:oken)|(?<=[Aa])(?i:pi[-_]?key|uthorization)|(?<=[Cc])(?i:ookie)))(?![\w-])" + _VALUE,
    # URL credentials: scheme://user:PASSWORD@host
    "ui": r"""://(?<=[A-Za-z0-9+.-]://)[^\s/:@<>"']+:(?P<ui_pw>[^\s/@<>"']+)@""",
    # signed-URL query parameters (S3, GCS, Azure SAS)
    "sg": r"""[?&](?i:x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-signature"""
          r"""|x-goog-credential|signature|sig)=(?P<sg_v>[^&\s#"'<>]+)""",
    # api_key: PEM private keys (a truncated one to the end of its base64) and
    # well-known key prefixes; the boundary before a key is checked in Python.
    "pem": r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
           r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\]*)",
    "ak": _AK,
    # bearer: a letters-only word after "Bearer" must be 20+ long, so prose
    # ("Bearer authentication") stays; "Basic" is checked to decode to user:pass.
    "br": r"[Bb](?<![\w-][Bb])(?i:earer)[ \t]+(?P<br_v>(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-]|[A-Za-z0-9._~+/=-]{20})"
          r"[A-Za-z0-9._~+/=-]{8,})",
    "ba": r"[Bb](?<![\w-][Bb])(?i:asic)[ \t]+(?P<ba_v>[A-Za-z0-9+/]{4,}={0,2})(?![\w+/=-])",
    "jwt": r"eyJ(?<![\w-]eyJ)" + _JWT[3:],
    # email: the common practical form (RFC 5322 dot-atom, no quoted local
    # part, no comments), anchored at "@"; the local part is read back in
    # Python. Quotes, "=" and "/" are not local-part characters here, so
    # ``key=a@b.co`` and ``'a@b.co'`` keep their punctuation.
    "em": r"@(?<=[\w%+-]@)(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+(?:[^\W\d_]{2,63}|xn--[A-Za-z0-9-]{1,59})"
          r"(?![\w-]|\.[^\W_])",
    # phone: E.164 after "+", NANP, and 0-prefixed national groupings; never
    # starts or ends inside a longer run of digit groups (a card, a table, a
    # date), nor after a letter, dot, slash or dash (ids, versions, paths).
    "ph": r"[+(0-9](?<![\w.+/-].)(?<![0-9][ .-].)(?:"
          r"(?<=\+)(?P<ph_i>[0-9](?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]))+)"
          r"|(?<=\()[0-9]{3}\)[ ]?[0-9]{3}[ .-][0-9]{4}"
          r"|(?<=1)[ .-]?\([0-9]{3}\)[ ]?[0-9]{3}[ .-][0-9]{4}"
          r"|(?<=1)[ .-][0-9]{3}(?P<ph_s1>[ .-])[0-9]{3}(?P=ph_s1)[0-9]{4}"
          r"|(?<=[0-9])[0-9]{2}(?P<ph_s>[ .-])[0-9]{3}(?P=ph_s)[0-9]{4}"
          r"|(?<=0)[1-9](?P<ph_f>[ .-])[0-9]{2}(?:(?P=ph_f)[0-9]{2}){3}"
          r"|(?<=0)[1-9][0-9]{1,3}(?P<ph_u>[ /-])[0-9]{3,4}(?:(?P=ph_u)?[0-9]{3,4})?"
          r")(?!\w|[ .-]?[0-9])",
    # card: 13-19 digits, single spaces or dashes between groups; in Python:
    # the Luhn check digit, and a first digit of 2-6 (ISO/IEC 7812 major
    # industry identifiers of payment cards: Mir/Mastercard 2, Amex/JCB/Diners
    # 3, Visa 4, Mastercard 5, Discover/UnionPay 6), which keeps millisecond
    # timestamps and snowflake ids (starting with 1) from becoming cards.
    "cd": r"[0-9](?<![\w.][0-9])(?<![0-9][ -][0-9])(?:[ -]?[0-9]){12,18}(?![0-9]|\.[0-9])",
}
_COMPILED = {name: re.compile(p) for name, p in _RULE_PATTERNS.items()}
_PATTERN_RULE = {
    "kv": "secret_field", "ui": "secret_field", "sg": "secret_field",
    "pem": "api_key", "ak": "api_key",
    "br": "bearer", "ba": "bearer", "jwt": "bearer",
    "em": "email", "ph": "phone", "cd": "card",
}
# Screen: a string none of these occur in (lower-cased) cannot match any rule.
_PRE = re.compile(
    r"@|://|s(?:ig|ecret|k[-_])|p(?:assw|rivate)|token|a(?:pi[-_]?key|uthoriz|kia|sia|iza)|cookie"
    r"|b(?:earer|asic)|eyj|rk_|x(?:-amz|-goog|ox[abprs]-)|g(?:h[pousr]_|ithub_pat_)|-----begin"
)
_DIGITS = re.compile(r"[0-9](?:[ ()./-]{0,2}[0-9]){8}")  # 9 digits close together: phone or card

_TOKEN_FULL = re.compile(r"<[A-Z_]+_[0-9a-f]{8}>\Z")
_JWT_FULL = re.compile(_JWT + r"\Z")
_AK_FULL = re.compile(_AK + r"\Z")
_LOCAL = re.compile(r"(?<![\w.%+-])[\w%+-](?:[\w.%+-]*[\w%+-])?\Z")
_KIND_RE = re.compile(r"[A-Za-z][A-Za-z_]*\Z")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_DIGIT_GROUP = re.compile(r"[0-9]+")
_PHONE_GROUP = re.compile(r"\([0-9]+\)|[0-9]+")
_EXTEND_LINE = re.compile(r"""[^\r\n"'<>]*""")
_MIN_LEN = 6  # shortest text any rule matches: "a@b.co", "?sig=x"
_LEARN_MIN = 4  # shortest secret/sensitive value searched for elsewhere ("Lyon"; not "41")
_LEARN_MAX = 65536  # values remembered per Redactor
_LEARN_LONGEST = 4096  # longer values are only replaced where they are a whole field
_WORD_RUN = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
_WORD_CHAR = re.compile(r"\w")
_CACHE_MAX = 65536

_Find = Callable[[str, int], "tuple[int, re.Match[str]] | None"]
_Handle = Callable[[str, int, "re.Match[str]"], "tuple[int, str] | None"]


def _finder(pattern: re.Pattern[str]) -> _Find:
    search = pattern.search

    def find(s: str, pos: int) -> tuple[int, re.Match[str]] | None:
        m = search(s, pos)
        return None if m is None else (m.start(), m)

    return find


def _finder_in(found: list[tuple[int, int, str]]) -> _Find:
    """A finder over matches computed beforehand: (start, (end, value)) of the first at ``pos`` or later."""

    def find(s: str, pos: int) -> tuple[int, Any] | None:
        for start, end, value in found:
            if start >= pos:
                return start, (end, value)
        return None

    return find


def _find_email(s: str, pos: int) -> tuple[int, re.Match[str]] | None:
    """Next email starting at ``pos`` or later: the "@domain" match and its local part's start."""
    search = _COMPILED["em"].search
    local = _LOCAL.search
    while True:
        m = search(s, pos + 1)
        if m is None:
            return None
        at = m.start()
        lm = local(s, max(pos, at - 64), at)  # RFC 5321: a local part is at most 64 octets
        if lm is not None:
            return lm.start(), m
        pos = at


def _luhn(digits: str) -> bool:
    """Luhn (ISO/IEC 7812-1 check digit) over an ASCII digit string."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = ord(c) - 48
        if i & 1:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def normalise_field(name: str) -> str:
    """A field name as rules compare it: camelCase split, lower case, ``-`` read as ``_``."""
    return _CAMEL.sub("_", name).lower().replace("-", "_")


def _is_secret_field(norm: str) -> bool:
    if norm in SECRET_KEYS:
        return True
    i = norm.rfind("_")
    while i > 0:
        if norm[i + 1:] in SECRET_KEYS:
            return True
        i = norm.rfind("_", 0, i)
    return False


class _Sensitive:
    """One tool's declared sensitive fields: normalised names and a free-text matcher."""

    __slots__ = ("names", "regex", "heads")

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        parts = [[p for p in n.split("_") if p] for n in sorted(names, key=len, reverse=True)]
        words = "|".join("[-_]?".join(re.escape(p) for p in ps) for ps in parts)
        self.regex = re.compile(r"(?<![\w-])(?P<kv_key>(?i:" + words + r"))(?![\w-])" + _VALUE)
        self.heads = tuple({ps[0] for ps in parts})  # a name's first word must occur for it to match


class Redactor:
    """Replaces PII and secrets in recorded values with stable typed tokens.

    One instance per recording (its ``fired`` counts feed the header); tokens
    depend only on the key, so instances with the same key agree across files.

    Args:
        key: The project redaction key (see ``load_key``); any non-empty bytes.
        sensitive_fields: Tool name -> field names that tool declares sensitive.
            Matched case-insensitively (``-``/``_`` and camelCase equivalent) as
            dict keys at any depth of that tool's arguments and output, and as
            ``"name": "value"`` / ``name=value`` inside its strings. A single
            string is read as one field name.
        rules: The rules to run, a subset of ``RULES`` (default: all).

    Raises:
        UnknownRule: a name in ``rules`` is not in ``RULES`` (also a ``ValueError``).
        RedactionKeyError: ``key`` is empty or not bytes.

    Values replaced whole by ``secret_field`` or ``sensitive_field`` are
    remembered (at least 4 characters; digit-only values under 8 are not) and
    replaced as whole words wherever they appear later, with the same token,
    counted under the same rule. Hence one instance per recording: a replay's
    instance never sees those raw values, so only values that flow again (an
    argument the agent passes) are remembered there.

    Not thread-safe for ``fired``: concurrent calls may undercount, never
    drop a rule that fired.
    """

    def __init__(
        self,
        key: bytes,
        *,
        sensitive_fields: Mapping[str, Iterable[str]] | None = None,
        rules: Iterable[str] | None = None,
    ) -> None:
        if not isinstance(key, (bytes, bytearray, memoryview)) or not bytes(key):
            raise RedactionKeyError("Redactor(key=...)", "the key must be non-empty bytes; get one from load_key()")
        self._key = bytes(key)
        self.key_id: str = hashlib.sha256(b"tracetui redaction key id v1\0" + self._key).hexdigest()[:12]
        """12 hex digits naming the key; safe to write in a header (not reversible)."""
        # HMAC-SHA256 (RFC 2104) with its two keyed states precomputed: the
        # same digest as hmac.new(key, msg, sha256), at a third of the cost.
        block = hashlib.sha256(self._key).digest() if len(self._key) > 64 else self._key
        block = block.ljust(64, b"\0")
        self._inner = hashlib.sha256(bytes(b ^ 0x36 for b in block))
        self._outer = hashlib.sha256(bytes(b ^ 0x5C for b in block))
        if rules is None:
            chosen = set(RULES)
        else:
            chosen = set()
            for r in ([rules] if isinstance(rules, str) else rules):
                if r not in RULES:
                    raise UnknownRule(str(r))
                chosen.add(r)
        self.rules: tuple[str, ...] = tuple(r for r in RULES if r in chosen)
        """Rules that run, in ``RULES`` order."""
        self._on = {name: _PATTERN_RULE[name] in chosen for name in _PATTERN_RULE}
        self._secret_on = "secret_field" in chosen
        self._sensitive_on = "sensitive_field" in chosen
        self._api_key_on = "api_key" in chosen
        self._sensitive: dict[str, _Sensitive] = {}
        for tool, fields in (sensitive_fields or {}).items():
            names = [fields] if isinstance(fields, str) else list(fields)
            bad = [f for f in names if not isinstance(f, str) or not f.strip("-_ ")]
            if bad:
                raise ValueError(f"sensitive_fields[{tool!r}]: field names must be non-empty strings, got {bad[0]!r}")
            if names:
                self._sensitive[tool] = _Sensitive(frozenset(normalise_field(f) for f in names))
        self._counts: dict[str, int] = {}
        self._tokens: dict[tuple[str, str], str] = {}
        self._fields: dict[str, tuple[str, bool]] = {}  # raw key -> (normalised, secret?)
        self._clean_keys: set[str] = set()  # dict keys known to need no text redaction
        # Values replaced whole (secret and sensitive fields) are remembered and
        # replaced wherever they appear later: an address a tool declared
        # sensitive is still hidden when the agent quotes it to the model.
        # Indexed by their first word: a string is searched only when one of
        # its words starts a learned value (one C-level set test otherwise).
        self._learned: dict[str, tuple[str, str]] = {}  # raw value (or an escaped form) -> (rule, kind)
        self._alias: dict[str, str] = {}  # JSON-escaped form of a learned value -> the raw value
        # first word -> [(-length, offset of that word in the value, values)], longest first
        self._learned_by_word: dict[str, list[tuple[int, int, set[str]]]] = {}
        self._min_len = _MIN_LEN
        f = _finder
        c = _COMPILED
        # priority order: at one position the first rule listed wins
        self._rules: dict[str, tuple[_Find, _Handle]] = {
            "tok": (f(c["tok"]), self._on_tok),
            "kv": (f(c["kv"]), self._on_kv),
            "ui": (f(c["ui"]), self._on_ui),
            "sg": (f(c["sg"]), self._on_sg),
            "pem": (f(c["pem"]), self._on_pem),
            "br": (f(c["br"]), self._on_br),
            "ba": (f(c["ba"]), self._on_ba),
            "jwt": (f(c["jwt"]), self._on_jwt),
            "ak": (f(c["ak"]), self._on_ak),
            "em": (_find_email, self._on_em),
            "ph": (f(c["ph"]), self._on_ph),
            "cd": (f(c["cd"]), self._on_cd),
        }

    def __repr__(self) -> str:
        return f"Redactor(key_id={self.key_id!r}, rules={self.rules!r})"

    @property
    def fired(self) -> dict[str, int]:
        """Rule -> values replaced so far (rules that fired only, ``RULES`` order); a copy."""
        return {r: self._counts[r] for r in RULES if r in self._counts}

    # ------------------------------------------------------------------ tokens

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
        return self._token(kind, value)

    def _token(self, kind: str, norm: str) -> str:
        cached = self._tokens.get((kind, norm))
        if cached is None:
            inner = self._inner.copy()
            inner.update((kind + "\0" + norm).encode("utf-8", "surrogatepass"))
            outer = self._outer.copy()
            outer.update(inner.digest())
            cached = f"<{kind.upper()}_{outer.hexdigest()[:8]}>"
            if len(self._tokens) >= _CACHE_MAX:
                self._tokens.clear()
            self._tokens[(kind, norm)] = cached
        return cached

    def _fire(self, rule: str, kind: str, norm: str) -> str:
        self._counts[rule] = self._counts.get(rule, 0) + 1
        return self._token(kind, norm)

    # ------------------------------------------------------------------ text

    def text(self, s: str) -> str:
        """Redact every match of the enabled rules in free text.

        Matched values become tokens; everything else is kept byte for byte
        (``"mail me at a@b.co."`` keeps its final dot). Existing tokens are
        left alone, so ``text(text(s)) == text(s)``. A string with nothing to
        redact is returned as is (the same object), usually after one or two
        regex searches.

        Raises:
            UnsupportedValue: ``s`` is not a string.
        """
        if type(s) is not str:
            if not isinstance(s, str):
                raise UnsupportedValue(type(s).__name__, f"text() takes a str, not a {type(s).__name__}")
            s = str.__str__(s)
        known = len(self._learned)
        out = self._text(s)
        if len(self._learned) != known:  # a secret field in this very text: its value may recur in it
            out = self._rewalk(out)
        return out

    def _text(self, s: str) -> str:
        if len(s) < self._min_len:
            return s
        learned = self._learned_matches(s) if self._learned_by_word else None
        low = s.lower()
        digits = _DIGITS.search(s) is not None
        if not digits and not learned and _PRE.search(low) is None:
            return s
        on = self._on
        names = []
        if "<" in s:
            names.append("tok")
        if on["kv"] and ("=" in s or ":" in s) and (
            "passw" in low or "secret" in low or "token" in low or "key" in low
            or "authoriz" in low or "cookie" in low
        ):
            names.append("kv")
        if on["ui"] and "://" in s and "@" in s:
            names.append("ui")
        if on["sg"] and "=" in s and ("sig" in low or "x-amz" in low or "x-goog" in low):
            names.append("sg")
        if on["pem"] and "-----BEGIN" in s:
            names.append("pem")
        if on["br"] and "bearer" in low:
            names.append("br")
        if on["ba"] and "basic" in low:
            names.append("ba")
        if on["jwt"] and "eyJ" in s:
            names.append("jwt")
        if on["ak"] and (
            "sk-" in s or "k_" in s or "AKIA" in s or "ASIA" in s or "AIza" in s or "gh" in s or "xox" in s
        ):
            names.append("ak")
        if on["em"] and "@" in s:
            names.append("em")
        if digits:
            if on["ph"]:
                names.append("ph")
            if on["cd"]:
                names.append("cd")
        if (not names or names == ["tok"]) and not learned:
            return s
        rules = [self._rules[n] for n in names]
        if learned:  # right after the token skip: a value a field declared wins over a pattern inside it
            rules.insert(1 if names[:1] == ["tok"] else 0, (_finder_in(learned), self._on_learned))
        return self._scan(s, rules)

    def _scan(self, s: str, rules: list[tuple[_Find, _Handle]]) -> str:
        """Leftmost-first merge of the rules' matches (ties: earlier rule wins)."""
        cands: list[list[Any]] = []
        for prio, (find, handle) in enumerate(rules):
            got = find(s, 0)
            if got is not None:
                cands.append([got[0], prio, got[1], find, handle])
        out: list[str] = []
        copied = 0  # s[:copied] is in out
        last = 0  # no new match may start before this
        while cands:
            c = min(cands)
            start, _, m, find, handle = c
            if start < last:
                nxt = find(s, last)
            else:
                done = handle(s, start, m)
                if done is None:  # not a match after all: look again one character on
                    nxt = find(s, start + 1)
                else:
                    end, rep = done
                    if rep != s[start:end]:
                        out.append(s[copied:start])
                        out.append(rep)
                        copied = end
                    last = end
                    nxt = find(s, end)
            if nxt is None:
                cands.remove(c)
            else:
                c[0], c[2] = nxt
        if not out:
            return s
        out.append(s[copied:])
        return "".join(out)

    def _learn(self, value: str, rule: str, kind: str) -> None:
        """Remember a value replaced whole, so later occurrences in any text are replaced too.

        Short values are not remembered (an age of 41 must not erase every
        "41"), nor digit-and-punctuation values under 8 characters (a year, a
        time), nor anything once ``_LEARN_MAX`` values are known.
        """
        if not _LEARN_MIN <= len(value) <= _LEARN_LONGEST or value in self._learned or len(self._learned) >= _LEARN_MAX:
            return
        if len(value) < 8 and not _LETTER.search(value):
            return
        if TOKEN_RE.search(value):
            return
        self._index_learned(value, rule, kind)
        # The same value as it appears inside JSON text an agent built itself (json.dumps escapes
        # quotes and backslashes, and non-ASCII characters by default), once or twice encoded:
        # each form maps to the raw value's token.
        forms = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
        forms |= {json.dumps(f)[1:-1] for f in forms}
        for form in forms - {value}:
            if form not in self._learned:
                self._alias[form] = value
                self._index_learned(form, rule, kind)

    def _index_learned(self, value: str, rule: str, kind: str) -> None:
        first = _WORD_RUN.search(value)
        if first is None:
            return
        self._learned[value] = (rule, kind)
        groups = self._learned_by_word.setdefault(first.group(), [])
        for neg_len, offset, values in groups:
            if neg_len == -len(value) and offset == first.start():
                values.add(value)
                break
        else:
            bisect.insort(groups, (-len(value), first.start(), {value}), key=lambda g: (g[0], g[1]))
        self._min_len = _LEARN_MIN

    def _learned_matches(self, s: str) -> list[tuple[int, int, str]] | None:
        """Learned values in ``s`` as (start, end, value), by start; None when there are none.

        A value is found only as whole words: where it starts (ends) with a
        word character, the text has none just before (after) it, so "Ann Lee"
        is not replaced inside "Joann Leeds".
        """
        by_word = self._learned_by_word
        if len(by_word) <= 16:  # a few substring tests beat listing the words of s
            for w in by_word:
                if w in s:
                    break
            else:
                return None
        elif by_word.keys().isdisjoint(_WORD_RUN.findall(s)):
            return None
        found = []
        for w in _WORD_RUN.finditer(s):
            groups = by_word.get(w.group())
            if groups is None:
                continue
            for neg_len, offset, values in groups:  # longest first
                start = w.start() - offset
                end = start - neg_len
                if start < 0 or end > len(s) or s[start:end] not in values:
                    continue
                if end < len(s) and _WORD_CHAR.match(s, end - 1) and _WORD_CHAR.match(s, end):
                    continue  # ends inside a word
                found.append((start, end, s[start:end]))
                break
        if not found:
            return None
        found.sort()
        return found

    def _on_learned(self, s: str, start: int, m: tuple[int, str]) -> tuple[int, str]:
        end, value = m
        rule, kind = self._learned[value]
        return end, self._fire(rule, kind, self._alias.get(value, value))

    def _on_tok(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        return m.end(), m.group()

    def _kv_value(self, m: re.Match[str], s: str) -> tuple[int, int, str] | None:
        """(start, end, value for the hash) of a ``key: value`` match; None when nothing to hide."""
        if m.start("kv_dq") >= 0:
            start, end = m.span("kv_dq")
            raw = s[start:end]
            try:
                value = json.loads('"' + raw + '"')
            except ValueError:
                value = raw
        elif m.start("kv_eq") >= 0:  # JSON text inside a JSON string: \"key\": \"value\"
            start, end = m.span("kv_eq")
            raw = s[start:end]
            try:
                value = json.loads('"' + json.loads('"' + raw + '"') + '"')
            except ValueError:
                value = raw
        elif m.start("kv_sq") >= 0:
            start, end = m.span("kv_sq")
            value = raw = s[start:end]
        else:
            start, end = m.span("kv_uq")
            if ":" in s[m.end("kv_key"):start] and normalise_field(m.group("kv_key")).endswith(
                ("authorization", "cookie")
            ):
                # header lines "Authorization: Bearer x", "Cookie: a=1; b=2": the rest of the line
                ext = _EXTEND_LINE.match(s, end)
                if ext is not None:
                    end = len(s[:ext.end()].rstrip())
            value = raw = s[start:end]
        if not raw or _TOKEN_FULL.match(raw):
            return None
        return start, end, value

    def _on_kv(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        i = start
        lo = max(0, start - 64)
        while i > lo and (s[i - 1].isalnum() or s[i - 1] in "_-"):
            i -= 1
        if not _is_secret_field(normalise_field(s[i:m.end("kv_key")])):
            return None
        got = self._kv_value(m, s)
        if got is None:
            return m.end(), m.group()
        vstart, vend, value = got
        self._learn(value, "secret_field", "secret")
        return vend, s[start:vstart] + self._fire("secret_field", "secret", value)

    def _on_ui(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        vstart, vend = m.span("ui_pw")
        self._learn(m.group("ui_pw"), "secret_field", "secret")
        return vend, s[start:vstart] + self._fire("secret_field", "secret", m.group("ui_pw"))

    def _on_sg(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        vstart, vend = m.span("sg_v")
        self._learn(m.group("sg_v"), "secret_field", "secret")
        return vend, s[start:vstart] + self._fire("secret_field", "secret", m.group("sg_v"))

    def _on_pem(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        return m.end(), self._fire("api_key", "private_key", m.group())

    def _on_ak(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        if start and (s[start - 1].isalnum() or s[start - 1] in "_-"):
            return None  # inside a longer word
        return m.end(), self._fire("api_key", "api_key", m.group())

    def _on_br(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        # The credential is typed by what it is, so one JWT or API key gets one
        # token whether it appears after "Bearer" or on its own.
        v = m.group("br_v")
        if _JWT_FULL.match(v):
            tok = self._fire("bearer", "jwt", v)
        elif self._api_key_on and _AK_FULL.match(v):
            tok = self._fire("api_key", "api_key", v)
        else:
            tok = self._fire("bearer", "bearer", v)
        return m.end(), s[start:m.start("br_v")] + tok

    def _on_ba(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        v = m.group("ba_v")
        try:
            decoded = base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
        except (binascii.Error, ValueError):
            return None
        if b":" not in decoded:  # RFC 7617: base64 of "user:password"; prose "basic examples" is not
            return None
        return m.end(), s[start:m.start("ba_v")] + self._fire("bearer", "basic", v)

    def _on_jwt(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        return m.end(), self._fire("bearer", "jwt", m.group())

    def _on_em(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        return m.end(), self._fire("email", "email", s[start:m.end()].lower())

    def _on_ph(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        g = m.group()
        end = m.end()
        groups = list(_PHONE_GROUP.finditer(g))
        count = sum(len(x.group().strip("()")) for x in groups)
        if g[0] == "+":
            # E.164 allows at most 15 digits: a longer greedy run gives back
            # trailing groups (a year, a count) untouched.
            while count > 15 and len(groups) > 1:
                count -= len(groups.pop().group().strip("()"))
            end = start + groups[-1].end()
            g = g[:groups[-1].end()]
        if not 9 <= count <= 15:
            return None
        digits = "".join(c for c in g if "0" <= c <= "9")
        return end, self._fire("phone", "phone", "+" + digits if g[0] == "+" else digits)

    def _on_cd(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        g = m.group()
        groups = [(x.start(), x.end(), x.group()) for x in _DIGIT_GROUP.finditer(g)]
        # The longest, then leftmost, run of whole groups that passes Luhn: a
        # card followed by an expiry or preceded by a quantity is still found;
        # an unbroken digit run is only ever checked whole.
        windows = []
        for i in range(len(groups)):
            n = 0
            for j in range(i, len(groups)):
                n += len(groups[j][2])
                if n > 19:
                    break
                if n >= 13:
                    windows.append((-n, i, j))
        for _, i, j in sorted(windows):
            digits = "".join(x[2] for x in groups[i:j + 1])
            if digits[0] in "23456" and _luhn(digits):
                tok = self._fire("card", "card", digits)
                return m.end(), g[:groups[i][0]] + tok + g[groups[j][1]:]
        return None

    # ------------------------------------------------------------------ values

    def value(self, v: Any, *, tool: str | None = None) -> Any:
        """Deep-redact a JSON-like value; returns a new structure, never mutates ``v``.

        Strings and dict keys go through ``text``. The value under a secret
        field name (``SECRET_KEYS``) becomes one ``<SECRET_…>`` token when it
        is a str or number; under a field ``tool`` declares sensitive, one
        ``<SENSITIVE_…>`` token (str, number or bool). A dict or list under
        such a field keeps its shape and has every scalar leaf replaced.
        ``None``, empty strings and values that already are a token stay. Other
        numbers and bools are never touched (declare the field sensitive).
        Values replaced whole here are remembered and replaced in every string
        redacted afterwards, and in this value's other strings.
        Tuples stay tuples; dict and list subclasses come back as dict and list.

        Raises:
            UnsupportedValue: a value that is not JSON-like, or nesting beyond
                Python's recursion limit; ``fired`` is left as before the call.
        """
        sens = self._sensitive.get(tool) if (tool is not None and self._sensitive_on) else None
        before = dict(self._counts)
        known = len(self._learned)
        try:
            out = self._walk(v, sens)
            if len(self._learned) != known:
                # values first seen in this call may also sit in strings walked before them
                out = self._rewalk(out)
            return out
        except UnsupportedValue:
            self._counts = before
            raise
        except RecursionError:
            self._counts = before
            raise UnsupportedValue(
                type(v).__name__, "value nested deeper than Python's recursion limit (or containing itself)"
            ) from None

    def _rewalk(self, v: Any) -> Any:
        """Replace learned values in the strings of an already redacted value (ours to rebuild)."""
        t = type(v)
        if t is str:
            found = self._learned_matches(v) if len(v) >= _LEARN_MIN else None
            if found is None:
                return v
            rules: list[tuple[_Find, _Handle]] = [(_finder_in(found), self._on_learned)]
            if "<" in v:
                rules.insert(0, self._rules["tok"])
            return self._scan(v, rules)
        if t is dict:
            learned = self._learned
            return {(self._fire(*learned[k], self._alias.get(k, k)) if type(k) is str and k in learned else k): self._rewalk(x)
                    for k, x in v.items()}
        if t is list:
            return [self._rewalk(x) for x in v]
        if t is tuple:
            return tuple(self._rewalk(x) for x in v)
        return v

    def _str(self, s: str, sens: _Sensitive | None) -> str:
        if sens is not None and len(s) >= _MIN_LEN:
            s = self._sensitive_text(s, sens)
        return self._text(s)

    def _sensitive_text(self, s: str, sens: _Sensitive) -> str:
        """``"field": "value"`` / ``field=value`` of declared fields inside a string.

        Runs before the pattern rules, so a declared field holding an email
        gets the SENSITIVE token it gets as a dict key.
        """
        if "=" not in s and ":" not in s:
            return s
        low = s.lower()
        if not any(h in low for h in sens.heads):
            return s
        out: list[str] = []
        last = 0
        for m in sens.regex.finditer(s):
            got = self._kv_value(m, s)
            if got is None:
                continue
            start, end, value = got
            out.append(s[last:start])
            self._learn(value, "sensitive_field", "sensitive")
            out.append(self._fire("sensitive_field", "sensitive", value))
            last = end
        if not out:
            return s
        out.append(s[last:])
        return "".join(out)

    def _field(self, k: str) -> tuple[str, bool]:
        info = self._fields.get(k)
        if info is None:
            norm = normalise_field(k)
            info = (norm, _is_secret_field(norm))
            if len(self._fields) >= _CACHE_MAX:
                self._fields.clear()
            self._fields[k] = info
        return info

    def _dict_key(self, k: str) -> str:
        # _clean_keys: no pattern rule and no learned value matched when it was seen;
        # a key that *is* a value learned since is still replaced
        if k in self._clean_keys:
            if k in self._learned:
                rule, kind = self._learned[k]
                return self._fire(rule, kind, self._alias.get(k, k))
            return k
        r = self._text(k)
        if r is k:
            if len(self._clean_keys) >= _CACHE_MAX:
                self._clean_keys.clear()
            self._clean_keys.add(k)
        return r

    def _walk(self, v: Any, sens: _Sensitive | None) -> Any:
        t = type(v)
        if t is str:
            return self._str(v, sens) if len(v) >= self._min_len else v
        if t is dict:
            return self._dict(v, sens)
        if t is list:
            out: list[Any] = []
            app = out.append
            try:
                for x in v:
                    app(self._walk(x, sens))
            except UnsupportedValue as e:
                e.where.insert(0, len(out))
                raise
            return out
        if v is None or t is int or t is float or t is bool:
            return v
        if t is tuple:
            return tuple(self._walk(list(v), sens))
        return self._walk(self._plain(v), sens)

    def _dict(self, v: dict[Any, Any], sens: _Sensitive | None) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        fields = self._fields
        clean = self._clean_keys
        learned = self._learned
        secret_on = self._secret_on
        min_len = self._min_len
        walk = self._walk
        k: Any = None
        try:
            for k, x in v.items():
                if type(k) is not str:
                    if isinstance(k, str):
                        k = str.__str__(k)
                    else:
                        out[k] = walk(x, sens)
                        continue
                info = fields.get(k)
                if info is None:
                    info = self._field(k)
                nk = k if k in clean and k not in learned else self._dict_key(k)
                if info[1] and secret_on:
                    out[nk] = self._whole(x, "secret_field", "secret")
                elif sens is not None and info[0] in sens.names:
                    out[nk] = self._whole(x, "sensitive_field", "sensitive")
                elif type(x) is str:
                    out[nk] = self._str(x, sens) if len(x) >= min_len else x
                else:
                    out[nk] = walk(x, sens)
        except UnsupportedValue as e:
            e.where.insert(0, k)
            raise
        return out

    def _whole(self, x: Any, rule: str, kind: str) -> Any:
        """Replace every scalar under a secret or sensitive field, keeping the shape."""
        t = type(x)
        if t is str:
            if not x or _TOKEN_FULL.match(x):
                return x
            self._learn(x, rule, kind)
            return self._fire(rule, kind, x)
        if t is bool:
            return self._fire(rule, kind, "true" if x else "false") if kind == "sensitive" else x
        if t is int:
            return self._fire(rule, kind, str(x))
        if t is float:
            return self._fire(rule, kind, repr(x))
        if x is None:
            return x
        if t is dict:
            out: dict[Any, Any] = {}
            k: Any = None
            try:
                for k, y in x.items():
                    out[self._dict_key(k) if type(k) is str else k] = self._whole(y, rule, kind)
            except UnsupportedValue as e:
                e.where.insert(0, k)
                raise
            return out
        if t is list or t is tuple:
            items: list[Any] = []
            try:
                for y in x:
                    items.append(self._whole(y, rule, kind))
            except UnsupportedValue as e:
                e.where.insert(0, len(items))
                raise
            return items if t is list else tuple(items)
        return self._whole(self._plain(x), rule, kind)

    @staticmethod
    def _plain(v: Any) -> Any:
        """The built-in JSON type behind a subclass (str enum, OrderedDict, ...)."""
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, str):
            return str.__str__(v)
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return float(v)
        if isinstance(v, Mapping):
            return dict(v)
        if isinstance(v, tuple):
            return tuple(v)
        if isinstance(v, list):
            return list(v)
        raise UnsupportedValue(type(v).__name__)


# --------------------------------------------------------------------------- keys


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


def project_redactor(key_file: str | None = None, *, create: bool = False,
                     sensitive_fields: Mapping[str, Iterable[str]] | None = None,
                     recorded_key: str | None = None) -> tuple[Redactor, str | None]:
    """The project's Redactor, for every command and screen that writes or matches redacted values.

    The key comes from ``load_key(key_file, create=create)``. With no key configured and
    ``create`` false, a one-off random key is used and the second item explains what that costs
    (values the agent adds itself will not match tokens made with the project key); otherwise it
    is None.

    Raises:
        RedactionKeyError: an explicit ``key_file`` (or key variable) is missing or unusable.
    """
    try:
        key, _source = load_key(key_file, create=create)
    except RedactionKeyMissing as exc:
        if key_file:
            raise
        note = (f"{exc} Using a one-off key: values the agent adds itself will not match tokens made with the "
                "project key" + (f" (the recording was redacted with key {recorded_key})" if recorded_key else ""))
        return Redactor(os.urandom(32), sensitive_fields=sensitive_fields), note
    return Redactor(key, sensitive_fields=sensitive_fields), None
