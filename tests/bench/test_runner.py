"""Running one configuration and grids: resume, executors, failures, progress."""

import concurrent.futures as cf

import pytest
from readme_examples import run_readme_block

from treebo.bench import (
    BenchError,
    RunSpec,
    completed_runs,
    load_results,
    plan_grid,
    run_grid,
    run_one,
)

from .helpers import FAST


def test_run_one_rejects_a_budget_without_bo_iterations():
    with pytest.raises(ValueError, match="n_calls"):
        run_one(RunSpec("branin", "rf", 0, 5))


def test_run_one_in_a_storage_resumes_and_records_every_evaluation(tmp_path):
    db = tmp_path / "study.db"
    first = run_one(RunSpec("branin", "rf", 1, 6, overrides=FAST), storage=db)
    assert first["n_evaluated"] == 6 and all(t is not None for t in first["eval_time"])
    # A larger budget makes only the missing evaluation; the record holds all of them.
    longer = run_one(RunSpec("branin", "rf", 1, 7, overrides=FAST), storage=db)
    assert longer["n_evaluated"] == 7 and longer["x"][:6] == first["x"]
    assert longer["values"][:6] == first["values"]
    for field in ("x", "values", "best_so_far", "regret", "fit_time", "acq_time", "eval_time"):
        assert len(longer[field]) == 7, field
    assert longer["eval_time"][:6] == [None] * 6 and longer["eval_time"][6] > 0
    assert longer["key"] == first["key"]


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
    first = run_grid(
        ["branin", "bohachevsky"],
        ["rf"],
        [0, 1],
        out,
        7,
        overrides=FAST,
        n_jobs=2,
        executor="thread",
        progress=False,
    )
    assert len(first) == 4
    assert sum(1 for _ in open(out / "branin.jsonl")) == 2
    # Adding a surrogate runs only its runs; asking for fewer calls runs nothing.
    second = run_grid(
        ["branin", "bohachevsky"],
        ["rf", "ert"],
        [0, 1],
        out,
        7,
        overrides=FAST,
        n_jobs=1,
        progress=False,
    )
    assert sorted((r["problem"], r["surrogate"], r["seed"]) for r in second) == [
        ("bohachevsky", "ert", 0),
        ("bohachevsky", "ert", 1),
        ("branin", "ert", 0),
        ("branin", "ert", 1),
    ]
    assert (
        run_grid(
            ["branin"], ["rf", "ert"], [0, 1], out, 6, overrides=FAST, n_jobs=1, progress=False
        )
        == []
    )
    # A longer budget is a new run; a half-written line (a killed writer) is ignored.
    with open(out / "branin.jsonl", "a") as handle:
        handle.write('{"key": "trunc')
    longer = run_grid(["branin"], ["rf"], [0], out, 8, overrides=FAST, n_jobs=1, progress=False)
    assert len(longer) == 1 and longer[0]["n_evaluated"] == 8
    records = load_results(out)
    assert len(records) == 9
    assert completed_runs(records)[RunSpec("branin", "rf", 0, 8, overrides=FAST).key()] == 8
    # The longer run is the prefix-extension of the shorter one (same seed, same history).
    short = [
        r
        for r in records
        if r["surrogate"] == "rf"
        and r["seed"] == 0
        and r["problem"] == "branin"
        and r["n_evaluated"] == 7
    ][0]
    assert longer[0]["x"][:7] == short["x"]


def test_grid_in_a_given_process_pool(tmp_path):
    with cf.ProcessPoolExecutor(1) as pool:
        records = run_grid(
            "branin", "rf", [0, 1], tmp_path, 6, overrides=FAST, executor=pool, progress=False
        )
        assert pool.submit(abs, -1).result() == 1  # a pool passed in is left open
    assert sorted(r["seed"] for r in records) == [0, 1]
    inline = run_one(RunSpec("branin", "rf", 1, 6, overrides=FAST))
    assert [r for r in records if r["seed"] == 1][0]["x"] == inline["x"]  # same numbers


@pytest.mark.slow
def test_grid_in_spawned_worker_processes(tmp_path):
    # The default executor: treebo's pool of worker processes (treebo.parallel.process_pool).
    records = run_grid(
        "branin", "rf", [0, 1], tmp_path, 6, overrides=FAST, n_jobs=2, progress=False
    )
    assert sorted(r["seed"] for r in records) == [0, 1]


def test_failed_runs_are_reported_after_the_others_are_written(tmp_path):
    with pytest.raises(BenchError, match="1 of 2 runs failed") as info:
        run_grid(
            ["branin", "ising"],
            ["rf"],
            [0],
            tmp_path,
            6,
            overrides=FAST,
            n_jobs=1,
            problem_params={"ising": {"lam": -1.0}},
            progress=False,
        )
    assert info.value.failures[0][0].problem == "ising"
    assert "lam" in info.value.failures[0][1]
    assert [r["problem"] for r in load_results(tmp_path)] == ["branin"]


def test_executor_argument_is_checked(tmp_path):
    with pytest.raises(ValueError, match="executor"):
        run_grid(
            "branin",
            "rf",
            [0, 1],
            tmp_path,
            6,
            overrides=FAST,
            n_jobs=2,
            executor="cluster",
            progress=False,
        )
    with pytest.raises(ValueError, match="executor"):  # neither a name nor an executor
        run_grid(
            "branin",
            "rf",
            [0, 1],
            tmp_path,
            6,
            overrides=FAST,
            n_jobs=2,
            executor=object(),
            progress=False,
        )
    assert not any(tmp_path.iterdir())  # refused before anything ran


@pytest.mark.slow
def test_readme_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = run_readme_block("run_grid(")
    assert namespace["ising"].regret(namespace["res"].fun) >= 0
    assert len(load_results(tmp_path / "results")) == 8


def test_the_grid_progress_bar_counts_evaluations(tmp_path, capsys):
    # Evaluations, not whole runs: a long run shows progress while it runs.
    run_grid("branin", "rf", [0, 1], tmp_path, 6, overrides=FAST, n_jobs=1)
    lines = capsys.readouterr().err.splitlines()
    counts = [line.split("] ")[1].split()[0] for line in lines if line.startswith("bench")]
    assert counts[-1] == "12/12"
    assert "1/12" in counts  # drawn after the first evaluation (the first line of a log)
