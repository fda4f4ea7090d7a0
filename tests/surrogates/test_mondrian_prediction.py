"""Tests of treebo.surrogates._mondrian_prediction: the vectorized walk against the spec."""

import math

import numpy as np
import pytest

from treebo.surrogates._mondrian_posterior import exact_component
from treebo.surrogates.mondrian import MondrianForestSurrogate

from .mondrian_reference import route, sig

MODES = ["skgarden", "reference", "exact"]

# Every prediction is computed without floating-point warnings (no inf - inf, 0 / 0).
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# -- the vectorized walk against a per-point evaluation of the spec's mixture -----------


def _per_point_tree(model, tree, x, mode, lifetime):
    """One tree's predictive (mean, variance) at x, one node at a time (spec §3.5)."""
    nodes, hyper, post = model._nodes, model._hyper, model._posterior
    mu, gamma = hyper.mu[tree], hyper.gamma[tree]
    sigma_h2, sigma_y2 = hyper.sigma_h2[tree], hyper.sigma_y2[tree]
    components = []  # (weight, mean, variance)
    mass = 1.0
    for j in route(model, tree, x):
        leaf = nodes.left[j] < 0
        tau_p = nodes.tau[nodes.parent[j]] if nodes.parent[j] >= 0 else 0.0
        eta = np.sum(np.maximum(0, x - nodes.upper[j]) + np.maximum(0, nodes.lower[j] - x))
        if mode == "skgarden":
            if leaf:
                components.append((mass, nodes.mean[j], nodes.var[j]))
                break
            p = 1 - math.exp(-(nodes.tau[j] - tau_p) * eta)
            components.append((mass * p, nodes.mean[j], nodes.var[j]))
            mass *= 1 - p
            continue
        span = (lifetime if leaf else nodes.tau[j]) - tau_p
        if eta > 0:
            p = 1.0 if math.isinf(span) else 1 - math.exp(-span * eta)
            ebar = 1 / eta if math.isinf(span) else 1 / eta - span / math.expm1(eta * span)
            t = tau_p + ebar
            if mode == "reference":
                comp = (
                    mu + post.mQ[j],
                    post.vQ[j] + sigma_y2 + sigma_h2 * (sig(gamma * t) - sig(gamma * tau_p)),
                )
            else:
                m, v = exact_component(np.array([t]), j, nodes, hyper, post, lifetime)
                comp = (mu + m[0], v[0])
            components.append((mass * p, *comp))
            mass *= 1 - p
        if leaf:
            components.append((mass, mu + post.mQ[j], post.vQ[j] + sigma_y2))
    w, m, v = (np.array(c) for c in zip(*components))
    assert abs(w.sum() - 1) < 1e-12
    mean = np.sum(w * m)
    return mean, np.sum(w * (v + (m - mean) ** 2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lifetime", [math.inf, 2.0, 0.3])
def test_vectorized_prediction_equals_the_per_point_mixture(mode, lifetime):
    rng = np.random.default_rng(0)
    X = rng.random((25, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(25)
    model = MondrianForestSurrogate(3, mode=mode, lifetime=lifetime, random_state=0).fit(X, y)
    if lifetime == 0.3:  # some trees are a single leaf, others are not
        assert 0 < model._nodes.is_leaf[:3].sum() < 3
    # Inside the data box, beyond it, at training points and on a box face.
    C = np.r_[rng.random((30, 2)), rng.uniform(-1, 2, (30, 2)), X[:5], [[X[0, 0], 1.5]]]
    p = model.predict_dist(C)
    per_tree = np.array(
        [[_per_point_tree(model, b, x, mode, lifetime) for x in C] for b in range(3)]
    )  # (trees, points, 2)
    mean = per_tree[:, :, 0].mean(axis=0)
    epistemic = per_tree[:, :, 0].var(axis=0)
    aleatoric = per_tree[:, :, 1].mean(axis=0)
    np.testing.assert_allclose(p.mean, mean, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(p.epistemic, epistemic, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(p.aleatoric, aleatoric, rtol=1e-9, atol=1e-12)


def test_large_candidate_sets_are_split_into_blocks_without_changing_anything():
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 2)), rng.random(30)
    C = rng.random((20_000, 2))
    model = MondrianForestSurrogate(3, mode="exact", random_state=0).fit(X, y)
    whole = model.predict_dist(C)
    parts = [model.predict_dist(C[i : i + 700]) for i in range(0, len(C), 700)]
    np.testing.assert_array_equal(whole.mean, np.concatenate([p.mean for p in parts]))
    np.testing.assert_array_equal(whole.variance, np.concatenate([p.variance for p in parts]))
