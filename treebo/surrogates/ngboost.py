"""NGBoost surrogate: natural-gradient boosting of a Normal predictive distribution.

NGBoost (Duan et al. 2020) fits the two parameters ``theta = (mu, log sigma)``
of a Normal by gradient boosting on the log score, stepping along the natural
gradient ``I(theta)^-1 grad S`` (``I = diag(1 / sigma^2, 2)``), one regression
tree per parameter and boosting stage. The fitted model gives one predictive
Normal per input:

    theta(x) = theta_0 - learning_rate * sum_m rho_m * f_m(x),

with ``theta_0`` the marginal maximum-likelihood fit, ``f_m`` the stage-``m``
trees and ``rho_m`` the stage's line-search scaling.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils._param_validation import Interval

try:
    from ngboost import NGBRegressor
    from ngboost.distns import Normal, RegressionDistn
    from ngboost.scores import LogScore
except ImportError as _error:  # an optional dependency: say which extra brings it
    raise ImportError(
        f"treebo.surrogates.ngboost needs ngboost ({_error}); install it "
        "with: pip install 'treebo[ngboost]'",
        name=_error.name,
    ) from _error

from .base import RANDOM_STATE, Prediction, Surrogate

__all__ = ["NGBoostSurrogate"]


_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


class _NormalLogDensity:
    """``logpdf`` of ``N(loc, scale^2)``, the one method ngboost's Normal log score calls."""

    __slots__ = ("loc", "scale")

    def __init__(self, loc: np.ndarray, scale: np.ndarray):
        self.loc = loc
        self.scale = scale

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        z = (y - self.loc) / self.scale
        return -0.5 * z * z - np.log(self.scale) - _HALF_LOG_2PI


class _Normal(Normal):
    """ngboost's Normal without a frozen ``scipy.stats.norm`` per instance.

    The booster builds a distribution object about six times per stage (the
    gradient and every step of the line search); building scipy's frozen
    distribution took 40% of the fitting time at N = 200. Scores, gradients
    and the Fisher information are inherited unchanged; ``mean`` and ``std``
    are given here so that ``model_.predict`` and ``model_.pred_dist(X).std()``
    keep working (other scipy methods, e.g. ``ppf``, are not available).
    """

    def __init__(self, params: np.ndarray):
        RegressionDistn.__init__(self, params)
        self.loc = params[0]
        self.scale = np.exp(params[1])
        self.var = self.scale**2
        self.dist = _NormalLogDensity(self.loc, self.scale)

    def mean(self) -> np.ndarray:
        return self.loc

    def std(self) -> np.ndarray:
        return self.scale


