import logging

import numpy as np
import pytest

from treebo.acquisition import (
    AcquisitionMaximizer,
    distance_variance,
    log_expected_improvement,
    step_kind,
)
from treebo.space import Categorical, Integer, Real, Space, SpaceExhausted
from treebo.surrogates import make_surrogate

SPACE_2D = Space([Real(-2.0, 2.0), Real(-2.0, 2.0)])


def _quadratic_data(n=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    values = ((X - 0.6) ** 2).sum(1)
    return X, (values - values.mean()) / values.std()


def _no_history(X):
    return X


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
    np.testing.assert_allclose(distance_variance(mixed, X, length=length), expected,
                               rtol=1e-12, atol=0)


def _gp_on_quadratic(seed):
    rng = np.random.default_rng(seed)
    X, z = _quadratic_data(6, seed)
    return X, z, make_surrogate("gp", random_state=0).fit(X, z), rng


def test_lbfgs_polish_never_returns_a_worse_acquisition_than_the_best_candidate():
    maximizer = AcquisitionMaximizer(n_candidates=64, local_search=False)
    gains = []
    for seed in range(6):
        X, z, model, rng = _gp_on_quadratic(seed)
        pool = maximizer.candidates(SPACE_2D, X, z, rng)
        scores = maximizer.score(model, pool, X, z.min())
        # The GP is smooth: no exploration variance, the score is log-EI itself.
        prediction = model.predict_dist(pool)
        np.testing.assert_allclose(
            scores, log_expected_improvement(prediction.mean, prediction.std, z.min()))
        polished = maximizer.polish(model, SPACE_2D, pool, scores, z.min(), X, _no_history)
        gains.append(maximizer.score(model, polished[None, :], X, z.min())[0] - scores.max())
    # Measured gains in log-EI, seeds 0-5: 0.068 0.017 0.0023 0.029 0.0029 0.0037.
    assert min(gains) > 0.001 and max(gains) > 0.05


def test_maximize_takes_the_best_candidate_and_polishes_only_smooth_models():
    X, z, gp, rng = _gp_on_quadratic(0)
    forest = make_surrogate("ert", n_estimators=20, random_state=0).fit(X, z)
    maximizer = AcquisitionMaximizer(n_candidates=64, local_search=False)
    pool = maximizer.candidates(SPACE_2D, X, z, rng)
    for model, polished in ((forest, False), (gp, True)):
        assert maximizer.uses_lbfgs(model, SPACE_2D) is polished
        point, origin = maximizer.maximize(model, pool, X, z.min(), explore=False,
                                           space=SPACE_2D, unseen=_no_history, rng=rng)
        scores = maximizer.score(model, pool, X, z.min())
        assert origin == "model"
        if polished:
            assert maximizer.score(model, point[None, :], X, z.min())[0] > scores.max()
        else:
            np.testing.assert_array_equal(point, pool[np.argmax(scores)])
    assert not AcquisitionMaximizer(acq_optimizer="sampling").uses_lbfgs(gp, SPACE_2D)


def test_a_flat_or_empty_pool_falls_back_to_a_random_unseen_point(caplog):
    X, z = _quadratic_data()
    model = make_surrogate("ert", n_estimators=5, random_state=0).fit(X, np.zeros(len(X)))
    maximizer = AcquisitionMaximizer(n_candidates=64, distance_variance=0)
    taken = X[:1]

    def unseen(A):
        return A[~np.all(A == taken, axis=1)]

    rng = np.random.default_rng(0)
    with caplog.at_level(logging.INFO, logger="treebo"):
        # Constant targets: zero variance everywhere, no possible improvement.
        point, origin = maximizer.maximize(model, X, X, 0.0, explore=False, space=SPACE_2D,
                                           unseen=unseen, rng=rng)
        assert origin == "random" and "the acquisition is flat (ei = -inf" in caplog.text
        point, origin = maximizer.maximize(model, X[:0], X, 0.0, explore=False,
                                           space=SPACE_2D, unseen=unseen, rng=rng)
        assert origin == "random" and "every candidate has been evaluated" in caplog.text
    assert point.shape == (2,) and np.all((point >= 0) & (point <= 1))
    with pytest.raises(SpaceExhausted, match="all 4 points of the search space"):
        AcquisitionMaximizer().random_point(Space([(0, 1), (0, 1)]), lambda A: A[:0], rng)


def test_step_kinds_follow_explore_every_and_jump_every_and_are_off_for_smooth_models():
    maximizer = AcquisitionMaximizer()
    kinds = [maximizer.step_kind(n, smooth=False) for n in range(16)]
    assert kinds == ["refine", "jump", "refine", "refine", "refine", "jump", "refine",
                     "explore"] * 2
    assert {maximizer.step_kind(n, smooth=True) for n in range(12)} == {"refine"}
    assert maximizer.exploration(smooth=False) == (1.0, 8, 4)
    assert AcquisitionMaximizer(distance_variance=0.5, explore_every=2,
                                jump_every=3).exploration(True) == (0.5, 2, 3)
    # Jumps fall halfway between explorations and win where both fall on one step.
    assert [step_kind(n, 4, 8) for n in range(8)] == ["refine"] * 3 + ["jump"] + [
        "refine"] * 3 + ["explore"]
    assert [step_kind(n, 4, 0) for n in range(4)] == ["refine"] * 3 + ["explore"]
    assert step_kind(0, 1, 0) == "explore" and step_kind(0, 1, 2) == "jump"
    assert {step_kind(n, 0, 1) for n in range(5)} == {"jump"}
    assert {step_kind(n, 0, 0) for n in range(5)} == {"refine"}


def test_a_jump_pool_moves_one_dimension_of_the_incumbent_at_least_jump_distance():
    space = Space([Real(0, 1), Real(0, 1), Integer(0, 20), Categorical(["a", "b", "c"])])
    incumbent = space.encode([[0.5, 0.9, 10, "b"]])[0]
    maximizer = AcquisitionMaximizer(n_jump_candidates=400, jump_distance=0.3)
    jumps = maximizer.jump_pool(space, incumbent, np.random.default_rng(0))
    moved = np.abs(jumps - incumbent)
    assert 100 < len(jumps) < 400  # the short moves are dropped
    assert np.all(moved.max(axis=1) >= 0.3)
    changed = [{j for j in range(space.n_dims) if moved[i, space.columns_of(j)].max() > 0}
               for i in range(len(jumps))]
    assert all(len(c) == 1 for c in changed)
    assert {j for c in changed for j in c} == {0, 1, 2, 3}
    assert AcquisitionMaximizer(n_jump_candidates=0).jump_pool(
        space, incumbent, np.random.default_rng(0)).shape == (0, space.n_columns)


@pytest.mark.parametrize("settings, message", [
    (dict(acquisition="ucb"), "acquisition"),
    (dict(n_candidates=0), "n_candidates must be an integer >= 1"),
    (dict(local_center_spacing=-0.1), "local_center_spacing must be a finite number >= 0"),
    (dict(distance_variance="yes"), "distance_variance must be 'auto' or a finite number"),
    (dict(explore_every=-1), "explore_every must be 'auto' or an integer >= 0"),
    (dict(explore_length=0), "explore_length must be a finite number > 0"),
    (dict(jump_every=2.5), "jump_every must be 'auto' or an integer >= 0"),
    (dict(jump_distance=-1), "jump_distance must be a finite number >= 0"),
    (dict(acq_optimizer="adam"), "acq_optimizer must be one of"),
])
def test_bad_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        AcquisitionMaximizer(**settings)
