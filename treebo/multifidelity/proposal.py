"""New configurations from one surrogate over (configuration, budget).

The budget is one more input column of the surrogate (its log, scaled to
``[0, 1]`` like any log-uniform dimension), so a tree ensemble learns from
every evaluation at every budget at once and splits on the budget where it
matters; no special kernel is needed. To propose a configuration, candidates
(scrambled Sobol points of the configuration space and neighbours of the
best configurations) are scored by expected improvement with the budget
column held at the *scoring budget*: ``max_budget`` (``model_budget="max"``)
or, as BOHB does, the highest rung budget with enough complete evaluations
(``model_budget="highest"``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import clone

from ..acquisition import (
    distance_variance,
    local_candidates,
    log_expected_improvement,
    sobol_candidates,
)
from ..space import Space
from ..surrogates import Surrogate
from ..targets import transform_targets

__all__ = ["MODEL_BUDGETS", "ConfigurationModel"]

#: Where the budget column is held when candidates are scored.
MODEL_BUDGETS = ("max", "highest")


class ConfigurationModel:
    """Ranks candidate configurations with a surrogate fitted on (configuration, budget).

    Parameters
    ----------
    space : Space
        The configuration space (without the budget).
    surrogate : Surrogate
        Unfitted; cloned at every fit.
    model_budget : {"max", "highest"}
        The scoring budget (module docstring).
    n_candidates : int
        Sobol candidates per proposal.
    n_local : int
        Neighbours of each of the best ``n_centers`` configurations.
    n_centers : int
    """

    def __init__(
        self,
        space: Space,
        surrogate: Surrogate,
        *,
        model_budget: str = "max",
        n_candidates: int = 2048,
        n_local: int = 200,
        n_centers: int = 5,
    ):
        self.space = space
        self.surrogate = surrogate
        self.model_budget = model_budget
        self.n_candidates = n_candidates
        self.n_local = n_local
        self.n_centers = n_centers

    @property
    def n_min(self) -> int:
        """Complete evaluations a scoring budget needs (``"highest"``), and the model at all."""
        return self.space.n_columns + 2

    def rank(
        self,
        X: np.ndarray,
        values: np.ndarray,
        budget_column: np.ndarray,
        rung_columns: np.ndarray,
        rng: np.random.Generator,
        pending: np.ndarray | None = None,
    ) -> tuple[np.ndarray, float, float]:
        """Candidate configurations, the most promising first.

        Parameters
        ----------
        X : ndarray of shape (n, n_columns)
            Encoded configurations of the complete evaluations.
        values : ndarray of shape (n,)
            Their values (failures already given the worst value).
        budget_column : ndarray of shape (n,)
            Their encoded budgets.
        rung_columns : ndarray of shape (n_rungs,)
            The encoded rung budgets, lowest first; the last is ``max_budget``.
        rng : numpy.random.Generator
        pending : ndarray of shape (n_pending, n_columns), optional
            Encoded configurations being evaluated (at any budget).

        Returns
        -------
        candidates : ndarray of shape (m, n_columns)
            Encoded, snapped, ranked by expected improvement at the scoring
            budget; for a tree model, its predictive variance plus the
            exploration variance (:func:`~treebo.acquisition.distance_variance`)
            of the distance to the nearest evaluated or pending configuration.
        fit_time, acq_time : float
            Seconds.
        """
        start = time.perf_counter()
        target_kind = "standardize" if self.surrogate.smooth else "log"
        z = transform_targets(values, target_kind)
        model = clone(self.surrogate)
        if model.seeded:
            model.set_params(random_state=int(rng.integers(np.iinfo(np.int32).max)))
        model.fit(np.column_stack([X, budget_column]), z)
        fit_time = time.perf_counter() - start

        start = time.perf_counter()
        column = self._scoring_column(budget_column, rung_columns)
        at_scoring = np.isclose(budget_column, column)
        observed = np.unique(X, axis=0)
        observed_mean = model.predict(np.column_stack([observed, np.full(len(observed), column)]))
        best = float(np.min(observed_mean))
        order = np.argsort(observed_mean)
        centers = observed[order[: self.n_centers]]
        if at_scoring.any():  # the best configurations actually seen at the scoring budget
            seen = X[at_scoring][np.argsort(z[at_scoring])[: self.n_centers]]
            centers = np.vstack([seen, centers])
        candidates = np.vstack(
            [
                self.space.snap(sobol_candidates(self.n_candidates, self.space.n_columns, rng)),
                local_candidates(self.space, centers, self.n_local, rng),
            ]
        )
        prediction = model.predict_dist(
            np.column_stack([candidates, np.full(len(candidates), column)])
        )
        std = prediction.std
        if not model.smooth:
            # As the refinement step does: a forest's variance does not grow away
            # from the data, and configurations in flight repel the next proposal.
            near = (
                observed if pending is None or not len(pending) else np.vstack([observed, pending])
            )
            std = np.sqrt(prediction.variance + distance_variance(candidates, near))
        score = log_expected_improvement(prediction.mean, std, best)
        # Ties (flat regions of a forest) are broken at random, not by candidate order.
        ranked = np.lexsort((rng.random(len(score)), -score))
        return candidates[ranked], fit_time, time.perf_counter() - start

    def _scoring_column(self, budget_column: np.ndarray, rung_columns: np.ndarray) -> float:
        if self.model_budget == "max":
            return float(rung_columns[-1])
        for column in rung_columns[::-1]:
            if np.isclose(budget_column, column).sum() >= self.n_min:
                return float(column)
        return float(rung_columns[-1])


def check_random_fraction(value: Any) -> float:
    """``random_fraction`` as a float in ``[0, 1]``; a ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"random_fraction must be a number in [0, 1], got {value!r}")
    return float(value)
