"""Partial dependence and importance: exact on models we control, sound on seeded runs."""

import math
import warnings

import numpy as np
import pytest

from treebo import Binary, Categorical, Integer, Real, Space, minimize
from treebo.result import OptimizeResult
from treebo.results.inspection import (
    dimension_grid,
    fit_surrogate,
    parameter_importance,
    partial_dependence,
    partial_dependence_2d,
)


def _result(space, x_iters, values, **fields):
    space = space if isinstance(space, Space) else Space(space)
    values = np.asarray(values, dtype=float)
    best = int(np.nanargmin(values))
    return OptimizeResult(
        x=x_iters[best],
        fun=values[best],
        x_iters=list(x_iters),
        func_vals=values,
        space=space,
        statuses=["complete" if math.isfinite(v) else "failed" for v in values],
        **fields,
    )


class AdditiveModel:
    """f = 3 u0^2 + sin(4 u1) + (0, 1, 2)[category] on encoded columns; u3 unused."""

    def __init__(self):
        self.calls = []

    def predict(self, X):
        self.calls.append(len(X))
        return 3 * X[:, 0] ** 2 + np.sin(4 * X[:, 1]) + X[:, 2:5] @ np.array([0.0, 1.0, 2.0])


@pytest.fixture
def additive():
    space = Space([Real(0, 1), Real(0, 1), Categorical(["a", "b", "c"]), Real(0, 1)])
    points = space.sample(8, random_state=0)
    return _result(space, points, np.arange(8.0), random_state=0)


def test_partial_dependence_is_exact_for_an_additive_model(additive):
    model = AdditiveModel()
    curves = partial_dependence(additive, model=model, n_points=11, n_samples=64)
    assert [c.name for c in curves] == ["x0", "x1", "x2", "x3"]
    # One predict call (chunks of at most 65,536 rows) for every curve together.
    assert model.calls == [(11 + 11 + 3 + 11) * 64]
    u = np.linspace(0, 1, 11)
    np.testing.assert_allclose(curves[0].positions, u)
    # Averaged over the same sample at every grid value, the other terms cancel out.
    np.testing.assert_allclose(curves[0].average - curves[0].average[0], 3 * u**2, atol=1e-12)
    np.testing.assert_allclose(curves[1].average - curves[1].average[0], np.sin(4 * u), atol=1e-12)
    assert curves[2].values == ["a", "b", "c"]
    np.testing.assert_allclose(curves[2].average - curves[2].average[0], [0, 1, 2], atol=1e-12)
    assert np.ptp(curves[3].average) == 0.0  # the model ignores x3: exactly flat


def test_partial_dependence_2d_is_exact_for_an_additive_model(additive):
    pair = partial_dependence_2d(additive, "x0", 1, model=AdditiveModel(), n_points=6, n_samples=32)
    assert pair.names == ("x0", "x1") and pair.average.shape == (6, 6)
    u = np.linspace(0, 1, 6)
    expected = 3 * u[:, None] ** 2 + np.sin(4 * u)[None, :]
    np.testing.assert_allclose(pair.average - pair.average[0, 0], expected, atol=1e-12)


