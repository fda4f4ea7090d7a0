"""Mondrian forest surrogate (Lakshminarayanan, Roy & Teh, AISTATS 2016), in NumPy.

Each tree is a Mondrian process restricted to the bounding boxes of the data
(batch sampling): a node's data box has linear dimension
``Lambda = sum_d (u_d - l_d)``; it splits at time ``tau_parent + Exp(rate
Lambda)`` if that is before the lifetime ``lambda``, on dimension ``d`` with
probability ``(u_d - l_d) / Lambda``, at a uniform location inside the box.
Splits ignore the labels. A test point ``x`` that lies outside a node's box
may be *cut off* from the node's data during the node's lifetime, with
probability ``p_j(x) = 1 - exp(-(tau_j - tau_parent) * eta_j(x))``, where
``eta_j(x)`` is the L1 distance from ``x`` to the box; the tree's prediction
is the mixture over the nodes of ``x``'s path weighted by where the cut
happens, moment matched to one Normal. That is how the variance grows away
from the data. Three variants of the per-node components are offered
(``mode``):

``"skgarden"`` (default; what scikit-garden computes, and what Kim & Choi
2022 ran)
    A node's component is the sample mean and population variance of its
    training targets; the leaf takes all the mass left over.
``"reference"`` (the authors' reference code, ``smooth_hierarchically``)
    Node means carry a hierarchical Gaussian prior (Brownian motion in
    sigmoid-warped split time, hyperparameters from the data as in that
    code); a component is the node's posterior plus noise plus the prior
    variance accumulated up to the expected cut time.
``"exact"`` (model-consistent)
    Under the same prior, a cut above node ``j`` creates a new node joining
    ``j`` and a new leaf holding ``x``; the component is the exact posterior
    predictive of that new leaf, with the cut time set to its conditional
    mean.

The posteriors of the node means are exact: Gaussian belief propagation on
the tree (an upward and a downward pass, vectorized over all nodes of a
depth). Far from the data the ``"exact"`` prediction tends to the prior
predictive, roughly ``N(mean(y), var(y))``.

Trees are grown together, one depth level at a time for all trees at once,
and stored as flat arrays. Prediction takes one tree (or, for few points,
several) at a time: it routes every point to its leaf, then climbs back
towards the root, folding in one node per step, and stops a point as soon
as it is inside a node's box: boxes are nested, so no node above can cut it
off. Each step is vectorized over the points; no Python loop runs per point.

This module holds the estimator; the model's parts are in

``_mondrian_growth``
    The trees' nodes as flat arrays, and growing them.
``_mondrian_posterior``
    The hierarchical prior and the exact posteriors of the node means.
``_mondrian_prediction``
    The arrays prediction reads, and the walk that computes each tree's
    mixture moments.
"""

from __future__ import annotations

import math
from functools import partial
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from ._mondrian_growth import StoppingRules, grow_forest
from ._mondrian_posterior import belief_propagation, hyperparameters
from ._mondrian_prediction import predict_trees, prediction_arrays
from .base import (
    N_JOBS,
    RANDOM_STATE,
    Prediction,
    Surrogate,
    threaded_mixture_moments,
)

__all__ = ["MondrianForestSurrogate"]

MODES = ("skgarden", "reference", "exact")


