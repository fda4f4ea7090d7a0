import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from treebo import Integer, Real, minimize_multifidelity
from treebo.failures import ObjectiveError, ObjectiveFailureWarning
from treebo.storage import read_study

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SPACE = [Real(-1.0, 1.0), Real(-1.0, 1.0)]


def _biased(x, budget):
    """A quadratic whose low budgets look better than they are (a bias that vanishes at 9)."""
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2 - (9 - budget) / 9


def _run(func=_biased, total=5, **kwargs):
    kwargs.setdefault("random_state", 0)
    return minimize_multifidelity(func, SPACE, 1, 9, total, 3, **kwargs)


@pytest.mark.parametrize("total", [0.5, 2, 4.6, 7])
def test_the_total_budget_is_never_exceeded(total):
    result = _run(total=total)
    assert sum(result.budgets) / 9 <= total + 1e-12
    assert result.spent == pytest.approx(sum(result.budgets) / 9)
    # It stops only when the next evaluation would not fit (every rung budget is >= 1).
    assert total * 9 - sum(result.budgets) < 9
    assert set(result.budgets) <= {1, 3, 9}
    assert all(isinstance(b, int) for b in result.budgets)


def test_x_and_fun_come_from_max_budget_evaluations_only():
    result = _run(total=6)
    values, budgets = np.asarray(result.func_vals), np.asarray(result.budgets)
    at_max = budgets == 9
    assert at_max.any() and values[~at_max].min() < values[at_max].min()  # lower, but biased
    assert result.fun == values[at_max].min()
    i = int(np.flatnonzero(at_max)[np.argmin(values[at_max])])
    assert result.x == result.x_iters[i]


def test_no_max_budget_evaluation_gives_no_x():
    result = _run(total=1)  # the first bracket alone needs 3 * max_budget
    assert 9 not in result.budgets and result.x is None and math.isnan(result.fun)


def test_the_first_bracket_promotes_the_best_third_of_each_rung():
    result = _run(total=3)  # exactly the first bracket: 9 at 1, 3 at 3, 1 at 9
    assert result.budgets == [1] * 9 + [3] * 3 + [9]
    values = np.asarray(result.func_vals)
    best_three = [result.x_iters[i] for i in np.argsort(values[:9])[:3]]
    assert result.x_iters[9:12] == best_three
    assert result.x_iters[12] == result.x_iters[9 + int(np.argmin(values[9:12]))]


def test_a_seed_reproduces_the_run():
    a, b = _run(total=6), _run(total=6)
    assert a.x_iters == b.x_iters and a.budgets == b.budgets
    np.testing.assert_array_equal(a.func_vals, b.func_vals)
    c = _run(total=6, random_state=1)
    assert c.x_iters != a.x_iters


def _mild_bias(x, budget):
    """Low budgets look worse, by an amount that depends a little on x (ranks mostly kept)."""
    bias = (9 - budget) / 9 * (1 + 0.1 * math.sin(5 * x[0]))
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2 + bias


def test_the_model_beats_random_configurations_on_a_seed_set():
    # The same schedule with the model (random_fraction=0.2) and without it (1.0).
    # Measured on seeds 0-5: medians 0.0089 and 0.047 (the model wins on 4 seeds).
    model = [_run(_mild_bias, total=8, random_state=s).fun for s in range(6)]
    random = [_run(_mild_bias, total=8, random_state=s, random_fraction=1.0).fun for s in range(6)]
    assert np.median(model) < np.median(random) / 2


def test_dict_spaces_and_float_budgets():
    seen = []

    def func(x, budget):
        seen.append(budget)
        return (x["a"] - 2) ** 2 + 1 / budget

    result = minimize_multifidelity(
        func, {"a": Integer(0, 5), "budget": Real(0, 1)}, 0.25, 1.0, 3, eta=2, random_state=0
    )
    assert set(seen) == {0.25, 0.5, 1.0}
    assert isinstance(result.x, dict) and set(result.x) == {"a", "budget"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"min_budget": 0}, "min_budget must be a positive finite number"),
        ({"max_budget": math.inf}, "max_budget must be a positive finite number"),
        ({"min_budget": True}, "min_budget must be a positive finite number"),
        ({"min_budget": 10}, "min_budget must be at most max_budget"),
        ({"total_budget": 0}, "total_budget must be"),
        ({"eta": 1}, "eta must be"),
        ({"model_budget": "lowest"}, r"model_budget must be one of \('max', 'highest'\)"),
        ({"random_fraction": 1.5}, r"random_fraction must be a number in \[0, 1\]"),
        ({"random_state": -1}, "random_state must be a non-negative int or None"),
        ({"n_jobs": 0}, "n_jobs must be a positive integer or -1"),
        ({"surrogate": 3}, "surrogate must be a registered name"),
        ({"func": "f"}, "func must be callable"),
        ({"callback": 1}, "callback must be callable or None"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, message):
    args = {
        "func": _biased,
        "space": SPACE,
        "min_budget": 1,
        "max_budget": 9,
        "total_budget": 3,
        **kwargs,
    }
    with pytest.raises(ValueError, match=message):
        minimize_multifidelity(**args)


