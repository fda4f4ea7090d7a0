import numpy as np
from scipy import stats

from treebo.acquisition import (
    jump_candidates,
    local_candidates,
    local_centers,
    rows_in,
    sobol_candidates,
    unique_rows,
)
from treebo.space import Binary, Categorical, Integer, Real, Space


def test_sobol_candidates_are_a_fresh_balanced_scramble_each_call():
    rng = np.random.default_rng(0)
    a, b = sobol_candidates(4096, 3, rng), sobol_candidates(4096, 3, rng)
    assert a.shape == (4096, 3) and not np.array_equal(a, b)
    # A full 2^12 net has exactly 4096 / 8 points in each octant.
    counts = np.bincount((a >= 0.5).astype(int) @ np.array([1, 2, 4]), minlength=8)
    np.testing.assert_array_equal(counts, 512)
    c = sobol_candidates(50_000, 2, np.random.default_rng(1))
    assert c.shape == (50_000, 2) and len(np.unique(c, axis=0)) == 50_000
    np.testing.assert_array_equal(
        sobol_candidates(10, 2, np.random.default_rng(5)),
        sobol_candidates(10, 2, np.random.default_rng(5)),
    )


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


def test_neighbours_that_activate_a_child_start_it_anywhere_in_its_range():
    space = Space(
        {
            "kernel": Categorical(["linear", "rbf", "poly"]),
            "gamma": Real(1e-4, 1.0, prior="log-uniform", active_if={"kernel": ["rbf", "poly"]}),
            "degree": Integer(2, 5, active_if={"kernel": "poly"}),
        }
    )
    center = space.encode([{"kernel": "linear"}])
    rng = np.random.default_rng(0)
    for make in (local_candidates, jump_candidates):
        points = space.decode(make(space, center, 2000, rng))
        poly = [p for p in points if p["kernel"] == "poly"]
        # The only active dimension of the centre is the kernel: every neighbour changes it.
        assert all(p["kernel"] != "linear" for p in points) and len(poly) > 500
        # Before the fill, every activated child sat at its lowest value (degree 2, one gamma).
        assert {p["degree"] for p in poly} == {2, 3, 4, 5}
        assert len({p["gamma"] for p in poly}) > 400
