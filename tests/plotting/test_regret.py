"""Regret and time-per-iteration figures."""

import json
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the figures need matplotlib: pip install 'treebo[plot]'")

from treebo.bench import regret_curves  # noqa: E402
from treebo.plotting import plot_regret, plot_results  # noqa: E402


def record(problem, surrogate, seed, regret, optimal_value=0.0, step_time=0.1):
    n = len(regret)
    best = [r + (optimal_value or 0.0) for r in regret]
    return {
        "key": json.dumps([problem, {}, surrogate, seed, "default", {}]),
        "problem": problem,
        "surrogate": surrogate,
        "seed": seed,
        "preset": "default",
        "n_calls": n,
        "n_evaluated": n,
        "n_initial": 5,
        "optimal_value": optimal_value,
        "best_so_far": best,
        "values": best,
        "regret": list(regret) if optimal_value is not None else None,
        "fit_time": [0.0] * 5 + [step_time] * (n - 5),
        "acq_time": [0.0] * n,
    }


@pytest.fixture
def records():
    rng = np.random.default_rng(0)
    out = []
    for surrogate, rate, step in (("bwo", 0.5, 0.2), ("rf", 0.8, 0.1)):
        for seed in range(5):
            regret = np.minimum.accumulate(10.0 * rate ** np.arange(25) * rng.uniform(0.5, 2, 25))
            out.append(record("branin", surrogate, seed, list(regret), step_time=step * (seed + 1)))
    out.append(record("automl_wine", "bwo", 0, [0.3] * 5 + [0.2, 0.1], optimal_value=None))
    return out


def test_regret_panel_shows_the_median_log10_regret_and_a_band(records):
    fig = plot_regret(records, "branin")
    ax_regret, ax_time = fig.axes
    lines = {line.get_label(): line for line in ax_regret.get_lines()}
    assert set(lines) == {"bwo", "rf"}
    curves = {c.surrogate: c for c in regret_curves(records)}
    for name, line in lines.items():
        x, y = line.get_data()
        assert list(x) == list(range(21))  # iteration 0 (initial design) .. 20
        assert np.allclose(y, np.median(np.log10(curves[name].curves), axis=0))
    assert len(ax_regret.collections) == 2  # one band per surrogate, in the lines' order
    assert list(lines) == ["rf", "bwo"]  # registry order
    band = ax_regret.collections[1].get_paths()[0].vertices[:, 1]
    low = np.percentile(np.log10(curves["bwo"].curves), 25, axis=0)
    assert np.isclose(band.min(), low.min())
    assert "log10" in ax_regret.get_ylabel()
    # Time panel: median fit + acquisition seconds of iterations 1..20, log axis.
    times = {line.get_label(): line.get_ydata() for line in ax_time.get_lines()}
    assert np.allclose(times["bwo"], 0.6) and np.allclose(times["rf"], 0.3)
    assert ax_time.get_yscale() == "log"


def test_unknown_optimum_plots_the_best_value(records):
    fig = plot_regret(records, "automl_wine")
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_ydata()) == [0.3, 0.2, 0.1]
    assert fig.axes[0].get_ylabel() == "best value so far"


def test_surrogate_selection_and_errors(records):
    fig = plot_regret(records, "branin", surrogates=["rf"])
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["rf"]
    with pytest.raises(ValueError, match="no results for problem 'ising'"):
        plot_regret(records, "ising")
    with pytest.raises(ValueError, match=r"surrogate\(s\) \['gp'\].*recorded"):
        plot_regret(records, "branin", surrogates=["gp"])
    for band in [(75, 25), (-1, 50), (50,), "wide"]:
        with pytest.raises(ValueError, match="band must be two percentiles"):
            plot_regret(records, "branin", band=band)


def test_plot_results_writes_one_figure_per_problem(records, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    with open(results / "all.jsonl", "w") as handle:
        for r in records:
            handle.write(json.dumps(r) + "\n")
    written = plot_results(results, tmp_path / "figures", dpi=40)
    assert sorted(p.name for p in written) == ["automl_wine.png", "branin.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)
    with pytest.raises(ValueError, match="recorded"):
        plot_results(results, tmp_path / "x", problems=["hartmann6"])


def test_missing_matplotlib_names_the_extra(records, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'treebo\[plot\]'"):
        plot_regret(records, "branin")


# -- faults: figures that cannot be written leave the previous ones ----------------------------
def _results_dir(records, folder):
    folder.mkdir()
    with open(folder / "all.jsonl", "w") as handle:
        for r in records:
            handle.write(json.dumps(r) + "\n")
    return folder


@pytest.mark.fault
def test_plot_cut_short_by_a_file_size_limit_leaves_the_previous_figures(records, tmp_path):
    import os
    import resource
    import subprocess
    from pathlib import Path

    import treebo
    from treebo.cli import main

    _results_dir(records, tmp_path / "results")
    assert main(["plot", str(tmp_path / "results"), "--out", str(tmp_path / "figures")]) == 0
    figures = tmp_path / "figures"
    before = {p.name: p.read_bytes() for p in figures.iterdir()}
    assert sorted(before) == ["automl_wine.png", "branin.png"]
    limit = min(len(data) for data in before.values()) // 2

    def limited():
        # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG.
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(
        [sys.executable, "-m", "treebo", "plot", "results", "--out", "figures"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])},
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Every figure is as it was, and no temporary file is left beside them.
    assert {p.name: p.read_bytes() for p in figures.iterdir()} == before, proc.stderr
    assert proc.returncode == 1
    assert proc.stderr in {
        f"treebo plot: error: cannot write figures/{name}: File too large\n" for name in before
    }


@pytest.mark.fault
def test_plot_out_that_is_a_file_is_refused_before_drawing(records, tmp_path, capsys):
    from treebo.cli import main

    results = _results_dir(records, tmp_path / "results")
    out = tmp_path / "figures"
    out.write_text("not a folder\n")
    assert main(["plot", str(results), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"treebo plot: error: --out {out}: is a file, not a directory\n"
    assert captured.out == "" and out.read_text() == "not a folder\n"


def test_plot_results_keeps_the_mode_of_a_figure_it_replaces(records, tmp_path):
    results = _results_dir(records, tmp_path / "results")
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "branin.png").write_bytes(b"old")
    (figures / "branin.png").chmod(0o604)
    written = plot_results(results, figures, problems=["branin"], fmt="svg", dpi=40)
    assert [p.name for p in written] == ["branin.svg"]
    plot_results(results, figures, problems=["branin"], dpi=40)
    assert (figures / "branin.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (figures / "branin.png").stat().st_mode & 0o7777 == 0o604
    assert (figures / "branin.svg").read_text().lstrip().startswith("<?xml")
