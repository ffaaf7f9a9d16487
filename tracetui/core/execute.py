"""How a batch of independent tasks is run: the execution layer ``triage --batch`` and ``nightly`` share.

A task is a picklable top-level function applied to one picklable item; its result is a small,
picklable value (a summary, never a trace). An ``Executor`` runs ``fn`` over the items and yields
each result as soon as it is finished, in completion order, with the item's index, so a caller can
write its report incrementally and order it afterwards.

``SerialExecutor`` runs in this process (the library default, and tests); the Dask executor
(``tracetui.integrations.dask_cluster``, the optional extra ``tracetui[dask]``) runs on an embedded
``LocalCluster`` or an existing cluster. This module imports no concern of tracetui.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Executor", "Finished", "SerialExecutor", "task_error"]


@dataclass(frozen=True, slots=True)
class Finished:
    """One finished task.

    Attributes:
        index: The item's position in the iterable given to ``map_unordered`` (0-based).
        value: What ``fn(item)`` returned, or None when it raised or was lost.
        error: ``"ExceptionType: message"`` when the task raised (or its worker died), else None.
    """

    index: int
    value: Any
    error: str | None = None


class Executor(Protocol):
    """Runs ``fn`` over items, yielding each result as it finishes (any order)."""

    @property
    def workers(self) -> int:
        """How many tasks can run at once (for progress and the submission window)."""
        ...

    def describe(self) -> str:
        """One line: where tasks run (``local cluster: 2 worker processes``)."""
        ...

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Finished]:
        """Apply ``fn`` to each item; yield a ``Finished`` per item as it completes. A task that raises
        is a ``Finished`` with ``error`` set: it never stops the others."""
        ...


def task_error(exc: BaseException) -> str:
    """``"ValueError: first line of the message"`` (the class name alone when there is none)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


class SerialExecutor:
    """Every task in this process, one after another, in order."""

    @property
    def workers(self) -> int:
        return 1

    def describe(self) -> str:
        return "this process (serial)"

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Finished]:
        for i, item in enumerate(items):
            try:
                value = fn(item)
            except Exception as exc:  # noqa: BLE001 - one task's failure is its result, not the batch's end
                yield Finished(i, None, task_error(exc))
            else:
                yield Finished(i, value)
