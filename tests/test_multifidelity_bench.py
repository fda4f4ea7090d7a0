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
        # Without waiting (older records have no field): final target 2.0.
        _record(1, 0, [1.0, 4.0], [3.0, 2.0]),
        _record(2, 0, [1.0, 2.0], [3.0, 1.5]),
        # Waiting 1 s per max_budget: final target median(1.0, 2.0, 4.0) = 2.0; at half
        # of their 10 s the 1-worker runs had 3.0, inf and 5.0: target 5.0.
        _record(1, 0, [5.0, 10.0], [3.0, 1.0], 1.0),
        _record(1, 1, [5.0, 10.0], [None, 2.0], 1.0),
        _record(1, 2, [5.0, 10.0], [5.0, 4.0], 1.0),
        _record(4, 0, [2.0, 3.0], [1.9, 1.0], 1.0),
        _record(4, 1, [2.0, 3.0], [3.0, 2.5], 1.0),
        _record(4, 2, [1.0, 4.0], [None, 2.0], 1.0),
        {**_record(4, 0, [1.0, 2.0], [9.0, 0.5], 1.0), "promotion": "synchronous"},
    ]
    summary = bench.speedup_summary(records)
    plain = summary["speedup_mf_branin total=12 seconds_per_budget=0"]
    assert plain["targets"]["final"] == 2.0
    assert plain["2 asynchronous"]["median_seconds_to_final"] == 2.0
    waiting = summary["speedup_mf_branin total=12 seconds_per_budget=1"]
    assert waiting["targets"] == {"final": 2.0, "half": 5.0}
    assert waiting["1"]["median_seconds_to_final"] == 10.0  # 10, 10, never
    assert waiting["1"]["reached_final"] == 2
    asha = waiting["4 asynchronous"]
    assert asha["median_seconds_to_final"] == 4.0  # 2, never, 4
    assert asha["reached_final"] == 2 and asha["runs"] == 3
    assert asha["median_seconds_to_half"] == 2.0  # 2, 2, 4
    assert waiting["4 synchronous"]["median_seconds_to_final"] == 2.0


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
