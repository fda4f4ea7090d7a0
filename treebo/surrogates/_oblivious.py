"""Oblivious (symmetric) regression trees on quantized features, vectorized with numpy.

An oblivious tree of depth ``d`` applies the same split ``x[f_l] > border`` to
every node of level ``l``, so a point's leaf is the ``d``-bit number whose bit
``l`` (most significant first) is the outcome of split ``l``. That makes
prediction one comparison per level over all points at once, with no per-node
bookkeeping; it is the tree shape CatBoost uses, and the SGLB papers ran on it.

Features are quantized once per fit: the candidate borders of a feature are the
midpoints between its consecutive distinct training values (at most
``MAX_BORDERS`` of them, evenly thinned when there are more), and a value's bin
is the number of borders strictly below it. ``x > borders[b]`` is then
``bin(x) > b``, so trees store border indices and compare small integers.

The split search is exact least squares on two targets at once: the split of
level ``l`` maximizes ``sum over new leaves of |S|^2 / n`` (``S`` the sum of
the target vectors in the leaf, ``n`` its count), which is the reduction in
squared error of fitting leaf means. It is computed for every feature and
border in one pass over the points sorted by (feature, leaf, bin): moving one
point from the right to the left child of its leaf changes that leaf's term by
an amount read off running sums, and a cumulative sum of those changes over
the bins gives the score of every border.
"""

from __future__ import annotations

import numpy as np

#: Most borders per feature, so that bins fit in ``uint8`` (bin 0..254).
MAX_BORDERS = 254

#: Border index meaning "no split": no bin is larger, so every point goes left.
NO_SPLIT = 255

#: Deepest tree supported; leaf indices are ``uint8``.
MAX_DEPTH = 8


def fit_borders(X: np.ndarray, max_borders: int = MAX_BORDERS) -> list[np.ndarray]:
    """Candidate split borders of every feature.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    max_borders : int
        At most this many borders per feature (evenly spaced among the
        midpoints when there are more).

    Returns
    -------
    list of ndarray
        One sorted array of borders per feature (empty for a constant feature).
    """
    borders = []
    for column in X.T:
        values = np.unique(column)
        mids = 0.5 * (values[1:] + values[:-1])
        if len(mids) > max_borders:
            mids = mids[np.unique(np.linspace(0, len(mids) - 1, max_borders).round().astype(int))]
        borders.append(mids)
    return borders


def quantize(X: np.ndarray, borders: list[np.ndarray]) -> np.ndarray:
    """Bins of every point, feature-major.

    Parameters
    ----------
    X : ndarray of shape (n_points, n_features)
    borders : list of ndarray, from :func:`fit_borders`

    Returns
    -------
    ndarray of shape (n_features, n_points), dtype uint8
        ``bins[f, i]`` = number of borders of feature ``f`` strictly below ``X[i, f]``.
    """
    bins = np.empty((X.shape[1], X.shape[0]), dtype=np.uint8)
    for f, b in enumerate(borders):
        bins[f] = np.searchsorted(b, X[:, f], side="left")
    return bins


def leaf_index(
    bins: np.ndarray,
    features: np.ndarray,
    thresholds: np.ndarray,
    out: np.ndarray | None = None,
    scratch: np.ndarray | None = None,
) -> np.ndarray:
    """Leaf of every point in one oblivious tree.

    Parameters
    ----------
    bins : ndarray of shape (n_features, n_points), uint8
    features, thresholds : ndarray of shape (depth,)
        Split ``l`` sends a point right (bit 1) when ``bins[features[l]] > thresholds[l]``.
    out, scratch : ndarray of shape (n_points,), uint8 and bool, optional
        Reused buffers.

    Returns
    -------
    ndarray of shape (n_points,), uint8
        Leaf numbers in ``[0, 2**depth)``, split 0 being the most significant bit.
    """
    n_points = bins.shape[1]
    if out is None:
        out = np.empty(n_points, dtype=np.uint8)
    if scratch is None:
        scratch = np.empty(n_points, dtype=bool)
    out[:] = 0
    for f, b in zip(features, thresholds):
        np.greater(bins[f], b, out=scratch)
        out <<= 1
        out |= scratch
    return out


