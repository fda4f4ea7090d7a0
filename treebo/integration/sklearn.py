"""Hyperparameter search for scikit-learn estimators: :class:`TreeBOSearchCV`.

A drop-in sibling of ``GridSearchCV`` and ``RandomizedSearchCV``: the same
``fit``, ``cv_results_``, ``best_params_``, ``best_score_``,
``best_estimator_``, ``predict``/``score`` delegation and ``refit`` rules,
because it subclasses scikit-learn's ``BaseSearchCV`` and only decides which
candidates to evaluate next.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection._search import BaseSearchCV, _yield_masked_array_for_each_param

from .._checks import check_int
from ..history import Trial
from ..optimizer import Optimizer
from ..parallel import Job, Workers, run_evaluations
from ..parallel.executors import InlineExecutor
from ..space import Categorical, Dimension, Space, SpaceExhausted
from ..targets import check_strategy

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
        With a ``storage`` that holds this search already (a ``fit`` that
        was interrupted or crashed), the stored settings count: see
        :meth:`fit`.
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

    _parameter_constraints: dict = {
        **BaseSearchCV._parameter_constraints,
        "search_spaces": [dict, list],
        "n_iter": [numbers.Integral],
        "surrogate": "no_validation",
        "n_initial_points": [numbers.Integral],
        "n_points": [numbers.Integral],
        "strategy": [str],
        "random_state": "no_validation",
        "optimizer_kwargs": [dict, None],
    }

    # Set by fit (scikit-learn's search, then _merge_stored_rows).
    cv_results_: dict[str, Any]

    def __init__(
        self,
        estimator: Any,
        search_spaces: Mapping[str, Any],
        *,
        n_iter: int = 50,
        surrogate: Any = "bwo",
        n_initial_points: int = 5,
        n_points: int = 1,
        strategy: str = "cl_min",
        scoring: Any = None,
        n_jobs: int | None = None,
        refit: Any = True,
        cv: Any = None,
        verbose: int = 0,
        pre_dispatch: Any = "2*n_jobs",
        random_state: Any = None,
        error_score: Any = np.nan,
        return_train_score: bool = False,
        optimizer_kwargs: dict | None = None,
    ):
        super().__init__(
            estimator=estimator,
            scoring=scoring,
            n_jobs=n_jobs,
            refit=refit,
            cv=cv,
            verbose=verbose,
            pre_dispatch=pre_dispatch,
            error_score=error_score,
            return_train_score=return_train_score,
        )
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
            raise ValueError(
                f"optimizer_kwargs must not set {clash}: TreeBOSearchCV sets them "
                "(a score is always maximized; the others are its own "
                "parameters)"
            )
        return Optimizer(
            space,
            self.surrogate,
            n_initial_points=self.n_initial_points,
            random_state=self.random_state,
            direction="maximize",
            **(self.optimizer_kwargs or {}),
        )

    def _score_key(self) -> str:
        """The ``cv_results_`` column the optimizer minimizes (negated)."""
        if isinstance(self.refit, str):
            return f"mean_test_{self.refit}"
        single = self.scoring is None or isinstance(self.scoring, str) or callable(self.scoring)
        if not single:
            raise ValueError(
                "with several scoring metrics, refit must name the metric to "
                f"optimize, got refit={self.refit!r}"
            )
        return "mean_test_score"

    def fit(self, X: Any, y: Any = None, **params: Any) -> TreeBOSearchCV:
        """Search, then refit the best setting (as ``GridSearchCV.fit``).

        With a ``storage`` in ``optimizer_kwargs`` that already holds this
        search, the settings cross-validated there count toward ``n_iter``
        (as ``minimize`` counts stored evaluations toward ``n_calls``): only
        the missing ones are evaluated, and ``cv_results_`` and ``best_*``
        cover them all, the stored ones with the scores and times recorded
        when they were cross-validated. When all ``n_iter`` are stored, the
        best stored setting is cross-validated again (scikit-learn's ``fit``
        evaluates at least one).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), optional
        **params : dict
            As for ``GridSearchCV.fit``.

        Returns
        -------
        self
        """
        self._stored_rows: list[tuple[dict, dict]] = []
        try:
            super().fit(X, y, **params)
            if self._stored_rows:
                self._merge_stored_rows(X, y, params)
        finally:
            del self._stored_rows  # only this fit's
        return self

    def _run_search(self, evaluate_candidates: Any, *, callback_ctx: Any = None) -> None:
        optimizer = self._make_optimizer()
        self.optimizer_ = optimizer
        n_evaluated, last_failure = 0, None
        try:
            rows = _saved_rows(optimizer)
            stored = [
                (t, rows[str(t.number)])
                for t in optimizer.trials
                if t.status != "pending" and str(t.number) in rows
            ]
            remaining = int(self.n_iter) - optimizer.history.n_evaluated()
            if remaining <= 0:
                # Everything is stored, but scikit-learn's fit needs one evaluation.
                complete = [t for t in optimizer.trials if t.status == "complete"]
                if not complete:
                    raise ValueError(
                        f"the study in {optimizer.storage.name!r} holds n_iter="
                        f"{self.n_iter} settings and none could be fitted"
                    )
                # A complete trial always has a value.
                best = min(complete, key=lambda t: math.inf if t.value is None else t.value)
                stored = [(t, row) for t, row in stored if t is not best]
                evaluate_candidates([_estimator_params(best.x)])
                n_evaluated += 1
            self._stored_rows = [(_estimator_params(t.x), row) for t, row in stored]
            rounds = _SearchRounds(self, optimizer, evaluate_candidates, remaining, rows)
            inline = Workers(InlineExecutor(), 1, owned=True, timeout=None, max_retries=0)
            run_evaluations(rounds, rounds.evaluate, inline)
            n_evaluated += rounds.n_evaluated
            last_failure = rounds.last_failure
        finally:
            optimizer.close()
        if n_evaluated == 0 and last_failure is not None:
            raise ValueError(f"every setting failed to fit; the last error:\n{last_failure}")

    def _merge_stored_rows(self, X: Any, y: Any, params: dict) -> None:
        """Put the stored settings in front of ``cv_results_`` and choose the best again."""
        new = self.cv_results_
        settings = [p for p, _ in self._stored_rows] + list(new["params"])
        merged: dict[str, Any] = {}
        for column, values in new.items():
            if column == "params" or column.startswith(("param_", "rank_")):
                continue
            merged[column] = np.concatenate(
                [
                    np.array(
                        [row.get(column, np.nan) for _, row in self._stored_rows], dtype=float
                    ),
                    np.asarray(values, dtype=float),
                ]
            )
        for column, values in _yield_masked_array_for_each_param(settings):
            merged[column] = values
        merged["params"] = settings
        for column in [c for c in merged if c.startswith("mean_test_")]:
            merged["rank_" + column[len("mean_") :]] = _ranks(merged[column])
        self.cv_results_ = merged
        if not (self.refit or not self.multimetric_):
            return
        refit_metric = self.refit if isinstance(self.refit, str) else "score"
        self.best_index_ = self._select_best_index(self.refit, refit_metric, merged)
        if not callable(self.refit):
            self.best_score_ = merged[f"mean_test_{refit_metric}"][self.best_index_]
        best_params = settings[self.best_index_]
        changed = getattr(self, "best_params_", None) != best_params
        self.best_params_ = best_params
        if self.refit and changed:
            fit_params = {k: v for k, v in params.items() if k != "groups"}
            estimator = clone(self.estimator).set_params(**clone(best_params, safe=False))
            start = time.time()
            estimator.fit(X, **fit_params) if y is None else estimator.fit(X, y, **fit_params)
            self.refit_time_ = time.time() - start
            self.best_estimator_ = estimator


#: The ``meta`` key under which a search keeps the ``cv_results_`` row of each
#: cross-validated trial (by trial number), for a resumed search to report.
_ROWS_KEY = "sklearn_cv_results"


def _saved_rows(optimizer: Optimizer) -> dict[str, dict[str, float]]:
    rows = optimizer.storage.load_meta().get(_ROWS_KEY, {})
    return dict(rows) if isinstance(rows, dict) else {}


def _result_row(results: dict, from_end: int) -> dict[str, float]:
    """The numeric ``cv_results_`` columns of the candidate ``from_end`` rows from the end."""
    return {
        column: float(values[-from_end])
        for column, values in results.items()
        if column != "params" and not column.startswith(("param_", "rank_"))
    }


def _ranks(means: np.ndarray) -> np.ndarray:
    """scikit-learn's ranking of mean scores: 1 is best, NaN ties with the worst."""
    if np.isnan(means).all():
        return np.ones_like(means, dtype=np.int32)
    filled = np.nan_to_num(means, nan=np.nanmin(means) - 1)
    return rankdata(-filled, method="min").astype(np.int32, copy=False)


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
    if not (
        isinstance(spaces, list) and spaces and all(isinstance(d, Mapping) and d for d in spaces)
    ):
        raise ValueError(
            "search_spaces must be a non-empty dict of parameter name -> "
            "dimension, or a non-empty list of such dicts, got "
            f"{search_spaces!r}"
        )
    combined: dict[str, Any] = (
        {} if single else {_SPACE_INDEX: Categorical(list(range(len(spaces))))}
    )
    for i, space in enumerate(spaces):
        where = "search_spaces" if single else f"search_spaces[{i}]"
        for name, dim in space.items():
            if not isinstance(dim, (Dimension, tuple, list)):
                raise ValueError(
                    f"{where}[{name!r}] must be a treebo dimension (Real, Integer, "
                    f"Categorical, Binary), got {dim!r}"
                )
            if single:
                combined[name] = dim
                continue
            dim = Space({name: dim}).dimensions[0] if not isinstance(dim, Dimension) else dim
            condition: dict[str, Any] = {_SPACE_INDEX: i}
            for parent, values in (dim.active_if or {}).items():
                if parent not in space:
                    raise ValueError(
                        f"{where}[{name!r}] is active_if on {parent!r}, which is "
                        f"not a parameter of that dict (its parameters: "
                        f"{sorted(space)})"
                    )
                condition[f"{i}:{parent}"] = values
            combined[f"{i}:{name}"] = dim.replace(name=f"{i}:{name}", active_if=condition)
    return Space(combined)


