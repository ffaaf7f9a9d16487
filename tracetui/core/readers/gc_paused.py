"""The cyclic garbage collector around big reads: ``gc_paused`` (a reader with the collector off) and
``promote_young_objects`` (what was built meanwhile moved out of the young generations).

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

__all__ = ["gc_paused", "promote_young_objects"]

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


def promote_young_objects() -> None:
    """Move every object the cyclic GC tracks to its oldest generation.

    A trace is ~4 tracked containers a span, none in a cycle, built with the GC
    off, so all of them sit in the youngest generation: the next young collection
    after ``gc.enable()`` would walk them (0.5 s for 100k spans), the next
    middle one again. ``freeze`` + ``unfreeze`` is an O(1) move of the young
    generations into the oldest, as if they had survived two collections: they
    are only walked by full collections, which stay collectable (unlike a bare
    ``gc.freeze``). Skipped when the caller froze objects itself (``unfreeze``
    would thaw them).
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
