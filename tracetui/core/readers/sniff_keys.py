"""Sniffing by keys when long values fill the first 64 KiB.

The readers' ``sniff(head)`` look for their format's keys in a file's first 64 KiB. A value longer than
that coming first (a 100 KB prompt as the first key of a document or line) hides every key. When no reader
knows the head, ``key_skeleton`` reads on (up to ``SKELETON_READ`` bytes) and gives the same text with every
JSON string cut to ``KEEP`` bytes: the keys and the structure, in the first 64 KiB again, for a second sniff.
YAML (a cassette) gets ``line_skeleton``: its lines indented by at most 4 spaces, each cut to ``KEEP``.
"""

from __future__ import annotations

import re

__all__ = ["KEEP", "SKELETON_READ", "key_skeleton", "skeleton"]

SKELETON_READ = 16 << 20
"""Bytes read in all for the second sniff: bounded work on any file."""

KEEP = 200
"""Bytes kept of each JSON string (the quotes aside)."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _cut(m: re.Match[bytes]) -> bytes:
    s = m.group()
    if len(s) <= KEEP + 2:
        return s
    body = s[1:KEEP + 1]
    while body and 0x80 <= body[-1] < 0xC0:  # not inside a UTF-8 character
        body = body[:-1]
    if body and body[-1] >= 0xC0:
        body = body[:-1]
    i = body.rfind(b"\\", max(0, len(body) - 6))  # not inside an escape (\\n, \\u00e9)
    if i >= 0:
        run = i + 1 - len(body[:i + 1].rstrip(b"\\"))  # backslashes ending at i, i's own included
        if run % 2 and len(body) - i < (6 if body[i + 1:i + 2] == b"u" else 2):
            body = body[:i]
    return b'"' + body + b'"'


def key_skeleton(data: bytes, limit: int) -> bytes:
    """``data`` with each JSON string longer than ``KEEP`` bytes cut to ``KEEP`` (still a string: escapes
    and UTF-8 characters whole), its first ``limit`` bytes. Text that is not JSON passes through unchanged
    but for what looks like strings."""
    return _STRING.sub(_cut, data)[:limit]


def line_skeleton(data: bytes, limit: int) -> bytes:
    """The lines of ``data`` indented by at most 4 spaces (YAML keys near the top level), each cut to
    ``KEEP`` bytes, joined, the first ``limit`` bytes: a long block scalar or a long line first no longer
    hides ``interactions:``."""
    out: list[bytes] = []
    size = 0
    for line in data.split(b"\n"):
        if len(line) - len(line.lstrip(b" ")) <= 4:
            out.append(line[:KEEP])
            size += len(out[-1]) + 1
            if size >= limit:
                break
    return b"\n".join(out)[:limit]


def skeleton(data: bytes, limit: int) -> bytes:
    """``key_skeleton`` for text that starts as JSON (``{``, ``[``), else ``line_skeleton``."""
    start = data.lstrip()[:1]
    return key_skeleton(data, limit) if start in (b"{", b"[") else line_skeleton(data, limit)
