import numpy as np
import pytest

from treebo.acquisition import distance_variance


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
    np.testing.assert_allclose(distance_variance(candidates, X), expected, rtol=1e-12, atol=1e-15)
    assert expected.max() > 0.999 and expected.min() < 0.5
    # With a single point, the spacing of that many uniformly random points is used.
    single = distance_variance(
        np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.6]]), np.array([[0.5, 0.5, 0.5]])
    )
    assert single[0] == 0 and 0 < single[1] < 1


@pytest.mark.parametrize("n_columns", [1, 24, 70])
def test_distance_variance_on_zero_one_rows_matches_the_brute_force_bit_for_bit(n_columns):
    # 0/1 rows (binary and one-hot columns) take a matrix-product path; its
    # squared distances are integers, so nothing may differ from the sum of
    # squared differences.
    rng = np.random.default_rng(n_columns)
    X = (rng.random((30, n_columns)) < 0.4).astype(float)
    candidates = (rng.random((3000, n_columns)) < 0.6).astype(float)
    squared = ((candidates[:, None, :] - X[None]) ** 2).sum(-1).min(1)
    length = 0.7
    expected = -np.expm1(-0.5 * (np.sqrt(squared) / length) ** 2)
    np.testing.assert_array_equal(distance_variance(candidates, X, length=length), expected)
    # One real value among the rows sends them down the k-d tree, with the same result.
    mixed = candidates.copy()
    mixed[0, 0] = 0.5
    squared[0] = ((mixed[0] - X) ** 2).sum(-1).min()
    expected[0] = -np.expm1(-0.5 * (np.sqrt(squared[0]) / length) ** 2)
    np.testing.assert_allclose(
        distance_variance(mixed, X, length=length), expected, rtol=1e-12, atol=0
    )
