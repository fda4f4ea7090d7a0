import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from treebo.acquisition import (
    MIN_STD,
    acquisition_score,
    distance_variance,
    expected_improvement,
    jump_candidates,
    local_candidates,
    local_centers,
    log_expected_improvement,
    lower_confidence_bound,
    probability_of_improvement,
    rows_in,
    sobol_candidates,
    unique_rows,
)
from treebo.space import Binary, Categorical, Integer, Real, Space

mpmath.mp.dps = 60


def _log_ei_reference(z: float) -> float:
    """log(phi(z) + z Phi(z)) in 60-digit arithmetic."""
    z = mpmath.mpf(z)
    return float(mpmath.log(mpmath.npdf(z) + z * mpmath.ncdf(z)))


@pytest.mark.parametrize("mean, std, best, xi", [
    (0.0, 1.0, 0.0, 0.0), (0.3, 0.5, -0.2, 0.0), (-1.0, 2.0, 0.5, 0.1), (2.0, 0.1, 1.0, 0.0),
])
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
    np.testing.assert_allclose(probability_of_improvement(mean, std, 0.5),
                               stats.norm.cdf((0.5 - mean) / std), rtol=1e-12)
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


def test_sobol_candidates_are_a_fresh_balanced_scramble_each_call():
    rng = np.random.default_rng(0)
    a, b = sobol_candidates(4096, 3, rng), sobol_candidates(4096, 3, rng)
    assert a.shape == (4096, 3) and not np.array_equal(a, b)
    # A full 2^12 net has exactly 4096 / 8 points in each octant.
    counts = np.bincount((a >= 0.5).astype(int) @ np.array([1, 2, 4]), minlength=8)
    np.testing.assert_array_equal(counts, 512)
    c = sobol_candidates(50_000, 2, np.random.default_rng(1))
    assert c.shape == (50_000, 2) and len(np.unique(c, axis=0)) == 50_000
    np.testing.assert_array_equal(sobol_candidates(10, 2, np.random.default_rng(5)),
                                  sobol_candidates(10, 2, np.random.default_rng(5)))


def test_local_candidates_move_each_kind_of_dimension_the_right_way():
    space = Space([Real(0, 1), Integer(0, 9), Binary(), Categorical(["a", "b", "c"])])
    center = space.encode([[0.5, 4, 0, "b"]])
    rng = np.random.default_rng(0)
    X = local_candidates(space, center, 2000, rng)
    assert X.shape == (2000, space.n_columns)
    np.testing.assert_array_equal(space.snap(X), X)
    changed = X != center
    # Every neighbour differs from the center in at least one column.
    assert np.all(changed.any(axis=1))
    points = space.decode(X)
    assert {p[2] for p in points} == {0, 1}
    assert {p[3] for p in points} == {"a", "b", "c"}
    steps = np.abs(np.array([p[0] for p in points]) - 0.5)
    assert np.median(steps[steps > 0]) < 0.1


def test_jump_candidates_redraw_exactly_one_dimension_over_its_whole_range():
    space = Space([Real(0, 1), Real(0, 1), Integer(0, 9), Binary(), Categorical(["a", "b", "c"])])
    center = space.encode([[0.2, 0.9, 4, 0, "b"]])
    X = jump_candidates(space, center, 6000, np.random.default_rng(0))
    assert X.shape == (6000, space.n_columns)
    np.testing.assert_array_equal(space.snap(X), X)
    points = space.decode(X)
    original = [0.2, 0.9, 4, 0, "b"]
    n_changed = np.array([sum(p[j] != original[j] for j in range(5)) for p in points])
    # One dimension is redrawn; a redrawn integer can land on its old value.
    assert set(np.unique(n_changed)) == {0, 1} and np.mean(n_changed == 1) > 0.97
    first = np.array([p[0] for p in points if p[0] != 0.2])
    # The redrawn real is uniform on the whole interval (a Gaussian step would
    # stay near 0.2): Kolmogorov-Smirnov against U(0, 1).
    assert len(first) > 1000 and stats.kstest(first, "uniform").pvalue > 1e-3
    assert first.max() > 0.95
    assert {p[3] for p in points} == {0, 1} and {p[4] for p in points} == {"a", "b", "c"}


def test_local_centers_are_the_best_points_at_least_the_spacing_apart():
    X = np.array([[0.50, 0.50], [0.52, 0.50], [0.90, 0.10], [0.55, 0.45], [0.10, 0.90]])
    values = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    np.testing.assert_array_equal(local_centers(X, values, 3), [0, 1, 2])
    np.testing.assert_array_equal(local_centers(X, values, 3, min_spacing=0.1), [0, 2, 4])
    # Chebyshev distance: 0.4 from the best point to each of the two far ones.
    np.testing.assert_array_equal(local_centers(X, values, 5, min_spacing=0.4), [0, 2, 4])
    # Fewer centres when too few points are that far apart.
    np.testing.assert_array_equal(local_centers(X, values, 5, min_spacing=0.45), [0])


def test_distance_variance_is_zero_at_the_data_and_grows_to_one_with_distance():
    rng = np.random.default_rng(0)
    X = rng.random((20, 3))
    np.testing.assert_array_equal(distance_variance(X, X), 0.0)
    candidates = rng.random((500, 3)) * 3.0 - 1.0  # inside and far outside the cube
    # Brute force: distances to every data point, and the median nearest-neighbour spacing.
    pairwise = np.sqrt(((candidates[:, None, :] - X[None]) ** 2).sum(-1))
    between = np.sqrt(((X[:, None, :] - X[None]) ** 2).sum(-1)) + np.diag(np.full(20, np.inf))
    spacing = np.median(between.min(1))
    expected = 1.0 - np.exp(-0.5 * (pairwise.min(1) / spacing) ** 2)
    np.testing.assert_allclose(distance_variance(candidates, X), expected, rtol=1e-12,
                               atol=1e-15)
    assert expected.max() > 0.999 and expected.min() < 0.5
    # With a single point, the spacing of that many uniformly random points is used.
    single = distance_variance(np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.6]]),
                               np.array([[0.5, 0.5, 0.5]]))
    assert single[0] == 0 and 0 < single[1] < 1


def test_row_bookkeeping_is_exact():
    rng = np.random.default_rng(0)
    weights = rng.standard_normal(3)
    X = np.array([[0, 1, 0.5], [0, 1, 0.5], [1, 0, 0.25], [0, 1, 0.5], [1, 1, 1.0]])
    np.testing.assert_array_equal(unique_rows(X, weights), [0, 2, 4])
    mask = rows_in(X, np.array([[1, 0, 0.25], [9, 9, 9]]), weights)
    np.testing.assert_array_equal(mask, [False, False, True, False, False])
    # Rows with equal hashes but different content are not confused.
    weights = np.array([1.0, 1.0, 0.0])
    Y = np.array([[0.3, 0.7, 0.0], [0.7, 0.3, 0.0]])
    np.testing.assert_array_equal(unique_rows(Y, weights), [0, 1])
    np.testing.assert_array_equal(rows_in(Y[:1], Y[1:], weights), [False])


def test_math_constants():
    assert math.isclose(_log_ei_reference(0.0), math.log(1 / math.sqrt(2 * math.pi)), rel_tol=1e-15)
