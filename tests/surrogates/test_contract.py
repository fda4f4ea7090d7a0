"""Every registered surrogate honours the contract of design.md."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from treebo.surrogates import available_surrogates, make_surrogate, surrogate_class

# Small settings keep scikit-learn's checks fast; the contract does not depend on them.
FAST = {
    "rf": {"n_estimators": 10},
    "ert": {"n_estimators": 10},
    "bwo": {"n_estimators": 10},
    "gp": {"n_restarts": 0},
    "ngboost": {"n_estimators": 8, "learning_rate": 0.3},
    "bart": {"n_trees": 10, "n_draws": 8, "n_burnin": 20, "n_chains": 2},
    "mondrian": {"n_estimators": 10},
    # SGLB means are averages of posterior samples: seeded so that the
    # statistical contract checks (repeated rows) are deterministic.
    "vsglb": {"n_estimators": 200, "random_state": 0},
    "csglb": {"n_estimators": 200, "cycle_length": 20, "random_state": 0},
    "cbsglb": {"n_estimators": 200, "cycle_length": 20, "random_state": 0},
}
NAMES = available_surrogates()
# Surrogates of an extra -> (the module it installs, the extra): skipped without it.
OPTIONAL = {"ngboost": ("ngboost", "ngboost"), "bart": ("stochtree", "bart")}


def test_every_registered_surrogate_has_contract_settings():
    # A surrogate missing from FAST would be silently left out of every contract
    # test below.
    assert set(available_surrogates()) <= set(FAST), "add the new surrogate to FAST"


def _make(name, **extra):
    if name in OPTIONAL:
        module, extra_name = OPTIONAL[name]
        pytest.importorskip(
            module, reason=f"surrogate {name!r} needs {module}: pip install 'treebo[{extra_name}]'"
        )
    return make_surrogate(name, **{**FAST[name], **extra})


@pytest.mark.parametrize("name", NAMES)
def test_scikit_learn_estimator_checks(name):
    failed = [
        (r["check_name"], r["exception"])
        for r in check_estimator(_make(name), on_fail=None)
        if r["status"] == "failed"
    ]
    assert failed == []


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_has_a_declared_constraint(name):
    # The base class checks parameters against _parameter_constraints at fit;
    # a parameter missing there would go unchecked.
    model = _make(name)
    assert set(model._parameter_constraints) == set(model.get_params(deep=False))


@pytest.mark.parametrize("name", NAMES)
def test_seeded_tag(name):
    # Every registered surrogate draws random numbers, so every one is seeded.
    model = _make(name)
    assert model.seeded is True
    assert model.seeded == ("random_state" in model.get_params())


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_params_round_trip(name):
    model = _make(name, random_state=3)
    copy = clone(model)
    assert copy is not model and copy.get_params() == model.get_params()
    assert type(copy) is surrogate_class(name)


@pytest.mark.parametrize("name", NAMES)
def test_one_row(name):
    p = (
        _make(name)
        .fit(np.array([[0.2, 0.7]]), np.array([3.0]))
        .predict_dist(np.array([[0.2, 0.7], [0.9, 0.1]]))
    )
    np.testing.assert_allclose(p.mean, 3.0, rtol=1e-6)
    assert np.all(np.isfinite(p.variance)) and np.all(p.variance >= 0)


@pytest.mark.parametrize("name", NAMES)
def test_constant_targets(name):
    rng = np.random.default_rng(0)
    X = rng.random((15, 3))
    p = _make(name).fit(X, np.full(15, -2.5)).predict_dist(rng.random((50, 3)))
    np.testing.assert_allclose(p.mean, -2.5, rtol=1e-6)
    assert np.all(p.variance < 1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_repeated_rows(name):
    X = np.repeat(np.array([[0.1, 0.1], [0.9, 0.9]]), 5, axis=0)
    y = np.repeat([0.0, 1.0], 5) + np.tile(np.linspace(-0.1, 0.1, 5), 2)
    p = _make(name, random_state=0).fit(X, y).predict_dist(np.array([[0.1, 0.1], [0.9, 0.9]]))
    np.testing.assert_allclose(p.mean, [0.0, 1.0], atol=0.1)


@pytest.mark.parametrize("name", NAMES)
def test_random_state_reproduces(name):
    rng = np.random.default_rng(0)
    X, y, C = rng.random((30, 4)), rng.random(30), rng.random((200, 4))
    a = _make(name, random_state=5).fit(X, y).predict_dist(C)
    b = _make(name, random_state=5).fit(X, y).predict_dist(C)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.variance, b.variance)
    # A Generator works as well as an int.
    c = _make(name, random_state=np.random.default_rng(5)).fit(X, y).predict_dist(C)
    assert np.all(np.isfinite(c.mean))


@pytest.mark.parametrize("name", NAMES)
def test_many_features(name):
    rng = np.random.default_rng(0)
    X = rng.random((40, 300))
    y = X[:, 0] - X[:, 1]
    model = _make(name).fit(X, y)
    p = model.predict_dist(rng.random((10, 300)))
    assert p.mean.shape == (10,) and np.all(p.variance > 0)
    # It learns from 2 relevant features among 300 (more features than points):
    # measured R^2 on the training points, seed 0: cbsglb 0.58-0.84, bart 0.40,
    # rf 0.82, the others 0.92-1.0. Not vsglb: the mean of its single chain
    # barely follows the function (the surrogates guide says so); its R^2 was
    # 0.14 on one CPU and -0.30 on another, -0.96 to 0.29 over seeds 0-3.
    if name == "vsglb":
        return
    fitted = model.predict(X)
    assert 1 - np.sum((fitted - y) ** 2) / np.sum((y - y.mean()) ** 2) > 0.1


@pytest.mark.parametrize("name", NAMES)
def test_predict_returns_mean_and_total_std(name):
    rng = np.random.default_rng(1)
    X, y = rng.random((25, 2)), rng.random(25)
    model = _make(name, random_state=0).fit(X, y)
    C = rng.random((40, 2))
    mean, std = model.predict(C, return_std=True)
    p = model.predict_dist(C)
    np.testing.assert_array_equal(mean, p.mean)
    np.testing.assert_allclose(std**2, p.epistemic + p.aleatoric, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(C), p.mean)


def test_registry_errors():
    with pytest.raises(ValueError, match=r"unknown surrogate 'xgb'; choose one of \['rf'"):
        make_surrogate("xgb")
    with pytest.raises(ValueError, match="invalid parameters for surrogate 'rf'"):
        make_surrogate("rf", n_trees=3)
