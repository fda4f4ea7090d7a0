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
    trial: FrozenTrial, codecs: Mapping[str, Codec], sign: float
) -> tuple[dict, float, int | None] | None:
    """``(point, value, step)`` of a finished trial, or None when it is not modeled.

    The value is on treebo's scale (minimized: ``sign`` is -1 for a
    maximized study), NaN for a failure. ``step`` is the step of a pruned
    trial's last intermediate value, the budget it was evaluated at; None
    for a complete (full-budget) or failed trial. A trial is modeled when it
    has every parameter of ``codecs`` with the same distribution.
    """
    step = None
    if trial.state == TrialState.COMPLETE and trial.value is not None:
        value = sign * trial.value
    elif trial.state == TrialState.PRUNED and trial.intermediate_values:
        step = max(trial.intermediate_values)
        value = sign * trial.intermediate_values[step]
    elif trial.state in (TrialState.PRUNED, TrialState.FAIL):
        value = math.nan
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
    return point, (value if math.isfinite(value) else math.nan), step


class StudyData:
    """The study's trials as encoded arrays for one proposal.

    A pruned trial is an evaluation at a lower budget: when the study has
    any, the space gains a budget dimension (an integer, log-scaled: the
    trial's last reported step plus one), complete and pending trials sit at
    the full budget (the largest reported step plus one), and proposals are
    made at the full budget.
    """

    def __init__(
        self,
        trials: Sequence[FrozenTrial],
        current: FrozenTrial,
        codecs: Mapping[str, Codec],
        sign: float,
        pending: bool,
    ):
        finished: list[tuple[dict, float, int | None]] = []
        running: list[dict] = []
        for t in trials:
            if t.number == current.number:
                continue
            observed = _observation(t, codecs, sign)
            if observed is not None:
                finished.append(observed)
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
        rows, values = [], []
        for point, value, step in finished:
            row = self._encode(point, step)
            if row is not None:
                rows.append(row)
                values.append(value)
        self.X = np.array(rows).reshape(-1, self.space.n_columns)
        self.y = np.array(values, dtype=float)
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
        """Trials with a finite value at any budget; 0 without one at the full budget."""
        finite = np.isfinite(self.y)
        if self.fixed is not None:
            ((column, value),) = self.fixed.items()
            if not (finite & (self.X[:, column] == value)).any():
                return 0
        return int(finite.sum())

    def decode(self, encoded: np.ndarray) -> dict:
        point = self.space.decode(encoded[None, :])[0]
        point.pop(_BUDGET, None)
        return point


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
