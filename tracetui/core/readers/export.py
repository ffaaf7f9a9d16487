"""A span's JSON for copying or saving, and writing it to a fresh file without ever overwriting one."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import orjson

from tracetui.core.model import Span
from tracetui.core.tempfiles import make_temp_file

__all__ = ["SIDES", "span_json", "write_new_file"]

SIDES = ("both", "original", "replay")
"""What ``span_json`` can export: both spans as ``{"original": ..., "replay": ...}``, or one of them."""


def span_json(original: Span | None, replay: Span | None, side: str = "both") -> str:
    """The span(s) of one aligned row as pretty JSON (indent 2), as tracetui/1 writes a span line.

    Args:
        original: The original's span, or None (the row is replay-only).
        replay: The replay's span, or None.
        side: ``both`` (an object with ``original`` and ``replay``, ``null``
            for a missing side), ``original`` or ``replay`` (that span, or ``null``).

    Raises:
        ValueError: ``side`` is not one of ``SIDES``.
    """
    from tracetui.core.readers.native import span_to_obj  # readers load on first use (import time)

    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}")
    a = span_to_obj(original) if original is not None else None
    b = span_to_obj(replay) if replay is not None else None
    obj: Any = {"original": a, "replay": b} if side == "both" else (a if side == "original" else b)
    try:
        return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # integers beyond 64 bits, lone surrogates, nesting deeper than 255
        return json.dumps(obj, indent=2, ensure_ascii=True)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def write_new_file(folder: str | os.PathLike[str], stem: str, data: bytes, suffix: str = ".json") -> Path:
    """Write ``data`` to a new file ``folder/STEM.json`` (or ``STEM-2.json``, ``-3``... when taken).

    The bytes go to a temporary file in ``folder`` first, which is then
    hard-linked to the chosen name: a reader never sees a half-written file and
    an existing file (even one created meanwhile) is never replaced. Where the
    filesystem has no hard links, the file is created exclusively instead.

    Args:
        folder: Existing directory.
        stem: File name without suffix; characters other than letters, digits, ``.``, ``_``, ``-`` become ``-``.
        data: The content.
        suffix: File suffix, dot included.

    Returns:
        The path written.

    Raises:
        OSError: The folder cannot be written (permission, disk full...), or
            10,000 names are taken.
    """
    folder = Path(folder)
    stem = _UNSAFE.sub("-", stem).strip(".-") or "span"
    umask = os.umask(0)
    os.umask(umask)
    fd, tmp = make_temp_file(str(folder))  # named by this process: a crash's leftover is swept next time
    try:
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        for n in range(1, 10_001):
            target = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue
            except OSError:  # no hard links here: exclusive create
                try:
                    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                except FileExistsError:
                    continue
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            return target
        raise FileExistsError(f"{folder / stem}{suffix}: 10,000 names taken")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
