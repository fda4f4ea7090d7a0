"""SGLB surrogates: virtual ensembles from one stochastic gradient Langevin boosting chain.

Stochastic Gradient Langevin Boosting (Ustimenko & Prokhorenkova 2020) is
gradient boosting with Gaussian noise added to the gradients and the model
shrunk toward 0 at every step. With inverse temperature ``beta = N`` and
shrinkage ``gamma = 1/(2N)`` its iterates form a Markov chain whose stationary
law is the Bayesian posterior of the ensemble's parameters under a Gaussian
prior, so models taken from one chain are (correlated) posterior samples
(Malinin, Prokhorenkova & Ustimenko 2021). Each model predicts a Normal
``N(mu(x), sigma(x)^2)`` with ``(mu, log sigma)`` the two outputs of one
multi-output tree per iteration; members are combined by the law of total
variance: ``epistemic`` = variance of the member means (knowledge
uncertainty), ``aleatoric`` = mean of the member variances (data uncertainty).

One iteration on standardized targets ``z`` (``F = (F_mu, F_s)``,
``sigma = exp(F_s)``; learning rate ``eps``; the per-object noise scale
``kappa`` is discussed under ``noise_scale`` below):

1. natural gradients of the Normal negative log-likelihood,
   ``g = (mu - z, 1/2 - (z - mu)^2 / (2 sigma^2))`` (Malinin et al., App. A.1),
   times the iteration's gradient scale (1 for plain SGLB; the cyclical
   schedule below);
2. the tree structure is grown to fit ``-(g + kappa * zeta' / sqrt(I))``;
3. its leaf values are re-estimated with independent noise ``zeta`` as the
   ``I``-weighted leaf means of ``-(g + kappa * zeta / sqrt(I))``, with
   ``l2_leaf_reg`` added to each leaf's weight;
4. ``F <- (1 - gamma * eps) * F + eps * tree``.

``I = (1 / sigma^2, 2)`` is each object's Fisher information for
``(mu, log sigma)``. The papers add unit-variance noise to the natural
gradients and take plain leaf means; that is the Langevin step for the
posterior only where ``sigma = 1``. Weighting by ``I`` (the natural gradient
is the ordinary gradient divided by ``I``) makes the injected noise the one
of a Langevin step preconditioned by the inverse Fisher information, so the
stationary law stays the posterior wherever ``sigma`` is; with ``sigma = 1``
and ``l2_leaf_reg = 0`` both are the same. Without the weights the chain is
``1 / sigma^2`` times too hot for ``mu`` where the model is confident, and
objects with a large ``sigma`` swamp their leaves' means.

The likelihood uses ``sigma = exp(clip(F_s, -5, 1))``: between 0.7% and 2.7
times the targets' standard deviation. Beyond that range the natural
gradient still pulls ``F_s`` back (the loss is the Normal one with ``log
sigma`` replaced by ``F_s``), so the members' trees stay sums of trees while
one object with a tiny ``sigma`` cannot blow its leaf up.

The trees are oblivious (CatBoost's shape), fitted by exact least squares on
quantized features; see :mod:`treebo.surrogates._oblivious`. Targets are
standardized before fitting and the chain starts at ``F = 0``, i.e. at the
data's mean and standard deviation, which is also where the shrinkage pulls.

Three ways to pick members from the chain:

- :class:`VirtualSGLBSurrogate` (vSGLB; Malinin et al. 2021, §3): every
  ``K``-th model of the second half, ``T, T - K, ..., T - (M - 1) K`` trees
  with ``K = floor(T / (2 M))``.
- :class:`CyclicalSGLBSurrogate` (cSGLB; Tan et al. 2023, Alg. 1): the
  gradients are multiplied by a cosine schedule that restarts every ``C``
  iterations, ``alpha_t = max(alpha_max / 2 * (cos(pi (t mod C) / C) + 1),
  alpha_min)``; the noise is not scaled, so small ``alpha`` means relatively
  more noise. One member at the end of each cycle, after ``C k - 1`` trees.
- :class:`CyclicalBootstrapSGLBSurrogate` (cbSGLB): cSGLB whose gradients are
  also multiplied, during the exploration part of each cycle, by a Bernoulli
  mask drawn at the start of the cycle.

A truncated model is recovered from partial sums of the trees (Malinin et
al., eq. 15): with shrinkage, the model after ``t`` trees is
``sum_{i <= t} eps (1 - gamma eps)^(t - i) h_i = (1 - gamma eps)^(t - T)
sum_{i <= t} eps (1 - gamma eps)^(T - i) h_i``, so the leaf values are stored
pre-multiplied by ``eps (1 - gamma eps)^(T - i)`` and one pass over the trees
gives every member.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._oblivious import MAX_DEPTH, ObliviousGrower, fit_borders, leaf_index, quantize
from .base import RANDOM_STATE, Prediction, Surrogate, mixture_moments

__all__ = [
    "VirtualSGLBSurrogate",
    "CyclicalSGLBSurrogate",
    "CyclicalBootstrapSGLBSurrogate",
    "cyclical_gradient_scale",
]

#: Range of ``log sigma`` on standardized targets (see the module docstring).
LOG_SIGMA_RANGE = (-5.0, 1.0)

NOISE_SCALES = ("posterior", "catboost")


def cyclical_gradient_scale(
    n_estimators: int, cycle_length: int, alpha_max: float, alpha_min: float
) -> np.ndarray:
    """The cosine gradient scaler of cyclical SGLB (Tan et al. 2023, eq. 7).

    Parameters
    ----------
    n_estimators : int
        Number of iterations ``T``.
    cycle_length : int
        ``C``; the schedule restarts at ``alpha_max`` every ``C`` iterations.
    alpha_max, alpha_min : float
        Largest value (at the start of each cycle) and floor.

    Returns
    -------
    ndarray of shape (n_estimators,)
        ``alpha_t = max(alpha_max / 2 * (cos(pi (t mod C) / C) + 1), alpha_min)``.
    """
    phase = np.arange(n_estimators) % cycle_length / cycle_length
    return np.maximum(0.5 * alpha_max * (np.cos(np.pi * phase) + 1.0), alpha_min)


class _SGLB(Surrogate):
    """One SGLB chain on oblivious trees; subclasses choose the schedule and the members."""

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "depth": [Interval(Integral, 0, MAX_DEPTH, closed="both")],
        "l2_leaf_reg": [Interval(Real, 0, None, closed="left")],
        "noise_scale": [StrOptions(set(NOISE_SCALES))],
        "diffusion_temperature": [Interval(Real, 0, None, closed="neither"), None],
        "shrink_rate": [Interval(Real, 0, None, closed="left"), None],
        "random_state": RANDOM_STATE,
    }

    def _gradient_multipliers(
        self, n_samples: int, rng: np.random.Generator
    ) -> Iterator[float | np.ndarray]:
        """Per iteration, a scalar or an (n_samples,) array multiplying the gradients."""
        raise NotImplementedError

    def _member_iterations(self) -> np.ndarray:
        """Increasing numbers of trees of the members (each >= 1)."""
        raise NotImplementedError

    def _chain_constants(self, n_samples: int) -> tuple[float, float, float]:
        """Learning rate ``eps``, shrink factor ``1 - gamma eps`` and noise scale ``kappa``."""
        eps = float(self.learning_rate)
        gamma = 0.5 / n_samples if self.shrink_rate is None else float(self.shrink_rate)
        shrink = 1.0 - gamma * eps
        if not 0.0 < shrink <= 1.0:
            raise ValueError(f"shrink_rate * learning_rate must be in [0, 1), got {gamma * eps!r}")
        beta = float(
            n_samples if self.diffusion_temperature is None else self.diffusion_temperature
        )
        # Per-object noise variance; see noise_scale in the class docstring.
        kappa = math.sqrt(
            (2.0 * n_samples if self.noise_scale == "posterior" else 2.0) / (eps * beta)
        )
        return eps, shrink, kappa

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        # The relations between parameters are checked before the base class
        # looks at the targets, so that constant targets (which fit nothing)
        # do not hide a bad setting.
        self.member_iterations_ = self._member_iterations()
        self._chain_constants(X.shape[0])
        super()._fit(X, y)

    def _fit_standardized(self, X: np.ndarray, z: np.ndarray) -> None:
        n_samples = X.shape[0]
        members = self.member_iterations_
        eps, shrink, kappa = self._chain_constants(n_samples)
        rng = np.random.default_rng(self.random_state)
        self._borders = fit_borders(X)
        grower = ObliviousGrower(quantize(X, self._borders))
        depth, lam = int(self.depth), float(self.l2_leaf_reg)
        n_trees, n_leaves = int(members[-1]), 1 << int(self.depth)
        lo, hi = LOG_SIGMA_RANGE
        features = np.zeros((n_trees, depth), dtype=np.intp)
        thresholds = np.zeros((n_trees, depth), dtype=np.uint8)
        values = np.zeros((n_trees, 2, n_leaves))
        F = np.zeros((2, n_samples))
        gradient = np.empty((2, n_samples))
        # Fisher information of each object for (mu, log sigma): 1/sigma^2 and 2.
        fisher = np.full((2, n_samples), 2.0)
        sums = np.empty((2, n_leaves))
        weights = np.empty((2, n_leaves))
        multipliers = self._gradient_multipliers(n_samples, rng)
        for t in range(n_trees):
            np.exp(-2.0 * np.clip(F[1], lo, hi), out=fisher[0])
            # Natural gradients: (mu - z, 1/2 - (z - mu)^2 / (2 sigma^2)).
            np.subtract(F[0], z, out=gradient[0])
            np.multiply(gradient[0] ** 2, fisher[0], out=gradient[1])
            gradient[1] *= -0.5
            gradient[1] += 0.5
            gradient *= next(multipliers)
            # Structure: least squares on the noisy natural gradients. The noise
            # has variance kappa^2 times the inverse Fisher information, the
            # covariance of the natural gradient's Langevin noise.
            target = rng.standard_normal((2, n_samples))
            target *= kappa
            target /= np.sqrt(fisher)
            target += gradient
            np.negative(target, out=target)
            f, b, leaf = grower.grow(target, depth)
            # Leaves: Fisher-weighted mean of the gradients plus independent
            # noise of variance kappa^2 / (weight + l2_leaf_reg); the same in
            # distribution as the mean of per-object noisy gradients, and a
            # draw from the prior's diffusion for a leaf without data.
            for j in range(2):
                weights[j] = np.bincount(leaf, weights=fisher[j], minlength=n_leaves)
                sums[j] = np.bincount(leaf, weights=fisher[j] * gradient[j], minlength=n_leaves)
            weights += lam
            sums += kappa * np.sqrt(weights) * rng.standard_normal((2, n_leaves))
            leaf_value = values[t]
            np.divide(sums, weights, out=leaf_value, where=weights > 0)
            np.negative(leaf_value, out=leaf_value)
            F *= shrink
            F += eps * leaf_value[:, leaf]
            features[t], thresholds[t] = f, b

        # Eq. 15: scale tree i (1-based) by eps (1 - gamma eps)^(T - i); the
        # member with t trees is (1 - gamma eps)^(t - T) times the partial sum.
        values *= (eps * shrink ** np.arange(n_trees - 1, -1, -1.0))[:, None, None]
        self._features = features
        self._thresholds = thresholds
        self._values = values
        self._member_scale = shrink ** (members - n_trees).astype(float)

    def _member_raw(self, X: np.ndarray) -> np.ndarray:
        """Every member's ``(F_mu, F_s)`` on standardized targets, shape (n_members, 2, n)."""
        bins = quantize(X, self._borders)
        n_points = X.shape[0]
        members = self.member_iterations_
        out = np.empty((len(members), 2, n_points))
        total = np.zeros((2, n_points))
        leaf = np.empty(n_points, dtype=np.uint8)
        scratch = np.empty(n_points, dtype=bool)
        k = 0
        for t in range(len(self._values)):
            leaf_index(bins, self._features[t], self._thresholds[t], out=leaf, scratch=scratch)
            total[0] += self._values[t, 0].take(leaf)
            total[1] += self._values[t, 1].take(leaf)
            while k < len(members) and members[k] == t + 1:
                np.multiply(total, self._member_scale[k], out=out[k])
                k += 1
        return out

    def _predict_standardized(self, X: np.ndarray) -> Prediction:
        raw = self._member_raw(X)
        variance = np.exp(2.0 * np.clip(raw[:, 1], *LOG_SIGMA_RANGE))
        return mixture_moments(raw[:, 0], variance)


