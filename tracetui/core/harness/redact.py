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

The work is split by job: ``redact_patterns`` (rules, patterns, checks, errors),
``redact_tokens`` (the key and the HMAC behind a token), ``redact_walk`` (the walk over
values); this module is the ``Redactor`` (its text scan, the value handlers, what it learns)
and ``project_redactor``. The names of the parts are importable from here as before.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from tracetui.core.harness.redact_patterns import (
    AK_FULL,
    COMPILED,
    DIGITS,
    EXTEND_LINE,
    JWT_FULL,
    LEARN_LONGEST,
    LEARN_MAX,
    LEARN_MIN,
    LETTER,
    MIN_LEN,
    PATTERN_RULE,
    PEM_BODY,
    PEM_END,
    PRE,
    RULES,
    SECRET_KEYS,
    TOKEN_FULL,
    TOKEN_RE,
    WORD_CHAR,
    WORD_RUN,
    Find,
    Handle,
    RedactionError,
    Sensitive,
    UnknownRule,
    UnsupportedValue,
    find_email,
    finder,
    finder_in,
    is_secret_field,
    normalise_field,
)
from tracetui.core.harness.redact_tokens import (
    DEFAULT_KEY_PATH,
    KEY_ENV,
    KEY_FILE_ENV,
    MIN_KEY_CHARS,
    RedactionKeyError,
    RedactionKeyMissing,
    StableTokens,
    load_key,
)
from tracetui.core.harness.redact_config import RedactionConfigError, UserRules, UserRuleScan, load_user_rules
from tracetui.core.harness.redact_walk import ValueWalk
from tracetui.core.harness.redact_numbers import NumberRules
from tracetui.core.harness.redact_wrapped import B64_MIN_TEXT, B64_RUN, WrappedScan

JSON_PLAIN = re.compile(r'[^"\\\x00-\x1f\x7f]*\Z')
"""A string ``json.dumps`` writes unchanged when it is ASCII (no quote, backslash or control character)."""

__all__ = [
    "DEFAULT_KEY_PATH", "KEY_ENV", "KEY_FILE_ENV", "MIN_KEY_CHARS", "RULES", "SECRET_KEYS", "TOKEN_RE",
    "RedactionConfigError", "RedactionError", "RedactionKeyError", "RedactionKeyMissing", "Redactor", "StableTokens", "UnknownRule",
    "UnsupportedValue", "UserRules", "load_user_rules", "load_key", "normalise_field", "project_redactor",
]


