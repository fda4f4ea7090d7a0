"""benchmarks/optuna_sampler.py: the treebo sampler vs Optuna's TPE and GP samplers."""

import json

import pytest
from benchmark_scripts import load_script

pytest.importorskip("optuna", reason="the benchmark needs Optuna: pip install 'treebo[optuna]'")


bench = load_script("optuna_sampler.py")


def test_short_runs_record_resume_and_summarize(tmp_path, capsys):
    argv = [
        "--problems",
        "branin",
        "--seeds",
        "0",
        "--n-trials",
        "6",
        "--samplers",
        "tpe",
        "treebo",
        "--out",
        str(tmp_path),
    ]
    assert bench.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["branin/tpe/seed 0", "branin/treebo/seed 0"]
    records = [json.loads(line) for line in (tmp_path / "branin.jsonl").read_text().splitlines()]
    assert [r["sampler"] for r in records] == ["tpe", "treebo"]
    for r in records:
        assert r["problem"] == "branin" and r["seed"] == 0 and r["n_trials"] == 6
        for field in ("x", "values", "best_so_far", "log10_regret", "sample_time", "eval_time"):
            assert len(r[field]) == 6, field
        assert r["best_value"] == min(r["values"]) == r["best_so_far"][-1]
        assert r["log10_regret"][-1] == pytest.approx(
            bench.math.log10(r["best_value"] - r["optimal_value"])
        )
        assert r["wall_time"] > 0 and "optuna" in r["versions"] and "treebo" in r["versions"]
        assert r["settings"]["arguments"]["seed"] == 0
    assert bench.main(argv) == 0  # resumed: nothing left to run
    assert capsys.readouterr().out == ""
    assert bench.main([*argv, "--summary"]) == 0
    out = capsys.readouterr().out
    assert "| problem | tpe | treebo | treebo beats TPE |" in out
    assert "| branin |" in out and "Goal: the treebo sampler beats TPE on at least 1 of 1" in out


def _record(problem, sampler, seed, final):
    return {
        "problem": problem,
        "sampler": sampler,
        "seed": seed,
        "n_trials": 3,
        "log10_regret": [0.0, final, final],
    }


def test_verdict_uses_only_problems_with_every_seed_of_both():
    records = [_record("a", "treebo", s, -2.0) for s in (0, 1)]
    records += [_record("a", "tpe", s, -1.0) for s in (0, 1)]
    records += [_record("b", "treebo", s, -1.0) for s in (0, 1)]
    records += [_record("b", "tpe", s, -3.0) for s in (0, 1)]
    records += [_record("c", "treebo", 0, -5.0), _record("c", "tpe", 0, 0.0)]
    text = bench.summary(records, ["a", "b", "c"], ["treebo", "tpe"], [0, 1], 2)
    assert "| a | -2.00 | -1.00 | yes |" in text and "| b | -1.00 | -3.00 | no |" in text
    assert "| c | -5.00 (1/2) | 0.00 (1/2) | incomplete |" in text
    assert "It does on 1 of the 2 with every seed of both: undecided" in text
    records += [_record("c", "treebo", 1, -5.0), _record("c", "tpe", 1, 0.0)]
    assert bench.summary(records, ["a", "b", "c"], ["treebo", "tpe"], [0, 1], 2).endswith(
        "It does on 2 of the 3 with every seed of both: met."
    )
