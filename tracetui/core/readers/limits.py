"""Bounds on what one input may cost: bytes read from a file that does not end, lines that are not a trace.

A regular file is read whole, whatever its size (memory follows its size). What has no size — a pipe,
a FIFO, ``/dev/zero``, a regular file still growing — is read up to ``stream_allowance()`` bytes past
its size at open, then the read stops with a ``ReadError``. A file of lines stops with a
``ReadError`` once more than ``BAD_LINES`` lines could not be read and they outnumber those that
could (2 million bad lines end in a second, not in 30 s and 2 million issues). A string that holds a
lone surrogate (``"\\ud800"``: half a UTF-16 pair, which no UTF-8 output can write) is reported
(``lone_surrogates``); the writers put the escape back.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import Any, BinaryIO

import orjson

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue

__all__ = ["BAD_LINES", "DEFAULT_STREAM_MB", "STREAM_ENV", "BadLines", "dumps_any", "lone_surrogates", "over_budget", "read_budget", "read_rest", "stream_allowance"]

STREAM_ENV = "TRACETUI_MAX_STREAM_MB"
DEFAULT_STREAM_MB = 32
"""MiB read from a pipe or device (or a file's growth while read) before the read stops."""

BAD_LINES = 10_000
"""Unreadable lines tolerated before a file whose lines are mostly unreadable is given up."""


def stream_allowance() -> int:
    """Bytes a file may give beyond its size at open: ``$TRACETUI_MAX_STREAM_MB`` MiB (default 32)."""
    raw = os.environ.get(STREAM_ENV, "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_STREAM_MB
    except ValueError:
        mb = DEFAULT_STREAM_MB
    return max(1, int(mb * (1 << 20)))


def read_budget(fh: BinaryIO) -> tuple[int, bool]:
    """``(bytes, regular)``: how many bytes ``fh`` may give in all (its size at open plus the
    stream allowance), and whether it is a regular file."""
    try:
        st = os.fstat(fh.fileno())
    except (OSError, AttributeError, ValueError):  # not a real file (BytesIO): no size to go by
        return stream_allowance(), False
    regular = stat.S_ISREG(st.st_mode)
    return (st.st_size if regular else 0) + stream_allowance(), regular


def over_budget(path: str, budget: int, regular: bool) -> ReadError:
    """The error of a read that went past ``budget`` bytes."""
    mb = stream_allowance() / (1 << 20)
    what = (f"grew by more than {mb:g} MiB while being read (still being written?)" if regular else
            f"is a pipe or device that did not end within {mb:g} MiB")
    return ReadError(path, f"{what}; reading stopped at {budget:,} bytes (save it to a file first, or raise "
                           f"the limit with {STREAM_ENV}=N)")


def read_rest(fh: BinaryIO, path: str, head: bytes) -> bytes:
    """The whole file as bytes: from the start when ``fh`` can seek, else ``head`` + what follows it.

    Raises:
        ReadError: the file gives more than ``read_budget`` bytes.
    """
    budget, regular = read_budget(fh)
    if fh.seekable():
        fh.seek(0)
        data = fh.read(budget + 1)
    else:
        data = head + fh.read(max(0, budget + 1 - len(head)))
    if len(data) > budget:
        raise over_budget(path, budget, regular)
    return data


class BadLines:
    """Counts a file's unreadable lines against its readable ones; ``check`` gives up on a file
    whose lines are mostly not readable, once more than ``BAD_LINES`` of them are."""

    __slots__ = ("bad", "first", "path", "what")

    def __init__(self, path: str, what: str) -> None:
        self.path, self.what = path, what
        self.bad = 0
        self.first: str | None = None

    def add(self, message: str, good: int, line: int) -> None:
        """One more unreadable line (``message`` says why), with ``good`` lines read so far.

        Raises:
            ReadError: more than ``BAD_LINES`` unreadable lines, and more than were read.
        """
        self.bad += 1
        if self.first is None:
            self.first = f"line {line}: {message}"
        if self.bad > BAD_LINES and self.bad > good:
            raise ReadError(
                self.path,
                f"reading stopped: {self.bad:,} lines could not be read and only {good:,} could "
                f"(first: {self.first}); this does not look like a {self.what} file",
                line=line,
            )


_LONE = re.compile("[\ud800-\udfff]")


def _key_path(base: str, key: str) -> str:
    return f"{base}.{key}" if key.isidentifier() else f"{base}[{key!r}]"


def lone_surrogates(path: str, value: Any, issues: list[ReadIssue], line: int | None) -> None:
    """Append one warning when strings (or keys) of ``value`` hold a lone surrogate, naming the
    first's JSON path (the shortest) and how many there are. Iterative: any depth."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("$", value)]
    while stack:
        at, v = stack.pop()
        if type(v) is str:
            if _LONE.search(v):
                found.append(at)
        elif type(v) is dict:
            for k, x in v.items():
                kp = _key_path(at, k) if type(k) is str else f"{at}[{k!r}]"
                if type(k) is str and _LONE.search(k):
                    found.append(kp)
                stack.append((kp, x))
        elif type(v) is list:
            stack.extend((f"{at}[{i}]", x) for i, x in enumerate(v))
    if found:
        issues.append(ReadIssue(path, line, min(found, key=len), f"{len(found)} string(s) hold a lone surrogate "
                                "escape (\\udXXX: half of a UTF-16 pair, not text); kept, written back as the escape",
                                "warning"))


def dumps_any(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps(value, option=option)``, or, for what a reader keeps and orjson cannot write (an
    integer beyond 64 bits, a lone surrogate, nesting deeper than 255), the standard library's compact
    JSON with each lone surrogate as its ``\\udXXX`` escape (keys sorted when ``option`` asks).

    Raises:
        RecursionError: nested deeper than the interpreter's stack (the readers refuse such input first).
    """
    try:
        return orjson.dumps(value, option=option)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=bool(option & orjson.OPT_SORT_KEYS))
        return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode()
