"""The two presets: the paper's initial design, minimize arguments, budgets, instances."""

import numpy as np
import pytest
import qmcpy

from treebo.bench import (
    RunSpec,
    default_n_calls,
    minimize_settings,
    paper_initial_design,
    run_one,
)
from treebo.problems import Ising, get_problem
from treebo.storage import read_study

from .helpers import FAST


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


@pytest.mark.parametrize("preset", ["default", "paper"])
def test_surrogates_share_the_initial_design(preset):
    records = [
        run_one(RunSpec("branin", s, 1, 7, preset=preset, overrides=FAST)) for s in ("rf", "bwo")
    ]
    assert records[0]["x"][:5] == records[1]["x"][:5]
    if preset == "paper":
        assert records[0]["x"][:5] == paper_initial_design(get_problem("branin").space, 1)


def test_binary_runs_use_one_instance_per_seed():
    record = run_one(RunSpec("ising", "rf", 3, 6, overrides=FAST))
    assert record["instance_params"] == {"instance": 466, "lam": 0.01}
    assert record["optimal_value"] == Ising(466).optimal_value
    fixed = run_one(RunSpec("ising", "rf", 3, 6, problem_params={"instance": 7270}, overrides=FAST))
    assert fixed["instance_params"]["instance"] == 7270


def test_model_selection_budget_is_50_calls_from_10_initial_points():
    from treebo.bench.presets import default_n_initial

    for name in ("model_selection_breast_cancer", "model_selection_wine", "model_selection_digits"):
        for preset in ("default", "paper"):
            assert default_n_calls(name, preset) == 50
            assert default_n_initial(name, preset) == 10
    # Every other problem keeps the budgets its committed records were run with.
    for name in ("branin", "hartmann6", "ising", "automl_digits", "automl", "shekel"):
        assert default_n_initial(name) == default_n_initial(name, "paper") == 5
    assert default_n_calls("automl_wine") == 100 and default_n_calls("ising") == 100
    with pytest.raises(ValueError, match="unknown problem"):
        default_n_initial("nope")
    with pytest.raises(ValueError, match="preset"):
        default_n_initial("branin", "fast")

    wine = get_problem("model_selection_wine")
    default = minimize_settings(RunSpec("model_selection_wine", "rf", 2, 50), wine)
    assert default["n_initial_points"] == 10 and "x0" not in default
    paper = minimize_settings(RunSpec("model_selection_wine", "rf", 2, 50, preset="paper"), wine)
    assert paper["n_initial_points"] == 10
    assert paper["x0"] == paper_initial_design(wine.space, 2, 10)
    branin = get_problem("branin")
    assert minimize_settings(RunSpec("branin", "rf", 2, 20), branin)["n_initial_points"] == 5
    assert len(minimize_settings(RunSpec("branin", "rf", 2, 20, preset="paper"), branin)["x0"]) == 5
    overridden = minimize_settings(
        RunSpec("model_selection_wine", "rf", 2, 50, overrides={"n_initial_points": 7}), wine
    )
    assert overridden["n_initial_points"] == 7


def test_a_model_selection_run_starts_from_10_points():
    record = run_one(RunSpec("model_selection_wine", "rf", 0, 12, overrides=FAST))
    assert record["settings"]["n_initial_points"] == 10
    assert record["n_evaluated"] == 12 and record["regret"] is None
    assert record["fit_time"][:10] == [0.0] * 10 and record["fit_time"][10] > 0


def test_overrides_of_the_local_step_and_of_failures_reach_the_run(tmp_path):
    # Every setting that leaves the runs of one seed comparable may be overridden,
    # the local step's and the failure value's too; the run is made with them.
    overrides = {
        **FAST,
        "local_steps": False,
        "n_box_candidates": 64,
        "max_halvings": 1,
        "failure_value": 10.0,
    }
    db = tmp_path / "run.db"
    record = run_one(RunSpec("branin", "rf", 0, 7, overrides=overrides), storage=db)
    assert record["overrides"] == overrides
    stored = read_study(db)["meta"]["settings"]
    assert {k: stored[k] for k in overrides if k != "surrogate_params"} == {
        k: v for k, v in overrides.items() if k != "surrogate_params"
    }
    with pytest.raises(ValueError, match="max_halvings must be an integer >= 0, got -1"):
        minimize_settings(
            RunSpec("branin", "rf", 0, 7, overrides={"max_halvings": -1}), get_problem("branin")
        )
    for fixed in ("random_state", "direction", "resume_pending", "storage"):
        with pytest.raises(ValueError, match=rf"overrides \['{fixed}'\] are not allowed"):
            minimize_settings(
                RunSpec("branin", "rf", 0, 7, overrides={fixed: None}), get_problem("branin")
            )
