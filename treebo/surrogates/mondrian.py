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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from .base import (
    N_JOBS,
    RANDOM_STATE,
    MixtureMoments,
    Prediction,
    Surrogate,
    threaded_mixture_moments,
)

__all__ = ["MondrianForestSurrogate"]

MODES = ("skgarden", "reference", "exact")

# Points per block, and (tree, point) pairs handled together: enough that
# NumPy's per-call overhead is small, few enough that the working set (a
# few arrays of _PAIRS x 2D floats) stays in cache. Measured on the shared
# 2-core machine (N = 200, D = 6, 55,000 points): 8,192 to 55,000 pairs
# were within the run-to-run noise of each other, 65,536 pairs (4 trees at
# once) 25% slower.
_BLOCK = 16_384
_PAIRS = 16_384
# Pairs that are done are dropped from the working arrays once they are at
# least this fraction of them; until then they ride along, which does not
# change any result (see _find_leaves and _climb).
_COMPACT_FRACTION = 0.3
# A climb hands its pairs back once fewer than this many are left; those of
# _BATCH trees finish in one climb (see _climb). Measured (N = 200, D = 6,
# 55,000 points): over half of the climbing steps had fewer than 2,048
# pairs, 5% of the work.
_HAND_BACK = 1_024
_BATCH = 10

# Per-node arrays, or one node's scalars.
_Values = np.ndarray | float


def _sigmoid_diff(a: _Values, b: _Values) -> np.ndarray:
    """``sigmoid(a) - sigmoid(b)`` for ``a >= b``, without cancellation near 1.

    ``a`` may be ``inf``. Uses ``sig(a) - sig(b) = -e^{-b} expm1(b - a) /
    ((1 + e^{-a})(1 + e^{-b}))``, which keeps full relative precision when
    both arguments are large (deep nodes of a tree split late).
    """
    ea = np.exp(-a)
    eb = np.exp(-b)
    with np.errstate(invalid="ignore"):
        diff = -eb * np.expm1(b - a) / ((1.0 + ea) * (1.0 + eb))
    return np.where(a == b, 0.0, diff)


# --------------------------------------------------------------------------------------
# Growing: all trees at once, one depth level at a time.
# --------------------------------------------------------------------------------------


@dataclass
class _Nodes:
    """Nodes of every tree, in creation order (by depth, then by tree).

    ``left``/``right`` are -1 at leaves. ``tau`` is the split time (the
    lifetime at leaves); ``count`` the weighted number of training points,
    ``n_rows`` the number of distinct ones; ``mean``/``var`` the weighted
    mean and population variance of their targets.
    """

    tree: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    left: np.ndarray
    right: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    tau: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    count: np.ndarray
    n_rows: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    y_min: np.ndarray
    y_max: np.ndarray

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    @property
    def tau_parent(self) -> np.ndarray:
        """Split time of each node's parent, 0 at the roots."""
        return np.where(self.parent >= 0, self.tau[np.maximum(self.parent, 0)], 0.0)


