"""Benchmark grids: presets, records, resume, parallel runs, curves and tables."""

import concurrent.futures as cf
import json
import math

import numpy as np
import pytest
import qmcpy
from readme_examples import run_readme_block

from treebo.bench import (
    BenchError,
    RunSpec,
    completed_runs,
    default_n_calls,
    format_paired,
    format_summary,
    load_results,
    minimize_settings,
    paired_wins,
    paper_initial_design,
    plan_grid,
    regret_curves,
    run_grid,
    run_one,
    summary_table,
)
from treebo.problems import Ising, get_problem

# Small runs: few candidates, small forests.
FAST = {"n_candidates": 256, "surrogate_params": {"n_estimators": 10}}


def fake_record(problem, surrogate, seed, regret, optimal_value=0.0, times=None, preset="default"):
    """A record as run_one writes it, with the given best-so-far regret per evaluation."""
    n = len(regret)
    best = [r + optimal_value for r in regret] if optimal_value is not None else list(regret)
    times = times if times is not None else [0.0] * 5 + [0.1] * (n - 5)
    return {"key": json.dumps([problem, {}, surrogate, seed, preset, {}]), "problem": problem,
            "surrogate": surrogate, "seed": seed, "preset": preset, "n_calls": n,
            "n_evaluated": n, "n_initial": 5, "optimal_value": optimal_value,
            "best_so_far": best, "values": best,
            "regret": list(regret) if optimal_value is not None else None,
            "fit_time": times, "acq_time": [0.0] * n}


# -- presets ---------------------------------------------------------------------------------
def test_paper_initial_design_is_qmcpys_net_mapped_like_the_official_code():
    branin = get_problem("branin")
    design = paper_initial_design(branin.space, 0)
    net = qmcpy.DigitalNetB2(2, seed=42, order="GRAY").gen_samples(5, warn=False)
    expected = np.column_stack([-5 + 15 * net[:, 0], 15 * net[:, 1]])
    assert np.allclose(design, expected, rtol=0, atol=1e-12)
    assert paper_initial_design(branin.space, 0) == design  # reproducible
    assert paper_initial_design(branin.space, 1) != design  # seed 84 for repeat 1

    ising = get_problem("ising")
    raw = qmcpy.DigitalNetB2(24, seed=42 * 3, order="GRAY").gen_samples(5, warn=False)
    assert paper_initial_design(ising.space, 2) == (raw >= 0.5).astype(int).tolist()

    automl = get_problem("automl_wine")
    raw = qmcpy.DigitalNetB2(9, seed=42, order="GRAY").gen_samples(5, warn=False)
    points = paper_initial_design(automl.space, 0)
    for point, u in zip(points, raw):
        assert point["classifier"] == automl.space.dimensions[0].categories[np.argmax(u[:5])]
        assert point["n_estimators"] == int(10 + 190 * u[5])  # truncated, as in automl.py
        assert point["max_depth"] == int(2 + 6 * u[6])
        assert point["max_features"] == pytest.approx(0.2 + 0.8 * u[7])
        assert point["log10_learning_rate"] == pytest.approx(-3 + 4 * u[8])
    with pytest.raises(ValueError, match="repeat"):
        paper_initial_design(branin.space, -1)


def test_preset_settings():
    branin = get_problem("branin")
    paper = minimize_settings(RunSpec("branin", "bwo", 3, 20, preset="paper"), branin)
    assert paper["y_transform"] == "standardize" and paper["local_search"] is False
    assert paper["random_state"] == 42 * 4 and paper["n_candidates"] == 50_000
    assert paper["x0"] == paper_initial_design(branin.space, 3)
    default = minimize_settings(RunSpec("branin", "bwo", 3, 20), branin)
    assert default["random_state"] == 3 and "x0" not in default and "y_transform" not in default
    with pytest.raises(ValueError, match="not allowed"):
        minimize_settings(RunSpec("branin", "bwo", 0, 20, overrides={"n_calls": 3}), branin)
    with pytest.raises(ValueError, match="preset"):
        minimize_settings(RunSpec("branin", "bwo", 0, 20, preset="fast"), branin)
    assert default_n_calls("branin", "paper") == 505
    assert default_n_calls("ising", "paper") == 505
    assert default_n_calls("automl_digits", "paper") == 105
    assert default_n_calls("hartmann6") == 100


# -- one run ---------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["default", "paper"])
def test_surrogates_share_the_initial_design(preset):
    records = [run_one(RunSpec("branin", s, 1, 7, preset=preset, overrides=FAST))
               for s in ("rf", "bwo")]
    assert records[0]["x"][:5] == records[1]["x"][:5]
    if preset == "paper":
        assert records[0]["x"][:5] == paper_initial_design(get_problem("branin").space, 1)


