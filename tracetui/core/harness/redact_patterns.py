"""What the redactor looks for: its rules, the patterns and checks behind them, and its errors.

Each rule (``RULES``) is one or more regular expressions (``RULE_PATTERNS``, compiled in
``COMPILED``, each mapped to its rule by ``PATTERN_RULE``) plus the checks a regex cannot make
(``luhn``, ``is_secret_field``, ``find_email``); ``PRE`` and ``DIGITS`` screen a string before any
rule runs. ``Sensitive`` is one tool's declared fields as a matcher. The ``Redactor``
(``harness.redact``) runs these; what each rule matches and its limits: ``docs/redaction.md``.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Callable

from tracetui.core.errors import TracetuiError
from tracetui.core.secret_names import SECRET_KEYS, is_secret_field, normalise_field

__all__ = ["SECRET_KEYS", "is_secret_field", "normalise_field"]  # re-exported (core.secret_names)

RULES: tuple[str, ...] = ("email", "phone", "card", "api_key", "bearer", "secret_field", "sensitive_field")
"""Every rule, in the order they are reported."""

TOKEN_RE = re.compile(r"<[A-Z_]+_[0-9a-f]{8}>")
"""A redaction token anywhere in a string; text that holds one is left as it is."""


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


# Speed: CPython's regex engine is fast only when a pattern starts with a
# literal or a character class (it then skips ahead in C); an alternation of
# twelve rules that start with look-behinds costs about a microsecond per
# character. So each rule is its own pattern starting with a consumable
# character (boundaries are look-behinds placed after it), a string is first
# screened by one cheap search (``PRE``/``DIGITS``), only the rules whose
# trigger text occurs in it run, and their matches are merged leftmost-first.

# Value grammar after ``key: `` / ``key=`` / ``"key": ``: a double-quoted string
# (JSON escapes; an unterminated one runs to the end of the line, so a
# truncated output leaks nothing), the same inside a JSON-encoded string
# (``\"key\": \"value\"``), a single-quoted one, or a bare word (not JSON's
# null/true/false, and never taking a closing bracket or brace with it).
VALUE = (
    r"""\\?["']?[ \t]*[:=][ \t]*(?:"""
    r'''"(?P<kv_dq>(?:[^"\\\r\n]|\\.)*)(?:"|(?=[\r\n])|\Z)'''
    r'''|\\"(?P<kv_eq>(?:[^"\\\r\n]|\\\\\\"|\\[^"\r\n])*)(?:\\"|)'''
    r"""|'(?P<kv_sq>[^'\r\n]*)'"""
    r"""|(?P<kv_uq>(?!(?:null|true|false)(?![\w-]))[^\s"'&,;<>{}\[\]()\\=][^\s"'&,;<>{}\[\])]*))"""
)
AK = (
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
# In free text a key starts a run of key characters: the first character is consumed, then the
# look-behind refuses a start inside a run, so ``sk-sk-sk-…`` is tried once, not at every ``sk-``.
AK_TEXT = (
    r"[sAgxr](?<![A-Za-z0-9_-][sAgxr])(?:"
    r"(?<=s)k-ant-[A-Za-z0-9_-]{20,}"
    r"|(?<=s)k-(?:proj-)?(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,}"
    r"|(?<=A)(?:KIA|SIA)[0-9A-Z]{16}"
    r"|(?<=A)Iza[0-9A-Za-z_-]{35}"
    r"|(?<=g)h[pousr]_[A-Za-z0-9]{36,}"
    r"|(?<=g)ithub_pat_[A-Za-z0-9_]{22,}"
    r"|(?<=x)ox[abprs]-[A-Za-z0-9-]{10,}"
    r"|(?<=[sr])k_live_[0-9A-Za-z]{10,}|(?<=s)k_test_[0-9A-Za-z]{10,}"
    r")(?![A-Za-z0-9_-])"
)
PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----")
PEM_BODY = re.compile(r"[A-Za-z0-9+/=\s\\]*")  # a truncated block: to the end of its base64
JWT = r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
RULE_PATTERNS: dict[str, str] = {
    "tok": r"<[A-Z_]+_[0-9a-f]{8}>",
    # secret_field in free text: ``password=…``, ``"api_key": "…"``,
    # ``Authorization: Bearer …``; anchored at the secret word, the handler
    # reads the whole field name back to its start and applies SECRET_KEYS.
    # The look-behind after the first letter keeps a secret word inside a longer word (``mytoken``,
    # ``FOOTOKEN``) from starting a match that the Python check would refuse after the value was
    # read (a line of them was quadratic); camelCase (``accessToken``) and ``_``/``-`` still start one.
    "kv": r"(?P<kv_key>[AaCcPpSsTt](?:(?<![^\W_].)|(?<=[a-z0-9][ACPST]))(?:(?<=[Pp])(?i:assw(?:or)?d|rivate[-_]?key)|(?<=[Ss])(?i:ecret)"
          r"|(?<=[Tt])(?i:oken)|(?<=[Aa])(?i:pi[-_]?key|uthorization)|(?<=[Cc])(?i:ookie)))(?![\w-])" + VALUE,
    # URL credentials: scheme://user:PASSWORD@host
    "ui": r"""://(?<=[A-Za-z0-9+.-]://)[^\s/:@<>"']+:(?P<ui_pw>[^\s/@<>"']+)@""",
    # signed-URL query parameters (S3, GCS, Azure SAS)
    "sg": r"""[?&](?i:x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-signature"""
          r"""|x-goog-credential|signature|sig)=(?P<sg_v>[^&\s#"'<>]+)""",
    # api_key: PEM private keys (a truncated one to the end of its base64) and
    # well-known key prefixes; the boundary before a key is checked in Python.
    # The block's end is found by ``PEM_END`` (searched once per string, not once per BEGIN: a
    # lazy ``[\s\S]*?-----END`` rescanned the rest of the text for every unterminated BEGIN).
    "pem": r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----",
    "ak": AK_TEXT,
    # bearer: a letters-only word after "Bearer" must be 20+ long, so prose
    # ("Bearer authentication") stays; "Basic" is checked to decode to user:pass.
    "br": r"[Bb](?<![\w-][Bb])(?i:earer)[ \t]+(?P<br_v>(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-]|[A-Za-z0-9._~+/=-]{20})"
          r"[A-Za-z0-9._~+/=-]{8,})",
    "ba": r"[Bb](?<![\w-][Bb])(?i:asic)[ \t]+(?P<ba_v>[A-Za-z0-9+/]{4,}=*)(?![\w+/=-])",
    "jwt": r"eyJ(?<![\w-]eyJ)" + JWT[3:],
    # email: the common practical form (RFC 5322 dot-atom, no quoted local
    # part, no comments), anchored at "@"; the local part is read back in
    # Python. Quotes, "=" and "/" are not local-part characters here, so
    # ``key=a@b.co`` and ``'a@b.co'`` keep their punctuation.
    "em": r"@(?<=[\w%+-]@)(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+(?:[^\W\d_]{2,63}|xn--[A-Za-z0-9-]{1,59})"
          r"(?![\w-]|\.[^\W_])",
    # phone: E.164 after "+", NANP, and 0-prefixed national groupings; never
    # starts or ends inside a longer run of digit groups (a card, a table, a
    # date), nor after a letter, dot, slash or dash (ids, versions, paths).
    # (right after another digit group only where an earlier match ended there: checked in Python)
    "ph": r"[+(0-9](?<![\w.+/-].)(?:"
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
    # timestamps and snowflake ids (starting with 1) from becoming cards. Not
    # inside a word on either side: a hex span id ("6374276302398fb9") is no card.
    # A start right after another digit group is checked in Python (``n99 4111 1111 1111 1111``: the
    # group before is glued to a word, so the card starts here; ``12 99 4111…`` is one run of groups).
    "cd": r"[0-9](?<![\w.][0-9])(?:[ -]?[0-9]){12,18}(?!\w|\.[0-9])",
}
COMPILED = {name: re.compile(p) for name, p in RULE_PATTERNS.items()}
PATTERN_RULE = {
    "kv": "secret_field", "ui": "secret_field", "sg": "secret_field",
    "pem": "api_key", "ak": "api_key",
    "br": "bearer", "ba": "bearer", "jwt": "bearer",
    "em": "email", "ph": "phone", "cd": "card",
}
# Screen: a string none of these occur in (lower-cased) cannot match any rule.
PRE = re.compile(
    r"@|://|s(?:ig|ecret|k[-_])|p(?:assw|rivate)|token|a(?:pi[-_]?key|uthoriz|kia|sia|iza)|cookie"
    r"|b(?:earer|asic)|eyj|rk_|x(?:-amz|-goog|ox[abprs]-)|g(?:h[pousr]_|ithub_pat_)|-----begin"
)
# 9 digits close together (a phone or a card), or 8 after a "+" (+1-555-0100)
DIGITS = re.compile(r"[0-9](?:[ ()./-]{0,2}[0-9]){8}|\+[0-9](?:[ ()./-]{0,2}[0-9]){7}")

TOKEN_FULL = re.compile(r"<[A-Z_]+_[0-9a-f]{8}>\Z")
JWT_FULL = re.compile(JWT + r"\Z")
AK_FULL = re.compile(AK + r"\Z")
LOCAL_PART = re.compile(r"(?<![\w.%+-])[\w%+-](?:[\w.%+-]*[\w%+-])?\Z")
DIGIT_GROUP = re.compile(r"[0-9]+")
PHONE_GROUP = re.compile(r"\([0-9]+\)|[0-9]+")
EXTEND_LINE = re.compile(r"""[^\r\n"'<>]*""")
MIN_LEN = 6  # shortest text any rule matches: "a@b.co", "?sig=x"
LEARN_MIN = 4  # shortest secret/sensitive value searched for elsewhere ("Lyon"; not "41")
LEARN_MAX = 65536  # values remembered per Redactor
LEARN_LONGEST = 4096  # longer values are only replaced where they are a whole field
WORD_RUN = re.compile(r"\w+")
LETTER = re.compile(r"[^\W\d_]")
WORD_CHAR = re.compile(r"\w")
CACHE_MAX = 65536

Find = Callable[[str, int], "tuple[int, re.Match[str]] | None"]
Handle = Callable[[str, int, "re.Match[str]"], "tuple[int, str] | None"]


def finder(pattern: re.Pattern[str]) -> Find:
    search = pattern.search

    def find(s: str, pos: int) -> tuple[int, re.Match[str]] | None:
        m = search(s, pos)
        return None if m is None else (m.start(), m)

    return find


def finder_in(found: list[tuple[int, int, str]]) -> Find:
    """A finder over matches computed beforehand (sorted by start): (start, (end, value)) of the first
    at ``pos`` or later; a binary search, so many matches in one string cost n log n, not n²."""
    starts = [f[0] for f in found]

    def find(s: str, pos: int) -> tuple[int, Any] | None:
        i = bisect.bisect_left(starts, pos)
        if i == len(found):
            return None
        start, end, value = found[i]
        return start, (end, value)

    return find


def find_email(s: str, pos: int) -> tuple[int, re.Match[str]] | None:
    """Next email starting at ``pos`` or later: the "@domain" match and its local part's start."""
    search = COMPILED["em"].search
    local = LOCAL_PART.search
    while True:
        m = search(s, pos + 1)
        if m is None:
            return None
        at = m.start()
        lm = local(s, max(pos, at - 64), at)  # RFC 5321: a local part is at most 64 octets
        if lm is not None:
            return lm.start(), m
        pos = at


def luhn(digits: str) -> bool:
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


class Sensitive:
    """One tool's declared sensitive fields: normalised names and a free-text matcher."""

    __slots__ = ("names", "regex", "heads")

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        parts = [[p for p in n.split("_") if p] for n in sorted(names, key=len, reverse=True)]
        words = "|".join("[-_]?".join(re.escape(p) for p in ps) for ps in parts)
        self.regex = re.compile(r"(?<![\w-])(?P<kv_key>(?i:" + words + r"))(?![\w-])" + VALUE)
        self.heads = tuple({ps[0] for ps in parts})  # a name's first word must occur for it to match
