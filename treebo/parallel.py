"""Evaluating the objective through any ``concurrent.futures.Executor``.

:func:`minimize` keeps ``n_workers`` evaluations in flight and proposes a new
point as soon as one finishes (asynchronous, not in synchronous batches), so
a slow evaluation never holds up the others. The points being evaluated are
pending trials, which the optimizer shows to its surrogate as constant lies.

Failures are sorted into two kinds:

* the objective raised (any exception, ``SystemExit`` included, and a
  ``KeyboardInterrupt`` anywhere but the driver's main thread), returned
  NaN/inf/None, or ran past ``timeout``: a *failed* trial, recorded with its
  error text and never retried;
* the evaluation was *lost* (the executor raised instead of returning: a
  worker process killed, a broken pool, Dask's ``KilledWorker``, a cancelled
  future): it is submitted again up to ``max_retries`` times, then recorded as
  failed. An executor that refuses new work ends the run with a message.

Either way the loop goes on and every result that came back is told, so
nothing told is lost (with ``storage=`` it is committed at once). Ctrl-C in
the driver (``KeyboardInterrupt`` in its main thread) stops the run: what is
in flight stays pending and the exception reaches the caller.

An evaluation that overruns ``timeout`` and ignores the worker's alarm is
given up a second later (``_TIMEOUT_GRACE``): in treebo's own pool its worker
is killed with the pool, which a fresh one replaces (evaluations of other
trials killed with it are submitted again, not counted as retries); the
future of any other executor is cancelled and abandoned. A Dask cluster left
with no workers for ``DASK_NO_WORKERS_TIMEOUT`` seconds ends the run,
leaving what is in flight pending.

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

from .space import SpaceExhausted

__all__ = ["resolve_executor", "run_evaluations", "process_pool", "warm_up",
           "DASK_NO_WORKERS_TIMEOUT"]

logger = logging.getLogger("treebo")

#: Seconds past ``timeout`` that the driver waits for an evaluation's own
#: alarm to report it before giving up on it: enough for a worker's result to
#: come back, so that an objective which honours the alarm never gets its
#: pool killed.
_TIMEOUT_GRACE = 1.0

#: Seconds between a worker's checks that the driver that started it is alive.
_WATCH_INTERVAL = 0.25

#: Seconds a Dask cluster may have no workers, while evaluations wait for one,
#: before the run stops. Raise it for an adaptive cluster that scales up from
#: zero more slowly.
DASK_NO_WORKERS_TIMEOUT = 60.0


class _EvaluationTimeout(BaseException):
    """Raised inside the objective by the worker's alarm.

    A BaseException, so that an objective's own ``except Exception`` does not
    swallow it.
    """


def _raise_timeout(signum: int, frame: Any) -> None:
    raise _EvaluationTimeout


def _timed_out(timeout: float) -> str:
    return f"timed out after {timeout:g} s"


def _evaluate_task(func: Callable, x: Any, timeout: float | None, driver_pid: int,
                   token: tuple) -> tuple[Any, str | None, float]:
    """Run ``func(x)`` where the executor put it; never raises for a failure of ``func``.

    Returns ``(value, error text or None, seconds)``. An evaluation that took
    longer than ``timeout`` is a failure even when it returned (a thread
    cannot be interrupted). ``token`` (trial number and submission) only
    makes every submission distinct, so that executors that cache by
    arguments (Dask with ``pure=True``) never hand back an earlier attempt's
    result.

    Raises
    ------
    KeyboardInterrupt
        Only in the driver's main thread, where it means Ctrl-C: elsewhere
        Python never raises it for a signal of the driver, so it is the
        objective's own failure.
    """
    in_driver_main = (os.getpid() == driver_pid
                      and threading.current_thread() is threading.main_thread())
    # The alarm is only safe in a worker process's main thread: never in the
    # driver (it would take over the user's SIGALRM) and never in a thread.
    alarm = (timeout is not None and os.getpid() != driver_pid and hasattr(signal, "setitimer")
             and threading.current_thread() is threading.main_thread())
    if alarm:
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
    start = time.perf_counter()
    try:
        # Armed and disarmed inside the try: an alarm at any instant is caught below.
        try:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            value = func(x)
        finally:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _EvaluationTimeout:
        return None, _timed_out(timeout), time.perf_counter() - start
    except BaseException as error:  # noqa: BLE001 - any failure of user code is a failed trial
        if isinstance(error, KeyboardInterrupt) and in_driver_main:
            raise
        # SystemExit (sys.exit() in the objective) too: the same failed trial
        # inline and in any worker, where an executor would report it as a
        # lost evaluation and have it retried.
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        return None, text, time.perf_counter() - start
    finally:
        if alarm:
            signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    if timeout is not None and seconds > timeout:
        return None, _timed_out(timeout), seconds
    return value, None, seconds


def _bind_to_driver(driver_pid: int) -> None:
    """Make this worker process of treebo's pool die with the driver that started it.

    Run by each worker as it starts. A daemon thread checks every
    ``_WATCH_INTERVAL`` seconds that the worker's parent is still the driver;
    once the driver is gone, however it ended (SIGKILL included), the worker
    kills itself, so no evaluation runs on orphaned. (``PR_SET_PDEATHSIG``
    would fire when the *thread* that started the worker ends, which in a
    pool is whichever thread submitted work; a process group is not signalled
    when only the driver is killed.)
    """
    if os.getppid() != driver_pid:  # the driver died before this worker started
        _kill_self()
    threading.Thread(target=_watch_driver, args=(driver_pid,), daemon=True,
                     name="treebo-driver-watch").start()


def _watch_driver(driver_pid: int) -> None:
    while os.getppid() == driver_pid:
        time.sleep(_WATCH_INTERVAL)
    _kill_self()


def _kill_self() -> None:
    # SIGKILL: an objective cannot catch or ignore it (where there is none, SIGTERM).
    os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


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
    is replaced. Every worker watches the process that made the pool and
    kills itself within ``_WATCH_INTERVAL`` seconds of that process's end,
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
            pool = ProcessPoolExecutor(max_workers=n_workers, timeout=300,
                                       initializer=_bind_to_driver, initargs=(os.getpid(),))
            _POOL.update(executor=pool, n_workers=n_workers)
        return pool


def _discard_pool(pool: cf.Executor) -> None:
    """Kill the workers of ``pool`` and wait until they are dead; the next call gets a new pool.

    None of the pool's futures may have been cancelled: loky's shutdown
    fails on a cancelled future before it kills the workers, and a stuck
    worker left alive keeps the interpreter from exiting.
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
    return (not isinstance(executor, cf.Executor) and hasattr(executor, "get_executor")
            and hasattr(executor, "nthreads"))


