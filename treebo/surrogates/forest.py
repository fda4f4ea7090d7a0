"""Forest surrogates: random forest, extremely randomized trees and BwO forest.

All three grow scikit-learn trees and predict with the law of total variance
over the trees (Hutter et al. 2014; Kim & Choi 2022, eqs. 3-5): tree ``b``
sends ``x`` to a leaf with weighted mean ``mu_b(x)`` and weighted population
variance ``sigma2_b(x)`` of its in-bag targets; the forest's predictive Normal
has mean ``avg_b mu_b`` and variance ``avg_b (mu_b - mean)^2`` (epistemic)
``+ avg_b sigma2_b`` (aleatoric).

Bootstraps are drawn as multinomial counts and passed to the trees as sample
weights, so no tree copies the training data. A BwO forest draws ``alpha * N``
points with replacement for every tree (``alpha = 4`` by default), which puts
about 98% of the distinct points into every tree (``1 - exp(-alpha)``), and
splits at random locations, so trees agree at the data and disagree between
data points.
"""

from __future__ import annotations

from functools import partial
from numbers import Integral, Real
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor
from sklearn.utils._param_validation import Interval

from .base import (
    N_JOBS,
    RANDOM_STATE,
    MixtureMoments,
    Prediction,
    Surrogate,
    threaded_mixture_moments,
)

__all__ = ["RandomForestSurrogate", "ExtraTreesSurrogate", "BwOForestSurrogate"]


def _fit_tree(
    tree: DecisionTreeRegressor,
    X32: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None,
    min_leaf_variance: float,
) -> tuple[DecisionTreeRegressor, np.ndarray, np.ndarray]:
    # The ensemble checked the trees' parameters before building any (its
    # _parameter_constraints), so each of the trees skips scikit-learn's check.
    with config_context(skip_parameter_validation=True):
        tree.fit(X32, y, sample_weight=weights, check_input=False)
    # value and impurity are the weighted mean and the weighted population
    # variance of the node's in-bag targets (squared-error criterion).
    leaf_mean = np.ascontiguousarray(tree.tree_.value[:, 0, 0], dtype=np.float64)
    leaf_variance = np.maximum(tree.tree_.impurity, min_leaf_variance)
    return tree, leaf_mean, leaf_variance


#: Below this many rows, ordering them costs more than it saves.
_MIN_ROWS_TO_ORDER = 2048


def _root_split_order(trees: list, n_columns: int) -> np.ndarray:
    """Columns ordered by how many of ``trees`` split on them at the root, most first.

    Ties keep the column order. A tree with no split counts for no column.

    Parameters
    ----------
    trees : list of (tree, leaf means, leaf variances)
    n_columns : int

    Returns
    -------
    ndarray of shape (n_columns,)
        Column indices.
    """
    roots = np.array([tree.tree_.feature[0] for tree, _, _ in trees])
    counts = np.bincount(roots[roots >= 0], minlength=n_columns)
    return np.argsort(-counts, kind="stable")


