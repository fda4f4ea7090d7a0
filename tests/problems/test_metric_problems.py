"""The problems with several metrics: their published fronts and the computed constrained optima."""

import math

import numpy as np
import pytest

from treebo.metrics import Metrics
from treebo.problems.metric_problems import METRIC_PROBLEMS, get_metric_problem


@pytest.mark.parametrize("variant", [1, 2, 3])
def test_zdt_points_with_g_one_are_on_the_published_front(variant):
    problem = get_metric_problem(f"zdt{variant}")
    for f1 in (0.0, 0.25, 0.81):
        values = problem([f1, 0, 0, 0, 0, 0])
        h = {
            1: 1 - math.sqrt(f1),
            2: 1 - f1**2,
            3: 1 - math.sqrt(f1) - f1 * math.sin(10 * math.pi * f1),
        }
        assert values == pytest.approx({"f1": f1, "f2": h[variant]})
    assert problem([0.5] * 6)["f2"] > 1  # g > 1 off the front


def test_dtlz2_front_is_the_unit_sphere():
    problem = get_metric_problem("dtlz2")
    rng = np.random.default_rng(0)
    for a, b in rng.uniform(size=(5, 2)):
        on_front = problem([a, b, 0.5, 0.5, 0.5, 0.5])
        assert sum(v**2 for v in on_front.values()) == pytest.approx(1.0)
        assert sum(v**2 for v in problem([a, b, 0.9, 0.5, 0.5, 0.5]).values()) > 1.0


@pytest.mark.parametrize(
    "name, point",
    [
        # Where SLSQP from 2,048 Sobol starts found the constrained optimum
        # (python benchmarks/several_objectives.py --optima).
        ("welded_beam", [0.20573, 3.470489, 9.036624, 0.20573]),
        ("pressure_vessel", [0.778169, 0.384649, 40.319619, 200.0]),
        ("branin_disk", [math.pi, 2.275]),
    ],
)
def test_the_constrained_optimum_is_feasible_and_has_the_recorded_value(name, point):
    problem = get_metric_problem(name)
    values = problem(point)
    violations = Metrics(problem.objectives, problem.constraints).violations([values])[0]
    assert np.all(violations <= 1e-3 * np.maximum(1.0, np.abs(violations)))
    objective = next(iter(problem.objectives))
    assert values[objective] == pytest.approx(problem.optimal_value, rel=1e-5)


def test_every_problem_returns_its_metrics_and_names_what_is_unknown():
    for name in METRIC_PROBLEMS:
        problem = get_metric_problem(name)
        point = problem.space.sample(1, random_state=0)[0]
        values = problem(point)
        needed = set(problem.objectives) | {c.split()[0] for c in (problem.constraints or [])}
        assert needed <= set(values) and all(math.isfinite(v) for v in values.values())
    with pytest.raises(ValueError, match="unknown problem 'zdt9'; the problems are"):
        get_metric_problem("zdt9")