class ObliviousGrower:
    """Exact least-squares split search for oblivious trees on fixed quantized data.

    Everything that depends only on the training inputs (the per-feature
    order of the points by bin, which borders separate training points) is
    computed once here; :meth:`grow` is then called once per boosting
    iteration with new targets.

    Parameters
    ----------
    bins : ndarray of shape (n_features, n_samples), uint8
        The training points' bins, from :func:`quantize`.
    """

    def __init__(self, bins: np.ndarray):
        n_features, n_samples = bins.shape
        self.bins = bins
        self.n_bins = n_bins = int(bins.max()) + 1 if bins.size else 1
        order = np.argsort(bins, axis=1, kind="stable")
        # Flat arrays over (feature, point) entries, in (feature, bin) order.
        self._point = order.ravel()
        self._bin = np.take_along_axis(bins, order, axis=1).ravel().astype(np.intp)
        self._feature = np.repeat(np.arange(n_features), n_samples)
        # Sort keys (feature, leaf) stay below 2**15 for int16, whose stable
        # argsort is a radix sort, several times faster than a comparison sort.
        key_type = np.int16 if n_features << MAX_DEPTH < 2**15 else np.int32
        self._feature_key = self._feature.astype(key_type)
        self._position = np.tile(np.arange(1, n_samples + 1), n_features).astype(float)
        self._cell = self._feature * n_bins + self._bin
        occupied = np.zeros((n_features, n_bins), dtype=bool)
        occupied[np.arange(n_features)[:, None], bins] = True
        # A border separates training points only if a point lies on each side;
        # borders between two occupied bins with empty bins in between give
        # the same partition, and the lowest one is kept.
        top = bins.max(axis=1) if bins.size else np.zeros(n_features, dtype=int)
        self._invalid = ~(occupied & (np.arange(n_bins)[None, :] < top[:, None])).ravel()

    def grow(self, targets: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Grow one tree greedily, level by level.

        Parameters
        ----------
        targets : ndarray of shape (2, n_samples)
            The two target components the tree is fitted to jointly.
        depth : int
            Number of levels, 0 to :data:`MAX_DEPTH`.

        Returns
        -------
        features : ndarray of shape (depth,), intp
        thresholds : ndarray of shape (depth,), uint8
            Border index per level; :data:`NO_SPLIT` where no border separates
            the training points.
        leaf : ndarray of shape (n_samples,), intp
            Leaf of every training point.
        """
        n_features, n_samples = self.bins.shape
        t0, t1 = targets
        features = np.zeros(depth, dtype=np.intp)
        thresholds = np.full(depth, NO_SPLIT, dtype=np.uint8)
        leaf = np.zeros(n_samples, dtype=np.intp)
        # The running sums run over all features' blocks in a row; block f
        # starts after f full passes over the points.
        before0 = self._feature * t0.sum()
        before1 = self._feature * t1.sum()
        for level in range(depth):
            n_leaves = 1 << level
            leaf_of_entry = leaf[self._point]
            key = self._feature_key * n_leaves + leaf_of_entry.astype(self._feature_key.dtype)
            perm = np.argsort(key, kind="stable")
            point, entry_leaf, key = self._point[perm], leaf_of_entry[perm], key[perm]
            r0, r1 = t0[point], t1[point]
            count = np.bincount(leaf, minlength=n_leaves).astype(float)
            sum0 = np.bincount(leaf, weights=t0, minlength=n_leaves)
            sum1 = np.bincount(leaf, weights=t1, minlength=n_leaves)
            unsplit = (sum0**2 + sum1**2) / np.maximum(count, 1.0)
            # Inclusive sums and counts of the entry's leaf up to the entry
            # (left child) and the rest of that leaf (right child).
            left0 = np.cumsum(r0)
            left0 -= before0
            left0 -= (np.cumsum(sum0) - sum0)[entry_leaf]
            left1 = np.cumsum(r1)
            left1 -= before1
            left1 -= (np.cumsum(sum1) - sum1)[entry_leaf]
            n_left = self._position - (np.cumsum(count) - count)[entry_leaf]
            right0 = sum0[entry_leaf] - left0
            right1 = sum1[entry_leaf] - left1
            n_right = count[entry_leaf] - n_left
            gain = (left0**2 + left1**2) / n_left
            gain += (right0**2 + right1**2) / np.maximum(n_right, 1.0)
            # Change of the leaf's term as the entry moves right -> left: the
            # previous entry of the same (feature, leaf) block, or the
            # unsplit term at the first entry of a block.
            previous = np.empty_like(gain)
            previous[1:] = gain[:-1]
            first = np.empty(len(gain), dtype=bool)
            first[:1] = True
            np.not_equal(key[1:], key[:-1], out=first[1:])
            previous[first] = unsplit[entry_leaf[first]]
            gain -= previous
            score = np.bincount(self._cell[perm], weights=gain, minlength=n_features * self.n_bins)
            score = np.cumsum(score.reshape(n_features, self.n_bins), axis=1).ravel()
            score[self._invalid] = -np.inf
            best = int(np.argmax(score))
            if score[best] == -np.inf:
                # Every feature is constant: the tree stops splitting, and the
                # remaining levels keep each point in its leaf.
                break
            f, b = divmod(best, self.n_bins)
            features[level], thresholds[level] = f, b
            leaf = 2 * leaf + (self.bins[f] > b)
        else:
            return features, thresholds, leaf
        # Unused levels: NO_SPLIT sends everything left (bit 0).
        leaf <<= depth - level
        return features, thresholds, leaf