_PARAMS_DOC = """
    learning_rate : float, default 0.1
        Step ``eps`` of every boosting iteration.
    depth : int, default 4
        Levels of every oblivious tree (``2**depth`` leaves), 0 to 8. Depth 0
        is a single leaf (a constant per iteration).
    l2_leaf_reg : float, default 3.0
        ``lambda`` >= 0 added to every leaf's Fisher weight (CatBoost's
        ``l2_leaf_reg``, same default). The leaf noise grows with it (variance
        ``kappa^2 / (weight + lambda)``, as in CatBoost), so it slows the steps
        of sparse leaves without changing the stationary law; a leaf without
        data then diffuses under the prior instead of staying at 0.
    noise_scale : {"posterior", "catboost"}, default "posterior"
        ``kappa^2`` in the variance ``kappa^2 / I`` of the Gaussian noise
        added to every object's natural gradient (``I`` its Fisher
        information, 1 in the papers' unweighted form), for the structure and
        (independently) for the leaves.
        ``"posterior"``: ``2 N / (eps beta)``, as in Tan et al. (2023, Alg. 1)
        and the SGLB paper; with the default ``beta = N`` the chain's
        stationary spread is the posterior's (on a one-leaf model, the
        variance of a mean of N unit-variance observations, about 1/N).
        ``"catboost"``: ``2 / (eps beta)``, as printed in Malinin et al.
        (2021, eq. 11) and implemented by CatBoost; leaf values average the
        noise over the objects of the leaf, so this is N times too narrow
        (about 1/N^2 on the one-leaf model; ``tests/surrogates/test_sglb.py``
        measures both).
    diffusion_temperature : float or None, default None
        Inverse temperature ``beta``; None means N, the posterior setting.
    shrink_rate : float or None, default None
        Shrinkage ``gamma``: every iteration multiplies the model by
        ``1 - gamma * eps``; None means ``1 / (2N)``, the posterior setting
        (a Gaussian prior centred on the data's mean and standard deviation).
    random_state : int, numpy.random.Generator or None
        Seeds the noise (and the bootstrap masks)."""

