"""The six multimodal functions of the wider continuous suite (treebo/problems/multimodal.py)."""

import math

import mpmath
import numpy as np
import pytest
from scipy.optimize import minimize

from treebo.cli import main
from treebo.problems import (
    available_problems,
    get_problem,
    problem_family,
    problem_groups,
    problem_suites,
    problem_summary,
    select_problems,
)

NEW = ["hartmann3", "shekel", "levy_6", "rastrigin_4", "schwefel_4", "styblinski_tang_5"]
PAPER = ["ackley_4", "bohachevsky", "branin", "hartmann6", "michalewicz_2", "rosenbrock_4"]

# name -> (dimension, low, high)
DOMAINS = {
    "hartmann3": (3, 0.0, 1.0),
    "shekel": (4, 0.0, 10.0),
    "levy_6": (6, -10.0, 10.0),
    "rastrigin_4": (4, -5.12, 5.12),
    "schwefel_4": (4, -500.0, 500.0),
    "styblinski_tang_5": (5, -5.0, 5.0),
}

# name -> (published minimizer, published optimum, tolerance the published digits allow).
# Hartmann3 and Shekel: Hedar's Global Optimization Test Problems (Dixon & Szego constants);
# the minimizers are printed to 6 and 5 decimals, which moves f by ~1e-12 and ~3e-9.
# Schwefel: the published "f* = 0" holds to the 4 decimals of its constant 418.9829 (per
# coordinate); the exact minimum with that constant is 4 * 1.2727566e-5.
PUBLISHED = {
    "hartmann3": ([0.114614, 0.555649, 0.852547], -3.86278214782076, 1e-11),
    "shekel": ([4.00075, 4.00059, 3.99966, 3.99951], -10.536409816692, 1e-8),
    "levy_6": ([1.0] * 6, 0.0, 1e-30),
    "rastrigin_4": ([0.0] * 4, 0.0, 0.0),
    "schwefel_4": ([420.968746] * 4, 0.0, 4 * 0.5e-4),
    "styblinski_tang_5": ([-2.903534027771177] * 5, -39.16616570377142 * 5, 1e-12),
}


@pytest.mark.parametrize("name", NEW)
def test_domain_and_value_at_the_published_minimizer(name):
    problem = get_problem(name)
    dim, low, high = DOMAINS[name]
    assert problem.name == name and problem.space.n_dims == dim
    assert all(d.low == low and d.high == high for d in problem.space.dimensions)
    x_pub, f_pub, tol = PUBLISHED[name]
    assert problem(x_pub) == pytest.approx(f_pub, abs=tol, rel=0)
    assert problem.optimal_value == pytest.approx(f_pub, abs=tol, rel=0)
    (x_star,) = problem.optimizers
    assert x_star == pytest.approx(x_pub, abs=5e-5)
    # At the stored (refined) minimizer the function is the stored optimum to rounding.
    assert problem(x_star) == pytest.approx(problem.optimal_value, abs=1e-13, rel=0)
    assert problem.regret(problem(x_star)) >= -1e-13


def test_schwefel_optimum_is_the_small_positive_gap_of_the_constant():
    schwefel = get_problem("schwefel_4")
    # 418.9829 - max_x x sin(sqrt(x)), in 40 digits, written with mpmath's own root finder.
    with mpmath.workdps(40):
        s = mpmath.findroot(lambda t: mpmath.sin(t) + t / 2 * mpmath.cos(t), 20.5)
        gap = mpmath.mpf("418.9829") - s**2 * mpmath.sin(s)
        assert float(s**2) == pytest.approx(420.968746359982, abs=1e-9)
        assert float(4 * gap) == pytest.approx(schwefel.optimal_value, rel=1e-12)
    assert 5.09e-5 < schwefel.optimal_value < 5.10e-5


def test_styblinski_tang_minimizer_is_the_root_of_the_derivative():
    root = min(np.roots([4.0, 0.0, -32.0, 5.0]).real)
    assert root == pytest.approx(-2.903534027771177, abs=1e-14)
    assert get_problem("styblinski_tang_5").optimal_value == pytest.approx(
        2.5 * (root**4 - 16 * root**2 + 5 * root), rel=1e-14
    )


@pytest.mark.parametrize("name", NEW)
def test_no_random_point_is_below_the_optimum(name):
    problem = get_problem(name)
    dim, low, high = DOMAINS[name]
    X = np.random.default_rng(20240914).uniform(low, high, size=(200_000, dim))
    values = problem.values(X)
    assert values.shape == (200_000,)
    assert values.min() > problem.optimal_value
    for row in (0, 1, 199_999):  # the batch formula is the one-point objective
        assert values[row] == problem(list(X[row]))