def _grow_forest(
    X: np.ndarray,
    y: np.ndarray,
    counts: np.ndarray | None,
    n_trees: int,
    rng: np.random.Generator,
    lifetime: float,
    min_samples_split: int,
    max_depth: int | None,
    stop_pure: bool,
) -> _Nodes:
    """Sample ``n_trees`` Mondrian trees restricted to the data's boxes.

    The frontier of every tree is processed together: training rows are kept
    sorted by the frontier node they are in, so node statistics are segment
    reductions and a split is a stable partition of the segment.
    """
    n_samples, n_features = X.shape
    if counts is None:
        rows = np.tile(np.arange(n_samples), n_trees)
        weights = np.ones(rows.size)
        segment = np.repeat(np.arange(n_trees), n_samples)
    else:
        segment, rows = np.nonzero(counts)
        weights = counts[segment, rows].astype(np.float64)
    frontier_tree = np.arange(n_trees)
    frontier_parent = np.full(n_trees, -1)
    frontier_tau_parent = np.zeros(n_trees)
    levels = []
    n_created = 0
    depth = 0
    while frontier_tree.size:
        k = frontier_tree.size
        starts = np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
        n_rows = np.diff(np.r_[starts, segment.size])
        Xe = X[rows]
        ye = y[rows]
        lower = np.minimum.reduceat(Xe, starts, axis=0)
        upper = np.maximum.reduceat(Xe, starts, axis=0)
        count = np.add.reduceat(weights, starts)
        mean = np.add.reduceat(weights * ye, starts) / count
        dev = ye - mean[segment]
        var = np.add.reduceat(weights * dev * dev, starts) / count
        y_min = np.minimum.reduceat(ye, starts)
        y_max = np.maximum.reduceat(ye, starts)
        extent = upper - lower
        linear_dim = extent.sum(axis=1)

        can_split = (n_rows >= min_samples_split) & (linear_dim > 0)
        if max_depth is not None and depth >= max_depth:
            can_split[:] = False
        if stop_pure:
            can_split &= y_min < y_max
        # Three draws per frontier node, always, so the stream is consumed
        # the same way whichever nodes split.
        e = rng.standard_exponential(k)
        u_dim = rng.random(k)
        u_loc = rng.random(k)
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = frontier_tau_parent + e / linear_dim
        split = can_split & (tau < lifetime)
        tau = np.where(split, tau, lifetime)

        # Dimension d with probability extent_d / Lambda: the first whose
        # cumulative extent exceeds u * Lambda (zero-extent dimensions never
        # are the first to exceed it).
        cumulative = np.cumsum(extent, axis=1)
        feature = np.count_nonzero(cumulative <= (u_dim * linear_dim)[:, None], axis=1)
        last_positive = n_features - 1 - np.argmax(extent[:, ::-1] > 0, axis=1)
        feature = np.minimum(feature, last_positive)
        at = np.arange(k)
        lo, hi = lower[at, feature], upper[at, feature]
        # lo + u (hi - lo) can round up to hi; keep the threshold below it
        # so that both children are non-empty.
        threshold = np.minimum(lo + u_loc * (hi - lo), np.nextafter(hi, -np.inf))
        feature = np.where(split, feature, 0)
        threshold = np.where(split, threshold, np.inf)

        rank = np.cumsum(split) - 1
        ids = n_created + at
        left = np.where(split, n_created + k + 2 * rank, -1)
        right = np.where(split, left + 1, -1)
        levels.append(
            (
                frontier_tree,
                np.full(k, depth),
                frontier_parent,
                left,
                right,
                lower,
                upper,
                tau,
                feature,
                threshold,
                count,
                n_rows,
                mean,
                var,
                y_min,
                y_max,
            )
        )

        keep = split[segment]
        goes_right = Xe[np.arange(rows.size), feature[segment]] > threshold[segment]
        child = (2 * rank[segment] + goes_right)[keep]
        order = np.argsort(child, kind="stable")
        rows, weights, segment = rows[keep][order], weights[keep][order], child[order]
        parents = np.flatnonzero(split)
        frontier_tree = np.repeat(frontier_tree[parents], 2)
        frontier_parent = np.repeat(ids[parents], 2)
        frontier_tau_parent = np.repeat(tau[parents], 2)
        n_created += k
        depth += 1
    fields = [np.concatenate(column) for column in zip(*levels)]
    return _Nodes(*fields)


# --------------------------------------------------------------------------------------
# Hierarchical Gaussian prior and exact belief propagation.
# --------------------------------------------------------------------------------------


@dataclass
class _Hyper:
    """Per-tree hyperparameters of the hierarchical prior (from the reference code).

    ``mu`` = mean of the tree's targets, ``V`` their population variance,
    ``K = min(2N, 500)``, ``sigma_y2 = V / K`` (noise), ``sigma_h2 = 2VK/(K+2)``
    (so a leaf mean has prior variance ``sigma_h2 / 2`` about ``mu``), and
    ``gamma = D / (2 log2 N)``. ``degenerate`` marks trees whose targets are
    all equal (or that have one point): the posterior is then a point mass.
    """

    mu: np.ndarray
    sigma_y2: np.ndarray
    sigma_h2: np.ndarray
    gamma: np.ndarray
    degenerate: np.ndarray