def test_failed_evaluations_are_recorded_and_never_promoted():
    def func(x, budget):
        if x[0] > 0.5:
            raise RuntimeError("diverged")
        return math.nan if x[1] > 0.8 else _biased(x, budget)

    with pytest.warns(ObjectiveFailureWarning):
        result = _run(func, total=6)
    failed = [i for i, s in enumerate(result.statuses) if s == "failed"]
    assert failed and result.n_failed == len(failed)
    assert any("diverged" in (result.errors[i] or "") for i in failed)
    assert all(np.isnan(result.func_vals[i]) for i in failed)
    for i in failed:  # never evaluated again at a higher budget
        later = [
            result.budgets[j]
            for j in range(len(result.x_iters))
            if result.x_iters[j] == result.x_iters[i]
        ]
        assert max(later) == result.budgets[i]
    assert np.isfinite(result.fun) and result.spent > 5


def test_an_objective_that_always_raises_stops_with_objective_error():
    def broken(x, budget):
        raise KeyError("typo")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObjectiveFailureWarning)
        with pytest.raises(ObjectiveError, match="raised KeyError"):
            _run(broken)


def test_a_stopping_callback_ends_the_run():
    result = _run(total=6, callback=lambda r: len(r.func_vals) >= 4)
    assert len(result.func_vals) == 4 and "callback" in result.message


def test_two_workers_promote_asynchronously_within_the_budget():
    result = _run(total=4, n_jobs=2, promotion="asynchronous")
    assert sum(result.budgets) / 9 <= 4 + 1e-12
    assert 3 in result.budgets and result.n_failed == 0
    # ASHA: the first promotion comes before the first rung has all nine of its values.
    first_promotion = result.budgets.index(3)
    assert first_promotion < 9


def test_two_workers_with_synchronous_promotions_start_the_next_bracket_meanwhile():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    # The first evaluation holds its worker until a budget-3 evaluation has started,
    # so the first rung cannot be complete before the free worker needs a job:
    # without it the last two budget-1 values may come back together.
    started_at_3, lock, first = threading.Event(), threading.Lock(), []

    def held(x, budget):
        if budget == 3:
            started_at_3.set()
        with lock:
            hold = not first
            first.append(x)
        if hold:
            started_at_3.wait(timeout=60)
        return _biased(x, budget)

    with ThreadPoolExecutor(2) as pool:
        result = _run(held, total=4, executor=pool)  # synchronous promotions, the default
    assert sum(result.budgets) / 9 <= 4 + 1e-12 and result.n_failed == 0
    # While the first rung waits for its last value, the free worker starts a new
    # configuration of the next bracket (budget 3) instead of waiting.
    assert result.budgets[:10] == [1] * 9 + [3]
    assert result.x_iters[9] not in result.x_iters[:9]
    # The first bracket's promotions are its best three at budget 1, as with one worker.
    values = np.asarray(result.func_vals[:9])
    best_three = [result.x_iters[i] for i in np.argsort(values)[:3]]
    promoted = [x for x, b in zip(result.x_iters[10:], result.budgets[10:]) if b == 3]
    assert all(x in promoted for x in best_three)
    with pytest.raises(ValueError, match="promotion must be one of"):
        _run(promotion="asha")


def test_an_executor_sets_the_workers():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        result = _run(total=4, executor=pool, promotion="asynchronous")
    assert sum(result.budgets) / 9 <= 4 + 1e-12
    assert result.budgets.index(3) < 9  # two workers: promoted before the rung was full
    sequential = _run(total=4)
    assert sequential.budgets[:13] == [1] * 9 + [3] * 3 + [9]


_KILLED_RUN = """
import os, signal, sys
from treebo import Real, minimize_multifidelity

def func(x, budget):
    with open("calls", "a") as f:
        f.write(f"{budget}\\n")
    if sum(1 for _ in open("calls")) == 11 and not os.path.exists("resumed"):
        os.kill(os.getpid(), signal.SIGKILL)  # dies in the middle of its 11th evaluation
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2 - (9 - budget) / 9

if __name__ == "__main__":
    minimize_multifidelity(func, [Real(-1.0, 1.0), Real(-1.0, 1.0)], 1, 9, 5, 3,
                           storage="mf.db", random_state=0)
"""


