"""Run tracetui's batch tasks on Dask (``dask.distributed``): the optional extra ``tracetui[dask]``.

``DaskExecutor`` implements ``tracetui.core.execute.Executor``. Without a scheduler address it starts
an embedded ``LocalCluster`` of worker *processes* (one thread each, so a worker holds one pair at a
time and replays are isolated from each other and from the scheduler), as many as the machine has
cores; with ``scheduler="tcp://HOST:8786"`` (or ``$DASK_SCHEDULER_ADDRESS``) it connects to an
existing cluster, whose workers must be able to import tracetui and the agent, and read the store.

Tasks are submitted through a sliding window (``window`` in flight, default four per worker thread)
and collected with ``as_completed``: results stream back as they finish, the scheduler never holds
10,000 pending tasks, and the client holds summaries only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tracetui.core.errors import TracetuiError
from tracetui.core.execute import Finished, task_error

INSTALL_HINT = "pip install 'tracetui[dask]'  (dask.distributed)"


class DaskMissing(TracetuiError):
    """``dask.distributed`` is not installed."""

    def __init__(self, what: str = "this command") -> None:
        super().__init__(f"{what} runs on Dask, which is not installed: {INSTALL_HINT}")


def _distributed(what: str) -> Any:
    try:
        import dask.distributed as distributed
    except ImportError:
        raise DaskMissing(what) from None
    return distributed


class DaskExecutor:
    """Tasks on a Dask cluster, results as they finish.

    Args:
        scheduler: ``tcp://HOST:PORT`` of an existing scheduler; default ``$DASK_SCHEDULER_ADDRESS``,
            else an embedded ``LocalCluster``.
        workers: Embedded cluster only: worker processes (default ``os.cpu_count()``).
        client: An existing ``distributed.Client`` to use as is (tests; not closed by ``close``).
        window: Tasks in flight at once (default 4 x the cluster's worker threads, at least 4).
        what: Named in the error when Dask is missing.

    Raises:
        DaskMissing: ``dask.distributed`` is not installed.
        TracetuiError: the scheduler cannot be reached (its address and the reason).
    """

    def __init__(self, scheduler: str | None = None, *, workers: int | None = None, client: Any = None,
                 window: int | None = None, what: str = "this command") -> None:
        distributed = _distributed(what)
        self._own: list[Any] = []
        scheduler = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
        self.address: str | None = scheduler
        if client is not None:
            self.client = client
            self.kind = "given client"
        elif scheduler:
            try:
                self.client = distributed.Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise TracetuiError(f"Dask scheduler {scheduler}: cannot connect ({task_error(exc)}); is "
                                    "`dask scheduler` running there?") from None
            self._own.append(self.client)
            self.kind = f"scheduler {scheduler}"
        else:
            n = max(1, workers or os.cpu_count() or 1)
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                               dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = distributed.Client(cluster)
            self._own += [self.client, cluster]
            self.kind = f"local cluster: {n} worker process{'es' if n != 1 else ''}"
        self._window = window

    @property
    def workers(self) -> int:
        """Worker threads in the cluster now (at least 1)."""
        try:
            info = self.client.scheduler_info(n_workers=-1) if _takes_n_workers(self.client) else self.client.scheduler_info()
            return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))
        except Exception:  # noqa: BLE001 - a count for progress only
            return 1

    def describe(self) -> str:
        return f"Dask, {self.kind} ({self.workers} worker thread{'s' if self.workers != 1 else ''})"

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Finished]:
        """Submit ``fn(item)`` for each item through a sliding window; yield each as it completes.

        A task that raised, or whose worker died (``KilledWorker``), is a ``Finished`` with ``error``.
        """
        distributed = _distributed("this command")
        window = self._window or max(4, 4 * self.workers)
        it = iter(enumerate(items))
        index_of: dict[Any, int] = {}
        ac = distributed.as_completed()

        def submit_next() -> bool:
            nxt = next(it, None)
            if nxt is None:
                return False
            i, item = nxt
            fut = self.client.submit(fn, item, pure=False, key=f"tracetui-task-{i}-{os.urandom(4).hex()}")
            index_of[fut.key] = i
            ac.add(fut)
            return True

        for _ in range(window):
            if not submit_next():
                break
        for fut in ac:
            i = index_of.pop(fut.key)
            try:
                value = fut.result()
            except Exception as exc:  # noqa: BLE001 - the task's exception, re-raised here by Dask
                yield Finished(i, None, task_error(exc))
            else:
                yield Finished(i, value)
            finally:
                fut.release()
            submit_next()

    def close(self) -> None:
        """Close the client and the embedded cluster (not a client given to the constructor)."""
        for thing in self._own:
            try:
                thing.close()
            except Exception:  # noqa: BLE001 - closing at exit: nothing left to report to
                pass
        self._own.clear()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _takes_n_workers(client: Any) -> bool:
    import inspect

    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):
        return False