def _hyperparameters(nodes: _Nodes, n_trees: int, n_features: int) -> _Hyper:
    root = np.arange(n_trees)  # the roots are created first, in tree order
    n = nodes.count[root]
    variance = nodes.var[root]
    degenerate = (nodes.y_min[root] == nodes.y_max[root]) | ~(variance > 1e-300) | (n < 2)
    k = np.minimum(2.0 * n, 500.0)
    with np.errstate(divide="ignore"):
        gamma = n_features / (2.0 * np.log2(np.maximum(n, 1.0)))
    sigma_y2 = variance / k
    sigma_h2 = 2.0 * variance * k / (k + 2.0)
    # Finite stand-ins keep the message passing free of 0/0 for degenerate
    # trees, whose predictions do not use it.
    sigma_y2 = np.where(degenerate, 1.0, sigma_y2)
    sigma_h2 = np.where(degenerate, 1.0, sigma_h2)
    gamma = np.where(degenerate, 1.0, gamma)
    return _Hyper(
        mu=nodes.mean[root],
        sigma_y2=sigma_y2,
        sigma_h2=sigma_h2,
        gamma=gamma,
        degenerate=degenerate,
    )


@dataclass
class _Posterior:
    """Gaussian messages of every node, as (mean, variance) about the tree's ``mu``.

    ``phi``: prior variance of a node's mean given its parent's;
    ``L``: likelihood of the node's data as a function of its mean;
    ``U``: the message to the parent (``L`` widened by ``phi``);
    ``A``: the cavity, i.e. the parent's mean given all data outside this
    node's subtree (``(0, 0)`` at a root, where the parent is ``mu`` itself);
    ``Q``: the posterior of the node's mean.
    """

    phi: np.ndarray
    mL: np.ndarray
    vL: np.ndarray
    mU: np.ndarray
    vU: np.ndarray
    mA: np.ndarray
    vA: np.ndarray
    mQ: np.ndarray
    vQ: np.ndarray


def _belief_propagation(nodes: _Nodes, hyper: _Hyper) -> _Posterior:
    """Exact posterior of every node mean by Gaussian belief propagation.

    Prior: ``mu_root ~ N(mu, phi_root)``, ``mu_j | mu_parent ~ N(mu_parent,
    phi_j)`` with ``phi_j = sigma_h2 [sig(gamma tau_j) - sig(gamma tau_parent)]``;
    likelihood ``y_i ~ N(mu_leaf(i), sigma_y2)``, so a leaf's data enter as
    ``N(mean, sigma_y2 / count)``. Every depth level of every tree is one
    vectorized step.
    """
    tree = nodes.tree
    gamma = hyper.gamma[tree]
    sigma_h2 = hyper.sigma_h2[tree]
    phi = sigma_h2 * _sigmoid_diff(gamma * nodes.tau, gamma * nodes.tau_parent)
    leaf = nodes.is_leaf
    n = tree.size
    mL = np.where(leaf, nodes.mean - hyper.mu[tree], 0.0)
    vL = np.where(leaf, hyper.sigma_y2[tree] / nodes.count, 0.0)
    mU = np.empty(n)
    vU = np.empty(n)
    bounds = np.r_[0, np.flatnonzero(np.diff(nodes.depth)) + 1, n]
    levels = [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:])]

    for level in reversed(levels):
        inner = level[~leaf[level]]
        left, right = nodes.left[inner], nodes.right[inner]
        precision_left, precision_right = 1.0 / vU[left], 1.0 / vU[right]
        vL[inner] = 1.0 / (precision_left + precision_right)
        mL[inner] = (mU[left] * precision_left + mU[right] * precision_right) * vL[inner]
        mU[level] = mL[level]
        vU[level] = vL[level] + phi[level]

    mA = np.zeros(n)
    vA = np.zeros(n)
    mQ = np.empty(n)
    vQ = np.empty(n)
    for level in levels:
        precision_prior = 1.0 / (vA[level] + phi[level])
        mean_prior = mA[level]
        vQ[level] = 1.0 / (precision_prior + 1.0 / vL[level])
        mQ[level] = (mean_prior * precision_prior + mL[level] / vL[level]) * vQ[level]
        inner = ~leaf[level]
        parent, precision_parent = level[inner], precision_prior[inner]
        weighted_parent = mean_prior[inner] * precision_parent
        for child, sibling in (
            (nodes.left[parent], nodes.right[parent]),
            (nodes.right[parent], nodes.left[parent]),
        ):
            precision_sibling = 1.0 / vU[sibling]
            vA[child] = 1.0 / (precision_parent + precision_sibling)
            mA[child] = (weighted_parent + mU[sibling] * precision_sibling) * vA[child]
    return _Posterior(phi=phi, mL=mL, vL=vL, mU=mU, vU=vU, mA=mA, vA=vA, mQ=mQ, vQ=vQ)


