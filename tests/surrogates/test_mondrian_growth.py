"""Tests of treebo.surrogates._mondrian_growth: the trees follow the Mondrian process."""

import numpy as np
import pytest

from treebo.surrogates.mondrian import MondrianForestSurrogate

# Every prediction is computed without floating-point warnings (no inf - inf, 0 / 0).
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# -- the Mondrian process -----------------------------------------------------------------


def test_split_dimension_and_time_follow_the_mondrian_process():
    # Root box [0, 1] x [0, 0.25]: linear dimension 1.25, so the root splits
    # at time Exp(rate 1.25) (mean 0.8) on dimension 0 with probability 0.8,
    # at a uniform location. 4000 trees: standard errors 0.013, 0.006, 0.005;
    # measured 0.815, 0.798, 0.501.
    X = np.array([[0.0, 0.0], [1.0, 0.25], [0.3, 0.1], [0.7, 0.2]])
    model = MondrianForestSurrogate(4000, random_state=0).fit(X, np.arange(4.0))
    nodes = model._nodes
    roots = np.arange(4000)
    assert abs(nodes.tau[roots].mean() - 0.8) < 0.04
    assert abs(np.mean(nodes.feature[roots] == 0) - 0.8) < 0.02
    on_first = roots[nodes.feature[roots] == 0]
    assert abs(nodes.threshold[on_first].mean() - 0.5) < 0.02


def test_trees_are_nested_boxes_with_increasing_split_times():
    rng = np.random.default_rng(0)
    X, y = rng.random((80, 3)), rng.random(80)
    model = MondrianForestSurrogate(5, random_state=0).fit(X, y)
    nodes = model._nodes
    inner = np.flatnonzero(nodes.left >= 0)
    for side in (nodes.left, nodes.right):
        child = side[inner]
        assert np.all(nodes.lower[child] >= nodes.lower[inner])
        assert np.all(nodes.upper[child] <= nodes.upper[inner])
        assert np.all(nodes.tau[child] > nodes.tau[inner])
        assert np.all(nodes.count[child] < nodes.count[inner])
    # Children's boxes lie on either side of the split.
    f, t = nodes.feature[inner], nodes.threshold[inner]
    assert np.all(nodes.upper[nodes.left[inner], f] <= t)
    assert np.all(nodes.lower[nodes.right[inner], f] > t)
    # Fully grown: every leaf holds one distinct point, and every point is in one leaf.
    leaves = nodes.left < 0
    assert np.all(nodes.n_rows[leaves] == 1) and np.all(np.isinf(nodes.tau[leaves]))
    assert nodes.count[leaves].sum() == 5 * 80


def test_stopping_rules_lifetime_depth_and_min_samples_split():
    rng = np.random.default_rng(0)
    X, y = rng.random((100, 2)), rng.random(100)
    nodes = MondrianForestSurrogate(10, lifetime=3.0, random_state=0).fit(X, y)._nodes
    assert np.all(nodes.tau[nodes.left >= 0] < 3.0) and np.all(nodes.tau[nodes.left < 0] == 3.0)
    # Measured: the 10 trees have 1-20 leaves at lifetime 3 (100 when fully
    # grown), 91 of them with more than one point.
    assert np.sum(nodes.n_rows[nodes.left < 0] > 1) > 50
    model = MondrianForestSurrogate(10, max_depth=3, random_state=0).fit(X, y)
    assert model.max_depth_ == 3
    nodes = MondrianForestSurrogate(10, min_samples_split=10, random_state=0).fit(X, y)._nodes
    assert np.all(nodes.n_rows[nodes.left >= 0] >= 10)


def test_bootstrap_grows_each_tree_on_a_multinomial_sample():
    rng = np.random.default_rng(0)
    X, y = rng.random((50, 2)), rng.random(50)
    model = MondrianForestSurrogate(200, bootstrap=True, random_state=0).fit(X, y)
    nodes = model._nodes
    roots = np.arange(200)
    assert np.all(nodes.count[roots] == 50)
    # E|distinct| = 50 (1 - (49/50)^50) = 31.8; measured 31.89 (sd 2.1 over
    # 200 trees, so a standard error of 0.15).
    assert abs(nodes.n_rows[roots].mean() - 31.8) < 1.0
    plain = MondrianForestSurrogate(3, random_state=0).fit(X, y)._nodes
    assert np.all(plain.n_rows[:3] == 50)