def _killed_run(tmp_path, monkeypatch, script):
    """Run ``script`` as run.py in ``tmp_path`` until it kills itself; its module, to resume.

    The resume happens in ``tmp_path`` with a file ``resumed`` there, which the
    script reads to stop killing itself.
    """
    (tmp_path / "run.py").write_text(textwrap.dedent(script))
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run(
        [sys.executable, "run.py"], cwd=tmp_path, env=env, capture_output=True, timeout=300
    )
    assert done.returncode == -9, done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        import run  # noqa: PLC0415 - the script's own objective, for the resume
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("run", None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "resumed").touch()
    return run


def test_a_killed_run_resumes_from_its_records_and_loses_nothing(tmp_path, monkeypatch):
    run = _killed_run(tmp_path, monkeypatch, _KILLED_RUN)
    stored = read_study(tmp_path / "mf.db")["trials"]
    assert len(stored) == 11 and sum(t["status"] == "pending" for t in stored) == 1
    resumed = minimize_multifidelity(run.func, SPACE, 1, 9, 5, 3, storage="mf.db", random_state=0)
    # 10 evaluations were told before the kill: only the 11th and later ones ran again.
    calls = (tmp_path / "calls").read_text().split()
    assert len(calls) == 11 + len(resumed.func_vals) - 10
    uninterrupted = _run(total=5)
    assert resumed.x_iters == uninterrupted.x_iters
    assert resumed.budgets == uninterrupted.budgets
    np.testing.assert_allclose(resumed.func_vals, uninterrupted.func_vals)


def test_a_plain_run_still_gives_the_committed_benchmark_record():
    # The records in benchmarks/results/multifidelity describe this code: the first
    # evaluations of treebo_mf on mf_branin, seed 0, come out the same (a shorter run
    # makes the same evaluations up to where it stops).
    import gzip
    import json

    from treebo.problems.multifidelity import get_multifidelity_problem

    path = os.path.join(ROOT, "benchmarks", "results", "multifidelity", "mf_branin.jsonl.gz")
    with gzip.open(path, "rt") as handle:
        records = [json.loads(line) for line in handle]
    record = next(r for r in records if r["peer"] == "treebo_mf" and r["seed"] == 0)
    problem = get_multifidelity_problem("mf_branin")
    result = minimize_multifidelity(
        problem,
        problem.space,
        problem.min_budget,
        problem.max_budget,
        6,
        record["eta"],
        random_state=0,
    )
    n = len(result.budgets)
    assert n > 20 and result.budgets == record["budgets"][:n]
    np.testing.assert_allclose(result.func_vals, record["values"][:n], rtol=1e-12)


def _reporting(x, budget, report):
    """_biased after each whole budget unit, reported as it goes."""
    for b in range(1, budget + 1):
        report(b, _biased(x, b))
    return _biased(x, budget)


def test_reported_values_reach_the_models_training_data(monkeypatch):
    from treebo.multifidelity import ConfigurationModel

    seen = []
    rank = ConfigurationModel.rank

    def spy(self, X, values, budget_column, rung_columns, rng, pending=None):
        seen.append((np.array(values), np.array(budget_column), np.array(rung_columns)))
        return rank(self, X, values, budget_column, rung_columns, rng, pending)

    monkeypatch.setattr(ConfigurationModel, "rank", spy)
    result = _run(_reporting, total=6, intermediate=True)
    # The evaluations are charged as before; the reports cost nothing.
    assert sum(result.budgets) / 9 <= 6 and result.spent == pytest.approx(sum(result.budgets) / 9)
    assert set(result.reported_budgets) >= {2, 4, 5, 6, 7, 8}  # between the rungs 1, 3, 9
    assert seen, "the model was never fitted"
    values, budgets, rungs = seen[-1]
    off_rung = ~np.isclose(budgets[:, None], rungs[None, :]).any(axis=1)
    # Training rows off the rungs can only be reported values, and they are there.
    assert off_rung.sum() >= 10
    assert set(np.round(values[off_rung], 12)) <= set(np.round(result.reported_vals, 12))
    # At the lowest rung too: 9 evaluations there, and the reports of the later
    # bracket's configurations (which start at 3).
    assert np.isclose(budgets, rungs[0]).sum() > result.budgets.count(1)


