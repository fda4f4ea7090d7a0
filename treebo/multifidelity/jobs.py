"""A multi-fidelity run as jobs of the driver: Hyperband's rungs, the model, the record.

:class:`RungJobs` is the :class:`~treebo.parallel.JobSource` of
:func:`~treebo.minimize_multifidelity`. Its schedule decides the next job (a
promotion, or a new configuration at a bracket's lowest budget), a new
configuration comes from the model or at random, and every evaluation is a
trial of the study over (configuration, budget), so a resumed run rebuilds its
schedule from the trials.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from ..failures import FailureWatch
from ..history import Trial
from ..loop import MIN_SYSTEMATIC, study_location
from ..optimizer import Optimizer
from ..parallel import Job as DriverJob
from ..parallel import Workers, run_evaluations
from ..result import OptimizeResult
from ..space import Space
from ..targets import training_values
from .checkpoints import Checkpoint, checkpoint_path
from .plan import BudgetedPoints, RunOptions, RunPlan
from .proposal import ConfigurationModel
from .reports import Outcome, is_report
from .schedule import Job, RungSchedule

__all__ = ["RungJobs"]

#: Draws of a random configuration before a discrete space counts as exhausted.
_RANDOM_TRIES = 100


class RungJobs:
    """One multi-fidelity run as jobs of the driver: the schedule of rungs and the model.

    A :class:`~treebo.parallel.JobSource`. The study is an
    :class:`~treebo.optimizer.Optimizer` over the augmented space (the
    configuration's dimensions, then the budget), used only as the record:
    every evaluation is a trial at ``(configuration, budget)``.

    Parameters
    ----------
    objective : callable
        Called with ``(configuration, budget[, checkpoint])``, it evaluates
        and returns the value (a :class:`~treebo.failures.Failure` for an
        exception, an :class:`~treebo.multifidelity.reports.Outcome` with
        the values it reported).
    optimizer : Optimizer
        The study, over :func:`~treebo.multifidelity.plan.augmented_space`.
    space : Space
        The configurations.
    model : ConfigurationModel
        Proposes new configurations.
    plan : RunPlan
    options : RunOptions
    """

    def __init__(
        self,
        objective: Callable[[tuple], Any],
        optimizer: Optimizer,
        space: Space,
        model: ConfigurationModel,
        plan: RunPlan,
        options: RunOptions,
    ):
        self.objective = objective
        self.optimizer = optimizer
        self.space = space
        self.budget_dim = optimizer.space.dimensions[-1]
        self.plan = plan
        self.model = model
        self.callback = options.callback
        self.verbose = options.verbose
        assert self.budget_dim.name is not None  # named by augmented_space
        self.points = BudgetedPoints(space, self.budget_dim.name)
        budgets = sorted({b for bracket in plan.brackets for b in bracket.budgets})
        self.rung_columns = self.budget_dim.encode(budgets)[:, 0]
        self.where = study_location(optimizer)
        self.watch = FailureWatch(optimizer, MIN_SYSTEMATIC, options.catch, self.where)
        self.sign = -1.0 if optimizer.direction == "maximize" else 1.0
        self.checkpoint_dir = options.checkpoint_dir
        #: key -> the highest budget among the configuration's evaluations started so far.
        self.reached: dict[str, float] = {}
        #: trial number -> the budget its evaluation was charged.
        self.charged: dict[int, float] = {}

    def _charge(self, key: str | None, budget: Any) -> float:
        """What evaluating ``key`` at ``budget`` costs: the budget, less what it continues."""
        previous = self.reached.get(key) if key is not None else None
        if self.checkpoint_dir is None or previous is None:
            return float(budget)
        return float(budget) - previous

    def _start(self, trial: Trial, key: str, budget: Any) -> tuple:
        """Charge ``trial``, the evaluation of ``key`` at ``budget``; the arguments of its call."""
        self.charged[trial.number] = self._charge(key, budget)
        previous = self.reached.get(key)
        self.reached[key] = max(float(budget), previous or 0.0)
        job: tuple = (self.configs[key], budget)
        if self.checkpoint_dir is None:
            return job
        if previous is not None and self.budget_dim.is_discrete:
            previous = int(previous)
        return (*job, Checkpoint(checkpoint_path(self.checkpoint_dir, key), previous))

    # -- the jobs of the driver -------------------------------------------------------
    def run(self, workers: Workers) -> OptimizeResult:
        """Rebuild the schedule from the study's trials, then evaluate until the budget is spent.

        Parameters
        ----------
        workers : Workers
            Where the evaluations run.

        Returns
        -------
        OptimizeResult
            As :func:`~treebo.minimize_multifidelity` returns it.
        """
        plan = self.plan
        self.schedule = RungSchedule(plan.brackets, plan.eta, plan.promotion == "asynchronous")
        self.configs: dict[str, Any] = {}  # key -> configuration, of every one evaluated
        self.seen: set[tuple[str, float]] = set()  # (key, budget) with a value or one coming
        self.todo: deque[DriverJob] = deque()  # pending trials of a resumed study, run first
        self.rung_jobs: dict[int, Job] = {}  # trial number -> its job in the schedule
        self.committed = 0.0
        self.running = 0  # jobs given to the driver and not finished
        self.message: str | None = None
        for trial in self.optimizer.trials:  # a resumed study: rebuild the schedule
            config, budget = self.points.split(trial.x)
            key = self.points.key(config)
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
            args = self._start(trial, key, budget)
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
            if self.committed + self._charge(job.key, job.budget) > self.plan.cap * (1 + 1e-12):
                if not self.running and not jobs:
                    self.message = "spent the total budget"
                break
            if job.key is None:
                config = self._new_configuration(self.configs)
                if config is None:
                    self.message = "every configuration of the space was evaluated"
                    break
                job.key = self.points.key(config)
                self.configs[job.key] = config
            trial = self.optimizer.add_pending(self.points.join(self.configs[job.key], job.budget))
            self.schedule.record(job.key, job.budget)
            self.seen.add((job.key, float(job.budget)))
            args = self._start(trial, job.key, job.budget)
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
            self._record_reports(job, value.reports)
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

    def _record_reports(self, job: Job, reports: list) -> None:
        """Tell the values an evaluation reported, each as a trial told without being asked."""
        assert job.key is not None
        for budget, value, error in reports:
            if (job.key, float(budget)) in self.seen:
                continue
            self.seen.add((job.key, float(budget)))
            self.optimizer.tell(self.points.join(self.configs[job.key], budget), value, error=error)

    def _new_configuration(self, configs: dict[str, Any]) -> Any:
        """A configuration not evaluated yet, from the model or at random; None if none is left."""
        rng = np.random.default_rng([self.plan.seed, len(self.optimizer.trials)])
        X, y, pending = self.optimizer.history.observations()
        complete = np.isfinite(y)
        if complete.sum() >= self.model.n_min and rng.random() >= self.plan.random_fraction:
            values = training_values(y)
            ranked, _, _ = self.model.rank(
                X[:, :-1], values, X[:, -1], self.rung_columns, rng, pending[:, :-1]
            )
            for config in self.space.decode(ranked[:256]):
                if self.points.key(config) not in configs:
                    return config
        for _ in range(_RANDOM_TRIES):
            config = self.space.decode(self.space.sample_encoded(1, rng))[0]
            if self.points.key(config) not in configs:
                return config
        return None

    def result(self) -> OptimizeResult:
        told = [t for t in self.optimizer.trials if t.status != "pending" and not is_report(t)]
        points = [self.points.split(t.x) for t in told]
        # trial.value is the minimized quantity: the optimizer negates a maximized value.
        values = np.array([t.value if t.status == "complete" else math.nan for t in told])
        budgets = [b for _, b in points]
        costs = [self.charged[t.number] for t in told]
        at_max = [
            i
            for i, (t, b) in enumerate(zip(told, budgets))
            if t.status == "complete" and b == self.plan.max_budget
        ]
        best = min(at_max, key=lambda i: values[i]) if at_max else None
        reported = [t for t in self.optimizer.trials if is_report(t)]
        reported_points = [self.points.split(t.x) for t in reported]
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
            spent=float(sum(costs)) / float(self.plan.max_budget),
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