def test_record_contents():
    record = run_one(RunSpec("branin", "bwo", 0, 8, overrides=FAST))
    json.dumps(record, allow_nan=False)  # strict JSON
    n = 8
    for field in ("x", "values", "best_so_far", "regret", "fit_time", "acq_time", "eval_time"):
        assert len(record[field]) == n, field
    branin = get_problem("branin")
    assert record["values"] == pytest.approx([branin(x) for x in record["x"]], rel=1e-12)
    assert record["best_so_far"] == list(np.minimum.accumulate(record["values"]))
    assert record["regret"] == pytest.approx([b - branin.optimal_value
                                              for b in record["best_so_far"]])
    assert record["fit_time"][:5] == [0.0] * 5 and all(t > 0 for t in record["fit_time"][5:])
    assert record["optimal_value"] == branin.optimal_value
    assert record["settings"]["random_state"] == 0 and record["settings"]["n_candidates"] == 256
    assert {"python", "treebo", "numpy", "sklearn", "qmcpy"} <= set(record["versions"])
    assert record["key"] == RunSpec("branin", "bwo", 0, 99, overrides=FAST).key()


def test_binary_runs_use_one_instance_per_seed():
    record = run_one(RunSpec("ising", "rf", 3, 6, overrides=FAST))
    assert record["instance_params"] == {"instance": 466, "lam": 0.01}
    assert record["optimal_value"] == Ising(466).optimal_value
    fixed = run_one(RunSpec("ising", "rf", 3, 6, problem_params={"instance": 7270}, overrides=FAST))
    assert fixed["instance_params"]["instance"] == 7270


def test_run_one_rejects_a_budget_without_bo_iterations():
    with pytest.raises(ValueError, match="n_calls"):
        run_one(RunSpec("branin", "rf", 0, 5))


# -- grids -----------------------------------------------------------------------------------
def test_plan_grid_validates_names():
    specs = plan_grid(["branin", "ising"], ["rf", "bwo"], [0, 1], 10)
    assert plan_grid(["branin", "ising"], ["rf", "bwo"], 2, 10) == specs  # an int n: 0..n-1
    with pytest.raises(ValueError, match="seeds must be an integer >= 1"):
        plan_grid(["branin"], ["rf"], 0)
    assert len(specs) == 8 and {s.n_calls for s in specs} == {10}
    with pytest.raises(ValueError, match=r"unknown problem 'brannin'.*'branin'"):
        plan_grid(["brannin"], ["rf"], [0])
    with pytest.raises(ValueError, match=r"unknown surrogate 'xgb'.*'bwo'"):
        plan_grid(["branin"], ["xgb"], [0])
    with pytest.raises(ValueError, match="seeds"):
        plan_grid(["branin"], ["rf"], [-1])
    with pytest.raises(ValueError, match="n_calls"):
        plan_grid(["branin"], ["rf"], [0], 3)


def test_grid_resumes_and_adds_only_missing_runs(tmp_path):
    out = tmp_path / "results"
    first = run_grid(["branin", "bohachevsky"], ["rf"], [0, 1], out, 7, overrides=FAST,
                     n_jobs=2, executor="thread", progress=False)
    assert len(first) == 4
    assert sum(1 for _ in open(out / "branin.jsonl")) == 2
    # Adding a surrogate runs only its runs; asking for fewer calls runs nothing.
    second = run_grid(["branin", "bohachevsky"], ["rf", "ert"], [0, 1], out, 7, overrides=FAST,
                      n_jobs=1, progress=False)
    assert sorted((r["problem"], r["surrogate"], r["seed"]) for r in second) == [
        ("bohachevsky", "ert", 0), ("bohachevsky", "ert", 1), ("branin", "ert", 0),
        ("branin", "ert", 1)]
    assert run_grid(["branin"], ["rf", "ert"], [0, 1], out, 6, overrides=FAST, n_jobs=1,
                    progress=False) == []
    # A longer budget is a new run; a half-written line (a killed writer) is ignored.
    with open(out / "branin.jsonl", "a") as handle:
        handle.write('{"key": "trunc')
    longer = run_grid(["branin"], ["rf"], [0], out, 8, overrides=FAST, n_jobs=1,
                      progress=False)
    assert len(longer) == 1 and longer[0]["n_evaluated"] == 8
    records = load_results(out)
    assert len(records) == 9
    assert completed_runs(records)[RunSpec("branin", "rf", 0, 8, overrides=FAST).key()] == 8
    # The longer run is the prefix-extension of the shorter one (same seed, same history).
    short = [r for r in records if r["surrogate"] == "rf" and r["seed"] == 0
             and r["problem"] == "branin" and r["n_evaluated"] == 7][0]
    assert longer[0]["x"][:7] == short["x"]


