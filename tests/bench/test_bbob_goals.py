"""benchmarks/bbob_goals.py: the bbob goals' verdicts on small hand-made record sets."""

import json

import numpy as np
import pytest
from benchmark_scripts import load_script

from treebo.problems.bbob import bbob_name

from .helpers import fake_record

goals = load_script("bbob_goals.py")
PEERS = goals.BEST_OF + (goals.GP,)


def run(function, dim, instance, method, final_log10, n_evaluations=None, seed=0):
    """A record whose best precision falls from 10 to 10**final_log10 at its last evaluation."""
    n = n_evaluations or 20 * dim
    regret = [10.0] * (n - 1) + [10.0**final_log10]
    record = fake_record(
        bbob_name(function, dim, instance), method, seed, regret, optimal_value=-3.0
    )
    record["regret_floor"] = 1e-8
    return json.loads(json.dumps(record))


def grid(finals, dim=2, instances=(1, 2, 3)):
    """Records of ``{function: {method: log10 precision}}``, the same on every instance."""
    return [
        run(f, dim, i, m, v) for f, row in finals.items() for m, v in row.items() for i in instances
    ]


def test_medians_are_over_instances_and_clipped_at_minus_8():
    records = [
        run(1, 2, 1, "bwo", -1.0),
        run(1, 2, 2, "bwo", -12.0),
        run(1, 2, 3, "bwo", -2.0),
        run(1, 2, 4, "bwo", 5.0),
    ]  # instance 4: not counted
    row = goals.goal_table(records)[2][1]
    assert row["median"]["bwo"] == pytest.approx(-2.0)
    assert row["n_runs"]["bwo"] == 3 and row["complete"]["bwo"]
    precisions = goals.final_precisions(records)[(2, 1, "bwo")]
    assert precisions[(2, 0)] == pytest.approx(-8.0)  # clipped


def test_runs_shorter_than_the_budget_are_missing_and_longer_ones_are_cut():
    records = [
        run(1, 2, 1, "bwo", -1.0),
        run(1, 2, 2, "bwo", -1.0, n_evaluations=39),
        # 50 D evaluations, reaching 1e-6 only after the 20 D budget: cut, still 10.
        run(1, 2, 3, "bwo", -6.0, n_evaluations=100),
    ]
    row = goals.goal_table(records)[2][1]
    assert row["n_runs"]["bwo"] == 2 and not row["complete"]["bwo"]
    assert goals.final_precisions(records)[(2, 1, "bwo")][(3, 0)] == pytest.approx(1.0)
    long = goals.goal_table(records, budget_per_dim=50)[2][1]
    assert long["median"]["bwo"] == pytest.approx(-6.0) and long["n_runs"]["bwo"] == 1


def test_verdicts_judge_only_complete_rows():
    others = {m: -1.0 for m in goals.BEST_OF}
    finals = {
        1: {"bwo": -8.0, **{m: -9.0 for m in PEERS}},  # all clipped to -8: a tie, met
        2: {"bwo": -0.5, **others, goals.GP: -1.5},  # TPE ahead; GP exactly 1 decade
        3: {"bwo": -2.0, **others, goals.GP: -3.1},  # best; more than 1 decade off GP
        4: {"bwo": -2.0, **others, goals.GP: -2.0},
        5: {"bwo": -2.0, **{m: v for m, v in others.items() if m != "skopt_et"}},
        6: {"bwo": -2.0, **{m: v for m, v in others.items() if m != "skopt_et"}},
    }
    finals[2]["optuna_tpe"] = -3.0
    finals[6]["random"] = -2.5  # a finished peer already ahead decides it
    records = grid(finals)
    records = [
        r
        for r in records  # function 4: bwo misses instance 3
        if not (r["problem"] == bbob_name(4, 2, 3) and r["surrogate"] == "bwo")
    ]
    verdict = goals.verdicts(goals.goal_table(records), functions=[1, 2, 3, 4, 5, 6])[2]
    best, gp = verdict["best"], verdict["gp"]
    assert (best["met"], best["failed"], best["open"]) == ([1, 3], [2, 6], [4, 5])
    assert (gp["met"], gp["failed"], gp["open"]) == ([1, 2], [3], [4, 5, 6])
    assert best["needed"] == 4 and gp["needed"] == 3
    # best: 2 met + 2 open may still reach 4; gp: 2 met + 3 open may still reach 3.
    assert best["status"] == "not decided yet" and gp["status"] == "not decided yet"


