import numpy as np
import pytest
from sklearn.base import clone

from treebo.surrogates import make_surrogate
from treebo.surrogates.forest import BwOForestSurrogate, ExtraTreesSurrogate

FOREST_NAMES = ["rf", "ert", "bwo"]


def _noisy_sine_five():
    """The 5-point example of Kim & Choi's Figure 1 (problems.md §9), inputs scaled to [0, 1]."""
    x = np.array([-3.0, -1.0, 0.5, 1.5, 4.95])
    y = np.sin(x) + 0.2 * np.random.RandomState(42).randn(5)
    return ((x + 5) / 10)[:, None], y


def _scaled(x):
    return ((np.asarray(x, dtype=float) + 5) / 10)[:, None]


def test_bwo_bootstrap_keeps_the_expected_number_of_distinct_points():
    # Kim & Choi eq. (9): N = 5, M = 20 gives E|unique| = 5 - 4^20 / 5^19 = 4.9424,
    # Var = 0.0551. The root of each tree counts the distinct in-bag rows.
    X, y = _noisy_sine_five()
    forest = BwOForestSurrogate(n_estimators=4000, random_state=0).fit(X, y)
    distinct = np.array([t.tree_.n_node_samples[0] for t in forest.estimators_])
    expected = 5 - 4.0**20 / 5.0**19
    assert expected == pytest.approx(4.9424, abs=1e-4)
    # 4 standard errors: sqrt(0.0551 / 4000) = 0.0037.
    assert abs(distinct.mean() - expected) < 0.015
    assert abs(distinct.var() - 0.0551) < 0.01
    # Plain bagging (alpha = 1) keeps about 3.36 of 5.
    bagged = BwOForestSurrogate(n_estimators=4000, oversampling=1.0, random_state=0).fit(X, y)
    distinct = np.array([t.tree_.n_node_samples[0] for t in bagged.estimators_])
    assert abs(distinct.mean() - 3.3616) < 0.05


def test_figure_1_bwo_is_certain_at_the_data_and_uncertain_between_rf_is_not():
    # Mean predictive std between the data points divided by that at the data
    # points, over 10 seeds. Measured: BwO 4.0-5.6 (median 4.6), RF 1.0-1.2.
    X, y = _noisy_sine_five()
    between = _scaled([-2.0, -0.25, 1.0, 3.225])
    ratios = {"bwo": [], "rf": []}
    for name in ratios:
        for seed in range(10):
            model = make_surrogate(name, random_state=seed).fit(X, y)
            at = model.predict(X, return_std=True)[1].mean()
            mid = model.predict(between, return_std=True)[1].mean()
            ratios[name].append(mid / at)
    assert min(ratios["bwo"]) > 3.0
    assert max(ratios["rf"]) < 1.5


def test_bwo_variance_stops_growing_outside_the_data():
    # The limitation Kim & Choi acknowledge: beyond the outermost point every
    # tree uses its boundary leaf, so the std there equals the std at that point.
    X, y = _noisy_sine_five()
    model = BwOForestSurrogate(random_state=0).fit(X, y)
    std = model.predict(_scaled([-5.0, -4.0, -3.0]), return_std=True)[1]
    np.testing.assert_allclose(std, std[-1], rtol=1e-12)


def test_ert_sees_every_point_so_its_variance_vanishes_at_the_data():
    X, y = _noisy_sine_five()
    prediction = ExtraTreesSurrogate(random_state=0).fit(X, y).predict_dist(X)
    np.testing.assert_allclose(prediction.variance, 0.0, atol=1e-15)
    np.testing.assert_allclose(prediction.mean, y, rtol=1e-12)


def test_leaf_variance_is_the_aleatoric_part_for_repeated_noisy_rows():
    # Ten copies of one x with different y: every leaf holds all of them, so
    # the aleatoric variance is their population variance and trees agree.
    X = np.zeros((10, 2))
    y = np.arange(10.0)
    for name in ("ert", "bwo"):
        p = make_surrogate(name, random_state=0).fit(X, y).predict_dist(np.array([[0.5, 0.5]]))
        if name == "ert":
            np.testing.assert_allclose(p.aleatoric, y.var())
            np.testing.assert_allclose(p.epistemic, 0.0, atol=1e-12)
        else:
            # Bootstrap weights change each tree's leaf moments a little.
            assert p.aleatoric[0] == pytest.approx(y.var(), rel=0.15)
            assert p.epistemic[0] > 0


def test_min_leaf_variance_floors_the_aleatoric_part():
    X, y = _noisy_sine_five()
    p = BwOForestSurrogate(min_leaf_variance=0.01, random_state=0).fit(X, y).predict_dist(X)
    assert np.all(p.aleatoric >= 0.01 - 1e-15)


