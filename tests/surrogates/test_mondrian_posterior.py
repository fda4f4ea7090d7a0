"""Tests of treebo.surrogates._mondrian_posterior: the prior, belief propagation, components."""

import math

import numpy as np
import pytest

from treebo.surrogates._mondrian_posterior import exact_component, sigmoid_diff
from treebo.surrogates.mondrian import MondrianForestSurrogate

from .mondrian_reference import condition, joint_gaussian, route, sig, tree_nodes

# Every prediction is computed without floating-point warnings (no inf - inf, 0 / 0).
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# -- the posterior: belief propagation against the joint Gaussian ------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_belief_propagation_equals_the_brute_force_joint_gaussian_posterior(seed):
    rng = np.random.default_rng(seed)
    X, y = rng.random((6, 2)), rng.normal(size=6)
    model = MondrianForestSurrogate(1, mode="exact", random_state=seed).fit(X, y)
    hyper, post = model._hyper, model._posterior
    ids, local, cov, H = joint_gaussian(model, 0, X, y)
    assert len(ids) >= 5  # a real tree, not a stump
    mean, covariance = condition(cov, H, y, hyper.mu[0], hyper.sigma_y2[0], np.arange(6))
    np.testing.assert_allclose(post.mQ[ids], mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(post.vQ[ids], np.diag(covariance), rtol=0, atol=1e-10)
    # The cavity of node j: its parent's mean given the data outside j's subtree.
    nodes = model._nodes
    for j in ids[1:]:
        below = set()
        frontier = [j]
        while frontier:
            k = frontier.pop()
            below.add(k)
            if nodes.left[k] >= 0:
                frontier += [nodes.left[k], nodes.right[k]]
        rows = [i for i in range(6) if route(model, 0, X[i])[-1] not in below]
        p = local[nodes.parent[j]]
        m, c = condition(cov, H, y, hyper.mu[0], hyper.sigma_y2[0], np.array(rows))
        assert abs(post.mA[j] - m[p]) < 1e-10 and abs(post.vA[j] - c[p, p]) < 1e-10


def test_branch_component_equals_the_brute_force_posterior_of_the_new_leaf():
    # A cut above node j at time t inserts a node between j's parent and j
    # and hangs a new leaf for x from it; its predictive is the posterior of
    # the new leaf's mean plus noise, given all the data.
    rng = np.random.default_rng(3)
    X, y = rng.random((6, 2)), rng.normal(size=6)
    model = MondrianForestSurrogate(1, mode="exact", random_state=1).fit(X, y)
    nodes, hyper, post = model._nodes, model._hyper, model._posterior
    gamma, sigma_h2, sigma_y2 = hyper.gamma[0], hyper.sigma_h2[0], hyper.sigma_y2[0]
    ids = tree_nodes(model, 0)
    checked = 0
    for j in ids:
        tau_p = nodes.tau[nodes.parent[j]] if nodes.parent[j] >= 0 else 0.0
        tau_j = nodes.tau[j]
        end = tau_j if np.isfinite(tau_j) else tau_p + 3.0
        for t in (tau_p + 0.2 * (end - tau_p), tau_p + 0.9 * (end - tau_p)):
            n = len(ids)
            new_parent = {g: i for i, g in enumerate(ids)}.get(nodes.parent[j], -1)
            extra = (
                [
                    (new_parent, sigma_h2 * (sig(gamma * t) - sig(gamma * tau_p))),
                    (n, sigma_h2 * (1.0 - sig(gamma * t))),
                ],
                {
                    int(np.flatnonzero(ids == j)[0]): (
                        n,
                        sigma_h2 * (sig(gamma * tau_j) - sig(gamma * t)),
                    )
                },
            )
            _, _, cov, H = joint_gaussian(model, 0, X, y, extra)
            m, c = condition(cov, H, y, hyper.mu[0], sigma_y2, np.arange(6))
            mean, var = exact_component(np.array([t]), j, nodes, hyper, post, np.inf)
            assert abs(mean[0] - m[n + 1]) < 1e-10
            assert abs(var[0] - (c[n + 1, n + 1] + sigma_y2)) < 1e-10
            checked += 1
    assert checked == 2 * len(ids)


def test_sigmoid_difference_keeps_precision_where_the_plain_one_cancels():
    a, b = np.array([40.0, 3.0, np.inf, 5.0]), np.array([39.0, 1.0, 30.0, 5.0])
    late = math.exp(-39.0) * (1 - math.exp(-1.0)) / ((1 + math.exp(-40)) * (1 + math.exp(-39)))
    expected = [late, sig(3.0) - sig(1.0), sig(-30.0), 0.0]
    np.testing.assert_allclose(sigmoid_diff(a, b), expected, rtol=1e-14, atol=0)
    assert sig(40.0) - sig(39.0) == 0.0  # what the plain form gives


def test_hyperparameters_follow_the_reference_code():
    rng = np.random.default_rng(0)
    X, y = rng.random((40, 3)), 3.0 + 2.0 * rng.standard_normal(40)
    model = MondrianForestSurrogate(2, mode="exact", random_state=0).fit(X, y)
    h = model.hyperparameters_
    K = min(2 * 40, 500)
    np.testing.assert_allclose(h["mu"], y.mean())
    np.testing.assert_allclose(h["sigma_y2"], y.var() / K)
    np.testing.assert_allclose(h["sigma_h2"], 2 * y.var() * K / (K + 2))
    np.testing.assert_allclose(h["gamma"], 3 / (2 * np.log2(40)))