# -- independent values ---------------------------------------------------------------------
# Written with mpmath, term by term, with the constants typed again in another layout.


def _mp_hartmann3(x):
    c = [1, "1.2", 3, "3.2"]
    a_columns = [[3, "0.1", 3, "0.1"], [10, 10, 10, 10], [30, 35, 30, 35]]
    p_columns = [
        ["0.3689", "0.4699", "0.1091", "0.03815"],
        ["0.117", "0.4387", "0.8732", "0.5743"],
        ["0.2673", "0.747", "0.5547", "0.8828"],
    ]
    total = mpmath.mpf(0)
    for i in range(4):
        exponent = mpmath.mpf(0)
        for j in range(3):
            exponent += (
                mpmath.mpf(a_columns[j][i]) * (mpmath.mpf(x[j]) - mpmath.mpf(p_columns[j][i])) ** 2
            )
        total -= mpmath.mpf(c[i]) * mpmath.exp(-exponent)
    return total


def _mp_shekel(x):
    # Shekel's C matrix as 4 rows over the 10 foxholes (7th column: 5, 5, 3, 3).
    rows = [
        [4, 1, 8, 6, 3, 2, 5, 8, 6, 7],
        [4, 1, 8, 6, 7, 9, 5, 1, 2, "3.6"],
        [4, 1, 8, 6, 3, 2, 3, 8, 6, 7],
        [4, 1, 8, 6, 7, 9, 3, 1, 2, "3.6"],
    ]
    beta = [1, 2, 2, 4, 4, 6, 3, 7, 5, 5]
    total = mpmath.mpf(0)
    for i in range(10):
        s = mpmath.mpf(beta[i]) / 10
        for j in range(4):
            s += (mpmath.mpf(x[j]) - mpmath.mpf(rows[j][i])) ** 2
        total -= 1 / s
    return total


def _mp_levy(x):
    w = [(mpmath.mpf(v) + 3) / 4 for v in x]
    total = mpmath.sin(mpmath.pi * w[0]) ** 2
    for wi in w[:-1]:
        total += (wi - 1) ** 2 * (1 + 10 * mpmath.sin(mpmath.pi * wi + 1) ** 2)
    return total + (w[-1] - 1) ** 2 * (1 + mpmath.sin(2 * mpmath.pi * w[-1]) ** 2)


def _mp_rastrigin(x):
    return 10 * len(x) + mpmath.fsum(
        mpmath.mpf(v) ** 2 - 10 * mpmath.cos(2 * mpmath.pi * v) for v in x
    )


def _mp_schwefel(x):
    return mpmath.mpf("418.9829") * len(x) - mpmath.fsum(
        v * mpmath.sin(mpmath.sqrt(abs(mpmath.mpf(v)))) for v in x
    )


def _mp_styblinski_tang(x):
    return mpmath.fsum(
        mpmath.mpf(v) ** 4 / 2 - 8 * mpmath.mpf(v) ** 2 + mpmath.mpf(v) * 5 / 2 for v in x
    )


INDEPENDENT = [
    ("hartmann3", _mp_hartmann3, [[0.5, 0.5, 0.5], [0.1, 0.9, 0.3], [0.0, 0.0, 0.0]]),
    ("shekel", _mp_shekel, [[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 3.0, 3.0], [10.0, 0.0, 7.5, 2.5]]),
    ("levy_6", _mp_levy, [[0.0] * 6, [-3.0, 2.5, 7.0, -9.9, 0.1, 4.2], [10.0] * 6]),
    ("rastrigin_4", _mp_rastrigin, [[0.5] * 4, [1.0, -2.0, 0.0, 0.5], [-5.12, 3.3, 0.7, 4.9]]),
    ("schwefel_4", _mp_schwefel, [[0.0] * 4, [-420.97, 100.0, 250.5, -500.0], [500.0] * 4]),
    ("styblinski_tang_5", _mp_styblinski_tang, [[0.0] * 5, [1.0] * 5, [-5.0, -2.9, 0.3, 2.7, 5.0]]),
]


@pytest.mark.parametrize("name, reference, points", INDEPENDENT)
def test_values_agree_with_an_independent_computation(name, reference, points):
    problem = get_problem(name)
    with mpmath.workdps(30):
        for x in points:
            assert problem(x) == pytest.approx(float(reference(x)), rel=1e-12, abs=1e-12)


