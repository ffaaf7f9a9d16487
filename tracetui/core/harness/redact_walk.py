"""The walk over values: how the ``Redactor`` goes through a JSON-like value, field by field.

``ValueWalk`` is the part of ``Redactor`` (``harness.redact``) that deep-redacts a value: dict
keys and strings through the text rules, the value under a secret or declared-sensitive field
replaced whole (its shape kept), learned values replaced again in strings walked before them.
It relies on the redactor's text scan (``_text``, ``_scan``, ``_rules``), its memory of values
replaced whole (``_learn``, ``_learned``, ``_alias``) and ``_fire``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracetui.core.harness.redact_patterns import (
    CACHE_MAX,
    LEARN_MIN,
    MIN_LEN,
    TOKEN_FULL,
    Find,
    Handle,
    Sensitive,
    UnsupportedValue,
    finder_in,
    is_secret_field,
    normalise_field,
)


class ValueWalk:
    """``Redactor.value`` and the walk behind it (a mixin of ``Redactor``)."""

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
            found = self._learned_matches(v) if len(v) >= LEARN_MIN else None
            if found is None:
                return v
            rules: list[tuple[Find, Handle]] = [(finder_in(found), self._on_learned)]
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

    def _str(self, s: str, sens: Sensitive | None) -> str:
        if sens is not None and len(s) >= MIN_LEN:
            s = self._sensitive_text(s, sens)
        return self._text(s)

    def _sensitive_text(self, s: str, sens: Sensitive, rule: str = "sensitive_field", kind: str = "sensitive") -> str:
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
            if self._allow and self._allowed(value):
                continue
            out.append(s[last:start])
            self._learn(value, rule, kind)
            out.append(self._fire(rule, kind, value))
            last = end
        if not out:
            return s
        out.append(s[last:])
        return "".join(out)

    def _field(self, k: str) -> tuple[str, bool]:
        info = self._fields.get(k)
        if info is None:
            norm = normalise_field(k)
            info = (norm, is_secret_field(norm, self._extra_fields))
            if len(self._fields) >= CACHE_MAX:
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
            if len(self._clean_keys) >= CACHE_MAX:
                self._clean_keys.clear()
            self._clean_keys.add(k)
        return r

    def _walk(self, v: Any, sens: Sensitive | None) -> Any:
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
            if len(out) > 1 and isinstance(v[0], dict) and "text" in v[0]:  # message parts: a value split across them
                return self._joined_parts(v, out)
            return out
        if v is None or t is int or t is float or t is bool:
            return v
        if t is tuple:
            return tuple(self._walk(list(v), sens))
        return self._walk(self._plain(v), sens)

    def _dict(self, v: dict[Any, Any], sens: Sensitive | None) -> dict[Any, Any]:
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
            if not x or TOKEN_FULL.match(x) or (self._allow and self._allowed(x)):
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
