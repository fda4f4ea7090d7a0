"""COCO's bbob problems: names, selections, budgets, and values against cocoex's own."""

import sys

import numpy as np
import pytest

from treebo.bench import default_n_calls, default_n_initial
from treebo.problems import (
    available_problems,
    get_problem,
    problem_family,
    problem_summary,
    select_problems,
)
from treebo.problems.bbob import (
    BBOB,
    BBOB_FUNCTIONS,
    bbob_budget,
    bbob_name,
    bbob_problem_names,
    parse_bbob_name,
)

# -- names: no cocoex needed ---------------------------------------------------------------


@pytest.mark.parametrize(
    "triple, name",
    [
        ((1, 10, 1), "bbob_f01_d10_i1"),
        ((24, 2, 15), "bbob_f24_d2_i15"),
        ((8, 40, 3), "bbob_f08_d40_i3"),
    ],
)
def test_names_round_trip(triple, name):
    assert bbob_name(*triple) == name
    assert parse_bbob_name(name) == triple


@pytest.mark.parametrize(
    "name, message",
    [
        ("bbob_f1_d10_i1", "use 'bbob_f01_d10_i1'"),  # not zero-padded
        ("bbob_f01_d010_i01", "use 'bbob_f01_d10_i1'"),  # padded where it must not be
        ("bbob_f25_d10_i1", "function must be an integer 1 to 24, got 25"),
        ("bbob_f00_d10_i1", "function must be an integer 1 to 24, got 0"),
        ("bbob_f01_d1_i1", "dim must be an integer at least 2, got 1"),
        ("bbob_f01_d2_i0", "instance must be an integer at least 1, got 0"),
        ("bbob_f01_d2", "expected bbob_f<function 01-24>_d<dimension>_i<instance>"),
        ("bbob_f01_d2_i1_x", "expected bbob_f"),
    ],
)
def test_bad_names_say_what_is_expected(name, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_bbob_name(name)
    with pytest.raises(ValueError, match="bbob"):
        get_problem(name)  # before cocoex is needed


def test_bbob_name_checks_its_arguments():
    with pytest.raises(ValueError, match="instance must be an integer at least 1, got 1.0"):
        bbob_name(1, 2, 1.0)
    with pytest.raises(ValueError, match="function"):
        bbob_name(True, 2, 1)


def test_registry_knows_bbob_names_without_listing_them():
    assert not any(n.startswith("bbob") for n in available_problems())
    assert problem_family("bbob_f15_d5_i2") == "continuous"
    assert problem_summary("bbob_f15_d5_i2") == (
        "COCO bbob f15 rotated Rastrigin, 5-D, instance 2, [-5, 5]^5"
    )
    assert len(BBOB_FUNCTIONS) == 24


def test_budget_is_20_evaluations_per_dimension_with_5_initial_points():
    for dim in (2, 5, 10, 20):
        name = bbob_name(3, dim, 1)
        assert (
            bbob_budget(name) == default_n_calls(name) == default_n_calls(name, "paper") == 20 * dim
        )
        assert default_n_initial(name) == 5
    assert bbob_budget("bbob_f01_d10_i1", per_dim=50) == 500
    assert default_n_calls("branin") == 100  # other problems keep theirs


def test_protocol_selection_and_its_order():
    names = bbob_problem_names()
    assert len(names) == len(set(names)) == 24 * 3 * 3
    assert names[:4] == ["bbob_f01_d2_i1", "bbob_f01_d2_i2", "bbob_f01_d2_i3", "bbob_f02_d2_i1"]
    assert names[-1] == "bbob_f24_d10_i3"
    assert bbob_problem_names([8, 1], [5], [2]) == ["bbob_f08_d5_i2", "bbob_f01_d5_i2"]
    with pytest.raises(ValueError, match="bbob dims must not be empty"):
        bbob_problem_names(dims=[])
    with pytest.raises(ValueError, match="bbob function must be an integer 1 to 24, got 30"):
        bbob_problem_names(functions=[30])


def test_select_problems_expands_bbob_with_the_selection():
    assert select_problems(["bbob"]) == bbob_problem_names()
    assert select_problems(
        ["branin", "bbob", "bbob_f01_d2_i1"], functions=[1], dims=[2, 3], instances=[1]
    ) == ["branin", "bbob_f01_d2_i1", "bbob_f01_d3_i1"]
    assert select_problems(["bbob_f02_d7_i4"]) == ["bbob_f02_d7_i4"]
    with pytest.raises(
        ValueError,
        match=r"a bbob selection \(dims, instances\) needs the word "
        "'bbob'",
    ):
        select_problems(["branin"], dims=[2], instances=[1])
    with pytest.raises(ValueError, match="use 'bbob_f02_d7_i4'"):
        select_problems(["bbob_f2_d7_i4"])


def test_bbob_problems_take_no_parameters():
    with pytest.raises(ValueError, match="does not take parameter"):
        get_problem("bbob_f01_d2_i1", instance=2)


def test_without_cocoex_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cocoex", None)  # import cocoex raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'treebo\[bbob\]'"):
        get_problem("bbob_f01_d2_i1")


# -- values: against cocoex's suite --------------------------------------------------------
TRIPLES = [(1, 2, 1), (8, 5, 2), (15, 10, 3), (21, 3, 1), (24, 10, 2), (7, 2, 3)]


@pytest.mark.parametrize("function, dim, instance", TRIPLES)
def test_values_and_optimum_match_cocoex_suite(function, dim, instance):
    cocoex = pytest.importorskip("cocoex", reason="bbob needs cocoex: pip install 'treebo[bbob]'")
    suite = cocoex.Suite(
        "bbob", f"instances: {instance}", f"dimensions: {dim} function_indices: {function}"
    )
    reference = next(iter(suite))  # a list would free each problem as it moves on
    assert len(suite) == 1
    assert reference.id == f"bbob_f{function:03d}_i{instance:02d}_d{dim:02d}"
    problem = get_problem(bbob_name(function, dim, instance))
    assert isinstance(problem, BBOB)
    assert problem.params == {"function": function, "dim": dim, "instance": instance}
    assert all((d.low, d.high) == (-5.0, 5.0) for d in problem.space.dimensions)
    np.testing.assert_array_equal(reference.lower_bounds, [-5.0] * dim)
    np.testing.assert_array_equal(reference.upper_bounds, [5.0] * dim)
    rng = np.random.default_rng(function * 100 + dim * 10 + instance)
    points = np.vstack(
        [rng.uniform(-5.0, 5.0, (5, dim)), np.zeros(dim), np.full(dim, 5.0), np.full(dim, -5.0)]
    )
    ours = np.array([problem(list(p)) for p in points])
    theirs = np.array([reference(p) for p in points])
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(problem.values(points), theirs)
    # f_opt is the value at x_opt, which lies in the box; every point is at least f_opt.
    x_opt = problem.optimizers[0]
    assert np.all(np.abs(x_opt) <= 5.0)
    assert reference(np.array(x_opt)) == problem.optimal_value
    assert np.all(theirs >= problem.optimal_value)
    assert problem.regret(problem(x_opt)) == 0.0
    assert problem.regret_floor == 1e-8


def test_infeasible_points_are_refused():
    pytest.importorskip("cocoex", reason="bbob needs cocoex: pip install 'treebo[bbob]'")
    problem = get_problem("bbob_f01_d2_i1")
    with pytest.raises(ValueError):
        problem([5.5, 0.0])
    with pytest.raises(ValueError):
        problem([0.0, 0.0, 0.0])
