"""Hyperparameter search for scikit-learn estimators: :class:`TreeBOSearchCV`.

A drop-in sibling of ``GridSearchCV`` and ``RandomizedSearchCV``: the same
``fit``, ``cv_results_``, ``best_params_``, ``best_score_``,
``best_estimator_``, ``predict``/``score`` delegation and ``refit`` rules,
because it subclasses scikit-learn's ``BaseSearchCV`` and only decides which
candidates to evaluate next.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.model_selection._search import BaseSearchCV

from ._checks import check_int
from .history import check_strategy
from .optimizer import Optimizer
from .space import Categorical, Dimension, Space, SpaceExhausted

__all__ = ["TreeBOSearchCV"]


class TreeBOSearchCV(BaseSearchCV):
    """Bayesian optimization over hyperparameters with a tree-ensemble surrogate.

    Each round asks the optimizer for ``n_points`` parameter settings (a
    constant-liar batch), cross-validates them all (in parallel over
    settings and folds with ``n_jobs``), and tells it the mean test score
    (the optimizer maximizes it: ``direction="maximize"``), until ``n_iter``
    settings have been evaluated.

    Parameters
    ----------
    estimator : estimator object
        Implements ``fit`` and, unless ``scoring`` is given, ``score``.
    search_spaces : dict of str -> Dimension, or list of such dicts
        Parameter names (``"clf__C"`` for a pipeline step) mapped to treebo
        dimensions: ``Real``, ``Integer``, ``Categorical``, ``Binary``. A
        ``(low, high)`` tuple or a list of values is accepted as shorthand,
        and a dimension may be conditional (``active_if=``, naming another
        parameter of the same dict). A list of dicts, like
        ``GridSearchCV``'s list of grids, searches their union: a setting
        comes from one of the dicts (e.g. one per model family, with the
        family's own hyperparameters), chosen by the optimizer like any
        other parameter.
    n_iter : int, default 50
        Parameter settings evaluated in all, the initial design included.
    surrogate : str or Surrogate, default "bwo"
        As for :class:`~treebo.Optimizer`.
    n_initial_points : int, default 5
        Settings drawn from the initial design before the surrogate is used.
    n_points : int, default 1
        Settings proposed (and cross-validated in parallel) per round.
    strategy : {"cl_min", "cl_mean", "cl_max"}, default "cl_min"
        Constant liar for the rounds with ``n_points > 1``.
    scoring, n_jobs, refit, cv, verbose, pre_dispatch, error_score, return_train_score
        As for ``sklearn.model_selection.GridSearchCV``. With several
        metrics, the one named by ``refit`` is optimized (``refit`` must
        then name one). A setting whose fit fails on some folds scores
        ``error_score``; when that is NaN, the optimizer records it as a
        failed trial. A round in which every fit failed is refused by
        scikit-learn: its settings are failed trials of ``optimizer_`` but
        do not appear in ``cv_results_``, and the search goes on (it raises
        only if no setting could be fitted at all).
    random_state : int, numpy.random.Generator or None
        Seeds the optimizer (not the estimator or the CV splits).
    optimizer_kwargs : dict, optional
        Further arguments of :class:`~treebo.Optimizer` (``n_candidates``,
        ``acquisition``, ``storage``, ...).

    Attributes
    ----------
    cv_results_, best_params_, best_score_, best_index_, best_estimator_, \
scorer_, n_splits_, refit_time_, multimetric_
        As for ``GridSearchCV``.
    optimizer_ : Optimizer
        The optimizer after the search (its ``trials`` hold every setting).
    """

    _parameter_constraints: dict = {**BaseSearchCV._parameter_constraints,
                                    "search_spaces": [dict, list],
                                    "n_iter": [numbers.Integral],
                                    "surrogate": "no_validation",
                                    "n_initial_points": [numbers.Integral],
                                    "n_points": [numbers.Integral], "strategy": [str],
                                    "random_state": "no_validation",
                                    "optimizer_kwargs": [dict, None]}

    def __init__(self, estimator: Any, search_spaces: Mapping[str, Any], *, n_iter: int = 50,
                 surrogate: Any = "bwo", n_initial_points: int = 5, n_points: int = 1,
                 strategy: str = "cl_min", scoring: Any = None, n_jobs: int | None = None,
                 refit: Any = True, cv: Any = None, verbose: int = 0,
                 pre_dispatch: Any = "2*n_jobs", random_state: Any = None,
                 error_score: Any = np.nan, return_train_score: bool = False,
                 optimizer_kwargs: dict | None = None):
        super().__init__(estimator=estimator, scoring=scoring, n_jobs=n_jobs, refit=refit,
                         cv=cv, verbose=verbose, pre_dispatch=pre_dispatch,
                         error_score=error_score, return_train_score=return_train_score)
        self.search_spaces = search_spaces
        self.n_iter = n_iter
        self.surrogate = surrogate
        self.n_initial_points = n_initial_points
        self.n_points = n_points
        self.strategy = strategy
        self.random_state = random_state
        self.optimizer_kwargs = optimizer_kwargs

    def _make_optimizer(self) -> Optimizer:
        space = _search_space(self.search_spaces)
        check_int(self.n_iter, "n_iter")
        check_int(self.n_points, "n_points")
        check_strategy(self.strategy)
        taken = {"space", "surrogate", "n_initial_points", "random_state", "direction"}
        clash = sorted(taken & set(self.optimizer_kwargs or {}))
        if clash:
            raise ValueError(f"optimizer_kwargs must not set {clash}: TreeBOSearchCV sets them "
                             "(a score is always maximized; the others are its own "
                             "parameters)")
        return Optimizer(space, self.surrogate,
                         n_initial_points=self.n_initial_points,
                         random_state=self.random_state, direction="maximize",
                         **(self.optimizer_kwargs or {}))

    def _score_key(self) -> str:
        """The ``cv_results_`` column the optimizer minimizes (negated)."""
        if isinstance(self.refit, str):
            return f"mean_test_{self.refit}"
        single = self.scoring is None or isinstance(self.scoring, str) or callable(self.scoring)
        if not single:
            raise ValueError("with several scoring metrics, refit must name the metric to "
                             f"optimize, got refit={self.refit!r}")
        return "mean_test_score"

    def _run_search(self, evaluate_candidates: Any, *, callback_ctx: Any = None) -> None:
        optimizer = self._make_optimizer()
        self.optimizer_ = optimizer
        key = self._score_key()
        n_evaluated, last_failure = 0, None
        try:
            remaining = int(self.n_iter)
            while remaining > 0:
                try:
                    params = optimizer.ask(n_points=min(self.n_points, remaining),
                                           strategy=self.strategy)
                except SpaceExhausted:
                    break
                remaining -= len(params)
                try:
                    results = evaluate_candidates([_estimator_params(p) for p in params])
                except ValueError as error:
                    # scikit-learn refuses a round in which every fit failed;
                    # for a sequential search that is one bad setting, not a
                    # broken search. Those settings become failed trials.
                    if "fits failed" not in str(error):
                        raise
                    last_failure = str(error).strip()
                    for p in params:
                        optimizer.tell(p, None, error=last_failure.splitlines()[0])
                    continue
                n_evaluated += len(params)
                scores = np.asarray(results[key][-len(params):], dtype=float)
                for p, score in zip(params, scores):
                    # A NaN score becomes a failed trial.
                    optimizer.tell(p, score if np.isfinite(score) else None,
                                   error=None if np.isfinite(score) else "score is not finite")
        finally:
            optimizer.close()
        if n_evaluated == 0 and last_failure is not None:
            raise ValueError(f"every setting failed to fit; the last error:\n{last_failure}")


#: The parameter that chooses one dict of a list of search spaces (never an
#: estimator parameter: those do not start with an underscore).
_SPACE_INDEX = "_search_space"


def _search_space(search_spaces: Any) -> Space:
    """One treebo space for a dict of dimensions, or for a list of such dicts.

    A list becomes a conditional space: ``_search_space`` picks a dict, and
    the parameters of dict ``i`` are named ``"i:name"`` and active only when
    it is picked (their own conditions are kept, with the parents renamed).
    """
    single = isinstance(search_spaces, Mapping)
    spaces = [search_spaces] if single else search_spaces
    if not (isinstance(spaces, list) and spaces and all(
            isinstance(d, Mapping) and d for d in spaces)):
        raise ValueError("search_spaces must be a non-empty dict of parameter name -> "
                         "dimension, or a non-empty list of such dicts, got "
                         f"{search_spaces!r}")
    combined: dict[str, Any] = {} if single else {
        _SPACE_INDEX: Categorical(list(range(len(spaces))))}
    for i, space in enumerate(spaces):
        where = "search_spaces" if single else f"search_spaces[{i}]"
        for name, dim in space.items():
            if not isinstance(dim, (Dimension, tuple, list)):
                raise ValueError(f"{where}[{name!r}] must be a treebo dimension (Real, Integer, "
                                 f"Categorical, Binary), got {dim!r}")
            if single:
                combined[name] = dim
                continue
            dim = Space({name: dim}).dimensions[0] if not isinstance(dim, Dimension) else dim
            condition = {_SPACE_INDEX: i}
            for parent, values in (dim.active_if or {}).items():
                if parent not in space:
                    raise ValueError(f"{where}[{name!r}] is active_if on {parent!r}, which is "
                                     f"not a parameter of that dict (its parameters: "
                                     f"{sorted(space)})")
                condition[f"{i}:{parent}"] = values
            combined[f"{i}:{name}"] = dim.replace(name=f"{i}:{name}", active_if=condition)
    return Space(combined)


def _estimator_params(point: Mapping[str, Any]) -> dict[str, Any]:
    """The estimator parameters of a point of :func:`_search_space`."""
    if _SPACE_INDEX not in point:
        return dict(point)
    prefix = f"{point[_SPACE_INDEX]}:"
    return {name[len(prefix):]: value for name, value in point.items()
            if name.startswith(prefix)}
