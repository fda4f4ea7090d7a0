"""Prediction of Mondrian trees: each tree's mixture over the nodes where a point may be cut off.

Prediction takes one tree (or, for few points, several) at a time: it
routes every point to its leaf, then climbs back towards the root, folding
in one node per step, and stops a point as soon as it is inside a node's
box: boxes are nested, so no node above can cut it off. Each step is
vectorized over the points; no Python loop runs per point. See
:mod:`treebo.surrogates.mondrian` for the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._mondrian_growth import Nodes
from ._mondrian_posterior import Hyper, Posterior
from .base import MixtureMoments

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


@dataclass
class Arrays:
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
    And the ``mode`` the components are of, and whether the lifetime is
    finite.
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
    mode: str
    finite_lifetime: bool


def prediction_arrays(
    nodes: Nodes, hyper: Hyper, posterior: Posterior | None, mode: str, lifetime: float
) -> Arrays:
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
        # added once per tree instead (see Arrays.noise).
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

    return Arrays(
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
        mode=mode,
        finite_lifetime=math.isfinite(lifetime),
    )


def _bayes_components(
    arrays: Arrays, node: np.ndarray, eta: np.ndarray, span: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Component (mean about the shift, second moment) of a cut at each point's node.

    Leaves out the noise variance ``sigma_y2``, which every component has.
    Finite for points inside the box (``eta = 0``), where it has no weight.

    The cut time is plugged in at its conditional mean ``t = tau_parent +
    e`` given a cut during the node's span (as the reference code does).
    The prior variances between two times are differences of sigmoids,
    written as in :func:`~treebo.surrogates._mondrian_posterior.sigmoid_diff`
    with ``exp(-gamma t) = e_parent exp(-gamma e)``, so that they keep their
    precision late in the tree::

        sig(g t) - sig(g tau_p) = -c expm1(-g e) / (1 + exp(-g t)),  c = e_p / (1 + e_p)
        sig(g tau) - sig(g t) = -exp(-g t) expm1(g (t - tau)) / ((1 + exp(-g tau))(1 + exp(-g t)))
    """
    take = {key: value.take(node) for key, value in arrays.fields.items()}
    e = _truncated_exponential_mean(eta, span)
    gamma_e = take["gamma"] * e
    em = np.expm1(-gamma_e)
    e_t = take["e_parent"] * (1.0 + em)
    inv_t = 1.0 / (1.0 + e_t)
    v_down = -take["c_down"] * em * inv_t  # sigma_h2 [sig(gamma t) - sig(gamma tau_parent)]
    if arrays.mode == "reference":
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
    if arrays.finite_lifetime:
        variance -= take["c_life"] * e_t * np.expm1(gamma_e - take["lifetime_gap"])
    else:
        variance += take["c_life"] * e_t
    return mean, variance + mean**2


def _find_leaves(arrays: Arrays, node: np.ndarray, X: np.ndarray, point: np.ndarray) -> np.ndarray:
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
    arrays: Arrays, leaves: np.ndarray, index: np.ndarray, rows: np.ndarray
) -> _Climbers:
    """Pairs at their leaves, about to climb."""
    # skgarden: the leaf takes the mass left over and cuts start at its
    # parent; the Bayesian modes let the leaf cut too.
    node = arrays.parent.take(leaves) if arrays.mode == "skgarden" else leaves
    return _Climbers(
        node, arrays.leaf_mean.take(leaves), arrays.leaf_second.take(leaves), index, rows
    )


def _climb(
    arrays: Arrays,
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
    mode = arrays.mode
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
            mean, moment = _bayes_components(arrays, node, eta, node_span)
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


def predict_trees(arrays: Arrays, trees: np.ndarray, X: np.ndarray) -> MixtureMoments:
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
                pairs = _start_climb(arrays, leaves, index, rows)
                rest = _climb(arrays, pairs, first, second, work, zeros, hand_back=_HAND_BACK)
                if rest is not None:
                    stragglers.append(rest)
        if stragglers:
            pairs = _Climbers.concatenate(stragglers)
            scratch = (
                (work, zeros)
                if pairs.node.size <= work.shape[0]
                else (np.empty_like(pairs.rows), np.zeros_like(pairs.rows))
            )
            _climb(arrays, pairs, first, second, *scratch)
        first = first.reshape(members.size, n)
        second = second.reshape(members.size, n)
        for slot, tree in enumerate(members):
            variance = np.maximum(second[slot] - first[slot] ** 2, 0.0) + arrays.noise[tree]
            moments.add(first[slot] + arrays.shift[tree], variance)
    return moments
