"""The user's redaction rules: ``[tool.tracetui.redaction]`` in the project config.

Read from the nearest ``pyproject.toml`` (``[tool.tracetui.redaction]``) and the nearest
``.tracetui.toml`` (``[tool.tracetui.redaction]`` or a top-level ``[redaction]``), from the current
folder upwards; both are merged (lists joined, patterns by name, the ``.tracetui.toml`` one winning)::

    [tool.tracetui.redaction]
    fields = ["member_no", "badge"]           # more secret field names (as secret_field's list)
    allow = ["noreply@example\\.com"]         # values never replaced (a regex matching the whole value)
    [tool.tracetui.redaction.patterns]
    ticket = "TCK-[0-9]{6}"                   # a rule of its own: <TICKET_xxxxxxxx>, counted as "ticket"
    member = "member (?P<value>[0-9]{7})"     # a group named "value": only that part is replaced

The header records which rules ran (their names) and ``user_rules``, 12 hex digits of SHA-256 over
the rules as written, so two files show whether they were redacted by the same configuration.
Errors name the file and the key (``RedactionConfigError``); ``docs/redaction.md`` has the details.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tracetui.core.projectfiles import ConfigFileError, config_documents
from tracetui.core.harness.redact_patterns import RULES, TOKEN_RE, Handle, RedactionError

NAME_RE = re.compile(r"[a-z][a-z_]{0,30}\Z")


class RedactionConfigError(RedactionError, ValueError):
    """A ``[tool.tracetui.redaction]`` table of the wrong shape; the message names the file and the key."""


@dataclass(frozen=True)
class UserRules:
    """The user's additions to the built-in rules.

    Attributes:
        fields: More secret field names (normalised as ``secret_field``'s: camelCase split, lower
            case, ``-`` as ``_``); their values become ``<SECRET_…>`` as the built-in names' do.
        patterns: Rule name (lower-case letters and ``_``) -> compiled regex. A match becomes
            ``<NAME_…>``; with a group named ``value`` only that group is replaced.
        allow: Compiled regexes; a value one of them matches whole is never replaced (by any rule).
        sources: The files the rules came from.
        digest: 12 hex digits of SHA-256 over the rules as written (``""`` when there are none).
    """

    fields: tuple[str, ...] = ()
    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    allow: tuple[re.Pattern[str], ...] = ()
    sources: tuple[str, ...] = ()
    digest: str = ""
    written: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.fields or self.patterns or self.allow)


def rules_from_table(table: Any, source: str) -> dict[str, Any]:
    """The ``redaction`` table of one file checked: ``{"fields": [...], "allow": [...], "patterns": {...}}``.

    Raises:
        RedactionConfigError: naming ``source`` and the key, when a key is unknown, ``fields`` /
            ``allow`` is not a list of strings, ``patterns`` not a table of strings, a pattern name
            not lower-case letters and ``_`` (or a built-in rule's name), or a regex does not compile.
    """
    where = f"{source}: [tool.tracetui.redaction]"
    if not isinstance(table, dict):
        raise RedactionConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - {"fields", "allow", "patterns"})
    if unknown:
        raise RedactionConfigError(f"{where}: unknown key {unknown[0]!r} (fields, allow, patterns)")
    out: dict[str, Any] = {"fields": [], "allow": [], "patterns": {}}
    for key in ("fields", "allow"):
        v = table.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            raise RedactionConfigError(f"{where} {key} must be a list of non-empty strings")
        out[key] = list(v)
    for n, a in enumerate(out["allow"]):
        _compile(a, f"{where} allow[{n}]")
    pats = table.get("patterns", {})
    if not isinstance(pats, dict):
        raise RedactionConfigError(f"{where} patterns must be a table of name = \"regex\"")
    for name, rx in pats.items():
        if not NAME_RE.match(name) or name in RULES:
            raise RedactionConfigError(
                f"{where}.patterns: name {name!r} must be lower-case letters and _ (it names the token: "
                f"<{name.upper()}_…>) and not a built-in rule ({', '.join(RULES)})")
        if not isinstance(rx, str) or not rx:
            raise RedactionConfigError(f"{where}.patterns.{name} must be a regex string")
        c = _compile(rx, f"{where}.patterns.{name}")
        if c.search("") is not None:
            raise RedactionConfigError(f"{where}.patterns.{name} matches the empty string: it would match everywhere")
        out["patterns"][name] = rx
    return out


def _compile(rx: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(rx)
    except re.error as exc:
        raise RedactionConfigError(f"{where}: not a regular expression ({exc})") from None


def load_user_rules(start: str | None = None) -> UserRules:
    """The project's redaction rules (module doc); an empty ``UserRules`` when none are configured.

    Raises:
        RedactionConfigError: a file that is not TOML, or a table of the wrong shape (file and key named).
    """
    merged: dict[str, Any] = {"fields": [], "allow": [], "patterns": {}}
    sources: list[str] = []
    try:
        docs = list(config_documents(start))
    except ConfigFileError as exc:
        raise RedactionConfigError(f"{exc.path}: cannot read the redaction rules: {exc.why}") from None
    for path, filename, doc in docs:
        tool = doc.get("tool", {}) if isinstance(doc.get("tool", {}), dict) else {}
        tt = tool.get("tracetui", {}) if isinstance(tool.get("tracetui", {}), dict) else {}
        table = tt.get("redaction")
        if table is None and filename == ".tracetui.toml":
            table = doc.get("redaction")
        if table is None:
            continue
        got = rules_from_table(table, path)
        merged["fields"] += [f for f in got["fields"] if f not in merged["fields"]]
        merged["allow"] += [a for a in got["allow"] if a not in merged["allow"]]
        merged["patterns"].update(got["patterns"])
        sources.append(path)
    if not sources:
        return UserRules()
    canon = json.dumps(merged, sort_keys=True, separators=(",", ":"))
    return UserRules(
        fields=tuple(merged["fields"]),
        patterns=tuple((n, re.compile(rx)) for n, rx in sorted(merged["patterns"].items())),
        allow=tuple(re.compile(a) for a in merged["allow"]),
        sources=tuple(sources),
        digest=hashlib.sha256(canon.encode()).hexdigest()[:12],
        written=merged,
    )


class UserRuleScan:
    """The ``Redactor``'s part that runs the user's rules (a mixin): the allow-list and the
    handlers of the user's patterns. It relies on the redactor's ``_fire``, ``_counts``,
    ``_allow`` and ``_last_rule``."""

    _allow: tuple[re.Pattern[str], ...]
    _counts: dict[str, int]
    _last_rule: str

    def _allowed(self, value: str) -> bool:
        return any(a.fullmatch(value) for a in self._allow)

    def _user_handler(self, name: str, rx: re.Pattern[str]) -> Handle:
        has_value = "value" in rx.groupindex

        def handle(s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
            if m.end() == start:
                return None
            if has_value and m.start("value") >= 0:
                vs, ve = m.span("value")
                return m.end(), s[start:vs] + self._fire(name, name, m.group("value")) + s[ve:m.end()]
            return m.end(), self._fire(name, name, m.group())

        return handle


    def _keep_allowed(self, s: str, start: int, end: int, rep: str) -> str:
        """``rep``, or the original text when the value its token replaced is on the allow-list
        (the count it added is taken back)."""
        tok = TOKEN_RE.search(rep)
        if tok is None:
            return rep
        tail = len(rep) - tok.end()
        if not self._allowed(s[start + tok.start():end - tail]):
            return rep
        rule = self._last_rule
        if self._counts.get(rule):
            self._counts[rule] -= 1
            if not self._counts[rule]:
                del self._counts[rule]
        return s[start:end]
