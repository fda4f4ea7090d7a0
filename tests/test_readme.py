"""The README's Python examples run as written."""

import pytest
from readme_examples import run_readme_block as _run


def test_continuous_example():
    ns = _run("def branin")
    assert ns["res"].fun - 0.397887 < 1e-2


def test_binary_example():
    ns = _run("Binary() for _ in range(20)")
    weights = ns["weights"]
    optimum = float(sum(min(0.0, w + 0.5) for w in weights))
    # Measured at seed 0: the optimum is found (regret 1e-15) within 60 calls
    # of a 2^20-point space.
    assert ns["res"].fun - optimum < 1e-9


def test_ask_tell_example():
    def train_and_validate(learning_rate, width):
        return (learning_rate - 0.01) ** 2 + (width - 100) ** 2 / 1e4

    ns = _run("opt.ask()", {"train_and_validate": train_and_validate})
    assert len(ns["result"].x_iters) == 30


@pytest.mark.slow
def test_mixed_example():
    ns = _run("load_breast_cancer")
    assert set(ns["res"].x) == {"model", "n_estimators", "max_depth", "max_features"}
    # Measured at seed 0: 3-fold CV error 0.026 after 30 calls.
    assert ns["res"].fun < 0.04


def test_storage_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example writes study.db in the working directory
    ns = _run('storage="study.db"')
    assert len(ns["res"].x_iters) == 20 and (tmp_path / "study.db").exists()


def test_batch_and_parallel_example():
    ns = _run('strategy="cl_min"')
    assert len(ns["batch"]) == 4 and len(ns["opt"].trials) == 8
    assert len(ns["res"].x_iters) == 16 and ns["res"].n_failed == 0


@pytest.mark.slow
def test_dask_example():
    ns = _run("LocalCluster(n_workers=2")
    assert len(ns["res"].x_iters) == 16 and ns["res"].n_failed == 0


def test_stopping_example():
    ns = _run("ThresholdStopper(1e-4)")
    res = ns["res"]
    assert len(res.x_iters) < 100 and res.message.startswith("stopped by a callback")


def test_search_cv_example():
    ns = _run("TreeBOSearchCV(pipe")
    search = ns["search"]
    assert len(search.cv_results_["params"]) == 12
    # Measured at seed 0: best 3-fold accuracy 0.983 on the wine data.
    assert search.best_score_ > 0.97
