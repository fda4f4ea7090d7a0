"""The ask/tell optimizer and the ``minimize`` loop.

One iteration (``Optimizer.ask``): encode every evaluated point, standardize
the values (failed evaluations take the worst finite value), fit the
surrogate, score Sobol candidates (plus local neighbours of the best points)
by the acquisition, and give back the best candidate that has not been
evaluated or proposed yet, decoded to a user-facing point.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult as _ScipyResult
from scipy.optimize import minimize as _scipy_minimize
from sklearn.base import clone

from . import acquisition as acq
from .space import Real, Space
from .surrogates import Surrogate, make_surrogate

__all__ = ["Optimizer", "OptimizeResult", "Trial", "minimize", "SpaceExhausted",
           "transform_targets"]

_STATUSES = ("pending", "complete", "failed")


class SpaceExhausted(RuntimeError):
    """Raised by :meth:`Optimizer.ask` when every feasible point has been evaluated."""


@dataclass
class Trial:
    """One proposed or evaluated point.

    Attributes
    ----------
    number : int
        Position in the optimizer's history, from 0.
    x : list or dict
        The user-facing point.
    status : {"pending", "complete", "failed"}
        ``pending`` between ``ask`` and ``tell``.
    value : float or None
        The objective value; ``None`` unless complete.
    error : str or None
        Why the evaluation failed.
    origin : {"initial", "model", "random", "user"}
        How the point was chosen: initial design, surrogate + acquisition,
        random fallback, or told without being asked.
    fit_time, acq_time : float
        Seconds spent fitting the surrogate and optimizing the acquisition to
        propose this point (0 for points not proposed by the model).
    asked_at, told_at : float or None
        Wall-clock timestamps (``time.time()``) of ``ask`` and ``tell``.
    """

    number: int
    x: Any
    x_encoded: np.ndarray = field(repr=False)
    status: str = "pending"
    value: float | None = None
    error: str | None = None
    origin: str = "user"
    fit_time: float = 0.0
    acq_time: float = 0.0
    asked_at: float | None = None
    told_at: float | None = None

    @property
    def duration(self) -> float | None:
        """Seconds between ``ask`` and ``tell`` (the evaluation time in ``minimize``)."""
        if self.asked_at is None or self.told_at is None:
            return None
        return self.told_at - self.asked_at


class OptimizeResult(_ScipyResult):
    """Result of an optimization, with scikit-optimize's field names.

    Attributes
    ----------
    x : list or dict
        Best point found (lowest value among complete trials).
    fun : float
        Its value.
    x_iters : list
        Every evaluated point (complete and failed), in order of evaluation.
    func_vals : ndarray of shape (n_evaluated,)
        Their values; ``nan`` for failed evaluations.
    statuses : list of str
        ``"complete"`` or ``"failed"`` per evaluated point.
    errors : list of str or None
        The error text of failed evaluations.
    fit_time, acq_time : ndarray of shape (n_evaluated,)
        Seconds spent on the surrogate fit and on the acquisition to propose
        each point (0 for initial-design points).
    space : Space
        The search space.
    n_failed : int
        Number of failed evaluations.
    message : str
        Why the run ended.
    """


def _as_seed_sequence_children(random_state: Any, n: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.default_rng(random_state).spawn(n)]


def _check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class Optimizer:
    """Sequential model-based optimizer driven by ``ask()`` and ``tell(x, y)``.

    Parameters
    ----------
    dimensions : Space, list or dict of dimensions
        The search space (see :class:`~treebo.space.Space`).
    surrogate : str or Surrogate, default "bwo"
        A name from :func:`~treebo.surrogates.available_surrogates` or an
        unfitted surrogate instance (cloned before every fit).
    acquisition : {"ei", "pi", "lcb"}, default "ei"
        Expected improvement (ranked by log-EI), probability of improvement,
        or lower confidence bound.
    n_initial_points : int, default 5
        Points from the initial design before the surrogate is used. Points
        told without being asked count toward it.
    initial_design : {"sobol", "random"}, default "sobol"
        Scrambled Sobol or uniformly random initial points. The design depends
        only on the space, ``n_initial_points`` and ``random_state``, so runs
        with different surrogates and the same seed share it.
    n_candidates : int, default 50_000
        Sobol candidates scored per iteration. Discrete spaces with at most
        this many points are scored exhaustively instead.
    local_search : bool, default True
        Add neighbours of the best evaluated points to the candidates
        (``n_local_candidates`` in all, spread over the ``n_local_centers``
        best points; see :func:`~treebo.acquisition.local_candidates`).
    n_local_candidates : int, default 5_000
    n_local_centers : int, default 5
    acq_optimizer : {"auto", "sampling", "lbfgs"}, default "auto"
        ``"sampling"`` takes the best candidate; ``"lbfgs"`` also polishes the
        best candidates' real-valued coordinates with L-BFGS-B (useful only
        for smooth surrogates); ``"auto"`` uses ``"lbfgs"`` for the GP and
        ``"sampling"`` for tree models.
    surrogate_params : dict, optional
        Parameters passed to :func:`~treebo.surrogates.make_surrogate` when
        ``surrogate`` is a name.
    acquisition_params : dict, optional
        ``{"xi": 0.0}`` for EI and PI, ``{"kappa": 1.96}`` for LCB.
    failure_value : "worst" or float, default "worst"
        What the surrogate sees at failed evaluations: the worst (largest)
        finite value observed so far, or a fixed value in objective units.
        Failed points are never proposed again either way.
    y_transform : {"auto", "log", "standardize"}, default "auto"
        How values are turned into the surrogate's targets (see
        :func:`transform_targets`). ``"log"`` spreads out the values near the
        best one, which lets a tree ensemble resolve the region that matters;
        ``"standardize"`` is the plain affine map, better for the GP, whose
        smooth kernel fits the cusp ``"log"`` puts at the minimum badly.
        ``"auto"`` takes ``"standardize"`` for smooth surrogates (the GP) and
        ``"log"`` for everything else.
    random_state : int, numpy.random.Generator or None
        Makes the run reproducible: the same seed and the same told values
        give the same proposals.

    Attributes
    ----------
    space : Space
    trials : list of Trial
        Every proposed and told point, in order.
    """

    def __init__(self, dimensions: Any, surrogate: str | Surrogate = "bwo",
                 acquisition: str = "ei", *, n_initial_points: int = 5,
                 initial_design: str = "sobol", n_candidates: int = 50_000,
                 local_search: bool = True, n_local_candidates: int = 5_000,
                 n_local_centers: int = 5, acq_optimizer: str = "auto",
                 surrogate_params: dict | None = None, acquisition_params: dict | None = None,
                 failure_value: str | float = "worst", y_transform: str = "auto",
                 random_state: Any = None):
        self.space = dimensions if isinstance(dimensions, Space) else Space(dimensions)
        if isinstance(surrogate, str):
            self._surrogate = make_surrogate(surrogate, **(surrogate_params or {}))
            self.surrogate_name = surrogate
        elif isinstance(surrogate, Surrogate):
            if surrogate_params:
                raise ValueError("surrogate_params only applies when surrogate is a name; set "
                                 "the parameters on the instance instead")
            self._surrogate = clone(surrogate)
            self.surrogate_name = type(surrogate).__name__
        else:
            raise ValueError("surrogate must be a registered name or a Surrogate instance, got "
                             f"{surrogate!r}")
        self.acquisition = acquisition
        self.acquisition_params = acq.check_acquisition(acquisition, acquisition_params)
        self.n_initial_points = _check_positive_int(n_initial_points, "n_initial_points", 0)
        if initial_design not in ("sobol", "random"):
            raise ValueError(f"initial_design must be 'sobol' or 'random', got {initial_design!r}")
        self.initial_design = initial_design
        self.n_candidates = _check_positive_int(n_candidates, "n_candidates")
        self.local_search = bool(local_search)
        self.n_local_candidates = _check_positive_int(n_local_candidates, "n_local_candidates", 0)
        self.n_local_centers = _check_positive_int(n_local_centers, "n_local_centers")
        if acq_optimizer not in ("auto", "sampling", "lbfgs"):
            raise ValueError("acq_optimizer must be 'auto', 'sampling' or 'lbfgs', got "
                             f"{acq_optimizer!r}")
        self.acq_optimizer = acq_optimizer
        if not (failure_value == "worst" or (isinstance(failure_value, numbers.Real)
                                             and not isinstance(failure_value, bool)
                                             and math.isfinite(failure_value))):
            raise ValueError("failure_value must be 'worst' or a finite number, got "
                             f"{failure_value!r}")
        self.failure_value = failure_value
        if y_transform not in Y_TRANSFORMS:
            raise ValueError(f"y_transform must be one of {Y_TRANSFORMS}, got {y_transform!r}")
        self.y_transform = y_transform
        self.random_state = random_state
        design_rng, self._model_rng, self._acq_rng = _as_seed_sequence_children(random_state, 3)
        self._design = self._make_initial_design(design_rng)
        self._hash_weights = design_rng.standard_normal(self.space.n_columns)
        self.trials: list[Trial] = []

    # -- public API -------------------------------------------------------------------
    def ask(self) -> Any:
        """Propose the next point to evaluate.

        Returns
        -------
        point : list or dict
            A feasible point that has not been evaluated or proposed before.

        Raises
        ------
        SpaceExhausted
            If every point of a discrete space has been evaluated or proposed.
        """
        encoded, origin, fit_time, acq_time = self._propose()
        point = self.space.decode(encoded[None, :])[0]
        trial = Trial(number=len(self.trials), x=point, x_encoded=encoded, origin=origin,
                      fit_time=fit_time, acq_time=acq_time, asked_at=time.time())
        self.trials.append(trial)
        return point

    def tell(self, x: Any, y: Any, *, error: str | None = None) -> OptimizeResult:
        """Record the value of a point.

        Parameters
        ----------
        x : list or dict
            A point of the space, usually one returned by :meth:`ask`; points
            that were never asked are accepted too.
        y : float
            Its objective value. ``None``, NaN or infinity mark a failed
            evaluation.
        error : str, optional
            Error text; marks the evaluation as failed.

        Returns
        -------
        OptimizeResult
            The result so far.
        """
        encoded = self.space.encode([x])[0]
        value, failure = _as_value(y)
        if error is not None:
            failure = str(error)
        trial = self._pending_trial(x, encoded)
        if trial is None:
            given = dict(x) if isinstance(x, dict) else list(x)
            trial = Trial(number=len(self.trials), x=given, x_encoded=encoded, origin="user")
            self.trials.append(trial)
        trial.told_at = time.time()
        if failure is None:
            trial.status, trial.value, trial.error = "complete", value, None
        else:
            trial.status, trial.value, trial.error = "failed", None, failure
        return self.get_result()

    def get_result(self) -> OptimizeResult:
        """The result so far, as :class:`OptimizeResult`."""
        told = [t for t in self.trials if t.status != "pending"]
        complete = [t for t in told if t.status == "complete"]
        best = min(complete, key=lambda t: t.value) if complete else None
        return OptimizeResult(
            x=best.x if best else None,
            fun=best.value if best else math.nan,
            x_iters=[t.x for t in told],
            func_vals=np.array([t.value if t.status == "complete" else math.nan for t in told]),
            statuses=[t.status for t in told],
            errors=[t.error for t in told],
            fit_time=np.array([t.fit_time for t in told]),
            acq_time=np.array([t.acq_time for t in told]),
            space=self.space,
            n_failed=sum(t.status == "failed" for t in told),
            surrogate=self.surrogate_name,
            random_state=self.random_state,
            message="",
        )

    # -- proposals ----------------------------------------------------------------
    def _make_initial_design(self, rng: np.random.Generator) -> np.ndarray:
        n = self.n_initial_points
        if n == 0:
            return np.empty((0, self.space.n_columns))
        if self.initial_design == "sobol":
            raw = acq.sobol_candidates(n, self.space.n_columns, rng)
        else:
            raw = rng.random((n, self.space.n_columns))
        return self.space.snap(raw)

    def _pending_trial(self, x: Any, encoded: np.ndarray) -> Trial | None:
        # Match on the user-facing values: a real decoded from a candidate and
        # encoded again may differ from the candidate in the last bit.
        x = x if isinstance(x, dict) else list(x)
        for trial in self.trials:
            if trial.status == "pending" and (_same_point(trial.x, x)
                                              or np.array_equal(trial.x_encoded, encoded)):
                return trial
        return None

    def _seen(self) -> np.ndarray:
        if not self.trials:
            return np.empty((0, self.space.n_columns))
        return np.array([t.x_encoded for t in self.trials])

    def _unseen(self, X: np.ndarray) -> np.ndarray:
        X = X[acq.unique_rows(X, self._hash_weights)]
        return X[~acq.rows_in(X, self._seen(), self._hash_weights)]

    def _propose(self) -> tuple[np.ndarray, str, float, float]:
        n_complete = sum(t.status == "complete" for t in self.trials)
        if len(self.trials) < self.n_initial_points or n_complete == 0:
            design = self._unseen(self._design)
            if len(design):
                return design[0], "initial", 0.0, 0.0
            return self._random_unseen(), "random", 0.0, 0.0
        return self._propose_with_model()

    def _random_unseen(self) -> np.ndarray:
        space = self.space
        if space.cardinality <= self.n_candidates:
            pool = self._unseen(space.grid())
        else:
            pool = self._unseen(space.sample_encoded(1024, self._acq_rng))
        if len(pool) == 0:
            raise SpaceExhausted(f"all {int(space.cardinality)} points of the search space have "
                                 "been evaluated or proposed")
        return pool[self._acq_rng.integers(len(pool))]

    def _training_data(self) -> tuple[np.ndarray, np.ndarray]:
        told = [t for t in self.trials if t.status != "pending"]
        X = np.array([t.x_encoded for t in told])
        values = np.array([t.value if t.status == "complete" else math.nan for t in told])
        finite = np.isfinite(values)
        fill = np.max(values[finite]) if self.failure_value == "worst" else self.failure_value
        values = np.where(finite, values, fill)
        return X, values

    def _propose_with_model(self) -> tuple[np.ndarray, str, float, float]:
        X, values = self._training_data()
        kind = self.y_transform
        if kind == "auto":
            kind = "standardize" if getattr(self._surrogate, "_smooth", False) else "log"
        z = transform_targets(values, kind)

        start = time.perf_counter()
        model = clone(self._surrogate)
        if "random_state" in model.get_params():
            model.set_params(random_state=int(self._model_rng.integers(np.iinfo(np.int32).max)))
        model.fit(X, z)
        fit_time = time.perf_counter() - start

        start = time.perf_counter()
        complete = np.array([t.status == "complete" for t in self.trials if t.status != "pending"])
        best = float(np.min(z[complete]))
        candidates = self._unseen(self._candidates(X[complete], z[complete]))
        if len(candidates) == 0:
            return self._random_unseen(), "random", fit_time, time.perf_counter() - start
        prediction = model.predict_dist(candidates)
        scores = acq.acquisition_score(self.acquisition, prediction.mean, prediction.std, best,
                                       **self.acquisition_params)
        scores = np.where(np.isnan(scores), -np.inf, scores)
        chosen = candidates[self._argmax(scores)]
        if self._use_lbfgs(model):
            chosen = self._polish(model, candidates, scores, best)
        return chosen, "model", fit_time, time.perf_counter() - start

    def _candidates(self, X_complete: np.ndarray, z_complete: np.ndarray) -> np.ndarray:
        space = self.space
        if space.cardinality <= self.n_candidates:
            return space.grid()
        parts = [space.snap(acq.sobol_candidates(self.n_candidates, space.n_columns,
                                                 self._acq_rng))]
        if self.local_search and self.n_local_candidates > 0:
            order = np.argsort(z_complete, kind="stable")[: self.n_local_centers]
            per_center = max(1, self.n_local_candidates // len(order))
            parts.append(acq.local_candidates(space, X_complete[order], per_center,
                                              self._acq_rng))
        return np.vstack(parts)

    def _argmax(self, scores: np.ndarray) -> int:
        ties = np.flatnonzero(scores == scores.max())
        return int(ties[self._acq_rng.integers(len(ties))]) if len(ties) > 1 else int(ties[0])

    def _use_lbfgs(self, model: Surrogate) -> bool:
        has_real = any(isinstance(d, Real) for d in self.space.dimensions)
        if self.acq_optimizer == "sampling" or not has_real:
            return False
        return self.acq_optimizer == "lbfgs" or getattr(model, "_smooth", False)

    def _polish(self, model: Surrogate, candidates: np.ndarray, scores: np.ndarray,
                best: float, n_starts: int = 5) -> np.ndarray:
        """Refine the best candidates' real coordinates with L-BFGS-B on the score."""
        real_cols = np.concatenate([np.arange(self.space.columns_of(j).start,
                                              self.space.columns_of(j).stop)
                                    for j, d in enumerate(self.space.dimensions)
                                    if isinstance(d, Real)])
        starts = candidates[np.argsort(-scores, kind="stable")[:n_starts]]
        step = 1e-6

        def score(X: np.ndarray) -> np.ndarray:
            prediction = model.predict_dist(X)
            return acq.acquisition_score(self.acquisition, prediction.mean, prediction.std,
                                         best, **self.acquisition_params)

        def objective(u: np.ndarray, base: np.ndarray) -> tuple[float, np.ndarray]:
            # One batched prediction gives the value and a forward-difference gradient.
            X = np.repeat(base[None, :], len(u) + 1, axis=0)
            X[:, real_cols] = u
            direction = np.where(u + step <= 1.0, step, -step)
            X[np.arange(1, len(u) + 1), real_cols] = u + direction
            s = score(X)
            s = np.where(np.isfinite(s), s, -1e300)
            return -s[0], -(s[1:] - s[0]) / direction

        best_x, best_score = starts[0], score(starts[:1])[0]
        for base in starts:
            result = _scipy_minimize(objective, base[real_cols], args=(base,), jac=True,
                                     method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(real_cols),
                                     options={"maxiter": 50})
            x = base.copy()
            x[real_cols] = np.clip(result.x, 0.0, 1.0)
            x = self.space.snap(x[None, :])[0]
            value = score(x[None, :])[0]
            if value > best_score and len(self._unseen(x[None, :])):
                best_x, best_score = x, value
        return best_x


