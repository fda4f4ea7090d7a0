"""The ``minimize`` loop: evaluate, tell, call back, until the budget is spent.

:func:`minimize` builds an :class:`~treebo.optimizer.Optimizer` from its
settings, tells the given first points, and hands its proposals to
:func:`treebo.parallel.run_evaluations` as jobs (:class:`OptimizerJobs`, over
the optimizer's trial protocol ``ask_trials``, ``add_pending``,
``tell_trial``), which evaluates them sequentially or in any
``concurrent.futures.Executor``. Callbacks and the progress bar see the result
after every evaluation.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ._checks import check_int
from ._progress import ProgressBar
from .failures import FailureWatch, GuardedObjective, check_catch
from .history import Trial
from .optimizer import Optimizer
from .parallel import resolve_executor, run_evaluations
from .parallel.scheduler import Job, Workers
from .result import OptimizeResult
from .settings import SETTINGS
from .space import SpaceExhausted
from .storage import InMemoryStorage
from .targets import check_strategy

__all__ = ["minimize", "OptimizerJobs", "interrupted_message", "study_location"]

#: The keyword arguments minimize passes on to the Optimizer.
_OPTIMIZER_SETTINGS = frozenset(setting.name for setting in SETTINGS)

#: The fewest first evaluations failing the same way that stop a run (unless the run is
#: shorter): a run with fewer initial points than this is not stopped by one or two failures.
MIN_SYSTEMATIC = 3

#: minimize's own keyword arguments (the loop's).
_LOOP_ARGUMENTS = (
    "x0",
    "y0",
    "callback",
    "verbose",
    "n_jobs",
    "executor",
    "timeout",
    "strategy",
    "max_retries",
    "progress_bar",
    "catch",
)


def minimize(
    func: Callable[[Any], float],
    dimensions: Any,
    n_calls: int = 100,
    *,
    x0: Sequence[Any] | None = None,
    y0: Sequence[float] | None = None,
    callback: Callable | Iterable[Callable] | None = None,
    verbose: bool = False,
    n_jobs: int | None = None,
    executor: Any = None,
    timeout: float | None = None,
    strategy: str = "cl_min",
    max_retries: int = 1,
    progress_bar: bool = False,
    catch: type[Exception] | tuple[type[Exception], ...] | None = None,
    **settings: Any,
) -> OptimizeResult:
    """Minimize a black-box function with a tree-ensemble surrogate.

    Parameters
    ----------
    func : callable
        ``func(x) -> float`` with ``x`` a list (or a dict, when the space was
        given as a dict) of values. An exception (``SystemExit`` included,
        and ``KeyboardInterrupt`` raised in a worker), ``None``, NaN or
        infinity gives a failed evaluation, never retried; the run goes on,
        except as ``catch`` says. The first failed evaluation of a run is
        reported at once with an
        :class:`~treebo.failures.ObjectiveFailureWarning`. Ctrl-C in the
        calling process stops the run, leaves the evaluations in flight
        pending (a resume offers them again) and raises ``KeyboardInterrupt``
        with a one-line message that says how to resume. To run in worker
        processes (``n_jobs > 1``, ``timeout``, Dask) it must be picklable
        by cloudpickle: functions, lambdas and closures all are.
    dimensions : Space, list or dict of dimensions
        The search space.
    n_calls : int, default 100
        Number of evaluations of ``func``, the initial design included. With
        a ``storage`` that already holds a study, the evaluations recorded
        there count: a resumed run makes only the missing ones.
    x0 : list of points, optional
        Points to evaluate (or, with ``y0``, to tell) before anything else.
        They count toward ``n_initial_points``; evaluated ones count toward
        ``n_calls``. When resuming, points already in the storage are skipped.
    y0 : list of float, optional
        Known values of ``x0``.
    callback : callable or list of callables, optional
        Called with the :class:`OptimizeResult` after every evaluation; a
        return value of ``True`` stops the run. See :mod:`treebo.callbacks`
        for early stopping, a deadline and a threshold. Evaluations still
        running when a callback stops a parallel run are abandoned (they stay
        pending in the storage and are offered again on resume).
    verbose : bool, default False
        Print one line per evaluation.
    n_jobs : int, optional
        Evaluations kept in flight at once. Without ``executor``, ``n_jobs >
        1`` runs them in that many worker processes, but no more than the
        evaluations left to make (a loky pool, kept for the next calls; see
        :func:`treebo.parallel.process_pool`); ``-1`` means one per CPU. With ``executor``
        it defaults to the executor's number of workers. A new point is
        proposed as soon as one evaluation finishes (asynchronous), with the
        points still being evaluated as constant lies.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where to run the evaluations. A ``dask.distributed.Client`` is used
        through ``client.get_executor(pure=False)`` (install ``treebo[dask]``).
        A Dask cluster left with no workers for
        ``treebo.parallel.DASK_NO_WORKERS_TIMEOUT`` seconds (60) stops the
        run; the evaluations in flight stay pending.
    timeout : float, optional
        Seconds an evaluation may run, counted from its start; a longer one
        is recorded as failed (``"timed out after ... s"``) and the run goes
        on. It needs a worker: with ``n_jobs`` 1 and no executor the
        evaluations run in one worker process. In a worker process the
        objective is interrupted (``SIGALRM``); one that ignores the alarm is
        given up a second later and, in treebo's own pool, its worker is
        killed and the pool replaced. In a thread (a thread pool, a Dask
        worker) it cannot be stopped: the trial is failed and the evaluation
        abandoned.
    strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
        The constant lie given to pending points (see :meth:`Optimizer.ask`).
    max_retries : int, default 1
        How often an evaluation lost to the executor (a worker process
        killed, a broken pool, Dask's ``KilledWorker``) is submitted again
        before its trial is recorded as failed. Exceptions raised by ``func``
        are never retried: they are failed evaluations.
    progress_bar : bool, default False
        Show a :class:`~treebo._progress.ProgressBar` on standard error.
    catch : exception class or tuple of them, optional
        The exceptions of ``func`` that count as failed trials. By default
        (None) every ``Exception`` does, so that an objective failing at some
        points does not cost the run, except that a run whose first
        evaluations (as many as ``n_initial_points``, at least
        ``MIN_SYSTEMATIC`` = 3, at most the evaluations left to make) all
        raise the same exception type, or all return None, stops and raises
        :class:`~treebo.failures.ObjectiveError` chained to the first
        exception: that is a bug in the objective, not a bad region of the
        space. When ``catch`` is given, those exceptions
        are always failed trials and any other one stops the run at once and
        is raised; its trial is recorded as failed first.
    **settings
        Any parameter of :class:`~treebo.optimizer.Optimizer` (``surrogate``,
        ``random_state``, ``storage``, ``n_initial_points``, ...), with the
        same meaning and default.

    Returns
    -------
    OptimizeResult
        ``x``, ``fun``, ``x_iters``, ``func_vals``, ``statuses``, ``errors``,
        ``fit_time``, ``acq_time``, ``space``, ``direction``, ``message``.

    Raises
    ------
    treebo.failures.ObjectiveError
        When the first evaluations all fail the same way (see ``catch``).
    KeyboardInterrupt
        On Ctrl-C; every evaluation told before is kept in the storage.
    """
    n_calls = check_int(n_calls, "n_calls")
    if not callable(func):
        raise ValueError(f"func must be callable, got {func!r}")
    callbacks = _as_callbacks(callback)
    check_strategy(strategy)
    catch = check_catch(catch)
    max_retries = check_int(max_retries, "max_retries", 0)
    # Validate the parallel arguments before any storage is opened.
    resolve_executor(n_jobs, executor, timeout, dry_run=True)
    unknown = sorted(set(settings) - _OPTIMIZER_SETTINGS)
    if unknown:
        raise TypeError(
            f"minimize() got unknown argument(s) {unknown}; it takes func, "
            f"dimensions, n_calls, {', '.join(sorted(_LOOP_ARGUMENTS))} and the "
            f"Optimizer's settings {sorted(_OPTIMIZER_SETTINGS)}"
        )
    optimizer = Optimizer(dimensions, **settings)
    try:
        x0 = _tell_given(optimizer, x0, y0)
        budget = max(n_calls - optimizer.history.n_evaluated(), 0)
        workers = Workers(
            *resolve_executor(n_jobs, executor, timeout, max_workers=budget),
            timeout=timeout,
            max_retries=max_retries,
        )
        n_abort = max(1, min(max(optimizer.n_initial_points, MIN_SYSTEMATIC), budget))
        watch = FailureWatch(optimizer, n_abort, catch, study_location(optimizer))
        progress = _Progress(watch, n_calls, callbacks, verbose, progress_bar)
        jobs = OptimizerJobs(watch, budget, x0, strategy, progress.after)
        try:
            message = run_evaluations(jobs, GuardedObjective(func, catch), workers)
        finally:
            progress.close()
        watch.raise_if_stopped()
        result = optimizer.get_result()
        note = result.message  # e.g. that no feasible point was found
        result.message = message or jobs.message or f"reached n_calls={n_calls}"
        if note:
            result.message += f"; {note}"
        if verbose:
            print(f"done: {result.message}; best f(x) = {result.fun:.6g} at x = {result.x}")
        return result
    except KeyboardInterrupt:
        # A short traceback that ends at the user's call, not inside a surrogate's fit.
        stored = settings.get("storage") is not None
        raise KeyboardInterrupt(interrupted_message(optimizer, stored)) from None
    finally:
        optimizer.close()


class OptimizerJobs:
    """``minimize``'s jobs for the driver: the ``x0`` points, then the optimizer's proposals.

    A :class:`~treebo.parallel.JobSource`. The objective is called with each
    trial's point.

    Parameters
    ----------
    optimizer : FailureWatch
        The optimizer's trial protocol (``add_pending``, ``ask_trials``,
        ``tell_trial``, ``mark_interrupted``), through the failure watch.
    budget : int
        Evaluations to start in all.
    x0 : list of points
        Evaluated first.
    strategy : str
        The constant-liar strategy of the proposals.
    after : callable
        Called with each told trial; a string it returns stops the run.

    Attributes
    ----------
    message : str or None
        Why no more jobs come before the budget is spent (the space ran out).
    """

    def __init__(
        self,
        optimizer: FailureWatch,
        budget: int,
        x0: list,
        strategy: str,
        after: Callable[[Trial], str | None],
    ):
        self.optimizer, self.left, self.strategy, self.after = optimizer, budget, strategy, after
        self.queue = deque(x0)
        self.message: str | None = None

    def next_jobs(self, n_jobs: int) -> list[Job]:
        n_jobs = min(n_jobs, self.left) if self.message is None else 0
        trials: list[Trial] = []
        while self.queue and len(trials) < n_jobs:
            trials.append(self.optimizer.add_pending(self.queue.popleft()))
        if len(trials) < n_jobs:
            try:
                trials += self.optimizer.ask_trials(n_jobs - len(trials), self.strategy)
            except SpaceExhausted as exhausted:
                self.message = str(exhausted)
        self.left -= len(trials)
        return [Job(trial.number, trial.x, trial) for trial in trials]

    def finish(
        self, job: Job, value: Any, error: str | None, eval_time: float | None
    ) -> str | None:
        assert job.trial is not None  # every job of this source has its trial
        self.optimizer.tell_trial(job.trial, value, error=error, eval_time=eval_time)
        return self.after(job.trial)

    def interrupted(self, jobs: list[Job]) -> None:
        self.optimizer.mark_interrupted([job.trial for job in jobs if job.trial is not None])


def interrupted_message(optimizer: Optimizer, stored: bool) -> str:
    """The one line a run stopped by Ctrl-C ends with: what was kept, and how to resume.

    Parameters
    ----------
    optimizer : Optimizer
        The run's optimizer.
    stored : bool
        Whether the run was given a storage (which keeps its evaluations).

    Returns
    -------
    str
    """
    n = optimizer.history.n_evaluated()
    if stored:
        return (
            f"interrupted after {n} evaluations, all recorded in {optimizer.storage.name}; "
            "the same call resumes the study"
        )
    return (
        f"interrupted after {n} evaluations, which are lost: pass storage='study.db' to "
        "record a run so that it can be resumed"
    )


def study_location(optimizer: Optimizer) -> str:
    """How messages name the optimizer's study: ``" in study.db"``, or nothing in memory.

    Parameters
    ----------
    optimizer : Optimizer

    Returns
    -------
    str
    """
    in_memory = isinstance(optimizer.storage, InMemoryStorage)
    return "" if in_memory else f" in {optimizer.storage.name}"


def _tell_given(optimizer: Optimizer, x0: Any, y0: Any) -> list:
    """Tell the ``(x0, y0)`` pairs; the ``x0`` points left to evaluate (none with ``y0``)."""
    x0 = _as_list(x0, "x0", "a list of points") if x0 is not None else []
    if y0 is not None:
        y0 = _as_list(y0, "y0", "a list of numbers, one per point of x0")
        if len(y0) != len(x0):
            raise ValueError(f"y0 has {len(y0)} values but x0 has {len(x0)} points")
        for x, y in zip(x0, y0):
            if optimizer.history.find(x) is None:  # not told already in a resumed study
                optimizer.tell(x, y)
        return []
    for x in x0:
        optimizer.space.encode([x])  # fail early on an infeasible x0
    return [x for x in x0 if optimizer.history.find(x) is None]


class _Progress:
    """What ``minimize`` does after each told trial: the progress bar, verbose lines, callbacks."""

    def __init__(
        self,
        watch: FailureWatch,
        n_calls: int,
        callbacks: list[Callable],
        verbose: bool,
        progress_bar: bool,
    ):
        self.watch, self.optimizer = watch, watch.optimizer
        self.n_calls, self.callbacks, self.verbose = n_calls, callbacks, verbose
        self.n_before = self.optimizer.history.n_evaluated()
        self.told = 0
        for cb in callbacks:
            if hasattr(cb, "on_start"):
                cb.on_start()
        self.bar = ProgressBar(n_calls, "treebo") if progress_bar else None
        if self.bar is not None and self.n_before:
            self.bar.update(self.n_before)

    def after(self, trial: Trial) -> str | None:
        self.told += 1
        stop = self.watch.check(trial)
        result = self.optimizer.get_result()
        if self.verbose:
            _report(self.n_before + self.told - 1, self.n_calls, trial, result)
        if self.bar is not None:
            self.bar.update(best=result.fun)
        if stop is not None:
            return stop
        for cb in self.callbacks:
            if cb(result):
                reason = getattr(cb, "message", None)
                text = f"stopped by a callback after {self.told} evaluations"
                return f"{text}: {reason}" if reason else text
        return None

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _as_list(values: Any, argname: str, allowed: str) -> list:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValueError(f"{argname} must be {allowed}, got {values!r}")
    return list(values)


def _as_callbacks(callback: Any) -> list[Callable]:
    if callback is None:
        return []
    callbacks = (
        [callback]
        if callable(callback)
        else _as_list(callback, "callback", "callable or a list of callables")
    )
    for cb in callbacks:
        if not callable(cb):
            raise ValueError(f"callback must be callable or a list of callables, got {cb!r}")
    return callbacks


def _report(call: int, n_calls: int, trial: Trial, result: OptimizeResult) -> None:
    shown = f"{trial.value:.6g}" if trial.status == "complete" else f"failed ({trial.error})"
    timing = (
        f"  fit {trial.fit_time:.2f}s acq {trial.acq_time:.2f}s"
        if trial.origin == "model"
        else f"  [{trial.origin}]"
    )
    print(
        f"call {call + 1:>4}/{n_calls}  f(x) = {shown:<14} best = {result.fun:.6g}{timing}",
        file=sys.stdout,
        flush=True,
    )
