"""Gaussian-process baseline: Matérn 5/2 with one length scale per input, plus noise.

Hyperparameters (signal variance, length scales, noise variance) maximize the
log marginal likelihood with L-BFGS-B from several starts, on targets the base
class standardizes. Up to ``max_fit_samples`` points, scikit-learn's
``GaussianProcessRegressor`` does the fitting. With more points the marginal
likelihood is maximized, all starts, on a random subset of
``max_fit_samples`` of them (:func:`_fit_hyperparameters`, analytic
gradients); the best optimum is then refined on every point with a few
L-BFGS-B iterations, and the posterior conditions on every point. The fit
then costs what the restarts cost at ``max_fit_samples`` points plus a few
factorizations of the whole kernel matrix. ``epistemic`` is the posterior
variance of the latent function, ``aleatoric`` the fitted noise variance.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular
from scipy.linalg.lapack import dpotri
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
from sklearn.utils._param_validation import Interval, StrOptions

from .base import RANDOM_STATE, Prediction, Surrogate

__all__ = ["GaussianProcessSurrogate"]

# Rows of the cross-covariance matrix built at once when predicting, so that
# 50,000 candidates against 1,000 training points stay within ~80 MB.
_CHUNK = 10_000

# Bounds of the signal variance and the starting values of the three kinds of
# hyperparameters (standardized targets, inputs in [0, 1]).
_SIGNAL_BOUNDS = (1e-2, 1e2)
_SIGNAL_START, _LENGTH_START, _NOISE_START = 1.0, 0.5, 1e-3
# Added to the kernel matrix's diagonal besides the fitted noise, as
# scikit-learn's ``alpha``, so that a noise at its floor still factorizes.
_JITTER = 1e-10
_SQRT5 = math.sqrt(5.0)
# L-BFGS-B iterations that refine the subset's hyperparameters on every
# point: at 1,000 points in 10-D, each costs about 0.05 s (a Cholesky
# factorization and an inverse), and 5 bring the held-out log likelihood
# close to that of a full fit (docs/design.md, "The GP at scale").
_REFINE_ITERATIONS = 5


class GaussianProcessSurrogate(Surrogate):
    """Gaussian process with a Matérn 5/2 ARD kernel and learned white noise.

    Parameters
    ----------
    n_restarts : int, default 2
        Extra L-BFGS-B starts of the marginal-likelihood fit, drawn
        log-uniformly within the bounds.
    max_fit_samples : int or None, default 200
        Most points the marginal likelihood is maximized on from every start.
        With more, the starts run on a random subset of this many points
        (drawn from ``random_state``), the best optimum is refined on all
        points by 5 L-BFGS-B iterations, and the posterior conditions on all
        of them; this bounds the cost of the restarts. None runs every start
        on every point. A prediction's cost still grows as the square of the
        number of points (about 1.4 s for 57,000 candidates and 1,000 points
        in 10-D on one core).
    length_scale_bounds : (float, float) or "fixed", default (1e-2, 1e2)
        Bounds of every length scale, in encoded units (inputs in [0, 1]).
    noise_bounds : (float, float) or "fixed", default (1e-8, 1.0)
        Bounds of the noise variance on the standardized target scale.
    random_state : int, numpy.random.Generator or None
        Seeds the restarts and the subset.

    Attributes
    ----------
    kernel_ : sklearn kernel
        The fitted kernel (constant * Matérn + white noise).
    noise_variance_ : float
        Fitted noise variance, in squared units of ``y``.
    y_mean_, y_scale_ : float
        The affine map from standardized targets back to ``y`` (``y_scale_``
        is 1 for constant targets).
    """

    _parameter_constraints: dict = {
        "n_restarts": [Interval(Integral, 0, None, closed="left")],
        "max_fit_samples": [Interval(Integral, 1, None, closed="left"), None],
        "length_scale_bounds": ["array-like", StrOptions({"fixed"})],
        "noise_bounds": ["array-like", StrOptions({"fixed"})],
        "random_state": RANDOM_STATE,
    }

    smooth = True
    # Fitted to constant targets, a GP still has its prior's variance away
    # from the data; the acquisition, which adds no exploration terms for
    # smooth models, needs it to rank candidates.
    _fit_constant_targets = True

    def __init__(
        self,
        n_restarts: int = 2,
        *,
        max_fit_samples: int | None = 200,
        length_scale_bounds: tuple = (1e-2, 1e2),
        noise_bounds: tuple = (1e-8, 1.0),
        random_state: Any = None,
    ):
        self.n_restarts = n_restarts
        self.max_fit_samples = max_fit_samples
        self.length_scale_bounds = length_scale_bounds
        self.noise_bounds = noise_bounds
        self.random_state = random_state

    def _fit_standardized(self, X: np.ndarray, z: np.ndarray) -> None:
        rng = np.random.default_rng(self.random_state)
        if self.max_fit_samples is None or len(X) <= self.max_fit_samples:
            self._fit_all(X, z, rng)
        else:
            self._fit_subset(X, z, rng)
        self.noise_variance_ = self._noise_z * self.y_scale_**2

    def _kernel(self, signal: float, length_scale: Any, noise: float) -> Any:
        return ConstantKernel(signal, _SIGNAL_BOUNDS) * Matern(
            length_scale=length_scale, length_scale_bounds=self.length_scale_bounds, nu=2.5
        ) + WhiteKernel(noise, self.noise_bounds)

    def _fit_all(self, X: np.ndarray, z: np.ndarray, rng: np.random.Generator) -> None:
        """scikit-learn's fit on every point; its kernel gives the cross-covariances."""
        kernel = self._kernel(_SIGNAL_START, np.full(X.shape[1], _LENGTH_START), _NOISE_START)
        model = GaussianProcessRegressor(
            kernel,
            alpha=_JITTER,
            normalize_y=False,
            n_restarts_optimizer=self.n_restarts,
            random_state=int(rng.integers(np.iinfo(np.int32).max)),
        )
        with warnings.catch_warnings():
            # Hitting a bound (e.g. the noise floor on a noise-free function)
            # is expected and not actionable for the user.
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, z)
        self.kernel_ = model.kernel_
        self._signal = model.kernel_.k1
        self._noise_z = float(model.kernel_.k2.noise_level)
        self._X_train = model.X_train_
        self._L = model.L_
        self._alpha = model.alpha_
        self._length_scale: np.ndarray | None = None

    def _fit_subset(self, X: np.ndarray, z: np.ndarray, rng: np.random.Generator) -> None:
        """Hyperparameters from a random subset refined on every point, posterior on every point."""
        subset = np.sort(rng.choice(len(X), size=self.max_fit_samples, replace=False))
        start, bounds = self._start_and_bounds(X.shape[1])
        starts = [start] + [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(self.n_restarts)]
        log_params = _fit_hyperparameters(X[subset], z[subset], starts, bounds)
        log_params = _fit_hyperparameters(X, z, [log_params], bounds, _REFINE_ITERATIONS)
        signal, length_scale, noise = _unpack(log_params)
        self.kernel_ = self._kernel(signal, length_scale, noise)
        self._noise_z = noise
        self._length_scale = length_scale
        self._signal_variance = signal
        self._X_train = X / length_scale
        gram = signal * _matern52(self._X_train, self._X_train)
        self._L = _cholesky_with_jitter(gram, noise + _JITTER)
        self._alpha = cho_solve((self._L, True), z, check_finite=False)

    def _start_and_bounds(self, n_features: int) -> tuple[np.ndarray, np.ndarray]:
        """Log-scale starting point and bounds; a fixed hyperparameter's bounds are its start."""
        start = np.log(np.r_[_SIGNAL_START, np.full(n_features, _LENGTH_START), _NOISE_START])
        rows = [_SIGNAL_BOUNDS]
        rows += [self.length_scale_bounds] * n_features
        rows += [self.noise_bounds]
        bounds = np.array(
            [(np.nan, np.nan) if isinstance(b, str) else np.log(np.asarray(b, float)) for b in rows]
        )
        fixed = np.isnan(bounds[:, 0])
        bounds[fixed] = start[fixed, None]
        return start, bounds

    def _predict_standardized(self, X: np.ndarray) -> Prediction:
        if self._length_scale is None:
            mean_z, var_z = self._posterior(X, _CHUNK, self._sklearn_cross)
        else:
            # A triangular solve gets faster per row with more right-hand
            # sides: about 16 MB of cross-covariances at a time.
            rows = max(64, 2**21 // len(self._X_train))
            mean_z, var_z = self._posterior(X, rows, self._cross)
        epistemic = np.maximum(var_z, 0.0)
        aleatoric = np.full(X.shape[0], self._noise_z)
        return Prediction(
            mean=mean_z, variance=epistemic + aleatoric, epistemic=epistemic, aleatoric=aleatoric
        )

    def _sklearn_cross(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._signal(X, self._X_train), self._signal.diag(X)

    def _cross(self, X: np.ndarray) -> tuple[np.ndarray, float]:
        cross = np.empty((X.shape[0], self._X_train.shape[0]))
        # Blocks of about 1 MB stay in cache through the several passes of
        # the Matérn formula.
        step = max(64, 2**17 // self._X_train.shape[0])
        for start in range(0, X.shape[0], step):
            block = _matern52(X[start : start + step] / self._length_scale, self._X_train)
            np.multiply(block, self._signal_variance, out=cross[start : start + step])
        return cross, self._signal_variance

    def _posterior(
        self, X: np.ndarray, rows: int, cross_and_prior: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and latent variance at ``X`` (n, D), ``rows`` points at a time."""
        n = X.shape[0]
        mean_z = np.empty(n)
        var_z = np.empty(n)
        for start in range(0, n, rows):
            cross, prior = cross_and_prior(X[start : start + rows])
            mean_z[start : start + rows] = cross @ self._alpha
            v = solve_triangular(self._L, cross.T, lower=True, check_finite=False, overwrite_b=True)
            var_z[start : start + rows] = prior - np.einsum("ij,ij->j", v, v)
        return mean_z, var_z


def _unpack(log_params: np.ndarray) -> tuple[float, np.ndarray, float]:
    """(signal variance, length scales, noise variance) from the log-scale vector."""
    params = np.exp(log_params)
    return float(params[0]), params[1:-1], float(params[-1])


def _matern52(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Matérn 5/2 correlation of the rows of ``A`` (m, D) and ``B`` (n, D), in length-scale units.

    Squared distances come from one matrix product, ``|a|^2 + |b|^2 - 2 a.b``;
    their rounding error near 0 (about ``1e-16 |a|^2``) moves the correlation,
    which is flat there to second order, by far less than the jitter.
    """
    out = A @ (-2.0 * B.T)
    out += (A * A).sum(axis=1)[:, None]
    out += (B * B).sum(axis=1)[None, :]
    np.maximum(out, 0.0, out=out)
    np.sqrt(out, out=out)
    out *= _SQRT5
    # (1 + r + r^2 / 3) exp(-r) with r = sqrt(5) d, in place.
    decay = np.negative(out)
    np.exp(decay, out=decay)
    poly = out * out
    poly *= 1.0 / 3.0
    poly += out
    poly += 1.0
    poly *= decay
    return poly


def _cholesky_with_jitter(gram: np.ndarray, diagonal: float) -> np.ndarray:
    """Lower Cholesky factor of ``gram + d I``, ``d`` from ``diagonal`` up tenfold until it factors.

    Points closer together than the fitted length scales resolve (more likely
    with every point than with the subset the noise was fitted on) can leave
    the matrix numerically singular at the noise floor.
    """
    for _ in range(10):
        matrix = gram.copy()
        matrix[np.diag_indices_from(matrix)] += diagonal
        try:
            return cholesky(matrix, lower=True, check_finite=False)
        except LinAlgError:
            diagonal *= 10.0
    raise LinAlgError(
        f"the kernel matrix is not positive definite even with a diagonal of {diagonal:g}"
    )


def _negative_log_likelihood(
    log_params: np.ndarray, X: np.ndarray, z: np.ndarray
) -> tuple[float, np.ndarray]:
    """Negative log marginal likelihood of ``z`` (n,) at ``X`` (n, D), and its gradient.

    ``log_params`` is (log signal variance, log length scales (D), log noise
    variance). With ``K = s C + (noise + jitter) I``, ``alpha = K^-1 z`` and
    ``W = alpha alpha^T - K^-1``, the derivative of the log likelihood by a
    log hyperparameter ``t`` is ``tr(W dK/dt) / 2`` (Rasmussen & Williams,
    2006, eq. 5.9): ``dK/dlog s = s C``, ``dK/dlog noise = noise I`` and
    ``dK/dlog l_d = s (5/3) (1 + r) exp(-r) (x_d - x'_d)^2 / l_d^2`` with
    ``r = sqrt(5) |(x - x') / l|``, whose trace against ``W`` is one matrix
    product for all D length scales.
    """
    signal, length_scale, noise = _unpack(log_params)
    n = len(z)
    scaled = X / length_scale
    r = (scaled * scaled).sum(axis=1)[:, None] - 2.0 * (scaled @ scaled.T)
    r += (scaled * scaled).sum(axis=1)[None, :]
    np.maximum(r, 0.0, out=r)
    r = _SQRT5 * np.sqrt(r)
    decay = np.exp(-r)
    corr = (1.0 + r + r * r / 3.0) * decay
    K = signal * corr
    K[np.diag_indices(n)] += noise + _JITTER
    try:
        L = cholesky(K, lower=True, check_finite=False)
    except LinAlgError:
        return np.inf, np.zeros_like(log_params)
    alpha = cho_solve((L, True), z, check_finite=False)
    value = 0.5 * z @ alpha + np.log(np.diag(L)).sum() + 0.5 * n * math.log(2.0 * math.pi)
    W = np.outer(alpha, alpha)
    W -= _inverse_from_cholesky(L)
    H = W * (signal * (5.0 / 3.0) * (1.0 + r) * decay)
    # sum_ij H_ij (a_id - a_jd)^2 = 2 sum_i a_id^2 h_i - 2 a_d^T H a_d for symmetric H.
    length_grad = H.sum(axis=1) @ scaled**2 - (scaled * (H @ scaled)).sum(axis=0)
    grad = np.r_[-0.5 * signal * (W * corr).sum(), -length_grad, -0.5 * noise * np.trace(W)]
    return float(value), grad


def _inverse_from_cholesky(L: np.ndarray) -> np.ndarray:
    """``(L L^T)^-1`` from its lower Cholesky factor ``L`` (LAPACK potri: a third of two solves)."""
    # potri fills the lower triangle; the upper one keeps L's zeros.
    inverse, info = dpotri(L, lower=1)
    if info != 0:
        raise LinAlgError(f"potri failed with info {info}")
    diagonal = np.diag(inverse).copy()
    inverse += inverse.T
    inverse[np.diag_indices_from(inverse)] = diagonal
    return inverse


def _fit_hyperparameters(
    X: np.ndarray, z: np.ndarray, starts: list, bounds: np.ndarray, maxiter: int = 15_000
) -> np.ndarray:
    """Log hyperparameters maximizing the marginal likelihood: the best of L-BFGS-B from each start.

    Parameters
    ----------
    X : ndarray of shape (n, D)
    z : ndarray of shape (n,)
        Standardized targets.
    starts : list of ndarray of shape (D + 2,)
        Log (signal variance, length scales, noise variance) to start from.
    bounds : ndarray of shape (D + 2, 2)
        Log bounds; equal bounds hold a hyperparameter fixed (at its value
        in the first start).
    maxiter : int, default 15_000
        L-BFGS-B iterations per start.

    Returns
    -------
    ndarray of shape (D + 2,)
        The optimum with the largest likelihood.
    """
    free = bounds[:, 0] < bounds[:, 1]
    best, best_value = starts[0], np.inf

    def objective(u: np.ndarray) -> tuple[float, np.ndarray]:
        full = starts[0].copy()
        full[free] = u
        value, grad = _negative_log_likelihood(full, X, z)
        return value, grad[free]

    for point in starts:
        if not free.any():
            break
        result = minimize(
            objective,
            point[free],
            jac=True,
            method="L-BFGS-B",
            bounds=bounds[free],
            options={"maxiter": maxiter},
        )
        if result.fun < best_value:
            best = starts[0].copy()
            best[free] = result.x
            best_value = result.fun
    return best
