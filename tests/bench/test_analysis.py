"""Regret curves, summary and seed-by-seed tables, and their Markdown."""

import json
import math

import pytest

from treebo.bench import format_paired, format_summary, paired_wins, regret_curves, summary_table

from .helpers import fake_record


def test_curves_follow_the_papers_layout():
    regret = [9.0, 8.0, 3.0, 3.0, 2.0, 1.0, 0.0, 0.0]  # 5 initial points, 3 iterations
    records = [
        fake_record("branin", "bwo", 0, regret, optimal_value=0.4),
        fake_record("branin", "bwo", 1, [r * 10 for r in regret], optimal_value=0.4),
    ]
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
    other = dict(
        fake_record("ising", "bwo", 0, [2.0] * 7),
        key=json.dumps(["ising", {"lam": 1e-4}, "bwo", 0, "default", {}]),
    )
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
    records.append(
        fake_record("automl_wine", "bwo", 0, [0.2] * 5 + [0.05, 0.03], optimal_value=None)
    )
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
    records = [
        fake_record("branin", "rf", 0, [1.0] * 5 + [0.1]),
        fake_record("branin", "rf", 0, [1.0] * 5 + [0.01], preset="paper"),
        fake_record("branin", "bwo", 0, [1.0] * 5 + [0.05], preset="paper"),
    ]
    table = summary_table(records)
    assert sorted(table) == ["branin (default)", "branin (paper)"]
    assert table["branin (paper)"]["median"] == {
        "rf": pytest.approx(-2.0),
        "bwo": pytest.approx(math.log10(0.05)),
    }
    assert paired_wins(records, "bwo") == {"branin (paper)": {"rf": (0, 0, 1)}}


def test_ties_are_all_marked_best():
    records = [fake_record("branin", s, 0, [1.0] * 5 + [0.0]) for s in ("rf", "ert")]
    assert sorted(summary_table(records)["branin"]["best"]) == ["ert", "rf"]
    assert math.isclose(summary_table(records)["branin"]["median"]["rf"], -12.0)


def test_paired_wins_compare_seed_by_seed():
    finals = {
        "bwo": [1e-3, 1e-1, 0.0, 1e-2],
        "rf": [1e-2, 1e-2, 0.0],
        "ert": [1e-1, 1e-1, 1e-1, 1e-1],
    }
    records = [
        fake_record("branin", surrogate, seed, [5.0] * 5 + [final])
        for surrogate, values in finals.items()
        for seed, final in enumerate(values)
    ]
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
