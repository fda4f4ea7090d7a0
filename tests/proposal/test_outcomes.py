"""Several objectives and constraints inside a proposal: scalarization, feasibility, EHVI."""

import numpy as np
import pytest

from treebo import Real, Space
from treebo.pareto import hypervolume
from treebo.proposal import ProposalPipeline
from treebo.proposal.outcomes import (
    FeasibilityModel,
    ObjectiveScoring,
    add_log_feasibility,
    chebyshev_values,
    constraint_model,
    hypervolume_improvement,
    total_violation,
)
from treebo.surrogates import make_surrogate
from treebo.surrogates.gp import GaussianProcessSurrogate


def test_chebyshev_values_scale_each_objective_and_keep_failures():
    Y = np.array([[0.0, 10.0], [1.0, 0.0], [0.5, 5.0], [np.nan, 1.0]])
    values = chebyshev_values(Y, np.array([0.5, 0.5]))
    assert values[:3] == pytest.approx([0.525, 0.525, 0.275])
    assert np.isnan(values[3])
    # All weight on the first objective: its order, with the sum term breaking ties.
    first = chebyshev_values(Y[:3], np.array([1.0, 0.0]))
    assert np.argsort(first).tolist() == [0, 2, 1]


def test_total_violation_sums_the_positive_parts():
    V = np.array([[-1.0, 2.0], [0.0, -3.0], [np.nan, 0.0]])
    out = total_violation(V)
    assert out[:2].tolist() == [2.0, 0.0] and np.isnan(out[2])


def test_hypervolume_improvement_equals_the_difference_of_hypervolumes():
    rng = np.random.default_rng(0)
    front = np.array([[0.1, 0.9], [0.4, 0.5], [0.8, 0.2]])
    reference = np.array([1.1, 1.1])
    points = rng.uniform(-0.2, 1.3, size=(200, 2))
    expected = [
        hypervolume(np.vstack([front, p]), reference) - hypervolume(front, reference)
        for p in points
    ]
    assert hypervolume_improvement(points, front, reference) == pytest.approx(expected)
    empty = hypervolume_improvement(points, np.empty((0, 2)), reference)
    assert empty == pytest.approx([hypervolume(p[None, :], reference) for p in points])


def test_feasibility_is_high_inside_the_limit_and_low_outside():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(40, 2))
    violations = (X.sum(axis=1) - 1.0)[:, None]  # a + b <= 1
    model = FeasibilityModel(make_surrogate("gp"), X, violations, seed=0)
    inside, outside = np.array([[0.1, 0.1]]), np.array([[0.9, 0.9]])
    assert model.log_probability(inside)[0] > np.log(0.95)
    assert model.log_probability(outside)[0] < np.log(0.05)


def test_feasibility_near_a_limit_is_resolved_by_the_gp():
    # A GP's variance at a linear limit it has seen 120 times is tiny: 1e-4 inside the
    # limit (of spread ~0.4) is feasible, 1e-4 outside it is not (measured: P = 0.98 and
    # 0.02). The forest's floor of 1e-3 of the spread would leave both near one half
    # (0.59 and 0.41).
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(120, 2))
    violations = (X.sum(axis=1) - 1.0)[:, None]
    model = FeasibilityModel(constraint_model("gp"), X, violations, seed=0)
    near = np.array([[0.5, 0.5 - 1e-4], [0.5, 0.5 + 1e-4]])
    inside, outside = model.log_probability(near)
    assert inside > np.log(0.9) and outside < np.log(0.1)


def test_the_constraints_gp_fits_once_on_a_subset():
    gp = constraint_model("gp")
    assert isinstance(gp, GaussianProcessSurrogate)
    assert gp.n_restarts == 0 and gp.max_fit_samples == 100
    assert type(constraint_model("bwo")).__name__ == "BwOForestSurrogate"


@pytest.mark.parametrize("seed", range(5))
def test_log_feasibility_is_exact_for_the_best_candidates(seed):
    rng = np.random.default_rng(seed)
    points = rng.uniform(size=(20_000, 3))
    scores = -np.sum((points - 0.6) ** 2, axis=1)
    scores[rng.integers(len(scores), size=50)] = -np.inf
    calls = []

    def log_probability(rows):
        calls.append(len(rows))
        return np.minimum(0.0, -50.0 * (rows[:, 0] + rows[:, 1] - 1.0))  # a + b <= 1

    full = scores + log_probability(points)
    calls.clear()
    out = add_log_feasibility(scores, points, log_probability, n_exact=5)
    best = np.argsort(-full, kind="stable")[:5]
    assert np.argsort(-out, kind="stable")[:5].tolist() == best.tolist()
    assert np.array_equal(out[best], full[best])
    # Every other candidate is at most its total, and below the fifth best.
    assert np.all(out <= full)
    assert np.all(np.delete(out, best) <= full[best[-1]])
    assert sum(calls) < len(points) / 2  # the point of it


def test_multi_objective_is_checked_like_every_setting():
    assert ObjectiveScoring().get_params() == {"multi_objective": "parego"}
    with pytest.raises(ValueError, match=r"multi_objective must be one of \('parego', 'ehvi'\)"):
        ObjectiveScoring("nsga")
    assert (
        ProposalPipeline.from_settings(multi_objective="ehvi").get_params()["multi_objective"]
        == "ehvi"
    )


@pytest.mark.parametrize("method", ["parego", "ehvi"])
def test_a_proposal_with_two_objectives_extends_the_front(method):
    space = Space([Real(0.0, 1.0), Real(0.0, 1.0)])
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(15, 2))
    Y = np.column_stack([X[:, 0], (1 + X[:, 1]) * (1 - np.sqrt(X[:, 0] / (1 + X[:, 1])))])
    pipeline = ProposalPipeline.from_settings(n_candidates=500, multi_objective=method)
    proposals = pipeline.propose(
        space,
        X,
        Y,
        surrogate=make_surrogate("bwo", n_estimators=30),
        rng=np.random.default_rng(3),
        n_points=3,
        seed=0,
    )
    points = np.array([p.point for p in proposals])
    assert len({tuple(p) for p in points}) == 3
    # The second objective is lowest at b = 0: proposals head there.
    assert np.mean(points[:, 1]) < np.mean(X[:, 1])


def test_constraints_need_a_log_scale_acquisition():
    space = Space([Real(0.0, 1.0)])
    X = np.array([[0.1], [0.5], [0.9]])
    pipeline = ProposalPipeline.from_settings(acquisition="lcb")
    with pytest.raises(ValueError, match="constraints need the acquisition 'ei' or 'pi'"):
        pipeline.propose(
            space,
            X,
            X[:, 0],
            surrogate=make_surrogate("rf"),
            rng=np.random.default_rng(0),
            constraints=X - 0.5,
        )
    with pytest.raises(ValueError, match=r"constraints must have shape \(3, n_constraints\)"):
        ProposalPipeline.from_settings().propose(
            space,
            X,
            X[:, 0],
            surrogate=make_surrogate("rf"),
            rng=np.random.default_rng(0),
            constraints=np.zeros(3),
        )