def test_goal_status_met_and_not_met():
    assert goals._status(met=16, open_=0, needed=16) == "met"
    assert goals._status(met=15, open_=0, needed=16) == "not met"
    assert goals._status(met=10, open_=5, needed=16) == "not met"
    assert goals._status(met=10, open_=6, needed=16) == "not decided yet"
    both = {m: -1.0 for m in PEERS}
    records = grid({f: {"bwo": -2.0, **both} for f in (1, 2)} | {3: {"bwo": 0.0, **both}})
    verdict = goals.verdicts(goals.goal_table(records), functions=[1, 2, 3])[2]
    assert verdict["best"]["status"] == "met"  # 2 of 3, the two thirds asked for
    assert verdict["gp"]["status"] == "met"


def test_sphere_goal_needs_every_run_at_1e_minus_3_after_200_evaluations():
    def sphere(finals, n_evaluations=200):
        return [run(1, 10, i, "bwo", v, n_evaluations) for i, v in enumerate(finals, start=1)]

    assert goals.sphere_verdict(sphere([-4.0, -3.0, -5.0]))["status"] == "met"
    failed = goals.sphere_verdict(sphere([-4.0, -2.9, -5.0]))
    assert failed["status"] == "not met" and failed["precision"]["i2 s0"] == pytest.approx(-2.9)
    partial = goals.sphere_verdict(sphere([-4.0, -5.0]))
    assert partial["status"] == "not decided yet" and partial["missing"] == ["i3 s0"]
    # A miss decides it even with runs missing; a run longer than 200 is judged at 200.
    assert goals.sphere_verdict(sphere([-2.0]))["status"] == "not met"
    late = sphere([-4.0, -4.0, -6.0], n_evaluations=500)  # 1e-6 only at evaluation 500
    assert goals.sphere_verdict(late)["status"] == "not met"


def test_main_prints_tables_and_writes_json_and_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    results = tmp_path / "bbob"
    results.mkdir()
    records = grid({1: {"bwo": -3.0, "random": -1.0}, 2: {"bwo": 1.0, "random": 2.0}})
    for record in records:
        with open(results / f"{record['problem']}.jsonl", "a") as handle:
            handle.write(json.dumps(record) + "\n")
    out = tmp_path / "goals.json"
    assert (
        goals.main(
            [
                "--results",
                str(results),
                "--out",
                str(out),
                "--figure",
                str(tmp_path / "heat.png"),
                "--ecdf",
                str(tmp_path / "ecdf.png"),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "| f01 sphere | **-3.00** | -1.00 |" in text
    saved = json.loads(out.read_text())
    assert saved["table"]["2"]["1"]["median"] == {"bwo": -3.0, "random": -1.0}
    assert (tmp_path / "heat.png").stat().st_size > 0 and (tmp_path / "ecdf.png").exists()
    assert goals.main(["--results", str(tmp_path / "none")]) == 1


def test_ecdf_counts_targets_reached_by_each_evaluation():
    # 2-D, 40 evaluations: precision 10 until the last one, then 1e-3.
    records = grid({1: {"bwo": -3.0}})
    curve, n_runs = goals.ecdf(records, 2, targets=np.array([100.0, 10.0, 1.0, 1e-3, 1e-4]))["bwo"]
    assert n_runs == 3 and curve.shape == (40,)
    assert curve[:4].tolist() == [0.0] * 4  # before the initial design is complete
    assert curve[4] == pytest.approx(2 / 5) and curve[38] == pytest.approx(2 / 5)
    assert curve[39] == pytest.approx(4 / 5)


def test_columns_put_treebo_first_and_random_search_last():
    assert goals.method_order(
        {"random", "optuna_cmaes", "bwo", "optuna_tpe", "rf", "optuna_gp"}
    ) == ["rf", "bwo", "optuna_gp", "optuna_tpe", "optuna_cmaes", "random"]
    verdict = {
        2: {
            "best": {
                "met": [1, 2, 3, 8],
                "failed": [],
                "open": [4, 5, 6, 7, 9],
                "needed": 6,
                "status": "not decided yet",
            }
        }
    }
    text = goals.format_verdicts(verdict)
    assert "on 4 (f1-f3, f8), not on 0 (none), not judged yet on 5 (f4-f7, f9)" in text