_ATTRIBUTES_DOC = """
    Attributes
    ----------
    member_iterations_ : ndarray of shape (n_members,)
        Number of trees of every member, increasing."""


class VirtualSGLBSurrogate(_SGLB):
    __doc__ = f"""Virtual SGLB ensemble (vSGLB; Malinin, Prokhorenkova & Ustimenko 2021).

    One SGLB chain of ``n_estimators`` trees; the members are the truncations
    to ``T, T - K, ..., T - (M - 1) K`` trees with ``M = n_members`` and
    ``K = floor(T / (2M))``: every ``K``-th model of the second half (the
    paper's "each 50th model from [501, 1000]" for ``T = 1000, M = 10``).

    Parameters
    ----------
    n_estimators : int, default 1000
        Boosting iterations ``T``.
    n_members : int, default 10
        Members ``M``; ``n_estimators`` must be at least ``2 * n_members``.{_PARAMS_DOC}
{_ATTRIBUTES_DOC}
    """

    _parameter_constraints: dict = {
        **_SGLB._parameter_constraints,
        "n_members": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_estimators: int = 1000,
        *,
        n_members: int = 10,
        learning_rate: float = 0.1,
        depth: int = 4,
        l2_leaf_reg: float = 3.0,
        noise_scale: str = "posterior",
        diffusion_temperature: float | None = None,
        shrink_rate: float | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.n_members = n_members
        self.learning_rate = learning_rate
        self.depth = depth
        self.l2_leaf_reg = l2_leaf_reg
        self.noise_scale = noise_scale
        self.diffusion_temperature = diffusion_temperature
        self.shrink_rate = shrink_rate
        self.random_state = random_state

    def _member_iterations(self) -> np.ndarray:
        n_members, n_estimators = int(self.n_members), int(self.n_estimators)
        if n_estimators < 2 * n_members:
            raise ValueError(
                f"n_estimators must be at least 2 * n_members = {2 * n_members}, got {n_estimators}"
            )
        step = n_estimators // (2 * n_members)
        return n_estimators - step * np.arange(n_members - 1, -1, -1)

    def _gradient_multipliers(
        self, n_samples: int, rng: np.random.Generator
    ) -> Iterator[float | np.ndarray]:
        while True:
            yield 1.0


class _CyclicalParams:
    """The cosine schedule and the one-member-per-cycle rule shared by cSGLB and cbSGLB."""

    _parameter_constraints: dict = {
        **_SGLB._parameter_constraints,
        "cycle_length": [Interval(Integral, 2, None, closed="left")],
        "alpha_max": [Interval(Real, 0, None, closed="neither")],
        "alpha_min": [Interval(Real, 0, None, closed="neither")],
    }

    # Set by the subclasses' __init__.
    n_estimators: int
    cycle_length: int
    alpha_max: float
    alpha_min: float

    def _check_cycle(self) -> tuple[int, int]:
        n_estimators, cycle = int(self.n_estimators), int(self.cycle_length)
        if cycle > n_estimators:
            raise ValueError(
                f"cycle_length must be at most n_estimators = {n_estimators}, got {cycle}"
            )
        if self.alpha_min > self.alpha_max:
            raise ValueError(
                f"alpha_min must be at most alpha_max = {self.alpha_max!r}, got {self.alpha_min!r}"
            )
        return n_estimators, cycle

    def _member_iterations(self) -> np.ndarray:
        n_estimators, cycle = self._check_cycle()
        # Alg. 1 keeps Theta_{Ck-1}, the model after Ck - 1 updates.
        return cycle * np.arange(1, n_estimators // cycle + 1) - 1

    def _scales(self) -> np.ndarray:
        n_estimators, cycle = self._check_cycle()
        return cyclical_gradient_scale(
            n_estimators, cycle, float(self.alpha_max), float(self.alpha_min)
        )


class CyclicalSGLBSurrogate(_CyclicalParams, _SGLB):
    __doc__ = f"""Cyclical SGLB (cSGLB; Tan, Huertas & Zhao 2023, Alg. 1 without bootstrap).

    One SGLB chain whose gradients (not the noise) are multiplied at
    iteration ``t`` by ``alpha_t = max(alpha_max / 2 * (cos(pi (t mod C) / C)
    + 1), alpha_min)``: large steps at the start of each cycle to leave the
    current mode, then sampling with relatively more noise. One member per
    cycle, the model after ``C k - 1`` trees, ``k = 1 .. floor(T / C)`` (Alg.
    1's ``Theta_(Ck-1)``, read literally). Exploration and sampling stages
    differ only for :class:`CyclicalBootstrapSGLBSurrogate`: this class uses
    all objects in both.

    Parameters
    ----------
    n_estimators : int, default 1000
        Boosting iterations ``T``.
    cycle_length : int, default 100
        ``C``; ``floor(T / C)`` members.
    alpha_max : float, default 5.0
        Gradient scale at the start of each cycle. Tan et al. use 10 with
        ``learning_rate = 0.05``; the default keeps their product, 0.5, at
        ``learning_rate = 0.1`` (the natural gradient of ``log sigma`` is
        unbounded, so large products make ``sigma`` jump).
    alpha_min : float, default 1.0
        Floor of the gradient scale, at most ``alpha_max``.{_PARAMS_DOC}
{_ATTRIBUTES_DOC}
    """

    def __init__(
        self,
        n_estimators: int = 1000,
        *,
        cycle_length: int = 100,
        alpha_max: float = 5.0,
        alpha_min: float = 1.0,
        learning_rate: float = 0.1,
        depth: int = 4,
        l2_leaf_reg: float = 3.0,
        noise_scale: str = "posterior",
        diffusion_temperature: float | None = None,
        shrink_rate: float | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.cycle_length = cycle_length
        self.alpha_max = alpha_max
        self.alpha_min = alpha_min
        self.learning_rate = learning_rate
        self.depth = depth
        self.l2_leaf_reg = l2_leaf_reg
        self.noise_scale = noise_scale
        self.diffusion_temperature = diffusion_temperature
        self.shrink_rate = shrink_rate
        self.random_state = random_state

    def _gradient_multipliers(
        self, n_samples: int, rng: np.random.Generator
    ) -> Iterator[float | np.ndarray]:
        yield from (float(a) for a in self._scales())


class CyclicalBootstrapSGLBSurrogate(_CyclicalParams, _SGLB):
    __doc__ = f"""Cyclical bootstrapped SGLB (cbSGLB; Tan, Huertas & Zhao 2023, Alg. 1, bootstrap).

    :class:`CyclicalSGLBSurrogate` plus a Bernoulli mask: at the start of
    every cycle each object is kept with probability ``bootstrap_probability``;
    while the cycle's completed fraction ``(t mod C) / C`` is below
    ``exploration_fraction`` the gradients of the other objects are set to 0
    (their noise is still added and they still count in their leaf's mean);
    afterwards, in the sampling stage, all objects are used. This tempers
    the posterior during exploration (a "warm" posterior) to spread the
    members.

    Parameters
    ----------
    n_estimators : int, default 1000
        Boosting iterations ``T``.
    cycle_length : int, default 100
        ``C``; ``floor(T / C)`` members.
    alpha_max : float, default 5.0
        Gradient scale at the start of each cycle (see :class:`CyclicalSGLBSurrogate`).
    alpha_min : float, default 1.0
        Floor of the gradient scale, at most ``alpha_max``.
    exploration_fraction : float, default 0.8
        ``eta`` in (0, 1): the part of each cycle that uses the mask.
    bootstrap_probability : float, default 0.6
        ``p_bm`` in (0, 1]: probability that an object is kept in a cycle's mask.{_PARAMS_DOC}
{_ATTRIBUTES_DOC}
    """

    _parameter_constraints: dict = {
        **_CyclicalParams._parameter_constraints,
        "exploration_fraction": [Interval(Real, 0, 1, closed="neither")],
        "bootstrap_probability": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(
        self,
        n_estimators: int = 1000,
        *,
        cycle_length: int = 100,
        alpha_max: float = 5.0,
        alpha_min: float = 1.0,
        exploration_fraction: float = 0.8,
        bootstrap_probability: float = 0.6,
        learning_rate: float = 0.1,
        depth: int = 4,
        l2_leaf_reg: float = 3.0,
        noise_scale: str = "posterior",
        diffusion_temperature: float | None = None,
        shrink_rate: float | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.cycle_length = cycle_length
        self.alpha_max = alpha_max
        self.alpha_min = alpha_min
        self.exploration_fraction = exploration_fraction
        self.bootstrap_probability = bootstrap_probability
        self.learning_rate = learning_rate
        self.depth = depth
        self.l2_leaf_reg = l2_leaf_reg
        self.noise_scale = noise_scale
        self.diffusion_temperature = diffusion_temperature
        self.shrink_rate = shrink_rate
        self.random_state = random_state

    def _gradient_multipliers(
        self, n_samples: int, rng: np.random.Generator
    ) -> Iterator[float | np.ndarray]:
        eta, p = float(self.exploration_fraction), float(self.bootstrap_probability)
        cycle = int(self.cycle_length)
        mask = np.ones(n_samples)
        for t, alpha in enumerate(self._scales()):
            if t % cycle == 0:
                mask = (rng.random(n_samples) < p).astype(float)
            if (t % cycle) / cycle < eta:
                yield alpha * mask
            else:
                yield float(alpha)
