"""The scheduling loop of :func:`minimize`: keep evaluations in flight, tell each result.

:func:`run_evaluations` asks the optimizer for a new point as soon as an
evaluation finishes (asynchronous, not in synchronous batches), retries
evaluations the executor lost, gives up on those that overran their
``timeout``, and stops when the budget is spent, a callback says so, the
space runs out, the executor refuses work or a Dask cluster has had no
workers for ``treebo.parallel.DASK_NO_WORKERS_TIMEOUT`` seconds.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..space import SpaceExhausted
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

__all__ = ["TrialProtocol", "run_evaluations"]

logger = logging.getLogger("treebo")

#: Seconds past ``timeout`` that the driver waits for an evaluation's own
#: alarm to report it before giving up on it: enough for a worker's result to
#: come back, so that an objective which honours the alarm never gets its
#: pool killed.
_TIMEOUT_GRACE = 1.0


class TrialProtocol(Protocol):
    # A protocol is never instantiated: the (*args, **kwargs) numpydoc reads
    # as its signature are no parameters of it.
    # numpydoc ignore=PR01
    """The optimizer as :func:`run_evaluations` drives it: its trial protocol.

    :class:`~treebo.Optimizer` has these methods, and so has
    :class:`~treebo.failures.FailureWatch`, which forwards them.
    """

    def add_pending(self, x: Any) -> Trial:
        """Record a point about to be evaluated (an ``x0`` point) as a pending trial.

        Parameters
        ----------
        x : list or dict
            A feasible point of the space.

        Returns
        -------
        Trial
        """

    def ask_trials(self, n_points: int, strategy: str) -> list[Trial]:
        """Propose up to ``n_points`` pending trials.

        Parameters
        ----------
        n_points : int
            Trials to propose.
        strategy : {"cl_min", "cl_mean", "cl_max"}
            The constant-liar strategy for the pending trials.

        Returns
        -------
        list of Trial
        """

    def tell_trial(
        self, trial: Trial, y: Any, *, error: str | None = None, eval_time: float | None = None
    ) -> None:
        """Record the value (or the failure) of a pending trial.

        Parameters
        ----------
        trial : Trial
            A pending trial.
        y : float or None
            Its objective value; ``None``, NaN or infinity mark a failure.
        error : str, optional
            Error text; marks the evaluation as failed.
        eval_time : float, optional
            Seconds the evaluation took.
        """

    def mark_interrupted(self, trials: list[Trial]) -> None:
        """Record that the evaluations of ``trials`` were stopped by Ctrl-C.

        Parameters
        ----------
        trials : list of Trial
            Pending trials whose evaluations were stopped.
        """


@dataclass
class _Job:
    trial: Trial
    submitted_at: float = 0.0
    attempts: int = 0  # evaluations the executor lost: what max_retries bounds
    submissions: int = 0  # every submission, retries and resubmissions after a kill included


def run_evaluations(
    optimizer: TrialProtocol,
    func: Callable,
    budget: int,
    *,
    x0: list,
    executor: cf.Executor,
    n_workers: int,
    owned: bool,
    timeout: float | None,
    strategy: str,
    max_retries: int,
    on_tell: Callable[[Trial], str | None],
) -> str | None:
    """Ask, evaluate and tell until ``budget`` evaluations are made or the run stops.

    Parameters
    ----------
    optimizer : TrialProtocol
        An :class:`~treebo.Optimizer`, or a wrapper that forwards its trial
        protocol.
    func : callable
    budget : int
        Evaluations to make (pending trials offered again by a resumed
        optimizer and ``x0`` points included).
    x0 : list of points
        Evaluated first.
    executor, n_workers, owned
        From :func:`~treebo.parallel.resolve_executor`.
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
    loop = _EvaluationLoop(
        optimizer,
        func,
        budget,
        x0,
        executor,
        n_workers,
        owned,
        timeout,
        strategy,
        max_retries,
        on_tell,
    )
    return loop.run()


