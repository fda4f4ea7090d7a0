import math

import numpy as np
import pytest
from scipy.stats import norm

from treebo.diagnostics import (
    UncertaintyReport,
    epistemic_share,
    gaussian_nll,
    interval_coverage,
    kl_normal,
    mean_kl,
    published_kl,
    uncertainty_report,
)
from treebo.surrogates import make_surrogate
from treebo.surrogates.base import Prediction


def _prediction(mean, variance, epistemic=None):
    mean = np.asarray(mean, dtype=float)
    variance = np.broadcast_to(np.asarray(variance, dtype=float), mean.shape).copy()
    epistemic = variance if epistemic is None else np.asarray(epistemic, dtype=float)
    return Prediction(
        mean=mean, variance=variance, epistemic=epistemic, aleatoric=variance - epistemic
    )


# -- KL ---------------------------------------------------------------------------------------


def test_kl_of_identical_normals_is_zero():
    mean = np.array([-3.0, 0.0, 1e6])
    var = np.array([1e-9, 1.0, 4e4])
    np.testing.assert_array_equal(kl_normal(mean, var, mean, var), 0.0)


def test_kl_matches_the_closed_form():
    # KL(N(0, 1) || N(1, 2)) = 0.5 (1/2 - 1 - ln(1/2)) + 1 / (2 * 2) = 0.34657359...
    expected = 0.5 * (0.5 - 1.0 - math.log(0.5)) + 0.25
    assert kl_normal(0.0, 1.0, 1.0, 2.0) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(0.3465736, abs=1e-7)


@pytest.mark.parametrize(
    "m1, v1, m2, v2", [(0.0, 1.0, 1.0, 2.0), (0.3, 0.05, -0.2, 1.5), (2.0, 4.0, 0.0, 0.25)]
)
def test_kl_agrees_with_a_monte_carlo_estimate(m1, v1, m2, v2):
    # E_p[log p(x) - log q(x)] from 10^6 draws. Measured (seed 0): estimates 0.34574,
    # 1.30164, 14.0862 against 0.34657, 1.30060, 14.1137, with standard errors
    # 0.0006, 0.0007, 0.019; 5 standard errors allowed.
    x = np.random.default_rng(0).normal(m1, math.sqrt(v1), 10**6)
    log_ratio = norm.logpdf(x, m1, math.sqrt(v1)) - norm.logpdf(x, m2, math.sqrt(v2))
    se = log_ratio.std() / 1e3
    assert abs(kl_normal(m1, v1, m2, v2) - log_ratio.mean()) < 5 * se


def test_kl_is_asymmetric_and_non_negative():
    rng = np.random.default_rng(1)
    m1, m2 = rng.normal(size=(2, 500))
    v1, v2 = rng.uniform(1e-3, 10, size=(2, 500))
    forward, reverse = kl_normal(m1, v1, m2, v2), kl_normal(m2, v2, m1, v1)
    assert np.all(forward >= 0) and np.all(reverse >= 0)
    assert not np.allclose(forward, reverse)


def test_zero_variance_is_floored():
    # A tree ensemble that is certain (variance 0) against a GP with variance 1.
    floored = kl_normal(0.0, 0.0, 0.0, 1.0, min_variance=1e-6)
    assert floored == pytest.approx(kl_normal(0.0, 1e-6, 0.0, 1.0))
    # The reverse direction blows up as the floor goes down: 1 / (2 floor).
    assert kl_normal(0.0, 1.0, 0.0, 0.0, min_variance=1e-6) == pytest.approx(
        0.5 * (1e6 - 1 - math.log(1e6))
    )
    assert np.isfinite(kl_normal(0.0, 1.0, 0.5, 0.0))


def test_mean_kl_directions_swap_the_arguments():
    model = _prediction([0.0, 1.0, 2.0], [0.5, 1.0, 0.0])
    reference = _prediction([0.1, 0.8, 2.5], [1.0, 1.0, 1.0])
    forward = mean_kl(model, reference)
    reverse = mean_kl(model, reference, direction="reference||model")
    assert forward == pytest.approx(
        np.mean(kl_normal(model.mean, model.variance, reference.mean, reference.variance))
    )
    assert reverse == pytest.approx(mean_kl(reference, model))
    assert reverse > forward  # the model is certain at the last point, the reference is not


def test_published_kl_is_the_last_point_divided_by_the_grid_size():
    # problems.md §9: the official loop assigns instead of adding.
    mean, var = np.array([0.0, 5.0, 0.2]), np.array([1.0, 1e-3, 0.09])
    ref_mean, ref_var = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.25])
    sigma, sigma_ref = 0.3, 0.5
    last = math.log(sigma_ref / (sigma + 1e-7)) + (sigma**2 + 0.2**2) / (2 * sigma_ref**2) - 0.5
    value = published_kl(_prediction(mean, var), _prediction(ref_mean, ref_var))
    assert value == pytest.approx(last / 3, rel=1e-12)
    # Nothing but the last point matters.
    mean[:2] = [100.0, -100.0]
    assert published_kl(_prediction(mean, var), _prediction(ref_mean, ref_var)) == value


# -- NLL, coverage, epistemic share -------------------------------------------------------------


def test_nll_matches_scipy():
    rng = np.random.default_rng(2)
    mean, std = rng.normal(size=50), rng.uniform(0.1, 2.0, size=50)
    y = rng.normal(size=50)
    expected = -np.mean(norm.logpdf(y, mean, std))
    assert gaussian_nll(y, _prediction(mean, std**2)) == pytest.approx(expected, rel=1e-12)