def test_values_by_hand():
    assert get_problem("rastrigin_4")([0.5] * 4) == pytest.approx(4 * (0.25 + 20.0), abs=1e-12)
    assert get_problem("rastrigin_4")([1.0, -2.0, 0.0, 0.5]) == pytest.approx(25.25, abs=1e-12)
    assert get_problem("styblinski_tang_5")([1.0] * 5) == pytest.approx(-25.0, abs=1e-12)
    assert get_problem("schwefel_4")([0.0] * 4) == pytest.approx(4 * 418.9829, abs=1e-12)
    # Levy at 0: w = 3/4, sin^2(3 pi / 4) = 1/2, the last term (1/16)(1 + sin^2(3 pi / 2)) = 1/8.
    middle = 5 * (1 / 16) * (1 + 10 * math.sin(0.75 * math.pi + 1) ** 2)
    assert get_problem("levy_6")([0.0] * 6) == pytest.approx(0.5 + middle + 0.125, abs=1e-12)
    # Shekel at the first foxhole's centre: 1 / c_1 = 10 plus the other nine terms.
    shekel = get_problem("shekel")
    others = [
        (9 * 4, 0.2),
        (16 * 4, 0.2),
        (4 * 4, 0.4),
        (1 + 9 + 1 + 9, 0.4),
        (4 + 25 + 4 + 25, 0.6),
        (1 + 1 + 1 + 1, 0.3),
        (16 + 9 + 16 + 9, 0.7),
        (4 + 4 + 4 + 4, 0.5),
        (9 + 0.16 + 9 + 0.16, 0.5),
    ]
    expected = -(10.0 + sum(1 / (d2 + c) for d2, c in others))
    assert shekel([4.0] * 4) == pytest.approx(expected, abs=1e-12)


# -- local minimization ---------------------------------------------------------------------
STARTS = {  # offsets from the minimizer, inside the global minimum's basin
    "hartmann3": 0.02,
    "shekel": 0.1,
    "levy_6": 0.05,
    "rastrigin_4": 0.1,
    "schwefel_4": 3.0,
    "styblinski_tang_5": 0.2,
}


@pytest.mark.parametrize("name", NEW)
def test_local_minimization_finds_nothing_lower(name):
    problem = get_problem(name)
    _, low, high = DOMAINS[name]
    x_star = np.array(problem.optimizers[0])
    rng = np.random.default_rng(7)
    for _ in range(3):
        x0 = np.clip(x_star + rng.uniform(-1, 1, size=x_star.size) * STARTS[name], low, high)
        result = minimize(
            problem.evaluate,
            x0,
            method="L-BFGS-B",
            bounds=[(low, high)] * x_star.size,
            options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 500},
        )
        assert result.fun >= problem.optimal_value - 1e-9
        assert result.fun <= problem.optimal_value + 1e-6  # it did reach the global well
        assert result.x == pytest.approx(x_star, abs=1e-2 * (high - low))


# -- registry and selection -----------------------------------------------------------------
def test_registered_as_continuous_and_not_in_the_paper():
    names = available_problems()
    assert names[:12] == PAPER + NEW
    for name in NEW:
        assert problem_family(name) == "continuous"
        assert problem_summary(name).split(",")[1].strip().endswith("-D")


def test_problem_groups_unchanged():
    assert problem_groups() == {
        "continuous": PAPER,
        "binary": ["ising", "contamination"],
        "mixed": ["automl_breast_cancer", "automl_digits", "automl_wine"],
    }


def test_continuous_all_is_the_twelve_continuous_functions():
    suites = problem_suites()
    assert list(suites) == ["continuous", "binary", "mixed", "continuous_all", "model_selection"]
    extra = ("continuous_all", "model_selection")
    assert {k: v for k, v in suites.items() if k not in extra} == problem_groups()
    assert suites["continuous_all"] == PAPER + NEW
    assert select_problems(["continuous_all"]) == PAPER + NEW
    assert select_problems(["branin", "continuous_all", "binary"]) == ["branin"] + [
        n for n in PAPER + NEW if n != "branin"
    ] + ["ising", "contamination"]


def test_treebo_list_shows_the_new_problems(capsys, monkeypatch):
    import treebo.surrogates

    # Surrogates are covered by tests/test_cli.py; importing them all is slow.
    monkeypatch.setattr(treebo.surrogates, "available_surrogates", lambda: [])
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in NEW:
        assert f"  {name} " in out
