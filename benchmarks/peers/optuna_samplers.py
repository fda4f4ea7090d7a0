"""Optuna's ``TPESampler``, ``GPSampler`` and ``CmaEsSampler``, ask and tell.

The initial design is enqueued (``enqueue_trial``) and ``n_startup_trials``
set to its size. The GP sampler (needs torch) is told that the objective is
deterministic (``deterministic_objective=True``). CMA-ES (the ``cmaes``
package) starts after the given points from its defaults: the mean at the
centre of the box, ``sigma0`` a sixth of the narrowest range, population
``4 + floor(3 ln D)``; it is for real and integer dimensions only, and a
space with binary or categorical ones is refused.

Conditional spaces run define-by-run: each trial suggests, parents first,
only the parameters that the values already suggested make active, and the
initial points are enqueued with their active parameters only (TPE at its
defaults: the multivariate TPE over the parameters every trial has, its
univariate TPE for each conditional parameter from the trials that have it;
the GP models only the parameters every trial has and leaves the conditional
ones to its independent sampler, a ``RandomSampler(seed)``, with
``warn_independent_sampling=False``).
"""

from __future__ import annotations

import warnings
from typing import Any

from treebo.space import Binary, Categorical, Integer, Real, Space

from .protocol import PeerRun, is_active, library_conditions, refuse_conditions, refuse_non_numeric


def _optuna_distributions(space: Space) -> dict:
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    out = {}
    for dim in space.dimensions:
        if isinstance(dim, Real):
            out[dim.name] = FloatDistribution(dim.low, dim.high, log=dim.prior == "log-uniform")
        elif isinstance(dim, Integer):
            out[dim.name] = IntDistribution(dim.low, dim.high, log=dim.prior == "log-uniform")
        elif isinstance(dim, Binary):
            out[dim.name] = CategoricalDistribution([0, 1])
        elif isinstance(dim, Categorical):
            out[dim.name] = CategoricalDistribution(list(range(len(dim.categories))))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    return out


def run_optuna(run: PeerRun, seed: int, *, sampler: str) -> dict:
    """Optuna's ``sampler`` (a class name) on ``run``, ask and tell; return the settings."""
    if sampler == "CmaEsSampler":
        # Checked before Optuna is imported: the space is refused whether or not it is installed.
        refuse_conditions(run.space, "Optuna's CMA-ES samples one fixed set of parameters")
        refuse_non_numeric(run.space, "Optuna's CMA-ES samples real and integer parameters only")
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if sampler == "TPESampler":
        arguments = {"seed": int(seed), "n_startup_trials": run.n_initial}
    elif sampler == "CmaEsSampler":
        arguments = {"seed": int(seed), "n_startup_trials": run.n_initial}
    else:
        arguments = {
            "seed": int(seed),
            "n_startup_trials": run.n_initial,
            "deterministic_objective": True,
        }
        if run.space.conditional:
            # Conditional parameters are outside its intersection search space and
            # drawn by its independent sampler; not a warning per trial and parameter.
            arguments["warn_independent_sampling"] = False
    with warnings.catch_warnings():
        # deterministic_objective is marked experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        chosen = getattr(optuna.samplers, sampler)(**arguments)
    study = optuna.create_study(direction="minimize", sampler=chosen)
    for point in run.x0:
        study.enqueue_trial(run.library_dict(point))
    distributions = _optuna_distributions(run.space)
    if run.space.conditional:
        conditions = library_conditions(run.space)
        while len(run.x) < run.n_calls:
            trial = study.ask()
            value = run(run.active_point(_suggest_active(trial, conditions, distributions)))
            study.tell(trial, value)
        return {
            "call": f"optuna.samplers.{sampler} ask/tell, define-by-run",
            "arguments": arguments,
            "x0": "treebo initial design (enqueue_trial)",
            "conditions": "a parameter is suggested only when its parents (suggested "
            "first) make it active",
        }
    while len(run.x) < run.n_calls:
        trial = study.ask(distributions)
        value = run(run.point([trial.params[name] for name in run.space.names]))
        study.tell(trial, value)
    return {
        "call": f"optuna.samplers.{sampler} ask/tell",
        "arguments": arguments,
        "x0": "treebo initial design (enqueue_trial)",
    }


def _suggest_active(trial: Any, conditions: list, distributions: dict) -> dict:
    """Define-by-run: suggest, parents first, each parameter that the values so far make active."""
    from optuna.distributions import FloatDistribution, IntDistribution

    values: dict = {}
    for dim, dim_conditions in conditions:
        if not is_active(dim_conditions, values):
            continue
        d = distributions[dim.name]
        if isinstance(d, FloatDistribution):
            values[dim.name] = trial.suggest_float(dim.name, d.low, d.high, log=d.log)
        elif isinstance(d, IntDistribution):
            values[dim.name] = trial.suggest_int(dim.name, d.low, d.high, log=d.log)
        else:
            values[dim.name] = trial.suggest_categorical(dim.name, d.choices)
    return values
