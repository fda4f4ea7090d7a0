import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.utils._param_validation import InvalidParameterError

from treebo.surrogates.gp import (
    GaussianProcessSurrogate,
    _cholesky_with_jitter,
    _fit_hyperparameters,
    _negative_log_likelihood,
)


def _smooth(X):
    # Varies fast along the first input, slowly along the second, not at all along a third.
    return np.sin(6.0 * X[:, 0]) + 0.5 * X[:, 1]


def _kernel_theta(signal, length_scale, noise):
    kernel = GaussianProcessSurrogate()._kernel(signal, np.asarray(length_scale), noise)
    return kernel, kernel.theta


@pytest.mark.parametrize(
    "signal, length_scale, noise",
    [
        (1.0, [0.5, 0.5, 0.5], 1e-3),
        (0.3, [0.05, 2.0, 40.0], 1e-6),
        (20.0, [0.2, 0.9, 0.01], 0.5),
    ],
)
def test_likelihood_and_gradient_equal_scikit_learn(signal, length_scale, noise):
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    z = _smooth(X)
    z = (z - z.mean()) / z.std()
    kernel, theta = _kernel_theta(signal, length_scale, noise)
    reference = GaussianProcessRegressor(kernel, alpha=1e-10, optimizer=None).fit(X, z)
    value, grad = reference.log_marginal_likelihood(theta, eval_gradient=True)
    ours, our_grad = _negative_log_likelihood(theta, X, z)
    np.testing.assert_allclose(-ours, value, rtol=1e-10)
    np.testing.assert_allclose(-our_grad, grad, rtol=1e-7, atol=1e-9 * np.abs(grad).max())


# The third input does not matter: its length scale reaches the upper bound.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_hyperparameter_fit_reaches_scikit_learns_optimum():
    # One start each, the same start and exact gradients: the same optimum,
    # up to where the two L-BFGS-B runs stop.
    rng = np.random.default_rng(1)
    X = rng.random((60, 3))
    z = _smooth(X) + 0.01 * rng.standard_normal(60)
    z = (z - z.mean()) / z.std()
    model = GaussianProcessSurrogate()
    kernel, _ = _kernel_theta(1.0, [0.5] * 3, 1e-3)
    reference = GaussianProcessRegressor(kernel, alpha=1e-10, n_restarts_optimizer=0).fit(X, z)
    start, bounds = model._start_and_bounds(3)
    ours = _fit_hyperparameters(X, z, [start], bounds)
    likelihood = -_negative_log_likelihood(ours, X, z)[0]
    assert likelihood >= reference.log_marginal_likelihood_value_ - 1e-4
    np.testing.assert_allclose(ours, reference.kernel_.theta, atol=0.05)
    # Relevance is read off the length scales: the first input is the fast one,
    # the third does not matter.
    length_scale = np.exp(ours[1:4])
    assert length_scale[0] < length_scale[1] < length_scale[2]


def test_up_to_max_fit_samples_points_every_point_is_fitted():
    rng = np.random.default_rng(2)
    X, C = rng.random((30, 2)), rng.random((100, 2))
    y = _smooth(X)
    at_cap = GaussianProcessSurrogate(max_fit_samples=30, random_state=4).fit(X, y)
    unlimited = GaussianProcessSurrogate(max_fit_samples=None, random_state=4).fit(X, y)
    a, b = at_cap.predict_dist(C), unlimited.predict_dist(C)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.variance, b.variance)


def test_beyond_max_fit_samples_the_posterior_conditions_on_every_point():
    # Noise-free data: the GP interpolates every training point, including the
    # 160 that the hyperparameters were not fitted on.
    rng = np.random.default_rng(3)
    X = rng.random((200, 2))
    y = _smooth(X)
    model = GaussianProcessSurrogate(max_fit_samples=40, random_state=0).fit(X, y)
    p = model.predict_dist(X)
    np.testing.assert_allclose(p.mean, y, atol=1e-3)
    assert np.all(p.epistemic < 1e-4)
    # Between the data the latent variance is larger again.
    far = model.predict_dist(np.array([[-0.5, -0.5]]))
    assert far.epistemic[0] > 100 * p.epistemic.max()


