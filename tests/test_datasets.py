import warnings

import numpy as np
import pytest
import qmcpy

from treebo.datasets import EXAMPLES_1D, make_1d_example
from treebo.surrogates import make_surrogate


def _paper_sobol(n):
    # The official code's call, qmcpy.Sobol(1, seed=42, graycode=True), as qmcpy 2.x takes it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return qmcpy.Sobol(1, seed=42, graycode=True).gen_samples(n)


def test_few_is_figure_1_of_the_paper():
    example = make_1d_example("few")
    x = np.array([-3.0, -1.0, 0.5, 1.5, 4.95])[:, None]
    np.testing.assert_array_equal(example.X_train, x)
    expected = (np.sin(x) + np.random.RandomState(42).randn(5, 1) * 0.2)[:, 0]
    np.testing.assert_array_equal(example.y_train, expected)
    np.testing.assert_array_equal(example.X_test[:, 0], np.linspace(-5.0, 5.0, 201))
    np.testing.assert_array_equal(example.y_test, np.sin(np.linspace(-5.0, 5.0, 201)))
    assert example.noise_std == 0.2 and example.domain == (-5.0, 5.0)


def test_many_and_cubic_use_the_official_sobol_call_and_noise():
    many = make_1d_example("many")
    x = _paper_sobol(50) * 10.0 - 5.0
    np.testing.assert_allclose(many.X_train, x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        many.y_train,
        (np.sin(x) + np.random.RandomState(42).randn(50, 1) * 0.2)[:, 0],
        rtol=0,
        atol=1e-12,
    )
    cubic = make_1d_example("cubic")
    x = _paper_sobol(10) * 15.0 - 7.5
    np.testing.assert_allclose(cubic.X_train, x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        cubic.y_train,
        (x**3 + np.random.RandomState(42).randn(10, 1) * 100.0)[:, 0],
        rtol=0,
        atol=1e-9,
    )
    np.testing.assert_array_equal(cubic.X_test[:, 0], np.linspace(-10.0, 10.0, 201))
    np.testing.assert_array_equal(cubic.y_test, np.linspace(-10.0, 10.0, 201) ** 3)


def test_sobol_inputs_fill_the_interval_evenly():
    # The first 32 points of a scrambled base-2 net put one point in each 1/32 of the interval.
    u = (make_1d_example("many").X_train[:32, 0] + 5.0) / 10.0
    assert sorted(np.floor(u * 32).astype(int)) == list(range(32))
    cubic = make_1d_example("cubic").X_train[:, 0]
    assert np.all((cubic >= -7.5) & (cubic <= 7.5))


def test_noise_seed_changes_the_noise_only():
    base, other = make_1d_example("cubic"), make_1d_example("cubic", noise_seed=3)
    np.testing.assert_array_equal(base.X_train, other.X_train)
    assert not np.allclose(base.y_train, other.y_train)
    residual = other.y_train - other.function(other.X_train[:, 0])
    np.testing.assert_allclose(residual, 100.0 * np.random.RandomState(3).randn(10), atol=1e-9)


def test_encode_maps_the_domain_to_the_unit_interval_and_fit_predict_uses_it():
    example = make_1d_example("few")
    encoded = example.encode(example.X_test)
    assert encoded[0, 0] == 0.0 and encoded[-1, 0] == 1.0
    model = make_surrogate("ert", n_estimators=5, random_state=0)
    prediction = example.fit_predict(model)
    assert len(prediction) == 201
    assert model.n_features_in_ == 1
    # ERT sees every point: its mean at a training input is that input's target.
    at_train = model.predict(example.encode(example.X_train))
    np.testing.assert_allclose(at_train, example.y_train)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(name="sine"), "name must be one of"),
        (dict(name="few", noise_seed=-1), "noise_seed must be an integer"),
        (dict(name="few", n_test=1), "n_test must be an integer >= 2"),
        (dict(name="many", design_seed=1.5), "design_seed must be an integer"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_1d_example(**kwargs)


def test_the_examples_are_listed():
    assert EXAMPLES_1D == ("few", "many", "cubic")