def test_reports_are_one_value_per_configuration_and_budget():
    result = _run(_reporting, total=6, intermediate=True)
    key = lambda x, b: (tuple(x), b)  # noqa: E731
    evaluated = [key(x, b) for x, b in zip(result.x_iters, result.budgets)]
    reported = [key(x, b) for x, b in zip(result.reported_x, result.reported_budgets)]
    assert len(set(reported)) == len(reported) and not set(reported) & set(evaluated)
    # A report is of a configuration evaluated at a higher budget, never above it.
    for x, b in zip(result.reported_x, result.reported_budgets):
        assert any(x == y and b < c for y, c in zip(result.x_iters, result.budgets))
    np.testing.assert_allclose(
        result.reported_vals,
        [_biased(x, b) for x, b in zip(result.reported_x, result.reported_budgets)],
    )


def test_bad_reports_fail_the_evaluation_or_the_observation():
    def func(x, budget, report):
        if x[0] > 0.6:
            report(0, 1.0)  # below min_budget: report raises, the evaluation fails
        if x[0] < -0.6 and budget > 1:
            report(1.5, 1.0)  # integer budgets
        if 0 < x[0] <= 0.6 and budget > 1:
            report(budget - 1, math.nan)  # a failed observation; the evaluation goes on
        return _biased(x, budget)

    with pytest.warns(ObjectiveFailureWarning):
        result = _run(func, total=6, intermediate=True)
    errors = [e for e in result.errors if e]
    assert any("budget must be a number from min_budget" in e and "got 0" in e for e in errors)
    assert result.n_failed == len(errors)
    nan_reports = np.isnan(result.reported_vals)
    assert nan_reports.any() and np.isfinite(result.fun)
    assert all(np.asarray(result.reported_x)[nan_reports][:, 0] > 0)
    if any(x[0] < -0.6 and b > 1 for x, b in zip(result.x_iters, result.budgets)):
        assert any("budget must be an integer" in e for e in errors)


def test_intermediate_and_direction_are_checked():
    with pytest.raises(ValueError, match="intermediate must be True or False"):
        _run(intermediate=1)
    with pytest.raises(ValueError, match="direction must be one of"):
        _run(direction="up")


def test_maximize_flips_the_values_and_keeps_the_schedule():
    plain = _run(total=4)
    flipped = _run(lambda x, b: -_biased(x, b), total=4, direction="maximize")
    assert flipped.x_iters == plain.x_iters and flipped.budgets == plain.budgets
    np.testing.assert_allclose(flipped.func_vals, -np.asarray(plain.func_vals))
    assert flipped.fun == -plain.fun and flipped.direction == "maximize"


_KILLED_REPORTING_RUN = """
import os, signal, sys
from treebo import Real, minimize_multifidelity
from treebo.optimizer import Optimizer

def func(x, budget, report):
    with open("calls", "a") as f:
        f.write(f"{budget}\\n")
    for b in range(1, budget + 1):
        report(b, (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2 - (9 - b) / 9)
    return (x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2 - (9 - budget) / 9

tell_trial = Optimizer.tell_trial

def dying(self, trial, y, **kwargs):
    # Dies after the reports of the first promotion (trial 9) are recorded, before its value.
    if trial.number == 9 and not os.path.exists("resumed"):
        os.kill(os.getpid(), signal.SIGKILL)
    return tell_trial(self, trial, y, **kwargs)

if __name__ == "__main__":
    Optimizer.tell_trial = dying
    minimize_multifidelity(func, [Real(-1.0, 1.0), Real(-1.0, 1.0)], 1, 9, 5, 3,
                           storage="mf.db", random_state=0, intermediate=True)
"""


def test_a_run_killed_between_its_reports_and_its_value_resumes_equal(tmp_path, monkeypatch):
    run = _killed_run(tmp_path, monkeypatch, _KILLED_REPORTING_RUN)
    stored = read_study(tmp_path / "mf.db")["trials"]
    # Nine evaluations at 1, the promotion at 3 pending, its report at 2 told.
    assert [t["status"] for t in stored] == ["complete"] * 9 + ["pending", "complete"]
    assert stored[10]["asked_at"] is None and stored[10]["point"][-1] == 2
    resumed = minimize_multifidelity(
        run.func, SPACE, 1, 9, 5, 3, storage="mf.db", random_state=0, intermediate=True
    )
    uninterrupted = minimize_multifidelity(
        run.func, SPACE, 1, 9, 5, 3, random_state=0, intermediate=True
    )
    assert resumed.x_iters == uninterrupted.x_iters
    assert resumed.budgets == uninterrupted.budgets
    np.testing.assert_allclose(resumed.func_vals, uninterrupted.func_vals)
    assert resumed.reported_x == uninterrupted.reported_x
    assert resumed.reported_budgets == uninterrupted.reported_budgets
    np.testing.assert_allclose(resumed.reported_vals, uninterrupted.reported_vals)
    stored = read_study(tmp_path / "mf.db")["trials"]
    assert len(stored) == len(resumed.budgets) + len(resumed.reported_budgets)