def test_nll_of_a_certain_wrong_prediction_is_set_by_the_floor():
    value = gaussian_nll([1.0], _prediction([0.0], [0.0]), min_variance=1e-4)
    assert value == pytest.approx(0.5 * math.log(2 * math.pi * 1e-4) + 1 / (2e-4))


def test_a_correctly_specified_normal_covers_the_nominal_share():
    rng = np.random.default_rng(1)
    n = 20_000
    mean, std = rng.normal(size=n), rng.uniform(0.1, 3.0, size=n)
    y = rng.normal(mean, std)
    coverage = interval_coverage(y, _prediction(mean, std**2))
    # Measured (seed 1): 0.5046, 0.8032, 0.9499; binomial standard errors 0.0035,
    # 0.0028, 0.0015; 4 standard errors allowed.
    assert np.all(np.abs(coverage - [0.5, 0.8, 0.95]) < 4 * np.array([0.0035, 0.0028, 0.0015]))
    # Half the true standard deviation covers 2 Phi(z / 2) - 1: 0.264, 0.478, 0.673
    # (measured 0.2657, 0.4820, 0.6766).
    narrow = interval_coverage(y, _prediction(mean, (std / 2) ** 2))
    exact = 2 * norm.cdf(norm.ppf([0.75, 0.9, 0.975]) / 2) - 1
    np.testing.assert_allclose(narrow, exact, atol=0.015)


def test_coverage_counts_the_boundary_and_exact_predictions():
    prediction = _prediction([0.0, 0.0, 0.0], [0.0, 1.0, 1.0])
    z95 = norm.ppf(0.975)
    coverage = interval_coverage([0.0, z95, 3.0], prediction, levels=[0.95])
    np.testing.assert_allclose(coverage, [2 / 3])


def test_epistemic_share():
    prediction = _prediction([0.0, 0.0], [1.0, 3.0], epistemic=[1.0, 0.0])
    assert epistemic_share(prediction) == pytest.approx(0.25)
    assert math.isnan(epistemic_share(_prediction([0.0], [0.0])))


def test_forest_variance_is_all_epistemic_on_noise_free_data_ngboost_like_models_none():
    rng = np.random.default_rng(3)
    X = rng.random((30, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    grid = rng.random((200, 2))
    bwo = make_surrogate("bwo", n_estimators=30, random_state=0).fit(X, y)
    # Distinct points and fully grown trees: every leaf is pure, no aleatoric part.
    assert epistemic_share(bwo.predict_dist(grid)) == pytest.approx(1.0)
    noisy = np.repeat(X, 2, axis=0)
    y_noisy = np.repeat(y, 2) + rng.normal(0, 0.3, size=60)
    ert = make_surrogate("ert", n_estimators=30, random_state=0).fit(noisy, y_noisy)
    share = epistemic_share(ert.predict_dist(grid))
    assert 0.0 < share < 1.0


def test_uncertainty_report_on_a_surrogate_and_a_reference():
    rng = np.random.default_rng(4)
    X = rng.random((20, 1))
    y = np.sin(6 * X[:, 0])
    X_test = rng.random((100, 1))
    y_test = np.sin(6 * X_test[:, 0])
    bwo = make_surrogate("bwo", n_estimators=30, random_state=0).fit(X, y)
    gp = make_surrogate("gp", random_state=0).fit(X, y)
    report = uncertainty_report(bwo, X_test, y_test, reference=gp)
    assert isinstance(report, UncertaintyReport)
    prediction, reference = bwo.predict_dist(X_test), gp.predict_dist(X_test)
    assert report.n_points == 100
    assert report.nll == pytest.approx(gaussian_nll(y_test, prediction))
    assert list(report.coverage) == [0.5, 0.8, 0.95]
    assert report.coverage[0.95] == pytest.approx(interval_coverage(y_test, prediction)[2])
    assert report.kl_to_reference == pytest.approx(mean_kl(prediction, reference))
    assert report.kl_from_reference == pytest.approx(mean_kl(reference, prediction))
    # Without y or a reference only the share is computed.
    bare = uncertainty_report(prediction, None)
    assert bare.nll is None and bare.coverage == {} and bare.kl_to_reference is None


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: kl_normal(0, 1, 0, 1, min_variance=0.0), "min_variance must be a positive"),
        (lambda p: kl_normal(0, -1, 0, 1), "variances must be non-negative"),
        (lambda p: mean_kl(p, p, direction="forward"), "direction must be one of"),
        (lambda p: mean_kl(p, _prediction([0.0], [1.0])), "same number of points"),
        (lambda p: mean_kl((p.mean, p.variance), p), "prediction must be a treebo Prediction"),
        (lambda p: gaussian_nll([1.0, 2.0, 3.0], p), "same number of points"),
        (lambda p: gaussian_nll([1.0, np.nan], p), "y must be finite"),
        (lambda p: interval_coverage([0.0, 1.0], p, levels=[0.5, 1.0]), "levels must be numbers"),
        (lambda p: uncertainty_report(object(), None), "model must be a fitted treebo surrogate"),
        (lambda p: uncertainty_report(make_surrogate("rf"), None), "X is needed"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call(_prediction([0.0, 1.0], [1.0, 1.0]))
