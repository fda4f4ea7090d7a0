"""Where evaluations run: the inline executor, treebo's process pool, any executor, Dask.

:func:`resolve_executor` validates ``n_jobs``, ``executor`` and ``timeout``
and picks the executor: the calling thread (:class:`InlineExecutor`) when
there is nothing to run in parallel, treebo's loky pool of worker processes
(:func:`process_pool`) for ``n_jobs > 1`` or a ``timeout``, the user's
``concurrent.futures.Executor``, or a ``dask.distributed.Client`` through
``client.get_executor(pure=False)``.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import numbers
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

from .task import bind_to_driver

if TYPE_CHECKING:
    from distributed import Client
    from joblib.externals.loky import ProcessPoolExecutor

__all__ = [
    "InlineExecutor",
    "process_pool",
    "discard_pool",
    "warm_up",
    "resolve_executor",
    "dask_client_of",
    "count_dask_workers",
]


class InlineExecutor(cf.Executor):
    """Runs each call at once in the calling thread (the sequential loop).

    An exception of the call is set on its future; ``KeyboardInterrupt`` (Ctrl-C)
    propagates to the caller.
    """

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        future: cf.Future = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - KeyboardInterrupt propagates
            future.set_exception(error)
        return future


_POOL: dict[str, Any] = {"executor": None, "n_workers": 0}
_POOL_LOCK = threading.Lock()


def process_pool(n_workers: int, fresh: bool = False) -> ProcessPoolExecutor:
    """treebo's pool of worker processes, created on first use and kept for the next runs.

    A loky ``ProcessPoolExecutor`` (vendored by joblib): it pickles the
    objective with cloudpickle, so closures and lambdas work, and reports a
    dead worker as ``TerminatedWorkerError`` instead of hanging. It is a pool
    of treebo's own rather than loky's reusable singleton, which joblib's
    ``Parallel`` (scikit-learn's ``n_jobs``) configures for itself. Idle
    workers exit after five minutes; a broken pool, or one of another size,
    is replaced. Every worker watches the process that made the pool and
    kills itself within a quarter of a second of that process's end,
    however it ended (SIGTERM and SIGKILL included).

    Parameters
    ----------
    n_workers : int
        Worker processes.
    fresh : bool, default False
        Replace the pool even if it has the right size (after it broke).

    Returns
    -------
    concurrent.futures.Executor
        The shared loky pool with ``n_workers`` workers.
    """
    from joblib.externals.loky import ProcessPoolExecutor

    with _POOL_LOCK:
        pool = _POOL["executor"]
        if pool is not None and (fresh or _POOL["n_workers"] != n_workers):
            pool.shutdown(wait=False, kill_workers=True)
            pool = None
        if pool is None:
            pool = ProcessPoolExecutor(
                max_workers=n_workers,
                timeout=300,
                initializer=bind_to_driver,
                initargs=(os.getpid(),),
            )
            _POOL.update(executor=pool, n_workers=n_workers)
        return pool


def discard_pool(pool: ProcessPoolExecutor) -> None:
    """Kill the workers of ``pool`` and wait until they are dead; the next call gets a new pool.

    None of the pool's futures may have been cancelled: loky's shutdown
    fails on a cancelled future before it kills the workers, and a stuck
    worker left alive keeps the interpreter from exiting.

    Parameters
    ----------
    pool : concurrent.futures.Executor
        A pool made by :func:`process_pool`.
    """
    with _POOL_LOCK:
        if _POOL["executor"] is pool:
            _POOL.update(executor=None, n_workers=0)
    # Waiting frees the stuck workers' CPU before a new pool starts.
    pool.shutdown(wait=True, kill_workers=True)


def _ping(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def warm_up(executor: cf.Executor, n_workers: int, seconds: float = 0.1) -> float:
    """Give every worker a trivial task and wait for them all.

    A fresh worker process imports treebo (about a second) before its first
    evaluation; warming up keeps that out of the first evaluations' timeout.
    The tasks run at the same time, so each idle worker takes one.

    Parameters
    ----------
    executor : concurrent.futures.Executor
    n_workers : int
        Tasks to submit, one per worker.
    seconds : float, default 0.1
        How long each task sleeps, so that the tasks overlap.

    Returns
    -------
    float
        Seconds it took.
    """
    start = time.perf_counter()
    for future in [executor.submit(_ping, seconds) for _ in range(n_workers)]:
        future.result()
    return time.perf_counter() - start


def _is_dask_client(executor: Any) -> bool:
    return (
        not isinstance(executor, cf.Executor)
        and hasattr(executor, "get_executor")
        and hasattr(executor, "nthreads")
    )


@overload
def resolve_executor(
    n_jobs: Any,
    executor: Any,
    timeout: Any,
    dry_run: Literal[False] = False,
    max_workers: int | None = None,
) -> tuple[cf.Executor, int, bool]: ...
@overload
def resolve_executor(
    n_jobs: Any, executor: Any, timeout: Any, dry_run: bool, max_workers: int | None = None
) -> tuple[cf.Executor | Client | None, int, bool]: ...
def resolve_executor(
    n_jobs: Any, executor: Any, timeout: Any, dry_run: bool = False, max_workers: int | None = None
) -> tuple[cf.Executor | Client | None, int, bool]:
    """Validate ``n_jobs``, ``executor`` and ``timeout`` and pick where evaluations run.

    Parameters
    ----------
    n_jobs : int or None
        Evaluations in flight; ``-1`` means the number of CPUs. None: 1
        without an executor, else the executor's number of workers (threads
        of a Dask cluster, ``_max_workers`` of a ``concurrent.futures`` pool).
    executor : concurrent.futures.Executor, dask.distributed.Client or None
        None: the calling process when ``n_jobs`` is 1 and there is no
        ``timeout``, otherwise :func:`process_pool` (warmed up first when
        there is a ``timeout``). A Dask client is used through
        ``client.get_executor(pure=False)``.
    timeout : float or None
        Seconds, ``> 0``; only checked here, and it makes evaluations without
        an executor run in worker processes.
    dry_run : bool, default False
        Only validate and count the workers: make no pool (the executor
        returned is None when none was given) and return a Dask client as is.
    max_workers : int, optional
        The evaluations left to make: treebo's own pool gets no more worker
        processes than that (``n_jobs=64`` for 12 evaluations starts 12).

    Returns
    -------
    executor : concurrent.futures.Executor, dask.distributed.Client or None
        The executor; with ``dry_run``, None when none was given and a Dask
        client as given.
    n_workers : int
        Evaluations to keep in flight.
    owned : bool
        True when the executor was made here (its workers may be killed to
        stop a stuck or abandoned evaluation).

    Raises
    ------
    ValueError
        For an invalid argument, or an executor whose size cannot be told
        without ``n_jobs``.
    """
    if n_jobs is not None:
        if (
            isinstance(n_jobs, bool)
            or not isinstance(n_jobs, numbers.Integral)
            or not (int(n_jobs) >= 1 or n_jobs == -1)
        ):
            raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
        n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if executor is not None and not (
        isinstance(executor, cf.Executor) or _is_dask_client(executor)
    ):
        raise ValueError(
            "executor must be a concurrent.futures.Executor or a "
            f"dask.distributed.Client, got {executor!r}"
        )
    if executor is None:
        n_workers = n_jobs or 1
        if max_workers is not None:
            n_workers = max(1, min(n_workers, max_workers))
        if dry_run:
            return None, n_workers, False
        if n_workers == 1 and timeout is None:
            return InlineExecutor(), 1, True
        executor = process_pool(n_workers)
        if timeout is not None:
            # The driver's deadlines count from submission: keep the workers'
            # start-up out of them.
            warm_up(executor, n_workers)
        return executor, n_workers, True
    if _is_dask_client(executor):
        n_workers = n_jobs or sum(executor.nthreads().values())
        executor = executor if dry_run else executor.get_executor(pure=False)
    else:
        # concurrent.futures pools keep their size in _max_workers, a Dask
        # ClientExecutor (client.get_executor()) its client in _client.
        client: Any = getattr(executor, "_client", None)
        size = (
            sum(client.nthreads().values())
            if hasattr(client, "nthreads")
            else getattr(executor, "_max_workers", None)
        )
        n_workers = n_jobs or size
    if not n_workers:
        raise ValueError(f"cannot tell how many workers {executor!r} has; pass n_jobs")
    return executor, int(n_workers), False


def dask_client_of(executor: cf.Executor) -> Any:
    """The Dask client behind a ``ClientExecutor``, or None for any other executor.

    Parameters
    ----------
    executor : concurrent.futures.Executor

    Returns
    -------
    distributed.Client or None
    """
    client = getattr(executor, "_client", None)
    return client if hasattr(client, "scheduler_info") else None


def count_dask_workers(client: Any) -> int:
    """The workers a Dask scheduler has now; 0 when it cannot be reached.

    Parameters
    ----------
    client : distributed.Client

    Returns
    -------
    int
    """
    try:
        return len(client.scheduler_info()["workers"])
    except Exception:  # noqa: BLE001 - a scheduler out of reach has no worker to offer either
        return 0
