"""The problem registry."""

import pytest

from treebo.problems import (
    Problem,
    available_problems,
    get_problem,
    problem_family,
    problem_groups,
    problem_summary,
)


def test_every_registered_name_builds_a_problem():
    names = available_problems()
    assert names[:6] == [
        "ackley_4",
        "bohachevsky",
        "branin",
        "hartmann6",
        "michalewicz_2",
        "rosenbrock_4",
    ]
    assert {
        "ising",
        "contamination",
        "automl",
        "automl_breast_cancer",
        "automl_digits",
        "automl_wine",
    } <= set(names)
    for name in names:
        if name in ("automl", "automl_digits"):
            continue  # same class as automl_breast_cancer; digits is the slowest to load
        problem = get_problem(name)
        assert isinstance(problem, Problem)
        assert problem.name == (name if name != "automl" else "automl_breast_cancer")
        assert problem_family(name) in ("continuous", "binary", "mixed")
        assert problem_summary(name)


def test_families():
    assert problem_family("branin") == "continuous"
    assert problem_family("contamination") == "binary"
    assert problem_family("automl_wine") == "mixed"


def test_groups_are_the_papers_problems_by_family():
    groups = problem_groups()
    assert groups == {
        "continuous": [
            "ackley_4",
            "bohachevsky",
            "branin",
            "hartmann6",
            "michalewicz_2",
            "rosenbrock_4",
        ],
        "binary": ["ising", "contamination"],
        "mixed": ["automl_breast_cancer", "automl_digits", "automl_wine"],
    }
    assert all(problem_family(n) == family for family, names in groups.items() for n in names)


def test_unknown_names_and_parameters_list_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown problem 'brannin'.*'branin'"):
        get_problem("brannin")
    with pytest.raises(ValueError, match=r"unknown problem.*'ising'"):
        problem_family("nope")
    with pytest.raises(ValueError, match=r"does not take parameter\(s\) \['lambda'\].*'lam'"):
        get_problem("ising", **{"lambda": 0.1})
    with pytest.raises(ValueError, match="it takes none"):
        get_problem("branin", dim=3)
    with pytest.raises(ValueError, match=r"\['dataset'\]"):
        get_problem("automl_wine", dataset="digits")
    assert get_problem("automl", dataset="wine").name == "automl_wine"
    assert get_problem("contamination", instance=466, lam=0.0).optimal_value == 21.14