class NGBoostSurrogate(Surrogate):
    """NGBoost with a Normal distribution and decision-tree base learners.

    The predictive Normal ``N(mu(x), sigma(x)^2)`` gives the mean and the
    **aleatoric** variance ``sigma(x)^2``, which follows noise that changes
    with ``x``. The **epistemic** variance is 0: NGBoost is one model, fitted
    by maximum likelihood, and has no distribution over functions, so nothing
    tells it that it is uncertain far from the data. This is the point Kim &
    Choi (2022) make against it as a Bayesian-optimization surrogate; the
    acquisition then sees only the noise that the model attributes to each
    region, which shrinks wherever the data are fitted closely.

    Targets are standardized before boosting and predictions mapped back (by
    the base class), so the settings do not depend on the scale of ``y``.
    Constant targets (and a single point) give a constant prediction with
    zero variance, since the marginal fit would have ``sigma = 0``.

    The defaults are chosen for SMBO, where the surrogate is refitted at every
    iteration on N = 5..500 points and predicts 55,000 candidates. The
    library's 500 stages at learning rate 0.01 cost several seconds per fit
    and overfit ``sigma`` at these N: on Friedman-1 with N = 200 the held-out
    NLL is worse than after 100 stages at 0.02, which fit in a fifth of the
    time; more stages or a larger rate shrink ``sigma`` further (README,
    "NGBoost and BART settings"; ``benchmarks/ngboost_bart_settings.py``).
    Leaves of one point (``min_samples_leaf=1``) found better points in short
    SMBO runs than leaves of five, at a small cost in held-out NLL for N = 50.
    Prediction walks the fitted trees directly on float32 inputs, one
    vectorized pass per tree, and gives exactly the library's ``pred_dist``.

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting stages (each fits one tree for ``mu`` and one for
        ``log sigma``). The library default is 500.
    learning_rate : float, default 0.02
        Shrinkage of every stage. The library default is 0.01.
    max_depth : int, default 3
        Depth of the base-learner trees (the library's default learner).
    min_samples_leaf : int, default 1
        Minimum number of training points in a base-learner leaf (the
        library's default learner uses 1).
    minibatch_frac : float in (0, 1], default 1.0
        Fraction of the points, drawn without replacement, that each stage is
        fitted on. When it would leave no point (tiny N), all points are used.
    random_state : int, numpy.random.Generator or None
        Seeds the base learners and the minibatches.

    Attributes
    ----------
    model_ : ngboost.NGBRegressor or None
        The fitted booster, on standardized targets; None for constant targets.
    y_mean_, y_scale_ : float
        The affine map from standardized targets back to ``y``.
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "minibatch_frac": [Interval(Real, 0, 1, closed="right")],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        learning_rate: float = 0.02,
        max_depth: int = 3,
        min_samples_leaf: int = 1,
        minibatch_frac: float = 1.0,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.minibatch_frac = minibatch_frac
        self.random_state = random_state

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        # None is what constant targets, which fit nothing, leave.
        self.model_: NGBRegressor | None = None
        super()._fit(X, y)

    def _fit_standardized(self, X: np.ndarray, z: np.ndarray) -> None:
        rng = np.random.default_rng(self.random_state)
        tree_seed, batch_seed = (int(s) for s in rng.integers(np.iinfo(np.int32).max, size=2))
        fraction = float(self.minibatch_frac)
        if int(fraction * len(z)) < 1:
            fraction = 1.0
        # A seeded tree: DecisionTreeRegressor permutes features even with
        # max_features=None, and the library's default learner is unseeded.
        base = DecisionTreeRegressor(
            criterion="squared_error",
            max_depth=int(self.max_depth),
            min_samples_leaf=int(self.min_samples_leaf),
            random_state=tree_seed,
        )
        model = NGBRegressor(
            Dist=_Normal,
            Score=LogScore,
            Base=base,
            natural_gradient=True,
            n_estimators=int(self.n_estimators),
            learning_rate=float(self.learning_rate),
            minibatch_frac=fraction,
            col_sample=1.0,
            verbose=False,
            random_state=batch_seed,
        ).fit(X, z)
        self.model_ = model
        # Per stage and parameter: the leaf values of the tree already scaled
        # by -learning_rate * rho_m, so prediction is a sum of table look-ups.
        step = -float(self.learning_rate)
        self._stages = [
            [(tree.tree_, step * rho * tree.tree_.value[:, 0, 0]) for tree in trees]
            for trees, rho in zip(model.base_models, model.scalings)
        ]
        self._theta0 = np.asarray(model.init_params, dtype=np.float64)

    def _predict_standardized(self, X: np.ndarray) -> Prediction:
        n = X.shape[0]
        # Trees compare float32 features, as DecisionTreeRegressor.predict does.
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        loc = np.full(n, self._theta0[0])
        log_scale = np.full(n, self._theta0[1])
        for (loc_tree, loc_values), (scale_tree, scale_values) in self._stages:
            loc += loc_values[loc_tree.apply(X32)]
            log_scale += scale_values[scale_tree.apply(X32)]
        aleatoric = np.exp(2.0 * log_scale)
        return Prediction(mean=loc, variance=aleatoric, epistemic=np.zeros(n), aleatoric=aleatoric)
