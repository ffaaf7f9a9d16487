"""``gc_paused``: run a reader with Python's cyclic garbage collector off.

A reader builds many small containers (four or so a span) and no reference
cycles, so the cyclic GC only costs while it runs: its young collections walk
every new container again and again (x2.4 on the 100k-span benchmark,
``../shared/design/performance.md``). ``read_trace`` pauses it around every
reader already (``readers._read_file``); this decorator gives a reader's own
``read`` the same when it is called directly (tests, benchmarks, library users).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["gc_paused"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def gc_paused(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` with the cyclic GC disabled while it runs, and re-enabled after (if it was enabled)."""

    @functools.wraps(fn)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused
