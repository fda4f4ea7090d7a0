"""benchmarks/multifidelity.py: the parallel speed-up's runs and summary."""

import math

from benchmark_scripts import load_script

from treebo.bench import load_results
from treebo.problems.multifidelity import get_multifidelity_problem

bench = load_script("multifidelity.py")


def _record(workers, seed, seconds, best, seconds_per_budget=None, total=12.0):
    record = {
        "problem": "speedup_mf_branin",
        "workers": workers,
        "seed": seed,
        "total_budget": total,
        "seconds": seconds,
        "best_full": best,
        "wall_time": seconds[-1],
        "fun": best[-1],
    }
    if seconds_per_budget is not None:
        record["seconds_per_budget"] = seconds_per_budget
    return record


def test_speedup_summary_groups_by_waiting_time_and_counts_unreached_targets():
    records = [
        # Without waiting (older records have no field).
        _record(1, 0, [1.0, 4.0], [3.0, 2.0]),
        _record(2, 0, [1.0, 2.0], [3.0, 1.5]),
        # Waiting 1 s per max_budget. The 1-worker runs' best values at 5 of their
        # 10 s are 3.0, inf and 5.0: the "1/2" target is 5.0; at 7.5 s the same.
        _record(1, 0, [5.0, 10.0], [3.0, 1.0], 1.0),
        _record(1, 1, [5.0, 10.0], [None, 2.0], 1.0),
        _record(1, 2, [5.0, 10.0], [5.0, 4.0], 1.0),
        _record(4, 0, [2.0, 3.0], [1.9, 1.0], 1.0),
        _record(4, 1, [2.0, 3.0], [6.0, 6.0], 1.0),
        _record(4, 2, [1.0, 4.0], [None, 2.0], 1.0),
        {**_record(4, 0, [1.0, 2.0], [9.0, 0.5], 1.0), "promotion": "synchronous"},
    ]
    summary = bench.speedup_summary(records)
    plain = summary["speedup_mf_branin total=12 seconds_per_budget=0"]
    assert plain["targets"]["1/4"] == 3.0  # the 1-worker run's best at 1 of its 4 s
    assert plain["2 asynchronous"]["median_seconds_to_1/4"] == 1.0
    waiting = summary["speedup_mf_branin total=12 seconds_per_budget=1"]
    assert waiting["targets"]["1/2"] == waiting["targets"]["3/4"] == 5.0
    one = waiting["1"]
    assert one["median_seconds_to_1/2"] == 5.0 and one["reached_1/2"] == 3  # 5, 10, 5
    asha = waiting["4 asynchronous"]
    assert asha["median_seconds_to_1/2"] == 4.0  # 2, never, 4
    assert asha["reached_1/2"] == 2 and asha["runs"] == 3
    assert asha["speedup_1/2"] == 1.25  # 5 s alone against 4 s
    assert waiting["4 synchronous"]["median_seconds_to_1/2"] == 2.0


def test_a_waiting_problem_returns_the_problems_value():
    problem = get_multifidelity_problem("mf_branin")
    x = [1.0, 2.0]
    assert bench._Waiting(problem, 0.0)(x, 9) == problem(x, 9)


def test_a_speedup_run_with_waiting_is_recorded_under_its_own_key_and_resumes(tmp_path):
    bench.run_speedup("mf_branin", [1], [0], 6.0, tmp_path, seconds_per_budget=0.01)
    (record,) = load_results(tmp_path)
    assert record["key"].endswith("|seconds_per_budget=0.01")
    assert record["seconds_per_budget"] == 0.01 and record["workers"] == 1
    # A full-budget evaluation was made, so at least its 0.01 s were waited.
    assert not math.isnan(record["fun"]) and record["wall_time"] >= 0.01
    bench.run_speedup("mf_branin", [1], [0], 6.0, tmp_path, seconds_per_budget=0.01)
    assert len(load_results(tmp_path)) == 1  # done: not run again


def test_continued_runs_are_charged_their_costs_and_skip_problems_that_cannot_continue(tmp_path):
    bench.run_grid(["mf_branin", "mf_svc_digits"], ["treebo_mf_continued"], [0], 4.0, tmp_path)
    (record,) = load_results(tmp_path)  # the SVC's budget is its data: not run
    assert record["problem"] == "mf_branin"
    budgets, spent = record["budgets"], record["spent"]
    assert spent[-1] <= 4.0 + 1e-12
    # Charged less than the budgets reached: the promotions continued.
    assert spent[-1] < sum(budgets) / 27
    assert record["settings"]["charged"].startswith("budget beyond")


def _grid_record(peer, seed, spent, best_full, problem="mf_branin"):
    return {
        "problem": problem,
        "peer": peer,
        "seed": seed,
        "total_budget": 3.0,
        "spent": spent,
        "best_full": best_full,
    }


def test_alternatives_are_compared_seed_by_seed_with_treebo_mf():
    records = [
        _grid_record("treebo_mf", 0, [1.0, 3.0], [None, 2.0]),
        _grid_record("treebo_mf", 1, [1.0, 3.0], [4.0, 3.0]),
        _grid_record("smac_mf", 0, [1.0, 3.0], [0.1, 0.1]),  # not treebo_mf: ignored
    ]
    alternatives = [
        _grid_record("other", 0, [1.0, 3.0], [1.0, 1.0]),
        _grid_record("other", 1, [1.0, 3.0], [5.0, 5.0]),
        _grid_record("other", 2, [1.0, 3.0], [0.0, 0.0]),  # no treebo_mf seed 2: left out
    ]
    table = bench.alternatives_markdown(records, alternatives).splitlines()
    assert table[0] == "| problem | `treebo_mf` | `other` |"
    # At one third (1.0 of 3.0 spent): treebo_mf has none and 4.0 (median: none), other
    # 1.0 and 5.0.
    assert table[2] == "| `mf_branin` | none / 2.5 | 3 / 3 (lower on 1, higher on 1 of 2) |"