# --------------------------------------------------------------------------------------
# Prediction.
# --------------------------------------------------------------------------------------

# An infinite span (a leaf under an infinite lifetime) is stored as this
# finite number: the cut probability is still exactly 0 inside the box and 1
# at any distance above 1e-297 outside it, and no inf * 0 appears anywhere.
_FOREVER = 1e300


def _truncated_exponential_mean(eta: np.ndarray, span: np.ndarray) -> np.ndarray:
    """``E[E | E <= span]`` for ``E ~ Exp(rate eta)``: the expected cut time within a span.

    Equals ``1/eta - span / expm1(eta span)`` (``1/eta`` for an infinite
    span); a series replaces the cancelling difference when ``eta span`` is
    small, which also covers ``eta = 0``.
    """
    z = eta * span
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = 1.0 / eta - span / np.expm1(z)
    small = np.flatnonzero(z < 1e-3)
    if small.size:
        zs = z[small]
        out[small] = span[small] * (0.5 - zs / 12.0 + zs**3 / 720.0)
    return out


def _exact_component(
    t: _Values,
    tau_parent: _Values,
    tau: _Values,
    mA: _Values,
    vA: _Values,
    mL: _Values,
    vL: _Values,
    sigma_h2: _Values,
    sigma_y2: _Values,
    gamma: _Values,
    lifetime: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Predictive (mean, variance) of a new leaf holding ``x``, cut off above node j at time t.

    The cut creates a node between ``j``'s parent and ``j``, at time
    ``tau_parent < t < tau``. Its mean gets a message from above (the
    parent's cavity ``A`` widened by the prior variance from ``tau_parent``
    to ``t``) and one from below (``j``'s likelihood ``L`` widened by the
    prior variance from ``t`` to ``tau``); the new leaf adds the prior
    variance from ``t`` to the lifetime, and the observation adds noise.
    Means are relative to the tree's ``mu``. This is the readable form;
    prediction uses :func:`_bayes_components`, which computes the same with
    per-node constants folded in.
    """
    v_down = vA + sigma_h2 * _sigmoid_diff(gamma * t, gamma * tau_parent)
    v_up = vL + sigma_h2 * _sigmoid_diff(gamma * tau, gamma * t)
    precision_down, precision_up = 1.0 / v_down, 1.0 / v_up
    variance = 1.0 / (precision_down + precision_up)
    mean = (mA * precision_down + mL * precision_up) * variance
    variance += sigma_h2 * _sigmoid_diff(gamma * lifetime, gamma * t) + sigma_y2
    return mean, variance


@dataclass
class _Arrays:
    """Everything prediction reads, with each tree's nodes contiguous.

    Nodes: ``left`` (the right child is ``left + 1``; a leaf points to
    itself), ``feature`` and ``threshold`` route (right if ``x[feature] >
    threshold``; inf at leaves), ``parent`` (at the roots, a last, sentinel
    node whose box is infinite and whose parent is itself), ``leaf``; ``box``
    (n_nodes, 2D) is ``[upper, -lower]``, so that the L1 distance of ``x``
    to the box is ``sum(max([x, -x] - box, 0))``; ``span`` multiplies that
    distance into the cut hazard (``tau - tau_parent``, ``_FOREVER`` for a
    leaf under an infinite lifetime); ``fields``: per-node constants of the
    mode's components; ``leaf_mean``/``leaf_second``: what a point that is
    never cut off gets at its leaf (mean about the tree's shift, and second
    moment). Per tree: ``root``, ``shift``, ``noise`` (a variance every
    component has, added to the tree's variance at the end) and
    ``constant`` (a degenerate tree predicts ``(shift, 0)`` everywhere).
    """

    left: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    parent: np.ndarray
    leaf: np.ndarray
    box: np.ndarray
    span: np.ndarray
    fields: dict
    leaf_mean: np.ndarray
    leaf_second: np.ndarray
    root: np.ndarray
    shift: np.ndarray
    noise: np.ndarray
    constant: np.ndarray


def _prediction_arrays(
    nodes: _Nodes, hyper: _Hyper, posterior: _Posterior | None, mode: str, lifetime: float
) -> _Arrays:
    n = nodes.tree.size
    tree = nodes.tree
    leaf = nodes.is_leaf
    tau_parent = nodes.tau_parent
    if mode == "skgarden":
        # A leaf never cuts (scikit-garden gives it all the mass left over).
        span = nodes.tau - tau_parent
        mean = nodes.mean - hyper.mu[tree]
        second = nodes.var + mean**2
        fields = {"mean": mean, "second": second}
        leaf_mean, leaf_second = mean, second
    else:
        if posterior is None:
            raise ValueError(f"mode {mode!r} needs the posterior of belief propagation")
        # A leaf can cut too, until the lifetime.
        span = np.minimum(np.where(leaf, lifetime, nodes.tau) - tau_parent, _FOREVER)
        gamma, sigma_h2 = hyper.gamma[tree], hyper.sigma_h2[tree]
        # Constants of the sigmoid differences (see _bayes_components).
        e_parent = np.exp(-gamma * tau_parent)
        fields = {
            "gamma": gamma,
            "e_parent": e_parent,
            "c_down": sigma_h2 * e_parent / (1.0 + e_parent),
        }
        # The noise variance sigma_y2 is part of every component, so it is
        # added once per tree instead (see _Arrays.noise).
        if mode == "reference":
            fields.update(mean=posterior.mQ, var=posterior.vQ)
        else:
            fields.update(
                mA=posterior.mA,
                vA=posterior.vA,
                mL=posterior.mL,
                vL=posterior.vL,
                c_up=sigma_h2 / (1.0 + np.exp(-gamma * nodes.tau)),
                c_life=sigma_h2 / (1.0 + np.exp(-gamma * lifetime)),
            )
            if math.isfinite(lifetime):
                fields["lifetime_gap"] = gamma * (lifetime - tau_parent)
        leaf_mean, leaf_second = posterior.mQ, posterior.vQ + posterior.mQ**2

    # Renumber so that each tree's nodes are contiguous (locality of the
    # gathers); creation order is kept within a tree, so siblings stay
    # adjacent and the right child is still left + 1.
    order = np.argsort(tree, kind="stable")
    new_id = np.empty_like(order)
    new_id[order] = np.arange(order.size)
    # A sentinel node above the roots (index n): its box is everything, so a
    # point is inside it, and its parent is itself.
    renumber = np.r_[new_id, n]
    order = np.r_[order, n]
    left = np.r_[np.where(leaf, np.arange(n), nodes.left), n]
    box = np.concatenate([nodes.upper, -nodes.lower], axis=1)
    box = np.r_[box, np.full((1, box.shape[1]), np.inf)]
    n_trees = hyper.mu.size

    def extend(values: np.ndarray, fill: float = 0) -> np.ndarray:
        return np.r_[values, np.full(1, fill, values.dtype)][order]

    return _Arrays(
        left=renumber[left[order]],
        feature=extend(nodes.feature).astype(np.intp),
        threshold=np.r_[nodes.threshold, np.inf][order],
        parent=renumber[np.r_[nodes.parent, n][order]],
        leaf=extend(leaf),
        box=np.ascontiguousarray(box[order]),
        span=extend(span),
        # (ones keep the sentinel's components finite; its weight is 0)
        fields={key: extend(value, 1) for key, value in fields.items()},
        leaf_mean=extend(leaf_mean),
        leaf_second=extend(leaf_second),
        root=new_id[np.arange(n_trees)],
        shift=hyper.mu,
        noise=np.zeros(n_trees) if mode == "skgarden" else hyper.sigma_y2,
        constant=hyper.degenerate & (mode != "skgarden"),
    )


def _bayes_components(
    fields: dict,
    mode: str,
    finite_lifetime: bool,
    node: np.ndarray,
    eta: np.ndarray,
    span: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Component (mean about the shift, second moment) of a cut at each point's node.

    Leaves out the noise variance ``sigma_y2``, which every component has.
    Finite for points inside the box (``eta = 0``), where it has no weight.

    The cut time is plugged in at its conditional mean ``t = tau_parent +
    e`` given a cut during the node's span (as the reference code does).
    The prior variances between two times are differences of sigmoids,
    written as in :func:`_sigmoid_diff` with ``exp(-gamma t) = e_parent
    exp(-gamma e)``, so that they keep their precision late in the tree::

        sig(g t) - sig(g tau_p) = -c expm1(-g e) / (1 + exp(-g t)),  c = e_p / (1 + e_p)
        sig(g tau) - sig(g t) = -exp(-g t) expm1(g (t - tau)) / ((1 + exp(-g tau))(1 + exp(-g t)))
    """
    take = {key: value.take(node) for key, value in fields.items()}
    e = _truncated_exponential_mean(eta, span)
    gamma_e = take["gamma"] * e
    em = np.expm1(-gamma_e)
    e_t = take["e_parent"] * (1.0 + em)
    inv_t = 1.0 / (1.0 + e_t)
    v_down = -take["c_down"] * em * inv_t  # sigma_h2 [sig(gamma t) - sig(gamma tau_parent)]
    if mode == "reference":
        mean = take["mean"]
        variance = take["var"] + v_down
        return mean, variance + mean**2
    e_t *= inv_t
    # sigma_h2 [sig(gamma tau) - sig(gamma t)]; a leaf's span is _FOREVER, so
    # expm1 gives -1 there, as for tau = inf.
    v_up = take["vL"] - take["c_up"] * e_t * np.expm1(gamma_e - take["gamma"] * span)
    v_down += take["vA"]
    precision_down, precision_up = 1.0 / v_down, 1.0 / v_up
    variance = 1.0 / (precision_down + precision_up)
    mean = (take["mA"] * precision_down + take["mL"] * precision_up) * variance
    # The new leaf's own prior variance, sigma_h2 [sig(gamma lifetime) - sig(gamma t)]
    # (c_life = sigma_h2 under an infinite lifetime).
    if finite_lifetime:
        variance -= take["c_life"] * e_t * np.expm1(gamma_e - take["lifetime_gap"])
    else:
        variance += take["c_life"] * e_t
    return mean, variance + mean**2


def _find_leaves(arrays: _Arrays, node: np.ndarray, X: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Route (tree, point) pairs from ``node`` (their roots) to their leaves.

    ``X`` is the block of points, ``point`` each pair's row in it.
    """
    left, feature, threshold, is_leaf = arrays.left, arrays.feature, arrays.threshold, arrays.leaf
    width = X.shape[1]
    flat = X.ravel()
    offset = point * width
    leaves = np.empty(node.size, dtype=np.intp)
    index = None  # positions of the pairs still routing
    while True:
        k = node.size
        column = feature.take(node)
        column += offset
        go_right = flat.take(column) > threshold.take(node)
        node = left.take(node)
        node += go_right
        arrived = is_leaf.take(node)
        n_arrived = np.count_nonzero(arrived)
        # Pairs at a leaf stay there (its threshold is inf and its left child
        # itself), so they may ride along until enough have arrived.
        if n_arrived == k or n_arrived >= _COMPACT_FRACTION * k:
            # (take is several times faster than fancy indexing here.)
            done = np.flatnonzero(arrived)
            leaves[done if index is None else index.take(done)] = node.take(done)
            if n_arrived == k:
                return leaves
            routing = np.flatnonzero(~arrived)
            node, offset = node.take(routing), offset.take(routing)
            index = routing if index is None else index.take(routing)


@dataclass
class _Climbers:
    """(tree, point) pairs on their way up: current node, the value below it
    (mean about the tree's shift, second moment), where to write the result,
    and the point as ``[x, -x]``."""

    node: np.ndarray
    first: np.ndarray
    second: np.ndarray
    index: np.ndarray
    rows: np.ndarray

    @classmethod
    def concatenate(cls, parts: list) -> _Climbers:
        return cls(
            *(
                np.concatenate(column)
                for column in zip(*((p.node, p.first, p.second, p.index, p.rows) for p in parts))
            )
        )


def _start_climb(
    arrays: _Arrays, mode: str, leaves: np.ndarray, index: np.ndarray, rows: np.ndarray
) -> _Climbers:
    """Pairs at their leaves, about to climb."""
    # skgarden: the leaf takes the mass left over and cuts start at its
    # parent; the Bayesian modes let the leaf cut too.
    node = arrays.parent.take(leaves) if mode == "skgarden" else leaves
    return _Climbers(
        node, arrays.leaf_mean.take(leaves), arrays.leaf_second.take(leaves), index, rows
    )


def _climb(
    arrays: _Arrays,
    mode: str,
    finite_lifetime: bool,
    pairs: _Climbers,
    out_first: np.ndarray,
    out_second: np.ndarray,
    work: np.ndarray,
    zeros: np.ndarray,
    hand_back: int = 0,
) -> _Climbers | None:
    """A tree's mixture moments for (tree, point) pairs, from their leaves upwards.

    The mixture over a path is evaluated from the bottom in Horner form: the
    value ``R`` below node ``j`` becomes ``p_j a_j + (1 - p_j) R``, with
    ``p_j`` the probability of being cut off at ``j`` and ``a_j`` its
    component. Boxes are nested, so the distance from ``x`` to them only
    shrinks on the way up; once ``x`` is inside a box (distance 0) nothing
    above it can cut, and the pair is done. Above the root is a sentinel
    node whose box is everything. Results go to ``out_first[index]`` (mean
    about the tree's shift) and ``out_second[index]`` (second moment).

    Once fewer than ``hand_back`` pairs are left, they are returned instead,
    so that the last few pairs of many climbs can finish in one (each step
    costs about as much Python overhead for 10 pairs as for 10,000).
    ``work`` and ``zeros`` are scratch arrays of at least the shape of
    ``pairs.rows``, the latter all zeros.
    """
    box, span, parent, fields = arrays.box, arrays.span, arrays.parent, arrays.fields
    node, first, second, index, rows = (
        pairs.node,
        pairs.first,
        pairs.second,
        pairs.index,
        pairs.rows,
    )
    # skgarden mode sums the distances with a minus sign, which saves a
    # negation before the exponential.
    ones = np.full(rows.shape[1], -1.0 if mode == "skgarden" else 1.0)
    while True:
        k = node.size
        distance = work[:k]
        np.take(box, node, axis=0, out=distance, mode="clip")
        np.subtract(rows, distance, out=distance)
        np.maximum(distance, zeros[:k], out=distance)
        eta = distance @ ones
        inside = eta == 0
        if mode == "skgarden":
            # Inside the box the weight is exactly 0, so no mask is needed.
            hazard = span.take(node)
            hazard *= eta  # minus the hazard
            weight = np.expm1(hazard, out=hazard)  # minus the cut probability
            mean = fields["mean"].take(node)
            mean -= first
            mean *= weight
            first -= mean
            moment = fields["second"].take(node)
            moment -= second
            moment *= weight
            second -= moment
        else:
            # The components stay finite inside the box (eta = 0), where the
            # weight is 0.
            node_span = span.take(node)
            mean, moment = _bayes_components(fields, mode, finite_lifetime, node, eta, node_span)
            node_span *= eta
            weight = np.expm1(-node_span, out=node_span)
            mean -= first
            mean *= weight
            first -= mean
            moment -= second
            moment *= weight
            second -= moment
        node = parent.take(node)
        n_done = np.count_nonzero(inside)
        # Pairs that are done stay inside every box above them, so they may
        # ride along until enough of them are worth dropping.
        if n_done == k or n_done >= _COMPACT_FRACTION * k:
            # (take is several times faster than fancy indexing here.)
            finished = np.flatnonzero(inside)
            at = index.take(finished)
            out_first[at] = first.take(finished)
            out_second[at] = second.take(finished)
            if n_done == k:
                return None
            climbing = np.flatnonzero(~inside)
            node, first, second = node.take(climbing), first.take(climbing), second.take(climbing)
            index, rows = index.take(climbing), rows.take(climbing, axis=0)
            if node.size < hand_back:
                return _Climbers(node, first, second, index, rows)


def _predict_trees(
    arrays: _Arrays, mode: str, finite_lifetime: bool, trees: np.ndarray, X: np.ndarray
) -> MixtureMoments:
    """Mixture moments over ``trees`` at the points ``X``."""
    n = X.shape[0]
    moments = MixtureMoments(n)
    for tree in trees[arrays.constant[trees]]:
        moments.add(np.full(n, arrays.shift[tree]), 0.0)
    trees = trees[~arrays.constant[trees]]
    block = min(n, _BLOCK)
    group = max(1, _PAIRS // block)  # trees walked together when there are few points
    Xd = np.concatenate([X, -X], axis=1)
    work = np.empty((max(block * min(group, trees.size), _HAND_BACK * _BATCH), Xd.shape[1]))
    zeros = np.zeros_like(work)
    args = (arrays, mode, finite_lifetime)
    # Results of _BATCH trees at a time; their climbs' last pairs finish together.
    batch = max(group, _BATCH)
    for b in range(0, trees.size, batch):
        members = trees[b : b + batch]
        first = np.empty(members.size * n)
        second = np.empty(members.size * n)
        stragglers = []
        for g in range(0, members.size, group):
            walkers = members[g : g + group]
            slots = np.arange(g, g + walkers.size)
            for start in range(0, n, block):
                stop = min(start + block, n)
                point = np.tile(np.arange(stop - start), walkers.size)
                roots = np.repeat(arrays.root[walkers], stop - start)
                leaves = _find_leaves(arrays, roots, X[start:stop], point)
                index = np.repeat(slots * n + start, stop - start) + point
                rows = Xd[start:stop]
                if walkers.size > 1:
                    rows = np.tile(rows, (walkers.size, 1))
                pairs = _start_climb(arrays, mode, leaves, index, rows)
                rest = _climb(*args, pairs, first, second, work, zeros, hand_back=_HAND_BACK)
                if rest is not None:
                    stragglers.append(rest)
        if stragglers:
            pairs = _Climbers.concatenate(stragglers)
            scratch = (
                (work, zeros)
                if pairs.node.size <= work.shape[0]
                else (np.empty_like(pairs.rows), np.zeros_like(pairs.rows))
            )
            _climb(*args, pairs, first, second, *scratch)
        first = first.reshape(members.size, n)
        second = second.reshape(members.size, n)
        for slot, tree in enumerate(members):
            variance = np.maximum(second[slot] - first[slot] ** 2, 0.0) + arrays.noise[tree]
            moments.add(first[slot] + arrays.shift[tree], variance)
    return moments


# --------------------------------------------------------------------------------------
# The surrogate.
# --------------------------------------------------------------------------------------


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
        nodes = _grow_forest(
            X,
            y,
            counts,
            n_trees,
            rng,
            lifetime,
            int(self.min_samples_split),
            self.max_depth,
            stop_pure=self.mode == "skgarden",
        )
        hyper = _hyperparameters(nodes, n_trees, n_features)
        posterior = None if self.mode == "skgarden" else _belief_propagation(nodes, hyper)
        self._nodes, self._hyper, self._posterior = nodes, hyper, posterior
        self._arrays = _prediction_arrays(nodes, hyper, posterior, self.mode, lifetime)
        self.n_nodes_ = int(nodes.tree.size)
        self.max_depth_ = int(nodes.depth.max())
        self.hyperparameters_ = {
            "mu": hyper.mu,
            "sigma_y2": hyper.sigma_y2,
            "sigma_h2": hyper.sigma_h2,
            "gamma": hyper.gamma,
        }

    def _predict_dist(self, X: np.ndarray) -> Prediction:
        accumulate = partial(
            _predict_trees,
            self._arrays,
            self.mode,
            math.isfinite(self.lifetime),
            X=np.ascontiguousarray(X),
        )
        # One BLAS thread: the only BLAS call is a (points x 2D) matrix-vector
        # product, which threads slow down on a shared machine.
        with threadpool_limits(limits=1, user_api="blas"):
            return threaded_mixture_moments(
                accumulate, np.arange(self._arrays.root.size), self.n_jobs
            )