_WRITER = """
import sys
from pathlib import Path
from treebo.bench import append_record
out, writer, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    append_record(out, {"problem": "p", "writer": writer, "i": i, "pad": str(writer) * 100_000})
"""


def test_concurrentappend_records_never_interleave(tmp_path):
    # Two processes (treebo bench and benchmarks/peers.py, say) append long records to one
    # file at once: every line must be one whole record. A buffered write of a 100 kB line
    # goes out in several write() calls, which interleave.
    import subprocess
    import sys

    (tmp_path / "p.jsonl").write_text('{"key": "trunc')  # a killed writer's half line
    n = 60
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(w), str(n)])
             for w in (1, 2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert lines[0] == '{"key": "trunc'
    records = [json.loads(line) for line in lines[1:] if line]
    assert sorted((r["writer"], r["i"]) for r in records) == [(w, i) for w in (1, 2)
                                                               for i in range(n)]
    assert all(r["pad"] == str(r["writer"]) * 100_000 for r in records)
    assert len(load_results(tmp_path)) == 2 * n


def test_grid_in_a_given_process_pool(tmp_path):
    with cf.ProcessPoolExecutor(1) as pool:
        records = run_grid("branin", "rf", [0, 1], tmp_path, 6, overrides=FAST,
                           executor=pool, progress=False)
        assert pool.submit(abs, -1).result() == 1  # a pool passed in is left open
    assert sorted(r["seed"] for r in records) == [0, 1]
    inline = run_one(RunSpec("branin", "rf", 1, 6, overrides=FAST))
    assert [r for r in records if r["seed"] == 1][0]["x"] == inline["x"]  # same numbers


@pytest.mark.slow
def test_grid_in_spawned_worker_processes(tmp_path):
    # The default executor: a pool of freshly spawned interpreters.
    records = run_grid("branin", "rf", [0, 1], tmp_path, 6, overrides=FAST, n_jobs=2,
                       progress=False)
    assert sorted(r["seed"] for r in records) == [0, 1]


def test_failed_runs_are_reported_after_the_others_are_written(tmp_path):
    with pytest.raises(BenchError, match="1 of 2 runs failed") as info:
        run_grid(["branin", "ising"], ["rf"], [0], tmp_path, 6, overrides=FAST, n_jobs=1,
                 problem_params={"ising": {"lam": -1.0}}, progress=False)
    assert info.value.failures[0][0].problem == "ising"
    assert "lam" in info.value.failures[0][1]
    assert [r["problem"] for r in load_results(tmp_path)] == ["branin"]


def test_executor_argument_is_checked(tmp_path):
    with pytest.raises(ValueError, match="executor"):
        run_grid("branin", "rf", [0, 1], tmp_path, 6, overrides=FAST, n_jobs=2,
                 executor="cluster", progress=False)
    with pytest.raises(ValueError, match="does not exist"):
        load_results(tmp_path / "missing")


# -- curves and tables -----------------------------------------------------------------------
def test_curves_follow_the_papers_layout():
    regret = [9.0, 8.0, 3.0, 3.0, 2.0, 1.0, 0.0, 0.0]  # 5 initial points, 3 iterations
    records = [fake_record("branin", "bwo", 0, regret, optimal_value=0.4),
               fake_record("branin", "bwo", 1, [r * 10 for r in regret], optimal_value=0.4)]
    (curves,) = regret_curves(records)
    assert curves.kind == "regret" and curves.seeds == [0, 1]
    # Column 0 is the best regret over the initial design, then one column per iteration; a
    # zero regret is floored at 1e-12.
    assert curves.curves[0].tolist() == [2.0, 1.0, 1e-12, 1e-12]
    assert curves.curves[1].tolist() == [20.0, 10.0, 1e-12, 1e-12]
    assert curves.iteration_time.shape == (2, 3)
    assert regret_curves(records, n_calls=6)[0].curves.shape == (2, 2)


def test_curves_refuse_to_pool_other_experiments_or_too_short_runs():
    one = fake_record("ising", "bwo", 0, [1.0] * 7)
    other = dict(fake_record("ising", "bwo", 0, [2.0] * 7),
                 key=json.dumps(["ising", {"lam": 1e-4}, "bwo", 0, "default", {}]))
    with pytest.raises(ValueError, match="several runs of ising with bwo .* for one seed"):
        regret_curves([one, other])
    with pytest.raises(ValueError, match="n_calls must be at least the 5 initial points"):
        regret_curves([one], n_calls=4)


def test_summary_table_and_markdown():
    records = []
    finals = {"bwo": [1e-3, 1e-4, 1e-5], "rf": [1e-1, 1e-2, 1e-1]}
    for surrogate, values in finals.items():
        for seed, final in enumerate(values):
            records.append(fake_record("hartmann6", surrogate, seed, [5.0] * 5 + [1.0, final]))
    records.append(fake_record("automl_wine", "bwo", 0, [0.2] * 5 + [0.05, 0.03],
                               optimal_value=None))
    table = summary_table(records)
    assert table["hartmann6"]["median"] == {"bwo": pytest.approx(-4.0), "rf": pytest.approx(-1.0)}
    assert table["hartmann6"]["best"] == ["bwo"] and table["hartmann6"]["n_seeds"]["rf"] == 3
    assert table["automl_wine"]["kind"] == "value"
    assert table["automl_wine"]["median"]["bwo"] == pytest.approx(0.03)
    text = format_summary(table)
    # Columns in registry order (rf before bwo), the best in bold.
    assert "| hartmann6 | log10 regret | 3 x 7 | -1.00 | **-4.00** |" in text
    assert "| automl_wine | best value | 1 x 7 | – | **0.0300** |" in text


def test_rows_name_the_preset_when_presets_are_mixed():
    records = [fake_record("branin", "rf", 0, [1.0] * 5 + [0.1]),
               fake_record("branin", "rf", 0, [1.0] * 5 + [0.01], preset="paper"),
               fake_record("branin", "bwo", 0, [1.0] * 5 + [0.05], preset="paper")]
    table = summary_table(records)
    assert sorted(table) == ["branin (default)", "branin (paper)"]
    assert table["branin (paper)"]["median"] == {"rf": pytest.approx(-2.0),
                                                 "bwo": pytest.approx(math.log10(0.05))}
    assert paired_wins(records, "bwo") == {"branin (paper)": {"rf": (0, 0, 1)}}


def test_ties_are_all_marked_best():
    records = [fake_record("branin", s, 0, [1.0] * 5 + [0.0]) for s in ("rf", "ert")]
    assert sorted(summary_table(records)["branin"]["best"]) == ["ert", "rf"]
    assert math.isclose(summary_table(records)["branin"]["median"]["rf"], -12.0)


def test_paired_wins_compare_seed_by_seed():
    finals = {"bwo": [1e-3, 1e-1, 0.0, 1e-2], "rf": [1e-2, 1e-2, 0.0],
              "ert": [1e-1, 1e-1, 1e-1, 1e-1]}
    records = [fake_record("branin", surrogate, seed, [5.0] * 5 + [final])
               for surrogate, values in finals.items() for seed, final in enumerate(values)]
    records.append(fake_record("hartmann6", "rf", 0, [5.0] * 6))  # no bwo run: left out
    table = paired_wins(records, "bwo")
    # rf has no seed 3; seed 2 is a tie at the regret floor, seed 1 a tie with ert.
    assert table == {"branin": {"rf": (1, 1, 3), "ert": (3, 1, 4)}}
    assert paired_wins(records, "rf")["branin"]["bwo"] == (1, 1, 3)
    # Cut before the last evaluation every run is still at 5.0: all ties.
    assert paired_wins(records, "bwo", n_calls=5)["branin"]["ert"] == (0, 4, 4)
    text = format_paired(table, "bwo")
    assert text.splitlines()[0] == "| problem | bwo < rf | bwo < ert |"
    assert "| branin | 1+1/3 | 3+1/4 |" in text
    with pytest.raises(ValueError, match=r"no runs of 'gp'; recorded: \['rf', 'ert', 'bwo'\]"):
        paired_wins(records, "gp")


@pytest.mark.slow
def test_readme_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = run_readme_block("run_grid(")
    assert namespace["ising"].regret(namespace["res"].fun) >= 0
    assert len(load_results(tmp_path / "results")) == 8


def test_the_grid_progress_bar_counts_evaluations(tmp_path, capsys):
    # Issue 17: the bar counted whole runs, so a long run showed no progress.
    run_grid("branin", "rf", [0, 1], tmp_path, 6, overrides=FAST, n_jobs=1)
    lines = capsys.readouterr().err.splitlines()
    counts = [line.split("] ")[1].split()[0] for line in lines if line.startswith("bench")]
    assert counts[-1] == "12/12"
    assert "1/12" in counts  # drawn after the first evaluation (the first line of a log)