def test_subset_path_predicts_a_point_the_same_in_any_block():
    # At 300 points the cross-covariances are built 436 rows at a time and
    # solved 6,990 at a time: a pool of 7,500 crosses both kinds of block
    # edge. A row predicted alone goes through BLAS's matrix-vector product
    # instead of its matrix product, whose sums differ in their last bits
    # (measured: 2e-10 relative on the mean of noise-free data).
    rng = np.random.default_rng(8)
    X, C = rng.random((300, 2)), rng.random((7500, 2))
    model = GaussianProcessSurrogate(max_fit_samples=20, random_state=0).fit(X, _smooth(X))
    whole = model.predict_dist(C)
    for part in (slice(0, 1), slice(430, 440), slice(6985, 6995), slice(7400, 7500)):
        alone = model.predict_dist(C[part])
        np.testing.assert_allclose(alone.mean, whole.mean[part], rtol=1e-7)
        np.testing.assert_allclose(alone.epistemic, whole.epistemic[part], rtol=1e-7, atol=1e-12)


def test_subset_fit_predicts_about_as_well_as_the_full_fit():
    rng = np.random.default_rng(4)
    X, C = rng.random((150, 3)), rng.random((500, 3))
    y = _smooth(X) + 0.01 * rng.standard_normal(150)
    truth = _smooth(C)
    errors = {}
    for cap in (None, 30):
        model = GaussianProcessSurrogate(max_fit_samples=cap, random_state=0).fit(X, y)
        errors[cap] = np.sqrt(np.mean((model.predict(C) - truth) ** 2))
    # Measured: RMSE 0.00484 on all 150 points; on subsets of 30 (random_state
    # 0 to 9) 0.00486 to 0.00492.
    assert errors[None] < 0.006
    assert errors[30] < 1.1 * errors[None]


def test_subset_is_drawn_from_random_state():
    rng = np.random.default_rng(5)
    X, C = rng.random((120, 2)), rng.random((50, 2))
    y = _smooth(X) + 0.05 * rng.standard_normal(120)

    def fitted(seed):
        return GaussianProcessSurrogate(max_fit_samples=20, random_state=seed).fit(X, y)

    a, b, c = fitted(7), fitted(7), fitted(8)
    np.testing.assert_array_equal(a.predict_dist(C).variance, b.predict_dist(C).variance)
    assert not np.array_equal(a.kernel_.theta, c.kernel_.theta)


def test_fixed_bounds_hold_hyperparameters_on_the_subset_path():
    rng = np.random.default_rng(6)
    X = rng.random((50, 2))
    y = _smooth(X)
    model = GaussianProcessSurrogate(
        max_fit_samples=10, length_scale_bounds="fixed", noise_bounds="fixed", random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(model.kernel_.k1.k2.length_scale, [0.5, 0.5])
    assert model.kernel_.k2.noise_level == pytest.approx(1e-3)
    assert model.noise_variance_ == pytest.approx(1e-3 * np.std(y) ** 2)


def test_repeated_rows_on_the_subset_path():
    # Every point twice and no noise: singular at the noise floor, so the
    # Cholesky factorization needs the larger diagonal.
    rng = np.random.default_rng(7)
    X = np.repeat(rng.random((40, 2)), 2, axis=0)
    y = _smooth(X)
    p = GaussianProcessSurrogate(max_fit_samples=20, random_state=0).fit(X, y).predict_dist(X)
    assert np.all(np.isfinite(p.mean)) and np.all(p.variance >= 0)
    np.testing.assert_allclose(p.mean, y, atol=0.02)


def test_cholesky_grows_the_diagonal_until_it_factors():
    gram = np.ones((5, 5)) - 1e-9 * np.eye(5)  # one eigenvalue is -1e-9
    L = _cholesky_with_jitter(gram, 1e-12)
    residual = L @ L.T - gram
    diagonal = residual[0, 0]
    assert 1e-9 < diagonal <= 1e-7
    np.testing.assert_allclose(residual, diagonal * np.eye(5), atol=1e-12)


@pytest.mark.parametrize("value", [0, -1, 2.5, "all"])
def test_max_fit_samples_is_checked(value):
    with pytest.raises(InvalidParameterError, match="max_fit_samples"):
        GaussianProcessSurrogate(max_fit_samples=value).fit(np.zeros((3, 1)), np.arange(3.0))
