"""``minimize_multifidelity``: Hyperband brackets whose new configurations come from a model.

The run is an :class:`~treebo.optimizer.Optimizer` over the *augmented*
space, the configuration's dimensions plus a log-uniform ``budget``
dimension, used only as the record of the study: every evaluation is a
trial at ``(configuration, budget)``, added with ``add_pending`` and told
with ``tell_trial``, so a stored study keeps every evaluation the moment it
is told and a resumed run rebuilds its schedule from the trials
(:class:`~treebo.multifidelity.schedule.RungSchedule`). The schedule decides
the next job (a promotion, or a new configuration at a bracket's lowest
budget); a new configuration comes from
:class:`~treebo.multifidelity.proposal.ConfigurationModel`, or at random.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._checks import check_choice, check_int, check_real
from ..failures import FailureWatch, GuardedObjective, check_catch
from ..history import OptimizeResult, Trial
from ..loop import MIN_SYSTEMATIC, interrupted_message
from ..optimizer import Optimizer
from ..parallel import resolve_executor, run_evaluations
from ..parallel.scheduler import Job as DriverJob
from ..parallel.scheduler import Workers
from ..space import Integer, Real, Space
from ..storage import InMemoryStorage
from ..surrogates import Surrogate, as_surrogate
from ..targets import training_values
from .brackets import hyperband_brackets
from .checkpoints import Checkpoint, check_checkpoint_dir, checkpoint_path
from .proposal import MODEL_BUDGETS, ConfigurationModel, check_random_fraction
from .reports import Outcome, ReportingObjective, WithBudget, is_report
from .schedule import Job, RungSchedule

__all__ = ["minimize_multifidelity", "BUDGET_NAME"]

#: The name of the budget dimension in the stored (augmented) space; ``"budget_"``
#: when the configuration space already has a dimension called ``"budget"``.
BUDGET_NAME = "budget"

#: How rungs promote (``minimize_multifidelity(promotion=...)``).
PROMOTIONS = ("synchronous", "asynchronous")

#: Draws of a random configuration before a discrete space counts as exhausted.
_RANDOM_TRIES = 100


def minimize_multifidelity(
    func: Callable[[Any, Any], float],
    space: Any,
    min_budget: float,
    max_budget: float,
    total_budget: float,
    eta: float = 3,
    *,
    surrogate: str | Surrogate = "bwo",
    n_jobs: int | None = None,
    executor: Any = None,
    storage: Any = None,
    random_state: Any = None,
    model_budget: str = "max",
    random_fraction: float = 0.2,
    surrogate_params: dict | None = None,
    catch: type[Exception] | tuple | None = None,
    callback: Callable | None = None,
    verbose: bool = False,
    intermediate: bool = False,
    direction: str = "minimize",
    checkpoint_dir: str | os.PathLike | None = None,
    promotion: str = "synchronous",
    timeout: float | None = None,
    max_retries: int = 1,
) -> OptimizeResult:
    """Minimize ``func(x, budget)`` spending most of the budget on promising configurations.

    Hyperband's brackets (:func:`~treebo.multifidelity.hyperband_brackets`)
    decide how many configurations start at which budget; successive halving
    promotes the best ``1 / eta`` of a rung to the next budget; new
    configurations are proposed by one surrogate fitted on every evaluation
    with the budget as an input column, scored at ``max_budget``.

    Parameters
    ----------
    func : callable
        ``func(x, budget) -> float``, with ``x`` a point of ``space`` (a list,
        or a dict for a space given as a dict) and ``budget`` one of the rung
        budgets: the number of epochs, boosting rounds, the fraction of the
        data... Lower is better. An exception, ``None``, NaN or infinity is a
        failed evaluation: recorded, never promoted, and the run goes on
        (except as ``catch`` says, and as for :func:`~treebo.minimize` the run
        stops when its first 3 evaluations all raise the same exception type).
        It must be picklable by cloudpickle to run in worker processes.
    space : Space, list or dict of dimensions
        The configurations (without the budget).
    min_budget, max_budget : int or float
        ``0 < min_budget <= max_budget``. Two integers give integer budgets
        (rounded rung budgets); otherwise budgets are floats.
    total_budget : float
        The most the run spends, ``> 0``, in units of ``max_budget``: the sum
        of the budgets of all evaluations never exceeds ``total_budget *
        max_budget``. The run stops before the first evaluation that would
        exceed it.
    eta : float, default 3
        ``> 1``: a rung keeps the best ``1 / eta`` of its configurations, and
        each rung's budget is ``eta`` times the one below.
    surrogate : str or Surrogate, default "bwo"
        The model over (configuration, budget), as for :class:`~treebo.Optimizer`.
    n_jobs : int, optional
        Evaluations in flight at once: 1 without an ``executor`` (None), else
        the executor's number of workers. ``n_jobs > 1`` runs them in worker
        processes (or the executor); how they are promoted is ``promotion``.
        ``-1`` means one per CPU.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where to run the evaluations (see :func:`~treebo.minimize`).
    storage : str, os.PathLike or Storage, optional
        Records every evaluation as a trial of the configuration space plus a
        ``budget`` dimension. If it already holds such a study, the run
        resumes: told evaluations are kept, evaluations left pending are run
        again first, and the schedule goes on where it stopped. Resume with
        the same ``space``, budgets, ``eta``, ``surrogate`` and
        ``random_state`` (None resumes with the stored seed).
    random_state : int >= 0 or None
        Makes the run reproducible (with one worker).
    model_budget : {"max", "highest"}, default "max"
        Where the budget column is held when candidates are scored: at
        ``max_budget``, or at the highest rung budget with at least
        ``n_columns + 2`` complete evaluations (as BOHB chooses its model).
    random_fraction : float in [0, 1], default 0.2
        The share of new configurations drawn at random instead of proposed
        by the model (they keep the search from trusting a wrong model).
    surrogate_params : dict, optional
        Parameters of the surrogate, when it is given by name.
    catch : exception class or tuple of them, optional
        As for :func:`~treebo.minimize`.
    callback : callable, optional
        Called with the result so far after every evaluation; ``True`` stops
        the run.
    verbose : bool, default False
        Print one line per evaluation.
    intermediate : bool, default False
        Call ``func(x, budget, report)``: an objective that trains
        incrementally calls ``report(b, value)`` as its training passes a
        budget ``b`` (``min_budget <= b <= budget``; an integer for integer
        budgets), and each reported value becomes an observation of the model
        at ``(x, b)``, recorded in the storage with the evaluation. A value at a
        budget where ``x`` already has one (an earlier evaluation, an earlier
        report, or this call's own ``budget``, whose value is the one
        returned) is ignored. Reports are observations, not evaluations: they
        cost nothing from ``total_budget`` and are never promoted; a NaN,
        infinite or None value is a failed observation, and a budget outside
        the range makes ``report`` raise ``ValueError`` (the evaluation fails,
        as for any exception of ``func``).
    direction : {"minimize", "maximize"}, default "minimize"
        Whether ``func`` (and the values it reports) is minimized or
        maximized. Stored with the study: a resume must give the same one.
    promotion : {"synchronous", "asynchronous"}, default "synchronous"
        ``"synchronous"``: a rung promotes its best ``1 / eta`` once all its
        values are told (successive halving), and a free worker meanwhile
        starts configurations of the next bracket. ``"asynchronous"`` (ASHA):
        a free worker takes the best unpromoted configuration of a rung as
        soon as it is among the best ``1 / eta`` of the values told there.
        With one worker both are successive halving.
    checkpoint_dir : str or os.PathLike, optional
        For an objective that continues a configuration's training from one
        budget to the next. ``func`` is then called with one more argument,
        ``func(x, budget, checkpoint)`` (``func(x, budget, report,
        checkpoint)`` with ``intermediate``), a
        :class:`~treebo.multifidelity.Checkpoint`: ``checkpoint.path`` is a
        directory under ``checkpoint_dir`` that belongs to the configuration
        (the same at every budget; made before the call, where the
        evaluation runs), and ``checkpoint.budget`` the budget of the
        configuration's previous evaluation (None for its first), whose
        state ``func`` saved there. ``func`` loads that state, trains on to
        ``budget``, saves the state there and returns its value. An
        evaluation is then charged ``budget - checkpoint.budget`` against
        ``total_budget`` instead of ``budget``, so promotions cost only the
        extra training. Every worker must see the directory; resume with the
        same ``checkpoint_dir``.
    timeout : float, optional
        Seconds an evaluation may run, as for :func:`~treebo.minimize`: a
        longer one is recorded as failed (``"timed out after ... s"``), never
        promoted, its budget stays spent, and the run goes on. It needs a
        worker process (one is started with ``n_jobs`` 1 and no executor).
    max_retries : int, default 1
        How often an evaluation lost to the executor (a killed worker, Dask's
        ``KilledWorker``) is submitted again before it is recorded as failed,
        as for :func:`~treebo.minimize`.

    Returns
    -------
    OptimizeResult
        ``x`` and ``fun``: the best configuration evaluated at ``max_budget``
        and its value (None and NaN if none was). ``x_iters``,
        ``func_vals``, ``budgets``, ``statuses`` and ``errors``: every told
        evaluation in the order it was started, the same configuration once
        per budget it reached. ``costs``: the budget each was charged (its
        budget, or with ``checkpoint_dir`` the budget beyond the
        configuration's previous evaluation). ``spent``: the sum of ``costs``
        over ``max_budget``. ``reported_x``, ``reported_budgets``,
        ``reported_vals``: the values ``func`` reported (``intermediate``), in
        the order they were recorded (NaN for a failed one). ``space``,
        ``n_failed``, ``direction``, ``message``.

    Raises
    ------
    ValueError
        For a bad argument, naming it and what is allowed.
    treebo.failures.ObjectiveError
        When the first evaluations all fail the same way (see ``catch``).
    """
    if not callable(func):
        raise ValueError(f"func must be callable, got {func!r}")
    config_space = space if isinstance(space, Space) else Space(space)
    integer = _check_budgets(min_budget, max_budget)
    total_budget = check_real(total_budget, "total_budget", strict=True)
    eta = check_real(eta, "eta", 1.0, strict=True)
    model_budget = check_choice(model_budget, "model_budget", MODEL_BUDGETS)
    random_fraction = check_random_fraction(random_fraction)
    catch = check_catch(catch)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {callback!r}")
    seed = _check_seed(random_state)
    if not isinstance(intermediate, bool):
        raise ValueError(f"intermediate must be True or False, got {intermediate!r}")
    direction = check_choice(direction, "direction", ("minimize", "maximize"))
    checkpoints = check_checkpoint_dir(checkpoint_dir)
    promotion = check_choice(promotion, "promotion", PROMOTIONS)
    max_retries = check_int(max_retries, "max_retries", 0)
    resolve_executor(n_jobs, executor, timeout, dry_run=True)
    prototype = as_surrogate(surrogate, surrogate_params)

    budget_dim, augmented = _augmented_space(config_space, min_budget, max_budget, integer)
    optimizer = Optimizer(
        augmented,
        surrogate=surrogate,
        surrogate_params=surrogate_params,
        n_initial_points=0,
        random_state=seed,
        storage=storage,
        resume_pending="keep",
        direction=direction,
    )
    try:
        if seed is None:  # a fresh seed for a new study, the stored one for a resume
            seed = int(optimizer.storage.load_meta()["seed"])
        assert budget_dim.name is not None  # named by _augmented_space
        run = _Run(
            func,
            optimizer,
            config_space,
            budget_dim.name,
            hyperband_brackets(min_budget, max_budget, eta, integer),
            eta,
            total_budget * max_budget,
            max_budget,
            catch,
            seed,
            ConfigurationModel(config_space, prototype, model_budget=model_budget),
            random_fraction,
            callback,
            verbose,
            min_budget if intermediate else None,
            checkpoints,
        )
        workers = Workers(
            *resolve_executor(n_jobs, executor, timeout), timeout=timeout, max_retries=max_retries
        )
        return run.run(workers, promotion)
    except KeyboardInterrupt:
        # A short traceback that ends at the user's call, as minimize's.
        raise KeyboardInterrupt(interrupted_message(optimizer, storage is not None)) from None
    finally:
        optimizer.close()


def _check_budgets(min_budget: Any, max_budget: Any) -> bool:
    """Whether the budgets are integers; a ValueError if they are not valid budgets."""
    for name, value in (("min_budget", min_budget), ("max_budget", max_budget)):
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ValueError(
                f"{name} must be a positive finite number (an int for integer "
                f"budgets such as epochs), got {value!r}"
            )
    if min_budget > max_budget:
        raise ValueError(
            f"min_budget must be at most max_budget, got min_budget={min_budget!r} "
            f"and max_budget={max_budget!r}"
        )
    return isinstance(min_budget, numbers.Integral) and isinstance(max_budget, numbers.Integral)


def _check_seed(random_state: Any) -> int | None:
    if random_state is None:
        return None
    if (
        isinstance(random_state, bool)
        or not isinstance(random_state, numbers.Integral)
        or random_state < 0
    ):
        raise ValueError(f"random_state must be a non-negative int or None, got {random_state!r}")
    return int(random_state)


def _augmented_space(
    space: Space, min_budget: Any, max_budget: Any, integer: bool
) -> tuple[Real | Integer, Space]:
    """The budget dimension, and the configuration space with it appended."""
    name = BUDGET_NAME if BUDGET_NAME not in space.names else BUDGET_NAME + "_"
    budget = (
        Integer(int(min_budget), int(max_budget), "log-uniform", name=name)
        if integer
        else Real(float(min_budget), float(max_budget), "log-uniform", name=name)
    )
    if space.to_dict()["points_are_dicts"]:
        return budget, Space({**dict(zip(space.names, space.dimensions)), name: budget})
    return budget, Space([*space.dimensions, budget])


class _Run:
    """One multi-fidelity run: the schedule, the model and the evaluation loop."""

    def __init__(
        self,
        func: Callable,
        optimizer: Optimizer,
        space: Space,
        budget_name: str,
        brackets: list,
        eta: float,
        cap: float,
        max_budget: Any,
        catch: Any,
        seed: int,
        model: ConfigurationModel,
        random_fraction: float,
        callback: Callable | None,
        verbose: bool,
        report_from: Any,
        checkpoint_dir: Path | None,
    ):
        guarded = GuardedObjective(WithBudget(func), catch)
        #: min_budget for an ``intermediate`` objective (which reports), else None.
        self.report_from = report_from
        self.objective: Callable[[Any], Any] = (
            guarded
            if report_from is None
            else ReportingObjective(
                guarded, report_from, optimizer.space.dimensions[-1].is_discrete
            )
        )
        self.optimizer = optimizer
        self.space = space
        self.budget_name = budget_name
        self.brackets = brackets
        self.eta = eta
        self.cap = cap
        self.max_budget = max_budget
        self.seed = seed
        self.model = model
        self.random_fraction = random_fraction
        self.callback = callback
        self.verbose = verbose
        self.dicts = space.to_dict()["points_are_dicts"]
        self.budget_dim = optimizer.space.dimensions[-1]
        budgets = sorted({b for bracket in brackets for b in bracket.budgets})
        self.rung_columns = self.budget_dim.encode(budgets)[:, 0]
        in_memory = isinstance(optimizer.storage, InMemoryStorage)
        self.where = "" if in_memory else f" in {optimizer.storage.name}"
        self.watch = FailureWatch(optimizer, MIN_SYSTEMATIC, catch, self.where)
        self.sign = -1.0 if optimizer.direction == "maximize" else 1.0
        self.checkpoint_dir = checkpoint_dir
        #: key -> the highest budget among the configuration's evaluations started so far.
        self.reached: dict[str, float] = {}
        #: trial number -> the budget its evaluation was charged.
        self.charged: dict[int, float] = {}

    # -- the points of the augmented space --------------------------------------------
    def split(self, x: Any) -> tuple[Any, Any]:
        if self.dicts:
            config = {k: v for k, v in x.items() if k != self.budget_name}
            return config, x[self.budget_name]
        return list(x[:-1]), x[-1]

    def join(self, config: Any, budget: Any) -> Any:
        return {**config, self.budget_name: budget} if self.dicts else [*config, budget]

    def key(self, config: Any) -> str:
        return json.dumps(self.space.point_to_json(config))

    def charge(self, key: str | None, budget: Any) -> float:
        """What evaluating ``key`` at ``budget`` costs: the budget, less what it continues."""
        previous = self.reached.get(key) if key is not None else None
        if self.checkpoint_dir is None or previous is None:
            return float(budget)
        return float(budget) - previous

    def start(self, trial: Trial, key: str, budget: Any) -> tuple:
        """Charge ``trial``, the evaluation of ``key`` at ``budget``; the arguments of its call."""
        self.charged[trial.number] = self.charge(key, budget)
        previous = self.reached.get(key)
        self.reached[key] = max(float(budget), previous or 0.0)
        job: tuple = (self.configs[key], budget)
        if self.checkpoint_dir is None:
            return job
        if previous is not None and self.budget_dim.is_discrete:
            previous = int(previous)
        return (*job, Checkpoint(checkpoint_path(self.checkpoint_dir, key), previous))

    # -- the jobs of the driver -------------------------------------------------------
    def run(self, workers: Workers, promotion: str) -> OptimizeResult:
        """Rebuild the schedule from the study's trials, then evaluate until the budget is spent."""
        self.schedule = RungSchedule(self.brackets, self.eta, promotion == "asynchronous")
        self.configs: dict[str, Any] = {}  # key -> configuration, of every one evaluated
        self.seen: set[tuple[str, float]] = set()  # (key, budget) with a value or one coming
        self.todo: deque[DriverJob] = deque()  # pending trials of a resumed study, run first
        self.rung_jobs: dict[int, Job] = {}  # trial number -> its job in the schedule
        self.committed = 0.0
        self.running = 0  # jobs given to the driver and not finished
        self.message: str | None = None
        for trial in self.optimizer.trials:  # a resumed study: rebuild the schedule
            config, budget = self.split(trial.x)
            key = self.key(config)
            self.seen.add((key, float(budget)))
            if is_report(trial):
                if key not in self.configs:
                    raise ValueError(
                        f"trial {trial.number} of the study{self.where} is a value told "
                        "without being asked for a configuration never evaluated: it is "
                        "not a study of minimize_multifidelity"
                    )
                continue
            self.configs[key] = config
            args = self.start(trial, key, budget)
            self.committed += self.charged[trial.number]
            job = self.schedule.record(key, budget)
            if trial.status == "pending":
                self.rung_jobs[trial.number] = job
                self.todo.append(DriverJob(trial.number, args, trial))
            else:
                self.schedule.tell(job, trial.value if trial.status == "complete" else None)
        message = run_evaluations(self, self.objective, workers)
        self.watch.raise_if_stopped()
        result = self.result()
        result.message = message or self.message or "spent the total budget"
        return result

    def next_jobs(self, n_jobs: int) -> list[DriverJob]:
        jobs: list[DriverJob] = []
        while len(jobs) < n_jobs and self.message is None:
            if self.todo:
                jobs.append(self.todo.popleft())
                continue
            job = self.schedule.next_job()
            if self.committed + self.charge(job.key, job.budget) > self.cap * (1 + 1e-12):
                if not self.running and not jobs:
                    self.message = "spent the total budget"
                break
            if job.key is None:
                config = self.new_configuration(self.configs)
                if config is None:
                    self.message = "every configuration of the space was evaluated"
                    break
                job.key = self.key(config)
                self.configs[job.key] = config
            trial = self.optimizer.add_pending(self.join(self.configs[job.key], job.budget))
            self.schedule.record(job.key, job.budget)
            self.seen.add((job.key, float(job.budget)))
            args = self.start(trial, job.key, job.budget)
            self.committed += self.charged[trial.number]
            self.rung_jobs[trial.number] = job
            jobs.append(DriverJob(trial.number, args, trial))
        self.running += len(jobs)
        return jobs

    def finish(
        self, driver_job: DriverJob, value: Any, error: str | None, eval_time: float | None
    ) -> str | None:
        self.running -= 1
        trial = driver_job.trial
        assert trial is not None  # every job of this source has its trial
        job = self.rung_jobs.pop(trial.number)
        if isinstance(value, Outcome):
            # Before the evaluation's own value: killed in between, the evaluation
            # is still pending and runs again on resume, and its reports already
            # recorded are then ignored as repeats.
            self.record_reports(job, value.reports)
            value = value.value
        self.watch.tell_trial(trial, value, error=error, eval_time=eval_time)
        self.schedule.tell(job, trial.value if trial.status == "complete" else None)
        stop = self.watch.check(trial)
        result = self.result() if (self.verbose or self.callback is not None) else None
        if self.verbose and result is not None:
            shown = "failed" if trial.value is None else f"{self.sign * trial.value:.6g}"
            print(
                f"eval {trial.number + 1:>4}  budget {job.budget:<8g} f = {shown:<12} "
                f"best at max budget = {result.fun:.6g}",
                file=sys.stdout,
                flush=True,
            )
        if (
            stop is None
            and self.callback is not None
            and result is not None
            and self.callback(result)
        ):
            stop = f"stopped by the callback after trial {trial.number}"
        return stop

    def interrupted(self, jobs: list[DriverJob]) -> None:
        self.optimizer.mark_interrupted([job.trial for job in jobs if job.trial is not None])

    def record_reports(self, job: Job, reports: list) -> None:
        """Tell the values an evaluation reported, each as a trial told without being asked."""
        assert job.key is not None
        for budget, value, error in reports:
            if (job.key, float(budget)) in self.seen:
                continue
            self.seen.add((job.key, float(budget)))
            self.optimizer.tell(self.join(self.configs[job.key], budget), value, error=error)

    def new_configuration(self, configs: dict[str, Any]) -> Any:
        """A configuration not evaluated yet, from the model or at random; None if none is left."""
        rng = np.random.default_rng([self.seed, len(self.optimizer.trials)])
        X, y, pending = self.optimizer.history.observations()
        complete = np.isfinite(y)
        if complete.sum() >= self.model.n_min and rng.random() >= self.random_fraction:
            values = training_values(y)
            ranked, _, _ = self.model.rank(
                X[:, :-1], values, X[:, -1], self.rung_columns, rng, pending[:, :-1]
            )
            for config in self.space.decode(ranked[:256]):
                if self.key(config) not in configs:
                    return config
        for _ in range(_RANDOM_TRIES):
            config = self.space.decode(self.space.sample_encoded(1, rng))[0]
            if self.key(config) not in configs:
                return config
        return None

    def result(self) -> OptimizeResult:
        told = [t for t in self.optimizer.trials if t.status != "pending" and not is_report(t)]
        points = [self.split(t.x) for t in told]
        # trial.value is the minimized quantity: the optimizer negates a maximized value.
        values = np.array([t.value if t.status == "complete" else math.nan for t in told])
        budgets = [b for _, b in points]
        costs = [self.charged[t.number] for t in told]
        at_max = [
            i
            for i, (t, b) in enumerate(zip(told, budgets))
            if t.status == "complete" and b == self.max_budget
        ]
        best = min(at_max, key=lambda i: values[i]) if at_max else None
        reported = [t for t in self.optimizer.trials if is_report(t)]
        reported_points = [self.split(t.x) for t in reported]
        return OptimizeResult(
            x=points[best][0] if best is not None else None,
            fun=self.sign * float(values[best]) if best is not None else math.nan,
            x_iters=[c for c, _ in points],
            func_vals=self.sign * values,
            budgets=budgets,
            statuses=[t.status for t in told],
            errors=[t.error for t in told],
            eval_time=np.array(
                [t.eval_time if t.eval_time is not None else math.nan for t in told]
            ),
            costs=costs,
            spent=float(sum(costs)) / float(self.max_budget),
            reported_x=[c for c, _ in reported_points],
            reported_budgets=[b for _, b in reported_points],
            reported_vals=self.sign
            * np.array([t.value if t.status == "complete" else math.nan for t in reported]),
            space=self.space,
            n_failed=sum(t.status == "failed" for t in told),
            surrogate=self.optimizer.surrogate_name,
            direction=self.optimizer.direction,
            message="",
        )