def test_random_state_none_resumes_with_the_stored_seed(tmp_path):
    db = tmp_path / "s.db"
    first = minimize_multifidelity(_biased, SPACE, 1, 9, 2, storage=db)
    resumed = minimize_multifidelity(_biased, SPACE, 1, 9, 4, storage=db)
    seed = read_study(db)["meta"]["seed"]
    uninterrupted = _run(total=4, random_state=seed)
    assert resumed.x_iters[: len(first.x_iters)] == first.x_iters
    assert resumed.x_iters == uninterrupted.x_iters and resumed.budgets == uninterrupted.budgets


def _hangs_at_budget_3(x, budget):
    """_biased, except that the evaluations at budget 3 never return."""
    if budget == 3:
        import time

        time.sleep(3600)
    return _biased(x, budget)


@pytest.mark.fault
def test_a_hanging_evaluation_ends_at_its_timeout_and_the_run_goes_on():
    # The same driver as minimize: the worker's alarm ends each budget-3 evaluation
    # after 2 s (room for a loaded machine's first call in a fresh worker); those
    # trials are failed, never promoted, and the run spends the rest of its budget.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObjectiveFailureWarning)
        result = _run(_hangs_at_budget_3, total=2, timeout=2)
    at_3 = [i for i, b in enumerate(result.budgets) if b == 3]
    assert len(at_3) == 3 and all(result.statuses[i] == "failed" for i in at_3)
    assert all(result.errors[i] == "timed out after 2 s" for i in at_3)
    assert all(s == "complete" for i, s in enumerate(result.statuses) if i not in at_3)
    assert 9 not in result.budgets  # nothing failed at 3 was promoted to 9
    assert result.message == "spent the total budget"


@pytest.mark.fault
def test_an_evaluation_lost_with_its_worker_is_submitted_again():
    # A worker process that dies (os._exit) loses its evaluation: with
    # max_retries=1 it is submitted once more, then recorded as failed.
    def dies_at_budget_3(x, budget):
        if budget == 3:
            os._exit(1)
        return _biased(x, budget)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObjectiveFailureWarning)
        result = _run(dies_at_budget_3, total=2, n_jobs=2, max_retries=1)
    at_3 = [i for i, b in enumerate(result.budgets) if b == 3]
    assert at_3 and all(result.errors[i].startswith("evaluation lost") for i in at_3)
    # A dying worker breaks the pool, so the evaluation running beside it (n_jobs=2)
    # may be lost with it; each budget-3 evaluation dies twice (once retried), so at
    # most two others are lost for each, and only as lost evaluations.
    others = [i for i in range(len(result.statuses)) if i not in at_3]
    lost = [i for i in others if result.statuses[i] == "failed"]
    assert all(result.errors[i].startswith("evaluation lost") for i in lost)
    assert len(lost) <= 2 * len(at_3) and len(lost) < len(others)


def test_timeout_and_max_retries_are_checked():
    with pytest.raises(ValueError, match="timeout"):
        _run(timeout=-1)
    with pytest.raises(ValueError, match="max_retries"):
        _run(max_retries=-1)


@pytest.mark.fault
def test_the_command_line_ends_a_hanging_training_at_its_timeout(tmp_path, monkeypatch, capsys):
    from treebo.cli import main

    (tmp_path / "train.py").write_text(
        textwrap.dedent(
            """
            import time

            def train(x, epochs):
                if x["lr"] < 0:
                    time.sleep(3600)
                return (x["lr"] - 0.3) ** 2 + 1 / epochs

            train.space = {"lr": (-1.0, 1.0)}
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    argv = ["minimize", "train.py:train", "--budget-param", "epochs", "--min-budget", "1"]
    argv += ["--max-budget", "9", "--total-budget", "3", "--timeout", "1", "--seed", "0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ObjectiveFailureWarning)
        assert main([*argv, "--storage", "s.db", "--quiet"]) == 0
    assert "best value" in capsys.readouterr().out
    trials = read_study(tmp_path / "s.db")["trials"]
    hung = [t for t in trials if t["point"][0] < 0]
    assert hung and all(t["status"] == "failed" for t in hung)
    assert all(t["error"] == "timed out after 1 s" for t in hung)
    assert all(t["status"] == "complete" for t in trials if t["point"][0] >= 0)