def _locality_order(X: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """A permutation of the rows of ``X`` that visits nearby rows one after another.

    Rows are sorted by their Morton (Z-order) key: the columns' min-max
    scaled values, cut into ``2^bits`` levels, with the bits of all columns
    interleaved (the first 16 of ``columns`` when there are more). Nearby
    rows go down the same branches of a tree, so in this order a tree
    walk's branches are predictable and its memory reads local: the tree
    walks of a candidate pool take about a third less time
    (``benchmarks/iteration_time.py``). Within each level of the key, the
    columns come in the order of ``columns``; with the trees' favourite
    root splits first, rows that share the first branches are adjacent,
    which matters most where a column has one bit (binary rows).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
    columns : ndarray of shape (n_columns,)
        The columns, most significant first.

    Returns
    -------
    ndarray of shape (n_rows,)
        Row indices.
    """
    n_rows = X.shape[0]
    # Beyond 16 columns the rows of a pool are told apart anyway, and
    # fewer columns leave more bits to each.
    X = X[:, columns[:16]]
    n_keyed = X.shape[1]
    bits = min(10, 64 // n_keyed)
    levels = 1 << bits
    low = X.min(axis=0)
    span = X.max(axis=0) - low
    span[span == 0] = 1.0
    level = np.minimum(((X - low) / span * levels).astype(np.int64), levels - 1)
    # spread[v]: the bits of level v, each moved to its slot in the interleaved key.
    values = np.arange(levels, dtype=np.uint64)
    spread = np.zeros(levels, dtype=np.uint64)
    for b in range(bits):
        spread |= ((values >> np.uint64(b)) & np.uint64(1)) << np.uint64(b * n_keyed)
    key = np.zeros(n_rows, dtype=np.uint64)
    for j in range(n_keyed):
        key |= spread[level[:, j]] << np.uint64(n_keyed - 1 - j)
    return np.argsort(key, kind="stable")


def _accumulate(trees: list, X32: np.ndarray) -> MixtureMoments:
    """Mixture moments of ``trees`` (tree, leaf means, leaf variances) at ``X32``."""
    moments = MixtureMoments(X32.shape[0])
    for tree, leaf_mean, leaf_variance in trees:
        leaf = tree.tree_.apply(X32)
        moments.add(leaf_mean[leaf], leaf_variance[leaf])
    return moments


class _TreeEnsemble(Surrogate):
    """Shared fitting and prediction of the forest surrogates, in the units of ``y``."""

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        # The trees' own constraints; checked here, before any tree is built.
        **{
            name: DecisionTreeRegressor._parameter_constraints[name]
            for name in ("max_features", "max_depth", "min_samples_split", "min_samples_leaf")
        },
        "min_leaf_variance": [Interval(Real, 0, None, closed="left")],
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }

    _splitter = "random"

    # Set by the subclasses' __init__.
    n_estimators: int
    max_features: Any
    max_depth: int | None
    min_samples_split: int
    min_samples_leaf: int
    min_leaf_variance: float
    n_jobs: int | None
    random_state: Any

    def _bootstrap_size(self, n_samples: int) -> int | None:
        """Number of draws with replacement per tree, or None for no bootstrap."""
        raise NotImplementedError

    def _fit(self, X: np.ndarray, y: np.ndarray) -> None:
        rng = np.random.default_rng(self.random_state)
        n_samples = X.shape[0]
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        y = np.ascontiguousarray(y, dtype=np.float64)
        tree_class = DecisionTreeRegressor if self._splitter == "best" else ExtraTreeRegressor
        seeds = rng.integers(0, np.iinfo(np.int32).max, size=self.n_estimators)
        size = self._bootstrap_size(n_samples)
        if size is None:
            weights = [None] * self.n_estimators
        else:
            counts = rng.multinomial(
                size, np.full(n_samples, 1.0 / n_samples), size=self.n_estimators
            )
            weights = list(counts.astype(np.float64))
        trees = [
            tree_class(
                criterion="squared_error",
                max_features=self.max_features,
                max_depth=self.max_depth,
                min_samples_split=self.min_samples_split,
                min_samples_leaf=self.min_samples_leaf,
                random_state=int(seed),
            )
            for seed in seeds
        ]
        jobs = (
            delayed(_fit_tree)(tree, X32, y, w, float(self.min_leaf_variance))
            for tree, w in zip(trees, weights)
        )
        # The tree builder releases the GIL, so threads share X without copies.
        self._trees = Parallel(n_jobs=self.n_jobs, prefer="threads")(jobs)
        self.estimators_ = [tree for tree, _, _ in self._trees]

    def _predict_dist(self, X: np.ndarray) -> Prediction:
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        if len(X32) < _MIN_ROWS_TO_ORDER:
            return threaded_mixture_moments(partial(_accumulate, X32=X32), self._trees, self.n_jobs)
        # Each row's moments are folded on their own, so predicting the rows
        # in another order and putting them back changes no bit.
        order = _locality_order(X32, _root_split_order(self._trees, X32.shape[1]))
        ordered = threaded_mixture_moments(
            partial(_accumulate, X32=X32[order]), self._trees, self.n_jobs
        )
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        return Prediction(
            mean=ordered.mean[inverse],
            variance=ordered.variance[inverse],
            epistemic=ordered.epistemic[inverse],
            aleatoric=ordered.aleatoric[inverse],
        )


_PARAMS_DOC = """
    n_estimators : int, default 100
        Number of trees.
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        Features tried at each split: ``floor(sqrt(D))`` by default (as in
        Kim & Choi 2022); ``None`` tries all of them.
    max_depth : int or None, default None
        Trees grow until leaves are pure when None.
    min_samples_split : int, default 2
        Minimum number of distinct in-bag points to split a node.
    min_samples_leaf : int, default 1
        Minimum number of distinct in-bag points in a leaf.
    min_leaf_variance : float, default 0.0
        Floor on each leaf's variance, in squared units of ``y``. SMAC's
        random forest (Hutter et al. 2014) used 0.01 on log10 runtimes; on
        treebo's standardized targets that is a different amount.
    n_jobs : int or None, default None
        Threads for fitting and prediction (``-1``: all cores). Results do not
        depend on it.
    random_state : int, numpy.random.Generator or None
        Seeds the bootstraps and the trees."""


class RandomForestSurrogate(_TreeEnsemble):
    __doc__ = f"""Random forest (Breiman 2001) with law-of-total-variance uncertainty.

    Each tree is grown on a bootstrap of size N with best splits (CART
    midpoints) over ``max_features`` features.

    Parameters
    ----------{_PARAMS_DOC}
    bootstrap : bool, default True
        Grow every tree on a bootstrap of size N; False uses all points.
    oversampling : float, default 1.0
        Bootstrap size as a multiple of N (when ``bootstrap`` is true). Values
        above 1 give best-split trees with BwO's oversampled bagging, the
        "B+O" ablation of Kim & Choi (2022, Figure 6).

    Attributes
    ----------
    estimators_ : list of sklearn.tree.DecisionTreeRegressor
    """

    _parameter_constraints: dict = {
        **_TreeEnsemble._parameter_constraints,
        "bootstrap": ["boolean"],
        "oversampling": [Interval(Real, 0, None, closed="neither")],
    }

    _splitter = "best"

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_features: Any = "sqrt",
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_leaf_variance: float = 0.0,
        bootstrap: bool = True,
        oversampling: float = 1.0,
        n_jobs: int | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_leaf_variance = min_leaf_variance
        self.bootstrap = bootstrap
        self.oversampling = oversampling
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _bootstrap_size(self, n_samples: int) -> int | None:
        size = _oversampled_size(self.oversampling, n_samples)
        return size if self.bootstrap else None


class ExtraTreesSurrogate(_TreeEnsemble):
    __doc__ = f"""Extremely randomized trees (Geurts et al. 2006) with total-variance uncertainty.

    Each tree sees every point; at each node one uniformly random threshold
    is drawn per candidate feature between the node's smallest and largest
    value, and the best of those splits is kept.

    Parameters
    ----------{_PARAMS_DOC}
    bootstrap : bool, default False
        Grow every tree on a bootstrap of size N.

    Attributes
    ----------
    estimators_ : list of sklearn.tree.ExtraTreeRegressor
    """

    _parameter_constraints: dict = {
        **_TreeEnsemble._parameter_constraints,
        "bootstrap": ["boolean"],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_features: Any = "sqrt",
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_leaf_variance: float = 0.0,
        bootstrap: bool = False,
        n_jobs: int | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_leaf_variance = min_leaf_variance
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _bootstrap_size(self, n_samples: int) -> int | None:
        return n_samples if self.bootstrap else None


class BwOForestSurrogate(_TreeEnsemble):
    __doc__ = f"""BwO forest: bagging with oversampling and random splits (Kim & Choi 2022, Alg. 1).

    Each tree is grown, with extremely-randomized splits, on a bootstrap of
    ``round(oversampling * N)`` points drawn with replacement. With the default
    ``oversampling=4`` each tree holds about 98% of the distinct points, so
    the trees agree (small variance) at evaluated points and disagree (larger
    variance) between them.

    Parameters
    ----------{_PARAMS_DOC}
    oversampling : float, default 4.0
        Bootstrap size as a multiple ``alpha`` of N. 1.0 is ordinary bagging;
        the paper uses values above 1.

    Attributes
    ----------
    estimators_ : list of sklearn.tree.ExtraTreeRegressor
    """

    _parameter_constraints: dict = {
        **_TreeEnsemble._parameter_constraints,
        "oversampling": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_features: Any = "sqrt",
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_leaf_variance: float = 0.0,
        oversampling: float = 4.0,
        n_jobs: int | None = None,
        random_state: Any = None,
    ):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_leaf_variance = min_leaf_variance
        self.oversampling = oversampling
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _bootstrap_size(self, n_samples: int) -> int:
        return _oversampled_size(self.oversampling, n_samples)


def _oversampled_size(oversampling: float, n_samples: int) -> int:
    """``round(oversampling * n_samples)`` draws, at least one."""
    return max(1, int(round(oversampling * n_samples)))
