"""Evaluating the objective through any ``concurrent.futures.Executor``.

:func:`minimize` keeps ``n_workers`` evaluations in flight and proposes a new
point as soon as one finishes (asynchronous, not in synchronous batches), so
a slow evaluation never holds up the others. The points being evaluated are
pending trials, which the optimizer shows to its surrogate as constant lies.

Failures are sorted into two kinds:

* the objective raised, returned NaN/inf/None, or ran past ``timeout``: a
  *failed* trial, recorded with its error text and never retried;
* the evaluation was *lost* (the executor raised instead of returning: a
  worker process killed, a broken pool, Dask's ``KilledWorker``, a cancelled
  future): it is submitted again up to ``max_retries`` times, then recorded as
  failed. An executor that refuses new work ends the run with a message.

Either way the loop goes on and every result that came back is told, so
nothing told is lost (with ``storage=`` it is committed at once).

Executors: the evaluations run in the calling process when there is nothing
to run in parallel; ``n_jobs > 1`` (or a ``timeout``) uses a loky process pool
(:func:`process_pool`), which ships closures and lambdas with cloudpickle and
reports dead workers; any ``concurrent.futures.Executor`` may be passed; a
``dask.distributed.Client`` is used through ``client.get_executor(pure=False)``.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import logging
import math
import numbers
import os
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["resolve_executor", "run_evaluations", "process_pool", "warm_up"]

logger = logging.getLogger("treebo")


class _EvaluationTimeout(BaseException):
    """Raised inside the objective by the worker's alarm.

    A BaseException, so that an objective's own ``except Exception`` does not
    swallow it.
    """


def _raise_timeout(signum: int, frame: Any) -> None:
    raise _EvaluationTimeout


def _evaluate_task(func: Callable, x: Any, timeout: float | None, driver_pid: int,
                   token: tuple) -> tuple[Any, str | None, float]:
    """Run ``func(x)`` where the executor put it; never raises for a failure of ``func``.

    Returns ``(value, error text or None, seconds)``. ``token`` (trial number
    and attempt) only makes every submission distinct, so that executors
    that cache by arguments (Dask with ``pure=True``) never hand back an
    earlier attempt's result.
    """
    # The alarm is only safe in a worker process's main thread: never in the
    # driver (it would take over the user's SIGALRM) and never in a thread.
    alarm = (timeout is not None and os.getpid() != driver_pid and hasattr(signal, "setitimer")
             and threading.current_thread() is threading.main_thread())
    if alarm:
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        return func(x), None, time.perf_counter() - start
    except _EvaluationTimeout:
        return None, f"timed out after {timeout:g} s", time.perf_counter() - start
    except Exception as error:  # noqa: BLE001 - any failure of user code is a failed trial
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        return None, text, time.perf_counter() - start
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


class _InlineExecutor(cf.Executor):
    """Runs each call at once in the calling thread (the sequential loop)."""

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        future: cf.Future = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - KeyboardInterrupt propagates
            future.set_exception(error)
        return future


_POOL: dict[str, Any] = {"executor": None, "n_workers": 0}
_POOL_LOCK = threading.Lock()


def process_pool(n_workers: int, fresh: bool = False) -> cf.Executor:
    """treebo's pool of worker processes, created on first use and kept for the next runs.

    A loky ``ProcessPoolExecutor`` (vendored by joblib): it pickles the
    objective with cloudpickle, so closures and lambdas work, and reports a
    dead worker as ``TerminatedWorkerError`` instead of hanging. It is a pool
    of treebo's own rather than loky's reusable singleton, which joblib's
    ``Parallel`` (scikit-learn's ``n_jobs``) configures for itself. Idle
    workers exit after five minutes; a broken pool, or one of another size,
    is replaced.

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
            pool = ProcessPoolExecutor(max_workers=n_workers, timeout=300)
            _POOL.update(executor=pool, n_workers=n_workers)
        return pool


def _discard_pool(pool: cf.Executor) -> None:
    """Kill the workers of ``pool`` (abandoned evaluations); the next run gets a new one."""
    with _POOL_LOCK:
        if _POOL["executor"] is pool:
            _POOL.update(executor=None, n_workers=0)
    pool.shutdown(wait=False, kill_workers=True)


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
    return (not isinstance(executor, cf.Executor) and hasattr(executor, "get_executor")
            and hasattr(executor, "nthreads"))


def resolve_executor(n_jobs: Any, executor: Any, timeout: Any,
                     dry_run: bool = False) -> tuple[cf.Executor | None, int, bool]:
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

    Returns
    -------
    executor : concurrent.futures.Executor or None
    n_workers : int
        Evaluations to keep in flight.
    owned : bool
        True when the executor was made here (its workers may be killed at
        the end to stop abandoned evaluations).

    Raises
    ------
    ValueError
        For an invalid argument, or an executor whose size cannot be told
        without ``n_jobs``.
    """
    if n_jobs is not None:
        if (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                or not (n_jobs >= 1 or n_jobs == -1)):
            raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
        n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    if timeout is not None and (isinstance(timeout, bool)
                                or not isinstance(timeout, numbers.Real)
                                or not math.isfinite(timeout) or timeout <= 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if executor is not None and not (isinstance(executor, cf.Executor)
                                     or _is_dask_client(executor)):
        raise ValueError("executor must be a concurrent.futures.Executor or a "
                         f"dask.distributed.Client, got {executor!r}")
    if executor is None:
        n_workers = n_jobs or 1
        if dry_run:
            return None, n_workers, False
        if n_workers == 1 and timeout is None:
            return _InlineExecutor(), 1, True
        executor = process_pool(n_workers)
        if timeout is not None:
            # Timeouts count from submission: keep the workers' start-up out of them.
            warm_up(executor, n_workers)
        return executor, n_workers, True
    if _is_dask_client(executor):
        n_workers = n_jobs or sum(executor.nthreads().values())
        executor = executor if dry_run else executor.get_executor(pure=False)
    else:
        # concurrent.futures pools keep their size in _max_workers, a Dask
        # ClientExecutor (client.get_executor()) its client in _client.
        client = getattr(executor, "_client", None)
        size = (sum(client.nthreads().values()) if hasattr(client, "nthreads")
                else getattr(executor, "_max_workers", None))
        n_workers = n_jobs or size
    if not n_workers:
        raise ValueError(f"cannot tell how many workers {executor!r} has; pass n_jobs")
    return executor, int(n_workers), False


@dataclass
class _Job:
    trial: Any
    submitted_at: float
    attempts: int = 0


def run_evaluations(optimizer: Any, func: Callable, budget: int, *, x0: list,
                    executor: cf.Executor, n_workers: int, owned: bool,
                    timeout: float | None, strategy: str, max_retries: int,
                    on_tell: Callable[[Any], str | None]) -> str | None:
    """Ask, evaluate and tell until ``budget`` evaluations are made or the run stops.

    Parameters
    ----------
    optimizer : Optimizer
    func : callable
    budget : int
        Evaluations to make (pending trials offered again by a resumed
        optimizer and ``x0`` points included).
    x0 : list of points
        Evaluated first.
    executor, n_workers, owned
        From :func:`resolve_executor`.
    timeout : float or None
        Seconds from submission after which an evaluation counts as failed.
    strategy : str
        Constant-liar strategy for ``ask``.
    max_retries : int
        Resubmissions of a lost evaluation.
    on_tell : callable
        Called with each told trial; a string return value stops the run and
        becomes its message.

    Returns
    -------
    str or None
        Why the run stopped early; ``None`` when the budget was used up.
    """
    from .optimizer import SpaceExhausted

    driver_pid = os.getpid()
    in_flight: dict[cf.Future, _Job] = {}
    abandoned: list[cf.Future] = []
    queue = deque(x0)
    submitted = 0
    message: str | None = None

    def submit(job: _Job) -> bool:
        nonlocal executor
        token = (job.trial.number, job.attempts)
        # A copy: an objective that changes its argument in place must not
        # change the recorded point (worker processes get a copy anyway).
        args = (_evaluate_task, func, copy.deepcopy(job.trial.x), timeout, driver_pid, token)
        try:
            try:
                future = executor.submit(*args)
            except (RuntimeError, cf.BrokenExecutor):
                if not (owned and not isinstance(executor, _InlineExecutor)):
                    raise
                # A worker died and broke the pool: start a new one.
                executor = process_pool(n_workers, fresh=True)
                future = executor.submit(*args)
        except Exception as error:  # noqa: BLE001 - an executor that refuses work ends the run
            text = f"could not submit the evaluation: {type(error).__name__}: {error}"
            logger.warning("trial %d: %s", job.trial.number, text)
            # Through tell(), so callbacks and the progress bar see it too.
            tell(job, None, text, None)
            return False
        job.submitted_at = time.monotonic()
        in_flight[future] = job
        return True

    def tell(job: _Job, value: Any, error: str | None, eval_time: float | None) -> None:
        nonlocal message, stop_now
        optimizer._tell_trial(job.trial, value, error=error, eval_time=eval_time)
        stop = on_tell(job.trial)
        if stop is not None and not stop_now:
            message, stop_now = stop, True

    stop_now = False  # a callback asked to stop: abandon what is in flight
    try:
        while True:
            # Keep n_workers evaluations in flight while the budget lasts.
            while message is None and len(in_flight) < n_workers and submitted < budget:
                free = min(n_workers - len(in_flight), budget - submitted)
                trials = []
                while queue and len(trials) < free:
                    trials.append(optimizer._given_trial(queue.popleft()))
                if len(trials) < free:
                    try:
                        trials += optimizer._ask_trials(free - len(trials), strategy)
                    except SpaceExhausted as exhausted:
                        message = str(exhausted)
                for trial in trials:
                    submitted += 1
                    if not submit(_Job(trial, time.monotonic())):
                        message = message or "stopped: the executor refused new evaluations"
            # After a space ran out or the executor broke, what is in flight
            # is still waited for; after a callback's stop it is not.
            if stop_now or not in_flight:
                break
            wait_for = None
            if timeout is not None:
                first = min(job.submitted_at for job in in_flight.values())
                wait_for = max(first + timeout - time.monotonic(), 0.0)
            done, _ = cf.wait(list(in_flight), timeout=wait_for,
                              return_when=cf.FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: in_flight[f].trial.number):
                job = in_flight.pop(future)
                try:
                    value, error, eval_time = future.result()
                except BaseException as lost:  # noqa: BLE001 - the executor lost it
                    if isinstance(lost, KeyboardInterrupt):
                        raise
                    job.attempts += 1
                    reason = f"{type(lost).__name__}: {lost}".rstrip(": ")
                    if job.attempts <= max_retries and not stop_now:
                        logger.warning("trial %d: evaluation lost (%s); submitting it again "
                                       "(retry %d of %d)", job.trial.number, reason,
                                       job.attempts, max_retries)
                        if not submit(job):
                            message = "stopped: the executor refused new evaluations"
                        continue
                    logger.warning("trial %d: evaluation lost (%s); recorded as failed",
                                   job.trial.number, reason)
                    tell(job, None, f"evaluation lost: {reason}", None)
                    continue
                tell(job, value, error, eval_time)
            if timeout is not None:
                now = time.monotonic()
                for future, job in list(in_flight.items()):
                    if now - job.submitted_at >= timeout and not future.done():
                        del in_flight[future]
                        future.cancel()
                        abandoned.append(future)
                        logger.warning("trial %d: no result after %g s; recorded as failed",
                                       job.trial.number, timeout)
                        tell(job, None, f"timed out after {timeout:g} s", None)
    finally:
        # Whatever is still in flight is abandoned: a callback stopped the
        # run, or it is being interrupted. Those trials stay pending.
        for future in in_flight:
            future.cancel()
        running = [f for f in list(in_flight) + abandoned if not f.done()]
        if owned and running and not isinstance(executor, _InlineExecutor):
            # Stop the abandoned evaluations instead of letting them run on;
            # the next call gets a fresh pool.
            _discard_pool(executor)
    return message
