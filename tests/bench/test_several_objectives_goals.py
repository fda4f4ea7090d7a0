"""The goals script of several objectives and constraints judges records as documented."""

import pytest

from tests.benchmark_scripts import load_script

goals = load_script("several_objectives_goals.py")


def _zdt1(method, seed, point):
    # One evaluation; its hypervolume against (1.1, 1.1) is (1.1 - a)(1.1 - b).
    return {
        "problem": "zdt1",
        "method": method,
        "seed": seed,
        "objectives": [point],
        "violations": [[]],
    }


def _branin_disk(method, seed, value, violation):
    return {
        "problem": "branin_disk",
        "method": method,
        "seed": seed,
        "objectives": [[value]],
        "violations": [[violation]],
    }


def _verdicts(records):
    return goals.judge(goals.measures(records))


def test_hypervolume_goals_compare_medians_over_common_seeds():
    points = {
        "treebo": [0.2, 0.2],
        "tpe": [0.5, 0.5],
        "nsga2": [0.6, 0.6],
        "random": [0.7, 0.7],
        "gp": [0.15, 0.15],
    }
    records = [_zdt1(m, s, p) for s in (0, 1) for m, p in points.items()]
    verdicts = _verdicts(records)
    best = verdicts["best of TPE, NSGA-II and random on at least 4 of every 5 problems"]
    assert best[0] == "1 of 1 -> met"
    within = verdicts[
        "within 5% of Optuna's GP sampler on at least half of the problems with several objectives"
    ]
    # 0.81 against 0.9025: 0.898 of it.
    assert within[0] == "0 of 1 -> NOT MET" and "0.898" in within[1]
    # Only the problems without records are left out.
    assert not any(line.startswith("zdt1") for line in verdicts["left out or incomplete"])
    assert (
        "zdt2: no records of ['treebo', 'tpe', 'nsga2', 'random']"
        in verdicts["left out or incomplete"]
    )


def test_a_seed_missing_for_one_method_is_reported_and_left_out():
    points = {"treebo": [0.2, 0.2], "tpe": [0.5, 0.5], "nsga2": [0.6, 0.6], "random": [0.1, 0.1]}
    records = [_zdt1(m, 0, p) for m, p in points.items()] + [_zdt1("treebo", 1, [0.9, 0.9])]
    verdicts = _verdicts(records)
    assert verdicts["never behind random search"] == ["behind on ['zdt1'] -> NOT MET"]
    assert "zdt1: seeds [1] not recorded for every method" in verdicts["left out or incomplete"]


def test_constrained_goals_count_infeasible_seeds_as_lost():
    optimum = 0.397887
    records = []
    for seed in (0, 1):
        records.append(_branin_disk("tpe", seed, optimum + 0.1, -1.0))
        records.append(_branin_disk("nsga2", seed, optimum + 0.1, -1.0))
        records.append(_branin_disk("random", seed, optimum + 0.2, -1.0))
    records.append(_branin_disk("treebo", 0, optimum + 1e-3, -1.0))
    records.append(_branin_disk("treebo", 1, optimum, 2.0))  # infeasible
    verdicts = _verdicts(records)
    feasible = verdicts["a feasible point on every seed where any peer found one"]
    assert feasible[0] == (
        "branin_disk: treebo feasible on 1/2 seeds; infeasible where a peer was feasible: seeds [1]"
    )
    assert feasible[-1] == "NOT MET"
    # The median of -3 and an infeasible seed (the worst) is worse than -1.
    best = verdicts[
        "best feasible value the best of the peers on two thirds of the constrained problems"
    ]
    assert best[0] == "0 of 1 -> NOT MET"


@pytest.mark.parametrize("several", [True, False])
def test_better_is_higher_hypervolume_or_lower_gap(several):
    assert goals._better(2.0, 1.0, several) is several
