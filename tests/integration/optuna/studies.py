"""What the tests of the Optuna integration share: a fast sampler, objectives, spies.

Imported by the test modules after they have skipped without Optuna.
Proposals use a small forest and few candidates (``FAST``) so that the
default tests run in seconds.
"""

import json
import time

import numpy as np
import optuna

from treebo.integration.optuna import PROPOSAL_KEY, TreeBOSampler
from treebo.proposal import ProposalPipeline

optuna.logging.set_verbosity(optuna.logging.WARNING)

FAST = {
    "n_candidates": 1000,
    "surrogate_params": {"n_estimators": 30},
    "optimizer_kwargs": {"n_local_candidates": 500, "n_jump_candidates": 200},
}


def make_sampler(seed=0, n_startup_trials=5, **kwargs):
    return TreeBOSampler(seed=seed, n_startup_trials=n_startup_trials, **{**FAST, **kwargs})


def quadratic(trial):
    x = trial.suggest_float("x", -5, 5)
    y = trial.suggest_float("y", -5, 5)
    return (x - 1.5) ** 2 + 2 * (y + 0.5) ** 2


def proposal_of(trial):
    """What the sampler published for a trial ({} for a trial it did not propose)."""
    count = trial.system_attrs.get(PROPOSAL_KEY)
    if count is None:
        return {}
    return json.loads("".join(trial.system_attrs[f"{PROPOSAL_KEY}:{i}"] for i in range(count)))


def spy_on_proposals(monkeypatch):
    """Record, for each proposal, its told points with their values and its pending points.

    Returns a list that receives one ``(told, pending)`` per proposal: ``told``
    maps a point's values (without the budget) to ``(value, budget or None)``,
    ``pending`` lists the pending points' values.
    """
    calls = []
    propose = ProposalPipeline.propose

    def spy(self, space, X, y, **kwargs):
        def values(row):
            point = space.decode(row[None, :])[0]
            budget = point.pop("treebo:budget", None)
            return tuple(point.values()), budget

        told = {}
        for row, value in zip(X, y):
            key, budget = values(row)
            told[key] = (None if np.isnan(value) else float(value), budget)
        calls.append((told, [values(row)[0] for row in kwargs["pending"]]))
        return propose(self, space, X, y, **kwargs)

    monkeypatch.setattr(ProposalPipeline, "propose", spy)
    return calls


def grid_objective(trial):
    x = trial.suggest_int("x", -10, 10)
    y = trial.suggest_int("y", -10, 10)
    time.sleep(0.02)  # so that the workers' trials overlap
    return (x - 3) ** 2 + (y + 2) ** 2
