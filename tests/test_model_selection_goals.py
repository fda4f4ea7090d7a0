"""benchmarks/model_selection_goals.py: the verdict of the model-selection goal."""

from benchmark_scripts import load_script

goals = load_script("model_selection_goals.py")


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
