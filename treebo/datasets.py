"""The one-dimensional regression examples of Kim & Choi (2022), Figures 1, 7 and 8.

Each example is a handful of noisy observations of a known function and a
test grid of 201 points on which the surrogates' predictive Normals are drawn
and compared with a Gaussian process (the paper's Table 2). They follow the
paper's official code (``problems.md`` §9):

========  =========================================  ======================  ===============
name      training inputs                            targets                 test grid
========  =========================================  ======================  ===============
``few``   x = -3, -1, 0.5, 1.5, 4.95                 sin x + 0.2 eps         201 on [-5, 5]
``many``  50 scrambled Sobol points on [-5, 5]       sin x + 0.2 eps         201 on [-5, 5]
``cubic`` 10 scrambled Sobol points on [-7.5, 7.5]   x^3 + 100 eps           201 on [-10, 10]
========  =========================================  ======================  ===============

``eps`` is ``numpy.random.RandomState(noise_seed).randn(n, 1)`` with
``noise_seed=42`` as in the paper, and the Sobol points come from qmcpy's
``Sobol(1, seed=42, graycode=True)`` (in qmcpy 2.x: ``DigitalNetB2(1, seed=42,
order="GRAY")``). qmcpy's randomization changed between versions, so the
``many`` and ``cubic`` inputs need not be those the paper drew in 2022.

>>> from treebo.datasets import make_1d_example
>>> example = make_1d_example("few")
>>> example.X_train.ravel()
array([-3.  , -1.  ,  0.5 ,  1.5 ,  4.95])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .surrogates import Prediction, Surrogate

__all__ = ["Example1D", "make_1d_example", "EXAMPLES_1D"]

#: Names accepted by :func:`make_1d_example`, in the order of the paper's figures.
EXAMPLES_1D = ("few", "many", "cubic")

_Spec = tuple[
    Callable[[np.ndarray], np.ndarray],
    float,
    tuple[float, float],
    np.ndarray | tuple[int, tuple[float, float]],
]

# name -> (function, noise std, test-grid domain, training inputs: fixed array or
# (number of Sobol points, Sobol domain))
_SPECS: dict[str, _Spec] = {
    "few": (np.sin, 0.2, (-5.0, 5.0), np.array([-3.0, -1.0, 0.5, 1.5, 4.95])),
    "many": (np.sin, 0.2, (-5.0, 5.0), (50, (-5.0, 5.0))),
    "cubic": (lambda x: x**3, 100.0, (-10.0, 10.0), (10, (-7.5, 7.5))),
}


@dataclass(frozen=True)
class Example1D:
    """A one-dimensional regression example with a test grid.

    Made by :func:`make_1d_example`; the fields are read-only.

    Parameters
    ----------
    name : str
        ``"few"``, ``"many"`` or ``"cubic"``.
    X_train : ndarray of shape (n_train, 1)
        Training inputs, in the example's own units.
    y_train : ndarray of shape (n_train,)
        Noisy targets.
    X_test : ndarray of shape (n_test, 1)
        Evenly spaced grid over ``domain``.
    y_test : ndarray of shape (n_test,)
        The noise-free function on the grid.
    domain : (float, float)
        The interval the grid spans; :meth:`encode` maps it onto [0, 1].
    noise_std : float
        Standard deviation of the observation noise.
    function : callable
        The noise-free function, vectorized over arrays.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    domain: tuple[float, float]
    noise_std: float
    function: Callable[[np.ndarray], np.ndarray]

    def encode(self, X: np.ndarray) -> np.ndarray:
        """Map inputs from ``domain`` onto [0, 1], where treebo's surrogates work.

        Trees do not depend on this affine map; the GP's length-scale bounds
        are stated in these encoded units.

        Parameters
        ----------
        X : array-like of shape (n_points, 1)
            Inputs in the example's own units (``X_train`` or ``X_test``).

        Returns
        -------
        ndarray of shape (n_points, 1)
        """
        low, high = self.domain
        return (np.asarray(X, dtype=float) - low) / (high - low)

    def fit_predict(self, surrogate: Surrogate) -> Prediction:
        """Fit ``surrogate`` on the training points and predict on the grid.

        Parameters
        ----------
        surrogate : Surrogate
            An unfitted treebo surrogate; it is fitted in place on the encoded
            inputs and the raw targets.

        Returns
        -------
        Prediction
            Predictive Normals on ``X_test``, each field of shape (n_test,).
        """
        surrogate.fit(self.encode(self.X_train), self.y_train)
        return surrogate.predict_dist(self.encode(self.X_test))


def _sobol_points(n: int, seed: int) -> np.ndarray:
    import qmcpy

    # qmcpy 2.x spells the paper's ``Sobol(1, seed=42, graycode=True)`` this way;
    # the warning it gives for a size that is not a power of two is expected here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler = qmcpy.DigitalNetB2(1, seed=seed, order="GRAY")
        return np.asarray(sampler.gen_samples(n, warn=False), dtype=float)


def make_1d_example(
    name: str, *, noise_seed: int = 42, design_seed: int = 42, n_test: int = 201
) -> Example1D:
    """Build one of the paper's one-dimensional examples.

    Parameters
    ----------
    name : {"few", "many", "cubic"}
        Sine with 5 points (Figure 1), sine with 50 points (Figure 7), cubic
        with 10 points (Figure 8).
    noise_seed : int, default 42
        Seed of ``numpy.random.RandomState`` for the noise, 42 in the paper.
        Other values give other noise draws at the same inputs.
    design_seed : int, default 42
        Seed of the scrambled Sobol inputs of ``many`` and ``cubic`` (unused
        by ``few``, whose inputs are fixed).
    n_test : int, default 201
        Size of the test grid.

    Returns
    -------
    Example1D
    """
    if name not in _SPECS:
        raise ValueError(f"name must be one of {EXAMPLES_1D}, got {name!r}")
    for arg, value, minimum in (
        ("noise_seed", noise_seed, 0),
        ("design_seed", design_seed, 0),
        ("n_test", n_test, 2),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{arg} must be an integer >= {minimum}, got {value!r}")
    function, noise_std, domain, inputs = _SPECS[name]
    if isinstance(inputs, np.ndarray):
        X_train = inputs[:, None].copy()
    else:
        n_points, (low, high) = inputs
        X_train = _sobol_points(n_points, design_seed) * (high - low) + low
    noise = np.random.RandomState(noise_seed).randn(*X_train.shape)
    y_train = (function(X_train) + noise_std * noise)[:, 0]
    X_test = np.linspace(domain[0], domain[1], n_test)[:, None]
    return Example1D(
        name=name,
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=function(X_test)[:, 0],
        domain=domain,
        noise_std=noise_std,
        function=function,
    )
