import numpy as np
import pytest

from treebo.surrogates.base import (
    MixtureMoments,
    Prediction,
    Surrogate,
    mixture_moments,
    threaded_mixture_moments,
)


def _brute_force(means, variances):
    """Mixture moments from their definitions: E[Y] and E[Y^2] - E[Y]^2."""
    first = means.mean(axis=0)
    second = (variances + means**2).mean(axis=0)
    return first, second - first**2


def test_streaming_and_two_pass_match_brute_force_mixture_moments():
    rng = np.random.default_rng(0)
    means = rng.normal(size=(37, 11)) * 3
    variances = rng.gamma(2.0, size=(37, 11))
    mean, variance = _brute_force(means, variances)

    two_pass = mixture_moments(means, variances)
    moments = MixtureMoments(11)
    for m, v in zip(means, variances):
        moments.add(m, v)
    streaming = moments.result()
    for prediction in (two_pass, streaming):
        np.testing.assert_allclose(prediction.mean, mean, rtol=1e-12)
        np.testing.assert_allclose(prediction.variance, variance, rtol=1e-10)
        np.testing.assert_allclose(prediction.epistemic, means.var(axis=0), rtol=1e-10)
        np.testing.assert_allclose(prediction.aleatoric, variances.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(
            prediction.epistemic + prediction.aleatoric, prediction.variance, rtol=1e-12
        )


def test_merged_accumulators_equal_one_accumulator():
    rng = np.random.default_rng(1)
    means = rng.normal(size=(20, 5))
    variances = rng.random((20, 5))
    whole, left, right = MixtureMoments(5), MixtureMoments(5), MixtureMoments(5)
    for i, (m, v) in enumerate(zip(means, variances)):
        whole.add(m, v)
        (left if i < 7 else right).add(m, v)
    left.merge(right)
    for a, b in zip(
        (whole.result().mean, whole.result().variance), (left.result().mean, left.result().variance)
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_streaming_form_does_not_cancel_when_mean_dwarfs_spread():
    # Members at 1e9 + small offsets: the one-pass E[Y^2] - E[Y]^2 form loses
    # every digit here; Welford keeps the spread.
    values = 1e9 + np.array([0.0, 1e-3, 2e-3, 3e-3])
    moments = MixtureMoments(1)
    for v in values:
        moments.add(np.array([v]), 0.0)
    exact = (values - 1e9).var()  # the subtraction is exact for these floats
    one_pass = np.mean(values**2) - np.mean(values) ** 2
    assert abs(one_pass - exact) > 100 * exact
    np.testing.assert_allclose(moments.result().epistemic, [exact], rtol=1e-3)


def test_prediction_std_and_errors():
    p = Prediction(
        mean=np.zeros(2),
        variance=np.array([4.0, 9.0]),
        epistemic=np.array([4.0, 0.0]),
        aleatoric=np.array([0.0, 9.0]),
    )
    np.testing.assert_array_equal(p.std, [2.0, 3.0])
    with pytest.raises(ValueError, match="no members"):
        MixtureMoments(3).result()
    with pytest.raises(ValueError, match="member_variances must have the shape"):
        mixture_moments(np.zeros((2, 3)), np.zeros((3, 2)))


def test_members_in_a_batch_give_the_two_pass_moments_bit_for_bit():
    # SGLB and BART fold all their members at once; the batch must give
    # exactly the two-pass figures they were validated with.
    rng = np.random.default_rng(2)
    means = rng.normal(size=(9, 13)) * 5
    variances = rng.gamma(1.5, size=(9, 13))
    p = mixture_moments(means, variances)
    mean = means.mean(axis=0)
    np.testing.assert_array_equal(p.mean, mean)
    np.testing.assert_array_equal(p.epistemic, ((means - mean) ** 2).mean(axis=0))
    np.testing.assert_array_equal(p.aleatoric, variances.mean(axis=0))
    np.testing.assert_array_equal(mixture_moments(means).aleatoric, 0.0)


def test_single_members_and_batches_mix_in_one_accumulator():
    rng = np.random.default_rng(3)
    means = rng.normal(size=(12, 4))
    variances = rng.random((12, 4))
    mean, variance = _brute_force(means, variances)
    moments = MixtureMoments(4)
    moments.add(means[0], variances[0])
    moments.add_members(means[1:8], variances[1:8])
    for m, v in zip(means[8:], variances[8:]):
        moments.add(m, v)
    p = moments.result()
    assert moments.count == 12
    np.testing.assert_allclose(p.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(p.variance, variance, rtol=1e-10)


@pytest.mark.parametrize("n_jobs", [1, 2, 3, -1])
def test_threaded_fold_equals_one_accumulator(n_jobs):
    rng = np.random.default_rng(4)
    means = rng.normal(size=(7, 6))
    variances = rng.random((7, 6))
    shares = []

    def accumulate(rows):
        shares.append(len(rows))
        moments = MixtureMoments(6)
        for i in rows:
            moments.add(means[i], variances[i])
        return moments

    p = threaded_mixture_moments(accumulate, np.arange(7), n_jobs)
    assert sum(shares) == 7 and (n_jobs != 1 or shares == [7])
    whole = mixture_moments(means, variances)
    np.testing.assert_allclose(p.mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(p.variance, whole.variance, rtol=1e-10)


class _ShiftedUnitNormal(Surrogate):
    """Predicts z = 0.5 with epistemic 1 and aleatoric 2 on the standardized scale."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def _fit_standardized(self, X, z):
        self.seen_z_ = z

    def _predict_standardized(self, X):
        n = X.shape[0]
        return Prediction(
            mean=np.full(n, 0.5),
            variance=np.full(n, 3.0),
            epistemic=np.ones(n),
            aleatoric=np.full(n, 2.0),
        )


class _Unseeded(_ShiftedUnitNormal):
    def __init__(self):
        pass


def test_base_class_standardizes_targets_and_rescales_the_prediction():
    X = np.arange(8.0)[:, None]
    y = 3.0 * np.arange(8.0) - 4.0
    model = _ShiftedUnitNormal().fit(X, y)
    assert model.y_mean_ == y.mean() and model.y_scale_ == y.std()
    np.testing.assert_array_equal(model.seen_z_, (y - y.mean()) / y.std())
    p = model.predict_dist(X[:2])
    np.testing.assert_array_equal(p.mean, y.mean() + y.std() * 0.5)
    np.testing.assert_array_equal(p.epistemic, y.var())
    np.testing.assert_allclose(p.aleatoric, 2.0 * y.var(), rtol=1e-15)
    np.testing.assert_array_equal(p.variance, p.epistemic + p.aleatoric)


@pytest.mark.parametrize("y", [np.full(5, -2.5), 7.0 + 1e-13 * np.arange(5.0)])
def test_constant_targets_fit_nothing_unless_the_model_asks(y):
    X = np.arange(5.0)[:, None]
    model = _ShiftedUnitNormal().fit(X, y)
    assert model.y_scale_ == 0.0 and not hasattr(model, "seen_z_")
    p = model.predict_dist(X)
    np.testing.assert_array_equal(p.mean, y.mean())
    np.testing.assert_array_equal(p.variance, 0.0)

    class FitsConstants(_ShiftedUnitNormal):
        _fit_constant_targets = True

    model = FitsConstants().fit(X, y)
    assert model.y_scale_ == 1.0
    np.testing.assert_array_equal(model.seen_z_, y - y.mean())


def test_seeded_tag_follows_the_random_state_parameter():
    assert _ShiftedUnitNormal().seeded and not _Unseeded().seeded