_REFUSED = "stopped: the executor refused new evaluations"


class _EvaluationLoop:
    """The state of one :func:`run_evaluations` call (see there for the arguments)."""

    def __init__(
        self,
        optimizer: TrialProtocol,
        func: Callable,
        budget: int,
        x0: list,
        executor: cf.Executor,
        n_workers: int,
        owned: bool,
        timeout: float | None,
        strategy: str,
        max_retries: int,
        on_tell: Callable[[Trial], str | None],
    ):
        self.optimizer, self.func, self.budget = optimizer, func, budget
        # None after treebo killed its own pool, until the next submission starts one.
        self.executor: cf.Executor | None = executor
        self.n_workers, self.timeout = n_workers, timeout
        self.strategy, self.max_retries, self.on_tell = strategy, max_retries, on_tell
        # treebo's pool: its workers may be killed, and it is replaced when broken.
        self.own_pool = owned and not isinstance(executor, InlineExecutor)
        self.client = dask_client_of(executor)
        self.driver_pid = os.getpid()
        self.queue = deque(x0)
        self.asked: list[Trial] = []  # every trial this call asked for or added
        self.in_flight: dict[cf.Future, _Job] = {}
        self.submitted = 0
        self.message: str | None = None
        self.stop_now = False  # a callback asked to stop: abandon what is in flight
        self.no_workers_since: float | None = None
        self.no_workers_timeout = _no_workers_timeout()

    def run(self) -> str | None:
        try:
            while True:
                self._fill()
                # After a space ran out or the executor broke, what is in
                # flight is still waited for; after a stop it is not.
                if self.stop_now or not self.in_flight:
                    break
                done, _ = cf.wait(
                    list(self.in_flight), timeout=self._wait_time(), return_when=cf.FIRST_COMPLETED
                )
                for future in sorted(done, key=lambda f: self.in_flight[f].trial.number):
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
        pending = [trial for trial in self.asked if trial.status == "pending"]
        if pending:
            try:
                self.optimizer.mark_interrupted(pending)
            except Exception as error:  # noqa: BLE001 - the interrupt is what the caller must see
                logger.warning(
                    "could not record the interrupted trials %s: %s",
                    [t.number for t in pending],
                    error,
                )

    def _fill(self) -> None:
        """Keep ``n_workers`` evaluations in flight while the budget lasts."""
        while (
            self.message is None
            and len(self.in_flight) < self.n_workers
            and self.submitted < self.budget
        ):
            free = min(self.n_workers - len(self.in_flight), self.budget - self.submitted)
            trials: list[Trial] = []
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
            waits.append(self.no_workers_timeout / 10)
        return min(waits, default=None)

    def _submit(self, job: _Job) -> bool:
        """Put ``job`` in flight; a refusal fails its trial and ends the run."""
        job.submissions += 1
        token = (job.trial.number, job.submissions)
        # A copy: an objective that changes its argument in place must not
        # change the recorded point (worker processes get a copy anyway).
        args = (
            evaluate_task,
            self.func,
            copy.deepcopy(job.trial.x),
            self.timeout,
            self.driver_pid,
            token,
        )
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
            logger.warning(
                "trial %d: evaluation lost (%s); submitting it again (retry %d of %d)",
                job.trial.number,
                reason,
                job.attempts,
                self.max_retries,
            )
            self._submit(job)
            return
        logger.warning(
            "trial %d: evaluation lost (%s); recorded as failed", job.trial.number, reason
        )
        self._tell(job, None, f"evaluation lost: {reason}", None)

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
        for _, job in sorted(overdue, key=lambda item: item[1].trial.number):
            logger.warning(
                "trial %d: no result %g s after its timeout; recorded as failed%s",
                job.trial.number,
                _TIMEOUT_GRACE,
                " and its worker killed" if self.own_pool else "",
            )
            self._tell(job, None, timeout_text(timeout), None)
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