def _estimator_params(point: Mapping[str, Any]) -> dict[str, Any]:
    """The estimator parameters of a point of :func:`_search_space`."""
    if _SPACE_INDEX not in point:
        return dict(point)
    prefix = f"{point[_SPACE_INDEX]}:"
    return {name[len(prefix) :]: value for name, value in point.items() if name.startswith(prefix)}


class _Raised:
    """An exception of ``evaluate_candidates``, carried to the driver's source as a value."""

    def __init__(self, error: Exception):
        self.error = error


class _SearchRounds:
    """:class:`TreeBOSearchCV`'s rounds as jobs of the driver: one job cross-validates a batch.

    Each job is ``n_points`` settings asked together (a constant-liar batch),
    evaluated in this process by scikit-learn's ``evaluate_candidates``
    (parallel over settings and folds with ``n_jobs``); Ctrl-C leaves the
    round's trials pending, as ``minimize`` does.
    """

    def __init__(
        self,
        search: TreeBOSearchCV,
        optimizer: Optimizer,
        evaluate_candidates: Any,
        remaining: int,
        rows: dict,
    ):
        self.search, self.optimizer = search, optimizer
        self.evaluate_candidates, self.remaining, self.rows = evaluate_candidates, remaining, rows
        self.key = search._score_key()
        self.rounds: dict[int, list[Trial]] = {}
        self.n_evaluated = 0
        self.last_failure: str | None = None

    def next_jobs(self, n_jobs: int) -> list[Job]:
        if self.remaining <= 0 or n_jobs < 1:
            return []
        try:
            n_points = min(int(self.search.n_points), self.remaining)
            trials = self.optimizer.ask_trials(n_points, self.search.strategy)
        except SpaceExhausted:
            self.remaining = 0
            return []
        self.remaining -= len(trials)
        self.rounds[trials[0].number] = trials
        return [Job(trials[0].number, [_estimator_params(t.x) for t in trials])]

    def evaluate(self, params: list[dict]) -> Any:
        try:
            return self.evaluate_candidates(params)
        except Exception as error:  # noqa: BLE001 - finish() decides, with the trials at hand
            return _Raised(error)

    def finish(self, job: Job, value: Any, error: str | None, eval_time: float | None) -> None:
        trials = self.rounds.pop(job.number)
        if isinstance(value, _Raised):
            # scikit-learn refuses a round in which every fit failed; for a
            # sequential search that is one bad setting, not a broken search.
            # Those settings become failed trials; any other error is raised.
            if not (isinstance(value.error, ValueError) and "fits failed" in str(value.error)):
                raise value.error
            error = str(value.error).strip()
            self.last_failure = error
        if error is not None:  # also what evaluate_task reports (SystemExit)
            for trial in trials:
                self.optimizer.tell_trial(trial, None, error=error.splitlines()[0])
            return
        self.n_evaluated += len(trials)
        scores = np.asarray(value[self.key][-len(trials) :], dtype=float)
        for i, (trial, score) in enumerate(zip(trials, scores)):
            self.rows[str(trial.number)] = _result_row(value, len(trials) - i)
            # A NaN score becomes a failed trial.
            self.optimizer.tell_trial(
                trial,
                score if np.isfinite(score) else None,
                error=None if np.isfinite(score) else "score is not finite",
            )
        # Kept with the study, so that a resumed search reports these settings too.
        self.optimizer.storage.record_ask([], {_ROWS_KEY: self.rows})

    def interrupted(self, jobs: list[Job]) -> None:
        self.optimizer.mark_interrupted(
            [trial for job in jobs for trial in self.rounds.get(job.number, [])]
        )