#: Accepted values of ``y_transform``.
Y_TRANSFORMS = ("auto", "log", "standardize")

#: Offset of the log transform, as a fraction of the range of the values.
LOG_OFFSET = 1e-3


def transform_targets(values: np.ndarray, kind: str = "log") -> np.ndarray:
    """Map objective values to the standardized targets a surrogate is fitted on.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Finite objective values (failed evaluations already imputed).
    kind : {"log", "standardize"}
        ``"standardize"``: ``(y - mean) / std``. ``"log"``: first
        ``log((y - min) / (max - min) + LOG_OFFSET)``, a monotone map that
        stretches the values near the minimum (the best value maps to
        ``log(1e-3)``, the worst to ``log(1.001)``), then standardized. Both
        keep the order of the values, so the incumbent stays the minimum.
        (The optimizer resolves ``"auto"`` before calling this.)

    Returns
    -------
    ndarray of shape (n,)
        Mean 0 and standard deviation 1, or all zeros when the values are
        constant.
    """
    if kind not in ("log", "standardize"):
        raise ValueError(f"kind must be 'log' or 'standardize', got {kind!r}")
    values = np.asarray(values, dtype=float)
    span = values.max() - values.min()
    if kind == "log" and span > 0:
        values = np.log((values - values.min()) / span + LOG_OFFSET)
    scale = values.std()
    return (values - values.mean()) / (scale if scale > 0 else 1.0)


