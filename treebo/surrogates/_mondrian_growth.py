"""Growing Mondrian trees on the data's boxes: all trees at once, one depth level at a time.

A node's data box has linear dimension ``Lambda = sum_d (u_d - l_d)``; it
splits at time ``tau_parent + Exp(rate Lambda)`` if that is before the
lifetime, on dimension ``d`` with probability ``(u_d - l_d) / Lambda``, at a
uniform location inside the box. Splits ignore the labels. The trees are
stored as flat arrays (:class:`Nodes`); see
:mod:`treebo.surrogates.mondrian` for the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Nodes:
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


@dataclass(frozen=True)
class StoppingRules:
    """When a node becomes a leaf instead of splitting.

    It does if its split time would exceed ``lifetime``, if it has fewer
    than ``min_samples_split`` distinct training points or no extent, if it
    is at ``max_depth`` (None: no limit), or, with ``stop_pure``, if all its
    targets are equal.
    """

    lifetime: float
    min_samples_split: int
    max_depth: int | None
    stop_pure: bool


def grow_forest(
    X: np.ndarray,
    y: np.ndarray,
    counts: np.ndarray | None,
    n_trees: int,
    rng: np.random.Generator,
    rules: StoppingRules,
) -> Nodes:
    """Sample ``n_trees`` Mondrian trees restricted to the data's boxes.

    ``counts`` (n_trees, n_samples) are bootstrap counts, used as weights
    (None: every tree has every point once). The frontier of every tree is
    processed together: training rows are kept sorted by the frontier node
    they are in, so node statistics are segment reductions and a split is a
    stable partition of the segment.
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

        can_split = (n_rows >= rules.min_samples_split) & (linear_dim > 0)
        if rules.max_depth is not None and depth >= rules.max_depth:
            can_split[:] = False
        if rules.stop_pure:
            can_split &= y_min < y_max
        # Three draws per frontier node, always, so the stream is consumed
        # the same way whichever nodes split.
        e = rng.standard_exponential(k)
        u_dim = rng.random(k)
        u_loc = rng.random(k)
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = frontier_tau_parent + e / linear_dim
        split = can_split & (tau < rules.lifetime)
        tau = np.where(split, tau, rules.lifetime)

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
    return Nodes(*fields)
