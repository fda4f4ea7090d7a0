"""COCO's bbob problems in the benchmark harness: grids, records, the precision floor, CLI."""

import math

import pytest

from treebo.bench import (
    load_results,
    parse_int_ranges,
    plan_grid,
    regret_curves,
    run_one,
    summary_table,
)
from treebo.bench.spec import RunSpec
from treebo.cli import main

from .helpers import FAST, fake_record


def test_parse_int_ranges_names_the_option():
    assert parse_int_ranges(["1-3", "8,10", "2"], "--functions") == [1, 2, 3, 8, 10]
    with pytest.raises(ValueError, match="--instances takes integers and ranges like 0-4"):
        parse_int_ranges(["1-x"], "--instances")
    with pytest.raises(ValueError, match="--dims must give non-negative integers"):
        parse_int_ranges([], "--dims")


def test_plan_grid_gives_each_dimension_its_budget():
    specs = plan_grid(["bbob_f01_d2_i1", "bbob_f01_d5_i1", "branin"], ["rf"], 1)
    assert [s.n_calls for s in specs] == [40, 100, 100]


def test_the_records_floor_clips_log10_precision_at_minus_8():
    # Two runs below the floor, one above: the median is the floor's log10, not -11.
    records = [
        dict(fake_record("bbob_f01_d2_i1", "rf", seed, [1.0] * 5 + [final]), regret_floor=1e-8)
        for seed, final in ((0, 1e-11), (1, 1e-12), (2, 1e-3))
    ]
    assert summary_table(records)["bbob_f01_d2_i1"]["median"]["rf"] == pytest.approx(-8.0)
    (curves,) = regret_curves(records)
    assert curves.curves[:, -1].tolist() == [1e-8, 1e-8, 1e-3]
    # Without the field (every other problem), the floor stays 1e-12.
    plain = [fake_record("branin", "rf", seed, [1.0] * 5 + [1e-11]) for seed in range(3)]
    assert summary_table(plain)["branin"]["median"]["rf"] == pytest.approx(-11.0)


def test_run_one_on_bbob_records_f_opt_and_the_floor():
    pytest.importorskip("cocoex", reason="bbob needs cocoex: pip install 'treebo[bbob]'")
    from treebo.problems import get_problem

    record = run_one(RunSpec("bbob_f08_d3_i2", "rf", 0, 8, overrides=FAST))
    problem = get_problem("bbob_f08_d3_i2")
    assert record["optimal_value"] == problem.optimal_value
    assert record["regret_floor"] == 1e-8
    assert record["instance_params"] == {"function": 8, "dim": 3, "instance": 2}
    # A bbob record keeps the values, not the points (Problem.record_points).
    assert record["x"] is None and len(record["values"]) == 8
    assert all(value >= problem.optimal_value for value in record["values"])
    assert record["regret"][-1] == min(record["values"]) - problem.optimal_value


def test_bench_command_selects_bbob_problems_and_resumes(tmp_path, capsys):
    pytest.importorskip("cocoex", reason="bbob needs cocoex: pip install 'treebo[bbob]'")
    out = tmp_path / "bbob"
    argv = [
        "bench",
        "--problems",
        "bbob",
        "--functions",
        "1,21",
        "--dims",
        "2",
        "--instances",
        "2",
        "--surrogates",
        "rf",
        "--seeds",
        "0",
        "--n-calls",
        "7",
        "--n-candidates",
        "256",
        "--n-jobs",
        "1",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == ["bbob_f01_d2_i2.jsonl", "bbob_f21_d2_i2.jsonl"]
    records = load_results(out)
    assert [r["n_evaluated"] for r in records] == [7, 7]
    assert all(math.isfinite(r["regret"][-1]) and r["regret"][-1] >= 0 for r in records)
    assert main(argv[:-1]) == 0  # resumed: nothing left to run
    assert "2 of 2 runs already in" in capsys.readouterr().err
    assert len(load_results(out)) == 2


def test_bench_command_refuses_a_selection_without_bbob(tmp_path, capsys):
    assert main(["bench", "--problems", "branin", "--dims", "2", "--out", str(tmp_path)]) == 2
    assert "needs the word 'bbob'" in capsys.readouterr().err
    assert main(["bench", "--problems", "bbob", "--functions", "0", "--out", str(tmp_path)]) == 2
    assert "bbob function must be an integer 1 to 24, got 0" in capsys.readouterr().err
    assert main(["bench", "--problems", "bbob", "--instances", "a", "--out", str(tmp_path)]) == 2
    assert "--instances takes integers" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
