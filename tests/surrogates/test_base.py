import numpy as np
import pytest

from treebo.surrogates.base import MixtureMoments, Prediction, mixture_moments


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
        np.testing.assert_allclose(prediction.epistemic + prediction.aleatoric,
                                   prediction.variance, rtol=1e-12)


def test_merged_accumulators_equal_one_accumulator():
    rng = np.random.default_rng(1)
    means = rng.normal(size=(20, 5))
    variances = rng.random((20, 5))
    whole, left, right = MixtureMoments(5), MixtureMoments(5), MixtureMoments(5)
    for i, (m, v) in enumerate(zip(means, variances)):
        whole.add(m, v)
        (left if i < 7 else right).add(m, v)
    left.merge(right)
    for a, b in zip((whole.result().mean, whole.result().variance),
                    (left.result().mean, left.result().variance)):
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
    p = Prediction(mean=np.zeros(2), variance=np.array([4.0, 9.0]),
                   epistemic=np.array([4.0, 0.0]), aleatoric=np.array([0.0, 9.0]))
    np.testing.assert_array_equal(p.std, [2.0, 3.0])
    with pytest.raises(ValueError, match="no members"):
        MixtureMoments(3).result()
    with pytest.raises(ValueError, match="member_variances must have the shape"):
        mixture_moments(np.zeros((2, 3)), np.zeros((3, 2)))
