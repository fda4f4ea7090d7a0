import pytest

from treebo.multifidelity import hyperband_brackets, rung_budgets


def test_brackets_follow_hyperbands_table_for_r81_eta3():
    # Li et al. (2018), Table 1: R = 81, eta = 3.
    brackets = hyperband_brackets(1, 81, 3)
    assert [b.s for b in brackets] == [4, 3, 2, 1, 0]
    assert [b.sizes for b in brackets] == [
        (81, 27, 9, 3, 1),
        (34, 11, 3, 1),
        (15, 5, 1),
        (8, 2),
        (5,),
    ]
    assert [b.budgets for b in brackets] == [
        (1, 3, 9, 27, 81),
        (3, 9, 27, 81),
        (9, 27, 81),
        (27, 81),
        (81,),
    ]
    assert brackets[0].cost == 5 * 81


def test_every_bracket_ends_at_max_budget():
    for args in [(0.1, 1.0, 3), (1, 100, 2), (10, 100, 3), (1, 1, 3), (2, 7, 3)]:
        for bracket in hyperband_brackets(*args):
            assert bracket.budgets[-1] == args[1]
            assert len(bracket.budgets) == len(bracket.sizes) == bracket.s + 1
            assert list(bracket.sizes) == sorted(bracket.sizes, reverse=True)


@pytest.mark.parametrize(
    "min_budget, max_budget, eta, integer, expected",
    [
        (10, 100, 3, True, [11, 33, 100]),
        (1, 27, 3, True, [1, 3, 9, 27]),
        (1 / 9, 1.0, 3, False, [1 / 9, 1 / 3, 1.0]),
        (1, 4, 2, False, [1.0, 2.0, 4.0]),
        (5, 5, 3, True, [5]),
        # rounding would give 1, 1, 2, 3, 5: repeated budgets are merged
        (1, 5, 1.5, True, [1, 2, 3, 5]),
    ],
)
def test_rung_budgets(min_budget, max_budget, eta, integer, expected):
    assert rung_budgets(min_budget, max_budget, eta, integer) == pytest.approx(expected)


def test_a_single_budget_gives_one_bracket_of_one_rung():
    (bracket,) = hyperband_brackets(3, 3, 3)
    assert bracket.budgets == (3.0,) and bracket.sizes == (1,)
