"""Every ```python block of the docs pages runs as a script, as written.

Blocks identical to a README block are run by ``tests/test_readme.py`` and
skipped here. A block whose first line starts with ``# slow`` runs only with
``pytest -m slow`` (see ``readme_examples``). Some blocks also have their
results checked; the figures in the checks were measured at the blocks'
seeds. The slow tests at the end run the example scripts and build the docs.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from readme_examples import (
    DOCS,
    README,
    ROOT,
    doc_pages,
    find_block,
    python_blocks,
    run_and_check,
)

README_CODE = {b.code for b in python_blocks(README)}
BLOCKS = [b for page in doc_pages() for b in python_blocks(page) if b.code not in README_CODE]


def _binary(ns, workdir, out):
    weights = ns["weights"]
    optimum = float(sum(min(0.0, w + 0.5) for w in weights))
    assert ns["res"].fun - optimum < 1e-9  # 2^12 points, scored exhaustively


def _mixed_sklearn(ns, workdir, out):
    assert set(ns["res"].x) == {"model", "n_estimators", "max_depth", "max_features"}
    assert ns["res"].fun < 0.04  # measured at seed 0: 3-fold CV error 0.026 after 30 calls


def _mondrian(ns, workdir, out):
    # The page quotes these standard deviations: a data point, a gap, outside, far.
    np.testing.assert_allclose(ns["p"].std, [0.16, 0.49, 0.69, 0.71], atol=0.006)


def _sglb(ns, workdir, out):
    p = ns["p"]
    assert p.aleatoric[0] < 0.05 < 0.3 < p.aleatoric[1]  # noise grows with x2


def _storage(ns, workdir, out):
    from treebo import minimize
    from treebo.storage import read_study

    res = ns["res"]
    trials = read_study(workdir / "study.db")["trials"]
    assert len(res.x_iters) == 20 and [t["status"] for t in trials] == ["complete"] * 20
    # The second call loaded the first 10 evaluations instead of repeating them:
    # they are those of a 10-call run without storage, and the file holds 20.
    alone = minimize(ns["objective"], ns["space"], n_calls=10, random_state=0)
    assert res.x_iters[:10] == alone.x_iters


def _read_study(ns, workdir, out):
    statuses = [t["status"] for t in ns["study"]["trials"]]
    assert statuses == ["complete"] * 3 + ["pending"]


def _batch(ns, workdir, out):
    batch, trials = ns["batch"], ns["opt"].trials
    assert len(batch) == 4 and len(trials) == 8
    told = [t.x for t in trials if t.status == "complete"]
    points = {tuple(x) for x in told + batch}
    assert len(told) == 4 and len(points) == 8  # 4 new points, none told before


def _parallel(ns, workdir, out):
    res = ns["res"]
    assert len(res.x_iters) == 16 and res.n_failed == 0
    assert len({tuple(x) for x in res.x_iters}) == 16  # no point evaluated twice


def _stopping(ns, workdir, out):
    res = ns["res"]
    assert len(res.x_iters) < 100 and res.message.startswith("stopped by a callback")


def _search_cv(ns, workdir, out):
    search = ns["search"]
    assert len(search.cv_results_["params"]) == 12
    assert search.best_score_ > 0.97  # measured at seed 0: 0.983 on the wine data


def _cli(ns, workdir, out):
    assert ns["status"] == 0 and (workdir / "results" / "branin.jsonl").exists()
    assert "| branin | log10 regret |" in out


def _reliability(ns, workdir, out):
    assert "different search space" in out and "open in another optimizer" in out


def _model_families(ns, workdir, out):
    params = ns["search"].cv_results_["params"]
    assert {type(p["clf"]).__name__ for p in params} == {"SVC", "KNeighborsClassifier"}
    assert all(("clf__degree" in p) == (p.get("clf__kernel") == "poly") for p in params)
    assert ns["search"].best_score_ > 0.98  # measured at seed 0: 0.989 (SVC, rbf)


def _bwo_explained(ns, workdir, out):
    assert "M = 20: 0.988" in out


def _results(ns, workdir, out):
    importance = ns["importance"].to_dict()
    # Measured at seed 0: learning_rate 0.75, optimizer 0.10, dropout 0.09, layers 0.07
    # (dropout, which the loss ignores, at most 0.09 over seeds 0-3).
    assert list(importance)[0] == "learning_rate" and importance["learning_rate"] > 0.5
    assert importance["dropout"] < 0.15
    curve = ns["curve"]
    best_lr = curve.values[int(np.argmin(curve.average))]
    assert abs(np.log10(best_lr) + 2.5) < 0.4  # the loss is lowest at 10^-2.5
    assert (workdir / "objective.png").stat().st_size > 10_000
    assert len(ns["frame"]) == 30 and "True True" in out
    report = (workdir / "report.html").read_text()
    assert report.count('<img src="data:image/png;base64,') == 4


def _two_objectives(ns, workdir, out):
    from treebo.pareto import non_dominated

    res = ns["res"]
    front = res.pareto_front
    assert len(front) >= 3 and non_dominated(front).all()  # measured at seed 0: 6 points
    assert np.all(np.diff(front[:, 0]) >= 0) and res.fun == front[0, 0]
    assert all(m["depth"] == x["max_depth"] for m, x in zip(res.metrics, res.x_iters))


def _pressure_vessel(ns, workdir, out):
    res = ns["res"]
    # Measured at seed 0: cost 6040, 33 of 40 evaluations feasible (the continuous
    # problem's optimum is about 5885).
    assert res.fun < 6300 and res.n_feasible >= 25
    assert all(m["volume"] >= 1296000 for m, f in zip(res.metrics, res.feasible) if f)


#: A marker found in exactly one docs block -> the check of that block's results.
CHECKS = {
    "[Binary() for _ in range(12)]": _binary,
    "load_breast_cancer": _mixed_sklearn,
    'mode="exact", random_state=0': _mondrian,
    'make_surrogate("vsglb"': _sglb,
    'storage="study.db"': _storage,
    'read_study("ask-tell.db")': _read_study,
    'strategy="cl_min"': _batch,
    "n_calls=16, n_jobs=2": _parallel,
    "LocalCluster(n_workers=2": _parallel,
    "ThresholdStopper(1e-4)": _stopping,
    "TreeBOSearchCV(pipe,\n": _search_cv,
    "TreeBOSearchCV(pipe, families": _model_families,
    'main(["minimize"': _cli,
    "StorageLockedError as error": _reliability,
    "of the points in each tree's sample": _bwo_explained,
    'write_report("tuning.db", "report.html")': _results,
    'objectives={"error": "minimize", "trees": "minimize"}': _two_objectives,
    '"volume >= 1296000"': _pressure_vessel,
}


def test_docs_have_the_checked_blocks():
    assert len(BLOCKS) >= 15
    for marker in CHECKS:
        find_block(BLOCKS, marker)


@pytest.mark.parametrize("block", [b.param() for b in BLOCKS])
def test_docs_block_runs(block, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    run_and_check(block, tmp_path, CHECKS, capsys)


EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_script_runs(script, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        check=True,
        timeout=600,
        capture_output=True,
    )


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("myst_parser")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(DOCS),
            str(tmp_path / "html"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stderr[-5000:]
    assert Path(tmp_path / "html" / "benchmarks" / "regret.html").exists()