def _same_point(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):  # e.g. array-valued comparisons
        return False


def _as_value(y: Any) -> tuple[float | None, str | None]:
    """(value, None) for a finite number, (None, reason) otherwise."""
    if y is None:
        return None, "objective returned None"
    if isinstance(y, (np.ndarray,)) and y.size == 1:
        y = y.reshape(-1)[0]
    if isinstance(y, bool) or not isinstance(y, (numbers.Real, np.floating, np.integer)):
        return None, f"objective returned {type(y).__name__} {y!r}, not a number"
    y = float(y)
    if not math.isfinite(y):
        return None, f"objective returned {y!r}"
    return y, None


def minimize(func: Callable[[Any], float], dimensions: Any, n_calls: int = 100, *,
             surrogate: str | Surrogate = "bwo", acquisition: str = "ei",
             n_initial_points: int = 5, initial_design: str = "sobol",
             n_candidates: int = 50_000, local_search: bool = True,
             acq_optimizer: str = "auto", surrogate_params: dict | None = None,
             acquisition_params: dict | None = None, failure_value: str | float = "worst",
             y_transform: str = "auto", x0: Sequence[Any] | None = None,
             y0: Sequence[float] | None = None,
             callback: Callable | Iterable[Callable] | None = None,
             random_state: Any = None, verbose: bool = False) -> OptimizeResult:
    """Minimize a black-box function with a tree-ensemble surrogate.

    Parameters
    ----------
    func : callable
        ``func(x) -> float`` with ``x`` a list (or a dict, when the space was
        given as a dict) of values. An exception, ``None``, NaN or infinity
        gives a failed evaluation; the run goes on.
    dimensions : Space, list or dict of dimensions
        The search space.
    n_calls : int, default 100
        Number of evaluations of ``func``, the initial design included.
    surrogate, acquisition, n_initial_points, initial_design, n_candidates, local_search, \
acq_optimizer, surrogate_params, acquisition_params, failure_value, y_transform, \
random_state
        As for :class:`Optimizer`.
    x0 : list of points, optional
        Points to evaluate (or, with ``y0``, to tell) before anything else.
        They count toward ``n_initial_points``; evaluated ones count toward
        ``n_calls``.
    y0 : list of float, optional
        Known values of ``x0``.
    callback : callable or list of callables, optional
        Called with the :class:`OptimizeResult` after every evaluation; a
        return value of ``True`` stops the run.
    verbose : bool, default False
        Print one line per evaluation.

    Returns
    -------
    OptimizeResult
        ``x``, ``fun``, ``x_iters``, ``func_vals``, ``statuses``, ``errors``,
        ``fit_time``, ``acq_time``, ``space``, ``message``.
    """
    n_calls = _check_positive_int(n_calls, "n_calls")
    if not callable(func):
        raise ValueError(f"func must be callable, got {func!r}")
    callbacks = _as_callbacks(callback)
    optimizer = Optimizer(dimensions, surrogate, acquisition, n_initial_points=n_initial_points,
                          initial_design=initial_design, n_candidates=n_candidates,
                          local_search=local_search, acq_optimizer=acq_optimizer,
                          surrogate_params=surrogate_params,
                          acquisition_params=acquisition_params, failure_value=failure_value,
                          y_transform=y_transform, random_state=random_state)
    x0 = list(x0) if x0 is not None else []
    if y0 is not None:
        y0 = list(y0)
        if len(y0) != len(x0):
            raise ValueError(f"y0 has {len(y0)} values but x0 has {len(x0)} points")
        for x, y in zip(x0, y0):
            optimizer.tell(x, y)
        x0 = []
    for x in x0:
        optimizer.space.encode([x])  # fail early on an infeasible x0

    message = f"reached n_calls={n_calls}"
    result = optimizer.get_result()
    for call in range(n_calls):
        try:
            x = x0[call] if call < len(x0) else optimizer.ask()
        except SpaceExhausted as exhausted:
            message = str(exhausted)
            break
        value, error = _evaluate(func, x)
        result = optimizer.tell(x, value, error=error)
        if verbose:
            _report(call, n_calls, optimizer.trials, result)
        if any(cb(result) is True for cb in callbacks):
            message = f"stopped by a callback after {call + 1} evaluations"
            break
    result = optimizer.get_result()
    result.message = message
    if verbose:
        print(f"done: {message}; best f(x) = {result.fun:.6g} at x = {result.x}")
    return result


def _evaluate(func: Callable, x: Any) -> tuple[Any, str | None]:
    try:
        return func(x), None
    except Exception as error:  # noqa: BLE001 - any failure of user code is a failed trial
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        return None, text


def _as_callbacks(callback: Any) -> list[Callable]:
    if callback is None:
        return []
    callbacks = [callback] if callable(callback) else list(callback)
    for cb in callbacks:
        if not callable(cb):
            raise ValueError(f"callback must be callable or a list of callables, got {cb!r}")
    return callbacks


def _report(call: int, n_calls: int, trials: list[Trial], result: OptimizeResult) -> None:
    trial = next(t for t in reversed(trials) if t.status != "pending")
    shown = f"{trial.value:.6g}" if trial.status == "complete" else f"failed ({trial.error})"
    timing = (f"  fit {trial.fit_time:.2f}s acq {trial.acq_time:.2f}s"
              if trial.origin == "model" else f"  [{trial.origin}]")
    print(f"call {call + 1:>4}/{n_calls}  f(x) = {shown:<14} best = {result.fun:.6g}{timing}",
          file=sys.stdout, flush=True)