@pytest.mark.parametrize("name", FOREST_NAMES)
def test_prediction_fields_are_consistent(name):
    rng = np.random.default_rng(0)
    X = rng.random((60, 4))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(60)
    p = make_surrogate(name, random_state=0).fit(X, y).predict_dist(rng.random((300, 4)))
    assert p.mean.shape == p.variance.shape == p.epistemic.shape == p.aleatoric.shape == (300,)
    np.testing.assert_allclose(p.variance, p.epistemic + p.aleatoric)
    assert np.all(p.epistemic >= 0) and np.all(p.aleatoric >= 0)


@pytest.mark.parametrize("name", FOREST_NAMES)
def test_threads_do_not_change_predictions(name):
    rng = np.random.default_rng(0)
    X, y = rng.random((40, 3)), rng.random(40)
    C = rng.random((500, 3))
    one = make_surrogate(name, random_state=3).fit(X, y).predict_dist(C)
    two = make_surrogate(name, random_state=3, n_jobs=2).fit(X, y).predict_dist(C)
    np.testing.assert_allclose(one.mean, two.mean, rtol=1e-12)
    np.testing.assert_allclose(one.variance, two.variance, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("name", FOREST_NAMES)
@pytest.mark.parametrize("n_columns, binary", [(4, False), (24, True)])
def test_a_large_pool_predicts_bit_for_bit_as_its_small_slices(name, n_columns, binary):
    # Pools of 2,048 rows or more are predicted in a locality order and put
    # back; slices of 1,000 rows take the plain path. No bit may differ, and
    # the rows must come back where they were. 24 binary columns are more
    # than the order's key holds, and give each column a single bit.
    rng = np.random.default_rng(1)
    X, y = rng.random((60, n_columns)), rng.random(60)
    C = np.vstack([rng.random((4000, n_columns)), X[:5]])
    if binary:
        X, C = np.round(X), np.round(C)
    model = make_surrogate(name, random_state=2).fit(X, y)
    whole = model.predict_dist(C)
    parts = [model.predict_dist(C[a : a + 1000]) for a in range(0, len(C), 1000)]
    for field in ("mean", "variance", "epistemic", "aleatoric"):
        np.testing.assert_array_equal(
            getattr(whole, field), np.concatenate([getattr(p, field) for p in parts])
        )
    np.testing.assert_array_equal(whole.mean[-5:], model.predict(X[:5]))


def test_no_tree_copies_the_training_data():
    # Bootstraps are sample weights: every tree is fitted on the same array.
    X, y = _noisy_sine_five()
    forest = BwOForestSurrogate(n_estimators=3, random_state=0).fit(X, y)
    assert all(t.tree_.n_node_samples[0] <= 5 for t in forest.estimators_)
    assert [t.tree_.weighted_n_node_samples[0] for t in forest.estimators_] == [20.0] * 3


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            dict(n_estimators=0),
            r"'n_estimators' parameter .* must be an int in the range \[1, inf\)",
        ),
        (
            dict(min_leaf_variance=-1.0),
            r"'min_leaf_variance' parameter .* must be a float in the range \[0.0, inf\)",
        ),
        (
            dict(oversampling=0.0),
            r"'oversampling' parameter .* must be a float in the range \(0.0, inf\)",
        ),
        (
            dict(n_jobs=0),
            r"'n_jobs' parameter .* must be None, an int in the range \(-inf, -1\] or an "
            r"int in the range \[1, inf\)",
        ),
        # The trees' own parameters are checked before any tree is built.
        (dict(max_features="all"), r"'max_features' parameter of BwOForestSurrogate must be"),
    ],
)
def test_bad_parameters_are_named(bad, message):
    X, y = _noisy_sine_five()
    with pytest.raises(ValueError, match=message):
        clone(BwOForestSurrogate(**bad)).fit(X, y)


def test_random_forest_oversampling_draws_alpha_n_points_with_best_splits():
    # The "B+O" ablation of Kim & Choi's Figure 6: best-split trees on bootstraps of 4N.
    from treebo.surrogates.forest import RandomForestSurrogate

    X, y = _noisy_sine_five()
    plain = RandomForestSurrogate(n_estimators=3, random_state=0).fit(X, y)
    over = RandomForestSurrogate(n_estimators=3, oversampling=4.0, random_state=0).fit(X, y)
    assert [t.tree_.weighted_n_node_samples[0] for t in plain.estimators_] == [5.0] * 3
    assert [t.tree_.weighted_n_node_samples[0] for t in over.estimators_] == [20.0] * 3
    with pytest.raises(
        ValueError,
        match=r"'oversampling' parameter of RandomForestSurrogate must "
        r"be a float in the range \(0.0, inf\)",
    ):
        RandomForestSurrogate(oversampling=-1.0).fit(X, y)