def resolve_executor(n_jobs: Any, executor: Any, timeout: Any, dry_run: bool = False,
                     max_workers: int | None = None) -> tuple[cf.Executor | None, int, bool]:
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
    executor : concurrent.futures.Executor or None
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
        if max_workers is not None:
            n_workers = max(1, min(n_workers, max_workers))
        if dry_run:
            return None, n_workers, False
        if n_workers == 1 and timeout is None:
            return _InlineExecutor(), 1, True
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
    submitted_at: float = 0.0
    attempts: int = 0     # evaluations the executor lost: what max_retries bounds
    submissions: int = 0  # every submission, retries and resubmissions after a kill included


def _dask_client(executor: cf.Executor) -> Any:
    """The Dask client behind a ``ClientExecutor``, or None for any other executor."""
    client = getattr(executor, "_client", None)
    return client if hasattr(client, "scheduler_info") else None


def _count_workers(client: Any) -> int:
    try:
        return len(client.scheduler_info()["workers"])
    except Exception:  # noqa: BLE001 - a scheduler out of reach has no worker to offer either
        return 0


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
        Seconds an evaluation may run. The worker's alarm stops it after
        ``timeout`` seconds from its start; the driver gives up on it
        ``_TIMEOUT_GRACE`` seconds after that, counted from submission
        (in treebo's own pool nothing waits for a worker, so the two agree).
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

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C in the driver: the trials in flight stay pending.
    """
    loop = _EvaluationLoop(optimizer, func, budget, x0, executor, n_workers, owned, timeout,
                           strategy, max_retries, on_tell)
    return loop.run()


_REFUSED = "stopped: the executor refused new evaluations"


class _EvaluationLoop:
    """The state of one :func:`run_evaluations` call (see there for the arguments)."""

    def __init__(self, optimizer: Any, func: Callable, budget: int, x0: list,
                 executor: cf.Executor, n_workers: int, owned: bool, timeout: float | None,
                 strategy: str, max_retries: int, on_tell: Callable[[Any], str | None]):
        self.optimizer, self.func, self.budget = optimizer, func, budget
        self.executor, self.n_workers, self.timeout = executor, n_workers, timeout
        self.strategy, self.max_retries, self.on_tell = strategy, max_retries, on_tell
        # treebo's pool: its workers may be killed, and it is replaced when broken.
        self.own_pool = owned and not isinstance(executor, _InlineExecutor)
        self.client = _dask_client(executor)
        self.driver_pid = os.getpid()
        self.queue = deque(x0)
        self.asked: list[Any] = []  # every trial this call asked for or added
        self.in_flight: dict[cf.Future, _Job] = {}
        self.submitted = 0
        self.message: str | None = None
        self.stop_now = False  # a callback asked to stop: abandon what is in flight
        self.no_workers_since: float | None = None

    def run(self) -> str | None:
        try:
            while True:
                self._fill()
                # After a space ran out or the executor broke, what is in
                # flight is still waited for; after a stop it is not.
                if self.stop_now or not self.in_flight:
                    break
                done, _ = cf.wait(list(self.in_flight), timeout=self._wait_time(),
                                  return_when=cf.FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: self.in_flight[f].trial.number):
                    self._settle(future, self.in_flight.pop(future))
                if self.timeout is not None:
                    self._expire()
                if self.client is not None and not done and not self.stop_now:
                    self._watch_cluster()
        except KeyboardInterrupt:
            self._mark_interrupted()
            raise
        finally:
            self._abandon()
        return self.message

    def _mark_interrupted(self) -> None:
        """After Ctrl-C: the trials left pending were stopped cleanly, not crashed on."""
        pending = [trial for trial in self.asked if trial.status == "pending"]
        if pending:
            try:
                self.optimizer.mark_interrupted(pending)
            except Exception as error:  # noqa: BLE001 - the interrupt is what the caller must see
                logger.warning("could not record the interrupted trials %s: %s",
                               [t.number for t in pending], error)

    def _fill(self) -> None:
        """Keep ``n_workers`` evaluations in flight while the budget lasts."""
        while (self.message is None and len(self.in_flight) < self.n_workers
               and self.submitted < self.budget):
            free = min(self.n_workers - len(self.in_flight), self.budget - self.submitted)
            trials = []
            while self.queue and len(trials) < free:
                trials.append(self.optimizer.add_pending(self.queue.popleft()))
            if len(trials) < free:
                try:
                    trials += self.optimizer.ask_trials(free - len(trials), self.strategy)
                except SpaceExhausted as exhausted:
                    self.message = str(exhausted)
            self.asked += trials
            for trial in trials:
                self.submitted += 1
                self._submit(_Job(trial))

    def _wait_time(self) -> float | None:
        """Seconds until the next evaluation is overdue or the cluster is due a check."""
        waits = []
        if self.timeout is not None:
            first = min(job.submitted_at for job in self.in_flight.values())
            waits.append(max(first + self.timeout + _TIMEOUT_GRACE - time.monotonic(), 0.0))
        if self.client is not None:
            # Count the workers ten times per bound: the stop is at most 10% late.
            waits.append(DASK_NO_WORKERS_TIMEOUT / 10)
        return min(waits, default=None)

    def _submit(self, job: _Job) -> bool:
        """Put ``job`` in flight; a refusal fails its trial and ends the run."""
        job.submissions += 1
        token = (job.trial.number, job.submissions)
        # A copy: an objective that changes its argument in place must not
        # change the recorded point (worker processes get a copy anyway).
        args = (_evaluate_task, self.func, copy.deepcopy(job.trial.x), self.timeout,
                self.driver_pid, token)
        try:
            future = self._executor_submit(args)
        except Exception as error:  # noqa: BLE001 - an executor that refuses work ends the run
            text = f"could not submit the evaluation: {type(error).__name__}: {error}"
            logger.warning("trial %d: %s", job.trial.number, text)
            # Through _tell(), so callbacks and the progress bar see it too.
            self._tell(job, None, text, None)
            self.message = self.message or _REFUSED
            return False
        job.submitted_at = time.monotonic()
        self.in_flight[future] = job
        return True

    def _executor_submit(self, args: tuple) -> cf.Future:
        if self.own_pool and self.executor is None:
            self.executor = self._new_pool()
        try:
            return self.executor.submit(*args)
        except (RuntimeError, cf.BrokenExecutor):
            if not self.own_pool:
                raise
            # A worker died and broke the pool: start a new one.
            self._kill_pool()
            self.executor = self._new_pool()
            return self.executor.submit(*args)

    def _new_pool(self) -> cf.Executor:
        pool = process_pool(self.n_workers)
        if self.timeout is not None:
            # The driver's deadline counts from submission: keep the workers'
            # start-up out of it.
            warm_up(pool, self.n_workers)
        return pool

    def _kill_pool(self) -> None:
        """Kill treebo's pool; the next submission starts a fresh one."""
        if self.executor is not None:
            _discard_pool(self.executor)
            self.executor = None

    def _tell(self, job: _Job, value: Any, error: str | None, eval_time: float | None) -> None:
        self.optimizer.tell_trial(job.trial, value, error=error, eval_time=eval_time)
        stop = self.on_tell(job.trial)
        if stop is not None and not self.stop_now:
            self.message, self.stop_now = stop, True

    def _settle(self, future: cf.Future, job: _Job) -> None:
        """Tell the result of a finished future, or retry its lost evaluation."""
        try:
            value, error, eval_time = future.result()
        except BaseException as lost:  # noqa: BLE001 - the executor lost it
            if isinstance(lost, KeyboardInterrupt):
                raise
            self._lost(job, f"{type(lost).__name__}: {lost}".rstrip(": "))
            return
        self._tell(job, value, error, eval_time)

    def _lost(self, job: _Job, reason: str) -> None:
        job.attempts += 1
        if job.attempts <= self.max_retries and not self.stop_now:
            logger.warning("trial %d: evaluation lost (%s); submitting it again "
                           "(retry %d of %d)", job.trial.number, reason, job.attempts,
                           self.max_retries)
            self._submit(job)
            return
        logger.warning("trial %d: evaluation lost (%s); recorded as failed",
                       job.trial.number, reason)
        self._tell(job, None, f"evaluation lost: {reason}", None)

    def _expire(self) -> None:
        """Fail the evaluations the driver gives up on, and free their workers if it can."""
        now = time.monotonic()
        limit = self.timeout + _TIMEOUT_GRACE
        overdue = [(future, job) for future, job in self.in_flight.items()
                   if now - job.submitted_at >= limit and not future.done()]
        if not overdue:
            return
        for future, _ in overdue:
            del self.in_flight[future]
            if not self.own_pool:
                # Another's executor: a queued evaluation is dropped, a
                # running one can only be abandoned to finish on its own.
                future.cancel()
        if self.own_pool:
            # The worker ignored its alarm and would hold its slot, and later
            # evaluations would queue behind it, for ever.
            self._kill_pool()
        for _, job in sorted(overdue, key=lambda item: item[1].trial.number):
            logger.warning("trial %d: no result %g s after its timeout; recorded as failed%s",
                           job.trial.number, _TIMEOUT_GRACE,
                           " and its worker killed" if self.own_pool else "")
            self._tell(job, None, _timed_out(self.timeout), None)
        if self.own_pool:
            self._resubmit_killed()

    def _resubmit_killed(self) -> None:
        """After treebo killed its pool: tell what had finished, submit the rest again."""
        for future, job in sorted(self.in_flight.items(), key=lambda item: item[1].trial.number):
            del self.in_flight[future]
            if future.done() and not future.cancelled() and future.exception() is None:
                self._tell(job, *future.result())
            elif not self.stop_now:
                # Killed by treebo, not lost by the executor: not a retry.
                self._submit(job)

    def _watch_cluster(self) -> None:
        """Stop the run when the Dask cluster has had no workers for too long."""
        now = time.monotonic()
        if _count_workers(self.client) > 0:
            self.no_workers_since = None
            return
        if self.no_workers_since is None:
            self.no_workers_since = now
        if now - self.no_workers_since >= DASK_NO_WORKERS_TIMEOUT:
            self.message = (f"stopped: the Dask cluster has no workers (none for "
                            f"{DASK_NO_WORKERS_TIMEOUT:g} s); the {len(self.in_flight)} "
                            "evaluations in flight are left pending")
            self.stop_now = True
            logger.warning("%s", self.message)

    def _abandon(self) -> None:
        """Stop what is still in flight (a stop, an interruption); those trials stay pending."""
        if not self.own_pool:
            for future in self.in_flight:
                future.cancel()
        elif any(not future.done() for future in self.in_flight):
            # Kill the abandoned evaluations instead of letting them run on;
            # the next call gets a fresh pool. (Not cancelled first: see
            # _discard_pool.)
            self._kill_pool()
