"""Gaussian-process baseline: Matérn 5/2 with one length scale per input, plus noise.

Hyperparameters (signal variance, length scales, noise variance) maximize the
log marginal likelihood with L-BFGS-B from several starts; scikit-learn's
``GaussianProcessRegressor`` does the fitting, on targets the base class
standardizes. ``epistemic`` is the posterior variance of the latent function,
``aleatoric`` the fitted noise variance.
"""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
from sklearn.utils._param_validation import Interval, StrOptions

from .base import RANDOM_STATE, Prediction, Surrogate

__all__ = ["GaussianProcessSurrogate"]

# Rows of the cross-covariance matrix built at once when predicting, so that
# 50,000 candidates against 1,000 training points stay within ~80 MB.
_CHUNK = 10_000


class GaussianProcessSurrogate(Surrogate):
    """Gaussian process with a Matérn 5/2 ARD kernel and learned white noise.

    Parameters
    ----------
    n_restarts : int, default 2
        Extra L-BFGS-B starts of the marginal-likelihood fit, drawn
        log-uniformly within the bounds.
    length_scale_bounds : (float, float) or "fixed", default (1e-2, 1e2)
        Bounds of every length scale, in encoded units (inputs in [0, 1]).
    noise_bounds : (float, float) or "fixed", default (1e-8, 1.0)
        Bounds of the noise variance on the standardized target scale.
    random_state : int, numpy.random.Generator or None
        Seeds the restarts.

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
        "length_scale_bounds": ["array-like", StrOptions({"fixed"})],
        "noise_bounds": ["array-like", StrOptions({"fixed"})],
        "random_state": RANDOM_STATE,
    }

    smooth = True
    # Fitted to constant targets, a GP still has its prior's variance away
    # from the data; the acquisition, which adds no exploration terms for
    # smooth models, needs it to rank candidates.
    _fit_constant_targets = True

    def __init__(self, n_restarts: int = 2, *, length_scale_bounds: tuple = (1e-2, 1e2),
                 noise_bounds: tuple = (1e-8, 1.0), random_state: Any = None):
        self.n_restarts = n_restarts
        self.length_scale_bounds = length_scale_bounds
        self.noise_bounds = noise_bounds
        self.random_state = random_state

    def _fit_standardized(self, X: np.ndarray, z: np.ndarray) -> None:
        rng = np.random.default_rng(self.random_state)
        n_features = X.shape[1]
        kernel = (ConstantKernel(1.0, (1e-2, 1e2))
                  * Matern(length_scale=np.full(n_features, 0.5),
                           length_scale_bounds=self.length_scale_bounds, nu=2.5)
                  + WhiteKernel(1e-3, self.noise_bounds))
        model = GaussianProcessRegressor(kernel, alpha=1e-10, normalize_y=False,
                                         n_restarts_optimizer=self.n_restarts,
                                         random_state=int(rng.integers(np.iinfo(np.int32).max)))
        with warnings.catch_warnings():
            # Hitting a bound (e.g. the noise floor on a noise-free function)
            # is expected and not actionable for the user.
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, z)
        self.kernel_ = model.kernel_
        self._signal = model.kernel_.k1
        self._noise_z = float(model.kernel_.k2.noise_level)
        self.noise_variance_ = self._noise_z * self.y_scale_**2
        self._X_train = model.X_train_
        self._L = model.L_
        self._alpha = model.alpha_

    def _predict_standardized(self, X: np.ndarray) -> Prediction:
        n = X.shape[0]
        mean_z = np.empty(n)
        var_z = np.empty(n)
        for start in range(0, n, _CHUNK):
            part = X[start:start + _CHUNK]
            cross = self._signal(part, self._X_train)
            mean_z[start:start + _CHUNK] = cross @ self._alpha
            v = solve_triangular(self._L, cross.T, lower=True, check_finite=False)
            var_z[start:start + _CHUNK] = self._signal.diag(part) - np.einsum("ij,ij->j", v, v)
        epistemic = np.maximum(var_z, 0.0)
        aleatoric = np.full(n, self._noise_z)
        return Prediction(mean=mean_z, variance=epistemic + aleatoric, epistemic=epistemic,
                          aleatoric=aleatoric)
