import math

import numpy as np
import pytest

from treebo.multifidelity import Checkpoint
from treebo.problems import Branin, Hartmann6
from treebo.problems.multifidelity import (
    MULTIFIDELITY_PROBLEMS,
    HGBCancer,
    MFBranin,
    MFHartmann6,
    MLPDigits,
    SVCDigits,
    _stratified_rows,
    get_multifidelity_problem,
)


def test_synthetic_problems_are_the_plain_functions_at_max_budget():
    rng = np.random.default_rng(0)
    for mf, plain in ((MFBranin(), Branin()), (MFHartmann6(), Hartmann6())):
        for x in mf.space.sample(5, rng):
            assert mf(x) == pytest.approx(plain(x), rel=1e-12)
            assert mf(x, mf.max_budget) == mf(x)
        best = plain.optimizers[0]
        assert mf(best) == pytest.approx(plain.optimal_value, abs=1e-5)
        assert abs(mf(best, mf.min_budget) - plain.optimal_value) > 0.05  # biased at low budget


def test_mf_branin_low_fidelity_follows_the_shifted_constants():
    x = [1.0, 2.0]
    b, c, t = (
        5.1 / (4 * math.pi**2) - 0.1 * (26 / 27),
        5 / math.pi - 0.1 * (26 / 27),
        (1 / (8 * math.pi) + 0.05 * (26 / 27)),
    )
    expected = (2.0 - b + c - 6.0) ** 2 + 10 * (1 - t) * math.cos(1.0) + 10
    assert MFBranin()(x, 1) == pytest.approx(expected)


@pytest.mark.parametrize("budget", [0, 28, 0.5])
def test_a_budget_outside_the_range_is_refused(budget):
    with pytest.raises(ValueError, match=r"budget must be in \[1, 27\]"):
        MFBranin()([0.0, 0.0], budget)


def test_the_registry_names_every_problem():
    assert sorted(MULTIFIDELITY_PROBLEMS) == [
        "mf_branin",
        "mf_hartmann6",
        "mf_hgb_cancer",
        "mf_mlp_digits",
        "mf_svc_digits",
    ]
    with pytest.raises(ValueError, match="name must be one of"):
        get_multifidelity_problem("branin")


_HGB_POINT = {
    "learning_rate": 0.1,
    "max_leaf_nodes": 16,
    "min_samples_leaf": 10,
    "l2_regularization": 1e-3,
    "max_features": 0.5,
}
_MLP_POINT = {"hidden": 64, "learning_rate_init": 1e-3, "alpha": 1e-4, "batch_size": 64}


@pytest.mark.parametrize("problem, x", [(HGBCancer(), _HGB_POINT), (MLPDigits(), _MLP_POINT)])
def test_a_continued_training_ends_where_one_from_scratch_does(problem, x, tmp_path):
    # What makes the benchmark's continued runs honest: the value after continuing
    # from a lower budget is, bit for bit, the value of a training from scratch.
    previous = None
    for budget in (1, 3, 9):
        budget *= problem.min_budget
        value = problem.continue_training(x, budget, Checkpoint(tmp_path, previous))
        assert value == problem(x, budget)
        previous = budget
    assert (tmp_path / "model.pkl").exists() and not (tmp_path / "model.partial").exists()


def test_synthetic_problems_continue_to_their_value_and_the_svc_cannot():
    checkpoint = Checkpoint(None, 3)  # no state is read or written
    assert MFBranin().continue_training([1.0, 2.0], 9, checkpoint) == MFBranin()([1.0, 2.0], 9)
    assert not SVCDigits.continuable
    with pytest.raises(ValueError, match="mf_svc_digits cannot continue a training"):
        SVCDigits().continue_training({"C": 1.0, "gamma": 0.01}, 0.5, checkpoint)
    with pytest.raises(ValueError, match="budget must be in"):
        MFBranin().continue_training([1.0, 2.0], 30, checkpoint)


@pytest.mark.parametrize(
    "problem, x",
    [
        (
            HGBCancer(),
            {
                "learning_rate": 0.1,
                "max_leaf_nodes": 16,
                "min_samples_leaf": 10,
                "l2_regularization": 1e-3,
                "max_features": 0.5,
            },
        ),
        (MLPDigits(), {"hidden": 64, "learning_rate_init": 1e-3, "alpha": 1e-4, "batch_size": 64}),
        (SVCDigits(), {"C": 10.0, "gamma": 0.01}),
    ],
)
def test_learning_problems_are_deterministic_and_improve_with_the_budget(problem, x):
    low, high = problem(x, problem.min_budget), problem(x, problem.max_budget / 3)
    assert problem(x, problem.max_budget / 3) == high  # seeded model, fixed split
    assert high < low


def test_subsamples_are_stratified_and_nested():
    y = np.repeat(np.arange(3), [10, 20, 30])
    small, large = _stratified_rows(y, 0.2), _stratified_rows(y, 0.5)
    assert np.bincount(y[small]).tolist() == [2, 4, 6]
    assert set(small) <= set(large)
