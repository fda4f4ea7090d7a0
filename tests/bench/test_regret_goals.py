"""benchmarks/regret_goals.py: the grid goals' verdicts on small hand-made record sets."""

from benchmark_scripts import load_script

from .helpers import fake_record

goals = load_script("regret_goals.py")


def runs(problem, method, final_log10, n_seeds=10, n_calls=100):
    """Records whose regret falls from 10 to 10**final_log10 at the 50th evaluation."""
    regret = [10.0] * 49 + [10.0**final_log10] * (n_calls - 49)
    return [fake_record(problem, method, seed, regret) for seed in range(n_seeds)]


def verdicts(finals, n_seeds=None):
    """Verdicts of ``{problem: {method: final log10 regret}}``, 10 seeds each."""
    n_seeds = n_seeds or {}
    records = [
        r
        for problem, row in finals.items()
        for method, value in row.items()
        for r in runs(problem, method, value, n_seeds.get((problem, method), 10))
    ]
    return goals.verdicts(goals.grid_table(records))


def names(entries):
    return [entry.split(" ")[0] for entry in entries]


def test_within_a_decade_of_the_best_gaussian_process_and_ahead_of_it():
    v = verdicts(
        {
            "a": {"bwo": -3.0, "gp": -3.5, "optuna_gp": -2.0, "skopt_gp": -1.0},  # behind by 0.5
            "b": {"bwo": -3.0, "gp": -4.5, "optuna_gp": -2.0, "skopt_gp": -1.0},  # behind by 1.5
            "c": {"bwo": -3.0, "gp": -2.9, "optuna_gp": -2.0, "skopt_gp": -1.0},  # ahead
        }
    )
    assert names(v["best gaussian process"]["met"]) == ["a", "c"]
    assert names(v["best gaussian process"]["failed"]) == ["b"]
    assert v["best gaussian process"]["failed"][0] == "b (bwo -3.00, gp -4.50)"
    assert names(v["ahead of the best gaussian process"]["met"]) == ["c"]
    assert names(v["ahead of the best gaussian process"]["failed"]) == ["a", "b"]


def test_an_unfinished_gaussian_process_leaves_the_goal_open_unless_a_finished_one_decides():
    finals = {
        "a": {"bwo": -3.0, "gp": -2.0, "optuna_gp": -2.5, "skopt_gp": -9.0},
        "b": {"bwo": -3.0, "gp": -5.0, "optuna_gp": -2.5, "skopt_gp": -1.0},
    }
    # skopt_gp has 4 seeds on both: on a its lower median may not stand; on b
    # the finished gp is already more than a decade ahead.
    v = verdicts(finals, n_seeds={("a", "skopt_gp"): 4, ("b", "skopt_gp"): 4})
    assert names(v["best gaussian process"]["open"]) == ["a"]
    assert names(v["best gaussian process"]["failed"]) == ["b"]
    assert names(v["ahead of the best gaussian process"]["open"]) == ["a"]
    assert names(v["ahead of the best gaussian process"]["failed"]) == ["b"]


def test_a_seed_stalls_when_it_gains_under_a_twentieth_of_a_decade_above_1e_2():
    flat = [1.0] * 100
    late = [1.0] * 60 + [0.5] * 40  # gains 0.3 decades after evaluation 50
    low = [1e-3] * 100  # flat, but below the 1e-2 floor
    records = [fake_record("p", "bwo", s, flat) for s in range(4)]
    records += [fake_record("p", "bwo", s, late) for s in range(4, 8)]
    records += [fake_record("p", "bwo", s, low) for s in range(8, 10)]
    table = goals.grid_table(records)
    assert table["p"]["stalled"] == 4
    assert names(goals.verdicts(table)["stalls"]["failed"]) == ["p"]


def test_a_finished_gaussian_process_decides_beside_an_unfinished_better_one():
    finals = {"a": {"bwo": -3.0, "gp": -5.0, "optuna_gp": -2.5, "skopt_gp": -9.0}}
    v = verdicts(finals, n_seeds={("a", "skopt_gp"): 4})
    assert names(v["best gaussian process"]["failed"]) == ["a"]
    assert names(v["ahead of the best gaussian process"]["failed"]) == ["a"]
