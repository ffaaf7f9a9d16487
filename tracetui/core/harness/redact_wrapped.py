"""Secrets the plain rules cannot see where they sit: base64-wrapped, or split across message parts.

``WrappedScan`` is the part of the ``Redactor`` (``harness.redact``) that

- decodes a run of 20 or more base64 characters (standard or URL-safe alphabet) that decodes to
  UTF-8 text, redacts that text with every rule, and when anything in it was replaced, replaces
  the whole run with one token of the kind found inside (``<API_KEY_…>`` for a base64-wrapped key),
  hashed over the run as written; binary data (an image) and text with nothing to hide stay;
- redacts the text parts of one message together (``[{"type": "text", "text": "my key is sk-pr"},
  {"type": "text", "text": "oj-…"}]``): when the joined text redacts differently from the parts one
  by one, the first part takes the whole redacted text and the others become ``""`` (as a stream's
  deltas do, ``integrations.wire.redact_stream``).

It relies on the redactor's ``_text``, ``_stable`` and ``_counts``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from tracetui.core.harness.redact_patterns import TOKEN_RE

B64_RUN = re.compile(r"[A-Za-z0-9+/_-](?<![A-Za-z0-9+/_-].)[A-Za-z0-9+/_-]{19,}={0,2}(?![A-Za-z0-9+/=_-])")
"""A run of base64 characters (either alphabet), 20 or more, not inside a longer run."""
B64_MIN_TEXT = 24  # shorter strings cannot hold a 20-character run worth decoding
_PRINTABLE = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]*\Z")


class WrappedScan:
    """Base64-wrapped values and values split across message parts (a mixin of ``Redactor``)."""

    _counts: dict[str, int]

    def _on_b64(self, s: str, start: int, m: re.Match[str]) -> tuple[int, str] | None:
        run = m.group()
        body = run.rstrip("=")
        if len(body) % 4 == 1:
            return None
        try:
            if "-" in body or "_" in body:
                if "+" in body or "/" in body:
                    return None
                raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            else:
                raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
            text = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            return None
        if not _PRINTABLE.match(text):
            return None
        inner = self._text(text)  # type: ignore[attr-defined]
        if inner is text or inner == text:
            return None
        tok = TOKEN_RE.search(inner)
        kind = tok.group()[1:tok.group().rindex("_")].lower() if tok is not None else "secret"
        return m.end(), self._stable.normalised(kind, run)  # type: ignore[attr-defined]

    def _joined_parts(self, v: list[Any], out: list[Any]) -> list[Any]:
        """``out`` (the parts redacted one by one), or the text parts redacted as one text when that differs."""
        idx = [i for i, x in enumerate(v) if isinstance(x, dict) and type(x.get("text")) is str
               and isinstance(out[i], dict) and type(out[i].get("text")) is str]  # (a dict subclass too)
        if len(idx) < 2:
            return out
        before = dict(self._counts)
        whole = self._text("".join(v[i]["text"] for i in idx))  # type: ignore[attr-defined]
        if whole == "".join(out[i]["text"] for i in idx):
            self._counts.clear()
            self._counts.update(before)  # nothing new: the parts' own counts stand
            return out
        out = list(out)
        for n, i in enumerate(idx):
            out[i] = {**out[i], "text": whole if n == 0 else ""}
        return out
