"""benchmarks/model_selection_goals.py: the verdict of the model-selection goal."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "model_selection_goals.py"


def _load():
    spec = importlib.util.spec_from_file_location("treebo_benchmarks_model_selection_goals", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


goals = _load()


def _row(medians, n=10):
    return {"median": medians, "n_seeds": {m: n for m in medians}}


def test_bwo_counts_where_its_median_is_lowest_and_only_complete_rows_are_judged():
    table = {
        "a": _row({"bwo": 0.01, "optuna_tpe": 0.01, "smac_rf": 0.02, "random": 0.03}),  # a tie
        "b": _row({"bwo": 0.02, "optuna_tpe": 0.01, "smac_rf": 0.02, "random": 0.03}),
        "c": _row({"bwo": 0.01, "optuna_tpe": 0.02, "smac_rf": 0.02, "random": 0.03}, n=9),
        "d": _row({"bwo": 0.01, "optuna_tpe": 0.02, "random": 0.03}),  # smac_rf missing
    }
    won, lost, open_ = goals.verdict(table)
    assert (won, lost, open_) == (["a"], ["b"], ["c", "d"])
