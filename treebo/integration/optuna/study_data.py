"""A study's trials as the encoded arrays of one proposal."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from ...space import Integer, Space
from .codec import Codec
from .publication import published_proposal

# The dimension that holds a trial's budget (its last reported step, plus one)
# when the study has pruned trials.
_BUDGET = "treebo:budget"


def _observation(
    trial: FrozenTrial, codecs: Mapping[str, Codec], signs: np.ndarray
) -> tuple[dict, np.ndarray, int | None] | None:
    """``(point, values, step)`` of a finished trial, or None when it is not modeled.

    The values, one per objective, are on treebo's scale (minimized: a
    sign is -1 for a maximized direction), all NaN for a failure. ``step``
    is the step of a pruned trial's last intermediate value, the budget it
    was evaluated at; None for a complete (full-budget) or failed trial. A
    trial is modeled when it has every parameter of ``codecs`` with the same
    distribution.
    """
    step = None
    failed = np.full(len(signs), math.nan)
    if trial.state == TrialState.COMPLETE and trial.values is not None:
        values = signs * np.asarray(trial.values, dtype=float)
    elif trial.state == TrialState.PRUNED and trial.intermediate_values and len(signs) == 1:
        step = max(trial.intermediate_values)
        values = signs * trial.intermediate_values[step]
    elif trial.state in (TrialState.PRUNED, TrialState.FAIL):
        values = failed
    else:
        return None
    point = {}
    for name, codec in codecs.items():
        if trial.distributions.get(name) != codec.distribution:
            return None
        try:
            point[name] = codec.to_treebo(trial.params[name])
        except (ValueError, TypeError, OverflowError):
            return None
    return point, (values if np.all(np.isfinite(values)) else failed), step


class StudyData:
    """The study's trials as encoded arrays for one proposal.

    A pruned trial is an evaluation at a lower budget: when the study has
    any, the space gains a budget dimension (an integer, log-scaled: the
    trial's last reported step plus one), complete and pending trials sit at
    the full budget (the largest reported step plus one), and proposals are
    made at the full budget.

    Parameters
    ----------
    trials : sequence of FrozenTrial
        The study's trials.
    current : FrozenTrial
        The trial being sampled (left out).
    codecs : mapping of str to Codec
        The relative search space.
    sign : float or sequence of float
        Per objective, 1 for a minimized direction and -1 for a maximized one.
    pending : bool
        Whether running and waiting trials are pending points.

    Attributes
    ----------
    space : Space
    X : ndarray of shape (n_told, n_columns)
    y : ndarray of shape (n_told,), or (n_told, n_objectives) for several
        On treebo's scale (minimized); NaN rows are failures.
    constraints : ndarray of shape (n_told, n_constraints), or None
        Violations (at most 0 where a constraint holds), one column per
        constraint key that a trial told here has (``constraint_names``);
        None when no such trial has constraints. See :func:`violation_rows`.
    constraint_names : list of str
    pending : ndarray of shape (n_pending, n_columns)
    fixed : dict of int to float, or None
        The budget column at the full budget, when pruned trials are modeled.
    """

    def __init__(
        self,
        trials: Sequence[FrozenTrial],
        current: FrozenTrial,
        codecs: Mapping[str, Codec],
        sign: float | Sequence[float],
        pending: bool,
    ):
        signs = np.atleast_1d(np.asarray(sign, dtype=float))
        finished: list[tuple[dict, np.ndarray, int | None]] = []
        limits: list[dict[str, float]] = []
        running: list[dict] = []
        for t in trials:
            if t.number == current.number:
                continue
            observed = _observation(t, codecs, signs)
            if observed is not None:
                finished.append(observed)
                limits.append(t.constraints)
            elif pending and t.state in (TrialState.RUNNING, TrialState.WAITING):
                point = _pending_point(t, codecs)
                if point is not None:
                    running.append(point)
        steps = [step for _, _, step in finished if step is not None]
        reported = [max(t.intermediate_values) for t in trials if t.intermediate_values]
        self.full = max(reported, default=0) + 1 if steps else None
        if self.full is not None and self.full < 2:
            self.full = 2  # every report at step 0: the full budget is past it
        dims = {name: codec.dimension for name, codec in codecs.items()}
        if self.full is not None:
            dims[_BUDGET] = Integer(1, self.full, log=True)
        self.space = Space(dims)
        self.points = [point for point, _, _ in finished] + running
        rows, values, told_limits = [], [], []
        for (point, value, step), limit in zip(finished, limits):
            row = self._encode(point, step)
            if row is not None:
                rows.append(row)
                values.append(value)
                told_limits.append(limit)
        self.X = np.array(rows).reshape(-1, self.space.n_columns)
        Y = np.array(values, dtype=float).reshape(-1, len(signs))
        self.y = Y[:, 0] if len(signs) == 1 else Y
        self.constraint_names, self.constraints = violation_rows(told_limits, Y)
        lies = [row for row in (self._encode(point, None) for point in running) if row is not None]
        self.pending = np.array(lies).reshape(-1, self.space.n_columns)
        self.fixed = None
        if self.full is not None:
            full = Space([dims[_BUDGET]]).encode([[self.full]])[0, 0]
            self.fixed = {self.space.columns_of(_BUDGET).start: float(full)}

    def _encode(self, point: dict, step: int | None) -> np.ndarray | None:
        if self.full is not None:
            point = {**point, _BUDGET: self.full if step is None else min(step + 1, self.full)}
        try:
            return self.space.encode([point])[0]
        except ValueError:  # a value outside the dimension: not modeled
            return None

    @property
    def n_valued(self) -> int:
        """Trials with finite values at any budget; 0 without one at the full budget."""
        finite = np.all(np.isfinite(self.y.reshape(len(self.y), -1)), axis=1)
        if self.fixed is not None:
            ((column, value),) = self.fixed.items()
            if not (finite & (self.X[:, column] == value)).any():
                return 0
        return int(finite.sum())

    def decode(self, encoded: np.ndarray) -> dict:
        point = self.space.decode(encoded[None, :])[0]
        point.pop(_BUDGET, None)
        return point


def violation_rows(
    limits: Sequence[Mapping[str, float]], Y: np.ndarray
) -> tuple[list[str], np.ndarray | None]:
    """The constraint values of told trials as one matrix of violations.

    Parameters
    ----------
    limits : sequence of dict of str to float
        Per told trial, its constraints (``FrozenTrial.constraints``: the
        values of ``constraints_func``, keyed ``"0"``, ``"1"``, ..., and
        those of ``Trial.set_constraint``, keyed by name).
    Y : ndarray of shape (n_told, n_objectives)
        Their objective values; a row with a NaN is a failure.

    Returns
    -------
    names : list of str
        Every key that a trial with values has, in order of first appearance.
    violations : ndarray of shape (n_told, len(names)), or None
        None without names. A failure's row is NaN. A key that a trial with
        values lacks holds for it, as in Optuna's own test of feasibility
        (``study.best_trial``, ``study.best_trials``): its entry is 0, the
        limit. Infinite values are placed just beyond the finite ones of
        their column (by the column's spread), keeping their sign, so that
        the models of the constraints are fitted on finite values.
    """
    told = np.all(np.isfinite(Y), axis=1)
    names: list[str] = []
    for limit, ok in zip(limits, told):
        if ok:
            names.extend(key for key in limit if key not in names)
    if not names:
        return names, None
    violations = np.array(
        [
            [float(limit.get(key, 0.0)) if ok else math.nan for key in names]
            for limit, ok in zip(limits, told)
        ]
    ).reshape(len(limits), len(names))
    for column in violations.T:  # views: filled in place
        finite = column[np.isfinite(column)]
        low, high = (finite.min(), finite.max()) if len(finite) else (0.0, 0.0)
        spread = (high - low) or float(np.max(np.abs(finite), initial=0.0)) or 1.0
        column[column == math.inf] = max(high, 0.0) + spread
        column[column == -math.inf] = min(low, 0.0) - spread
    return names, violations


def _pending_point(trial: FrozenTrial, codecs: Mapping[str, Codec]) -> dict | None:
    """The point a running or waiting trial is (or will be) evaluated at, if all of it is known.

    Per parameter: the value already suggested, else the value it was
    enqueued with (``study.enqueue_trial``), else the value a sampler
    published for it before the objective asked for it.
    """
    fixed = trial.system_attrs.get("fixed_params") or {}
    published = None
    point = {}
    try:
        for name, codec in codecs.items():
            if name in trial.params:
                if trial.distributions.get(name) != codec.distribution:
                    return None
                value = trial.params[name]
            elif name in fixed:
                value = fixed[name]
            else:
                published = published_proposal(trial) if published is None else published
                if name not in published:
                    return None
                value = codec.distribution.to_external_repr(published[name])
            point[name] = codec.to_treebo(value)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    return point


def whole_study(study: Study) -> Study:
    """The study itself, where Optuna passes a sampler the view of one Hyperband bracket.

    Under ``HyperbandPruner``, Optuna shows samplers only the trials of the
    current trial's bracket (a private ``_BracketStudy`` that keeps the whole
    study as ``_study``). The budget-aware model uses every evaluation, as
    BOHB does, so the sampler reads the whole study.
    """
    try:
        whole = object.__getattribute__(study, "_study")
    except AttributeError:
        return study
    return whole if isinstance(whole, Study) else study
