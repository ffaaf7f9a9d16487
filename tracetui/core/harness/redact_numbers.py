"""The rules on numbers: phone numbers and payment cards (the handlers behind the ``ph`` and ``cd``
patterns of ``redact_patterns``), a mixin of the ``Redactor`` (``harness.redact``).

Both look at the digit groups of a match: a phone number keeps at most 15 digits (E.164) and at
least 9 (8 for ``+1-555-0100``), a card is the longest Luhn-valid run of whole groups starting
with 2-6. Neither starts inside a run of digit groups unless a value just replaced ends right
before it, or (a card) the run before is glued to a word; a card further in a run is found by the
match where the run starts, which looks up to 24 characters past its 19 digits. They rely on the
redactor's ``_fire`` and ``_scan_last``.
"""

from __future__ import annotations

import re

from tracetui.core.harness.redact_patterns import DIGIT_GROUP, PHONE_GROUP, WORD_CHAR, luhn


_MORE_GROUPS = re.compile(r"[ -][0-9]+(?!\w|\.[0-9])")
"""One more digit group of a card's run: a space or dash, digits, and no letter or decimal part after them (as the
``cd`` pattern ends)."""


class NumberRules:
    """``_on_ph`` and ``_on_cd`` (a mixin of ``Redactor``)."""

    _scan_last: int

    def _fire(self, rule: str, kind: str, norm: str) -> str:  # the Redactor's
        raise NotImplementedError

    def _on_ph(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        if start > 1 and s[start - 1] in " .-" and "0" <= s[start - 2] <= "9" and self._scan_last != start - 1:
            return None  # inside a run of digit groups (a table, a date), unless a value just ended there
        g = m.group()
        end = m.end()
        groups = list(PHONE_GROUP.finditer(g))
        count = sum(len(x.group().strip("()")) for x in groups)
        if g[0] == "+":
            # E.164 allows at most 15 digits: a longer greedy run gives back
            # trailing groups (a year, a count) untouched.
            while count > 15 and len(groups) > 1:
                count -= len(groups.pop().group().strip("()"))
            end = start + groups[-1].end()
            g = g[:groups[-1].end()]
        if count == 8 and g[0] == "+" and len(groups) > 2 and all(len(x.group()) >= 3 for x in groups[1:]):
            pass  # +1-555-0100: a country code and a short number (fictional and short national forms)
        elif not 9 <= count <= 15:
            return None
        digits = "".join(c for c in g if "0" <= c <= "9")
        return end, self._fire("phone", "phone", "+" + digits if g[0] == "+" else digits)

    def _on_cd(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        if start > 1 and s[start - 1] in " -" and "0" <= s[start - 2] <= "9" and self._scan_last != start - 1:
            # inside a run of digit groups (and not right after a value already replaced): a card starts here only when the run before is glued to
            # a word ("n99 4111…"); looked back at most 24 characters, so a long table stays linear
            i = start - 2
            while i > 0 and start - i < 24 and ("0" <= s[i - 1] <= "9" or s[i - 1] in " -"):
                i -= 1
            if i == 0 or start - i >= 24 or not WORD_CHAR.match(s, i - 1):
                return None
        g = m.group()
        end = m.end()
        # The match stops at 19 digits (or at the last group boundary before them): the rest of the run of digit
        # groups joins it ("12 99 4111 1111 1111 1111": the card is groups 3-6), up to 24 characters more, so a
        # card further in is found here, where the run starts (a match starting inside the run is refused above).
        more = _MORE_GROUPS.match(s, end, min(len(s), end + 24 + 1))
        while more is not None and more.end() - m.end() <= 24:
            end = more.end()
            more = _MORE_GROUPS.match(s, end, min(len(s), m.end() + 24 + 1))
        g = s[start:end]
        groups = [(x.start(), x.end(), x.group()) for x in DIGIT_GROUP.finditer(g)]
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
            if digits[0] in "23456" and luhn(digits):
                tok = self._fire("card", "card", digits)
                return start + groups[j][1], g[:groups[i][0]] + tok  # the scan goes on right after the card
        return None