class MondrianForestSurrogate(Surrogate):
    """Mondrian forest regression with a predictive variance that grows away from the data.

    Each of ``n_estimators`` trees is an independent Mondrian process
    restricted to the bounding boxes of the training data (splits ignore the
    labels); a test point outside a node's box may be cut off from that
    node's data, so a tree's prediction is a mixture over the nodes of the
    point's path, moment matched to one Normal. The forest combines the
    trees' Normals by the law of total variance.

    Parameters
    ----------
    n_estimators : int, default 100
        Number of trees.
    mode : {"skgarden", "reference", "exact"}, default "skgarden"
        The per-node components of a tree's mixture. ``"skgarden"``: the
        node's sample mean and variance (scikit-garden's batch prediction,
        used by Kim & Choi 2022). ``"reference"``: the node's posterior mean
        under the hierarchical Gaussian prior, with variance = posterior
        variance + noise + prior variance up to the expected cut time (the
        authors' reference code). ``"exact"``: the exact posterior
        predictive of the new leaf a cut creates (model-consistent). The
        Bayesian modes use the reference code's hyperparameters, set from
        each tree's data; their node posteriors are exact (Gaussian belief
        propagation).
    lifetime : float, default inf
        Budget ``lambda`` of the Mondrian process: nodes whose split time
        would exceed it become leaves. ``inf`` grows trees until the other
        stopping rules hold.
    min_samples_split : int, default 2
        A node with fewer distinct training points is a leaf.
    max_depth : int or None, default None
        Depth (root = 0) at which nodes become leaves.
    bootstrap : bool, default False
        Grow every tree on a bootstrap sample of size N (multinomial counts,
        used as weights). Off by default, as in scikit-garden and the
        reference code.
    n_jobs : int or None, default None
        Threads for prediction (trees are split between them; ``-1``: all
        cores). Results do not depend on it.
    random_state : int, numpy.random.Generator or None
        Seeds the trees and the bootstraps.

    Attributes
    ----------
    n_nodes_ : int
        Total number of nodes of the forest.
    max_depth_ : int
        Depth of the deepest leaf.
    hyperparameters_ : dict of ndarray of shape (n_estimators,)
        Per tree: ``mu`` (prior mean), ``sigma_y2`` (noise variance),
        ``sigma_h2`` (prior scale) and ``gamma`` (time warping) of the
        hierarchical prior; used by the Bayesian modes only.

    Notes
    -----
    ``epistemic`` is the variance of the trees' means: the disagreement
    between independently sampled partitions. ``aleatoric`` is the average
    of the trees' own predictive variances; for this model that is not just
    noise: in ``"skgarden"`` mode it is the spread of the training targets
    in the nodes the point may be cut off at (it vanishes at a training
    point in a pure leaf and tends to the variance of ``y`` far away); in
    the Bayesian modes it holds the posterior variance of the node means,
    the prior variance a cut adds, and the noise ``sigma_y2``.

    Splitting depends on the feature ranges, so inputs should share a scale
    (treebo's encoded points lie in [0, 1]). Computations are in float64.
    The class is called ``MondrianForestSurrogate``, not
    ``MondrianForestRegressor``, so that it does not collide with
    scikit-garden's class.

    References
    ----------
    Lakshminarayanan, Roy & Teh, "Mondrian forests for large-scale regression
    when uncertainty matters", AISTATS 2016. Kim & Choi, "On uncertainty
    estimation by tree-based surrogate models in sequential model-based
    optimization", AISTATS 2022.
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "mode": [StrOptions(set(MODES))],
        "lifetime": [Interval(Real, 0, None, closed="right")],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "bootstrap": ["boolean"],
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        mode: str = "skgarden",
        lifetime: float = math.inf,
        min_samples_split: int = 2,
        max_depth: int | None = None,
        bootstrap: bool = False,
        n_jobs: int | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.mode = mode
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        rng = np.random.default_rng(self.random_state)
        n_samples, n_features = X.shape
        n_trees = int(self.n_estimators)
        lifetime = float(self.lifetime)
        counts = None
        if self.bootstrap:
            counts = rng.multinomial(n_samples, np.full(n_samples, 1.0 / n_samples), size=n_trees)
        rules = StoppingRules(
            lifetime=lifetime,
            min_samples_split=int(self.min_samples_split),
            max_depth=self.max_depth,
            stop_pure=self.mode == "skgarden",
        )
        nodes = grow_forest(X, y, counts, n_trees, rng, rules)
        hyper = hyperparameters(nodes, n_trees, n_features)
        posterior = None if self.mode == "skgarden" else belief_propagation(nodes, hyper)
        self._nodes, self._hyper, self._posterior = nodes, hyper, posterior
        self._arrays = prediction_arrays(nodes, hyper, posterior, self.mode, lifetime)
        self.n_nodes_ = int(nodes.tree.size)
        self.max_depth_ = int(nodes.depth.max())
        self.hyperparameters_ = {
            "mu": hyper.mu,
            "sigma_y2": hyper.sigma_y2,
            "sigma_h2": hyper.sigma_h2,
            "gamma": hyper.gamma,
        }

    def _predict_dist(self, X: np.ndarray) -> Prediction:
        accumulate = partial(predict_trees, self._arrays, X=np.ascontiguousarray(X))
        # One BLAS thread: the only BLAS call is a (points x 2D) matrix-vector
        # product, which threads slow down on a shared machine.
        with threadpool_limits(limits=1, user_api="blas"):
            return threaded_mixture_moments(
                accumulate, np.arange(self._arrays.root.size), self.n_jobs
            )
