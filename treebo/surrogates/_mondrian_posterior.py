"""The hierarchical Gaussian prior of a Mondrian tree's node means and their exact posterior.

The Bayesian prediction modes of :mod:`treebo.surrogates.mondrian` put a
Brownian motion in sigmoid-warped split time on the node means
(hyperparameters from each tree's data, as in the authors' reference code);
the posteriors are exact: Gaussian belief propagation on the tree, an
upward and a downward pass, vectorized over all nodes of a depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._mondrian_growth import Nodes

# Per-node arrays, or one node's scalars.
_Values = np.ndarray | float


def sigmoid_diff(a: _Values, b: _Values) -> np.ndarray:
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


@dataclass
class Hyper:
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


def hyperparameters(nodes: Nodes, n_trees: int, n_features: int) -> Hyper:
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
    return Hyper(
        mu=nodes.mean[root],
        sigma_y2=sigma_y2,
        sigma_h2=sigma_h2,
        gamma=gamma,
        degenerate=degenerate,
    )


@dataclass
class Posterior:
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


def belief_propagation(nodes: Nodes, hyper: Hyper) -> Posterior:
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
    phi = sigma_h2 * sigmoid_diff(gamma * nodes.tau, gamma * nodes.tau_parent)
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
    return Posterior(phi=phi, mL=mL, vL=vL, mU=mU, vU=vU, mA=mA, vA=vA, mQ=mQ, vQ=vQ)


def exact_component(
    t: _Values, j: int, nodes: Nodes, hyper: Hyper, posterior: Posterior, lifetime: float
) -> tuple[np.ndarray, np.ndarray]:
    """Predictive (mean, variance) of a new leaf holding ``x``, cut off above node j at time t.

    The cut creates a node between ``j``'s parent and ``j``, at time
    ``tau_parent < t < tau``. Its mean gets a message from above (the
    parent's cavity ``A`` widened by the prior variance from ``tau_parent``
    to ``t``) and one from below (``j``'s likelihood ``L`` widened by the
    prior variance from ``t`` to ``tau``); the new leaf adds the prior
    variance from ``t`` to the lifetime, and the observation adds noise.
    Means are relative to the tree's ``mu``. This is the readable form;
    prediction uses ``_bayes_components`` of
    :mod:`treebo.surrogates._mondrian_prediction`, which computes the same
    with per-node constants folded in.
    """
    tree = nodes.tree[j]
    gamma, sigma_h2 = hyper.gamma[tree], hyper.sigma_h2[tree]
    v_down = posterior.vA[j] + sigma_h2 * sigmoid_diff(gamma * t, gamma * nodes.tau_parent[j])
    v_up = posterior.vL[j] + sigma_h2 * sigmoid_diff(gamma * nodes.tau[j], gamma * t)
    precision_down, precision_up = 1.0 / v_down, 1.0 / v_up
    variance = 1.0 / (precision_down + precision_up)
    mean = (posterior.mA[j] * precision_down + posterior.mL[j] * precision_up) * variance
    variance += sigma_h2 * sigmoid_diff(gamma * lifetime, gamma * t) + hyper.sigma_y2[tree]
    return mean, variance
