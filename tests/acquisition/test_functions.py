import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from treebo.acquisition import (
    MIN_STD,
    acquisition_score,
    expected_improvement,
    log_expected_improvement,
    lower_confidence_bound,
    probability_of_improvement,
)

mpmath.mp.dps = 60


def _log_ei_reference(z: float) -> float:
    """log(phi(z) + z Phi(z)) in 60-digit arithmetic."""
    z = mpmath.mpf(z)
    return float(mpmath.log(mpmath.npdf(z) + z * mpmath.ncdf(z)))


@pytest.mark.parametrize(
    "mean, std, best, xi",
    [
        (0.0, 1.0, 0.0, 0.0),
        (0.3, 0.5, -0.2, 0.0),
        (-1.0, 2.0, 0.5, 0.1),
        (2.0, 0.1, 1.0, 0.0),
    ],
)
def test_ei_matches_its_integral_definition(mean, std, best, xi):
    # E[max(best - xi - Y, 0)], Y ~ N(mean, std^2), by quadrature.
    integrand = lambda y: (best - xi - y) * stats.norm.pdf(y, mean, std)  # noqa: E731
    expected, _ = integrate.quad(integrand, -np.inf, best - xi, epsabs=1e-13, epsrel=1e-12)
    got = expected_improvement(np.array([mean]), np.array([std]), best, xi)[0]
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_ei_closed_form_and_limits():
    mean, std = np.array([0.2, -0.5, 1.0]), np.array([0.7, 1.3, 0.4])
    z = (0.1 - mean) / std
    closed = (0.1 - mean) * stats.norm.cdf(z) + std * stats.norm.pdf(z)
    np.testing.assert_allclose(expected_improvement(mean, std, 0.1), closed, rtol=1e-12)
    # sigma -> 0: EI -> max(best - mean, 0), not 0 as skopt and SMAC return.
    flat = expected_improvement(np.array([-1.0, 1.0]), np.array([0.0, 0.0]), 0.0)
    np.testing.assert_allclose(flat, [1.0, 0.0])
    assert log_expected_improvement(np.array([1.0]), np.array([0.0]), 0.0)[0] == -np.inf
    tiny = expected_improvement(np.array([-1.0]), np.array([MIN_STD * 2]), 0.0)[0]
    assert tiny == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("z", [10, 1, 0, -1, -5, -10, -40, -1e3, -1e7])
def test_log_ei_agrees_with_high_precision(z):
    got = log_expected_improvement(np.array([-float(z)]), np.array([1.0]), 0.0)[0]
    assert got == pytest.approx(_log_ei_reference(z), rel=1e-13)


def test_log_ei_at_z_minus_40_is_finite_and_ordered_where_ei_underflows():
    z = np.array([-38.0, -39.0, -40.0, -41.0])
    log_ei = log_expected_improvement(-z, np.ones(4), 0.0)
    assert np.all(np.isfinite(log_ei))
    assert np.all(np.diff(log_ei) < 0)
    # The naive formula underflows to exactly 0 there: all four would tie.
    naive = -z * 0 + (z * stats.norm.cdf(z) + stats.norm.pdf(z))
    assert np.all(naive[2:] == 0) or np.all(naive[2:] < 1e-300)


def test_log_ei_is_continuous_across_its_branch_points():
    for z0 in (-1.0, -1e6):
        z = np.array([z0 * (1 + 1e-12), z0, z0 * (1 - 1e-12)])
        values = log_expected_improvement(-z, np.ones(3), 0.0)
        np.testing.assert_allclose(values, values[1], rtol=1e-9)


def test_pi_and_lcb():
    mean, std = np.array([0.0, 1.0]), np.array([1.0, 2.0])
    np.testing.assert_allclose(
        probability_of_improvement(mean, std, 0.5), stats.norm.cdf((0.5 - mean) / std), rtol=1e-12
    )
    np.testing.assert_allclose(lower_confidence_bound(mean, std, kappa=2.0), [-2.0, -3.0])
    np.testing.assert_allclose(acquisition_score("lcb", mean, std, 0.0, kappa=2.0), [2.0, 3.0])


def test_acquisition_errors_name_the_argument():
    with pytest.raises(ValueError, match="unknown acquisition 'ucb'"):
        acquisition_score("ucb", np.zeros(1), np.ones(1), 0.0)
    with pytest.raises(ValueError, match="got unknown \\['kappa'\\]"):
        acquisition_score("ei", np.zeros(1), np.ones(1), 0.0, kappa=1.0)
    with pytest.raises(ValueError, match="'xi' must be a finite number >= 0"):
        acquisition_score("ei", np.zeros(1), np.ones(1), 0.0, xi=-1.0)
    with pytest.raises(ValueError, match="std must be non-negative"):
        expected_improvement(np.zeros(1), -np.ones(1), 0.0)


def test_math_constants():
    assert math.isclose(_log_ei_reference(0.0), math.log(1 / math.sqrt(2 * math.pi)), rel_tol=1e-15)