def test_importance_of_an_additive_model_is_its_main_effects(additive):
    imp = parameter_importance(additive, model=AdditiveModel(), n_points=201, n_samples=256)
    # The variance of each term over its grid (uniform under the prior); none for x3.
    u = np.linspace(0, 1, 201)
    expected = np.array([np.var(3 * u**2), np.var(np.sin(4 * u)), np.var([0, 1, 2]), 0.0])
    np.testing.assert_allclose(imp.main_effects, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(imp.importance, expected / expected.sum(), atol=1e-15)
    assert imp.importance.sum() == pytest.approx(1.0)
    assert list(imp.to_dict()) == ["x0", "x2", "x1", "x3"]
    # Additive: the main effects explain the whole variance (up to sampling error).
    assert imp.main_effects_share == pytest.approx(1.0, abs=0.05)


class ChildModel:
    """Predicts the child's encoded value where it is active, 100 where it is not."""

    def __init__(self, column):
        self.column = column

    def predict(self, X):
        child = X[:, self.column]
        return np.where(child >= 0, child, 100.0)


def test_conditional_dimension_is_averaged_where_it_is_active():
    space = Space(
        {"kind": Categorical(["a", "b"]), "p": Real(0, 1, active_if={"kind": "a"}), "q": Real(0, 1)}
    )
    result = _result(space, space.sample(6, random_state=1), np.arange(6.0))
    model = ChildModel(space.columns_of("p").start)
    curve = partial_dependence(result, "p", model=model, n_points=5, n_samples=64)
    # Rows with kind = "b" (p inactive, predicting 100) are left out of the average.
    np.testing.assert_allclose(curve.average, np.linspace(0, 1, 5), atol=1e-12)
    pair = partial_dependence_2d(result, "kind", "p", model=model, n_points=5, n_samples=64)
    np.testing.assert_allclose(pair.average[0], np.linspace(0, 1, 5), atol=1e-12)
    assert np.isnan(pair.average[1]).all()  # p never exists with kind = "b"
    # The parent's own curve averages over every row: half of them predict 100.
    kind = partial_dependence(result, "kind", model=model, n_samples=64)
    assert kind.average[1] == 100.0 and kind.average[0] < 1.0


def test_dimension_grid_covers_each_kind_of_dimension():
    enc, values, pos = dimension_grid(Integer(1, 5), 40)
    assert values == [1, 2, 3, 4, 5] and list(pos) == [1, 2, 3, 4, 5]
    enc, values, pos = dimension_grid(Integer(1, 1000), 40)
    assert len(values) <= 40 and values[0] == 1 and values[-1] == 1000
    assert values == sorted(set(values))
    enc, values, pos = dimension_grid(Real(1e-4, 1.0, "log-uniform"), 5)
    np.testing.assert_allclose(values, [1e-4, 1e-3, 1e-2, 1e-1, 1.0], rtol=1e-9)
    enc, values, pos = dimension_grid(Binary(), 40)
    assert values == [0, 1] and list(pos) == [0, 1]
    enc, values, pos = dimension_grid(Categorical([None, (1, 2), "x"]), 40)
    assert values == [None, (1, 2), "x"] and list(pos) == [0, 1, 2]
    np.testing.assert_array_equal(enc, np.eye(3))


def _quadratic(x):  # does not depend on x[2]
    return (x[0] - 0.3) ** 2 + 2 * (x[1] - 0.7) ** 2


def test_importance_ranks_the_irrelevant_dimension_lowest_on_a_seeded_run():
    res = minimize(
        _quadratic,
        [Real(0, 1), Real(0, 1), Real(0, 1)],
        n_calls=30,
        random_state=0,
        n_candidates=2000,
    )
    imp = parameter_importance(res)
    # Measured at seed 0: [0.221, 0.746, 0.033] (seeds 0-5: x2 lowest every time, at most
    # 0.033; x0 at least 0.040).
    assert np.argsort(imp.importance).tolist() == [2, 0, 1]
    assert imp.importance[2] < 0.1 and imp.importance[1] > 0.5
    # Same result, same seed: the same numbers (the refit and the sample are seeded).
    again = parameter_importance(res)
    np.testing.assert_array_equal(again.importance, imp.importance)


def test_partial_dependence_on_an_irrelevant_dimension_is_flat():
    # A space-filling design, so the forest sees the whole cube.
    res = minimize(
        _quadratic,
        [Real(0, 1), Real(0, 1), Real(0, 1)],
        n_calls=64,
        n_initial_points=64,
        random_state=0,
    )
    curves = partial_dependence(res)
    ranges = [np.ptp(c.average) for c in curves]
    # Measured at seed 0: ranges 0.314, 0.603, 0.072; the irrelevant one's range is 0.12 of
    # the relevant x1's (0.065 to 0.12 over seeds 0-5).
    assert ranges[2] < 0.2 * ranges[1]
    # x1's curve has its minimum near the true 0.7 and follows 2 (v - 0.7)^2.
    v = curves[1].positions
    assert abs(v[np.argmin(curves[1].average)] - 0.7) <= 0.1
    assert np.corrcoef(curves[1].average, 2 * (v - 0.7) ** 2)[0, 1] > 0.95


def test_fit_surrogate_uses_the_study_seed_and_complete_trials():
    space = Space([Real(0, 1), Real(0, 1)])
    points = space.sample(12, random_state=2)
    values = [_quadratic(p + [0]) for p in points]
    values[3] = math.nan  # a failed trial: left out of the fit
    result = _result(space, points, values, surrogate="rf", random_state=7)
    model = fit_surrogate(result)
    assert type(model).__name__ == "RandomForestSurrogate"
    assert model.random_state == 7 and model.n_features_in_ == 2
    X = space.encode(points)
    again = fit_surrogate(result)
    np.testing.assert_array_equal(model.predict(X), again.predict(X))
    other = fit_surrogate(result, random_state=8)
    assert not np.array_equal(model.predict(X), other.predict(X))


def test_fit_surrogate_falls_back_to_a_forest_with_a_warning():
    space = Space([Real(0, 1)])
    result = _result(space, [[0.1], [0.5], [0.9]], [1.0, 0.0, 1.0], surrogate="MyOwnSurrogate")
    with pytest.warns(UserWarning, match="'MyOwnSurrogate' is not a registered name"):
        model = fit_surrogate(result)
    assert type(model).__name__ == "BwOForestSurrogate"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert type(fit_surrogate(result, surrogate="ert")).__name__ == "ExtraTreesSurrogate"


def test_bad_arguments_name_what_is_allowed(additive):
    with pytest.raises(ValueError, match="unknown dimension 'nope'"):
        partial_dependence(additive, "nope", model=AdditiveModel())
    with pytest.raises(ValueError, match="dimension must be a name"):
        partial_dependence(additive, 9, model=AdditiveModel())
    with pytest.raises(ValueError, match="first and second must be different"):
        partial_dependence_2d(additive, "x0", 0, model=AdditiveModel())
    with pytest.raises(ValueError, match="n_points must be an integer >= 2"):
        partial_dependence(additive, model=AdditiveModel(), n_points=1)
    failed = _result(Space([Real(0, 1)]), [[0.1], [0.2]], [1.0, math.nan])
    failed["func_vals"] = np.array([math.nan, math.nan])
    with pytest.raises(ValueError, match="no complete trial"):
        fit_surrogate(failed)


def test_a_storage_file_gives_the_numbers_of_its_result(tmp_path):
    path = tmp_path / "s.db"
    res = minimize(
        _quadratic,
        [Real(0, 1), Real(0, 1), Integer(0, 3)],
        n_calls=12,
        random_state=4,
        storage=path,
        n_candidates=1000,
        surrogate_params={"n_estimators": 30, "max_features": 1.0},
    )
    model = fit_surrogate(path)
    # The stored parameters are used; the result of minimize holds only the name.
    assert model.n_estimators == 30 and model.max_features == 1.0
    assert model.random_state == 4
    same = fit_surrogate(res, surrogate=model)
    X = res.space.encode(res.x_iters)
    np.testing.assert_array_equal(model.predict(X), same.predict(X))
    stored = parameter_importance(path, model=model)
    direct = parameter_importance(res, model=model)
    np.testing.assert_array_equal(stored.importance, direct.importance)


def test_a_storage_file_refits_the_studys_surrogate_parameters_read_back(tmp_path):
    # A parameter stored as the repr of a tuple (the GP's bounds) is read back as the
    # tuple and used; the result of minimize holds only the name, so the defaults.
    path = tmp_path / "gp.db"
    res = minimize(
        _quadratic,
        [Real(0, 1), Real(0, 1), Integer(0, 3)],
        n_calls=7,
        surrogate="gp",
        surrogate_params={"length_scale_bounds": (0.1, 10.0), "n_restarts": 0},
        random_state=2,
        storage=path,
        n_candidates=300,
    )
    model = fit_surrogate(path)
    assert model.length_scale_bounds == (0.1, 10.0) and model.n_restarts == 0
    assert fit_surrogate(res).length_scale_bounds == (0.01, 100.0)
