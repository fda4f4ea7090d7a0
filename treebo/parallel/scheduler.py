"""The one driver of running evaluations: keep them in flight, tell each result.

:func:`run_evaluations` takes its jobs from a :class:`JobSource` (``minimize``'s
optimizer, ``minimize_multifidelity``'s schedule of rungs) and starts a new one
as soon as an evaluation finishes (asynchronous, not in synchronous batches),
retries evaluations the executor lost, gives up on those that overran their
``timeout``, and stops when the source has no more jobs, the source asks to
stop (a callback), the executor refuses work or a Dask cluster has had no
workers for ``treebo.parallel.DASK_NO_WORKERS_TIMEOUT`` seconds.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .executors import (
    InlineExecutor,
    count_dask_workers,
    dask_client_of,
    discard_pool,
    process_pool,
    warm_up,
)
from .task import evaluate_task, timeout_text

if TYPE_CHECKING:
    from ..history import Trial

__all__ = ["Job", "JobSource", "Workers", "run_evaluations"]

logger = logging.getLogger("treebo")

#: Seconds past ``timeout`` that the driver waits for an evaluation's own
#: alarm to report it before giving up on it: enough for a worker's result to
#: come back, so that an objective which honours the alarm never gets its
#: pool killed.
_TIMEOUT_GRACE = 1.0


@dataclass
class Job:
    """One evaluation for :func:`run_evaluations`: the objective's argument and where it goes.

    Parameters
    ----------
    number : int
        Identifies the job in the run (a trial's number): results that come
        back together are handed to the source in this order.
    argument : object
        What the objective is called with (``func(argument)``); a copy is
        passed, so an objective that changes it in place changes no record.
    trial : Trial, optional
        The pending trial the result is recorded in, when there is one.
    """

    number: int
    argument: Any
    trial: Trial | None = None
    # The driver's bookkeeping, not parameters.
    submitted_at: float = field(default=0.0, init=False, repr=False)
    # Evaluations the executor lost: what max_retries bounds.
    attempts: int = field(default=0, init=False, repr=False)
    # Every submission, retries and resubmissions after a kill included.
    submissions: int = field(default=0, init=False, repr=False)

    @property
    def label(self) -> str:
        """How log lines name the job: ``"trial 3"``, or ``"job 3"`` without a trial."""
        return f"{'trial' if self.trial is not None else 'job'} {self.number}"


class JobSource(Protocol):
    # A protocol is never instantiated: the (*args, **kwargs) numpydoc reads
    # as its signature are no parameters of it.
    # numpydoc ignore=PR01
    """What :func:`run_evaluations` drives: where its jobs come from and where results go.

    ``minimize`` (:class:`~treebo.loop.OptimizerJobs`) and
    ``minimize_multifidelity`` (its schedule of rungs) are job sources; the
    driver itself knows nothing of either.
    """

    def next_jobs(self, n_jobs: int) -> list[Job]:
        """Up to ``n_jobs`` new evaluations to start.

        Parameters
        ----------
        n_jobs : int
            Workers free now.

        Returns
        -------
        list of Job
            Fewer (none) when nothing more can start until an evaluation in
            flight finishes; the run ends when nothing is in flight and the
            source gives nothing.
        """

    def finish(
        self, job: Job, value: Any, error: str | None, eval_time: float | None
    ) -> str | None:
        """Record the result (or the failure) of ``job``'s evaluation.

        Parameters
        ----------
        job : Job
            A job this source gave.
        value : object
            What the objective returned; None after a failure.
        error : str or None
            The failure's text.
        eval_time : float or None
            Seconds the evaluation took, when known.

        Returns
        -------
        str or None
            A reason to stop the run now (a callback's, a failure watch's):
            the evaluations in flight are then abandoned and stay pending.
        """

    def interrupted(self, jobs: list[Job]) -> None:
        """Record that the evaluations of ``jobs`` were stopped by Ctrl-C.

        Parameters
        ----------
        jobs : list of Job
            The jobs given and not finished.
        """


@dataclass(frozen=True)
class Workers:
    """Where and how evaluations run, from :func:`~treebo.parallel.resolve_executor`.

    Parameters
    ----------
    executor : concurrent.futures.Executor
    n_workers : int
        Evaluations kept in flight at once.
    owned : bool
        Whether treebo made the executor (and may kill and replace its pool).
    timeout : float or None
        Seconds an evaluation may run.
    max_retries : int, default 1
        Resubmissions of an evaluation the executor lost.
    """

    executor: cf.Executor
    n_workers: int
    owned: bool
    timeout: float | None
    max_retries: int = 1


def run_evaluations(source: JobSource, func: Callable, workers: Workers) -> str | None:
    """Evaluate the jobs of ``source`` until it has no more or the run stops.

    The one place where treebo waits on running evaluations: it keeps
    ``workers.n_workers`` of them in flight, retries those the executor lost,
    gives up on those that overran their timeout, watches a Dask cluster's
    workers, and on Ctrl-C leaves what was in flight pending.

    Parameters
    ----------
    source : JobSource
        Gives the jobs and records their results.
    func : callable
        The objective, called as ``func(job.argument)`` where the executor
        puts it (through :func:`~treebo.parallel.task.evaluate_task`).
    workers : Workers
        The executor and how to use it. The worker's alarm stops an
        evaluation ``timeout`` seconds after its start; the driver gives up
        on it ``_TIMEOUT_GRACE`` seconds after that, counted from submission
        (in treebo's own pool nothing waits for a worker, so the two agree).

    Returns
    -------
    str or None
        Why the driver stopped the run early (a stop asked by the source, an
        executor that refused work, a Dask cluster without workers); None
        when the source ran out of jobs.

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C in the driver: the trials in flight stay pending.
    """
    return _EvaluationLoop(source, func, workers).run()


_REFUSED = "stopped: the executor refused new evaluations"


class _EvaluationLoop:
    """The state of one :func:`run_evaluations` call (see there for the arguments)."""

    def __init__(self, source: JobSource, func: Callable, workers: Workers):
        self.source, self.func = source, func
        # None after treebo killed its own pool, until the next submission starts one.
        self.executor: cf.Executor | None = workers.executor
        self.n_workers, self.timeout = workers.n_workers, workers.timeout
        self.max_retries = workers.max_retries
        # treebo's pool: its workers may be killed, and it is replaced when broken.
        self.own_pool = workers.owned and not isinstance(workers.executor, InlineExecutor)
        self.client = dask_client_of(workers.executor)
        self.driver_pid = os.getpid()
        self.unfinished: dict[int, Job] = {}  # given by the source, not finished
        self.in_flight: dict[cf.Future, Job] = {}
        self.message: str | None = None
        self.stop_now = False  # the source asked to stop: abandon what is in flight
        self.no_workers_since: float | None = None
        self.no_workers_timeout = _no_workers_timeout()

    def run(self) -> str | None:
        try:
            while True:
                self._fill()
                # After the executor broke, what is in flight is still waited
                # for; after a stop it is not.
                if self.stop_now or not self.in_flight:
                    break
                done, _ = cf.wait(
                    list(self.in_flight), timeout=self._wait_time(), return_when=cf.FIRST_COMPLETED
                )
                for future in sorted(done, key=lambda f: self.in_flight[f].number):
                    self._settle(future, self.in_flight.pop(future))
                if self.timeout is not None:
                    self._expire(self.timeout)
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
        # A job whose trial was told just before Ctrl-C is finished, whatever the driver saw.
        pending = [
            job
            for job in self.unfinished.values()
            if job.trial is None or job.trial.status == "pending"
        ]
        if pending:
            try:
                self.source.interrupted(pending)
            except Exception as error:  # noqa: BLE001 - the interrupt is what the caller must see
                logger.warning(
                    "could not record the interrupted jobs %s: %s",
                    [job.number for job in pending],
                    error,
                )

    def _fill(self) -> None:
        """Keep ``n_workers`` evaluations in flight while the source has jobs."""
        while self.message is None and len(self.in_flight) < self.n_workers:
            free = self.n_workers - len(self.in_flight)
            jobs = self.source.next_jobs(free)
            for job in jobs:
                self.unfinished[job.number] = job
                self._submit(job)
            if len(jobs) < free:
                return

    def _wait_time(self) -> float | None:
        """Seconds until the next evaluation is overdue or the cluster is due a check."""
        waits = []
        if self.timeout is not None:
            first = min(job.submitted_at for job in self.in_flight.values())
            waits.append(max(first + self.timeout + _TIMEOUT_GRACE - time.monotonic(), 0.0))
        if self.client is not None:
            # Count the workers ten times per bound: the stop is at most 10% late.
            waits.append(self.no_workers_timeout / 10)
        return min(waits, default=None)

    def _submit(self, job: Job) -> bool:
        """Put ``job`` in flight; a refusal fails its trial and ends the run."""
        job.submissions += 1
        token = (job.number, job.submissions)
        # A copy: an objective that changes its argument in place must not
        # change the recorded point (worker processes get a copy anyway).
        args = (
            evaluate_task,
            self.func,
            copy.deepcopy(job.argument),
            self.timeout,
            self.driver_pid,
            token,
        )
        try:
            future = self._executor_submit(args)
        except Exception as error:  # noqa: BLE001 - an executor that refuses work ends the run
            text = f"could not submit the evaluation: {type(error).__name__}: {error}"
            logger.warning("%s: %s", job.label, text)
            # Through the source, so callbacks and the progress bar see it too.
            self._finish(job, None, text, None)
            self.message = self.message or _REFUSED
            return False
        job.submitted_at = time.monotonic()
        self.in_flight[future] = job
        return True

    def _executor_submit(self, args: tuple) -> cf.Future:
        try:
            return self._live_executor().submit(*args)
        except (RuntimeError, cf.BrokenExecutor):
            if not self.own_pool:
                raise
            # A worker died and broke the pool: start a new one.
            self._kill_pool()
            return self._live_executor().submit(*args)

    def _live_executor(self) -> cf.Executor:
        """The executor; a new pool of treebo's own if it killed the last one."""
        if self.executor is None:
            self.executor = self._new_pool()
        return self.executor

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
            discard_pool(self.executor)
            self.executor = None

    def _finish(self, job: Job, value: Any, error: str | None, eval_time: float | None) -> None:
        stop = self.source.finish(job, value, error, eval_time)
        self.unfinished.pop(job.number, None)
        if stop is not None and not self.stop_now:
            self.message, self.stop_now = stop, True

    def _settle(self, future: cf.Future, job: Job) -> None:
        """Tell the result of a finished future, or retry its lost evaluation."""
        try:
            value, error, eval_time = future.result()
        except BaseException as lost:  # noqa: BLE001 - the executor lost it
            if isinstance(lost, KeyboardInterrupt):
                raise
            self._lost(job, f"{type(lost).__name__}: {lost}".rstrip(": "))
            return
        self._finish(job, value, error, eval_time)

    def _lost(self, job: Job, reason: str) -> None:
        job.attempts += 1
        if job.attempts <= self.max_retries and not self.stop_now:
            logger.warning(
                "%s: evaluation lost (%s); submitting it again (retry %d of %d)",
                job.label,
                reason,
                job.attempts,
                self.max_retries,
            )
            self._submit(job)
            return
        logger.warning("%s: evaluation lost (%s); recorded as failed", job.label, reason)
        self._finish(job, None, f"evaluation lost: {reason}", None)

    def _expire(self, timeout: float) -> None:
        """Fail the evaluations the driver gives up on, and free their workers if it can."""
        now = time.monotonic()
        limit = timeout + _TIMEOUT_GRACE
        overdue = [
            (future, job)
            for future, job in self.in_flight.items()
            if now - job.submitted_at >= limit and not future.done()
        ]
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
        for _, job in sorted(overdue, key=lambda item: item[1].number):
            logger.warning(
                "%s: no result %g s after its timeout; recorded as failed%s",
                job.label,
                _TIMEOUT_GRACE,
                " and its worker killed" if self.own_pool else "",
            )
            self._finish(job, None, timeout_text(timeout), None)
        if self.own_pool:
            self._resubmit_killed()

    def _resubmit_killed(self) -> None:
        """After treebo killed its pool: tell what had finished, submit the rest again."""
        for future, job in sorted(self.in_flight.items(), key=lambda item: item[1].number):
            del self.in_flight[future]
            if future.done() and not future.cancelled() and future.exception() is None:
                self._finish(job, *future.result())
            elif not self.stop_now:
                # Killed by treebo, not lost by the executor: not a retry.
                self._submit(job)

    def _watch_cluster(self) -> None:
        """Stop the run when the Dask cluster has had no workers for too long."""
        now = time.monotonic()
        if count_dask_workers(self.client) > 0:
            self.no_workers_since = None
            return
        if self.no_workers_since is None:
            self.no_workers_since = now
        if now - self.no_workers_since >= self.no_workers_timeout:
            self.message = (
                f"stopped: the Dask cluster has no workers (none for "
                f"{self.no_workers_timeout:g} s); the {len(self.in_flight)} "
                "evaluations in flight are left pending"
            )
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
            # discard_pool.)
            self._kill_pool()


def _no_workers_timeout() -> float:
    # Read at each use from the package, where the setting is documented and
    # where users change it (treebo.parallel.DASK_NO_WORKERS_TIMEOUT = ...).
    from .. import parallel

    return parallel.DASK_NO_WORKERS_TIMEOUT