class Redactor(UserRuleScan, WrappedScan, NumberRules, ValueWalk):
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
        user_rules: The project's own rules (``load_user_rules``: more secret field names, patterns
            of their own, an allow-list); they run with any ``rules``.

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
        user_rules: UserRules | None = None,
    ) -> None:
        self._stable = StableTokens(key)
        self.key_id: str = self._stable.key_id
        """12 hex digits naming the key; safe to write in a header (not reversible)."""
        if rules is None:
            chosen = set(RULES)
        else:
            chosen = set()
            for r in ([rules] if isinstance(rules, str) else rules):
                if r not in RULES:
                    raise UnknownRule(str(r))
                chosen.add(r)
        user = user_rules if user_rules is not None else UserRules()
        self.user_rules = user
        self.rules: tuple[str, ...] = tuple(r for r in RULES if r in chosen) + tuple(n for n, _ in user.patterns)
        """Rules that run, in ``RULES`` order, then the user's patterns by name."""
        self._extra_fields = frozenset(normalise_field(f) for f in user.fields)
        self._extra_text = Sensitive(self._extra_fields) if self._extra_fields and "secret_field" in chosen else None
        self._allow = user.allow
        self._last_rule = ""
        self._scan_last = -1
        self._on = {name: PATTERN_RULE[name] in chosen for name in PATTERN_RULE}
        self._secret_on = "secret_field" in chosen
        self._sensitive_on = "sensitive_field" in chosen
        self._api_key_on = "api_key" in chosen
        self._sensitive: dict[str, Sensitive] = {}
        for tool, fields in (sensitive_fields or {}).items():
            names = [fields] if isinstance(fields, str) else list(fields)
            bad = [f for f in names if not isinstance(f, str) or not f.strip("-_ ")]
            if bad:
                raise ValueError(f"sensitive_fields[{tool!r}]: field names must be non-empty strings, got {bad[0]!r}")
            if names:
                self._sensitive[tool] = Sensitive(frozenset(normalise_field(f) for f in names))
        self._counts: dict[str, int] = {}
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
        self._min_len = MIN_LEN
        self._pem_end: tuple[str | None, int, re.Match[str] | None] = (None, 0, None)
        f = finder
        c = COMPILED
        # priority order: at one position the first rule listed wins
        self._rules: dict[str, tuple[Find, Handle]] = {
            "tok": (f(c["tok"]), self._on_tok),
            "kv": (f(c["kv"]), self._on_kv),
            "ui": (f(c["ui"]), self._on_ui),
            "sg": (f(c["sg"]), self._on_sg),
            "pem": (f(c["pem"]), self._on_pem),
            "br": (f(c["br"]), self._on_br),
            "ba": (f(c["ba"]), self._on_ba),
            "jwt": (f(c["jwt"]), self._on_jwt),
            "ak": (f(c["ak"]), self._on_ak),
            "em": (find_email, self._on_em),
            "ph": (f(c["ph"]), self._on_ph),
            "cd": (f(c["cd"]), self._on_cd),
            "b64": (f(B64_RUN), self._on_b64),
        }
        self._user_names = []
        for name, rx in user.patterns:
            self._rules["u:" + name] = (f(rx), self._user_handler(name, rx))
            self._user_names.append("u:" + name)

    def __repr__(self) -> str:
        return f"Redactor(key_id={self.key_id!r}, rules={self.rules!r})"

    @property
    def fired(self) -> dict[str, int]:
        """Rule -> values replaced so far (rules that fired only, ``rules`` order); a copy."""
        return {r: self._counts[r] for r in self.rules if r in self._counts}

    def record(self) -> dict[str, Any]:
        """What a header says of the redaction: ``{"rules": [...], "key_id": ..., "fired": {...}}``, plus
        ``user_rules`` (12 hex digits over the project's own rules as written) when there are any."""
        out: dict[str, Any] = {"rules": list(self.rules), "key_id": self.key_id, "fired": self.fired}
        if self.user_rules:
            out["user_rules"] = self.user_rules.digest
        return out

    # ------------------------------------------------------------------ tokens

    def token(self, kind: str, value: str) -> str:
        """The token for ``value`` of type ``kind``: ``<KIND_xxxxxxxx>`` (``StableTokens.token``).

        Raises:
            ValueError: ``kind`` is not letters and underscores.
        """
        return self._stable.token(kind, value)

    def _fire(self, rule: str, kind: str, norm: str) -> str:
        self._counts[rule] = self._counts.get(rule, 0) + 1
        self._last_rule = rule
        return self._stable.normalised(kind, norm)

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
        if self._extra_text is not None:
            s = self._sensitive_text(s, self._extra_text, "secret_field", "secret")
        learned = self._learned_matches(s) if self._learned_by_word else None
        low = s.lower()
        digits = DIGITS.search(s) is not None
        b64 = len(s) >= B64_MIN_TEXT and B64_RUN.search(s) is not None
        if not digits and not learned and not b64 and not self._user_names and PRE.search(low) is None:
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
            or "github_pat_" in s
        ):
            names.append("ak")
        if on["em"] and "@" in s:
            names.append("em")
        if digits:
            if on["ph"]:
                names.append("ph")
            if on["cd"]:
                names.append("cd")
        if b64:
            names.append("b64")
        names += self._user_names
        if (not names or names == ["tok"]) and not learned:
            return s
        rules = [self._rules[n] for n in names]
        if learned:  # right after the token skip: a value a field declared wins over a pattern inside it
            rules.insert(1 if names[:1] == ["tok"] else 0, (finder_in(learned), self._on_learned))
        return self._scan(s, rules)

    def _scan(self, s: str, rules: list[tuple[Find, Handle]]) -> str:
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
                self._scan_last = last  # where the last value replaced in this text ended (``_on_ph``/``_on_cd``)
                done = handle(s, start, m)
                if done is None:  # not a match after all: look again one character on (none past the end:
                    # a search from there starts at the end again, where a project pattern may match empty)
                    nxt = find(s, start + 1) if start < len(s) else None
                else:
                    end, rep = done
                    if self._allow and rep != s[start:end]:
                        rep = self._keep_allowed(s, start, end, rep)
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
        time), nor anything once ``LEARN_MAX`` values are known.
        """
        if not LEARN_MIN <= len(value) <= LEARN_LONGEST or value in self._learned or len(self._learned) >= LEARN_MAX:
            return
        if len(value) < 8 and not LETTER.search(value):
            return
        if TOKEN_RE.search(value):
            return
        self._index_learned(value, rule, kind)
        if value.isascii() and JSON_PLAIN.match(value):
            return  # JSON text holds it as it is: no escaped forms to remember
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
        first = WORD_RUN.search(value)
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
        self._min_len = LEARN_MIN

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
        elif by_word.keys().isdisjoint(WORD_RUN.findall(s)):
            return None
        found = []
        for w in WORD_RUN.finditer(s):
            groups = by_word.get(w.group())
            if groups is None:
                continue
            for neg_len, offset, values in groups:  # longest first
                start = w.start() - offset
                end = start - neg_len
                if start < 0 or end > len(s) or s[start:end] not in values:
                    continue
                if end < len(s) and WORD_CHAR.match(s, end - 1) and WORD_CHAR.match(s, end):
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
            if "\\" in raw:
                try:
                    value = json.loads('"' + raw + '"')
                except ValueError:
                    value = raw
            else:  # nothing escaped: the text is the value
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
                ext = EXTEND_LINE.match(s, end)
                if ext is not None:
                    end = len(s[:ext.end()].rstrip())
            value = raw = s[start:end]
        if not raw or TOKEN_FULL.match(raw):
            return None
        return start, end, value

    def _on_kv(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        i = start
        lo = max(0, start - 64)
        while i > lo and (s[i - 1].isalnum() or s[i - 1] in "_-"):
            i -= 1
        if not self._field(s[i:m.end("kv_key")])[1]:  # normalised and checked once per name
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
        # The first END after this BEGIN; one search serves every BEGIN before that END (and a
        # search that found none serves every later BEGIN), so repeated blocks cost linear time.
        after = m.end()
        cached = self._pem_end
        if cached[0] is s and cached[1] <= after and (cached[2] is None or cached[2].start() >= after):
            end_m = cached[2]
        else:
            end_m = PEM_END.search(s, after)
            self._pem_end = (s, after, end_m)
        if end_m is not None:
            end = end_m.end()
        else:  # truncated: its whole base64 body goes
            body = PEM_BODY.match(s, after)
            end = body.end() if body is not None else after
        return end, self._fire("api_key", "private_key", s[start:end])

    def _on_ak(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        if start and (s[start - 1].isalnum() or s[start - 1] in "_-"):
            return None  # inside a longer word
        return m.end(), self._fire("api_key", "api_key", m.group())

    def _on_br(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        # The credential is typed by what it is, so one JWT or API key gets one
        # token whether it appears after "Bearer" or on its own.
        v = m.group("br_v")
        if JWT_FULL.match(v):
            tok = self._fire("bearer", "jwt", v)
        elif self._api_key_on and AK_FULL.match(v):
            tok = self._fire("api_key", "api_key", v)
        else:
            tok = self._fire("bearer", "bearer", v)
        return m.end(), s[start:m.start("br_v")] + tok

    def _on_ba(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        v = m.group("ba_v")
        core = v.rstrip("=")  # padding as written, right or not (a stray "=" hides no less of a password)
        try:
            decoded = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
        except (binascii.Error, ValueError):
            return None
        if b":" not in decoded:  # RFC 7617: base64 of "user:password"; prose "basic examples" is not
            return None
        return m.end(), s[start:m.start("ba_v")] + self._fire("bearer", "basic", v)

    def _on_jwt(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        return m.end(), self._fire("bearer", "jwt", m.group())

    def _on_em(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str]:
        return m.end(), self._fire("email", "email", s[start:m.end()].lower())

    # ------------------------------------------------------------------ values


def project_redactor(key_file: str | None = None, *, create: bool = False,
                     sensitive_fields: Mapping[str, Iterable[str]] | None = None,
                     recorded_key: str | None = None) -> tuple[Redactor, str | None]:
    """The project's Redactor, for every command and screen that writes or matches redacted values.

    The key comes from ``load_key(key_file, create=create)``. With no key configured and
    ``create`` false, a one-off random key is used and the second item explains what that costs
    (values the agent adds itself will not match tokens made with the project key); otherwise it
    is None.

    The project's own rules (``[tool.tracetui.redaction]``, ``load_user_rules``) run too.

    Raises:
        RedactionKeyError: an explicit ``key_file`` (or key variable) is missing or unusable.
        RedactionConfigError: the project's redaction rules are malformed (file and key named).
    """
    try:
        key, _source = load_key(key_file, create=create)
    except RedactionKeyMissing as exc:
        if key_file:
            raise
        note = (f"{exc} Using a one-off key: values the agent adds itself will not match tokens made with the "
                "project key" + (f" (the recording was redacted with key {recorded_key})" if recorded_key else ""))
        return Redactor(os.urandom(32), sensitive_fields=sensitive_fields, user_rules=load_user_rules()), note
    return Redactor(key, sensitive_fields=sensitive_fields, user_rules=load_user_rules()), None
