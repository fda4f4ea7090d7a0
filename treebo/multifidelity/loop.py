"""``minimize_multifidelity``: Hyperband brackets whose new configurations come from a model.

This module checks the arguments, opens the study (an
:class:`~treebo.optimizer.Optimizer` over the configuration's dimensions plus
a log-uniform ``budget`` dimension) and hands the run to the driver as
:class:`~treebo.multifidelity.jobs.RungJobs`, which holds the schedule and the
model.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from typing import Any

from .._checks import check_choice, check_int, check_real
from ..failures import GuardedObjective, check_catch
from ..loop import interrupted_message
from ..optimizer import Optimizer
from ..parallel import Workers, resolve_executor
from ..result import OptimizeResult
from ..space import Space
from ..surrogates import Surrogate, as_surrogate
from .brackets import hyperband_brackets
from .checkpoints import check_checkpoint_dir
from .jobs import RungJobs
from .plan import BUDGET_NAME, RunOptions, RunPlan, augmented_space
from .proposal import MODEL_BUDGETS, ConfigurationModel, check_random_fraction
from .reports import ReportingObjective, WithBudget

__all__ = ["minimize_multifidelity", "BUDGET_NAME"]

#: How rungs promote (``minimize_multifidelity(promotion=...)``).
PROMOTIONS = ("synchronous", "asynchronous")


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

    budget_dim, augmented = augmented_space(config_space, min_budget, max_budget, integer)
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
        plan = RunPlan(
            hyperband_brackets(min_budget, max_budget, eta, integer),
            eta,
            total_budget * max_budget,
            max_budget,
            promotion,
            seed,
            random_fraction,
        )
        guarded = GuardedObjective(WithBudget(func), catch)
        objective: Callable = (
            ReportingObjective(guarded, min_budget, budget_dim.is_discrete)
            if intermediate
            else guarded
        )
        model = ConfigurationModel(config_space, prototype, model_budget=model_budget)
        options = RunOptions(catch, callback, verbose, checkpoints)
        jobs = RungJobs(objective, optimizer, config_space, model, plan, options)
        workers = Workers(
            *resolve_executor(n_jobs, executor, timeout), timeout=timeout, max_retries=max_retries
        )
        return jobs.run(workers)
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
